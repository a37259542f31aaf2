/* lowp_round_fast -- branch-free fast path for rounding binary32 arrays */
#ifndef LOWP_ROUND_FAST_H
#define LOWP_ROUND_FAST_H

#include "format/format.h"

/**
 * @brief 1 if the fast path gives the same bits as the reference for
 * (f, pol, rnd); 0 otherwise (the caller then uses the reference loop).
 *
 * It applies to formats whose values are all binary32 values and whose
 * binary32 subnormals lie below xmin (p <= 23, emin >= -126, emax <= 127),
 * with subnormals, a sign and a zero, and an encoding of at most 32 bits:
 * tf32, fp16, bf16, e4m3, e5m2, e4m3fnuz, e5m2fnuz, e3m2, e2m3, e2m1 and
 * specs like them; in modes rne, rna, rtz, rup, rdn, rto (rne and rto not
 * for p = 1); under every policy (overflow, NaN sign, NaN map, FTZ, DAZ).
 * Not: stochastic rounding, fp32, fp64, e8m0, formats without subnormals.
 */
int lowp_round_fast_applies(const lowp_format_t *f, const lowp_policy_t *pol,
                            lowp_rounding_t rnd);

/**
 * @brief Fast path of lowp_encode_array_f32 (same arguments, same bits).
 * Where it does not apply it runs the reference loop instead.
 * @return LOWP_OK, or the reference loop's status where it does not apply.
 */
int lowp_round_fast_encode_f32(void *bits, const float *x, size_t n,
                               const lowp_format_t *f, const lowp_policy_t *pol,
                               lowp_rounding_t rnd);

/**
 * @brief As lowp_round_fast_encode_f32, with the compiled copy named:
 * isa = "generic", "avx2", "avx512", or NULL for the best this CPU runs.
 * For tests and benchmarks, which hold every copy to the reference.
 * @return LOWP_OK; LOWP_EINVAL (unknown isa name); LOWP_EUNSUPPORTED (this
 *         CPU cannot run that copy; nothing written).
 */
int lowp_round_fast_encode_f32_isa(void *bits, const float *x, size_t n,
                                   const lowp_format_t *f, const lowp_policy_t *pol,
                                   lowp_rounding_t rnd, const char *isa);

/**
 * @brief Fast path of lowp_round_array_f32 (same arguments but isa, same
 * bits): x rounded to f, as binary32 values, on the named copy (isa as
 * lowp_round_fast_encode_f32_isa's; NULL the best). Where the fast path
 * does not apply it runs the reference loop. y may be x.
 * @return LOWP_OK; LOWP_EINVAL; LOWP_EUNSUPPORTED; or the reference
 *         loop's status.
 */
int lowp_round_fast_values_f32_isa(float *y, const float *x, size_t n,
                                   const lowp_format_t *f, const lowp_policy_t *pol,
                                   lowp_rounding_t rnd, const char *isa);

/** @brief The reference loop (scalar core per element) behind
    lowp_round_array_f32, exported for tests and benchmarks. */
int lowp_round_array_f32_ref(float *y, const float *x, size_t n,
                             const lowp_format_t *f, const lowp_policy_t *pol,
                             lowp_rounding_t rnd);

/** @brief Which compiled copy of the fast path this CPU runs: "avx512",
    "avx2" or "generic" (static storage). Chosen at run time, per call. */
const char *lowp_round_fast_isa(void);

/**
 * @brief 1 if lowp_round_array_f64's fast path (round_fast64.c) gives the
 * reference's bits for (f, pol, rnd): formats whose values are binary64
 * values with binary64 subnormals below xmin (p <= 52, emin >= -1022,
 * emax <= 1023), with subnormals, a sign and a zero: fp32, tf32, fp16,
 * bf16, the fp8/fp6/fp4 formats and specs like them; modes rne, rna, rtz,
 * rup, rdn, rto (rne and rto not for p = 1); every policy. Not: stochastic
 * rounding, fp64 itself, e8m0, formats without subnormals.
 */
int lowp_round_fast64_applies(const lowp_format_t *f, const lowp_policy_t *pol,
                              lowp_rounding_t rnd);

/**
 * @brief Fast path of lowp_round_array_f64 (same arguments but isa, same
 * bits) on the named compiled copy (isa as lowp_round_fast_encode_f32_isa's;
 * NULL the best this CPU runs). Where it does not apply it runs the
 * reference loop. y may be x.
 * @return LOWP_OK; LOWP_EINVAL (unknown isa); LOWP_EUNSUPPORTED (this CPU
 *         cannot run that copy; nothing written); or the reference's status.
 */
int lowp_round_fast_values_f64_isa(double *y, const double *x, size_t n,
                                   const lowp_format_t *f, const lowp_policy_t *pol,
                                   lowp_rounding_t rnd, const char *isa);

/** @brief Internal to lowp_round_fast_values_f64_isa: formats of p <= 22
    on the AVX2 or AVX-512 copy (use: a lowp_isa_t) through binary32 rounded
    to odd; 1 when it ran, 0 when it does not apply (round_fast.c). */
int lowp__round_f64_via32(double *y, const double *x, size_t n, const lowp_format_t *f,
                          const lowp_policy_t *pol, lowp_rounding_t rnd, int use);

/** @brief From this many bytes of output on, the AVX2 and AVX-512 loops that
    round by addition (lowp_round_array_f64 and, for p <= 22, _f32) write y
    with streaming stores, which skip the read of each cache line of y that
    a plain store makes; below it y stays in the caches for its next reader.
    8 MiB: past a core's L2 and most of its share of L3 on current x86 CPUs
    (on the shared Xeon, avx2 copy, 2^24 binary64 values: 2.6-3.4 ns a value
    with plain stores, 2.0-2.3 with these and x prefetched, against 1.6-1.9
    for a streaming copy of the same bytes; docs/orders-fast.md, round 7).
    Same bits either way. */
#define LOWP_ROUND_STREAM_BYTES ((size_t)8 << 20)

/** @brief The reference loop (scalar core per element) behind
    lowp_round_array_f64, exported for tests and benchmarks. */
int lowp_round_array_f64_ref(double *y, const double *x, size_t n,
                             const lowp_format_t *f, const lowp_policy_t *pol,
                             lowp_rounding_t rnd);

/** @brief The reference loop (scalar core per element) behind
    lowp_encode_array_f32, exported for tests and benchmarks. */
int lowp_encode_array_f32_ref(void *bits, const float *x, size_t n,
                              const lowp_format_t *f, const lowp_policy_t *pol,
                              lowp_rounding_t rnd);

#endif
