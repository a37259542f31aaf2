/* lowp acc_steps -- the rounding steps of the fast accumulation kernels */

/* Private to kernels/cpu (gemm_acc_fast.c, reduce_fast.c), always inlined.
   What they compute and why it is exact: gemm_acc_fast.c's opening comment. */

#ifndef LOWP_ACC_STEPS_H
#define LOWP_ACC_STEPS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define AI static inline __attribute__((always_inline))

enum { M_NE, M_TZ, M_UP, M_DN };

/* A target format as the kernels read it. */
typedef struct {
  int p, emin, mode;
  double xmax;
  int bf16; /* exactly bf16 (RO32: rounded on the binary32 bits) */
  int fp16; /* exactly fp16 (RO32 on AVX-512: vcvtps2ph) */
} tgt_t;

/* ------------------------------------------------------- the scalar steps */

AI uint64_t bits_of(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

AI double dbl_of(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* all ones where c holds, else 0; and a select by such a mask: plain
   integer operations, so gcc if-converts and vectorises the loops */
AI uint64_t mask(int c) { return (uint64_t)0 - (uint64_t)(c != 0); }

AI double sel(uint64_t m, double a, double b) {
  return dbl_of((bits_of(a) & m) | (bits_of(b) & ~m));
}

#define SIGN ((uint64_t)1 << 63)

/* x (exact, or rounded to odd at 53 bits) rounded once to t, in mode */
AI double round_to(double x, int p, int emin, double xmax, int mode) {
  uint64_t u = bits_of(x), sg = u & SIGN;
  int64_t e = (int64_t)((u >> 52) & 0x7ff) - 1023;
  int64_t q = (e > emin ? e : emin) - (p - 1);
  double sigma = dbl_of(((uint64_t)(q + 1075) << 52) | ((uint64_t)1 << 51));
  double r = (x + sigma) - sigma, ulp = dbl_of((uint64_t)(q + 1023) << 52), d = x - r;
  int neg = (int)(u >> 63), fin = ((u >> 52) & 0x7ff) != 0x7ff;
  uint64_t away;
  /* bitwise, never short-circuit: mode may vary at run time (products) */
  int up = (mode == M_UP) | ((mode == M_TZ) & neg), dn = (mode == M_DN) | ((mode == M_TZ) & !neg);
  r = sel(mask((d > 0) & up), r + ulp, r);
  r = sel(mask((d < 0) & dn), r - ulp, r);
  r = sel(mask(r == 0), dbl_of(sg), r);
  away = mask((mode == M_NE) | ((mode == M_UP) & !neg) | ((mode == M_DN) & neg));
  r = sel(mask(fabs(r) > xmax), dbl_of(sg | bits_of(sel(away, INFINITY, xmax))), r);
  return sel(mask(fin), r, x);
}

/* s + p rounded to odd at 53 bits (exact when binary64 holds it) */
AI double add_odd(double s, double p, int mode) {
  double t = s + p, bb = t - s, err = (s - (t - bb)) + (p - bb);
  uint64_t ut = bits_of(t);
  int fin = ((ut >> 52) & 0x7ff) != 0x7ff;
  /* one step toward err: +1 on the magnitude when err has t's sign, else -1 */
  uint64_t step = (uint64_t)1 | ((uint64_t)0 - ((ut ^ bits_of(err)) >> 63));
  ut += step & mask(fin & (err != 0) & !(ut & 1));
  /* an exact zero: rdn gives -0 unless both terms are +0 (IEEE 754 6.3) */
  if (mode == M_DN) ut = (ut & ~mask(t == 0)) | ((bits_of(s) | bits_of(p)) & SIGN & mask(t == 0));
  return dbl_of(ut);
}

/* The same steps on 8 lanes with GCC/clang vector extensions (every
   operation lane-wise IEEE binary64 or 64-bit integer; the autovectoriser
   gave up on the scalar form's bit casts). Comparisons give 0 / -1 lanes. */
#if defined(__GNUC__)
/* the helpers below are always inlined: no vector crosses a call boundary
   (gcc and clang both warn about the ABI of 64-byte vector arguments) */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
typedef double vd __attribute__((vector_size(64)));
typedef int64_t vi __attribute__((vector_size(64)));
typedef uint64_t vu __attribute__((vector_size(64)));
#define VW 8

/* x in every lane; (vd){0} + x would turn -0 into +0 */
AI vd vsplat(double x) { return (vd){x, x, x, x, x, x, x, x}; }

AI vd vsel(vi m, vd a, vd b) { return (vd)(((vi)a & m) | ((vi)b & ~m)); }

AI vi vall(int c) { return (vi){0} - (int64_t)(c != 0); }

/* -1 where x != 0, for lanes 0 <= x < 2^63, by arithmetic: gcc scalarised
   the same test written as several comparisons joined by & */
AI vi vnz(vi x) { return (x | -x) >> 63; }

AI vd vround_to(vd x, const tgt_t *t) {
  const vi sgn = (vi){0} + INT64_MIN;
  vi u = (vi)x, sg = u & sgn, neg = u >> 63, eb = (u >> 52) & 0x7ff;
  vi e = eb - 1023, emin = (vi){0} + t->emin, big, q;
  vd sigma, r, ulp, d, ovv;
  int mode = t->mode;
  big = e > emin;
  q = ((e & big) | (emin & ~big)) - (t->p - 1);
  sigma = (vd)(((vu)(q + 1075) << 52) | ((uint64_t)1 << 51));
  r = (x + sigma) - sigma;
  ulp = (vd)((vu)(q + 1023) << 52);
  d = x - r;
  r = vsel((d > 0) & (vall(mode == M_UP) | (vall(mode == M_TZ) & neg)), r + ulp, r);
  r = vsel((d < 0) & (vall(mode == M_DN) | (vall(mode == M_TZ) & ~neg)), r - ulp, r);
  r = vsel(~vnz((vi)r & ~sgn), (vd)sg, r);
  ovv = vsel(vall(mode == M_NE) | (vall(mode == M_UP) & ~neg) | (vall(mode == M_DN) & neg),
             (vd){0} + INFINITY, (vd){0} + t->xmax);
  ovv = (vd)((vi)ovv | sg);
  r = vsel((vd)((vi)r & ~sgn) > t->xmax, ovv, r);
  return vsel(eb != 0x7ff, r, x);
}

AI vd vadd_odd(vd s, vd p, int mode) {
  const vi sgn = (vi){0} + INT64_MIN;
  vd t = s + p, bb = t - s, err = (s - (t - bb)) + (p - bb);
  vi ut = (vi)t, step = 1 | ((ut ^ (vi)err) >> 63);
  vi fin = (((ut >> 52) & 0x7ff) + 1) >> 11; /* 1 for inf/NaN, else 0 */
  ut += step & (fin - 1) & vnz((vi)err & ~sgn) & ((ut & 1) - 1);
  if (mode == M_DN) {
    vi z = ~vnz((vi)t & ~sgn);
    ut = (ut & ~z) | (((vi)s | (vi)p) & sgn & z);
  }
  return (vd)ut;
}

/* the positive quiet NaN for any NaN (exact/acc.c rounds NAN) */
AI double canon(double x) { return x != x ? NAN : x; }

#endif
