/* amax_bits -- the largest |x_i| of binary32 values as a bit pattern, vectorised (shared by the quantizers) */
#ifndef LOWP_FORMAT_AMAX_BITS_H
#define LOWP_FORMAT_AMAX_BITS_H

#include "cpu.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* max |x_i| (i < n) as a bit pattern, sign cleared (0 for n = 0). For binary32 values that are not NaN the
   magnitudes order as these patterns do (+0 = 0 ... +inf = 0x7f800000), and every NaN's pattern lies above
   +inf's: the result is above 0x7f800000 exactly when some x_i is NaN, 0x7f800000 when the largest is an
   infinity, and otherwise max |x_i|'s own pattern. The patterns are below 2^31, so a signed maximum
   orders them too (SSE2 has pcmpgtd and no unsigned comparison; AVX2 and AVX-512 have both): one and
   and one maximum a value, vectorised in every copy a caller compiles it into. */
static LOWP_ALWAYS_INLINE uint32_t lowp__amax_bits_body(const float *x, size_t n) {
  int32_t m = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    uint32_t u;
    int32_t b;
    memcpy(&u, &x[i], sizeof u);
    b = (int32_t)(u & 0x7fffffffu);
    m = b > m ? b : m;
  }
  return (uint32_t)m;
}

/* lowp__amax_bits_body compiled for the baseline, AVX2 and AVX-512, the copy chosen by lowp_cpu_isa */
uint32_t lowp__amax_bits(const float *x, size_t n);

#endif
