/* lowp_measure_normwise -- the normwise relative error of a computed array against the exact one */
#ifndef LOWP_MEASURE_NORMWISE_H
#define LOWP_MEASURE_NORMWISE_H

#include <stddef.h>

/**
 * @brief ||c - x||_2 / ||x||_2 over c[0..n), x[0..n) (||c - x||_2 when x is
 * all zeros): one number for a whole tensor, where lowp_measure_errors
 * (measure.h) gives the worst and mean element. Sums of squares in
 * binary64, left to right; +inf when they are not finite (an overflow, an
 * infinity or a NaN in c or x).
 */
double lowp_measure_rel_norm(const double *c, const double *x, size_t n);

#endif
