/* lowp exact GEMM on INT8 tensor cores -- slice-pair int8 x int8 -> int32 GEMMs on cuBLAS */

/*
 * Ozaki scheme II's engine (Ozaki, Uchino, Imamura, 2024-25): lib/exact's
 * sliced path with engine_bits = 31 and slice_bits_max = 7 cuts A and B into
 * slices that are integers in [-127, 127] with sA + sB + ceil(log2 k) <= 31,
 * so every partial sum of an int8 x int8 product over k terms is an integer
 * below 2^31: an int32 accumulator (CUBLAS_COMPUTE_32I) holds every one of
 * them exactly, in any order. lib/exact does the splitting, the per-GEMM
 * exactness check (row sums modulo 2^64, entry bound 2^31), the exact
 * combination and the accumulator fallback; this file only converts the
 * slices to int8, runs cublasGemmEx and converts the int32 results back.
 * Layout: row-major C (m x n) = A B is computed as the column-major
 * n x m product C^T = (B^T) A^T in the "TN" form, with k (and the row length
 * of C) padded with zeros to a multiple of 4, the form every cuBLAS int8
 * GEMM supports. Every CUDA and cuBLAS call is checked.
 */

#include "cublas_lazy.h" /* cuBLAS, opened on first use */
#include <cuda_runtime.h>

#include "cuda_ok.h"
#include <mpfr.h> /* before extern "C": in C++ it pulls C++ headers */

#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" {
#include "gpu/ozaki_gpu.h"
#include "status.h"
}

namespace {

struct Int8Ctx {
  cublasHandle_t h = nullptr;
  int8_t *dA = nullptr, *dB = nullptr;
  int32_t *dC = nullptr;
  size_t capA = 0, capB = 0, capC = 0;
  int8_t *hA = nullptr, *hB = nullptr;
  int32_t *hC = nullptr;
};

/* a slice (an integer-valued double) as int8: wrapping like a narrowing
   cast, so a slice past the budget (the test hook) shows in the check */
inline int8_t to_i8(double x) { return (int8_t)(uint8_t)((uint64_t)(int64_t)x & 0xffu); }

size_t up4(size_t x) { return (x + 3) / 4 * 4; }

extern "C" int gpu_i8gemm(void *vctx, size_t m, size_t n, size_t k, const double *a,
                          const double *b, double *c) {
  Int8Ctx *g = static_cast<Int8Ctx *>(vctx);
  const int32_t one = 1, zero = 0;
  size_t kp = up4(k), np = up4(n), i, j, l;
  int st;
  if (kp > 2147483647u || np > 2147483647u) return LOWP_ENOMEM;
  if ((st = lowp_cuda_grow(&g->dA, &g->capA, m * kp)) || (st = lowp_cuda_grow(&g->dB, &g->capB, np * kp)) ||
      (st = lowp_cuda_grow(&g->dC, &g->capC, m * np)))
    return st;
  free(g->hA);
  free(g->hB);
  free(g->hC);
  g->hA = (int8_t *)calloc(m * kp, 1);
  g->hB = (int8_t *)calloc(np * kp, 1);
  g->hC = (int32_t *)malloc(m * np * sizeof(int32_t));
  if (!g->hA || !g->hB || !g->hC) return LOWP_ENOMEM;
  for (i = 0; i < m; i++)
    for (l = 0; l < k; l++) g->hA[i * kp + l] = to_i8(a[i * k + l]);
  for (l = 0; l < k; l++) /* B^T, row-major n x kp */
    for (j = 0; j < n; j++) g->hB[j * kp + l] = to_i8(b[l * n + j]);
  if (!lowp_cuda_ok(cudaMemcpy(g->dA, g->hA, m * kp, cudaMemcpyHostToDevice)) ||
      !lowp_cuda_ok(cudaMemcpy(g->dB, g->hB, np * kp, cudaMemcpyHostToDevice)))
    return LOWP_EIO;
  /* column-major C^T (np x m, ld np) = op(B^T stored kp x np)^T op(A^T stored kp x m) */
  if (cublasGemmEx(g->h, CUBLAS_OP_T, CUBLAS_OP_N, (int)np, (int)m, (int)kp, &one, g->dB,
                   CUDA_R_8I, (int)kp, g->dA, CUDA_R_8I, (int)kp, &zero, g->dC, CUDA_R_32I,
                   (int)np, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
    return LOWP_EIO;
  if (!lowp_cuda_ok(cudaMemcpy(g->hC, g->dC, m * np * sizeof(int32_t), cudaMemcpyDeviceToHost)))
    return LOWP_EIO;
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) c[i * n + j] = (double)g->hC[i * np + j];
  return LOWP_OK;
}

}  // namespace

extern "C" int lowp_exact_gemm_cuda_int8(double *c, const double *a, const double *b,
                                         const double *c0, size_t m, size_t n, size_t k,
                                         const lowp_format_t *f, const lowp_policy_t *pol,
                                         lowp_rounding_t rnd, int test_extra_bits,
                                         lowp_gemm_stats_t *stats) {
  Int8Ctx g;
  lowp_gemm_opts_t o = {};
  int st, st2 = LOWP_OK;
  int ndev = 0;
  if (!lowp_cuda_ok(cudaGetDeviceCount(&ndev)) || ndev == 0) {
    return LOWP_EUNSUPPORTED;
  }
  if (m > 2147483647u || n > 2147483647u || k > 2147483647u) return LOWP_ENOMEM;
  if (cublasCreate(&g.h) != CUBLAS_STATUS_SUCCESS) return LOWP_EIO;
  o.method = test_extra_bits ? LOWP_GEMM_SLICED : LOWP_GEMM_AUTO;
  o.test_extra_bits = test_extra_bits;
  o.dgemm = gpu_i8gemm;
  o.dgemm_ctx = &g;
  o.engine_bits = 31;
  o.slice_bits_max = 7;
  st = lowp_exact_gemm_ex(c, a, b, c0, m, n, k, f, pol, rnd, &o, stats);
  if (g.dA && !lowp_cuda_ok(cudaFree(g.dA))) st2 = LOWP_EIO;
  if (g.dB && !lowp_cuda_ok(cudaFree(g.dB))) st2 = LOWP_EIO;
  if (g.dC && !lowp_cuda_ok(cudaFree(g.dC))) st2 = LOWP_EIO;
  if (cublasDestroy(g.h) != CUBLAS_STATUS_SUCCESS) st2 = LOWP_EIO;
  free(g.hA);
  free(g.hB);
  free(g.hC);
  return st ? st : st2;
}
