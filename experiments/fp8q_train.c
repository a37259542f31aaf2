/* fp8q_train -- training exercise 6's networks in fp32 (run once; the shipped weights come from here) */

/*
 * Data order: a Fisher-Yates permutation of the training images per epoch
 * from Philox stream (seed, 1000 + epoch). Learning rate: linear warm-up
 * over the first `warmup` steps, then a cosine decay to zero at the last
 * step (Loshchilov and Hutter, SGDR, arXiv:1608.03983, without restarts).
 * CNN: SGD with momentum (kernels/train/cnn); ViT: AdamW (kernels/train/vit).
 * Deterministic: the same seed and settings give the same bytes.
 */

#include "fp8q.h"

#include "rng/rng.h"
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PI 3.14159265358979323846

static double lr_at(const fq_train_cfg_t *c, long step, long total) {
  if (step < c->warmup) return c->lr * (double)(step + 1) / (double)c->warmup;
  return c->lr * 0.5 * (1.0 + cos(PI * (double)(step - c->warmup) / (double)(total - c->warmup)));
}

static void shuffle(size_t *perm, size_t n, uint64_t seed, long epoch) {
  lowp_rng_t rng;
  size_t i;
  lowp_rng_init(&rng, seed, (uint32_t)(1000 + epoch));
  for (i = 0; i < n; i++) perm[i] = i;
  for (i = n - 1; i > 0; i--) {
    size_t j = (size_t)(lowp_rng_next(&rng) % (uint64_t)(i + 1)), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

static double test_accuracy(const fq_model_t *m, const fq_data_t *te, size_t n, int *st) {
  float *lg = malloc(n * FQ_NCLASS * sizeof *lg);
  size_t i, ok = 0;
  *st = lg ? fq_logits_q(lg, te, n, m, NULL) : LOWP_ENOMEM;
  for (i = 0; *st == LOWP_OK && i < n; i++) ok += fq_argmax(lg + i * FQ_NCLASS) == fq_label(te, i);
  free(lg);
  return (double)ok / (double)n;
}

static int step(fq_model_t *m, double *loss, const float *x, const uint8_t *y, size_t len,
                const fq_train_cfg_t *c, double lr) {
  int st;
  if (m->kind == FQ_CNN) return lowp_cnn_sgd_step(&m->cnn, loss, x, y, len, (float)lr, (float)c->momentum);
  st = lowp_vit_grad(&m->vit, loss, x, y, len);
  if (st == LOWP_OK) lowp_vit_adamw(&m->vit, (float)lr, (float)c->wd);
  return st;
}

int fq_train(lowp_run_t *r, fq_model_t *m, fq_kind_t kind, const fq_train_cfg_t *c, uint64_t seed,
             const fq_data_t *tr, const fq_data_t *te, FILE *curve) {
  size_t n = (size_t)c->images < tr->n ? (size_t)c->images : tr->n, *perm = malloc(n * sizeof *perm), b;
  size_t B = (size_t)c->batch;
  float *x = malloc(B * 784 * sizeof *x);
  uint8_t *y = malloc(B);
  long e, nstep = 0, total = c->epochs * (long)((n + B - 1) / B);
  int st;
  struct timespec t0, t1;
  m->kind = kind;
  st = kind == FQ_CNN ? lowp_cnn_init(&m->cnn, c->c1, c->c2, c->hidden, seed)
                      : lowp_vit_init(&m->vit, c->patch, c->d, c->heads, c->mlp, c->layers, seed);
  if (st == LOWP_OK && (!perm || !x || !y)) st = LOWP_ENOMEM;
  timespec_get(&t0, TIME_UTC);
  for (e = 0; e < c->epochs && st == LOWP_OK; e++) {
    double sum = 0.0, lr = 0.0, acc;
    shuffle(perm, n, seed, e);
    for (b = 0; b < n && st == LOWP_OK; b += B, nstep++) {
      size_t len = n - b < B ? n - b : B;
      double loss;
      lr = lr_at(c, nstep, total);
      fq_gather(x, y, tr, perm, b, len);
      st = step(m, &loss, x, y, len, c, lr);
      sum += loss * (double)len;
      if ((b / B) % 50 == 0)
        lowp_run_progress(r, "training %s: epoch %ld/%ld, %zu/%zu images, loss %.4f",
                          kind == FQ_CNN ? "cnn" : "vit", e + 1, c->epochs, b, n, sum / (double)(b + len));
    }
    if (st != LOWP_OK) break;
    acc = test_accuracy(m, te, (size_t)c->test < te->n ? (size_t)c->test : te->n, &st);
    timespec_get(&t1, TIME_UTC);
    fprintf(curve, "%ld,%ld,%.9g,%.9g,%.4f\n", e + 1, nstep, lr, sum / (double)n, 100.0 * acc);
    fflush(curve);
    /* stdout only (not in any file: wall time changes between runs) */
    printf("%s epoch %ld/%ld: train loss %.4f, test accuracy %.2f%% (%.0f s)\n", kind == FQ_CNN ? "cnn" : "vit",
           e + 1, c->epochs, sum / (double)n, 100.0 * acc,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    fflush(stdout);
  }
  free(perm);
  free(x);
  free(y);
  return st;
}
