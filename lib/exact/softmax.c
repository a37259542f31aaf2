/* lowp_exact_softmax -- correctly rounded softmax, log-softmax, logsumexp, cross-entropy */

/*
 * One concept: the max-shifted exponential sum S = sum_j exp(x_j - m),
 * m = max x, from which softmax_i = exp(x_i - m) / S, logsumexp = m + log S,
 * log-softmax_i = (x_i - m) - log S and cross-entropy = (m - x_t) + log S.
 * The four share the evaluation and the interval loop (exact.h): at
 * precision w every quantity is an interval [lo, hi] with strict flags
 * (exact/ival.h); an output is final once every value its interval allows
 * has the same round-to-odd value at 66 bits; w doubles (128, 256, ...)
 * for the outputs not yet final. The shift by m makes every exponent <= 0
 * (no overflow) and keeps S in [1, n].
 */

#include "exact/exact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exact/internal.h"
#include "exact/ival.h"

/* ------------------------------------------------------ private helpers */

typedef enum { K_SOFTMAX, K_LOGSOFTMAX, K_LSE, K_XENT } kind_t;

/* Special inputs: NaN anywhere, or +inf (inf - inf under the shift), give
   NaN; all -inf gives 0/0 = NaN for softmax, -inf for logsumexp, ... */
static int specials(double *y, const double *x, size_t n, size_t nout, kind_t kind,
                    size_t target, const lowp_format_t *f, const lowp_policy_t *pol,
                    lowp_rounding_t rnd, double *m) {
  size_t i;
  int all_ninf = 1, bad = 0;
  *m = -INFINITY;
  for (i = 0; i < n; i++) {
    if (isnan(x[i]) || x[i] == INFINITY) bad = 1;
    if (x[i] != -INFINITY) all_ninf = 0;
    if (x[i] > *m) *m = x[i];
  }
  (void)target;
  if (!bad && !all_ninf) return 0;
  for (i = 0; i < nout; i++) {
    double v = NAN;
    if (!bad && kind == K_LSE) v = -INFINITY;
    {
      lowp_policy_t p = {0};
      if (pol) p = *pol;
      p.sr_offset = lowp__exact_index(pol, i);
      (void)lowp_round_f64(&y[i], v, f, &p, rnd);
    }
  }
  return 1;
}

static int run(double *y, const double *xin, size_t n, kind_t kind, size_t target,
               const lowp_format_t *f, const lowp_policy_t *pol, lowp_rounding_t rnd) {
  size_t nout = (kind == K_SOFTMAX || kind == K_LOGSOFTMAX) ? n : 1, i, left;
  double m, *x;
  lowp__iv_t *e, s, t, l;
  mpfr_t out;
  char *done;
  mpfr_prec_t w;
  int st = lowp__exact_check(f, rnd);
  if (st) return st;
  if (!y || !xin || n == 0) return LOWP_EINVAL;
  if (kind == K_XENT && target >= n) return LOWP_EINVAL;
  x = malloc(n * sizeof *x); /* y may alias x */
  done = calloc(nout, 1);
  e = malloc(n * sizeof *e);
  if (!x || !done || !e) { free(x); free(done); free(e); return LOWP_ENOMEM; }
  memcpy(x, xin, n * sizeof *x);
  if (specials(y, x, n, nout, kind, target, f, pol, rnd, &m)) {
    free(x); free(done); free(e);
    return LOWP_OK;
  }
  if (kind == K_XENT && x[target] == -INFINITY) { /* -log softmax = +inf */
    lowp_policy_t p = {0};
    if (pol) p = *pol;
    p.sr_offset = lowp__exact_index(pol, 0);
    (void)lowp_round_f64(y, INFINITY, f, &p, rnd);
    free(x); free(done); free(e);
    return LOWP_OK;
  }
  for (i = 0; i < n; i++) lowp__iv_init(&e[i], LOWP__IV_PREC0);
  lowp__iv_init(&s, LOWP__IV_PREC0);
  lowp__iv_init(&t, LOWP__IV_PREC0);
  lowp__iv_init(&l, LOWP__IV_PREC0);
  mpfr_init2(out, LOWP__ODD_PREC);
  left = nout;
  for (w = LOWP__IV_PREC0; left && w <= LOWP__IV_PRECMAX; w *= 2) {
    lowp__iv_t mm;
    lowp__iv_init(&mm, w);
    lowp__iv_set_d(&mm, m);
    lowp__iv_set_prec(&s, w);
    lowp__iv_set_prec(&t, w);
    lowp__iv_set_prec(&l, w);
    mpfr_set_zero(s.lo, 1);
    mpfr_set_zero(s.hi, 1);
    /* e[j] = x_j - m (kept for log-softmax), then S = sum exp(e[j]) */
    for (i = 0; i < n; i++) {
      lowp__iv_set_prec(&e[i], w);
      if (x[i] == -INFINITY) { /* exp(-inf) = 0 exactly */
        mpfr_set_inf(e[i].lo, -1);
        mpfr_set_inf(e[i].hi, -1);
        continue;
      }
      lowp__iv_set_d(&t, x[i]);
      lowp__iv_sub(&e[i], &t, &mm);
      lowp__iv_exp(&t, &e[i]);
      lowp__iv_add(&s, &s, &t);
    }
    if (kind != K_SOFTMAX) lowp__iv_log(&l, &s); /* log S, S >= 1 */
    for (i = 0; i < nout; i++) {
      if (done[i]) continue;
      switch (kind) {
      case K_SOFTMAX:
        if (x[i] == -INFINITY) { mpfr_set_zero(t.lo, 1); mpfr_set_zero(t.hi, 1); t.slo = t.shi = 0; }
        else { lowp__iv_exp(&t, &e[i]); lowp__iv_div(&t, &t, &s); }
        break;
      case K_LOGSOFTMAX:
        if (x[i] == -INFINITY) { mpfr_set_inf(t.lo, -1); mpfr_set_inf(t.hi, -1); t.slo = t.shi = 0; }
        else lowp__iv_sub(&t, &e[i], &l);
        break;
      case K_LSE:
        lowp__iv_add(&t, &l, &mm);
        break;
      case K_XENT:
        lowp__iv_sub(&t, &l, &e[target]); /* log S - (x_t - m) */
        break;
      }
      if (mpfr_inf_p(t.lo) && mpfr_equal_p(t.lo, t.hi)) { /* exact -inf */
        mpfr_set(out, t.lo, MPFR_RNDN);
      } else if (!lowp__iv_decide(out, &t)) {
        continue;
      }
      (void)lowp__exact_round_mpfr(&y[i], out, f, pol, rnd, lowp__exact_index(pol, i));
      done[i] = 1;
      left--;
    }
    lowp__iv_clear(&mm);
  }
  for (i = 0; i < n; i++) lowp__iv_clear(&e[i]);
  lowp__iv_clear(&s);
  lowp__iv_clear(&t);
  lowp__iv_clear(&l);
  mpfr_clear(out);
  free(x); free(done); free(e);
  return left ? LOWP_ERANGE : LOWP_OK;
}

/* ----------------------------------------------------------- public API */

int lowp_exact_softmax(double *y, const double *x, size_t n, const lowp_format_t *f,
                       const lowp_policy_t *pol, lowp_rounding_t rnd) {
  return run(y, x, n, K_SOFTMAX, 0, f, pol, rnd);
}

int lowp_exact_logsoftmax(double *y, const double *x, size_t n,
                          const lowp_format_t *f, const lowp_policy_t *pol,
                          lowp_rounding_t rnd) {
  return run(y, x, n, K_LOGSOFTMAX, 0, f, pol, rnd);
}

int lowp_exact_logsumexp(double *y, const double *x, size_t n,
                         const lowp_format_t *f, const lowp_policy_t *pol,
                         lowp_rounding_t rnd) {
  return run(y, x, n, K_LSE, 0, f, pol, rnd);
}

int lowp_exact_xent(double *y, const double *x, size_t n, size_t target,
                    const lowp_format_t *f, const lowp_policy_t *pol,
                    lowp_rounding_t rnd) {
  return run(y, x, n, K_XENT, target, f, pol, rnd);
}
