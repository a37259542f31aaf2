/* unrolled_kernels -- a lowp check plugin whose bug shows only for some shapes */

/*
 * Build (lowp's CMake builds it into BUILD/plugins/):
 *   cc -shared -fPIC -O2 -ffp-contract=off -I../../include unrolled_kernels.c -o unrolled_kernels.so
 * Kernels (fp16 inputs as uint16_t bit patterns, fp32 output; include/lowp_plugin.h):
 *   gemm_f16_unrolled  C = A B summed in fp32, the k loop unrolled by two with
 *                      its tail: honest
 *   gemm_f16_drop_odd  the same without the tail: the last element of an odd
 *                      k is dropped, so only checks whose shapes include an
 *                      odd k catch it (params.json: shapes and seeds as lists)
 */

#include <math.h>
#include <stdint.h>

#include "lowp_plugin.h"

/* fp16 bits -> float (exact) */
static float h2f(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}

static int gemm(void *const *out, const void *const *in, const lowp_plugin_dims_t *d, int tail) {
  const uint16_t *a = in[0], *b = in[1];
  float *c = out[0];
  size_t bt, i, j, l;
  for (bt = 0; bt < d->batch; bt++)
    for (i = 0; i < d->m; i++)
      for (j = 0; j < d->n; j++) {
        const uint16_t *ar = a + (bt * d->m + i) * d->k, *bc = b + bt * d->k * d->n + j;
        float s = 0;
        for (l = 0; l + 1 < d->k; l += 2) {
          s += h2f(ar[l]) * h2f(bc[l * d->n]);
          s += h2f(ar[l + 1]) * h2f(bc[(l + 1) * d->n]);
        }
        if (tail && l < d->k) s += h2f(ar[l]) * h2f(bc[l * d->n]); /* the bug: no tail */
        c[(bt * d->m + i) * d->n + j] = s;
      }
  return 0;
}

static int gemm_f16_unrolled(void *const *out, const void *const *in, const lowp_plugin_dims_t *d) {
  return gemm(out, in, d, 1);
}

static int gemm_f16_drop_odd(void *const *out, const void *const *in, const lowp_plugin_dims_t *d) {
  return gemm(out, in, d, 0);
}

LOWP_PLUGIN_EXPORT const uint32_t lowp_plugin_abi_version = LOWP_PLUGIN_ABI_VERSION;

static const lowp_plugin_kernel_t table[] = {
    {"gemm_f16_unrolled", "gemm", {"fp16", "fp16"}, "fp32", gemm_f16_unrolled},
    {"gemm_f16_drop_odd", "gemm", {"fp16", "fp16"}, "fp32", gemm_f16_drop_odd},
};

LOWP_PLUGIN_EXPORT const lowp_plugin_kernel_t *lowp_plugin_kernels(size_t *count) {
  *count = sizeof table / sizeof table[0];
  return table;
}
