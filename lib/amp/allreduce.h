/* lowp_allreduce -- gradient all-reduce over W workers: ring and tree orders, low-precision sums, error feedback */
#ifndef LOWP_ALLREDUCE_H
#define LOWP_ALLREDUCE_H

#include <stddef.h>

#include "format/format.h"

/*
 * A CPU model of the arithmetic of an all-reduce (sum) of W workers'
 * gradient vectors of n fp32 elements:
 *
 * 1. Each worker casts its vector to the communication format `comm`
 *    (nearest even). With error feedback (resid != NULL) it first adds the
 *    residual it kept from the previous call and keeps the new one:
 *    v = fp32(g + r); c = round_comm(v); r = fp32(v - c).
 *    (Error feedback: Seide et al. 2014, "1-bit SGD"; Karimireddy et al.
 *    2019, "Error feedback fixes SignSGD".)
 * 2. The W values of each element are summed with every partial sum
 *    rounded to the accumulation format `acc` (each addition correctly
 *    rounded, nearest even), in one of two orders:
 *    LOWP_AR_RING  ring reduce-scatter (NCCL's ring algorithm): the vector is
 *      cut into W chunks; chunk k's partial sum starts at worker (k+1) mod W
 *      and travels the ring, adding one worker per hop: W - 1 sequential
 *      additions. Error bound (recursive summation, Higham 2002, "Accuracy
 *      and Stability of Numerical Algorithms" 2nd ed., section 4.2):
 *      |s^ - s| <= gamma_{W-1} sum |x_i|, gamma_k = k u / (1 - k u).
 *    LOWP_AR_TREE  binary tree (recursive halving): sum(lo, hi) =
 *      round(sum(lo, mid) + sum(mid, hi)), mid = lo + (hi - lo) / 2; depth
 *      ceil(log2 W). Bound gamma_{ceil(log2 W)} sum |x_i| (Higham, same section).
 *    The bounds assume no overflow or underflow in acc.
 */

/** @brief Reduction order. */
typedef enum { LOWP_AR_RING = 0, LOWP_AR_TREE = 1 } lowp_ar_order_t;

/**
 * @brief out[i] = the modelled all-reduced sum of g[w*n + i] over w < W.
 * @param g      W x n fp32 values, worker-major
 * @param resid  W x n residuals for error feedback (updated), or NULL
 * @param out    n values of acc (as floats; acc must fit in fp32)
 * @return LOWP_OK; LOWP_EINVAL (NULL pointers, W == 0, bad order);
 *         LOWP_EFORMAT (comm or acc invalid, or wider than fp32);
 *         LOWP_ENOMEM.
 */
int lowp_allreduce(float *out, const float *g, size_t W, size_t n, lowp_ar_order_t order,
                   const lowp_format_t *comm, const lowp_format_t *acc, float *resid);

/** @brief Worst-case bound factor: gamma_{W-1} (ring) or gamma_{ceil(log2 W)}
    (tree) for unit roundoff u; +inf if k u >= 1. */
double lowp_allreduce_bound(size_t W, lowp_ar_order_t order, double u);

/** @brief "ring" / "tree". */
const char *lowp_ar_order_name(lowp_ar_order_t order);

/** @brief a + b correctly rounded to f (nearest even), a and b binary64.
    Uses TwoSum and round-to-odd at 53 bits, which is correct for p <= 51
    (Boldo & Melquiond 2008). */
double lowp_add_rounded(double a, double b, const lowp_format_t *f);

#endif
