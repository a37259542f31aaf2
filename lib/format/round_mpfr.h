/* lowp_round_mpfr -- round an MPFR number to a lowp format in one step */
#ifndef LOWP_ROUND_MPFR_H
#define LOWP_ROUND_MPFR_H

#include <mpfr.h>

#include "format/format.h"

/**
 * @brief Round x (any precision, any exponent) to f, correctly, once.
 * The top 64 bits of x and a sticky bit for the rest enter lowp_round_sig,
 * so there is no double rounding whatever x's precision.
 * @param[in] pol NULL for defaults; SR draws index pol->sr_offset.
 * @return the ternary value, as lowp_round_f64.
 */
int lowp_round_mpfr(double *y, mpfr_srcptr x, const lowp_format_t *f,
                    const lowp_policy_t *pol, lowp_rounding_t rnd);

/**
 * @brief Turn a result truncated toward zero (ternary tern from an MPFR_RNDZ
 * operation) into the result rounded to odd at x's precision: if inexact and
 * the last bit is 0, step one ulp away from zero. Exact results, zeros,
 * infinities and NaN are left alone.
 */
void lowp_mpfr_make_odd(mpfr_ptr x, int tern);

/**
 * @brief Parse a real number (decimal "1e-6", hex float "0x1.8p-3", "inf",
 * "nan", optional sign) into x, rounded to odd at x's precision.
 *
 * Rounding to odd at precision P >= p + 2 and then rounding to p bits in any
 * mode gives the correctly rounded result of the exact decimal (Boldo &
 * Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms
 * using rounding to odd", IEEE TC 2008), so with P = 128 every lowp format
 * (p <= 53) and every mode rounds the decimal correctly in one step.
 * The syntax, and what happens beyond MPFR's exponent range (the number
 * rounds as its exact value would: no error), are format/number.h's.
 * @return LOWP_OK, or LOWP_EPARSE if the text is not entirely a number.
 */
int lowp_mpfr_parse(mpfr_ptr x, const char *text);

#endif
