/* lowp_probe_gpu -- one dot on the tensor cores: mma.sync chained through the accumulator */

/*
 * See kernels/gpu/probe_gpu.h. One warp; every row of A is the vector a, every
 * column of B the vector b, every element of C the value c, so D(0,0), held
 * by lane 0, is the dot. The k index of each fragment element follows the
 * PTX ISA (NVIDIA, "Parallel Thread Execution ISA", section "Matrix
 * Fragments for mma.m16n8k16 / m16n8k8 / m16n8k32"), with g = lane / 4 and
 * t = lane % 4:
 *   m16n8k16 (.f16, .bf16): A regs {2t,2t+1}, {2t,2t+1}, {2t+8,2t+9}, {2t+8,2t+9};
 *                           B regs {2t,2t+1}, {2t+8,2t+9}
 *   m16n8k8 (.tf32):        A regs t, t, t+4, t+4; B regs t, t+4
 *   m16n8k32 (.e4m3/.e5m2): A regs 4t+0..3, 4t+0..3, 4t+16..19, 4t+16..19;
 *                           B regs 4t+0..3, 4t+16..19
 * (lower element in the lower bits of each register). The inputs are values
 * of the format, so every conversion below is exact.
 * Build: part of lowp_cuda; fp8 needs sm_89+, the rest sm_80+. Run: only
 * with a GPU (lowp probe; tests/cuda skips without one).
 */

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda_ok.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "gpu/probe_gpu.h"
#include "status.h"
}

enum { CLS_F16 = 0, CLS_BF16 = 1, CLS_TF32 = 2, CLS_E4M3 = 3, CLS_E5M2 = 4 };

#define MAXN 1024

/* ---------------------------------------------------------- GPU kernels */

__device__ static float at(const float *v, int n, int k) { return k < n ? v[k] : 0.0f; }

__device__ static uint32_t pack_f16(float lo, float hi) {
  __half2 h = __halves2half2(__float2half_rn(lo), __float2half_rn(hi));
  uint32_t u;
  memcpy(&u, &h, 4);
  return u;
}

__device__ static uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 h = __halves2bfloat162(__float2bfloat16_rn(lo), __float2bfloat16_rn(hi));
  uint32_t u;
  memcpy(&u, &h, 4);
  return u;
}

/* four fp8 values, the first in the lowest byte */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
__device__ static uint32_t pack_fp8(float x0, float x1, float x2, float x3, int e5m2) {
  unsigned short lo = 0, hi = 0;
#if __CUDA_ARCH__ >= 890
  if (e5m2) {
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(x1), "f"(x0));
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(x3), "f"(x2));
  } else {
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(x1), "f"(x0));
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(x3), "f"(x2));
  }
#else
  (void)x0; (void)x1; (void)x2; (void)x3; (void)e5m2;
#endif
  return (uint32_t)lo | ((uint32_t)hi << 16);
}
#endif

__global__ void lowp_probe_kernel(const float *a, const float *b, int n, float c, int cls, int out16,
                                  float *d) {
  int lane = threadIdx.x, t = lane & 3;
  float acc[4] = {c, c, c, c};
  uint32_t acch[2];
  int base;
  acch[0] = acch[1] = pack_f16(c, c);
#if __CUDA_ARCH__ >= 800
  if (cls == CLS_F16 || cls == CLS_BF16) {
    for (base = 0; base < n; base += 16) {
      const float *A = a + base, *B = b + base;
      int m = n - base;
      uint32_t ra[4], rb[2];
      int k0 = 2 * t, k1 = 2 * t + 8;
      if (cls == CLS_F16) {
        ra[0] = ra[1] = pack_f16(at(A, m, k0), at(A, m, k0 + 1));
        ra[2] = ra[3] = pack_f16(at(A, m, k1), at(A, m, k1 + 1));
        rb[0] = pack_f16(at(B, m, k0), at(B, m, k0 + 1));
        rb[1] = pack_f16(at(B, m, k1), at(B, m, k1 + 1));
      } else {
        ra[0] = ra[1] = pack_bf16(at(A, m, k0), at(A, m, k0 + 1));
        ra[2] = ra[3] = pack_bf16(at(A, m, k1), at(A, m, k1 + 1));
        rb[0] = pack_bf16(at(B, m, k0), at(B, m, k0 + 1));
        rb[1] = pack_bf16(at(B, m, k1), at(B, m, k1 + 1));
      }
      if (cls == CLS_F16 && out16) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                     : "+r"(acch[0]), "+r"(acch[1])
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
      } else if (cls == CLS_F16) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
      } else {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
      }
    }
  } else if (cls == CLS_TF32) {
    for (base = 0; base < n; base += 8) {
      const float *A = a + base, *B = b + base;
      int m = n - base;
      uint32_t ra[4], rb[2];
      ra[0] = ra[1] = __float_as_uint(at(A, m, t));
      ra[2] = ra[3] = __float_as_uint(at(A, m, t + 4));
      rb[0] = __float_as_uint(at(B, m, t));
      rb[1] = __float_as_uint(at(B, m, t + 4));
      asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                   : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                   : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
    }
  }
#endif
#if __CUDA_ARCH__ >= 890
  if (cls == CLS_E4M3 || cls == CLS_E5M2) {
    int e5 = cls == CLS_E5M2;
    for (base = 0; base < n; base += 32) {
      const float *A = a + base, *B = b + base;
      int m = n - base, k0 = 4 * t, k1 = 4 * t + 16;
      uint32_t ra[4], rb[2];
      ra[0] = ra[1] = pack_fp8(at(A, m, k0), at(A, m, k0 + 1), at(A, m, k0 + 2), at(A, m, k0 + 3), e5);
      ra[2] = ra[3] = pack_fp8(at(A, m, k1), at(A, m, k1 + 1), at(A, m, k1 + 2), at(A, m, k1 + 3), e5);
      rb[0] = pack_fp8(at(B, m, k0), at(B, m, k0 + 1), at(B, m, k0 + 2), at(B, m, k0 + 3), e5);
      rb[1] = pack_fp8(at(B, m, k1), at(B, m, k1 + 1), at(B, m, k1 + 2), at(B, m, k1 + 3), e5);
      if (out16) {
        if (e5)
          asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                       : "+r"(acch[0]), "+r"(acch[1])
                       : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
        else
          asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                       : "+r"(acch[0]), "+r"(acch[1])
                       : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
      } else {
        if (e5)
          asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                       : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                       : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
        else
          asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                       : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                       : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
      }
    }
  }
#endif
  if (lane == 0) {
    if (out16) {
      __half2 h;
      memcpy(&h, &acch[0], 4);
      d[0] = __low2float(h);
    } else {
      d[0] = acc[0];
    }
  }
}

/* ------------------------------------------------------ host helpers */

/* the instruction class of a format, from its data (precision, exponent range) */
static int cls_of(const lowp_format_t *f) {
  if (f->precision == LOWP_FMT_FP16.precision && f->emax == LOWP_FMT_FP16.emax) return CLS_F16;
  if (f->precision == LOWP_FMT_BF16.precision && f->emax == LOWP_FMT_BF16.emax) return CLS_BF16;
  if (f->precision == LOWP_FMT_TF32.precision && f->emax == LOWP_FMT_TF32.emax) return CLS_TF32;
  if (f->precision == LOWP_FMT_E4M3.precision && f->emax == LOWP_FMT_E4M3.emax) return CLS_E4M3;
  if (f->precision == LOWP_FMT_E5M2.precision && f->emax == LOWP_FMT_E5M2.emax) return CLS_E5M2;
  return -1;
}

static int is16(const lowp_format_t *out) {
  return out->precision == LOWP_FMT_FP16.precision && out->emax == LOWP_FMT_FP16.emax;
}

/* ------------------------------------------------------------ public API */

extern "C" int lowp_probe_gpu_info(char *name, size_t len, int *sm) {
  int n = 0;
  cudaDeviceProp p;
  if (!lowp_cuda_ok(cudaGetDeviceCount(&n)) || n < 1) {
    return 0;
  }
  if (!lowp_cuda_ok(cudaGetDeviceProperties(&p, 0))) {
    return 0;
  }
  if (name && len) {
    strncpy(name, p.name, len - 1);
    name[len - 1] = '\0';
  }
  if (sm) *sm = 10 * p.major + p.minor;
  return 1;
}

extern "C" int lowp_probe_gpu_k(const lowp_format_t *in, const lowp_format_t *out, int sm) {
  int c = cls_of(in), o16 = is16(out);
  int o32 = out->precision == LOWP_FMT_FP32.precision && out->emax == LOWP_FMT_FP32.emax;
  if (c < 0 || (!o16 && !o32)) return 0;
  if (c == CLS_F16) return sm >= 80 ? 16 : 0;
  if (c == CLS_BF16) return sm >= 80 && o32 ? 16 : 0;
  if (c == CLS_TF32) return sm >= 80 && o32 ? 8 : 0;
  return sm >= 89 ? 32 : 0;
}

struct lowp_probe_gpu {
  float *da, *db, *dd; /* device buffers: a, b (MAXN each), d */
  int sm;              /* compute capability, 10 major + minor */
};

extern "C" void lowp_probe_gpu_close(lowp_probe_gpu_t *g) {
  if (!g) return;
  if (g->da) cudaFree(g->da);
  if (g->db) cudaFree(g->db);
  if (g->dd) cudaFree(g->dd);
  free(g);
}

extern "C" int lowp_probe_gpu_open(lowp_probe_gpu_t **out) {
  lowp_probe_gpu_t *g;
  *out = NULL;
  g = (lowp_probe_gpu_t *)calloc(1, sizeof *g);
  if (!g) return LOWP_ENOMEM;
  if (!lowp_probe_gpu_info(NULL, 0, &g->sm)) {
    free(g);
    return LOWP_EUNSUPPORTED;
  }
  if (!lowp_cuda_ok(cudaMalloc((void **)&g->da, MAXN * sizeof(float))) ||
      !lowp_cuda_ok(cudaMalloc((void **)&g->db, MAXN * sizeof(float))) ||
      !lowp_cuda_ok(cudaMalloc((void **)&g->dd, sizeof(float)))) {
    lowp_probe_gpu_close(g);
    return LOWP_EIO;
  }
  *out = g;
  return LOWP_OK;
}

extern "C" int lowp_probe_gpu_dot(void *ctx, double *d, const double *a, const double *b, size_t n,
                                  double c, const lowp_format_t *in, const lowp_format_t *out) {
  lowp_probe_gpu_t *g = (lowp_probe_gpu_t *)ctx;
  float ha[MAXN], hb[MAXN], r = 0;
  int cls = cls_of(in);
  size_t i;
  if (!g) return LOWP_EUNSUPPORTED;
  if (n > MAXN) return LOWP_EINVAL;
  if (lowp_probe_gpu_k(in, out, g->sm) == 0) return LOWP_EUNSUPPORTED;
  for (i = 0; i < n; i++) {
    ha[i] = (float)a[i];
    hb[i] = (float)b[i];
    if ((double)ha[i] != a[i] || (double)hb[i] != b[i]) return LOWP_EINVAL;
  }
  if (n && (!lowp_cuda_ok(cudaMemcpy(g->da, ha, n * sizeof(float), cudaMemcpyHostToDevice)) ||
            !lowp_cuda_ok(cudaMemcpy(g->db, hb, n * sizeof(float), cudaMemcpyHostToDevice))))
    return LOWP_EIO;
  lowp_probe_kernel<<<1, 32>>>(g->da, g->db, (int)n, (float)c, cls, is16(out), g->dd);
  if (!lowp_cuda_ok(cudaGetLastError()) || !lowp_cuda_ok(cudaMemcpy(&r, g->dd, sizeof r, cudaMemcpyDeviceToHost)))
    return LOWP_EIO;
  *d = (double)r;
  return LOWP_OK;
}

#undef MAXN /* (one translation unit with the other .cu files: CMakeLists.txt, LOWP_CUDA_UNITY) */
