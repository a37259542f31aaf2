/* lowp_master -- weight updates: low-precision weights, stochastic rounding, fp32 master copies */
#ifndef LOWP_MASTER_H
#define LOWP_MASTER_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

/*
 * The update w <- w + d (d = -lr * g, an fp32 value) done four ways. The
 * addition itself is always one fp32 addition, as in PyTorch (half and
 * bfloat16 tensors compute in float "opmath" and round the result back) and
 * in llm.c's AdamW kernel; what differs is where the result is stored:
 *
 *  rn      w is stored in format f: w = round_f(fp32(w + d)), nearest-even.
 *  sr      w is stored in bf16 and rounded stochastically the way llm.c does
 *          it (llmc/adamw.cuh -> stochastic_rounding in llmc/cuda_utils.cuh):
 *          the fp32 sum's low 16 bits are compared with 16 random bits; if
 *          larger, all 16 are set (then round-to-nearest rounds away from
 *          zero), else cleared (truncation). P(up) = low16 / 2^16. The random
 *          bits here come from Philox (lib/rng) keyed by (seed, index), not
 *          from llm.c's SquirrelNoise5: same distribution, other bits.
 *  master  an fp32 master copy m is updated, m = fp32(m + d), and the
 *          model's copy is w = round_f(m) (nearest-even).
 *
 * Because the sum is rounded to fp32 first, llm.c-style SR cannot see an
 * update below half an fp32 ulp of w: fp32(w + d) == w and w never moves.
 * lowp_mw_add_sr_exact rounds the exact sum stochastically in one step
 * (lowp_round_f64 with LOWP_RND_SR) for comparison.
 */

/**
 * @brief llm.c's stochastic rounding of one fp32 value to bf16.
 * @param random  32 random bits; only the low 16 are used (llm.c: `random &
 *                0xFFFF`)
 * @return the bf16 value as a float. Infinities and NaN are passed to the
 *         round-to-nearest conversion unchanged (llm.c would set their low
 *         bits, turning +-inf into NaN; weights are finite in practice).
 */
float lowp_sr_bf16_llmc(float x, uint32_t random);

/**
 * @brief w[i] = round_f(fp32(w[i] + d[i])), round to nearest even.
 * w holds values of f (as floats), updated in place; d may not alias w.
 * @return LOWP_OK, LOWP_EINVAL (NULL with n > 0), LOWP_EFORMAT (f invalid
 *         or not a subset of fp32's values: p > 24 or exponents beyond fp32).
 */
int lowp_mw_add_rn(float *w, const float *d, size_t n, const lowp_format_t *f);

/**
 * @brief w[i] = sr_bf16_llmc(fp32(w[i] + d[i]), rng(seed, offset + i)).
 * w holds bf16 values. The random word for element i is
 * lowp_rng_u32(seed, offset + i, LOWP_MW_STREAM).
 * @return LOWP_OK or LOWP_EINVAL.
 */
int lowp_mw_add_sr_llmc(float *w, const float *d, size_t n, uint64_t seed, uint64_t offset);

/**
 * @brief w[i] = sr_f(w[i] + d[i]) with the exact sum rounded stochastically
 * once (lowp_round_f64, LOWP_RND_SR with sr_bits random bits, index
 * offset + i). The sum of a value of f and an fp32 value is exact in fp64
 * whenever their exponents are within 29 binades; beyond that d is below
 * 2^-29 ulp(w) and the fp64 sum differs from the exact one by less than
 * 2^-53 |w|, which changes the rounding probability by < 2^-20.
 * @return LOWP_OK, LOWP_EINVAL, LOWP_EFORMAT.
 */
int lowp_mw_add_sr_exact(float *w, const float *d, size_t n, const lowp_format_t *f,
                         int sr_bits, uint64_t seed, uint64_t offset);

/**
 * @brief m[i] = fp32(m[i] + d[i]); w[i] = round_f(m[i]) (nearest even).
 * w may be NULL (no model copy wanted). m, w, d must not alias.
 * @return LOWP_OK, LOWP_EINVAL, LOWP_EFORMAT.
 */
int lowp_mw_add_master(float *m, float *w, const float *d, size_t n, const lowp_format_t *f);

/** @brief Philox stream used by lowp_mw_add_sr_llmc. */
#define LOWP_MW_STREAM 0x6d77u

#endif
