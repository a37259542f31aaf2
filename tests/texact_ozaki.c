/* texact_ozaki -- the sliced (Ozaki) GEMM path: bit-identical to the accumulator and to MPFR */

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact/exact.h"
#include "exact/ozaki.h"
#include "gemm_twin.h" /* lowp_twin_int8_gemm */
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

static int same(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  return x == y && signbit(x) == signbit(y);
}

/* the bit budget sA + sB for k: 53 - ceil(log2 k) */
static int budget(size_t k) {
  int r = 0;
  while (((size_t)1 << r) < k) r++;
  return 53 - r;
}

/* sliced (forced) == accumulator == MPFR, every element; returns the
   sliced run's statistics. extra: test_extra_bits. */
static lowp_gemm_stats_t compare3(const double *a, const double *b, const double *c0, size_t m,
                                  size_t n, size_t k, const lowp_format_t *f,
                                  lowp_rounding_t rnd, int extra, const char *what) {
  double *cs = malloc(m * n * sizeof *cs), *ca = malloc(m * n * sizeof *ca),
         *cm = malloc(m * n * sizeof *cm), *cu = malloc(m * n * sizeof *cu);
  size_t i, bad = 0;
  lowp_policy_t pol = {0};
  lowp_gemm_opts_t os = {.method = LOWP_GEMM_SLICED, .test_extra_bits = extra};
  lowp_gemm_opts_t oa = {.method = LOWP_GEMM_ACC};
  lowp_gemm_stats_t st, sta;
  int s1, s2, s3, s4;
  pol.sr_seed = 7;
  s1 = lowp_exact_gemm_ex(cs, a, b, c0, m, n, k, f, &pol, rnd, &os, &st);
  s2 = lowp_exact_gemm_ex(ca, a, b, c0, m, n, k, f, &pol, rnd, &oa, &sta);
  s3 = lowp_exact_gemm_mpfr(cm, a, b, c0, m, n, k, f, &pol, rnd);
  s4 = lowp_exact_gemm(cu, a, b, c0, m, n, k, f, &pol, rnd);
  lowp_test_check(!s1 && !s2 && !s3 && !s4, "%s: status %d %d %d %d", what, s1, s2, s3, s4);
  lowp_test_check(sta.sliced_outputs == 0 && sta.fallback_outputs == m * n,
                  "%s: accumulator-only run used slices", what);
  lowp_test_check(st.sliced_outputs + st.fallback_outputs == m * n, "%s: outputs %zu + %zu",
                  what, st.sliced_outputs, st.fallback_outputs);
  for (i = 0; i < m * n; i++)
    if ((!same(cs[i], cm[i]) || !same(ca[i], cm[i]) || !same(cu[i], cm[i])) && bad++ < 3)
      lowp_test_check(0, "%s %s %s: C[%zu] sliced %a acc %a auto %a mpfr %a", what, f->name,
                      lowp_rounding_name(rnd), i, cs[i], ca[i], cu[i], cm[i]);
  lowp_test_check(bad == 0, "%s %s %s: %zu mismatches", what, f->name, lowp_rounding_name(rnd),
                  bad);
  free(cs);
  free(ca);
  free(cm);
  free(cu);
  return st;
}

static void fill(double *x, size_t len, lowp_dist_kind_t kind, const lowp_format_t *f,
                 uint64_t seed, uint32_t stream) {
  lowp_dist_t d = {kind, 1e-3, 1e3};
  lowp_dist_fill(x, len, &d, f, seed, stream);
}

static uint64_t rng_state;
static uint64_t rnd64(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* a DGEMM summing in reverse order, one product at a time (exact on
   slices whatever the order); ctx: call counter, fails on call *ctx == -1 */
static int rev_dgemm(void *ctx, size_t m, size_t n, size_t k, const double *a, const double *b,
                     double *c) {
  int *calls = ctx;
  size_t i, j, l;
  if (*calls < 0) return LOWP_EIO;
  ++*calls;
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      double s = 0.0;
      for (l = k; l-- > 0;) s += a[i * k + l] * b[l * n + j];
      c[i * n + j] = s;
    }
  return LOWP_OK;
}

/* progress callback: records the last fraction; 2 if it ever went backwards */

static void texact_ozaki_prog(void *ctx, double done) {
  double *last = ctx;
  if (done < *last) *last = 2.0; /* must not go backwards */
  else if (*last <= 1.0) *last = done;
}

int main(void) {
  uint64_t seed;
  size_t i, l;
  enum { MX = 40, KX = 4096 };
  double *a = calloc(MX * KX, sizeof *a), *b = calloc(KX * MX, sizeof *b),
         *c0 = calloc(MX * MX, sizeof *c0);
  lowp_gemm_stats_t st;
  lowp_test_start("texact_ozaki");
  seed = lowp_test_seed();
  rng_state = seed;

  /* formats x distributions x random shapes (k not a multiple of anything) */
  {
    static const lowp_format_t *fin[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_FP32,
                                         &LOWP_FMT_E4M3, &LOWP_FMT_E5M2, &LOWP_FMT_FP64};
    static const lowp_dist_kind_t kinds[] = {LOWP_DIST_NORMAL, LOWP_DIST_UNIFORM11,
                                             LOWP_DIST_LOGUNIFORM, LOWP_DIST_SPREAD};
    size_t fi, ki;
    int r;
    for (fi = 0; fi < sizeof fin / sizeof fin[0]; fi++)
      for (ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
        size_t m = 1 + rnd64() % 13, n = 1 + rnd64() % 11, k = 1 + rnd64() % 700;
        char what[128];
        fill(a, m * k, kinds[ki], fin[fi], seed, 1);
        fill(b, k * n, kinds[ki], fin[fi], seed, 2);
        fill(c0, m * n, LOWP_DIST_NORMAL, fin[fi], seed, 3);
        snprintf(what, sizeof what, "%s %s m=%zu n=%zu k=%zu", fin[fi]->name,
                 lowp_dist_name(kinds[ki]), m, n, k);
        for (r = 0; r < LOWP_RND_COUNT; r++) {
          st = compare3(a, b, NULL, m, n, k, &LOWP_FMT_FP64, (lowp_rounding_t)r, 0, what);
          compare3(a, b, c0, m, n, k, fin[fi], (lowp_rounding_t)r, 0, what);
        }
        {
          int finite = 1;
          for (i = 0; i < m * k; i++) finite &= isfinite(a[i]) != 0;
          for (i = 0; i < k * n; i++) finite &= isfinite(b[i]) != 0;
          if (st.slices_a > 0)
            lowp_test_check(st.slice_bits_a == budget(k) / 2 && st.slice_bits_b == budget(k) / 2,
                            "%s: forced: s = %d + %d", what, st.slice_bits_a, st.slice_bits_b);
          if (!finite) continue; /* fp8 overflow to NaN: the accumulator's case */
        }
        /* narrow formats: fixed slice counts whatever the data (k <= 2^12) */
        if (fin[fi] == &LOWP_FMT_FP16 || fin[fi] == &LOWP_FMT_E5M2)
          lowp_test_check(st.slices_a <= 2 && st.slices_b <= 2 && st.fallback_outputs == 0,
                          "%s: %d x %d slices", what, st.slices_a, st.slices_b);
        if (fin[fi] == &LOWP_FMT_E4M3)
          lowp_test_check(st.slices_a == 1 && st.slices_b == 1, "%s: %d x %d slices", what,
                          st.slices_a, st.slices_b);
      }
  }

  /* cancellation, then inf/NaN rows and columns (the accumulator's semantics) */
  {
    const size_t m = 9, n = 7, k = 333;
    lowp_dist_cancel_gemm(a, b, m, n, k, &LOWP_FMT_FP32, seed);
    compare3(a, b, NULL, m, n, k, &LOWP_FMT_FP64, LOWP_RND_NE, 0, "cancel fp32");
    compare3(a, b, NULL, m, n, k, &LOWP_FMT_BF16, LOWP_RND_TZ, 0, "cancel fp32");
    lowp_dist_cancel_gemm(a, b, m, n, k, &LOWP_FMT_FP64, seed);
    compare3(a, b, NULL, m, n, k, &LOWP_FMT_FP64, LOWP_RND_NE, 0, "cancel fp64");
    a[3] = INFINITY;
    b[7 * n + 2] = NAN;
    a[2 * k + 5] = -INFINITY;
    st = compare3(a, b, NULL, m, n, k, &LOWP_FMT_FP64, LOWP_RND_NE, 0, "cancel + inf/NaN");
    lowp_test_check(st.fallback_outputs == 2 * n + (m - 2) && st.sliced_outputs > 0,
                    "inf/NaN rows/column to the accumulator: %zu", st.fallback_outputs);
    /* exact zeros and their signs */
    for (i = 0; i < m * k; i++) a[i] = (i % 3 == 0) ? -0.0 : 0.0;
    compare3(a, b, NULL, m, n, k, &LOWP_FMT_FP64, LOWP_RND_DN, 0, "zeros");
    b[7 * n + 2] = 1.0;
    for (i = 0; i < m * k; i++) a[i] = ldexp(1.0, -1074) * (double)(i % 5) * ((i & 1) ? -1 : 1);
    for (l = 0; l < k * n; l++) b[l] = ldexp(1.0, -1070) * (double)(l % 7);
    compare3(a, b, NULL, m, n, k, &LOWP_FMT_FP64, LOWP_RND_DN, 0, "subnormal x subnormal");
    for (l = 0; l < k * n; l++) b[l] = ldexp((double)(l % 7) - 3.0, 1000);
    compare3(a, b, NULL, m, n, k, &LOWP_FMT_FP64, LOWP_RND_UP, 0, "subnormal x huge");
  }

  /* the slice count at its limit, and one more: row 0 of A spans exactly
     MAXSLICES * s bits (its largest entry below 2^1, its lowest bit at
     2^(1 - MAXSLICES s)), row 1 one bit more */
  {
    const size_t m = 3, n = 4, k = 100;
    int s = budget(k) / 2, w = LOWP__OZAKI_MAXSLICES * s;
    for (i = 0; i < m * k; i++) a[i] = (double)(int)(rnd64() % 2001) - 1000.0;
    for (l = 0; l < k * n; l++) b[l] = (double)(int)(rnd64() % 201) - 100.0;
    for (i = 0; i < m; i++) a[i * k] = 1.5; /* |a| < 2^1 = 2^emax */
    a[1] = ldexp(1.0, 1 - w);       /* row 0: width w: exactly MAXSLICES slices */
    a[k + 1] = ldexp(1.0, 1 - w - 1); /* row 1: width w + 1: one slice too many */
    for (i = 0; i < m; i++)
      for (l = 2; l < k; l++) a[i * k + l] = ldexp(a[i * k + l], -10); /* keep max 1.5 */
    st = compare3(a, b, NULL, 1, n, k, &LOWP_FMT_FP64, LOWP_RND_NE, 0, "MAXSLICES");
    lowp_test_check(st.slices_a == LOWP__OZAKI_MAXSLICES && st.fallback_outputs == 0,
                    "row at the limit: %d slices, %zu fallback", st.slices_a,
                    st.fallback_outputs);
    st = compare3(a, b, NULL, m, n, k, &LOWP_FMT_FP32, LOWP_RND_TZ, 0, "MAXSLICES + 1");
    lowp_test_check(st.fallback_outputs == n && st.sliced_outputs == (m - 1) * n,
                    "row one past the limit: %zu fallback", st.fallback_outputs);
  }

  /* the budget broken on purpose: one bit per slice too many. Positive
     full-width entries and k = 2^12 push the slice sums past 2^53, so the
     DGEMMs round; the checksum must catch every such row (and the result,
     recomputed by the accumulator, stays exact). Within the budget the same
     data pass the check. */
  {
    const size_t m = 8, n = 8, k = KX;
    for (i = 0; i < m * k; i++) a[i] = ldexp((double)((rnd64() >> 24) | (1ULL << 39)), -40);
    for (l = 0; l < k * n; l++) b[l] = ldexp((double)((rnd64() >> 24) | (1ULL << 39)), -40);
    st = compare3(a, b, NULL, m, n, k, &LOWP_FMT_FP64, LOWP_RND_NE, 0, "budget kept");
    lowp_test_check(st.check_failed_rows == 0 && st.sliced_outputs == m * n,
                    "within budget: %zu rows failed the check", st.check_failed_rows);
    st = compare3(a, b, NULL, m, n, k, &LOWP_FMT_FP64, LOWP_RND_NE, 1, "budget broken");
    lowp_test_check(st.slice_bits_a + st.slice_bits_b == budget(k) + 1 &&
                        st.check_failed_rows == m,
                    "one bit too many: s = %d + %d, %zu of %zu rows caught", st.slice_bits_a,
                    st.slice_bits_b,
                    st.check_failed_rows, m);
  }

  /* the choice: wide exponent spread within rows -> accumulator; fp16
     normal data -> slices (2 x 2); results identical (checked above) */
  {
    const size_t m = 32, n = 32, k = 256;
    lowp_gemm_stats_t sa;
    double *c = malloc(m * n * sizeof *c);
    fill(a, m * k, LOWP_DIST_SPREAD, &LOWP_FMT_FP32, seed, 8);
    fill(b, k * n, LOWP_DIST_SPREAD, &LOWP_FMT_FP32, seed, 9);
    lowp_exact_gemm_ex(c, a, b, NULL, m, n, k, &LOWP_FMT_FP32, NULL, LOWP_RND_NE, NULL, &sa);
    lowp_test_check(sa.sliced_outputs == 0, "spread fp32: auto sliced %zu outputs",
                    sa.sliced_outputs);
    fill(a, m * k, LOWP_DIST_NORMAL, &LOWP_FMT_FP16, seed, 8);
    fill(b, k * n, LOWP_DIST_NORMAL, &LOWP_FMT_FP16, seed, 9);
    lowp_exact_gemm_ex(c, a, b, NULL, m, n, k, &LOWP_FMT_FP32, NULL, LOWP_RND_NE, NULL, &sa);
    lowp_test_check(sa.sliced_outputs == m * n && sa.slices_a <= 2 && sa.slices_b <= 2,
                    "normal fp16: auto sliced %zu outputs, %d x %d", sa.sliced_outputs,
                    sa.slices_a, sa.slices_b);
    /* same bytes whatever the thread count (OpenMP and OpenBLAS) */
    {
      double *c1 = malloc(m * n * sizeof *c1);
      lowp_gemm_opts_t os = {.method = LOWP_GEMM_SLICED};
      fill(a, m * k, LOWP_DIST_LOGUNIFORM, &LOWP_FMT_FP64, seed, 10);
      fill(b, k * n, LOWP_DIST_NORMAL, &LOWP_FMT_FP64, seed, 11);
      omp_set_num_threads(1);
      lowp_exact_gemm_ex(c, a, b, NULL, m, n, k, &LOWP_FMT_FP64, NULL, LOWP_RND_NE, &os, NULL);
      omp_set_num_threads(2);
      lowp_exact_gemm_ex(c1, a, b, NULL, m, n, k, &LOWP_FMT_FP64, NULL, LOWP_RND_NE, &os, NULL);
      lowp_test_check(!memcmp(c, c1, m * n * sizeof *c), "1 vs 2 threads differ");
      free(c1);
    }
    free(c);
  }

  /* another DGEMM (reverse summation order): the same bytes; its error
     status aborts the product */
  {
    const size_t m = 13, n = 9, k = 517;
    double *c1 = malloc(m * n * sizeof *c1), *c2 = malloc(m * n * sizeof *c2);
    int calls = 0, s1, s2;
    lowp_gemm_opts_t o = {.method = LOWP_GEMM_SLICED, .dgemm = rev_dgemm, .dgemm_ctx = &calls};
    fill(a, m * k, LOWP_DIST_NORMAL, &LOWP_FMT_FP32, seed, 12);
    fill(b, k * n, LOWP_DIST_UNIFORM11, &LOWP_FMT_FP32, seed, 13);
    s1 = lowp_exact_gemm_ex(c1, a, b, NULL, m, n, k, &LOWP_FMT_BF16, NULL, LOWP_RND_UP, &o, &st);
    s2 = lowp_exact_gemm_mpfr(c2, a, b, NULL, m, n, k, &LOWP_FMT_BF16, NULL, LOWP_RND_UP);
    lowp_test_check(!s1 && !s2 && calls == (int)st.dgemm_calls && calls > 0 &&
                        !memcmp(c1, c2, m * n * sizeof *c1),
                    "reverse-order DGEMM: status %d %d, %d calls, results differ", s1, s2,
                    calls);
    calls = -1;
    lowp_test_check(lowp_exact_gemm_ex(c1, a, b, NULL, m, n, k, &LOWP_FMT_BF16, NULL,
                                       LOWP_RND_UP, &o, NULL) == LOWP_EIO,
                    "DGEMM error not passed on");
    free(c1);
    free(c2);
  }


  /* the truncated form on the integer engine (7-bit slices): whole-range
     fp32 data need about 40 slices; with D = 20 diagonals (140 bits) kept,
     the bound decides outputs, the rest go to the accumulator; == MPFR */
  {
    const size_t m = 6, n = 5, k = 77;
    double *c1 = malloc(m * n * sizeof *c1), *c2 = malloc(m * n * sizeof *c2);
    size_t wide = 0;
    lowp_gemm_opts_t o = {.dgemm = lowp_twin_int8_gemm, .dgemm_ctx = &wide, .engine_bits = 31,
                          .slice_bits_max = 7, .test_trunc = 20};
    int s1;
    fill(a, m * k, LOWP_DIST_SPREAD, &LOWP_FMT_FP32, seed, 90);
    fill(b, k * n, LOWP_DIST_SPREAD, &LOWP_FMT_FP32, seed, 91);
    lowp_exact_gemm_mpfr(c2, a, b, NULL, m, n, k, &LOWP_FMT_FP64, NULL, LOWP_RND_DN);
    s1 = lowp_exact_gemm_ex(c1, a, b, NULL, m, n, k, &LOWP_FMT_FP64, NULL, LOWP_RND_DN, &o, &st);
    lowp_test_check(s1 == LOWP_OK && !memcmp(c1, c2, m * n * sizeof *c1) && wide == 0 &&
                        st.slice_bits_a == 7 && st.trunc_diagonals == 20 &&
                        st.trunc_decided > 0 && st.check_failed_rows == 0,
                    "int8 engine, truncated: status %d, %zu wide, %d bits, D=%d, %zu decided, "
                    "%zu failed rows", s1, wide, st.slice_bits_a, st.trunc_diagonals,
                    st.trunc_decided, st.check_failed_rows);
    free(c1);
    free(c2);
  }

  /* the integer engine (engine_bits 31, int8 slices): the same exact
     result as MPFR, every slice in int8's range, the budget respected, and
     one bit past it caught by the check (and still exact) */
  {
    static const lowp_format_t *fi8[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_E4M3,
                                         &LOWP_FMT_E5M2, &LOWP_FMT_FP32};
    const size_t m = 19, n = 23;
    static const size_t ks[] = {1, 77, 1001, 4096};
    double *c1 = malloc(m * n * sizeof *c1), *c2 = malloc(m * n * sizeof *c2);
    size_t q, ki, wide;
    for (q = 0; q < sizeof fi8 / sizeof fi8[0]; q++)
      for (ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        size_t k = ks[ki];
        int lg = 53 - budget(k); /* ceil(log2 k) */
        int meth, extra;
        fill(a, m * k, q % 2 ? LOWP_DIST_UNIFORM11 : LOWP_DIST_NORMAL, fi8[q], seed, 40 + q);
        fill(b, k * n, LOWP_DIST_NORMAL, fi8[q], seed, 50 + q);
        lowp_exact_gemm_mpfr(c2, a, b, NULL, m, n, k, &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
        for (meth = 0; meth < 2; meth++)
          for (extra = 0; extra < 2; extra++) {
            lowp_gemm_opts_t o = {.method = meth ? LOWP_GEMM_SLICED : LOWP_GEMM_AUTO,
                                  .dgemm = lowp_twin_int8_gemm, .dgemm_ctx = &wide, .engine_bits = 31,
                                  .slice_bits_max = 7, .test_extra_bits = extra};
            int s1;
            if (extra && !meth) continue;
            memset(&st, 0, sizeof st);
            wide = 0;
            s1 = lowp_exact_gemm_ex(c1, a, b, NULL, m, n, k, &LOWP_FMT_FP32, NULL, LOWP_RND_NE,
                                    &o, &st);
            lowp_test_check(s1 == LOWP_OK && !memcmp(c1, c2, m * n * sizeof *c1),
                            "int8 engine %s k=%zu method %d extra %d: status %d, differs from "
                            "MPFR", fi8[q]->name, k, meth, extra, s1);
            if (meth && !extra) {
              lowp_test_check(st.sliced_outputs == m * n && wide == 0 &&
                                  st.slice_bits_a <= 7 && st.slice_bits_b <= 7 &&
                                  st.slice_bits_a + st.slice_bits_b + lg <= 31 &&
                                  st.check_failed_rows == 0,
                              "int8 engine %s k=%zu: %zu sliced, %zu wide values, %d+%d bits, "
                              "%zu failed rows", fi8[q]->name, k, st.sliced_outputs, wide,
                              st.slice_bits_a, st.slice_bits_b, st.check_failed_rows);
            }
            if (extra && st.slices_a)
              lowp_test_check(st.check_failed_rows > 0 || wide == 0,
                              "int8 engine %s k=%zu: a slice past int8 (%zu values) was not "
                              "caught", fi8[q]->name, k, wide);
          }
      }
    /* the budget broken where it must show: 7-bit slices of full-range
       data at k = 2^17 make int32 partial sums wrap */
    {
      const size_t k = 1u << 17, mm = 2, nn = 2;
      lowp_gemm_opts_t o = {.method = LOWP_GEMM_SLICED, .dgemm = lowp_twin_int8_gemm, .dgemm_ctx = &wide,
                            .engine_bits = 31, .slice_bits_max = 7, .test_extra_bits = 1};
      double *aa = malloc(mm * k * sizeof *aa), *bb = malloc(k * nn * sizeof *bb);
      double cc[4], cm[4];
      for (i = 0; i < mm * k; i++) aa[i] = 1.0 - ldexp(1.0, -10);
      for (i = 0; i < k * nn; i++) bb[i] = 1.0 - ldexp(1.0, -10);
      memset(&st, 0, sizeof st);
      wide = 0;
      lowp_test_check(lowp_exact_gemm_ex(cc, aa, bb, NULL, mm, nn, k, &LOWP_FMT_FP64, NULL,
                                         LOWP_RND_NE, &o, &st) == LOWP_OK &&
                          lowp_exact_gemm_mpfr(cm, aa, bb, NULL, mm, nn, k, &LOWP_FMT_FP64,
                                               NULL, LOWP_RND_NE) == LOWP_OK &&
                          !memcmp(cc, cm, sizeof cc),
                      "int8 engine, broken budget: result not exact");
      lowp_test_check(st.check_failed_rows == mm,
                      "int8 engine, budget broken by one bit at k=2^17: %zu of %zu rows caught",
                      st.check_failed_rows, mm);
      free(aa);
      free(bb);
    }
    {
      lowp_gemm_opts_t o = {.method = LOWP_GEMM_SLICED, .engine_bits = 60};
      lowp_test_check(lowp_exact_gemm_ex(c1, a, b, NULL, 2, 2, 3, &LOWP_FMT_FP64, NULL,
                                         LOWP_RND_NE, &o, NULL) == LOWP_EINVAL,
                      "engine_bits 60 accepted");
    }
    free(c1);
    free(c2);
  }

  /* progress reaches 1; bad method */
  {
    double last = -1.0, c[4];
    lowp_gemm_opts_t o = {.method = LOWP_GEMM_AUTO};
    o.progress = texact_ozaki_prog;
    o.progress_ctx = &last;
    lowp_exact_gemm_ex(c, a, b, NULL, 2, 2, 3, &LOWP_FMT_FP64, NULL, LOWP_RND_NE, &o, NULL);
    lowp_test_check(last == 1.0, "progress ended at %g", last);
    o.method = (lowp_gemm_method_t)7;
    lowp_test_check(lowp_exact_gemm_ex(c, a, b, NULL, 2, 2, 3, &LOWP_FMT_FP64, NULL,
                                       LOWP_RND_NE, &o, NULL) == LOWP_EINVAL,
                    "bad method accepted");
  }
  free(a);
  free(b);
  free(c0);
  return lowp_test_end();
}
