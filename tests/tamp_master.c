/* tamp_master -- weight-update helpers against independent rounding and known stagnation values */

/*
 * The oracle ref_round() below rounds with nearbyint() on a power-of-two
 * grid (the C library's round-to-nearest-even), sharing no code with
 * lib/format. Order: llm.c SR bit rule (exhaustive over thresholds) ->
 * round-to-nearest and master updates vs the oracle -> exact SR
 * statistics -> stagnation values from the literature -> bad input.
 * Run: ctest -R tamp_master
 */

#include "testutil.h"

#include "amp/master.h"
#include "rng/rng.h"
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

/* Round x to p significant bits, exponent >= emin (subnormals), nearest even. */
static double ref_round(double x, int p, int emin) {
  int e;
  double q;
  if (x == 0 || !isfinite(x)) return x;
  e = ilogb(x);
  if (e < emin) e = emin;
  q = ldexp(1.0, e - p + 1);
  return nearbyint(x / q) * q;
}

static float f_of(uint32_t b) { float f; memcpy(&f, &b, sizeof f); return f; }
static uint32_t b_of(float f) { uint32_t b; memcpy(&b, &f, sizeof b); return b; }

/* ---------------------------------------------------------- llm.c SR */

static void sr_llmc(void) {
  lowp_rng_t r;
  int t;
  lowp_rng_init(&r, lowp_test_seed(), 1);
  /* the rule, bit for bit: low16 > (rand & 0xFFFF) -> away from zero (the
     next bf16 in magnitude), else truncate; llmc/cuda_utils.cuh */
  for (t = 0; t < 200000; t++) {
    uint32_t xb = (uint32_t)lowp_rng_next(&r), rnd = (uint32_t)lowp_rng_next(&r), want;
    float x, y;
    xb &= 0x7F7EFFFFu; /* finite, below bf16's largest binade's top */
    if (lowp_rng_next(&r) & 1) xb |= 0x80000000u;
    x = f_of(xb);
    want = ((xb & 0xFFFFu) > (rnd & 0xFFFFu)) ? (xb & 0xFFFF0000u) + 0x10000u : (xb & 0xFFFF0000u);
    y = lowp_sr_bf16_llmc(x, rnd);
    if (!lowp_test_check(b_of(y) == want, "sr_llmc(%a, %08x) = %08x, want %08x", (double)x, rnd,
                         b_of(y), want))
      break;
  }
  /* unbiased for its fp32 input: over all 2^16 thresholds, exactly low16
     of them round up, so the mean is x itself */
  {
    static const uint32_t xs[] = {0x3F800001u, 0x3F80FFFFu, 0x3F808000u, 0xBF812345u, 0x00012345u};
    size_t i;
    for (i = 0; i < sizeof xs / sizeof xs[0]; i++) {
      double sum = 0;
      uint32_t thr;
      float x = f_of(xs[i]);
      for (thr = 0; thr < 65536u; thr++) sum += (double)lowp_sr_bf16_llmc(x, thr);
      lowp_test_check(sum / 65536.0 == (double)x, "sr_llmc mean over thresholds of %a: %a", (double)x,
                      sum / 65536.0);
    }
  }
  /* bf16 values are left alone whatever the random bits */
  lowp_test_check(lowp_sr_bf16_llmc(1.0f, 0) == 1.0f && lowp_sr_bf16_llmc(-3.5f, 0xFFFFu) == -3.5f,
                  "exact bf16 values must not move");
}

/* ------------------------------------------------- RN and master updates */

static void rn_master(void) {
  lowp_rng_t r;
  int t;
  lowp_rng_init(&r, lowp_test_seed(), 2);
  for (t = 0; t < 100000; t++) {
    float w16 = (float)ref_round(ldexp(lowp_rng_uniform(&r) + 0.5, (int)(lowp_rng_next(&r) % 20) - 10), 11, -14);
    float wb = (float)ref_round((double)w16 * 3.0, 8, -126);
    float d = (float)(ldexp(lowp_rng_normal(&r), -(int)(lowp_rng_next(&r) % 30)));
    float a = w16, b = wb, m = wb, mc = 0;
    double want16 = ref_round((double)(w16 + d), 11, -14), wantb = ref_round((double)(wb + d), 8, -126);
    lowp_mw_add_rn(&a, &d, 1, &LOWP_FMT_FP16);
    lowp_mw_add_rn(&b, &d, 1, &LOWP_FMT_BF16);
    lowp_mw_add_master(&m, &mc, &d, 1, &LOWP_FMT_BF16);
    if (!lowp_test_check((double)a == want16 && (double)b == wantb && m == wb + d &&
                         (double)mc == ref_round((double)(wb + d), 8, -126),
                         "w16 %a wb %a d %a: rn16 %a (%a) rnb %a (%a) master %a copy %a", (double)w16,
                         (double)wb, (double)d, (double)a, want16, (double)b, wantb, (double)m, (double)mc))
      break;
  }
}

/* ------------------------------------------------------ exact SR */

static void sr_exact(void) {
  /* w = 1, d = 2^-10 (an eighth of bf16's ulp 2^-7 at 1):
     P(up) = 2^-10 / 2^-7 = 1/8; over 80000 indices the count of ups is
     Binomial(80000, 1/8): mean 10000, sd 93.5; accept +-6 sd */
  size_t n = 80000, i, up = 0;
  float d = 0x1p-10f;
  for (i = 0; i < n; i++) {
    float w = 1.0f;
    lowp_mw_add_sr_exact(&w, &d, 1, &LOWP_FMT_BF16, 32, lowp_test_seed(), i);
    lowp_test_check(w == 1.0f || w == 1.0f + 0x1p-7f, "sr_exact result %a not a neighbour", (double)w);
    up += w != 1.0f;
  }
  lowp_test_check(fabs((double)up - 10000.0) < 6 * 93.5, "sr_exact: %zu ups of %zu, expected 10000 +- 561", up, n);
  /* an update below half an fp32 ulp still moves it (llm.c's cannot):
     d = 2^-30, P = 2^-23 per try; with the same seed, deterministic */
  {
    float w1 = 1.0f, w2 = 1.0f, dd = 0x1p-30f;
    lowp_mw_add_sr_llmc(&w1, &dd, 1, 5, 0);
    lowp_test_check(w1 == 1.0f, "llm.c SR of 1 + 2^-30 must stay 1 (fp32 sum is 1)");
    lowp_mw_add_sr_exact(&w2, &dd, 1, &LOWP_FMT_BF16, 32, 5, 0);
    lowp_test_check(w2 == 1.0f || w2 == 1.0f + 0x1p-7f, "exact SR neighbour");
  }
}

/* ----------------------------------------------------- stagnation values */

static void stagnation(void) {
  float w16 = 1.0f, wb = 1.0f, m = 1.0f, d = 1e-7f;
  int k;
  /* document 004's case: 1e-7 on a weight of 1 is lost in fp16 and bf16;
     in fp32 each update is 1e-7 in (2^-24, 3 * 2^-24), so it becomes 2^-23 */
  for (k = 0; k < 1000; k++) {
    lowp_mw_add_rn(&w16, &d, 1, &LOWP_FMT_FP16);
    lowp_mw_add_rn(&wb, &d, 1, &LOWP_FMT_BF16);
    lowp_mw_add_master(&m, NULL, &d, 1, &LOWP_FMT_FP16);
  }
  lowp_test_check(w16 == 1.0f && wb == 1.0f, "1e-7 updates moved fp16/bf16: %a %a", (double)w16, (double)wb);
  lowp_test_check((double)m == 1.0 + 1000 * 0x1p-23, "fp32 master %a, want 1 + 1000 * 2^-23", (double)m);

  /* harmonic series stagnation (Higham & Pranesh, "Simulating low precision
     floating-point arithmetic", SIAM J. Sci. Comput. 41(5), 2019, section
     on the harmonic series: fp16 stalls at 7.0859375 after 513 terms; bf16
     at 5.0625 after 65; fp32 at 15.403683 from n = 2^21) */
  {
    float s16 = 0, sb = 0, s32 = 0;
    long k16 = 0, kb = 0, k32 = 0, kk;
    for (kk = 1; kk <= (1L << 21) + 10; kk++) {
      float t = 1.0f / (float)kk, o16 = s16, ob = sb, o32 = s32;
      lowp_mw_add_rn(&s16, &t, 1, &LOWP_FMT_FP16);
      lowp_mw_add_rn(&sb, &t, 1, &LOWP_FMT_BF16);
      s32 = s32 + t;
      if (!k16 && s16 == o16) k16 = kk;
      if (!kb && sb == ob) kb = kk;
      if (!k32 && s32 == o32) k32 = kk;
    }
    lowp_test_check(k16 == 513 && s16 == 7.0859375f, "fp16 harmonic: stall at %ld, sum %.9g", k16, (double)s16);
    lowp_test_check(kb == 65 && sb == 5.0625f, "bf16 harmonic: stall at %ld, sum %.9g", kb, (double)sb);
    lowp_test_check(k32 == 2097152L && fabs((double)s32 - 15.403683) < 5e-7, "fp32 harmonic: stall at %ld, sum %.9g",
                    k32, (double)s32);
  }
}

/* ------------------------------------------------------------ bad input */

static void bad_input(void) {
  float w = 1, d = 1;
  lowp_test_check(lowp_mw_add_rn(NULL, &d, 1, &LOWP_FMT_FP16) == LOWP_EINVAL, "NULL w");
  lowp_test_check(lowp_mw_add_rn(&w, &d, 1, &LOWP_FMT_FP64) == LOWP_EFORMAT, "fp64 is not an fp32 subset");
  lowp_test_check(lowp_mw_add_master(&w, NULL, &d, 1, NULL) == LOWP_EFORMAT, "NULL format");
  lowp_test_check(lowp_mw_add_sr_exact(&w, &d, 1, &LOWP_FMT_BF16, 40, 0, 0) == LOWP_EINVAL, "sr_bits 40");
  lowp_test_check(lowp_mw_add_rn(NULL, NULL, 0, &LOWP_FMT_FP16) == LOWP_OK, "n = 0 is fine");
}

int main(void) {
  lowp_test_start("tamp_master");
  sr_llmc();
  rn_master();
  sr_exact();
  stagnation();
  bad_input();
  return lowp_test_end();
}
