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
#include "status.h"

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
      if (err && errlen) snprintf(err, errlen, "xent: target %g of row %zu is not a class index in [0, %zu)", t, r, n);
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
