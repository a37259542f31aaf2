/* lowp_round -- round a real value to a format, correctly, in one step */

/*
 * Every rounding enters through lowp_round_sig: an exact significand of up
 * to 64 bits, an exponent, and a sticky bit saying whether anything nonzero
 * lies below. The fp64, fp32 and MPFR entry points only unpack their input
 * into that form, so all of them round once, from the exact value.
 *
 * Order in lowp_round_sig (MPFR's order, docs/style.md B5):
 *   (1) zero; (2) choose the quantum 2^q of the result's binade (emin's for
 *   subnormals, or for everything below xmin when the format has none);
 *   (3) split the significand at q into an integer m and a 64-bit fraction;
 *   (4) decide by the mode whether |m| goes up by one; (5) overflow by the
 *   policy; (6) FTZ, formats with no zero or no -0.
 */

#include "format/format.h"
#include "format/round_fast.h"
#include "format/pow2.h"
#include "format/round_ne.h"
#include "rng/rng.h"
#include "status.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

static const lowp_policy_t default_policy; /* all zero: the IEEE defaults */

static double signed_val(int neg, double mag) { return neg ? -mag : mag; }

/* The NaN result of a conversion into f, as a binary64 NaN whose sign bit
   lowp_encode reads; or what the NaN maps to in a format without NaN.
   from_nan: the input was a NaN, so pol->nan_sign decides the sign; a NaN
   that stands for an overflowed or infinite number keeps that number's
   sign (CUDA's e4m3 __NV_NOSAT: -1e9 -> 0xff, but NaN -> 0x7f). */
static int nan_result(double *y, int neg, const lowp_format_t *f,
                      const lowp_policy_t *pol, int from_nan) {
  if (f->nan == LOWP_NAN_NONE) {
    *y = (pol->nan_map == LOWP_NANMAP_ZERO) ? 0.0 : lowp_format_xmax(f);
    return 0;
  }
  if ((from_nan && pol->nan_sign == LOWP_NANSIGN_POSITIVE) || !f->has_sign ||
      f->nan == LOWP_NAN_NEGZERO)
    neg = 0;
  *y = signed_val(neg, NAN);
  return 0;
}

/* Zero of the right sign: no -0 in unsigned or "fnuz" formats. */
static double zero_of(int neg, const lowp_format_t *f) {
  if (!f->has_sign || f->nan == LOWP_NAN_NEGZERO) neg = 0;
  return neg ? -0.0 : 0.0;
}

/* An infinite input, by the overflow policy. */
static int inf_result(double *y, int neg, const lowp_format_t *f,
                      const lowp_policy_t *pol) {
  if (!f->has_sign) neg = 0;
  switch (pol->overflow) {
  case LOWP_OVF_SAT:
    *y = signed_val(neg, lowp_format_xmax(f));
    return neg ? 1 : -1;
  case LOWP_OVF_NAN:
    if (f->nan != LOWP_NAN_NONE) return nan_result(y, neg, f, pol, 0);
    *y = signed_val(neg, lowp_format_xmax(f));
    return neg ? 1 : -1;
  case LOWP_OVF_SAT_KEEPINF:
  case LOWP_OVF_IEEE:
  default:
    if (f->inf == LOWP_INF_IEEE) { *y = signed_val(neg, INFINITY); return 0; }
    if (f->nan != LOWP_NAN_NONE) return nan_result(y, neg, f, pol, 0);
    *y = signed_val(neg, lowp_format_xmax(f));
    return neg ? 1 : -1;
  }
}

/* A finite value whose rounding exceeds xmax. "away" says whether the mode
   rounds away from zero here (RN, RNA, SR, and the directed mode pointing
   away from zero); IEEE 754 7.4 then gives infinity, otherwise xmax. */
static int overflow_result(double *y, int neg, int away, const lowp_format_t *f,
                           const lowp_policy_t *pol) {
  double xmax = lowp_format_xmax(f);
  int big = neg ? -1 : 1; /* ternary when the result is beyond the value */
  switch (pol->overflow) {
  case LOWP_OVF_SAT:
  case LOWP_OVF_SAT_KEEPINF:
    *y = signed_val(neg, xmax);
    return -big;
  case LOWP_OVF_NAN:
    if (f->nan != LOWP_NAN_NONE) return nan_result(y, neg, f, pol, 0);
    *y = signed_val(neg, xmax);
    return -big;
  case LOWP_OVF_IEEE:
  default:
    if (!away) { *y = signed_val(neg, xmax); return -big; }
    if (f->inf == LOWP_INF_IEEE) { *y = signed_val(neg, INFINITY); return big; }
    if (f->nan != LOWP_NAN_NONE) return nan_result(y, neg, f, pol, 0);
    *y = signed_val(neg, xmax);
    return -big;
  }
}

static int mode_rounds_away(lowp_rounding_t rnd, int neg) {
  switch (rnd) {
  case LOWP_RND_TZ: case LOWP_RND_TO: return 0;
  case LOWP_RND_UP: return !neg;
  case LOWP_RND_DN: return neg;
  default: return 1;
  }
}

/* ----------------------------------------------------------- public API */

int lowp_round_sig(double *y, int neg, int64_t e, uint64_t sig, int sticky,
                   const lowp_format_t *f, const lowp_policy_t *pol,
                   lowp_rounding_t rnd, uint64_t index) {
  const int p = f->precision;
  int64_t q, s;
  uint64_t m, frac, mtrunc;
  int st, up, cmp, tern;
  double mag;

  if (!pol) pol = &default_policy;
  if ((unsigned)rnd >= LOWP_RND_COUNT) { *y = NAN; return INT32_MIN; }
  if (!f->has_sign) neg = 0; /* unsigned formats take |x| (CUDA ue8m0 cvt) */

  /* (1) zero */
  if (sig == 0) { /* the contract: sig == 0 is an exact zero */
    if (!f->has_zero) { *y = lowp_format_xmin(f); return 1; }
    *y = zero_of(neg, f);
    return 0;
  }

  /* the contract asks for sig's top bit set; normalise if a caller did not
     (value = sig * 2^(e-63) is unchanged) rather than misround */
  while (!(sig >> 63)) { sig <<= 1; e--; }

  /* beyond the top binade: overflow whatever the mode (and keeps q small) */
  if (e > f->emax)
    return overflow_result(y, neg, mode_rounds_away(rnd, neg), f, pol);

  /* (2) quantum: 2^q is the weight of the last significand bit of the
     result's binade; below xmin it is fixed at emin - p + 1 (subnormals) or
     at emin (no subnormals: the only candidates are 0 and xmin). */
  if (e >= f->emin) q = e - p + 1;
  else if (f->subnormals) q = (int64_t)f->emin - p + 1;
  else q = f->emin;

  /* (3) split: value = (m + frac/2^64 [+ sticky]) * 2^q. s bits move from
     sig into the fraction; s >= 64 - p >= 0 since q >= e - p + 1. */
  s = q - (e - 63);
  st = sticky;
  if (s == 0) { m = sig; frac = 0; }
  else if (s < 64) { m = sig >> s; frac = sig << (64 - s); }
  else if (s == 64) { m = 0; frac = sig; }
  else if (s < 128) {
    m = 0; frac = sig >> (s - 64);
    st |= (sig << (128 - s)) != 0;
  } else { m = 0; frac = 0; st = 1; }

  /* (4) the rounding decision on the magnitude */
  mtrunc = m;
  up = 0;
  switch (rnd) {
  case LOWP_RND_NE:
    up = (frac >> 63) && ((frac << 1) != 0 || st || (m & 1));
    break;
  case LOWP_RND_NA: up = (int)(frac >> 63); break;
  case LOWP_RND_TZ: break;
  case LOWP_RND_UP: up = !neg && (frac || st); break;
  case LOWP_RND_DN: up = neg && (frac || st); break;
  case LOWP_RND_TO:
    if (frac || st) m |= 1;
    break;
  case LOWP_RND_SR: {
    /* Limited-precision stochastic rounding: the fraction truncated to k
       bits, plus k random bits, carries into m with probability
       floor(frac * 2^k) / 2^k (Fitzgibbon & Felix 2025; Croci et al., R.
       Soc. Open Sci. 2022, "Stochastic rounding: implementation, error
       analysis and applications"). Exact values never move. */
    int k = (pol->sr_bits <= 0 || pol->sr_bits > 32) ? 32 : pol->sr_bits;
    uint64_t fk = frac >> (64 - k);
    uint64_t r = lowp_rng_u32(pol->sr_seed, index, 0) >> (32 - k);
    up = fk + r >= ((uint64_t)1 << k);
    break;
  }
  default: break;
  }
  m += (uint64_t)up;
  if (m == mtrunc) cmp = (frac || st) ? -1 : 0; /* magnitude vs exact */
  else cmp = 1;

  /* m <= 2^p <= 2^53 and q is within binary64's range, so this is exact */
  mag = (q >= -1074 && q <= 1023) ? lowp__scale2((double)m, (int)q)
                                  : ldexp((double)m, (int)q); /* invalid f */

  /* (5) overflow */
  if (mag > lowp_format_xmax(f))
    return overflow_result(y, neg, mode_rounds_away(rnd, neg) || up, f, pol);

  /* (6) what the format or the policy does not allow */
  if (mag == 0.0) {
    if (!f->has_zero) { mag = lowp_format_xmin(f); cmp = 1; }
  } else if (pol->ftz && mag < lowp_format_xmin(f)) {
    mag = 0.0; cmp = -1;
  }
  tern = neg ? -cmp : cmp;
  *y = (mag == 0.0) ? zero_of(neg, f) : signed_val(neg, mag);
  return tern;
}

int lowp_round_f64(double *y, double x, const lowp_format_t *f,
                   const lowp_policy_t *pol, lowp_rounding_t rnd) {
  uint64_t u, frac;
  int neg, bexp;
  if (!pol) pol = &default_policy;
  /* an invalid mode is reported for every input, NaN and inf included */
  if ((unsigned)rnd >= LOWP_RND_COUNT) { *y = NAN; return INT32_MIN; }
  if (rnd == LOWP_RND_NE && !pol->ftz && !pol->daz) { /* the common case in one addition (format/round_ne.h) */
    int tern;
    if (lowp__round_ne_fast(y, &tern, x, 0, f)) return tern;
  }
  memcpy(&u, &x, sizeof u);
  neg = (int)(u >> 63);
  bexp = (int)((u >> 52) & 0x7ff);
  frac = u & ((UINT64_C(1) << 52) - 1);
  if (bexp == 0x7ff) {
    if (frac) return nan_result(y, neg, f, pol, 1);
    return inf_result(y, neg, f, pol);
  }
  if (bexp == 0) {
    if (frac == 0 || pol->daz)
      return lowp_round_sig(y, neg, 0, 0, 0, f, pol, rnd, pol->sr_offset);
    /* subnormal: value = frac * 2^-1074; normalise to bit 63 */
    {
      int lz = 0;
      while (!(frac & (UINT64_C(1) << 63))) { frac <<= 1; lz++; }
      /* top bit now at 63: value = frac * 2^(-1074 - lz); e - 63 = -1074 - lz */
      return lowp_round_sig(y, neg, -1074 - lz + 63, frac, 0, f, pol, rnd,
                            pol->sr_offset);
    }
  }
  return lowp_round_sig(y, neg, bexp - 1023, ((UINT64_C(1) << 52) | frac) << 11,
                        0, f, pol, rnd, pol->sr_offset);
}

int lowp_round_f32(double *y, float x, const lowp_format_t *f,
                   const lowp_policy_t *pol, lowp_rounding_t rnd) {
  uint32_t u;
  if (!pol) pol = &default_policy;
  memcpy(&u, &x, sizeof u);
  if (pol->daz && (u & 0x7f800000u) == 0 && (u & 0x007fffffu) != 0)
    return lowp_round_sig(y, (int)(u >> 31), 0, 0, 0, f, pol, rnd, pol->sr_offset);
  /* every binary32 value is a binary64 value; fp64 DAZ cannot trigger on a
     converted fp32 value (fp32 subnormals are fp64 normals) */
  return lowp_round_f64(y, (double)x, f, pol, rnd);
}

int lowp_round_array_f64(double *y, const double *x, size_t n,
                         const lowp_format_t *f, const lowp_policy_t *pol,
                         lowp_rounding_t rnd) {
  lowp_policy_t p = pol ? *pol : default_policy;
  if ((unsigned)rnd >= LOWP_RND_COUNT) return LOWP_EROUND;
  if (lowp_format_validate(f, NULL, 0)) return LOWP_EFORMAT;
  /* the branch-free copy (round_fast64.c), held to the loop below bit for bit */
  if (lowp_round_fast64_applies(f, &p, rnd))
    return lowp_round_fast_values_f64_isa(y, x, n, f, &p, rnd, NULL);
  return lowp_round_array_f64_ref(y, x, n, f, pol, rnd);
}

int lowp_round_array_f64_ref(double *y, const double *x, size_t n,
                             const lowp_format_t *f, const lowp_policy_t *pol,
                             lowp_rounding_t rnd) {
  lowp_policy_t p = pol ? *pol : default_policy;
  uint64_t base = p.sr_offset;
  size_t i;
  if ((unsigned)rnd >= LOWP_RND_COUNT) return LOWP_EROUND;
  if (lowp_format_validate(f, NULL, 0)) return LOWP_EFORMAT;
  for (i = 0; i < n; i++) {
    p.sr_offset = base + i;
    (void)lowp_round_f64(&y[i], x[i], f, &p, rnd);
  }
  return LOWP_OK;
}
