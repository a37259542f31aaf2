/* lowp_mlp -- a small fp32 multilayer perceptron: forward, backprop, SGD with momentum */
#ifndef LOWP_MLP_H
#define LOWP_MLP_H

#include <stddef.h>
#include <stdint.h>

/*
 * Linear layers with ReLU between them and softmax cross-entropy on the
 * last one. Everything is fp32 except the softmax and the loss (fp64, per
 * sample, 10 terms). Deterministic: every output element is computed by one
 * thread with its reduction in a fixed order (ascending index), so the same
 * seed gives the same bytes whatever the number of OpenMP threads. Zero
 * inputs (ReLU outputs, blank pixels) are skipped in the sums; adding
 * x*w = +-0 to a sum changes nothing but the sign of an exact zero, so this
 * is exactly the plain sum up to that sign.
 */

#define LOWP_MLP_MAXLAYERS 8

/** @brief The network. Layer l maps width[l] inputs to width[l+1] outputs;
    its weights are stored input-major: w[l][k * width[l+1] + j] is the
    weight from input k to output j (the forward sum then runs over
    contiguous memory for a row of outputs). */
typedef struct {
  int nlayers;
  int width[LOWP_MLP_MAXLAYERS + 1];
  float *w[LOWP_MLP_MAXLAYERS], *b[LOWP_MLP_MAXLAYERS];
  float *vw[LOWP_MLP_MAXLAYERS], *vb[LOWP_MLP_MAXLAYERS]; /**< momentum buffers */
} lowp_mlp_t;

/** @brief Gradients of the mean loss, laid out like the weights. */
typedef struct {
  float *dw[LOWP_MLP_MAXLAYERS], *db[LOWP_MLP_MAXLAYERS];
} lowp_mlp_grad_t;

/**
 * @brief Hook applied to the input of layer l (rows x cols, row-major,
 * rows = samples) just before its matrix product, e.g. to quantize the
 * activations. Called from one thread; it may use OpenMP itself.
 */
typedef void (*lowp_mlp_hook_fn)(float *x, size_t rows, size_t cols, int layer, void *ctx);

/**
 * @brief Allocate a network: He-normal weights (std sqrt(2/fan_in)) drawn
 * from Philox stream (seed, layer), zero biases and momentum.
 * @return LOWP_OK; LOWP_EINVAL (nlayers outside 1..MAXLAYERS, width < 1);
 *         LOWP_ENOMEM.
 */
int lowp_mlp_init(lowp_mlp_t *m, const int *width, int nlayers, uint64_t seed);
/** @brief Copy src's shape, weights and biases into a new network dst (momentum zero). */
int lowp_mlp_clone(lowp_mlp_t *dst, const lowp_mlp_t *src);
/** @brief Free a network (safe on a zeroed struct). */
void lowp_mlp_free(lowp_mlp_t *m);
/** @brief Number of parameters (weights and biases). */
size_t lowp_mlp_nparams(const lowp_mlp_t *m);

/** @brief Allocate / free gradient buffers shaped like m. */
int lowp_mlp_grad_alloc(lowp_mlp_grad_t *g, const lowp_mlp_t *m);
void lowp_mlp_grad_free(lowp_mlp_grad_t *g, const lowp_mlp_t *m);

/**
 * @brief Logits of a batch: logits (batch x width[nlayers]) from x (batch x
 * width[0]). hook (may be NULL) sees each layer's input first; x itself is
 * not modified (the hook gets a copy).
 * @return LOWP_OK or LOWP_ENOMEM.
 */
int lowp_mlp_forward(float *logits, const float *x, size_t batch, const lowp_mlp_t *m,
                     lowp_mlp_hook_fn hook, void *ctx);

/**
 * @brief Mean softmax cross-entropy of a batch and its gradient w.r.t.
 * every weight and bias (backpropagation, fp32).
 * @param[out] loss  the mean loss (fp64 softmax per sample, fp64 mean)
 * @return LOWP_OK; LOWP_EINVAL for a label outside [0, classes); LOWP_ENOMEM.
 */
int lowp_mlp_loss_grad(lowp_mlp_grad_t *g, double *loss, const float *x, const uint8_t *labels,
                       size_t batch, const lowp_mlp_t *m);

/**
 * @brief One SGD step with momentum (PyTorch's form): v = mu*v + g; w -= lr*v.
 * @return as lowp_mlp_loss_grad.
 */
int lowp_mlp_sgd_step(lowp_mlp_t *m, lowp_mlp_grad_t *g, double *loss, const float *x,
                      const uint8_t *labels, size_t batch, float lr, float momentum);

#endif
