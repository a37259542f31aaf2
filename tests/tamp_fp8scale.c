/* tamp_fp8scale -- FP8 scaling recipes against hand-derived scales and an independent rounding */

/*
 * The oracle ref_q() rounds to e4m3/e2m1 with nearbyint() on a power-of-two
 * grid and clamps to the published maxima (448, 6), sharing no code with
 * lib/format. Order: per-tensor formula cases (TE) -> MX cases (OCP MX v1.0
 * section 6.3) -> block layouts -> delayed scaling history (TE) ->
 * statistics -> random sweep vs the oracle -> bad input.
 * Run: ctest -R tamp_fp8scale
 */

#include "testutil.h"

#include "amp/fp8scale.h"
#include "rng/rng.h"
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

/* nearest-even to p bits, exponent >= emin, clamped to +-maxv */
static double ref_q(double x, int p, int emin, double maxv) {
  int e;
  double q, y;
  if (x == 0) return x;
  e = ilogb(x);
  if (e < emin) e = emin;
  q = ldexp(1.0, e - p + 1);
  y = nearbyint(x / q) * q;
  if (y > maxv) y = maxv;
  if (y < -maxv) y = -maxv;
  return y;
}
static double e4m3(double x) { return ref_q(x, 4, -6, 448.0); }
static double e2m1(double x) { return ref_q(x, 2, 0, 6.0); }

/* ----------------------------------------------------------- per tensor */

static void per_tensor(void) {
  double x[4] = {1.0, -0.5, 0.001, 0.3}, d[4], s;
  lowp_quant_stats_t st;
  int i, bad = 0;
  memset(&st, 0, sizeof st);
  /* amax 1: s = fp32(448 / 1) = 448; q = e4m3(x * 448); x ~ q / 448 */
  lowp_fp8_quantize_blocks(d, &s, x, 1, 4, 1, 4, &LOWP_FMT_E4M3, LOWP_SCALE_AMAX, 0, &st);
  lowp_test_check(s == 448.0, "per-tensor scale %g, want 448", s);
  for (i = 0; i < 4; i++) bad += d[i] != e4m3(x[i] * 448.0) / 448.0;
  lowp_test_check(!bad, "per-tensor values (%d wrong)", bad);
  lowp_test_check(st.saturated == 0 && st.flushed == 0 && st.n == 4 && st.nonzero == 4 && st.nblocks == 1,
                  "per-tensor stats: sat %zu flush %zu n %zu", st.saturated, st.flushed, st.n);
  /* margin 1 halves the scale (TE: amax maps to 2^-margin * max_fp8) */
  lowp_fp8_quantize_blocks(d, &s, x, 1, 4, 1, 4, &LOWP_FMT_E4M3, LOWP_SCALE_AMAX, 1, NULL);
  lowp_test_check(s == 224.0, "margin 1 scale %g, want 224", s);
  /* amax 3: s = fp32(448/3) = 0x1.2aaaaap+7 (Python:
     struct.unpack('f', struct.pack('f', 448/3))) */
  {
    double y[2] = {3.0, 1e-6};
    memset(&st, 0, sizeof st);
    lowp_fp8_quantize_blocks(d, &s, y, 1, 2, 1, 2, &LOWP_FMT_E4M3, LOWP_SCALE_AMAX, 0, &st);
    lowp_test_check(s == 0x1.2aaaaap+7, "scale for amax 3: %a", s);
    /* 1e-6 * 149.3 = 1.5e-4 < 2^-10 (half of e4m3's smallest subnormal
       2^-9): flushed */
    lowp_test_check(d[1] == 0 && st.flushed == 1, "1e-6 must flush: %g, flushed %zu", d[1], st.flushed);
    /* 3 * s = 448.0000076 rounds to 448: not saturated (not clamped) */
    lowp_test_check(st.saturated == 0 && d[0] == 448.0 / s, "amax element: %a sat %zu", d[0], st.saturated);
  }
  /* all zero: scale 1, zeros stay zeros */
  {
    double z[3] = {0, 0, 0};
    lowp_fp8_quantize_blocks(d, &s, z, 1, 3, 1, 3, &LOWP_FMT_E4M3, LOWP_SCALE_AMAX, 0, NULL);
    lowp_test_check(s == 1.0 && d[0] == 0 && d[2] == 0, "zero tensor: scale %g", s);
  }
}

/* ---------------------------------------------------------------- MX */

static void mx(void) {
  double x[32], d[32], s;
  lowp_quant_stats_t st;
  int i;
  /* amax = 1.9 * 2^3: shared_exp = floor(log2 15.2) - emax(e4m3) = 3 - 8 =
     -5, X = 2^-5; 15.2 / X = 486.4 > 448 + 16 -> clamped to 448: MX's
     saturation of the block maximum */
  for (i = 0; i < 32; i++) x[i] = 0.25 * (i + 1) / 32.0;
  x[7] = 1.9 * 8;
  memset(&st, 0, sizeof st);
  lowp_fp8_quantize_blocks(d, &s, x, 1, 32, 1, 32, &LOWP_FMT_E4M3, LOWP_SCALE_E8M0, 0, &st);
  lowp_test_check(s == 32.0, "MX 1/X = %g, want 2^5", s);
  lowp_test_check(d[7] == 448.0 / 32 && st.saturated == 1, "MX clamp: %g (want 14), saturated %zu", d[7], st.saturated);
  for (i = 0; i < 32; i++)
    if (i != 7 && d[i] != e4m3(x[i] * 32) / 32) break;
  lowp_test_check(i == 32, "MX element %d: %a vs %a", i, i < 32 ? d[i] : 0, i < 32 ? e4m3(x[i] * 32) / 32 : 0);
  /* amax = 1.5 * 2^3 = 12: 12 * 32 = 384 = 1.5 * 2^8 is exact, no clamp */
  x[7] = 12;
  memset(&st, 0, sizeof st);
  lowp_fp8_quantize_blocks(d, &s, x, 1, 32, 1, 32, &LOWP_FMT_E4M3, LOWP_SCALE_E8M0, 0, &st);
  lowp_test_check(d[7] == 12 && st.saturated == 0, "MX 12: %g sat %zu", d[7], st.saturated);
  /* MXFP4: emax(e2m1) = 2; amax 7 -> X = 2^(2-2) = 1, 7 -> clamp 6 */
  for (i = 0; i < 32; i++) x[i] = 0.1 * i;
  x[3] = 7;
  memset(&st, 0, sizeof st);
  lowp_fp8_quantize_blocks(d, &s, x, 1, 32, 1, 32, &LOWP_FMT_E2M1, LOWP_SCALE_E8M0, 0, &st);
  lowp_test_check(s == 1.0 && d[3] == 6.0 && st.saturated == 1, "MXFP4 amax 7: 1/X %g q %g sat %zu", s, d[3], st.saturated);
  for (i = 0; i < 32; i++)
    if (i != 3 && d[i] != e2m1(x[i])) break;
  lowp_test_check(i == 32, "MXFP4 element %d", i);
  /* E8M0 clamp: amax 2^-140 -> shared_exp would be -148, clamped to -127 */
  for (i = 0; i < 32; i++) x[i] = ldexp(1.0, -140);
  lowp_fp8_quantize_blocks(d, &s, x, 1, 32, 1, 32, &LOWP_FMT_E4M3, LOWP_SCALE_E8M0, 0, NULL);
  lowp_test_check(s == ldexp(1.0, 127), "E8M0 lower clamp: 1/X = %a", s);
}

/* ------------------------------------------------------- block layouts */

static void blocks(void) {
  /* a 4 x 6 matrix in 2 x 4 blocks: 2 x 2 blocks, the right ones 2 wide;
     each block's scale is 448 / its own amax */
  double x[24], d[24], s[4];
  int i, j, bad = 0;
  for (i = 0; i < 4; i++)
    for (j = 0; j < 6; j++) x[i * 6 + j] = (1 + i * 6 + j) * (j < 4 ? 1.0 : 100.0);
  lowp_fp8_quantize_blocks(d, s, x, 4, 6, 2, 4, &LOWP_FMT_E4M3, LOWP_SCALE_AMAX, 0, NULL);
  lowp_test_check(s[0] == (double)(float)(448.0 / 10) && s[1] == (double)(float)(448.0 / 1200) &&
                  s[2] == (double)(float)(448.0 / 22) && s[3] == (double)(float)(448.0 / 2400),
                  "block scales %g %g %g %g", s[0], s[1], s[2], s[3]);
  for (i = 0; i < 4; i++)
    for (j = 0; j < 6; j++) {
      double sc = s[(i / 2) * 2 + j / 4];
      bad += d[i * 6 + j] != e4m3(x[i * 6 + j] * sc) / sc;
    }
  lowp_test_check(!bad, "block values: %d wrong", bad);
}

/* ------------------------------------------------------ delayed scaling */

static void delayed(void) {
  lowp_fp8_delayed_t dl;
  double x[2], d[2], used;
  lowp_quant_stats_t st;
  lowp_test_check(lowp_fp8_delayed_init(&dl, 2, 1, 0) == LOWP_OK, "delayed init");
  /* step 1: fresh scale 1 */
  x[0] = 1; x[1] = 0.5;
  lowp_fp8_delayed_quantize(&dl, d, x, 2, &LOWP_FMT_E4M3, &used, NULL);
  lowp_test_check(used == 1.0, "first scale %g, want 1", used);
  /* step 2: scale from history [1] = 448 */
  lowp_fp8_delayed_quantize(&dl, d, x, 2, &LOWP_FMT_E4M3, &used, NULL);
  lowp_test_check(used == 448.0, "second scale %g", used);
  /* step 3: amax jumps to 10 but the scale is still 448: 10 * 448 saturates */
  x[0] = 10;
  memset(&st, 0, sizeof st);
  lowp_fp8_delayed_quantize(&dl, d, x, 2, &LOWP_FMT_E4M3, &used, &st);
  lowp_test_check(used == 448.0 && st.saturated == 1 && d[0] == 1.0, "spike: scale %g sat %zu deq %g", used,
                  st.saturated, d[0]);
  /* step 4: history [10, 1], max 10 -> fp32(44.8) */
  x[0] = 1;
  lowp_fp8_delayed_quantize(&dl, d, x, 2, &LOWP_FMT_E4M3, &used, NULL);
  lowp_test_check(used == (double)(float)44.8, "after spike %a", used);
  /* step 5: history [1, 10] -> still 44.8; step 6: [1, 1] -> 448 */
  lowp_fp8_delayed_quantize(&dl, d, x, 2, &LOWP_FMT_E4M3, &used, NULL);
  lowp_test_check(used == (double)(float)44.8, "spike still in history %a", used);
  lowp_fp8_delayed_quantize(&dl, d, x, 2, &LOWP_FMT_E4M3, &used, NULL);
  lowp_test_check(used == 448.0, "spike left the history: %g", used);
  /* most_recent: only the last amax counts */
  lowp_fp8_delayed_init(&dl, 4, 0, 0);
  x[0] = 10;
  lowp_fp8_delayed_quantize(&dl, d, x, 2, &LOWP_FMT_E4M3, &used, NULL);
  x[0] = 1;
  lowp_fp8_delayed_quantize(&dl, d, x, 2, &LOWP_FMT_E4M3, &used, NULL);
  lowp_fp8_delayed_quantize(&dl, d, x, 2, &LOWP_FMT_E4M3, &used, NULL);
  lowp_test_check(used == 448.0, "most_recent: %g", used);
}

/* ------------------------------------------------ sweep and statistics */

static void sweep(void) {
  lowp_rng_t r;
  double x[256], d[256], s[8];
  int t, i;
  lowp_rng_init(&r, lowp_test_seed(), 3);
  for (t = 0; t < 300; t++) {
    lowp_quant_stats_t st;
    double se = 0, sx = 0, sr = 0;
    size_t nz = 0;
    int bad = 0;
    for (i = 0; i < 256; i++) x[i] = lowp_rng_normal(&r) * pow(10.0, 6 * lowp_rng_uniform(&r) - 3);
    memset(&st, 0, sizeof st);
    lowp_fp8_quantize_blocks(d, s, x, 8, 32, 1, 32, &LOWP_FMT_E4M3, LOWP_SCALE_AMAX, 0, &st);
    for (i = 0; i < 256; i++) {
      double sc = s[i / 32], want = e4m3(x[i] * sc) / sc;
      bad += d[i] != want;
      se += (d[i] - x[i]) * (d[i] - x[i]);
      sx += x[i] * x[i];
      if (x[i] != 0) { nz++; sr += fabs(d[i] - x[i]) / fabs(x[i]); }
    }
    if (!lowp_test_check(!bad && fabs(lowp_quant_rel_err(&st) - sqrt(se / sx)) <= 1e-12 * sqrt(se / sx) &&
                         fabs(lowp_quant_mean_rel_err(&st) - sr / (double)nz) <= 1e-12 * sr,
                         "sweep %d: %d wrong values, rel err %g vs %g", t, bad, lowp_quant_rel_err(&st),
                         sqrt(se / sx)))
      break;
  }
}

static void bad_input(void) {
  double x[2] = {1, 2}, d[2];
  lowp_fp8_delayed_t dl;
  lowp_test_check(lowp_fp8_quantize_blocks(d, NULL, x, 1, 2, 0, 2, &LOWP_FMT_E4M3, LOWP_SCALE_AMAX, 0, NULL) == LOWP_EINVAL, "zero block");
  lowp_test_check(lowp_fp8_quantize_blocks(d, NULL, NULL, 1, 2, 1, 2, &LOWP_FMT_E4M3, LOWP_SCALE_AMAX, 0, NULL) == LOWP_EINVAL, "NULL x");
  lowp_test_check(lowp_fp8_quantize_blocks(d, NULL, x, 1, 2, 1, 2, &LOWP_FMT_E4M3, LOWP_SCALE_AMAX, 99, NULL) == LOWP_EINVAL, "margin 99");
  lowp_test_check(lowp_fp8_quantize_blocks(d, NULL, x, 1, 2, 1, 2, NULL, LOWP_SCALE_AMAX, 0, NULL) == LOWP_EFORMAT, "NULL format");
  lowp_test_check(lowp_fp8_delayed_init(&dl, 0, 1, 0) == LOWP_EINVAL, "history 0");
  lowp_test_check(lowp_fp8_delayed_init(&dl, 5000, 1, 0) == LOWP_EINVAL, "history 5000");
}

int main(void) {
  lowp_test_start("tamp_fp8scale");
  per_tensor();
  mx();
  blocks();
  delayed();
  sweep();
  bad_input();
  return lowp_test_end();
}
