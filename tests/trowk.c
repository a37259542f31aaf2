/* trowk -- the CPU twins of the GPU row kernels (kernels/cpu/rowk.c): the documented order, and accuracy */

/*
 * Label unit. Run: ctest --test-dir build -R trowk
 *   1. order: an independent replay of kernels/common/karith.h's launch order
 *      (all 32 lanes shuffled at once with __shfl_down_sync's semantics --
 *      a lane whose source is past lane 31 keeps its own value -- and
 *      fp16/bf16 additions rounded by lib/format, not by karith) equals the
 *      twin bit for bit, on inputs built so that other orders give other
 *      results; one case is worked out by hand; softmax, cross-entropy
 *      and layer norm composed from replayed reductions equal the twins;
 *   2. accuracy: softmax, layer norm (three variants) and cross-entropy
 *      against binary64 references within derived bounds, and the known
 *      failure of one-pass variance on data far from zero.
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "rng/rng.h"
#include "common/rowk.h"
#include "status.h"
#include "testutil.h"

/* ------------------------------------------------ independent replay */

typedef float (*op_fn)(float a, float b, const lowp_format_t *f);

static float op_add(float a, float b, const lowp_format_t *f) {
  double y;
  lowp_round_f64(&y, (double)a + (double)b, f, NULL, LOWP_RND_NE); /* exact sum, one rounding */
  return (float)y;
}
/* the text of kernels/common/karith.h, "THE LAUNCH ORDER", on values v[0..n-1] */
static float replay(const float *v, size_t n, op_fn op, float id, const lowp_format_t *f) {
  float lane[256], nxt[32], r;
  int t, w, off, l;
  for (t = 0; t < 256; t++) {
    size_t i;
    lane[t] = id;
    for (i = (size_t)t; i < n; i += 256) lane[t] = op(lane[t], v[i], f);
  }
  for (w = 0; w < 8; w++)
    for (off = 16; off >= 1; off /= 2) {
      for (l = 0; l < 32; l++) { /* every lane at once: shfl_down reads the old values */
        float other = l + off < 32 ? lane[32 * w + l + off] : lane[32 * w + l];
        nxt[l] = op(lane[32 * w + l], other, f);
      }
      memcpy(&lane[32 * w], nxt, sizeof nxt);
    }
  r = lane[0];
  for (w = 1; w < 8; w++) r = op(r, lane[32 * w], f);
  return r;
}

static float op_max(float a, float b, const lowp_format_t *f) {
  (void)f;
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  return a > b ? a : b;
}

/* the same replay for Welford states (the merge is karith's: the order is
   what is tested here, the merge formula in tkarith) */
static lowp_ka_welford_t replay_welford(const float *v, size_t n) {
  lowp_ka_welford_t lane[256], nxt[32], r;
  int t, w, off, l;
  for (t = 0; t < 256; t++) {
    size_t i;
    lane[t].n = lane[t].mean = lane[t].m2 = 0;
    for (i = (size_t)t; i < n; i += 256) lane[t] = lowp_ka_welford_add(lane[t], v[i]);
  }
  for (w = 0; w < 8; w++)
    for (off = 16; off >= 1; off /= 2) {
      for (l = 0; l < 32; l++)
        nxt[l] = lowp_ka_welford_merge(lane[32 * w + l], l + off < 32 ? lane[32 * w + l + off] : lane[32 * w + l]);
      memcpy(&lane[32 * w], nxt, sizeof nxt);
    }
  r = lane[0];
  for (w = 1; w < 8; w++) r = lowp_ka_welford_merge(r, lane[32 * w]);
  return r;
}

/* softmax, layer norm and cross-entropy composed from the replayed
   reductions, as karith.h's kernel list says, equal the twins bit for bit */
static void check_kernels_replay(void) {
  static const size_t ns[] = {1, 100, 256, 1000, 3001};
  static float x[3001], e[3001], y[3001], yt[3001];
  lowp_rng_t r;
  size_t a, i;
  int bad = 0;
  lowp_rng_init(&r, lowp_test_seed(), 25);
  for (a = 0; a < sizeof ns / sizeof ns[0]; a++) {
    size_t n = ns[a];
    float m, s, mu, var, rs, lt, l2, mt, vt;
    lowp_ka_welford_t w;
    int32_t t = (int32_t)(lowp_rng_next(&r) % n);
    for (i = 0; i < n; i++) x[i] = (float)(lowp_rng_normal(&r) * 5 + 2);
    /* softmax, stable and naive */
    m = replay(x, n, op_max, -INFINITY, NULL);
    for (i = 0; i < n; i++) e[i] = lowp_ka_expf(x[i] - m);
    s = replay(e, n, op_add, 0.0f, &LOWP_FMT_FP32);
    for (i = 0; i < n; i++) y[i] = e[i] / s;
    lowp_softmax_cpu(yt, x, 1, n, 1);
    bad += memcmp(y, yt, n * sizeof y[0]) != 0;
    for (i = 0; i < n; i++) e[i] = lowp_ka_expf(x[i]);
    s = replay(e, n, op_add, 0.0f, &LOWP_FMT_FP32);
    for (i = 0; i < n; i++) y[i] = e[i] / s;
    lowp_softmax_cpu(yt, x, 1, n, 0);
    bad += memcmp(y, yt, n * sizeof y[0]) != 0;
    /* cross-entropy */
    for (i = 0; i < n; i++) e[i] = lowp_ka_expf(x[i] - m);
    s = replay(e, n, op_add, 0.0f, &LOWP_FMT_FP32);
    lt = lowp_ka_logf(s) - (x[t] - m);
    lowp_xent_cpu(&l2, x, &t, 1, n);
    bad += memcmp(&lt, &l2, sizeof lt) != 0;
    /* layer norm, two-pass and Welford */
    mu = replay(x, n, op_add, 0.0f, &LOWP_FMT_FP32) / (float)n;
    for (i = 0; i < n; i++) e[i] = (x[i] - mu) * (x[i] - mu);
    var = replay(e, n, op_add, 0.0f, &LOWP_FMT_FP32) / (float)n;
    rs = lowp_ka_rstd(var, 1e-5f);
    for (i = 0; i < n; i++) y[i] = (x[i] - mu) * rs;
    lowp_layernorm_cpu(yt, &mt, &vt, x, 1, n, 1e-5f, LOWP_ROWK_LN_TWOPASS);
    bad += memcmp(y, yt, n * sizeof y[0]) != 0 || mt != mu || vt != var;
    w = replay_welford(x, n);
    mu = w.mean;
    var = w.m2 / (float)n;
    rs = lowp_ka_rstd(var, 1e-5f);
    for (i = 0; i < n; i++) y[i] = (x[i] - mu) * rs;
    lowp_layernorm_cpu(yt, &mt, &vt, x, 1, n, 1e-5f, LOWP_ROWK_LN_WELFORD);
    bad += memcmp(y, yt, n * sizeof y[0]) != 0 || mt != mu || vt != var;
  }
  lowp_test_check(bad == 0, "softmax, xent, layer norm (two-pass, Welford) = their formulas on the replayed tree (%d differ)", bad);
}

static float seq_sum(const float *v, size_t n, const lowp_format_t *f) {
  float s = 0;
  size_t i;
  for (i = 0; i < n; i++) s = op_add(s, v[i], f);
  return s;
}

static void check_order(void) {
  lowp_ka_fmt_t k16, kb16, k32;
  static float x[4096];
  float y, ys;
  size_t i;
  lowp_rng_t r;
  lowp_rowk_fmt(&k16, &LOWP_FMT_FP16);
  lowp_rowk_fmt(&kb16, &LOWP_FMT_BF16);
  lowp_rowk_fmt(&k32, &LOWP_FMT_FP32);
  /* By hand: fp16, x[0] = 2048 and 4095 ones. Thread 0 adds its 15 ones to
     2048 one at a time: 2049 is a tie between 2048 and 2050, rounded to
     2048 each time. Threads 1..255 hold 16. Warp 0's tree: 2048+16 = 2064,
     +32 = 2096, +64 = 2160, +128 = 2288, +256 = 2544; warps 1..7 hold 512
     each; 2544 + 7 * 512 = 6128 (all even numbers below 8192, exact in
     fp16). In order, one after another, the sum stays at 2048; exactly it
     is 6143. */
  x[0] = 2048;
  for (i = 1; i < 4096; i++) x[i] = 1;
  lowp_rsum_cpu(&y, x, 1, 4096, k16);
  ys = seq_sum(x, 4096, &LOWP_FMT_FP16);
  lowp_test_check(y == 6128.0f && ys == 2048.0f,
                  "fp16 sum of 2048 and 4095 ones: tree %g (6128 by hand), in order %g (2048)",
                  (double)y, (double)ys);
  /* random rows, lengths around the block and warp sizes, fp16 / bf16 /
     fp32: twin = replay, and (for the narrow formats) != the sequential sum
     on most rows, i.e. the inputs do see the order */
  lowp_rng_init(&r, lowp_test_seed(), 21);
  {
    static const size_t ns[] = {1, 2, 31, 33, 255, 256, 257, 1000, 4096};
    static const lowp_format_t *fs[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_FP32};
    lowp_ka_fmt_t ks[3];
    size_t a, b;
    int differ = 0, total = 0, bad = 0;
    ks[0] = k16;
    ks[1] = kb16;
    ks[2] = k32;
    for (a = 0; a < sizeof ns / sizeof ns[0]; a++)
      for (b = 0; b < 3; b++) {
        size_t n = ns[a];
        for (i = 0; i < n; i++) {
          double v;
          lowp_round_f64(&v, lowp_rng_normal(&r) * 3 + 1, fs[b], NULL, LOWP_RND_NE);
          x[i] = (float)v;
        }
        lowp_rsum_cpu(&y, x, 1, n, ks[b]);
        if (memcmp(&y, &(float){replay(x, n, op_add, 0.0f, fs[b])}, sizeof y)) bad++;
        if (b < 2 && n > 256) {
          total++;
          differ += y != seq_sum(x, n, fs[b]);
        }
      }
    lowp_test_check(bad == 0, "sum twin = independent replay of the documented tree (%d rows differ)", bad);
    lowp_test_check(differ * 2 > total, "the narrow-format sums see the order: %d of %d rows differ from the sequential sum", differ, total);
  }
  /* a row of one element: the tree passes it through (fp32: + 0 is exact) */
  {
    float one = -0x1.8p-130f, out;
    lowp_rsum_cpu(&out, &one, 1, 1, k32);
    lowp_test_check(out == one, "a one-element row sums to its element (%a)", (double)out);
  }
}

/* ----------------------------------------------------------- accuracy */

#define U 0x1p-24

static void check_softmax(void) {
  enum { R = 4, N = 1000 };
  static float x[R * N], y[R * N], yn[R * N];
  lowp_rng_t r;
  size_t i, row;
  double worst = 0, bound;
  lowp_rng_init(&r, lowp_test_seed(), 22);
  for (i = 0; i < R * N; i++) x[i] = (float)(lowp_rng_normal(&r) * 4);
  lowp_test_check(lowp_softmax_cpu(y, x, R, N, 1) == LOWP_OK && lowp_softmax_cpu(yn, x, R, N, 0) == LOWP_OK,
                  "softmax runs");
  for (row = 0; row < R; row++) {
    double m = -INFINITY, s = 0;
    for (i = 0; i < N; i++) m = fmax(m, x[row * N + i]);
    for (i = 0; i < N; i++) s += exp((double)x[row * N + i] - m);
    for (i = 0; i < N; i++) {
      double e = exp((double)x[row * N + i] - m) / s;
      worst = fmax(worst, fabs(y[row * N + i] - e) / e);
      worst = fmax(worst, fabs(yn[row * N + i] - e) / e);
    }
  }
  /* relative error of e_i / s: exp (<= 1.5 ulp = 3u, tkarith), the row
     sum of positives (each of the <= 4 + 5 + 7 additions on a path costs u
     relative: gamma_16), the subtraction x - m (exact or u), division (u);
     doubled for safety against second-order terms */
  bound = 2 * (3 + 3 + 16 + 1 + 1) * U;
  printf("  softmax: max relative error %.3g, bound %.3g\n", worst, bound);
  lowp_test_check(worst <= bound, "softmax within %.3g (%.3g)", bound, worst);
  {
    float big[3] = {100.0f, 0.0f, -100.0f}, yb[3], ys[3];
    lowp_softmax_cpu(yb, big, 1, 3, 0);
    lowp_softmax_cpu(ys, big, 1, 3, 1);
    lowp_test_check(isnan(yb[0]) && ys[0] == 1.0f,
                    "naive softmax overflows on 100 (exp = inf, inf/inf = NaN), stable gives 1");
  }
}

static void check_layernorm(void) {
  enum { N = 3000 };
  static float x[N], y[N];
  lowp_rng_t r;
  int variant, far;
  double err[2][3];
  for (far = 0; far < 2; far++) {
    double off = far ? 1e4 : 0.5;
    lowp_rng_init(&r, lowp_test_seed(), 23);
    for (int i = 0; i < N; i++) x[i] = (float)(off + lowp_rng_normal(&r));
    for (variant = 0; variant < 3; variant++) {
      double m = 0, v = 0, ey = 0;
      float mu, var;
      int i;
      for (i = 0; i < N; i++) m += x[i];
      m /= N;
      for (i = 0; i < N; i++) v += (x[i] - m) * (x[i] - m);
      v /= N;
      lowp_layernorm_cpu(y, &mu, &var, x, 1, N, 1e-5f, variant);
      for (i = 0; i < N; i++) ey = fmax(ey, fabs(y[i] - (x[i] - m) / sqrt(v + 1e-5)));
      err[far][variant] = fabs(var - v) / v;
      printf("  layernorm variant %d, offset %g: mean err %.3g, var rel err %.3g, y err %.3g\n",
             variant, off, fabs(mu - m), err[far][variant], ey);
      if (!far || variant != LOWP_ROWK_LN_ONEPASS)
        /* N u |x|max / sigma-scale: the sums' error relative to var ~ sigma^2 = 1
           grows with the offset^2 for one pass only */
        lowp_test_check(err[far][variant] <= 64 * N * U * (1 + (far ? 0 : off * off)) &&
                            fabs(mu - m) <= 16 * U * (off + 4) * 8,
                        "layernorm variant %d, offset %g: var and mean within bounds", variant, off);
    }
  }
  lowp_test_check(err[1][LOWP_ROWK_LN_ONEPASS] > 100 * err[1][LOWP_ROWK_LN_TWOPASS],
                  "one-pass variance fails far from zero: %.3g vs two-pass %.3g",
                  err[1][LOWP_ROWK_LN_ONEPASS], err[1][LOWP_ROWK_LN_TWOPASS]);
}

static void check_xent(void) {
  enum { R = 8, N = 777 };
  static float x[R * N], loss[R];
  int32_t t[R];
  lowp_rng_t r;
  int row, i;
  double worst = 0;
  lowp_rng_init(&r, lowp_test_seed(), 24);
  for (i = 0; i < R * N; i++) x[i] = (float)(lowp_rng_normal(&r) * 5);
  for (row = 0; row < R; row++) t[row] = (int32_t)(lowp_rng_next(&r) % N);
  lowp_test_check(lowp_xent_cpu(loss, x, t, R, N) == LOWP_OK, "xent runs");
  for (row = 0; row < R; row++) {
    double m = -INFINITY, s = 0, want;
    for (i = 0; i < N; i++) m = fmax(m, x[row * N + i]);
    for (i = 0; i < N; i++) s += exp((double)x[row * N + i] - m);
    want = log(s) + m - x[row * N + t[row]];
    worst = fmax(worst, fabs(loss[row] - want) / (1 + fabs(want)));
  }
  printf("  xent: max error %.3g (relative to 1 + |loss|)\n", worst);
  /* log(s) (1 ulp, plus s's gamma_16 relative -> absolute 16u), x_t - m
     (u |x_t - m|), the final subtraction (u) */
  lowp_test_check(worst <= 64 * U, "xent within 64u (%.3g)", worst);
  t[0] = N;
  lowp_test_check(lowp_xent_cpu(loss, x, t, R, N) == LOWP_EINVAL, "a target outside [0, n) is refused");
}

int main(void) {
  lowp_test_start("trowk");
  check_order();
  check_kernels_replay();
  check_softmax();
  check_layernorm();
  check_xent();
  {
    float g;
    lowp_ka_fmt_t k;
    lowp_rowk_fmt(&k, &LOWP_FMT_FP32);
    lowp_test_check(lowp_rsum_cpu(&g, &g, 1, 0, k) == LOWP_EINVAL &&
                        lowp_rsum_cpu(&g, &g, 1, 1u << 24, k) == LOWP_EINVAL,
                    "rows of 0 or 2^24 elements are refused");
  }
  return lowp_test_end();
}
