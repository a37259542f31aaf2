/* lowp_amp_gpu -- the stand-in of builds without CUDA */

#include "gpu/amp_gpu.h"

#include "status.h"

#ifndef LOWP_HAVE_CUDA
int lowp_amp_gpu_device(char *name, size_t len) {
  if (name && len) name[0] = '\0';
  return LOWP_EUNSUPPORTED;
}

int lowp_amp_gpu_run(double *seconds, double *worst, const lowp_rkernel_t *ks, size_t nk, const lowp_rprec_t *p,
                     double dropout, int reps) {
  (void)seconds; (void)worst; (void)ks; (void)nk; (void)p; (void)dropout; (void)reps;
  return LOWP_EUNSUPPORTED;
}
#else
typedef int lowp_amp_gpu_nocuda_unused; /* ISO C: a translation unit is not empty */
#endif
