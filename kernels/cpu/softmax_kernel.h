/* lowp_softmax_k -- plain CPU kernels over rows: softmax (naive, stable), log-softmax, logsumexp, cross-entropy */
#ifndef LOWP_SOFTMAX_K_H
#define LOWP_SOFTMAX_K_H

#include "cpu/kcfg.h"

/** @brief softmax without max subtraction, every operation in compute (lowp_kernel_run_fn) */
int lowp_kernel_softmax_naive(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);
/** @brief softmax with max subtraction, every operation in compute (lowp_kernel_run_fn) */
int lowp_kernel_softmax_stable(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);
/** @brief x - max - log(sum exp(x - max)), in compute (lowp_kernel_run_fn) */
int lowp_kernel_logsoftmax(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);
/** @brief max + log(sum exp(x - max)), in compute (lowp_kernel_run_fn) */
int lowp_kernel_logsumexp(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);
/** @brief logsumexp(row) - row[target], per row or the mean, in compute (lowp_kernel_run_fn) */
int lowp_kernel_xent(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);

#endif
