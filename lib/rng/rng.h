/* lowp_rng -- counter-based random numbers (Random123 Philox4x32-10) */
#ifndef LOWP_RNG_H
#define LOWP_RNG_H

#include <stdint.h>

/**
 * @brief Random bits as a pure function of (seed, index, stream).
 *
 * Philox4x32-10 (Salmon et al., SC'11, "Parallel random numbers: as easy as
 * 1, 2, 3") keyed by seed, with counter (index_lo, index_hi, stream, 0).
 * A GPU kernel using the same Random123 header with the same triple draws
 * the same bits, which is what makes stochastic rounding reproducible by the
 * CPU twin. Returns the first 32-bit word of the output block.
 */
uint32_t lowp_rng_u32(uint64_t seed, uint64_t index, uint32_t stream);

/** @brief As lowp_rng_u32 but the first two words as one 64-bit value. */
uint64_t lowp_rng_u64(uint64_t seed, uint64_t index, uint32_t stream);

/**
 * @brief A sequential stream: explicit state, no globals. Element i of the
 * stream is lowp_rng_u64(seed, i, stream), so a stream can be split across
 * threads by index and still give the same numbers.
 */
typedef struct {
  uint64_t seed;
  uint64_t counter;
  uint32_t stream;
} lowp_rng_t;

/** @brief Initialise a stream. */
void lowp_rng_init(lowp_rng_t *r, uint64_t seed, uint32_t stream);
/** @brief Next 64 random bits. */
uint64_t lowp_rng_next(lowp_rng_t *r);
/** @brief Uniform double in [0, 1): 53 random bits times 2^-53. */
double lowp_rng_uniform(lowp_rng_t *r);
/** @brief Standard normal (Box-Muller on two uniforms; uses two draws). */
double lowp_rng_normal(lowp_rng_t *r);

#endif
