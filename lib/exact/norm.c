/* lowp_exact_norm -- correctly rounded layer norm, RMS norm and mean cross-entropy */

/*
 * Layer norm of a row x (n values) with eps >= 0 (a binary64 value):
 *   mean = S / n,  var = (n Q - S^2) / n^2  (population variance),
 *   y_i  = (x_i - mean) / sqrt(var + eps) = (n x_i - S) / sqrt(D),
 *   D    = n Q - S^2 + n^2 eps,
 * with S = sum x_i and Q = sum x_i^2. S, Q, n x_i - S and D are computed
 * EXACTLY in MPFR (binary64 values span 2^-1074 .. 2^1024, their squares
 * 2^-2148 .. 2^2048, so 4800 bits hold every sum of up to 2^64 of them
 * without rounding); mean and var are then one division of exact numbers,
 * made round-to-odd at 66 bits and rounded once to the format (exact.h:
 * round-to-odd at >= p + 2 bits followed by a rounding to p bits is the
 * correct rounding in every mode). y_i is irrational in general: it is
 * enclosed as an interval (exact/ival.h: the exact numerator over sqrt(D)
 * with outward rounding) at precision w = 128, 256, ... until every value
 * the interval allows has the same round-to-odd value at 66 bits, as
 * lowp_exact_softmax does. The loop ends: if y_i is rational, sqrt(D) is,
 * D is a perfect square, its root and the quotient become exact at some w;
 * otherwise y_i is not a 66-bit number and a tight enough interval avoids
 * it. y_i = 0 (x_i equal to the mean) is exact at once.
 * RMS norm: y_i = x_i / sqrt(Q/n + eps) = n x_i / sqrt(n Q + n^2 eps), the
 * same computation with numerator n x_i and D = n Q + n^2 eps.
 * Mean cross-entropy: (1/R) sum_r (log sum_j exp(x_rj - m_r) + m_r - x_rt),
 * m_r the row's max, all rows' intervals summed and divided by R.
 * Special values: NaN in a row -> every output of the row NaN; an infinite
 * input -> mean +-inf (NaN if both signs), var and y NaN (inf - inf);
 * D = 0 (a constant row with eps = 0) -> y = 0/0 = NaN. Cross-entropy: a
 * NaN or +inf logit, or a row of -inf, gives NaN; a target logit of -inf
 * (others finite) gives +inf.
 */

#include "exact/exact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exact/internal.h"
#include "exact/ival.h"

/* ------------------------------------------------------ private helpers */

/* exact sums of binary64 values and of their squares (see the top) */
#define BIG_PREC 4800

static void round_val(double *y, double v, const lowp_format_t *f, const lowp_policy_t *pol,
                      lowp_rounding_t rnd, size_t i) {
  lowp_policy_t p = {0};
  if (pol) p = *pol;
  p.sr_offset = lowp__exact_index(pol, i);
  (void)lowp_round_f64(y, v, f, &p, rnd);
}

/* out = round(a / d) for exact a and a positive integer-valued d: one
   division, round-to-odd at 66 bits, then once to f */
static void round_quot(double *y, mpfr_srcptr a, mpfr_srcptr d, const lowp_format_t *f,
                       const lowp_policy_t *pol, lowp_rounding_t rnd, size_t i) {
  mpfr_t q;
  int tern;
  mpfr_init2(q, LOWP__ODD_PREC);
  tern = mpfr_div(q, a, d, MPFR_RNDZ);
  lowp__odd_fix(q, tern, mpfr_sgn(a));
  (void)lowp__exact_round_mpfr(y, q, f, pol, rnd, lowp__exact_index(pol, i));
  mpfr_clear(q);
}

/* y[i] = round(num[i] / sqrt(D)) for exact num[i] and exact D > 0 */
static int quot_sqrt(double *y, mpfr_t *num, size_t n, mpfr_srcptr D, const lowp_format_t *f,
                     const lowp_policy_t *pol, lowp_rounding_t rnd) {
  lowp__iv_t d, t, a;
  mpfr_t out;
  char *done = calloc(n ? n : 1, 1);
  size_t i, left = n;
  mpfr_prec_t w;
  if (!done) return LOWP_ENOMEM;
  for (i = 0; i < n; i++)
    if (mpfr_zero_p(num[i])) { /* x_i equal to the mean: exactly 0 */
      round_val(&y[i], 0.0, f, pol, rnd, i);
      done[i] = 1;
      left--;
    }
  lowp__iv_init(&d, LOWP__IV_PREC0);
  lowp__iv_init(&t, LOWP__IV_PREC0);
  lowp__iv_init(&a, LOWP__IV_PREC0);
  mpfr_init2(out, LOWP__ODD_PREC);
  for (w = LOWP__IV_PREC0; left && w <= LOWP__IV_PRECMAX; w *= 2) {
    lowp__iv_set_prec(&d, w);
    lowp__iv_set_prec(&t, w);
    lowp__iv_set_prec(&a, w);
    lowp__iv_set_mpfr(&d, D);
    lowp__iv_sqrt(&d, &d);
    for (i = 0; i < n; i++) {
      if (done[i]) continue;
      lowp__iv_set_mpfr(&a, num[i]);
      lowp__iv_div(&t, &a, &d);
      if (!lowp__iv_decide(out, &t)) continue;
      (void)lowp__exact_round_mpfr(&y[i], out, f, pol, rnd, lowp__exact_index(pol, i));
      done[i] = 1;
      left--;
    }
  }
  lowp__iv_clear(&d);
  lowp__iv_clear(&t);
  lowp__iv_clear(&a);
  mpfr_clear(out);
  free(done);
  return left ? LOWP_ERANGE : LOWP_OK;
}

/* NaN or infinities in a row: fill the outputs by IEEE's limits, return 1 */
static int norm_specials(double *y, double *mean, double *var, const double *x, size_t n,
                         const lowp_format_t *f, const lowp_policy_t *pol, lowp_rounding_t rnd) {
  size_t i;
  int nan = 0, pinf = 0, ninf = 0;
  for (i = 0; i < n; i++) {
    if (isnan(x[i])) nan = 1;
    else if (x[i] == INFINITY) pinf = 1;
    else if (x[i] == -INFINITY) ninf = 1;
  }
  if (!nan && !pinf && !ninf) return 0;
  if (y)
    for (i = 0; i < n; i++) round_val(&y[i], NAN, f, pol, rnd, i);
  if (mean) round_val(mean, nan || (pinf && ninf) ? NAN : pinf ? INFINITY : -INFINITY, f, pol, rnd, n);
  if (var) round_val(var, NAN, f, pol, rnd, n + 1);
  return 1;
}

/* the shared work of layer norm (rms = 0) and RMS norm (rms = 1) */
static int norm_row(double *y, double *mean, double *var, const double *x, size_t n, double eps,
                    int rms, const lowp_format_t *f, const lowp_policy_t *pol,
                    lowp_rounding_t rnd) {
  mpfr_t S, Q, D, t, nn, *num = NULL;
  size_t i;
  int st = lowp__exact_check(f, rnd);
  if (st) return st;
  if (!x || n == 0 || !(eps >= 0) || isinf(eps)) return LOWP_EINVAL;
  if (norm_specials(y, mean, var, x, n, f, pol, rnd)) return LOWP_OK;
  mpfr_inits2(BIG_PREC, S, Q, D, t, nn, (mpfr_ptr)0);
  mpfr_set_zero(S, 1);
  mpfr_set_zero(Q, 1);
  mpfr_set_uj(nn, (uintmax_t)n, MPFR_RNDN);
  for (i = 0; i < n; i++) {
    mpfr_add_d(S, S, x[i], MPFR_RNDN);     /* exact at BIG_PREC */
    mpfr_set_d(t, x[i], MPFR_RNDN);
    mpfr_sqr(t, t, MPFR_RNDN);             /* exact */
    mpfr_add(Q, Q, t, MPFR_RNDN);          /* exact */
  }
  /* D = n Q - S^2 (layer norm) or n Q (RMS norm); var = D / n^2 */
  mpfr_mul(D, Q, nn, MPFR_RNDN);
  if (!rms) {
    mpfr_sqr(t, S, MPFR_RNDN);
    mpfr_sub(D, D, t, MPFR_RNDN);
    if (mean) round_quot(mean, S, nn, f, pol, rnd, n);
    if (var) {
      mpfr_sqr(t, nn, MPFR_RNDN);
      round_quot(var, D, t, f, pol, rnd, n + 1);
    }
  }
  if (y) {
    /* D += n^2 eps */
    mpfr_sqr(t, nn, MPFR_RNDN);
    mpfr_mul_d(t, t, eps, MPFR_RNDN);
    mpfr_add(D, D, t, MPFR_RNDN);
    if (mpfr_zero_p(D)) { /* a constant row (or zeros) with eps = 0: 0/0 */
      for (i = 0; i < n; i++) round_val(&y[i], NAN, f, pol, rnd, i);
    } else {
      num = malloc(n * sizeof *num);
      if (!num) st = LOWP_ENOMEM;
      for (i = 0; num && i < n; i++) {
        mpfr_init2(num[i], BIG_PREC);
        mpfr_mul_d(num[i], nn, x[i], MPFR_RNDN); /* n x_i, exact */
        if (!rms) mpfr_sub(num[i], num[i], S, MPFR_RNDN); /* exact */
      }
      if (num) {
        st = quot_sqrt(y, num, n, D, f, pol, rnd);
        for (i = 0; i < n; i++) mpfr_clear(num[i]);
        free(num);
      }
    }
  }
  mpfr_clears(S, Q, D, t, nn, (mpfr_ptr)0);
  return st;
}

/* ----------------------------------------------------------- public API */

int lowp_exact_layernorm(double *y, double *mean, double *var, const double *x, size_t n,
                         double eps, const lowp_format_t *f, const lowp_policy_t *pol,
                         lowp_rounding_t rnd) {
  return norm_row(y, mean, var, x, n, eps, 0, f, pol, rnd);
}

int lowp_exact_rmsnorm(double *y, const double *x, size_t n, double eps, const lowp_format_t *f,
                       const lowp_policy_t *pol, lowp_rounding_t rnd) {
  if (!y) return LOWP_EINVAL;
  return norm_row(y, NULL, NULL, x, n, eps, 1, f, pol, rnd);
}

int lowp_exact_xent_mean(double *y, const double *x, size_t rows, size_t n, const size_t *target,
                         const lowp_format_t *f, const lowp_policy_t *pol, lowp_rounding_t rnd) {
  lowp__iv_t sum, s, t, e, r;
  mpfr_t out;
  mpfr_prec_t w;
  size_t i, j;
  int st = lowp__exact_check(f, rnd), special = 0; /* 1 NaN, 2 +inf */
  double *m;
  if (st) return st;
  if (!y || !x || !target || rows == 0 || n == 0) return LOWP_EINVAL;
  for (i = 0; i < rows; i++)
    if (target[i] >= n) return LOWP_EINVAL;
  m = malloc(rows * sizeof *m);
  if (!m) return LOWP_ENOMEM;
  for (i = 0; i < rows; i++) {
    const double *row = &x[i * n];
    int all_ninf = 1;
    m[i] = -INFINITY;
    for (j = 0; j < n; j++) {
      if (isnan(row[j]) || row[j] == INFINITY) special = 1;
      if (row[j] != -INFINITY) all_ninf = 0;
      if (row[j] > m[i]) m[i] = row[j];
    }
    if (all_ninf) special = 1;
    else if (row[target[i]] == -INFINITY && special != 1) special = 2;
  }
  if (special) {
    round_val(y, special == 1 ? NAN : INFINITY, f, pol, rnd, 0);
    free(m);
    return LOWP_OK;
  }
  lowp__iv_init(&sum, LOWP__IV_PREC0);
  lowp__iv_init(&s, LOWP__IV_PREC0);
  lowp__iv_init(&t, LOWP__IV_PREC0);
  lowp__iv_init(&e, LOWP__IV_PREC0);
  lowp__iv_init(&r, LOWP__IV_PREC0);
  mpfr_init2(out, LOWP__ODD_PREC);
  st = LOWP_ERANGE;
  for (w = LOWP__IV_PREC0; w <= LOWP__IV_PRECMAX; w *= 2) {
    lowp__iv_set_prec(&sum, w);
    lowp__iv_set_prec(&s, w);
    lowp__iv_set_prec(&t, w);
    lowp__iv_set_prec(&e, w);
    lowp__iv_set_prec(&r, w);
    lowp__iv_set_d(&sum, 0.0);
    for (i = 0; i < rows; i++) {
      const double *row = &x[i * n];
      lowp__iv_set_d(&s, 0.0);
      for (j = 0; j < n; j++) {
        if (row[j] == -INFINITY) continue; /* exp(-inf) = 0 exactly */
        lowp__iv_set_d(&t, row[j]);
        lowp__iv_set_d(&r, m[i]);
        lowp__iv_sub(&e, &t, &r);
        lowp__iv_exp(&t, &e);
        lowp__iv_add(&s, &s, &t);
      }
      lowp__iv_log(&s, &s); /* S >= 1: log S >= 0 */
      lowp__iv_set_d(&t, m[i]);
      lowp__iv_set_d(&r, row[target[i]]);
      lowp__iv_sub(&t, &t, &r); /* m - x_t >= 0 */
      lowp__iv_add(&s, &s, &t);
      lowp__iv_add(&sum, &sum, &s);
    }
    lowp__iv_set_d(&r, (double)rows);
    if ((size_t)(double)rows != rows) break; /* more rows than 2^53: not reached */
    lowp__iv_div(&t, &sum, &r);
    if (lowp__iv_decide(out, &t)) {
      (void)lowp__exact_round_mpfr(y, out, f, pol, rnd, lowp__exact_index(pol, 0));
      st = LOWP_OK;
      break;
    }
  }
  lowp__iv_clear(&sum);
  lowp__iv_clear(&s);
  lowp__iv_clear(&t);
  lowp__iv_clear(&e);
  lowp__iv_clear(&r);
  mpfr_clear(out);
  free(m);
  return st;
}
