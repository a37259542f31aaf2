/* lowp_exact GEMM internals -- the sliced (Ozaki) path (lib/exact/ozaki.c) */
#ifndef LOWP_EXACT_OZAKI_H
#define LOWP_EXACT_OZAKI_H

#include <stddef.h>
#include <stdint.h>

#include "exact/exact.h"
#include "exact/gemm_bins.h"

/** @brief lowp__exact_gemm_sliced's answer when the accumulator alone is cheaper
    (or the data allow no slicing): nothing was written. Not a lowp_status_t. */
#define LOWP__NOT_USED (-1)

/** @brief Most slices per row of A / column of B; a row or column that needs
    more goes to the accumulator (24 * 20 bits covers fp32's 277-bit range). */
#define LOWP__OZAKI_MAXSLICES 24

/**
 * @brief The sliced path (lib/exact/ozaki.c): the whole product, the
 * accumulator computing the outputs the slices do not cover. Arguments are
 * already checked. Returns LOWP__NOT_USED (nothing written) when the cost
 * model prefers the accumulator everywhere, else a lowp_status_t.
 */
int lowp__exact_gemm_sliced(double *c, const double *a, const double *b, const double *c0,
                            size_t m, size_t n, size_t k, const lowp_format_t *f,
                            const lowp_policy_t *pol, lowp_rounding_t rnd,
                            const lowp_gemm_opts_t *opt, lowp__progress_t *prog,
                            lowp_gemm_stats_t *stats);

/** @brief A sparse slice in compressed-row form: row r's nonzeros are
    val[ptr[r] .. ptr[r+1]) in columns idx[...] (ascending). */
typedef struct {
  size_t *ptr;
  uint32_t *idx;
  double *val;
  size_t nnz;
} lowp__csr_t;

/** @brief s = the nonzeros of x (rows x cols, row-major, cols <= 2^32);
    LOWP_ENOMEM (free s anyway with lowp__csr_free). */
int lowp__csr_build(lowp__csr_t *s, const double *x, size_t rows, size_t cols);
void lowp__csr_free(lowp__csr_t *s);

/** @brief C (m x n) = S B, S sparse (m rows), B dense (k x n), all
    row-major; exact on integer slices within the bit budget. The rows of C
    where S has no nonzeros are not written (they are zero). */
void lowp__spmm_a(double *c, const lowp__csr_t *s, const double *b, size_t m, size_t n,
                  size_t k);

/** @brief C (m x n) = A S, A dense (m x k), S sparse (k rows of n). */
void lowp__spmm_b(double *c, const double *a, const lowp__csr_t *s, size_t m, size_t n,
                  size_t k);

#endif
