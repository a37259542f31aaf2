/* lowp_fit -- least-squares lines with confidence intervals, and a two-segment (breakpoint) test */

/*
 * Weighted least squares of y on x (Draper & Smith, Applied Regression
 * Analysis, 3rd ed., 1998, ch. 1, 3 and 9.2), weights w_i > 0 (all 1:
 * ordinary least squares), for residuals of variance sigma^2 / w_i (e.g.
 * y_i a mean of w_i independent trials): with weighted means xbar, ybar,
 * Sxx = sum w (x - xbar)^2, Sxy = sum w (x - xbar)(y - ybar): slope
 * b = Sxy / Sxx, intercept a = ybar - b xbar, RSS = sum w r^2, standard
 * error of the slope se = sqrt(RSS / (n - 2) / Sxx), and the two-sided
 * confidence interval b +- t_{(1 + level)/2, n-2} se (normal, independent
 * residuals).
 *
 * Student's t distribution function for integer degrees of freedom nu in
 * closed form (Abramowitz & Stegun, Handbook of Mathematical Functions,
 * 26.7.3 and 26.7.4), with theta = atan(t / sqrt(nu)):
 *   A(t|nu) = P(|T| <= t) =
 *     nu = 1:       2 theta / pi
 *     nu odd > 1:   (2/pi) (theta + sin theta (cos theta + (2/3) cos^3 theta
 *                   + ... + (2 4 ... (nu-3)) / (1 3 ... (nu-2)) cos^(nu-2) theta))
 *     nu even:      sin theta (1 + (1/2) cos^2 theta + (1 3)/(2 4) cos^4 theta
 *                   + ... + (1 3 ... (nu-3)) / (2 4 ... (nu-2)) cos^(nu-2) theta)
 * The quantile is found by bisection on that function (monotone in t).
 *
 * Two segments: for each breakpoint b with at least minseg points on each
 * side, separate lines on [0, b) and [b, n); the b with the smallest total
 * RSS2 is compared with the single line (RSS1) by the F statistic
 *   F = ((RSS1 - RSS2) / 2) / (RSS2 / (n - 4))
 * (two more parameters; Draper & Smith ch. 6, extra sum of squares). For a
 * fixed b, F ~ F(2, n - 4) under one line, whose survival function has the
 * closed form P(F > f) = (1 + 2 f / d2)^(-d2 / 2); since b is chosen as
 * the best of c candidates, the test is made at alpha / c (Bonferroni).
 */

#include "measure/measure.h"

#include <math.h>
#include <string.h>

#include "status.h"

/* ------------------------------------------------------ private helpers */

/* A(t|nu) = P(|T| <= t), t >= 0 (A&S 26.7.3-4) */
static double t_two_sided(double t, unsigned nu) {
  const double pi = 3.14159265358979323846;
  double th = atan(t / sqrt((double)nu)), s = sin(th), c = cos(th), c2 = c * c, term, sum;
  unsigned j;
  if (nu % 2) {
    if (nu == 1) return 2 * th / pi;
    term = c; /* j = 1: cos theta; then times (j+1)/(j+2) cos^2 */
    sum = c;
    for (j = 1; j + 2 <= nu - 2; j += 2) {
      term *= c2 * (double)(j + 1) / (double)(j + 2);
      sum += term;
    }
    return 2 / pi * (th + s * sum);
  }
  term = 1; /* j = 0: 1; then times (j+1)/(j+2) cos^2 */
  sum = 1;
  for (j = 0; j + 2 <= nu - 2; j += 2) {
    term *= c2 * (double)(j + 1) / (double)(j + 2);
    sum += term;
  }
  return s * sum;
}

#define W(i) (w ? w[i] : 1.0)

static void line(lowp_fit_t *f, const double *x, const double *y, const double *w, size_t n, double level) {
  double xb = 0, yb = 0, sw = 0, sxx = 0, sxy = 0, rss = 0;
  size_t i;
  memset(f, 0, sizeof *f);
  f->n = n;
  f->level = level;
  f->slope = f->intercept = f->se = f->half = f->rss = NAN;
  if (n < 2) return;
  for (i = 0; i < n; i++) { xb += W(i) * x[i]; yb += W(i) * y[i]; sw += W(i); }
  xb /= sw;
  yb /= sw;
  for (i = 0; i < n; i++) {
    sxx += W(i) * (x[i] - xb) * (x[i] - xb);
    sxy += W(i) * (x[i] - xb) * (y[i] - yb);
  }
  if (!(sxx > 0)) return;
  f->slope = sxy / sxx;
  f->intercept = yb - f->slope * xb;
  for (i = 0; i < n; i++) {
    double r = y[i] - f->intercept - f->slope * x[i];
    rss += W(i) * r * r;
  }
  f->rss = rss;
  if (n < 3) return;
  f->se = sqrt(rss / (double)(n - 2) / sxx);
  f->half = lowp_t_quantile(0.5 + level / 2, (unsigned)(n - 2)) * f->se;
}

/* ----------------------------------------------------------- public API */

double lowp_t_cdf(double t, unsigned nu) {
  double a;
  if (nu == 0 || isnan(t)) return NAN;
  if (isinf(t)) return t > 0 ? 1 : 0;
  a = t_two_sided(fabs(t), nu);
  return t >= 0 ? 0.5 + a / 2 : 0.5 - a / 2;
}

double lowp_t_quantile(double p, unsigned nu) {
  double lo = 0, hi = 1, mid;
  int it;
  if (nu == 0 || !(p > 0 && p < 1)) return NAN;
  if (p < 0.5) return -lowp_t_quantile(1 - p, nu);
  while (lowp_t_cdf(hi, nu) < p) hi *= 2; /* nu = 1, p = 1 - 1e-12: hi ~ 3e11 */
  for (it = 0; it < 200 && hi - lo > 1e-15 * hi; it++) {
    mid = 0.5 * (lo + hi);
    if (lowp_t_cdf(mid, nu) < p) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

double lowp_f2_quantile(double p, unsigned d2) {
  if (d2 == 0 || !(p >= 0 && p < 1)) return NAN;
  return (double)d2 / 2 * (pow(1 - p, -2.0 / (double)d2) - 1);
}

static int bad_weights(const double *w, size_t n) {
  size_t i;
  for (i = 0; w && i < n; i++)
    if (!(w[i] > 0) || isinf(w[i])) return 1;
  return 0;
}

int lowp_fit_line(lowp_fit_t *f, const double *x, const double *y, const double *w, size_t n, double level) {
  if (!f || (n && (!x || !y)) || !(level > 0 && level < 1) || bad_weights(w, n)) return LOWP_EINVAL;
  line(f, x, y, w, n, level);
  return LOWP_OK;
}

int lowp_fit_break(lowp_fit_break_t *r, const double *x, const double *y, const double *w, size_t n,
                   size_t minseg, double level, double alpha) {
  size_t b, best = 0, cand = 0;
  double rss2 = INFINITY, sst = 0, yb = 0, sw = 0;
  if (!r || (n && (!x || !y)) || minseg < 2 || !(level > 0 && level < 1) || !(alpha > 0 && alpha < 1) ||
      bad_weights(w, n))
    return LOWP_EINVAL;
  memset(r, 0, sizeof *r);
  r->F = r->fcrit = NAN;
  line(&r->all, x, y, w, n, level);
  if (n < 2 * minseg || n < 5) return LOWP_OK; /* no room for two segments and a residual */
  for (b = minseg; b + minseg <= n; b++) {
    lowp_fit_t lf, rf;
    line(&lf, x, y, w, b, level);
    line(&rf, x + b, y + b, w ? w + b : NULL, n - b, level);
    cand++;
    if (isfinite(lf.rss) && isfinite(rf.rss) && lf.rss + rf.rss < rss2) {
      rss2 = lf.rss + rf.rss;
      best = b;
    }
  }
  if (!best || !isfinite(r->all.rss)) return LOWP_OK;
  for (b = 0; b < n; b++) { yb += W(b) * y[b]; sw += W(b); }
  yb /= sw;
  for (b = 0; b < n; b++) sst += W(b) * (y[b] - yb) * (y[b] - yb);
  r->fcrit = lowp_f2_quantile(1 - alpha / (double)cand, (unsigned)(n - 4));
  /* both fits exact to rounding (relative to the spread of y): no evidence either way */
  if (r->all.rss <= 1e-24 * (sst > 0 ? sst : 1)) { r->F = 0; return LOWP_OK; }
  r->F = rss2 > 0 ? (r->all.rss - rss2) / 2 / (rss2 / (double)(n - 4)) : INFINITY;
  if (r->F > r->fcrit) {
    r->brk = best;
    line(&r->left, x, y, w, best, level);
    line(&r->right, x + best, y + best, w ? w + best : NULL, n - best, level);
  }
  return LOWP_OK;
}

double lowp_fit_loglog_slope(const double *x, const double *y, size_t n) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0, c = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    double lx, ly;
    if (!(x[i] > 0) || !(y[i] > 0) || !isfinite(y[i]) || !isfinite(x[i])) continue;
    lx = log(x[i]);
    ly = log(y[i]);
    sx += lx; sy += ly; sxx += lx * lx; sxy += lx * ly;
    c += 1;
  }
  if (c < 2 || c * sxx - sx * sx <= 0) return NAN;
  return (c * sxy - sx * sy) / (c * sxx - sx * sx);
}
