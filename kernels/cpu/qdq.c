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
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

typedef struct {
  const lowp_format_t *f;
  lowp_policy_t pol;
  int fast;   /* round with round_fast: a signed format with subnormals and zero, p <= 52 */
  double xmax, xmin;
  double ovf; /* xmax + ulp(xmax)/2: from here on, round to nearest overflows */
} qctx_t;

/* v rounded to nearest even in q->f, saturating: the same value as
   lowp_round_f64 with the saturating policy, for formats with gradual
   underflow (checked by tests/tqdq.c against a brute-force oracle). The
   quantum 2^(max(e, emin) - p + 1) is a power of two, so a / quantum is
   exact and rint (the default rounding mode, to nearest even) does the one
   rounding; a result above xmax saturates. */
static double pow2(int e) { /* 2^e, -1022 <= e <= 1023, from its bits */
  uint64_t u = (uint64_t)(e + 1023) << 52;
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

static double round_fast(double v, const qctx_t *q) {
  double a = fabs(v), r;
  uint64_t u;
  int e;
  if (a == 0.0 || !isfinite(a)) return v;
  if (a < 0x1p-1000) return lowp_round_f64(&r, v, q->f, &q->pol, LOWP_RND_NE), r; /* far below any xmin */
  memcpy(&u, &a, sizeof u);
  e = (int)((u >> 52) & 0x7ff) - 1023; /* floor(log2 a): a is a normal double */
  if (e < q->f->emin) e = q->f->emin;
  r = rint(a * pow2(q->f->precision - 1 - e)) * pow2(e - q->f->precision + 1);
  if (r > q->xmax) r = q->xmax;
  return v < 0 ? -r : r;
}

/* x*s rounded to f (exact product: s is fp32 or a power of two); counts
   into c. The caller divides by s to dequantize. */
static double q1r(float x, double s, const qctx_t *q, lowp_qstats_t *c) {
  double v = (double)x * s, r;
  if (q->fast) r = round_fast(v, q);
  else (void)lowp_round_f64(&r, v, q->f, &q->pol, LOWP_RND_NE);
  if (fabs(v) >= q->ovf) c->saturated++;
  if (x != 0.0f) {
    c->nonzero++;
    if (r == 0.0) c->flushed++;
    else if (fabs(r) < q->xmin) c->subnormal++;
  }
  return r;
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

/* The scale of an amax-scaled group: fl32(xmax / amax) as a double. */
static double amax_scale(double a, const lowp_format_t *f) { return (double)lowp_qdq_scale(a, f); }

/* Both entry points: y = q / s (fp32), or q and the groups' fl32(1 / s). */
static int quant(float *y, double *qo, float *sinv, const float *x, size_t rows, size_t cols,
                 const lowp_format_t *f, lowp_qscheme_t scheme, size_t block,
                 const double *amax, lowp_qstats_t *st) {
  qctx_t q;
  double s_tensor = 1.0;
  int finite = 1, blocked = scheme == LOWP_QS_MXBLOCK || scheme == LOWP_QS_BLOCK;
  long r;
  size_t n = 0, nz = 0, sat = 0, fl = 0, sub = 0, nb;

  if (lowp_format_validate(f, NULL, 0)) return LOWP_EFORMAT;
  if (scheme < LOWP_QS_CAST || scheme > LOWP_QS_BLOCK) return LOWP_EINVAL;
  if ((blocked || qo) && block == 0) return LOWP_EINVAL;
  nb = block ? (cols + block - 1) / block : 1;
  memset(&q, 0, sizeof q);
  q.f = f;
  q.pol.overflow = LOWP_OVF_SAT;
  q.xmax = lowp_format_xmax(f);
  q.xmin = lowp_format_xmin(f);
  q.ovf = q.xmax + lowp_ulp(q.xmax, f) / 2;
  q.fast = f->nan != LOWP_NAN_NEGZERO && f->subnormals && f->has_zero && f->has_sign && f->precision <= 52 && f->emin > -1000 &&
           f->emax < 1000;
  {
    double a = amax_of(x, rows * cols, &finite);
    if (!finite) return LOWP_EINVAL;
    if (scheme == LOWP_QS_TENSOR) s_tensor = lowp_qdq_scale(amax ? *amax : a, f);
  }
#pragma omp parallel for schedule(static) reduction(+ : n, nz, sat, fl, sub)
  for (r = 0; r < (long)rows; r++) {
    const float *xr = x + (size_t)r * cols;
    lowp_qstats_t c;
    size_t j, b, g;
    double s = s_tensor;
    memset(&c, 0, sizeof c);
    if (scheme == LOWP_QS_ROW) {
      int fin = 1;
      s = lowp_qdq_scale(amax_of(xr, cols, &fin), f);
    }
    for (b = 0, g = 0; b < cols; b += blocked || qo ? block : cols, g++) {
      size_t len = blocked || qo ? (cols - b < block ? cols - b : block) : cols;
      if (blocked) {
        int fin = 1;
        double a = amax_of(xr + b, len, &fin);
        s = scheme == LOWP_QS_MXBLOCK ? ldexp(1.0, -lowp_qdq_mx_exponent(a, f)) : amax_scale(a, f);
      }
      if (qo) {
        for (j = b; j < b + len; j++) qo[(size_t)r * cols + j] = q1r(xr[j], s, &q, &c);
        sinv[(size_t)r * nb + g] = (float)(1.0 / s);
      } else {
        for (j = b; j < b + len; j++) y[(size_t)r * cols + j] = (float)(q1r(xr[j], s, &q, &c) / s);
      }
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

int lowp_qdq_f32(float *y, const float *x, size_t rows, size_t cols,
                 const lowp_format_t *f, lowp_qscheme_t scheme, size_t block,
                 const double *amax, lowp_qstats_t *st) {
  return quant(y, NULL, NULL, x, rows, cols, f, scheme, block, amax, st);
}

int lowp_qdq_quant(double *q, float *sinv, const float *x, size_t rows, size_t cols,
                   const lowp_format_t *f, lowp_qscheme_t scheme, size_t block,
                   const double *amax, lowp_qstats_t *st) {
  if (!q || !sinv) return LOWP_EINVAL;
  return quant(NULL, q, sinv, x, rows, cols, f, scheme, block, amax, st);
}
