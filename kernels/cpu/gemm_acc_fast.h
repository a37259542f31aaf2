/* lowp_gemm_acc_fast -- vectorised twin of lowp_gemm_acc_scalar, same bits */
#ifndef LOWP_GEMM_ACC_FAST_H
#define LOWP_GEMM_ACC_FAST_H

#include <stddef.h>

#include "cpu/gemm_acc.h"

/** @brief Which fast kernel serves a configuration. */
typedef enum {
  LOWP_ACCFAST_NONE = 0, /**< none: the scalar reference runs */
  LOWP_ACCFAST_FMA64,    /**< fp64 accumulator, rne: fma() / a*b + s in binary64 */
  LOWP_ACCFAST_FMA32,    /**< fp32 accumulator, fp32 inputs: fmaf() / a*b + s in binary32
                              (rne; rtz/rup/rdn with AVX-512's rounding in the instruction) */
  LOWP_ACCFAST_RO64,     /**< any IEEE-like format p <= 51, rne/rtz/rup/rdn, fp32 inputs:
                              binary64 TwoSum, round to odd, one rounding to acc */
  LOWP_ACCFAST_RO32      /**< the same on binary32 lanes: acc (and prod) p <= 22,
                              quantum >= 2^-147, emax <= min(127, 102 + p) or bf16;
                              inputs zero or of <= 12 significant bits in [2^-60, 2^50]
                              (fp16, bf16, fp8 data). On AVX-512 (gcc builds) the odd
                              rounding comes from two fused multiply-adds rounded down
                              and up, or one rounding in the mode suffices (directed
                              modes; rne with products rounded inside acc, p <= 11),
                              and fp16 is rounded by vcvtps2ph; on AVX2 (with F16C)
                              8 lanes of intrinsics, the sum rounded to odd from
                              TwoSum, fp16 by vcvtps2ph, bf16 on the bits */
} lowp_accfast_kind_t;

/**
 * @brief The fast kernel that gives the same bits as lowp_gemm_acc_scalar
 * for this configuration and these inputs, or LOWP_ACCFAST_NONE.
 *
 * Conditions: recursive order; default policy (IEEE overflow, no FTZ/DAZ,
 * no stochastic rounding); acc (and prod, when products are rounded) with
 * subnormals, IEEE inf and NaN, a sign and a zero, 2 <= p <= 51 and an
 * exponent range inside binary64's with room; modes rne, rtz, rup, rdn.
 * FMA32 and RO64 also need every entry of a and b to be a binary32 value
 * (or inf/NaN), so that each product is exact in binary64; RO32 the
 * narrower data above, so that each product is exact in binary32.
 */
lowp_accfast_kind_t lowp_gemm_acc_fast_kind(const double *a, const double *b, size_t m,
                                            size_t n, size_t k,
                                            const lowp_gemm_acc_cfg_t *cfg);

/**
 * @brief C = A B + C as lowp_gemm_acc_scalar computes it, on the fast
 * kernel `kind` (from lowp_gemm_acc_fast_kind). isa = "generic", "avx2",
 * "avx512" or NULL (the best this CPU runs), for tests and benchmarks.
 * OpenMP over column panels; bytes do not depend on the thread count.
 * @return LOWP_OK; LOWP_EINVAL (kind NONE, unknown isa); LOWP_ENOMEM;
 *         LOWP_EUNSUPPORTED (this CPU cannot run that isa).
 */
int lowp_gemm_acc_fast(double *c, const double *a, const double *b, size_t m, size_t n,
                       size_t k, const lowp_gemm_acc_cfg_t *cfg, lowp_accfast_kind_t kind,
                       const char *isa);

/** @brief One dot product on the fast step (scalar), for lowp_dot_acc_ref:
    *y = init + sum x[l incx] w[l incw]; same conditions (with a = x, b = w).
    @return LOWP_OK, or LOWP_EINVAL when no fast kernel applies. */
int lowp_dot_acc_fast(double *y, const double *x, size_t incx, const double *w,
                      size_t incw, size_t n, double init, const lowp_gemm_acc_cfg_t *cfg);

/** @brief The most dots lowp_dot_acc_fast_many takes at once. */
#define LOWP_DOT_FAST_LANES 8

/** @brief y[q] = lowp_dot_acc_fast(x[q], incx, w[q], incw, n, init, cfg) for q < g <= LOWP_DOT_FAST_LANES,
    the same bits, the g dots' steps interleaved (each dot's steps are a serial chain; RO64's on the
    lanes of one vector). isa: as lowp_gemm_acc_fast's (NULL: the best this CPU runs).
    @return LOWP_OK; LOWP_EINVAL when the fast step does not serve every lane (nothing then set);
            LOWP_EUNSUPPORTED for an isa this CPU lacks. */
int lowp_dot_acc_fast_many(double *y, size_t g, const double *const *x, size_t incx, const double *const *w,
                           size_t incw, size_t n, double init, const lowp_gemm_acc_cfg_t *cfg,
                           const char *isa);

/** @brief The compiled copy this CPU runs: "avx512", "avx2" or "generic"
    (static storage). FMA32 serves rtz/rup/rdn only on "avx512" (rounding
    in the instruction); elsewhere those modes take RO64. */
const char *lowp_gemm_acc_fast_isa(void);

#endif
