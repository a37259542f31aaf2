/* lowp_qdq_bs -- quantize-dequantize fp32 matrices through a block-scaled format, with counts */
#ifndef LOWP_QDQ_BS_H
#define LOWP_QDQ_BS_H

#include <stddef.h>

#include "cpu/qdq.h"
#include "format/bsformat.h"

/**
 * @brief x (rows x cols, row-major) through block-scaled format bf along its
 * rows and back: q, s, t from lowp_bs_quantize_amax (blocks of bf->block
 * consecutive elements, bf's scale rule; a two-level format (nvfp4) takes
 * its per-tensor scale from tamax, or from x's own amax when tamax < 0),
 * y = (q s) t as lowp_bs_dequantize computes it (NaN where s is NaN),
 * rounded once to fp32. y may be x (the same array; not another overlap).
 *
 * Counts added to st: n, nonzero (x != 0), flushed (x != 0, q = 0),
 * subnormal (q a nonzero value below 2^emin of the element format) and
 * saturated (x != 0 and fl(|x| / (s t)) >= xmax + ulp(xmax) / 2 in
 * binary64: the elements that would overflow).
 *
 * @return LOWP_OK, LOWP_ENOMEM, or lowp_bs_quantize_amax's status.
 */
int lowp_qdq_bs_f32(float *y, const float *x, size_t rows, size_t cols, const lowp_bsformat_t *bf,
                    double tamax, lowp_qstats_t *st);

/**
 * @brief lowp_qdq_bs_f32 by its definition: lowp_bs_quantize_amax, the
 * counts element by element (a division each), lowp_bs_dequantize and a
 * conversion to fp32, each a pass of its own. The same bits and counts
 * (tests/tqdq_bs.c); for tests.
 */
int lowp_qdq_bs_f32_ref(float *y, const float *x, size_t rows, size_t cols, const lowp_bsformat_t *bf,
                        double tamax, lowp_qstats_t *st);

#endif
