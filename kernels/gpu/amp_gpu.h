/* lowp_amp_gpu -- the transformer layer's kernels on a GPU: cuBLAS GEMMs and simple memory-bound kernels */
#ifndef LOWP_AMP_GPU_H
#define LOWP_AMP_GPU_H

#include <stddef.h>

#include "model/roofline.h"

/**
 * @brief Name of CUDA device 0 and its compute capability ("NVIDIA H100
 * 80GB HBM3, sm_90").
 * @return LOWP_OK; LOWP_EUNSUPPORTED without a CUDA build or a device.
 */
int lowp_amp_gpu_device(char *name, size_t len);

/**
 * @brief Time every kernel of ks[0..nk) on device 0 with tensors stored and
 * GEMMs computed as p says (cublasGemmEx / cublasGemmStridedBatchedEx:
 * fp32 CUBLAS_COMPUTE_32F; tf32 CUBLAS_COMPUTE_32F_FAST_TF32 on fp32 data;
 * fp16 and bf16 data with CUBLAS_COMPUTE_32F; the memory-bound kernels are
 * one block per row, math in fp32). Each kernel runs once to warm up, then
 * reps times; seconds[i] is the fastest (cudaEvent timing). Before timing,
 * each GEMM's result is validated on 16 entries against a product computed
 * on the host from the same inputs (binary64): |C - X| <= (4 u_in + 4 u_in^2
 * + gamma_{2k}(2^-23)) |A||B| + u_out |X|, u_in of the multiplier's format
 * (tf32 inputs are rounded or truncated inside the tensor core: at most
 * 2 u_in each), gamma of twice fp32's u for the accumulation (tensor cores
 * truncate, and align each block of products to its largest term without a
 * sticky bit: docs/design.md's model, F >= 23 fraction bits), u_out of the
 * storage format for the rounding of the result.
 * @param[out] worst the largest share of that bound used over the checked
 *   entries (> 1: a GEMM failed validation; do not report its timings)
 * @return LOWP_OK; LOWP_EUNSUPPORTED (no CUDA build or device, or a storage
 *   format cuBLAS has no type for); LOWP_ENOMEM (device memory); LOWP_EIO
 *   (a CUDA or cuBLAS error).
 */
int lowp_amp_gpu_run(double *seconds, double *worst, const lowp_rkernel_t *ks, size_t nk, const lowp_rprec_t *p,
                     double dropout, int reps);

#endif
