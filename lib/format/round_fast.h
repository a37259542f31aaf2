/* lowp_round_fast -- branch-free fast path for rounding binary32 arrays */
#ifndef LOWP_ROUND_FAST_H
#define LOWP_ROUND_FAST_H

#include "format/format.h"

/** @brief 1 if the fast path gives the same bits as the reference for
    (f, pol, rnd); 0 otherwise (the caller then uses the reference loop). */
int lowp_round_fast_applies(const lowp_format_t *f, const lowp_policy_t *pol,
                            lowp_rounding_t rnd);

/** @brief Fast path of lowp_encode_array_f32; call only where it applies. */
int lowp_round_fast_encode_f32(void *bits, const float *x, size_t n,
                               const lowp_format_t *f, const lowp_policy_t *pol,
                               lowp_rounding_t rnd);

/** @brief The reference loop (scalar core per element) behind
    lowp_encode_array_f32, exported for tests and benchmarks. */
int lowp_encode_array_f32_ref(void *bits, const float *x, size_t n,
                              const lowp_format_t *f, const lowp_policy_t *pol,
                              lowp_rounding_t rnd);

#endif
