/* order-revelation -- the summation orders lowp can reach, revealed from the kernels themselves (issue 32) */

/*
 * Question: does lowp_reveal (lib/check/reveal.h; FPRev, Xie et al., USENIX
 * ATC 2025, arXiv:2411.00442) find the order a kernel really sums in, and
 * what does that change in a check's verdict?
 *
 * Three parts, each a table:
 *  1. lowp's own kernels, whose trees are known from their definitions
 *     (model/tree.h, model/tree_lanes.h): gemm_acc in every order that is a
 *     tree (recursive, pairwise, blocked:32, splitk:4, an FMA chain with
 *     fp16 products), the tensor-core chains of gemm_tc (h100, a100: block
 *     FMAs of 16 and 8), and gemm_lanes (a SIMD dot product: 16, 32 and 64
 *     lanes, the NEON, AVX2 and AVX-512 builds of issue 32's kernel); the
 *     revealed tree must equal the definition node for node (shape) and its
 *     twin reproduce the kernel bit for bit. Kahan's sum is not a tree: it
 *     must get none.
 *  2. OpenBLAS sgemm and dgemm, on 1 and 2 threads, for K over blas_k:
 *     every position class, its probes and calls, the depth of its leaves,
 *     how much tighter its bound is than recursive summation's, whether 1
 *     and 2 threads give the same trees, and the twin validated bit for bit.
 *  3. The verdict (issue 32's example): gemm_lanes with fp32 lanes (honest)
 *     and with fp16 lanes (the planted bug), fp16 inputs, measured through
 *     the pipeline (the componentwise backward error, exact reference) and
 *     held against the gamma bound of the declared recursive order, of the
 *     tree revealed from the honest kernel (in the declared fp32), and of
 *     "order": "revealed" on the kernel itself (lowp_reveal_bound: no tree,
 *     bound 0, when its outputs are not counts).
 *  4. NumPy's sum and matmul (fp32), revealed by lowp.reveal in Debian's
 *     python3 (experiments/order_revelation_numpy.py, numpy called back on
 *     lowp's probes), their error on seeded inputs against the gamma bound
 *     of the declared recursive (and, for sum, pairwise) order and of the
 *     revealed tree; skipped, with the reason, where numpy does not import.
 * Wall times of every revelation go to timing.csv (outside the byte-stable
 * results: tools/env.c).
 */

#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "registry.h"
#include "results.h"

#include "check/pipeline.h"
#include "check/reveal.h"
#include "check/reveal_bound.h"
#include "check/subject.h"
#include "exp_check.h"
#include "format/format.h"
#include "io/plot.h"
#include "io/spawn.h"
#include "measure/measure.h"
#include "model/tree_lanes.h"
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h> /* readlink */

#ifndef LOWP_SOURCE_DIR
#define LOWP_SOURCE_DIR "."
#endif

static const lowp_param_t params[] = {
    {"k", "4096", "256", "terms per output of lowp's own kernels"},
    {"blas_k", "64,256,1024,2048,4096", "64", "K of the OpenBLAS sweep (issue 32's range is 64 to 8192: --blas_k=...,8192)"},
    {"blas_shape", "33,17", "9,5", "M,N of the OpenBLAS GEMMs (edge rows and columns make classes)"},
    {"verdict_k", "256,4096,16384", "256,4096", "K of the verdict comparison"},
    {"validate", "10000", "1000", "outputs per class the twin must reproduce bit for bit"},
    {"numpy_sum_k", "1024,8192", "1024", "K of numpy.sum (one row of K fp32 values)"},
    {"numpy_matmul_k", "256,4096", "256", "K of numpy.matmul (2 x 2 outputs, fp32)"},
    {"python", "/usr/bin/python3", NULL, "the Python with numpy that runs NumPy's sum and matmul (Debian's python3-numpy)"},
    {NULL, NULL, NULL, NULL}};

#define MAXK 16
#define NOWN 12
#define NBLAS 4 /* sgemm t1, sgemm t2, dgemm t1, dgemm t2 */
#define NNP 8   /* NumPy cases */

/* one NumPy case (experiments/order_revelation_numpy.py) */
typedef struct {
  char what[32], arith[240];
  size_t K, classes, probes, calls, validated, dmin, dmax;
  int has_tree;
  double secs, bwd, b_rec, b_pw, b_tree; /* b_pw: sum only (0 otherwise); b_tree 0: no tree */
  size_t depth_tree;
} np_t;

/* one revelation, summed over its classes */
typedef struct {
  int st;                  /* lowp_reveal's status */
  int deterministic;
  size_t classes, with_tree, probes, calls, calls_total, validated;
  size_t dmin, dmax, max_probes, max_calls; /* over classes */
  double ratio_min, ratio_max; /* bound tighter than recursive's, over classes */
  double secs, max_class_secs;
  char arith[240], note[400];
} rv_t;

typedef struct {
  const char *label, *kernel, *params, *op;
  const lowp_format_t *in;
  int kind; /* 0 accum order, 1 fma chain fp16 products, 2 tc, 3 lanes, 4 no tree expected */
  size_t lanes;
  rv_t rv;
  int match; /* 1 the revealed shape equals the definition */
} own_t;

typedef struct {
  long long k[MAXK], vk[MAXK], bshape[2];
  size_t nk, nvk, K, validate;
  own_t own[NOWN];
  size_t nown;
  rv_t blas[NBLAS][MAXK];
  int same_threads[2][MAXK]; /* sgemm, dgemm: 1 and 2 threads give the same trees */
  /* verdicts: [0] honest, [1] bug */
  double bwd[2][MAXK], g_rec[MAXK], g_tree[MAXK], g_self[2][MAXK];
  size_t depth_tree[MAXK];
  char self_note[2][MAXK][200];
  int limit[2][MAXK]; /* "order": "revealed" impossible at the check's formats (M / unit too wide) */
  rv_t vrv[MAXK];
  np_t np[NNP];
  size_t nnp;
  char np_version[32], np_skipped[300]; /* skipped: why NumPy's part did not run */
} ord_t;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------ declare */

static void declare(const lowp_run_t *r, ord_t *o) {
  size_t i;
  o->K = (size_t)lowp_run_param_int(r, "k", 2, 1 << 15);
  o->nk = lowp_run_param_list_int(r, "blas_k", o->k, MAXK, 2, 1 << 15);
  o->nvk = lowp_run_param_list_int(r, "verdict_k", o->vk, MAXK, 64, 1 << 16);
  if (lowp_run_param_list_int(r, "blas_shape", o->bshape, 2, 1, 256) != 2)
    lowp_run_bad_param(r, "blas_shape", "expected M,N");
  o->validate = (size_t)lowp_run_param_int(r, "validate", 64, 1 << 20);
  for (i = 0; i < o->nvk; i++)
    if (o->vk[i] % 64) lowp_run_bad_param(r, "verdict_k", "every K a multiple of 64 (the lanes kernel's 64 lanes)");
  { /* NumPy's cases: checked here, run by the script */
    long long t[NNP];
    lowp_run_param_list_int(r, "numpy_sum_k", t, NNP / 2, 2, 1 << 16);
    lowp_run_param_list_int(r, "numpy_matmul_k", t, NNP / 2, 2, 1 << 16);
  }
}

static void check(const lowp_run_t *r) {
  ord_t *o = calloc(1, sizeof *o);
  if (o) declare(r, o);
  free(o);
}

/* the kernels whose trees lowp knows */
static void own_list(ord_t *o) {
  static own_t list[] = {
      {"gemm_acc order=recursive", "gemm_acc", "acc=fp32,order=recursive", "gemm", NULL, 0, 0, {0}, 0},
      {"gemm_acc order=pairwise", "gemm_acc", "acc=fp32,order=pairwise", "gemm", NULL, 0, 0, {0}, 0},
      {"gemm_acc order=blocked:32", "gemm_acc", "acc=fp32,order=blocked:32", "gemm", NULL, 0, 0, {0}, 0},
      {"gemm_acc order=splitk:4", "gemm_acc", "acc=fp32,order=splitk:4", "gemm", NULL, 0, 0, {0}, 0},
      {"sum_acc order=pairwise", "sum_acc", "acc=fp32,order=pairwise", "sum", NULL, 0, 0, {0}, 0},
      {"gemm_acc prod=fp16 (FMA chain of fp16 products)", "gemm_acc", "acc=fp32,prod=fp16", "gemm", NULL, 1, 0, {0}, 0},
      {"gemm_tc model=h100 (block FMAs of 16)", "gemm_tc", "model=h100", "gemm", NULL, 2, 0, {0}, 0},
      {"gemm_tc model=a100 (block FMAs of 8)", "gemm_tc", "model=a100", "gemm", NULL, 2, 0, {0}, 0},
      {"gemm_lanes lanes=16 (NEON)", "gemm_lanes", "acc=fp32,lanes=16", "gemm", NULL, 3, 16, {0}, 0},
      {"gemm_lanes lanes=32 (AVX2)", "gemm_lanes", "acc=fp32,lanes=32", "gemm", NULL, 3, 32, {0}, 0},
      {"gemm_lanes lanes=64 (AVX-512)", "gemm_lanes", "acc=fp32,lanes=64", "gemm", NULL, 3, 64, {0}, 0},
      {"gemm_acc order=kahan (not a tree)", "gemm_acc", "acc=fp32,order=kahan", "gemm", NULL, 4, 0, {0}, 0},
  };
  size_t i;
  o->nown = sizeof list / sizeof list[0];
  for (i = 0; i < o->nown; i++) {
    o->own[i] = list[i];
    o->own[i].in = list[i].kind == 2 || list[i].kind == 3 ? &LOWP_FMT_FP16 : &LOWP_FMT_FP32;
  }
}

/* ------------------------------------------------------------ measure */

/* reveal kernel[params] on p; fills v (and *res when res is not NULL: the caller frees it) */
static int reveal_one(rv_t *v, lowp_reveal_t *res, const char *kernel, const char *params,
                      const lowp_problem_t *p, size_t validate, uint64_t seed) {
  lowp_subject_t s;
  lowp_reveal_t r;
  lowp_reveal_opts_t op;
  char err[400];
  size_t c;
  double t0;
  memset(v, 0, sizeof *v);
  memset(&op, 0, sizeof op);
  op.seed = seed;
  op.validate = validate;
  if ((v->st = lowp_exp_subject(&s, p, kernel, params, err, sizeof err)) != LOWP_OK) {
    fprintf(stderr, "lowp run order-revelation: %s[%s]: %s\n", kernel, params, err);
    return v->st;
  }
  t0 = now();
  v->st = lowp_reveal(&r, &s, p, &op, err, sizeof err);
  v->secs = now() - t0;
  lowp_subject_close(&s);
  if (v->st != LOWP_OK) {
    snprintf(v->note, sizeof v->note, "%s", err);
    return LOWP_OK; /* said in the row */
  }
  v->deterministic = r.deterministic;
  v->classes = r.n_classes;
  v->calls_total = r.calls;
  v->dmin = (size_t)-1;
  v->ratio_min = INFINITY;
  for (c = 0; c < r.n_classes; c++) {
    lowp_reveal_class_t *cl = &r.classes[c];
    v->probes += cl->probes;
    v->calls += cl->calls;
    v->validated += cl->validated;
    if (cl->probes > v->max_probes) v->max_probes = cl->probes;
    if (cl->calls > v->max_calls) v->max_calls = cl->calls;
    if (!cl->has_tree) {
      if (!v->note[0]) snprintf(v->note, sizeof v->note, "%s", cl->note);
      continue;
    }
    v->with_tree++;
    if (!v->arith[0]) snprintf(v->arith, sizeof v->arith, "%s", cl->arith);
    {
      size_t *d = malloc(cl->tree.n * sizeof *d), i;
      double *cf = malloc(cl->tree.n * sizeof *cf), sum = 0, u = lowp_format_u(&cl->tree.arith[0].acc);
      if (d && cf && lowp_tree_depths(d, &cl->tree) == LOWP_OK && lowp_tree_bound_coef(cf, &cl->tree) == LOWP_OK) {
        double ratio;
        for (i = 0; i < cl->tree.n; i++) {
          if (d[i] < v->dmin) v->dmin = d[i];
          if (d[i] > v->dmax) v->dmax = d[i];
          sum += cf[i];
        }
        /* recursive summation's gamma_{K-1} against this tree, terms of equal size */
        ratio = lowp_bound_gamma((double)(cl->tree.n - 1), u) * (double)cl->tree.n / sum;
        if (ratio < v->ratio_min) v->ratio_min = ratio;
        if (ratio > v->ratio_max) v->ratio_max = ratio;
      }
      free(d);
      free(cf);
    }
  }
  if (!r.deterministic) snprintf(v->note, sizeof v->note, "%s", r.msg);
  if (v->dmin == (size_t)-1) v->dmin = 0;
  v->max_class_secs = r.n_classes ? v->secs / (double)r.n_classes : v->secs;
  if (res) *res = r;
  else lowp_reveal_free(&r);
  return LOWP_OK;
}

/* the tree of own kernel w at K terms, from its definition */
static int own_tree(lowp_tree_t *t, const own_t *w, size_t K) {
  char err[200];
  if (w->kind == 0) {
    lowp_accum_t m;
    const char *ord = strstr(w->params, "order=") + 6;
    if (lowp_accum_parse(&m, ord, err, sizeof err)) return LOWP_EINVAL;
    m.acc = LOWP_FMT_FP32;
    return lowp_tree_from_accum(t, K, &m, strcmp(w->op, "sum") != 0);
  }
  if (w->kind == 1)
    return lowp_tree_from_fma_chain(t, K, &LOWP_FMT_FP16, LOWP_RND_NE, &LOWP_FMT_FP32, LOWP_RND_NE);
  if (w->kind == 2) {
    lowp_tc_model_t m;
    int st = lowp_tc_model_get(&m, strstr(w->params, "model=") + 6, w->in, &LOWP_FMT_FP32, err, sizeof err);
    return st ? st : lowp_tree_from_tc(t, K, &m, w->in, &LOWP_FMT_FP32);
  }
  return lowp_tree_from_lanes(t, K, w->lanes, &LOWP_FMT_FP32, LOWP_RND_NE);
}

static int measure_own(lowp_run_t *r, ord_t *o) {
  size_t i, c;
  for (i = 0; i < o->nown; i++) {
    own_t *w = &o->own[i];
    int sum = !strcmp(w->op, "sum");
    lowp_problem_t p = lowp_exp_problem(w->op, 1, sum ? 4 : 2, sum ? o->K : 2, o->K, w->in, &LOWP_FMT_FP32);
    lowp_reveal_t res;
    lowp_tree_t want;
    int st;
    lowp_run_progress(r, "%s, K = %zu", w->label, o->K);
    if ((st = reveal_one(&w->rv, &res, w->kernel, w->params, &p, o->validate, r->seed))) return 2;
    if (w->rv.st != LOWP_OK) continue;
    w->match = w->kind != 4 && res.n_classes > 0;
    if (w->kind != 4 && (st = own_tree(&want, w, o->K)) != LOWP_OK) {
      lowp_reveal_free(&res);
      fprintf(stderr, "lowp run order-revelation: %s: no tree from the definition (%s)\n", w->label,
              lowp_status_str(st));
      return 2;
    }
    for (c = 0; c < res.n_classes && w->match; c++)
      w->match = res.classes[c].has_tree && lowp_tree_same(&res.classes[c].tree, &want, 1, NULL);
    if (w->kind != 4) lowp_tree_free(&want);
    lowp_reveal_free(&res);
  }
  return 0;
}

/* two revelations give the same trees (shape and arithmetic) for the same classes */
static int same_trees(const lowp_reveal_t *a, const lowp_reveal_t *b) {
  size_t c;
  if (a->n_classes != b->n_classes || !a->deterministic || !b->deterministic) return 0;
  for (c = 0; c < a->n_classes; c++) {
    const lowp_reveal_class_t *x = &a->classes[c], *y = &b->classes[c];
    if (x->n_pos != y->n_pos || memcmp(x->pos, y->pos, x->n_pos * sizeof *x->pos) || !x->has_tree ||
        !y->has_tree || !lowp_tree_same(&x->tree, &y->tree, 0, NULL))
      return 0;
  }
  return 1;
}

static int measure_blas(lowp_run_t *r, ord_t *o) {
  static const char *const kern[NBLAS] = {"gemm_sgemm", "gemm_sgemm", "gemm_dgemm", "gemm_dgemm"};
  static const char *const thr[NBLAS] = {"threads=1", "threads=2", "threads=1", "threads=2"};
  size_t i, q;
  for (i = 0; i < o->nk; i++) {
    lowp_reveal_t res[NBLAS];
    for (q = 0; q < NBLAS; q++) {
      const lowp_format_t *f = q < 2 ? &LOWP_FMT_FP32 : &LOWP_FMT_FP64;
      lowp_problem_t p = lowp_exp_problem("gemm", 1, (size_t)o->bshape[0], (size_t)o->bshape[1], (size_t)o->k[i], f, f);
      memset(&res[q], 0, sizeof res[q]);
      lowp_run_progress(r, "OpenBLAS %s %s, K = %lld", kern[q], thr[q], o->k[i]);
      if (reveal_one(&o->blas[q][i], &res[q], kern[q], thr[q], &p, o->validate, r->seed)) return 2;
    }
    o->same_threads[0][i] = same_trees(&res[0], &res[1]);
    o->same_threads[1][i] = same_trees(&res[2], &res[3]);
    for (q = 0; q < NBLAS; q++) lowp_reveal_free(&res[q]);
  }
  return 0;
}

/* the backward error of gemm_lanes (acc) on seeded fp16 inputs, 8 x 8 x K */
static int lanes_bwd(double *bwd, const ord_t *o, size_t K, const char *acc, uint64_t seed) {
  lowp_problem_t p = lowp_exp_problem("gemm", 1, 8, 8, K, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
  lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
  lowp_check_inputs_t in;
  lowp_check_result_t res;
  char params[64], err[300];
  int st;
  (void)o;
  snprintf(params, sizeof params, "acc=%s,lanes=32", acc);
  if ((st = lowp_check_inputs_generate(&in, &p, &d, seed))) return st;
  st = lowp_exp_measure(&res, &p, "gemm_lanes", params, &in, err, sizeof err);
  lowp_check_inputs_free(&in);
  if (st) { fprintf(stderr, "lowp run order-revelation: gemm_lanes[%s]: %s\n", params, err); return st; }
  *bwd = res.max_bwd;
  lowp_check_result_free(&res);
  return LOWP_OK;
}

static int measure_verdicts(lowp_run_t *r, ord_t *o) {
  size_t i;
  int w;
  for (i = 0; i < o->nvk; i++) {
    size_t K = (size_t)o->vk[i];
    lowp_problem_t p = lowp_exp_problem("gemm", 1, 8, 8, K, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
    lowp_problem_t q = lowp_exp_problem("gemm", 1, 2, 2, K, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
    lowp_problem_t q32 = lowp_exp_problem("gemm", 1, 2, 2, K, &LOWP_FMT_FP32, &LOWP_FMT_FP32);
    lowp_accum_t rec;
    lowp_check_bound_t b;
    lowp_reveal_t res;
    lowp_reveal_bound_t rb;
    char err[200];
    lowp_run_progress(r, "verdicts, K = %zu", K);
    for (w = 0; w < 2; w++)
      if (lanes_bwd(&o->bwd[w][i], o, K, w ? "fp16" : "fp32", r->seed)) return 2;
    /* declared: recursive in fp32 (the README's declaration) */
    if (lowp_accum_parse(&rec, "recursive", err, sizeof err)) return 2;
    rec.acc = LOWP_FMT_FP32;
    if (lowp_check_bound(&b, &p, NULL, LOWP_BOUND_GAMMA, 0, &rec, NULL, 0)) return 2;
    o->g_rec[i] = b.value;
    /* the honest build's tree, probed with fp32 inputs: the kernel's order does not depend on
       the inputs' format (fp16 probes need M / unit split across both operands past K = 2^13:
       lib/check/reveal.h; one probe per row in its own column of B, slower) */
    if (reveal_one(&o->vrv[i], &res, "gemm_lanes", "acc=fp32,lanes=32", &q32, 2000, r->seed)) return 2;
    if (o->vrv[i].st != LOWP_OK) memset(&res, 0, sizeof res);
    if (lowp_reveal_bound(&rb, &res, &LOWP_FMT_FP32) != LOWP_OK) rb.bound = 0;
    o->g_tree[i] = rb.has_tree ? rb.bound : 0;
    o->depth_tree[i] = rb.depth;
    lowp_reveal_free(&res);
    /* "order": "revealed" on each kernel itself, at the check's formats (fp16 in) */
    for (w = 0; w < 2; w++) {
      if (reveal_one(&o->vrv[i], &res, "gemm_lanes", w ? "acc=fp16,lanes=32" : "acc=fp32,lanes=32",
                     &q, 2000, r->seed))
        return 2;
      o->limit[w][i] = o->vrv[i].st == LOWP_EUNSUPPORTED;
      if (o->vrv[i].st != LOWP_OK) memset(&res, 0, sizeof res);
      if (lowp_reveal_bound(&rb, &res, &LOWP_FMT_FP32) != LOWP_OK) rb.bound = 0;
      o->g_self[w][i] = rb.has_tree ? rb.bound : 0;
      if (!rb.has_tree)
        snprintf(o->self_note[w][i], sizeof o->self_note[w][i], "%s (bound 0): %.150s",
                 o->limit[w][i] ? "cannot probe" : "no tree", o->vrv[i].note[0] ? o->vrv[i].note : "not revealed");
      else
        snprintf(o->self_note[w][i], sizeof o->self_note[w][i], "tree of depth %zu, additions of %d bits revealed",
                 rb.depth, rb.narrowest);
      lowp_reveal_free(&res);
    }
  }
  return 0;
}

/* one row of the NumPy script's output into w (the revealed trees' bound: lowp_reveal_bound in fp32) */
static void numpy_row(np_t *w, const cJSON *row) {
  const cJSON *b = cJSON_GetObjectItem(row, "bounds"), *d = cJSON_GetObjectItem(row, "depth");
  const cJSON *rv = cJSON_GetObjectItem(row, "reveal"), *x;
#define NUM(obj, key) (cJSON_IsNumber(x = cJSON_GetObjectItem(obj, key)) ? x->valuedouble : 0.0)
  snprintf(w->what, sizeof w->what, "%s", cJSON_IsString(x = cJSON_GetObjectItem(row, "what")) ? x->valuestring : "?");
  snprintf(w->arith, sizeof w->arith, "%s", cJSON_IsString(x = cJSON_GetObjectItem(row, "arith")) ? x->valuestring : "");
  w->K = (size_t)NUM(row, "K");
  w->classes = (size_t)NUM(row, "classes");
  w->probes = (size_t)NUM(row, "class_probes");
  w->calls = (size_t)NUM(row, "calls");
  w->validated = (size_t)NUM(row, "validated");
  w->has_tree = cJSON_IsTrue(cJSON_GetObjectItem(row, "has_tree"));
  w->secs = NUM(row, "seconds");
  w->bwd = NUM(row, "backward_error");
  w->b_rec = NUM(cJSON_GetObjectItem(b, "recursive"), "bound");
  w->b_pw = NUM(cJSON_GetObjectItem(b, "pairwise"), "bound");
  if (cJSON_GetArraySize(d) == 2) {
    w->dmin = (size_t)cJSON_GetArrayItem(d, 0)->valuedouble;
    w->dmax = (size_t)cJSON_GetArrayItem(d, 1)->valuedouble;
  }
#undef NUM
  if (w->has_tree && rv) {
    char *text = cJSON_PrintUnformatted(rv), err[200];
    lowp_reveal_t res;
    lowp_reveal_bound_t rb;
    if (text && lowp_reveal_from_json(&res, text, err, sizeof err) == LOWP_OK) {
      if (lowp_reveal_bound(&rb, &res, &LOWP_FMT_FP32) == LOWP_OK && rb.has_tree) {
        w->b_tree = rb.bound;
        w->depth_tree = rb.depth;
      }
      lowp_reveal_free(&res);
    }
    free(text);
  }
}

/* NumPy's sum and matmul, revealed through lowp.reveal by Debian's python3 (the script
   experiments/order_revelation_numpy.py); without numpy (or lowp's Python module, or
   liblowp.so beside this lowp) the part is skipped and says why */
static int measure_numpy(lowp_run_t *r, ord_t *o) {
  char exe[4096], lib[4200], val[32], seed[32], *cap, *argv[9], *slash;
  const char *py = lowp_run_param(r, "python");
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  cJSON *res = NULL, *rows, *row;
  int rc = 0, st;
  const size_t cap_len = (size_t)64 << 20; /* the revealed trees come back whole */
  lowp_run_progress(r, "NumPy's sum and matmul (%s)", py);
  if (n <= 0 || !(slash = strrchr((exe[n] = '\0', exe), '/'))) {
    snprintf(o->np_skipped, sizeof o->np_skipped, "the path of this lowp is unknown (no liblowp.so to load)");
    return 0;
  }
  *slash = '\0';
  snprintf(lib, sizeof lib, "%s/liblowp.so", exe);
  if (access(lib, R_OK) != 0) {
    snprintf(o->np_skipped, sizeof o->np_skipped, "no liblowp.so beside this lowp (lowp's Python module needs it)");
    return 0;
  }
  if (!(cap = malloc(cap_len))) return 2;
  snprintf(val, sizeof val, "%zu", o->validate);
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
  argv[0] = (char *)py;
  argv[1] = LOWP_SOURCE_DIR "/experiments/order_revelation_numpy.py";
  argv[2] = lib;
  argv[3] = LOWP_SOURCE_DIR "/python";
  argv[4] = (char *)lowp_run_param(r, "numpy_sum_k");
  argv[5] = (char *)lowp_run_param(r, "numpy_matmul_k");
  argv[6] = val;
  argv[7] = seed;
  argv[8] = NULL;
  st = lowp_spawn(&rc, argv, NULL, NULL, cap, cap_len);
  if (st == LOWP_OK && rc == 0) res = cJSON_Parse(cap);
  free(cap);
  if (!res) {
    snprintf(o->np_skipped, sizeof o->np_skipped, "%s did not run the script (exit status %d)%s", py, rc,
             rc == 127 ? ": no such program" : "");
    return 0;
  }
  if (cJSON_IsString(cJSON_GetObjectItem(res, "skipped")) || cJSON_IsString(cJSON_GetObjectItem(res, "error"))) {
    const cJSON *why = cJSON_GetObjectItem(res, "skipped");
    snprintf(o->np_skipped, sizeof o->np_skipped, "%s%.250s", why ? "" : "the script failed: ",
             (why ? why : cJSON_GetObjectItem(res, "error"))->valuestring);
    cJSON_Delete(res);
    return 0;
  }
  snprintf(o->np_version, sizeof o->np_version, "%s",
           cJSON_IsString(cJSON_GetObjectItem(res, "numpy")) ? cJSON_GetObjectItem(res, "numpy")->valuestring : "?");
  rows = cJSON_GetObjectItem(res, "rows");
  cJSON_ArrayForEach(row, rows) {
    if (o->nnp == NNP) break;
    numpy_row(&o->np[o->nnp++], row);
  }
  cJSON_Delete(res);
  return 0;
}

/* -------------------------------------------------------------- judge */

static int judge(lowp_run_t *r, const ord_t *o) {
  cJSON *v = cJSON_AddArrayToObject(r->results, "verdicts");
  char m[400];
  size_t i, q, nmatch = 0, nown_tree = 0, nb_ok = 0, nb = 0, pass_rec = 0, big = 0, caught = 0, honest = 0, nlim = 0;
  long long klim = 0;
  char qual[300];
  int ok = 1, kahan_none = 1;
  for (i = 0; i < o->nown; i++) {
    if (o->own[i].kind == 4) { kahan_none = o->own[i].rv.with_tree == 0; continue; }
    nown_tree++;
    nmatch += o->own[i].match;
  }
  snprintf(m, sizeof m, "%zu of %zu kernels at K = %zu: the revealed tree equals the definition node for node, "
           "its twin bit-exact; Kahan's sum (a DAG) %s", nmatch, nown_tree, o->K,
           kahan_none ? "gets no tree" : "WAS GIVEN A TREE");
  lowp_result_verdict(v, "lowp_reveal finds the order of every lowp kernel that is a tree, and no tree for Kahan's sum",
                      "issue 32, numbers to meet", m, nmatch == nown_tree && kahan_none ? "holds" : "wrong");
  ok &= nmatch == nown_tree && kahan_none;
  for (i = 0; i < o->nk; i++)
    for (q = 0; q < NBLAS; q++) {
      const rv_t *b = &o->blas[q][i];
      nb++;
      nb_ok += b->st == LOWP_OK && b->deterministic && b->classes > 0 && b->with_tree == b->classes;
    }
  snprintf(m, sizeof m, "%zu of %zu revelations (sgemm, dgemm; 1 and 2 threads; %zu values of K) give every "
           "position class a tree whose twin is bit-exact", nb_ok, nb, o->nk);
  lowp_result_verdict(v, "OpenBLAS's sgemm and dgemm are revealed, every position class, 1 and 2 threads",
                      "issue 32, item 5", m, nb_ok == nb ? "holds" : "wrong");
  ok &= nb_ok == nb;
  for (i = 0; i < o->nvk; i++) {
    if (o->vk[i] >= 4096) { big++; pass_rec += o->bwd[1][i] <= o->g_rec[i]; }
    caught += o->g_tree[i] > 0 && o->bwd[1][i] > o->g_tree[i] && o->bwd[1][i] > o->g_self[1][i];
    honest += o->bwd[0][i] <= o->g_tree[i] && (o->limit[0][i] || o->bwd[0][i] <= o->g_self[0][i]);
    if (o->limit[0][i]) { nlim++; klim = o->vk[i]; }
  }
  snprintf(m, sizeof m,
           "the fp16-accumulating lanes kernel passes the declared recursive bound at %zu of %zu K >= 4096",
           pass_rec, big);
  lowp_result_verdict(v, "With \"order\": \"recursive\" the fp16-accumulation bug passes the gamma rule at K >= 4096",
                      "issue 32", m, big && pass_rec == big ? "holds" : "wrong");
  snprintf(m, sizeof m,
           "caught at %zu of %zu K by the revealed tree's bound and by \"order\": \"revealed\"; the honest "
           "kernel passes both at %zu of %zu", caught, o->nvk, honest, o->nvk);
  snprintf(qual, sizeof qual,
           "holds with a qualification: at %zu K (up to %lld) fp16 inputs cannot hold the probes' M / unit, so "
           "\"order\": \"revealed\" at the check's own formats gives bound 0 there and fails the honest kernel "
           "too; the tree revealed with fp32 inputs (the same kernel) holds", nlim, klim);
  lowp_result_verdict(v, "The revealed order catches the bug at every K and passes the honest kernel", "issue 32", m,
                      caught == o->nvk && honest == o->nvk ? (nlim ? qual : "holds") : "wrong");
  ok &= caught == o->nvk && honest == o->nvk;
  {
    size_t np_ok = 0;
    for (i = 0; i < o->nnp; i++) np_ok += o->np[i].has_tree && o->np[i].bwd <= o->np[i].b_tree;
    if (o->np_skipped[0]) snprintf(m, sizeof m, "skipped: %s", o->np_skipped);
    else
      snprintf(m, sizeof m, "numpy %s: %zu of %zu calls (sum, matmul) get a validated tree for every class, and "
               "their error is within the revealed tree's bound", o->np_version, np_ok, o->nnp);
    lowp_result_verdict(v, "NumPy's sum and matmul are revealed, and hold their revealed trees' bounds",
                        "issue 32, item 5", m,
                        o->np_skipped[0] ? "not checkable here" : np_ok == o->nnp && o->nnp ? "holds" : "wrong");
    ok &= o->np_skipped[0] || (np_ok == o->nnp && o->nnp);
  }
  lowp_result_key(r->results, "own_match", "lowp kernels revealed node for node", (double)nmatch);
  lowp_result_key(r->results, "blas_ok", "OpenBLAS revelations with every class validated", (double)nb_ok);
  return ok ? 0 : 1;
}

/* ------------------------------------------------------------- render */

/* the summary's Markdown table head: ### title, the columns, the rule */
static void md_head(FILE *f, const char *title, const char *const *cols, size_t n) {
  size_t i;
  fprintf(f, "\n### %s\n\n|", title);
  for (i = 0; i < n; i++) fprintf(f, " %s |", cols[i]);
  fprintf(f, "\n|");
  for (i = 0; i < n; i++) fprintf(f, "---|");
  fprintf(f, "\n");
}

/* a table of results.json and its head in the summary */
static cJSON *table_open(lowp_run_t *r, cJSON *tables, const char *title, const char *const *cols, size_t n) {
  md_head(r->summary, title, cols, n);
  return lowp_result_table(tables, title, cols, n);
}

static const char *pct(char *buf, size_t len, double x, double b) {
  if (b > 0) snprintf(buf, len, "%.0f%%", 100 * x / b);
  else snprintf(buf, len, "%s", x > 0 ? "fails (bound 0)" : "0");
  return buf;
}

static void render_own(lowp_run_t *r, const ord_t *o, cJSON *tables) {
  static const char *const cols[] = {"kernel", "K", "classes", "probes", "calls (order)", "calls (all)",
                                     "validated", "leaf depth", "tighter than recursive", "definition",
                                     "arithmetic found"};
  char title[200], c[8][64];
  cJSON *rows;
  size_t i;
  snprintf(title, sizeof title, "lowp's own kernels revealed at K = %zu (2 x 2 GEMM; sum: 4 rows)", o->K);
  rows = table_open(r, tables, title, cols, 11);
  for (i = 0; i < o->nown; i++) {
    const own_t *w = &o->own[i];
    const char *cells[11];
    snprintf(c[0], sizeof c[0], "%zu", o->K);
    snprintf(c[1], sizeof c[1], "%zu", w->rv.classes);
    snprintf(c[2], sizeof c[2], "%zu", w->rv.probes);
    snprintf(c[3], sizeof c[3], "%zu", w->rv.calls);
    snprintf(c[4], sizeof c[4], "%zu", w->rv.calls_total);
    snprintf(c[5], sizeof c[5], "%zu", w->rv.validated);
    snprintf(c[6], sizeof c[6], "%zu..%zu", w->rv.dmin, w->rv.dmax);
    snprintf(c[7], sizeof c[7], "%.3gx", w->rv.ratio_max);
    cells[0] = w->label;
    cells[1] = c[0]; cells[2] = c[1]; cells[3] = c[2]; cells[4] = c[3]; cells[5] = c[4]; cells[6] = c[5];
    cells[7] = w->rv.with_tree ? c[6] : "-";
    cells[8] = w->rv.with_tree ? c[7] : "-";
    cells[9] = w->kind == 4 ? (w->rv.with_tree ? "GIVEN A TREE" : "no tree (not one)")
                            : (w->match ? "equal node for node" : "DIFFERS");
    cells[10] = w->rv.with_tree ? w->rv.arith : w->rv.note;
    lowp_result_add_row_md(rows, r->summary, cells, 11);
  }
}

static int render_blas(lowp_run_t *r, const ord_t *o, cJSON *tables, cJSON *plots) {
  static const char *const cols[] = {"routine", "threads", "K", "classes", "probes (largest class)",
                                     "calls (largest class)", "calls (all)", "validated", "leaf depth",
                                     "tighter than recursive", "same trees on 1 and 2 threads"};
  static const char *const names[NBLAS] = {"OpenBLAS sgemm", "OpenBLAS sgemm", "OpenBLAS dgemm", "OpenBLAS dgemm"};
  char title[200], c[9][64];
  cJSON *rows;
  size_t i, q;
  FILE *csv = fopen(lowp_run_path(r, "blas.csv"), "w"), *tim = fopen(lowp_run_path(r, "timing.csv"), "w");
  lowp_plot_t pl = {"OpenBLAS: probes of the largest position class per K", "K (terms per output)",
                    "probes", 1, 1, NULL};
  lowp_series_t sr[NBLAS] = {{"blas.csv", 1, 2, "sgemm, 1 thread", NULL, NULL, 0, 0},
                             {"blas.csv", 1, 3, "sgemm, 2 threads", NULL, NULL, 0, 1},
                             {"blas.csv", 1, 4, "dgemm, 1 thread", NULL, NULL, 0, 0},
                             {"blas.csv", 1, 5, "dgemm, 2 threads", NULL, NULL, 0, 1}};
  int st;
  if (!csv || !tim) {
    if (csv) fclose(csv);
    if (tim) fclose(tim);
    fprintf(stderr, "lowp run order-revelation: cannot write blas.csv or timing.csv\n");
    return 2;
  }
  snprintf(title, sizeof title, "OpenBLAS revealed: %lld x %lld outputs, K from %lld to %lld", o->bshape[0],
           o->bshape[1], o->k[0], o->k[o->nk - 1]);
  rows = table_open(r, tables, title, cols, 11);
  fprintf(csv, "k,sgemm_t1_probes,sgemm_t2_probes,dgemm_t1_probes,dgemm_t2_probes\n");
  fprintf(tim, "what,threads,k,classes,seconds,seconds_per_class\n");
  for (i = 0; i < o->nk; i++) {
    fprintf(csv, "%lld", o->k[i]);
    for (q = 0; q < NBLAS; q++) {
      const rv_t *b = &o->blas[q][i];
      const char *cells[11];
      snprintf(c[0], sizeof c[0], "%zu", q % 2 + 1);
      snprintf(c[1], sizeof c[1], "%lld", o->k[i]);
      snprintf(c[2], sizeof c[2], "%zu", b->classes);
      snprintf(c[3], sizeof c[3], "%zu", b->max_probes);
      snprintf(c[4], sizeof c[4], "%zu", b->max_calls);
      snprintf(c[5], sizeof c[5], "%zu", b->calls_total);
      snprintf(c[6], sizeof c[6], "%zu", b->validated);
      snprintf(c[7], sizeof c[7], "%zu..%zu", b->dmin, b->dmax);
      snprintf(c[8], sizeof c[8], "%.3g..%.3gx", b->ratio_min, b->ratio_max);
      cells[0] = names[q];
      cells[1] = c[0]; cells[2] = c[1]; cells[3] = c[2]; cells[4] = c[3]; cells[5] = c[4]; cells[6] = c[5];
      cells[7] = c[6];
      cells[8] = b->with_tree ? c[7] : "-";
      cells[9] = b->with_tree ? c[8] : (b->note[0] ? b->note : "-");
      cells[10] = q % 2 ? (o->same_threads[q / 2][i] ? "yes" : "no") : "";
      lowp_result_add_row_md(rows, r->summary, cells, 11);
      fprintf(csv, ",%zu", b->max_probes);
      fprintf(tim, "%s,%zu,%lld,%zu,%.3f,%.3f\n", names[q], q % 2 + 1, o->k[i], b->classes, b->secs, b->max_class_secs);
    }
    fprintf(csv, "\n");
  }
  for (i = 0; i < o->nown; i++)
    fprintf(tim, "%s,1,%zu,%zu,%.3f,%.3f\n", o->own[i].label, o->K, o->own[i].rv.classes, o->own[i].rv.secs,
            o->own[i].rv.max_class_secs);
  for (i = 0; i < o->nnp; i++) /* the revelation and the validation, Python's callbacks included */
    fprintf(tim, "%s,1,%zu,%zu,%.3f,%.3f\n", o->np[i].what, o->np[i].K, o->np[i].classes, o->np[i].secs,
            o->np[i].classes ? o->np[i].secs / (double)o->np[i].classes : o->np[i].secs);
  fclose(csv);
  fclose(tim);
  if ((st = lowp_plot(r->outdir, "blas_probes", &pl, sr, NBLAS)) != LOWP_OK) return lowp_run_plot_failed(r, st);
  lowp_result_plot(plots, "blas_probes.png",
                   "Probes FPRev needs for the largest position class of OpenBLAS's sgemm and dgemm (1 thread solid, "
                   "2 dashed), per K: about 3K for a blocked order of register-wide FMA chains, batched into a few "
                   "calls per class (timing.csv holds the wall time of each revelation on this machine).");
  return 0;
}

static void render_verdicts(lowp_run_t *r, const ord_t *o, cJSON *tables) {
  static const char *const cols[] = {"K", "kernel", "backward error", "declared recursive: bound",
                                     "% of it", "revealed (honest build, fp32 probes): bound", "% of it",
                                     "\"order\": \"revealed\" on the kernel", "% of it"};
  char title[200], c[8][64];
  cJSON *rows;
  size_t i;
  int w;
  snprintf(title, sizeof title, "The verdict: gemm_lanes (32 lanes, fp16 in, fp32 out, 8 x 8), honest (fp32 lanes) "
           "and bug (fp16 lanes), gamma bounds in fp32");
  rows = table_open(r, tables, title, cols, 9);
  for (i = 0; i < o->nvk; i++)
    for (w = 0; w < 2; w++) {
      const char *cells[9];
      snprintf(c[0], sizeof c[0], "%lld", o->vk[i]);
      snprintf(c[1], sizeof c[1], "%.3g", o->bwd[w][i]);
      snprintf(c[2], sizeof c[2], "%.3g", o->g_rec[i]);
      pct(c[3], sizeof c[3], o->bwd[w][i], o->g_rec[i]);
      snprintf(c[4], sizeof c[4], "%.3g (depth %zu)", o->g_tree[i], o->depth_tree[i]);
      pct(c[5], sizeof c[5], o->bwd[w][i], o->g_tree[i]);
      pct(c[7], sizeof c[7], o->bwd[w][i], o->g_self[w][i]);
      cells[0] = c[0];
      cells[1] = w ? "bug: fp16 lanes" : "honest: fp32 lanes";
      cells[2] = c[1]; cells[3] = c[2]; cells[4] = c[3]; cells[5] = c[4]; cells[6] = c[5];
      cells[7] = o->self_note[w][i];
      cells[8] = c[7];
      lowp_result_add_row_md(rows, r->summary, cells, 9);
    }
}

static void render_numpy(lowp_run_t *r, const ord_t *o, cJSON *tables) {
  static const char *const cols[] = {"call", "K", "classes", "probes", "calls (all)", "validated", "leaf depth",
                                     "arithmetic found", "backward error", "declared recursive: bound (% of it)",
                                     "declared pairwise: bound (% of it)", "revealed tree: bound (% of it)"};
  char title[200], c[10][80], p1[32], p2[32], p3[32];
  cJSON *rows;
  size_t i;
  if (o->np_skipped[0]) {
    fprintf(r->summary, "\n### NumPy\n\nSkipped: %s.\n", o->np_skipped);
    return;
  }
  snprintf(title, sizeof title, "NumPy %s revealed: numpy.sum (1 row, fp32) and numpy.matmul (2 x 2, fp32); gamma "
           "bounds in fp32, errors on seeded normal inputs", o->np_version);
  rows = table_open(r, tables, title, cols, 12);
  for (i = 0; i < o->nnp; i++) {
    const np_t *w = &o->np[i];
    const char *cells[12];
    snprintf(c[0], sizeof c[0], "%zu", w->K);
    snprintf(c[1], sizeof c[1], "%zu", w->classes);
    snprintf(c[2], sizeof c[2], "%zu", w->probes);
    snprintf(c[3], sizeof c[3], "%zu", w->calls);
    snprintf(c[4], sizeof c[4], "%zu", w->validated);
    snprintf(c[5], sizeof c[5], "%zu..%zu", w->dmin, w->dmax);
    snprintf(c[6], sizeof c[6], "%.3g", w->bwd);
    snprintf(c[7], sizeof c[7], "%.3g (%s)", w->b_rec, pct(p1, sizeof p1, w->bwd, w->b_rec));
    snprintf(c[8], sizeof c[8], "%.3g (%s)", w->b_pw, pct(p2, sizeof p2, w->bwd, w->b_pw));
    snprintf(c[9], sizeof c[9], "%.3g (%s; depth %zu)", w->b_tree, pct(p3, sizeof p3, w->bwd, w->b_tree), w->depth_tree);
    cells[0] = w->what;
    cells[1] = c[0]; cells[2] = c[1]; cells[3] = c[2]; cells[4] = c[3]; cells[5] = c[4];
    cells[6] = w->has_tree ? c[5] : "-";
    cells[7] = w->arith;
    cells[8] = c[6]; cells[9] = c[7];
    cells[10] = w->b_pw > 0 ? c[8] : "-";
    cells[11] = w->has_tree ? c[9] : "no tree";
    lowp_result_add_row_md(rows, r->summary, cells, 12);
  }
}

static int render(lowp_run_t *r, const ord_t *o) {
  cJSON *tables = cJSON_AddArrayToObject(r->results, "tables");
  cJSON *plots = cJSON_AddArrayToObject(r->results, "plots");
  char ans[700], a[64], b[64];
  size_t i, last = o->nvk - 1;
  int st;
  render_own(r, o, tables);
  if ((st = render_blas(r, o, tables, plots))) return st;
  render_verdicts(r, o, tables);
  render_numpy(r, o, tables);
  for (i = 0; i < o->nvk; i++)
    if (o->vk[i] >= 4096) { last = i; break; }
  snprintf(ans, sizeof ans,
           "Every lowp kernel that is a tree is revealed node for node at K = %zu (Kahan's sum gets none); OpenBLAS's "
           "sgemm and dgemm are revealed class by class with bit-exact twins. At K = %lld the fp16-accumulating "
           "lanes kernel reaches %s of the declared recursive bound (it passes), but %s of the revealed tree's: the "
           "revealed order catches it.",
           o->K, o->vk[last], pct(a, sizeof a, o->bwd[1][last], o->g_rec[last]),
           pct(b, sizeof b, o->bwd[1][last], o->g_tree[last]));
  cJSON_AddStringToObject(r->results, "answer", ans);
  fprintf(r->summary, "\n**Answer.** %s\n", ans);
  return 0;
}

static int run(lowp_run_t *r) {
  ord_t *o = calloc(1, sizeof *o);
  int st, jd;
  if (!o) return 2;
  declare(r, o);
  own_list(o);
  st = measure_own(r, o);
  if (!st) st = measure_blas(r, o);
  if (!st) st = measure_verdicts(r, o);
  if (!st) st = measure_numpy(r, o);
  if (st) { free(o); return 2; }
  jd = judge(r, o);
  st = render(r, o);
  free(o);
  return st ? st : jd;
}

const lowp_experiment_t lowp_exp_order_revelation = {
    "order-revelation",
    "Does lowp reveal the summation order a kernel really uses (its own kernels, OpenBLAS, a SIMD dot product), "
    "and what does the revealed order change in a check's verdict?",
    "lowp_reveal (FPRev probes: +M and -M among units, batched one per GEMM row) on gemm_acc in every order, gemm_tc "
    "(h100, a100), gemm_lanes (16, 32, 64 lanes) at K = {k}, each revealed tree compared node for node with the "
    "tree of the kernel's definition; OpenBLAS sgemm and dgemm on 1 and 2 threads at K = {blas_k} ({blas_shape} "
    "outputs), every position class validated as a bit-exact twin; gemm_lanes with fp32 and fp16 lanes at K = "
    "{verdict_k} against the gamma bound of the declared recursive order and of the revealed tree (fp32); NumPy's "
    "sum (K = {numpy_sum_k}) and matmul (K = {numpy_matmul_k}) revealed through lowp.reveal in {python}",
    "every tree equal to its definition; every OpenBLAS class validated; the fp16-accumulation bug passes the "
    "recursive bound at K >= 4096 and fails the revealed tree's at every K, where the honest kernel passes; NumPy's "
    "sum a pairwise tree, its matmul OpenBLAS's order, both within their trees' bounds",
    params, run, check};
