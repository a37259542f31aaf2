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
                               row ops: bound on |x_i| (layernorm: on the row's mean |x_i|
                               / sqrt(var + eps), which bounds the mean's error in y);
                               0 means 1 */
  /* -- the stated risk (docs/tolerances.md, "Probabilistic by default") -- */
  int worst;              /**< 1: the worst-case bound even where a probabilistic one applies */
  double risk;            /**< with confidence 0 and worst 0: the false-failure probability
                               of an honest kernel for the whole test (all numel outputs);
                               0 means LOWP_TOL_RISK */
  double numel;           /**< the outputs one test compares (the union bound's count);
                               0 means LOWP_TOL_NUMEL */
  int data_checked;       /**< set by lowp_tol_data: the caller checks the independence
                               assumption on the data (no data-free refusal) */
  /* -- row operations: the per-element format (exp, log, subtract, divide) -- */
  int has_compute;        /**< 0: compute = the input format */
  lowp_format_t compute;
  double eps;             /**< layernorm: its eps, for the rows' scale in lowp_tol_data
                               (0: none given; sqrt(var) then bounds the divisor) */
  /* -- row operations, from one row's data (lowp_tol_data sets them; 0: none) -- */
  double row_stag;        /**< the row sum's terms below u_acc S (they can stagnate: an
                               error of the term itself, not random), over S */
  double row_rep2;        /**< sum r_g^2 / n over the row sum's groups of r_g equal terms
                               (their rounding errors can add coherently); <= 1: none */
} lowp_tol_query_t;

/** @brief The default false-failure probability of a whole test (1e-6) and the
    default number of outputs it compares (2^24) when the caller gives none. */
#define LOWP_TOL_RISK 1e-6
#define LOWP_TOL_NUMEL 16777216.0

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
  int probabilistic;      /**< Higham & Mary's probabilistic bound was used */
  double confidence;      /**< its probability per element (0: worst case) */
  double risk;            /**< the stated false-failure probability of the whole test,
                               numel (1 - confidence) (0: worst case: never) */
  double numel;           /**< the outputs the union bound counts */
  double beta;            /**< sums of products: atol per unit of sum |a_i b_i|,
                               (1 + u_out) bound_acc (atol = beta k scale + atol_floor) */
  double atol_floor;      /**< the absolute part below the normal range: half the
                               output's smallest subnormal spacing, plus (sums of
                               products) k times the accumulator's for the products */
  char not_prob[400];     /**< why the probabilistic bound is not used ("" if it is) */
  char bound_name[200];
  char why[2400];         /**< the derivation in words, with citations */
} lowp_tol_t;

/**
 * @brief Derive the tolerance of q. Every result passes one check before it
 * is returned (tol.c, tol_finish): rtol, atol, bound, bound_acc and
 * rtol_same_sign are finite and >= 0, or the result is vacuous (rtol = atol
 * = bound = inf, why says where the derivation broke down); tolerances and
 * vacuity are monotone in k (splitk:S takes the larger bound of k and of the
 * last k with shorter slices).
 * @return LOWP_OK; LOWP_EINVAL (k = 0, missing op); LOWP_EUNSUPPORTED (an
 *         operation with no derivation (cast, exp, ...: err says which), a
 *         probabilistic bound with directed rounding or Kahan, or a
 *         confidence with a tensor-core model).
 */
int lowp_tol(lowp_tol_t *t, const lowp_tol_query_t *q, char *err, size_t errlen);

/**
 * @brief Data-aware tolerance (lib/check/tol_data.c): the tolerance of q for
 * the inputs in[] of a problem of dims (lowp_op_shape's layout; q->k is taken
 * from dims), per output element. Sums of products: atol[e] = (1 + u_out)
 * (bound_acc S_e + M_e) + atol_floor with S_e = sum_i |a_i b_i| of that
 * element (|x_i| for sum) and M_e the terms that can stagnate (|a_i b_i| <
 * u_acc S_e; with a probabilistic bound only); rtol[e] = t->rtol. The
 * probabilistic bound is refused (worst case, t->not_prob says why) when
 * for some element those terms exceed half its probabilistic budget or the
 * products all have one sign with k u_acc >= 1/16; an element whose
 * products repeat in magnitude (r_g equal |a_i b_i| in group g) has its
 * probabilistic bound's exponent scaled by sqrt(sum r_g^2 / k) (their
 * rounding errors can add coherently), at most the worst case. Row operations: scale
 * per row (max |x_i|; layernorm mean |x_i| / sqrt(var + eps)) and that row's
 * rtol/atol for each of its outputs. t describes the loosest element.
 * numel defaults to the number of outputs.
 * @param[out] atol, rtol  lowp_op_shape's count of output 0 each (rtol may be NULL)
 * @return LOWP_OK; lowp_tol's codes; LOWP_EINVAL (NULL, bad dims).
 */
int lowp_tol_data(lowp_tol_t *t, double *atol, double *rtol, const lowp_tol_query_t *q,
                  const lowp_dims_t *dims, const double *const *in, char *err, size_t errlen);

#endif
