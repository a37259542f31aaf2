/* pairwise_split.h -- the shape of lowp_accum_dot's pairwise subtrees, as lists for the unrolled copies */
#ifndef LOWP_PAIRWISE_SPLIT_H
#define LOWP_PAIRWISE_SPLIT_H

/* X(n, h, rest) for n = 4 .. N (N = 4, 8 or 16): a subtree of n terms [l, l + n) splits into [l, l + h)
   and [l + h, l + n), h = n / 2 and rest = n - h (model/accum.c's pairwise_raw: mid = lo + (hi - lo) / 2).
   Subtrees of 2 (a leaf pair) and 3 (a term added to a pair) are each copy's own. The unrolled trees of
   reduce_fast_tile.h, reduce_fast.c (AVX2 rows) and reduce_fast32_body.h define their n-term subtrees
   from this list, and their switches on n take their cases from it. */
#define LOWP_PAIRWISE_SPLITS_4(X) X(4, 2, 2)
#define LOWP_PAIRWISE_SPLITS_8(X) LOWP_PAIRWISE_SPLITS_4(X) X(5, 2, 3) X(6, 3, 3) X(7, 3, 4) X(8, 4, 4)
#define LOWP_PAIRWISE_SPLITS_16(X)                                                                     \
  LOWP_PAIRWISE_SPLITS_8(X) X(9, 4, 5) X(10, 5, 5) X(11, 5, 6) X(12, 6, 6) X(13, 6, 7) X(14, 7, 7)   \
  X(15, 7, 8) X(16, 8, 8)
#define LOWP_PAIRWISE_CAT2(a, b) a##b
#define LOWP_PAIRWISE_CAT(a, b) LOWP_PAIRWISE_CAT2(a, b)
/* the list up to N, N a literal 4, 8 or 16 or a macro that expands to one */
#define LOWP_PAIRWISE_SPLITS(N, X) LOWP_PAIRWISE_CAT(LOWP_PAIRWISE_SPLITS_, N)(X)

#endif
