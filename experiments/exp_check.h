/* lowp_exp_measure -- one experiment measurement: a registry kernel on declared inputs, through the pipeline */
#ifndef LOWP_EXP_CHECK_H
#define LOWP_EXP_CHECK_H

/*
 * Experiments declare what they measure (an operation, its sizes and
 * formats, a registry kernel with parameters, inputs) and ask the one
 * pipeline (lib/check/pipeline.h, docs/pipeline.md) for the numbers: the
 * exact reference of the rounded inputs, the metrics, and for sums of
 * products the bound of the kernel's declared method (vacuous: +inf).
 */

#include <stddef.h>

#include "check/pipeline.h"

/**
 * @brief Open registry kernel `kernel` with `params` ("key=value,..."),
 * bind it to p (a tensor-core kernel takes its model) and measure it on in
 * (lowp_check_measure). r is filled also on failure (free it with
 * lowp_check_result_free).
 * @return LOWP_OK; the subject's or the pipeline's status with err set.
 */
int lowp_exp_measure(lowp_check_result_t *r, const lowp_problem_t *p, const char *kernel,
                     const char *params, const lowp_check_inputs_t *in, char *err,
                     size_t errlen);

/**
 * @brief Open and bind registry kernel `kernel` with `params` for problem p
 * (lowp_kernel_subject_open + lowp_kernel_subject_bind); s is closed again
 * on failure.
 * @return LOWP_OK; the subject's status with err set.
 */
int lowp_exp_subject(lowp_subject_t *s, const lowp_problem_t *p, const char *kernel,
                     const char *params, char *err, size_t errlen);

/** @brief A problem of operation `op` (by name) with these sizes, every input
    in `in` and the outputs in `out`; eps at PyTorch's 1e-5. */
lowp_problem_t lowp_exp_problem(const char *op, size_t batch, size_t m, size_t n, size_t k,
                                const lowp_format_t *in, const lowp_format_t *out);

#endif
