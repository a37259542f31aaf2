/* lowp_tree_from_lanes -- the summation tree of a SIMD dot product (model/tree_lanes.h) */

#include "model/tree_lanes.h"

#include <stdlib.h>

#include "status.h"

int lowp_tree_from_lanes(lowp_tree_t *t, size_t n, size_t L, const lowp_format_t *acc,
                         lowp_rounding_t rnd) {
  lowp_tree_arith_t a = lowp_tree_arith_sum(acc, rnd, 1, NULL, LOWP_RND_NE);
  size_t *lane, l, i, w, kids[2];
  int st = LOWP_OK;
  lowp_tree_init(t, n);
  if (n == 0 || L == 0 || (L & (L - 1))) return LOWP_EINVAL;
  if (!(lane = malloc(L * sizeof *lane)) || lowp_tree_arith_add(t, &a) != 0) { free(lane); return LOWP_ENOMEM; }
  for (l = 0; l < L; l++) lane[l] = LOWP_TREE_ZERO; /* +0: the lane's starting value */
  for (i = 0; i < n && st == LOWP_OK; i++) {
    kids[0] = lane[i % L];
    kids[1] = i;
    lane[i % L] = lowp_tree_node_add(t, 0, kids, 2);
    if (lane[i % L] == LOWP_TREE_ZERO) st = LOWP_ENOMEM;
  }
  for (w = L / 2; w >= 1 && st == LOWP_OK; w /= 2)
    for (l = 0; l < w && l + w < n; l++) {
      kids[0] = lane[l];
      kids[1] = lane[l + w];
      if ((lane[l] = lowp_tree_node_add(t, 0, kids, 2)) == LOWP_TREE_ZERO) { st = LOWP_ENOMEM; break; }
    }
  free(lane);
  if (st != LOWP_OK) lowp_tree_free(t);
  return st;
}
