/* lowp_gemm_acc -- CPU twin of a GEMM that accumulates in a chosen format */
#ifndef LOWP_GEMM_ACC_H
#define LOWP_GEMM_ACC_H

#include <stddef.h>

#include "format/format.h"
#include "measure/fpx.h"

/* ------------------------------------------------------------------ types */

/** @brief Order in which the k products of one output are added. Only
    recursive summation exists so far; pairwise and blocked orders belong to
    lib/model and can be added here without changing the signature. */
typedef enum {
  LOWP_ORDER_RECURSIVE = 0 /**< s = C; s = s + p_0; s = s + p_1; ... */
} lowp_sum_order_t;

/**
 * @brief What the emulated kernel does, as data.
 *
 * Each product a*b is rounded to prod (or kept exact when prod is NULL, as
 * in an FMA or a tensor core); each addition s + p is rounded to acc, once
 * (no double rounding through binary64: exact/exact.h's add2/mul2). The
 * output is the final s, a value of acc.
 */
typedef struct {
  const lowp_format_t *prod; /**< product format, or NULL for exact products */
  lowp_rounding_t prod_rnd;  /**< mode of the product rounding */
  const lowp_format_t *acc;  /**< accumulator format (required) */
  lowp_rounding_t acc_rnd;   /**< mode of each addition's rounding */
  const lowp_policy_t *pol;  /**< overflow/FTZ/SR policy; NULL = IEEE defaults */
  lowp_sum_order_t order;    /**< summation order */
  size_t block;              /**< block size of blocked orders (unused yet) */
} lowp_gemm_acc_cfg_t;

/* ------------------------------------------------------------- public API */

/**
 * @brief C = A B + C, the way the configured kernel computes it.
 *
 * A m x k, B k x n, C m x n, row-major binary64 arrays holding values of
 * their formats. C on entry is the addend (rounded to acc first, as a
 * kernel would load it); pass zeros for a plain product. Matches
 * lowp_gemm_fn (kernels/registry.h) with cfg a const lowp_gemm_acc_cfg_t *.
 * OpenMP; the result does not depend on the thread count. Runs the
 * vectorised kernels of cpu/gemm_acc_fast.h where they give the same bits
 * as lowp_gemm_acc_scalar (the reference), else the reference itself.
 * Stochastic rounding: for output e = i n + j, the addition of step l draws
 * index pol->sr_offset + 2 k e + 2 l and its product's rounding
 * pol->sr_offset + 2 k e + 2 l + 1; the addend's rounding draws
 * pol->sr_offset + 2 k m n + e. No index is used twice.
 * @return LOWP_OK; LOWP_EINVAL (NULL data or cfg, acc NULL, unknown order);
 *         LOWP_EFORMAT; LOWP_EROUND.
 */
int lowp_gemm_acc_ref(double *c, const double *a, const double *b, size_t m,
                      size_t n, size_t k, const void *cfg);

/**
 * @brief One dot product the same way: *y = init + sum_l x[l incx] w[l incw]
 * in the configured order and formats; SR indices as output e = 0 of a
 * gemm with the same k (init's rounding draws pol->sr_offset + 2k).
 * @return as lowp_gemm_acc_ref.
 */
int lowp_dot_acc_ref(double *y, const double *x, size_t incx, const double *w,
                     size_t incw, size_t n, double init,
                     const lowp_gemm_acc_cfg_t *cfg);

/** @brief The scalar reference behind lowp_gemm_acc_ref (same contract):
    one output at a time, each addition through exact/exact.h. Every fast
    kernel is tested against it bit for bit. */
int lowp_gemm_acc_scalar(double *c, const double *a, const double *b, size_t m,
                         size_t n, size_t k, const void *cfg);

/**
 * @brief lowp_gemm_acc_scalar (the reference: same bits) with every rounding
 * traced into trace (lib/measure/fpx.h; NULL: not traced). Sequence of
 * output e = i n + j: e (2k + 1) for the addend's rounding, + 2l + 1 for
 * product l's rounding, + 2l + 2 for addition l; indices (i, j, l). An
 * exception of an addition is inherent when the exact partial sum
 * C + sum_{t <= l} a_t b_t is beyond the accumulator's range too, spurious
 * when it is not. The trace is the same for any thread count.
 * @return as lowp_gemm_acc_ref.
 */
int lowp_gemm_acc_fpx(double *c, const double *a, const double *b, size_t m, size_t n,
                      size_t k, const lowp_gemm_acc_cfg_t *cfg, lowp_fpx_trace_t *trace);

/**
 * @brief y[q] = lowp_dot_acc_ref(x[q], incx, w[q], incw, n, init, cfg) for q < g (at most
 * LOWP_DOT_FAST_LANES, cpu/gemm_acc_fast.h): the same bits, the dots' steps interleaved where the fast
 * step serves every lane, else one by one.
 * @return as lowp_gemm_acc_ref (the first lane's failure).
 */
int lowp_dot_acc_ref_many(double *y, size_t g, const double *const *x, size_t incx, const double *const *w,
                          size_t incw, size_t n, double init, const lowp_gemm_acc_cfg_t *cfg);

/** @brief The scalar reference behind lowp_dot_acc_ref (same contract). */
int lowp_dot_acc_scalar(double *y, const double *x, size_t incx, const double *w,
                        size_t incw, size_t n, double init,
                        const lowp_gemm_acc_cfg_t *cfg);

#endif
