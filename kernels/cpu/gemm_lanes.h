/* lowp_gemm_lanes -- a SIMD dot product as a registry kernel: interleaved FMA lanes, then a horizontal tree */
#ifndef LOWP_GEMM_LANES_H
#define LOWP_GEMM_LANES_H

#include <stddef.h>

#include "cpu/kcfg.h"

/**
 * @brief C = A B (batched), each output the dot product of a vectorised
 * CPU kernel (registry entry gemm_lanes; issue 32's example: 8 fp32 SIMD
 * lanes x 4 registers = 32 lanes on AVX2): lanes= L accumulators (a power
 * of two, default 32), lane l an FMA chain over the products l, l + L,
 * l + 2L, ... from +0 (each step s = s + a b with the product exact,
 * rounded once to acc, rne), then the horizontal sum lane[l] += lane[l + w]
 * for w = L/2, ..., 1 (each rounded to acc). acc=fp32 is the honest
 * kernel; acc=fp16 is issue 32's planted bug (an fp16 accumulator). The
 * tree is model/tree_lanes.h's lowp_tree_from_lanes, node for node. Inputs
 * of at most 53 significand bits together (their products exact in
 * binary64; LOWP_EUNSUPPORTED otherwise); the result rounded (rne) to the
 * problem's output format.
 */
int lowp_kernel_gemm_lanes(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                           const lowp_problem_t *p, char *err, size_t errlen);

#endif
