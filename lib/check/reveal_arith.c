/* lowp__reveal_arith, lowp_reveal_twin -- the arithmetic of a revealed order, validated as a bit-exact twin */

/*
 * Counting probes see the order, not the arithmetic. On each class's
 * shape lowp builds candidate trees, in order of preference:
 *   additions only: accumulation format (fp32, fp64, fp16, bf16, tf32;
 *     only those whose precision agrees with the bits seen at the output),
 *     rounding (rne, rtz, rdn, rup, rna), products exact (FMA) or rounded
 *     to the accumulator, and FMA chains that start from zero (the first
 *     product rounded alone, s = fma(a0, b0, 0): invisible to counting)
 *     or from two exact products;
 *   with block FMAs (a node of more than two children): the block FMA of
 *     every tensor-core preset for the input format (model/tc.h), the other
 *     additions in fp32 (rne: promotion) or in the output format (rne or
 *     rtz: late c), two-child nodes with a product as block FMAs too (a
 *     last short block) or as additions, and a final rounding or none;
 *     under an output narrower than fp32, the presets' fp32 block FMAs too,
 *     the other additions in fp32 and the result rounded to the output
 *     (tensor cores carrying fp32, an fp16 store).
 * Each candidate is a twin: it computes the outputs of random inputs (on
 * the declared formats' grids, converted as the kernel converts them). The
 * first candidate that reproduces every output of a first validation call
 * bit for bit is the class's tree, then checked on every output of every
 * validation call. A class none fits has no tree, and says so.
 */

#include "check/reveal_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/round_ne.h"
#include "rng/rng.h"
#include "spread.h"
#include "status.h"

/* elements below which validation stays on one thread (an OpenMP region costs microseconds) */
#define PAR_MIN ((size_t)1 << 14)

/* ------------------------------------------------------- candidates */

typedef struct {
  int fused;                 /* the shape has block FMAs */
  lowp_tree_arith_t add;     /* additions */
  lowp_tree_arith_t blk;     /* block FMAs (fused) */
  int first_rounded;         /* additions only: chains start from zero */
  int lone_rounded;          /* additions only: a product added to a sum of sums is
                                rounded first (a block of one term) */
  int leafy_fused;           /* fused: two-child nodes with a product are block FMAs */
  int has_out;
} cand_t;

static int has_leaf_kid(const lowp_tree_t *s, const lowp_tree_node_t *nd, size_t *nleaves) {
  size_t i;
  *nleaves = 0;
  for (i = 0; i < nd->count; i++) *nleaves += s->kids[nd->first + i] < s->n;
  return *nleaves > 0;
}

/* the candidate's tree on the shape (see the header) */
static int build(lowp_tree_t *t, const lowp_tree_t *shape, const cand_t *c, const lowp_format_t *out) {
  size_t *map = malloc((shape->n_nodes + 1) * sizeof *map), k, i, ar_add, ar_blk = 0, kids[1025];
  int st = LOWP_OK;
  lowp_tree_init(t, shape->n);
  if (!map) return LOWP_ENOMEM;
  ar_add = lowp_tree_arith_add(t, &c->add);
  if (c->fused) ar_blk = lowp_tree_arith_add(t, &c->blk);
  for (k = 0; k < shape->n_nodes && st == LOWP_OK; k++) {
    const lowp_tree_node_t *nd = &shape->nodes[k];
    size_t nl, ar;
    int blk;
    has_leaf_kid(shape, nd, &nl);
    if (nd->count > 1024) { st = LOWP_EUNSUPPORTED; break; }
    for (i = 0; i < nd->count; i++) {
      size_t id = shape->kids[nd->first + i];
      kids[i] = id < shape->n ? id : map[id - shape->n];
    }
    blk = c->fused && (nd->count > 2 || (c->leafy_fused && nl > 0));
    ar = blk ? ar_blk : ar_add;
    if (!blk && c->first_rounded && nd->count == 2 && nl == 2) {
      size_t lo = kids[0] < kids[1] ? 0 : 1, z[2];
      z[0] = kids[lo];
      z[1] = LOWP_TREE_ZERO;
      kids[lo] = lowp_tree_node_add(t, ar, z, 2);
    }
    if (!blk && c->lone_rounded && nd->count == 2 && nl == 1) {
      size_t li = shape->kids[nd->first] < shape->n ? 0 : 1, other = shape->kids[nd->first + 1 - li];
      size_t onl, z[2];
      has_leaf_kid(shape, &shape->nodes[other - shape->n], &onl);
      if (onl == 0) {
        z[0] = kids[li];
        z[1] = LOWP_TREE_ZERO;
        kids[li] = lowp_tree_node_add(t, ar, z, 2);
      }
    }
    map[k] = lowp_tree_node_add(t, ar, kids, nd->count);
    if (map[k] == LOWP_TREE_ZERO) st = LOWP_ENOMEM;
  }
  free(map);
  if (c->has_out) {
    t->has_out = 1;
    t->out = *out;
    t->out_rnd = LOWP_RND_NE;
  }
  if (st != LOWP_OK) lowp_tree_free(t);
  return st;
}

static const lowp_format_t *const acc_fmts[] = {&LOWP_FMT_FP32, &LOWP_FMT_FP64, &LOWP_FMT_FP16,
                                                &LOWP_FMT_BF16, &LOWP_FMT_TF32};
static const lowp_rounding_t acc_rnds[] = {LOWP_RND_NE, LOWP_RND_TZ, LOWP_RND_DN, LOWP_RND_UP,
                                           LOWP_RND_NA};

/* a format of acc_fmts that candidates() tries for precision_seen */
static int acc_tried(const lowp_format_t *af, const lowp_reveal_t *r, const lowp_format_t *out) {
  int P = af->precision;
  return !(r->precision_lower ? P < r->precision_seen
                              : r->precision_seen < out->precision ? P != r->precision_seen : P < out->precision);
}

/* every candidate for a shape, in order of preference (*n set; malloc'd) */
static cand_t *candidates(size_t *n, const lowp_tree_t *shape, const lowp_reveal_t *r,
                          const lowp__geo_t *g) {
  const lowp_format_t *out = &g->p.out;
  const lowp_format_t *in = r->conv[0].converted ? &r->conv[0].fmt : &g->p.in[0];
  cand_t *v = malloc(1024 * sizeof *v);
  static const lowp_format_t *const prods[] = {NULL, &LOWP_FMT_FP16, &LOWP_FMT_BF16};
  size_t k, a, b, e, f, h, q;
  int fused = 0, sum = g->op == LOWP_OP_SUM;
  *n = 0;
  if (!v) return NULL;
  for (k = 0; k < shape->n_nodes; k++) fused |= shape->nodes[k].count > 2;
  if (!fused) {
    for (a = 0; a < sizeof acc_fmts / sizeof *acc_fmts; a++) {
      const lowp_format_t *af = acc_fmts[a];
      int P = af->precision;
      if (!acc_tried(af, r, out)) continue;
      for (b = 0; b < sizeof acc_rnds / sizeof *acc_rnds; b++) {
        if (P >= 53 && acc_rnds[b] != LOWP_RND_NE) continue;
        for (e = 0; e < (sum ? 1u : 4u); e++) /* exact; rounded to acc, fp16, bf16 */
          for (f = 0; f < (sum ? 1u : 4u); f++) {
            const lowp_format_t *pf = e < 2 ? af : prods[e - 1];
            cand_t *c;
            if (e >= 2 && pf->precision >= P) continue;
            c = &v[(*n)++];
            memset(c, 0, sizeof *c);
            c->add = lowp_tree_arith_sum(af, acc_rnds[b], e == 0, pf, acc_rnds[b]);
            c->first_rounded = (int)(f & 1);
            c->lone_rounded = (int)(f >> 1);
            c->has_out = out->precision < P;
          }
      }
    }
  }
  /* block FMAs: also for shapes of two-child nodes only (a dot of one block) */
  for (k = 0; k < lowp_tc_preset_count() && *n < 1000; k++) {
    lowp_tc_model_t m;
    int dup = 0;
    if (lowp_tc_model_get(&m, lowp_tc_preset_at(k)->name, in, out, NULL, 0) != LOWP_OK) continue;
    for (q = 0; q < *n; q++) dup |= !memcmp(&v[q].blk.bfma, &m.bfma, sizeof m.bfma);
    if (dup) continue;
    for (a = 0; a < 3; a++)
      for (h = 0; h < 2; h++)
        for (f = 0; f < 2; f++) {
          cand_t *c = &v[(*n)++];
          memset(c, 0, sizeof *c);
          c->fused = 1;
          c->blk.kind = LOWP_NODE_FUSED;
          c->blk.acc = *out;
          c->blk.in = *in;
          c->blk.bfma = m.bfma;
          c->add = a == 0 ? lowp_tree_arith_sum(&LOWP_FMT_FP32, LOWP_RND_NE, 1, NULL, LOWP_RND_NE)
                          : lowp_tree_arith_sum(out, a == 1 ? LOWP_RND_NE : LOWP_RND_TZ, 1, NULL,
                                                LOWP_RND_NE);
          c->leafy_fused = f == 0;
          if (!fused && !c->leafy_fused) (*n)--; /* no block FMA would be left */
          c->has_out = (int)h;
        }
  }
  /* block FMAs that carry an fp32 sum, with the result rounded to a narrower output once at the end
     (cuBLAS's HGEMM with CUBLAS_COMPUTE_32F, torch's fp16 and bf16 matmul: the epilogue converts the
     fp32 accumulator): the presets' blocks as for an fp32 output, the other additions in fp32 */
  if (out->precision < LOWP_FMT_FP32.precision)
    for (k = 0; k < lowp_tc_preset_count() && *n < 1000; k++) {
      lowp_tc_model_t m;
      int dup = 0;
      if (lowp_tc_model_get(&m, lowp_tc_preset_at(k)->name, in, &LOWP_FMT_FP32, NULL, 0) != LOWP_OK) continue;
      for (q = 0; q < *n; q++)
        dup |= v[q].fused && v[q].blk.acc.precision == LOWP_FMT_FP32.precision &&
               !memcmp(&v[q].blk.bfma, &m.bfma, sizeof m.bfma);
      if (dup) continue;
      for (f = 0; f < 2; f++) {
        cand_t *c = &v[(*n)++];
        memset(c, 0, sizeof *c);
        c->fused = 1;
        c->blk.kind = LOWP_NODE_FUSED;
        c->blk.acc = LOWP_FMT_FP32;
        c->blk.in = *in;
        c->blk.bfma = m.bfma;
        c->add = lowp_tree_arith_sum(&LOWP_FMT_FP32, LOWP_RND_NE, 1, NULL, LOWP_RND_NE);
        c->leafy_fused = f == 0;
        if (!fused && !c->leafy_fused) (*n)--;
        c->has_out = 1;
      }
    }
  return v;
}

static void describe(char *buf, size_t len, const cand_t *c, const lowp_format_t *out) {
  if (c->fused) {
    lowp_tc_model_t m;
    char b[300];
    memset(&m, 0, sizeof m);
    m.bfma = c->blk.bfma;
    lowp_tc_model_str(b, sizeof b, &m);
    size_t at;
    snprintf(buf, len, "block FMAs (%s in, %s out; ", c->blk.in.name, c->blk.acc.name);
    at = strlen(buf);
    if (at < len) snprintf(buf + at, len - at, "%.*s", (int)(len - at), b);
    at = strlen(buf);
    if (at < len)
      snprintf(buf + at, len - at, "); additions %s %s%s", c->add.acc.name,
               lowp_rounding_name(c->add.rnd), c->has_out ? "; result rounded to the output" : "");
  } else {
    snprintf(buf, len, "additions in %s (%s), products %s%s%s%s", c->add.acc.name,
             lowp_rounding_name(c->add.rnd), c->add.leaf_exact ? "exact (FMA)" : "rounded to ",
             c->add.leaf_exact ? "" : c->add.prod.name,
             c->first_rounded ? ", each chain starts from zero (first product rounded alone)" : "",
             c->lone_rounded ? ", a lone product added to a sum of sums is rounded first" : "");
  }
  (void)out;
}

/* -------------------------------------------------------- validation */

/* a value of f: random sign, exponent in [ehi - 12, ehi], every significand bit random */
static double rand_value(uint64_t seed, uint64_t i, uint32_t stream, const lowp_format_t *f, int ehi) {
  uint64_t r = lowp_rng_u64(seed, i, stream);
  /* +-(1 + (r >> 12) 2^-52) 2^e, e = (r >> 4) % 13 + ehi - 12, put together from its bits (ldexp
     was a tenth of a revelation's time: lowp validates hundreds of millions of values) */
  uint64_t bits = ((r & 1) << 63) | ((uint64_t)(1023 + (int)((r >> 4) % 13) + ehi - 12) << 52) | (r >> 12);
  double v, y;
  memcpy(&v, &bits, sizeof v);
  /* binary64 and binary32 (normal numbers here): the value itself, and the
     hardware's rounding to nearest even (one rounding: the same bits as
     lowp_round_f64, faster) */
  if (f->precision == 53 && f->emax == 1023) return v;
  if (f->precision == 24 && f->emax == 127 && f->emin == -126) return (double)(float)v;
  { /* others (fp16: order-revelation's verdicts) by format/round_ne.h's one-addition rounding where it
       applies, lowp_round_f64's value (2% of that experiment's samples went to lowp_round_f64 here) */
    int tern;
    if (lowp__round_ne_fast(&y, &tern, v, 0, f)) return y;
  }
  (void)lowp_round_f64(&y, v, f, NULL, LOWP_RND_NE);
  return y;
}

/* The largest exponent of the validation values: 6 (values 2^-6 .. 2^7), or
   less where K products of that size could overflow the output or an
   accumulator the candidates try (K 2^(2 ehi + 2) < 2^emax). Outputs that
   overflow (inf, NaN) match any candidate and say nothing: with fp16
   additions at K = 16384 and values up to 2^7, 1877 of 2000 outputs did, and
   the first candidate that fitted the few finite ones (chains from two exact
   products) was not the kernel's (chains from zero). */
static int value_ehi(const lowp_reveal_t *r, const lowp__geo_t *g) {
  const lowp_format_t *out = &g->p.out;
  int emax = out->emax, lk = 0, e;
  size_t a;
  while (((size_t)1 << lk) < g->K) lk++;
  for (a = 0; a < sizeof acc_fmts / sizeof *acc_fmts; a++)
    if (acc_tried(acc_fmts[a], r, out) && acc_fmts[a]->emax < emax) emax = acc_fmts[a]->emax;
  e = emax - lk - 2;
  e = e >= 0 ? e / 2 : -((1 - e) / 2); /* floor(e / 2) */
  return e < 6 ? (e > -60 ? e : -60) : 6;
}

typedef struct {
  lowp__geo_t *g;
  const lowp_reveal_t *r;
  double *a, *b, *out;  /* one call's inputs (converted copies in ca, cb) and outputs */
  double *ca, *cb;
  const double *ta, *tb; /* what the twin reads: ca, cb, or a, b where no conversion was found */
  size_t batch;
  double *tmp;
} val_t;

/* the twin's output for slot s, column j */
static int twin_one(double *y, val_t *v, const lowp_tree_t *t, size_t s, size_t j) {
  lowp__geo_t *g = v->g;
  const double *ar = lowp__slot_a(g, (double *)v->ta, s);
  if (g->op == LOWP_OP_SUM) return lowp_tree_eval(y, t, ar, 1, NULL, 1, v->tmp);
  /* B's column in place: element l of it is l rows (of C values) further on */
  return lowp_tree_eval(y, t, ar, 1, lowp__slot_b(g, (double *)v->tb, s, 0, j), g->op == LOWP_OP_GEMM ? g->C : 1, v->tmp);
}

/* bit for bit; any NaN matches any NaN (IEEE 754 leaves the sign and payload of inf - inf, and which
   NaN operand a sum passes on, to the implementation: a twin that adds in another operand order
   gets another NaN) */
static int same(double a, double b) { return !memcmp(&a, &b, sizeof a) || (a != a && b != b); }

/* one val_fill: its rows of A to write, then its rows of B in chunks of FILL_B */
typedef struct {
  val_t *v;
  uint64_t seed;
  int ehi;
  const unsigned char *need_r, *need_c;
  const size_t *rows, *wcol; /* rows of A to write (nra), columns of B (nwc) */
  size_t nra, nwc, nb;
} fill_t;

#define FILL_B 2048

static void fill_piece(void *ctx, size_t i, int w) {
  const fill_t *f = ctx;
  const lowp__geo_t *g = f->v->g;
  size_t e, k, j, r;
  (void)w;
  if (i < f->nra) { /* row q of A: element e = q K + l */
    r = f->rows[i] % g->R;
    for (e = f->rows[i] * g->K; e < (f->rows[i] + 1) * g->K; e++)
      f->v->a[e] = f->need_r[r] ? rand_value(f->seed, e, 51, &g->p.in[0], f->ehi) : 0.0;
    return;
  }
  i -= f->nra; /* a row of B's C columns (one value for dot and gemv) */
  for (r = i * FILL_B; r < (i + 1) * FILL_B && r * g->C < f->nb; r++)
    for (k = 0; k < f->nwc && r * g->C + f->wcol[k] < f->nb; k++) {
      j = f->wcol[k];
      e = r * g->C + j;
      f->v->b[e] = (g->op != LOWP_OP_GEMM || f->need_c[j]) ? rand_value(f->seed, e, 52, &g->p.in[1], f->ehi) : 0.0;
    }
}

/* the inputs of a validation call of nbat entries: random where an output
   still to be compared reads them (need_r, need_c), 0 where one read them in
   the last call (had_r, had_c) and none does now; the rest is left as it is
   (a row or column no longer read stays 0 once zeroed). Every value is a
   function of its index alone, so the rows go to lowp_spread's threads. */
static size_t val_fill(val_t *v, size_t nbat, uint64_t seed, int ehi, const unsigned char *need_r,
                     const unsigned char *had_r, const unsigned char *need_c, const unsigned char *had_c,
                     size_t *wcol, size_t *rows) {
  lowp__geo_t *g = v->g;
  size_t j, s, nbrows;
  fill_t f;
  f.v = v;
  f.seed = seed;
  f.ehi = ehi;
  f.need_r = need_r;
  f.need_c = need_c;
  f.rows = rows;
  f.wcol = wcol;
  f.nb = nbat * lowp__per_b(g);
  for (s = 0, f.nra = 0; s < nbat * g->R; s++)
    if (need_r[s % g->R] || had_r[s % g->R]) rows[f.nra++] = s;
  for (j = 0, f.nwc = 0; j < g->C; j++) /* the columns of B written (every one for dot and gemv) */
    if (g->op != LOWP_OP_GEMM || need_c[j] || had_c[j]) wcol[f.nwc++] = j;
  nbrows = (f.nb + g->C - 1) / g->C;
  lowp_spread(f.nra + (nbrows + FILL_B - 1) / FILL_B, (f.nra * g->K + f.nb) > PAR_MIN ? 0 : 1, fill_piece, &f);
  return f.nwc;
}

/* Through an output narrower than binary32 (a bf16 result), random sums
   rarely tell arithmetics apart: exact and rounded products, or an fp32
   and an fp64 accumulator, give the same bf16 value but for about one
   output in 5,000 (OpenBLAS's sgemm rounded to bf16: the first candidate,
   FMA, fitted the first outputs and failed 1 to 3 of 10,000 later). Every
   other batch entry of a validation call is therefore made of cancelling
   pairs: term l + 1 is term l's negation, its A value moved by a few of its
   ulps (B's row l + 1 is row l negated, every column alike), so each pair
   sums to a small difference whose size the products' roundings and the
   order change by a large fraction: the output's leading bits show them.
   The values stay values of the inputs' formats. */
static void val_cancel(val_t *v, size_t nbat, uint64_t seed, const unsigned char *need_r, const size_t *wcol,
                       size_t nwc) {
  lowp__geo_t *g = v->g;
  const lowp_format_t *fa = &g->p.in[0];
  const int p = fa->precision, sh = p - 2 < 5 ? (p - 2 > 0 ? p - 2 : 0) : 5;
  size_t bt, i, l, k;
  for (bt = 1; bt < nbat; bt += 2) {
    if (g->op != LOWP_OP_SUM)
      for (l = 1; l < g->K; l += 2)
        for (k = 0; k < (g->op == LOWP_OP_GEMM ? nwc : 1); k++) {
          size_t j = g->op == LOWP_OP_GEMM ? wcol[k] : 0;
          *lowp__slot_b(g, v->b, bt * g->R, l, j) = -*lowp__slot_b(g, v->b, bt * g->R, l - 1, j);
        }
    for (i = 0; i < g->R; i++) {
      double *ar = lowp__slot_a(g, v->a, bt * g->R + i);
      if (!need_r[i]) continue;
      for (l = 1; l < g->K; l += 2) {
        uint64_t r = lowp_rng_u64(seed, (bt * g->R + i) * g->K + l, 53);
        double m = (double)(1 + (r % ((uint64_t)1 << sh))), y;
        /* x (1 + m 2^(1-p)): m of x's ulps from x (binade edges aside), then on fa's grid */
        (void)lowp_round_f64(&y, ar[l - 1] * (1.0 + ldexp(m, 1 - p)), fa, NULL, LOWP_RND_NE);
        ar[l] = g->op == LOWP_OP_SUM ? -y : y;
      }
    }
  }
}

/* 1 while a class with a chosen arithmetic has fewer than want outputs compared (or at the first call) */
static int val_more(const lowp_reveal_t *r, const long *chosen, size_t want, size_t call) {
  size_t c;
  if (call == 0) return 1;
  for (c = 0; c < r->n_classes; c++)
    if (chosen[c] >= 0 && r->classes[c].validated + r->classes[c].mismatched < want) return 1;
  return 0;
}

/* one val_outputs: outputs in chunks of VAL_CHUNK, each worker its own node values */
typedef struct {
  val_t *v;
  const lowp_tree_t *t;
  const size_t *outs;
  size_t n;
  double **tmp;
  size_t *ok, *bad; /* per chunk */
} cmp_t;

#define VAL_CHUNK 8

/* the chunk's outputs evaluated side by side (lowp_tree_eval_many: the bits of twin_one) */
static void cmp_piece(void *ctx, size_t i, int w) {
  const cmp_t *m = ctx;
  const val_t *v = m->v;
  const lowp__geo_t *g = v->g;
  const double *pa[VAL_CHUNK], *pb[VAL_CHUNK];
  double y[VAL_CHUNK];
  size_t q, c, ok = 0, bad = 0, n = 0, lo = i * VAL_CHUNK;
  for (q = lo; q < lo + VAL_CHUNK && q < m->n; q++, n++) {
    size_t s = m->outs[q] / g->C, j = m->outs[q] % g->C;
    pa[n] = lowp__slot_a(g, (double *)v->ta, s);
    pb[n] = g->op == LOWP_OP_SUM ? NULL : lowp__slot_b(g, (double *)v->tb, s, 0, j);
  }
  if (lowp_tree_eval_many(y, n, m->t, pa, 1, g->op == LOWP_OP_SUM ? NULL : pb, g->op == LOWP_OP_GEMM ? g->C : 1,
                          m->tmp[w]) != LOWP_OK)
    bad = n;
  else
    for (c = 0; c < n; c++) {
      if (same(y[c], v->out[m->outs[lo + c]])) ok++;
      else bad++;
    }
  m->ok[i] = ok;
  m->bad[i] = bad;
}

/* compare the twin t with the subject on outputs outs[0 .. n) (flat indices s C + j): *ok and *bad
   count them; each output on its own (lowp_spread's threads), so any number of threads gives the same
   counts */
static int val_outputs(size_t *ok, size_t *bad, val_t *v, const lowp_tree_t *t, const size_t *outs, size_t n,
                       size_t maxnodes) {
  size_t nc = (n + VAL_CHUNK - 1) / VAL_CHUNK, i;
  int nw = n * t->n > PAR_MIN ? lowp_spread_width(nc, 0) : 1, w, st = LOWP_OK;
  cmp_t m;
  m.v = v;
  m.t = t;
  m.outs = outs;
  m.n = n;
  m.tmp = calloc((size_t)nw, sizeof *m.tmp);
  m.ok = malloc((nc + 1) * sizeof *m.ok);
  m.bad = malloc((nc + 1) * sizeof *m.bad);
  for (w = 0; w < nw && m.tmp; w++)
    if (!(m.tmp[w] = malloc(((VAL_CHUNK + 2) * maxnodes + 8) * sizeof **m.tmp))) break;
  if (!m.tmp || !m.ok || !m.bad || w < nw) st = LOWP_ENOMEM;
  if (st == LOWP_OK) {
    lowp_spread(nc, nw, cmp_piece, &m);
    for (i = 0; i < nc; i++) {
      *ok += m.ok[i];
      *bad += m.bad[i];
    }
  }
  for (w = 0; w < nw && m.tmp; w++) free(m.tmp[w]);
  free(m.tmp); free(m.ok); free(m.bad);
  return st;
}

/* The class's arithmetic failed output (s, j): the next candidate that
   fitted the first call's outputs (fits[*next..]) and fits this one too
   replaces it (its count starts at this output: validated = 1, mismatched =
   0; the refuted ones are not tried again); none: the class keeps its
   arithmetic (the caller counts the mismatch). Later outputs then validate
   the new one, so what has a tree still reproduced every output compared
   since its arithmetic was chosen. */
static int refit(int *did, val_t *v, lowp_reveal_class_t *cl, const lowp_tree_t *shape, const cand_t *cands,
                 const size_t *fits, size_t nfit, size_t *next, long *chosen, size_t s, size_t j) {
  const lowp_format_t *out = &v->g->p.out;
  *did = 0;
  while (*next < nfit) {
    lowp_tree_t t;
    double y;
    size_t q = fits[(*next)++];
    int st = build(&t, shape, &cands[q], out);
    if (st) return st;
    if (twin_one(&y, v, &t, s, j) == LOWP_OK && same(y, v->out[s * v->g->C + j])) {
      lowp_tree_free(&cl->tree);
      cl->tree = t;
      *chosen = (long)q;
      cl->validated = 1;
      cl->mismatched = 0;
      cl->refuted++;
      *did = 1;
      describe(cl->arith, sizeof cl->arith, &cands[q], out);
      return LOWP_OK;
    }
    lowp_tree_free(&t);
  }
  return LOWP_OK;
}

/* The class's arithmetic from the first validation call: every candidate
   that fits its first 256 finite outputs (fits[0 .. *nfit), in order of
   preference; the first is *chosen, its tree the class's; -1: none) */
static int choose(long *chosen, size_t *fits, size_t *nfit, val_t *v, lowp_reveal_class_t *cl,
                  const lowp_tree_t *shape, const cand_t *cands, size_t ncand, size_t nbat) {
  const lowp__geo_t *g = v->g;
  size_t q, s, k, j, seen;
  int st = LOWP_OK;
  *chosen = -1;
  *nfit = 0;
  for (q = 0; q < ncand && st == LOWP_OK; q++) {
    lowp_tree_t t;
    int ok = 1;
    if ((st = build(&t, shape, &cands[q], &g->p.out))) break;
    for (s = 0, seen = 0; s < nbat * g->R && ok && seen < 256; s++)
      for (k = 0; k < cl->n_pos && ok && seen < 256; k++) {
        double y;
        if (cl->pos[k] / g->C != s % g->R) continue;
        j = cl->pos[k] % g->C;
        if (twin_one(&y, v, &t, s, j) != LOWP_OK || !same(y, v->out[s * g->C + j])) ok = 0;
        seen += isfinite(v->out[s * g->C + j]) != 0; /* inf and NaN fit too many candidates */
      }
    if (ok) {
      fits[(*nfit)++] = q;
      if (*chosen < 0) { *chosen = (long)q; cl->tree = t; continue; }
    }
    lowp_tree_free(&t);
  }
  cl->candidates = *nfit;
  return st;
}

/* The outputs outs[0 .. n) of one call, compared (val_outputs) with a
   mismatch: from the first output the class's arithmetic fails, the next
   fitted candidate that fits it takes over (refit) and the outputs after it
   are compared with that one, again and again while candidates remain;
   *switched set when one took over. */
static int refit_from(int *switched, val_t *v, lowp_reveal_class_t *cl, const lowp_tree_t *shape,
                      const cand_t *cands, const size_t *fits, size_t nfit, size_t *next, long *chosen,
                      const size_t *outs, size_t n, size_t maxnodes) {
  size_t from = 0, q;
  int st = LOWP_OK, did;
  while (st == LOWP_OK && *next < nfit) {
    double y;
    for (q = from; q < n; q++) /* the first output the arithmetic fails */
      if (twin_one(&y, v, &cl->tree, outs[q] / v->g->C, outs[q] % v->g->C) != LOWP_OK ||
          !same(y, v->out[outs[q]]))
        break;
    if (q == n) break;
    if ((st = refit(&did, v, cl, shape, cands, fits, nfit, next, chosen, outs[q] / v->g->C, outs[q] % v->g->C)) ||
        !did)
      break; /* none fits it: the mismatches stand */
    *switched = 1;
    from = q + 1;
    st = val_outputs(&cl->validated, &cl->mismatched, v, &cl->tree, outs + from, n - from, maxnodes);
    if (!cl->mismatched) break;
  }
  return st;
}

/* ----------------------------------------------------------- the driver */

int lowp__reveal_arith(lowp_reveal_t *r, lowp__geo_t *g, lowp_tree_t *shapes,
                       const lowp_reveal_opts_t *o) {
  size_t want = o->validate ? o->validate : 10000, c, minpos = (size_t)-1, per, batch, call, s, nwc;
  size_t *cls_of = malloc((g->R * g->C + 1) * sizeof *cls_of), maxnodes = 1, ncalls, hot;
  val_t v;
  int st = LOWP_OK, ehi;
  cand_t **cands = calloc(r->n_classes + 1, sizeof *cands);
  size_t *ncand = calloc(r->n_classes + 1, sizeof *ncand);
  long *chosen = malloc((r->n_classes + 1) * sizeof *chosen);
  size_t **fits = calloc(r->n_classes + 1, sizeof *fits), *nfit = calloc(r->n_classes + 1, sizeof *nfit);
  size_t *nextfit = calloc(r->n_classes + 1, sizeof *nextfit);
  int switched = 0;
  unsigned char *need_r = malloc(g->R + 1), *need_c = malloc(g->C + 1);
  unsigned char *had_r = malloc(g->R + 1), *had_c = malloc(g->C + 1); /* random in the previous call */
  size_t *wcol = malloc((g->C + 1) * sizeof *wcol), *outs = NULL, *rows = NULL;
  unsigned char *active = malloc(r->n_classes + 1); /* classes served by this call */
  memset(&v, 0, sizeof v);
  if (!cls_of || !cands || !ncand || !chosen || !need_r || !need_c || !had_r || !had_c || !wcol || !active ||
      !fits || !nfit || !nextfit) {
    st = LOWP_ENOMEM;
    goto done;
  }
  ehi = value_ehi(r, g);
  memset(had_r, 1, g->R); /* the first call writes every element */
  memset(had_c, 1, g->C);
  for (c = 0; c < r->n_classes; c++) {
    size_t k;
    chosen[c] = -1;
    for (k = 0; k < r->classes[c].n_pos; k++) cls_of[r->classes[c].pos[k]] = c;
    if (r->classes[c].n_pos < minpos) minpos = r->classes[c].n_pos;
    if (shapes[c].n_nodes + 2 > maxnodes) maxnodes = shapes[c].n_nodes + 2;
  }
  /* by default at most 2^25 terms per class and 8 calls; a number asked for
     (o->validate) is met for every class, in as many calls as it takes (a
     class of one position gets one output per batch entry) */
  per = lowp__per_a(g) + lowp__per_b(g);
  if (!o->validate && want * g->K > ((size_t)1 << 25)) want = ((size_t)1 << 25) / g->K;
  if (want < 64) want = 64;
  batch = (want + minpos - 1) / minpos;
  ncalls = 1;
  if (batch * per > g->max_elems) {
    size_t cap = g->max_elems / per ? g->max_elems / per : 1;
    ncalls = (batch + cap - 1) / cap;
    if (ncalls > 8 && !o->validate) ncalls = 8;
    batch = cap;
  }
  hot = per ? ((size_t)1 << 21) / per : batch;
  if (hot < 1) hot = 1;
  v.g = g;
  v.r = r;
  v.batch = batch;
  v.a = malloc((batch * lowp__per_a(g) + 1) * sizeof *v.a);
  v.b = malloc((batch * lowp__per_b(g) + 1) * sizeof *v.b);
  v.ca = malloc((batch * lowp__per_a(g) + 1) * sizeof *v.a);
  v.cb = malloc((batch * lowp__per_b(g) + 1) * sizeof *v.b);
  v.out = malloc((batch * g->R * g->C + 1) * sizeof *v.out);
  v.tmp = malloc((2 * maxnodes + 8) * sizeof *v.tmp);
  outs = malloc((batch * g->R * g->C + 1) * sizeof *outs); /* outputs of one class to compare */
  rows = malloc((batch * g->R + 1) * sizeof *rows);         /* rows of A to fill */
  if (!v.a || !v.b || !v.ca || !v.cb || !v.out || !v.tmp || !outs || !rows) { st = LOWP_ENOMEM; goto done; }
  for (c = 0; c < r->n_classes; c++)
    if (shapes[c].n == g->K && !r->classes[c].note[0] &&
        (!(cands[c] = candidates(&ncand[c], &shapes[c], r, g)) ||
         !(fits[c] = malloc((ncand[c] + 1) * sizeof *fits[c])))) { st = LOWP_ENOMEM; goto done; }
  /* a class whose arithmetic a later output refutes takes the next one that fitted (switched): its
     count starts again, and the calls go on until it has its number (at most 64 more) */
  for (call = 0; st == LOWP_OK && (o->validate ? val_more(r, chosen, want, call)
                                               : call < ncalls || (switched && call < ncalls + 64 &&
                                                                   val_more(r, chosen, want, call)));
       call++) {
    /* a number asked for: after the first call, entries of 2^21 elements in all (16 MB), which stay in
       cache from call to call (the corner class of a GEMM gets one output per entry: at K = 8192 the
       2^25 elements of a full call, 256 MB, were read from memory by every call) */
    size_t nbat = call && o->validate && hot < batch ? hot : batch;
    size_t na = nbat * lowp__per_a(g), nb = nbat * lowp__per_b(g);
    uint64_t seed = o->seed + 0x632be59bd9b4e019u * (call + 1);
    double t0 = lowp_wall_now();
    /* random where an output still to be compared reads it, zero elsewhere
       (an edge class of one position needs one row of A and one column of B) */
    memset(need_r, 0, g->R);
    memset(need_c, 0, g->C);
    for (c = 0; c < r->n_classes; c++) {
      size_t k;
      active[c] = !(call > 0 && (chosen[c] < 0 || r->classes[c].validated + r->classes[c].mismatched >= want));
      if (!active[c]) continue;
      for (k = 0; k < r->classes[c].n_pos; k++) {
        need_r[r->classes[c].pos[k] / g->C] = 1;
        need_c[r->classes[c].pos[k] % g->C] = 1;
      }
    }
    nwc = val_fill(&v, nbat, seed, ehi, need_r, had_r, need_c, had_c, wcol, rows);
    if (g->p.out.precision < 24) val_cancel(&v, nbat, seed, need_r, wcol, nwc);
    memcpy(had_r, need_r, g->R);
    memcpy(had_c, need_c, g->C);
    v.ta = r->conv[0].converted ? v.ca : v.a;
    v.tb = r->conv[1].converted ? v.cb : v.b;
    if (r->conv[0].converted) lowp__reveal_convert(v.ca, v.a, na, &r->conv[0]);
    if (nb && r->conv[1].converted) lowp__reveal_convert(v.cb, v.b, nb, &r->conv[1]);
    if ((st = lowp__reveal_call(g, nbat, v.a, v.b, v.out))) break;
    r->calls_validate++;
    for (c = 0; c < r->n_classes && st == LOWP_OK; c++) {
      lowp_reveal_class_t *cl = &r->classes[c];
      size_t k, bad0;
      if (!cands[c]) continue;
      if (call == 0) { /* choose: the first candidate that fits the first 256 finite outputs */
        if ((st = choose(&chosen[c], fits[c], &nfit[c], &v, cl, &shapes[c], cands[c], ncand[c], nbat))) break;
        nextfit[c] = 1;
        if (chosen[c] < 0) {
          snprintf(cl->note, sizeof cl->note,
                   "the order was revealed, but none of %zu candidate arithmetics reproduces the outputs",
                   ncand[c]);
          continue;
        }
        describe(cl->arith, sizeof cl->arith, &cands[c][chosen[c]], &g->p.out);
      }
      if (chosen[c] < 0) continue;
      for (s = 0, k = 0; s < nbat * g->R * g->C && cl->validated + cl->mismatched + k < want; s++)
        if (cls_of[(s / g->C) % g->R * g->C + s % g->C] == c) outs[k++] = s;
      bad0 = cl->mismatched;
      if ((st = val_outputs(&cl->validated, &cl->mismatched, &v, &cl->tree, outs, k, maxnodes))) break;
      if (cl->mismatched > bad0 && nextfit[c] < nfit[c])
        st = refit_from(&switched, &v, cl, &shapes[c], cands[c], fits[c], nfit[c], &nextfit[c], &chosen[c], outs, k,
                        maxnodes);
    }
    for (c = 0, t0 = lowp_wall_now() - t0; c < r->n_classes; c++)
      if (active[c]) r->classes[c].seconds += t0;
  }
  for (c = 0; c < r->n_classes && st == LOWP_OK; c++) {
    lowp_reveal_class_t *cl = &r->classes[c];
    cl->has_tree = chosen[c] >= 0 && cl->mismatched == 0 && cl->validated > 0;
    if (chosen[c] >= 0 && cl->mismatched)
      snprintf(cl->note, sizeof cl->note, "the twin differs from the subject on %zu of %zu outputs",
               cl->mismatched, cl->mismatched + cl->validated);
    if (!cl->has_tree) lowp_tree_free(&cl->tree);
  }
done:
  if (cands)
    for (c = 0; c < r->n_classes; c++) free(cands[c]);
  if (fits)
    for (c = 0; c < r->n_classes; c++) free(fits[c]);
  free(fits); free(nfit); free(nextfit);
  free(cands); free(ncand); free(chosen); free(cls_of); free(need_r); free(need_c); free(had_r); free(had_c); free(wcol); free(outs); free(rows); free(active);
  free(v.a); free(v.b); free(v.ca); free(v.cb); free(v.out); free(v.tmp);
  return st;
}

int lowp_reveal_twin(double *out, const lowp_reveal_t *r, const double *const *in,
                     const lowp_problem_t *p) {
  lowp__geo_t g;
  val_t v;
  size_t *cls_of, c, k, s, j, maxn = 1, na, nb;
  int st = LOWP_OK;
  memset(&g, 0, sizeof g);
  g.p = *p;
  g.op = p->op->id;
  g.K = g.op == LOWP_OP_SUM ? p->dims.n : p->dims.k;
  g.R = (g.op == LOWP_OP_DOT) ? 1 : p->dims.m;
  g.C = g.op == LOWP_OP_GEMM ? p->dims.n : 1;
  if (g.K != r->K || g.R != r->rows || g.C != r->cols) return LOWP_EINVAL;
  for (c = 0; c < r->n_classes; c++) {
    if (!r->classes[c].has_tree) return LOWP_EINVAL;
    if (r->classes[c].tree.n_nodes + 2 > maxn) maxn = r->classes[c].tree.n_nodes + 2;
  }
  memset(&v, 0, sizeof v);
  v.g = &g;
  na = p->dims.batch * lowp__per_a(&g);
  nb = p->dims.batch * lowp__per_b(&g);
  cls_of = malloc((g.R * g.C + 1) * sizeof *cls_of);
  v.ca = malloc((na + 1) * sizeof *v.ca);
  v.cb = malloc((nb + 1) * sizeof *v.cb);
  v.tmp = malloc((maxn + 8) * sizeof *v.tmp);
  if (!cls_of || !v.ca || !v.cb || !v.tmp) st = LOWP_ENOMEM;
  /* every output in one class (lowp_reveal_from_json checks a file's): an output in none is refused */
  for (k = 0; k < g.R * g.C && st == LOWP_OK; k++) cls_of[k] = r->n_classes;
  for (c = 0; c < r->n_classes && st == LOWP_OK; c++)
    for (k = 0; k < r->classes[c].n_pos; k++)
      if (r->classes[c].pos[k] < g.R * g.C) cls_of[r->classes[c].pos[k]] = c;
  for (k = 0; k < g.R * g.C && st == LOWP_OK; k++)
    if (cls_of[k] >= r->n_classes) st = LOWP_EINVAL;
  if (st == LOWP_OK) {
    lowp__reveal_convert(v.ca, in[0], na, &r->conv[0]);
    if (nb) lowp__reveal_convert(v.cb, in[1], nb, &r->conv[1]);
    v.ta = v.ca;
    v.tb = v.cb;
  }
  for (s = 0; s < p->dims.batch * g.R && st == LOWP_OK; s++)
    for (j = 0; j < g.C && st == LOWP_OK; j++)
      st = twin_one(&out[s * g.C + j], &v, &r->classes[cls_of[(s % g.R) * g.C + j]].tree, s, j);
  free(cls_of); free(v.ca); free(v.cb); free(v.tmp);
  return st;
}
