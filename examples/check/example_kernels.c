/* example_kernels -- a lowp check plugin: an honest fp16 GEMM and one with a planted precision bug */

/*
 * Build (from this folder; lowp's CMake also builds it into BUILD/plugins/):
 *   cc -shared -fPIC -O2 -ffp-contract=off -I../../include example_kernels.c -o example_kernels.so
 * Kernels (fp16 inputs as uint16_t bit patterns, fp32 output as float; see
 * include/lowp_plugin.h):
 *   gemm_f16_f32acc  C = A B, products exact (22-bit products fit a float),
 *                    summed left to right in fp32: what it promises
 *   gemm_f16_planted the same promise, but the running sum is rounded to
 *                    fp16 after every addition (a precision bug of the kind
 *                    lowp check exists to catch)
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

/* float -> fp16 bits, round to nearest even */
static uint16_t f2h(float f) {
  uint16_t s = signbit(f) ? 0x8000 : 0;
  float a = fabsf(f);
  int ex;
  if (isnan(f)) return 0x7e00;
  if (a >= 65520.0f) return s | 0x7c00;
  if (a < 0x1p-14f) return s | (uint16_t)rintf(a * 0x1p24f);
  (void)frexpf(a, &ex);
  ex -= 1; /* a in [2^ex, 2^(ex+1)) */
  {
    float mant = rintf(ldexpf(a, 10 - ex));
    if (mant == 2048.0f) { ex++; mant = 1024.0f; }
    if (ex > 15) return s | 0x7c00;
    return s | (uint16_t)(((ex + 15) << 10) | ((int)mant - 1024));
  }
}

static int gemm(void *const *out, const void *const *in, const lowp_plugin_dims_t *d, int planted) {
  const uint16_t *a = in[0], *b = in[1];
  float *c = out[0];
  size_t bt, i, j, l;
  for (bt = 0; bt < d->batch; bt++)
    for (i = 0; i < d->m; i++)
      for (j = 0; j < d->n; j++) {
        float s = 0;
        for (l = 0; l < d->k; l++) {
          float p = h2f(a[(bt * d->m + i) * d->k + l]) * h2f(b[(bt * d->k + l) * d->n + j]);
          s += p;
          if (planted) s = h2f(f2h(s)); /* the bug: an fp16 accumulator */
        }
        c[(bt * d->m + i) * d->n + j] = s;
      }
  return 0;
}

static int gemm_f16_f32acc(void *const *out, const void *const *in, const lowp_plugin_dims_t *d) {
  return gemm(out, in, d, 0);
}

static int gemm_f16_planted(void *const *out, const void *const *in, const lowp_plugin_dims_t *d) {
  return gemm(out, in, d, 1);
}

LOWP_PLUGIN_EXPORT const uint32_t lowp_plugin_abi_version = LOWP_PLUGIN_ABI_VERSION;

static const lowp_plugin_kernel_t table[] = {
    {"gemm_f16_f32acc", "gemm", {"fp16", "fp16"}, "fp32", gemm_f16_f32acc},
    {"gemm_f16_planted", "gemm", {"fp16", "fp16"}, "fp32", gemm_f16_planted},
};

LOWP_PLUGIN_EXPORT const lowp_plugin_kernel_t *lowp_plugin_kernels(size_t *count) {
  *count = sizeof table / sizeof table[0];
  return table;
}
