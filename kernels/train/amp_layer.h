/* lowp_amp_cpu -- the transformer layer's kernels on this CPU: OpenBLAS GEMMs, lowp's CPU kernels, plain loops */
#ifndef LOWP_AMP_LAYER_H
#define LOWP_AMP_LAYER_H

/*
 * The CPU runner of the kernels that lib/model/roofline.h lists (the CPU
 * counterpart of kernels/cuda/amp_layer.cu), so that `lowp run amp-speedup`
 * measures the layer wherever it runs. Each kernel is run with the shapes
 * and data sizes of the layer on persistent buffers of random data (the
 * buffers are the largest operand of each role, reused by every kernel:
 * a kernel's speed does not depend on which layer tensor it reads).
 *
 * Precisions: tensors stored in fp32 (float) or in a 16-bit format that is
 * the top half of binary32 (bf16; checked from the descriptor: sign, 8
 * exponent bits, p = 8). GEMMs: fp32 storage -> cblas_sgemm; bf16 storage
 * -> cblas_sbgemm when the OpenBLAS loaded has it (looked up at run time:
 * Debian's 0.3.21 declares it in cblas.h but is built without
 * BUILD_BFLOAT16, so the library lacks the symbol), else the bf16 operands
 * are widened to fp32 (exact) and multiplied by cblas_sgemm; a bf16 GEMM's
 * fp32 result is rounded (rne, lowp_encode_array_f32) to bf16 storage as
 * part of the kernel. Softmax, layer norm and GELU forward are lowp's
 * emulating CPU kernels (kernels/cpu/softmax_kernel.c, norm.c, elementwise.c:
 * binary64 storage, every operation rounded to fp32, output rounded to the
 * storage format); their backward, dropout and residual adds are plain
 * loops in fp32 arithmetic on the storage format. OpenMP over rows.
 */

#include <stddef.h>
#include <stdint.h>

#include "model/roofline.h"

/** @brief The runner's buffers (opaque). */
typedef struct lowp_amp_cpu lowp_amp_cpu_t;

/**
 * @brief Allocate buffers for the kernels ks[0..nk) and fill them with data
 * drawn from seed: uniform in [-1, 1), or with int_data small integers in
 * [-4, 4] (products and sums then exact in fp32 for k < 2^19: for tests).
 * @return LOWP_OK; LOWP_EINVAL (nk = 0 or NULL); LOWP_ENOMEM.
 */
int lowp_amp_cpu_new(lowp_amp_cpu_t **ctx, const lowp_rkernel_t *ks, size_t nk, int int_data,
                     uint64_t seed);

/** @brief Free the buffers; *ctx becomes NULL (NULL is harmless). */
void lowp_amp_cpu_free(lowp_amp_cpu_t **ctx);

/** @brief 1 if the runner stores tensors in this format (fp32, or bf16-like), else 0. */
int lowp_amp_cpu_supports(const lowp_rprec_t *p);

/** @brief How this runner does p's GEMMs: "cblas_sgemm", "cblas_sbgemm",
    "bf16 widened to fp32, cblas_sgemm (this OpenBLAS has no cblas_sbgemm)",
    or NULL if p is not supported. Static storage. */
const char *lowp_amp_cpu_gemm_engine(const lowp_rprec_t *p);

/**
 * @brief Run kernel k (one of the list given to lowp_amp_cpu_new) with
 * tensors stored as p says; dropout is the drop probability of dropout
 * kernels, seed their masks' stream.
 * @return LOWP_OK; LOWP_EUNSUPPORTED (p not supported); LOWP_EINVAL (k
 *   larger than the buffers); a kernel's own status.
 */
int lowp_amp_cpu_run(lowp_amp_cpu_t *ctx, const lowp_rkernel_t *k, const lowp_rprec_t *p,
                     double dropout, uint64_t seed);

/**
 * @brief After lowp_amp_cpu_run of GEMM k under p: compare up to max_entries
 * entries of its fp32 result (every entry if there are no more; else an
 * evenly strided sample) with the exact product of its inputs: the
 * measurement pipeline (lib/check: exact reference rounded once to binary64,
 * |A||B|, the gamma_k bound of fp32 accumulation).
 * @param[out] worst the largest |C - X| / (gamma_k(u_fp32) |A||B|) (the
 *   share of the error bound of fp32 accumulation used: <= 1 passes)
 * @param[out] exact_equal 1 if every compared entry equals the exact value
 * @return LOWP_OK; LOWP_EINVAL (k not a GEMM, or p unsupported).
 */
int lowp_amp_cpu_gemm_check(double *worst, int *exact_equal, lowp_amp_cpu_t *ctx,
                            const lowp_rkernel_t *k, const lowp_rprec_t *p, size_t max_entries);

/** @brief The fp32 operands of the last GEMM (fp32 storage): A, B, C as
    laid out for k (row-major, ta/tb transposed, count products one after
    another). For tests. */
void lowp_amp_cpu_gemm_buffers(const lowp_amp_cpu_t *ctx, const float **a, const float **b,
                               const float **c);

#endif
