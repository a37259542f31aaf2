/* lowp_qdq -- quantize-dequantize fp32 matrices to a scaled low-precision format */
#ifndef LOWP_QDQ_H
#define LOWP_QDQ_H

#include <stddef.h>

#include "format/format.h"

/*
 * "Fake quantization": each element x becomes the value the scaled format
 * represents, q / s with q = round(x * s) in format f (round to nearest
 * even, saturating to +-xmax), stored back as fp32. A GEMM on these values
 * with fp32 accumulation is what an fp8 GEMM with fp32 accumulation and a
 * dequantizing epilogue computes, up to fp32 rounding of q / s (2^-24
 * relative, far below the format's own error).
 *
 * x * s is a product of two fp32 numbers, exact in fp64, so q is x*s
 * correctly rounded in one step.
 */

/** @brief Where scales come from. */
typedef enum {
  LOWP_QS_CAST = 0,    /**< no scaling (s = 1): a plain cast */
  LOWP_QS_TENSOR = 1,  /**< one scale s = fl32(xmax / amax) for the matrix */
  LOWP_QS_ROW = 2,     /**< one such scale per row (per output channel of a
                            weight matrix stored out x in) */
  LOWP_QS_MXBLOCK = 3, /**< OCP MX v1.0: blocks of `block` consecutive
                            elements of a row share a power-of-two scale
                            2^(floor(log2(amax)) - emax_elem), stored as E8M0 */
  LOWP_QS_BLOCK = 4    /**< blocks of `block` consecutive elements of a row,
                            each with its own fp32 scale xmax / amax (the
                            1x128 activation tiles of DeepSeek-V3, arXiv
                            2412.19437 sec. 3.3.1; per output channel and
                            128-element slice of a weight matrix stored
                            out x in) */
} lowp_qscheme_t;

/** @brief Counts over the elements quantized. */
typedef struct {
  size_t n;         /**< elements */
  size_t nonzero;   /**< elements with x != 0 */
  size_t saturated; /**< |x * s| >= xmax + ulp(xmax)/2: would overflow under
                         round to nearest, clamped to +-xmax instead */
  size_t flushed;   /**< x != 0 but q == 0: rounded to zero (not flush-to-zero: the formats keep their subnormals) */
  size_t subnormal; /**< q is a nonzero subnormal of f */
} lowp_qstats_t;

/**
 * @brief The MX shared scale exponent of a block with largest magnitude
 * amax (OCP Microscaling Formats (MX) Specification v1.0, 2023, section
 * 6.3): floor(log2(amax)) - emax_elem, where emax_elem = f->emax is the
 * exponent of the element format's largest normal binade, clamped to the
 * E8M0 range [LOWP_FMT_E8M0.emin, LOWP_FMT_E8M0.emax]. amax = 0 gives
 * E8M0's emin (any scale represents an all-zero block).
 */
int lowp_qdq_mx_exponent(double amax, const lowp_format_t *f);

/**
 * @brief Quantize-dequantize x (rows x cols, row-major) into y (may alias).
 * @param[in] amax  optional: for LOWP_QS_TENSOR, a fixed (calibrated) amax
 *                  to use instead of the matrix's own; NULL = the matrix's.
 *                  Ignored by the other schemes.
 * @param[in] block MX block size along a row (> 0) for LOWP_QS_MXBLOCK;
 *                  the last block of a row may be shorter.
 * @param[out] st   if non-NULL, counts added to (not reset)
 * @return LOWP_OK; LOWP_EINVAL (bad scheme or block, or non-finite input);
 *         LOWP_EFORMAT.
 */
int lowp_qdq_f32(float *y, const float *x, size_t rows, size_t cols,
                 const lowp_format_t *f, lowp_qscheme_t scheme, size_t block,
                 const double *amax, lowp_qstats_t *st);

/**
 * @brief Quantize without dequantizing: q[i] = round(x[i] * s) in f (values
 * of f, as doubles), and sinv[r * nb + j] = fl32(1 / s) (exactly 2^e for MX
 * and plain casts) for row r and the j-th group of `block` elements of the
 * row, nb = ceil(cols / block): what a scaled fp8 GEMM reads. The schemes
 * without blocks (cast, tensor, row) repeat their scale in every group;
 * LOWP_QS_MXBLOCK and LOWP_QS_BLOCK use `block` as their block size.
 * q[i] * sinv is what lowp_qdq_f32 returns, before its rounding to fp32.
 * @return as lowp_qdq_f32 (block must be > 0 for every scheme).
 */
int lowp_qdq_quant(double *q, float *sinv, const float *x, size_t rows, size_t cols,
                   const lowp_format_t *f, lowp_qscheme_t scheme, size_t block,
                   const double *amax, lowp_qstats_t *st);

/**
 * @brief lowp_qdq_f32 and lowp_qdq_quant on their reference path: every
 * element rounded by itself (round_fast or lowp_round_f64), never by the
 * vectorised group loop the two functions above use where they can. The
 * results and counts are the same bits (tests/tqdq_fast.c); for tests.
 */
int lowp_qdq_f32_ref(float *y, const float *x, size_t rows, size_t cols,
                     const lowp_format_t *f, lowp_qscheme_t scheme, size_t block,
                     const double *amax, lowp_qstats_t *st);
/** @brief See lowp_qdq_f32_ref. */
int lowp_qdq_quant_ref(double *q, float *sinv, const float *x, size_t rows, size_t cols,
                       const lowp_format_t *f, lowp_qscheme_t scheme, size_t block,
                       const double *amax, lowp_qstats_t *st);

/** @brief fl32(xmax(f) / amax), or 1 when amax is 0 or not finite. */
float lowp_qdq_scale(double amax, const lowp_format_t *f);

struct lowp_fpx_trace_s;
/**
 * @brief Trace the exceptions a quantization of x (rows x cols, any values,
 * NaN and inf included) would raise, without producing it: each group's
 * scale (kind scale when NaN, infinite or clamped: an MX block with an
 * infinity gets an E8M0 NaN scale) at sequence 2 (r cols + c0), and each
 * element's rounding of x s to f (saturating, rne) at 2 (r cols + c) + 1,
 * index r cols + c (kernels/cpu/qdq_fpx.c).
 * @return LOWP_OK; LOWP_EINVAL; LOWP_EFORMAT.
 */
int lowp_qdq_fpx(struct lowp_fpx_trace_s *t, const float *x, size_t rows, size_t cols,
                 const lowp_format_t *f, lowp_qscheme_t scheme, size_t block);

#endif
