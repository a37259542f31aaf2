/* taccum -- summation orders: the rounded addition against lib/exact, and known sums */

/*
 * Build: cmake --build build --target taccum; run from the source root.
 *
 * Oracles: lowp_exact_add2 (lib/exact, an independent implementation of a
 * correctly rounded two-operand sum) for lowp_accum_add; closed forms for
 * the orders (Higham, "Accuracy and Stability of Numerical Algorithms",
 * 2nd ed., ch. 4: stagnation of recursive summation, exactness of pairwise
 * sums of equal terms, Kahan's compensation).
 */

#include "exact/exact.h"
#include "model/accum.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- helpers */

static lowp_accum_t model(const char *spec) {
  lowp_accum_t m;
  char err[256];
  int st = lowp_accum_parse(&m, spec, err, sizeof err);
  if (st != LOWP_OK) {
    lowp_test_check(0, "parse %s: %s", spec, err);
    memset(&m, 0, sizeof m);
    m.acc = LOWP_FMT_FP32;
  }
  return m;
}

static void check_sum(const char *spec, const double *x, size_t n, double want, const char *why) {
  lowp_accum_t m = model(spec);
  double s = NAN;
  char h1[64], h2[64];
  lowp_accum_sum(&s, x, n, &m);
  lowp_test_check(s == want, "%s [%s]: got %s want %s", why, spec, lowp_test_hex(s, h1, sizeof h1),
                  lowp_test_hex(want, h2, sizeof h2));
}

/* -------------------------------------------------------- special values */

static void special_values(void) {
  double z;
  lowp_accum_add(&z, INFINITY, -INFINITY, &LOWP_FMT_FP16, LOWP_RND_NE);
  lowp_test_check(isnan(z), "inf - inf is NaN");
  lowp_accum_add(&z, 1.0, -1.0, &LOWP_FMT_FP16, LOWP_RND_DN);
  lowp_test_check(z == 0 && signbit(z), "1 - 1 rounded down is -0");
  lowp_accum_add(&z, 1.0, -1.0, &LOWP_FMT_FP16, LOWP_RND_NE);
  lowp_test_check(z == 0 && !signbit(z), "1 - 1 to nearest is +0");
  lowp_accum_add(&z, 65504.0, 8.0, &LOWP_FMT_FP16, LOWP_RND_NE);
  lowp_test_check(z == 65504.0, "65504 + 8 rounds back to 65504 (below the overflow midpoint)");
  lowp_accum_add(&z, 65504.0, 16.0, &LOWP_FMT_FP16, LOWP_RND_NE);
  lowp_test_check(isinf(z), "65504 + 16 = 65520, the midpoint: to even is 2^16, overflow");
  lowp_accum_add(&z, 65504.0, 16.0, &LOWP_FMT_FP16, LOWP_RND_UP);
  lowp_test_check(isinf(z), "65504 + 16 rounded up overflows");
}

/* ------------------------------------------------------------ hand-picked */

static void hand_picked(void) {
  static double ones[4096], tiny[1025];
  size_t i;
  double z;
  for (i = 0; i < 4096; i++) ones[i] = 1.0;
  /* fp16 recursive summation of ones stagnates at 2048 = 2^11: 2048 + 1 is a
     tie between 2048 and 2050, to even gives 2048 (Higham 2002, sec. 4.2). */
  check_sum("recursive,acc=fp16", ones, 4096, 2048.0, "fp16 stagnation");
  check_sum("recursive,acc=fp16,rnd=rtz", ones, 4096, 2048.0, "fp16 rtz stagnation");
  check_sum("pairwise,acc=fp16", ones, 4096, 4096.0, "pairwise of equal terms is exact");
  check_sum("blocked:64,acc=fp16", ones, 4096, 4096.0, "blocked 64 x 64");
  check_sum("splitk:2,acc=fp16", ones, 4096, 4096.0, "splitk 2 x 2048");
  check_sum("splitk:1,acc=fp16", ones, 4096, 2048.0, "splitk 1 is recursive");
  check_sum("kahan,acc=fp16", ones, 4096, 4096.0, "Kahan in fp16 recovers");
  check_sum("recursive,acc=fp32", ones, 4096, 4096.0, "fp32 exact");
  /* 1 + 1024 * 2^-11 in fp16: each 2^-11 is half an ulp of 1, a tie that
     goes to even (1): recursive stays 1; pairwise adds the small terms first */
  tiny[0] = 1.0;
  for (i = 1; i < 1025; i++) tiny[i] = 0x1p-11;
  check_sum("recursive,acc=fp16", tiny, 1025, 1.0, "1 + ties stays 1");
  check_sum("kahan,acc=fp16", tiny, 1025, 1.5, "Kahan: 1 + 1024 * 2^-11 = 1.5");
  /* fma vs rounded products: 3 products (1 + 2^-11)^2 in fp16 accumulation */
  {
    double a[3] = {1 + 0x1p-10, 1 + 0x1p-10, 1 + 0x1p-10}, s;
    lowp_accum_t m1 = model("recursive,acc=fp16"), m2 = model("fma,acc=fp16");
    lowp_accum_dot(&s, a, 1, a, 1, 1, &m1);
    /* (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20 -> fp16: 1 + 2^-9 */
    lowp_test_check(s == 1 + 0x1p-9, "rounded product: %.17g", s);
    lowp_accum_dot(&s, a, 1, a, 1, 1, &m2);
    lowp_test_check(s == 1 + 0x1p-9, "fma single product: %.17g", s);
  }
  lowp_accum_add(&z, 1.0, 0x1p-30, &LOWP_FMT_FP32, LOWP_RND_UP);
  lowp_test_check(z == 1 + 0x1p-23, "1 + 2^-30 rounded up in fp32");
  lowp_accum_add(&z, 1.0, -0x1p-60, &LOWP_FMT_FP32, LOWP_RND_DN);
  lowp_test_check(z == 1 - 0x1p-24, "1 - 2^-60 rounded down in fp32 (lo below hi)");
}

/* ----------------------------------------------- against lib/exact */

/* Random pairs with exponents close and far, all formats of <= 52 bits and
   every deterministic mode: lowp_accum_add must equal lowp_exact_add2. */
static void random_vs_exact(void) {
  static const lowp_rounding_t modes[] = {LOWP_RND_NE, LOWP_RND_NA, LOWP_RND_TZ,
                                          LOWP_RND_UP, LOWP_RND_DN, LOWP_RND_TO};
  lowp_rng_t r;
  size_t fi, bad = 0, total = 0;
  lowp_rng_init(&r, lowp_test_seed(), 7);
  for (fi = 0; lowp_format_at(fi); fi++) {
    const lowp_format_t *f = lowp_format_at(fi);
    size_t mi, t;
    if (f->precision > 52 || !f->has_sign || !f->has_zero) continue;
    for (mi = 0; mi < sizeof modes / sizeof modes[0]; mi++)
      for (t = 0; t < 3000; t++) {
        double x = ldexp(lowp_rng_uniform(&r) + 0.5, (int)(lowp_rng_next(&r) % 40) - 20);
        double y = ldexp(lowp_rng_uniform(&r) + 0.5, (int)(lowp_rng_next(&r) % 80) - 40);
        double z1, z2;
        char h1[64], h2[64];
        if (lowp_rng_next(&r) & 1) y = -y;
        if ((lowp_rng_next(&r) & 3) == 0) y = -x * (1 + ldexp(lowp_rng_uniform(&r), -30));
        if ((lowp_rng_next(&r) & 15) == 0) x = (lowp_rng_next(&r) & 1) ? -0.0 : 0.0;
        if ((lowp_rng_next(&r) & 15) == 0) y = (lowp_rng_next(&r) & 1) ? -0.0 : 0.0;
        /* inputs in the format, as accumulations see them */
        lowp_round_f64(&x, x, f, NULL, LOWP_RND_NE);
        lowp_round_f64(&y, y, f, NULL, LOWP_RND_NE);
        if (!isfinite(x) || !isfinite(y)) continue;
        lowp_accum_add(&z1, x, y, f, modes[mi]);
        lowp_exact_add2(&z2, x, y, f, NULL, modes[mi], 0);
        total++;
        if (memcmp(&z1, &z2, sizeof z1) && !(isnan(z1) && isnan(z2))) {
          if (bad++ < 5)
            lowp_test_check(0, "%s %s: %a + %a: got %s want %s", f->name, lowp_rounding_name(modes[mi]),
                            x, y, lowp_test_hex(z1, h1, sizeof h1), lowp_test_hex(z2, h2, sizeof h2));
        }
      }
  }
  lowp_test_check(bad == 0, "lowp_accum_add vs lowp_exact_add2: %zu of %zu differ", bad, total);
}

/* lowp_accum_dot_many against lowp_accum_dot (and lowp_accum_sum_many against lowp_accum_sum), lane by
   lane, bit for bit: every order, formats with and without lowp__add_fp32's binary32 path (and
   lowp__round_ne_fast's), every deterministic mode, fma 0 and 1, 1..LOWP_ACCUM_LANES
   lanes, lengths from 0, terms with ties, cancellation, zeros of both signs, subnormal sums, overflow,
   inf and NaN */
static void many_vs_one(void) {
  static const char *const orders[] = {"recursive", "pairwise", "blocked:3", "splitk:3", "kahan", "fma"};
  static const char *const accs[] = {"fp32", "fp16", "bf16", "fp64", "e4m3"};
  static const char *const modes[] = {"rne", "rtz", "rup", "rdn"};
  static const size_t lens[] = {0, 1, 2, 3, 7, 33};
  enum { L = LOWP_ACCUM_LANES, NMAX = 33 };
  double a[L][NMAX], b[L][NMAX], y[L], want;
  const double *pa[L], *pb[L];
  lowp_rng_t r;
  size_t oi, ai, mi, li, g, l, t, bad = 0, total = 0;
  int fm;
  lowp_rng_init(&r, lowp_test_seed(), 11);
  for (oi = 0; oi < sizeof orders / sizeof *orders; oi++)
    for (ai = 0; ai < sizeof accs / sizeof *accs; ai++)
      for (mi = 0; mi < sizeof modes / sizeof *modes; mi++)
        for (fm = 0; fm < 2; fm++) {
          char spec[96];
          lowp_accum_t m;
          if (!strcmp(accs[ai], "fp64") && mi) continue; /* fp64 sums are rne only */
          snprintf(spec, sizeof spec, "%s,acc=%s,rnd=%s,fma=%d", orders[oi], accs[ai], modes[mi],
                   strcmp(orders[oi], "fma") ? fm : 1);
          m = model(spec);
          for (li = 0; li < sizeof lens / sizeof *lens; li++)
            for (g = 1; g <= L; g++) {
              for (l = 0; l < g; l++) {
                for (t = 0; t < lens[li]; t++) {
                  uint64_t k = lowp_rng_next(&r);
                  double u = ldexp(1.0 + (double)(k >> 40) * 0x1p-24, (int)(k % 30) - 15);
                  a[l][t] = k & 0x100000 ? -u : u;
                  b[l][t] = ldexp(1.0 + (double)((k >> 20) & 0xfff) * 0x1p-12, (int)((k >> 8) % 20) - 10);
                  switch ((k >> 32) % 24) {
                  case 0: a[l][t] = 0.0; break;
                  case 1: a[l][t] = -0.0; break;
                  case 2: if (t) a[l][t] = -a[l][t - 1], b[l][t] = b[l][t - 1]; break; /* cancellation */
                  case 3: a[l][t] = ldexp(u, -140), b[l][t] = 0x1p-8; break; /* subnormal in fp32 */
                  case 4: a[l][t] = ldexp(u, 120), b[l][t] = 0x1p7; break; /* overflow of narrow sums */
                  case 5: if ((k >> 50) % 8 == 0) a[l][t] = (k >> 49) & 1 ? INFINITY : -INFINITY; break;
                  case 6: if ((k >> 50) % 16 == 0) a[l][t] = NAN; break;
                  default: break;
                  }
                }
                pa[l] = a[l], pb[l] = b[l];
              }
              lowp_test_check(lowp_accum_dot_many(y, g, pa, 1, pb, 1, lens[li], &m) == LOWP_OK, "%s: many",
                              spec);
              for (l = 0; l < g; l++) {
                lowp_accum_dot(&want, a[l], 1, b[l], 1, lens[li], &m);
                total++;
                if (memcmp(&want, &y[l], sizeof want) && bad++ < 5)
                  lowp_test_check(0, "%s, n %zu, lane %zu of %zu: %a, alone %a", spec, lens[li], l, g, y[l],
                                  want);
              }
              /* the same terms as sums (a alone) */
              lowp_test_check(lowp_accum_sum_many(y, g, pa, lens[li], &m) == LOWP_OK, "%s: sum many", spec);
              for (l = 0; l < g; l++) {
                lowp_accum_sum(&want, a[l], lens[li], &m);
                total++;
                if (memcmp(&want, &y[l], sizeof want) && bad++ < 5)
                  lowp_test_check(0, "%s, n %zu, sum lane %zu of %zu: %a, alone %a", spec, lens[li], l, g,
                                  y[l], want);
              }
            }
        }
  lowp_test_check(bad == 0 && total > 10000, "lowp_accum_{dot,sum}_many vs one by one: %zu of %zu differ",
                  bad, total);
  {
    lowp_accum_t m = model("pairwise");
    lowp_test_check(lowp_accum_dot_many(y, L + 1, pa, 1, pb, 1, 1, &m) == LOWP_EINVAL,
                    "more lanes than LOWP_ACCUM_LANES refused");
  }
}

static void parser(void) {
  lowp_accum_t m;
  char err[256];
  lowp_test_check(lowp_accum_parse(&m, "blocked:32,acc=fp16", err, sizeof err) == LOWP_OK &&
                      m.order == LOWP_ACC_BLOCKED && m.block == 32 && m.acc.precision == 11,
                  "blocked:32,acc=fp16");
  lowp_test_check(lowp_accum_parse(&m, "fma,acc=bf16,rnd=rtz", err, sizeof err) == LOWP_OK && m.fma == 1 &&
                      m.rnd == LOWP_RND_TZ,
                  "fma,acc=bf16,rnd=rtz");
  lowp_test_check(lowp_accum_parse(&m, "zigzag", err, sizeof err) == LOWP_EINVAL, "unknown order");
  lowp_test_check(lowp_accum_parse(&m, "blocked:0", err, sizeof err) == LOWP_EINVAL, "block 0");
  /* issue 14: counts beyond long were clamped, stray counts and repeated
     keys ignored, and a format without zero or sign taken as accumulator */
  lowp_test_check(lowp_accum_parse(&m, "blocked:99999999999999999999", err, sizeof err) ==
                      LOWP_EINVAL, "blocked:1e20 clamped");
  lowp_test_check(lowp_accum_parse(&m, "blocked:1099511627776", err, sizeof err) == LOWP_OK &&
                      m.block == 1099511627776u, "blocked:2^40");
  lowp_test_check(lowp_accum_parse(&m, "blocked:1099511627777", err, sizeof err) == LOWP_EINVAL,
                  "blocked:2^40+1");
  lowp_test_check(lowp_accum_parse(&m, "recursive:5", err, sizeof err) == LOWP_EINVAL, "recursive:5");
  lowp_test_check(lowp_accum_parse(&m, "blocked: 5", err, sizeof err) == LOWP_EINVAL, "blocked: 5");
  lowp_test_check(lowp_accum_parse(&m, "pairwise,acc=fp16,acc=fp32", err, sizeof err) ==
                      LOWP_EINVAL && strstr(err, "twice"), "acc twice: %s", err);
  lowp_test_check(lowp_accum_parse(&m, "pairwise,acc=e8m0", err, sizeof err) == LOWP_EINVAL &&
                      strstr(err, "zero"), "acc=e8m0: %s", err);
  lowp_test_check(lowp_accum_format_check(&LOWP_FMT_E8M0, NULL, 0) == LOWP_EINVAL &&
                      lowp_accum_format_check(&LOWP_FMT_E4M3FNUZ, NULL, 0) == LOWP_OK &&
                      lowp_accum_format_check(&LOWP_FMT_E2M1, NULL, 0) == LOWP_OK,
                  "lowp_accum_format_check");
  lowp_test_check(lowp_accum_parse(&m, "recursive,acc=fp16,rnd=sr", err, sizeof err) == LOWP_EINVAL,
                  "stochastic rounding is not an accumulation mode here");
}

int main(void) {
  lowp_test_start("taccum");
  special_values();
  hand_picked();
  parser();
  random_vs_exact();
  many_vs_one();
  return lowp_test_end();
}
