/* lowp_kcfg -- the parameters of a plain CPU kernel: accumulation, products, compute format, variant */
#ifndef LOWP_KCFG_H
#define LOWP_KCFG_H

/*
 * Every plain CPU kernel of the registry (kernels/registry.h) takes its
 * parameters as this one struct, parsed from "key=value,..." by
 * kernels/registry_subject.c. A kernel reads only the fields its entry lists:
 *
 *   acc, order, round  sums of products (sum_acc, dot_acc, gemv_acc,
 *                      gemm_acc): accumulation format, order and rounding
 *   prod               products rounded to a format first (recursive order),
 *                      or exact (an FMA: the default)
 *   compute            nonlinear kernels (softmax, norms, elementwise):
 *                      every operation rounded to this format (rne)
 *   acc (softmax_naive, softmax_stable, layernorm): the format the row's
 *                      reductions accumulate in (default: compute itself).
 *                      softmax: s = sum e_i, each addition rounded to acc,
 *                      then y_i = F(e_i / s) (the exps and the quotient in
 *                      compute); layernorm: the statistics (the sums, the
 *                      mean, the deviations and squares of the variance
 *                      pass, the variance, var + eps and its square root or
 *                      reciprocal) in acc, the normalisation
 *                      F(F(x_i - mean) / sd) in compute. acc=fp32 with
 *                      compute=fp16|bf16 is how PyTorch accumulates for
 *                      half and bfloat16 tensors (at::acc_type<Half|BFloat16>
 *                      = float, aten/src/ATen/AccumulateType.h; the CUDA
 *                      softmax's sum and epilogue exp(x - max) / sum in
 *                      accscalar_t, aten/src/ATen/native/cuda/SoftMax.cu;
 *                      layer_norm's Welford moments in T_ACC = float,
 *                      aten/src/ATen/native/cuda/layer_norm_kernel.cu and
 *                      cpu/moments_utils.h); acc must have at most 25 bits
 *                      (or equal compute), so that a quotient of a compute
 *                      value by an acc value rounded in binary64 and then to
 *                      compute is correctly rounded (p_F + p_acc <= 51: the
 *                      quotient is then never within 2^-53 of a midpoint of
 *                      F without being one)
 *   exp                softmax_naive, softmax_stable: the exp model, libm
 *                      (binary64 libm exp rounded to compute: the default)
 *                      or cr (exp correctly rounded to compute, lib/exact)
 *   variant            layernorm: onepass | twopass | welford
 *   scale              layernorm: div (divide by F(sqrt(F(var + eps))): the
 *                      default) or rsqrt (multiply by F(1/sqrt(F(var + eps))),
 *                      1/sqrt in binary64 rounded once: PyTorch's rstd)
 *   clamp              layernorm: on (the one-pass variance clamped at 0, as
 *                      real kernels do: the default) or off (the formula's
 *                      own value, negative under cancellation; y is then NaN
 *                      where var + eps < 0)
 *   model, promote     gemm_tc: tensor-core model spec and fp8 promotion
 *   threads            gemm_sgemm, gemm_dgemm: OpenBLAS's threads for the call
 *   lanes              gemm_lanes: the SIMD lanes of its dot product (a power
 *                      of two, 1..1024; default 32)
 *   round (cast)       the rounding mode of the cast
 *   comm, acc, order   allreduce: communication format, accumulation
 *                      format, order=ring|tree (lib/amp/allreduce.h)
 *   device             entries with a GPU kernel (kernels/gpu/gpu_kernels.h):
 *                      auto (the GPU when built and present, else the CPU
 *                      twin), cpu, gpu (LOWP_EUNSUPPORTED without one)
 *
 * The output of every kernel is rounded (rne) to the problem's output
 * format at the end, as a kernel's store does.
 *
 * A compute format has p <= 25 bits or is fp64 (kernels/registry_subject.c refuses
 * others): an operation done in binary64 and then rounded to F is then the
 * operation correctly rounded to F (+ - * / sqrt: double rounding is
 * innocuous when 53 >= 2p + 2; S. A. Figueroa, "When is double rounding
 * innocuous?", ACM SIGNUM Newsletter 30(3), 1995), so lowp_kcfg_r(a + b, F)
 * is the F addition a kernel performs.
 */

#include "check/op.h"
#include "format/format.h"
#include "model/accum.h"

/** @brief Layer-norm variants (how mean and variance are accumulated). */
typedef enum {
  LOWP_LN_TWOPASS = 0, /**< mean, then sum of (x - mean)^2 */
  LOWP_LN_ONEPASS = 1, /**< sum and sum of squares together: var = Q/n - mean^2 */
  LOWP_LN_WELFORD = 2  /**< Welford's running update (Higham 2002, sec. 1.9) */
} lowp_ln_variant_t;

/** @brief Where an entry with a GPU kernel runs (device=). */
#define LOWP_DEVICE_AUTO 0
#define LOWP_DEVICE_CPU 1
#define LOWP_DEVICE_GPU 2

/** @brief A kernel's parameters (see the top of this file). */
typedef struct {
  lowp_accum_t acc;       /**< acc=, order=, round= (fma = products exact) */
  int have_prod;          /**< prod=FORMAT given */
  lowp_format_t prod;     /**< product format (recursive order only) */
  lowp_format_t compute;  /**< compute= (default fp32) */
  lowp_format_t racc;     /**< softmax, layernorm: acc= (default: compute), the reductions' format */
  lowp_rounding_t rnd;    /**< cast: round= (default rne) */
  lowp_ln_variant_t variant;
  char model[200];        /**< gemm_tc: model spec (default "h100") */
  long promote;           /**< gemm_tc: -1 the model's own, 0 off, N */
  int device;             /**< LOWP_DEVICE_AUTO / _CPU / _GPU */
  int exp_cr;             /**< exp=cr: exp correctly rounded to compute (0: libm) */
  lowp_format_t comm;     /**< allreduce: comm= (default fp32), the workers' cast */
  int reduce;             /**< allreduce: order= 0 ring, 1 tree */
  int ln_rsqrt;           /**< layernorm scale=rsqrt: multiply by F(1/sqrt(.)) (0: divide) */
  int ln_raw;             /**< layernorm clamp=off: one-pass variance not clamped at 0 */
  int threads;            /**< gemm_sgemm, gemm_dgemm: OpenBLAS threads= (default 1) */
  int lanes;              /**< gemm_lanes: lanes= (default 32) */
} lowp_kcfg_t;

/** @brief A plain CPU kernel: the pipeline's subject signature, minus the
    subject (lib/check/subject.h). Returns lowp_status_t; err names a
    problem the kernel cannot take (LOWP_EUNSUPPORTED). */
typedef int (*lowp_kernel_run_fn)(const lowp_kcfg_t *c, double *const *out,
                                  const double *const *in, const lowp_problem_t *p,
                                  char *err, size_t errlen);

/** @brief Round v once to f (rne): the compute step of every nonlinear kernel. */
static inline double lowp_kcfg_r(double v, const lowp_format_t *f) {
  double y;
  (void)lowp_round_f64(&y, v, f, NULL, LOWP_RND_NE);
  return y;
}

#endif
