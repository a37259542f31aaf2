/* lowp_amp_cpu -- the transformer layer's kernels on this CPU: OpenBLAS GEMMs, lowp's CPU kernels, plain loops */

/*
 * See amp_layer.h. Kernels (lowp_mop_t):
 *   GEMM         cblas_sgemm / cblas_sbgemm / widen + cblas_sgemm, one call
 *                per product of a batch (attention: batch x heads)
 *   SOFTMAX, LN, GELU   lowp_kernel_softmax_stable, lowp_kernel_layernorm
 *                (two-pass), lowp_kernel_gelu: compute fp32, output rounded
 *                to the storage format
 *   SOFTMAX_BWD  dx = y (dy - sum_j dy_j y_j)
 *   LN_BWD       xh = (x - mean) rstd; dx = rstd (dy - mean(dy) - xh mean(dy xh))
 *                (gamma = 1, beta = 0: the affine part is one more multiply)
 *   GELU_BWD     dx = dy (Phi(x) + x phi(x))
 *   DROPOUT      mask_i = (u_i >= p), u from Philox (seed, row, element);
 *                y = mask x / (1 - p); backward dx = mask dy / (1 - p)
 *   ADD          z = x + y
 * Plain loops compute in fp32 (float) on rows widened from the storage
 * format and round their outputs back (rne), as a GPU kernel computing in
 * registers does.
 */

#define _POSIX_C_SOURCE 200809L /* dlopen, dlsym */

#include "train/amp_layer.h"

#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/elementwise.h"
#include "cpu/norm_kernel.h"
#include "cpu/softmax_kernel.h"
#include "check/pipeline.h"
#include "measure/measure.h"
#include "rng/rng.h"
#include "status.h"

/* ------------------------------------------------------------------ types */

/* cblas_sbgemm's signature (Debian's cblas.h, OpenBLAS 0.3.21), bfloat16
   being uint16_t there */
typedef void (*sbgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint,
                          blasint, blasint, float, const uint16_t *, blasint, const uint16_t *,
                          blasint, float, float *, blasint);

struct lowp_amp_cpu {
  size_t na, nb, nc, ne, nr; /* capacities: GEMM A, B, C; mem tensor; rows */
  float *a, *b, *c, *x, *y, *z;
  uint16_t *ah, *bh, *ch, *xh, *yh, *zh;
  double *xd, *yd, *md, *vd; /* lowp kernels: input, output, mean, var */
  float *mean, *rstd;
  uint8_t *mask;
  sbgemm_fn sbgemm; /* the loaded OpenBLAS's cblas_sbgemm, or NULL */
};

/* ------------------------------------------------------ private helpers */

/* 1 if f is stored as float */
static int is_fp32(const lowp_format_t *f) {
  return lowp_format_width(f) == 32 && f->precision == LOWP_FMT_FP32.precision &&
         f->ebits == LOWP_FMT_FP32.ebits;
}

/* 1 if f is the top half of binary32 (sign, the same exponent field, the
   top p - 1 = 7 fraction bits): widening is then a 16-bit shift */
static int is_top_half(const lowp_format_t *f) {
  return lowp_format_width(f) == 16 && f->ebits == LOWP_FMT_FP32.ebits &&
         f->precision == LOWP_FMT_FP32.precision - 16 && f->subnormals && f->has_sign;
}

/* exact: the 16 bits are the high half of the binary32 pattern */
static void widen(float *y, const uint16_t *x, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    uint32_t u = (uint32_t)x[i] << 16;
    memcpy(&y[i], &u, sizeof u);
  }
}

static void narrow(uint16_t *y, const float *x, size_t n, const lowp_format_t *f) {
  (void)lowp_encode_array_f32(y, x, n, f, NULL, LOWP_RND_NE);
}

/* declared by Debian's cblas.h for OpenBLAS; repeated for other cblas.h headers */
int openblas_get_num_threads(void);

/* cblas_sbgemm of the loaded OpenBLAS, or NULL. A program may open OpenBLAS
   on its first call rather than link it (the lowp executable,
   tools/blas_lazy.c, into the global scope): one cheap call first, so that
   it is loaded when the program's scope is searched. */
static sbgemm_fn find_sbgemm(void) {
  sbgemm_fn fn = NULL;
  void *self;
  (void)openblas_get_num_threads();
  self = dlopen(NULL, RTLD_NOW);
  if (!self) return NULL;
  *(void **)&fn = dlsym(self, "cblas_sbgemm");
  dlclose(self);
  return fn;
}

static size_t gemm_a(const lowp_rkernel_t *k) { return k->count * k->m * k->k; }
static size_t gemm_b(const lowp_rkernel_t *k) { return k->count * k->k * k->n; }
static size_t gemm_c(const lowp_rkernel_t *k) { return k->count * k->m * k->n; }

static double draw(lowp_rng_t *g, int int_data) {
  double u = lowp_rng_uniform(g);
  if (int_data) {
    double v = floor(u * 9.0) - 4.0; /* -4..4 */
    return v > 4 ? 4 : v;
  }
  return 2.0 * u - 1.0;
}

static void fill(float *f, uint16_t *h, double *d, size_t n, lowp_rng_t *g, int int_data) {
  size_t i;
  for (i = 0; i < n; i++) {
    f[i] = (float)draw(g, int_data);
    if (d) d[i] = f[i];
  }
  narrow(h, f, n, &LOWP_FMT_BF16);
}

static int run_gemm(lowp_amp_cpu_t *c, const lowp_rkernel_t *k, const lowp_rprec_t *p) {
  size_t i, sa = k->m * k->k, sb = k->k * k->n, sc = k->m * k->n;
  int lda = (int)(k->ta ? k->m : k->k), ldb = (int)(k->tb ? k->k : k->n);
  enum CBLAS_TRANSPOSE ta = k->ta ? CblasTrans : CblasNoTrans, tb = k->tb ? CblasTrans : CblasNoTrans;
  if (gemm_a(k) > c->na || gemm_b(k) > c->nb || gemm_c(k) > c->nc) return LOWP_EINVAL;
  if (is_fp32(p->storage)) {
    for (i = 0; i < k->count; i++)
      cblas_sgemm(CblasRowMajor, ta, tb, (int)k->m, (int)k->n, (int)k->k, 1.0f, c->a + i * sa, lda,
                  c->b + i * sb, ldb, 0.0f, c->c + i * sc, (int)k->n);
    return LOWP_OK;
  }
  {
    if (c->sbgemm)
      for (i = 0; i < k->count; i++)
        c->sbgemm(CblasRowMajor, ta, tb, (int)k->m, (int)k->n, (int)k->k, 1.0f, c->ah + i * sa, lda,
           c->bh + i * sb, ldb, 0.0f, c->c + i * sc, (int)k->n);
    else {
      widen(c->a, c->ah, gemm_a(k));
      widen(c->b, c->bh, gemm_b(k));
      for (i = 0; i < k->count; i++)
        cblas_sgemm(CblasRowMajor, ta, tb, (int)k->m, (int)k->n, (int)k->k, 1.0f, c->a + i * sa,
                    lda, c->b + i * sb, ldb, 0.0f, c->c + i * sc, (int)k->n);
    }
    narrow(c->ch, c->c, gemm_c(k), p->storage);
  }
  return LOWP_OK;
}

/* the lowp CPU kernels (forward softmax, layer norm, GELU) */
static int run_lowp_kernel(lowp_amp_cpu_t *c, const lowp_rkernel_t *k, const lowp_rprec_t *p) {
  lowp_kcfg_t cfg;
  lowp_problem_t pr;
  double *out[3];
  const double *in[1];
  char err[128];
  memset(&cfg, 0, sizeof cfg);
  memset(&pr, 0, sizeof pr);
  cfg.compute = LOWP_FMT_FP32; /* softmax and layer norm in fp32 under AMP; GELU's math too */
  cfg.variant = LOWP_LN_TWOPASS;
  pr.dims.batch = 1;
  pr.dims.m = k->rows;
  pr.dims.n = k->cols;
  pr.dims.k = 1;
  pr.in[0] = *p->storage;
  pr.out = *p->storage;
  pr.eps = 1e-5;
  in[0] = c->xd;
  out[0] = c->yd;
  out[1] = c->md;
  out[2] = c->vd;
  switch (k->op) {
  case LOWP_MOP_SOFTMAX: return lowp_kernel_softmax_stable(&cfg, out, in, &pr, err, sizeof err);
  case LOWP_MOP_LN: return lowp_kernel_layernorm(&cfg, out, in, &pr, err, sizeof err);
  case LOWP_MOP_GELU: return lowp_kernel_gelu(&cfg, out, in, &pr, err, sizeof err);
  default: return LOWP_EINVAL;
  }
}

/* one row of a plain-loop kernel, in fp32: o = f(i0, i1), cols values */
static void row_op(const lowp_rkernel_t *k, float *o, const float *i0, const float *i1,
                   const uint8_t *mask, float mean, float rstd, double keep) {
  size_t j, n = k->cols;
  float scale = (float)(1.0 / keep);
  switch (k->op) {
  case LOWP_MOP_SOFTMAX_BWD: { /* i0 = y, i1 = dy */
    float s = 0;
    for (j = 0; j < n; j++) s += i1[j] * i0[j];
    for (j = 0; j < n; j++) o[j] = i0[j] * (i1[j] - s);
    break;
  }
  case LOWP_MOP_LN_BWD: { /* i0 = x, i1 = dy */
    float a = 0, b = 0, fn = (float)n;
    for (j = 0; j < n; j++) {
      float xh = (i0[j] - mean) * rstd;
      a += i1[j];
      b += i1[j] * xh;
    }
    a /= fn;
    b /= fn;
    for (j = 0; j < n; j++) o[j] = rstd * (i1[j] - a - (i0[j] - mean) * rstd * b);
    break;
  }
  case LOWP_MOP_GELU_BWD: /* i0 = x, i1 = dy */
    for (j = 0; j < n; j++) {
      float x = i0[j];
      float cdf = 0.5f * (1.0f + erff(x * 0.70710678f)); /* Phi(x) */
      float pdf = 0.39894228f * expf(-0.5f * x * x);     /* phi(x) = exp(-x^2/2)/sqrt(2 pi) */
      o[j] = i1[j] * (cdf + x * pdf);
    }
    break;
  case LOWP_MOP_DROPOUT:
  case LOWP_MOP_DROPOUT_BWD:
    for (j = 0; j < n; j++) o[j] = mask[j] ? i0[j] * scale : 0.0f;
    break;
  case LOWP_MOP_ADD:
    for (j = 0; j < n; j++) o[j] = i0[j] + i1[j];
    break;
  default:
    break;
  }
}

static int run_loop(lowp_amp_cpu_t *c, const lowp_rkernel_t *k, const lowp_rprec_t *p,
                    double dropout, uint64_t seed) {
  long long r, rows = (long long)k->rows;
  size_t n = k->cols;
  int f32 = is_fp32(p->storage), bad = 0;
  double keep = 1.0 - dropout;
  if (k->rows * k->cols > c->ne || k->rows > c->nr) return LOWP_EINVAL;
#pragma omp parallel
  {
    float *t0 = f32 ? NULL : malloc(3 * n * sizeof *t0);
    if (!f32 && !t0) {
#pragma omp atomic write
      bad = 1;
    }
#pragma omp for schedule(static)
    for (r = 0; r < rows; r++) {
      size_t off = (size_t)r * n, j;
      const float *i0, *i1;
      float *o;
      uint8_t *mk = c->mask + off;
      if (k->op == LOWP_MOP_DROPOUT) /* the forward pass draws the mask */
        for (j = 0; j < n; j++)
          mk[j] = (double)lowp_rng_u32(seed, (uint64_t)off + j, 0x4d41534bu) * 0x1p-32 >= dropout;
      if (f32) {
        i0 = c->x + off;
        i1 = c->y + off;
        o = c->z + off;
      } else {
        if (!t0) continue;
        widen(t0, c->xh + off, n);
        if (k->n_rd > 1) widen(t0 + n, c->yh + off, n);
        i0 = t0;
        i1 = t0 + n;
        o = t0 + 2 * n;
      }
      row_op(k, o, i0, i1, mk, c->mean[r], c->rstd[r], keep);
      if (!f32) narrow(c->zh + off, o, n, p->storage);
    }
    free(t0);
  }
  return bad ? LOWP_ENOMEM : LOWP_OK;
}

/* ----------------------------------------------------------- public API */

int lowp_amp_cpu_supports(const lowp_rprec_t *p) {
  /* the GEMM multiplies what is stored: tf32 (fp32 storage, tf32
     multiplier) and fp16 have no OpenBLAS routine */
  if (is_fp32(p->storage)) return is_fp32(p->gemm_in);
  return is_top_half(p->storage) && is_top_half(p->gemm_in);
}

const char *lowp_amp_cpu_gemm_engine(const lowp_rprec_t *p) {
  if (!lowp_amp_cpu_supports(p)) return NULL;
  if (is_fp32(p->storage)) return "cblas_sgemm";
  return find_sbgemm() ? "cblas_sbgemm"
                       : "bf16 widened to fp32, cblas_sgemm (this OpenBLAS has no cblas_sbgemm)";
}

int lowp_amp_cpu_new(lowp_amp_cpu_t **ctx, const lowp_rkernel_t *ks, size_t nk, int int_data,
                     uint64_t seed) {
  lowp_amp_cpu_t *c;
  lowp_rng_t g;
  size_t i;
  *ctx = NULL;
  if (!ks || !nk) return LOWP_EINVAL;
  c = calloc(1, sizeof *c);
  if (!c) return LOWP_ENOMEM;
  for (i = 0; i < nk; i++) {
    const lowp_rkernel_t *k = &ks[i];
    if (k->kind == LOWP_RK_GEMM) {
      if (gemm_a(k) > c->na) c->na = gemm_a(k);
      if (gemm_b(k) > c->nb) c->nb = gemm_b(k);
      if (gemm_c(k) > c->nc) c->nc = gemm_c(k);
    } else {
      if (k->rows * k->cols > c->ne) c->ne = k->rows * k->cols;
      if (k->rows > c->nr) c->nr = k->rows;
    }
  }
  c->sbgemm = find_sbgemm();
  if (!c->na) c->na = c->nb = c->nc = 1;
  if (!c->ne) c->ne = c->nr = 1;
  c->a = malloc(c->na * sizeof *c->a);
  c->b = malloc(c->nb * sizeof *c->b);
  c->c = calloc(c->nc, sizeof *c->c);
  c->x = malloc(c->ne * sizeof *c->x);
  c->y = malloc(c->ne * sizeof *c->y);
  c->z = calloc(c->ne, sizeof *c->z);
  c->ah = malloc(c->na * sizeof *c->ah);
  c->bh = malloc(c->nb * sizeof *c->bh);
  c->ch = calloc(c->nc, sizeof *c->ch);
  c->xh = malloc(c->ne * sizeof *c->xh);
  c->yh = malloc(c->ne * sizeof *c->yh);
  c->zh = calloc(c->ne, sizeof *c->zh);
  c->xd = malloc(c->ne * sizeof *c->xd);
  c->yd = calloc(c->ne, sizeof *c->yd);
  c->md = calloc(c->nr, sizeof *c->md);
  c->vd = calloc(c->nr, sizeof *c->vd);
  c->mean = malloc(c->nr * sizeof *c->mean);
  c->rstd = malloc(c->nr * sizeof *c->rstd);
  c->mask = calloc(c->ne, 1);
  if (!c->a || !c->b || !c->c || !c->x || !c->y || !c->z || !c->ah || !c->bh || !c->ch ||
      !c->xh || !c->yh || !c->zh || !c->xd || !c->yd || !c->md || !c->vd || !c->mean ||
      !c->rstd || !c->mask) {
    lowp_amp_cpu_free(&c);
    return LOWP_ENOMEM;
  }
  lowp_rng_init(&g, seed, 0);
  fill(c->a, c->ah, NULL, c->na, &g, int_data);
  fill(c->b, c->bh, NULL, c->nb, &g, int_data);
  fill(c->x, c->xh, c->xd, c->ne, &g, int_data);
  fill(c->y, c->yh, NULL, c->ne, &g, int_data);
  for (i = 0; i < c->nr; i++) {
    c->mean[i] = (float)(0.1 * draw(&g, 0));
    c->rstd[i] = (float)(1.0 + 0.5 * draw(&g, 0));
  }
  *ctx = c;
  return LOWP_OK;
}

void lowp_amp_cpu_free(lowp_amp_cpu_t **ctx) {
  lowp_amp_cpu_t *c;
  if (!ctx || !*ctx) return;
  c = *ctx;
  free(c->a); free(c->b); free(c->c); free(c->x); free(c->y); free(c->z);
  free(c->ah); free(c->bh); free(c->ch); free(c->xh); free(c->yh); free(c->zh);
  free(c->xd); free(c->yd); free(c->md); free(c->vd); free(c->mean); free(c->rstd);
  free(c->mask);
  free(c);
  *ctx = NULL;
}

int lowp_amp_cpu_run(lowp_amp_cpu_t *ctx, const lowp_rkernel_t *k, const lowp_rprec_t *p,
                     double dropout, uint64_t seed) {
  if (!ctx || !k || !p) return LOWP_EINVAL;
  if (!lowp_amp_cpu_supports(p)) return LOWP_EUNSUPPORTED;
  if (k->kind == LOWP_RK_GEMM) return run_gemm(ctx, k, p);
  if (k->op == LOWP_MOP_SOFTMAX || k->op == LOWP_MOP_LN || k->op == LOWP_MOP_GELU) {
    if (k->rows * k->cols > ctx->ne || k->rows > ctx->nr) return LOWP_EINVAL;
    return run_lowp_kernel(ctx, k, p);
  }
  if (!(dropout >= 0 && dropout < 1)) return LOWP_EINVAL;
  return run_loop(ctx, k, p, dropout, seed);
}

/* the values the GEMM computed for the sampled entries, as a pipeline subject */
static int given_run(const lowp_subject_t *s, double *const *out, const double *const *in,
                     const lowp_problem_t *p, char *err, size_t errlen) {
  (void)in; (void)err; (void)errlen;
  memcpy(out[0], s->ctx, p->dims.batch * sizeof(double));
  return LOWP_OK;
}

/* entries e = e0, e0 + step, ... (cnt of them) of GEMM k measured by the
   pipeline as a batch of dot products (fp32 operands, fp32 result) against
   their exact values, the bound that of fp32 accumulation (gamma_k) */
static int check_entries(double *worst, int *exact_equal, const lowp_amp_cpu_t *ctx,
                         const lowp_rkernel_t *k, int f32, size_t e0, size_t step, size_t cnt) {
  size_t sa = k->m * k->k, sb = k->k * k->n, t, l;
  double *av = malloc(cnt * k->k * sizeof *av), *bv = malloc(cnt * k->k * sizeof *bv);
  double *got = malloc(cnt * sizeof *got), mb;
  const double *xs[2] = {av, bv};
  lowp_problem_t p;
  lowp_subject_t s;
  lowp_check_inputs_t in;
  lowp_check_result_t r;
  int st;
  if (!av || !bv || !got) { free(av); free(bv); free(got); return LOWP_ENOMEM; }
  for (t = 0; t < cnt; t++) {
    size_t e = e0 + t * step, q = e / (k->m * k->n), i = (e % (k->m * k->n)) / k->n, j = e % k->n;
    for (l = 0; l < k->k; l++) {
      size_t ia = q * sa + (k->ta ? l * k->m + i : i * k->k + l);
      size_t ib = q * sb + (k->tb ? j * k->k + l : l * k->n + j);
      float fa, fb;
      if (f32) { fa = ctx->a[ia]; fb = ctx->b[ib]; }
      else { widen(&fa, &ctx->ah[ia], 1); widen(&fb, &ctx->bh[ib], 1); }
      av[t * k->k + l] = fa;
      bv[t * k->k + l] = fb;
    }
    got[t] = (double)ctx->c[e];
  }
  memset(&r, 0, sizeof r);
  memset(&p, 0, sizeof p);
  p.op = lowp_op_get(LOWP_OP_DOT);
  p.dims.batch = cnt;
  p.dims.m = p.dims.n = 1;
  p.dims.k = k->k;
  p.in[0] = p.in[1] = p.out = LOWP_FMT_FP32;
  memset(&s, 0, sizeof s);
  snprintf(s.name, sizeof s.name, "%s (the CPU GEMM's fp32 result)", k->name);
  s.kind = "kernel";
  s.run = given_run;
  s.ctx = got;
  s.has_accum = 1; /* the bound of fp32 accumulation of k exact products */
  s.accum.order = LOWP_ACC_RECURSIVE;
  s.accum.acc = LOWP_FMT_FP32;
  s.accum.rnd = LOWP_RND_NE;
  s.accum.fma = 1;
  st = lowp_check_inputs_copy(&in, &p, xs, NULL);
  if (!st) st = lowp_check_measure(&r, &p, &s, &in, NULL, NULL, 0);
  if (!st) {
    mb = r.out[0].n_class_mismatch ? INFINITY : r.max_bwd;
    if (mb > 0 && !(r.gamma.have && r.gamma.value < INFINITY)) *worst = INFINITY;
    else if (mb > 0 && mb / r.gamma.value > *worst) *worst = mb / r.gamma.value;
    for (t = 0; t < cnt; t++)
      if (r.out[0].got[t] != r.out[0].exact[t]) *exact_equal = 0;
  }
  lowp_check_result_free(&r);
  lowp_check_inputs_free(&in);
  free(av); free(bv); free(got);
  return st;
}

int lowp_amp_cpu_gemm_check(double *worst, int *exact_equal, lowp_amp_cpu_t *ctx,
                            const lowp_rkernel_t *k, const lowp_rprec_t *p, size_t max_entries) {
  size_t total, step, n, done;
  int st = LOWP_OK;
  *worst = 0;
  *exact_equal = 1;
  if (!ctx || !k || k->kind != LOWP_RK_GEMM || !lowp_amp_cpu_supports(p) || !max_entries)
    return LOWP_EINVAL;
  total = gemm_c(k);
  step = total <= max_entries ? 1 : total / max_entries;
  n = (total + step - 1) / step; /* entries 0, step, 2 step, ... < total */
  for (done = 0; done < n && !st; done += 1024) /* in batches: bounded memory */
    st = check_entries(worst, exact_equal, ctx, k, is_fp32(p->storage), done * step, step,
                       n - done < 1024 ? n - done : 1024);
  return st;
}

void lowp_amp_cpu_gemm_buffers(const lowp_amp_cpu_t *ctx, const float **a, const float **b,
                               const float **c) {
  *a = ctx->a;
  *b = ctx->b;
  *c = ctx->c;
}
