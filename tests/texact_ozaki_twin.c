/* texact_ozaki_twin -- the exact GEMM with a DGEMM hook takes the path it takes without (the GPU test's cases, on the CPU) */

/*
 * lowp_exact_gemm_cuda is lowp_exact_gemm_ex with its slice-pair DGEMMs on
 * cuBLAS through lowp_gemm_opts_t.dgemm; tests/cuda/texact_ozaki_gpu.c
 * asserts that it matches the CPU path on every output and every statistic.
 * Here the same cases (tests/common/gemm_twin.h, the same seed and streams)
 * run with an OpenBLAS DGEMM in the hook, called as the GPU's is (row-major
 * C = A B as the column-major C^T = B^T A^T), and must agree with the run
 * without a hook in the same way: the hook changes no decision. On the
 * H200 (default seed) the hook once turned the sparse products off and so
 * chose 4x3 slices against 3x4 for fp64 normal 37x53x1001 and sliced 1024
 * more outputs of fp16 normal 1024^3; at least one case must use a sparse
 * product with the hook, so that difference stays covered. The same holds
 * for the int8 engine (tests/cuda/texact_ozaki_int8_gpu.c), emulated here
 * on the fp16 and bf16 cases, against its engine settings without a hook.
 * Run: ctest --test-dir build -R texact_ozaki_twin --output-on-failure
 */

#include <cblas.h>
#include "exact/exact.h"
#include "gemm_twin.h"
#include "status.h"
#include "testutil.h"

/* the hook: C (m x n) = A B row-major, computed as kernels/cuda/ozaki.cu
   asks cuBLAS to; ctx counts the calls */
static int colmajor_dgemm(void *ctx, size_t m, size_t n, size_t k, const double *a,
                          const double *b, double *c) {
  ++*(size_t *)ctx;
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)m, (int)k, 1.0, b, (int)n,
              a, (int)k, 0.0, c, (int)n);
  return LOWP_OK;
}

/* the run with the hook; ctx: its call count, checked against the statistics */
static int with_hook(void *ctx, double *c, const double *a, const double *b,
                     const lowp_twin_t *tc, lowp_gemm_stats_t *st) {
  size_t *calls = ctx;
  lowp_gemm_opts_t o = {.method = LOWP_GEMM_AUTO, .dgemm = colmajor_dgemm, .dgemm_ctx = calls};
  int s;
  *calls = 0;
  s = lowp_exact_gemm_ex(c, a, b, NULL, tc->m, tc->n, tc->k, tc->fo, NULL, LOWP_RND_NE, &o, st);
  lowp_test_check(*calls == st->dgemm_calls, "%s: %zu hook calls, %zu counted", tc->what, *calls,
                  st->dgemm_calls);
  return s;
}

/* the run on the emulated int8 engine; ctx: its count of slice values
   outside int8's range, which must stay 0 */
static int with_int8(void *ctx, double *c, const double *a, const double *b,
                     const lowp_twin_t *tc, lowp_gemm_stats_t *st) {
  size_t *wide = ctx;
  lowp_gemm_opts_t o = {.dgemm = lowp_twin_int8_gemm, .dgemm_ctx = wide, .engine_bits = 31,
                        .slice_bits_max = 7};
  int s;
  *wide = 0;
  s = lowp_exact_gemm_ex(c, a, b, NULL, tc->m, tc->n, tc->k, tc->fo, NULL, LOWP_RND_NE, &o, st);
  lowp_test_check(*wide == 0, "%s: %zu slice values past int8", tc->what, *wide);
  return s;
}

int main(void) {
  size_t calls, wide;
  lowp_gemm_opts_t i8 = {.engine_bits = 31, .slice_bits_max = 7};
  lowp_test_start("texact_ozaki_twin");
  lowp_test_check(lowp_twin_run_all("hook", with_hook, &calls, NULL, LOWP_TWIN_ALL) > 0,
                  "no case used a sparse product with the hook");
  /* the int8 engine (tests/cuda/texact_ozaki_int8_gpu.c's settings) vs the
     same engine settings without a hook: the fp16 and bf16 cases (the
     formats it is for; the emulated engine is slow) */
  lowp_test_check(lowp_twin_run_all("int8 hook", with_int8, &wide, &i8, 8) > 0,
                  "no case used a sparse product with the int8 hook");
  return lowp_test_end();
}
