/* lowp_rowk_cuda -- row kernels on the GPU: sum, softmax, layer norm, cross-entropy, grad scaler */

/*
 * version 1 of each (there is one): one block of LOWP_KA_THREADS threads
 * per row, the reduction tree of kernels/common/karith.h ("THE LAUNCH ORDER"):
 * per-thread strided folds in increasing index, a __shfl_down_sync tree
 * (offsets 16, 8, 4, 2, 1) in each warp, and thread 0 folding the 8 warp
 * results in warp order. Arithmetic: karith.h only (compiled with
 * --fmad=false, IEEE division and square root), so the CPU twins in
 * kernels/cpu/rowk.c reproduce every bit. Every CUDA call is checked and
 * turned into a status; nothing prints.
 * Build: part of lowp_cuda (CMake). Test: tests/cuda/trowk_gpu.c.
 */

#include <cuda_runtime.h>

#include "cuda_ok.h"
#include <stdint.h>

extern "C" {
#include "common/fpxd.h"
#include "common/rowk.h"
#include "status.h"
}

#define T LOWP_KA_THREADS
#define W LOWP_KA_WARPS

/* ---------------------------------------------------------- GPU kernels */

namespace {

struct OpAdd {
  lowp_ka_fmt_t f;
  __device__ float operator()(float a, float b) const { return lowp_ka_add(a, b, f); }
};
struct OpMax {
  __device__ float operator()(float a, float b) const { return lowp_ka_max(a, b); }
};

/* steps 2 and 3 of the launch order on this thread's partial v; every
   thread of the block gets the result. fx (nullptr: untraced) gets each
   meaningful operation by its tree key (common/fpxd.h), as the CPU twin's
   tree_add gives it. */
template <class Op>
__device__ float block_reduce(float v, Op op, lowp_fpxd_t *fx = nullptr) {
  __shared__ float warp_r[W];
  __shared__ float result;
  int lane = threadIdx.x % 32, w = threadIdx.x / 32, lev = 0;
  for (int off = 16; off >= 1; off /= 2, lev++) {
    float o = __shfl_down_sync(0xffffffffu, v, off);
    float nv = op(v, o); /* meaningful for lanes < off only (the others go unread) */
    if (fx && lane < off)
      lowp_fpxd_op(fx, lowp_fpxd_key(blockIdx.x, LOWP_FPXD_TREE, 256u * lev + threadIdx.x, 0), v, o, nv, 0);
    v = nv;
  }
  if (lane == 0) warp_r[w] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float r = warp_r[0];
    for (int i = 1; i < W; i++) {
      float nr = op(r, warp_r[i]);
      if (fx) lowp_fpxd_op(fx, lowp_fpxd_key(blockIdx.x, LOWP_FPXD_TREE, 256u * 5 + i, 0), r, warp_r[i], nr, 0);
      r = nr;
    }
    result = r;
  }
  __syncthreads();
  float r = result;
  __syncthreads(); /* result and warp_r may be reused by the next reduction */
  return r;
}

__device__ lowp_ka_welford_t block_welford(lowp_ka_welford_t v) {
  __shared__ lowp_ka_welford_t warp_r[W];
  __shared__ lowp_ka_welford_t result;
  int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  for (int off = 16; off >= 1; off /= 2) {
    lowp_ka_welford_t o;
    o.n = __shfl_down_sync(0xffffffffu, v.n, off);
    o.mean = __shfl_down_sync(0xffffffffu, v.mean, off);
    o.m2 = __shfl_down_sync(0xffffffffu, v.m2, off);
    v = lowp_ka_welford_merge(v, o);
  }
  if (lane == 0) warp_r[w] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    lowp_ka_welford_t r = warp_r[0];
    for (int i = 1; i < W; i++) r = lowp_ka_welford_merge(r, warp_r[i]);
    result = r;
  }
  __syncthreads();
  lowp_ka_welford_t r = result;
  __syncthreads();
  return r;
}

enum { R_SUM, R_SQ, R_DEV2, R_EXP, R_EXPSHIFT };

/* a softmax exp term, traced: exp(x_i) (naive) or exp(x_i - c) (kernels/cpu/rowk.c exp_term) */
__device__ float exp_term(float v, int what, float c, lowp_fpxd_t *fx, unsigned phase, uint32_t i) {
  float d = v;
  if (what == R_EXPSHIFT) {
    d = v - c;
    lowp_fpxd_op(fx, lowp_fpxd_key(blockIdx.x, phase, i, LOWP_FPXD_SUB), v, c, d, 0);
  }
  float e = lowp_ka_expf(d);
  lowp_fpxd_op(fx, lowp_fpxd_key(blockIdx.x, phase, i, LOWP_FPXD_EXP), d, 0.0f, e, 0);
  return e;
}

/* step 1 + tree: the sum of f(x_i) in format acc (kernels/cpu/rowk.c row_sum), traced into fx */
__device__ float row_sum(const float *x, uint32_t n, int what, float c, lowp_ka_fmt_t acc,
                         lowp_fpxd_t *fx = nullptr) {
  float a = 0.0f;
  for (uint32_t i = threadIdx.x; i < n; i += T) {
    float v = x[i];
    if (what == R_SQ) v = v * v;
    else if (what == R_DEV2) v = (v - c) * (v - c);
    else if (what == R_EXP || what == R_EXPSHIFT) v = exp_term(v, what, c, fx, LOWP_FPXD_FOLD, i);
    float a0 = a;
    a = lowp_ka_add(a, v, acc);
    lowp_fpxd_op(fx, lowp_fpxd_key(blockIdx.x, LOWP_FPXD_FOLD, i, LOWP_FPXD_ADD), a0, v, a, 0);
  }
  return block_reduce(a, OpAdd{acc}, fx);
}

__device__ float row_max(const float *x, uint32_t n) {
  float a = __uint_as_float(0xff800000u);
  for (uint32_t i = threadIdx.x; i < n; i += T) a = lowp_ka_max(a, x[i]);
  return block_reduce(a, OpMax{});
}

__device__ const lowp_ka_fmt_t F32 = {24, -126, 127};

__global__ void __launch_bounds__(T) rsum_kernel1(float *y, const float *x, uint32_t n,
                                                  lowp_ka_fmt_t acc) {
  float r = row_sum(x + (size_t)blockIdx.x * n, n, R_SUM, 0.0f, acc);
  if (threadIdx.x == 0) y[blockIdx.x] = r;
}

__global__ void __launch_bounds__(T) softmax_kernel1(float *y, const float *x, uint32_t n,
                                                     int stable, lowp_fpxd_t *fx) {
  const float *xr = x + (size_t)blockIdx.x * n;
  float *yr = y + (size_t)blockIdx.x * n;
  int what = stable ? R_EXPSHIFT : R_EXP;
  float m = stable ? row_max(xr, n) : 0.0f;
  float s = row_sum(xr, n, what, m, F32, fx);
  for (uint32_t i = threadIdx.x; i < n; i += T) {
    float e = exp_term(xr[i], what, m, fx, LOWP_FPXD_OUT, i);
    yr[i] = e / s;
    lowp_fpxd_op(fx, lowp_fpxd_key(blockIdx.x, LOWP_FPXD_OUT, i, LOWP_FPXD_DIV), e, s, yr[i], 1);
  }
}

__global__ void __launch_bounds__(T) layernorm_kernel1(float *y, float *mean, float *var,
                                                       const float *x, uint32_t n, float eps,
                                                       int variant) {
  const float *xr = x + (size_t)blockIdx.x * n;
  float *yr = y + (size_t)blockIdx.x * n;
  float fn = (float)n, mu, v;
  if (variant == LOWP_ROWK_LN_ONEPASS) {
    float S = row_sum(xr, n, R_SUM, 0.0f, F32);
    float Q = row_sum(xr, n, R_SQ, 0.0f, F32);
    v = lowp_ka_onepass_var(S, Q, fn, &mu);
  } else if (variant == LOWP_ROWK_LN_TWOPASS) {
    mu = row_sum(xr, n, R_SUM, 0.0f, F32) / fn;
    v = row_sum(xr, n, R_DEV2, mu, F32) / fn;
  } else {
    lowp_ka_welford_t a = {0.0f, 0.0f, 0.0f};
    for (uint32_t i = threadIdx.x; i < n; i += T) a = lowp_ka_welford_add(a, xr[i]);
    lowp_ka_welford_t w = block_welford(a);
    mu = w.mean;
    v = w.m2 / fn;
  }
  float rs = lowp_ka_rstd(v, eps);
  for (uint32_t i = threadIdx.x; i < n; i += T) yr[i] = (xr[i] - mu) * rs;
  if (threadIdx.x == 0) {
    mean[blockIdx.x] = mu;
    var[blockIdx.x] = v;
  }
}

__global__ void __launch_bounds__(T) xent_kernel1(float *loss, const float *x,
                                                  const int32_t *target, uint32_t n) {
  const float *xr = x + (size_t)blockIdx.x * n;
  float m = row_max(xr, n);
  float s = row_sum(xr, n, R_EXPSHIFT, m, F32);
  if (threadIdx.x == 0) loss[blockIdx.x] = lowp_ka_logf(s) - (xr[target[blockIdx.x]] - m);
}

__global__ void unscale_kernel1(float *g, size_t n, float inv_scale, int *found, lowp_fpxd_t *fx) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = g[i], v0 = v;
  if (lowp_ka_unscale(&v, inv_scale)) *found = 1; /* every writer stores the same 1 */
  if (inv_scale != 1.0f) lowp_fpxd_op(fx, (unsigned long long)i << 4, v0, inv_scale, v, 0);
  g[i] = v;
}

__global__ void scaler_update_kernel1(float *scale, int32_t *tracker, int found_inf,
                                      double growth, double backoff, int32_t interval) {
  lowp_ka_scaler_update(scale, tracker, found_inf, growth, backoff, interval);
}

/* ------------------------------------------------------------ launchers */

/* device buffers freed on every path */
struct RowkBufs {
  void *p[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  int n = 0;
  ~RowkBufs() {
    for (int i = 0; i < n; i++)
      if (p[i]) (void)cudaFree(p[i]);
  }
  int alloc(void **out, size_t bytes) {
    if (n >= 6) return LOWP_EINVAL;
    if (!lowp_cuda_ok(cudaMalloc(&p[n], bytes ? bytes : 1))) {
      p[n] = nullptr;
      return LOWP_ENOMEM;
    }
    *out = p[n++];
    return LOWP_OK;
  }
};

int have_device() {
  int n = 0;
  if (!lowp_cuda_ok(cudaGetDeviceCount(&n))) {
    return 0;
  }
  return n > 0;
}

bool sizes_ok(size_t rows, size_t n) { return n >= 1 && n < (1u << 24) && rows < (1u << 31); }

int h2d(void *d, const void *h, size_t bytes) {
  return lowp_cuda_ok(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice)) ? LOWP_OK : LOWP_EIO;
}
int d2h(void *h, const void *d, size_t bytes) {
  return lowp_cuda_ok(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost)) ? LOWP_OK : LOWP_EIO;
}
int launched() {
  if (!lowp_cuda_ok(cudaGetLastError())) return LOWP_EIO;
  return lowp_cuda_ok(cudaDeviceSynchronize()) ? LOWP_OK : LOWP_EIO;
}

}  // namespace

#define TRY(x)                      \
  do {                              \
    int st_ = (x);                  \
    if (st_ != LOWP_OK) return st_; \
  } while (0)

extern "C" int lowp_rsum_cuda(float *y, const float *x, size_t rows, size_t n,
                              lowp_ka_fmt_t acc) {
  RowkBufs b;
  void *dx, *dy;
  if (!y || !x || !sizes_ok(rows, n) || acc.p < 1 || acc.p > 24) return LOWP_EINVAL;
  if (!have_device()) return LOWP_EUNSUPPORTED;
  if (rows == 0) return LOWP_OK;
  TRY(b.alloc(&dx, rows * n * sizeof(float)));
  TRY(b.alloc(&dy, rows * sizeof(float)));
  TRY(h2d(dx, x, rows * n * sizeof(float)));
  rsum_kernel1<<<(unsigned)rows, T>>>((float *)dy, (const float *)dx, (uint32_t)n, acc);
  TRY(launched());
  return d2h(y, dy, rows * sizeof(float));
}

extern "C" int lowp_softmax_cuda(float *y, const float *x, size_t rows, size_t n, int stable) {
  return lowp_softmax_fpx_cuda(y, x, rows, n, stable, NULL);
}

extern "C" int lowp_softmax_fpx_cuda(float *y, const float *x, size_t rows, size_t n, int stable,
                                     lowp_fpxd_t *trace) {
  RowkBufs b;
  void *dx, *dy, *dt = nullptr;
  if (!y || !x || !sizes_ok(rows, n)) return LOWP_EINVAL;
  if (!have_device()) return LOWP_EUNSUPPORTED;
  if (trace) lowp_fpxd_init(trace);
  if (rows == 0) return LOWP_OK;
  TRY(b.alloc(&dx, rows * n * sizeof(float)));
  TRY(b.alloc(&dy, rows * n * sizeof(float)));
  TRY(h2d(dx, x, rows * n * sizeof(float)));
  if (trace) {
    TRY(b.alloc(&dt, sizeof *trace));
    TRY(h2d(dt, trace, sizeof *trace));
  }
  softmax_kernel1<<<(unsigned)rows, T>>>((float *)dy, (const float *)dx, (uint32_t)n, stable,
                                         (lowp_fpxd_t *)dt);
  TRY(launched());
  if (trace) TRY(d2h(trace, dt, sizeof *trace));
  return d2h(y, dy, rows * n * sizeof(float));
}

extern "C" int lowp_layernorm_cuda(float *y, float *mean, float *var, const float *x,
                                   size_t rows, size_t n, float eps, int variant) {
  RowkBufs b;
  void *dx, *dy, *dm, *dv;
  if (!y || !mean || !var || !x || !sizes_ok(rows, n) || variant < 0 || variant > 2)
    return LOWP_EINVAL;
  if (!have_device()) return LOWP_EUNSUPPORTED;
  if (rows == 0) return LOWP_OK;
  TRY(b.alloc(&dx, rows * n * sizeof(float)));
  TRY(b.alloc(&dy, rows * n * sizeof(float)));
  TRY(b.alloc(&dm, rows * sizeof(float)));
  TRY(b.alloc(&dv, rows * sizeof(float)));
  TRY(h2d(dx, x, rows * n * sizeof(float)));
  layernorm_kernel1<<<(unsigned)rows, T>>>((float *)dy, (float *)dm, (float *)dv,
                                           (const float *)dx, (uint32_t)n, eps, variant);
  TRY(launched());
  TRY(d2h(y, dy, rows * n * sizeof(float)));
  TRY(d2h(mean, dm, rows * sizeof(float)));
  return d2h(var, dv, rows * sizeof(float));
}

extern "C" int lowp_xent_cuda(float *loss, const float *x, const int32_t *target, size_t rows,
                              size_t n) {
  RowkBufs b;
  void *dx, *dt, *dl;
  size_t r;
  if (!loss || !x || !target || !sizes_ok(rows, n)) return LOWP_EINVAL;
  for (r = 0; r < rows; r++)
    if (target[r] < 0 || (size_t)target[r] >= n) return LOWP_EINVAL;
  if (!have_device()) return LOWP_EUNSUPPORTED;
  if (rows == 0) return LOWP_OK;
  TRY(b.alloc(&dx, rows * n * sizeof(float)));
  TRY(b.alloc(&dt, rows * sizeof(int32_t)));
  TRY(b.alloc(&dl, rows * sizeof(float)));
  TRY(h2d(dx, x, rows * n * sizeof(float)));
  TRY(h2d(dt, target, rows * sizeof(int32_t)));
  xent_kernel1<<<(unsigned)rows, T>>>((float *)dl, (const float *)dx, (const int32_t *)dt,
                                      (uint32_t)n);
  TRY(launched());
  return d2h(loss, dl, rows * sizeof(float));
}

extern "C" int lowp_unscale_cuda(float *g, size_t n, float inv_scale, int *found_inf) {
  return lowp_unscale_fpx_cuda(g, n, inv_scale, found_inf, NULL);
}

extern "C" int lowp_unscale_fpx_cuda(float *g, size_t n, float inv_scale, int *found_inf,
                                     lowp_fpxd_t *trace) {
  RowkBufs b;
  void *dg, *df, *dt = nullptr;
  int zero = 0;
  if (!found_inf || (n && !g) || n >= ((size_t)1 << 39)) return LOWP_EINVAL;
  if (!have_device()) return LOWP_EUNSUPPORTED;
  if (trace) lowp_fpxd_init(trace);
  TRY(b.alloc(&dg, n * sizeof(float)));
  TRY(b.alloc(&df, sizeof(int)));
  TRY(h2d(df, &zero, sizeof zero));
  if (trace) {
    TRY(b.alloc(&dt, sizeof *trace));
    TRY(h2d(dt, trace, sizeof *trace));
  }
  if (n) {
    TRY(h2d(dg, g, n * sizeof(float)));
    unscale_kernel1<<<(unsigned)((n + 255) / 256), 256>>>((float *)dg, n, inv_scale, (int *)df,
                                                        (lowp_fpxd_t *)dt);
    TRY(launched());
    TRY(d2h(g, dg, n * sizeof(float)));
  }
  if (trace) TRY(d2h(trace, dt, sizeof *trace));
  return d2h(found_inf, df, sizeof(int));
}

extern "C" int lowp_scaler_update_cuda(float *scale, int32_t *tracker, int found_inf,
                                       double growth, double backoff, int32_t interval) {
  RowkBufs b;
  void *ds, *dt;
  if (!scale || !tracker) return LOWP_EINVAL;
  if (!have_device()) return LOWP_EUNSUPPORTED;
  TRY(b.alloc(&ds, sizeof(float)));
  TRY(b.alloc(&dt, sizeof(int32_t)));
  TRY(h2d(ds, scale, sizeof(float)));
  TRY(h2d(dt, tracker, sizeof(int32_t)));
  scaler_update_kernel1<<<1, 1>>>((float *)ds, (int32_t *)dt, found_inf, growth, backoff,
                                  interval);
  TRY(launched());
  TRY(d2h(scale, ds, sizeof(float)));
  return d2h(tracker, dt, sizeof(int32_t));
}

#undef T /* (one translation unit with the other .cu files: CMakeLists.txt, LOWP_CUDA_UNITY) */
#undef W
#undef TRY
