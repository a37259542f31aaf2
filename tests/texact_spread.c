/* texact_spread -- the exact GEMM on data with a wide exponent spread: sparse slices and the
   wide W form give the same bits as the DGEMM-only sliced path, the accumulator and MPFR */

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact/exact.h"
#include "rng/dist.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

static int same(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  return x == y && signbit(x) == signbit(y);
}

/* the ways the sliced path may multiply slices (lowp_gemm_opts_t.test_sparse)
   and choose them (forced: every finite row and column sliced, equal widths) */
static const struct {
  lowp_gemm_method_t method;
  int sparse;
  const char *name;
} ways[] = {
    {LOWP_GEMM_SLICED, -1, "forced, DGEMM only"}, {LOWP_GEMM_SLICED, 1, "forced, sparse left"},
    {LOWP_GEMM_SLICED, 2, "forced, sparse right"}, {LOWP_GEMM_SLICED, 0, "forced, chosen"},
    {LOWP_GEMM_AUTO, 0, "auto"},                  {LOWP_GEMM_AUTO, 1, "auto, sparse left"},
    {LOWP_GEMM_ACC, 0, "accumulator"},
};
#define NWAYS (sizeof ways / sizeof ways[0])

/* every way == MPFR, bit for bit, in rounding mode rnd to format f; returns
   the statistics of the forced DGEMM-only run and, in *sp, the number of
   sparse products of the forced sparse-left run */
static lowp_gemm_stats_t check_all(const double *a, const double *b, const double *c0, size_t m,
                                   size_t n, size_t k, const lowp_format_t *f,
                                   lowp_rounding_t rnd, const char *what, size_t *sp) {
  double *cm = malloc(m * n * sizeof *cm), *c = malloc(m * n * sizeof *c);
  lowp_policy_t pol = {0};
  lowp_gemm_stats_t st, first;
  size_t w, i, bad;
  int s;
  pol.sr_seed = 11;
  memset(&first, 0, sizeof first);
  s = lowp_exact_gemm_mpfr(cm, a, b, c0, m, n, k, f, &pol, rnd);
  lowp_test_check(s == 0, "%s: mpfr status %d", what, s);
  for (w = 0; w < NWAYS; w++) {
    lowp_gemm_opts_t o = {.method = ways[w].method, .test_sparse = ways[w].sparse};
    s = lowp_exact_gemm_ex(c, a, b, c0, m, n, k, f, &pol, rnd, &o, &st);
    lowp_test_check(s == 0, "%s, %s: status %d", what, ways[w].name, s);
    lowp_test_check(st.sliced_outputs + st.fallback_outputs == m * n, "%s, %s: outputs", what,
                    ways[w].name);
    for (i = 0, bad = 0; i < m * n; i++)
      if (!same(c[i], cm[i]) && bad++ < 2)
        lowp_test_check(0, "%s %s %s, %s: C[%zu] = %a, mpfr %a", what, f->name,
                        lowp_rounding_name(rnd), ways[w].name, i, c[i], cm[i]);
    lowp_test_check(bad == 0, "%s %s %s, %s: %zu mismatches", what, f->name,
                    lowp_rounding_name(rnd), ways[w].name, bad);
    if (w == 0) first = st;
    if (w == 0)
      lowp_test_check(st.sparse_products == 0, "%s: DGEMM only, yet %zu sparse products", what,
                      st.sparse_products);
    if (w == 1 && sp) *sp = st.sparse_products;
    if (w == 1 || w == 2)
      lowp_test_check(st.dgemm_calls == 0 &&
                          st.sparse_products == (size_t)st.slices_a * (size_t)st.slices_b,
                      "%s, %s: %zu DGEMMs, %zu sparse products for %d x %d slices", what,
                      ways[w].name, st.dgemm_calls, st.sparse_products, st.slices_a,
                      st.slices_b);
  }
  free(cm);
  free(c);
  return first;
}

static uint64_t rng_state;
static uint64_t rnd64(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* gradient-like fp32: magnitudes log-uniform on [2^-40, 1], random signs */
static void grad(double *x, size_t len, uint64_t seed, uint32_t stream) {
  lowp_dist_t d = {LOWP_DIST_LOGUNIFORM, 0, 1.0};
  size_t i;
  d.lo = ldexp(1.0, -40);
  lowp_dist_fill(x, len, &d, &LOWP_FMT_FP32, seed, stream);
  for (i = 0; i < len; i++)
    if (rnd64() & 1) x[i] = -x[i];
}

static void fill(double *x, size_t len, lowp_dist_kind_t kind, const lowp_format_t *f,
                 uint64_t seed, uint32_t stream) {
  lowp_dist_t d = {kind, 1e-3, 1e3};
  lowp_dist_fill(x, len, &d, f, seed, stream);
}

/* a handful of entries off the fp16 grid, of every kind: more bits, far
   below, far above, subnormal binary64 */
static void off_grid(double *x, size_t len, int count) {
  static const double scale[] = {0x1.000004p+0, 0x1p-40, 0x1p-140, 0x1p+60, 0x1.8p-1070};
  int q;
  for (q = 0; q < count; q++) {
    size_t at = (size_t)(rnd64() % len);
    x[at] = (q % 5 == 4) ? (x[at] < 0 ? -scale[4] : scale[4]) : x[at] * scale[q % 5];
    if (x[at] == 0.0) x[at] = scale[q % 5];
  }
}

int main(void) {
  enum { MX = 40, KX = 1100 };
  double *a = calloc(MX * KX, sizeof *a), *b = calloc(KX * MX, sizeof *b),
         *c0 = calloc(MX * MX, sizeof *c0);
  uint64_t seed;
  size_t i, sp = 0;
  int r;
  lowp_gemm_stats_t st;
  lowp_test_start("texact_spread");
  seed = lowp_test_seed();
  rng_state = seed;

  /* gradient-like data, k not a multiple of anything: rows of about 64 bits
     need 3 slices of 22 bits at k = 500 (budget 44): the W form's shift
     reaches 88 > 70 bits, so V is the wide two-word sum; every rounding
     mode, to fp64 and fp32, with and without an addend */
  {
    const size_t m = 13, n = 11, k = 500;
    char what[96];
    grad(a, m * k, seed, 1);
    grad(b, k * n, seed, 2);
    fill(c0, m * n, LOWP_DIST_NORMAL, &LOWP_FMT_FP32, seed, 3);
    for (r = 0; r < LOWP_RND_COUNT; r++) {
      snprintf(what, sizeof what, "grad k=%zu", k);
      st = check_all(a, b, NULL, m, n, k, &LOWP_FMT_FP64, (lowp_rounding_t)r, what, &sp);
      check_all(a, b, c0, m, n, k, &LOWP_FMT_FP32, (lowp_rounding_t)r, what, NULL);
    }
    lowp_test_check(st.slices_a == 3 && st.slices_b == 3 && st.slice_bits_a == 22 &&
                        st.slice_bits_b == 22 && st.fallback_outputs == 0,
                    "grad: forced %d x %d slices of %d + %d bits, %zu fallback", st.slices_a,
                    st.slices_b, st.slice_bits_a, st.slice_bits_b, st.fallback_outputs);
    lowp_test_check(sp == 9, "grad: %zu sparse-left products", sp);
    check_all(a, b, NULL, 1, 1, 1, &LOWP_FMT_FP64, LOWP_RND_NE, "grad k=1", NULL);
    check_all(a, b, NULL, m, n, 77, &LOWP_FMT_FP64, LOWP_RND_DN, "grad k=77", NULL);
    check_all(a, b, NULL, 3, 5, 1089, &LOWP_FMT_FP64, LOWP_RND_TO, "grad k=1089", NULL);
  }

  /* fp16 data with a handful of entries off the fp16 grid (the rows and
     columns that hold them need more slices; those slices are nearly empty) */
  {
    const size_t m = 17, n = 19, k = 731;
    fill(a, m * k, LOWP_DIST_NORMAL, &LOWP_FMT_FP16, seed, 4);
    fill(b, k * n, LOWP_DIST_NORMAL, &LOWP_FMT_FP16, seed, 5);
    off_grid(a, m * k, 10);
    off_grid(b, k * n, 10);
    fill(c0, m * n, LOWP_DIST_NORMAL, &LOWP_FMT_FP16, seed, 6);
    for (r = 0; r < LOWP_RND_COUNT; r++) {
      check_all(a, b, NULL, m, n, k, &LOWP_FMT_FP64, (lowp_rounding_t)r, "off-grid fp16", NULL);
      check_all(a, b, c0, m, n, k, &LOWP_FMT_FP16, (lowp_rounding_t)r, "off-grid fp16", NULL);
    }
  }

  /* mixed rows: fp32 normal data with a few entries at the ends of fp32's
     range (subnormal 2^-149 and 2^127-ish) and of binary64's */
  {
    const size_t m = 9, n = 8, k = 400;
    fill(a, m * k, LOWP_DIST_NORMAL, &LOWP_FMT_FP32, seed, 7);
    fill(b, k * n, LOWP_DIST_NORMAL, &LOWP_FMT_FP32, seed, 8);
    a[5] = 0x1p-149;
    a[k + 7] = -0x1.fffffep+127;
    a[3 * k + 1] = 0x1p-1074;
    b[2 * n + 3] = -0x1p-149;
    b[9 * n + 1] = 0x1p+200;
    check_all(a, b, NULL, m, n, k, &LOWP_FMT_FP64, LOWP_RND_NE, "mixed rows", NULL);
    check_all(a, b, NULL, m, n, k, &LOWP_FMT_FP64, LOWP_RND_UP, "mixed rows", NULL);
    check_all(a, b, NULL, m, n, k, &LOWP_FMT_BF16, LOWP_RND_SR, "mixed rows", NULL);
  }

  /* the whole fp32 range, subnormals included (many slices, each sparse) */
  {
    const size_t m = 6, n = 5, k = 203;
    fill(a, m * k, LOWP_DIST_SPREAD, &LOWP_FMT_FP32, seed, 9);
    fill(b, k * n, LOWP_DIST_SPREAD, &LOWP_FMT_FP32, seed, 10);
    check_all(a, b, NULL, m, n, k, &LOWP_FMT_FP64, LOWP_RND_NE, "spread fp32", NULL);
    check_all(a, b, NULL, m, n, k, &LOWP_FMT_FP32, LOWP_RND_DN, "spread fp32", NULL);
  }

  /* cancellation to exactly zero through far-off entries: row i of A is
     x, -x, t, -t (t 2^-60 x) against equal columns, so every output is an
     exact zero (sign by the rounding mode); then inf and NaN join */
  {
    const size_t m = 5, n = 4, k = 300;
    for (i = 0; i < m * k; i += 4) {
      double x = ldexp((double)(rnd64() % 1000 + 1), -(int)(rnd64() % 8));
      a[i] = x, a[i + 1] = -x, a[i + 2] = ldexp(x, -60), a[i + 3] = -ldexp(x, -60);
    }
    for (i = 0; i < k; i++) {
      double y = ldexp((double)(rnd64() % 999 + 1), -3);
      size_t j;
      for (j = 0; j < n; j++) b[i * n + j] = y;
    }
    check_all(a, b, NULL, m, n, k, &LOWP_FMT_FP64, LOWP_RND_NE, "cancel to zero", NULL);
    check_all(a, b, NULL, m, n, k, &LOWP_FMT_FP64, LOWP_RND_DN, "cancel to zero", NULL);
    a[2 * k + 9] = INFINITY;
    b[11 * n + 2] = NAN;
    check_all(a, b, NULL, m, n, k, &LOWP_FMT_FP64, LOWP_RND_NE, "cancel + inf/NaN", NULL);
  }

  /* the same bytes on 1 and 3 threads, sparse products included (the
     gradient-like data again, large enough for the parallel loops) */
  {
    const size_t m = 40, n = 40, k = 1100;
    double *c1 = malloc(m * n * sizeof *c1), *c3 = malloc(m * n * sizeof *c3);
    lowp_gemm_opts_t o = {.method = LOWP_GEMM_SLICED, .test_sparse = 1};
    int nt = omp_get_max_threads();
    grad(a, m * k, seed, 11);
    grad(b, k * n, seed, 12);
    omp_set_num_threads(1);
    lowp_exact_gemm_ex(c1, a, b, NULL, m, n, k, &LOWP_FMT_FP64, NULL, LOWP_RND_NE, &o, &st);
    omp_set_num_threads(3);
    lowp_exact_gemm_ex(c3, a, b, NULL, m, n, k, &LOWP_FMT_FP64, NULL, LOWP_RND_NE, &o, NULL);
    omp_set_num_threads(nt);
    lowp_test_check(st.sparse_products > 0 && memcmp(c1, c3, m * n * sizeof *c1) == 0,
                    "1 vs 3 threads: different bytes (%zu sparse products)", st.sparse_products);
    free(c1);
    free(c3);
  }

  /* bad test hook value */
  {
    lowp_gemm_opts_t o = {.test_sparse = 3};
    double c[4];
    lowp_test_check(lowp_exact_gemm_ex(c, a, b, NULL, 2, 2, 3, &LOWP_FMT_FP64, NULL,
                                       LOWP_RND_NE, &o, NULL) == LOWP_EINVAL,
                    "test_sparse = 3 accepted");
  }

  free(a);
  free(b);
  free(c0);
  return lowp_test_end();
}
