/* lowp_gemm_tc -- GEMM on a tensor-core model: the CPU twin of tensor-core GEMM kernels */
#ifndef LOWP_GEMM_TC_H
#define LOWP_GEMM_TC_H

/** @brief Multiply-adds (m n k) below which the tensor-core GEMMs run on one
    thread (a parallel region costs more than such a GEMM; the bits are the
    same on any thread count). */
#define LOWP_GEMM_TC_PAR_MIN 65536.0

#include <stddef.h>

#include "format/format.h"
#include "measure/fpx.h"
#include "model/tc.h"

/*
 * Variants (docs/style.md B6):
 *   ref     every output element is lowp_tc_dot of its row and column: blocks
 *           of b products along k, chained through the output format (or
 *           promoted to fp32 every N_C products), exactly as the model in
 *           model/tc.h. Runs the integer-SIMD twin (cpu/gemm_tc_fast.h) where
 *           it applies (every preset), else `scalar`; the same bits.
 *   scalar  one lowp_tc_dot per element: the reference the fast path is
 *           tested against (tests/tgemm_tc_fast.c).
 * GPU kernels that use wmma / mma.sync / wgmma with the same k order must
 * agree with `ref` bit for bit; that is what makes it their twin.
 */

/** @brief Configuration (the registry's opaque cfg). */
typedef struct {
  lowp_tc_model_t model;    /**< from lowp_tc_model_get (promote inside) */
  const lowp_format_t *in;  /**< format of A and B (fp16, bf16, tf32, e4m3, e5m2) */
  const lowp_format_t *out; /**< format of C and D (fp32, or fp16) */
} lowp_gemm_tc_cfg_t;

/**
 * @brief Build a configuration: model spec (a preset such as "h100", or
 * "b=16,F=25,align=rtz,out=rtz", or "h100,promote=128"), then an optional
 * promotion count that overrides the spec's (promote < 0: keep the spec's;
 * 0: off; N: every N products, a multiple of the block size).
 * @param[out] err  reason on failure (<= errlen chars), may be NULL
 * @return LOWP_OK, LOWP_EINVAL, LOWP_EUNSUPPORTED (the GPU has no datapath
 *         for this input/output pair).
 */
int lowp_gemm_tc_config(lowp_gemm_tc_cfg_t *cfg, const char *model_spec, long promote,
                        const lowp_format_t *in, const lowp_format_t *out,
                        char *err, size_t errlen);

/**
 * @brief C = A B + C on the model (lowp_gemm_fn signature, kernels/registry.h).
 * A is m x k, B is k x n, C is m x n, all row-major doubles; A and B hold
 * values of cfg->in, C values of cfg->out (C is read, then overwritten).
 * Each output is independent, so the result does not depend on the number
 * of OpenMP threads. c must not alias a or b.
 * @return LOWP_OK; LOWP_EINVAL (NULL pointers or cfg); LOWP_ERANGE (an
 *         input is not a value of its format).
 */
int lowp_gemm_tc_ref(double *c, const double *a, const double *b, size_t m,
                     size_t n, size_t k, const void *cfg);

/** @brief The same on the scalar reference (one lowp_tc_dot per element). */
int lowp_gemm_tc_scalar(double *c, const double *a, const double *b, size_t m,
                        size_t n, size_t k, const void *cfg);

/**
 * @brief lowp_gemm_tc_scalar (same bits) with every block FMA and rounded
 * addition traced into trace (lib/measure/fpx.h, lowp_tc_dot_fpx); output
 * e = i n + j has sequence base e (2k + 1). The trace is the same for any
 * thread count.
 */
int lowp_gemm_tc_fpx(double *c, const double *a, const double *b, size_t m, size_t n,
                     size_t k, const lowp_gemm_tc_cfg_t *cfg, lowp_fpx_trace_t *trace);

#endif
