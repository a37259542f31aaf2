/* treveal_diff -- lib/check/reveal_diff.c: the first differing node of a twin's tree, found in a kernel that changes one node's rounding */

/*
 * The kernel here is a tree (model/tree.h) evaluated on each output: the
 * twin's tree T (pairwise, fp32, FMA leaves) except at one planted node v,
 * rounded toward zero instead of to nearest. Its children are computed as
 * the twin computes them, so where an output differs, the first differing
 * node is v or, when v's difference was absorbed on the way up, the
 * ancestor where the difference appears again from agreeing inputs. Sums
 * (sum: the planted node over x), dots and GEMMs (position and batch entry
 * mapping: rows, columns and a second batch entry) are tested; a kernel
 * equal to its twin is refused (no differing node).
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/reveal.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

typedef struct {
  const lowp_tree_t *t; /* the kernel's tree */
  size_t calls;
} kern_t;

static int kern_run(const lowp_subject_t *s, double *const *out, const double *const *in,
                    const lowp_problem_t *p, char *err, size_t errlen) {
  kern_t *k = s->ctx;
  const lowp_dims_t *d = &p->dims;
  size_t bt, i, j, l, K = p->op->id == LOWP_OP_SUM ? d->n : d->k;
  size_t R = p->op->id == LOWP_OP_DOT ? 1 : d->m, C = p->op->id == LOWP_OP_GEMM ? d->n : 1;
  double *col = malloc((K + 1) * sizeof *col), *tmp = malloc((k->t->n_nodes + 8) * sizeof *tmp);
  int st = LOWP_OK;
  (void)err, (void)errlen;
  k->calls++;
  for (bt = 0; bt < d->batch && st == LOWP_OK; bt++)
    for (i = 0; i < R && st == LOWP_OK; i++)
      for (j = 0; j < C && st == LOWP_OK; j++) {
        const double *a = in[0] + bt * R * K + i * K;
        double *y = &out[0][bt * R * C + i * C + j];
        if (p->op->id == LOWP_OP_SUM) { st = lowp_tree_eval(y, k->t, a, 1, NULL, 1, tmp); continue; }
        for (l = 0; l < K; l++)
          col[l] = p->op->id == LOWP_OP_GEMM ? in[1][bt * K * C + l * C + j] : in[1][bt * K + l];
        st = lowp_tree_eval(y, k->t, a, 1, col, 1, tmp);
      }
  free(col);
  free(tmp);
  return st;
}

/* an fp32 value in (-1, 1) from Philox */
static double unit(uint64_t seed, uint64_t i, uint32_t stream) {
  return (double)(float)((double)(lowp_rng_u64(seed, i, stream) >> 11) / 9007199254740992.0 * 2 - 1);
}

/* is node a (an id) v or above v in t? */
static int above(const lowp_tree_t *t, size_t a, size_t v) {
  size_t k, id;
  if (a == v) return 1;
  for (id = v + 1; id < t->n + t->n_nodes; id++) { /* parents come after children */
    const lowp_tree_node_t *nd = &t->nodes[id - t->n];
    for (k = 0; k < nd->count; k++)
      if (t->kids[nd->first + k] == v) return above(t, a, id);
  }
  return 0;
}

/* one operation: T pairwise, the kernel T with node v rtz; outputs that
   differ get their first differing node */
static void one_op(const char *opname, size_t batch, size_t m, size_t n, size_t K, size_t vi) {
  lowp_problem_t p;
  lowp_accum_t acc;
  lowp_tree_t T, Tk;
  lowp_tree_arith_t rtz;
  lowp_reveal_t tw;
  lowp_subject_t s;
  kern_t k;
  char err[300];
  size_t na, nb, no, i, v, found = 0, exact_v = 0, R, C, *pos;
  double *a, *b, *y, *yt;
  const double *in[2];
  int st, good = 1;
  memset(&acc, 0, sizeof acc);
  lowp_problem_init(&p, lowp_op_by_name(opname));
  p.dims.batch = batch, p.dims.m = m, p.dims.n = n, p.dims.k = K;
  if (p.op->id == LOWP_OP_SUM) p.dims.n = K;
  p.out = LOWP_FMT_FP32;
  lowp_test_check(lowp_accum_parse(&acc, "pairwise", err, sizeof err) == LOWP_OK, "pairwise");
  acc.acc = LOWP_FMT_FP32;
  acc.rnd = LOWP_RND_NE;
  acc.fma = 1;
  lowp_test_check(lowp_tree_from_accum(&T, K, &acc, p.op->id != LOWP_OP_SUM) == LOWP_OK, "tree");
  lowp_tree_copy(&Tk, &T);
  rtz = Tk.arith[0];
  rtz.rnd = LOWP_RND_TZ;
  v = T.n + vi; /* the planted node */
  Tk.nodes[vi].arith = lowp_tree_arith_add(&Tk, &rtz);
  R = p.op->id == LOWP_OP_DOT ? 1 : m;
  C = p.op->id == LOWP_OP_GEMM ? n : 1;
  memset(&tw, 0, sizeof tw);
  tw.deterministic = 1;
  tw.K = K, tw.rows = R, tw.cols = C, tw.n_classes = 1;
  tw.classes = calloc(1, sizeof *tw.classes);
  pos = malloc(R * C * sizeof *pos);
  for (i = 0; i < R * C; i++) pos[i] = i;
  tw.classes[0].pos = pos, tw.classes[0].n_pos = R * C, tw.classes[0].has_tree = 1;
  lowp_tree_copy(&tw.classes[0].tree, &T);
  memset(&s, 0, sizeof s);
  memset(&k, 0, sizeof k);
  k.t = &Tk;
  snprintf(s.name, sizeof s.name, "planted rtz node");
  s.kind = "test";
  s.run = kern_run;
  s.ctx = &k;
  na = batch * R * K, nb = p.op->id == LOWP_OP_SUM ? 0 : p.op->id == LOWP_OP_GEMM ? batch * K * C : batch * K;
  no = batch * R * C;
  a = malloc((na + 1) * sizeof *a), b = malloc((nb + 1) * sizeof *b);
  y = malloc(no * sizeof *y), yt = malloc(no * sizeof *yt);
  for (i = 0; i < na; i++) a[i] = unit(11, i, 1);
  for (i = 0; i < nb; i++) b[i] = unit(11, i, 2);
  in[0] = a, in[1] = b;
  st = kern_run(&s, &y, in, &p, err, sizeof err);
  st |= lowp_reveal_twin(yt, &tw, in, &p);
  lowp_test_check(st == LOWP_OK, "%s: kernel and twin run", opname);
  for (i = 0; i < no && st == LOWP_OK; i++) {
    lowp_reveal_diff_t d;
    if (!memcmp(&y[i], &yt[i], sizeof y[i])) continue;
    st = lowp_reveal_diff(&d, &tw, &s, &p, in, i, err, sizeof err);
    if (st) { good = 0; break; }
    found++;
    exact_v += d.node == v;
    /* v or above it; the node's own sums differ; v: its inputs are v's */
    if (!above(&T, d.node, v) || !(d.expected != d.got)) good = 0;
    if (d.node == v && d.kids != T.nodes[vi].count) good = 0;
    if (found == 1) {
      char line[900];
      lowp_reveal_diff_str(line, sizeof line, &d);
      printf("%s %zu x %zu x %zu (batch %zu), output %zu: %s\n", opname, m, n, K, batch, i, line);
    }
  }
  lowp_test_check(st == LOWP_OK && good && found > 0 && exact_v * 10 >= found * 8,
                  "%s: %zu differing outputs, %zu traced to the planted node %zu, the rest above it (%s)", opname,
                  found, exact_v, v, st ? err : "");
  /* the twin of the kernel itself: nothing differs */
  lowp_tree_free(&tw.classes[0].tree);
  lowp_tree_copy(&tw.classes[0].tree, &Tk);
  {
    lowp_reveal_diff_t d;
    st = lowp_reveal_diff(&d, &tw, &s, &p, in, 0, err, sizeof err);
    lowp_test_check(st == LOWP_EINVAL && strstr(err, "agrees"), "%s: an output equal to its twin: %s", opname, err);
  }
  lowp_tree_free(&tw.classes[0].tree);
  free(tw.classes);
  free(pos);
  lowp_tree_free(&T);
  lowp_tree_free(&Tk);
  free(a); free(b); free(y); free(yt);
}

int main(void) {
  lowp_test_start("treveal_diff");
  one_op("sum", 1, 40, 1, 64, 20);
  one_op("dot", 30, 1, 1, 100, 60);
  one_op("gemm", 2, 3, 4, 256, 200);
  return lowp_test_end();
}
