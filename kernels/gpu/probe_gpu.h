/* lowp_probe_gpu -- the GPU device of lowp probe: one mma.sync chain per dot */
#ifndef LOWP_PROBE_GPU_H
#define LOWP_PROBE_GPU_H

#include <stddef.h>

/*
 * The device of lib/model/probe.h on a real GPU: d = sum a_i b_i + c computed
 * by warp-level mma.sync instructions (no wgmma), ceil(n / K) of them chained
 * through the accumulator registers, K the instruction's depth:
 *   fp16, bf16 -> fp32     mma.sync.aligned.m16n8k16 (sm_80+)
 *   fp16 -> fp16           mma.sync.aligned.m16n8k16 .f16 accumulator
 *   tf32 -> fp32           mma.sync.aligned.m16n8k8 (sm_80+)
 *   e4m3, e5m2 -> fp32     mma.sync.aligned.m16n8k32 (sm_89+)
 *   e4m3, e5m2 -> fp16     the same with .f16 accumulator (sm_89+)
 * Every row of A holds a, every column of B holds b and every element of C
 * holds c, so every element of D is the one dot, whatever the mapping of
 * rows and columns to lanes; only the k index of each fragment element (PTX
 * ISA, "Matrix fragments for mma.m16n8k*") must be right.
 */

#include "format/format.h"

/** @brief A device session: the device buffers of one user (no global state). */
typedef struct lowp_probe_gpu lowp_probe_gpu_t;

/** @brief Open a session on the first GPU. @return LOWP_OK; LOWP_EUNSUPPORTED
    (no CUDA build or no device); LOWP_ENOMEM; LOWP_EIO (a CUDA error). */
int lowp_probe_gpu_open(lowp_probe_gpu_t **g);
/** @brief Release a session (NULL is fine). */
void lowp_probe_gpu_close(lowp_probe_gpu_t *g);

/** @brief 1 if a CUDA GPU is usable here (name and compute capability 10*major+minor filled). */
int lowp_probe_gpu_info(char *name, size_t len, int *sm);

/** @brief The instruction depth K for in -> out on this GPU, 0 if none. */
int lowp_probe_gpu_k(const lowp_format_t *in, const lowp_format_t *out, int sm);

/**
 * @brief lowp_probe_dot_fn on the GPU (ctx: a lowp_probe_gpu_t from lowp_probe_gpu_open).
 * @return LOWP_OK; LOWP_EUNSUPPORTED (no CUDA build, no device, or no
 *         instruction for in -> out); LOWP_EINVAL (n > 1024 or an input that
 *         is not a value of in); LOWP_EIO (a CUDA error).
 */
int lowp_probe_gpu_dot(void *ctx, double *d, const double *a, const double *b, size_t n, double c,
                       const lowp_format_t *in, const lowp_format_t *out);

#endif
