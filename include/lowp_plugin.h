/* lowp_plugin -- the C ABI through which lowp check measures a user's kernels in a shared library */
#ifndef LOWP_PLUGIN_H
#define LOWP_PLUGIN_H

/**
 * @file lowp_plugin.h
 * @brief Version 1 of the plugin ABI of `lowp check` (installed header).
 *
 * A plugin is a shared library (`.so`) that exports two symbols:
 *
 * @code
 *   #include <lowp_plugin.h>
 *   LOWP_PLUGIN_EXPORT const uint32_t lowp_plugin_abi_version = LOWP_PLUGIN_ABI_VERSION;
 *   LOWP_PLUGIN_EXPORT const lowp_plugin_kernel_t *lowp_plugin_kernels(size_t *count);
 * @endcode
 *
 * lowp loads it with dlopen(RTLD_NOW | RTLD_LOCAL), refuses a library whose
 * version differs from the one it was built with, reads the table (the
 * table function must only return a pointer to static data, the same on
 * every load), and checks every entry: a name, an operation lowp knows,
 * format names lowp knows (as many inputs as the operation has), and a
 * function. No code of the library runs in lowp's own process: loading,
 * constructors and the table run in a child process, and a library whose
 * load crashes, calls exit or hangs is refused with what it did. A spec check names the library and, optionally, the
 * kernel (`"subject": {"plugin": "libmine.so", "kernel": "gemm_f16"}`);
 * without a name, the only entry for the check's operation is used.
 *
 * @par Calls
 * Each call of a kernel runs in a child process that lowp forks for it
 * (which loads the library again), with the tensors in memory shared with
 * lowp, so that a kernel that crashes (SIGSEGV, abort), is killed by a
 * signal, calls exit, or hangs (past the time limit: the subject's
 * "timeout" in the spec, else LOWP_PLUGIN_TIMEOUT seconds, default 600)
 * fails its check with a message naming what it did, and lowp goes on with
 * the others. Every process a kernel (or its library's constructor)
 * starts, in any session and at any depth, is killed when the call ends,
 * times out or lowp is interrupted by a terminating signal; none outlives
 * the call (lib/io/spawn.h). A kernel that stops itself (SIGSTOP) is killed
 * and reported at once. Its stdout and stderr are captured (a failure shows their
 * last bytes), never mixed into lowp's output. It leaves through _exit:
 * an exit() in a kernel runs none of lowp's exit handlers (nor
 * MPI_Finalize under mpirun).
 * Every tensor is followed by an inaccessible guard page, its end at the
 * guard (to the 64-byte alignment), and the inputs are mapped read-only:
 * a kernel that writes past (or before) an output, or into an input,
 * fails its check, with what it wrote where. The child is a fork of a process that
 * may have run OpenMP threads: a kernel must not use OpenMP (GNU libgomp
 * is not fork-safe) nor rely on other threads of lowp. A kernel may use
 * its own threads (pthreads) and must be deterministic: lowp may call it
 * twice on the same inputs and compares verdicts across runs.
 *
 * @par Tensors
 * Dense, row-major, C order, no padding, aligned to at least 64 bytes.
 * Inputs are read-only; outputs are to be filled completely. Each tensor
 * is stored in its format's natural container:
 *   - fp64: double;  fp32 (and tf32, an fp32 value): float;
 *   - formats of 9 to 16 bits (fp16, bf16): uint16_t bit patterns;
 *   - formats of up to 8 bits (e4m3, e5m2, ...): uint8_t bit patterns;
 *   - cross-entropy targets: int64_t class indices.
 * Shapes follow lowp's operations (lib/check/op.h of lowp), with
 * rows = batch * m:
 *   cast, exp, log, tanh, gelu: x (rows, n) -> y (rows, n)
 *   sum: x (rows, n) -> y (rows);  dot: x, w (batch, k) -> y (batch)
 *   gemv: A (batch, m, k), x (batch, k) -> y (batch, m)
 *   gemm: A (batch, m, k), B (batch, k, n) -> C (batch, m, n)
 *   softmax, logsoftmax: x (rows, n) -> y (rows, n);  logsumexp: -> y (rows)
 *   layernorm: x (rows, n) -> y (rows, n), mean (rows), var (rows) (population)
 *   rmsnorm: x (rows, n) -> y (rows, n)
 *   xent: logits (rows, n), target (rows) -> loss (rows), or (1) if
 *         reduction_mean
 *
 * The header is plain C99 and can be included from C++.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @brief The ABI version this header describes. */
#define LOWP_PLUGIN_ABI_VERSION 1u

/** @brief Marks the two exported symbols (default visibility). */
#if defined(__GNUC__)
#define LOWP_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define LOWP_PLUGIN_EXPORT
#endif

/** @brief Sizes and parameters of one call. Unused sizes are 1. */
typedef struct {
  size_t batch, m, n, k;
  double eps;          /**< layernorm, rmsnorm */
  int reduction_mean;  /**< xent: 1 mean, 0 per row */
} lowp_plugin_dims_t;

/**
 * @brief A kernel: fill out[j] from in[i] (containers as above).
 * @return 0 on success; any other value is reported as the kernel's error.
 */
typedef int (*lowp_plugin_fn)(void *const *out, const void *const *in,
                              const lowp_plugin_dims_t *dims);

/** @brief One entry of a plugin's table. */
typedef struct {
  const char *name;   /**< kernel name, unique in the table */
  const char *op;     /**< lowp operation: "gemm", "softmax", ... */
  const char *in[4];  /**< input format names ("fp16", "bf16", ...); the
                           xent target's entry is "i64" */
  const char *out;    /**< output format name (every output) */
  lowp_plugin_fn fn;  /**< the kernel */
} lowp_plugin_kernel_t;

/** @brief Exported: must equal LOWP_PLUGIN_ABI_VERSION of the lowp that loads it. */
extern LOWP_PLUGIN_EXPORT const uint32_t lowp_plugin_abi_version;

/** @brief Exported: the table (static data) and its length in *count. */
LOWP_PLUGIN_EXPORT const lowp_plugin_kernel_t *lowp_plugin_kernels(size_t *count);

#ifdef __cplusplus
}
#endif

#endif
