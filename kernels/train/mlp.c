/* lowp_mlp -- a small fp32 multilayer perceptron: forward, backprop, SGD with momentum */

/*
 * Loops are arranged so that the inner loop runs over independent outputs
 * (contiguous memory) and every reduction keeps one order: the compiler can
 * vectorise across outputs without reassociating any sum (no fast math),
 * and OpenMP splits the outer loop over outputs or samples, never a sum.
 * That is what makes the results independent of the thread count.
 */

#include "train/mlp.h"

#include "rng/rng.h"
#include "status.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

/* y (batch x out) = x (batch x in) * w (in x out) + b; sums over k
   ascending. Samples go in groups of SGROUP so that a row of w, once
   loaded, serves the whole group from L1; each sample's sum is the same
   sequence of operations as one sample alone. */
#define SGROUP 8
static void linear_fwd(float *y, const float *x, long batch, int in, int out,
                       const float *w, const float *b) {
  long g;
#pragma omp parallel for schedule(static)
  for (g = 0; g < (batch + SGROUP - 1) / SGROUP; g++) {
    long s0 = g * SGROUP, ns = batch - s0 < SGROUP ? batch - s0 : SGROUP, t;
    int j, k;
    for (t = 0; t < ns; t++)
      for (j = 0; j < out; j++) y[(s0 + t) * out + j] = b[j];
    for (k = 0; k < in; k++) {
      const float *wr = w + (size_t)k * out;
      for (t = 0; t < ns; t++) {
        const float xk = x[(s0 + t) * in + k];
        float *yr = y + (s0 + t) * out;
        if (xk == 0.0f) continue;
        for (j = 0; j < out; j++) yr[j] += xk * wr[j];
      }
    }
  }
}

static void relu(float *y, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (!(y[i] > 0.0f)) y[i] = 0.0f;
}

/* dw (in x out) = x^T dy, sums over samples ascending; db = column sums. */
static void linear_bwd_w(float *dw, float *db, const float *x, const float *dy, long batch,
                         int in, int out) {
  long k, s;
  int j;
#pragma omp parallel for schedule(static)
  for (k = 0; k < in; k++) {
    float *dwr = dw + k * out;
    long t;
    int jj;
    for (jj = 0; jj < out; jj++) dwr[jj] = 0.0f;
    for (t = 0; t < batch; t++) {
      const float xv = x[t * in + k];
      const float *dyr = dy + t * out;
      if (xv == 0.0f) continue;
      for (jj = 0; jj < out; jj++) dwr[jj] += xv * dyr[jj];
    }
  }
  for (j = 0; j < out; j++) db[j] = 0.0f;
  for (s = 0; s < batch; s++)
    for (j = 0; j < out; j++) db[j] += dy[s * out + j];
}

/* dx (batch x in) = (dy w^T) masked by x > 0 (ReLU'), using wt = w^T
   (out x in); sums over outputs ascending. */
static void linear_bwd_x(float *dx, const float *dy, const float *wt, const float *x,
                         long batch, int in, int out) {
  long s;
#pragma omp parallel for schedule(static)
  for (s = 0; s < batch; s++) {
    float *dxr = dx + s * in;
    const float *xr = x + s * in;
    int j, k;
    for (k = 0; k < in; k++) dxr[k] = 0.0f;
    for (j = 0; j < out; j++) {
      const float d = dy[s * out + j];
      const float *wr = wt + (size_t)j * in;
      if (d == 0.0f) continue;
      for (k = 0; k < in; k++) dxr[k] += d * wr[k];
    }
    for (k = 0; k < in; k++)
      if (!(xr[k] > 0.0f)) dxr[k] = 0.0f;
  }
}

static void transpose(float *t, const float *w, int rows, int cols) {
  int i, j;
  for (i = 0; i < rows; i++)
    for (j = 0; j < cols; j++) t[(size_t)j * rows + i] = w[(size_t)i * cols + j];
}

static size_t wcount(const lowp_mlp_t *m, int l) {
  return (size_t)m->width[l] * (size_t)m->width[l + 1];
}

/* Forward keeping every layer's input: acts[l] (batch x width[l]) for
   l = 0..nlayers, acts[nlayers] = logits. One allocation, freed by caller. */
static float *forward_keep(float **acts, const float *x, size_t batch, const lowp_mlp_t *m,
                           lowp_mlp_hook_fn hook, void *ctx) {
  size_t total = 0, off = 0;
  int l;
  float *buf;
  for (l = 0; l <= m->nlayers; l++) total += batch * (size_t)m->width[l];
  buf = malloc(total * sizeof *buf);
  if (!buf) return NULL;
  for (l = 0; l <= m->nlayers; l++) {
    acts[l] = buf + off;
    off += batch * (size_t)m->width[l];
  }
  memcpy(acts[0], x, batch * (size_t)m->width[0] * sizeof *x);
  for (l = 0; l < m->nlayers; l++) {
    if (hook) hook(acts[l], batch, (size_t)m->width[l], l, ctx);
    linear_fwd(acts[l + 1], acts[l], (long)batch, m->width[l], m->width[l + 1], m->w[l], m->b[l]);
    if (l + 1 < m->nlayers) relu(acts[l + 1], batch * (size_t)m->width[l + 1]);
  }
  return buf;
}

/* ----------------------------------------------------------- public API */

void lowp_mlp_free(lowp_mlp_t *m) {
  int l;
  if (!m) return;
  for (l = 0; l < LOWP_MLP_MAXLAYERS; l++) {
    free(m->w[l]);
    free(m->b[l]);
    free(m->vw[l]);
    free(m->vb[l]);
  }
  memset(m, 0, sizeof *m);
}

static int alloc_shape(lowp_mlp_t *m, const int *width, int nlayers) {
  int l;
  memset(m, 0, sizeof *m);
  if (nlayers < 1 || nlayers > LOWP_MLP_MAXLAYERS) return LOWP_EINVAL;
  for (l = 0; l <= nlayers; l++)
    if (width[l] < 1) return LOWP_EINVAL;
  m->nlayers = nlayers;
  for (l = 0; l <= nlayers; l++) m->width[l] = width[l];
  for (l = 0; l < nlayers; l++) {
    m->w[l] = calloc(wcount(m, l), sizeof(float));
    m->vw[l] = calloc(wcount(m, l), sizeof(float));
    m->b[l] = calloc((size_t)width[l + 1], sizeof(float));
    m->vb[l] = calloc((size_t)width[l + 1], sizeof(float));
    if (!m->w[l] || !m->vw[l] || !m->b[l] || !m->vb[l]) {
      lowp_mlp_free(m);
      return LOWP_ENOMEM;
    }
  }
  return LOWP_OK;
}

int lowp_mlp_init(lowp_mlp_t *m, const int *width, int nlayers, uint64_t seed) {
  int l, st = alloc_shape(m, width, nlayers);
  if (st) return st;
  for (l = 0; l < nlayers; l++) {
    lowp_rng_t r;
    size_t i, n = wcount(m, l);
    double sd = sqrt(2.0 / width[l]);
    lowp_rng_init(&r, seed, (uint32_t)l);
    for (i = 0; i < n; i++) m->w[l][i] = (float)(sd * lowp_rng_normal(&r));
  }
  return LOWP_OK;
}

int lowp_mlp_clone(lowp_mlp_t *dst, const lowp_mlp_t *src) {
  int l, st = alloc_shape(dst, src->width, src->nlayers);
  if (st) return st;
  for (l = 0; l < src->nlayers; l++) {
    memcpy(dst->w[l], src->w[l], wcount(src, l) * sizeof(float));
    memcpy(dst->b[l], src->b[l], (size_t)src->width[l + 1] * sizeof(float));
  }
  return LOWP_OK;
}

size_t lowp_mlp_nparams(const lowp_mlp_t *m) {
  size_t n = 0;
  int l;
  for (l = 0; l < m->nlayers; l++) n += wcount(m, l) + (size_t)m->width[l + 1];
  return n;
}

int lowp_mlp_grad_alloc(lowp_mlp_grad_t *g, const lowp_mlp_t *m) {
  int l;
  memset(g, 0, sizeof *g);
  for (l = 0; l < m->nlayers; l++) {
    g->dw[l] = calloc(wcount(m, l), sizeof(float));
    g->db[l] = calloc((size_t)m->width[l + 1], sizeof(float));
    if (!g->dw[l] || !g->db[l]) {
      lowp_mlp_grad_free(g, m);
      return LOWP_ENOMEM;
    }
  }
  return LOWP_OK;
}

void lowp_mlp_grad_free(lowp_mlp_grad_t *g, const lowp_mlp_t *m) {
  int l;
  (void)m;
  for (l = 0; l < LOWP_MLP_MAXLAYERS; l++) {
    free(g->dw[l]);
    free(g->db[l]);
  }
  memset(g, 0, sizeof *g);
}

int lowp_mlp_forward(float *logits, const float *x, size_t batch, const lowp_mlp_t *m,
                     lowp_mlp_hook_fn hook, void *ctx) {
  float *acts[LOWP_MLP_MAXLAYERS + 1];
  float *buf = forward_keep(acts, x, batch, m, hook, ctx);
  if (!buf) return LOWP_ENOMEM;
  memcpy(logits, acts[m->nlayers], batch * (size_t)m->width[m->nlayers] * sizeof *logits);
  free(buf);
  return LOWP_OK;
}

int lowp_mlp_loss_grad(lowp_mlp_grad_t *g, double *loss, const float *x, const uint8_t *labels,
                       size_t batch, const lowp_mlp_t *m) {
  float *acts[LOWP_MLP_MAXLAYERS + 1], *buf, *dy, *dx, *wt;
  int L = m->nlayers, C = m->width[L], l, maxw = 0;
  size_t s;
  double sum = 0.0;

  for (s = 0; s < batch; s++)
    if (labels[s] >= C) return LOWP_EINVAL;
  for (l = 0; l <= L; l++)
    if (m->width[l] > maxw) maxw = m->width[l];
  buf = forward_keep(acts, x, batch, m, NULL, NULL);
  dy = malloc(batch * (size_t)maxw * sizeof *dy);
  dx = malloc(batch * (size_t)maxw * sizeof *dx);
  wt = malloc((size_t)maxw * (size_t)maxw * sizeof *wt);
  if (!buf || !dy || !dx || !wt) {
    free(buf); free(dy); free(dx); free(wt);
    return LOWP_ENOMEM;
  }
  /* softmax cross-entropy per sample in fp64; d loss / d logit = (p - onehot) / batch */
  for (s = 0; s < batch; s++) {
    const float *z = acts[L] + s * C;
    double mx = z[0], se = 0.0;
    int c;
    for (c = 1; c < C; c++)
      if (z[c] > mx) mx = z[c];
    for (c = 0; c < C; c++) se += exp((double)z[c] - mx);
    sum += log(se) + mx - (double)z[labels[s]];
    for (c = 0; c < C; c++) {
      double p = exp((double)z[c] - mx) / se;
      dy[s * C + c] = (float)((p - (c == labels[s])) / (double)batch);
    }
  }
  *loss = sum / (double)batch;
  for (l = L - 1; l >= 0; l--) {
    float *t;
    linear_bwd_w(g->dw[l], g->db[l], acts[l], dy, (long)batch, m->width[l], m->width[l + 1]);
    if (l == 0) break;
    transpose(wt, m->w[l], m->width[l], m->width[l + 1]);
    linear_bwd_x(dx, dy, wt, acts[l], (long)batch, m->width[l], m->width[l + 1]);
    t = dy; dy = dx; dx = t;
  }
  free(buf); free(dy); free(dx); free(wt);
  return LOWP_OK;
}

int lowp_mlp_sgd_step(lowp_mlp_t *m, lowp_mlp_grad_t *g, double *loss, const float *x,
                      const uint8_t *labels, size_t batch, float lr, float momentum) {
  int l, st = lowp_mlp_loss_grad(g, loss, x, labels, batch, m);
  if (st) return st;
  for (l = 0; l < m->nlayers; l++) {
    size_t i, n = wcount(m, l), nb = (size_t)m->width[l + 1];
    for (i = 0; i < n; i++) {
      m->vw[l][i] = momentum * m->vw[l][i] + g->dw[l][i];
      m->w[l][i] -= lr * m->vw[l][i];
    }
    for (i = 0; i < nb; i++) {
      m->vb[l][i] = momentum * m->vb[l][i] + g->db[l][i];
      m->b[l][i] -= lr * m->vb[l][i];
    }
  }
  return LOWP_OK;
}
