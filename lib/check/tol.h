/* lowp_tol -- the (rtol, atol) an assert_close-style test should use, derived from
   the operation, K, the formats, the accumulation method and a confidence */
#ifndef LOWP_TOL_H
#define LOWP_TOL_H

/*
 * A tolerance derived, not tuned (docs/tolerances.md). For sums of products
 * (sum, dot, gemv, gemm) the componentwise bound of lib/check/op.c
 * (lowp_op_bound: gamma_r per order, Higham & Mary's probabilistic bound at
 * a confidence, a tensor-core model's) on the accumulation, and the one
 * rounding to the output:
 *
 *   |c - x| <= u_out |x| + (1 + u_out) beta sum_i |a_i b_i|
 *           <= rtol |x| + atol,  rtol = u_out, atol = (1 + u_out) beta k scale
 *
 * with u_out the unit roundoff of the output when it is narrower than the
 * accumulator (else 0) and scale a bound on |a_i b_i| (|x_i| for sum) that
 * the caller states (default 1: inputs in [-1, 1]). For row operations
 * (softmax, logsoftmax, logsumexp, rmsnorm, layernorm, xent) a first-order
 * forward analysis from the same sum bound (positive terms: the backward
 * bound is a relative one), exp/log within 2 ulps of the accumulation
 * format, and one rounding per arithmetic operation; the derivation text
 * says which assumption each term comes from.
 */

#include <stddef.h>

#include "check/op.h"
#include "model/accum.h"
#include "model/bsmma.h"
#include "model/tc.h"

/** @brief What a tolerance is for. */
typedef struct {
  const lowp_op_t *op;
  size_t k;               /**< reduction length: k (dot, gemv, gemm), n (sum, row ops) */
  lowp_format_t in, out;  /**< input and output formats */
  lowp_accum_t accum;     /**< order, accumulation format (accum.acc), rounding, fma */
  int has_model;          /**< a tensor-core model computes it (worst case only) */
  lowp_tc_model_t model;
  double confidence;      /**< 0 or 1: worst case; in (0, 1): probability per element */
  int has_bs;             /**< the inputs are in a block-scaled format (bs) */
  lowp_bsformat_t bs;
  int has_bsmodel;        /**< the block-scaled MMA model computes it (bsmodel; worst case) */
  lowp_bsmma_t bsmodel;
  double scale;           /**< sums of products: bound on |a_i b_i| (|x_i| for sum);
                               row ops: bound on |x_i| (layernorm: on |x_i - mean| / std);
                               0 means 1 */
} lowp_tol_query_t;

/** @brief The derived tolerance. */
typedef struct {
  double rtol, atol;      /**< |c - x| <= atol + rtol |x| (torch.isclose's form) */
  double bound;           /**< sums of products: componentwise bound on
                               |c - x| / sum |a_i b_i| with the output rounding;
                               row ops: the relative part (= rtol) */
  double bound_acc;       /**< the accumulation's bound alone (before the output) */
  double rtol_same_sign;  /**< sums of products: |c - x| <= this |x| when every
                               product has the same sign (no cancellation) */
  int vacuous;            /**< no bound exists (k u >= 1, ...): rtol/atol +inf */
  char bound_name[200];
  char why[2400];         /**< the derivation in words, with citations */
} lowp_tol_t;

/**
 * @brief Derive the tolerance of q.
 * @return LOWP_OK; LOWP_EINVAL (k = 0, missing op); LOWP_EUNSUPPORTED (an
 *         operation with no derivation (cast, exp, ...: err says which), a
 *         probabilistic bound with directed rounding or Kahan, or a
 *         confidence with a tensor-core model).
 */
int lowp_tol(lowp_tol_t *t, const lowp_tol_query_t *q, char *err, size_t errlen);

#endif
