/* tdist -- tests of the seeded input generators */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact/exact.h"
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

#define NS 100000

static int in_format(double v, const lowp_format_t *f) {
  double y;
  if (isnan(v)) return 1;
  lowp_round_f64(&y, v, f, NULL, LOWP_RND_NE);
  return y == v;
}

int main(void) {
  static double x[NS], y[NS];
  uint64_t seed;
  size_t i, fi;
  lowp_dist_t d;
  lowp_test_start("tdist");
  seed = lowp_test_seed();

  /* parsing: names, ranges, and bad parameters */
  lowp_test_check(lowp_dist_parse(&d, "normal") == LOWP_OK && d.kind == LOWP_DIST_NORMAL, "normal");
  lowp_test_check(lowp_dist_parse(&d, "loguniform:1e-3:1e3") == LOWP_OK && d.lo == 1e-3 &&
                  d.hi == 1e3, "loguniform range");
  lowp_test_check(lowp_dist_parse(&d, "loguniform:nan:1") == LOWP_EINVAL, "NaN lo");
  lowp_test_check(lowp_dist_parse(&d, "loguniform:1:nan") == LOWP_EINVAL, "NaN hi");
  lowp_test_check(lowp_dist_parse(&d, "loguniform:1:inf") == LOWP_EINVAL, "inf hi");
  lowp_test_check(lowp_dist_parse(&d, "loguniform:-1:2") == LOWP_EINVAL, "negative lo");
  lowp_test_check(lowp_dist_parse(&d, "loguniform:3:2") == LOWP_EINVAL, "reversed");
  lowp_test_check(lowp_dist_parse(&d, "loguniform:1") == LOWP_EPARSE, "one bound");
  lowp_test_check(lowp_dist_parse(&d, "gauss") == LOWP_EPARSE, "unknown name");
  d.kind = LOWP_DIST_LOGUNIFORM;
  d.lo = NAN;
  d.hi = 1;
  lowp_test_check(lowp_dist_fill(x, 4, &d, &LOWP_FMT_FP32, seed, 0) == LOWP_EINVAL,
                  "fill refuses NaN parameters");

  /* properties, every format: values of the format, same seed same bytes,
     another seed other bytes */
  for (fi = 0; fi < lowp_format_count(); fi++) {
    const lowp_format_t *f = lowp_format_at(fi);
    static const char *names[] = {"uniform01", "uniform11", "normal", "loguniform:1e-2:1e2",
                                  "spread", "cancel"};
    size_t k;
    for (k = 0; k < sizeof names / sizeof names[0]; k++) {
      size_t bad = 0;
      lowp_dist_parse(&d, names[k]);
      if (d.kind == LOWP_DIST_CANCEL && (!f->has_sign || !f->has_zero)) continue;
      lowp_dist_fill(x, 2000, &d, f, seed, 3);
      lowp_dist_fill(y, 2000, &d, f, seed, 3);
      lowp_test_check(!memcmp(x, y, 2000 * sizeof x[0]), "%s %s: not deterministic", names[k], f->name);
      for (i = 0; i < 2000; i++) bad += !in_format(x[i], f);
      lowp_test_check(bad == 0, "%s %s: %zu values not in the format", names[k], f->name, bad);
      lowp_dist_fill(y, 2000, &d, f, seed + 1, 3);
      if (f->precision > 3)
        lowp_test_check(memcmp(x, y, 2000 * sizeof x[0]) != 0, "%s %s: seed ignored", names[k], f->name);
    }
  }
  /* ranges and moments (binary64, so no rounding effects): tolerances are
     5 standard errors of the estimate for NS = 1e5 draws */
  {
    double s = 0, s2 = 0, mn = 1e300, mx = -1e300;
    d.kind = LOWP_DIST_NORMAL;
    lowp_dist_fill(x, NS, &d, &LOWP_FMT_FP64, seed, 4);
    for (i = 0; i < NS; i++) { s += x[i]; s2 += x[i] * x[i]; }
    lowp_test_check(fabs(s / NS) < 5 / sqrt(NS), "normal mean %g", s / NS);
    lowp_test_check(fabs(s2 / NS - 1) < 5 * sqrt(2.0 / NS), "normal variance %g", s2 / NS);
    d.kind = LOWP_DIST_UNIFORM11;
    lowp_dist_fill(x, NS, &d, &LOWP_FMT_FP64, seed, 5);
    for (i = 0; i < NS; i++) { if (x[i] < mn) mn = x[i]; if (x[i] > mx) mx = x[i]; }
    lowp_test_check(mn >= -1 && mx < 1 && mn < -0.999 && mx > 0.999, "uniform11 range %g %g", mn, mx);
    lowp_dist_parse(&d, "loguniform:1e-8:1e8");
    lowp_dist_fill(x, NS, &d, &LOWP_FMT_FP64, seed, 6);
    s = 0;
    for (i = 0; i < NS; i++) {
      lowp_test_check(x[i] >= 1e-8 * (1 - 1e-15) && x[i] <= 1e8 * (1 + 1e-15), "loguniform %g", x[i]);
      s += log10(x[i]);
    }
    lowp_test_check(fabs(s / NS) < 5 * 16 / sqrt(12.0 * NS), "log-uniform: mean of log10 %g", s / NS);
  }
  /* spread reaches subnormals and the top binade of fp16 */
  {
    size_t sub = 0, top = 0;
    d.kind = LOWP_DIST_SPREAD;
    lowp_dist_fill(x, 4000, &d, &LOWP_FMT_FP16, seed, 7);
    for (i = 0; i < 4000; i++) {
      sub += fabs(x[i]) < 0x1p-14 && x[i] != 0;
      top += fabs(x[i]) >= 0x1p15;
    }
    lowp_test_check(sub > 100 && top > 50, "spread fp16: %zu subnormal, %zu top binade", sub, top);
  }
  /* cancel: the exact sum stated is the exact sum */
  for (fi = 0; fi < lowp_format_count(); fi++) {
    const lowp_format_t *f = lowp_format_at(fi);
    double want, got;
    if (!f->has_sign || !f->has_zero) continue;
    lowp_dist_cancel(x, 777, f, seed, 8, &want);
    lowp_exact_sum(&got, x, 777, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    lowp_test_check(got == want, "cancel %s: exact sum %a, stated %a", f->name, got, want);
  }
  /* cancel_gemm: paired products cancel, so each dot equals the dot over
     the unpaired (small) entries, which are the only small |a| */
  {
    enum { M = 3, K = 64, N2 = 2 };
    double a[M * K], b[K * N2], c[M * N2];
    size_t j, l;
    lowp_dist_cancel_gemm(a, b, M, N2, K, &LOWP_FMT_FP32, seed);
    lowp_exact_gemm(c, a, b, NULL, M, N2, K, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    for (i = 0; i < M; i++)
      for (j = 0; j < N2; j++) {
        double sm[K], bb[K], want, amax = 0;
        size_t ns = 0;
        for (l = 0; l < K; l++) if (fabs(a[i * K + l]) > amax) amax = fabs(a[i * K + l]);
        /* small terms lie about 2^(2p+4) below the large ones (dist.h) */
        for (l = 0; l < K; l++)
          if (fabs(a[i * K + l]) < amax * 0x1p-30) { sm[ns] = a[i * K + l]; bb[ns++] = b[l * N2 + j]; }
        lowp_exact_dot(&want, sm, 1, bb, 1, ns, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
        lowp_test_check(c[i * N2 + j] == want && ns >= K / 8, "cancel gemm C[%zu][%zu] %a vs %a (%zu small)",
                        i, j, c[i * N2 + j], want, ns);
        lowp_test_check(fabs(c[i * N2 + j]) < amax * 0x1p-20, "cancel gemm: the result is small");
      }
  }
  return lowp_test_end();
}
