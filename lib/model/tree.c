/* lowp_tree -- summation trees: building from lowp's orders, evaluating, bounding, comparing */

/*
 * The builders replay the loops of model/accum.c, cpu/gemm_acc.c and
 * model/tc_dot.c, emitting one node per rounded operation instead of
 * computing it; lowp_tree_eval then performs those operations with the same
 * functions (lowp_accum_add, lowp_round_f64, lowp_bfma), so a built tree
 * gives the bits of its order (tests/ttree.c holds them equal). JSON lives
 * in tree_json.c.
 */

#include "model/tree.h"
#include "format/round_ne.h"

#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "status.h"
#include "io/escape.h"

/* ------------------------------------------------------ private helpers */

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
  size_t nc;
  void *q;
  if (need <= *cap) return 0;
  nc = *cap ? *cap : 16;
  while (nc < need) nc *= 2;
  q = realloc(*p, nc * elem);
  if (!q) return -1;
  *p = q;
  *cap = nc;
  return 0;
}

static int same_format(const lowp_format_t *a, const lowp_format_t *b) {
  return a->precision == b->precision && a->emin == b->emin && a->emax == b->emax &&
         a->subnormals == b->subnormals && a->inf == b->inf && a->nan == b->nan &&
         a->has_sign == b->has_sign && a->has_zero == b->has_zero;
}

static int same_bfma(const lowp_bfma_t *a, const lowp_bfma_t *b) {
  return a->b == b->b && a->F == b->F && a->align == b->align && a->sticky == b->sticky &&
         a->out_rnd == b->out_rnd && a->out16_rnd == b->out16_rnd &&
         a->out_frac == b->out_frac && a->ovf_inf == b->ovf_inf && a->late_c == b->late_c &&
         a->interleave == b->interleave && a->c_rnd == b->c_rnd && a->zsum_pos == b->zsum_pos &&
         a->zrnd_pos == b->zrnd_pos && a->c0_emin == b->c0_emin;
}

/* two arithmetics are the same (fields that the kind does not use ignored) */
static int same_arith(const lowp_tree_arith_t *a, const lowp_tree_arith_t *b) {
  if (a->kind != b->kind || !same_format(&a->acc, &b->acc)) return 0;
  if (a->kind == LOWP_NODE_FUSED)
    return same_format(&a->in, &b->in) && same_bfma(&a->bfma, &b->bfma);
  if (a->rnd != b->rnd || a->leaf_exact != b->leaf_exact) return 0;
  return a->leaf_exact || (same_format(&a->prod, &b->prod) && a->prod_rnd == b->prod_rnd);
}

/* ----------------------------------------------------------- building */

void lowp_tree_init(lowp_tree_t *t, size_t n) {
  memset(t, 0, sizeof *t);
  t->n = n;
}

void lowp_tree_free(lowp_tree_t *t) {
  if (!t) return;
  free(t->nodes);
  free(t->kids);
  free(t->arith);
  lowp_tree_init(t, 0);
}

int lowp_tree_copy(lowp_tree_t *dst, const lowp_tree_t *src) {
  lowp_tree_init(dst, src->n);
  dst->has_out = src->has_out;
  dst->out = src->out;
  dst->out_rnd = src->out_rnd;
  dst->nodes = malloc((src->n_nodes + 1) * sizeof *dst->nodes);
  dst->kids = malloc((src->n_kids + 1) * sizeof *dst->kids);
  dst->arith = malloc((src->n_arith + 1) * sizeof *dst->arith);
  if (!dst->nodes || !dst->kids || !dst->arith) {
    lowp_tree_free(dst);
    return LOWP_ENOMEM;
  }
  if (src->n_nodes) memcpy(dst->nodes, src->nodes, src->n_nodes * sizeof *dst->nodes);
  if (src->n_kids) memcpy(dst->kids, src->kids, src->n_kids * sizeof *dst->kids);
  if (src->n_arith) memcpy(dst->arith, src->arith, src->n_arith * sizeof *dst->arith);
  dst->n_nodes = dst->cap_nodes = src->n_nodes;
  dst->n_kids = dst->cap_kids = src->n_kids;
  dst->n_arith = dst->cap_arith = src->n_arith;
  return LOWP_OK;
}

size_t lowp_tree_arith_add(lowp_tree_t *t, const lowp_tree_arith_t *a) {
  size_t i;
  for (i = 0; i < t->n_arith; i++)
    if (same_arith(&t->arith[i], a)) return i;
  if (grow((void **)&t->arith, &t->cap_arith, t->n_arith + 1, sizeof *t->arith)) return (size_t)-1;
  t->arith[t->n_arith] = *a;
  return t->n_arith++;
}

size_t lowp_tree_node_add(lowp_tree_t *t, size_t arith, const size_t *kids, size_t count) {
  size_t i;
  if (count == 0 || arith >= t->n_arith) return LOWP_TREE_ZERO;
  for (i = 0; i < count; i++)
    if (kids[i] != LOWP_TREE_ZERO && kids[i] >= t->n + t->n_nodes) return LOWP_TREE_ZERO;
  if (grow((void **)&t->nodes, &t->cap_nodes, t->n_nodes + 1, sizeof *t->nodes) ||
      grow((void **)&t->kids, &t->cap_kids, t->n_kids + count, sizeof *t->kids))
    return LOWP_TREE_ZERO;
  memcpy(t->kids + t->n_kids, kids, count * sizeof *kids);
  t->nodes[t->n_nodes].arith = arith;
  t->nodes[t->n_nodes].first = t->n_kids;
  t->nodes[t->n_nodes].count = count;
  t->n_kids += count;
  return t->n + t->n_nodes++;
}

lowp_tree_arith_t lowp_tree_arith_sum(const lowp_format_t *acc, lowp_rounding_t rnd,
                                      int leaf_exact, const lowp_format_t *prod,
                                      lowp_rounding_t prod_rnd) {
  lowp_tree_arith_t a;
  memset(&a, 0, sizeof a);
  a.kind = LOWP_NODE_ADD;
  a.acc = *acc;
  a.rnd = rnd;
  a.leaf_exact = leaf_exact != 0;
  a.prod = prod ? *prod : *acc;
  a.prod_rnd = prod ? prod_rnd : rnd;
  return a;
}

/* a builder's state: the tree, one arithmetic, and the first failure */
typedef struct {
  lowp_tree_t *t;
  size_t ar;
  int bad;
} bld_t;

static size_t node2(bld_t *b, size_t ar, size_t x, size_t y) {
  size_t k[2], id;
  k[0] = x;
  k[1] = y;
  id = lowp_tree_node_add(b->t, ar, k, 2);
  if (id == LOWP_TREE_ZERO) b->bad = 1;
  return id;
}

/* accum.c's recursive(): a lone term is added to +0; else the first two
   terms enter together, then one addition per term */
static size_t b_recursive(bld_t *b, size_t lo, size_t hi) {
  size_t acc, i;
  if (hi - lo == 1) return node2(b, b->ar, lo, LOWP_TREE_ZERO);
  acc = node2(b, b->ar, lo, lo + 1);
  for (i = lo + 2; i < hi && !b->bad; i++) acc = node2(b, b->ar, acc, i);
  return acc;
}

/* accum.c's pairwise_raw(): single terms are leaves, halves (left smaller) */
static size_t b_pairwise(bld_t *b, size_t lo, size_t hi) {
  size_t mid, l, r;
  if (hi - lo == 1) return lo;
  mid = lo + (hi - lo) / 2;
  l = b_pairwise(b, lo, mid);
  r = b_pairwise(b, mid, hi);
  return b->bad ? LOWP_TREE_ZERO : node2(b, b->ar, l, r);
}

int lowp_tree_from_accum(lowp_tree_t *t, size_t n, const lowp_accum_t *m, int dot) {
  lowp_tree_arith_t a;
  bld_t b;
  size_t lo, w, acc = LOWP_TREE_ZERO;
  if (lowp_accum_validate(m, NULL, 0) != LOWP_OK) return LOWP_EINVAL;
  if (m->order == LOWP_ACC_KAHAN) return LOWP_EUNSUPPORTED; /* a DAG, not a tree */
  lowp_tree_init(t, n);
  a = lowp_tree_arith_sum(&m->acc, m->rnd, dot ? m->fma : 1, &m->acc, m->rnd);
  b.t = t;
  b.bad = 0;
  if ((b.ar = lowp_tree_arith_add(t, &a)) == (size_t)-1) return LOWP_ENOMEM;
  if (n == 0) return LOWP_OK;
  switch (m->order) {
  case LOWP_ACC_PAIRWISE:
    if (n == 1) node2(&b, b.ar, 0, LOWP_TREE_ZERO);
    else b_pairwise(&b, 0, n);
    break;
  case LOWP_ACC_BLOCKED:
  case LOWP_ACC_SPLITK:
    w = m->order == LOWP_ACC_BLOCKED ? m->block : (n + m->block - 1) / m->block;
    if (w == 0) w = 1;
    for (lo = 0; lo < n && !b.bad; lo += w) {
      size_t part = b_recursive(&b, lo, lo + w < n ? lo + w : n);
      acc = lo == 0 ? part : node2(&b, b.ar, acc, part);
    }
    break;
  default:
    b_recursive(&b, 0, n);
  }
  if (b.bad) { lowp_tree_free(t); return LOWP_ENOMEM; }
  return LOWP_OK;
}

int lowp_tree_from_fma_chain(lowp_tree_t *t, size_t n, const lowp_format_t *prod,
                             lowp_rounding_t prod_rnd, const lowp_format_t *acc,
                             lowp_rounding_t acc_rnd) {
  lowp_tree_arith_t a;
  bld_t b;
  size_t l, s = LOWP_TREE_ZERO;
  lowp_tree_init(t, n);
  a = lowp_tree_arith_sum(acc, acc_rnd, prod == NULL, prod, prod_rnd);
  b.t = t;
  b.bad = 0;
  if ((b.ar = lowp_tree_arith_add(t, &a)) == (size_t)-1) return LOWP_ENOMEM;
  for (l = 0; l < n && !b.bad; l++) s = node2(&b, b.ar, s, l);
  if (b.bad) { lowp_tree_free(t); return LOWP_ENOMEM; }
  return LOWP_OK;
}

/* tc_dot.c's chain() over [lo, hi) from *acc (a node id or ZERO) */
static int b_tc_chain(lowp_tree_t *t, size_t *acc, size_t lo, size_t hi, size_t ar_f,
                      size_t ar_c, const lowp_bfma_t *p) {
  size_t kids[1025];
  size_t i, j, w = (size_t)p->b, P = (size_t)p->interleave, g = P ? 2 * w : w;
  int half;
  for (i = lo; i < hi; i += g) {
    size_t n = hi - i < g ? hi - i : g;
    size_t x = p->late_c ? LOWP_TREE_ZERO : *acc;
    for (half = 0; half < (P ? 2 : 1); half++) {
      size_t cnt = 0;
      for (j = 0; j < n; j++)
        if (!P || (j / P) % 2 == (size_t)half) kids[cnt++] = i + j;
      if (cnt == 0) continue;
      kids[cnt++] = x;
      if ((x = lowp_tree_node_add(t, ar_f, kids, cnt)) == LOWP_TREE_ZERO) return LOWP_ENOMEM;
    }
    if (p->late_c) {
      size_t k2[2];
      k2[0] = x;
      k2[1] = *acc;
      if ((x = lowp_tree_node_add(t, ar_c, k2, 2)) == LOWP_TREE_ZERO) return LOWP_ENOMEM;
    }
    *acc = x;
  }
  return LOWP_OK;
}

int lowp_tree_from_tc(lowp_tree_t *t, size_t k, const lowp_tc_model_t *m,
                      const lowp_format_t *in, const lowp_format_t *out) {
  lowp_tree_arith_t f, c, pr;
  size_t ar_f, ar_c, ar_p, lo, total = LOWP_TREE_ZERO;
  int st = LOWP_OK;
  if (lowp_bfma_validate(&m->bfma, NULL, 0) != LOWP_OK || m->bfma.b > 1024) return LOWP_EINVAL;
  if (m->promote && m->promote % (size_t)m->bfma.b) return LOWP_EINVAL;
  lowp_tree_init(t, k);
  memset(&f, 0, sizeof f);
  f.kind = LOWP_NODE_FUSED;
  f.acc = *out;
  f.in = *in;
  f.bfma = m->bfma;
  c = lowp_tree_arith_sum(out, m->bfma.c_rnd, 1, NULL, LOWP_RND_NE);
  pr = lowp_tree_arith_sum(&LOWP_FMT_FP32, LOWP_RND_NE, 1, NULL, LOWP_RND_NE);
  ar_f = lowp_tree_arith_add(t, &f);
  ar_c = lowp_tree_arith_add(t, &c);
  ar_p = lowp_tree_arith_add(t, &pr);
  if (ar_f == (size_t)-1 || ar_c == (size_t)-1 || ar_p == (size_t)-1) st = LOWP_ENOMEM;
  if (st == LOWP_OK && m->promote == 0) {
    st = b_tc_chain(t, &total, 0, k, ar_f, ar_c, &m->bfma);
  } else if (st == LOWP_OK && k > 0) {
    for (lo = 0; lo < k && st == LOWP_OK; lo += m->promote) {
      size_t part = LOWP_TREE_ZERO, k2[2];
      st = b_tc_chain(t, &part, lo, lo + m->promote < k ? lo + m->promote : k, ar_f, ar_c,
                      &m->bfma);
      k2[0] = total;
      k2[1] = part;
      if (st == LOWP_OK && (total = lowp_tree_node_add(t, ar_p, k2, 2)) == LOWP_TREE_ZERO)
        st = LOWP_ENOMEM;
    }
    t->has_out = 1; /* tc_dot rounds the fp32 total to the output (rne) */
    t->out = *out;
    t->out_rnd = LOWP_RND_NE;
  }
  if (st != LOWP_OK) lowp_tree_free(t);
  return st;
}

/* -------------------------------------------------------- evaluating */

/* a child's value entering an ADD node: 0 ok, else a status */
static int child_value(double *v, int *inexact_prod, const lowp_tree_t *t,
                       const lowp_tree_arith_t *ar, size_t id, const double *a, size_t sa,
                       const double *b, size_t sb, const double *tmp) {
  double x, y, p;
  *inexact_prod = 0;
  if (id == LOWP_TREE_ZERO) { *v = 0.0; return LOWP_OK; }
  if (id >= t->n) { *v = tmp[id - t->n]; return LOWP_OK; }
  if (!b) { *v = a[id * sa]; return LOWP_OK; }
  x = a[id * sa];
  y = b[id * sb];
  p = x * y;
  if (isfinite(p) && fma(x, y, -p) != 0.0) *inexact_prod = 1; /* binary64 cannot hold it */
  if (!ar->leaf_exact) {
    /* rounding the binary64 product: exact unless it was inexact and prod is
       narrower than binary64 (a double rounding) */
    if (*inexact_prod && ar->prod.precision < 53) return LOWP_EUNSUPPORTED;
    *inexact_prod = 0;
    if (ar->prod_rnd == LOWP_RND_NE && lowp__fp32_like(&ar->prod) && lowp__fp32_rne(v, p, 0.0))
      return LOWP_OK;
    (void)lowp_round_f64(v, p, &ar->prod, NULL, ar->prod_rnd);
    return LOWP_OK;
  }
  *v = p;
  return LOWP_OK;
}

static int eval_add(double *z, const lowp_tree_t *t, const lowp_tree_node_t *nd,
                    const double *a, size_t sa, const double *b, size_t sb,
                    const double *tmp) {
  const lowp_tree_arith_t *ar = &t->arith[nd->arith];
  double v[2] = {0.0, 0.0};
  int inex[2] = {0, 0}, st;
  size_t i;
  if (nd->count > 2) return LOWP_EINVAL;
  for (i = 0; i < nd->count; i++)
    if ((st = child_value(&v[i], &inex[i], t, ar, t->kids[nd->first + i], a, sa, b, sb, tmp)))
      return st;
  if (inex[0] || inex[1]) {
    /* one product binary64 cannot hold: C's fma rounds p + other once, to
       binary64 with round to nearest (the only case it covers) */
    size_t li = t->kids[nd->first + (inex[0] ? 0 : 1)];
    if ((inex[0] && inex[1]) || ar->acc.precision < 53 || ar->rnd != LOWP_RND_NE)
      return LOWP_EUNSUPPORTED;
    *z = fma(a[li * sa], b[li * sb], v[inex[0] ? 1 : 0]);
    return LOWP_OK;
  }
  /* fp32 (the twins of revealed fp32 trees) takes lowp_accum_add's own fast path (format/round_ne.h) */
  lowp_accum_add(z, v[0], v[1], &ar->acc, ar->rnd);
  return LOWP_OK;
}

static int eval_fused(double *z, const lowp_tree_t *t, const lowp_tree_node_t *nd,
                      const double *a, size_t sa, const double *b, size_t sb,
                      const double *tmp) {
  const lowp_tree_arith_t *ar = &t->arith[nd->arith];
  double pa[1024], pb[1024], c = 0.0;
  size_t i, cnt = 0;
  for (i = 0; i < nd->count; i++) {
    size_t id = t->kids[nd->first + i];
    if (id == LOWP_TREE_ZERO) continue;
    if (id >= t->n) { c = tmp[id - t->n]; continue; }
    if (cnt == 1024) return LOWP_EUNSUPPORTED;
    pa[cnt] = a[id * sa];
    pb[cnt++] = b ? b[id * sb] : 1.0;
  }
  return lowp_bfma(z, pa, pb, cnt, c, &ar->bfma, &ar->in, &ar->acc);
}

/*
 * The common twins (revealed OpenBLAS sgemm/dgemm or SIMD kernels: fp32 or
 * fp64 additions rounded to nearest, products rounded to the same format or
 * fused) in the machine's own binary32 or binary64 arithmetic: each addition,
 * product, fmaf or fma rounds once with round to nearest even, the bits
 * lowp_accum_add gives, subnormals and overflow included (IEEE 754-2008,
 * 5.4.1). Taken only where that holds: C evaluates float and double
 * expressions in their own type (FLT_EVAL_METHOD 0), the rounding mode is to
 * nearest, subnormals are neither flushed nor read as zero (FTZ or DAZ would
 * change the bits), every term is a value of the format, and every node is an
 * addition in that one format (products rounded to it, or exact). A node
 * adding two exact products (an FMA chain's start) goes the long way
 * (eval_add). native_ok: 0 (not taken), 1 (binary32) or 2 (binary64).
 */
static int eval_add(double *z, const lowp_tree_t *t, const lowp_tree_node_t *nd,
                    const double *a, size_t sa, const double *b, size_t sb,
                    const double *tmp);

static int is_f32(double x) { return (double)(float)x == x || x != x; }

static int native_ok(const lowp_tree_t *t) {
#if FLT_EVAL_METHOD == 0
  static volatile float tiny = 0x1p-149f, least = 0x1p-126f;
  static volatile double dtiny = 0x1p-1074, dleast = 0x1p-1022;
  const lowp_format_t *f = t->n_arith ? &t->arith[0].acc : NULL;
  size_t k;
  if (!f || !(same_format(f, &LOWP_FMT_FP32) || same_format(f, &LOWP_FMT_FP64))) return 0;
  for (k = 0; k < t->n_arith; k++) {
    const lowp_tree_arith_t *ar = &t->arith[k];
    if (ar->kind != LOWP_NODE_ADD || ar->rnd != LOWP_RND_NE || !same_format(&ar->acc, f) ||
        (!ar->leaf_exact && (ar->prod_rnd != LOWP_RND_NE || !same_format(&ar->prod, f))))
      return 0;
  }
  if (fegetround() != FE_TONEAREST || tiny * 1.0f == 0.0f || least * 0.5f == 0.0f || dtiny * 1.0 == 0.0 ||
      dleast * 0.5 == 0.0)
    return 0;
  return f->precision == 24 ? 1 : 2;
#else
  (void)t;
  return 0;
#endif
}

/* m outputs side by side (node k of output o in tmp[k m + o]; m = 1 for lowp_tree_eval): each
   node's operations are done output by output, so the bits are those of m evaluations; the m
   chains are independent, so the CPU overlaps them instead of waiting on each rounding in turn.
   Binary32 (mode 1) needs every term it reads to be a binary32 value, tested as it is read.
   0: not taken (a node of more than two children, such a term; the caller evaluates one by one). */
static LOWP_ALWAYS_INLINE int eval_many_body(const lowp_tree_t *t, int mode, size_t m, const double *const *a, size_t sa,
                                             const double *const *b, size_t sb, double *tmp) {
  size_t k, o;
  int f32 = 1;
  for (k = 0; k < t->n_nodes; k++) {
    const lowp_tree_node_t *nd = &t->nodes[k];
    const lowp_tree_arith_t *ar = &t->arith[nd->arith];
    size_t id[2] = {LOWP_TREE_ZERO, LOWP_TREE_ZERO}, i, nl = 0, li = 0;
    double *z = &tmp[k * m];
    if (nd->count > 2) return 0;
    for (i = 0; i < nd->count; i++) {
      id[i] = t->kids[nd->first + i];
      if (b && id[i] < t->n && ar->leaf_exact) { nl++; li = i; }
    }
    if (nl == 2) { /* two exact products, rounded once together (eval_add reads no node here) */
      for (o = 0; o < m; o++)
        if (eval_add(&z[o], t, nd, a[o], sa, b[o], sb, NULL) != LOWP_OK) return 0;
      continue;
    }
    for (o = 0; o < m; o++) {
      double v[2] = {0.0, 0.0};
      for (i = 0; i < 2; i++) {
        if (id[i] == LOWP_TREE_ZERO || (nl && i == li)) continue;
        if (id[i] >= t->n) v[i] = tmp[(id[i] - t->n) * m + o];
        else if (!b) {
          v[i] = a[o][id[i] * sa];
          if (mode == 1) f32 &= is_f32(v[i]);
        }
        else if (mode == 1) {
          f32 &= is_f32(a[o][id[i] * sa]) & is_f32(b[o][id[i] * sb]);
          v[i] = (double)((float)a[o][id[i] * sa] * (float)b[o][id[i] * sb]);
        } else
          v[i] = a[o][id[i] * sa] * b[o][id[i] * sb];
      }
      if (mode == 1 && nl) f32 &= is_f32(a[o][id[li] * sa]) & is_f32(b[o][id[li] * sb]);
      if (mode == 1)
        z[o] = nl ? (double)fmaf((float)a[o][id[li] * sa], (float)b[o][id[li] * sb], (float)v[1 - li])
                  : (double)((float)v[0] + (float)v[1]);
      else
        z[o] = nl ? fma(a[o][id[li] * sa], b[o][id[li] * sb], v[1 - li]) : v[0] + v[1];
    }
  }
  return f32;
}

static int eval_many_plain(const lowp_tree_t *t, int mode, size_t m, const double *const *a, size_t sa,
                           const double *const *b, size_t sb, double *tmp) {
  return eval_many_body(t, mode, m, a, sa, b, sb, tmp);
}

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
__attribute__((target("avx2,fma"))) static int eval_many_fma(const lowp_tree_t *t, int mode, size_t m,
                                                             const double *const *a, size_t sa,
                                                             const double *const *b, size_t sb, double *tmp) {
  return eval_many_body(t, mode, m, a, sa, b, sb, tmp);
}
#define eval_many(t, mode, m, a, sa, b, sb, tmp)                                                                  \
  (lowp_cpu_isa(1) >= LOWP_ISA_AVX2 ? eval_many_fma(t, mode, m, a, sa, b, sb, tmp)                               \
                                     : eval_many_plain(t, mode, m, a, sa, b, sb, tmp))
#else
#define eval_many eval_many_plain
#endif

int lowp_tree_eval(double *y, const lowp_tree_t *t, const double *a, size_t sa,
                   const double *b, size_t sb, double *tmp) {
  double *own = NULL, r;
  size_t k;
  int st = LOWP_OK, mode;
  if (!y || !t) return LOWP_EINVAL;
  if (t->n_nodes == 0) {
    r = t->n == 0 ? 0.0 : (t->n == 1 ? (b ? a[0] * b[0] : a[0]) : NAN);
    if (t->n > 1) return LOWP_EINVAL;
  } else {
    if (!tmp && !(tmp = own = malloc(t->n_nodes * sizeof *tmp))) return LOWP_ENOMEM;
    mode = native_ok(t);
    k = mode && eval_many(t, mode, 1, &a, sa, b ? &b : NULL, sb, tmp) ? t->n_nodes : 0; /* all done, or from the start */
    for (; k < t->n_nodes && st == LOWP_OK; k++) {
      const lowp_tree_node_t *nd = &t->nodes[k];
      st = t->arith[nd->arith].kind == LOWP_NODE_FUSED
               ? eval_fused(&tmp[k], t, nd, a, sa, b, sb, tmp)
               : eval_add(&tmp[k], t, nd, a, sa, b, sb, tmp);
    }
    r = tmp[t->n_nodes - 1];
    free(own);
    if (st != LOWP_OK) return st;
  }
  if (t->has_out) lowp_round_f64(&r, r, &t->out, NULL, t->out_rnd);
  *y = r;
  return LOWP_OK;
}

int lowp_tree_eval_many(double *y, size_t m, const lowp_tree_t *t, const double *const *a, size_t sa,
                        const double *const *b, size_t sb, double *tmp) {
  size_t o;
  int mode = m > 1 && t && t->n_nodes ? native_ok(t) : 0, st = LOWP_OK;
  if (!y || !t || !a) return LOWP_EINVAL;
  if (mode && eval_many(t, mode, m, a, sa, b, sb, tmp)) {
    for (o = 0; o < m; o++) {
      double r = tmp[(t->n_nodes - 1) * m + o];
      if (t->has_out) lowp_round_f64(&r, r, &t->out, NULL, t->out_rnd);
      y[o] = r;
    }
    return LOWP_OK;
  }
  for (o = 0; o < m && st == LOWP_OK; o++) st = lowp_tree_eval(&y[o], t, a[o], sa, b ? b[o] : NULL, sb, tmp);
  return st;
}

int lowp_tree_validate(const lowp_tree_t *t, char *err, size_t errlen) {
  unsigned char *used;
  size_t k, i;
  const char *why = NULL;
  if (!t) return LOWP_EINVAL;
  if (t->n_nodes == 0) {
    if (t->n > 1) why = "a tree of two or more leaves needs nodes";
    if (why) lowp_errf(err, errlen, 0, "%s", why);
    return why ? LOWP_EINVAL : LOWP_OK;
  }
  used = calloc(t->n + t->n_nodes, 1);
  if (!used) return LOWP_ENOMEM;
  for (k = 0; k < t->n_nodes && !why; k++) {
    const lowp_tree_node_t *nd = &t->nodes[k];
    const lowp_tree_arith_t *ar;
    size_t nonleaf = 0;
    if (nd->arith >= t->n_arith) { why = "a node names an arithmetic that does not exist"; break; }
    ar = &t->arith[nd->arith];
    if (nd->count == 0 || nd->first + nd->count > t->n_kids) { why = "a node without children"; break; }
    if (ar->kind == LOWP_NODE_ADD && nd->count > 2) why = "an addition with more than two children";
    for (i = 0; i < nd->count && !why; i++) {
      size_t id = t->kids[nd->first + i];
      if (id == LOWP_TREE_ZERO) continue;
      if (id >= t->n + k) why = "a child defined after its parent (or out of range)";
      else if (used[id]++) why = "a leaf or node used twice";
      else if (id >= t->n) nonleaf++;
    }
    if (!why && ar->kind == LOWP_NODE_FUSED && nonleaf > 1)
      why = "a block FMA with more than one non-leaf child";
  }
  for (i = 0; i < t->n + t->n_nodes - 1 && !why; i++)
    if (!used[i]) why = i < t->n ? "a leaf that no node uses" : "a node that no node uses";
  free(used);
  for (k = 0; k < t->n_arith && !why; k++) {
    const lowp_tree_arith_t *ar = &t->arith[k];
    if (ar->kind == LOWP_NODE_FUSED) {
      if (lowp_bfma_validate(&ar->bfma, NULL, 0) != LOWP_OK) why = "invalid block-FMA parameters";
    } else if (lowp_accum_format_check(&ar->acc, NULL, 0) != LOWP_OK ||
               ar->rnd == LOWP_RND_SR || (unsigned)ar->rnd >= LOWP_RND_COUNT ||
               (ar->acc.precision >= 53 && ar->rnd != LOWP_RND_NE)) {
      why = "invalid accumulation format or rounding";
    }
  }
  if (why) lowp_errf(err, errlen, 0, "%s", why);
  return why ? LOWP_EINVAL : LOWP_OK;
}

/* ------------------------------------------------------------ bounds */

/* unit roundoff of rounding to p bits in mode r: 2^-p to nearest, else 2^(1-p) */
static double unit(int p, lowp_rounding_t r) {
  return ldexp(1.0, (r == LOWP_RND_NE || r == LOWP_RND_NA) ? -p : 1 - p);
}

/* delta of a node (see tree.h) and, for ADD, of a rounded product entering it */
static double node_delta(const lowp_tree_t *t, const lowp_tree_node_t *nd, double *dprod) {
  const lowp_tree_arith_t *ar = &t->arith[nd->arith];
  const lowp_bfma_t *p = &ar->bfma;
  double terms, align, out;
  *dprod = 0.0;
  if (ar->kind == LOWP_NODE_ADD) {
    if (!ar->leaf_exact) *dprod = unit(ar->prod.precision, ar->prod_rnd);
    return unit(ar->acc.precision, ar->rnd);
  }
  terms = (double)nd->count;
  align = ldexp(terms, -p->F - (p->align == LOWP_RND_NE ? 1 : 0));
  if (ar->acc.precision >= 24)
    out = unit(p->out_frac > 0 ? p->out_frac + 1 : ar->acc.precision, p->out_rnd);
  else
    out = unit(ar->acc.precision, p->out16_rnd);
  return align + out + align * out;
}

/* for every node k, the sum of deltas from it to the root (and the roundings
   counted): a pass from the root down, parents being stored after children */
static int path_sums(double *down, size_t *cnt, const lowp_tree_t *t, double *leaf,
                     size_t *leafcnt) {
  size_t k, i;
  int root_p;
  double fin = 0.0;
  const lowp_tree_arith_t *rar;
  if (t->n_nodes == 0) {
    for (i = 0; i < t->n; i++) { leaf[i] = 0.0; leafcnt[i] = 0; }
    return LOWP_OK;
  }
  rar = &t->arith[t->nodes[t->n_nodes - 1].arith];
  root_p = rar->acc.precision;
  if (rar->kind == LOWP_NODE_FUSED && rar->bfma.out_frac > 0 && root_p >= 24)
    root_p = rar->bfma.out_frac + 1;
  if (t->has_out && t->out.precision < root_p) fin = unit(t->out.precision, t->out_rnd);
  for (k = t->n_nodes; k-- > 0;) {
    const lowp_tree_node_t *nd = &t->nodes[k];
    double dp, d = node_delta(t, nd, &dp);
    double here = (k == t->n_nodes - 1 ? fin : down[k]) + d;
    size_t ch = (k == t->n_nodes - 1 ? (fin > 0) : cnt[k]) + 1;
    for (i = 0; i < nd->count; i++) {
      size_t id = t->kids[nd->first + i];
      if (id == LOWP_TREE_ZERO) continue;
      if (id >= t->n) { down[id - t->n] = here; cnt[id - t->n] = ch; }
      else {
        leaf[id] = here + (t->arith[nd->arith].kind == LOWP_NODE_ADD ? dp : 0.0);
        leafcnt[id] = ch + (dp > 0);
      }
    }
  }
  return LOWP_OK;
}

static int paths(double *leaf, size_t *leafcnt, const lowp_tree_t *t) {
  double *down = malloc((t->n_nodes + 1) * sizeof *down);
  size_t *cnt = malloc((t->n_nodes + 1) * sizeof *cnt);
  int st = LOWP_ENOMEM;
  if (down && cnt) st = path_sums(down, cnt, t, leaf, leafcnt);
  free(down);
  free(cnt);
  return st;
}

int lowp_tree_bound_coef(double *c, const lowp_tree_t *t) {
  size_t *cnt, i;
  int st;
  if (!c || !t) return LOWP_EINVAL;
  if (!(cnt = malloc((t->n + 1) * sizeof *cnt))) return LOWP_ENOMEM;
  st = paths(c, cnt, t);
  free(cnt);
  if (st) return st;
  for (i = 0; i < t->n; i++) {
    double s = c[i];
    if (s >= 1.0) return LOWP_ERANGE;
    /* t/(1-t), nudged up by a few ulps of binary64 for its own roundings */
    c[i] = s / (1.0 - s) * (1.0 + ldexp(1.0, -50));
  }
  return LOWP_OK;
}

int lowp_tree_depths(size_t *d, const lowp_tree_t *t) {
  double *s;
  int st;
  if (!d || !t) return LOWP_EINVAL;
  if (!(s = malloc((t->n + 1) * sizeof *s))) return LOWP_ENOMEM;
  st = paths(s, d, t);
  free(s);
  return st;
}

/* -------------------------------------------------------- comparing */

/* smallest leaf under every node (SIZE_MAX for a node with none) */
static size_t *min_leaves(const lowp_tree_t *t) {
  size_t *m = malloc((t->n_nodes + 1) * sizeof *m), k, i;
  if (!m) return NULL;
  for (k = 0; k < t->n_nodes; k++) {
    const lowp_tree_node_t *nd = &t->nodes[k];
    m[k] = (size_t)-1;
    for (i = 0; i < nd->count; i++) {
      size_t id = t->kids[nd->first + i], v;
      if (id == LOWP_TREE_ZERO) continue;
      v = id < t->n ? id : m[id - t->n];
      if (v < m[k]) m[k] = v;
    }
  }
  return m;
}

/* the children of node k other than +0, sorted by their smallest leaf */
static size_t sorted_kids(size_t *out, const lowp_tree_t *t, size_t k, const size_t *ml) {
  const lowp_tree_node_t *nd = &t->nodes[k];
  size_t i, j, c = 0;
  for (i = 0; i < nd->count; i++) {
    size_t id = t->kids[nd->first + i];
    if (id == LOWP_TREE_ZERO) continue;
    out[c++] = id;
  }
  for (i = 1; i < c; i++) /* insertion sort: nodes have few children */
    for (j = i; j > 0; j--) {
      size_t x = out[j - 1] < t->n ? out[j - 1] : ml[out[j - 1] - t->n];
      size_t y = out[j] < t->n ? out[j] : ml[out[j] - t->n];
      size_t s;
      if (x <= y) break;
      s = out[j]; out[j] = out[j - 1]; out[j - 1] = s;
    }
  return c;
}

/* with shape_only, a node of one child (x + 0) is looked through: counting
   probes cannot see it */
static size_t through(const lowp_tree_t *t, size_t id, int shape_only) {
  while (shape_only && id != LOWP_TREE_ZERO && id >= t->n) {
    const lowp_tree_node_t *nd = &t->nodes[id - t->n];
    size_t i, only = LOWP_TREE_ZERO, cnt = 0;
    for (i = 0; i < nd->count; i++)
      if (t->kids[nd->first + i] != LOWP_TREE_ZERO) { only = t->kids[nd->first + i]; cnt++; }
    if (cnt != 1) break;
    id = only;
  }
  return id;
}

int lowp_tree_same(const lowp_tree_t *a, const lowp_tree_t *b, int shape_only, size_t *where) {
  size_t *ma, *mb, *stack, *ka, *kb, sp = 0;
  int same = 1;
  size_t dummy;
  if (!where) where = &dummy;
  *where = LOWP_TREE_ZERO;
  if (a->n != b->n || (a->n_nodes == 0) != (b->n_nodes == 0)) return 0;
  if (a->has_out != b->has_out ||
      (a->has_out && (!same_format(&a->out, &b->out) || a->out_rnd != b->out_rnd)))
    if (!shape_only) return 0;
  if (a->n_nodes == 0) return 1;
  ma = min_leaves(a);
  mb = min_leaves(b);
  stack = malloc(2 * (a->n_nodes + 1) * sizeof *stack);
  ka = malloc(2048 * sizeof *ka);
  kb = ka ? ka + 1024 : NULL;
  if (!ma || !mb || !stack || !ka) { same = -1; goto done; }
  stack[sp++] = through(a, a->n + a->n_nodes - 1, shape_only);
  stack[sp++] = through(b, b->n + b->n_nodes - 1, shape_only);
  if ((stack[0] < a->n) != (stack[1] < b->n)) { same = stack[0] == stack[1]; sp = 0; }
  while (sp && same == 1) {
    size_t yb = stack[--sp], xa = stack[--sp], ca, cb, i;
    const lowp_tree_node_t *na, *nb;
    if (xa < a->n || yb < b->n) { same = xa == yb; if (!same) *where = xa; break; }
    na = &a->nodes[xa - a->n];
    nb = &b->nodes[yb - b->n];
    if (na->count > 1024 || nb->count > 1024) { same = -1; break; }
    ca = sorted_kids(ka, a, xa - a->n, ma);
    cb = sorted_kids(kb, b, yb - b->n, mb);
    for (i = 0; i < ca; i++) ka[i] = through(a, ka[i], shape_only);
    for (i = 0; i < cb; i++) kb[i] = through(b, kb[i], shape_only);
    if (ca != cb || (!shape_only && !same_arith(&a->arith[na->arith], &b->arith[nb->arith]))) {
      same = 0;
      *where = xa;
      break;
    }
    for (i = 0; i < ca; i++) {
      int la = ka[i] < a->n, lb = kb[i] < b->n;
      if (la != lb || (la && ka[i] != kb[i])) { same = 0; *where = xa; break; }
      if (!la) {
        if (sp + 2 > 2 * (a->n_nodes + 1)) { same = -1; break; }
        stack[sp++] = ka[i];
        stack[sp++] = kb[i];
      }
    }
  }
done:
  free(ma);
  free(mb);
  free(stack);
  free(ka);
  return same == 1;
}

void lowp_tree_str(char *buf, size_t len, const lowp_tree_t *t) {
  size_t *d = malloc((t->n + 1) * sizeof *d), i, lo = 0, hi = 0, fused = 0, k;
  for (k = 0; k < t->n_nodes; k++) fused += t->arith[t->nodes[k].arith].kind == LOWP_NODE_FUSED;
  if (d && lowp_tree_depths(d, t) == LOWP_OK && t->n) {
    lo = hi = d[0];
    for (i = 1; i < t->n; i++) {
      if (d[i] < lo) lo = d[i];
      if (d[i] > hi) hi = d[i];
    }
  }
  free(d);
  snprintf(buf, len, "n=%zu, %zu nodes (%zu additions, %zu block FMAs), leaf depth %zu..%zu",
           t->n, t->n_nodes, t->n_nodes - fused, fused, lo, hi);
}
