/* lowp_gemm_gpu -- GPU GEMMs (cuBLASLt, and lowp's own mma.sync kernels) and the tensor-core models they must equal */
#ifndef LOWP_GEMM_GPU_H
#define LOWP_GEMM_GPU_H

/*
 * Two families, C (m x n) = A (m x k) B (k x n) + C, row-major:
 *
 * cuBLAS (kernels/cuda/gemm_cublas.cu, one cublasLtMatmul each):
 *   1 f32        fp32 A, B, C, D; CUBLAS_COMPUTE_32F_PEDANTIC (no tensor cores)
 *   2 tf32       fp32 storage of tf32 values; CUBLAS_COMPUTE_32F_FAST_TF32
 *   3 f16        fp16 A, B; fp32 C, D; CUBLAS_COMPUTE_32F
 *   4 f16.acc16  fp16 A, B, C, D; CUBLAS_COMPUTE_16F (fp16 accumulation)
 *   5 bf16       bf16 A, B; fp32 C, D; CUBLAS_COMPUTE_32F
 *   6 e4m3       e4m3 A, B; fp32 C, D; CUBLAS_COMPUTE_32F, FAST_ACCUM off
 *   7 e4m3.fast  the same with CUBLASLT_MATMUL_DESC_FAST_ACCUM on
 *   (cuBLASLt has no e5m2 x e5m2 GEMM; e5m2 runs on lowp's mma kernel.)
 *   Twin: the tensor-core model (lib/model/tc.h, kernels/cpu/gemm_tc.c) of
 *   the GPU's preset (lowp_gpu_preset); for 6 the entry's model adds the
 *   promotion cuBLAS is assumed to do without fast accumulation (promote=128,
 *   DeepSeek-V3 3.3.2's N_C), to be confirmed on a GPU. The launcher runs
 *   cuBLASLt with beta = 0 and no split-K and adds C itself in a separate
 *   step (kernels/cuda/gemm_cublas.cu); the twin does the same
 *   (lowp_gemm_twin_add_c). No twin is confirmed yet
 *   (lowp_gemm_cublas_validated): tests/cuda/tgemm_gpu.c measures and
 *   reports each (bits equal, ulps, the algorithm cuBLASLt ran), marked
 *   unvalidated. Variant 1 has no tensor-core model: its twin is reported only.
 *
 * lowp's mma.sync kernels (kernels/cuda/gemm_mma.cu), fp32 accumulation:
 *   1 f16   mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
 *   2 bf16  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
 *   3 tf32  mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
 *   4 e4m3  mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 (sm_89+)
 *   5 e5m2  mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 (sm_89+)
 *   THE ORDER: one warp per 16 x 8 tile of C; its accumulator starts as C
 *   and takes one mma per step of K (16, 8 or 32) products in increasing k:
 *   D_0 = C, D_{s+1} = mma(A[:, sK..sK+K-1], B[sK..sK+K-1, :], D_s), the
 *   fp32 result of step s being the C of step s+1; k is padded with zeros
 *   to a multiple of K (a zero product changes no block FMA). No split-k,
 *   no promotion. Twin: lowp_tc_dot over the same k order with the GPU's
 *   preset, promote=0, i.e. gemm_tc with model=<preset>, bit for bit; for
 *   fp8 the preset's mma.sync datapath (lowp_gemm_mma_fp8).
 */

#include <stddef.h>

#include "format/format.h"

#define LOWP_CUBLAS_VARIANTS 7
#define LOWP_MMA_VARIANTS 5

/** @brief Formats of a variant: A and B (*in), C and D (*out); its name.
    @return LOWP_OK or LOWP_EINVAL (unknown variant). */
int lowp_gemm_cublas_info(int variant, const lowp_format_t **in, const lowp_format_t **out,
                          const char **name);
int lowp_gemm_mma_info(int variant, const lowp_format_t **in, const char **name);

/** @brief The variant for these formats (compared by value, not by name),
    fastacc choosing 7 over 6 (and nothing for formats without a
    fast-accumulation variant); 0 if none. */
int lowp_gemm_cublas_variant(const lowp_format_t *in, const lowp_format_t *out, int fastacc);
/** @brief 1 if an mma variant is an fp8 instruction: its twin takes the
    preset's mma.sync fp8 datapath (the one lib/model/tc_model.c fits to
    mma.sync captures, fp8_h where the preset has one: on Hopper the fp8
    datapath of fp32 output is wgmma's), with the fp32 output. */
int lowp_gemm_mma_fp8(int variant);
/** @brief 1 if the twin of a cuBLAS variant has been confirmed bit for bit
    on a GPU of this preset (tests/cuda/tgemm_gpu.c asserts it there); 0:
    unvalidated, its agreement is measured and reported, not asserted. No
    twin is validated yet. */
int lowp_gemm_cublas_validated(int variant, const char *preset);
/** @brief The separate step of the cuBLAS launcher, D = fl(AB + C): AB
    (the tensor cores' result, from zero) plus C, one addition rounded to
    nearest even in out. d may equal ab. @return LOWP_OK or lowp_round_f64's
    error. */
int lowp_gemm_twin_add_c(double *d, const double *ab, const double *c, size_t n,
                         const lowp_format_t *out);
/** @brief What the last lowp_gemm_cublas_cuda call ran (algorithm id, tile,
    stages, split-K, reduction, workspace), for the results. */
int lowp_gemm_cublas_algo(char *buf, size_t len);
/** @brief The promotion interval the twin of a cuBLAS variant assumes (128
    for e4m3 without fast accumulation, else 0; see the top of this file). */
long lowp_gemm_cublas_promote(int variant);
int lowp_gemm_mma_variant(const lowp_format_t *in, const lowp_format_t *out);

/**
 * @brief Raw launchers: a, b, c, d hold bit patterns row-major (4 bytes per
 * fp32/tf32 element, 2 per fp16/bf16, 1 per fp8; C and D in the variant's
 * output format, fp32 for the mma kernels); d may equal c. Host memory.
 * @return LOWP_OK; LOWP_EINVAL (bad variant or sizes: each < 2^31, k >= 1);
 *         LOWP_EUNSUPPORTED (no CUDA build or device, fp8 below sm_89, no
 *         cuBLASLt algorithm for the request; err says which); LOWP_ENOMEM;
 *         LOWP_EIO (a CUDA or cuBLAS call failed).
 */
int lowp_gemm_cublas_cuda(int variant, void *d, const void *a, const void *b, const void *c,
                          size_t m, size_t n, size_t k, char *err, size_t errlen);
int lowp_gemm_mma_cuda(int variant, void *d, const void *a, const void *b, const void *c,
                       size_t m, size_t n, size_t k, char *err, size_t errlen);

/**
 * @brief The same on binary64 arrays holding values of the formats (A, B of
 * in; C of out): encode, launch, decode. which: 0 cuBLAS, 1 mma.
 * @return as the launchers; LOWP_ERANGE if a value is not one of its format.
 */
int lowp_gemm_gpu(int which, int variant, double *c, const double *a, const double *b,
                  size_t m, size_t n, size_t k, char *err, size_t errlen);

/** @brief The first CUDA device: name, compute capability. @return LOWP_OK
    or LOWP_EUNSUPPORTED (no CUDA build, driver or device). */
int lowp_cuda_device_info(char *name, size_t len, int *major, int *minor);

/** @brief What the CUDA runtime says about its devices: the number it can
    use (msg "N CUDA devices"), or -1 with its error in msg (an old driver:
    "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA
    runtime version (cudaErrorInsufficientDriver)"; a build without CUDA:
    says so). */
int lowp_cuda_runtime_status(char *msg, size_t len);

/**
 * @brief The tensor-core preset (lib/model/tc.h) of the first device: a
 * preset whose name is a word of the device name ("NVIDIA H100 80GB HBM3"
 * -> h100), else by compute capability (7.0 v100, 8.0 a100, 8.6 a2, 8.9
 * ada, 9.0 h100, 10.x b200). Without a device: "h100" and returns
 * LOWP_EUNSUPPORTED (buf still set); LOWP_OK when it came from a device.
 */
int lowp_gpu_preset(char *buf, size_t len);

#endif
