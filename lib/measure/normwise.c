/* lowp_measure_normwise -- the normwise relative error of a computed array against the exact one */

#include "measure/normwise.h"

#include <math.h>

double lowp_measure_rel_norm(const double *c, const double *x, size_t n) {
  double e = 0, t = 0;
  size_t i;
  for (i = 0; i < n; i++) { e += (c[i] - x[i]) * (c[i] - x[i]); t += x[i] * x[i]; }
  if (!isfinite(e)) return INFINITY;
  return t > 0 ? sqrt(e / t) : sqrt(e);
}
