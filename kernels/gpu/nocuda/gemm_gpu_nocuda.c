/* lowp_gemm_gpu -- the stand-ins of builds without CUDA (kernels/cuda/gemm_*.cu, devinfo.cu) */

#include "gpu/gemm_gpu.h"

#include <stdio.h>

#include "status.h"
#include "io/escape.h"

#ifndef LOWP_HAVE_CUDA
static int no_cuda(char *err, size_t errlen) {
  lowp_errf(err, errlen, 0, "this lowp was built without CUDA");
  return LOWP_EUNSUPPORTED;
}
int lowp_gemm_cublas_cuda(int variant, void *d, const void *a, const void *b, const void *c,
                          size_t m, size_t n, size_t k, char *err, size_t errlen) {
  (void)variant; (void)d; (void)a; (void)b; (void)c; (void)m; (void)n; (void)k;
  return no_cuda(err, errlen);
}
int lowp_gemm_mma_cuda(int variant, void *d, const void *a, const void *b, const void *c,
                       size_t m, size_t n, size_t k, char *err, size_t errlen) {
  (void)variant; (void)d; (void)a; (void)b; (void)c; (void)m; (void)n; (void)k;
  return no_cuda(err, errlen);
}
int lowp_cuda_device_info(char *name, size_t len, int *major, int *minor) {
  if (name && len) name[0] = '\0';
  if (major) *major = 0;
  if (minor) *minor = 0;
  return LOWP_EUNSUPPORTED;
}
int lowp_gemm_cublas_algo(char *buf, size_t len) {
  if (buf && len) snprintf(buf, len, "this lowp was built without CUDA");
  return LOWP_EUNSUPPORTED;
}
int lowp_cuda_runtime_status(char *msg, size_t len) {
  if (msg && len) snprintf(msg, len, "this lowp was built without CUDA");
  return -1;
}
#else
typedef int lowp_gemm_gpu_nocuda_unused; /* ISO C: a translation unit is not empty */
#endif
