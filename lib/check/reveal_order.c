/* lowp__reveal_order -- a summation tree from LCA sizes, probed in rounds (FPRev's recursion, batched) */

/*
 * A task is a set S of leaves that forms one or more sibling subtrees under
 * a node of size P (the root task: all leaves, P = K + 1). Probing a pivot x
 * of S against every other y gives l(y) = |LCA(x, y)|: the distinct values
 * below P are the sizes s_1 < ... < s_t of x's ancestors inside S, the y of
 * size s_k (group G_k) hang off ancestor a_k, and 1 + |G_1| + ... + |G_k|
 * must equal s_k (else the sizes are not those of a tree). Each G_k is a
 * new task under a_k; the y of size P are the other subtrees of the parent,
 * a new task under it. All tasks of a round are probed together (one batch
 * of calls). When a pivot meets every other member at P (a lone leaf
 * child of a node with many: a block FMA), the rest is probed pair by pair
 * in one round (up to 64 members) and resolved without further probes.
 * FPRev (Xie et al., USENIX ATC 2025, arXiv:2411.00442) recurses the same
 * way one pivot at a time; the rounds and the all-pairs step are lowp's.
 */

#include "check/reveal_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

#define ALLPAIRS_MAX 64

typedef struct {
  size_t *kids;
  size_t n, cap;
} proto_t;

typedef struct {
  size_t *set;
  size_t n, P, parent;
  int allpairs, pivot_last;
  size_t *scope; /* the leaves under the parent (NULL: the root, all K) */
  size_t nscope;
  size_t *sub;   /* NULL, or the leaves under the parent but one of its subtrees (the pivot's,
                    whose leaf outer stands for it): an LCA inside sub's subtrees, else the parent */
  size_t nsub, outer;
} task_t;

typedef struct {
  size_t K;
  proto_t *pr;
  size_t n_pr, cap_pr;
  task_t *next;
  size_t n_next, cap_next;
  char *err;
  size_t errlen;
} ord_t;

/* ------------------------------------------------------ private helpers */

static int push(void **p, size_t *n, size_t *cap, size_t elem) {
  if (*n == *cap) {
    size_t nc = *cap ? 2 * *cap : 16;
    void *q = realloc(*p, nc * elem);
    if (!q) return -1;
    *p = q;
    *cap = nc;
  }
  (*n)++;
  return 0;
}

static size_t new_proto(ord_t *o) {
  if (push((void **)&o->pr, &o->n_pr, &o->cap_pr, sizeof *o->pr)) return (size_t)-1;
  memset(&o->pr[o->n_pr - 1], 0, sizeof *o->pr);
  return o->n_pr - 1;
}

static int add_kid(ord_t *o, size_t parent, size_t id) {
  proto_t *p = &o->pr[parent];
  return push((void **)&p->kids, &p->n, &p->cap, sizeof *p->kids) ? -1 : (p->kids[p->n - 1] = id, 0);
}

/* a task (scope: see task_t; sub NULL, or nsub leaves of it and outer) */
static int add_task(ord_t *o, const size_t *set, size_t n, size_t P, size_t parent, int allpairs,
                    int pivot_last, const size_t *scope, size_t nscope, const size_t *sub, size_t nsub,
                    size_t outer) {
  task_t *t;
  if (n == 1) return add_kid(o, parent, set[0]); /* a lone leaf: no probe */
  if (push((void **)&o->next, &o->n_next, &o->cap_next, sizeof *o->next)) return -1;
  t = &o->next[o->n_next - 1];
  t->scope = t->sub = NULL;
  t->nscope = t->nsub = 0;
  t->outer = outer;
  if (!(t->set = malloc(n * sizeof *set))) return -1;
  if (scope && !(t->scope = malloc(nscope * sizeof *scope))) return -1;
  if (scope) memcpy(t->scope, scope, nscope * sizeof *scope);
  t->nscope = scope ? nscope : 0;
  if (sub && !(t->sub = malloc(nsub * sizeof *sub))) return -1;
  if (sub) memcpy(t->sub, sub, nsub * sizeof *sub);
  t->nsub = sub ? nsub : 0;
  memcpy(t->set, set, n * sizeof *set);
  t->n = n;
  t->P = P;
  t->parent = parent;
  t->allpairs = allpairs && n <= ALLPAIRS_MAX;
  t->pivot_last = pivot_last;
  return 0;
}

static int bad(ord_t *o, const char *why, size_t a, size_t b) {
  if (o->err && o->errlen) snprintf(o->err, o->errlen, why, a, b);
  return LOWP_EINVAL;
}

typedef struct {
  const size_t *m; /* all-pairs matrix over a task's set: m[i * n + j] */
  size_t n;
  const size_t *set;
} mat_t;

static int place(ord_t *o, const size_t *S, size_t n, size_t P, size_t parent, size_t xi,
                 const size_t *l, const mat_t *mt, int depth, const task_t *tk);

/* the sizes of LCA(S[xi], S[i]) from the matrix (S a subset of mt->set) */
static int from_matrix(ord_t *o, const size_t *S, size_t n, size_t P, size_t parent,
                       const mat_t *mt, int depth) {
  size_t *l, i, a = 0, b;
  int st;
  if (n == 1) return add_kid(o, parent, S[0]);
  if (!(l = malloc(n * sizeof *l))) return LOWP_ENOMEM;
  while (mt->set[a] != S[0]) a++;
  for (i = 0; i < n; i++) {
    for (b = 0; mt->set[b] != S[i]; b++) {}
    l[i] = i ? mt->m[a * mt->n + b] : 0;
  }
  st = place(o, S, n, P, parent, 0, l, mt, depth + 1, NULL);
  free(l);
  return st;
}

/*
 * One pivot's answer: S[xi] the pivot, l[i] = |LCA(pivot, S[i])| (l[xi]
 * unused). Builds the pivot's ancestors inside S under parent; the groups
 * become tasks (mt NULL; tk the task answered: its scope is the parent's
 * leaves, and an ancestor's leaves are the pivot and the groups below it)
 * or are resolved from the matrix.
 */
static int place(ord_t *o, const size_t *S, size_t n, size_t P, size_t parent, size_t xi,
                 const size_t *l, const mat_t *mt, int depth, const task_t *tk) {
  size_t *sizes = NULL, *grp = NULL, *anc = NULL, t = 0, i, k, below = 1, prev, gp = 0;
  int st = LOWP_OK;
  if (depth > 200) return bad(o, "the all-pairs sizes nest deeper than %zu levels (%zu)", 200, (size_t)depth);
  sizes = malloc(n * sizeof *sizes);
  grp = malloc(n * sizeof *grp);
  anc = malloc(n * sizeof *anc);
  if (!sizes || !grp || !anc) { st = LOWP_ENOMEM; goto done; }
  anc[0] = S[xi];
  for (i = 0; i < n; i++) {
    if (i == xi) continue;
    if (l[i] < 2 || l[i] > P || l[i] > o->K)
      { st = bad(o, "probe (%zu, %zu): the output is not a count of a tree's leaves", S[xi], S[i]); goto done; }
    if (l[i] == P) { gp++; continue; }
    for (k = 0; k < t && sizes[k] != l[i]; k++) {}
    if (k == t) sizes[t++] = l[i];
  }
  for (i = 1; i < t; i++) /* sort the ancestor sizes */
    for (k = i; k > 0 && sizes[k - 1] > sizes[k]; k--) {
      size_t s = sizes[k]; sizes[k] = sizes[k - 1]; sizes[k - 1] = s;
    }
  prev = S[xi];
  for (k = 0; k < t && st == LOWP_OK; k++) {
    size_t cnt = 0, a = new_proto(o);
    if (a == (size_t)-1) { st = LOWP_ENOMEM; break; }
    for (i = 0; i < n; i++)
      if (i != xi && l[i] == sizes[k]) grp[cnt++] = S[i];
    below += cnt;
    if (below != sizes[k]) {
      st = bad(o, "the ancestor of leaf %zu of size %zu holds another number of leaves (not a tree)",
               S[xi], sizes[k]);
      break;
    }
    if (add_kid(o, a, prev)) { st = LOWP_ENOMEM; break; }
    memcpy(anc + below - cnt, grp, cnt * sizeof *grp); /* the ancestor's leaves */
    /* the group hangs off ancestor a (anc: its leaves); the pivot stands for the rest of a */
    st = mt ? from_matrix(o, grp, cnt, sizes[k], a, mt, depth)
            : (add_task(o, grp, cnt, sizes[k], a, 0, 0, anc, below, grp, cnt, S[xi]) ? LOWP_ENOMEM : LOWP_OK);
    prev = o->K + a;
  }
  if (st == LOWP_OK && add_kid(o, parent, prev)) st = LOWP_ENOMEM;
  if (st == LOWP_OK && gp) {
    size_t cnt = 0;
    for (i = 0; i < n; i++)
      if (i != xi && l[i] == P) grp[cnt++] = S[i];
    st = mt ? from_matrix(o, grp, cnt, P, parent, mt, depth)
            : (add_task(o, grp, cnt, P, parent, t == 0, t == 0, tk ? tk->scope : NULL, tk ? tk->nscope : 0,
                        tk ? tk->sub : NULL, tk ? tk->nsub : 0, tk ? tk->outer : 0)
                   ? LOWP_ENOMEM
                   : LOWP_OK);
  }
done:
  free(sizes);
  free(grp);
  free(anc);
  return st;
}

/* post-order emission of the protos under proto 0's single child */
static int emit(lowp_tree_t *shape, ord_t *o) {
  size_t *id = malloc((o->n_pr + 1) * sizeof *id), *stack = malloc((o->n_pr + 1) * sizeof *stack);
  size_t *pos = calloc(o->n_pr + 1, sizeof *pos), sp = 0, *kids = NULL, kcap = 0;
  lowp_tree_arith_t a = lowp_tree_arith_sum(&LOWP_FMT_FP64, LOWP_RND_NE, 1, NULL, LOWP_RND_NE);
  int st = LOWP_OK;
  lowp_tree_init(shape, o->K);
  if (!id || !stack || !pos || lowp_tree_arith_add(shape, &a) != 0) { st = LOWP_ENOMEM; goto done; }
  if (o->pr[0].n != 1) { st = bad(o, "the probes give %zu roots, not one (%zu leaves)", o->pr[0].n, o->K); goto done; }
  if (o->pr[0].kids[0] < o->K) goto done; /* one leaf: no node */
  stack[sp++] = o->pr[0].kids[0] - o->K;
  while (sp && st == LOWP_OK) {
    size_t q = stack[sp - 1];
    proto_t *p = &o->pr[q];
    if (pos[q] < p->n) {
      size_t c = p->kids[pos[q]++];
      if (c >= o->K) stack[sp++] = c - o->K;
      continue;
    }
    if (p->n > kcap) {
      size_t *nk = realloc(kids, p->n * sizeof *nk);
      if (!nk) { st = LOWP_ENOMEM; break; }
      kids = nk;
      kcap = p->n;
    }
    {
      size_t i;
      for (i = 0; i < p->n; i++) kids[i] = p->kids[i] < o->K ? p->kids[i] : id[p->kids[i] - o->K];
    }
    id[q] = lowp_tree_node_add(shape, 0, kids, p->n);
    if (id[q] == LOWP_TREE_ZERO) st = LOWP_ENOMEM;
    sp--;
  }
done:
  free(id); free(stack); free(pos); free(kids);
  if (st != LOWP_OK) lowp_tree_free(shape);
  return st;
}

/* one round: every pending task's probes in one oracle call, then placed */
static int round_run(ord_t *o, task_t *cur, size_t ncur, lowp__lca_fn f, void *ctx, size_t *probes) {
  lowp__pair_t *pairs;
  size_t *sz, np = 0, c, i, j, at = 0;
  int st = LOWP_OK;
  for (c = 0; c < ncur; c++)
    np += cur[c].allpairs ? cur[c].n * (cur[c].n - 1) / 2 : cur[c].n - 1;
  pairs = malloc((np + 1) * sizeof *pairs);
  sz = malloc((np + 1) * sizeof *sz);
  if (!pairs || !sz) { free(pairs); free(sz); return LOWP_ENOMEM; }
  for (c = 0; c < ncur; c++) {
    task_t *t = &cur[c];
    size_t xi = t->pivot_last ? t->n - 1 : 0;
    if (t->allpairs) {
      for (i = 0; i < t->n; i++)
        for (j = i + 1; j < t->n; j++, at++) { pairs[at].x = t->set[i]; pairs[at].y = t->set[j]; }
    } else {
      for (i = 0; i < t->n; i++)
        if (i != xi) { pairs[at].x = t->set[xi]; pairs[at++].y = t->set[i]; }
    }
    for (i = at - (t->allpairs ? t->n * (t->n - 1) / 2 : t->n - 1); i < at; i++) {
      pairs[i].scope = t->scope;
      pairs[i].nscope = t->nscope;
      pairs[i].sub = t->sub;
      pairs[i].nsub = t->nsub;
      pairs[i].outer = t->outer;
      pairs[i].P = t->P;
    }
  }
  np = at;
  st = f(ctx, sz, pairs, np);
  *probes += np;
  for (c = 0, at = 0; c < ncur && st == LOWP_OK; c++) {
    task_t *t = &cur[c];
    size_t xi = t->pivot_last ? t->n - 1 : 0, *l;
    if (t->allpairs) {
      size_t *m = calloc(t->n * t->n, sizeof *m);
      mat_t mt;
      if (!m) { st = LOWP_ENOMEM; break; }
      for (i = 0; i < t->n; i++)
        for (j = i + 1; j < t->n; j++) m[i * t->n + j] = m[j * t->n + i] = sz[at++];
      mt.m = m; mt.n = t->n; mt.set = t->set;
      st = from_matrix(o, t->set, t->n, t->P, t->parent, &mt, 0);
      free(m);
      continue;
    }
    if (!(l = malloc(t->n * sizeof *l))) { st = LOWP_ENOMEM; break; }
    for (i = 0; i < t->n; i++) l[i] = i == xi ? 0 : sz[at++];
    st = place(o, t->set, t->n, t->P, t->parent, xi, l, NULL, 0, t);
    free(l);
  }
  free(pairs);
  free(sz);
  return st;
}

/* ----------------------------------------------------------- public API */

int lowp__reveal_order(lowp_tree_t *shape, size_t K, lowp__lca_fn f, void *ctx, size_t *probes,
                       size_t *rounds, char *err, size_t errlen) {
  ord_t o;
  size_t *all, i;
  int st = LOWP_OK;
  memset(&o, 0, sizeof o);
  o.K = K;
  o.err = err;
  o.errlen = errlen;
  *probes = *rounds = 0;
  lowp_tree_init(shape, K);
  if (K == 0) return LOWP_OK;
  if (new_proto(&o) != 0 || !(all = malloc(K * sizeof *all))) { free(o.pr); return LOWP_ENOMEM; }
  for (i = 0; i < K; i++) all[i] = i;
  if (add_task(&o, all, K, K + 1, 0, 0, 0, NULL, 0, NULL, 0, 0)) st = LOWP_ENOMEM;
  free(all);
  while (st == LOWP_OK && o.n_next) {
    task_t *cur = o.next;
    size_t ncur = o.n_next;
    o.next = NULL;
    o.n_next = o.cap_next = 0;
    st = round_run(&o, cur, ncur, f, ctx, probes);
    (*rounds)++;
    for (i = 0; i < ncur; i++) { free(cur[i].set); free(cur[i].scope); free(cur[i].sub); }
    free(cur);
  }
  if (st == LOWP_OK) st = emit(shape, &o);
  for (i = 0; i < o.n_next; i++) { free(o.next[i].set); free(o.next[i].scope); free(o.next[i].sub); }
  free(o.next);
  for (i = 0; i < o.n_pr; i++) free(o.pr[i].kids);
  free(o.pr);
  return st;
}
