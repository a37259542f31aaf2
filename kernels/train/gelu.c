/* lowp_gelu_tanh_f32 -- the ViT's GELU (tanh form) over an fp32 array, vectorised, the same bits as the scalar form */

/*
 * The reference, in binary64: a = C (u + ((k u) u) u), t = tanh(a) (libm), s = 1 + t, y = (0.5 u) s,
 * rounded once to binary32 (C = sqrt(2/pi), k = 0.044715; -ffp-contract=off, so no FMA anywhere).
 * Profiled in `lowp run fp8-quantization --quick` (perf, AMD Zen 5), libm's tanh and the expm1 it calls
 * were 25% of the time.
 *
 * The vector copies compute a, s and y with the same operations in the same order, but t' = tanh(a) from
 * their own tanh, whose results may differ from libm's in the last bits. A lane's float is kept only
 * where it provably equals the reference's: the binary32 rounding is monotone, so if no binary32
 * rounding boundary (a midpoint between two floats) lies within a bound on |y - y'| of y', y rounds as
 * y' does. Each copy its bound and its test:
 *   - AVX-512, t' from glibc's libmvec (_ZGVeN8v_tanh; glibc >= 2.35): assume |t - t'| <= 2^-46.9 (66
 *     units in the last place of a number below 1: libm's tanh is within 2 and libmvec's within 4 of the
 *     exact value, glibc's documented bounds; the margin is 11x libmvec's); then |s - s'| <= 2^-46.9 +
 *     2^-52 (one rounding of each sum) < 2^-46.8, and where s' >= 2^-12, |s - s'| / s' < 2^-34.8; the
 *     product's rounding in each adds 2^-53 relative, so |y - y'| < 2^-34.7 |y'| < m = 2^-34 |y'|; kept
 *     where y' - m and y' + m (each computed with one rounding, which moves it by less than 2^-53 |y'|,
 *     inside the slack) round to the same float.
 *   - AVX2, t' from exp2abs4_avx2 and tanh4_from_exp below (AVX2 and FMA), within 2^-50.2 of the exact value:
 *     with libm's 2 units (2^-52), |t - t'| < 2^-49.8, |s - s'| < 2^-49.8 + 2^-52 < 2^-49.5, and where
 *     s' >= 2^-15, |s - s'| / s' < 2^-34.5 and |y - y'| < 2^-34.4 |y'|. Kept where 2^-126 <= |y'| <
 *     2^128 (a normal binary32 magnitude; E = floor(log2 |y'|)) and the low 29 bits of y''s significand
 *     (what lies below binary32's last place) are more than 2^19 from 2^28, the midpoint: the nearest
 *     midpoint in y''s binade is then more than 2^19 2^(E - 52) = 2^(E - 33) > 2^-34.4 |y'| away, those
 *     of the binades around it at least 2^(E - 25) beyond its ends (the overflow threshold FLT_MAX + ulp / 2
 *     is binade 127's top midpoint). A few integer operations on y''s bits instead of three roundings
 *     to binary32 (the test's bound is the AVX-512 copy's 2^-34 |y'| give or take a factor of 2: the
 *     better tanh lowers the cancellation limit from 2^-12 to 2^-15 instead).
 * Lanes that fail this (s' below the limit, that is u below about -3.3 at AVX-512 and -4.03 at AVX2,
 * where 1 + t cancels: 0.67% and 0.18% of the ViT's GELU inputs in fp8-quantization; a rounding boundary
 * within the bound, about 2^-9 of the others; at AVX2 zero and binary32 subnormal results; NaN and
 * infinities) are computed by the reference. tests/tgelu.c compares every copy with the reference
 * (tgelu_all, label long: on all 2^32 inputs).
 */

#include "train/gelu.h"

#include "cpu.h"
#include "omp_inline.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define GELU_C 0.7978845608028654 /* sqrt(2 / pi) */
#define GELU_K 0.044715

float lowp_gelu_tanh_ref(float u) {
  double t = tanh(GELU_C * ((double)u + GELU_K * (double)u * u * u));
  return (float)(0.5 * u * (1.0 + t));
}

static void gelu_base(float *y, const float *x, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) y[i] = lowp_gelu_tanh_ref(x[i]);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define LOWP_GELU_X86 1
#include "train/exp4_avx2.h"

#include <immintrin.h>

/* tanh |a| = 1 - 2 / (1 + e^x), x = 2 |a| (the sign of a, that of u as a = C u (1 + k u^2), put back),
   from e' = lowp__exp4_avx2(min(x, 40)) = e^x (1 + d), |d| < 8.2e-16 (train/exp4_avx2.h): 2 / (1 + e')
   moves by at most |d| 2 e / (1 + e)^2 <= |d| / 2 < 4.1e-16, and the three roundings of 1 + e', the
   quotient (at most 1: e >= 1) and 1 - q add at most 3 2^-53 < 3.4e-16: |t - t'| < 7.5e-16 < 2^-50.2
   (the degree-12 tanh this replaces: 2^-49). Beyond x = 40, 1 - tanh < 2^-56 and the result is 1 (as
   the exact one rounds). A NaN a (only from a NaN u) gives x = 40 (min returns its second operand):
   y' is the NaN of u, which the check sends to the definition. (A reciprocal approximation with three
   Newton steps instead of the division: 20% slower.) tests/tgelu.c compares the copy with libm's
   definition (tgelu_all: every binary32 input). */
__attribute__((target("avx2,fma"))) static __m256d exp2abs4_avx2(__m256d a) {
  const __m256d sign = _mm256_set1_pd(-0.0), xmax = _mm256_set1_pd(40.0);
  return lowp__exp4_avx2(_mm256_min_pd(_mm256_andnot_pd(sign, _mm256_add_pd(a, a)), xmax));
}

/* tanh a from e' = exp2abs4_avx2(a) and u (a's sign) */
__attribute__((target("avx2,fma"))) static __m256d tanh4_from_exp(__m256d e, __m256d u) {
  const __m256d sign = _mm256_set1_pd(-0.0), two = _mm256_set1_pd(2.0), one = _mm256_set1_pd(1.0);
  __m256d t = _mm256_sub_pd(one, _mm256_div_pd(two, _mm256_add_pd(one, e)));
  return _mm256_or_pd(t, _mm256_and_pd(u, sign));
}

enum { GELU_BLK = 256 };

/* Three passes over blocks of GELU_BLK values: e' = exp2abs4_avx2(a); v = fl(fl(0.5 u) s') (zeroed where
   s' < 2^-15, which the test then rejects); the test and the rounding. In one pass, the test's dozen
   operations at the end of a dependency chain about a hundred cycles long waited in the scheduler for
   all of it (2.53 ns a value against 1.79 without any test, AVX2 here); two passes (e' and v together):
   2.04; three: 1.85. A lane that fails is computed by the reference before the store (y may be x). */
__attribute__((target("avx2,fma"))) static void gelu_avx2(float *y, const float *x, size_t n) {
  const __m256d c = _mm256_set1_pd(GELU_C), k = _mm256_set1_pd(GELU_K), one = _mm256_set1_pd(1.0);
  const __m256d half = _mm256_set1_pd(0.5), smin = _mm256_set1_pd(0x1p-15);
  const __m256i absmask = _mm256_set1_epi64x(0x7fffffffffffffffLL);
  /* lo < b < hi, b the bits of |y'|: 2^-126 <= |y'| < 2^128; |(b mod 2^29) - 2^28| > 2^19:
     ((b - mid) mod 2^29) > band */
  const __m256i lo = _mm256_set1_epi64x(((int64_t)(1023 - 126) << 52) - 1);
  const __m256i hi = _mm256_set1_epi64x((int64_t)(1023 + 128) << 52);
  const __m256i low29 = _mm256_set1_epi64x(0x1fffffff), mid = _mm256_set1_epi64x(0x10000000 - 0x80000);
  const __m256i band = _mm256_set1_epi64x(0x100000);
  double vb[GELU_BLK];
  size_t i0 = 0, i, nb;
  int j;
  for (; i0 + 4 <= n; i0 += nb) {
    nb = n - i0 < GELU_BLK ? (n - i0) & ~(size_t)3 : GELU_BLK;
    for (i = 0; i < nb; i += 4) {
      __m256d u = _mm256_cvtps_pd(_mm_loadu_ps(x + i0 + i));
      __m256d a = _mm256_mul_pd(c, _mm256_add_pd(u, _mm256_mul_pd(_mm256_mul_pd(_mm256_mul_pd(k, u), u), u)));
      _mm256_storeu_pd(vb + i, exp2abs4_avx2(a));
    }
    for (i = 0; i < nb; i += 4) {
      __m256d u = _mm256_cvtps_pd(_mm_loadu_ps(x + i0 + i));
      __m256d s = _mm256_add_pd(one, tanh4_from_exp(_mm256_loadu_pd(vb + i), u));
      __m256d v = _mm256_mul_pd(_mm256_mul_pd(half, u), s);
      _mm256_storeu_pd(vb + i, _mm256_and_pd(v, _mm256_cmp_pd(s, smin, _CMP_GE_OQ)));
    }
    for (i = 0; i < nb; i += 4) {
      __m256d v = _mm256_loadu_pd(vb + i);
      __m256i b = _mm256_and_si256(_mm256_castpd_si256(v), absmask);
      __m256i far = _mm256_cmpgt_epi64(_mm256_and_si256(_mm256_sub_epi64(b, mid), low29), band);
      __m256i in = _mm256_and_si256(_mm256_cmpgt_epi64(b, lo), _mm256_cmpgt_epi64(hi, b));
      int ok = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_and_si256(far, in)));
      __m128 f = _mm256_cvtpd_ps(v);
      if (ok != 15) {
        float r[4];
        _mm_storeu_ps(r, f);
        for (j = 0; j < 4; j++)
          if (!(ok >> j & 1)) r[j] = lowp_gelu_tanh_ref(x[i0 + i + j]);
        f = _mm_loadu_ps(r);
      }
      _mm_storeu_ps(y + i0 + i, f);
    }
  }
  gelu_base(y + i0, x + i0, n - i0);
}

#endif

#if defined(LOWP_GELU_X86) && defined(LOWP_HAVE_MVEC) && defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define LOWP_GELU_MVEC 1
/* glibc's libmvec (the x86-64 vector ABI name: e = AVX-512, N8 = 8 lanes, v = one vector) */
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_tanh(__m512d);

__attribute__((target("avx512f,avx512dq"))) static void gelu_avx512(float *y, const float *x, size_t n) {
  const __m512d c = _mm512_set1_pd(GELU_C), k = _mm512_set1_pd(GELU_K), one = _mm512_set1_pd(1.0);
  const __m512d half = _mm512_set1_pd(0.5), smin = _mm512_set1_pd(0x1p-12), rel = _mm512_set1_pd(0x1p-34);
  size_t i = 0;
  int j;
  for (; i + 8 <= n; i += 8) {
    __m512d u = _mm512_cvtps_pd(_mm256_loadu_ps(x + i));
    __m512d a = _mm512_mul_pd(c, _mm512_add_pd(u, _mm512_mul_pd(_mm512_mul_pd(_mm512_mul_pd(k, u), u), u)));
    __m512d s = _mm512_add_pd(one, _ZGVeN8v_tanh(a));
    __m512d v = _mm512_mul_pd(_mm512_mul_pd(half, u), s);
    __m512d m = _mm512_mul_pd(_mm512_abs_pd(v), rel);
    __m256 f = _mm512_cvtpd_ps(v);
    __m256i lo = _mm256_castps_si256(_mm512_cvtpd_ps(_mm512_sub_pd(v, m)));
    __m256i hi = _mm256_castps_si256(_mm512_cvtpd_ps(_mm512_add_pd(v, m)));
    __m512i lo64 = _mm512_cvtepu32_epi64(lo), hi64 = _mm512_cvtepu32_epi64(hi);
    unsigned ok = (unsigned)(_mm512_cmpeq_epi64_mask(lo64, hi64) & _mm512_cmp_pd_mask(s, smin, _CMP_GE_OQ));
    if (ok != 255) { /* the reference before the store: y may be x */
      float r[8];
      _mm256_storeu_ps(r, f);
      for (j = 0; j < 8; j++)
        if (!(ok >> j & 1)) r[j] = lowp_gelu_tanh_ref(x[i + j]);
      f = _mm256_loadu_ps(r);
    }
    _mm256_storeu_ps(y + i, f);
  }
  gelu_base(y + i, x + i, n - i);
}
#endif

void lowp_gelu_tanh_f32_isa(float *y, const float *x, size_t n, lowp_isa_t isa) {
#ifdef LOWP_GELU_X86
  lowp_isa_t cpu = lowp_cpu_isa(1); /* the AVX2 copy's tanh needs FMA */
  if (isa > cpu) isa = cpu;
#ifdef LOWP_GELU_MVEC
  if (isa == LOWP_ISA_AVX512) { gelu_avx512(y, x, n); return; }
#endif
  if (isa >= LOWP_ISA_AVX2) { gelu_avx2(y, x, n); return; }
#endif
  (void)isa;
  gelu_base(y, x, n);
}

/* blocks of 8192 values over the threads: each value alone, so the thread count cannot change a bit */
void lowp_gelu_tanh_f32(float *y, const float *x, size_t n) {
  const size_t blk = 8192;
  lowp_isa_t isa = lowp_cpu_isa(0);
  long b, nb = (long)((n + blk - 1) / blk);
  if (nb <= 1 || lowp_omp_inline()) { /* on this thread (omp_inline.h) */
    lowp_gelu_tanh_f32_isa(y, x, n, isa);
    return;
  }
#pragma omp parallel for schedule(static)
  for (b = 0; b < nb; b++) {
    size_t at = (size_t)b * blk;
    lowp_gelu_tanh_f32_isa(y + at, x + at, n - at < blk ? n - at : blk, isa);
  }
}
