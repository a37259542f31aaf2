/* tmeasure -- error metrics, statistics and bounds on hand-computed cases */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu/gemm_acc.h"
#include "exact/exact.h"
#include "measure/measure.h"
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

static void near(const char *what, double got, double want) {
  lowp_test_check(got == want || fabs(got - want) <= 1e-15 * fabs(want),
                  "%s: got %.17g want %.17g", what, got, want);
}

int main(void) {
  lowp_errors_t e;
  lowp_stats_t s;
  const double u16 = 0x1p-11, u32 = 0x1p-24;
  lowp_test_start("tmeasure");

  /* special values: NaN/inf agreements and disagreements */
  {
    double c[] = {NAN, 1.0, INFINITY, 1e-30, -INFINITY}, x[] = {NAN, NAN, INFINITY, 0.0, INFINITY};
    lowp_measure_errors(&e, c, x, NULL, 5, &LOWP_FMT_FP32);
    lowp_test_check(e.n_exact == 2 && e.n_special == 2, "specials: exact %zu special %zu",
                    e.n_exact, e.n_special);
    lowp_test_check(isinf(e.max_rel) && e.argmax_rel == 3, "x = 0 != c: infinite relative error");
    lowp_test_check(isnan(e.max_bwd), "no |A||B| given: backward error NaN");
  }
  /* hand-computed metrics (ulp of fp32 at 2.5 and at 3 is 2^-22) */
  {
    double c[] = {1.0, 2.0, 4.0}, x[] = {1.0, 2.5, 3.0}, r[] = {1.0, 5.0, 2.0};
    lowp_measure_errors(&e, c, x, r, 3, &LOWP_FMT_FP32);
    near("max abs", e.max_abs, 1.0);
    near("mean abs", e.mean_abs, 0.5);
    lowp_test_check(e.argmax_abs == 2, "argmax abs %zu", e.argmax_abs);
    near("max rel", e.max_rel, 1.0 / 3.0);
    near("mean rel", e.mean_rel, (0.2 + 1.0 / 3.0) / 3.0);
    near("max ulp", e.max_ulp, 0x1p22);
    near("mean ulp", e.mean_ulp, (0x1p21 + 0x1p22) / 3.0);
    near("max bwd", e.max_bwd, 0.5);
    lowp_test_check(e.argmax_bwd == 2 && e.n_exact == 1, "bwd argmax %zu exact %zu",
                    e.argmax_bwd, e.n_exact);
    lowp_measure_errors(&e, c, x, r, 3, &LOWP_FMT_FP16); /* ulp of fp16 at 3: 2^-9 */
    near("max ulp fp16", e.max_ulp, 0x1p9);
  }
  /* an exact value x + lo that is no double (an fp64 output: x its binary64 rounding, lo the rest):
     measured against x + lo, in the ulp of lo's side of x. Against x alone, 1 for x = 1 + 2^-52,
     lo = 0.4 2^-52 read 1 ulp (true 1.4); at x = 1, the binade of lo's side counts */
  {
    const double u = 0x1p-52;
    double c[] = {1.0, 1.0 - 0x1p-53, 1.0 - 0x1p-53, -1.0, 1.0 + u},
           x[] = {1.0 + u, 1.0, 1.0, -1.0, 1.0 + u},
           lo[] = {0.4 * u, -0.3 * 0x1p-53, 0.2 * u, 0.2 * u, 0.4 * u};
    lowp_measure_errors_lo(&e, c, x, lo, NULL, 1, &LOWP_FMT_FP64);
    near("1 against (1 + u) + 0.4 u: 1.4 ulp", e.max_ulp, 1.4);
    lowp_test_check(e.n_exact == 0, "not exact: %zu", e.n_exact);
    lowp_measure_errors_lo(&e, c + 1, x + 1, lo + 1, NULL, 1, &LOWP_FMT_FP64);
    near("pred(1) against 1 - 0.3 u/2: the spacing below", e.max_ulp, 0.7);
    lowp_measure_errors_lo(&e, c + 2, x + 2, lo + 2, NULL, 1, &LOWP_FMT_FP64);
    near("pred(1) against 1 + 0.2 u: the spacing above", e.max_ulp, 0.7);
    lowp_measure_errors_lo(&e, c + 3, x + 3, lo + 3, NULL, 1, &LOWP_FMT_FP64);
    near("-1 against -1 + 0.2 u: toward zero, the spacing below", e.max_ulp, 0.4);
    lowp_measure_errors_lo(&e, c + 4, x + 4, NULL, NULL, 1, &LOWP_FMT_FP64);
    lowp_test_check(e.max_ulp == 0 && e.n_exact == 1, "no lo: as lowp_measure_errors (%g)", e.max_ulp);
  }
  /* an exact power of two: its neighbour below (one step off, not the rounding of x) is one
     ulp of the spacing below, not half an ulp of the one above; max_ulp 0.5 must not pass it */
  {
    double c[] = {1.0 - 0x1p-11, 2.0 + 0x1p-9, -(4.0 - 0x1p-9), 0x1p-14 - 0x1p-24, 1.0 - 0x1p-10},
           x[] = {1.0, 2.0, -4.0, 0x1p-14, 1.0 + 0x1p-12};
    lowp_measure_errors(&e, c, x, NULL, 1, &LOWP_FMT_FP16);
    near("pred(1) against 1 (fp16)", e.max_ulp, 1.0);
    lowp_measure_errors(&e, c + 1, x + 1, NULL, 1, &LOWP_FMT_FP16);
    near("succ(2) against 2: the spacing above", e.max_ulp, 1.0);
    lowp_measure_errors(&e, c + 2, x + 2, NULL, 1, &LOWP_FMT_FP16);
    near("-pred(4) against -4", e.max_ulp, 1.0);
    lowp_measure_errors(&e, c + 3, x + 3, NULL, 1, &LOWP_FMT_FP16);
    near("below the smallest normal: the subnormals' spacing is the same", e.max_ulp, 1.0);
    lowp_measure_errors(&e, c + 4, x + 4, NULL, 1, &LOWP_FMT_FP16);
    near("x not a power of two: its own binade's ulp", e.max_ulp, 1.25);
    near("lowp_ulp_toward above", lowp_ulp_toward(1.0, 1.5, &LOWP_FMT_BF16), 0x1p-7);
    near("lowp_ulp_toward below", lowp_ulp_toward(1.0, 0.5, &LOWP_FMT_BF16), 0x1p-8);
  }
  /* statistics: nearest-rank p99, median of even and odd counts */
  {
    double a[] = {3, 1, 2, NAN, 5, 4}, b[1000];
    int i;
    lowp_measure_stats(&s, a, 6);
    lowp_test_check(s.n == 5 && s.n_nan == 1 && s.max == 5 && s.argmax == 4 && s.min == 1,
                    "stats basics");
    near("mean", s.mean, 3);
    near("median odd", s.median, 3);
    near("p99 of 5", s.p99, 5);
    lowp_measure_stats(&s, a, 3);
    near("median even", s.median, 2.0);
    for (i = 0; i < 1000; i++) b[i] = 1000 - i;
    lowp_measure_stats(&s, b, 100);
    near("p99 of 1..100 (as 901..1000)", s.p99, 999);
    lowp_measure_stats(&s, b, 1000);
    near("p99 of 1..1000", s.p99, 990);
    near("median of 1..1000", s.median, 500.5);
  }
  /* bounds: the formulas (Higham 2002 Lemma 3.1; Higham & Mary 2019) */
  near("gamma_10", lowp_bound_gamma(10, u32), 10 * u32 / (1 - 10 * u32));
  lowp_test_check(isinf(lowp_bound_gamma(2048, u16)), "gamma_n with n u >= 1 is no bound");
  near("pairwise 1024 = gamma_10", lowp_bound_pairwise(1024, u32), lowp_bound_gamma(10, u32));
  near("pairwise 1025 = gamma_11", lowp_bound_pairwise(1025, u32), lowp_bound_gamma(11, u32));
  near("blocked 1024/32 = gamma_62", lowp_bound_blocked(1024, 32, u32), lowp_bound_gamma(62, u32));
  near("blocked b=1 is recursive", lowp_bound_blocked(1000, 1, u32), lowp_bound_gamma(999, u32));
  {
    double lam = lowp_bound_prob_lambda(1000, u32, 0.99);
    near("lambda -> probability round trip", lowp_bound_prob_probability(1000, u32, lam), 0.99);
    lowp_test_check(fabs(lowp_bound_gamma_prob(1000, u32, lam) / (lam * sqrt(1000) * u32) - 1) < 1e-4,
                    "gamma~ = lambda sqrt(n) u + O(u^2)");
    lowp_test_check(lowp_bound_prob_probability(1000, u32, 1.0) == 0, "small lambda: no guarantee");
  }
  /* the bounds hold on measured cases: 300 fp16 dot products of length 512
     accumulated in fp16 (recursive, exact products) */
  {
    enum { K = 512, T = 300 };
    static double x[T * K], w[T * K];
    lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
    lowp_gemm_acc_cfg_t cfg = {0};
    double gam = lowp_bound_gamma(K, u16), lam = lowp_bound_prob_lambda(K, u16, 0.99);
    double gp = lowp_bound_gamma_prob(K, u16, lam), worst = 0;
    int t, over_prob = 0;
    cfg.acc = &LOWP_FMT_FP16;
    lowp_dist_fill(x, T * K, &d, &LOWP_FMT_FP16, lowp_test_seed(), 1);
    lowp_dist_fill(w, T * K, &d, &LOWP_FMT_FP16, lowp_test_seed(), 2);
    for (t = 0; t < T; t++) {
      double y, ex, ab, xa[K], wa[K], bwd;
      int l;
      lowp_dot_acc_ref(&y, x + t * K, 1, w + t * K, 1, K, 0.0, &cfg);
      lowp_exact_dot(&ex, x + t * K, 1, w + t * K, 1, K, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
      for (l = 0; l < K; l++) { xa[l] = fabs(x[t * K + l]); wa[l] = fabs(w[t * K + l]); }
      lowp_exact_dot(&ab, xa, 1, wa, 1, K, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
      bwd = fabs(y - ex) / ab;
      if (bwd > worst) worst = bwd;
      lowp_test_check(bwd <= gam, "dot %d: backward error %g > gamma_k %g", t, bwd, gam);
      over_prob += bwd > gp;
    }
    printf("fp16 dots, k=%d: worst backward error %.3g = %.1f%% of gamma_k, %.1f%% of the "
           "probabilistic bound (lambda %.2f); %d of %d above it\n", K, worst,
           100 * worst / gam, 100 * worst / gp, lam, over_prob, T);
    /* P >= 0.99 per dot product: more than 3% above it would be 1e-4 unlikely */
    lowp_test_check(over_prob <= T * 3 / 100, "%d of %d above the probabilistic bound",
                    over_prob, T);
  }
  return lowp_test_end();
}
