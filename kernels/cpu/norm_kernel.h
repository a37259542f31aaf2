/* lowp_norm_k -- plain CPU kernels of normalisation: layer norm (one-pass, two-pass, Welford), RMS norm */
#ifndef LOWP_NORM_K_H
#define LOWP_NORM_K_H

#include "cpu/kcfg.h"

/** @brief y = (x - mean) / sqrt(var + eps), mean and var, in compute (variant=, scale=div|rsqrt) (lowp_kernel_run_fn) */
int lowp_kernel_layernorm(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);
/** @brief y = x / sqrt(mean(x^2) + eps), in compute (lowp_kernel_run_fn) */
int lowp_kernel_rmsnorm(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);

#endif
