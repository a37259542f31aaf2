/* lowp_number -- the one syntax of a real or integer number in lowp's input */
#ifndef LOWP_NUMBER_H
#define LOWP_NUMBER_H

#include <stdint.h>

/*
 * Every number lowp reads from a command line, a parameter or a spec follows
 * this grammar (nothing else: no blanks, no "0b101", no MPFR "1@3", no
 * "nan(...)", no octal):
 *
 *   real    := [+-] ( decimal | hex | "inf" | "infinity" | "nan" )   (names in any case)
 *   decimal := digits ["." [digits]] [exp10] | "." digits [exp10]
 *   exp10   := ("e"|"E") [+-] digits
 *   hex     := ("0x"|"0X") hexdigits ["." [hexdigits]] [exp2] | ("0x"|"0X") "." hexdigits [exp2]
 *   exp2    := ("p"|"P") [+-] digits
 *   integer := [+-] ( digits | ("0x"|"0X") hexdigits )       (leading zeros are decimal)
 *
 * Overflow and underflow follow one rule in both directions: the number
 * means its exact value, and that value is rounded like any other. Read as
 * binary64 (lowp_parse_f64) that is IEEE 754 round to nearest: 1e999999999
 * is +inf, 1e-999999999 is +0 (and 1e-320 a subnormal). Read through MPFR
 * for conversion (lowp_mpfr_parse), a value beyond MPFR's exponent range
 * stands in as the largest (or smallest) MPFR number of its sign, which is
 * beyond every lowp format, so it rounds as the exact value would: by the
 * conversion's mode and overflow policy (to inf or max; to 0 or the
 * smallest subnormal). Neither is an error.
 */

/**
 * @brief Check text against the real-number grammar above.
 * @return LOWP_OK, or LOWP_EPARSE (also for NULL or "").
 */
int lowp_number_syntax(const char *text);

/**
 * @brief Parse a real number into binary64, rounded to nearest (glibc strtod
 * is correctly rounded); overflow gives +-inf, underflow +-0 or a subnormal.
 * @param[out] x  the value (untouched on error)
 * @return LOWP_OK, or LOWP_EPARSE if text does not follow the grammar.
 */
int lowp_parse_f64(double *x, const char *text);

/**
 * @brief Parse an integer (decimal, or 0x hex) in [lo, hi].
 * @param[out] v  the value (untouched on error)
 * @return LOWP_OK; LOWP_EPARSE if text does not follow the grammar;
 *         LOWP_ERANGE if the integer is outside [lo, hi] (however many digits).
 */
int lowp_parse_int(long long *v, const char *text, long long lo, long long hi);

/**
 * @brief Parse an unsigned 64-bit integer (decimal, or 0x hex; no sign), for
 * bit patterns that fill all 64 bits (fp64's 0xfff0000000000000).
 * @return LOWP_OK; LOWP_EPARSE (not the grammar, or a sign); LOWP_ERANGE (>= 2^64).
 */
int lowp_parse_u64(uint64_t *v, const char *text);

/**
 * @brief Parse a percentage: decimal digits with an optional fraction and a
 * '%' right after them ("5%", "0.1%", "100%", ".5%"), nothing else (no
 * blank, sign, exponent, hex, inf or nan).
 * @param[out] x  the number before the '%' (5 for "5%"; untouched on error)
 * @return LOWP_OK, or LOWP_EPARSE.
 */
int lowp_parse_percent(double *x, const char *text);

#endif
