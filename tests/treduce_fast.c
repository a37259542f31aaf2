/* treduce_fast -- the vectorised summation orders against lowp_accum_dot, bit for bit */

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "cpu/reduce_fast.h"
#include "model/accum.h"
#include "status.h"
#include "testutil.h"

static uint64_t rng_state;

static uint64_t next(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int same_bits(double x, double y) { return memcmp(&x, &y, sizeof x) == 0; }

/* One binary32 entry for accumulator f (specials = 3: binary64). specials = 2: plain values (24
   random significant bits, magnitudes 2^-20 .. 2^21), whose sums of two
   products are almost never binary32 midpoints (the AVX-512 fp32 kernel's
   fast way); else adversarial: small integers times a
   power of two (ties at every step of a narrow accumulator), factors whose
   products are subnormal in f or round to zero, factors whose products
   reach f's largest binade (overflow mid-sum), zeros of both signs, inf and
   NaN (specials), and binary32 values of any magnitude. */
static double entry(const lowp_format_t *f, int specials) {
  uint64_t r = next();
  if (specials == 3) { /* binary64 (fp64 only): 53 random bits, binades -20 .. 20 (products
                          rounded, so a fused multiply-add would differ); one in 16
                          near 2^511 (products overflow mid-sum, inf - inf), one in 16
                          a zero of either sign */
    uint64_t q = next();
    double v = (q & 15) == 0 ? 0.0
               : ldexp(1.0 + (double)(r >> 12) / 0x1p52,
                       (q & 15) == 1 ? 510 + (int)((q >> 4) % 2) : (int)((q >> 8) % 41) - 20);
    return (r >> 8) & 1 ? -v : v;
  }
  if (specials == 2) { /* plain: 24 random bits, binades -20 .. 20 */
    double v = ldexp(1.0 + (double)((r >> 12) & 0x7fffff) / 0x1p23, (int)((r >> 40) % 41) - 20);
    return (r >> 8) & 1 ? -v : v;
  }
  int cat = (int)(r % 16), sgn = (int)((r >> 8) & 1);
  int lo = (f->emin - f->precision) / 2, hi = f->emax / 2;
  double v;
  if (lo < -140) lo = -140;
  if (hi > 126) hi = 126;
  switch (cat) {
  case 0: case 1: case 2: case 3: case 4: /* ties */
    v = ldexp((double)((r >> 12) % 64 + 1), (int)((r >> 24) % 5) - 2);
    break;
  case 5: case 6: /* products near f's subnormals */
    v = ldexp(1.0 + (double)((r >> 12) % 256) / 256.0, lo + (int)((r >> 24) % 4) - 1);
    break;
  case 7: case 8: /* products near f's overflow */
    v = ldexp(1.0 + (double)((r >> 12) % 256) / 256.0, hi - (int)((r >> 24) % 2));
    break;
  case 9:
    v = 0.0;
    break;
  case 10:
    v = specials ? ((r >> 12) & 1 ? INFINITY : NAN) : 1.0;
    break;
  default: { /* any binary32 value (finite) */
    uint32_t u = (uint32_t)(r >> 16) & 0x7fffffffu;
    float fv;
    if ((u >> 23) == 0xff) u &= 0xbfffffffu;
    memcpy(&fv, &u, sizeof fv);
    v = (double)fv;
  }
  }
  v = (double)(float)v; /* a binary32 value */
  return sgn ? -v : v;
}

/* One entry of RO32 data (gemm_acc_fast.h) for accumulator f: zero or a
   binary32 value of <= 12 significant bits with magnitude in [2^-60, 2^50],
   so that every product is exact in binary32: ties (small integers times
   powers of two), products near f's subnormals and near its overflow
   (inside that range: bf16 reaches neither), zeros of both signs, and
   11-bit significands of any exponent there. */
static double ro32_entry(const lowp_format_t *f) {
  uint64_t r = next();
  int cat = (int)(r % 8), sgn = (int)((r >> 8) & 1);
  int lo = (f->emin - f->precision) / 2, hi = f->emax / 2;
  double v;
  if (lo < -59) lo = -59;
  if (hi > 48) hi = 48;
  switch (cat) {
  case 0: case 1: case 2: /* ties */
    v = ldexp((double)((r >> 12) % 64 + 1), (int)((r >> 24) % 5) - 2);
    break;
  case 3: /* products near f's subnormals */
    v = ldexp(1.0 + (double)((r >> 12) % 256) / 256.0, lo + (int)((r >> 24) % 4) - 1);
    break;
  case 4: /* products near f's overflow */
    v = ldexp(1.0 + (double)((r >> 12) % 256) / 256.0, hi - (int)((r >> 24) % 2));
    break;
  case 5:
    v = 0.0;
    break;
  default: /* 1024 .. 3071 times 2^-70 .. 2^29 */
    v = ldexp((double)((r >> 12) % 2048 + 1024), (int)((r >> 24) % 100) - 70);
  }
  return sgn ? -v : v;
}

static const char *const isas[] = {"generic", "avx2", "avx512"};

/* the data of a case: entry (ro32 = 0) or ro32_entry (ro32 = 1) */
typedef struct {
  int specials, ro32;
} data_t;

/* lanes: 32 or 64, the lanes lowp_gemm_order_fast_lanes must report on
   every isa; 3264: 32 on avx512 and on avx2 with F16C (the rounding
   mode register), 64 on the baseline (fp32 in directed modes);
   0: either (narrow accumulators on entry's data, RO32 by chance or not) */
static int lanes_want(int lanes, int s) {
  return lanes == 3264 ? (s == 2 || (s == 1 && lowp_cpu_has_f16c()) ? 32 : 64) : lanes;
}

/* fast == lowp_accum_dot on one m x k by k x n problem, on every isa
   this CPU runs, with 1 to maxth threads */
static void check_case(const lowp_accum_t *ac, size_t m, size_t n, size_t k, data_t dt,
                       int lanes, int maxth) {
  double *a = malloc((m * k + 1) * sizeof *a), *b = malloc((k * n + 1) * sizeof *b);
  double *want = malloc(m * n * sizeof *want), *got = malloc(m * n * sizeof *got);
  char desc[160];
  size_t e, i, j;
  int s, th, specials = dt.specials;
  lowp_accum_str(desc, sizeof desc, ac);
  for (e = 0; e < m * k; e++) a[e] = dt.ro32 ? ro32_entry(&ac->acc) : entry(&ac->acc, specials);
  for (e = 0; e < k * n; e++) b[e] = dt.ro32 ? ro32_entry(&ac->acc) : entry(&ac->acc, specials);
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++)
      lowp_accum_dot(&want[i * n + j], a + i * k, 1, b + j, n, k, ac);
  lowp_test_check(lowp_gemm_order_fast_ok(a, b, m, n, k, ac), "%s k=%zu: fast path applies", desc, k);
  for (s = 0; s < 3; s++)
    for (th = 1; th <= maxth; th++) {
      int st, bad = 0;
      omp_set_num_threads(th);
      memset(got, 0x5a, m * n * sizeof *got);
      st = lowp_gemm_order_fast(got, a, b, m, n, k, ac, isas[s]);
      if (st == LOWP_EUNSUPPORTED) continue;
      if (lanes && th == 1) {
        int got_lanes = lowp_gemm_order_fast_lanes(a, b, m, n, k, ac, isas[s]);
        lowp_test_check(got_lanes == lanes_want(lanes, s), "%s %s k=%zu ro32=%d: binary%d lanes",
                        desc, isas[s], k, dt.ro32, lanes_want(lanes, s));
      }
      for (e = 0; e < m * n; e++)
        if (!same_bits(got[e], want[e])) {
          if (!bad)
            lowp_test_check(0, "%s %s k=%zu th=%d out %zu: %a want %a", desc, isas[s], k, th, e,
                            got[e], want[e]);
          bad = 1;
        }
      lowp_test_check(st == LOWP_OK && !bad, "%s %s k=%zu n=%zu th=%d specials=%d: same bits",
                      desc, isas[s], k, n, th, specials);
    }
  free(a), free(b), free(want), free(got);
}

/* fast == want (lowp_accum_dot's) bit for bit on every isa this CPU runs,
   1 and 2 threads; lanes: the lanes to assert (0: none) */
static void check_isas(const char *what, const double *a, const double *b, size_t m, size_t n,
                       size_t k, const lowp_accum_t *ac, const double *want, int lanes) {
  double *got = malloc(m * n * sizeof *got);
  size_t e;
  int s, th;
  for (s = 0; s < 3; s++)
    for (th = 1; th <= 2; th++) {
      int st, bad = 0;
      omp_set_num_threads(th);
      st = lowp_gemm_order_fast(got, a, b, m, n, k, ac, isas[s]);
      if (st == LOWP_EUNSUPPORTED) continue;
      if (lanes && th == 1)
        lowp_test_check(lowp_gemm_order_fast_lanes(a, b, m, n, k, ac, isas[s]) == lanes,
                        "%s %s: binary%d lanes", what, isas[s], lanes);
      for (e = 0; e < m * n; e++) bad |= !same_bits(got[e], want[e]);
      lowp_test_check(st == LOWP_OK && !bad, "%s %s k=%zu th=%d: same bits", what, isas[s], k, th);
    }
  free(got);
}

/* The double rounding that the AVX-512 and AVX2 fp32 kernels' fast way
   must not make: a0 b0 = (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24, a binary32
   midpoint, and a1 b1 = +-2^-80, so a0 b0 + a1 b1 rounds to the midpoint in
   binary64 and then to even in binary32, away from the sum rounded once.
   Trap pairs (l, l + 1) at the pairwise leaves of some rows and columns,
   the rest plain, k = 2 (one leaf) up to 40; pairs at even l (leaves when
   k is a power of 2), then at odd l (the leaf of a subtree of 3, of k = 7
   and 13's subtrees); m = 11: a second tile of rows, n = 37: three chunks
   of 16 lanes, some with no trap. The first case also checks that binary64
   then binary32 gives another answer (the trap is real). */
static void check_midpoints(void) {
  static const size_t ks[] = {2, 3, 4, 7, 13, 16, 17, 33, 40};
  const double big = 1.0 + 0x1p-12, tiny = 0x1p-40;
  size_t q, m = 11, n = 37, i, j, l, e, off;
  for (off = 0; off < 2; off++)
    for (q = 0; q < sizeof ks / sizeof *ks; q++) {
      const size_t k = ks[q];
      double *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b);
      double *want = malloc(m * n * sizeof *want);
      lowp_accum_t ac;
      lowp_accum_parse(&ac, "pairwise,acc=fp32,fma=1", NULL, 0);
      for (e = 0; e < m * k; e++) a[e] = entry(&ac.acc, 2);
      for (e = 0; e < k * n; e++) b[e] = entry(&ac.acc, 2);
      for (l = off; l + 1 < k; l += 2)
        for (i = 0; i < m; i += 2) {
          a[i * k + l] = big, a[i * k + l + 1] = tiny;
          for (j = 0; j < n; j++) /* columns j = l mod 3 stay plain */
            if (j % 3 != l % 3) b[l * n + j] = big, b[(l + 1) * n + j] = j % 2 ? tiny : -tiny;
        }
      for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) lowp_accum_dot(&want[i * n + j], a + i * k, 1, b + j, n, k, &ac);
      if (k == 2 && off == 0) {
        float twice = (float)fma(tiny, tiny, big * big);
        lowp_test_check(want[1] == 1.0 + 0x1p-11 + 0x1p-23 && (double)twice == 1.0 + 0x1p-11,
                        "midpoint trap: rounded once %a, twice %a", want[1], (double)twice);
      }
      check_isas(off ? "midpoint trap, odd l" : "midpoint trap", a, b, m, n, k, &ac, want, 0);
      free(a), free(b), free(want);
    }
}

static void check_refusals(void) {
  lowp_accum_t ac;
  double a[4] = {1, 2, 3, 0.1}, b[4] = {1, 1, 1, 1}, c[4];
  lowp_accum_parse(&ac, "kahan", NULL, 0);
  lowp_test_check(!lowp_gemm_order_fast_ok(a, b, 1, 1, 3, &ac), "kahan is refused");
  lowp_test_check(lowp_gemm_order_fast(c, a, b, 1, 1, 3, &ac, NULL) == LOWP_EINVAL,
                  "kahan: EINVAL");
  lowp_accum_parse(&ac, "pairwise,rnd=rto", NULL, 0);
  lowp_test_check(!lowp_gemm_order_fast_ok(a, b, 1, 1, 3, &ac), "rto is refused");
  lowp_accum_parse(&ac, "pairwise,acc=fp32", NULL, 0);
  lowp_test_check(!lowp_gemm_order_fast_ok(a, b, 1, 1, 4, &ac),
                  "fp32 with an input that is no binary32 value (0.1) is refused");
  lowp_test_check(lowp_gemm_order_fast_ok(a, b, 1, 1, 3, &ac), "fp32 binary32 inputs apply");
  lowp_test_check(lowp_gemm_order_fast_lanes(a, b, 1, 1, 3, &ac, NULL) == 32,
                  "fp32 in rne: binary32 lanes");
  lowp_test_check(lowp_gemm_order_fast_lanes(a, b, 1, 1, 4, &ac, NULL) == 0,
                  "lanes of a refused case: 0");
  lowp_test_check(lowp_gemm_order_fast_lanes(a, b, 1, 1, 3, &ac, "nosuchisa") == 0,
                  "lanes on an unknown isa: 0");
  lowp_test_check(lowp_gemm_order_fast(c, a, b, 1, 1, 3, &ac, "nosuchisa") == LOWP_EINVAL,
                  "unknown isa: EINVAL");
}

/* RO32 data (cpu/reduce_fast32.c's binary32 lanes) on every order x
   accumulator (fp16 on vcvtps2ph, bf16 on the bits, e5m2 on fround_to;
   fp32 in directed modes) x mode x fma; k reaches every pairwise leaf
   (1 to 8 terms) and trees above them, n a second block of 128 columns */
static void check_ro32(void) {
  static const char *const orders[] = {"recursive", "pairwise", "blocked:1", "blocked:3",
                                       "blocked:32", "splitk:1", "splitk:3", "splitk:4",
                                       "splitk:7"};
  static const char *const accs[] = {"fp16", "bf16", "e5m2", "fp32"};
  static const char *const rnds[] = {"rne", "rtz", "rup", "rdn"};
  static const size_t ks[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 33, 100};
  static const size_t ns[] = {5, 37, 130};
  size_t o, f, r, fm, q;
  for (f = 0; f < sizeof accs / sizeof *accs; f++)
    for (r = f == 3; r < 4; r++) /* fp32 in rne: binary32 lanes of its own */
      for (fm = 0; fm < 2; fm++)
        for (o = 0; o < sizeof orders / sizeof *orders; o++) {
          char spec[96];
          lowp_accum_t ac;
          data_t dt = {0, 1};
          snprintf(spec, sizeof spec, "%s,acc=%s,rnd=%s,fma=%zu", orders[o], accs[f], rnds[r], fm);
          if (lowp_accum_parse(&ac, spec, NULL, 0) != LOWP_OK) {
            lowp_test_check(0, "parse %s", spec);
            continue;
          }
          for (q = 0; q < sizeof ks / sizeof *ks; q++)
            check_case(&ac, 3, ns[q % 3], ks[q], dt, f == 3 ? 3264 : 32, 2);
          /* fp16 and bf16 with exact terms, recursive, blocked and splitk:
             AVX2's a_blocks (all rows of a group at once: a full group of 4
             and one row after it), blocks ending inside and at k */
          if (f < 2 && fm == 1 && o != 1 && o % 2 == 0)
            check_case(&ac, 5, 130, 301, dt, 32, 1);
          /* fp16 and bf16 pairwise: AVX2's a_pleaf (a leaf's groups of all
             rows marked in one mask, the marked ones redone) and, in the
             directed modes, a_paddv above the leaves; a full group of 4
             rows and one after it, two full column panels and a part, every
             leaf size (k = 37: 4 and 5; 2 .. 8 below) */
          if (f < 2 && o == 1) {
            check_case(&ac, 5, 260, 37, dt, 32, 1);
            for (q = 2; q <= 8; q++) check_case(&ac, 5, 260, q, dt, 32, 1);
          }
        }
}

/* Partial sums of very different magnitudes: terms of P + 1 significant
   bits (P acc's precision: values of acc and its midpoints) over acc's whole
   exponent range (fp16 2^-24 .. 2^15, bf16 2^-50 .. 2^45, inside RO32's
   input range), times a power of two, so that the additions above the
   pairwise leaves and of block sums meet the inexact binary32 sums of two
   values of acc (AVX2's a_sum adds them with no test in rne) */
static void check_wide_sums(void) {
  static const char *const orders[] = {"pairwise", "blocked:3", "splitk:3"};
  static const char *const accs[] = {"fp16", "bf16"};
  static const char *const rnds[] = {"rne", "rtz", "rup", "rdn"};
  static const size_t ks[] = {4, 8, 16, 17, 100};
  size_t o, f, r, q, e, i, j, m = 3, n = 37;
  for (f = 0; f < 2; f++)
    for (r = 0; r < 4; r++)
      for (o = 0; o < sizeof orders / sizeof *orders; o++)
        for (q = 0; q < sizeof ks / sizeof *ks; q++) {
          const size_t k = ks[q];
          const int p = f ? 8 : 11, elo = f ? -50 : -24, ehi = f ? 45 : 15;
          double *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b);
          double *want = malloc(m * n * sizeof *want);
          char spec[96];
          lowp_accum_t ac;
          snprintf(spec, sizeof spec, "%s,acc=%s,rnd=%s", orders[o], accs[f], rnds[r]);
          lowp_accum_parse(&ac, spec, NULL, 0);
          for (e = 0; e < m * k; e++) a[e] = ldexp(next() % 2 ? 1.0 : -1.0, (int)(next() % 3) - 1);
          for (e = 0; e < k * n; e++) {
            uint64_t u = next();
            double sig = (double)((1u << p) + (unsigned)(u % (1u << p)));
            b[e] = ldexp(u >> 40 & 1 ? -sig : sig, elo + (int)((u >> 20) % (uint64_t)(ehi - elo + 1)) - p);
          }
          for (i = 0; i < m; i++)
            for (j = 0; j < n; j++) lowp_accum_dot(&want[i * n + j], a + i * k, 1, b + j, n, k, &ac);
          check_isas(spec, a, b, m, n, k, &ac, want, 32);
          free(a), free(b), free(want);
        }
}

/* pass 0: the cases on one thread (the tiles' extra k and plain data: one
   task each), before any second thread exists: a spinning idle OpenMP
   thread costs seconds on a loaded machine; pass 1: 1 and 2 threads */
static void run_pass(int pass) {
  static const char *const orders[] = {"recursive", "pairwise", "blocked:1", "blocked:3",
                                       "blocked:32", "splitk:1", "splitk:3", "splitk:4",
                                       "splitk:7"};
  static const char *const accs[] = {"fp32", "fp64", "fp16", "bf16", "tf32"};
  static const char *const rnds[] = {"rne", "rtz", "rup", "rdn"};
  static const size_t ks[] = {1, 2, 3, 5, 17, 100};
  /* and on the register tiles (fp32 in rne, fp64): every pairwise subtree
     size (2 .. 16) as k, sizes just over one (33) and uneven splits (24,
     31, 1000), plain data too (the AVX-512 fp32 kernel's fast way), and for
     fp64 binary64 data (rounded products: a fused step would differ) */
  static const size_t tks[] = {4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 24, 31, 32, 33, 1000};
  size_t o, f, r, fm, q, sp;
  for (f = 0; f < sizeof accs / sizeof *accs; f++)
    for (r = 0; r < 4; r++)
      for (fm = 0; fm < 2; fm++)
        for (o = 0; o < sizeof orders / sizeof *orders; o++) {
          char spec[96];
          lowp_accum_t ac;
          int tile;
          if (f == 1 && r) continue; /* fp64 is modelled in rne only */
          snprintf(spec, sizeof spec, "%s,acc=%s,rnd=%s,fma=%zu", orders[o], accs[f], rnds[r], fm);
          if (lowp_accum_parse(&ac, spec, NULL, 0) != LOWP_OK) {
            lowp_test_check(0, "parse %s", spec);
            continue;
          }
          tile = f == 1 || (f == 0 && r == 0);
          if (pass == 0) {
            for (q = 0; tile && q < sizeof ks / sizeof *ks; q++)
              check_case(&ac, q % 3 ? 3 : 6, q % 2 ? 37 : 5, ks[q], (data_t){2, 0},
                         f == 0 ? 32 : 64, 1);
            for (q = 0; tile && q < sizeof tks / sizeof *tks; q++)
              for (sp = 0; sp < (f == 1 ? 4u : 3u); sp++) /* m = 11: a tile of 8 rows padded */
                check_case(&ac, q % 3 ? 3 : 11, q % 2 ? 37 : 5, tks[q], (data_t){(int)sp, 0},
                           f == 0 ? 32 : 64, 1);
            continue;
          }
          for (q = 0; q < sizeof ks / sizeof *ks; q++)
            for (sp = 0; sp < 2; sp++) {
              data_t dt = {(int)sp, 0};
              /* fp32: rne binary32 lanes, directed ones on AVX-512 and AVX2; fp64
                 and tf32 (RO64) binary64 */
              int lanes = f == 0 ? (r ? 3264 : 32) : f == 1 || f == 4 ? 64 : 0;
              check_case(&ac, q % 3 ? 3 : 6, q % 2 ? 37 : 5, ks[q], dt, lanes, 2);
            }
          /* several tasks (blocks of 256 rows, 256 fp32 or 32 fp64 columns)
             for the threads to share */
          if (tile) check_case(&ac, 261, 260, 17, (data_t){1, 0}, f == 0 ? 32 : 64, 2);
          /* fp32 directed (reduce_fast32.c): groups of 16 rows, a full one
             and a shorter one after it */
          if (f == 0 && r) check_case(&ac, 21, 37, 33, (data_t){0, 0}, 3264, 2);
        }
}

int main(void) {
  lowp_test_start("treduce_fast");
  rng_state = 22;
  check_refusals();
  omp_set_num_threads(1);
  run_pass(0);
  check_midpoints();
  run_pass(1);
  check_ro32();
  check_wide_sums();
  return lowp_test_end();
}
