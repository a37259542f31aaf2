/* tamp_allreduce -- all-reduce orders, low-precision sums and error feedback against independent models */

/*
 * Oracles: ref_round() (nearbyint on a power-of-two grid, no lib/format
 * code) for the roundings; the ring and tree orders re-implemented here
 * from their description; MPFR (exact sum at 2200 bits, then
 * mpfr_prec_round) for lowp_add_rounded. Order: exact cases -> add_rounded
 * vs MPFR -> orders bit for bit vs the re-implementation -> error bounds
 * (Higham 2002, section 4.2) -> error feedback -> bad input.
 * Run: ctest -R tamp_allreduce
 */

#include "testutil.h"

#include "amp/allreduce.h"
#include "rng/rng.h"
#include "status.h"

#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

static double ref_round(double x, int p, int emin) {
  int e;
  double q;
  if (x == 0 || !isfinite(x)) return x;
  e = ilogb(x);
  if (e < emin) e = emin;
  q = ldexp(1.0, e - p + 1);
  return nearbyint(x / q) * q;
}

typedef struct { int p, emin; const lowp_format_t *f; } fmt_t;

/* a + b for a, b values of a format with p <= 24 is exact in fp64 (their
   exponents are within the fp32 range), so ref_round(a + b) is correct */
static double ref_tree(const double *x, size_t lo, size_t hi, const fmt_t *a) {
  size_t mid;
  if (hi - lo == 1) return ref_round(x[lo], a->p, a->emin);
  mid = lo + (hi - lo) / 2;
  return ref_round(ref_tree(x, lo, mid, a) + ref_tree(x, mid, hi, a), a->p, a->emin);
}

static double ref_ring(const double *x, size_t W, size_t start, const fmt_t *a) {
  double s = ref_round(x[start], a->p, a->emin);
  size_t k;
  for (k = 1; k < W; k++) s = ref_round(s + x[(start + k) % W], a->p, a->emin);
  return s;
}

/* ------------------------------------------------------------ cases */

static void exact_cases(void) {
  /* small integers: every partial sum exact in fp16 -> the exact sum */
  float g[8 * 3], out[3];
  size_t w, i;
  for (w = 0; w < 8; w++)
    for (i = 0; i < 3; i++) g[w * 3 + i] = (float)(w + 1) * (float)(i + 1);
  lowp_allreduce(out, g, 8, 3, LOWP_AR_RING, &LOWP_FMT_FP16, &LOWP_FMT_FP16, NULL);
  lowp_test_check(out[0] == 36 && out[1] == 72 && out[2] == 108, "ring exact: %g %g %g", out[0], out[1], out[2]);
  lowp_allreduce(out, g, 8, 3, LOWP_AR_TREE, &LOWP_FMT_FP16, &LOWP_FMT_FP16, NULL);
  lowp_test_check(out[0] == 36 && out[1] == 72 && out[2] == 108, "tree exact: %g %g %g", out[0], out[1], out[2]);
  /* order matters: fp16, 4 workers, values 2048, 1, 1, 1 (2049 is not an
     fp16 value: ulp at 2048 is 2). Tree: (2048 + 1) -> 2048 (tie to even),
     (1 + 1) = 2, 2048 + 2 = 2050. Ring chunk 0 starts at worker 1: 1 + 1 =
     2, + 1 = 3, + 2048 = 2051 -> 2052 (tie to even: 2050 = 0x1.004p11 odd,
     2052 even) */
  {
    float h[4] = {2048, 1, 1, 1}, o;
    lowp_allreduce(&o, h, 4, 1, LOWP_AR_TREE, &LOWP_FMT_FP16, &LOWP_FMT_FP16, NULL);
    lowp_test_check(o == 2050, "tree order: %g, want 2050", o);
    lowp_allreduce(&o, h, 4, 1, LOWP_AR_RING, &LOWP_FMT_FP16, &LOWP_FMT_FP16, NULL);
    lowp_test_check(o == 2052, "ring order: %g, want 2052", o);
    lowp_allreduce(&o, h, 4, 1, LOWP_AR_RING, &LOWP_FMT_FP16, &LOWP_FMT_FP32, NULL);
    lowp_test_check(o == 2051, "fp32 accumulation: %g, want 2051", o);
  }
}

static void add_rounded_vs_mpfr(void) {
  static const lowp_format_t *const fs[3] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_FP32};
  lowp_rng_t r;
  mpfr_t s;
  int t, k, bad = 0;
  lowp_rng_init(&r, lowp_test_seed(), 4);
  mpfr_init2(s, 2200);
  for (t = 0; t < 30000; t++) {
    /* one draw per statement: the order of the draws must not depend on
       the compiler's order of evaluating arguments (gcc and clang differ) */
    double ua = lowp_rng_uniform(&r) + 0.5, ub;
    int ea = (int)(lowp_rng_next(&r) % 12), sa = (lowp_rng_next(&r) & 1) ? 1 : -1, eb, sb;
    double a = ldexp(ua, ea) * sa, b;
    ub = lowp_rng_uniform(&r) + 0.5;
    eb = (int)(lowp_rng_next(&r) % 80) - 70;
    sb = (lowp_rng_next(&r) & 1) ? 1 : -1;
    b = ldexp(ub, eb) * sb;
    /* ties in the target: make b exactly half an ulp of a's rounding sometimes */
    if (t % 7 == 0) b = ldexp(1.0, ilogb(a) - 11) * ((lowp_rng_next(&r) & 1) ? 1 : -1);
    /* double-rounding traps: a is a midpoint of the target (an fp16 value
       plus half its ulp), b is far
       below a's fp64 ulp, so fl64(a + b) = a is a tie but a + b is not */
    if (t % 5 == 1) {
      a = ref_round(a, 11, -14) + ldexp(1.0, ilogb(a) - 11);
      ub = lowp_rng_uniform(&r) + 0.5;
      sb = (lowp_rng_next(&r) & 1) ? 1 : -1;
      b = ldexp(ub, ilogb(a) - 60) * sb;
    }
    for (k = 0; k < 3; k++) {
      double got = lowp_add_rounded(a, b, fs[k]), want;
      int tern;
      mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
      mpfr_set_d(s, a, MPFR_RNDN);
      mpfr_add_d(s, s, b, MPFR_RNDN); /* exact at 2200 bits */
      /* round to the format with its subnormals (a + b can cancel below
         fp16's normal range): MPFR's exponent range set to the format's,
         x = 0.1b * 2^e, smallest subnormal 2^(emin - p + 1) */
      tern = mpfr_prec_round(s, fs[k]->precision, MPFR_RNDN);
      mpfr_set_emin(fs[k]->emin - fs[k]->precision + 2);
      mpfr_set_emax(fs[k]->emax + 1);
      tern = mpfr_check_range(s, tern, MPFR_RNDN);
      (void)mpfr_subnormalize(s, tern, MPFR_RNDN);
      mpfr_set_emin(emin);
      mpfr_set_emax(emax);
      want = mpfr_get_d(s, MPFR_RNDN);
      mpfr_set_prec(s, 2200);
      if (got != want && bad++ < 5)
        fprintf(stderr, "  %s: %a + %a = %a, MPFR %a\n", fs[k]->name, a, b, got, want);
    }
  }
  mpfr_clear(s);
  lowp_test_check(bad == 0, "lowp_add_rounded vs MPFR: %d mismatches", bad);
}

static void orders_vs_reference(void) {
  fmt_t F[3] = {{11, -14, &LOWP_FMT_FP16}, {8, -126, &LOWP_FMT_BF16}, {24, -126, &LOWP_FMT_FP32}};
  lowp_rng_t r;
  int t, k;
  lowp_rng_init(&r, lowp_test_seed(), 5);
  for (t = 0; t < 200; t++) {
    size_t W = 1 + (size_t)(lowp_rng_next(&r) % 70), n = 1 + (size_t)(lowp_rng_next(&r) % 40), w, i;
    float *g = malloc(W * n * sizeof *g), *out = malloc(n * sizeof *out);
    double *col = malloc(W * sizeof *col);
    int bad = 0;
    for (i = 0; i < W * n; i++) g[i] = (float)(lowp_rng_normal(&r) * 0.01);
    for (k = 0; k < 3; k++) {
      size_t chunk = (n + W - 1) / W;
      lowp_allreduce(out, g, W, n, LOWP_AR_RING, F[k].f, F[k].f, NULL);
      for (i = 0; i < n; i++) {
        for (w = 0; w < W; w++) col[w] = ref_round((double)g[w * n + i], F[k].p, F[k].emin);
        bad += (double)out[i] != ref_ring(col, W, (i / chunk + 1) % W, &F[k]);
      }
      lowp_allreduce(out, g, W, n, LOWP_AR_TREE, F[k].f, F[k].f, NULL);
      for (i = 0; i < n; i++) {
        for (w = 0; w < W; w++) col[w] = ref_round((double)g[w * n + i], F[k].p, F[k].emin);
        bad += (double)out[i] != ref_tree(col, 0, W, &F[k]);
      }
    }
    free(g); free(out); free(col);
    if (!lowp_test_check(bad == 0, "orders trial %d (W %zu, n %zu): %d mismatches", t, W, n, bad)) break;
  }
}

/* |s^ - s| <= gamma_k sum |x| with s the sum of the (already rounded) inputs */
static void bounds(void) {
  lowp_rng_t r;
  size_t Ws[6] = {2, 3, 16, 100, 256, 1024}, q;
  int o;
  lowp_rng_init(&r, lowp_test_seed(), 6);
  for (q = 0; q < 6; q++) {
    size_t W = Ws[q], n = 64, w, i;
    float *g = malloc(W * n * sizeof *g), out[64];
    for (i = 0; i < W * n; i++) g[i] = (float)ref_round(lowp_rng_normal(&r) + 0.3, 11, -14);
    for (o = 0; o < 2; o++) {
      double worst = 0, bnd = lowp_allreduce_bound(W, (lowp_ar_order_t)o, ldexp(1.0, -11));
      lowp_allreduce(out, g, W, n, (lowp_ar_order_t)o, &LOWP_FMT_FP16, &LOWP_FMT_FP16, NULL);
      for (i = 0; i < n; i++) {
        double s = 0, a = 0; /* exact: W <= 1024 fp16 values with |x| < 2^4 fit in fp64 */
        for (w = 0; w < W; w++) { s += g[w * n + i]; a += fabs(g[w * n + i]); }
        if (fabs(out[i] - s) / (bnd * a) > worst) worst = fabs(out[i] - s) / (bnd * a);
      }
      lowp_test_check(worst <= 1.0, "%s W=%zu: %.1f%% of the bound", lowp_ar_order_name((lowp_ar_order_t)o), W, 100 * worst);
    }
    free(g);
  }
}

/* error feedback: a constant gradient not representable in fp16, summed in
   fp32 over T steps: without EF the error grows like T; with EF it stays
   below W half-ulps (each worker's residual is at most half an fp16 ulp) */
static void error_feedback(void) {
  size_t W = 8, n = 4, T = 2000, t, i;
  float g[32], res[32], out[4];
  double sum_ef[4] = {0}, sum_no[4] = {0}, exact[4], e_ef = 0, e_no = 0;
  for (i = 0; i < W * n; i++) { g[i] = 0.1f + 0.013f * (float)i; res[i] = 0; }
  for (i = 0; i < n; i++) {
    size_t w;
    exact[i] = 0;
    for (w = 0; w < W; w++) exact[i] += (double)g[w * n + i] * (double)T;
  }
  for (t = 0; t < T; t++) {
    lowp_allreduce(out, g, W, n, LOWP_AR_RING, &LOWP_FMT_FP16, &LOWP_FMT_FP32, res);
    for (i = 0; i < n; i++) sum_ef[i] += out[i];
    lowp_allreduce(out, g, W, n, LOWP_AR_RING, &LOWP_FMT_FP16, &LOWP_FMT_FP32, NULL);
    for (i = 0; i < n; i++) sum_no[i] += out[i];
  }
  for (i = 0; i < n; i++) {
    e_ef = fmax(e_ef, fabs(sum_ef[i] - exact[i]));
    e_no = fmax(e_no, fabs(sum_no[i] - exact[i]));
  }
  /* bound with EF: W residuals, each at most half an fp16 ulp of a value
     below 1 (<= 2^-12), plus the fp32 roundings of T sums of W terms */
  lowp_test_check(e_ef <= (double)W * ldexp(1.0, -12) + (double)T * (double)W * 5 * ldexp(1.0, -24),
                  "EF error %g too large", e_ef);
  lowp_test_check(e_no > 100 * e_ef, "without EF %g should be >> with EF %g", e_no, e_ef);
}

static void bad_input(void) {
  float g[2] = {1, 2}, o[2];
  lowp_test_check(lowp_allreduce(o, g, 0, 2, LOWP_AR_RING, &LOWP_FMT_FP16, &LOWP_FMT_FP16, NULL) == LOWP_EINVAL, "W 0");
  lowp_test_check(lowp_allreduce(o, NULL, 1, 2, LOWP_AR_RING, &LOWP_FMT_FP16, &LOWP_FMT_FP16, NULL) == LOWP_EINVAL, "NULL g");
  lowp_test_check(lowp_allreduce(o, g, 1, 2, (lowp_ar_order_t)7, &LOWP_FMT_FP16, &LOWP_FMT_FP16, NULL) == LOWP_EINVAL, "order 7");
  lowp_test_check(lowp_allreduce(o, g, 1, 2, LOWP_AR_RING, &LOWP_FMT_FP64, &LOWP_FMT_FP16, NULL) == LOWP_EFORMAT, "fp64 comm");
}

int main(void) {
  lowp_test_start("tamp_allreduce");
  exact_cases();
  add_rounded_vs_mpfr();
  orders_vs_reference();
  bounds();
  error_feedback();
  bad_input();
  return lowp_test_end();
}
