/* lowp_reduce_fast -- the summation orders of lowp_accum_dot on vectors of outputs, same bits */

/*
 * lib/model/accum.c defines each order per output: recursive (the first
 * two terms in one rounding, a lone term rounded once as t + 0), pairwise
 * (mid = lo + (hi - lo) / 2, exact terms at the leaves), blocked:B and
 * splitk:S (recursive sums of width B, or ceil(k / S), then added left to
 * right from the first). The shape of every one depends only on k, so OW
 * outputs of a row of C (columns j0 .. j0 + OW) follow the same tree at
 * once: a term is a vector over j (a[i l] b[l j], rounded to acc first
 * when fma = 0), an addition a vector of roundings.
 *
 * Each addition is gemm_acc_fast.c's step (cpu/acc_steps.h), proven there:
 * fp64 (p = 53, rne) adds in binary64 as accum.c does; narrower formats
 * (p <= 51) take x + y rounded to odd at 53 bits by TwoSum, then rounded
 * once to acc in the mode (Boldo and Melquiond, IEEE Trans. Computers
 * 57(4), 2008, Theorem 1). That step holds for any two binary64 operands
 * whose sum TwoSum gets exactly: here both are values of acc or exact
 * products of binary32 values (48 bits, exponent >= -298: every sum of two
 * of them is a multiple of 2^-298, far inside binary64's subnormal grid,
 * and far below its overflow). Zeros follow IEEE 754 6.3 as accum.c does
 * (x + 0 keeps the sign of x; an exact zero sum is +0, or -0 in rdn unless
 * both terms are +0); a NaN result is the positive quiet NaN.
 *
 * fp64 in rne and fp32 in rne (binary32 inputs) run on register tiles
 * (reduce_fast_tile.h): MR rows of outputs times one vector of lanes (8
 * binary64 or 16 binary32), the running sums in registers, each vector of
 * B loaded once for the MR rows; the pairwise subtrees of up to 8 terms
 * are unrolled at compile time (the shape of [lo, hi) depends only on
 * hi - lo), the levels above them go through memory. Their arithmetic:
 * fp64, binary64 products and additions as accum.c computes them; fp32, a
 * sum of two fp32 values one binary32 addition, a term added to an fp32
 * value one fmaf (fma = 1) or a binary32 product then an addition (fma =
 * 0), two exact terms in one rounding by ftwo512 below on AVX-512, else
 * by the TwoSum leaf of reduce_fast_body.h (on AVX2 its fast way first,
 * ftwo256; the pairwise subtrees one row at a time, pbase_f_avx2).
 *
 * Loops: tasks of (column block, row group), the column block of B packed
 * as k x OW (binary64) or k x OWF (binary32; zeros past n). Compiled three
 * times (baseline, AVX2+FMA, AVX-512) and chosen at run time, as in
 * gemm_acc_fast.c.
 */

#include "cpu.h"
#include "cpu/gemm_acc_fast.h"
#include "cpu/pairwise_split.h"
#include "cpu/reduce_fast.h"
#include "cpu/reduce_fast32.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

#include "cpu/acc_steps.h"

enum { OW = 32, IRO = 256 };

/* ---- the RO lanes (formats of p <= 51 but fp32 in rne: gemm_acc_fast.c's step) */

/* Everything the loops read. */
typedef struct {
  const double *arow;  /* row i of A (k entries) */
  const double *panel; /* k x OW, columns j0 .. j0 + OW of B */
  tgt_t acc;
  int rp; /* fma = 0: products rounded to acc */
  lowp_acc_order_t order;
  size_t block;
} octx_t;

/* out = the terms a[i l] b[l j] of the OW columns */
AI void term(double *out, const octx_t *c, size_t l) {
  const vd va = vsplat(c->arow[l]);
  const double *bl = c->panel + l * OW;
  size_t j;
  for (j = 0; j < OW; j += VW) {
    vd vb, p;
    memcpy(&vb, bl + j, sizeof vb);
    p = va * vb;
    if (c->rp) p = vround_to(p, &c->acc);
    memcpy(out + j, &p, sizeof p);
  }
}

/* x = x + y, each lane rounded once to acc */
AI void add_to(double *x, const double *y, const octx_t *c) {
  size_t j;
  for (j = 0; j < OW; j += VW) {
    vd vx, vy;
    memcpy(&vx, x + j, sizeof vx);
    memcpy(&vy, y + j, sizeof vy);
    vx = vround_to(vadd_odd(vx, vy, c->acc.mode), &c->acc);
    memcpy(x + j, &vx, sizeof vx);
  }
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* term and add_to on AVX2: the same steps on 4 binary64 lanes of
   intrinsics (rd_round, rd_odd: cpu/acc_steps.h; gcc's AVX2 build of the
   vector-extension steps kept scalar pieces) */
#define LOWP_RD_TGT __attribute__((target("avx2,fma")))
LOWP_RD_TGT AI void term_avx2(double *out, const octx_t *c, size_t l) {
  const __m256d va = _mm256_broadcast_sd(&c->arow[l]);
  const double *bl = c->panel + l * OW;
  size_t j;
  for (j = 0; j < OW; j += 4) {
    __m256d p = _mm256_mul_pd(va, _mm256_loadu_pd(bl + j));
    if (c->rp) p = rd_round(p, &c->acc, c->acc.mode);
    _mm256_storeu_pd(out + j, p);
  }
}

LOWP_RD_TGT AI void add_to_avx2(double *x, const double *y, const octx_t *c) {
  size_t j;
  for (j = 0; j < OW; j += 4) {
    __m256d vx = _mm256_loadu_pd(x + j);
    vx = rd_round(rd_odd(vx, _mm256_loadu_pd(y + j), c->acc.mode), &c->acc, c->acc.mode);
    _mm256_storeu_pd(x + j, vx);
  }
}
#undef LOWP_RD_TGT
#endif

/* ---- register tiles (reduce_fast_tile.h): MR rows x one vector of lanes,
   for fp64 (binary64 lanes, kind d) and fp32 in rne (binary32 lanes, kind
   f with exact terms, fma = 1, kind r with binary32 products, fma = 0). A
   row of a tile holds OW = 32 binary64 lanes (4 vectors) or OWF = 256
   binary32 lanes (NCH = 16 vectors). */

enum { OWF = 256, MR = 8, NCH = OWF / 16 };
typedef float vf __attribute__((vector_size(64))); /* 16 binary32 lanes */
typedef float vf8 __attribute__((vector_size(32)));

/* Everything a tile reads. */
typedef struct {
  const double *ad[MR]; /* MR rows of A (rows past m: zeros) */
  const float *af[MR];  /* the same in binary32 (fp32 lanes) */
  const double *pd;     /* k x OW panel of B (fp64) */
  const float *pf;      /* k x OWF panel of B (fp32) */
  size_t nch;           /* vectors per row of the tile that hold columns */
  lowp_acc_order_t order;
  size_t block;
} tctx_t;

AI vd ldd(const double *p) {
  vd v;
  memcpy(&v, p, sizeof v);
  return v;
}

AI vf ldf(const float *p) {
  vf v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* the 8 binary32 values at p, in binary64 (exact) */
AI vd cvt8(const float *p) {
  vf8 x;
  memcpy(&x, p, sizeof x);
  return __builtin_convertvector(x, vd);
}

/* two halves of binary64 lanes, each rounded once to binary32 (rne) */
AI vf join8(vd lo, vd hi) {
  vf8 l8 = __builtin_convertvector(lo, vf8), h8 = __builtin_convertvector(hi, vf8);
  float o[16];
  vf v;
  memcpy(o, &l8, sizeof l8);
  memcpy(o + 8, &h8, sizeof h8);
  memcpy(&v, o, sizeof v);
  return v;
}

/* kind d: binary64 products (rounded, as accum.c's term) and additions */
AI void leaf2_d(vd *s, const tctx_t *c, size_t l, size_t j) {
  const vd b0 = ldd(c->pd + l * OW + j), b1 = ldd(c->pd + (l + 1) * OW + j);
  int r;
  for (r = 0; r < MR; r++) s[r] = c->ad[r][l] * b0 + c->ad[r][l + 1] * b1;
}

AI void tadd_d(vd *s, const tctx_t *c, size_t l, size_t j) {
  const vd b = ldd(c->pd + l * OW + j);
  int r;
  for (r = 0; r < MR; r++) s[r] = c->ad[r][l] * b + s[r];
}

AI void lone_d(vd *s, const tctx_t *c, size_t l, size_t j) {
  const vd b = ldd(c->pd + l * OW + j);
  int r;
  for (r = 0; r < MR; r++) s[r] = c->ad[r][l] * b + (vd){0};
}

/* kind r: binary32 products (the exact product rounded once to fp32) */
AI void leaf2_r(vf *s, const tctx_t *c, size_t l, size_t j) {
  const vf b0 = ldf(c->pf + l * OWF + j), b1 = ldf(c->pf + (l + 1) * OWF + j);
  int r;
  for (r = 0; r < MR; r++) s[r] = c->af[r][l] * b0 + c->af[r][l + 1] * b1;
}

AI void tadd_r(vf *s, const tctx_t *c, size_t l, size_t j) {
  const vf b = ldf(c->pf + l * OWF + j);
  int r;
  for (r = 0; r < MR; r++) s[r] = c->af[r][l] * b + s[r];
}

AI void lone_r(vf *s, const tctx_t *c, size_t l, size_t j) {
  const vf b = ldf(c->pf + l * OWF + j);
  int r;
  for (r = 0; r < MR; r++) s[r] = c->af[r][l] * b + (vf){0};
}

/* kind f: a lone exact term, round(t + 0) (binary64 exact, -0 to +0) */
AI void lone_f(vf *s, const tctx_t *c, size_t l, size_t j) {
  const float *b = c->pf + l * OWF + j;
  const vd lo = cvt8(b), hi = cvt8(b + 8);
  int r;
  for (r = 0; r < MR; r++) {
    const double a = c->ad[r][l];
    s[r] = join8(a * lo + (vd){0}, a * hi + (vd){0});
  }
}

/* kind f: *s = round(a b + *s) lane by lane, one rounding (fmaf) */
AI void vfma_g(vf *s, float a, const vf *b) {
  int e;
  for (e = 0; e < 16; e++) (*s)[e] = fmaf(a, (*b)[e], (*s)[e]);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define LOWP_ORD_AVX512 "avx512f,avx512bw,avx512vl,avx512dq,fma"

__attribute__((target("avx2,fma"))) AI void vfma_avx2(vf *s, float a, const vf *b) {
  const __m256 va = _mm256_set1_ps(a);
  __m256 x[2], y[2];
  memcpy(x, s, sizeof x);
  memcpy(y, b, sizeof y);
  x[0] = _mm256_fmadd_ps(va, y[0], x[0]);
  x[1] = _mm256_fmadd_ps(va, y[1], x[1]);
  memcpy(s, x, sizeof x);
}

__attribute__((target(LOWP_ORD_AVX512))) AI void vfma512(vf *s, float a, const vf *b) {
  *s = (vf)_mm512_fmadd_ps(_mm512_set1_ps(a), (__m512)*b, (__m512)*s);
}

/* ftwo_ (reduce_fast_body.h) on AVX-512. p0 = a0 b0 is exact in binary64; the fused multiply-add
   a1 b1 + p0 rounds the exact sum x once (IEEE 754 fusedMultiplyAdd).

   Fast: s = x rounded to nearest binary64, then to binary32. That double
   rounding gives x rounded once unless s is a binary32 midpoint (x != s: a
   midpoint strictly between x and s would be a binary64 number nearer to
   x than s; x and s lie on the same side of every other midpoint, the
   overflow threshold, itself a midpoint, included). A binary32 midpoint,
   normal or subnormal, has at most 25 significant bits: the low 28 bits of
   its binary64 encoding are zero. So when no lane of the MR rows has those
   bits all zero (exact zeros, infinities and NaN have them too), s
   converted is the answer; else the leaf is done again the slow way.

   Slow: x rounded down (d) and up (u), AVX-512's rounding in the
   instruction. d == u: x is exact (an exact zero: u has rne's sign, +0
   unless both terms are -0; d = -0 is even, so u is taken); else d and u
   are adjacent encodings of one sign (a nonzero x is at least 2^-298, far
   from binary64's zero and overflow), one of them odd, and that one is x
   rounded to odd, which converts to x rounded once (Boldo and Melquiond,
   Theorem 1: 53 >= 24 + 2). So: d when d is odd, else u. */
#define LOWP_RO512(a0, b0, a1, b1)                                                       \
  __extension__({                                                                        \
    const __m512d p0_ = _mm512_mul_pd(a0, b0);                                           \
    const __m512d d_ =                                                                   \
        _mm512_fmadd_round_pd(a1, b1, p0_, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);   \
    const __m512d u_ =                                                                   \
        _mm512_fmadd_round_pd(a1, b1, p0_, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);   \
    const __mmask8 odd_ = _mm512_test_epi64_mask(_mm512_castpd_si512(d_), one);          \
    _mm512_cvtpd_ps(_mm512_mask_blend_pd(odd_, u_, d_));                                 \
  })
/* the fast way: s converted; ok_ keeps the lanes whose s is no midpoint */
#define LOWP_RN512(a0, b0, a1, b1)                                                       \
  __extension__({                                                                        \
    const __m512d s_ = _mm512_fmadd_pd(a1, b1, _mm512_mul_pd(a0, b0));                   \
    ok_ = _mm512_mask_test_epi64_mask(ok_, _mm512_castpd_si512(s_), low28);              \
    _mm512_cvtpd_ps(s_);                                                                 \
  })
#define LOWP_JOIN512(lo, hi) (vf) _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1)
__attribute__((target(LOWP_ORD_AVX512))) AI void ftwo512(vf *s, const tctx_t *c, size_t l,
                                                          size_t j) {
  const float *b0 = c->pf + l * OWF + j, *b1 = b0 + OWF;
  const __m512d b0l = _mm512_cvtps_pd(_mm256_loadu_ps(b0));
  const __m512d b0h = _mm512_cvtps_pd(_mm256_loadu_ps(b0 + 8));
  const __m512d b1l = _mm512_cvtps_pd(_mm256_loadu_ps(b1));
  const __m512d b1h = _mm512_cvtps_pd(_mm256_loadu_ps(b1 + 8));
  const __m512i low28 = _mm512_set1_epi64(0x0fffffff), one = _mm512_set1_epi64(1);
  __mmask8 ok_ = 0xff;
  int r;
  for (r = 0; r < MR; r++) {
    const __m512d a0 = _mm512_set1_pd(c->ad[r][l]), a1 = _mm512_set1_pd(c->ad[r][l + 1]);
    const __m256 lo = LOWP_RN512(a0, b0l, a1, b1l), hi = LOWP_RN512(a0, b0h, a1, b1h);
    s[r] = LOWP_JOIN512(lo, hi);
  }
  if (__builtin_expect(ok_ == 0xff, 1)) return;
  for (r = 0; r < MR; r++) {
    const __m512d a0 = _mm512_set1_pd(c->ad[r][l]), a1 = _mm512_set1_pd(c->ad[r][l + 1]);
    const __m256 lo = LOWP_RO512(a0, b0l, a1, b1l), hi = LOWP_RO512(a0, b0h, a1, b1h);
    s[r] = LOWP_JOIN512(lo, hi);
  }
}
#undef LOWP_RO512
#undef LOWP_RN512
#undef LOWP_JOIN512

/* ftwo512's fast way on AVX2 (4 binary64 lanes per instruction, the same
   proof): s = a1 b1 + p0 rounded to nearest binary64 by the fused
   multiply-add (p0 = a0 b0 exact), converted to binary32; a lane whose s
   has the low 28 bits of its encoding zero may be a binary32 midpoint, and
   when any lane of the MR rows has, the leaf is done again by SLOW. The
   test is one unsigned 32-bit minimum per vector over the encodings ANDed
   with 0xffffffff0fffffff: a zero low half is the low 28 bits zero; a zero
   high half (s = +0 or a subnormal, which no nonzero sum of products of
   binary32 values is) only sends a leaf to SLOW as well (the
   TwoSum leaf of reduce_fast_body.h, ftwo_avx2: no rounding in the
   instruction on AVX2). */
#define LOWP_RN256(a0, b0, a1, b1)                                                       \
  __extension__({                                                                        \
    const __m256d s_ = _mm256_fmadd_pd(a1, b1, _mm256_mul_pd(a0, b0));                   \
    mid_ = _mm256_min_epu32(mid_, _mm256_and_si256(_mm256_castpd_si256(s_), low28));   \
    _mm256_cvtpd_ps(s_);                                                                 \
  })
#define LOWP_FTWO256(NAME, SLOW)                                                         \
  __attribute__((target("avx2,fma"))) AI void NAME(vf *s, const tctx_t *c, size_t l,     \
                                                   size_t j) {                          \
    const float *b0 = c->pf + l * OWF + j, *b1 = b0 + OWF;                               \
    const __m256d b0a = _mm256_cvtps_pd(_mm_loadu_ps(b0));                               \
    const __m256d b0b = _mm256_cvtps_pd(_mm_loadu_ps(b0 + 4));                           \
    const __m256d b0c = _mm256_cvtps_pd(_mm_loadu_ps(b0 + 8));                           \
    const __m256d b0d = _mm256_cvtps_pd(_mm_loadu_ps(b0 + 12));                          \
    const __m256d b1a = _mm256_cvtps_pd(_mm_loadu_ps(b1));                               \
    const __m256d b1b = _mm256_cvtps_pd(_mm_loadu_ps(b1 + 4));                           \
    const __m256d b1c = _mm256_cvtps_pd(_mm_loadu_ps(b1 + 8));                           \
    const __m256d b1d = _mm256_cvtps_pd(_mm_loadu_ps(b1 + 12));                          \
    const __m256i low28 = _mm256_set1_epi64x((long long)0xffffffff0fffffffull);         \
    __m256i mid_ = _mm256_set1_epi32(-1), z_;                                            \
    int r;                                                                               \
    for (r = 0; r < MR; r++) {                                                           \
      const __m256d a0 = _mm256_broadcast_sd(&c->ad[r][l]);                              \
      const __m256d a1 = _mm256_broadcast_sd(&c->ad[r][l + 1]);                          \
      __m256 h[2]; /* (whole 32-byte halves: 16-byte stores miss store forwarding) */     \
      h[0] = _mm256_insertf128_ps(_mm256_castps128_ps256(LOWP_RN256(a0, b0a, a1, b1a)),  \
                                  LOWP_RN256(a0, b0b, a1, b1b), 1);                      \
      h[1] = _mm256_insertf128_ps(_mm256_castps128_ps256(LOWP_RN256(a0, b0c, a1, b1c)),  \
                                  LOWP_RN256(a0, b0d, a1, b1d), 1);                      \
      memcpy(&s[r], h, sizeof h);                                                        \
    }                                                                                    \
    z_ = _mm256_cmpeq_epi32(mid_, _mm256_setzero_si256());                               \
    if (__builtin_expect(_mm256_testz_si256(z_, z_), 1)) return;                         \
    SLOW(s, c, l, j);                                                                    \
  }
#endif

#define SFX _generic
#define ATTR
#define FTWO_INLINE 0
#define TILE_MAX 4
#define VFMA vfma_g
#define TERM term
#define ADD_TO add_to
#include "cpu/reduce_fast_body.h"
#undef SFX
#undef ATTR
#undef FTWO_INLINE
#undef TILE_MAX
#undef VFMA

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* kind d's recursive sums (reduce_fast_tile.h's rec_: round(t + 0) for a
   lone term, else round(t0 + t1), then round(t + s) per term; every t the
   binary64 product, every round one binary64 addition) on AVX2. The
   generic tile keeps MR = 8 rows of 64-byte vectors, 16 ymm registers of
   sums before B and A, so gcc spilled them in the inner loop; here half a
   tile at a time: 4 rows x 2 ymm of sums, 2 of B, 1 of A. The same
   operations lane by lane, in the same order (-ffp-contract=off: no fused
   multiply-add). */
enum { RH = 4 };
__attribute__((target("avx2,fma"))) static void rec_d_avx2(vd *out, const tctx_t *c, size_t lo,
                                                             size_t hi) {
  size_t h, l, r0;
  int r, q;
  for (h = 0; h < c->nch; h++)
    for (r0 = 0; r0 < MR; r0 += RH) {
      const double *bp = c->pd + h * VW;
      __m256d s[RH][2];
      for (r = 0; r < RH; r++) {
        const __m256d a0 = _mm256_broadcast_sd(&c->ad[r0 + r][lo]);
        for (q = 0; q < 2; q++) {
          const __m256d p0 = _mm256_mul_pd(a0, _mm256_loadu_pd(bp + lo * OW + 4 * q));
          if (hi - lo == 1) {
            s[r][q] = _mm256_add_pd(p0, _mm256_setzero_pd());
          } else {
            const __m256d a1 = _mm256_broadcast_sd(&c->ad[r0 + r][lo + 1]);
            s[r][q] = _mm256_add_pd(
                p0, _mm256_mul_pd(a1, _mm256_loadu_pd(bp + (lo + 1) * OW + 4 * q)));
          }
        }
      }
      for (l = lo + 2; l < hi; l++) {
        const __m256d b0 = _mm256_loadu_pd(bp + l * OW), b1 = _mm256_loadu_pd(bp + l * OW + 4);
        for (r = 0; r < RH; r++) {
          const __m256d a = _mm256_broadcast_sd(&c->ad[r0 + r][l]);
          s[r][0] = _mm256_add_pd(_mm256_mul_pd(a, b0), s[r][0]);
          s[r][1] = _mm256_add_pd(_mm256_mul_pd(a, b1), s[r][1]);
        }
      }
      for (r = 0; r < RH; r++) memcpy(&out[(r0 + r) * NCH + h], s[r], sizeof s[r]);
    }
}
#define LOWP_AVX2 __attribute__((target("avx2,fma")))
/* kind f's pairwise subtrees (reduce_fast_tile.h's pbase_) on AVX2. The
   generic tile keeps MR = 8 rows of 16 binary32 lanes, 16 ymm registers
   of sums, and a subtree's second operand as many again: gcc spilled them
   to the stack at every level. Here one row of 16 lanes at a time (2 ymm
   a subtree value, 6 at the deepest of 8 terms), the chunk's terms of B
   converted to binary64 once into a window w that the leaves read from
   memory; the same operations lane by lane, in the same order, as the
   tile's p2 .. p8 (ftwo256's fast way at the leaves, a term added to a
   pair one fmaf, every other addition one binary32 addition).

   A leaf: x = a1 b1 + p0 rounded to nearest binary64 by the fused
   multiply-add (p0 = a0 b0 exact), converted to binary32: x rounded once
   unless x is a binary32 midpoint (LOWP_FTWO256's proof), and a midpoint
   has the low 28 bits of its encoding zero. The test: the low halves of
   the encodings of two vectors gathered into one (one shuffle), ANDed
   with 0x0fffffff, one unsigned 32-bit minimum per vector into mid. A
   zero lane of mid (a midpoint, or an exact zero, an infinity or a NaN)
   sends the whole chunk to the slow way, the tile's pchunk_ (p2 .. p8
   with ftwo256, whose slow way is the TwoSum leaf), which gives the same
   bits for every lane. */
typedef struct {
  const double *w; /* the window: term lo + l's 16 lanes of B in binary64 at w + 16 l */
  const double *a; /* the row of A from term lo (binary64) */
  const float *af; /* the same in binary32 */
  const float *b;  /* B's 16 binary32 lanes of term lo (terms OWF apart) */
} frow_t;

/* s = round(t_l + t_{l+1}) for the row's 16 lanes, the low words of the
   binary64 sums into *mid */
LOWP_AVX2 AI void frow2(__m256 *s, const frow_t *q, size_t l, __m256i *mid) {
  const __m256d a0 = _mm256_broadcast_sd(q->a + l), a1 = _mm256_broadcast_sd(q->a + l + 1);
  const double *w0 = q->w + 16 * l, *w1 = w0 + 16;
  const __m256i low28 = _mm256_set1_epi32(0x0fffffff);
  __m256d x[4];
  int e;
  for (e = 0; e < 4; e++)
    x[e] = _mm256_fmadd_pd(a1, _mm256_load_pd(w1 + 4 * e),
                           _mm256_mul_pd(a0, _mm256_load_pd(w0 + 4 * e)));
  for (e = 0; e < 2; e++) {
    const __m256 lo = _mm256_shuffle_ps(_mm256_castpd_ps(x[2 * e]), _mm256_castpd_ps(x[2 * e + 1]),
                                        0x88); /* (the even words: the low halves) */
    *mid = _mm256_min_epu32(*mid, _mm256_and_si256(_mm256_castps_si256(lo), low28));
    s[e] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(x[2 * e])),
                                _mm256_cvtpd_ps(x[2 * e + 1]), 1);
  }
}

/* a subtree of 3: the pair (l + 1, l + 2), then term l added by one fmaf */
LOWP_AVX2 AI void frow3(__m256 *s, const frow_t *q, size_t l, __m256i *mid) {
  const __m256 a = _mm256_set1_ps(q->af[l]);
  frow2(s, q, l + 1, mid);
  s[0] = _mm256_fmadd_ps(a, _mm256_loadu_ps(q->b + l * OWF), s[0]);
  s[1] = _mm256_fmadd_ps(a, _mm256_loadu_ps(q->b + l * OWF + 8), s[1]);
}

/* [l, l + n) = [l, l + n / 2) then the rest (reduce_fast_tile.h's KTREE) */
#define LOWP_FROW(n, h, rest)                                                            \
  LOWP_AVX2 AI void frow##n(__m256 *s, const frow_t *q, size_t l, __m256i *mid) {        \
    __m256 t[2];                                                                         \
    frow##h(s, q, l, mid);                                                               \
    frow##rest(t, q, l + h, mid);                                                        \
    s[0] = _mm256_add_ps(s[0], t[0]), s[1] = _mm256_add_ps(s[1], t[1]);                  \
  }
LOWP_PAIRWISE_SPLITS_8(LOWP_FROW)
#undef LOWP_FROW

/* chunk h of the MR rows, [lo, lo + n) */
#define LOWP_FROWS(n)                                                                    \
  for (r = 0; r < MR; r++) {                                                             \
    const double *wr = w;                                                                \
    frow_t q;                                                                            \
    __m256 s[2];                                                                         \
    __asm__("" : "+r"(wr)); /* (else gcc kept the window in spilled copies) */           \
    q.w = wr, q.a = c->ad[r] + lo, q.af = c->af[r] + lo, q.b = c->pf + lo * OWF + h * 16; \
    frow##n(s, &q, 0, &mid);                                                             \
    _mm256_storeu_ps((float *)&out[r * NCH + h], s[0]);                                  \
    _mm256_storeu_ps((float *)&out[r * NCH + h] + 8, s[1]);                              \
  }

typedef void pchunk_fn(vf *s, const tctx_t *c, size_t lo, size_t n, size_t j);

/* out[r NCH + h] for the chunks h < c->nch: the pairwise sum of [lo, lo +
   n), 2 <= n <= 8; slow: the tile's pchunk_ */
LOWP_AVX2 static void pbase_f_avx2(vf *out, const tctx_t *c, size_t lo, size_t n,
                                    pchunk_fn *slow) {
  double w[8 * 16] __attribute__((aligned(32)));
  size_t h, l;
  int r, e;
  for (h = 0; h < c->nch; h++) {
    const float *b = c->pf + lo * OWF + h * 16;
    __m256i mid = _mm256_set1_epi32(-1), z;
    for (l = 0; l < n; l++)
      for (e = 0; e < 4; e++)
        _mm256_store_pd(w + 16 * l + 4 * e, _mm256_cvtps_pd(_mm_loadu_ps(b + l * OWF + 4 * e)));
#define LOWP_FCASE(n, h, rest) case n: LOWP_FROWS(n) break;
    switch (n) {
    case 2: LOWP_FROWS(2) break;
    case 3: LOWP_FROWS(3) break;
    LOWP_PAIRWISE_SPLITS_8(LOWP_FCASE)
    default: LOWP_FROWS(8) break; /* (n <= 8) */
    }
#undef LOWP_FCASE
    z = _mm256_cmpeq_epi32(mid, _mm256_setzero_si256());
    if (__builtin_expect(!_mm256_testz_si256(z, z), 0)) {
      vf s[MR];
      slow(s, c, lo, n, h * 16);
      for (r = 0; r < MR; r++) out[r * NCH + h] = s[r];
    }
  }
}
#undef LOWP_FROWS

/* *x = *x + *y lane by lane (one rounding each) on AVX2: gcc built the
   64-byte vectors' addition through the stack in 16-byte pieces */
LOWP_AVX2 AI void vadd_f_avx2(vf *x, const vf *y) {
  float *xp = (float *)x;
  const float *yp = (const float *)y;
  _mm256_storeu_ps(xp, _mm256_add_ps(_mm256_loadu_ps(xp), _mm256_loadu_ps(yp)));
  _mm256_storeu_ps(xp + 8, _mm256_add_ps(_mm256_loadu_ps(xp + 8), _mm256_loadu_ps(yp + 8)));
}

LOWP_AVX2 AI void vadd_d_avx2(vd *x, const vd *y) {
  double *xp = (double *)x;
  const double *yp = (const double *)y;
  _mm256_storeu_pd(xp, _mm256_add_pd(_mm256_loadu_pd(xp), _mm256_loadu_pd(yp)));
  _mm256_storeu_pd(xp + 4, _mm256_add_pd(_mm256_loadu_pd(xp + 4), _mm256_loadu_pd(yp + 4)));
}
#undef LOWP_AVX2

#define LOWP_ORDFAST_X86 1
#define SFX _avx2
#define ATTR __attribute__((target("avx2,fma")))
#define FTWO ftwo256
#define FTWO_INLINE 2
/* (8 here and 16 on AVX-512 compiled this file in 10.2 s of CPU, 4 here and 8 there in 4.3 s; the
   bench's AVX2 pairwise rows 6-21% slower, 2026-12-01) */
#define TILE_MAX 4
#define VFMA vfma_avx2
#undef TERM
#undef ADD_TO
#define TERM term_avx2
#define ADD_TO add_to_avx2
#define REC_D rec_d_avx2
#define PBASE_F pbase_f_avx2
#define VADD_F vadd_f_avx2
#define VADD_D vadd_d_avx2
#include "cpu/reduce_fast_body.h"
#undef REC_D
#undef PBASE_F
#undef VADD_F
#undef VADD_D
#undef TERM
#undef ADD_TO
#define TERM term
#define ADD_TO add_to
#undef SFX
#undef ATTR
#undef FTWO
#undef FTWO_INLINE
#undef TILE_MAX
#undef VFMA
#define SFX _avx512
#define ATTR __attribute__((target(LOWP_ORD_AVX512)))
#define FTWO ftwo512
#define FTWO_INLINE 1
#ifdef LOWP_SANITIZED /* (CMake: sanitizer builds; clang's UBSan took 4 minutes over 16) */
#define TILE_MAX 4
#else
#define TILE_MAX 8 /* (16: fp64 pairwise 0.045 -> 0.041 ns per multiply-add here, 4: 0.060) */
#endif
#define VFMA vfma512
#include "cpu/reduce_fast_body.h"
#undef SFX
#undef ATTR
#undef FTWO
#undef FTWO_INLINE
#undef TILE_MAX
#undef VFMA
#endif

static void row_isa(int isa, double *out, const octx_t *c, size_t k) {
  switch (isa) {
#ifdef LOWP_ORDFAST_X86
  case LOWP_ISA_AVX512: row__avx512(out, c, k); break;
  case LOWP_ISA_AVX2: row__avx2(out, c, k); break;
#endif
  default: row__generic(out, c, k); break;
  }
}

static void tile_d_isa(int isa, vd *out, const tctx_t *c, size_t k) {
  switch (isa) {
#ifdef LOWP_ORDFAST_X86
  case LOWP_ISA_AVX512: tile__d_avx512(out, c, k); break;
  case LOWP_ISA_AVX2: tile__d_avx2(out, c, k); break;
#endif
  default: tile__d_generic(out, c, k); break;
  }
}

static void tile_f_isa(int isa, int rp, vf *out, const tctx_t *c, size_t k) {
  switch (isa) {
#ifdef LOWP_ORDFAST_X86
  case LOWP_ISA_AVX512: (rp ? tile__r_avx512 : tile__f_avx512)(out, c, k); break;
  case LOWP_ISA_AVX2: (rp ? tile__r_avx2 : tile__f_avx2)(out, c, k); break;
#endif
  default: (rp ? tile__r_generic : tile__f_generic)(out, c, k); break;
  }
}

static int fast_mode_of(lowp_rounding_t rnd) {
  switch (rnd) {
  case LOWP_RND_NE: return M_NE;
  case LOWP_RND_TZ: return M_TZ;
  case LOWP_RND_UP: return M_UP;
  case LOWP_RND_DN: return M_DN;
  default: return -1;
  }
}

/* the recursive order's fast kernel for this accumulator, or NONE */
static lowp_accfast_kind_t kind_for(const double *a, const double *b, size_t m, size_t n,
                                    size_t k, const lowp_accum_t *acc) {
  lowp_gemm_acc_cfg_t g;
  memset(&g, 0, sizeof g);
  g.acc = &acc->acc;
  g.acc_rnd = acc->rnd;
  g.prod = acc->fma ? NULL : &acc->acc;
  g.prod_rnd = acc->rnd;
  g.order = LOWP_ORDER_RECURSIVE;
  return lowp_gemm_acc_fast_kind(a, b, m, n, k, &g);
}

/* ----------------------------------------------------------- public API */

/* the recursive order's fast kernel when this one serves acc, or NONE */
static lowp_accfast_kind_t usable_kind(const double *a, const double *b, size_t m, size_t n,
                                       size_t k, const lowp_accum_t *acc) {
  if (!acc || lowp_accum_validate(acc, NULL, 0) != LOWP_OK || acc->order == LOWP_ACC_KAHAN)
    return LOWP_ACCFAST_NONE;
  if (fast_mode_of(acc->rnd) < 0 || acc->acc.precision > 53) return LOWP_ACCFAST_NONE;
  /* FMA64 is fp64 in rne; every other kind runs on formats of p <= 51
     (gemm_acc_fast.c's ro_fits) with binary32 inputs */
  return kind_for(a, b, m, n, k, acc);
}

int lowp_gemm_order_fast_ok(const double *a, const double *b, size_t m, size_t n, size_t k,
                            const lowp_accum_t *acc) {
  return usable_kind(a, b, m, n, k, acc) != LOWP_ACCFAST_NONE;
}

/* the loops that run kind kd on isa use: 2 cpu/reduce_fast32.h, 1 the
   fp32-in-rne binary32 lanes here, 0 the binary64 lanes */
static int path_of(lowp_accfast_kind_t kd, const lowp_accum_t *acc, int use, size_t k) {
  if (lowp_order_fast32_ok(kd, acc, use, k)) return 2;
  /* fp32 (FMA32: binary32 inputs) in rne: binary32 lanes */
  return kd == LOWP_ACCFAST_FMA32 && acc->rnd == LOWP_RND_NE;
}

/* the isa argument as lowp_isa_t, or -1 (unknown) or -2 (not on this CPU) */
static int isa_use(const char *isa) {
  int best = (int)lowp_cpu_isa(1), use;
  if (!isa) return best;
  if ((use = lowp_isa_parse(isa)) < 0) return -1;
  return use > best ? -2 : use;
}

int lowp_gemm_order_fast_lanes(const double *a, const double *b, size_t m, size_t n, size_t k,
                               const lowp_accum_t *acc, const char *isa) {
  int use = isa_use(isa);
  lowp_accfast_kind_t kd = usable_kind(a, b, m, n, k, acc);
  if (use < 0 || kd == LOWP_ACCFAST_NONE) return 0;
  return path_of(kd, acc, use, k) ? 32 : 64;
}

/* one task on register tiles: rows [i0, i1), columns j0 .. j0 + jw; fp32
   in rne (f32) or fp64 */
static int task_tiles(double *c, const double *a, const double *b, size_t n, size_t k,
                      const lowp_accum_t *acc, int f32, int isa, size_t i0, size_t i1,
                      size_t j0, size_t jw) {
  const size_t w = f32 ? OWF : OW, kl = f32 ? 16 : VW;
  void *panel = aligned_alloc(64, k * w * (f32 ? sizeof(float) : sizeof(double)));
  double *zeros = calloc(k, sizeof *zeros);
  float *afb = malloc(MR * k * sizeof *afb);
  union {
    vd d[MR * NCH];
    vf f[MR * NCH];
  } out;
  size_t i, l, j, r, rows;
  tctx_t tc;
  if (!panel || !zeros || !afb) {
    free(panel), free(zeros), free(afb);
    return 1;
  }
  memset(&tc, 0, sizeof tc);
  for (l = 0; l < k; l++) {
    const double *src = b + l * n + j0;
    if (f32) {
      float *dst = (float *)panel + l * w;
      for (j = 0; j < jw; j++) dst[j] = (float)src[j];
      for (; j < w; j++) dst[j] = 0.0f;
    } else {
      double *dst = (double *)panel + l * w;
      for (j = 0; j < jw; j++) dst[j] = src[j];
      for (; j < w; j++) dst[j] = 0.0;
    }
  }
  tc.pd = panel, tc.pf = panel;
  tc.nch = (jw + kl - 1) / kl;
  tc.order = acc->order;
  tc.block = acc->block;
  for (i = i0; i < i1; i += rows) {
    rows = i1 - i < MR ? i1 - i : MR;
    for (r = 0; r < MR; r++) { /* rows past i1: zeros, computed and dropped */
      const double *src = r < rows ? a + (i + r) * k : zeros;
      float *dst = afb + r * k;
      tc.ad[r] = src;
      tc.af[r] = dst;
      if (f32)
        for (l = 0; l < k; l++) dst[l] = (float)src[l];
    }
    if (f32) tile_f_isa(isa, !acc->fma, out.f, &tc, k);
    else tile_d_isa(isa, out.d, &tc, k);
    for (r = 0; r < rows; r++)
      for (j = 0; j < jw; j++)
        c[(i + r) * n + j0 + j] = canon(f32 ? (double)out.f[r * NCH + j / 16][j % 16]
                                            : out.d[r * NCH + j / VW][j % VW]);
  }
  free(panel), free(zeros), free(afb);
  return 0;
}

/* one task of the binary64 lanes: rows [i0, i1), columns j0 .. j0 + jw;
   fp64 (f64) on tiles */
static int task64(double *c, const double *a, const double *b, size_t n, size_t k,
                  const lowp_accum_t *acc, int f64, int isa, size_t i0, size_t i1, size_t j0,
                  size_t jw) {
  double *panel, out[OW];
  size_t i, l, j;
  octx_t oc;
  if (f64) return task_tiles(c, a, b, n, k, acc, 0, isa, i0, i1, j0, jw);
  if (!(panel = aligned_alloc(64, k * OW * sizeof(double)))) return 1;
  for (l = 0; l < k; l++)
    for (j = 0; j < OW; j++) panel[l * OW + j] = j < jw ? b[l * n + j0 + j] : 0.0;
  memset(&oc, 0, sizeof oc);
  oc.panel = panel;
  oc.acc.p = acc->acc.precision;
  oc.acc.emin = acc->acc.emin;
  oc.acc.mode = fast_mode_of(acc->rnd);
  oc.acc.xmax = lowp_format_xmax(&acc->acc);
  oc.rp = !acc->fma;
  oc.order = acc->order;
  oc.block = acc->block;
  for (i = i0; i < i1; i++) {
    oc.arow = a + i * k;
    row_isa(isa, out, &oc, k);
    for (j = 0; j < jw; j++) c[i * n + j0 + j] = canon(out[j]);
  }
  free(panel);
  return 0;
}

/* one task of the binary32 lanes (fp32 in rne) */
static int task32(double *c, const double *a, const double *b, size_t n, size_t k,
                  const lowp_accum_t *acc, int isa, size_t i0, size_t i1, size_t j0,
                  size_t jw) {
  return task_tiles(c, a, b, n, k, acc, 1, isa, i0, i1, j0, jw);
}

int lowp_gemm_order_fast(double *c, const double *a, const double *b, size_t m, size_t n,
                         size_t k, const lowp_accum_t *acc, const char *isa) {
  size_t nj, ni, e, w;
  long long t;
  int use = isa_use(isa), fail = 0, f64, f32, path;
  lowp_accfast_kind_t kd;
  if (use < 0) return use == -1 ? LOWP_EINVAL : LOWP_EUNSUPPORTED;
  /* the inputs read once (the kind scans them) */
  kd = usable_kind(a, b, m, n, k, acc);
  if ((m && n && !c) || kd == LOWP_ACCFAST_NONE) return LOWP_EINVAL;
  if (m == 0 || n == 0) return LOWP_OK;
  if (k == 0) {
    for (e = 0; e < m * n; e++) c[e] = 0.0;
    return LOWP_OK;
  }
  /* narrow accumulators and fp32 in directed modes: cpu/reduce_fast32.h */
  path = path_of(kd, acc, use, k);
  if (path == 2) return lowp_order_fast32(c, a, b, m, n, k, acc, fast_mode_of(acc->rnd), use);
  f64 = kd == LOWP_ACCFAST_FMA64;
  f32 = path == 1;
  w = f32 ? OWF : OW;
  nj = (n + w - 1) / w, ni = (m + IRO - 1) / IRO;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : fail)
  for (t = 0; t < (long long)(nj * ni); t++) {
    size_t j0 = ((size_t)t % nj) * w, i0 = ((size_t)t / nj) * IRO;
    size_t jw = n - j0 < w ? n - j0 : w, i1 = m - i0 < IRO ? m : i0 + IRO;
    fail |= f32 ? task32(c, a, b, n, k, acc, use, i0, i1, j0, jw)
                : task64(c, a, b, n, k, acc, f64, use, i0, i1, j0, jw);
  }
  return fail ? LOWP_ENOMEM : LOWP_OK;
}
