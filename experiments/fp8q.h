/* fp8q -- the pieces of exercise 6 (experiments/fp8_quantization.c): data, models, training,
   quantized evaluation, paired statistics */
#ifndef LOWP_FP8Q_H
#define LOWP_FP8Q_H

#include "catalog.h"

#include "train/cnn.h"
#include "cpu/qdq.h"
#include "train/vit.h"
#include "format/bsformat.h"
#include "format/format.h"
#include "io/idx.h"
#include "model/tc.h"

#include <stddef.h>
#include <stdint.h>

#define FQ_NCLASS 10
#define FQ_MAXSITES 64
#define FQ_MAXBS 8     /* block-scaled formats evaluated (--block_formats) */
#define FQ_MAXPHASE 32 /* per-tensor scale phases (--phases) */
#define FQ_MAXSEEDS 4  /* further training seeds evaluated (--seed_models) */

/* ---------------------------------------------------------------- data */

/** @brief One split of Fashion-MNIST: images N x 28 x 28 uint8, labels N. */
typedef struct {
  lowp_idx_t img, lab;
  size_t n;
} fq_data_t;

/** @brief The four file names, train images/labels then test images/labels. */
extern const char *const fq_file_names[4];
/** @brief dir/name, or dir/name.gz if that exists; 0 if neither opens. */
int fq_data_path(char *out, size_t len, const char *dir, const char *name);
/** @brief Read and check a split (test = 1: t10k); bad files exit 2 through lowp_run_bad_param. */
void fq_load_split(const lowp_run_t *r, const char *dir, fq_data_t *d, int test);
void fq_free_split(fq_data_t *d);
/** @brief x (n x 784) = images idx[first..first+n) (idx NULL: first..) / 255 in fp32; y their labels. */
void fq_gather(float *x, uint8_t *y, const fq_data_t *d, const size_t *idx, size_t first, size_t n);
/** @brief Label of image i. */
int fq_label(const fq_data_t *d, size_t i);

/* -------------------------------------------------------------- models */

typedef enum { FQ_CNN = 0, FQ_VIT = 1 } fq_kind_t;

/** @brief Either network. */
typedef struct {
  fq_kind_t kind;
  lowp_cnn_t cnn;
  lowp_vit_t vit;
} fq_model_t;

/** @brief A matrix product of a model ("site"): y = x w + b. */
typedef struct {
  char name[32];  /**< "conv1", "block0.qkv", ... */
  char group[16]; /**< its kind: "conv1", "qkv", "scores", ... (per-layer sensitivity groups) */
  int K, N;
  const float *w, *b; /**< NULL w: both operands are activations (attention) */
} fq_site_t;

/** @brief The site callback of both networks (see lowp_vit_gemm_fn). */
typedef lowp_vit_gemm_fn fq_gemm_fn;

int fq_nsites(const fq_model_t *m);
fq_site_t fq_site(const fq_model_t *m, int s);
size_t fq_nparams(const fq_model_t *m);
void fq_model_free(fq_model_t *m);
/** @brief Logits (n x 10) of images x (n x 784); gemm NULL: fp32. */
int fq_forward(float *logits, const float *x, size_t n, const fq_model_t *m, fq_gemm_fn gemm, void *ctx);
/** @brief Logits of the first n images of d, in chunks. */
int fq_logits(float *logits, const fq_data_t *d, size_t n, const fq_model_t *m, fq_gemm_fn gemm, void *ctx);
/** @brief The same, with an observer of the ViT's residual stream (ignored for the CNN). */
int fq_logits_observed(float *logits, const fq_data_t *d, size_t n, const fq_model_t *m, fq_gemm_fn gemm,
                       void *ctx, lowp_vit_observe_fn obs, void *octx);
/** @brief Write m as .safetensors (F32 tensors; the ViT's shape in an I64 "config" tensor). */
int fq_model_save(const fq_model_t *m, const char *path);
/** @brief Read a model written by fq_model_save; err gets one line. */
int fq_model_load(fq_model_t *m, fq_kind_t kind, const char *path, char *err, size_t errlen);

struct fq_qnet;
/** @brief Logits of the first n images of d, q NULL: fp32, else through fq_qgemm with q (its activation
    statistics summed in); OpenMP over tasks of images, the bytes do not depend on the thread count. */
int fq_logits_q(float *logits, const fq_data_t *d, size_t n, const fq_model_t *m, struct fq_qnet *q);

/* ------------------------------------------------------------ training */

typedef struct {
  long epochs, batch, warmup, images, test; /* the first `images` training images; accuracy on the first `test` */
  double lr, momentum, wd;
  int c1, c2, hidden;                      /* CNN */
  int patch, d, heads, mlp, layers;        /* ViT */
} fq_train_cfg_t;

/** @brief Train a new model of the kind given from seed; curve: CSV rows
    "epoch,step,lr,train_loss,test_accuracy" appended to the open FILE. */
int fq_train(lowp_run_t *r, fq_model_t *m, fq_kind_t kind, const fq_train_cfg_t *c, uint64_t seed,
             const fq_data_t *tr, const fq_data_t *te, FILE *curve);

/* ---------------------------------------------------------- quantization */

typedef enum { FQ_ACC_F32 = 0, FQ_ACC_TC = 1, FQ_ACC_TCP = 2 } fq_acc_t;

/** @brief One evaluated configuration. */
typedef struct {
  char label[64];
  const lowp_format_t *f; /**< NULL: the fp32 reference */
  lowp_qscheme_t ws, as;
  fq_acc_t acc;
  uint64_t sites; /**< bit s: site s quantized */
  int kind;       /**< 0 main, 1 tensor-core (subset), 2 per layer, 3 scale phase j > 0 of a per-tensor row */
  int group;      /**< per-layer rows: the group index */
  const lowp_bsformat_t *bs; /**< non-NULL: both operands in this block-scaled format along K (lowp_bs_quantize,
                                  the format's scale rule), dequantized, fp32 accumulation; f, ws, as unused */
  int phase, nphase;         /**< per-tensor scales times 2^(-phase / nphase) (phase 0: the plain row) */
  int base;                  /**< phase rows: the index of their phase-0 row */
} fq_config_t;

/** @brief Calibration and outlier statistics of one site's inputs (fp32 network). */
typedef struct {
  double amax_x, amax_w;     /**< x operand; w operand if an activation */
  double s2, s4, n;          /**< sums of x^2, x^4 and count */
  double *colmax, *col2;     /**< per input channel (K): amax, sum of squares */
  int act_w;                 /**< set by the caller: the w operand is an activation */
} fq_calib_t;

/** @brief What the quantized callback needs. */
typedef struct fq_qnet {
  const fq_config_t *c;
  const fq_model_t *m;
  const fq_calib_t *cal;
  const lowp_tc_model_t *tc;
  size_t tile, mxblock;
  float *wq[FQ_MAXSITES];                 /* fp32 accumulation: dequantized weights, K x N */
  double *qbt[FQ_MAXSITES];               /* tensor-core model: quantized, N x K */
  int8_t *xb[FQ_MAXSITES];
  float *bs[FQ_MAXSITES];
  double ax[FQ_MAXSITES], aw[FQ_MAXSITES]; /* calibrated activation amax of x, w (an activation), times
                                              2^(phase / nphase): the per-tensor scales' phase */
  lowp_qstats_t wst, ast;
} fq_qnet_t;

int fq_qnet_build(fq_qnet_t *q, const fq_config_t *c, const fq_model_t *m, const fq_calib_t *cal,
                  const lowp_tc_model_t *tc, size_t tile, size_t mxblock);
void fq_qnet_free(fq_qnet_t *q);
/** @brief The quantized site callback (ctx: fq_qnet_t). */
int fq_qgemm(float *y, float *x, size_t rows, int K, int N, const float *w, const float *bias,
             size_t nb, int site, void *ctx);
/** @brief Residual-stream statistics (ctx: fq_calib_t array indexed by point, colmax/col2 of d). */
void fq_resid_observe(const float *h, size_t rows, int d, int point, void *ctx);
/** @brief Calibrate (ctx: fq_calib_t array of fq_nsites, colmax/col2 allocated). */
int fq_calib_gemm(float *y, float *x, size_t rows, int K, int N, const float *w, const float *bias,
                  size_t nb, int site, void *ctx);

/* ------------------------------------------------------------ statistics */

/** @brief Exact two-sided McNemar p-value: 2 P(X <= min(b, c)), X ~ Bin(b + c, 1/2), capped at 1. */
double fq_mcnemar(long b, long c);
/** @brief KL(p || q) in nats of the softmaxes of two logit vectors (fp64). */
double fq_kl(const float *zp, const float *zq);
/** @brief Argmax of 10 logits (first maximum). */
int fq_argmax(const float *z);
/** @brief Bootstrap replicate weights: w[b * n + i] = times image i is drawn in replicate b (Philox (seed, 77))
    n draws with replacement per replicate. */
int fq_boot_weights(uint8_t **w, size_t n, int reps, uint64_t seed);
/** @brief 2.5% and 97.5% percentiles of the replicate differences sum_i w_i d_i / n (d in {-1, 0, 1}). */
void fq_boot_ci(const uint8_t *w, size_t n, int reps, const int8_t *d, double *lo, double *hi);
/** @brief The same with a nuisance choice drawn too: replicate b takes difference vector d[k] (n values),
    k uniform in 0..nd-1 from Philox (seed, 78000 + b), and the images by w: the interval covers both the
    test-image sampling and the spread over the nd choices (e.g. scale phases). */
void fq_boot_ci_mix(const uint8_t *w, size_t n, int reps, const int8_t *const *d, int nd, uint64_t seed,
                    double *lo, double *hi);

/* ------------------------------------------------------------ the run */

/** @brief The parameters of a run, parsed and checked. */
typedef struct {
  char data[4096], models[4096];
  const char *train, *tcmodel;
  long test, tc_test, layer_test, calib, promote, mxblock, boot, phases;
  lowp_bsformat_t bsf[FQ_MAXBS]; /* --block_formats, in order */
  char bsname[FQ_MAXBS][48];     /* as given */
  int nbs;
  char seedm[FQ_MAXSEEDS][256]; /* --seed_models: files under models, "cnn_..." or "vit_..." */
  int nseedm;
  fq_train_cfg_t cfg[2]; /* cnn, vit */
  lowp_tc_model_t tc[2]; /* e4m3, e5m2 */
} fq_settings_t;

/** @brief The evaluation of the shipped models (the default run). */
int fq_evaluate(lowp_run_t *r, const fq_settings_t *s, const fq_data_t *tr, const fq_data_t *te);

#endif
