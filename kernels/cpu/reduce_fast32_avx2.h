/* reduce_fast32_avx2.h -- lowp_order_fast32's AVX2 steps (a_), for its two AVX2 translation units */

/* Included by reduce_fast32_avx2.c (fp16 and the other RO32 accumulators)
   and reduce_fast32_avx2b.c (bf16, fp32 in the directed modes): the AVX2
   copy's 24 instances in two units a parallel build compiles side by side
   (31 s of CPU in one). Design: reduce_fast32.c. */

#ifndef LOWP_REDUCE_FAST32_AVX2_H
#define LOWP_REDUCE_FAST32_AVX2_H

#include "cpu/reduce_fast32_int.h"

#include <string.h>

#if defined(LOWP_N32_X86)

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
    __m256 r0, r1;
    if (__builtin_expect(ra_near2(t0, t1, &r0, &r1, f, mode) != 0, 0)) {
      for (h = 0; h < 2; h++) x.h[h] = a_half(ra_odd(x.h[h], y.h[h], mode), c, fmt, mode);
      return x;
    }
    x.h[0] = r0;
    x.h[1] = r1;
    return x;
  }
  for (h = 0; h < 2; h++)
    x.h[h] = fmt == F_DIR ? _mm256_add_ps(x.h[h], y.h[h])
                          : a_half(ra_odd(x.h[h], y.h[h], mode), c, fmt, mode);
  return x;
}

/* round(x + y) where x and y are both values of acc (partial sums already
   rounded: the pairwise tree above its leaves of two terms, the additions
   above the leaves, blocked and splitk's block sums). fp16 and bf16 in rne:
   acc's rounding of t = RN(x + y) in binary32, with no test, since it is
   acc's rounding of x + y. Proof: if x + y is exact in binary32 there is
   nothing to show. Else take |x| >= |y| > 0, x in binade 2^e, y in 2^f;
   y's last place is at least 2^(f - P + 1) (P = 11 fp16, 8 bf16; a
   subnormal's is coarser), and two subnormals of acc add exactly, so x is
   normal. The exact sum fits in e - f + P + 1 bits (e + 1 down to f - P + 1),
   so e - f >= 24 - P and |y| < 2^(e - 23 + P), while the rne boundaries
   next to x (acc's midpoints, 65520 above fp16's largest value) lie
   2^(e - P) from x, except the one below a power of two x, 2^(e - P - 1)
   below it; a sum there (y < 0, no carry) fits in e - f + P bits, so e - f
   >= 25 - P and |y| < 2^(e - 24 + P). Either way x + y lies strictly
   between the two midpoints around x, more than 2^(e - 24) (a binary32
   ulp near x) from each, so RN(x + y) lies between them too and both round
   to x. inf and NaN operands add exactly; an exact zero sum is binary32's,
   as ra_odd's. t is rounded in full (ties to even: t may be an exact
   tie). Other modes and accumulators: a_add. */
T2 AI a16_t a_sum(a16_t x, a16_t y, const nctx_t *c, KP) {
  int h;
  if ((fmt == F_FP16 || fmt == F_BF16) && mode == M_NE) {
    for (h = 0; h < 2; h++) x.h[h] = a_half(_mm256_add_ps(x.h[h], y.h[h]), c, fmt, mode);
    return x;
  }
  return a_add(x, y, c, KN);
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
    __m256 r0, r1;
    if (__builtin_expect(ra_near2(t0, t1, &r0, &r1, f, mode) != 0, 0)) {
      x.h[0] = a_half(ra_odd(x.h[0], _mm256_mul_ps(a, b.h[0]), mode), c, fmt, mode);
      x.h[1] = a_half(ra_odd(x.h[1], _mm256_mul_ps(a, b.h[1]), mode), c, fmt, mode);
      return x;
    }
    x.h[0] = r0;
    x.h[1] = r1;
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

/* ---- recursive, blocked and splitk sums of fp16 and bf16 with exact terms
   (fma = 1), all c->rows rows at once (a_blocks): the loops the recursive
   path (gemm_acc_fast.c) ran before ra_loopd, the fall-back per group.
   blocks_ (cpu/reduce_fast32_body.h) steps one row's two 16-lane vectors
   along k, four dependent chains each a fused multiply-add, the test and
   a conversion there and back long: bound by their latency, and each row
   reads the whole panel again. Here a step runs over the rows' 128
   columns, 8 vectors of 16 lanes per row, independent, each row of the
   panel read once for the rows; the block's sums held as binary16 (fp16:
   read by vcvtph2ps from memory and written by vcvtps2ph in the mode to
   memory, exact for fp16 values, as ra_loop16) or binary32 (bf16). The
   same operations as a_two, a_addt, a_lone and a_sum, lane by lane, in
   the same order: the first two terms of a block t = RN(a1 b1 + a0 b0)
   (a0 b0 exact) and each term after it t = RN(a b + s), acc's rounding of
   t where ra_flag's test passes, else of the sum rounded to odd (ra_odd);
   a lone term a_lone; the block sums into the row's total by a_sum. */

/* x0, x1 = acc's rounding of x + a b (a b exact, x a value of acc or an
   exact product) on two vectors, one test for both; fp16 (F_FP16): the
   value whose conversion to binary16 in the mode is that rounding (t, or
   the sum rounded to odd) */
T2 AI void a_step2(__m256 *x0, __m256 *x1, __m256 a, __m256 b0, __m256 b1, const int F,
                   const int MODE) {
  const __m256 t0 = _mm256_fmadd_ps(a, b0, *x0), t1 = _mm256_fmadd_ps(a, b1, *x1);
  __m256 r0 = t0, r1 = t1;
  const int any = F == F_FP16
                      ? ra_any(ra_f16flag2(t0, t1, MODE), 1)
                      : ra_near2(t0, t1, &r0, &r1, 2, MODE);
  if (__builtin_expect(any != 0, 0)) {
    r0 = ra_odd(*x0, _mm256_mul_ps(a, b0), MODE);
    r1 = ra_odd(*x1, _mm256_mul_ps(a, b1), MODE);
    if (F == F_BF16) r0 = ra_bf16(r0, MODE), r1 = ra_bf16(r1, MODE);
  }
  *x0 = r0, *x1 = r1;
}

/* the block sums: binary16 (fp16) or binary32 (bf16) at element e */
T2 AI __m256 a_hld(const void *h, size_t e, const int F) {
  return F == F_FP16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)h + e)))
                     : _mm256_loadu_ps((const float *)h + e);
}

T2 AI void a_hst(void *h, size_t e, __m256 x, const int F, const int MODE) {
  if (F == F_FP16) _mm_storeu_si128((__m128i *)((uint16_t *)h + e), ra_f16h(x, MODE));
  else _mm256_storeu_ps((float *)h + e, x);
}

/* step l of the block sums of all c->rows rows: nxt = acc's rounding of
   cur + a_l b_l, a_step2 on every 16 lanes with the fall-back taken once
   per step (gemm_acc_fast.c's ra_loopd, where the branch per group, taken
   at random, cost as much as the rest of the loop): the fast result of
   every group written to nxt, the groups whose test fails marked in a mask
   (RB_RO rows x OW32 / 16 columns <= 32 bits) and redone from cur by
   ra_odd after the loop; the same operations per lane as a_step2. Returns
   nxt. */
T2 AI void *a_dstep(void *nxt, const void *cur, const nctx_t *c, size_t l, const int F,
                    const int MODE) {
  const float *bl = c->panel + l * OW32;
  uint32_t fl = 0;
  size_t r, j;
  _Static_assert(RB_RO * (OW32 / 16) <= 32, "a_dstep marks the groups of a step in 32 bits");
  for (r = 0; r < c->rows; r++) {
    const __m256 a = _mm256_set1_ps(c->arow[r * c->k + l]);
    for (j = 0; j < OW32; j += VWF) {
      const size_t e = r * OW32 + j;
      const __m256 t0 = _mm256_fmadd_ps(a, _mm256_loadu_ps(bl + j), a_hld(cur, e, F));
      const __m256 t1 = _mm256_fmadd_ps(a, _mm256_loadu_ps(bl + j + 8), a_hld(cur, e + 8, F));
      __m256 r0 = t0, r1 = t1;
      const int any = F == F_FP16 ? ra_any(ra_f16flag2(t0, t1, MODE), 1)
                                  : ra_near2(t0, t1, &r0, &r1, 2, MODE);
      a_hst(nxt, e, r0, F, MODE);
      a_hst(nxt, e + 8, r1, F, MODE);
      fl |= (uint32_t)(any != 0) << (e / 16);
    }
  }
  while (fl) { /* the marked groups, from the sums before the step */
    const size_t e = (size_t)__builtin_ctz(fl) * 16, rr = e / OW32;
    const __m256 a = _mm256_set1_ps(c->arow[rr * c->k + l]);
    size_t h;
    fl &= fl - 1;
    for (h = e; h < e + 16; h += 8) {
      const __m256 o =
          ra_odd(a_hld(cur, h, F), _mm256_mul_ps(a, _mm256_loadu_ps(bl + h - rr * OW32)), MODE);
      a_hst(nxt, h, F == F_BF16 ? ra_bf16(o, MODE) : o, F, MODE);
    }
  }
  return nxt;
}

/* out (c->rows x OW32) = the recursive sums of width w (the last one
   shorter) of c's rows, added left to right from the first (blocks_) */
T2 AI void a_blocks_rows(float *out, const nctx_t *c, size_t k, size_t w, const int F,
                         const int MODE) {
  union {
    uint16_t h[RB_RO * OW32];
    float f[RB_RO * OW32];
  } sb, so;
  void *hs = F == F_FP16 ? (void *)sb.h : (void *)sb.f;
  void *ho = F == F_FP16 ? (void *)so.h : (void *)so.f; /* a_dstep's other buffer */
  const size_t rows = c->rows;
  size_t lo, l, r, j;
  for (lo = 0; lo < k; lo += w) {
    const size_t hi = lo + w < k ? lo + w : k;
    for (r = 0; r < rows; r++) {
      const float *ar = c->arow + r * c->k;
      if (hi - lo == 1) {
        nctx_t cr = *c;
        cr.arow = ar;
        for (j = 0; j < NV; j++) {
          const a16_t x = a_lone(&cr, lo, j, F, MODE, 0);
          a_hst(hs, r * OW32 + j * VWF, x.h[0], F, MODE);
          a_hst(hs, r * OW32 + j * VWF + 8, x.h[1], F, MODE);
        }
        continue;
      }
      {
        const __m256 a0 = _mm256_set1_ps(ar[lo]), a1 = _mm256_set1_ps(ar[lo + 1]);
        const float *b0 = c->panel + lo * OW32, *b1 = b0 + OW32;
        for (j = 0; j < OW32; j += VWF) {
          __m256 x0 = _mm256_mul_ps(a0, _mm256_loadu_ps(b0 + j));
          __m256 x1 = _mm256_mul_ps(a0, _mm256_loadu_ps(b0 + j + 8));
          a_step2(&x0, &x1, a1, _mm256_loadu_ps(b1 + j), _mm256_loadu_ps(b1 + j + 8), F, MODE);
          a_hst(hs, r * OW32 + j, x0, F, MODE);
          a_hst(hs, r * OW32 + j + 8, x1, F, MODE);
        }
      }
    }
    for (l = lo + 2; l < hi; l++) {
      void *w = a_dstep(ho, hs, c, l, F, MODE);
      ho = hs, hs = w;
    }
    for (j = 0; j < rows * OW32; j += VWF) {
      a16_t s;
      s.h[0] = a_hld(hs, j, F);
      s.h[1] = a_hld(hs, j + 8, F);
      a_st(out + j, lo ? a_sum(a_ld(out + j), s, c, F, MODE, 0) : s);
    }
  }
}

/* blocks_ for all of c's rows when c is fp16 or bf16 (the copy's F) with
   exact terms: 1, else 0 (not served) */
T2 AI int a_blocks(float *out, const nctx_t *c, size_t k, size_t w, const int F) {
  if (c->fmt != F || c->rp) return 0;
  switch (c->acc.mode) {
  case M_TZ: a_blocks_rows(out, c, k, w, F, M_TZ); break;
  case M_UP: a_blocks_rows(out, c, k, w, F, M_UP); break;
  case M_DN: a_blocks_rows(out, c, k, w, F, M_DN); break;
  default: a_blocks_rows(out, c, k, w, F, M_NE); break;
  }
  return 1;
}

/* the AVX2 copy: (fmt, mode, rp) constants for fp16, bf16 and fp32 in the
   directed modes; the mode at run time for the other accumulators */
#define LOWP_N32_KEY(c)                                                            \
  ((c)->fmt == F_OTHER ? (c)->rp : (((c)->fmt * 4 + (c)->acc.mode) * 2 + (c)->rp))
#define LOWP_MR(CALL, F, M) CALL(F, M, 0, ((F) * 4 + (M)) * 2) CALL(F, M, 1, ((F) * 4 + (M)) * 2 + 1)
#define LOWP_MDIR(CALL, F) LOWP_MR(CALL, F, M_TZ) LOWP_MR(CALL, F, M_UP) LOWP_MR(CALL, F, M_DN)
#define LOWP_MALL(CALL, F) LOWP_MR(CALL, F, M_NE) LOWP_MDIR(CALL, F)
#define LOWP_N32_NVB 2
/* 4-term leaves, as the baseline's: 8-term ones compiled each of the two AVX2 files in 12 s of CPU
   instead of 4, and were 3-10% faster on the bench's pairwise rows (fp16, bf16, fp32 rtz at n = 1024,
   2026-12-01). bf16 keeps 8 (LOWP_N32_BIG in reduce_fast32_avx2b.c): its pairwise row was 1.81x the
   recursive path with them, 1.84-1.89x with 4, the bench's nearest to the 2x target */
#define LOWP_N32_LEAF 4
#define ATTR T2
#define V a16_t
#define OPFX a_

#endif
#endif
