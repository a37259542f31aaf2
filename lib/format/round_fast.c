/* lowp_round_fast -- branch-free fast path for rounding binary32 arrays */

/*
 * When every value of the target format f is a binary32 value (p <= 23,
 * emin >= -126, emax <= 127, gradual underflow, a sign and a zero), rounding
 * a binary32 x to f and encoding it is integer arithmetic on x's bits, the
 * same for every element; the format, mode and policy enter only as a few
 * constants computed once per call (fast_consts). The loop has no branches,
 * so gcc vectorises it; it is compiled for the build's baseline ISA and, on
 * x86, again for AVX2 (per-lane variable shifts vpsllvd/vpsrlvd) and for
 * AVX-512, the copy being chosen at run time with __builtin_cpu_supports:
 * the build never needs -march=native, and no floating-point operation
 * (hence no rounding-mode or FTZ/DAZ state of the CPU) is involved.
 *
 * The arithmetic, for a = |x|'s bits and e = a >> 23 its exponent field
 * (binary32 bias 127), with eoff = emin + 127 the first field in f's normal
 * range, cl = clamp(e, 1, eoff):
 *
 *   x  = a - (cl << 23) + 2^23
 *        below eoff, x is the integer significand M (hidden bit included)
 *        with |x| = M * 2^(cl - 150): e = 0 and e = 1 share the quantum
 *        2^-149. From eoff on, x is a with its exponent field lowered to
 *        e - eoff + 1 = f's field (e - 127 + bias_f, bias_f = 1 - emin).
 *   sh = min(k - cl, 25), k = emin + 151 - p
 *        the bits of x below f's quantum 2^(max(e - 127, emin) - p + 1):
 *        24 - p in f's normal range (>= 1 as p <= 23), more below it; below
 *        eoff, x < 2^24, so for sh >= 25 everything lies strictly below
 *        half a quantum and all modes decide alike.
 *   m  = (x + bias) >> sh, bias by the mode (rne: 2^(sh-1) - 1 + lsb)
 *
 * m is f's encoding of the rounded magnitude. In the normal range the
 * shift leaves f's exponent field above p - 1 fraction bits; below it,
 * field 0 holds the subnormal significand, and a significand of 2^(p-1) is
 * xmin's encoding. A carry out of the fraction (up to the next binade, or
 * from the largest subnormal to xmin) lands in the exponent field by
 * itself, since the encoding is monotone in the magnitude. So m > the
 * encoding of xmax is exactly "the rounded value overflows", and the
 * result there is a per-call constant chosen by the overflow policy, as
 * are the results of infinite and NaN inputs. emin >= -126 keeps binary32
 * subnormals below f's xmin, which the formula for x relies on.
 */

#include "cpu.h"
#include "format/round_fast.h"
#include "format/round_fast_mode.h"
#include "status.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#endif

_Static_assert(sizeof(float) == sizeof(uint32_t), "float is binary32");

/* ---------------------------------------------------------------- types */

/* Everything the loop needs, computed once per call from (f, pol, rnd).
   Signed fields are compared with signed lanes (one instruction on AVX2). */
typedef struct {
  int32_t k;         /* emin + 151 - p: sh = k - clamp(e, 1, eoff) */
  int32_t eoff;      /* emin + 127: the first binary32 exponent field in
                        f's normal range */
  int32_t maxbits;   /* encoding of xmax: the overflow threshold */
  int32_t minnorm;   /* FTZ: magnitudes below this encoding become 0; else 0 */
  uint32_t signpos;  /* 32 - width: moves x's sign to f's sign bit */
  uint32_t signbit;  /* f's sign bit (1 << (width - 1)) */
  uint32_t negzero;  /* result for a negative zero magnitude: signbit, or 0
                        where f has no -0 ("fnuz") */
  uint32_t daz;      /* all ones: binary32 subnormal inputs are zero; else 0 */
  int general;       /* 1: FTZ, DAZ or no -0 in f: the loop that handles them */
  uint32_t ovf0, ovfx; /* finite overflow: ovf0 for x > 0, ovf0^ovfx for x < 0 */
  uint32_t inf0, infx; /* +inf, and ^infx for -inf */
  uint32_t nan0, nanx; /* NaN with sign bit 0, and ^nanx with sign bit 1 */
} fast_consts;

/* The rounding modes: M_NE .. M_TO and lowp_fast_mode (round_fast_mode.h). */

/* ------------------------------------------------------ private helpers */

static uint32_t enc32(double v, const lowp_format_t *f) {
  uint64_t b = 0;
  (void)lowp_encode(&b, v, f); /* v is xmax, +-inf or NaN of f: encodable */
  return (uint32_t)b;
}

/* The NaN result (lowp_round's rules): for a NaN input the policy decides
   its sign (from_nan); a NaN standing for an overflowed or infinite number
   keeps that number's sign; "fnuz" NaN has none; NaN-less formats map a
   NaN input to +xmax or +0 by policy. */
static uint32_t nan_bits(int neg, int from_nan, const lowp_format_t *f,
                         const lowp_policy_t *pol) {
  if (f->nan == LOWP_NAN_NONE)
    return pol->nan_map == LOWP_NANMAP_ZERO ? 0 : enc32(lowp_format_xmax(f), f);
  if (from_nan && pol->nan_sign == LOWP_NANSIGN_POSITIVE) neg = 0;
  return enc32(neg ? -NAN : NAN, f); /* lowp_encode drops the sign in fnuz */
}

static uint32_t signed_max(int neg, const lowp_format_t *f) {
  return enc32(neg ? -lowp_format_xmax(f) : lowp_format_xmax(f), f);
}

/* An infinite input: saturate, stay infinite, or become NaN by the policy
   (IEEE and SAT_KEEPINF keep infinity where f has one). */
static uint32_t inf_bits(int neg, const lowp_format_t *f, const lowp_policy_t *pol) {
  switch (pol->overflow) {
  case LOWP_OVF_SAT: return signed_max(neg, f);
  case LOWP_OVF_NAN:
    return f->nan != LOWP_NAN_NONE ? nan_bits(neg, 0, f, pol) : signed_max(neg, f);
  default:
    if (f->inf == LOWP_INF_IEEE) return enc32(neg ? -INFINITY : INFINITY, f);
    return f->nan != LOWP_NAN_NONE ? nan_bits(neg, 0, f, pol) : signed_max(neg, f);
  }
}

/* A finite value whose rounding exceeds xmax. IEEE 754 7.4: infinity (or
   what stands for it) when the mode rounds away from zero, else xmax. */
static uint32_t ovf_bits(int neg, int mode, const lowp_format_t *f,
                         const lowp_policy_t *pol) {
  int away = mode == M_NE || mode == M_NA || (mode == M_UP && !neg) ||
             (mode == M_DN && neg);
  switch (pol->overflow) {
  case LOWP_OVF_SAT: case LOWP_OVF_SAT_KEEPINF: return signed_max(neg, f);
  case LOWP_OVF_NAN:
    return f->nan != LOWP_NAN_NONE ? nan_bits(neg, 0, f, pol) : signed_max(neg, f);
  default:
    if (!away) return signed_max(neg, f);
    if (f->inf == LOWP_INF_IEEE) return enc32(neg ? -INFINITY : INFINITY, f);
    return f->nan != LOWP_NAN_NONE ? nan_bits(neg, 0, f, pol) : signed_max(neg, f);
  }
}

static void make_consts(fast_consts *c, const lowp_format_t *f,
                        const lowp_policy_t *pol, int mode) {
  const int p = f->precision, w = lowp_format_width(f);
  c->k = f->emin + 151 - p;
  c->eoff = f->emin + 127;
  c->maxbits = (int32_t)enc32(lowp_format_xmax(f), f);
  c->minnorm = pol->ftz ? INT32_C(1) << (p - 1) : 0;
  c->signpos = (uint32_t)(32 - w);
  c->signbit = UINT32_C(1) << (w - 1);
  c->negzero = f->nan == LOWP_NAN_NEGZERO ? 0 : c->signbit;
  c->daz = pol->daz ? ~UINT32_C(0) : 0;
  c->general = pol->ftz || pol->daz || c->negzero != c->signbit;
  c->ovf0 = ovf_bits(0, mode, f, pol);
  c->ovfx = c->ovf0 ^ ovf_bits(1, mode, f, pol);
  c->inf0 = inf_bits(0, f, pol);
  c->infx = c->inf0 ^ inf_bits(1, f, pol);
  c->nan0 = nan_bits(0, 1, f, pol);
  c->nanx = c->nan0 ^ nan_bits(1, 1, f, pol);
}

/* all ones where cond holds, else 0 */
static inline __attribute__((always_inline)) uint32_t ifmask(int cond) {
  return 0u - (uint32_t)(cond != 0);
}

/*
 * One element: the encoding of x rounded to f (see the file comment).
 * Branch-free, and every ?: is a plain select of values computed anyway, so
 * gcc if-converts the body and vectorises the loop; mode is a constant
 * after inlining. The work per element is what sets the speed once the
 * data is in cache, so each step is written to cost one or two vector ops.
 */
static inline __attribute__((always_inline)) uint32_t
mag_one(uint32_t u, const fast_consts *c, int mode, int general) {
  const int32_t a = (int32_t)(u & 0x7fffffffu);
  const uint32_t sm = ifmask((int)(u >> 31)); /* all ones for x < 0 */
  const int32_t e = a >> 23;
  int32_t cl, sh;
  uint32_t x, t, m;
  /* cl = clamp(e, 1, eoff): below eoff, x is the integer significand (e = 0
     and e = 1 share the quantum 2^-149); from eoff on, x is a with its
     exponent field lowered to f's field, e - eoff + 1 */
  cl = e < 1 ? 1 : e;
  cl = cl < c->eoff ? cl : c->eoff;
  sh = c->k - cl;             /* >= 24 - p >= 1 (p <= 23) */
  sh = sh < 25 ? sh : 25;     /* x < 2^24 there: all below half a quantum */
  x = (uint32_t)a - ((uint32_t)cl << 23) + 0x800000u;
  if (general) x &= ~(c->daz & ifmask(e == 0)); /* DAZ: binary32 subnormals are zeros */
  t = 32 - (uint32_t)sh;      /* 0x7fffffff >> t = 2^(sh-1) - 1 */
  switch (mode) {
  case M_NE: m = (x + (0x7fffffffu >> t) + ((x >> sh) & 1)) >> sh; break;
  case M_NA: m = (x + (0x7fffffffu >> t) + 1) >> sh; break;
  case M_UP: m = (x + ((0xffffffffu >> t) & ~sm)) >> sh; break;
  case M_DN: m = (x + ((0xffffffffu >> t) & sm)) >> sh; break;
  case M_TO: m = (x >> sh) | (uint32_t)((x & (0xffffffffu >> t)) != 0); break;
  default: m = x >> sh; break; /* M_TZ */
  }
  /* m is now the encoding of the rounded magnitude, carries included */
  if (general) m = (int32_t)m < c->minnorm ? 0 : m; /* FTZ (minnorm = 0: never) */
  return m;
}

static inline __attribute__((always_inline)) uint32_t
round_one(uint32_t u, const fast_consts *c, int mode, int general) {
  const int32_t a = (int32_t)(u & 0x7fffffffu);
  const uint32_t sm = ifmask((int)(u >> 31)); /* all ones for x < 0 */
  const int32_t e = a >> 23;
  const uint32_t m = mag_one(u, c, mode, general);
  uint32_t r;
  r = m | ((u >> c->signpos) & c->signbit);
  if (general) r = r == c->signbit ? c->negzero : r; /* -0, where f has it */
  r = (int32_t)m > c->maxbits ? c->ovf0 ^ (sm & c->ovfx) : r;
  /* infinities and NaNs (field 255), told apart by equality: on AVX2 an
     equality test is one instruction where an ordered one on these
     (non-negative) lanes became two */
  r = e == 255 ? (a == 0x7f800000 ? c->inf0 ^ (sm & c->infx)
                                  : c->nan0 ^ (sm & c->nanx)) : r;
  return r;
}

/*
 * The value of x rounded to f, as binary32 bits (lowp_round_array_f32's
 * fast path): the magnitude's encoding m (mag_one) read back as a value.
 * f's field F = m >> (p - 1): F >= 1 is 2^(F - bias_f) (1 + frac 2^(1-p)),
 * whose binary32 bits are m << (24 - p) plus (eoff - 1) << 23 (the field
 * raised by emin + 126, the fraction moved up); F = 0 is m 2^q, q = emin -
 * p + 1 >= -149 (a multiple of binary32's quantum): a binary32 subnormal,
 * bits m << (q + 149), below 2^-126 (m < thr = 2^(-126 - q)), else
 * (2^23 + m) 2^q - 2^23 2^q: two normal binary32 values of one binade
 * (field q + 150 in [1, 254]) whose difference m 2^q is a normal binary32
 * value, so the subtraction is exact in every rounding mode and untouched
 * by FTZ and DAZ (the one floating-point operation here; an integer to
 * float conversion would have been exact too, but gcc does not vectorise
 * it under -ftrapping-math). The sign is x's (a zero's too, -0 to +0 where f has no -0 or
 * FTZ leaves +0 as the encoder does), and overflow, infinities and NaN are
 * the reference's values for them, per sign (vc's constants).
 */
typedef struct {
  uint32_t nsh, nadd;  /* F >= 1: (m << nsh) + nadd */
  uint32_t pm1;        /* p - 1 */
  uint32_t ssh, thr;   /* F = 0: m << ssh below thr, else (sbits | m) - sval */
  uint32_t sbits;      /* (q + 150) << 23: 2^(q + 23), whose quantum is 2^q */
  float sval;          /* its value */
  uint32_t negz;       /* the sign bit of a negative zero result: 0x80000000, or 0 */
  uint32_t ovv0, ovvx, infv0, infvx, nanv0, nanvx; /* as ovf0 .. nanx, values */
} value_consts;

static inline __attribute__((always_inline)) uint32_t
value_one(uint32_t u, const fast_consts *c, const value_consts *v, int mode, int general,
          int bymask) {
  const int32_t a = (int32_t)(u & 0x7fffffffu);
  const uint32_t sm = ifmask((int)(u >> 31));
  const int32_t e = a >> 23;
  const uint32_t m = mag_one(u, c, mode, general);
  const uint32_t hb = v->sbits | (m & 0x7fffffu);
  float h, d;
  uint32_t mb, r;
  memcpy(&h, &hb, sizeof h);
  d = h - v->sval; /* m 2^q where used (m < 2^23): exact */
  memcpy(&mb, &d, sizeof mb);
  /* a select by mask: the subtraction's result is used on every path, so
     gcc keeps it unconditional (a value used on one arm only was sunk into
     a branch, which -ftrapping-math then kept from if-conversion) */
  if (!bymask) { /* the baseline copy: selects gcc lowers to cmov, faster there */
    r = ((m << v->ssh) & ifmask(m < v->thr)) | (mb & ~ifmask(m < v->thr));
    r = (m >> v->pm1) != 0 ? (m << v->nsh) + v->nadd : r;
    r |= u & 0x80000000u;
    if (general) r = m == 0 ? (u & v->negz) : r;
    r = (int32_t)m > c->maxbits ? v->ovv0 ^ (sm & v->ovvx) : r;
    return e == 255 ? (a == 0x7f800000 ? v->infv0 ^ (sm & v->infvx)
                                       : v->nanv0 ^ (sm & v->nanvx)) : r;
  }
  {
    /* the same, every choice a select by mask of values computed on every
       path: gcc 12 if-converted the ?: chain above for AVX-512 (mask
       registers) but not for AVX2 ("control flow in loop": a scalar loop
       there, 4-15x the encoder's time) */
    const uint32_t sub = ifmask(m < v->thr), nrm = ifmask((m >> v->pm1) != 0);
    const uint32_t ovf = ifmask((int32_t)m > c->maxbits), spc = ifmask(e == 255);
    const uint32_t inf = ifmask(a == 0x7f800000);
    const uint32_t spv =
        ((v->infv0 ^ (sm & v->infvx)) & inf) | ((v->nanv0 ^ (sm & v->nanvx)) & ~inf);
    r = ((m << v->ssh) & sub) | (mb & ~sub);
    r = (((m << v->nsh) + v->nadd) & nrm) | (r & ~nrm);
    r |= u & 0x80000000u;
    if (general) {
      const uint32_t z = ifmask(m == 0);
      r = (u & v->negz & z) | (r & ~z);
    }
    r = ((v->ovv0 ^ (sm & v->ovvx)) & ovf) | (r & ~ovf);
    return (spv & spc) | (r & ~spc);
  }
}

static inline __attribute__((always_inline)) uint32_t bits_of(const float *x) {
  uint32_t u;
  memcpy(&u, x, sizeof u); /* no aliasing questions; compiles to a load */
  return u;
}

/* The loops, one per output width (bits may be x itself: element i is read
   before anything at or beyond it is written). */
static inline __attribute__((always_inline)) void
loop_all(void *bits, const float *x, size_t n, const fast_consts *cp,
         int width, int mode, int general) {
  /* a local copy: stores through uint8_t * may alias anything, and the
     constants must stay in registers for the loop to vectorise */
  const fast_consts c0 = *cp, *c = &c0;
  size_t i;
  if (width <= 8) {
    uint8_t *y = bits;
    for (i = 0; i < n; i++) y[i] = (uint8_t)round_one(bits_of(x + i), c, mode, general);
  } else if (width <= 16) {
    uint16_t *y = bits;
    for (i = 0; i < n; i++) y[i] = (uint16_t)round_one(bits_of(x + i), c, mode, general);
  } else {
    uint32_t *y = bits;
    for (i = 0; i < n; i++) y[i] = round_one(bits_of(x + i), c, mode, general);
  }
}

/* The values: y may be x itself. */
static inline __attribute__((always_inline)) void
loop_values(float *y, const float *x, size_t n, const fast_consts *cp,
            const value_consts *vp, int mode, int general, int bymask) {
  const fast_consts c0 = *cp, *c = &c0;
  const value_consts v0 = *vp, *v = &v0;
  size_t i;
  for (i = 0; i < n; i++) {
    uint32_t r = value_one(bits_of(x + i), c, v, mode, general, bymask);
    memcpy(y + i, &r, sizeof r);
  }
}

/*
 * The values for formats with binary32's exponent range (emin = -126,
 * emax = 127, subnormals, IEEE infinity and NaN: bf16, tf32 and the like)
 * under the default overflow, FTZ and DAZ policies: f's quantum is 2^sh
 * binary32 quanta in every binade, subnormals included (both have field 0
 * at 2^-126), so rounding is integer rounding of x's bits at bit sh = 24 - p,
 * a carry moving into the exponent field by itself: out of the largest
 * finite value into 0x7f800000, infinity, exactly where IEEE 754's overflow
 * in that mode gives it (the modes that keep xmax add no carry). An
 * infinite input has a zero fraction and stays; NaN inputs take the
 * reference's NaN (its sign by the policy). Per lane: the bias, one add,
 * one and, the NaN select: what hand-written bf16 kernels do, NaN kept.
 */
static inline __attribute__((always_inline)) void
loop_samerange(float *y, const float *x, size_t n, int sh, const value_consts *vp, int mode) {
  const uint32_t low = (UINT32_C(1) << sh) - 1, half = low >> 1;
  const uint32_t nan0 = vp->nanv0, nanx = vp->nanvx; /* nanx: 0 or the sign bit */
  size_t i;
  for (i = 0; i < n; i++) {
    const uint32_t u = bits_of(x + i), sm = ifmask((int)(u >> 31));
    const uint32_t isnan = ifmask((int32_t)(u & 0x7fffffffu) > 0x7f800000);
    uint32_t r;
    switch (mode) {
    case M_NE: r = (u + half + ((u >> sh) & 1)) & ~low; break;
    case M_NA: r = (u + half + 1) & ~low; break;
    case M_UP: r = (u + (low & ~sm)) & ~low; break;
    case M_DN: r = (u + (low & sm)) & ~low; break;
    case M_TO: r = (u & ~low) | ((uint32_t)((u & low) != 0) << sh); break;
    default: r = u & ~low; break; /* M_TZ */
    }
    r = isnan ? nan0 | (u & nanx) : r;
    memcpy(y + i, &r, sizeof r);
  }
}

static inline __attribute__((always_inline)) void
samerange_modes(float *y, const float *x, size_t n, int sh, const value_consts *v, int mode) {
  switch (mode) {
  case M_NE: loop_samerange(y, x, n, sh, v, M_NE); break;
  case M_NA: loop_samerange(y, x, n, sh, v, M_NA); break;
  case M_TZ: loop_samerange(y, x, n, sh, v, M_TZ); break;
  case M_UP: loop_samerange(y, x, n, sh, v, M_UP); break;
  case M_DN: loop_samerange(y, x, n, sh, v, M_DN); break;
  default: loop_samerange(y, x, n, sh, v, M_TO); break;
  }
}

/* One loop per (mode, variant): "general" adds FTZ, DAZ and formats
   without -0 ("fnuz"), which cost about a fifth more work per element, so
   the common case does not pay for them. */
static inline __attribute__((always_inline)) void
loop_modes1(void *bits, const float *x, size_t n, const fast_consts *c,
            int width, int mode, int general) {
  switch (mode) {
  case M_NE: loop_all(bits, x, n, c, width, M_NE, general); break;
  case M_NA: loop_all(bits, x, n, c, width, M_NA, general); break;
  case M_TZ: loop_all(bits, x, n, c, width, M_TZ, general); break;
  case M_UP: loop_all(bits, x, n, c, width, M_UP, general); break;
  case M_DN: loop_all(bits, x, n, c, width, M_DN, general); break;
  default: loop_all(bits, x, n, c, width, M_TO, general); break;
  }
}

static inline __attribute__((always_inline)) void
loop_modes(void *bits, const float *x, size_t n, const fast_consts *c,
           int width, int mode) {
  if (c->general) loop_modes1(bits, x, n, c, width, mode, 1);
  else loop_modes1(bits, x, n, c, width, mode, 0);
}

/* values: v NULL encodes (loop_modes), else rounds to values into bits */
static inline __attribute__((always_inline)) void
loop_any(void *bits, const float *x, size_t n, const fast_consts *c,
         const value_consts *v, int width, int mode, int bymask) {
  if (!v) {
    loop_modes(bits, x, n, c, width, mode);
    return;
  }
#define LOWP_VAL(M)                                                            \
  if (c->general) loop_values(bits, x, n, c, v, M, 1, bymask);                 \
  else loop_values(bits, x, n, c, v, M, 0, bymask);                            \
  break;
  switch (mode) {
  case M_NE: LOWP_VAL(M_NE)
  case M_NA: LOWP_VAL(M_NA)
  case M_TZ: LOWP_VAL(M_TZ)
  case M_UP: LOWP_VAL(M_UP)
  case M_DN: LOWP_VAL(M_DN)
  default: LOWP_VAL(M_TO)
  }
#undef LOWP_VAL
}

/* ------------------------------------------------------------- dispatch */

/* The same loops compiled three times: for the baseline ISA of the build,
   and, where the compiler targets x86, for AVX2 and for AVX-512 (16 lanes,
   mask registers, three-input logic). The copy is chosen at run time, never
   by -march=native. */
static void run_generic(void *bits, const float *x, size_t n,
                        const fast_consts *c, const value_consts *v, int width, int mode) {
  loop_any(bits, x, n, c, v, width, mode, 0);
}

static void same_generic(float *y, const float *x, size_t n, int sh, const value_consts *v,
                         int mode) {
  samerange_modes(y, x, n, sh, v, mode);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define LOWP_FAST_X86 1
__attribute__((target("avx2"))) static void
run_avx2(void *bits, const float *x, size_t n, const fast_consts *c,
         const value_consts *v, int width, int mode) {
  loop_any(bits, x, n, c, v, width, mode, 1);
}

__attribute__((target("avx2"))) static void
same_avx2(float *y, const float *x, size_t n, int sh, const value_consts *v, int mode) {
  samerange_modes(y, x, n, sh, v, mode);
}

/* prefer-vector-width=512 keeps 512-bit vectors even when the build tunes
   for a CPU whose default is 256 (-mtune=skylake-avx512 and later); the
   512-bit loop ran ~1.7x faster in cache than the AVX2 copy on a Xeon
   (fp16 rne: 0.50 vs 0.87 ns per element, 2^14 elements) */
#if defined(__clang__)
#define LOWP_AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512dq"
#else
#define LOWP_AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512dq,prefer-vector-width=512"
#endif
__attribute__((target(LOWP_AVX512_TARGET))) static void
run_avx512(void *bits, const float *x, size_t n, const fast_consts *c,
         const value_consts *v, int width, int mode) {
  loop_any(bits, x, n, c, v, width, mode, 1);
}

__attribute__((target(LOWP_AVX512_TARGET))) static void
same_avx512(float *y, const float *x, size_t n, int sh, const value_consts *v, int mode) {
  samerange_modes(y, x, n, sh, v, mode);
}

/*
 * binary64 to binary32 rounded to odd (Boldo and Melquiond, IEEE Trans.
 * Computers 57(4), 2008), for lowp__round_f64_via32: y = the conversion in
 * the current rounding mode, one of x's two binary32 neighbours; where
 * (double)y != x, y is moved to the one nearer zero (its bits less one
 * where |y| > |x|: infinity becomes FLT_MAX) and its last bit set. Exact for
 * every rounding mode; not with FTZ or DAZ in MXCSR (the caller checks).
 * With daz, binary64 subnormals become zeros of their sign first. A NaN
 * stays a NaN of its sign. The tail: the same in scalar code.
 */
static inline __attribute__((always_inline)) float odd32_one(double x, int daz) {
  float y;
  double b;
  uint32_t u;
  if (daz && fabs(x) < 0x1p-1022) x = copysign(0.0, x);
  y = (float)x;
  b = (double)y;
  memcpy(&u, &y, sizeof u);
  if (b != x) u = (fabs(b) > fabs(x) ? u - 1 : u) | 1;
  memcpy(&y, &u, sizeof y);
  return y;
}

__attribute__((target("avx2"))) static void
odd32_avx2(float *t, const double *x, size_t n, int daz) {
  const __m256d absm = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX));
  const __m256d dmin = _mm256_set1_pd(0x1p-1022);
  const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  const __m128i one = _mm_set1_epi32(1);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256d v = _mm256_loadu_pd(x + i), b, ne, aw;
    __m128i yi, ne4, aw4;
    if (daz) /* |x| < 2^-1022: keep the sign only */
      v = _mm256_andnot_pd(_mm256_and_pd(_mm256_cmp_pd(_mm256_and_pd(v, absm), dmin, _CMP_LT_OQ),
                                         absm), v);
    yi = _mm_castps_si128(_mm256_cvtpd_ps(v));
    b = _mm256_cvtps_pd(_mm_castsi128_ps(yi));
    ne = _mm256_cmp_pd(b, v, _CMP_NEQ_UQ);
    aw = _mm256_cmp_pd(_mm256_and_pd(b, absm), _mm256_and_pd(v, absm), _CMP_GT_OQ);
    ne4 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(ne), idx));
    aw4 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(aw), idx));
    yi = _mm_or_si128(_mm_add_epi32(yi, aw4), _mm_and_si128(ne4, one)); /* aw4: -1 or 0 */
    _mm_storeu_si128((__m128i *)(void *)(t + i), yi);
  }
  for (; i < n; i++) t[i] = odd32_one(x[i], daz);
}

/* binary16 values of binary32 t (rounded to odd by lowp__round_f64_via32, or lowp_round_array_f32's
   own inputs: values_f16c) by
   the CPU's F16C conversion in the mode R of its immediate (not MXCSR's),
   which rounds binary16's subnormals and overflows as IEEE 754 does; a
   NaN takes the reference's NaN (nan0, with x's sign where nanx is the
   sign bit) instead of the instruction's payload. The tail: through a
   padded block. */
#define LOWP_F16C_LOOP(R)                                                                 \
  for (; i + 8 <= n; i += 8) {                                                            \
    __m256 v = _mm256_loadu_ps(t + i);                                                    \
    __m256 h = _mm256_cvtph_ps(_mm256_cvtps_ph(v, R));                                    \
    __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);                                       \
    __m256i nv = _mm256_or_si256(n0, _mm256_and_si256(_mm256_castps_si256(v), nx));       \
    _mm256_storeu_ps(y + i, _mm256_blendv_ps(h, _mm256_castsi256_ps(nv), nan));           \
  }
/* y may be t (in place) */
__attribute__((target("avx2,f16c"))) static void
f16c_values(float *y, const float *t, size_t n, int mode, uint32_t nan0, uint32_t nanx) {
  const __m256i n0 = _mm256_set1_epi32((int)nan0), nx = _mm256_set1_epi32((int)nanx);
  size_t i = 0;
  float pad[8] = {0};
  switch (mode) {
  case M_NE: LOWP_F16C_LOOP(_MM_FROUND_TO_NEAREST_INT) break;
  case M_TZ: LOWP_F16C_LOOP(_MM_FROUND_TO_ZERO) break;
  case M_UP: LOWP_F16C_LOOP(_MM_FROUND_TO_POS_INF) break;
  default: LOWP_F16C_LOOP(_MM_FROUND_TO_NEG_INF) break; /* M_DN */
  }
  if (i < n) {
    size_t k = n - i;
    memcpy(pad, t + i, k * sizeof *pad);
    f16c_values(pad, pad, 8, mode, nan0, nanx);
    memcpy(y + i, pad, k * sizeof *pad);
  }
}
#undef LOWP_F16C_LOOP

__attribute__((target("avx2"))) static void widen_avx2(double *y, const float *t, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, _mm256_cvtps_pd(_mm_loadu_ps(t + i)));
  for (; i < n; i++) y[i] = (double)t[i];
}

__attribute__((target(LOWP_AVX512_TARGET))) static void
odd32_avx512(float *t, const double *x, size_t n, int daz) {
  const __m512d dmin = _mm512_set1_pd(0x1p-1022);
  const __m512d sign = _mm512_castsi512_pd(_mm512_set1_epi64(INT64_MIN));
  const __m256i one = _mm256_set1_epi32(1);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m512d v = _mm512_loadu_pd(x + i), b;
    __m256i yi;
    __mmask8 ne, aw;
    if (daz)
      v = _mm512_mask_and_pd(v, _mm512_cmp_pd_mask(_mm512_abs_pd(v), dmin, _CMP_LT_OQ), v, sign);
    yi = _mm256_castps_si256(_mm512_cvtpd_ps(v));
    b = _mm512_cvtps_pd(_mm256_castsi256_ps(yi));
    ne = _mm512_cmp_pd_mask(b, v, _CMP_NEQ_UQ);
    aw = _mm512_cmp_pd_mask(_mm512_abs_pd(b), _mm512_abs_pd(v), _CMP_GT_OQ);
    yi = _mm256_mask_sub_epi32(yi, aw, yi, one);
    yi = _mm256_mask_or_epi32(yi, ne, yi, one);
    _mm256_storeu_si256((__m256i *)(void *)(t + i), yi);
  }
  for (; i < n; i++) t[i] = odd32_one(x[i], daz);
}

__attribute__((target(LOWP_AVX512_TARGET))) static void
widen_avx512(double *y, const float *t, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm512_storeu_pd(y + i, _mm512_cvtps_pd(_mm256_loadu_ps(t + i)));
  for (; i < n; i++) y[i] = (double)t[i];
}
#endif

enum { ISA_GENERIC = LOWP_ISA_GENERIC, ISA_AVX2 = LOWP_ISA_AVX2, ISA_AVX512 = LOWP_ISA_AVX512 };

/* The widest copy this CPU runs. AVX-512 is used with BW/VL/DQ (the
   narrowing and masked moves gcc emits for the 8- and 16-bit stores). */
static int pick_isa(void) {
#ifdef LOWP_FAST_X86
  return (int)lowp_cpu_isa(0);
#else
  return ISA_GENERIC;
#endif
}

/* ----------------------------------------------------------- public API */

int lowp_round_fast_applies(const lowp_format_t *f, const lowp_policy_t *pol,
                            lowp_rounding_t rnd) {
  (void)pol; /* every overflow, NaN-sign, NaN-map, FTZ and DAZ policy fits */
  if (!f || lowp_format_validate(f, NULL, 0) != 0) return 0;
  if (lowp_fast_mode(rnd) < 0) return 0;
  /* values a subset of binary32's, with binary32 subnormals below xmin */
  if (f->precision > 23 || f->emax > 127 || f->emin < -126) return 0;
  /* the encoding the arithmetic produces: signed, zero and subnormals in
     field 0, and an encoding that fits the 32-bit lanes */
  if (!f->subnormals || !f->has_sign || !f->has_zero) return 0;
  /* ties-to-even and round-to-odd look at the last significand bit, which
     is the encoding's last bit except for p = 1, where normals have no
     fraction bits (their significand is always 1) */
  if (f->precision == 1 && (rnd == LOWP_RND_NE || rnd == LOWP_RND_TO)) return 0;
  if (lowp_format_width(f) > 32) return 0;
  return 1;
}

int lowp_round_fast_encode_f32(void *bits, const float *x, size_t n,
                               const lowp_format_t *f, const lowp_policy_t *pol,
                               lowp_rounding_t rnd) {
  return lowp_round_fast_encode_f32_isa(bits, x, n, f, pol, rnd, NULL);
}

/* the reference's value of x, as binary32 bits (a value of f: a binary32 one) */
static uint32_t ref_value(float x, const lowp_format_t *f, const lowp_policy_t *pol,
                          lowp_rounding_t rnd) {
  double r = 0;
  float y;
  uint32_t b;
  (void)lowp_round_f32(&r, x, f, pol, rnd);
  y = (float)r;
  memcpy(&b, &y, sizeof b);
  return b;
}

static void make_values(value_consts *v, const lowp_format_t *f, const lowp_policy_t *pol,
                        lowp_rounding_t rnd) {
  const int p = f->precision, q = f->emin - p + 1;
  v->nsh = (uint32_t)(24 - p);
  v->nadd = (uint32_t)(f->emin + 126) << 23;
  v->pm1 = (uint32_t)(p - 1);
  v->ssh = (uint32_t)(q + 149 < 31 ? q + 149 : 31);
  v->thr = -126 - q > 0 ? UINT32_C(1) << (-126 - q) : 1;
  v->sbits = (uint32_t)(q + 150) << 23;
  memcpy(&v->sval, &v->sbits, sizeof v->sval);
  v->negz = f->nan == LOWP_NAN_NEGZERO ? 0 : 0x80000000u; /* (the encoder's negzero) */
  /* the reference's results: FLT_MAX overflows wherever any finite x does
     (the encoding is monotone); its value is used only there */
  v->ovv0 = ref_value(0x1.fffffep127f, f, pol, rnd);
  v->ovvx = v->ovv0 ^ ref_value(-0x1.fffffep127f, f, pol, rnd);
  v->infv0 = ref_value(INFINITY, f, pol, rnd);
  v->infvx = v->infv0 ^ ref_value(-INFINITY, f, pol, rnd);
  v->nanv0 = ref_value(NAN, f, pol, rnd);
  v->nanvx = v->nanv0 ^ ref_value(-NAN, f, pol, rnd);
}

/* loop_samerange's formats and policies */
static int samerange_applies(const lowp_format_t *f, const lowp_policy_t *pol) {
  return f->emin == -126 && f->emax == 127 && f->inf == LOWP_INF_IEEE &&
         f->nan == LOWP_NAN_IEEE && pol->overflow == LOWP_OVF_IEEE && !pol->ftz && !pol->daz;
}

/* ... whose NaN results differ at most in the sign bit, set by x's sign
   (nanvx the sign bit) or not (0), nanv0 positive: loop_samerange's NaN */
static int samerange_nan_ok(const value_consts *v) {
  return (v->nanvx == 0 || v->nanvx == 0x80000000u) && !(v->nanv0 & 0x80000000u);
}

/* The values on the AVX2 and AVX-512 copies, every format of p <= 22 with
   2^(emax + 25 - p) finite in binary32 (fp16, the fp8/fp6/fp4 formats, the
   fnuz ones; not bf16 and tf32, whose loop_samerange is faster still):
   round_fast64.c's rounding by addition in binary32 (round_add.h), 8 or 16
   lanes, about half the encoder's work per element (issue 34: the
   integer value_one path was 1.2-1.5x the encoder there). */
#ifdef LOWP_FAST_X86
#define RA_T float
#define RA_S ps
#define RA_I epi32
#define RA_V2 __m256
#define RA_V5 __m512
#define RA_M5 __mmask16
#define RA_SET1I(v) _mm256_set1_epi32((int)(uint32_t)(v))
#define RA_SET1I5(v) _mm512_set1_epi32((int)(uint32_t)(v))
#define RA_SIGN UINT64_C(0x80000000)
#define RA_EXPM UINT64_C(0x7f800000)
#define RA_REF lowp_round_array_f32_ref
#define RA_AVX512_TARGET LOWP_AVX512_TARGET
#define RA_PFX add32_
#include "format/round_add.h"
#endif

/* 1 when round_add.h's loop ran (the AVX2 or AVX-512 copy, no FTZ/DAZ
   policy nor MXCSR bit, MXCSR to nearest for rne and rna, p <= 22,
   2^(emax + 25 - p) finite in binary32) */
static int values_add32(float *y, const float *x, size_t n, const lowp_format_t *f,
                        const lowp_policy_t *pol, lowp_rounding_t rnd, int use, int mode) {
#ifdef LOWP_FAST_X86
  value_consts v;
  lowp_add_consts a;
  unsigned csr = _mm_getcsr();
  if ((use != ISA_AVX2 && use != ISA_AVX512) || pol->daz || pol->ftz) return 0;
  if (f->precision > 22 || f->emax + 25 - f->precision > 127 || (csr & 0x8040u)) return 0;
  if ((mode == M_NE || mode == M_NA) && (csr & 0x6000u)) return 0;
  make_values(&v, f, pol, rnd);
  lowp_add_consts_make(&a, f, 24, v.ovv0, v.ovv0 ^ v.ovvx, UINT64_C(0x80000000));
  if (use == ISA_AVX512) add32_avx512(y, x, n, &a, f, pol, rnd, mode);
  else add32_avx2(y, x, n, &a, f, pol, rnd, mode);
  return 1;
#else
  (void)y, (void)x, (void)n, (void)f, (void)pol, (void)rnd, (void)use, (void)mode;
  return 0;
#endif
}

/* where values_f16c applies: IEEE binary16 in rne, rtz, rup or rdn on the AVX2 or AVX-512 copy of a CPU
   with F16C, the IEEE overflow policy, no FTZ or DAZ (policy or MXCSR) */
static int f16c_applies(const lowp_format_t *f, const lowp_policy_t *pol, int use, int mode) {
#ifdef LOWP_FAST_X86
  if ((use != ISA_AVX2 && use != ISA_AVX512) || !lowp_cpu_has_f16c()) return 0;
  if (f->precision != 11 || f->emin != -14 || f->emax != 15 || f->inf != LOWP_INF_IEEE ||
      f->nan != LOWP_NAN_IEEE || lowp_format_width(f) != 16)
    return 0;
  if (pol->overflow != LOWP_OVF_IEEE || pol->ftz || pol->daz || (_mm_getcsr() & 0x8040u)) return 0;
  return mode == M_NE || mode == M_TZ || mode == M_UP || mode == M_DN;
#else
  (void)f, (void)pol, (void)use, (void)mode;
  return 0;
#endif
}

/* lowp_round_array_f32's values of fp16 by the CPU's conversion, binary16 and back (f16c_values; the
   second conversion exact), a NaN the reference's: on the AVX2 copy at 2^24 values 0.29 -> 0.21-0.24 ns,
   0.7x -> 0.5x the encoder (bench round --isa avx2). The encoder itself stays the integer one
   (docs/orders-fast.md, round 8: as the instruction, item 5's binary64 values could not come within 1.5x
   of it) */
static int values_f16c(float *y, const float *x, size_t n, const lowp_format_t *f,
                       const lowp_policy_t *pol, lowp_rounding_t rnd, int use, int mode) {
#ifdef LOWP_FAST_X86
  value_consts v;
  if (!f16c_applies(f, pol, use, mode)) return 0;
  make_values(&v, f, pol, rnd);
  if (!samerange_nan_ok(&v)) return 0;
  f16c_values(y, x, n, mode, v.nanv0, v.nanvx);
  return 1;
#else
  (void)y, (void)x, (void)n, (void)f, (void)pol, (void)rnd, (void)use, (void)mode;
  return 0;
#endif
}

/* the encoder (v NULL) or the values on the named copy */
static int fast_run(void *bits, const float *x, size_t n, const lowp_format_t *f,
                    const lowp_policy_t *pol, lowp_rounding_t rnd, const char *isa, int values) {
  static const lowp_policy_t dflt;
  fast_consts c;
  value_consts v;
  int mode = lowp_fast_mode(rnd), width, best = pick_isa(), use = best;
  if (!pol) pol = &dflt;
  if (isa) {
    if ((use = lowp_isa_parse(isa)) < 0) return LOWP_EINVAL;
    /* AVX-512 implies AVX2 on every CPU that has it */
    if (use > best) return LOWP_EUNSUPPORTED;
  }
  if (!lowp_round_fast_applies(f, pol, rnd))
    return values ? lowp_round_array_f32_ref(bits, x, n, f, pol, rnd)
                  : lowp_encode_array_f32_ref(bits, x, n, f, pol, rnd);
  if (values && values_f16c(bits, x, n, f, pol, rnd, use, mode)) return LOWP_OK;
  if (values && values_add32(bits, x, n, f, pol, rnd, use, mode)) return LOWP_OK;
  make_consts(&c, f, pol, mode);
  if (values) make_values(&v, f, pol, rnd);
  if (values && samerange_applies(f, pol) && samerange_nan_ok(&v)) {
    const int sh = 24 - f->precision;
    switch (use) {
#ifdef LOWP_FAST_X86
    case ISA_AVX512: same_avx512(bits, x, n, sh, &v, mode); break;
    case ISA_AVX2: same_avx2(bits, x, n, sh, &v, mode); break;
#endif
    default: same_generic(bits, x, n, sh, &v, mode); break;
    }
    return LOWP_OK;
  }
  width = lowp_format_width(f);
  switch (use) {
#ifdef LOWP_FAST_X86
  case ISA_AVX512: run_avx512(bits, x, n, &c, values ? &v : NULL, width, mode); break;
  case ISA_AVX2: run_avx2(bits, x, n, &c, values ? &v : NULL, width, mode); break;
#endif
  default: run_generic(bits, x, n, &c, values ? &v : NULL, width, mode); break;
  }
  return LOWP_OK;
}

int lowp_round_fast_encode_f32_isa(void *bits, const float *x, size_t n,
                                   const lowp_format_t *f, const lowp_policy_t *pol,
                                   lowp_rounding_t rnd, const char *isa) {
  return fast_run(bits, x, n, f, pol, rnd, isa, 0);
}

/*
 * lowp_round_array_f64's fast path for formats of p <= 22 inside binary32
 * (fp16, bf16, tf32, the fp8/fp6/fp4 formats) on the AVX2 and AVX-512
 * copies: x rounded to odd at binary32 (odd32_*), then the binary32 values
 * path, then widened (exact). Rounding to odd at 24 bits and then to p <= 22
 * bits is rounding once (Boldo and Melquiond, Theorem 1: two extra bits),
 * also in f's subnormal range, where binary32's quantum 2^-149 lies at least
 * two bits below f's 2^(emin - p + 1) >= 2^-147. A binary64 x beyond
 * binary32's range becomes FLT_MAX (odd): for emax < 127 it overflows in f
 * in every mode, as x does; for emax = 127 it overflows in the modes that
 * round away (p <= 22: f's midpoint to 2^128 lies below FLT_MAX) and rounds
 * to xmax in the others, where x's overflow gives xmax too, except under
 * the policy that makes overflow NaN (left to the binary64 path). A tiny x
 * becomes 2^-149 (odd), below half of f's smallest subnormal as x is. The policy's DAZ (binary64
 * subnormal inputs) is applied in the first step, the binary32 step runs
 * without it. Returns 1 when it ran, 0 when it does not apply (another copy,
 * FTZ or DAZ set in MXCSR, or a format the argument does not cover).
 */
int lowp__round_f64_via32(double *y, const double *x, size_t n, const lowp_format_t *f,
                          const lowp_policy_t *pol, lowp_rounding_t rnd, int use) {
#ifdef LOWP_FAST_X86
  enum { BLK = 1024 };
  float t[BLK];
  lowp_policy_t p32 = *pol;
  fast_consts c;
  value_consts v;
  int mode = lowp_fast_mode(rnd), same, hw16;
  size_t i;
  if (use != ISA_AVX2 && use != ISA_AVX512) return 0;
  if ((_mm_getcsr() & 0x8040u) != 0) return 0; /* FTZ (bit 15) or DAZ (bit 6) */
  if (!lowp_round_fast_applies(f, pol, rnd) || f->precision > 22) return 0;
  /* emax = 127 (bf16, tf32): FLT_MAX rounds to xmax in rtz/rto and the
     directed mode toward zero, where an x beyond binary32 overflows; the
     results agree (xmax) unless the policy turns overflow into NaN */
  if (pol->overflow == LOWP_OVF_NAN && f->emax >= 127) return 0;
  p32.daz = 0;
  make_consts(&c, f, &p32, mode);
  make_values(&v, f, &p32, rnd);
  same = samerange_applies(f, &p32) && samerange_nan_ok(&v);
  /* IEEE binary16 in rne/rtz/rup/rdn, default overflow, no FTZ: F16C */
  hw16 = f->precision == 11 && f->emin == -14 && f->emax == 15 && f->inf == LOWP_INF_IEEE &&
         f->nan == LOWP_NAN_IEEE && p32.overflow == LOWP_OVF_IEEE && !p32.ftz &&
         mode != M_NA && mode != M_TO && samerange_nan_ok(&v) && lowp_cpu_has_f16c();
  for (i = 0; i < n; i += BLK) {
    size_t nb = n - i < BLK ? n - i : BLK;
    if (hw16) {
      if (use == ISA_AVX512) odd32_avx512(t, x + i, nb, pol->daz);
      else odd32_avx2(t, x + i, nb, pol->daz);
      f16c_values(t, t, nb, mode, v.nanv0, v.nanvx);
      if (use == ISA_AVX512) widen_avx512(y + i, t, nb);
      else widen_avx2(y + i, t, nb);
    } else if (use == ISA_AVX512) {
      odd32_avx512(t, x + i, nb, pol->daz);
      if (same) same_avx512(t, t, nb, 24 - f->precision, &v, mode);
      else run_avx512(t, t, nb, &c, &v, 32, mode);
      widen_avx512(y + i, t, nb);
    } else {
      odd32_avx2(t, x + i, nb, pol->daz);
      if (same) same_avx2(t, t, nb, 24 - f->precision, &v, mode);
      else run_avx2(t, t, nb, &c, &v, 32, mode);
      widen_avx2(y + i, t, nb);
    }
  }
  return 1;
#else
  (void)y, (void)x, (void)n, (void)f, (void)pol, (void)rnd, (void)use;
  return 0;
#endif
}

int lowp_round_fast_values_f32_isa(float *y, const float *x, size_t n,
                                   const lowp_format_t *f, const lowp_policy_t *pol,
                                   lowp_rounding_t rnd, const char *isa) {
  return fast_run(y, x, n, f, pol, rnd, isa, 1);
}

const char *lowp_round_fast_isa(void) {
  return lowp_isa_name((lowp_isa_t)pick_isa());
}
