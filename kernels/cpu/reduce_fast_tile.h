/* lowp_reduce_fast's register tiles, one kind of lanes: included by
   reduce_fast_body.h (itself compiled once per instruction set) with FN and
   ATTR of the instruction set, and for the kind: KFN(name) (a name suffix),
   TILE_MAX, TV (the lane vector: vd or vf), KL (its lanes), KLEAF2(s, c, l, j)
   (s[r] = round(t_l + t_{l+1}), two exact terms in one rounding),
   KTADD(s, c, l, j) (s[r] = round(t_l + s[r])) and KLONE(s, c, l, j)
   (s[r] = round(t_l + 0)), for the MR rows r of the tile and the lanes
   j .. j + KL of the panel, KVADD(x, y) (*x = *x + *y, lane by lane); KREC
   and KPBASE optional (below). No include guard: meant to be included several
   times.

   A tile is MR rows of outputs times one vector of lanes; its running sums
   stay in registers while terms come in, each column of B loaded once for
   the MR rows. */

#include "cpu/pairwise_split.h"

/* ---- pairwise subtrees of 2 to 16 terms, the shape fixed at compile
   time (lowp_accum_dot's pairwise_raw: [l, l + n) splits at l + n / 2; a
   subtree of 3 is a term added to a pair) */

#define KTREE(n, h, rest)                                                           \
  ATTR AI void KFN(p##n)(TV * s, const tctx_t *c, size_t l, size_t j) {             \
    TV t[MR];                                                                       \
    int r;                                                                          \
    KFN(p##h)(s, c, l, j);                                                          \
    KFN(p##rest)(t, c, l + h, j);                                                   \
    for (r = 0; r < MR; r++) s[r] = s[r] + t[r];                                    \
  }

ATTR AI void KFN(p2)(TV *s, const tctx_t *c, size_t l, size_t j) { KLEAF2(s, c, l, j); }

ATTR AI void KFN(p3)(TV *s, const tctx_t *c, size_t l, size_t j) {
  KLEAF2(s, c, l + 1, j);
  KTADD(s, c, l, j);
}

/* [l, l + n) = [l, l + n / 2) then the rest */
LOWP_PAIRWISE_SPLITS_16(KTREE)
#undef KTREE

/* s[r] for the MR rows, lanes j .. j + KL: the pairwise sum of [lo, lo + n),
   2 <= n <= TILE_MAX (8 on AVX-512; 4 on AVX2, where 8 took the file's
   compilation twice as long for a few percent, on the baseline copy and in
   sanitizer builds, small code where speed is not measured) */
#ifdef KPBASE
ATTR static __attribute__((noinline)) /* KPBASE's slow way, cold */
#else
ATTR AI /* (pbase_'s loop, as it was before KPBASE) */
#endif
void KFN(pchunk_)(TV *s, const tctx_t *c, size_t lo, size_t n, size_t j) {
#define KCASE(n, h, rest)                                                          \
  case n: KFN(p##n)(s, c, lo, j); break;
  switch (n) {
  case 2: KFN(p2)(s, c, lo, j); break;
  case 3: KFN(p3)(s, c, lo, j); break;
  LOWP_PAIRWISE_SPLITS(TILE_MAX, KCASE)
  default: KFN(LOWP_CAT(p, TILE_MAX))(s, c, lo, j); break; /* (pair_ asks for no more) */
  }
#undef KCASE
}

/* out[r NCH + h] for the chunks h < c->nch: the pairwise sum of [lo, lo + n);
   KPBASE, where the kind defines it, is this function written for the
   instruction set, given pchunk_ as its slow way */
#ifdef KPBASE
ATTR static void KFN(pbase_)(TV *out, const tctx_t *c, size_t lo, size_t n) {
  KPBASE(out, c, lo, n, KFN(pchunk_));
}
#else
ATTR static void KFN(pbase_)(TV *out, const tctx_t *c, size_t lo, size_t n) {
  size_t h;
  int r;
  for (h = 0; h < c->nch; h++) {
    TV s[MR];
    KFN(pchunk_)(s, c, lo, n, h * KL);
    for (r = 0; r < MR; r++) out[r * NCH + h] = s[r];
  }
}
#endif

/* pairwise over [lo, hi), hi - lo >= 2: the levels above the subtrees of
   at most TILE_MAX terms through memory */
ATTR static void KFN(pair_)(TV *out, const tctx_t *c, size_t lo, size_t hi) {
  TV tmp[MR * NCH];
  size_t mid, h;
  int r;
  if (hi - lo <= TILE_MAX) {
    KFN(pbase_)(out, c, lo, hi - lo);
    return;
  }
  mid = lo + (hi - lo) / 2;
  KFN(pair_)(out, c, lo, mid);
  KFN(pair_)(tmp, c, mid, hi);
  for (r = 0; r < MR; r++)
    for (h = 0; h < c->nch; h++) KVADD(&out[r * NCH + h], &tmp[r * NCH + h]);
}

/* recursive over [lo, hi), hi - lo >= 1: round(t + 0) for a lone term,
   else round(t0 + t1) then one rounding per term; KREC, where the kind
   defines it, is this function written for the instruction set */
#ifdef KREC
ATTR static void KFN(rec_)(TV *out, const tctx_t *c, size_t lo, size_t hi) {
  KREC(out, c, lo, hi);
}
#else
ATTR static void KFN(rec_)(TV *out, const tctx_t *c, size_t lo, size_t hi) {
  size_t h, l;
  int r;
  for (h = 0; h < c->nch; h++) {
    TV s[MR];
    if (hi - lo == 1) {
      KLONE(s, c, lo, h * KL);
    } else {
      KLEAF2(s, c, lo, h * KL);
      for (l = lo + 2; l < hi; l++) KTADD(s, c, l, h * KL);
    }
    for (r = 0; r < MR; r++) out[r * NCH + h] = s[r];
  }
}
#endif

/* the tile's MR x nch vectors of outputs in the order, k >= 1 */
ATTR static void KFN(tile_)(TV *out, const tctx_t *c, size_t k) {
  TV part[MR * NCH];
  size_t lo, w, h;
  int r;
  switch (c->order) {
  case LOWP_ACC_PAIRWISE:
    if (k == 1) KFN(rec_)(out, c, 0, 1);
    else KFN(pair_)(out, c, 0, k);
    break;
  case LOWP_ACC_BLOCKED:
  case LOWP_ACC_SPLITK:
    w = c->order == LOWP_ACC_BLOCKED ? c->block : (k + c->block - 1) / c->block;
    if (w == 0) w = 1;
    /* block sums, added left to right from the first (no initial rounding) */
    KFN(rec_)(out, c, 0, w < k ? w : k);
    for (lo = w; lo < k; lo += w) {
      KFN(rec_)(part, c, lo, lo + w < k ? lo + w : k);
      for (r = 0; r < MR; r++)
        for (h = 0; h < c->nch; h++) KVADD(&out[r * NCH + h], &part[r * NCH + h]);
    }
    break;
  default:
    KFN(rec_)(out, c, 0, k);
    break;
  }
}
