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

#include "exact/exact.h"
#include "gemm_twin.h"
#include "gpu/ozaki_gpu.h"
#include "status.h"
#include "testutil.h"

static int on_gpu(void *ctx, double *c, const double *a, const double *b, const lowp_twin_t *tc,
                  lowp_gemm_stats_t *st) {
  (void)ctx;
  return lowp_exact_gemm_cuda(c, a, b, NULL, tc->m, tc->n, tc->k, tc->fo, NULL, LOWP_RND_NE,
                              st);
}

int main(void) {
  lowp_test_start("texact_ozaki_gpu");
  {
    double x = 1.0, y;
    if (lowp_exact_gemm_cuda(&y, &x, &x, NULL, 1, 1, 1, &LOWP_FMT_FP64, NULL, LOWP_RND_NE,
                             NULL) == LOWP_EUNSUPPORTED)
      lowp_test_skip("no CUDA device (or a build without CUDA)");
  }
  (void)lowp_twin_run_all("gpu", on_gpu, NULL, NULL, LOWP_TWIN_ALL);
  return lowp_test_end();
}
