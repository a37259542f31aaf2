/* The AVX2 copy of lowp_gemm_tc_fast on 32-bit lanes; included once by gemm_tc_fast.c */

/*
 * The same integers as tc_block / normalise (gemm_tc_fast.c), in 32-bit
 * lanes, eight output columns per register, the chain state kept in
 * registers across blocks. AVX2 has no 64-bit arithmetic shift, compare-max
 * or absolute value; the 64-bit copy spent most of its time emulating them.
 *
 *  products  |ma mb| < 2^(2p) (p <= 12, so the significands are int16 and
 *            vpmaddwd multiplies them), cut at 2^(X - F) as the 64-bit copy:
 *            (|ma mb| << l0) >> (X - xa - xb + r0) < 2^(F + 2) (vpsrlvd gives
 *            0 for counts >= 32, which is the cut of a product below the
 *            block's quantum); the sign put back by vpsignd.
 *  sum       in int32 when (b + 1) 2^(F + 2) <= 2^31; else in two int32
 *            accumulators (even / odd k of the block) when each holds at
 *            most (ceil(b / 2) + 1) 2^(F + 2) <= 2^31 and the total
 *            magnitude stays below 3 2^30 (h100 / b200 fp16, bf16 and fp8
 *            mma.sync: b = 16, F = 25), |S| recovered exactly from the
 *            wrapped sum and floor(S / 2).
 *  c         kept between blocks as the rounded integer: c = cm 2^cq with
 *            cq = cx - P + 1 (cx its clamped exponent, ZC for zero; after a
 *            carry cq = cx - P, cm = 2^P; C itself at cx - pout + 1) and the
 *            sign of a zero; its cut is (|cm| << lc) >> (X - F - cq + lc),
 *            lc = max(0, F + 1 - P): X >= cx >= cq + P - 1, so the count is
 *            >= 0 and |cm| << lc < 2^(F + 1). Converted to binary64 only where tc_dot.c adds in
 *            binary64: promotion chunks, late c, the end.
 *  round     bitlen(|S|) from two exact int -> float conversions (16-bit
 *            halves); rtz as a shift; rne as (U + half - 1 + lsb) >> s.
 *
 * Lanes whose result overflows (ovf = inf), whose C is not finite, or that
 * meet the one case these lanes cannot round (s = 32 with |S| >= 2^31, only
 * in the two-accumulator case) are written as NaN, which fixup() recomputes
 * with lowp_tc_dot, as it does every non-finite output. All-zero blocks take
 * zero_signs's rule from the original values (lanes touched, rare).
 */

#include <immintrin.h>

#define T2 __attribute__((target("avx2"), always_inline)) static inline
#define T2F __attribute__((target("avx2"))) static


/* Lane state: c = cm 2^cq (cx its clamped exponent, ZC when cm = 0; cz the
   sign of a zero c as a -1/0 mask), bad lanes (-1). */
typedef struct {
  __m256i cm, cq, cx, cz, bad;
} c8_t;

/* 1 when the 32-bit lanes hold every sum of this job (see above). */
static int q32_fits(const lowp_gemm_tc_cfg_t *cfg, int F, int P, int pout) {
  const lowp_bfma_t *p = &cfg->model.bfma;
  double top = ldexp(1.0, F + 2), half = (double)((p->b + 1) / 2 + 1);
  int lc = F + 1 - P > 0 ? F + 1 - P : 0;
  if (F + 2 > 31 || pout + 1 + lc > 31) return 0;
  if ((double)(p->b + 1) * top <= 0x1p31) return 1;
  if (half * top <= 0x1p31 && (double)(p->b + 1) * top <= 0x3p30) return 2;
  return 0;
}

/* C (finite or not, a value of the output format) as the lane state */
T2 void c8_set(c8_t *s, const double *c, int pout, int oemin) {
  int32_t cm[8], cq[8], cx[8], cz[8], bad[8];
  int l;
  for (l = 0; l < 8; l++) {
    double v = c[l];
    cm[l] = 0, cq[l] = 0, cx[l] = ZC, cz[l] = 0, bad[l] = 0;
    if (!isfinite(v)) bad[l] = -1;
    else if (v == 0.0) cz[l] = signbit(v) ? -1 : 0;
    else {
      int e = (int)((bits_of(v) >> 52) & 0x7ff) - 1023;
      cx[l] = e < oemin ? oemin : e;
      cq[l] = cx[l] - pout + 1;
      cm[l] = (int32_t)ldexp(v, -cq[l]); /* exact: v has pout bits at 2^cq */
    }
  }
  s->cm = _mm256_loadu_si256((const __m256i *)cm), s->cq = _mm256_loadu_si256((const __m256i *)cq);
  s->cx = _mm256_loadu_si256((const __m256i *)cx), s->cz = _mm256_loadu_si256((const __m256i *)cz);
  s->bad = _mm256_loadu_si256((const __m256i *)bad);
}

/* c as binary64, four lanes (half = 0: lanes 0-3, 1: lanes 4-7) */
T2 __m256d c8_value(const c8_t *s, int half) {
  __m128i m = half ? _mm256_extracti128_si256(s->cm, 1) : _mm256_castsi256_si128(s->cm);
  __m128i q = half ? _mm256_extracti128_si256(s->cq, 1) : _mm256_castsi256_si128(s->cq);
  __m128i z = half ? _mm256_extracti128_si256(s->cz, 1) : _mm256_castsi256_si128(s->cz);
  __m256i sc = _mm256_slli_epi64(_mm256_add_epi64(_mm256_cvtepi32_epi64(q), _mm256_set1_epi64x(1023)), 52);
  __m256d v = _mm256_mul_pd(_mm256_cvtepi32_pd(m), _mm256_castsi256_pd(sc));
  __m256i sg = _mm256_slli_epi64(_mm256_cvtepi32_epi64(z), 63); /* only zeros carry cz */
  return _mm256_or_pd(v, _mm256_castsi256_pd(sg));
}

T2 void c8_zero(c8_t *s) {
  s->cm = s->cq = s->cz = _mm256_setzero_si256();
  s->cx = _mm256_set1_epi32(ZC);
}

/* The block on lanes j0 .. j0 + 7 of row i: c = bfma(products, c). nacc: 1
   or 2 int32 accumulators; zf: bit 0 c0align=emin (where it can move X),
   bit 1 zrnd=pos (compile-time in each copy, as nacc and rne). */
T2 void blk8(const job_t *g, c8_t *s, const int32_t *ma, const int32_t *xa, const int32_t *mb,
             const int32_t *xb, size_t len, int nacc, int rne, int zf, size_t i, size_t j0,
             size_t s0) {
  const __m256i one = _mm256_set1_epi32(1), zero = _mm256_setzero_si256();
  __m256i X = s->cx, S0, S1 = zero, t, U, sg, lg, s8, r, L, xe, cy, cz;
  size_t kk;
  int zb;
  for (kk = 0; kk < len; kk++)
    X = _mm256_max_epi32(X, _mm256_add_epi32(_mm256_set1_epi32(xa[kk]),
                                             _mm256_loadu_si256((const __m256i *)(xb + kk * W8))));
  if (zf & 1) /* c = 0 at 2^emin once a product is nonzero (all-zero lanes keep X < ZX / 2) */
    X = _mm256_blendv_epi8(X, _mm256_max_epi32(X, _mm256_set1_epi32(g->oemin)),
                           _mm256_and_si256(_mm256_cmpeq_epi32(s->cx, _mm256_set1_epi32(ZC)),
                                            _mm256_cmpgt_epi32(X, _mm256_set1_epi32(ZX / 2))));
  /* c's cut */
  t = _mm256_sub_epi32(X, _mm256_add_epi32(s->cq, _mm256_set1_epi32(g->F - g->lq)));
  S0 = _mm256_sign_epi32(
      _mm256_srlv_epi32(_mm256_sll_epi32(_mm256_abs_epi32(s->cm), _mm_cvtsi32_si128(g->lq)), t),
      s->cm);
  for (kk = 0; kk < len; kk++) {
    __m256i p = _mm256_madd_epi16(_mm256_set1_epi32(ma[kk]),
                                  _mm256_loadu_si256((const __m256i *)(mb + kk * W8)));
    __m256i sh = _mm256_sub_epi32(_mm256_sub_epi32(X, _mm256_set1_epi32(xa[kk] - g->r0)),
                                  _mm256_loadu_si256((const __m256i *)(xb + kk * W8)));
    __m256i q = _mm256_srlv_epi32(_mm256_sll_epi32(_mm256_abs_epi32(p), _mm_cvtsi32_si128(g->l0)), sh);
    q = _mm256_sign_epi32(q, p);
    if (nacc == 2 && (kk & 1)) S1 = _mm256_add_epi32(S1, q);
    else S0 = _mm256_add_epi32(S0, q);
  }
  /* |S| and its sign */
  if (nacc == 2) {
    __m256i h = _mm256_add_epi32(_mm256_add_epi32(_mm256_srai_epi32(S0, 1), _mm256_srai_epi32(S1, 1)),
                                 _mm256_and_si256(_mm256_and_si256(S0, S1), one));
    sg = _mm256_srai_epi32(h, 31);
    U = _mm256_sub_epi32(_mm256_xor_si256(_mm256_add_epi32(S0, S1), sg), sg);
  } else {
    sg = _mm256_srai_epi32(S0, 31);
    U = _mm256_abs_epi32(S0);
  }
  /* lg = floor(log2 U) (U = 0: -111, rounds to 0 below) */
  {
    __m256 fh = _mm256_cvtepi32_ps(_mm256_srli_epi32(U, 16));
    __m256 fl = _mm256_cvtepi32_ps(_mm256_and_si256(U, _mm256_set1_epi32(0xffff)));
    lg = _mm256_max_epi32(_mm256_add_epi32(_mm256_srli_epi32(_mm256_castps_si256(fh), 23),
                                           _mm256_set1_epi32(16)),
                          _mm256_srli_epi32(_mm256_castps_si256(fl), 23));
    lg = _mm256_sub_epi32(lg, _mm256_set1_epi32(127));
  }
  L = _mm256_sub_epi32(X, _mm256_set1_epi32(g->F));
  s8 = _mm256_max_epi32(_mm256_max_epi32(_mm256_sub_epi32(lg, _mm256_set1_epi32(g->P - 1)),
                                         _mm256_sub_epi32(_mm256_set1_epi32(g->oemin - g->P + 1), L)),
                        zero);
  if (rne) {
    __m256i m = _mm256_sub_epi32(_mm256_sllv_epi32(one, s8), one);
    __m256i lsb = _mm256_and_si256(_mm256_and_si256(_mm256_srlv_epi32(U, s8), m), one);
    r = _mm256_srlv_epi32(_mm256_add_epi32(U, _mm256_add_epi32(_mm256_srli_epi32(m, 1), lsb)), s8);
  } else
    r = _mm256_srlv_epi32(U, s8);
  if (nacc == 2) /* s = 32 with U >= 2^31: the one rounding these lanes miss */
    s->bad = _mm256_or_si256(s->bad, _mm256_and_si256(_mm256_cmpeq_epi32(s8, _mm256_set1_epi32(32)),
                                                      _mm256_srai_epi32(U, 31)));
  /* carry: r reached 2^(lg + 1 - s) */
  cy = _mm256_sub_epi32(_mm256_cmpeq_epi32(
                            _mm256_srlv_epi32(r, _mm256_sub_epi32(_mm256_add_epi32(lg, one), s8)), zero),
                        _mm256_set1_epi32(-1));
  xe = _mm256_add_epi32(_mm256_add_epi32(L, lg), cy);
  {
    __m256i nz = _mm256_cmpgt_epi32(r, zero);
    s->bad = _mm256_or_si256(s->bad, _mm256_and_si256(nz, _mm256_cmpgt_epi32(xe, _mm256_set1_epi32(g->oemax))));
    s->cx = _mm256_blendv_epi8(_mm256_set1_epi32(ZC), _mm256_max_epi32(xe, _mm256_set1_epi32(g->oemin)), nz);
  }
  /* c at the quantum of its exponent, cx - P + 1 (the rounded value may
     hold fewer bits; after a carry it stays at its own quantum) */
  L = _mm256_add_epi32(L, s8);
  s->cq = _mm256_min_epi32(L, _mm256_sub_epi32(s->cx, _mm256_set1_epi32(g->P - 1)));
  r = _mm256_sllv_epi32(r, _mm256_sub_epi32(L, s->cq));
  s->cm = _mm256_sub_epi32(_mm256_xor_si256(r, sg), sg);
  /* rounded to zero: S's sign, or +0 (zrnd=pos) */
  cz = (zf & 2) ? zero : _mm256_and_si256(sg, _mm256_cmpeq_epi32(r, zero));
  /* all products zero and c = 0: the sign rule of bfma.c */
  zb = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(ZX / 2), X)));
  if (zb) {
    int32_t zs[8], zs0[8];
    int l;
    _mm256_storeu_si256((__m256i *)zs0, s->cz);
    _mm256_storeu_si256((__m256i *)zs, cz);
    for (l = 0; l < 8; l++) {
      size_t j = j0 + (size_t)l;
      int neg = (zb >> l) & 1 && zs0[l] && j < g->n && !g->zsum_pos;
      for (kk = 0; kk < len && neg; kk++) {
        size_t q = g->perm[s0 + kk];
        neg = signbit(g->a[i * g->k + q]) != signbit(g->b[q * g->n + j]);
      }
      zs[l] = (zb >> l) & 1 ? (neg ? -1 : 0) : zs[l];
    }
    s->cz = _mm256_loadu_si256((const __m256i *)zs);
  } else
    s->cz = cz;
}

/* x + y by add_out's rule, four lanes; fp32 and fp16 rne in the registers */
T2 __m256d add8(const job_t *g, __m256d x, __m256d y) {
  const lowp_format_t *f = g->out;
  double xs[4], ys[4];
  int l;
  if (g->c_rnd == LOWP_RND_NE && f->precision == 24 && f->emax == 127 && f->emin == -126)
    return _mm256_cvtps_pd(_mm256_cvtpd_ps(_mm256_add_pd(x, y)));
  if (g->c_rnd == LOWP_RND_NE && f->precision == 11 && f->emax == 15 && f->emin == -14) {
    /* add_out's fp16 rule; non-finite sums stay non-finite (fixup redoes them) */
    __m256d v = _mm256_add_pd(x, y), z;
    __m256i e = _mm256_sub_epi64(_mm256_and_si256(_mm256_srli_epi64(_mm256_castpd_si256(v), 52),
                                                  _mm256_set1_epi64x(0x7ff)),
                                 _mm256_set1_epi64x(1023 + 10));
    __m256i lo = _mm256_set1_epi64x(-24);
    e = _mm256_blendv_epi8(e, lo, _mm256_cmpgt_epi64(lo, e)); /* q = max(e, -14) - 10 */
    z = _mm256_round_pd(_mm256_mul_pd(v, _mm256_castsi256_pd(_mm256_slli_epi64(
                                             _mm256_sub_epi64(_mm256_set1_epi64x(1023), e), 52))),
                        _MM_FROUND_CUR_DIRECTION);
    z = _mm256_mul_pd(z, _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(e, _mm256_set1_epi64x(1023)), 52)));
    {
      __m256d sgn = _mm256_and_pd(z, _mm256_set1_pd(-0.0));
      __m256d big = _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), z), _mm256_set1_pd(0x1p16), _CMP_GE_OQ);
      return _mm256_blendv_pd(z, _mm256_or_pd(_mm256_set1_pd(INFINITY), sgn), big);
    }
  }
  _mm256_storeu_pd(xs, x), _mm256_storeu_pd(ys, y);
  for (l = 0; l < 4; l++) xs[l] = add_out(xs[l], ys[l], f, g->c_rnd);
  return _mm256_loadu_pd(xs);
}

T2 __m256d fl32(__m256d x) { return _mm256_cvtps_pd(_mm256_cvtpd_ps(x)); }

/* One row i of one 8-column panel: tc_dot.c's chain (row_panel's) */
T2 void row8(const job_t *g, size_t i, size_t pan, int nacc, int rne, int zf) {
  size_t s, j0 = pan * W8, nj = g->n - j0 < W8 ? g->n - j0 : W8, j;
  const int32_t *ma = g->ma + i * g->k, *xa = g->xa + i * g->k;
  const int32_t *mb = g->mb + pan * g->k * W8, *xb = g->xb + pan * g->k * W8;
  double c0[W8], out[W8];
  __m256d acc0, acc1, tot0, tot1;
  c8_t st;
  for (j = 0; j < W8; j++) c0[j] = j < nj ? g->c[i * g->n + j0 + j] : 0.0;
  c8_set(&st, c0, g->pout, g->oemin);
  acc0 = tot0 = _mm256_loadu_pd(c0), acc1 = tot1 = _mm256_loadu_pd(c0 + 4);
  if (g->late_c || g->promote) c8_zero(&st);
  for (s = 0; s < g->nseg; s++) {
    const seg_t *sg = &g->seg[s];
    if ((sg->flags & SEG_CHAIN0) && g->promote) {
      acc0 = acc1 = _mm256_setzero_pd();
      if (!g->late_c) c8_zero(&st);
    }
    if ((sg->flags & SEG_INSTR0) && g->late_c) c8_zero(&st);
    blk8(g, &st, ma + sg->start, xa + sg->start, mb + sg->start * W8, xb + sg->start * W8, sg->len,
         nacc, rne, zf, i, j0, sg->start);
    if ((sg->flags & SEG_INSTR1) && g->late_c)
      acc0 = add8(g, c8_value(&st, 0), acc0), acc1 = add8(g, c8_value(&st, 1), acc1);
    if ((sg->flags & SEG_CHAIN1) && g->promote) {
      if (!g->late_c) acc0 = c8_value(&st, 0), acc1 = c8_value(&st, 1);
      tot0 = fl32(_mm256_add_pd(tot0, acc0)), tot1 = fl32(_mm256_add_pd(tot1, acc1));
    }
  }
  if (g->promote) acc0 = tot0, acc1 = tot1;
  else if (!g->late_c) acc0 = c8_value(&st, 0), acc1 = c8_value(&st, 1);
  {
    __m256i b = st.bad;
    __m256d nan = _mm256_set1_pd(NAN);
    acc0 = _mm256_blendv_pd(acc0, nan, _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(b))));
    acc1 = _mm256_blendv_pd(acc1, nan, _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(b, 1))));
  }
  _mm256_storeu_pd(out, acc0), _mm256_storeu_pd(out + 4, acc1);
  for (j = 0; j < nj; j++) {
    double d = out[j];
    if (g->promote && g->pout < 24 && !isnan(d)) lowp_round_f64(&d, d, g->out, NULL, LOWP_RND_NE);
    g->c[i * g->n + j0 + j] = d;
  }
}

/* Rows i0 .. i1 - 1 of one 8-column panel; one instantiation per
   (accumulators, rounding, zero parameters) so that the block's loops stay
   branch-free. */
T2 void rows8(const job_t *g, size_t i0, size_t i1, size_t pan, int zf) {
  size_t i;
  for (i = i0; i < i1; i++) {
    if (g->q32 == 1 && g->rne) row8(g, i, pan, 1, 1, zf);
    else if (g->q32 == 1) row8(g, i, pan, 1, 0, zf);
    else if (g->rne) row8(g, i, pan, 2, 1, zf);
    else row8(g, i, pan, 2, 0, zf);
  }
}

T2F void run_q32(const job_t *g, size_t i0, size_t i1, size_t pan) {
  switch ((g->c0_emin ? 1 : 0) | (g->zrnd_pos ? 2 : 0)) {
  case 0: rows8(g, i0, i1, pan, 0); break;
  case 1: rows8(g, i0, i1, pan, 1); break;
  case 2: rows8(g, i0, i1, pan, 2); break;
  default: rows8(g, i0, i1, pan, 3); break;
  }
}

#undef T2
#undef T2F
