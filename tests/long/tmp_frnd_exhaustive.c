/* tmp_frnd_exhaustive -- matmul-precision's roundings to F (experiments/mp_frnd.h) on every binary32 value */

/*
 * Label long. matmul-precision emulates gemm_acc at BLAS-like speed in fp32 arithmetic, each product and
 * sum rounded to the input format F by one of three branch-free roundings (mp_frnd.h): the general frnd,
 * and, where frnd_init chooses them, frnd_wide (F's emin is fp32's) and frnd_narrow (F's range well inside
 * fp32's). Each also flags a result beyond F's finite range (the experiment then asks the reference
 * kernel). For every finite binary32 x and every format below this test checks:
 *  - frnd's flag is set exactly where lib/format's lowp_round_f32 (rne, which shares no code with it)
 *    gives a value beyond F's largest finite one (infinity or a saturating format's overflow), and
 *    otherwise frnd's value is that rounding, bit for bit (-0 aside: frnd gives +0 for a negative x that
 *    rounds to zero below 2^emin, which the experiment never adds to anything but nonzero sums, see
 *    below);
 *  - the way frnd_init picks gives the same flag as frnd, and, unflagged, the same bits, except that
 *    frnd_wide keeps the sign of a zero result where frnd gives +0. The experiment meets such x only as
 *    a product below fp32's normal range (flagged by its own test: under = 1 for every FR_WIDE format)
 *    or as -0 (a zero product): an exact zero sum is +0, a nonzero sum of two F values is at least F's
 *    smallest subnormal, and c + -0 = c for the +0 an output starts from. So the outputs are the same.
 *  - a format without subnormals is not frnd's (exact = 0: the experiment asks the reference for every
 *    output);
 *  - frnd_init's `under` (products of two F values may fall below 2^-126) against the smallest product.
 * OpenMP over the inputs; LOWP_EXHAUSTIVE_SHARD=i/n checks the encodings u with u % n == i.
 * Run: ctest --test-dir build -L long -R tmp_frnd_exhaustive
 *      LOWP_EXHAUSTIVE_SHARD=0/4099 ./build/tmp_frnd_exhaustive   (a quick look)
 */

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../experiments/mp_frnd.h"
#include "common/karith.h"
#include "format/format.h"
#include "testutil.h"

int main(void) {
  /* matmul-precision's formats, and made-up ones that take each way (and none) */
  static const char *names[] = {"fp16", "bf16", "tf32", "e4m3", "e5m2", "p=5,emin=-6,emax=7,ebits=4",
                                "p=8,emin=-40,emax=40,ebits=7", "p=8,emin=-60,emax=60,ebits=8",
                                "p=5,emin=-6,emax=7,ebits=4,nosub", "p=4,emin=-126,emax=127,ebits=8", NULL};
  const char *sh = getenv("LOWP_EXHAUSTIVE_SHARD");
  unsigned long long idx = 0, cnt = 1;
  int f, ways[3] = {0, 0, 0};
  lowp_test_start("tmp_frnd_exhaustive");
  if (sh && (sscanf(sh, "%llu/%llu", &idx, &cnt) != 2 || cnt == 0 || idx >= cnt)) {
    printf("LOWP_EXHAUSTIVE_SHARD=%s: expected i/n with 0 <= i < n\n", sh);
    return 2;
  }
  for (f = 0; names[f]; f++) {
    lowp_format_t F;
    frnd_t t;
    char err[200];
    long long u, n = 0, bad_ref = 0, bad_way = 0;
    double smallest;
    if (lowp_format_parse(&F, names[f], err, sizeof err) != 0) {
      lowp_test_check(0, "%s parses (%s)", names[f], err);
      continue;
    }
    frnd_init(&t, &F);
    if (!F.subnormals) { /* the experiment's reference kernel computes every output */
      lowp_test_check(!t.exact && t.way == FR_GEN, "%s: without subnormals frnd is not used", names[f]);
      continue;
    }
    ways[t.way]++;
    smallest = lowp_format_xmins(&F);
    lowp_test_check(t.under == (smallest * smallest < FLT_MIN), "%s: under = %d (smallest product %g)", names[f],
                    t.under, smallest * smallest);
#pragma omp parallel for schedule(static) reduction(+ : n, bad_ref, bad_way)
    for (u = (long long)idx; u < (1LL << 32); u += (long long)cnt) {
      const float x = lowp_ka_float((uint32_t)u);
      double r;
      float y0, y1;
      int b0 = 0, b1 = 0, bref;
      if (!isfinite(x)) continue;
      n++;
      (void)lowp_round_f32(&r, x, &F, NULL, LOWP_RND_NE);
      bref = !(fabs(r) <= lowp_format_xmax(&F));
      y0 = frnd(x, t.drop, t.xmin, t.magic, t.xmax, &b0);
      if (b0 != bref || (!b0 && lowp_ka_bits(y0) != lowp_ka_bits((float)r) &&
                         !(y0 == 0.0f && r == 0.0 && x <= 0.0f && fabsf(x) < t.xmin))) {
        if (bad_ref < 3)
#pragma omp critical
          printf("  %s x = %a: frnd %a (flag %d), lowp_round_f32 %a\n", names[f], x, y0, b0, r);
        bad_ref++;
      }
      if (t.way == FR_GEN) continue;
      y1 = t.way == FR_NARROW ? frnd_narrow(x, t.ebmin, t.ebcap, t.mofs, t.xmax, &b1)
                              : frnd_wide(x, t.drop, t.xmax, &b1);
      if (b1 != b0 || (!b0 && lowp_ka_bits(y1) != lowp_ka_bits(y0) &&
                       !(t.way == FR_WIDE && y0 == 0.0f && y1 == 0.0f && x <= 0.0f && fabsf(x) < t.xmin))) {
        if (bad_way < 3)
#pragma omp critical
          printf("  %s x = %a: way %d %a (flag %d), frnd %a (flag %d)\n", names[f], x, t.way, y1, b1, y0, b0);
        bad_way++;
      }
    }
    printf("%s: way %d, under %d: %lld finite inputs, %lld differ from lowp_round_f32, %lld from frnd\n",
           names[f], t.way, t.under, n, bad_ref, bad_way);
    lowp_test_check(bad_ref == 0, "%s: frnd rounds as lowp_round_f32 and flags what leaves the range", names[f]);
    lowp_test_check(bad_way == 0, "%s: way %d gives frnd's values and flags", names[f], t.way);
  }
  lowp_test_check(ways[FR_GEN] > 0 && ways[FR_WIDE] > 0 && ways[FR_NARROW] > 0, "every way is exercised (%d %d %d)",
                  ways[0], ways[1], ways[2]);
  return lowp_test_end();
}
