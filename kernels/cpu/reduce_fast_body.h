/* lowp_reduce_fast's loops, compiled once per instruction set: included by
   reduce_fast.c with SFX (a name suffix), ATTR (a target attribute or
   nothing), FTWO_INLINE (1: kind f's leaf is FTWO, inlined into the
   subtrees; 2: FTWO is defined here by LOWP_FTWO256, the fast way inlined
   with the TwoSum below as its slow way; 0: the TwoSum below), FTWO
   (ftwo512, or the name LOWP_FTWO256 gives) where FTWO_INLINE, TILE_MAX (the largest unrolled pairwise
   subtree), VFMA (the binary32 fused multiply-add on a vf), TERM and ADD_TO
   (the binary64 lanes' term and add_to, or their AVX2 copies) defined, and
   REC_D (kind d's recursive sums, reduce_fast_tile.h's KREC), PBASE_F
   (kind f's pairwise subtrees, its KPBASE), VADD_D and VADD_F (its KVADD
   on a vd and on a vf) where the instruction set has its own. No
   include guard: meant to be included several times. */

#define LOWP_CAT2(a, b) a##b
#define LOWP_CAT(a, b) LOWP_CAT2(a, b)
#define FN(name) LOWP_CAT(name, SFX)

/* pairwise over [lo, hi), hi - lo >= 1: leaves are exact terms, every
   addition rounds once (lowp_accum_dot's pairwise_raw, mid the same) */
ATTR static void FN(pair_)(double *out, const octx_t *c, size_t lo, size_t hi) {
  double tmp[OW] __attribute__((aligned(64)));
  size_t mid;
  if (hi - lo == 1) {
    TERM(out, c, lo);
    return;
  }
  mid = lo + (hi - lo) / 2;
  FN(pair_)(out, c, lo, mid);
  FN(pair_)(tmp, c, mid, hi);
  ADD_TO(out, tmp, c);
}

/* recursive over [lo, hi), hi - lo >= 1: the first two terms in one
   rounding, a lone term rounded once (round(t + 0)) */
ATTR static void FN(rec_)(double *out, const octx_t *c, size_t lo, size_t hi) {
  double t[OW] __attribute__((aligned(64)));
  size_t l;
  TERM(out, c, lo);
  if (hi - lo == 1) {
    memset(t, 0, sizeof t);
    ADD_TO(out, t, c);
    return;
  }
  for (l = lo + 1; l < hi; l++) {
    TERM(t, c, l);
    ADD_TO(out, t, c);
  }
}

/* one row of outputs (OW columns) in the order, k >= 1 */
ATTR static void FN(row_)(double *out, const octx_t *c, size_t k) {
  double part[OW] __attribute__((aligned(64)));
  size_t lo, w;
  switch (c->order) {
  case LOWP_ACC_PAIRWISE:
    if (k == 1) FN(rec_)(out, c, 0, 1);
    else FN(pair_)(out, c, 0, k);
    break;
  case LOWP_ACC_BLOCKED:
  case LOWP_ACC_SPLITK:
    w = c->order == LOWP_ACC_BLOCKED ? c->block : (k + c->block - 1) / c->block;
    if (w == 0) w = 1;
    /* block sums, added left to right from the first (no initial rounding) */
    FN(rec_)(out, c, 0, w < k ? w : k);
    for (lo = w; lo < k; lo += w) {
      FN(rec_)(part, c, lo, lo + w < k ? lo + w : k);
      ADD_TO(out, part, c);
    }
    break;
  default:
    FN(rec_)(out, c, 0, k);
    break;
  }
}

/* ---- the register tiles (reduce_fast_tile.h), three kinds */

/* kind f: s[r] = round(t_l + s[r]), one fmaf */
ATTR AI void FN(ftadd_)(vf *s, const tctx_t *c, size_t l, size_t j) {
  vf b;
  int r;
  memcpy(&b, c->pf + l * OWF + j, sizeof b); /* (clang: no vf returned across targets) */
  for (r = 0; r < MR; r++) VFMA(&s[r], c->af[r][l], &b);
}

/* kind f's leaf: FTWO (ftwo512) inlined on AVX-512 (FTWO_INLINE), else
   this one, one call (inlined into every subtree it made the object three
   times larger), compiled in each copy (a generic helper's scalar times
   vector, inlined here, was built through memory) */
#if FTWO_INLINE == 1
#define FTWO_K FTWO
#else
/* *o = x in every lane (gcc 12 built scalar times vector, used twice, on
   AVX2 through memory, eight stores then wide loads) */
ATTR AI void FN(dsplat_)(vd *o, double x) { *o = (vd){x, x, x, x, x, x, x, x}; }

/* s[r] = round(t_l + t_{l+1}), the two terms exact: TwoSum rounded to odd
   at 53 bits, then to binary32 by the conversion (rne; Boldo and
   Melquiond, Theorem 1: 53 >= 24 + 2) */
ATTR static __attribute__((noinline)) void FN(ftwo_)(vf *s, const tctx_t *c, size_t l,
                                                     size_t j) {
  const float *b0 = c->pf + l * OWF + j, *b1 = b0 + OWF;
  vd b0l, b0h, b1l, b1h;
  int r;
  { /* (clang: no vd returned across targets) */
    vf8 x[4];
    memcpy(&x[0], b0, sizeof x[0]), memcpy(&x[1], b0 + 8, sizeof x[1]);
    memcpy(&x[2], b1, sizeof x[2]), memcpy(&x[3], b1 + 8, sizeof x[3]);
    b0l = __builtin_convertvector(x[0], vd), b0h = __builtin_convertvector(x[1], vd);
    b1l = __builtin_convertvector(x[2], vd), b1h = __builtin_convertvector(x[3], vd);
  }
  for (r = 0; r < MR; r++) {
    vd a0, a1;
    vf8 h[2];
    FN(dsplat_)(&a0, c->ad[r][l]), FN(dsplat_)(&a1, c->ad[r][l + 1]);
    h[0] = __builtin_convertvector(vadd_odd(a0 * b0l, a1 * b1l, M_NE), vf8);
    h[1] = __builtin_convertvector(vadd_odd(a0 * b0h, a1 * b1h, M_NE), vf8);
    memcpy(&s[r], h, sizeof h);
  }
}
#if FTWO_INLINE == 2
/* the fast way inlined, this TwoSum leaf its slow way (LOWP_FTWO256) */
LOWP_FTWO256(FTWO, FN(ftwo_))
#define FTWO_K FTWO
#else
#define FTWO_K FN(ftwo_)
#endif
#endif

#define KFN(name) FN(LOWP_CAT(name, KSFX))
#define KSFX _d
#define TV vd
#define KL VW
#define KLEAF2 leaf2_d
#define KTADD tadd_d
#define KLONE lone_d
#ifdef REC_D
#define KREC REC_D
#endif
#ifdef VADD_D
#define KVADD VADD_D
#else
#define KVADD(x, y) (*(x) = *(x) + *(y))
#endif
#include "cpu/reduce_fast_tile.h"
#undef KREC
#undef KVADD
#ifdef VADD_F
#define KVADD VADD_F
#else
#define KVADD(x, y) (*(x) = *(x) + *(y))
#endif
#undef KSFX
#undef TV
#undef KL
#undef KLEAF2
#undef KTADD
#undef KLONE
#define KSFX _f
#define TV vf
#define KL 16
#define KLEAF2 FTWO_K
#define KTADD FN(ftadd_)
#define KLONE lone_f
#ifdef PBASE_F
#define KPBASE PBASE_F
#endif
#include "cpu/reduce_fast_tile.h"
#undef KPBASE
#undef KSFX
#undef KLEAF2
#undef KTADD
#undef KLONE
#define KSFX _r
#define KLEAF2 leaf2_r
#define KTADD tadd_r
#define KLONE lone_r
#include "cpu/reduce_fast_tile.h"
#undef KSFX
#undef TV
#undef KL
#undef KLEAF2
#undef KTADD
#undef KLONE
#undef KVADD
#undef KFN
#undef FTWO_K

#undef FN
#undef LOWP_CAT
#undef LOWP_CAT2
