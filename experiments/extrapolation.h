/* lowp_exp_tc_captured -- what of a tensor-core model rests on captured hardware data, and what is extrapolation */
#ifndef LOWP_EXP_EXTRAPOLATION_H
#define LOWP_EXP_EXTRAPOLATION_H

#include <stddef.h>

#include "format/format.h"

/**
 * @brief The captured range of a GPU preset's tensor-core model for input
 * format f (tests/data/tensor-core-vectors/README.md: one instruction's
 * products per captured row, K = 4 .. 32; H100 fp8 captured with C = 0):
 * *k_captured (0: no vectors for this GPU and format), *c_zero (1: only
 * C = 0 was captured).
 * @return 1 when a dot or GEMM of inner dimension k on that model goes
 * beyond it (k > K: instructions chained, the running sum entering as C,
 * or C != 0 never captured, or nothing captured), with a sentence in buf
 * ("model extrapolation: ..."); 0 when k is inside the captured range.
 */
int lowp_exp_tc_extrapolated(char *buf, size_t len, const char *gpu, const lowp_format_t *f, size_t k,
                             size_t *k_captured, int *c_zero);

#endif
