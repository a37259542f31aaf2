/* lowp_reveal_bound -- the worst-case bound of a revealed kernel, its additions in a declared format */

#include "check/reveal_bound.h"

#include <stdlib.h>
#include <string.h>

#include "status.h"

/* one tree: its additions in acc (a copy of the arithmetic table) */
static int tree_bound(lowp_reveal_bound_t *b, const lowp_tree_t *t, const lowp_format_t *acc) {
  lowp_tree_t u = *t;
  double *c = malloc((t->n + 1) * sizeof *c);
  size_t *d = malloc((t->n + 1) * sizeof *d), i, k;
  int st = LOWP_OK;
  u.arith = malloc((t->n_arith + 1) * sizeof *u.arith);
  if (!c || !d || !u.arith) { st = LOWP_ENOMEM; goto done; }
  memcpy(u.arith, t->arith, t->n_arith * sizeof *u.arith);
  u.cap_arith = t->n_arith + 1;
  for (k = 0; k < u.n_arith; k++) {
    if (u.arith[k].kind == LOWP_NODE_FUSED) {
      /* a block FMA's result is its accumulator (the c of the next block): rounded to fp16, the
         kernel accumulates in fp16 (a tensor core's fp16 output), bounded and reported as a narrow
         addition is (its own bound, u_fp16 per block, passed gemm_tc h100 with fp16 out at 2.6% of
         it at K = 256 under a declared fp32) */
      if (!b->narrowest || u.arith[k].acc.precision < b->narrowest) b->narrowest = u.arith[k].acc.precision;
      if (u.arith[k].acc.precision < acc->precision) u.arith[k].acc = *acc;
      continue;
    }
    if (u.arith[k].kind == LOWP_NODE_ADD) {
      if (!b->narrowest || u.arith[k].acc.precision < b->narrowest) b->narrowest = u.arith[k].acc.precision;
      u.arith[k].acc = *acc;
      if (u.arith[k].leaf_exact) continue;
      /* a product rounded to fewer bits than acc is the kernel's shortfall, as a narrow addition is:
         bounded as an honest kernel's (rounded to acc) and reported in narrowest_prod */
      if (!b->narrowest_prod || u.arith[k].prod.precision < b->narrowest_prod)
        b->narrowest_prod = u.arith[k].prod.precision;
      if (u.arith[k].prod.precision < acc->precision) u.arith[k].prod = *acc;
    }
  }
  if ((st = lowp_tree_bound_coef(c, &u)) != LOWP_OK || (st = lowp_tree_depths(d, &u)) != LOWP_OK) goto done;
  for (i = 0; i < t->n; i++) {
    if (c[i] > b->bound) b->bound = c[i];
    if (d[i] > b->depth) b->depth = d[i];
  }
done:
  free(c);
  free(d);
  free(u.arith);
  return st;
}

int lowp_reveal_bound(lowp_reveal_bound_t *b, const lowp_reveal_t *r, const lowp_format_t *acc) {
  size_t c;
  int st;
  memset(b, 0, sizeof *b);
  if (!r->deterministic || !r->n_classes) return LOWP_OK;
  for (c = 0; c < r->n_classes; c++)
    if (!r->classes[c].has_tree) return LOWP_OK;
  for (c = 0; c < r->n_classes; c++)
    if ((st = tree_bound(b, &r->classes[c].tree, acc)) != LOWP_OK) { b->bound = 0; return st; }
  b->has_tree = 1;
  return LOWP_OK;
}
