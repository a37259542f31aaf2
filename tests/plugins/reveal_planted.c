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
 *   gemm_tc32_h16      fp16 x fp16 -> fp16 on tensor-core block FMAs (H100's:
 *                      16 products and c aligned to the largest exponent,
 *                      cut at 25 bits below it, summed exactly, rounded
 *                      toward zero to fp32) chained in fp32, the result
 *                      rounded to fp16 at the store (cuBLAS's HGEMM with
 *                      CUBLAS_COMPUTE_32F, torch's fp16 matmul)
 *   gemm_tc16          the same blocks, each result rounded to fp16 (rne):
 *                      the chain carried in fp16 (CUBLAS_COMPUTE_16F)
 * Build: cc -shared -fPIC -O1 -ffp-contract=off -I include tests/plugins/reveal_planted.c -o planted.so -lm
 * fp16 by hand (plain C11): decoding the bits, and rounding an exact binary64
 * value once to fp16 (nearbyint: the default mode, to nearest even).
 */
#define _POSIX_C_SOURCE 200809L
#include <lowp_plugin.h>
#include <math.h>
#include <stdlib.h>
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

/* the fp16 bits of a value of fp16 */
static uint16_t f2h(double v) {
  uint16_t sgn = signbit(v) ? 0x8000 : 0;
  double a = fabs(v);
  int e;
  if (a != a) return 0x7e00;
  if (a == INFINITY) return sgn | 0x7c00;
  if (a < 0x1p-14) return sgn | (uint16_t)ldexp(a, 24);
  e = ilogb(a);
  return sgn | (uint16_t)((e + 15) << 10) | (uint16_t)(ldexp(a, 10 - e) - 1024);
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

/* One block FMA of n fp16 products (a[l], b[l * n_b]) and c: every nonzero term aligned to the
   largest exponent X (a product's at ea + eb, each max(floor(log2|.|), -14), its significand in
   [0, 4); c's at max(floor(log2|c|), emin of the block's output), and that emin when c is 0), cut
   toward zero at 2^(X - 25), the cut terms summed exactly (under 2^32: exact in binary64), the sum
   rounded toward zero to fp32 (f16out 0) or to nearest even to fp16 (f16out 1) */
static double bfma(const double *a, const double *b, size_t sb, size_t n, double c, int f16out) {
  int emin = f16out ? -14 : -126, X = c != 0 ? ilogb(c) : emin, q, e;
  double S = 0, v, r;
  size_t l;
  if (X < emin) X = emin;
  for (l = 0; l < n; l++) {
    int ea, eb;
    if (a[l] == 0 || b[l * sb] == 0) continue;
    ea = ilogb(a[l]) < -14 ? -14 : ilogb(a[l]);
    eb = ilogb(b[l * sb]) < -14 ? -14 : ilogb(b[l * sb]);
    if (ea + eb > X) X = ea + eb;
  }
  q = X - 25;
  for (l = 0; l < n; l++) S += trunc(ldexp(a[l] * b[l * sb], -q));
  S += trunc(ldexp(c, -q));
  v = ldexp(S, q);
  if (f16out) return to16(v);
  if (v == 0) return 0.0;
  e = ilogb(v) < -126 ? -126 : ilogb(v);
  r = ldexp(trunc(ldexp(v, 23 - e)), e - 23);
  return r;
}

/* C (fp16 bits) = A B on block FMAs of 16: the chain in fp32, or in fp16 (f16acc) */
static int run_tc(void *const *out, const void *const *in, const lowp_plugin_dims_t *d, int f16acc) {
  size_t bt, i, j, l, m = d->m, n = d->n, k = d->k;
  double a[16], *b = malloc(k * n * sizeof *b);
  if (!b) return 1;
  for (bt = 0; bt < d->batch; bt++) {
    const uint16_t *A = (const uint16_t *)in[0] + bt * m * k, *B = (const uint16_t *)in[1] + bt * k * n;
    uint16_t *C = (uint16_t *)out[0] + bt * m * n;
    for (l = 0; l < k * n; l++) b[l] = h2f(B[l]);
    for (i = 0; i < m; i++)
      for (j = 0; j < n; j++) {
        double c = 0;
        size_t lo, t;
        for (lo = 0; lo < k; lo += 16) {
          size_t w = k - lo < 16 ? k - lo : 16;
          for (t = 0; t < w; t++) a[t] = h2f(A[i * k + lo + t]);
          c = bfma(a, b + lo * n + j, n, w, c, f16acc);
        }
        C[i * n + j] = f2h(to16(c));
      }
  }
  free(b);
  return 0;
}

static int gemm_tc32_h16(void *const *out, const void *const *in, const lowp_plugin_dims_t *d) {
  return run_tc(out, in, d, 0);
}
static int gemm_tc16(void *const *out, const void *const *in, const lowp_plugin_dims_t *d) {
  return run_tc(out, in, d, 1);
}

static const lowp_plugin_kernel_t table[] = {
    {"gemm_lanes", "gemm", {"fp16", "fp16"}, "fp32", gemm_lanes},
    {"gemm_lanes_f16acc", "gemm", {"fp16", "fp16"}, "fp32", gemm_lanes_f16acc},
    {"gemm_hidden_b16", "gemm", {"fp32", "fp32"}, "fp32", gemm_hidden_b16},
    {"gemm_random_split", "gemm", {"fp32", "fp32"}, "fp32", gemm_random_split},
    {"gemm_lanes_a32", "gemm", {"fp32", "fp16"}, "fp32", gemm_lanes_a32},
    {"gemm_fma32", "gemm", {"fp32", "fp32"}, "fp32", gemm_fma32},
    {"gemm_lanes16", "gemm", {"fp16", "fp16"}, "fp32", gemm_lanes16},
    {"gemm_tc32_h16", "gemm", {"fp16", "fp16"}, "fp16", gemm_tc32_h16},
    {"gemm_tc16", "gemm", {"fp16", "fp16"}, "fp16", gemm_tc16},
};

LOWP_PLUGIN_EXPORT const lowp_plugin_kernel_t *lowp_plugin_kernels(size_t *count) {
  *count = sizeof table / sizeof table[0];
  return table;
}
