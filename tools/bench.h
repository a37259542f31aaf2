/* lowp_bench -- the named benchmarks behind `lowp bench NAME` (tools/ only) */
#ifndef LOWP_BENCH_H
#define LOWP_BENCH_H

#include <stddef.h>
#include <stdint.h>

/*
 * Each benchmark is int fn(int argc, char **argv) with argv[0] = its name
 * and its own options after it. It validates before it times (docs/style.md B8),
 * prints a one-line-per-case table, and returns an exit status:
 * LOWP_EXIT_OK, LOWP_EXIT_CHECK (validation failed, or --strict and a
 * target missed) or LOWP_EXIT_USAGE (bad option; message on stderr).
 */

/** @brief `lowp bench round`: binary32 arrays to every fast-path format (fp16, bf16,
    tf32, the fp8, fnuz and fp6/fp4 formats; rne unless --rnd), to codes and values:
    lowp's fast path vs the reference loop vs the CPU's own instructions. */
int lowp_bench_round(int argc, char **argv);

/** @brief `lowp bench exact`: exact accumulators (tools/bench_exact.c). */
int lowp_bench_exact(int argc, char **argv);

/** @brief `lowp bench check`: the measurement pipeline on a 1024^3 fp16 GEMM
    and a spec of 50 small checks (tools/bench_check.c). */
int lowp_bench_check(int argc, char **argv);

/** @brief `lowp bench gemm`: the emulated accumulation kernels, reference vs
    fast path vs OpenBLAS vs exact, ns per multiply-add (tools/bench_gemm.c). */
int lowp_bench_gemm(int argc, char **argv);

/** @brief The block-scaled rows of `lowp bench gemm --tables tc`
    (tools/bench_gemm_bs.c); returns 1 when a validation failed. */
int lowp__bench_gemm_bs(size_t N, size_t rows, int reps, uint64_t seed, const char *isa);

/** @brief `lowp bench fpx`: exception tracing beside the same path untraced
    (tools/bench_fpx.c). */
int lowp_bench_fpx(int argc, char **argv);

/** @brief Seconds of the process's CPU time (wall = 0: other processes do
    not inflate it) or of the monotonic clock (wall = 1). */
double lowp_bench_clock_s(int wall);

/** @brief Best of reps single-thread OpenBLAS N^3 GEMMs on a, b (N x N):
    dgemm (dbl = 1) or sgemm on their binary32 roundings; seconds. */
double lowp_bench_time_blas(int dbl, const double *a, const double *b, size_t N, int reps);

/**
 * @brief --isa VAL of `lowp bench NAME`: the name of an instruction set this
 * CPU runs (lib/cpu.h; need_fma: FMA as well). An unknown name, or one this
 * CPU cannot run, ends the command with exit status 2 and one line.
 */
const char *lowp_bench_parse_isa(const char *cmd, const char *val, int need_fma);

#endif
