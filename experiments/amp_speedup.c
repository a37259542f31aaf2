/* lowp_exp_amp_speedup -- how much faster a transformer layer runs in TF32, FP16, BF16 than in FP32, and why */

/*
 * Question (seed 004, exercise 5): what speedup do TF32, FP16 and BF16 give
 *   over FP32 for a transformer layer (seed 001's: batch 16, sequence 512,
 *   model 1024, 16 heads, MLP 4x, dropout 0.1), forward and backward, on
 *   V100, A100 and H100, and what fraction of it comes from compute and what
 *   from memory bandwidth? And what does this machine measure?
 * Method:
 *   1. Roofline model (lib/model/roofline.c; deterministic): each kernel of
 *      the layer (every GEMM, forward, dX and dW; softmax, layer norm, GELU,
 *      dropout, residual adds, forward and backward) takes
 *      max(flops / peak, bytes / bandwidth) with the datasheet peaks (each
 *      cited in roofline.c and in the peaks table); the speedup of a
 *      precision is the ratio of step times, and the time saved is split
 *      into compute and memory parts by the Shapley value of the two changes
 *      (peak and bytes), kernel by kernel.
 *   2. Measured on this CPU (timing-dependent, kept out of results.json):
 *      the layer at cpu_batch x cpu_seq (reduced by default, so that the run
 *      takes seconds on 2 cores) in fp32 and bf16 with OpenBLAS
 *      (kernels/train/amp_layer.c: cblas_sgemm; cblas_sbgemm when the library
 *      has it, else bf16 widened to fp32 and cblas_sgemm) and lowp's CPU
 *      kernels for softmax, layer norm and GELU, each GEMM first validated
 *      against the exact product (lib/exact) within gamma_k of fp32; the
 *      fastest of cpu_reps runs per kernel; this machine's roofs measured in
 *      the same run (sgemm / bf16 GEMM GFLOP/s at roof_n^3, a STREAM triad)
 *      and the CPU roofline's prediction held against the measurement.
 *   3. On a GPU (CUDA build and a device): the same kernels, full size, with
 *      cuBLAS (kernels/cuda/amp_layer.cu), per precision.
 *   Timings go to timing.json, cpu_kernels.csv and gpu_kernels.csv, which
 *   differ from run to run; results.json, kernels.csv and speedup.csv hold
 *   only the model and are byte-identical for the same parameters. Why: the
 *   framework has no notion of a timing-dependent result (cmd_run.c writes
 *   results.json with a clock-free header; tests/cli/experiments.sh and
 *   tests/cli/run.sh compare reruns byte for byte, and `lowp report` renders
 *   results.json only), so the measured answer lives beside it: in
 *   timing.json ("cpu"/"gpu" -> "answer"), on stdout and in summary.md. A
 *   test comparing reruns must leave out timing.json, cpu_kernels.csv,
 *   gpu_kernels.csv and summary.md, or run with --measure=none.
 * Run: lowp run amp-speedup [--gpus=v100,a100,h100] [--cpu_seq=256] [--measure=cpu,gpu|none]
 * Expected / acceptance: the GEMMs dominate the FP32 step and are compute
 *   bound, so most of the speedup comes from the tensor-core rates; the
 *   memory-bound kernels (softmax, layer norm, GELU, dropout) only halve in
 *   time with 16-bit storage and cap the speedup well below the peak ratio
 *   (Amdahl); V100 has no TF32 or BF16 tensor cores, so TF32 gives nothing
 *   and BF16 only its halved traffic there. On a CPU without bf16 GEMM
 *   support, bf16 is no faster than fp32.
 */

#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "catalog.h"
#include "results.h"

#include "gpu/amp_gpu.h"
#include "train/amp_layer.h"
#include "format/format.h"
#include "format/round_fast.h"
#include "io/plot.h"
#include "model/roofline.h"
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
    {"cpu_reps", "3", "2", "CPU runs per kernel (the fastest counts)"},
    {"cpu_threads", "1", NULL, "threads of the CPU measurement (OpenBLAS and OpenMP; 0 = all): one keeps timings steady on a shared machine"},
    {"cpu_check", "64", "32", "entries of each CPU GEMM checked against the exact product"},
    {"stream_mb", "64", "32", "MB per array of the STREAM triad (3 arrays; above the caches)"},
    {"roof_n", "1024", NULL, "size n of the square GEMM (n x n x n) that measures the CPU's GEMM roof"},
    {"gpu_reps", "10", "3", "GPU runs per kernel (the fastest counts)"},
    {NULL, NULL, NULL, NULL}};

#define MAXK 64
#define MAXG 8

/* ------------------------------------------------------ private helpers */

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
   the step totals; dc/dm: the time saved vs fp32 from compute / memory */
typedef struct {
  lowp_rtime_t t[MAXK][LOWP_RPREC_MAX];
  double step[LOWP_RPREC_MAX], gemm[LOWP_RPREC_MAX], dc[LOWP_RPREC_MAX], dm[LOWP_RPREC_MAX];
  int fallback[LOWP_RPREC_MAX];
} model_t;

static void model(model_t *m, const lowp_rkernel_t *ks, size_t nk, size_t np, const lowp_rdevice_t *d) {
  size_t i, p;
  memset(m, 0, sizeof *m);
  for (p = 0; p < np; p++)
    for (i = 0; i < nk; i++) {
      lowp_rtime_t *t = &m->t[i][p], *t0 = &m->t[i][0];
      double dc, dm;
      lowp_roofline_time(t, &ks[i], p, d);
      m->step[p] += t->t;
      if (ks[i].kind == LOWP_RK_GEMM) m->gemm[p] += t->t;
      m->fallback[p] |= t->fallback;
      lowp_roofline_split(&dc, &dm, t0->t_compute, t0->t_memory, t->t_compute, t->t_memory);
      m->dc[p] += dc;
      m->dm[p] += dm;
    }
}

/* STREAM triad a = b + s c (McCalpin, "Memory bandwidth and machine balance
   in current high performance computers", IEEE TCCA newsletter, 1995):
   3 n 4 bytes per pass (write-allocate traffic not counted, as STREAM
   does); the best of reps passes, in bytes/s */
static double stream_triad(size_t n, int reps) {
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  double best = INFINITY;
  long long i, nn = (long long)n;
  int r;
  if (!a || !b || !c) { free(a); free(b); free(c); return NAN; }
#pragma omp parallel for schedule(static)
  for (i = 0; i < nn; i++) { a[i] = 0; b[i] = 1; c[i] = 2; }
  for (r = 0; r < reps; r++) {
    double t = now_s();
#pragma omp parallel for schedule(static)
    for (i = 0; i < nn; i++) a[i] = b[i] + 3.0f * c[i];
    t = now_s() - t;
    if (t < best) best = t;
  }
  best = a[n / 2] == 7.0f ? 3.0 * 4.0 * (double)n / best : NAN; /* the triad happened */
  free(a); free(b); free(c);
  return best;
}

/* achieved GEMM rate of the runner's engine for precision p at n^3 (flop/s) */
static double gemm_rate(const lowp_rprec_t *p, size_t n, int reps, uint64_t seed) {
  lowp_rkernel_t k;
  lowp_amp_cpu_t *ctx;
  double best = INFINITY;
  int r;
  memset(&k, 0, sizeof k);
  k.kind = LOWP_RK_GEMM;
  k.count = 1;
  k.m = k.n = k.k = n;
  if (lowp_amp_cpu_new(&ctx, &k, 1, 0, seed) != LOWP_OK) return NAN;
  (void)lowp_amp_cpu_run(ctx, &k, p, 0, seed); /* warm-up */
  for (r = 0; r < reps; r++) {
    double t = now_s();
    if (lowp_amp_cpu_run(ctx, &k, p, 0, seed) != LOWP_OK) { best = NAN; break; }
    t = now_s() - t;
    if (t < best) best = t;
  }
  lowp_amp_cpu_free(&ctx);
  return 2.0 * (double)n * (double)n * (double)n / best;
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
  cJSON *tables, *plots, *timing;
  char ans[8192];
  int bad;
} amp_t;

/* what this CPU measured */
typedef struct {
  lowp_amp_cpu_t *ctx;
  const lowp_rprec_t *cp[2];
  size_t ncp;
  double peak[2], bw, tk[2][MAXK], step[2], whole[2], pred[2][MAXK], pstep[2];
  lowp_rdevice_t cpu;
  cJSON *cj;
  char engine[2][160];
  int validated[2], threads0, nth;
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

static int render_speedup(lowp_run_t *r, amp_t *A) {
  FILE *csv;
  cJSON *rows;
  size_t p;
  int g;
  char b1[64], b2[64], b3[64], b4[64], b5[64], b6[64];
  /* ---- speedup table and speedup.csv (the bar plot's data) */
  csv = fopen(lowp_run_path(r, "speedup.csv"), "w");
  if (!csv) { fprintf(stderr, "lowp run amp-speedup: cannot write speedup.csv\n"); return LOWP_EIO; }
  fprintf(csv, "x,device,precision,step_ms,speedup,saved_compute_share,saved_memory_share,rel_step,rel_gemm\n");
  {
    static const char *const cols[] = {"device", "precision", "predicted step (fwd+bwd), ms", "speedup over FP32",
                                       "time saved: from compute", "time saved: from memory traffic",
                                       "GEMM share of the step", "memory-bound kernels' share", "note"};
    char title[512];
    snprintf(title, sizeof title, "Predicted step time and speedup (roofline; layer batch %zu, seq %zu, d_model %zu, "
             "%zu heads, MLP %zux, dropout %g; forward and backward, %zu kernels)", A->c.dims.batch, A->c.dims.seq,
             A->c.dims.d_model, A->c.dims.heads, A->c.dims.ffn_mult, A->c.dims.dropout, A->nk);
    rows = lowp_result_table(A->tables, title, cols, 9);
    for (g = 0; g < A->c.ng; g++)
      for (p = 0; p < A->np; p++) {
        model_t *m = &A->mods[g];
        double sp = m->step[0] / m->step[p], saved = m->step[0] - m->step[p];
        double shc = saved > 0 ? m->dc[p] / saved : NAN, shm = saved > 0 ? m->dm[p] / saved : NAN;
        const char *cells[9];
        char note[128] = "";
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
        cells[8] = note;
        lowp_result_add_row(rows, cells, 9);
        fprintf(csv, "%zu,%s,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", (size_t)g * (A->np + 1) + p + 1, A->c.gpus[g]->name,
                A->pr[p].name, 1e3 * m->step[p], sp, p == 0 ? 0.0 : shc, p == 0 ? 0.0 : shm, m->step[p] / m->step[0],
                m->gemm[p] / m->step[0]);
      }
  }
  return fclose(csv) ? LOWP_EIO : LOWP_OK;

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

static void model_answer(amp_t *A) {
  char part[1024];
  size_t p;
  int g;
  /* ---- the answer (model only: results.json stays byte-identical) */
  snprintf(A->ans, sizeof A->ans, "Roofline prediction (datasheet peaks, dense; layer batch %zu x seq %zu, d_model %zu, "
           "forward + backward): ", A->c.dims.batch, A->c.dims.seq, A->c.dims.d_model);
  for (g = 0; g < A->c.ng; g++) {
    model_t *m = &A->mods[g];
    snprintf(part, sizeof part, "%s%s: FP32 step %.3g ms; ", g ? " " : "", A->c.gpus[g]->part, 1e3 * m->step[0]);
    strncat(A->ans, part, sizeof A->ans - strlen(A->ans) - 1);
    for (p = 1; p < A->np; p++) {
      double saved = m->step[0] - m->step[p];
      if (saved > 0)
        snprintf(part, sizeof part, "%s x%.2f (%.0f%% of the time saved from compute, %.0f%% from memory traffic%s)%s",
                 A->pr[p].name, m->step[0] / m->step[p], 100 * m->dc[p] / saved, 100 * m->dm[p] / saved,
                 m->fallback[p] ? "; no tensor cores for it, only its storage helps" : "", p + 1 < A->np ? ", " : ".");
      else
        snprintf(part, sizeof part, "%s x%.2f (nothing saved%s)%s", A->pr[p].name, m->step[0] / m->step[p],
                 m->fallback[p] ? ": no tensor cores for it, and it stores fp32" : "", p + 1 < A->np ? ", " : ".");
      strncat(A->ans, part, sizeof A->ans - strlen(A->ans) - 1);
    }
  }
  {
    /* why the speedup is below the peak ratio: the memory-bound kernels' share at fp16 (last device) */
    model_t *m = &A->mods[A->c.ng - 1];
    size_t pf = 2 < A->np ? 2 : A->np - 1;
    snprintf(part, sizeof part, " On %s the memory-bound kernels take %.0f%% of the FP32 step but %.0f%% of the %s step "
             "(Amdahl: they only halve), so the speedup stays below the %.3gx ratio of the peak rates.",
             A->c.gpus[A->c.ng - 1]->part, 100 * (1 - m->gemm[0] / m->step[0]), 100 * (1 - m->gemm[pf] / m->step[pf]),
             A->pr[pf].name, isnan(A->c.gpus[A->c.ng - 1]->gemm_peak[pf]) ? NAN : A->c.gpus[A->c.ng - 1]->gemm_peak[pf] / A->c.gpus[A->c.ng - 1]->gemm_peak[0]);
    strncat(A->ans, part, sizeof A->ans - strlen(A->ans) - 1);
  }

}

static int render_plots(lowp_run_t *r, amp_t *A) {
  size_t p;
  int g, st;
  /* ---- the plot: speedup bars per device and precision */
  {
    static const char *const colr[4] = {"#7f7f7f", "#1f77b4", "#d62728", "#2ca02c"};
    lowp_series_t sr[LOWP_RPREC_MAX];
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
    snprintf(extra, sizeof extra, "%s\nset boxwidth 0.9\nset xrange [0:%g]\nset yrange [0:*]\nset key top left\n"
             "unset mxtics\nset grid noxtics\n", xt, (double)A->c.ng * (A->np + 1));
    {
      lowp_plot_t pl = {"Predicted speedup over FP32 of a transformer layer step (roofline, datasheet peaks)",
                        "device", "speedup over FP32 (x)", 0, 0, extra};
      st = lowp_plot(r->outdir, "speedup", &pl, sr, A->np);
    }
    if (st != LOWP_OK) return st;
    lowp_result_plot(A->plots, "speedup.png", "Predicted speedup of TF32, FP16 and BF16 over FP32 per device (roofline of "
                     "every kernel of the layer, forward and backward; speedup.csv, kernels.csv).");
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

/* this CPU's roofs (STREAM triad, GEMM rates) and the CPU layer */
static int cpu_setup(lowp_run_t *r, amp_t *A, cpu_t *C) {
  size_t p;
  for (p = 0; p < A->np; p++)
    if (lowp_amp_cpu_supports(&A->pr[p]) && C->ncp < 2) C->cp[C->ncp++] = &A->pr[p];
  A->cnk = lowp_roofline_layer(A->cks, MAXK, &A->c.cdims);
  if (A->cnk == 0 || A->cnk > MAXK || C->ncp == 0) {
    fprintf(stderr, "lowp run amp-speedup: the CPU layer has no kernels or the CPU runner no precision\n");
    return 2;
  }
  C->threads0 = omp_get_max_threads();
  C->nth = A->c.cpu_threads ? (int)A->c.cpu_threads : omp_get_num_procs();
  /* one thread count for both libraries, restored at the end */
  omp_set_num_threads(C->nth);
  openblas_set_num_threads(C->nth);
  lowp_run_progress(r, "measuring this CPU's roofs");
  C->bw = stream_triad((size_t)A->c.stream_mb * 1024 * 1024 / 4, 5);
  for (p = 0; p < C->ncp; p++) {
    C->peak[p] = gemm_rate(C->cp[p], (size_t)A->c.roof_n, 5, r->seed);
    snprintf(C->engine[p], sizeof C->engine[p], "%s", lowp_amp_cpu_gemm_engine(C->cp[p]));
  }
  /* the CPU roofline: measured sgemm as the fp32 roof, the bf16 engine's rate as bf16's */
  memset(&C->cpu, 0, sizeof C->cpu);
  C->cpu.name = "cpu";
  C->cpu.part = "this CPU (measured roofs)";
  for (p = 0; p < A->np; p++) {
    size_t q;
    C->cpu.gemm_peak[p] = NAN;
    for (q = 0; q < C->ncp; q++) if (C->cp[q] == &A->pr[p]) C->cpu.gemm_peak[p] = C->peak[q];
  }
  C->cpu.fp32_peak = C->peak[0];
  C->cpu.bw = C->bw;
  C->cpu.source = "measured in this run";
  if (lowp_amp_cpu_new(&C->ctx, A->cks, A->cnk, 0, r->seed) != LOWP_OK) {
    fprintf(stderr, "lowp run amp-speedup: out of memory for the CPU layer\n");
    return 2;
  }
  return 0;
}

static void cpu_validate(lowp_run_t *r, amp_t *A, cpu_t *C) {
  size_t i, p;
  /* validate every GEMM of every precision before timing anything (docs/style.md B8) */
  for (p = 0; p < C->ncp; p++)
    for (i = 0; i < A->cnk; i++) {
      double worst = NAN;
      int eq, ran;
      if (A->cks[i].kind != LOWP_RK_GEMM) continue;
      lowp_run_progress(r, "validating %s %s", C->cp[p]->name, A->cks[i].name);
      ran = lowp_amp_cpu_run(C->ctx, &A->cks[i], C->cp[p], A->c.cdims.dropout, r->seed) == LOWP_OK;
      if (!ran ||
          lowp_amp_cpu_gemm_check(&worst, &eq, C->ctx, &A->cks[i], C->cp[p], (size_t)A->c.cpu_check) != LOWP_OK || !(worst <= 1)) {
        if (!ran)
          fprintf(stderr, "lowp run amp-speedup: %s GEMM %s did not run; no timings for %s\n",
                  C->cp[p]->name, A->cks[i].name, C->cp[p]->name);
        else
          fprintf(stderr, "lowp run amp-speedup: %s GEMM %s failed validation (%.3g of the gamma_k bound); "
                  "no timings for %s\n", C->cp[p]->name, A->cks[i].name, worst, C->cp[p]->name);
        C->validated[p] = 0;
        A->bad++;
      }
    }
}

static int cpu_time(lowp_run_t *r, amp_t *A, cpu_t *C) {
  size_t i, p;
  /* one untimed pass of every kernel (first touch of the buffers, OpenBLAS's
     thread start), then cpu_reps timed passes, the precisions interleaved
     so that a slow spell of a shared machine hits both; a kernel's time is
     its fastest run, the C->step the sum of those (C->whole[]: the fastest C->whole
     pass, for reference) */
  for (p = 0; p < C->ncp; p++) {
    C->step[p] = 0;
    C->whole[p] = INFINITY;
    C->pstep[p] = 0;
    for (i = 0; i < A->cnk; i++) C->tk[p][i] = INFINITY;
  }
  {
    long rep;
    for (rep = -1; rep < A->c.cpu_reps; rep++)
      for (p = 0; p < C->ncp; p++) {
        double sum = 0;
        if (!C->validated[p]) continue;
        for (i = 0; i < A->cnk; i++) {
          double t0;
          lowp_run_progress(r, "CPU %s, %s %ld of %ld: %s", C->cp[p]->name, rep < 0 ? "warm-up" : "run", rep < 0 ? 1 : rep + 1,
                            rep < 0 ? 1 : A->c.cpu_reps, A->cks[i].name);
          t0 = now_s();
          if (lowp_amp_cpu_run(C->ctx, &A->cks[i], C->cp[p], A->c.cdims.dropout, r->seed) != LOWP_OK) {
            fprintf(stderr, "lowp run amp-speedup: CPU kernel %s failed\n", A->cks[i].name);
            lowp_amp_cpu_free(&C->ctx);
            return 2;
          }
          t0 = now_s() - t0;
          sum += t0;
          if (rep >= 0 && t0 < C->tk[p][i]) C->tk[p][i] = t0;
        }
        if (rep >= 0 && sum < C->whole[p]) C->whole[p] = sum;
      }
  }
  for (p = 0; p < C->ncp; p++)
    for (i = 0; i < A->cnk; i++) {
      lowp_rtime_t t;
      C->step[p] += C->tk[p][i];
      lowp_roofline_time(&t, &A->cks[i], (size_t)(C->cp[p] - A->pr), &C->cpu);
      C->pred[p][i] = t.t;
      C->pstep[p] += t.t;
    }
  return 0;
}

static int cpu_write(lowp_run_t *r, amp_t *A, cpu_t *C) {
  FILE *csv;
  size_t i, p;
  csv = fopen(lowp_run_path(r, "cpu_kernels.csv"), "w");
  if (!csv) { fprintf(stderr, "lowp run amp-speedup: cannot write cpu_kernels.csv\n"); return 2; }
  fprintf(csv, "precision,kernel,kind,flops,bytes_model,measured_s,gflops,gbps,predicted_s,measured_over_predicted\n");
  {
    cJSON *arr = cJSON_AddArrayToObject(C->cj, "kernels");
    for (p = 0; p < C->ncp; p++) {
      if (!C->validated[p]) continue;
      for (i = 0; i < A->cnk; i++) {
        double fl, by;
        cJSON *o = cJSON_CreateObject();
        lowp_roofline_cost(&fl, &by, &A->cks[i], C->cp[p]->storage);
        fprintf(csv, "%s,%s,%s,%.6e,%.6e,%.6e,%.4g,%.4g,%.6e,%.4g\n", C->cp[p]->name, A->cks[i].name,
                A->cks[i].kind == LOWP_RK_GEMM ? "gemm" : "mem", fl, by, C->tk[p][i], fl / C->tk[p][i] / 1e9,
                by / C->tk[p][i] / 1e9, C->pred[p][i], C->tk[p][i] / C->pred[p][i]);
        cJSON_AddStringToObject(o, "precision", C->cp[p]->name);
        cJSON_AddStringToObject(o, "kernel", A->cks[i].name);
        cJSON_AddNumberToObject(o, "measured_s", C->tk[p][i]);
        cJSON_AddNumberToObject(o, "gflops", fl / C->tk[p][i] / 1e9);
        cJSON_AddNumberToObject(o, "gbps", by / C->tk[p][i] / 1e9);
        cJSON_AddNumberToObject(o, "predicted_s", C->pred[p][i]);
        cJSON_AddItemToArray(arr, o);
      }
    }
  }
  fclose(csv);
  return 0;
}

static void cpu_answer(lowp_run_t *r, amp_t *A, cpu_t *C) {
  size_t i, p;
  {
    char m[4096], q[1024];
    double gemm_t[2] = {0, 0}, mem_t[2] = {0, 0}, gp[2] = {0, 0}, mp[2] = {0, 0};
    for (p = 0; p < C->ncp; p++)
      for (i = 0; i < A->cnk; i++) {
        if (A->cks[i].kind == LOWP_RK_GEMM) { gemm_t[p] += C->tk[p][i]; gp[p] += C->pred[p][i]; }
        else { mem_t[p] += C->tk[p][i]; mp[p] += C->pred[p][i]; }
      }
    cJSON_AddStringToObject(C->cj, "openblas_core", openblas_get_corename());
    cJSON_AddStringToObject(C->cj, "openblas_config", openblas_get_config());
    cJSON_AddNumberToObject(C->cj, "openblas_threads", openblas_get_num_threads());
    cJSON_AddNumberToObject(C->cj, "omp_threads", omp_get_max_threads());
    cJSON_AddBoolToObject(C->cj, "cpu_has_avx512_bf16", __builtin_cpu_supports("avx512bf16"));
    cJSON_AddStringToObject(C->cj, "bf16_rounding_isa", lowp_round_fast_isa());
    cJSON_AddNumberToObject(C->cj, "batch", (double)A->c.cdims.batch);
    cJSON_AddNumberToObject(C->cj, "seq", (double)A->c.cdims.seq);
    cJSON_AddBoolToObject(C->cj, "reduced_size", A->c.cdims.batch != A->c.dims.batch || A->c.cdims.seq != A->c.dims.seq);
    cJSON_AddNumberToObject(C->cj, "stream_triad_gbps", C->bw / 1e9);
    for (p = 0; p < C->ncp; p++) {
      char key[64];
      snprintf(key, sizeof key, "%s_gemm_engine", C->cp[p]->name);
      cJSON_AddStringToObject(C->cj, key, C->engine[p]);
      snprintf(key, sizeof key, "%s_gemm_roof_gflops", C->cp[p]->name);
      cJSON_AddNumberToObject(C->cj, key, C->peak[p] / 1e9);
      snprintf(key, sizeof key, "%s_step_s", C->cp[p]->name);
      cJSON_AddNumberToObject(C->cj, key, C->validated[p] ? C->step[p] : NAN);
      snprintf(key, sizeof key, "%s_fastest_whole_pass_s", C->cp[p]->name);
      cJSON_AddNumberToObject(C->cj, key, C->validated[p] ? C->whole[p] : NAN);
      snprintf(key, sizeof key, "%s_step_predicted_s", C->cp[p]->name);
      cJSON_AddNumberToObject(C->cj, key, C->pstep[p]);
    }
    snprintf(m, sizeof m, "Measured on this CPU (threads: %d; OpenBLAS core %s, i.e. the kernel set its DYNAMIC_ARCH chose; the CPU %s AVX512_BF16), the layer at "
             "batch %zu x seq %zu%s, forward + backward, fastest of %ld: roofs measured in the same run: STREAM triad "
             "%.3g GB/s, ", omp_get_max_threads(), openblas_get_corename(),
             __builtin_cpu_supports("avx512bf16") ? "has" : "lacks", A->c.cdims.batch, A->c.cdims.seq,
             A->c.cdims.batch != A->c.dims.batch || A->c.cdims.seq != A->c.dims.seq ? " (reduced from the modelled size to keep the run short)" : "",
             A->c.cpu_reps, C->bw / 1e9);
    for (p = 0; p < C->ncp; p++) {
      snprintf(q, sizeof q, "%s GEMM %.3g GFLOP/s at %ld^3 (%s)%s", C->cp[p]->name, C->peak[p] / 1e9, A->c.roof_n, C->engine[p],
               p + 1 < C->ncp ? ", " : ". ");
      strncat(m, q, sizeof m - strlen(m) - 1);
    }
    for (p = 0; p < C->ncp; p++) {
      if (!C->validated[p]) continue;
      {
        double fl = 0, by;
        for (i = 0; i < A->cnk; i++)
          if (A->cks[i].kind == LOWP_RK_GEMM) { double f1; lowp_roofline_cost(&f1, &by, &A->cks[i], C->cp[p]->storage); fl += f1; }
        snprintf(q, sizeof q, "%s step %.3g ms (GEMMs %.3g ms at %.3g GFLOP/s; memory-bound kernels %.3g ms); the CPU "
                 "roofline predicts %.3g ms (GEMMs %.3g, memory-bound %.3g; lowp's softmax, layer-norm and GELU kernels "
                 "emulate every operation and run far below the memory roof). ", C->cp[p]->name, 1e3 * C->step[p],
                 1e3 * gemm_t[p], fl / gemm_t[p] / 1e9, 1e3 * mem_t[p], 1e3 * C->pstep[p], 1e3 * gp[p], 1e3 * mp[p]);
      }
      strncat(m, q, sizeof m - strlen(m) - 1);
    }
    if (C->ncp == 2 && C->validated[0] && C->validated[1]) {
      snprintf(q, sizeof q, "bf16 over fp32 here: x%.3g for the step, x%.3g for the GEMMs, x%.3g for the memory-bound "
               "kernels.", C->step[0] / C->step[1], gemm_t[0] / gemm_t[1], mem_t[0] / mem_t[1]);
      strncat(m, q, sizeof m - strlen(m) - 1);
      cJSON_AddNumberToObject(C->cj, "bf16_speedup_step", C->step[0] / C->step[1]);
      cJSON_AddNumberToObject(C->cj, "bf16_speedup_gemm", gemm_t[0] / gemm_t[1]);
      cJSON_AddNumberToObject(C->cj, "bf16_speedup_mem", mem_t[0] / mem_t[1]);
    }
    cJSON_AddStringToObject(C->cj, "answer", m);
    omp_set_num_threads(C->threads0);
    openblas_set_num_threads(C->threads0);
    printf("%s\n", m);
    fprintf(r->summary, "**Measured (CPU, timing-dependent; also in timing.json and cpu_kernels.csv).** %s\n\n", m);
  }
}

/* measured on this CPU (timing.json, cpu_kernels.csv) */
static int measure_cpu(lowp_run_t *r, amp_t *A) {
  static cpu_t C;
  int st;
  memset(&C, 0, sizeof C);
  C.cj = cJSON_AddObjectToObject(A->timing, "cpu");
  C.validated[0] = C.validated[1] = 1;
  st = cpu_setup(r, A, &C);
  if (st) return st;
  cpu_validate(r, A, &C);
  st = cpu_time(r, A, &C);
  lowp_amp_cpu_free(&C.ctx);
  if (!st) st = cpu_write(r, A, &C);
  if (!st) cpu_answer(r, A, &C);
  return st;
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
      cJSON_AddStringToObject(gj, "answer", m);
      printf("%s\n", m);
      fprintf(r->summary, "**Measured (GPU).** %s\n\n", m);
    } else {
      const char *why = !A->c.gpu ? "not requested (--measure)" : "no CUDA build or no device: the model and the CPU measurement only";
      cJSON_AddStringToObject(A->timing, "gpu", why);
      fprintf(r->summary, "**GPU.** %s.\n\n", why);
      snprintf(part, sizeof part, " No GPU was timed in this run (%s).", why);
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
  for (g = 0; g < A.c.ng; g++) model(&A.mods[g], A.ks, A.nk, A.np, A.c.gpus[g]);
  /* render the model (deterministic: results.json) */
  render_roofs(&A);
  if (write_kernels_csv(r, &A)) { fprintf(stderr, "lowp run amp-speedup: cannot write kernels.csv\n"); return 2; }
  if (render_speedup(r, &A)) { fprintf(stderr, "lowp run amp-speedup: cannot write speedup.csv\n"); return 2; }
  render_kernel_tables(&A);
  model_answer(&A);
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
  fprintf(r->summary, "**Answer (model).** %s\n\nFiles: kernels.csv, speedup.csv, speedup.png (deterministic); "
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
    "Roofline model of every kernel of the layer (GEMMs forward, dX, dW; softmax, layer norm, GELU, dropout, residual "
    "adds): time = max(flops / peak, bytes / bandwidth) with datasheet peaks (lib/model/roofline.c, each cited); "
    "speedup = ratio of step times; time saved split into compute and memory by the Shapley value per kernel. "
    "Measured: the layer at batch {cpu_batch} x seq {cpu_seq} on this CPU in fp32 and bf16 (OpenBLAS GEMMs validated "
    "against the exact product, lowp's CPU kernels), this CPU's roofs (GEMM rate, STREAM triad) measured in the same "
    "run; cuBLAS on a GPU when one is present. Timings go to timing.json, not results.json.",
    "GEMMs dominate and are compute bound, so most of the speedup comes from the tensor-core rates, capped by the "
    "memory-bound kernels (Amdahl); no TF32/BF16 gain on V100; bf16 no faster than fp32 on a CPU without bf16 GEMMs.",
    params, run, check};
