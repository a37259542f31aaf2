/* tround_ne -- the one-addition round to nearest even (lib/format/round_ne.h) against the full path */

/*
 * lowp_round_f64 and lowp_accum_add take lowp__round_ne_fast for round to
 * nearest even. Its oracle here is the exact value in MPFR (x itself, or
 * x + y at 2200 bits: exact) rounded by lowp_round_mpfr, whose steps are
 * lowp_round_sig's (the full path, checked against MPFR's own rounding by
 * tround) and never the fast path. Both the value and the ternary result
 * must agree, for every format of lowp's table, on the inputs the fast
 * path must get right or refuse: random values over every binade of the
 * format and around it, lattice points, midpoints, one binary64 unit on
 * either side of those, the largest finite value and the overflow
 * threshold; and for sums, each of those plus a remainder below its last
 * binary64 bit (lo of TwoSum), of either sign, where the remainder decides.
 */

#include "format/format.h"
#include "format/round_mpfr.h"
#include "model/accum.h"
#include "rng/rng.h"
#include "testutil.h"

#include <math.h>
#include <mpfr.h>
#include <stdio.h>

static size_t g_bad, g_total;

static void same(const char *what, const lowp_format_t *f, double x, double y, double got, int tg, double want,
                 int tw) {
  g_total++;
  if ((got == want && signbit(got) == signbit(want) && tg == tw) || (isnan(got) && isnan(want))) return;
  if (g_bad++ < 10)
    lowp_test_check(0, "%s %s: %a (+ %a): got %a (tern %d), full path %a (tern %d)", f->name, what, x, y, got, tg,
                    want, tw);
}

/* x alone and x + y (|y| below x's last bit, or any y), against the full path */
static void one(const lowp_format_t *f, double x, double y, mpfr_t m) {
  double got, want;
  int tg, tw;
  mpfr_set_d(m, x, MPFR_RNDN);
  tw = lowp_round_mpfr(&want, m, f, NULL, LOWP_RND_NE);
  tg = lowp_round_f64(&got, x, f, NULL, LOWP_RND_NE);
  same("round", f, x, 0, got, tg, want, tw);
  mpfr_set_d(m, x, MPFR_RNDN);
  mpfr_add_d(m, m, y, MPFR_RNDN); /* exact at 2200 bits */
  if (!mpfr_number_p(m)) return;
  tw = lowp_round_mpfr(&want, m, f, NULL, LOWP_RND_NE);
  tg = lowp_accum_add(&got, x, y, f, LOWP_RND_NE);
  same("sum", f, x, y, got, tg, want, tw);
}

/* v and its neighbours: one binary64 unit either side, and remainders below its last bit */
static void around(const lowp_format_t *f, double v, mpfr_t m) {
  static const double rems[] = {0.0, 0.25, -0.25, 0.5, -0.5, 0x1p-30, -0x1p-30};
  double w[3];
  size_t i, j;
  if (!isfinite(v) || v == 0) return;
  w[0] = v;
  w[1] = nextafter(v, INFINITY);
  w[2] = nextafter(v, -INFINITY);
  for (i = 0; i < 3; i++) {
    double ulp = nextafter(fabs(w[i]), INFINITY) - fabs(w[i]);
    for (j = 0; j < sizeof rems / sizeof rems[0]; j++) {
      /* rems of +-0.5 ulp make x + y a binary64 tie: TwoSum's hi is then not x; still an exact sum */
      one(f, w[i], rems[j] * ulp, m);
      one(f, -w[i], rems[j] * ulp, m);
    }
  }
}

static void format_cases(const lowp_format_t *f, lowp_rng_t *r, mpfr_t m) {
  const double xmax = lowp_format_xmax(f);
  int e, k;
  if (f->precision > 52 || !f->has_sign || !f->has_zero) return;
  around(f, xmax, m);
  around(f, xmax + lowp_ulp(xmax, f) / 2, m); /* the overflow threshold */
  for (e = f->emin - f->precision - 3; e <= f->emax + 2; e++) {
    /* the binade's quantum (subnormal below emin) */
    int qe = (e < f->emin ? f->emin : e) - f->precision + 1;
    double q = ldexp(1.0, qe);
    for (k = 0; k < 24; k++) {
      /* a lattice point of the binade (a random significand), the midpoint above it, and a random value */
      double lat = ldexp(1.0, e) + q * (double)(lowp_rng_next(r) % ((uint64_t)1 << (f->precision - 1)));
      around(f, lat, m);
      around(f, lat + q / 2, m);
      around(f, ldexp(1.0 + lowp_rng_uniform(r), e), m);
    }
    around(f, ldexp(1.0, e), m);
  }
}

/* binary32 sums (format/round_ne.h's lowp__add_fp32 in lowp_accum_add): x and y of any sign and of
   binades near each other or far apart (cancellation, one term below the other's last bit), binary32
   values and binary64 ones (exact products of 26-bit numbers), near binary32's subnormals and its top */
static void fp32_pairs(lowp_rng_t *r, mpfr_t m) {
  const lowp_format_t *f = &LOWP_FMT_FP32;
  int k;
  for (k = 0; k < 200000; k++) {
    int e1 = (int)(lowp_rng_next(r) % 270) - 135, e2 = e1 + (int)(lowp_rng_next(r) % 81) - 40;
    double x = ldexp(1.0 + lowp_rng_uniform(r), e1), y = ldexp(1.0 + lowp_rng_uniform(r), e2), got, want;
    int tg, tw;
    if (k & 1) x = (double)(float)x, y = (double)(float)y;  /* binary32 terms */
    if (k % 3 == 0) y = nextafter(y, 0.0);                  /* and binary64 ones next to them */
    if (k % 7 == 0) y = -nextafter(x, lowp_rng_next(r) & 1 ? 0.0 : INFINITY); /* cancellation */
    if (lowp_rng_next(r) & 1) x = -x;
    if (lowp_rng_next(r) & 1) y = -y;
    mpfr_set_d(m, x, MPFR_RNDN);
    mpfr_add_d(m, m, y, MPFR_RNDN);
    if (!mpfr_number_p(m)) continue;
    tw = lowp_round_mpfr(&want, m, f, NULL, LOWP_RND_NE);
    tg = lowp_accum_add(&got, x, y, f, LOWP_RND_NE);
    same("fp32 sum", f, x, y, got, tg, want, tw);
  }
}

int main(void) {
  lowp_rng_t r;
  mpfr_t m;
  size_t fi;
  mpfr_init2(m, 2200);
  lowp_rng_init(&r, lowp_test_seed(), 11);
  for (fi = 0; lowp_format_at(fi); fi++) format_cases(lowp_format_at(fi), &r, m);
  fp32_pairs(&r, m);
  lowp_test_check(g_bad == 0, "%zu of %zu roundings differ from the full path", g_bad, g_total);
  lowp_test_check(g_total > 100000, "%zu cases", g_total);
  printf("tround_ne: %zu roundings and sums, %zu differ\n", g_total, g_bad);
  mpfr_clear(m);
  mpfr_free_cache();
  return lowp_test_end();
}
