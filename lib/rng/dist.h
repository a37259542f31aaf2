/* lowp_dist -- seeded input generators, rounded to the input format */
#ifndef LOWP_DIST_H
#define LOWP_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

/* ------------------------------------------------------------------ types */

/** @brief Kinds of generated data. */
typedef enum {
  LOWP_DIST_UNIFORM01 = 0, /**< uniform on [0, 1) */
  LOWP_DIST_UNIFORM11 = 1, /**< uniform on [-1, 1) */
  LOWP_DIST_NORMAL = 2,    /**< standard normal (Box-Muller) */
  LOWP_DIST_LOGUNIFORM = 3,/**< log-uniform magnitudes on [lo, hi], positive */
  LOWP_DIST_CANCEL = 4,    /**< pairs x, -x plus small terms (see below) */
  LOWP_DIST_SPREAD = 5     /**< random sign, exponent uniform over the whole
                                range of the format, subnormals included */
} lowp_dist_kind_t;

/** @brief A distribution: its kind and, for log-uniform, its range. */
typedef struct {
  lowp_dist_kind_t kind;
  double lo, hi; /**< log-uniform range, 0 < lo <= hi, finite */
} lowp_dist_t;

/* ------------------------------------------------------------- public API */

/**
 * @brief Parse "uniform01", "uniform11", "normal", "loguniform[:lo:hi]"
 * (default 1e-8:1e8), "cancel", "spread".
 * @return LOWP_OK; LOWP_EPARSE for an unknown name or malformed number;
 *         LOWP_EINVAL for NaN, infinite, non-positive or reversed lo/hi.
 */
int lowp_dist_parse(lowp_dist_t *d, const char *text);

/** @brief The name of a kind ("uniform01", ...). */
const char *lowp_dist_name(lowp_dist_kind_t kind);

/**
 * @brief Fill x[0..n) with draws rounded (rne) to f. Element i uses only the
 * counters 2i and 2i+1 of the (seed, stream) Philox stream, so the result is
 * a pure function of (seed, stream, i): byte-identical however it is split.
 * LOWP_DIST_CANCEL fills as lowp_dist_cancel and drops the exact sum.
 * @return LOWP_OK, LOWP_EINVAL (bad d, NULL x with n > 0), LOWP_EFORMAT.
 */
int lowp_dist_fill(double *x, size_t n, const lowp_dist_t *d, const lowp_format_t *f,
                   uint64_t seed, uint32_t stream);

/**
 * @brief Elements [first, first + n) of the sequence lowp_dist_fill draws
 * (each element depends on its index alone): a block of rows of a matrix,
 * bit-identical to the same rows of the whole fill. LOWP_DIST_CANCEL is a
 * whole-array construction: only first = 0 (else LOWP_EINVAL).
 */
int lowp_dist_fill_at(double *x, size_t n, const lowp_dist_t *d, const lowp_format_t *f,
                      uint64_t seed, uint32_t stream, size_t first);

/**
 * @brief Heavy cancellation with a known exact sum. About n/8 (at least 1)
 * "small" terms i * q (i a random integer, |i| < 2^min(p-1, 20), q a power of
 * two about 2^(2p+4) below the large terms and at least f's smallest
 * subnormal); the rest are pairs x, -x of "large" values of f scaled so no
 * partial sum overflows; all in a seeded random order. The exact sum is
 * (sum of the integers) * q, computed in integers: *exact_sum is exact.
 * @param[out] exact_sum may be NULL
 * @return LOWP_OK, LOWP_EINVAL, LOWP_EFORMAT.
 */
int lowp_dist_cancel(double *x, size_t n, const lowp_format_t *f, uint64_t seed,
                     uint32_t stream, double *exact_sum);

/**
 * @brief Cancellation in a matrix product: A (m x k) rows and B (k x n)
 * columns whose products cancel in pairs. A random pairing of [0, k) (from
 * seed) is shared: for a pair (l, l'), A[i][l'] = -A[i][l] (large values)
 * and B[l][j] = B[l'][j], so a[l]b[l] + a[l']b[l'] = 0 exactly; the
 * unpaired l (about k/8) hold small values in A. Each dot product is then a
 * small exact value hidden among large terms.
 * @return LOWP_OK, LOWP_EINVAL, LOWP_EFORMAT, LOWP_ENOMEM.
 */
int lowp_dist_cancel_gemm(double *a, double *b, size_t m, size_t n, size_t k,
                          const lowp_format_t *f, uint64_t seed);

#endif
