/* texact_trunc -- the truncated sliced path of the exact GEMM (only the slice pairs t + u < D,
   the rest bounded; outputs in doubt go to the accumulator) gives the same bits as the
   accumulator and MPFR, in every deterministic rounding mode and output format */

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact/exact.h"
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

/* the deterministic modes: the truncated path takes every one of them */
static const lowp_rounding_t modes[] = {LOWP_RND_NE, LOWP_RND_NA, LOWP_RND_TZ,
                                        LOWP_RND_UP, LOWP_RND_DN, LOWP_RND_TO};
#define NMODES (sizeof modes / sizeof modes[0])

static int same(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  return x == y && signbit(x) == signbit(y);
}

/* C with the truncated path forced at D diagonals == the accumulator == MPFR
   (when mp), bit for bit; returns the truncated run's statistics */
static lowp_gemm_stats_t check_d(const double *a, const double *b, size_t m, size_t n, size_t k,
                                 int D, const lowp_format_t *f, lowp_rounding_t rnd, int mp,
                                 const char *what) {
  double *cr = malloc(m * n * sizeof *cr), *c = malloc(m * n * sizeof *c);
  lowp_policy_t pol = {0};
  lowp_gemm_opts_t ot = {.test_trunc = D}, oa = {.method = LOWP_GEMM_ACC};
  lowp_gemm_stats_t st;
  size_t i, bad = 0;
  int s;
  if (mp) s = lowp_exact_gemm_mpfr(cr, a, b, NULL, m, n, k, f, &pol, rnd);
  else s = lowp_exact_gemm_ex(cr, a, b, NULL, m, n, k, f, &pol, rnd, &oa, NULL);
  lowp_test_check(s == 0, "%s: reference status %d", what, s);
  s = lowp_exact_gemm_ex(c, a, b, NULL, m, n, k, f, &pol, rnd, &ot, &st);
  lowp_test_check(s == 0, "%s: status %d", what, s);
  for (i = 0; i < m * n; i++)
    if (!same(c[i], cr[i]) && bad++ < 2)
      lowp_test_check(0, "%s %s %s D=%d: C[%zu] = %a, reference %a", what, f->name,
                      lowp_rounding_name(rnd), D, i, c[i], cr[i]);
  lowp_test_check(bad == 0, "%s %s %s D=%d: %zu mismatches", what, f->name,
                  lowp_rounding_name(rnd), D, bad);
  lowp_test_check(st.sliced_outputs + st.fallback_outputs == m * n &&
                      st.trunc_decided <= st.sliced_outputs &&
                      st.trunc_undecided <= st.fallback_outputs,
                  "%s D=%d: outputs %zu + %zu, decided %zu, in doubt %zu", what, D,
                  st.sliced_outputs, st.fallback_outputs, st.trunc_decided, st.trunc_undecided);
  free(cr);
  free(c);
  return st;
}

static void spread(double *x, size_t len, uint64_t seed, uint32_t stream) {
  lowp_dist_t d = {LOWP_DIST_SPREAD, 0, 1.0};
  lowp_dist_fill(x, len, &d, &LOWP_FMT_FP32, seed, stream);
}

/* whole-range fp32 exponents (rows span about 300 bits) at several k and D:
   small D leaves many outputs in doubt (fallback), larger D decides them */
static void whole_range(double *a, double *b, uint64_t seed) {
  static const size_t ks[] = {1, 7, 203, 1000};
  static const int Ds[] = {1, 2, 4, 6};
  size_t q, r, dd, dec[4] = {0}, und[4] = {0};
  char what[64];
  for (q = 0; q < sizeof ks / sizeof ks[0]; q++) {
    const size_t m = 7, n = 6, k = ks[q];
    spread(a, m * k, seed, (uint32_t)(20 + q));
    spread(b, k * n, seed, (uint32_t)(30 + q));
    snprintf(what, sizeof what, "whole range k=%zu", k);
    for (dd = 0; dd < 4; dd++)
      for (r = 0; r < NMODES; r++) {
        lowp_gemm_stats_t st =
            check_d(a, b, m, n, k, Ds[dd], &LOWP_FMT_FP64, modes[r], r < 2, what);
        lowp_test_check(st.trunc_diagonals == Ds[dd], "%s: truncated path not taken", what);
        dec[dd] += st.trunc_decided;
        und[dd] += st.trunc_undecided;
      }
    check_d(a, b, m, n, k, 5, &LOWP_FMT_FP32, LOWP_RND_NE, 1, what);
    check_d(a, b, m, n, k, 5, &LOWP_FMT_BF16, LOWP_RND_DN, 1, what);
    check_d(a, b, m, n, k, 5, &LOWP_FMT_FP16, LOWP_RND_UP, 1, what);
    check_d(a, b, m, n, k, 3, &LOWP_FMT_E4M3, LOWP_RND_TZ, 1, what);
  }
  /* D = 1 keeps one slice pair: nearly everything in doubt; D = 6 keeps
     126-bit-deep products: nearly everything decided */
  lowp_test_check(und[0] > dec[0] && und[0] > 0, "D=1: %zu decided, %zu in doubt", dec[0],
                  und[0]);
  lowp_test_check(dec[3] > 10 * und[3], "D=6: %zu decided, %zu in doubt", dec[3], und[3]);
}

/* outputs engineered on a rounding boundary of the output format: the kept
   pairs give 1 + 2^-p (a tie of precision p) or 1 + 2^-(p-2) (representable,
   last bit even: to odd must move off it too),
   the dropped pair decides with +-2^-200 or nothing; both signs, every
   deterministic mode, to fp64 and fp32 */
static void boundaries(void) {
  enum { K = 3, N = 6 };
  const lowp_format_t *fs[] = {&LOWP_FMT_FP64, &LOWP_FMT_FP32};
  double a[2 * K], b[K * N];
  size_t q, r, j;
  int D;
  for (q = 0; q < 2; q++) {
    int p = fs[q]->precision;
    for (j = 0; j < N; j++) {
      /* column j: b = (1, 2^(27-p) [or 2^(29-p)], +-2^-100 or 0) */
      b[0 * N + j] = 1.0;
      b[1 * N + j] = ldexp(1.0, (j < 3 ? -p : 2 - p) + 27);
      b[2 * N + j] = j % 3 == 0 ? ldexp(1.0, -100) : j % 3 == 1 ? -ldexp(1.0, -100) : 0.0;
    }
    a[0] = 1.0, a[1] = ldexp(1.0, -27), a[2] = ldexp(1.0, -100);
    a[3] = -1.0, a[4] = -ldexp(1.0, -27), a[5] = -ldexp(1.0, -100);
    for (D = 1; D <= 9; D++)
      for (r = 0; r < NMODES; r++) {
        lowp_gemm_stats_t st = check_d(a, b, 2, N, K, D, fs[q], modes[r], 1, "boundary");
        /* the pair of 2^-100 entries sits on diagonal 8 (25-bit slices):
           below that every output with a nonzero third term is in doubt */
        if (D <= 8)
          lowp_test_check(st.trunc_undecided >= 4, "boundary %s D=%d: %zu in doubt",
                          fs[q]->name, D, st.trunc_undecided);
      }
  }
}

/* exact zeros and heavy cancellation: row i is x, -x, t, -t (t far below x)
   against B rows equal in fours (every output exactly zero; its sign is the
   accumulator's rule), and 2^100 - 2^100 + 2^-100 (the kept part cancels) */
static void cancellation(double *a, double *b) {
  const size_t m = 4, n = 3, k = 200;
  size_t i, j, r;
  int D;
  for (i = 0; i < m * k; i += 4) {
    double x = ldexp((double)(i % 97 + 1), (int)(i % 50));
    a[i] = x, a[i + 1] = -x, a[i + 2] = ldexp(x, -150), a[i + 3] = -ldexp(x, -150);
  }
  for (i = 0; i < k; i++)
    for (j = 0; j < n; j++) b[i * n + j] = ldexp((double)(i / 4 % 13 + 1 + j), -(int)(i / 4 % 7));
  for (D = 1; D <= 7; D += 3)
    for (r = 0; r < NMODES; r++) {
      lowp_gemm_stats_t st = check_d(a, b, m, n, k, D, &LOWP_FMT_FP64, modes[r], 1, "zeros");
      lowp_test_check(st.trunc_decided == 0, "zeros D=%d: %zu decided", D, st.trunc_decided);
    }
  memset(a, 0, m * k * sizeof *a);
  for (i = 0; i < m; i++) {
    a[i * k] = ldexp(1.0, 100), a[i * k + 1] = -ldexp(1.0, 100);
    a[i * k + 2] = ldexp(i & 1 ? -1.0 : 1.0, -100 - (int)i);
  }
  for (D = 1; D <= 11; D += 2)
    for (r = 0; r < NMODES; r++)
      check_d(a, b, m, n, k, D, &LOWP_FMT_FP64, modes[r], 1, "cancellation");
}

/* rows and columns the truncated path leaves out or takes exactly: a NaN
   row, an inf column (the accumulator's), a row of zeros and -0s, a column
   of -0s (exact zeros, signed by the accumulator's rule) */
static void special(double *a, double *b, uint64_t seed) {
  const size_t m = 6, n = 5, k = 150;
  size_t l, r;
  spread(a, m * k, seed, 60);
  spread(b, k * n, seed, 61);
  a[1 * k + 17] = NAN;
  b[33 * n + 2] = -INFINITY;
  for (l = 0; l < k; l++) {
    a[3 * k + l] = l % 2 ? -0.0 : 0.0;
    b[l * n + 4] = -0.0;
  }
  for (r = 0; r < NMODES; r++) {
    lowp_gemm_stats_t st = check_d(a, b, m, n, k, 5, &LOWP_FMT_FP64, modes[r], 1, "special");
    lowp_test_check(st.trunc_diagonals == 5 && st.trunc_decided > 0 &&
                        st.fallback_outputs >= n + m - 1,
                    "special: D=%d, %zu decided, %zu fallback", st.trunc_diagonals,
                    st.trunc_decided, st.fallback_outputs);
  }
}

/* the cost model takes the truncated path for whole-range data by itself,
   and 1 and 2 threads give the same bytes */
static void auto_threads(double *a, double *b, uint64_t seed) {
  const size_t m = 96, n = 96, k = 600;
  double *c1 = malloc(m * n * sizeof *c1), *c2 = malloc(m * n * sizeof *c2);
  lowp_gemm_opts_t oa = {.method = LOWP_GEMM_ACC};
  lowp_gemm_stats_t st, st2;
  int nt = omp_get_max_threads();
  spread(a, m * k, seed, 40);
  spread(b, k * n, seed, 41);
  lowp_exact_gemm_ex(c2, a, b, NULL, m, n, k, &LOWP_FMT_FP64, NULL, LOWP_RND_NE, &oa, NULL);
  omp_set_num_threads(1);
  lowp_exact_gemm_ex(c1, a, b, NULL, m, n, k, &LOWP_FMT_FP64, NULL, LOWP_RND_NE, NULL, &st);
  lowp_test_check(st.trunc_diagonals > 0 && st.trunc_decided > m * n / 2,
                  "auto: truncated path not chosen (D=%d, %zu decided)", st.trunc_diagonals,
                  st.trunc_decided);
  lowp_test_check(memcmp(c1, c2, m * n * sizeof *c1) == 0, "auto truncated != accumulator");
  omp_set_num_threads(2);
  lowp_exact_gemm_ex(c2, a, b, NULL, m, n, k, &LOWP_FMT_FP64, NULL, LOWP_RND_NE, NULL, &st2);
  lowp_test_check(memcmp(c1, c2, m * n * sizeof *c1) == 0 &&
                      st2.trunc_decided == st.trunc_decided,
                  "1 vs 2 threads: different bytes");
  /* D = 3 leaves most outputs in doubt: the accumulator's list of single
     outputs runs in parallel too, same bytes */
  {
    lowp_gemm_opts_t o3 = {.test_trunc = 3};
    int t;
    for (t = 1; t <= 2; t++) {
      omp_set_num_threads(t);
      lowp_exact_gemm_ex(c2, a, b, NULL, m, n, k, &LOWP_FMT_FP64, NULL, LOWP_RND_NE, &o3, &st2);
      lowp_test_check(memcmp(c1, c2, m * n * sizeof *c1) == 0 && st2.trunc_undecided > m * n / 2,
                      "D=3 on %d threads: different bytes (%zu in doubt)", t,
                      st2.trunc_undecided);
    }
    omp_set_num_threads(nt);
  }
  free(c1);
  free(c2);
}

/* an addend or stochastic rounding: the truncated path stands aside */
static void not_taken(double *a, double *b, uint64_t seed) {
  const size_t m = 5, n = 4, k = 100;
  double c0[20], c[20], cm[20];
  lowp_gemm_opts_t ot = {.test_trunc = 4};
  lowp_gemm_stats_t st;
  lowp_policy_t pol = {0};
  size_t i;
  int s;
  spread(a, m * k, seed, 50);
  spread(b, k * n, seed, 51);
  spread(c0, m * n, seed, 52);
  pol.sr_seed = 5;
  lowp_exact_gemm_mpfr(cm, a, b, c0, m, n, k, &LOWP_FMT_FP64, &pol, LOWP_RND_NE);
  s = lowp_exact_gemm_ex(c, a, b, c0, m, n, k, &LOWP_FMT_FP64, &pol, LOWP_RND_NE, &ot, &st);
  for (i = 0; i < m * n; i++) lowp_test_check(same(c[i], cm[i]), "addend: C[%zu]", i);
  lowp_test_check(s == 0 && st.trunc_diagonals == 0, "addend: truncated path taken");
  lowp_exact_gemm_mpfr(cm, a, b, NULL, m, n, k, &LOWP_FMT_BF16, &pol, LOWP_RND_SR);
  s = lowp_exact_gemm_ex(c, a, b, NULL, m, n, k, &LOWP_FMT_BF16, &pol, LOWP_RND_SR, &ot, &st);
  for (i = 0; i < m * n; i++) lowp_test_check(same(c[i], cm[i]), "SR: C[%zu]", i);
  lowp_test_check(s == 0 && st.trunc_diagonals == 0, "SR: truncated path taken");
  ot.test_trunc = -2;
  lowp_test_check(lowp_exact_gemm_ex(c, a, b, NULL, 2, 2, 3, &LOWP_FMT_FP64, NULL, LOWP_RND_NE,
                                     &ot, NULL) == LOWP_EINVAL,
                  "test_trunc = -2 accepted");
}

int main(void) {
  enum { MX = 96, KX = 1000 };
  double *a = calloc(MX * KX, sizeof *a), *b = calloc(KX * MX, sizeof *b);
  uint64_t seed;
  lowp_test_start("texact_trunc");
  seed = lowp_test_seed();
  whole_range(a, b, seed);
  boundaries();
  cancellation(a, b);
  special(a, b, seed);
  auto_threads(a, b, seed);
  not_taken(a, b, seed);
  free(a);
  free(b);
  return lowp_test_end();
}
