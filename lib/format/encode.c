/* lowp_encode -- values of a format to bit patterns and back */

#include "format/format.h"
#include "status.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

static uint64_t ones(int n) { return n >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1; }

/* ----------------------------------------------------------- public API */

/*
 * Layout: [sign][ebits exponent field][p-1 fraction bits], sign absent in
 * unsigned formats. Field 0 is zero/subnormal (or emin when the format has
 * no zero); the value of field F >= 1 is 2^(F - bias).
 */
int lowp_encode(uint64_t *bits, double v, const lowp_format_t *f) {
  const int p = f->precision, w = lowp_format_width(f);
  const int bias = lowp_format_bias(f);
  const uint64_t fmask = ones(p - 1), topfield = ones(f->ebits);
  uint64_t sign = 0, field, fr;
  double a;
  int e;

  if (f->has_sign && signbit(v)) sign = UINT64_C(1) << (w - 1);
  if (isnan(v)) {
    switch (f->nan) {
    case LOWP_NAN_IEEE: *bits = sign | (topfield << (p - 1)) | fmask; return LOWP_OK;
    case LOWP_NAN_ALLONES: *bits = sign | ones(w - (f->has_sign ? 1 : 0)); return LOWP_OK;
    case LOWP_NAN_NEGZERO: *bits = UINT64_C(1) << (w - 1); return LOWP_OK;
    default: return LOWP_ERANGE;
    }
  }
  if (isinf(v)) {
    if (f->inf != LOWP_INF_IEEE || (!f->has_sign && v < 0)) return LOWP_ERANGE;
    *bits = sign | (topfield << (p - 1));
    return LOWP_OK;
  }
  if (!f->has_sign && v < 0) return LOWP_ERANGE;
  a = fabs(v);
  if (a == 0.0) {
    if (!f->has_zero) return LOWP_ERANGE;
    if (f->nan == LOWP_NAN_NEGZERO) sign = 0; /* no -0: encode as +0 */
    *bits = sign;
    return LOWP_OK;
  }
  if (!(a <= lowp_format_xmax(f))) return LOWP_ERANGE;
  {
    /* read a = sig * 2^(e - 52), sig in [2^52, 2^53), from its bits (no
       libm: this is on the scalar conversion path) */
    uint64_t u, sig, m;
    int64_t q, sh;
    memcpy(&u, &a, sizeof u);
    e = (int)(u >> 52);
    sig = u & ((UINT64_C(1) << 52) - 1);
    if (e == 0) { /* binary64 subnormal: normalise */
      e = -1022;
      while (!(sig & (UINT64_C(1) << 52))) { sig <<= 1; e--; }
    } else {
      sig |= UINT64_C(1) << 52;
      e -= 1023;
    }
    if (e < f->emin && !f->subnormals) return LOWP_ERANGE;
    /* quantum 2^q of f at a; a is a value of f iff a / 2^q is an integer */
    q = (e < f->emin ? f->emin : e) - p + 1;
    sh = q - (e - 52); /* bits of sig below the quantum, >= 53 - p >= 0 */
    if (sh < 0 || sh >= 64 || (sig & ((UINT64_C(1) << sh) - 1)) != 0) return LOWP_ERANGE;
    m = sig >> sh;
    if (e < f->emin) { *bits = sign | m; return LOWP_OK; } /* field 0 */
    fr = m & fmask;
  }
  field = (uint64_t)(e + bias);
  *bits = sign | (field << (p - 1)) | fr;
  return LOWP_OK;
}

int lowp_decode(double *v, uint64_t bits, const lowp_format_t *f) {
  const int p = f->precision, w = lowp_format_width(f);
  const int bias = lowp_format_bias(f);
  const uint64_t topfield = ones(f->ebits);
  uint64_t field, fr, mag;
  int neg;
  double r;

  if (w < 64 && (bits >> w) != 0) return LOWP_ERANGE;
  neg = f->has_sign ? (int)((bits >> (w - 1)) & 1) : 0;
  mag = f->has_sign ? bits & ones(w - 1) : bits;
  field = (mag >> (p - 1)) & topfield;
  fr = mag & ones(p - 1);

  switch (f->nan) {
  case LOWP_NAN_IEEE:
    if (field == topfield && fr) { *v = neg ? -NAN : NAN; return LOWP_OK; }
    break;
  case LOWP_NAN_ALLONES:
    if (mag == ones(w - (f->has_sign ? 1 : 0))) { *v = neg ? -NAN : NAN; return LOWP_OK; }
    break;
  case LOWP_NAN_NEGZERO:
    if (neg && mag == 0) { *v = NAN; return LOWP_OK; }
    break;
  default: break;
  }
  if (f->inf == LOWP_INF_IEEE && field == topfield && fr == 0) {
    *v = neg ? -INFINITY : INFINITY;
    return LOWP_OK;
  }
  if (field > (uint64_t)((int64_t)f->emax + bias)) {
    /* above the top binade: a pattern the format does not use (a reserved
       field's non-inf, non-NaN patterns, or spare fields of a wide ebits) */
    *v = NAN;
    return LOWP_ERANGE;
  }
  if (field == 0 && f->has_zero) {
    /* zero or subnormal; formats without subnormals read these as zero,
       and a format without -0 (fnuz) reads them as +0 */
    r = f->subnormals ? ldexp((double)fr, f->emin - p + 1) : 0.0;
    if (r == 0.0 && f->nan == LOWP_NAN_NEGZERO) neg = 0;
  } else {
    r = ldexp((double)((UINT64_C(1) << (p - 1)) | fr),
              (int)field - bias - p + 1);
  }
  *v = neg ? -r : r;
  return LOWP_OK;
}
