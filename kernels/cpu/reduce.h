/* lowp_reduce -- plain CPU kernels of sums of products: sum, dot, gemv, gemm, tensor-core gemm */
#ifndef LOWP_REDUCE_H
#define LOWP_REDUCE_H

#include "cpu/kcfg.h"

/** @brief each row summed in acc, in order (lowp_kernel_run_fn) */
int lowp_kernel_sum_acc(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);
/** @brief one dot product per batch entry (lowp_kernel_run_fn) */
int lowp_kernel_dot_acc(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);
/** @brief y = A x, one dot per row (lowp_kernel_run_fn) */
int lowp_kernel_gemv_acc(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);
/** @brief C = A B, one dot per output element (lowp_kernel_run_fn) */
int lowp_kernel_gemm_acc(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);
/** @brief C = A B on a tensor-core model (model=, promote=) (lowp_kernel_run_fn) */
int lowp_kernel_gemm_tc(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);

#endif
