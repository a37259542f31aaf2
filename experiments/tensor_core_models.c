/* lowp_exp_tensor_core_models -- replay GPU-captured tensor-core rows through the CPU models */

/*
 * Question: does each tensor-core model (lib/model) reproduce, bit for bit,
 *   what the real GPU computed, for every captured row of every GPU, input
 *   format and output format?
 * Method: every GPU/FORMAT folder of a vectors directory in the layout of
 *   tests/data/tensor-core-vectors/README.md (a_, b_, c_, d_ files) is
 *   replayed through the preset named after the GPU (folder name,
 *   lowercased; --map=GPU=SPEC adds or overrides, e.g. RTX4090=ada or
 *   X=b=16,F=25): D = A.B + C per row on the model, the fp32 bits compared
 *   with the GPU's. For fp16 output, C is first converted to fp16 (round to
 *   nearest even), as the capture kernels did. Rows captured with C = 0
 *   (H100 fp8 with fp32 output, wgmma: D = A.B + D, D zero) are listed in
 *   --czero. Then, on the same models, the fp8 accumulation error of a
 *   K = 4096 dot product (DeepSeek-V3's case) with and without promotion to
 *   fp32 every 128 products (the registry kernel gemm_tc), measured by the
 *   pipeline against the exact dot product (lib/check, lib/exact).
 * Provenance of the vectors (tests/data/tensor-core-vectors/README.md and
 *   LICENCE): bit patterns captured on real GPUs by F. A. Khattak and M.
 *   Mikaitis, published with their MATLAB tensor-core models (GitHub
 *   north-numerical-computing/MATLAB-tensor-core, folder model_validation/,
 *   BSD 2-Clause; their papers are cited in lib/model/tc.h); lowp keeps
 *   the first 1000 rows of each file. Which instruction each preset's datapath models is the
 *   one the rows were captured with: fp16, bf16 and tf32 with wmma (all
 *   GPUs); fp8 with inline PTX mma.sync.aligned.m16n8k32 (ada; h100/h200
 *   with fp16 output; b200), and on H100 with fp32 output with wgmma (D =
 *   A.B + D from D = 0: the only wgmma datapath here). Blackwell's tcgen05
 *   and any cuBLAS kernel are not modelled: a GEMM on a preset (registry
 *   kernel gemm_tc, the "tc-h100" series of matmul-precision) chains the
 *   single instruction's block FMA along K in order (lib/model/tc_dot.c),
 *   with no split-K or other reordering a library kernel may use.
 * Run: lowp run tensor-core-models [--vectors=DIR] [--map=GPU=SPEC,...]
 * Expected / acceptance: every row of every file matches (exit 1 otherwise,
 *   with the first mismatching row of each file in the table). The fp8
 *   H100 model without promotion loses about 2^-13 relative per block of
 *   32 on K = 4096 positive data, and promotion every 128 brings it down
 *   by more than an order of magnitude.
 */

#define _POSIX_C_SOURCE 200809L

#include "catalog.h"
#include "results.h"

#include "check/pipeline.h"
#include "exp_check.h"
#include "model/tc.h"
#include "rng/dist.h"
#include "status.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef LOWP_SOURCE_DIR
#define LOWP_SOURCE_DIR "."
#endif

static const lowp_param_t params[] = {
    {"vectors", "<source>/tests/data/tensor-core-vectors", NULL,
     "folder with GPU/FORMAT/{a,b,c,d}_GPU_*.txt files (README.md of tests/data/tensor-core-vectors)"},
    {"map", "", NULL, "extra GPU=SPEC pairs separated by semicolons (SPEC: a preset, or b=..,F=..)"},
    {"czero", "H100/E4M3/fp32;H100/E5M2/fp32;H200/E4M3/fp32;H200/E5M2/fp32", NULL,
     "GPU/FORMAT/OUTPUT files captured with C = 0 (';' separated)"},
    {"k", "4096", "1024", "length of the fp8 dot products (promotion study)"},
    {"trials", "64", "16", "fp8 dot products per distribution"},
    {NULL, NULL, NULL, NULL}};

#define MAXN 64

/* ------------------------------------------------------ private helpers */

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted names of the subfolders of dir (at most MAXN); returns the count. */
static size_t list_dirs(char names[][64], const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char path[4096];
  char *ptrs[MAXN];
  char tmp[MAXN][64];
  size_t n = 0, i;
  if (!d) return 0;
  while ((e = readdir(d)) && n < MAXN) {
    struct stat st;
    if (e->d_name[0] == '.' || strlen(e->d_name) >= 64) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (stat(path, &st) || !S_ISDIR(st.st_mode)) continue;
    strcpy(tmp[n], e->d_name);
    ptrs[n] = tmp[n];
    n++;
  }
  closedir(d);
  qsort(ptrs, n, sizeof ptrs[0], cmp_str);
  for (i = 0; i < n; i++) strcpy(names[i], ptrs[i]);
  return n;
}

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The model spec for a GPU folder: --map first, then the preset of that name. */
static int spec_for(char *spec, size_t len, const char *gpu, const char *map) {
  char buf[1024], *tok, *next, low[64];
  size_t i;
  snprintf(buf, sizeof buf, "%s", map);
  for (tok = buf; tok && *tok; tok = next) {
    char *eq;
    next = strchr(tok, ';');
    if (next) *next++ = '\0';
    eq = strchr(tok, '=');
    if (eq && (size_t)(eq - tok) == strlen(gpu) && !strncmp(tok, gpu, strlen(gpu))) {
      snprintf(spec, len, "%s", eq + 1);
      return 1;
    }
  }
  for (i = 0; gpu[i] && i < sizeof low - 1; i++) low[i] = (char)tolower((unsigned char)gpu[i]);
  low[i] = '\0';
  if (lowp_tc_preset_find(low)) { snprintf(spec, len, "%s", low); return 1; }
  return 0;
}

static int in_list(const char *list, const char *item) {
  size_t n = strlen(item);
  const char *s = list;
  while ((s = strstr(s, item))) {
    if ((s == list || s[-1] == ';') && (s[n] == '\0' || s[n] == ';')) return 1;
    s += n;
  }
  return 0;
}

/* A model spec is usable if it resolves for at least one datapath (fp16,
   bf16, tf32, fp8 inputs; fp32 or fp16 output): "zzz" resolves for none. */
static int spec_usable(const char *spec, char *err, size_t errlen) {
  static const lowp_format_t *const ins[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_TF32,
                                             &LOWP_FMT_E4M3};
  size_t i, o;
  int st = LOWP_EINVAL;
  for (i = 0; i < 4; i++)
    for (o = 0; o < 2; o++) {
      lowp_tc_model_t m;
      st = lowp_tc_model_get(&m, spec, ins[i], o ? &LOWP_FMT_FP16 : &LOWP_FMT_FP32, err, errlen);
      if (st == LOWP_OK) return 1;
      if (st == LOWP_EINVAL) return 0; /* unknown preset or key: no datapath will do */
    }
  return 0;
}

/* Every parameter is checked here, before any output exists: a malformed
   --map or --czero item, a model spec that does not resolve, or a corrupt
   vectors file is bad input (exit 2), not a failed check (exit 1). */
static void check(const lowp_run_t *r) {
  char pathbuf[4096];
  const char *dir = lowp_run_param_path(r, "vectors", pathbuf, sizeof pathbuf);
  const char *map = lowp_run_param(r, "map");
  const char *czero = lowp_run_param(r, "czero");
  char names[MAXN][64], fmts[MAXN][64], why[512], err[256];
  const char *s;
  size_t ng, gi;

  /* --map: GPU=SPEC items separated by ';', each GPU once */
  if (strlen(map) >= 1024) lowp_run_bad_param(r, "map", "longer than 1023 characters");
  for (s = map; *map && s;) {
    size_t len = strcspn(s, ";");
    const char *eq = memchr(s, '=', len);
    char item[1024], gpu[64];
    snprintf(item, sizeof item, "%.*s", (int)len, s);
    if (!eq || eq == s || (size_t)(eq - s) + 1 == len || (size_t)(eq - s) >= sizeof gpu) {
      snprintf(why, sizeof why, "item '%.200s' is not GPU=SPEC (items are separated by ';')", item);
      lowp_run_bad_param(r, "map", why);
    }
    snprintf(gpu, sizeof gpu, "%.*s", (int)(eq - s), s);
    if (strpbrk(gpu, "/,; ")) {
      snprintf(why, sizeof why, "'%s' is not a GPU folder name", gpu);
      lowp_run_bad_param(r, "map", why);
    }
    if (!spec_usable(item + (eq - s) + 1, err, sizeof err)) {
      snprintf(why, sizeof why, "model '%.200s' for %s: %.200s", item + (eq - s) + 1, gpu, err);
      lowp_run_bad_param(r, "map", why);
    }
    {
      /* the same GPU again later in the list */
      const char *t;
      size_t gl = strlen(gpu);
      for (t = s + len; *t == ';' && t[1];) {
        size_t l2 = strcspn(t + 1, ";");
        if (l2 > gl && !strncmp(t + 1, gpu, gl) && t[1 + gl] == '=') {
          snprintf(why, sizeof why, "GPU '%s' is given twice", gpu);
          lowp_run_bad_param(r, "map", why);
        }
        t += 1 + l2;
      }
    }
    s += len;
    if (*s == ';') {
      s++;
      if (!*s) lowp_run_bad_param(r, "map", "empty item after the last ';'");
    } else {
      s = NULL;
    }
  }

  /* --czero: GPU/FORMAT/OUTPUT items separated by ';' */
  for (s = czero; *czero && s;) {
    size_t len = strcspn(s, ";");
    char item[256], g[64], f[64], o[64], extra;
    snprintf(item, sizeof item, "%.*s", (int)(len < 255 ? len : 255), s);
    if (len >= 255 || sscanf(item, "%63[^/]/%63[^/]/%63[^/]%c", g, f, o, &extra) != 3 ||
        !lowp_tc_vectors_format(f) || (strcmp(o, "fp32") && strcmp(o, "fp16"))) {
      snprintf(why, sizeof why, "item '%s' is not GPU/FORMAT/OUTPUT (FORMAT fp16, bf16, tf32, "
               "E4M3 or E5M2; OUTPUT fp32 or fp16; items separated by ';')", item);
      lowp_run_bad_param(r, "czero", why);
    }
    s += len;
    if (*s == ';') {
      s++;
      if (!*s) lowp_run_bad_param(r, "czero", "empty item after the last ';'");
    } else {
      s = NULL;
    }
  }

  /* the vectors: every file readable and well formed */
  ng = list_dirs(names, dir);
  if (ng == 0) lowp_run_bad_param(r, "vectors", "not a folder with GPU subfolders");
  for (gi = 0; gi < ng; gi++) {
    char gdir[2048];
    size_t nf, fi, oi;
    snprintf(gdir, sizeof gdir, "%s/%s", dir, names[gi]);
    nf = list_dirs(fmts, gdir);
    for (fi = 0; fi < nf; fi++) {
      if (!lowp_tc_vectors_format(fmts[fi])) continue;
      for (oi = 0; oi < 2; oi++) {
        char path[4096];
        lowp_tc_replay_t rep;
        int st;
        const char *out = oi ? "fp16" : "fp32";
        snprintf(path, sizeof path, "%s/%s/d_%s_%s.txt", gdir, fmts[fi], names[gi], out);
        if (!file_exists(path)) continue;
        st = lowp_tc_replay(&rep, dir, names[gi], fmts[fi], oi ? &LOWP_FMT_FP16 : &LOWP_FMT_FP32,
                            0, NULL);
        if (st != LOWP_OK) {
          snprintf(why, sizeof why, "%s/%s, %s output: %s (each of a_, b_, c_ and d_ files "
                   "needed, same number of rows, hex and binary words only)", names[gi],
                   fmts[fi], out, lowp_status_str(st));
          lowp_run_bad_param(r, "vectors", why);
        }
      }
    }
  }
  lowp_run_param_int(r, "k", 32, 1 << 20);
  lowp_run_param_int(r, "trials", 1, 100000);
}

/* The fp8 promotion study, declared: K-term e4m3 dot products (each a
   1 x 1 GEMM of the batch) on the registry kernel gemm_tc with the h100
   model, promote = 0 and 128, and b200; the pipeline measures them against
   the exact dot products. */
static const char *const promo_dists[] = {"uniform01", "uniform11", "normal"};
static const char *const promo_specs[] = {"h100", "h100,promote=128", "b200"};
static const char *const promo_params[] = {"model=h100", "model=h100,promote=128", "model=b200"};

/* mean and max relative error |got - exact| / |exact| of the trials */
static int promo_measure(double *mean, double *mx, const lowp_problem_t *p,
                         const lowp_check_inputs_t *in, const char *params) {
  lowp_check_result_t res;
  char err[512];
  size_t i, trials = p->dims.batch;
  double sum = 0;
  int st = lowp_exp_measure(&res, p, "gemm_tc", params, in, err, sizeof err);
  *mx = 0;
  for (i = 0; !st && i < trials; i++) {
    double got = res.out[0].got[i], ex = res.out[0].exact[i];
    double rel = ex != 0 ? fabs(got - ex) / fabs(ex) : fabs(got);
    sum += rel;
    if (rel > *mx) *mx = rel;
  }
  if (st) fprintf(stderr, "lowp run tensor-core-models: %s\n", err);
  *mean = sum / trials;
  lowp_check_result_free(&res);
  return st;
}

static void promo_row(lowp_run_t *r, FILE *csv, cJSON *rows, size_t di, size_t si, size_t k,
                      size_t trials, double mean, double mx) {
  cJSON *row = cJSON_CreateArray();
  fprintf(csv, "%s,%s,%zu,%zu,%.6e,%.6e\n", promo_dists[di], promo_specs[si], k, trials, mean, mx);
  fprintf(r->summary, "| %s | %s | %.3e | %.3e |\n", promo_dists[di], promo_specs[si], mean, mx);
  cJSON_AddItemToArray(row, cJSON_CreateString(promo_dists[di]));
  cJSON_AddItemToArray(row, cJSON_CreateString(promo_specs[si]));
  cJSON_AddItemToArray(row, cJSON_CreateNumber((double)k));
  cJSON_AddItemToArray(row, cJSON_CreateNumber(mean));
  cJSON_AddItemToArray(row, cJSON_CreateNumber(mx));
  cJSON_AddItemToArray(rows, row);
}

static int promotion_study(lowp_run_t *r, cJSON *tables) {
  static const char *const c[] = {"distribution", "model", "k", "mean rel. error", "max rel. error"};
  size_t k = (size_t)lowp_run_param_int(r, "k", 32, 1 << 20);
  size_t trials = (size_t)lowp_run_param_int(r, "trials", 1, 100000);
  lowp_problem_t p = lowp_exp_problem("gemm", trials, 1, 1, k, &LOWP_FMT_E4M3, &LOWP_FMT_FP32);
  double *a = malloc(k * trials * sizeof *a), *b = malloc(k * trials * sizeof *b);
  cJSON *rows;
  size_t di, si;
  int st = LOWP_OK;
  FILE *csv;
  if (!a || !b) { free(a); free(b); return LOWP_ENOMEM; }
  csv = fopen(lowp_run_path(r, "fp8_promotion.csv"), "w");
  if (!csv) { free(a); free(b); return LOWP_EIO; }
  fprintf(csv, "# generated by lowp run tensor-core-models, do not edit\n");
  fprintf(csv, "distribution,model,k,trials,mean_rel_err,max_rel_err\n");
  rows = lowp_result_table(tables, "fp8 (e4m3) dot products: relative error against the exact value", c, 5);
  fprintf(r->summary, "\n### fp8 accumulation, K = %zu (%zu dot products each, e4m3 inputs, fp32 output)\n\n"
          "| data | model | mean rel. error | max rel. error |\n|---|---|---|---|\n", k, trials);
  for (di = 0; di < 3 && !st; di++) {
    lowp_dist_t d;
    lowp_check_inputs_t in;
    const double *x[2] = {a, b};
    lowp_dist_parse(&d, promo_dists[di]);
    lowp_dist_fill(a, k * trials, &d, &LOWP_FMT_E4M3, r->seed, (uint32_t)(10 + 2 * di));
    lowp_dist_fill(b, k * trials, &d, &LOWP_FMT_E4M3, r->seed, (uint32_t)(11 + 2 * di));
    st = lowp_check_inputs_copy(&in, &p, x, NULL);
    for (si = 0; si < 3 && !st; si++) {
      double mean, mx;
      st = promo_measure(&mean, &mx, &p, &in, promo_params[si]);
      if (!st) promo_row(r, csv, rows, di, si, k, trials, mean, mx);
    }
    lowp_check_inputs_free(&in);
  }
  free(a);
  free(b);
  if (fclose(csv)) return LOWP_EIO;
  return st;
}

/* ----------------------------------------------------------------- run */

/* ----------------------------------------------------------------- run */

/* what the replay counted over the files */
typedef struct {
  size_t files, rows_all, match_all, bad_files, skipped;
} tally_t;

/* one file GPU/FORMAT/d_GPU_OUT.txt replayed through the GPU's model: a
   row of matches.csv, of the table and of the summary */
static void replay_file(lowp_run_t *r, FILE *csv, cJSON *rows, tally_t *T, const char *dir,
                        const char *gpu, const char *fmt, int oi, const char *spec, int have) {
  static const char *const outs[] = {"fp32", "fp16"};
  const char *czero = lowp_run_param(r, "czero");
  const lowp_format_t *in = lowp_tc_vectors_format(fmt);
  const lowp_format_t *out = oi ? &LOWP_FMT_FP16 : &LOWP_FMT_FP32;
  char key[256], err[256], first[64] = "-";
  lowp_tc_model_t m;
  lowp_tc_replay_t rep;
  cJSON *row;
  int st;
  if (!have) {
    fprintf(r->summary, "| %s | %s | %s | (no preset; use --map) | - | - |\n", gpu, fmt, outs[oi]);
    T->skipped++;
    return;
  }
  st = lowp_tc_model_get(&m, spec, in, out, err, sizeof err);
  if (st != LOWP_OK) {
    fprintf(r->summary, "| %s | %s | %s | %s: %s | - | - |\n", gpu, fmt, outs[oi], spec, err);
    T->bad_files++;
    return;
  }
  snprintf(key, sizeof key, "%s/%s/%s", gpu, fmt, outs[oi]);
  st = lowp_tc_replay(&rep, dir, gpu, fmt, out, in_list(czero, key), &m);
  if (st != LOWP_OK) {
    fprintf(stderr, "lowp run tensor-core-models: %s: %s\n", key, lowp_status_str(st));
    fprintf(r->summary, "| %s | %s | %s | %s | unreadable (%s) | - |\n", gpu, fmt, outs[oi],
            spec, lowp_status_str(st));
    T->bad_files++;
    return;
  }
  T->files++;
  T->rows_all += rep.rows;
  T->match_all += rep.match;
  if (rep.match != rep.rows) {
    T->bad_files++;
    snprintf(first, sizeof first, "row %ld: %08x vs %08x", rep.first_bad, (unsigned)rep.got,
             (unsigned)rep.want);
  }
  fprintf(csv, "%s,%s,%s,%s,%zu,%zu,%zu,%ld,%08x,%08x\n", gpu, fmt, outs[oi], spec,
          rep.rows, rep.match, rep.rows - rep.match, rep.first_bad, (unsigned)rep.got,
          (unsigned)rep.want);
  fprintf(r->summary, "| %s | %s | %s | %s%s | %zu | %zu%s |\n", gpu, fmt, outs[oi], spec,
          in_list(czero, key) ? " (C = 0)" : "", rep.rows, rep.match,
          rep.match == rep.rows ? "" : " **MISMATCH**");
  row = cJSON_CreateArray();
  cJSON_AddItemToArray(row, cJSON_CreateString(gpu));
  cJSON_AddItemToArray(row, cJSON_CreateString(fmt));
  cJSON_AddItemToArray(row, cJSON_CreateString(outs[oi]));
  cJSON_AddItemToArray(row, cJSON_CreateString(spec));
  cJSON_AddItemToArray(row, cJSON_CreateNumber((double)rep.rows));
  cJSON_AddItemToArray(row, cJSON_CreateNumber((double)rep.match));
  cJSON_AddItemToArray(row, cJSON_CreateString(first));
  cJSON_AddItemToArray(rows, row);
}

/* every GPU/FORMAT folder of the vectors, both outputs */
static int replay_all(lowp_run_t *r, cJSON *tables, tally_t *T) {
  static const char *const outs[] = {"fp32", "fp16"};
  char pathbuf[4096];
  const char *dir = lowp_run_param_path(r, "vectors", pathbuf, sizeof pathbuf);
  const char *map = lowp_run_param(r, "map");
  char gpus[MAXN][64], fmts[MAXN][64];
  size_t ng, gi;
  cJSON *rows;
  FILE *csv;
  ng = list_dirs(gpus, dir);
  csv = fopen(lowp_run_path(r, "matches.csv"), "w");
  if (!csv) { fprintf(stderr, "lowp run tensor-core-models: cannot write matches.csv\n"); return 2; }
  fprintf(csv, "# generated by lowp run tensor-core-models, do not edit\n");
  fprintf(csv, "gpu,format,output,model,rows,match,mismatch,first_bad_row,model_bits,gpu_bits\n");
  {
    static const char *const c[] = {"GPU", "format", "output", "model", "rows", "match", "first mismatch"};
    rows = lowp_result_table(tables, "GPU-captured rows reproduced bit for bit", c, 7);
  }
  fprintf(r->summary, "Vectors: `%s`%s\n\n| GPU | format | output | model | rows | match |\n|---|---|---|---|---|---|\n",
          lowp_run_param(r, "vectors"), strcmp(lowp_run_param(r, "vectors"), params[0].def) ? "" :
          " (captured on the GPUs by F. A. Khattak and M. Mikaitis, published with their MATLAB tensor-core models: "
          "github.com/north-numerical-computing/MATLAB-tensor-core, model_validation/, BSD 2-Clause, LICENCE beside "
          "the files; the first 1000 rows of each file). Instructions captured: wmma (fp16, bf16, tf32), mma.sync "
          "m16n8k32 (fp8; H100 fp8 with fp32 output: wgmma, D = A.B + D from 0).");
  for (gi = 0; gi < ng; gi++) {
    char gdir[2048], spec[512];
    size_t nf, fi;
    int oi, have = spec_for(spec, sizeof spec, gpus[gi], map);
    snprintf(gdir, sizeof gdir, "%s/%s", dir, gpus[gi]);
    nf = list_dirs(fmts, gdir);
    for (fi = 0; fi < nf; fi++) {
      char path[4096];
      if (!lowp_tc_vectors_format(fmts[fi])) continue;
      for (oi = 0; oi < 2; oi++) {
        snprintf(path, sizeof path, "%s/%s/d_%s_%s.txt", gdir, fmts[fi], gpus[gi], outs[oi]);
        if (!file_exists(path)) continue;
        lowp_run_progress(r, "%s %s -> %s", gpus[gi], fmts[fi], outs[oi]);
        replay_file(r, csv, rows, T, dir, gpus[gi], fmts[fi], oi, spec, have);
      }
    }
  }
  if (fclose(csv)) { fprintf(stderr, "lowp run tensor-core-models: cannot write matches.csv\n"); return 2; }
  if (T->files == 0 && T->bad_files == 0 && T->skipped == 0) {
    fprintf(stderr, "lowp run tensor-core-models: no d_GPU_{fp32,fp16}.txt files under %s/GPU/FORMAT/\n", dir);
    return 2;
  }
  return 0;
}

/* The instruction whose captured rows a preset's datapath reproduces
   (tests/data/tensor-core-vectors/README.md and lib/model/tc_model.c):
   wmma for fp16/bf16/tf32; fp8 inline PTX mma.sync.aligned.m16n8k32, except
   H100 fp8 with fp32 output, captured with wgmma (D = A.B + D from D = 0). */
static const char *instruction_of(const char *preset, size_t datapath) {
  int hopper = !strcmp(preset, "h100") || !strcmp(preset, "h200");
  if (datapath < 3) return "wmma";
  if (datapath == 3 && hopper) return "wgmma (D = A.B + D, D = 0)";
  return "mma.sync m16n8k32";
}

/* the parameters behind every preset, per datapath */
static void render_presets(lowp_run_t *r) {
  static const lowp_format_t *const ins[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_TF32, &LOWP_FMT_E4M3,
                                             &LOWP_FMT_E4M3};
  static const char *const what[] = {"fp16", "bf16", "tf32", "fp8 -> fp32", "fp8 -> fp16"};
  size_t pi, di;
  cJSON *pj = cJSON_AddObjectToObject(r->results, "presets");
  cJSON *ij = cJSON_AddObjectToObject(r->results, "preset_instructions");
  fprintf(r->summary, "\n### Preset parameters (lib/model/tc_model.c)\n\nEach datapath models one instruction, the one "
          "its rows were captured with (h200 and l40s have no rows: they take h100's and ada's parameters); a GEMM "
          "on a preset chains it along K, in order (lib/model/tc_dot.c), not a cuBLAS kernel.\n\n"
          "| preset | datapath | instruction modelled | parameters |\n|---|---|---|---|\n");
  for (pi = 0; pi < lowp_tc_preset_count(); pi++) {
    const lowp_tc_preset_t *pr = lowp_tc_preset_at(pi);
    cJSON *o = cJSON_AddObjectToObject(pj, pr->name), *oi = cJSON_AddObjectToObject(ij, pr->name);
    for (di = 0; di < 5; di++) {
      lowp_tc_model_t m;
      char err[256], txt[256];
      if (lowp_tc_model_get(&m, pr->name, ins[di], di == 4 ? &LOWP_FMT_FP16 : &LOWP_FMT_FP32, err,
                            sizeof err) != LOWP_OK)
        continue;
      lowp_tc_model_str(txt, sizeof txt, &m);
      fprintf(r->summary, "| %s | %s | %s | `%s` |\n", pr->name, what[di], instruction_of(pr->name, di), txt);
      cJSON_AddStringToObject(o, what[di], txt);
      cJSON_AddStringToObject(oi, what[di], instruction_of(pr->name, di));
    }
  }
}

static int run(lowp_run_t *r) {
  tally_t T;
  cJSON *tables;
  int st;
  /* declare and measure: the captured rows replayed, bit for bit */
  memset(&T, 0, sizeof T);
  tables = cJSON_AddArrayToObject(r->results, "tables");
  st = replay_all(r, tables, &T);
  if (st) return st;
  /* judge */
  {
    char ans[512];
    snprintf(ans, sizeof ans,
             "%zu of %zu captured rows reproduced bit for bit, over %zu files; %zu file(s) with a "
             "mismatch or an error; %zu file(s) of GPUs with no model.",
             T.match_all, T.rows_all, T.files, T.bad_files, T.skipped);
    cJSON_AddStringToObject(r->results, "answer", ans);
    cJSON_AddNumberToObject(r->results, "rows", (double)T.rows_all);
    cJSON_AddNumberToObject(r->results, "rows_matching", (double)T.match_all);
    cJSON_AddNumberToObject(r->results, "files_failing", (double)T.bad_files);
    fprintf(r->summary, "\n**Answer.** %s\n", ans);
    printf("%s\n", ans);
  }
  /* render the presets; the fp8 promotion study (measured by the pipeline) */
  render_presets(r);
  st = promotion_study(r, tables);
  if (st != LOWP_OK) {
    fprintf(stderr, "lowp run tensor-core-models: promotion study: %s\n", lowp_status_str(st));
    return 2;
  }
  fprintf(r->summary, "\nFiles: matches.csv, fp8_promotion.csv.\n");
  lowp_run_progress(r, "done\n");
  return T.bad_files ? 1 : 0;
}

const lowp_experiment_t lowp_exp_tensor_core_models = {
    .name = "tensor-core-models",
    .question = "Does each CPU model of a GPU's tensor cores reproduce, bit for bit, every output the "
                "real GPU produced in the captured vectors?",
    .method = "Every GPU/FORMAT folder of the vectors directory (A, B, C bits and the GPU's D, fp32 and "
              "fp16 outputs) replayed through the preset named after the GPU (lib/model block-FMA model: "
              "exact products, alignment to the largest exponent with F fraction bits, truncation, one "
              "normalisation, output rounding); bits compared. Then fp8 e4m3 dot products of length k on "
              "the h100 model with and without promotion to fp32 every 128 products, against lib/exact. "
              "The vectors: captured on the GPUs by F. A. Khattak and M. Mikaitis and published with their "
              "MATLAB tensor-core models (github.com/north-numerical-computing/MATLAB-tensor-core, "
              "model_validation/, BSD 2-Clause); lowp keeps the first 1000 rows per file (the default --vectors). Each preset models the instruction the rows were captured with: wmma for fp16, "
              "bf16 and tf32; mma.sync (m16n8k32) for fp8 on Ada, on H100 with fp16 output and on B200; wgmma "
              "only for H100 fp8 with fp32 output. A GEMM on a preset (gemm_tc, e.g. matmul-precision's "
              "tc-h100) chains that single instruction along K, in order: it is not a model of a cuBLAS kernel.",
    .expected = "Zero mismatching rows in every file (exit 1 otherwise). Promotion every 128 cuts the "
                "fp8 accumulation error at k = 4096 by more than 10x on same-sign data.",
    .params = params,
    .run = run,
    .check = check,
};
