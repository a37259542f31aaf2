/* tvit -- the small vision transformer: gradients against finite differences, callbacks, threads */

/*
 * Build: cmake --build build --target tvit; run from the source root.
 *
 * (1) Every parameter tensor of a tiny ViT (7x7 patches, d = 8, 2 heads,
 * MLP 12, 2 blocks) on 3 dense random images: the backprop gradient of the
 * mean cross-entropy (lowp_vit_grad) against central finite differences of
 * the loss of the forward pass (lowp_vit_forward, cross-entropy in fp64),
 * at up to 8 coordinates per tensor (the network is smooth: GELU, softmax,
 * layer norm, no kinks). (2) A callback that computes every site with the
 * fp32 GEMM gives the same logits bit for bit, and is called once per site
 * per pass with the documented shapes. (3) Gradients with 1 and 2 threads
 * are the same bytes. (4) AdamW steps on a fixed batch lower its loss.
 * The forward pass itself is checked independently by the numpy evaluator
 * (tests/numpy/fp8q_eval.py) against the shipped model.
 */

#include "train/vit.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 3 };

static double loss_of(const lowp_vit_t *m, const float *x, const uint8_t *y) {
  float z[B * 10];
  double s = 0.0;
  int b, k;
  if (lowp_vit_forward(z, x, B, m, NULL, NULL) != LOWP_OK) return NAN;
  for (b = 0; b < B; b++) {
    double mx = z[b * 10], se = 0.0;
    for (k = 1; k < 10; k++) mx = fmax(mx, z[b * 10 + k]);
    for (k = 0; k < 10; k++) se += exp(z[b * 10 + k] - mx);
    s += log(se) + mx - z[b * 10 + y[b]];
  }
  return s / B;
}

typedef struct {
  int calls[64];
  int K[64], N[64];
  size_t nb[64];
} seen_t;

static int f32_cb(float *y, float *x, size_t rows, int K, int N, const float *w, const float *bias,
                  size_t nb, int site, void *ctx) {
  seen_t *s = ctx;
  s->calls[site]++;
  s->K[site] = K;
  s->N[site] = N;
  s->nb[site] = nb;
  lowp_vit_gemm_f32(y, x, rows, K, N, w, bias, nb);
  return LOWP_OK;
}

static void check_gradients(lowp_vit_t *m, const float *x, const uint8_t *y) {
  double loss;
  int t;
  lowp_test_check(lowp_vit_grad(m, &loss, x, y, B) == LOWP_OK, "grad");
  lowp_test_check(fabs(loss - loss_of(m, x, y)) < 1e-6, "grad's loss %.9g = forward's %.9g", loss, loss_of(m, x, y));
  for (t = 0; t < m->ntensors; t++) {
    lowp_vit_tensor_t ti = lowp_vit_tensor(m, t);
    lowp_rng_t r;
    double gmax = 0.0;
    int j, bad = 0, tried = 0;
    size_t i;
    for (i = 0; i < ti.count; i++) gmax = fmax(gmax, fabs(m->g[ti.offset + i]));
    lowp_rng_init(&r, lowp_test_seed(), 900 + (uint32_t)t);
    for (j = 0; j < 8 && j < (int)ti.count; j++) {
      size_t k = ti.offset + (ti.count <= 8 ? (size_t)j : (size_t)(lowp_rng_next(&r) % ti.count));
      float w0 = m->w[k], wp = w0 + 1e-2f, wm = w0 - 1e-2f;
      double lp, lm, fd, an = m->g[k];
      m->w[k] = wp; lp = loss_of(m, x, y);
      m->w[k] = wm; lm = loss_of(m, x, y);
      m->w[k] = w0;
      fd = (lp - lm) / ((double)wp - (double)wm);
      tried++;
      if (fabs(fd - an) > 2e-4 + 2e-2 * fabs(an)) {
        bad++;
        lowp_test_check(0, "%s[%zu]: backprop %.6g, finite difference %.6g", ti.name, k - ti.offset, an, fd);
      }
    }
    lowp_test_check(bad == 0 && gmax > 0, "%s: %d of %d coordinates off, largest |gradient| %.3g", ti.name, bad,
                    tried, gmax);
  }
}

int main(void) {
  lowp_vit_t m, m2;
  float x[B * 784], z0[B * 10], z1[B * 10], *g1;
  uint8_t y[B] = {3, 7, 0};
  lowp_rng_t r;
  seen_t seen;
  double l0, l1 = 0.0;
  int i, s;

  lowp_test_start("tvit");
  lowp_test_check(lowp_vit_init(&m, 7, 8, 2, 12, 2, lowp_test_seed()) == LOWP_OK, "init");
  lowp_test_check(m.tokens == 16 && m.pdim == 49 && m.ntensors == 3 + 24 + 4, "shape");
  lowp_test_check(m.nparams == (size_t)(49 * 8 + 8 + 16 * 8 + 2 * (4 * 8 + 8 * 24 + 24 + 8 * 8 + 8 + 8 * 12 + 12 + 12 * 8 + 8) +
                                        2 * 8 + 8 * 10 + 10),
                  "parameter count %zu", m.nparams);
  lowp_rng_init(&r, lowp_test_seed(), 5);
  for (i = 0; i < B * 784; i++) x[i] = (float)lowp_rng_uniform(&r);
  check_gradients(&m, x, y);

  /* (2) the callback computes the same logits; every site once, shapes as documented */
  memset(&seen, 0, sizeof seen);
  lowp_test_check(lowp_vit_forward(z0, x, B, &m, NULL, NULL) == LOWP_OK &&
                      lowp_vit_forward(z1, x, B, &m, f32_cb, &seen) == LOWP_OK && !memcmp(z0, z1, sizeof z0),
                  "fp32 callback: same logits");
  for (s = 0; s < lowp_vit_nsites(&m); s++) {
    int blk, kind = lowp_vit_site_kind(&m, s, &blk);
    int wantK = kind == LOWP_VIT_EMBED ? 49 : kind == LOWP_VIT_SCORES ? 4 : kind == LOWP_VIT_PV ? 16
              : kind == LOWP_VIT_FC2 ? 12 : 8;
    int wantN = kind == LOWP_VIT_QKV ? 24 : kind == LOWP_VIT_SCORES ? 16 : kind == LOWP_VIT_PV ? 4
              : kind == LOWP_VIT_FC1 ? 12 : kind == LOWP_VIT_HEAD ? 10 : 8;
    size_t wantnb = kind == LOWP_VIT_SCORES || kind == LOWP_VIT_PV ? B * 2 : 1;
    lowp_test_check(seen.calls[s] == 1 && seen.K[s] == wantK && seen.N[s] == wantN && seen.nb[s] == wantnb,
                    "site %d: %d calls, %d x %d, %zu blocks", s, seen.calls[s], seen.K[s], seen.N[s], seen.nb[s]);
  }

  /* (3) threads */
  g1 = malloc(m.nparams * sizeof *g1);
  omp_set_num_threads(1);
  lowp_vit_grad(&m, &l0, x, y, B);
  memcpy(g1, m.g, m.nparams * sizeof *g1);
  omp_set_num_threads(2);
  lowp_vit_grad(&m, &l0, x, y, B);
  lowp_test_check(!memcmp(g1, m.g, m.nparams * sizeof *g1), "gradients: 1 and 2 threads, same bytes");
  free(g1);

  /* (4) AdamW lowers the loss of a fixed batch */
  l0 = loss_of(&m, x, y);
  for (i = 0; i < 20; i++) {
    lowp_vit_grad(&m, &l1, x, y, B);
    lowp_vit_adamw(&m, 1e-2f, 0.0f);
  }
  l1 = loss_of(&m, x, y);
  lowp_test_check(l1 < 0.5 * l0, "20 AdamW steps: loss %.4f -> %.4f", l0, l1);
  lowp_test_check(lowp_vit_init(&m2, 5, 8, 2, 12, 2, 1) == LOWP_EINVAL, "patch 5 refused");
  lowp_test_check(lowp_vit_init(&m2, 7, 8, 3, 12, 2, 1) == LOWP_EINVAL, "3 heads for d = 8 refused");
  lowp_vit_free(&m);
  return lowp_test_end();
}
