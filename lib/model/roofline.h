/* lowp_roofline -- a roofline model of a transformer layer's kernels, per precision and device */
#ifndef LOWP_ROOFLINE_H
#define LOWP_ROOFLINE_H

/*
 * The layer is the post-norm encoder layer of seed 001 (section 4.A:
 * multi-head self-attention, dropout, residual, LayerNorm, Linear d->4d,
 * GELU, dropout, Linear 4d->d, dropout, residual, LayerNorm), forward and
 * backward, written as the sequence of kernels an unfused implementation
 * launches: every GEMM (forward; backward dX and dW) and every memory-bound
 * kernel (softmax, layer norm, GELU, dropout, residual adds).
 *
 * The roofline (Williams, Waterman, Patterson, "Roofline: an insightful
 * visual performance model for multicore architectures", CACM 52(4), 2009):
 * a kernel with F flops moving B bytes takes t = max(F / peak, B / bw).
 * Bytes are the ideal traffic: every operand read once and every result
 * written once (GEMM: (mk + kn + mn) elements per product), in the storage
 * format of the precision. GEMM flops are 2 m n k per product; bias adds
 * are taken as fused into the GEMM epilogue.
 *
 * A precision is data: the format the GEMM multiplies (its tensor-core
 * peak) and the format tensors are stored in (its bytes). tf32 multiplies
 * tf32 but stores fp32; fp16 and bf16 store 16 bits (the whole layer's
 * activations and gradients, as pure 16-bit AMP keeps them; the
 * memory-bound kernels compute in fp32 registers).
 *
 * Outside the model: the loss, the optimizer step, AMP's casts of the fp32
 * master weights to 16 bits (three weight matrices per step, small next to
 * the activations), launch overheads, and fused kernels (flash attention,
 * GEMM epilogues beyond the bias): a fused implementation moves fewer bytes
 * than the unfused sequence modelled here. PyTorch's autocast keeps softmax
 * and layer norm outputs in fp32; modelling them in 16 bits, as here, makes
 * the 16-bit step slightly faster than autocast's. experiments/amp_speedup.c
 * adds both on top of these kernels (its autocast policy, op by op: fp32
 * softmax and layer norm, the casts, the optimizer step, and the attention
 * scale/mask, dropout and head transposes this list leaves out).
 */

#include <stddef.h>

#include "format/format.h"

/* ------------------------------------------------------------------ types */

/** @brief GEMM or memory-bound kernel. */
typedef enum { LOWP_RK_GEMM = 0, LOWP_RK_MEM = 1 } lowp_rkind_t;

/** @brief What a memory-bound kernel does (the CPU and GPU runners use it). */
typedef enum {
  LOWP_MOP_NONE = 0,     /**< a GEMM */
  LOWP_MOP_SOFTMAX = 1,  /**< rows x cols: y = softmax(x) */
  LOWP_MOP_SOFTMAX_BWD = 2, /**< dx = y (dy - sum(dy y)) */
  LOWP_MOP_LN = 3,       /**< layer norm of rows, saves mean and rstd */
  LOWP_MOP_LN_BWD = 4,   /**< dx from x, dy, mean, rstd */
  LOWP_MOP_GELU = 5,     /**< y = gelu(x) */
  LOWP_MOP_GELU_BWD = 6, /**< dx = gelu'(x) dy */
  LOWP_MOP_DROPOUT = 7,  /**< y = mask x / (1-p), writes the 1-byte mask */
  LOWP_MOP_DROPOUT_BWD = 8, /**< dx = mask dy / (1-p) */
  LOWP_MOP_ADD = 9       /**< z = x + y (residual; gradient accumulation) */
} lowp_mop_t;

/** @brief One kernel of the layer. */
typedef struct {
  char name[32];     /**< "qkv.fwd", "qkv.dX", "softmax.bwd", ... */
  lowp_rkind_t kind;
  int backward;      /**< 0 forward pass, 1 backward pass */
  lowp_mop_t op;     /**< LOWP_MOP_NONE for a GEMM */
  /* GEMM: count independent row-major products C (m x n) = op(A) op(B),
     op(A) m x k, op(B) k x n; ta/tb: A or B is stored transposed */
  size_t count, m, n, k;
  int ta, tb;
  /* memory-bound: rows x cols elements per tensor, n_rd tensors read and
     n_wr written in the storage format, extra_bytes of other data (1-byte
     dropout masks, fp32 row statistics), flops_per_elem operations per
     element of one tensor (counted on the straightforward algorithm) */
  size_t rows, cols;
  int n_rd, n_wr;
  double extra_bytes, flops_per_elem;
} lowp_rkernel_t;

/** @brief The layer's sizes (seed 001: 16, 512, 1024, 16, 4, 0.1). */
typedef struct {
  size_t batch, seq, d_model, heads, ffn_mult;
  double dropout; /**< 0: no dropout kernels */
} lowp_layer_dims_t;

/** @brief A precision of the layer: what the GEMMs multiply, what is stored. */
typedef struct {
  const char *name;              /**< label: "fp32", "tf32", "fp16", "bf16" */
  const lowp_format_t *gemm_in;  /**< the format the GEMM's multiplier takes */
  const lowp_format_t *storage;  /**< the format tensors are stored in */
} lowp_rprec_t;

/** @brief Most precisions a device row holds. */
#define LOWP_RPREC_MAX 4

/** @brief A device's roofs. Rates in flop/s, bandwidth in bytes/s. */
typedef struct {
  const char *name;   /**< "v100", "a100", "h100", "cpu" */
  const char *part;   /**< "V100 SXM2 32 GB" */
  /** GEMM peak per precision, in the order of lowp_roofline_precisions();
      NAN where the device has no such unit (the GEMM then runs at fp32) */
  double gemm_peak[LOWP_RPREC_MAX];
  double fp32_peak;   /**< fp32 rate of the ordinary cores (memory-bound math) */
  double bw;          /**< memory bandwidth */
  const char *source; /**< where the numbers come from */
} lowp_rdevice_t;

/** @brief One kernel's roofline under one precision and device. */
typedef struct {
  double flops, bytes;
  double t_compute, t_memory; /**< flops / peak, bytes / bw (s) */
  double t;                   /**< max of the two */
  double peak;                /**< the rate used (flop/s) */
  int fallback;               /**< 1: no unit for this precision, fp32 rate used */
} lowp_rtime_t;

/* ------------------------------------------------------------- public API */

/** @brief The precisions fp32, tf32, fp16, bf16 (static table); *n their count. */
const lowp_rprec_t *lowp_roofline_precisions(size_t *n);

/** @brief The datasheet devices v100, a100, a100-80gb, h100 (static
    table, each number's source in roofline.c); *n their count. */
const lowp_rdevice_t *lowp_roofline_devices(size_t *n);

/** @brief A device of the table by name, or NULL. */
const lowp_rdevice_t *lowp_roofline_device(const char *name);

/**
 * @brief The layer's kernels in launch order (forward, then backward).
 * @param[out] out  up to max kernels (NULL: only count them)
 * @param[in]  d    sizes; heads must divide d_model
 * @return the number of kernels the layer has (more than max: out holds
 *   the first max), or 0 if d is invalid (a zero size, heads not dividing
 *   d_model, dropout outside [0, 1)).
 */
size_t lowp_roofline_layer(lowp_rkernel_t *out, size_t max, const lowp_layer_dims_t *d);

/** @brief Flops and bytes of kernel k when tensors are stored in storage. */
void lowp_roofline_cost(double *flops, double *bytes, const lowp_rkernel_t *k,
                        const lowp_format_t *storage);

/**
 * @brief The roofline time of kernel k for precision index pi (of
 * lowp_roofline_precisions) on device dev: GEMMs at dev->gemm_peak[pi]
 * (fp32_peak where that is NAN: fallback = 1), memory-bound kernels' math
 * at fp32_peak; t = max(flops / peak, bytes / bw).
 */
void lowp_roofline_time(lowp_rtime_t *t, const lowp_rkernel_t *k, size_t pi,
                        const lowp_rdevice_t *dev);

/**
 * @brief Split the time saved going from (c0, m0) to (c1, m1), where a
 * kernel takes max(c, m), into the part due to compute and the part due to
 * memory traffic: the Shapley value of the two changes (L. S. Shapley, "A
 * value for n-person games", 1953), the average over both orders of making
 * one change and then the other. dc + dm = max(c0, m0) - max(c1, m1)
 * exactly (up to rounding).
 */
void lowp_roofline_split(double *dc, double *dm, double c0, double m0, double c1, double m1);

#endif
