/* texact_ozaki_gpu -- the sliced exact GEMM on cuBLAS DGEMM vs the CPU path, bit for bit and path for path */

/*
 * Label cuda: skips (exit 77) without a CUDA build or a device. On a GPU,
 * lowp_exact_gemm_cuda must equal lowp_exact_gemm_ex (OpenBLAS slices and
 * the accumulator) on every output, for fp16, bf16, fp32, e4m3, fp64 inputs,
 * normal and whole-range data (the latter mostly on the accumulator), with
 * inf/NaN injected, odd shapes and one 1024^3 product, and take the same
 * path: every field of lowp_gemm_stats_t equal (the hook changes no
 * decision; the same cases run on the CPU through an OpenBLAS hook in
 * tests/texact_ozaki_twin.c). A difference names each field with both
 * values and the first output that differs (tests/common/gemm_twin.h); each
 * case prints its path.
 * Run: ctest --test-dir build -L cuda --output-on-failure
 */

#include <stdio.h>
#include <stdlib.h>

#include "exact/exact.h"
#include "gemm_twin.h"
#include "gpu/ozaki_gpu.h"
#include "status.h"
#include "testutil.h"

int main(void) {
  const size_t M = LOWP_TWIN_BIG;
  lowp_twin_t tc;
  uint64_t seed;
  size_t i;
  double *a, *b, *cg, *cc;
  lowp_test_start("texact_ozaki_gpu");
  {
    double x = 1.0, y;
    if (lowp_exact_gemm_cuda(&y, &x, &x, NULL, 1, 1, 1, &LOWP_FMT_FP64, NULL, LOWP_RND_NE,
                             NULL) == LOWP_EUNSUPPORTED)
      lowp_test_skip("no CUDA device (or a build without CUDA)");
  }
  seed = lowp_test_seed();
  a = malloc(M * M * sizeof *a);
  b = malloc(M * M * sizeof *b);
  cg = malloc(M * M * sizeof *cg);
  cc = malloc(M * M * sizeof *cc);
  if (!a || !b || !cg || !cc) { printf("out of memory\n"); return 1; }
  for (i = 0; lowp_twin_case(i, seed, a, b, &tc); i++) {
    lowp_gemm_stats_t sg, sc;
    int s1 = lowp_exact_gemm_cuda(cg, a, b, NULL, tc.m, tc.n, tc.k, tc.fo, NULL, LOWP_RND_NE,
                                  &sg);
    int s2 = lowp_exact_gemm_ex(cc, a, b, NULL, tc.m, tc.n, tc.k, tc.fo, NULL, LOWP_RND_NE,
                                NULL, &sc);
    if (!lowp_test_check(s1 == LOWP_OK && s2 == LOWP_OK, "%s: status gpu %d cpu %d", tc.what,
                         s1, s2))
      continue;
    lowp_twin_compare(tc.what, "gpu", cg, cc, tc.m, tc.n, &sg, &sc);
  }
  free(a);
  free(b);
  free(cg);
  free(cc);
  return lowp_test_end();
}
