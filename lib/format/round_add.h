/* round_add -- rounding to a format's values by one binary32/binary64 addition
   (the AVX2 and AVX-512 loops of round_fast.c and round_fast64.c) */

/*
 * The construction (round_fast64.c has its derivation): with E =
 * clamp(floor(log2|x|), emin, emax + 1) and f's quantum q = 2^(E - p + 1) there, M =
 * 1.5 2^(E + P - p) (P = 24 for binary32, 53 for binary64) is a multiple of
 * q whose binade [2^K, 2^(K+1)), K = E + P - p, holds x + M with spacing q,
 * so t = x + M is x rounded to f's grid plus M, and y = t - M is exact.
 * Each loop below differs from the one before it (issue 34's rounds) in
 * the work per vector, counted in instructions; the results are the same:
 *
 *   - (kept) E is clamped above, at emax + 1: were M to overflow the
 *     type, M = 2^E mul is DBL_MAX (FLT_MAX) under FE_TOWARDZERO and
 *     FE_DOWNWARD, not infinity, and y a small number (tround_fast64
 *     found it when the clamp was dropped);
 *   - AVX2 (no embedded rounding: t is in MXCSR's mode, one of x's two
 *     neighbours on f's grid plus M): the directed modes step t by one of its
 *     ulps, q, as an integer (its bits +-1: t and t +- q lie in one binade,
 *     or the step up lands on 2^(K+1), the next integer too), instead of
 *     adding q computed by a multiplication; rtz and rto round |x|;
 *   - AVX-512: the mode is the addition's (embedded rounding); rna is rtz of
 *     |x| + q/2, that sum taken toward zero by one fma (e 2^-p + |x|): a
 *     multiple of q/2 (p <= P - 2, so f's grid points are type values even
 *     where the sum crosses into the next binade) truncated, never pushed
 *     over a grid point, so a tie goes up and anything below it down; rto
 *     sets the last bit of the truncated t where t - M != |x|; t - M is
 *     taken to nearest by the instruction, so M - M is +0 in every MXCSR
 *     mode and |x|'s results need no absolute value;
 *   - the sign and the overflow value: where the reference's overflow values
 *     of the two signs differ only in the sign bit, y's magnitude or that
 *     value is chosen, then x's sign put in (one select, one or; gen 0);
 *     otherwise the value per sign by a second select (gen 1: IEEE formats
 *     in rup and rdn, infinity on one side, xmax on the other), and for the
 *     formats without -0 (gen 2: fnuz, whose NaN has no sign either) x's
 *     sign only where y != 0.
 *
 *   - y of LOWP_ROUND_STREAM_BYTES or more (round_fast.h) is written by
 *     streaming stores (vmovntpd/vmovntps, an sfence at the end): an array
 *     that large leaves the caches anyway, and a plain store first reads
 *     each line of y from memory (issue 34: at 2^24 binary64 values, 8 bytes
 *     read and 8 written a value against the binary32 encoder's 4 and 1-2,
 *     the loop was bound by that traffic, 1.3-1.7x the encoder on AVX2), and
 *     x is prefetched 1 KiB ahead (the hardware's prefetcher alone left the
 *     loop 20-40% above a streaming copy of the same bytes on the shared
 *     Xeon; 512 B and 2 KiB measured alike). The elements before y's first
 *     vector boundary run the reference loop. (The address 1 KiB ahead is
 *     formed as an integer: it may lie past x's end, and a prefetch never
 *     faults.)
 *
 * rne and rna need MXCSR to round to nearest on AVX2 (its addition's mode),
 * FTZ and DAZ off on both: the callers check. A vector holding an infinity
 * or NaN runs the reference loop, and so do the last elements.
 *
 * The includer defines RA_T (float or double), RA_S (ps or pd), RA_I
 * (epi32 or epi64), RA_V2 and RA_V5 (the 256- and 512-bit vector types),
 * RA_SET1I and RA_SET1I5 (the 256- and 512-bit integer broadcasts of a
 * uint64_t), RA_M5 (the AVX-512 mask type),
 * RA_SIGN, RA_EXPM (the sign bit and the exponent field, as integers),
 * RA_REF (the reference loop), RA_AVX512_TARGET and RA_PFX (a prefix for the
 * functions defined here); it is included once per type.
 */

#include "format/format.h"
#include "format/round_fast.h"
#include "format/round_fast_mode.h"

#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifndef LOWP_ROUND_ADD_CONSTS
#define LOWP_ROUND_ADD_CONSTS
/* What the loops need, per call: binary64 values (exact in binary32 too for
   binary32's formats) and bits */
typedef struct {
  double lo, hi;     /* 2^emin, 2^(emax + 1) */
  double mul;        /* 1.5 2^(P - p): M = 2^E mul */
  double hmul;       /* 2^-p: q/2 = 2^E hmul (rna) */
  double xmax;
  uint64_t ovp, ovn; /* the reference's overflow values for x > 0 and x < 0, bits */
  int gen;           /* 0: ovn is ovp with the sign bit, ovp positive, f has -0;
                        1: other overflow values, f has -0; 2: f has no -0 */
} lowp_add_consts;

/* lowp_add_consts for f in a type of P significand bits whose sign bit is
   signbit; ovp and ovn: the reference's results of overflowing x > 0 and
   x < 0, as bits of that type */
static inline void lowp_add_consts_make(lowp_add_consts *a, const lowp_format_t *f, int P,
                                        uint64_t ovp, uint64_t ovn, uint64_t signbit) {
  const int negz = f->nan != LOWP_NAN_NEGZERO; /* f has -0 */
  a->lo = ldexp(1.0, f->emin), a->hi = ldexp(1.0, f->emax + 1);
  a->mul = ldexp(1.5, P - f->precision);
  a->hmul = ldexp(1.0, -f->precision);
  a->xmax = lowp_format_xmax(f);
  a->ovp = ovp, a->ovn = ovn;
  a->gen = !negz ? 2 : (ovp ^ ovn) == signbit && !(ovp & signbit) ? 0 : 1;
}
#endif

/* names pasted in one step (clang defines some prefixes, _mm512_setzero
   among them, as macros, which a pasting in two steps would expand) */
#define RA_P3_(a, b, c) a##b##c
#define RA_P3(a, b, c) RA_P3_(a, b, c)
#define RA_P2_(a, b) a##b
#define RA_P2(a, b) RA_P2_(a, b)
#define RA_FN(name) RA_P2(RA_PFX, name)
#define V2(op) RA_P3(_mm256_, op, RA_P2(_, RA_S)) /* _mm256_add_pd */
#define V5(op) RA_P3(_mm512_, op, RA_P2(_, RA_S))
#define I2(op) RA_P3(_mm256_, op, RA_P2(_, RA_I)) /* _mm256_add_epi64 */
#define I5(op) RA_P3(_mm512_, op, RA_P2(_, RA_I))
#define C2F(v) RA_P2(_mm256_castsi256_, RA_S)(v)  /* integer to vector */
#define F2C(v) RA_P3(_mm256_cast, RA_S, _si256)(v)
#define C5F(v) RA_P2(_mm512_castsi512_, RA_S)(v)
#define F5C(v) RA_P3(_mm512_cast, RA_S, _si512)(v)
#define CMP5(a, b, pr) RA_P3(_mm512_cmp_, RA_S, _mask)(a, b, pr)
#define SGN5(v) RA_P3(_mm512_mov, RA_I, _mask)(v) /* the sign bits, a mask */
#define RA_LANES2 ((int)(32 / sizeof(RA_T)))
#define RA_LANES5 ((int)(64 / sizeof(RA_T)))

/* the first elements, up to y's first multiple of al bytes, by the
   reference loop (y is a multiple of sizeof(RA_T)); returns their number */
static size_t RA_FN(head)(RA_T *y, const RA_T *x, size_t n, size_t al,
                          const lowp_format_t *f, const lowp_policy_t *pol, lowp_rounding_t rnd) {
  size_t h = (al - (size_t)((uintptr_t)(void *)y % al)) % al / sizeof(RA_T);
  if (h > n) h = n;
  if (h) (void)RA_REF(y, x, h, f, pol, rnd);
  return h;
}

/* AVX2, one mode (a constant after inlining); gen as lowp_add_consts's */
__attribute__((target("avx2"), always_inline)) static inline void
RA_FN(avx2_m)(RA_T *y, const RA_T *x, size_t n, const lowp_add_consts *c,
              const lowp_format_t *f, const lowp_policy_t *pol, lowp_rounding_t rnd,
              int mode, int gen, int nt) {
  const RA_V2 sgn = C2F(RA_SET1I(RA_SIGN)), absm = C2F(RA_SET1I(~RA_SIGN));
  const RA_V2 expm = C2F(RA_SET1I(RA_EXPM)), inf = V2(set1)((RA_T)INFINITY);
  const RA_V2 lo = V2(set1)((RA_T)c->lo), hi = V2(set1)((RA_T)c->hi), mul = V2(set1)((RA_T)c->mul);
  const RA_V2 hmul = V2(set1)((RA_T)c->hmul), xmax = V2(set1)((RA_T)c->xmax);
  const RA_V2 ovp = C2F(RA_SET1I(c->ovp)), ovn = C2F(RA_SET1I(c->ovn));
  const RA_V2 zero = V2(setzero)(), lsb = C2F(RA_SET1I(1));
  const int sgnd = mode == M_NE || mode == M_UP || mode == M_DN; /* x, not |x| */
  size_t i = nt ? RA_FN(head)(y, x, n, 32, f, pol, rnd) : 0;
  for (; i + RA_LANES2 <= n; i += RA_LANES2) {
    RA_V2 v, av, e, mm, s, t, yv, ya, sg, ovf, r;
    if (nt) _mm_prefetch((const char *)((uintptr_t)(x + i) + 1024), _MM_HINT_T0); /* see the top */
    v = V2(loadu)(x + i), av = V2(and)(v, absm);
    if (V2(movemask)(V2(cmp)(av, inf, _CMP_NLT_UQ))) {
      (void)RA_REF(y + i, x + i, RA_LANES2, f, pol, rnd); /* NaN or infinity */
      continue;
    }
    e = V2(min)(V2(max)(V2(and)(av, expm), lo), hi); /* 2^E */
    mm = V2(mul)(e, mul);
    s = sgnd ? v : av;
    t = V2(add)(s, mm); /* in MXCSR's mode */
    yv = V2(sub)(t, mm);
    /* a step of t by q: its bits plus or minus one (a mask is -1 or 0) */
    if (mode == M_UP) t = C2F(I2(sub)(F2C(t), F2C(V2(cmp)(yv, s, _CMP_LT_OQ))));
    if (mode == M_DN || mode == M_TZ || mode == M_TO)
      t = C2F(I2(add)(F2C(t), F2C(V2(cmp)(yv, s, _CMP_GT_OQ))));
    if (mode == M_TO) t = V2(or)(t, V2(and)(V2(cmp)(yv, s, _CMP_NEQ_UQ), lsb)); /* inexact */
    if (mode == M_NA) /* a tie rounded down to even: up */
      t = C2F(I2(sub)(F2C(t), F2C(V2(cmp)(V2(sub)(s, yv), V2(mul)(e, hmul), _CMP_EQ_OQ))));
    if (mode != M_NE) yv = V2(sub)(t, mm);
    ya = V2(and)(yv, absm); /* M - M is -0 under FE_DOWNWARD */
    sg = V2(and)(v, sgn);
    ovf = V2(cmp)(ya, xmax, _CMP_NLE_UQ);
    if (!gen) {
      r = V2(or)(V2(blendv)(ya, ovp, ovf), sg);
    } else {
      if (gen == 2) sg = V2(and)(sg, V2(cmp)(ya, zero, _CMP_NEQ_UQ));
      r = V2(blendv)(V2(or)(ya, sg), V2(blendv)(ovp, ovn, v), ovf);
    }
    if (nt) V2(stream)(y + i, r);
    else V2(storeu)(y + i, r);
  }
  if (nt) _mm_sfence();
  if (i < n) (void)RA_REF(y + i, x + i, n - i, f, pol, rnd);
}

/* AVX-512: the same on 512-bit vectors, the mode in the instruction */
__attribute__((target(RA_AVX512_TARGET), always_inline)) static inline void
RA_FN(avx512_m)(RA_T *y, const RA_T *x, size_t n, const lowp_add_consts *c,
                const lowp_format_t *f, const lowp_policy_t *pol, lowp_rounding_t rnd,
                int mode, int gen, int nt) {
  const RA_V5 sgn = C5F(RA_SET1I5(RA_SIGN)), absm = C5F(RA_SET1I5(~RA_SIGN));
  const RA_V5 expm = C5F(RA_SET1I5(RA_EXPM)), inf = V5(set1)((RA_T)INFINITY);
  const RA_V5 lo = V5(set1)((RA_T)c->lo), hi = V5(set1)((RA_T)c->hi), mul = V5(set1)((RA_T)c->mul);
  const RA_V5 hmul = V5(set1)((RA_T)c->hmul), xmax = V5(set1)((RA_T)c->xmax);
  const RA_V5 ovp = C5F(RA_SET1I5(c->ovp)), ovn = C5F(RA_SET1I5(c->ovn));
  const RA_V5 zero = V5(setzero)();
  const __m512i lsb = RA_SET1I5(1);
  const int sgnd = mode == M_NE || mode == M_UP || mode == M_DN;
  enum { RN = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC,
         RZ = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC };
  size_t i = nt ? RA_FN(head)(y, x, n, 64, f, pol, rnd) : 0;
  for (; i + RA_LANES5 <= n; i += RA_LANES5) {
    RA_V5 v, av, e, mm, s, t, yv, ya, r;
    __m512i sg;
    RA_M5 ovf;
    if (nt) _mm_prefetch((const char *)((uintptr_t)(x + i) + 1024), _MM_HINT_T0);
    v = V5(loadu)(x + i), av = V5(and)(v, absm);
    if (CMP5(av, inf, _CMP_NLT_UQ)) {
      (void)RA_REF(y + i, x + i, RA_LANES5, f, pol, rnd); /* NaN or infinity */
      continue;
    }
    e = V5(min)(V5(max)(V5(and)(av, expm), lo), hi);
    mm = V5(mul)(e, mul);
    s = sgnd ? v : av;
    if (mode == M_UP) t = V5(add_round)(s, mm, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    else if (mode == M_DN) t = V5(add_round)(s, mm, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    else if (mode == M_NE) t = V5(add_round)(s, mm, RN);
    else if (mode == M_NA) t = V5(add_round)(V5(fmadd_round)(e, hmul, av, RZ), mm, RZ);
    else t = V5(add_round)(s, mm, RZ); /* rtz, rto */
    if (mode == M_TO) /* inexact: the last bit set */
      t = C5F(I5(mask_or)(F5C(t), CMP5(V5(sub_round)(t, mm, RN), av, _CMP_NEQ_UQ),
                          F5C(t), lsb));
    yv = V5(sub_round)(t, mm, RN); /* M - M is +0 */
    ya = sgnd ? V5(and)(yv, absm) : yv;
    sg = F5C(V5(and)(v, sgn));
    ovf = CMP5(ya, xmax, _CMP_NLE_UQ);
    if (!gen) {
      r = C5F(I5(or)(F5C(V5(mask_blend)(ovf, ya, ovp)), sg));
    } else {
      if (gen == 2) sg = I5(maskz_mov)(CMP5(ya, zero, _CMP_NEQ_UQ), sg);
      r = V5(mask_blend)(ovf, C5F(I5(or)(F5C(ya), sg)),
                         V5(mask_blend)(SGN5(F5C(v)), ovp, ovn));
    }
    if (nt) V5(stream)(y + i, r);
    else V5(storeu)(y + i, r);
  }
  if (nt) _mm_sfence();
  if (i < n) (void)RA_REF(y + i, x + i, n - i, f, pol, rnd);
}

/* streaming stores for y: LOWP_ROUND_STREAM_BYTES or more of it (round_fast.h), and
   its elements aligned to their size (so a vector boundary can be reached) */
static int RA_FN(stream)(const RA_T *y, size_t n) {
  return (uintptr_t)(const void *)y % sizeof(RA_T) == 0 &&
         n >= LOWP_ROUND_STREAM_BYTES / sizeof(RA_T);
}

/* The loops, one per (mode, gen, streaming or not): the entry points of the includer */
#define RA_CASE(ISA, M, NT)                                                                \
  case M:                                                                                  \
    if (c->gen == 2) RA_FN(ISA##_m)(y, x, n, c, f, pol, rnd, M, 2, NT);                    \
    else if (c->gen) RA_FN(ISA##_m)(y, x, n, c, f, pol, rnd, M, 1, NT);                    \
    else RA_FN(ISA##_m)(y, x, n, c, f, pol, rnd, M, 0, NT);                                \
    break;
#define RA_SWITCH(ISA, NT)                                                                 \
  switch (mode) {                                                                          \
    RA_CASE(ISA, M_NE, NT) RA_CASE(ISA, M_NA, NT) RA_CASE(ISA, M_TZ, NT)                   \
    RA_CASE(ISA, M_UP, NT) RA_CASE(ISA, M_DN, NT) RA_CASE(ISA, M_TO, NT)                   \
  }

__attribute__((target("avx2"))) static void
RA_FN(avx2)(RA_T *y, const RA_T *x, size_t n, const lowp_add_consts *c, const lowp_format_t *f,
            const lowp_policy_t *pol, lowp_rounding_t rnd, int mode) {
  if (RA_FN(stream)(y, n)) RA_SWITCH(avx2, 1) /* nt a constant in each loop */
  else RA_SWITCH(avx2, 0)
}

__attribute__((target(RA_AVX512_TARGET))) static void
RA_FN(avx512)(RA_T *y, const RA_T *x, size_t n, const lowp_add_consts *c,
              const lowp_format_t *f, const lowp_policy_t *pol, lowp_rounding_t rnd, int mode) {
  if (RA_FN(stream)(y, n)) RA_SWITCH(avx512, 1)
  else RA_SWITCH(avx512, 0)
}
#undef RA_CASE
#undef RA_SWITCH
