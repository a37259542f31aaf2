/* lowp_exp_fp8_quantization -- exercise 6: fp8 inference of two pre-trained networks shipped with lowp */

/*
 * Question: how much do two networks trained in FP32 and shipped with lowp
 *   (a CNN and a small vision transformer, models/) lose when their matrix
 *   products run in e4m3 or e5m2 -- per-tensor scaling as exercise 6 asks,
 *   then per-channel, 1x128-tile and MX-block scaling, accumulated in fp32
 *   or on the H100 tensor-core model with and without promotion -- compared
 *   with FP16 and BF16, on the full 10,000-image Fashion-MNIST test set,
 *   with paired statistics that can separate the formats; which layers carry
 *   the loss; and how does the transformer differ from the CNN?
 * Method: the shipped weights (models/cnn.safetensors and vit.safetensors, read by lib/io/
 *   safetensors; trained by `lowp run fp8-quantization --train=cnn|vit`,
 *   models/README.md) are frozen. Every matrix product ("site": a GEMM of
 *   the CNN, im2col for convolutions; the ViT's embedding, qkv, attention
 *   scores q k^T, P v, projection, MLP and head) gets its two operands
 *   quantized (kernels/cpu/qdq: round to nearest even, saturating):
 *   activations per tensor with a static amax calibrated on training
 *   images, weights per tensor or per output channel; or 1x128 tiles with
 *   fp32 scales (DeepSeek-V3, arXiv:2412.19437 sec. 3.3.1); or OCP MX v1.0
 *   blocks of 32 with E8M0 scales; e2m1 per tensor; block-scaled formats
 *   (--block_formats: MXFP8 e4m3/e5m2 and MXFP4 with E8M0 scales, NVFP4's
 *   e2m1 in blocks of 16 with UE4M3 scales and an fp32 tensor scale, each
 *   with its scale rule: lib/format/bsquant) on both operands along K.
 *   Accumulation in fp32 (fake quantization),
 *   or on the tensor-core model (lib/model/tc.h, preset h100, kernels/cpu/
 *   gemm_tc8) without promotion or promoted to fp32 every 128 products.
 *   Per image: prediction, correctness, KL divergence from the FP32
 *   softmax (per_image.csv.gz; the further scale phases in per_phase.csv.gz,
 *   one line per network, format and image: the predicted class at every
 *   phase as one string, and the KLs). Per configuration, paired with FP32 on the
 *   same images: top-1 agreement and mean KL (primary), the accuracy
 *   difference with a paired bootstrap 95% interval and McNemar's exact
 *   test. The per-tensor e4m3 and e5m2 rows again with every scale times
 *   2^(-j/16), j = 1..15 (no new saturation, the same format: the phase
 *   decides which values round up): reported as the median over the 16
 *   phases, their range, and a bootstrap interval whose replicates draw a
 *   phase with the images (fq_boot_ci_mix); comparisons with a per-tensor
 *   row run over its phases (the e4m3 - e5m2 gap over all 256 pairs).
 *   Further training seeds (--seed_models, models/seeds): their main,
 *   block and phase rows, and the spread over seeds.
 *   Per-layer sensitivity: one site group at a time. ViT outliers:
 *   kurtosis and max/RMS of every site's input, per tensor and per channel.
 *   Plots: accuracy.png (accuracy change vs FP32 with its paired bootstrap
 *   interval, grey where it spans 0: no ranking; the block rows; the
 *   per-tensor rows over their phases: median, range bars), kl.png and
 *   disagreement.png (per format and scaling), layers.png (per-layer
 *   sensitivity of both networks); data in plot_configs.csv, plot_layers.csv.
 * Cost: OpenMP over configurations (and over tasks of 50 images for the
 *   FP32 pass), calibration on one thread; the bytes do not depend on the
 *   thread count (cli_fp8q compares 1 and 2 threads).
 * Run: lowp run fp8-quantization [--quick]; training: --train=cnn|vit.
 */

#include "fp8q.h"
#include "results.h"

#include "cpu/gemm_tc8.h"
#include "io/atomic.h"
#include "io/escape.h"
#include "status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lowp_param_t params[] = {
    {"data", "/usr/share/datasets/fashion-mnist", NULL,
     "folder with the four Fashion-MNIST IDX files (.gz or not)"},
    {"models", "<source>/models", NULL, "folder with cnn.safetensors and vit.safetensors (the shipped models)"},
    {"test", "10000", "300", "test images evaluated (the first N of the file; 10000: all); training: the test accuracy of each epoch"},
    {"tc_test", "1000", "100", "test images for the tensor-core model configurations (the first N; slow arithmetic)"},
    {"layer_test", "2000", "300", "test images for the per-layer sensitivity configurations (the first N)"},
    {"calib", "1000", "200", "training images that calibrate activation amax and outlier statistics"},
    {"boot", "2000", "200", "paired bootstrap replicates (fixed seed)"},
    {"model", "h100", NULL, "tensor-core model for the fp8 GEMMs (lowp gemm --model; fp8 datapath with aligned truncation)"},
    {"promote", "128", NULL, "promotion interval N_C (products) and the 1xN_C tile of block scaling"},
    {"mx_block", "32", NULL, "MX block size of the e4m3/e5m2 mx rows (OCP MX v1.0: 32)"},
    {"block_formats", "mxfp8_e4m3:rceil,mxfp8_e5m2:rceil,mxfp4,mxfp4:rceil,nvfp4", NULL,
     "block-scaled formats (lowp formats --block; NAME[:RULE]) whose rows quantize both operands of every product "
     "along K with lowp_bs_quantize, fp32 accumulation; none: no such rows"},
    {"seed_models", "seeds/cnn_s20261123.safetensors,seeds/cnn_s20261124.safetensors,seeds/vit_s20261123.safetensors", NULL,
     "the same networks trained from other seeds (files under --models named cnn_* or vit_*; none: none): "
     "their main, block and phase rows give the spread over training seeds"},
    {"phases", "16", "4", "per-tensor scale phases: the e4m3/e5m2 tensor rows again with every scale times "
     "2^(-j/P), j = 1..P-1 (1: none)"},
    {"train", "none", NULL, "none: evaluate the shipped models; cnn or vit: train that model (fp32) into the output folder"},
    {"train_images", "60000", NULL, "training: the first N training images"},
    {"cnn_epochs", "15", NULL, "training: CNN epochs over the 60,000 training images"},
    {"vit_epochs", "10", NULL, "training: ViT epochs"},
    {"cnn_lr", "0.05", NULL, "training: CNN peak learning rate (SGD with momentum)"},
    {"vit_lr", "0.002", NULL, "training: ViT peak learning rate (AdamW)"},
    {"momentum", "0.9", NULL, "training: CNN momentum"},
    {"wd", "0.05", NULL, "training: ViT AdamW weight decay (weight matrices)"},
    {"batch", "64", NULL, "training: minibatch size"},
    {"warmup", "500", NULL, "training: linear warm-up steps before the cosine decay"},
    {"channels", "8,16", NULL, "training: CNN output channels of the two convolutions"},
    {"hidden", "64", NULL, "training: CNN hidden linear width"},
    {"vit_shape", "7,64,4,256,4", NULL, "training: ViT patch, width d, heads, MLP width, blocks"},
    {NULL, NULL, NULL, NULL}};

/* ------------------------------------------------------------ settings */

static void parse_train(const lowp_run_t *r, fq_settings_t *s) {
  long long c[5];
  int i;
  for (i = 0; i < 2; i++) {
    fq_train_cfg_t *t = &s->cfg[i];
    t->epochs = (long)lowp_run_param_int(r, i ? "vit_epochs" : "cnn_epochs", 1, 1000);
    t->lr = lowp_run_param_num(r, i ? "vit_lr" : "cnn_lr");
    if (!(t->lr > 0.0 && t->lr < 10.0)) lowp_run_bad_param(r, i ? "vit_lr" : "cnn_lr", "must be in (0, 10)");
    t->momentum = lowp_run_param_num(r, "momentum");
    if (!(t->momentum >= 0.0 && t->momentum < 1.0)) lowp_run_bad_param(r, "momentum", "must be in [0, 1)");
    t->wd = lowp_run_param_num(r, "wd");
    if (!(t->wd >= 0.0 && t->wd < 1.0)) lowp_run_bad_param(r, "wd", "must be in [0, 1)");
    t->batch = (long)lowp_run_param_int(r, "batch", 1, 4096);
    t->warmup = (long)lowp_run_param_int(r, "warmup", 1, 1000000);
    t->images = (long)lowp_run_param_int(r, "train_images", 1, 60000);
    t->test = (long)lowp_run_param_int(r, "test", 1, 10000);
  }
  if (lowp_run_param_list_int(r, "channels", c, 2, 1, 256) != 2)
    lowp_run_bad_param(r, "channels", "expected two channel counts, e.g. 8,16");
  s->cfg[0].c1 = (int)c[0];
  s->cfg[0].c2 = (int)c[1];
  s->cfg[0].hidden = (int)lowp_run_param_int(r, "hidden", 1, 1024);
  if (lowp_run_param_list_int(r, "vit_shape", c, 5, 1, 1024) != 5 || 28 % c[0] || c[1] % c[2] ||
      c[4] > LOWP_VIT_MAXLAYERS || (28 / c[0]) * (28 / c[0]) > 64)
    lowp_run_bad_param(r, "vit_shape", "expected patch,d,heads,mlp,blocks: patch divides 28 with at most 64 "
                                       "patches, heads divides d, at most 8 blocks");
  s->cfg[1].patch = (int)c[0]; s->cfg[1].d = (int)c[1]; s->cfg[1].heads = (int)c[2];
  s->cfg[1].mlp = (int)c[3]; s->cfg[1].layers = (int)c[4];
}

static void parse_tc(const lowp_run_t *r, fq_settings_t *s) {
  const lowp_format_t *f8[2] = {&LOWP_FMT_E4M3, &LOWP_FMT_E5M2};
  char err[512];
  int i;
  for (i = 0; i < 2; i++) {
    int st = lowp_tc_model_get(&s->tc[i], s->tcmodel, f8[i], &LOWP_FMT_FP32, err, sizeof err);
    if (st != LOWP_OK) lowp_run_bad_param(r, "model", err);
    if (lowp_tc8_supported(&s->tc[i], f8[i]) != LOWP_OK)
      lowp_run_bad_param(r, "model", "the fast fp8 path needs a datapath with truncated alignment, "
                                     "no sticky bit, no late c or interleaving (h100, h200, ada, or b=..,F=..)");
    if (s->promote % s->tc[i].bfma.b) {
      snprintf(err, sizeof err, "must be a multiple of the model's block size %d", s->tc[i].bfma.b);
      lowp_run_bad_param(r, "promote", err);
    }
    s->tc[i].promote = 0; /* chunks are passed explicitly */
  }
}

static void parse_block_formats(const lowp_run_t *r, fq_settings_t *s) {
  const char *p = lowp_run_param(r, "block_formats");
  char err[512];
  s->nbs = 0;
  if (!strcmp(p, "none")) return;
  while (*p) {
    size_t len = strcspn(p, ",");
    if (s->nbs == FQ_MAXBS) lowp_run_bad_param(r, "block_formats", "at most 8 formats");
    if (len == 0 || len >= sizeof s->bsname[0]) lowp_run_bad_param(r, "block_formats", "expected NAME[:RULE],...");
    memcpy(s->bsname[s->nbs], p, len);
    s->bsname[s->nbs][len] = 0;
    if (lowp_bsformat_parse(&s->bsf[s->nbs], s->bsname[s->nbs], err, sizeof err) != LOWP_OK)
      lowp_run_bad_param(r, "block_formats", err);
    if (s->bsf[s->nbs].elem_int) lowp_run_bad_param(r, "block_formats", "integer elements are not evaluated here");
    s->nbs++;
    p += len + (p[len] == ',');
  }
}

/* --seed_models: up to FQ_MAXSEEDS files under the models folder, each named cnn_* or vit_* and readable */
static void parse_seed_models(const lowp_run_t *r, fq_settings_t *s) {
  const char *p = lowp_run_param(r, "seed_models");
  s->nseedm = 0;
  if (!strcmp(p, "none")) return;
  while (*p) {
    size_t len = strcspn(p, ",");
    char path[4096 + 300];
    FILE *f;
    if (s->nseedm == FQ_MAXSEEDS) lowp_run_bad_param(r, "seed_models", "at most 4 files");
    if (len == 0 || len >= sizeof s->seedm[0]) lowp_run_bad_param(r, "seed_models", "expected FILE,... under --models");
    memcpy(s->seedm[s->nseedm], p, len);
    s->seedm[s->nseedm][len] = 0;
    {
      const char *base = strrchr(s->seedm[s->nseedm], '/');
      base = base ? base + 1 : s->seedm[s->nseedm];
      if (strncmp(base, "cnn_", 4) && strncmp(base, "vit_", 4))
        lowp_run_bad_param(r, "seed_models", "each file's name starts with cnn_ or vit_ (the network it holds)");
    }
    snprintf(path, sizeof path, "%s/%s", s->models, s->seedm[s->nseedm]);
    if (!(f = fopen(path, "rb"))) {
      char why[4096 + 400];
      lowp_errf(why, sizeof why, 0, "%s: cannot open this further seed's model", path);
      lowp_run_bad_param(r, "seed_models", why);
    }
    fclose(f);
    s->nseedm++;
    p += len + (p[len] == ',');
  }
}

static void parse_settings(const lowp_run_t *r, fq_settings_t *s) {
  char path[4096 + 64];
  int i;
  memset(s, 0, sizeof *s);
  snprintf(s->data, sizeof s->data, "%s", lowp_run_param(r, "data"));
  lowp_run_param_path(r, "models", s->models, sizeof s->models);
  s->train = lowp_run_param(r, "train");
  if (strcmp(s->train, "none") && strcmp(s->train, "cnn") && strcmp(s->train, "vit"))
    lowp_run_bad_param(r, "train", "expected none, cnn or vit");
  s->tcmodel = lowp_run_param(r, "model");
  s->test = (long)lowp_run_param_int(r, "test", 1, 10000);
  s->tc_test = (long)lowp_run_param_int(r, "tc_test", 1, 10000);
  s->layer_test = (long)lowp_run_param_int(r, "layer_test", 1, 10000);
  s->calib = (long)lowp_run_param_int(r, "calib", 1, 60000);
  s->boot = (long)lowp_run_param_int(r, "boot", 10, 100000);
  s->promote = (long)lowp_run_param_int(r, "promote", 1, 4096);
  s->mxblock = (long)lowp_run_param_int(r, "mx_block", 1, 4096);
  s->phases = (long)lowp_run_param_int(r, "phases", 1, FQ_MAXPHASE);
  parse_block_formats(r, s);
  parse_train(r, s);
  parse_tc(r, s);
  for (i = 0; i < 4; i++) /* the dataset must be there before anything is written */
    if (!fq_data_path(path, sizeof path, s->data, fq_file_names[i])) {
      char why[4096 + 256];
      snprintf(why, sizeof why,
               "Fashion-MNIST file %s[.gz] not found; install the Debian package "
               "dataset-fashion-mnist (bash tools/setup.sh does) or pass --data=DIR", fq_file_names[i]);
      lowp_run_bad_param(r, "data", why);
    }
  if (!strcmp(s->train, "none"))
    for (i = 0; i < 2; i++) {
      FILE *f;
      snprintf(path, sizeof path, "%s/%s.safetensors", s->models, i ? "vit" : "cnn");
      if (!(f = fopen(path, "rb"))) {
        char why[4096 + 256];
        snprintf(why, sizeof why, "%s: cannot open the shipped model (train it with --train=%s)", path,
                 i ? "vit" : "cnn");
        lowp_run_bad_param(r, "models", why);
      }
      fclose(f);
    }
  if (!strcmp(s->train, "none")) parse_seed_models(r, s);
}

/* The two splits as check() read and checked them, kept for run() in the same process (the run's
   framework calls check, then run): reading them is most of a quick run's fixed cost (the training
   images' 26 MB of gzip inflated, about 0.25 s of CPU), and run() reads the same files. */
static fq_data_t checked_split[2];
static const char *checked_dir; /* the parameter's text, which lives as long as the run */
static int have_checked;

/* Every parameter and the dataset's files before anything is printed or created. */
static void check(const lowp_run_t *r) {
  fq_settings_t s;
  int test;
  parse_settings(r, &s);
  if (have_checked) {
    fq_free_split(&checked_split[0]);
    fq_free_split(&checked_split[1]);
    have_checked = 0;
  }
  for (test = 0; test < 2; test++) fq_load_split(r, s.data, &checked_split[test], test);
  checked_dir = lowp_run_param(r, "data");
  have_checked = 1;
}

/* ------------------------------------------------------------ training */

static int run_train(lowp_run_t *r, const fq_settings_t *s, const fq_data_t *tr, const fq_data_t *te) {
  fq_kind_t kind = strcmp(s->train, "cnn") ? FQ_VIT : FQ_CNN;
  const char *name = kind == FQ_CNN ? "cnn" : "vit";
  char file[64];
  lowp_atomic_t w;
  fq_model_t m;
  int st;
  memset(&m, 0, sizeof m);
  snprintf(file, sizeof file, "%s_training.csv", name);
  st = lowp_atomic_open(&w, lowp_run_path(r, file));
  if (st != LOWP_OK) {
    fprintf(stderr, "lowp run fp8-quantization: cannot write %s: %s\n", file, lowp_status_str(st));
    return 2;
  }
  fprintf(w.fp, "epoch,step,lr,train_loss,test_accuracy_pct\n");
  st = fq_train(r, &m, kind, &s->cfg[kind], r->seed, tr, te, w.fp);
  if (st == LOWP_OK) st = lowp_atomic_commit(&w);
  else lowp_atomic_abort(&w);
  snprintf(file, sizeof file, "%s.safetensors", name);
  if (st == LOWP_OK) st = fq_model_save(&m, lowp_run_path(r, file));
  if (st != LOWP_OK) {
    fprintf(stderr, "lowp run fp8-quantization: training %s: %s\n", name, lowp_status_str(st));
    fq_model_free(&m);
    return 2;
  }
  {
    char ans[512];
    snprintf(ans, sizeof ans, "Trained the %s (%zu parameters) in fp32 from seed %llu: weights in %s, "
             "training curve in %s_training.csv (test accuracy per epoch on all %zu test images).",
             name, fq_nparams(&m), (unsigned long long)r->seed, file, name, te->n);
    cJSON_AddStringToObject(r->results, "answer", ans);
    fprintf(r->summary, "**Answer.** %s\n", ans);
  }
  fq_model_free(&m);
  return 0;
}

static int run(lowp_run_t *r) {
  fq_settings_t s;
  fq_data_t tr, te;
  int rc;
  parse_settings(r, &s);
  lowp_run_progress(r, "reading Fashion-MNIST from %s", s.data);
  if (have_checked && !strcmp(checked_dir, s.data)) {
    tr = checked_split[0]; /* check()'s reading of the same folder: the splits move here */
    te = checked_split[1];
    have_checked = 0;
  } else {
    fq_load_split(r, s.data, &tr, 0);
    fq_load_split(r, s.data, &te, 1);
  }
  if ((size_t)s.test > te.n) lowp_run_bad_param(r, "test", "more than the test file holds");
  if ((size_t)s.calib > tr.n) lowp_run_bad_param(r, "calib", "more than the training file holds");
  if (s.tc_test > s.test) s.tc_test = s.test;
  if (s.layer_test > s.test) s.layer_test = s.test;
  rc = strcmp(s.train, "none") ? run_train(r, &s, &tr, &te) : fq_evaluate(r, &s, &tr, &te);
  fq_free_split(&tr);
  fq_free_split(&te);
  return rc;
}

const lowp_experiment_t lowp_exp_fp8_quantization = {
    "fp8-quantization",
    "How much accuracy do two networks pre-trained in FP32 and shipped with lowp (a CNN and a small vision "
    "transformer) lose with e4m3 or e5m2 matrix products (per-tensor scaling as exercise 6 asks, then "
    "per-channel, 1x128-tile and MX-block scaling; fp32 accumulation or the H100 tensor-core model with and "
    "without promotion), compared with FP16 and BF16, on the full test set with paired statistics, which "
    "layers carry the loss, and how does the transformer differ from the CNN?",
    "The shipped weights ({models}/cnn.safetensors, vit.safetensors; trained once in fp32 by --train=cnn|vit) "
    "are evaluated on the first {test} Fashion-MNIST test images with every matrix product's two operands "
    "quantized (round to nearest even, saturating): per tensor (activation amax calibrated on {calib} training "
    "images), per output channel, 1x{promote} tiles with fp32 scales, OCP MX blocks of {mx_block} with E8M0 "
    "scales; e2m1 per tensor and the block-scaled formats {block_formats} (MXFP8/MXFP4: blocks of 32, E8M0 "
    "scales; NVFP4: e2m1 in blocks of 16 with UE4M3 scales and a per-tensor fp32 scale, two-level rule) on both "
    "operands; the per-tensor e4m3 and e5m2 rows at {phases} scale phases (every scale times 2^(-j/{phases})); "
    "accumulated in fp32, or on the {model} tensor-core model with and without promotion every "
    "{promote} products (on the first {tc_test} images). Paired with FP32 image by image: top-1 agreement and "
    "KL divergence of the softmax (primary), accuracy difference with a paired bootstrap 95% interval "
    "({boot} replicates) and McNemar's exact test; per-layer sensitivity (one layer group quantized at a time, "
    "on the first {layer_test} images); ViT outlier statistics.",
    "FP32 about 91% (CNN) and 88-89% (ViT); FP16 and BF16 indistinguishable from FP32; scaled e4m3 within a "
    "few tenths of a point with agreement above 99%, e5m2 worse; the transformer more sensitive than the "
    "CNN; promotion matters little at these short dot products.",
    params, run, check};
