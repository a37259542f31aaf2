/* reveal_planted -- test plugin (include/lowp_plugin.h): kernels whose order lowp reveal must find, and planted bugs it must expose
 *
 *   gemm_lanes         fp16 x fp16 -> fp32: 32 fp32 lanes, lane l an FMA chain
 *                      over k = l, l + 32, ... (from zero), then lanes l and
 *                      l + w added for w = 16, 8, 4, 2, 1 (a SIMD dot product)
 *   gemm_lanes_f16acc  the same lanes accumulating in fp16 (the bug of issue 32)
 *   gemm_hidden_b16    fp32 x fp32 -> fp32, B rounded to fp16 (rne) before a
 *                      recursive fp32 FMA chain (a hidden conversion)
 *   gemm_random_split  fp32: split-K with 2 to 8 slices drawn per call
 *                      (nondeterministic: no tree may be given)
 *   gemm_lanes_a32     fp32 activations A x fp16 weights B -> fp32: A rounded
 *                      to fp16 (rne) first, then gemm_lanes (issue 32's
 *                      honest kernel that converts)
 *   gemm_fma32         fp32 x fp32 -> fp32: the recursive FMA chain, no
 *                      conversion (fails a check that declares one)
 *   gemm_lanes16       gemm_lanes with 16 lanes (a library update that
 *                      changed the order: fails the twin of gemm_lanes)
 * Build: cc -shared -fPIC -O1 -ffp-contract=off -I include tests/plugins/reveal_planted.c -o planted.so -lm
 * fp16 by hand (plain C11): decoding the bits, and rounding an exact binary64
 * value once to fp16 (nearbyint: the default mode, to nearest even).
 */
#define _POSIX_C_SOURCE 200809L
#include <lowp_plugin.h>
#include <math.h>
#include <time.h>

LOWP_PLUGIN_EXPORT const uint32_t lowp_plugin_abi_version = LOWP_PLUGIN_ABI_VERSION;

static float h2f(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
  return (float)((h >> 15) ? -v : v);
}

/* v rounded once to fp16 (rne; overflow to infinity) */
static double to16(double v) {
  double a = fabs(v), r;
  int e, q;
  if (a == 0 || a != a || a == INFINITY) return v;
  (void)frexp(a, &e); /* a in [2^(e-1), 2^e) */
  q = e - 11 < -24 ? -24 : e - 11;
  r = ldexp(nearbyint(ldexp(a, -q)), q);
  if (r > 65504) r = INFINITY;
  return v < 0 ? -r : r;
}

/* the lanes dot of row i of A and column j of B (A32: fp32 values of A,
   rounded to fp16 as they are read; else fp16 bits) */
static float lanes(const void *A, const uint16_t *B, size_t n, size_t k, size_t i, size_t j, int f16acc,
                   int a32, size_t L) {
  double lane[32];
  size_t l, t, w;
  for (l = 0; l < L; l++) {
    lane[l] = 0.0;
    for (t = l; t < k; t += L) {
      double a = a32 ? to16(((const float *)A)[i * k + t]) : h2f(((const uint16_t *)A)[i * k + t]);
      double b = h2f(B[t * n + j]);
      lane[l] = f16acc ? to16(lane[l] + a * b) : (double)fmaf((float)a, (float)b, (float)lane[l]);
    }
  }
  for (w = L / 2; w >= 1; w /= 2)
    for (l = 0; l < w; l++)
      lane[l] = f16acc ? to16(lane[l] + lane[l + w]) : (double)((float)lane[l] + (float)lane[l + w]);
  return (float)lane[0];
}

static int run_lanes(void *const *out, const void *const *in, const lowp_plugin_dims_t *d, int f16acc,
                     int a32, size_t L) {
  size_t bt, i, j, m = d->m, n = d->n, k = d->k;
  for (bt = 0; bt < d->batch; bt++) {
    const void *A = a32 ? (const void *)((const float *)in[0] + bt * m * k)
                        : (const void *)((const uint16_t *)in[0] + bt * m * k);
    const uint16_t *B = (const uint16_t *)in[1] + bt * k * n;
    float *C = (float *)out[0] + bt * m * n;
    for (i = 0; i < m; i++)
      for (j = 0; j < n; j++) C[i * n + j] = lanes(A, B, n, k, i, j, f16acc, a32, L);
  }
  return 0;
}

static int gemm_lanes(void *const *out, const void *const *in, const lowp_plugin_dims_t *d) {
  return run_lanes(out, in, d, 0, 0, 32);
}
static int gemm_lanes_f16acc(void *const *out, const void *const *in, const lowp_plugin_dims_t *d) {
  return run_lanes(out, in, d, 1, 0, 32);
}
static int gemm_lanes_a32(void *const *out, const void *const *in, const lowp_plugin_dims_t *d) {
  return run_lanes(out, in, d, 0, 1, 32);
}
static int gemm_lanes16(void *const *out, const void *const *in, const lowp_plugin_dims_t *d) {
  return run_lanes(out, in, d, 0, 0, 16);
}

/* the recursive fp32 FMA chain, B rounded to fp16 first when b16 */
static int fma_chain(void *const *out, const void *const *in, const lowp_plugin_dims_t *d, int b16) {
  size_t bt, i, j, l, m = d->m, n = d->n, k = d->k;
  for (bt = 0; bt < d->batch; bt++) {
    const float *A = (const float *)in[0] + bt * m * k, *B = (const float *)in[1] + bt * k * n;
    float *C = (float *)out[0] + bt * m * n;
    for (i = 0; i < m; i++)
      for (j = 0; j < n; j++) {
        float s = 0.0f;
        for (l = 0; l < k; l++) s = fmaf(A[i * k + l], b16 ? (float)to16(B[l * n + j]) : B[l * n + j], s);
        C[i * n + j] = s;
      }
  }
  return 0;
}

static int gemm_fma32(void *const *out, const void *const *in, const lowp_plugin_dims_t *d) {
  return fma_chain(out, in, d, 0);
}

static int gemm_hidden_b16(void *const *out, const void *const *in, const lowp_plugin_dims_t *d) {
  return fma_chain(out, in, d, 1);
}

static int gemm_random_split(void *const *out, const void *const *in, const lowp_plugin_dims_t *d) {
  struct timespec ts;
  size_t bt, i, j, l, m = d->m, n = d->n, k = d->k, S, w, lo;
  clock_gettime(CLOCK_REALTIME, &ts);
  S = 2 + (size_t)(ts.tv_nsec / 1000) % 7; /* drawn per call */
  w = (k + S - 1) / S;
  for (bt = 0; bt < d->batch; bt++) {
    const float *A = (const float *)in[0] + bt * m * k, *B = (const float *)in[1] + bt * k * n;
    float *C = (float *)out[0] + bt * m * n;
    for (i = 0; i < m; i++)
      for (j = 0; j < n; j++) {
        float y = 0.0f;
        for (lo = 0; lo < k; lo += w) {
          float part = 0.0f;
          for (l = lo; l < k && l < lo + w; l++) part = fmaf(A[i * k + l], B[l * n + j], part);
          y += part;
        }
        C[i * n + j] = y;
      }
  }
  return 0;
}

static const lowp_plugin_kernel_t table[] = {
    {"gemm_lanes", "gemm", {"fp16", "fp16"}, "fp32", gemm_lanes},
    {"gemm_lanes_f16acc", "gemm", {"fp16", "fp16"}, "fp32", gemm_lanes_f16acc},
    {"gemm_hidden_b16", "gemm", {"fp32", "fp32"}, "fp32", gemm_hidden_b16},
    {"gemm_random_split", "gemm", {"fp32", "fp32"}, "fp32", gemm_random_split},
    {"gemm_lanes_a32", "gemm", {"fp32", "fp16"}, "fp32", gemm_lanes_a32},
    {"gemm_fma32", "gemm", {"fp32", "fp32"}, "fp32", gemm_fma32},
    {"gemm_lanes16", "gemm", {"fp16", "fp16"}, "fp32", gemm_lanes16},
};

LOWP_PLUGIN_EXPORT const lowp_plugin_kernel_t *lowp_plugin_kernels(size_t *count) {
  *count = sizeof table / sizeof table[0];
  return table;
}
