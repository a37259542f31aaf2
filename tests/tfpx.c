/* tfpx -- exception traces: hand cases, MPFR's flags, the CPU's IEEE flags, a planted corpus, clean data */

/*
 * Layers (docs/style.md B10):
 *   1. hand cases of lowp_fpx_classify, each with its reason;
 *   2. MPFR's exception flags on random operations per format and mode
 *      (mpfr_set_emin/emax at the format's range, mpfr_subnormalize; the
 *      IEEE underflow flag is MPFR's underflow flag of an inexact result);
 *   3. the CPU's own flags (fetestexcept) on native binary32/binary64
 *      replays of the same operations;
 *   4. a planted corpus (every format, >= 40 cases each): the kind and the
 *      first index must be found, every time;
 *   5. clean data: no event at all;
 *   6. traced kernels give the untraced bits, and the same trace for any
 *      thread count.
 * LOWP_FPX_COUNT sets the random operations per format (default 20000; the
 * long label runs 10^6, tests/long/tfpx_long.c).
 */

#include <fenv.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cpu/gemm_acc.h"
#include "cpu/gemm_tc.h"
#include "cpu/qdq.h"
#include "format/format.h"
#include "measure/fpx.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

static long count_per_format(void) {
  const char *e = getenv("LOWP_FPX_COUNT");
  long n = e ? strtol(e, NULL, 10) : 0;
  return n > 0 ? n : 20000;
}

/* ------------------------------------------------------ 1. hand cases */

static void check_kind(const char *what, const lowp_format_t *f, lowp_rounding_t rnd,
                       const lowp_policy_t *pol, double x, unsigned want) {
  double y;
  unsigned got;
  lowp_round_f64(&y, x, f, pol, rnd);
  got = lowp_fpx_classify(f, rnd, x, 0, y, isnan(x) ? LOWP_FPX_IN_NAN : 0);
  lowp_test_check(got == want, "%s: %s %a -> %a: kinds 0x%x, want 0x%x", what, f->name, x, y,
                  got, want);
}

static void hand_cases(void) {
  lowp_policy_t sat = {0};
  sat.overflow = LOWP_OVF_SAT;
  /* fp16: 65519 rounds (rne) to 65504, no overflow; 65520 is the midpoint
     above xmax and goes to 2^16 (even): overflow (IEEE 754 7.4) */
  check_kind("fp16 below midpoint", &LOWP_FMT_FP16, LOWP_RND_NE, NULL, 65519, 0);
  check_kind("fp16 midpoint", &LOWP_FMT_FP16, LOWP_RND_NE, NULL, 65520,
             LOWP_FPX_BIT(LOWP_FPX_OVF_INF));
  /* rtz: 70000 -> 65504 and IEEE overflow is signalled (the unbounded
     rounding, 69632, exceeds xmax): a saturation */
  check_kind("fp16 rtz", &LOWP_FMT_FP16, LOWP_RND_TZ, NULL, 70000,
             LOWP_FPX_BIT(LOWP_FPX_SATURATE));
  check_kind("fp16 rtz at top", &LOWP_FMT_FP16, LOWP_RND_TZ, NULL, 65535, 0);
  /* e4m3 (OCP fn): xmax 448 = 1.110b 2^8 is even; 464 is the midpoint to
     480 (the NaN pattern's value): a tie goes to 448, above it overflows to
     NaN without saturation, to 448 with it */
  check_kind("e4m3 tie", &LOWP_FMT_E4M3, LOWP_RND_NE, NULL, 464, 0);
  check_kind("e4m3 nosat", &LOWP_FMT_E4M3, LOWP_RND_NE, NULL, 465,
             LOWP_FPX_BIT(LOWP_FPX_OVF_NAN));
  check_kind("e4m3 sat", &LOWP_FMT_E4M3, LOWP_RND_NE, &sat, 465,
             LOWP_FPX_BIT(LOWP_FPX_SATURATE));
  check_kind("e4m3 inf", &LOWP_FMT_E4M3, LOWP_RND_NE, NULL, INFINITY,
             LOWP_FPX_BIT(LOWP_FPX_OVF_NAN));
  check_kind("fp16 inf stays", &LOWP_FMT_FP16, LOWP_RND_NE, NULL, -INFINITY, 0);
  check_kind("nan", &LOWP_FMT_BF16, LOWP_RND_NE, NULL, NAN, LOWP_FPX_BIT(LOWP_FPX_NAN_PROP));
  /* fp4 has no NaN and no inf: overflow saturates, NaN maps to xmax */
  check_kind("e2m1 ovf", &LOWP_FMT_E2M1, LOWP_RND_NE, NULL, 100,
             LOWP_FPX_BIT(LOWP_FPX_SATURATE));
  /* underflow: fp16 min subnormal 2^-24. 1e-6 is tiny and inexact -> a
     subnormal; 2^-26 rounds to 0; 2^-20 is an exact subnormal: nothing
     (IEEE 754 7.5: underflow is signalled when tiny and inexact) */
  check_kind("fp16 unf sub", &LOWP_FMT_FP16, LOWP_RND_NE, NULL, 1e-6,
             LOWP_FPX_BIT(LOWP_FPX_UNF_SUB));
  check_kind("fp16 unf zero", &LOWP_FMT_FP16, LOWP_RND_NE, NULL, 0x1p-26,
             LOWP_FPX_BIT(LOWP_FPX_UNF_ZERO));
  check_kind("fp16 exact sub", &LOWP_FMT_FP16, LOWP_RND_NE, NULL, 0x1p-20, 0);
  check_kind("zero", &LOWP_FMT_FP16, LOWP_RND_NE, NULL, 0.0, 0);
  /* tininess after rounding: fp16 xmin 2^-14, p 11: the 11-bit value below
     it is 2^-14 - 2^-25; 2^-14 - 2^-27 rounds (unbounded) to 2^-14: not
     tiny, so no underflow although the result is xmin from below */
  check_kind("fp16 not tiny after", &LOWP_FMT_FP16, LOWP_RND_NE, NULL, 0x1p-14 - 0x1p-27, 0);
  check_kind("fp16 tiny after", &LOWP_FMT_FP16, LOWP_RND_NE, NULL, 0x1p-14 - 0x1p-25 - 0x1p-27,
             LOWP_FPX_BIT(LOWP_FPX_UNF_SUB));
  /* the kind names and groups */
  lowp_test_check(lowp_fpx_mask_parse("overflow") == LOWP_FPX_OVERFLOW, "group overflow");
  lowp_test_check(lowp_fpx_mask_parse("invalid") == LOWP_FPX_BIT(LOWP_FPX_INVALID),
                  "name invalid");
  lowp_test_check(lowp_fpx_mask_parse("bogus") == 0, "unknown name");
}

/* ------------------------------------------------ random operands */

/* a random binary64 value whose exponent is uniform in [lo, hi], full
   random significand, random sign */
static double draw(uint64_t seed, uint64_t i, uint32_t s, int lo, int hi) {
  uint64_t r = lowp_rng_u64(seed, i, s);
  int e = lo + (int)(lowp_rng_u32(seed, i, s + 100) % (uint32_t)(hi - lo + 1));
  double m = 1.0 + (double)(r >> 12) * 0x1p-52;
  return ldexp((r & 1) ? -m : m, e);
}

/* operands of one random operation near f's range: the result's exponent
   is uniform from below the smallest subnormal to above xmax */
static void operands(double *a, double *b, int op, const lowp_format_t *f, uint64_t seed,
                     uint64_t i) {
  int lo = f->emin - f->precision - 3, hi = f->emax + 2;
  int te = lo + (int)(lowp_rng_u32(seed, i, 7) % (uint32_t)(hi - lo + 1));
  int sh = (int)(lowp_rng_u32(seed, i, 8) % 9) - 4;
  if (op == 0) { /* add: two terms near te (cancellation when signs differ) */
    *a = draw(seed, i, 1, te, te);
    *b = draw(seed, i, 2, te + sh / 2, te + sh / 2);
  } else if (op == 1) { /* mul: exponents summing to te */
    *a = draw(seed, i, 1, sh, sh);
    *b = draw(seed, i, 2, te - sh, te - sh);
  } else { /* div */
    *a = draw(seed, i, 1, te + sh, te + sh);
    *b = (lowp_rng_u32(seed, i, 9) % 64 == 0) ? 0.0 : draw(seed, i, 2, sh, sh);
  }
  if (lowp_rng_u32(seed, i, 10) % 2) { /* half the time: values of f */
    lowp_round_f64(a, *a, f, NULL, LOWP_RND_NE);
    lowp_round_f64(b, *b, f, NULL, LOWP_RND_NE);
    if (!isfinite(*a)) *a = lowp_format_xmax(f);
    if (!isfinite(*b)) *b = lowp_format_xmax(f);
  }
}

/* lowp's kinds for one traced operation */
static unsigned lowp_op(double *y, int op, double a, double b, const lowp_format_t *f,
                        lowp_rounding_t rnd) {
  lowp_fpx_trace_t t;
  lowp_fpx_init(&t);
  if (op == 2) lowp_fpx_div(&t, NULL, y, a, b, f, NULL, rnd);
  else lowp_fpx_op2(&t, NULL, op ? LOWP_FPX_OP_MUL : LOWP_FPX_OP_ADD, y, a, b, f, NULL, rnd, 0);
  return lowp_fpx_kinds(&t);
}

/* ----------------------------------------------------- 2. MPFR's flags */

static mpfr_rnd_t mpfr_mode(lowp_rounding_t r) {
  switch (r) {
  case LOWP_RND_TZ: return MPFR_RNDZ;
  case LOWP_RND_UP: return MPFR_RNDU;
  case LOWP_RND_DN: return MPFR_RNDD;
  default: return MPFR_RNDN;
  }
}

/* MPFR's flags for round(a op b) in f: 1 overflow, 2 underflow (of an
   inexact result), 4 divide-by-zero, 8 NaN */
static unsigned mpfr_flags(int op, double a, double b, const lowp_format_t *f,
                           lowp_rounding_t rnd) {
  mpfr_t x, y, z;
  mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_rnd_t r = mpfr_mode(rnd);
  unsigned fl = 0;
  int t;
  mpfr_inits2(2200, x, y, (mpfr_ptr)0);
  mpfr_init2(z, f->precision);
  mpfr_set_d(x, a, MPFR_RNDN);
  mpfr_set_d(y, b, MPFR_RNDN);
  /* MPFR's exponents are those of 0.1b: the format's smallest subnormal
     2^(emin - p + 1) has MPFR exponent emin - p + 2; xmax < 2^(emax + 1) */
  mpfr_set_emin(f->emin - f->precision + 2);
  mpfr_set_emax(f->emax + 1);
  mpfr_clear_flags();
  if (op == 0) t = mpfr_add(z, x, y, r);
  else if (op == 1) t = mpfr_mul(z, x, y, r);
  else t = mpfr_div(z, x, y, r);
  t = mpfr_subnormalize(z, t, r);
  if (mpfr_overflow_p()) fl |= 1;
  if (mpfr_underflow_p() && t != 0) fl |= 2;
  if (mpfr_divby0_p()) fl |= 4;
  if (mpfr_nanflag_p()) fl |= 8;
  /* what MPFR, which has infinities, cannot know: an infinite result in a
     format without infinity becomes NaN or xmax, an overflow of that
     format (lowp reports the conversion: overflow_nan or saturation) */
  if (mpfr_inf_p(z) && f->inf == LOWP_INF_NONE) fl |= 1;
  /* formats whose top significands are NaN (e4m3): a rounded value beyond
     xmax overflowed too */
  if (mpfr_number_p(z) && mpfr_cmpabs(z, (mpfr_set_d(x, lowp_format_xmax(f), MPFR_RNDN), x)) > 0)
    fl |= 1;
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  mpfr_clears(x, y, z, (mpfr_ptr)0);
  return fl;
}

static unsigned groups(unsigned m) {
  unsigned g = 0;
  if (m & LOWP_FPX_OVERFLOW) g |= 1;
  if (m & LOWP_FPX_UNDERFLOW) g |= 2;
  if (m & LOWP_FPX_BIT(LOWP_FPX_DIVZERO)) g |= 4;
  if (m & LOWP_FPX_BIT(LOWP_FPX_INVALID)) g |= 8;
  return g;
}

static void mpfr_sweep(long n) {
  static const lowp_rounding_t modes[] = {LOWP_RND_NE, LOWP_RND_TZ, LOWP_RND_UP, LOWP_RND_DN};
  size_t fi;
  uint64_t seed = lowp_test_seed();
  for (fi = 0; fi < lowp_format_count(); fi++) {
    const lowp_format_t *f = lowp_format_at(fi);
    long i, bad = 0, cnt[4] = {0}, mcnt[4] = {0};
    /* MPFR's subnormalize emulates gradual underflow of a signed format
       with zero; e8m0 (unsigned, no zero, no subnormals) is a scale format,
       tested through the scale kind */
    if (!f->subnormals || !f->has_zero || !f->has_sign) continue;
    for (i = 0; i < n; i++) {
      int op = (int)(i % 3);
      lowp_rounding_t rnd = modes[(i / 3) % 4];
      double a, b, y;
      unsigned g, m;
      operands(&a, &b, op, f, seed + fi, (uint64_t)i);
      /* negative zero operands aside, the fnuz formats have no -0: MPFR's
         signed zero is not theirs; both sides see the same values */
      g = groups(lowp_op(&y, op, a, b, f, rnd));
      m = mpfr_flags(op, a, b, f, rnd);
      if (g & 1) cnt[0]++;
      if (g & 2) cnt[1]++;
      if (g & 4) cnt[2]++;
      if (g & 8) cnt[3]++;
      if (m & 1) mcnt[0]++;
      if (m & 2) mcnt[1]++;
      if (m & 4) mcnt[2]++;
      if (m & 8) mcnt[3]++;
      if (g != m && bad++ < 3)
        lowp_test_check(0, "mpfr flags %s %s op %d: %a, %a: lowp 0x%x mpfr 0x%x", f->name,
                        lowp_rounding_name(rnd), op, a, b, g, m);
    }
    lowp_test_check(bad == 0 && cnt[0] > 0 && cnt[1] > 0,
                    "mpfr flags %s: %ld ops, overflow %ld/%ld underflow %ld/%ld divzero "
                    "%ld/%ld invalid %ld/%ld (lowp/mpfr), %ld differ",
                    f->name, n, cnt[0], mcnt[0], cnt[1], mcnt[1], cnt[2], mcnt[2], cnt[3],
                    mcnt[3], bad);
    printf("  mpfr %-9s %ld ops: overflow %ld underflow %ld divzero %ld invalid %ld (equal)\n",
           f->name, n, cnt[0], cnt[1], cnt[2], cnt[3]);
  }
}

/* ------------------------------------------------ 3. the CPU's flags */

static unsigned cpu_flags(void) {
  unsigned g = 0;
  if (fetestexcept(FE_OVERFLOW)) g |= 1;
  if (fetestexcept(FE_UNDERFLOW)) g |= 2;
  if (fetestexcept(FE_DIVBYZERO)) g |= 4;
  if (fetestexcept(FE_INVALID)) g |= 8;
  return g;
}

static void native_sweep(long n) {
  uint64_t seed = lowp_test_seed() + 99;
  int w;
  for (w = 0; w < 2; w++) {
    const lowp_format_t *f = w ? &LOWP_FMT_FP64 : &LOWP_FMT_FP32;
    long i, bad = 0, cnt[4] = {0};
    for (i = 0; i < n; i++) {
      int op = (int)(i % 3);
      double a, b, y, c;
      unsigned g, hw;
      operands(&a, &b, op, f, seed + (uint64_t)w, (uint64_t)i);
      if (i % 97 == 0) { a = INFINITY; b = (i % 2) ? -INFINITY : 0.0; } /* inf-inf, inf*0 */
      if (!w) { a = (float)a; b = (float)b; }
      g = groups(lowp_op(&y, op, a, b, f, LOWP_RND_NE));
      feclearexcept(FE_ALL_EXCEPT);
      if (w) {
        volatile double va = a, vb = b, vc;
        vc = op == 0 ? va + vb : op == 1 ? va * vb : va / vb;
        c = vc;
      } else {
        volatile float va = (float)a, vb = (float)b, vc;
        vc = op == 0 ? va + vb : op == 1 ? va * vb : va / vb;
        c = vc;
      }
      hw = cpu_flags();
      if (hw & 1) cnt[0]++;
      if (hw & 2) cnt[1]++;
      if (hw & 4) cnt[2]++;
      if (hw & 8) cnt[3]++;
      if ((g != hw || !((isnan(c) && isnan(y)) || c == y)) && bad++ < 3)
        lowp_test_check(0, "cpu flags %s op %d: %a, %a: lowp 0x%x (%a) cpu 0x%x (%a)", f->name,
                        op, a, b, g, y, hw, c);
    }
    lowp_test_check(bad == 0 && cnt[0] > 0 && cnt[1] > 0 && cnt[2] > 0 && cnt[3] > 0,
                    "cpu flags %s: %ld ops, %ld differ", f->name, n, bad);
    printf("  cpu  %-9s %ld ops: overflow %ld underflow %ld divzero %ld invalid %ld (equal)\n",
           f->name, n, cnt[0], cnt[1], cnt[2], cnt[3]);
  }
}

/* ------------------------------------------------ 4. planted corpus */

/* what an overflow becomes in f under the IEEE policy (rne) */
static lowp_fpx_kind_t ovf_kind(const lowp_format_t *f) {
  if (f->inf == LOWP_INF_IEEE) return LOWP_FPX_OVF_INF;
  return f->nan != LOWP_NAN_NONE ? LOWP_FPX_OVF_NAN : LOWP_FPX_SATURATE;
}

typedef struct {
  long cases, found;
} tally_t;

static void expect(tally_t *ty, const char *what, const lowp_format_t *f,
                   const lowp_fpx_trace_t *t, lowp_fpx_kind_t k, int64_t i, int64_t j,
                   int64_t kk) {
  const lowp_fpx_event_t *e = &t->first[k];
  int ok = t->count[k] > 0 && e->i == i && e->j == j && e->k == kk;
  ty->cases++;
  ty->found += ok;
  lowp_test_check(ok, "planted %s in %s: %s count %llu, first (%lld,%lld,%lld), want (%lld,%lld,%lld)",
                  what, f->name, lowp_fpx_kind_name(k), (unsigned long long)t->count[k],
                  (long long)e->i, (long long)e->j, (long long)e->k, (long long)i, (long long)j,
                  (long long)kk);
}

/* a clean tensor of n values of f, normal and well inside the range */
static void clean_values(double *x, size_t n, const lowp_format_t *f, uint64_t seed) {
  size_t i;
  int lo = f->emin + 1, hi = f->emax - 1;
  if (hi < lo) hi = lo;
  for (i = 0; i < n; i++) {
    double v = draw(seed, i, 3, lo, hi);
    if (!f->has_sign) v = fabs(v);
    lowp_round_f64(&x[i], v, f, NULL, LOWP_RND_NE);
  }
}

/* casts: a tensor scan with one planted value at pos */
static void planted_scan(tally_t *ty, const lowp_format_t *f, const char *what, double v,
                         lowp_fpx_kind_t k, size_t pos) {
  double x[64];
  lowp_fpx_scan_t *s = malloc(sizeof *s);
  clean_values(x, 64, f, lowp_test_seed() + pos);
  x[pos] = v;
  x[(pos + 7) % 64 > pos ? (pos + 7) % 64 : 63] = v; /* a later second occurrence */
  lowp_fpx_scan(s, x, 64, f, NULL, LOWP_RND_NE);
  expect(ty, what, f, &s->trace, k, (int64_t)pos, -1, -1);
  lowp_test_check(s->first_bad == (int64_t)pos, "scan %s %s: first_bad %lld want %zu", what,
                  f->name, (long long)s->first_bad, pos);
  free(s);
}

/* an accumulation in f (products exact): row i of A holds the plant */
static void planted_acc(tally_t *ty, const lowp_format_t *f, size_t pos) {
  enum { M = 3, N = 2, K = 8 };
  double a[M * K], b[K * N], c[M * N] = {0};
  size_t i = pos % M, k1 = pos % (K - 1), q;
  lowp_gemm_acc_cfg_t g;
  lowp_fpx_trace_t t;
  double big = lowp_format_xmax(f) * 0.75;
  /* the clean terms: 4 xmin where K of them stay far below xmax (zero in
     the fp6/fp4 formats, whose range is 8 and less) */
  double fill = 32 * K * lowp_format_xmin(f) < lowp_format_xmax(f) ? 4 * lowp_format_xmin(f) : 0.0;
  memset(&g, 0, sizeof g);
  g.acc = f;
  g.acc_rnd = LOWP_RND_NE;
  for (q = 0; q < M * K; q++) a[q] = fill;
  for (q = 0; q < K * N; q++) b[q] = 1.0;
  /* (a) +inf then -inf: inf - inf where the format has infinities */
  a[i * K + k1] = INFINITY;
  a[i * K + k1 + 1] = -INFINITY;
  lowp_fpx_init(&t);
  lowp_gemm_acc_fpx(c, a, b, M, N, K, &g, &t);
  if (f->inf == LOWP_INF_IEEE) expect(ty, "inf - inf", f, &t, LOWP_FPX_INVALID, (int64_t)i, 0, (int64_t)k1 + 1);
  else expect(ty, "inf into acc", f, &t, ovf_kind(f), (int64_t)i, 0, (int64_t)k1);
  /* (b) two terms of 0.75 xmax: the partial sum overflows, inherently */
  for (q = 0; q < M * K; q++) a[q] = fill;
  for (q = 0; q < M * N; q++) c[q] = 0;
  a[i * K + k1] = big;
  a[i * K + k1 + 1] = big;
  lowp_fpx_init(&t);
  lowp_gemm_acc_fpx(c, a, b, M, N, K, &g, &t);
  expect(ty, "acc overflow", f, &t, ovf_kind(f), (int64_t)i, 0, (int64_t)k1 + 1);
  lowp_test_check(t.first[ovf_kind(f)].inherent == 1, "acc overflow in %s is inherent", f->name);
}

/* a vector of 32 divisions a[i] / b[i] (clean: 1 / 2) with (num, den)
   planted at pos and pos + 3 */
static void planted_div(tally_t *ty, const lowp_format_t *f, const char *what, double num,
                        double den, lowp_fpx_kind_t k, size_t pos) {
  lowp_fpx_trace_t t;
  size_t i;
  lowp_fpx_init(&t);
  for (i = 0; i < 32; i++) {
    lowp_fpx_event_t w;
    double y;
    int at = i == pos || i == pos + 3;
    lowp_fpx_event_init(&w);
    w.seq = i;
    w.i = (int64_t)i;
    lowp_fpx_div(&t, &w, &y, at ? num : 1.0, at ? den : 2.0, f, NULL, LOWP_RND_NE);
  }
  expect(ty, what, f, &t, k, (int64_t)pos, -1, -1);
}

/* a plant for a cast is usable when it is a finite nonzero binary64 value
   that f does not hold (fp64 cannot be overflowed by a binary64 value) */
static int castable(double v, const lowp_format_t *f) {
  double y;
  lowp_round_f64(&y, v, f, NULL, LOWP_RND_NE);
  return isfinite(v) && v != 0 && y != v;
}

/* an MX block holding an infinity: the E8M0 scale is NaN */
static void planted_mx(tally_t *ty, const lowp_format_t *f, size_t pos) {
  enum { R = 4, C = 64, B = 32 };
  float x[R * C];
  size_t r = pos % R, c = (pos * 5) % C, q;
  lowp_fpx_trace_t t;
  for (q = 0; q < R * C; q++) x[q] = (float)(0.5 + (double)(q % 7) / 8);
  x[r * C + c] = INFINITY;
  lowp_fpx_init(&t);
  lowp_qdq_fpx(&t, x, R, C, f, LOWP_QS_MXBLOCK, B);
  expect(ty, "mx scale of inf", f, &t, LOWP_FPX_SCALE, (int64_t)r, (int64_t)(c / B * B), -1);
}

/* 0 x inf (or a NaN where the format has no inf) inside one tensor-core block */
static void planted_tc(tally_t *ty, const lowp_format_t *f, size_t pos) {
  enum { M = 2, N = 2, K = 64 };
  double a[M * K], b[K * N], c[M * N] = {0};
  lowp_gemm_tc_cfg_t cfg;
  lowp_fpx_trace_t t;
  size_t i = pos % M, j = pos % N, k = (pos * 7 + 3) % K, q;
  lowp_fpx_kind_t want = f->inf == LOWP_INF_IEEE ? LOWP_FPX_INVALID : LOWP_FPX_NAN_PROP;
  if (lowp_gemm_tc_config(&cfg, "h100", -1, f, &LOWP_FMT_FP32, NULL, 0) != LOWP_OK) return;
  for (q = 0; q < M * K; q++) a[q] = 1.0;
  for (q = 0; q < K * N; q++) b[q] = 0.5;
  /* 0 x inf touches output (i, j) only; a NaN in row i of A reaches the
     whole row, first at column 0 */
  if (f->inf == LOWP_INF_IEEE) { a[i * K + k] = 0.0; b[k * N + j] = INFINITY; }
  else { a[i * K + k] = NAN; j = 0; }
  lowp_fpx_init(&t);
  lowp_test_check(lowp_gemm_tc_fpx(c, a, b, M, N, K, &cfg, &t) == LOWP_OK, "tc fpx runs");
  expect(ty, "0 x inf in a block", f, &t, want, (int64_t)i, (int64_t)j, (int64_t)k);
}

static void planted_corpus(void) {
  size_t fi, pos;
  for (fi = 0; fi < lowp_format_count(); fi++) {
    const lowp_format_t *f = lowp_format_at(fi);
    tally_t ty = {0, 0};
    double xmin = lowp_format_xmin(f), xmins = lowp_format_xmins(f);
    for (pos = 0; pos < 8; pos++) {
      lowp_fpx_kind_t uz = f->has_zero ? LOWP_FPX_UNF_ZERO : LOWP_FPX_UNF_SUB;
      if (castable(4 * lowp_format_xmax(f), f))
        planted_scan(&ty, f, "overflow", 4 * lowp_format_xmax(f), ovf_kind(f), pos * 7);
      planted_scan(&ty, f, "nan", NAN, LOWP_FPX_NAN_PROP, pos * 5 + 1);
      /* loss scaling's underflow: a gradient scaled below half the smallest
         value becomes zero (e8m0 has no zero: it becomes xmin) */
      if (castable(xmins / 4, f)) planted_scan(&ty, f, "underflow to zero", xmins / 4, uz, pos * 3 + 2);
      if (f->subnormals && castable(1.25 * xmins, f))
        planted_scan(&ty, f, "underflow to subnormal", 1.25 * xmins, LOWP_FPX_UNF_SUB, pos * 6 + 3);
      if (f->inf == LOWP_INF_NONE && f->nan != LOWP_NAN_NONE)
        planted_scan(&ty, f, "inf to nan", INFINITY, LOWP_FPX_OVF_NAN, pos * 4);
      if (f->has_sign && f->has_zero) planted_acc(&ty, f, pos);
      planted_div(&ty, f, "x / 0", 1.0, 0.0, LOWP_FPX_DIVZERO, pos * 3);
      planted_div(&ty, f, "overflow of x / y", lowp_format_xmax(f), 0.25, ovf_kind(f), pos * 2 + 1);
      planted_div(&ty, f, "underflow of x / y", xmins, 8.0, uz, pos * 3 + 1);
      if (f->has_zero && f->emax <= 127) planted_mx(&ty, f, pos); /* MX element formats */
      if (f->precision <= 11 && lowp_format_width(f) >= 8 && f->has_sign) planted_tc(&ty, f, pos);
    }
    (void)xmin;
    lowp_test_check(ty.cases >= 40 && ty.found == ty.cases, "planted corpus %s: %ld of %ld found",
                    f->name, ty.found, ty.cases);
    printf("  planted %-9s %ld of %ld found (kind and first index)\n", f->name, ty.found, ty.cases);
  }
}

/* ------------------------------------------------------ 5. clean data */

static void clean_outputs(long n) {
  size_t fi;
  long total = 0, events = 0;
  double *x = malloc((size_t)n * sizeof *x);
  lowp_fpx_scan_t *s = malloc(sizeof *s);
  for (fi = 0; fi < lowp_format_count(); fi++) {
    const lowp_format_t *f = lowp_format_at(fi);
    int k;
    clean_values(x, (size_t)n, f, lowp_test_seed() + 1000 + fi);
    lowp_fpx_scan(s, x, (size_t)n, f, NULL, LOWP_RND_NE);
    total += n;
    for (k = 0; k < LOWP_FPX_NKINDS; k++) events += (long)s->trace.count[k];
  }
  lowp_test_check(events == 0, "clean outputs: %ld events on %ld values", events, total);
  printf("  clean: %ld events on %ld outputs\n", events, total);
  free(x);
  free(s);
}

/* ---------------------------- 6. same bits, same trace for any thread count */

static int same_trace(const lowp_fpx_trace_t *a, const lowp_fpx_trace_t *b) {
  int k;
  for (k = 0; k < LOWP_FPX_NKINDS; k++) {
    const lowp_fpx_event_t *x = &a->first[k], *y = &b->first[k];
    if (a->count[k] != b->count[k] || a->inherent[k] != b->inherent[k] ||
        a->spurious[k] != b->spurious[k] || x->seq != y->seq || x->i != y->i ||
        x->j != y->j || x->k != y->k || x->r != y->r)
      return 0;
  }
  return 1;
}

enum { KM = 24, KN = 9, KK = 40 };

typedef int (*plain_fn)(double *, const double *, const double *, size_t, size_t, size_t,
                        const void *);
typedef int (*traced_fn)(double *, const double *, const double *, size_t, size_t, size_t,
                         const void *, lowp_fpx_trace_t *);

static int acc_fpx(double *c, const double *a, const double *b, size_t m, size_t n, size_t k,
                   const void *cfg, lowp_fpx_trace_t *t) {
  return lowp_gemm_acc_fpx(c, a, b, m, n, k, cfg, t);
}

static int tc_fpx(double *c, const double *a, const double *b, size_t m, size_t n, size_t k,
                  const void *cfg, lowp_fpx_trace_t *t) {
  return lowp_gemm_tc_fpx(c, a, b, m, n, k, cfg, t);
}

/* the traced kernel gives the untraced bits, and one trace for 1 and 2 threads */
static void traced_twice(const char *name, plain_fn plain, traced_fn traced, const void *cfg,
                         const double *a, const double *b, unsigned want) {
  static double c0[KM * KN], c1[KM * KN], c2[KM * KN];
  lowp_fpx_trace_t t1, t2;
  memset(c0, 0, sizeof c0);
  memset(c1, 0, sizeof c1);
  memset(c2, 0, sizeof c2);
  plain(c0, a, b, KM, KN, KK, cfg);
  lowp_fpx_init(&t1);
  lowp_fpx_init(&t2);
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  traced(c1, a, b, KM, KN, KK, cfg, &t1);
#ifdef _OPENMP
  omp_set_num_threads(2);
#endif
  traced(c2, a, b, KM, KN, KK, cfg, &t2);
  lowp_test_check(!memcmp(c0, c1, sizeof c0) && !memcmp(c0, c2, sizeof c0),
                  "traced %s gives the reference's bits", name);
  lowp_test_check(same_trace(&t1, &t2), "%s trace: 1 thread == 2 threads", name);
  lowp_test_check((lowp_fpx_kinds(&t1) & want) != 0, "%s: the data raise 0x%x somewhere", name,
                  want);
}

static void kernels_same(void) {
  static double a[KM * KK], b[KK * KN];
  lowp_gemm_acc_cfg_t g;
  lowp_gemm_tc_cfg_t tc;
  size_t q;
  uint64_t seed = lowp_test_seed() + 5;
  memset(&g, 0, sizeof g);
  g.acc = &LOWP_FMT_FP16;
  g.acc_rnd = LOWP_RND_NE;
  g.prod = &LOWP_FMT_FP16;
  /* fp16 data whose sums overflow and underflow here and there */
  for (q = 0; q < KM * KK; q++) lowp_round_f64(&a[q], draw(seed, q, 1, -20, 9), &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
  for (q = 0; q < KK * KN; q++) lowp_round_f64(&b[q], draw(seed, q, 2, -8, 6), &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
  traced_twice("gemm_acc", lowp_gemm_acc_scalar, acc_fpx, &g, a, b, LOWP_FPX_OVERFLOW);
  lowp_gemm_tc_config(&tc, "h100", -1, &LOWP_FMT_FP16, &LOWP_FMT_FP16, NULL, 0);
  traced_twice("gemm_tc", lowp_gemm_tc_scalar, tc_fpx, &tc, a, b, LOWP_FPX_OVERFLOW);
}

/* an overflow whose exact partial sum is in range: spurious. fp16, rup:
   32769 -> 32800, then 32800 + 32720 = 65520 -> inf, but 32769 + 32720 =
   65489 <= 65504 */
static void spurious_case(void) {
  double a[2] = {32769, 32720}, b[2] = {1, 1}, c = 0;
  lowp_gemm_acc_cfg_t g;
  lowp_fpx_trace_t t;
  memset(&g, 0, sizeof g);
  g.acc = &LOWP_FMT_FP16;
  g.acc_rnd = LOWP_RND_UP;
  lowp_fpx_init(&t);
  lowp_gemm_acc_fpx(&c, a, b, 1, 1, 2, &g, &t);
  lowp_test_check(isinf(c) && t.count[LOWP_FPX_OVF_INF] == 1 && t.spurious[LOWP_FPX_OVF_INF] == 1 &&
                      t.first[LOWP_FPX_OVF_INF].k == 1 && t.first[LOWP_FPX_OVF_INF].inherent == 0,
                  "spurious overflow: count %llu spurious %llu k %lld",
                  (unsigned long long)t.count[LOWP_FPX_OVF_INF],
                  (unsigned long long)t.spurious[LOWP_FPX_OVF_INF],
                  (long long)t.first[LOWP_FPX_OVF_INF].k);
}

/* one fp16 dot (products exact) traced in mode rnd: c and its trace */
static double traced_dot(lowp_fpx_trace_t *t, const double *a, const double *b, size_t k,
                         lowp_rounding_t rnd) {
  double c = 0;
  lowp_gemm_acc_cfg_t g;
  memset(&g, 0, sizeof g);
  g.acc = &LOWP_FMT_FP16;
  g.acc_rnd = rnd;
  lowp_fpx_init(t);
  lowp_gemm_acc_fpx(&c, a, b, 1, 1, k, &g, t);
  return c;
}

/* inherent means that the exact partial sum itself raises the exception
   when rounded to the format in the same mode (IEEE 754's overflow and
   underflow), not merely that it lies beyond xmax or below xmin. Before,
   both events below were counted inherent. */
static void spurious_beyond(void) {
  lowp_fpx_trace_t t;
  /* fp16, rne: 32768 + 17 = 32785 -> 32800, then 32800 + 32720 = 65520 -> inf;
     the exact partial sum 65505 is above xmax 65504 but rounds to it */
  double a[3] = {32768, 17, 32720}, b[3] = {1, 1, 1};
  /* fp16, rne: 1.5 2^-24 -> 2^-23 (underflow, inherent: the exact value is
     tiny and inexact too); 2^-23 - 2^-25 = 1.5 2^-24 -> 2^-23 again, but the
     exact partial sum 1.5 2^-24 - 2^-25 = 2^-24 is a subnormal of fp16,
     exact: no underflow */
  double u[2] = {0x1.8p-24, 0x1p-14}, w[2] = {1, -0x1p-11};
  double c = traced_dot(&t, a, b, 3, LOWP_RND_NE);
  lowp_test_check(isinf(c) && t.count[LOWP_FPX_OVF_INF] == 1 && t.spurious[LOWP_FPX_OVF_INF] == 1 &&
                      t.first[LOWP_FPX_OVF_INF].k == 2 && t.first[LOWP_FPX_OVF_INF].inherent == 0,
                  "overflow with the exact partial sum 65505 (rounds to 65504): spurious, got count %llu "
                  "inherent %llu spurious %llu",
                  (unsigned long long)t.count[LOWP_FPX_OVF_INF],
                  (unsigned long long)t.inherent[LOWP_FPX_OVF_INF],
                  (unsigned long long)t.spurious[LOWP_FPX_OVF_INF]);
  c = traced_dot(&t, u, w, 2, LOWP_RND_NE);
  lowp_test_check(c == 0x1p-23 && t.count[LOWP_FPX_UNF_SUB] == 2 && t.inherent[LOWP_FPX_UNF_SUB] == 1 &&
                      t.spurious[LOWP_FPX_UNF_SUB] == 1 && t.first[LOWP_FPX_UNF_SUB].k == 0 &&
                      t.first[LOWP_FPX_UNF_SUB].inherent == 1,
                  "underflow with an exact subnormal partial sum: spurious, got c %a count %llu inherent %llu "
                  "spurious %llu", c, (unsigned long long)t.count[LOWP_FPX_UNF_SUB],
                  (unsigned long long)t.inherent[LOWP_FPX_UNF_SUB],
                  (unsigned long long)t.spurious[LOWP_FPX_UNF_SUB]);
  /* rtz: IEEE overflow is at 2^16 (the result saturates to 65504); an exact
     partial sum of 65505 .. 65535 does not overflow */
  lowp_test_check(lowp_fpx_inherent(&LOWP_FMT_FP16, LOWP_RND_TZ, LOWP_FPX_SATURATE, 65535, 1) == 0 &&
                      lowp_fpx_inherent(&LOWP_FMT_FP16, LOWP_RND_TZ, LOWP_FPX_SATURATE, 65536, 0) == 1 &&
                      lowp_fpx_inherent(&LOWP_FMT_FP16, LOWP_RND_NE, LOWP_FPX_OVF_INF, 65519, 1) == 0 &&
                      lowp_fpx_inherent(&LOWP_FMT_FP16, LOWP_RND_NE, LOWP_FPX_OVF_INF, 65520, 0) == 1 &&
                      lowp_fpx_inherent(&LOWP_FMT_FP16, LOWP_RND_UP, LOWP_FPX_OVF_INF, 65504, 1) == 1 &&
                      lowp_fpx_inherent(&LOWP_FMT_FP16, LOWP_RND_NE, LOWP_FPX_UNF_SUB, 0x1p-24, 0) == 0 &&
                      lowp_fpx_inherent(&LOWP_FMT_FP16, LOWP_RND_NE, LOWP_FPX_UNF_ZERO, 0x1p-25, 0) == 1,
                  "lowp_fpx_inherent at the IEEE thresholds");
}

/* one output of a tensor-core GEMM on model spec traced: c and its trace */
static double tc_out(lowp_fpx_trace_t *t, const char *spec, const lowp_format_t *in, const lowp_format_t *out,
                     const double *a, const double *b, size_t k) {
  double c = 0;
  lowp_gemm_tc_cfg_t cfg;
  lowp_test_check(lowp_gemm_tc_config(&cfg, spec, -1, in, out, NULL, 0) == LOWP_OK, "tc config %s", spec);
  lowp_fpx_init(t);
  lowp_test_check(lowp_gemm_tc_fpx(&c, a, b, 1, 1, k, &cfg, t) == LOWP_OK, "tc fpx runs (%s)", spec);
  return c;
}

/* the same with an fp16 output */
static double tc_one(lowp_fpx_trace_t *t, const char *spec, const lowp_format_t *in, const double *a,
                     const double *b, size_t k) {
  return tc_out(t, spec, in, &LOWP_FMT_FP16, a, b, k);
}

/* Tensor-core chains at fp16's overflow threshold, each event against the
   exact reference at its point. */
static void tc_chain_cases(void) {
  static double a[1024], b[1024];
  lowp_fpx_trace_t t;
  size_t q;
  double c;
  /* h100 fp8 -> fp16 promoted every 128 products: the fp32 total of 1024
     products 8 x 8 is 65536, rounded to the fp16 output: inf, inherent
     (the exact dot is 65536). Before, no block or addition overflowed and
     the trace said "none" beside an infinite output. */
  for (q = 0; q < 1024; q++) a[q] = b[q] = 8.0;
  c = tc_one(&t, "h100,promote=128", &LOWP_FMT_E4M3, a, b, 1024);
  lowp_test_check(isinf(c) && t.count[LOWP_FPX_OVF_INF] == 1 && t.inherent[LOWP_FPX_OVF_INF] == 1 &&
                      t.first[LOWP_FPX_OVF_INF].k == 1023,
                  "promoted fp32 total 65536 to an fp16 output: one inherent overflow at k 1023, got c %g "
                  "count %llu inherent %llu k %lld", c, (unsigned long long)t.count[LOWP_FPX_OVF_INF],
                  (unsigned long long)t.inherent[LOWP_FPX_OVF_INF], (long long)t.first[LOWP_FPX_OVF_INF].k);
  /* h100 fp16 -> fp16, one block of 16 ones holding inf at 3 and -inf at 7:
     the exact block sum is NaN (inf - inf), an inherent invalid; then inf at
     2 and a NaN at 5: an inherent nan_propagated. Before, the reference
     stopped at the first non-finite product (k 3, k 2: +inf), so both were
     called spurious. */
  for (q = 0; q < 16; q++) a[q] = b[q] = 1.0;
  a[3] = INFINITY, a[7] = -INFINITY;
  c = tc_one(&t, "h100", &LOWP_FMT_FP16, a, b, 16);
  lowp_test_check(isnan(c) && t.count[LOWP_FPX_INVALID] == 1 && t.inherent[LOWP_FPX_INVALID] == 1 &&
                      t.first[LOWP_FPX_INVALID].k == 3 && t.first[LOWP_FPX_INVALID].inherent == 1,
                  "inf - inf in one tensor-core block: an inherent invalid at k 3, got count %llu inherent %llu",
                  (unsigned long long)t.count[LOWP_FPX_INVALID], (unsigned long long)t.inherent[LOWP_FPX_INVALID]);
  a[3] = 1.0, a[7] = 1.0, a[2] = INFINITY, a[5] = NAN;
  c = tc_one(&t, "h100", &LOWP_FMT_FP16, a, b, 16);
  lowp_test_check(isnan(c) && t.count[LOWP_FPX_NAN_PROP] == 1 && t.inherent[LOWP_FPX_NAN_PROP] == 1,
                  "a NaN after an inf in one tensor-core block: an inherent nan_propagated, got count %llu "
                  "inherent %llu", (unsigned long long)t.count[LOWP_FPX_NAN_PROP],
                  (unsigned long long)t.inherent[LOWP_FPX_NAN_PROP]);
  /* h100 e4m3 -> fp16 (mma.sync: two interleaved blocks of 16 from zero, c
     added late): the first block's products (offsets 0, 1, 4, 5, 8) sum to
     65500 -> 65504, the second adds 4 x 4 -> 65520 -> inf; the exact sum of
     the 32 products is 65516: spurious. Before, a late-c block was judged by
     the value it rounded (65520): inherent. */
  memset(a, 0, sizeof a), memset(b, 0, sizeof b);
  a[0] = 448, b[0] = 128, a[1] = 448, b[1] = 16, a[4] = 448, b[4] = 2, a[5] = 11, b[5] = 8;
  a[8] = 2, b[8] = 2, a[2] = 4, b[2] = 4;
  c = tc_one(&t, "h100", &LOWP_FMT_E4M3, a, b, 32);
  lowp_test_check(isinf(c) && t.count[LOWP_FPX_OVF_INF] == 1 && t.spurious[LOWP_FPX_OVF_INF] == 1,
                  "late-c block 65504 + 16 (exact 65516): a spurious overflow, got count %llu inherent %llu",
                  (unsigned long long)t.count[LOWP_FPX_OVF_INF], (unsigned long long)t.inherent[LOWP_FPX_OVF_INF]);
  /* the same datapath: an instruction whose own exact sum is 65536 overflows
     inherently even where the dot's exact partial sum (-32768 + 65536) fits */
  memset(a, 0, sizeof a), memset(b, 0, sizeof b);
  for (q = 0; q < 32; q++)
    if ((q / 2) % 2 == 0) a[q] = -16, b[q] = 128;
  for (q = 32; q < 64; q++) a[q] = 16, b[q] = 128;
  c = tc_one(&t, "h100", &LOWP_FMT_E4M3, a, b, 64);
  lowp_test_check(isinf(c) && t.count[LOWP_FPX_OVF_INF] == 1 && t.inherent[LOWP_FPX_OVF_INF] == 1 &&
                      t.first[LOWP_FPX_OVF_INF].k == 63,
                  "late-c instruction summing to 65536 exactly: an inherent overflow, got count %llu inherent %llu",
                  (unsigned long long)t.count[LOWP_FPX_OVF_INF], (unsigned long long)t.inherent[LOWP_FPX_OVF_INF]);
  /* h100 fp16 -> fp16 promoted every 32 products: the second chain starts
     from zero; its first block 65472 + 28 = 65500 -> 65504, its second adds
     16 -> inf, exact 65516: spurious. Before, the reference was the dot's
     partial sum (60000 from the first chain + 65516): inherent. */
  memset(a, 0, sizeof a);
  for (q = 0; q < 64; q++) b[q] = 1;
  a[0] = 60000, a[32] = 65472, a[33] = 28, a[48] = 16;
  c = tc_one(&t, "h100,promote=32", &LOWP_FMT_FP16, a, b, 64);
  lowp_test_check(isinf(c) && t.count[LOWP_FPX_OVF_INF] == 1 && t.spurious[LOWP_FPX_OVF_INF] == 1 &&
                      t.first[LOWP_FPX_OVF_INF].k == 63,
                  "promoted chain 65504 + 16 (exact 65516 from its start): a spurious overflow, got count %llu "
                  "inherent %llu", (unsigned long long)t.count[LOWP_FPX_OVF_INF],
                  (unsigned long long)t.inherent[LOWP_FPX_OVF_INF]);
  /* h100 bf16 -> fp32, one product 2^-80 x 2^-80: c = 0 is aligned at
     fp32's emin (Hopper's c0align), the cut at 2^-151 drops the product, the
     block gives 0 from 2^-160: an inherent underflow to zero. Before, the cut
     sum 0 was taken as an exact zero: 'exceptions: none' (a100, without the
     c0align, reported it). 2^-140 (1 + 2^-7) + 2^-155 -> 0x1.02p-140: an
     underflow to a subnormal, missed the same way. */
  memset(a, 0, sizeof a), memset(b, 0, sizeof b);
  a[0] = 0x1p-80, b[0] = 0x1p-80;
  c = tc_out(&t, "h100", &LOWP_FMT_BF16, &LOWP_FMT_FP32, a, b, 16);
  lowp_test_check(c == 0 && t.count[LOWP_FPX_UNF_ZERO] == 1 && t.inherent[LOWP_FPX_UNF_ZERO] == 1 &&
                      t.first[LOWP_FPX_UNF_ZERO].k == 15,
                  "a product cut in alignment, 0 from 2^-160: an inherent underflow to zero, got count %llu",
                  (unsigned long long)t.count[LOWP_FPX_UNF_ZERO]);
  a[0] = 0x1p-70, b[0] = 0x1.02p-70, a[1] = 0x1p-75, b[1] = 0x1p-80;
  c = tc_out(&t, "h100", &LOWP_FMT_BF16, &LOWP_FMT_FP32, a, b, 16);
  lowp_test_check(c == 0x1.02p-140 && t.count[LOWP_FPX_UNF_SUB] == 1 && t.inherent[LOWP_FPX_UNF_SUB] == 1,
                  "a product cut in alignment below a subnormal result: an inherent underflow, got c %a count %llu",
                  c, (unsigned long long)t.count[LOWP_FPX_UNF_SUB]);
}

int main(void) {
  long n = count_per_format();
  lowp_test_start("tfpx");
  hand_cases();
  spurious_case();
  spurious_beyond();
  tc_chain_cases();
  mpfr_sweep(n);
  native_sweep(n);
  planted_corpus();
  clean_outputs(n);
  kernels_same();
  return lowp_test_end();
}
