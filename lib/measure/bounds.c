/* lowp_bound -- deterministic and probabilistic rounding-error bounds */

/* Sources are cited on each function in measure/measure.h. */

#include "measure/measure.h"

#include <math.h>

/* ----------------------------------------------------------- public API */

double lowp_bound_gamma(double n, double u) {
  double nu = n * u;
  return nu < 1 ? nu / (1 - nu) : INFINITY; /* Higham 2002, Lemma 3.1 */
}

double lowp_bound_gamma_prob(double n, double u, double lambda) {
  /* Higham & Mary 2019, Thm 2.4; expm1 keeps the O(u) term accurate */
  return expm1(lambda * sqrt(n) * u + n * u * u / (1 - u));
}

double lowp_bound_prob_probability(double n, double u, double lambda) {
  /* Higham & Mary 2019, Thm 3.1: Q = 1 - n (1 - P(lambda)) */
  double q = 1 - 2 * n * exp(-lambda * lambda * (1 - u) * (1 - u) / 2);
  return q > 0 ? q : 0;
}

double lowp_bound_prob_lambda(double n, double u, double prob) {
  return sqrt(2 * log(2 * n / (1 - prob))) / (1 - u);
}

double lowp_bound_blocked(double n, double b, double u) {
  if (b < 1) b = 1;
  if (b > n) b = n;
  return lowp_bound_gamma(b + ceil(n / b) - 2, u);
}

double lowp_bound_pairwise(double n, double u) {
  return n <= 1 ? 0 : lowp_bound_gamma(ceil(log2(n)), u);
}
