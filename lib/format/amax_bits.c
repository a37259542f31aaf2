/* lowp__amax_bits -- format/amax_bits.h's loop, one copy per instruction set */

#include "format/amax_bits.h"

static uint32_t amax_bits_generic(const float *x, size_t n) { return lowp__amax_bits_body(x, n); }
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target("avx2"))) static uint32_t amax_bits_avx2(const float *x, size_t n) {
  return lowp__amax_bits_body(x, n);
}
__attribute__((target("avx512f"))) static uint32_t amax_bits_avx512(const float *x, size_t n) {
  return lowp__amax_bits_body(x, n);
}
uint32_t lowp__amax_bits(const float *x, size_t n) {
  lowp_isa_t isa = lowp_cpu_isa(0);
  return isa == LOWP_ISA_AVX512 ? amax_bits_avx512(x, n) : isa == LOWP_ISA_AVX2 ? amax_bits_avx2(x, n)
                                                                                  : amax_bits_generic(x, n);
}
#else
uint32_t lowp__amax_bits(const float *x, size_t n) { return amax_bits_generic(x, n); }
#endif
