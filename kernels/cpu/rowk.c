/* lowp_rowk_cpu -- CPU twins of the row kernels of kernels/cuda/rowk.cu */

/*
 * Each function replays the GPU's launch (kernels/common/karith.h, "THE LAUNCH
 * ORDER") for one row at a time: the 256 per-thread partials of step 1 in
 * an array, the warp trees of step 2 in place, the warp fold of step 3.
 * The arithmetic is karith.h's, the same source the GPU compiles; every
 * stored result goes through lowp_ka_gpu_nan, so a NaN has the GPU's bits
 * (0x7fffffff) rather than x86's (each such result is an fp32 arithmetic
 * operation's on the GPU: the division, the layer norm's product, mean and
 * variance, the cross-entropy's subtraction, the sum's last addition, the
 * unscale's multiplication).
 * OpenMP over rows: every row is independent, so the result does not
 * depend on the thread count.
 */

#include "common/rowk.h"

#include <stdlib.h>

#include "common/fpxd.h"

#include "status.h"

/* ------------------------------------------------------ private helpers */

#define T LOWP_KA_THREADS

/* step 2 and 3 on 256 partials of a sum in format f; each addition traced
   into fx (NULL: none) with its tree key (common/fpxd.h) */
static float tree_add(float *s, lowp_ka_fmt_t f, lowp_fpxd_t *fx, uint32_t row) {
  int w, off, l, lev;
  float r;
  for (w = 0; w < LOWP_KA_WARPS; w++)
    for (off = 16, lev = 0; off >= 1; off /= 2, lev++)
      for (l = 0; l < off; l++) {
        float a = s[32 * w + l], b = s[32 * w + l + off];
        s[32 * w + l] = lowp_ka_add(a, b, f);
        lowp_fpxd_op(fx, lowp_fpxd_key(row, LOWP_FPXD_TREE, (uint32_t)(256 * lev + 32 * w + l), 0), a, b,
                     s[32 * w + l], 0);
      }
  r = s[0];
  for (w = 1; w < LOWP_KA_WARPS; w++) {
    float a = r;
    r = lowp_ka_add(r, s[32 * w], f);
    lowp_fpxd_op(fx, lowp_fpxd_key(row, LOWP_FPXD_TREE, (uint32_t)(256 * 5 + w), 0), a, s[32 * w], r, 0);
  }
  return r;
}

static float tree_max(float *s) {
  int w, off, l;
  float r;
  for (w = 0; w < LOWP_KA_WARPS; w++)
    for (off = 16; off >= 1; off /= 2)
      for (l = 0; l < off; l++) s[32 * w + l] = lowp_ka_max(s[32 * w + l], s[32 * w + l + off]);
  r = s[0];
  for (w = 1; w < LOWP_KA_WARPS; w++) r = lowp_ka_max(r, s[32 * w]);
  return r;
}

static lowp_ka_welford_t tree_welford(lowp_ka_welford_t *s) {
  int w, off, l;
  lowp_ka_welford_t r;
  for (w = 0; w < LOWP_KA_WARPS; w++)
    for (off = 16; off >= 1; off /= 2)
      for (l = 0; l < off; l++)
        s[32 * w + l] = lowp_ka_welford_merge(s[32 * w + l], s[32 * w + l + off]);
  r = s[0];
  for (w = 1; w < LOWP_KA_WARPS; w++) r = lowp_ka_welford_merge(r, s[32 * w]);
  return r;
}

static const lowp_ka_fmt_t F32 = {24, -126, 127};

/* row reductions of step 1 + tree: what the GPU's block_* functions do */
enum { R_SUM, R_SQ, R_DEV2, R_EXP, R_EXPSHIFT };

/* the exp terms of a softmax fold, traced: exp(x_i) (naive) or exp(x_i - c) */
static float exp_term(float v, int what, float c, lowp_fpxd_t *fx, uint32_t row, uint32_t phase, size_t i) {
  float d = v, e;
  if (what == R_EXPSHIFT) {
    d = v - c;
    lowp_fpxd_op(fx, lowp_fpxd_key(row, phase, (uint32_t)i, LOWP_FPXD_SUB), v, c, d, 0);
  }
  e = lowp_ka_expf(d);
  lowp_fpxd_op(fx, lowp_fpxd_key(row, phase, (uint32_t)i, LOWP_FPXD_EXP), d, 0.0f, e, 0);
  return e;
}

static float row_sum(const float *x, size_t n, int what, float c, lowp_ka_fmt_t f, lowp_fpxd_t *fx,
                     uint32_t row) {
  float s[T];
  size_t t, i;
  for (t = 0; t < T; t++) {
    float a = 0.0f, a0;
    for (i = t; i < n; i += T) {
      float v = x[i];
      if (what == R_SQ) v = v * v;
      else if (what == R_DEV2) v = (v - c) * (v - c);
      else if (what == R_EXP || what == R_EXPSHIFT) v = exp_term(v, what, c, fx, row, LOWP_FPXD_FOLD, i);
      a0 = a;
      a = lowp_ka_add(a, v, f);
      lowp_fpxd_op(fx, lowp_fpxd_key(row, LOWP_FPXD_FOLD, (uint32_t)i, LOWP_FPXD_ADD), a0, v, a, 0);
    }
    s[t] = a;
  }
  return tree_add(s, f, fx, row);
}

static float row_max(const float *x, size_t n) {
  float s[T];
  size_t t, i;
  for (t = 0; t < T; t++) {
    float a = lowp_ka_float(0xff800000u); /* -inf */
    for (i = t; i < n; i += T) a = lowp_ka_max(a, x[i]);
    s[t] = a;
  }
  return tree_max(s);
}

static int sizes_ok(size_t rows, size_t n) {
  return n >= 1 && n < (1u << 24) && rows < (1u << 31);
}

/* ----------------------------------------------------------- public API */

int lowp_rowk_fmt(lowp_ka_fmt_t *k, const lowp_format_t *f) {
  if (!k || !f) return LOWP_EINVAL;
  if (f->precision > 24 || f->emax > 127 || f->emin - f->precision + 1 < -149 ||
      f->inf != LOWP_INF_IEEE || !f->subnormals || !f->has_sign || !f->has_zero)
    return LOWP_EUNSUPPORTED;
  k->p = f->precision;
  k->emin = f->emin;
  k->emax = f->emax;
  return LOWP_OK;
}

int lowp_rsum_cpu(float *y, const float *x, size_t rows, size_t n, lowp_ka_fmt_t acc) {
  long long r;
  if (!y || !x || !sizes_ok(rows, n) || acc.p < 1 || acc.p > 24) return LOWP_EINVAL;
#pragma omp parallel for schedule(static)
  for (r = 0; r < (long long)rows; r++)
    y[r] = lowp_ka_gpu_nan(row_sum(x + (size_t)r * n, n, R_SUM, 0.0f, acc, NULL, 0));
  return LOWP_OK;
}

int lowp_softmax_cpu(float *y, const float *x, size_t rows, size_t n, int stable) {
  return lowp_softmax_fpx_cpu(y, x, rows, n, stable, NULL);
}

int lowp_softmax_fpx_cpu(float *y, const float *x, size_t rows, size_t n, int stable,
                         lowp_fpxd_t *trace) {
  long long r;
  int what = stable ? R_EXPSHIFT : R_EXP;
  if (!y || !x || !sizes_ok(rows, n)) return LOWP_EINVAL;
  if (trace) lowp_fpxd_init(trace);
#pragma omp parallel for schedule(static)
  for (r = 0; r < (long long)rows; r++) {
    const float *xr = x + (size_t)r * n;
    float *yr = y + (size_t)r * n, m = 0.0f, s;
    size_t i;
    lowp_fpxd_t rt, *fx = trace ? &rt : NULL;
    if (fx) lowp_fpxd_init(fx);
    if (stable) m = row_max(xr, n);
    s = row_sum(xr, n, what, m, F32, fx, (uint32_t)r);
    for (i = 0; i < n; i++) {
      float e = exp_term(xr[i], what, m, fx, (uint32_t)r, LOWP_FPXD_OUT, i);
      yr[i] = lowp_ka_gpu_nan(e / s);
      lowp_fpxd_op(fx, lowp_fpxd_key((uint32_t)r, LOWP_FPXD_OUT, (uint32_t)i, LOWP_FPXD_DIV), e, s, yr[i], 1);
    }
    if (fx) {
#pragma omp critical(lowp_rowk_fpxd)
      lowp_fpxd_merge(trace, fx); /* min and sums: the same for any thread count */
    }
  }
  return LOWP_OK;
}

int lowp_layernorm_cpu(float *y, float *mean, float *var, const float *x, size_t rows,
                       size_t n, float eps, int variant) {
  long long r;
  if (!y || !mean || !var || !x || !sizes_ok(rows, n) || variant < 0 || variant > 2)
    return LOWP_EINVAL;
#pragma omp parallel for schedule(static)
  for (r = 0; r < (long long)rows; r++) {
    const float *xr = x + (size_t)r * n;
    float *yr = y + (size_t)r * n, fn = (float)n, mu, v, rs;
    size_t i;
    if (variant == LOWP_ROWK_LN_ONEPASS) {
      float S = row_sum(xr, n, R_SUM, 0.0f, F32, NULL, 0), Q = row_sum(xr, n, R_SQ, 0.0f, F32, NULL, 0);
      v = lowp_ka_onepass_var(S, Q, fn, &mu);
    } else if (variant == LOWP_ROWK_LN_TWOPASS) {
      mu = row_sum(xr, n, R_SUM, 0.0f, F32, NULL, 0) / fn;
      v = row_sum(xr, n, R_DEV2, mu, F32, NULL, 0) / fn;
    } else {
      lowp_ka_welford_t s[T], w;
      size_t t;
      for (t = 0; t < T; t++) {
        lowp_ka_welford_t a = {0.0f, 0.0f, 0.0f};
        for (i = t; i < n; i += T) a = lowp_ka_welford_add(a, xr[i]);
        s[t] = a;
      }
      w = tree_welford(s);
      mu = w.mean;
      v = w.m2 / fn;
    }
    rs = lowp_ka_rstd(v, eps);
    for (i = 0; i < n; i++) yr[i] = lowp_ka_gpu_nan((xr[i] - mu) * rs);
    mean[r] = lowp_ka_gpu_nan(mu);
    var[r] = lowp_ka_gpu_nan(v);
  }
  return LOWP_OK;
}

int lowp_xent_cpu(float *loss, const float *x, const int32_t *target, size_t rows, size_t n) {
  long long r;
  if (!loss || !x || !target || !sizes_ok(rows, n)) return LOWP_EINVAL;
  for (r = 0; r < (long long)rows; r++)
    if (target[r] < 0 || (size_t)target[r] >= n) return LOWP_EINVAL;
#pragma omp parallel for schedule(static)
  for (r = 0; r < (long long)rows; r++) {
    const float *xr = x + (size_t)r * n;
    float m = row_max(xr, n), s = row_sum(xr, n, R_EXPSHIFT, m, F32, NULL, 0);
    loss[r] = lowp_ka_gpu_nan(lowp_ka_logf(s) - (xr[target[r]] - m));
  }
  return LOWP_OK;
}

int lowp_unscale_cpu(float *g, size_t n, float inv_scale, int *found_inf) {
  return lowp_unscale_fpx_cpu(g, n, inv_scale, found_inf, NULL);
}

int lowp_unscale_fpx_cpu(float *g, size_t n, float inv_scale, int *found_inf, lowp_fpxd_t *trace) {
  size_t i;
  int found = 0;
  if (!found_inf || (n && !g)) return LOWP_EINVAL;
  if (trace) lowp_fpxd_init(trace);
  for (i = 0; i < n; i++) {
    float v = g[i];
    if (lowp_ka_unscale(&g[i], inv_scale)) found = 1;
    if (inv_scale == 1.0f) continue; /* no multiplication: the bits stay, NaN or not */
    g[i] = lowp_ka_gpu_nan(g[i]);
    lowp_fpxd_op(trace, (unsigned long long)i << 4, v, inv_scale, g[i], 0);
  }
  *found_inf = found;
  return LOWP_OK;
}
