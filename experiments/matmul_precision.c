/* lowp_exp_matmul_precision -- how far fp32, tf32, fp16, bf16 and fp8 matrix products are from the exact product */

/*
 * Question: for random 1000 x 1000 matrices, what is the largest elementwise
 *   error of a matrix product computed in fp32, tf32, fp16, bf16, e4m3 and
 *   e5m2, against the exact product and against fp32 (as the exercise asks),
 *   on plain CPU accumulation and on a tensor-core model, and how does it
 *   grow with the size?
 * Method: the data are fp32 matrices with N(0,1) entries (Philox, seeded),
 *   rounded to each input format (round to nearest even). Kernels:
 *   cpu-F = kernels/cpu/gemm_acc, every product and every addition rounded
 *   to F (the all-F implementation the exercise describes; fp32 is a plain
 *   CPU sgemm without FMA); tc-F = kernels/cpu/gemm_tc on the lib/model
 *   tensor-core preset (default h100: products exact, blocks aligned and
 *   truncated, fp32 output). References: the exact product of the fp32 data
 *   and the exact product of the rounded inputs (lib/exact, exact
 *   accumulator, rounded once to binary64), and the cpu-fp32 result.
 *   Emulating a kernel costs ~100-300 ns per multiply-add, so above
 *   `full` the error is measured on `rows` rows of the product chosen at
 *   random (every column of them): the maximum is then over those rows.
 *   Componentwise backward error |C - X| / (|A||B|) in units of u.
 * Run: lowp run matmul-precision [--sizes=32,...,1000] [--rows=32] [--model=h100]
 * Expected / acceptance: errors against the exact product of the rounded
 *   inputs stay within gamma_k (|A||B|) where gamma_k exists; fp32 is far
 *   closer to exact than the others, so "against fp32" and "against exact"
 *   differ by at most fp32's own error; cpu-fp16 and cpu-bf16 grow faster
 *   with n than the tensor-core models, which accumulate in fp32.
 */

#include "registry.h"
#include "results.h"

#include "cpu/gemm_acc.h"
#include "cpu/gemm_tc.h"
#include "exact/exact.h"
#include "format/format.h"
#include "io/plot.h"
#include "measure/measure.h"
#include "rng/rng.h"
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lowp_param_t params[] = {
    {"sizes", "32,64,128,256,512,1000", "16,32,64", "matrix sizes n (n x n times n x n); the last is the headline"},
    {"formats", "fp32,tf32,fp16,bf16,e4m3,e5m2", NULL, "input formats (cpu-F accumulates in F too)"},
    {"model", "h100", NULL, "tensor-core model preset (lib/model), or none"},
    {"rows", "32", "8", "rows of the product measured when n > full"},
    {"full", "128", "64", "largest n measured on every row"},
    {NULL, NULL, NULL, NULL}};

#define MAXF 8
#define MAXS 16
#define MAXK (2 * MAXF)

/* ------------------------------------------------------ private helpers */

typedef struct {
  long sizes[MAXS];
  int ns;
  lowp_format_t fs[MAXF];
  int nf;
  const char *model; /* NULL: no tensor-core kernels */
  long rows, full;
} cfg_t;

/* lowp_run_param_formats check: the inputs are fp32 data rounded to the format */
static const char *up_to_fp32(const lowp_format_t *f) {
  return f->precision > 24 ? "input formats up to fp32 (the data are fp32)" : NULL;
}

static void parse(const lowp_run_t *r, cfg_t *c) {
  long long sz[MAXS];
  size_t i;
  c->ns = (int)lowp_run_param_list_int(r, "sizes", sz, MAXS, 1, 4096);
  for (i = 0; i < (size_t)c->ns; i++) c->sizes[i] = (long)sz[i];
  if (c->ns == 0) lowp_run_bad_param(r, "sizes", "expected at least one size");
  c->nf = (int)lowp_run_param_formats(r, "formats", c->fs, MAXF, up_to_fp32);
  c->model = lowp_run_param(r, "model");
  if (!strcmp(c->model, "none")) c->model = NULL;
  else {
    lowp_gemm_tc_cfg_t tc;
    char err[256];
    int st = lowp_gemm_tc_config(&tc, c->model, -1, &LOWP_FMT_FP16, &LOWP_FMT_FP32, err, sizeof err);
    if (st != LOWP_OK && st != LOWP_EUNSUPPORTED) lowp_run_bad_param(r, "model", "unknown tensor-core model (a lib/model preset such as h100, or none)");
  }
  c->rows = (long)lowp_run_param_int(r, "rows", 1, 4096);
  c->full = (long)lowp_run_param_int(r, "full", 1, 4096);
}

static void check(const lowp_run_t *r) {
  cfg_t c;
  parse(r, &c);
}

typedef struct {
  char name[64];
  const lowp_format_t *in;
  int tc; /* 0: cpu-F, 1: tensor-core model */
  lowp_gemm_acc_cfg_t acc;
  lowp_gemm_tc_cfg_t tcc;
} kernel_t;

static double max_abs_diff(const double *x, const double *y, size_t n, size_t *nspecial) {
  double m = 0;
  size_t i;
  *nspecial = 0;
  for (i = 0; i < n; i++) {
    double d = fabs(x[i] - y[i]);
    if (!isfinite(x[i]) || !isfinite(y[i])) { (*nspecial)++; continue; }
    if (d > m) m = d;
  }
  return m;
}

/* --------------------------------------------------------------- run */

static int run(lowp_run_t *r) {
  cfg_t c;
  kernel_t ks[MAXK];
  int nk = 0, i, si, st = 0, bad = 0;
  long nmax = 0;
  double *A0, *B0, *Ain, *Bin, *Arow, *X0, *XF, *C, *C32, *R;
  long *rowidx;
  FILE *csv;
  cJSON *tables = cJSON_AddArrayToObject(r->results, "tables");
  cJSON *plots = cJSON_AddArrayToObject(r->results, "plots");
  cJSON *rows_t = NULL;
  char ans[6144], part[512], err[256];
  double head[MAXK][5]; /* at the last size: err vs data, vs inputs, vs fp32, bwd/u, specials */
  double e0s[MAXS][MAXK]; /* err vs data per size, for the growth exponent */
  double slope[MAXK];
  double e1s[MAXS][MAXK]; /* err vs rounded inputs per size */
  lowp_rng_t g;

  parse(r, &c);
  for (si = 0; si < c.ns; si++) if (c.sizes[si] > nmax) nmax = c.sizes[si];
  /* cpu-fp32 runs first at every size: the others are compared with its result */
  for (i = 1; i < c.nf; i++)
    if (!strcmp(c.fs[i].name, "fp32")) {
      lowp_format_t t = c.fs[0];
      c.fs[0] = c.fs[i];
      c.fs[i] = t;
    }

  /* kernels: cpu-F for every format, tc-F where the model has a datapath */
  for (i = 0; i < c.nf; i++) {
    kernel_t *k = &ks[nk++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "cpu-%s", c.fs[i].name);
    k->in = &c.fs[i];
    k->acc.prod = &c.fs[i];
    k->acc.prod_rnd = LOWP_RND_NE;
    k->acc.acc = &c.fs[i];
    k->acc.acc_rnd = LOWP_RND_NE;
    k->acc.order = LOWP_ORDER_RECURSIVE;
  }
  if (c.model)
    for (i = 0; i < c.nf; i++) {
      kernel_t *k = &ks[nk];
      memset(k, 0, sizeof *k);
      if (lowp_gemm_tc_config(&k->tcc, c.model, -1, &c.fs[i], &LOWP_FMT_FP32, err, sizeof err) != LOWP_OK) continue;
      snprintf(k->name, sizeof k->name, "tc-%s-%s", c.model, c.fs[i].name);
      k->in = &c.fs[i];
      k->tc = 1;
      nk++;
    }

  A0 = malloc((size_t)nmax * nmax * sizeof *A0);
  B0 = malloc((size_t)nmax * nmax * sizeof *B0);
  Ain = malloc((size_t)nmax * nmax * sizeof *Ain);
  Bin = malloc((size_t)nmax * nmax * sizeof *Bin);
  Arow = malloc((size_t)nmax * nmax * sizeof *Arow);
  X0 = malloc((size_t)nmax * nmax * sizeof *X0);
  XF = malloc((size_t)nmax * nmax * sizeof *XF);
  C = malloc((size_t)nmax * nmax * sizeof *C);
  C32 = malloc((size_t)nmax * nmax * sizeof *C32);
  R = malloc((size_t)nmax * nmax * sizeof *R);
  rowidx = malloc((size_t)nmax * sizeof *rowidx);
  if (!A0 || !B0 || !Ain || !Bin || !Arow || !X0 || !XF || !C || !C32 || !R || !rowidx) {
    fprintf(stderr, "lowp run matmul-precision: out of memory\n");
    return 2;
  }
  csv = fopen(lowp_run_path(r, "errors.csv"), "w");
  if (!csv) { fprintf(stderr, "lowp run matmul-precision: cannot write errors.csv\n"); return 2; }
  fprintf(csv, "n,kernel,format,rows_measured,max_err_vs_exact_data,max_err_vs_exact_inputs,max_diff_vs_cpu_fp32,"
          "max_bwd_in_u,nonfinite\n");

  for (si = 0; si < c.ns; si++) {
    long n = c.sizes[si], m = n <= c.full ? n : (c.rows < n ? c.rows : n), k2, j;
    size_t nn = (size_t)n * n, mn = (size_t)m * n;
    /* data: fp32 N(0,1), one stream per size */
    lowp_rng_init(&g, r->seed, (uint32_t)si);
    for (j = 0; j < (long)nn; j++) {
      lowp_round_f64(&A0[j], lowp_rng_normal(&g), &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
      lowp_round_f64(&B0[j], lowp_rng_normal(&g), &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
    }
    /* the measured rows: all, or m distinct rows drawn at random (partial Fisher-Yates) */
    for (j = 0; j < n; j++) rowidx[j] = j;
    if (m < n)
      for (j = 0; j < m; j++) {
        long t = j + (long)(lowp_rng_uniform(&g) * (double)(n - j)), tmp;
        if (t >= n) t = n - 1;
        tmp = rowidx[j]; rowidx[j] = rowidx[t]; rowidx[t] = tmp;
      }
    for (j = 0; j < m; j++) memcpy(&Arow[(size_t)j * n], &A0[(size_t)rowidx[j] * n], (size_t)n * sizeof *A0);
    lowp_run_progress(r, "n = %ld: exact product of the data (%ld rows)", n, m);
    if (lowp_exact_gemm(X0, Arow, B0, NULL, (size_t)m, (size_t)n, (size_t)n, &LOWP_FMT_FP64, NULL, LOWP_RND_NE) != LOWP_OK) return 2;
    /* the reference checked against MPFR alone (lowp_exact_dot_mpfr) on 4 entries */
    for (j = 0; j < 4; j++) {
      size_t ii = (size_t)(lowp_rng_uniform(&g) * (double)m), jj = (size_t)(lowp_rng_uniform(&g) * (double)n), l;
      double y, *col = malloc((size_t)n * sizeof *col);
      if (!col) return 2;
      if (ii >= (size_t)m) ii = (size_t)m - 1;
      if (jj >= (size_t)n) jj = (size_t)n - 1;
      for (l = 0; l < (size_t)n; l++) col[l] = B0[l * (size_t)n + jj];
      lowp_exact_dot_mpfr(&y, &Arow[ii * (size_t)n], col, (size_t)n, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
      free(col);
      if (y != X0[ii * (size_t)n + jj]) {
        fprintf(stderr, "lowp run matmul-precision: exact GEMM disagrees with MPFR at n = %ld (%zu, %zu): %.17g vs %.17g\n",
                n, ii, jj, X0[ii * (size_t)n + jj], y);
        bad++;
      }
    }

    for (i = 0; i < nk; i++) {
      kernel_t *kk = &ks[i];
      size_t nsp;
      double e0, e1, e2, bwd = 0;
      lowp_errors_t me;
      /* inputs rounded to the kernel's format */
      for (j = 0; j < (long)mn; j++) lowp_round_f64(&Ain[j], Arow[j], kk->in, NULL, LOWP_RND_NE);
      for (j = 0; j < (long)nn; j++) lowp_round_f64(&Bin[j], B0[j], kk->in, NULL, LOWP_RND_NE);
      lowp_run_progress(r, "n = %ld: %s", n, kk->name);
      if (lowp_exact_gemm(XF, Ain, Bin, NULL, (size_t)m, (size_t)n, (size_t)n, &LOWP_FMT_FP64, NULL, LOWP_RND_NE) != LOWP_OK) return 2;
      memset(C, 0, mn * sizeof *C);
      st = kk->tc ? lowp_gemm_tc_ref(C, Ain, Bin, (size_t)m, (size_t)n, (size_t)n, &kk->tcc)
                  : lowp_gemm_acc_ref(C, Ain, Bin, (size_t)m, (size_t)n, (size_t)n, &kk->acc);
      if (st != LOWP_OK) {
        fprintf(stderr, "lowp run matmul-precision: kernel %s failed: %s\n", kk->name, lowp_status_str(st));
        return 2;
      }
      if (!kk->tc && !strcmp(kk->in->name, "fp32")) memcpy(C32, C, mn * sizeof *C);
      /* |A||B| of the rounded inputs, for the componentwise backward error */
      for (j = 0; j < m; j++)
        for (k2 = 0; k2 < n; k2++) {
          double s = 0;
          long l;
          for (l = 0; l < n; l++) s += fabs(Ain[(size_t)j * n + l]) * fabs(Bin[(size_t)l * n + k2]);
          R[(size_t)j * n + k2] = s;
        }
      e1 = max_abs_diff(C, XF, mn, &nsp);
      e0 = max_abs_diff(C, X0, mn, &nsp);
      e2 = strcmp(ks[0].in->name, "fp32") ? NAN : max_abs_diff(C, C32, mn, &nsp);
      if (lowp_measure_errors(&me, C, XF, R, mn, &LOWP_FMT_FP32) == LOWP_OK) bwd = me.max_bwd / lowp_format_u(kk->in);
      if (!kk->tc) {
        /* the all-F kernel: |C - X_F| <= gamma_{n} (|A||B|) with products rounded too: gamma_{n+1} */
        double gb = lowp_bound_gamma((double)n + 1, lowp_format_u(kk->in));
        if (isfinite(gb) && me.max_bwd > gb) bad++;
      }
      fprintf(csv, "%ld,%s,%s,%ld,%.6e,%.6e,%.6e,%.6g,%zu\n", n, kk->name, kk->in->name, m, e0, e1, e2, bwd, nsp);
      e0s[si][i] = e0;
      e1s[si][i] = e1;
      if (si == c.ns - 1) {
        head[i][0] = e0; head[i][1] = e1; head[i][2] = e2; head[i][3] = bwd; head[i][4] = (double)nsp;
      }
    }
  }
  fclose(csv);

  /* ---- growth exponents: least-squares slope of log(error) on log(n) over the sizes */
  for (i = 0; i < nk; i++) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int cnt = 0;
    for (si = 0; si < c.ns; si++)
      if (e0s[si][i] > 0 && isfinite(e0s[si][i])) {
        double lx = log((double)c.sizes[si]), ly = log(e0s[si][i]);
        sx += lx; sy += ly; sxx += lx * lx; sxy += lx * ly;
        cnt++;
      }
    slope[i] = cnt >= 2 && cnt * sxx - sx * sx > 0 ? (cnt * sxy - sx * sy) / (cnt * sxx - sx * sx) : NAN;
  }

  /* ---- the headline table at the last size */
  {
    static const char *const cols[] = {"kernel", "max |C - exact(data)|", "max |C - exact(rounded inputs)|",
                                       "max |C - C_fp32| (the exercise's question)", "max |C - X| / (|A||B|), in u",
                                       "non-finite entries", "growth: error ~ n^a, a ="};
    cJSON *t = cJSON_CreateObject(), *cl = cJSON_AddArrayToObject(t, "columns");
    long n = c.sizes[c.ns - 1], m = n <= c.full ? n : (c.rows < n ? c.rows : n);
    char title[256];
    snprintf(title, sizeof title, "n = %ld (%ld x %ld times %ld x %ld, fp32 N(0,1) data; %s)", n, n, n, n, n,
             m < n ? "errors over randomly chosen rows, see rows" : "every entry");
    cJSON_AddStringToObject(t, "title", title);
    for (i = 0; i < 7; i++) cJSON_AddItemToArray(cl, cJSON_CreateString(cols[i]));
    rows_t = cJSON_AddArrayToObject(t, "rows");
    for (i = 0; i < nk; i++) {
      cJSON *row = cJSON_CreateArray();
      int q;
      cJSON_AddItemToArray(row, cJSON_CreateString(ks[i].name));
      for (q = 0; q < 5; q++) {
        char cellb[64];
        snprintf(cellb, sizeof cellb, q == 4 ? "%.0f" : "%.4g", head[i][q]);
        cJSON_AddItemToArray(row, cJSON_CreateString(cellb));
      }
      {
        char cellb[64];
        if (isfinite(slope[i])) snprintf(cellb, sizeof cellb, "%.2f", slope[i]);
        else snprintf(cellb, sizeof cellb, "(one size)");
        cJSON_AddItemToArray(row, cJSON_CreateString(cellb));
      }
      cJSON_AddItemToArray(rows_t, row);
    }
    cJSON_AddItemToArray(tables, t);
    snprintf(ans, sizeof ans, "At n = %ld (max over %s), the largest elementwise error against the exact product: ", n,
             m < n ? "randomly chosen rows" : "all entries");
    for (i = 0; i < nk; i++) {
      snprintf(part, sizeof part, "%.63s %.3g%s", ks[i].name, head[i][0], i + 1 < nk ? ", " : ". ");
      strncat(ans, part, sizeof ans - strlen(ans) - 1);
    }
    if (nk > 0 && !strcmp(ks[0].in->name, "fp32")) {
      snprintf(part, sizeof part, "Against fp32 instead of the exact product the numbers change by at most fp32's own "
               "error (%.3g), which the comparison hides: it cannot rank kernels that are closer to exact than fp32, "
               "and it charges fp32's error to the other side. ", head[0][0]);
      strncat(ans, part, sizeof ans - strlen(ans) - 1);
    }
    {
      /* where the error comes from: the share of the accumulation (error against the exact product of the
         rounded inputs) in the total, per kind of kernel; and how fast it grows */
      double lo[2] = {INFINITY, INFINITY}, hi[2] = {0, 0}, slo[2] = {INFINITY, INFINITY}, shi[2] = {-INFINITY, -INFINITY};
      for (i = 0; i < nk; i++) {
        int t = ks[i].tc;
        double share = head[i][0] > 0 ? head[i][1] / head[i][0] : 0;
        if (!strcmp(ks[i].in->name, "fp32")) continue;
        if (share < lo[t]) lo[t] = share;
        if (share > hi[t]) hi[t] = share;
        if (isfinite(slope[i])) { if (slope[i] < slo[t]) slo[t] = slope[i]; if (slope[i] > shi[t]) shi[t] = slope[i]; }
      }
      if (isfinite(lo[0])) {
        snprintf(part, sizeof part, "All-format CPU kernels: the accumulation error is %.0f-%.0f%% of the total, and the "
                 "error grows like n^%.2f to n^%.2f. ", 100 * lo[0], 100 * hi[0], slo[0], shi[0]);
        strncat(ans, part, sizeof ans - strlen(ans) - 1);
      }
      if (isfinite(lo[1])) {
        snprintf(part, sizeof part, "Tensor-core model (%s, fp32 accumulation): the accumulation error is only "
                 "%.2g-%.2g%% of the total, the rest is the rounding of the inputs; growth n^%.2f to n^%.2f. ",
                 c.model, 100 * lo[1], 100 * hi[1], slo[1], shi[1]);
        strncat(ans, part, sizeof ans - strlen(ans) - 1);
      }
      for (i = 0; i + 1 < nk; i++) {
        int j2;
        for (j2 = i + 1; j2 < nk; j2++)
          if (ks[i].tc == ks[j2].tc && head[i][0] == head[j2][0] && head[i][1] == head[j2][1]) {
            snprintf(part, sizeof part, "%.63s and %.63s give identical results here (same precision; these data stay in "
                     "both ranges). ", ks[i].name, ks[j2].name);
            strncat(ans, part, sizeof ans - strlen(ans) - 1);
          }
      }
    }
    if (bad) strncat(ans, " A BOUND CHECK FAILED.", sizeof ans - strlen(ans) - 1);
    cJSON_AddStringToObject(r->results, "answer", ans);
    fprintf(r->summary, "**Answer.** %s\n\nFiles: errors.csv (every size and kernel), growth.png, growth_tc.png.\n", ans);
  }

  /* ---- growth plots: one series per kernel, from growth.csv (kernel-major order, so that the rows of one
     kernel are consecutive and gnuplot joins them) */
  csv = fopen(lowp_run_path(r, "growth.csv"), "w");
  if (!csv) return 2;
  fprintf(csv, "kernel,n,max_err_vs_exact_data,max_err_vs_exact_inputs\n");
  for (i = 0; i < nk; i++)
    for (si = 0; si < c.ns; si++) fprintf(csv, "%s,%ld,%.6e,%.6e\n", ks[i].name, c.sizes[si], e0s[si][i], e1s[si][i]);
  fclose(csv);
  {
    static const char *const colors[] = {"#000000", "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"};
    lowp_series_t sr[MAXK];
    char styles[MAXK][64];
    int pass;
    for (pass = 0; pass < 2 && st == 0; pass++) {
      int ns = 0;
      lowp_plot_t p = {pass ? "Tensor-core model: error against the exact product of the data"
                            : "Plain CPU, everything in the format: error against the exact product of the data",
                       "n (matrices n x n, log scale)", "max |C - exact| (log scale)", 1, 1,
                       "set key outside right\nset logscale x 2\nset format x '%g'"};
      for (i = 0; i < nk; i++) {
        lowp_series_t s = {"growth.csv", 2, 3, NULL, NULL, NULL, 1, 0};
        if (ks[i].tc != pass) continue;
        snprintf(styles[ns], sizeof styles[ns], "linespoints lc rgb '%s'", colors[ns % 8]);
        s.title = ks[i].name;
        s.style = styles[ns];
        s.filter = ks[i].name;
        sr[ns++] = s;
      }
      if (ns == 0) continue;
      st = lowp_plot(r->outdir, pass ? "growth_tc" : "growth", &p, sr, (size_t)ns);
    }
    lowp_result_plot(plots, "growth.png", "Largest elementwise error against the exact product of the fp32 data, by size, for "
                     "kernels that round every product and sum to the input format (above the 'full' size: over sampled rows).");
    if (c.model)
      lowp_result_plot(plots, "growth_tc.png", "The same for the tensor-core model (products exact, fp32 accumulation per "
                       "block): the error is dominated by the rounding of the inputs.");
  }
  free(A0); free(B0); free(Ain); free(Bin); free(Arow); free(X0); free(XF); free(C); free(C32); free(R); free(rowidx);
  if (st != 0) return lowp_run_plot_failed(r, st);
  if (bad) {
    fprintf(stderr, "lowp run matmul-precision: %d bound checks failed\n", bad);
    return 1;
  }
  return 0;
}

const lowp_experiment_t lowp_exp_matmul_precision = {
    "matmul-precision",
    "How far are fp32, tf32, fp16, bf16 and fp8 products of random 1000 x 1000 matrices from the exact product "
    "(and from fp32), on plain CPU accumulation and on a tensor-core model, and how does the error grow with n?",
    "fp32 N(0,1) data rounded to each format; kernels: cpu-F (kernels/cpu/gemm_acc, every product and sum "
    "rounded to F) and tc-F (kernels/cpu/gemm_tc on a lib/model preset); references: exact products "
    "(lib/exact) of the data and of the rounded inputs, and the cpu-fp32 result; max elementwise error and "
    "componentwise backward error; sizes up to 1000 (over randomly chosen rows above 'full', since emulation "
    "costs ~100-300 ns per multiply-add).",
    "Accumulation errors within gamma_{n+1} |A||B| where it exists; input rounding dominates for the "
    "tensor-core models; all-format CPU accumulation grows with n.",
    params, run, check};
