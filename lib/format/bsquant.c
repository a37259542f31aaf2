/* lowp_bsquant -- block-scaled quantization rules (OCP MX, cuBLAS, NVFP4, ggml) and dequantization */

/*
 * Notation: amax = max |x_i| over the block (a NaN element makes it NaN);
 * emax_e, xmax_e: the element format's top exponent and largest value
 * (qmax for integers); fl32(.): one correctly rounded binary32 operation
 * (computed in binary64 and rounded to binary32: for +, -, *, / of binary32
 * operands binary64 has 53 >= 2*24 + 2 bits, so the double rounding is
 * innocuous -- Figueroa, "When is double rounding innocuous?", SIGNUM 1995);
 * RN_sat: round to nearest even in the element format, clamped to +-xmax_e.
 * [lo, hi]: the scale format's power-of-two exponents (e8m0: -127..127).
 *
 * floor  OCP MX v1.0 section 6.3: e = floor(log2 amax) - emax_e, clamped
 *        below to lo; amax = 0 gives lo; a NaN or infinite amax, or
 *        e > hi, gives the NaN scale (the OCP reference code,
 *        microsoft/microxcaling mx/mx_ops.py _quantize_mx, sets shared
 *        exponents above the scale's emax to NaN). q_i = RN_sat(x_i / 2^e).
 * ceil   e = ceil(log2 amax) - emax_e (torchao ScaleCalculationMode.CEIL).
 * even   e = floor(log2 m) - emax_e, m = amax rounded to the element's
 *        p significant bits, ties away from zero (torchao's EVEN adds half
 *        an element ulp to amax's bits and truncates).
 * rceil  e = ceil(log2 fl32(amax / xmax_e)), clamped to [lo, hi] (the
 *        satfinite of PTX cvt.rp.satfinite.ue8m0x2.f32: an infinite amax
 *        gives hi, 0 gives lo), NaN amax the NaN scale; cuBLAS documentation,
 *        "1D block quantization", FP8 with UE8M0 scales; torchao RCEIL.
 * nvfp4  TransformerEngine (common/cast/nvfp4/core_nvfp4.cuh):
 *          S_enc = compute_global_encode_scaling_factor_FP4(amax_tensor)
 *                = fminf(fl32(fl32(xmax_s * xmax_e) / amax_t), FLT_MAX),
 *                  1 if amax_t = 0 or that is 0; the stored tensor scale is
 *                  S_dec = fl32(1 / S_enc);
 *          s_b   = RN_sat_scale(fminf(fl32(amax_b * fl32(S_enc * fl32(1 / xmax_e))), FLT_MAX))
 *                  (compute_decoding_scaling_factor: the cast to e4m3 is
 *                  satfinite, clamping to 448);
 *          r     = fminf(fl32(1 / fl32(s_b * S_dec)), FLT_MAX)
 *                  (compute_scaling_coefficient<float>);
 *          q_i   = RN_sat(fl32(x_i * r)) (cvt.rn.satfinite.e2m1x2.f32: clamps to 6).
 *        TE takes amax with fmaxf, which skips NaN; lowp propagates it.
 * absmax d = RN_scale(amax / xmax_e) (IEEE overflow), q_i = RN_sat(x_i / d)
 *        with the stored d, each from the exact quotient; d = 0 gives q = 0,
 *        a non-finite d the NaN scale.
 * ggml   ggml-quants.c quantize_row_q8_0_ref: d = fl32(amax / qmax),
 *        id = d != 0 ? fl32(1 / d) : 0, q_i = roundf(fl32(x_i * id)) (half
 *        away from zero), clamped to +-qmax; stored scale RN_scale(d) (fp16,
 *        GGML_FP32_TO_FP16). Quantization uses the fp32 d, dequantization
 *        the stored one, as ggml does. A non-finite d gives the NaN scale;
 *        where 1 / d overflows (d < 2^-128) a zero element's 0 * inf is
 *        taken as 0 (ggml would convert NaN to int8, undefined in C).
 */

#include "format/bsquant.h"
#include "cpu.h"
#include "format/amax_bits.h"
#include "format/pow2.h"
#include "status.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

static double fl32(double v) { return (double)(float)v; }

/* fminf(v, FLT_MAX) of CUDA/C99: a NaN operand yields the other one */
static double fmin_fltmax(double v) { return isnan(v) || v > FLT_MAX ? (double)FLT_MAX : v; }

static double rnd(double v, const lowp_format_t *f, lowp_overflow_t ovf, lowp_rounding_t mode) {
  lowp_policy_t pol;
  double r;
  memset(&pol, 0, sizeof pol);
  pol.overflow = ovf;
  (void)lowp_round_f64(&r, v, f, &pol, mode);
  return r;
}

/* q[0..len) rounded to f in place, saturating, in mode: the same bits as rnd
   on each element (lowp_round_array_f64's contract), on its vector path */
static void rnd_block(double *q, size_t len, const lowp_format_t *f, lowp_rounding_t mode) {
  lowp_policy_t pol;
  memset(&pol, 0, sizeof pol);
  pol.overflow = LOWP_OVF_SAT;
  (void)lowp_round_array_f64(q, q, len, f, &pol, mode);
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define LOWP_BSQ_X86 1
#endif

/* the amax of a pattern from format/amax_bits.h: NaN (the NAN of the scalar definition) or the value */
static double amax_of_bits(uint32_t m) {
  float v;
  if (m > 0x7f800000u) return NAN;
  memcpy(&v, &m, sizeof v);
  return (double)v;
}

/* the scalar loop with its NaN branch was 1.3% of fp8-quantization's samples at AVX2 */
double lowp_bs_amax(const float *x, size_t n) { return amax_of_bits(lowp__amax_bits(x, n)); }

/* the power-of-two exponents a scale format holds: [lo, hi] */
static void pow2_range(int *lo, int *hi, const lowp_format_t *s) {
  *lo = s->subnormals ? s->emin - s->precision + 1 : s->emin;
  *hi = s->emax;
}

/* ceil(log2 a) for finite a > 0. Powers of two here by format/pow2.h's lowp__scale2 (exponents in
   [-1126, 1023]: ilogb of a finite double less p - 1, or a scale format's), not ldexp: libm's scalbn,
   called per block, was 1.4% of fp8-quantization's samples at AVX2; and ilogb by lowp__ilogb (every
   argument here is finite and nonzero), not libm's */
static int ceil_log2(double a) {
  int e = lowp__ilogb(a);
  return e + (lowp__scale2(1.0, e) != a);
}

/* The shared exponent of a power-of-two rule, or NAN_EXP for the NaN scale; xe the element format's
   largest finite value (lowp_bsformat_elem_max, computed once per call, not per block). */
#define NAN_EXP (-100000)
static int pow2_exponent(double amax, const lowp_bsformat_t *bf, double xe) {
  int lo, hi, e, emax_e = bf->elem.emax;
  pow2_range(&lo, &hi, &bf->scale);
  if (isnan(amax)) return NAN_EXP;
  if (bf->rule == LOWP_BSR_RCEIL) {
    double d = fl32(amax / xe);
    if (d == 0.0) return lo;
    e = isinf(d) ? hi : ceil_log2(d);
    return e < lo ? lo : e > hi ? hi : e;
  }
  if (isinf(amax)) return NAN_EXP;
  if (amax == 0.0) return lo;
  if (bf->rule == LOWP_BSR_CEIL) e = ceil_log2(amax) - emax_e;
  else if (bf->rule == LOWP_BSR_EVEN) {
    double ulp = lowp__scale2(1.0, lowp__ilogb(amax) - (bf->elem.precision - 1));
    e = lowp__ilogb(floor(amax / ulp + 0.5) * ulp) - emax_e; /* amax / ulp < 2^p: exact */
  } else e = lowp__ilogb(amax) - emax_e;
  if (e > hi) return NAN_EXP;
  return e < lo ? lo : e;
}

static void poison(double *q, double *s, size_t len) {
  size_t j;
  for (j = 0; j < len; j++) q[j] = 0.0;
  *s = NAN;
}

/* One block of len elements: its scale *s and elements q, scaled but not
   yet rounded to the element format (the caller rounds every block's at
   once, in block_mode's mode: the same bits as one rounding per block,
   without the rounding's set-up per block, which cost more than the block's
   32 elements). amax: lowp_bs_amax(x, len); senc: NVFP4's per-tensor
   encode scale, sdec = fl32(1 / senc); xe the element format's largest
   finite value. Inlined into each instruction set's copy of blocks_body. */
static LOWP_ALWAYS_INLINE void block(double *q, double *s, const float *x, size_t len, const lowp_bsformat_t *bf,
                                     double amax, double senc, double sdec, double xe) {
  size_t j;
  switch (bf->rule) {
  case LOWP_BSR_NVFP4: {
    double sb = fmin_fltmax(fl32(amax * fl32(senc * fl32(1.0 / xe)))), r;
    if (isnan(amax)) sb = NAN;
    *s = rnd(sb, &bf->scale, LOWP_OVF_SAT, LOWP_RND_NE);
    if (isnan(*s)) { poison(q, s, len); return; }
    r = fmin_fltmax(fl32(1.0 / fl32(*s * sdec)));
    for (j = 0; j < len; j++) q[j] = fl32((double)x[j] * r);
    return;
  }
  case LOWP_BSR_ABSMAX: {
    double d = rnd(amax / xe, &bf->scale, LOWP_OVF_IEEE, LOWP_RND_NE);
    if (!isfinite(amax) || !isfinite(d)) { poison(q, s, len); return; }
    *s = d;
    if (d == 0.0) { for (j = 0; j < len; j++) q[j] = 0.0; return; }
    for (j = 0; j < len; j++) q[j] = (double)x[j] / d;
    return;
  }
  case LOWP_BSR_GGML: {
    double d = fl32(amax / xe), id = d != 0.0 ? fl32(1.0 / d) : 0.0, st;
    st = rnd(d, &bf->scale, LOWP_OVF_IEEE, LOWP_RND_NE);
    if (!isfinite(amax) || !isfinite(st)) { poison(q, s, len); return; }
    *s = st;
    for (j = 0; j < len; j++) { /* 0 * inf (1 / d overflowed) is taken as 0 */
      double v = fl32((double)x[j] * id);
      q[j] = isnan(v) ? 0.0 : v;
    }
    return;
  }
  default: {
    int e = pow2_exponent(amax, bf, xe);
    if (e == NAN_EXP) { poison(q, s, len); return; }
    *s = lowp__scale2(1.0, e);
    /* x 2^-e: one multiplication where it is exact (x is a binary32 value, so
       |x| 2^-e stays among binary64's normal numbers for |e| <= 800) */
    if (e >= -800 && e <= 800) {
      const double m = lowp__scale2(1.0, -e);
      for (j = 0; j < len; j++) q[j] = (double)x[j] * m;
    } else
      for (j = 0; j < len; j++) q[j] = ldexp((double)x[j], -e);
    return;
  }
  }
}

/* block() over every block of the rows x cols matrix x, each with its amax, compiled once per instruction
   set and chosen by lowp_cpu_isa: the copies do the same IEEE operations in the same order (the element
   loops and lowp__amax_bits_body vectorised; no contraction, -ffp-contract=off), so the same bits. In
   fp8-quantization --quick (one thread) this took the quantization from 2.7% to 2.3% of the samples at
   AVX2, and from 1.2% to 0.9% at generic (SSE2), where the amax called per block had been slower than
   the scalar loop before it. */
#define BLOCKS_ARGS                                                                                         \
  (double *q, double *s, const float *x, size_t rows, size_t cols, const lowp_bsformat_t *bf, double senc, \
   double sdec, double xe)
static LOWP_ALWAYS_INLINE void blocks_body BLOCKS_ARGS {
  size_t nb = lowp_bsformat_blocks(bf, cols), bs = (size_t)bf->block, r, b;
  for (r = 0; r < rows; r++)
    for (b = 0; b < nb; b++) {
      size_t off = r * cols + b * bs, len = cols - b * bs < bs ? cols - b * bs : bs;
      block(q + off, s + r * nb + b, x + off, len, bf, amax_of_bits(lowp__amax_bits_body(x + off, len)), senc, sdec, xe);
    }
}
typedef void(*blocks_fn) BLOCKS_ARGS;
static void blocks_generic BLOCKS_ARGS { blocks_body(q, s, x, rows, cols, bf, senc, sdec, xe); }
#ifdef LOWP_BSQ_X86
__attribute__((target("avx2"))) static void blocks_avx2 BLOCKS_ARGS {
  blocks_body(q, s, x, rows, cols, bf, senc, sdec, xe);
}
__attribute__((target("avx512f"))) static void blocks_avx512 BLOCKS_ARGS {
  blocks_body(q, s, x, rows, cols, bf, senc, sdec, xe);
}
static blocks_fn pick_blocks(void) {
  lowp_isa_t isa = lowp_cpu_isa(0);
  return isa == LOWP_ISA_AVX512 ? blocks_avx512 : isa == LOWP_ISA_AVX2 ? blocks_avx2 : blocks_generic;
}
#else
static blocks_fn pick_blocks(void) { return blocks_generic; }
#endif
#undef BLOCKS_ARGS

/* the rounding of the elements under bf's scale rule: ggml's round half
   away from zero (its roundf), to nearest even for every other rule */
static lowp_rounding_t block_mode(const lowp_bsformat_t *bf) {
  return bf->rule == LOWP_BSR_GGML ? LOWP_RND_NA : LOWP_RND_NE;
}

/* ----------------------------------------------------------- public API */

double lowp_bs_tensor_encode_scale(double amax, const lowp_bsformat_t *bf) {
  double num = fl32(lowp_format_xmax(&bf->scale) * lowp_bsformat_elem_max(bf));
  double se = fmin_fltmax(fl32(num / amax));
  return amax == 0.0 || se == 0.0 ? 1.0 : se;
}

int lowp_bs_quantize(double *q, double *s, double *ts, const float *x, size_t rows, size_t cols,
                     const lowp_bsformat_t *bf) {
  if (!q || !s || (!x && rows != 0 && cols != 0) || !bf || (bf->tensor_scale && !ts)) return LOWP_EINVAL;
  return lowp_bs_quantize_amax(q, s, ts, x, rows, cols, bf, bf->tensor_scale ? lowp_bs_amax(x, rows * cols) : 0.0);
}

int lowp_bs_quantize_amax(double *q, double *s, double *ts, const float *x, size_t rows, size_t cols,
                          const lowp_bsformat_t *bf, double tensor_amax) {
  double senc = 1.0, sdec = 1.0, xe;
  if (!q || !s || (!x && rows != 0 && cols != 0) || !bf || (bf->tensor_scale && !ts)) return LOWP_EINVAL;
  if (lowp_bsformat_validate(bf, NULL, 0)) return LOWP_EFORMAT;
  xe = lowp_bsformat_elem_max(bf);
  if (bf->tensor_scale) {
    senc = lowp_bs_tensor_encode_scale(tensor_amax, bf);
    sdec = fl32(1.0 / senc);
  }
  if (ts) *ts = bf->tensor_scale ? sdec : 1.0;
  pick_blocks()(q, s, x, rows, cols, bf, senc, sdec, xe);
  /* every element in one call (a poisoned or zero block's zeros round to
     themselves) */
  rnd_block(q, rows * cols, &bf->elem, block_mode(bf));
  return LOWP_OK;
}

int lowp_bs_dequantize(double *y, const double *q, const double *s, double ts, size_t rows,
                       size_t cols, const lowp_bsformat_t *bf) {
  size_t r, j, b, nb;
  if (!y || !q || !s || !bf) return LOWP_EINVAL;
  if (lowp_bsformat_validate(bf, NULL, 0)) return LOWP_EFORMAT;
  nb = lowp_bsformat_blocks(bf, cols);
  for (r = 0; r < rows; r++)
    for (b = 0; b < nb; b++) {
      const double sc = s[r * nb + b];
      const size_t j0 = b * (size_t)bf->block,
                   j1 = cols - j0 < (size_t)bf->block ? cols : j0 + (size_t)bf->block;
      for (j = j0; j < j1; j++) y[r * cols + j] = isnan(sc) ? NAN : q[r * cols + j] * sc * ts;
    }
  return LOWP_OK;
}
