/* tcheck_rules -- lib/check/pipeline.c: inputs, measurement, split, and every rule passing and failing */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "check/pipeline.h"
#include "exact/exact.h"
#include "model/accum.h"
#include "status.h"
#include "testutil.h"

/* ------------------------------------------------ a subject made here */

typedef enum { EXACT, PERTURB, NANAT, ACCUM, FAILS, CONV16 } mode_t_;

typedef struct {
  mode_t_ mode;
  double ulps;     /* PERTURB: add this many ulps of the output at `at` */
  size_t at;
  lowp_accum_t acc;/* ACCUM: gemm/dot/sum computed in this model */
} tctx_t;

static int t_run(const lowp_subject_t *s, double *const *out, const double *const *in,
                 const lowp_problem_t *p, char *err, size_t errlen) {
  const tctx_t *c = s->ctx;
  int st;
  if (c->mode == FAILS) {
    snprintf(err, errlen, "plugin crashed (signal 11, SIGSEGV)");
    return LOWP_EIO;
  }
  if (c->mode == ACCUM) {
    size_t i, j, b;
    const lowp_dims_t *d = &p->dims;
    if (p->op->id != LOWP_OP_GEMM) return LOWP_EUNSUPPORTED;
    for (b = 0; b < d->batch; b++)
      for (i = 0; i < d->m; i++)
        for (j = 0; j < d->n; j++) {
          double v;
          lowp_accum_dot(&v, in[0] + b * d->m * d->k + i * d->k, 1, in[1] + b * d->k * d->n + j,
                         d->n, d->k, &c->acc);
          lowp_round_f64(&out[0][b * d->m * d->n + i * d->n + j], v, &p->out, NULL, LOWP_RND_NE);
        }
    return LOWP_OK;
  }
  if (c->mode == CONV16) { /* input 1 read as fp16 (rne), then exact */
    size_t n = p->dims.batch * p->dims.k * p->dims.n, i;
    double *b16 = malloc(n * sizeof *b16);
    const double *ins[2] = {in[0], b16};
    if (!b16) return LOWP_ENOMEM;
    for (i = 0; i < n; i++) lowp_round_f64(&b16[i], in[1][i], &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
    st = lowp_op_exact(out, NULL, ins, p, &p->out, LOWP_RND_NE);
    free(b16);
    return st;
  }
  st = lowp_op_exact(out, NULL, in, p, &p->out, LOWP_RND_NE);
  if (st) return st;
  if (c->mode == PERTURB) out[0][c->at] += c->ulps * lowp_ulp(out[0][c->at], &p->out);
  if (c->mode == NANAT) out[0][c->at] = NAN;
  return LOWP_OK;
}

static lowp_subject_t subject(tctx_t *c, const char *name) {
  lowp_subject_t s;
  memset(&s, 0, sizeof s);
  snprintf(s.name, sizeof s.name, "test %s", name);
  s.kind = "kernel";
  s.run = t_run;
  s.ctx = c;
  if (c->mode == ACCUM) {
    s.has_accum = 1;
    s.accum = c->acc;
  }
  return s;
}

static lowp_problem_t problem(const char *op, size_t batch, size_t m, size_t n, size_t k,
                              const lowp_format_t *in, const lowp_format_t *out) {
  lowp_problem_t p;
  int i;
  memset(&p, 0, sizeof p);
  p.op = lowp_op_by_name(op);
  p.dims.batch = batch;
  p.dims.m = m;
  p.dims.n = n;
  p.dims.k = k;
  for (i = 0; i < LOWP_OP_MAXIO; i++) p.in[i] = *in;
  p.out = *out;
  p.eps = 1e-5;
  return p;
}

static lowp_check_result_t measure(const lowp_problem_t *p, lowp_subject_t *s,
                                   lowp_check_inputs_t *in) {
  lowp_check_result_t r;
  char err[300];
  int st = lowp_check_measure(&r, p, s, in, NULL, err, sizeof err);
  lowp_test_check(st == LOWP_OK, "measure %s: %s", s->name, err);
  return r;
}

static lowp_verdict_t eval(const lowp_rule_t *rule, const lowp_check_result_t *r,
                           const lowp_subject_t *s) {
  lowp_verdict_t v;
  int st = lowp_check_rule_eval(&v, rule, r, s);
  lowp_test_check(st == LOWP_OK, "rule eval %d: status %d (%s)", rule->kind, st, v.msg);
  return v;
}

/* ------------------------------------------------------------- tests */

static void test_inputs(void) {
  lowp_problem_t p = problem("gemm", 2, 5, 6, 7, &LOWP_FMT_BF16, &LOWP_FMT_FP32);
  lowp_check_inputs_t a, b;
  lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
  size_t i;
  int ok = 1, in_fmt = 1, rounded = 1;
  omp_set_num_threads(1);
  lowp_test_check(lowp_check_inputs_generate(&a, &p, &d, 42) == 0, "generate");
  omp_set_num_threads(2);
  lowp_test_check(lowp_check_inputs_generate(&b, &p, &d, 42) == 0, "generate again");
  for (i = 0; i < a.count[0]; i++) {
    double r;
    if (memcmp(&a.x[0][i], &b.x[0][i], sizeof(double))) ok = 0;
    lowp_round_f64(&r, a.x[0][i], &LOWP_FMT_BF16, NULL, LOWP_RND_NE);
    if (r != a.x[0][i]) in_fmt = 0;
    lowp_round_f64(&r, a.data[0][i], &LOWP_FMT_BF16, NULL, LOWP_RND_NE);
    if (r != a.x[0][i]) rounded = 0;
  }
  lowp_test_check(ok && a.count[0] == 70 && a.count[1] == 84, "same seed, same bytes, any threads");
  lowp_test_check(in_fmt && rounded, "inputs are the fp64 draws rounded rne to bf16");
  lowp_test_check(memcmp(a.x[0], a.x[1], 70 * sizeof(double)) != 0, "inputs use distinct streams");
  lowp_check_inputs_free(&a);
  lowp_check_inputs_free(&b);
  /* xent targets: integers in [0, n) */
  p = problem("xent", 1, 50, 7, 1, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
  p.in[1] = LOWP_FMT_FP64;
  lowp_test_check(lowp_check_inputs_generate(&a, &p, &d, 3) == 0, "generate xent");
  ok = 1;
  for (i = 0; i < 50; i++)
    if (!(a.x[1][i] >= 0 && a.x[1][i] < 7 && a.x[1][i] == floor(a.x[1][i]))) ok = 0;
  lowp_test_check(ok && a.data[1] == NULL, "xent targets are class indices");
  lowp_check_inputs_free(&a);
}

static void test_measure_split(void) {
  /* an exact subject: compute error 0; fp16 inputs from fp64 data: the
     input-rounding part is where all the difference from the data is */
  lowp_problem_t p = problem("gemm", 1, 8, 8, 64, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
  lowp_check_inputs_t in;
  lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
  tctx_t c = {EXACT, 0, 0, {0}};
  lowp_subject_t s = subject(&c, "exact");
  lowp_check_result_t r;
  lowp_check_inputs_generate(&in, &p, &d, 5);
  r = measure(&p, &s, &in);
  lowp_test_check(r.max_ulp <= 0.5 && r.out[0].ulp_compute <= 0.5,
                  "correctly rounded subject: <= 0.5 ulp compute (%g)", r.max_ulp);
  lowp_test_check(r.out[0].max_ulp_input > 1, "fp16 inputs: input part > 1 ulp of fp32 (%g)",
                  r.out[0].max_ulp_input);
  lowp_test_check(r.out[0].exact_data != NULL && r.out[0].absab != NULL, "data and |A||B| kept");
  lowp_test_check(!r.gamma.have, "no declared method: no bound");
  lowp_check_result_free(&r);
  /* a perturbed subject: the worst element and the split at it */
  c.mode = PERTURB;
  c.ulps = 3;
  c.at = 19;
  r = measure(&p, &s, &in);
  lowp_test_check(r.out[0].worst == 19 && fabs(r.max_ulp - 3) <= 0.5, "3 ulps at element 19 (%g)",
                  r.max_ulp);
  lowp_test_check(r.out[0].ulp_compute == r.max_ulp &&
                  r.out[0].ulp_total <= r.out[0].ulp_input + r.out[0].ulp_compute + 1e-9,
                  "split: total <= input + compute");
  {
    char idx[64], sum[200];
    lowp_check_index_str(idx, sizeof idx, &p, 0, 19);
    lowp_check_inputs_summary(sum, sizeof sum, &p, &in, 0, 19);
    lowp_test_check(!strcmp(idx, "C[2][3]"), "index text %s", idx);
    lowp_test_check(strstr(sum, "k=64") != NULL, "inputs summary %s", sum);
  }
  lowp_check_result_free(&r);
  lowp_check_inputs_free(&in);
}

static void test_rules(void) {
  lowp_problem_t p = problem("gemm", 1, 6, 5, 300, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
  lowp_check_inputs_t in;
  lowp_dist_t d = {LOWP_DIST_UNIFORM01, 0, 0};
  tctx_t good = {ACCUM, 0, 0, {0}}, bug = {ACCUM, 0, 0, {0}}, ex = {EXACT, 0, 0, {0}};
  tctx_t pert = {PERTURB, 5, 7, {0}}, nan = {NANAT, 0, 4, {0}};
  lowp_subject_t sg, sb, se, sp, sn;
  lowp_check_result_t rg, rb, re, rp, rn;
  lowp_rule_t rule;
  lowp_verdict_t v;
  lowp_accum_parse(&good.acc, "recursive,acc=fp32,fma=1", NULL, 0);
  /* the planted bug: fp16 accumulation, while it declares fp32 */
  lowp_accum_parse(&bug.acc, "recursive,acc=fp16,fma=1", NULL, 0);
  sg = subject(&good, "fp32 acc");
  sb = subject(&bug, "fp16 acc");
  sb.accum = good.acc; /* what it claims */
  se = subject(&ex, "exact");
  sp = subject(&pert, "perturbed");
  sn = subject(&nan, "nan");
  lowp_check_inputs_generate(&in, &p, &d, 11);
  rg = measure(&p, &sg, &in);
  rb = measure(&p, &sb, &in);
  re = measure(&p, &se, &in);
  rp = measure(&p, &sp, &in);
  rn = measure(&p, &sn, &in);
  lowp_test_check(rg.gamma.have && rg.prob.have && !rg.model.have, "declared accumulation: bounds");

  /* max_ulp */
  memset(&rule, 0, sizeof rule);
  rule.kind = LOWP_RULE_MAX_ULP;
  rule.limit = 5.5;
  v = eval(&rule, &rp, &sp);
  lowp_test_check(v.pass && v.percent > 80 && v.percent <= 100 && v.where == 7,
                  "max_ulp ~5 <= 5.5 passes: %s", v.msg);
  rule.limit = 4.4;
  v = eval(&rule, &rp, &sp);
  lowp_test_check(!v.pass && strstr(v.msg, "> 4.4") && strstr(v.msg, "C[1][2]"),
                  "max_ulp ~5 > 4.4 fails: %s", v.msg);

  /* bound gamma: the honest fp32 kernel passes, the fp16 one claiming fp32 fails */
  memset(&rule, 0, sizeof rule);
  rule.kind = LOWP_RULE_BOUND;
  rule.bound = LOWP_BOUND_GAMMA;
  rule.limit = 1;
  v = eval(&rule, &rg, &sg);
  lowp_test_check(v.pass && v.percent < 100 && !v.vacuous, "fp32 acc within gamma_k: %s", v.msg);
  v = eval(&rule, &rb, &sb);
  lowp_test_check(!v.pass && v.percent > 100, "fp16 acc claimed fp32 fails the bound: %s", v.msg);
  rule.bound = LOWP_BOUND_PROB;
  v = eval(&rule, &rb, &sb);
  lowp_test_check(!v.pass, "and the probabilistic bound: %s", v.msg);
  /* vacuous: a bound for e4m3 accumulation of 300 terms does not exist */
  rule.bound = LOWP_BOUND_GAMMA;
  rule.has_accum = 1;
  lowp_accum_parse(&rule.accum, "recursive,acc=e4m3,fma=1", NULL, 0);
  v = eval(&rule, &rb, &sb);
  lowp_test_check(v.pass && v.vacuous && isnan(v.percent) && strstr(v.msg, "vacuous"),
                  "vacuous bound flagged: %s", v.msg);
  /* a rule giving only the format: the order stays the subject's */
  {
    lowp_bound_spec_t bs;
    double want;
    memset(&bs, 0, sizeof bs);
    bs.kind = LOWP_BOUND_GAMMA;
    bs.accum = good.acc;
    bs.accum.acc = LOWP_FMT_BF16;
    lowp_op_bound(&want, NULL, 0, &p, &bs);
    memset(&rule, 0, sizeof rule);
    rule.kind = LOWP_RULE_BOUND;
    rule.bound = LOWP_BOUND_GAMMA;
    rule.limit = 1;
    rule.has_accum = 1;
    rule.accum_given = 2;
    lowp_accum_parse(&rule.accum, "pairwise,acc=bf16", NULL, 0);
    v = eval(&rule, &rg, &sg);
    lowp_test_check(v.limit == want && strstr(v.msg, "gamma_300 (recursive"),
                    "format from the rule, order from the subject: %s", v.msg);
    rule.accum_given = 3;
    v = eval(&rule, &rg, &sg);
    lowp_test_check(strstr(v.msg, "pairwise") != NULL, "both from the rule: %s", v.msg);
    rule.bound = LOWP_BOUND_GAMMA;
  }
  /* a bound where the subject declares nothing */
  rule.has_accum = 0;
  lowp_test_check(lowp_check_rule_eval(&v, &rule, &re, &se) == LOWP_EUNSUPPORTED,
                  "no declared method, no bound given: unsupported (%s)", v.msg);
  rule.bound = LOWP_BOUND_MODEL;
  lowp_test_check(lowp_check_rule_eval(&v, &rule, &rg, &sg) == LOWP_EUNSUPPORTED,
                  "no model: unsupported");

  /* vs_reference: the fp16 kernel vs the fp32 one */
  memset(&rule, 0, sizeof rule);
  rule.kind = LOWP_RULE_VS_REF;
  rule.metric = LOWP_METRIC_MAX_ABS;
  rule.limit = 2;
  rule.other = &rg;
  v = eval(&rule, &rb, &sb);
  lowp_test_check(!v.pass, "fp16 acc is worse than 2x the fp32 reference: %s", v.msg);
  rule.other = &rb;
  v = eval(&rule, &rg, &sg);
  lowp_test_check(v.pass, "fp32 acc is no worse than 2x fp16's: %s", v.msg);
  rule.metric = LOWP_METRIC_RMSE;
  rule.limit = 1;
  rule.other = &rg;
  v = eval(&rule, &rg, &sg);
  lowp_test_check(v.pass && fabs(v.percent - 100) < 1e-9, "rmse vs itself, factor 1: 100%%");

  /* rtol/atol and PyTorch defaults */
  memset(&rule, 0, sizeof rule);
  rule.kind = LOWP_RULE_TOL;
  rule.pytorch = 1;
  v = eval(&rule, &rg, &sg);
  lowp_test_check(v.pass, "fp32 acc passes assert_close fp32 defaults: %s", v.msg);
  v = eval(&rule, &rb, &sb);
  lowp_test_check(!v.pass, "fp16 acc fails assert_close fp32 defaults: %s", v.msg);
  rule.pytorch = 0;
  rule.rtol = 1e-2;
  rule.atol = 0;
  v = eval(&rule, &rb, &sb);
  lowp_test_check(v.pass, "fp16 acc within rtol 1e-2: %s", v.msg);
  {
    double r, a;
    lowp_check_pytorch_tol(&r, &a, &LOWP_FMT_FP16);
    lowp_test_check(r == 1e-3 && a == 1e-5, "fp16 1e-3/1e-5");
    lowp_check_pytorch_tol(&r, &a, &LOWP_FMT_BF16);
    lowp_test_check(r == 1.6e-2 && a == 1e-5, "bf16 1.6e-2/1e-5");
    lowp_check_pytorch_tol(&r, &a, &LOWP_FMT_FP32);
    lowp_test_check(r == 1.3e-6 && a == 1e-5, "fp32 1.3e-6/1e-5");
    lowp_check_pytorch_tol(&r, &a, &LOWP_FMT_FP64);
    lowp_test_check(r == 1e-7 && a == 1e-7, "fp64 1e-7/1e-7");
  }

  /* baseline with growth */
  memset(&rule, 0, sizeof rule);
  rule.kind = LOWP_RULE_BASELINE;
  rule.metric = LOWP_METRIC_MAX_ULP;
  rule.baseline = 4;
  rule.limit = 1.5;
  v = eval(&rule, &rp, &sp);
  lowp_test_check(v.pass && fabs(v.limit - 6) < 1e-12, "~5 ulp <= 1.5 x 4: %s", v.msg);
  rule.limit = 1.1;
  v = eval(&rule, &rp, &sp);
  lowp_test_check(!v.pass, "5 ulp > 1.1 x 4: %s", v.msg);
  rule.baseline = NAN;
  lowp_test_check(lowp_check_rule_eval(&v, &rule, &rp, &sp) == LOWP_EINVAL, "no stored value");

  /* nan_inf: a NaN where the exact result is finite */
  memset(&rule, 0, sizeof rule);
  rule.kind = LOWP_RULE_NAN_INF;
  v = eval(&rule, &rn, &sn);
  lowp_test_check(!v.pass && v.measured == 1 && v.where == 4 && strstr(v.msg, "C[0][4]"),
                  "NaN class mismatch caught: %s", v.msg);
  v = eval(&rule, &rg, &sg);
  lowp_test_check(v.pass, "no mismatch: pass");
  memset(&rule, 0, sizeof rule);
  rule.kind = LOWP_RULE_MAX_ULP;
  rule.limit = 1e9;
  v = eval(&rule, &rn, &sn);
  lowp_test_check(!v.pass && isinf(v.measured), "a NaN is an unbounded ulp error");

  /* bitexact */
  memset(&rule, 0, sizeof rule);
  rule.kind = LOWP_RULE_BITEXACT;
  rule.other = &re;
  v = eval(&rule, &rp, &sp);
  lowp_test_check(!v.pass && v.measured == 1 && v.where == 7, "one element differs: %s", v.msg);
  {
    lowp_check_result_t re2 = measure(&p, &se, &in);
    rule.other = &re2;
    v = eval(&rule, &re, &se);
    lowp_test_check(v.pass, "bit-equal to itself: %s", v.msg);
    lowp_check_result_free(&re2);
  }
  lowp_check_result_free(&rg);
  lowp_check_result_free(&rb);
  lowp_check_result_free(&re);
  lowp_check_result_free(&rp);
  lowp_check_result_free(&rn);
  lowp_check_inputs_free(&in);
}

static void test_failures(void) {
  lowp_problem_t p = problem("softmax", 1, 3, 8, 1, &LOWP_FMT_FP16, &LOWP_FMT_FP16);
  lowp_check_inputs_t in;
  lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
  tctx_t c = {FAILS, 0, 0, {0}}, a = {ACCUM, 0, 0, {0}};
  lowp_subject_t s = subject(&c, "crashing");
  lowp_check_result_t r;
  lowp_rule_t rule;
  lowp_verdict_t v;
  char err[200];
  lowp_check_inputs_generate(&in, &p, &d, 1);
  lowp_test_check(lowp_check_measure(&r, &p, &s, &in, NULL, err, sizeof err) == LOWP_EIO &&
                  strstr(err, "signal 11"), "a crashing subject's message comes through: %s", err);
  lowp_check_result_free(&r);
  s = subject(&a, "gemm only");
  lowp_test_check(lowp_check_measure(&r, &p, &s, &in, NULL, err, sizeof err) == LOWP_EUNSUPPORTED,
                  "unsupported op reported");
  lowp_check_result_free(&r);
  /* a bound on a forward operation */
  c.mode = EXACT;
  s = subject(&c, "exact softmax");
  r = measure(&p, &s, &in);
  memset(&rule, 0, sizeof rule);
  rule.kind = LOWP_RULE_BOUND;
  lowp_test_check(lowp_check_rule_eval(&v, &rule, &r, &s) == LOWP_EUNSUPPORTED &&
                  strstr(v.msg, "sums of products"), "no bound for softmax: %s", v.msg);
  lowp_test_check(isnan(lowp_metric_value(&r, LOWP_METRIC_MAX_BWD)), "no backward error");
  lowp_check_result_free(&r);
  lowp_check_inputs_free(&in);
}

/* the exact result in the output format is rounded once, also where its
   binary64 rounding is a midpoint of the output format */
static void test_double_rounding(void) {
  lowp_problem_t p = problem("dot", 1, 1, 1, 3, &LOWP_FMT_FP64, &LOWP_FMT_FP16);
  double x[3] = {1, 0x1p-11, 0x1p-70}, w[3] = {1, 1, 1};
  const double *xs[2] = {x, w};
  lowp_check_inputs_t in;
  tctx_t c = {EXACT, 0, 0, {0}};
  lowp_subject_t s = subject(&c, "exact");
  lowp_check_result_t r;
  lowp_test_check(lowp_check_inputs_copy(&in, &p, xs, NULL) == 0, "inputs copied");
  r = measure(&p, &s, &in);
  /* its binary64 rounding would be the fp16 midpoint 1 + 2^-11, against which both neighbours
     measure 0.5 ulp; the rounding to odd is the double next to it on the value's side */
  lowp_test_check(r.out[0].exact[0] == 1 + 0x1p-11 + 0x1p-52, "binary64 exact is off the fp16 midpoint, "
                  "on the value's side: %a", r.out[0].exact[0]);
  lowp_test_check(r.out[0].err.max_ulp < 0.5, "the correctly rounded output is under 0.5 ulp: %.17g",
                  r.out[0].err.max_ulp);
  lowp_test_check(r.out[0].exact_out[0] == 1 + 0x1p-10 && r.out[0].got[0] == 1 + 0x1p-10,
                  "exact in fp16 is rounded once (up), not twice (to even): %a",
                  r.out[0].exact_out[0]);
  lowp_check_result_free(&r);
  lowp_check_inputs_free(&in);
}

/* a conversion declared (lowp_problem_t.has_conv): the reference is that
   of the converted inputs, the conversion's cost is input error */
static void test_convert(void) {
  lowp_problem_t p = problem("gemm", 1, 4, 5, 300, &LOWP_FMT_FP32, &LOWP_FMT_FP32);
  lowp_check_inputs_t in;
  lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
  tctx_t c = {CONV16, 0, 0, {0}};
  lowp_subject_t s = subject(&c, "conv16");
  lowp_check_result_t r;
  lowp_test_check(lowp_check_inputs_generate(&in, &p, &d, 5) == 0, "generate");
  r = measure(&p, &s, &in);
  lowp_test_check(r.max_ulp > 50, "undeclared: the fp16 conversion is error (%g ulp)", r.max_ulp);
  lowp_check_result_free(&r);
  p.has_conv[1] = 1;
  p.conv[1] = LOWP_FMT_FP16;
  p.conv_rnd[1] = LOWP_RND_NE;
  r = measure(&p, &s, &in);
  lowp_test_check(r.max_ulp <= 0.5 && r.out[0].exact_data && r.out[0].max_ulp_input > 50,
                  "declared fp16 rne: exact of the converted inputs (%g ulp), the conversion as input "
                  "error (%g ulp)", r.max_ulp, r.out[0].max_ulp_input);
  lowp_check_result_free(&r);
  p.conv_rnd[1] = LOWP_RND_TZ;
  r = measure(&p, &s, &in);
  lowp_test_check(r.max_ulp > 10, "declared fp16 rtz, kernel rne: error (%g ulp)", r.max_ulp);
  lowp_check_result_free(&r);
  lowp_check_inputs_free(&in);
}

int main(void) {
  lowp_test_start("tcheck_rules");
  test_convert();
  test_inputs();
  test_measure_split();
  test_rules();
  test_failures();
  test_double_rounding();
  return lowp_test_end();
}
