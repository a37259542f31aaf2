/* lowp_roofline -- a roofline model of a transformer layer's kernels, per precision and device */

/*
 * See roofline.h for the model. The device numbers below are the vendors'
 * datasheet figures, each with its source; where a datasheet prints only
 * the "with sparsity" figure (H100), the dense rate is computed as half of
 * it, as the datasheet's footnote says. Nothing here is derived by hand.
 */

#include "model/roofline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ the tables */

/* Order matters: a device's gemm_peak[] follows it. */
static const lowp_rprec_t precisions[] = {
    {"fp32", &LOWP_FMT_FP32, &LOWP_FMT_FP32},
    {"tf32", &LOWP_FMT_TF32, &LOWP_FMT_FP32}, /* tf32 is a compute format: fp32 in memory */
    {"fp16", &LOWP_FMT_FP16, &LOWP_FMT_FP16},
    {"bf16", &LOWP_FMT_BF16, &LOWP_FMT_BF16},
};

#define TERA 1e12
#define GIGA 1e9
/* H100 SXM datasheet prints tensor rates "with sparsity"; dense is half */
#define SPARSE_TO_DENSE(x) ((x) / 2)

static const lowp_rdevice_t devices[] = {
    /* NVIDIA Tesla V100 datasheet (V100 SXM2): "Single-Precision 15.7
       TeraFLOPS", "Tensor Performance 125 TeraFLOPS" (fp16 in, fp32
       accumulate), "Memory Bandwidth 900 GB/sec"; seed 004's table agrees
       (15.7, 125). Volta's tensor cores take fp16 only: no tf32, no bf16
       (NAN: those GEMMs run at the fp32 rate, and bf16 keeps only its
       16-bit storage). */
    {"v100", "V100 SXM2",
     {15.7 * TERA, NAN, 125 * TERA, NAN}, 15.7 * TERA, 900 * GIGA,
     "NVIDIA Tesla V100 datasheet (SXM2): FP32 15.7 TFLOPS, tensor (FP16) 125 TFLOPS, HBM2 900 GB/s; "
     "no TF32 or BF16 tensor cores"},
    /* NVIDIA A100 Tensor Core GPU datasheet and "NVIDIA A100 Tensor Core
       GPU Architecture" whitepaper (2020), A100 40 GB SXM: FP32 19.5
       TFLOPS, TF32 tensor 156 TFLOPS (312 with sparsity), FP16 and BF16
       tensor 312 TFLOPS (624 with sparsity), HBM2 1,555 GB/s; seed 004's
       table agrees (19.5, 312, 312, 156). */
    {"a100", "A100 SXM4 40 GB",
     {19.5 * TERA, 156 * TERA, 312 * TERA, 312 * TERA}, 19.5 * TERA, 1555 * GIGA,
     "NVIDIA A100 datasheet / A100 architecture whitepaper (SXM4 40 GB): FP32 19.5, TF32 156, "
     "FP16 312, BF16 312 TFLOPS dense, HBM2 1,555 GB/s"},
    /* NVIDIA A100 datasheet, A100 80 GB SXM: the same rates, HBM2e 2,039 GB/s */
    {"a100-80gb", "A100 SXM4 80 GB",
     {19.5 * TERA, 156 * TERA, 312 * TERA, 312 * TERA}, 19.5 * TERA, 2039 * GIGA,
     "NVIDIA A100 datasheet (SXM4 80 GB): FP32 19.5, TF32 156, FP16 312, BF16 312 TFLOPS dense, "
     "HBM2e 2,039 GB/s"},
    /* NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: FP32 67 TFLOPS,
       TF32 tensor 989 TFLOPS*, BF16 1,979*, FP16 1,979* (* with sparsity),
       GPU memory bandwidth 3.35 TB/s; seed 004's table gives the dense
       rates rounded (67, 990, 990, 495). */
    {"h100", "H100 SXM5 80 GB",
     {67 * TERA, SPARSE_TO_DENSE(989 * TERA), SPARSE_TO_DENSE(1979 * TERA),
      SPARSE_TO_DENSE(1979 * TERA)},
     67 * TERA, 3350 * GIGA,
     "NVIDIA H100 datasheet (SXM): FP32 67 TFLOPS, TF32 989 / FP16 1,979 / BF16 1,979 TFLOPS with "
     "sparsity (dense: half), HBM3 3.35 TB/s"},
};

/* ------------------------------------------------------ private helpers */

typedef struct {
  lowp_rkernel_t *out;
  size_t max, n;
} list_t;

static void gemm(list_t *l, const char *name, int bwd, size_t count, size_t m, size_t n,
                 size_t k, int ta, int tb) {
  lowp_rkernel_t *x;
  if (l->out && l->n < l->max) {
    x = &l->out[l->n];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    x->kind = LOWP_RK_GEMM;
    x->backward = bwd;
    x->op = LOWP_MOP_NONE;
    x->count = count;
    x->m = m;
    x->n = n;
    x->k = k;
    x->ta = ta;
    x->tb = tb;
  }
  l->n++;
}

static void mem(list_t *l, const char *name, int bwd, lowp_mop_t op, size_t rows, size_t cols,
                int n_rd, int n_wr, double extra, double fpe) {
  lowp_rkernel_t *x;
  if (l->out && l->n < l->max) {
    x = &l->out[l->n];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    x->kind = LOWP_RK_MEM;
    x->backward = bwd;
    x->op = op;
    x->count = 1;
    x->rows = rows;
    x->cols = cols;
    x->n_rd = n_rd;
    x->n_wr = n_wr;
    x->extra_bytes = extra;
    x->flops_per_elem = fpe;
  }
  l->n++;
}

/* ----------------------------------------------------------- public API */

const lowp_rprec_t *lowp_roofline_precisions(size_t *n) {
  *n = sizeof precisions / sizeof precisions[0];
  return precisions;
}

const lowp_rdevice_t *lowp_roofline_devices(size_t *n) {
  *n = sizeof devices / sizeof devices[0];
  return devices;
}

const lowp_rdevice_t *lowp_roofline_device(const char *name) {
  size_t i;
  for (i = 0; i < sizeof devices / sizeof devices[0]; i++)
    if (!strcmp(devices[i].name, name)) return &devices[i];
  return NULL;
}

/*
 * The kernels, with T = batch seq tokens, d = d_model, f = ffn_mult d,
 * dh = d / heads, BH = batch heads attention problems of seq x seq.
 * Linear layers are PyTorch's y = x W^T (W is out x in): forward
 * (T x in)(in x out)^T, so B transposed; dX = dY W; dW = dY^T X.
 * nn.MultiheadAttention of seed 001 has no attention dropout (its default
 * dropout = 0), so the three nn.Dropout(0.1) sites are the attention output,
 * the GELU output and the MLP output. Operation counts per element of the
 * memory-bound kernels (the straightforward algorithm, rounded): softmax
 * 5 (scale, max, subtract, exp, sum, divide), backward 4; layer norm 8,
 * backward 12; GELU 16 (erf by a polynomial), backward 20; dropout 2,
 * backward 1; add 1. The rows' fp32 statistics of layer norm (mean, rstd)
 * and the 1-byte dropout masks are the extra bytes.
 */
size_t lowp_roofline_layer(lowp_rkernel_t *out, size_t max, const lowp_layer_dims_t *d) {
  list_t l = {out, max, 0};
  size_t T, D, F, S, BH, dh;
  double mask_e, mask_f, stats;
  int drop;
  if (!d || !d->batch || !d->seq || !d->d_model || !d->heads || !d->ffn_mult ||
      d->d_model % d->heads || !(d->dropout >= 0 && d->dropout < 1))
    return 0;
  T = d->batch * d->seq;
  D = d->d_model;
  F = d->ffn_mult * D;
  S = d->seq;
  BH = d->batch * d->heads;
  dh = D / d->heads;
  drop = d->dropout > 0;
  mask_e = (double)T * (double)D;      /* one byte per element */
  mask_f = (double)T * (double)F;
  stats = 2.0 * (double)T * 4.0;       /* mean and rstd per row, fp32 */

  /* ---- forward */
  gemm(&l, "qkv.fwd", 0, 1, T, 3 * D, D, 0, 1);
  gemm(&l, "scores.fwd", 0, BH, S, S, dh, 0, 1);              /* Q K^T */
  mem(&l, "softmax.fwd", 0, LOWP_MOP_SOFTMAX, BH * S, S, 1, 1, 0, 5);
  gemm(&l, "attnv.fwd", 0, BH, S, dh, S, 0, 0);               /* P V */
  gemm(&l, "proj.fwd", 0, 1, T, D, D, 0, 1);
  if (drop) mem(&l, "dropout1.fwd", 0, LOWP_MOP_DROPOUT, T, D, 1, 1, mask_e, 2);
  mem(&l, "residual1.fwd", 0, LOWP_MOP_ADD, T, D, 2, 1, 0, 1);
  mem(&l, "ln1.fwd", 0, LOWP_MOP_LN, T, D, 1, 1, stats, 8);
  gemm(&l, "mlp_up.fwd", 0, 1, T, F, D, 0, 1);
  mem(&l, "gelu.fwd", 0, LOWP_MOP_GELU, T, F, 1, 1, 0, 16);
  if (drop) mem(&l, "dropout2.fwd", 0, LOWP_MOP_DROPOUT, T, F, 1, 1, mask_f, 2);
  gemm(&l, "mlp_down.fwd", 0, 1, T, D, F, 0, 1);
  if (drop) mem(&l, "dropout3.fwd", 0, LOWP_MOP_DROPOUT, T, D, 1, 1, mask_e, 2);
  mem(&l, "residual2.fwd", 0, LOWP_MOP_ADD, T, D, 2, 1, 0, 1);
  mem(&l, "ln2.fwd", 0, LOWP_MOP_LN, T, D, 1, 1, stats, 8);

  /* ---- backward, in reverse; reads x, dy, the row statistics, writes dx */
  mem(&l, "ln2.bwd", 1, LOWP_MOP_LN_BWD, T, D, 2, 1, stats, 12);
  if (drop) mem(&l, "dropout3.bwd", 1, LOWP_MOP_DROPOUT_BWD, T, D, 1, 1, mask_e, 1);
  gemm(&l, "mlp_down.dX", 1, 1, T, F, D, 0, 0);               /* dY W */
  gemm(&l, "mlp_down.dW", 1, 1, D, F, T, 1, 0);               /* dY^T H */
  if (drop) mem(&l, "dropout2.bwd", 1, LOWP_MOP_DROPOUT_BWD, T, F, 1, 1, mask_f, 1);
  mem(&l, "gelu.bwd", 1, LOWP_MOP_GELU_BWD, T, F, 2, 1, 0, 20);
  gemm(&l, "mlp_up.dX", 1, 1, T, D, F, 0, 0);
  gemm(&l, "mlp_up.dW", 1, 1, F, D, T, 1, 0);
  /* the skip path's gradient and the MLP path's are summed at ln1's output */
  mem(&l, "residual2.bwd", 1, LOWP_MOP_ADD, T, D, 2, 1, 0, 1);
  mem(&l, "ln1.bwd", 1, LOWP_MOP_LN_BWD, T, D, 2, 1, stats, 12);
  if (drop) mem(&l, "dropout1.bwd", 1, LOWP_MOP_DROPOUT_BWD, T, D, 1, 1, mask_e, 1);
  gemm(&l, "proj.dX", 1, 1, T, D, D, 0, 0);
  gemm(&l, "proj.dW", 1, 1, D, D, T, 1, 0);
  gemm(&l, "attnv.dP", 1, BH, S, S, dh, 0, 1);                /* dO V^T */
  gemm(&l, "attnv.dV", 1, BH, S, dh, S, 1, 0);                /* P^T dO */
  mem(&l, "softmax.bwd", 1, LOWP_MOP_SOFTMAX_BWD, BH * S, S, 2, 1, 0, 4);
  gemm(&l, "scores.dQ", 1, BH, S, dh, S, 0, 0);               /* dS K */
  gemm(&l, "scores.dK", 1, BH, S, dh, S, 1, 0);               /* dS^T Q */
  gemm(&l, "qkv.dX", 1, 1, T, D, 3 * D, 0, 0);
  gemm(&l, "qkv.dW", 1, 1, 3 * D, D, T, 1, 0);
  /* the layer input's gradient: skip path plus the attention path */
  mem(&l, "residual1.bwd", 1, LOWP_MOP_ADD, T, D, 2, 1, 0, 1);
  return l.n;
}

void lowp_roofline_cost(double *flops, double *bytes, const lowp_rkernel_t *k,
                        const lowp_format_t *storage) {
  double w = (double)lowp_format_width(storage) / 8.0; /* bytes per element */
  if (k->kind == LOWP_RK_GEMM) {
    double c = (double)k->count, m = (double)k->m, n = (double)k->n, kk = (double)k->k;
    *flops = 2.0 * c * m * n * kk;
    *bytes = c * (m * kk + kk * n + m * n) * w;
  } else {
    double e = (double)k->rows * (double)k->cols;
    *flops = k->flops_per_elem * e;
    *bytes = (double)(k->n_rd + k->n_wr) * e * w + k->extra_bytes;
  }
}

void lowp_roofline_time(lowp_rtime_t *t, const lowp_rkernel_t *k, size_t pi,
                        const lowp_rdevice_t *dev) {
  size_t np;
  const lowp_rprec_t *p = lowp_roofline_precisions(&np);
  memset(t, 0, sizeof *t);
  if (pi >= np) pi = 0;
  lowp_roofline_cost(&t->flops, &t->bytes, k, p[pi].storage);
  t->peak = dev->fp32_peak;
  if (k->kind == LOWP_RK_GEMM) {
    if (isnan(dev->gemm_peak[pi])) t->fallback = 1;
    else t->peak = dev->gemm_peak[pi];
  }
  t->t_compute = t->flops / t->peak;
  t->t_memory = t->bytes / dev->bw;
  t->t = t->t_compute > t->t_memory ? t->t_compute : t->t_memory;
}

void lowp_roofline_split(double *dc, double *dm, double c0, double m0, double c1, double m1) {
  double t00 = fmax(c0, m0), t11 = fmax(c1, m1);
  double t10 = fmax(c1, m0); /* compute changed first */
  double t01 = fmax(c0, m1); /* memory changed first */
  *dc = 0.5 * ((t00 - t10) + (t01 - t11));
  *dm = 0.5 * ((t00 - t01) + (t10 - t11));
}
