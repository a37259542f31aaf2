/* lowp_elementwise -- plain CPU elementwise kernels: cast, exp, log, tanh, GELU (erf and tanh forms) */
#ifndef LOWP_ELEMENTWISE_H
#define LOWP_ELEMENTWISE_H

#include "cpu/kcfg.h"

/** @brief y = round(x) to the output format in mode round= (lowp_kernel_run_fn) */
int lowp_kernel_cast(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);
/** @brief exp(x) correctly rounded (rne) to F, once (lib/exact's exp): the
    exp=cr model of the softmax kernels, and of simulations of a format's exp.
    NaN in, NaN out; overflow as F's rounding gives it (inf, or NaN without). */
double lowp_kernel_exp_cr(double x, const lowp_format_t *F);
/** @brief libm exp in binary64, rounded to compute (lowp_kernel_run_fn) */
int lowp_kernel_exp(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);
/** @brief libm log in binary64, rounded to compute (lowp_kernel_run_fn) */
int lowp_kernel_log(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);
/** @brief libm tanh in binary64, rounded to compute (lowp_kernel_run_fn) */
int lowp_kernel_tanh(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);
/** @brief x/2 (1 + erf(x/sqrt 2)) in binary64, rounded to compute (lowp_kernel_run_fn) */
int lowp_kernel_gelu(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);
/** @brief the tanh approximation of GELU in binary64, rounded to compute (lowp_kernel_run_fn) */
int lowp_kernel_gelu_tanh(const lowp_kcfg_t *c, double *const *out, const double *const *in,
        const lowp_problem_t *p, char *err, size_t errlen);

#endif
