/* lowp exact GEMM on the GPU -- slice-pair DGEMMs on cuBLAS for lib/exact's sliced path */

/*
 * lib/exact/ozaki.c does the splitting, the checks and the exact
 * combination (see docs/exact-gemm.md); this file only supplies its DGEMM:
 * C = A B row-major on cuBLAS, as the column-major C^T = B^T A^T. Each
 * slice pair's product is an integer below 2^53 at every partial sum, so
 * any IEEE binary64 DGEMM (any blocking, FMA, split-k) returns it exactly;
 * CUBLAS_PEDANTIC_MATH keeps cuBLAS from substituting reduced-precision or
 * emulated arithmetic. Every CUDA and cuBLAS call is checked.
 */

#include "cublas_lazy.h" /* cuBLAS, opened on first use */
#include <cuda_runtime.h>

#include "cuda_ok.h"
#include <mpfr.h> /* before extern "C": in C++ it pulls C++ headers */

extern "C" {
#include "gpu/ozaki_gpu.h"
#include "status.h"
}

namespace {

struct GpuCtx {
  cublasHandle_t h = nullptr;
  double *dA = nullptr, *dB = nullptr, *dC = nullptr;
  size_t capA = 0, capB = 0, capC = 0;
};

extern "C" int gpu_dgemm(void *vctx, size_t m, size_t n, size_t k, const double *a,
                         const double *b, double *c) {
  GpuCtx *g = static_cast<GpuCtx *>(vctx);
  const double one = 1.0, zero = 0.0;
  int st;
  if ((st = lowp_cuda_grow(&g->dA, &g->capA, m * k)) || (st = lowp_cuda_grow(&g->dB, &g->capB, k * n)) ||
      (st = lowp_cuda_grow(&g->dC, &g->capC, m * n)))
    return st;
  if (!lowp_cuda_ok(cudaMemcpy(g->dA, a, m * k * sizeof(double), cudaMemcpyHostToDevice)) ||
      !lowp_cuda_ok(cudaMemcpy(g->dB, b, k * n * sizeof(double), cudaMemcpyHostToDevice)))
    return LOWP_EIO;
  /* row-major C (m x n) = A B  <=>  column-major C^T (n x m) = B^T A^T */
  if (cublasDgemm(g->h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, g->dB, (int)n,
                  g->dA, (int)k, &zero, g->dC, (int)n) != CUBLAS_STATUS_SUCCESS)
    return LOWP_EIO;
  if (!lowp_cuda_ok(cudaMemcpy(c, g->dC, m * n * sizeof(double), cudaMemcpyDeviceToHost)))
    return LOWP_EIO;
  return LOWP_OK;
}

}  // namespace

extern "C" int lowp_exact_gemm_cuda(double *c, const double *a, const double *b,
                                    const double *c0, size_t m, size_t n, size_t k,
                                    const lowp_format_t *f, const lowp_policy_t *pol,
                                    lowp_rounding_t rnd, lowp_gemm_stats_t *stats) {
  GpuCtx g;
  lowp_gemm_opts_t o = {};
  int st, st2 = LOWP_OK;
  int ndev = 0;
  if (!lowp_cuda_ok(cudaGetDeviceCount(&ndev)) || ndev == 0) {
    return LOWP_EUNSUPPORTED;
  }
  if (m > 2147483647u || n > 2147483647u || k > 2147483647u) return LOWP_ENOMEM;
  if (cublasCreate(&g.h) != CUBLAS_STATUS_SUCCESS) return LOWP_EIO;
  if (cublasSetMathMode(g.h, CUBLAS_PEDANTIC_MATH) != CUBLAS_STATUS_SUCCESS) {
    (void)cublasDestroy(g.h);
    return LOWP_EIO;
  }
  o.method = LOWP_GEMM_AUTO;
  o.dgemm = gpu_dgemm;
  o.dgemm_ctx = &g;
  st = lowp_exact_gemm_ex(c, a, b, c0, m, n, k, f, pol, rnd, &o, stats);
  if (g.dA && !lowp_cuda_ok(cudaFree(g.dA))) st2 = LOWP_EIO;
  if (g.dB && !lowp_cuda_ok(cudaFree(g.dB))) st2 = LOWP_EIO;
  if (g.dC && !lowp_cuda_ok(cudaFree(g.dC))) st2 = LOWP_EIO;
  if (cublasDestroy(g.h) != CUBLAS_STATUS_SUCCESS) st2 = LOWP_EIO;
  return st ? st : st2;
}
