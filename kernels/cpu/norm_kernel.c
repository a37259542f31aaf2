/* lowp_norm_k -- plain CPU kernels of normalisation: layer norm (one-pass, two-pass, Welford), RMS norm */

/*
 * Every operation is rounded (rne) to the compute format F (compute=,
 * default fp32); sums accumulate left to right in F. Per row of n values:
 *   layernorm, variant=
 *     twopass  mean = F(S/n), S = sum x_i; var = F(sum F(F(x_i - mean)^2) / n)
 *     onepass  S and Q = sum F(x_i^2) together; mean = F(S/n),
 *              var = F(F(Q/n) - F(mean^2)), clamped at 0 as real kernels do
 *              (clamp=off: not clamped, the formula's own error):
 *              catastrophic cancellation when |mean| >> std (Chan, Golub &
 *              LeVeque, Am. Stat. 37(3) 1983; Higham 2002, sec. 1.9)
 *     welford  delta = x_i - mean; mean += delta / i; M2 += delta (x_i - mean)
 *              (Welford 1962; Higham 2002, sec. 1.9); var = F(M2 / n)
 *   y_i = F(F(x_i - mean) / F(sqrt(F(var + eps))))             scale=div
 *   y_i = F(F(x_i - mean) * F(1 / sqrt(F(var + eps))))         scale=rsqrt
 *         (1/sqrt evaluated in binary64 and rounded once to F, as
 *         PyTorch's layer_norm forms rstd = 1/sqrt(var + eps) and multiplies)
 *   layernorm's acc=A (default F): mean, var, var + eps and the square
 *   root or its reciprocal above are computed with every operation rounded
 *   to A instead of F (the statistics in A); the normalisation
 *   F(x_i - mean) and its scaling stay in F. acc=fp32 with compute=fp16 or
 *   bf16 is PyTorch's layer_norm for half/bfloat16 (Welford moments in
 *   T_ACC = at::acc_type = float: aten/src/ATen/native/cuda/layer_norm_kernel.cu,
 *   RowwiseMomentsCUDAKernel; cpu/moments_utils.h, RowwiseMomentsImpl in
 *   opmath_t = float), whose normalisation is in float too (compute=fp32).
 *   rmsnorm: Q = sum F(x_i^2) in A, ms = A(Q/n); y_i = F(x_i / F(sqrt(A(ms + eps))))
 *   (acc=A, default F: the mean square in A, the square and the normalisation
 *   in F)
 * Outputs (y, and layernorm's mean and var) are then rounded to the output
 * format. OpenMP over rows; the result does not depend on the thread count.
 */

#include "cpu/norm_kernel.h"

#include <math.h>

#include "status.h"

/* ------------------------------------------------------ private helpers */

static void moments(double *mean, double *var, const double *x, size_t n, lowp_ln_variant_t v,
                    int raw, const lowp_format_t *F) {
  double s = 0, q = 0, m, dn = (double)n;
  size_t i;
  if (v == LOWP_LN_WELFORD) {
    double m2 = 0;
    m = 0;
    for (i = 0; i < n; i++) {
      double d = lowp_kcfg_r(x[i] - m, F);
      m = lowp_kcfg_r(m + lowp_kcfg_r(d / (double)(i + 1), F), F);
      m2 = lowp_kcfg_r(m2 + lowp_kcfg_r(d * lowp_kcfg_r(x[i] - m, F), F), F);
    }
    *mean = m;
    *var = lowp_kcfg_r(m2 / dn, F);
    return;
  }
  for (i = 0; i < n; i++) {
    s = lowp_kcfg_r(s + x[i], F);
    if (v == LOWP_LN_ONEPASS) q = lowp_kcfg_r(q + lowp_kcfg_r(x[i] * x[i], F), F);
  }
  m = lowp_kcfg_r(s / dn, F);
  *mean = m;
  if (v == LOWP_LN_ONEPASS) {
    double w = lowp_kcfg_r(lowp_kcfg_r(q / dn, F) - lowp_kcfg_r(m * m, F), F);
    *var = w < 0 && !raw ? 0 : w;
    return;
  }
  for (i = 0; i < n; i++) {
    double d = lowp_kcfg_r(x[i] - m, F);
    q = lowp_kcfg_r(q + lowp_kcfg_r(d * d, F), F);
  }
  *var = lowp_kcfg_r(q / dn, F);
}

/* ----------------------------------------------------------- public API */

int lowp_kernel_layernorm(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                          const lowp_problem_t *p, char *err, size_t errlen) {
  const lowp_format_t *F = &c->compute, *A = &c->racc;
  long long r, rows = (long long)(p->dims.batch * p->dims.m);
  size_t n = p->dims.n;
  (void)err; (void)errlen;
#pragma omp parallel for schedule(static)
  for (r = 0; r < rows; r++) {
    const double *x = &in[0][(size_t)r * n];
    double *y = &out[0][(size_t)r * n], mean, var, ve, den;
    size_t i;
    /* the statistics in A = acc (default F), the normalisation in F */
    moments(&mean, &var, x, n, c->variant, c->ln_raw, A);
    ve = lowp_kcfg_r(var + lowp_kcfg_r(p->eps, A), A);
    den = lowp_kcfg_r(c->ln_rsqrt ? 1.0 / sqrt(ve) : sqrt(ve), A);
    for (i = 0; i < n; i++) {
      double d = lowp_kcfg_r(x[i] - mean, F);
      y[i] = lowp_kcfg_r(lowp_kcfg_r(c->ln_rsqrt ? d * den : d / den, F), &p->out);
    }
    out[1][r] = lowp_kcfg_r(mean, &p->out);
    out[2][r] = lowp_kcfg_r(var, &p->out);
  }
  return LOWP_OK;
}

int lowp_kernel_rmsnorm(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                        const lowp_problem_t *p, char *err, size_t errlen) {
  const lowp_format_t *F = &c->compute, *A = &c->racc;
  long long r, rows = (long long)(p->dims.batch * p->dims.m);
  size_t n = p->dims.n;
  (void)err; (void)errlen;
#pragma omp parallel for schedule(static)
  for (r = 0; r < rows; r++) {
    const double *x = &in[0][(size_t)r * n];
    double *y = &out[0][(size_t)r * n], q = 0, den;
    size_t i;
    for (i = 0; i < n; i++) q = lowp_kcfg_r(q + lowp_kcfg_r(x[i] * x[i], F), A);
    q = lowp_kcfg_r(q / (double)n, A);
    den = lowp_kcfg_r(sqrt(lowp_kcfg_r(q + lowp_kcfg_r(p->eps, A), A)), F);
    for (i = 0; i < n; i++) y[i] = lowp_kcfg_r(lowp_kcfg_r(x[i] / den, F), &p->out);
  }
  return LOWP_OK;
}
