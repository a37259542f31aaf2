/* texact_norm -- layer norm, RMS norm and mean cross-entropy against naive MPFR formulas at two precisions */

/*
 * Oracle: the textbook two-pass formulas in MPFR at 300 and at 600 bits,
 * round to nearest (a different algorithm from lib/exact/norm.c, which sums
 * exactly and encloses the square root in intervals), rounded to the format
 * by lowp_round_mpfr. Where the two precisions round alike the library must
 * agree bit for bit; cases where they differ (a value within 2^-290 of a
 * rounding boundary) are counted and must be rare. Rows: random normal,
 * constant, huge (1e300) and tiny (1e-300, subnormal) magnitudes,
 * cancellation (mean/std = 1e4 and 1e8), n = 1, exact zeros; formats fp64
 * fp32 fp16 bf16 e4m3; modes rne rtz rup rdn.
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "exact/exact.h"
#include "format/round_mpfr.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

static int same(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  return x == y && signbit(x) == signbit(y);
}

/* naive two-pass layer norm (rms = 0) or RMS norm (rms = 1) at P bits:
   y[i], and mean, var in out[n], out[n + 1] */
static void naive_norm(mpfr_t *out, const double *x, size_t n, double eps, int rms,
                       mpfr_prec_t P) {
  mpfr_t mean, var, t, den;
  size_t i;
  mpfr_inits2(P, mean, var, t, den, (mpfr_ptr)0);
  mpfr_set_zero(mean, 1);
  for (i = 0; i < n; i++) mpfr_add_d(mean, mean, x[i], MPFR_RNDN);
  mpfr_div_ui(mean, mean, (unsigned long)n, MPFR_RNDN);
  mpfr_set_zero(var, 1);
  for (i = 0; i < n; i++) {
    mpfr_set_d(t, x[i], MPFR_RNDN);
    if (!rms) mpfr_sub(t, t, mean, MPFR_RNDN);
    mpfr_sqr(t, t, MPFR_RNDN);
    mpfr_add(var, var, t, MPFR_RNDN);
  }
  mpfr_div_ui(var, var, (unsigned long)n, MPFR_RNDN);
  mpfr_add_d(den, var, eps, MPFR_RNDN);
  mpfr_sqrt(den, den, MPFR_RNDN);
  for (i = 0; i < n; i++) {
    mpfr_set_d(t, x[i], MPFR_RNDN);
    if (!rms) mpfr_sub(t, t, mean, MPFR_RNDN);
    mpfr_div(out[i], t, den, MPFR_RNDN);
  }
  mpfr_set(out[n], mean, MPFR_RNDN);
  mpfr_set(out[n + 1], var, MPFR_RNDN);
  mpfr_clears(mean, var, t, den, (mpfr_ptr)0);
}

static const lowp_format_t *const FMTS[] = {&LOWP_FMT_FP64, &LOWP_FMT_FP32, &LOWP_FMT_FP16,
                                            &LOWP_FMT_BF16, &LOWP_FMT_E4M3};
static const lowp_rounding_t MODES[] = {LOWP_RND_NE, LOWP_RND_TZ, LOWP_RND_UP, LOWP_RND_DN};
static long undecided, compared;

/* compare one row in every format and mode */
static void row_case(const char *what, const double *x, size_t n, double eps, int rms) {
  mpfr_t *a = malloc((n + 2) * sizeof *a), *b = malloc((n + 2) * sizeof *b);
  double *y = malloc(n * sizeof *y), mean, var;
  size_t i, fi, mi;
  int bad = 0;
  for (i = 0; i < n + 2; i++) {
    mpfr_init2(a[i], 300);
    mpfr_init2(b[i], 600);
  }
  naive_norm(a, x, n, eps, rms, 300);
  naive_norm(b, x, n, eps, rms, 600);
  for (fi = 0; fi < sizeof FMTS / sizeof FMTS[0]; fi++)
    for (mi = 0; mi < sizeof MODES / sizeof MODES[0]; mi++) {
      const lowp_format_t *f = FMTS[fi];
      lowp_rounding_t r = MODES[mi];
      int st = rms ? lowp_exact_rmsnorm(y, x, n, eps, f, NULL, r)
                   : lowp_exact_layernorm(y, &mean, &var, x, n, eps, f, NULL, r);
      if (!lowp_test_check(st == LOWP_OK, "%s: status %d (%s %s)", what, st, f->name,
                           lowp_rounding_name(r)))
        continue;
      for (i = 0; i < n + (rms ? 0 : 2); i++) {
        double ra, rb, got = i < n ? y[i] : i == n ? mean : var;
        if (mpfr_nan_p(a[i])) ra = rb = NAN;
        else {
          lowp_round_mpfr(&ra, a[i], f, NULL, r);
          lowp_round_mpfr(&rb, b[i], f, NULL, r);
        }
        if (!same(ra, rb)) { undecided++; continue; }
        compared++;
        if (!same(got, ra) && bad++ < 3)
          lowp_test_check(0, "%s: %s %s output %zu: lowp %a, MPFR %a", what, f->name,
                          lowp_rounding_name(r), i, got, ra);
      }
    }
  lowp_test_check(bad == 0, "%s: %d mismatches", what, bad);
  for (i = 0; i < n + 2; i++) {
    mpfr_clear(a[i]);
    mpfr_clear(b[i]);
  }
  free(a); free(b); free(y);
}

static void rows(void) {
  lowp_rng_t g;
  double x[257];
  size_t i, n;
  int t;
  lowp_rng_init(&g, lowp_test_seed(), 11);
  for (t = 0; t < 6; t++) {
    n = 1 + (size_t)(lowp_rng_next(&g) % 256);
    for (i = 0; i < n; i++) x[i] = lowp_rng_normal(&g);
    row_case("random row", x, n, 1e-5, 0);
    row_case("random row (rms)", x, n, 1e-5, 1);
    row_case("random row, eps 0", x, n, 0, 0);
  }
  for (i = 0; i < 64; i++) x[i] = 3.25;
  row_case("constant row", x, 64, 1e-5, 0);
  for (i = 0; i < 64; i++) x[i] = 1e300 * lowp_rng_normal(&g);
  row_case("huge magnitudes", x, 64, 1e-5, 0);
  row_case("huge magnitudes (rms)", x, 64, 1e-5, 1);
  for (i = 0; i < 64; i++) x[i] = 1e-300 * lowp_rng_normal(&g);
  x[3] = 0x1p-1074;
  x[4] = -0x1.8p-1060;
  row_case("tiny magnitudes", x, 64, 0, 0);
  row_case("tiny magnitudes (rms)", x, 64, 0, 1);
  for (i = 0; i < 100; i++) x[i] = 1e4 + lowp_rng_normal(&g);
  row_case("mean/std = 1e4", x, 100, 1e-5, 0);
  for (i = 0; i < 100; i++) x[i] = 1e8 + lowp_rng_normal(&g);
  row_case("mean/std = 1e8", x, 100, 1e-5, 0);
  x[0] = -2.5;
  row_case("n = 1", x, 1, 1e-5, 0);
  row_case("n = 1 (rms)", x, 1, 1e-5, 1);
  x[0] = 1; x[1] = 2; x[2] = 3;  /* mean 2 exactly: y[1] = 0 exactly */
  row_case("exact zero output", x, 3, 0, 0);
  x[0] = 3; x[1] = -3; x[2] = 3; x[3] = -3; /* var 9, eps 0: y = +-1 exactly */
  row_case("exact outputs", x, 4, 0, 0);
  /* mean = 1 + 2^-11 + 2^-100: 2^-100 above an fp16 tie, below the 66-bit
     quotient's last bit (its sticky information must survive) */
  x[0] = 3 + 3 * 0x1p-11; x[1] = 3 * 0x1p-100; x[2] = 0;
  row_case("mean just above an fp16 tie", x, 3, 1e-5, 0);
  printf("compared %ld values, %ld undecided by the oracles\n", compared, undecided);
  lowp_test_check(undecided * 1000 <= compared, "oracles undecided on %ld of %ld values",
                  undecided, compared);
}

static void specials(void) {
  double x[4] = {1, 2, NAN, 4}, y[4], m, v;
  lowp_test_check(lowp_exact_layernorm(y, &m, &v, x, 4, 1e-5, &LOWP_FMT_FP32, NULL, LOWP_RND_NE) ==
                          LOWP_OK && isnan(y[0]) && isnan(m) && isnan(v),
                  "NaN in -> NaN out");
  x[2] = INFINITY;
  lowp_test_check(lowp_exact_layernorm(y, &m, &v, x, 4, 1e-5, &LOWP_FMT_FP32, NULL, LOWP_RND_NE) ==
                          LOWP_OK && isnan(y[1]) && m == INFINITY && isnan(v),
                  "inf in: mean inf, var and y NaN");
  x[0] = x[1] = x[2] = x[3] = 7;
  lowp_test_check(lowp_exact_layernorm(y, &m, &v, x, 4, 0, &LOWP_FMT_FP32, NULL, LOWP_RND_NE) ==
                          LOWP_OK && isnan(y[0]) && m == 7 && v == 0,
                  "constant row, eps 0: y = 0/0 = NaN, mean 7, var 0");
  lowp_test_check(lowp_exact_layernorm(y, &m, &v, x, 4, -1, &LOWP_FMT_FP32, NULL, LOWP_RND_NE) ==
                      LOWP_EINVAL, "eps < 0 refused");
  lowp_test_check(lowp_exact_layernorm(y, &m, &v, x, 0, 0, &LOWP_FMT_FP32, NULL, LOWP_RND_NE) ==
                      LOWP_EINVAL, "n = 0 refused");
}

/* mean cross-entropy against the naive formula at 300 and 600 bits */
static void naive_xent(mpfr_t out, const double *x, size_t rows, size_t n, const size_t *tg) {
  mpfr_prec_t P = mpfr_get_prec(out);
  mpfr_t s, t, acc;
  size_t r, j;
  mpfr_inits2(P, s, t, acc, (mpfr_ptr)0);
  mpfr_set_zero(acc, 1);
  for (r = 0; r < rows; r++) {
    mpfr_set_zero(s, 1);
    for (j = 0; j < n; j++) {
      mpfr_set_d(t, x[r * n + j], MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_add(s, s, t, MPFR_RNDN);
    }
    mpfr_log(s, s, MPFR_RNDN);
    mpfr_sub_d(s, s, x[r * n + tg[r]], MPFR_RNDN);
    mpfr_add(acc, acc, s, MPFR_RNDN);
  }
  mpfr_div_ui(out, acc, (unsigned long)rows, MPFR_RNDN);
  mpfr_clears(s, t, acc, (mpfr_ptr)0);
}

static void xent(void) {
  enum { R = 48, NC = 500 };
  static double x[R * NC];
  size_t tg[R], i, fi, mi;
  lowp_rng_t g;
  mpfr_t a, b;
  int t, bad = 0;
  lowp_rng_init(&g, lowp_test_seed(), 12);
  mpfr_init2(a, 300);
  mpfr_init2(b, 600);
  for (t = 0; t < 4; t++) {
    size_t rows = 1 + (size_t)(lowp_rng_next(&g) % R), n = 1 + (size_t)(lowp_rng_next(&g) % NC);
    double scale = t == 3 ? 30 : 1 + t;
    for (i = 0; i < rows * n; i++) x[i] = scale * lowp_rng_normal(&g);
    for (i = 0; i < rows; i++) tg[i] = (size_t)(lowp_rng_next(&g) % n);
    if (t == 1) { /* targets at the max and the min of their rows */
      for (i = 0; i < rows; i++) {
        size_t j, arg = 0;
        for (j = 1; j < n; j++)
          if ((i % 2 ? x[i * n + j] > x[i * n + arg] : x[i * n + j] < x[i * n + arg])) arg = j;
        tg[i] = arg;
      }
    }
    naive_xent(a, x, rows, n, tg);
    naive_xent(b, x, rows, n, tg);
    for (fi = 0; fi < sizeof FMTS / sizeof FMTS[0]; fi++)
      for (mi = 0; mi < sizeof MODES / sizeof MODES[0]; mi++) {
        double y, ra, rb;
        int st = lowp_exact_xent_mean(&y, x, rows, n, tg, FMTS[fi], NULL, MODES[mi]);
        lowp_round_mpfr(&ra, a, FMTS[fi], NULL, MODES[mi]);
        lowp_round_mpfr(&rb, b, FMTS[fi], NULL, MODES[mi]);
        if (!same(ra, rb)) { undecided++; continue; }
        compared++;
        if ((st != LOWP_OK || !same(y, ra)) && bad++ < 3)
          lowp_test_check(0, "xent mean (%zu rows of %zu) %s %s: lowp %a (status %d), MPFR %a",
                          rows, n, FMTS[fi]->name, lowp_rounding_name(MODES[mi]), y, st, ra);
      }
  }
  lowp_test_check(bad == 0, "xent mean: %d mismatches", bad);
  {
    double one[3] = {5, 5, 5}, y;
    size_t z[3] = {0, 0, 0};
    lowp_test_check(lowp_exact_xent_mean(&y, one, 3, 1, z, &LOWP_FMT_FP32, NULL, LOWP_RND_UP) ==
                        LOWP_OK && y == 0, "xent of one class is exactly 0");
    one[1] = -INFINITY;
    lowp_test_check(lowp_exact_xent_mean(&y, one, 3, 1, z, &LOWP_FMT_FP32, NULL, LOWP_RND_NE) ==
                        LOWP_OK && isnan(y), "a row of -inf: NaN");
    z[0] = 3;
    lowp_test_check(lowp_exact_xent_mean(&y, one, 3, 1, z, &LOWP_FMT_FP32, NULL, LOWP_RND_NE) ==
                        LOWP_EINVAL, "target out of range refused");
  }
  mpfr_clear(a);
  mpfr_clear(b);
}

int main(void) {
  lowp_test_start("texact_norm");
  rows();
  specials();
  xent();
  return lowp_test_end();
}
