/* lowp_bsquant -- quantize to and dequantize from block-scaled formats, by named scale rules */
#ifndef LOWP_BSQUANT_H
#define LOWP_BSQUANT_H

#include "format/bsformat.h"

#include <stddef.h>

/**
 * @brief Quantize an fp32 matrix (rows x cols, row-major) to bf, blocks of
 * bf->block consecutive elements along each row (the last block of a row
 * may be short), with bf->rule choosing each block's scale.
 *
 * Each rule is defined exactly in lib/format/bsquant.c and docs/formats.md
 * ("Block-scaled formats"); fp32 operations of a rule are correctly
 * rounded binary32 operations in the order stated there. A block whose
 * scale is NaN (a NaN or infinite amax under floor, ceil, even, absmax,
 * ggml; a NaN amax under rceil and nvfp4) has element values 0 and
 * dequantizes to NaN: the NaN scale poisons the whole block.
 *
 * @param[out] q   rows * cols element values (values of bf->elem; integers
 *                 for integer elements)
 * @param[out] s   rows * lowp_bsformat_blocks(bf, cols) scale values (NaN
 *                 for a NaN scale)
 * @param[out] ts  the per-tensor decode scale (bf->tensor_scale), 1.0 if the
 *                 format has none; may be NULL then
 * @return LOWP_OK, LOWP_EFORMAT (invalid bf), LOWP_EINVAL (NULL pointers).
 */
int lowp_bs_quantize(double *q, double *s, double *ts, const float *x, size_t rows, size_t cols,
                     const lowp_bsformat_t *bf);

/**
 * @brief lowp_bs_quantize with the per-tensor amax given instead of taken
 * from x: the nvfp4 rule's encode scale is lowp_bs_tensor_encode_scale(
 * tensor_amax, bf), e.g. from an amax calibrated once on other data (a
 * static activation scale; elements of blocks above it saturate). Formats
 * without a tensor scale ignore tensor_amax. lowp_bs_quantize(x) is this
 * function with tensor_amax = lowp_bs_amax(x, rows * cols).
 */
int lowp_bs_quantize_amax(double *q, double *s, double *ts, const float *x, size_t rows, size_t cols,
                          const lowp_bsformat_t *bf, double tensor_amax);

/**
 * @brief The values of a quantized matrix: y = (q * s) * ts in binary64,
 * NaN where the block's scale is NaN. Exact for every built-in format (the
 * significands need at most 7 + 11 bits, or 2 + 4 + 24 for nvfp4); a user
 * format whose bits exceed 53 is rounded once, to nearest. y may alias q.
 */
int lowp_bs_dequantize(double *y, const double *q, const double *s, double ts, size_t rows,
                       size_t cols, const lowp_bsformat_t *bf);

/**
 * @brief NVFP4's per-tensor encode scale from the tensor's amax (the
 * nvfp4 rule's first step): fl32(fl32(xmax_scale * xmax_elem) / amax),
 * NaN and values above FLT_MAX replaced by FLT_MAX (fminf), and 1 where
 * amax is 0 or the quotient is 0.
 */
double lowp_bs_tensor_encode_scale(double amax, const lowp_bsformat_t *bf);

/** @brief max |x_i| of n values (0 for n = 0), NaN if one is NaN. */
double lowp_bs_amax(const float *x, size_t n);

#endif
