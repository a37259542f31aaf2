/* lowp_exact -- correctly rounded references: sums, products, softmax, functions */
#ifndef LOWP_EXACT_H
#define LOWP_EXACT_H

/*
 * Every function here returns the exact mathematical result rounded ONCE to
 * a lowp format f in mode rnd (policy pol, NULL for the IEEE defaults).
 * Inputs are binary64 values (every lowp format's values are binary64
 * values); outputs are binary64 values of f.
 *
 * Two families:
 *  - sums of products (sum, dot, gemv, gemm): a fast exact accumulator
 *    (exact/acc.h), OpenMP-parallel over output elements; each output is an
 *    independent exact sum, so results do not depend on the thread count.
 *    The *_mpfr variants compute the same from MPFR alone (mpfr_sum) and are
 *    the oracle the fast path is tested against.
 *  - everything else (softmax, log-softmax, logsumexp, cross-entropy, mean,
 *    variance, exp, log, tanh, GELU): MPFR, see each function for the
 *    precision and why it suffices.
 *
 * Stochastic rounding (LOWP_RND_SR) draws index pol->sr_offset + i for
 * output element i (row-major), as lowp_round_array_f64 does.
 *
 * Common return codes: LOWP_OK; LOWP_EINVAL (NULL pointer where data is
 * needed, n == 0 where a result needs at least one element); LOWP_EROUND
 * (invalid mode); LOWP_EFORMAT (invalid format); LOWP_ENOMEM (scratch
 * allocation failed or m*n*k overflows size_t); LOWP_ERANGE (interval
 * loop could not decide, see lowp_exact_softmax).
 */

#include <stddef.h>
#include <stdint.h>

#include <mpfr.h>

#include "format/format.h"

/* ------------------------------------------- sums of products (fast path) */

/**
 * @brief y = round(sum_i x[i]).
 * @param[out] y one value of f
 * @param[in]  x n binary64 values (n may be 0: the empty sum is +0)
 * @return LOWP_OK, LOWP_EINVAL, LOWP_EROUND, LOWP_EFORMAT.
 */
int lowp_exact_sum(double *y, const double *x, size_t n, const lowp_format_t *f,
                   const lowp_policy_t *pol, lowp_rounding_t rnd);

/**
 * @brief y = round(sum_i x[i*incx] * w[i*incw]); the products are exact.
 * @return as lowp_exact_sum.
 */
int lowp_exact_dot(double *y, const double *x, size_t incx, const double *w,
                   size_t incw, size_t n, const lowp_format_t *f,
                   const lowp_policy_t *pol, lowp_rounding_t rnd);

/**
 * @brief y = round(A x + y0), A m x n row-major; y0 may be NULL (zero).
 * y may alias y0; y must not alias A or x.
 * @return as lowp_exact_sum, or LOWP_ENOMEM.
 */
int lowp_exact_gemv(double *y, const double *a, const double *x, const double *y0,
                    size_t m, size_t n, const lowp_format_t *f,
                    const lowp_policy_t *pol, lowp_rounding_t rnd);

/**
 * @brief C = round(A B + C0): A m x k, B k x n, C0 and C m x n, row-major.
 *
 * Each of the m*n outputs is rounded once from its exact value. C0 may be
 * NULL (zero) and may alias C; C must not alias A or B. k may be 0
 * (C = round(C0)).
 *
 * Method: the sliced (Ozaki) path on exact OpenBLAS DGEMMs where it is
 * cheaper (see lowp_exact_gemm_ex, docs/exact-gemm.md), the accumulator
 * below for the rest; both exact, so the result is the same either way.
 *
 * Accumulator speed: when every entry of A and B is zero or has at most 26 significant
 * bits and a magnitude in [2^-400, 2^400] (all fp32/tf32/fp16/bf16/fp8 data),
 * each product is exact in binary64 and is binned by its exponent into
 * 64-bit integer counters (at most 1023 additions each before they are
 * flushed into the accumulator). Other data (fp64, NaN, inf) take the
 * general path: 53x53-bit integer products into the accumulator.
 * Uses B transposed (k*n doubles of scratch) and OpenMP over rows.
 * @return LOWP_OK, LOWP_EINVAL, LOWP_EROUND, LOWP_EFORMAT, LOWP_ENOMEM.
 */
int lowp_exact_gemm(double *c, const double *a, const double *b, const double *c0,
                    size_t m, size_t n, size_t k, const lowp_format_t *f,
                    const lowp_policy_t *pol, lowp_rounding_t rnd);

/** @brief Which method lowp_exact_gemm_ex may use (the result is the same). */
typedef enum {
  LOWP_GEMM_AUTO = 0,   /**< cheaper of the two per row/column set (cost model) */
  LOWP_GEMM_ACC = 1,    /**< the accumulator only */
  LOWP_GEMM_SLICED = 2  /**< sliced DGEMMs for every finite row/column, whatever they cost */
} lowp_gemm_method_t;

/** @brief Options of lowp_exact_gemm_ex; all-zero (or NULL) = defaults. */
typedef struct {
  lowp_gemm_method_t method;
  /** Called from the calling thread with the fraction of work done (0..1),
      at least at the end; NULL: none. lib/ never prints: tools draw it. */
  void (*progress)(void *ctx, double done);
  void *progress_ctx;
  /** Testing only: add this many bits to the slice width s, breaking the
      2s + ceil(log2 k) <= 53 budget; the run-time checksum must catch it. */
  int test_extra_bits;
  /** The DGEMM the sliced path calls, C = A B, row-major, dense (lda = k,
      ldb = ldc = n); returns a lowp_status_t (nonzero aborts the product with
      it). NULL: OpenBLAS cblas_dgemm. kernels/cuda/ozaki.cu passes cuBLAS. Any
      IEEE binary64 DGEMM is exact on slices, whatever its order. Called for
      the slice pairs multiplied densely only: the choice of slices, of the
      outputs sliced and of the sparse products is the same with or without
      it (the same lowp_gemm_stats_t; dgemm_calls then counts its calls). */
  int (*dgemm)(void *ctx, size_t m, size_t n, size_t k, const double *a, const double *b,
               double *c);
  void *dgemm_ctx;
  /** The GEMM engine the slices run on (Ozaki scheme II: integer tensor
      cores). engine_bits: the integer bits its accumulator holds exactly, so
      that sA + sB + ceil(log2 k) <= engine_bits (0 = 53, binary64 DGEMM; 31
      for an int32 accumulator). slice_bits_max: the most bits a slice may
      have (0 = no cap; 7 for int8 inputs, slices in [-127, 127]). The hook
      still receives and returns integer-valued doubles; it converts them
      (kernels/cuda/ozaki_int8.cu: cuBLAS int8 x int8 -> int32). */
  int engine_bits;
  int slice_bits_max;
  /** Testing only: how the sliced path multiplies slices. 0: the cheaper of
      a DGEMM and the sparse kernels (from the slices' nonzero counts);
      -1: DGEMM only; 1: every product by the sparse-left kernel; 2: every
      product by the sparse-right kernel. The result is the same bits. */
  int test_sparse;
  /** The truncated sliced path (docs/exact-gemm.md, "Truncated slices"):
      only the slice pairs t + u < D are multiplied, the rest is bounded,
      and an output whose bound leaves its rounding in doubt goes to the
      accumulator. 0: when the cost model prefers it; -1: never; D >= 1
      (testing): always, with D diagonals, equal widths, every finite row
      and column sliced. Never with an addend C0 or stochastic rounding.
      The result is the same bits. */
  int test_trunc;
} lowp_gemm_opts_t;

/** @brief What lowp_exact_gemm_ex did. */
typedef struct {
  int slices_a, slices_b;   /**< slices per row of A / column of B (0: no sliced path) */
  int slice_bits_a, slice_bits_b; /**< bits per slice of A / of B (sA + sB + ceil(log2 k) <= 53) */
  size_t dgemm_calls;       /**< cblas_dgemm calls made */
  size_t sliced_outputs;    /**< outputs taken from the sliced path */
  size_t fallback_outputs;  /**< outputs computed by the accumulator */
  size_t check_failed_rows; /**< rows whose exactness checksum failed (then redone
                                 by the accumulator; 0 unless the budget is broken) */
  size_t sparse_products;   /**< slice products computed from the nonzeros of a
                                 sparse slice instead of by a DGEMM (not counted
                                 in dgemm_calls) */
  int trunc_diagonals;      /**< truncated path: diagonals t + u < D kept (0: not used) */
  size_t trunc_decided;     /**< outputs the truncated path rounded from its bound
                                 (a part was dropped; counted in sliced_outputs) */
  size_t trunc_undecided;   /**< outputs whose bound left the rounding in doubt, sent
                                 to the accumulator (counted in fallback_outputs) */
} lowp_gemm_stats_t;

/**
 * @brief lowp_exact_gemm with a choice of method, progress and statistics.
 *
 * The sliced (Ozaki) path: each row of A and column of B is split into
 * slices of at most s bits aligned to a common exponent, 2s + ceil(log2 k)
 * <= 53, so each slice-pair product is an exact DGEMM (OpenBLAS) in any
 * summation order; the partial products are summed exactly in the
 * accumulator and rounded once. Rows/columns with NaN/inf or too wide an
 * exponent spread go to the accumulator. See docs/exact-gemm.md.
 * Same arguments and results as lowp_exact_gemm; opt and stats may be NULL.
 */
int lowp_exact_gemm_ex(double *c, const double *a, const double *b, const double *c0,
                       size_t m, size_t n, size_t k, const lowp_format_t *f,
                       const lowp_policy_t *pol, lowp_rounding_t rnd,
                       const lowp_gemm_opts_t *opt, lowp_gemm_stats_t *stats);

/* ------------------------------------------------- MPFR oracles (slow) */

/**
 * @brief The exact value of sum_i x[i]*w[i*incw] (w NULL: sum_i x[i]) as an
 * MPFR number rounded to odd at 128 bits ("ro128"). Rounding to odd at
 * P >= p + 2 bits and then to p bits in any mode equals rounding the exact
 * value once (Boldo & Melquiond, IEEE TC 57(4), 2008), and lowp_round_mpfr
 * only reads the top 64 bits and a sticky bit, so ro128 feeds every lowp
 * format and mode, stochastic rounding included, exactly as the exact value
 * would. Products are formed with mpfr_mul at 106 bits (exact for binary64
 * factors); mpfr_sum then rounds their sum once (RNDZ + its ternary ->
 * round to odd). The zero sign follows mpfr_sum in the mode mapped from
 * rnd (RNDD for LOWP_RND_DN, RNDN otherwise). out must be initialised.
 * @return LOWP_OK or LOWP_ENOMEM.
 */
int lowp_exact_dot_mpfr_raw(mpfr_ptr out, const double *x, const double *w,
                            size_t incw, size_t n, lowp_rounding_t rnd);

/** @brief As lowp_exact_sum, computed with MPFR only (the oracle). */
int lowp_exact_sum_mpfr(double *y, const double *x, size_t n, const lowp_format_t *f,
                        const lowp_policy_t *pol, lowp_rounding_t rnd);
/** @brief As lowp_exact_dot (unit strides), computed with MPFR only. */
int lowp_exact_dot_mpfr(double *y, const double *x, const double *w, size_t n,
                        const lowp_format_t *f, const lowp_policy_t *pol,
                        lowp_rounding_t rnd);
/** @brief As lowp_exact_gemm, computed with MPFR only (serial; for tests). */
int lowp_exact_gemm_mpfr(double *c, const double *a, const double *b,
                         const double *c0, size_t m, size_t n, size_t k,
                         const lowp_format_t *f, const lowp_policy_t *pol,
                         lowp_rounding_t rnd);

/**
 * @brief The plainest exact MPFR GEMM, the baseline `lowp bench exact`
 * times: operands at pin bits (their format's precision, 1..53), products
 * at 2 pin bits, one accumulator as wide as these data need, then one
 * rounding of each output of A B to f (no addend, no policy). Serial.
 * Same results as lowp_exact_gemm (finite data only).
 * @return LOWP_OK; LOWP_EINVAL (NULL data, pin out of range, NaN or inf
 *         entries); LOWP_EFORMAT; LOWP_EROUND; LOWP_ENOMEM.
 */
int lowp_exact_gemm_plain_mpfr(double *c, const double *a, const double *b, size_t m,
                               size_t n, size_t k, int pin, const lowp_format_t *f,
                               lowp_rounding_t rnd);

/* ----------------------------------------------- two-operand operations */

/**
 * @brief round(a + b) and round(a * b) to f, correctly, once (no double
 * rounding through binary64), for any binary64 a, b. The building blocks of
 * kernel twins that accumulate in a chosen format.
 * @param index stochastic-rounding element index
 * @return the ternary value (as lowp_round_f64).
 */
int lowp_exact_add2(double *y, double a, double b, const lowp_format_t *f,
                    const lowp_policy_t *pol, lowp_rounding_t rnd, uint64_t index);
int lowp_exact_mul2(double *y, double a, double b, const lowp_format_t *f,
                    const lowp_policy_t *pol, lowp_rounding_t rnd, uint64_t index);

/* ------------------------------------------ reductions and functions */

/**
 * @brief softmax: y[i] = round(exp(x[i]) / sum_j exp(x[j])), i < n.
 *
 * Method (a Ziv loop with an interval test instead of mpfr_can_round): at
 * working precision w = 128, 256, ... every operation is done twice, rounded
 * down and up (x[j] - max is exact at any w large enough, exp and division
 * are monotone), giving [lo, hi] around the exact value with flags saying
 * whether each end is strict. When every point of that interval rounds to
 * the same value at 66 bits rounding to odd, that value is the ro66 of the
 * exact result, which rounds to every format with p <= 64 as the exact value
 * does (66 >= 64 + 2, Boldo & Melquiond 2008). The exact result is rational
 * only when all x are equal (1/n; Lindemann-Weierstrass), where the interval
 * collapses to a point. Terms whose exp underflows MPFR's exponent range are
 * kept as strict (0, tiny] intervals. Gives up with LOWP_ERANGE after
 * w = 2^16 (not seen in tests; possible only for pathological inputs).
 * y may alias x. Any NaN, or +inf (inf - inf under the shift), makes every
 * output NaN; -inf entries are exp(-inf) = 0 exactly.
 * @return LOWP_OK, LOWP_EINVAL, LOWP_EROUND, LOWP_EFORMAT, LOWP_ERANGE.
 */
int lowp_exact_softmax(double *y, const double *x, size_t n, const lowp_format_t *f,
                       const lowp_policy_t *pol, lowp_rounding_t rnd);

/** @brief log-softmax: y[i] = round(x[i] - logsumexp(x)); method as softmax.
    y may alias x. @return as lowp_exact_softmax. */
int lowp_exact_logsoftmax(double *y, const double *x, size_t n,
                          const lowp_format_t *f, const lowp_policy_t *pol,
                          lowp_rounding_t rnd);

/** @brief y = round(log(sum_i exp(x[i]))); method as softmax.
    @return as lowp_exact_softmax. */
int lowp_exact_logsumexp(double *y, const double *x, size_t n,
                         const lowp_format_t *f, const lowp_policy_t *pol,
                         lowp_rounding_t rnd);

/** @brief Cross-entropy of logits x against class target:
    y = round(logsumexp(x) - x[target]) = -log softmax(x)[target].
    @return as lowp_exact_softmax; LOWP_EINVAL if target >= n. */
int lowp_exact_xent(double *y, const double *x, size_t n, size_t target,
                    const lowp_format_t *f, const lowp_policy_t *pol,
                    lowp_rounding_t rnd);

/**
 * @brief Mean and variance (layer-norm statistics):
 * mean = round(S/n), var = round((n Q - S^2) / (n (n - ddof))) with
 * S = sum x, Q = sum x^2. S, Q and n Q - S^2 are formed exactly in MPFR
 * (precision set from the data's exponent span), and each result is one
 * correctly rounded division (mpfr_div, RNDZ + ternary -> round to odd at
 * 66 bits), so no loop is needed. mean or var may be NULL.
 * @param ddof 0 for the population variance (layer norm), 1 for the sample
 * @return LOWP_OK, LOWP_EINVAL (n <= ddof), LOWP_EROUND, LOWP_EFORMAT,
 *         LOWP_ENOMEM.
 */
int lowp_exact_meanvar(double *mean, double *var, const double *x, size_t n,
                       unsigned ddof, const lowp_format_t *f,
                       const lowp_policy_t *pol, lowp_rounding_t rnd);

/**
 * @brief Layer norm of one row (lib/exact/norm.c): mean = round(S/n), var =
 * round(population variance), y[i] = round((x[i] - mean) / sqrt(var + eps))
 * with the exact mean and variance, each output rounded once from its exact
 * value (exact sums, then an interval loop for the square root; see
 * norm.c). y, mean or var may be NULL. eps >= 0, finite.
 * Special values: NaN in -> NaN out; an infinity -> mean +-inf (NaN if both
 * signs), var and y NaN; var + eps = 0 -> y NaN (0/0).
 * @return LOWP_OK; LOWP_EINVAL (n = 0, eps < 0 or not finite); LOWP_EFORMAT;
 *         LOWP_EROUND; LOWP_ENOMEM; LOWP_ERANGE (the loop did not decide).
 */
int lowp_exact_layernorm(double *y, double *mean, double *var, const double *x, size_t n,
                         double eps, const lowp_format_t *f, const lowp_policy_t *pol,
                         lowp_rounding_t rnd);

/** @brief RMS norm of one row: y[i] = round(x[i] / sqrt(mean(x^2) + eps)),
    rounded once; specials and returns as lowp_exact_layernorm. */
int lowp_exact_rmsnorm(double *y, const double *x, size_t n, double eps, const lowp_format_t *f,
                       const lowp_policy_t *pol, lowp_rounding_t rnd);

/** @brief Mean cross-entropy of rows x rows of n logits against target[]:
    y = round(mean over rows of (logsumexp(row) - row[target])), rounded
    once. NaN or +inf logit, or a row of -inf -> NaN; a target logit of -inf
    -> +inf. @return as lowp_exact_softmax; LOWP_EINVAL (a target >= n). */
int lowp_exact_xent_mean(double *y, const double *x, size_t rows, size_t n, const size_t *target,
                         const lowp_format_t *f, const lowp_policy_t *pol, lowp_rounding_t rnd);

/** @brief Elementwise functions of the exact operation (the fn enum). */
typedef enum {
  LOWP_FN_EXP = 0,  /**< e^x */
  LOWP_FN_LOG = 1,  /**< natural log; log(-x) = NaN, log(0) = -inf */
  LOWP_FN_TANH = 2, /**< hyperbolic tangent */
  LOWP_FN_GELU = 3  /**< x/2 (1 + erf(x / sqrt 2)), the erf form of GELU */
} lowp_fn_t;

/**
 * @brief y[i] = round(fn(x[i])), i < n. exp, log and tanh are MPFR's
 * correctly rounded functions evaluated once at 66 bits toward zero, their
 * ternary turning that into round-to-odd (enough, as for softmax). GELU is
 * a composition and uses the interval loop of lowp_exact_softmax. y may
 * alias x.
 * @return LOWP_OK, LOWP_EINVAL (bad fn or NULL), LOWP_EROUND, LOWP_EFORMAT,
 *         LOWP_ERANGE.
 */
int lowp_exact_fn(double *y, const double *x, size_t n, lowp_fn_t fn,
                  const lowp_format_t *f, const lowp_policy_t *pol,
                  lowp_rounding_t rnd);

/** @brief "exp", "log", "tanh", "gelu", or NULL for an unknown value. */
const char *lowp_fn_name(lowp_fn_t fn);

#endif
