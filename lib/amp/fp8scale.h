/* lowp_fp8scale -- FP8 scaling recipes: per tensor, delayed, per channel, blocks, MX */
#ifndef LOWP_FP8SCALE_H
#define LOWP_FP8SCALE_H

#include <stddef.h>

#include "format/format.h"

/*
 * A recipe = how a tensor is cut into blocks + how a block's scale is made.
 * Blocks are br x bc tiles of a row-major rows x cols matrix (edge tiles may
 * be smaller):
 *   per tensor            br = rows, bc = cols
 *   per channel (row)     br = 1,    bc = cols
 *   DeepSeek-V3 1x128     br = 1,    bc = 128   (activations)
 *   DeepSeek-V3 128x128   br = 128,  bc = 128   (weights)
 *   MX                    br = 1,    bc = 32    (with an E8M0 scale)
 *
 * Scales (amax = max |x| over the block's finite elements):
 *   LOWP_SCALE_AMAX (NVIDIA Transformer Engine, "FP8 Current Scaling" and
 *     "FP8 Delayed Scaling" user-guide pages and recipe.h,
 *     nvte_delayed_scaling_recipe_amax_and_scale_update: the scale makes the
 *     tensor's amax equal to 2^-margin * max_fp8):
 *       s = fp32(fp32(max_fp8 / amax) / 2^margin); q = sat(round(x * s));
 *       x ~ q / s.   amax == 0 or non-finite: s = 1 (TE keeps the previous
 *     scale; a fresh one is 1). DeepSeek-V3 technical report (arXiv
 *     2412.19437) section 3.3.1 "Fine-Grained Quantization" uses the same
 *     online amax per 1x128 / 128x128 tile with e4m3 (margin 0).
 *   LOWP_SCALE_E8M0 (OCP Microscaling Formats (MX) v1.0, section 6.3,
 *     conversion of a vector of scalars to an MX block):
 *       shared_exp = floor(log2(amax)) - emax_elem, clamped to E8M0's
 *       [-127, 127]; X = 2^shared_exp; q = sat(round(x / X)); x ~ q * X.
 *     emax_elem is the element format's largest normal exponent (f->emax:
 *     8 for e4m3, 15 for e5m2, 2 for e2m1). Because max_fp8 need not be
 *     2^emax_elem * 2, a block's largest element can exceed max_fp8 after
 *     division and is clamped (e4m3: amax/X in [256, 512), max 448).
 * Elements are rounded to nearest even from the fp64 product/quotient, with
 * saturation to +-max finite (TE's cast and the MX spec both clamp).
 */

/** @brief How a block's scale is formed. */
typedef enum {
  LOWP_SCALE_AMAX = 0, /**< fp32 scale max_fp8 / amax / 2^margin (TE, DeepSeek) */
  LOWP_SCALE_E8M0 = 1  /**< power of two from the exponent of amax (OCP MX) */
} lowp_scale_kind_t;

/** @brief Error statistics of a quantization, accumulated over calls. */
typedef struct {
  size_t n;          /**< elements seen */
  size_t nonzero;    /**< elements with x != 0 */
  size_t saturated;  /**< clamped: x * scale would overflow the element format
                          without saturation (beyond max + ulp/2) */
  size_t flushed;    /**< x != 0 but quantized to 0 */
  size_t subnormal;  /**< quantized to a subnormal of the element format */
  double sum_sq_err; /**< sum (deq - x)^2 */
  double sum_sq_x;   /**< sum x^2 */
  double max_abs_err;/**< max |deq - x| */
  double sum_rel_err;/**< sum over x != 0 of |deq - x| / |x| (a flushed element counts 1) */
  size_t nblocks;    /**< scales formed */
} lowp_quant_stats_t;

/** @brief Relative Frobenius error sqrt(sum_sq_err / sum_sq_x) (0 if x = 0).
    Dominated by the largest elements. */
double lowp_quant_rel_err(const lowp_quant_stats_t *st);
/** @brief Mean elementwise relative error over the nonzero elements (0 if
    none): sees the damage to small elements that the norm hides. */
double lowp_quant_mean_rel_err(const lowp_quant_stats_t *st);

/**
 * @brief Quantize a row-major rows x cols matrix block by block and
 * dequantize it.
 * @param[out] deq    rows*cols dequantized values (may alias x)
 * @param[out] scales one per block (row-major over blocks) or NULL; the
 *                    multiplier s (AMAX) or 1/X (E8M0), i.e. q = x * scales[b]
 * @param[in,out] st  statistics, accumulated (zero it first), or NULL
 * @return LOWP_OK; LOWP_EINVAL (NULL data, zero block size, margin outside
 *         [-64, 64]); LOWP_EFORMAT (elem invalid).
 */
int lowp_fp8_quantize_blocks(double *deq, double *scales, const double *x,
                             size_t rows, size_t cols, size_t br, size_t bc,
                             const lowp_format_t *elem, lowp_scale_kind_t kind,
                             int margin, lowp_quant_stats_t *st);

/**
 * @brief Delayed scaling (TE DelayedScaling): the tensor is cast with the
 * scale computed from the amax history of earlier steps; its own amax is
 * then recorded and the scale recomputed for the next call. A fresh state
 * has scale 1 and an empty history.
 */
typedef struct {
  double hist[4096]; /**< amax history, most recent first */
  size_t len;        /**< amax_history_len (1..4096) */
  size_t count;      /**< entries filled */
  int use_max;       /**< 1: amax_compute_algo "max"; 0: "most_recent" */
  int margin;
  double scale;      /**< the scale the next call will use */
} lowp_fp8_delayed_t;

/** @brief Initialise; LOWP_EINVAL if len is 0 or > 4096 or |margin| > 64. */
int lowp_fp8_delayed_init(lowp_fp8_delayed_t *d, size_t len, int use_max, int margin);

/**
 * @brief Cast n values with the current delayed scale (one block), then
 * update the history and the scale.
 * @param[out] deq  dequantized values (may alias x)
 * @param[out] used_scale  the scale used for this call, or NULL
 * @return as lowp_fp8_quantize_blocks.
 */
int lowp_fp8_delayed_quantize(lowp_fp8_delayed_t *d, double *deq, const double *x,
                              size_t n, const lowp_format_t *elem,
                              double *used_scale, lowp_quant_stats_t *st);

#endif
