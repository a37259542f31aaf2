/* lowp_registry -- the kernels lowp can measure: name -> CPU twin, GPU kernel */
#ifndef LOWP_REGISTRY_H
#define LOWP_REGISTRY_H

#include <stddef.h>

/**
 * @brief A GEMM-shaped kernel: C (m x n, row-major, fp32 values held in
 * double) = A (m x k) * B (k x n) + C, inputs already rounded to their
 * format. The opaque cfg carries the kernel's own parameters (formats,
 * model, order). Returns lowp_status_t.
 */
typedef int (*lowp_gemm_fn)(double *c, const double *a, const double *b,
                            size_t m, size_t n, size_t k, const void *cfg);

/** @brief One entry of the registry (STYLE B7: one table). */
typedef struct {
  const char *name;      /**< e.g. "gemm_tc" */
  lowp_gemm_fn cpu;      /**< CPU twin; never NULL */
  lowp_gemm_fn gpu;      /**< GPU kernel; NULL when not built or not written */
  const char *doc;       /**< one line */
} lowp_kernel_t;

/** @brief The entry called name, or NULL. */
const lowp_kernel_t *lowp_kernel_find(const char *name);
/** @brief The i-th entry, or NULL past the end. */
const lowp_kernel_t *lowp_kernel_at(size_t i);

#endif
