/* amp_cpu -- amp-speedup's CPU measurement helpers: plain fp32 row kernels, a STREAM triad, medians */
#ifndef LOWP_AMP_CPU_H
#define LOWP_AMP_CPU_H

/*
 * The forward softmax, layer norm and GELU of the layer as a framework's
 * CPU kernels compute them: fp32 storage, fp32 arithmetic (expf, erff,
 * sqrtf of the C library), one pass per reduction, OpenMP over rows. Not
 * lowp's emulating kernels (kernels/cpu/softmax_kernel.c and friends), which
 * round every operation through binary64 to measure errors and run two
 * orders of magnitude below the memory roof: a timing of those says nothing
 * about the layer's speed. No fast math (docs/style.md): the loops are what
 * the compiler makes of plain C at -O2/-O3.
 */

#include <stddef.h>

/** @brief y = softmax(x) per row (max subtracted), rows x cols, fp32. */
void lowp_ampc_softmax(float *y, const float *x, size_t rows, size_t cols);

/** @brief y = (x - mean) / sqrt(var + eps) per row (two passes over the
    row for mean and population variance); mean and rstd saved per row. */
void lowp_ampc_layernorm(float *y, float *mean, float *rstd, const float *x, size_t rows, size_t cols,
                         float eps);

/** @brief y = x Phi(x) = x (1 + erf(x / sqrt 2)) / 2, n values (exact GELU). */
void lowp_ampc_gelu(float *y, const float *x, size_t n);

/**
 * @brief STREAM triad a = b + 3 c over n floats per array (McCalpin,
 * "Memory bandwidth and machine balance in current high performance
 * computers", IEEE TCCA newsletter, 1995): 3 n 4 bytes per pass, the
 * write-allocate traffic not counted, as STREAM does. OpenMP threads.
 */
typedef struct {
  float *a, *b, *c;
  size_t n;
} lowp_ampc_triad_t;

/** @brief Allocate and fill the three arrays; 0, or -1 out of memory (t freed). */
int lowp_ampc_triad_new(lowp_ampc_triad_t *t, size_t n);

/** @brief The best of reps passes in bytes/s (NAN if the result is wrong). */
double lowp_ampc_triad_run(lowp_ampc_triad_t *t, int reps);

/** @brief Free the arrays (a zeroed or freed t is harmless). */
void lowp_ampc_triad_free(lowp_ampc_triad_t *t);

/**
 * @brief The arithmetic rates of one core's bf16 and fp32 vector units and
 * their ratio: register-resident chains of VDPBF16PS (AVX512_BF16: 16 lanes
 * x 2 bf16 products summed into fp32, 64 flops) against VFMADD231PS (16
 * lanes, 32 flops), 12 independent accumulators each (more than latency x
 * ports on current cores), best of reps. Validated: every accumulator must
 * hold its exact sum (1 x 2^-20 added 2^16 times, a power of two: no
 * rounding), else NAN. Not a GEMM and not a layer step: what the units can
 * do where a library used them (this OpenBLAS may have no bf16 GEMM).
 * @param has_bf16 the CPU has AVX512_BF16 (CPUID, lib/cpu.h); 0: nothing run
 * @param[out] gf32, gf16 GFLOP/s of each chain (NAN when not measured)
 * @return gf16 / gf32, or NAN: no AVX512_BF16, not an x86-64 build, or a
 *   chain that failed its check
 */
double lowp_ampc_bf16_rate_ratio(int has_bf16, int reps, double *gf32, double *gf16);

/** @brief Median of v[0..n) (sorts v; the mean of the middle two for even n). */
double lowp_ampc_median(double *v, size_t n);

#endif
