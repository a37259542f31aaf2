/* lowp_fpx_cli -- exception traces on the command line: the traced reference of a GEMM, text rendering */
#ifndef LOWP_FPX_CLI_H
#define LOWP_FPX_CLI_H

#include <stdio.h>

#include "format/format.h"
#include "measure/fpx.h"

/** @brief What lowp gemm computes, for its traced reference. */
typedef struct {
  const char *model;          /**< tensor-core model spec, or NULL (accumulation twin) */
  long promote;               /**< -1 the model's own, 0 off, N */
  const lowp_format_t *in;    /**< input format (the model's datapath) */
  const lowp_format_t *acc;   /**< accumulation / output format */
  const lowp_format_t *prod;  /**< product format or NULL (exact products) */
  lowp_rounding_t rnd, prod_rnd;
} lowp_fpx_gemm_spec_t;

/**
 * @brief Trace C = A B (m x k times k x n, C starts at 0) the way spec
 * computes it, on the reference path (kernels/cpu/gemm_acc.c,
 * kernels/cpu/gemm_tc.c). t is initialised here.
 * @return LOWP_OK or a status (err says why).
 */
int lowp_fpx_cli_gemm(lowp_fpx_trace_t *t, const double *a, const double *b, size_t m,
                      size_t n, size_t k, const lowp_fpx_gemm_spec_t *spec, char *err,
                      size_t errlen);

/** @brief Print a trace as text: one line per kind that occurred, with its
    first occurrence (indices, operation, operands, result, exact value,
    inherent or spurious). what names the indices ("C", "x"). */
void lowp_fpx_cli_print(FILE *out, const lowp_fpx_trace_t *t, const char *what);

#endif
