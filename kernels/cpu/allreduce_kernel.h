/* lowp_kernel_allreduce -- the gradient all-reduce of lib/amp/allreduce as a registry kernel (op sum) */
#ifndef LOWP_KERNEL_ALLREDUCE_H
#define LOWP_KERNEL_ALLREDUCE_H

#include "cpu/kcfg.h"

/**
 * @brief Each row of x (batch, m, n) holds one gradient element as the n =
 * W workers hold it (fp32 values); y = its all-reduced sum (lib/amp/
 * allreduce.h): every worker's value cast to comm=, summed with each partial
 * sum rounded to acc= in order=ring (NCCL's ring reduce-scatter: element i of
 * the batch * m lies in chunk i / ceil(rows / W)) or order=tree. Rows are the
 * gradient vector, so the ring's chunks follow the row index.
 * (lowp_kernel_run_fn)
 */
int lowp_kernel_allreduce(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                          const lowp_problem_t *p, char *err, size_t errlen);

#endif
