/* tcheck_capi -- lib/check/capi.c refuses what lowp check refuses (one validator, the
   spec's), reads no array past the shape it was told and checked, fails closed on an
   infinite or NaN limit, and every lowp_tol result is finite and >= 0 or vacuous,
   vacuity and splitk tolerances monotone in k (issue 30) */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/capi.h"
#include "check/spec.h"
#include "check/tol.h"
#include "format/number.h"
#include "status.h"
#include "testutil.h"

enum { M = 4, N = 4, K = 8 };
static double A[M * K], B[K * N], C[M * N], R[M * N];

/* A, B: small integers (exact in every format here); C = A B exactly */
static void data(void) {
  int i, j, k;
  for (i = 0; i < M * K; i++) A[i] = (double)((i * 7) % 5) - 2;
  for (i = 0; i < K * N; i++) B[i] = (double)((i * 3) % 7) - 3;
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) {
      double s = 0;
      for (k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}

/* lowp_capi_check of the 4x4x8 gemm with desc's extra keys and rules */
static int run(char **js, const char *extra, const char *rules, const double *out,
               const double *ref, char *err, size_t errlen) {
  char desc[2048];
  const double *in[2] = {A, B}, *outs[1] = {out}, *refs[1] = {ref};
  snprintf(desc, sizeof desc, "{\"op\": \"gemm\", \"in\": \"fp16\", \"out\": \"fp32\", "
           "\"shapes\": [[4, 8], [8, 4]], \"out_shapes\": [[4, 4]]%s%s, \"rules\": %s}",
           ref ? ", \"ref_shapes\": [[4, 4]]" : "", extra, rules);
  *js = NULL;
  return lowp_capi_check(js, desc, in, outs, ref ? refs : NULL, err, errlen);
}

/* expect a refusal whose message holds want */
static void refused(const char *what, const char *extra, const char *rules, const char *want) {
  char *js = NULL, err[1024];
  int st = run(&js, extra, rules, C, NULL, err, sizeof err);
  lowp_test_check(st != LOWP_OK && !js && strstr(err, want), "%s: refused with '%s': st %d, %s",
                  what, want, st, err);
  lowp_capi_free(js);
}

static void test_shapes(void) {
  char *js = NULL, err[1024];
  const double *in[2] = {A, B}, *outs[1] = {C}, *refs[1] = {R};
  static double one[1];
  int st;
  const double *ref1[1] = {one};
  /* a 1-element reference of a 16-element output: refused before it is read */
  st = lowp_capi_check(&js, "{\"op\": \"gemm\", \"in\": \"fp16\", \"out\": \"fp32\", \"shapes\": "
                       "[[4, 8], [8, 4]], \"out_shapes\": [[4, 4]], \"ref_shapes\": [[1]], "
                       "\"rules\": [{\"vs_reference\": \"outputs\"}]}", in, outs, ref1, err,
                       sizeof err);
  lowp_test_check(st == LOWP_ESHAPE && strstr(err, "reference C has shape [1]"), "ref [1]: %s", err);
  /* a transposed reference (of a 4x2 output: [2, 4]) */
  st = lowp_capi_check(&js, "{\"op\": \"gemm\", \"in\": \"fp16\", \"out\": \"fp32\", \"shapes\": "
                       "[[4, 8], [8, 2]], \"out_shapes\": [[4, 2]], \"ref_shapes\": [[2, 4]], "
                       "\"rules\": [{\"vs_reference\": \"outputs\"}]}", in, outs, refs, err,
                       sizeof err);
  lowp_test_check(st == LOWP_ESHAPE && strstr(err, "needs shape [4, 2]"), "transposed: %s", err);
  /* arrays given without shapes, and shapes given without arrays */
  st = lowp_capi_check(&js, "{\"op\": \"gemm\", \"in\": \"fp16\", \"dims\": {\"m\": 4, \"n\": 4, "
                       "\"k\": 8}, \"rules\": [{\"max_ulp\": 1}]}", in, outs, NULL, err, sizeof err);
  lowp_test_check(st == LOWP_ESHAPE && strstr(err, "\"shapes\""), "no shapes: %s", err);
  st = lowp_capi_check(&js, "{\"op\": \"gemm\", \"in\": \"fp16\", \"shapes\": [[4, 8], [8, 4]], "
                       "\"out_shapes\": [[4, 4]], \"ref_shapes\": [[4, 4]], \"rules\": "
                       "[{\"max_ulp\": 1}]}", in, outs, NULL, err, sizeof err);
  lowp_test_check(st != LOWP_OK && strstr(err, "without its arrays"), "ref shapes alone: %s", err);
  /* dims that disagree with the arrays' shapes */
  st = lowp_capi_check(&js, "{\"op\": \"gemm\", \"in\": \"fp16\", \"dims\": {\"m\": 400, \"n\": "
                       "4, \"k\": 8}, \"shapes\": [[4, 8], [8, 4]], \"out_shapes\": [[4, 4]], "
                       "\"rules\": [{\"max_ulp\": 1}]}", in, outs, NULL, err, sizeof err);
  lowp_test_check(st == LOWP_ESHAPE && strstr(err, "A has shape [4, 8]"), "dims vs shapes: %s", err);
  /* sizes beyond a spec's (2^30) and fractional sizes */
  st = lowp_capi_check(&js, "{\"op\": \"gemm\", \"in\": \"fp16\", \"shapes\": [[4, 8], [8, "
                       "2147483648]], \"out_shapes\": [[4, 4]], \"rules\": [{\"max_ulp\": 1}]}",
                       in, outs, NULL, err, sizeof err);
  lowp_test_check(st == LOWP_ESHAPE && strstr(err, "[0, 2^30]"), "2^31 refused: %s", err);
  st = lowp_capi_check(&js, "{\"op\": \"gemm\", \"in\": \"fp16\", \"shapes\": [[4, 8], [8, 4]], "
                       "\"out_shapes\": [[4, 4.5]], \"rules\": [{\"max_ulp\": 1}]}", in, outs,
                       NULL, err, sizeof err);
  lowp_test_check(st == LOWP_ESHAPE && strstr(err, "integers"), "4.5 refused: %s", err);
  /* the honest case passes */
  st = run(&js, "", "[{\"max_ulp\": 0}]", C, NULL, err, sizeof err);
  lowp_test_check(st == LOWP_OK && js && strstr(js, "\"verdict\":\"pass\""), "honest: %s", err);
  lowp_capi_free(js);
}

/* vs_reference with an infinite reference error, and all-NaN / all-zero outputs */
static void test_fail_closed(void) {
  static double nan_out[M * N], zero[M * N], infref[M * N];
  char *js = NULL, err[1024];
  int i, st;
  for (i = 0; i < M * N; i++) {
    nan_out[i] = NAN;
    zero[i] = 0;
    infref[i] = INFINITY;
  }
  st = run(&js, "", "[{\"vs_reference\": \"outputs\", \"factor\": 2}]", nan_out, infref, err,
           sizeof err);
  lowp_test_check(st == LOWP_OK && js && strstr(js, "\"verdict\":\"fail\"") &&
                  strstr(js, "fails closed") && strstr(js, "the reference's max_abs is inf"),
                  "all-NaN vs inf reference fails closed: %.400s", js ? js : err);
  lowp_capi_free(js);
  st = run(&js, "", "[{\"vs_reference\": \"outputs\", \"factor\": 2, \"metric\": \"rmse\"}]",
           zero, infref, err, sizeof err);
  lowp_test_check(st == LOWP_OK && js && strstr(js, "\"verdict\":\"fail\"") &&
                  strstr(js, "limit is infinite"), "all-zero vs inf reference: %.400s",
                  js ? js : err);
  lowp_capi_free(js);
  /* factor 0 x inf = NaN: undefined, fails too */
  st = run(&js, "", "[{\"vs_reference\": \"outputs\", \"factor\": 0}]", C, infref, err,
           sizeof err);
  lowp_test_check(st == LOWP_OK && js && strstr(js, "\"verdict\":\"fail\"") &&
                  strstr(js, "undefined"), "0 x inf: %.400s", js ? js : err);
  lowp_capi_free(js);
  /* a finite reference error still decides normally */
  st = run(&js, "", "[{\"vs_reference\": \"outputs\", \"factor\": 2}]", C, C, err, sizeof err);
  lowp_test_check(st == LOWP_OK && js && strstr(js, "\"verdict\":\"pass\""), "finite: %s", err);
  lowp_capi_free(js);
}

/* the description goes through the spec's parser: what a spec refuses is refused */
#define U "[{\"max_ulp\": 1}]"
#define P01 "\"prob\" must be a number in (0, 1)"
#define PCT "a count or a percentage"
static void test_desc(void) {
  /* what, extra keys, rules, the message wanted */
  static const char *const cases[][4] = {
      {"empty rules", "", "[]", "\"rules\" must be a non-empty array"},
      {"eps for gemm", ", \"eps\": \"x\"", U, "\"eps\" belongs to layernorm"},
      {"prob 2", ", \"prob\": 2", U, P01},
      {"prob 1", ", \"prob\": 1", U, P01},
      {"prob 0", ", \"prob\": 0", U, P01},
      {"prob -1", ", \"prob\": -1", U, P01},
      {"prob NaN", ", \"prob\": NaN", U, "\"prob\": a number that is not finite"},
      {"factor Infinity", "", "[{\"vs_reference\": \"outputs\", \"factor\": Infinity}]",
       "\"factor\": a number that is not finite"},
      {"reduction for gemm", ", \"reduction\": \"sum\"", U, "\"reduction\" belongs to xent"},
      {"fractional dims", ", \"dims\": {\"m\": 4, \"n\": 4, \"k\": 7.5}", U,
       "\"dims\".k must be an integer"},
      {"unknown dims key", ", \"dims\": {\"m\": 4, \"q\": 4}", U, "\"dims\": unknown key 'q'"},
      {"unknown key", ", \"epsilon\": 1", U, "unknown key 'epsilon'"},
      {"NUL in a name", ", \"subject\": \"a\\u0000b\"", U, "NUL"},
      {"control character in a name", ", \"subject\": \"a\\nb\"", U, "control character"},
      {"acc a number", ", \"acc\": 3", U, "\"acc\" must be a string"},
      {"mismatch ' 5%'", "", "[{\"mismatch\": \" 5%\", \"assert_close\": \"pytorch\"}]", PCT},
      {"mismatch '0x10%'", "", "[{\"mismatch\": \"0x10%\", \"assert_close\": \"pytorch\"}]", PCT},
      {"mismatch '1e1%'", "", "[{\"mismatch\": \"1e1%\", \"assert_close\": \"pytorch\"}]", PCT},
  };
  size_t c;
  for (c = 0; c < sizeof cases / sizeof *cases; c++)
    refused(cases[c][0], cases[c][1], cases[c][2], cases[c][3]);
  {
    /* a short "in" list, and a layernorm eps of the wrong kind, through the shapes call */
    char *js = NULL, err[512];
    int st = lowp_capi_shapes(&js, "{\"op\": \"gemm\", \"in\": [\"fp16\"], \"dims\": {}}", err,
                              sizeof err);
    lowp_test_check(st != LOWP_OK && strstr(err, "\"in\" lists 1 formats but gemm has 2 inputs"),
                    "short in list: %s", err);
    st = lowp_capi_shapes(&js, "{\"op\": \"layernorm\", \"eps\": \"x\", \"dims\": {}}", err,
                          sizeof err);
    lowp_test_check(st != LOWP_OK && strstr(err, "\"eps\" must be a number, not a string"),
                    "eps x: %s", err);
    st = lowp_capi_shapes(&js, "{\"op\": \"layernorm\", \"eps\": -1, \"dims\": {}}", err,
                          sizeof err);
    lowp_test_check(st != LOWP_OK && strstr(err, "\"eps\" must be a finite number >= 0"),
                    "eps -1: %s", err);
    st = lowp_capi_shapes(&js, "{\"op\": \"layernorm\", \"reduction\": \"sum\", \"dims\": {}}",
                          err, sizeof err);
    lowp_test_check(st != LOWP_OK && strstr(err, "\"reduction\" belongs to xent"),
                    "reduction for layernorm: %s", err);
  }
  {
    /* names a user typed, with control characters in them, are quoted escaped: the refusal
       stays one line (fuzz_capi's find in CI: a model "fp32o\n\n" through the shapes call) */
    static const char *const ctl[][2] = {
        {"{\"op\": \"dot\", \"in\": [\"bf16\", \"f16\"], \"model\": \"fp32o\\n\\n\", \"dims\": {\"k\": 15}}",
         "fp32o\\n\\n"},
        {"{\"op\": \"dot\", \"in\": [\"bf16\", \"bf16\"], \"model\": \"a100\\r,b=\\u001b[2J\", \"dims\": "
         "{\"k\": 15}}", "\\r"},
        {"{\"op\": \"dot\", \"in\": [\"bf16\", \"bf16\"], \"model\": \"b200,kind=\\n\", \"dims\": {\"k\": 15}}",
         "\\n"},
        {"{\"op\": \"dot\", \"in\": [\"bf16\", \"bf16\"], \"order\": \"pair\\nwise\", \"dims\": {\"k\": 15}}",
         "\\n"},
        {"{\"op\": \"dot\", \"in\": [\"bf16\", \"bf16\"], \"acc\": \"fp\\t16\", \"dims\": {\"k\": 15}}", "\\t"},
    };
    size_t c;
    for (c = 0; c < sizeof ctl / sizeof *ctl; c++) {
      char *js = NULL, err[512];
      int st = lowp_capi_shapes(&js, ctl[c][0], err, sizeof err);
      lowp_test_check(st != LOWP_OK && !js && !strpbrk(err, "\n\r\t\033") && strstr(err, ctl[c][1]),
                      "control characters %zu: one line with '%s': st %d, '%s'", c, ctl[c][1], st, err);
    }
  }
}

/* values that are not values of the declared format are refused */
static void test_formats(void) {
  char *js = NULL, err[1024];
  static double a2[M * K], c2[M * N];
  const double *in[2] = {a2, B}, *outs[1] = {C}, *outs2[1] = {c2};
  int st;
  memcpy(a2, A, sizeof A);
  memcpy(c2, C, sizeof C);
  a2[5] = 0.1; /* not an fp16 value */
  st = lowp_capi_check(&js, "{\"op\": \"gemm\", \"in\": \"fp16\", \"out\": \"fp32\", \"shapes\": "
                       "[[4, 8], [8, 4]], \"out_shapes\": [[4, 4]], \"rules\": [{\"max_ulp\": "
                       "1e9}]}", in, outs, NULL, err, sizeof err);
  lowp_test_check(st == LOWP_EFORMAT && strstr(err, "input A: 1 values are not fp16 values") &&
                  strstr(err, "element 5"), "input 0.1 as fp16: %s", err);
  in[0] = A;
  c2[3] += 1e-3; /* in fp64, not in fp16 */
  st = lowp_capi_check(&js, "{\"op\": \"gemm\", \"in\": \"fp16\", \"out\": \"fp16\", \"shapes\": "
                       "[[4, 8], [8, 4]], \"out_shapes\": [[4, 4]], \"rules\": [{\"max_ulp\": "
                       "1e9}]}", in, outs2, NULL, err, sizeof err);
  lowp_test_check(st == LOWP_EFORMAT && strstr(err, "output C: 1 values are not fp16 values"),
                  "fp64 output declared fp16: %s", err);
  /* ... unless an in_format rule counts them */
  st = lowp_capi_check(&js, "{\"op\": \"gemm\", \"in\": \"fp16\", \"out\": \"fp16\", \"shapes\": "
                       "[[4, 8], [8, 4]], \"out_shapes\": [[4, 4]], \"rules\": [{\"in_format\": "
                       "0}]}", in, outs2, NULL, err, sizeof err);
  lowp_test_check(st == LOWP_OK && js && strstr(js, "\"verdict\":\"fail\"") &&
                  strstr(js, "1 output values are not fp16 values"), "in_format rule: %.300s",
                  js ? js : err);
  lowp_capi_free(js);
  /* a data-aware tolerance and the exact result refuse them too */
  {
    static double at[M * N], ex[M * N];
    size_t nb = 9, first = 9;
    const double vals[4] = {1.0, 0.1, 65504.0, 0.2};
    in[0] = a2;
    st = lowp_capi_tol_data(&js, "{\"op\": \"gemm\", \"in\": \"fp16\", \"acc\": \"fp32\", "
                            "\"shapes\": [[4, 8], [8, 4]]}", in, at, NULL, M * N, err, sizeof err);
    lowp_test_check(st == LOWP_EFORMAT && strstr(err, "input A: 1 values are not fp16 values"),
                    "tol_data with 0.1 declared fp16: %d %s", st, err);
    st = lowp_capi_exact("{\"op\": \"gemm\", \"in\": \"fp16\", \"shapes\": [[4, 8], [8, 4]]}",
                         in, ex, M * N, err, sizeof err);
    lowp_test_check(st == LOWP_EFORMAT && strstr(err, "input A: 1 values are not fp16 values"),
                    "exact with 0.1 declared fp16: %d %s", st, err);
    st = lowp_capi_in_format(&nb, &first, "fp16", vals, 4, err, sizeof err);
    lowp_test_check(st == LOWP_OK && nb == 2 && first == 1, "in_format fp16: %d %zu %zu", st, nb,
                    first);
    st = lowp_capi_in_format(&nb, &first, "fp32", vals, 1, err, sizeof err);
    lowp_test_check(st == LOWP_OK && nb == 0 && first == 0, "in_format fp32: %zu", nb);
    st = lowp_capi_in_format(&nb, &first, "fp99", vals, 4, err, sizeof err);
    lowp_test_check(st != LOWP_OK && err[0], "in_format fp99: %s", err);
  }
  /* bit patterns in a container of the wrong width */
  {
    unsigned char b8[2] = {0x3c, 0x00};
    double o[2];
    st = lowp_capi_decode(o, b8, 2, 1, "fp16", err, sizeof err);
    lowp_test_check(st == LOWP_EFORMAT && strstr(err, "held in 2-byte integers"), "fp16 in uint8: %s",
                    err);
  }
}

static int tol_of(lowp_tol_t *t, const char *query, char *err, size_t errlen) {
  char *js = NULL;
  lowp_tol_query_t q;
  int st = lowp_capi_tol_query(&q, query, err, errlen);
  if (st) return st;
  st = lowp_tol(t, &q, err, errlen);
  (void)js;
  return st;
}

static int sane(const lowp_tol_t *t) {
  const double v[5] = {t->rtol, t->atol, t->bound, t->bound_acc, t->rtol_same_sign};
  int i;
  if (t->vacuous) return isinf(t->rtol) && isinf(t->atol);
  for (i = 0; i < 5; i++)
    if (!(isfinite(v[i]) && v[i] >= 0)) return 0;
  return 1;
}

static void test_tol(void) {
  static const char *const ops[] = {"sum", "dot", "gemm", "softmax", "logsoftmax", "logsumexp",
                                    "xent", "rmsnorm", "layernorm"};
  static const char *const fm[] = {"fp32", "fp16", "bf16"};
  static const char *const me[] = {"recursive", "pairwise", "blocked:32", "splitk:16", "kahan"};
  lowp_tol_t t;
  char q[400], err[512];
  int o, a, b, m, c, st, n_bad = 0, n_back = 0, n_drop = 0;
  /* the cases: negative tolerances became vacuous, atol inf too */
  st = tol_of(&t, "{\"op\": \"softmax\", \"k\": 125, \"input\": \"fp16\", \"acc\": \"bf16\"}", err,
              sizeof err);
  lowp_test_check(!st && t.vacuous && sane(&t) && strstr(t.why, "no tolerance can be derived"), "softmax 125: %g",
                  t.rtol);
  st = tol_of(&t, "{\"op\": \"layernorm\", \"k\": 89, \"input\": \"bf16\", \"acc\": \"bf16\"}", err,
              sizeof err);
  lowp_test_check(!st && t.vacuous && sane(&t), "layernorm 89: %g", t.rtol);
  st = tol_of(&t, "{\"op\": \"rmsnorm\", \"k\": 8388607}", err, sizeof err);
  lowp_test_check(!st && t.vacuous && sane(&t), "rmsnorm 8388607: %g", t.rtol);
  st = tol_of(&t, "{\"op\": \"dot\", \"k\": 64, \"scale\": 1e308}", err, sizeof err);
  lowp_test_check(!st && t.vacuous && sane(&t) && strstr(t.why, "range"), "scale 1e308: %s", t.why);
  st = tol_of(&t, "{\"op\": \"sum\", \"k\": 64, \"input\": \"fp16\", \"method\": \"model:h100\"}",
              err, sizeof err);
  lowp_test_check(st != LOWP_OK && strstr(err, "computes products"), "sum with a model: %s", err);
  st = tol_of(&t, "{\"op\": \"dot\", \"k\": 64, \"method\": \"kahan\", \"confidence\": 0.9}", err,
              sizeof err);
  lowp_test_check(st == LOWP_EUNSUPPORTED && strstr(err, "no probabilistic bound"),
                  "kahan with a confidence: %s", err);
  st = tol_of(&t, "{\"op\": \"dot\", \"k\": 1.9}", err, sizeof err);
  lowp_test_check(st != LOWP_OK && strstr(err, "\"k\" must be an integer"), "k 1.9: %s", err);
  st = tol_of(&t, "{\"op\": \"dot\", \"k\": 64, \"k\": 65}", err, sizeof err);
  lowp_test_check(st != LOWP_OK && strstr(err, "given twice"), "k twice: %s", err);
  st = tol_of(&t, "{\"op\": \"dot\", \"k\": 64, \"confidence\": NaN}", err, sizeof err);
  lowp_test_check(st != LOWP_OK && strstr(err, "\"confidence\": a number that is not finite"),
                  "confidence NaN: %s", err);
  /* the block-scaled model's query takes the same keys, validated the same
     way: risk, numel, worst and scale (issue 33 item 6: they were skipped) */
  {
    static const char *const badq[][2] = {
        {", \"risk\": 2", "\"risk\" must lie in (0, 1)"},
        {", \"numel\": 0", "\"numel\" must be a number >= 1"},
        {", \"confidence\": \"best\"", "\"confidence\" is a probability"},
        {", \"confidence\": 1.5", "\"confidence\" must be a number in (0, 1]"},
        {", \"scale\": -1", "\"scale\" must be a finite number > 0"},
        {", \"scale\": \"x\"", "\"scale\" must be a finite number > 0"},
        {", \"compute\": \"fp99\"", "compute"}};
    size_t i;
    for (i = 0; i < sizeof badq / sizeof badq[0]; i++) {
      snprintf(q, sizeof q, "{\"op\": \"gemm\", \"k\": 4096, \"input\": \"mxfp4\", \"method\": "
               "\"model:b200,kind=mxf4nvf4\"%s}", badq[i][0]);
      st = tol_of(&t, q, err, sizeof err);
      lowp_test_check(st != LOWP_OK && strstr(err, badq[i][1]), "block-scaled model with%s: %d %s",
                      badq[i][0], st, err);
    }
    st = tol_of(&t, "{\"op\": \"gemm\", \"k\": 4096, \"input\": \"mxfp4\", \"method\": "
                "\"model:b200,kind=mxf4nvf4\", \"risk\": 1e-9, \"numel\": 1000, \"scale\": 2}",
                err, sizeof err);
    lowp_test_check(!st && !t.probabilistic && t.risk == 0 && t.numel == 1000 &&
                        strstr(t.not_prob, "block-scaled model's bound is a worst case") &&
                        fabs(t.atol - t.bound * 4096 * 2) <= 1e-15 * t.atol,
                    "block-scaled model, risk/numel/scale: st %d numel %g atol %g bound %g (%s)", st, t.numel,
                    t.atol, t.bound, t.not_prob);
    st = tol_of(&t, "{\"op\": \"gemm\", \"k\": 4096, \"input\": \"mxfp4\", \"method\": "
                "\"model:b200,kind=mxf4nvf4\", \"worst\": true}", err, sizeof err);
    lowp_test_check(!st && strstr(t.not_prob, "worst case was asked"), "block-scaled model, worst: %d %s", st,
                    t.not_prob);
  }
  /* every result sane; vacuity never goes back; splitk tolerances never drop as k grows */
  for (o = 0; o < 9; o++)
    for (a = 0; a < 3; a++)
      for (b = 0; b < 3; b++)
        for (m = 0; m < 5; m++)
          for (c = 0; c < 2; c++) {
            double k, prev_rtol = 0, prev_atol = 0;
            int was_vacuous = 0;
            if (c && m == 4) continue;
            for (k = 1; k < 1e12; k = k < 300 ? k + 1 : ceil(k * 1.37)) {
              snprintf(q, sizeof q, "{\"op\": \"%s\", \"k\": %.0f, \"input\": \"%s\", \"acc\": "
                       "\"%s\", \"method\": \"%s\"%s}", ops[o], k, fm[a], fm[b], me[m],
                       c ? ", \"confidence\": 0.99" : "");
              if (tol_of(&t, q, err, sizeof err)) { n_bad++; break; }
              if (!sane(&t)) n_bad++;
              if (was_vacuous && !t.vacuous) n_back++;
              if (!t.vacuous && (t.rtol < prev_rtol * (1 - 1e-12) ||
                                 t.atol < prev_atol * (1 - 1e-12))) {
                if (n_drop < 8)
                  fprintf(stderr, "drop: %s: rtol %g -> %g, atol %g -> %g\n", q, prev_rtol,
                          t.rtol, prev_atol, t.atol);
                n_drop++;
              }
              was_vacuous |= t.vacuous;
              prev_rtol = t.vacuous ? prev_rtol : t.rtol;
              prev_atol = t.vacuous ? prev_atol : t.atol;
            }
          }
  lowp_test_check(n_bad == 0, "%d results neither finite >= 0 nor vacuous", n_bad);
  lowp_test_check(n_back == 0, "%d times vacuous went back to a tolerance as k grew", n_back);
  lowp_test_check(n_drop == 0, "%d tolerances fell as k grew", n_drop);
}

static void test_percent(void) {
  static const char *const good[] = {"5%", "0.1%", "100%", ".5%", "5.%"};
  static const char *const badp[] = {" 5%", "0x10%", "1e1%", "5", "%", "5 %", "5%%", "-1%",
                                     "+1%", "inf%", "nan%", "5%x", ""};
  size_t i;
  double x;
  for (i = 0; i < sizeof good / sizeof *good; i++)
    lowp_test_check(lowp_parse_percent(&x, good[i]) == LOWP_OK, "'%s' read", good[i]);
  lowp_test_check(lowp_parse_percent(&x, "0.1%") == LOWP_OK && x == 0.1, "0.1%% is 0.1");
  for (i = 0; i < sizeof badp / sizeof *badp; i++)
    lowp_test_check(lowp_parse_percent(&x, badp[i]) == LOWP_EPARSE, "'%s' refused", badp[i]);
}

/* lowp_capi_reveal through a C callback: a recursive fp32 FMA chain per
   output (fp16 inputs), batch entries of gemm; fail: the callback fails */
static int chain_fn(void *ctx, double *const *out, const double *const *in, const size_t *dims) {
  size_t bt, i, j, l, m = dims[1], n = dims[2], k = dims[3];
  if (ctx) return 1;
  for (bt = 0; bt < dims[0]; bt++)
    for (i = 0; i < m; i++)
      for (j = 0; j < n; j++) {
        float s = 0.0f;
        for (l = 0; l < k; l++)
          s = fmaf((float)in[0][bt * m * k + i * k + l], (float)in[1][bt * k * n + l * n + j], s);
        out[0][bt * m * n + i * n + j] = s;
      }
  return 0;
}

static void test_reveal(void) {
  static const char *desc = "{\"op\": \"gemm\", \"dims\": {\"m\": 2, \"n\": 3, \"k\": 40}, \"in\": \"fp16\", "
                            "\"out\": \"fp32\", \"validate\": 200}";
  static const char *tdesc = "{\"op\": \"gemm\", \"dims\": {\"batch\": 2, \"m\": 2, \"n\": 3, \"k\": 40}, "
                             "\"in\": \"fp16\", \"out\": \"fp32\"}";
  char *js = NULL, err[400];
  double a[2 * 2 * 40], b[2 * 40 * 3], y[12], yt[12];
  const double *in[2] = {a, b};
  double *out[1] = {y};
  size_t dims[4] = {2, 2, 3, 40}, i;
  int st = lowp_capi_reveal(&js, desc, chain_fn, NULL, err, sizeof err), same = 1;
  {
    cJSON *root = js ? cJSON_Parse(js) : NULL;
    lowp_test_check(st == LOWP_OK && cJSON_IsTrue(cJSON_GetObjectItem(root, "deterministic")) && strstr(js, "\"depth\""),
                    "a C callback revealed: %s", st ? err : "");
    cJSON_Delete(root);
  }
  for (i = 0; i < 160; i++) a[i] = (double)((int)(i * 37 % 11) - 5) / 4;
  for (i = 0; i < 240; i++) b[i] = (double)((int)(i * 13 % 9) - 4) / 8 + 1.0 / 1024;
  chain_fn(NULL, out, in, dims);
  if (js) {
    st = lowp_capi_twin(yt, 12, js, tdesc, in, err, sizeof err);
    for (i = 0; i < 12; i++) same &= !memcmp(&y[i], &yt[i], sizeof y[i]);
    lowp_test_check(st == LOWP_OK && same, "its twin is bit-exact on 2 batch entries: %s", st ? err : "");
    st = lowp_capi_twin(yt, 11, js, tdesc, in, err, sizeof err);
    lowp_test_check(st == LOWP_ESHAPE && strstr(err, "12"), "a wrong output count: %s", err);
    st = lowp_capi_twin(yt, 6, js, "{\"op\": \"gemm\", \"dims\": {\"m\": 2, \"n\": 3, \"k\": 41}, \"in\": "
                        "\"fp16\", \"out\": \"fp32\"}", in, err, sizeof err);
    lowp_test_check(st == LOWP_EINVAL && strstr(err, "K = 40"), "another K: %s", err);
    { /* a tree file's arith kind with a newline in it: refused, on one line, the newline escaped */
      char *k = strstr(js, "\"kind\":"), *bad = k ? malloc(strlen(js) + 8) : NULL;
      if (bad) {
        const char *v = strchr(k + 7, '"'), *e = v ? strchr(v + 1, '"') : NULL;
        if (e) {
          sprintf(bad, "%.*s\"a\\nb%s", (int)(v - js), js, e);
          st = lowp_capi_twin(yt, 12, bad, tdesc, in, err, sizeof err);
          lowp_test_check(st != LOWP_OK && !strchr(err, '\n') && strstr(err, "a\\nb"),
                          "an arith kind with a newline: one line: st %d, '%s'", st, err);
        } else lowp_test_check(0, "no \"kind\" value in the revelation: %s", js);
        free(bad);
      } else lowp_test_check(0, "no \"kind\" in the revelation: %s", js);
    }
    lowp_capi_free(js);
  }
  js = NULL;
  st = lowp_capi_reveal(&js, desc, chain_fn, (void *)1, err, sizeof err);
  lowp_test_check(st == LOWP_EIO && !js && strstr(err, "callback"), "a failing callback: %s", err);
  st = lowp_capi_reveal(&js, "{\"op\": \"softmax\", \"dims\": {\"m\": 2, \"n\": 4}, \"in\": \"fp32\"}", chain_fn,
                        NULL, err, sizeof err);
  lowp_test_check(st == LOWP_EUNSUPPORTED && strstr(err, "not a sum of products"), "softmax refused: %s", err);
  st = lowp_capi_reveal(&js, "{\"op\": \"gemm\", \"dims\": {\"k\": 8}, \"in\": \"fp16\", \"seed\": -1}", chain_fn,
                        NULL, err, sizeof err);
  lowp_test_check(st == LOWP_EINVAL && strstr(err, "\"seed\""), "a bad seed: %s", err);
  st = lowp_capi_reveal(&js, "{\"op\": \"gemm\", \"dims\": {\"k\": 8}, \"in\": \"fp16\", \"rounds\": 2}", chain_fn,
                        NULL, err, sizeof err);
  lowp_test_check(st == LOWP_EPARSE && strstr(err, "unknown key 'rounds'"), "an unknown key: %s", err);
  st = lowp_capi_reveal(&js, "{\"op\": \"gemm\", \"dims\": {\"k\": 8}, \"in\": \"fp32\", \"convert\": {\"A\": "
                        "\"fp16\"}}", chain_fn, NULL, err, sizeof err);
  lowp_test_check(st == LOWP_EINVAL && strstr(err, "finds conversions itself"), "convert refused: %s", err);
}

int main(void) {
  data();
  test_shapes();
  test_fail_closed();
  test_desc();
  test_formats();
  test_tol();
  test_percent();
  test_reveal();
  return lowp_test_end();
}
