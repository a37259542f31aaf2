/* lowp exact GEMM on the GPU -- the stand-in of builds without CUDA */

#include "gpu/ozaki_gpu.h"

#include "status.h"

#ifndef LOWP_HAVE_CUDA
int lowp_exact_gemm_cuda(double *c, const double *a, const double *b, const double *c0,
                         size_t m, size_t n, size_t k, const lowp_format_t *f,
                         const lowp_policy_t *pol, lowp_rounding_t rnd,
                         lowp_gemm_stats_t *stats) {
  (void)c; (void)a; (void)b; (void)c0; (void)m; (void)n; (void)k;
  (void)f; (void)pol; (void)rnd; (void)stats;
  return LOWP_EUNSUPPORTED;
}

int lowp_exact_gemm_cuda_int8(double *c, const double *a, const double *b, const double *c0,
                              size_t m, size_t n, size_t k, const lowp_format_t *f,
                              const lowp_policy_t *pol, lowp_rounding_t rnd,
                              int test_extra_bits, lowp_gemm_stats_t *stats) {
  (void)c; (void)a; (void)b; (void)c0; (void)m; (void)n; (void)k;
  (void)f; (void)pol; (void)rnd; (void)test_extra_bits; (void)stats;
  return LOWP_EUNSUPPORTED;
}
#else
typedef int lowp_ozaki_gpu_nocuda_unused; /* ISO C: a translation unit is not empty */
#endif
