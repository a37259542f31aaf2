/* lowp_reveal_diff -- where a kernel leaves its twin: the first node of the summation tree whose terms alone sum differently */

/*
 * An output differs from its twin's. Which node of the tree is the first to
 * differ? The kernel is a black box, but the sum of any node's terms alone
 * can be asked of it: zero every term outside the node (the row of A and
 * the column of B that feed the output, both, so that 0 x inf never
 * appears) and the output is that node's sum, computed by the kernel in its
 * own order, with the zeros added exactly; the twin gives the same restricted
 * sum from its tree. Starting at the root (which differs), lowp descends to
 * the first child that differs, until a node whose children all agree but
 * whose own sum does not: there the kernel combines the same partial sums
 * differently (another order, another rounding, a dropped term). Probes are
 * batched, one per batch entry (each a copy of the output's batch entry with
 * the row and column restricted); a round probes the nodes of as many levels
 * below the current one as fit one call, so a chain of K nodes costs about
 * K / (entries per call) calls and a tree of depth d at most d.
 */

#include "check/reveal_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "io/escape.h"

typedef struct {
  lowp__geo_t g;
  const lowp_tree_t *t;
  const lowp_reveal_t *tw;
  const double *a0, *b0;     /* the output's batch entry */
  size_t row, col;           /* the output's position in it */
  unsigned char *mark;       /* K leaves: under the node being probed */
  double *ra, *rb, *tmp;     /* the twin's restricted, converted row and column */
  double *ca, *cb;           /* the row and the column, converted */
} diff_t;

static int is_internal(const diff_t *d, size_t id) { return id != LOWP_TREE_ZERO && id >= d->t->n; }

/* mark the leaves under node id (DFS through kids) */
static void mark_leaves(diff_t *d, size_t id) {
  size_t stack_n = 1, *stack = NULL, cap = 64, k;
  if (!is_internal(d, id)) {
    if (id != LOWP_TREE_ZERO && id < d->t->n) d->mark[id] = 1;
    return;
  }
  if (!(stack = malloc(cap * sizeof *stack))) return;
  stack[0] = id;
  while (stack_n) {
    const lowp_tree_node_t *nd = &d->t->nodes[stack[--stack_n] - d->t->n];
    for (k = 0; k < nd->count; k++) {
      size_t c = d->t->kids[nd->first + k];
      if (c == LOWP_TREE_ZERO) continue;
      if (c < d->t->n) { d->mark[c] = 1; continue; }
      if (stack_n == cap) {
        size_t *ns = realloc(stack, 2 * cap * sizeof *stack);
        if (!ns) { free(stack); return; }
        stack = ns;
        cap *= 2;
      }
      stack[stack_n++] = c;
    }
  }
  free(stack);
}

/* the twin's sum of node id's terms alone */
static int twin_node(diff_t *d, size_t id, double *y) {
  size_t l, K = d->g.K;
  memset(d->mark, 0, K);
  mark_leaves(d, id);
  for (l = 0; l < K; l++) {
    d->ra[l] = d->mark[l] ? d->ca[l] : 0.0;
    if (d->cb) d->rb[l] = d->mark[l] ? d->cb[l] : 0.0;
  }
  return lowp_tree_eval(y, d->t, d->ra, 1, d->cb ? d->rb : NULL, 1, d->tmp);
}

/* the kernel's sums of the terms of nodes ids[0..n) alone: one batch entry
   each, batch calls of at most cap entries */
static int kernel_nodes(diff_t *d, const size_t *ids, size_t n, size_t cap, double *got) {
  lowp__geo_t *g = &d->g;
  size_t pa = lowp__per_a(g), pb = lowp__per_b(g), no = g->R * g->C, done, e, l;
  double *a = malloc((cap * pa + 1) * sizeof *a), *b = malloc((cap * pb + 1) * sizeof *b);
  double *out = malloc((cap * no + 1) * sizeof *out);
  int st = (a && b && out) ? LOWP_OK : LOWP_ENOMEM;
  for (done = 0; done < n && st == LOWP_OK; done += cap) {
    size_t m = n - done < cap ? n - done : cap;
    for (e = 0; e < m; e++) {
      double *ar;
      memcpy(a + e * pa, d->a0, pa * sizeof *a);
      if (pb) memcpy(b + e * pb, d->b0, pb * sizeof *b);
      memset(d->mark, 0, g->K);
      mark_leaves(d, ids[done + e]);
      ar = lowp__slot_a(g, a, e * g->R + d->row);
      for (l = 0; l < g->K; l++)
        if (!d->mark[l]) {
          ar[l] = 0.0;
          if (pb) *lowp__slot_b(g, b, e * g->R + d->row, l, d->col) = 0.0;
        }
    }
    st = lowp__reveal_call(g, m, a, b, out);
    for (e = 0; e < m && st == LOWP_OK; e++) got[done + e] = out[e * no + d->row * g->C + d->col];
  }
  free(a); free(b); free(out);
  return st;
}

static int same_bits(double x, double y) { return !memcmp(&x, &y, sizeof x) || (x != x && y != y); }

/* internal children of node id, appended to list (n in/out) */
static void kids_of(const diff_t *d, size_t id, size_t *list, size_t *n) {
  const lowp_tree_node_t *nd = &d->t->nodes[id - d->t->n];
  size_t k;
  for (k = 0; k < nd->count; k++)
    if (is_internal(d, d->t->kids[nd->first + k])) list[(*n)++] = d->t->kids[nd->first + k];
}

/* descend from the root to the first differing node (the top of this file) */
static int descend(diff_t *d, lowp_reveal_diff_t *r, size_t cap) {
  const lowp_tree_t *t = d->t;
  size_t nn = t->n_nodes, *list = malloc((nn + 1) * sizeof *list), *slot = malloc((nn + 1) * sizeof *slot);
  double *exp = malloc((nn + 1) * sizeof *exp), *got = malloc((nn + 1) * sizeof *got);
  size_t cur = t->n + nn - 1, n, lo, i;
  int st = (list && slot && exp && got) ? LOWP_OK : LOWP_ENOMEM;
  while (st == LOWP_OK) {
    size_t v = cur;
    /* BFS below cur, whole levels while they fit one call (at least one level) */
    n = 0;
    kids_of(d, cur, list, &n);
    for (lo = 0; lo < n;) {
      size_t hi = n, before = n;
      for (i = lo; i < hi; i++) kids_of(d, list[i], list, &n);
      if (n > cap && before > 0) { n = before; break; }
      lo = hi;
    }
    if (n == 0) break; /* cur: its terms are leaves only */
    for (i = 0; i < nn; i++) slot[i] = (size_t)-1;
    for (i = 0; i < n; i++) slot[list[i] - t->n] = i;
    st = kernel_nodes(d, list, n, cap, got);
    for (i = 0; i < n && st == LOWP_OK; i++) st = twin_node(d, list[i], &exp[i]);
    if (st) break;
    r->rounds++;
    for (;;) { /* walk the probed levels */
      size_t first = (size_t)-1, m = 0, k;
      const lowp_tree_node_t *nd = &t->nodes[v - t->n];
      int unprobed = 0;
      for (k = 0; k < nd->count; k++) {
        size_t c = t->kids[nd->first + k];
        if (!is_internal(d, c)) continue;
        m++;
        if (slot[c - t->n] == (size_t)-1) { unprobed = 1; break; }
        if (first == (size_t)-1 && !same_bits(exp[slot[c - t->n]], got[slot[c - t->n]])) first = c;
      }
      if (unprobed) { cur = v; break; }
      if (m == 0 || first == (size_t)-1) { cur = v; n = 0; break; }
      v = first;
      r->expected = exp[slot[v - t->n]];
      r->got = got[slot[v - t->n]];
    }
    if (n == 0) break;
  }
  if (st == LOWP_OK) {
    r->node = cur;
    memset(d->mark, 0, d->g.K);
    mark_leaves(d, cur);
    r->n_terms = 0;
    r->first_term = (size_t)-1;
    for (i = 0; i < d->g.K; i++)
      if (d->mark[i]) {
        if (r->first_term == (size_t)-1) r->first_term = i;
        r->last_term = i;
        r->n_terms++;
      }
  }
  free(list); free(slot); free(exp); free(got);
  return st;
}

int lowp_reveal_diff(lowp_reveal_diff_t *r, const lowp_reveal_t *tw, const lowp_subject_t *s,
                     const lowp_problem_t *p, const double *const *in, size_t o, char *err, size_t errlen) {
  diff_t d;
  lowp_reveal_opts_t opt;
  lowp_problem_t q = *p;
  size_t pos, e, c, k, K, cap, per, maxn;
  int st;
  memset(r, 0, sizeof *r);
  memset(&d, 0, sizeof d);
  memset(&opt, 0, sizeof opt);
  opt.max_elems = (size_t)1 << 22;
  q.dims.batch = 1;
  if ((st = lowp__geo_init(&d.g, s, &q, &opt, err, errlen))) return st;
  K = d.g.K;
  per = d.g.R * d.g.C;
  if (K != tw->K || d.g.R != tw->rows || d.g.C != tw->cols || o >= p->dims.batch * per) return LOWP_EINVAL;
  e = o / per;
  pos = o % per;
  d.row = pos / d.g.C;
  d.col = pos % d.g.C;
  for (c = 0; c < tw->n_classes && !d.t; c++)
    for (k = 0; k < tw->classes[c].n_pos; k++)
      if (tw->classes[c].pos[k] == pos) { d.t = &tw->classes[c].tree; r->cls = c; break; }
  if (!d.t || !tw->classes[r->cls].has_tree || d.t->n_nodes == 0) return LOWP_EINVAL;
  d.tw = tw;
  d.a0 = in[0] + e * lowp__per_a(&d.g);
  d.b0 = lowp__per_b(&d.g) ? in[1] + e * lowp__per_b(&d.g) : NULL;
  maxn = d.t->n_nodes + 8;
  d.mark = malloc(K + 1);
  d.ra = malloc((K + 1) * sizeof *d.ra);
  d.rb = malloc((K + 1) * sizeof *d.rb);
  d.ca = malloc((K + 1) * sizeof *d.ca);
  d.cb = d.b0 ? malloc((K + 1) * sizeof *d.cb) : NULL;
  d.tmp = malloc(maxn * sizeof *d.tmp);
  if (!d.mark || !d.ra || !d.rb || !d.ca || (d.b0 && !d.cb) || !d.tmp) st = LOWP_ENOMEM;
  if (st == LOWP_OK) { /* the output's row and column, converted as the twin reads them */
    double *bc = malloc((K + 1) * sizeof *bc);
    if (!bc) st = LOWP_ENOMEM;
    for (k = 0; k < K && st == LOWP_OK; k++) {
      bc[k] = d.b0 ? *lowp__slot_b(&d.g, (double *)d.b0, d.row, k, d.col) : 0.0;
      d.ra[k] = lowp__slot_a(&d.g, (double *)d.a0, d.row)[k];
    }
    if (st == LOWP_OK) {
      lowp__reveal_convert(d.ca, d.ra, K, &tw->conv[0]);
      if (d.cb) lowp__reveal_convert(d.cb, bc, K, &tw->conv[1]);
    }
    free(bc);
  }
  cap = d.g.max_elems / (lowp__per_a(&d.g) + lowp__per_b(&d.g) + 1);
  if (cap < 1) cap = 1;
  if (cap > 4096) cap = 4096;
  if (st == LOWP_OK) { /* the root: the whole output */
    size_t root = d.t->n + d.t->n_nodes - 1;
    st = kernel_nodes(&d, &root, 1, 1, &r->got);
    if (st == LOWP_OK) st = twin_node(&d, root, &r->expected);
    if (st == LOWP_OK && same_bits(r->expected, r->got)) {
      lowp_errf(err, errlen, 0, "the output agrees with its twin: no differing node");
      st = LOWP_EINVAL;
    }
  }
  if (st == LOWP_OK) st = descend(&d, r, cap);
  r->calls = d.g.calls;
  if (st == LOWP_OK && r->node != LOWP_TREE_ZERO) {
    const lowp_tree_node_t *nd = &d.t->nodes[r->node - d.t->n];
    const lowp_tree_arith_t *a = &d.t->arith[nd->arith];
    r->kids = nd->count;
    if (a->kind == LOWP_NODE_FUSED)
      snprintf(r->what, sizeof r->what, "a block FMA of %zu terms into %s", nd->count, a->acc.name);
    else
      snprintf(r->what, sizeof r->what, "an addition of %zu operand%s in %s (%s)", nd->count,
               nd->count == 1 ? "" : "s", a->acc.name, lowp_rounding_name(a->rnd));
  }
  free(d.mark); free(d.ra); free(d.rb); free(d.ca); free(d.cb); free(d.tmp);
  return st;
}

void lowp_reveal_diff_str(char *buf, size_t len, const lowp_reveal_diff_t *r) {
  snprintf(buf, len,
           "first differing node: %zu of class %zu (%s) over %zu term%s (k = %zu .. %zu): its terms alone "
           "sum to %.17g (%a) in the twin, %.17g (%a) in the kernel, while each of its %zu input%s "
           "agrees (%zu calls)",
           r->node, r->cls, r->what, r->n_terms, r->n_terms == 1 ? "" : "s", r->first_term, r->last_term,
           r->expected, r->expected, r->got, r->got, r->kids, r->kids == 1 ? "" : "s", r->calls);
}
