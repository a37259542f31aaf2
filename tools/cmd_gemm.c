/* lowp gemm, lowp dot -- measure one GEMM or dot product against its exact value */

/*
 * The subject is a registry kernel (kernels/registry.h): gemm_acc's GEMM
 * twin (products exact or rounded to --prod, every addition rounded to
 * --acc, recursive order), gemm_acc with --order, gemm_tc with --model.
 * The measurement pipeline (lib/check) generates the inputs
 * (lowp_check_inputs_generate), computes the exact reference (rounded once
 * to fp64), the errors and the bounds of the subject's method. Reported:
 * max/mean absolute, relative and ulp (of --acc) errors, the componentwise
 * backward error |C^ - C| / (|A||B|), the worst element with its values in
 * decimal and hex, and the share of the deterministic bound gamma_k and of
 * the probabilistic bound of Higham & Mary (2019) that the worst backward
 * error uses.
 *
 * Run: lowp gemm --m 512 --n 512 --k 4096 --in fp16 --acc fp32 --dist normal --seed 7
 *      lowp dot --n 100000 --in bf16 --acc bf16 --dist uniform01 --json
 *      lowp gemm --a A.npy --b B.npy --in fp16 --acc fp32 --out-exact C.npy
 */

#define _POSIX_C_SOURCE 200809L /* sysconf */

#include <cjson/cJSON.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/registry.h"
#include "check/pipeline.h"
#include "check/subject.h"
#include "check/fpx_json.h"
#include "cli.h"
#include "thp.h"
#include "fpx_cli.h"
#include "output.h"
#include "cpu/gemm_acc.h"
#include "cpu/gemm_tc.h"
#include "cpu/gemm_bs.h"
#include "format/bsformat.h"
#include "io/escape.h"
#include "format/bsquant.h"
#include "model/accum.h"
#include "io/npy.h"
#include "measure/measure.h"
#include "par.h"
#include "progress.h"
#include "rng/dist.h"
#include "status.h"

typedef struct {
  const char *cmd;        /* "gemm" or "dot" */
  long long m, n, k;      /* -1: not given */
  lowp_format_t in, acc, prod;
  const char *acc_text;   /* --acc as given (a registry kernel's acc= parameter) */
  int have_prod, json, threads;
  lowp_rounding_t rnd, prod_rnd;
  lowp_dist_t dist;
  const char *dist_text;
  uint64_t seed;
  const char *a_path, *b_path, *out_exact;
  double prob;            /* probability of the probabilistic bound */
  const char *model;      /* tensor-core model spec, or NULL */
  long promote;           /* -1: the model's own; 0: off; N: every N products */
  const char *order;      /* accumulation order spec, or NULL (recursive) */
  int have_quant;         /* --quant: block-scaled inputs */
  lowp_bsformat_t quant;
  int bs_model;           /* --model GPU,kind=..: the block-scaled MMA model */
  int fpx;                /* --fpx: trace the floating-point exceptions */
  int in_given;           /* --in was given (else generated inputs are fp16, files their dtype) */
} opts_t;

/* ------------------------------------------------------ private helpers */

static void usage(FILE *out, const char *cmd) {
  if (!strcmp(cmd, "dot"))
    fprintf(out, "usage: lowp dot --n N [options]   (a dot product of length N)\n");
  else
    fprintf(out, "usage: lowp gemm --m M --n N --k K [options]   (C = A B, A M x K, B K x N)\n");
  fprintf(out,
    "  --in F        input format; values are generated in F (default fp16) or\n"
    "                read from .npy and rounded to F (rne; default: the files'\n"
    "                dtype, <f2 fp16, <f4 fp32, <f8 fp64, the wider of the two);\n"
    "                |u1 and <u2 files hold F's bits (--in needed)\n"
    "  --acc F       accumulator (and output) format (default fp32)\n"
    "  --round MODE  rounding of each addition: rne|rna|rtz|rup|rdn|rto|sr (rne)\n"
    "  --prod F|exact  round each product to F first (default exact, as an FMA)\n"
    "  --dist D      uniform01|uniform11|normal|loguniform[:lo:hi]|cancel|spread\n"
    "                (default normal); cancel: products cancel in pairs\n"
    "  --seed S      generator seed (default 1)\n"
    "  --a FILE.npy --b FILE.npy  read the inputs (<f2 <f4 <f8, or |u1 bits of --in);\n"
    "                shapes give the sizes (%s)\n"
    "  --out-exact FILE.npy  write the exact result rounded to fp64 (<f8)\n"
    "  --prob P      probability for the probabilistic bound (default 0.99)\n"
    "  --model M     compute as a GPU's tensor cores do: v100 a100 a2 ada l40s h100\n"
    "                h200 b200, or parameters \"b=16,F=25,align=rtz,out=rtz\"\n"
    "                (--acc is the output format: fp32 or fp16)\n"
    "  --promote N|off  fp8 models: promote the partial sum to fp32 every N\n"
    "                products (DeepSeek-V3: 128); off = fast accumulation\n"
    "  --quant Q     block-scaled inputs: mxfp8_e4m3 mxfp8_e5m2 mxfp6_e3m2 mxfp6_e2m3\n"
    "                mxfp4 int8_b32 ... [:RULE] (docs/formats.md): fp32 data quantized\n"
    "                by the rule in blocks along K; with --model b200,kind=mxf8f6f4\n"
    "                (or kind=mxf4nvf4, sm120,kind=..) the block-scaled MMA model\n"
    "  --order O     accumulation order in --acc: recursive pairwise blocked:B\n"
    "                splitk:S kahan fma (products exact, or rounded with --prod=--acc)\n"
    "  --threads T   OpenMP threads (results do not depend on it)\n"
    "  --json        machine-readable output with stable keys\n"
    "  --fpx         also trace the floating-point exceptions of the method's reference\n"
    "                path (recursive order or a --model): counts per kind, the first\n"
    "                of each (C[i][j], k), inherent or spurious (README)\n",
    strcmp(cmd, "dot") ? "A: (M, K), B: (K, N)" : "both 1-D of length N");
}


/* physical memory in bytes (0 if unknown) */
static double phys_mem(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  return (pages > 0 && psz > 0) ? (double)pages * (double)psz : 0;
}

/* Refuse, before allocating anything, sizes whose arrays would not fit:
   A, B, the pipeline's copies of them, |A|, |B|, B^T (exact path scratch),
   four m x n results (computed, exact, exact in --acc, |A||B|). An upper
   bound: the exact reference holds |A|, |B| and its scratch one tile at a
   time (lib/check/op.c). */
static void check_memory(const opts_t *o, double m, double n, double k) {
  /* an MPI rank holds its rows of A and C, all of B, and rank 0 the four
     gathered m x n results besides (par/par.h) */
  size_t r0, r1;
  double rows, need, have = phys_mem();
  lowp_par_block((size_t)m, lowp_par_rank(), lowp_par_size(), &r0, &r1);
  rows = lowp_par_size() > 1 ? (double)(r1 - r0) : m;
  /* every rank generates (or reads) the whole A before it keeps its rows */
  need = 8.0 * (m * k + 2 * rows * k + 4 * k * n + 4 * rows * n);
  if (lowp_par_size() > 1 && lowp_par_rank() == 0) need += 8.0 * 4 * m * n;
  if (have > 0 && need > 0.8 * have)
    lowp_cli_die(o->cmd, "m=%.0f n=%.0f k=%.0f needs %.3g GiB of memory but this machine "
                 "has %.3g GiB; choose smaller sizes", m, n, k, need / 1073741824.0,
                 have / 1073741824.0);
  if (need > 1.8e19) lowp_cli_die(o->cmd, "sizes overflow: m=%.0f n=%.0f k=%.0f", m, n, k);
}

static const char *npy_err(int st) {
  switch (st) {
  case LOWP_EFILE: return "not a .npy file, or its header is corrupt or truncated, or "
                          "the data size does not match the shape";
  case LOWP_EUNSUPPORTED: return "unsupported .npy: lowp reads dtypes <f2 <f4 <f8 |u1 <u2, "
                                 "C order (fortran_order False), up to 8 dimensions";
  case LOWP_EIO: return "cannot open or read the file";
  case LOWP_ENOMEM: return "the array would not fit in memory";
  case LOWP_EINVAL: return "|u1 (<u2) data need an 8-bit (16-bit) --in format (e4m3, bf16, "
                           "...) and every pattern must be one of its values";
  default: return lowp_status_str(st);
  }
}

/* Read one input; returns its values rounded to --in (count of changed
   values in *changed). rows/cols: the 2-D shape, or length for 1-D. */
static double *read_input(const opts_t *o, const char *path, const char *name,
                          size_t *rows, size_t *cols, size_t *changed) {
  lowp_npy_info_t info;
  double *x;
  size_t i, limit = (size_t)(phys_mem() > 0 ? 0.2 * phys_mem() / 8 : 0);
  int st = lowp_npy_read(path, &info, &x, &o->in, limit);
  if (st) lowp_cli_die(o->cmd, "--%s %s: %s", name, path, npy_err(st));
  if (info.dtype == LOWP_NPY_I4 || info.dtype == LOWP_NPY_I8) {
    free(x);
    lowp_cli_die(o->cmd, "--%s %s: unsupported .npy dtype %s for a matrix (lowp reads <f2 <f4 "
                 "<f8, and |u1 or <u2 bits of --in)", name, path, lowp_npy_descr(info.dtype));
  }
  if (!strcmp(o->cmd, "dot")) {
    if (info.ndim != 1) {
      free(x);
      lowp_cli_die(o->cmd, "--%s %s: expected a 1-D array, got %d dimensions", name, path,
                   info.ndim);
    }
    *rows = info.shape[0];
    *cols = 1;
  } else {
    if (info.ndim != 2) {
      free(x);
      lowp_cli_die(o->cmd, "--%s %s: expected a 2-D array, got %d dimensions", name, path,
                   info.ndim);
    }
    *rows = info.shape[0];
    *cols = info.shape[1];
  }
  *changed = 0;
  for (i = 0; i < info.count; i++) {
    double y;
    (void)lowp_round_f64(&y, x[i], &o->in, NULL, LOWP_RND_NE);
    if (memcmp(&y, &x[i], sizeof y) != 0 && !(isnan(y) && isnan(x[i]))) (*changed)++;
    x[i] = y;
  }
  return x;
}


/* no --in and inputs from files: the format their data are in (<f2 fp16, <f4 fp32, <f8 fp64; the wider
   where A and B differ, so that no value is rounded), not the generated inputs' fp16 */
static void in_from_files(opts_t *o) {
  lowp_npy_info_t a, b;
  if (lowp_npy_read_info(o->a_path, &a) || lowp_npy_read_info(o->b_path, &b)) return; /* the read says why */
  /* bits (|u1, <u2): no format (--in needed, as the read says); the dtypes are ordered f2 < f4 < f8 */
  if (lowp_npy_float_format(a.dtype) && lowp_npy_float_format(b.dtype))
    o->in = lowp_cli_format(o->cmd, lowp_npy_float_format(b.dtype > a.dtype ? b.dtype : a.dtype));
}

/* a preset kind takes the operands its PTX instruction takes (lowp_gemm_bs_kind_check) */
static void bs_kind_check(const opts_t *o) {
  char err[256];
  if (lowp_gemm_bs_kind_check(o->model, &o->quant, err, sizeof err))
    lowp_cli_die(o->cmd, "--quant %s: %s", o->quant.name, err);
}

static void parse(opts_t *o, int argc, char **argv) {
  int i, st;
  o->m = o->n = o->k = -1;
  o->in = lowp_cli_format(o->cmd, "fp16");
  o->acc_text = "fp32";
  o->acc = lowp_cli_format(o->cmd, o->acc_text);
  o->have_prod = 0;
  o->json = 0;
  o->threads = 0;
  o->rnd = o->prod_rnd = LOWP_RND_NE;
  o->dist_text = "normal";
  o->seed = 1;
  o->a_path = o->b_path = o->out_exact = NULL;
  o->prob = 0.99;
  o->model = NULL;
  o->promote = -1;
  o->order = NULL;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      if (lowp_par_rank() == 0) usage(stdout, o->cmd);
      exit(0);
    }
    else if (!strcmp(a, "--m") && strcmp(o->cmd, "dot"))
      o->m = lowp_cli_int(o->cmd, "--m", lowp_cli_need_arg(o->cmd, argc, argv, &i), 1, INT32_MAX);
    else if (!strcmp(a, "--n"))
      o->n = lowp_cli_int(o->cmd, "--n", lowp_cli_need_arg(o->cmd, argc, argv, &i), 1, INT32_MAX);
    else if (!strcmp(a, "--k") && strcmp(o->cmd, "dot"))
      o->k = lowp_cli_int(o->cmd, "--k", lowp_cli_need_arg(o->cmd, argc, argv, &i), 1, INT32_MAX);
    else if (!strcmp(a, "--in")) {
      o->in = lowp_cli_format(o->cmd, lowp_cli_need_arg(o->cmd, argc, argv, &i));
      o->in_given = 1;
    }
    else if (!strcmp(a, "--acc")) {
      o->acc_text = lowp_cli_need_arg(o->cmd, argc, argv, &i);
      o->acc = lowp_cli_format(o->cmd, o->acc_text);
    }
    else if (!strcmp(a, "--round")) o->rnd = lowp_cli_rounding(o->cmd, lowp_cli_need_arg(o->cmd, argc, argv, &i));
    else if (!strcmp(a, "--prod")) {
      const char *v = lowp_cli_need_arg(o->cmd, argc, argv, &i);
      o->have_prod = strcmp(v, "exact") != 0;
      if (o->have_prod) o->prod = lowp_cli_format(o->cmd, v);
    } else if (!strcmp(a, "--dist")) o->dist_text = lowp_cli_need_arg(o->cmd, argc, argv, &i);
    else if (!strcmp(a, "--seed"))
      o->seed = (uint64_t)lowp_cli_int(o->cmd, "--seed", lowp_cli_need_arg(o->cmd, argc, argv, &i), 0, INT64_MAX);
    else if (!strcmp(a, "--a")) o->a_path = lowp_cli_need_arg(o->cmd, argc, argv, &i);
    else if (!strcmp(a, "--b")) o->b_path = lowp_cli_need_arg(o->cmd, argc, argv, &i);
    else if (!strcmp(a, "--out-exact")) o->out_exact = lowp_cli_need_arg(o->cmd, argc, argv, &i);
    else if (!strcmp(a, "--prob")) {
      o->prob = lowp_cli_number(o->cmd, "--prob", lowp_cli_need_arg(o->cmd, argc, argv, &i));
      if (!(o->prob > 0 && o->prob < 1)) lowp_cli_die(o->cmd, "--prob must lie in (0, 1)");
    } else if (!strcmp(a, "--threads"))
      o->threads = (int)lowp_cli_int(o->cmd, "--threads", lowp_cli_need_arg(o->cmd, argc, argv, &i), 1, 1024);
    else if (!strcmp(a, "--json")) o->json = 1;
    else if (!strcmp(a, "--fpx")) o->fpx = 1;
    else if (!strcmp(a, "--model")) o->model = lowp_cli_need_arg(o->cmd, argc, argv, &i);
    else if (!strcmp(a, "--order")) o->order = lowp_cli_need_arg(o->cmd, argc, argv, &i);
    else if (!strcmp(a, "--quant")) {
      char e[256];
      const char *v = lowp_cli_need_arg(o->cmd, argc, argv, &i);
      if (lowp_bsformat_parse(&o->quant, v, e, sizeof e)) lowp_cli_die(o->cmd, "--quant %s: %s", v, e);
      o->have_quant = 1;
    }
    else if (!strcmp(a, "--promote")) {
      const char *v = lowp_cli_need_arg(o->cmd, argc, argv, &i);
      o->promote = strcmp(v, "off") ? (long)lowp_cli_int(o->cmd, "--promote", v, 1, INT32_MAX) : 0;
    }
    else lowp_cli_die(o->cmd, "unknown option '%s' (see lowp %s --help)", a, o->cmd);
  }
  st = lowp_dist_parse(&o->dist, o->dist_text);
  if (st == LOWP_EINVAL)
    lowp_cli_die(o->cmd, "--dist %s: the range must be finite numbers 0 < lo <= hi "
                 "(NaN, inf, zero or negative bounds are not allowed)", o->dist_text);
  if (st)
    lowp_cli_die(o->cmd, "--dist %s: expected uniform01, uniform11, normal, "
                 "loguniform[:lo:hi], cancel or spread", o->dist_text);
  if (o->dist.kind == LOWP_DIST_CANCEL && (!o->in.has_sign || !o->in.has_zero))
    lowp_cli_die(o->cmd, "--dist cancel needs a signed input format with zero");
  o->bs_model = o->model && strstr(o->model, "kind=") != NULL;
  if (o->bs_model && !o->have_quant)
    lowp_cli_die(o->cmd, "--model %s is a block-scaled model: give the inputs' format with --quant "
                 "(mxfp8_e4m3, mxfp4, ...)", o->model);
  if (o->have_quant && o->quant.elem_int && o->bs_model)
    lowp_cli_die(o->cmd, "--quant %s: the block-scaled MMA model takes floating-point elements (MX "
                 "formats, nvfp4), not integers", o->quant.name);
  if (o->have_quant && o->bs_model) bs_kind_check(o);
  if (o->have_quant && (o->a_path || !strcmp(o->cmd, "dot") || o->dist.kind == LOWP_DIST_CANCEL ||
                        o->dist.kind == LOWP_DIST_SPREAD))
    lowp_cli_die(o->cmd, "--quant takes generated inputs of lowp gemm (not --a/--b, dot, or --dist "
                 "cancel/spread)");
  if (o->have_quant) o->in = LOWP_FMT_FP32;
  if (o->bs_model && o->promote >= 0)
    lowp_cli_die(o->cmd, "--promote is a parameter of the tensor-core models, not of %s", o->model);
  if (o->promote >= 0 && !o->model)
    lowp_cli_die(o->cmd, "--promote needs --model (it is a parameter of the tensor-core model)");
  if (o->model && (o->order || o->have_prod))
    lowp_cli_die(o->cmd, "--model fixes the products and the order: do not combine it with "
                 "--order or --prod");
  if (o->model && o->rnd != LOWP_RND_NE)
    lowp_cli_die(o->cmd, "--model fixes the rounding: do not combine it with --round");
  if ((o->a_path == NULL) != (o->b_path == NULL))
    lowp_cli_die(o->cmd, "give both --a and --b, or neither");
  if (o->a_path && !o->in_given) in_from_files(o);
  if (!strcmp(o->cmd, "dot")) { o->m = 1; o->k = o->n; if (o->n >= 0 || o->a_path) o->n = 1; }
}

static int same_format(const lowp_format_t *x, const lowp_format_t *y) {
  return x->precision == y->precision && x->emin == y->emin && x->emax == y->emax &&
         x->subnormals == y->subnormals && x->inf == y->inf && x->nan == y->nan &&
         x->has_sign == y->has_sign && x->has_zero == y->has_zero;
}

static void add_num(cJSON *obj, const char *key, double v) {
  if (isfinite(v)) cJSON_AddNumberToObject(obj, key, v);
  else cJSON_AddStringToObject(obj, key, isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
}

static void add_val(cJSON *obj, const char *key, double v) {
  char buf[64], k2[64];
  uint64_t u;
  add_num(obj, key, v);
  memcpy(&u, &v, sizeof u);
  snprintf(buf, sizeof buf, "%a", v);
  snprintf(k2, sizeof k2, "%s_hex", key);
  cJSON_AddStringToObject(obj, k2, buf);
  snprintf(buf, sizeof buf, "%016llx", (unsigned long long)u);
  snprintf(k2, sizeof k2, "%s_bits", key);
  cJSON_AddStringToObject(obj, k2, buf);
}

/* ------------------------------------------------------------ the subject */

/* The computation lowp gemm/dot measures is an entry of the kernel registry
   (kernels/registry.h), a pipeline subject that declares its method (so the
   pipeline picks the bound): --model: gemm_tc (model=, promote=); --order:
   gemm_acc (acc=, order=, round=, prod=acc); otherwise gemm_acc's GEMM twin
   (recursive, products exact or rounded to --prod nearest-even, every
   rounding mode incl. sr, which the kernel's parameters do not take). */
typedef struct {
  const lowp_kernel_t *k;
  lowp_gemm_acc_cfg_t cfg;
} twin_ctx_t;

static int twin_run(const lowp_subject_t *s, double *const *out, const double *const *in,
                    const lowp_problem_t *p, char *err, size_t errlen) {
  const twin_ctx_t *x = s->ctx;
  (void)err;
  (void)errlen;
  return x->k->gemm(out[0], in[0], in[1], p->dims.m, p->dims.n, p->dims.k, &x->cfg);
}

/* a format's text as a kernel parameter (its commas as ';', kernels/registry_subject.c) */
static void param_fmt(char *dst, size_t len, const char *text) {
  size_t i;
  for (i = 0; text[i] && i + 1 < len; i++) dst[i] = text[i] == ',' ? ';' : text[i];
  dst[i] = '\0';
}

/* The block-scaled MMA model as a subject. generate_inputs keeps the
   quantization itself (elements, scales, per-tensor scales: the pipeline's
   lowp_check_bs_quantize of the same data), so the model multiplies the
   very pairs the inputs were dequantized from (bs_run checks q s t = x).
   A per-tensor scale (nvfp4) is applied as cuBLASLt applies it, in the
   epilogue: alpha = fl32(tA tB), D = fl32(alpha acc), acc the model's fp32
   result on elements and block scales (lowp's choice, documented in
   docs/formats.md: the tensor-core instruction takes block scales only). */
static struct {
  lowp_gemm_bs_cfg_t cfg;
  double *qa, *sa, *qbt, *sb, ta, tb; /* A's rows r0.. of the run, B transposed (n x k) */
} bs_pre;

static void bs_pre_free(void) {
  free(bs_pre.qa), free(bs_pre.sa), free(bs_pre.qbt), free(bs_pre.sb);
  bs_pre.qa = bs_pre.sa = bs_pre.qbt = bs_pre.sb = NULL;
}

/* the quantization of the full problem's data (before the rows are split
   among ranks); A's rows r0..r1 kept */
static int bs_pre_fill(const lowp_check_inputs_t *in, const lowp_problem_t *full, size_t r0, size_t r1) {
  size_t m = full->dims.m, n = full->dims.n, k = full->dims.k, nb = lowp_bsformat_blocks(&full->bin[0], k);
  int st;
  bs_pre_free();
  bs_pre.qa = malloc(m * k * sizeof(double) + 1), bs_pre.sa = malloc(m * nb * sizeof(double) + 1);
  bs_pre.qbt = malloc(n * k * sizeof(double) + 1), bs_pre.sb = malloc(n * nb * sizeof(double) + 1);
  if (!bs_pre.qa || !bs_pre.sa || !bs_pre.qbt || !bs_pre.sb) return LOWP_ENOMEM;
  st = lowp_check_bs_quantize(bs_pre.qa, bs_pre.sa, &bs_pre.ta, in->data[0], m * k, full, 0);
  if (!st) st = lowp_check_bs_quantize(bs_pre.qbt, bs_pre.sb, &bs_pre.tb, in->data[1], k * n, full, 1);
  if (!st && r0) {
    memmove(bs_pre.qa, bs_pre.qa + r0 * k, (r1 - r0) * k * sizeof(double));
    memmove(bs_pre.sa, bs_pre.sa + r0 * nb, (r1 - r0) * nb * sizeof(double));
  }
  return st;
}

static int bs_run(const lowp_subject_t *s, double *const *out, const double *const *in, const lowp_problem_t *p,
                  char *err, size_t errlen) {
  const lowp_gemm_bs_cfg_t *cfg = s->ctx;
  size_t m = p->dims.m, n = p->dims.n, k = p->dims.k, nb = lowp_bsformat_blocks(&cfg->fa, k), i, j;
  double *qb = malloc(n * k * sizeof *qb + 1);
  float alpha = (float)bs_pre.ta * (float)bs_pre.tb;
  int st = qb ? LOWP_OK : LOWP_ENOMEM;
  for (i = 0; i < k && !st; i++)
    for (j = 0; j < n; j++) qb[i * n + j] = bs_pre.qbt[j * k + i];
  /* the pairs are those the inputs came from */
  for (i = 0; i < m * k && !st; i++)
    if (!(bs_pre.qa[i] * bs_pre.sa[i / k * nb + i % k / (size_t)cfg->fa.block] * bs_pre.ta == in[0][i]) &&
        !isnan(in[0][i]))
      st = lowp_errf(err, errlen, LOWP_EINVAL, "block-scaled model: A[%zu] is not its elements' value", i);
  for (i = 0; i < m * n && !st; i++) out[0][i] = 0.0;
  if (!st) st = lowp_gemm_bs_fast(out[0], bs_pre.qa, bs_pre.sa, qb, bs_pre.sb, m, n, k, cfg);
  if (!st && alpha != 1.0f)
    for (i = 0; i < m * n; i++) out[0][i] = (double)(alpha * (float)out[0][i]);
  free(qb);
  return st;
}

/* the registry subject of the options, bound to problem p */
static void open_subject(lowp_subject_t *s, twin_ctx_t *tw, const opts_t *o,
                         const lowp_problem_t *p) {
  char prm[600], acc[200], err[600];
  int st;
  if (o->bs_model) {
    static lowp_gemm_bs_cfg_t cfg; /* lives as long as the subject: one per run */
    char ms[160];
    if (lowp_gemm_bs_config(&cfg, o->model, "mxfp8_e4m3", "mxfp8_e4m3", err, sizeof err))
      lowp_cli_die(o->cmd, "--model %s: %s", o->model, err);
    cfg.fa = cfg.fb = o->quant;
    if (cfg.model.p.group && cfg.fa.block % cfg.model.p.group)
      lowp_cli_die(o->cmd, "--quant %s: blocks of %d do not hold whole groups of %d", o->quant.name,
                   cfg.fa.block, cfg.model.p.group);
    memset(s, 0, sizeof *s);
    lowp_bsmma_str(ms, sizeof ms, &cfg.model.p);
    snprintf(s->name, sizeof s->name, "block-scaled model %s (%s)", o->model, ms);
    s->kind = "kernel";
    s->run = bs_run;
    s->ctx = &cfg;
    (void)tw, (void)p;
    return;
  }
  if (o->model || o->order) {
    if (o->model && o->promote == 0)
      snprintf(prm, sizeof prm, "model=%s,promote=off", o->model);
    else if (o->model && o->promote > 0)
      snprintf(prm, sizeof prm, "model=%s,promote=%ld", o->model, o->promote);
    else if (o->model)
      snprintf(prm, sizeof prm, "model=%s", o->model);
    else {
      param_fmt(acc, sizeof acc, o->acc_text);
      snprintf(prm, sizeof prm, "acc=%s,order=%s,round=%s%s", acc, o->order, lowp_rounding_name(o->rnd),
               o->have_prod ? ",prod=acc" : "");
    }
    st = lowp_kernel_subject_open(s, o->model ? "gemm_tc" : "gemm_acc", prm, err, sizeof err);
    if (!st) st = lowp_kernel_subject_bind(s, p, err, sizeof err);
    if (st) lowp_cli_die(o->cmd, "%s", err);
    return;
  }
  memset(tw, 0, sizeof *tw);
  tw->k = lowp_kernel_find("gemm_acc");
  tw->cfg.prod = o->have_prod ? &o->prod : NULL;
  tw->cfg.prod_rnd = o->prod_rnd;
  tw->cfg.acc = &o->acc;
  tw->cfg.acc_rnd = o->rnd;
  tw->cfg.order = LOWP_ORDER_RECURSIVE;
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "kernel gemm_acc (its GEMM twin)");
  s->kind = "kernel";
  s->run = twin_run;
  s->ctx = tw;
  s->has_accum = 1;
  s->accum.order = LOWP_ACC_RECURSIVE;
  s->accum.acc = o->acc;
  s->accum.rnd = o->rnd;
  s->accum.fma = 1;
  s->prod = o->have_prod ? &o->prod : NULL;
}


/* ------------------------------------------------------------ MPI ranks */

/* Collective (np > 1): gather every rank's rows of the outputs (computed,
   exact in fp64 and in --acc, |A||B|) into one result of m x n on rank 0
   and measure it there whole (lowp_check_finish): the numbers, the worst
   element and the written exact C are those of one process. Times are the
   slowest rank's. The local result r is replaced on rank 0. */
static void gather_result(const char *cmd, lowp_check_result_t *r, const lowp_subject_t *s,
                          const lowp_check_opts_t *co, size_t m, size_t n) {
  lowp_check_result_t w;
  lowp_check_output_t *o = &w.out[0];
  double ts = lowp_par_max(r->time_subject_s), te = lowp_par_max(r->time_exact_s);
  int me = lowp_par_rank(), bad = 0;
  memset(&w, 0, sizeof w);
  if (me == 0) {
    w.problem = r->problem;
    w.problem.dims.m = m;
    snprintf(w.subject, sizeof w.subject, "%s", r->subject);
    w.n_out = 1;
    o->name = r->out[0].name;
    o->count = m * n;
    o->got = malloc(m * n * sizeof(double));
    o->exact = malloc(m * n * sizeof(double));
    o->exact_out = malloc(m * n * sizeof(double));
    o->absab = malloc(m * n * sizeof(double));
    if (r->out[0].exact_lo) o->exact_lo = malloc(m * n * sizeof(double)); /* an fp64 C (pipeline.h) */
    if (!o->got || !o->exact || !o->exact_out || !o->absab || (r->out[0].exact_lo && !o->exact_lo)) {
      lowp_check_result_free(&w);
      lowp_cli_die(cmd, "rank 0: out of memory to gather C (m=%zu n=%zu)", m, n);
    }
  }
  lowp_par_sync(0);
  bad |= lowp_par_gather_rows(o->got, r->out[0].got, m, n);
  bad |= lowp_par_gather_rows(o->exact, r->out[0].exact, m, n);
  bad |= lowp_par_gather_rows(o->exact_out, r->out[0].exact_out, m, n);
  bad |= lowp_par_gather_rows(o->absab, r->out[0].absab, m, n);
  if (r->out[0].exact_lo) bad |= lowp_par_gather_rows(o->exact_lo, r->out[0].exact_lo, m, n);
  if (bad) lowp_cli_die(cmd, "rank %d: gathering the blocks of C failed (MPI error)", me);
  lowp_par_sync(0);
  if (me != 0) return;
  w.time_subject_s = ts;
  w.time_exact_s = te;
  if (lowp_check_finish(&w, s, co) != LOWP_OK) {
    lowp_check_result_free(&w);
    lowp_cli_die(cmd, "measuring the gathered result failed");
  }
  lowp_check_result_free(r);
  *r = w;
}

/* ---------------------------------------------------- declare: the problem */

/* Check the method's options before any work; subject: its description. */
static void describe(opts_t *o, char *subject, size_t len) {
  char err[256];
  if (lowp_accum_format_check(&o->acc, err, sizeof err) != 0)
    lowp_cli_die(o->cmd, "--acc %s: %s", o->acc.name, err);
  if (o->have_prod && lowp_accum_format_check(&o->prod, err, sizeof err) != 0)
    lowp_cli_die(o->cmd, "--prod %s: %s", o->prod.name, err);
  if (o->bs_model) {
    char ms[256];
    lowp_bsmma_model_t bm;
    if (lowp_bsmma_get(&bm, o->model, err, sizeof err)) lowp_cli_die(o->cmd, "--model %s: %s", o->model, err);
    lowp_bsmma_str(ms, sizeof ms, &bm.p);
    snprintf(subject, len, "block-scaled model %s (%s; %s), %s inputs by rule %s, output fp32", o->model, ms,
             bm.instr, o->quant.name, lowp_bsrule_name(o->quant.rule));
    if (strcmp(o->acc.name, "fp32"))
      lowp_cli_die(o->cmd, "--model %s writes fp32: --acc must be fp32", o->model);
  } else if (o->model) {
    char ms[256];
    lowp_gemm_tc_cfg_t tc;
    if (lowp_gemm_tc_config(&tc, o->model, o->promote, &o->in, &o->acc, err, sizeof err))
      lowp_cli_die(o->cmd, "--model %s: %s", o->model, err);
    lowp_tc_model_str(ms, sizeof ms, &tc.model);
    snprintf(subject, len, "tensor-core model %s (%s), output %s", o->model, ms, o->acc.name);
  } else if (o->order) {
    char as[160];
    lowp_accum_t acm;
    if (lowp_accum_parse(&acm, o->order, err, sizeof err) != 0)
      lowp_cli_die(o->cmd, "--order %s: %s", o->order, err);
    if (strchr(o->order, ','))
      lowp_cli_die(o->cmd, "--order %s: give only the order (ORDER or ORDER:N); the format, "
                   "rounding and products come from --acc, --round and --prod", o->order);
    if (o->have_prod && !same_format(&o->prod, &o->acc))
      lowp_cli_die(o->cmd, "with --order, products are exact or rounded to --acc (%s); "
                   "--prod %s is neither", o->acc.name, o->prod.name);
    acm.acc = o->acc;
    acm.rnd = o->rnd;
    acm.fma = !o->have_prod; /* products exact (an FMA chain), or rounded to acc */
    if (lowp_accum_validate(&acm, err, sizeof err) != 0)
      lowp_cli_die(o->cmd, "--order %s with --acc %s --round %s: %s", o->order, o->acc.name,
                   lowp_rounding_name(o->rnd), err);
    lowp_accum_str(as, sizeof as, &acm);
    snprintf(subject, len, "order %s", as);
  } else {
    snprintf(subject, len, "products %s, accumulator %s (%s), recursive order",
             o->have_prod ? o->prod.name : "exact", o->acc.name, lowp_rounding_name(o->rnd));
  }
}

/* The problem: a GEMM of `rows` rows of A (m x k) times B (k x n); a dot
   product is the 1 x 1 GEMM of its vectors. */
static lowp_problem_t problem_of(const opts_t *o, size_t rows, size_t n, size_t k) {
  lowp_problem_t p;
  memset(&p, 0, sizeof p);
  p.op = lowp_op_get(LOWP_OP_GEMM);
  p.dims.batch = 1;
  p.dims.m = rows;
  p.dims.n = n;
  p.dims.k = k;
  p.in[0] = p.in[1] = o->in;
  p.has_bin[0] = p.has_bin[1] = o->have_quant;
  p.bin[0] = p.bin[1] = o->quant;
  p.out = o->acc;
  return p;
}

/* inputs read from .npy (rounded to --in): sizes from the shapes; every
   rank reads them whole and keeps its rows of A */
static void read_inputs(lowp_check_inputs_t *in, const opts_t *o, size_t *m, size_t *n,
                        size_t *k, size_t *r0, size_t *r1, size_t *changed) {
  size_t ar, ac, br, bc, ca, cb;
  int np = lowp_par_size();
  double *a = read_input(o, o->a_path, "a", &ar, &ac, &ca), *b = read_input(o, o->b_path, "b", &br, &bc, &cb);
  const double *xs[2];
  lowp_problem_t p;
  if (!strcmp(o->cmd, "dot")) {
    if (ar != br) {
      free(a); free(b);
      lowp_cli_die(o->cmd, "mismatched shapes: --a has length %zu, --b has length %zu", ar, br);
    }
    *m = 1; *n = 1; *k = ar;
  } else {
    if (ac != br) {
      free(a); free(b);
      lowp_cli_die(o->cmd, "mismatched shapes: A is (%zu, %zu) and B is (%zu, %zu): "
                   "A's columns must equal B's rows", ar, ac, br, bc);
    }
    *m = ar; *k = ac; *n = bc;
  }
  if ((o->m >= 0 && (size_t)o->m != *m) || (o->k >= 0 && (size_t)o->k != *k) ||
      (o->n >= 0 && (size_t)o->n != *n && strcmp(o->cmd, "dot"))) {
    free(a); free(b);
    lowp_cli_die(o->cmd, "the sizes given (--m/--n/--k) disagree with the .npy shapes "
                 "(m=%zu n=%zu k=%zu)", *m, *n, *k);
  }
  if (*m == 0 || *n == 0 || *k == 0) {
    free(a); free(b);
    lowp_cli_die(o->cmd, "empty input arrays (m=%zu n=%zu k=%zu)", *m, *n, *k);
  }
  check_memory(o, (double)*m, (double)*n, (double)*k);
  *changed = ca + cb;
  if (np > (long long)*m)
    lowp_cli_die(o->cmd, "%d MPI ranks for %zu rows of C: each rank computes a block of rows, "
                 "so run at most %zu ranks", np, *m, *m);
  lowp_par_block(*m, lowp_par_rank(), np, r0, r1);
  p = problem_of(o, *r1 - *r0, *n, *k);
  xs[0] = &a[*r0 * *k];
  xs[1] = b;
  if (lowp_check_inputs_copy(in, &p, xs, NULL)) lowp_cli_die(o->cmd, "out of memory for the inputs");
  free(a);
  free(b);
}

/* Generated inputs: the pipeline's generator (lowp_check_inputs_generate:
   element i of input j drawn from (seed, stream j + 1, i) and rounded to
   --in; --dist cancel builds A and B together). Every rank generates the
   whole problem and keeps its rows of A. The unrounded draws are dropped:
   lowp gemm reports no input/computation split, so the pipeline computes
   no reference of them. */
static void generate_inputs(lowp_check_inputs_t *in, const opts_t *o, size_t *m, size_t *n,
                            size_t *k, size_t *r0, size_t *r1) {
  lowp_problem_t full;
  int np = lowp_par_size(), st, j;
  if (o->m < 0 || o->n < 0 || o->k < 0) {
    if (!strcmp(o->cmd, "dot")) lowp_cli_die(o->cmd, "give --n (the length), or --a and --b");
    lowp_cli_die(o->cmd, "give --m, --n and --k, or --a and --b");
  }
  *m = (size_t)o->m; *n = (size_t)o->n; *k = (size_t)o->k;
  check_memory(o, (double)*m, (double)*n, (double)*k);
  if (np > (long long)*m)
    lowp_cli_die(o->cmd, "%d MPI ranks for %zu rows of C: each rank computes a block of rows, "
                 "so run at most %zu ranks", np, *m, *m);
  lowp_par_block(*m, lowp_par_rank(), np, r0, r1);
  full = problem_of(o, *m, *n, *k);
  st = lowp_check_inputs_generate(in, &full, &o->dist, o->seed);
  if (st) lowp_cli_die(o->cmd, "input generation failed: %s", lowp_status_str(st));
  if (o->bs_model && (st = bs_pre_fill(in, &full, *r0, *r1)))
    lowp_cli_die(o->cmd, "quantizing the inputs: %s", lowp_status_str(st));
  for (j = 0; j < 2; j++) {
    free(in->data[j]);
    in->data[j] = NULL;
  }
  if (*r0) memmove(in->x[0], &in->x[0][*r0 * *k], (*r1 - *r0) * *k * sizeof(double));
  in->count[0] = (*r1 - *r0) * *k;
}

/* -------------------------------------------------------- measure: the pipeline */

/* subject -> exact reference and |A||B| -> errors -> the bounds of the
   subject's declared method (lib/check/pipeline.h); with MPI ranks the
   blocks of rows are gathered on rank 0 and measured whole there */
static void measure(lowp_check_result_t *res, const opts_t *o, lowp_check_inputs_t *in,
                    size_t m, size_t n, size_t k, size_t rows) {
  lowp_problem_t p = problem_of(o, rows, n, k);
  lowp_subject_t subj;
  twin_ctx_t tw;
  lowp_check_opts_t co;
  char perr[600];
  int st;
  memset(&co, 0, sizeof co);
  open_subject(&subj, &tw, o, &p);
  co.prob = o->prob;
  /* a large product's exact reference takes a while: show it (terminal only) */
  co.progress.fn = lowp_cli_progress;
  co.progress.ctx = (void *)"exact reference";
  st = lowp_check_measure(res, &p, &subj, in, &co, perr, sizeof perr);
  lowp_cli_progress_end();
  lowp_check_inputs_free(in);
  if (st) lowp_cli_die(o->cmd, "%s", perr[0] ? perr : lowp_status_str(st));
  lowp_par_sync(0);
  if (lowp_par_size() > 1) gather_result(o->cmd, res, &subj, &co, m, n);
  lowp_subject_close(&subj);
  bs_pre_free();
}

/* ----------------------------------------------------------------- render */

/* what the writers read from the result */
typedef struct {
  const opts_t *o;
  const char *subject;
  size_t m, n, k, changed, worst;
  const lowp_check_result_t *res;
  const lowp_check_bound_t *det; /* the deterministic bound of the method */
  double bound_det, u_acc;
  const lowp_fpx_trace_t *fpx; /* --fpx: the trace, or NULL */
} view_t;

static void print_json(const view_t *v) {
  const opts_t *o = v->o;
  const lowp_errors_t *e = &v->res->out[0].err;
  const double *c = v->res->out[0].got, *cx = v->res->out[0].exact;
  cJSON *r = cJSON_CreateObject(), *err = cJSON_CreateObject(), *bd = cJSON_CreateObject(),
        *w = cJSON_CreateObject();
  char *txt;
  cJSON_AddStringToObject(r, "command", o->cmd);
  cJSON_AddNumberToObject(r, "m", (double)v->m);
  cJSON_AddNumberToObject(r, "n", (double)v->n);
  cJSON_AddNumberToObject(r, "k", (double)v->k);
  cJSON_AddStringToObject(r, "in", o->have_quant ? o->quant.name : o->in.name);
  cJSON_AddStringToObject(r, "acc", o->acc.name);
  cJSON_AddStringToObject(r, "prod", o->have_prod ? o->prod.name : "exact");
  cJSON_AddStringToObject(r, "round", lowp_rounding_name(o->rnd));
  cJSON_AddStringToObject(r, "order", o->model ? "model" : o->order ? o->order : "recursive");
  cJSON_AddStringToObject(r, "subject", v->subject);
  if (o->model) cJSON_AddStringToObject(r, "model", o->model);
  cJSON_AddStringToObject(r, "inputs", o->a_path ? "npy" : o->dist_text);
  cJSON_AddNumberToObject(r, "seed", (double)o->seed);
  cJSON_AddNumberToObject(r, "inputs_rounded_to_in", (double)v->changed);
  add_num(err, "max_abs", e->max_abs);
  add_num(err, "mean_abs", e->mean_abs);
  add_num(err, "max_rel", e->max_rel);
  add_num(err, "mean_rel", e->mean_rel);
  add_num(err, "max_ulp", e->max_ulp);
  add_num(err, "mean_ulp", e->mean_ulp);
  add_num(err, "max_backward", e->max_bwd);
  cJSON_AddNumberToObject(err, "n_exact", (double)e->n_exact);
  cJSON_AddNumberToObject(err, "n_special", (double)e->n_special);
  cJSON_AddItemToObject(r, "errors", err);
  if (v->worst != (size_t)-1) {
    cJSON_AddNumberToObject(w, "i", (double)(v->worst / v->n));
    cJSON_AddNumberToObject(w, "j", (double)(v->worst % v->n));
    add_val(w, "computed", c[v->worst]);
    add_val(w, "exact", cx[v->worst]);
  }
  cJSON_AddItemToObject(r, "worst", w);
  add_num(bd, "u", v->u_acc);
  /* "gamma_k": the deterministic bound of the method (the order's, or the
     tensor-core model's); a vacuous bound is "inf" and has no share */
  cJSON_AddStringToObject(bd, "deterministic", v->det->have ? v->det->name : "none");
  add_num(bd, "gamma_k", v->bound_det);
  cJSON_AddBoolToObject(bd, "vacuous", isinf(v->bound_det));
  if (!isinf(v->bound_det)) add_num(bd, "gamma_k_used", e->max_bwd / v->bound_det);
  if (v->res->prob.have) {
    add_num(bd, "prob_lambda", v->res->prob.lambda);
    add_num(bd, "prob_probability", v->res->prob.probability);
    add_num(bd, "prob_bound", v->res->prob.value);
    if (!isinf(v->res->prob.value)) add_num(bd, "prob_used", e->max_bwd / v->res->prob.value);
  }
  cJSON_AddItemToObject(r, "bounds", bd);
  add_num(r, "time_subject_s", v->res->time_subject_s);
  add_num(r, "time_exact_s", v->res->time_exact_s);
  if (o->out_exact) cJSON_AddStringToObject(r, "out_exact", o->out_exact);
  if (v->fpx) cJSON_AddItemToObject(r, "fpx", lowp_fpx_trace_json(v->fpx));
  txt = cJSON_Print(r);
  printf("%s\n", txt);
  free(txt);
  cJSON_Delete(r);
}

static void print_text(const view_t *v) {
  const opts_t *o = v->o;
  const lowp_errors_t *e = &v->res->out[0].err;
  const lowp_check_result_t *res = v->res;
  const double *c = res->out[0].got, *cx = res->out[0].exact;
  size_t worst = v->worst, n = v->n;
  printf("lowp %s: m=%zu n=%zu k=%zu, inputs %s (%s, seed %llu), %s\n", o->cmd, v->m, n, v->k,
         o->have_quant ? o->quant.name : o->in.name, o->a_path ? "from .npy" : o->dist_text, (unsigned long long)o->seed, v->subject);
  if (v->changed)
    printf("  note: %zu input values were not values of %s and were rounded to it (rne)\n",
           v->changed, o->in.name);
  printf("  time: subject %.3f s, exact reference %.3f s\n", res->time_subject_s, res->time_exact_s);
  printf("  %-18s %12s %12s\n", "error", "max", "mean");
  printf("  %-18s %12.4g %12.4g\n", "absolute", e->max_abs, e->mean_abs);
  printf("  %-18s %12.4g %12.4g\n", "relative", e->max_rel, e->mean_rel);
  printf("  ulp of %-11s %12.4g %12.4g\n", o->acc.name, e->max_ulp, e->mean_ulp);
  printf("  %-18s %12.4g\n", "backward |dC|/|A||B|", e->max_bwd);
  printf("  elements exact: %zu of %zu; NaN/inf disagreements: %zu\n", e->n_exact, v->m * n,
         e->n_special);
  if (worst != (size_t)-1)
    printf("  worst element C[%zu][%zu] (max abs error): computed %.17g (%a), "
           "exact %.17g (%a)\n", worst / n, worst % n, c[worst], c[worst], cx[worst], cx[worst]);
  if (!v->det->have)
    printf("  deterministic bound: none known for this method\n");
  else if (isinf(v->bound_det))
    printf("  bound %s, k=%zu: vacuous (no bound at this length and precision)\n",
           v->det->name, v->k);
  else
    printf("  bound %s, k=%zu: %.4g; worst backward error uses %.2f%% of it\n", v->det->name,
           v->k, v->bound_det, 100 * e->max_bwd / v->bound_det);
  if (res->prob.have && isinf(res->prob.value))
    printf("  probabilistic bound (Higham & Mary 2019): vacuous\n");
  else if (res->prob.have)
    printf("  probabilistic bound (Higham & Mary 2019), %s per element: %.4g; uses %.2f%%\n",
           res->prob.name, res->prob.value, 100 * e->max_bwd / res->prob.value);
  else if (!o->model)
    printf("  probabilistic bound: none for this method (it needs round to nearest and a "
           "non-compensated order)\n");
  if (v->fpx) lowp_fpx_cli_print(stdout, v->fpx, "C");
}

/* --fpx: the exceptions of the method's reference path on the same inputs */
static void trace_fpx(lowp_fpx_trace_t *t, const opts_t *o, const lowp_check_inputs_t *in,
                      size_t m, size_t n, size_t k) {
  lowp_fpx_gemm_spec_t sp;
  char err[300] = "";
  if (o->order && strcmp(o->order, "recursive"))
    lowp_cli_die(o->cmd, "--fpx traces the recursive order and the tensor-core models, "
                 "not --order %s", o->order);
  if (lowp_par_size() > 1) lowp_cli_die(o->cmd, "--fpx runs in one process (no MPI ranks)");
  memset(&sp, 0, sizeof sp);
  sp.model = o->model;
  sp.promote = o->promote;
  sp.in = &o->in;
  sp.acc = &o->acc; /* the model's output format */
  sp.prod = o->have_prod ? &o->prod : NULL;
  sp.rnd = o->rnd;
  sp.prod_rnd = o->prod_rnd;
  if (lowp_fpx_cli_gemm(t, in->x[0], in->x[1], m, n, k, &sp, err, sizeof err))
    lowp_cli_die(o->cmd, "--fpx: %s", err);
}

/* --out-exact: the exact result rounded to fp64 */
static void write_exact(const opts_t *o, lowp_check_result_t *res, size_t m, size_t n) {
  size_t shape[2] = {m, n};
  int nd = 2, st;
  if (!strcmp(o->cmd, "dot")) { shape[0] = 1; nd = 1; }
  st = lowp_npy_write(o->out_exact, LOWP_NPY_F8, shape, nd, res->out[0].exact, NULL);
  if (st) {
    lowp_check_result_free(res);
    lowp_cli_die(o->cmd, "--out-exact %s: %s (nothing written)", o->out_exact, lowp_status_str(st));
  }
}

/* --out-exact: a regular file or a new one, writable now (tools/output.h),
   and neither --a nor --b (issue 19: it turned the fp16 input into C) */
static void check_outputs(const char *cmd, const opts_t *o) {
  lowp_outputs_t outs;
  memset(&outs, 0, sizeof outs);
  lowp_outputs_add(&outs, cmd, "--out-exact", o->out_exact);
  lowp_outputs_input(&outs, cmd, "--a", o->a_path);
  lowp_outputs_input(&outs, cmd, "--b", o->b_path);
  lowp_output_check_file(cmd, "--out-exact", o->out_exact); /* makes a temporary */
}

/* ----------------------------------------------------------------- main */

static int run(const char *cmd, int argc, char **argv) {
  opts_t o;
  view_t v;
  size_t m, n, k, r0 = 0, r1 = 0, changed = 0; /* this rank's rows of C: [r0, r1) */
  char subject[320];
  lowp_check_inputs_t in;
  lowp_check_result_t res;
  lowp_fpx_trace_t fpx;

  /* declare: the options, the method, the inputs */
  memset(&o, 0, sizeof o);
  o.cmd = cmd;
  parse(&o, argc, argv);
  describe(&o, subject, sizeof subject);
  if (o.threads) omp_set_num_threads(o.threads);
  /* a bad --out-exact (a link, device, folder, unwritable folder) fails
     now, not after the work (tools/output.h) */
  if (o.out_exact && lowp_par_rank() == 0) check_outputs(cmd, &o);
  lowp_thp_reexec(); /* the command line holds: its arrays in huge pages (tools/thp.h) */
  if (o.a_path) read_inputs(&in, &o, &m, &n, &k, &r0, &r1, &changed);
  else generate_inputs(&in, &o, &m, &n, &k, &r0, &r1);
  /* every rank has its inputs, or the job stops here (par/par.h) */
  lowp_par_sync(0);

  /* measure */
  if (o.fpx) trace_fpx(&fpx, &o, &in, r1 - r0, n, k);
  measure(&res, &o, &in, m, n, k, r1 - r0);
  if (lowp_par_rank() != 0) { /* rank 0 writes and prints; wait for its verdict */
    lowp_check_result_free(&res);
    lowp_par_sync(0);
    return LOWP_EXIT_OK;
  }
  /* render: the bound of the method (gamma-type for an accumulation order,
     with its probabilistic form; the block-FMA bound for a tensor-core model) */
  memset(&v, 0, sizeof v);
  v.o = &o;
  v.subject = subject;
  v.m = m; v.n = n; v.k = k;
  v.changed = changed;
  v.res = &res;
  v.fpx = o.fpx ? &fpx : NULL;
  v.worst = res.out[0].err.argmax_abs;
  v.det = o.model ? &res.model : &res.gamma;
  v.bound_det = v.det->have ? v.det->value : INFINITY;
  /* u of the accumulation as the bound used it (2u for directed modes); a
     tensor-core model (which fixes rne at the command) reports --acc's u */
  v.u_acc = res.gamma.have ? res.gamma.u : lowp_format_u(&o.acc);
  if (o.json) print_json(&v);
  else print_text(&v);
  /* the file last: what was printed must have reached stdout first, or
     nothing is published (a full disk, /dev/full, a closed pipe) */
  if (o.out_exact) {
    lowp_stdout_before_publish(cmd, o.out_exact);
    write_exact(&o, &res, m, n);
    if (!o.json) printf("  exact result (fp64) written to %s\n", o.out_exact);
  }
  lowp_par_sync(0); /* the file is in place: the other ranks may leave */
  lowp_check_result_free(&res);
  return LOWP_EXIT_OK;
}

/* ----------------------------------------------------------- public API */

int lowp_cmd_gemm(int argc, char **argv) { return run("gemm", argc, argv); }

int lowp_cmd_dot(int argc, char **argv) { return run("dot", argc, argv); }
