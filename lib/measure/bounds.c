/* lowp_bound -- deterministic and probabilistic rounding-error bounds */

/* Sources are cited on each function in measure/measure.h. */

#include "measure/measure.h"

#include <math.h>
#include <stddef.h>

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

/* ------------------------------------------------ variance (measure.h) */

/* Welford: the recurrence of measure.h, on x itself; returns the bound on
   |M2^ - M2| (G_n) */
static double welford_g(const double *x, size_t n, double u, double eta) {
  double mu_prev = 0, E = 0, M2 = 0, G = 0, u2 = (1 + u) * (1 + u) - 1, u3 = (1 + u) * (1 + u) * (1 + u) - 1;
  size_t i;
  for (i = 1; i <= n; i++) {
    double xi = x[i - 1], di = (double)i, a1, mu, tq, P, En, c, D;
    a1 = fabs(xi - mu_prev) + E;                 /* >= |x_i - m^_{i-1}| */
    mu = mu_prev + (xi - mu_prev) / di;          /* the exact running mean mu_i */
    tq = u2 * a1 / di + eta;                     /* |fl(fl(x_i - m^)/i) - (x_i - m^)/i| */
    P = fabs(mu) + (1 - 1 / di) * E + tq;        /* >= |m^_{i-1} + t| */
    En = (1 - 1 / di) * E + tq + u * P;          /* >= |m^_i - mu_i| */
    c = (xi - mu_prev) * (xi - mu);              /* M2's exact increment, >= 0 */
    D = u3 * a1 * (fabs(xi - mu) + En) + fabs(xi - mu_prev) * En + fabs(xi - mu) * E + E * En + eta;
    M2 += c;
    G = (1 + u) * (G + D) + u * M2;              /* >= |M2^_i - M2_i| */
    E = En;
    mu_prev = mu;
  }
  return G;
}

double lowp_bound_variance(const double *x, size_t n, lowp_var_alg_t alg, double u, double eta,
                           double mean, double var) {
  double dn = (double)n, gam = lowp_bound_gamma(dn - 1, u), A = 0, dm, b;
  size_t i;
  if (n < 1 || !(var > 0) || !isfinite(var) || !isfinite(gam) || !x) return INFINITY;
  for (i = 0; i < n; i++) A += fabs(x[i]);
  A /= dn;
  dm = (1 + u) * gam * A + u * fabs(mean) + eta; /* |m^ - m|, m^ = fl(fl(S)/n) */
  if (alg == LOWP_VAR_TWOPASS) {
    double up = pow(1 + u, 4) * (1 + gam) * (1 + dm * dm / var) - 1 + ((1 + u) * (1 + gam) + 1) * eta / var;
    double lo = 1 - pow(1 - u, 4) * (1 - gam) + 2 * eta / var;
    b = up > lo ? up : lo;
  } else if (alg == LOWP_VAR_ONEPASS) {
    double Q = 0, eq, ea, eb;
    for (i = 0; i < n; i++) Q += x[i] * x[i];
    eq = ((1 + u) * (1 + gam) - 1) * Q + (1 + gam) * dn * eta;  /* |Q^ - Q| */
    ea = (1 + u) * eq / dn + u * Q / dn + eta;                  /* |fl(Q^/n) - Q/n| */
    eb = (1 + u) * (2 * fabs(mean) * dm + dm * dm) + u * mean * mean + eta; /* |fl(m^2) - m^2| */
    b = (1 + u) * (ea + eb) / var + u;
  } else if (alg == LOWP_VAR_WELFORD) {
    b = ((1 + u) * welford_g(x, n, u, eta) / dn + eta) / var + u;
  } else {
    return INFINITY;
  }
  return b * (1 + 0x1p-20);
}
