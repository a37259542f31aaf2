/* treveal -- lowp_reveal (lib/check/reveal.h): every lowp order revealed node for node, planted kernels, conversions, nondeterminism */

/*
 * Oracles: the trees built from the orders' definitions (model/tree.h,
 * tested against the orders in tests/ttree.c), compared node for node with
 * what the probes reveal from the registry kernels (sum_acc, dot_acc,
 * gemv_acc, gemm_acc, gemm_tc); hand-written kernels in this file with a
 * known order (SIMD lanes then a tree, fp16 inputs, fp32 lanes), a hidden
 * fp16 conversion, a split drawn per call, and an fp16 accumulator.
 */

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/reveal.h"
#include "check/subject.h"
#include "model/tc.h"
#include "model/tree_lanes.h"
#include "status.h"
#include "testutil.h"

/* ------------------------------------------------ hand-written kernels */

typedef struct {
  int kind;          /* 0 lanes fp32, 1 lanes fp16 accumulator, 2 hidden fp16 B, 3 random split,
                        4 and 5 blocks of 64 with block 5 not like the others (blocks_order),
                        6 a chain in fp32 of products rounded to fp32, the result rounded to bf16
                        (whatever the declared output: a bf16 GEMM returned in fp32), 7 a chain of
                        exact products in binary64, rounded to the declared output, 8 a sum
                        (op sum): a chain in fp32, the result rounded to fp16 and flushed to zero
                        where subnormal, 9 tensor-core block FMAs (model h100) carrying an fp32
                        sum, the result rounded to the declared output (cuBLAS's HGEMM with
                        CUBLAS_COMPUTE_32F: fp32 accumulation, an fp16 output) */
  unsigned calls;    /* kind 3: the split changes with every call */
} planted_t;

/* The planted kernels compute with the hardware's binary32 and binary64 (round to nearest even,
   FLT_EVAL_METHOD 0, checked below) wherever they can, so that they share no code with what
   reveals them and run fast; fp16 accumulation goes through lowp_accum_add. */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "the planted kernels need binary32 arithmetic evaluated in binary32"
#endif
static double r32(double v) { return (double)(float)v; }

/* x rounded to binary16, to nearest even (subnormals, overflow to infinity): (x + C) - C with C
   1.5 times 2^52 ulps of x's binade, so that binary64's own rounding is the one to the ulp */
static double r16(double x) {
  uint64_t u;
  int e;
  double c;
  if (x == 0.0 || !isfinite(x)) return x;
  memcpy(&u, &x, sizeof u);
  e = (int)((u >> 52) & 0x7ff) - 1023;
  if (e > 15) return copysign(INFINITY, x);
  if (e < -14) e = -14;
  u = ((uint64_t)(e - 10 + 52 + 1023) << 52) | ((uint64_t)1 << 51);
  memcpy(&c, &u, sizeof c);
  x = (x + c) - c;
  return fabs(x) > 65504.0 ? copysign(INFINITY, x) : x;
}

/* round(s + a b) once to f (the product exact in binary64 for fp16 x fp32) */
static double fma_to(double s, double a, double b, const lowp_format_t *f) {
  double z, p = a * b, e;
  if (f == &LOWP_FMT_FP64) return fma(a, b, s);
  if (f == &LOWP_FMT_FP32 && (double)(float)a == a && (double)(float)b == b && (double)(float)s == s)
    return (double)fmaf((float)a, (float)b, (float)s);
  z = s + p; /* binary16: s + p exactly when TwoSum's error is zero (p = a b exact: 22 bits) */
  e = (s - (z - (z - s))) + (p - (z - s));
  if (f == &LOWP_FMT_FP16 && e == 0.0 && fma(a, b, -p) == 0.0) return r16(z);
  lowp_accum_add(&z, s, p, f, LOWP_RND_NE);
  return z;
}

/* round(x + y) once to f */
static double add_to(double x, double y, const lowp_format_t *f) {
  if (f == &LOWP_FMT_FP32 && (double)(float)x == x && (double)(float)y == y) return (double)((float)x + (float)y);
  if (f == &LOWP_FMT_FP16) return fma_to(x, y, 1.0, f);
  lowp_accum_add(&x, x, y, f, LOWP_RND_NE);
  return x;
}

/* 32 lanes, lane l an FMA chain over products l, l + 32, ... from zero;
   then lanes l and l + w added for w = 16, 8, 4, 2, 1 (a horizontal sum) */
static double lanes_dot(const double *a, const double *b, size_t sb, size_t k, const lowp_format_t *f) {
  double lane[32];
  size_t l, i, w;
  for (l = 0; l < 32; l++) {
    lane[l] = 0.0;
    for (i = l; i < k; i += 32) lane[l] = fma_to(lane[l], a[i], b[i * sb], f);
  }
  for (w = 16; w >= 1; w /= 2)
    for (l = 0; l < w; l++) lane[l] = add_to(lane[l], lane[l + w], f);
  return lane[0];
}

/* the order of kinds 4 and 5: blocks of 64 terms, each a chain, added in turn; block 5 is summed
   backwards (kind 4) or with its terms 42 and 43 swapped (kind 5). Its leaf set is block 1's moved
   by 256, so revelation presumes it a copy of block 1 (reveal_order.c): kind 4 is refuted by the
   pairs that check the copy, kind 5 (no checking pair meets 42 or 43) only by the twin, and
   revealed again without copies. Term l of position i in the sum: */
static size_t blocks_order(int kind, size_t i) {
  size_t b = i / 64, o = i % 64;
  if (b != 5 || kind < 4) return i;
  if (kind == 4) return b * 64 + 63 - o;
  return b * 64 + (o == 42 ? 43 : o == 43 ? 42 : o);
}

static int planted_run(const lowp_subject_t *s, double *const *out, const double *const *in,
                       const lowp_problem_t *p, char *err, size_t errlen) {
  planted_t *pl = s->ctx;
  const lowp_dims_t *d = &p->dims;
  size_t bt, i, j, l, k = d->k;
  double *bh = NULL;
  (void)err; (void)errlen;
  pl->calls++;
  if (pl->kind == 8) { /* rows of n terms */
    for (i = 0; i < d->batch * d->m; i++) {
      float y = 0.0f;
      for (l = 0; l < d->n; l++) y += (float)in[0][i * d->n + l];
      out[0][i] = fabs(r16(y)) < 0x1p-14 ? copysign(0.0, y) : r16(y);
    }
    return LOWP_OK;
  }
  for (bt = 0; bt < d->batch; bt++) {
    const double *A = in[0] + bt * d->m * k, *B = in[1] + bt * k * d->n;
    if (pl->kind == 2) { /* B rounded to fp16 before use */
      bh = malloc(k * d->n * sizeof *bh);
      for (l = 0; l < k * d->n; l++) lowp_round_f64(&bh[l], B[l], &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
      B = bh;
    }
    for (i = 0; i < d->m; i++)
      for (j = 0; j < d->n; j++) {
        double y = 0.0;
        if (pl->kind == 0) y = lanes_dot(A + i * k, B + j, d->n, k, &LOWP_FMT_FP32);
        else if (pl->kind == 1) y = lanes_dot(A + i * k, B + j, d->n, k, &LOWP_FMT_FP16);
        else if (pl->kind == 9) {
          lowp_tc_model_t m;
          if (lowp_tc_model_get(&m, "h100", &p->in[0], &LOWP_FMT_FP32, NULL, 0) != LOWP_OK ||
              lowp_tc_dot(&y, A + i * k, 1, B + j, d->n, k, 0.0, &m, &p->in[0], &LOWP_FMT_FP32) != LOWP_OK)
            return LOWP_EINVAL;
        } else if (pl->kind == 2) {
          for (l = 0; l < k; l++) y = fma_to(y, A[i * k + l], B[l * d->n + j], &LOWP_FMT_FP32);
        } else if (pl->kind == 6) {
          for (l = 0; l < k; l++) y = r32(y + r32(A[i * k + l] * B[l * d->n + j]));
          lowp_round_f64(&y, y, &LOWP_FMT_BF16, NULL, LOWP_RND_NE);
        } else if (pl->kind == 7) {
          for (l = 0; l < k; l++) y = fma_to(y, A[i * k + l], B[l * d->n + j], &LOWP_FMT_FP64);
        } else if (pl->kind >= 4) { /* products rounded to fp32, each block from its first */
          size_t lo, t;
          for (lo = 0; lo < k; lo += 64) {
            double part = 0.0;
            for (t = lo; t < k && t < lo + 64; t++) {
              size_t q = blocks_order(pl->kind, t);
              double pr = r32(A[i * k + q] * B[q * d->n + j]);
              if (t == lo) part = pr;
              else part = add_to(part, pr, &LOWP_FMT_FP32);
            }
            if (lo == 0) y = part;
            else y = add_to(y, part, &LOWP_FMT_FP32);
          }
        } else {
          size_t S = 2 + pl->calls % 3, w = (k + S - 1) / S, lo;
          for (lo = 0; lo < k; lo += w) {
            double part = 0.0;
            for (l = lo; l < k && l < lo + w; l++) part = fma_to(part, A[i * k + l], B[l * d->n + j], &LOWP_FMT_FP32);
            y = r32(y + part);
          }
        }
        lowp_round_f64(&out[0][bt * d->m * d->n + i * d->n + j], y, &p->out, NULL, LOWP_RND_NE);
      }
    free(bh);
    bh = NULL;
  }
  return LOWP_OK;
}

static void planted_open(lowp_subject_t *s, planted_t *pl, int kind) {
  memset(s, 0, sizeof *s);
  memset(pl, 0, sizeof *pl);
  pl->kind = kind;
  snprintf(s->name, sizeof s->name, "planted %d", kind);
  s->kind = "test";
  s->run = planted_run;
  s->ctx = pl;
}

/* the lanes kernel's tree, from its definition: 32 lanes (model/tree_lanes.h) */
static void lanes_tree(lowp_tree_t *t, size_t k) {
  lowp_tree_from_lanes(t, k, 32, &LOWP_FMT_FP32, LOWP_RND_NE);
}

/* the tree of kinds 4 and 5 from blocks_order */
static void blocks_tree(lowp_tree_t *t, size_t k, int kind) {
  lowp_tree_arith_t a = lowp_tree_arith_sum(&LOWP_FMT_FP32, LOWP_RND_NE, 0, &LOWP_FMT_FP32, LOWP_RND_NE);
  size_t lo, q, top = 0, kids[2];
  lowp_tree_init(t, k);
  lowp_tree_arith_add(t, &a);
  for (lo = 0; lo < k; lo += 64) {
    size_t part = blocks_order(kind, lo);
    for (q = lo + 1; q < k && q < lo + 64; q++) {
      kids[0] = part;
      kids[1] = blocks_order(kind, q);
      part = lowp_tree_node_add(t, 0, kids, 2);
    }
    if (lo == 0) { top = part; continue; }
    kids[0] = top;
    kids[1] = part;
    top = lowp_tree_node_add(t, 0, kids, 2);
  }
}

/* ------------------------------------------------------------ helpers */

static void problem(lowp_problem_t *p, const char *op, size_t m, size_t n, size_t k,
                    const lowp_format_t *in, const lowp_format_t *out) {
  memset(p, 0, sizeof *p);
  p->op = lowp_op_by_name(op);
  p->dims.batch = 1;
  p->dims.m = m;
  p->dims.n = n;
  p->dims.k = k;
  p->in[0] = *in;
  p->in[1] = *in;
  p->out = *out;
}

/* reveal s on p; every class must have a validated tree of want's shape */
static int quick; /* the sweep: no conversion probes (tested on their own below) */
/* treveal --k4096: issue 32's budget per position class at n = 4096 (recursive, blocked, split-k,
   pairwise, SIMD lanes + tree, a tensor-core chain of width 16) */
static int budget;
#define BUDGET_PROBES 40000 /* issue 32's */
#define BUDGET_CALLS 17

static int reveal_expect(const char *label, const lowp_subject_t *s, const lowp_problem_t *p,
                         const lowp_tree_t *want, size_t validate, int show) {
  lowp_reveal_t r;
  lowp_reveal_opts_t o;
  char err[400];
  size_t c, where;
  int ok = 1, st;
  memset(&o, 0, sizeof o);
  o.seed = lowp_test_seed();
  o.validate = validate;
  o.no_conversions = quick;
  st = lowp_reveal(&r, s, p, &o, err, sizeof err);
  if (!lowp_test_check(st == LOWP_OK, "%s: reveal failed: %s", label, err)) return 0;
  ok &= lowp_test_check(r.deterministic, "%s: called nondeterministic", label);
  for (c = 0; c < r.n_classes; c++) {
    lowp_reveal_class_t *cl = &r.classes[c];
    ok &= lowp_test_check(cl->has_tree, "%s class %zu: no tree: %s", label, c, cl->note);
    if (cl->has_tree && want)
      ok &= lowp_test_check(lowp_tree_same(&cl->tree, want, 1, &where),
                            "%s class %zu: revealed shape differs from the definition at node %zu",
                            label, c, where);
    if (budget)
      ok &= lowp_test_check(cl->probes <= BUDGET_PROBES && cl->calls <= BUDGET_CALLS,
                            "%s class %zu: %zu probes in %zu calls, over %zu in %d", label, c, cl->probes,
                            cl->calls, BUDGET_PROBES, BUDGET_CALLS);
    if (show)
      printf("  %s: class %zu (%zu positions): %zu probes, %zu calls (+%zu classify, %zu validate), "
             "%zu outputs bit-exact; %s\n",
             label, c, cl->n_pos, cl->probes, cl->calls, r.calls_classify, r.calls_validate,
             cl->validated, cl->arith);
  }
  lowp_reveal_free(&r);
  return ok;
}

static void registry_case(const char *kernel, const char *params, const char *op, size_t m,
                          size_t n, size_t k, const lowp_format_t *in, const lowp_tree_t *want,
                          size_t validate, int show) {
  lowp_subject_t s;
  lowp_problem_t p;
  char err[300], label[300];
  problem(&p, op, m, n, k, in, &LOWP_FMT_FP32);
  snprintf(label, sizeof label, "%s[%s] %s k=%zu", kernel, params, op, k);
  if (getenv("TREVEAL_TRACE")) fprintf(stderr, "%s\n", label);
  if (!lowp_test_check(lowp_kernel_subject_open(&s, kernel, params, err, sizeof err) == LOWP_OK,
                       "%s: %s", label, err))
    return;
  if (!strcmp(kernel, "gemm_tc")) lowp_kernel_subject_bind(&s, &p, err, sizeof err);
  reveal_expect(label, &s, &p, want, validate, show);
  lowp_subject_close(&s);
}

static void accum_case(const char *order, const char *kernel, const char *op, size_t n, int show) {
  lowp_accum_t m;
  lowp_tree_t t;
  char err[200], params[200];
  lowp_accum_parse(&m, order, err, sizeof err);
  lowp_tree_from_accum(&t, n, &m, strcmp(op, "sum") != 0);
  snprintf(params, sizeof params, "acc=fp32,order=%s", order);
  registry_case(kernel, params, op, !strcmp(op, "sum") || !strcmp(op, "gemv") ? 4 : 2,
                !strcmp(op, "sum") ? n : 1, n, &LOWP_FMT_FP32, &t, show ? 2000 : 64, show);
  lowp_tree_free(&t);
}

/* the registry kernels at one large k: gemm_acc in every order and with
   prod=fp16, sum_acc pairwise, dot_acc splitk:4, gemm_tc h100 (each
   printed, 2000 outputs validated bit for bit) */
static void large_cases(size_t k) {
  static const char *const orders[] = {"recursive", "pairwise", "blocked:32", "splitk:4", "blocked:5"};
  size_t i;
  lowp_tree_t t;
  lowp_tc_model_t m;
  char err[300];
  quick = 0;
  for (i = 0; i < sizeof orders / sizeof *orders; i++) accum_case(orders[i], "gemm_acc", "gemm", k, 1);
  accum_case("pairwise", "sum_acc", "sum", k, 1);
  accum_case("splitk:4", "dot_acc", "dot", k, 1);
  /* the FMA chain of gemm_acc with prod= and the tensor-core chain of width 16 */
  lowp_tree_from_fma_chain(&t, k, &LOWP_FMT_FP16, LOWP_RND_NE, &LOWP_FMT_FP32, LOWP_RND_NE);
  registry_case("gemm_acc", "acc=fp32,prod=fp16", "gemm", 2, 3, k, &LOWP_FMT_FP32, &t, 2000, 1);
  lowp_tree_free(&t);
  lowp_tc_model_get(&m, "h100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, err, sizeof err);
  lowp_tree_from_tc(&t, k, &m, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
  registry_case("gemm_tc", "model=h100", "gemm", 2, 2, k, &LOWP_FMT_FP16, &t, 2000, 1);
  lowp_tree_free(&t);
  /* SIMD lanes + tree (32 fp32 lanes, fp16 inputs) */
  lanes_tree(&t, k);
  registry_case("gemm_lanes", "acc=fp32,lanes=32", "gemm", 2, 2, k, &LOWP_FMT_FP16, &t, 2000, 1);
  /* e4m3 inputs: products span 2^34, so the units go in windows of 512 terms (2^9 + 25 = 34); a pair
     is first probed in its partner's window alone, and one pair per (pivot, window, count) in the
     others (17,093 probes in 10 calls at k = 4096; 57,293 in 17 when every pair took every window) */
  registry_case("gemm_lanes", "acc=fp32,lanes=32", "gemm", 2, 2, k, &LOWP_FMT_E4M3, &t, 200, 1);
  lowp_tree_free(&t);
}

/* gemm_lanes accumulating in fp16 (issue 32's bug): its tree, arithmetic included (fp16 additions,
   each lane's chain from zero), bit-exact on every validation output. At k = 16384 with values up to
   2^7, 1877 of 2000 validation outputs overflowed fp16 (inf, NaN), fitted any candidate, and the
   first candidate chosen (chains from two exact products) differed from the kernel on 2 outputs */
static void fp16_lanes_case(size_t k, size_t validate) {
  lowp_subject_t s;
  lowp_problem_t p;
  lowp_reveal_t r;
  lowp_reveal_opts_t o;
  lowp_tree_t t;
  char err[300];
  size_t where = 0;
  problem(&p, "gemm", 2, 2, k, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
  if (!lowp_test_check(lowp_kernel_subject_open(&s, "gemm_lanes", "acc=fp16,lanes=32", err, sizeof err) == LOWP_OK,
                       "fp16 lanes k=%zu: %s", k, err))
    return;
  memset(&o, 0, sizeof o);
  o.seed = lowp_test_seed();
  o.validate = validate;
  o.no_conversions = 1;
  lowp_tree_from_lanes(&t, k, 32, &LOWP_FMT_FP16, LOWP_RND_NE);
  if (lowp_test_check(lowp_reveal(&r, &s, &p, &o, err, sizeof err) == LOWP_OK, "fp16 lanes k=%zu: %s", k, err)) {
    lowp_test_check(r.n_classes == 1 && r.classes[0].has_tree && r.classes[0].validated >= validate &&
                        lowp_tree_same(&r.classes[0].tree, &t, 0, &where),
                    "fp16 lanes k=%zu: not the kernel's tree, arithmetic included (node %zu; %s)", k, where,
                    r.n_classes ? r.classes[0].note : "no class");
    printf("  fp16 lanes k=%zu: %zu probes, %zu calls, %zu outputs bit-exact; %s\n", k,
           r.n_classes ? r.classes[0].probes : 0, r.n_classes ? r.classes[0].calls : 0,
           r.n_classes ? r.classes[0].validated : 0, r.n_classes ? r.classes[0].arith : "");
    lowp_reveal_free(&r);
  }
  lowp_tree_free(&t);
  lowp_subject_close(&s);
}

/* inputs whose range alone cannot hold M / unit (issue 32): the probe's
   magnitude is split across both operands (the products' span). e5m2 at
   k = 1024 needs 2^35, beyond e5m2's 2^31 but within its products' 2^62;
   fp16 at k = 16384 (treveal --k16384) needs 2^39, beyond fp16's range */
static void split_cases(size_t k, const lowp_format_t *in, size_t n) {
  lowp_tree_t t;
  lowp_accum_t m;
  char err[200];
  lanes_tree(&t, k);
  registry_case("gemm_lanes", "acc=fp32,lanes=32", "gemm", 1, n, k, in, &t, 200, 1);
  lowp_tree_free(&t);
  lowp_accum_parse(&m, "recursive", err, sizeof err);
  lowp_tree_from_accum(&t, k, &m, 1);
  registry_case("gemm_acc", "acc=fp32", "gemm", 1, n, k, in, &t, 200, 1);
  lowp_tree_free(&t);
}

/* the planted lanes kernel at k > 2048 (2560; 4096 under --k4096): with fp32 lanes on 12 positions,
   then accumulating in fp16, which cannot count more than 2048 units, so the probes put their units
   in windows of 2048 terms: the same tree, additions in fp16 */
static void planted_lanes(size_t k) {
  lowp_subject_t s;
  planted_t pl;
  lowp_problem_t p;
  lowp_tree_t t;
  lowp_reveal_t r;
  char err[300], label[64];
  snprintf(label, sizeof label, "lanes k=%zu", k);
  planted_open(&s, &pl, 0);
  problem(&p, "gemm", 3, 4, k, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
  lanes_tree(&t, k);
  reveal_expect(label, &s, &p, &t, 2000, 1);
  planted_open(&s, &pl, 1);
  problem(&p, "gemm", 2, 2, k, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
  if (lowp_test_check(lowp_reveal(&r, &s, &p, NULL, err, sizeof err) == LOWP_OK, "fp16 lanes k=%zu: %s", k, err)) {
    lowp_test_check(r.precision_seen == 11 && !r.precision_lower, "fp16 lanes k=%zu: %d accumulator bits seen, not 11",
                    k, r.precision_seen);
    lowp_test_check(r.n_classes == 1 && r.classes[0].has_tree && r.classes[0].tree.arith[0].acc.precision == 11 &&
                        lowp_tree_same(&r.classes[0].tree, &t, 1, NULL) && r.classes[0].mismatched == 0,
                    "fp16 lanes at k=%zu: no fp16 tree of the lanes' shape (%s)", k,
                    r.n_classes ? r.classes[0].note : "");
    lowp_reveal_free(&r);
  }
  lowp_tree_free(&t);
}

/* an fp16 sum returned in fp16: units of 2^-24, subnormal in fp16, under an M of 2^14 need no
   windows up to 2048 terms; normal ones of 2^-14 would put them in windows of 8 (n = 1000: 41,926
   probes before, 3,322 now; k = 128: 127). A kernel that flushes subnormal results to zero fails
   reveal.c's check of one unit and is probed with normal units (windows of 8: 2,032 probes). */
static void subnormal_unit_cases(void) {
  lowp_subject_t s;
  planted_t pl;
  lowp_problem_t p;
  lowp_reveal_t r;
  lowp_accum_t m;
  lowp_tree_t rec;
  char err[300];
  int ftz;
  lowp_accum_parse(&m, "recursive", err, sizeof err);
  lowp_tree_from_accum(&rec, 128, &m, 0);
  problem(&p, "sum", 2, 128, 128, &LOWP_FMT_FP16, &LOWP_FMT_FP16);
  for (ftz = 0; ftz < 2; ftz++) {
    const char *what = ftz ? "fp16 sum, subnormal results flushed" : "fp16 sum";
    if (ftz) planted_open(&s, &pl, 8);
    else if (!lowp_test_check(lowp_kernel_subject_open(&s, "sum_acc", "acc=fp32,order=recursive", err, sizeof err) ==
                                  LOWP_OK, "sum_acc: %s", err))
      continue;
    if (!lowp_test_check(lowp_reveal(&r, &s, &p, NULL, err, sizeof err) == LOWP_OK, "%s: %s", what, err)) continue;
    /* the flushing kernel's order revealed, but no tree of lowp's flushes its subnormal results
       (some of the validation outputs): no tree, rightly */
    lowp_test_check(r.n_classes == 1 && !r.classes[0].no_order && r.units_subnormal == !ftz &&
                        (ftz ? !r.classes[0].has_tree
                             : r.classes[0].has_tree && lowp_tree_same(&r.classes[0].tree, &rec, 1, NULL) &&
                                   r.classes[0].tree.arith[0].acc.precision == 24 && r.classes[0].probes < 256),
                    "%s: %s; units subnormal %d, %zu probes", what, r.n_classes ? r.classes[0].note : "no class",
                    r.units_subnormal, r.n_classes ? r.classes[0].probes : 0);
    printf("  %s k=128: %zu probes, units subnormal %d; %s\n", what, r.n_classes ? r.classes[0].probes : 0,
           r.units_subnormal, r.n_classes ? r.classes[0].note : "no class");
    if (!ftz) lowp_subject_close(&s);
    lowp_reveal_free(&r);
  }
  lowp_tree_free(&rec);
}

/* treveal: the default run (label unit); treveal --k4096: the large
   cases alone at k = 4096 (label long, as treveal_4096: they were most of
   treveal's 104 s on 2 cores and 990 s under ASan) */
/* lowp_reveal's retries and validation through narrow outputs (reveal.c, reveal_arith.c) */
static void retry_cases(void) {
  size_t i;
  lowp_subject_t s;
  planted_t pl;
  lowp_problem_t p;
  lowp_reveal_t r;
  char err[300];
  /* outputs narrower than declared (kind 6): revealed again with bf16 as the output; the products'
     rounding told apart through bf16 values (an FMA twin fitted the first outputs); and a binary64
     accumulator behind an fp32 output (kind 7): the probes sized for 53 bits. Each the recursive
     chain, validated bit for bit. */
  for (i = 6; i <= 7; i++) {
    lowp_accum_t m;
    lowp_tree_t rec;
    const char *what = i == 6 ? "bf16 result" : "binary64 accumulator";
    planted_open(&s, &pl, (int)i);
    problem(&p, "gemm", 3, 4, 300, &LOWP_FMT_FP32, &LOWP_FMT_FP32);
    lowp_accum_parse(&m, "recursive", err, sizeof err);
    lowp_tree_from_accum(&rec, 300, &m, 1);
    lowp_test_check(lowp_reveal(&r, &s, &p, NULL, err, sizeof err) == LOWP_OK, "%s: %s", what, err);
    lowp_test_check(r.n_classes == 1 && r.classes[0].has_tree && r.classes[0].validated >= 2000 &&
                        lowp_tree_same(&r.classes[0].tree, &rec, 1, NULL),
                    "%s: no recursive tree (%s)", what, r.n_classes ? r.classes[0].note : "");
    if (i == 6)
      lowp_test_check(r.out_narrowed && r.out_fmt.precision == 8 && r.out_fmt.emax == 127 &&
                          !r.acc_bits_assumed && r.n_classes == 1 && r.classes[0].has_tree &&
                          r.classes[0].tree.arith[0].acc.precision == 24 &&
                          !r.classes[0].tree.arith[0].leaf_exact &&
                          r.classes[0].tree.arith[0].prod.precision == 24,
                      "bf16 result: output %d (%d bits), arithmetic %s", r.out_narrowed,
                      r.out_fmt.precision, r.n_classes ? r.classes[0].arith : "-");
    else
      lowp_test_check(!r.out_narrowed && r.acc_bits_assumed == 53 && r.n_classes == 1 &&
                          r.classes[0].has_tree && r.classes[0].tree.arith[0].acc.precision == 53,
                      "binary64 accumulator: assumed %d bits, arithmetic %s", r.acc_bits_assumed,
                      r.n_classes ? r.classes[0].arith : "-");
    lowp_reveal_free(&r);
    lowp_tree_free(&rec);
  }

  /* products rounded to fp32 seen through a declared bf16 output: random outputs alone let an FMA
     twin through 10,000 of them (reveal_arith.c's val_cancel) */
  if (lowp_test_check(lowp_kernel_subject_open(&s, "gemm_acc", "acc=fp32,prod=acc", err, sizeof err) == LOWP_OK,
                      "gemm_acc: %s", err)) {
    lowp_reveal_opts_t o;
    memset(&o, 0, sizeof o);
    o.validate = 2000;
    problem(&p, "gemm", 2, 2, 256, &LOWP_FMT_FP32, &LOWP_FMT_BF16);
    lowp_test_check(lowp_reveal(&r, &s, &p, &o, err, sizeof err) == LOWP_OK, "rounded products, bf16: %s", err);
    lowp_test_check(r.n_classes == 1 && r.classes[0].has_tree && !r.classes[0].tree.arith[0].leaf_exact &&
                        r.classes[0].tree.arith[0].prod.precision == 24,
                    "rounded products through bf16: %s", r.n_classes ? r.classes[0].arith : "-");
    lowp_reveal_free(&r);
    lowp_subject_close(&s);
  }

  /* fp16 in and out (the usual half-precision GEMM), accumulating in fp32 or in fp16: M beyond
     fp16's range for the fp32 accumulator, within it for the fp16 one (reveal_cfg's levels), so
     both take K - 1 probes of one window, not K (K - 1) / 8 in windows of 8 terms; products
     rounded to fp16 (i = 2) too, with units subnormal in fp16 (130,944 probes at K = 1024 before) */
  for (i = 0; i < 3; i++) {
    static const char *const params[] = {"acc=fp32", "acc=fp16", "acc=fp32,prod=fp16"};
    size_t k = i == 2 ? 512 : 1024;
    lowp_reveal_opts_t o;
    memset(&o, 0, sizeof o);
    o.validate = 500;
    if (!lowp_test_check(lowp_kernel_subject_open(&s, "gemm_acc", params[i], err, sizeof err) == LOWP_OK,
                         "gemm_acc: %s", err))
      continue;
    problem(&p, "gemm", 2, 2, k, &LOWP_FMT_FP16, &LOWP_FMT_FP16);
    lowp_test_check(lowp_reveal(&r, &s, &p, &o, err, sizeof err) == LOWP_OK, "fp16 in and out: %s", err);
    lowp_test_check(r.n_classes == 1 && r.classes[0].has_tree &&
                        r.classes[0].tree.arith[0].acc.precision == (i == 1 ? 11 : 24) &&
                        (i < 2 || (!r.classes[0].tree.arith[0].leaf_exact &&
                                   r.classes[0].tree.arith[0].prod.precision == 11)) &&
                        r.classes[0].probes <= 2 * k,
                    "fp16 in and out, %s: %s; %zu probes", params[i], r.n_classes ? r.classes[0].arith : "-",
                    r.n_classes ? r.classes[0].probes : (size_t)0);
    lowp_reveal_free(&r);
    lowp_subject_close(&s);
  }

  /* tensor cores carrying an fp32 sum, the result stored in fp16 (planted kind 9, the usual GPU
     half-precision GEMM): the candidates' block FMAs all took the output's format for their
     result, so none reproduced it ("none of 48 candidate arithmetics"), and a check with
     "order": "revealed" failed the honest kernel on bound 0. (At K = 16, one block, a block rounding
     straight to fp16 fits the same outputs and comes first.) */
  {
    static const size_t ks[] = {32, 64, 256};
    for (i = 0; i < 3; i++) {
      planted_t pl;
      lowp_reveal_opts_t o;
      memset(&o, 0, sizeof o);
      o.validate = 200;
      planted_open(&s, &pl, 9);
      problem(&p, "gemm", 2, 2, ks[i], &LOWP_FMT_FP16, &LOWP_FMT_FP16);
      if (!lowp_test_check(lowp_reveal(&r, &s, &p, &o, err, sizeof err) == LOWP_OK, "tc fp32 sum, fp16 out: %s", err))
        continue;
      lowp_test_check(r.n_classes == 1 && r.classes[0].has_tree && r.classes[0].tree.has_out &&
                          r.classes[0].tree.out.precision == 11 && strstr(r.classes[0].arith, "fp32 out") &&
                          strstr(r.classes[0].arith, "result rounded to the output"),
                      "tc fp32 sum, fp16 out, K = %zu: %s", ks[i],
                      r.n_classes ? (r.classes[0].has_tree ? r.classes[0].arith : r.classes[0].note) : "-");
      lowp_reveal_free(&r);
    }
  }
}

int main(int argc, char **argv) {
  static const char *const orders[] = {"recursive", "pairwise", "blocked:32", "splitk:4", "blocked:5"};
  size_t n, i;
  lowp_subject_t s;
  planted_t pl;
  lowp_problem_t p;
  lowp_tree_t t;
  lowp_reveal_t r;
  char err[300];
  lowp_test_start("treveal");
  if (argc > 1 && !strcmp(argv[1], "--k4096")) {
    budget = 1;
    large_cases(4096);
    planted_lanes(4096);
    return lowp_test_end();
  }
  if (argc > 1 && !strcmp(argv[1], "--k16384")) { /* label long (about 190 s of CPU) */
    split_cases(16384, &LOWP_FMT_FP16, 1);
    fp16_lanes_case(16384, 2000);
    return lowp_test_end();
  }
  split_cases(1024, &LOWP_FMT_E5M2, 2);

  /* every order: n = 2..40, then every 23rd n to 512; the large cases at
     k = 520, ragged for every block and lane width (4096: treveal --k4096) */
  quick = 1;
  if (getenv("TREVEAL_ONLY")) goto planted; /* a developer's shortcut: the planted kernels only */
  for (n = 2; n <= 512; n += n < 40 ? 1 : 23)
    for (i = 0; i < sizeof orders / sizeof *orders; i++) accum_case(orders[i], "sum_acc", "sum", n, 0);
  large_cases(520);
  quick = 0;
  accum_case("pairwise", "gemv_acc", "gemv", 300, 0);
  {
    lowp_tc_model_t m;
    lowp_tc_model_get(&m, "h100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, err, sizeof err);
    for (n = 2; n <= 512; n += 37) {
      lowp_tree_from_tc(&t, n, &m, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
      registry_case("gemm_tc", "model=h100", "gemm", 2, 2, n, &LOWP_FMT_FP16, &t, 64, 0);
      lowp_tree_free(&t);
    }
  }

planted:
  /* blocks whose leaf sets repeat: block 5 unlike block 1 (blocks_order); the tree must be the
     kernel's either way */
  for (i = 4; i <= 5; i++) {
    char label[64];
    snprintf(label, sizeof label, "blocks of 64, block 5 %s", i == 4 ? "backwards" : "with 2 terms swapped");
    planted_open(&s, &pl, (int)i);
    problem(&p, "gemm", 2, 2, 512, &LOWP_FMT_FP32, &LOWP_FMT_FP32);
    blocks_tree(&t, 512, (int)i);
    reveal_expect(label, &s, &p, &t, 2000, 1);
    lowp_tree_free(&t);
  }
  /* SIMD lanes + tree, fp16 inputs, fp32 lanes; then accumulating in fp16 */
  planted_open(&s, &pl, 0);
  for (n = 40; n <= 640; n *= 4) {
    char label[64];
    snprintf(label, sizeof label, "lanes k=%zu", n);
    problem(&p, "gemm", 3, 4, n, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
    lanes_tree(&t, n);
    reveal_expect(label, &s, &p, &t, 2000, 0);
    lowp_tree_free(&t);
  }
  planted_lanes(2560);
  planted_open(&s, &pl, 1);
  problem(&p, "gemm", 2, 2, 256, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
  lowp_test_check(lowp_reveal(&r, &s, &p, NULL, err, sizeof err) == LOWP_OK, "fp16 lanes k=256: %s", err);
  lowp_test_check(r.n_classes == 1 && r.classes[0].has_tree &&
                      r.classes[0].tree.arith[0].acc.precision == 11,
                  "fp16 lanes k=256: no fp16 tree (%s)", r.n_classes ? r.classes[0].note : "");
  lowp_reveal_free(&r);

  fp16_lanes_case(2048, 2000);

  /* a hidden fp16 conversion of B (declared fp32) */
  planted_open(&s, &pl, 2);
  problem(&p, "gemm", 3, 4, 300, &LOWP_FMT_FP32, &LOWP_FMT_FP32);
  lowp_test_check(lowp_reveal(&r, &s, &p, NULL, err, sizeof err) == LOWP_OK, "hidden fp16: %s", err);
  lowp_test_check(!r.conv[0].converted && r.conv[1].converted &&
                      r.conv[1].fmt.precision == 11 && r.conv[1].fmt.emax == 15 &&
                      r.conv[1].rnd == LOWP_RND_NE,
                  "hidden fp16: conversions A %d, B %d (%s)", r.conv[0].converted, r.conv[1].converted,
                  r.conv[1].fmt.name ? r.conv[1].fmt.name : "-");
  lowp_test_check(r.n_classes == 1 && r.classes[0].has_tree, "hidden fp16: no tree (%s)",
                  r.n_classes ? r.classes[0].note : "");
  lowp_reveal_free(&r);

  retry_cases();
  subnormal_unit_cases();

  /* a split drawn per call: nondeterministic, no tree */
  planted_open(&s, &pl, 3);
  lowp_test_check(lowp_reveal(&r, &s, &p, NULL, err, sizeof err) == LOWP_OK, "random split: %s", err);
  lowp_test_check(!r.deterministic, "random split: called deterministic");
  for (i = 0; i < r.n_classes; i++) lowp_test_check(!r.classes[i].has_tree, "random split: given a tree");
  lowp_reveal_free(&r);

  /* not a sum of products */
  problem(&p, "softmax", 2, 8, 1, &LOWP_FMT_FP32, &LOWP_FMT_FP32);
  lowp_test_check(lowp_reveal(&r, &s, &p, NULL, err, sizeof err) == LOWP_EUNSUPPORTED, "softmax accepted");
  return lowp_test_end();
}
