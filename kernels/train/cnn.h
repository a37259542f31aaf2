/* lowp_cnn -- a small fp32 convolutional network for 28x28 images: forward, backprop, SGD */
#ifndef LOWP_CNN_H
#define LOWP_CNN_H

#include <stddef.h>
#include <stdint.h>

/*
 * conv 3x3 (1 -> c1, zero padding 1) -> ReLU -> max pool 2x2 (28 -> 14)
 * -> conv 3x3 (c1 -> c2) -> ReLU -> max pool 2x2 (14 -> 7)
 * -> linear (49 c2 -> hidden) -> ReLU -> linear (hidden -> 10),
 * softmax cross-entropy. Activations are stored channels-last (NHWC).
 *
 * Every layer is one GEMM Y = X W + b, which is what a quantized deployment
 * changes: X is rows x K, W is K x N (input-major), b has N entries. For a
 * convolution X is the im2col matrix (one row per output pixel, the 3x3
 * neighbourhood of every input channel: k = (dy * 3 + dx) * C + c), so that
 * a convolution's "dot product" is K = 9 C long. Layer l's shape is K[l] x
 * N[l]: 9 x c1, 9 c1 x c2, 49 c2 x hidden, hidden x 10.
 *
 * Deterministic: every output element, gradient element and pooled value is
 * computed by one thread in a fixed order (sums over ascending index), so the
 * same seed gives the same bytes whatever the number of OpenMP threads. As in
 * kernels/train/mlp, zero inputs are skipped in the forward sums (adding
 * x*w = +-0 changes nothing but the sign of an exact zero).
 */

#define LOWP_CNN_LAYERS 4

/** @brief The network. */
typedef struct {
  int c1, c2, hidden;
  int K[LOWP_CNN_LAYERS], N[LOWP_CNN_LAYERS]; /**< GEMM shape of each layer */
  float *w[LOWP_CNN_LAYERS], *b[LOWP_CNN_LAYERS];
  float *vw[LOWP_CNN_LAYERS], *vb[LOWP_CNN_LAYERS]; /**< momentum buffers */
} lowp_cnn_t;

/**
 * @brief A layer's GEMM: y (rows x N[layer]) = x (rows x K[layer]) W + b.
 * The forward pass calls it once per layer; the callee may modify x (a
 * scratch copy). Returns a status (lowp_status_t); non-zero stops the pass.
 */
typedef int (*lowp_cnn_gemm_fn)(float *y, float *x, size_t rows, int layer, const lowp_cnn_t *m,
                                void *ctx);

/**
 * @brief Allocate a network: He-normal weights (std sqrt(2 / K)) from Philox
 * stream (seed, layer), zero biases and momentum.
 * @return LOWP_OK; LOWP_EINVAL (a size < 1 or > 4096); LOWP_ENOMEM.
 */
int lowp_cnn_init(lowp_cnn_t *m, int c1, int c2, int hidden, uint64_t seed);
/** @brief Copy src's shape, weights and biases into a new network (momentum zero). */
int lowp_cnn_clone(lowp_cnn_t *dst, const lowp_cnn_t *src);
/** @brief Free (safe on a zeroed struct). */
void lowp_cnn_free(lowp_cnn_t *m);
/** @brief Number of weights and biases. */
size_t lowp_cnn_nparams(const lowp_cnn_t *m);

/**
 * @brief The fp32 GEMM of the network: y = x w + b, each output summed in
 * fp32 from b over ascending k (zero x skipped). OpenMP over rows.
 */
void lowp_cnn_gemm_f32(float *y, const float *x, size_t rows, int K, int N, const float *w,
                       const float *b);

/**
 * @brief The backward pass of that GEMM (shared with kernels/train/vit):
 * dw (K x N) = x^T dy, summed over rows ascending (OpenMP over k, zero x
 * skipped); db (N, may be NULL) = column sums of dy over rows ascending.
 */
void lowp_cnn_gemm_bwd_w(float *dw, float *db, const float *x, const float *dy, long rows, int K,
                         int N);
/** @brief dx (rows x K) = dy wt with wt = w^T (N x K), sums over j ascending (OpenMP over rows). */
void lowp_cnn_gemm_bwd_x(float *dx, const float *dy, const float *wt, long rows, int K, int N);
/** @brief t (cols x rows) = the transpose of w (rows x cols). */
void lowp_cnn_transpose(float *t, const float *w, int rows, int cols);

/**
 * @brief Logits (batch x 10) of images x (batch x 784, values in [0, 1]).
 * gemm (NULL: lowp_cnn_gemm_f32 with the network's weights) computes every
 * layer.
 * @return LOWP_OK, LOWP_ENOMEM, or the callback's status.
 */
int lowp_cnn_forward(float *logits, const float *x, size_t batch, const lowp_cnn_t *m,
                     lowp_cnn_gemm_fn gemm, void *ctx);

/**
 * @brief One SGD step with momentum (v = mu v + g; w -= lr v) on the mean
 * softmax cross-entropy of a batch (fp64 softmax per sample, fp64 mean).
 * @param[out] loss the batch's mean loss before the step
 * @return LOWP_OK; LOWP_EINVAL (a label > 9); LOWP_ENOMEM.
 */
int lowp_cnn_sgd_step(lowp_cnn_t *m, double *loss, const float *x, const uint8_t *labels,
                      size_t batch, float lr, float momentum);

#endif
