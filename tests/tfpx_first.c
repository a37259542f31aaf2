/* tfpx_first -- the first exception an experiment reports: planted exceptions found at their place */

/*
 * The traced naive softmax (lowp_softmax_naive_fpx, what softmax-overflow
 * reports) on rows with an exception planted at a known element: an exp
 * that overflows fp16 at element 37 (inherent), the inf / inf division it
 * leads to (invalid, spurious: the exact softmax is finite), a NaN input
 * (nan_propagated), exps that all underflow to 0 and the 0 / 0 they give
 * (spurious), and an e4m3 sum that overflows at a step computed here by a
 * plain loop, spurious exactly when the exact running sum is still below
 * xmax. Then the pieces the other experiments use: lowp_fpx_exact_mul /
 * _add against hand-derived truncations, lowp_ref_expsum's exact and
 * transcendental cases, the first-exception JSON and text of a trace with
 * events planted at (step, element) out of order, and the traced rows' bits
 * against the untraced kernel.
 * Run: ctest --test-dir build -R tfpx_first
 */

#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/fpx_json.h"
#include "cpu/softmax_kernel.h"
#include "format/format.h"
#include "measure/fpx.h"
#include "measure/ref.h"
#include "status.h"

#define N 64

/* the first event of any kind; NULL when none */
static const lowp_fpx_event_t *first_any(const lowp_fpx_trace_t *t, int *kind) {
  *kind = lowp_fpx_first_kind(t, LOWP_FPX_ALL);
  return *kind < 0 ? NULL : &t->first[*kind];
}

static void planted_exp_overflow(void) {
  double x[N], y[N];
  lowp_fpx_trace_t t;
  const lowp_fpx_event_t *e;
  int k, j;
  for (j = 0; j < N; j++) x[j] = 0.25 * (j % 5);
  x[37] = 12; /* exp(12) = 162754.79 > 65504 */
  lowp_fpx_init(&t);
  lowp_test_check(lowp_softmax_naive_fpx(&t, y, x, N, &LOWP_FMT_FP16, &LOWP_FMT_FP32, 3, 0) == LOWP_OK, "run");
  e = first_any(&t, &k);
  lowp_test_check(e && k == LOWP_FPX_OVF_INF && e->op == LOWP_FPX_OP_EXP && e->i == 3 && e->j == 37 &&
                      e->seq == 74 && e->inherent == 1,
                  "exp overflow at element 37: kind %d op %d i %lld j %lld seq %llu inherent %d", k, e ? (int)e->op : -1,
                  e ? (long long)e->i : -9, e ? (long long)e->j : -9, e ? (unsigned long long)e->seq : 0ULL,
                  e ? e->inherent : -9);
  lowp_test_check(e && fabs(e->exact - 162754.791419) < 1e-3 && e->sticky, "its exact value %.17g", e ? e->exact : 0);
  lowp_test_check(t.count[LOWP_FPX_OVF_INF] == 1, "one overflow (the sum's inf + x is exact): %llu",
                  (unsigned long long)t.count[LOWP_FPX_OVF_INF]);
  e = &t.first[LOWP_FPX_INVALID];
  lowp_test_check(t.count[LOWP_FPX_INVALID] == 1 && e->op == LOWP_FPX_OP_DIV && e->j == 37 && e->inherent == 0 &&
                      e->seq == 2 * N + 37,
                  "inf / inf at element 37, spurious: count %llu op %d j %lld inherent %d",
                  (unsigned long long)t.count[LOWP_FPX_INVALID], (int)e->op, (long long)e->j, e->inherent);
  lowp_test_check(isnan(y[37]) && y[0] == 0, "outputs: y[37] %g y[0] %g", y[37], y[0]);
}

static void planted_nan_and_underflow(void) {
  double x[N], y[N];
  lowp_fpx_trace_t t;
  const lowp_fpx_event_t *e;
  int k, j;
  for (j = 0; j < N; j++) x[j] = 1;
  x[5] = NAN;
  lowp_fpx_init(&t);
  (void)lowp_softmax_naive_fpx(&t, y, x, N, &LOWP_FMT_BF16, &LOWP_FMT_FP32, 0, 1000);
  e = first_any(&t, &k);
  lowp_test_check(e && k == LOWP_FPX_NAN_PROP && e->op == LOWP_FPX_OP_EXP && e->j == 5 && e->seq == 1010 &&
                      e->inherent == 1,
                  "NaN input at 5: kind %d op %d j %lld seq %llu", k, e ? (int)e->op : -1, e ? (long long)e->j : -9,
                  e ? (unsigned long long)e->seq : 0ULL);
  lowp_test_check(t.count[LOWP_FPX_INVALID] == 0, "no invalid from a NaN input");
  /* every exp underflows to zero in fp16: the sum is 0, every division 0/0 */
  for (j = 0; j < N; j++) x[j] = -200;
  lowp_fpx_init(&t);
  (void)lowp_softmax_naive_fpx(&t, y, x, N, &LOWP_FMT_FP16, &LOWP_FMT_FP32, 0, 0);
  e = first_any(&t, &k);
  lowp_test_check(e && k == LOWP_FPX_UNF_ZERO && e->op == LOWP_FPX_OP_EXP && e->j == 0 && e->inherent == 1 &&
                      t.count[LOWP_FPX_UNF_ZERO] == N,
                  "exp(-200) underflows to 0 at element 0, %d times", N);
  e = &t.first[LOWP_FPX_INVALID];
  lowp_test_check(t.count[LOWP_FPX_INVALID] == N && e->op == LOWP_FPX_OP_DIV && e->j == 0 && e->inherent == 0,
                  "0 / 0 at every element, the first at 0, spurious (the exact softmax is 1/n)");
}

/* an e4m3 sum of n copies of e4m3(exp(3)) = 20: the step where it first
   overflows (NaN: no infinity), found by a plain loop, and whether the
   exact running sum (k + 1) exp(3) is above xmax there */
static void planted_sum_overflow(void) {
  double x[256], y[256], s = 0, e3;
  lowp_fpx_trace_t t;
  const lowp_fpx_event_t *e;
  int k = -1, j, kind, inh;
  for (j = 0; j < 256; j++) x[j] = 3;
  lowp_round_f64(&e3, exp(3.0), &LOWP_FMT_E4M3, NULL, LOWP_RND_NE);
  for (j = 0; j < 256 && k < 0; j++) {
    lowp_round_f64(&s, s + e3, &LOWP_FMT_E4M3, NULL, LOWP_RND_NE);
    if (isnan(s)) k = j;
  }
  inh = (k + 1) * exp(3.0) > lowp_format_xmax(&LOWP_FMT_E4M3);
  lowp_fpx_init(&t);
  (void)lowp_softmax_naive_fpx(&t, y, x, 256, &LOWP_FMT_E4M3, &LOWP_FMT_E4M3, -1, 0);
  e = first_any(&t, &kind);
  lowp_test_check(k > 0 && e && kind == LOWP_FPX_OVF_NAN && e->op == LOWP_FPX_OP_ADD && e->j == k && e->k == k &&
                      e->i == -1 && e->inherent == inh,
                  "e4m3 sum overflows at step %d (inherent %d): got kind %d op %d j %lld inherent %d", k, inh, kind,
                  e ? (int)e->op : -1, e ? (long long)e->j : -9, e ? e->inherent : -9);
  printf("e4m3 sum of 20s overflows at step %d, %s\n", k, inh ? "inherent" : "spurious");
}

/* the traced row has the untraced kernel's bits */
static void same_bits(void) {
  double x[N], y1[N], y2[N];
  lowp_fpx_trace_t t;
  int j, same = 1;
  for (j = 0; j < N; j++) x[j] = -3 + 0.37 * j;
  lowp_fpx_init(&t);
  (void)lowp_softmax_naive_fpx(&t, y1, x, N, &LOWP_FMT_FP16, &LOWP_FMT_FP16, 0, 0);
  (void)lowp_softmax_naive_fpx(NULL, y2, x, N, &LOWP_FMT_FP16, &LOWP_FMT_FP16, 0, 0);
  for (j = 0; j < N; j++) same &= memcmp(&y1[j], &y2[j], sizeof y1[j]) == 0;
  lowp_test_check(same, "traced and untraced rows differ");
}

static void exact_helpers(void) {
  double x;
  int s;
  lowp_ref_expsum_t *es = lowp_ref_expsum_new();
  lowp_fpx_exact_mul(&x, &s, 1 + 0x1p-30, 1 + 0x1p-30); /* 1 + 2^-29 + 2^-60 */
  lowp_test_check(x == 1 + 0x1p-29 && s == 1, "mul truncation %a %d", x, s);
  lowp_fpx_exact_mul(&x, &s, -(1 + 0x1p-30), 1 + 0x1p-30);
  lowp_test_check(x == -(1 + 0x1p-29) && s == 1, "negative mul %a %d", x, s);
  lowp_fpx_exact_mul(&x, &s, DBL_MAX, 2);
  lowp_test_check(isinf(x) && x > 0 && s == 1, "mul beyond 2^1024: %a %d", x, s);
  lowp_fpx_exact_mul(&x, &s, 0x1p-600, 0x1p-600);
  lowp_test_check(x == 0 && s == 1, "mul below binary64's range: %a %d", x, s);
  lowp_fpx_exact_add(&x, &s, 1, -0x1p-60);
  lowp_test_check(x == 1 - 0x1p-53 && s == 1, "add truncation toward zero %a %d", x, s);
  lowp_fpx_exact_add(&x, &s, 1, 0x1p-60);
  lowp_test_check(x == 1 && s == 1, "add %a %d", x, s);
  lowp_fpx_exact_add(&x, &s, DBL_MAX, DBL_MAX);
  lowp_test_check(isinf(x) && s == 1, "add beyond 2^1024");
  if (!lowp_test_check(es != NULL, "expsum")) return;
  lowp_ref_expsum_add(es, 0);
  lowp_ref_expsum_add(es, 0);
  lowp_ref_expsum_add(es, -INFINITY);
  lowp_ref_expsum_get(es, &x, &s);
  lowp_test_check(x == 2 && s == 0, "exp(0) + exp(0) + exp(-inf) = 2 exactly: %a %d", x, s);
  lowp_ref_expsum_add(es, 1);
  lowp_ref_expsum_get(es, &x, &s);
  /* 2 + e = 4.71828182845904523536...; binary64 neighbours 0x1.2df85458a2bb4p+2 =
     4.71828182845904464670... below and 4.7182818284590455... above */
  lowp_test_check(x == 0x1.2df85458a2bb4p+2 && s == 1, "2 + e truncated: %a %d", x, s);
  lowp_ref_expsum_add(es, 710);
  lowp_ref_expsum_get(es, &x, &s);
  lowp_test_check(isinf(x) && s == 1, "exp(710) >= 2^1024: inf with sticky");
  lowp_ref_expsum_free(es);
}

/* events planted out of order: the report names the smallest sequence */
static void first_report(void) {
  lowp_fpx_trace_t t;
  lowp_fpx_event_t ev;
  cJSON *o, *it;
  char line[512];
  unsigned m;
  lowp_fpx_init(&t);
  lowp_fpx_event_init(&ev);
  ev.seq = 7 * 100 + 40; ev.i = 7; ev.j = 40;
  m = lowp_fpx_eval(&ev, LOWP_FPX_OP_MUL, 65536, 2, 131072, 0, INFINITY, &LOWP_FMT_FP16, LOWP_RND_NE, 0);
  lowp_fpx_record_ref(&t, m, &ev, &LOWP_FMT_FP16, LOWP_RND_NE, NULL, 0);
  lowp_fpx_event_init(&ev);
  ev.seq = 3 * 100 + 99; ev.i = 3; ev.j = 99;
  m = lowp_fpx_eval(&ev, LOWP_FPX_OP_ADD, 65504, 16, 65520, 0, INFINITY, &LOWP_FMT_FP16, LOWP_RND_NE, 0);
  {
    double ref = 60000; /* the exact computation is in range: spurious */
    lowp_fpx_record_ref(&t, m, &ev, &LOWP_FMT_FP16, LOWP_RND_NE, &ref, 0);
  }
  o = lowp_fpx_first_json(&t, LOWP_FPX_OVERFLOW);
  it = cJSON_GetObjectItem(o, "step");
  lowp_test_check(o && cJSON_IsTrue(cJSON_GetObjectItem(o, "found")) && it && it->valuedouble == 3 &&
                      cJSON_GetObjectItem(o, "element")->valuedouble == 99 &&
                      !strcmp(cJSON_GetObjectItem(o, "op")->valuestring, "add") &&
                      !strcmp(cJSON_GetObjectItem(o, "kind")->valuestring, "overflow_inf") &&
                      cJSON_IsTrue(cJSON_GetObjectItem(o, "spurious")) &&
                      cJSON_IsNull(cJSON_GetObjectItem(o, "k")) &&
                      cJSON_GetObjectItem(cJSON_GetObjectItem(o, "counts"), "overflow_inf")->valuedouble == 2,
                  "first overflow reported at step 3, element 99, add, spurious");
  cJSON_Delete(o);
  o = lowp_fpx_first_json(&t, LOWP_FPX_UNDERFLOW);
  lowp_test_check(o && cJSON_IsFalse(cJSON_GetObjectItem(o, "found")), "no underflow: found false");
  cJSON_Delete(o);
  lowp_fpx_first_text(line, sizeof line, &t, LOWP_FPX_ALL);
  lowp_test_check(strstr(line, "overflow_inf in add at step 3, element 99") && strstr(line, "spurious"),
                  "text: %s", line);
  lowp_fpx_first_text(line, sizeof line, &t, LOWP_FPX_UNDERFLOW);
  lowp_test_check(!strcmp(line, "none"), "text for none: %s", line);
}

int main(void) {
  lowp_test_start("tfpx_first");
  planted_exp_overflow();
  planted_nan_and_underflow();
  planted_sum_overflow();
  same_bits();
  exact_helpers();
  first_report();
  return lowp_test_end();
}
