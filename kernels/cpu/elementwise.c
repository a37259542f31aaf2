/* lowp_elementwise -- plain CPU elementwise kernels: cast, exp, log, tanh, GELU (erf and tanh forms) */

/*
 * Variants (registry names): cast (round= any mode), exp, log, tanh, gelu
 * (erf form), gelu_tanh (the tanh approximation of Hendrycks & Gimpel 2016,
 * arXiv:1606.08415, eq. after (2): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715
 * x^3)))). The function is evaluated by glibc's libm in binary64 (not
 * correctly rounded, but within an ulp of binary64, far below any compute
 * format's), rounded once to compute=, then to the output format.
 */

#include "cpu/elementwise.h"

#include <math.h>

#include "exact/exact.h"
#include "status.h"

/* ------------------------------------------------------ private helpers */

static double gelu_erf(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }

static double gelu_tanh_approx(double x) {
  const double k = sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}

static int apply(double (*fn)(double), const lowp_kcfg_t *c, double *const *out,
                 const double *const *in, const lowp_problem_t *p) {
  long long i, n = (long long)(p->dims.batch * p->dims.m * p->dims.n);
#pragma omp parallel for schedule(static)
  for (i = 0; i < n; i++) out[0][i] = lowp_kcfg_r(lowp_kcfg_r(fn(in[0][i]), &c->compute), &p->out);
  return LOWP_OK;
}

/* ----------------------------------------------------------- public API */

int lowp_kernel_cast(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                     const lowp_problem_t *p, char *err, size_t errlen) {
  (void)err; (void)errlen;
  return lowp_round_array_f64(out[0], in[0], p->dims.batch * p->dims.m * p->dims.n, &p->out,
                              NULL, c->rnd);
}

double lowp_kernel_exp_cr(double x, const lowp_format_t *F) {
  double y;
  if (lowp_exact_fn(&y, &x, 1, LOWP_FN_EXP, F, NULL, LOWP_RND_NE) != LOWP_OK) return NAN;
  return y;
}

int lowp_kernel_exp(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                    const lowp_problem_t *p, char *err, size_t errlen) {
  (void)err; (void)errlen;
  return apply(exp, c, out, in, p);
}

int lowp_kernel_log(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                    const lowp_problem_t *p, char *err, size_t errlen) {
  (void)err; (void)errlen;
  return apply(log, c, out, in, p);
}

int lowp_kernel_tanh(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                     const lowp_problem_t *p, char *err, size_t errlen) {
  (void)err; (void)errlen;
  return apply(tanh, c, out, in, p);
}

int lowp_kernel_gelu(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                     const lowp_problem_t *p, char *err, size_t errlen) {
  (void)err; (void)errlen;
  return apply(gelu_erf, c, out, in, p);
}

int lowp_kernel_gelu_tanh(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                          const lowp_problem_t *p, char *err, size_t errlen) {
  (void)err; (void)errlen;
  return apply(gelu_tanh_approx, c, out, in, p);
}
