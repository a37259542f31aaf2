/* lowp_accum -- summation and accumulation orders that real kernels use */
#ifndef LOWP_ACCUM_H
#define LOWP_ACCUM_H

/*
 * Each order is a different sequence of correctly rounded two-operand
 * operations in an accumulation format (any lowp format of at most 52
 * significand bits, or fp64 with round to nearest). Higham, "Accuracy and
 * Stability of Numerical Algorithms", 2nd ed., ch. 4 (recursive, pairwise,
 * blocked and compensated summation, with their bounds); Blanchard, Higham,
 * Mary, "A class of fast and accurate summation algorithms", SISC 2020
 * (blocked / split sums as used by GPU kernels).
 *
 *   recursive  s = fl(s + x_i), i = 0..n-1
 *   pairwise   fl(sum(left half) + sum(right half)), down to single terms
 *   blocked    recursive sums of blocks of `block` terms, then a recursive
 *              sum of the block sums
 *   splitk     `block` contiguous slices summed recursively (each one a
 *              split-K GEMM slice), then the slice sums added in order
 *   kahan      compensated summation (Kahan 1965), every operation in the
 *              accumulation format
 *
 * Dot products first form a_i b_i exactly (inputs of <= 26 significand bits
 * have exact binary64 products). With fma = 0 each product is rounded to the
 * accumulation format before it is added; with fma = 1 it enters the sum
 * exactly, one rounding per step (an FMA chain, for the recursive order).
 */

#include <stddef.h>

#include "format/format.h"

/* ------------------------------------------------------------------ types */

/** @brief Summation orders. Explicit values: they are stored in files. */
typedef enum {
  LOWP_ACC_RECURSIVE = 0, /**< left to right */
  LOWP_ACC_PAIRWISE = 1,  /**< binary tree, halves */
  LOWP_ACC_BLOCKED = 2,   /**< blocks of `block`, then the block sums */
  LOWP_ACC_SPLITK = 3,    /**< `block` slices, then the slice sums */
  LOWP_ACC_KAHAN = 4      /**< compensated */
} lowp_acc_order_t;

/** @brief An accumulation model. */
typedef struct {
  lowp_acc_order_t order;
  lowp_format_t acc;     /**< accumulation format (a copy) */
  lowp_rounding_t rnd;   /**< rounding of every operation (not LOWP_RND_SR) */
  size_t block;          /**< blocked: block size; splitk: number of slices */
  int fma;               /**< dots: products enter exactly (1) or rounded (0) */
} lowp_accum_t;

/* -------------------------------------------------------------- public API */

/**
 * @brief z = x + y rounded once to f: the exact sum (TwoSum) rounded by
 * lowp_round_sig. x, y finite or not; f->precision <= 52, or fp64 with
 * LOWP_RND_NE (native addition).
 * @return ternary of the rounding (<0 below, 0 exact, >0 above the exact sum).
 */
int lowp_accum_add(double *z, double x, double y, const lowp_format_t *f,
                     lowp_rounding_t rnd);

/**
 * @brief Parse an accumulation model: ORDER[:ARG][,key=value]...
 * ORDER: recursive | pairwise | blocked:B | splitk:S | kahan | fma
 * ("fma" = recursive with fma=1); B and S are integers in [1, 2^40], and
 * the other orders take no ':'. Keys: acc=FORMAT (default fp32; it must
 * pass lowp_accum_format_check), rnd=MODE (default rne), fma=0|1, each at
 * most once.  Example: "blocked:32,acc=fp16".
 * @return LOWP_OK; LOWP_EINVAL with err set.
 */
int lowp_accum_parse(lowp_accum_t *m, const char *spec, char *err, size_t errlen);

/** @brief Check a model: LOWP_OK, LOWP_EINVAL (block 0 for blocked/splitk,
    a format too wide or unable to hold a sum, stochastic rounding). */
int lowp_accum_validate(const lowp_accum_t *m, char *err, size_t errlen);

/** @brief Largest count of blocked:B and splitk:S (2^40). */
#define LOWP_ACC_MAX_COUNT 1099511627776LL

/**
 * @brief Can f hold a running sum? It must be valid, have a zero (x + (-x))
 * and a sign (differences). e8m0 (no zero, unsigned) cannot.
 * @return LOWP_OK or LOWP_EINVAL (err says why).
 */
int lowp_accum_format_check(const lowp_format_t *f, char *err, size_t errlen);

/**
 * @brief s = sum of x[0..n) in the model (x values need not be in acc:
 * each enters the first operation exactly). n = 0 gives +0.
 * @return LOWP_OK, LOWP_EINVAL, LOWP_ENOMEM (pairwise of long inputs needs
 *         no memory; none of the orders allocate).
 */
int lowp_accum_sum(double *s, const double *x, size_t n, const lowp_accum_t *m);

/**
 * @brief s = sum of a[i*sa] b[i*sb], i < n, in the model (see the header).
 * @return LOWP_OK, LOWP_EINVAL.
 */
int lowp_accum_dot(double *s, const double *a, size_t sa, const double *b,
                   size_t sb, size_t n, const lowp_accum_t *m);

/** @brief The most dots lowp_accum_dot_many takes at once. */
#define LOWP_ACCUM_LANES 8

/**
 * @brief out[l] = lowp_accum_dot(a[l], sa, b[l], sb, n, m) for l < g <= LOWP_ACCUM_LANES: the same
 * bits, each dot by its own operations, interleaved term by term (faster: one dot's roundings form a
 * serial chain; g of them overlap).
 * @return LOWP_OK, LOWP_EINVAL (an invalid model, g too large).
 */
int lowp_accum_dot_many(double *out, size_t g, const double *const *a, size_t sa, const double *const *b,
                        size_t sb, size_t n, const lowp_accum_t *m);

/**
 * @brief out[l] = lowp_accum_sum(x[l], n, m) for l < g <= LOWP_ACCUM_LANES, the same way (the same
 * bits, the sums interleaved term by term).
 * @return LOWP_OK, LOWP_EINVAL.
 */
int lowp_accum_sum_many(double *out, size_t g, const double *const *x, size_t n, const lowp_accum_t *m);

/** @brief One line describing the model: "blocked:32,acc=fp16,rnd=rne,fma=0". */
void lowp_accum_str(char *buf, size_t len, const lowp_accum_t *m);

#endif
