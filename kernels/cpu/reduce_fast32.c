/* lowp_reduce_fast32 -- the summation orders on binary32 lanes (narrow accumulators, fp32 in directed modes), same bits */

/*
 * lowp_gemm_order_fast (reduce_fast.c) runs lowp_accum_dot's orders on
 * vectors of outputs; this file serves, on 16-lane binary32 vectors, the
 * cases whose recursive order gemm_acc_fast.c runs on binary32 lanes:
 *
 * RO32 (lowp_gemm_acc_fast_kind: acc and data narrow; every product is
 * exact in binary32, acc of p <= 22 with a quantum >= 2^-147). Each
 * addition of two exact binary32 values x + y (terms, rounded products,
 * partial sums: all values of acc or exact products) is rounded to odd at
 * 24 bits, then once to acc in the mode (Boldo and Melquiond, "Emulation
 * of FMA and correctly rounded sums: proved algorithms using rounding to
 * odd", IEEE Trans. Computers 57(4), 2008, Theorem 1; directed modes keep
 * the floor and ceiling): gemm_acc_fast.c's RO32 step, proven there. On
 * AVX-512 (gcc builds) the odd value is the odd one of the sum rounded
 * down and up in the instruction (rofma_pick; a term a b added to a
 * partial sum by the fused multiply-add, a b being exact), then fp16 by
 * vcvtps2ph in the mode, bf16 on the bits; elsewhere TwoSum in binary32
 * rounded to odd (fadd_odd), then fround_to or fround_bf16. The bound
 * k <= 2^24 keeps every sum inside binary32 (RO32 data: |a b| <= 2^100,
 * so a partial sum stays below 2^125 and two of them below 2^126; a
 * narrower accumulator's largest values are far below that), where TwoSum
 * is exact and fround_to's binade reasoning holds.
 *
 * FMA32 in rtz/rup/rdn on AVX-512 (fp32 acc, binary32 inputs; products
 * exact in binary64 only): a partial sum plus a term is one
 * _mm512_fmadd_round_ps in the mode (IEEE 754 fusedMultiplyAdd: the exact
 * s + a b rounded once), two fp32 values one _mm512_add_round_ps, a
 * rounded product (fma = 0) one _mm512_mul_round_ps; two exact terms are
 * added by one binary64 fused multiply-add in the mode and converted to
 * binary32 in the mode. Rounding twice in one directed mode is rounding
 * once, since the binary32 values (subnormals included) are binary64
 * values: floor32(floor64(x)) = floor32(x), the same for the ceiling, and
 * truncation is one of the two by the sign, which the first rounding
 * keeps; beyond FLT_MAX both give the mode's overflow (+-max or +-inf).
 * A lone term is round(a b + 0): a b + 0 in binary64 in the mode (-0 + +0
 * = -0 only in rdn; a nonzero product that rounds to zero keeps its sign),
 * then the conversion; with fma = 0 it is round(a b) + 0 in binary32.
 *
 * Zeros and NaN: every operation is IEEE 754's in its mode, the sign of an
 * exact zero sum as 6.3 and lowp_accum_add give it (rofma_pick takes the
 * mode's own zero); a NaN is the positive quiet NaN at the output.
 *
 * Orders (lowp_accum_dot): pairwise keeps subtrees of up to LOWP_N32_LEAF
 * terms in registers (8 on AVX-512, 4 in the vector-extension copies; the
 * tree's shape depends only on k), the additions above them on OW32 lanes
 * in memory; recursive, blocked and splitk step LOWP_N32_NVB vectors of a
 * row together (independent chains: all NV on AVX-512, 2 elsewhere).
 * The pairwise tree runs RB_RO rows of A at once (RB for FMA32), so that
 * each leaf's rows of the panel come from L1 after the first row: FMA32's
 * binary64 panel (k x OW32 x 8 bytes, 1 MiB at k = 1024) streams from L2
 * once per group of rows, and 16 rows rather than 4 took the fp32 rtz
 * pairwise order from 0.082 to 0.075 ns per multiply-add (docs/orders-fast.md). Tasks of (column block, row
 * group), buffers once per thread. Compiled per
 * instruction set and chosen at run time: the vector-extension steps (v_)
 * in a baseline and an AVX2 copy, the AVX-512 intrinsics (m_) in a third;
 * clang builds (no LOWP_ACC_RO16) run RO32 on the AVX2 copy there, and
 * RO32 accumulators other than fp16 and bf16 (fround_to) always do.
 */

#include "cpu.h"
#include "cpu/reduce_fast32.h"

#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "status.h"

#include "cpu/acc_steps.h"

enum { OW32 = 128, NV = OW32 / VWF, IRO32 = 256, RB = 16, RB_RO = 4 };

/* how the last rounding goes: fround_to, bf16 on the bits, fp16 by
   vcvtps2ph, or fp32 in a directed mode (FMA32) */
enum { F_OTHER, F_BF16, F_FP16, F_DIR };

/* Everything the loops read. */
typedef struct {
  const float *arow;  /* row i of A (k entries; rows i + 1 .. follow) */
  size_t k, rows;     /* rows of A the pairwise tree runs at once (<= RB) */
  const float *panel; /* k x OW32: columns j0 .. j0 + OW32 of B (zeros past n) */
  const double *pd;   /* the same in binary64 (FMA32 without rp), else NULL */
  const double *ad;   /* with pd: arow in binary64 (broadcast from memory), else NULL */
  tgt_t acc;
  int fmt, rp; /* rp: fma = 0, products rounded to acc first */
  lowp_acc_order_t order;
  size_t block;
} nctx_t;

/* the compile-time knobs of a step: fmt, mode, rp */
#define KP int fmt, int mode, int rp
#define KN fmt, mode, rp

/* ----------------------------------------- vector-extension steps (v_) */

AI vf v_b(const nctx_t *c, size_t l, size_t jv) {
  vf b;
  memcpy(&b, c->panel + l * OW32 + jv * VWF, sizeof b);
  return b;
}

AI vf v_ld(const float *p) {
  vf x;
  memcpy(&x, p, sizeof x);
  return x;
}

AI void v_st(float *p, vf x) { memcpy(p, &x, sizeof x); }

/* x (exact or rounded to odd at 24 bits) rounded once to acc */
AI vf v_ra(vf x, const nctx_t *c, int fmt, int mode) {
  tgt_t t = c->acc;
  t.mode = mode;
  return fmt == F_BF16 ? fround_bf16(x, mode) : fround_to(x, &t);
}

/* term l of the 16 columns of vector jv: a b (exact), or rounded (rp) */
AI vf v_term(const nctx_t *c, size_t l, size_t jv, KP) {
  vf p = fsplat(c->arow[l]) * v_b(c, l, jv);
  return rp ? v_ra(p, c, fmt, mode) : p;
}

/* round(x + y) */
AI vf v_add(vf x, vf y, const nctx_t *c, KP) {
  (void)rp;
  return v_ra(fadd_odd(x, y, mode), c, fmt, mode);
}

/* round(x + t_l) */
AI vf v_addt(vf x, const nctx_t *c, size_t l, size_t jv, KP) {
  return v_add(x, v_term(c, l, jv, KN), c, KN);
}

/* round(t_l + t_{l+1}) */
AI vf v_two(const nctx_t *c, size_t l, size_t jv, KP) {
  return v_add(v_term(c, l, jv, KN), v_term(c, l + 1, jv, KN), c, KN);
}

/* round(t_l + 0) */
AI vf v_lone(const nctx_t *c, size_t l, size_t jv, KP) {
  return v_add(v_term(c, l, jv, KN), (vf){0}, c, KN);
}

#define SFX _generic
#define ATTR
/* (16 lanes on 8 or 16 registers: few values live at once) */
#define LOWP_N32_LEAF 4
#define LOWP_N32_NVB 2
#define V vf
#define OPFX v_
/* the vector-extension copies take the mode at run time (fround_to and
   fadd_odd read it per call): one instance per (fmt, rp); a constant mode
   per instance too made this file a minute and a half of compiling for the
   seldom-run baseline and AVX2 copies */
#define LOWP_N32_KEY(c) ((c)->fmt * 2 + (c)->rp)
#define LOWP_N32_CASES(CALL)                                                       \
  CALL(F_OTHER, c->acc.mode, 0, F_OTHER * 2) CALL(F_OTHER, c->acc.mode, 1, F_OTHER * 2 + 1) \
  CALL(F_BF16, c->acc.mode, 0, F_BF16 * 2) CALL(F_BF16, c->acc.mode, 1, F_BF16 * 2 + 1)
#include "cpu/reduce_fast32_body.h"
#undef SFX
#undef ATTR

#undef V
#undef OPFX
#undef LOWP_N32_CASES
#undef LOWP_N32_KEY

#if defined(LOWP_ACC_AVX512)
#define LOWP_N32_X86 1

/* ------------------------------------------------ AVX2 steps (a_) */

/* 16 lanes as two 8-lane AVX2 vectors (the loops' vector of VWF lanes) */
typedef struct {
  __m256 h[2];
} a16_t;

#define T2 __attribute__((target(LOWP_ACC_AVX2)))

/* RO32: gemm_acc_fast.c's ro32_avx2 steps (cpu/acc_steps.h): the sum
   rounded to odd from TwoSum (ra_odd), then to acc: fp16 by vcvtps2ph in
   the mode, bf16 on the bits (the sums' NaN keep an empty low half, as
   m_ra says), others by ra_round.

   FMA32 in rtz/rup/rdn: AVX2 has no rounding in the instruction; the
   copy runs with the rounding-control field of MXCSR set to the mode
   (row_dir_avx2 below, around the whole call, restored after), where every
   binary32 and binary64 addition, multiplication, fused multiply-add and
   the conversion binary64 -> binary32 rounds in that mode as IEEE 754
   defines it (Intel SDM vol. 1, 10.2.3.3 and 4.8.4): the steps are the
   AVX-512 copy's (m_add, m_term, m_addt, m_dir64) with the mode taken from
   MXCSR instead of the immediate, proven in the opening comment. */

T2 AI __m256 a_half(__m256 x, const nctx_t *c, int fmt, int mode) {
  return fmt == F_FP16 ? ra_f16(x, mode) : fmt == F_BF16 ? ra_bf16(x, mode)
                                                        : ra_round(x, &c->acc, mode);
}

T2 AI a16_t a_ra(a16_t x, const nctx_t *c, int fmt, int mode) {
  x.h[0] = a_half(x.h[0], c, fmt, mode);
  x.h[1] = a_half(x.h[1], c, fmt, mode);
  return x;
}

/* (loads and stores of whole 8-lane vectors: a struct copied by memcpy
   went through 16-byte moves, and the 32-byte loads after them missed
   store forwarding) */
T2 AI a16_t a_ld(const float *p) {
  a16_t x;
  x.h[0] = _mm256_loadu_ps(p);
  x.h[1] = _mm256_loadu_ps(p + 8);
  return x;
}

T2 AI void a_st(float *p, a16_t x) {
  _mm256_storeu_ps(p, x.h[0]);
  _mm256_storeu_ps(p + 8, x.h[1]);
}

T2 AI a16_t a_b(const nctx_t *c, size_t l, size_t jv) {
  a16_t b;
  b.h[0] = _mm256_loadu_ps(c->panel + l * OW32 + jv * VWF);
  b.h[1] = _mm256_loadu_ps(c->panel + l * OW32 + jv * VWF + 8);
  return b;
}

/* round(x + y) */
T2 AI a16_t a_add(a16_t x, a16_t y, const nctx_t *c, KP) {
  int h;
  (void)rp;
  if (fmt == F_FP16 || fmt == F_BF16) {
    /* ra_sum on both halves: t = RN(x + y), one test for the two */
    const int f = fmt == F_FP16 ? 1 : 2;
    const __m256 t0 = _mm256_add_ps(x.h[0], y.h[0]), t1 = _mm256_add_ps(x.h[1], y.h[1]);
    if (__builtin_expect(
            _mm256_movemask_ps(_mm256_or_ps(ra_edge(t0, f, mode), ra_edge(t1, f, mode))) != 0,
            0)) {
      for (h = 0; h < 2; h++) x.h[h] = a_half(ra_odd(x.h[h], y.h[h], mode), c, fmt, mode);
      return x;
    }
    x.h[0] = ra_near(t0, f, mode);
    x.h[1] = ra_near(t1, f, mode);
    return x;
  }
  for (h = 0; h < 2; h++)
    x.h[h] = fmt == F_DIR ? _mm256_add_ps(x.h[h], y.h[h])
                          : a_half(ra_odd(x.h[h], y.h[h], mode), c, fmt, mode);
  return x;
}

/* term l: a b (RO32: exact), rounded (rp; FMA32 rp: the product in the mode) */
T2 AI a16_t a_term(const nctx_t *c, size_t l, size_t jv, KP) {
  const __m256 a = _mm256_set1_ps(c->arow[l]);
  a16_t b = a_b(c, l, jv);
  b.h[0] = _mm256_mul_ps(a, b.h[0]);
  b.h[1] = _mm256_mul_ps(a, b.h[1]);
  return rp && fmt != F_DIR ? a_ra(b, c, fmt, mode) : b;
}

/* round(x + t_l); FMA32 without rp: one fused multiply-add */
T2 AI a16_t a_addt(a16_t x, const nctx_t *c, size_t l, size_t jv, KP) {
  if (fmt == F_DIR && !rp) {
    const __m256 a = _mm256_set1_ps(c->arow[l]);
    a16_t b = a_b(c, l, jv);
    x.h[0] = _mm256_fmadd_ps(a, b.h[0], x.h[0]);
    x.h[1] = _mm256_fmadd_ps(a, b.h[1], x.h[1]);
    return x;
  }
  if ((fmt == F_FP16 || fmt == F_BF16) && !rp) {
    /* a_add's ra_sum with t = RN(a b + x) by one fused multiply-add (a b
       exact); the products only where a lane goes to ra_odd */
    const int f = fmt == F_FP16 ? 1 : 2;
    const __m256 a = _mm256_set1_ps(c->arow[l]);
    a16_t b = a_b(c, l, jv);
    const __m256 t0 = _mm256_fmadd_ps(a, b.h[0], x.h[0]), t1 = _mm256_fmadd_ps(a, b.h[1], x.h[1]);
    if (__builtin_expect(
            _mm256_movemask_ps(_mm256_or_ps(ra_edge(t0, f, mode), ra_edge(t1, f, mode))) != 0,
            0)) {
      x.h[0] = a_half(ra_odd(x.h[0], _mm256_mul_ps(a, b.h[0]), mode), c, fmt, mode);
      x.h[1] = a_half(ra_odd(x.h[1], _mm256_mul_ps(a, b.h[1]), mode), c, fmt, mode);
      return x;
    }
    x.h[0] = ra_near(t0, f, mode);
    x.h[1] = ra_near(t1, f, mode);
    return x;
  }
  return a_add(x, a_term(c, l, jv, KN), c, KN);
}

/* FMA32 without rp: round(a_l b_l + s) on the 16 lanes of vector jv in
   binary64 then binary32 (m_dir64), s = a_{l+1} b_{l+1} or +0 (lone) */
T2 AI a16_t a_dir64(const nctx_t *c, size_t l, size_t jv, int lone) {
  const double *b0 = c->pd + l * OW32 + jv * VWF, *b1 = b0 + OW32;
  const __m256d a0 = _mm256_broadcast_sd(&c->ad[l]);
  __m128 q[4];
  a16_t r;
  int e;
  for (e = 0; e < 4; e++) {
    __m256d s = _mm256_setzero_pd();
    if (!lone) s = _mm256_mul_pd(_mm256_broadcast_sd(&c->ad[l + 1]), _mm256_loadu_pd(b1 + 4 * e));
    q[e] = _mm256_cvtpd_ps(_mm256_fmadd_pd(a0, _mm256_loadu_pd(b0 + 4 * e), s));
  }
  r.h[0] = _mm256_insertf128_ps(_mm256_castps128_ps256(q[0]), q[1], 1);
  r.h[1] = _mm256_insertf128_ps(_mm256_castps128_ps256(q[2]), q[3], 1);
  return r;
}

/* round(t_l + t_{l+1}), both exact */
T2 AI a16_t a_two(const nctx_t *c, size_t l, size_t jv, KP) {
  if (fmt == F_DIR && !rp) return a_dir64(c, l, jv, 0);
  return a_add(a_term(c, l, jv, KN), a_term(c, l + 1, jv, KN), c, KN);
}

/* round(t_l + 0) */
T2 AI a16_t a_lone(const nctx_t *c, size_t l, size_t jv, KP) {
  a16_t z;
  if (fmt == F_DIR && !rp) return a_dir64(c, l, jv, 1);
  z.h[0] = z.h[1] = _mm256_setzero_ps();
  return a_add(a_term(c, l, jv, KN), z, c, KN);
}

/* the AVX2 copy: (fmt, mode, rp) constants for fp16, bf16 and fp32 in the
   directed modes; the mode at run time for the other accumulators */
#define LOWP_N32_KEY(c)                                                            \
  ((c)->fmt == F_OTHER ? (c)->rp : (((c)->fmt * 4 + (c)->acc.mode) * 2 + (c)->rp))
#define LOWP_MR(CALL, F, M) CALL(F, M, 0, ((F) * 4 + (M)) * 2) CALL(F, M, 1, ((F) * 4 + (M)) * 2 + 1)
#define LOWP_MDIR(CALL, F) LOWP_MR(CALL, F, M_TZ) LOWP_MR(CALL, F, M_UP) LOWP_MR(CALL, F, M_DN)
#define LOWP_MALL(CALL, F) LOWP_MR(CALL, F, M_NE) LOWP_MDIR(CALL, F)
#define LOWP_N32_CASES(CALL)                                                       \
  CALL(F_OTHER, c->acc.mode, 0, 0) CALL(F_OTHER, c->acc.mode, 1, 1)                 \
  LOWP_MALL(CALL, F_FP16) LOWP_MALL(CALL, F_BF16) LOWP_MDIR(CALL, F_DIR)
#undef LOWP_N32_LEAF
#ifdef LOWP_SANITIZED /* (CMake: sanitizer builds) 4-term leaves, as the baseline's */
#define LOWP_N32_LEAF 4
#else
#define LOWP_N32_LEAF 8
#endif
#define SFX _avx2
#define ATTR T2
#define V a16_t
#define OPFX a_
#include "cpu/reduce_fast32_body.h"
#undef SFX
#undef ATTR
#undef V
#undef OPFX
#undef LOWP_N32_CASES
#undef LOWP_N32_KEY
#undef LOWP_MALL
#undef LOWP_MDIR
#undef LOWP_MR

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
#ifdef LOWP_SANITIZED /* (CMake: sanitizer builds) the same steps on smaller trees: */
#define LOWP_N32_LEAF 4  /* 4-term leaves and 2 chains, as the baseline's; */
#define LOWP_N32_NVB 2   /* clang ASan+UBSan: 80 s of CPU for this file, 302 s before */
#else
#define LOWP_N32_LEAF 8
#define LOWP_N32_NVB NV
#endif
#define SFX _avx512
#define ATTR T5
#define V __m512
#define OPFX m_
#ifdef LOWP_ACC_RO16
#define LOWP_N32_CASES(CALL) LOWP_MALL(CALL, F_FP16) LOWP_MALL(CALL, F_BF16) LOWP_MDIR(CALL, F_DIR)
#else
#define LOWP_N32_CASES(CALL) LOWP_MDIR(CALL, F_DIR)
#endif
#include "cpu/reduce_fast32_body.h"
#endif

/* ------------------------------------------------------------- dispatch */

/* whether the AVX2 copy (intrinsics with F16C) runs on isa here */
static int avx2_runs(int isa) {
#ifdef LOWP_N32_X86
  return isa >= LOWP_ISA_AVX2 && lowp_cpu_has_f16c();
#else
  (void)isa;
  return 0;
#endif
}

/* the copy that runs: 2 the AVX-512 intrinsics, 1 the AVX2 copy, 0 the
   baseline; c->fmt set for it */
static int copy_for(nctx_t *c, int isa) {
  int dir = c->fmt == F_DIR;
#ifdef LOWP_N32_X86
#ifdef LOWP_ACC_RO16
  if (isa == LOWP_ISA_AVX512 && (dir || c->fmt == F_FP16 || c->fmt == F_BF16)) return 2;
#else
  if (isa == LOWP_ISA_AVX512 && dir) return 2;
#endif
  if (avx2_runs(isa)) return 1;
#endif
  (void)dir;
  if (c->fmt == F_FP16) c->fmt = F_OTHER; /* fround_to on the vector-extension steps */
  return 0;
}

#ifdef LOWP_N32_X86
/* the AVX2 copy of FMA32 in a directed mode: MXCSR's rounding control
   (bits 13-14: 01 down, 10 up, 11 toward zero) set to the mode for the
   call, then restored. row__avx2 is a function of another target, never
   inlined here: every floating-point operation of the copy runs between
   the two writes of MXCSR, on this thread (each OpenMP thread has its own). */
static void row_dir_avx2(float *out, const nctx_t *c, size_t k) {
  const unsigned csr = _mm_getcsr();
  const unsigned rc = c->acc.mode == M_DN ? 0x2000u : c->acc.mode == M_UP ? 0x4000u : 0x6000u;
  _mm_setcsr((csr & ~0x6000u) | rc);
  row__avx2(out, c, k);
  _mm_setcsr(csr);
}
#endif

static void row_copy(int copy, float *out, const nctx_t *c, size_t k) {
  switch (copy) {
#ifdef LOWP_N32_X86
  case 2: row__avx512(out, c, k); break;
  case 1: (c->fmt == F_DIR ? row_dir_avx2 : row__avx2)(out, c, k); break;
#endif
  default: row__generic(out, c, k); break;
  }
}

int lowp_order_fast32_ok(lowp_accfast_kind_t kind, const lowp_accum_t *acc, int isa, size_t k) {
  if (!acc || acc->order == LOWP_ACC_KAHAN) return 0;
  if (kind == LOWP_ACCFAST_RO32) return k <= ((size_t)1 << 24);
#ifdef LOWP_N32_X86
  return kind == LOWP_ACCFAST_FMA32 && acc->rnd != LOWP_RND_NE &&
         (isa == LOWP_ISA_AVX512 || avx2_runs(isa));
#else
  (void)isa;
  return 0;
#endif
}

/* The buffers of one thread: the panels and a row of A. */
typedef struct {
  float *panel, *arow;
  double *pd, *ad;
} bufs_t;

static int bufs_alloc(bufs_t *w, size_t k, int wide) {
  w->panel = aligned_alloc(64, k * OW32 * sizeof(float));
  w->arow = malloc(RB * k * sizeof(float));
  w->pd = wide ? aligned_alloc(64, k * OW32 * sizeof(double)) : NULL;
  w->ad = wide ? malloc(RB * k * sizeof(double)) : NULL;
  return w->panel && w->arow && ((w->pd && w->ad) || !wide);
}

static void bufs_free(bufs_t *w) { free(w->panel), free(w->arow), free(w->pd), free(w->ad); }

/* one task: rows [i0, i1), columns j0 .. j0 + jw; RB (FMA32) or RB_RO rows
   of A at a time (the pairwise leaves reuse the panel's rows from L1) */
static void task(double *c, const double *a, const double *b, size_t n, size_t k,
                 const nctx_t *proto, const bufs_t *w, int copy, size_t i0, size_t i1,
                 size_t j0, size_t jw) {
  float out[RB * OW32] __attribute__((aligned(64)));
  size_t i, l, j, r, rb = proto->fmt == F_DIR ? RB : RB_RO;
  nctx_t nc = *proto;
  for (l = 0; l < k; l++)
    for (j = 0; j < OW32; j++) w->panel[l * OW32 + j] = j < jw ? (float)b[l * n + j0 + j] : 0.0f;
  for (l = 0; w->pd && l < k * OW32; l++) w->pd[l] = w->panel[l];
  nc.panel = w->panel;
  nc.pd = w->pd;
  nc.ad = w->ad;
  nc.arow = w->arow;
  nc.k = k;
  for (i = i0; i < i1; i += nc.rows) {
    nc.rows = i1 - i < rb ? i1 - i : rb;
    for (l = 0; l < nc.rows * k; l++) w->arow[l] = (float)a[i * k + l];
    for (l = 0; w->ad && l < nc.rows * k; l++) w->ad[l] = w->arow[l];
    row_copy(copy, out, &nc, k);
    for (r = 0; r < nc.rows; r++)
      for (j = 0; j < jw; j++) c[(i + r) * n + j0 + j] = canon((double)out[r * OW32 + j]);
  }
}

/* the accumulator as the steps read it */
static void proto_of(nctx_t *p, const lowp_accum_t *acc, int mode) {
  const lowp_format_t *f = &acc->acc;
  memset(p, 0, sizeof *p);
  p->acc.p = f->precision;
  p->acc.emin = f->emin;
  p->acc.mode = mode;
  p->acc.xmax = lowp_format_xmax(f);
  /* RO32 formats are IEEE-like (lowp_gemm_acc_fast_kind): these three
     shapes are bf16, fp16 and fp32 (FMA32, the only one of p = 24) */
  p->fmt = f->precision == 24                                        ? F_DIR
           : f->precision == 8 && f->emin == -126 && f->emax == 127 ? F_BF16
           : f->precision == 11 && f->emin == -14 && f->emax == 15  ? F_FP16
                                                                    : F_OTHER;
  p->acc.bf16 = p->fmt == F_BF16;
  p->acc.fp16 = p->fmt == F_FP16;
  p->rp = !acc->fma;
  p->order = acc->order;
  p->block = acc->block;
}

int lowp_order_fast32(double *c, const double *a, const double *b, size_t m, size_t n,
                      size_t k, const lowp_accum_t *acc, int mode, int isa) {
  nctx_t proto;
  size_t nj = (n + OW32 - 1) / OW32, ni = (m + IRO32 - 1) / IRO32;
  int copy, fail = 0;
  proto_of(&proto, acc, mode);
  copy = copy_for(&proto, isa);
  /* buffers once per thread (fresh pages per task cost more than a row) */
#pragma omp parallel reduction(| : fail)
  {
    bufs_t w;
    long long t;
    int ok = bufs_alloc(&w, k, proto.fmt == F_DIR && !proto.rp);
#pragma omp for schedule(dynamic, 1)
    for (t = 0; t < (long long)(nj * ni); t++) {
      size_t j0 = ((size_t)t % nj) * OW32, i0 = ((size_t)t / nj) * IRO32;
      size_t jw = n - j0 < OW32 ? n - j0 : OW32, i1 = m - i0 < IRO32 ? m : i0 + IRO32;
      if (ok) task(c, a, b, n, k, &proto, &w, copy, i0, i1, j0, jw);
      else fail = 1;
    }
    bufs_free(&w);
  }
  return fail ? LOWP_ENOMEM : LOWP_OK;
}
