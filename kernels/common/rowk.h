/* lowp_rowk -- lowp's row kernels (sum, softmax, layer norm, cross-entropy, grad scaler) on the GPU and their CPU twins */
#ifndef LOWP_ROWK_H
#define LOWP_ROWK_H

/*
 * One block per row, the reduction tree of kernels/common/karith.h ("THE LAUNCH
 * ORDER"); the arithmetic is karith.h's, shared by both sides. Each _cpu
 * function is the twin of the _cuda function of the same name: given the
 * same inputs they must return the same bits (tests/cuda/trowk_gpu.c).
 * Arrays are row-major host memory (rows x n); outputs may not alias
 * inputs except where said. Limits: 1 <= n < 2^24 (counts are exact fp32),
 * rows < 2^31.
 *
 * Return values (lowp_status_t): LOWP_OK; LOWP_EINVAL (NULL pointer, a size
 * out of range, a target index outside [0, n)); LOWP_ENOMEM; for _cuda
 * also LOWP_EUNSUPPORTED (a build without CUDA, or no device) and LOWP_EIO
 * (a CUDA call failed).
 */

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "common/fpxd.h"
#include "common/karith.h"

/** @brief Layer-norm variants, as lowp_ln_variant_t (kernels/cpu/kcfg.h). */
#define LOWP_ROWK_LN_TWOPASS 0
#define LOWP_ROWK_LN_ONEPASS 1
#define LOWP_ROWK_LN_WELFORD 2

/**
 * @brief The accumulation format lowp_ka_round can round to, from a lowp
 * format: p <= 24, emax <= 127, quantum 2^(emin-p+1) >= 2^-149, IEEE
 * infinities, subnormals (fp32, tf32, fp16, bf16, e5m2 qualify).
 * @return LOWP_OK or LOWP_EUNSUPPORTED.
 */
int lowp_rowk_fmt(lowp_ka_fmt_t *k, const lowp_format_t *f);

/** @brief y[r] = sum of row r accumulated in acc, the documented tree. */
int lowp_rsum_cpu(float *y, const float *x, size_t rows, size_t n, lowp_ka_fmt_t acc);
int lowp_rsum_cuda(float *y, const float *x, size_t rows, size_t n, lowp_ka_fmt_t acc);

/** @brief Softmax of each row (stable: with max subtraction). */
int lowp_softmax_cpu(float *y, const float *x, size_t rows, size_t n, int stable);
int lowp_softmax_cuda(float *y, const float *x, size_t rows, size_t n, int stable);

/** @brief The same, traced (kernels/common/fpxd.h: the first NaN or
    infinity produced, by its key, and counts per kind; trace NULL:
    untraced, as lowp_softmax_*). The CPU twin gives the GPU's record bit
    for bit. */
int lowp_softmax_fpx_cpu(float *y, const float *x, size_t rows, size_t n, int stable,
                         lowp_fpxd_t *trace);
int lowp_softmax_fpx_cuda(float *y, const float *x, size_t rows, size_t n, int stable,
                          lowp_fpxd_t *trace);

/** @brief Layer norm of each row (no affine): y, and mean and var per row
    (population variance); variant LOWP_ROWK_LN_*. */
int lowp_layernorm_cpu(float *y, float *mean, float *var, const float *x, size_t rows,
                       size_t n, float eps, int variant);
int lowp_layernorm_cuda(float *y, float *mean, float *var, const float *x, size_t rows,
                        size_t n, float eps, int variant);

/** @brief Cross-entropy per row: log(sum exp(x - max)) - (x[target] - max). */
int lowp_xent_cpu(float *loss, const float *x, const int32_t *target, size_t rows, size_t n);
int lowp_xent_cuda(float *loss, const float *x, const int32_t *target, size_t rows, size_t n);

/** @brief Grad scaler: lowp_ka_unscale on each g[i] in place (PyTorch's
    _amp_foreach_non_finite_check_and_unscale_): *found_inf = 1 if any
    incoming g[i] was NaN or infinite, else 0. n < 2^39. */
int lowp_unscale_cpu(float *g, size_t n, float inv_scale, int *found_inf);
int lowp_unscale_cuda(float *g, size_t n, float inv_scale, int *found_inf);

/** @brief The same, traced: each g[i] * inv_scale (inv_scale != 1) by
    the key i << 4 | kind (kernels/common/fpxd.h). */
int lowp_unscale_fpx_cpu(float *g, size_t n, float inv_scale, int *found_inf, lowp_fpxd_t *trace);
int lowp_unscale_fpx_cuda(float *g, size_t n, float inv_scale, int *found_inf, lowp_fpxd_t *trace);

/** @brief Grad scaler: one update of (scale, tracker), lowp_ka_scaler_update
    (the CPU twin is that function itself). */
int lowp_scaler_update_cuda(float *scale, int32_t *tracker, int found_inf, double growth,
                            double backoff, int32_t interval);

#endif
