/* lowp_measure_point -- the abs/rel/ulp error of one value against an exact value held in MPFR */

/* The method and the special values are stated in measure/point.h. */

#include "measure/point.h"

#include <math.h>

void lowp_measure_point_errors(double *ea, double *er, double *eu, double y, mpfr_srcptr x,
                               const lowp_format_t *f) {
  mpfr_t d;
  if (isnan(y) || mpfr_nan_p(x)) { *ea = *er = *eu = NAN; return; }
  if (isinf(y) || mpfr_inf_p(x)) {
    int same = isinf(y) && mpfr_inf_p(x) && (y > 0) == (mpfr_sgn(x) > 0);
    *ea = *er = *eu = same ? 0.0 : INFINITY;
    return;
  }
  mpfr_init2(d, 64);
  mpfr_sub_d(d, x, y, MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  *ea = mpfr_get_d(d, MPFR_RNDN);
  if (mpfr_zero_p(x)) *er = (*ea == 0.0) ? 0.0 : INFINITY;
  else {
    mpfr_t r;
    mpfr_init2(r, 64);
    mpfr_div(r, d, x, MPFR_RNDN);
    mpfr_abs(r, r, MPFR_RNDN);
    *er = mpfr_get_d(r, MPFR_RNDN);
    mpfr_clear(r);
  }
  {
    /* in ulps of f at the exact value: ulp(x) = 2^(max(e,emin)-p+1) */
    long e = mpfr_zero_p(x) ? f->emin : (long)mpfr_get_exp(x) - 1;
    if (e < f->emin) e = f->emin;
    mpfr_mul_2si(d, d, -(e - f->precision + 1), MPFR_RNDN);
    *eu = mpfr_get_d(d, MPFR_RNDN);
  }
  mpfr_clear(d);
}
