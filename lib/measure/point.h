/* lowp_measure_point -- one exact value (a number read from text), rounded to formats and measured */
#ifndef LOWP_MEASURE_POINT_H
#define LOWP_MEASURE_POINT_H

#include <mpfr.h>

#include "format/format.h"

/**
 * @brief Errors of y (a value of f, e.g. a conversion's result) against the
 * exact x, which need not be a binary64 number (a decimal input such as 0.1
 * read by lowp_mpfr_parse): abs = |x - y|, rel = abs / |x|, ulp = abs /
 * ulp_f(x) with ulp_f(x) = 2^(max(e, emin) - p + 1) at the exact value, as
 * lowp_measure_errors counts them (measure.h). Each is formed in MPFR at 64
 * bits and rounded to nearest binary64 (a reported error, not a reference).
 * Special values: NaN in y or x -> all NaN; an infinity on either side ->
 * 0 when both are the same infinity, else +inf; x = 0 -> rel 0 if y = 0,
 * else +inf.
 */
void lowp_measure_point_errors(double *abs_err, double *rel_err, double *ulp_err, double y,
                               mpfr_srcptr x, const lowp_format_t *f);

/*
 * lowp_point_t: one exact input of a conversion (lowp convert), opaque to
 * its user. It holds the number a text means (format/number.h's grammar)
 * or a binary64, at LOWP_POINT_PREC bits rounded to odd, which rounds
 * correctly to every lowp format (p <= 53) in every mode in one step
 * (lowp_mpfr_parse in format/round_mpfr.h says why). A new point is +0.
 */
typedef struct lowp_point lowp_point_t;

/** Bits an exact point is held in (rounded to odd): at least 53 + 2. */
#define LOWP_POINT_PREC 128

/** @brief A new point, +0. @return LOWP_OK or LOWP_ENOMEM (*x = NULL). */
int lowp_point_new(lowp_point_t **x);

/** @brief Free a point (NULL is allowed). */
void lowp_point_free(lowp_point_t *x);

/**
 * @brief Set x to the number text means, exactly (rounded to odd at
 * LOWP_POINT_PREC bits; decimal, hex float, inf, nan, with a sign).
 * @return LOWP_OK, or LOWP_EPARSE if text is not entirely a number (x is
 * then unspecified).
 */
int lowp_point_parse(lowp_point_t *x, const char *text);

/** @brief Set x to the binary64 v exactly (its sign, NaN and infinities too). */
void lowp_point_set_f64(lowp_point_t *x, double v);

/**
 * @brief Round x to f once, in mode rnd under pol (NULL: defaults; SR
 * draws index pol->sr_offset), as lowp_round_mpfr.
 * @return the ternary value: > 0 when *y > x, < 0 when *y < x, 0 when exact.
 */
int lowp_point_round(double *y, const lowp_point_t *x, const lowp_format_t *f,
                     const lowp_policy_t *pol, lowp_rounding_t rnd);

/**
 * @brief Whether x, rounded in mode rnd to f's precision with no upper
 * exponent limit (f widened to binary64's emax, with infinities and an IEEE
 * overflow; pol otherwise as given, the same SR draw), lies beyond f's
 * largest finite value: then a result of +-xmax was clamped by the overflow
 * policy, not reached by rounding. 0 for a NaN x.
 */
int lowp_point_beyond_max(const lowp_point_t *x, const lowp_format_t *f,
                          const lowp_policy_t *pol, lowp_rounding_t rnd);

/** @brief lowp_measure_point_errors of y against the point x. */
void lowp_point_errors(double *abs_err, double *rel_err, double *ulp_err, double y,
                       const lowp_point_t *x, const lowp_format_t *f);

#endif
