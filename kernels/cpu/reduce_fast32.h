/* lowp_reduce_fast32 -- the summation orders on binary32 lanes (narrow accumulators, fp32 in directed modes) */

/* Private to kernels/cpu: reduce_fast.c (lowp_gemm_order_fast) sends here the
   cases this file serves; its public contract is cpu/reduce_fast.h's. */

#ifndef LOWP_REDUCE_FAST32_H
#define LOWP_REDUCE_FAST32_H

#include <stddef.h>

#include "cpu/gemm_acc_fast.h"
#include "model/accum.h"

/**
 * @brief 1 when lowp_order_fast32 gives lowp_accum_dot's bits for an
 * accumulation `acc` (valid, not kahan) whose recursive order takes the fast
 * kernel `kind` (lowp_gemm_acc_fast_kind on the same data) on instruction
 * set `isa` (lowp_isa_t) with inner dimension k: RO32 (k <= 2^24), or
 * FMA32 in rtz/rup/rdn on AVX-512; else 0.
 */
int lowp_order_fast32_ok(lowp_accfast_kind_t kind, const lowp_accum_t *acc, int isa, size_t k);

/**
 * @brief C = A B in the order of acc, every output as lowp_accum_dot gives it
 * (a NaN as the positive quiet NaN), on binary32 lanes; m, n, k >= 1, only
 * where lowp_order_fast32_ok holds; mode: acc->rnd as cpu/acc_steps.h's M_NE,
 * M_TZ, M_UP or M_DN. OpenMP over blocks of outputs.
 * @return LOWP_OK or LOWP_ENOMEM.
 */
int lowp_order_fast32(double *c, const double *a, const double *b, size_t m, size_t n,
                      size_t k, const lowp_accum_t *acc, int mode, int isa);

#endif
