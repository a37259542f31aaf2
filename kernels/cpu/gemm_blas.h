/* lowp_gemm_blas -- OpenBLAS's cblas_sgemm as a registry kernel: an optimized fp32 BLAS to measure */
#ifndef LOWP_GEMM_BLAS_H
#define LOWP_GEMM_BLAS_H

#include <stddef.h>

#include "cpu/kcfg.h"

/**
 * @brief C = A B (batched) by OpenBLAS cblas_sgemm on one thread
 * (lowp_kernel_run_fn; registry entry gemm_sgemm). Every input must be an
 * fp32 value (LOWP_EUNSUPPORTED otherwise); the fp32 result is rounded
 * (rne) to the problem's output format. OpenBLAS's thread count is set to 1
 * for the call (threads= in the parameters, default 1) and restored after it.
 */
int lowp_kernel_gemm_sgemm(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                           const lowp_problem_t *p, char *err, size_t errlen);

/**
 * @brief The same by cblas_dgemm (registry entry gemm_dgemm): every input
 * an fp64 value; threads= OpenBLAS threads for the call (default 1; the
 * order, and so the bits, may depend on it: lowp reveal finds out).
 */
int lowp_kernel_gemm_dgemm(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                           const lowp_problem_t *p, char *err, size_t errlen);

/** @brief "OpenBLAS <its config string>, core <its kernel>" into buf (always terminated). */
void lowp_gemm_sgemm_info(char *buf, size_t len);

#endif
