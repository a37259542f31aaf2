/* lowp_registry -- the kernels lowp can measure: name -> operation, parameters, CPU kernel, GPU kernel */
#ifndef LOWP_REGISTRY_H
#define LOWP_REGISTRY_H

/*
 * One table (docs/style.md B7) of every kernel lowp can point the measurement
 * pipeline at (lib/check/pipeline.h). An entry names its operation
 * (lib/check/op.h), the parameters it reads (kernels/cpu/kcfg.h; parsed from
 * "key=value,..." by kernels/registry_subject.c), its plain CPU kernel and, where one
 * is written and built, its GPU kernel. lowp_kernel_subject_open
 * (lib/check/subject.h, kernels/registry_subject.c) turns an entry and its
 * parameters into a pipeline subject.
 */

#include <stddef.h>

#include "check/op.h"
#include "cpu/kcfg.h"

/**
 * @brief A GEMM-shaped CPU twin with its own configuration (the historical
 * interface of gemm_acc / gemm_tc, used by experiments): C (m x n) = A (m x
 * k) B (k x n) + C, row-major binary64 arrays. Returns lowp_status_t.
 */
typedef int (*lowp_gemm_fn)(double *c, const double *a, const double *b,
                            size_t m, size_t n, size_t k, const void *cfg);

/** @brief One entry of the registry. */
typedef struct {
  const char *name;        /**< e.g. "softmax_stable" */
  lowp_op_id_t op;         /**< the operation it computes */
  const char *keys;        /**< parameters it reads, comma-separated ("" none) */
  const char *defaults;    /**< its defaults, "acc=fp32,order=recursive" */
  const char *doc;         /**< one line */
  lowp_kernel_run_fn run;  /**< plain CPU kernel; never NULL */
  lowp_gemm_fn gemm;       /**< GEMM twin with its own cfg (gemm_acc, gemm_tc), or NULL */
  int gpu;                 /**< 1: a GPU kernel exists in kernels/cuda (used with a device) */
} lowp_kernel_t;

/** @brief The entry called name, or NULL. */
const lowp_kernel_t *lowp_kernel_find(const char *name);
/** @brief The i-th entry, or NULL past the end. */
const lowp_kernel_t *lowp_kernel_at(size_t i);

#endif
