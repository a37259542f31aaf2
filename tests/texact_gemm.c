/* texact_gemm -- tests of lowp_exact_gemm / gemv (fast exact path) against MPFR */

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact/exact.h"
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

static int same(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  return x == y && signbit(x) == signbit(y);
}

/* fast == MPFR oracle, every element, for format f and mode rnd */
static void compare(const double *a, const double *b, const double *c0, size_t m,
                    size_t n, size_t k, const lowp_format_t *f, lowp_rounding_t rnd,
                    const char *what) {
  double *c1 = malloc(m * n * sizeof *c1), *c2 = malloc(m * n * sizeof *c2);
  size_t i, bad = 0;
  lowp_policy_t pol = {0};
  pol.sr_seed = 99;
  int s1 = lowp_exact_gemm(c1, a, b, c0, m, n, k, f, &pol, rnd);
  int s2 = lowp_exact_gemm_mpfr(c2, a, b, c0, m, n, k, f, &pol, rnd);
  lowp_test_check(s1 == LOWP_OK && s2 == LOWP_OK, "%s: status %d %d", what, s1, s2);
  for (i = 0; i < m * n; i++)
    if (!same(c1[i], c2[i]) && bad++ < 3)
      lowp_test_check(0, "%s %s %s: C[%zu] fast %a mpfr %a", what, f->name,
                      lowp_rounding_name(rnd), i, c1[i], c2[i]);
  lowp_test_check(bad == 0, "%s %s %s: %zu mismatches", what, f->name,
                  lowp_rounding_name(rnd), bad);
  free(c1);
  free(c2);
}

static void fill(double *x, size_t len, lowp_dist_kind_t kind, const lowp_format_t *f,
                 uint64_t seed, uint32_t stream) {
  lowp_dist_t d = {kind, 1e-3, 1e3};
  lowp_dist_fill(x, len, &d, f, seed, stream);
}

int main(void) {
  uint64_t seed;
  size_t i;
  const size_t M = 6, N = 5, K = 300;
  static double a[6 * 5000], b[5000 * 5], c0[30], c[30], c2[30];
  lowp_test_start("texact_gemm");
  seed = lowp_test_seed();

  /* special values in the general path: inf * 0, inf - inf, NaN */
  {
    double A[] = {INFINITY, 1.0, 1.0, 1.0}, B[] = {0.0, 1.0, INFINITY, -INFINITY};
    /* C[0][0] = inf*0 + 1*inf = NaN; C[0][1] = inf*1 + 1*(-inf) = NaN;
       C[1][0] = 1*0 + 1*inf = inf; C[1][1] = 1 - inf = -inf */
    lowp_exact_gemm(c, A, B, NULL, 2, 2, 2, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    lowp_test_check(isnan(c[0]) && isnan(c[1]) && c[2] == INFINITY && c[3] == -INFINITY,
                    "specials: %a %a %a %a", c[0], c[1], c[2], c[3]);
  }
  /* exact zero results from the fast path keep the zero-sign rule */
  {
    double A[] = {1.0, 1.0, -0.0}, B[] = {2.0, -2.0, 0.0};
    lowp_exact_gemm(c, A, B, NULL, 1, 1, 3, &LOWP_FMT_FP64, NULL, LOWP_RND_DN);
    lowp_test_check(same(c[0], -0.0), "x - x rdn: %a", c[0]);
    lowp_exact_gemm(c, A + 2, B + 2, NULL, 1, 1, 1, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    lowp_test_check(same(c[0], -0.0), "-0 * 0 = -0: %a", c[0]);
  }
  /* generic sweeps: fast path (fp16, bf16, fp32, e4m3 data) and general
     path (fp64 spread with subnormals; injected inf/NaN), all modes */
  {
    static const lowp_format_t *fin[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_FP32,
                                         &LOWP_FMT_E4M3, &LOWP_FMT_FP64};
    static const lowp_dist_kind_t kinds[] = {LOWP_DIST_NORMAL, LOWP_DIST_SPREAD,
                                             LOWP_DIST_LOGUNIFORM, LOWP_DIST_UNIFORM11};
    size_t fi, ki;
    int r;
    for (fi = 0; fi < sizeof fin / sizeof fin[0]; fi++)
      for (ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
        char what[96];
        fill(a, M * K, kinds[ki], fin[fi], seed, 1);
        fill(b, K * N, kinds[ki], fin[fi], seed, 2);
        fill(c0, M * N, LOWP_DIST_NORMAL, fin[fi], seed, 3);
        snprintf(what, sizeof what, "%s %s", fin[fi]->name, lowp_dist_name(kinds[ki]));
        for (r = 0; r < LOWP_RND_COUNT; r++) {
          compare(a, b, NULL, M, N, K, &LOWP_FMT_FP64, (lowp_rounding_t)r, what);
          compare(a, b, c0, M, N, K, fin[fi], (lowp_rounding_t)r, what);
        }
      }
    /* adversarial: massive cancellation, then with inf/NaN injected */
    lowp_dist_cancel_gemm(a, b, M, N, K, &LOWP_FMT_FP32, seed);
    compare(a, b, NULL, M, N, K, &LOWP_FMT_FP64, LOWP_RND_NE, "cancel fp32");
    compare(a, b, NULL, M, N, K, &LOWP_FMT_BF16, LOWP_RND_TZ, "cancel fp32");
    lowp_dist_cancel_gemm(a, b, M, N, K, &LOWP_FMT_FP64, seed);
    compare(a, b, NULL, M, N, K, &LOWP_FMT_FP64, LOWP_RND_NE, "cancel fp64");
    a[3] = INFINITY;
    b[7 * N + 2] = NAN;
    a[K + 5] = -INFINITY;
    compare(a, b, NULL, M, N, K, &LOWP_FMT_FP64, LOWP_RND_NE, "cancel fp64 + inf/NaN");
    /* long k: several flushes of the fast path's counters (CHUNK = 2046) */
    fill(a, M * 5000, LOWP_DIST_UNIFORM01, &LOWP_FMT_FP16, seed, 4);
    fill(b, 5000 * N, LOWP_DIST_UNIFORM01, &LOWP_FMT_FP16, seed, 5);
    for (i = 0; i < M * 5000; i++) a[i] = 65504.0; /* largest fp16: biggest counters */
    compare(a, b, NULL, M, N, 5000, &LOWP_FMT_FP64, LOWP_RND_NE, "k=5000 fp16 max");
  }
  /* property: same bytes for 1 and 2 threads; gemv == gemm with n = 1 */
  {
    fill(a, M * K, LOWP_DIST_NORMAL, &LOWP_FMT_FP16, seed, 6);
    fill(b, K * N, LOWP_DIST_NORMAL, &LOWP_FMT_FP16, seed, 7);
    omp_set_num_threads(1);
    lowp_exact_gemm(c, a, b, NULL, M, N, K, &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
    omp_set_num_threads(2);
    lowp_exact_gemm(c2, a, b, NULL, M, N, K, &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
    lowp_test_check(!memcmp(c, c2, sizeof c), "1 vs 2 threads differ");
    {
      double bc[300], y[6];
      for (i = 0; i < K; i++) bc[i] = b[i * N + 2];
      lowp_exact_gemv(y, a, bc, NULL, M, K, &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
      for (i = 0; i < M; i++)
        lowp_test_check(same(y[i], c[i * N + 2]), "gemv[%zu] %a vs gemm %a", i, y[i],
                        c[i * N + 2]);
    }
  }
  /* the plain MPFR baseline (bench exact): same results as the exact GEMM
     for fp16 and fp32 data, toward zero and to nearest; bad arguments */
  {
    static const lowp_format_t *fins[] = {&LOWP_FMT_FP16, &LOWP_FMT_FP32};
    static const lowp_rounding_t rnds[] = {LOWP_RND_NE, LOWP_RND_TZ};
    size_t q;
    for (q = 0; q < 4; q++) {
      const lowp_format_t *fin = fins[q / 2];
      fill(a, M * K, LOWP_DIST_LOGUNIFORM, fin, seed, 40 + (uint32_t)q);
      fill(b, K * N, LOWP_DIST_NORMAL, fin, seed, 50 + (uint32_t)q);
      lowp_exact_gemm(c, a, b, NULL, M, N, K, &LOWP_FMT_FP32, NULL, rnds[q % 2]);
      lowp_test_check(lowp_exact_gemm_plain_mpfr(c2, a, b, M, N, K, fin->precision,
                                                 &LOWP_FMT_FP32, rnds[q % 2]) == LOWP_OK,
                      "plain mpfr runs");
      for (i = 0; i < M * N; i++)
        lowp_test_check(same(c[i], c2[i]), "plain mpfr %s C[%zu] %a vs exact %a", fin->name, i,
                        c2[i], c[i]);
    }
    a[0] = NAN;
    lowp_test_check(lowp_exact_gemm_plain_mpfr(c2, a, b, M, N, K, 24, &LOWP_FMT_FP32,
                                               LOWP_RND_NE) == LOWP_EINVAL, "plain mpfr NaN");
    lowp_test_check(lowp_exact_gemm_plain_mpfr(c2, a, b, M, N, K, 54, &LOWP_FMT_FP32,
                                               LOWP_RND_NE) == LOWP_EINVAL, "plain mpfr pin");
  }
  /* bad arguments */
  lowp_test_check(lowp_exact_gemm(c, NULL, b, NULL, 1, 1, 1, &LOWP_FMT_FP64, NULL,
                                  LOWP_RND_NE) == LOWP_EINVAL, "NULL A");
  lowp_test_check(lowp_exact_gemm(c, a, b, NULL, 1, 1, 1, &LOWP_FMT_FP64, NULL,
                                  (lowp_rounding_t)99) == LOWP_EROUND, "bad mode");
  lowp_test_check(lowp_exact_gemm(c, a, b, NULL, (size_t)1 << 40, (size_t)1 << 40, 1 << 30,
                                  &LOWP_FMT_FP64, NULL, LOWP_RND_NE) == LOWP_ENOMEM,
                  "absurd sizes");
  return lowp_test_end();
}
