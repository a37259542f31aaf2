/* lowp_measure_point -- one exact value (a number read from text), rounded to formats and measured */

/* The method and the special values are stated in measure/point.h. */

#include "measure/point.h"

#include <math.h>
#include <stdlib.h>

#include "format/round_mpfr.h"
#include "status.h"

struct lowp_point {
  mpfr_t v;
};

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

/* ------------------------------------------------------- lowp_point_t */

int lowp_point_new(lowp_point_t **x) {
  *x = malloc(sizeof **x);
  if (!*x) return LOWP_ENOMEM;
  mpfr_init2((*x)->v, LOWP_POINT_PREC);
  mpfr_set_zero((*x)->v, 1);
  return LOWP_OK;
}

void lowp_point_free(lowp_point_t *x) {
  if (!x) return;
  mpfr_clear(x->v);
  free(x);
}

int lowp_point_parse(lowp_point_t *x, const char *text) {
  return lowp_mpfr_parse(x->v, text) == LOWP_OK ? LOWP_OK : LOWP_EPARSE;
}

void lowp_point_set_f64(lowp_point_t *x, double v) {
  mpfr_set_d(x->v, v, MPFR_RNDN); /* exact: LOWP_POINT_PREC >= 53 */
}

int lowp_point_round(double *y, const lowp_point_t *x, const lowp_format_t *f,
                     const lowp_policy_t *pol, lowp_rounding_t rnd) {
  return lowp_round_mpfr(y, x->v, f, pol, rnd);
}

int lowp_point_beyond_max(const lowp_point_t *x, const lowp_format_t *f,
                          const lowp_policy_t *pol, lowp_rounding_t rnd) {
  static const lowp_policy_t dflt;
  lowp_format_t g = *f;
  lowp_policy_t up = pol ? *pol : dflt;
  double yu;
  if (mpfr_nan_p(x->v)) return 0;
  g.emax = 1023;
  g.inf = LOWP_INF_IEEE;
  g.nan = LOWP_NAN_IEEE;
  g.ebits = 11;
  up.overflow = LOWP_OVF_IEEE;
  (void)lowp_round_mpfr(&yu, x->v, &g, &up, rnd);
  return !(fabs(yu) <= lowp_format_xmax(f));
}

void lowp_point_errors(double *ea, double *er, double *eu, double y, const lowp_point_t *x,
                       const lowp_format_t *f) {
  lowp_measure_point_errors(ea, er, eu, y, x->v, f);
}
