/* lowp_amp_gpu -- the transformer layer's kernels on a GPU: cuBLAS GEMMs and simple memory-bound kernels */

/*
 * The GPU counterpart of kernels/train/amp_layer.c, timing the kernels that
 * lib/model/roofline.h lists for `lowp run amp-speedup`. GEMMs are cuBLAS
 * (cublasGemmEx, cublasGemmStridedBatchedEx for attention's batch x heads
 * products; row-major C = op(A) op(B) computed as the column-major
 * C^T = op(B)^T op(A)^T). The memory-bound kernels are one version each,
 * one block of 256 threads per row, math in fp32 registers, loads and
 * stores in the storage type T (float, __half, __nv_bfloat16):
 *   version 1 (rowop_kernel1): softmax (max, sum, normalise: three passes
 *   over the row), its backward, layer norm (two-pass mean and variance),
 *   its backward, GELU (erf) and its backward, dropout (a hash of the
 *   element index against p) and its backward, add.
 * They are timing subjects, not precision subjects: they are not held bit
 * for bit to a CPU twin (the CPU runner does the same arithmetic in fp32).
 * Each GEMM is validated before it is timed (validate(): 16 entries
 * against the host's binary64 product of the same data, within the bound
 * that amp_gpu.h states).
 * Every CUDA and cuBLAS call is checked; timings are cudaEvent pairs, the
 * fastest of reps runs after one warm-up run (no L2 flush: the operands of
 * the full layer exceed L2 anyway, except attention's per-head ones).
 *
 * Build: part of lowp_cuda (CMake, LOWP_CUDA=ON). Run: lowp run amp-speedup
 */

#include "cublas_lazy.h" /* cuBLAS, opened on first use */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda_ok.h"
#include <mpfr.h> /* before extern "C": in C++ it pulls C++ headers */

#include <algorithm>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "gpu/amp_gpu.h"
#include "status.h"
}

namespace {

/* ----------------------------------------------------------- GPU kernels */

__device__ __forceinline__ float ld(const float *p, size_t i) { return p[i]; }
__device__ __forceinline__ float ld(const __half *p, size_t i) { return __half2float(p[i]); }
__device__ __forceinline__ float ld(const __nv_bfloat16 *p, size_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void st(float *p, size_t i, float v) { p[i] = v; }
__device__ __forceinline__ void st(__half *p, size_t i, float v) { p[i] = __float2half_rn(v); }
__device__ __forceinline__ void st(__nv_bfloat16 *p, size_t i, float v) { p[i] = __float2bfloat16_rn(v); }

/* block-wide sum (256 threads) */
__device__ float block_sum(float v, float *sh) {
  int t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] += sh[t + s];
    __syncthreads();
  }
  float r = sh[0];
  __syncthreads();
  return r;
}

__device__ float block_max(float v, float *sh) {
  int t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] = fmaxf(sh[t], sh[t + s]);
    __syncthreads();
  }
  float r = sh[0];
  __syncthreads();
  return r;
}

/* keep element i with probability 1 - p: a 32-bit integer hash of i and
   the seed (splitmix-style finaliser), compared with p 2^32 */
__device__ __forceinline__ bool keep(size_t i, uint32_t seed, uint32_t thr) {
  uint32_t h = (uint32_t)i ^ (uint32_t)(i >> 32) ^ seed;
  h ^= h >> 16; h *= 0x7feb352dU; h ^= h >> 15; h *= 0x846ca68bU; h ^= h >> 16;
  return h >= thr;
}

template <typename T>
__global__ void rowop_kernel1(int op, size_t cols, const T *x, const T *y, T *z, uint8_t *mask,
                              float *mean, float *rstd, float scale, uint32_t thr, uint32_t seed) {
  __shared__ float sh[256];
  size_t r = blockIdx.x, o = r * cols;
  int t = threadIdx.x, nt = blockDim.x;
  switch (op) {
  case LOWP_MOP_SOFTMAX: {
    float m = -INFINITY, s = 0;
    for (size_t j = t; j < cols; j += nt) m = fmaxf(m, ld(x, o + j));
    m = block_max(m, sh);
    for (size_t j = t; j < cols; j += nt) s += expf(ld(x, o + j) - m);
    s = block_sum(s, sh);
    for (size_t j = t; j < cols; j += nt) st(z, o + j, expf(ld(x, o + j) - m) / s);
    break;
  }
  case LOWP_MOP_SOFTMAX_BWD: { /* x = y, y = dy */
    float s = 0;
    for (size_t j = t; j < cols; j += nt) s += ld(x, o + j) * ld(y, o + j);
    s = block_sum(s, sh);
    for (size_t j = t; j < cols; j += nt) st(z, o + j, ld(x, o + j) * (ld(y, o + j) - s));
    break;
  }
  case LOWP_MOP_LN: {
    float s = 0, q = 0, mu, rs;
    for (size_t j = t; j < cols; j += nt) s += ld(x, o + j);
    mu = block_sum(s, sh) / (float)cols;
    for (size_t j = t; j < cols; j += nt) { float d = ld(x, o + j) - mu; q += d * d; }
    rs = rsqrtf(block_sum(q, sh) / (float)cols + 1e-5f);
    for (size_t j = t; j < cols; j += nt) st(z, o + j, (ld(x, o + j) - mu) * rs);
    if (t == 0) { mean[r] = mu; rstd[r] = rs; }
    break;
  }
  case LOWP_MOP_LN_BWD: { /* x = x, y = dy */
    float mu = mean[r], rs = rstd[r], a = 0, b = 0;
    for (size_t j = t; j < cols; j += nt) {
      float dy = ld(y, o + j);
      a += dy;
      b += dy * (ld(x, o + j) - mu) * rs;
    }
    a = block_sum(a, sh) / (float)cols;
    b = block_sum(b, sh) / (float)cols;
    for (size_t j = t; j < cols; j += nt)
      st(z, o + j, rs * (ld(y, o + j) - a - (ld(x, o + j) - mu) * rs * b));
    break;
  }
  case LOWP_MOP_GELU:
    for (size_t j = t; j < cols; j += nt) {
      float v = ld(x, o + j);
      st(z, o + j, 0.5f * v * (1.0f + erff(v * 0.70710678f)));
    }
    break;
  case LOWP_MOP_GELU_BWD:
    for (size_t j = t; j < cols; j += nt) {
      float v = ld(x, o + j);
      float g = 0.5f * (1.0f + erff(v * 0.70710678f)) + v * 0.39894228f * expf(-0.5f * v * v);
      st(z, o + j, ld(y, o + j) * g);
    }
    break;
  case LOWP_MOP_DROPOUT:
    for (size_t j = t; j < cols; j += nt) {
      bool k = keep(o + j, seed, thr);
      mask[o + j] = k;
      st(z, o + j, k ? ld(x, o + j) * scale : 0.0f);
    }
    break;
  case LOWP_MOP_DROPOUT_BWD:
    for (size_t j = t; j < cols; j += nt) st(z, o + j, mask[o + j] ? ld(x, o + j) * scale : 0.0f);
    break;
  case LOWP_MOP_ADD:
    for (size_t j = t; j < cols; j += nt) st(z, o + j, ld(x, o + j) + ld(y, o + j));
    break;
  default:
    break;
  }
}

/* the data: element i of a buffer filled with seed, uniform in [-1, 1)
   (24-bit values, exact in fp32), before rounding to the storage type; the
   host recomputes it to validate the GEMMs */
__host__ __device__ __forceinline__ float data_of(size_t i, uint32_t seed) {
  uint32_t h = (uint32_t)i * 2654435761U ^ (uint32_t)(i >> 32) ^ seed;
  h ^= h >> 13; h *= 0x5bd1e995U; h ^= h >> 15;
  return (float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

template <typename T>
__global__ void fill_kernel(T *p, size_t n, uint32_t seed) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (; i < n; i += (size_t)gridDim.x * blockDim.x) st(p, i, data_of(i, seed));
}

/* -------------------------------------------------------------- launchers */

struct AmpBufs {
  void *a = nullptr, *b = nullptr, *c = nullptr, *x = nullptr, *y = nullptr, *z = nullptr;
  uint8_t *mask = nullptr;
  float *mean = nullptr, *rstd = nullptr;
  ~AmpBufs() {
    cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(x); cudaFree(y); cudaFree(z);
    cudaFree(mask); cudaFree(mean); cudaFree(rstd);
  }
};

/* the cuBLAS data type of a storage format, from its descriptor (width =
   sign + exponent field + fraction bits, as lowp_format_width computes it;
   spelled out here so that lowp_cuda needs nothing from liblowp) */
int cuda_type(cudaDataType_t *t, size_t *bytes, const lowp_format_t *f) {
  int w = (f->has_sign ? 1 : 0) + f->ebits + f->precision - 1;
  if (w == 32 && f->ebits == 8 && f->precision == 24) { *t = CUDA_R_32F; *bytes = 4; return LOWP_OK; }
  if (w == 16 && f->ebits == 5 && f->precision == 11) { *t = CUDA_R_16F; *bytes = 2; return LOWP_OK; }
  if (w == 16 && f->ebits == 8 && f->precision == 8) { *t = CUDA_R_16BF; *bytes = 2; return LOWP_OK; }
  return LOWP_EUNSUPPORTED;
}

template <typename T>
int launch_rowop(const lowp_rkernel_t *k, AmpBufs &g, double dropout, uint32_t seed) {
  float scale = (float)(1.0 / (1.0 - dropout));
  uint32_t thr = (uint32_t)fmin(dropout * 4294967296.0, 4294967295.0);
  rowop_kernel1<T><<<(unsigned)k->rows, 256>>>((int)k->op, k->cols, (const T *)g.x, (const T *)g.y,
                                                 (T *)g.z, g.mask, g.mean, g.rstd, scale, thr, seed);
  return lowp_cuda_ok(cudaGetLastError()) ? LOWP_OK : LOWP_EIO;
}

int run_one(cublasHandle_t h, const lowp_rkernel_t *k, cudaDataType_t dt, cublasComputeType_t ct,
            AmpBufs &g, double dropout) {
  if (k->kind == LOWP_RK_GEMM) {
    const float one = 1.0f, zero = 0.0f;
    int m = (int)k->m, n = (int)k->n, kk = (int)k->k;
    int lda = k->ta ? m : kk, ldb = k->tb ? kk : n;
    cublasOperation_t oa = k->ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = k->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasStatus_t s;
    if (k->count == 1)
      s = cublasGemmEx(h, ob, oa, n, m, kk, &one, g.b, dt, ldb, g.a, dt, lda, &zero, g.c, dt, n, ct,
                       CUBLAS_GEMM_DEFAULT);
    else
      s = cublasGemmStridedBatchedEx(h, ob, oa, n, m, kk, &one, g.b, dt, ldb, (long long)kk * n, g.a,
                                     dt, lda, (long long)m * kk, &zero, g.c, dt, n, (long long)m * n,
                                     (int)k->count, ct, CUBLAS_GEMM_DEFAULT);
    return s == CUBLAS_STATUS_SUCCESS ? LOWP_OK : LOWP_EIO;
  }
  switch (dt) {
  case CUDA_R_32F: return launch_rowop<float>(k, g, dropout, 0x4d41534bU);
  case CUDA_R_16F: return launch_rowop<__half>(k, g, dropout, 0x4d41534bU);
  case CUDA_R_16BF: return launch_rowop<__nv_bfloat16>(k, g, dropout, 0x4d41534bU);
  default: return LOWP_EUNSUPPORTED;
  }
}

/* the stored value of data_of(i, seed) in type dt, on the host (the
   conversion functions of cuda_fp16.h / cuda_bf16.h run on the host too) */
double stored(cudaDataType_t dt, size_t i, uint32_t seed) {
  float v = data_of(i, seed);
  if (dt == CUDA_R_16F) return (double)__half2float(__float2half_rn(v));
  if (dt == CUDA_R_16BF) return (double)__bfloat162float(__float2bfloat16_rn(v));
  return (double)v;
}

/* read C[e] back and widen it */
int load_c(double *y, const void *c, cudaDataType_t dt, size_t w, size_t e) {
  unsigned char buf[4];
  if (!lowp_cuda_ok(cudaMemcpy(buf, (const unsigned char *)c + e * w, w, cudaMemcpyDeviceToHost))) return LOWP_EIO;
  if (dt == CUDA_R_16F) { __half h; memcpy(&h, buf, 2); *y = (double)__half2float(h); }
  else if (dt == CUDA_R_16BF) { __nv_bfloat16 h; memcpy(&h, buf, 2); *y = (double)__bfloat162float(h); }
  else { float f; memcpy(&f, buf, 4); *y = (double)f; }
  return LOWP_OK;
}

/* the GEMM just run against the host's binary64 product on 16 entries
   (amp_gpu.h states the bound); *worst = max share of the bound used */
int validate(double *worst, const lowp_rkernel_t *k, const AmpBufs &g, cudaDataType_t dt, size_t w,
             const lowp_rprec_t *p) {
  size_t total = k->count * k->m * k->n, q;
  double uin = ldexp(1.0, -p->gemm_in->precision), uout = ldexp(1.0, -p->storage->precision);
  double ua = 0x1p-23, kk = 2.0 * (double)k->k;
  double gam = kk * ua < 1 ? kk * ua / (1 - kk * ua) : INFINITY;
  if (!lowp_cuda_ok(cudaDeviceSynchronize())) return LOWP_EIO;
  for (q = 0; q < 16; q++) {
    size_t e = (size_t)(((unsigned long long)q * 7919ULL * 104729ULL + q) % total);
    size_t b = e / (k->m * k->n), i = (e % (k->m * k->n)) / k->n, j = e % k->n, l;
    double x = 0, mag = 0, y, bound;
    int st;
    for (l = 0; l < k->k; l++) {
      size_t ia = b * k->m * k->k + (k->ta ? l * k->m + i : i * k->k + l);
      size_t ib = b * k->k * k->n + (k->tb ? j * k->k + l : l * k->n + j);
      double av = stored(dt, ia, 17u), bv = stored(dt, ib, 18u);
      x += av * bv; /* binary64: 2 x 24-bit products exact, k terms: error << the bound */
      mag += fabs(av * bv);
    }
    if ((st = load_c(&y, g.c, dt, w, e)) != LOWP_OK) return st;
    bound = (4 * uin + 4 * uin * uin + gam) * mag + uout * fabs(x) + 1e-30;
    if (!(fabs(y - x) / bound <= *worst)) *worst = isnan(y) ? INFINITY : fmax(*worst, fabs(y - x) / bound);
  }
  return LOWP_OK;
}

template <typename T>
int fill(void *p, size_t n, uint32_t seed) {
  fill_kernel<T><<<1024, 256>>>((T *)p, n, seed);
  return lowp_cuda_ok(cudaGetLastError()) ? LOWP_OK : LOWP_EIO;
}

}  // namespace

/* ------------------------------------------------------------- public API */

extern "C" int lowp_amp_gpu_device(char *name, size_t len) {
  int n = 0;
  cudaDeviceProp pr;
  if (name && len) name[0] = '\0';
  if (!lowp_cuda_ok(cudaGetDeviceCount(&n)) || n == 0) {
    return LOWP_EUNSUPPORTED;
  }
  if (!lowp_cuda_ok(cudaGetDeviceProperties(&pr, 0))) return LOWP_EIO;
  if (name && len) snprintf(name, len, "%s, sm_%d%d", pr.name, pr.major, pr.minor);
  return LOWP_OK;
}

extern "C" int lowp_amp_gpu_run(double *seconds, double *worst, const lowp_rkernel_t *ks, size_t nk,
                                const lowp_rprec_t *p, double dropout, int reps) {
  cudaDataType_t dt, dtin;
  size_t w, win, na = 1, nb = 1, nc = 1, ne = 1, nr = 1, i;
  cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
  cublasHandle_t h = nullptr;
  cudaEvent_t e0, e1;
  int st = LOWP_OK;
  AmpBufs g;
  if (lowp_amp_gpu_device(nullptr, 0) != LOWP_OK) return LOWP_EUNSUPPORTED;
  if (!seconds || !worst || !ks || !p || reps < 1 || !(dropout >= 0 && dropout < 1)) return LOWP_EINVAL;
  *worst = 0;
  if (cuda_type(&dt, &w, p->storage) != LOWP_OK) return LOWP_EUNSUPPORTED;
  /* tf32: a multiplier narrower than the fp32 storage it reads */
  if (cuda_type(&dtin, &win, p->gemm_in) != LOWP_OK) {
    if (dt == CUDA_R_32F && p->gemm_in->ebits == 8 && p->gemm_in->precision == 11)
      ct = CUBLAS_COMPUTE_32F_FAST_TF32;
    else
      return LOWP_EUNSUPPORTED;
  } else if (dtin != dt) {
    return LOWP_EUNSUPPORTED;
  }
  for (i = 0; i < nk; i++) {
    const lowp_rkernel_t *k = &ks[i];
    /* cuBLAS takes int sizes; a grid takes at most 2^31 - 1 blocks */
    if (k->m > 2147483647u || k->n > 2147483647u || k->k > 2147483647u || k->count > 2147483647u ||
        k->rows > 2147483647u)
      return LOWP_ENOMEM;
    if (k->kind == LOWP_RK_GEMM) {
      na = std::max(na, k->count * k->m * k->k);
      nb = std::max(nb, k->count * k->k * k->n);
      nc = std::max(nc, k->count * k->m * k->n);
    } else {
      ne = std::max(ne, k->rows * k->cols);
      nr = std::max(nr, k->rows);
    }
  }
  if (!lowp_cuda_ok(cudaMalloc(&g.a, na * w)) || !lowp_cuda_ok(cudaMalloc(&g.b, nb * w)) ||
      !lowp_cuda_ok(cudaMalloc(&g.c, nc * w)) || !lowp_cuda_ok(cudaMalloc(&g.x, ne * w)) ||
      !lowp_cuda_ok(cudaMalloc(&g.y, ne * w)) || !lowp_cuda_ok(cudaMalloc(&g.z, ne * w)) ||
      !lowp_cuda_ok(cudaMalloc((void **)&g.mask, ne)) ||
      !lowp_cuda_ok(cudaMalloc((void **)&g.mean, nr * sizeof(float))) ||
      !lowp_cuda_ok(cudaMalloc((void **)&g.rstd, nr * sizeof(float)))) {
    return LOWP_ENOMEM;
  }
  {
    void *bufs[5] = {g.a, g.b, g.x, g.y, g.c};
    size_t ns[5] = {na, nb, ne, ne, nc};
    for (int b = 0; b < 5 && st == LOWP_OK; b++)
      st = dt == CUDA_R_32F ? fill<float>(bufs[b], ns[b], 17u + b)
         : dt == CUDA_R_16F ? fill<__half>(bufs[b], ns[b], 17u + b)
                            : fill<__nv_bfloat16>(bufs[b], ns[b], 17u + b);
    if (st == LOWP_OK && (!lowp_cuda_ok(cudaMemset(g.mean, 0, nr * sizeof(float))) ||
                          !lowp_cuda_ok(cudaMemset(g.mask, 1, ne))))
      st = LOWP_EIO;
    if (st != LOWP_OK) return st;
  }
  {
    /* rstd = 1 for the backward of a layer norm run before its forward */
    float *one = (float *)malloc(nr * sizeof(float));
    if (!one) return LOWP_ENOMEM;
    for (i = 0; i < nr; i++) one[i] = 1.0f;
    if (!lowp_cuda_ok(cudaMemcpy(g.rstd, one, nr * sizeof(float), cudaMemcpyHostToDevice))) st = LOWP_EIO;
    free(one);
    if (st != LOWP_OK) return st;
  }
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return LOWP_EIO;
  if (!lowp_cuda_ok(cudaEventCreate(&e0)) || !lowp_cuda_ok(cudaEventCreate(&e1))) {
    cublasDestroy(h);
    return LOWP_EIO;
  }
  for (i = 0; i < nk && st == LOWP_OK; i++) {
    float best = INFINITY;
    st = run_one(h, &ks[i], dt, ct, g, dropout); /* warm-up, and the run validated */
    if (st == LOWP_OK && ks[i].kind == LOWP_RK_GEMM) st = validate(worst, &ks[i], g, dt, w, p);
    for (int r = 0; r < reps && st == LOWP_OK; r++) {
      float ms = 0;
      if (!lowp_cuda_ok(cudaEventRecord(e0))) { st = LOWP_EIO; break; }
      st = run_one(h, &ks[i], dt, ct, g, dropout);
      if (st != LOWP_OK) break;
      if (!lowp_cuda_ok(cudaEventRecord(e1)) || !lowp_cuda_ok(cudaEventSynchronize(e1)) ||
          !lowp_cuda_ok(cudaEventElapsedTime(&ms, e0, e1))) {
        st = LOWP_EIO;
        break;
      }
      if (ms < best) best = ms;
    }
    seconds[i] = 1e-3 * (double)best;
  }
  if (!lowp_cuda_ok(cudaDeviceSynchronize()) && st == LOWP_OK) st = LOWP_EIO;
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cublasDestroy(h);
  return st;
}
