/* lowp_order_fast32's AVX-512 copy, same bits: design in reduce_fast32.c */

#include "cpu/reduce_fast32_int.h"

#include <string.h>

#if defined(LOWP_N32_X86)

/* ------------------------------------------------ AVX-512 steps (m_) */

#define T5 __attribute__((target(LOWP_ACC_AVX512)))
#define LOWP_RC_NE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define LOWP_RC_TZ (_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define LOWP_RC_UP (_MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)
#define LOWP_RC_DN (_MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)

/* return EXPR(rc) with the mode's rounding as the instruction's immediate */
#define LOWP_IN_MODE(mode, EXPR)                                                   \
  switch (mode) {                                                                  \
  case M_TZ: return EXPR(LOWP_RC_TZ);                                              \
  case M_UP: return EXPR(LOWP_RC_UP);                                              \
  case M_DN: return EXPR(LOWP_RC_DN);                                              \
  default: return EXPR(LOWP_RC_NE);                                                \
  }

T5 AI __m512 m_addr(__m512 x, __m512 y, int mode) {
#define LOWP_E(rc) _mm512_add_round_ps(x, y, rc)
  LOWP_IN_MODE(mode, LOWP_E)
#undef LOWP_E
}

T5 AI __m512 m_mulr(__m512 x, __m512 y, int mode) {
#define LOWP_E(rc) _mm512_mul_round_ps(x, y, rc)
  LOWP_IN_MODE(mode, LOWP_E)
#undef LOWP_E
}

T5 AI __m512 m_fmar(__m512 a, __m512 b, __m512 s, int mode) {
#define LOWP_E(rc) _mm512_fmadd_round_ps(a, b, s, rc)
  LOWP_IN_MODE(mode, LOWP_E)
#undef LOWP_E
}

/* a b + s in binary64, then to binary32, both in the mode */
T5 AI __m256 m_fma_cvt(__m512d a, __m512d b, __m512d s, int mode) {
#define LOWP_E(rc) _mm512_cvt_roundpd_ps(_mm512_fmadd_round_pd(a, b, s, rc), rc)
  LOWP_IN_MODE(mode, LOWP_E)
#undef LOWP_E
}

/* x rounded to fp16 (vcvtps2ph: IEEE 754 in the mode, subnormals and
   overflow included) and back (exact) */
T5 AI __m512 m_fp16r(__m512 x, int mode) {
#define LOWP_E(rc) _mm512_cvtph_ps(_mm512_cvtps_ph(x, rc))
  LOWP_IN_MODE(mode, LOWP_E)
#undef LOWP_E
}

T5 AI __m512 m_ld(const float *p) { return _mm512_loadu_ps(p); }

T5 AI void m_st(float *p, __m512 x) { _mm512_storeu_ps(p, x); }

T5 AI __m512 m_b(const nctx_t *c, size_t l, size_t jv) {
  return _mm512_loadu_ps(c->panel + l * OW32 + jv * VWF);
}

/* x (exact or rounded to odd at 24 bits) rounded once to acc: fp16 by
   vcvtps2ph, bf16 on the bits (NaN: the x86 default NaN 0xffc00000 of
   inf - inf, the only one RO32 sums meet, keeps its empty low half);
   clang builds never send RO32 here (reduce_fast32.c's dispatch) */
T5 AI __m512 m_ra(__m512 x, const nctx_t *c, int fmt, int mode) {
#ifdef LOWP_ACC_RO16
  tgt_t t = c->acc;
  t.mode = mode;
  if (fmt == F_BF16) return (__m512)fround_bf16_bits((vf)x, mode);
  if (fmt == F_OTHER) return (__m512)fround_to((vf)x, &t);
#else
  (void)c;
#endif
  return fmt == F_FP16 ? m_fp16r(x, mode) : x;
}

/* round(x + y): RO32, the odd one of the sums rounded down and up, then to
   acc; FMA32, one addition in the mode */
T5 AI __m512 m_add(__m512 x, __m512 y, const nctx_t *c, KP) {
  (void)rp;
  if (fmt == F_DIR) return m_addr(x, y, mode);
  return m_ra(rofma_pick(m_addr(x, y, M_DN), m_addr(x, y, M_UP), mode), c, fmt, mode);
}

/* term l: RO32, a b (exact) or rounded to acc (rp); FMA32 (rp only), a b
   rounded to fp32 in the mode */
T5 AI __m512 m_term(const nctx_t *c, size_t l, size_t jv, KP) {
  __m512 a = _mm512_set1_ps(c->arow[l]), b = m_b(c, l, jv);
  if (fmt == F_DIR) return m_mulr(a, b, mode);
  return rp ? m_ra(_mm512_mul_ps(a, b), c, fmt, mode) : _mm512_mul_ps(a, b);
}

/* round(x + t_l): without rp one fused multiply-add (RO32: the pair
   rounded down and up) */
T5 AI __m512 m_addt(__m512 x, const nctx_t *c, size_t l, size_t jv, KP) {
  __m512 a, b;
  if (rp) return m_add(x, m_term(c, l, jv, KN), c, KN);
  a = _mm512_set1_ps(c->arow[l]), b = m_b(c, l, jv);
  if (fmt == F_DIR) return m_fmar(a, b, x, mode);
  return m_ra(rofma_pick(m_fmar(a, b, x, M_DN), m_fmar(a, b, x, M_UP), mode), c, fmt, mode);
}

/* FMA32 without rp: round(a_l b_l + s) for the two halves of vector jv,
   s = a_{l+1} b_{l+1} (two: exact in binary64) or +0 (lone) */
T5 AI __m512 m_dir64(const nctx_t *c, size_t l, size_t jv, int mode, int lone) {
  const double *b0 = c->pd + l * OW32 + jv * VWF, *b1 = b0 + OW32;
  const __m512d a0 = _mm512_set1_pd(c->ad[l]);
  __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
  __m256 lo, hi;
  if (!lone) {
    const __m512d a1 = _mm512_set1_pd(c->ad[l + 1]);
    s0 = _mm512_mul_pd(a1, _mm512_loadu_pd(b1));
    s1 = _mm512_mul_pd(a1, _mm512_loadu_pd(b1 + 8));
  }
  lo = m_fma_cvt(a0, _mm512_loadu_pd(b0), s0, mode);
  hi = m_fma_cvt(a0, _mm512_loadu_pd(b0 + 8), s1, mode);
  return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
}

/* round(t_l + t_{l+1}), both exact (RO32: a_{l+1} b_{l+1} is a binary32
   value, added by the fused multiply-adds) */
T5 AI __m512 m_two(const nctx_t *c, size_t l, size_t jv, KP) {
  if (rp) return m_add(m_term(c, l, jv, KN), m_term(c, l + 1, jv, KN), c, KN);
  if (fmt == F_DIR) return m_dir64(c, l, jv, mode, 0);
  return m_addt(_mm512_mul_ps(_mm512_set1_ps(c->arow[l + 1]), m_b(c, l + 1, jv)), c, l, jv, KN);
}

/* round(t_l + 0) */
T5 AI __m512 m_lone(const nctx_t *c, size_t l, size_t jv, KP) {
  if (fmt == F_DIR && !rp) return m_dir64(c, l, jv, mode, 1);
  return m_add(m_term(c, l, jv, KN), _mm512_setzero_ps(), c, KN);
}

#undef LOWP_N32_LEAF
#undef LOWP_N32_NVB
/* the AVX-512 copy: (fmt, mode, rp) constants of each instance */
#define LOWP_N32_KEY(c) (((c)->fmt * 4 + (c)->acc.mode) * 2 + (c)->rp)
#define LOWP_MR(CALL, F, M) CALL(F, M, 0, ((F) * 4 + (M)) * 2) CALL(F, M, 1, ((F) * 4 + (M)) * 2 + 1)
#define LOWP_MDIR(CALL, F) LOWP_MR(CALL, F, M_TZ) LOWP_MR(CALL, F, M_UP) LOWP_MR(CALL, F, M_DN)
#define LOWP_MALL(CALL, F) LOWP_MR(CALL, F, M_NE) LOWP_MDIR(CALL, F)
/* 4-term leaves (8-term ones: 10.9 s of CPU for this file instead of 4.6, and the fp16 and bf16
   pairwise rows of the bench 15% slower, fp32 rtz 10% faster, 2026-12-01) */
#define LOWP_N32_LEAF 4
#ifdef LOWP_SANITIZED /* (CMake: sanitizer builds) 2 chains, as the baseline's: */
#define LOWP_N32_NVB 2   /* clang ASan+UBSan: 80 s of CPU for this file, 302 s before */
#else
#define LOWP_N32_NVB NV
#endif
#define SFX _avx512
#define ATTR T5
#define V __m512
#define OPFX m_
#define m_sum m_add /* (no test to skip here: reduce_fast32_body.h) */
#ifdef LOWP_ACC_RO16
#define LOWP_N32_CASES(CALL) LOWP_MALL(CALL, F_FP16) LOWP_MALL(CALL, F_BF16) LOWP_MDIR(CALL, F_DIR)
#else
#define LOWP_N32_CASES(CALL) LOWP_MDIR(CALL, F_DIR)
#endif
#include "cpu/reduce_fast32_body.h"

#endif
