/* cvt_tf32.cu -- compiled (never run) by tests/tsass.c: the machine code of
   kernels/cuda/cvt.cu's variant 7, one value per thread */
#include "ptx.h"

extern "C" __global__ void lowp_sass_cvt_tf32(const float *x, unsigned *y) {
  unsigned w;
  float v = x[threadIdx.x];
  asm(LOWP_PTX_CVT_TF32_RNA : "=r"(w) : "f"(v));
  y[threadIdx.x] = w;
}
