/* lowp__pow2 -- exact scaling by powers of two without libm (internal) */
#ifndef LOWP_POW2_H
#define LOWP_POW2_H

/*
 * ldexp is a libm call that handles every overflow, underflow and errno
 * case; the rounding core only ever scales exactly representable results,
 * so these two inline helpers build the power of two from its bits
 * instead (about a third of the scalar conversion time went to ldexp).
 * Internal to lib/format: not part of the public API.
 */

#include <stdint.h>
#include <string.h>

/* 2^e for -1022 <= e <= 1023 (binary64 normal range) */
static inline double lowp__pow2(int e) {
  uint64_t u = (uint64_t)(e + 1023) << 52;
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* m * 2^q, exact whenever the result is a binary64 value (finite, and a
   multiple of 2^-1074) and |m| < 2^64: below the normal range the scaling
   is split so that the first product is exact and the second one, being
   representable, is too. Requires -1074-64 <= q <= 1023+64. */
static inline double lowp__scale2(double m, int q) {
  if (q >= -1022 && q <= 1023) return m * lowp__pow2(q);
  if (q < -1022) return (m * lowp__pow2(q + 512)) * lowp__pow2(-512);
  return (m * lowp__pow2(q - 512)) * lowp__pow2(512);
}

/* ilogb(x) = floor(log2 |x|) for finite x != 0, from the exponent field: a normal x's is that
   exponent plus 1023; a subnormal x is first scaled by 2^64 (exact, and normal: |x| >= 2^-1074) */
static inline int lowp__ilogb(double x) {
  uint64_t u;
  int e;
  memcpy(&u, &x, sizeof u);
  e = (int)(u >> 52 & 0x7ff);
  if (e != 0) return e - 1023;
  x *= lowp__pow2(64);
  memcpy(&u, &x, sizeof u);
  return (int)(u >> 52 & 0x7ff) - 1023 - 64;
}

#endif
