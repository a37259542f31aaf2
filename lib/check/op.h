/* lowp_op -- the operations lowp measures, as data: arity, shapes, exact reference, bounds */
#ifndef LOWP_OP_H
#define LOWP_OP_H

/*
 * The first stage of the one measurement pipeline (docs/pipeline.md):
 *
 *   subject -> exact reference -> metrics and bounds -> rule -> verdict
 *
 * An operation is a table entry (lowp_op_t), never a code path in a caller:
 * lowp check, lowp gemm/dot and the experiments look an operation up by
 * name and ask it for its tensors' shapes, its exact reference and its
 * bounds.
 *
 * Sizes (lowp_dims_t) and what each operation reads and writes. Every
 * tensor is a dense row-major array of binary64 values (holding values of
 * its format); "rows" = batch * m.
 *
 *   op          inputs                          outputs
 *   cast        x (batch, m, n)                 y (batch, m, n)   y = round(x) to out
 *   exp log tanh gelu   x (batch, m, n)         y (batch, m, n)   elementwise
 *   sum         x (batch, m, n)                 y (batch, m)      over the last axis
 *   dot         x (batch, k), w (batch, k)      y (batch)
 *   gemv        A (batch, m, k), x (batch, k)   y (batch, m)
 *   gemm        A (batch, m, k), B (batch, k, n) C (batch, m, n)
 *   softmax, logsoftmax  x (batch, m, n)        y (batch, m, n)   over the last axis
 *   logsumexp   x (batch, m, n)                 y (batch, m)
 *   layernorm   x (batch, m, n)                 y (batch, m, n), mean (batch, m), var (batch, m)
 *               y = (x - mean) / sqrt(var + eps), var the population variance
 *   rmsnorm     x (batch, m, n)                 y (batch, m, n)
 *               y = x / sqrt(mean(x^2) + eps)
 *   xent        logits (batch, m, n), target (batch, m)   loss (batch, m) [reduction none]
 *               or loss (1) [reduction mean]; loss = logsumexp(row) - row[target];
 *               target holds integer class indices (as doubles), not format values
 *
 * A tensor's shape drops leading dimensions of size 1 only where the table
 * says so: batch = 1 tensors have the shapes without the batch axis
 * (lowp_op_shape reports the shape a file must have; lowp_op_dims_infer
 * accepts either form).
 */

#include <stddef.h>

#include "format/bsformat.h"
#include "format/format.h"
#include "model/accum.h"
#include "model/tc.h"

/* ------------------------------------------------------------------ types */

/** @brief Operation ids. Explicit values: they are stored in files. */
typedef enum {
  LOWP_OP_CAST = 0,
  LOWP_OP_SUM = 1,
  LOWP_OP_DOT = 2,
  LOWP_OP_GEMV = 3,
  LOWP_OP_GEMM = 4,
  LOWP_OP_SOFTMAX = 5,
  LOWP_OP_LOGSOFTMAX = 6,
  LOWP_OP_LOGSUMEXP = 7,
  LOWP_OP_LAYERNORM = 8,
  LOWP_OP_RMSNORM = 9,
  LOWP_OP_XENT = 10,
  LOWP_OP_EXP = 11,
  LOWP_OP_LOG = 12,
  LOWP_OP_TANH = 13,
  LOWP_OP_GELU = 14
} lowp_op_id_t;
#define LOWP_OP_COUNT 15

/** @brief Most inputs or outputs of one operation. */
#define LOWP_OP_MAXIO 4
/** @brief Most dimensions of one tensor. */
#define LOWP_OP_MAXDIM 4

/** @brief Sizes of one problem (see the table above); unused ones are 1. */
typedef struct {
  size_t batch, m, n, k;
} lowp_dims_t;

/** @brief What an operation's error is best judged by. */
typedef enum {
  /** sums of products (sum, dot, gemv, gemm): componentwise backward error
      |c - x| / (|A||B|) against the bounds of the accumulation order */
  LOWP_OPKIND_SUMPROD = 0,
  /** everything else: forward error, in ulps of the output format */
  LOWP_OPKIND_FORWARD = 1
} lowp_opkind_t;

/** @brief An operation, as data. */
typedef struct {
  lowp_op_id_t id;
  const char *name;                          /**< "gemm", "layernorm", ... */
  int n_in, n_out;
  const char *in_names[LOWP_OP_MAXIO];       /**< "A", "B"; "logits", "target" */
  const char *out_names[LOWP_OP_MAXIO];      /**< "C"; "y", "mean", "var" */
  int in_index[LOWP_OP_MAXIO];               /**< 1: integer indices (xent target) */
  lowp_opkind_t kind;
  const char *doc;                           /**< one line */
} lowp_op_t;

/** @brief One problem: an operation, its sizes, formats and parameters. */
typedef struct {
  const lowp_op_t *op;
  lowp_dims_t dims;
  lowp_format_t in[LOWP_OP_MAXIO]; /**< format of each input (index inputs: fp64) */
  lowp_format_t out;               /**< format of every output */
  double eps;                      /**< layernorm, rmsnorm (default 1e-5, PyTorch's) */
  int reduction_mean;              /**< xent: 0 none (per row), 1 mean */
  /** Block-scaled inputs (docs/formats.md): input i with has_bin[i] is
      drawn, rounded to fp32, quantized by bin[i]'s rule in blocks along the
      reduction axis (A's rows and B's columns for gemm, the last axis
      otherwise) and dequantized; in[i] is fp32, and the exact reference is
      that of the dequantized values. */
  int has_bin[LOWP_OP_MAXIO];
  lowp_bsformat_t bin[LOWP_OP_MAXIO];
  /** Conversions inside the subject (a check spec's "convert"): input i
      with has_conv[i] is given to the subject in in[i], and the subject
      rounds it to conv[i] with conv_rnd[i] before it computes (a kernel
      that reads fp32 activations as fp16). The exact reference is that of
      the converted values, so the bounds judge the subject's arithmetic
      alone; the conversion's cost shows as the input part of the split
      (lowp_check_output_t.ulp_input). Zero (lowp_problem_init): none. */
  int has_conv[LOWP_OP_MAXIO];
  lowp_format_t conv[LOWP_OP_MAXIO];
  lowp_rounding_t conv_rnd[LOWP_OP_MAXIO];
} lowp_problem_t;

/** @brief The bounds lowp knows (on the componentwise backward error of a
    sum of products, lowp_measure_errors' bwd). */
typedef enum {
  LOWP_BOUND_GAMMA = 0,    /**< deterministic, of the order given (recursive: gamma_k) */
  LOWP_BOUND_PROB = 1,     /**< probabilistic, Higham & Mary 2019, at a probability */
  LOWP_BOUND_MODEL = 2     /**< a tensor-core model's block size and alignment */
} lowp_bound_kind_t;

/** @brief What a bound needs to know about how the subject computes. */
typedef struct {
  lowp_bound_kind_t kind;
  lowp_accum_t accum;       /**< order, accumulation format and rounding (GAMMA, PROB) */
  const lowp_format_t *prod;/**< products rounded to this first, or NULL (exact) */
  double prob;              /**< PROB: probability per element (e.g. 0.99) */
  const lowp_tc_model_t *model; /**< MODEL */
} lowp_bound_spec_t;

/* ------------------------------------------------------------- public API */

/**
 * @brief A problem of op with the documented defaults: every size 1, every
 * input format and the output fp32 (index inputs fp64), eps = 1e-5
 * (PyTorch's), reduction none. Set the sizes and formats after it; use it
 * instead of memset (which gives eps = 0).
 * @return LOWP_OK; LOWP_EINVAL (p or op NULL).
 */
int lowp_problem_init(lowp_problem_t *p, const lowp_op_t *op);

/** @brief The operation called name (e.g. "gemm"), or NULL. */
const lowp_op_t *lowp_op_by_name(const char *name);
/** @brief The operation with id, or NULL. */
const lowp_op_t *lowp_op_get(lowp_op_id_t id);

/**
 * @brief Shape of input `which` (0 .. n_in-1) or output `n_in + j`.
 * @param[out] shape up to LOWP_OP_MAXDIM sizes; *ndim their count
 * @param[out] count product of the shape
 * @return LOWP_OK; LOWP_EINVAL (which out of range, a size 0, or the
 *         element count overflows size_t).
 */
int lowp_op_shape(const lowp_problem_t *p, int which, size_t *shape, int *ndim,
                  size_t *count);

/**
 * @brief 1 if a tensor of shape (shape, ndim) fits input/output `which`:
 * equal to lowp_op_shape's after dropping leading axes of size 1 from both
 * (so (1, n) and (n,), or () and (1,), are the same tensor); else 0.
 */
int lowp_op_shape_matches(const lowp_problem_t *p, int which, const size_t *shape, int ndim);

/**
 * @brief Fill p->dims from the shapes of the inputs (as a file gives them).
 * Checks that the shapes agree with each other and with the operation
 * (e.g. A's columns equal B's rows); err names the tensor and the sizes.
 * @return LOWP_OK; LOWP_ESHAPE with err set.
 */
int lowp_op_dims_infer(lowp_problem_t *p, const size_t *const *shapes, const int *ndims,
                       char *err, size_t errlen);

/**
 * @brief The exact result of the problem on in[], each output element
 * rounded once to f in mode rnd (lib/exact). out[j] has lowp_op_shape's
 * count of output j. For sums of products, if absab is not NULL it gets
 * (|A||B|) per output element (exact, rounded to binary64), the scale of
 * the componentwise backward error.
 * @return lowp_status_t of lib/exact; LOWP_EINVAL for a target index out of
 *         range or not an integer.
 */
int lowp_op_exact(double *const *out, double *absab, const double *const *in,
                  const lowp_problem_t *p, const lowp_format_t *f, lowp_rounding_t rnd);

/**
 * @brief For a sum of products (sum, dot, gemv, gemm): lo[i] = the exact
 * result minus x[i], rounded once to binary64 (x: that exact result rounded
 * to binary64, lowp_op_exact's out[0]); x + lo is the exact result to about
 * 106 bits. 0 where x[i] is not finite.
 * @return as lowp_op_exact; LOWP_EUNSUPPORTED for other operations.
 */
int lowp_op_exact_lo(double *lo, const double *x, const double *const *in, const lowp_problem_t *p);

/** @brief A progress report of a long exact reference: fn(ctx, done) with
    done in [0, 1], from the calling thread; lib/ never prints, tools draw it. */
typedef struct {
  void (*fn)(void *ctx, double done);
  void *ctx;
} lowp_op_progress_t;

/** @brief lowp_op_exact with progress reports (prog may be NULL); today the
    GEMM reference reports (its exact products are the long ones). */
int lowp_op_exact_ex(double *const *out, double *absab, const double *const *in,
                     const lowp_problem_t *p, const lowp_format_t *f, lowp_rounding_t rnd,
                     const lowp_op_progress_t *prog);

/**
 * @brief The value of a bound for the problem (on the backward error of a
 * sum of products of length k): +inf when the bound does not exist (e.g.
 * k u >= 1), which callers must report as "vacuous", not as a percentage.
 * Each bound cites its source at its definition (lib/check/op.c).
 * @param[out] name a short description, e.g. "gamma_k (recursive, u=2^-24)"
 * @return LOWP_OK; LOWP_EUNSUPPORTED (op is not a sum of products, or no
 *         bound of that kind is known for the order).
 */
int lowp_op_bound(double *value, char *name, size_t namelen, const lowp_problem_t *p,
                  const lowp_bound_spec_t *b);

/** @brief The constants a gamma-type bound of lowp_op_bound uses. */
typedef struct {
  double u;           /**< unit roundoff of the accumulation: u for the nearest
                           modes, 2u for the directed ones (and sr, round-to-odd) */
  double lambda;      /**< LOWP_BOUND_PROB: Higham & Mary's lambda (NaN otherwise) */
  double probability; /**< LOWP_BOUND_PROB: the probability it holds with (NaN otherwise) */
} lowp_bound_units_t;

/**
 * @brief The constants of the bound lowp_op_bound computes for spec b
 * (gamma and prob kinds: the accumulation's u; prob: lambda, from the
 * larger of the accumulation's and the products' u, and its probability).
 * @return LOWP_OK; LOWP_EINVAL; LOWP_EUNSUPPORTED (a model bound).
 */
int lowp_op_bound_units(lowp_bound_units_t *out, const lowp_problem_t *p,
                        const lowp_bound_spec_t *b);

#endif
