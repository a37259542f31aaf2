/* lowp_gemm_cublas_cuda -- GEMMs through cuBLASLt in fp32, tf32, fp16 (fp16 or fp32 accumulation), bf16 and e4m3 */

/*
 * versions 1-7 (kernels/gemm_gpu.h lists them): one cublasLtMatmul each,
 * the compute type, data types and CUBLASLT_MATMUL_DESC_FAST_ACCUM from a
 * table. Layout: cuBLASLt's fp8 GEMMs require the "TN" form (A transposed,
 * B not, column-major), so every variant uses it: row-major A (m x k) is
 * the column-major k x m matrix A_lt with op T; B is handed over as its
 * transpose (the column-major k x n matrix); C and D are column-major m x n
 * (transposed on the host both ways). alpha = beta = 1: D = A B + C. The
 * first algorithm cuBLASLt's heuristic offers is used, with a 32 MiB
 * workspace. What the hardware then does inside (block order, split-k) is
 * cuBLAS's; tests/cuda/tgemm_cublas_gpu.c compares it with the tensor-core
 * model of the GPU. Every CUDA and cuBLAS call is checked; nothing prints.
 */

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <vector>

extern "C" {
#include "gemm_gpu.h"
#include "status.h"
}

namespace {

struct Var {
  cudaDataType_t ab, cd, scale;
  cublasComputeType_t compute;
  int fastacc; /* -1: not an fp8 variant (attribute left unset) */
  int in_bytes, out_bytes;
  int min_cc; /* major*10 + minor */
};

const Var vars[LOWP_CUBLAS_VARIANTS] = {
    {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC, -1, 4, 4, 0},
    {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, -1, 4, 4, 80},
    {CUDA_R_16F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, -1, 2, 4, 0},
    {CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F, -1, 2, 2, 0},
    {CUDA_R_16BF, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, -1, 2, 4, 80},
    {CUDA_R_8F_E4M3, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 0, 1, 4, 89},
    {CUDA_R_8F_E4M3, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1, 1, 4, 89},
};

int fail(char *err, size_t errlen, int st, const char *what) {
  if (err && errlen) snprintf(err, errlen, "%s", what);
  return st;
}

/* transpose an r x c row-major matrix of esz-byte elements */
void transpose(void *dst, const void *src, size_t r, size_t c, int esz) {
  const char *s = (const char *)src;
  char *d = (char *)dst;
  for (size_t i = 0; i < r; i++)
    for (size_t j = 0; j < c; j++) memcpy(d + (j * r + i) * esz, s + (i * c + j) * esz, esz);
}

/* everything the call holds, released on every path */
struct Ctx {
  cublasLtHandle_t h = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  void *dA = nullptr, *dB = nullptr, *dC = nullptr, *ws = nullptr;
  ~Ctx() {
    if (dA) (void)cudaFree(dA);
    if (dB) (void)cudaFree(dB);
    if (dC) (void)cudaFree(dC);
    if (ws) (void)cudaFree(ws);
    if (pref) (void)cublasLtMatmulPreferenceDestroy(pref);
    if (la) (void)cublasLtMatrixLayoutDestroy(la);
    if (lb) (void)cublasLtMatrixLayoutDestroy(lb);
    if (lc) (void)cublasLtMatrixLayoutDestroy(lc);
    if (op) (void)cublasLtMatmulDescDestroy(op);
    if (h) (void)cublasLtDestroy(h);
  }
};

}  // namespace

#define LT(x, what) \
  if ((x) != CUBLAS_STATUS_SUCCESS) return fail(err, errlen, LOWP_EIO, "cuBLASLt: " what)
#define CU(x, what) \
  if ((x) != cudaSuccess) { (void)cudaGetLastError(); return fail(err, errlen, LOWP_EIO, "CUDA: " what); }

extern "C" int lowp_gemm_cublas_cuda(int variant, void *d, const void *a, const void *b,
                                     const void *c, size_t m, size_t n, size_t k, char *err,
                                     size_t errlen) {
  const size_t wsz = (size_t)32 << 20;
  Ctx x;
  int ndev = 0, dev = 0, major = 0, minor = 0;
  if (variant < 1 || variant > LOWP_CUBLAS_VARIANTS)
    return fail(err, errlen, LOWP_EINVAL, "unknown cuBLAS variant");
  if (!d || !a || !b || !c || m == 0 || n == 0 || k == 0 || m >= (1u << 31) ||
      n >= (1u << 31) || k >= (1u << 31))
    return fail(err, errlen, LOWP_EINVAL, "bad GEMM sizes or pointers");
  const Var &v = vars[variant - 1];
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    (void)cudaGetLastError();
    return fail(err, errlen, LOWP_EUNSUPPORTED, "no CUDA device");
  }
  CU(cudaGetDevice(&dev), "cudaGetDevice");
  CU(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "attribute");
  CU(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev), "attribute");
  if (major * 10 + minor < v.min_cc)
    return fail(err, errlen, LOWP_EUNSUPPORTED, "this GPU lacks the variant's data type");

  /* host staging: B^T (n x k) and C^T as column-major m x n */
  std::vector<char> bt(k * n * v.in_bytes), ct(m * n * v.out_bytes);
  transpose(bt.data(), b, k, n, v.in_bytes);
  transpose(ct.data(), c, m, n, v.out_bytes);

  CU(cudaMalloc(&x.dA, m * k * v.in_bytes), "cudaMalloc");
  CU(cudaMalloc(&x.dB, k * n * v.in_bytes), "cudaMalloc");
  CU(cudaMalloc(&x.dC, m * n * v.out_bytes), "cudaMalloc");
  CU(cudaMalloc(&x.ws, wsz), "cudaMalloc");
  CU(cudaMemcpy(x.dA, a, m * k * v.in_bytes, cudaMemcpyHostToDevice), "copy A");
  CU(cudaMemcpy(x.dB, bt.data(), k * n * v.in_bytes, cudaMemcpyHostToDevice), "copy B");
  CU(cudaMemcpy(x.dC, ct.data(), m * n * v.out_bytes, cudaMemcpyHostToDevice), "copy C");

  LT(cublasLtCreate(&x.h), "create");
  LT(cublasLtMatmulDescCreate(&x.op, v.compute, v.scale), "matmul descriptor");
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  LT(cublasLtMatmulDescSetAttribute(x.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
  LT(cublasLtMatmulDescSetAttribute(x.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
  if (v.fastacc >= 0) {
    int8_t fa = (int8_t)v.fastacc;
    LT(cublasLtMatmulDescSetAttribute(x.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fa, sizeof fa),
       "FAST_ACCUM");
  }
  LT(cublasLtMatrixLayoutCreate(&x.la, v.ab, k, m, k), "layout A");
  LT(cublasLtMatrixLayoutCreate(&x.lb, v.ab, k, n, k), "layout B");
  LT(cublasLtMatrixLayoutCreate(&x.lc, v.cd, m, n, m), "layout C");
  LT(cublasLtMatmulPreferenceCreate(&x.pref), "preference");
  LT(cublasLtMatmulPreferenceSetAttribute(x.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz,
                                          sizeof wsz),
     "workspace preference");
  cublasLtMatmulHeuristicResult_t res;
  int nres = 0;
  memset(&res, 0, sizeof res);
  cublasStatus_t hs =
      cublasLtMatmulAlgoGetHeuristic(x.h, x.op, x.la, x.lb, x.lc, x.lc, x.pref, 1, &res, &nres);
  if (hs == CUBLAS_STATUS_NOT_SUPPORTED || (hs == CUBLAS_STATUS_SUCCESS && nres == 0))
    return fail(err, errlen, LOWP_EUNSUPPORTED, "cuBLASLt has no algorithm for this GEMM here");
  LT(hs, "heuristic");

  /* alpha = beta = 1 in the scale type (fp16 for CUBLAS_COMPUTE_16F) */
  float one32 = 1.0f;
  uint16_t one16 = 0x3c00; /* fp16 1.0 */
  const void *one = v.scale == CUDA_R_16F ? (const void *)&one16 : (const void *)&one32;
  LT(cublasLtMatmul(x.h, x.op, one, x.dA, x.la, x.dB, x.lb, one, x.dC, x.lc, x.dC, x.lc,
                    &res.algo, x.ws, wsz, 0),
     "matmul");
  CU(cudaDeviceSynchronize(), "synchronize");
  CU(cudaMemcpy(ct.data(), x.dC, m * n * v.out_bytes, cudaMemcpyDeviceToHost), "copy D");
  transpose(d, ct.data(), n, m, v.out_bytes); /* column-major m x n -> row-major */
  return LOWP_OK;
}
