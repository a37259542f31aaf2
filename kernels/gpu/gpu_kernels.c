/* lowp_gpu_kernels -- the registry's entries with a GPU kernel: run on the GPU, or on its CPU twin */

#include "gpu/gpu_kernels.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cvt.h"
#include "gpu/gemm_gpu.h"
#include "common/rowk.h"
#include "status.h"
#include "io/escape.h"

/* ------------------------------------------------------ private helpers */

static int seterr(char *err, size_t errlen, int st, const char *msg) {
  lowp_errf(err, errlen, 0, "%s", msg);
  return st;
}

/* 1: run on the GPU; 0: the twin; -1: device=gpu without a GPU (err set) */
static int use_gpu(const lowp_kcfg_t *c, char *err, size_t errlen) {
  int have = lowp_cuda_device_count() > 0;
  if (c->device == LOWP_DEVICE_CPU) return 0;
  if (c->device == LOWP_DEVICE_GPU && !have) {
    seterr(err, errlen, LOWP_EUNSUPPORTED,
           "device=gpu: no CUDA device (or this lowp was built without CUDA)");
    return -1;
  }
  return have;
}

/* n doubles -> floats; LOWP_EUNSUPPORTED if one is not an fp32 value */
static int to_f32(float **dst, const double *x, size_t n, char *err, size_t errlen) {
  size_t i;
  *dst = malloc(n ? n * sizeof **dst : 1);
  if (!*dst) return LOWP_ENOMEM;
  for (i = 0; i < n; i++) {
    (*dst)[i] = (float)x[i];
    if ((double)(*dst)[i] != x[i] && x[i] == x[i]) {
      free(*dst);
      *dst = NULL;
      return seterr(err, errlen, LOWP_EUNSUPPORTED,
                    "this kernel reads fp32 values: the input format must fit in fp32");
    }
  }
  return LOWP_OK;
}

static void store(double *y, const float *v, size_t n, const lowp_format_t *out) {
  size_t i;
  for (i = 0; i < n; i++) y[i] = lowp_kcfg_r((double)v[i], out);
}

static int sizes(const lowp_problem_t *p, size_t *rows, size_t *n, char *err, size_t errlen) {
  *rows = p->dims.batch * p->dims.m;
  *n = p->dims.n;
  if (*n < 1 || *n >= (1u << 24) || *rows >= (1u << 31))
    return seterr(err, errlen, LOWP_EUNSUPPORTED,
                  "row kernels take rows of 1 to 2^24-1 elements and fewer than 2^31 rows");
  return LOWP_OK;
}

static int softmax(int stable, const lowp_kcfg_t *c, double *const *out, const double *const *in,
                   const lowp_problem_t *p, char *err, size_t errlen) {
  size_t rows, n;
  float *x = NULL, *y = NULL;
  int st, g = use_gpu(c, err, errlen);
  if (g < 0) return LOWP_EUNSUPPORTED;
  if ((st = sizes(p, &rows, &n, err, errlen)) || (st = to_f32(&x, in[0], rows * n, err, errlen)))
    return st;
  y = malloc(rows * n * sizeof *y);
  if (!y) st = LOWP_ENOMEM;
  else st = g ? lowp_softmax_cuda(y, x, rows, n, stable) : lowp_softmax_cpu(y, x, rows, n, stable);
  if (st == LOWP_OK) store(out[0], y, rows * n, &p->out);
  else if (g) seterr(err, errlen, st, "the GPU softmax failed");
  free(x);
  free(y);
  return st;
}

static int run_gemm_entry(int which, int fastacc, const char *entry, const lowp_kcfg_t *c,
                double *const *out, const double *const *in, const lowp_problem_t *p, char *err,
                size_t errlen) {
  const lowp_dims_t *d = &p->dims;
  size_t bt, mn = d->m * d->n;
  int st, g = use_gpu(c, err, errlen), variant;
  if (g < 0) return LOWP_EUNSUPPORTED;
  if (memcmp(&p->in[0], &p->in[1], sizeof p->in[0]) != 0)
    return seterr(err, errlen, LOWP_EUNSUPPORTED, "A and B must have one format");
  variant = which == 0 ? lowp_gemm_cublas_variant(&p->in[0], &p->out, fastacc)
                       : lowp_gemm_mma_variant(&p->in[0], &p->out);
  if (!variant)
    return seterr(err, errlen, LOWP_EUNSUPPORTED,
                  which == 0 ? "no cuBLAS variant for these formats (kernels/gpu/gemm_gpu.h lists them)"
                             : "no mma variant for these formats (fp16, bf16, tf32, e4m3, e5m2 "
                               "in, fp32 out)");
  memset(out[0], 0, d->batch * mn * sizeof out[0][0]);
  if (!g) {
    lowp_gemm_tc_cfg_t tc;
    st = lowp_gpu_gemm_model(&tc, entry, c, &p->in[0], &p->out, err, errlen);
    if (st == LOWP_EUNSUPPORTED && which == 0) {
      lowp_errf(err, errlen, 0, "cuBLAS computes %s without tensor cores: no model twin (its order: "
                "lowp reveal --kernel %s --params device=gpu)", p->in[0].name, entry);
      return st;
    }
    if (st) return st == LOWP_EINVAL ? LOWP_EUNSUPPORTED : st;
    for (bt = 0; bt < d->batch; bt++) {
      st = lowp_gemm_tc_ref(&out[0][bt * mn], &in[0][bt * d->m * d->k],
                            &in[1][bt * d->k * d->n], d->m, d->n, d->k, &tc);
      if (st) return seterr(err, errlen, st, "the tensor-core model failed");
    }
    return LOWP_OK;
  }
  for (bt = 0; bt < d->batch; bt++) {
    st = lowp_gemm_gpu(which, variant, &out[0][bt * mn], &in[0][bt * d->m * d->k],
                       &in[1][bt * d->k * d->n], d->m, d->n, d->k, err, errlen);
    if (st) return st;
  }
  return LOWP_OK;
}

/* ----------------------------------------------------------- public API */

int lowp_gpu_mma_model(lowp_tc_model_t *m, const char *spec, const lowp_format_t *in,
                       const lowp_format_t *out, char *err, size_t errlen) {
  int fp8 = lowp_format_width(in) <= 8;
  int st = lowp_tc_model_get(m, spec, in, fp8 ? &LOWP_FMT_FP16 : out, err, errlen);
  if (st == LOWP_OK) m->promote = 0;
  return st;
}

int lowp_gpu_gemm_model(lowp_gemm_tc_cfg_t *tc, const char *entry, const lowp_kcfg_t *c,
                        const lowp_format_t *in, const lowp_format_t *out, char *err,
                        size_t errlen) {
  char spec[sizeof c->model + 32], preset[32];
  long promote = c->promote;
  if (!strcmp(c->model, "auto") || !strncmp(c->model, "auto,", 5)) {
    (void)lowp_gpu_preset(preset, sizeof preset); /* h100 without a GPU */
    snprintf(spec, sizeof spec, "%s%s", preset, c->model + 4);
  } else {
    snprintf(spec, sizeof spec, "%s", c->model);
  }
  if (!strcmp(entry, "gemm_mma") && lowp_gemm_mma_fp8(lowp_gemm_mma_variant(in, out))) {
    /* the preset's mma.sync fp8 datapath, here with the fp32 output */
    int st = lowp_gpu_mma_model(&tc->model, spec, in, out, err, errlen);
    if (st) return st;
    tc->in = in;
    tc->out = out;
    return LOWP_OK;
  }
  if (!strcmp(entry, "gemm_mma")) promote = 0;
  else if (promote < 0)
    promote = lowp_gemm_cublas_promote(
        lowp_gemm_cublas_variant(in, out, !strcmp(entry, "gemm_cublas_fastacc")));
  return lowp_gemm_tc_config(tc, spec, promote, in, out, err, errlen);
}

int lowp_kernel_sum_tree(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                         const lowp_problem_t *p, char *err, size_t errlen) {
  size_t rows, n;
  float *x = NULL, *y = NULL;
  lowp_ka_fmt_t f;
  int st, g = use_gpu(c, err, errlen);
  if (g < 0) return LOWP_EUNSUPPORTED;
  if (lowp_rowk_fmt(&f, &c->compute) != LOWP_OK)
    return seterr(err, errlen, LOWP_EUNSUPPORTED,
                  "sum_tree accumulates in a format with p <= 24, IEEE infinities and "
                  "subnormals inside fp32's range (fp32, tf32, fp16, bf16, e5m2)");
  if ((st = sizes(p, &rows, &n, err, errlen)) || (st = to_f32(&x, in[0], rows * n, err, errlen)))
    return st;
  y = malloc(rows * sizeof *y);
  if (!y) st = LOWP_ENOMEM;
  else st = g ? lowp_rsum_cuda(y, x, rows, n, f) : lowp_rsum_cpu(y, x, rows, n, f);
  if (st == LOWP_OK) store(out[0], y, rows, &p->out);
  else if (g) seterr(err, errlen, st, "the GPU sum failed");
  free(x);
  free(y);
  return st;
}

int lowp_kernel_softmax_naive_tree(const lowp_kcfg_t *c, double *const *out,
                                   const double *const *in, const lowp_problem_t *p, char *err,
                                   size_t errlen) {
  return softmax(0, c, out, in, p, err, errlen);
}

int lowp_kernel_softmax_stable_tree(const lowp_kcfg_t *c, double *const *out,
                                    const double *const *in, const lowp_problem_t *p, char *err,
                                    size_t errlen) {
  return softmax(1, c, out, in, p, err, errlen);
}

int lowp_kernel_layernorm_tree(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                               const lowp_problem_t *p, char *err, size_t errlen) {
  size_t rows, n;
  float *x = NULL, *y = NULL, *mu = NULL, *var = NULL;
  int st, g = use_gpu(c, err, errlen);
  if (g < 0) return LOWP_EUNSUPPORTED;
  if ((st = sizes(p, &rows, &n, err, errlen)) || (st = to_f32(&x, in[0], rows * n, err, errlen)))
    return st;
  y = malloc(rows * n * sizeof *y);
  mu = malloc(rows * sizeof *mu);
  var = malloc(rows * sizeof *var);
  if (!y || !mu || !var) st = LOWP_ENOMEM;
  else
    st = g ? lowp_layernorm_cuda(y, mu, var, x, rows, n, (float)p->eps, (int)c->variant)
           : lowp_layernorm_cpu(y, mu, var, x, rows, n, (float)p->eps, (int)c->variant);
  if (st == LOWP_OK) {
    store(out[0], y, rows * n, &p->out);
    store(out[1], mu, rows, &p->out);
    store(out[2], var, rows, &p->out);
  } else if (g) {
    seterr(err, errlen, st, "the GPU layer norm failed");
  }
  free(x);
  free(y);
  free(mu);
  free(var);
  return st;
}

int lowp_kernel_xent_tree(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                          const lowp_problem_t *p, char *err, size_t errlen) {
  size_t rows, n, r;
  float *x = NULL, *loss = NULL;
  int32_t *t = NULL;
  int st, g = use_gpu(c, err, errlen);
  if (g < 0) return LOWP_EUNSUPPORTED;
  if ((st = sizes(p, &rows, &n, err, errlen)) || (st = to_f32(&x, in[0], rows * n, err, errlen)))
    return st;
  loss = malloc(rows * sizeof *loss);
  t = malloc(rows * sizeof *t);
  if (!loss || !t) {
    st = LOWP_ENOMEM;
    goto done;
  }
  for (r = 0; r < rows; r++) {
    double v = in[1][r];
    if (!(v >= 0 && v < (double)n) || v != (double)(int32_t)v) {
      st = seterr(err, errlen, LOWP_EINVAL, "a target is not a class index in [0, n)");
      goto done;
    }
    t[r] = (int32_t)v;
  }
  st = g ? lowp_xent_cuda(loss, x, t, rows, n) : lowp_xent_cpu(loss, x, t, rows, n);
  if (st == LOWP_OK && p->reduction_mean) {
    /* the mean: the same tree over the losses (one row), fp32, / rows */
    static const lowp_ka_fmt_t f32 = {24, -126, 127};
    float s;
    if (rows >= (1u << 24)) {
      st = seterr(err, errlen, LOWP_EUNSUPPORTED, "the mean takes fewer than 2^24 rows");
      goto done;
    }
    st = g ? lowp_rsum_cuda(&s, loss, 1, rows, f32) : lowp_rsum_cpu(&s, loss, 1, rows, f32);
    if (st == LOWP_OK) {
      loss[0] = s / (float)rows;
      store(out[0], loss, 1, &p->out);
    }
  } else if (st == LOWP_OK) {
    store(out[0], loss, rows, &p->out);
  }
  if (st && g) seterr(err, errlen, st, "the GPU cross-entropy failed");
done:
  free(x);
  free(loss);
  free(t);
  return st;
}

int lowp_kernel_gemm_cublas(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                            const lowp_problem_t *p, char *err, size_t errlen) {
  return run_gemm_entry(0, 0, "gemm_cublas", c, out, in, p, err, errlen);
}

int lowp_kernel_gemm_cublas_fastacc(const lowp_kcfg_t *c, double *const *out,
                                    const double *const *in, const lowp_problem_t *p, char *err,
                                    size_t errlen) {
  return run_gemm_entry(0, 1, "gemm_cublas_fastacc", c, out, in, p, err, errlen);
}

int lowp_kernel_gemm_mma(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                         const lowp_problem_t *p, char *err, size_t errlen) {
  return run_gemm_entry(1, 0, "gemm_mma", c, out, in, p, err, errlen);
}
