/* lowp_softmax_k -- plain CPU kernels over rows: softmax (naive, stable), log-softmax, logsumexp, cross-entropy */

/*
 * Every operation is rounded (rne) to the compute format F (compute=,
 * default fp32), as a kernel computing in F does: a subtraction, libm's
 * exp/log in binary64 then rounded to F, and the row sum accumulated left
 * to right in F. softmax_naive and softmax_stable take the exp model as a
 * parameter: exp=libm (that default) or exp=cr, exp correctly rounded to F
 * (lowp_kernel_exp_cr), so every operation of the row is then F's correctly
 * rounded one (the softmax-overflow experiment). Every kernel here takes
 * acc=A, the format of the row sum (default F): s = A(s + e_i), y_i =
 * F(e_i / s), the quotient of an F value by an A value rounded once to F
 * (kernels/cpu/kcfg.h: acc=fp32 is PyTorch's accumulation for half and
 * bfloat16 tensors); log(s) is then rounded to F, and xent's mean sums its
 * losses in A.
 * Variants (registry names):
 *   softmax_naive   e_i = F(exp(x_i)), s = sum e_i, y_i = F(e_i / s):
 *                   overflows where exp(x_i) exceeds F's range
 *   softmax_stable  the same on x_i - max (max subtraction)
 *   logsoftmax      y_i = F(F(x_i - max) - F(log s)), s of x_i - max
 *   logsumexp       y = F(max + F(log s))
 *   xent            loss_r = F(lse_r - x_r[target]); reduction mean: the
 *                   losses summed in F, then F(sum / rows)
 * Outputs are then rounded to the output format. Rows are independent
 * (OpenMP over rows; the mean's sum is sequential), so the result does not
 * depend on the thread count.
 */

#include "cpu/softmax_kernel.h"

#include <math.h>
#include <stdio.h>

#include "cpu/elementwise.h"
#include "exact/exact.h"
#include "measure/ref.h"
#include "status.h"

#include <stdlib.h>
#include "io/escape.h"

/* ------------------------------------------------------ private helpers */

/* the max of a row (NaN if any is NaN) */
static double row_max(const double *x, size_t n) {
  double m = -INFINITY;
  size_t i;
  for (i = 0; i < n; i++) {
    if (isnan(x[i])) return NAN;
    if (x[i] > m) m = x[i];
  }
  return m;
}

/* exp(t) in F: libm's rounded to F, or correctly rounded (exp=cr) */
static double exp_in(double t, const lowp_format_t *F, int cr) {
  return cr ? lowp_kernel_exp_cr(t, F) : lowp_kcfg_r(exp(t), F);
}

/* s = sum F(exp(F(x_i - shift))) accumulated in A (each addition rounded
   to A); shift 0 for naive */
static double exp_sum_cr(const double *x, size_t n, double shift, const lowp_format_t *F,
                         const lowp_format_t *A, int cr) {
  double s = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    double t = shift == 0 ? x[i] : lowp_kcfg_r(x[i] - shift, F);
    s = lowp_kcfg_r(s + exp_in(t, F, cr), A);
  }
  return s;
}

/* F-rounded logsumexp of a row (stable), the sum in A */
static double lse(const double *x, size_t n, const lowp_format_t *F, const lowp_format_t *A) {
  double m = row_max(x, n), s;
  if (isinf(m) && m < 0) return -INFINITY; /* every entry -inf */
  if (isinf(m)) return INFINITY;
  s = exp_sum_cr(x, n, m, F, A, 0);
  return lowp_kcfg_r(m + lowp_kcfg_r(log(s), F), F);
}

static int softmax(int stable, const lowp_kcfg_t *c, double *const *out, const double *const *in,
                   const lowp_problem_t *p) {
  const lowp_format_t *F = &c->compute;
  long long r, rows = (long long)(p->dims.batch * p->dims.m);
  size_t n = p->dims.n;
#pragma omp parallel for schedule(static)
  for (r = 0; r < rows; r++) {
    const double *x = &in[0][(size_t)r * n];
    double *y = &out[0][(size_t)r * n];
    double m = stable ? row_max(x, n) : 0, s;
    size_t i;
    if (stable && isinf(m)) m = 0; /* a row with inf: no shift, IEEE's result */
    s = exp_sum_cr(x, n, m, F, &c->racc, c->exp_cr); /* the sum in acc (default F) */
    for (i = 0; i < n; i++) {
      double t = m == 0 ? x[i] : lowp_kcfg_r(x[i] - m, F);
      y[i] = lowp_kcfg_r(lowp_kcfg_r(exp_in(t, F, c->exp_cr) / s, F), &p->out);
    }
  }
  return LOWP_OK;
}

/* ----------------------------------------------------------- public API */

int lowp_kernel_softmax_naive(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                              const lowp_problem_t *p, char *err, size_t errlen) {
  (void)err; (void)errlen;
  return softmax(0, c, out, in, p);
}

int lowp_kernel_softmax_stable(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                               const lowp_problem_t *p, char *err, size_t errlen) {
  (void)err; (void)errlen;
  return softmax(1, c, out, in, p);
}

int lowp_kernel_logsoftmax(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                           const lowp_problem_t *p, char *err, size_t errlen) {
  const lowp_format_t *F = &c->compute;
  long long r, rows = (long long)(p->dims.batch * p->dims.m);
  size_t n = p->dims.n;
  (void)err; (void)errlen;
#pragma omp parallel for schedule(static)
  for (r = 0; r < rows; r++) {
    const double *x = &in[0][(size_t)r * n];
    double *y = &out[0][(size_t)r * n];
    double m = row_max(x, n), ls;
    size_t i;
    if (isinf(m)) m = 0;
    ls = lowp_kcfg_r(log(exp_sum_cr(x, n, m, F, &c->racc, 0)), F);
    for (i = 0; i < n; i++) {
      double t = m == 0 ? x[i] : lowp_kcfg_r(x[i] - m, F);
      y[i] = lowp_kcfg_r(lowp_kcfg_r(t - ls, F), &p->out);
    }
  }
  return LOWP_OK;
}

int lowp_kernel_logsumexp(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                          const lowp_problem_t *p, char *err, size_t errlen) {
  long long r, rows = (long long)(p->dims.batch * p->dims.m);
  size_t n = p->dims.n;
  (void)err; (void)errlen;
#pragma omp parallel for schedule(static)
  for (r = 0; r < rows; r++)
    out[0][r] = lowp_kcfg_r(lse(&in[0][(size_t)r * n], n, &c->compute, &c->racc), &p->out);
  return LOWP_OK;
}

int lowp_kernel_xent(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                     const lowp_problem_t *p, char *err, size_t errlen) {
  const lowp_format_t *F = &c->compute;
  size_t r, rows = p->dims.batch * p->dims.m, n = p->dims.n;
  double s = 0;
  for (r = 0; r < rows; r++) {
    double t = in[1][r], loss;
    size_t ti;
    if (!(t >= 0) || t != floor(t) || t >= (double)n) {
      lowp_errf(err, errlen, 0, "xent: target %g of row %zu is not a class index in [0, %zu)", t, r, n);
      return LOWP_EINVAL;
    }
    ti = (size_t)t;
    loss = lowp_kcfg_r(lse(&in[0][r * n], n, F, &c->racc) - in[0][r * n + ti], F);
    if (p->reduction_mean) s = lowp_kcfg_r(s + loss, &c->racc);
    else out[0][r] = lowp_kcfg_r(loss, &p->out);
  }
  if (p->reduction_mean)
    out[0][0] = lowp_kcfg_r(lowp_kcfg_r(lowp_kcfg_r(s, F) / (double)rows, F), &p->out);
  return LOWP_OK;
}

/* ------------------------------------------------------ traced naive softmax */

/* an event at (row, element, k) with sequence number seq */
static lowp_fpx_event_t at(int64_t row, int64_t j, int64_t k, uint64_t seq) {
  lowp_fpx_event_t e;
  lowp_fpx_event_init(&e);
  e.seq = seq;
  e.i = row;
  e.j = j;
  e.k = k;
  return e;
}

/* e = F(exp(v)) traced: classified from exp(v) itself (lowp_ref_expsum of one term) */
static int exp_traced(lowp_fpx_trace_t *t, double *e, double v, const lowp_format_t *F,
                      lowp_fpx_event_t ev) {
  double ae, xe;
  int st;
  unsigned m;
  lowp_ref_expsum_t *one;
  *e = lowp_kernel_exp_cr(v, F);
  t->ops++;
  ae = fabs(*e);
  if (ae > lowp_format_xmin(F) && ae < lowp_format_xmax(F)) return LOWP_OK;
  if (!(one = lowp_ref_expsum_new())) return LOWP_ENOMEM;
  st = lowp_ref_expsum_add(one, v);
  if (st == LOWP_OK) (void)lowp_ref_expsum_get(one, &xe, &st);
  else { lowp_ref_expsum_free(one); return st; }
  lowp_ref_expsum_free(one);
  m = lowp_fpx_eval(&ev, LOWP_FPX_OP_EXP, v, 0, xe, st, *e, F, LOWP_RND_NE,
                    isnan(v) ? LOWP_FPX_IN_NAN : 0);
  lowp_fpx_record_ref(t, m, &ev, F, LOWP_RND_NE, NULL, 0);
  return LOWP_OK;
}

/* y_j = F(e_j / s) for every j, traced against the exact softmax */
static int div_traced(lowp_fpx_trace_t *t, double *y, const double *e, double s, const double *x,
                      size_t n, const lowp_format_t *F, int64_t row, uint64_t seq0) {
  double *ref = NULL;
  int have = 0, nan_in = 0, inf_in = 0;
  size_t j;
  for (j = 0; j < n; j++) { nan_in |= isnan(x[j]) != 0; inf_in |= isinf(x[j]) != 0; }
  for (j = 0; j < n; j++) {
    lowp_fpx_event_t ev = at(row, (int64_t)j, -1, seq0 + 2 * n + j);
    unsigned m = lowp_fpx_div_eval(&ev, NULL, &y[j], e[j], s, F, NULL, LOWP_RND_NE);
    double r = NAN;
    if (!t) continue;
    t->ops++;
    if (!m) continue;
    if (!have && !nan_in && !inf_in) { /* the exact softmax, once, at the first event */
      if (!(ref = malloc(n * sizeof *ref))) return LOWP_ENOMEM;
      if (lowp_ref_softmax256(ref, x, n) != LOWP_OK) { free(ref); ref = NULL; }
    }
    have = 1;
    if (ref) r = ref[j];
    lowp_fpx_record_ref(t, m, &ev, F, LOWP_RND_NE, (ref || nan_in) ? &r : NULL, 1);
  }
  free(ref);
  return LOWP_OK;
}

int lowp_softmax_naive_fpx(lowp_fpx_trace_t *t, double *y, const double *x, size_t n,
                           const lowp_format_t *F, const lowp_format_t *A, int64_t row,
                           uint64_t seq0) {
  double *e, s = 0;
  lowp_ref_expsum_t *ex = NULL;
  size_t j;
  int st = LOWP_OK;
  if (!y || !x || !n || !F || !A) return LOWP_EINVAL;
  if (F->precision > 25 || A->precision > 25) return LOWP_EFORMAT;
  if (!(e = malloc(n * sizeof *e))) return LOWP_ENOMEM;
  if (t && !(ex = lowp_ref_expsum_new())) { free(e); return LOWP_ENOMEM; }
  for (j = 0; j < n && st == LOWP_OK; j++) {
    lowp_fpx_event_t ev = at(row, (int64_t)j, (int64_t)j, seq0 + 2 * j + 1);
    unsigned m;
    if (!t) {
      e[j] = lowp_kernel_exp_cr(x[j], F);
      (void)lowp_exact_add2(&s, s, e[j], A, NULL, LOWP_RND_NE, 0);
      continue;
    }
    st = exp_traced(t, &e[j], x[j], F, at(row, (int64_t)j, -1, seq0 + 2 * j));
    if (st == LOWP_OK) st = lowp_ref_expsum_add(ex, x[j]);
    m = lowp_fpx_op2_eval(&ev, NULL, &s, LOWP_FPX_OP_ADD, s, e[j], A, NULL, LOWP_RND_NE, 0);
    t->ops++;
    if (m) { /* against the exact running sum */
      double r;
      int rs;
      (void)lowp_ref_expsum_get(ex, &r, &rs);
      lowp_fpx_record_ref(t, m, &ev, A, LOWP_RND_NE, &r, rs);
    }
  }
  if (st == LOWP_OK) st = div_traced(t, y, e, s, x, n, F, row, seq0);
  lowp_ref_expsum_free(ex);
  free(e);
  return st;
}
