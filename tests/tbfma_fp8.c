/* tbfma_fp8 -- the emulated fp8 mma.sync block: fp16 exponents for e4m3 subnormals, and why it cannot change F = 25 */

/*
 * Label unit. sm_90 and sm_100 run e4m3 mma.sync as F2FP (e4m3 -> fp16,
 * exact) and fp16 HMMAs (tests/tsass.c), so the multiplier sees an e4m3
 * subnormal (m 2^-9, m = 1..7) as a normal fp16 value with exponent
 * floor(log2 m) - 9, not clamped at e4m3's emin -6. lib/model/bfma.c does
 * so on the late-c datapath (FP8_MMA_SYNC). Checked here:
 *   1. that block equals the preset's fp16 block (h100 fp16: b 16, F 25, the
 *      same cut and rounding) on the same values given as fp16, on random
 *      blocks drawn from every e4m3 value (subnormals, zeros, both signs)
 *      and random c, both outputs;
 *   2. with F = 25 the clamp at -6 cannot change a result, and this run
 *      finds no block where it does: every product of two e4m3 values is a
 *      multiple of 2^-18, and a subnormal factor raises a product's exponent
 *      by at most 3 to at most 8 - 6 = 2, so the alignment quantum
 *      2^(X - 25) it can set is at most 2^-23, below every product's last
 *      bit; and c is 0 (the first HMMA starts from RZ) or the first block's
 *      result, a sum of such products rounded to fp32 or fp16: a multiple of
 *      2^-18 too (an arbitrary c below 2^-23 could be cut: not a c this
 *      datapath has; the running value is added by an FADD, not in a block);
 *   3. with F = 13 (a narrower adder) it does: a crafted block gives
 *      different results, so check 2 is not vacuous.
 */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format/format.h"
#include "model/tc.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

static double e4m3_val(unsigned bits) {
  double v = 0;
  lowp_decode(&v, (uint64_t)bits, &LOWP_FMT_E4M3);
  return v;
}

int main(void) {
  lowp_tc_model_t m8, m16;
  lowp_bfma_t clamp;
  lowp_rng_t r;
  char err[256];
  long trial, diff16 = 0, diffclamp = 0, n = 0;
  int o;
  const lowp_format_t *outs[2] = {&LOWP_FMT_FP32, &LOWP_FMT_FP16};
  lowp_test_start("tbfma_fp8");
  if (!lowp_test_check(lowp_tc_model_get(&m8, "h100", &LOWP_FMT_E4M3, &LOWP_FMT_FP16, err, sizeof err) == LOWP_OK &&
                           lowp_tc_model_get(&m16, "h100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, err, sizeof err) == LOWP_OK,
                       "%s", err))
    return lowp_test_end();
  lowp_test_check(m8.bfma.late_c && m8.bfma.F == 25 && m8.bfma.F == m16.bfma.F && m8.bfma.b == m16.bfma.b,
                  "h100's fp8 mma.sync datapath is the fp16 one with late c");
  clamp = m8.bfma;
  clamp.late_c = 0; /* the same block with e4m3's own emin clamp */
  lowp_rng_init(&r, lowp_test_seed(), 7);
  for (trial = 0; trial < 200000; trial++) {
    double a[16], b[16], c, d8, d16, dc;
    int i;
    for (i = 0; i < 16; i++) {
      unsigned ba, bb;
      do ba = (unsigned)(lowp_rng_next(&r) & 0xff); while ((ba & 0x7f) == 0x7f); /* no NaN */
      do bb = (unsigned)(lowp_rng_next(&r) & 0xff); while ((bb & 0x7f) == 0x7f);
      /* half the blocks lead with a subnormal times a large value */
      if (i == 0 && (trial & 1)) { ba = (ba & 0x80) | (1 + (unsigned)(lowp_rng_next(&r) % 7)); bb |= 0x70; }
      a[i] = e4m3_val(ba);
      b[i] = e4m3_val(bb);
    }
    o = (int)(trial & 2) >> 1;
    /* c of a block on this datapath: 0 (the first HMMA starts from RZ) or
       the first block's result, a multiple of 2^-18 like every product */
    c = (trial & 4) ? 0.0 : ldexp((double)(lowp_rng_next(&r) % 4096) - 2048, (int)(lowp_rng_next(&r) % 20) - 18);
    lowp_round_f64(&c, c, outs[o], NULL, LOWP_RND_NE);
    if (lowp_bfma(&d8, a, b, 16, c, &m8.bfma, &LOWP_FMT_E4M3, outs[o]) != LOWP_OK ||
        lowp_bfma(&d16, a, b, 16, c, &m16.bfma, &LOWP_FMT_FP16, outs[o]) != LOWP_OK ||
        lowp_bfma(&dc, a, b, 16, c, &clamp, &LOWP_FMT_E4M3, outs[o]) != LOWP_OK) {
      lowp_test_check(0, "lowp_bfma failed");
      break;
    }
    n++;
    if (!(d8 == d16 && signbit(d8) == signbit(d16)) && !(isnan(d8) && isnan(d16))) diff16++;
    if (!(d8 == dc && signbit(d8) == signbit(dc)) && !(isnan(d8) && isnan(dc))) diffclamp++;
  }
  lowp_test_check(n == 200000 && diff16 == 0, "the e4m3 mma.sync block = the fp16 block on %ld blocks (%ld differ)", n,
                  diff16);
  lowp_test_check(diffclamp == 0, "F = 25: the clamp at e4m3's emin changes %ld of %ld blocks", diffclamp, n);
  printf("%ld random blocks: fp16 block and e4m3 clamp agree with the emulated block\n", n);

  /* F = 13: 2^-9 x 448 leads (exponent -1, clamped 2), beside 1.125 2^-12 */
  {
    lowp_bfma_t p13 = m8.bfma, c13 = clamp;
    double a[2] = {ldexp(1.0, -9), 1.125 * ldexp(1.0, -3)}, b[2] = {448.0, ldexp(1.0, -9)}, x = 0, y = 0;
    p13.F = c13.F = 13;
    lowp_test_check(lowp_bfma(&x, a, b, 2, 0.0, &p13, &LOWP_FMT_E4M3, &LOWP_FMT_FP32) == LOWP_OK &&
                        lowp_bfma(&y, a, b, 2, 0.0, &c13, &LOWP_FMT_E4M3, &LOWP_FMT_FP32) == LOWP_OK &&
                        x == 0.875 + ldexp(1.0, -12) && y == 0.875,
                    "F = 13: fp16 exponents keep 2^-12 (%a), e4m3's clamp cuts it (%a)", x, y);
  }
  return lowp_test_end();
}
