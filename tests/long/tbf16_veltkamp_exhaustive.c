/* tbf16_veltkamp_exhaustive -- Veltkamp's splitting rounds binary32 to bf16 (rne) on every input gemm_acc_fast's ra_loopv8 can meet */

/*
 * Label long. kernels/cpu/gemm_acc_fast.c (ra_vk8, ra_loopv8) rounds a
 * binary32 x to bf16 in rne as g = RN(x C), C = 2^16 + 1, then
 * g - RN(g - x), and its comment claims the result equals rne rounding for
 * every binary32 of magnitude in [2^-126, 2^112 - 2^96) and every multiple
 * of 2^-133 below 2^-126 (sums of bf16 values), both signs, and that +-0
 * gives +-0. This test checks that claim on every such input against
 * lib/format's lowp_round_f32 (bf16, rne), which shares no code with it,
 * and that the first input past the range (2^112 - 2^96) is where it stops
 * holding (x C overflows). The three operations are separate binary32
 * roundings here (volatile: no contraction into a fused multiply-add), as
 * the AVX2 code's _mm256_mul_ps and _mm256_sub_ps are. OpenMP over the
 * inputs; LOWP_EXHAUSTIVE_SHARD=i/n checks the inputs u with u % n == i.
 * Run: ctest --test-dir build -L long -R tbf16_veltkamp_exhaustive
 *      LOWP_EXHAUSTIVE_SHARD=0/4099 ./build/tbf16_veltkamp_exhaustive   (a quick look)
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/karith.h"
#include "format/format.h"
#include "status.h"
#include "testutil.h"

/* ra_vk8's arithmetic on one lane */
static float veltkamp(float x) {
  volatile float vx = x, c = 65537.0f, g, t;
  g = vx * c;
  t = g - vx;
  return g - t;
}

/* lowp_round_f32 to bf16 in rne, as binary32 bits */
static uint32_t oracle(float x) {
  double y;
  float f;
  /* the return value is the ternary (sign of y - x); INT32_MIN: no mode */
  if (lowp_round_f32(&y, x, &LOWP_FMT_BF16, NULL, LOWP_RND_NE) == INT32_MIN) return 0xffffffffu;
  f = (float)y;
  return lowp_ka_bits(f);
}

int main(void) {
  const char *sh = getenv("LOWP_EXHAUSTIVE_SHARD");
  unsigned long long idx = 0, cnt = 1;
  /* |x| < 2^112 - 2^96: below the encoding of 2^112 - 2^96 (0x777f8000) */
  const uint32_t top = lowp_ka_bits(ldexpf(1.0f, 112) - ldexpf(1.0f, 96));
  long long u, bad = 0, n = 0;
  lowp_test_start("tbf16_veltkamp_exhaustive");
  if (sh && (sscanf(sh, "%llu/%llu", &idx, &cnt) != 2 || cnt == 0 || idx >= cnt)) {
    printf("LOWP_EXHAUSTIVE_SHARD=%s: expected i/n with 0 <= i < n\n", sh);
    return 2;
  }
#pragma omp parallel for schedule(static) reduction(+ : bad, n)
  for (u = (long long)idx; u < (long long)top; u += (long long)cnt) {
    uint32_t m = (uint32_t)u;
    int s;
    /* below 2^-126 only the multiples of 2^-133 (bf16's subnormal grid) */
    if (m < 0x00800000u && (m & 0xffffu)) continue;
    for (s = 0; s < 2; s++) {
      float x = lowp_ka_float(m | (s ? 0x80000000u : 0u));
      n++;
      if (lowp_ka_bits(veltkamp(x)) != oracle(x)) {
        if (bad < 3) printf("  0x%08x: splitting 0x%08x, lowp_round_f32 0x%08x\n", lowp_ka_bits(x), lowp_ka_bits(veltkamp(x)), oracle(x));
        bad++;
      }
    }
  }
  printf("bf16 by Veltkamp's splitting: %lld inputs below 2^112 - 2^96, %lld differ\n", n, bad);
  lowp_test_check(bad == 0, "g - (g - x) with g = x (2^16 + 1) rounds to bf16 (rne) on every input of the shard");
  if (idx == 0 && cnt == 1) {
    /* the range is tight: at 2^112 - 2^96 itself x C overflows */
    float x = lowp_ka_float(top);
    lowp_test_check(lowp_ka_bits(veltkamp(x)) != oracle(x), "the first input past the range (0x%08x) differs", top);
  }
  lowp_test_check(lowp_ka_bits(veltkamp(0.0f)) == 0u && lowp_ka_bits(veltkamp(-0.0f)) == 0x80000000u, "+-0 give +-0");
  return lowp_test_end();
}
