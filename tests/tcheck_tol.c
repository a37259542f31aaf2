/* tcheck_tol -- lib/check/tol.c against its formulas, and lib/check/rules_field.c's rules
   (SQNR, cosine, mismatch) through lib/check/capi.c on arrays made here */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/capi.h"
#include "check/tol.h"
#include "format/format.h"
#include "measure/measure.h"
#include "status.h"
#include "testutil.h"

static lowp_tol_query_t query(const char *op, size_t k, const char *in, const char *acc,
                              const char *out, double conf) {
  lowp_tol_query_t q;
  memset(&q, 0, sizeof q);
  q.op = lowp_op_by_name(op);
  q.k = k;
  q.in = *lowp_format_by_name(in);
  q.out = *lowp_format_by_name(out);
  (void)lowp_accum_parse(&q.accum, "recursive", NULL, 0);
  q.accum.acc = *lowp_format_by_name(acc);
  q.confidence = conf > 0 ? conf : 0;
  q.worst = conf < 0; /* -1: the worst case */
  return q;
}

static void test_tol(void) {
  lowp_tol_t t;
  lowp_tol_query_t q = query("dot", 1024, "fp16", "fp32", "fp16", -1);
  double u = ldexp(1, -24), g = 1024 * u / (1 - 1024 * u);
  char err[200];
  lowp_test_check(lowp_tol(&t, &q, err, sizeof err) == LOWP_OK, "dot fp16/fp32/fp16: %s", err);
  /* fp16 x fp16 products are exact in fp32: gamma_k alone; one rounding to fp16 */
  lowp_test_check(t.rtol == ldexp(1, -11), "rtol = u_fp16 (%g)", t.rtol);
  lowp_test_check(fabs(t.bound_acc - g) <= 1e-15 * g, "bound_acc = gamma_1024(u32) (%g vs %g)",
                  t.bound_acc, g);
  /* plus the subnormal floor: half fp16's spacing 2^-25, k of fp32's 2^-150 */
  lowp_test_check(fabs(t.atol - ((1 + ldexp(1, -11)) * g * 1024 + ldexp(1, -25) +
                                 1024 * ldexp(1, -150))) < 1e-12, "atol (%g)", t.atol);
  lowp_test_check(t.atol_floor == ldexp(1, -25) + 1024 * ldexp(1, -150) && !t.probabilistic &&
                  t.risk == 0, "floor %g, worst case asked for", t.atol_floor);
  lowp_test_check(!t.vacuous && strstr(t.why, "Higham") != NULL, "why cites: %s", t.why);
  /* probabilistic: sharper; bf16 accumulation of 1024 terms: vacuous in the worst case */
  {
    lowp_tol_t p;
    int st;
    q.confidence = 0.99;
    q.worst = 0;
    st = lowp_tol(&p, &q, err, sizeof err);
    /* lambda sqrt(k) u versus k u: 4.9 x 32 against 1024 */
    lowp_test_check(st == LOWP_OK && p.bound_acc < t.bound_acc / 5,
                    "probabilistic %g < worst %g / 5", p.bound_acc, t.bound_acc);
  }
  q = query("dot", 1024, "bf16", "bf16", "bf16", 0);
  lowp_test_check(lowp_tol(&t, &q, err, sizeof err) == LOWP_OK && !t.probabilistic &&
                  strstr(t.not_prob, "stagnate"), "bf16 accumulation: no probabilistic bound "
                  "without the data: %s", t.not_prob);
  lowp_test_check(lowp_tol(&t, &q, err, sizeof err) == LOWP_OK && t.vacuous && isinf(t.rtol),
                  "bf16 accumulation of 1024 terms is vacuous");
  /* bf16 products (16 bits) are exact in fp32; in bf16 they are rounded: one more factor */
  q = query("dot", 8, "bf16", "bf16", "bf16", -1);
  lowp_test_check(lowp_tol(&t, &q, err, sizeof err) == LOWP_OK && strstr(t.bound_name, "gamma_8") &&
                  t.bound_acc > lowp_bound_gamma(8, ldexp(1, -8)), "products rounded: %s %g",
                  t.bound_name, t.bound_acc);
  /* row ops: relative, at least the output's rounding; forward ops without a
     derivation are refused */
  q = query("softmax", 4096, "fp16", "fp32", "fp16", 0);
  q.compute = LOWP_FMT_FP32; /* computed in fp32, summed in fp32, rounded to fp16 */
  q.has_compute = 1;
  lowp_test_check(lowp_tol(&t, &q, err, sizeof err) == LOWP_OK && t.rtol >= ldexp(1, -11) &&
                  t.rtol < 2e-3 && fabs(t.atol - ldexp(1, -14 - 11)) < 1e-40,
                  "softmax rtol %g atol %g: %s", t.rtol, t.atol, err);
  /* computed in fp16 (the default: the input's format): fp16's u for exp, subtraction and
     division, fp32's for the sum */
  q.has_compute = 0;
  {
    lowp_tol_t t16;
    lowp_test_check(lowp_tol(&t16, &q, err, sizeof err) == LOWP_OK && t16.rtol > 4 * t.rtol &&
                    t16.rtol < 1e-2 && t16.probabilistic, "softmax in fp16: rtol %g", t16.rtol);
  }
  q = query("exp", 1, "fp16", "fp32", "fp16", 0);
  lowp_test_check(lowp_tol(&t, &q, err, sizeof err) == LOWP_EUNSUPPORTED &&
                  strstr(err, "no tolerance derivation"), "exp refused: %s", err);
  q = query("dot", 0, "fp16", "fp32", "fp16", 0);
  lowp_test_check(lowp_tol(&t, &q, err, sizeof err) == LOWP_EINVAL, "k = 0 refused");
}

/* lowp_capi_check on a cast of fp64 values with a known relative error */
static void test_field_rules(void) {
  enum { N = 1000 };
  static double x[N], y[N];
  const double *in[1] = {x}, *out[1] = {y};
  char *js = NULL, err[512];
  int i, st;
  for (i = 0; i < N; i++) {
    x[i] = sin(i + 1.0);
    y[i] = x[i] * (1 + ldexp(1, -10)); /* SQNR = 20 log10(2^10) = 60.2 dB */
  }
  st = lowp_capi_check(&js, "{\"op\": \"cast\", \"dims\": {\"m\": 1000}, \"in\": \"fp64\", "
                       "\"shapes\": [[1000, 1]], \"out_shapes\": [[1000, 1]], "
                       "\"out\": \"fp64\", \"rules\": [{\"sqnr_db\": 60}, {\"sqnr_db\": 61}, "
                       "{\"cosine\": 0.9999999}, {\"mismatch\": 0, \"rtol\": 1e-3, \"atol\": 0}, "
                       "{\"mismatch\": \"50%\", \"rtol\": 5e-4, \"atol\": 0}, "
                       "{\"mismatch\": 999, \"rtol\": 1e-4, \"atol\": 0}]}",
                       in, out, NULL, err, sizeof err);
  lowp_test_check(st == LOWP_OK && js, "capi check: %s", err);
  if (!js) return;
  lowp_test_check(strstr(js, "\"sqnr_db\":60.20599913") != NULL, "SQNR 60.206 dB: %.300s", js);
  /* |y - x| / |x| = 2^-10 = 9.8e-4: inside rtol 1e-3 everywhere, outside 5e-4 and 1e-4
     everywhere; the verdicts in order */
  {
    const char *p = js;
    const int want[6] = {1, 0, 1, 1, 0, 0};
    int k;
    for (k = 0; k < 6; k++) {
      p = strstr(p, "{\"rule\":");
      if (!p) break;
      p = strstr(p, "\"pass\":");
      lowp_test_check(p && !strncmp(p + 7, want[k] ? "true" : "false", want[k] ? 4 : 5),
                      "rule %d pass = %d", k + 1, want[k]);
    }
  }
  lowp_test_check(strstr(js, "mismatched elements: 1000/1000") != NULL, "mismatch counted");
  lowp_capi_free(js);
  /* a vacuous bound rule is refused unless accepted */
  {
    static double a[4096], b[4096], c[1];
    const double *ins[2] = {a, b}, *outs[1] = {c};
    for (i = 0; i < 4096; i++) a[i] = b[i] = 1;
    c[0] = 4096;
    st = lowp_capi_check(&js, "{\"op\": \"dot\", \"dims\": {\"k\": 4096}, \"in\": \"bf16\", "
                         "\"shapes\": [[4096], [4096]], \"out_shapes\": [[1]], "
                         "\"out\": \"fp32\", \"rules\": [{\"bound\": \"gamma\", \"order\": "
                         "\"recursive\", \"acc\": \"bf16\"}]}", ins, outs, NULL, err, sizeof err);
    lowp_test_check(st == LOWP_EPARSE && strstr(err, "vacuous"), "vacuous refused: %s", err);
    st = lowp_capi_check(&js, "{\"op\": \"dot\", \"dims\": {\"k\": 4096}, \"in\": \"bf16\", "
                         "\"shapes\": [[4096], [4096]], \"out_shapes\": [[1]], "
                         "\"out\": \"fp32\", \"rules\": [{\"bound\": \"gamma\", \"order\": "
                         "\"recursive\", \"acc\": \"bf16\", \"accept_vacuous\": true}]}", ins, outs,
                         NULL, err, sizeof err);
    lowp_test_check(st == LOWP_OK && js && strstr(js, "\"vacuous\":true"), "accepted: %s", err);
    lowp_capi_free(js);
  }
}

/* Repeated terms (lowp_tol_data): an honest recursive fp32 sum of equal products makes the same
   rounding error at every step while the sum stays in one binade, so its errors add coherently. The
   default (probabilistic) data-aware atol failed such kernels: constant fp16 inputs 1/3 x 1/7 at
   K = 16384 by 2.7x, one term 1 then 4095 terms 1.1 2^-24 at K = 4096 by 8.5x */
static double sum_f32(const double *a, const double *b, size_t k) {
  float s = 0.0f;
  size_t i;
  for (i = 0; i < k; i++) s = (float)((double)s + a[i] * b[i]); /* the product exact, one rounding */
  return s;
}

static void test_repeated_terms(void) {
  enum { K = 16384 };
  static double a[K], b[K];
  const double *in[2] = {a, b};
  size_t i, cs;
  char err[300];
  for (cs = 0; cs < 2; cs++) {
    size_t k = cs ? 4096 : K;
    lowp_tol_query_t q = query("dot", k, "fp16", "fp32", "fp32", 0);
    lowp_dims_t d;
    lowp_tol_t t;
    double atol, rtol, x = 0, c;
    int st;
    for (i = 0; i < k; i++) {
      a[i] = cs ? (i ? 0x1.19ap-12 : 1.0) : 0x1.554p-2;  /* fp16(1.1 2^-12), fp16(1/3) */
      b[i] = cs ? (i ? 0x1p-12 : 1.0) : 0x1.248p-3;      /* 2^-12, fp16(1/7) */
      x += a[i] * b[i];                                  /* exact: at most 40 bits here */
    }
    memset(&d, 0, sizeof d);
    d.batch = d.m = d.n = 1;
    d.k = k;
    c = sum_f32(a, b, k);
    st = lowp_tol_data(&t, &atol, &rtol, &q, &d, in, err, sizeof err);
    lowp_test_check(st == LOWP_OK && !t.vacuous, "repeated terms %zu: %s", cs, err);
    lowp_test_check(fabs(c - x) <= atol + rtol * fabs(x), "repeated terms %zu: an honest fp32 sum off by %g, "
                    "atol %g + rtol %g |x| (%.3gx)", cs, fabs(c - x), atol, rtol,
                    fabs(c - x) / (atol + rtol * fabs(x)));
    lowp_test_check(strstr(t.why, "terms of equal magnitude") != NULL, "repeated terms %zu: said: %s", cs, t.why);
  }
  { /* no two products equal: the probabilistic atol as before (beta S + floor; no term stagnates) */
    lowp_tol_query_t q = query("dot", 1024, "fp16", "fp32", "fp32", 0);
    lowp_dims_t d;
    lowp_tol_t t;
    double atol, S = 0;
    for (i = 0; i < 1024; i++) {
      a[i] = 1 + (double)i / 1024;
      b[i] = 1.0;
      S += a[i];
    }
    memset(&d, 0, sizeof d);
    d.batch = d.m = d.n = 1;
    d.k = 1024;
    lowp_test_check(lowp_tol_data(&t, &atol, NULL, &q, &d, in, err, sizeof err) == LOWP_OK && t.probabilistic &&
                    fabs(atol - (t.beta * S + t.atol_floor)) <= 1e-12 * atol && !strstr(t.why, "equal magnitude"),
                    "distinct terms keep the probabilistic atol: %g vs %g (%s)", atol, t.beta * S + t.atol_floor, err);
  }
}

int main(void) {
  test_tol();
  test_repeated_terms();
  test_field_rules();
  return lowp_test_end();
}
