/* lowp exact GEMM on the GPU -- the sliced (Ozaki) path with cuBLAS DGEMM */
#ifndef LOWP_OZAKI_GPU_H
#define LOWP_OZAKI_GPU_H

#include <stddef.h>

#include "exact/exact.h"

/**
 * @brief lowp_exact_gemm_ex with the slice-pair DGEMMs on the GPU (cuBLAS,
 * pedantic math: IEEE binary64, no emulation or reduced precision). Slicing,
 * the choices, the sparse slice products, the exactness check, the
 * combination and the accumulator fallback run on the CPU, so the result is
 * bit-identical to the CPU path's (the DGEMMs are exact in any order) and
 * so is the path: every field of stats equals lowp_exact_gemm_ex's
 * (dgemm_calls counting cuBLAS calls). Arguments as lowp_exact_gemm_ex
 * (method AUTO).
 * @return as lowp_exact_gemm_ex; LOWP_EUNSUPPORTED without a CUDA build or
 * device; LOWP_EIO on a CUDA or cuBLAS error; LOWP_ENOMEM if device memory
 * runs out.
 */
int lowp_exact_gemm_cuda(double *c, const double *a, const double *b, const double *c0,
                         size_t m, size_t n, size_t k, const lowp_format_t *f,
                         const lowp_policy_t *pol, lowp_rounding_t rnd,
                         lowp_gemm_stats_t *stats);

/**
 * @brief The same on INT8 tensor cores (Ozaki scheme II's engine): slices of
 * at most 7 bits as int8, cuBLAS int8 x int8 -> int32 GEMMs, with
 * sA + sB + ceil(log2 k) <= 31 so that every int32 partial sum is exact.
 * Bit-identical to lowp_exact_gemm. test_extra_bits (testing only, 0
 * normally) breaks the budget so the exactness check must catch it.
 * @return as lowp_exact_gemm_cuda.
 */
int lowp_exact_gemm_cuda_int8(double *c, const double *a, const double *b, const double *c0,
                              size_t m, size_t n, size_t k, const lowp_format_t *f,
                              const lowp_policy_t *pol, lowp_rounding_t rnd,
                              int test_extra_bits, lowp_gemm_stats_t *stats);

#endif
