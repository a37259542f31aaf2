/* tkarith_exhaustive -- kernels/common/karith.h's lowp_ka_round against lib/format on all 2^32 fp32 inputs */

/*
 * Label long. Every fp32 bit pattern rounded (rne) to fp16, bf16 and e5m2
 * by lowp_ka_round -- the rounding the GPU row kernels and their CPU twins
 * share -- and by lib/format's lowp_round_f32: the bits must agree (NaN
 * results: both NaN). OpenMP over the inputs; the tally does not depend on
 * the thread count. LOWP_EXHAUSTIVE_SHARD=i/n checks the inputs u with
 * u % n == i (default 0/1, all of them). tests/tkarith.c (label unit) runs
 * the structured sample of 12.6 million inputs per format.
 * Run: ctest --test-dir build -L long -R tkarith_exhaustive
 *      LOWP_EXHAUSTIVE_SHARD=0/4099 ./build/tkarith_exhaustive   (a quick look)
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "common/karith.h"
#include "common/rowk.h"
#include "status.h"
#include "testutil.h"

int main(void) {
  static const lowp_format_t *fs[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_E5M2};
  const char *sh = getenv("LOWP_EXHAUSTIVE_SHARD");
  unsigned long long idx = 0, cnt = 1;
  size_t j;
  lowp_test_start("tkarith_exhaustive");
  if (sh && (sscanf(sh, "%llu/%llu", &idx, &cnt) != 2 || cnt == 0 || idx >= cnt)) {
    printf("LOWP_EXHAUSTIVE_SHARD=%s: expected i/n with 0 <= i < n\n", sh);
    return 2;
  }
  for (j = 0; j < sizeof fs / sizeof fs[0]; j++) {
    lowp_ka_fmt_t k;
    long long u, bad = 0, n = 0;
    lowp_rowk_fmt(&k, fs[j]);
#pragma omp parallel for schedule(static) reduction(+ : bad, n)
    for (u = (long long)idx; u < (1LL << 32); u += (long long)cnt) {
      uint32_t b = (uint32_t)u;
      float x, y, w;
      double want;
      memcpy(&x, &b, sizeof x);
      y = lowp_ka_round(x, k);
      lowp_round_f32(&want, x, fs[j], NULL, LOWP_RND_NE);
      w = (float)want;
      n++;
      if (isnan(want) ? !isnan(y) : memcmp(&w, &y, sizeof y) != 0) bad++;
    }
    printf("%-5s %lld inputs, %lld differ\n", fs[j]->name, n, bad);
    lowp_test_check(bad == 0, "%s: lowp_ka_round = lowp_round_f32 on every input of the shard", fs[j]->name);
  }
  return lowp_test_end();
}
