/* lowp_gemm_tc_fast -- integer-SIMD twin of lowp_gemm_tc_scalar (the tensor-core model), same bits */
#ifndef LOWP_GEMM_TC_FAST_H
#define LOWP_GEMM_TC_FAST_H

#include <stddef.h>

#include "cpu/gemm_tc.h"

/**
 * @brief 1 when lowp_gemm_tc_fast serves this configuration, else 0.
 *
 * Conditions (every preset's datapath satisfies them, for fp16, bf16, tf32,
 * e4m3 and e5m2 inputs, fp32 and fp16 outputs, with or without promotion,
 * late-c / interleaved fp8 mma.sync included): align = rtz without sticky
 * bit, ovf = inf, block roundings rtz or rne, input precision <= 12 bits,
 * and F + 2 + bitlen(b + 1) <= 52 (the block sum is exact in binary64).
 */
int lowp_gemm_tc_fast_ok(const lowp_gemm_tc_cfg_t *cfg);

/**
 * @brief C = A B + C as lowp_gemm_tc_scalar computes it, bit for bit.
 * Inputs must already be values of their formats (lowp_gemm_tc_ref checks).
 * isa = "generic", "avx2", "avx512" or NULL (the best this CPU runs).
 * Outputs whose row, column or C entry holds NaN or inf, or whose result is
 * not finite, are recomputed by lowp_tc_dot. OpenMP over column panels and
 * rows; bytes do not depend on the thread count.
 * @return LOWP_OK; LOWP_EINVAL (configuration not served, unknown isa);
 *         LOWP_ENOMEM; LOWP_EUNSUPPORTED (this CPU cannot run that isa).
 */
int lowp_gemm_tc_fast(double *c, const double *a, const double *b, size_t m, size_t n,
                      size_t k, const lowp_gemm_tc_cfg_t *cfg, const char *isa);

#endif
