/* gemm_twin -- the cases and the comparison of the exact GEMM with a DGEMM hook against its CPU twin (header only) */
#ifndef LOWP_GEMM_TWIN_H
#define LOWP_GEMM_TWIN_H

/*
 * tests/cuda/texact_ozaki_gpu.c (cuBLAS DGEMMs) and tests/texact_ozaki_twin.c
 * (an OpenBLAS DGEMM through the same hook, on the CPU) run the same cases
 * and compare them with lowp_exact_gemm_ex without a hook in the same way:
 * every output's bits and every field of lowp_gemm_stats_t, each field that
 * differs named with both values, the first output that differs with its
 * row and column.
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact/exact.h"
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

/** @brief The side of the one square product; a and b hold its squares. */
#define LOWP_TWIN_BIG 1024

/** @brief lowp_twin_run_all's ncases for every case. */
#define LOWP_TWIN_ALL ((size_t)-1)

/** @brief One case: A (m x k) and B (k x n) filled, the output format. */
typedef struct {
  size_t m, n, k;
  const lowp_format_t *fo;
  char what[96];
} lowp_twin_t;

/** @brief Case i into a and b (room for LOWP_TWIN_BIG^2 each): fp16, bf16,
    fp32, e4m3, fp64 inputs x normal, whole-range data at 37x53x1001 (A from
    stream 1, B from stream 2), each as is (output fp64) then with an inf in
    A and a NaN in B (output fp32); then fp16 normal 1024^3 (streams 3, 4).
    Returns 0 past the last case. */
static inline int lowp_twin_case(size_t i, uint64_t seed, double *a, double *b, lowp_twin_t *c) {
  static const lowp_format_t *fin[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_FP32,
                                       &LOWP_FMT_E4M3, &LOWP_FMT_FP64};
  static const lowp_dist_kind_t kinds[] = {LOWP_DIST_NORMAL, LOWP_DIST_SPREAD};
  const size_t nf = sizeof fin / sizeof fin[0], nk = sizeof kinds / sizeof kinds[0];
  if (i < 2 * nf * nk) {
    size_t fi = i / (2 * nk), ki = i / 2 % nk;
    int special = (int)(i % 2);
    lowp_dist_t d = {kinds[ki], 0, 0};
    c->m = 37, c->n = 53, c->k = 1001;
    lowp_dist_fill(a, c->m * c->k, &d, fin[fi], seed, 1);
    lowp_dist_fill(b, c->k * c->n, &d, fin[fi], seed, 2);
    if (special) {
      a[5] = INFINITY;
      b[3 * c->n + 7] = NAN;
    }
    c->fo = special ? &LOWP_FMT_FP32 : &LOWP_FMT_FP64;
    snprintf(c->what, sizeof c->what, "%s %s %zux%zux%zu%s", fin[fi]->name,
             lowp_dist_name(kinds[ki]), c->m, c->n, c->k, special ? " with inf/NaN" : "");
    return 1;
  }
  if (i == 2 * nf * nk) {
    lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
    c->m = c->n = c->k = LOWP_TWIN_BIG;
    lowp_dist_fill(a, c->m * c->k, &d, &LOWP_FMT_FP16, seed, 3);
    lowp_dist_fill(b, c->k * c->n, &d, &LOWP_FMT_FP16, seed, 4);
    c->fo = &LOWP_FMT_FP64;
    snprintf(c->what, sizeof c->what, "fp16 normal %d^3", LOWP_TWIN_BIG);
    return 1;
  }
  return 0;
}

/** @brief An int8 x int8 -> int32 GEMM engine as INT8 tensor cores compute
    it (Ozaki scheme II), a lowp_gemm_opts_t.dgemm: each slice converted to
    int8 (two's complement, wrapping like a narrowing cast), products and
    sums in 32-bit wrapping integer arithmetic. ctx: a size_t counting the
    slice values outside [-127, 127]. */
static inline int lowp_twin_int8_gemm(void *ctx, size_t m, size_t n, size_t k, const double *a,
                                      const double *b, double *c) {
  size_t i, j, l, *wide = (size_t *)ctx;
  for (i = 0; i < m * k; i++)
    if (!(fabs(a[i]) <= 127.0)) (*wide)++;
  for (i = 0; i < k * n; i++)
    if (!(fabs(b[i]) <= 127.0)) (*wide)++;
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      uint32_t acc = 0;
      for (l = 0; l < k; l++) {
        int8_t x = (int8_t)(uint8_t)((uint64_t)(int64_t)a[i * k + l] & 0xffu);
        int8_t y = (int8_t)(uint8_t)((uint64_t)(int64_t)b[l * n + j] & 0xffu);
        acc += (uint32_t)(int32_t)(x * y);
      }
      c[i * n + j] = (double)(int32_t)acc;
    }
  return LOWP_OK;
}

/** @brief The path stats describe, as one line after "  what who: ". */
static inline void lowp_twin_print(const char *what, const char *who, size_t mn,
                                   const lowp_gemm_stats_t *s) {
  printf("  %s %s: %dx%d slices of %d+%d bits, %zu of %zu outputs sliced (%zu accumulator), "
         "%zu DGEMMs + %zu sparse, D=%d (%zu decided, %zu in doubt), %zu rows failed the check\n",
         what, who, s->slices_a, s->slices_b, s->slice_bits_a, s->slice_bits_b,
         s->sliced_outputs, mn, s->fallback_outputs, s->dgemm_calls, s->sparse_products,
         s->trunc_diagonals, s->trunc_decided, s->trunc_undecided, s->check_failed_rows);
}

/** @brief Checks that the run with the hook (cg, sg; named who) equals its
    twin without (cc, sc) on every output (m x n) and every statistic, and
    that no row failed the check; names what differs. */
static inline void lowp_twin_compare(const char *what, const char *who, const double *cg,
                                     const double *cc, size_t m, size_t n,
                                     const lowp_gemm_stats_t *sg, const lowp_gemm_stats_t *sc) {
  const struct {
    const char *name;
    size_t g, c;
  } fl[] = {
      {"slices_a", (size_t)sg->slices_a, (size_t)sc->slices_a},
      {"slices_b", (size_t)sg->slices_b, (size_t)sc->slices_b},
      {"slice_bits_a", (size_t)sg->slice_bits_a, (size_t)sc->slice_bits_a},
      {"slice_bits_b", (size_t)sg->slice_bits_b, (size_t)sc->slice_bits_b},
      {"sliced_outputs", sg->sliced_outputs, sc->sliced_outputs},
      {"fallback_outputs", sg->fallback_outputs, sc->fallback_outputs},
      {"dgemm_calls", sg->dgemm_calls, sc->dgemm_calls},
      {"sparse_products", sg->sparse_products, sc->sparse_products},
      {"trunc_diagonals", (size_t)sg->trunc_diagonals, (size_t)sc->trunc_diagonals},
      {"trunc_decided", sg->trunc_decided, sc->trunc_decided},
      {"trunc_undecided", sg->trunc_undecided, sc->trunc_undecided},
      {"check_failed_rows", sg->check_failed_rows, sc->check_failed_rows},
  };
  size_t i, bad = 0, first = 0, nfl = sizeof fl / sizeof fl[0], ndiff = 0;
  for (i = 0; i < m * n; i++)
    if (memcmp(&cg[i], &cc[i], sizeof cg[i]) != 0 && bad++ == 0) first = i;
  if (!lowp_test_check(bad == 0, "%s: %zu of %zu outputs differ, first C[%zu] (row %zu, column "
                                 "%zu): %s %a, cpu %a", what, bad, m * n, first, first / n,
                       first % n, who, cg[first], cc[first]))
    for (i = first + 1; i < m * n && bad > 1; i++)
      if (memcmp(&cg[i], &cc[i], sizeof cg[i]) != 0 && ++ndiff <= 2)
        printf("  %s: also C[%zu] (row %zu, column %zu): %s %a, cpu %a\n", what, i, i / n,
               i % n, who, cg[i], cc[i]);
  ndiff = 0;
  for (i = 0; i < nfl; i++)
    if (!lowp_test_check(fl[i].g == fl[i].c, "%s: %s %s %zu, cpu %zu", what, fl[i].name, who,
                         fl[i].g, fl[i].c))
      ndiff++;
  if (ndiff) lowp_twin_print(what, "cpu", m * n, sc);
  lowp_twin_print(what, who, m * n, sg);
  lowp_test_check(sg->check_failed_rows == 0, "%s: %zu rows failed the exactness check (%s)",
                  what, sg->check_failed_rows, who);
}

/** @brief The run with the hook of case tc into c (m x n), with stats in st;
    returns a lowp_status_t. */
typedef int (*lowp_twin_fn)(void *ctx, double *c, const double *a, const double *b,
                            const lowp_twin_t *tc, lowp_gemm_stats_t *st);

/** @brief The first ncases cases (all: LOWP_TWIN_ALL) through fn (named who)
    and through lowp_exact_gemm_ex with the options twin (NULL: defaults; no
    hook) in round to nearest even, compared by lowp_twin_compare. Returns
    the sparse products fn's runs made; exits 1 out of memory. */
static inline size_t lowp_twin_run_all(const char *who, lowp_twin_fn fn, void *ctx,
                                       const lowp_gemm_opts_t *twin, size_t ncases) {
  const size_t M = LOWP_TWIN_BIG;
  double *a = malloc(M * M * sizeof *a), *b = malloc(M * M * sizeof *b);
  double *cg = malloc(M * M * sizeof *cg), *cc = malloc(M * M * sizeof *cc);
  lowp_twin_t tc;
  size_t i, sparse = 0;
  if (!a || !b || !cg || !cc) { printf("out of memory\n"); exit(1); }
  for (i = 0; i < ncases && lowp_twin_case(i, lowp_test_seed(), a, b, &tc); i++) {
    lowp_gemm_stats_t sg, sc;
    int s1, s2;
    s1 = fn(ctx, cg, a, b, &tc, &sg);
    s2 = lowp_exact_gemm_ex(cc, a, b, NULL, tc.m, tc.n, tc.k, tc.fo, NULL, LOWP_RND_NE, twin,
                            &sc);
    if (!lowp_test_check(s1 == LOWP_OK && s2 == LOWP_OK, "%s: status %s %d cpu %d", tc.what,
                         who, s1, s2))
      continue;
    lowp_twin_compare(tc.what, who, cg, cc, tc.m, tc.n, &sg, &sc);
    sparse += sg.sparse_products;
  }
  free(a);
  free(b);
  free(cg);
  free(cc);
  return sparse;
}

#endif
