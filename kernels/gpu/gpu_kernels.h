/* lowp_gpu_kernels -- the registry's entries with a GPU kernel: run on the GPU, or on its CPU twin */
#ifndef LOWP_GPU_KERNELS_H
#define LOWP_GPU_KERNELS_H

/*
 * Each function is a lowp_kernel_run_fn (kernels/cpu/kcfg.h). With
 * device=gpu it runs the CUDA kernel (LOWP_EUNSUPPORTED, err saying why,
 * when lowp was built without CUDA or no device is present); with
 * device=cpu its CPU twin; with device=auto (the default) the GPU when one
 * can run it, else the twin. Both give the same bits (the twins' contract),
 * so a check's verdict does not depend on where it ran.
 *
 *   sum_tree            kernels/common/rowk.h lowp_rsum_*, accumulation in compute
 *   softmax_*_tree      lowp_softmax_*, fp32
 *   layernorm_tree      lowp_layernorm_*, variant onepass|twopass|welford, fp32
 *   xent_tree           lowp_xent_* (+ the mean by lowp_rsum_* in fp32 / rows)
 *   gemm_cublas[_fastacc]  kernels/gpu/gemm_gpu.h cuBLASLt variants; twin gemm_tc
 *   gemm_mma            lowp's mma.sync kernels; twin gemm_tc, promote=0
 *
 * Inputs must be fp32 values (formats inside fp32); outputs are rounded
 * (rne) to the problem's output format, as the store of every registry
 * kernel is.
 */

#include "cpu/gemm_tc.h"
#include "cpu/kcfg.h"

int lowp_kernel_sum_tree(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                         const lowp_problem_t *p, char *err, size_t errlen);
int lowp_kernel_softmax_naive_tree(const lowp_kcfg_t *c, double *const *out,
                                   const double *const *in, const lowp_problem_t *p, char *err,
                                   size_t errlen);
int lowp_kernel_softmax_stable_tree(const lowp_kcfg_t *c, double *const *out,
                                    const double *const *in, const lowp_problem_t *p, char *err,
                                    size_t errlen);
int lowp_kernel_layernorm_tree(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                               const lowp_problem_t *p, char *err, size_t errlen);
int lowp_kernel_xent_tree(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                          const lowp_problem_t *p, char *err, size_t errlen);
int lowp_kernel_gemm_cublas(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                            const lowp_problem_t *p, char *err, size_t errlen);
int lowp_kernel_gemm_cublas_fastacc(const lowp_kcfg_t *c, double *const *out,
                                    const double *const *in, const lowp_problem_t *p, char *err,
                                    size_t errlen);
int lowp_kernel_gemm_mma(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                         const lowp_problem_t *p, char *err, size_t errlen);

/**
 * @brief The datapath of the warp-level mma.sync instruction for in -> out
 * in the model spec (a preset, or parameters): for fp8 inputs the one the
 * spec gives fp16 outputs (fp8_h where the preset has one: on Hopper the fp8
 * datapath of fp32 output is wgmma's, while mma.sync runs as two fp16
 * HMMAs and an FADD of c, tests/tsass.c), with no promotion; otherwise the
 * spec's datapath for in -> out. lowp_gpu_gemm_model's gemm_mma and lowp
 * probe on a GPU both compare against this one.
 * @return as lowp_tc_model_get.
 */
int lowp_gpu_mma_model(lowp_tc_model_t *m, const char *spec, const lowp_format_t *in,
                       const lowp_format_t *out, char *err, size_t errlen);

/**
 * @brief The tensor-core model a GPU GEMM entry must equal: the spec of
 * c->model with "auto" replaced by the GPU's preset (lowp_gpu_preset; h100
 * without a device), and the promotion: gemm_mma 0 (fp8: the preset's
 * mma.sync datapath, lowp_gemm_mma_fp8); gemm_cublas with e4m3 inputs 128
 * unless promote= says otherwise (kernels/gpu/gemm_gpu.h); else c->promote.
 * Also used by kernels/registry_subject.c for the model bound and by the GPU tests.
 * @return as lowp_gemm_tc_config.
 */
int lowp_gpu_gemm_model(lowp_gemm_tc_cfg_t *tc, const char *entry, const lowp_kcfg_t *c,
                        const lowp_format_t *in, const lowp_format_t *out, char *err,
                        size_t errlen);

#endif
