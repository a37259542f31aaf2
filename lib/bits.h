/* lowp_bitlen64 -- the bit length of an unsigned integer (tensor-core models and their fast kernels) */
#ifndef LOWP_BITS_H
#define LOWP_BITS_H

#include <stdint.h>

/** @brief The number of bits of v (0 for 0): the position of its leading one plus one. */
static inline int lowp_bitlen64(uint64_t v) {
#if defined(__GNUC__)
  return v ? 64 - __builtin_clzll(v) : 0;
#else
  int n = 0;
  while (v) {
    v >>= 1;
    n++;
  }
  return n;
#endif
}

#endif
