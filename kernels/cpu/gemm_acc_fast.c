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
 *          down and up whose odd member is the sum rounded to odd (rofma*).
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

enum { JB = 128, KB = 256, MR = 4, IR = 128 };

/* Everything a task needs. */
typedef struct {
  const double *a, *b;
  double *c;
  size_t m, n, k;
  tgt_t acc, prod;
} job_t;

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

AI vf fstep_ro(vf s, vf a, vf b, const tgt_t *acc, const tgt_t *prod, int mode, int rp) {
  vf p = a * b, x;
  tgt_t ac = *acc;
  if (rp) p = fround_to(p, prod);
  ac.mode = mode;
  x = fadd_odd(s, p, mode);
  return ac.bf16 ? fround_bf16(x, mode) : fround_to(x, &ac);
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

#ifdef LOWP_ACC_RO16
/* (gcc only, cpu/acc_steps.h: clang builds run K_RF) */
/* RO32 on AVX-512 (any RO32 accumulator; fp16 and bf16 the fast ones).
   The sum rounded to odd at 24 bits from two roundings of the same exact
   value: d = fma(a, b, s) rounded down and u = rounded up (AVX-512's
   rounding in the instruction; IEEE 754 fusedMultiplyAdd, or multiply,
   round to prod, then add). d == u: the sum is exact (zeros included: u
   has IEEE 754's sign of an exact zero sum for rne/rtz/rup, d for rdn, so
   the mode's own result is taken). d != u: they are the two binary32
   neighbours of the exact value, one of them odd (adjacent encodings of
   one sign), and that one is the round-to-odd value (RO32 data: the exact
   sums are multiples of 2^-143, so binary32's subnormal grid holds them and
   the 24-bit argument of fstep_ro applies; a sum beyond FLT_MAX gives
   d = FLT_MAX, odd, above every narrower format's largest value and
   midpoint, so the last rounding overflows as the exact value would).
   Then the last rounding to acc: fp16 by the CPU's own binary32 -> fp16
   conversion (vcvtps2ph, IEEE 754 in the mode of its immediate,
   subnormals and overflow included) and back (exact); bf16 on the bits
   (fround_bf16_bits); others by fround_to. Rounded products (a b is exact in
   binary32 on RO32 data) are rounded the same three ways. NaN (from C only: RO32 data is
   finite) stays NaN: the comparison is ordered, the FMA returns the quiet
   NaN it is given (0x7fc00000, block_rows' canon) and the bf16 rounding on
   the bits keeps a NaN whose low 16 bits are zero; inf stays inf. */
/* pb[0..JB) = av bl[j] rounded to prod (exact in binary32 on RO32 data):
   fp16 by vcvtps2ph, bf16 on the bits (finite: no NaN test), others by
   fround_to; the choice made once per row of products */
__attribute__((target(LOWP_ACC_AVX512))) AI void
prods_avx512(float *pb, float av, const float *bl, const tgt_t *prod) {
  const __m512 va = _mm512_set1_ps(av);
  size_t j;
#define LOWP_PROD_LOOP(EXPR)                                                     \
  for (j = 0; j < JB; j += 16) {                                                 \
    __m512 p = _mm512_mul_ps(va, _mm512_loadu_ps(bl + j));                       \
    _mm512_storeu_ps(pb + j, EXPR);                                              \
  }
#define LOWP_P16(RC) _mm512_cvtph_ps(_mm512_cvtps_ph(p, RC | _MM_FROUND_NO_EXC))
  if (prod->fp16) {
    switch (prod->mode) {
    case M_TZ: LOWP_PROD_LOOP(LOWP_P16(_MM_FROUND_TO_ZERO)) break;
    case M_UP: LOWP_PROD_LOOP(LOWP_P16(_MM_FROUND_TO_POS_INF)) break;
    case M_DN: LOWP_PROD_LOOP(LOWP_P16(_MM_FROUND_TO_NEG_INF)) break;
    default: LOWP_PROD_LOOP(LOWP_P16(_MM_FROUND_TO_NEAREST_INT)) break;
    }
  } else if (prod->bf16 && prod->mode == M_NE) {
    LOWP_PROD_LOOP((__m512)(((vfi)p + 0x7fff + (((vfi)p >> 16) & 1)) & (int32_t)0xffff0000u))
  } else if (prod->bf16) {
    /* rup / rdn: + 0xffff on the magnitudes of the positive / negative ones */
    const int32_t pos = prod->mode == M_UP ? 0xffff : 0, neg = prod->mode == M_DN ? 0xffff : 0;
    LOWP_PROD_LOOP((__m512)(((vfi)p + (((vfi)p >> 31 & neg) | (~((vfi)p >> 31) & pos))) &
                            (int32_t)0xffff0000u))
  } else {
    LOWP_PROD_LOOP((__m512)fround_to((vf)p, prod))
  }
#undef LOWP_P16
#undef LOWP_PROD_LOOP
}

#define LOWP_ROFMA_LOOP(MODE, RC)                                                \
  for (l = 0; l < kw; l++)                                                       \
    for (r = 0; r < rows; r++) {                                                 \
      float av = (float)a[(i + r) * k + l0 + l];                                 \
      __m512 va = _mm512_set1_ps(av);                                            \
      if (rp) prods_avx512(pb, av, panel + l * JB, prod);                        \
      for (j = 0; j < JB; j += 16) {                                             \
        __m512 vs = _mm512_loadu_ps(s + r * JB + j), d, u, x;                    \
        if (rp) {                                                                \
          __m512 p = _mm512_loadu_ps(pb + j);                                    \
          d = _mm512_add_round_ps(p, vs, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); \
          u = _mm512_add_round_ps(p, vs, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); \
        } else {                                                                 \
          __m512 vb = _mm512_loadu_ps(panel + l * JB + j);                       \
          d = _mm512_fmadd_round_ps(va, vb, vs, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); \
          u = _mm512_fmadd_round_ps(va, vb, vs, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); \
        }                                                                        \
        x = rofma_pick(d, u, MODE);                                              \
        if (fmt == 1)                                                            \
          vs = _mm512_cvtph_ps(_mm512_cvtps_ph(x, RC));                          \
        else if (fmt == 2)                                                       \
          vs = (__m512)fround_bf16_bits((vf)x, MODE); /* (NaN: below) */         \
        else {                                                                   \
          tgt_t ac = *acc;                                                       \
          ac.mode = MODE;                                                        \
          vs = (__m512)fround_to((vf)x, &ac);                                    \
        }                                                                        \
        _mm512_storeu_ps(s + r * JB + j, vs);                                    \
      }                                                                          \
    }
/* fmt: 1 fp16, 2 bf16, 0 another RO32 accumulator */
#define LOWP_ROFMA_FN(NAME, FMT)                                                 \
  __attribute__((target(LOWP_ACC_AVX512))) static void NAME(                     \
      float *s, const double *a, size_t i, size_t rows, size_t k, const float *panel, \
      size_t l0, size_t kw, const tgt_t *acc, const tgt_t *prod, int rp, int mode) { \
    const int fmt = FMT;                                                         \
    float pb[JB] __attribute__((aligned(64)));                                   \
    size_t l, r, j;                                                              \
    switch (mode) {                                                              \
    case M_TZ: LOWP_ROFMA_LOOP(M_TZ, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC) break; \
    case M_UP: LOWP_ROFMA_LOOP(M_UP, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC) break; \
    case M_DN: LOWP_ROFMA_LOOP(M_DN, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC) break; \
    default: LOWP_ROFMA_LOOP(M_NE, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC) break; \
    }                                                                            \
  }
LOWP_ROFMA_FN(rofma16_avx512, 1)
LOWP_ROFMA_FN(rofmab_avx512, 2)
LOWP_ROFMA_FN(rofma_avx512, 0)
#undef LOWP_ROFMA_FN
#undef LOWP_ROFMA_LOOP
#endif
#endif

/* --------------------------------------------------------------- kernels */

/* Kinds as compile-time constants of the inlined loops. */
enum { K_FMA64, K_ADD64, K_FMA32, K_ADD32, K_RO, K_RORP, K_RF, K_RFRP, K_DIR32, K_DIR32RP,
       K_RFM, K_RFMRP };

/* rows [i0, i1) x columns [j0, j0 + jw) for k in [l0, l0 + kw), the panel
   of B packed as kw x jw (doubles, or floats for the fp32 kernels) */
AI void block_rows(const job_t *jb, const void *panel, size_t i0, size_t i1, size_t j0,
                   size_t jw, size_t l0, size_t kw, int kind, int mode) {
  /* local copies: stores to the sums could alias the constants otherwise,
     which keeps them out of registers and the loop from vectorising */
  const tgt_t acc = jb->acc, prod = jb->prod;
  const int ro = kind == K_RO || kind == K_RORP;
  const int blk = kind == K_DIR32 || kind == K_DIR32RP || kind == K_RFM || kind == K_RFMRP;
  const int f32 = kind == K_FMA32 || kind == K_ADD32 || kind == K_RF || kind == K_RFRP || blk;
  size_t i, r, j, l, rows;
  for (i = i0; i < i1; i += rows) {
    double sd[MR][JB];
    float sf[MR][JB];
    rows = i1 - i < MR ? i1 - i : MR;
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
    /* (the blk kinds run the whole block in an AVX-512 function below) */
    for (l = 0; l < (blk ? 0 : kw); l++)
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
            vs = fstep_ro(vs, va, vb, &acc, &prod, mode, kind == K_RFRP);
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
              vs = vstep_ro(vs, va, vb, &acc, &prod, mode, kind == K_RORP);
              memcpy(s + j, &vs, sizeof vs);
            }
          }
        }
      }
#ifdef LOWP_ACCFAST_X86
    if (kind == K_DIR32 || kind == K_DIR32RP)
      dir32_avx512(&sf[0][0], jb->a, i, rows, jb->k, panel, l0, kw, kind == K_DIR32RP,
                   jb->acc.mode);
#endif
#ifdef LOWP_ACC_RO16
    if (kind == K_RFM || kind == K_RFMRP) {
      int rpp = kind == K_RFMRP;
      float *s0 = &sf[0][0];
      if (acc.fp16)
        rofma16_avx512(s0, jb->a, i, rows, jb->k, panel, l0, kw, &acc, &prod, rpp, acc.mode);
      else if (acc.bf16)
        rofmab_avx512(s0, jb->a, i, rows, jb->k, panel, l0, kw, &acc, &prod, rpp, acc.mode);
      else
        rofma_avx512(s0, jb->a, i, rows, jb->k, panel, l0, kw, &acc, &prod, rpp, acc.mode);
    }
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
  int blk = kind == K_DIR32 || kind == K_DIR32RP || kind == K_RFM || kind == K_RFMRP;
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

enum { ISA_GENERIC = LOWP_ISA_GENERIC, ISA_AVX2 = LOWP_ISA_AVX2, ISA_AVX512 = LOWP_ISA_AVX512 };

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

/* 2: every x[l inc], l < cnt, is zero or a binary32 value of <= 12
   significant bits with magnitude in [2^-60, 2^50] (the RO32 data);
   1: every one is a binary32 value, inf or NaN; 0: otherwise */
static int input_class(const double *x, size_t cnt, size_t inc) {
  size_t l;
  int cls = 2;
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
  /* fp32 in rne, or (AVX-512's rounding in the instruction) rtz/rup/rdn
     with products exact or rounded to fp32 in the same mode */
  if (ieee_like(acc) && is_fmt(acc, 24, -126, 127) && fast_mode(g->acc_rnd) >= 0 &&
      (g->acc_rnd == LOWP_RND_NE || (int)lowp_cpu_isa(1) == ISA_AVX512) &&
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
  /* the addend, rounded to acc as the reference does (its NaN sign policy) */
  for (e = 0; e < m * n; e++)
    (void)lowp_round_f64(&c[e], c[e], cfg->acc, cfg->pol, cfg->acc_rnd);
  if (k == 0) return LOWP_OK;
  jb.a = a, jb.b = b, jb.c = c, jb.m = m, jb.n = n, jb.k = k;
  tgt_of(&jb.acc, cfg->acc, cfg->acc_rnd);
  tgt_of(&jb.prod, cfg->prod, cfg->prod_rnd);
  kk = kind == LOWP_ACCFAST_FMA64 ? (cfg->prod ? K_ADD64 : K_FMA64)
       : kind == LOWP_ACCFAST_FMA32 && cfg->acc_rnd != LOWP_RND_NE
           ? (use == ISA_AVX512 ? (cfg->prod ? K_DIR32RP : K_DIR32) : (cfg->prod ? K_RORP : K_RO))
       : kind == LOWP_ACCFAST_FMA32 ? (cfg->prod ? K_ADD32 : K_FMA32)
       : kind == LOWP_ACCFAST_RO32 && use == ISA_AVX512 && ro16_built()
           ? (cfg->prod ? K_RFMRP : K_RFM)
       : kind == LOWP_ACCFAST_RO32 ? (cfg->prod ? K_RFRP : K_RF)
       : (cfg->prod ? K_RORP : K_RO);
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

int lowp_dot_acc_fast(double *y, const double *x, size_t incx, const double *w,
                      size_t incw, size_t n, double init, const lowp_gemm_acc_cfg_t *cfg) {
  lowp_accfast_kind_t kd = kind_of(cfg, 0);
  tgt_t acc, prod;
  double s;
  size_t l;
  if (!y || (n && (!x || !w))) return LOWP_EINVAL;
  /* one dot: the scalar RO64 step serves the RO32 data too (a subset) */
  if (kd == LOWP_ACCFAST_NONE && n && input_class(x, n, incx) && input_class(w, n, incw))
    kd = kind_of(cfg, 1);
  if (kd == LOWP_ACCFAST_NONE) return LOWP_EINVAL;
  (void)lowp_round_f64(&s, init, cfg->acc, cfg->pol, cfg->acc_rnd);
  tgt_of(&acc, cfg->acc, cfg->acc_rnd);
  tgt_of(&prod, cfg->prod, cfg->prod_rnd);
  for (l = 0; l < n; l++) {
    double a = x[l * incx], b = w[l * incw];
    if (kd == LOWP_ACCFAST_FMA64) s = cfg->prod ? a * b + s : fma(a, b, s);
    else if (kd == LOWP_ACCFAST_FMA32 && cfg->acc_rnd == LOWP_RND_NE)
      s = cfg->prod ? (double)((float)a * (float)b + (float)s)
                    : (double)fmaf((float)a, (float)b, (float)s);
    else s = step_ro(s, a, b, &acc, &prod, acc.mode, cfg->prod != NULL);
  }
  *y = n ? canon(s) : s;
  return LOWP_OK;
}

const char *lowp_gemm_acc_fast_isa(void) {
  return lowp_isa_name(lowp_cpu_isa(1));
}
