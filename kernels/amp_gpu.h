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
 * reps times; seconds[i] is the fastest (cudaEvent timing).
 * @return LOWP_OK; LOWP_EUNSUPPORTED (no CUDA build or device, or a storage
 *   format cuBLAS has no type for); LOWP_ENOMEM (device memory); LOWP_EIO
 *   (a CUDA or cuBLAS error).
 */
int lowp_amp_gpu_run(double *seconds, const lowp_rkernel_t *ks, size_t nk, const lowp_rprec_t *p,
                     double dropout, int reps);

#endif
