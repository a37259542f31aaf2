/* texact_sum -- tests of lowp_exact_sum (exact accumulator) against MPFR */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact/exact.h"
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

/* NaN-safe, +-0-aware equality of two results */
static int same(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  return x == y && signbit(x) == signbit(y);
}

static void check_sum(const double *x, size_t n, const lowp_format_t *f,
                      lowp_rounding_t rnd, double want, const char *what) {
  double y;
  char b1[64], b2[64];
  int st = lowp_exact_sum(&y, x, n, f, NULL, rnd);
  lowp_test_check(st == LOWP_OK && same(y, want), "%s (%s %s): got %s want %s", what,
                  f->name, lowp_rounding_name(rnd), lowp_test_hex(y, b1, sizeof b1),
                  lowp_test_hex(want, b2, sizeof b2));
}

/* Generic sweep: fast path == MPFR oracle for every format and mode. */
static void sweep(const double *x, size_t n, const char *what) {
  size_t i;
  int r;
  for (i = 0; i < lowp_format_count(); i++) {
    const lowp_format_t *f = lowp_format_at(i);
    for (r = 0; r < LOWP_RND_COUNT; r++) {
      double y1, y2;
      char b1[64], b2[64];
      lowp_policy_t pol = {0};
      pol.sr_seed = lowp_test_seed();
      pol.sr_offset = 17;
      lowp_exact_sum(&y1, x, n, f, &pol, (lowp_rounding_t)r);
      lowp_exact_sum_mpfr(&y2, x, n, f, &pol, (lowp_rounding_t)r);
      lowp_test_check(same(y1, y2), "sweep %s n=%zu %s %s: fast %s mpfr %s", what, n,
                      f->name, lowp_rounding_name((lowp_rounding_t)r),
                      lowp_test_hex(y1, b1, sizeof b1), lowp_test_hex(y2, b2, sizeof b2));
    }
  }
}

int main(void) {
  const lowp_format_t *f64 = &LOWP_FMT_FP64;
  uint64_t seed;
  size_t i;
  lowp_test_start("texact_sum");
  seed = lowp_test_seed();

  /* special values: IEEE 754 6.2 (NaN propagates), 7.2 (inf - inf invalid) */
  {
    double a[] = {1.0, NAN, 2.0}, b[] = {INFINITY, 1.0}, c[] = {INFINITY, -INFINITY};
    double d[] = {-INFINITY, 1e308, 1e308};
    check_sum(a, 3, f64, LOWP_RND_NE, NAN, "NaN term");
    check_sum(b, 2, f64, LOWP_RND_NE, INFINITY, "inf term");
    check_sum(c, 2, f64, LOWP_RND_NE, NAN, "inf - inf");
    check_sum(d, 3, f64, LOWP_RND_NE, -INFINITY, "-inf beats finite overflow");
  }
  /* zero signs: IEEE 754 6.3, as mpfr_sum extends it to n terms */
  {
    double z1[] = {-0.0, -0.0}, z2[] = {-0.0, 0.0}, z3[] = {1.5, -1.5};
    check_sum(z1, 2, f64, LOWP_RND_NE, -0.0, "-0 + -0");
    check_sum(z2, 2, f64, LOWP_RND_NE, 0.0, "-0 + +0");
    check_sum(z2, 2, f64, LOWP_RND_DN, -0.0, "-0 + +0 rdn");
    check_sum(z3, 2, f64, LOWP_RND_NE, 0.0, "x - x");
    check_sum(z3, 2, f64, LOWP_RND_DN, -0.0, "x - x rdn");
    check_sum(z3, 0, f64, LOWP_RND_NE, 0.0, "empty sum");
  }
  /* hand cases: cancellation across the whole binary64 range */
  {
    double a[] = {0x1p1023, 0x1p-1074, -0x1p1023};
    double b[] = {0x1p1023, 0x1p1023, -0x1p1023};           /* intermediate overflow */
    double c[] = {1.0, 0x1p-53, 0x1p-1074};                 /* just above a tie */
    double d[] = {1.0, 0x1p-53};                            /* tie: to even */
    double e[] = {0x1p1023, 0x1.fffffffffffffp1022};        /* overflows */
    check_sum(a, 3, f64, LOWP_RND_NE, 0x1p-1074, "2^1023 + 2^-1074 - 2^1023");
    check_sum(b, 3, f64, LOWP_RND_NE, 0x1p1023, "no intermediate overflow");
    check_sum(c, 3, f64, LOWP_RND_NE, 1.0 + 0x1p-52, "sticky bit decides");
    check_sum(d, 2, f64, LOWP_RND_NE, 1.0, "tie to even");
    check_sum(d, 2, f64, LOWP_RND_UP, 1.0 + 0x1p-52, "rup");
    check_sum(e, 2, f64, LOWP_RND_NE, INFINITY, "overflow to inf");
    check_sum(e, 2, f64, LOWP_RND_TZ, 0x1.fffffffffffffp1023, "overflow rtz -> max");
    check_sum(c, 3, &LOWP_FMT_FP16, LOWP_RND_NE, 1.0, "fp16 output");
  }
  /* property: cancel sets have a known exact sum (dist.h), every format */
  for (i = 0; i < lowp_format_count(); i++) {
    const lowp_format_t *f = lowp_format_at(i);
    double x[1000], want, y;
    if (!f->has_sign || !f->has_zero) continue;
    lowp_dist_cancel(x, 1000, f, seed + i, 0, &want);
    lowp_exact_sum(&y, x, 1000, f64, NULL, LOWP_RND_NE);
    lowp_test_check(y == want, "cancel %s: got %a want %a", f->name, y, want);
  }
  /* generic sweep against MPFR: random, spread over all of binary64, and
     with many terms (carry propagation of the accumulator) */
  {
    static double x[20000];
    lowp_dist_t d = {LOWP_DIST_SPREAD, 0, 0};
    lowp_dist_fill(x, 64, &d, f64, seed, 1);
    sweep(x, 64, "spread fp64");
    d.kind = LOWP_DIST_NORMAL;
    lowp_dist_fill(x, 200, &d, f64, seed, 2);
    sweep(x, 200, "normal");
    lowp_dist_cancel(x, 999, f64, seed, 3, NULL);
    sweep(x, 999, "cancel");
    for (i = 0; i < 20000; i++) x[i] = (i % 2 ? -1.0 : 1.0) * 0x1.fffffffffffffp1023;
    x[7] = 0x1p-1074;
    sweep(x, 20000, "huge alternating + subnormal");
    for (i = 0; i < 20000; i++) x[i] = 0x1.fffffffffffffp1023;
    sweep(x, 20000, "huge same sign");
  }
  return lowp_test_end();
}
