/* lowp_measure_point -- the abs/rel/ulp error of one value against an exact value held in MPFR */
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

#endif
