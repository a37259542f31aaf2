/* lowp_reduce_fast32's orders, compiled once per instruction set and family of
   steps: included by reduce_fast32.c, reduce_fast32_avx2.c and
   reduce_fast32_avx512.c with SFX (a name suffix), ATTR (a target
   attribute or nothing), V (the 16-lane vector type), OPFX (the prefix of the
   steps: v_ or m_), LOWP_N32_KEY(c) and LOWP_N32_CASES(CALL) (the (fmt,
   mode, rp) this copy serves, as constants) defined; the steps include
   OP(ld) and OP(st), a vector from and to 16 floats, and OP(sum), OP(add)
   where both terms are already rounded to acc (a copy may skip a test);
   LOWP_N32_BLOCKS(out, c, k, w), where defined, runs the recursive,
   blocked and splitk sums of all c's rows and says 1, or says 0 (then
   blocks_ runs). No include guard: meant
   to be included several times. LOWP_N32_LEAF: the largest pairwise
   subtree kept in registers (2 to 8); where defined, LOWP_N32_BIG(fmt) (a
   constant in each instance) names the instances that keep
   LOWP_N32_LEAF_BIG instead;
   LOWP_N32_NVB: the vectors the recursive sums step together (a divisor
   of NV). */
#ifndef LOWP_N32_BIG
#define LOWP_N32_BIG(fmt) 0
#endif
#define LOWP_N32_LEAF_BIG 8
/* the leaf size of the instance for format fmt */
#define LOWP_N32_LEAF_OF(fmt) (LOWP_N32_BIG(fmt) ? LOWP_N32_LEAF_BIG : LOWP_N32_LEAF)

#define LOWP_CAT2(a, b) a##b
#define LOWP_CAT(a, b) LOWP_CAT2(a, b)
#define FN(name) LOWP_CAT(name, SFX)
#define OP(name) LOWP_CAT(OPFX, name)

/* pairwise over 2 to 8 terms in registers, one vector of 16 columns: the
   shape of lowp_accum_dot's pairwise_raw (mid = lo + n / 2); a subtree of
   one term is the exact term (pw3 = round(t_lo + pw2)) */
ATTR AI V FN(pw2_)(const nctx_t *c, size_t lo, size_t jv, KP) { return OP(two)(c, lo, jv, KN); }
ATTR AI V FN(pw3_)(const nctx_t *c, size_t lo, size_t jv, KP) {
  return OP(addt)(FN(pw2_)(c, lo + 1, jv, KN), c, lo, jv, KN);
}
#define LOWP_PW(N, L, R)                                                           \
  ATTR AI V FN(pw##N##_)(const nctx_t *c, size_t lo, size_t jv, KP) {              \
    return OP(sum)(FN(pw##L##_)(c, lo, jv, KN), FN(pw##R##_)(c, lo + L, jv, KN), c, KN); \
  }
LOWP_PAIRWISE_SPLITS_8(LOWP_PW)
#undef LOWP_PW

/* out = pairwise over [lo, lo + n), 1 <= n <= LOWP_N32_LEAF_OF(fmt), for
   the OW32 columns of each of c's rows (n = 1 only for k = 1: the lone term rounded) */
ATTR AI void FN(leaf_)(float *out0, const nctx_t *c0, size_t lo, size_t n, KP) {
  size_t jv, ri;
  for (ri = 0; ri < c0->rows; ri++) {
    nctx_t cr = *c0;
    const nctx_t *c = &cr;
    float *out = out0 + ri * OW32;
    cr.arow = c0->arow + ri * c0->k;
    if (c0->ad) cr.ad = c0->ad + ri * c0->k;
#define LOWP_LEAF(EXPR)                                                            \
  for (jv = 0; jv < NV; jv++) {                                                    \
    OP(st)(out + jv * VWF, EXPR);                                                  \
  }                                                                                \
  break;
#define LOWP_LCASE(n, h, rest) case n: LOWP_LEAF(FN(pw##n##_)(c, lo, jv, KN))
#define LOWP_LSWITCH(MAXN)                                                          \
  switch (n) {                                                                     \
  case 1: LOWP_LEAF(OP(lone)(c, lo, jv, KN))                                       \
  case 2: LOWP_LEAF(FN(pw2_)(c, lo, jv, KN))                                       \
  case 3: LOWP_LEAF(FN(pw3_)(c, lo, jv, KN))                                       \
  LOWP_PAIRWISE_SPLITS(MAXN, LOWP_LCASE)                                           \
  default: LOWP_LEAF(FN(LOWP_CAT(LOWP_CAT(pw, MAXN), _))(c, lo, jv, KN)) /* (pair_ asks for no more) */ \
  }
    if (LOWP_N32_BIG(fmt)) {
      LOWP_LSWITCH(LOWP_N32_LEAF_BIG)
    } else {
      LOWP_LSWITCH(LOWP_N32_LEAF)
    }
#undef LOWP_LSWITCH
#undef LOWP_LCASE
  }
#undef LOWP_LEAF
}

/* out = round(out + y), each of the OW32 lanes of c's rows */
ATTR AI void FN(addv_)(float *out, const float *y, const nctx_t *c, KP) {
  size_t jv;
  for (jv = 0; jv < c->rows * NV; jv++) {
    OP(st)(out + jv * VWF, OP(sum)(OP(ld)(out + jv * VWF), OP(ld)(y + jv * VWF), c, KN));
  }
}

/* recursive sums of width w (the last one shorter), added left to right
   from the first: blocked:B (w = B), splitk:S (w = ceil(k / S)), recursive
   (w = k). LOWP_N32_NVB vectors step together: as many independent
   chains, as many as the registers hold. */
ATTR AI void FN(blocks_)(float *out, const nctx_t *c, size_t k, size_t w, KP) {
  size_t j0, lo, l, jv;
  for (j0 = 0; j0 < NV; j0 += LOWP_N32_NVB) {
    V acc[LOWP_N32_NVB], s[LOWP_N32_NVB];
    memset(acc, 0, sizeof acc);
    for (lo = 0; lo < k; lo += w) {
      size_t hi = lo + w < k ? lo + w : k;
      if (hi - lo == 1)
        for (jv = 0; jv < LOWP_N32_NVB; jv++) s[jv] = OP(lone)(c, lo, j0 + jv, KN);
      else
        for (jv = 0; jv < LOWP_N32_NVB; jv++) s[jv] = OP(two)(c, lo, j0 + jv, KN);
      for (l = lo + 2; l < hi; l++)
        for (jv = 0; jv < LOWP_N32_NVB; jv++) s[jv] = OP(addt)(s[jv], c, l, j0 + jv, KN);
      for (jv = 0; jv < LOWP_N32_NVB; jv++)
        acc[jv] = lo ? OP(sum)(acc[jv], s[jv], c, KN) : s[jv];
    }
    for (jv = 0; jv < LOWP_N32_NVB; jv++) OP(st)(out + (j0 + jv) * VWF, acc[jv]);
  }
}

/* the three above with (fmt, mode, rp) as constants */
#define LOWP_N32_SWITCH(CALLX)                                                     \
  switch (LOWP_N32_KEY(c)) {                                                       \
    LOWP_N32_CASES(CALLX)                                                          \
  default: break;                                                                  \
  }

ATTR static void FN(leafd_)(float *out, const nctx_t *c, size_t lo, size_t n) {
#define LOWP_CALL(F, M, R, KEY)                                                    \
  case KEY: FN(leaf_)(out, c, lo, n, F, M, R); break;
  LOWP_N32_SWITCH(LOWP_CALL)
#undef LOWP_CALL
}

ATTR static void FN(addvd_)(float *out, const float *y, const nctx_t *c) {
#define LOWP_CALL(F, M, R, KEY)                                                    \
  case KEY: FN(addv_)(out, y, c, F, M, R); break;
  LOWP_N32_SWITCH(LOWP_CALL)
#undef LOWP_CALL
}

ATTR static void FN(blocksd_)(float *out, const nctx_t *c, size_t k, size_t w) {
#define LOWP_CALL(F, M, R, KEY)                                                    \
  case KEY: FN(blocks_)(out, c, k, w, F, M, R); break;
  LOWP_N32_SWITCH(LOWP_CALL)
#undef LOWP_CALL
}
#undef LOWP_N32_SWITCH

/* pairwise over [lo, hi), hi - lo >= 1: leaves of up to LOWP_N32_LEAF_OF(c->fmt) terms in
   registers, every addition above them on the OW32 lanes in memory */
ATTR static void FN(pair_)(float *out, const nctx_t *c, size_t lo, size_t hi) {
  float tmp[RB * OW32] __attribute__((aligned(64)));
  size_t mid;
  if (hi - lo <= (size_t)LOWP_N32_LEAF_OF(c->fmt)) {
    FN(leafd_)(out, c, lo, hi - lo);
    return;
  }
  mid = lo + (hi - lo) / 2;
  FN(pair_)(out, c, lo, mid);
  FN(pair_)(tmp, c, mid, hi);
  FN(addvd_)(out, tmp, c);
}

/* c->rows rows of OW32 outputs (out: rows x OW32) in c's order, k >= 1
   (lowp_n32_row_ plus SFX: reduce_fast32_int.h) */
ATTR void FN(lowp_n32_row)(float *out, const nctx_t *c, size_t k) {
  size_t w = k, ri;
  if (c->order == LOWP_ACC_PAIRWISE) {
    FN(pair_)(out, c, 0, k);
    return;
  }
  if (c->order == LOWP_ACC_BLOCKED) w = c->block;
  else if (c->order == LOWP_ACC_SPLITK) w = (k + c->block - 1) / c->block;
#ifdef LOWP_N32_BLOCKS
  if (LOWP_N32_BLOCKS(out, c, k, w ? w : 1)) return;
#endif
  for (ri = 0; ri < c->rows; ri++) {
    nctx_t cr = *c;
    cr.arow = c->arow + ri * c->k;
    if (c->ad) cr.ad = c->ad + ri * c->k;
    FN(blocksd_)(out + ri * OW32, &cr, k, w ? w : 1);
  }
}

#undef OP
#undef FN
#undef LOWP_CAT
#undef LOWP_CAT2
#undef LOWP_N32_LEAF_OF
#undef LOWP_N32_LEAF_BIG
