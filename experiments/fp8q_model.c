/* fp8q_model -- exercise 6's two networks behind one interface: sites, forward, .safetensors files */

#include "fp8q.h"

#include "io/safetensors.h"
#include "status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 250 /* evaluation batch: results do not depend on it */
#define PCHUNK 50 /* images per task of the parallel evaluation (results do not depend on it either) */
#define MAXT (3 + 12 * LOWP_VIT_MAXLAYERS + 4 + 1)

static const char *const cnn_names[LOWP_CNN_LAYERS] = {"conv1", "conv2", "fc1", "fc2"};
static const char *const vit_groups[8] = {"embed", "qkv", "scores", "pv", "proj", "fc1", "fc2", "head"};

int fq_nsites(const fq_model_t *m) {
  return m->kind == FQ_CNN ? LOWP_CNN_LAYERS : lowp_vit_nsites(&m->vit);
}

fq_site_t fq_site(const fq_model_t *m, int s) {
  fq_site_t t;
  memset(&t, 0, sizeof t);
  if (m->kind == FQ_CNN) {
    snprintf(t.name, sizeof t.name, "%s", cnn_names[s]);
    snprintf(t.group, sizeof t.group, "%s", cnn_names[s]);
    t.K = m->cnn.K[s];
    t.N = m->cnn.N[s];
    t.w = m->cnn.w[s];
    t.b = m->cnn.b[s];
  } else {
    const lowp_vit_t *v = &m->vit;
    int blk, kind = lowp_vit_site_kind(v, s, &blk), i, dh = v->d / v->heads;
    static const int kdim[8] = {0, 1, 2, 3, 1, 1, 4, 1}; /* 0 pdim, 1 d, 2 dh, 3 tokens, 4 mlp */
    static const int ndim[8] = {1, 5, 3, 2, 1, 4, 1, 6}; /* 5: 3d, 6: classes */
    int dims[7];
    dims[0] = v->pdim; dims[1] = v->d; dims[2] = dh; dims[3] = v->tokens; dims[4] = v->mlp;
    dims[5] = 3 * v->d; dims[6] = LOWP_VIT_NCLASS;
    if (blk >= 0) snprintf(t.name, sizeof t.name, "block%d.%s", blk, vit_groups[kind]);
    else snprintf(t.name, sizeof t.name, "%s", vit_groups[kind]);
    snprintf(t.group, sizeof t.group, "%s", vit_groups[kind]);
    t.K = dims[kdim[kind]];
    t.N = dims[ndim[kind]];
    for (i = 0; i < v->ntensors; i++) {
      lowp_vit_tensor_t ti = lowp_vit_tensor(v, i);
      if (ti.site != s) continue;
      if (ti.ndim == 2) t.w = v->w + ti.offset;
      else t.b = v->w + ti.offset;
    }
  }
  return t;
}

size_t fq_nparams(const fq_model_t *m) {
  return m->kind == FQ_CNN ? lowp_cnn_nparams(&m->cnn) : m->vit.nparams;
}

void fq_model_free(fq_model_t *m) {
  lowp_cnn_free(&m->cnn);
  lowp_vit_free(&m->vit);
}

/* The CNN's per-layer callback, forwarded to the generic one. */
typedef struct {
  fq_gemm_fn fn;
  void *ctx;
} cnn_adapter_t;

static int cnn_cb(float *y, float *x, size_t rows, int layer, const lowp_cnn_t *m, void *ctx) {
  const cnn_adapter_t *a = ctx;
  return a->fn(y, x, rows, m->K[layer], m->N[layer], m->w[layer], m->b[layer], 1, layer, a->ctx);
}

static int forward_obs(float *logits, const float *x, size_t n, const fq_model_t *m, fq_gemm_fn gemm, void *ctx,
                       lowp_vit_observe_fn obs, void *octx) {
  cnn_adapter_t a;
  if (m->kind == FQ_VIT) return lowp_vit_forward_observed(logits, x, n, &m->vit, gemm, ctx, obs, octx);
  a.fn = gemm;
  a.ctx = ctx;
  return lowp_cnn_forward(logits, x, n, &m->cnn, gemm ? cnn_cb : NULL, gemm ? &a : NULL);
}

int fq_forward(float *logits, const float *x, size_t n, const fq_model_t *m, fq_gemm_fn gemm, void *ctx) {
  return forward_obs(logits, x, n, m, gemm, ctx, NULL, NULL);
}

int fq_logits(float *logits, const fq_data_t *d, size_t n, const fq_model_t *m, fq_gemm_fn gemm, void *ctx) {
  return fq_logits_observed(logits, d, n, m, gemm, ctx, NULL, NULL);
}

int fq_logits_observed(float *logits, const fq_data_t *d, size_t n, const fq_model_t *m, fq_gemm_fn gemm,
                       void *ctx, lowp_vit_observe_fn obs, void *octx) {
  float *x = malloc(CHUNK * 784 * sizeof *x);
  size_t i;
  int st = LOWP_OK;
  if (!x) return LOWP_ENOMEM;
  for (i = 0; i < n && st == LOWP_OK; i += CHUNK) {
    size_t len = n - i < CHUNK ? n - i : CHUNK;
    fq_gather(x, NULL, d, NULL, i, len);
    st = forward_obs(logits + i * FQ_NCLASS, x, len, m, gemm, ctx, obs, octx);
  }
  free(x);
  return st;
}

/* One task of fq_logits_q: images [i, i + len) on this thread alone (the
   kernels' own parallel loops are nested here, hence serial). */
static int logits_task(float *logits, const fq_data_t *d, size_t i, size_t len, const fq_model_t *m,
                       const fq_qnet_t *q, lowp_qstats_t *ast) {
  float *x = malloc(len * 784 * sizeof *x);
  fq_qnet_t qc;
  int st;
  if (!x) return LOWP_ENOMEM;
  fq_gather(x, NULL, d, NULL, i, len);
  if (!q) {
    st = forward_obs(logits + i * FQ_NCLASS, x, len, m, NULL, NULL, NULL, NULL);
  } else {
    qc = *q; /* shares q's read-only weights; counts its own activation statistics */
    memset(&qc.ast, 0, sizeof qc.ast);
    st = forward_obs(logits + i * FQ_NCLASS, x, len, m, fq_qgemm, &qc, NULL, NULL);
    *ast = qc.ast;
  }
  free(x);
  return st;
}

int fq_logits_q(float *logits, const fq_data_t *d, size_t n, const fq_model_t *m, fq_qnet_t *q) {
  long nt = (long)((n + PCHUNK - 1) / PCHUNK), t;
  lowp_qstats_t *ast = calloc((size_t)nt + 1, sizeof *ast);
  int *sts = calloc((size_t)nt + 1, sizeof *sts), st = LOWP_OK;
  if (!ast || !sts) {
    free(ast);
    free(sts);
    return LOWP_ENOMEM;
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (t = 0; t < nt; t++) {
    size_t i = (size_t)t * PCHUNK;
    sts[t] = logits_task(logits, d, i, n - i < PCHUNK ? n - i : PCHUNK, m, q, &ast[t]);
  }
  for (t = 0; t < nt; t++) { /* in task order: the first failure, the counts summed */
    if (st == LOWP_OK) st = sts[t];
    if (q) {
      q->ast.n += ast[t].n;
      q->ast.nonzero += ast[t].nonzero;
      q->ast.saturated += ast[t].saturated;
      q->ast.flushed += ast[t].flushed;
      q->ast.subnormal += ast[t].subnormal;
    }
  }
  free(ast);
  free(sts);
  return st;
}

/* ------------------------------------------------------------ files */

/* The tensors of a model: names, shapes, fp32 data (as doubles, malloc'd). */
typedef struct {
  int n;
  char names[MAXT][48];
  size_t shape[MAXT][2];
  int ndim[MAXT];
  const float *src[MAXT];
  size_t count[MAXT];
  double cfg[8];
  int ncfg;
} tlist_t;

static void tensors_of(tlist_t *t, const fq_model_t *m) {
  int i;
  memset(t, 0, sizeof *t);
  if (m->kind == FQ_CNN) {
    const lowp_cnn_t *c = &m->cnn;
    t->cfg[0] = c->c1; t->cfg[1] = c->c2; t->cfg[2] = c->hidden;
    t->ncfg = 3;
    for (i = 0; i < LOWP_CNN_LAYERS; i++) {
      snprintf(t->names[2 * i], 48, "%s.w", cnn_names[i]);
      t->shape[2 * i][0] = (size_t)c->K[i]; t->shape[2 * i][1] = (size_t)c->N[i];
      t->ndim[2 * i] = 2; t->src[2 * i] = c->w[i]; t->count[2 * i] = (size_t)c->K[i] * c->N[i];
      snprintf(t->names[2 * i + 1], 48, "%s.b", cnn_names[i]);
      t->shape[2 * i + 1][0] = (size_t)c->N[i];
      t->ndim[2 * i + 1] = 1; t->src[2 * i + 1] = c->b[i]; t->count[2 * i + 1] = (size_t)c->N[i];
    }
    t->n = 2 * LOWP_CNN_LAYERS;
  } else {
    const lowp_vit_t *v = &m->vit;
    t->cfg[0] = v->patch; t->cfg[1] = v->d; t->cfg[2] = v->heads; t->cfg[3] = v->mlp; t->cfg[4] = v->layers;
    t->ncfg = 5;
    for (i = 0; i < v->ntensors; i++) {
      lowp_vit_tensor_t ti = lowp_vit_tensor(v, i);
      snprintf(t->names[i], 48, "%s", ti.name);
      t->shape[i][0] = ti.shape[0]; t->shape[i][1] = ti.shape[1];
      t->ndim[i] = ti.ndim; t->src[i] = v->w + ti.offset; t->count[i] = ti.count;
    }
    t->n = v->ntensors;
  }
}

int fq_model_save(const fq_model_t *m, const char *path) {
  tlist_t t;
  const char *names[MAXT + 1];
  lowp_st_dtype_t dt[MAXT + 1];
  const size_t *shapes[MAXT + 1];
  int nd[MAXT + 1], i, st = LOWP_OK;
  const double *data[MAXT + 1];
  double *buf[MAXT + 1] = {0};
  size_t cshape = 0;
  tensors_of(&t, m);
  cshape = (size_t)t.ncfg;
  names[0] = "config"; dt[0] = LOWP_ST_I64; shapes[0] = &cshape; nd[0] = 1; data[0] = t.cfg;
  for (i = 0; i < t.n && st == LOWP_OK; i++) {
    size_t k;
    names[i + 1] = t.names[i];
    dt[i + 1] = LOWP_ST_F32;
    shapes[i + 1] = t.shape[i];
    nd[i + 1] = t.ndim[i];
    buf[i + 1] = malloc(t.count[i] * sizeof(double));
    if (!buf[i + 1]) { st = LOWP_ENOMEM; break; }
    for (k = 0; k < t.count[i]; k++) buf[i + 1][k] = t.src[i][k];
    data[i + 1] = buf[i + 1];
  }
  if (st == LOWP_OK) st = lowp_st_write(path, (size_t)t.n + 1, names, dt, shapes, nd, data);
  for (i = 0; i <= t.n; i++) free(buf[i]);
  return st;
}

static int read_config(double *cfg, int want, const char *path, char *err, size_t errlen) {
  lowp_st_tensor_t info;
  double *v = NULL;
  int i, st = lowp_st_read(path, "config", &info, &v, 16, err, errlen);
  if (st != LOWP_OK) return st;
  if (info.ndim != 1 || info.count != (size_t)want) {
    snprintf(err, errlen, "%s: tensor config has %zu entries, want %d", path, info.count, want);
    free(v);
    return LOWP_ESHAPE;
  }
  for (i = 0; i < want; i++) cfg[i] = v[i];
  free(v);
  return LOWP_OK;
}

int fq_model_load(fq_model_t *m, fq_kind_t kind, const char *path, char *err, size_t errlen) {
  double cfg[8];
  tlist_t t;
  int i, st;
  memset(m, 0, sizeof *m);
  m->kind = kind;
  st = read_config(cfg, kind == FQ_CNN ? 3 : 5, path, err, errlen);
  if (st == LOWP_OK) {
    st = kind == FQ_CNN ? lowp_cnn_init(&m->cnn, (int)cfg[0], (int)cfg[1], (int)cfg[2], 0)
                        : lowp_vit_init(&m->vit, (int)cfg[0], (int)cfg[1], (int)cfg[2], (int)cfg[3], (int)cfg[4], 0);
    if (st != LOWP_OK) snprintf(err, errlen, "%s: tensor config holds an impossible shape", path);
  }
  if (st != LOWP_OK) return st;
  tensors_of(&t, m);
  for (i = 0; i < t.n && st == LOWP_OK; i++) {
    lowp_st_tensor_t info;
    double *v = NULL;
    size_t k;
    st = lowp_st_read(path, t.names[i], &info, &v, t.count[i], err, errlen);
    if (st == LOWP_OK && (info.dtype != LOWP_ST_F32 || info.ndim != t.ndim[i] || info.shape[0] != t.shape[i][0] ||
                          (t.ndim[i] == 2 && info.shape[1] != t.shape[i][1]))) {
      snprintf(err, errlen, "%s: tensor %s is not F32 of the shape its config gives", path, t.names[i]);
      st = LOWP_ESHAPE;
    }
    for (k = 0; st == LOWP_OK && k < t.count[i]; k++) ((float *)t.src[i])[k] = (float)v[k];
    free(v);
  }
  if (st != LOWP_OK) fq_model_free(m);
  return st;
}
