/* texact_dot -- tests of lowp_exact_dot and lowp_exact_add2/mul2 against MPFR */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "exact/exact.h"
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

static int same(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  return x == y && signbit(x) == signbit(y);
}

static void check_dot(const double *x, const double *w, size_t n, double want,
                      const char *what) {
  double y;
  char b1[64], b2[64];
  lowp_exact_dot(&y, x, 1, w, 1, n, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
  lowp_test_check(same(y, want), "%s: got %s want %s", what,
                  lowp_test_hex(y, b1, sizeof b1), lowp_test_hex(want, b2, sizeof b2));
}

/* Generic sweep: every format and mode, fast == MPFR. */
static void sweep(const double *x, const double *w, size_t n, const char *what) {
  size_t i;
  int r;
  for (i = 0; i < lowp_format_count(); i++) {
    const lowp_format_t *f = lowp_format_at(i);
    for (r = 0; r < LOWP_RND_COUNT; r++) {
      double y1, y2;
      char b1[64], b2[64];
      lowp_exact_dot(&y1, x, 1, w, 1, n, f, NULL, (lowp_rounding_t)r);
      lowp_exact_dot_mpfr(&y2, x, w, n, f, NULL, (lowp_rounding_t)r);
      lowp_test_check(same(y1, y2), "sweep %s n=%zu %s %s: fast %s mpfr %s", what, n,
                      f->name, lowp_rounding_name((lowp_rounding_t)r),
                      lowp_test_hex(y1, b1, sizeof b1), lowp_test_hex(y2, b2, sizeof b2));
    }
  }
}

/* add2/mul2 against the MPFR dot of one or two terms, every format, mode */
static void check_ops(double a, double b) {
  size_t i;
  int r;
  double one = 1.0, t[2] = {a, b};
  for (i = 0; i < lowp_format_count(); i++) {
    const lowp_format_t *f = lowp_format_at(i);
    for (r = 0; r < LOWP_RND_COUNT; r++) {
      double y1, y2;
      lowp_exact_add2(&y1, a, b, f, NULL, (lowp_rounding_t)r, 0);
      lowp_exact_sum_mpfr(&y2, t, 2, f, NULL, (lowp_rounding_t)r);
      lowp_test_check(same(y1, y2), "add2(%a, %a) %s %s: %a vs %a", a, b, f->name,
                      lowp_rounding_name((lowp_rounding_t)r), y1, y2);
      lowp_exact_mul2(&y1, a, b, f, NULL, (lowp_rounding_t)r, 0);
      lowp_exact_dot_mpfr(&y2, &a, &b, 1, f, NULL, (lowp_rounding_t)r);
      lowp_test_check(same(y1, y2), "mul2(%a, %a) %s %s: %a vs %a", a, b, f->name,
                      lowp_rounding_name((lowp_rounding_t)r), y1, y2);
      (void)one;
    }
  }
}

int main(void) {
  uint64_t seed;
  size_t i;
  static double x[4096], w[4096];
  lowp_test_start("texact_dot");
  seed = lowp_test_seed();

  /* special values: IEEE 754 7.2 (inf * 0 and inf - inf are invalid) */
  {
    double a[] = {INFINITY, 1.0}, b[] = {0.0, 1.0}, c[] = {INFINITY, INFINITY};
    double d[] = {1.0, -1.0}, e[] = {NAN, 0.0};
    check_dot(a, b, 2, NAN, "inf * 0");
    check_dot(c, d, 2, NAN, "inf*1 + inf*(-1)");
    check_dot(c, c, 2, INFINITY, "inf*inf + inf*inf");
    check_dot(e, b, 2, NAN, "NaN * 0");
    check_dot(b, d, 2, -1.0, "0*1 + 1*(-1)");
  }
  /* hand cases: products beyond binary64 range that cancel; subnormal
     products (2^-1074 squared = 2^-2148) */
  {
    double a[] = {0x1p1000, 0x1p1000, 1.0}, b[] = {0x1p1000, -0x1p1000, 3.0};
    double s[] = {0x1p-1074, 1.0}, t[] = {0x1p-1074, 0x1p-1074};
    double u[] = {0x1p-1074}, v[] = {0x1p-1074};
    check_dot(a, b, 3, 3.0, "2^2000 - 2^2000 + 3");
    check_dot(s, t, 2, 0x1p-1074, "2^-2148 + 2^-1074 (RN: 2^-1074)");
    check_dot(u, v, 1, 0.0, "2^-2148 rounds to +0");
    check_dot(a, b, 2, 0.0, "exact zero from nonzero products: +0");
  }
  /* property: dot(x, ones) == sum(x) on cancel data with a known sum */
  {
    double want, y;
    for (i = 0; i < 1000; i++) w[i] = 1.0;
    lowp_dist_cancel(x, 1000, &LOWP_FMT_FP32, seed, 0, &want);
    lowp_exact_dot(&y, x, 1, w, 1, 1000, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    lowp_test_check(y == want, "cancel dot: %a vs %a", y, want);
    /* stride: every other element */
    lowp_exact_dot(&y, x, 2, w, 0, 500, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    {
      double xs[500], y2;
      for (i = 0; i < 500; i++) xs[i] = x[2 * i];
      lowp_exact_sum(&y2, xs, 500, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
      lowp_test_check(same(y, y2), "strided dot %a vs sum %a", y, y2);
    }
  }
  /* two-operand operations: midpoints and directed modes (double rounding) */
  check_ops(1.0, 0x1p-24);               /* fp32 midpoint exactly */
  check_ops(1.0, 0x1p-24 + 0x1p-60);     /* just above the fp32 midpoint */
  check_ops(1.0 + 0x1p-23, -0x1p-60);    /* directed modes see the tail */
  check_ops(0x1p1023, 0x1p1023);         /* overflow */
  check_ops(0x1.fffffffffffffp-1, 0x1.0000000000001p+0);
  check_ops(0x1p-1074, 0x1p-1074);
  check_ops(-0.0, 0.0);
  check_ops(3.0, -3.0);
  check_ops(INFINITY, 0.0);
  /* generic sweeps against MPFR */
  {
    lowp_dist_t d = {LOWP_DIST_SPREAD, 0, 0};
    lowp_dist_fill(x, 100, &d, &LOWP_FMT_FP64, seed, 1);
    lowp_dist_fill(w, 100, &d, &LOWP_FMT_FP64, seed, 2);
    sweep(x, w, 100, "spread fp64");
    for (i = 0; i < 100; i++) check_ops(x[i], w[i]);
    d.kind = LOWP_DIST_NORMAL;
    lowp_dist_fill(x, 4096, &d, &LOWP_FMT_FP16, seed, 3);
    lowp_dist_fill(w, 4096, &d, &LOWP_FMT_FP16, seed, 4);
    sweep(x, w, 4096, "normal fp16");
    lowp_dist_cancel_gemm(x, w, 1, 1, 777, &LOWP_FMT_BF16, seed);
    sweep(x, w, 777, "cancel bf16");
  }
  return lowp_test_end();
}
