/* lowp_reduce_fast -- the summation orders of lowp_accum_dot on vectors of outputs, same bits */
#ifndef LOWP_REDUCE_FAST_H
#define LOWP_REDUCE_FAST_H

#include <stddef.h>

#include "model/accum.h"

/**
 * @brief 1 when lowp_gemm_order_fast gives, for C = A B (A m x k, B k x n,
 * row-major), the bits of lowp_accum_dot(row i of A, column j of B, m) for
 * every output; else 0. Conditions: order recursive, pairwise, blocked:B or
 * splitk:S (not kahan); acc and rnd one of the fast kernels of
 * gemm_acc_fast.h serves for the recursive order with these inputs (fp64
 * in rne; or an IEEE-like format of p <= 51 in rne/rtz/rup/rdn and every
 * entry of A and B a binary32 value, inf or NaN, so that each product is
 * exact in binary64).
 */
int lowp_gemm_order_fast_ok(const double *a, const double *b, size_t m, size_t n, size_t k,
                            const lowp_accum_t *acc);

/**
 * @brief The lanes lowp_gemm_order_fast runs this case on with instruction
 * set isa ("generic", "avx2", "avx512" or NULL, the best): 32 (binary32:
 * fp32 in rne; fp32 in rtz/rup/rdn on "avx512"; the narrow accumulators
 * and data of gemm_acc_fast.h's RO32 with k <= 2^24), 64 (binary64: the
 * rest), 0 when it does not apply (not lowp_gemm_order_fast_ok, or an isa
 * unknown or beyond this CPU). For tests and benchmarks.
 */
int lowp_gemm_order_fast_lanes(const double *a, const double *b, size_t m, size_t n, size_t k,
                               const lowp_accum_t *acc, const char *isa);

/**
 * @brief c[i n + j] = lowp_accum_dot(a + i k, 1, b + j, n, k, acc) for all
 * i < m, j < n, on vectors of outputs (a NaN result is the positive quiet
 * NaN). isa: "generic", "avx2", "avx512" or NULL (the best this CPU runs).
 * OpenMP over blocks of outputs: bytes do not depend on the thread count.
 * @return LOWP_OK; LOWP_EINVAL (not lowp_gemm_order_fast_ok, unknown isa);
 *         LOWP_EUNSUPPORTED (this CPU cannot run that isa); LOWP_ENOMEM.
 */
int lowp_gemm_order_fast(double *c, const double *a, const double *b, size_t m, size_t n,
                         size_t k, const lowp_accum_t *acc, const char *isa);

#endif
