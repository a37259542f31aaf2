/* lowp_probe_gpu -- the stand-in of builds without CUDA */

#include "gpu/probe_gpu.h"

#include "status.h"

#ifndef LOWP_HAVE_CUDA
int lowp_probe_gpu_open(lowp_probe_gpu_t **g) {
  if (g) *g = NULL;
  return LOWP_EUNSUPPORTED;
}

void lowp_probe_gpu_close(lowp_probe_gpu_t *g) { (void)g; }

int lowp_probe_gpu_info(char *name, size_t len, int *sm) {
  if (name && len) name[0] = '\0';
  if (sm) *sm = 0;
  return 0;
}

int lowp_probe_gpu_k(const lowp_format_t *in, const lowp_format_t *out, int sm) {
  (void)in; (void)out; (void)sm;
  return 0;
}

int lowp_probe_gpu_dot(void *ctx, double *d, const double *a, const double *b, size_t n, double c,
                       const lowp_format_t *in, const lowp_format_t *out) {
  (void)ctx; (void)d; (void)a; (void)b; (void)n; (void)c; (void)in; (void)out;
  return LOWP_EUNSUPPORTED;
}
#else
typedef int lowp_probe_gpu_nocuda_unused; /* ISO C: a translation unit is not empty */
#endif
