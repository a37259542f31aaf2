/* lowp__round_ne -- round to nearest even in binary64 arithmetic, for the scalar rounding core (internal) */
#ifndef LOWP_ROUND_NE_H
#define LOWP_ROUND_NE_H

/*
 * lowp_round_sig rounds any significand to any format in integer steps;
 * most of its calls (recursive sums in fp32 or fp16, error-growth's and
 * order-revelation's reference kernels: lowp_round_sig, lowp_accum_add and
 * lowp_format_xmax were 30-40% of their samples, 2026-11-30) round a
 * binary64 value to nearest even in an IEEE-like format. That one case is
 * a single binary64 addition: for |x| in [2^E, 2^(E+1)) and a format of p
 * bits, c = 2^(E + 53 - p) (E raised to emin below the normal range) makes
 * the spacing of binary64 around c equal to the format's quantum
 * 2^(E + 1 - p), and |x| < 2^(E+1) <= c keeps |x| + c in c's binade, so
 * fl(|x| + c) - c is |x| rounded to that quantum to nearest, ties to the
 * even multiple (the parity of c's significand is even), and the
 * subtraction is exact. It is the construction of the array fast paths
 * (format/round_add.h, derived in round_fast64.c, there with 1.5 c for
 * signed x and every mode; and kernels/cpu/qdq.c's group loop), written
 * here once more for one value because the scalar core needs what those
 * loops do not give: the ternary result, and a TwoSum remainder's say on
 * a lattice point or a midpoint. (kernels/cpu/gemm_lanes.c calls it per
 * addition too, ahead of lowp_accum_add.)
 *
 * lowp__round_ne_fast returns 1 and sets *y (the signed result) and *tern
 * (the sign of result - exact, as lowp_round_sig) where that construction
 * applies: round to nearest even under the default policy (no ftz/daz:
 * the caller checks), a format with signed zeros and subnormals whose
 * finite range binary64 holds with room (every IEEE-like format but fp64
 * itself), a finite binary64 |x| within the format's binades, and a result
 * at most the largest finite value (overflow keeps the full path and its
 * policy). sticky: the sign (-1, 0 or 1) of a remainder below |x|'s last
 * binary64 bit (lowp_accum_add's TwoSum error), which decides only an |x|
 * on the format's lattice or halfway between two of its values: those
 * return 0 when sticky != 0, for the full path. Returns 0 otherwise too,
 * having set nothing.
 */

#include "format/format.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline int lowp__round_ne_fast(double *y, int *tern, double x, int sticky, const lowp_format_t *f) {
  const int p = f->precision;
  uint64_t u, sg, cu;
  int64_t e, e0, emin_b;
  double a, c, r, d, h;
  int cmp;
  if (p < 2 || p > 52 || !f->has_sign || !f->has_zero || !f->subnormals || f->nan == LOWP_NAN_NEGZERO ||
      f->emin < -1000 || f->emax + 53 - p > 1000)
    return 0;
  memcpy(&u, &x, sizeof u);
  sg = u & ((uint64_t)1 << 63);
  u ^= sg;
  e0 = e = (int64_t)(u >> 52);
  if (e == 0 || e == 0x7ff || e - 1023 > f->emax) return 0; /* zero or subnormal, inf/NaN, past the top binade */
  emin_b = (int64_t)f->emin + 1023;
  if (e < emin_b) e = emin_b;
  memcpy(&a, &u, sizeof a);
  cu = (uint64_t)(e + 53 - p) << 52;
  memcpy(&c, &cu, sizeof c);
  r = (a + c) - c;
  /* below the top binade r <= 2^emax <= the largest finite value; in it, compare */
  if (e0 - 1023 == f->emax && r > lowp_format_xmax(f)) return 0;
  d = r - a; /* exact: r and a are within one quantum (or r = 0) */
  if (sticky) {
    h = c * 0x1p-53; /* half the format's quantum */
    if (d == 0 || d == h || d == -h) return 0;
  }
  cmp = d > 0 ? 1 : d < 0 ? -1 : 0;
  *tern = sg ? -cmp : cmp;
  memcpy(&u, &r, sizeof u);
  u |= sg;
  memcpy(y, &u, sizeof u);
  return 1;
}

/*
 * s + e (e a binary64 error term, |e| <= ulp(s)/2, or 0) rounded once to binary32 (rne) by the
 * hardware, for |s| in [2^-125, 2^126) or an exact zero: s made round-to-odd (an inexact even s moves
 * one unit toward the exact value: its bits, those of a normal number, plus or minus one), then
 * converted to float (a zero keeps its sign).
 * Rounding to odd in 53 bits and then to nearest in p <= 51 bits is rounding to nearest once (Boldo &
 * Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd",
 * IEEE TC 57(4), 2008, Theorem 1). Elsewhere (near binary32's subnormals or its overflow, NaN, inf)
 * 0, having set nothing: the caller takes the long way. The same bits as lowp_round_f64 and
 * lowp_accum_add for fp32 (tests/tround_ne.c, against MPFR), several times faster.
 */
static inline int lowp__fp32_rne(double *z, double s, double e) {
  uint64_t u;
  if (!(fabs(s) < 0x1p126 && (fabs(s) >= 0x1p-125 || (s == 0 && e == 0)))) return 0;
  if (e != 0) {
    memcpy(&u, &s, sizeof u);
    if (!(u & 1)) u += (e > 0) == (s > 0) ? 1 : (uint64_t)-1; /* magnitude up toward e, or down */
    memcpy(&s, &u, sizeof u);
  }
  *z = (double)(float)s;
  return 1;
}

/* A format whose normal range from 2^-126 up to 2^127 is binary32's, with signed zeros (-0 not its NaN):
   where lowp__add_fp32 applies (its results are normal binary32 numbers or zeros) */
static inline int lowp__fp32_like(const lowp_format_t *f) {
  return f->precision == 24 && f->emin == -126 && f->emax == 127 && f->has_sign && f->has_zero &&
         f->nan != LOWP_NAN_NEGZERO;
}

/* x + y (finite binary64 numbers) rounded once to binary32 (rne), in a format lowp__fp32_like accepts:
   TwoSum, then lowp__fp32_rne; *tern the sign of result - exact (as lowp_round_sig). An exact zero
   sum (e = 0: binary64 sums underflow without loss) is binary64's own (IEEE 754 6.3: -0 only from
   -0 + -0), as lowp_accum_add gives. 0: not taken (nothing set) */
static inline int lowp__add_fp32(double *z, int *tern, double x, double y) {
  double s = x + y, bb = s - x, e = (x - (s - bb)) + (y - bb), r, d;
  if (!lowp__fp32_rne(&r, s, e)) return 0;
  d = r - s; /* exact: r and s are normal numbers within a factor of 2 (Sterbenz), or both zero */
  *tern = d > e ? 1 : d < e ? -1 : 0;
  *z = r;
  return 1;
}

#endif
