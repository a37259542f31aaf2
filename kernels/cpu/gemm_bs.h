/* lowp_gemm_bs -- GEMM on the block-scaled MMA model: the reference and the integer-SIMD fast path */
#ifndef LOWP_GEMM_BS_H
#define LOWP_GEMM_BS_H

#include <stddef.h>

#include "format/bsformat.h"
#include "model/bsmma.h"

/** @brief A block-scaled GEMM: the model and the operands' formats. */
typedef struct {
  lowp_bsmma_model_t model;
  lowp_bsformat_t fa, fb; /**< A's and B's block-scaled formats (the same scale format and block) */
} lowp_gemm_bs_cfg_t;

/**
 * @brief C = A B + C on the model: C[i][j] = lowp_bsmma_dot over row i of A
 * (elements A[i*k + p], scales SA[i*nb + p/blk]) and column j of B (elements
 * B[p*n + j], scales SB[j*nb + p/blk]), nb = ceil(k / blk), blk the formats'
 * block, c = C[i][j] on entry.
 * @return LOWP_OK, LOWP_EINVAL (mismatched formats, a value that is not
 *         one of its format's), LOWP_ENOMEM.
 */
int lowp_gemm_bs_ref(double *C, const double *A, const double *SA, const double *B, const double *SB,
                     size_t m, size_t n, size_t k, const lowp_gemm_bs_cfg_t *cfg);

/**
 * @brief The same bytes as lowp_gemm_bs_ref, vectorised over 64 output
 * columns with the model's integers (kernels/cpu/gemm_bs.c says how); rows,
 * columns or C entries holding NaN or inf, all-zero instructions, and
 * out roundings other than rtz go to the reference.
 */
int lowp_gemm_bs_fast(double *C, const double *A, const double *SA, const double *B, const double *SB,
                      size_t m, size_t n, size_t k, const lowp_gemm_bs_cfg_t *cfg);

/**
 * @brief lowp_gemm_bs_fast on the copy for one instruction set: isa =
 * "generic", "avx2", "avx512" or NULL (the best this CPU runs; what
 * lowp_gemm_bs_fast uses). Every copy gives the same bytes (integer and
 * IEEE operations only).
 * @return as lowp_gemm_bs_fast; LOWP_EINVAL (unknown isa);
 *         LOWP_EUNSUPPORTED (this CPU cannot run that isa).
 */
int lowp_gemm_bs_fast_isa(double *C, const double *A, const double *SA, const double *B, const double *SB,
                          size_t m, size_t n, size_t k, const lowp_gemm_bs_cfg_t *cfg, const char *isa);

/**
 * @brief Does a preset kind take these operands? The PTX instruction
 * (tcgen05.mma block_scale) fixes them: kind=mxf8f6f4 elements of at most 8
 * bits with ue8m0 scales a block of 32 (scale_vec::1X); kind=mxf4nvf4 e2m1
 * elements with ue8m0 scales a block of 32 (scale_vec::2X) or ue4m3 scales a
 * block of 16 (scale_vec::4X, NVFP4). Parameter models (K=..,group=..) take
 * any.
 * @return LOWP_OK, or LOWP_EINVAL with err saying what the kind takes.
 */
int lowp_gemm_bs_kind_check(const char *model, const lowp_bsformat_t *q, char *err, size_t errlen);

/** @brief Fill cfg from a model spec ("b200,kind=mxf8f6f4") and two format
    names ("mxfp8_e4m3"); err says why on failure (LOWP_EINVAL). */
int lowp_gemm_bs_config(lowp_gemm_bs_cfg_t *cfg, const char *model, const char *fa, const char *fb, char *err,
                        size_t errlen);

#endif
