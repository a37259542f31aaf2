/* lowp_gemm_tc8 -- fast fp8 GEMM on the tensor-core block-FMA model, with scaled fp32 promotion */
#ifndef LOWP_GEMM_TC8_H
#define LOWP_GEMM_TC8_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "model/tc.h"

/*
 * The same arithmetic as lowp_tc_dot (lib/model) for the fp8 datapaths of
 * the presets that truncate their alignment (h100/h200 wgmma: blocks of 32,
 * 13 fraction bits, the accumulator cut to 13 fraction bits; ada: blocks of
 * 16), computed with doubles instead of the model's general integer
 * unpacking, about 10 times faster (measured on a loaded 2-core x86-64
 * machine, e4m3 dots of 784 terms on the h100 model: 33 ns per product for
 * lowp_tc_dot, 2.5 to 3.4 ns here): a product of two values of a format of
 * <= 8 bits has <= 8 significant bits and is exact in binary64, scaling it
 * by 2^-(X-F) is exact, and the conversion to int64 truncates toward zero,
 * which is the model's cut of the magnitude (align = rtz, no sticky bit).
 * tests/tgemm_tc8.c checks bit-equality with lowp_tc_dot.
 *
 * Scaled GEMM (FP8 recipes with fp32 promotion, DeepSeek-V3 technical
 * report arXiv:2412.19437 sec. 3.3.2: the tensor-core partial sum over
 * N_C = 128 products is multiplied by its scales on the CUDA cores and added
 * to an fp32 total):
 *
 *   for every chunk c of `chunk` products along k (chunk = k: no promotion)
 *     part  = the model's chained dot of the chunk, from zero
 *     ds    = fl32(ascale[i, c] * bscale[j, c])   (dequantizing multipliers)
 *     total = fl32(total + fl32(part * ds))        (total starts at +0)
 *   y[i, j] = fl32(total + bias[j])
 *
 * With all scales 1 and no bias this is lowp_tc_dot with promote = chunk
 * (or without promotion when chunk >= k), bit for bit.
 *
 * lowp_gemm_tc8 computes the parts of each chunk as one GEMM on the integer
 * kernel of cpu/gemm_tc_fast.h (about 1 ns per product, one thread), the
 * dots of lowp_tc8_dot above only when that kernel cannot allocate.
 */

/**
 * @brief Whether the fast path reproduces this model: fp32 output, input
 * format of <= 8 bits with exponents in [-64, 63], align = rtz without
 * sticky bit, no late_c or interleave, out_rnd rtz or rne.
 * @return LOWP_OK or LOWP_EUNSUPPORTED.
 */
int lowp_tc8_supported(const lowp_tc_model_t *m, const lowp_format_t *in);

/**
 * @brief The alignment exponents of n values of format in:
 * x[i] = max(floor(log2|v[i]|), in->emin) (0 for a zero).
 * @return LOWP_OK; LOWP_ERANGE (a value that is not finite).
 */
int lowp_tc8_exponents(int8_t *x, const double *v, size_t n, const lowp_format_t *in);

/**
 * @brief The model's dot product of a and b (k values of format in, with
 * exponents xa, xb from lowp_tc8_exponents), chained from +0, without
 * promotion: what lowp_tc_dot returns with c = 0 and m->promote ignored.
 */
double lowp_tc8_dot(const double *a, const int8_t *xa, const double *b, const int8_t *xb,
                    size_t k, const lowp_tc_model_t *m);

/**
 * @brief y (rows x n) = the scaled GEMM above of a (rows x k) and b given
 * transposed, bt (n x k); ascale (rows x nchunk) and bscale (n x nchunk)
 * are dequantizing multipliers, nchunk = ceil(k / chunk); bias may be NULL
 * (zero). OpenMP over rows; independent of the thread count.
 * @return LOWP_OK; LOWP_EINVAL (chunk 0, or not a multiple of the block
 *   size when smaller than k); LOWP_EUNSUPPORTED (see lowp_tc8_supported).
 */
int lowp_gemm_tc8(float *y, const double *a, const int8_t *xa, size_t rows, size_t k,
                  const double *bt, const int8_t *xb, size_t n, const lowp_tc_model_t *m,
                  const lowp_format_t *in, size_t chunk, const float *ascale,
                  const float *bscale, const float *bias);

#endif
