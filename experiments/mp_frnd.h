/* mp_frnd.h -- matmul-precision's roundings of an fp32 value to a narrower format F, branch-free (so that
   its emulated GEMM vectorises): the general one and two cheaper ones, each the same values and flags
   where it is used (tests/long/tmp_frnd_exhaustive.c: every fp32 value, every format of the experiment) */
#ifndef LOWP_MP_FRND_H
#define LOWP_MP_FRND_H

#include "format/format.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  int round;      /* 0: the fp32 operation is the kernel's (fp32 itself, or exact products) */
  int exact;      /* 0: frnd cannot round to F (no subnormals: it would round below 2^emin as if F had them) */
  int way;        /* how frnd rounds: FR_GEN, FR_WIDE or FR_NARROW (frnd_init) */
  int under;      /* 1: a product of two F values may fall below fp32's normal range (it is tested) */
  uint32_t drop;  /* 24 - p: significand bits an F value lacks */
  float xmin;     /* 2^emin of F: below it the quantum is fixed */
  float magic;    /* 1.5 * 2^(q + 23), q = emin - p + 1: (x + magic) - magic rounds x to a multiple of 2^q */
  float xmax;     /* largest finite F value: above it the reference decides (inf, saturation) */
  uint32_t ebmin; /* FR_NARROW: fp32's exponent field of 2^emin, in place */
  uint32_t ebcap; /* FR_NARROW: the largest exponent field whose magic number is finite, in place */
  uint32_t mofs;  /* FR_NARROW: the exponent field plus mofs is the magic number of that binade */
} frnd_t;

/* The ways frnd rounds an fp32 value x to F (the same values, and the same
   flags, every way; each kernel gets the cheapest that holds for F):
   FR_GEN     the significand's bits rounded off (ties to even) at and above
              2^emin, (x + magic) - magic below it, a blend of the two;
   FR_WIDE    F's emin is fp32's (bf16, tf32): the bit rounding alone, which
              rounds fp32's subnormals at F's own quantum 2^(emin - p + 1)
              as well (a value fp32 holds there is a multiple of 2^-149);
   FR_NARROW  F's range lies well inside fp32's (fp16, the fp8s): one magic
              number per binade, 1.5 * 2^(max(e, emin) - p + 24), built from
              x's exponent field: (x + M) - M is x rounded to nearest even at
              the quantum 2^(max(e, emin) - p + 1) of its binade in F (x + M
              stays in M's binade, whose ulp is that quantum; M is an even
              multiple of it, so ties go to even). The exponent field is capped
              where M would overflow: such x are far beyond F's range and are
              flagged all the same. Products of two F values are then never
              below fp32's normal range when F's smallest subnormal squared is
              at least 2^-126 (under = 0: the test is left out). */
enum { FR_GEN = 0, FR_WIDE = 1, FR_NARROW = 2 };

static inline void frnd_init(frnd_t *t, const lowp_format_t *f) {
  const int p = f->precision, p32 = LOWP_FMT_FP32.precision;
  const long cap = 254 - (p32 - p) - 127; /* the largest e whose magic 1.5 * 2^(e - p + 24) is finite */
  memset(t, 0, sizeof *t);
  t->round = p < p32;
  t->exact = !t->round || f->subnormals;
  t->drop = (uint32_t)(p32 - p);
  t->xmin = (float)lowp_format_xmin(f);
  t->magic = (float)ldexp(1.5, f->emin - p + 1 + p32 - 1);
  t->xmax = (float)lowp_format_xmax(f);
  /* smallest positive product of two F values: 2^(2 (emin - p + 1)) with subnormals, 2^(2 emin) without */
  t->under = 2L * (f->emin - (f->subnormals ? p - 1 : 0)) < LOWP_FMT_FP32.emin;
  t->way = FR_GEN;
  if (!t->round || !f->subnormals) return;
  if (f->emin == LOWP_FMT_FP32.emin)
    t->way = FR_WIDE;
  else if (f->emin > LOWP_FMT_FP32.emin && f->emax + 1 < cap && !t->under) {
    t->way = FR_NARROW;
    t->ebmin = (uint32_t)(f->emin + 127) << 23;
    t->ebcap = (uint32_t)(cap + 127) << 23;
    t->mofs = ((uint32_t)(p32 - p) << 23) | 0x00400000u;
  }
}

/* u (an fp32 value's bits) with its d low bits rounded off to nearest even: add half an ulp of F minus
   one, plus the kept lsb, and clear the dropped bits (a carry into the exponent is the right result) */
static inline __attribute__((always_inline)) uint32_t frnd_bits(uint32_t u, uint32_t d) {
  u += ((1u << (d - 1)) - 1u) + ((u >> d) & 1u);
  return u & ~((1u << d) - 1u);
}

/* x (an fp32 value) rounded to nearest even in F, branch-free (so that the
   loops vectorise). The normal range: frnd_bits. Below xmin: (x + magic) -
   magic, fp32's own rounding at 2^q. */
static inline __attribute__((always_inline)) float frnd_gen_noflag(float x, uint32_t d, float xmin, float magic) {
  uint32_t u, v, m;
  float y, z;
  memcpy(&u, &x, sizeof u);
  u = frnd_bits(u, d);
  z = (x + magic) - magic;
  memcpy(&v, &z, sizeof v);
  m = 0u - (uint32_t)(fabsf(x) < xmin);
  u = (u & ~m) | (v & m);
  memcpy(&y, &u, sizeof y);
  return y;
}

/* frnd_gen_noflag, and *bad |= 1 when the result is beyond F's finite range
   (the reference kernel then decides: infinity or saturation) */
static inline __attribute__((always_inline)) float frnd(float x, uint32_t d, float xmin, float magic, float xmax, int *bad) {
  float y = frnd_gen_noflag(x, d, xmin, magic);
  *bad |= fabsf(y) > xmax;
  return y;
}

/* FR_WIDE's rounding: the bit rounding alone */
static inline __attribute__((always_inline)) float frnd_wide_noflag(float x, uint32_t d) {
  uint32_t u;
  float y;
  memcpy(&u, &x, sizeof u);
  u = frnd_bits(u, d);
  memcpy(&y, &u, sizeof y);
  return y;
}

/* frnd for FR_WIDE */
static inline __attribute__((always_inline)) float frnd_wide(float x, uint32_t d, float xmax, int *bad) {
  float y = frnd_wide_noflag(x, d);
  *bad |= fabsf(y) > xmax;
  return y;
}

/* (x + M) - M with M the float whose bits are e: FR_NARROW's rounding in M's binade */
static inline __attribute__((always_inline)) float frnd_narrow_at(float x, uint32_t e) {
  float m;
  memcpy(&m, &e, sizeof m);
  return (x + m) - m;
}

/* FR_NARROW's rounding without the cap on the exponent field, for x below 2^cap (cap as in frnd_init) */
static inline __attribute__((always_inline)) float frnd_narrow_nocap(float x, uint32_t ebmin, uint32_t mofs) {
  uint32_t u, e;
  memcpy(&u, &x, sizeof u);
  e = u & 0x7f800000u;
  e = e < ebmin ? ebmin : e;
  return frnd_narrow_at(x, e + mofs);
}

/* frnd for FR_NARROW: the magic number of x's binade */
static inline __attribute__((always_inline)) float frnd_narrow(float x, uint32_t ebmin, uint32_t ebcap, uint32_t mofs,
                                                               float xmax, int *bad) {
  uint32_t u, e;
  float y;
  memcpy(&u, &x, sizeof u);
  e = u & 0x7f800000u;
  e = e < ebmin ? ebmin : e;
  e = e > ebcap ? ebcap : e;
  y = frnd_narrow_at(x, e + mofs);
  *bad |= fabsf(y) > xmax;
  return y;
}

#endif
