/* lowp_qdq_fpx -- the exceptions of a quantization: NaN or clamped scales, saturated and underflowed elements */

/*
 * lowp_qdq_f32 refuses non-finite data; a trace must not: it says what a
 * quantizer following the specifications would produce. Scales: MX blocks
 * take 2^(floor(log2 amax) - emax_elem) as E8M0, NaN when the block holds a
 * NaN or an infinity (OCP Microscaling Formats v1.0, sec. 6.3: "if the
 * block contains ... Inf or NaN, the scale is NaN"), clamped to E8M0's
 * range otherwise (lowp_qdq_mx_exponent); amax scales are fl32(xmax/amax)
 * (lowp_qdq_scale), non-finite when amax is infinite or NaN or so small
 * that the quotient overflows fp32. Elements: q = round(x s) to f with the
 * saturating policy qdq uses (x s is exact in binary64, a product of two
 * fp32 values), traced as a conversion.
 */

#include "cpu/qdq.h"

#include <math.h>

#include "format/bsquant.h"
#include "measure/fpx.h"
#include "status.h"

/* the scale of a group, traced (seq, row r, first column c) */
static double scale_of(lowp_fpx_trace_t *t, uint64_t seq, size_t r, size_t c, double a,
                       const lowp_format_t *f, lowp_qscheme_t scheme) {
  double s, exact;
  unsigned m;
  const lowp_format_t *sf = scheme == LOWP_QS_MXBLOCK ? &LOWP_FMT_E8M0 : &LOWP_FMT_FP32;
  if (scheme == LOWP_QS_MXBLOCK) {
    int e;
    if (!isfinite(a)) { s = NAN; exact = NAN; }
    else if (a == 0) { s = ldexp(1.0, -lowp_qdq_mx_exponent(a, f)); exact = s; }
    else {
      (void)frexp(a, &e);
      exact = ldexp(1.0, -(e - 1 - f->emax)); /* unclamped (0 or inf beyond binary64) */
      s = ldexp(1.0, -lowp_qdq_mx_exponent(a, f));
    }
  } else {
    exact = (a > 0) ? lowp_format_xmax(f) / a : (a == 0 ? 1.0 : NAN);
    s = isfinite(a) ? (double)lowp_qdq_scale(a, f) : NAN;
  }
  t->ops++;
  m = lowp_fpx_classify_scale(sf, exact, 0, s);
  if (scheme == LOWP_QS_MXBLOCK && a == 0) m = 0; /* any scale serves a zero block */
  if (m) {
    lowp_fpx_event_t ev;
    lowp_fpx_event_init(&ev);
    ev.seq = seq;
    ev.i = (int64_t)r;
    ev.j = (int64_t)c;
    ev.op = LOWP_FPX_OP_SCALE;
    ev.a = lowp_fpx_bits(a);
    ev.r = lowp_fpx_bits(s);
    ev.exact = exact;
    ev.inherent = 1; /* a scale's exact value is its own reference */
    lowp_fpx_record(t, m, &ev);
  }
  return s;
}

int lowp_qdq_fpx(lowp_fpx_trace_t *t, const float *x, size_t rows, size_t cols,
                 const lowp_format_t *f, lowp_qscheme_t scheme, size_t block) {
  lowp_policy_t pol = {0};
  size_t r, c, b;
  int blocked = scheme == LOWP_QS_MXBLOCK || scheme == LOWP_QS_BLOCK;
  double s_tensor = 1.0;
  if (!t || (rows * cols != 0 && !x) || !f) return LOWP_EINVAL;
  if (lowp_format_validate(f, NULL, 0)) return LOWP_EFORMAT;
  if (scheme < LOWP_QS_CAST || scheme > LOWP_QS_BLOCK || (blocked && block == 0))
    return LOWP_EINVAL;
  pol.overflow = LOWP_OVF_SAT;
  if (scheme == LOWP_QS_TENSOR && rows * cols != 0)
    s_tensor = scale_of(t, 0, 0, 0, lowp_bs_amax(x, rows * cols), f, scheme);
  for (r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    double s = s_tensor;
    size_t step = blocked ? block : cols;
    for (b = 0; b < cols; b += step) {
      size_t len = cols - b < step ? cols - b : step;
      uint64_t e0 = 2 * ((uint64_t)r * cols + b);
      if (scheme == LOWP_QS_ROW && b == 0) s = scale_of(t, e0, r, b, lowp_bs_amax(xr, cols), f, scheme);
      if (blocked) s = scale_of(t, e0, r, b, lowp_bs_amax(xr + b, len), f, scheme);
      for (c = b; c < b + len; c++) {
        double q;
        uint64_t e = (uint64_t)r * cols + c;
        (void)lowp_fpx_round_f64(t, 2 * e + 1, (int64_t)e, &q, (double)xr[c] * s, f, &pol,
                                 LOWP_RND_NE);
      }
    }
  }
  return LOWP_OK;
}
