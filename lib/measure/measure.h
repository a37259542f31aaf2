/* lowp_measure -- error metrics, summary statistics and rounding-error bounds */
#ifndef LOWP_MEASURE_H
#define LOWP_MEASURE_H

#include <stddef.h>

#include "format/format.h"

/* ------------------------------------------------------------------ types */

/**
 * @brief Errors of a computed array against the exact one.
 *
 * Per element, with c computed and x exact (both binary64):
 *  abs = |c - x|; rel = abs / |x| (0 if c == x, +inf if x == 0 != c);
 *  ulp = abs / ulp_f(x), ulp of f at x (lowp_ulp: 2^(max(e, emin) - p + 1)),
 *  on c's side of x (lowp_ulp_toward: half of it for |c| < |x| = 2^e, where
 *  f's values are spaced half as far: so ulp <= 0.5 means c is x rounded to
 *  nearest, powers of two included);
 *  bwd = abs / r with r = (|A||B|)_ij given by the caller, the componentwise
 *  backward error of a product (0 if c == x, +inf if r == 0 != abs).
 * |c - x| is evaluated in binary64: relative error at most 2^-53 in the
 * reported error, which does not matter for a measurement.
 * Elements where both are NaN, or both the same infinity, agree (error 0).
 * Elements where exactly one is NaN, or infinities differ, or one is
 * infinite, are counted in n_special and left out of max and mean.
 */
typedef struct {
  size_t n;            /**< elements compared */
  size_t n_special;    /**< NaN/inf disagreements (left out of the rest) */
  size_t n_exact;      /**< elements with c == x (bitwise or both NaN) */
  double max_abs, mean_abs;
  size_t argmax_abs;   /**< index of the first element attaining max_abs */
  double max_rel, mean_rel;
  size_t argmax_rel;
  double max_ulp, mean_ulp;
  size_t argmax_ulp;
  double max_bwd;      /**< NaN when no r was given */
  size_t argmax_bwd;
} lowp_errors_t;

/** @brief Summary statistics of an array (NaNs counted and left out). */
typedef struct {
  size_t n;        /**< values used (non-NaN) */
  size_t n_nan;
  double min, max; /**< NaN when n == 0 */
  size_t argmax;   /**< index (in the input) of the first maximum */
  double mean;
  double median;   /**< middle value, or the mean of the two middle ones */
  double p99;      /**< nearest-rank 99th percentile: sorted[ceil(0.99 n) - 1] */
} lowp_stats_t;

/* ------------------------------------------------------------- public API */

/**
 * @brief Compare computed c[0..n) with exact x[0..n).
 * @param[in] r  (|A||B|) per element for the backward error, or NULL
 * @param[in] f  the format whose ulps are counted (the output format)
 * @return LOWP_OK; LOWP_EINVAL (NULL e, c or x with n > 0); LOWP_EFORMAT.
 */
int lowp_measure_errors(lowp_errors_t *e, const double *c, const double *x,
                        const double *r, size_t n, const lowp_format_t *f);

/**
 * @brief The ulp of f that an error of c against the exact value x + lo is
 * counted in (lo: what x, a rounding of it, leaves out; 0 when x is exact):
 * lowp_ulp_toward(x, c) when lo is 0, else the ulp of the binade on lo's side
 * of x (x + lo is then no double, and no power of two). The error in ulps is
 * |(c - x) - lo| / it.
 */
double lowp_measure_ulp_unit(double c, double x, double lo, const lowp_format_t *f);

/**
 * @brief lowp_measure_errors against exact values x[i] + xlo[i]: xlo[i] the
 * binary64 rounding of what x[i] (itself a rounding) leaves out, 0 where x[i]
 * is exact; xlo may be NULL (all 0). For an output format as wide as binary64
 * the exact value rounded to it hides up to half an ulp of error, which xlo
 * restores: |c - x - xlo| in ulps at that value, on its side of x[i].
 */
int lowp_measure_errors_lo(lowp_errors_t *e, const double *c, const double *x, const double *xlo,
                           const double *r, size_t n, const lowp_format_t *f);

/**
 * @brief Statistics of x[0..n) (x is not modified; a sorted copy is made).
 * @return LOWP_OK, LOWP_EINVAL, LOWP_ENOMEM.
 */
int lowp_measure_stats(lowp_stats_t *s, const double *x, size_t n);

/* ------------------------------------------------------------ line fits */

/**
 * @brief A least-squares line y = intercept + slope x (lib/measure/fit.c).
 * half: half-width of the two-sided confidence interval of the slope at
 * `level` from the residuals, t_{(1+level)/2, n-2} se; NaN with n < 3.
 * slope, intercept, rss NaN with n < 2 or all x equal.
 */
typedef struct {
  size_t n;         /**< points fitted */
  double slope, intercept;
  double se;        /**< standard error of the slope, sqrt(rss / (n-2) / Sxx) */
  double half;      /**< confidence half-width of the slope */
  double level;     /**< confidence level, e.g. 0.95 */
  double rss;       /**< residual sum of squares */
} lowp_fit_t;

/**
 * @brief Two segments against one line: brk > 0 when the best split
 * [0, brk) / [brk, n) (each at least minseg points) beats the single line by
 * the F test at alpha / (number of candidate splits); then left and right
 * are its fits. all: the single line, always.
 */
typedef struct {
  size_t brk;              /**< 0: one line suffices; else first index of the right segment */
  double F, fcrit;         /**< the F statistic of the best split and its critical value (NaN: no test) */
  lowp_fit_t all, left, right;
} lowp_fit_break_t;

/** @brief Student's t distribution function, nu >= 1 degrees of freedom (closed form). */
double lowp_t_cdf(double t, unsigned nu);
/** @brief Its quantile (bisection): P(T <= q) = p, 0 < p < 1; NaN otherwise. */
double lowp_t_quantile(double p, unsigned nu);
/** @brief Quantile of the F(2, d2) distribution (closed form); NaN for p outside [0, 1). */
double lowp_f2_quantile(double p, unsigned d2);

/**
 * @brief Least-squares line of y on x[0..n) with the slope's confidence
 * interval at level (0 < level < 1); w: weights (> 0, finite; the residual
 * of point i has variance sigma^2 / w[i], e.g. w = the trials averaged into
 * y[i]) or NULL for ordinary least squares. rss is the weighted sum.
 * @return LOWP_OK; LOWP_EINVAL (NULL pointers, level outside (0, 1), a bad weight).
 */
int lowp_fit_line(lowp_fit_t *f, const double *x, const double *y, const double *w, size_t n, double level);

/**
 * @brief The two-segment test above (x increasing, weights w or NULL as in
 * lowp_fit_line); minseg >= 2, alpha the false-break probability (e.g.
 * 0.01), level the confidence level of the fits.
 * @return LOWP_OK; LOWP_EINVAL.
 */
int lowp_fit_break(lowp_fit_break_t *r, const double *x, const double *y, const double *w, size_t n,
                   size_t minseg, double level, double alpha);

/**
 * @brief Growth exponent a of y ~ x^a: the least-squares slope of log y
 * against log x over the points with x > 0 and finite y > 0 (the fit every
 * experiment states as "grows like x^a"). NaN if fewer than 2 such points.
 */
double lowp_fit_loglog_slope(const double *x, const double *y, size_t n);

/* ---------------------------------------------------------------- bounds */

/**
 * @brief gamma_n = n u / (1 - n u) (Higham, Accuracy and Stability of
 * Numerical Algorithms, 2nd ed., SIAM 2002, Lemma 3.1). For a dot product
 * of length n by recursive summation, |fl(x'y) - x'y| <= gamma_n |x|'|y|
 * (ibid. eq. (3.5)). +inf when n u >= 1 (no bound).
 */
double lowp_bound_gamma(double n, double u);

/**
 * @brief The probabilistic constant of Higham & Mary, "A new approach to
 * probabilistic rounding error analysis", SIAM J. Sci. Comput. 41(5),
 * A2815-A2835, 2019, Thm 2.4: gamma~_n(lambda) = exp(lambda sqrt(n) u +
 * n u^2 / (1 - u)) - 1 = lambda sqrt(n) u + O(u^2).
 */
double lowp_bound_gamma_prob(double n, double u, double lambda);

/**
 * @brief Probability with which the inner-product bound
 * |fl(x'y) - x'y| <= gamma~_n(lambda) |x|'|y| holds when the rounding
 * errors are independent, mean-zero random variables (Higham & Mary 2019,
 * Thm 3.1): Q(lambda, n) = 1 - n (1 - P(lambda)) with
 * P(lambda) = 1 - 2 exp(-lambda^2 (1 - u)^2 / 2), i.e.
 * 1 - 2 n exp(-lambda^2 (1-u)^2 / 2), clipped below at 0.
 */
double lowp_bound_prob_probability(double n, double u, double lambda);

/** @brief The lambda for which lowp_bound_prob_probability is prob
    (0 < prob < 1): lambda = sqrt(2 log(2 n / (1 - prob))) / (1 - u). */
double lowp_bound_prob_lambda(double n, double u, double prob);

/**
 * @brief Blocked summation with block size b: each block is summed
 * recursively (b - 1 additions), then the ceil(n/b) block sums are
 * (ceil(n/b) - 1 additions), so no term sees more than
 * b + ceil(n/b) - 2 roundings and the bound is gamma_{b + ceil(n/b) - 2}
 * = (b + n/b - 2) u + O(u^2) (Higham 2002, Sec. 4.2; Blanchard, Higham &
 * Mary, "A class of fast and accurate summation algorithms", SIAM J. Sci.
 * Comput. 42(3), A1541-A1557, 2020, who quote it to first order as
 * (b + n/b) u, the same up to O(u)).
 */
double lowp_bound_blocked(double n, double b, double u);

/**
 * @brief Pairwise (cascade) summation: gamma_{ceil(log2 n)} (Higham 2002,
 * Sec. 4.2, eq. (4.6)). 0 for n <= 1.
 */
double lowp_bound_pairwise(double n, double u);

/** @brief Variance algorithms, as the registry kernel layernorm computes them
    (kernels/cpu/norm_kernel.c, variant=). */
typedef enum {
  LOWP_VAR_ONEPASS = 0, /**< S = sum x_i, Q = sum fl(x_i^2), fl(fl(Q/n) - fl(fl(S/n)^2)), not clamped */
  LOWP_VAR_TWOPASS = 1, /**< m = fl(S/n), fl(sum fl(fl(x_i - m)^2) / n) */
  LOWP_VAR_WELFORD = 2  /**< d = x_i - m; m += d/i; M2 += d (x_i - m); fl(M2/n) */
} lowp_var_alg_t;

/**
 * @brief A rigorous bound on the relative error |v - V| / V of the
 * population variance v of x[0..n) computed by algorithm alg, sums left to
 * right, with every operation rounded to nearest in a format of unit
 * roundoff u whose results below the normal range have absolute error at
 * most eta (half the subnormal spacing; additions and subtractions are then
 * exact): fl(a op b) = (a op b)(1 + d) + e, |d| <= u, |e| <= eta, d e = 0
 * (Higham 2002, Sec. 2.1 and eq. (2.8)). mean and var > 0 are the exact mean
 * and population variance V of x. It holds wherever nothing overflowed (a
 * finite result). Derivations (forward error analysis of each step, with
 * gamma = gamma_{n-1}(u), A = mean |x_i|, dm = (1+u) gamma A + u |m| + eta
 * the bound on the error of the computed mean, kappa^2 = 1 + m^2/V):
 *   two-pass: sum (x_i - m^)^2 / n = V + (m^ - m)^2, so the relative error is
 *     at most (1+u)^4 (1+gamma)(1 + dm^2/V) - 1 plus eta terms, i.e.
 *     ~ (n+3) u + n^2 u^2 kappa^2: the two-pass bound of Chan, Golub &
 *     LeVeque, "Algorithms for computing the sample variance: analysis and
 *     recommendations", Am. Stat. 37(3), 242-247, 1983 (their n u +
 *     n^2 u^2 kappa^2), Higham 2002, Sec. 1.9 and Problem 1.10;
 *   one-pass: fl(Q/n) and fl(m^2) each carry errors ~ (n+1) u Q/n and
 *     ~ 2 dm |m| + u m^2, and Q/n = kappa^2 V: ~ (2n + 3) u kappa^2 (Chan,
 *     Golub & LeVeque 1983: n u kappa^2, the cancellation of the textbook
 *     formula);
 *   Welford: a recurrence over i of bounds E_i on the running mean's error
 *     (|m^_i - mu_i| <= (1 - 1/i) E_{i-1} + ((1+u)^2 - 1) a_i / i + eta + u P_i)
 *     and G_i on M2's (each increment's error from the product's three
 *     roundings and the two means' errors), evaluated on x itself: ~ n u
 *     kappa to first order, as Chan, Golub & LeVeque 1983 give for the
 *     updating algorithms (Welford 1962; West 1979).
 * The bound is evaluated in binary64; its own rounding errors (relative
 * O(n 2^-53)) are covered by a final factor 1 + 2^-20.
 * @return the bound, or +inf where none applies (n < 1, n u >= 1, V <= 0 or
 *         not finite, an unknown alg).
 */
double lowp_bound_variance(const double *x, size_t n, lowp_var_alg_t alg, double u, double eta,
                           double mean, double var);

#endif
