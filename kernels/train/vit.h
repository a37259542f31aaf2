/* lowp_vit -- a small fp32 vision transformer for 28x28 images: forward, backprop, AdamW */
#ifndef LOWP_VIT_H
#define LOWP_VIT_H

#include "cpu.h"

#include <stddef.h>
#include <stdint.h>

/*
 * The image (28 x 28, values in [0, 1]) is cut into P x P patches (P
 * divides 28), T = (28 / P)^2 tokens of P^2 pixels each, token t = py *
 * (28 / P) + px, pixel k = dy * P + dx. Then (Dosovitskiy et al. 2020,
 * arXiv:2010.11929, with pre-layer-norm blocks and mean pooling):
 *
 *   h = patches We + be + pos                       (embed; pos: T x d)
 *   per block:  a = LN1(h); [q k v] = a Wqkv + bqkv
 *               per head (d / heads wide): S = q k^T, P = softmax(S / sqrt(dh))
 *               o = [P v for every head]; h = h + o Wo + bo
 *               c = LN2(h); h = h + gelu(c W1 + b1) W2 + b2
 *   logits = mean over tokens of LNf(h), then Wh + bh
 *
 * LN(x) = (x - mean) / sqrt(var + 1e-5) g + b over the d features of a token
 * (mean and variance summed in fp64, rounded to fp32 once); gelu is the tanh
 * form 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) (Hendrycks and
 * Gimpel 2016, arXiv:1606.08415), evaluated in fp64 and rounded to fp32;
 * softmax subtracts the row maximum, exponentiates in fp64 and normalises
 * in fp64. Matrices are input-major (K x N: y = x W), as in kernels/train/cnn.
 *
 * Every matrix product is a "site" that a quantized deployment changes:
 *   site 0 embed; for block l: 1 + 6l qkv, 2 + 6l scores (q k^T), 3 + 6l
 *   P v, 4 + 6l proj, 5 + 6l fc1, 6 + 6l fc2; 1 + 6 layers: head.
 * Scores and P v multiply two activations, once per image and head.
 *
 * Deterministic: sums in a fixed order, threads split independent outputs
 * only: the same seed gives the same bytes whatever the number of threads.
 */

#define LOWP_VIT_MAXLAYERS 8
#define LOWP_VIT_NCLASS 10

/** @brief Site kinds (site s of block l is 1 + 6 l + kind - 1). */
enum { LOWP_VIT_EMBED = 0, LOWP_VIT_QKV, LOWP_VIT_SCORES, LOWP_VIT_PV, LOWP_VIT_PROJ,
       LOWP_VIT_FC1, LOWP_VIT_FC2, LOWP_VIT_HEAD };

/** @brief The network: every parameter tensor in one buffer (see lowp_vit_tensor). */
typedef struct {
  int patch, tokens, pdim, d, heads, mlp, layers;
  size_t nparams;
  int ntensors;
  float *w;          /**< nparams parameters */
  float *g;          /**< their gradient (lowp_vit_grad) */
  float *m1, *m2;    /**< AdamW moments */
  long step;         /**< AdamW steps taken */
} lowp_vit_t;

/** @brief One parameter tensor: its name ("blocks.0.qkv.w"), place, shape. */
typedef struct {
  char name[48];
  size_t offset, count;
  int ndim;
  size_t shape[2];
  int decay; /**< 1: a weight matrix (AdamW decays it) */
  int site;  /**< the site whose weight or bias it is; -1 for layer norms and pos */
} lowp_vit_tensor_t;

/**
 * @brief A site's product: y (nb blocks of rows x N) = x (nb blocks of rows
 * x K) times w (nb blocks of K x N; nb = 1 for a weight) plus bias (N, or
 * NULL). x is scratch (the callee may modify it). Returns a status; non-zero
 * stops the pass.
 */
typedef int (*lowp_vit_gemm_fn)(float *y, float *x, size_t rows, int K, int N, const float *w,
                                const float *bias, size_t nb, int site, void *ctx);

/** @brief Number of sites: 2 + 6 layers. */
int lowp_vit_nsites(const lowp_vit_t *m);
/** @brief The kind (LOWP_VIT_EMBED..HEAD) and block (-1 for embed and head) of a site. */
int lowp_vit_site_kind(const lowp_vit_t *m, int site, int *block);

/**
 * @brief Allocate a network; weights normal with std 1/sqrt(fan-in)
 * (proj and fc2 times 1/sqrt(2 layers)), pos std 0.02, from Philox stream
 * (seed, tensor index); layer-norm gains 1, biases 0, moments 0.
 * @return LOWP_OK; LOWP_EINVAL (patch not dividing 28, heads not dividing
 *         d, a size out of [1, 1024], layers > LOWP_VIT_MAXLAYERS); LOWP_ENOMEM.
 */
int lowp_vit_init(lowp_vit_t *m, int patch, int d, int heads, int mlp, int layers, uint64_t seed);
/** @brief Free (safe on a zeroed struct). */
void lowp_vit_free(lowp_vit_t *m);
/** @brief Tensor i (0 <= i < ntensors). */
lowp_vit_tensor_t lowp_vit_tensor(const lowp_vit_t *m, int i);

/** @brief The fp32 product of a site: lowp_cnn_gemm_f32 per block. */
void lowp_vit_gemm_f32(float *y, const float *x, size_t rows, int K, int N, const float *w,
                       const float *bias, size_t nb);

/**
 * @brief Logits (batch x 10) of images x (batch x 784). gemm NULL: fp32.
 * @return LOWP_OK, LOWP_ENOMEM, or the callback's status.
 */
int lowp_vit_forward(float *logits, const float *x, size_t batch, const lowp_vit_t *m,
                     lowp_vit_gemm_fn gemm, void *ctx);

/**
 * @brief An observer of the residual stream h (rows = batch x tokens, d
 * wide): called after the embedding (point 0) and after each block (point
 * l + 1), read-only.
 */
typedef void (*lowp_vit_observe_fn)(const float *h, size_t rows, int d, int point, void *ctx);

/** @brief lowp_vit_forward, with an observer of the residual stream (may be NULL). */
int lowp_vit_forward_observed(float *logits, const float *x, size_t batch, const lowp_vit_t *m,
                              lowp_vit_gemm_fn gemm, void *ctx, lowp_vit_observe_fn obs, void *octx);

/**
 * @brief m->g = the gradient of the mean softmax cross-entropy of a batch
 * (fp64 softmax per sample); *loss = that mean.
 * @return LOWP_OK; LOWP_EINVAL (a label > 9); LOWP_ENOMEM.
 */
int lowp_vit_grad(lowp_vit_t *m, double *loss, const float *x, const uint8_t *labels, size_t batch);

/**
 * @brief One AdamW step from m->g (Loshchilov and Hutter, arXiv:1711.05101;
 * beta1 0.9, beta2 0.999, eps 1e-8, bias-corrected): w -= lr (mhat / (sqrt
 * vhat + eps) + wd w), the decay on weight matrices only.
 */
void lowp_vit_adamw(lowp_vit_t *m, float lr, float wd);

/* For tests/tvit_softmax.c: the attention's row softmax of S * scale (n rows of T <= 1024, scale > 0)
   into P through the copy for isa (at most what this CPU runs with FMA), the bits of the fp64 definition
   with libm's exp from every copy; returns the rows the vectorised copy left to the definition. */
size_t lowp__vit_softmax_rows(float *P, const float *S, size_t n, int T, double scale, lowp_isa_t isa);

#endif
