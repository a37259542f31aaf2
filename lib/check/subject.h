/* lowp_subject -- what computes an operation: a lowp kernel, a user's plugin, or saved tensors */
#ifndef LOWP_SUBJECT_H
#define LOWP_SUBJECT_H

/*
 * A subject is an interface (a function pointer and its context), so the
 * pipeline (lib/check/pipeline.h) never knows which kind it measures:
 *
 *   kind "kernel"   a registry kernel (kernels/registry.h): every CPU twin,
 *                   and the GPU kernel when built and a device exists.
 *                   Made by lowp_kernel_subject_open (kernels/).
 *   kind "plugin"   a kernel in a user's shared library, loaded with dlopen
 *                   through the versioned C ABI of include/lowp_plugin.h.
 *                   Made by lowp_plugin_subject_open (lib/check/plugin.c).
 *   kind "tensors"  outputs a framework saved (.npy or .safetensors) for
 *                   inputs it also saved. Made by lowp_tensor_subject_open
 *                   (lib/check/tensors.c); the inputs come from the same
 *                   files (lowp_tensor_subject_inputs).
 *
 * A subject is deterministic: the same problem and inputs give the same
 * bytes (the pipeline relies on it for reproducible verdicts).
 */

#include <stddef.h>

#include "check/op.h"

typedef struct lowp_subject lowp_subject_t;

/**
 * @brief Compute the problem's outputs from its inputs.
 * @param[out] out  n_out arrays, each of lowp_op_shape's count, to receive
 *                  values of p->out (a subject that returns values outside
 *                  the format is reported by the pipeline, not rounded)
 * @param[in]  in   n_in arrays, values of p->in[i] (index inputs: integers)
 * @param[out] err  on failure, one line naming what went wrong (may be NULL)
 * @return LOWP_OK; LOWP_EUNSUPPORTED (the subject does not implement this
 *         operation or these formats); LOWP_ESHAPE (saved tensors of other
 *         shapes); LOWP_EIO; any other status with err set. A plugin that
 *         crashes returns LOWP_EIO with err saying which signal.
 */
typedef int (*lowp_subject_run_fn)(const lowp_subject_t *s, double *const *out,
                                   const double *const *in, const lowp_problem_t *p,
                                   char *err, size_t errlen);

struct lowp_subject {
  char name[256];          /**< for messages: "kernel sum_acc[acc=fp16,order=pairwise]" */
  const char *kind;        /**< "kernel", "plugin", "tensors" */
  lowp_subject_run_fn run;
  void *ctx;               /**< owned by the subject */
  void (*release)(lowp_subject_t *s); /**< frees ctx; may be NULL */
  /** How it accumulates, when the subject knows (registry kernels do): lets
      the pipeline pick the bound that fits the method. has_accum 0 = unknown. */
  int has_accum;
  lowp_accum_t accum;
  const lowp_format_t *prod;     /**< products rounded first (NULL: exact) */
  int has_model;                 /**< a tensor-core model computes it */
  lowp_tc_model_t model;
  /** Row operations (softmax, logsoftmax, logsumexp, xent, rmsnorm,
      layernorm): the format of the per-element steps (exp, log, subtract,
      divide), with accum.acc the row sum's (has_accum): the pipeline then
      fills in the row operation's bound (lowp_tol_data, lib/check/tol.h). */
  int has_compute;
  lowp_format_t compute;
  /** Outputs the subject does not produce (bit j for output j), e.g. saved
      layer-norm tensors with y only: the pipeline leaves them out of every
      metric and rule and reports them as absent. Output 0 is never absent. */
  unsigned absent;
};

/** @brief Release a subject (calls s->release; safe on a zeroed s). */
void lowp_subject_close(lowp_subject_t *s);

/* ------------------------------------------- constructors (one per kind) */

/**
 * @brief A registry kernel as a subject (kernels/registry_subject.c).
 * @param name    registry name, e.g. "gemm_acc", "softmax_naive"
 * @param params  the kernel's parameters, "key=value,..." (e.g.
 *                "acc=fp32,order=pairwise" or "model=h100,promote=128");
 *                NULL or "" for its defaults
 * @param err     on failure: "unknown kernel 'x' (known: ...)" or the
 *                parameter problem
 * @return LOWP_OK; LOWP_EINVAL (unknown name or bad parameters);
 *         LOWP_EUNSUPPORTED (GPU kernel asked for without a device).
 */
int lowp_kernel_subject_open(lowp_subject_t *s, const char *name, const char *params,
                             char *err, size_t errlen);

/** @brief A registry kernel's parameters, typed (lowp_kernel_subject_open_args):
    NULL / 0 fields keep the kernel's defaults. */
typedef struct {
  const lowp_format_t *compute;  /**< compute= (row kernels, elementwise) */
  const lowp_format_t *acc;      /**< acc= (sums of products; row kernels: the row sum) */
  const lowp_format_t *prod;     /**< prod= (products rounded to it first) */
  int has_order;                 /**< order= given: */
  lowp_acc_order_t order;        /**<   recursive, pairwise, blocked, splitk, kahan */
  size_t block;                  /**<   blocked:B / splitk:S */
  int exp_cr;                    /**< exp=cr (softmax kernels) */
  const char *extra;             /**< more "key=value,..." (variant=, model=, ...), or NULL */
} lowp_kernel_args_t;

/**
 * @brief lowp_kernel_subject_open with typed parameters (formats as
 * descriptors, the order as an enum), then lowp_kernel_subject_bind to p
 * when p is not NULL: an experiment opens a registry kernel without
 * writing "key=value" text. The parameters go through the registry's one
 * parser, so they are checked exactly as lowp_kernel_subject_open checks
 * them; on failure s is closed.
 * @return the codes of lowp_kernel_subject_open and _bind; LOWP_EINVAL
 *         (a field the kernel does not take, said in err).
 */
int lowp_kernel_subject_open_args(lowp_subject_t *s, const char *name,
                                  const lowp_kernel_args_t *a, const lowp_problem_t *p,
                                  char *err, size_t errlen);

/**
 * @brief Check a kernel subject against the problem it will compute
 * (kernels/registry_subject.c), before any work: the operation must be the kernel's,
 * and a tensor-core kernel takes its model for the problem's formats (and
 * declares it: s->has_model, s->model, for the bounds).
 * @return LOWP_OK; LOWP_EUNSUPPORTED (another operation, or no datapath
 *         for these formats: err says which, and which kernels fit);
 *         LOWP_EINVAL (bad model parameters).
 */
int lowp_kernel_subject_bind(lowp_subject_t *s, const lowp_problem_t *p, char *err,
                             size_t errlen);

/**
 * @brief A kernel of a plugin library as a subject (lib/check/plugin.c).
 * Loads path with dlopen (RTLD_NOW | RTLD_LOCAL), checks the ABI version
 * symbol and the kernel table, and finds the entry named kernel (or, if
 * kernel is NULL, the only entry for the problem's operation). Every call
 * runs in a forked child so a crashing plugin is reported, not fatal.
 * @return LOWP_OK; LOWP_EIO (cannot load: dlerror's text in err);
 *         LOWP_EUNSUPPORTED (no ABI version symbol, another ABI version, or
 *         no such kernel / operation / formats: err says which);
 *         LOWP_EFILE (a malformed table).
 */
int lowp_plugin_subject_open(lowp_subject_t *s, const char *path, const char *kernel,
                             const lowp_problem_t *p, char *err, size_t errlen);

/** @brief A tensor file reference: path and, for .safetensors, the tensor
    name (NULL for .npy). */
typedef struct {
  const char *path;
  const char *tensor;
  const char *format; /**< lowp format of raw bit patterns (<u2 bf16, |u1 e4m3/e5m2),
                           or NULL to follow the dtype */
  /* an input whose format (p->bin) is block-scaled: path holds the element
     values or packed codes, these the companion scales (docs/formats.md) */
  const char *scales_path, *scales_tensor; /**< NULL: scales by the format's rule */
  const char *ts_path, *ts_tensor;         /**< the per-tensor scale as a tensor */
  double tensor_scale;                     /**< the per-tensor scale as a number; 0: none */
  int scale_layout;                        /**< lowp_bslayout_t of the scales */
} lowp_tensor_ref_t;

/**
 * @brief Saved tensors as a subject (lib/check/tensors.c): reads the inputs
 * and outputs named (n_in and n_out references), checks dtypes and shapes
 * against the operation, and fills p->dims, p->in[] and p->out from them
 * where the caller left them unset (p->dims.m == 0; formats with a NULL
 * name): an fp32 file is fp32 data unless told otherwise.
 * .npy: <f2 <f4 <f8; <u2 and |u1 raw bits with ref.format; <i8 <i4 for
 * index inputs. An output reference with a NULL path (not the first) is an
 * output the framework did not save (s->absent). .safetensors: BF16 F16 F32 F64 F8_E4M3 F8_E5M2 (I64 I32
 * for index inputs). An input of a block-scaled format (p->has_bin) is
 * read with its companion scales (ref.scales_path; lowp_tensor_bs_load) or,
 * without them, as fp32 data quantized by the format's rule.
 * @return LOWP_OK; LOWP_EIO; LOWP_EFILE (corrupt file); LOWP_EUNSUPPORTED
 *         (dtype); LOWP_ESHAPE (shapes disagree); err names file and tensor.
 */
int lowp_tensor_subject_open(lowp_subject_t *s, const lowp_tensor_ref_t *inputs,
                             const lowp_tensor_ref_t *outputs, lowp_problem_t *p,
                             char *err, size_t errlen);

/**
 * @brief The inputs a tensor subject read (borrowed; valid until close).
 * in[i] has lowp_op_shape's count of input i.
 */
const double *const *lowp_tensor_subject_inputs(const lowp_subject_t *s);

/**
 * @brief The outputs a tensor subject read (borrowed; valid until close):
 * out[j] has lowp_op_shape's count of output j, NULL for one not saved.
 */
const double *const *lowp_tensor_subject_outputs(const lowp_subject_t *s);

/**
 * @brief The unrounded data of a tensor subject's inputs (borrowed): for a
 * block-scaled input quantized by its format's rule, the file's values (its
 * input is their quantization); NULL entries elsewhere.
 */
const double *const *lowp_tensor_subject_data(const lowp_subject_t *s);

/**
 * @brief Check the index inputs of a problem whose dims are known (xent's
 * target): every value an integer in [0, n). A target of 99 with 10
 * classes, -1 or 1.5 is bad input, refused before any work (issue 19).
 * @param in  the problem's inputs (only the index ones are read)
 * @return LOWP_OK or LOWP_EINVAL (err names the input, the element and the value).
 */
int lowp_tensor_check_indices(const lowp_problem_t *p, const double *const *in, char *err,
                              size_t errlen);

#endif
