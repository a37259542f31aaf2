/* lowp_softmax_k -- plain CPU kernels over rows: softmax (naive, stable), log-softmax, logsumexp, cross-entropy */
#ifndef LOWP_SOFTMAX_K_H
#define LOWP_SOFTMAX_K_H

#include "cpu/kcfg.h"
#include "measure/fpx.h"

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

/**
 * @brief One row of softmax_naive with exp=cr, traced (lib/measure/fpx.h):
 * e_i = F(exp(x_i)) (op exp), s = A(s + e_i) left to right (op add), y_i =
 * F(e_i / s) (op div); the bits of lowp_kernel_softmax_naive with
 * compute=F, exp=cr, acc=A and output F (A(s + e_i) and F(e_i / s) are the
 * correctly rounded operations, which the kernel's binary64 operation
 * rounded to A or F equals: 53 >= 2p + 2, Figueroa 1995). Events: i = row,
 * j = element, k = the sum's step for the additions; sequence numbers
 * seq0 + 2j (exp), seq0 + 2j + 1 (add), seq0 + 2n + j (division): the
 * evaluation order. Each exception is judged against the exact value at its
 * point: exp(x_j) for the exp, the exact running sum exp(x_0) + ... +
 * exp(x_j) for the addition (lib/measure/ref.h lowp_ref_expsum), the exact
 * softmax y_j for the division (lowp_ref_softmax256; NaN when an input is
 * NaN; none with an infinite input). t may be NULL (untraced).
 * @return LOWP_OK; LOWP_EINVAL; LOWP_ENOMEM; LOWP_EFORMAT (F or A over 25 bits).
 */
int lowp_softmax_naive_fpx(lowp_fpx_trace_t *t, double *y, const double *x, size_t n,
                           const lowp_format_t *F, const lowp_format_t *A, int64_t row,
                           uint64_t seq0);

#endif
