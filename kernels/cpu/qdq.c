/* lowp_qdq -- quantize-dequantize fp32 matrices to a scaled low-precision format */

/*
 * The scale rules are the ones the documents and the OCP MX specification
 * state: per tensor and per row s = xmax / amax (the largest magnitude maps
 * onto the format's largest finite value: the seed document's compute_scale
 * and per_channel_scale; Micikevicius et al., "FP8 Formats for Deep
 * Learning", arXiv:2209.05433), kept as an fp32 number as scaling recipes do; MX blocks a
 * power of two chosen from the block's largest exponent, so the top of the
 * block's binade can exceed xmax and saturate (e4m3: block values at or
 * above 464 * 2^scale, i.e. from 0.906 times the next power of two, are
 * clamped to 448 * 2^scale; OCP MX v1.0 section 6.3 clamps them).
 */

#include "cpu/qdq.h"

#include "status.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

typedef struct {
  const lowp_format_t *f;
  lowp_policy_t pol;
  double xmax, xmin;
  double ovf; /* xmax + ulp(xmax)/2: from here on, round to nearest overflows */
} qctx_t;

/* x*s rounded to f (exact product: s is fp32 or a power of two), back
   divided by s; counts into c. */
static float q1(float x, double s, const qctx_t *q, lowp_qstats_t *c) {
  double v = (double)x * s, r;
  (void)lowp_round_f64(&r, v, q->f, &q->pol, LOWP_RND_NE);
  if (fabs(v) >= q->ovf) c->saturated++;
  if (x != 0.0f) {
    c->nonzero++;
    if (r == 0.0) c->flushed++;
    else if (fabs(r) < q->xmin) c->subnormal++;
  }
  return (float)(r / s);
}

static double amax_of(const float *x, size_t n, int *finite) {
  double a = 0.0;
  size_t i;
  for (i = 0; i < n; i++) {
    double v = fabs((double)x[i]);
    if (!isfinite(v)) *finite = 0;
    if (v > a) a = v;
  }
  return a;
}

/* ----------------------------------------------------------- public API */

float lowp_qdq_scale(double amax, const lowp_format_t *f) {
  if (!(amax > 0.0) || isinf(amax)) return 1.0f;
  return (float)(lowp_format_xmax(f) / amax);
}

int lowp_qdq_mx_exponent(double amax, const lowp_format_t *f) {
  int e;
  if (!(amax > 0.0)) return LOWP_FMT_E8M0.emin;
  (void)frexp(amax, &e); /* amax = m * 2^e, m in [0.5, 1): floor(log2) = e - 1 */
  e = e - 1 - f->emax;
  if (e < LOWP_FMT_E8M0.emin) e = LOWP_FMT_E8M0.emin;
  if (e > LOWP_FMT_E8M0.emax) e = LOWP_FMT_E8M0.emax;
  return e;
}

int lowp_qdq_f32(float *y, const float *x, size_t rows, size_t cols,
                 const lowp_format_t *f, lowp_qscheme_t scheme, size_t block,
                 const double *amax, lowp_qstats_t *st) {
  qctx_t q;
  double s_tensor = 1.0;
  int finite = 1;
  long r;
  size_t n = 0, nz = 0, sat = 0, fl = 0, sub = 0;

  if (lowp_format_validate(f, NULL, 0)) return LOWP_EFORMAT;
  if (scheme < LOWP_QS_CAST || scheme > LOWP_QS_MXBLOCK) return LOWP_EINVAL;
  if (scheme == LOWP_QS_MXBLOCK && block == 0) return LOWP_EINVAL;
  memset(&q, 0, sizeof q);
  q.f = f;
  q.pol.overflow = LOWP_OVF_SAT;
  q.xmax = lowp_format_xmax(f);
  q.xmin = lowp_format_xmin(f);
  q.ovf = q.xmax + lowp_ulp(q.xmax, f) / 2;
  {
    double a = amax_of(x, rows * cols, &finite);
    if (!finite) return LOWP_EINVAL;
    if (scheme == LOWP_QS_TENSOR) s_tensor = lowp_qdq_scale(amax ? *amax : a, f);
  }
#pragma omp parallel for schedule(static) reduction(+ : n, nz, sat, fl, sub)
  for (r = 0; r < (long)rows; r++) {
    const float *xr = x + (size_t)r * cols;
    float *yr = y + (size_t)r * cols;
    lowp_qstats_t c;
    size_t j, b;
    memset(&c, 0, sizeof c);
    if (scheme == LOWP_QS_MXBLOCK) {
      for (b = 0; b < cols; b += block) {
        size_t len = cols - b < block ? cols - b : block;
        int fin = 1;
        int e = lowp_qdq_mx_exponent(amax_of(xr + b, len, &fin), f);
        double s = ldexp(1.0, -e);
        for (j = b; j < b + len; j++) yr[j] = q1(xr[j], s, &q, &c);
      }
    } else {
      double s = s_tensor;
      if (scheme == LOWP_QS_ROW) {
        int fin = 1;
        s = lowp_qdq_scale(amax_of(xr, cols, &fin), f);
      }
      for (j = 0; j < cols; j++) yr[j] = q1(xr[j], s, &q, &c);
    }
    n += cols;
    nz += c.nonzero;
    sat += c.saturated;
    fl += c.flushed;
    sub += c.subnormal;
  }
  if (st) {
    st->n += n;
    st->nonzero += nz;
    st->saturated += sat;
    st->flushed += fl;
    st->subnormal += sub;
  }
  return LOWP_OK;
}
