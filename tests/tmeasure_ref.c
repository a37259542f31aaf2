/* tmeasure_ref -- lib/measure/ref.h's exact references, and the softmax kernels' exp=cr model */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check/op.h"
#include "check/subject.h"
#include "cpu/elementwise.h"
#include "exact/exact.h"
#include "format/round_mpfr.h"
#include "measure/normwise.h"
#include "measure/point.h"
#include "measure/ref.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"
#include "tkernel.h"

/* ln(a/b): known values, directed roundings around them, exact case, bad input */
static void log_ratio(void) {
  double y = 0, up = 0, dn = 0, ne = 0;
  int st;
  /* ln 65520 = 11.090110718527... (fp16's T); the smallest fp16 above is 11.09375 */
  st = lowp_ref_log_ratio(&y, 65520, 1, &LOWP_FMT_FP64, LOWP_RND_NE);
  lowp_test_check(st == LOWP_OK &&
                      fabs(y - 11.090110718527) < 1e-11, "ln 65520 = %.15g", y);
  lowp_ref_log_ratio(&up, 65520, 1, &LOWP_FMT_FP16, LOWP_RND_UP);
  lowp_ref_log_ratio(&dn, 65520, 1, &LOWP_FMT_FP16, LOWP_RND_DN);
  lowp_ref_log_ratio(&ne, 65520, 1, &LOWP_FMT_FP16, LOWP_RND_NE);
  lowp_test_check(up == 11.09375 && dn == 11.0859375 && (ne == up || ne == dn),
                  "ln 65520 in fp16: up %g down %g nearest %g", up, dn, ne);
  /* ln(e^x) for x a double: compare with ln of its ratio at a few points */
  st = lowp_ref_log_ratio(&y, 1, 3, &LOWP_FMT_FP64, LOWP_RND_NE);
  lowp_test_check(st == LOWP_OK && y == -1.0986122886681098,
                  "ln(1/3) = -ln 3 = -1.0986122886681098: %.17g", y);
  st = lowp_ref_log_ratio(&y, 7, 7, &LOWP_FMT_FP64, LOWP_RND_NE);
  lowp_test_check(st == LOWP_OK && y == 0 && !signbit(y),
                  "ln(7/7) = +0 exactly");
  /* a tiny result (a/b close to 1): relative accuracy, not absolute */
  st = lowp_ref_log_ratio(&y, 1 + 0x1p-40, 1, &LOWP_FMT_FP64, LOWP_RND_NE);
  lowp_test_check(st == LOWP_OK &&
                      y == log1p(0x1p-40), "ln(1 + 2^-40) = %.17g vs log1p %.17g", y, log1p(0x1p-40));
  lowp_test_check(lowp_ref_log_ratio(&y, -1, 2, &LOWP_FMT_FP64, LOWP_RND_NE) == LOWP_EINVAL &&
                      lowp_ref_log_ratio(&y, 1, 0, &LOWP_FMT_FP64, LOWP_RND_NE) == LOWP_EINVAL &&
                      lowp_ref_log_ratio(&y, INFINITY, 2, &LOWP_FMT_FP64, LOWP_RND_NE) == LOWP_EINVAL,
                  "ln of a ratio of non-positive or infinite numbers is refused");
}

static void harmonic(void) {
  lowp_ref_harmonic_t *h = lowp_ref_harmonic_new();
  double v = 0;
  int k;
  for (k = 1; k <= 4; k++) v = lowp_ref_harmonic_next(h);
  lowp_test_check(v == 25.0 / 12.0, "H_4 = 25/12: %.17g", v);
  for (; k <= 1000; k++) v = lowp_ref_harmonic_next(h);
  /* H_1000 = 7.4854708605503449126565182043339001765... */
  lowp_test_check(v == 7.4854708605503449, "H_1000 = %.17g", v);
  lowp_ref_harmonic_free(h);
}

static void softmax256(void) {
  double x[5] = {3, 1, -2, 0.5, 3}, y[5], ye[5];
  int i, same = 1;
  lowp_test_check(lowp_ref_softmax256(y, x, 5) == LOWP_OK &&
                      lowp_exact_softmax(ye, x, 5, &LOWP_FMT_FP64, NULL, LOWP_RND_NE) == LOWP_OK, "softmax refs run");
  for (i = 0; i < 5; i++) same &= y[i] == ye[i];
  lowp_test_check(same, "softmax at 256 bits agrees with lib/exact's on a row");
  x[2] = NAN;
  lowp_test_check(lowp_ref_softmax256(y, x, 5) == LOWP_EINVAL, "NaN refused");
}

/* softmax_naive/stable with exp=cr: every operation is fp16's correctly
   rounded one, checked against lib/exact's exp, add and division */
static void softmax_exp_cr(void) {
  lowp_problem_t p;
  lowp_rng_t g;
  const lowp_format_t *F = &LOWP_FMT_FP16;
  double x[8], y[8], e[8], s, q;
  double *out[1] = {y};
  const double *in[1] = {x};
  char err[300];
  int t, i, ok = 1, n = 8;
  memset(&p, 0, sizeof p);
  p.op = lowp_op_get(LOWP_OP_SOFTMAX);
  p.dims.batch = p.dims.m = p.dims.k = 1;
  p.dims.n = (size_t)n;
  p.in[0] = *F;
  p.out = *F;
  lowp_rng_init(&g, lowp_test_seed(), 1);
  for (t = 0; t < 200 && ok; t++) {
    for (i = 0; i < n; i++) lowp_round_f64(&x[i], 8 * lowp_rng_normal(&g), F, NULL, LOWP_RND_NE);
    if (lowp_test_run_kernel(out, in, "softmax_naive", "compute=fp16,exp=cr", &p, err, sizeof err)) {
      ok = lowp_test_check(0, "softmax_naive exp=cr: %s", err);
      break;
    }
    s = 0;
    for (i = 0; i < n; i++) {
      lowp_exact_fn(&e[i], &x[i], 1, LOWP_FN_EXP, F, NULL, LOWP_RND_NE);
      ok &= e[i] == lowp_kernel_exp_cr(x[i], F);
      lowp_exact_add2(&s, s, e[i], F, NULL, LOWP_RND_NE, 0);
    }
    for (i = 0; i < n; i++) {
      lowp_round_f64(&q, e[i] / s, F, NULL, LOWP_RND_NE); /* p = 11: e/s in binary64 then fp16 is correct */
      ok &= (isnan(q) && isnan(y[i])) || q == y[i];
    }
  }
  lowp_test_check(ok, "softmax_naive compute=fp16,exp=cr = fp16's correctly rounded exp, sum and division");
  lowp_test_check(lowp_test_run_kernel(out, in, "softmax_stable", "exp=fast", &p, err, sizeof err) == LOWP_EINVAL &&
                      strstr(err, "expected libm or cr") != NULL, "exp=fast refused: %s", err);
  p.op = lowp_op_get(LOWP_OP_LOGSOFTMAX);
  lowp_test_check(lowp_test_run_kernel(out, in, "logsoftmax", "exp=cr", &p, err, sizeof err) == LOWP_EINVAL,
                  "logsoftmax takes no exp= (%s)", err);
}

/* the rounding of an exact product, exact comparisons and decimal strings of quotients */
static void products(void) {
  double y = 0, rel = 0, t = 0x1p-14 / (1 + 0x1p-11);
  char buf[64];
  int st = lowp_ref_round_product(&y, &rel, 1e-6, 1, &LOWP_FMT_FP16);
  lowp_test_check(st == LOWP_OK && y == 17 * 0x1p-24 && fabs(rel - fabs(1e-6 - y) / 1e-6) < 1e-15,
                  "fp16(1e-6) = 17 2^-24 = %g, relative error %g", y, rel);
  st = lowp_ref_round_product(&y, &rel, 65520, 1, &LOWP_FMT_FP16);
  lowp_test_check(st == LOWP_OK && isinf(y) && isinf(rel), "65520 overflows fp16: %g, %g", y, rel);
  st = lowp_ref_round_product(&y, &rel, 0x1p-30, 0x1p-30, &LOWP_FMT_FP16);
  lowp_test_check(st == LOWP_OK && y == 0 && rel == 1, "2^-60 is lost in fp16: relative error 1 (%g)", rel);
  st = lowp_ref_round_product(&y, &rel, 3, 0.5, &LOWP_FMT_FP16);
  lowp_test_check(st == LOWP_OK && y == 1.5 && rel == 0, "an exact product has error 0");
  lowp_test_check(lowp_ref_round_product(&y, &rel, NAN, 1, &LOWP_FMT_FP16) == LOWP_EINVAL, "NaN refused");
  /* xmin/(1+u) of fp16 is not a double: its neighbours compare on either side */
  lowp_test_check(lowp_ref_cmp_quotient(t, 0x1p-14, 1 + 0x1p-11, 1) != 0 &&
                      lowp_ref_cmp_quotient(nextafter(t, 0), 0x1p-14, 1 + 0x1p-11, 1) < 0 &&
                      lowp_ref_cmp_quotient(nextafter(t, 1), 0x1p-14, 1 + 0x1p-11, 1) > 0 &&
                      lowp_ref_cmp_quotient(0.25, 1, 2, 2) == 0 && lowp_ref_cmp_quotient(-0.25, 1, -2, 2) == 0 &&
                      lowp_ref_cmp_quotient(0, 1, -2, 2) > 0,
                  "exact comparisons with a quotient");
  st = lowp_ref_quotient_str(buf, sizeof buf, 8, 1, 3, 1);
  lowp_test_check(st == LOWP_OK && !strcmp(buf, "0.33333333"), "1/3 to 8 digits: %s", buf);
  st = lowp_ref_quotient_str(buf, sizeof buf, 17, 0x1p-14, 1 + 0x1p-11, 1);
  /* 2^-14 / (1 + 2^-11) = 6.10053...e-05; 17 digits from the exact value */
  lowp_test_check(st == LOWP_OK && !strncmp(buf, "6.1005", 6) && strlen(buf) == 22, "xmin/(1+u) = %s", buf);
  lowp_test_check(lowp_ref_quotient_str(buf, sizeof buf, 8, 1, 0, 1) == LOWP_EINVAL, "division by 0 refused");
}

/* decimal range ends read exactly, and shares of a range under two laws */
static void shares(void) {
  double y = -1, v = 0;
  int sg = 0, st;
  st = lowp_ref_share(&y, "0", "1", 0.25, 0.5, 0);
  lowp_test_check(st == LOWP_OK && y == 0.25, "uniform share of [0.25, 0.5] in [0, 1]: %g", y);
  st = lowp_ref_share(&y, "1", "100", 10, INFINITY, 1);
  lowp_test_check(st == LOWP_OK && y == 0.5, "log-uniform share of [10, 100] in [1, 100]: %.17g", y);
  st = lowp_ref_share(&y, "1", "100", 200, INFINITY, 0);
  lowp_test_check(st == LOWP_OK && y == 0, "an interval outside the range has share 0");
  st = lowp_ref_share(&y, "1e-8", "1e8", -1, 1e-8, 0);
  lowp_test_check(st == LOWP_OK && y > 0 && y < 1e-30,
                  "[1e-8, fl(1e-8)] of [1e-8, 1e8]: the decimal end is exact (%g)", y);
  lowp_test_check(lowp_ref_share(&y, "2", "1", 0, 1, 0) == LOWP_EINVAL &&
                      lowp_ref_share(&y, "0", "1", 0, 1, 1) == LOWP_EINVAL &&
                      lowp_ref_share(&y, "x", "1", 0, 1, 0) == LOWP_EINVAL, "bad ranges refused");
  st = lowp_ref_decimal(&v, &sg, "-1e-8");
  lowp_test_check(st == LOWP_OK && v == -1e-8 && sg == -1, "-1e-8 read: %g, sign %d", v, sg);
  lowp_test_check(lowp_ref_decimal(&v, &sg, "inf") == LOWP_EINVAL && lowp_ref_decimal(&v, &sg, "1e-8x") == LOWP_EINVAL,
                  "inf and trailing text refused");
  lowp_test_check(lowp_ref_decimal_cmp("1e-8", "0.00000001") == 0 &&
                      lowp_ref_decimal_cmp("1e-8", "1.00000000000000000001e-8") == -1 &&
                      lowp_ref_decimal_cmp("2", "1") == 1 && lowp_ref_decimal_cmp("nan", "1") == 2,
                  "decimal comparisons beyond binary64");
}

/* errors of one value against an exact decimal (lowp convert's metrics) */
static void point(void) {
  mpfr_t x;
  double ea = 0, er = 0, eu = 0;
  mpfr_init2(x, 128);
  lowp_mpfr_parse(x, "0.1");
  lowp_measure_point_errors(&ea, &er, &eu, 0.0999755859375, x, &LOWP_FMT_FP16);
  lowp_test_check(ea == 0.8 * 0x1p-15 && er == 0.8 * 0x1p-15 / 0.1 && eu == 0.4,
                  "fp16(0.1) against the decimal 0.1: abs %.17g rel %.17g ulp %.17g", ea, er, eu);
  lowp_measure_point_errors(&ea, &er, &eu, NAN, x, &LOWP_FMT_FP16);
  lowp_test_check(isnan(ea) && isnan(er) && isnan(eu), "NaN result: NaN errors");
  mpfr_set_inf(x, 1);
  lowp_measure_point_errors(&ea, &er, &eu, INFINITY, x, &LOWP_FMT_FP16);
  lowp_test_check(ea == 0 && er == 0 && eu == 0, "the same infinity: no error");
  lowp_measure_point_errors(&ea, &er, &eu, 65504, x, &LOWP_FMT_FP16);
  lowp_test_check(isinf(ea) && isinf(er) && isinf(eu), "a finite value for an infinity: infinite errors");
  mpfr_set_zero(x, 1);
  lowp_measure_point_errors(&ea, &er, &eu, 0x1p-24, x, &LOWP_FMT_FP16);
  lowp_test_check(ea == 0x1p-24 && isinf(er) && eu == 1, "against 0: abs 2^-24, rel inf, 1 ulp at emin (%g)", eu);
  mpfr_clear(x);
}

/* lowp_point_t: an exact number read from text, rounded and measured (lowp convert) */
static void exact_point(void) {
  lowp_point_t *x = NULL;
  lowp_policy_t sat = {0};
  double y = 0, ea = 0, er = 0, eu = 0;
  int t;
  lowp_test_check(lowp_point_new(&x) == LOWP_OK && x, "a point is made");
  if (!x) return;
  t = lowp_point_round(&y, x, &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
  lowp_test_check(t == 0 && y == 0 && !signbit(y), "a new point is +0");
  lowp_test_check(lowp_point_parse(x, "0.1x") == LOWP_EPARSE && lowp_point_parse(x, "1@3") == LOWP_EPARSE,
                  "text that is not a number refused");
  lowp_test_check(lowp_point_parse(x, "0.1") == LOWP_OK, "0.1 read");
  t = lowp_point_round(&y, x, &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
  lowp_test_check(y == 0.0999755859375 && t < 0, "fp16(0.1) rne = 0.0999755859375, below: %.17g %d", y, t);
  t = lowp_point_round(&y, x, &LOWP_FMT_FP16, NULL, LOWP_RND_UP);
  lowp_test_check(y == 0.10003662109375 && t > 0, "fp16(0.1) rup = 0.10003662109375, above: %.17g %d", y, t);
  t = lowp_point_round(&y, x, &LOWP_FMT_FP64, NULL, LOWP_RND_DN);
  lowp_test_check(y == 0.09999999999999999 && t < 0, "fp64(0.1) rdn one below 0.1's double: %.17g", y);
  lowp_point_errors(&ea, &er, &eu, 0.0999755859375, x, &LOWP_FMT_FP16);
  lowp_test_check(ea == 0.8 * 0x1p-15 && eu == 0.4, "errors against the decimal 0.1, not its double");
  /* 65520 is fp16's midpoint above 65504: rne overflows, rtz stays at max */
  lowp_test_check(lowp_point_parse(x, "65520") == LOWP_OK, "65520 read");
  sat.overflow = LOWP_OVF_SAT;
  (void)lowp_point_round(&y, x, &LOWP_FMT_FP16, &sat, LOWP_RND_NE);
  lowp_test_check(y == 65504 && lowp_point_beyond_max(x, &LOWP_FMT_FP16, &sat, LOWP_RND_NE),
                  "65520 rne saturated to 65504: beyond max");
  lowp_test_check(!lowp_point_beyond_max(x, &LOWP_FMT_FP16, &sat, LOWP_RND_TZ),
                  "65520 rtz is 65504 by rounding, not beyond max");
  lowp_test_check(lowp_point_parse(x, "-nan") == LOWP_OK &&
                      !lowp_point_beyond_max(x, &LOWP_FMT_E4M3, &sat, LOWP_RND_NE), "NaN is never beyond max");
  lowp_point_set_f64(x, -0x1p-30);
  t = lowp_point_round(&y, x, &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
  lowp_test_check(y == -0x1p-30 && t == 0, "a binary64 set exactly");
  lowp_point_errors(&ea, &er, &eu, y, x, &LOWP_FMT_FP32);
  lowp_test_check(ea == 0 && er == 0 && eu == 0, "no error for an exact result");
  lowp_point_free(x);
  lowp_point_free(NULL);
}

/* the normwise relative error */
static void normwise(void) {
  double x[2] = {3, 4}, c[2] = {3, 9}, z[2] = {0, 0}, bad[2] = {NAN, 1};
  lowp_test_check(lowp_measure_rel_norm(x, x, 2) == 0, "no error");
  lowp_test_check(lowp_measure_rel_norm(c, x, 2) == 1, "||(0, 5)|| / ||(3, 4)|| = 1: %g", lowp_measure_rel_norm(c, x, 2));
  lowp_test_check(lowp_measure_rel_norm(x, z, 2) == 5, "against zeros: the absolute norm, 5");
  lowp_test_check(isinf(lowp_measure_rel_norm(bad, x, 2)), "a NaN gives +inf");
}

int main(void) {
  lowp_test_start("tmeasure_ref");
  log_ratio();
  harmonic();
  softmax256();
  softmax_exp_cr();
  products();
  shares();
  point();
  exact_point();
  normwise();
  return lowp_test_end();
}
