/* lowp__exp4_avx2 -- e^x on four binary64 lanes (AVX2, FMA) within 2^-50.1 relative: GELU, ViT softmax */
#ifndef LOWP_TRAIN_EXP4_AVX2_H
#define LOWP_TRAIN_EXP4_AVX2_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/*
 * e' = e^x (1 + d), |d| < 8.2e-16 < 2^-50.1, for -700 <= x <= 700 (no check: the callers bound x; a
 * NaN gives some number or a NaN). kernels/train/gelu.c (tanh from e^(2|a|), 0 <= x <= 40) and
 * kernels/train/vit.c (softmax, -700 <= x <= 0) keep a result only where a margin derived from this
 * bound proves it rounds as libm's would, so the bound is what matters.
 *
 * e^x = 2^(k / 8) e^r = 2^floor(k / 8) T[k mod 8] e^r with k = round(x 8 / ln 2): the integer is read
 * from the low bits of x (8 / ln 2) + 1.5 2^52, one fused multiply-add rounded to an integer (|k| <=
 * 8081 < 2^13; the bits of 1.5 2^52 + k hold k mod 8 in their low three and, shifted right by 3 and
 * left by 52, floor(k / 8) in the exponent field, as 1.5 2^52's own bits vanish). r = x - k ln2_hi / 8
 * - k ln2_lo / 8 (fdlibm's two-part ln 2, e_exp.c: k ln2_hi / 8 has at most 45 bits, and x - k ln2_hi / 8
 * is exact (for k != 0, |x| > 0.043 is a multiple of 2^-57 and the difference is below 2^-4); ln2_hi +
 * ln2_lo is within 2^-86 of ln 2, 2^-73 after the product by k / 8), so |r| <= (ln 2 / 8) (1/2 + 2^-39)
 * < 0.0434 (8 / ln 2's rounding moves x 8 / ln 2 by under 2^-39). T[j] = 2^(j / 8) are the nearest
 * binary64 numbers (from 60-digit decimal powers), selected by two permutes and a blend (eight entries:
 * two registers). e^r is the Taylor polynomial of degree 7 by Estrin's scheme in fused multiply-adds,
 * (1 + r) + r^2 ((c2 + c3 r) + r^2 ((c4 + c5 r) + r^2 (c6 + c7 r))), c_j = 1 / j! rounded once. Its
 * error relative to e^r (>= e^-0.0434 > 0.957): the truncation r^8 / 8! e^|r|, under 3.5e-16; the
 * roundings of 1 + r and of the last multiply-add, at most 2^-53 each (values in [0.95, 1.05]), 2.4e-16
 * together; all the others (the inner multiply-adds, r^2, the coefficients, r's last rounding, 2^-53 |r|)
 * are multiplied by r^2 < 1.9e-3 or by r, under 2^-56 together: below 2^-50.5 in all. T's rounding and
 * the product's (2^floor(k / 8) T[j] is exact and normal: -1011 <= floor(k / 8) <= 1010, and so is the
 * product) add 2^-53 each: |d| < 8.2e-16. (Replaces GELU's degree-12 polynomial over |r| <= 0.347 with
 * a reduction by ln 2 and no table, 2^-48.9: its twelve multiply-adds were 6% of GELU's time at AVX2.)
 */
__attribute__((target("avx2,fma"))) static inline __m256d lowp__exp4_avx2(__m256d x) {
  const __m256d one = _mm256_set1_pd(1.0), l8e = _mm256_set1_pd(11.541560327111707); /* 8 / ln 2 */
  const __m256d shift = _mm256_set1_pd(0x1.8p52);
  const __m256d ln2hi = _mm256_set1_pd(6.93147180369123816490e-01 / 8); /* 0x3fe62e42fee00000 / 8 */
  const __m256d ln2lo = _mm256_set1_pd(1.90821492927058770002e-10 / 8); /* 0x3dea39ef35793c76 / 8 */
  const __m256d tlo = _mm256_set_pd(0x1.4bfdad5362a27p+0, 0x1.306fe0a31b715p+0, 0x1.172b83c7d517bp+0, 1.0);
  const __m256d thi = _mm256_set_pd(0x1.d5818dcfba487p+0, 0x1.ae89f995ad3adp+0, 0x1.8ace5422aa0dbp+0,
                                    0x1.6a09e667f3bcdp+0);
  /* c_j = 1 / j!, j = 2 .. 7 (each rounded once to binary64) */
  const __m256d c2 = _mm256_set1_pd(0.5), c3 = _mm256_set1_pd(1.0 / 6.0), c4 = _mm256_set1_pd(1.0 / 24.0);
  const __m256d c5 = _mm256_set1_pd(1.0 / 120.0), c6 = _mm256_set1_pd(1.0 / 720.0);
  const __m256d c7 = _mm256_set1_pd(1.0 / 5040.0);
  __m256d y = _mm256_fmadd_pd(x, l8e, shift), k = _mm256_sub_pd(y, shift), r, r2, p, tsel;
  __m256i yb = _mm256_castpd_si256(y), idx;
  r = _mm256_fnmadd_pd(k, ln2hi, x);
  r = _mm256_fnmadd_pd(k, ln2lo, r);
  /* the 32-bit indices 2 (k mod 4), 2 (k mod 4) + 1 of T[k mod 4] in a register of four doubles (vpermd
     reads the low three bits of each), then bit 2 of k (moved to the sign bit) picks the register */
  idx = _mm256_add_epi32(_mm256_shuffle_epi32(_mm256_add_epi32(yb, yb), 0xa0),
                         _mm256_set_epi32(1, 0, 1, 0, 1, 0, 1, 0));
  tsel = _mm256_blendv_pd(_mm256_castsi256_pd(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(tlo), idx)),
                          _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(thi), idx)),
                          _mm256_castsi256_pd(_mm256_slli_epi64(yb, 61)));
  /* T[k mod 8] 2^floor(k / 8): floor(k / 8) added to the exponent field (two's complement, modulo 2^64) */
  tsel = _mm256_castsi256_pd(
      _mm256_add_epi64(_mm256_castpd_si256(tsel), _mm256_slli_epi64(_mm256_srli_epi64(yb, 3), 52)));
  r2 = _mm256_mul_pd(r, r);
  p = _mm256_fmadd_pd(_mm256_fmadd_pd(_mm256_fmadd_pd(c7, r, c6), r2, _mm256_fmadd_pd(c5, r, c4)), r2,
                      _mm256_fmadd_pd(c3, r, c2));
  p = _mm256_fmadd_pd(p, r2, _mm256_add_pd(one, r));
  return _mm256_mul_pd(p, tsel);
}
#endif

#endif
