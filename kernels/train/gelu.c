/* lowp_gelu_tanh_f32 -- the ViT's GELU (tanh form) over an fp32 array, vectorised, the same bits as the scalar form */

/*
 * The reference, in binary64: a = C (u + ((k u) u) u), t = tanh(a) (libm), s = 1 + t, y = (0.5 u) s,
 * rounded once to binary32 (C = sqrt(2/pi), k = 0.044715; -ffp-contract=off, so no FMA anywhere).
 * Profiled in `lowp run fp8-quantization --quick` (perf, AMD Zen 5), libm's tanh and the expm1 it calls
 * were 25% of the time.
 *
 * The vector copies compute a, s and y with the same operations in the same order, but t' = tanh(a) from
 * glibc's libmvec (_ZGVdN4v_tanh, _ZGVeN8v_tanh; glibc >= 2.35), whose results may differ from libm's
 * in the last bits. A lane's float is kept only where it provably equals the reference's:
 *   - assume |t - t'| <= 2^-46.9 (66 units in the last place of a number below 1: libm's tanh is
 *     within 2 and libmvec's within 4 of the exact value, glibc's documented bounds; the margin is 11x
 *     that);
 *   - then |s - s'| <= 2^-46.9 + 2^-52 (one rounding of each sum) < 2^-46.8, and where s' >= 2^-12,
 *     |s - s'| / s' < 2^-34.8; the product's rounding in each adds 2^-53 relative, so
 *     |y - y'| < 2^-34.7 |y'| < m = 2^-34 |y'|;
 *   - the binary32 rounding is monotone: if y' - m and y' + m (each computed with one rounding, which
 *     moves it by less than 2^-53 |y'|, inside the slack) round to the same float, so does every value
 *     between them, y among them.
 * Lanes that fail this (s' < 2^-12, that is u below about -3.3, where 1 + t cancels; a rounding boundary
 * within m, about 2^-9 of the others; NaN and infinities) are computed by the reference. The long test
 * tests/long/tgelu_exhaustive.c compares every copy with the reference on all 2^32 inputs.
 */

#include "train/gelu.h"

#include "cpu.h"
#include "omp_inline.h"

#include <math.h>
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

#if defined(LOWP_HAVE_MVEC) && defined(__x86_64__) && defined(__GNUC__) && defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define LOWP_GELU_MVEC 1
#include <immintrin.h>

/* glibc's libmvec (the x86-64 vector ABI names: d = AVX2, e = AVX-512; N4/N8 lanes; v = one vector) */
__attribute__((target("avx2"))) __m256d _ZGVdN4v_tanh(__m256d);
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_tanh(__m512d);

__attribute__((target("avx2"))) static void gelu_avx2(float *y, const float *x, size_t n) {
  const __m256d c = _mm256_set1_pd(GELU_C), k = _mm256_set1_pd(GELU_K), one = _mm256_set1_pd(1.0);
  const __m256d half = _mm256_set1_pd(0.5), smin = _mm256_set1_pd(0x1p-12), rel = _mm256_set1_pd(0x1p-34);
  const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  size_t i = 0;
  int j;
  for (; i + 4 <= n; i += 4) {
    __m256d u = _mm256_cvtps_pd(_mm_loadu_ps(x + i));
    __m256d a = _mm256_mul_pd(c, _mm256_add_pd(u, _mm256_mul_pd(_mm256_mul_pd(_mm256_mul_pd(k, u), u), u)));
    __m256d s = _mm256_add_pd(one, _ZGVdN4v_tanh(a));
    __m256d v = _mm256_mul_pd(_mm256_mul_pd(half, u), s);
    __m256d m = _mm256_mul_pd(_mm256_and_pd(v, absmask), rel);
    __m128 f = _mm256_cvtpd_ps(v);
    __m128i lo = _mm_castps_si128(_mm256_cvtpd_ps(_mm256_sub_pd(v, m)));
    __m128i hi = _mm_castps_si128(_mm256_cvtpd_ps(_mm256_add_pd(v, m)));
    int ok = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(lo, hi))) &
             _mm256_movemask_pd(_mm256_cmp_pd(s, smin, _CMP_GE_OQ));
    _mm_storeu_ps(y + i, f);
    if (ok != 15)
      for (j = 0; j < 4; j++)
        if (!(ok >> j & 1)) y[i + j] = lowp_gelu_tanh_ref(x[i + j]);
  }
  gelu_base(y + i, x + i, n - i);
}

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
    _mm256_storeu_ps(y + i, f);
    if (ok != 255)
      for (j = 0; j < 8; j++)
        if (!(ok >> j & 1)) y[i + j] = lowp_gelu_tanh_ref(x[i + j]);
  }
  gelu_base(y + i, x + i, n - i);
}
#endif

void lowp_gelu_tanh_f32_isa(float *y, const float *x, size_t n, lowp_isa_t isa) {
#ifdef LOWP_GELU_MVEC
  lowp_isa_t cpu = lowp_cpu_isa(0);
  if (isa > cpu) isa = cpu;
  if (isa == LOWP_ISA_AVX512) { gelu_avx512(y, x, n); return; }
  if (isa == LOWP_ISA_AVX2) { gelu_avx2(y, x, n); return; }
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
