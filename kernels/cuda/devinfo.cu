/* lowp_cuda_device_info -- name and compute capability of the first CUDA device; the runtime's own error */

#include <cuda_runtime.h>

#include "cuda_ok.h"
#include <stdio.h>

extern "C" {
#include "gpu/gemm_gpu.h"
#include "status.h"
}

extern "C" int lowp_cuda_device_info(char *name, size_t len, int *major, int *minor) {
  int n = 0;
  cudaDeviceProp p;
  if (name && len) name[0] = '\0';
  if (!lowp_cuda_ok(cudaGetDeviceCount(&n)) || n == 0) {
    return LOWP_EUNSUPPORTED;
  }
  if (!lowp_cuda_ok(cudaGetDeviceProperties(&p, 0))) {
    return LOWP_EIO;
  }
  if (name && len) snprintf(name, len, "%s", p.name);
  if (major) *major = p.major;
  if (minor) *minor = p.minor;
  return LOWP_OK;
}

extern "C" int lowp_cuda_runtime_status(char *msg, size_t len) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (!lowp_cuda_ok(e)) {
    if (msg && len)
      snprintf(msg, len, "cudaGetDeviceCount: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    return -1;
  }
  if (msg && len) snprintf(msg, len, "%d CUDA device%s", n, n == 1 ? "" : "s");
  return n;
}
