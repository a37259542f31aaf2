/* lowp_exp_autocast_policy -- which op in which precision: a transformer block under autocast policies, measured */

/*
 * Question: in a small transformer block (layer norm, attention with
 *   softmax, MLP with GELU, residual adds, output projection,
 *   cross-entropy), how much error does each op add under the documents'
 *   precision policies (autocast fp16/bf16 op lists, document 004's
 *   select_precision rule, everything in fp16/bf16), and how large is the
 *   error of the output; and how do one-pass, two-pass and Welford variance
 *   fare under cancellation?
 * Method: a policy is data: for each op class (matmul, softmax, layer norm,
 *   cross-entropy, GELU, add) the format it runs in ("input" = the input's
 *   format, "widest" = the wider input format, "size:F" = F if the tensor
 *   has more than 1024 elements else fp32, document 004's rule). Emulation:
 *   matmul rounds its inputs to F, accumulates with correctly rounded fp32
 *   additions of exact products (an FMA chain), rounds the output to F;
 *   softmax, layer norm, GELU and cross-entropy are the registry kernels
 *   softmax_stable, layernorm (two passes, scale=rsqrt), gelu and xent with
 *   compute=F, which round every elementary operation's result to F (exp,
 *   log, erf, 1/sqrt from libm in fp64, then rounded). Per-op error: the
 *   relative norm error of the op's output against the exact op on the same
 *   inputs (lowp_op_exact: exact dot products, softmax, layer norm, GELU,
 *   cross-entropy, each correctly rounded to fp64). Output error: the loss
 *   and the logits against an fp64 evaluation of the whole block with the
 *   same fp32 weights. Variance: n values mean + std * N(0,1) rounded to
 *   fp16, bf16 or fp32, ratio mean/std swept; one-pass (E[x^2] - E[x]^2),
 *   two-pass and Welford (the kernel layernorm's statistics,
 *   variant=onepass|twopass|welford, clamp=off), computed in fp32 (acc=fp32:
 *   how PyTorch's layer_norm computes them for fp16/bf16 tensors, Welford in
 *   T_ACC = at::acc_type = float, aten/src/ATen/native/cuda/layer_norm_kernel.cu;
 *   the headline) and, beside it, in the data's own format (every sum in
 *   fp16/bf16); exact variance from lowp_op_exact; every row whose result
 *   is finite is checked against the rigorous bound lowp_bound_variance
 *   (lib/measure/measure.h: Chan, Golub & LeVeque 1983; Higham 2002,
 *   sec. 1.9), the run fails if one exceeds it; a result that overflowed
 *   (inf or NaN) is counted as such, never clipped into an error value.
 * Run: lowp run autocast-policy [--tokens=32 --d=64 --vocab=64]
 * Expected / acceptance: matmuls in fp16 add ~u16 relative error per op;
 *   softmax/LN/CE kept in fp32 add ~1e-7; pure fp16/bf16 raise them to
 *   their u; one-pass variance loses all digits once n u (mean/std)^2 ~ 1,
 *   and its fp16 sum of squares overflows when n mean^2 > 65504 (fp16
 *   statistics); two-pass and Welford stay
 *   near u.
 */

#include "catalog.h"
#include "results.h"
#include "exp_check.h"

#include "amp/allreduce.h"
#include "check/op.h"
#include "check/subject.h"
#include "format/format.h"
#include "io/plot.h"
#include "measure/measure.h"
#include "measure/normwise.h"
#include "rng/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lowp_param_t params[] = {
    {"tokens", "32", "16", "sequence length T"},
    {"d", "64", "32", "model width"},
    {"vocab", "64", "32", "output classes"},
    {"input_scale", "1", NULL, "standard deviation of the input activations"},
    {"var_n", "256", "128", "variance study: values per row (a layer's width)"},
    {"var_rows", "64", "16", "variance study: rows averaged per point"},
    {NULL, NULL, NULL, NULL}};

/* ------------------------------------------------------ private helpers */

enum { OP_MM, OP_SM, OP_LN, OP_CE, OP_GELU, OP_ADD, NOPC };

typedef struct {
  const char *name;
  const char *fmt[NOPC]; /* per op class: "fp32", "fp16", "bf16", "input", "widest", "size:fp16" */
} policy_t;

/* The policies, as data. autocast: document 000 section 1 "Autocast
   Operation Rules" (matmul/linear fp16; softmax, cross_entropy, layer_norm
   fp32; add promote to widest; GELU is on no list: it runs in its input's
   type). document 004 "Precision Selection Rules": select_precision(). */
static const policy_t POL[] = {
    {"fp32", {"fp32", "fp32", "fp32", "fp32", "fp32", "fp32"}},
    {"autocast fp16", {"fp16", "fp32", "fp32", "fp32", "input", "widest"}},
    {"autocast bf16", {"bf16", "fp32", "fp32", "fp32", "input", "widest"}},
    {"doc 004 select_precision (fp16)", {"fp16", "fp32", "fp32", "fp32", "size:fp16", "size:fp16"}},
    {"pure fp16", {"fp16", "fp16", "fp16", "fp16", "fp16", "fp16"}},
    {"pure bf16", {"bf16", "bf16", "bf16", "bf16", "bf16", "bf16"}},
};
#define NPOL (sizeof POL / sizeof POL[0])

/* the ops of the block, in order */
static const char *const OPS[] = {"ln1", "q,k,v = ln1 W", "scores = q k^T/sqrt(d)", "softmax",
                                  "p v", "attn out W_o", "h = x + attn", "ln2", "u = ln2 W_1",
                                  "gelu", "m = gelu W_2", "y = h + m", "logits = y W_out", "cross-entropy"};
#define NOPS (sizeof OPS / sizeof OPS[0])

typedef struct { double *v; size_t r, c; const lowp_format_t *f; } tensor_t;

typedef struct {
  long long T, d, V, vn, vrows;
  double in_scale;
} cfg_t;

static void get_cfg(const lowp_run_t *r, cfg_t *c) {
  c->T = lowp_run_param_int(r, "tokens", 2, 1024);
  c->d = lowp_run_param_int(r, "d", 4, 1024);
  c->V = lowp_run_param_int(r, "vocab", 2, 4096);
  c->in_scale = lowp_run_param_num(r, "input_scale");
  if (!(c->in_scale > 0 && c->in_scale < 1e4)) lowp_run_bad_param(r, "input_scale", "must be in (0, 1e4)");
  c->vn = lowp_run_param_int(r, "var_n", 2, 1 << 16);
  c->vrows = lowp_run_param_int(r, "var_rows", 1, 4096);
}

static void check(const lowp_run_t *r) {
  cfg_t c;
  get_cfg(r, &c);
}

#define LN_EPS 1e-5 /* layer norm's eps (PyTorch's default) */

static double rf(double x, const lowp_format_t *f) {
  double y;
  if (f == &LOWP_FMT_FP64) return x;
  lowp_round_f64(&y, x, f, NULL, LOWP_RND_NE);
  return y;
}

/* The exact result of operation op on in[] (values of fp64 inputs), each
   output rounded once to binary64: the pipeline's reference (lowp_op_exact,
   lib/check/op.h). rows x n tensors (dot-shaped ops: see exact_matmul). */
static int exact_op(lowp_op_id_t op, size_t rows, size_t n, double *const *out,
                    const double *const *in) {
  lowp_problem_t p = lowp_exp_problem(lowp_op_get(op)->name, 1, rows, n, 1, &LOWP_FMT_FP64,
                                      &LOWP_FMT_FP64);
  p.eps = LN_EPS;
  return lowp_op_exact(out, NULL, in, &p, &LOWP_FMT_FP64, LOWP_RND_NE);
}

/* C (m x n) = A (m x k) B (k x n) exactly, each element rounded once */
static int exact_matmul(double *c, const double *a, const double *b, size_t m, size_t n, size_t k) {
  lowp_problem_t p = lowp_exp_problem("gemm", 1, m, n, k, &LOWP_FMT_FP64, &LOWP_FMT_FP64);
  double *out[1];
  const double *in[2];
  out[0] = c; in[0] = a; in[1] = b;
  return lowp_op_exact(out, NULL, in, &p, &LOWP_FMT_FP64, LOWP_RND_NE);
}

/* the population variance of x[0..n), exactly, rounded once (layer norm's
   var); *mean its mean, the same way */
static double exact_var(const double *x, size_t n, double *mean_out) {
  double *y = malloc(n * sizeof *y), mean = NAN, var = NAN;
  double *out[3];
  const double *in[1];
  out[0] = y; out[1] = &mean; out[2] = &var; in[0] = x;
  if (!y || exact_op(LOWP_OP_LAYERNORM, 1, n, out, in) != 0) var = NAN;
  free(y);
  *mean_out = mean;
  return var;
}

static const lowp_format_t *wider(const lowp_format_t *a, const lowp_format_t *b) {
  return a->precision >= b->precision ? a : b;
}

/* the format op class k runs in for an input of format in (and numel) */
static const lowp_format_t *fmt_for(const policy_t *p, int k, const lowp_format_t *in,
                                    const lowp_format_t *in2, size_t numel, int ref) {
  const char *s = p->fmt[k];
  if (ref) return &LOWP_FMT_FP64;
  if (!strcmp(s, "input")) return in;
  if (!strcmp(s, "widest")) return wider(in, in2 ? in2 : in);
  if (!strncmp(s, "size:", 5)) return numel > 1024 ? lowp_format_by_name(s + 5) : &LOWP_FMT_FP32;
  return lowp_format_by_name(s);
}

static tensor_t tnew(size_t r, size_t c) {
  tensor_t t;
  t.v = calloc(r * c, sizeof(double));
  t.r = r; t.c = c; t.f = &LOWP_FMT_FP32;
  return t;
}

/* the normwise relative error ||a - b|| / ||b|| (lib/measure) */
static double rel_norm(const double *a, const double *b, size_t n) { return lowp_measure_rel_norm(a, b, n); }

/* ---------------------------------------------------------------- ops */

/* C = A B (A r x k, B k x c) in format F, fp32 (or fp64) accumulation;
   err = relative error vs the exact product of the rounded inputs */
static double op_matmul(tensor_t *C, const tensor_t *A, const tensor_t *B, int transB,
                        const lowp_format_t *F, const lowp_format_t *acc) {
  size_t i, j, l, K = A->c, n = transB ? B->r : B->c;
  double *a = malloc(A->r * K * sizeof *a), *b = malloc(K * n * sizeof *b), *ex = malloc(A->r * n * sizeof *ex), e;
  for (i = 0; i < A->r * K; i++) a[i] = rf(A->v[i], F);
  for (l = 0; l < K; l++)
    for (j = 0; j < n; j++) b[l * n + j] = rf(transB ? B->v[j * B->c + l] : B->v[l * B->c + j], F);
  for (i = 0; i < A->r; i++)
    for (j = 0; j < n; j++) {
      double s = 0;
      for (l = 0; l < K; l++) s = lowp_add_rounded(s, a[i * K + l] * b[l * n + j], acc);
      C->v[i * n + j] = rf(s, F);
    }
  (void)exact_matmul(ex, a, b, A->r, n, K);
  C->r = A->r; C->c = n; C->f = F;
  e = rel_norm(C->v, ex, A->r * n);
  free(a); free(b); free(ex);
  return e;
}

/* Run the registry kernel name with params on rows x n values (in[], of
   format F) into out[], its outputs rounded to Fout: the problem of operation op
   (eps: layer norm's; xent: the mean of the rows' losses). */
static int kernel_run(const char *name, const char *params, lowp_op_id_t op, size_t rows, size_t n,
                      const lowp_format_t *F, const lowp_format_t *Fout, double *const *out,
                      const double *const *in) {
  lowp_problem_t p = lowp_exp_problem(lowp_op_get(op)->name, 1, rows, n, 1, F, Fout);
  lowp_subject_t s;
  char err[300];
  int st;
  p.eps = LN_EPS;
  p.reduction_mean = op == LOWP_OP_XENT;
  st = lowp_kernel_subject_open(&s, name, params, err, sizeof err);
  if (st) return st;
  st = lowp_kernel_subject_bind(&s, &p, err, sizeof err);
  if (!st) st = s.run(&s, out, in, &p, err, sizeof err);
  lowp_subject_close(&s);
  return st;
}

/* softmax of the rows of X rounded to F by the registry kernel
   softmax_stable (max subtracted, libm's exp) with params (compute= the
   format every operation is rounded to, acc= the sum's), output rounded to
   F, against the exact softmax of the same rounded inputs */
static double op_softmax_p(tensor_t *Y, const tensor_t *X, const lowp_format_t *F, const char *params) {
  size_t i, n = X->c, N = X->r * n;
  double *x = malloc(N * sizeof *x), *ex = malloc(N * sizeof *ex), e = INFINITY;
  double *o[1];
  const double *in[1];
  if (x && ex) {
    for (i = 0; i < N; i++) x[i] = rf(X->v[i], F);
    o[0] = Y->v; in[0] = x;
    if (kernel_run("softmax_stable", params, LOWP_OP_SOFTMAX, X->r, n, F, F, o, in) == 0) {
      o[0] = ex;
      if (exact_op(LOWP_OP_SOFTMAX, X->r, n, o, in) == 0) e = rel_norm(Y->v, ex, N);
    }
  }
  Y->r = X->r; Y->c = n; Y->f = F;
  free(x); free(ex);
  return e;
}

/* softmax with every operation rounded to F (compute=F) */
static double op_softmax(tensor_t *Y, const tensor_t *X, const lowp_format_t *F) {
  char params_[64];
  snprintf(params_, sizeof params_, "compute=%s", F->name);
  return op_softmax_p(Y, X, F, params_);
}

/* layer norm of each row of X rounded to F: the registry kernel layernorm
   with params, output rounded to F, against the exact layer norm of the same
   rounded inputs */
static double op_layernorm_p(tensor_t *Y, const tensor_t *X, const lowp_format_t *F, const char *params) {
  size_t i, n = X->c, N = X->r * n;
  double *x = malloc(N * sizeof *x), *ex = malloc(N * sizeof *ex), *st = malloc(4 * X->r * sizeof *st);
  double e = INFINITY, *o[3];
  const double *in[1];
  if (x && ex && st) {
    for (i = 0; i < N; i++) x[i] = rf(X->v[i], F);
    o[0] = Y->v; o[1] = st; o[2] = st + X->r; in[0] = x;
    if (kernel_run("layernorm", params, LOWP_OP_LAYERNORM, X->r, n, F, F, o, in) == 0) {
      o[0] = ex; o[1] = st + 2 * X->r; o[2] = st + 3 * X->r;
      if (exact_op(LOWP_OP_LAYERNORM, X->r, n, o, in) == 0) e = rel_norm(Y->v, ex, N);
    }
  }
  Y->r = X->r; Y->c = n; Y->f = F;
  free(x); free(ex); free(st);
  return e;
}

/* layer norm in F: two passes, y = (x - mean) * F(1/sqrt(F(var + eps)))
   (compute=F,scale=rsqrt) */
static double op_layernorm(tensor_t *Y, const tensor_t *X, const lowp_format_t *F) {
  char params_[96];
  snprintf(params_, sizeof params_, "compute=%s,variant=twopass,scale=rsqrt", F->name);
  return op_layernorm_p(Y, X, F, params_);
}

/* GELU (erf form) in F: the registry kernel gelu (compute=F) against the exact GELU */
static double op_gelu(tensor_t *Y, const tensor_t *X, const lowp_format_t *F) {
  size_t i, n = X->r * X->c;
  double *x = malloc(n * sizeof *x), *ex = malloc(n * sizeof *ex), e = INFINITY, *o[1];
  const double *in[1];
  char params_[64];
  if (x && ex) {
    for (i = 0; i < n; i++) x[i] = rf(X->v[i], F);
    snprintf(params_, sizeof params_, "compute=%s", F->name);
    o[0] = Y->v; in[0] = x;
    if (kernel_run("gelu", params_, LOWP_OP_GELU, 1, n, F, F, o, in) == 0) {
      o[0] = ex;
      if (exact_op(LOWP_OP_GELU, 1, n, o, in) == 0) e = rel_norm(Y->v, ex, n);
    }
  }
  Y->r = X->r; Y->c = X->c; Y->f = F;
  free(x); free(ex);
  return e;
}

static double op_add(tensor_t *Y, const tensor_t *A, const tensor_t *B, const lowp_format_t *F) {
  size_t i, n = A->r * A->c;
  double *ex = malloc(n * sizeof *ex), e;
  for (i = 0; i < n; i++) {
    double a = rf(A->v[i], F), b = rf(B->v[i], F);
    ex[i] = a + b; /* exact: two values of formats with p <= 24 */
    Y->v[i] = rf(a + b, F);
  }
  Y->r = A->r; Y->c = A->c; Y->f = F;
  e = rel_norm(Y->v, ex, n);
  free(ex);
  return e;
}

/* mean cross-entropy in F: the registry kernel xent (compute=F, the mean of
   the rows' losses); returns the loss, *err its relative error against the
   mean of the exact per-row losses */
static double op_xent(const tensor_t *L, const int *tgt, const lowp_format_t *F, double *err) {
  size_t i, n = L->c, N = L->r * n;
  double *x = malloc(N * sizeof *x), *t = malloc(2 * L->r * sizeof *t), tot = NAN, extot = 0, *o[1];
  const double *in[2];
  char params_[64];
  *err = INFINITY;
  if (x && t) {
    for (i = 0; i < N; i++) x[i] = rf(L->v[i], F);
    for (i = 0; i < L->r; i++) t[i] = (double)tgt[i];
    snprintf(params_, sizeof params_, "compute=%s", F->name);
    o[0] = &tot; in[0] = x; in[1] = t;
    if (kernel_run("xent", params_, LOWP_OP_XENT, L->r, n, F, F, o, in) == 0) {
      o[0] = t + L->r; /* the exact loss of each row (reduction none) */
      if (exact_op(LOWP_OP_XENT, L->r, n, o, in) == 0) {
        for (i = 0; i < L->r; i++) extot += t[L->r + i];
        extot /= (double)L->r;
        *err = fabs(tot - extot) / fabs(extot);
      }
    }
  }
  free(x); free(t);
  return tot;
}

/* ------------------------------------------------------------ the block */

typedef struct { tensor_t Wqkv, Wo, W1, W2, Wout; } weights_t;

/* One forward pass under policy p (ref: everything in fp64). Fills
   err[NOPS] (relative error of each op vs the exact op on its inputs),
   fmt[NOPS] (the format each op ran in), logits (T x V) and the loss. */
static double forward(const policy_t *p, int ref, const cfg_t *c, const tensor_t *x, const weights_t *w,
                      const int *tgt, double *err, const char **fmt, double *logits) {
  size_t T = (size_t)c->T, d = (size_t)c->d, V = (size_t)c->V, i, j;
  const lowp_format_t *acc = ref ? &LOWP_FMT_FP64 : &LOWP_FMT_FP32, *F;
  tensor_t ln1 = tnew(T, d), qkv = tnew(T, 3 * d), q = tnew(T, d), k = tnew(T, d), v = tnew(T, d),
           sc = tnew(T, T), pr = tnew(T, T), av = tnew(T, d), o = tnew(T, d), h = tnew(T, d),
           ln2 = tnew(T, d), u = tnew(T, 4 * d), g = tnew(T, 4 * d), m = tnew(T, d), y = tnew(T, d),
           lg = tnew(T, V);
  double loss, inv = 1.0 / sqrt((double)d);
  int n = 0;

#define RUN(expr, fm) do { err[n] = (expr); fmt[n] = (fm)->name; n++; } while (0)
  F = fmt_for(p, OP_LN, x->f, NULL, T * d, ref);
  RUN(op_layernorm(&ln1, x, F), F);
  F = fmt_for(p, OP_MM, ln1.f, NULL, 0, ref);
  RUN(op_matmul(&qkv, &ln1, &w->Wqkv, 0, F, acc), F);
  for (i = 0; i < T; i++)
    for (j = 0; j < d; j++) {
      q.v[i * d + j] = rf(qkv.v[i * 3 * d + j] * inv, qkv.f); /* exact when d is a power of 4 */
      k.v[i * d + j] = qkv.v[i * 3 * d + d + j];
      v.v[i * d + j] = qkv.v[i * 3 * d + 2 * d + j];
    }
  q.f = k.f = v.f = qkv.f;
  F = fmt_for(p, OP_MM, q.f, NULL, 0, ref);
  RUN(op_matmul(&sc, &q, &k, 1, F, acc), F);
  F = fmt_for(p, OP_SM, sc.f, NULL, T * T, ref);
  RUN(op_softmax(&pr, &sc, F), F);
  F = fmt_for(p, OP_MM, pr.f, NULL, 0, ref);
  RUN(op_matmul(&av, &pr, &v, 0, F, acc), F);
  RUN(op_matmul(&o, &av, &w->Wo, 0, F, acc), F);
  F = fmt_for(p, OP_ADD, x->f, o.f, T * d, ref);
  RUN(op_add(&h, x, &o, F), F);
  F = fmt_for(p, OP_LN, h.f, NULL, T * d, ref);
  RUN(op_layernorm(&ln2, &h, F), F);
  F = fmt_for(p, OP_MM, ln2.f, NULL, 0, ref);
  RUN(op_matmul(&u, &ln2, &w->W1, 0, F, acc), F);
  F = fmt_for(p, OP_GELU, u.f, NULL, T * 4 * d, ref);
  RUN(op_gelu(&g, &u, F), F);
  F = fmt_for(p, OP_MM, g.f, NULL, 0, ref);
  RUN(op_matmul(&m, &g, &w->W2, 0, F, acc), F);
  F = fmt_for(p, OP_ADD, h.f, m.f, T * d, ref);
  RUN(op_add(&y, &h, &m, F), F);
  F = fmt_for(p, OP_MM, y.f, NULL, 0, ref);
  RUN(op_matmul(&lg, &y, &w->Wout, 0, F, acc), F);
  F = fmt_for(p, OP_CE, lg.f, NULL, T * V, ref);
  loss = op_xent(&lg, tgt, F, &err[n]);
  fmt[n++] = F->name;
#undef RUN
  memcpy(logits, lg.v, T * V * sizeof(double));
  free(ln1.v); free(qkv.v); free(q.v); free(k.v); free(v.v); free(sc.v); free(pr.v); free(av.v);
  free(o.v); free(h.v); free(ln2.v); free(u.v); free(g.v); free(m.v); free(y.v); free(lg.v);
  return loss;
}

/* ------------------------------------------------------- variance study */

enum { V_ONEPASS, V_TWOPASS, V_WELFORD, NVM };
static const char *const VM_NAME[NVM] = {"one-pass", "two-pass", "Welford"};

/* population variance of x[0..n) (values of F) computed in A: the
   statistics of the registry kernel layernorm (variant=onepass|twopass|
   welford, compute=F, acc=A: every operation of the statistics rounded to A;
   clamp=off: the one-pass formula's own value, negative under
   cancellation), returned in A; NaN if the kernel fails */
static double var_in(const double *x, size_t n, int method, const lowp_format_t *F, const lowp_format_t *A) {
  static const char *const variant[NVM] = {"onepass", "twopass", "welford"};
  double *y = malloc(n * sizeof *y), mean = NAN, var = NAN, *o[3];
  const double *in[1];
  char params_[160];
  snprintf(params_, sizeof params_, "compute=%s,acc=%s,variant=%s,clamp=off", F->name, A->name, variant[method]);
  o[0] = y; o[1] = &mean; o[2] = &var; in[0] = x;
  if (!y || kernel_run("layernorm", params_, LOWP_OP_LAYERNORM, 1, n, F, A, o, in) != 0) var = NAN;
  free(y);
  return var;
}

/* ---------------------------------------------------------- run helpers */

static tensor_t weight(size_t r, size_t c, lowp_rng_t *g) {
  tensor_t t = tnew(r, c);
  size_t i;
  for (i = 0; i < r * c; i++) t.v[i] = (double)(float)(lowp_rng_normal(g) / sqrt((double)r));
  return t;
}

#define NRATIO 9
#define NVA 2 /* the statistics' format: 0 the data's own (low-format accumulation), 1 fp32 */

/* One point of the variance study (data format, statistics' format, method,
   mean/std), over its rows. */
typedef struct {
  double err;   /* mean relative error over the rows with a finite result */
  double errd;  /* the same against the exact variance of the unrounded (fp32) data: the data's rounding included */
  double bnd;   /* mean of the rigorous bound (lowp_bound_variance) over the same rows */
  double worst; /* the largest ratio error / bound */
  long rows;    /* rows used (rounded data not constant) */
  long ovf;     /* rows whose result overflowed (inf or NaN) */
  long viol;    /* finite rows whose error exceeds its bound (must be none) */
} vcell_t;

/* --------------------------------------------------------------- run */

/* Everything run() declares and measures, shared by its phases. */
typedef struct {
  cfg_t c;
  weights_t w;
  tensor_t x;
  int *tgt;
  double *lg, *lgref;
  lowp_rng_t g;               /* the data stream: weights, input, targets, then the variance rows */
  double err[NPOL][NOPS], loss[NPOL], lerr[NPOL], gerr[NPOL], loss_ref, eref[NOPS];
  const char *fmt[NPOL][NOPS], *fref[NOPS];
  vcell_t vc[3][NVA][NVM][NRATIO];
  double aerr[2][2][3];        /* [fp16, bf16][layer norm, softmax][in F, acc=fp32, PyTorch (compute=fp32)] */
  cJSON *tables, *plots;
} ac_t;

static const lowp_format_t *const VF[3] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_FP32};

/* declare: the block's weights, input and targets (fp32 values, seeded) */
static int declare(lowp_run_t *r, ac_t *a) {
  size_t T, d, V, i;
  get_cfg(r, &a->c);
  T = (size_t)a->c.T; d = (size_t)a->c.d; V = (size_t)a->c.V;
  lowp_rng_init(&a->g, r->seed, 0x6163u);
  a->w.Wqkv = weight(d, 3 * d, &a->g);
  a->w.Wo = weight(d, d, &a->g);
  a->w.W1 = weight(d, 4 * d, &a->g);
  a->w.W2 = weight(4 * d, d, &a->g);
  a->w.Wout = weight(d, V, &a->g);
  a->x = tnew(T, d);
  for (i = 0; i < T * d; i++) a->x.v[i] = (double)(float)(a->c.in_scale * lowp_rng_normal(&a->g));
  a->tgt = malloc(T * sizeof *a->tgt);
  a->lg = malloc(T * V * sizeof *a->lg);
  a->lgref = malloc(T * V * sizeof *a->lgref);
  if (!a->tgt || !a->lg || !a->lgref) return 2;
  for (i = 0; i < T; i++) a->tgt[i] = (int)(lowp_rng_next(&a->g) % (uint64_t)V);
  return 0;
}

/* measure: the fp64 reference pass, then every policy (ops.csv) */
static int measure_policies(lowp_run_t *r, ac_t *a) {
  const cfg_t c = a->c;
  size_t T = (size_t)c.T, V = (size_t)c.V;
  double (*err)[NOPS] = a->err, *loss = a->loss, *lerr = a->lerr, *gerr = a->gerr;
  double loss_ref = a->loss_ref;
  const char *(*fmt)[NOPS] = a->fmt;
  size_t p, o;
  FILE *f;
  a->loss_ref = loss_ref = forward(&POL[0], 1, &c, &a->x, &a->w, a->tgt, a->eref, a->fref, a->lgref);
  f = fopen(lowp_run_path(r, "ops.csv"), "w");
  if (!f) return 2;
  fprintf(f, "op_index,policy,rel_err,format\n");
  for (p = 0; p < NPOL; p++) {
    loss[p] = forward(&POL[p], 0, &c, &a->x, &a->w, a->tgt, err[p], fmt[p], a->lg);
    lerr[p] = fabs(loss[p] - loss_ref) / fabs(loss_ref);
    gerr[p] = rel_norm(a->lg, a->lgref, T * V);
    for (o = 0; o < NOPS; o++) /* errors of exactly 0 are drawn at 1e-12 (log axis) */
      fprintf(f, "%zu,%s,%.6g,%s\n", o, POL[p].name, err[p][o] > 1e-12 ? err[p][o] : 1e-12, fmt[p][o]);
    lowp_run_progress(r, "policy %s", POL[p].name);
  }
  if (fclose(f) != 0) return 2;

  return 0;
}

/* measure: layer norm and softmax of the block's input x stored in fp16 and
   bf16, computed three ways: every operation in the format; the sums and
   statistics in fp32 (acc=fp32); everything in fp32 with only the input and
   output in the format, as PyTorch computes layer_norm (Welford moments in
   float, aten/src/ATen/native/cuda/layer_norm_kernel.cu) and softmax
   (accscalar_t = float, aten/src/ATen/native/cuda/SoftMax.cu) on half and
   bfloat16 tensors */
static int measure_accum_ops(ac_t *a) {
  static const char *const acc[3] = {"", ",acc=fp32", ""};
  tensor_t y = tnew(a->x.r, a->x.c);
  size_t q, k;
  if (!y.v) return 2;
  for (q = 0; q < 2; q++)
    for (k = 0; k < 3; k++) {
      const char *cf = k == 2 ? "fp32" : VF[q]->name;
      char par[128];
      snprintf(par, sizeof par, "compute=%s%s,variant=%s,scale=rsqrt", cf, acc[k], k == 2 ? "welford" : "twopass");
      a->aerr[q][0][k] = op_layernorm_p(&y, &a->x, VF[q], par);
      snprintf(par, sizeof par, "compute=%s%s", cf, acc[k]);
      a->aerr[q][1][k] = op_softmax_p(&y, &a->x, VF[q], par);
    }
  free(y.v);
  return 0;
}

/* the format the statistics of data format q are computed in: its own (acc 0) or fp32 */
static const lowp_format_t *vacc(size_t q, size_t acc) { return acc ? &LOWP_FMT_FP32 : VF[q]; }

/* one row xq of n values of VF[q] at mean/std index k: each method with the
   statistics in each format, its error and its bound; evd the exact variance
   of the row before it was rounded to VF[q] (errd: the error the user sees) */
static void var_row(ac_t *a, const double *xq, size_t n, size_t q, size_t k, double evd) {
  double mean = NAN, ev = exact_var(xq, n, &mean);
  size_t acc, m;
  /* rows whose rounded data are all equal (variance 0) have no relative
     error: skipped (bf16 at mean 10^4, ulp 64) */
  if (!(ev > 0)) return;
  for (acc = 0; acc < NVA; acc++) {
    const lowp_format_t *A = vacc(q, acc);
    if (acc && A == VF[q]) continue; /* fp32 data: the same as acc 0 */
    for (m = 0; m < NVM; m++) {
      vcell_t *c = &a->vc[q][acc][m][k];
      double vv = var_in(xq, n, (int)m, VF[q], A), e, b;
      c->rows++;
      if (!isfinite(vv)) { c->ovf++; continue; } /* overflow: the bound does not apply */
      e = fabs(vv - ev) / ev;
      c->errd += fabs(vv - evd) / evd;
      b = lowp_bound_variance(xq, n, (lowp_var_alg_t)m, lowp_format_u(A), lowp_format_xmins(A) / 2, mean, ev);
      c->err += e;
      c->bnd += b;
      c->viol += !(e <= b);
      if (e / b > c->worst) c->worst = e / b;
    }
  }
}

/* the level at which overflowing points are drawn: a decade above every
   finite error (bounds above it, vacuous there, leave the plot) */
static double var_ovf_level(const ac_t *a) {
  const vcell_t *c = &a->vc[0][0][0][0];
  double top = 1;
  size_t i;
  for (i = 0; i < 3 * NVA * NVM * NRATIO; i++)
    if (c[i].err > top) top = c[i].err;
  return pow(10, ceil(log10(top)) + 1);
}

/* variance.csv: one row per series and mean/std; rel_err is the mean over the
   rows with a finite result, plot_y the value drawn (the overflow level where
   any row overflowed) */
static int var_csv(lowp_run_t *r, const ac_t *a) {
  FILE *fv = fopen(lowp_run_path(r, "variance.csv"), "w");
  double lvl = var_ovf_level(a);
  size_t q, acc, m, k;
  if (!fv) return 2;
  fprintf(fv, "series,ratio,rel_err,bound,rows,overflow_rows,plot_y,rel_err_vs_unrounded\n");
  for (acc = NVA; acc-- > 0;)
    for (q = 0; q < 3; q++)
      for (m = 0; m < NVM; m++)
        for (k = 0; k < NRATIO; k++) {
          const vcell_t *c = &a->vc[q][acc][m][k];
          double y = c->ovf ? lvl : (c->err > 1e-12 ? c->err : 1e-12);
          if (!c->rows || (acc && vacc(q, acc) == VF[q])) continue; /* no usable row; fp32 data once */
          fprintf(fv, "%s %s %s stats,%.6g,%.6g,%.6g,%ld,%ld,%.6g,%.6g\n", VF[q]->name, VM_NAME[m],
                  vacc(q, acc)->name, pow(10.0, 0.5 * (double)k), c->err, c->bnd, c->rows, c->ovf, y,
                  c->ovf ? lvl : c->errd);
        }
  return fclose(fv) == 0 ? 0 : 2;
}

/* measure: variance of mean + N(0,1) by three algorithms, data in three
   formats, statistics in the data's format and in fp32 (variance.csv) */
static int measure_variance(lowp_run_t *r, ac_t *a) {
  const cfg_t c = a->c;
  size_t n = (size_t)c.vn, i, k, q, row;
  double *xv = malloc(n * sizeof *xv), *xq = malloc(n * sizeof *xq);
  if (!xv || !xq) { free(xv); free(xq); return 2; }
  memset(a->vc, 0, sizeof a->vc);
  for (k = 0; k < NRATIO; k++) {
    double ratio = pow(10.0, 0.5 * (double)k);
    for (row = 0; row < (size_t)c.vrows; row++) {
      double mean, evd;
      for (i = 0; i < n; i++) xv[i] = (double)(float)(ratio + lowp_rng_normal(&a->g));
      evd = exact_var(xv, n, &mean);
      for (q = 0; q < 3; q++) {
        for (i = 0; i < n; i++) xq[i] = rf(xv[i], VF[q]); /* the data are values of the format tested */
        var_row(a, xq, n, q, k, evd);
      }
    }
    lowp_run_progress(r, "variance: mean/std = %g", ratio);
  }
  free(xv); free(xq);
  {
    vcell_t *cl = &a->vc[0][0][0][0];
    for (i = 0; i < 3 * NVA * NVM * NRATIO; i++) {
      long fin = cl[i].rows - cl[i].ovf;
      cl[i].err = fin ? cl[i].err / (double)fin : NAN;
      cl[i].errd = fin ? cl[i].errd / (double)fin : NAN;
      cl[i].bnd = fin ? cl[i].bnd / (double)fin : NAN;
    }
  }
  for (k = 0; k < NRATIO; k++) /* fp32 data: fp32 statistics are its own */
    for (i = 0; i < NVM; i++) a->vc[2][1][i][k] = a->vc[2][0][i][k];
  return var_csv(r, a);
}

/* one cell of the variance table: the mean error, its bound, overflows */
static void var_cell(char *buf, size_t len, const vcell_t *c) {
  if (!c->rows) snprintf(buf, len, "n/a (data constant)");
  else if (c->ovf == c->rows) snprintf(buf, len, "overflow (inf or NaN) in all %ld rows", c->rows);
  else if (c->ovf) snprintf(buf, len, "%.2e (bound %.2e); overflow in %ld of %ld rows", c->err, c->bnd, c->ovf, c->rows);
  else snprintf(buf, len, "%.2e (bound %.2e)", c->err, c->bnd);
}

/* the variance table: fp32 statistics first (PyTorch's layer_norm for
   fp16/bf16 data), then the statistics in the data's own format */
static void render_var_table(const ac_t *a, cJSON *tables) {
  const char *cols[NRATIO + 1];
  static char hdr[NRATIO][24];
  char buf[600];
  cJSON *rows;
  size_t k, q, m, acc;
  snprintf(buf, sizeof buf, "Variance of %lld values mean + N(0,1) (values of the data format): mean relative error "
           "over %lld rows with a finite result, and the mean of its rigorous bound (lowp_bound_variance: Chan, Golub & "
           "LeVeque 1983; Higham 2002, sec. 1.9); rows whose rounded data are constant skipped",
           a->c.vn, a->c.vrows);
  cols[0] = "data format, method, statistics computed in \\ mean/std";
  for (k = 0; k < NRATIO; k++) { snprintf(hdr[k], 24, "%g", pow(10.0, 0.5 * (double)k)); cols[k + 1] = hdr[k]; }
  rows = lowp_result_table(tables, buf, cols, NRATIO + 1);
  for (acc = NVA; acc-- > 0;)
    for (q = 0; q < 3; q++)
      for (m = 0; m < NVM; m++) {
        char cell[NRATIO + 1][96];
        const char *cp[NRATIO + 1];
        if (acc && vacc(q, acc) == VF[q]) continue; /* fp32 data: once */
        snprintf(cell[0], sizeof cell[0], "%s, %s, %s%s", VF[q]->name, VM_NAME[m], vacc(q, acc)->name,
                 acc || q == 2 ? " (as PyTorch's layer_norm)" : " (low-format accumulation)");
        for (k = 0; k < NRATIO; k++) var_cell(cell[k + 1], sizeof cell[k + 1], &a->vc[q][acc][m][k]);
        for (k = 0; k <= NRATIO; k++) cp[k] = cell[k];
        lowp_result_add_row(rows, cp, NRATIO + 1);
      }
}

/* render: the per-op table, the output table and the variance table */
static void render_tables(lowp_run_t *r, ac_t *a) {
  double (*err)[NOPS] = a->err, *loss = a->loss, *lerr = a->lerr, *gerr = a->gerr;
  double loss_ref = a->loss_ref;
  const char *(*fmt)[NOPS] = a->fmt;
  cJSON *tables, *rows;
  size_t p, o;
  /* ---- tables */
  tables = a->tables = cJSON_AddArrayToObject(r->results, "tables");
  {
    const char *cols[NPOL + 1];
    cols[0] = "op";
    for (p = 0; p < NPOL; p++) cols[p + 1] = POL[p].name;
    rows = lowp_result_table(tables, "Per-op relative error against the exact op on the same inputs (format the op ran in)", cols, NPOL + 1);
  }
  fprintf(r->summary, "| op |");
  for (p = 0; p < NPOL; p++) fprintf(r->summary, " %s |", POL[p].name);
  fprintf(r->summary, "\n|---|");
  for (p = 0; p < NPOL; p++) fprintf(r->summary, "---|");
  fprintf(r->summary, "\n");
  for (o = 0; o < NOPS; o++) {
    char cell[NPOL + 1][48];
    const char *cp[NPOL + 1];
    snprintf(cell[0], 48, "%s", OPS[o]);
    for (p = 0; p < NPOL; p++) snprintf(cell[p + 1], 48, "%.2e (%s)", err[p][o], fmt[p][o]);
    for (p = 0; p <= NPOL; p++) cp[p] = cell[p];
    lowp_result_add_row_md(rows, r->summary, cp, NPOL + 1);
  }
  {
    static const char *const cols[] = {"policy", "loss", "loss rel. error", "logits rel. error"};
    rows = lowp_result_table(tables, "Output error against an fp64 evaluation of the block (same fp32 weights)", cols, 4);
  }
  fprintf(r->summary, "\n| policy | loss (fp64: %.10g) | loss rel. error | logits rel. error |\n|---|---|---|---|\n", loss_ref);
  for (p = 0; p < NPOL; p++) {
    char c1[48], c2[48], c3[48];
    const char *cp[4];
    snprintf(c1, 48, "%.8g", loss[p]);
    snprintf(c2, 48, "%.2e", lerr[p]);
    snprintf(c3, 48, "%.2e", gerr[p]);
    cp[0] = POL[p].name; cp[1] = c1; cp[2] = c2; cp[3] = c3;
    lowp_result_add_row_md(rows, r->summary, cp, 4);
  }
  render_var_table(a, tables);
  {
    static const char *const cols[] = {"op, data stored in", "every operation in the format",
                                       "sums and statistics in fp32 (acc=fp32)",
                                       "computed in fp32, input and output in the format (PyTorch)"};
    static const char *const opn[2] = {"layer norm", "softmax"};
    rows = lowp_result_table(tables, "Layer norm and softmax of the block's input x (T rows of d values) stored in "
                             "fp16/bf16: relative error against the exact op on the same inputs, with the op's "
                             "arithmetic in the format, with its sums in fp32, and all in fp32 as PyTorch's "
                             "layer_norm and softmax compute for half and bfloat16 tensors", cols, 4);
    for (p = 0; p < 2; p++)
      for (o = 0; o < 2; o++) {
        char cell[4][64];
        const char *cp[4];
        size_t k;
        snprintf(cell[0], 64, "%s, %s", opn[o], VF[p]->name);
        for (k = 0; k < 3; k++) snprintf(cell[k + 1], 64, "%.2e", a->aerr[p][o][k]);
        for (k = 0; k < 4; k++) cp[k] = cell[k];
        lowp_result_add_row(rows, cp, 4);
      }
  }
}

/* variance.png (acc 1: the statistics in fp32, data fp16, bf16, fp32, each
   with its bounds, and the two-pass error against the unrounded data, which
   includes the data's own rounding) or variance_low.png (acc 0: the statistics in the
   data's own format, fp16 and bf16, each with its bound); overflowing points
   drawn on a line a decade above the rest */
static int plot_variance(lowp_run_t *r, const ac_t *a, int acc) {
  static const char *const pt[NVM] = {"linespoints pt 7 lc rgb '%s'", "linespoints pt 5 lc rgb '%s'",
                                      "linespoints pt 9 lc rgb '%s'"};
  static const int bdt[NVM] = {3, 4, 5};
  lowp_plot_t pl = {NULL, "mean / standard deviation", "relative error of the variance", 1, 1, NULL};
  lowp_series_t s[3 * NVM * 2 + 2];
  char nm[3 * NVM * 2 + 2][96], flt[3 * NVM * 2 + 2][64], sty[3 * NVM * 2 + 2][96], extra[900];
  size_t q, m, k, ns = 0, nq = acc ? 3 : 2;
  double top = 1, lvl;
  int any_ovf = 0, any_zero = 0, len;
  for (q = 0; q < nq; q++)
    for (m = 0; m < NVM; m++)
      for (k = 0; k < NRATIO; k++) {
        const vcell_t *c = &a->vc[q][acc][m][k];
        any_ovf |= c->ovf > 0;
        any_zero |= c->rows > c->ovf && !c->ovf && c->err <= 1e-12;
        if (c->err > top) top = c->err;
        if (acc && c->errd > top) top = c->errd;
      }
  lvl = var_ovf_level(a);
  pl.title = acc ? "Variance with fp32 statistics (PyTorch's layer_norm for fp16/bf16 data)"
                 : "Variance with the statistics in the data's own format (fp16, bf16)";
  len = snprintf(extra, sizeof extra, "set key outside right top font ',9'\nset format y '10^{%%L}'\n"
                 "set format x '10^{%%L}'\nset yrange [%g:%g]", any_zero ? 1e-13 : 1e-9, any_ovf ? 10 * lvl : 10 * top);
  if (any_ovf && len > 0 && (size_t)len < sizeof extra)
    len += snprintf(extra + len, sizeof extra - (size_t)len, "\nset arrow from graph 0, first %g to graph 1, first %g "
                    "nohead dt 2 lc rgb '#888888'\nset label 'overflow (inf or NaN)' at graph 0.02, first %g", lvl, lvl,
                    2.5 * lvl);
  if (any_zero && len > 0 && (size_t)len < sizeof extra)
    snprintf(extra + len, sizeof extra - (size_t)len, "\nset arrow from graph 0, first 1e-12 to graph 1, first 1e-12 "
             "nohead dt 2 lc rgb '#888888'\nset label 'error 0 (exact)' at graph 0.02, first 2.5e-12");
  pl.extra = extra;
  for (q = 0; q < nq; q++)
    for (m = 0; m < NVM; m++) { /* measured: column 7 (plot_y) */
      lowp_series_t x1 = {"variance.csv", 2, 7, NULL, NULL, NULL, 1, 0};
      snprintf(flt[ns], sizeof flt[ns], "%s %s %s stats", VF[q]->name, VM_NAME[m], vacc(q, (size_t)acc)->name);
      snprintf(nm[ns], sizeof nm[ns], "%s data, %s", VF[q]->name, VM_NAME[m]);
      snprintf(sty[ns], sizeof sty[ns], pt[m], lowp_result_format_color(VF[q]->name));
      x1.title = nm[ns]; x1.filter = flt[ns]; x1.style = sty[ns]; x1.dashed = m > 0;
      s[ns++] = x1;
    }
  for (q = 0; q < nq; q++)
    for (m = 0; m < NVM; m++) { /* bounds: column 4 */
      lowp_series_t x1 = {"variance.csv", 2, 4, NULL, NULL, NULL, 1, 0};
      snprintf(flt[ns], sizeof flt[ns], "%s %s %s stats", VF[q]->name, VM_NAME[m], vacc(q, (size_t)acc)->name);
      snprintf(nm[ns], sizeof nm[ns], "bound, %s, %s data", VM_NAME[m], VF[q]->name);
      snprintf(sty[ns], sizeof sty[ns], "lines dt %d lc rgb '%s'", bdt[m], lowp_result_format_color(VF[q]->name));
      x1.title = nm[ns]; x1.filter = flt[ns]; x1.style = sty[ns];
      s[ns++] = x1;
    }
  for (q = 0; acc && q < 2; q++) { /* fp16/bf16 data, two-pass, against the unrounded data: column 8 */
    lowp_series_t x1 = {"variance.csv", 2, 8, NULL, NULL, NULL, 1, 0};
    snprintf(flt[ns], sizeof flt[ns], "%s %s %s stats", VF[q]->name, VM_NAME[V_TWOPASS], vacc(q, 1)->name);
    snprintf(nm[ns], sizeof nm[ns], "%s data, %s, vs unrounded data", VF[q]->name, VM_NAME[V_TWOPASS]);
    snprintf(sty[ns], sizeof sty[ns], "linespoints pt 2 ps 1.5 lc rgb '%s'", lowp_result_format_color(VF[q]->name));
    x1.title = nm[ns]; x1.filter = flt[ns]; x1.style = sty[ns];
    s[ns++] = x1;
  }
  return lowp_plot(r->outdir, acc ? "variance" : "variance_low", &pl, s, ns);
}

/* render: the three plots */
static int render_plots(lowp_run_t *r, ac_t *a) {
  cJSON *plots;
  size_t p, o;
  int st;
  /* ---- plots */
  plots = a->plots = cJSON_AddArrayToObject(r->results, "plots");
  {
    char extra[1400];
    size_t len;
    lowp_plot_t pl = {"Error each op adds, by precision policy (vs the exact op on its own inputs)", NULL,
                      "relative error of the op's output", 0, 1, NULL};
    lowp_series_t s[NPOL];
    /* each policy in the colour of its low format (results.c), pure policies open points, dashed */
    static const char *const pfmt[NPOL] = {"fp32", "fp16", "bf16", NULL, "fp16", "bf16"};
    static const int ppt[NPOL] = {7, 5, 9, 11, 6, 4};
    static char sty[NPOL][80];
    len = (size_t)snprintf(extra, sizeof extra, "set key outside bottom center horizontal maxrows 2\nset format y '10^{%%L}'\nset yrange [1e-9:1]\n"
                           "set xrange [-0.5:%zu.5]\nset xtics rotate by -40 (", NOPS - 1);
    for (o = 0; o < NOPS && len < sizeof extra - 80; o++)
      len += (size_t)snprintf(extra + len, sizeof extra - len, "%s'%s' %zu", o ? ", " : "", OPS[o], o);
    snprintf(extra + len, sizeof extra - len, ")");
    pl.extra = extra;
    for (p = 0; p < NPOL; p++) {
      lowp_series_t x1 = {"ops.csv", 1, 3, POL[p].name, sty[p], POL[p].name, 2, p >= 4};
      snprintf(sty[p], sizeof sty[p], "linespoints pt %d lc rgb '%s'", ppt[p],
               pfmt[p] ? lowp_result_format_color(pfmt[p]) : lowp_result_series_color(0));
      s[p] = x1;
    }
    st = lowp_plot(r->outdir, "ops", &pl, s, NPOL);
  }
  if (st == 0) st = plot_variance(r, a, 1);
  if (st == 0) st = plot_variance(r, a, 0);
  lowp_result_plot(plots, "ops.png", "Relative error each op adds, given its actual inputs, per policy (log axis; "
                   "exact results drawn at 1e-12, below the axis). Dashed: pure fp16/bf16.");
  {
    /* the captions from the computed numbers (mean/std = 100: index 4) */
    char cap[1400], o16[96], t16[96], w16[96];
    vcell_t *f = a->vc[0][1][V_ONEPASS], *l = a->vc[0][0][V_ONEPASS];
    var_cell(o16, sizeof o16, &a->vc[0][1][V_ONEPASS][4]);
    snprintf(cap, sizeof cap, "Layer-norm statistics under cancellation, computed in fp32 as PyTorch's layer_norm "
             "does for fp16 and bf16 tensors: relative error of the variance against the exact variance of the data "
             "as stored (points; mean over the rows) and its rigorous bound (dotted or dash-dotted line in the data "
             "format's colour, one per method and data format: lowp_bound_variance; it holds on every row). An error "
             "of 0 means exact for the stored data; the crosses are the two-pass error against the exact variance of "
             "the unrounded fp32 data, which the rounding to fp16 or bf16 dominates. At mean/std = 100, fp16 data: "
             "one-pass %s, two-pass %.1e (%.1e against the unrounded data), Welford %.1e; bf16 data: two-pass %.1e "
             "(%.1e against the unrounded data); fp32 data: one-pass %.1e.", o16, a->vc[0][1][V_TWOPASS][4].err,
             a->vc[0][1][V_TWOPASS][4].errd, a->vc[0][1][V_WELFORD][4].err, a->vc[1][1][V_TWOPASS][4].err,
             a->vc[1][1][V_TWOPASS][4].errd, a->vc[2][0][V_ONEPASS][4].err);
    lowp_result_plot(plots, "variance.png", cap);
    var_cell(o16, sizeof o16, &l[4]);
    var_cell(t16, sizeof t16, &a->vc[0][0][V_TWOPASS][4]);
    var_cell(w16, sizeof w16, &a->vc[0][0][V_WELFORD][4]);
    snprintf(cap, sizeof cap, "The same statistics computed in the data's own format (every sum, square and "
             "division rounded to fp16 or bf16, as PyTorch's layer_norm does not, but ONNX Runtime's fused "
             "SkipLayerNorm CUDA kernels did until github.com/microsoft/onnxruntime/pull/28682): points at the top "
             "line overflowed (inf or NaN: fp16's sum of squares or running sum exceeds 65504; bf16 cannot overflow "
             "here), every other point is a finite relative error, unclipped, with its rigorous bound (thin dotted or "
             "dash-dotted line, one per method; for bf16 with n = %lld, n u is about 1 and the worst-case bounds of "
             "the recursive sums exceed 1: true, but vacuous). At mean/std = 100, fp16: one-pass %s; two-pass %s; "
             "Welford %s (fp32 statistics: %.1e).", a->c.vn, o16, t16, w16, f[4].err);
    lowp_result_plot(plots, "variance_low.png", cap);
  }
  if (st != 0) return lowp_run_plot_failed(r, st);

  return 0;
}

/* finite rows, over the whole study, whose error exceeded its bound */
static long var_violations(const ac_t *a) {
  const vcell_t *c = &a->vc[0][0][0][0];
  long v = 0;
  size_t i;
  for (i = 0; i < 3 * NVA * NVM * NRATIO; i++) v += c[i].viol;
  return v;
}

/* judge: the answer and the verdicts (op indices: 3 softmax, 0 ln1, 13 cross-entropy, 1 qkv matmul, 6 add) */
static void judge(lowp_run_t *r, ac_t *a) {
  const cfg_t c = a->c;
  size_t T = (size_t)c.T, d = (size_t)c.d;
  double (*err)[NOPS] = a->err, *lerr = a->lerr;
  vcell_t (*f16)[NRATIO] = a->vc[0][1], (*b16)[NRATIO] = a->vc[1][1], (*l16)[NRATIO] = a->vc[0][0],
          (*lb16)[NRATIO] = a->vc[1][0], (*f32)[NRATIO] = a->vc[2][0];
  const char *(*fmt)[NOPS] = a->fmt;
  cJSON *verdicts;
  char buf[3000], c1[96], c2[96], c3[96], c4[96];
  var_cell(c1, sizeof c1, &l16[V_ONEPASS][4]);
  var_cell(c2, sizeof c2, &l16[V_TWOPASS][4]);
  var_cell(c3, sizeof c3, &lb16[V_ONEPASS][4]);
  var_cell(c4, sizeof c4, &lb16[V_TWOPASS][4]);
  snprintf(buf, sizeof buf,
           "Loss relative error vs fp64: fp32 %.1e, autocast fp16 %.1e, autocast bf16 %.1e, doc 004 rule %.1e, "
           "pure fp16 %.1e, pure bf16 %.1e. Softmax adds %.1e in fp32 (autocast) vs %.1e in pure fp16; layer "
           "norm %.1e vs %.1e; cross-entropy %.1e vs %.1e; an fp16 matmul %.1e. Variance at mean/std = 100 with "
           "fp32 statistics, as PyTorch's layer_norm computes them for fp16/bf16 tensors: fp16 data one-pass %.1e, "
           "two-pass %.1e, Welford %.1e; bf16 data one-pass %.1e, two-pass %.1e, Welford %.1e; each within its "
           "rigorous bound on every row (%ld violations). With the statistics in the data's own format instead: fp16 "
           "one-pass %s, two-pass %s, Welford %.1e; bf16 one-pass %s, two-pass %s, Welford %.1e. Layer norm of the "
           "block's input stored in fp16: %.1e with every operation in fp16, %.1e with fp32 statistics (acc=fp32), "
           "%.1e computed in fp32 as PyTorch does; softmax %.1e, %.1e, %.1e.",
           lerr[0], lerr[1], lerr[2], lerr[3], lerr[4], lerr[5], err[1][3], err[4][3], err[1][0], err[4][0],
           err[1][13], err[4][13], err[1][1], f16[V_ONEPASS][4].err, f16[V_TWOPASS][4].err, f16[V_WELFORD][4].err,
           b16[V_ONEPASS][4].err, b16[V_TWOPASS][4].err, b16[V_WELFORD][4].err, var_violations(a), c1, c2,
           l16[V_WELFORD][4].err, c3, c4, lb16[V_WELFORD][4].err, a->aerr[0][0][0], a->aerr[0][0][1],
           a->aerr[0][0][2], a->aerr[0][1][0], a->aerr[0][1][1], a->aerr[0][1][2]);
  cJSON_AddStringToObject(r->results, "answer", buf);
  fprintf(r->summary, "\n**Answer.** %s\n", buf);
  verdicts = cJSON_AddArrayToObject(r->results, "verdicts");
  snprintf(buf, sizeof buf, "softmax error: %.1e in fp32, %.1e in fp16, %.1e in bf16 (max-subtracted; no overflow)",
           err[1][3], err[4][3], err[5][3]);
  lowp_result_verdict(verdicts, "Softmax must run in FP32: exponentials overflow", "document 004, \"FP32 for Sensitive "
                      "Operations\"; document 000, \"Autocast Operation Rules\"", buf,
                      "holds with a qualification: with the max subtracted fp16 softmax does not overflow; it costs "
                      "about u16 of accuracy, which fp32 removes");
  snprintf(buf, sizeof buf, "layer norm error: %.1e (fp32) vs %.1e (pure fp16); variance at mean/std=100 of fp16 "
           "data, one-pass / two-pass / Welford: fp32 statistics %.1e / %.1e / %.1e; fp16 statistics %s / %s / %.1e",
           err[1][0], err[4][0], f16[V_ONEPASS][4].err, f16[V_TWOPASS][4].err, f16[V_WELFORD][4].err, c1, c2,
           l16[V_WELFORD][4].err);
  lowp_result_verdict(verdicts, "LayerNorm in FP32: variance computation is sensitive to cancellation", "document 004, "
                      "\"Normalization Layers\"", buf,
                      "holds: with fp32 statistics (PyTorch's layer_norm for fp16/bf16 inputs: Welford in float, "
                      "aten/src/ATen/native/cuda/layer_norm_kernel.cu) two-pass and Welford keep their error orders "
                      "of magnitude below one-pass's, which grows like n u (mean/std)^2; with the statistics in "
                      "fp16/bf16 the sums themselves fail (fp16's overflow beyond 65504, bf16's running sum coarser "
                      "than the standard deviation)");
  {
    double u32 = lowp_format_u(&LOWP_FMT_FP32), k10 = 101 * u32, k100 = 10001 * u32;
    snprintf(buf, sizeof buf, "fp32 one-pass relative error at mean/std = 10, 100: %.1e, %.1e; the error of the "
             "final subtraction alone, (1 + (m/s)^2) u = %.1e, %.1e, is exceeded %.0fx, %.0fx, because its operands "
             "Q/n and m^2 carry their sums' accumulated errors (up to (n-1) u each, n = %lld); the rigorous bound "
             "(about (2n+3) u (1 + (m/s)^2)) is %.1e, %.1e and holds on every row",
             f32[V_ONEPASS][2].err, f32[V_ONEPASS][4].err, k10, k100, f32[V_ONEPASS][2].err / k10,
             f32[V_ONEPASS][4].err / k100, c.vn, f32[V_ONEPASS][2].bnd, f32[V_ONEPASS][4].bnd);
  }
  lowp_result_verdict(verdicts, "Catastrophic cancellation: relative error of fl(a - b) ~ |a|/|a - b| u", "document 004, "
                      "\"Catastrophic Cancellation\"", buf,
                      "holds for one subtraction of operands correct to u; for the one-pass variance it underestimates "
                      "by the operands' own accumulated error, a factor up to about n: the bound that holds is "
                      "Chan, Golub & LeVeque's n u kappa^2");
  snprintf(buf, sizeof buf, "cross-entropy error %.1e (fp32) vs %.1e (pure fp16); loss error autocast fp16 %.1e vs pure fp16 %.1e",
           err[1][13], err[4][13], lerr[1], lerr[4]);
  lowp_result_verdict(verdicts, "Cross-entropy loss requires FP32", "document 004, \"Loss Functions\"", buf,
                      err[4][13] > 10 * err[1][13] ? "holds: fp16 makes the loss itself one to several u16 off"
                                                   : "not visible at this size");
  snprintf(buf, sizeof buf, "h = x + attn ran in %s under the doc 004 rule (numel %zu > 1024) vs %s under autocast; "
           "its error %.1e vs %.1e", fmt[3][6], T * d, fmt[1][6], err[3][6], err[1][6]);
  lowp_result_verdict(verdicts, "Element-wise ops (add, gelu): fp16 if the tensor has more than 1024 elements", "document 004, "
                      "\"Precision Selection Rules\" select_precision()", buf,
                      "holds as stated, but it rounds the fp32 residual stream to fp16 at every add, which autocast's "
                      "promote-to-widest rule avoids");
}

static int run(lowp_run_t *r) {
  ac_t a;
  size_t i;
  int st;
  memset(&a, 0, sizeof a);
  st = declare(r, &a);
  if (!st) st = measure_policies(r, &a);
  if (!st) st = measure_variance(r, &a);
  if (!st) st = measure_accum_ops(&a);
  if (!st) {
    render_tables(r, &a);
    st = render_plots(r, &a);
  }
  if (!st) judge(r, &a);
  for (i = 0; i < 5; i++) free(((tensor_t *)&a.w)[i].v);
  free(a.x.v); free(a.tgt); free(a.lg); free(a.lgref);
  if (!st && var_violations(&a)) {
    fprintf(stderr, "lowp run autocast-policy: %ld variance rows exceed their rigorous bound\n", var_violations(&a));
    return 1;
  }
  return st;
}

const lowp_experiment_t lowp_exp_autocast_policy = {
    "autocast-policy",
    "In a small transformer block, how much error does each op add under the documents' precision policies, "
    "and how do one-pass, two-pass and Welford variance fare under cancellation?",
    "Policies as data (autocast op lists of document 000, document 004's select_precision, pure fp16/bf16); "
    "ops emulated with every result rounded to the op's format (matmul: fp32 FMA accumulation); per-op error "
    "vs the exact op on the same inputs (lib/exact), output vs an fp64 evaluation; variance of mean + N(0,1) "
    "data in fp16/bf16/fp32 by three algorithms (the registry kernel layernorm's statistics), computed in fp32 "
    "(acc=fp32: PyTorch's layer_norm for fp16/bf16) and in the data's own format, vs lib/exact, each row "
    "against a rigorous bound (lowp_bound_variance).",
    "fp16 matmuls ~u16 per op, fp32 ops ~1e-7, pure fp16/bf16 ops ~u; one-pass variance error grows like "
    "n u (mean/std)^2, and its fp16 sums overflow; two-pass/Welford with fp32 statistics near u; every "
    "finite variance within its bound.",
    params, run, check};
