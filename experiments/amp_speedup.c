/* lowp_exp_amp_speedup -- how much faster a transformer layer runs in TF32, FP16, BF16 than in FP32, and why */

/*
 * Question (seed 004, exercise 5): what speedup do TF32, FP16 and BF16 give
 *   over FP32 for a transformer layer (seed 001's: batch 16, sequence 512,
 *   model 1024, 16 heads, MLP 4x, dropout 0.1), forward and backward, on
 *   V100, A100 and H100, and what fraction of it comes from compute and what
 *   from memory bandwidth? And what does this machine measure?
 * Method:
 *   1. A prediction, not a measurement: a roofline model
 *      (lib/model/roofline.c; deterministic) at 100% of the datasheet peaks.
 *      Each kernel of the layer (every GEMM, forward, dX and dW; softmax,
 *      layer norm, GELU, dropout, residual adds, forward and backward) takes
 *      max(flops / peak, bytes / bandwidth) with the datasheet peaks (each
 *      cited in roofline.c and in the peaks table); the speedup of a
 *      precision is the ratio of step times, and the time saved is split
 *      into compute and memory parts by the Shapley value of the two changes
 *      (peak and bytes), kernel by kernel. The GEMMs the model finds memory
 *      bound are counted per device and precision (results.json
 *      "memory_bound_gemms").
 *   1b. The autocast policy, op by op (policy_model below): PyTorch's
 *      autocast keeps softmax, layer norm and the residual stream in fp32
 *      and adds cast kernels; the step also gets what the layer kernels
 *      leave out (attention scale/mask and dropout, head transposes, weight
 *      casts, GradScaler, Adam's step). Its table gives the index's key
 *      numbers; the pure 16-bit rows stay as an upper bound.
 *      bf16 is modelled only where the GPU has bf16 units (not V100).
 *   2. The band: published measurements put cuBLAS at 66-87% of the
 *      datasheet GEMM peak at its best shapes (EFF_LO, EFF_HI below, cited);
 *      the speedup is recomputed with the CUDA-core and the tensor-core GEMMs
 *      each anywhere in that range, and its smallest and largest values are
 *      the band (table, speedup.csv, the triangles of speedup.png,
 *      results.json "predicted_speedup").
 *   3. Measured on this CPU, fp32 only (timing-dependent, kept out of
 *      results.json): the layer at cpu_batch x cpu_seq (reduced by default)
 *      with OpenBLAS cblas_sgemm (each GEMM first validated against the
 *      exact product within gamma_k of fp32, kernels/train/amp_layer.c) and
 *      plain fp32 C kernels for softmax, layer norm, GELU (experiments/
 *      amp_cpu.c), dropout and the adds (amp_layer.c's loops) -- not
 *      lowp's emulating kernels, whose speed says nothing about a layer's;
 *      the median of cpu_reps passes with the fastest and slowest. The roofs
 *      are measured in the same run, before every pass: the best
 *      cblas_sgemm rate at roof_n^3 and the best STREAM triad (over stream_mb
 *      per array and over one activation tensor per array); each roof is
 *      then raised to the highest rate any kernel of the run reached (that
 *      kernel is named), so that no achieved rate exceeds its roof and the
 *      roofline's step is a lower bound of the measured one. The layer is
 *      not timed in bf16 in C: whether the CPU has bf16/fp16 units (CPUID,
 *      lib/cpu.c) and whether this OpenBLAS has cblas_sbgemm is reported;
 *      where the CPU has AVX512_BF16, the bf16/fp32 ratio of the units'
 *      arithmetic rate is measured (lowp_ampc_bf16_rate_ratio: validated
 *      VDPBF16PS against VFMADD231PS chains, timing.json), "absent" otherwise;
 *      python/tests_torch/test_amp_cpu.py (label torch) times fp32 against
 *      bf16 with PyTorch's CPU kernels where PyTorch is installed.
 *   4. On a GPU (CUDA build and a device; tools/gpu.sh runs this): the same
 *      kernels, full size, with cuBLAS (kernels/cuda/amp_layer.cu), per
 *      precision, set against the prediction for the GPU's datasheet row:
 *      the GEMMs' share of the predicted rate, each speedup against the band.
 *   Timings go to timing.json, cpu_kernels.csv and gpu_kernels.csv, which
 *   differ from run to run; results.json, kernels.csv, policy_ops.csv
 *   (the autocast policy's ops: they sum to its steps) and speedup.csv hold
 *   only the model and are byte-identical for the same parameters. Why: the
 *   framework has no notion of a timing-dependent result (cmd_run.c writes
 *   results.json with a clock-free header; tests/cli/experiments.sh and
 *   tests/cli/run.sh compare reruns byte for byte, and `lowp report` renders
 *   results.json only), so the measured answer lives beside it: in
 *   timing.json ("cpu"/"gpu" -> "answer"), on stdout and in summary.md. A
 *   test comparing reruns must leave out timing.json, cpu_kernels.csv,
 *   gpu_kernels.csv and summary.md, or run with --measure=none.
 * Run: lowp run amp-speedup [--gpus=v100,a100,h100] [--cpu_seq=256] [--measure=cpu,gpu|none]
 * Expected / acceptance: the GEMMs dominate the FP32 step and most are
 *   compute bound, so most of the speedup comes from the tensor-core rates;
 *   the memory-bound kernels (softmax, layer norm, GELU, dropout) only halve
 *   in time with 16-bit storage and cap the speedup well below the peak
 *   ratio (Amdahl); V100 has no TF32 or BF16 tensor cores, so TF32 gives
 *   nothing and BF16 only its halved traffic there. On the CPU no achieved
 *   rate exceeds its roof (by construction), and no bf16 speedup is measured
 *   where the GEMM library has no bf16 kernel.
 */

#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "catalog.h"
#include "results.h"

#include "gpu/amp_gpu.h"
#include "train/amp_layer.h"
#include "amp_cpu.h"
#include "cpu.h"
#include "format/format.h"
#include "io/plot.h"
#include "model/roofline.h"
#include "rng/rng.h"
#include "status.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const lowp_param_t params[] = {
    {"batch", "16", NULL, "batch size of the modelled layer (seed 001)"},
    {"seq", "512", NULL, "sequence length of the modelled layer"},
    {"d_model", "1024", NULL, "model width (also of the CPU layer)"},
    {"heads", "16", NULL, "attention heads (divide d_model)"},
    {"ffn_mult", "4", NULL, "MLP width as a multiple of d_model"},
    {"dropout", "0.1", NULL, "dropout probability (0: no dropout kernels)"},
    {"gpus", "v100,a100,h100", NULL, "datasheet devices modelled (v100, a100, a100-80gb, h100)"},
    {"measure", "cpu,gpu", NULL, "what to time: cpu, gpu (when built with CUDA and a device is present), or none"},
    {"cpu_batch", "1", NULL, "batch of the layer measured on the CPU"},
    {"cpu_seq", "256", "64", "sequence length of the layer measured on the CPU"},
    {"cpu_reps", "5", "3", "CPU passes over the layer (the median counts; the spread is reported)"},
    {"cpu_threads", "1", NULL, "threads of the CPU measurement (OpenBLAS and OpenMP; 0 = all): one keeps timings steady on a shared machine"},
    {"cpu_check", "64", "32", "entries of each CPU GEMM checked against the exact product"},
    {"stream_mb", "64", "32", "MB per array of the STREAM triad (3 arrays; above the caches)"},
    {"roof_n", "1024", NULL, "size n of the square GEMM (n x n x n) that measures the CPU's GEMM roof"},
    {"gpu_reps", "10", "3", "GPU runs per kernel (the fastest counts)"},
    {NULL, NULL, NULL, NULL}};

#define MAXK 64
#define MAXG 8

/* ------------------------------------------------------ private helpers */

/* Achieved GEMM efficiency of cuBLAS, as a fraction of the datasheet peak,
   from published measurements at each GEMM's best shape:
   - 0.66: V100 SXM2, cuBLAS mixed-precision GEMM 83 of 125 TFLOP/s (S.
     Markidis et al., "NVIDIA Tensor Core Programmability, Performance &
     Precision", IPDPSW 2018, doi:10.1109/IPDPSW.2018.00091);
   - 0.803: H100 SXM, bf16 matmul 794.5 of 989 TFLOP/s, and 0.869: A100 SXM,
     271.2 of 312 (S. Bekman, "Machine Learning Engineering", Maximum
     Achievable Matmul FLOPS table, github.com/stas00/ml-engineering,
     compute/accelerator/README.md).
   The band [0.66, 0.869] is applied to every GEMM's compute time, the
   CUDA-core (fp32) GEMMs and the tensor-core ones each anywhere in it; the
   layer's GEMMs are smaller than the best shapes, so real efficiencies can
   be lower still. Memory-bound kernels stay at 100% of the HBM bandwidth. */
#define EFF_LO 0.66
#define EFF_HI 0.869


typedef struct {
  lowp_layer_dims_t dims, cdims;
  const lowp_rdevice_t *gpus[MAXG];
  int ng;
  int cpu, gpu;
  long cpu_reps, cpu_check, stream_mb, gpu_reps, cpu_threads, roof_n;
} cfg_t;

static void parse(const lowp_run_t *r, cfg_t *c) {
  const char *s;
  char name[64];
  memset(c, 0, sizeof *c);
  c->dims.batch = (size_t)lowp_run_param_int(r, "batch", 1, 1 << 20);
  c->dims.seq = (size_t)lowp_run_param_int(r, "seq", 1, 1 << 20);
  c->dims.d_model = (size_t)lowp_run_param_int(r, "d_model", 1, 1 << 20);
  c->dims.heads = (size_t)lowp_run_param_int(r, "heads", 1, 1 << 20);
  c->dims.ffn_mult = (size_t)lowp_run_param_int(r, "ffn_mult", 1, 64);
  c->dims.dropout = lowp_run_param_num(r, "dropout");
  if (!(c->dims.dropout >= 0 && c->dims.dropout < 1)) lowp_run_bad_param(r, "dropout", "must be in [0, 1)");
  if (c->dims.d_model % c->dims.heads) lowp_run_bad_param(r, "heads", "must divide d_model");
  s = lowp_run_param(r, "gpus");
  for (;;) {
    size_t n = strcspn(s, ",");
    const lowp_rdevice_t *d;
    if (n == 0 || n >= sizeof name || c->ng == MAXG)
      lowp_run_bad_param(r, "gpus", "expected a comma-separated list of v100, a100, a100-80gb, h100");
    memcpy(name, s, n);
    name[n] = '\0';
    d = lowp_roofline_device(name);
    if (!d) lowp_run_bad_param(r, "gpus", "unknown device (known: v100, a100, a100-80gb, h100)");
    c->gpus[c->ng++] = d;
    s += n;
    if (!*s) break;
    s++;
  }
  s = lowp_run_param(r, "measure");
  if (strcmp(s, "none"))
    for (;;) {
      size_t n = strcspn(s, ",");
      if (n == 3 && !strncmp(s, "cpu", 3) && !c->cpu) c->cpu = 1;
      else if (n == 3 && !strncmp(s, "gpu", 3) && !c->gpu) c->gpu = 1;
      else lowp_run_bad_param(r, "measure", "expected none, or a list of cpu and gpu (each once)");
      s += n;
      if (!*s) break;
      s++;
    }
  c->cdims = c->dims;
  c->cdims.batch = (size_t)lowp_run_param_int(r, "cpu_batch", 1, 64);
  c->cdims.seq = (size_t)lowp_run_param_int(r, "cpu_seq", 1, 4096);
  c->cpu_reps = (long)lowp_run_param_int(r, "cpu_reps", 1, 100);
  c->cpu_threads = (long)lowp_run_param_int(r, "cpu_threads", 0, 1024);
  c->cpu_check = (long)lowp_run_param_int(r, "cpu_check", 1, 1 << 20);
  c->stream_mb = (long)lowp_run_param_int(r, "stream_mb", 1, 4096);
  c->roof_n = (long)lowp_run_param_int(r, "roof_n", 1, 8192);
  c->gpu_reps = (long)lowp_run_param_int(r, "gpu_reps", 1, 1000);
  if (c->cpu) {
    /* the CPU buffers: attention's scores (batch heads seq^2) and the MLP's
       activations dominate; refuse what cannot fit in a few GB */
    double T = (double)c->cdims.batch * (double)c->cdims.seq, D = (double)c->dims.d_model;
    double sc = (double)c->cdims.batch * (double)c->dims.heads * (double)c->cdims.seq * (double)c->cdims.seq;
    double big = fmax(sc, T * D * (double)c->dims.ffn_mult);
    double bytes = big * (4 * 3 + 2 * 3 + 8 * 2 + 1) + 3 * 4 * D * D * (double)c->dims.ffn_mult * 3;
    if (bytes > 8e9)
      lowp_run_bad_param(r, "cpu_seq", "the CPU layer would need more than 8 GB (lower cpu_batch, cpu_seq or d_model)");
  }
}

static void check(const lowp_run_t *r) {
  cfg_t c;
  parse(r, &c);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* "%.3g" into a table cell */
static const char *g3(char *buf, size_t len, double v) {
  snprintf(buf, len, "%.3g", v);
  return buf;
}

/* the roofline of the layer on one device: per kernel and precision, and
   the step totals; dc/dm: the time saved vs fp32 from compute / memory;
   lo/hi: the speedup over fp32 when the GEMMs reach EFF_LO..EFF_HI of the
   datasheet peak (band_speedup); nmb: the GEMMs that are memory bound */
typedef struct {
  lowp_rtime_t t[MAXK][LOWP_RPREC_MAX];
  double step[LOWP_RPREC_MAX], gemm[LOWP_RPREC_MAX], dc[LOWP_RPREC_MAX], dm[LOWP_RPREC_MAX];
  double lo[LOWP_RPREC_MAX], hi[LOWP_RPREC_MAX];
  int fallback[LOWP_RPREC_MAX], nmb[LOWP_RPREC_MAX], ngemm;
} model_t;

/* the step of precision p when CUDA-core GEMMs (fp32, and a precision the
   device has no tensor cores for) reach e32 of their peak and tensor-core
   GEMMs etc of theirs; the memory-bound kernels as modelled */
static double step_at(const model_t *m, const lowp_rkernel_t *ks, size_t nk, size_t p, double e32, double etc) {
  double s = 0;
  size_t i;
  for (i = 0; i < nk; i++) {
    const lowp_rtime_t *t = &m->t[i][p];
    if (ks[i].kind == LOWP_RK_GEMM) s += fmax(t->t_compute / (p == 0 || t->fallback ? e32 : etc), t->t_memory);
    else s += t->t;
  }
  return s;
}

/* the speedup of p over fp32 at the four corners of the efficiency band:
   its smallest and largest value */
static void band_speedup(model_t *m, const lowp_rkernel_t *ks, size_t nk, size_t p) {
  static const double e[2] = {EFF_LO, EFF_HI};
  int a, b;
  m->lo[p] = INFINITY;
  m->hi[p] = 0;
  for (a = 0; a < 2; a++)
    for (b = 0; b < 2; b++) {
      double sp = step_at(m, ks, nk, 0, e[a], e[a]) / step_at(m, ks, nk, p, e[a], e[b]);
      m->lo[p] = fmin(m->lo[p], sp);
      m->hi[p] = fmax(m->hi[p], sp);
    }
}

static void model(model_t *m, const lowp_rkernel_t *ks, size_t nk, size_t np, const lowp_rdevice_t *d) {
  size_t i, p;
  memset(m, 0, sizeof *m);
  for (i = 0; i < nk; i++) m->ngemm += ks[i].kind == LOWP_RK_GEMM;
  for (p = 0; p < np; p++) {
    for (i = 0; i < nk; i++) {
      lowp_rtime_t *t = &m->t[i][p], *t0 = &m->t[i][0];
      double dc, dm;
      lowp_roofline_time(t, &ks[i], p, d);
      m->step[p] += t->t;
      if (ks[i].kind == LOWP_RK_GEMM) {
        m->gemm[p] += t->t;
        m->nmb[p] += t->t_compute < t->t_memory; /* the same test as kernels.csv's "bound" column */
      }
      m->fallback[p] |= t->fallback;
      lowp_roofline_split(&dc, &dm, t0->t_compute, t0->t_memory, t->t_compute, t->t_memory);
      m->dc[p] += dc;
      m->dm[p] += dm;
    }
  }
  for (p = 0; p < np; p++) band_speedup(m, ks, nk, p);
}

/*
 * The autocast policy, op by op. PyTorch's torch.autocast (CUDA) runs the
 * matmuls in 16 bits and keeps softmax and layer norm in fp32 (its "fp32
 * list"; the chapter's own table of seed 004 says the same); an op that
 * needs another dtype than its input gets a cast kernel. On top of the
 * layer kernels (lib/model/roofline.c, which stores every tensor in 16
 * bits: the "pure 16-bit" rows, an upper bound), the policy step has:
 *  - softmax, layer norm and the residual stream in fp32: those kernels at
 *    their fp32 roofline (the residual adds read one fp32 and one 16-bit
 *    operand: taken as fp32, a slight overestimate);
 *  - casts: the scores to fp32 before softmax and the probabilities back to
 *    16 bits before P V; the layer input and the layer-norm output to 16
 *    bits before the QKV and MLP GEMMs; each mirrored in the backward pass;
 *    the fp32 master weights to 16 bits once per forward pass (autocast's
 *    weight cache) and the 16-bit weight gradients to fp32;
 *  - the GradScaler's unscale and inf check of the fp32 gradients;
 * and, in every precision (fp32 included, so the speedups compare like
 * with like), what the layer kernels leave out: the scaling by 1/sqrt(d_h)
 * and the mask of the scores, the dropout of the attention probabilities
 * (fp32 under autocast: it follows softmax), the head split and merge
 * copies (transposes of Q, K, V and of the attention output) forward and
 * backward, and Adam's step on the fp32 master weights (read weight,
 * gradient and two moments, write three: 28 bytes per parameter).
 * Each is a memory-bound kernel: max(flops / fp32 peak, bytes / bandwidth).
 * A precision whose device has no 16-bit unit for it (bf16 on V100) is not
 * modelled: autocast refuses it there (torch.cuda.is_bf16_supported()).
 */
typedef struct {
  const char *name;
  const char *cls;   /* policy_ops.csv's class: mask, dropout, transpose, optimizer, cast */
  double elems;      /* elements the kernel touches */
  double b32, b16;   /* bytes per element: every precision's fp32 path (b32, also tf32), 16-bit autocast (b16) */
  double flops;      /* per element */
} extra_t;

#define MAXX 24

/* the extra kernels of the step (see above); returns their count */
static size_t policy_extras(extra_t *x, const lowp_layer_dims_t *d) {
  double T = (double)d->batch * (double)d->seq, D = (double)d->d_model, F = D * (double)d->ffn_mult;
  double A = (double)d->batch * (double)d->heads * (double)d->seq * (double)d->seq, P = 4 * D * D + 2 * D * F;
  size_t n = 0;
  int dr = d->dropout > 0;
#define X(nm, c, e, a, b, f) \
  (x[n].name = nm, x[n].cls = c, x[n].elems = e, x[n].b32 = a, x[n].b16 = b, x[n].flops = f, n++)
  X("scale_mask.fwd", "mask", A, 8, 4, 2);            /* 16-bit scores in and out, before the cast */
  X("scale_mask.bwd", "mask", A, 8, 4, 1);
  if (dr) {
    X("attn_dropout.fwd", "dropout", A, 9, 9, 2);     /* fp32 under autocast (after softmax), 1-byte mask */
    X("attn_dropout.bwd", "dropout", A, 9, 9, 1);
  }
  X("heads_split.fwd", "transpose", 3 * T * D, 8, 4, 0); /* Q, K, V to head-major */
  X("heads_merge.fwd", "transpose", T * D, 8, 4, 0);
  X("heads_split.bwd", "transpose", 3 * T * D, 8, 4, 0);
  X("heads_merge.bwd", "transpose", T * D, 8, 4, 0);
  X("adam_step", "optimizer", P, 28, 28, 12);         /* fp32 master weights, both moments */
  X("cast_scores_to_fp32.fwd", "cast", A, 0, 6, 0);   /* autocast only: b32 = 0 */
  X("cast_probs_to_16.fwd", "cast", A, 0, 6, 0);
  X("cast_probs_grad.bwd", "cast", A, 0, 6, 0);
  X("cast_scores_grad.bwd", "cast", A, 0, 6, 0);
  X("cast_input_to_16.fwd", "cast", T * D, 0, 6, 0);
  X("cast_ln1_to_16.fwd", "cast", T * D, 0, 6, 0);
  X("cast_input_grad.bwd", "cast", T * D, 0, 6, 0);
  X("cast_ln1_grad.bwd", "cast", T * D, 0, 6, 0);
  X("cast_weights_to_16", "cast", P, 0, 6, 0);
  X("cast_wgrad_to_fp32", "cast", P, 0, 6, 0);
  X("gradscaler_unscale", "optimizer", P, 0, 12, 2);
#undef X
  return n;
}

/* does layer kernel k stay fp32 under autocast (softmax, layer norm, the fp32 residual stream)? */
static int autocast_fp32(const lowp_rkernel_t *k) {
  return k->op == LOWP_MOP_SOFTMAX || k->op == LOWP_MOP_SOFTMAX_BWD || k->op == LOWP_MOP_LN ||
         k->op == LOWP_MOP_LN_BWD || !strncmp(k->name, "residual", 8);
}

/* the policy step of precision p on device d (model m holds the layer kernels' rooflines): step, and the
   time saved against fp32 split into compute and memory (Shapley per kernel); 0 if not modelled. With csv,
   every op of every modelled precision is also written there (policy_ops.csv): its rows are the terms of
   pm->step, so they sum to it */
typedef struct {
  double step[LOWP_RPREC_MAX], dc[LOWP_RPREC_MAX], dm[LOWP_RPREC_MAX], extra[LOWP_RPREC_MAX], casts[LOWP_RPREC_MAX];
  int modelled[LOWP_RPREC_MAX];
} policy_t;

/* one policy_ops.csv row: the op's roofline terms on one device and precision */
static void op_row(FILE *csv, const char *dev, const char *prec, const char *op, const char *cls, const char *dtype,
                   double flops, double bytes, double tc, double tm, double t) {
  const char *pass = strstr(op, ".fwd") ? "fwd" : strstr(op, ".bwd") ? "bwd" : "step";
  if (csv)
    fprintf(csv, "%s,%s,%s,%s,%s,%s,%.6e,%.6e,%.9e,%.9e,%.9e\n", dev, prec, op, pass, cls, dtype, flops, bytes, tc,
            tm, t);
}

static void policy_model(policy_t *pm, const model_t *m, const lowp_rkernel_t *ks, size_t nk, const lowp_rprec_t *pr,
                         size_t np, const lowp_rdevice_t *d, const lowp_layer_dims_t *dims, FILE *csv) {
  extra_t x[MAXX];
  size_t nx = policy_extras(x, dims), i, p;
  memset(pm, 0, sizeof *pm);
  for (p = 0; p < np; p++) {
    int sixteen = lowp_format_width(pr[p].storage) < 32;
    pm->modelled[p] = !(sixteen && isnan(d->gemm_peak[p]));
    if (!pm->modelled[p]) continue;
    for (i = 0; i < nk; i++) {
      int f32 = sixteen && autocast_fp32(&ks[i]);
      const lowp_rtime_t *t = f32 ? &m->t[i][0] : &m->t[i][p], *t0 = &m->t[i][0];
      double dc, dm;
      op_row(csv, d->name, pr[p].name, ks[i].name, ks[i].kind == LOWP_RK_GEMM ? "gemm" : "memory-bound",
             ks[i].kind == LOWP_RK_GEMM ? pr[p].name : f32 ? "fp32" : pr[p].storage->name, t->flops, t->bytes,
             t->t_compute, t->t_memory, t->t);
      pm->step[p] += t->t;
      lowp_roofline_split(&dc, &dm, t0->t_compute, t0->t_memory, t->t_compute, t->t_memory);
      pm->dc[p] += dc;
      pm->dm[p] += dm;
    }
    for (i = 0; i < nx; i++) {
      double c0 = x[i].elems * x[i].flops / d->fp32_peak, m0 = x[i].elems * x[i].b32 / d->bw;
      double m1 = x[i].elems * (sixteen ? x[i].b16 : x[i].b32) / d->bw, c1 = m1 > 0 ? c0 : 0, dc, dm;
      if (x[i].b32 == 0) c0 = 0; /* a cast: no such kernel in fp32 */
      if (m1 > 0) {
        char dt[64];
        if (x[i].b32 == 0) snprintf(dt, sizeof dt, "fp32<->%s", pr[p].storage->name);
        else snprintf(dt, sizeof dt, "%s", sixteen && x[i].b16 < x[i].b32 ? pr[p].storage->name : "fp32");
        op_row(csv, d->name, pr[p].name, x[i].name, x[i].cls, dt, x[i].elems * x[i].flops, m1 * d->bw, c1, m1,
               fmax(c1, m1));
      }
      pm->step[p] += fmax(c1, m1);
      pm->extra[p] += fmax(c1, m1);
      if (x[i].b32 == 0) pm->casts[p] += fmax(c1, m1);
      lowp_roofline_split(&dc, &dm, c0, m0, c1, m1);
      pm->dc[p] += dc;
      pm->dm[p] += dm;
    }
  }
}

static void write_json_file(const char *path, cJSON *o) {
  char *s = cJSON_Print(o);
  FILE *f = fopen(path, "w");
  if (s && f) { fputs(s, f); fputc('\n', f); }
  if (f) fclose(f);
  free(s);
}

/* --------------------------------------------------------------- run */

/* the run: the layer, the devices' models, the outputs being built */
typedef struct {
  cfg_t c;
  lowp_rkernel_t ks[MAXK], cks[MAXK];
  size_t nk, cnk, np;
  const lowp_rprec_t *pr;
  model_t mods[MAXG];
  policy_t pol[MAXG];            /* the autocast policy's step per device */
  cJSON *tables, *plots, *timing;
  char ans[8192];
  int bad;
} amp_t;

/* what this CPU measured (fp32) */
typedef struct {
  lowp_amp_cpu_t *ctx;          /* GEMMs, backward kernels, dropout, adds (kernels/train/amp_layer.c) */
  const lowp_rprec_t *p32;
  float *x, *y, *mean, *rstd;   /* forward softmax / layer norm / GELU (experiments/amp_cpu.c) */
  size_t ne, nr;
  double *runs;                 /* cpu_reps x cnk seconds */
  double med[MAXK], fast[MAXK], slow[MAXK], fl[MAXK], by[MAXK], pred[MAXK];
  lowp_amp_cpu_t *sq;            /* the square GEMM of the GEMM roof */
  lowp_rkernel_t sqk;
  lowp_ampc_triad_t tb, ts;      /* triads: stream_mb per array, and one activation tensor per array */
  double sq_gemm, triad, triad_small, roof_gemm, roof_bw;
  double step_med, step_fast, step_slow, gemm_med, mem_med, pstep, pgemm, pmem;
  double r16, gf32, gf16;        /* bf16 / fp32 arithmetic rate of one core's units (NAN: not measured) */
  char gemm_src[96], bw_src[96];
  lowp_rdevice_t cpu;
  lowp_cpu_units16_t u;
  cJSON *cj;
  int validated, threads0, nth;
} cpu_t;

static void render_roofs(amp_t *A) {
  cJSON *rows;
  size_t p;
  int g;
  char b1[64];
  /* ---- the roofs, with their sources */
  {
    static const char *const cols[] = {"device", "FP32 (CUDA cores) TFLOP/s", "TF32 tensor TFLOP/s", "FP16 tensor TFLOP/s",
                                       "BF16 tensor TFLOP/s", "memory GB/s", "ridge FP32 / FP16 (flop/byte)", "source"};
    rows = lowp_result_table(A->tables, "Peak rates (dense) and memory bandwidth used by the model", cols, 8);
    for (g = 0; g < A->c.ng; g++) {
      const lowp_rdevice_t *d = A->c.gpus[g];
      char cell[4][64], ridge[64];
      const char *cells[8];
      for (p = 0; p < A->np && p < 4; p++) {
        if (isnan(d->gemm_peak[p])) snprintf(cell[p], sizeof cell[p], "none (runs as FP32)");
        else snprintf(cell[p], sizeof cell[p], "%.4g", d->gemm_peak[p] / 1e12);
      }
      snprintf(ridge, sizeof ridge, "%.3g / %.3g", d->gemm_peak[0] / d->bw,
               isnan(d->gemm_peak[2]) ? NAN : d->gemm_peak[2] / d->bw);
      cells[0] = d->part;
      cells[1] = cell[0]; cells[2] = cell[1]; cells[3] = cell[2]; cells[4] = cell[3];
      snprintf(b1, sizeof b1, "%.4g", d->bw / 1e9);
      cells[5] = b1;
      cells[6] = ridge;
      cells[7] = d->source;
      lowp_result_add_row(rows, cells, 8);
    }
  }

}

static int write_kernels_csv(lowp_run_t *r, amp_t *A) {
  FILE *csv;
  size_t i, p;
  int g;
  /* ---- kernels.csv: every kernel on every device and precision */
  csv = fopen(lowp_run_path(r, "kernels.csv"), "w");
  if (!csv) { fprintf(stderr, "lowp run amp-speedup: cannot write kernels.csv\n"); return LOWP_EIO; }
  fprintf(csv, "device,precision,kernel,pass,kind,flops,bytes,intensity,peak_flops,t_compute_s,t_memory_s,t_s,bound,no_unit\n");
  for (g = 0; g < A->c.ng; g++)
    for (p = 0; p < A->np; p++)
      for (i = 0; i < A->nk; i++) {
        const lowp_rtime_t *t = &A->mods[g].t[i][p];
        fprintf(csv, "%s,%s,%s,%s,%s,%.6e,%.6e,%.6g,%.6e,%.6e,%.6e,%.6e,%s,%d\n", A->c.gpus[g]->name, A->pr[p].name,
                A->ks[i].name, A->ks[i].backward ? "bwd" : "fwd", A->ks[i].kind == LOWP_RK_GEMM ? "gemm" : "mem", t->flops,
                t->bytes, t->flops / t->bytes, t->peak, t->t_compute, t->t_memory, t->t,
                t->t_compute >= t->t_memory ? "compute" : "memory", t->fallback);
      }
  return fclose(csv) ? LOWP_EIO : LOWP_OK;

}

/* policy_ops.csv: the autocast policy's ops on every device and modelled precision (the same policy_model, now
   writing its terms): summed per device and precision they give the policy's step, and fp32's sum over a
   precision's sum its headline speedup (speedup.csv speedup_autocast; tamp_speedup sums them) */
static int write_policy_csv(lowp_run_t *r, amp_t *A) {
  FILE *csv = fopen(lowp_run_path(r, "policy_ops.csv"), "w");
  policy_t tmp;
  int g;
  if (!csv) return LOWP_EIO;
  fprintf(csv, "device,precision,op,pass,class,dtype,flops,bytes,t_compute_s,t_memory_s,t_s\n");
  for (g = 0; g < A->c.ng; g++)
    policy_model(&tmp, &A->mods[g], A->ks, A->nk, A->pr, A->np, A->c.gpus[g], &A->c.dims, csv);
  return fclose(csv) ? LOWP_EIO : LOWP_OK;
}

static int render_speedup(lowp_run_t *r, amp_t *A) {
  FILE *csv;
  cJSON *rows;
  size_t p;
  int g;
  char b1[64], b2[64], b3[64], b4[64], b5[64], b6[64];
  /* ---- speedup table and speedup.csv (the bar plot's data) */
  csv = fopen(lowp_run_path(r, "speedup.csv"), "w");
  if (!csv) { fprintf(stderr, "lowp run amp-speedup: cannot write speedup.csv\n"); return LOWP_EIO; }
  fprintf(csv, "x,device,precision,step_ms,speedup,saved_compute_share,saved_memory_share,rel_step,rel_gemm,"
          "speedup_eff_lo,speedup_eff_hi,speedup_autocast\n");
  {
    static const char *const cols[] = {"device", "precision", "predicted step (fwd+bwd), ms", "speedup over FP32",
                                       "time saved: from compute", "time saved: from memory traffic",
                                       "GEMM share of the step", "memory-bound kernels' share",
                                       "speedup if GEMMs reach 66-87% of peak (published range)", "note"};
    char title[512];
    snprintf(title, sizeof title, "Predicted step time and speedup (roofline at 100%% of the datasheet peaks; layer batch %zu, seq %zu, d_model %zu, "
             "%zu heads, MLP %zux, dropout %g; forward and backward, %zu kernels)", A->c.dims.batch, A->c.dims.seq,
             A->c.dims.d_model, A->c.dims.heads, A->c.dims.ffn_mult, A->c.dims.dropout, A->nk);
    rows = lowp_result_table(A->tables, title, cols, 10);
    for (g = 0; g < A->c.ng; g++)
      for (p = 0; p < A->np; p++) {
        model_t *m = &A->mods[g];
        double sp = m->step[0] / m->step[p], saved = m->step[0] - m->step[p];
        double shc = saved > 0 ? m->dc[p] / saved : NAN, shm = saved > 0 ? m->dm[p] / saved : NAN;
        const char *cells[10];
        char note[128] = "", band[64];
        const policy_t *pm = &A->pol[g];
        if (!pm->modelled[p]) { /* a 16-bit format the GPU has no unit for (bf16 on V100): not a prediction */
          snprintf(note, sizeof note, "no %s unit: not modelled (autocast refuses it there)", A->pr[p].name);
          cells[0] = A->c.gpus[g]->part;
          cells[1] = A->pr[p].name;
          cells[2] = cells[3] = cells[4] = cells[5] = cells[6] = cells[7] = cells[8] = "-";
          cells[9] = note;
          lowp_result_add_row(rows, cells, 10);
          fprintf(csv, "%zu,%s,%s,nan,nan,nan,nan,nan,nan,nan,nan,nan\n", (size_t)g * (A->np + 1) + p + 1,
                  A->c.gpus[g]->name, A->pr[p].name);
          continue;
        }
        if (m->fallback[p])
          snprintf(note, sizeof note, "no %s tensor cores: GEMMs at best at the FP32 rate; only %s", A->pr[p].name,
                   lowp_format_width(A->pr[p].storage) < 32 ? "the 16-bit storage helps" : "nothing changes");
        cells[0] = A->c.gpus[g]->part;
        cells[1] = A->pr[p].name;
        cells[2] = g3(b1, sizeof b1, 1e3 * m->step[p]);
        cells[3] = g3(b2, sizeof b2, sp);
        snprintf(b3, sizeof b3, p == 0 ? "-" : isnan(shc) ? "(none saved)" : "%.1f%%", 100 * shc);
        snprintf(b4, sizeof b4, p == 0 ? "-" : isnan(shm) ? "(none saved)" : "%.1f%%", 100 * shm);
        cells[4] = b3;
        cells[5] = b4;
        snprintf(b5, sizeof b5, "%.1f%%", 100 * m->gemm[p] / m->step[p]);
        snprintf(b6, sizeof b6, "%.1f%%", 100 * (1 - m->gemm[p] / m->step[p]));
        cells[6] = b5;
        cells[7] = b6;
        snprintf(band, sizeof band, p == 0 ? "-" : "%.3g - %.3g", m->lo[p], m->hi[p]);
        cells[8] = band;
        cells[9] = note;
        lowp_result_add_row(rows, cells, 10);
        fprintf(csv, "%zu,%s,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", (size_t)g * (A->np + 1) + p + 1,
                A->c.gpus[g]->name, A->pr[p].name, 1e3 * m->step[p], sp, p == 0 ? 0.0 : shc, p == 0 ? 0.0 : shm,
                m->step[p] / m->step[0], m->gemm[p] / m->step[0], m->lo[p], m->hi[p], pm->step[0] / pm->step[p]);
      }
  }
  return fclose(csv) ? LOWP_EIO : LOWP_OK;

}

/* the autocast policy's table (first of the speedups: the index's key numbers read it), results.json
   "predicted_speedup_autocast", and its sentence of the answer */
static void render_policy(lowp_run_t *r, amp_t *A) {
  static const char *const cols[] = {"device", "precision", "predicted step (fwd+bwd), ms", "speedup over FP32",
                                     "time saved: from compute", "time saved: from memory traffic",
                                     "pure 16-bit speedup (every tensor 16-bit, layer kernels only)",
                                     "casts (ms)", "note"};
  cJSON *rows, *arr = cJSON_AddArrayToObject(r->results, "predicted_speedup_autocast");
  char title[600], b[8][64], part[512], nomod[256] = "";
  static char pol[sizeof A->ans];
  size_t p;
  int g;
  snprintf(title, sizeof title, "Autocast policy, op by op: predicted step and speedup (roofline at 100%% of the "
           "datasheet peaks; GEMMs in 16 bits, softmax, layer norm and the residual stream in fp32, cast kernels, "
           "attention scale/mask and dropout, head transposes, weight casts, GradScaler and Adam's step; layer batch "
           "%zu, seq %zu, d_model %zu; every op's dtype, bytes, flops and time per device in policy_ops.csv, whose "
           "t_s column sums to each step)", A->c.dims.batch, A->c.dims.seq, A->c.dims.d_model);
  rows = lowp_result_table(A->tables, title, cols, 9);
  /* the answer opens with this policy (what PyTorch runs: the index shows the first sentence beside the key
     numbers read from this table); the pure 16-bit model (model_answer, already in A->ans) follows as its bound */
  snprintf(pol, sizeof pol, "A prediction, not a measurement: the roofline at 100%% of the datasheet peaks (dense GEMM "
           "rates, HBM bandwidth; layer batch %zu x seq %zu, d_model %zu, forward + backward) under PyTorch's autocast "
           "policy, op by op (16-bit GEMMs; fp32 softmax, layer norm and residual stream; the casts, attention "
           "scale/mask and dropout, head transposes, weight casts, GradScaler and Adam's step added to every "
           "precision's step), gives ", A->c.dims.batch, A->c.dims.seq, A->c.dims.d_model);
  for (g = 0; g < A->c.ng; g++)
    for (p = 0; p < A->np; p++) {
      const policy_t *pm = &A->pol[g];
      const model_t *m = &A->mods[g];
      const char *cells[9];
      double saved = pm->step[0] - pm->step[p];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "device", A->c.gpus[g]->name);
      cJSON_AddStringToObject(o, "precision", A->pr[p].name);
      cells[0] = A->c.gpus[g]->part;
      cells[1] = A->pr[p].name;
      if (!pm->modelled[p]) {
        snprintf(part, sizeof part, "%s%s %s", nomod[0] ? ", " : "", A->c.gpus[g]->part, A->pr[p].name);
        strncat(nomod, part, sizeof nomod - strlen(nomod) - 1);
        cells[2] = cells[3] = cells[4] = cells[5] = cells[6] = cells[7] = "-";
        snprintf(b[7], sizeof b[7], "no %s unit: not modelled", A->pr[p].name);
        cells[8] = b[7];
        cJSON_AddNullToObject(o, "speedup");
        cJSON_AddStringToObject(o, "note", b[7]);
      } else {
        cells[2] = g3(b[0], sizeof b[0], 1e3 * pm->step[p]);
        cells[3] = g3(b[1], sizeof b[1], pm->step[0] / pm->step[p]);
        snprintf(b[2], sizeof b[2], p == 0 ? "-" : saved > 0 ? "%.1f%%" : "(none saved)", 100 * pm->dc[p] / saved);
        /* only the casts add memory time (every other op's traffic shrinks or stays): a negative share says
           that they cost more than the 16-bit tensors save */
        snprintf(b[3], sizeof b[3], p == 0 ? "-" : saved > 0 ? (pm->dm[p] < 0 ? "%.1f%% (casts outweigh)" : "%.1f%%")
                 : "(none saved)", 100 * pm->dm[p] / saved);
        cells[4] = b[2];
        cells[5] = b[3];
        cells[6] = p == 0 ? "-" : g3(b[4], sizeof b[4], m->step[0] / m->step[p]);
        cells[7] = g3(b[5], sizeof b[5], 1e3 * pm->casts[p]);
        cells[8] = m->fallback[p] ? "no tensor cores for it: GEMMs at the FP32 rate" : "";
        cJSON_AddNumberToObject(o, "speedup", pm->step[0] / pm->step[p]);
        cJSON_AddNumberToObject(o, "step_ms", 1e3 * pm->step[p]);
        if (p > 0 && lowp_format_width(A->pr[p].storage) < 32) {
          snprintf(part, sizeof part, "%s %s x%.2f (pure 16-bit x%.2f)%s", A->c.gpus[g]->name, A->pr[p].name,
                   pm->step[0] / pm->step[p], m->step[0] / m->step[p], "; ");
          strncat(pol, part, sizeof pol - strlen(pol) - 1);
        }
      }
      lowp_result_add_row(rows, cells, 9);
      cJSON_AddItemToArray(arr, o);
    }
  if (nomod[0]) {
    snprintf(part, sizeof part, "a 16-bit format only where the GPU has units for it (not modelled: %s)", nomod);
    strncat(pol, part, sizeof pol - strlen(pol) - 1);
  } else
    pol[strlen(pol) - 2] = '\0'; /* the last "; " */
  strncat(pol, ". ", sizeof pol - strlen(pol) - 1);
  strncat(pol, A->ans, sizeof pol - strlen(pol) - 1);
  snprintf(A->ans, sizeof A->ans, "%s", pol);
}

static void render_kernel_tables(amp_t *A) {
  cJSON *rows;
  size_t i, p;
  int g;
  char b1[64], b2[64];
  /* ---- per-kernel tables, one per device */
  for (g = 0; g < A->c.ng; g++) {
    static const char *const cols[] = {"kernel", "GFLOP", "MB (fp32 / 16-bit)", "flop/byte (fp32)", "FP32 us (bound)",
                                       "TF32 us (bound)", "FP16 us (bound)", "BF16 us (bound)"};
    char title[256];
    snprintf(title, sizeof title, "%s: roofline time per kernel (c = compute bound, m = memory bound; * no unit "
             "for the precision, FP32 rate)", A->c.gpus[g]->part);
    rows = lowp_result_table(A->tables, title, cols, 8);
    for (i = 0; i < A->nk; i++) {
      const char *cells[8];
      char cell[4][64], mb[64];
      const lowp_rtime_t *t0 = &A->mods[g].t[i][0];
      for (p = 0; p < A->np && p < 4; p++) {
        const lowp_rtime_t *t = &A->mods[g].t[i][p];
        snprintf(cell[p], sizeof cell[p], "%.3g %c%s", 1e6 * t->t, t->t_compute >= t->t_memory ? 'c' : 'm',
                 t->fallback ? "*" : "");
      }
      snprintf(mb, sizeof mb, "%.3g / %.3g", t0->bytes / 1e6, A->mods[g].t[i][A->np - 1].bytes / 1e6);
      cells[0] = A->ks[i].name;
      cells[1] = g3(b1, sizeof b1, t0->flops / 1e9);
      cells[2] = mb;
      cells[3] = g3(b2, sizeof b2, t0->flops / t0->bytes);
      cells[4] = cell[0]; cells[5] = cell[1]; cells[6] = cell[2]; cells[7] = cell[3];
      lowp_result_add_row(rows, cells, 8);
    }
  }

}

/* the GEMMs the roofline finds memory bound, per device and precision: a
   table and results.json's "memory_bound_gemms" (the claims ledger cites
   it) */
/* the memory-bound GEMMs of m in precision p, "name (m x n x k), ..." */
static void membound_list(char *out, size_t len, const amp_t *A, const model_t *m, size_t p) {
  size_t i;
  out[0] = '\0';
  for (i = 0; i < A->nk; i++) {
    const lowp_rtime_t *t = &m->t[i][p];
    char b[96];
    if (A->ks[i].kind != LOWP_RK_GEMM || !(t->t_compute < t->t_memory)) continue;
    snprintf(b, sizeof b, "%s%s (%zux%zux%zu)", out[0] ? ", " : "", A->ks[i].name, A->ks[i].m, A->ks[i].n, A->ks[i].k);
    strncat(out, b, len - strlen(out) - 1);
  }
}

static void render_membound(lowp_run_t *r, amp_t *A) {
  static const char *const cols[] = {"device", "precision", "memory-bound GEMMs", "GEMMs in the step",
                                     "which (m x n x k)"};
  cJSON *rows = lowp_result_table(A->tables, "GEMMs that the roofline finds memory bound (flops / peak < bytes / "
                                  "bandwidth), per device and precision", cols, 5);
  cJSON *arr = cJSON_AddArrayToObject(r->results, "memory_bound_gemms");
  size_t i, p;
  int g;
  for (g = 0; g < A->c.ng; g++)
    for (p = 0; p < A->np; p++) {
      const model_t *m = &A->mods[g];
      cJSON *o = cJSON_CreateObject(), *names = cJSON_CreateArray();
      char which[1536], b1[32], b2[32];
      const char *cells[5];
      for (i = 0; i < A->nk; i++)
        if (A->ks[i].kind == LOWP_RK_GEMM && m->t[i][p].t_compute < m->t[i][p].t_memory)
          cJSON_AddItemToArray(names, cJSON_CreateString(A->ks[i].name));
      membound_list(which, sizeof which, A, m, p);
      cJSON_AddStringToObject(o, "device", A->c.gpus[g]->name);
      cJSON_AddStringToObject(o, "precision", A->pr[p].name);
      cJSON_AddNumberToObject(o, "memory_bound", m->nmb[p]);
      cJSON_AddNumberToObject(o, "gemms", m->ngemm);
      cJSON_AddItemToObject(o, "kernels", names);
      cJSON_AddItemToArray(arr, o);
      snprintf(b1, sizeof b1, "%d", m->nmb[p]);
      snprintf(b2, sizeof b2, "%d", m->ngemm);
      cells[0] = A->c.gpus[g]->part;
      cells[1] = A->pr[p].name;
      cells[2] = b1;
      cells[3] = b2;
      cells[4] = which[0] ? which : "-";
      lowp_result_add_row(rows, cells, 5);
    }
}

/* results.json's predicted speedups with their band, and the band's basis */
static void render_prediction_keys(lowp_run_t *r, amp_t *A) {
  cJSON *arr = cJSON_AddArrayToObject(r->results, "predicted_speedup"), *b;
  size_t p;
  int g;
  cJSON_AddStringToObject(r->results, "prediction_basis",
                          "roofline at 100% of the datasheet peaks (dense) and HBM bandwidth: a prediction, not a measurement");
  b = cJSON_AddObjectToObject(r->results, "gemm_efficiency_band");
  cJSON_AddNumberToObject(b, "low", EFF_LO);
  cJSON_AddNumberToObject(b, "high", EFF_HI);
  cJSON_AddStringToObject(b, "sources",
                          "0.66: V100 cuBLAS mixed precision 83 of 125 TFLOP/s (Markidis et al., IPDPSW 2018, "
                          "doi:10.1109/IPDPSW.2018.00091); 0.803 H100 SXM and 0.869 A100 SXM bf16 matmul (Bekman, "
                          "Machine Learning Engineering, Maximum Achievable Matmul FLOPS table, "
                          "github.com/stas00/ml-engineering compute/accelerator/README.md)");
  for (g = 0; g < A->c.ng; g++)
    for (p = 1; p < A->np; p++) {
      const model_t *m = &A->mods[g];
      cJSON *o;
      if (!A->pol[g].modelled[p]) continue; /* no unit for it: not predicted (the table says so) */
      o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "device", A->c.gpus[g]->name);
      cJSON_AddStringToObject(o, "precision", A->pr[p].name);
      cJSON_AddNumberToObject(o, "speedup", m->step[0] / m->step[p]);
      cJSON_AddNumberToObject(o, "speedup_eff_lo", m->lo[p]);
      cJSON_AddNumberToObject(o, "speedup_eff_hi", m->hi[p]);
      cJSON_AddItemToArray(arr, o);
    }
}

static void model_answer(amp_t *A) {
  char part[2560];
  size_t p;
  int g;
  /* ---- the answer (model only: results.json stays byte-identical) */
  snprintf(A->ans, sizeof A->ans, "With every tensor stored in 16 bits and only the layer's kernels (pure 16-bit: "
           "an upper bound on the policy's speedups), and in brackets the speedup if every GEMM reaches %.0f-%.0f%% of "
           "its peak, the range of published cuBLAS measurements (Markidis et al. 2018 on V100; Bekman's matmul table "
           "on A100 and H100), low end with the fp32 GEMMs at the top of the range and the tensor-core ones at the "
           "bottom, high end the reverse: ", 100 * EFF_LO, 100 * EFF_HI);
  for (g = 0; g < A->c.ng; g++) {
    model_t *m = &A->mods[g];
    snprintf(part, sizeof part, "%s%s: FP32 step %.3g ms; ", g ? " " : "", A->c.gpus[g]->part, 1e3 * m->step[0]);
    strncat(A->ans, part, sizeof A->ans - strlen(A->ans) - 1);
    for (p = 1; p < A->np; p++) {
      double saved = m->step[0] - m->step[p];
      if (!A->pol[g].modelled[p])
        snprintf(part, sizeof part, "%s: no %s unit, not modelled%s", A->pr[p].name, A->pr[p].name,
                 p + 1 < A->np ? ", " : ".");
      else if (saved > 0)
        snprintf(part, sizeof part, "%s x%.2f [%.2f-%.2f] (%.0f%% of the time saved from compute, %.0f%% from memory "
                 "traffic%s)%s", A->pr[p].name, m->step[0] / m->step[p], m->lo[p], m->hi[p], 100 * m->dc[p] / saved,
                 100 * m->dm[p] / saved, m->fallback[p] ? "; no tensor cores for it, only its storage helps" : "",
                 p + 1 < A->np ? ", " : ".");
      else
        snprintf(part, sizeof part, "%s x%.2f [%.2f-%.2f] (nothing saved%s)%s", A->pr[p].name, m->step[0] / m->step[p],
                 m->lo[p], m->hi[p], m->fallback[p] ? ": no tensor cores for it, and it stores fp32" : "",
                 p + 1 < A->np ? ", " : ".");
      strncat(A->ans, part, sizeof A->ans - strlen(A->ans) - 1);
    }
  }
  {
    /* why the speedup is below the peak ratio: the memory-bound kernels' share at fp16 (last device) */
    model_t *m = &A->mods[A->c.ng - 1];
    size_t pf = 2 < A->np ? 2 : A->np - 1;
    const lowp_rdevice_t *d = A->c.gpus[A->c.ng - 1];
    char which[1536];
    membound_list(which, sizeof which, A, m, pf);
    snprintf(part, sizeof part, " On %s the memory-bound kernels take %.0f%% of the FP32 step but %.0f%% of the %s step "
             "(Amdahl: they only halve), so the speedup stays below the %.3gx ratio of the peak rates. Not every GEMM is "
             "compute bound: in %s on %s, %d of the step's %d GEMMs are memory bound (%s; table and results.json "
             "\"memory_bound_gemms\").", d->part, 100 * (1 - m->gemm[0] / m->step[0]), 100 * (1 - m->gemm[pf] / m->step[pf]),
             A->pr[pf].name, isnan(d->gemm_peak[pf]) ? NAN : d->gemm_peak[pf] / d->gemm_peak[0], A->pr[pf].name, d->part,
             m->nmb[pf], m->ngemm, which[0] ? which : "none");
    strncat(A->ans, part, sizeof A->ans - strlen(A->ans) - 1);
    for (g = 0; g < A->c.ng; g++) {
      snprintf(part, sizeof part, "%s%s: %d of %d in %s, %d in %s%s", g ? "; " : " Memory-bound GEMMs per device: ",
               A->c.gpus[g]->name, A->mods[g].nmb[pf], A->mods[g].ngemm, A->pr[pf].name, A->mods[g].nmb[0], A->pr[0].name,
               g + 1 < A->c.ng ? "" : ".");
      strncat(A->ans, part, sizeof A->ans - strlen(A->ans) - 1);
    }
  }
}

static int render_plots(lowp_run_t *r, amp_t *A) {
  size_t p;
  int g, st;
  /* ---- the plot: speedup bars per device and precision */
  {
    static const char *const colr[4] = {"#7f7f7f", "#1f77b4", "#d62728", "#2ca02c"};
    lowp_series_t sr[LOWP_RPREC_MAX + 3];
    char style[LOWP_RPREC_MAX][96], extra[2048], xt[1024] = "set xtics (";
    for (g = 0; g < A->c.ng; g++) {
      char item[128];
      snprintf(item, sizeof item, "%s\"%s\" %.1f", g ? ", " : "", A->c.gpus[g]->part, (double)g * (A->np + 1) + (A->np + 1) / 2.0);
      strncat(xt, item, sizeof xt - strlen(xt) - 2);
    }
    strncat(xt, ")", sizeof xt - strlen(xt) - 1);
    for (p = 0; p < A->np; p++) {
      lowp_series_t s = {"speedup.csv", 1, 5, NULL, NULL, NULL, 3, 0};
      snprintf(style[p], sizeof style[p], "boxes fill solid 0.8 lc rgb '%s'", colr[p % 4]);
      s.title = A->pr[p].name;
      s.style = style[p];
      s.filter = A->pr[p].name;
      sr[p] = s;
    }
    {
      double ymax = 1; /* room above the highest triangle for the key */
      for (g = 0; g < A->c.ng; g++)
        for (p = 0; p < A->np; p++) ymax = fmax(ymax, fmax(A->mods[g].hi[p], A->mods[g].step[0] / A->mods[g].step[p]));
      snprintf(extra, sizeof extra, "%s\nset boxwidth 0.9\nset xrange [0:%g]\nset yrange [0:%.3g]\nset key top left\n"
               "unset mxtics\nset grid noxtics\n", xt, (double)A->c.ng * (A->np + 1), ceil(1.45 * ymax));
    }
    {
      /* the band: the speedup if the GEMMs reach EFF_LO..EFF_HI of peak (speedup.csv columns 10, 11) */
      lowp_series_t lo = {"speedup.csv", 1, 10, "band: lowest (GEMMs at 66-87% of peak)", "points pt 10 ps 1.4 lc rgb '#000000'", NULL, 0, 0};
      lowp_series_t hi = {"speedup.csv", 1, 11, "band: highest", "points pt 8 ps 1.4 lc rgb '#000000'", NULL, 0, 0};
      lowp_series_t ac = {"speedup.csv", 1, 12, "autocast policy, op by op (what PyTorch runs)",
                          "points pt 13 ps 1.8 lc rgb '#000000'", NULL, 0, 0};
      lowp_plot_t pl = {"Predicted speedup over FP32 of a transformer layer step (roofline at 100% of datasheet peaks)",
                        "device", "speedup over FP32 (x)", 0, 0, extra};
      sr[A->np] = lo;
      sr[A->np + 1] = hi;
      sr[A->np + 2] = ac;
      st = lowp_plot(r->outdir, "speedup", &pl, sr, A->np + 3);
    }
    if (st != LOWP_OK) return st;
    lowp_result_plot(A->plots, "speedup.png", "Predicted speedup of TF32, FP16 and BF16 over FP32 per device: a "
                     "prediction (roofline of every kernel of the layer, forward and backward, at 100% of the datasheet "
                     "peaks), with triangles at the lowest and highest speedup when the GEMMs reach 66-87% of their "
                     "peak, the range of published cuBLAS measurements (speedup.csv, kernels.csv). The bar is not an "
                     "upper bound: a speedup is a ratio, and with the fp32 GEMMs at 87% and the tensor-core ones at 66% "
                     "of peak it is lower, the other way round higher (the upper triangle can sit above the bar). The "
                     "bars are pure 16-bit storage (every tensor 16-bit, the layer's kernels only), an upper bound on "
                     "the autocast policy's speedups: the filled diamonds, what PyTorch runs (fp32 softmax, layer norm "
                     "and residual stream, casts, scale/mask, dropout, transposes, weight casts, Adam's step; table "
                     "\"Autocast policy, op by op\"). No bar or diamond for a 16-bit format on a GPU without units "
                     "for it (bf16 on V100).");
    {
      /* the step's composition: total (memory-bound kernels on top) behind the GEMMs' part */
      lowp_series_t sb[2] = {{"speedup.csv", 1, 8, "memory-bound kernels (softmax, layer norm, GELU, dropout, adds)",
                              "boxes fill solid 0.8 lc rgb '#ff7f0e'", NULL, 0, 0},
                             {"speedup.csv", 1, 9, "GEMMs", "boxes fill solid 0.8 lc rgb '#1f77b4'", NULL, 0, 0}};
      char ex2[2200];
      lowp_plot_t pl = {"Predicted step time relative to FP32 on the same device: GEMMs and memory-bound kernels",
                        "device (bars: fp32, tf32, fp16, bf16)", "step time / FP32 step time", 0, 0, ex2};
      snprintf(ex2, sizeof ex2, "%s\nset yrange [0:1.3]\nset key top center", extra);
      st = lowp_plot(r->outdir, "breakdown", &pl, sb, 2);
      if (st != LOWP_OK) return st;
    }
    lowp_result_plot(A->plots, "breakdown.png", "The step time of each precision relative to FP32 on the same device, "
                     "split into GEMMs (blue) and memory-bound kernels (orange): with 16-bit tensor cores the GEMMs "
                     "shrink by the peak ratio, the memory-bound kernels only by the byte ratio (Amdahl).");
  }

  return LOWP_OK;
}

/* one measurement of the roofs (reps runs each): the best so far stays */
static int cpu_roofs(cpu_t *C, int reps) {
  double n = (double)C->sqk.n, best = INFINITY, v;
  int k;
  for (k = 0; k < reps; k++) {
    double t = now_s();
    if (lowp_amp_cpu_run(C->sq, &C->sqk, C->p32, 0, 0) != LOWP_OK) return 2;
    t = now_s() - t;
    best = fmin(best, t);
  }
  C->sq_gemm = fmax(C->sq_gemm, 2 * n * n * n / best);
  v = lowp_ampc_triad_run(&C->tb, reps);
  if (v > C->triad) C->triad = v;
  v = lowp_ampc_triad_run(&C->ts, reps);
  if (v > C->triad_small) C->triad_small = v;
  return 0;
}

/* this CPU's roofs, measured in this run, and the CPU layer's buffers */
static int cpu_setup(lowp_run_t *r, amp_t *A, cpu_t *C) {
  size_t i;
  A->cnk = lowp_roofline_layer(A->cks, MAXK, &A->c.cdims);
  if (A->cnk == 0 || A->cnk > MAXK) {
    fprintf(stderr, "lowp run amp-speedup: the CPU layer has no kernels\n");
    return 2;
  }
  C->p32 = &A->pr[0]; /* fp32: the only precision this CPU's libraries compute honestly (cpu_answer says why) */
  lowp_cpu_units16(&C->u);
  C->threads0 = omp_get_max_threads();
  C->nth = A->c.cpu_threads ? (int)A->c.cpu_threads : omp_get_num_procs();
  /* one thread count for both libraries, restored at the end */
  omp_set_num_threads(C->nth);
  openblas_set_num_threads(C->nth);
  lowp_run_progress(r, "measuring this CPU's roofs");
  C->sqk.kind = LOWP_RK_GEMM;
  C->sqk.count = 1;
  C->sqk.m = C->sqk.n = C->sqk.k = (size_t)A->c.roof_n;
  if (lowp_amp_cpu_new(&C->sq, &C->sqk, 1, 0, r->seed) != LOWP_OK ||
      lowp_ampc_triad_new(&C->tb, (size_t)A->c.stream_mb * 1024 * 1024 / 4) ||
      lowp_ampc_triad_new(&C->ts, A->c.cdims.batch * A->c.cdims.seq * A->c.dims.d_model)) {
    fprintf(stderr, "lowp run amp-speedup: out of memory for the CPU roofs\n");
    return 2;
  }
  C->sq_gemm = C->triad = C->triad_small = 0;
  if (cpu_roofs(C, 3)) return 2;
  /* the forward softmax / layer norm / GELU buffers: the largest such kernel */
  for (i = 0; i < A->cnk; i++)
    if (A->cks[i].kind == LOWP_RK_MEM) {
      size_t ne = A->cks[i].rows * A->cks[i].cols;
      if (ne > C->ne) C->ne = ne;
      if (A->cks[i].rows > C->nr) C->nr = A->cks[i].rows;
    }
  C->x = malloc(C->ne * sizeof *C->x);
  C->y = malloc(C->ne * sizeof *C->y);
  C->mean = malloc(C->nr * sizeof *C->mean);
  C->rstd = malloc(C->nr * sizeof *C->rstd);
  C->runs = malloc((size_t)A->c.cpu_reps * A->cnk * sizeof *C->runs);
  if (!C->x || !C->y || !C->mean || !C->rstd || !C->runs ||
      lowp_amp_cpu_new(&C->ctx, A->cks, A->cnk, 0, r->seed) != LOWP_OK) {
    fprintf(stderr, "lowp run amp-speedup: out of memory for the CPU layer\n");
    return 2;
  }
  for (i = 0; i < C->ne; i++) /* values in [-4, 4): softmax rows and GELU inputs of a trained layer's range */
    C->x[i] = (float)(8.0 * (double)lowp_rng_u32(r->seed, i, 0x41435055u) * 0x1p-32 - 4.0);
  return 0;
}

static void cpu_free(cpu_t *C) {
  lowp_amp_cpu_free(&C->ctx);
  lowp_amp_cpu_free(&C->sq);
  lowp_ampc_triad_free(&C->tb);
  lowp_ampc_triad_free(&C->ts);
  free(C->x); free(C->y); free(C->mean); free(C->rstd); free(C->runs);
  C->x = C->y = C->mean = C->rstd = NULL;
  C->runs = NULL;
}

/* one kernel of the CPU layer in fp32: the forward softmax, layer norm and
   GELU here (experiments/amp_cpu.c), the rest by kernels/train/amp_layer.c
   (cblas_sgemm; plain fp32 loops for the backward kernels, dropout, adds) */
static int cpu_kernel(amp_t *A, cpu_t *C, const lowp_rkernel_t *k, uint64_t seed) {
  switch (k->op) {
  case LOWP_MOP_SOFTMAX: lowp_ampc_softmax(C->y, C->x, k->rows, k->cols); return LOWP_OK;
  case LOWP_MOP_LN: lowp_ampc_layernorm(C->y, C->mean, C->rstd, C->x, k->rows, k->cols, 1e-5f); return LOWP_OK;
  case LOWP_MOP_GELU: lowp_ampc_gelu(C->y, C->x, k->rows * k->cols); return LOWP_OK;
  default: return lowp_amp_cpu_run(C->ctx, k, C->p32, A->c.cdims.dropout, seed);
  }
}

/* validate every GEMM before timing anything (docs/style.md B8) */
static void cpu_validate(lowp_run_t *r, amp_t *A, cpu_t *C) {
  size_t i;
  C->validated = 1;
  for (i = 0; i < A->cnk; i++) {
    double worst = NAN;
    int eq, ran;
    if (A->cks[i].kind != LOWP_RK_GEMM) continue;
    lowp_run_progress(r, "validating %s", A->cks[i].name);
    ran = cpu_kernel(A, C, &A->cks[i], r->seed) == LOWP_OK;
    if (!ran || lowp_amp_cpu_gemm_check(&worst, &eq, C->ctx, &A->cks[i], C->p32, (size_t)A->c.cpu_check) != LOWP_OK ||
        !(worst <= 1)) {
      if (!ran) fprintf(stderr, "lowp run amp-speedup: GEMM %s did not run; no CPU timings\n", A->cks[i].name);
      else
        fprintf(stderr, "lowp run amp-speedup: GEMM %s failed validation (%.3g of the gamma_k bound); no CPU "
                "timings\n", A->cks[i].name, worst);
      C->validated = 0;
      A->bad++;
    }
  }
}

/* one untimed pass of every kernel (first touch, OpenBLAS's threads), then
   cpu_reps timed passes, each after one more measurement of the roofs (so
   that a busy spell of a shared machine slows the roofs too);
   C->runs[rep * cnk + i] the seconds of kernel i in pass rep */
static int cpu_time(lowp_run_t *r, amp_t *A, cpu_t *C) {
  long rep;
  size_t i;
  for (rep = -1; rep < A->c.cpu_reps; rep++) {
    if (rep >= 0 && cpu_roofs(C, 2)) return 2;
    for (i = 0; i < A->cnk; i++) {
      double t0;
      lowp_run_progress(r, "CPU fp32, %s %ld of %ld: %s", rep < 0 ? "warm-up" : "pass", rep < 0 ? 1 : rep + 1,
                        rep < 0 ? 1 : A->c.cpu_reps, A->cks[i].name);
      t0 = now_s();
      if (cpu_kernel(A, C, &A->cks[i], r->seed) != LOWP_OK) {
        fprintf(stderr, "lowp run amp-speedup: CPU kernel %s failed\n", A->cks[i].name);
        return 2;
      }
      t0 = now_s() - t0;
      if (rep >= 0) C->runs[(size_t)rep * A->cnk + i] = t0;
    }
  }
  return 0;
}

/* medians, spreads, the roofs (each at least every rate this run showed, so
   that no achieved rate exceeds its roof) and the roofline's prediction */
static void cpu_reduce(amp_t *A, cpu_t *C) {
  size_t i, rep, nrep = (size_t)A->c.cpu_reps;
  double v[128], st[128];
  C->roof_gemm = C->sq_gemm;
  snprintf(C->gemm_src, sizeof C->gemm_src, "cblas_sgemm at %ld^3", A->c.roof_n);
  C->roof_bw = C->triad;
  snprintf(C->bw_src, sizeof C->bw_src, "STREAM triad, 3 x %ld MB", A->c.stream_mb);
  if (C->triad_small > C->roof_bw) {
    C->roof_bw = C->triad_small;
    snprintf(C->bw_src, sizeof C->bw_src, "STREAM triad, 3 x %.3g MB: one activation tensor per array",
             4e-6 * (double)C->ts.n);
  }
  for (rep = 0; rep < nrep; rep++) st[rep] = 0;
  for (i = 0; i < A->cnk; i++) {
    double gf, bs;
    for (rep = 0; rep < nrep; rep++) {
      v[rep] = C->runs[rep * A->cnk + i];
      st[rep] += v[rep];
    }
    C->med[i] = lowp_ampc_median(v, nrep); /* sorts v: v[0] the fastest */
    C->fast[i] = v[0];
    C->slow[i] = v[nrep - 1];
    lowp_roofline_cost(&C->fl[i], &C->by[i], &A->cks[i], C->p32->storage);
    gf = C->fl[i] / C->fast[i];
    bs = C->by[i] / C->fast[i];
    if (gf > C->roof_gemm) { C->roof_gemm = gf; snprintf(C->gemm_src, sizeof C->gemm_src, "%s (fastest pass)", A->cks[i].name); }
    if (bs > C->roof_bw) { C->roof_bw = bs; snprintf(C->bw_src, sizeof C->bw_src, "%s (fastest pass; cache-resident)", A->cks[i].name); }
  }
  C->step_fast = C->step_slow = st[0];
  for (rep = 0; rep < nrep; rep++) {
    C->step_fast = fmin(C->step_fast, st[rep]);
    C->step_slow = fmax(C->step_slow, st[rep]);
  }
  C->step_med = lowp_ampc_median(st, nrep);
  memset(&C->cpu, 0, sizeof C->cpu);
  C->cpu.name = "cpu";
  C->cpu.part = "this CPU (roofs measured in this run)";
  C->cpu.gemm_peak[0] = C->cpu.fp32_peak = C->roof_gemm;
  for (i = 1; i < LOWP_RPREC_MAX; i++) C->cpu.gemm_peak[i] = NAN;
  C->cpu.bw = C->roof_bw;
  C->cpu.source = "measured in this run";
  C->gemm_med = C->mem_med = C->pstep = C->pgemm = C->pmem = 0;
  for (i = 0; i < A->cnk; i++) {
    lowp_rtime_t t;
    int g = A->cks[i].kind == LOWP_RK_GEMM;
    lowp_roofline_time(&t, &A->cks[i], 0, &C->cpu);
    C->pred[i] = t.t;
    C->pstep += t.t;
    *(g ? &C->pgemm : &C->pmem) += t.t;
    *(g ? &C->gemm_med : &C->mem_med) += C->med[i];
  }
}

static int cpu_write(lowp_run_t *r, amp_t *A, cpu_t *C) {
  FILE *csv;
  size_t i;
  cJSON *arr = cJSON_AddArrayToObject(C->cj, "kernels");
  csv = fopen(lowp_run_path(r, "cpu_kernels.csv"), "w");
  if (!csv) { fprintf(stderr, "lowp run amp-speedup: cannot write cpu_kernels.csv\n"); return 2; }
  fprintf(csv, "precision,kernel,kind,flops,bytes_model,median_s,fastest_s,slowest_s,gflops,gbps,roof_gflops,"
          "roof_gbps,predicted_s,median_over_predicted\n");
  for (i = 0; i < A->cnk; i++) {
    cJSON *o = cJSON_CreateObject();
    fprintf(csv, "fp32,%s,%s,%.6e,%.6e,%.6e,%.6e,%.6e,%.4g,%.4g,%.4g,%.4g,%.6e,%.4g\n", A->cks[i].name,
            A->cks[i].kind == LOWP_RK_GEMM ? "gemm" : "mem", C->fl[i], C->by[i], C->med[i], C->fast[i], C->slow[i],
            C->fl[i] / C->med[i] / 1e9, C->by[i] / C->med[i] / 1e9, C->roof_gemm / 1e9, C->roof_bw / 1e9, C->pred[i],
            C->med[i] / C->pred[i]);
    cJSON_AddStringToObject(o, "precision", "fp32");
    cJSON_AddStringToObject(o, "kernel", A->cks[i].name);
    cJSON_AddNumberToObject(o, "median_s", C->med[i]);
    cJSON_AddNumberToObject(o, "fastest_s", C->fast[i]);
    cJSON_AddNumberToObject(o, "slowest_s", C->slow[i]);
    cJSON_AddNumberToObject(o, "gflops", C->fl[i] / C->med[i] / 1e9);
    cJSON_AddNumberToObject(o, "gbps", C->by[i] / C->med[i] / 1e9);
    cJSON_AddNumberToObject(o, "predicted_s", C->pred[i]);
    cJSON_AddItemToArray(arr, o);
  }
  return fclose(csv) ? 2 : 0;
}

/* how this build's OpenBLAS would do a bf16 GEMM (kernels/train/amp_layer.c) */
static const char *bf16_engine(const amp_t *A) {
  const char *e = lowp_amp_cpu_gemm_engine(&A->pr[A->np - 1]);
  return e ? e : "none";
}

/* the kernels far from their roofline time, and why */
static void cpu_slow_text(char *q, size_t len, const amp_t *A, const cpu_t *C) {
  size_t i, n = 0;
  double glo = INFINITY, ghi = 0;
  char b[96];
  for (i = 0; i < A->cnk; i++)
    if (A->cks[i].kind == LOWP_RK_GEMM) {
      glo = fmin(glo, C->med[i] / C->pred[i]);
      ghi = fmax(ghi, C->med[i] / C->pred[i]);
    }
  snprintf(q, len, "Median over roofline time (cpu_kernels.csv): GEMMs %.3g-%.3gx; ", glo, ghi);
  for (i = 0; i < A->cnk; i++)
    if (A->cks[i].kind == LOWP_RK_MEM && C->med[i] / C->pred[i] > 10) {
      snprintf(b, sizeof b, "%s%s %.3gx", n++ ? ", " : "over 10x: ", A->cks[i].name, C->med[i] / C->pred[i]);
      strncat(q, b, len - strlen(q) - 1);
    }
  strncat(q, n ? ": kernels that call a scalar libm function (expf, erff) or dropout's counter-based random "
                 "generator for every element, tens of ns each, which the roofline's flop count does not see (a "
                 "framework's vectorized math library is faster); the plain loops of the other memory-bound "
                 "kernels run within 10x of the memory roof. "
               : "every memory-bound kernel within 10x of its roofline time. ", len - strlen(q) - 1);
}

/* what this CPU's 16-bit units mean for a bf16 speedup here */
static void cpu_units_text(char *q, size_t len, const cpu_t *C, const char *engine) {
  int any = C->u.avx512_bf16 || C->u.amx_bf16 || C->u.avx512_fp16 || C->u.amx_fp16;
  snprintf(q, len, "16-bit units of this CPU (CPUID): AVX512_BF16 %s, AMX-BF16 %s, AVX512_FP16 %s, AMX-FP16 %s. %s ",
           C->u.avx512_bf16 ? "yes" : "no", C->u.amx_bf16 ? "yes" : "no", C->u.avx512_fp16 ? "yes" : "no",
           C->u.amx_fp16 ? "yes" : "no",
           !any ? "With no bf16 or fp16 arithmetic units a 16-bit CPU step can only save memory traffic: its GEMMs "
                  "would widen to fp32 and run at the fp32 rate, so no low-precision speedup is expected here."
           : strstr(engine, "sbgemm") && !strstr(engine, "no cblas_sbgemm")
               ? "This OpenBLAS has cblas_sbgemm, but the C measurement stays fp32 (lowp's bf16 row kernels emulate); "
                 "the torch script (python/tests_torch/test_amp_cpu.py) times bf16 with PyTorch's CPU kernels."
               : "The hardware has bf16 arithmetic (its rate against fp32's is measured below), but this OpenBLAS is "
                 "built without bf16 (no "
                 "cblas_sbgemm): a bf16 GEMM through it is fp32 arithmetic plus conversions, so it is not timed and "
                 "the measurement is fp32 only; the torch script (python/tests_torch/test_amp_cpu.py, label torch) "
                 "times bf16 with PyTorch's CPU kernels where PyTorch is installed.");
  if (isfinite(C->r16)) {
    char b[640];
    snprintf(b, sizeof b, "Measured bf16/fp32 ratio of the units' arithmetic rate (one core, register-resident "
             "chains of VDPBF16PS against VFMADD231PS, each validated, best of the run; experiments/amp_cpu.c): %.3g "
             "(bf16 %.3g GFLOP/s, fp32 %.3g GFLOP/s): %s; AMX-BF16 tiles are not timed. ", C->r16, C->gf16, C->gf32,
             C->r16 > 1 ? "the most a bf16 GEMM on these vector units could gain here over an fp32 one at the same "
                          "efficiency"
                        : "not above 1, so on this core the bf16 vector instruction delivers no more flops than fp32 "
                          "FMA and a bf16 GEMM on it could not be faster than an fp32 one at the same efficiency");
    strncat(q, b, len - strlen(q) - 1);
  } else
    strncat(q, C->u.avx512_bf16 ? "The bf16/fp32 rate ratio could not be measured (a chain failed its check). "
                                : "A bf16/fp32 rate ratio of this CPU: absent (no AVX512_BF16 unit). ",
            len - strlen(q) - 1);
}

static void cpu_json(amp_t *A, cpu_t *C) {
  cJSON_AddStringToObject(C->cj, "openblas_core", openblas_get_corename());
  cJSON_AddStringToObject(C->cj, "openblas_config", openblas_get_config());
  cJSON_AddNumberToObject(C->cj, "threads", C->nth);
  cJSON_AddBoolToObject(C->cj, "cpu_has_avx512_bf16", C->u.avx512_bf16);
  cJSON_AddBoolToObject(C->cj, "cpu_has_amx_bf16", C->u.amx_bf16);
  cJSON_AddBoolToObject(C->cj, "cpu_has_avx512_fp16", C->u.avx512_fp16);
  cJSON_AddBoolToObject(C->cj, "cpu_has_amx_fp16", C->u.amx_fp16);
  cJSON_AddStringToObject(C->cj, "bf16_gemm_engine", bf16_engine(A));
  if (isfinite(C->r16)) { /* the units' rates (lowp_ampc_bf16_rate_ratio); null where absent */
    cJSON_AddNumberToObject(C->cj, "bf16_fp32_rate_ratio", C->r16);
    cJSON_AddNumberToObject(C->cj, "bf16_vdpbf16ps_gflops", C->gf16);
    cJSON_AddNumberToObject(C->cj, "fp32_fma_gflops", C->gf32);
  } else cJSON_AddNullToObject(C->cj, "bf16_fp32_rate_ratio");
  cJSON_AddStringToObject(C->cj, "precision", "fp32");
  cJSON_AddNumberToObject(C->cj, "batch", (double)A->c.cdims.batch);
  cJSON_AddNumberToObject(C->cj, "seq", (double)A->c.cdims.seq);
  cJSON_AddNumberToObject(C->cj, "passes", (double)A->c.cpu_reps);
  cJSON_AddNumberToObject(C->cj, "stream_triad_gbps", C->triad / 1e9);
  cJSON_AddNumberToObject(C->cj, "stream_triad_small_gbps", C->triad_small / 1e9);
  cJSON_AddNumberToObject(C->cj, "sgemm_square_gflops", C->sq_gemm / 1e9);
  cJSON_AddNumberToObject(C->cj, "roof_gflops", C->roof_gemm / 1e9);
  cJSON_AddStringToObject(C->cj, "roof_gflops_from", C->gemm_src);
  cJSON_AddNumberToObject(C->cj, "roof_gbps", C->roof_bw / 1e9);
  cJSON_AddStringToObject(C->cj, "roof_gbps_from", C->bw_src);
  cJSON_AddNumberToObject(C->cj, "step_median_s", C->step_med);
  cJSON_AddNumberToObject(C->cj, "step_fastest_s", C->step_fast);
  cJSON_AddNumberToObject(C->cj, "step_slowest_s", C->step_slow);
  cJSON_AddNumberToObject(C->cj, "gemm_median_s", C->gemm_med);
  cJSON_AddNumberToObject(C->cj, "mem_median_s", C->mem_med);
  cJSON_AddNumberToObject(C->cj, "step_predicted_s", C->pstep);
}

static void cpu_answer(lowp_run_t *r, amp_t *A, cpu_t *C) {
  char m[6144], q[2048];
  double gfl = 0;
  size_t i;
  for (i = 0; i < A->cnk; i++)
    if (A->cks[i].kind == LOWP_RK_GEMM) gfl += C->fl[i];
  cpu_json(A, C);
  snprintf(m, sizeof m, "Measured on this CPU in fp32 (%d thread%s; OpenBLAS %s core; the layer at batch %zu x seq "
           "%zu%s, forward + backward; median of %ld passes, spread fastest-slowest): step %.3g ms (%.3g-%.3g), "
           "GEMMs %.3g ms at %.3g GFLOP/s, the memory-bound kernels %.3g ms. Roofs measured in the same run: GEMM "
           "%.3g GFLOP/s (%s; cblas_sgemm at %ld^3: %.3g, best of the run), memory %.3g GB/s (%s; STREAM triad %.3g over 3 x %ld MB, %.3g over one "
           "activation tensor per array). Both roofs are re-measured before every pass and every "
           "roof is at least every rate this run achieved, so the roofline's %.3g ms (GEMMs %.3g, memory-bound %.3g) "
           "is a lower bound on the step: the measured step is %.2fx it. ", C->nth, C->nth == 1 ? "" : "s",
           openblas_get_corename(), A->c.cdims.batch, A->c.cdims.seq,
           A->c.cdims.batch != A->c.dims.batch || A->c.cdims.seq != A->c.dims.seq ? ", reduced from the modelled size" : "",
           A->c.cpu_reps, 1e3 * C->step_med, 1e3 * C->step_fast, 1e3 * C->step_slow, 1e3 * C->gemm_med,
           gfl / C->gemm_med / 1e9, 1e3 * C->mem_med, C->roof_gemm / 1e9, C->gemm_src, A->c.roof_n, C->sq_gemm / 1e9,
           C->roof_bw / 1e9, C->bw_src, C->triad / 1e9, A->c.stream_mb, C->triad_small / 1e9, 1e3 * C->pstep, 1e3 * C->pgemm, 1e3 * C->pmem,
           C->step_med / C->pstep);
  cpu_slow_text(q, sizeof q, A, C);
  strncat(m, q, sizeof m - strlen(m) - 1);
  cpu_units_text(q, sizeof q, C, bf16_engine(A));
  strncat(m, q, sizeof m - strlen(m) - 1);
  cJSON_AddStringToObject(C->cj, "answer", m);
  printf("%s\n", m);
  fprintf(r->summary, "**Measured (CPU, timing-dependent; also in timing.json and cpu_kernels.csv).** %s\n\n", m);
}

/* measured on this CPU (timing.json, cpu_kernels.csv) */
static int measure_cpu(lowp_run_t *r, amp_t *A) {
  static cpu_t C;
  int st;
  memset(&C, 0, sizeof C);
  C.cj = cJSON_AddObjectToObject(A->timing, "cpu");
  st = cpu_setup(r, A, &C);
  if (!st) cpu_validate(r, A, &C);
  if (!st && C.validated) {
    st = cpu_time(r, A, &C);
    if (!st) cpu_reduce(A, &C);
    if (!st) st = cpu_write(r, A, &C);
    if (!st) C.r16 = lowp_ampc_bf16_rate_ratio(C.u.avx512_bf16, 20, &C.gf32, &C.gf16);
    if (!st) cpu_answer(r, A, &C);
  } else if (!st)
    cJSON_AddStringToObject(C.cj, "answer", "not timed: a GEMM failed validation");
  cpu_free(&C);
  omp_set_num_threads(C.threads0 ? C.threads0 : omp_get_max_threads());
  openblas_set_num_threads(C.threads0 ? C.threads0 : omp_get_max_threads());
  return st;
}

/* the datasheet row of the GPU the CUDA runtime names ("NVIDIA A100-SXM4-80GB"), or NULL */
static const lowp_rdevice_t *gpu_datasheet(const char *dev) {
  char low[256];
  size_t i;
  for (i = 0; dev[i] && i + 1 < sizeof low; i++) low[i] = (char)(dev[i] >= 'A' && dev[i] <= 'Z' ? dev[i] - 'A' + 'a' : dev[i]);
  low[i] = '\0';
  if (strstr(low, "h100")) return lowp_roofline_device("h100");
  if (strstr(low, "a100")) return lowp_roofline_device(strstr(low, "80gb") ? "a100-80gb" : "a100");
  if (strstr(low, "v100")) return lowp_roofline_device("v100");
  return NULL;
}

/* the GPU's measurement against the prediction for its datasheet row: the
   GEMMs' time as a fraction of the 100%-of-peak prediction (the achieved
   efficiency), and each speedup against the predicted band */
static void gpu_vs_model(amp_t *A, cJSON *gj, char *m, size_t mlen, const char *dev,
                         double sec[][MAXK], const double *stp, const int *ok) {
  static model_t mm;
  const lowp_rdevice_t *d = gpu_datasheet(dev);
  cJSON *arr;
  char q[768];
  size_t i, p;
  if (!d) {
    snprintf(q, sizeof q, "No datasheet row for %s in lib/model/roofline.c: no comparison with the prediction. ", dev);
    strncat(m, q, mlen - strlen(m) - 1);
    return;
  }
  model(&mm, A->ks, A->nk, A->np, d);
  cJSON_AddStringToObject(gj, "datasheet_device", d->name);
  arr = cJSON_AddArrayToObject(gj, "vs_prediction");
  snprintf(q, sizeof q, "Against the prediction for %s (%s%s): ", d->part, d->name,
           strstr(dev, "PCIe") || strstr(dev, "pcie") ? "; this GPU is a PCIe part, the row an SXM one: lower peaks expected" : "");
  strncat(m, q, mlen - strlen(m) - 1);
  for (p = 0; p < A->np; p++) {
    double g = 0;
    cJSON *o;
    if (!ok[p]) continue;
    for (i = 0; i < A->nk; i++)
      if (A->ks[i].kind == LOWP_RK_GEMM) g += sec[p][i];
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "precision", A->pr[p].name);
    cJSON_AddNumberToObject(o, "step_s", stp[p]);
    cJSON_AddNumberToObject(o, "predicted_step_s", mm.step[p]);
    cJSON_AddNumberToObject(o, "gemm_s", g);
    cJSON_AddNumberToObject(o, "predicted_gemm_s", mm.gemm[p]);
    cJSON_AddNumberToObject(o, "gemm_fraction_of_prediction", mm.gemm[p] / g);
    snprintf(q, sizeof q, "%s GEMMs at %.0f%% of the predicted rate", A->pr[p].name, 100 * mm.gemm[p] / g);
    if (p > 0 && ok[0]) {
      double sp = stp[0] / stp[p];
      cJSON_AddNumberToObject(o, "speedup", sp);
      cJSON_AddNumberToObject(o, "predicted_speedup", mm.step[0] / mm.step[p]);
      cJSON_AddNumberToObject(o, "band_lo", mm.lo[p]);
      cJSON_AddNumberToObject(o, "band_hi", mm.hi[p]);
      snprintf(q + strlen(q), sizeof q - strlen(q), ", speedup x%.3g (predicted x%.3g, band %.3g-%.3g: %s)", sp,
               mm.step[0] / mm.step[p], mm.lo[p], mm.hi[p], sp < mm.lo[p] ? "below" : sp > mm.hi[p] ? "above" : "inside");
    }
    strncat(q, p + 1 < A->np ? "; " : ". ", sizeof q - strlen(q) - 1);
    strncat(m, q, mlen - strlen(m) - 1);
    cJSON_AddItemToArray(arr, o);
  }
}

/* measured on a GPU (when built with CUDA and a device is present) */
static int measure_gpu(lowp_run_t *r, amp_t *A) {
  FILE *csv;
  size_t i, p;
  char part[1024];
  /* ---- measured on a GPU */
  {
    char dev[256];
    if (A->c.gpu && lowp_amp_gpu_device(dev, sizeof dev) == LOWP_OK) {
      double sec[LOWP_RPREC_MAX][MAXK], stp[LOWP_RPREC_MAX];
      int ok[LOWP_RPREC_MAX];
      char m[4096], q[512];
      cJSON *gj = cJSON_AddObjectToObject(A->timing, "gpu");
      cJSON_AddStringToObject(gj, "device", dev);
      csv = fopen(lowp_run_path(r, "gpu_kernels.csv"), "w");
      if (!csv) return 2;
      fprintf(csv, "precision,kernel,kind,measured_s,tflops,gbps\n");
      snprintf(m, sizeof m, "Measured on %s (cuBLAS; full layer): ", dev);
      for (p = 0; p < A->np; p++) {
        lowp_run_progress(r, "GPU %s", A->pr[p].name);
        {
          double worst = 0;
          int gst = lowp_amp_gpu_run(sec[p], &worst, A->ks, A->nk, &A->pr[p], A->c.dims.dropout, (int)A->c.gpu_reps);
          ok[p] = gst == LOWP_OK && worst <= 1;
          if (gst == LOWP_OK && !(worst <= 1)) {
            /* validate first, then benchmark: no timings for a precision whose GEMMs failed */
            fprintf(stderr, "lowp run amp-speedup: a %s GEMM on the GPU failed validation (%.3g of its bound); no "
                    "timings for %s\n", A->pr[p].name, worst, A->pr[p].name);
            A->bad++;
          } else if (gst != LOWP_OK)
            fprintf(stderr, "lowp run amp-speedup: GPU run in %s failed: %s\n", A->pr[p].name, lowp_status_str(gst));
        }
        stp[p] = 0;
        if (!ok[p]) continue;
        for (i = 0; i < A->nk; i++) {
          double fl, by;
          lowp_roofline_cost(&fl, &by, &A->ks[i], A->pr[p].storage);
          stp[p] += sec[p][i];
          fprintf(csv, "%s,%s,%s,%.6e,%.4g,%.4g\n", A->pr[p].name, A->ks[i].name, A->ks[i].kind == LOWP_RK_GEMM ? "gemm" : "mem",
                  sec[p][i], fl / sec[p][i] / 1e12, by / sec[p][i] / 1e9);
        }
        snprintf(q, sizeof q, "%s step %.3g ms%s", A->pr[p].name, 1e3 * stp[p], p + 1 < A->np ? ", " : ". ");
        strncat(m, q, sizeof m - strlen(m) - 1);
      }
      fclose(csv);
      if (ok[0])
        for (p = 1; p < A->np; p++)
          if (ok[p]) {
            snprintf(q, sizeof q, "%s x%.3g over fp32. ", A->pr[p].name, stp[0] / stp[p]);
            strncat(m, q, sizeof m - strlen(m) - 1);
          }
      gpu_vs_model(A, gj, m, sizeof m, dev, sec, stp, ok);
      cJSON_AddStringToObject(gj, "answer", m);
      printf("%s\n", m);
      fprintf(r->summary, "**Measured (GPU).** %s\n\n", m);
    } else {
      const char *why = !A->c.gpu ? "not requested (--measure)"
                                  : "no CUDA build or no device here: on a machine with an NVIDIA GPU, tools/gpu.sh "
                                    "builds lowp with CUDA and runs this experiment, which then times the layer with "
                                    "cuBLAS and sets the measurement beside this prediction (timing.json \"gpu\")";
      cJSON_AddStringToObject(A->timing, "gpu", why);
      fprintf(r->summary, "**GPU.** %s.\n\n", why);
      snprintf(part, sizeof part, "%sNo GPU was timed in this run (%s).", A->ans[strlen(A->ans) - 1] == ' ' ? "" : " ", why);
      strncat(A->ans, part, sizeof A->ans - strlen(A->ans) - 1);
    }
  }
  return 0;
}

static int run(lowp_run_t *r) {
  static amp_t A;
  int g, st = 0;
  /* declare: the layer, the devices, the precisions */
  memset(&A, 0, sizeof A);
  A.tables = cJSON_AddArrayToObject(r->results, "tables");
  A.plots = cJSON_AddArrayToObject(r->results, "plots");
  A.pr = lowp_roofline_precisions(&A.np);
  parse(r, &A.c);
  A.nk = lowp_roofline_layer(A.ks, MAXK, &A.c.dims);
  if (A.nk == 0 || A.nk > MAXK) { fprintf(stderr, "lowp run amp-speedup: bad layer sizes\n"); return 2; }
  for (g = 0; g < A.c.ng; g++) {
    model(&A.mods[g], A.ks, A.nk, A.np, A.c.gpus[g]);
    policy_model(&A.pol[g], &A.mods[g], A.ks, A.nk, A.pr, A.np, A.c.gpus[g], &A.c.dims, NULL);
  }
  if (write_policy_csv(r, &A)) { fprintf(stderr, "lowp run amp-speedup: cannot write policy_ops.csv\n"); return 2; }
  /* render the model (deterministic: results.json) */
  render_roofs(&A);
  if (write_kernels_csv(r, &A)) { fprintf(stderr, "lowp run amp-speedup: cannot write kernels.csv\n"); return 2; }
  if (render_speedup(r, &A)) { fprintf(stderr, "lowp run amp-speedup: cannot write speedup.csv\n"); return 2; }
  render_kernel_tables(&A);
  render_membound(r, &A);
  render_prediction_keys(r, &A);
  model_answer(&A);
  render_policy(r, &A);
  st = render_plots(r, &A);
  if (st != LOWP_OK) return lowp_run_plot_failed(r, st);
  /* measure (timing-dependent: timing.json) */
  A.timing = cJSON_CreateObject();
  cJSON_AddStringToObject(A.timing, "generated_by", "lowp run amp-speedup (timings: they differ from run to run)");
  if (A.c.cpu) st = measure_cpu(r, &A);
  else cJSON_AddStringToObject(A.timing, "cpu", "not measured (--measure)");
  if (!st) st = measure_gpu(r, &A);
  if (st) {
    cJSON_Delete(A.timing);
    return st;
  }
  /* judge and write */
  strncat(A.ans, " Measured timings (this CPU; a GPU when present) are in timing.json, cpu_kernels.csv and gpu_kernels.csv, "
          "kept out of results.json so that it stays byte-identical for the same parameters.",
          sizeof A.ans - strlen(A.ans) - 1);
  cJSON_AddStringToObject(r->results, "answer", A.ans);
  cJSON_AddStringToObject(r->results, "timing_file", "timing.json");
  fprintf(r->summary, "**Answer (model).** %s\n\nFiles: kernels.csv, speedup.csv, speedup.png, policy_ops.csv (the autocast "
          "policy's ops: device, precision, op, pass, class, dtype, flops, bytes, t_compute_s, t_memory_s, t_s; the "
          "t_s of a device and precision sum to its policy step, fp32's sum over a precision's is its speedup) "
          "(deterministic); "
          "timing.json, cpu_kernels.csv, gpu_kernels.csv (timings).\n", A.ans);
  write_json_file(lowp_run_path(r, "timing.json"), A.timing);
  cJSON_Delete(A.timing);
  if (A.bad) {
    fprintf(stderr, "lowp run amp-speedup: %d GEMM validations failed\n", A.bad);
    return 1;
  }
  return 0;
}

const lowp_experiment_t lowp_exp_amp_speedup = {
    "amp-speedup",
    "How much faster is a transformer layer (batch {batch}, seq {seq}, d_model {d_model}, {heads} heads, MLP "
    "{ffn_mult}x) forward and backward in TF32, FP16 and BF16 than in FP32 on {gpus}, how much of the speedup comes "
    "from compute and how much from memory bandwidth, and what does this machine measure?",
    "A prediction: the roofline of every kernel of the layer (GEMMs forward, dX, dW; softmax, layer norm, GELU, "
    "dropout, residual adds) at 100% of the datasheet peaks, time = max(flops / peak, bytes / bandwidth) "
    "(lib/model/roofline.c, each peak cited); speedup = ratio of step times; time saved split into compute and "
    "memory by the Shapley value per kernel; a band for GEMMs at 66-87% of peak, the range of published cuBLAS "
    "measurements; the autocast policy op by op (16-bit GEMMs, fp32 softmax, layer norm and residual stream, cast "
    "kernels, attention scale/mask and dropout, head transposes, weight casts, GradScaler, Adam's step; bf16 only "
    "where the GPU has bf16 units). Measured: the layer at batch {cpu_batch} x seq {cpu_seq} on this CPU in fp32 (OpenBLAS sgemm "
    "validated against the exact product, plain fp32 kernels; median of {cpu_reps} passes), with this CPU's roofs "
    "(sgemm rate, STREAM triad) measured in the same run; cuBLAS on a GPU when one is present (tools/gpu.sh). "
    "Timings go to timing.json, not results.json.",
    "GEMMs dominate and most are compute bound, so most of the speedup comes from the tensor-core rates, capped by "
    "the memory-bound kernels (Amdahl); no TF32/BF16 gain on V100; on the CPU no achieved rate above its roof, and "
    "no bf16 timing without a bf16 GEMM library.",
    params, run, check};
