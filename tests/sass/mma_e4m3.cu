/* mma_e4m3.cu -- compiled (never run) by tests/tsass.c: the machine code of
   one e4m3 mma.sync with fp32 C and D (kernels/cuda/gemm_mma.cu, probe.cu) */
#include "ptx.h"

extern "C" __global__ void lowp_sass_mma_e4m3(const unsigned *a, const unsigned *b, float *c) {
  unsigned t = threadIdx.x;
  float d0 = c[4 * t], d1 = c[4 * t + 1], d2 = c[4 * t + 2], d3 = c[4 * t + 3];
  asm volatile(LOWP_PTX_MMA_E4M3_F32
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
               : "r"(a[4 * t]), "r"(a[4 * t + 1]), "r"(a[4 * t + 2]), "r"(a[4 * t + 3]),
                 "r"(b[2 * t]), "r"(b[2 * t + 1]));
  c[4 * t] = d0;
  c[4 * t + 1] = d1;
  c[4 * t + 2] = d2;
  c[4 * t + 3] = d3;
}
