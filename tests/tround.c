/* tround -- lowp_round_f64/f32/mpfr against an independent MPFR oracle */

/*
 * What is proven here: for every built-in format (and a few user formats),
 * every deterministic rounding mode (rne rna rtz rup rdn rto), every
 * overflow policy, FTZ/DAZ, both NaN-sign and both NaN-map policies, the
 * three entry points give the value and the ternary that an independent
 * MPFR computation gives, on every binade edge, every midpoint near the
 * edges, special values, and a seeded random sample. The mpfr entry point
 * is fed 128-bit values that lie within 2^-100 of a midpoint, which a
 * rounding through binary64 first would get wrong (double rounding).
 *
 * The oracle shares no code with lib/format/round.c. It rounds "per
 * binade": the quantum 2^q of |x| is 2^(max(e, emin) - p + 1) (2^emin below
 * xmin when the format has no subnormals), and |x| / 2^q is rounded to an
 * integer by MPFR (mpfr_rint in RNDN/RNDZ/RNDU/RNDD; mpfr_round, which
 * breaks ties away from zero, for rna; RNDZ plus "set the last bit if
 * inexact" for rto). Overflow, FTZ, zero signs and NaN results then follow
 * the policy documentation in format.h, written out again below. A second
 * oracle (mpfr_set_emin/emax + mpfr_check_range + mpfr_subnormalize) checks
 * the first on the random sample for the four IEEE modes.
 * The derived constants the oracle uses (xmax, xmin) are themselves checked
 * against literal values in tests/tformat.c.
 *
 * Run: ctest --test-dir build -R '^tround$'   (LOWP_TEST_SEED=n to vary)
 */

#include "format/format.h"
#include "format/round_mpfr.h"
#include "rng/rng.h"
#include "testutil.h"

#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XPREC 128 /* precision of the test inputs */

/* ------------------------------------------------------------ the oracle */

static const lowp_rounding_t modes[] = {LOWP_RND_NE, LOWP_RND_NA, LOWP_RND_TZ,
                                        LOWP_RND_UP, LOWP_RND_DN, LOWP_RND_TO};
#define NMODES 6

/* n is an integer: is it even? */
static int is_even(mpfr_srcptr n) {
  mpfr_t h;
  int r;
  mpfr_init2(h, mpfr_get_prec(n));
  mpfr_div_2ui(h, n, 1, MPFR_RNDN); /* exact */
  r = mpfr_integer_p(h);
  mpfr_clear(h);
  return r;
}

/* The magnitude |x| (> 0, finite) rounded to f with an unbounded exponent
   range above: returns it in m (a binary64 value: every lowp format is a
   subset of binary64, or +inf past binary64) and the ternary of the
   magnitude (-1, 0, +1). neg: the sign of x, which turns rup and rdn into
   RNDZ or RNDA on the magnitude. */
static int oracle_mag(double *m, mpfr_srcptr ax, const lowp_format_t *f,
                      lowp_rounding_t rnd, int neg) {
  mpfr_t t, n;
  long e = mpfr_get_exp(ax) - 1; /* |x| in [2^e, 2^(e+1)) */
  long q;
  int inex;
  if (e >= f->emin) q = e - f->precision + 1;
  else if (f->subnormals) q = f->emin - f->precision + 1;
  else q = f->emin;
  /* huge values: the quantum must not exceed binary64; clamp, the result
     overflows anyway (e > emax) */
  if (q > 1100) q = 1100;
  mpfr_init2(t, mpfr_get_prec(ax) + 64);
  mpfr_init2(n, mpfr_get_prec(ax) + 64);
  mpfr_mul_2si(t, ax, -q, MPFR_RNDN); /* exact: t has ax's precision */
  switch (rnd) {
  case LOWP_RND_NE: mpfr_rint(n, t, MPFR_RNDN); break;
  case LOWP_RND_NA: mpfr_round(n, t); break;
  case LOWP_RND_TZ: mpfr_rint(n, t, MPFR_RNDZ); break;
  case LOWP_RND_UP: mpfr_rint(n, t, neg ? MPFR_RNDZ : MPFR_RNDA); break;
  case LOWP_RND_DN: mpfr_rint(n, t, neg ? MPFR_RNDA : MPFR_RNDZ); break;
  case LOWP_RND_TO:
    mpfr_rint(n, t, MPFR_RNDZ);
    if (!mpfr_equal_p(n, t) && is_even(n)) mpfr_add_ui(n, n, 1, MPFR_RNDN);
    break;
  default: break;
  }
  inex = mpfr_cmp(n, t);
  mpfr_mul_2si(n, n, q, MPFR_RNDN);
  *m = mpfr_get_d(n, MPFR_RNDN); /* exact; +inf beyond binary64 */
  mpfr_clear(t);
  mpfr_clear(n);
  return inex > 0 ? 1 : inex < 0 ? -1 : 0;
}

/* The NaN result, as format.h documents lowp_nansign_t and lowp_nanmap_t:
   formats without NaN take +max (or +0); unsigned and fnuz NaNs have no
   sign; a NaN input's NaN has the input's sign unless the policy says
   positive; a NaN standing for an overflowed number keeps its sign. */
static double oracle_nan(int neg, const lowp_format_t *f, const lowp_policy_t *pol,
                         int from_nan) {
  if (f->nan == LOWP_NAN_NONE)
    return pol->nan_map == LOWP_NANMAP_ZERO ? 0.0 : lowp_format_xmax(f);
  if ((from_nan && pol->nan_sign == LOWP_NANSIGN_POSITIVE) || !f->has_sign ||
      f->nan == LOWP_NAN_NEGZERO)
    neg = 0;
  return neg ? -NAN : NAN;
}

/* The rounded magnitude before the policy: computed once per (x, f, mode). */
typedef struct {
  int special;   /* 0 finite, 1 NaN, 2 inf */
  int neg;       /* sign of x (before unsigned formats take |x|) */
  int zero;      /* x is zero */
  double mag;    /* rounded |x|, unbounded exponent range above */
  int tmag;      /* ternary of mag against |x| */
} core_t;

static void oracle_core(core_t *c, mpfr_srcptr x, const lowp_format_t *f,
                        lowp_rounding_t rnd) {
  memset(c, 0, sizeof *c);
  c->neg = mpfr_signbit(x) != 0;
  if (mpfr_nan_p(x)) { c->special = 1; return; }
  if (mpfr_inf_p(x)) { c->special = 2; return; }
  if (mpfr_zero_p(x)) { c->zero = 1; return; }
  {
    mpfr_t a;
    mpfr_init2(a, mpfr_get_prec(x));
    mpfr_abs(a, x, MPFR_RNDN);
    c->tmag = oracle_mag(&c->mag, a, f, rnd, f->has_sign ? c->neg : 0);
    mpfr_clear(a);
  }
}

/* The policy, as format.h documents it, applied to the core. dazz: the
   entry point's source format sees x as a subnormal and pol->daz is set. */
static int oracle_apply(double *y, const core_t *c, int dazz,
                        const lowp_format_t *f, const lowp_policy_t *pol,
                        lowp_rounding_t rnd) {
  const double xmax = lowp_format_xmax(f), xmin = lowp_format_xmin(f);
  int neg = f->has_sign ? c->neg : 0; /* unsigned formats take |x| */
  double mag;
  int t;
  if (c->special == 1) { *y = oracle_nan(c->neg, f, pol, 1); return 0; }
  if (c->special == 2) {
    /* SAT clamps infinities; NAN and (where there is no inf) IEEE and
       SAT_KEEPINF give NaN; a format with neither gives max */
    if (pol->overflow == LOWP_OVF_SAT ||
        (f->nan == LOWP_NAN_NONE && (f->inf != LOWP_INF_IEEE ||
                                     pol->overflow == LOWP_OVF_NAN))) {
      *y = neg ? -xmax : xmax;
      return neg ? 1 : -1;
    }
    if (pol->overflow == LOWP_OVF_NAN || f->inf != LOWP_INF_IEEE) {
      *y = oracle_nan(neg, f, pol, 0);
      return 0;
    }
    *y = neg ? -INFINITY : INFINITY;
    return 0;
  }
  if (c->zero || dazz) { mag = 0.0; t = 0; }
  else { mag = c->mag; t = c->tmag; }
  if (mag > xmax) {
    /* IEEE 754-2019 7.4: to nearest, and the directed mode pointing away
       from zero, give infinity; rtz, rto and the other directed mode give
       max. Formats without inf: NaN, or max if they have no NaN either. */
    int away = rnd == LOWP_RND_NE || rnd == LOWP_RND_NA ||
               (rnd == LOWP_RND_UP && !neg) || (rnd == LOWP_RND_DN && neg);
    int to_nan = pol->overflow == LOWP_OVF_NAN ||
                 (pol->overflow == LOWP_OVF_IEEE && away && f->inf != LOWP_INF_IEEE);
    if (pol->overflow == LOWP_OVF_IEEE && away && f->inf == LOWP_INF_IEEE) {
      *y = neg ? -INFINITY : INFINITY;
      return neg ? -1 : 1;
    }
    if (to_nan && f->nan != LOWP_NAN_NONE) { *y = oracle_nan(neg, f, pol, 0); return 0; }
    mag = xmax; t = -1;
  }
  if (pol->ftz && mag != 0.0 && mag < xmin) { mag = 0.0; t = -1; }
  if (mag == 0.0 && !f->has_zero) { mag = xmin; t = 1; }
  if (mag == 0.0)
    *y = (neg && f->nan != LOWP_NAN_NEGZERO) ? -0.0 : 0.0;
  else
    *y = neg ? -mag : mag;
  return neg ? -t : t;
}

/* Second oracle for the magnitude (IEEE modes): MPFR's own emulation of the
   format's exponent range. Used to check oracle_mag on the random sample. */
static double oracle2_mag(mpfr_srcptr ax, const lowp_format_t *f, mpfr_rnd_t r) {
  mpfr_t y;
  mpfr_exp_t emin = mpfr_get_emin();
  int inex;
  double d;
  mpfr_init2(y, f->precision);
  inex = mpfr_set(y, ax, r); /* default (huge) exponent range */
  mpfr_set_emin(f->subnormals ? f->emin - f->precision + 2 : f->emin + 1);
  inex = mpfr_check_range(y, inex, r);
  if (f->subnormals) inex = mpfr_subnormalize(y, inex, r);
  mpfr_set_emin(emin);
  d = mpfr_get_d(y, MPFR_RNDN);
  mpfr_clear(y);
  return d;
}

/* ------------------------------------------------------- entry points */

/* A generic entry point: can it take x exactly (and does DAZ zero it)? */
typedef struct {
  const char *name;
  int (*accepts)(mpfr_srcptr x, int *subnormal_in_source);
  int (*call)(double *y, mpfr_srcptr x, const lowp_format_t *f,
              const lowp_policy_t *pol, lowp_rounding_t rnd);
} entry_t;

static double as_double(mpfr_srcptr x) {
  if (mpfr_nan_p(x)) return mpfr_signbit(x) ? -NAN : NAN;
  return mpfr_get_d(x, MPFR_RNDN);
}

static int acc_f64(mpfr_srcptr x, int *sub) {
  double d = as_double(x);
  *sub = isfinite(d) && d != 0.0 && fabs(d) < 0x1p-1022;
  return mpfr_nan_p(x) || mpfr_cmp_d(x, d) == 0;
}
static int call_f64(double *y, mpfr_srcptr x, const lowp_format_t *f,
                    const lowp_policy_t *pol, lowp_rounding_t rnd) {
  return lowp_round_f64(y, as_double(x), f, pol, rnd);
}
static int acc_f32(mpfr_srcptr x, int *sub) {
  double d = as_double(x);
  float s = (float)d;
  *sub = isfinite(s) && s != 0.0f && fabsf(s) < 0x1p-126f;
  if (mpfr_nan_p(x)) return 1;
  return mpfr_cmp_d(x, d) == 0 && (double)s == d;
}
static int call_f32(double *y, mpfr_srcptr x, const lowp_format_t *f,
                    const lowp_policy_t *pol, lowp_rounding_t rnd) {
  return lowp_round_f32(y, (float)as_double(x), f, pol, rnd);
}
static int acc_mpfr(mpfr_srcptr x, int *sub) { (void)x; *sub = 0; return 1; }
static int call_mpfr(double *y, mpfr_srcptr x, const lowp_format_t *f,
                     const lowp_policy_t *pol, lowp_rounding_t rnd) {
  return lowp_round_mpfr(y, x, f, pol, rnd);
}

static const entry_t entries[] = {{"f64", acc_f64, call_f64},
                                  {"f32", acc_f32, call_f32},
                                  {"mpfr", acc_mpfr, call_mpfr}};
#define NENTRIES 3

/* ------------------------------------------------------- the policies */

#define NPOL 64
static lowp_policy_t policies[NPOL];
/* How many of the policies check_x tries: all, except in the middle binades
   of the wide formats, where no policy can matter (results are normal and
   far from overflow) and policy 0 stands for all of them. */
static int npol_active = NPOL;

static void make_policies(void) {
  int i;
  for (i = 0; i < NPOL; i++) {
    memset(&policies[i], 0, sizeof policies[i]);
    policies[i].overflow = (lowp_overflow_t)(i & 3);
    policies[i].ftz = (i >> 2) & 1;
    policies[i].daz = (i >> 3) & 1;
    policies[i].nan_sign = (lowp_nansign_t)((i >> 4) & 1);
    policies[i].nan_map = (lowp_nanmap_t)((i >> 5) & 1);
  }
}

/* ------------------------------------------------------- comparison */

static int same_value(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) && !signbit(a) == !signbit(b);
  return a == b && !signbit(a) == !signbit(b);
}

static int sgn(int t) { return t > 0 ? 1 : t < 0 ? -1 : 0; }

static long n_oracle_calls;

/* x as "hex (decimal)" for failure messages (static buffer: messages are
   printed one at a time) */
static const char *xtext(mpfr_srcptr x) {
  static char buf[256];
  mpfr_snprintf(buf, sizeof buf, "%Ra (%.25Rg)", x, x);
  return buf;
}

/* Check x against every entry point, policy and the given mode. */
static void check_x(mpfr_srcptr x, const lowp_format_t *f, lowp_rounding_t rnd) {
  core_t c;
  int k, i;
  oracle_core(&c, x, f, rnd);
  n_oracle_calls++;
  for (k = 0; k < NENTRIES; k++) {
    int sub = 0;
    if (!entries[k].accepts(x, &sub)) continue;
    for (i = 0; i < npol_active; i++) {
      const lowp_policy_t *pol = &policies[i];
      double want, got = 0.0;
      int twant, tgot;
      uint64_t bits;
      twant = oracle_apply(&want, &c, sub && pol->daz, f, pol, rnd);
      tgot = entries[k].call(&got, x, f, pol, rnd);
      if (!same_value(got, want) || sgn(tgot) != twant) {
        lowp_test_check(0, "%s %s %s ovf=%d ftz=%d daz=%d nansign=%d nanmap=%d: "
                        "x=%s got %a (%.17g) tern %d, want %a (%.17g) tern %d",
                        entries[k].name, f->name, lowp_rounding_name(rnd),
                        pol->overflow, pol->ftz, pol->daz, pol->nan_sign,
                        pol->nan_map, xtext(x), got, got, tgot, want, want, twant);
        continue;
      }
      lowp_test_check(1, "");
      /* every result is a value of f */
      if (lowp_encode(&bits, got, f) != 0)
        lowp_test_check(0, "%s %s %s: result %a of x=%s does not encode",
                        entries[k].name, f->name, lowp_rounding_name(rnd), got,
                        xtext(x));
    }
  }
}

/* -------------------------------------------------- inputs: visitors */

/* x and -x in every mode */
static void visit(mpfr_srcptr x, const lowp_format_t *f) {
  mpfr_t n;
  int i;
  mpfr_init2(n, mpfr_get_prec(x));
  mpfr_neg(n, x, MPFR_RNDN);
  for (i = 0; i < NMODES; i++) {
    check_x(x, f, modes[i]);
    check_x(n, f, modes[i]);
  }
  mpfr_clear(n);
}

/* An anchor a > 0 (an edge or a midpoint), then a +- 2^(e-100) (128-bit
   values: they defeat any rounding through binary64 first), then a's
   binary64 and binary32 neighbours when a is such a number. */
static void visit_anchor(mpfr_srcptr a, const lowp_format_t *f) {
  mpfr_t v;
  double d;
  if (mpfr_sgn(a) <= 0) return;
  mpfr_init2(v, XPREC);
  visit(a, f);
  mpfr_set(v, a, MPFR_RNDN);
  mpfr_nextabove(v); /* XPREC neighbours: 2^(e-128) away, not binary64 */
  visit(v, f);
  mpfr_set(v, a, MPFR_RNDN);
  mpfr_nextbelow(v);
  visit(v, f);
  mpfr_set_si_2exp(v, 1, mpfr_get_exp(a) - 101, MPFR_RNDN);
  mpfr_add(v, v, a, MPFR_RNDN); /* exact in XPREC bits */
  visit(v, f);
  d = mpfr_get_d(a, MPFR_RNDN);
  if (mpfr_cmp_d(a, d) == 0 && isfinite(d)) {
    mpfr_set_d(v, nextafter(d, INFINITY), MPFR_RNDN);
    visit(v, f);
    mpfr_set_d(v, nextafter(d, 0.0), MPFR_RNDN);
    visit(v, f);
    if ((double)(float)d == d) {
      mpfr_set_d(v, nextafterf((float)d, INFINITY), MPFR_RNDN);
      visit(v, f);
      mpfr_set_d(v, nextafterf((float)d, 0.0f), MPFR_RNDN);
      visit(v, f);
    }
  }
  mpfr_clear(v);
}

/* quantum (ulp) exponent of f's values in binade e */
static long quantum_exp(const lowp_format_t *f, long e) {
  if (e >= f->emin) return e - f->precision + 1;
  return f->subnormals ? f->emin - f->precision + 1 : f->emin;
}

/* a = 2^e + k * 2^(qe - 1), k may be negative: edges and midpoints */
static void anchor(const lowp_format_t *f, long e, long qe, long k) {
  mpfr_t a, t;
  mpfr_init2(a, XPREC);
  mpfr_init2(t, XPREC);
  mpfr_set_si_2exp(a, 1, e, MPFR_RNDN);
  mpfr_set_si_2exp(t, k, qe - 1, MPFR_RNDN);
  mpfr_add(a, a, t, MPFR_RNDN); /* exact: fewer than XPREC bits apart */
  visit_anchor(a, f);
  mpfr_clear(a);
  mpfr_clear(t);
}

/* Every binade edge (in fp64, every 7th binade in the middle of its range),
   +- half ulp, +- one and one and a half ulps (ties to odd and even), the
   edges around xmax, min normal, min subnormal and half of it, +-0, +-inf,
   NaN. */
static void boundary_cases(const lowp_format_t *f) {
  long e, elo = f->subnormals ? f->emin - f->precision - 1 : f->emin - 2;
  long ehi = f->emax + 2;
  int wide = f->emax - f->emin > 80, huge = f->emax - f->emin > 300;
  mpfr_t x;
  mpfr_init2(x, XPREC);
  mpfr_set_zero(x, 1); visit(x, f);
  mpfr_set_inf(x, 1); visit(x, f);
  mpfr_set_nan(x); mpfr_setsign(x, x, 0, MPFR_RNDN); visit(x, f);
  for (e = elo; e <= ehi; e++) {
    long qh = quantum_exp(f, e), ql = quantum_exp(f, e - 1);
    int middle = wide && e > f->emin + 3 && e < f->emax - 3;
    if (huge && middle && (e % 7) != 0) continue;
    npol_active = middle ? 1 : NPOL;
    anchor(f, e, qh, 0);
    anchor(f, e, qh, 1);   /* + half ulp above the edge */
    anchor(f, e, ql, -1);  /* - half ulp below */
    anchor(f, e, qh, 2);   /* + one ulp */
    anchor(f, e, qh, 3);   /* + 1.5 ulp: tie to the even one above */
    anchor(f, e, ql, -2);  /* - one ulp: the binade's top value */
    anchor(f, e, ql, -3);  /* - 1.5 ulp */
  }
  npol_active = NPOL;
  /* around xmax (where it is not a binade's top, as in e4m3) */
  {
    double xmax = lowp_format_xmax(f);
    int ex;
    long qe;
    (void)frexp(xmax, &ex);
    qe = quantum_exp(f, ex - 1);
    mpfr_set_d(x, xmax, MPFR_RNDN);
    visit_anchor(x, f);
    for (e = -3; e <= 3; e++) {
      mpfr_t t;
      mpfr_init2(t, XPREC);
      mpfr_set_si_2exp(t, e, qe - 1, MPFR_RNDN);
      mpfr_add_d(t, t, xmax, MPFR_RNDN);
      visit_anchor(t, f);
      mpfr_clear(t);
    }
  }
  mpfr_clear(x);
}

/* MPFR inputs beyond binary64's exponent range and of low precision: only
   the mpfr entry point takes them */
static void extreme_cases(const lowp_format_t *f) {
  static const long exps[] = {-100000, -1200, -1076, -1075, 1024, 1100, 100000};
  size_t i;
  mpfr_t x;
  for (i = 0; i < sizeof exps / sizeof exps[0]; i++) {
    mpfr_init2(x, 2); /* precision 2: 2^e and 1.5 * 2^e */
    mpfr_set_si_2exp(x, 1, exps[i], MPFR_RNDN);
    visit(x, f);
    mpfr_set_si_2exp(x, 3, exps[i] - 1, MPFR_RNDN);
    visit(x, f);
    mpfr_clear(x);
    mpfr_init2(x, 300); /* 2^e (1 + 2^-250): a sticky bit far below */
    mpfr_set_si_2exp(x, 1, exps[i] - 250, MPFR_RNDN);
    mpfr_add_si(x, x, 0, MPFR_RNDN);
    {
      mpfr_t b;
      mpfr_init2(b, 2);
      mpfr_set_si_2exp(b, 1, exps[i], MPFR_RNDN);
      mpfr_add(x, x, b, MPFR_RNDN); /* exact at 300 bits */
      mpfr_clear(b);
    }
    visit(x, f);
    mpfr_clear(x);
  }
}

/* ------------------------------------------------- inputs: random sample */

static long oracle_disagreements;

/* The two oracles must agree on the magnitude (IEEE modes). */
static void cross_check_oracles(mpfr_srcptr x, const lowp_format_t *f) {
  static const lowp_rounding_t m4[4] = {LOWP_RND_NE, LOWP_RND_TZ, LOWP_RND_UP, LOWP_RND_DN};
  static const mpfr_rnd_t r4[4] = {MPFR_RNDN, MPFR_RNDZ, MPFR_RNDU, MPFR_RNDD};
  mpfr_t a;
  int i;
  if (!mpfr_number_p(x) || mpfr_zero_p(x)) return;
  mpfr_init2(a, mpfr_get_prec(x));
  mpfr_abs(a, x, MPFR_RNDN);
  for (i = 0; i < 4; i++) {
    double m1, m2;
    (void)oracle_mag(&m1, a, f, m4[i], 0);
    if (!isfinite(m1)) continue;
    m2 = oracle2_mag(a, f, r4[i]);
    if (m1 != m2) {
      oracle_disagreements++;
      lowp_test_check(0, "oracles disagree: %s %s |x|=%s: per-binade %a, "
                      "subnormalize %a", f->name, lowp_rounding_name(m4[i]),
                      xtext(a), m1, m2);
    }
  }
  mpfr_clear(a);
}

/* random significand of "bits" bits (<= 128) at binade e */
static void random_value(mpfr_t x, lowp_rng_t *r, long e, int bits) {
  uint64_t hi = lowp_rng_next(r), lo = lowp_rng_next(r);
  mpfr_t t;
  mpfr_init2(t, 128);
  hi |= UINT64_C(1) << 63;
  mpfr_set_ui_2exp(x, (unsigned long)(hi >> 1), e - 62, MPFR_RNDN);
  mpfr_set_ui_2exp(t, (unsigned long)(lo >> 1), e - 125, MPFR_RNDN);
  mpfr_add(x, x, t, MPFR_RNDN); /* exact: 126 significant bits */
  mpfr_prec_round(x, bits, MPFR_RNDZ);
  mpfr_prec_round(x, XPREC, MPFR_RNDN);
  mpfr_clear(t);
}

static void random_cases(const lowp_format_t *f, long n, lowp_rng_t *r) {
  long elo = f->subnormals ? f->emin - f->precision - 2 : f->emin - 3;
  long ehi = f->emax + 3, span = ehi - elo + 1, i;
  mpfr_t x, t;
  mpfr_init2(x, XPREC);
  mpfr_init2(t, XPREC);
  for (i = 0; i < n; i++) {
    long e = elo + (long)(lowp_rng_next(r) % (uint64_t)span);
    int kind = (int)(i & 3), k;
    switch (kind) {
    case 0: random_value(x, r, e, 53); break;  /* binary64 values */
    case 1: random_value(x, r, e, 24); break;  /* binary32 values */
    case 2: random_value(x, r, e, 128); break; /* not doubles */
    default: {
      /* a value of f plus half an ulp, plus or minus a tiny amount: the
         cases where rounding through binary64 first would go wrong */
      long qe = quantum_exp(f, e);
      random_value(x, r, e, e - qe + 1 > 1 ? (int)(e - qe + 1) : 1);
      mpfr_set_si_2exp(t, 1, qe - 1, MPFR_RNDN);
      mpfr_add(x, x, t, MPFR_RNDN);
      k = (int)(lowp_rng_next(r) % 3) - 1;
      mpfr_set_si_2exp(t, k, e - 60 - (long)(lowp_rng_next(r) % 60), MPFR_RNDN);
      mpfr_add(x, x, t, MPFR_RNDN);
      break;
    }
    }
    if (lowp_rng_next(r) & 1) mpfr_neg(x, x, MPFR_RNDN);
    cross_check_oracles(x, f);
    for (k = 0; k < NMODES; k++) check_x(x, f, modes[k]);
  }
  mpfr_clear(x);
  mpfr_clear(t);
}

/* ------------------------------------------------- hand-picked cases */

/* One self-contained case: x (C hex or decimal text, parsed by strtod, so
   it must be a binary64) rounded to f in mode rnd under overflow policy ovf
   gives want ("nan", "-nan" or a number) with ternary tern. */
static void check_round(const char *x, const lowp_format_t *f, lowp_rounding_t rnd,
                        lowp_overflow_t ovf, const char *want, int tern) {
  lowp_policy_t pol;
  double xv = strtod(x, NULL), wv, got;
  int t;
  memset(&pol, 0, sizeof pol);
  pol.overflow = ovf;
  wv = !strcmp(want, "nan") ? NAN : !strcmp(want, "-nan") ? -NAN : strtod(want, NULL);
  t = lowp_round_f64(&got, xv, f, &pol, rnd);
  lowp_test_check(same_value(got, wv) && sgn(t) == tern,
                  "check_round(%s, %s, %s, ovf=%d): got %a (%.17g) tern %d, "
                  "want %s (%a) tern %d", x, f->name, lowp_rounding_name(rnd),
                  ovf, got, got, t, want, wv, tern);
}

static void hand_picked(void) {
  const lowp_overflow_t I = LOWP_OVF_IEEE, S = LOWP_OVF_SAT;
  /* IEEE 754-2008 binary16: 0.1 -> 0x2e66 = 0x1.998p-4; overflow threshold
     xmax + ulp/2 = 65520 rounds to inf (tie, 65504's significand is odd) */
  check_round("0.1", &LOWP_FMT_FP16, LOWP_RND_NE, I, "0x1.998p-4", -1);
  check_round("65519.99", &LOWP_FMT_FP16, LOWP_RND_NE, I, "65504", -1);
  check_round("65520", &LOWP_FMT_FP16, LOWP_RND_NE, I, "inf", 1);
  check_round("65520", &LOWP_FMT_FP16, LOWP_RND_TZ, I, "65504", -1);
  check_round("-65520", &LOWP_FMT_FP16, LOWP_RND_UP, I, "-65504", 1);
  check_round("-65520", &LOWP_FMT_FP16, LOWP_RND_DN, I, "-inf", -1);
  check_round("65520", &LOWP_FMT_FP16, LOWP_RND_NE, S, "65504", -1);
  /* binary16 underflow: 2^-25 is half the smallest subnormal, a tie to 0 */
  check_round("0x1p-25", &LOWP_FMT_FP16, LOWP_RND_NE, I, "0", -1);
  check_round("0x1.0000000000001p-25", &LOWP_FMT_FP16, LOWP_RND_NE, I, "0x1p-24", 1);
  check_round("0x1p-25", &LOWP_FMT_FP16, LOWP_RND_NA, I, "0x1p-24", 1);
  check_round("-0x1p-60", &LOWP_FMT_FP16, LOWP_RND_DN, I, "-0x1p-24", -1);
  check_round("-0x1p-60", &LOWP_FMT_FP16, LOWP_RND_UP, I, "-0", 1);
  /* docs/style.md B10's example: 0x1.ffep-15 rounds up to min normal 2^-14 */
  check_round("0x1.ffep-15", &LOWP_FMT_FP16, LOWP_RND_NE, I, "0x1p-14", 1);
  /* bfloat16 ties (Google's round-to-nearest-even bf16 conversion) */
  check_round("0x1.01p0", &LOWP_FMT_BF16, LOWP_RND_NE, I, "1", -1);
  check_round("0x1.03p0", &LOWP_FMT_BF16, LOWP_RND_NE, I, "0x1.04p0", 1);
  /* NVIDIA cvt.rna.tf32.f32: ties away from zero */
  check_round("0x1.002p0", &LOWP_FMT_TF32, LOWP_RND_NA, I, "0x1.004p0", 1);
  check_round("0x1.002p0", &LOWP_FMT_TF32, LOWP_RND_NE, I, "1", -1);
  /* OCP OFP8 v1.0 table: e4m3 max 448 (S.1111.110), 480 would be the NaN
     pattern; 464 is the tie 448|480 and goes to even 448; above, overflow
     is NaN without saturation, 448 with */
  check_round("464", &LOWP_FMT_E4M3, LOWP_RND_NE, I, "448", -1);
  check_round("464.0001", &LOWP_FMT_E4M3, LOWP_RND_NE, I, "nan", 0);
  check_round("-464.0001", &LOWP_FMT_E4M3, LOWP_RND_NE, I, "-nan", 0);
  check_round("1e6", &LOWP_FMT_E4M3, LOWP_RND_NE, S, "448", -1);
  check_round("0x1p-10", &LOWP_FMT_E4M3, LOWP_RND_NE, I, "0", -1);
  check_round("0x1.8p-10", &LOWP_FMT_E4M3, LOWP_RND_NE, I, "0x1p-9", 1);
  /* OCP OFP8: e5m2 max 57344; 61440 is the tie 57344|65536 -> inf */
  check_round("61439", &LOWP_FMT_E5M2, LOWP_RND_NE, I, "57344", -1);
  check_round("61440", &LOWP_FMT_E5M2, LOWP_RND_NE, I, "inf", 1);
  /* fnuz (Noune et al. 2022): max 240 (significand odd), so the tie 248
     rounds to even 256 and overflows to the only NaN 0x80; no -0 */
  check_round("247.9", &LOWP_FMT_E4M3FNUZ, LOWP_RND_NE, I, "240", -1);
  check_round("248", &LOWP_FMT_E4M3FNUZ, LOWP_RND_NE, I, "nan", 0);
  check_round("-0x1p-30", &LOWP_FMT_E4M3FNUZ, LOWP_RND_NE, I, "0", 1);
  /* OCP MX v1.0: e2m1 values 0 0.5 1 1.5 2 3 4 6; no inf/NaN: saturate */
  check_round("5", &LOWP_FMT_E2M1, LOWP_RND_NE, I, "4", -1);
  check_round("0.75", &LOWP_FMT_E2M1, LOWP_RND_NE, I, "1", 1);
  check_round("0.25", &LOWP_FMT_E2M1, LOWP_RND_NE, I, "0", -1);
  check_round("1e9", &LOWP_FMT_E2M1, LOWP_RND_NE, I, "6", -1);
  check_round("7.75", &LOWP_FMT_E2M3, LOWP_RND_NE, I, "7.5", -1);
  check_round("30", &LOWP_FMT_E3M2, LOWP_RND_NE, I, "28", -1);
  /* e8m0 as CUDA's cvt.rz/rp.ue8m0x2: |x| to a power of two, 0 -> 2^-127 */
  check_round("3", &LOWP_FMT_E8M0, LOWP_RND_TZ, I, "2", -1);
  check_round("3", &LOWP_FMT_E8M0, LOWP_RND_UP, I, "4", 1);
  check_round("-3", &LOWP_FMT_E8M0, LOWP_RND_UP, I, "4", 1);
  check_round("0", &LOWP_FMT_E8M0, LOWP_RND_TZ, I, "0x1p-127", 1);
  check_round("0x1p-140", &LOWP_FMT_E8M0, LOWP_RND_UP, I, "0x1p-127", 1);
  check_round("0x1.8p127", &LOWP_FMT_E8M0, LOWP_RND_UP, I, "nan", 0);
  check_round("0x1.8p127", &LOWP_FMT_E8M0, LOWP_RND_UP, S, "0x1p127", -1);
  /* lowp_round_sig with a significand that is not normalised (format.h:
     it is normalised first): sig = 1 and e = 63 is 1; sig = 3 with a
     sticky bit is 3+, which rtz takes to 3 */
  {
    double y;
    int t = lowp_round_sig(&y, 0, 63, 1, 0, &LOWP_FMT_FP16, NULL, LOWP_RND_NE, 0);
    lowp_test_check(y == 1.0 && t == 0, "round_sig(sig=1, e=63): %a tern %d", y, t);
    t = lowp_round_sig(&y, 1, 63, 3, 1, &LOWP_FMT_FP16, NULL, LOWP_RND_TZ, 0);
    lowp_test_check(y == -3.0 && t == 1, "round_sig(-(3+), e=63, rtz): %a tern %d", y, t);
  }
  /* an invalid mode: INT32_MIN and NaN (format.h), whatever the input */
  {
    const double xs[] = {1.0, 0.0, INFINITY, NAN, 0x1p-1074};
    size_t k;
    for (k = 0; k < sizeof xs / sizeof xs[0]; k++) {
      double y = 0.0;
      int t = lowp_round_f64(&y, xs[k], &LOWP_FMT_FP16, NULL, (lowp_rounding_t)LOWP_RND_COUNT);
      lowp_test_check(t == INT32_MIN && isnan(y), "bad mode, x=%a: tern %d y %a", xs[k], t, y);
      t = lowp_round_f32(&y, (float)xs[k], &LOWP_FMT_E4M3, NULL, (lowp_rounding_t)-1);
      lowp_test_check(t == INT32_MIN && isnan(y), "bad mode f32, x=%a: tern %d y %a", xs[k], t, y);
    }
  }
  /* round to odd (Boldo & Melquiond 2008): truncate, set the last bit */
  check_round("0x1.0001p0", &LOWP_FMT_FP16, LOWP_RND_TO, I, "0x1.004p0", 1);
  check_round("0x1.0041p0", &LOWP_FMT_FP16, LOWP_RND_TO, I, "0x1.004p0", -1);
}

/* The cases of tests/data/round (line format documented in its header). */
static void data_check(const char *path) {
  FILE *fp = fopen(path, "r");
  char line[512];
  int n = 0, lineno = 0;
  if (!lowp_test_check(fp != NULL, "cannot open %s", path)) return;
  while (fgets(line, sizeof line, fp)) {
    char fname[32], mname[16], oname[16], xs[64], ws[64];
    const lowp_format_t *f;
    lowp_rounding_t rnd;
    lowp_overflow_t ovf;
    int tern;
    lineno++;
    if (line[0] == '#' || line[0] == '\n') continue;
    if (!lowp_test_check(sscanf(line, "%31s %15s %15s %63s %63s %d", fname, mname, oname,
                                xs, ws, &tern) == 6, "%s:%d: malformed line", path, lineno))
      continue;
    f = lowp_format_by_name(fname);
    if (!lowp_test_check(f != NULL && lowp_rounding_parse(&rnd, mname) == 0, "%s:%d: bad "
                         "format or mode", path, lineno))
      continue;
    ovf = !strcmp(oname, "sat") ? LOWP_OVF_SAT : !strcmp(oname, "keepinf") ? LOWP_OVF_SAT_KEEPINF
        : !strcmp(oname, "nan") ? LOWP_OVF_NAN : LOWP_OVF_IEEE;
    check_round(xs, f, rnd, ovf, ws, tern);
    n++;
  }
  fclose(fp);
  lowp_test_check(n >= 40, "%s: only %d cases read", path, n);
}

/* ----------------------------------------------------------------- main */

int main(void) {
  static const char *const specs[] = {
      "p=5,emin=-6,emax=7,nosub",           /* no subnormals, IEEE inf/NaN */
      "p=3,emin=-3,emax=3,noinf,nan=none",  /* saturating, like fp6 */
      "p=4,emin=-5,emax=6,noinf,nan=allones", /* e4m3-like, other range */
      "p=2,emin=-4,emax=3,nozero,unsigned,noinf,nan=allones"}; /* e8m0-like */
  lowp_rng_t r;
  size_t i;
  lowp_test_start("tround");
  make_policies();
  lowp_rng_init(&r, lowp_test_seed(), 0);

  hand_picked();

  for (i = 0; i < lowp_format_count(); i++) {
    boundary_cases(lowp_format_at(i));
    extreme_cases(lowp_format_at(i));
  }
  for (i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    lowp_format_t f;
    char err[256];
    if (!lowp_test_check(lowp_format_parse(&f, specs[i], err, sizeof err) == 0,
                         "parse %s: %s", specs[i], err))
      continue;
    boundary_cases(&f);
    random_cases(&f, 1000, &r);
  }
  for (i = 0; i < lowp_format_count(); i++)
    random_cases(lowp_format_at(i), 1200, &r);

  data_check(LOWP_SOURCE_DIR "/tests/data/round");

  printf("tround: %ld oracle roundings, %ld oracle disagreements\n",
         n_oracle_calls, oracle_disagreements);
  return lowp_test_end();
}
