/* tround_sr -- stochastic rounding: reproducible, unbiased, k-bit exact */

/*
 * The contract (format.h, lowp_policy_t and LOWP_RND_SR): element i of a
 * conversion draws r = the top k bits of lowp_rng_u32(sr_seed, i, 0), and
 * |x| = (m + frac) * ulp rounds up to m + 1 iff floor(frac * 2^k) + r >= 2^k,
 * so the probability of rounding up is floor(frac * 2^k) / 2^k (Croci et
 * al., R. Soc. Open Sci. 2022, section 5 on limited random bits). Checked:
 *   1. reproducible: the same (seed, index) gives the same result, from the
 *      f64, f32 and mpfr entry points alike; other seeds give other draws;
 *   2. the array path equals the scalar path with index = sr_offset + i;
 *   3. the result is always one of the two neighbours (from rtz and the
 *      away-from-zero directed mode, proven in tests/tround.c), and is
 *      exactly the one the contract's formula picks, for k = 1..32;
 *   4. the empirical probability of rounding up is within 6 standard
 *      deviations of floor(frac * 2^k) / 2^k for chosen fractions (a false
 *      alarm has probability < 2e-9 per check; the seed is fixed anyway);
 *      the mean of many roundings is within 6 sigma of x for k = 32;
 *   5. exact values never move; overflow follows the policy.
 *
 * Run: ctest --test-dir build -R tround_sr
 */

#include "format/format.h"
#include "format/round_mpfr.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static lowp_policy_t sr_policy(uint64_t seed, uint64_t index, int k) {
  lowp_policy_t p;
  memset(&p, 0, sizeof p);
  p.sr_seed = seed;
  p.sr_offset = index;
  p.sr_bits = k;
  return p;
}

static double sr(double x, const lowp_format_t *f, uint64_t seed, uint64_t index, int k) {
  lowp_policy_t p = sr_policy(seed, index, k);
  double y;
  (void)lowp_round_f64(&y, x, f, &p, LOWP_RND_SR);
  return y;
}

/* The contract's choice for x (finite, nonzero) at (seed, index, k). */
static double contract(double x, const lowp_format_t *f, uint64_t seed, uint64_t index,
                       int k) {
  double lo, hi, frac, ulp;
  uint64_t fk, r;
  int kk = (k <= 0 || k > 32) ? 32 : k;
  (void)lowp_round_f64(&lo, x, f, NULL, LOWP_RND_TZ);
  (void)lowp_round_f64(&hi, x, f, NULL, x > 0 ? LOWP_RND_UP : LOWP_RND_DN);
  if (lo == hi) return lo;
  ulp = fabs(hi - lo);             /* a power of two */
  frac = fabs(x - lo) / ulp;       /* exact: x - lo has few bits; ulp = 2^j */
  fk = (uint64_t)ldexp(frac, kk);  /* floor: frac * 2^k < 2^32 */
  r = lowp_rng_u32(seed, index, 0) >> (32 - kk);
  return fk + r >= (UINT64_C(1) << kk) ? hi : lo;
}

/* ------------------------------------------------------------ 1 + 3 */

static void reproducible_and_contract(lowp_rng_t *g) {
  const lowp_format_t *fs[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_E4M3,
                               &LOWP_FMT_E5M2, &LOWP_FMT_E2M1, &LOWP_FMT_TF32};
  size_t i;
  int n, differ = 0;
  mpfr_t xm;
  mpfr_init2(xm, 64);
  for (i = 0; i < sizeof fs / sizeof fs[0]; i++) {
    const lowp_format_t *f = fs[i];
    for (n = 0; n < 20000; n++) {
      /* a float in f's normal and subnormal range, below its max */
      double x = (double)(float)(lowp_rng_uniform(g) *
                                 ldexp(1.0, (int)(lowp_rng_next(g) % (uint64_t)(f->emax - f->emin + 4)) + f->emin - 3));
      uint64_t seed = lowp_rng_next(g), index = lowp_rng_next(g) >> (n & 63);
      if (fabs(x) > lowp_format_xmax(f)) x = lowp_format_xmax(f); /* overflow: see 5 */
      int k = 1 + (int)(lowp_rng_next(g) % 32);
      double y1, y2, y3, y4, want;
      lowp_policy_t p = sr_policy(seed, index, k);
      if (lowp_rng_next(g) & 1) x = -x;
      y1 = sr(x, f, seed, index, k);
      y2 = sr(x, f, seed, index, k);
      (void)lowp_round_f32(&y3, (float)x, f, &p, LOWP_RND_SR);
      mpfr_set_d(xm, x, MPFR_RNDN);
      (void)lowp_round_mpfr(&y4, xm, f, &p, LOWP_RND_SR);
      want = x == 0 ? x : contract(x, f, seed, index, k);
      if (y1 != y2 || y1 != y3 || y1 != y4 || y1 != want)
        lowp_test_check(0, "%s sr k=%d seed=%llu index=%llu x=%a (%.17g): f64 %a, again %a, "
                        "f32 %a, mpfr %a; contract %a", f->name, k, (unsigned long long)seed,
                        (unsigned long long)index, x, x, y1, y2, y3, y4, want);
      else
        lowp_test_check(1, "");
      if (sr(x, f, seed + 1, index, k) != y1) differ++;
    }
  }
  /* another seed draws other bits: some results must change */
  lowp_test_check(differ > 1000, "changing the seed changed only %d results", differ);
  mpfr_clear(xm);
}

/* ---------------------------------------------------------------- 2 */

static void array_equals_scalar(lowp_rng_t *g) {
  enum { N = 4096 };
  static double x[N], y[N];
  static float xf[N], yf[N];
  lowp_policy_t p = sr_policy(12345, 1000000007, 0);
  size_t i;
  for (i = 0; i < N; i++) {
    x[i] = ldexp(lowp_rng_uniform(g) - 0.5, (int)(lowp_rng_next(g) % 40) - 20);
    xf[i] = (float)x[i];
  }
  lowp_test_check(lowp_round_array_f64(y, x, N, &LOWP_FMT_FP16, &p, LOWP_RND_SR) == LOWP_OK,
                  "array_f64 status");
  lowp_test_check(lowp_round_array_f32(yf, xf, N, &LOWP_FMT_BF16, &p, LOWP_RND_SR) == LOWP_OK,
                  "array_f32 status");
  for (i = 0; i < N; i++) {
    lowp_policy_t q = sr_policy(12345, 1000000007 + i, 0);
    double s, sf;
    (void)lowp_round_f64(&s, x[i], &LOWP_FMT_FP16, &q, LOWP_RND_SR);
    (void)lowp_round_f32(&sf, xf[i], &LOWP_FMT_BF16, &q, LOWP_RND_SR);
    if (s != y[i] || sf != (double)yf[i])
      lowp_test_check(0, "element %zu: array %a / %a, scalar %a / %a", i, y[i],
                      (double)yf[i], s, sf);
    else
      lowp_test_check(1, "");
  }
}

/* ---------------------------------------------------------------- 4 */

/* frac of an ulp above 1 in fp16 (ulp 2^-10), k random bits: count ups */
static void probability(double frac, int k) {
  const long n = 200000;
  const double x = 1.0 + frac * 0x1p-10;
  int kk = k ? k : 32;
  double pwant = floor(frac * ldexp(1.0, kk)) / ldexp(1.0, kk);
  double sigma = sqrt(pwant * (1 - pwant) / (double)n), phat;
  long ups = 0, i, other = 0;
  for (i = 0; i < n; i++) {
    double y = sr(x, &LOWP_FMT_FP16, 777, (uint64_t)i, k);
    if (y == 1.0 + 0x1p-10) ups++;
    else if (y != 1.0) other++;
  }
  phat = (double)ups / (double)n;
  lowp_test_check(other == 0, "frac %.6f k=%d: %ld results are neither neighbour", frac, k, other);
  if (pwant == 0.0)
    lowp_test_check(ups == 0, "frac %.6f k=%d: P(up) must be 0, %ld ups", frac, k, ups);
  else
    lowp_test_check(fabs(phat - pwant) <= 6 * sigma,
                    "frac %.6f k=%d: P(up) %.6f, want %.6f +- %.6f (6 sigma): %.1f%% of bound",
                    frac, k, phat, pwant, 6 * sigma, 100 * fabs(phat - pwant) / (6 * sigma));
}

static void unbiased_mean(void) {
  /* x = 1 + 0.3 ulp (fp16 has no such value), k = 32: E[y] = x up to
     2^-32 ulp; mean of n draws within 6 sigma, sigma = ulp sqrt(p(1-p)/n) */
  const long n = 400000;
  const double ulp = 0x1p-10, x = 1.0 + 0.3 * ulp;
  double sum = 0.0, sigma = ulp * sqrt(0.3 * 0.7 / (double)n), mean;
  long i;
  for (i = 0; i < n; i++) sum += sr(x, &LOWP_FMT_FP16, 99, (uint64_t)i, 0) - 1.0;
  mean = 1.0 + sum / (double)n;
  lowp_test_check(fabs(mean - x) <= 6 * sigma + 0x1p-32 * ulp,
                  "mean of %ld sr(1 + 0.3 ulp) = %.12g, x = %.12g, bound %.3g: %.1f%% of bound",
                  n, mean, x, 6 * sigma, 100 * fabs(mean - x) / (6 * sigma));
  printf("sr mean: |mean - x| = %.3g, %.1f%% of the 6-sigma bound\n", fabs(mean - x),
         100 * fabs(mean - x) / (6 * sigma));
}

/* ---------------------------------------------------------------- 5 */

static void exact_and_overflow(void) {
  uint64_t i;
  int bad = 0, saw_inf = 0, saw_max = 0, other = 0;
  for (i = 0; i < 5000; i++) {
    int k = 1 + (int)(i % 32);
    if (sr(1.0, &LOWP_FMT_FP16, i, i, k) != 1.0) bad++;
    if (sr(-0x1p-24, &LOWP_FMT_FP16, i, i, k) != -0x1p-24) bad++;
    if (sr(448.0, &LOWP_FMT_E4M3, i, i, k) != 448.0) bad++;
    if (sr(0x1p-127, &LOWP_FMT_E8M0, i, i, k) != 0x1p-127) bad++;
    {
      /* 65504 + half an ulp: up is 65536, an overflow -> inf (IEEE) */
      double y = sr(65520.0, &LOWP_FMT_FP16, 5, i, 0);
      lowp_policy_t p = sr_policy(5, i, 0);
      double ys;
      if (isinf(y) && y > 0) saw_inf++;
      else if (y == 65504.0) saw_max++;
      else other++;
      p.overflow = LOWP_OVF_SAT;
      (void)lowp_round_f64(&ys, 65520.0, &LOWP_FMT_FP16, &p, LOWP_RND_SR);
      if (ys != 65504.0) other++;
    }
  }
  lowp_test_check(bad == 0, "%d exact values moved under sr", bad);
  lowp_test_check(other == 0 && saw_inf > 2000 && saw_max > 2000,
                  "sr(65520) in fp16: %d inf, %d max, %d other (want about half each)",
                  saw_inf, saw_max, other);
}

int main(void) {
  static const double fracs[] = {0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 0.75, 0.99};
  static const int ks[] = {1, 2, 3, 4, 8, 0};
  lowp_rng_t g;
  size_t i, j;
  lowp_test_start("tround_sr");
  lowp_rng_init(&g, lowp_test_seed(), 1);
  exact_and_overflow();
  reproducible_and_contract(&g);
  array_equals_scalar(&g);
  for (i = 0; i < sizeof fracs / sizeof fracs[0]; i++)
    for (j = 0; j < sizeof ks / sizeof ks[0]; j++) probability(fracs[i], ks[j]);
  unbiased_mean();
  return lowp_test_end();
}
