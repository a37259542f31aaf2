/* lowp_scaler -- dynamic loss scaling (PyTorch GradScaler and the documents' variants) */
#ifndef LOWP_SCALER_H
#define LOWP_SCALER_H

#include <stddef.h>
#include <stdint.h>

/*
 * One state machine, four rule sets (policies), each reproducing one
 * implementation exactly, arithmetic formats included:
 *
 * LOWP_SCALER_PYTORCH  torch.amp.GradScaler (torch/amp/grad_scaler.py) with the
 *   update kernel _amp_update_scale_ (aten/src/ATen/native/cuda/AmpKernels.cu,
 *   aten/src/ATen/native/cpu/AmpGradScalerKernels.cpp):
 *     scale is an fp32 tensor (init_scale rounded to fp32), tracker int32;
 *     found_inf: scale = fp32(scale * backoff) (product in fp64: the factors
 *       are C++ doubles), tracker = 0;
 *     else: successful = tracker + 1; if (successful == interval) {
 *       new = fp32(scale * growth); if new is finite: scale = new (growth is
 *       refused when it would overflow fp32); tracker = 0 } else tracker =
 *       successful.  The comparison is ==, so a tracker loaded above the
 *       interval never triggers growth (until int32 wraps). No lower clamp.
 *     unscale_: inv_scale = fp32(1 / fp64(scale)) (grad_scaler.py:
 *       self._scale.double().reciprocal().float()), g = fp32(g * inv_scale),
 *       found_inf if any scaled g is NaN or +-inf.
 *     Document 000 section 2 "Implementation" shows this with `>=`; the
 *     kernel, which is what runs, uses == (document 002 section 5 shows ==).
 * LOWP_SCALER_GENESIS  document 003 "Advanced Mixed Precision with Loss
 *   Scaling": scale is a Python float (fp64); overflow: scale *= backoff,
 *   scale = max(scale, 1.0), tracker = 0; else tracker += 1 and if tracker
 *   >= interval: scale *= growth (no overflow check), tracker = 0; unscale
 *   divides g by the scale (fp32 division by fp32(scale)); NaN/inf checked
 *   on the unscaled gradients.
 * LOWP_SCALER_MLX      document 000 "MLX C++ API" GradScaler: float scale_;
 *   products in fp32 (scale_ *= factor); inv_scale = 1.0f / scale_ (fp32
 *   division); step() backs off, zeroes the tracker and RESETS found_inf_
 *   before update() runs, so update() then counts the overflow step as a
 *   good one: after an overflow the tracker is 1, not 0, and with interval 1
 *   the scale grows straight back. `>=` comparison; no overflow check, so
 *   the fp32 scale can become inf and then stays inf (inf * backoff = inf).
 * LOWP_SCALER_MLX_PY   document 000 "MLX Python API" GradScaler: Python float
 *   (fp64) scale, found_inf left set by step() so update() does nothing on
 *   an overflow step (tracker stays 0); `>=`; inv_scale = 1.0 / scale in fp64,
 *   applied to fp32 gradients as fp32(inv_scale) (MLX casts a Python scalar
 *   to the array's dtype).
 */

/** @brief Which implementation's rules the scaler follows. */
typedef enum {
  LOWP_SCALER_PYTORCH = 0, /**< torch.amp.GradScaler (the reference) */
  LOWP_SCALER_GENESIS = 1, /**< document 003: fp64, clamp at 1.0, `>=` */
  LOWP_SCALER_MLX = 2,     /**< document 000 MLX C++ sketch: fp32, tracker quirk */
  LOWP_SCALER_MLX_PY = 3   /**< document 000 MLX Python sketch: fp64, `>=` */
} lowp_scaler_policy_t;
#define LOWP_SCALER_POLICY_COUNT 4

/** @brief Scaler state (plain data: copy it to snapshot it). */
typedef struct {
  lowp_scaler_policy_t policy;
  double scale;     /**< current scale; an fp32 value for PYTORCH and MLX */
  long long tracker;/**< consecutive good steps since the last change
                         (int32 semantics, wrapping, for PYTORCH) */
  double growth;    /**< growth_factor (> 0) */
  double backoff;   /**< backoff_factor (> 0) */
  long long interval; /**< growth_interval (>= 1) */
  long long steps;  /**< updates applied so far (not part of PyTorch's state) */
  long long skipped;/**< of which skipped because of inf/NaN */
} lowp_scaler_t;

/**
 * @brief Initialise a scaler.
 * @param init  initial scale (PyTorch: 65536); rounded to fp32 for PYTORCH/MLX
 * @return LOWP_OK; LOWP_EINVAL if a factor is not a finite number > 0, the
 *         interval is < 1 or > INT32_MAX, init is not finite and > 0, or the
 *         policy is unknown. (PyTorch itself also asserts growth > 1 and
 *         backoff < 1; lowp accepts other positive factors so that their
 *         effect can be measured, and the CLI says so.)
 */
int lowp_scaler_init(lowp_scaler_t *s, lowp_scaler_policy_t policy, double init,
                     double growth, double backoff, long long interval);

/** @brief The PyTorch defaults: 2^16, 2.0, 0.5, 2000. */
int lowp_scaler_init_default(lowp_scaler_t *s, lowp_scaler_policy_t policy);

/**
 * @brief One training step's scale update: the optimizer step is skipped
 * when found_inf is nonzero. Applies the policy's rules (see above).
 * @param[out] skipped  if non-NULL: 1 if the step was skipped
 * @return LOWP_OK, or LOWP_EINVAL for a NULL or corrupt state.
 */
int lowp_scaler_update(lowp_scaler_t *s, int found_inf, int *skipped);

/** @brief The policy's inverse scale as it multiplies fp32 gradients:
    PYTORCH fp32(1/fp64(scale)); MLX 1.0f/scale_ in fp32; MLX_PY
    fp32(1/scale); GENESIS (divides instead) fp32(1/fp32(scale)), for
    display only. */
double lowp_scaler_inv_scale(const lowp_scaler_t *s);

/**
 * @brief Unscale fp32 gradients in place the policy's way and detect
 * non-finite values (NaN, +inf, -inf).
 * @param[out] found_inf 1 if any g[i] was non-finite, else 0
 * @return LOWP_OK or LOWP_EINVAL (NULL pointers with n > 0).
 */
int lowp_scaler_unscale_f32(const lowp_scaler_t *s, float *g, size_t n, int *found_inf);

/** @brief PyTorch's `scale(outputs)`: fp32(x * scale) (for MLX_PY and
    GENESIS the fp64 scale is first cast to fp32, as a framework does when a
    Python float multiplies an fp32 tensor). */
float lowp_scaler_scale_f32(const lowp_scaler_t *s, float x);

/** @brief Policy names: "pytorch", "genesis", "mlx", "mlx-py". */
const char *lowp_scaler_policy_name(lowp_scaler_policy_t p);
/** @brief Parse a policy name; LOWP_OK or LOWP_EPARSE. */
int lowp_scaler_policy_parse(lowp_scaler_policy_t *p, const char *text);

/**
 * @brief Serialise the state as a JSON object with PyTorch's state_dict keys
 * ("scale", "growth_factor", "backoff_factor", "growth_interval",
 * "_growth_tracker") plus "policy", "steps", "skipped". Numbers are printed
 * with 17 significant digits, so a load gives back the same doubles.
 * @param[out] text  malloc'ed, NUL-terminated; the caller frees it
 * @return LOWP_OK or LOWP_ENOMEM.
 */
int lowp_scaler_save_json(const lowp_scaler_t *s, char **text);

/**
 * @brief Load a state saved by lowp_scaler_save_json (or a hand-written
 * object with at least "scale"; missing keys keep s's current values, as
 * PyTorch's load_state_dict requires them all but lowp is lenient only for
 * "policy", "steps" and "skipped"). On error s is unchanged.
 * @param[out] err  a message (<= errlen chars) on error, if non-NULL
 * @return LOWP_OK; LOWP_EPARSE (not JSON, text after the object, not an
 *         object, a key given twice, an unknown key, a key of the wrong
 *         type, or a required
 *         key missing); LOWP_EINVAL (values out of range).
 */
int lowp_scaler_load_json(lowp_scaler_t *s, const char *text, char *err, size_t errlen);

#endif
