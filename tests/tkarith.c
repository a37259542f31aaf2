/* tkarith -- kernels/common/karith.h (the GPU kernels' shared arithmetic) against independent oracles */

/*
 * Label unit. Run: ctest --test-dir build -R tkarith
 *   1. lowp_ka_round against lib/format's lowp_round_f32 (rne) for fp16,
 *      bf16, tf32 and e5m2: every fp32 whose low 12 bits are one of the
 *      cases around a rounding boundary, for all 2^20 high parts, plus
 *      random patterns;
 *   2. lowp_ka_expf / lowp_ka_logf against binary64 exp / log (libm,
 *      correctly rounded to well below an fp32 ulp): the error in fp32 ulps
 *      over a sweep, against a named bound;
 *   3. Welford add/merge against the two-pass mean and variance in binary64;
 *   4. lowp_ka_scaler_update and lowp_ka_unscale against lib/amp/scaler
 *      (policy pytorch), over random event sequences.
 */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "amp/scaler.h"
#include "format/format.h"
#include "common/karith.h"
#include "rng/rng.h"
#include "common/rowk.h"
#include "status.h"
#include "testutil.h"

/* ------------------------------------------------------------- rounding */

static void check_round(const lowp_format_t *f) {
  static const uint32_t low[] = {0x000, 0x001, 0x3ff, 0x400, 0x401, 0x7ff,
                                 0x800, 0x801, 0xbff, 0xc00, 0xfff};
  lowp_ka_fmt_t k;
  lowp_rng_t r;
  uint32_t hi;
  size_t j;
  long bad = 0, n = 0;
  if (!lowp_test_check(lowp_rowk_fmt(&k, f) == LOWP_OK, "%s is a karith format", f->name)) return;
  lowp_rng_init(&r, lowp_test_seed(), 11);
  for (hi = 0; hi < (1u << 20); hi++) {
    for (j = 0; j < sizeof low / sizeof low[0] + 1; j++) {
      uint32_t u = (hi << 12) | (j < sizeof low / sizeof low[0] ? low[j] : (uint32_t)(lowp_rng_next(&r) & 0xfff));
      float x, y;
      double want;
      memcpy(&x, &u, sizeof x);
      y = lowp_ka_round(x, k);
      lowp_round_f32(&want, x, f, NULL, LOWP_RND_NE);
      n++;
      if (isnan(want) ? !isnan(y) : (memcmp(&(float){(float)want}, &y, sizeof y) != 0)) {
        if (bad++ < 5)
          printf("  %s: x = %a [%08x]: karith %a, lib/format %a\n", f->name, (double)x, u,
                 (double)y, want);
      }
    }
  }
  lowp_test_check(bad == 0, "%s: lowp_ka_round = lowp_round_f32 (rne) on %ld inputs (%ld differ)",
                  f->name, n, bad);
}

/* -------------------------------------------------------------- exp, log */

/* error of y against the exact value v in ulps of fp32 at v */
static double ulps(float y, double v) {
  int e;
  if (v == 0) return y == 0 ? 0 : INFINITY;
  frexp(v, &e);
  if (e - 1 < -126) e = -125; /* subnormal ulp 2^-149 */
  return fabs((double)y - v) / ldexp(1.0, e - 24);
}

/* Bound set by the author from the measured maximum of this sweep
   (Cody-Waite reduction plus a degree-7 Horner polynomial in plain fp32
   operations, each rounding up to 1/2 ulp): a change in the polynomial or
   the reduction that loses accuracy shows here. */
#define KA_EXP_MAX_ULPS 1.5 /* measured 1.137 */
#define KA_LOG_MAX_ULPS 1.0 /* measured 0.750 */

static void check_exp_log(void) {
  double worst_e = 0, worst_l = 0;
  float we = 0, wl = 0;
  long i;
  for (i = -1040000; i <= 887000; i += 7) { /* x in [-104, 88.7] */
    float x = (float)i / 10000.0f, y = lowp_ka_expf(x);
    double u = ulps(y, exp((double)x));
    if (exp((double)x) < 0x1p-126) continue; /* subnormal results: absolute, below */
    if (u > worst_e) { worst_e = u; we = x; }
  }
  printf("  lowp_ka_expf: max %.3f ulp (at x = %a), bound %.1f\n", worst_e, (double)we, KA_EXP_MAX_ULPS);
  lowp_test_check(worst_e <= KA_EXP_MAX_ULPS, "exp within %.1f ulp (%.3f)", KA_EXP_MAX_ULPS, worst_e);
  for (i = 0; i < 2000000; i++) { /* x = 2^(-149 .. 128) spread by a multiplicative step */
    float x = (float)ldexp(1.0 + (double)(i % 1000) / 1000.0, (int)(i / 1000) % 277 - 149);
    float y = lowp_ka_logf(x);
    double v = log((double)x), u = ulps(y, v);
    if (x == 1.0f) continue;
    if (u > worst_l) { worst_l = u; wl = x; }
  }
  printf("  lowp_ka_logf: max %.3f ulp (at x = %a), bound %.1f\n", worst_l, (double)wl, KA_LOG_MAX_ULPS);
  lowp_test_check(worst_l <= KA_LOG_MAX_ULPS, "log within %.1f ulp (%.3f)", KA_LOG_MAX_ULPS, worst_l);
  /* specials */
  lowp_test_check(lowp_ka_expf(0.0f) == 1.0f && lowp_ka_logf(1.0f) == 0.0f, "exp(0) = 1, log(1) = 0");
  lowp_test_check(isinf(lowp_ka_expf(89.0f)) && lowp_ka_expf(-105.0f) == 0.0f &&
                      isnan(lowp_ka_expf(NAN)),
                  "exp overflows to inf, underflows to 0, keeps NaN");
  lowp_test_check(isinf(lowp_ka_logf(0.0f)) && lowp_ka_logf(0.0f) < 0 && isnan(lowp_ka_logf(-1.0f)) &&
                      isinf(lowp_ka_logf(INFINITY)) && fabs(lowp_ka_logf(0x1p-149f) + 103.2789) < 1e-3,
                  "log(0) = -inf, log(-1) = NaN, log(inf) = inf, log of the least subnormal");
}

/* ---------------------------------------------------------------- Welford */

static void check_welford(void) {
  lowp_rng_t r;
  int t;
  lowp_rng_init(&r, lowp_test_seed(), 12);
  for (t = 0; t < 50; t++) {
    enum { N = 300 };
    float x[N];
    double mean = 0, m2 = 0;
    lowp_ka_welford_t a = {0, 0, 0}, b = {0, 0, 0}, c;
    int i, split = (int)(lowp_rng_next(&r) % N);
    double off = (double)(lowp_rng_next(&r) % 1000);
    for (i = 0; i < N; i++) x[i] = (float)(off + lowp_rng_normal(&r));
    for (i = 0; i < N; i++) mean += x[i];
    mean /= N;
    for (i = 0; i < N; i++) m2 += (x[i] - mean) * (x[i] - mean);
    for (i = 0; i < split; i++) a = lowp_ka_welford_add(a, x[i]);
    for (i = split; i < N; i++) b = lowp_ka_welford_add(b, x[i]);
    c = lowp_ka_welford_merge(a, b);
    /* Welford's update is backward stable: relative errors of order N u
       in M2 relative to (mean^2 N + M2) (Chan, Golub & LeVeque 1983); the
       test takes 4 N u of that scale, and N u of |mean| for the mean */
    lowp_test_check(c.n == N && fabs(c.mean - mean) <= N * 0x1p-24 * fabs(mean) + 1e-6 &&
                        fabs(c.m2 - m2) <= 4 * N * 0x1p-24 * (m2 + N * mean * mean * 0x1p-12),
                    "Welford split at %d (offset %g): mean %.9g vs %.9g, M2 %.9g vs %.9g", split,
                    off, (double)c.mean, mean, (double)c.m2, m2);
  }
  {
    lowp_ka_welford_t e = {0, 0, 0}, a = {3, 1.5f, 2.0f}, m = lowp_ka_welford_merge(a, e),
                      m2 = lowp_ka_welford_merge(e, a);
    lowp_test_check(!memcmp(&m, &a, sizeof a) && !memcmp(&m2, &a, sizeof a),
                    "merging an empty state changes nothing");
  }
}

/* ----------------------------------------------------------------- scaler */

static void check_scaler(void) {
  lowp_rng_t r;
  int t;
  lowp_rng_init(&r, lowp_test_seed(), 13);
  for (t = 0; t < 200; t++) {
    lowp_scaler_t s;
    float scale;
    int32_t tracker = 0;
    long long interval = 1 + (long long)(lowp_rng_next(&r) % 5);
    double growth = t % 7 == 0 ? 3.0 : 2.0, backoff = t % 5 == 0 ? 0.25 : 0.5;
    double init = t % 11 == 0 ? 0x1p126 : 65536.0;
    int step, ok = 1;
    lowp_scaler_init(&s, LOWP_SCALER_PYTORCH, init, growth, backoff, interval);
    scale = (float)s.scale;
    for (step = 0; step < 60 && ok; step++) {
      int inf = (lowp_rng_next(&r) % 4) == 0;
      float g[4] = {1.5f, -3.0f, inf ? INFINITY : 7.0f, 1e30f}, h[4];
      int f1, f2 = 0, i;
      memcpy(h, g, sizeof g);
      lowp_scaler_unscale_f32(&s, g, 4, &f1);
      for (i = 0; i < 4; i++) f2 |= lowp_ka_unscale(&h[i], (float)lowp_scaler_inv_scale(&s));
      ok = f1 == f2 && !memcmp(g, h, sizeof g);
      lowp_scaler_update(&s, inf, NULL);
      lowp_ka_scaler_update(&scale, &tracker, inf, growth, backoff, (int32_t)interval);
      ok = ok && (double)scale == s.scale && tracker == s.tracker;
    }
    lowp_test_check(ok, "scaler run %d (interval %lld): karith = lib/amp after %d steps", t,
                    interval, step);
  }
}

int main(void) {
  lowp_test_start("tkarith");
  check_round(&LOWP_FMT_FP16);
  check_round(&LOWP_FMT_BF16);
  check_round(&LOWP_FMT_TF32);
  check_round(&LOWP_FMT_E5M2);
  check_round(&LOWP_FMT_FP32);
  {
    lowp_ka_fmt_t k;
    lowp_test_check(lowp_rowk_fmt(&k, &LOWP_FMT_E4M3) == LOWP_EUNSUPPORTED &&
                        lowp_rowk_fmt(&k, &LOWP_FMT_FP64) == LOWP_EUNSUPPORTED,
                    "formats without IEEE infinities or wider than fp32 are refused");
  }
  check_exp_log();
  check_welford();
  check_scaler();
  return lowp_test_end();
}
