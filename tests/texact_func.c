/* texact_func -- softmax family, mean/variance and exp/log/tanh/GELU against MPFR at two precisions */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "exact/exact.h"
#include "exact/ival.h"
#include "format/round_mpfr.h"
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

#define N 12

static int same(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  return x == y && signbit(x) == signbit(y);
}

/* ------------------------------------------------- naive MPFR oracles */
/* Straightforward formulas at precision P, round to nearest, no shift by
   the max: a different algorithm from lib/exact. out[i] for each output. */

typedef void (*naive_fn)(mpfr_t *out, const double *x, size_t n, mpfr_prec_t P);
typedef int (*lib_fn)(double *y, const double *x, size_t n, const lowp_format_t *f,
                      const lowp_policy_t *pol, lowp_rounding_t rnd);

static void naive_sum_exp(mpfr_t s, const double *x, size_t n, mpfr_prec_t P) {
  mpfr_t t;
  size_t i;
  mpfr_init2(t, P);
  mpfr_set_zero(s, 1);
  for (i = 0; i < n; i++) {
    mpfr_set_d(t, x[i], MPFR_RNDN);
    mpfr_exp(t, t, MPFR_RNDN);
    mpfr_add(s, s, t, MPFR_RNDN);
  }
  mpfr_clear(t);
}

static void nv_softmax(mpfr_t *out, const double *x, size_t n, mpfr_prec_t P) {
  mpfr_t s;
  size_t i;
  mpfr_init2(s, P);
  naive_sum_exp(s, x, n, P);
  for (i = 0; i < n; i++) {
    mpfr_set_d(out[i], x[i], MPFR_RNDN);
    mpfr_exp(out[i], out[i], MPFR_RNDN);
    mpfr_div(out[i], out[i], s, MPFR_RNDN);
  }
  mpfr_clear(s);
}

static void nv_logsoftmax(mpfr_t *out, const double *x, size_t n, mpfr_prec_t P) {
  mpfr_t s;
  size_t i;
  mpfr_init2(s, P);
  naive_sum_exp(s, x, n, P);
  mpfr_log(s, s, MPFR_RNDN);
  for (i = 0; i < n; i++) {
    mpfr_set_d(out[i], x[i], MPFR_RNDN);
    mpfr_sub(out[i], out[i], s, MPFR_RNDN);
  }
  mpfr_clear(s);
}

static void nv_lse(mpfr_t *out, const double *x, size_t n, mpfr_prec_t P) {
  naive_sum_exp(out[0], x, n, P);
  mpfr_log(out[0], out[0], MPFR_RNDN);
}

static void nv_xent3(mpfr_t *out, const double *x, size_t n, mpfr_prec_t P) {
  mpfr_t t;
  mpfr_init2(t, P);
  nv_lse(out, x, n, P);
  mpfr_set_d(t, x[3], MPFR_RNDN);
  mpfr_sub(out[0], out[0], t, MPFR_RNDN);
  mpfr_clear(t);
}

static void nv_mean(mpfr_t *out, const double *x, size_t n, mpfr_prec_t P) {
  mpfr_t t;
  size_t i;
  mpfr_init2(t, P);
  mpfr_set_zero(out[0], 1);
  for (i = 0; i < n; i++) {
    mpfr_set_d(t, x[i], MPFR_RNDN);
    mpfr_add(out[0], out[0], t, MPFR_RNDN);
  }
  mpfr_div_ui(out[0], out[0], (unsigned long)n, MPFR_RNDN);
  mpfr_clear(t);
}

static void nv_var(mpfr_t *out, const double *x, size_t n, mpfr_prec_t P) {
  mpfr_t mu, t;
  size_t i;
  mpfr_inits2(P, mu, t, (mpfr_ptr)0);
  nv_mean(&mu, x, n, P);
  mpfr_set_zero(out[0], 1);
  for (i = 0; i < n; i++) { /* two-pass: sum (x - mean)^2 */
    mpfr_set_d(t, x[i], MPFR_RNDN);
    mpfr_sub(t, t, mu, MPFR_RNDN);
    mpfr_sqr(t, t, MPFR_RNDN);
    mpfr_add(out[0], out[0], t, MPFR_RNDN);
  }
  mpfr_div_ui(out[0], out[0], (unsigned long)n, MPFR_RNDN);
  mpfr_clears(mu, t, (mpfr_ptr)0);
}

static void nv_fn(mpfr_t *out, const double *x, size_t n, mpfr_prec_t P, lowp_fn_t fn) {
  size_t i;
  mpfr_t t;
  mpfr_init2(t, P);
  for (i = 0; i < n; i++) {
    mpfr_set_d(out[i], x[i], MPFR_RNDN);
    switch (fn) {
    case LOWP_FN_EXP: mpfr_exp(out[i], out[i], MPFR_RNDN); break;
    case LOWP_FN_LOG: mpfr_log(out[i], out[i], MPFR_RNDN); break;
    case LOWP_FN_TANH: mpfr_tanh(out[i], out[i], MPFR_RNDN); break;
    case LOWP_FN_GELU:
      mpfr_sqrt_ui(t, 2, MPFR_RNDN);
      mpfr_div(t, out[i], t, MPFR_RNDN);
      mpfr_erf(t, t, MPFR_RNDN);
      mpfr_add_ui(t, t, 1, MPFR_RNDN);
      mpfr_mul(out[i], out[i], t, MPFR_RNDN);
      mpfr_div_2ui(out[i], out[i], 1, MPFR_RNDN);
      break;
    }
  }
  mpfr_clear(t);
}
static void nv_exp(mpfr_t *o, const double *x, size_t n, mpfr_prec_t P) { nv_fn(o, x, n, P, LOWP_FN_EXP); }
static void nv_log(mpfr_t *o, const double *x, size_t n, mpfr_prec_t P) { nv_fn(o, x, n, P, LOWP_FN_LOG); }
static void nv_tanh(mpfr_t *o, const double *x, size_t n, mpfr_prec_t P) { nv_fn(o, x, n, P, LOWP_FN_TANH); }
static void nv_gelu(mpfr_t *o, const double *x, size_t n, mpfr_prec_t P) { nv_fn(o, x, n, P, LOWP_FN_GELU); }

/* lib adapters with the common signature */
static int lb_lse(double *y, const double *x, size_t n, const lowp_format_t *f,
                  const lowp_policy_t *p, lowp_rounding_t r) { return lowp_exact_logsumexp(y, x, n, f, p, r); }
static int lb_xent3(double *y, const double *x, size_t n, const lowp_format_t *f,
                    const lowp_policy_t *p, lowp_rounding_t r) { return lowp_exact_xent(y, x, n, 3, f, p, r); }
static int lb_mean(double *y, const double *x, size_t n, const lowp_format_t *f,
                   const lowp_policy_t *p, lowp_rounding_t r) { return lowp_exact_meanvar(y, NULL, x, n, 0, f, p, r); }
static int lb_var(double *y, const double *x, size_t n, const lowp_format_t *f,
                  const lowp_policy_t *p, lowp_rounding_t r) {
  /* the SR index of var is offset + 1 (exact.h); shift so both use offset */
  lowp_policy_t q = {0};
  if (p) q = *p;
  q.sr_offset -= 1; /* unsigned: wraps, and the library adds 1 back */
  return lowp_exact_meanvar(NULL, y, x, n, 0, f, &q, r);
}
static int lb_exp(double *y, const double *x, size_t n, const lowp_format_t *f,
                  const lowp_policy_t *p, lowp_rounding_t r) { return lowp_exact_fn(y, x, n, LOWP_FN_EXP, f, p, r); }
static int lb_log(double *y, const double *x, size_t n, const lowp_format_t *f,
                  const lowp_policy_t *p, lowp_rounding_t r) { return lowp_exact_fn(y, x, n, LOWP_FN_LOG, f, p, r); }
static int lb_tanh(double *y, const double *x, size_t n, const lowp_format_t *f,
                   const lowp_policy_t *p, lowp_rounding_t r) { return lowp_exact_fn(y, x, n, LOWP_FN_TANH, f, p, r); }
static int lb_gelu(double *y, const double *x, size_t n, const lowp_format_t *f,
                   const lowp_policy_t *p, lowp_rounding_t r) { return lowp_exact_fn(y, x, n, LOWP_FN_GELU, f, p, r); }

/* Generic sweep: the library against the naive formula at 200 and at 1000
   bits, every format and mode. nout outputs. */
static void sweep(const char *name, lib_fn lib, naive_fn naive, const double *x,
                  size_t n, size_t nout) {
  static const mpfr_prec_t precs[2] = {200, 1000};
  mpfr_t ref[2][N];
  size_t i, fi;
  int r, q;
  for (q = 0; q < 2; q++) {
    for (i = 0; i < nout; i++) mpfr_init2(ref[q][i], precs[q]);
    naive(ref[q], x, n, precs[q]);
  }
  for (fi = 0; fi < lowp_format_count(); fi++) {
    const lowp_format_t *f = lowp_format_at(fi);
    for (r = 0; r < LOWP_RND_COUNT; r++) {
      double y[N];
      lowp_policy_t pol = {0};
      int st;
      pol.sr_seed = 5;
      pol.sr_offset = 0;
      st = lib(y, x, n, f, &pol, (lowp_rounding_t)r);
      lowp_test_check(st == LOWP_OK, "%s %s: status %d", name, f->name, st);
      for (i = 0; i < nout; i++)
        for (q = 0; q < 2; q++) {
          double want;
          lowp_policy_t p2 = pol;
          p2.sr_offset = i;
          lowp_round_mpfr(&want, ref[q][i], f, &p2, (lowp_rounding_t)r);
          lowp_test_check(same(y[i], want), "%s[%zu] %s %s: lib %a, MPFR@%ld %a", name, i,
                          f->name, lowp_rounding_name((lowp_rounding_t)r), y[i],
                          (long)precs[q], want);
        }
    }
  }
  for (q = 0; q < 2; q++)
    for (i = 0; i < nout; i++) mpfr_clear(ref[q][i]);
}

/* The decision of the interval loops (exact/ival.h), on intervals built by
   hand: which contents have one round-to-odd value at 66 bits. */
static void check_decide(const char *what, const char *lo, const char *hi, int slo,
                         int shi, int want_ok, const char *want) {
  lowp__iv_t v;
  mpfr_t out, w;
  int ok;
  char buf[128] = "-";
  lowp__iv_init(&v, 300);
  mpfr_init2(out, 66);
  mpfr_init2(w, 66);
  mpfr_set_str(v.lo, lo, 0, MPFR_RNDN);
  mpfr_set_str(v.hi, hi, 0, MPFR_RNDN);
  v.slo = slo;
  v.shi = shi;
  ok = lowp__iv_decide(out, &v);
  if (want) mpfr_set_str(w, want, 0, MPFR_RNDN);
  if (ok) mpfr_snprintf(buf, sizeof buf, "%Ra", out);
  lowp_test_check(ok == want_ok && (!ok || !want || mpfr_equal_p(out, w)),
                  "decide %s: ok %d (want %d), out %s", what, ok, want_ok, buf);
  lowp__iv_clear(&v);
  mpfr_clears(out, w, (mpfr_ptr)0);
}

static void check1(const char *what, double got, double want) {
  lowp_test_check(same(got, want), "%s: got %a want %a", what, got, want);
}

int main(void) {
  const lowp_format_t *f64 = &LOWP_FMT_FP64;
  double y[N], x[N];
  size_t i;
  lowp_test_start("texact_func");

  /* the interval decision: points, strict ends next to a 66-bit number,
     intervals containing one, tiny and huge magnitudes, zero */
  check_decide("point 1", "1", "1", 0, 0, 1, "1");
  check_decide("point 1/3-ish inexact both strict", "0x1.5555555555555555555p-2",
               "0x1.5555555555555555556p-2", 1, 1, 1, NULL);
  check_decide("[1-2^-100, 1]: x may be 1", "0x1.fffffffffffffffffffffffffp-1", "1", 1, 0, 0, NULL);
  check_decide("(1-2^-100, 1): just below 1", "0x1.fffffffffffffffffffffffffp-1", "1", 1, 1, 1,
               "0x1.ffffffffffffffff8p-1");
  check_decide("(1, 1+2^-100): just above 1 -> 1+2^-65", "1", "0x1.00000000000000000000000008p+0",
               1, 1, 1, "0x1.00000000000000008p+0");
  check_decide("contains the odd 1+2^-65: all round to it", "0x1.00000000000000007p+0",
               "0x1.00000000000000009p+0", 1, 1, 1, "0x1.00000000000000008p+0");
  check_decide("contains the even 1+2^-64", "0x1.0000000000000000fp+0",
               "0x1.00000000000000011p+0", 1, 1, 0, NULL);
  check_decide("(0, 2^-1200]", "0", "0x1p-1200", 1, 0, 1, "0x1p-1151");
  check_decide("[0, 2^-1200]", "0", "0x1p-1200", 0, 0, 0, NULL);
  check_decide("crosses 0", "-0x1p-80", "0x1p-80", 1, 1, 0, NULL);
  check_decide("beyond 2^1100", "0x1p1200", "0x1p1300", 1, 1, 1, "0x1p1101");

  /* special values (IEEE 754 9.2 for exp/log/tanh; softmax as documented) */
  {
    double s[] = {NAN, 0.0, -0.0, INFINITY, -INFINITY, -1.0};
    lowp_exact_fn(y, s, 6, LOWP_FN_EXP, f64, NULL, LOWP_RND_NE);
    check1("exp NaN", y[0], NAN); check1("exp 0", y[1], 1.0); check1("exp -0", y[2], 1.0);
    check1("exp inf", y[3], INFINITY); check1("exp -inf", y[4], 0.0);
    lowp_exact_fn(y, s, 6, LOWP_FN_LOG, f64, NULL, LOWP_RND_NE);
    check1("log 0", y[1], -INFINITY); check1("log inf", y[3], INFINITY); check1("log -1", y[5], NAN);
    lowp_exact_fn(y, s, 6, LOWP_FN_TANH, f64, NULL, LOWP_RND_NE);
    check1("tanh -0", y[2], -0.0); check1("tanh inf", y[3], 1.0); check1("tanh -inf", y[4], -1.0);
    lowp_exact_fn(y, s, 6, LOWP_FN_GELU, f64, NULL, LOWP_RND_NE);
    check1("gelu -0", y[2], -0.0); check1("gelu inf", y[3], INFINITY);
    check1("gelu -inf", y[4], -0.0);
  }
  {
    double a[] = {1.0, NAN}, b[] = {-INFINITY, -INFINITY}, c[] = {INFINITY, 0.0};
    lowp_exact_softmax(y, a, 2, f64, NULL, LOWP_RND_NE);
    check1("softmax with NaN", y[0], NAN);
    lowp_exact_softmax(y, c, 2, f64, NULL, LOWP_RND_NE);
    check1("softmax with +inf", y[1], NAN);
    lowp_exact_logsumexp(y, b, 2, f64, NULL, LOWP_RND_NE);
    check1("lse all -inf", y[0], -INFINITY);
    b[1] = 0.0;
    lowp_exact_softmax(y, b, 2, f64, NULL, LOWP_RND_NE);
    check1("softmax -inf entry", y[0], 0.0);
    check1("softmax the other", y[1], 1.0);
    lowp_exact_xent(y, b, 2, 0, f64, NULL, LOWP_RND_NE);
    check1("xent of a zero-probability class", y[0], INFINITY);
  }
  /* hand cases with exact or known answers */
  {
    double z[] = {0.0, 0.0}, z3[] = {7.0, 7.0, 7.0}, far[] = {0.0, -1e10};
    double m[] = {1.0, 2.0, 3.0, 4.0}, big[] = {1e308, 1e308, -1e308, -1e308, 1.0};
    double mu, var;
    lowp_exact_softmax(y, z, 2, f64, NULL, LOWP_RND_NE);
    check1("softmax [0,0]", y[0], 0.5);
    lowp_exact_softmax(y, z3, 3, f64, NULL, LOWP_RND_NE);
    check1("softmax 3 equal (RN 1/3)", y[0], 1.0 / 3.0);
    lowp_exact_softmax(y, z3, 3, f64, NULL, LOWP_RND_UP);
    check1("softmax 3 equal rup", y[0], nextafter(1.0 / 3.0, 1.0));
    lowp_exact_logsumexp(y, z, 2, f64, NULL, LOWP_RND_NE);
    check1("lse [0,0] = log 2", y[0], 0x1.62e42fefa39efp-1);
    lowp_exact_xent(y, z, 2, 1, f64, NULL, LOWP_RND_NE);
    check1("xent [0,0] = log 2", y[0], 0x1.62e42fefa39efp-1);
    lowp_exact_logsoftmax(y, z3, 3, f64, NULL, LOWP_RND_NE);
    /* -log 3 and Phi(1): MPFR at 2000 bits and CPython's math.log/erf agree */
    check1("log-softmax 3 equal = -log 3", y[0], -0x1.193ea7aad030bp+0);
    /* exp(-1e10) underflows every format and MPFR's default range is near:
       the max element is 1/(1 + tiny) < 1 */
    lowp_exact_softmax(y, far, 2, f64, NULL, LOWP_RND_NE);
    check1("softmax far: RN 1", y[0], 1.0);
    check1("softmax far: RN tiny -> 0", y[1], 0.0);
    lowp_exact_softmax(y, far, 2, f64, NULL, LOWP_RND_TZ);
    check1("softmax far: rtz below 1", y[0], 0x1.fffffffffffffp-1);
    lowp_exact_softmax(y, far, 2, f64, NULL, LOWP_RND_UP);
    check1("softmax far: rup tiny -> 2^-1074", y[1], 0x1p-1074);
    lowp_exact_meanvar(&mu, &var, m, 4, 0, f64, NULL, LOWP_RND_NE);
    check1("mean 1..4", mu, 2.5);
    check1("var 1..4", var, 1.25);
    lowp_exact_meanvar(&mu, &var, m, 4, 1, f64, NULL, LOWP_RND_NE);
    check1("sample var 1..4 = 5/3", var, 5.0 / 3.0);
    lowp_exact_meanvar(&mu, &var, big, 5, 0, f64, NULL, LOWP_RND_NE);
    check1("mean with cancellation", mu, 0.2);
    check1("var with cancellation = 4e616/5 overflows", var, INFINITY);
    lowp_exact_meanvar(&mu, &var, z3, 3, 0, f64, NULL, LOWP_RND_DN);
    check1("var of equal values", var, 0.0);
    {
      double g = -40.0, e1 = 1.0;
      lowp_exact_fn(y, &e1, 1, LOWP_FN_GELU, f64, NULL, LOWP_RND_NE);
      check1("gelu(1) = Phi(1)", y[0], 0x1.aec4bd120d37dp-1);
      lowp_exact_fn(y, &g, 1, LOWP_FN_GELU, f64, NULL, LOWP_RND_NE);
      /* -20 erfc(40/sqrt 2) ~ -1e-350: below fp64's range, negative */
      check1("gelu(-40) RN -> -0", y[0], -0.0);
      lowp_exact_fn(y, &g, 1, LOWP_FN_GELU, f64, NULL, LOWP_RND_DN);
      check1("gelu(-40) rdn -> -2^-1074", y[0], -0x1p-1074);
    }
  }
  /* results just beside a binary64 number: the round-to-odd bits decide
     directed modes (tanh x = x - x^3/3 + ..., exp(-t) = 1 - t + ...,
     log(1 + t) = t - t^2/2 + ...) */
  {
    double t40 = 0x1p-40, m60 = -0x1p-60, l52 = 1.0 + 0x1p-52;
    lowp_exact_fn(y, &t40, 1, LOWP_FN_TANH, f64, NULL, LOWP_RND_TZ);
    check1("tanh(2^-40) rtz", y[0], 0x1.fffffffffffffp-41);
    lowp_exact_fn(y, &t40, 1, LOWP_FN_TANH, f64, NULL, LOWP_RND_NE);
    check1("tanh(2^-40) rne", y[0], 0x1p-40);
    lowp_exact_fn(y, &m60, 1, LOWP_FN_EXP, f64, NULL, LOWP_RND_TZ);
    check1("exp(-2^-60) rtz", y[0], 0x1.fffffffffffffp-1);
    lowp_exact_fn(y, &m60, 1, LOWP_FN_EXP, f64, NULL, LOWP_RND_UP);
    check1("exp(-2^-60) rup", y[0], 1.0);
    lowp_exact_fn(y, &l52, 1, LOWP_FN_LOG, f64, NULL, LOWP_RND_TZ);
    check1("log(1+2^-52) rtz", y[0], 0x1.fffffffffffffp-53);
    /* gelu(t) = t/2 + t^2/sqrt(2 pi) + ...: for t = 2^-60, just above 2^-61 */
    t40 = 0x1p-60;
    lowp_exact_fn(y, &t40, 1, LOWP_FN_GELU, f64, NULL, LOWP_RND_UP);
    check1("gelu(2^-60) rup", y[0], 0x1.0000000000001p-61);
    lowp_exact_fn(y, &t40, 1, LOWP_FN_GELU, f64, NULL, LOWP_RND_TZ);
    check1("gelu(2^-60) rtz", y[0], 0x1p-61);
  }
  /* sweeps against MPFR at 200 and 1000 bits, all formats and modes */
  {
    lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
    lowp_dist_fill(x, N, &d, f64, lowp_test_seed(), 1);
    for (i = 0; i < N; i++) x[i] *= 4;
    sweep("softmax", lowp_exact_softmax, nv_softmax, x, N, N);
    sweep("logsoftmax", lowp_exact_logsoftmax, nv_logsoftmax, x, N, N);
    sweep("logsumexp", lb_lse, nv_lse, x, N, 1);
    sweep("xent", lb_xent3, nv_xent3, x, N, 1);
    sweep("mean", lb_mean, nv_mean, x, N, 1);
    sweep("var", lb_var, nv_var, x, N, 1);
    sweep("exp", lb_exp, nv_exp, x, N, N);
    sweep("tanh", lb_tanh, nv_tanh, x, N, N);
    sweep("gelu", lb_gelu, nv_gelu, x, N, N);
    for (i = 0; i < N; i++) x[i] = fabs(x[i]);
    sweep("log", lb_log, nv_log, x, N, N);
  }
  return lowp_test_end();
}
