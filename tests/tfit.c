/* tfit -- least-squares lines, Student's t quantiles, the two-segment test (lib/measure/fit.c)
   against answers computed independently: numpy 1.x polyfit(deg=1, cov='unbiased') and mpmath
   (regularized incomplete beta) with /usr/bin/python3; the commands are in the comments */

#include <math.h>
#include <stdio.h>

#include "measure/measure.h"
#include "status.h"
#include "testutil.h"

static void near(const char *what, double got, double want, double rel) {
  lowp_test_check(fabs(got - want) <= rel * fabs(want), "%s: got %.17g want %.17g", what, got, want);
}

int main(void) {
  lowp_fit_t f;
  lowp_fit_break_t b;
  lowp_test_start("tfit");

  /* t quantiles t_{0.975, nu}: mpmath.findroot of betainc(nu/2, 1/2, 0, nu/(nu+q^2), regularized)/2
     = 0.025, 30 digits */
  {
    static const unsigned nu[] = {1, 2, 3, 4, 7, 30};
    static const double q[] = {12.7062047361747, 4.30265272974946, 3.18244630528371,
                               2.77644510519779, 2.36462425159279, 2.04227245630124};
    size_t i;
    for (i = 0; i < 6; i++) {
      char w[64];
      snprintf(w, sizeof w, "t quantile 0.975, nu = %u", nu[i]);
      near(w, lowp_t_quantile(0.975, nu[i]), q[i], 1e-12);
      near("symmetry", lowp_t_quantile(0.025, nu[i]), -q[i], 1e-12);
    }
    /* the distribution function: mpmath 1 - betainc(5/2, 1/2, 0, 5/(5+1.5^2))/2 */
    near("t cdf(1.5 | 5)", lowp_t_cdf(1.5, 5), 0.90304815987876326, 1e-14);
    lowp_test_check(lowp_t_cdf(0, 7) == 0.5, "t cdf(0) = 1/2");
    lowp_test_check(isnan(lowp_t_quantile(1.0, 3)) && isnan(lowp_t_quantile(0.5, 0)), "bad p or nu: NaN");
    /* F(2, d2): P(F > f) = (1 + 2f/d2)^(-d2/2); numpy: 6/2 * ((0.01/5)**(-2/6) - 1) */
    near("F(2,6) quantile", lowp_f2_quantile(1 - 0.01 / 5, 6), 20.81101577952299, 1e-13);
  }

  /* an exact power law: slope 0.5 to rounding, zero-width interval */
  {
    double x[9], y[9];
    size_t i;
    for (i = 0; i < 9; i++) {
      x[i] = log(16.0 * pow(4.0, (double)i));
      y[i] = log(3e-8) + 0.5 * x[i];
    }
    lowp_test_check(lowp_fit_line(&f, x, y, NULL, 9, 0.95) == LOWP_OK, "fit");
    near("exact slope", f.slope, 0.5, 1e-14);
    near("exact intercept", f.intercept, log(3e-8), 1e-14);
    lowp_test_check(f.half < 1e-12 && f.n == 9, "exact data: half-width %g", f.half);
    lowp_test_check(lowp_fit_break(&b, x, y, NULL, 9, 3, 0.95, 0.01) == LOWP_OK && b.brk == 0,
                    "an exact line has no break (brk %zu, F %g)", b.brk, b.F);
  }

  /* noisy data, against numpy: x = log([16, 64, ..., 2^20]), y = log of these errors;
     np.polyfit(x, y, 1, cov='unbiased') -> slope 0.5028854356770913, intercept -16.41179177351295,
     se sqrt(cov[0,0]) = 0.006439604152043439, residual sum of squares 0.03347175987660096 */
  {
    static const double e[] = {3.1e-7, 5.9e-7, 1.3e-6, 2.2e-6, 5.1e-6, 9.0e-6, 2.1e-5, 3.8e-5, 8.3e-5};
    double x[9], y[9];
    size_t i;
    for (i = 0; i < 9; i++) {
      x[i] = log(16.0 * pow(4.0, (double)i));
      y[i] = log(e[i]);
    }
    lowp_fit_line(&f, x, y, NULL, 9, 0.95);
    near("numpy slope", f.slope, 0.5028854356770913, 1e-12);
    near("numpy intercept", f.intercept, -16.41179177351295, 1e-12);
    near("numpy se", f.se, 0.006439604152043439, 1e-10);
    near("numpy rss", f.rss, 0.03347175987660096, 1e-10);
    near("half = t_{0.975,7} se", f.half, 2.36462425159279 * 0.006439604152043439, 1e-10);
    /* weighted by the trials of each point, w = [64 64 64 64 64 32 8 5 5]: np.polyfit(x, y, 1,
       w=np.sqrt(w), cov='unbiased') (numpy's w multiplies the residuals) -> slope 0.49778876089418367,
       intercept -16.382690779493544, se 0.009053453051174895; sum w r^2 = 1.4009041922871976 */
    {
      static const double w[] = {64, 64, 64, 64, 64, 32, 8, 5, 5};
      double w0[9] = {64, 64, 64, 64, 64, 32, 8, 5, 0};
      lowp_test_check(lowp_fit_line(&f, x, y, w, 9, 0.95) == LOWP_OK, "weighted fit");
      near("numpy weighted slope", f.slope, 0.49778876089418367, 1e-12);
      near("numpy weighted intercept", f.intercept, -16.382690779493544, 1e-12);
      near("numpy weighted se", f.se, 0.009053453051174895, 1e-10);
      near("weighted rss", f.rss, 1.4009041922871976, 1e-10);
      lowp_test_check(lowp_fit_line(&f, x, y, w0, 9, 0.95) == LOWP_EINVAL, "a zero weight refused");
    }
  }

  /* two segments, against numpy: x = 0..9, y = x below 5, 4 + 0.02 (x - 5) from 5, plus
     pert = [.05, -.05, .03, -.02, .04, -.05, .02, -.03, .05, -.01]; the best split of
     3..7 by total RSS (np.polyfit on each side) is 5, F = 1173.7223272727447, slopes
     1.0010000000000001 and 0.030999999999999646; critical value F(2, 6) at 0.01 / 5 */
  {
    static const double pert[] = {0.05, -0.05, 0.03, -0.02, 0.04, -0.05, 0.02, -0.03, 0.05, -0.01};
    double x[10], y[10], y2[10];
    size_t i;
    for (i = 0; i < 10; i++) {
      x[i] = (double)i;
      y[i] = (i < 5 ? (double)i : 4.0 + 0.02 * (double)(i - 5)) + pert[i];
      y2[i] = 0.5 * (double)i + pert[i];
    }
    lowp_fit_break(&b, x, y, NULL, 10, 3, 0.95, 0.01);
    lowp_test_check(b.brk == 5, "break at 5, got %zu", b.brk);
    near("F", b.F, 1173.7223272727447, 1e-9);
    near("F critical", b.fcrit, 20.81101577952299, 1e-13);
    near("left slope", b.left.slope, 1.0010000000000001, 1e-12);
    near("right slope", b.right.slope, 0.030999999999999646, 1e-9);
    lowp_test_check(b.left.n == 5 && b.right.n == 5 && isfinite(b.left.half) && isfinite(b.right.half),
                    "both sides fitted with intervals");
    /* the same noise on one line: numpy F = 0.4016, far below the critical value: no break */
    lowp_fit_break(&b, x, y2, NULL, 10, 3, 0.95, 0.01);
    lowp_test_check(b.brk == 0, "one line: no break (got %zu)", b.brk);
    near("one line F", b.F, 0.4015999999999962, 1e-9);
    near("one line slope", b.all.slope, 0.5, 0.01);
  }

  /* too few points: no interval (2 points), no break test (fewer than 2 minseg) */
  {
    double x[2] = {0, 1}, y[2] = {0, 2};
    lowp_fit_line(&f, x, y, NULL, 2, 0.95);
    lowp_test_check(f.slope == 2 && isnan(f.half), "2 points: slope 2, no interval");
    lowp_fit_break(&b, x, y, NULL, 2, 3, 0.95, 0.01);
    lowp_test_check(b.brk == 0 && isnan(b.F), "2 points: no test");
    lowp_test_check(lowp_fit_line(&f, x, y, NULL, 2, 1.5) == LOWP_EINVAL, "level outside (0, 1) refused");
    lowp_test_check(lowp_fit_break(&b, x, y, NULL, 2, 1, 0.95, 0.01) == LOWP_EINVAL, "minseg < 2 refused");
  }
  return lowp_test_end();
}
