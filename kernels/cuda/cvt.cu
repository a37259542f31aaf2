/* lowp_cvt_cuda -- the GPU's own cvt instructions over ranges of fp32 bit patterns */

/*
 * version 1-9: one kernel, the PTX instruction chosen by a switch on the
 * variant (see kernels/common/cvt.h for the list). Each thread converts one bit
 * pattern start + i. The CPU twin is kernels/cpu/cvt.c; the two must agree
 * bit for bit (tests/cuda/tcvt_gpu.c checks all 2^32 inputs).
 * Build: part of lowp_cuda (CMake, CUDA language); needs sm_89+ for fp8.
 */

#include <cuda_runtime.h>

#include "cuda_ok.h"
#include <stdint.h>

#include "ptx.h"

extern "C" {
#include "common/cvt.h"
#include "status.h"
}

/* ---------------------------------------------------------- GPU kernels */

__global__ void lowp_cvt_kernel1(void *out, uint32_t start, uint32_t n, int variant) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t bits = start + i;
  float x = __uint_as_float(bits);
  unsigned short h = 0;
  uint32_t w = 0;
  switch (variant) {
  case 1: asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x)); break;
  case 2: asm("cvt.rz.f16.f32 %0, %1;" : "=h"(h) : "f"(x)); break;
  case 3: asm("cvt.rm.f16.f32 %0, %1;" : "=h"(h) : "f"(x)); break;
  case 4: asm("cvt.rp.f16.f32 %0, %1;" : "=h"(h) : "f"(x)); break;
  case 5: asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x)); break;
  case 6: asm("cvt.rz.bf16.f32 %0, %1;" : "=h"(h) : "f"(x)); break;
  case 7: asm(LOWP_PTX_CVT_TF32_RNA : "=r"(w) : "f"(x)); break; /* tests/tsass.c */
#if __CUDA_ARCH__ >= 890
  case 8: asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(h) : "f"(0.0f), "f"(x)); break;
  case 9: asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(h) : "f"(0.0f), "f"(x)); break;
#endif
  default: break;
  }
  if (variant == 7) ((uint32_t *)out)[i] = w;
  else if (variant >= 8) ((uint8_t *)out)[i] = (uint8_t)(h & 0xff); /* b in the low byte */
  else ((uint16_t *)out)[i] = h;
}

/* ------------------------------------------------------------ launchers */

extern "C" int lowp_cuda_device_count(void) {
  int n = 0;
  if (!lowp_cuda_ok(cudaGetDeviceCount(&n))) {
    return 0;
  }
  return n;
}

extern "C" int lowp_cvt_cuda(int variant, void *out, uint64_t start, size_t n) {
  int bytes = lowp_cvt_out_bytes(variant);
  void *d = NULL;
  if (bytes == 0 || n >= (UINT64_C(1) << 32) || start + n > (UINT64_C(1) << 32)) return LOWP_EINVAL;
  if (lowp_cuda_device_count() == 0) return LOWP_EUNSUPPORTED;
  if (n == 0) return LOWP_OK;
  if (!lowp_cuda_ok(cudaMalloc(&d, n * (size_t)bytes))) return LOWP_ENOMEM;
  {
    const unsigned threads = 256;
    unsigned blocks = (unsigned)((n + threads - 1) / threads);
    lowp_cvt_kernel1<<<blocks, threads>>>(d, (uint32_t)start, (uint32_t)n, variant);
  }
  if (!lowp_cuda_ok(cudaGetLastError()) ||
      !lowp_cuda_ok(cudaMemcpy(out, d, n * (size_t)bytes, cudaMemcpyDeviceToHost))) {
    cudaFree(d);
    return LOWP_EIO;
  }
  cudaFree(d);
  return LOWP_OK;
}
