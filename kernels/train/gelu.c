/* lowp_gelu_tanh_f32 -- the ViT's GELU (tanh form) over an fp32 array, vectorised, the same bits as the scalar form */

/*
 * The reference, in binary64: a = C (u + ((k u) u) u), t = tanh(a) (libm), s = 1 + t, y = (0.5 u) s,
 * rounded once to binary32 (C = sqrt(2/pi), k = 0.044715; -ffp-contract=off, so no FMA anywhere).
 * Profiled in `lowp run fp8-quantization --quick` (perf, AMD Zen 5), libm's tanh and the expm1 it calls
 * were 25% of the time.
 *
 * The vector copies compute a, s and y with the same operations in the same order, but t' = tanh(a) from
 * tanh4_avx2 below (AVX2 and FMA: within 2^-49 of the exact value) or glibc's libmvec (_ZGVeN8v_tanh,
 * AVX-512; glibc >= 2.35), whose results may differ from libm's in the last bits. A lane's float is kept
 * only where it provably equals the reference's:
 *   - assume |t - t'| <= 2^-46.9 (66 units in the last place of a number below 1: libm's tanh is
 *     within 2 and libmvec's within 4 of the exact value, glibc's documented bounds, tanh4_avx2 within
 *     2^-49 of it; the margin is 11x libmvec's);
 *   - then |s - s'| <= 2^-46.9 + 2^-52 (one rounding of each sum) < 2^-46.8, and where s' >= 2^-12,
 *     |s - s'| / s' < 2^-34.8; the product's rounding in each adds 2^-53 relative, so
 *     |y - y'| < 2^-34.7 |y'| < m = 2^-34 |y'|;
 *   - the binary32 rounding is monotone: if y' - m and y' + m (each computed with one rounding, which
 *     moves it by less than 2^-53 |y'|, inside the slack) round to the same float, so does every value
 *     between them, y among them.
 * Lanes that fail this (s' < 2^-12, that is u below about -3.3, where 1 + t cancels; a rounding boundary
 * within m, about 2^-9 of the others; NaN and infinities) are computed by the reference. tests/tgelu.c
 * compares every copy with the reference (tgelu_all, label long: on all 2^32 inputs).
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

#if defined(__x86_64__) && defined(__GNUC__)
#define LOWP_GELU_X86 1
#include <immintrin.h>

/* tanh on four binary64 lanes within 2^-49 of the exact value (absolute error, what the margin above
   needs; GELU 4.6 -> 3.3 ns a value against libmvec's tanh here), AVX2 and FMA: with x = min(2 |a|, 40),
   tanh |a| = 1 - 2 / (1 + e^x), the sign of a put back. e^x = 2^k e^r, k = round(x / ln 2),
   r = x - k ln2_hi - k ln2_lo (fdlibm's two-part ln 2, e_exp.c: k ln2_hi is exact for |k| < 2^11),
   |r| <= 0.347, and e^r the Taylor polynomial of degree 12 by Estrin's scheme in fused multiply-adds.
   Its error: the polynomial's truncation r^13 / 13! e^|r| < 2^-52; Estrin's roundings, at most six on
   any term's path (r^8: three squarings, then three joins), each below 2^-53 of a partial sum under
   1.42, and the reduction's, under 2^-49 relative together, so e' = e^x (1 + d), |d| < 2^-48.9.
   Then 2 / (1 + e') moves by at most |d| 2 e / (1 + e)^2 <= |d| / 2, and the three roundings of
   1 + e', the quotient and 1 - q add at most 3 2^-53: |t - t'| < 2^-49.
   Beyond x = 40, 1 - tanh < 2^-56 and the result is 1 (as the exact one rounds); a NaN a gives a NaN
   lane, which GELU's check sends to the definition. tests/tgelu.c compares the copy with libm's
   definition (tgelu_all: every binary32 input). */
__attribute__((target("avx2,fma"))) static __m256d tanh4_avx2(__m256d a) {
  const __m256d sign = _mm256_set1_pd(-0.0), two = _mm256_set1_pd(2.0), one = _mm256_set1_pd(1.0);
  const __m256d log2e = _mm256_set1_pd(1.4426950408889634), xmax = _mm256_set1_pd(40.0);
  const __m256d ln2hi = _mm256_set1_pd(6.93147180369123816490e-01); /* 0x3fe62e42fee00000 */
  const __m256d ln2lo = _mm256_set1_pd(1.90821492927058770002e-10); /* 0x3dea39ef35793c76 */
  /* c[j] = 1 / j!, j = 0 .. 12 (each rounded once to binary64) */
  static const double c[13] = {1.0,        1.0,         0.5,          1.0 / 6.0,      1.0 / 24.0,
                               1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0, 1.0 / 40320.0, 1.0 / 362880.0,
                               1.0 / 3628800.0, 1.0 / 39916800.0, 1.0 / 479001600.0};
#define LOWP_C(j) _mm256_set1_pd(c[j])
  __m256d s = _mm256_and_pd(a, sign), x = _mm256_add_pd(_mm256_andnot_pd(sign, a), _mm256_andnot_pd(sign, a));
  __m256d k, r, r2, r4, r8, p, e, t;
  __m128i ki;
  x = _mm256_min_pd(x, xmax); /* also a NaN's lane (min returns its second operand): fixed below */
  k = _mm256_round_pd(_mm256_mul_pd(x, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  r = _mm256_fnmadd_pd(k, ln2hi, x);
  r = _mm256_fnmadd_pd(k, ln2lo, r);
  /* Estrin's scheme (four steps deep instead of Horner's twelve; its roundings are as few and as small):
     pairs c[j] + c[j + 1] r, joined by r^2, r^4 and r^8 */
  r2 = _mm256_mul_pd(r, r);
  r4 = _mm256_mul_pd(r2, r2);
  r8 = _mm256_mul_pd(r4, r4);
  p = _mm256_fmadd_pd(
      _mm256_fmadd_pd(LOWP_C(12), r4,
                      _mm256_fmadd_pd(_mm256_fmadd_pd(LOWP_C(11), r, LOWP_C(10)), r2,
                                      _mm256_fmadd_pd(LOWP_C(9), r, LOWP_C(8)))),
      r8,
      _mm256_fmadd_pd(_mm256_fmadd_pd(_mm256_fmadd_pd(LOWP_C(7), r, LOWP_C(6)), r2,
                                      _mm256_fmadd_pd(LOWP_C(5), r, LOWP_C(4))),
                      r4,
                      _mm256_fmadd_pd(_mm256_fmadd_pd(LOWP_C(3), r, LOWP_C(2)), r2,
                                      _mm256_fmadd_pd(LOWP_C(1), r, LOWP_C(0)))));
#undef LOWP_C
  ki = _mm_add_epi32(_mm256_cvtpd_epi32(k), _mm_set1_epi32(1023)); /* 0 <= k <= 58: 2^k a normal number */
  e = _mm256_mul_pd(p, _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_cvtepi32_epi64(ki), 52)));
  t = _mm256_sub_pd(one, _mm256_div_pd(two, _mm256_add_pd(one, e)));
  t = _mm256_or_pd(t, s);
  return _mm256_blendv_pd(t, a, _mm256_cmp_pd(a, a, _CMP_UNORD_Q)); /* NaN in, NaN out */
}

__attribute__((target("avx2,fma"))) static void gelu_avx2(float *y, const float *x, size_t n) {
  const __m256d c = _mm256_set1_pd(GELU_C), k = _mm256_set1_pd(GELU_K), one = _mm256_set1_pd(1.0);
  const __m256d half = _mm256_set1_pd(0.5), smin = _mm256_set1_pd(0x1p-12), rel = _mm256_set1_pd(0x1p-34);
  const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  size_t i = 0;
  int j;
  for (; i + 4 <= n; i += 4) {
    __m256d u = _mm256_cvtps_pd(_mm_loadu_ps(x + i));
    __m256d a = _mm256_mul_pd(c, _mm256_add_pd(u, _mm256_mul_pd(_mm256_mul_pd(_mm256_mul_pd(k, u), u), u)));
    __m256d s = _mm256_add_pd(one, tanh4_avx2(a));
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
    _mm256_storeu_ps(y + i, f);
    if (ok != 255)
      for (j = 0; j < 8; j++)
        if (!(ok >> j & 1)) y[i + j] = lowp_gelu_tanh_ref(x[i + j]);
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
