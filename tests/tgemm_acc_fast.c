/* tgemm_acc_fast -- every fast accumulation kernel against the scalar reference, bit for bit */

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/gemm_acc.h"
#include "cpu/gemm_acc_fast.h"
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

/* One adversarial entry for accumulator f (wide 0: a binary32 value; 1: a
   binary64 value; 2: 11 significant bits, magnitudes in [2^-60, 2^50]; 4:
   the same with 8 significant bits, as bf16 data; 3 and 5: one tiny binade
   with 11 and 8 bits):
   small integers times a power of two (ties at every step of a narrow
   accumulator), factors whose products are subnormal in f, factors whose
   products reach f's largest binade (overflow mid-sum), zeros of both
   signs, inf and NaN, and binary32 values of any magnitude. */
static double entry(const lowp_format_t *f, int wide, int specials) {
  uint64_t r = next();
  int cat = (int)(r % 16), sgn = (int)((r >> 8) & 1);
  double v;
  int half_min = (f->emin - f->precision) / 2, half_max = f->emax / 2;
  if (wide == 3 || wide == 5) { /* narrow data of one tiny binade, both signs: sums of
                                   products cancel down to 2^-143, bf16's subnormals included */
    double sig = wide == 3 ? 2048.0 : 128.0;
    v = ldexp(1.0 + (double)((r >> 12) % (uint64_t)sig) / sig, -60 + (int)((r >> 40) % 3));
    return sgn ? -v : v;
  }
  if (wide == 2 || wide == 4) { /* narrow data (the RO32 kernel): magnitudes in [2^-60, 2^50] */
    half_min = half_min < -56 ? -56 : half_min;
    half_max = half_max > 48 ? 48 : half_max;
  }
  switch (cat) {
  case 0: case 1: case 2: case 3: case 4: /* integers: ties in the sum */
    v = ldexp((double)((r >> 12) % 4096), (int)((r >> 40) % 7) - 3);
    break;
  case 5: case 6: /* products near and below f's smallest subnormal */
    v = ldexp(1.0 + (double)((r >> 12) % 1024) / 1024.0, half_min + (int)((r >> 40) % 6) - 3);
    break;
  case 7: /* products near f's largest binade */
    v = ldexp(1.0 + (double)((r >> 12) % 1024) / 1024.0, half_max - (int)((r >> 40) % 2));
    break;
  case 8: v = 0.0; break;
  case 9:
    if (specials && (r >> 20) % 40 == 0) v = ((r >> 30) & 1) ? INFINITY : NAN;
    else v = 1.0;
    break;
  default: /* any binary32 (or binary64) value of moderate magnitude */
    v = ldexp((double)(r >> 11) / 9007199254740992.0 + 0.5, (int)((r >> 3) % 40) - 20);
    break;
  }
  if (sgn) v = -v;
  if (wide != 1 && v == v) {
    float fv = (float)v;
    v = (double)fv;
  }
  if ((wide == 2 || wide == 4) && v != 0 && isfinite(v)) { /* 11 (fp16) or 8 (bf16) bits */
    int e;
    double mt = frexp(v, &e), sig = wide == 2 ? 2048.0 : 256.0;
    v = ldexp(nearbyint(mt * sig) / sig, e);
  }
  return v;
}

static void fill(double *x, size_t cnt, const lowp_format_t *f, int wide, int specials) {
  size_t i;
  for (i = 0; i < cnt; i++) x[i] = entry(f, wide, specials);
}

/* fast (every isa this CPU runs, 1 and 2 threads) == scalar on given data */
static void check_data(const char *what, const lowp_gemm_acc_cfg_t *cfg, const double *a,
                       const double *b, const double *c0, size_t m, size_t n, size_t k,
                       lowp_accfast_kind_t want) {
  static const char *isas[] = {"generic", "avx2", "avx512"};
  double *ref = malloc(m * n * sizeof *ref), *got = malloc(m * n * sizeof *got);
  size_t e, bad;
  int s, th;
  lowp_accfast_kind_t kd;
  if (!ref || !got) { lowp_test_check(0, "alloc"); goto out; }
  memcpy(ref, c0, m * n * sizeof *ref);
  lowp_test_check(lowp_gemm_acc_scalar(ref, a, b, m, n, k, cfg) == LOWP_OK, "%s: scalar", what);
  kd = lowp_gemm_acc_fast_kind(a, b, m, n, k, cfg);
  lowp_test_check(kd == want, "%s: fast kind %d, want %d", what, (int)kd, (int)want);
  if (kd == LOWP_ACCFAST_NONE) goto out;
  for (s = 0; s < 3; s++)
    for (th = 1; th <= 2; th++) {
      int st;
      omp_set_num_threads(th);
      memcpy(got, c0, m * n * sizeof *got);
      st = lowp_gemm_acc_fast(got, a, b, m, n, k, cfg, kd, isas[s]);
      if (st == LOWP_EUNSUPPORTED) continue;
      lowp_test_check(st == LOWP_OK, "%s %s: status %d", what, isas[s], st);
      for (e = 0, bad = 0; e < m * n; e++)
        if (!same_bits(got[e], ref[e]) && bad++ < 3)
          lowp_test_check(0, "%s %s %d thr: C[%zu] %a, reference %a", what, isas[s], th, e,
                          got[e], ref[e]);
      lowp_test_check(bad == 0, "%s %s %d thr: %zu of %zu outputs differ", what, isas[s], th,
                      bad, m * n);
    }
  /* the public entry point (dispatching) gives the same bytes */
  memcpy(got, c0, m * n * sizeof *got);
  lowp_test_check(lowp_gemm_acc_ref(got, a, b, m, n, k, cfg) == LOWP_OK, "%s: entry", what);
  lowp_test_check(memcmp(got, ref, m * n * sizeof *got) == 0, "%s: entry point bytes", what);
  /* one dot product, strided, through the scalar fast step */
  {
    double y0 = 0, y1 = 0;
    lowp_test_check(lowp_dot_acc_scalar(&y0, a, 1, b + 1 % n, n, k, c0[0], cfg) == LOWP_OK &&
                        lowp_dot_acc_ref(&y1, a, 1, b + 1 % n, n, k, c0[0], cfg) == LOWP_OK,
                    "%s: dot runs", what);
    lowp_test_check(same_bits(y0, y1), "%s: dot %a, reference %a", what, y1, y0);
  }
  /* up to LOWP_DOT_FAST_LANES dots side by side (rows of a, columns of b; every isa copy), each the
     scalar reference's bits */
  {
    const double *xs[LOWP_DOT_FAST_LANES], *ws[LOWP_DOT_FAST_LANES];
    double y[LOWP_DOT_FAST_LANES], want1;
    size_t g = m < LOWP_DOT_FAST_LANES ? m : LOWP_DOT_FAST_LANES, q;
    /* lowp_dot_acc_fast serves every lane: so must lowp_dot_acc_fast_many, else it declines */
    int fast_all = 1;
    for (q = 0; q < g; q++) {
      xs[q] = a + q * k, ws[q] = b + (q + 1) % n;
      fast_all &= lowp_dot_acc_fast(&want1, xs[q], 1, ws[q], n, k, c0[0], cfg) == LOWP_OK;
    }
    for (s = 0; s <= 3; s++) {
      int st;
      memset(y, 0, sizeof y);
      st = s < 3 ? lowp_dot_acc_fast_many(y, g, xs, 1, ws, n, k, c0[0], cfg, isas[s])
                 : lowp_dot_acc_ref_many(y, g, xs, 1, ws, n, k, c0[0], cfg);
      if (st == LOWP_EUNSUPPORTED) continue;
      if (s < 3 && !fast_all) {
        lowp_test_check(st == LOWP_EINVAL, "%s: %s dots status %d where the fast step declines", what, isas[s],
                        st);
        continue;
      }
      lowp_test_check(st == LOWP_OK, "%s: %s dots status %d", what, s < 3 ? isas[s] : "ref_many", st);
      for (q = 0; q < g; q++) {
        lowp_test_check(lowp_dot_acc_scalar(&want1, xs[q], 1, ws[q], n, k, c0[0], cfg) == LOWP_OK, "%s: dot",
                        what);
        lowp_test_check(same_bits(y[q], want1), "%s: %s dots, lane %zu of %zu: %a, reference %a", what,
                        s < 3 ? isas[s] : "ref_many", q, g, y[q], want1);
      }
    }
  }
out:
  free(ref), free(got);
}

/* check_data on one shape of generated data;
   cancel: every output is a b + a (-b) on a zero addend (exact zero sums,
   whose sign depends on the mode); specials: 1 inf and NaN in a, b and C,
   2 in C only, where every fifth addend is also near acc's largest value
   (overflow mid-sum for any accumulator) */
static void compare_data(const char *what, const lowp_gemm_acc_cfg_t *cfg, size_t m,
                         size_t n, size_t k, int wide, int specials, int cancel,
                         lowp_accfast_kind_t want) {
  double *a = malloc((m * k + 1) * sizeof *a), *b = malloc((k * n + 1) * sizeof *b);
  double *c0 = malloc(m * n * sizeof *c0);
  size_t e;
  if (!a || !b || !c0) { lowp_test_check(0, "alloc"); goto out; }
  fill(a, m * k, cfg->acc, wide, specials == 1);
  fill(b, k * n, cfg->acc, wide, specials == 1);
  fill(c0, m * n, cfg->acc, 1, specials != 0);
  if (specials == 2)
    for (e = 0; e < m * n; e += 5)
      c0[e] = ldexp((e % 2 ? -1.0 : 1.0) * (2.0 - ldexp(1.0, (int)(e % 3) - cfg->acc->precision)),
                    cfg->acc->emax);
  if (cancel && k == 2) {
    for (e = 0; e < m; e++) a[2 * e + 1] = a[2 * e];
    for (e = 0; e < n; e++) b[n + e] = -b[e];
    for (e = 0; e < m * n; e++) c0[e] = (e % 3) ? 0.0 : -0.0;
  }
  check_data(what, cfg, a, b, c0, m, n, k, want);
out:
  free(a), free(b), free(c0);
}

static void compare(const char *what, const lowp_gemm_acc_cfg_t *cfg, size_t m, size_t n,
                    size_t k, int wide, int specials, lowp_accfast_kind_t want) {
  compare_data(what, cfg, m, n, k, wide, specials, 0, want);
}

static const char *mode_name(lowp_rounding_t r) {
  static const char *names[] = {"rne", "rna", "rtz", "rup", "rdn", "rto", "sr"};
  return names[r];
}

/* A = -0, B = 1, C = -0: every sum is -0 + -0 = -0 (a broadcast written
   as 0 + a once turned the factor -0 into +0 and the sums into +0), with
   exact products and with products rounded to acc (for bf16 in rne the
   AVX2 ra_loopv8's product would give +0: its sums must not start at -0) */
static void check_negzero(const lowp_format_t *acc, lowp_rounding_t rnd) {
  static const char *isas[] = {"generic", "avx2", "avx512"};
  enum { M = 3, N = 40, K = 3 };
  double a[M * K], b[K * N], ref[M * N], got[M * N];
  lowp_gemm_acc_cfg_t cfg;
  size_t e;
  int s, rp;
  for (rp = 0; rp < 2; rp++) {
    memset(&cfg, 0, sizeof cfg);
    cfg.acc = acc, cfg.acc_rnd = rnd, cfg.order = LOWP_ORDER_RECURSIVE;
    if (rp) cfg.prod = acc, cfg.prod_rnd = rnd;
    for (e = 0; e < M * K; e++) a[e] = -0.0;
    for (e = 0; e < K * N; e++) b[e] = 1.0;
    for (e = 0; e < M * N; e++) ref[e] = -0.0;
    lowp_gemm_acc_scalar(ref, a, b, M, N, K, &cfg);
    lowp_test_check(signbit(ref[0]) != 0, "%s prod %d: the reference's sum is -0", acc->name,
                    rp);
    for (s = 0; s < 3; s++) {
      lowp_accfast_kind_t kd = lowp_gemm_acc_fast_kind(a, b, M, N, K, &cfg);
      int st;
      for (e = 0; e < M * N; e++) got[e] = -0.0;
      st = lowp_gemm_acc_fast(got, a, b, M, N, K, &cfg, kd, isas[s]);
      if (st == LOWP_EUNSUPPORTED) continue;
      lowp_test_check(st == LOWP_OK && memcmp(got, ref, sizeof got) == 0,
                      "%s rnd %d prod %d %s: -0 factors keep -0 sums", acc->name, (int)rnd, rp,
                      isas[s]);
    }
  }
}

/* The bounds of the AVX2 ra_loopv8 (bf16 products, bf16 acc, rne, 8-bit
   data): its rounding by Veltkamp's splitting overflows for sums past
   2^112 - 2^96 and turns inf into NaN, so a group of MR = 4 rows whose sums
   start at inf, NaN or beyond 2^96 takes ra_loop; from 2^96 (and products
   up to 2^100, k = 256 of them) the sums reach 2^107 on ra_loopv8. One
   kind of start per row group (one such sum sends its whole group to
   ra_loop): inf; NaN; (2^96, 2^111]; 2^120 and beyond; 2^96 and below. */
static void check_v8_bounds(void) {
  enum { G = 5, S = 4, M = 4 * G, N = 70, K = 256 };
  static const double starts[G][S] = {{INFINITY, -INFINITY, INFINITY, 1.0},
                                      {NAN, NAN, -NAN, NAN},
                                      {0x1p112, -0x1p111, 0x1.02p97, -0x1.fep108},
                                      {0x1p127, -0x1.8p120, 0x1p125, -0x1p127},
                                      {0x1p96, -0x1p96, 0x1.fep95, 1.0}};
  static double a[M * K], b[K * N], c0[M * N];
  lowp_gemm_acc_cfg_t cfg;
  size_t e, l, r;
  memset(&cfg, 0, sizeof cfg);
  cfg.acc = cfg.prod = &LOWP_FMT_BF16;
  cfg.acc_rnd = cfg.prod_rnd = LOWP_RND_NE, cfg.order = LOWP_ORDER_RECURSIVE;
  for (r = 0; r < M; r++) /* even rows: products up to ~2^100, odd rows: both signs */
    for (l = 0; l < K; l++)
      a[r * K + l] = r % 2 ? ldexp((l % 2 ? -1.0 : 1.0) * (1.0 + (double)(l % 7) / 128.0), 40)
                           : ldexp(1.0 + (double)((l + r) % 128) / 128.0, 49);
  for (l = 0; l < K; l++)
    for (e = 0; e < N; e++)
      b[l * N + e] = ldexp(1.0 + (double)((l + e) % 128) / 128.0, 49 - (int)(e % 3));
  for (r = 0; r < M; r++)
    for (e = 0; e < N; e++) c0[r * N + e] = starts[r / 4][(r + e) % S];
  check_data("bf16 products and acc rne, 8-bit data: sums from inf, NaN, 2^96 .. 2^127", &cfg,
             a, b, c0, M, N, K, LOWP_ACCFAST_RO32);
}

/* The sum rounded to odd keeps what lies below binary32's last place: the
   product (545 2^-9)(481 2^-(9+P)) = (2^18 + 1) 2^-(18+P) = 2^-P + 2^-(P+18)
   (RO32 data: 10 and 9 bits) added to 1 is just above acc's midpoint
   1 + 2^-P (P its precision: fp16, bf16), and 2^-(P+18) is below half of
   binary32's ulp at 1 (2^-24): rounded to nearest in binary32 the sum would
   be the midpoint itself, a tie. Columns of both signs, and addends of the
   other sign (the binade below 1). */
static void check_sticky(void) {
  static const lowp_rounding_t modes[] = {LOWP_RND_NE, LOWP_RND_TZ, LOWP_RND_UP, LOWP_RND_DN};
  const lowp_format_t *accs[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16};
  enum { N = 24 };
  double a[1], b[N], c0[N], ref[N];
  lowp_gemm_acc_cfg_t cfg;
  char what[80];
  size_t ia, im, j;
  for (ia = 0; ia < 2; ia++)
    for (im = 0; im < 4; im++) {
      int P = accs[ia]->precision;
      memset(&cfg, 0, sizeof cfg);
      cfg.acc = accs[ia], cfg.acc_rnd = modes[im], cfg.order = LOWP_ORDER_RECURSIVE;
      a[0] = ldexp(545.0, -9);
      for (j = 0; j < N; j++) {
        b[j] = ldexp(j % 2 ? -481.0 : 481.0, -9 - P);
        c0[j] = (j % 4 < 2) == (j % 2 == 0) ? 1.0 : -1.0;
      }
      memcpy(ref, c0, sizeof ref);
      lowp_test_check(lowp_gemm_acc_scalar(ref, a, b, 1, N, 1, &cfg) == LOWP_OK &&
                          (modes[im] != LOWP_RND_NE ||
                           (ref[0] == 1.0 + ldexp(1.0, 1 - P) && ref[1] == -ref[0])),
                      "%s: the reference rounds 1 + 2^-P + 2^-(P+18) up: %a", accs[ia]->name,
                      ref[0]);
      snprintf(what, sizeof what, "acc %s %s: a sum just above a midpoint", accs[ia]->name,
               mode_name(modes[im]));
      check_data(what, &cfg, a, b, c0, 1, N, 1, LOWP_ACCFAST_RO32);
    }
}

/* check_sticky's sums at later steps of k, in every 16-column group of
   both panels of columns, from every row of a group of 8 (the AVX2 copy's
   ra_loopd marks the groups that fail its test in one step of 8 rows, then
   redoes them from the sums before the step: a wrong mark, row or column
   there changes these outputs). Row r of A is zero but at one step l_r (0, 1, 2,
   100, 255, 256, 257, 299: both panels of k), where it is 545 2^-9 (odd
   rows) or 511 2^-9 (even rows); B's columns are +-481 2^-(9+P) or +-513
   2^-(8+P) by 16-column group, C +-1. 545 x 481: 1 + 2^-P + 2^-(P+18),
   just above a midpoint (check_sticky); 511 x 513: 2^-(P-1) (1 - 2^-18),
   so 1 + it is just below the value 1 + 2^-(P-1), 2^-(P+17) under it, less
   than half of binary32's last place at 1: rounded to nearest in binary32
   it is that value, which the directed modes keep where the exact sum
   goes down (rtz, rdn for positive sums). The zero steps add exact zeros:
   sums that are acc values, boundaries of the directed modes, so there
   every group is marked at every step. */
static void check_sticky_steps(void) {
  static const lowp_rounding_t modes[] = {LOWP_RND_NE, LOWP_RND_TZ, LOWP_RND_UP, LOWP_RND_DN};
  static const size_t at[] = {0, 1, 2, 100, 255, 256, 257, 299};
  const lowp_format_t *accs[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16};
  enum { M = 8, N = 200, K = 300 };
  static double a[M * K], b[K * N], c0[M * N], ref[M * N];
  lowp_gemm_acc_cfg_t cfg;
  char what[80];
  size_t ia, im, r, l, j;
  for (ia = 0; ia < 2; ia++) {
    const int P = accs[ia]->precision;
    memset(a, 0, sizeof a);
    for (r = 0; r < M; r++) a[r * K + at[r]] = ldexp(r % 2 ? 545.0 : 511.0, -9);
    for (l = 0; l < K; l++)
      for (j = 0; j < N; j++)
        b[l * N + j] = (j % 2 ? -1.0 : 1.0) *
                       ((j / 16) % 2 ? ldexp(481.0, -9 - P) : ldexp(513.0, -8 - P));
    for (r = 0; r < M * N; r++) c0[r] = (r % 4 < 2) == (r % 2 == 0) ? 1.0 : -1.0;
    for (im = 0; im < 4; im++) {
      memset(&cfg, 0, sizeof cfg);
      cfg.acc = accs[ia], cfg.acc_rnd = modes[im], cfg.order = LOWP_ORDER_RECURSIVE;
      memcpy(ref, c0, sizeof ref);
      lowp_test_check(lowp_gemm_acc_scalar(ref, a, b, M, N, K, &cfg) == LOWP_OK &&
                          (modes[im] != LOWP_RND_NE || ref[N + 16] == 1.0 + ldexp(1.0, 1 - P)) &&
                          (modes[im] != LOWP_RND_TZ || ref[0] == 1.0),
                      "%s: the reference rounds the sticky sums: %a %a", accs[ia]->name,
                      ref[N + 16], ref[0]);
      snprintf(what, sizeof what, "acc %s %s: sums next to boundaries at steps of k",
               accs[ia]->name, mode_name(modes[im]));
      check_data(what, &cfg, a, b, c0, M, N, K, LOWP_ACCFAST_RO32);
    }
  }
}

/* The same below fp16's normals, where binary32 keeps more than 13 bits
   under fp16's last place (the AVX2 kernels' fast test, cpu/acc_steps.h
   ra_edge, reads t's 12 or 13 low bits): C = m 2^-24 (a subnormal, m in
   [256, 1023]) plus (99 2^-20)(331 2^-20) = (2^15 + 1) 2^-40 = 2^-25 +
   2^-40 is just above the midpoint (2m + 1) 2^-25, and 2^-40 is at most
   half of binary32's last place there (a tie, to the even midpoint); plus
   (255 2^-20)(257 2^-20) = 2^-24 - 2^-40, just below the fp16 value
   (m + 1) 2^-24. Columns of both signs. */
static void check_sticky_sub(void) {
  static const lowp_rounding_t modes[] = {LOWP_RND_NE, LOWP_RND_TZ, LOWP_RND_UP, LOWP_RND_DN};
  enum { N = 40 };
  double a[1], b[N], c0[N], ref[N];
  lowp_gemm_acc_cfg_t cfg;
  char what[80];
  size_t im, j;
  int v;
  for (v = 0; v < 2; v++)
    for (im = 0; im < 4; im++) {
      memset(&cfg, 0, sizeof cfg);
      cfg.acc = &LOWP_FMT_FP16, cfg.acc_rnd = modes[im], cfg.order = LOWP_ORDER_RECURSIVE;
      a[0] = ldexp(v ? 255.0 : 99.0, -20);
      for (j = 0; j < N; j++) {
        double sg = j % 2 ? -1.0 : 1.0;
        b[j] = sg * ldexp(v ? 257.0 : 331.0, -20);
        c0[j] = sg * ldexp((double)(256 + (j * 37) % 768), -24);
      }
      memcpy(ref, c0, sizeof ref);
      lowp_test_check(lowp_gemm_acc_scalar(ref, a, b, 1, N, 1, &cfg) == LOWP_OK &&
                          (modes[im] != LOWP_RND_NE || v ||
                           (ref[0] == ldexp(257.0, -24) && ref[1] == -ldexp(294.0, -24))),
                      "fp16: the reference rounds m 2^-24 + 2^-25 + 2^-40 up: %a %a", ref[0],
                      ref[1]);
      snprintf(what, sizeof what, "acc fp16 %s: a subnormal sum just %s", mode_name(modes[im]),
               v ? "below a value" : "above a midpoint");
      check_data(what, &cfg, a, b, c0, 1, N, 1, LOWP_ACCFAST_RO32);
    }
}

/* Products rounded to a format inside the accumulator's (or not), in every
   pair of modes, rne with rne included: the sums rounded once in binary32
   (rne where double rounding is innocuous, every directed mode) and to odd,
   on fp16 data (11 bits) and, for bf16 products, bf16 data (8 bits: split
   products in rne) */
static void check_rounded_prods(void) {
  static const lowp_rounding_t modes[] = {LOWP_RND_NE, LOWP_RND_TZ, LOWP_RND_UP, LOWP_RND_DN};
  const lowp_format_t *pairs[][2] = {
      {&LOWP_FMT_FP16, &LOWP_FMT_FP16}, {&LOWP_FMT_BF16, &LOWP_FMT_BF16},
      {&LOWP_FMT_E5M2, &LOWP_FMT_E5M2}, {&LOWP_FMT_FP16, &LOWP_FMT_E5M2},
      {&LOWP_FMT_BF16, &LOWP_FMT_FP16}, {&LOWP_FMT_FP16, &LOWP_FMT_BF16}};
  lowp_gemm_acc_cfg_t cfg;
  char what[160];
  size_t ip, ia, im, iw;
  for (ip = 0; ip < sizeof pairs / sizeof *pairs; ip++)
    for (ia = 0; ia < 4; ia++)
      for (im = 0; im < 4; im++)
        for (iw = 0; iw < (pairs[ip][1] == &LOWP_FMT_BF16 ? 2u : 1u); iw++) {
          int wide = iw ? 4 : 2;
          memset(&cfg, 0, sizeof cfg);
          cfg.acc = pairs[ip][0], cfg.prod = pairs[ip][1];
          cfg.acc_rnd = modes[ia], cfg.prod_rnd = modes[im];
          cfg.order = LOWP_ORDER_RECURSIVE;
          snprintf(what, sizeof what, "acc %s %s, prod %s %s, %d-bit data", cfg.acc->name,
                   mode_name(cfg.acc_rnd), cfg.prod->name, mode_name(cfg.prod_rnd),
                   iw ? 8 : 11);
          compare(what, &cfg, 5, 37, 160, wide, 0, LOWP_ACCFAST_RO32);
          compare(what, &cfg, 5, 37, 160, wide, 2, LOWP_ACCFAST_RO32); /* inf, NaN, max in C */
          compare(what, &cfg, 5, 37, 160, iw ? 5 : 3, 0, LOWP_ACCFAST_RO32); /* tiny sums */
          strcat(what, " cancel");
          compare_data(what, &cfg, 4, 19, 2, wide, 0, 1, LOWP_ACCFAST_RO32);
        }
}

/* fp16 and bf16 data of moderate magnitude (2^-6 to 2^3, both signs),
   products exact or rounded to the accumulator's format, every pair of
   modes, k = 300 (two panels of k): the sums stay far from overflow and
   are inexact at most steps, where the adversarial data above, whose fp16
   sums overflow within a few steps, leave the last rounding of most steps
   untested (AVX2: ra_loop16 with fp16 products, split bf16 products) */
static void check_moderate(void) {
  static const lowp_rounding_t modes[] = {LOWP_RND_NE, LOWP_RND_TZ, LOWP_RND_UP, LOWP_RND_DN};
  const lowp_format_t *fmts[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16};
  enum { M = 5, N = 37, K = 300 };
  static double a[M * K], b[K * N], c0[M * N];
  lowp_gemm_acc_cfg_t cfg;
  char what[120];
  size_t f, e, ia, ip;
  for (f = 0; f < 2; f++) {
    const double sig = ldexp(1.0, fmts[f]->precision - 1);
    for (e = 0; e < M * K + K * N; e++) {
      uint64_t r = next();
      double v = ldexp(1.0 + (double)(r % (uint64_t)sig) / sig, (int)((r >> 32) % 10) - 6);
      if ((r >> 48) & 1) v = -v;
      if (e < M * K) a[e] = v;
      else b[e - M * K] = v;
    }
    for (e = 0; e < M * N; e++) c0[e] = (e % 3) ? 0.0 : -0.0;
    for (ia = 0; ia < 4; ia++)
      for (ip = 0; ip < 5; ip++) { /* ip 4: exact products */
        memset(&cfg, 0, sizeof cfg);
        cfg.acc = fmts[f], cfg.acc_rnd = modes[ia];
        cfg.prod = ip < 4 ? fmts[f] : NULL, cfg.prod_rnd = modes[ip % 4];
        cfg.order = LOWP_ORDER_RECURSIVE;
        snprintf(what, sizeof what, "moderate %s acc %s, prod %s", fmts[f]->name,
                 mode_name(modes[ia]), ip < 4 ? mode_name(modes[ip]) : "exact");
        check_data(what, &cfg, a, b, c0, M, N, K, LOWP_ACCFAST_RO32);
      }
  }
}

/* every product of two bf16 significands, both signs, rounded to bf16 in
   each mode (k = 1 on a zero addend: the output is the rounded product);
   wide9: one more row of 9 significant bits (bf16 data no longer, so the
   rne products are rounded on the bits, not split) */
static void check_bf16_products(int wide9) {
  static const lowp_rounding_t modes[] = {LOWP_RND_NE, LOWP_RND_TZ, LOWP_RND_UP, LOWP_RND_DN};
  enum { N = 256 };
  static double a[N + 1], b[N], c0[(N + 1) * N];
  lowp_gemm_acc_cfg_t cfg;
  char what[80];
  size_t i, im, m = N + (wide9 != 0);
  for (i = 0; i < N; i++) {
    a[i] = ldexp((i % 2 ? -1.0 : 1.0) * (128.0 + (double)(i / 2)), -10);
    b[i] = ldexp((i >= N / 2 ? -1.0 : 1.0) * (128.0 + (double)(i % (N / 2))), 3);
  }
  a[N] = ldexp(257.0, -9);
  for (i = 0; i < m * N; i++) c0[i] = (i % 3) ? 0.0 : -0.0;
  for (im = 0; im < 4; im++) {
    memset(&cfg, 0, sizeof cfg);
    cfg.acc = cfg.prod = &LOWP_FMT_BF16;
    cfg.acc_rnd = LOWP_RND_NE, cfg.prod_rnd = modes[im];
    cfg.order = LOWP_ORDER_RECURSIVE;
    snprintf(what, sizeof what, "every bf16 product%s, %s", wide9 ? " (and a 9-bit row)" : "",
             mode_name(modes[im]));
    check_data(what, &cfg, a, b, c0, m, N, 1, LOWP_ACCFAST_RO32);
  }
}

/* Where rounding the sum once in binary32 (or 64) and then to acc would be
   wrong: a product rounded to fp16 (fp32) that lies on a bf16 midpoint
   (1 + 2^-8) plus a tiny bf16 addend (+-2^-30, +-2^-70) is, in binary32
   (64), the midpoint itself (a tie for bf16); the sum rounded once is
   1 + 2^-7 for the positive addend and 1 for the negative one (the fast
   kernels round to odd here: products wider than acc). wide: fp32 products
   on binary32 data (one entry of 21 bits: the RO64 kernel) */
static void check_double_rounding(int wide) {
  enum { N = 32 };
  double a[1], b[N], c0[N], ref[N], tiny = wide ? 0x1p-70 : 0x1p-30;
  lowp_gemm_acc_cfg_t cfg;
  size_t j;
  memset(&cfg, 0, sizeof cfg);
  cfg.acc = &LOWP_FMT_BF16, cfg.prod = wide ? &LOWP_FMT_FP32 : &LOWP_FMT_FP16;
  cfg.order = LOWP_ORDER_RECURSIVE;
  a[0] = 1.0 + 0x1p-8;
  for (j = 0; j < N; j++) b[j] = 1.0, c0[j] = (j % 2) ? -tiny : tiny;
  if (wide) b[N - 1] = 1.0 + 0x1p-20;
  memcpy(ref, c0, sizeof ref);
  lowp_test_check(lowp_gemm_acc_scalar(ref, a, b, 1, N, 1, &cfg) == LOWP_OK &&
                      ref[0] == 1.0 + 0x1p-7 && ref[1] == 1.0,
                  "bf16 midpoint product: the reference's sums %a, %a", ref[0], ref[1]);
  check_data(wide ? "bf16 acc, fp32 product on a bf16 midpoint"
                  : "bf16 acc, fp16 product on a bf16 midpoint",
             &cfg, a, b, c0, 1, N, 1, wide ? LOWP_ACCFAST_RO64 : LOWP_ACCFAST_RO32);
}

/* the kind on one-value inputs at the RO32 data's edges (input_class and
   its branch-free all_ro32): RO32 exactly when the value is zero or of <=
   12 significant bits in [2^-60, 2^50], RO64 for other binary32 values,
   infinities and NaNs, none for values binary32 lacks; the definition
   below, by frexp, shares nothing with the kernel's bit tests */
static void check_data_class(void) {
  static const double edge[] = {0x1p-60, 0x1p50, 0x1.ffep49, 0x1.ffep-60, 0x1.ffp-61, 0x1p-61,
                                0x1.002p50, 0x1p51, 0x1.001p0, 0x1.0008p0, 0x1.ffep0, 0x1.fffp0,
                                0x1p-126, 0x1p-149, 0x1p127, 0x1.fffffep127, 0x1.000002p0,
                                0x1.0000001p0, 1e300, 0x1p-1074, 3.0, 0.1};
  lowp_gemm_acc_cfg_t cfg;
  size_t e, sg;
  memset(&cfg, 0, sizeof cfg);
  cfg.acc = &LOWP_FMT_FP16;
  cfg.order = LOWP_ORDER_RECURSIVE;
  for (e = 0; e < sizeof edge / sizeof *edge + 3; e++)
    for (sg = 0; sg < 2; sg++) {
      double v = e < sizeof edge / sizeof *edge ? edge[e] : e == sizeof edge / sizeof *edge ? 0.0
                 : e == sizeof edge / sizeof *edge + 1 ? INFINITY : NAN, one = 1.0, m;
      int ex;
      lowp_accfast_kind_t want, kd;
      if (sg) v = -v;
      m = frexp(fabs(v), &ex);
      if (v == 0 || (fabs(v) >= 0x1p-60 && fabs(v) <= 0x1p50 && ldexp(m, 12) == floor(ldexp(m, 12))))
        want = LOWP_ACCFAST_RO32;
      else if (v != v || (double)(float)v == v) want = LOWP_ACCFAST_RO64;
      else want = LOWP_ACCFAST_NONE;
      kd = lowp_gemm_acc_fast_kind(&v, &one, 1, 1, 1, &cfg);
      lowp_test_check(kd == want, "data class of %a: kind %d, want %d", v, (int)kd, (int)want);
      kd = lowp_gemm_acc_fast_kind(&one, &v, 1, 1, 1, &cfg);
      lowp_test_check(kd == want, "data class of %a in b: kind %d, want %d", v, (int)kd, (int)want);
    }
}

int main(void) {
  static const lowp_rounding_t modes[] = {LOWP_RND_NE, LOWP_RND_TZ, LOWP_RND_UP, LOWP_RND_DN};
  const lowp_format_t *accs[] = {&LOWP_FMT_FP32, &LOWP_FMT_TF32, &LOWP_FMT_FP16,
                                 &LOWP_FMT_BF16, &LOWP_FMT_E5M2};
  const lowp_format_t *prods[] = {NULL, &LOWP_FMT_FP32, &LOWP_FMT_FP16, &LOWP_FMT_BF16};
  lowp_gemm_acc_cfg_t cfg;
  char what[160];
  size_t ia, ip, im;
  lowp_test_start("tgemm_acc_fast");
  rng_state = lowp_test_seed();
  for (ia = 0; ia < sizeof accs / sizeof *accs; ia++)
    for (im = 0; im < 4; im++) check_negzero(accs[ia], modes[im]);
  check_data_class();
  check_sticky();
  check_sticky_steps();
  check_sticky_sub();
  check_rounded_prods();
  check_moderate();
  check_v8_bounds();
  check_bf16_products(0);
  check_bf16_products(1);
  check_double_rounding(0);
  check_double_rounding(1);

  /* every accumulator x product format x mode, ties/subnormals/overflow/NaN */
  for (ia = 0; ia < sizeof accs / sizeof *accs; ia++)
    for (ip = 0; ip < sizeof prods / sizeof *prods; ip++)
      for (im = 0; im < 4; im++) {
        lowp_accfast_kind_t want = LOWP_ACCFAST_RO64;
        memset(&cfg, 0, sizeof cfg);
        cfg.acc = accs[ia];
        cfg.acc_rnd = modes[im];
        cfg.prod = prods[ip];
        cfg.prod_rnd = modes[(im + ip) % 4];
        /* fp32: binary32 arithmetic in rne, and in the directed modes where
           AVX-512 rounds in the instruction (products in the same mode) */
        if (cfg.acc == &LOWP_FMT_FP32 &&
            (cfg.acc_rnd == LOWP_RND_NE || strcmp(lowp_gemm_acc_fast_isa(), "generic")) &&
            (!cfg.prod || (cfg.prod == &LOWP_FMT_FP32 && cfg.prod_rnd == cfg.acc_rnd)))
          want = LOWP_ACCFAST_FMA32;
        snprintf(what, sizeof what, "acc %s %s, prod %s %s", cfg.acc->name,
                 mode_name(cfg.acc_rnd), cfg.prod ? cfg.prod->name : "exact",
                 mode_name(cfg.prod_rnd));
        compare(what, &cfg, 5, 37, 300, 0, 1, want);
        strcat(what, " cancel");
        compare_data(what, &cfg, 4, 19, 2, 0, 0, 1, want);
        /* narrow data: the binary32-lane kernel where acc and prod fit it */
        if (cfg.acc->precision <= 22 && (!cfg.prod || cfg.prod->precision <= 22)) {
          /* (tf32, emax 127 with p = 11, is too wide for RO32's rounding) */
          lowp_accfast_kind_t w32 = cfg.acc == &LOWP_FMT_TF32 ? want : LOWP_ACCFAST_RO32;
          snprintf(what, sizeof what, "acc %s %s, prod %s %s narrow", cfg.acc->name,
                   mode_name(cfg.acc_rnd), cfg.prod ? cfg.prod->name : "exact",
                   mode_name(cfg.prod_rnd));
          compare(what, &cfg, 5, 37, 300, 2, 0, w32);
          compare(what, &cfg, 5, 37, 300, 2, 2, w32); /* inf, NaN, max in C */
          compare(what, &cfg, 5, 37, 300, 3, 0, w32); /* tiny sums */
          strcat(what, " cancel");
          compare_data(what, &cfg, 4, 19, 2, 2, 0, 1, w32);
        }
      }
  /* fp32 with products rounded to fp32 in the accumulator's mode */
  for (im = 0; im < 4; im++) {
    /* directed modes: AVX-512's rounding in the instruction or AVX2's MXCSR */
    int dirfast = strcmp(lowp_gemm_acc_fast_isa(), "generic") != 0;
    memset(&cfg, 0, sizeof cfg);
    cfg.acc = cfg.prod = &LOWP_FMT_FP32;
    cfg.acc_rnd = cfg.prod_rnd = modes[im];
    snprintf(what, sizeof what, "fp32 prod and acc %s", mode_name(modes[im]));
    compare(what, &cfg, 5, 37, 300, 0, 1,
            (dirfast || im == 0) ? LOWP_ACCFAST_FMA32 : LOWP_ACCFAST_RO64);
    strcat(what, " cancel");
    compare_data(what, &cfg, 4, 19, 2, 0, 0, 1,
                 (dirfast || im == 0) ? LOWP_ACCFAST_FMA32 : LOWP_ACCFAST_RO64);
  }
  /* fp32 rne with products rounded to fp32 rne: the plain binary32 kernel */
  memset(&cfg, 0, sizeof cfg);
  cfg.acc = &LOWP_FMT_FP32;
  cfg.prod = &LOWP_FMT_FP32;
  compare("fp32 add32", &cfg, 5, 37, 300, 0, 1, LOWP_ACCFAST_FMA32);
  /* panels and row groups of the tiling, edges included */
  cfg.prod = NULL;
  compare("fp32 fma32 tiles", &cfg, 131, 133, 260, 0, 1, LOWP_ACCFAST_FMA32);
  cfg.acc = &LOWP_FMT_FP16;
  compare("fp16 ro64 tiles", &cfg, 131, 133, 40, 0, 1, LOWP_ACCFAST_RO64);
  compare("fp16 ro32 tiles", &cfg, 131, 133, 40, 2, 0, LOWP_ACCFAST_RO32);
  /* fp64 accumulator on binary64 data: fma() and a*b + s */
  cfg.acc = &LOWP_FMT_FP64;
  compare("fp64 fma64", &cfg, 6, 40, 300, 1, 1, LOWP_ACCFAST_FMA64);
  cfg.prod = &LOWP_FMT_FP64;
  compare("fp64 add64", &cfg, 6, 40, 300, 1, 1, LOWP_ACCFAST_FMA64);
  /* data off the binary32 grid: no fast kernel for narrow accumulators */
  cfg.acc = &LOWP_FMT_FP16;
  cfg.prod = NULL;
  compare("fp16 on fp64 data", &cfg, 3, 5, 20, 1, 0, LOWP_ACCFAST_NONE);
  /* k = 0: the addend alone, NaN signs by the policy (-NaN kept or made +) */
  {
    lowp_policy_t pol = {0};
    cfg.acc = &LOWP_FMT_FP16;
    cfg.prod = NULL;
    compare("fp16 k=0", &cfg, 7, 40, 0, 2, 1, LOWP_ACCFAST_RO32);
    pol.nan_sign = LOWP_NANSIGN_POSITIVE;
    cfg.pol = &pol;
    compare("fp16 k=0 nan positive", &cfg, 7, 40, 0, 2, 1, LOWP_ACCFAST_RO32);
    compare("fp16 nan positive", &cfg, 7, 40, 30, 0, 1, LOWP_ACCFAST_RO64);
    cfg.pol = NULL;
  }
  /* what the fast kernels leave to the reference */
  cfg.acc_rnd = LOWP_RND_NA;
  compare("fp16 rna", &cfg, 3, 5, 20, 0, 0, LOWP_ACCFAST_NONE);
  cfg.acc_rnd = LOWP_RND_NE;
  cfg.acc = &LOWP_FMT_E4M3;
  compare("e4m3 (no inf)", &cfg, 3, 5, 20, 0, 0, LOWP_ACCFAST_NONE);
  {
    lowp_policy_t pol = {0};
    pol.ftz = 1;
    cfg.acc = &LOWP_FMT_FP32;
    cfg.pol = &pol;
    compare("fp32 ftz", &cfg, 3, 5, 20, 0, 0, LOWP_ACCFAST_NONE);
  }
  return lowp_test_end();
}
