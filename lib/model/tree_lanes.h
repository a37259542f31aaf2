/* lowp_tree_from_lanes -- the summation tree of a SIMD dot product: interleaved FMA lanes, then a halving tree */
#ifndef LOWP_TREE_LANES_H
#define LOWP_TREE_LANES_H

#include <stddef.h>

#include "model/tree.h"

/**
 * @brief The tree of L lanes (a power of two): lane l = ((0 + p_l) +
 * p_{l+L}) + ..., every addition rounded to acc with rnd and the products
 * exact (an FMA chain per lane); then lane[l] = lane[l] + lane[l + w] for
 * w = L/2, ..., 1, skipping lanes that hold no product (n < L). The order
 * of kernels/cpu/gemm_lanes.c (and of issue 32's SIMD kernel, 8 fp32 lanes
 * x 4 registers: L = 32). No final rounding (has_out 0).
 * @return LOWP_OK; LOWP_EINVAL (L not a power of two, n = 0); LOWP_ENOMEM.
 */
int lowp_tree_from_lanes(lowp_tree_t *t, size_t n, size_t L, const lowp_format_t *acc,
                         lowp_rounding_t rnd);

#endif
