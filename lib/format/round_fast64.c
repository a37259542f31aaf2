/* lowp_round_fast64 -- branch-free fast path for rounding binary64 arrays to values */

/*
 * lowp_round_array_f64's fast path: round_fast.c's integer arithmetic on the
 * bits of binary64 inputs, in 64-bit lanes, for every format whose values are
 * binary64 values with binary64 subnormals below its xmin (p <= 52, emin >=
 * -1022, emax <= 1023, gradual underflow, a sign and a zero): fp32, tf32,
 * fp16, bf16, the fp8 and fp6/fp4 formats and specs like them; modes rne,
 * rna, rtz, rup, rdn, rto; every overflow, NaN, FTZ and DAZ policy. The
 * derivation is round_fast.c's with binary64's constants (bias 1023, 52
 * fraction bits), for a = |x|'s bits, e = a >> 52, eoff = emin + 1023,
 * cl = clamp(e, 1, eoff):
 *
 *   x  = a - (cl << 52) + 2^52: below eoff the integer significand M with
 *        |x| = M 2^(cl - 1075) (e = 0 and 1 share the quantum 2^-1074);
 *        from eoff on, a with its exponent field lowered to f's, e - eoff + 1
 *   sh = min(k - cl, 54), k = emin + 1076 - p: the bits below f's quantum
 *        (53 - p >= 1 in f's normal range; below eoff x < 2^53, so from
 *        sh = 54 on everything lies strictly below half a quantum)
 *   m  = (x + bias) >> sh: f's encoding of the rounded magnitude, carries
 *        into the exponent field included; m > xmax's encoding = overflow.
 *
 * The value of m as binary64 bits: f's field F = m >> (p - 1) >= 1 is
 * (m << (53 - p)) + ((emin + 1022) << 52); F = 0 is m 2^q, q = emin - p + 1
 * >= -1073: a binary64 subnormal m << (q + 1074) below 2^-1022, else
 * (2^(q+52) | m) - 2^(q+52), a difference of two normal binary64 values of
 * one binade (field q + 1075 in [2, 2046]) that is itself normal, so exact in
 * every rounding mode (the one floating-point operation; AVX2 has no 64-bit
 * integer to double conversion, and gcc does not vectorise one under
 * -ftrapping-math). Overflow, infinities and NaN take the reference's values
 * for them, per sign, computed once per call. The copies: the build's
 * baseline, AVX2 (vpsrlvq/vpsllvq, vpcmpgtq) and AVX-512, chosen at run time;
 * tests/tround_array.c holds each to lowp_round_array_f64_ref bit for bit.
 */

#include "cpu.h"
#include "format/round_fast.h"
#include "format/round_fast_mode.h"
#include "status.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

_Static_assert(sizeof(double) == sizeof(uint64_t), "double is binary64");

/* ---------------------------------------------------------------- types */

/* Everything the loop needs, computed once per call from (f, pol, rnd). */
typedef struct {
  int64_t k;         /* emin + 1076 - p: sh = k - clamp(e, 1, eoff) */
  int64_t eoff;      /* emin + 1023 */
  int64_t maxbits;   /* encoding of xmax: the overflow threshold */
  int64_t minnorm;   /* FTZ: encodings below this become 0; else 0 */
  uint64_t daz;      /* all ones: binary64 subnormal inputs are zero */
  int general;       /* FTZ, DAZ or no -0 in f */
  uint64_t nsh, nadd; /* F >= 1: (m << nsh) + nadd */
  uint64_t nrm1;      /* 2^(p-1) - 1: m above it has F >= 1 */
  uint64_t ssh, thr;  /* F = 0: m << ssh below thr, else (sbits | m) - sval */
  uint64_t sbits;     /* (q + 1075) << 52 = 2^(q + 52) */
  double sval;        /* its value */
  uint64_t negz;      /* sign bit of a negative zero result, or 0 */
  uint64_t ovv0, ovvx, infv0, infvx, nanv0, nanvx; /* per-sign results, as bits */
} c64;


/* ------------------------------------------------------ private helpers */

/* all ones where cond holds: a select of 64-bit values (a comparison's int
   widened to 64 bits was not vectorised) */
#define mask64(cond) ((cond) ? UINT64_MAX : UINT64_C(0))

/*
 * One element: x rounded to f, as binary64 bits. Every choice is a select
 * by mask of values computed on every path, so gcc vectorises the loop on
 * AVX2 as well as on AVX-512 (round_fast.c's value_one has the history).
 */
static inline __attribute__((always_inline)) uint64_t
value64(uint64_t u, const c64 *c, int mode, int general) {
  const int64_t a = (int64_t)(u & INT64_MAX);
  const uint64_t sm = UINT64_C(0) - (u >> 63);
  const int64_t e = (int64_t)((uint64_t)a >> 52); /* a logical shift: AVX2 has no vpsraq */
  int64_t cl, sh;
  uint64_t x, lo, hi, st, m, hb, mb, r;
  double h, d;
  cl = e < 1 ? 1 : e;
  cl = cl < c->eoff ? cl : c->eoff;
  sh = c->k - cl;
  sh = sh < 54 ? sh : 54;
  x = (uint64_t)a - ((uint64_t)cl << 52) + (UINT64_C(1) << 52);
  if (general) x &= ~(c->daz & mask64(e == 0));
  /* the bits below the quantum, moved to the top (two shifts: sh = 1 is
     possible), and x to the round bit: no constant is shifted by a lane's
     amount, which gcc 12 does not vectorise in 64-bit lanes */
  lo = (x << (64 - sh)) << 1;  /* below the round bit */
  hi = x >> (sh - 1);          /* down to the round bit (bit 0) */
  st = mask64(lo != 0) & 1;    /* sticky */
  switch (mode) {
  case M_NE: m = (hi + (((hi >> 1) | st) & 1)) >> 1; break;
  case M_NA: m = (hi + 1) >> 1; break;
  case M_UP: m = (x >> sh) + (mask64((hi & 1) | st) & ~sm & 1); break;
  case M_DN: m = (x >> sh) + (mask64((hi & 1) | st) & sm & 1); break;
  case M_TO: m = (x >> sh) | ((hi | st) & 1); break;
  default: m = x >> sh; break; /* M_TZ */
  }
  if (general) m &= ~mask64((int64_t)m < c->minnorm); /* FTZ */
  hb = c->sbits | (m & ((UINT64_C(1) << 52) - 1));
  memcpy(&h, &hb, sizeof h);
  d = h - c->sval; /* m 2^q where used: exact */
  memcpy(&mb, &d, sizeof mb);
  {
    /* signed compares (one vpcmpgtq; m < 2^63): m < thr, and m >= 2^(p-1) for F >= 1 */
    const uint64_t sub = mask64((int64_t)m < (int64_t)c->thr);
    const uint64_t nrm = mask64((int64_t)m > (int64_t)c->nrm1);
    const uint64_t ovf = mask64((int64_t)m > c->maxbits), spc = mask64(e == 2047);
    const uint64_t inf = mask64(a == INT64_C(0x7ff0000000000000));
    const uint64_t spv =
        ((c->infv0 ^ (sm & c->infvx)) & inf) | ((c->nanv0 ^ (sm & c->nanvx)) & ~inf);
    r = ((m << c->ssh) & sub) | (mb & ~sub);
    r = (((m << c->nsh) + c->nadd) & nrm) | (r & ~nrm);
    r |= u & (UINT64_C(1) << 63);
    if (general) {
      const uint64_t z = mask64(m == 0);
      r = (u & c->negz & z) | (r & ~z);
    }
    r = ((c->ovv0 ^ (sm & c->ovvx)) & ovf) | (r & ~ovf);
    return (spv & spc) | (r & ~spc);
  }
}

/* y may be x itself */
static inline __attribute__((always_inline)) void
loop64(double *y, const double *x, size_t n, const c64 *cp, int mode, int general) {
  const c64 c0 = *cp, *c = &c0; /* a local copy, kept in registers */
  size_t i;
  for (i = 0; i < n; i++) {
    uint64_t u, r;
    memcpy(&u, x + i, sizeof u);
    r = value64(u, c, mode, general);
    memcpy(y + i, &r, sizeof r);
  }
}

static inline __attribute__((always_inline)) void
loop64_modes(double *y, const double *x, size_t n, const c64 *c, int mode) {
#define LOWP_V64(M)                                                            \
  if (c->general) loop64(y, x, n, c, M, 1);                                    \
  else loop64(y, x, n, c, M, 0);                                               \
  break;
  switch (mode) {
  case M_NE: LOWP_V64(M_NE)
  case M_NA: LOWP_V64(M_NA)
  case M_TZ: LOWP_V64(M_TZ)
  case M_UP: LOWP_V64(M_UP)
  case M_DN: LOWP_V64(M_DN)
  default: LOWP_V64(M_TO)
  }
#undef LOWP_V64
}

static void run_generic(double *y, const double *x, size_t n, const c64 *c, int mode) {
  loop64_modes(y, x, n, c, mode);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define LOWP_FAST64_X86 1
__attribute__((target("avx2"))) static void
run_avx2(double *y, const double *x, size_t n, const c64 *c, int mode) {
  loop64_modes(y, x, n, c, mode);
}
#if defined(__clang__)
#define LOWP_AVX512_TARGET64 "avx512f,avx512bw,avx512vl,avx512dq"
#else
#define LOWP_AVX512_TARGET64 "avx512f,avx512bw,avx512vl,avx512dq,prefer-vector-width=512"
#endif
__attribute__((target(LOWP_AVX512_TARGET64))) static void
run_avx512(double *y, const double *x, size_t n, const c64 *c, int mode) {
  loop64_modes(y, x, n, c, mode);
}
#endif


/*
 * Rounding by addition (the AVX2 and AVX-512 copies, modes rne, rtz, rup,
 * rdn): with E = clamp(floor(log2|x|), emin, emax + 1) and f's quantum
 * q = 2^(E - p + 1) there, M = 1.5 2^(E + 53 - p) is a multiple of q whose
 * binade [2^K, 2^(K+1)), K = E + 53 - p, holds x + M (|x| < 2^(E+1) <=
 * 2^(K-2) for p <= 51) and has spacing 2^(K - 52) = q: the binary64 sum
 * x + M is x rounded to a multiple of q plus M, and (x + M) - M is exact.
 * The sum is taken in the current mode, which must be to nearest for rne
 * and rna (checked); whatever the mode, y is one of x's two neighbours on
 * f's grid, and rup / rdn step to the right one (y < x: y + q; y > x:
 * y - q); rtz is rdn of |x|; rna is rne of |x| moved up where |x| - y = q/2
 * (a tie rounded down to even; exact: y within a factor 2 of |x|, or 0);
 * rto is rtz of |x| with, where inexact, the last bit of y + M set (its
 * binary64 ulp is q, so that bit is f's last significand bit). y takes x's sign (-0, results rounded to zero, and M - M,
 * which is -0 under FE_DOWNWARD). Past
 * xmax the reference's overflow value per sign (monotone, as make_c64's);
 * for |x| >= 2^(emax + 2), where E is clamped, |y| is still far beyond
 * xmax, or not a number (x near DBL_MAX rounded up to infinity, then rto's
 * last bit set in it): overflow too. Formats without -0 (the fnuz ones) make a zero result +0. A vector
 * holding NaN or infinity runs the reference loop, so do the last n mod 4
 * (8) elements. Not: the FTZ and DAZ policies, stochastic rounding
 * (add_applies). The loops are round_add.h's (shared with round_fast.c's
 * binary32 values), which carry out these steps with fewer instructions:
 * the step to a neighbour as an integer +-1 on x + M, rna on AVX-512 as
 * rtz of |x| + q/2 taken toward zero by one fma.
 */
static int add_applies(const lowp_format_t *f, const lowp_policy_t *pol, int mode) {
  if (pol->ftz || pol->daz || mode < 0) return 0;
  if (f->precision > 51 || f->emax + 54 - f->precision > 1023) return 0;
  return 1;
}

#ifdef LOWP_FAST64_X86
/* the AVX2 and AVX-512 loops (round_add.h), for binary64 */
#define RA_T double
#define RA_S pd
#define RA_I epi64
#define RA_V2 __m256d
#define RA_V5 __m512d
#define RA_M5 __mmask8
#define RA_SET1I(v) _mm256_set1_epi64x((long long)(v))
#define RA_SET1I5(v) _mm512_set1_epi64((long long)(v))
#define RA_SIGN UINT64_C(0x8000000000000000)
#define RA_EXPM UINT64_C(0x7ff0000000000000)
#define RA_REF lowp_round_array_f64_ref
#define RA_AVX512_TARGET LOWP_AVX512_TARGET64
#define RA_PFX add64_
#include "format/round_add.h"
#endif

/* the reference's value of x, as bits */
static uint64_t ref_bits(double x, const lowp_format_t *f, const lowp_policy_t *pol,
                         lowp_rounding_t rnd) {
  double r = 0;
  uint64_t b;
  (void)lowp_round_f64(&r, x, f, pol, rnd);
  memcpy(&b, &r, sizeof b);
  return b;
}

static void make_c64(c64 *c, const lowp_format_t *f, const lowp_policy_t *pol,
                     lowp_rounding_t rnd) {
  const int p = f->precision, q = f->emin - p + 1;
  uint64_t xmaxbits = 0;
  (void)lowp_encode(&xmaxbits, lowp_format_xmax(f), f);
  c->k = f->emin + 1076 - p;
  c->eoff = f->emin + 1023;
  c->maxbits = (int64_t)xmaxbits;
  c->minnorm = pol->ftz ? INT64_C(1) << (p - 1) : 0;
  c->daz = pol->daz ? UINT64_MAX : 0;
  c->negz = f->nan == LOWP_NAN_NEGZERO ? 0 : UINT64_C(1) << 63;
  c->general = pol->ftz || pol->daz || !c->negz;
  c->nsh = (uint64_t)(53 - p);
  c->nadd = (uint64_t)(f->emin + 1022) << 52;
  c->nrm1 = (UINT64_C(1) << (p - 1)) - 1;
  c->ssh = (uint64_t)(q + 1074 < 63 ? q + 1074 : 63);
  c->thr = -1022 - q > 0 ? UINT64_C(1) << (-1022 - q) : 1;
  c->sbits = (uint64_t)(q + 1075) << 52;
  memcpy(&c->sval, &c->sbits, sizeof c->sval);
  /* DBL_MAX overflows wherever any finite x does (the encoding is monotone) */
  c->ovv0 = ref_bits(0x1.fffffffffffffp1023, f, pol, rnd);
  c->ovvx = c->ovv0 ^ ref_bits(-0x1.fffffffffffffp1023, f, pol, rnd);
  c->infv0 = ref_bits(INFINITY, f, pol, rnd);
  c->infvx = c->infv0 ^ ref_bits(-INFINITY, f, pol, rnd);
  c->nanv0 = ref_bits(NAN, f, pol, rnd);
  c->nanvx = c->nanv0 ^ ref_bits(-NAN, f, pol, rnd);
}

/* ----------------------------------------------------------- public API */

int lowp_round_fast64_applies(const lowp_format_t *f, const lowp_policy_t *pol,
                              lowp_rounding_t rnd) {
  (void)pol; /* every overflow, NaN-sign, NaN-map, FTZ and DAZ policy fits */
  if (!f || lowp_format_validate(f, NULL, 0) != 0) return 0;
  if (lowp_fast_mode(rnd) < 0) return 0;
  /* values a subset of binary64's, binary64 subnormals below xmin, and
     2^(q + 52) a normal binary64 value (q = emin - p + 1) */
  if (f->precision > 52 || f->emax > 1023 || f->emin < -1022) return 0;
  if (f->emin - f->precision + 1 + 1075 > 2046) return 0;
  if (!f->subnormals || !f->has_sign || !f->has_zero) return 0;
  /* rne and rto read the last significand bit, the encoding's last bit
     except for p = 1 (normals without fraction bits) */
  if (f->precision == 1 && (rnd == LOWP_RND_NE || rnd == LOWP_RND_TO)) return 0;
  if (lowp_format_width(f) > 64) return 0;
  return 1;
}

int lowp_round_fast_values_f64_isa(double *y, const double *x, size_t n,
                                   const lowp_format_t *f, const lowp_policy_t *pol,
                                   lowp_rounding_t rnd, const char *isa) {
  static const lowp_policy_t dflt;
  c64 c;
  int best = (int)lowp_cpu_isa(0), use = best, mode = lowp_fast_mode(rnd);
#ifndef LOWP_FAST64_X86
  best = use = LOWP_ISA_GENERIC;
#endif
  if (!pol) pol = &dflt;
  if (isa) {
    if ((use = lowp_isa_parse(isa)) < 0) return LOWP_EINVAL;
    if (use > best) return LOWP_EUNSUPPORTED;
  }
  if (!lowp_round_fast64_applies(f, pol, rnd))
    return lowp_round_array_f64_ref(y, x, n, f, pol, rnd);
#ifdef LOWP_FAST64_X86
  /* AVX2/AVX-512, every mode but sr (rne and rna with MXCSR to nearest): by
     addition; not with FTZ (bit 15) or DAZ (bit 6) set in MXCSR */
  if ((use == LOWP_ISA_AVX2 || use == LOWP_ISA_AVX512) && add_applies(f, pol, mode) &&
      (_mm_getcsr() & 0x8040u) == 0 &&
      ((mode != M_NE && mode != M_NA) || (_mm_getcsr() & 0x6000u) == 0)) {
    lowp_add_consts a;
    make_c64(&c, f, pol, rnd);
    lowp_add_consts_make(&a, f, 53, c.ovv0, c.ovv0 ^ c.ovvx, UINT64_C(1) << 63);
    if (use == LOWP_ISA_AVX512) add64_avx512(y, x, n, &a, f, pol, rnd, mode);
    else add64_avx2(y, x, n, &a, f, pol, rnd, mode);
    return LOWP_OK;
  }
#endif
  /* p <= 22 on AVX2/AVX-512: through binary32 rounded to odd (round_fast.c) */
  if (lowp__round_f64_via32(y, x, n, f, pol, rnd, use)) return LOWP_OK;
  make_c64(&c, f, pol, rnd);
  switch (use) {
#ifdef LOWP_FAST64_X86
  case LOWP_ISA_AVX512: run_avx512(y, x, n, &c, mode); break;
  case LOWP_ISA_AVX2: run_avx2(y, x, n, &c, mode); break;
#endif
  default: run_generic(y, x, n, &c, mode); break;
  }
  return LOWP_OK;
}
