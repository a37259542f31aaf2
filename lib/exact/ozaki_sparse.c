/* lowp_exact GEMM, sliced path -- slice products of sparse slices (lib/exact/ozaki_sparse.c) */

/*
 * A slice that holds only the low bits of a few far-off entries (a row of
 * gradient-like data whose magnitudes span 40 binades, an fp16 matrix with a
 * handful of values off the fp16 grid) is mostly zeros. Its products with the
 * other side's slices are computed here from its nonzeros alone instead of by
 * a dense DGEMM. The bit-budget argument of ozaki.c does not depend on the
 * order or grouping of the additions: every product of slice entries and
 * every partial sum of at most k of them is an integer below 2^engine_bits
 * <= 2^53, so these loops are exact as the DGEMM is, and give the same C_tu
 * (then checked the same way by ozaki.c). Each output row is computed by
 * one thread; nothing depends on the thread count.
 */

#include "exact/ozaki.h"
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

#include "status.h"

/* loops over fewer elements run on the calling thread only (speed only) */
#define PAR_MIN 32768

int lowp__csr_build(lowp__csr_t *s, const double *x, size_t rows, size_t cols) {
  size_t r;
  long long ri;
  memset(s, 0, sizeof *s);
  s->ptr = malloc((rows + 1) * sizeof *s->ptr);
  if (!s->ptr) return LOWP_ENOMEM;
  s->ptr[0] = 0;
  for (r = 0; r < rows; r++) {
    const double *xr = x + r * cols;
    size_t c, q = 0;
    for (c = 0; c < cols; c++) q += xr[c] != 0.0;
    s->ptr[r + 1] = s->ptr[r] + q;
  }
  s->nnz = s->ptr[rows];
  s->idx = malloc(s->nnz * sizeof *s->idx + 1);
  s->val = malloc(s->nnz * sizeof *s->val + 1);
  if (!s->idx || !s->val) return LOWP_ENOMEM;
#pragma omp parallel for schedule(static) if (rows * cols > PAR_MIN)
  for (ri = 0; ri < (long long)rows; ri++) {
    const double *xr = x + (size_t)ri * cols;
    size_t c, p = s->ptr[ri];
    for (c = 0; c < cols; c++)
      if (xr[c] != 0.0) {
        s->idx[p] = (uint32_t)c;
        s->val[p++] = xr[c];
      }
  }
  return LOWP_OK;
}

void lowp__csr_free(lowp__csr_t *s) {
  free(s->ptr);
  free(s->idx);
  free(s->val);
  memset(s, 0, sizeof *s);
}

/* The row kernels are compiled for wider vector units too (AVX2, AVX-512F),
   the copy chosen at run time by lowp_cpu_isa (LOWP_ISA limits it): the
   slices are integers, so every copy gives the same, exact, sums. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define LOWP_SPMM_X86 1
#endif

/* fn_generic, fn_avx2, fn_avx512: body compiled for each, and pick_fn(isa) */
#ifdef LOWP_SPMM_X86
#define LOWP_SPMM_COPIES(fn, ARGS, CALL)                                                          \
  static void fn##_generic ARGS { fn##_body CALL; }                                              \
  __attribute__((target("avx2"))) static void fn##_avx2 ARGS { fn##_body CALL; }               \
  __attribute__((target("avx512f"))) static void fn##_avx512 ARGS { fn##_body CALL; }          \
  typedef void(*fn##_t) ARGS;                                                                    \
  static fn##_t pick_##fn(void) {                                                                \
    lowp_isa_t isa = lowp_cpu_isa(0);                                                            \
    return isa == LOWP_ISA_AVX512 ? fn##_avx512 : isa == LOWP_ISA_AVX2 ? fn##_avx2 : fn##_generic; \
  }
#else
#define LOWP_SPMM_COPIES(fn, ARGS, CALL)                                                          \
  static void fn##_generic ARGS { fn##_body CALL; }                                              \
  typedef void(*fn##_t) ARGS;                                                                    \
  static fn##_t pick_##fn(void) { return fn##_generic; }
#endif

/* columns per block of the sparse-left product: a block of B (k rows) stays
   in cache while every row's nonzeros stream over it */
static size_t spmm_cols(size_t k, size_t n) {
  size_t nb = ((size_t)(1u << 20) / (k ? k : 1)) & ~(size_t)7;
  if (nb < 256) nb = 256;
  return nb < n ? nb : n;
}

/* cr[0..w) = sum over the row's nonzeros v (column l) of v b[l][y0 ..] */
static LOWP_ALWAYS_INLINE void spmm_a_row_body(double *restrict cr, const uint32_t *idx, const double *val,
                                               size_t p0, size_t p1, const double *b, size_t n, size_t y0,
                                               size_t w) {
  size_t p, y;
  if (p0 == p1) return; /* an empty row: ozaki.c skips it */
  for (y = 0; y < w; y++) cr[y] = 0.0;
  for (p = p0; p < p1; p++) {
    const double v = val[p], *restrict br = b + (size_t)idx[p] * n + y0;
    for (y = 0; y < w; y++) cr[y] += v * br[y];
  }
}

LOWP_SPMM_COPIES(spmm_a_row,
                 (double *restrict cr, const uint32_t *idx, const double *val, size_t p0, size_t p1,
                  const double *b, size_t n, size_t y0, size_t w),
                 (cr, idx, val, p0, p1, b, n, y0, w))

void lowp__spmm_a(double *c, const lowp__csr_t *s, const double *b, size_t m, size_t n,
                  size_t k) {
  size_t nb = spmm_cols(k, n), y0;
  spmm_a_row_t spmm_a_row = pick_spmm_a_row();
  for (y0 = 0; y0 < n; y0 += nb) {
    size_t w = n - y0 < nb ? n - y0 : nb;
    long long xi;
#pragma omp parallel for schedule(dynamic, 16) if (s->nnz * w > PAR_MIN)
    for (xi = 0; xi < (long long)m; xi++)
      spmm_a_row(c + (size_t)xi * n + y0, s->idx, s->val, s->ptr[xi], s->ptr[xi + 1], b, n, y0,
                 w);
  }
}

/* cr[0..n) = sum over the rows r of S listed in rows (all if NULL) of
   ar[r] S[r][:] */
static LOWP_ALWAYS_INLINE void spmm_b_row_body(double *restrict cr, const double *ar, const lowp__csr_t *s,
                                               const size_t *rows, size_t nl, size_t n) {
  size_t q, p;
  for (q = 0; q < n; q++) cr[q] = 0.0;
  for (q = 0; q < nl; q++) {
    size_t r = rows ? rows[q] : q;
    const double v = ar[r];
    if (v == 0.0) continue;
    for (p = s->ptr[r]; p < s->ptr[r + 1]; p++) cr[s->idx[p]] += v * s->val[p];
  }
}

LOWP_SPMM_COPIES(spmm_b_row,
                 (double *restrict cr, const double *ar, const lowp__csr_t *s, const size_t *rows, size_t nl,
                  size_t n),
                 (cr, ar, s, rows, nl, n))

void lowp__spmm_b(double *c, const double *a, const lowp__csr_t *s, size_t m, size_t n,
                  size_t k) {
  size_t l, nl = 0, *rows = malloc(k * sizeof *rows + 1);
  spmm_b_row_t spmm_b_row = pick_spmm_b_row();
  long long xi;
  /* the rows of S that hold nonzeros (all k if the list cannot be made) */
  for (l = 0; l < k; l++)
    if (!rows || s->ptr[l] < s->ptr[l + 1]) {
      if (rows) rows[nl] = l;
      nl++;
    }
#pragma omp parallel for schedule(dynamic, 16) if (m * (nl + s->nnz) > PAR_MIN)
  for (xi = 0; xi < (long long)m; xi++)
    spmm_b_row(c + (size_t)xi * n, a + (size_t)xi * k, s, rows, nl, n);
  free(rows);
}
