/* lowp_gemm_mma_cuda -- lowp's own tensor-core GEMMs with mma.sync: fp16, bf16, tf32, e4m3, e5m2 */

/*
 * versions 1-5 (kernels/gpu/gemm_gpu.h lists them and states THE ORDER): one
 * warp (32 threads, one block) per 16 x 8 tile of C; the warp's fp32
 * accumulator fragment starts as C and goes through one mma.sync per K
 * products in increasing k (K = 16 for fp16/bf16, 8 for tf32, 32 for fp8),
 * each result being the next instruction's C. No shared memory, no split-k,
 * no promotion: the arithmetic is the tensor core's alone, so that the
 * tensor-core model chained in the same order is the CPU twin
 * (kernels/cpu/gemm_tc.c with the GPU's preset and promote=0).
 *
 * Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16 / k8 /
 * k32"): lane = 4 g + t (g = groupID 0..7, t = threadID_in_group 0..3);
 *   16-bit types, m16n8k16: a_r holds A[g + 8 (r&1)][2t + 8 (r>>1) + {0,1}],
 *     b_r holds B[2t + 8r + {0,1}][g];
 *   tf32, m16n8k8: a_r = A[g + 8 (r&1)][t + 4 (r>>1)], b_r = B[t + 4r][g];
 *   fp8, m16n8k32: a_r holds A[g + 8 (r&1)][4t + 16 (r>>1) + {0..3}],
 *     b_r holds B[4t + 16r + {0..3}][g];
 *   C/D (f32): c_i = C[g + 8 (i>>1)][2t + (i&1)].
 * Lower-indexed elements sit in the lower bits of a register. Out-of-range
 * rows, columns and k are read as zero (padding). The fp8 instructions
 * exist from sm_89: they are compiled only there (__CUDA_ARCH__ >= 890)
 * and the launcher refuses fp8 on older devices.
 */

#include <cuda_runtime.h>

#include "cuda_ok.h"
#include <stdint.h>
#include <stdio.h>

#include "ptx.h"

extern "C" {
#include "gpu/gemm_gpu.h"
#include "status.h"
}

namespace {

/* ---------------------------------------------------------- GPU kernels */

__device__ uint32_t ld16(const uint16_t *p, uint32_t r, uint32_t c, uint32_t R, uint32_t C) {
  return (r < R && c < C) ? p[(size_t)r * C + c] : 0u;
}
__device__ uint32_t ld8(const uint8_t *p, uint32_t r, uint32_t c, uint32_t R, uint32_t C) {
  return (r < R && c < C) ? p[(size_t)r * C + c] : 0u;
}
__device__ uint32_t ld32(const uint32_t *p, uint32_t r, uint32_t c, uint32_t R, uint32_t C) {
  return (r < R && c < C) ? p[(size_t)r * C + c] : 0u;
}

/* variant 1 (f16), 2 (bf16), 3 (tf32), 4 (e4m3), 5 (e5m2) */
__global__ void __launch_bounds__(32) gemm_mma_kernel1(float *d, const void *a, const void *b,
                                                      const float *c, uint32_t m, uint32_t n,
                                                      uint32_t k, int variant) {
  const uint32_t lane = threadIdx.x, g = lane / 4, t = lane % 4;
  const uint32_t i0 = blockIdx.y * 16, j0 = blockIdx.x * 8;
  float acc[4];
  for (int i = 0; i < 4; i++) {
    uint32_t r = i0 + g + 8 * (i >> 1), col = j0 + 2 * t + (i & 1);
    acc[i] = (r < m && col < n) ? c[(size_t)r * n + col] : 0.0f;
  }
  const uint32_t K = variant == 3 ? 8 : variant >= 4 ? 32 : 16;
  for (uint32_t kk = 0; kk < k; kk += K) {
    uint32_t ar[4], br[2];
    if (variant <= 2) {
      const uint16_t *A = (const uint16_t *)a, *B = (const uint16_t *)b;
      for (int r = 0; r < 4; r++) {
        uint32_t row = i0 + g + 8 * (r & 1), col = kk + 2 * t + 8 * (r >> 1);
        ar[r] = ld16(A, row, col, m, k) | (ld16(A, row, col + 1, m, k) << 16);
      }
      for (int r = 0; r < 2; r++) {
        uint32_t row = kk + 2 * t + 8 * r, col = j0 + g;
        br[r] = ld16(B, row, col, k, n) | (ld16(B, row + 1, col, k, n) << 16);
      }
      if (variant == 1)
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};"
            : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
            : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]));
      else
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};"
            : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
            : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]));
    } else if (variant == 3) {
      const uint32_t *A = (const uint32_t *)a, *B = (const uint32_t *)b;
      for (int r = 0; r < 4; r++) ar[r] = ld32(A, i0 + g + 8 * (r & 1), kk + t + 4 * (r >> 1), m, k);
      for (int r = 0; r < 2; r++) br[r] = ld32(B, kk + t + 4 * r, j0 + g, k, n);
      asm volatile(
          "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%0,%1,%2,%3};"
          : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
          : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]));
    } else {
      const uint8_t *A = (const uint8_t *)a, *B = (const uint8_t *)b;
      for (int r = 0; r < 4; r++) {
        uint32_t row = i0 + g + 8 * (r & 1), col = kk + 4 * t + 16 * (r >> 1);
        ar[r] = ld8(A, row, col, m, k) | (ld8(A, row, col + 1, m, k) << 8) |
                (ld8(A, row, col + 2, m, k) << 16) | (ld8(A, row, col + 3, m, k) << 24);
      }
      for (int r = 0; r < 2; r++) {
        uint32_t row = kk + 4 * t + 16 * r, col = j0 + g;
        br[r] = ld8(B, row, col, k, n) | (ld8(B, row + 1, col, k, n) << 8) |
                (ld8(B, row + 2, col, k, n) << 16) | (ld8(B, row + 3, col, k, n) << 24);
      }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
      if (variant == 4)
        asm volatile(LOWP_PTX_MMA_E4M3_F32 /* its machine code: tests/tsass.c */
            : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
            : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]));
      else
        asm volatile(
            "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};"
            : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
            : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]));
#else
      (void)ar; (void)br;
      for (int i = 0; i < 4; i++) acc[i] = __int_as_float(0x7fffffff); /* never launched here */
#endif
    }
  }
  for (int i = 0; i < 4; i++) {
    uint32_t r = i0 + g + 8 * (i >> 1), col = j0 + 2 * t + (i & 1);
    if (r < m && col < n) d[(size_t)r * n + col] = acc[i];
  }
}

int mma_fail(char *err, size_t errlen, int st, const char *what) {
  if (err && errlen) snprintf(err, errlen, "%s", what);
  return st;
}

struct MmaBufs {
  void *p[4] = {nullptr, nullptr, nullptr, nullptr};
  ~MmaBufs() {
    for (void *q : p)
      if (q) (void)cudaFree(q);
  }
};

}  // namespace

/* ------------------------------------------------------------ launchers */

#define CU(x, st, what) \
  if (!lowp_cuda_ok(x)) return mma_fail(err, errlen, st, "CUDA: " what)

extern "C" int lowp_gemm_mma_cuda(int variant, void *d, const void *a, const void *b,
                                  const void *c, size_t m, size_t n, size_t k, char *err,
                                  size_t errlen) {
  MmaBufs x;
  int ndev = 0, dev = 0, major = 0, minor = 0;
  if (variant < 1 || variant > LOWP_MMA_VARIANTS)
    return mma_fail(err, errlen, LOWP_EINVAL, "unknown mma variant");
  if (!d || !a || !b || !c || m == 0 || n == 0 || k == 0 || m >= (1u << 31) ||
      n >= (1u << 31) || k >= (1u << 31))
    return mma_fail(err, errlen, LOWP_EINVAL, "bad GEMM sizes or pointers");
  if (!lowp_cuda_ok(cudaGetDeviceCount(&ndev)) || ndev == 0) {
    return mma_fail(err, errlen, LOWP_EUNSUPPORTED, "no CUDA device");
  }
  CU(cudaGetDevice(&dev), LOWP_EIO, "cudaGetDevice");
  CU(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), LOWP_EIO, "attribute");
  CU(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev), LOWP_EIO, "attribute");
  if (major * 10 + minor < (variant >= 4 ? 89 : 80))
    return mma_fail(err, errlen, LOWP_EUNSUPPORTED, "this GPU lacks the mma instruction of the variant");
  size_t ib = variant <= 2 ? 2 : variant == 3 ? 4 : 1;
  CU(cudaMalloc(&x.p[0], m * k * ib), LOWP_ENOMEM, "cudaMalloc");
  CU(cudaMalloc(&x.p[1], k * n * ib), LOWP_ENOMEM, "cudaMalloc");
  CU(cudaMalloc(&x.p[2], m * n * sizeof(float)), LOWP_ENOMEM, "cudaMalloc");
  CU(cudaMemcpy(x.p[0], a, m * k * ib, cudaMemcpyHostToDevice), LOWP_EIO, "copy A");
  CU(cudaMemcpy(x.p[1], b, k * n * ib, cudaMemcpyHostToDevice), LOWP_EIO, "copy B");
  CU(cudaMemcpy(x.p[2], c, m * n * sizeof(float), cudaMemcpyHostToDevice), LOWP_EIO, "copy C");
  dim3 grid((unsigned)((n + 7) / 8), (unsigned)((m + 15) / 16));
  if (grid.y > 65535) return mma_fail(err, errlen, LOWP_EINVAL, "m too large for one launch");
  gemm_mma_kernel1<<<grid, 32>>>((float *)x.p[2], x.p[0], x.p[1], (const float *)x.p[2],
                                 (uint32_t)m, (uint32_t)n, (uint32_t)k, variant);
  CU(cudaGetLastError(), LOWP_EIO, "launch");
  CU(cudaDeviceSynchronize(), LOWP_EIO, "kernel");
  CU(cudaMemcpy(d, x.p[2], m * n * sizeof(float), cudaMemcpyDeviceToHost), LOWP_EIO, "copy D");
  return LOWP_OK;
}

#undef CU /* (one translation unit with the other .cu files: CMakeLists.txt, LOWP_CUDA_UNITY) */
