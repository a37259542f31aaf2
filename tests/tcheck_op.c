/* tcheck_op -- lib/check/op.c: the table, shapes, dims_infer, exact dispatch, bounds */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/op.h"
#include "exact/exact.h"
#include "measure/measure.h"
#include "model/accum.h"
#include "model/tc.h"
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

static int same(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  return x == y && signbit(x) == signbit(y);
}

static int same_arr(const double *a, const double *b, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (!same(a[i], b[i])) return 0;
  return 1;
}

static lowp_problem_t problem(const char *op, size_t batch, size_t m, size_t n, size_t k) {
  lowp_problem_t p;
  int i;
  memset(&p, 0, sizeof p);
  p.op = lowp_op_by_name(op);
  p.dims.batch = batch;
  p.dims.m = m;
  p.dims.n = n;
  p.dims.k = k;
  for (i = 0; i < LOWP_OP_MAXIO; i++) p.in[i] = LOWP_FMT_FP16;
  p.out = LOWP_FMT_FP32;
  p.eps = 1e-5;
  return p;
}

static void test_table(void) {
  static const char *names[] = {"cast", "sum", "dot", "gemv", "gemm", "softmax", "logsoftmax",
                                "logsumexp", "layernorm", "rmsnorm", "xent", "exp", "log",
                                "tanh", "gelu"};
  int i;
  for (i = 0; i < LOWP_OP_COUNT; i++) {
    const lowp_op_t *op = lowp_op_by_name(names[i]);
    lowp_test_check(op != NULL && (int)op->id == i && lowp_op_get((lowp_op_id_t)i) == op,
                    "op %s: id and lookup", names[i]);
    lowp_test_check(op && op->n_in >= 1 && op->n_out >= 1 && op->doc && op->doc[0],
                    "op %s: arity and doc", names[i]);
  }
  lowp_test_check(lowp_op_by_name("matmul") == NULL && lowp_op_by_name(NULL) == NULL,
                  "unknown names give NULL");
  lowp_test_check(lowp_op_get((lowp_op_id_t)15) == NULL, "id out of range gives NULL");
  lowp_test_check(lowp_op_by_name("gemm")->kind == LOWP_OPKIND_SUMPROD &&
                  lowp_op_by_name("softmax")->kind == LOWP_OPKIND_FORWARD,
                  "kinds");
  lowp_test_check(lowp_op_by_name("layernorm")->n_out == 3 &&
                  !strcmp(lowp_op_by_name("layernorm")->out_names[2], "var"),
                  "layernorm outputs y, mean, var");
  lowp_test_check(lowp_op_by_name("xent")->in_index[1] == 1, "xent target is an index input");
}

static void test_shapes(void) {
  size_t sh[LOWP_OP_MAXDIM], c;
  int nd;
  lowp_problem_t p = problem("gemm", 1, 3, 5, 7);
  lowp_test_check(!lowp_op_shape(&p, 0, sh, &nd, &c) && nd == 2 && sh[0] == 3 && sh[1] == 7 &&
                  c == 21, "gemm A (3, 7)");
  lowp_test_check(!lowp_op_shape(&p, 1, sh, &nd, &c) && nd == 2 && sh[0] == 7 && sh[1] == 5,
                  "gemm B (7, 5)");
  lowp_test_check(!lowp_op_shape(&p, 2, sh, &nd, &c) && nd == 2 && c == 15, "gemm C (3, 5)");
  lowp_test_check(lowp_op_shape(&p, 3, sh, &nd, &c) == LOWP_EINVAL, "gemm has 3 tensors");
  p.dims.batch = 4;
  lowp_test_check(!lowp_op_shape(&p, 0, sh, &nd, &c) && nd == 3 && sh[0] == 4 && c == 84,
                  "batched gemm A (4, 3, 7)");
  p = problem("dot", 1, 1, 1, 9);
  lowp_test_check(!lowp_op_shape(&p, 2, sh, &nd, &c) && nd == 0 && c == 1, "dot y is ()");
  lowp_test_check(!lowp_op_shape(&p, 0, sh, &nd, &c) && nd == 1 && sh[0] == 9, "dot x (9,)");
  p = problem("layernorm", 2, 3, 4, 1);
  lowp_test_check(!lowp_op_shape(&p, 1, sh, &nd, &c) && nd == 3 && c == 24, "layernorm y");
  lowp_test_check(!lowp_op_shape(&p, 2, sh, &nd, &c) && nd == 2 && sh[0] == 2 && sh[1] == 3,
                  "layernorm mean (2, 3)");
  p = problem("xent", 1, 6, 10, 1);
  lowp_test_check(!lowp_op_shape(&p, 1, sh, &nd, &c) && nd == 1 && sh[0] == 6, "xent target");
  lowp_test_check(!lowp_op_shape(&p, 2, sh, &nd, &c) && nd == 1 && c == 6, "xent loss none");
  p.reduction_mean = 1;
  lowp_test_check(!lowp_op_shape(&p, 2, sh, &nd, &c) && nd == 0 && c == 1, "xent loss mean ()");
  p = problem("sum", 1, 0, 4, 1);
  lowp_test_check(lowp_op_shape(&p, 0, sh, &nd, &c) == LOWP_EINVAL, "a size 0 is refused");
  p = problem("exp", 1, (size_t)1 << 40, (size_t)1 << 40, 1);
  lowp_test_check(lowp_op_shape(&p, 0, sh, &nd, &c) == LOWP_EINVAL, "overflowing count refused");
  {
    size_t a[2] = {1, 8}, b[1] = {8}, d[2] = {8, 1};
    p = problem("softmax", 1, 1, 8, 1);
    lowp_test_check(lowp_op_shape_matches(&p, 0, a, 2) && lowp_op_shape_matches(&p, 0, b, 1),
                    "(1, 8) and (8,) both fit a one-row softmax");
    lowp_test_check(!lowp_op_shape_matches(&p, 0, d, 2), "(8, 1) does not");
    p = problem("dot", 1, 1, 1, 8);
    lowp_test_check(lowp_op_shape_matches(&p, 2, NULL, 0) && lowp_op_shape_matches(&p, 2, d + 1, 1),
                    "dot y: () and (1,)");
  }
}

static void test_dims(void) {
  lowp_problem_t p = problem("gemm", 1, 0, 0, 0);
  char err[300];
  size_t a[3] = {4, 5, 6}, b[3] = {4, 6, 7}, bb[2] = {6, 7}, bad[2] = {5, 7};
  const size_t *sh[2];
  int nd[2];
  sh[0] = a + 1; sh[1] = bb; nd[0] = 2; nd[1] = 2;
  lowp_test_check(!lowp_op_dims_infer(&p, sh, nd, err, sizeof err) && p.dims.m == 5 &&
                  p.dims.k == 6 && p.dims.n == 7 && p.dims.batch == 1, "gemm (5,6)(6,7)");
  sh[0] = a; sh[1] = b; nd[0] = 3; nd[1] = 3;
  lowp_test_check(!lowp_op_dims_infer(&p, sh, nd, err, sizeof err) && p.dims.batch == 4 &&
                  p.dims.n == 7, "batched gemm");
  sh[0] = a + 1; sh[1] = bad; nd[0] = 2; nd[1] = 2;
  lowp_test_check(lowp_op_dims_infer(&p, sh, nd, err, sizeof err) == LOWP_ESHAPE &&
                  strstr(err, "A's columns (6)") && strstr(err, "(5, 7)"),
                  "gemm mismatch names the sizes: %s", err);
  p = problem("softmax", 1, 0, 0, 0);
  sh[0] = a; nd[0] = 3;
  lowp_test_check(!lowp_op_dims_infer(&p, sh, nd, err, sizeof err) && p.dims.batch == 4 &&
                  p.dims.m == 5 && p.dims.n == 6, "softmax (4,5,6)");
  sh[0] = bb + 1; nd[0] = 1;
  lowp_test_check(!lowp_op_dims_infer(&p, sh, nd, err, sizeof err) && p.dims.m == 1 &&
                  p.dims.n == 7, "softmax of a vector is one row");
  p = problem("xent", 1, 0, 0, 0);
  {
    size_t lg[2] = {5, 10}, tg[1] = {5}, tb[1] = {4};
    sh[0] = lg; sh[1] = tg; nd[0] = 2; nd[1] = 1;
    lowp_test_check(!lowp_op_dims_infer(&p, sh, nd, err, sizeof err) && p.dims.m == 5 &&
                    p.dims.n == 10, "xent (5,10) + (5,)");
    sh[1] = tb;
    lowp_test_check(lowp_op_dims_infer(&p, sh, nd, err, sizeof err) == LOWP_ESHAPE &&
                    strstr(err, "target"), "xent target mismatch names target: %s", err);
  }
  p = problem("dot", 1, 0, 0, 0);
  {
    size_t x[1] = {9}, w[1] = {8};
    sh[0] = x; sh[1] = w; nd[0] = 1; nd[1] = 1;
    lowp_test_check(lowp_op_dims_infer(&p, sh, nd, err, sizeof err) == LOWP_ESHAPE &&
                    strstr(err, "x (9,)") && strstr(err, "w (8,)"), "dot mismatch: %s", err);
  }
  {
    size_t z[2] = {0, 3};
    p = problem("exp", 1, 0, 0, 0);
    sh[0] = z; nd[0] = 2;
    lowp_test_check(lowp_op_dims_infer(&p, sh, nd, err, sizeof err) == LOWP_ESHAPE &&
                    strstr(err, "empty"), "empty tensor refused: %s", err);
  }
}

static double *gen(size_t n, const lowp_format_t *f, uint64_t seed, uint32_t stream) {
  double *x = malloc(n * sizeof *x);
  lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
  if (!x || lowp_dist_fill(x, n, &d, f, seed, stream)) {
    fprintf(stderr, "generation failed\n");
    exit(1);
  }
  return x;
}

static void test_exact(void) {
  uint64_t seed = lowp_test_seed();
  /* batched gemm vs lowp_exact_gemm per batch, and |A||B| */
  {
    lowp_problem_t p = problem("gemm", 2, 3, 4, 50);
    double *a = gen(2 * 3 * 50, &LOWP_FMT_FP16, seed, 1), *b = gen(2 * 50 * 4, &LOWP_FMT_FP16, seed, 2);
    double c[24], ab[24], want[24], wab[24], aa[300], bb[400];
    double *outs[1] = {c};
    const double *ins[2] = {a, b};
    size_t i, bt;
    int st = lowp_op_exact(outs, ab, ins, &p, &LOWP_FMT_FP32, LOWP_RND_NE);
    for (i = 0; i < 300; i++) aa[i] = fabs(a[i]);
    for (i = 0; i < 400; i++) bb[i] = fabs(b[i]);
    for (bt = 0; bt < 2; bt++) {
      lowp_exact_gemm(want + bt * 12, a + bt * 150, b + bt * 200, NULL, 3, 4, 50, &LOWP_FMT_FP32,
                      NULL, LOWP_RND_NE);
      lowp_exact_gemm(wab + bt * 12, aa + bt * 150, bb + bt * 200, NULL, 3, 4, 50, &LOWP_FMT_FP64,
                      NULL, LOWP_RND_NE);
    }
    lowp_test_check(st == LOWP_OK && same_arr(c, want, 24), "gemm dispatch == lowp_exact_gemm");
    lowp_test_check(same_arr(ab, wab, 24), "gemm |A||B| == exact gemm of |A|, |B|");
    free(a);
    free(b);
  }
  /* a GEMM larger than one tile (lib/check/op.c: 512 rows by 1024 columns,
     the column blocks copied): the same bits as one exact GEMM per batch
     entry, in fp64 and with |A||B|, and a stochastic rounding (one tile) */
  {
    size_t m = 1030, n = 1100, k = 7, mk = m * k, kn = k * n, mn = m * n, i, bt;
    lowp_problem_t p = problem("gemm", 2, m, n, k);
    double *a = gen(2 * mk, &LOWP_FMT_FP32, seed, 7), *b = gen(2 * kn, &LOWP_FMT_FP32, seed, 8);
    double *c = malloc(2 * mn * sizeof *c), *ab = malloc(2 * mn * sizeof *ab);
    double *want = malloc(2 * mn * sizeof *want), *wab = malloc(2 * mn * sizeof *wab);
    double *aa = malloc(2 * mk * sizeof *aa), *bb = malloc(2 * kn * sizeof *bb);
    double *outs[1] = {c};
    const double *ins[2] = {a, b};
    int st, ok = 1;
    if (!c || !ab || !want || !wab || !aa || !bb) {
      fprintf(stderr, "out of memory\n");
      exit(1);
    }
    a[3 * k + 2] = NAN; /* a special value in one tile's row */
    st = lowp_op_exact(outs, ab, ins, &p, &LOWP_FMT_FP64, LOWP_RND_NE);
    for (i = 0; i < 2 * mk; i++) aa[i] = fabs(a[i]);
    for (i = 0; i < 2 * kn; i++) bb[i] = fabs(b[i]);
    for (bt = 0; bt < 2; bt++) {
      ok &= !lowp_exact_gemm(want + bt * mn, a + bt * mk, b + bt * kn, NULL, m, n, k, &LOWP_FMT_FP64,
                             NULL, LOWP_RND_NE);
      ok &= !lowp_exact_gemm(wab + bt * mn, aa + bt * mk, bb + bt * kn, NULL, m, n, k, &LOWP_FMT_FP64,
                             NULL, LOWP_RND_NE);
    }
    lowp_test_check(st == LOWP_OK && ok && same_arr(c, want, 2 * mn), "tiled gemm == lowp_exact_gemm");
    lowp_test_check(same_arr(ab, wab, 2 * mn), "tiled |A||B| == exact gemm of |A|, |B|");
    st = lowp_op_exact(outs, NULL, ins, &p, &LOWP_FMT_BF16, LOWP_RND_SR);
    for (bt = 0; bt < 2; bt++)
      ok &= !lowp_exact_gemm(want + bt * mn, a + bt * mk, b + bt * kn, NULL, m, n, k, &LOWP_FMT_BF16,
                             NULL, LOWP_RND_SR);
    lowp_test_check(st == LOWP_OK && ok && same_arr(c, want, 2 * mn), "sr gemm: draws by place in C");
    free(a), free(b), free(c), free(ab), free(want), free(wab), free(aa), free(bb);
  }
  /* dot, gemv, sum */
  {
    lowp_problem_t p = problem("dot", 3, 1, 1, 40);
    double *x = gen(120, &LOWP_FMT_BF16, seed, 3), *w = gen(120, &LOWP_FMT_BF16, seed, 4);
    double y[3], ab[3], want[3];
    double *outs[1] = {y};
    const double *ins[2] = {x, w};
    int st = lowp_op_exact(outs, ab, ins, &p, &LOWP_FMT_BF16, LOWP_RND_TZ), b;
    for (b = 0; b < 3; b++)
      lowp_exact_dot(&want[b], x + 40 * b, 1, w + 40 * b, 1, 40, &LOWP_FMT_BF16, NULL, LOWP_RND_TZ);
    lowp_test_check(st == LOWP_OK && same_arr(y, want, 3), "dot dispatch, batched, rtz");
    p = problem("gemv", 1, 3, 1, 40);
    st = lowp_op_exact(outs, NULL, ins, &p, &LOWP_FMT_FP32, LOWP_RND_NE);
    lowp_exact_gemv(want, x, w, NULL, 3, 40, &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
    lowp_test_check(st == LOWP_OK && same_arr(y, want, 3), "gemv dispatch");
    p = problem("sum", 1, 3, 40, 1);
    st = lowp_op_exact(outs, ab, ins, &p, &LOWP_FMT_FP16, LOWP_RND_NE);
    for (b = 0; b < 3; b++) lowp_exact_sum(&want[b], x + 40 * b, 40, &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
    lowp_test_check(st == LOWP_OK && same_arr(y, want, 3), "sum dispatch per row");
    {
      double s = 0;
      int i;
      for (i = 0; i < 40; i++) s += fabs(x[i]); /* bf16 values: exact in binary64 */
      lowp_test_check(ab[0] == s, "sum's scale is sum |x|");
    }
    free(x);
    free(w);
  }
  /* row operations and elementwise */
  {
    double *x = gen(2 * 3 * 16, &LOWP_FMT_FP16, seed, 5);
    double y[96], want[96], r[6], wr[6], tg[6] = {0, 15, 3, 7, 7, 1};
    double *outs[1] = {y};
    const double *ins[2] = {x, tg};
    size_t i;
    int st;
    lowp_problem_t p = problem("softmax", 2, 3, 16, 1);
    st = lowp_op_exact(outs, NULL, ins, &p, &LOWP_FMT_FP16, LOWP_RND_NE);
    for (i = 0; i < 6; i++) lowp_exact_softmax(want + 16 * i, x + 16 * i, 16, &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
    lowp_test_check(st == LOWP_OK && same_arr(y, want, 96), "softmax per row");
    p = problem("logsoftmax", 2, 3, 16, 1);
    st = lowp_op_exact(outs, NULL, ins, &p, &LOWP_FMT_FP32, LOWP_RND_NE);
    for (i = 0; i < 6; i++) lowp_exact_logsoftmax(want + 16 * i, x + 16 * i, 16, &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
    lowp_test_check(st == LOWP_OK && same_arr(y, want, 96), "logsoftmax per row");
    outs[0] = r;
    p = problem("logsumexp", 2, 3, 16, 1);
    st = lowp_op_exact(outs, NULL, ins, &p, &LOWP_FMT_FP32, LOWP_RND_NE);
    for (i = 0; i < 6; i++) lowp_exact_logsumexp(&wr[i], x + 16 * i, 16, &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
    lowp_test_check(st == LOWP_OK && same_arr(r, wr, 6), "logsumexp per row");
    p = problem("xent", 2, 3, 16, 1);
    st = lowp_op_exact(outs, NULL, ins, &p, &LOWP_FMT_FP32, LOWP_RND_NE);
    for (i = 0; i < 6; i++) lowp_exact_xent(&wr[i], x + 16 * i, 16, (size_t)tg[i], &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
    lowp_test_check(st == LOWP_OK && same_arr(r, wr, 6), "xent per row");
    tg[2] = 16;
    lowp_test_check(lowp_op_exact(outs, NULL, ins, &p, &LOWP_FMT_FP32, LOWP_RND_NE) == LOWP_EINVAL,
                    "xent target out of range");
    tg[2] = 2.5;
    lowp_test_check(lowp_op_exact(outs, NULL, ins, &p, &LOWP_FMT_FP32, LOWP_RND_NE) == LOWP_EINVAL,
                    "xent target not an integer");
    outs[0] = y;
    p = problem("gelu", 2, 3, 16, 1);
    st = lowp_op_exact(outs, NULL, ins, &p, &LOWP_FMT_BF16, LOWP_RND_NE);
    lowp_exact_fn(want, x, 96, LOWP_FN_GELU, &LOWP_FMT_BF16, NULL, LOWP_RND_NE);
    lowp_test_check(st == LOWP_OK && same_arr(y, want, 96), "gelu elementwise");
    p = problem("tanh", 2, 3, 16, 1);
    st = lowp_op_exact(outs, NULL, ins, &p, &LOWP_FMT_FP16, LOWP_RND_NE);
    lowp_exact_fn(want, x, 96, LOWP_FN_TANH, &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
    lowp_test_check(st == LOWP_OK && same_arr(y, want, 96), "tanh elementwise");
    /* cast: the exact result of a cast is the input, rounded to the target */
    p = problem("cast", 2, 3, 16, 1);
    {
      double *d = gen(96, &LOWP_FMT_FP64, seed, 6);
      ins[0] = d;
      st = lowp_op_exact(outs, NULL, ins, &p, &LOWP_FMT_E4M3, LOWP_RND_NE);
      for (i = 0; i < 96; i++) lowp_round_f64(&want[i], d[i], &LOWP_FMT_E4M3, NULL, LOWP_RND_NE);
      lowp_test_check(st == LOWP_OK && same_arr(y, want, 96), "cast to e4m3 is round(x)");
      st = lowp_op_exact(outs, NULL, ins, &p, &LOWP_FMT_FP64, LOWP_RND_NE);
      lowp_test_check(st == LOWP_OK && same_arr(y, d, 96), "cast's exact value is x itself");
      free(d);
    }
    free(x);
  }
}

static double bound(const lowp_problem_t *p, lowp_bound_kind_t kind, const char *order,
                    const lowp_format_t *acc, lowp_rounding_t rnd, int fma,
                    const lowp_format_t *prod, int *st) {
  lowp_bound_spec_t b;
  double v = -1;
  char name[200];
  memset(&b, 0, sizeof b);
  b.kind = kind;
  lowp_accum_parse(&b.accum, order, NULL, 0);
  b.accum.acc = *acc;
  b.accum.rnd = rnd;
  b.accum.fma = fma;
  b.prod = prod;
  b.prob = 0.99;
  *st = lowp_op_bound(&v, name, sizeof name, p, &b);
  return v;
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-14 * fabs(b); }

static void test_bounds(void) {
  double u32 = ldexp(1, -24), u16 = ldexp(1, -11), v, g;
  int st;
  lowp_problem_t p = problem("gemm", 1, 4, 4, 100);
  /* recursive FMA chain in fp32: gamma_100 */
  v = bound(&p, LOWP_BOUND_GAMMA, "recursive", &LOWP_FMT_FP32, LOWP_RND_NE, 1, NULL, &st);
  g = 100 * u32 / (1 - 100 * u32);
  lowp_test_check(st == 0 && close_to(v, g), "recursive fp32 k=100: %g vs %g", v, g);
  /* products rounded to fp16 first: u_p + (1 + u_p) gamma_k */
  v = bound(&p, LOWP_BOUND_GAMMA, "recursive", &LOWP_FMT_FP32, LOWP_RND_NE, 1, &LOWP_FMT_FP16, &st);
  lowp_test_check(st == 0 && close_to(v, u16 + (1 + u16) * g), "rounded products: %g", v);
  /* fma = 0 without prod: products rounded to the accumulator */
  v = bound(&p, LOWP_BOUND_GAMMA, "recursive", &LOWP_FMT_FP32, LOWP_RND_NE, 0, NULL, &st);
  lowp_test_check(st == 0 && close_to(v, u32 + (1 + u32) * g), "fma=0: %g", v);
  /* directed rounding doubles u */
  v = bound(&p, LOWP_BOUND_GAMMA, "recursive", &LOWP_FMT_FP32, LOWP_RND_TZ, 1, NULL, &st);
  g = 100 * 2 * u32 / (1 - 100 * 2 * u32);
  lowp_test_check(st == 0 && close_to(v, g), "rtz doubles u: %g vs %g", v, g);
  /* pairwise k = 1024: gamma_10 */
  p.dims.k = 1024;
  v = bound(&p, LOWP_BOUND_GAMMA, "pairwise", &LOWP_FMT_FP16, LOWP_RND_NE, 1, NULL, &st);
  g = 10 * u16 / (1 - 10 * u16);
  lowp_test_check(st == 0 && close_to(v, g), "pairwise fp16 k=1024: gamma_10 %g vs %g", v, g);
  /* blocked:32, k = 1024: 31 + 31 roundings */
  v = bound(&p, LOWP_BOUND_GAMMA, "blocked:32", &LOWP_FMT_FP16, LOWP_RND_NE, 1, NULL, &st);
  g = 62 * u16 / (1 - 62 * u16);
  lowp_test_check(st == 0 && close_to(v, g), "blocked:32 k=1024: gamma_62 %g vs %g", v, g);
  /* splitk:4, k = 1000: slices of 250: 249 + 3 */
  p.dims.k = 1000;
  v = bound(&p, LOWP_BOUND_GAMMA, "splitk:4", &LOWP_FMT_FP32, LOWP_RND_NE, 1, NULL, &st);
  g = 252 * u32 / (1 - 252 * u32);
  lowp_test_check(st == 0 && close_to(v, g), "splitk:4 k=1000: gamma_252 %g vs %g", v, g);
  /* recursive fp16, k = 4096: k u >= 1, vacuous */
  p.dims.k = 4096;
  v = bound(&p, LOWP_BOUND_GAMMA, "recursive", &LOWP_FMT_FP16, LOWP_RND_NE, 1, NULL, &st);
  lowp_test_check(st == 0 && isinf(v) && v > 0, "fp16 k=4096 recursive: vacuous (+inf)");
  /* Kahan: 2u + 4 k u^2 */
  p.dims.k = 1000;
  v = bound(&p, LOWP_BOUND_GAMMA, "kahan", &LOWP_FMT_FP32, LOWP_RND_NE, 1, NULL, &st);
  lowp_test_check(st == 0 && close_to(v, 2 * u32 + 4 * 1000 * u32 * u32), "kahan: %g", v);
  v = bound(&p, LOWP_BOUND_PROB, "kahan", &LOWP_FMT_FP32, LOWP_RND_NE, 1, NULL, &st);
  lowp_test_check(st == LOWP_EUNSUPPORTED, "no probabilistic Kahan bound");
  /* probabilistic, recursive: gamma~_k(lambda) with lambda for P = 0.99 */
  v = bound(&p, LOWP_BOUND_PROB, "recursive", &LOWP_FMT_FP32, LOWP_RND_NE, 1, NULL, &st);
  g = lowp_bound_gamma_prob(1000, u32, lowp_bound_prob_lambda(1000, u32, 0.99));
  lowp_test_check(st == 0 && close_to(v, g), "prob recursive %g vs %g", v, g);
  lowp_test_check(v < 1000 * u32 && v > 4 * sqrt(1000) * u32, "prob bound ~ lambda sqrt(k) u, below k u");
  v = bound(&p, LOWP_BOUND_PROB, "pairwise", &LOWP_FMT_FP32, LOWP_RND_NE, 1, NULL, &st);
  g = lowp_bound_gamma_prob(10, u32, lowp_bound_prob_lambda(1000, u32, 0.99));
  /* the worst case holds always: the probabilistic bound is the smaller of
     the two (for 10 roundings lambda sqrt(10) > 10, so gamma_10 here) */
  if (lowp_bound_gamma(10, u32) < g) g = lowp_bound_gamma(10, u32);
  lowp_test_check(st == 0 && close_to(v, g), "prob pairwise: min(gamma~_10, gamma_10) %g vs %g",
                  v, g);
  v = bound(&p, LOWP_BOUND_PROB, "recursive", &LOWP_FMT_FP32, LOWP_RND_TZ, 1, NULL, &st);
  lowp_test_check(st == LOWP_EUNSUPPORTED, "no probabilistic bound for directed rounding");
  /* tensor-core model: h100 fp16 -> fp32, b = 16, F = 25, truncation:
     eta = (1 + 17 2^-25)(1 + 2^-23) - 1 per block, 63 blocks for k = 1000 */
  {
    lowp_tc_model_t m;
    lowp_bound_spec_t b;
    double eta, want;
    char name[200];
    memset(&b, 0, sizeof b);
    lowp_test_check(lowp_tc_model_get(&m, "h100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, NULL, 0) == 0,
                    "h100 model");
    b.kind = LOWP_BOUND_MODEL;
    b.model = &m;
    st = lowp_op_bound(&v, name, sizeof name, &p, &b);
    eta = (1 + 17 * ldexp(1, -25)) * (1 + ldexp(1, -23)) - 1;
    want = pow(1 + eta, 63) - 1;
    lowp_test_check(st == 0 && fabs(v - want) <= 1e-9 * want, "h100 model bound %g vs %g (%s)",
                    v, want, name);
    lowp_test_check(v < lowp_bound_gamma(1000, 2 * u32), "model bound below gamma_k(2u)");
  }
  /* the constants the bounds used (lowp_op_bound_units): u, doubled for a
     directed mode; lambda and its probability for the probabilistic bound,
     from the larger u of products and accumulation */
  {
    lowp_bound_spec_t b;
    lowp_bound_units_t bu;
    double lam;
    memset(&b, 0, sizeof b);
    b.kind = LOWP_BOUND_GAMMA;
    lowp_accum_parse(&b.accum, "recursive", NULL, 0);
    b.accum.acc = LOWP_FMT_FP16;
    b.accum.rnd = LOWP_RND_TZ;
    b.accum.fma = 1;
    lowp_test_check(lowp_op_bound_units(&bu, &p, &b) == 0 && bu.u == 2 * u16 && isnan(bu.lambda) &&
                        isnan(bu.probability), "units: rtz fp16 u = 2^-10, no lambda (u %g)", bu.u);
    b.accum.rnd = LOWP_RND_NE;
    b.accum.acc = LOWP_FMT_FP32;
    b.prod = &LOWP_FMT_FP16;
    b.kind = LOWP_BOUND_PROB;
    b.prob = 0.9;
    lam = lowp_bound_prob_lambda(1000, u16, 0.9);
    lowp_test_check(lowp_op_bound_units(&bu, &p, &b) == 0 && bu.u == u32 && bu.lambda == lam &&
                        fabs(bu.probability - 0.9) < 1e-6,
                    "units: prob with fp16 products: lambda %g (want %g), P %g", bu.lambda, lam,
                    bu.probability);
    b.kind = LOWP_BOUND_MODEL;
    lowp_test_check(lowp_op_bound_units(&bu, &p, &b) == LOWP_EUNSUPPORTED && isnan(bu.u),
                    "units: none for a model bound");
  }
  /* fp32 accumulation, fp16 output: one more rounding at the end */
  {
    lowp_problem_t q = problem("gemm", 1, 2, 2, 100);
    q.out = LOWP_FMT_FP16;
    v = bound(&q, LOWP_BOUND_GAMMA, "recursive", &LOWP_FMT_FP32, LOWP_RND_NE, 1, NULL, &st);
    g = 100 * u32 / (1 - 100 * u32);
    lowp_test_check(st == 0 && close_to(v, u16 + (1 + u16) * g), "fp16 output of fp32 acc: %g", v);
    q.out = LOWP_FMT_FP64;
    v = bound(&q, LOWP_BOUND_GAMMA, "recursive", &LOWP_FMT_FP32, LOWP_RND_NE, 1, NULL, &st);
    lowp_test_check(st == 0 && close_to(v, g), "a wider output adds nothing: %g", v);
  }
  /* not a sum of products */
  {
    lowp_problem_t q = problem("softmax", 1, 2, 8, 1);
    bound(&q, LOWP_BOUND_GAMMA, "recursive", &LOWP_FMT_FP32, LOWP_RND_NE, 1, NULL, &st);
    lowp_test_check(st == LOWP_EUNSUPPORTED, "softmax has no gamma bound");
  }
  /* sum uses n as its length */
  {
    lowp_problem_t q = problem("sum", 1, 2, 100, 1);
    v = bound(&q, LOWP_BOUND_GAMMA, "recursive", &LOWP_FMT_FP32, LOWP_RND_NE, 1, NULL, &st);
    lowp_test_check(st == 0 && close_to(v, 100 * u32 / (1 - 100 * u32)), "sum of 100: gamma_100");
  }
}

/* the bounds hold: backward errors of lowp's own accumulation and
   tensor-core models, on positive data (errors of one sign pile up) and on
   normal data, never exceed them */
static void test_bounds_hold(void) {
  static const char *orders[] = {"recursive", "fma", "pairwise", "blocked:8", "splitk:3", "kahan"};
  static const lowp_format_t *accs[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_FP32};
  static const size_t ks[] = {7, 64, 300};
  static const lowp_rounding_t rnds[] = {LOWP_RND_NE, LOWP_RND_TZ, LOWP_RND_UP};
  uint64_t seed = lowp_test_seed();
  size_t oi, ai, ki, ri, t;
  long checked = 0, violations = 0;
  for (oi = 0; oi < 6; oi++)
    for (ai = 0; ai < 3; ai++)
      for (ki = 0; ki < 3; ki++)
        for (ri = 0; ri < 3; ri++)
          for (t = 0; t < 2; t++) {
            size_t k = ks[ki], i;
            lowp_problem_t p = problem("dot", 1, 1, 1, k);
            lowp_bound_spec_t b;
            lowp_dist_t d = {t ? LOWP_DIST_NORMAL : LOWP_DIST_UNIFORM01, 0, 0};
            double x[300], w[300], ax[300], aw[300], y, ex, sab, bound;
            char spec[64];
            if (oi == 5 && rnds[ri] != LOWP_RND_NE) continue; /* Kahan's analysis: rne */
            lowp_dist_fill(x, k, &d, &LOWP_FMT_FP16, seed + oi, 1);
            lowp_dist_fill(w, k, &d, &LOWP_FMT_FP16, seed + ki, 2);
            for (i = 0; i < k; i++) { ax[i] = fabs(x[i]); aw[i] = fabs(w[i]); }
            memset(&b, 0, sizeof b);
            b.kind = LOWP_BOUND_GAMMA;
            snprintf(spec, sizeof spec, "%s,acc=%s,rnd=%s", orders[oi], accs[ai]->name,
                     lowp_rounding_name(rnds[ri]));
            if (lowp_accum_parse(&b.accum, spec, NULL, 0) || lowp_accum_validate(&b.accum, NULL, 0)) continue;
            if (lowp_op_bound(&bound, NULL, 0, &p, &b) || isinf(bound)) continue;
            lowp_accum_dot(&y, x, 1, w, 1, k, &b.accum);
            lowp_exact_dot(&ex, x, 1, w, 1, k, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
            lowp_exact_dot(&sab, ax, 1, aw, 1, k, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
            checked++;
            if (fabs(y - ex) > bound * sab * (1 + 1e-12)) {
              violations++;
              lowp_test_check(0, "bound violated: %s k=%zu: |err| %g > %g", spec, k, fabs(y - ex),
                              bound * sab);
            }
          }
  lowp_test_check(checked > 200 && violations == 0, "%ld accumulation cases within their bounds",
                  checked);
  /* tensor-core models: every preset and input it supports */
  {
    static const lowp_format_t *ins[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_TF32,
                                         &LOWP_FMT_E4M3, &LOWP_FMT_E5M2};
    static const char *extra[] = {"", ",promote=128"};
    size_t pi, ii, ei;
    long n = 0, bad = 0;
    for (pi = 0; pi < lowp_tc_preset_count(); pi++)
      for (ii = 0; ii < 5; ii++)
        for (ei = 0; ei < 2; ei++)
          for (t = 0; t < 2; t++) {
            lowp_tc_model_t m;
            char spec[96];
            size_t k = 1024, i;
            double x[1024], w[1024], ax[1024], aw[1024], y, ex, sab, bound;
            lowp_problem_t p = problem("dot", 1, 1, 1, k);
            lowp_bound_spec_t b;
            lowp_dist_t d = {t ? LOWP_DIST_NORMAL : LOWP_DIST_UNIFORM01, 0, 0};
            snprintf(spec, sizeof spec, "%s%s", lowp_tc_preset_at(pi)->name, extra[ei]);
            if (ins[ii]->precision > 4 && ei) continue; /* promotion: fp8 only */
            if (lowp_tc_model_get(&m, spec, ins[ii], &LOWP_FMT_FP32, NULL, 0)) continue;
            p.in[0] = p.in[1] = *ins[ii];
            lowp_dist_fill(x, k, &d, ins[ii], seed + pi, 3);
            lowp_dist_fill(w, k, &d, ins[ii], seed + ii, 4);
            for (i = 0; i < k; i++) { ax[i] = fabs(x[i]); aw[i] = fabs(w[i]); }
            memset(&b, 0, sizeof b);
            b.kind = LOWP_BOUND_MODEL;
            b.model = &m;
            if (lowp_op_bound(&bound, NULL, 0, &p, &b) || isinf(bound)) continue;
            if (lowp_tc_dot(&y, x, 1, w, 1, k, 0.0, &m, ins[ii], &LOWP_FMT_FP32)) continue;
            lowp_exact_dot(&ex, x, 1, w, 1, k, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
            lowp_exact_dot(&sab, ax, 1, aw, 1, k, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
            n++;
            if (fabs(y - ex) > bound * sab * (1 + 1e-12)) {
              bad++;
              lowp_test_check(0, "model bound violated: %s %s: |err| %g > %g", spec,
                              ins[ii]->name, fabs(y - ex), bound * sab);
            }
          }
    lowp_test_check(n > 20 && bad == 0, "%ld tensor-core cases within the model bound", n);
  }
}

int main(void) {
  lowp_test_start("tcheck_op");
  test_table();
  test_shapes();
  test_dims();
  test_exact();
  test_bounds();
  test_bounds_hold();
  return lowp_test_end();
}
