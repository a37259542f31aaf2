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
 * product with the hook, so that difference stays covered.
 * Run: ctest --test-dir build -R texact_ozaki_twin --output-on-failure
 */

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

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

int main(void) {
  const size_t M = LOWP_TWIN_BIG;
  lowp_twin_t tc;
  uint64_t seed;
  size_t i, sparse = 0;
  double *a, *b, *cg, *cc;
  lowp_test_start("texact_ozaki_twin");
  seed = lowp_test_seed();
  a = malloc(M * M * sizeof *a);
  b = malloc(M * M * sizeof *b);
  cg = malloc(M * M * sizeof *cg);
  cc = malloc(M * M * sizeof *cc);
  if (!a || !b || !cg || !cc) { printf("out of memory\n"); return 1; }
  for (i = 0; lowp_twin_case(i, seed, a, b, &tc); i++) {
    lowp_gemm_stats_t sg, sc;
    size_t calls = 0;
    lowp_gemm_opts_t o = {.method = LOWP_GEMM_AUTO, .dgemm = colmajor_dgemm, .dgemm_ctx = &calls};
    int s1 = lowp_exact_gemm_ex(cg, a, b, NULL, tc.m, tc.n, tc.k, tc.fo, NULL, LOWP_RND_NE, &o,
                                &sg);
    int s2 = lowp_exact_gemm_ex(cc, a, b, NULL, tc.m, tc.n, tc.k, tc.fo, NULL, LOWP_RND_NE,
                                NULL, &sc);
    if (!lowp_test_check(s1 == LOWP_OK && s2 == LOWP_OK, "%s: status hook %d cpu %d", tc.what,
                         s1, s2))
      continue;
    lowp_twin_compare(tc.what, "hook", cg, cc, tc.m, tc.n, &sg, &sc);
    lowp_test_check(calls == sg.dgemm_calls, "%s: %zu hook calls, %zu counted", tc.what, calls,
                    sg.dgemm_calls);
    sparse += sg.sparse_products;
  }
  lowp_test_check(sparse > 0, "no case used a sparse product with the hook");
  free(a);
  free(b);
  free(cg);
  free(cc);
  return lowp_test_end();
}
