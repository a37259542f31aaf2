/* tcuda_sample -- lowp against the CUDA 13 headers' host conversions, on a sample */

/*
 * Every binary32 exponent field with the significands that sit on, next to
 * and halfway between the values of every precision 1..23 (so every binade
 * edge and every midpoint of every target format), both signs, infinities
 * and NaNs with several payloads; then a seeded random sample of bit
 * patterns. Each input goes through every case of tests/common/cudacmp.hpp
 * (fp16 and bf16 in rn/rz/ru/rd, e4m3 and e5m2 with and without
 * saturation, e2m3/e3m2/e2m1 in rn/rz, e8m0 in rz/rp with and without
 * saturation), and lowp's bits must equal CUDA's. The exhaustive version is
 * tests/long/tcuda_exhaustive.cpp.
 *
 * Also checked: lowp's *default* policy differs from CUDA exactly where
 * docs/formats.md says (the NaN sign of fp16/bf16), and nowhere else on
 * these inputs.
 *
 * Build: g++ with -I/usr/local/cuda/include (CMake does it; no GPU needed).
 * Run:   ctest --test-dir build -R tcuda_sample
 */

#include "cudacmp.hpp"

extern "C" {
#include "rng/rng.h"
}

static float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

/* The boundary patterns: exponent field E, significand s. */
static long boundary(cuda_tally_t *t) {
  static const int32_t deltas[] = {-2, -1, 0, 1, 2};
  long n = 0;
  for (uint32_t sign = 0; sign < 2; sign++)
    for (uint32_t e = 0; e < 256; e++)
      for (int k = 0; k <= 23; k++) {
        /* h: half an ulp of precision k+1 (k fraction bits); also the
           odd-significand midpoint h|2h, the ulp 2h and the binade top */
        uint32_t h = k < 23 ? UINT32_C(1) << (22 - k) : 0;
        uint32_t anchors[5] = {0, h, h | (h << 1), h << 1, 0x7fffff};
        for (int a = 0; a < 5; a++)
          for (int d = 0; d < 5; d++) {
            int64_t s = (int64_t)anchors[a] + deltas[d];
            if (s < 0 || s > 0x7fffff) continue;
            cuda_compare_one(from_bits((sign << 31) | (e << 23) | (uint32_t)s), t, 1);
            n++;
          }
      }
  return n;
}

/* lowp's default policy (keep the NaN sign) against CUDA fp16, bf16 and
   fp8 from binary32 (which drop it): they differ on negative NaNs only. */
static void default_policy_differences(void) {
  const float xs[] = {-NAN, NAN, -INFINITY, 1e30f, -1e30f, 65520.0f, -0.0f};
  for (const float x : xs)
    for (size_t k = 0; k < 12; k++) { /* fp16, bf16, fp8 cases */
      const cuda_case_t *c = &cuda_cases[k];
      lowp_policy_t pol;
      double y;
      uint64_t b = 0;
      std::memset(&pol, 0, sizeof pol); /* default NaN sign: keep */
      pol.overflow = c->overflow;
      (void)lowp_round_f32(&y, x, c->f, &pol, c->rnd);
      (void)lowp_encode(&b, y, c->f);
      int differ = b != c->cuda(x);
      int expect = std::isnan(x) && std::signbit(x);
      lowp_test_check(differ == expect, "%s default policy, x=%a: lowp 0x%llx CUDA 0x%x (%s)",
                      c->name, (double)x, (unsigned long long)b, c->cuda(x),
                      expect ? "expected to differ" : "expected to agree");
    }
}

int main(void) {
  cuda_tally_t t;
  std::memset(&t, 0, sizeof t);
  lowp_test_start("tcuda_sample");
  long nb = boundary(&t);
  /* NaNs with payloads (quiet and signalling, both signs) */
  const uint32_t nans[] = {0x7fc00000, 0x7fa00000, 0x7f800001, 0x7fffffff, 0x7fe00000,
                           0xffc00000, 0xff800001, 0xffffffff, 0xffa00000};
  for (const uint32_t u : nans) cuda_compare_one(from_bits(u), &t, 1);
  /* seeded random sample of bit patterns */
  const long nrand = 1000000; /* pairs: 2 million random inputs */
  lowp_rng_t r;
  lowp_rng_init(&r, lowp_test_seed(), 7);
  for (long i = 0; i < nrand; i++) {
    uint64_t v = lowp_rng_next(&r);
    cuda_compare_one(from_bits((uint32_t)v), &t, 1);
    cuda_compare_one(from_bits((uint32_t)(v >> 32)), &t, 1);
  }
  std::printf("tcuda_sample: %ld boundary inputs, %ld random inputs\n", nb, 2 * nrand);
  cuda_report(&t);
  default_policy_differences();
  return lowp_test_end();
}
