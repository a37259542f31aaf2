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
  unsigned char *inner = calloc(t->n_arith + 1, 1);
  int st = LOWP_OK;
  u.arith = malloc((t->n_arith + 1) * sizeof *u.arith);
  if (!c || !d || !u.arith || !inner) { st = LOWP_ENOMEM; goto done; }
  memcpy(u.arith, t->arith, t->n_arith * sizeof *u.arith);
  u.cap_arith = t->n_arith + 1;
  /* the arithmetic of a node whose result another rounding takes in: every node but the root, and the
     root too when the tree rounds its result once more (has_out). The root's own rounding is otherwise
     the kernel's output rounding: a block FMA or addition that rounds the result straight to an fp16
     output (one tensor-core block at K <= 16, whose fp16 result is the output) accumulates nothing
     in fp16; bounded in acc like the rest, the output's rounding stays the pipeline's (u_out apart) */
  for (i = 0; i < t->n_nodes; i++)
    if (i + 1 < t->n_nodes || t->has_out) inner[t->nodes[i].arith] = 1;
  for (k = 0; k < u.n_arith; k++) {
    if (u.arith[k].kind == LOWP_NODE_FUSED && !inner[k]) {
      if (u.arith[k].acc.precision < acc->precision) u.arith[k].acc = *acc;
      continue;
    }
    if (u.arith[k].kind == LOWP_NODE_ADD && !inner[k]) {
      u.arith[k].acc = *acc;
      if (!u.arith[k].leaf_exact && (!b->narrowest_prod || u.arith[k].prod.precision < b->narrowest_prod))
        b->narrowest_prod = u.arith[k].prod.precision;
      if (!u.arith[k].leaf_exact && u.arith[k].prod.precision < acc->precision) u.arith[k].prod = *acc;
      continue;
    }
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
  free(inner);
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
