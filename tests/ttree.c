/* ttree -- summation trees (lib/model/tree.h): built from every order, evaluated bit for bit as the orders are, bounded, round-tripped through JSON */

/*
 * Oracles: the orders themselves (model/accum.c's lowp_accum_sum and
 * lowp_accum_dot, cpu/gemm_acc.c's lowp_dot_acc_ref, model/tc_dot.c's
 * lowp_tc_dot) and the registry kernels built on them (gemm_acc, whose
 * gemm shapes run the vectorised kernels of cpu/reduce_fast*.c), for every
 * n <= 512 and n = 4096; the exact accumulator (lib/exact/acc.h) for the
 * bound.
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/subject.h"
#include "cpu/gemm_acc.h"
#include "exact/acc.h"
#include "measure/measure.h"
#include "model/tree.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

static uint64_t seed;

/* n values of f with random signs and exponents over 2^-6..2^6 */
static void fill(double *x, size_t n, const lowp_format_t *f, uint32_t stream) {
  size_t i;
  for (i = 0; i < n; i++) {
    uint64_t r = lowp_rng_u64(seed, i, stream);
    double v = ldexp((double)(r >> 11) / 9007199254740992.0 + 0.5, (int)((r >> 3) % 13) - 6);
    lowp_round_f64(&x[i], (r & 1) ? -v : v, f, NULL, LOWP_RND_NE);
  }
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* lowp_tree_eval_many against lowp_tree_eval, output by output: four outputs of binary32 terms
   (offsets into x, the side-by-side path where the tree adds in binary32 or binary64), then five
   with one of 26-bit terms that binary32 cannot hold (every output one by one) */
static double *g_x, *g_d;
static void check_many(const lowp_tree_t *t, int dot, const char *what, size_t n) {
  const double *pa[5], *pb[5];
  double y[5], want, *tmp = malloc((5 * t->n_nodes + 8) * sizeof *tmp);
  size_t o, m;
  for (o = 0; o < 5; o++) {
    pa[o] = o == 4 ? g_d : g_x + 3 * o;
    pb[o] = g_x + 17 + 5 * o;
  }
  for (m = 4; m <= 5 && tmp; m++) {
    int st = lowp_tree_eval_many(y, m, t, pa, 1, dot ? pb : NULL, 1, tmp);
    lowp_test_check(st == LOWP_OK, "%s n=%zu: eval_many over %zu outputs: %d", what, n, m, st);
    for (o = 0; o < m && st == LOWP_OK; o++) {
      lowp_tree_eval(&want, t, pa[o], 1, dot ? pb[o] : NULL, 1, NULL);
      lowp_test_check(same_bits(y[o], want), "%s %s n=%zu output %zu of %zu: many %a, one %a", what,
                      dot ? "dot" : "sum", n, o, m, y[o], want);
    }
  }
  free(tmp);
}

/* the tree of an accum model, JSON round trip included, against the order */
static void check_accum(const char *spec, size_t n, const double *a, const double *b) {
  lowp_accum_t m;
  lowp_tree_t t, u;
  double want, got, got2;
  char err[200], *js = NULL;
  size_t where;
  int dot;
  if (lowp_accum_parse(&m, spec, err, sizeof err)) {
    lowp_test_check(0, "%s: %s", spec, err);
    return;
  }
  for (dot = 0; dot < 2; dot++) {
    if (lowp_tree_from_accum(&t, n, &m, dot) != LOWP_OK) {
      lowp_test_check(0, "%s n=%zu: no tree", spec, n);
      return;
    }
    if (dot) lowp_accum_dot(&want, a, 1, b, 1, n, &m);
    else lowp_accum_sum(&want, a, n, &m);
    lowp_tree_eval(&got, &t, a, 1, dot ? b : NULL, 1, NULL);
    lowp_test_check(lowp_tree_validate(&t, err, sizeof err) == LOWP_OK, "%s n=%zu invalid", spec, n);
    lowp_test_check(same_bits(got, want), "%s %s n=%zu: tree %a, order %a", spec,
                    dot ? "dot" : "sum", n, got, want);
    if (n <= 40 || n % 37 == 0 || n == 4096) check_many(&t, dot, spec, n);
    if ((n % 37 == 0 || n == 4096) && lowp_tree_to_json(&js, &t) == LOWP_OK) {
      int ok = lowp_tree_from_json(&u, js, err, sizeof err) == LOWP_OK;
      lowp_test_check(ok, "%s n=%zu: json: %s", spec, n, err);
      if (ok) {
        lowp_tree_eval(&got2, &u, a, 1, dot ? b : NULL, 1, NULL);
        lowp_test_check(lowp_tree_same(&t, &u, 0, &where) && same_bits(got, got2),
                        "%s n=%zu: json round trip differs", spec, n);
        lowp_tree_free(&u);
      }
      free(js);
      js = NULL;
    }
    lowp_tree_free(&t);
  }
}

/* gemm_acc's FMA chain (prod NULL) and rounded products */
static void check_chain(size_t n, const double *a, const double *b, const lowp_format_t *prod,
                        const lowp_format_t *acc, lowp_rounding_t rnd) {
  lowp_gemm_acc_cfg_t g;
  lowp_tree_t t;
  double want, got;
  memset(&g, 0, sizeof g);
  g.prod = prod;
  g.prod_rnd = rnd;
  g.acc = acc;
  g.acc_rnd = rnd;
  g.order = LOWP_ORDER_RECURSIVE;
  lowp_dot_acc_ref(&want, a, 1, b, 1, n, 0.0, &g);
  lowp_tree_from_fma_chain(&t, n, prod, rnd, acc, rnd);
  lowp_tree_eval(&got, &t, a, 1, b, 1, NULL);
  lowp_test_check(same_bits(got, want), "chain prod=%s acc=%s n=%zu: tree %a, kernel %a",
                  prod ? prod->name : "exact", acc->name, n, got, want);
  if (n <= 40 || n % 37 == 0 || n == 4096) check_many(&t, 1, "chain", n);
  lowp_tree_free(&t);
}

static void check_tc(const char *spec, size_t k, const lowp_format_t *in, const lowp_format_t *out) {
  lowp_tc_model_t m;
  lowp_tree_t t;
  double *a = malloc(k * sizeof *a + 1), *b = malloc(k * sizeof *b + 1), want, got;
  char err[200];
  fill(a, k, in, 11);
  fill(b, k, in, 12);
  if (lowp_tc_model_get(&m, spec, in, out, err, sizeof err) != LOWP_OK) {
    lowp_test_check(0, "%s: %s", spec, err);
  } else if (lowp_tree_from_tc(&t, k, &m, in, out) != LOWP_OK) {
    lowp_test_check(0, "%s k=%zu: no tree", spec, k);
  } else {
    lowp_tc_dot(&want, a, 1, b, 1, k, 0.0, &m, in, out);
    lowp_tree_eval(&got, &t, a, 1, b, 1, NULL);
    lowp_test_check(same_bits(got, want), "tc %s %s k=%zu: tree %a, model %a", spec, in->name, k,
                    got, want);
    if (k % 37 == 0) check_many(&t, 1, spec, k);
    lowp_tree_free(&t);
  }
  free(a);
  free(b);
}

/* the registry kernel gemm_acc (m x 16 outputs: the vectorised orders of
   cpu/reduce_fast*.c serve these shapes) against the tree, output by output */
static void check_kernel(const char *params, size_t k) {
  lowp_subject_t s;
  lowp_problem_t p;
  lowp_accum_t m;
  lowp_tree_t t;
  char err[300];
  size_t rows = 3, cols = 16, i, j, bad = 0;
  double *A = malloc(rows * k * sizeof *A + 8), *B = malloc(k * cols * sizeof *B + 8);
  double *C = malloc(rows * cols * sizeof *C), *bcol = malloc(k * sizeof *bcol + 8), y;
  const double *in[2];
  double *out[1];
  const char *order = strstr(params, "order=");
  memset(&p, 0, sizeof p);
  p.op = lowp_op_by_name("gemm");
  p.dims.batch = 1; p.dims.m = rows; p.dims.n = cols; p.dims.k = k;
  p.in[0] = LOWP_FMT_FP16; p.in[1] = LOWP_FMT_FP16; p.out = LOWP_FMT_FP32;
  fill(A, rows * k, &LOWP_FMT_FP16, 21);
  fill(B, k * cols, &LOWP_FMT_FP16, 22);
  in[0] = A; in[1] = B; out[0] = C;
  if (lowp_kernel_subject_open(&s, "gemm_acc", params, err, sizeof err) != LOWP_OK ||
      s.run(&s, out, in, &p, err, sizeof err) != LOWP_OK) {
    lowp_test_check(0, "gemm_acc[%s] k=%zu: %s", params, k, err);
    goto done;
  }
  lowp_accum_parse(&m, order ? order + 6 : "recursive", err, sizeof err);
  m.acc = s.accum.acc;
  m.rnd = s.accum.rnd;
  m.fma = s.accum.fma;
  m.order = s.accum.order;
  m.block = s.accum.block;
  lowp_tree_from_accum(&t, k, &m, 1);
  for (i = 0; i < rows; i++)
    for (j = 0; j < cols; j++) {
      size_t l;
      for (l = 0; l < k; l++) bcol[l] = B[l * cols + j];
      lowp_tree_eval(&y, &t, A + i * k, 1, bcol, 1, NULL);
      bad += !same_bits(y, C[i * cols + j]);
    }
  lowp_test_check(bad == 0, "gemm_acc[%s] k=%zu: %zu of %zu outputs differ from the tree", params,
                  k, bad, rows * cols);
  lowp_tree_free(&t);
  lowp_subject_close(&s);
done:
  free(A); free(B); free(C); free(bcol);
}

/* the bound: coefficients are gamma of each leaf's depth, never above the
   named order's gamma, and the error of random data stays under it */
static void check_bound(const char *spec, size_t n, const double *x, double gamma_named) {
  lowp_accum_t m;
  lowp_tree_t t;
  lowp_acc_t ex;
  double *c = malloc(n * sizeof *c + 8), y, exact, bound = 0, worst = 0;
  size_t *d = malloc(n * sizeof *d + 8), i;
  char err[100];
  lowp_accum_parse(&m, spec, err, sizeof err);
  lowp_tree_from_accum(&t, n, &m, 0);
  lowp_test_check(lowp_tree_bound_coef(c, &t) == LOWP_OK && lowp_tree_depths(d, &t) == LOWP_OK,
                  "%s n=%zu: no bound", spec, n);
  lowp_acc_init(&ex);
  for (i = 0; i < n; i++) {
    double g = lowp_bound_gamma((double)d[i], lowp_format_u(&m.acc));
    if (c[i] > worst) worst = c[i];
    lowp_test_check(c[i] >= g * (1 - 1e-12) && c[i] <= g * (1 + 1e-12),
                    "%s n=%zu leaf %zu: coefficient %g, gamma_%zu %g", spec, n, i, c[i], d[i], g);
    bound += c[i] * fabs(x[i]);
    lowp_acc_add(&ex, x[i]);
  }
  lowp_acc_round(&exact, &ex, &LOWP_FMT_FP64, NULL, LOWP_RND_NE, 0);
  lowp_tree_eval(&y, &t, x, 1, NULL, 1, NULL);
  lowp_test_check(fabs(y - exact) <= bound, "%s n=%zu: error %g above the tree's bound %g", spec, n,
                  fabs(y - exact), bound);
  lowp_test_check(worst <= gamma_named * (1 + 1e-12), "%s n=%zu: worst coefficient %g above %g",
                  spec, n, worst, gamma_named);
  lowp_tree_free(&t);
  free(c);
  free(d);
}

int main(void) {
  static const char *const specs[] = {
      "recursive", "pairwise", "blocked:1", "blocked:3", "blocked:32", "splitk:1", "splitk:4",
      "splitk:7", "recursive,acc=fp16", "pairwise,acc=bf16,rnd=rtz", "blocked:8,acc=fp16,fma=1",
      "splitk:3,acc=fp32,rnd=rup,fma=1", "fma", "pairwise,acc=fp16,fma=1", "recursive,acc=fp64"};
  size_t ns = sizeof specs / sizeof specs[0], n, i, N = 4096;
  double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *x = malloc((N + 64) * sizeof *x);
  lowp_tree_t t;
  lowp_accum_t km;
  char err[100];
  lowp_test_start("ttree");
  seed = lowp_test_seed();
  fill(a, N, &LOWP_FMT_FP16, 1);
  fill(b, N, &LOWP_FMT_FP16, 2);
  fill(x, N + 64, &LOWP_FMT_FP32, 3);
  g_x = x;
  g_d = malloc(N * sizeof *g_d); /* 26-bit values: no binary32 value, their products exact in binary64 */
  for (i = 0; i < N; i++) g_d[i] = x[i] + ldexp(1.0, ilogb(x[i]) - 25);

  /* kahan is not a tree */
  lowp_accum_parse(&km, "kahan", err, sizeof err);
  lowp_test_check(lowp_tree_from_accum(&t, 8, &km, 0) == LOWP_EUNSUPPORTED, "kahan gave a tree");

  for (n = 0; n <= 513; n++) {
    size_t nn = n == 513 ? N : n;
    for (i = 0; i < ns; i++) check_accum(specs[i], nn, a, b);
    {
      /* fp32 terms (products that binary64 holds but fp32 does not) */
      double *a32 = x, *b32 = x + (N / 2);
      size_t m2 = nn > N / 2 ? N / 2 : nn;
      check_chain(m2, a32, b32, NULL, &LOWP_FMT_FP32, LOWP_RND_NE);
      check_chain(m2, a32, b32, &LOWP_FMT_FP32, &LOWP_FMT_FP32, LOWP_RND_NE);
      check_chain(nn, a, b, &LOWP_FMT_FP16, &LOWP_FMT_FP32, LOWP_RND_NE);
      check_chain(nn, a, b, NULL, &LOWP_FMT_FP16, LOWP_RND_TZ);
      check_accum("recursive,fma=0", m2, a32, b32);
      check_accum("pairwise,fma=1", m2, a32, b32);
    }
    check_tc("h100", nn, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
    check_tc("a100", nn, &LOWP_FMT_BF16, &LOWP_FMT_FP32);
    check_tc("v100", nn, &LOWP_FMT_FP16, &LOWP_FMT_FP16);
    check_tc("h100,promote=128", nn, &LOWP_FMT_E4M3, &LOWP_FMT_FP32);
    check_tc("b200", nn, &LOWP_FMT_E5M2, &LOWP_FMT_FP16);
    check_tc("h100", nn, &LOWP_FMT_E4M3, &LOWP_FMT_FP16);
    if (n % 61 == 0 || n == 513) {
      check_kernel("acc=fp32,order=recursive", nn);
      check_kernel("acc=fp32,order=pairwise", nn);
      check_kernel("acc=fp16,order=blocked:32", nn);
      check_kernel("acc=bf16,order=splitk:4,round=rtz", nn);
    }
  }

  /* bounds: gamma of each leaf's depth; the named orders' gammas above */
  {
    double u = lowp_format_u(&LOWP_FMT_FP32);
    check_bound("recursive", 1000, x, lowp_bound_gamma(999, u));
    check_bound("pairwise", 1000, x, lowp_bound_gamma(10, u));
    check_bound("blocked:32", 1000, x, lowp_bound_gamma(32 + 31, u));
    check_bound("splitk:8", 1000, x, lowp_bound_gamma(125 + 7, u));
    check_bound("recursive,acc=fp16", 100, x, lowp_bound_gamma(99, lowp_format_u(&LOWP_FMT_FP16)));
  }
  free(a);
  free(b);
  free(x);
  free(g_d);
  return lowp_test_end();
}
