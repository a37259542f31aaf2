/* lowp_gemm_acc_fast -- vectorised twin of lowp_gemm_acc_scalar, same bits */

/*
 * The scalar reference (gemm_acc.c) adds the k products of each output in
 * sequence, each addition rounded once to the accumulator format. That
 * order is per output, so independent outputs vectorise: a vector of
 * outputs over j, with k outer, keeps every element's own sequence.
 *
 * Three kernels, each proven to give the reference's bits:
 *   FMA64  fp64 accumulator, rne: fma(a, b, s) is one rounding of the exact
 *          s + a b (IEEE 754 fusedMultiplyAdd); with fp64 products, a*b
 *          then + s (binary64 operations, no contraction: -ffp-contract=off).
 *   FMA32  fp32 accumulator, rne, fp32 inputs: fmaf, or a*b then + s in
 *          binary32, the same argument one format down.
 *   RO64   any IEEE-like accumulator with p <= 51 (fp32, tf32, fp16, bf16,
 *          e5m2, ...), modes rne/rtz/rup/rdn, fp32 inputs. A product of two
 *          binary32 values is exact in binary64 (48 bits, exponent >= -298).
 *          s + p is computed with Knuth's TwoSum (exact error e) and
 *          rounded to odd at 53 bits (t, or its odd neighbour toward e when
 *          e != 0 and t is even). Rounding to odd at precision >= p + 2 and
 *          then once to p bits gives the correctly rounded sum for
 *          round-to-nearest (Boldo and Melquiond, "Emulation of FMA and
 *          correctly rounded sums: proved algorithms using rounding to odd",
 *          IEEE Trans. Computers 57(4), 2008, Theorem 1); for directed modes
 *          a value rounded to odd lies strictly between the same p-bit
 *          neighbours as the exact value (or equals it), so the floor and
 *          ceiling are unchanged. The last rounding adds and subtracts
 *          1.5 * 2^(q+52) (q the exponent of the last place, from the
 *          binade of x clamped to emin: subnormals included), which rounds
 *          x to a multiple of 2^q by binary64's own round to nearest even;
 *          directed modes then step one quantum by the sign of the exact
 *          remainder x - r. Overflow, zeros and NaN follow IEEE 754 and
 *          exact/acc.c: +-inf where the mode rounds away, else +-max; an
 *          exact zero sum is -0 in rdn unless both terms are +0; a result
 *          that rounds to zero keeps the sign of x; any NaN of the sum is
 *          the positive quiet NaN lowp_round_f64(NAN) gives.
 *
 *   RO32   the same on 16 binary32 lanes for narrow data and accumulators
 *          (fp16, bf16, fp8 inputs; fp16, bf16, e5m2 accumulators): TwoSum in
 *          binary32, or on AVX-512 the pair of fused multiply-adds rounded
 *          down and up whose odd member is the sum rounded to odd (rofma*);
 *          on AVX2 the same TwoSum on 8 lanes of intrinsics (ro32_avx2).
 *
 *   FIG    where the accumulator rounds to nearest and each product is
 *          rounded to a format inside the accumulator's (fig_holds), the
 *          sum of s and the rounded product y can be rounded to nearest in
 *          the working binary format (w = 24 bits, or 53) and then to acc,
 *          without rounding to odd: both are p-bit numbers on acc's grid,
 *          and with w >= 2p + 2 that double rounding is innocuous (so for
 *          sums when w is about twice p: Figueroa, "When is double rounding
 *          innocuous?", ACM SIGNUM Newsletter 30(3), 1995; Roux, "Innocuous
 *          double rounding of basic arithmetic operations", J. Formalized
 *          Reasoning 7(1), 2014, underflow included). The argument: if
 *          x = s + y is not a w-bit number, say |y| <= |s|, 2^e <= |s| <
 *          2^(e+1), then y's exponent is <= e + p - w (else x, a multiple
 *          of y's last place below 2^(e+2), would fit in w bits), so
 *          |y| <= 2^(e+p-w+1) - 2^(e-w+1). The p-bit midpoints next to s are
 *          >= 2^(e-p-1) from it (2^(e-p) but below a power of two), so x is
 *          >= 2^(e-p-1) - |y| >= 2^(e-w+1) from both (2p + 2 <= w), more
 *          than half a w-bit ulp of x (<= 2^(e-w) below 2^(e+1); beyond,
 *          the midpoint above is >= 2^(e-p) - |y| >= 2^(e-p-1) away and half
 *          an ulp is 2^(e-w+1)): x and its w-bit rounding lie strictly
 *          between the same two midpoints, and s, the p-bit value between
 *          them, is the rounding to acc of both. Sums below acc's 2^emin
 *          are multiples of its quantum: exact in acc and in the working
 *          format (whose normal range starts at or below acc's emin).
 *          Overflow is that of the unbounded rounding, the same for both
 *          (an overflow of the working format lies beyond every acc
 *          threshold).
 *
 * Loops: tasks of (column panel, row group), a panel of B packed for KB
 * rows of k at a time, the running sums kept in C between panels of k (a
 * value of the accumulator is a binary64 value). Compiled three times
 * (baseline, AVX2+FMA, AVX-512) and chosen at run time, as in
 * lib/format/round_fast.c.
 */

#include "cpu.h"
#include "cpu/gemm_acc_fast.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

#include "cpu/acc_steps.h"

enum { JB = 128, KB = 256, MR = 4, IR = 128, MRD = 8 };

/* Everything a task needs. */
typedef struct {
  const double *a, *b;
  double *c;
  size_t m, n, k;
  tgt_t acc, prod;
  int nb8; /* every entry of a and b has <= 8 significant bits (PK_V8, RP_BF16V8) */
  int isa; /* the copy that runs (lowp_isa_t) */
} job_t;

enum { ISA_GENERIC = LOWP_ISA_GENERIC, ISA_AVX2 = LOWP_ISA_AVX2, ISA_AVX512 = LOWP_ISA_AVX512 };

/* the opening comment's FIG: products rounded to prod, then the sum
   rounded to nearest at w bits (working exponents from wemin) and to acc */
AI int fig_holds(const tgt_t *acc, const tgt_t *prod, int w, int wemin) {
  return acc->mode == M_NE && 2 * acc->p + 2 <= w && acc->emin >= wemin &&
         prod->p <= acc->p && prod->emin - prod->p >= acc->emin - acc->p;
}

/* one multiply-add of the RO64 kernel; rp: products are rounded to prod */
AI double step_ro(double s, double a, double b, const tgt_t *acc, const tgt_t *prod,
                  int mode, int rp) {
  double p = a * b;
  if (rp) p = round_to(p, prod->p, prod->emin, prod->xmax, prod->mode);
  return round_to(add_odd(s, p, mode), acc->p, acc->emin, acc->xmax, mode);
}

AI vd vstep_ro(vd s, vd a, vd b, const tgt_t *acc, const tgt_t *prod, int mode, int rp) {
  vd p = a * b;
  tgt_t ac = *acc;
  if (rp) p = vround_to(p, prod);
  ac.mode = mode;
  return vround_to(vadd_odd(s, p, mode), &ac);
}

/* FIG's step (the opening comment) in binary64: the product rounded to
   prod, the sum rounded to nearest in binary64, then to acc */
AI vd vstep_fig(vd s, vd a, vd b, const tgt_t *acc, const tgt_t *prod) {
  return vround_to(s + vround_to(a * b, prod), acc);
}

AI vf fstep_ro(vf s, vf a, vf b, const tgt_t *acc, const tgt_t *prod, int mode, int rp) {
  vf p = a * b, x;
  tgt_t ac = *acc;
  if (rp) p = fround_to(p, prod);
  ac.mode = mode;
  x = fadd_odd(s, p, mode);
  return ac.bf16 ? fround_bf16(x, mode) : fround_to(x, &ac);
}

/* FIG's step in binary32 (RO32 data: a b exact) */
AI vf fstep_fig(vf s, vf a, vf b, const tgt_t *acc, const tgt_t *prod) {
  vf x = s + fround_to(a * b, prod);
  return acc->bf16 ? fround_bf16(x, M_NE) : fround_to(x, acc);
}

/* ------------------------------------- fp32 directed modes on AVX-512 */

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define LOWP_ACCFAST_X86 1

/* fp32 accumulator in rtz/rup/rdn: AVX-512's fused multiply-add (or
   multiply, then add) with the rounding mode in the instruction (IEEE 754
   operations in that mode: overflow to +-max or +-inf by the mode, exact
   zero sums -0 in rdn), 16 outputs per vector. s: rows x JB sums, panel:
   kw x JB (zeros past jw). */
#define LOWP_DIR_LOOP(RC)                                                        \
  for (l = 0; l < kw; l++)                                                       \
    for (r = 0; r < rows; r++) {                                                 \
      __m512 va = _mm512_set1_ps((float)a[(i + r) * k + l0 + l]);                 \
      for (j = 0; j < JB; j += 16) {                                             \
        __m512 vb = _mm512_loadu_ps(panel + l * JB + j);                         \
        __m512 vs = _mm512_loadu_ps(s + r * JB + j);                             \
        vs = rp ? _mm512_add_round_ps(_mm512_mul_round_ps(va, vb, RC), vs, RC)   \
                : _mm512_fmadd_round_ps(va, vb, vs, RC);                         \
        _mm512_storeu_ps(s + r * JB + j, vs);                                    \
      }                                                                          \
    }
__attribute__((target(LOWP_ACC_AVX512))) static void
dir32_avx512(float *s, const double *a, size_t i, size_t rows, size_t k, const float *panel,
             size_t l0, size_t kw, int rp, int mode) {
  size_t l, r, j;
  switch (mode) {
  case M_TZ: LOWP_DIR_LOOP(_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC) break;
  case M_UP: LOWP_DIR_LOOP(_MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC) break;
  default: LOWP_DIR_LOOP(_MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC) break;
  }
}
#undef LOWP_DIR_LOOP

/* The same on AVX2, which has no rounding in the instruction: the
   rounding-control field of MXCSR (bits 13-14: 01 down, 10 up, 11 toward
   zero; Intel SDM vol. 1, 10.2.3.3) set to the mode around the loop and
   restored after. Every floating-point operation between the two writes
   is this loop's (the conversions of binary32 inputs are exact; the
   function is never inlined, so nothing of the caller's moves in), on this
   thread: each OpenMP thread has its own MXCSR. _mm256_fmadd_ps is IEEE
   754's fusedMultiplyAdd in that mode, _mm256_mul_ps and _mm256_add_ps its
   multiplication and addition. */
__attribute__((target("avx2,fma"), noinline)) static void
dir32_avx2(float *s, const double *a, size_t i, size_t rows, size_t k, const float *panel,
           size_t l0, size_t kw, int rp, int mode) {
  const unsigned csr = _mm_getcsr();
  size_t l, r, j;
  _mm_setcsr((csr & ~0x6000u) | (mode == M_DN ? 0x2000u : mode == M_UP ? 0x4000u : 0x6000u));
  for (l = 0; l < kw; l++)
    for (r = 0; r < rows; r++) {
      const __m256 va = _mm256_set1_ps((float)a[(i + r) * k + l0 + l]);
      float *sr = s + r * JB;
      const float *bl = panel + l * JB;
      if (rp)
        for (j = 0; j < JB; j += 8)
          _mm256_storeu_ps(sr + j, _mm256_add_ps(_mm256_mul_ps(va, _mm256_loadu_ps(bl + j)),
                                                 _mm256_loadu_ps(sr + j)));
      else
        for (j = 0; j < JB; j += 8)
          _mm256_storeu_ps(sr + j, _mm256_fmadd_ps(va, _mm256_loadu_ps(bl + j),
                                                   _mm256_loadu_ps(sr + j)));
    }
  _mm_setcsr(csr);
}

#ifdef LOWP_ACC_RO16
/* (gcc only, cpu/acc_steps.h: clang builds run K_RF) */
/* RO32 on AVX-512 (any RO32 accumulator; fp16 and bf16 the fast ones), 16
   sums per vector, each step in registers: the product, the sum rounded in
   binary32, the last rounding to acc.

   Products: a b is exact in binary32 (RO32 data). Rounded products: fp16 by
   the CPU's own binary32 -> fp16 conversion (vcvtps2ph, IEEE 754 in the
   mode of its immediate, subnormals and overflow included) and back
   (exact); bf16 on the bits (fround_bf16_bits; finite: no NaN test), or in
   rne, when every input has <= 8 significant bits, by Veltkamp's splitting
   (PK_V8, prod_v8); others by fround_to.

   The sum, two ways. ODD: the sum rounded to odd at 24 bits from two
   roundings of the same exact value: d = fma(a, b, s) (or p + s, p the
   rounded product) rounded down and u = rounded up (AVX-512's rounding in
   the instruction; IEEE 754 fusedMultiplyAdd). d == u: the sum is exact
   (zeros included: u has IEEE 754's sign of an exact zero sum for rne, d
   for rdn, so the mode's own result is taken). d != u: they are the two
   binary32 neighbours of the exact value, one of them odd (adjacent
   encodings of one sign), and that one is the round-to-odd value (RO32
   data: the exact sums are multiples of 2^-147, so binary32's subnormal
   grid holds them and the 24-bit argument of fstep_ro applies; a sum beyond
   FLT_MAX gives d = FLT_MAX, odd, above every narrower format's largest
   value and midpoint, so the last rounding overflows as the exact value
   would). ONE: the sum rounded once in binary32 in the accumulator's own
   mode (one fma, or one add of the rounded product), where that is already
   the bits of the sum rounded once to acc after the last rounding:
   - rtz/rup/rdn, always. Every acc value is a binary32 value (p <= 22,
     quantum >= 2^-147, largest value <= FLT_MAX), and so are +-inf. Let
     v = RD_acc(x), the largest acc value (or -inf) <= the exact sum x:
     v <= RD_32(x) <= x, so RD_acc(RD_32(x)) = v (monotone, and no acc
     value lies in (v, x]); RU the same upward, RZ one of them by the sign
     (RZ_32(x) has x's sign). Overflow included (+-inf and +-max are such
     v); an exact zero sum has IEEE 754's sign in both; a nonzero x stays
     nonzero in binary32 (its quantum 2^-149 is finer).
   - rne, when acc has p <= 11 bits and emin >= -126 and every rounded
     product y is a p-bit multiple of acc's quantum (prod p <= acc p,
     quantum no finer: fig_holds, the opening comment's FIG with w = 24).

   Then the last rounding to acc: fp16 by vcvtps2ph and back; bf16 on the
   bits (fround_bf16_bits); others by fround_to. NaN (from C, or an
   overflowed product meeting an opposite inf) stays NaN: the comparison is
   ordered, the FMA returns the quiet NaN it is given (0x7fc00000,
   block_rows' canon, or the default NaN) and the bf16 rounding on the bits
   keeps a NaN whose low 16 bits are zero; inf stays inf. */

/* how the AVX-512 loops form products: exact, rounded to acc's own format
   (fp16 or bf16) in rne, bf16 rne by prod_v8, or any prod in any mode */
enum { PK_EXACT, PK_SAME, PK_V8, PK_ANY };

#define LOWP_F16(X, RC) _mm512_cvtph_ps(_mm512_cvtps_ph((X), (RC) | _MM_FROUND_NO_EXC))

/* p = a b (exact in binary32) rounded to prod, any prod and mode */
__attribute__((target(LOWP_ACC_AVX512))) AI __m512 prod_any(__m512 p, const tgt_t *prod) {
  if (prod->fp16) {
    switch (prod->mode) {
    case M_TZ: return LOWP_F16(p, _MM_FROUND_TO_ZERO);
    case M_UP: return LOWP_F16(p, _MM_FROUND_TO_POS_INF);
    case M_DN: return LOWP_F16(p, _MM_FROUND_TO_NEG_INF);
    default: return LOWP_F16(p, _MM_FROUND_TO_NEAREST_INT);
    }
  }
  if (prod->bf16) return (__m512)fround_bf16_bits((vf)p, prod->mode);
  return (__m512)fround_to((vf)p, prod);
}

/* a b rounded to bf16 in rne for a and b of <= 8 significant bits (RO32
   data: a b exact, of <= 16 bits, in [2^-120, 2^100]), by Veltkamp's
   splitting with C = 2^16 + 1, given bc = b C (= 2^16 b + b: 24 bits,
   exact): g = RN(a bc), t = RN(g - a b) (one fma), h = g - t. Write
   a b = M 2^w, 2^15 <= |M| < 2^16 (positive here; all steps are odd
   functions). M C lies in [2^31, 2^32) (M C <= (2^16 - 1)(2^16 + 1)), where
   binary32's spacing is 2^8: M 2^16 is an even multiple of it, so
   g = (M 2^16 + R) 2^w with R the multiple of 2^8 nearest M, ties to an
   even multiple: R = M rounded to 8 bits in rne. g - a b = (M 2^16 +
   (R - M)) 2^w with |R - M| <= 2^7 (same binade): t = M 2^16 2^w (a tie
   goes to the even M 2^16), and h = R 2^w exactly, normal, no overflow
   (a b C < 2^117). a b = -0: g = -0, t = +0, h = -0 (+0: all +0). */
__attribute__((target(LOWP_ACC_AVX512))) AI __m512 prod_v8(__m512 va, __m512 vb, __m512 bc) {
  __m512 g = _mm512_mul_ps(va, bc);
  return _mm512_sub_ps(g, _mm512_fnmadd_ps(va, vb, g));
}

/* fround_bf16_bits in rne in four instructions: + 0x7fff, + 1 more where
   bit 16 (the last kept bit) is set (a mask from vptestmd), clear 16 bits */
__attribute__((target(LOWP_ACC_AVX512))) AI __m512 bf16_rne(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __mmask16 odd = _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x10000));
  __m512i v = _mm512_add_epi32(u, _mm512_set1_epi32(0x7fff));
  v = _mm512_mask_add_epi32(v, odd, v, _mm512_set1_epi32(1));
  return _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32((int32_t)0xffff0000u)));
}

/* s[r JB + j] for the rows and the panel's columns, k from l0 to l0 + kw;
   MODE, RC: acc's mode and its rounding constant; PK: the products (see
   above); ONE: the sum rounded once in binary32 (else to odd) */
#define LOWP_ROFMA_LOOP(MODE, RC, PK, ONE)                                       \
  for (l = 0; l < kw; l++) {                                                     \
    const float *bl = panel + l * JB;                                            \
    if ((PK) == PK_V8)                                                           \
      for (j = 0; j < JB; j += 16)                                               \
        _mm512_store_ps(bc + j, _mm512_mul_ps(_mm512_loadu_ps(bl + j), c16));   \
    for (r = 0; r < rows; r++) {                                                 \
      __m512 va = _mm512_set1_ps((float)a[(i + r) * k + l0 + l]);                 \
      for (j = 0; j < JB; j += 16) {                                             \
        __m512 vb = _mm512_loadu_ps(bl + j), vs = _mm512_loadu_ps(s + r * JB + j); \
        __m512 p = vb, x;                                                        \
        if ((PK) == PK_V8) p = prod_v8(va, vb, _mm512_load_ps(bc + j));          \
        else if ((PK) == PK_SAME && fmt == 1)                                    \
          p = LOWP_F16(_mm512_mul_ps(va, vb), _MM_FROUND_TO_NEAREST_INT);        \
        else if ((PK) == PK_SAME)                                                \
          p = bf16_rne(_mm512_mul_ps(va, vb));                                   \
        else if ((PK) == PK_ANY)                                                 \
          p = prod_any(_mm512_mul_ps(va, vb), prod);                             \
        if ((ONE) && (PK) == PK_EXACT)                                           \
          x = _mm512_fmadd_round_ps(va, vb, vs, RC);                             \
        else if (ONE)                                                            \
          x = _mm512_add_round_ps(p, vs, RC);                                    \
        else {                                                                   \
          __m512 d, u;                                                           \
          if ((PK) == PK_EXACT) {                                                \
            d = _mm512_fmadd_round_ps(va, vb, vs, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); \
            u = _mm512_fmadd_round_ps(va, vb, vs, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); \
          } else {                                                               \
            d = _mm512_add_round_ps(p, vs, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); \
            u = _mm512_add_round_ps(p, vs, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); \
          }                                                                      \
          x = rofma_pick(d, u, MODE);                                            \
        }                                                                        \
        if (fmt == 1)                                                            \
          vs = LOWP_F16(x, RC);                                                  \
        else if (fmt == 2 && (MODE) == M_NE)                                     \
          vs = bf16_rne(x); /* (NaN: above) */                                   \
        else if (fmt == 2)                                                       \
          vs = (__m512)fround_bf16_bits((vf)x, MODE);                            \
        else {                                                                   \
          tgt_t ac = *acc;                                                       \
          ac.mode = MODE;                                                        \
          vs = (__m512)fround_to((vf)x, &ac);                                    \
        }                                                                        \
        _mm512_storeu_ps(s + r * JB + j, vs);                                    \
      }                                                                          \
    }                                                                            \
  }
/* the directed modes: one rounding in binary32 (above), exact products or any */
#define LOWP_ROFMA_DIR(MODE, RC)                                                 \
  if (pk == PK_EXACT) LOWP_ROFMA_LOOP(MODE, RC, PK_EXACT, 1)                     \
  else LOWP_ROFMA_LOOP(MODE, RC, PK_ANY, 1)
/* fmt: 1 fp16, 2 bf16, 0 another RO32 accumulator; pk: PK_SAME for fp16
   and bf16 only, PK_V8 for bf16 only */
#define LOWP_ROFMA_FN(NAME, FMT)                                                 \
  __attribute__((target(LOWP_ACC_AVX512))) static void NAME(                     \
      float *s, const double *a, size_t i, size_t rows, size_t k, const float *panel, \
      size_t l0, size_t kw, const tgt_t *acc, const tgt_t *prod, int pk, int mode) { \
    const __m512 c16 = _mm512_set1_ps(65537.0f);                                 \
    const int fmt = FMT, fig = pk == PK_ANY && fig_holds(acc, prod, 24, -126);  \
    float bc[JB] __attribute__((aligned(64)));                                   \
    size_t l, r, j;                                                              \
    switch (mode) {                                                              \
    case M_TZ: LOWP_ROFMA_DIR(M_TZ, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC) break; \
    case M_UP: LOWP_ROFMA_DIR(M_UP, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC) break; \
    case M_DN: LOWP_ROFMA_DIR(M_DN, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC) break; \
    default:                                                                     \
      if (pk == PK_EXACT) LOWP_ROFMA_LOOP(M_NE, LOWP_RNE, PK_EXACT, 0)           \
      else if (fmt != 0 && pk == PK_SAME) LOWP_ROFMA_LOOP(M_NE, LOWP_RNE, PK_SAME, 1) \
      else if (fmt == 2 && pk == PK_V8) LOWP_ROFMA_LOOP(M_NE, LOWP_RNE, PK_V8, 1) \
      else if (fig) LOWP_ROFMA_LOOP(M_NE, LOWP_RNE, PK_ANY, 1)                   \
      else LOWP_ROFMA_LOOP(M_NE, LOWP_RNE, PK_ANY, 0)                            \
      break;                                                                     \
    }                                                                            \
  }
#define LOWP_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
LOWP_ROFMA_FN(rofma16_avx512, 1)
LOWP_ROFMA_FN(rofmab_avx512, 2)
LOWP_ROFMA_FN(rofma_avx512, 0)
#undef LOWP_RNE
#undef LOWP_ROFMA_FN
#undef LOWP_ROFMA_DIR
#undef LOWP_ROFMA_LOOP
#undef LOWP_F16

/* the products of the loops above for this job (rp: products rounded) */
static int ro16_pk(const job_t *jb, int rp) {
  const tgt_t *acc = &jb->acc, *prod = &jb->prod;
  if (!rp) return PK_EXACT;
  if (acc->mode == M_NE && prod->mode == M_NE &&
      ((acc->fp16 && prod->fp16) || (acc->bf16 && prod->bf16)))
    return acc->bf16 && jb->nb8 ? PK_V8 : PK_SAME;
  return PK_ANY;
}
#endif

/* RO32 on AVX2 (gcc and clang; F16C for fp16): the steps of fstep_ro and
   fstep_fig on 8 binary32 lanes written with intrinsics. gcc's build of the
   64-byte vector-extension steps for AVX2 turned parts of fround_to and
   fround_bf16 into scalar code (cmov, vpextrd: a variable per-lane shift
   among them), 2 to 6 ns per multiply-add. Here every operation maps to one
   AVX2 instruction:
   - the sum rounded to odd from TwoSum's t and err (as fadd_odd): where
     err != 0 (t finite), t truncated toward zero (one encoding down where
     err and t have opposite signs: t was rounded away) with its last bit
     set; the odd neighbour fadd_odd steps to, as the value rounded to odd
     is unique. FIG (fig_holds): p + s rounded once, to nearest.
   - fp16 (acc, or products): vcvtps2ph in the mode of its immediate and
     back, exact (Intel SDM vol. 2A, VCVTPS2PH: imm8[1:0] the rounding
     control, IEEE 754 conversion, subnormals and overflow included; the
     AVX-512 kernels above use the same instruction); bf16 on the bits
     (fround_bf16_bits; the sums' NaN are 0x7fc00000 from canon() or the
     default NaN 0xffc00000, whose low 16 bits are zero: kept); other
     formats by fround_to's algorithm with 2^q = 2^(q + 21) 2^-21 (q in
     [-147, 104]: a normal encoding, and an exact product) instead of a
     per-lane shift. bf16 products in rne where every entry of A and B has
     <= 8 significant bits (nb8): Veltkamp's splitting (ra_v8, the proof
     of prod_v8), three instructions instead of the six of the bits; with
     a bf16 accumulator in rne (FIG) the whole step in six floating-point
     instructions, the product in two and the sum's rounding to bf16 by
     the same splitting, sums held in registers (ra_loopv8).
   - fp16 and bf16 accumulators, products exact or rounded but not FIG:
     t = RN(s + p) (one fused multiply-add for exact products), converted
     (ra_flag), and the sum rounded to odd only where t's low bits say it
     may be a boundary of acc's rounding (ra_flag, proven there; two
     vectors per test); with exact products the groups that fail the test
     are redone once per step of k (ra_loopd).
   The steps (ra_f16, ra_bf16, ra_round, ra_odd, ra_prod, ra_flag, ra_any,
   ra_sum) are in cpu/acc_steps.h, shared with reduce_fast32.c's AVX2 copy. */
#define LOWP_ACC_RA32 1
#define LOWP_RA_TGT __attribute__((target(LOWP_ACC_AVX2)))

/* prod_v8 (above, the AVX-512 kernels' PK_V8) on 8 lanes: a b rounded to
   bf16 in rne for a and b of <= 8 significant bits (RO32 data), given
   bc = b (2^16 + 1), exact: g = RN(a bc), h = g - RN(g - a b), the second
   rounding one fused multiply-add; the proof is prod_v8's */
LOWP_RA_TGT AI __m256 ra_v8(__m256 va, __m256 vb, __m256 bc) {
  const __m256 g = _mm256_mul_ps(va, bc);
  return _mm256_sub_ps(g, _mm256_fnmadd_ps(va, vb, g));
}

/* s[r JB + j] for the rows and the panel's columns, k from l0 to l0 + kw
   (the loops of LOWP_ROFMA_LOOP); MODE acc's mode, FMT 1 fp16 / 2 bf16 /
   0 another acc, PK the products, FIG one rounding to nearest (fig_holds) */
LOWP_RA_TGT AI void ra_loop(float *s, const double *a, size_t i, size_t rows, size_t k,
                            const float *panel, size_t l0, size_t kw, const tgt_t *acc,
                            const tgt_t *prod, const int MODE, const int FMT, const int PK,
                            const int FIG) {
  float bc[JB] __attribute__((aligned(32))); /* RP_BF16V8: the panel's row times 2^16 + 1 */
  size_t l, r, j;
  for (l = 0; l < kw; l++) {
    const float *bl = panel + l * JB;
    if (PK == RP_BF16V8)
      for (j = 0; j < JB; j += 8)
        _mm256_store_ps(bc + j, _mm256_mul_ps(_mm256_loadu_ps(bl + j), _mm256_set1_ps(65537.0f)));
    for (r = 0; r < rows; r++) {
      const __m256 va = _mm256_set1_ps((float)a[(i + r) * k + l0 + l]);
      float *sr = s + r * JB;
      for (j = 0; j < JB; j += 8) {
        __m256 vs, vb, p, x;
        vs = _mm256_loadu_ps(sr + j), vb = _mm256_loadu_ps(bl + j);
        if (PK == RP_BF16V8) p = ra_v8(va, vb, _mm256_load_ps(bc + j));
        else p = _mm256_mul_ps(va, vb);
        if (PK == RP_F16NE) p = ra_f16(p, M_NE);
        else if (PK == RP_BF16NE) p = ra_bf16(p, M_NE);
        else if (PK == RP_ANY) p = ra_prod(p, prod);
        if (FMT != 0 && !FIG) {
          vs = ra_sum(vs, p, _mm256_add_ps(p, vs), FMT, MODE);
          _mm256_storeu_ps(sr + j, vs);
          continue;
        }
        x = FIG ? _mm256_add_ps(p, vs) : ra_odd(vs, p, MODE);
        if (FMT == 1) vs = ra_f16(x, MODE);
        else if (FMT == 2) vs = ra_bf16(x, MODE);
        else vs = ra_round(x, acc, MODE);
        _mm256_storeu_ps(sr + j, vs);
      }
    }
  }
}

/* x rounded to bf16 in rne by Veltkamp's splitting, g = RN(x C) with
   C = 2^16 + 1, then g - RN(g - x): ra_loopv8's rounding, proven there */
LOWP_RA_TGT AI __m256 ra_vk8(__m256 x) {
  const __m256 g = _mm256_mul_ps(x, _mm256_set1_ps(65537.0f));
  return _mm256_sub_ps(g, _mm256_sub_ps(g, x));
}

/* ra_loop's FIG step for bf16 products and a bf16 accumulator in rne on
   nb8 data (lowp bench gemm's "bf16 in, bf16 prod, bf16 acc"), in six
   floating-point instructions instead of nine (four of them floating-point
   and the five of ra_bf16 on the bits), with the sums of 64 columns of a row
   held in registers across the panel's k (one load per step, no store):
   - the product: h = RN(g - (a 2^16) b) with g = RN((a C) b), C = 2^16 + 1
     (a C and a 2^16 exact: a has <= 8 significant bits, |a| in [2^-60,
     2^50]). g is ra_v8's g ((a C) b = a (b C) = a b C), and g - a b 2^16 =
     R 2^w, the product rounded to bf16 (prod_v8's proof), exact: one fused
     multiply-add. One difference from ra_v8: a zero product gives +0
     whatever its sign (-(a 2^16 b) + g, two opposite zeros), where ra_v8
     gives a b's sign. That sign matters only to a sum s = -0, and none
     occurs here: a sum starts != -0 (v8_sums_ok), and s + h for s != -0 is
     never -0: s + 0 = s or +0; a nonzero exact sum of two bf16 values is a
     multiple of 2^-133, so at least 2^-133 in magnitude, as are its
     roundings to binary32 and to bf16; an exact zero sum of nonzero terms
     is +0 in rne.
   - x = RN(s + h) in binary32 (FIG), then x rounded to bf16 by Veltkamp's
     splitting (Dekker, "A floating-point technique for extending the
     available precision", Numer. Math. 18, 1971; Boldo, "Pitfalls of a
     full floating-point proof", IJCAR 2006): g = RN(x C), x_h = g - RN(g -
     x) is x rounded to nearest at 24 - 16 = 8 bits; a tie (x's 16 low
     bits 1000...0 in binary) needs the even neighbour, and M C = M 2^16 + M
     (M x's 24-bit significand, even at a tie) is rounded to a multiple of
     2^16 with ties to an even quotient M + R / 2^16, so R / 2^16 is even
     too. Checked exhaustively (tests/long/tbf16_veltkamp_exhaustive.c,
     against lib/format's rounding) for every binary32 x of
     magnitude in [2^-126, 2^111 (2 - 2^-15)) and every multiple of 2^-133
     below 2^-126 (bf16's subnormals, exact: x C, g - x and the result are
     exact there), both signs; x = +-0 gives +-0. Past 2^112 - 2^96, x C
     overflows: here |x| < 2^110, as |h| <= 2^100 (|a b| <= 2^100, RO32
     data), the sums start at |s| <= 2^96 (v8_sums_ok; finite, so neither
     inf nor NaN meets the splitting), and kw <= KB = 256 steps each add
     <= 2^100 and round by a factor <= 1 + 2^-8: |s| <= (2^96 + 256 2^100)
     (1 + 2^-8)^256 < 2^110. */
LOWP_RA_TGT AI void ra_loopv8(float *s, const double *a, size_t i, size_t rows, size_t k,
                              const float *panel, size_t l0, size_t kw) {
  float ac[KB], a16[KB]; /* a C and a 2^16 for the row's kw entries */
  _Static_assert(JB % 64 == 0, "ra_loopv8 takes 64 columns at a time");
  size_t l, r, j;
  for (r = 0; r < rows; r++) {
    for (l = 0; l < kw; l++) {
      const float av = (float)a[(i + r) * k + l0 + l];
      ac[l] = av * 65537.0f, a16[l] = av * 65536.0f;
    }
    for (j = 0; j < JB; j += 64) {
      float *sr = s + r * JB + j;
      __m256 x0 = _mm256_loadu_ps(sr), x1 = _mm256_loadu_ps(sr + 8);
      __m256 x2 = _mm256_loadu_ps(sr + 16), x3 = _mm256_loadu_ps(sr + 24);
      __m256 x4 = _mm256_loadu_ps(sr + 32), x5 = _mm256_loadu_ps(sr + 40);
      __m256 x6 = _mm256_loadu_ps(sr + 48), x7 = _mm256_loadu_ps(sr + 56);
      for (l = 0; l < kw; l++) {
        const float *bl = panel + l * JB + j;
        const __m256 vc = _mm256_broadcast_ss(ac + l), v16 = _mm256_broadcast_ss(a16 + l);
#define LOWP_V8STEP(X, O)                                                         \
  {                                                                               \
    const __m256 b = _mm256_loadu_ps(bl + (O));                                   \
    X = ra_vk8(_mm256_add_ps(X, _mm256_fnmadd_ps(v16, b, _mm256_mul_ps(vc, b)))); \
  }
        LOWP_V8STEP(x0, 0) LOWP_V8STEP(x1, 8) LOWP_V8STEP(x2, 16) LOWP_V8STEP(x3, 24)
        LOWP_V8STEP(x4, 32) LOWP_V8STEP(x5, 40) LOWP_V8STEP(x6, 48) LOWP_V8STEP(x7, 56)
#undef LOWP_V8STEP
      }
      _mm256_storeu_ps(sr, x0), _mm256_storeu_ps(sr + 8, x1);
      _mm256_storeu_ps(sr + 16, x2), _mm256_storeu_ps(sr + 24, x3);
      _mm256_storeu_ps(sr + 32, x4), _mm256_storeu_ps(sr + 40, x5);
      _mm256_storeu_ps(sr + 48, x6), _mm256_storeu_ps(sr + 56, x7);
    }
  }
}

/* whether ra_loopv8 may take the sums s[0 .. cnt) (its comment): none is
   -0, every one finite and of magnitude <= 2^96 */
static int v8_sums_ok(const float *s, size_t cnt) {
  size_t l;
  for (l = 0; l < cnt; l++)
    if (!(fabsf(s[l]) <= 0x1p96f) || (s[l] == 0.0f && signbit(s[l]))) return 0;
  return 1;
}

/* ra_loop's FIG step for fp16 products and an fp16 accumulator in rne
   (PK = RP_F16NE: s + p rounded once in binary32, p = a b by vcvtps2ph and
   back, as ra_loop's FIG step), the sums held as binary16 (a sum is an fp16
   value, NaN and inf included: the conversion there and back is exact;
   every NaN of the sums is a quiet one with an empty payload below fp16's
   10 bits, 0x7fc00000 or 0xffc00000), so each step reads them with
   vcvtph2ps from memory and writes them with vcvtps2ph to memory, the same
   conversions as ra_f16's round trip, less the shuffle micro-op of
   vcvtph2ps's register form (its memory form is a load and one micro-op).
   The sum p + s0 as fma(p, 1, s0): the same RN(p + s0), zeros' signs and
   NaN included (p 1 is p exactly), on the multiply pipes: on Zen 3 the
   four conversions and the add share two pipes (llvm-mca -mcpu=znver3:
   4.5 cycles per 8 lanes, 4.0 with the fma; Haswell and Skylake 3.3 and
   3.0 either way), and the 2-core AVX2 EPYC of issue 34 ran this step at
   0.238 ns per multiply-add at n = 128, above the 0.2 target. */
LOWP_RA_TGT AI void ra_loop16(float *s, const double *a, size_t i, size_t rows, size_t k,
                              const float *panel, size_t l0, size_t kw) {
  uint16_t h[MR * JB];
  const __m256 one = _mm256_set1_ps(1.0f);
  size_t l, r, j;
  for (j = 0; j < rows * JB; j += 8)
    _mm_storeu_si128((__m128i *)(h + j), ra_f16h(_mm256_loadu_ps(s + j), M_NE));
  for (l = 0; l < kw; l++) {
    const float *bl = panel + l * JB;
    for (r = 0; r < rows; r++) {
      const __m256 va = _mm256_set1_ps((float)a[(i + r) * k + l0 + l]);
      uint16_t *hr = h + r * JB;
      for (j = 0; j < JB; j += 8) {
        const __m256 p = ra_f16(_mm256_mul_ps(va, _mm256_loadu_ps(bl + j)), M_NE);
        const __m256 s0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(hr + j)));
        _mm_storeu_si128((__m128i *)(hr + j), ra_f16h(_mm256_fmadd_ps(p, one, s0), M_NE));
      }
    }
  }
  for (j = 0; j < rows * JB; j += 8)
    _mm256_storeu_ps(s + j, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + j))));
}

/* ra_loop's step for fp16 (FMT 1) and bf16 (FMT 2) accumulators with
   exact products (RP_EX), every mode, with the fall-back taken once per
   step of k rather than once per 16 lanes. Per lane the same operations
   as before (t = RN(a b + s) by one fused multiply-add; acc's rounding of
   t where ra_near2's test passes, else of the sum rounded to odd, ra_odd:
   exact, proven with ra_flag in cpu/acc_steps.h), so the same bits. That
   test sends about one 16-lane group in 20 to the fall-back on the
   benchmark's data (exact sums whose binary32 value is a boundary of acc:
   products of bf16 or fp16 significands end in zeros, and a tie of such a
   sum is a tie of t), and the branch per group, taken at random, cost as
   much as the rest of the loop (bf16, avx2 copy: 0.16 ns per multiply-add,
   0.08 with the branch removed). Here a step writes acc's rounding of t
   for every group into the other of two buffers of sums (the sums before
   the step stay in the first) and marks the groups whose test failed in a
   mask, one bit per group (MRD = 8 rows, block_rows' groups of rows for
   this kernel, x JB / 16 columns: 64 bits), with no branch; then it redoes
   the marked groups from the sums before the step, by ra_odd, into the new
   buffer: one loop per step of k, over about 3 groups there (8 rows rather
   than MR = 4 took bf16 from 0.12-0.15 to 0.10-0.11 ns; 16 rows showed no
   further gain). The sums are held as binary32 for fp16 too (ra_loop16's
   binary16 sums ran slower here). */
LOWP_RA_TGT AI void ra_loopd(float *s, const double *a, size_t i, size_t rows, size_t k,
                             const float *panel, size_t l0, size_t kw, const int MODE,
                             const int FMT) {
  float sb[MRD * JB], af[MRD * KB];
  float *cur = s, *nxt = sb;
  size_t l, r, j;
  _Static_assert(MRD * (JB / 16) <= 64, "ra_loopd marks the groups of a step in 64 bits");
  for (r = 0; r < rows; r++)
    for (l = 0; l < kw; l++) af[r * KB + l] = (float)a[(i + r) * k + l0 + l];
  for (l = 0; l < kw; l++) {
    const float *bl = panel + l * JB;
    uint64_t fl = 0;
    for (r = 0; r < rows; r++) {
      const __m256 va = _mm256_broadcast_ss(af + r * KB + l);
      for (j = 0; j < JB; j += 16) {
        const size_t e = r * JB + j;
        const __m256 t0 = _mm256_fmadd_ps(va, _mm256_loadu_ps(bl + j), _mm256_loadu_ps(cur + e));
        const __m256 t1 =
            _mm256_fmadd_ps(va, _mm256_loadu_ps(bl + j + 8), _mm256_loadu_ps(cur + e + 8));
        __m256 r0, r1;
        const int any = ra_near2(t0, t1, &r0, &r1, FMT, MODE);
        _mm256_storeu_ps(nxt + e, r0);
        _mm256_storeu_ps(nxt + e + 8, r1);
        fl |= (uint64_t)(any != 0) << (e / 16);
      }
    }
    while (fl) { /* the marked groups, redone from the sums before the step */
      const size_t g = (size_t)__builtin_ctzll(fl), e = g * 16, rr = e / JB;
      const __m256 va = _mm256_broadcast_ss(af + rr * KB + l);
      size_t h;
      fl &= fl - 1;
      for (h = e; h < e + 16; h += 8) {
        const __m256 o = ra_odd(_mm256_loadu_ps(cur + h),
                                _mm256_mul_ps(va, _mm256_loadu_ps(bl + h - rr * JB)), MODE);
        _mm256_storeu_ps(nxt + h, FMT == 1 ? ra_f16(o, MODE) : ra_bf16(o, MODE));
      }
    }
    {
      float *w = cur;
      cur = nxt, nxt = w;
    }
  }
  if (cur != s) memcpy(s, cur, rows * JB * sizeof *s);
}

/* the loops with compile-time constants: products by PK_ (the directed
   modes: exact or any), accumulators by fmt */
#define LOWP_RA_PK(MODE, FMT, FIG)                                               \
  switch ((MODE) != M_NE && pk != RP_EX ? RP_ANY : pk) {                         \
  case RP_EX:                                                                    \
    if ((FMT) != 0) ra_loopd(s, a, i, rows, k, panel, l0, kw, MODE, FMT);          \
    else ra_loop(s, a, i, rows, k, panel, l0, kw, acc, prod, MODE, FMT, RP_EX, 0); \
    break;                                                                       \
  case RP_F16NE:                                                                 \
    if ((FMT) == 1 && (FIG)) ra_loop16(s, a, i, rows, k, panel, l0, kw);          \
    else ra_loop(s, a, i, rows, k, panel, l0, kw, acc, prod, MODE, FMT, RP_F16NE, FIG); \
    break;                                                                       \
  case RP_BF16NE: ra_loop(s, a, i, rows, k, panel, l0, kw, acc, prod, MODE, FMT, RP_BF16NE, FIG); break; \
  case RP_BF16V8: ra_loop(s, a, i, rows, k, panel, l0, kw, acc, prod, MODE, FMT, RP_BF16V8, FIG); break; \
  default: ra_loop(s, a, i, rows, k, panel, l0, kw, acc, prod, MODE, FMT, RP_ANY, FIG); break; \
  }
#define LOWP_RA_FMT(MODE, FIG)                                                   \
  switch (fmt) {                                                                 \
  case 1: LOWP_RA_PK(MODE, 1, FIG) break;                                        \
  case 2: LOWP_RA_PK(MODE, 2, FIG) break;                                        \
  default: LOWP_RA_PK(MODE, 0, FIG) break;                                       \
  }
LOWP_RA_TGT static void ro32_avx2(float *s, const double *a, size_t i, size_t rows, size_t k,
                                  const float *panel, size_t l0, size_t kw, const tgt_t *acc,
                                  const tgt_t *prod, int rp, int nb8) {
  const int fmt = acc->fp16 ? 1 : acc->bf16 ? 2 : 0;
  const int pk = !rp                                ? RP_EX
                 : prod->mode == M_NE && prod->fp16 ? RP_F16NE
                 : prod->mode == M_NE && prod->bf16 ? (nb8 ? RP_BF16V8 : RP_BF16NE)
                                                    : RP_ANY;
  switch (acc->mode) {
  case M_TZ: LOWP_RA_FMT(M_TZ, 0) break;
  case M_UP: LOWP_RA_FMT(M_UP, 0) break;
  case M_DN: LOWP_RA_FMT(M_DN, 0) break;
  default:
    if (rp && fig_holds(acc, prod, 24, -126) && fmt == 2 && pk == RP_BF16V8 &&
        v8_sums_ok(s, rows * JB))
      ra_loopv8(s, a, i, rows, k, panel, l0, kw);
    else if (rp && fig_holds(acc, prod, 24, -126)) LOWP_RA_FMT(M_NE, 1)
    else LOWP_RA_FMT(M_NE, 0)
    break;
  }
}
#undef LOWP_RA_FMT
#undef LOWP_RA_PK

/* RO64 on AVX2 (K_RO, K_RORP): vstep_ro and vstep_fig on 4 binary64 lanes
   of intrinsics (rd_odd, rd_round: cpu/acc_steps.h); s: rows x JB sums,
   panel: kw x JB binary64 (zeros past jw) */
LOWP_RA_TGT AI void rd_loop(double *s, const double *a, size_t i, size_t rows, size_t k,
                            const double *panel, size_t l0, size_t kw, const tgt_t *acc,
                            const tgt_t *prod, const int MODE, const int RP, const int FIG) {
  size_t l, r, j;
  for (l = 0; l < kw; l++) {
    const double *bl = panel + l * JB;
    for (r = 0; r < rows; r++) {
      const __m256d va = _mm256_broadcast_sd(&a[(i + r) * k + l0 + l]);
      double *sr = s + r * JB;
      for (j = 0; j < JB; j += 4) {
        __m256d vs = _mm256_loadu_pd(sr + j), p = _mm256_mul_pd(va, _mm256_loadu_pd(bl + j));
        if (RP) p = rd_round(p, prod, prod->mode);
        vs = rd_round(FIG ? _mm256_add_pd(vs, p) : rd_odd(vs, p, MODE), acc, MODE);
        _mm256_storeu_pd(sr + j, vs);
      }
    }
  }
}

LOWP_RA_TGT static void ro64_avx2(double *s, const double *a, size_t i, size_t rows, size_t k,
                                  const double *panel, size_t l0, size_t kw, const tgt_t *acc,
                                  const tgt_t *prod, int rp, int fig) {
#define LOWP_RD(MODE)                                                              \
  if (fig) rd_loop(s, a, i, rows, k, panel, l0, kw, acc, prod, MODE, 1, 1);         \
  else if (rp) rd_loop(s, a, i, rows, k, panel, l0, kw, acc, prod, MODE, 1, 0);     \
  else rd_loop(s, a, i, rows, k, panel, l0, kw, acc, prod, MODE, 0, 0);
  switch (acc->mode) {
  case M_TZ: LOWP_RD(M_TZ) break;
  case M_UP: LOWP_RD(M_UP) break;
  case M_DN: LOWP_RD(M_DN) break;
  default: LOWP_RD(M_NE) break;
  }
#undef LOWP_RD
}
#undef LOWP_RA_TGT
#endif

/* --------------------------------------------------------------- kernels */

#ifdef LOWP_ACC_RA32
#define LOWP_RO64_AVX2 1
#else
#define LOWP_RO64_AVX2 0
#endif

/* Kinds as compile-time constants of the inlined loops. */
enum { K_FMA64, K_ADD64, K_FMA32, K_ADD32, K_RO, K_RORP, K_RF, K_RFRP, K_DIR32, K_DIR32RP,
       K_RFM, K_RFMRP, K_RFA, K_RFARP };

/* rows [i0, i1) x columns [j0, j0 + jw) for k in [l0, l0 + kw), the panel
   of B packed as kw x jw (doubles, or floats for the fp32 kernels) */
AI void block_rows(const job_t *jb, const void *panel, size_t i0, size_t i1, size_t j0,
                   size_t jw, size_t l0, size_t kw, int kind, int mode) {
  /* local copies: stores to the sums could alias the constants otherwise,
     which keeps them out of registers and the loop from vectorising */
  const tgt_t acc = jb->acc, prod = jb->prod;
  const int ro = kind == K_RO || kind == K_RORP;
  const int blk = kind == K_DIR32 || kind == K_DIR32RP || kind == K_RFM || kind == K_RFMRP ||
                  kind == K_RFA || kind == K_RFARP;
  const int f32 = kind == K_FMA32 || kind == K_ADD32 || kind == K_RF || kind == K_RFRP || blk;
  /* rounded products inside acc, rne: FIG's one rounding in binary32 / 64 */
  const int fig32 = kind == K_RFRP && fig_holds(&acc, &prod, 24, -126);
  const int fig64 = kind == K_RORP && fig_holds(&acc, &prod, 53, -1022);
  size_t i, r, j, l, rows;
  for (i = i0; i < i1; i += rows) {
    /* (K_RFA: MRD rows at a time, ra_loopd's fix-ups once per step for them) */
    const size_t mr = kind == K_RFA && jb->isa == ISA_AVX2 ? MRD : MR;
    double sd[MRD][JB];
    float sf[MRD][JB];
    rows = i1 - i < mr ? i1 - i : mr;
    if (ro) memset(sd, 0, sizeof sd);
    if (kind == K_RF || kind == K_RFRP || blk) memset(sf, 0, sizeof sf);
    for (r = 0; r < rows; r++)
      for (j = 0; j < jw; j++) {
        sd[r][j] = jb->c[(i + r) * jb->n + j0 + j];
        /* NaN as the quiet NaN with an empty low half (rofmab's rounding on
           the bits keeps it: the only NaN its sums meet, RO32 data being
           finite); the output is canon()'s NaN whatever its sign */
        sf[r][j] = (float)canon(sd[r][j]);
      }
    /* (the blk kinds run the whole block in an AVX-512 or AVX2 function
       below, and so does RO64 on AVX2) */
    for (l = 0; l < (blk || (ro && jb->isa == ISA_AVX2 && LOWP_RO64_AVX2) ? 0 : kw); l++)
      for (r = 0; r < rows; r++) {
        double av = jb->a[(i + r) * jb->k + l0 + l];
        if (kind == K_RF || kind == K_RFRP) {
          /* whole vectors over the padded panel (JB columns, zeros past jw) */
          const float *bl = (const float *)panel + l * JB;
          vf va = fsplat((float)av);
          float *s = sf[r];
          for (j = 0; j < JB; j += VWF) {
            vf vs, vb;
            memcpy(&vs, s + j, sizeof vs);
            memcpy(&vb, bl + j, sizeof vb);
            if (fig32) vs = fstep_fig(vs, va, vb, &acc, &prod);
            else vs = fstep_ro(vs, va, vb, &acc, &prod, mode, kind == K_RFRP);
            memcpy(s + j, &vs, sizeof vs);
          }
        } else if (kind == K_FMA32 || kind == K_ADD32) {
          const float *bl = (const float *)panel + l * jw;
          float af = (float)av, *s = sf[r];
          if (kind == K_FMA32)
            for (j = 0; j < jw; j++) s[j] = fmaf(af, bl[j], s[j]);
          else
            for (j = 0; j < jw; j++) s[j] = af * bl[j] + s[j];
        } else {
          const double *bl = (const double *)panel + l * (ro ? JB : jw);
          double *s = sd[r];
          if (kind == K_FMA64)
            for (j = 0; j < jw; j++) s[j] = fma(av, bl[j], s[j]);
          else if (kind == K_ADD64)
            for (j = 0; j < jw; j++) s[j] = av * bl[j] + s[j];
          else {
            /* whole vectors over the padded panel (JB columns, zeros past jw) */
            vd va = vsplat(av);
            for (j = 0; j < JB; j += VW) {
              vd vs, vb;
              memcpy(&vs, s + j, sizeof vs);
              memcpy(&vb, bl + j, sizeof vb);
              if (fig64) vs = vstep_fig(vs, va, vb, &acc, &prod);
              else vs = vstep_ro(vs, va, vb, &acc, &prod, mode, kind == K_RORP);
              memcpy(s + j, &vs, sizeof vs);
            }
          }
        }
      }
#ifdef LOWP_ACCFAST_X86
    if ((kind == K_DIR32 || kind == K_DIR32RP) && jb->isa == ISA_AVX512)
      dir32_avx512(&sf[0][0], jb->a, i, rows, jb->k, panel, l0, kw, kind == K_DIR32RP,
                   jb->acc.mode);
    else if (kind == K_DIR32 || kind == K_DIR32RP)
      dir32_avx2(&sf[0][0], jb->a, i, rows, jb->k, panel, l0, kw, kind == K_DIR32RP,
                 jb->acc.mode);
#endif
#ifdef LOWP_ACC_RO16
    if (kind == K_RFM || kind == K_RFMRP) {
      int pk = ro16_pk(jb, kind == K_RFMRP);
      float *s0 = &sf[0][0];
      if (acc.fp16)
        rofma16_avx512(s0, jb->a, i, rows, jb->k, panel, l0, kw, &acc, &prod, pk, acc.mode);
      else if (acc.bf16)
        rofmab_avx512(s0, jb->a, i, rows, jb->k, panel, l0, kw, &acc, &prod, pk, acc.mode);
      else
        rofma_avx512(s0, jb->a, i, rows, jb->k, panel, l0, kw, &acc, &prod, pk, acc.mode);
    }
#endif
#ifdef LOWP_ACC_RA32
    if (ro && jb->isa == ISA_AVX2)
      ro64_avx2(&sd[0][0], jb->a, i, rows, jb->k, (const double *)panel, l0, kw, &acc, &prod,
                kind == K_RORP, fig64);
    if (kind == K_RFA || kind == K_RFARP)
      ro32_avx2(&sf[0][0], jb->a, i, rows, jb->k, panel, l0, kw, &acc, &prod, kind == K_RFARP,
                jb->nb8);
#endif
    for (r = 0; r < rows; r++)
      for (j = 0; j < jw; j++) {
        double v = f32 ? (double)sf[r][j] : sd[r][j];
        jb->c[(i + r) * jb->n + j0 + j] = canon(v);
      }
  }
}

/* one task: rows [i0, i1), columns [j0, j0 + jw), all of k */
AI void task(const job_t *jb, void *panel, size_t i0, size_t i1, size_t j0, size_t jw,
             int kind, int mode) {
  size_t l0, l, j;
  int blk = kind == K_DIR32 || kind == K_DIR32RP || kind == K_RFM || kind == K_RFMRP ||
            kind == K_RFA || kind == K_RFARP;
  int f32 = kind == K_FMA32 || kind == K_ADD32 || kind == K_RF || kind == K_RFRP || blk;
  size_t ld = (kind == K_RF || kind == K_RFRP || blk) ? JB : jw; /* padded rows */
  for (l0 = 0; l0 < jb->k; l0 += KB) {
    size_t kw = jb->k - l0 < KB ? jb->k - l0 : KB;
    for (l = 0; l < kw; l++) {
      const double *src = jb->b + (l0 + l) * jb->n + j0;
      if (f32) {
        for (j = 0; j < jw; j++) ((float *)panel)[l * ld + j] = (float)src[j];
        for (; j < ld; j++) ((float *)panel)[l * ld + j] = 0.0f;
      }
      else if (kind == K_RO || kind == K_RORP) {
        memcpy((double *)panel + l * JB, src, jw * sizeof(double));
        memset((double *)panel + l * JB + jw, 0, (JB - jw) * sizeof(double));
      } else
        memcpy((double *)panel + l * jw, src, jw * sizeof(double));
    }
    block_rows(jb, panel, i0, i1, j0, jw, l0, kw, kind, mode);
  }
}

AI void task_kinds(const job_t *jb, void *panel, size_t i0, size_t i1, size_t j0,
                   size_t jw, int kind) {
  switch (kind) {
  case K_FMA64: task(jb, panel, i0, i1, j0, jw, K_FMA64, M_NE); break;
  case K_ADD64: task(jb, panel, i0, i1, j0, jw, K_ADD64, M_NE); break;
  case K_FMA32: task(jb, panel, i0, i1, j0, jw, K_FMA32, M_NE); break;
  case K_ADD32: task(jb, panel, i0, i1, j0, jw, K_ADD32, M_NE); break;
  case K_DIR32: task(jb, panel, i0, i1, j0, jw, K_DIR32, M_NE); break;
  case K_DIR32RP: task(jb, panel, i0, i1, j0, jw, K_DIR32RP, M_NE); break;
  case K_RFM: task(jb, panel, i0, i1, j0, jw, K_RFM, M_NE); break;
  case K_RFMRP: task(jb, panel, i0, i1, j0, jw, K_RFMRP, M_NE); break;
  case K_RFA: task(jb, panel, i0, i1, j0, jw, K_RFA, M_NE); break;
  case K_RFARP: task(jb, panel, i0, i1, j0, jw, K_RFARP, M_NE); break;
  default: {
    int rp = kind == K_RORP || kind == K_RFRP, rf = kind == K_RF || kind == K_RFRP;
#define LOWP_RO_CASE(MODE)                                                     \
  if (rf && rp) task(jb, panel, i0, i1, j0, jw, K_RFRP, MODE);                  \
  else if (rf) task(jb, panel, i0, i1, j0, jw, K_RF, MODE);                     \
  else if (rp) task(jb, panel, i0, i1, j0, jw, K_RORP, MODE);                   \
  else task(jb, panel, i0, i1, j0, jw, K_RO, MODE);                             \
  break;
    switch (jb->acc.mode) {
    case M_TZ: LOWP_RO_CASE(M_TZ)
    case M_UP: LOWP_RO_CASE(M_UP)
    case M_DN: LOWP_RO_CASE(M_DN)
    default: LOWP_RO_CASE(M_NE)
    }
#undef LOWP_RO_CASE
  }
  }
}

/* ------------------------------------------------------------- dispatch */

static void run_generic(const job_t *jb, void *panel, size_t i0, size_t i1, size_t j0,
                        size_t jw, int kind) {
  task_kinds(jb, panel, i0, i1, j0, jw, kind);
}

#ifdef LOWP_ACCFAST_X86
__attribute__((target("avx2,fma"))) static void
run_avx2(const job_t *jb, void *panel, size_t i0, size_t i1, size_t j0, size_t jw,
         int kind) {
  task_kinds(jb, panel, i0, i1, j0, jw, kind);
}
__attribute__((target(LOWP_ACC_AVX512))) static void
run_avx512(const job_t *jb, void *panel, size_t i0, size_t i1, size_t j0, size_t jw,
           int kind) {
  task_kinds(jb, panel, i0, i1, j0, jw, kind);
}
#endif


static void run_isa(int isa, const job_t *jb, void *panel, size_t i0, size_t i1,
                    size_t j0, size_t jw, int kind) {
  switch (isa) {
#ifdef LOWP_ACCFAST_X86
  case ISA_AVX512: run_avx512(jb, panel, i0, i1, j0, jw, kind); break;
  case ISA_AVX2: run_avx2(jb, panel, i0, i1, j0, jw, kind); break;
#endif
  default: run_generic(jb, panel, i0, i1, j0, jw, kind); break;
  }
}

/* ------------------------------------------------------- applicability */

/* whether the fp16 kernel on vcvtps2ph is compiled in (gcc on x86) */
static int ro16_built(void) {
#ifdef LOWP_ACC_RO16
  return 1;
#else
  return 0;
#endif
}

/* whether the AVX2 RO32 kernel is compiled in (x86) and this CPU has F16C */
static int ra32_runs(void) {
#ifdef LOWP_ACC_RA32
  return lowp_cpu_has_f16c();
#else
  return 0;
#endif
}

static int fast_mode(lowp_rounding_t rnd) {
  switch (rnd) {
  case LOWP_RND_NE: return M_NE;
  case LOWP_RND_TZ: return M_TZ;
  case LOWP_RND_UP: return M_UP;
  case LOWP_RND_DN: return M_DN;
  default: return -1;
  }
}

static int is_fmt(const lowp_format_t *f, int p, int emin, int emax) {
  return f->precision == p && f->emin == emin && f->emax == emax;
}

/* the arithmetic of round_to: IEEE-like, 2 <= p <= 51, exponents with room */
static int ieee_like(const lowp_format_t *f) {
  return f->subnormals && f->inf == LOWP_INF_IEEE && f->nan == LOWP_NAN_IEEE &&
         f->has_sign && f->has_zero;
}

static int ro_fits(const lowp_format_t *f, lowp_rounding_t rnd) {
  return ieee_like(f) && f->precision >= 2 && f->precision <= 51 &&
         f->emin - f->precision >= -1000 && f->emax <= 900 && fast_mode(rnd) >= 0;
}

static int default_policy(const lowp_policy_t *pol) {
  return !pol || (pol->overflow == LOWP_OVF_IEEE && !pol->ftz && !pol->daz);
}

/* whether every x[l], l < cnt, is RO32 data (input_class's 2), on the
   binary64 encoding's two 32-bit halves, without a branch: the low half
   and the high half's low 9 bits zero (<= 12 significant bits), the high
   half without its sign 0 (a zero) or in [2^-60's, 2^50's] (exponents
   -60 .. 50: normal binary32 values). 32-bit lanes that a baseline
   compiler vectorises: 0.38 ns per value against the loop below's 1.2,
   which at n = 128 took a tenth of an RO32 GEMM's time. */
static int all_ro32(const double *x, size_t cnt) {
  size_t l;
  uint32_t bad = 0;
  for (l = 0; l < cnt; l++) {
    uint64_t u;
    uint32_t h, w;
    memcpy(&u, &x[l], sizeof u);
    w = (uint32_t)u;
    h = (uint32_t)(u >> 32) & 0x7fffffffu;
    bad |= w | ((h != 0) & (((h & 0x1ffu) != 0) | (h - 0x3c300000u > 0x43100000u - 0x3c300000u)));
  }
  return !bad;
}

/* 2: every x[l inc], l < cnt, is zero or a binary32 value of <= 12
   significant bits with magnitude in [2^-60, 2^50] (the RO32 data);
   1: every one is a binary32 value, inf or NaN; 0: otherwise */
static int input_class(const double *x, size_t cnt, size_t inc) {
  size_t l;
  int cls = 2;
  if (inc == 1 && all_ro32(x, cnt)) return 2;
  for (l = 0; l < cnt; l++) {
    double v = x[l * inc], av = fabs(v);
    float fv = (float)v;
    uint32_t u;
    if (v == v && (double)fv != v) return 0;
    memcpy(&u, &fv, sizeof u);
    if (v != 0 && !(av >= 0x1p-60 && av <= 0x1p50 && (u & 0xfffu) == 0)) cls = 1;
  }
  return cls;
}

/* whether every x[l], l < cnt, of RO32 data (normal binary32 values or
   zeros) has <= 8 significant bits: the low 16 bits of its encoding zero */
static int narrow8(const double *x, size_t cnt) {
  size_t l;
  for (l = 0; l < cnt; l++) {
    float fv = (float)x[l];
    uint32_t u;
    memcpy(&u, &fv, sizeof u);
    if (u & 0xffffu) return 0;
  }
  return 1;
}

/* the RO32 arithmetic: p <= 22, quantum >= 2^-147, binade <= 127; and
   fround_to's sigma = 1.5 2^(q+23) a binary32 value for every sum up to
   the binade above emax (q = emax + 2 - p <= 104), except for bf16, rounded
   on its bits (tf32, emax 127, fails it and runs RO64) */
static int ro32_fits(const lowp_format_t *f, lowp_rounding_t rnd) {
  return ro_fits(f, rnd) && f->precision <= 22 && f->emin - f->precision + 1 >= -147 &&
         f->emax <= 127 && (f->emax + 2 - f->precision <= 104 || is_fmt(f, 8, -126, 127));
}

static lowp_accfast_kind_t kind_of(const lowp_gemm_acc_cfg_t *g, int f32_inputs) {
  const lowp_format_t *acc = g->acc, *prod = g->prod;
  if (!g || !acc || g->order != LOWP_ORDER_RECURSIVE || !default_policy(g->pol))
    return LOWP_ACCFAST_NONE;
  if (lowp_format_validate(acc, NULL, 0) != 0) return LOWP_ACCFAST_NONE;
  if (prod && lowp_format_validate(prod, NULL, 0) != 0) return LOWP_ACCFAST_NONE;
  if (ieee_like(acc) && g->acc_rnd == LOWP_RND_NE && is_fmt(acc, 53, -1022, 1023) &&
      (!prod || (ieee_like(prod) && g->prod_rnd == LOWP_RND_NE && is_fmt(prod, 53, -1022, 1023))))
    return LOWP_ACCFAST_FMA64;
  if (!f32_inputs) return LOWP_ACCFAST_NONE;
  /* fp32 in rne, or (AVX-512's rounding in the instruction, AVX2's
     rounding mode register) rtz/rup/rdn with products exact or rounded to
     fp32 in the same mode */
  if (ieee_like(acc) && is_fmt(acc, 24, -126, 127) && fast_mode(g->acc_rnd) >= 0 &&
      (g->acc_rnd == LOWP_RND_NE || (int)lowp_cpu_isa(1) >= ISA_AVX2) &&
      (!prod || (ieee_like(prod) && g->prod_rnd == g->acc_rnd && is_fmt(prod, 24, -126, 127))))
    return LOWP_ACCFAST_FMA32;
  if (f32_inputs == 2 && ro32_fits(acc, g->acc_rnd) && (!prod || ro32_fits(prod, g->prod_rnd)))
    return LOWP_ACCFAST_RO32;
  if (ro_fits(acc, g->acc_rnd) && (!prod || ro_fits(prod, g->prod_rnd)))
    return LOWP_ACCFAST_RO64;
  return LOWP_ACCFAST_NONE;
}

static void tgt_of(tgt_t *t, const lowp_format_t *f, lowp_rounding_t rnd) {
  memset(t, 0, sizeof *t);
  if (!f) return;
  t->p = f->precision;
  t->emin = f->emin;
  t->mode = fast_mode(rnd);
  t->xmax = lowp_format_xmax(f);
  t->bf16 = ieee_like(f) && is_fmt(f, 8, -126, 127);
  t->fp16 = ieee_like(f) && is_fmt(f, 11, -14, 15);
}

/* ----------------------------------------------------------- public API */

lowp_accfast_kind_t lowp_gemm_acc_fast_kind(const double *a, const double *b, size_t m,
                                            size_t n, size_t k,
                                            const lowp_gemm_acc_cfg_t *cfg) {
  lowp_accfast_kind_t kd = kind_of(cfg, 0);
  if (kd != LOWP_ACCFAST_NONE || !cfg) return kd;
  if (k && (!a || !b)) return LOWP_ACCFAST_NONE;
  {
    int ca = k ? input_class(a, m * k, 1) : 2, cb = k ? input_class(b, k * n, 1) : 2;
    return kind_of(cfg, ca < cb ? ca : cb);
  }
}

int lowp_gemm_acc_fast(double *c, const double *a, const double *b, size_t m, size_t n,
                       size_t k, const lowp_gemm_acc_cfg_t *cfg, lowp_accfast_kind_t kind,
                       const char *isa) {
  job_t jb;
  size_t e, ntask, nj, ni;
  long long t;
  int best = (int)lowp_cpu_isa(1), use = best, kk, fail = 0;
  if (isa) {
    if ((use = lowp_isa_parse(isa)) < 0) return LOWP_EINVAL;
    if (use > best) return LOWP_EUNSUPPORTED;
  }
  if (kind == LOWP_ACCFAST_NONE || !cfg || (m && n && !c) || (k && (!a || !b)))
    return LOWP_EINVAL;
  if (m == 0 || n == 0) return LOWP_OK;
  /* the addend, rounded to acc as the reference does (its NaN sign policy);
     a zero (the usual C) is its own rounding in every mode (IEEE-like acc,
     default policy: kind_of), and lowp_round_f64 per element took 0.012
     ns per multiply-add at n = 1024 */
  for (e = 0; e < m * n; e++)
    if (c[e] != 0) (void)lowp_round_f64(&c[e], c[e], cfg->acc, cfg->pol, cfg->acc_rnd);
  if (k == 0) return LOWP_OK;
  jb.a = a, jb.b = b, jb.c = c, jb.m = m, jb.n = n, jb.k = k;
  tgt_of(&jb.acc, cfg->acc, cfg->acc_rnd);
  tgt_of(&jb.prod, cfg->prod, cfg->prod_rnd);
  kk = kind == LOWP_ACCFAST_FMA64 ? (cfg->prod ? K_ADD64 : K_FMA64)
       : kind == LOWP_ACCFAST_FMA32 && cfg->acc_rnd != LOWP_RND_NE
           ? (use >= ISA_AVX2 ? (cfg->prod ? K_DIR32RP : K_DIR32) : (cfg->prod ? K_RORP : K_RO))
       : kind == LOWP_ACCFAST_FMA32 ? (cfg->prod ? K_ADD32 : K_FMA32)
       : kind == LOWP_ACCFAST_RO32 && use == ISA_AVX512 && ro16_built()
           ? (cfg->prod ? K_RFMRP : K_RFM)
       : kind == LOWP_ACCFAST_RO32 && use == ISA_AVX2 && ra32_runs()
           ? (cfg->prod ? K_RFARP : K_RFA)
       : kind == LOWP_ACCFAST_RO32 ? (cfg->prod ? K_RFRP : K_RF)
       : (cfg->prod ? K_RORP : K_RO);
  jb.isa = use;
  jb.nb8 = (kk == K_RFMRP || kk == K_RFARP) && jb.prod.bf16 && narrow8(a, m * k) &&
           narrow8(b, k * n);
  nj = (n + JB - 1) / JB, ni = (m + IR - 1) / IR, ntask = nj * ni;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : fail)
  for (t = 0; t < (long long)ntask; t++) {
    size_t j0 = ((size_t)t % nj) * JB, i0 = ((size_t)t / nj) * IR;
    size_t jw = n - j0 < JB ? n - j0 : JB, i1 = m - i0 < IR ? m : i0 + IR;
    void *panel = malloc((size_t)KB * JB * sizeof(double));
    if (!panel) { fail = 1; continue; }
    run_isa(use, &jb, panel, i0, i1, j0, jw, kk);
    free(panel);
  }
  return fail ? LOWP_ENOMEM : LOWP_OK;
}


/* lowp_dot_acc_fast_many's RO64 steps: step_ro on each lane, as vstep_ro on the lanes of a vd (the
   GEMM kernels' step, the same bits lane by lane: tests/tgemm_acc_fast.c); lanes from g on are zeros */
_Static_assert(sizeof(vd) == LOWP_DOT_FAST_LANES * sizeof(double), "many_ro: one lane of vd a dot");
AI void many_ro(double *s, size_t g, const double *const *x, size_t incx, const double *const *w,
                size_t incw, size_t n, const tgt_t *acc, const tgt_t *prod, int rp) {
  vd sv, av, bv;
  size_t l, q;
  for (q = 0; q < LOWP_DOT_FAST_LANES; q++) sv[q] = q < g ? s[q] : 0.0;
  for (l = 0; l < n; l++) {
    for (q = 0; q < LOWP_DOT_FAST_LANES; q++) {
      av[q] = q < g ? x[q][l * incx] : 0.0;
      bv[q] = q < g ? w[q][l * incw] : 0.0;
    }
    sv = vstep_ro(sv, av, bv, acc, prod, acc->mode, rp);
  }
  for (q = 0; q < g; q++) s[q] = sv[q];
}
static void many_ro_generic(double *s, size_t g, const double *const *x, size_t incx, const double *const *w,
                            size_t incw, size_t n, const tgt_t *acc, const tgt_t *prod, int rp) {
  many_ro(s, g, x, incx, w, incw, n, acc, prod, rp);
}
#ifdef LOWP_ACCFAST_X86
__attribute__((target("avx2,fma"))) static void
many_ro_avx2(double *s, size_t g, const double *const *x, size_t incx, const double *const *w, size_t incw,
             size_t n, const tgt_t *acc, const tgt_t *prod, int rp) {
  many_ro(s, g, x, incx, w, incw, n, acc, prod, rp);
}
#endif

int lowp_dot_acc_fast_many(double *y, size_t g, const double *const *x, size_t incx, const double *const *w,
                           size_t incw, size_t n, double init, const lowp_gemm_acc_cfg_t *cfg,
                           const char *isa) {
  lowp_accfast_kind_t kd = kind_of(cfg, 0);
  tgt_t acc, prod;
  double s[LOWP_DOT_FAST_LANES], s0;
  size_t l, q;
  int use = (int)lowp_cpu_isa(1);
  if (isa) {
    int want = lowp_isa_parse(isa);
    if (want < 0) return LOWP_EINVAL;
    if (want > use) return LOWP_EUNSUPPORTED;
    use = want;
  }
  if (g == 0) return LOWP_OK;
  if (!y || g > LOWP_DOT_FAST_LANES || !x || !w) return LOWP_EINVAL;
  for (q = 0; q < g; q++)
    if (n && (!x[q] || !w[q])) return LOWP_EINVAL;
  /* the kind of every lane: one for all, or data-dependent and then the same for each (the RO64 step
     serves the RO32 data too, a subset) */
  if (kd == LOWP_ACCFAST_NONE && n) {
    for (q = 0; q < g; q++)
      if (!input_class(x[q], n, incx) || !input_class(w[q], n, incw)) return LOWP_EINVAL;
    kd = kind_of(cfg, 1);
  }
  if (kd == LOWP_ACCFAST_NONE) return LOWP_EINVAL;
  (void)lowp_round_f64(&s0, init, cfg->acc, cfg->pol, cfg->acc_rnd);
  tgt_of(&acc, cfg->acc, cfg->acc_rnd);
  tgt_of(&prod, cfg->prod, cfg->prod_rnd);
  for (q = 0; q < g; q++) s[q] = s0;
  /* one step of each lane in turn */
  if (kd == LOWP_ACCFAST_FMA64 || (kd == LOWP_ACCFAST_FMA32 && cfg->acc_rnd == LOWP_RND_NE)) {
    for (l = 0; l < n; l++)
      for (q = 0; q < g; q++) {
        double a = x[q][l * incx], b = w[q][l * incw];
        if (kd == LOWP_ACCFAST_FMA64) s[q] = cfg->prod ? a * b + s[q] : fma(a, b, s[q]);
        else
          s[q] = cfg->prod ? (double)((float)a * (float)b + (float)s[q])
                           : (double)fmaf((float)a, (float)b, (float)s[q]);
      }
  } else if (g == 1) { /* one dot (lowp_dot_acc_fast): the scalar RO64 step, no vector of eight lanes */
    for (l = 0; l < n; l++)
      s[0] = step_ro(s[0], x[0][l * incx], w[0][l * incw], &acc, &prod, acc.mode, cfg->prod != NULL);
  } else {
#ifdef LOWP_ACCFAST_X86
    if (use >= ISA_AVX2) many_ro_avx2(s, g, x, incx, w, incw, n, &acc, &prod, cfg->prod != NULL);
    else
#endif
      many_ro_generic(s, g, x, incx, w, incw, n, &acc, &prod, cfg->prod != NULL);
  }
  for (q = 0; q < g; q++) y[q] = n ? canon(s[q]) : s[q];
  return LOWP_OK;
}

int lowp_dot_acc_fast(double *y, const double *x, size_t incx, const double *w,
                      size_t incw, size_t n, double init, const lowp_gemm_acc_cfg_t *cfg) {
  return lowp_dot_acc_fast_many(y, 1, &x, incx, &w, incw, n, init, cfg, NULL); /* one lane: the scalar step */
}

const char *lowp_gemm_acc_fast_isa(void) {
  return lowp_isa_name(lowp_cpu_isa(1));
}
