/* lowp_gemm_cublas_cuda -- GEMMs through cuBLASLt in fp32, tf32, fp16 (fp16 or fp32 accumulation), bf16 and e4m3 */

/*
 * versions 1-7 (kernels/gpu/gemm_gpu.h lists them): one cublasLtMatmul each,
 * the compute type, data types and CUBLASLT_MATMUL_DESC_FAST_ACCUM from a
 * table. Layout: cuBLASLt's fp8 GEMMs require the "TN" form (A transposed,
 * B not, column-major), so every variant uses it: row-major A (m x k) is
 * the column-major k x m matrix A_lt with op T; B is handed over as its
 * transpose (the column-major k x n matrix); D is column-major m x n. Every
 * leading dimension is padded to a multiple of 16 bytes (a ragged k of 70
 * fp16 values would otherwise be 140 bytes and may send cuBLASLt to another
 * kernel family).
 *
 * D = A B + C is computed in two steps that a twin can follow: cuBLASLt
 * with alpha = 1, beta = 0 (C is not read: the tensor cores accumulate from
 * zero), then C added here on the host by one IEEE addition in the output
 * format, rounded to nearest even (fp16: the float sum rounded once more,
 * which equals the one rounding, 24 >= 2*11 + 2).
 *
 * The algorithm: the first the heuristic offers with no split-K and no
 * reduction (CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = NONE, and
 * SPLITK_NUM == 1, REDUCTION_SCHEME == NONE checked on the chosen one) and
 * no workspace, which also leaves out stream-K kernels (their partial tiles
 * live in the workspace); only if none exists, the first with a 32 MiB
 * workspace (recorded). lowp_gemm_cublas_algo says which algorithm, tile,
 * stages and workspace the last call used (tests/cuda/tgemm_gpu.c prints it
 * beside its measurement of the twin). Every CUDA and cuBLAS call is
 * checked; nothing prints.
 */

#include "cublas_lazy.h" /* cuBLASLt, opened on first use */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda_ok.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <vector>

extern "C" {
#include "gpu/gemm_gpu.h"
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

/* the leading dimension of rows elements of esz bytes, padded to 16 bytes */
size_t ld16(size_t rows, int esz) {
  size_t q = 16 / (size_t)esz;
  return (rows + q - 1) / q * q;
}

/* d[i] = d[i] + c[i] in the output format (4: fp32, 2: fp16), round to nearest even */
void add_c(void *d, const void *c, size_t n, int esz) {
  for (size_t i = 0; i < n; i++) {
    if (esz == 4) {
      float x, y;
      memcpy(&x, (char *)d + 4 * i, 4);
      memcpy(&y, (const char *)c + 4 * i, 4);
      x = x + y;
      memcpy((char *)d + 4 * i, &x, 4);
    } else {
      __half hx, hy;
      memcpy(&hx, (char *)d + 2 * i, 2);
      memcpy(&hy, (const char *)c + 2 * i, 2);
      hx = __float2half_rn(__half2float(hx) + __half2float(hy));
      memcpy((char *)d + 2 * i, &hx, 2);
    }
  }
}

char last_algo[256] = "no cuBLASLt call yet";

/* everything the call holds, released on every path */
struct Ctx {
  cublasLtHandle_t h = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  void *dA = nullptr, *dB = nullptr, *dC = nullptr, *ws = nullptr;
  size_t wsz = 0;
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
  if (!lowp_cuda_ok(x)) return fail(err, errlen, LOWP_EIO, "CUDA: " what)

namespace {

/* device buffers with 16-byte leading dimensions; A and B^T uploaded */
int upload(Ctx &x, const Var &v, const void *a, const void *bt, size_t m, size_t n, size_t k,
           char *err, size_t errlen) {
  size_t lda = ld16(k, v.in_bytes), ldd = ld16(m, v.out_bytes);
  CU(cudaMalloc(&x.dA, lda * m * v.in_bytes), "cudaMalloc");
  CU(cudaMalloc(&x.dB, lda * n * v.in_bytes), "cudaMalloc");
  CU(cudaMalloc(&x.dC, ldd * n * v.out_bytes), "cudaMalloc");
  CU(cudaMemset(x.dA, 0, lda * m * v.in_bytes), "cudaMemset");
  CU(cudaMemset(x.dB, 0, lda * n * v.in_bytes), "cudaMemset");
  CU(cudaMemcpy2D(x.dA, lda * v.in_bytes, a, k * v.in_bytes, k * v.in_bytes, m, cudaMemcpyHostToDevice),
     "copy A");
  CU(cudaMemcpy2D(x.dB, lda * v.in_bytes, bt, k * v.in_bytes, k * v.in_bytes, n, cudaMemcpyHostToDevice),
     "copy B");
  return LOWP_OK;
}

/* the descriptors of D = op(A) B in the TN form */
int describe(Ctx &x, const Var &v, size_t m, size_t n, size_t k, char *err, size_t errlen) {
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  if (cublasLtCreate(&x.h) != CUBLAS_STATUS_SUCCESS) { /* the library itself may be missing */
    char m[512];
    snprintf(m, sizeof m, "cuBLASLt: create%s%s", *lowp_cublas_error() ? ": " : "", lowp_cublas_error());
    return fail(err, errlen, LOWP_EIO, m);
  }
  LT(cublasLtMatmulDescCreate(&x.op, v.compute, v.scale), "matmul descriptor");
  LT(cublasLtMatmulDescSetAttribute(x.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
  LT(cublasLtMatmulDescSetAttribute(x.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
  if (v.fastacc >= 0) {
    int8_t fa = (int8_t)v.fastacc;
    LT(cublasLtMatmulDescSetAttribute(x.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fa, sizeof fa),
       "FAST_ACCUM");
  }
  LT(cublasLtMatrixLayoutCreate(&x.la, v.ab, k, m, ld16(k, v.in_bytes)), "layout A");
  LT(cublasLtMatrixLayoutCreate(&x.lb, v.ab, k, n, ld16(k, v.in_bytes)), "layout B");
  LT(cublasLtMatrixLayoutCreate(&x.lc, v.cd, m, n, ld16(m, v.out_bytes)), "layout D");
  return LOWP_OK;
}

/* the first algorithm without split-K or reduction: no workspace first (no
   stream-K), then 32 MiB; its configuration into last_algo */
int choose(Ctx &x, cublasLtMatmulAlgo_t *algo, char *err, size_t errlen) {
  const size_t sizes[2] = {0, (size_t)32 << 20};
  uint32_t mask = CUBLASLT_REDUCTION_SCHEME_NONE;
  for (int t = 0; t < 2; t++) {
    cublasLtMatmulHeuristicResult_t res[8];
    int nres = 0;
    if (x.pref) (void)cublasLtMatmulPreferenceDestroy(x.pref);
    x.pref = nullptr;
    LT(cublasLtMatmulPreferenceCreate(&x.pref), "preference");
    LT(cublasLtMatmulPreferenceSetAttribute(x.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &sizes[t],
                                            sizeof sizes[t]),
       "workspace preference");
    LT(cublasLtMatmulPreferenceSetAttribute(x.pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask,
                                            sizeof mask),
       "reduction-scheme preference");
    memset(res, 0, sizeof res);
    cublasStatus_t hs =
        cublasLtMatmulAlgoGetHeuristic(x.h, x.op, x.la, x.lb, x.lc, x.lc, x.pref, 8, res, &nres);
    if (hs == CUBLAS_STATUS_NOT_SUPPORTED) nres = 0;
    else LT(hs, "heuristic");
    for (int i = 0; i < nres; i++) {
      int32_t id = 0, splitk = 0;
      uint32_t tile = 0, stages = 0, red = 0, swz = 0, custom = 0;
      size_t w;
      if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
      LT(cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w), "ID");
      LT(cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                              sizeof splitk, &w), "SPLITK_NUM");
      LT(cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red,
                                              sizeof red, &w), "REDUCTION_SCHEME");
      LT(cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile,
                                              &w), "TILE_ID");
      LT(cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                              sizeof stages, &w), "STAGES_ID");
      LT(cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz,
                                              sizeof swz, &w), "CTA_SWIZZLING");
      LT(cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom,
                                              sizeof custom, &w), "CUSTOM_OPTION");
      if (splitk > 1 || red != CUBLASLT_REDUCTION_SCHEME_NONE) continue;
      *algo = res[i].algo;
      x.wsz = res[i].workspaceSize;
      snprintf(last_algo, sizeof last_algo,
               "algo %d tile %u stages %u splitk %d reduction %u swizzle %u custom %u workspace %zu of %zu bytes",
               (int)id, tile, stages, (int)splitk, red, swz, custom, x.wsz, sizes[t]);
      if (x.wsz) CU(cudaMalloc(&x.ws, x.wsz), "cudaMalloc");
      return LOWP_OK;
    }
  }
  snprintf(last_algo, sizeof last_algo, "none: no algorithm without split-K");
  return fail(err, errlen, LOWP_EUNSUPPORTED, "cuBLASLt has no algorithm without split-K for this GEMM here");
}

}  // namespace

extern "C" int lowp_gemm_cublas_algo(char *buf, size_t len) {
  if (buf && len) snprintf(buf, len, "%s", last_algo);
  return LOWP_OK;
}

extern "C" int lowp_gemm_cublas_cuda(int variant, void *d, const void *a, const void *b,
                                     const void *c, size_t m, size_t n, size_t k, char *err,
                                     size_t errlen) {
  Ctx x;
  int ndev = 0, dev = 0, major = 0, minor = 0, st;
  cublasLtMatmulAlgo_t algo;
  if (variant < 1 || variant > LOWP_CUBLAS_VARIANTS)
    return fail(err, errlen, LOWP_EINVAL, "unknown cuBLAS variant");
  if (!d || !a || !b || !c || m == 0 || n == 0 || k == 0 || m >= (1u << 31) ||
      n >= (1u << 31) || k >= (1u << 31))
    return fail(err, errlen, LOWP_EINVAL, "bad GEMM sizes or pointers");
  const Var &v = vars[variant - 1];
  if (!lowp_cuda_ok(cudaGetDeviceCount(&ndev)) || ndev == 0) {
    return fail(err, errlen, LOWP_EUNSUPPORTED, "no CUDA device");
  }
  CU(cudaGetDevice(&dev), "cudaGetDevice");
  CU(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "attribute");
  CU(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev), "attribute");
  if (major * 10 + minor < v.min_cc)
    return fail(err, errlen, LOWP_EUNSUPPORTED, "this GPU lacks the variant's data type");

  /* host staging: B^T (n x k); D comes back column-major m x n */
  std::vector<char> bt(k * n * v.in_bytes), dt(m * n * v.out_bytes), cd(m * n * v.out_bytes);
  transpose(bt.data(), b, k, n, v.in_bytes);
  if ((st = upload(x, v, a, bt.data(), m, n, k, err, errlen)) ||
      (st = describe(x, v, m, n, k, err, errlen)) || (st = choose(x, &algo, err, errlen)))
    return st;

  /* alpha = 1, beta = 0 in the scale type (fp16 for CUBLAS_COMPUTE_16F) */
  float one32 = 1.0f, zero32 = 0.0f;
  uint16_t one16 = 0x3c00, zero16 = 0; /* fp16 1.0, +0 */
  const void *one = v.scale == CUDA_R_16F ? (const void *)&one16 : (const void *)&one32;
  const void *zero = v.scale == CUDA_R_16F ? (const void *)&zero16 : (const void *)&zero32;
  LT(cublasLtMatmul(x.h, x.op, one, x.dA, x.la, x.dB, x.lb, zero, x.dC, x.lc, x.dC, x.lc, &algo, x.ws,
                    x.wsz, 0),
     "matmul");
  CU(cudaDeviceSynchronize(), "synchronize");
  CU(cudaMemcpy2D(dt.data(), m * v.out_bytes, x.dC, ld16(m, v.out_bytes) * v.out_bytes, m * v.out_bytes, n,
                  cudaMemcpyDeviceToHost),
     "copy D");
  transpose(cd.data(), dt.data(), n, m, v.out_bytes); /* column-major m x n -> row-major */
  add_c(cd.data(), c, m * n, v.out_bytes);           /* the separate step: D = AB + C */
  memcpy(d, cd.data(), m * n * v.out_bytes);
  return LOWP_OK;
}

#undef LT /* (one translation unit with the other .cu files: CMakeLists.txt, LOWP_CUDA_UNITY) */
#undef CU
