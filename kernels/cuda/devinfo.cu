/* lowp_cuda_device_info -- name and compute capability of the first CUDA device; the runtime's own error */

#include <cuda_runtime.h>
#include <stdio.h>

extern "C" {
#include "gemm_gpu.h"
#include "status.h"
}

extern "C" int lowp_cuda_device_info(char *name, size_t len, int *major, int *minor) {
  int n = 0;
  cudaDeviceProp p;
  if (name && len) name[0] = '\0';
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    (void)cudaGetLastError(); /* no driver / no device: not a sticky error */
    return LOWP_EUNSUPPORTED;
  }
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
    (void)cudaGetLastError();
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
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (msg && len)
      snprintf(msg, len, "cudaGetDeviceCount: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    return -1;
  }
  if (msg && len) snprintf(msg, len, "%d CUDA device%s", n, n == 1 ? "" : "s");
  return n;
}
