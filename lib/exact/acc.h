/* lowp_acc -- exact accumulator: sums of binary64 values and products, no rounding */
#ifndef LOWP_ACC_H
#define LOWP_ACC_H

#include <stddef.h>
#include <stdint.h>

#include <mpfr.h>

#include "format/format.h"

/* ------------------------------------------------------------------ types */

/** @brief Number of 32-bit digits of the fixed-point window. */
#define LOWP_ACC_LIMBS 136
/** @brief Weight (log2) of bit 0 of limb 0: a multiple of 32 below 2^-2148,
    the last bit of a product of two binary64 subnormals (2^-1074 squared). */
#define LOWP_ACC_LSB (-2176)

/**
 * @brief A superaccumulator (Kulisch's long accumulator, in carry-save form).
 *
 * The value is sum_i limb[i] * 2^(LOWP_ACC_LSB + 32 i). The window
 * [2^-2176, 2^2176) holds every product of two binary64 values (exponents
 * -2148 .. 2047) and any sum of up to 2^64 of them, so adding never rounds.
 * Each limb is an int64 that receives digits below 2^33 per call; carries are
 * propagated every 2^29 calls (and before reading), so limbs never overflow.
 * After propagation the limbs below the top one lie in [0, 2^32) and the
 * top one carries the sign, so reading a sum that touched few limbs costs
 * few steps.
 *
 * IEEE special values are kept aside: NaN inputs, inf * 0 and (+inf) + (-inf)
 * make the result NaN; otherwise any infinite term makes it that infinity.
 * The sign of an exact zero follows mpfr_sum (IEEE 754 6.3 extended to n
 * terms): the common sign if every term was a zero of one sign, otherwise -0
 * when rounding toward -inf and +0 in every other mode.
 *
 * A plain struct (about 1.1 KB) so callers can keep one per thread on the
 * stack or in an array; no allocation anywhere.
 */
typedef struct lowp_acc_s {
  int64_t limb[LOWP_ACC_LIMBS];
  int lo, hi;          /**< limbs touched since the last normalisation: [lo, hi] */
  uint32_t pending;    /**< additions since the last carry propagation */
  unsigned char nan;   /**< a NaN term, inf*0, or +inf + -inf was seen */
  unsigned char pinf;  /**< a +inf term was seen */
  unsigned char ninf;  /**< a -inf term was seen */
  signed char zsign;   /**< 0 no term yet; +1 all terms +0; -1 all -0; 2 otherwise */
} lowp_acc_t;

/* ------------------------------------------------------------- public API */

/** @brief Make a the empty sum (value +0, no terms). */
void lowp_acc_init(lowp_acc_t *a);

/** @brief Make an initialised a the empty sum again, in time proportional
    to the limbs it touched (lowp_acc_init clears all of them). */
void lowp_acc_reset(lowp_acc_t *a);

/** @brief Add the binary64 value x exactly (any value, including subnormal,
    infinite and NaN). */
void lowp_acc_add(lowp_acc_t *a, double x);

/** @brief Add the exact product x*y (no rounding of the product: the 106-bit
    product of the two significands enters the window). */
void lowp_acc_add_prod(lowp_acc_t *a, double x, double y);

/**
 * @brief Add (-1)^neg * m * 2^e exactly, for an integer m < 2^64 and
 * -2176 <= e <= 2176 - 96 (the caller's responsibility; the fast GEMM path
 * flushes its per-exponent bins through this).
 */
void lowp_acc_add_int(lowp_acc_t *a, uint64_t m, int e, int neg);

/** @brief Record a term's sign for the exact-zero rule without adding it
    (for callers that add values through lowp_acc_add_int). */
void lowp_acc_note_term(lowp_acc_t *a, double term);

/**
 * @brief Round the exact value to f, correctly, once.
 * @param[out] y     the rounded value (NaN/inf per IEEE and f's policy)
 * @param[in]  index stochastic-rounding element index (pol->sr_offset is not
 *                   added: pass the index you want drawn)
 * @return ternary as lowp_round_sig: <0 if *y < exact, 0 exact, >0 if above;
 *         INT32_MIN for an invalid mode. a is normalised (its value unchanged).
 */
int lowp_acc_round(double *y, lowp_acc_t *a, const lowp_format_t *f,
                   const lowp_policy_t *pol, lowp_rounding_t rnd, uint64_t index);

/**
 * @brief The exact value as an MPFR number: x's precision is set to what the
 * value needs (at most about 4400 bits), so the copy is exact. NaN and
 * infinities as in lowp_acc_round; an exact zero gets the sign rule above
 * for round-to-nearest. x must have been initialised with mpfr_init.
 */
void lowp_acc_get_mpfr(mpfr_ptr x, lowp_acc_t *a);

/** @brief 1 if the finite part is exactly zero and no NaN/inf was seen
    (normalises a; its value is unchanged). */
int lowp_acc_is_zero(lowp_acc_t *a);

/** @brief 1 if no term was added yet. */
int lowp_acc_empty(const lowp_acc_t *a);

#endif
