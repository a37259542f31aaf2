/* lowp_exact_gemm_plain_mpfr -- the plainest exact MPFR GEMM: a baseline to time against */

/*
 * The cheapest exact loop MPFR allows, as a user would write it: operands
 * at the precision of their format (pin bits hold every value exactly),
 * each product at 2 pin bits (exact), and one accumulator as wide as these
 * data need (the span from the largest exponent of a product to the lowest
 * set bit of any product, plus ceil(log2 k) + 2 bits: every partial sum is
 * exact), then one rounding to f. `lowp bench exact` times it beside the
 * exact GEMM (lowp_exact_gemm) and OpenBLAS; its results equal lowp's bit
 * for bit, which the benchmark checks.
 */

#include "exact/exact.h"

#include <math.h>
#include <stdlib.h>

#include "exact/internal.h"

/* ------------------------------------------------------ private helpers */

/* exponent of the last set bit of x (x a nonzero finite binary64 value) */
static int lsb_exp(double x) {
  int e, b = 0;
  double m = frexp(fabs(x), &e); /* |x| = m 2^e, m in [0.5, 1) */
  while (m != floor(m)) { m *= 2; b++; }
  return e - b;
}

/* the top exponent (frexp's) and lowest set bit over the nonzeros of x */
static void span(const double *x, size_t len, int *emax, int *lmin) {
  size_t i;
  int e;
  for (i = 0; i < len; i++)
    if (x[i] != 0) {
      (void)frexp(x[i], &e);
      if (e > *emax) *emax = e;
      if (lsb_exp(x[i]) < *lmin) *lmin = lsb_exp(x[i]);
    }
}

/* precision that makes the accumulator exact for every dot product */
static long wide_prec(const double *a, size_t la, const double *b, size_t lb, size_t k) {
  int emax_a = -100000, emax_b = -100000, lmin_a = 100000, lmin_b = 100000, e = 0;
  long p;
  span(a, la, &emax_a, &lmin_a);
  span(b, lb, &emax_b, &lmin_b);
  if (emax_a < -99999 || emax_b < -99999) return MPFR_PREC_MIN + 2; /* all zero */
  while (((size_t)1 << e) < k) e++;
  p = (long)(emax_a + emax_b) - (lmin_a + lmin_b) + e + 2;
  return p < MPFR_PREC_MIN + 2 ? MPFR_PREC_MIN + 2 : p;
}

static int all_finite(const double *x, size_t len) {
  size_t i;
  for (i = 0; i < len; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

/* ----------------------------------------------------------- public API */

int lowp_exact_gemm_plain_mpfr(double *c, const double *a, const double *b, size_t m,
                              size_t n, size_t k, int pin, const lowp_format_t *f,
                              lowp_rounding_t rnd) {
  mpfr_t *ma, *mb, acc, prod;
  size_t i, j, l, la = m * k, lb = k * n;
  int st = lowp__exact_check(f, rnd);
  if (st) return st;
  if (m == 0 || n == 0) return LOWP_OK;
  if (!c || (k && (!a || !b)) || pin < 1 || pin > 53) return LOWP_EINVAL;
  if (!all_finite(a, m * k) || !all_finite(b, k * n)) return LOWP_EINVAL;
  ma = malloc((la ? la : 1) * sizeof *ma);
  mb = malloc((lb ? lb : 1) * sizeof *mb);
  if (!ma || !mb) { free(ma), free(mb); return LOWP_ENOMEM; }
  /* operands at the input precision, products at twice it: the smallest
     exact sizes, which keep every MPFR number in one limb where possible */
  for (i = 0; i < m * k; i++) { mpfr_init2(ma[i], pin); mpfr_set_d(ma[i], a[i], MPFR_RNDN); }
  for (i = 0; i < k * n; i++) { mpfr_init2(mb[i], pin); mpfr_set_d(mb[i], b[i], MPFR_RNDN); }
  mpfr_init2(acc, (mpfr_prec_t)wide_prec(a, m * k, b, k * n, k));
  mpfr_init2(prod, 2 * pin);
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      mpfr_set_zero(acc, 1);
      for (l = 0; l < k; l++) {
        mpfr_mul(prod, ma[i * k + l], mb[l * n + j], MPFR_RNDN); /* exact */
        mpfr_add(acc, acc, prod, MPFR_RNDN);                     /* exact by prec */
      }
      (void)lowp__exact_round_mpfr(&c[i * n + j], acc, f, NULL, rnd, i * n + j);
    }
  for (i = 0; i < m * k; i++) mpfr_clear(ma[i]);
  for (i = 0; i < k * n; i++) mpfr_clear(mb[i]);
  mpfr_clears(acc, prod, (mpfr_ptr)0);
  free(ma);
  free(mb);
  return LOWP_OK;
}
