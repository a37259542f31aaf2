/* lowp_rowk_cuda -- the stand-ins of builds without CUDA (kernels/cuda/rowk.cu) */

#include "common/rowk.h"

#include "status.h"

#ifndef LOWP_HAVE_CUDA
int lowp_rsum_cuda(float *y, const float *x, size_t rows, size_t n, lowp_ka_fmt_t acc) {
  (void)y; (void)x; (void)rows; (void)n; (void)acc;
  return LOWP_EUNSUPPORTED;
}
int lowp_softmax_cuda(float *y, const float *x, size_t rows, size_t n, int stable) {
  (void)y; (void)x; (void)rows; (void)n; (void)stable;
  return LOWP_EUNSUPPORTED;
}
int lowp_softmax_fpx_cuda(float *y, const float *x, size_t rows, size_t n, int stable,
                          lowp_fpxd_t *trace) {
  (void)y; (void)x; (void)rows; (void)n; (void)stable; (void)trace;
  return LOWP_EUNSUPPORTED;
}
int lowp_unscale_fpx_cuda(float *g, size_t n, float inv_scale, int *found_inf, lowp_fpxd_t *trace) {
  (void)g; (void)n; (void)inv_scale; (void)found_inf; (void)trace;
  return LOWP_EUNSUPPORTED;
}
int lowp_layernorm_cuda(float *y, float *mean, float *var, const float *x, size_t rows,
                        size_t n, float eps, int variant) {
  (void)y; (void)mean; (void)var; (void)x; (void)rows; (void)n; (void)eps; (void)variant;
  return LOWP_EUNSUPPORTED;
}
int lowp_xent_cuda(float *loss, const float *x, const int32_t *target, size_t rows, size_t n) {
  (void)loss; (void)x; (void)target; (void)rows; (void)n;
  return LOWP_EUNSUPPORTED;
}
int lowp_unscale_cuda(float *g, size_t n, float inv_scale, int *found_inf) {
  (void)g; (void)n; (void)inv_scale; (void)found_inf;
  return LOWP_EUNSUPPORTED;
}
int lowp_scaler_update_cuda(float *scale, int32_t *tracker, int found_inf, double growth,
                            double backoff, int32_t interval) {
  (void)scale; (void)tracker; (void)found_inf; (void)growth; (void)backoff; (void)interval;
  return LOWP_EUNSUPPORTED;
}
#else
typedef int lowp_rowk_gpu_nocuda_unused; /* ISO C: a translation unit is not empty */
#endif
