/* lowp acc_steps -- the rounding steps of the fast accumulation kernels */

/* Private to kernels/cpu (gemm_acc_fast.c, reduce_fast.c), always inlined.
   What they compute and why it is exact: gemm_acc_fast.c's opening comment. */

#ifndef LOWP_ACC_STEPS_H
#define LOWP_ACC_STEPS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define AI static inline __attribute__((always_inline))

enum { M_NE, M_TZ, M_UP, M_DN };

/* A target format as the kernels read it. */
typedef struct {
  int p, emin, mode;
  double xmax;
  int bf16; /* exactly bf16 (RO32: rounded on the binary32 bits) */
  int fp16; /* exactly fp16 (RO32 on AVX-512: vcvtps2ph) */
} tgt_t;

/* ------------------------------------------------------- the scalar steps */

AI uint64_t bits_of(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

AI double dbl_of(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* all ones where c holds, else 0; and a select by such a mask: plain
   integer operations, so gcc if-converts and vectorises the loops */
AI uint64_t mask(int c) { return (uint64_t)0 - (uint64_t)(c != 0); }

AI double sel(uint64_t m, double a, double b) {
  return dbl_of((bits_of(a) & m) | (bits_of(b) & ~m));
}

#define SIGN ((uint64_t)1 << 63)

/* x (exact, or rounded to odd at 53 bits) rounded once to t, in mode */
AI double round_to(double x, int p, int emin, double xmax, int mode) {
  uint64_t u = bits_of(x), sg = u & SIGN;
  int64_t e = (int64_t)((u >> 52) & 0x7ff) - 1023;
  int64_t q = (e > emin ? e : emin) - (p - 1);
  double sigma = dbl_of(((uint64_t)(q + 1075) << 52) | ((uint64_t)1 << 51));
  double r = (x + sigma) - sigma, ulp = dbl_of((uint64_t)(q + 1023) << 52), d = x - r;
  int neg = (int)(u >> 63), fin = ((u >> 52) & 0x7ff) != 0x7ff;
  uint64_t away;
  /* bitwise, never short-circuit: mode may vary at run time (products) */
  int up = (mode == M_UP) | ((mode == M_TZ) & neg), dn = (mode == M_DN) | ((mode == M_TZ) & !neg);
  r = sel(mask((d > 0) & up), r + ulp, r);
  r = sel(mask((d < 0) & dn), r - ulp, r);
  r = sel(mask(r == 0), dbl_of(sg), r);
  away = mask((mode == M_NE) | ((mode == M_UP) & !neg) | ((mode == M_DN) & neg));
  r = sel(mask(fabs(r) > xmax), dbl_of(sg | bits_of(sel(away, INFINITY, xmax))), r);
  return sel(mask(fin), r, x);
}

/* s + p rounded to odd at 53 bits (exact when binary64 holds it) */
AI double add_odd(double s, double p, int mode) {
  double t = s + p, bb = t - s, err = (s - (t - bb)) + (p - bb);
  uint64_t ut = bits_of(t);
  int fin = ((ut >> 52) & 0x7ff) != 0x7ff;
  /* one step toward err: +1 on the magnitude when err has t's sign, else -1 */
  uint64_t step = (uint64_t)1 | ((uint64_t)0 - ((ut ^ bits_of(err)) >> 63));
  ut += step & mask(fin & (err != 0) & !(ut & 1));
  /* an exact zero: rdn gives -0 unless both terms are +0 (IEEE 754 6.3) */
  if (mode == M_DN) ut = (ut & ~mask(t == 0)) | ((bits_of(s) | bits_of(p)) & SIGN & mask(t == 0));
  return dbl_of(ut);
}

/* The same steps on 8 lanes with GCC/clang vector extensions (every
   operation lane-wise IEEE binary64 or 64-bit integer; the autovectoriser
   gave up on the scalar form's bit casts). Comparisons give 0 / -1 lanes. */
#if defined(__GNUC__)
/* the helpers below are always inlined: no vector crosses a call boundary
   (gcc and clang both warn about the ABI of 64-byte vector arguments) */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
typedef double vd __attribute__((vector_size(64)));
typedef int64_t vi __attribute__((vector_size(64)));
typedef uint64_t vu __attribute__((vector_size(64)));
#define VW 8

/* x in every lane; (vd){0} + x would turn -0 into +0 */
AI vd vsplat(double x) { return (vd){x, x, x, x, x, x, x, x}; }

AI vd vsel(vi m, vd a, vd b) { return (vd)(((vi)a & m) | ((vi)b & ~m)); }

AI vi vall(int c) { return (vi){0} - (int64_t)(c != 0); }

/* -1 where x != 0, for lanes 0 <= x < 2^63, by arithmetic: gcc scalarised
   the same test written as several comparisons joined by & */
AI vi vnz(vi x) { return (x | -x) >> 63; }

/* -1 where a < b, for lanes with |a - b| < 2^63; and where the binary64
   value of the bits d is > 0 (not NaN): lane tests by arithmetic, as flt
   and fpos below (gcc 12 lowered comparisons of 64-byte vectors element
   by element, comisd and cmov, on AVX2: 5 to 19 ns per step there) */
AI vi vlt(vi a, vi b) { return (a - b) >> 63; }

AI vi vpos(vi d) { return (-d & ~d) >> 63; }

AI vd vround_to(vd x, const tgt_t *t) {
  const vi sgn = (vi){0} + INT64_MIN;
  vi u = (vi)x, sg = u & sgn, neg = u >> 63, eb = (vi)(((vu)u >> 52) & 0x7ff);
  vi e = eb - 1023, emin = (vi){0} + t->emin, big, q, ud;
  vd sigma, r, ulp, d, ovv;
  int mode = t->mode;
  big = vlt(emin, e);
  q = ((e & big) | (emin & ~big)) - (t->p - 1);
  sigma = (vd)(((vu)(q + 1075) << 52) | ((uint64_t)1 << 51));
  r = (x + sigma) - sigma;
  ulp = (vd)((vu)(q + 1023) << 52);
  d = x - r;
  ud = (vi)d;
  r = vsel(vpos(ud) & (vall(mode == M_UP) | (vall(mode == M_TZ) & neg)), r + ulp, r);
  r = vsel(vpos(ud ^ sgn) & (vall(mode == M_DN) | (vall(mode == M_TZ) & ~neg)), r - ulp, r);
  r = vsel(~vnz((vi)r & ~sgn), (vd)sg, r);
  ovv = vsel(vall(mode == M_NE) | (vall(mode == M_UP) & ~neg) | (vall(mode == M_DN) & neg),
             (vd){0} + INFINITY, (vd){0} + t->xmax);
  ovv = (vd)((vi)ovv | sg);
  /* |r| > xmax on the bits (both >= 0, not NaN) */
  r = vsel(vlt((vi)((vd){0} + t->xmax), (vi)r & ~sgn), ovv, r);
  return vsel(vnz(eb ^ 0x7ff), r, x);
}

AI vd vadd_odd(vd s, vd p, int mode) {
  const vi sgn = (vi){0} + INT64_MIN;
  vd t = s + p, bb = t - s, err = (s - (t - bb)) + (p - bb);
  vi ut = (vi)t, step = 1 | ((ut ^ (vi)err) >> 63);
  vi fin = (vi)((((vu)ut >> 52) & 0x7ff) + 1) >> 11; /* 1 for inf/NaN, else 0 */
  ut += step & (fin - 1) & vnz((vi)err & ~sgn) & ((ut & 1) - 1);
  if (mode == M_DN) {
    vi z = ~vnz((vi)t & ~sgn);
    ut = (ut & ~z) | (((vi)s | (vi)p) & sgn & z);
  }
  return (vd)ut;
}

/* The RO32 steps: the same algorithm on 16 binary32 lanes, for narrow data
   (inputs of <= 12 significant bits with magnitudes in [2^-60, 2^50], so
   each product is exact in binary32 and no sum overflows it) and narrow
   accumulators (p <= 22: rounding to odd at 24 bits then once to p is
   correct; quantum >= 2^-147: binary32's subnormal grid stays 2 bits
   finer). sigma = 1.5 * 2^(q+23) needs |x| < 2^(q+22): p <= 22. */
typedef float vf __attribute__((vector_size(64)));
typedef int32_t vfi __attribute__((vector_size(64)));
typedef uint32_t vfu __attribute__((vector_size(64)));
#define VWF 16

/* x in every lane; (vf){0} + x would turn -0 into +0 */
AI vf fsplat(float x) { return (vf){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}; }

AI vf fsel(vfi m, vf a, vf b) { return (vf)(((vfi)a & m) | ((vfi)b & ~m)); }

AI vfi fall(int c) { return (vfi){0} - (int32_t)(c != 0); }

AI vfi fnz(vfi x) { return (x | -x) >> 31; } /* -1 where x != 0, 0 <= x < 2^31 */

/* -1 where a < b, for lanes with |a - b| < 2^31; and where the binary32
   value of the bits d is > 0 (not NaN). Lane tests by arithmetic: gcc 12
   lowers a comparison of 64-byte vectors element by element (comiss or
   cmp, then cmov) where the target has no 64-byte compare (AVX2, SSE2). */
AI vfi flt(vfi a, vfi b) { return (a - b) >> 31; }

AI vfi fpos(vfi d) { return (-d & ~d) >> 31; }

AI vf fround_to(vf x, const tgt_t *t) {
  const vfi sgn = (vfi){0} + INT32_MIN;
  vfi u = (vfi)x, sg = u & sgn, neg = u >> 31, eb = (u >> 23) & 0xff;
  vfi e = eb - 127, emin = (vfi){0} + t->emin, big, q, ud, xb;
  vf sigma, r, ulp, d, ovv, xm = fsplat((float)t->xmax);
  int mode = t->mode;
  big = flt(emin, e);
  q = ((e & big) | (emin & ~big)) - (t->p - 1);
  sigma = (vf)(((vfu)(q + 150) << 23) | ((uint32_t)1 << 22));
  r = (x + sigma) - sigma;
  /* 2^q = 2^(q + 21) 2^-21: q in [-147, 104] for finite x (ro32_fits), a
     normal encoding, and the product exact (a subnormal below 2^-126) */
  ulp = (vf)((vfu)(q + 148) << 23) * fsplat(0x1p-21f);
  d = x - r;
  ud = (vfi)d;
  r = fsel(fpos(ud) & (fall(mode == M_UP) | (fall(mode == M_TZ) & neg)), r + ulp, r);
  r = fsel(fpos(ud ^ sgn) & (fall(mode == M_DN) | (fall(mode == M_TZ) & ~neg)), r - ulp, r);
  r = fsel(~fnz((vfi)r & ~sgn), (vf)sg, r);
  ovv = fsel(fall(mode == M_NE) | (fall(mode == M_UP) & ~neg) | (fall(mode == M_DN) & neg),
             (vf){0} + INFINITY, xm);
  ovv = (vf)((vfi)ovv | sg);
  xb = (vfi)xm; /* |r| > xmax on the bits (both >= 0, not NaN) */
  r = fsel(flt(xb, (vfi)r & ~sgn), ovv, r);
  return fsel(fnz(eb ^ 0xff), r, x);
}

AI vf fadd_odd(vf s, vf p, int mode) {
  const vfi sgn = (vfi){0} + INT32_MIN;
  vf t = s + p, bb = t - s, err = (s - (t - bb)) + (p - bb);
  vfi ut = (vfi)t, step = 1 | ((ut ^ (vfi)err) >> 31);
  vfi fin = (((ut >> 23) & 0xff) + 1) >> 8; /* 1 for inf/NaN, else 0 */
  ut += step & (fin - 1) & fnz((vfi)err & ~sgn) & ((ut & 1) - 1);
  if (mode == M_DN) {
    vfi z = ~fnz((vfi)t & ~sgn);
    ut = (ut & ~z) | (((vfi)s | (vfi)p) & sgn & z);
  }
  return (vf)ut;
}

/* x rounded to bf16, whose values are the binary32 values with 16 zero
   low bits, exponent range and subnormals included: round the bit pattern
   at bit 16 (a carry into the exponent is the next binade, or inf from the
   top one, as IEEE 754 overflow in rne and toward the overflowing side;
   truncation gives max in rtz and away from it). NaN stays NaN. */
AI vf fround_bf16_bits(vf x, int mode) {
  vfi u = (vfi)x, neg = u >> 31, inc;
  if (mode == M_NE) inc = 0x7fff + ((u >> 16) & 1);
  else if (mode == M_UP) inc = 0xffff & ~neg;
  else if (mode == M_DN) inc = 0xffff & neg;
  else inc = (vfi){0};
  return (vf)((u + inc) & (int32_t)0xffff0000u);
}

AI vf fround_bf16(vf x, int mode) {
  vfi nan = flt((vfi){0} + 0x7f800000, (vfi)x & INT32_MAX);
  return fsel(nan, x, fround_bf16_bits(x, mode));
}


/* ------------------------------------------------ AVX-512 (gcc and clang) */

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#if defined(__clang__)
#define LOWP_ACC_AVX512 "avx512f,avx512bw,avx512vl,avx512dq,fma"
#else
#define LOWP_ACC_AVX512 "avx512f,avx512bw,avx512vl,avx512dq,fma,prefer-vector-width=512"
/* RO32 on AVX-512 intrinsics (rofma_pick, then fround_to or
   fround_bf16_bits): gcc only, since clang refuses 64-byte vector
   arguments between the default and the AVX-512 target, even to
   always-inline helpers; clang builds run the vector-extension steps */
#define LOWP_ACC_RO16 1
#endif

/* The sum rounded to odd at 24 bits from d and u, the same exact sum
   rounded down and up in the instruction (gemm_acc_fast.c's RO32 on
   AVX-512, proven there): d == u, the sum is exact, and the mode's own
   result is taken (u has IEEE 754's sign of an exact zero sum for
   rne/rtz/rup, d for rdn); else they are adjacent and the odd one is the
   value rounded to odd. NaN: u (or d in rdn), the comparison is ordered. */
__attribute__((target(LOWP_ACC_AVX512))) AI __m512 rofma_pick(__m512 d, __m512 u, int mode) {
  __mmask16 inx = _mm512_cmp_ps_mask(d, u, _CMP_NEQ_OQ);
  __mmask16 dodd = _mm512_test_epi32_mask(_mm512_castps_si512(d), _mm512_set1_epi32(1));
  return mode == M_DN ? _mm512_mask_blend_ps(inx & ~dodd, d, u)
                      : _mm512_mask_blend_ps(inx & dodd, u, d);
}

/* ------------------------------------------------- RO32 on AVX2 intrinsics */

/* The RO32 steps on 8 binary32 lanes (gcc and clang; F16C for fp16),
   gemm_acc_fast.c's ro32_avx2 and reduce_fast32.c's AVX2 copy: every
   operation one AVX2 instruction (what each computes and why:
   gemm_acc_fast.c, above ro32_avx2). The definitions below end with
   #undef LOWP_RA_TGT; users define it again where they need it. */
#define LOWP_ACC_AVX2 "avx2,fma,f16c"
#define LOWP_RA_TGT __attribute__((target(LOWP_ACC_AVX2)))

/* how the products are formed: exact, rounded to fp16 or bf16 in rne, any;
   bf16 in rne by Veltkamp's splitting (inputs of <= 8 significant bits) */
enum { RP_EX, RP_F16NE, RP_BF16NE, RP_ANY, RP_BF16V8 };

#define LOWP_F16X(X, RC) _mm256_cvtph_ps(_mm256_cvtps_ph((X), (RC)))

LOWP_RA_TGT AI __m256 ra_f16(__m256 x, int mode) {
  switch (mode) {
  case M_TZ: return LOWP_F16X(x, _MM_FROUND_TO_ZERO);
  case M_UP: return LOWP_F16X(x, _MM_FROUND_TO_POS_INF);
  case M_DN: return LOWP_F16X(x, _MM_FROUND_TO_NEG_INF);
  default: return LOWP_F16X(x, _MM_FROUND_TO_NEAREST_INT);
  }
}

/* x rounded to binary16 in the mode, the encodings (ra_f16 less the way back) */
LOWP_RA_TGT AI __m128i ra_f16h(__m256 x, int mode) {
  switch (mode) {
  case M_TZ: return _mm256_cvtps_ph(x, _MM_FROUND_TO_ZERO);
  case M_UP: return _mm256_cvtps_ph(x, _MM_FROUND_TO_POS_INF);
  case M_DN: return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEG_INF);
  default: return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT);
  }
}

/* fround_bf16_bits on 8 lanes */
LOWP_RA_TGT AI __m256 ra_bf16(__m256 x, int mode) {
  const __m256i u = _mm256_castps_si256(x), lo = _mm256_set1_epi32(0xffff);
  __m256i inc;
  if (mode == M_NE)
    inc = _mm256_add_epi32(_mm256_set1_epi32(0x7fff),
                           _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1)));
  else if (mode == M_UP) inc = _mm256_andnot_si256(_mm256_srai_epi32(u, 31), lo);
  else if (mode == M_DN) inc = _mm256_and_si256(_mm256_srai_epi32(u, 31), lo);
  else inc = _mm256_setzero_si256();
  return _mm256_castsi256_ps(
      _mm256_andnot_si256(lo, _mm256_add_epi32(u, inc)));
}

/* fround_to on 8 lanes (x exact, or rounded to odd at 24 bits) */
LOWP_RA_TGT AI __m256 ra_round(__m256 x, const tgt_t *t, int mode) {
  const __m256 zero = _mm256_setzero_ps(), xmax = _mm256_set1_ps((float)t->xmax);
  const __m256 sgn = _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN));
  const __m256i u = _mm256_castps_si256(x);
  const __m256i eb = _mm256_and_si256(_mm256_srli_epi32(u, 23), _mm256_set1_epi32(0xff));
  const __m256 sg = _mm256_and_ps(x, sgn), neg = _mm256_castsi256_ps(_mm256_srai_epi32(u, 31));
  __m256i q = _mm256_sub_epi32(_mm256_max_epi32(eb, _mm256_set1_epi32(t->emin + 127)),
                               _mm256_set1_epi32(t->p - 1 + 127)); /* max(e, emin) - (p - 1) */
  __m256 sigma = _mm256_castsi256_ps(_mm256_or_si256(
      _mm256_slli_epi32(_mm256_add_epi32(q, _mm256_set1_epi32(150)), 23),
      _mm256_set1_epi32(1 << 22)));
  __m256 r = _mm256_sub_ps(_mm256_add_ps(x, sigma), sigma), ovv;
  if (mode != M_NE) {
    __m256 ulp = _mm256_mul_ps(
        _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(q, _mm256_set1_epi32(148)), 23)),
        _mm256_set1_ps(0x1p-21f));
    __m256 d = _mm256_sub_ps(x, r), up = _mm256_cmp_ps(d, zero, _CMP_GT_OQ);
    __m256 dn = _mm256_cmp_ps(d, zero, _CMP_LT_OQ);
    if (mode == M_TZ) up = _mm256_and_ps(up, neg), dn = _mm256_andnot_ps(neg, dn);
    if (mode != M_DN) r = _mm256_blendv_ps(r, _mm256_add_ps(r, ulp), up);
    if (mode != M_UP) r = _mm256_blendv_ps(r, _mm256_sub_ps(r, ulp), dn);
  }
  r = _mm256_blendv_ps(r, sg, _mm256_cmp_ps(r, zero, _CMP_EQ_OQ));
  /* overflow: inf where the mode rounds away from zero, else max */
  if (mode == M_NE) ovv = _mm256_set1_ps(INFINITY);
  else if (mode == M_UP) ovv = _mm256_blendv_ps(_mm256_set1_ps(INFINITY), xmax, neg);
  else if (mode == M_DN) ovv = _mm256_blendv_ps(xmax, _mm256_set1_ps(INFINITY), neg);
  else ovv = xmax;
  r = _mm256_blendv_ps(r, _mm256_or_ps(ovv, sg),
                       _mm256_cmp_ps(_mm256_andnot_ps(sgn, r), xmax, _CMP_GT_OQ));
  return _mm256_blendv_ps(
      r, x, _mm256_castsi256_ps(_mm256_cmpeq_epi32(eb, _mm256_set1_epi32(0xff))));
}

/* s + p rounded to odd at 24 bits (fadd_odd). err is NaN wherever t is
   inf or NaN (t - bb or bb is inf - inf, or a NaN propagates), so the
   ordered err != 0 alone marks the finite inexact sums. */
LOWP_RA_TGT AI __m256 ra_odd(__m256 s, __m256 p, int mode) {
  const __m256i one = _mm256_set1_epi32(1);
  __m256 t = _mm256_add_ps(s, p), bb = _mm256_sub_ps(t, s);
  __m256 err = _mm256_add_ps(_mm256_sub_ps(s, _mm256_sub_ps(t, bb)), _mm256_sub_ps(p, bb));
  __m256i ut = _mm256_castps_si256(t);
  __m256i inx = _mm256_castps_si256(_mm256_cmp_ps(err, _mm256_setzero_ps(), _CMP_NEQ_OQ));
  __m256i opp = _mm256_srai_epi32(_mm256_xor_si256(ut, _mm256_castps_si256(err)), 31);
  ut = _mm256_or_si256(_mm256_add_epi32(ut, _mm256_and_si256(opp, inx)),
                       _mm256_and_si256(inx, one));
  if (mode == M_DN) {
    /* an exact zero sum: -0 unless both terms are +0 (IEEE 754 6.3) */
    __m256 z = _mm256_cmp_ps(t, _mm256_setzero_ps(), _CMP_EQ_OQ);
    __m256 zs = _mm256_and_ps(_mm256_or_ps(s, p), _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN)));
    return _mm256_blendv_ps(_mm256_castsi256_ps(ut), zs, z);
  }
  return _mm256_castsi256_ps(ut);
}

/* a product rounded to prod (finite: no NaN test for bf16) */
LOWP_RA_TGT AI __m256 ra_prod(__m256 p, const tgt_t *prod) {
  if (prod->fp16) return ra_f16(p, prod->mode);
  if (prod->bf16) return ra_bf16(p, prod->mode);
  return ra_round(p, prod, prod->mode);
}

/* The fast RO32 step for fp16 and bf16 accumulators (fmt 1, 2), without
   rounding to odd. t = s + p rounded to nearest in binary32 (one addition,
   or one fused multiply-add when p = a b is exact) is a faithful rounding
   of the exact sum x: no binary32 value lies strictly between x and t.
   acc's rounding in a mode is constant on each open interval between two
   consecutive boundaries of that mode (rne: the midpoints of acc's grid,
   extended past the largest value, so 65520 for fp16; rtz, rup, rdn: the
   values of acc's grid, zero and +-max included), and every boundary is a
   binary32 value (p + 1 <= 24 bits, quantum >= 2^-133). So where t is not a
   boundary, neither is x (else t = x), and no boundary lies between them:
   acc's rounding of t is that of x. Where t may be one, ra_flag marks
   the lane and the caller redoes the lanes by ra_odd (the sum rounded to
   odd, exact in every case). On t's encoding: bf16's grid is binary32's
   with 16 bits fewer, subnormals included, so a boundary has its 16 low
   bits 0x8000 (rne) or 0 (directed). fp16's grid in its normals (binades
   2^-14 to 2^15) leaves 13 low bits of binary32's: a value has them 0, a
   midpoint 0x1000; its subnormals are multiples of 2^-24 below 2^-14 and
   their midpoints odd multiples of 2^-25, whose binary32 encodings (binade
   2^e, e <= -15, last place 2^(e-23)) end in -2 - e >= 13 zero bits. So a
   boundary of fp16 has its 12 low bits zero (rne; grid values are sent
   too, harmless) or its 13 low bits zero (directed). Zeros are sent to
   ra_odd in every mode (an exact zero sum is +0 in binary32's rne, -0 for
   rdn). inf and NaN: an inf sum is exact; a NaN t is a NaN x (ra_odd
   returns t itself there), converted alike.

   The test (ra_flag) and acc's rounding of a t that passes it in one, the
   test in instructions that also run on the shuffle port (AVX2's shifts
   and 32-bit compares run on two ports only, where the fused multiply-adds
   and F16C's conversions also go). The returned vector marks the lanes
   where t may be a boundary, in the form ra_any reads after or-ing such
   vectors together; *r is acc's rounding of t wherever it is no boundary:
   - fp16: (u & 0xfff) - 1 (rne; 0x1fff directed) is negative exactly where
     u's 12 (13) low bits are zero; the sign bits are read; *r by F16C;
   - bf16: the 16-bit lanes of u + 0x8000 (rne; u directed) compared to
     zero, the low half of each 32-bit lane read: zero exactly where u's low
     16 bits are 0x8000 (0). In rne *r is the rounding half away from zero
     on the magnitude's bits of a t that is no midpoint (that same u +
     0x8000, then 16 bits cleared: the carry into the exponent and to inf as
     ra_bf16's; NaN and inf keep their bits); directed: ra_bf16. */
LOWP_RA_TGT AI __m256i ra_f16flag(__m256 t, int mode) {
  return _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(t),
                                           _mm256_set1_epi32(mode == M_NE ? 0xfff : 0x1fff)),
                          _mm256_set1_epi32(1));
}

/* ra_f16flag of two vectors or-ed, in four instructions rather than five:
   the two masked low parts (below 2^13) meet in one unsigned minimum,
   zero where either is */
LOWP_RA_TGT AI __m256i ra_f16flag2(__m256 t0, __m256 t1, int mode) {
  const __m256i m = _mm256_set1_epi32(mode == M_NE ? 0xfff : 0x1fff);
  return _mm256_sub_epi32(_mm256_min_epu32(_mm256_and_si256(_mm256_castps_si256(t0), m),
                                           _mm256_and_si256(_mm256_castps_si256(t1), m)),
                          _mm256_set1_epi32(1));
}

LOWP_RA_TGT AI __m256i ra_flag(__m256 t, __m256 *r, int fmt, int mode) {
  const __m256i u = _mm256_castps_si256(t);
  if (fmt == 1) {
    *r = ra_f16(t, mode);
    return ra_f16flag(t, mode);
  }
  if (mode != M_NE) {
    *r = ra_bf16(t, mode);
    return _mm256_cmpeq_epi16(u, _mm256_setzero_si256());
  } else {
    const __m256i q = _mm256_add_epi32(u, _mm256_set1_epi32(0x8000));
    *r = _mm256_castsi256_ps(_mm256_and_si256(q, _mm256_set1_epi32((int32_t)0xffff0000u)));
    return _mm256_cmpeq_epi16(q, _mm256_setzero_si256());
  }
}

/* whether ra_flag's vector f (or several or-ed) flags a lane */
LOWP_RA_TGT AI int ra_any(__m256i f, int fmt) {
  if (fmt == 1) return _mm256_movemask_ps(_mm256_castsi256_ps(f));
  return _mm256_movemask_epi8(f) & 0x33333333;
}

/* ra_flag on two vectors: nonzero where a lane of t0 or t1 may be a
   boundary; else *r0, *r1 are acc's rounding of t0, t1. bf16: the two
   vectors' 16-bit lanes (u + 0x8000 in rne, u directed) meet in one
   unsigned minimum, zero where either is, then one compare, where ra_flag
   on each and an or take three instructions. */
LOWP_RA_TGT AI int ra_near2(__m256 t0, __m256 t1, __m256 *r0, __m256 *r1, int fmt, int mode) {
  if (fmt == 2) {
    const __m256i hi = _mm256_set1_epi32((int32_t)0xffff0000u), h = _mm256_set1_epi32(0x8000);
    const __m256i q0 = mode == M_NE ? _mm256_add_epi32(_mm256_castps_si256(t0), h)
                                    : _mm256_castps_si256(t0);
    const __m256i q1 = mode == M_NE ? _mm256_add_epi32(_mm256_castps_si256(t1), h)
                                    : _mm256_castps_si256(t1);
    if (mode == M_NE) {
      *r0 = _mm256_castsi256_ps(_mm256_and_si256(q0, hi));
      *r1 = _mm256_castsi256_ps(_mm256_and_si256(q1, hi));
    } else {
      *r0 = ra_bf16(t0, mode);
      *r1 = ra_bf16(t1, mode);
    }
    return ra_any(_mm256_cmpeq_epi16(_mm256_min_epu16(q0, q1), _mm256_setzero_si256()), 2);
  }
  if (fmt == 1) {
    *r0 = ra_f16(t0, mode);
    *r1 = ra_f16(t1, mode);
    return ra_any(ra_f16flag2(t0, t1, mode), 1);
  }
  return ra_any(_mm256_or_si256(ra_flag(t0, r0, fmt, mode), ra_flag(t1, r1, fmt, mode)), fmt);
}

/* acc's rounding of s + p, t = RN(s + p) given (ra_flag's step) */
LOWP_RA_TGT AI __m256 ra_sum(__m256 s, __m256 p, __m256 t, int fmt, int mode) {
  __m256 r;
  if (__builtin_expect(ra_any(ra_flag(t, &r, fmt, mode), fmt) != 0, 0)) {
    t = ra_odd(s, p, mode);
    return fmt == 1 ? ra_f16(t, mode) : ra_bf16(t, mode);
  }
  return r;
}


/* RO64's steps (vround_to, vadd_odd: round_to's and add_odd's algorithm,
   proven in gemm_acc_fast.c) on 4 binary64 lanes of AVX2 intrinsics, each
   operation one instruction (gcc's build of the 64-byte vector-extension
   steps for AVX2 kept scalar pieces: 17 to 19 ns per step). x exact, or
   rounded to odd at 53 bits; t's p <= 51 and emin - p >= -1000
   (ro_fits), so 2^q and sigma are normal binary64 values. No F16C: the
   AVX2 copies of every kernel inline them. */
#define LOWP_RD_TGT __attribute__((target("avx2,fma")))
LOWP_RD_TGT AI __m256d rd_round(__m256d x, const tgt_t *t, int mode) {
  const __m256d zero = _mm256_setzero_pd(), xmax = _mm256_set1_pd(t->xmax);
  const __m256d sgn = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MIN));
  const __m256i u = _mm256_castpd_si256(x);
  const __m256i eb = _mm256_and_si256(_mm256_srli_epi64(u, 52), _mm256_set1_epi64x(0x7ff));
  const __m256i ebmin = _mm256_set1_epi64x(t->emin + 1023);
  const __m256d sg = _mm256_and_pd(x, sgn);
  const __m256d neg = _mm256_castsi256_pd(_mm256_cmpgt_epi64(_mm256_setzero_si256(), u));
  /* q + 1023 = max(e, emin) - (p - 1) + 1023 */
  const __m256i qb = _mm256_sub_epi64(
      _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(ebmin), _mm256_castsi256_pd(eb),
                                           _mm256_castsi256_pd(_mm256_cmpgt_epi64(eb, ebmin)))),
      _mm256_set1_epi64x(t->p - 1));
  const __m256d sigma = _mm256_castsi256_pd(_mm256_or_si256(
      _mm256_slli_epi64(_mm256_add_epi64(qb, _mm256_set1_epi64x(52)), 52),
      _mm256_set1_epi64x((long long)1 << 51)));
  __m256d r = _mm256_sub_pd(_mm256_add_pd(x, sigma), sigma), ovv;
  if (mode != M_NE) {
    const __m256d ulp = _mm256_castsi256_pd(_mm256_slli_epi64(qb, 52));
    const __m256d d = _mm256_sub_pd(x, r);
    __m256d up = _mm256_cmp_pd(d, zero, _CMP_GT_OQ), dn = _mm256_cmp_pd(d, zero, _CMP_LT_OQ);
    if (mode == M_TZ) up = _mm256_and_pd(up, neg), dn = _mm256_andnot_pd(neg, dn);
    if (mode != M_DN) r = _mm256_blendv_pd(r, _mm256_add_pd(r, ulp), up);
    if (mode != M_UP) r = _mm256_blendv_pd(r, _mm256_sub_pd(r, ulp), dn);
  }
  r = _mm256_blendv_pd(r, sg, _mm256_cmp_pd(r, zero, _CMP_EQ_OQ));
  /* overflow: inf where the mode rounds away from zero, else max */
  if (mode == M_NE) ovv = _mm256_set1_pd(INFINITY);
  else if (mode == M_UP) ovv = _mm256_blendv_pd(_mm256_set1_pd(INFINITY), xmax, neg);
  else if (mode == M_DN) ovv = _mm256_blendv_pd(xmax, _mm256_set1_pd(INFINITY), neg);
  else ovv = xmax;
  r = _mm256_blendv_pd(r, _mm256_or_pd(ovv, sg),
                       _mm256_cmp_pd(_mm256_andnot_pd(sgn, r), xmax, _CMP_GT_OQ));
  return _mm256_blendv_pd(
      r, x, _mm256_castsi256_pd(_mm256_cmpeq_epi64(eb, _mm256_set1_epi64x(0x7ff))));
}

/* s + p rounded to odd at 53 bits (vadd_odd, as ra_odd: err is NaN
   wherever t is inf or NaN, so the ordered err != 0 marks the finite
   inexact sums) */
LOWP_RD_TGT AI __m256d rd_odd(__m256d s, __m256d p, int mode) {
  const __m256i one = _mm256_set1_epi64x(1);
  __m256d t = _mm256_add_pd(s, p), bb = _mm256_sub_pd(t, s);
  __m256d err = _mm256_add_pd(_mm256_sub_pd(s, _mm256_sub_pd(t, bb)), _mm256_sub_pd(p, bb));
  __m256i ut = _mm256_castpd_si256(t);
  __m256i inx = _mm256_castpd_si256(_mm256_cmp_pd(err, _mm256_setzero_pd(), _CMP_NEQ_OQ));
  __m256i opp = _mm256_cmpgt_epi64(_mm256_setzero_si256(),
                                   _mm256_xor_si256(ut, _mm256_castpd_si256(err)));
  ut = _mm256_or_si256(_mm256_add_epi64(ut, _mm256_and_si256(opp, inx)),
                       _mm256_and_si256(inx, one));
  if (mode == M_DN) {
    /* an exact zero sum: -0 unless both terms are +0 (IEEE 754 6.3) */
    __m256d z = _mm256_cmp_pd(t, _mm256_setzero_pd(), _CMP_EQ_OQ);
    __m256d zs = _mm256_and_pd(_mm256_or_pd(s, p),
                               _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MIN)));
    return _mm256_blendv_pd(_mm256_castsi256_pd(ut), zs, z);
  }
  return _mm256_castsi256_pd(ut);
}
#undef LOWP_RD_TGT
#undef LOWP_RA_TGT
#endif

/* the positive quiet NaN for any NaN (exact/acc.c rounds NAN) */
AI double canon(double x) { return x != x ? NAN : x; }

#endif
