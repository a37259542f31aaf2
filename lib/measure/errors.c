/* lowp_measure_errors -- error metrics of a computed array against the exact one */

#include "measure/measure.h"

#include <math.h>

#include "status.h"

/* ------------------------------------------------------ private helpers */

static void track(double v, size_t i, double *mx, size_t *arg, double *sum) {
  if (*arg == (size_t)-1 || v > *mx) { *mx = v; *arg = i; }
  *sum += v;
}

/* ----------------------------------------------------------- public API */

double lowp_measure_ulp_unit(double c, double x, double lo, const lowp_format_t *f) {
  return lowp_ulp_toward(x, lo == 0 ? c : nextafter(x, lo > 0 ? INFINITY : -INFINITY), f);
}

int lowp_measure_errors(lowp_errors_t *e, const double *c, const double *x,
                        const double *r, size_t n, const lowp_format_t *f) {
  return lowp_measure_errors_lo(e, c, x, NULL, r, n, f);
}

int lowp_measure_errors_lo(lowp_errors_t *e, const double *c, const double *x, const double *xlo,
                           const double *r, size_t n, const lowp_format_t *f) {
  size_t i, m = 0;
  double s_abs = 0, s_rel = 0, s_ulp = 0, s_bwd = 0;
  if (!e || (n && (!c || !x))) return LOWP_EINVAL;
  if (!f || lowp_format_validate(f, NULL, 0) != 0) return LOWP_EFORMAT;
  e->n = n;
  e->n_special = e->n_exact = 0;
  e->max_abs = e->max_rel = e->max_ulp = 0;
  e->mean_abs = e->mean_rel = e->mean_ulp = 0;
  e->max_bwd = r ? 0 : NAN;
  e->argmax_abs = e->argmax_rel = e->argmax_ulp = e->argmax_bwd = (size_t)-1;
  for (i = 0; i < n; i++) {
    double ci = c[i], xi = x[i], d, rel, ulp, lo;
    if (isnan(ci) || isnan(xi) || isinf(ci) || isinf(xi)) {
      if ((isnan(ci) && isnan(xi)) || (isinf(ci) && ci == xi)) e->n_exact++;
      else e->n_special++;
      continue;
    }
    m++;
    /* c - x is exact near x, lo much smaller than an ulp */
    lo = xlo && isfinite(xlo[i]) ? xlo[i] : 0;
    d = fabs((ci - xi) - lo);
    if (d == 0) e->n_exact++;
    rel = d == 0 ? 0 : (xi == 0 ? INFINITY : d / fabs(xi));
    ulp = d == 0 ? 0 : d / lowp_measure_ulp_unit(ci, xi, lo, f);
    track(d, i, &e->max_abs, &e->argmax_abs, &s_abs);
    track(rel, i, &e->max_rel, &e->argmax_rel, &s_rel);
    track(ulp, i, &e->max_ulp, &e->argmax_ulp, &s_ulp);
    if (r) {
      double b = d == 0 ? 0 : (r[i] == 0 ? INFINITY : d / fabs(r[i]));
      track(b, i, &e->max_bwd, &e->argmax_bwd, &s_bwd);
    }
  }
  if (m) {
    e->mean_abs = s_abs / (double)m;
    e->mean_rel = s_rel / (double)m;
    e->mean_ulp = s_ulp / (double)m;
  }
  return LOWP_OK;
}
