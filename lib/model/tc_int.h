/* lowp__tc -- exact integer helpers shared by the tensor-core models (internal to lib/model) */
#ifndef LOWP_TC_INT_H
#define LOWP_TC_INT_H

/*
 * Values unpacked into an odd integer significand and a power of two, terms
 * cut at a power of two, and one rounding of an exact integer sum: the
 * block FMA (bfma.c) and the block-scaled MMA (bsmma.c) share them. Not part
 * of the public API.
 */

#include "bits.h"
#include "format/format.h"
#include "status.h"

#include <math.h>
#include <stdint.h>

/* |v| = M 2^E with M odd (or v = 0: M = 0); x = max(floor(log2|v|), emin).
   Returns 0, or -1 if M needs more than 32 bits (not a narrow-format value). */
static inline int lowp__tc_unpack(uint64_t *M, int *E, int *x, double v, int emin) {
  int ex;
  double f = frexp(fabs(v), &ex); /* |v| = f 2^ex, f in [0.5, 1) */
  uint64_t m;
  int e;
  if (f == 0) { *M = 0; *E = 0; *x = emin; return 0; }
  m = (uint64_t)ldexp(f, 53); /* exact: f has at most 53 bits */
  e = ex - 53;
#if defined(__GNUC__)
  {
    int tz = __builtin_ctzll(m);
    m >>= tz;
    e += tz;
  }
#else
  while (!(m & 1)) { m >>= 1; e++; }
#endif
  if (m >> 32) return -1;
  *M = m;
  *E = e;
  *x = (ex - 1 > emin) ? ex - 1 : emin;
  return 0;
}


/* floor, or a rounding, of M 2^E in units of 2^L (M 2^E < 2^(L+62)). */
static inline uint64_t lowp__tc_cut(uint64_t M, int E, int L, lowp_rounding_t rnd) {
  int s = L - E;
  uint64_t q, rem, half;
  if (s <= 0) return M << (-s); /* exact; in range by the header's bound */
  if (s >= 64) { /* q = 0; only s == 64 can reach half a unit */
    if (rnd == LOWP_RND_TO) return M != 0;
    if (rnd == LOWP_RND_NE) return s == 64 && M > (UINT64_C(1) << 63);
    return 0;
  }
  q = M >> s;
  rem = M & ((UINT64_C(1) << s) - 1);
  half = UINT64_C(1) << (s - 1);
  switch (rnd) {
  case LOWP_RND_NE: return q + (rem > half || (rem == half && (q & 1)));
  case LOWP_RND_TO: return q | (rem != 0);
  default: return q; /* LOWP_RND_TZ: truncation, the hardware's cut */
  }
}

/* Round sign * S 2^L to format f (S > 0). ovf_inf: beyond emax -> inf. */
static inline void lowp__tc_round_out(double *y, int neg, uint64_t S, int L,
                      const lowp_format_t *f, lowp_rounding_t rnd, int ovf_inf) {
  int nb = lowp_bitlen64(S);
  int64_t e = (int64_t)L + nb - 1; /* value in [2^e, 2^(e+1)) */
  uint64_t sig = S << (64 - nb);
  if (ovf_inf && e > f->emax) { *y = neg ? -INFINITY : INFINITY; return; }
  lowp_round_sig(y, neg, e, sig, 0, f, NULL, rnd, 0); /* a carry past xmax gives
                                                        inf (IEEE) in the modes that round up */
}

#endif
