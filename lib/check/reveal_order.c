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

#include <stdint.h>
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
  int fresh;     /* the group of a new ancestor (parent's first kid: the pivot's side; the rest: this set's) */
} task_t;

/* a task set aside: its set is another task's (rep) moved by d, and so, presumably, its subtrees */
typedef struct {
  task_t t;
  size_t rep_parent, d, round;
} wait_t;

typedef struct {
  size_t K;
  proto_t *pr;
  size_t n_pr, cap_pr;
  task_t *next;
  size_t n_next, cap_next;
  wait_t *wait;            /* tasks set aside for a hypothesis (hyp) */
  size_t n_wait, cap_wait;
  int hyp;
  size_t round, hyp_ok, hyp_failed;
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
  t->fresh = 0;
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
    if (mt) st = from_matrix(o, grp, cnt, sizes[k], a, mt, depth);
    else if (add_task(o, grp, cnt, sizes[k], a, 0, 0, anc, below, grp, cnt, S[xi])) st = LOWP_ENOMEM;
    else if (cnt > 1) o->next[o->n_next - 1].fresh = 1;
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

/* ------------------------------------------------------- hypotheses */

/*
 * A kernel that blocks its k loop repeats itself: OpenBLAS's panels, the
 * lanes of a SIMD kernel, the halves of a pairwise sum. When two groups of
 * one round hold the same leaves moved by d (same size, same offsets), the
 * later one is set aside and the first probed as usual. Once the first is
 * revealed, the later one is presumed to be its copy moved by d: HYP_PAIRS
 * pairs spread over its set (its first leaf against leaves across the set,
 * and neighbours) are probed, all in one round, and their sizes must be the
 * copy's (a pair whose LCA is the copy's parent: the group's own P). If one
 * differs, the group is probed as usual (FPRev's recursion). A copy that
 * survives its pairs is still a hypothesis: lowp accepts the tree only when
 * its twin is bit-exact on every validation output, and reveals the class
 * again without hypotheses otherwise (reveal.c).
 */

#define HYP_MIN 8    /* groups of fewer leaves are probed as they are */
#define HYP_PAIRS 16 /* pairs that check a copy */

/* offsets of a task's set (from its first leaf), hashed */
static uint64_t set_hash(const task_t *t) {
  uint64_t h = 1469598103934665603u;
  size_t i;
  for (i = 0; i < t->n; i++) h = (h ^ (uint64_t)(t->set[i] - t->set[0])) * 1099511628211u;
  return h ^ t->n;
}

typedef struct {
  uint64_t h;
  size_t i;
} hkey_t;

static int cmp_hkey(const void *a, const void *b) {
  const hkey_t *u = a, *v = b;
  if (u->h != v->h) return u->h < v->h ? -1 : 1;
  return u->i < v->i ? -1 : u->i > v->i;
}

/* 1 when b's set is a's moved by b->set[0] - a->set[0] > 0 */
static int translate_of(const task_t *a, const task_t *b) {
  size_t i;
  if (a->n != b->n || a->allpairs != b->allpairs || a->pivot_last != b->pivot_last || b->set[0] <= a->set[0])
    return 0;
  for (i = 0; i < a->n; i++)
    if (b->set[i] - b->set[0] != a->set[i] - a->set[0]) return 0;
  return 1;
}

/* set the copies among cur's new groups aside (o->wait); *ncur shrinks */
static int defer_copies(ord_t *o, task_t *cur, size_t *ncur) {
  hkey_t *k = malloc((*ncur + 1) * sizeof *k);
  unsigned char *gone = calloc(*ncur + 1, 1);
  size_t n = 0, i, j, m;
  int st = LOWP_OK;
  if (!k || !gone) { free(k); free(gone); return LOWP_ENOMEM; }
  for (i = 0; i < *ncur; i++)
    if (cur[i].fresh && cur[i].n >= HYP_MIN) { k[n].h = set_hash(&cur[i]); k[n++].i = i; }
  qsort(k, n, sizeof *k, cmp_hkey); /* within a hash, in round order: sets ascend */
  for (i = 0; i < n && st == LOWP_OK; i = j) {
    const task_t *rep = &cur[k[i].i];
    for (j = i + 1; j < n && k[j].h == k[i].h; j++) {
      wait_t *w;
      if (!translate_of(rep, &cur[k[j].i])) continue;
      if (push((void **)&o->wait, &o->n_wait, &o->cap_wait, sizeof *o->wait)) { st = LOWP_ENOMEM; break; }
      w = &o->wait[o->n_wait - 1];
      w->t = cur[k[j].i];
      w->rep_parent = rep->parent;
      w->d = cur[k[j].i].set[0] - rep->set[0];
      w->round = o->round;
      gone[k[j].i] = 1;
    }
  }
  for (i = 0, m = 0; i < *ncur; i++)
    if (!gone[i]) cur[m++] = cur[i];
  *ncur = m;
  free(k);
  free(gone);
  return st;
}

/* parent[] of every proto and leaf (id: leaf l, proto K + q), size[] of every proto */
static int proto_index(const ord_t *o, size_t **parent, size_t **size) {
  size_t K = o->K, q, i, *stack, sp = 0;
  unsigned char *done;
  *parent = malloc((K + o->n_pr + 1) * sizeof **parent);
  *size = calloc(o->n_pr + 1, sizeof **size);
  stack = malloc((o->n_pr + 1) * sizeof *stack);
  done = calloc(o->n_pr + 1, 1);
  if (!*parent || !*size || !stack || !done) {
    free(stack); free(done);
    return LOWP_ENOMEM;
  }
  for (i = 0; i < K + o->n_pr; i++) (*parent)[i] = (size_t)-1;
  for (q = 0; q < o->n_pr; q++)
    for (i = 0; i < o->pr[q].n; i++) (*parent)[o->pr[q].kids[i]] = K + q;
  for (q = 0; q < o->n_pr; q++) { /* sizes, children first */
    if (done[q]) continue;
    stack[sp++] = q;
    while (sp) {
      size_t p = stack[sp - 1], pend = 0, sz = 0;
      for (i = 0; i < o->pr[p].n; i++) {
        size_t c = o->pr[p].kids[i];
        if (c < K) sz++;
        else if (done[c - K]) sz += (*size)[c - K];
        else { stack[sp++] = c - K; pend = 1; }
      }
      if (pend) continue;
      (*size)[p] = sz;
      done[p] = 1;
      sp--;
    }
  }
  free(stack);
  free(done);
  return LOWP_OK;
}

/* the size of LCA(a, b) in the representative's subtrees under proto top
   (P where the LCA is top or above); mark: a scratch of K + n_pr stamps */
static size_t copy_lca(const ord_t *o, const size_t *parent, const size_t *size, size_t top, size_t a,
                       size_t b, size_t P, size_t *mark, size_t stamp) {
  size_t v;
  for (v = a; v != (size_t)-1 && v != o->K + top; v = parent[v]) mark[v] = stamp;
  for (v = b; v != (size_t)-1 && v != o->K + top && mark[v] != stamp; v = parent[v]) {}
  return v == (size_t)-1 || v == o->K + top || v < o->K ? P : size[v - o->K];
}

/* the copy of subtree c (leaf or proto id) moved by d; *id: its id */
static int clone_sub(ord_t *o, size_t c, size_t d, size_t *id) {
  size_t q, i, n, kid;
  if (c < o->K) { *id = c + d; return LOWP_OK; }
  if ((q = new_proto(o)) == (size_t)-1) return LOWP_ENOMEM;
  n = o->pr[c - o->K].n;
  for (i = 0; i < n; i++) {
    if (clone_sub(o, o->pr[c - o->K].kids[i], d, &kid) || add_kid(o, q, kid)) return LOWP_ENOMEM;
  }
  *id = o->K + q;
  return LOWP_OK;
}

/* the i-th checking pair of a set of n: its first leaf against leaves across
   the set, then neighbours */
static void hyp_pair(size_t n, size_t i, size_t *a, size_t *b) {
  if (i < HYP_PAIRS / 2) { *a = 0; *b = 1 + (i * (n - 2)) / (HYP_PAIRS / 2 - 1); }
  else { *a = ((i - HYP_PAIRS / 2) * (n - 1)) / (HYP_PAIRS / 2); *b = *a + 1; }
  if (*b >= n) *b = n - 1;
  if (*a == *b) *a = 0;
}

static int cmp_wait(const void *a, const void *b) { /* latest round first */
  const wait_t *u = a, *v = b;
  return u->round > v->round ? -1 : u->round < v->round;
}

/* graft w's copy of its representative's subtrees under w's parent (protos
   from *first on are the copy's) */
static int graft(ord_t *o, const wait_t *w, size_t *first) {
  size_t j, id;
  *first = o->n_pr;
  for (j = 1; j < o->pr[w->rep_parent].n; j++) {
    if (clone_sub(o, o->pr[w->rep_parent].kids[j], w->d, &id) || add_kid(o, w->t.parent, id)) return LOWP_ENOMEM;
  }
  return LOWP_OK;
}

/* the checking pairs of w (HYP_PAIRS from pairs) */
static void hyp_pairs(lowp__pair_t *pairs, const wait_t *w) {
  size_t j, a, b;
  for (j = 0; j < HYP_PAIRS; j++) {
    hyp_pair(w->t.n, j, &a, &b);
    pairs[j].x = w->t.set[a];
    pairs[j].y = w->t.set[b];
    pairs[j].scope = w->t.scope;
    pairs[j].nscope = w->t.nscope;
    pairs[j].sub = w->t.sub;
    pairs[j].nsub = w->t.nsub;
    pairs[j].outer = w->t.outer;
    pairs[j].P = w->t.P;
  }
}

/* Every waiting task, in one round: each grafted as the copy of its
   representative (latest round first, so that a representative's own
   copies are in place), then all checked by one oracle call. If every pair
   agrees, the copies stand. Else every graft is undone, the refuted tasks
   are probed as usual, and the others wait for the next check (their
   representative may hold a refuted one). */
static int hyp_round(ord_t *o, lowp__lca_fn f, void *ctx, size_t *probes) {
  size_t nw = o->n_wait, i, j, np = nw * HYP_PAIRS, *parent = NULL, *size = NULL, *mark = NULL, *sz = NULL;
  size_t *first = NULL, nfail = 0;
  lowp__pair_t *pairs = NULL;
  unsigned char *bad = NULL;
  wait_t *w = o->wait;
  int st = LOWP_OK;
  qsort(w, nw, sizeof *w, cmp_wait);
  first = malloc((nw + 1) * sizeof *first);
  bad = calloc(nw + 1, 1);
  pairs = calloc(np + 1, sizeof *pairs);
  sz = malloc((np + 1) * sizeof *sz);
  if (!first || !bad || !pairs || !sz) { st = LOWP_ENOMEM; goto done; }
  for (i = 0; i < nw && st == LOWP_OK; i++) st = graft(o, &w[i], &first[i]);
  if (st || (st = proto_index(o, &parent, &size))) goto done;
  if (!(mark = calloc(o->K + o->n_pr + 1, sizeof *mark))) { st = LOWP_ENOMEM; goto done; }
  for (i = 0; i < nw; i++) hyp_pairs(&pairs[i * HYP_PAIRS], &w[i]);
  if ((st = f(ctx, sz, pairs, np))) goto done;
  *probes += np;
  for (i = 0; i < nw; i++) {
    for (j = 0; j < HYP_PAIRS && !bad[i]; j++) {
      size_t q = i * HYP_PAIRS + j;
      bad[i] = sz[q] != copy_lca(o, parent, size, w[i].rep_parent, pairs[q].x - w[i].d, pairs[q].y - w[i].d,
                                 w[i].t.P, mark, q + 1);
    }
    bad[i] |= o->pr[w[i].rep_parent].n < 2; /* no subtree to copy */
    nfail += bad[i];
  }
  if (!nfail) { /* the copies stand */
    for (i = 0; i < nw; i++) { free(w[i].t.set); free(w[i].t.scope); free(w[i].t.sub); }
    o->hyp_ok += nw;
    o->n_wait = 0;
    goto done;
  }
  for (i = nw; i-- > 0;) { /* undo every graft (latest first); the copies' protos left empty */
    size_t q;
    for (q = first[i]; q < (i + 1 < nw ? first[i + 1] : o->n_pr); q++) o->pr[q].n = 0;
    o->pr[w[i].t.parent].n = 1;
  }
  for (i = 0, j = 0; i < nw && st == LOWP_OK; i++) {
    if (!bad[i]) { o->wait[j++] = w[i]; continue; }
    o->hyp_failed++;
    w[i].t.fresh = 0;
    if (push((void **)&o->next, &o->n_next, &o->cap_next, sizeof *o->next)) { st = LOWP_ENOMEM; break; }
    o->next[o->n_next - 1] = w[i].t;
  }
  o->n_wait = j;
done:
  free(parent); free(size); free(mark); free(pairs); free(sz); free(first); free(bad);
  return st;
}

/* ----------------------------------------------------------- public API */

int lowp__reveal_order(lowp_tree_t *shape, size_t K, lowp__lca_fn f, void *ctx, size_t *probes,
                       size_t *rounds, size_t *hyp, char *err, size_t errlen) {
  ord_t o;
  size_t *all, i;
  int st = LOWP_OK;
  memset(&o, 0, sizeof o);
  o.K = K;
  o.err = err;
  o.errlen = errlen;
  o.hyp = hyp != NULL;
  *probes = *rounds = 0;
  lowp_tree_init(shape, K);
  if (K == 0) return LOWP_OK;
  if (new_proto(&o) != 0 || !(all = malloc(K * sizeof *all))) { free(o.pr); return LOWP_ENOMEM; }
  for (i = 0; i < K; i++) all[i] = i;
  if (add_task(&o, all, K, K + 1, 0, 0, 0, NULL, 0, NULL, 0, 0)) st = LOWP_ENOMEM;
  free(all);
  while (st == LOWP_OK && (o.n_next || o.n_wait)) {
    task_t *cur = o.next;
    size_t ncur = o.n_next;
    if (!o.n_next) { /* every other task is done: the copies, checked */
      st = hyp_round(&o, f, ctx, probes);
      (*rounds)++;
      continue;
    }
    o.next = NULL;
    o.n_next = o.cap_next = 0;
    o.round++;
    if (o.hyp) st = defer_copies(&o, cur, &ncur);
    if (st == LOWP_OK && ncur) {
      st = round_run(&o, cur, ncur, f, ctx, probes);
      (*rounds)++;
    }
    for (i = 0; i < ncur; i++) { free(cur[i].set); free(cur[i].scope); free(cur[i].sub); }
    free(cur);
  }
  if (st == LOWP_OK) st = emit(shape, &o);
  if (hyp) { hyp[0] = o.hyp_ok; hyp[1] = o.hyp_failed; }
  for (i = 0; i < o.n_next; i++) { free(o.next[i].set); free(o.next[i].scope); free(o.next[i].sub); }
  free(o.next);
  for (i = 0; i < o.n_wait; i++) { free(o.wait[i].t.set); free(o.wait[i].t.scope); free(o.wait[i].t.sub); }
  free(o.wait);
  for (i = 0; i < o.n_pr; i++) free(o.pr[i].kids);
  free(o.pr);
  return st;
}
