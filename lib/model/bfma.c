/* lowp_bfma -- one tensor-core block FMA, computed exactly with integers */

/*
 * The model is described in model/tc.h. Here every value is unpacked into
 * an integer significand and a power of two; products are exact 64-bit
 * integer products; alignment is a shift of those integers with the cut
 * (truncation, or rounding) done on the bits shifted out; the block sum is
 * one signed 64-bit integer. Nothing is approximated in floating point: the
 * only rounding of the result is lowp_round_sig, from the exact sum.
 *
 * Range of the integers (why int64 is enough): a product's significand at
 * 2^x is below 4, so a cut term is below 2^(F+2); c is below 2^(F+1); the sum
 * of n products and c is below (n+1) 2^(F+2). lowp_bfma_validate keeps
 * F + 2 + log2(b+1) <= 62, and lowp_bfma refuses longer blocks.
 */

#include "bits.h"
#include "model/tc.h"
#include "model/tc_int.h"
#include "status.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "io/escape.h"

/* ------------------------------------------------------ private helpers */

/* A term with a sticky bit: F bits plus one bit that ORs everything below. */
static uint64_t cut_sticky(uint64_t M, int E, int L) {
  int s = L - E; /* L is already one below the F-bit quantum */
  if (s <= 0) return M << (-s);
  if (s >= 64) return M != 0;
  return (M >> s) | ((M & ((UINT64_C(1) << s) - 1)) != 0);
}

/* does the cut of M 2^E at 2^L (M > 0) drop nonzero bits? (M is odd: lowp__tc_unpack) */
static int cut_inexact(uint64_t M, int E, int L) {
  int s = L - E;
  return s > 0 && (s >= 64 || (M & ((UINT64_C(1) << s) - 1)) != 0);
}

/* Round sign * S 2^L to format f (S > 0) by lowp__tc_round_out; ex (NULL:
   not wanted) gets the value rounded, truncated to binary64 with a sticky
   bit (lib/measure/fpx.h's convention). */
static void round_out(double *y, int neg, uint64_t S, int L, const lowp_format_t *f,
                      lowp_rounding_t rnd, int ovf_inf, lowp_bfma_exact_t *ex) {
  if (ex) { /* S < 2^62 and L within binary64's normal range: ldexp is exact */
    int nb = lowp_bitlen64(S), cut = nb > 53 ? nb - 53 : 0;
    ex->x = ldexp((double)(S >> cut), L + cut) * (neg ? -1.0 : 1.0);
    ex->sticky = (S & ((UINT64_C(1) << cut) - 1)) != 0;
  }
  lowp__tc_round_out(y, neg, S, L, f, rnd, ovf_inf);
}

/* ----------------------------------------------------------- public API */

int lowp_bfma_validate(const lowp_bfma_t *p, char *err, size_t errlen) {
  const char *why = NULL;
  int lb = lowp_bitlen64((uint64_t)(p->b > 0 ? p->b : 1));
  if (p->b < 1 || p->b > 1024) why = "b must be in [1, 1024]";
  else if (p->F < 1 || p->F + p->sticky + 2 + lb > 62)
    why = "F too large for the exact 64-bit block sum (F + 2 + log2(b+1) <= 62)";
  else if (p->align != LOWP_RND_TZ && p->align != LOWP_RND_NE && p->align != LOWP_RND_TO)
    why = "align must be rtz, rne or rto";
  else if (p->sticky && p->align != LOWP_RND_TZ)
    why = "sticky needs align=rtz";
  else if ((unsigned)p->out_rnd >= LOWP_RND_COUNT || p->out_rnd == LOWP_RND_SR ||
           (unsigned)p->out16_rnd >= LOWP_RND_COUNT || p->out16_rnd == LOWP_RND_SR ||
           (unsigned)p->c_rnd >= LOWP_RND_COUNT || p->c_rnd == LOWP_RND_SR)
    why = "output rounding must be one of rne, rna, rtz, rup, rdn, rto";
  else if (p->out_frac < 0 || p->out_frac > 52) why = "outfrac must be in [0, 52]";
  else if ((unsigned)p->zsum_pos > 1 || (unsigned)p->zrnd_pos > 1 || (unsigned)p->c0_emin > 1)
    why = "zsum, zrnd and c0align are two-valued (0 or 1)";
  if (why) lowp_errf(err, errlen, 0, "%s", why);
  return why ? LOWP_EINVAL : LOWP_OK;
}

/*
 * The block: see model/tc.h. Special values first (NaN, inf), then the
 * all-zero block, then the exact integer path.
 */
int lowp_bfma(double *d, const double *a, const double *b, size_t n, double c,
              const lowp_bfma_t *p, const lowp_format_t *in,
              const lowp_format_t *out) {
  return lowp_bfma_ex(d, NULL, a, b, n, c, p, in, out);
}

int lowp_bfma_ex(double *d, lowp_bfma_exact_t *ex, const double *a, const double *b,
                 size_t n, double c, const lowp_bfma_t *p, const lowp_format_t *in,
                 const lowp_format_t *out) {
  uint64_t Mi[1025], Mc = 0;
  int Ei[1025], xi[1025], negi[1025];
  int Ec = 0, xc = 0, X = INT32_MIN, L, cnt = 0, k, allneg = 1, anynz = 0, xemin;
  int pinf = 0, ninf = 0, nan = 0;
  int64_t S = 0;
  size_t i;
  lowp_format_t mid;

  if (lowp_bfma_validate(p, NULL, 0) != LOWP_OK || n > 1024) return LOWP_EINVAL;

  /* (1) special values */
  for (i = 0; i < n; i++) {
    double ai = a[i], bi = b[i];
    if (isnan(ai) || isnan(bi)) nan = 1;
    else if (isinf(ai) || isinf(bi)) {
      if (ai == 0 || bi == 0) nan = 1;
      else if ((ai < 0) != (bi < 0)) ninf = 1;
      else pinf = 1;
    }
  }
  if (isnan(c)) nan = 1;
  else if (isinf(c)) { if (c < 0) ninf = 1; else pinf = 1; }
  if (ex) { ex->x = 0.0; ex->sticky = 0; ex->cut = 0; }
  if (nan || (pinf && ninf)) { *d = NAN; if (ex) ex->x = NAN; return LOWP_OK; }
  if (pinf || ninf) { *d = pinf ? INFINITY : -INFINITY; if (ex) ex->x = *d; return LOWP_OK; }

  /* (2) unpack: products exact, exponents per the hardware's convention:
     floor(log2|v|), clamped at the emin of the format the multiplier sees.
     That is the input's, except on the late-c datapath: fp8 mma.sync on
     sm_90/sm_100 converts each fp8 value to fp16 (F2FP, exact) and
     multiplies in fp16 HMMAs (tests/tsass.c decodes it), where an e4m3
     subnormal (2^-9 .. 7 2^-9) is a normal fp16 value with its own exponent,
     not e4m3's emin -6. (e5m2 has fp16's exponent range: no change.) */
  xemin = in->emin;
  if (p->late_c && lowp_format_width(in) <= 8 && LOWP_FMT_FP16.emin < xemin) xemin = LOWP_FMT_FP16.emin;
  for (i = 0; i < n; i++) {
    uint64_t ma, mb;
    int ea, eb, xa, xb;
    int neg = signbit(a[i]) != signbit(b[i]);
    if (a[i] == 0 || b[i] == 0) { allneg &= neg; continue; }
    if (lowp__tc_unpack(&ma, &ea, &xa, a[i], xemin) || lowp__tc_unpack(&mb, &eb, &xb, b[i], xemin))
      return LOWP_EINVAL;
    Mi[cnt] = ma * mb; /* < 2^64: both below 2^32 */
    Ei[cnt] = ea + eb;
    xi[cnt] = xa + xb;
    negi[cnt] = neg;
    if (xi[cnt] > X) X = xi[cnt];
    cnt++;
    anynz = 1;
  }
  if (c != 0) {
    if (lowp__tc_unpack(&Mc, &Ec, &xc, c, out->emin)) return LOWP_EINVAL;
    if (xc > X) X = xc;
    anynz = 1;
  } else {
    allneg &= signbit(c) != 0;
    if (p->c0_emin && out->emin > X) X = out->emin; /* c0align=emin: c = 0 at 2^emin */
  }
  if (!anynz) { /* exact zero: -0 only if every addend is -0 (IEEE 754 6.3), or +0 */
    *d = allneg && !p->zsum_pos ? -0.0 : 0.0;
    return LOWP_OK;
  }

  /* (3) align to 2^(X-F), cut, and add exactly */
  L = X - p->F - (p->sticky ? 1 : 0);
  for (k = 0; k < cnt; k++) {
    uint64_t t = p->sticky ? cut_sticky(Mi[k], Ei[k], L)
                           : lowp__tc_cut(Mi[k], Ei[k], L, p->align);
    S += negi[k] ? -(int64_t)t : (int64_t)t;
    if (ex && !ex->cut) ex->cut = cut_inexact(Mi[k], Ei[k], L);
  }
  if (c != 0) {
    uint64_t t = p->sticky ? cut_sticky(Mc, Ec, L) : lowp__tc_cut(Mc, Ec, L, p->align);
    S += signbit(c) ? -(int64_t)t : (int64_t)t;
    if (ex && !ex->cut) ex->cut = cut_inexact(Mc, Ec, L);
  }
  if (S == 0) { *d = 0.0; return LOWP_OK; } /* exact cancellation: +0 */

  /* (4) normalise once and round once (twice only for the fp8 accumulator:
     first to out_frac bits, then to a narrower output) */
  {
    int neg = S < 0;
    uint64_t U = neg ? (uint64_t)(-(S + 1)) + 1 : (uint64_t)S;
    int narrow = out->precision < LOWP_FMT_FP32.precision;
    lowp_rounding_t rnd = narrow ? p->out16_rnd : p->out_rnd;
    if (p->out_frac > 0 && !narrow) {
      mid = *out;
      mid.name = "tc-accumulator";
      if (p->out_frac + 1 < mid.precision) mid.precision = p->out_frac + 1;
      round_out(d, neg, U, L, &mid, p->out_rnd, p->ovf_inf, ex);
    } else {
      round_out(d, neg, U, L, out, rnd, p->ovf_inf, ex);
    }
    if (*d == 0 && p->zrnd_pos) *d = 0.0; /* zrnd=pos: rounded to zero, +0 */
  }
  return LOWP_OK;
}
