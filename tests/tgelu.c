/* tgelu -- lowp_gelu_tanh_f32: every ISA copy gives the bits of the scalar definition (libm tanh, binary64) */

/*
 * kernels/train/gelu.c's vector copies take tanh from their own code (AVX2) or glibc's libmvec (AVX-512)
 * and keep a lane only where a margin proves it rounds as the reference does. This test recomputes the
 * definition here (separate binary64 roundings through volatile: no contraction) and compares every copy this CPU runs (the
 * baseline, AVX2, AVX-512) on: every 4099th binary32 bit pattern, both signs (2.1 million inputs); every
 * binary32 in [-8, -2] (where 1 + tanh cancels and the copies must fall back) and in [-2^-10, 2^-10] step
 * 2^-30 (near zero); and the specials (+-0, +-inf, NaN, the largest and smallest). A NaN result
 * needs only be a NaN. The [-8, -2] sweep and the specials run in place (y = x) as well. With
 * LOWP_GELU_ALL=1 (ctest's tgelu_all, label long) every one of the 2^32
 * inputs instead of the samples.
 * Run: ctest --test-dir build -R '^tgelu$'        ctest --test-dir build -L long -R tgelu_all
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/karith.h"
#include "cpu.h"
#include "testutil.h"
#include "train/gelu.h"

/* the definition: 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))) in binary64, rounded once */
static uint32_t oracle(float u) {
  volatile double d = u, k = 0.044715, c = 0.7978845608028654, p, a, s, y;
  p = k * d;
  p = p * d;
  p = p * d;
  a = c * (d + p);
  s = 1.0 + tanh(a);
  y = 0.5 * d;
  y = y * s;
  return lowp_ka_bits((float)y);
}

#define CHUNK 65536

/* inputs x[0..n): every copy against the oracle (in place too, y = x, where inplace is set: a lane the
   copy sends to the definition reads its input after the vector store); returns the number of
   differences */
static long long check(const float *x, size_t n, float *y, uint32_t *ref, const char *what, int inplace) {
  static const char *const names[3] = {"generic", "avx2", "avx512"};
  const int ncpu = (int)lowp_cpu_isa(0);
  long long bad = 0;
  size_t i;
  int pass;
  for (i = 0; i < n; i++) ref[i] = oracle(x[i]);
  for (pass = 0; pass <= (inplace ? 2 * ncpu + 1 : ncpu); pass++) {
    int isa = pass % (ncpu + 1), alias = pass > ncpu;
    if (alias) {
      memcpy(y, x, n * sizeof *y);
      lowp_gelu_tanh_f32_isa(y, y, n, (lowp_isa_t)isa);
    } else
      lowp_gelu_tanh_f32_isa(y, x, n, (lowp_isa_t)isa);
    for (i = 0; i < n; i++)
      if (lowp_ka_bits(y[i]) != ref[i] && !(isnan(y[i]) && (ref[i] & 0x7fffffffu) > 0x7f800000u)) {
        if (bad < 3)
          printf("  %s%s, %s: gelu(%a) = 0x%08x, the definition 0x%08x\n", names[isa], alias ? " in place" : "",
                 what, (double)x[i], lowp_ka_bits(y[i]), ref[i]);
        bad++;
      }
  }
  return bad;
}

/* bit patterns [lo, hi) step 'step', both signs when 'both' */
static long long sweep(uint64_t lo, uint64_t hi, uint64_t step, int both, const char *what, long long *n,
                       int inplace) {
  long long bad = 0;
  long c, nc = (long)(((hi - lo + step - 1) / step + CHUNK - 1) / CHUNK);
#pragma omp parallel for schedule(dynamic) reduction(+ : bad)
  for (c = 0; c < nc; c++) {
    float x[CHUNK], y[CHUNK];
    uint32_t ref[CHUNK];
    size_t m = 0;
    uint64_t b;
    int s;
    for (s = 0; s < (both ? 2 : 1); s++) {
      m = 0;
      for (b = lo + (uint64_t)c * CHUNK * step; b < hi && m < CHUNK; b += step)
        x[m++] = lowp_ka_float((uint32_t)b | (s ? 0x80000000u : 0u));
      bad += check(x, m, y, ref, what, inplace);
    }
  }
  *n += (long long)((hi - lo + step - 1) / step) * (both ? 2 : 1);
  return bad;
}

int main(void) {
  long long n = 0, bad;
  float sp[12], y[12];
  uint32_t ref[12];
  lowp_test_start("tgelu");
  if (getenv("LOWP_GELU_ALL")) {
    bad = sweep(0, 1ull << 31, 1, 1, "every input", &n, 0);
    lowp_test_check(bad == 0, "all %lld binary32 inputs: every copy equals the definition (%lld differ)", n,
                    bad);
    return lowp_test_end();
  }
  bad = sweep(0, 1ull << 31, 4099, 1, "every 4099th", &n, 0);
  lowp_test_check(bad == 0, "every 4099th bit pattern, both signs (%lld inputs): %lld differ", n, bad);
  n = 0;
  bad = sweep(lowp_ka_bits(2.0f) | 0x80000000u, lowp_ka_bits(8.0f) + 1u + 0x80000000u, 7, 0, "[-8, -2]", &n, 1);
  lowp_test_check(bad == 0, "every 7th binary32 in [-8, -2] (%lld inputs, also in place): %lld differ", n, bad);
  n = 0;
  bad = sweep(lowp_ka_bits(0x1p-30f), lowp_ka_bits(0x1p-10f) + 1, 61, 1, "near zero", &n, 0);
  lowp_test_check(bad == 0, "every 61st binary32 with 2^-30 <= |u| <= 2^-10 (%lld inputs): %lld differ", n, bad);
  sp[0] = 0.0f; sp[1] = -0.0f; sp[2] = INFINITY; sp[3] = -INFINITY; sp[4] = NAN; sp[5] = 3.4028235e38f;
  sp[6] = -3.4028235e38f; sp[7] = 0x1p-149f; sp[8] = -0x1p-149f; sp[9] = 1.0f; sp[10] = -1.0f; sp[11] = -4.0f;
  lowp_test_check(check(sp, 12, y, ref, "specials", 1) == 0, "+-0, +-inf, NaN, +-max, +-min, +-1, -4");
  return lowp_test_end();
}
