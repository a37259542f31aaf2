/* lowp gemm, lowp dot -- measure one GEMM or dot product against its exact value */

/*
 * The subject is the CPU twin kernels/cpu/gemm_acc.c: products exact (or
 * rounded to --prod), every addition rounded to --acc, recursive order. The
 * reference is lowp_exact_gemm (exact, rounded once to fp64). Reported:
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

#include "check/pipeline.h"
#include "cli.h"
#include "output.h"
#include "cpu/gemm_acc.h"
#include "cpu/gemm_tc.h"
#include "model/accum.h"
#include "exact/exact.h"
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
} opts_t;

/* ------------------------------------------------------ private helpers */

static void usage(FILE *out, const char *cmd) {
  if (!strcmp(cmd, "dot"))
    fprintf(out, "usage: lowp dot --n N [options]   (a dot product of length N)\n");
  else
    fprintf(out, "usage: lowp gemm --m M --n N --k K [options]   (C = A B, A M x K, B K x N)\n");
  fprintf(out,
    "  --in F        input format (default fp16); values are generated in F or\n"
    "                read from .npy and rounded to F (rne); u1 files hold F's bits\n"
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
    "  --order O     accumulation order in --acc: recursive pairwise blocked:B\n"
    "                splitk:S kahan fma (products exact, or rounded with --prod=--acc)\n"
    "  --threads T   OpenMP threads (results do not depend on it)\n"
    "  --json        machine-readable output with stable keys\n",
    strcmp(cmd, "dot") ? "A: (M, K), B: (K, N)" : "both 1-D of length N");
}

static const char *need_arg(const opts_t *o, int argc, char **argv, int *i) {
  if (*i + 1 >= argc) lowp_cli_die(o->cmd, "option %s needs an argument", argv[*i]);
  return argv[++*i];
}

/* physical memory in bytes (0 if unknown) */
static double phys_mem(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  return (pages > 0 && psz > 0) ? (double)pages * (double)psz : 0;
}

/* Refuse, before allocating anything, sizes whose arrays would not fit:
   A, B, the pipeline's copies of them, |A|, |B|, B^T (exact path scratch),
   four m x n results (computed, exact, exact in --acc, |A||B|). */
static void check_memory(const opts_t *o, double m, double n, double k) {
  /* an MPI rank holds its rows of A and C, all of B, and rank 0 the four
     gathered m x n results besides (par/par.h) */
  size_t r0, r1;
  double rows, need, have = phys_mem();
  lowp_par_block((size_t)m, lowp_par_rank(), lowp_par_size(), &r0, &r1);
  rows = lowp_par_size() > 1 ? (double)(r1 - r0) : m;
  need = 8.0 * (3 * rows * k + 4 * k * n + 4 * rows * n);
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

static void parse(opts_t *o, int argc, char **argv) {
  int i, st;
  o->m = o->n = o->k = -1;
  o->in = lowp_cli_format(o->cmd, "fp16");
  o->acc = lowp_cli_format(o->cmd, "fp32");
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
      o->m = lowp_cli_int(o->cmd, "--m", need_arg(o, argc, argv, &i), 1, INT32_MAX);
    else if (!strcmp(a, "--n"))
      o->n = lowp_cli_int(o->cmd, "--n", need_arg(o, argc, argv, &i), 1, INT32_MAX);
    else if (!strcmp(a, "--k") && strcmp(o->cmd, "dot"))
      o->k = lowp_cli_int(o->cmd, "--k", need_arg(o, argc, argv, &i), 1, INT32_MAX);
    else if (!strcmp(a, "--in")) o->in = lowp_cli_format(o->cmd, need_arg(o, argc, argv, &i));
    else if (!strcmp(a, "--acc")) o->acc = lowp_cli_format(o->cmd, need_arg(o, argc, argv, &i));
    else if (!strcmp(a, "--round")) o->rnd = lowp_cli_rounding(o->cmd, need_arg(o, argc, argv, &i));
    else if (!strcmp(a, "--prod")) {
      const char *v = need_arg(o, argc, argv, &i);
      o->have_prod = strcmp(v, "exact") != 0;
      if (o->have_prod) o->prod = lowp_cli_format(o->cmd, v);
    } else if (!strcmp(a, "--dist")) o->dist_text = need_arg(o, argc, argv, &i);
    else if (!strcmp(a, "--seed"))
      o->seed = (uint64_t)lowp_cli_int(o->cmd, "--seed", need_arg(o, argc, argv, &i), 0, INT64_MAX);
    else if (!strcmp(a, "--a")) o->a_path = need_arg(o, argc, argv, &i);
    else if (!strcmp(a, "--b")) o->b_path = need_arg(o, argc, argv, &i);
    else if (!strcmp(a, "--out-exact")) o->out_exact = need_arg(o, argc, argv, &i);
    else if (!strcmp(a, "--prob")) {
      o->prob = lowp_cli_number(o->cmd, "--prob", need_arg(o, argc, argv, &i));
      if (!(o->prob > 0 && o->prob < 1)) lowp_cli_die(o->cmd, "--prob must lie in (0, 1)");
    } else if (!strcmp(a, "--threads"))
      o->threads = (int)lowp_cli_int(o->cmd, "--threads", need_arg(o, argc, argv, &i), 1, 1024);
    else if (!strcmp(a, "--json")) o->json = 1;
    else if (!strcmp(a, "--model")) o->model = need_arg(o, argc, argv, &i);
    else if (!strcmp(a, "--order")) o->order = need_arg(o, argc, argv, &i);
    else if (!strcmp(a, "--promote")) {
      const char *v = need_arg(o, argc, argv, &i);
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
  if (o->promote >= 0 && !o->model)
    lowp_cli_die(o->cmd, "--promote needs --model (it is a parameter of the tensor-core model)");
  if (o->model && (o->order || o->have_prod))
    lowp_cli_die(o->cmd, "--model fixes the products and the order: do not combine it with "
                 "--order or --prod");
  if (o->model && o->rnd != LOWP_RND_NE)
    lowp_cli_die(o->cmd, "--model fixes the rounding: do not combine it with --round");
  if ((o->a_path == NULL) != (o->b_path == NULL))
    lowp_cli_die(o->cmd, "give both --a and --b, or neither");
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

/* The computation lowp gemm/dot measures, as a pipeline subject: the CPU
   twin gemm_acc (recursive), an accumulation order, or a tensor-core model. */
typedef struct {
  const opts_t *o;
  lowp_gemm_acc_cfg_t cfg;
  lowp_gemm_tc_cfg_t tc;
  lowp_accum_t acm;
} subj_ctx_t;

static int gemm_subject_run(const lowp_subject_t *s, double *const *out, const double *const *in,
                            const lowp_problem_t *p, char *err, size_t errlen) {
  const subj_ctx_t *x = s->ctx;
  size_t m = p->op->id == LOWP_OP_DOT ? 1 : p->dims.m, n = p->op->id == LOWP_OP_DOT ? 1 : p->dims.n;
  size_t k = p->dims.k;
  double *c = out[0];
  const double *a = in[0], *b = in[1];
  int st;
  (void)err;
  (void)errlen;
  if (x->o->model) {
    st = lowp_gemm_tc_ref(c, a, b, m, n, k, &x->tc);
  } else if (x->o->order) {
    long long ij;
    int bad = 0;
    /* one accumulation per output element: independent, so the result does
       not depend on the thread count */
#pragma omp parallel for schedule(static) reduction(|| : bad)
    for (ij = 0; ij < (long long)(m * n); ij++) {
      size_t ii = (size_t)ij / n, jj = (size_t)ij % n;
      if (lowp_accum_dot(&c[ij], &a[ii * k], 1, &b[jj], n, k, &x->acm) != 0) bad = 1;
    }
    st = bad ? LOWP_EINVAL : LOWP_OK;
  } else {
    st = lowp_gemm_acc_ref(c, a, b, m, n, k, &x->cfg);
  }
  return st;
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
    if (!o->got || !o->exact || !o->exact_out || !o->absab) {
      lowp_check_result_free(&w);
      lowp_cli_die(cmd, "rank 0: out of memory to gather C (m=%zu n=%zu)", m, n);
    }
  }
  lowp_par_sync(0);
  bad |= lowp_par_gather_rows(o->got, r->out[0].got, m, n);
  bad |= lowp_par_gather_rows(o->exact, r->out[0].exact, m, n);
  bad |= lowp_par_gather_rows(o->exact_out, r->out[0].exact_out, m, n);
  bad |= lowp_par_gather_rows(o->absab, r->out[0].absab, m, n);
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
  size_t m, n, k, mn, changed_a = 0, changed_b = 0;
  double *a, *b, *c, *cx;
  double t_sub, t_exact, u_acc, bound_det;
  lowp_gemm_tc_cfg_t tc;
  lowp_accum_t acm;
  lowp_problem_t prob_p;
  lowp_subject_t subj;
  subj_ctx_t sc;
  lowp_check_result_t res;
  const lowp_check_bound_t *det;
  char subject[320], err[256];
  lowp_errors_t e;
  int st, np = lowp_par_size(), me = lowp_par_rank();
  size_t worst, r0 = 0, r1 = 0; /* this rank's rows of C: [r0, r1) */

  memset(&o, 0, sizeof o);
  memset(&tc, 0, sizeof tc);
  memset(&acm, 0, sizeof acm);
  o.cmd = cmd;
  parse(&o, argc, argv);
  if (lowp_accum_format_check(&o.acc, err, sizeof err) != 0)
    lowp_cli_die(cmd, "--acc %s: %s", o.acc.name, err);
  if (o.have_prod && lowp_accum_format_check(&o.prod, err, sizeof err) != 0)
    lowp_cli_die(cmd, "--prod %s: %s", o.prod.name, err);
  if (o.threads) omp_set_num_threads(o.threads);

  /* the subject's configuration is checked before any work */
  if (o.model) {
    char ms[256];
    st = lowp_gemm_tc_config(&tc, o.model, o.promote, &o.in, &o.acc, err, sizeof err);
    if (st) lowp_cli_die(cmd, "--model %s: %s", o.model, err);
    lowp_tc_model_str(ms, sizeof ms, &tc.model);
    snprintf(subject, sizeof subject, "tensor-core model %s (%s), output %s", o.model, ms,
             o.acc.name);
  } else if (o.order) {
    char as[160];
    if (lowp_accum_parse(&acm, o.order, err, sizeof err) != 0)
      lowp_cli_die(cmd, "--order %s: %s", o.order, err);
    if (strchr(o.order, ','))
      lowp_cli_die(cmd, "--order %s: give only the order (ORDER or ORDER:N); the format, "
                   "rounding and products come from --acc, --round and --prod", o.order);
    if (o.have_prod && !same_format(&o.prod, &o.acc))
      lowp_cli_die(cmd, "with --order, products are exact or rounded to --acc (%s); "
                   "--prod %s is neither", o.acc.name, o.prod.name);
    acm.acc = o.acc;
    acm.rnd = o.rnd;
    acm.fma = !o.have_prod; /* products exact (an FMA chain), or rounded to acc */
    if (lowp_accum_validate(&acm, err, sizeof err) != 0)
      lowp_cli_die(cmd, "--order %s with --acc %s --round %s: %s", o.order, o.acc.name,
                   lowp_rounding_name(o.rnd), err);
    lowp_accum_str(as, sizeof as, &acm);
    snprintf(subject, sizeof subject, "order %s", as);
  } else {
    snprintf(subject, sizeof subject, "products %s, accumulator %s (%s), recursive order",
             o.have_prod ? o.prod.name : "exact", o.acc.name, lowp_rounding_name(o.rnd));
  }

  /* a bad --out-exact (a link, device, folder, unwritable folder) fails
     now, not after the work (tools/output.h) */
  if (o.out_exact && me == 0) check_outputs(cmd, &o);

  if (o.a_path) {
    size_t ar, ac, br, bc;
    a = read_input(&o, o.a_path, "a", &ar, &ac, &changed_a);
    b = read_input(&o, o.b_path, "b", &br, &bc, &changed_b);
    if (!strcmp(cmd, "dot")) {
      if (ar != br) {
        free(a); free(b);
        lowp_cli_die(cmd, "mismatched shapes: --a has length %zu, --b has length %zu", ar, br);
      }
      m = 1; n = 1; k = ar;
    } else {
      if (ac != br) {
        free(a); free(b);
        lowp_cli_die(cmd, "mismatched shapes: A is (%zu, %zu) and B is (%zu, %zu): "
                     "A's columns must equal B's rows", ar, ac, br, bc);
      }
      m = ar; k = ac; n = bc;
    }
    if ((o.m >= 0 && (size_t)o.m != m) || (o.k >= 0 && (size_t)o.k != k) ||
        (o.n >= 0 && (size_t)o.n != n && strcmp(cmd, "dot"))) {
      free(a); free(b);
      lowp_cli_die(cmd, "the sizes given (--m/--n/--k) disagree with the .npy shapes "
                   "(m=%zu n=%zu k=%zu)", m, n, k);
    }
    if (m == 0 || n == 0 || k == 0) {
      free(a); free(b);
      lowp_cli_die(cmd, "empty input arrays (m=%zu n=%zu k=%zu)", m, n, k);
    }
    check_memory(&o, (double)m, (double)n, (double)k);
  } else {
    if (o.m < 0 || o.n < 0 || o.k < 0) {
      if (!strcmp(cmd, "dot")) lowp_cli_die(cmd, "give --n (the length), or --a and --b");
      lowp_cli_die(cmd, "give --m, --n and --k, or --a and --b");
    }
    m = (size_t)o.m; n = (size_t)o.n; k = (size_t)o.k;
    check_memory(&o, (double)m, (double)n, (double)k);
    if (np > (long long)m)
      lowp_cli_die(cmd, "%d MPI ranks for %zu rows of C: each rank computes a block of rows, "
                   "so run at most %zu ranks", np, m, m);
    lowp_par_block(m, me, np, &r0, &r1);
    /* an MPI rank generates its own rows of A (the generator draws each
       element from its index alone) and all of B: nothing is broadcast.
       --dist cancel builds A and B together: every rank builds them whole */
    if (o.dist.kind == LOWP_DIST_CANCEL) {
      a = malloc(m * k * sizeof *a);
      b = malloc(k * n * sizeof *b);
      if (!a || !b) lowp_cli_die(cmd, "out of memory for the inputs");
      st = lowp_dist_cancel_gemm(a, b, m, n, k, &o.in, o.seed);
      if (!st && r0) memmove(a, &a[r0 * k], (r1 - r0) * k * sizeof *a);
    } else {
      a = malloc((r1 - r0) * k * sizeof *a);
      b = malloc(k * n * sizeof *b);
      if (!a || !b) lowp_cli_die(cmd, "out of memory for the inputs");
      st = lowp_dist_fill_at(a, (r1 - r0) * k, &o.dist, &o.in, o.seed, 1, r0 * k);
      if (!st) st = lowp_dist_fill(b, k * n, &o.dist, &o.in, o.seed, 2);
    }
    if (st) lowp_cli_die(cmd, "input generation failed: %s", lowp_status_str(st));
  }
  if (o.a_path) {
    /* every rank read the whole .npy files; it computes its rows */
    if (np > (long long)m)
      lowp_cli_die(cmd, "%d MPI ranks for %zu rows of C: each rank computes a block of rows, "
                   "so run at most %zu ranks", np, m, m);
    lowp_par_block(m, me, np, &r0, &r1);
    if (r0) memmove(a, &a[r0 * k], (r1 - r0) * k * sizeof *a);
  }
  /* every rank has its inputs, or the job stops here (par/par.h) */
  lowp_par_sync(0);
  mn = m * n;

  /* the measurement pipeline (lib/check/pipeline.h): subject -> exact
     reference and |A||B| -> errors -> the bounds of the subject's method */
  {
    lowp_check_inputs_t ins;
    lowp_check_opts_t co = {0};
    const double *xs[2] = {a, b};
    char perr[600];
    memset(&prob_p, 0, sizeof prob_p);
    prob_p.op = lowp_op_by_name(strcmp(cmd, "dot") ? "gemm" : "dot");
    prob_p.dims.batch = 1;
    prob_p.dims.m = r1 - r0; /* this rank's rows (all of them in one process) */
    prob_p.dims.n = n;
    prob_p.dims.k = k;
    prob_p.in[0] = prob_p.in[1] = o.in;
    prob_p.out = o.acc;
    memset(&sc, 0, sizeof sc);
    sc.o = &o;
    sc.cfg.prod = o.have_prod ? &o.prod : NULL;
    sc.cfg.prod_rnd = o.prod_rnd;
    sc.cfg.acc = &o.acc;
    sc.cfg.acc_rnd = o.rnd;
    sc.cfg.order = LOWP_ORDER_RECURSIVE;
    sc.tc = tc;
    sc.acm = acm;
    memset(&subj, 0, sizeof subj);
    snprintf(subj.name, sizeof subj.name, "%.250s", subject);
    subj.kind = "kernel";
    subj.run = gemm_subject_run;
    subj.ctx = &sc;
    if (o.model) {
      subj.has_model = 1;
      subj.model = tc.model;
    } else if (o.order) {
      subj.has_accum = 1;
      subj.accum = acm; /* fma = 0: products rounded to acc (--prod = --acc) */
    } else {
      subj.has_accum = 1;
      memset(&subj.accum, 0, sizeof subj.accum);
      subj.accum.order = LOWP_ACC_RECURSIVE;
      subj.accum.acc = o.acc;
      subj.accum.rnd = o.rnd;
      subj.accum.fma = 1;
      subj.prod = o.have_prod ? &o.prod : NULL;
    }
    co.prob = o.prob;
    /* a large product's exact reference takes a while: show it (terminal only) */
    co.progress.fn = lowp_cli_progress;
    co.progress.ctx = (void *)"exact reference";
    st = lowp_check_inputs_copy(&ins, &prob_p, xs, NULL);
    if (st) lowp_cli_die(cmd, "out of memory for the inputs");
    st = lowp_check_measure(&res, &prob_p, &subj, &ins, &co, perr, sizeof perr);
    lowp_cli_progress_end();
    lowp_check_inputs_free(&ins);
    if (st) lowp_cli_die(cmd, "%s", perr[0] ? perr : lowp_status_str(st));
    lowp_par_sync(0);
    if (np > 1) gather_result(cmd, &res, &subj, &co, m, n);
    if (me != 0) { /* rank 0 writes and prints; wait for its verdict */
      free(a); free(b);
      lowp_check_result_free(&res);
      lowp_par_sync(0);
      return LOWP_EXIT_OK;
    }
  }
  c = res.out[0].got;
  cx = res.out[0].exact;
  e = res.out[0].err;
  t_sub = res.time_subject_s;
  t_exact = res.time_exact_s;
  /* the bounds of the method: gamma-type for an accumulation order (with
     its probabilistic form), the block-FMA bound for a tensor-core model */
  det = o.model ? &res.model : &res.gamma;
  u_acc = lowp_format_u(&o.acc);
  if (o.rnd != LOWP_RND_NE && o.rnd != LOWP_RND_NA) u_acc *= 2;
  if (det->have) bound_det = det->value;
  else bound_det = INFINITY;
  worst = e.argmax_abs;

  if (o.out_exact) {
    size_t shape[2] = {m, n};
    int nd = 2;
    if (!strcmp(cmd, "dot")) { shape[0] = 1; nd = 1; }
    st = lowp_npy_write(o.out_exact, LOWP_NPY_F8, shape, nd, cx, NULL);
    if (st) {
      free(a); free(b); lowp_check_result_free(&res);
      lowp_cli_die(cmd, "--out-exact %s: %s (nothing written)", o.out_exact,
                   lowp_status_str(st));
    }
  }
  lowp_par_sync(0); /* the file is in place: the other ranks may leave */

  if (o.json) {
    cJSON *r = cJSON_CreateObject(), *err = cJSON_CreateObject(),
          *bd = cJSON_CreateObject(), *w = cJSON_CreateObject();
    char *txt;
    cJSON_AddStringToObject(r, "command", cmd);
    cJSON_AddNumberToObject(r, "m", (double)m);
    cJSON_AddNumberToObject(r, "n", (double)n);
    cJSON_AddNumberToObject(r, "k", (double)k);
    cJSON_AddStringToObject(r, "in", o.in.name);
    cJSON_AddStringToObject(r, "acc", o.acc.name);
    cJSON_AddStringToObject(r, "prod", o.have_prod ? o.prod.name : "exact");
    cJSON_AddStringToObject(r, "round", lowp_rounding_name(o.rnd));
    cJSON_AddStringToObject(r, "order", o.model ? "model" : o.order ? o.order : "recursive");
    cJSON_AddStringToObject(r, "subject", subject);
    if (o.model) cJSON_AddStringToObject(r, "model", o.model);
    cJSON_AddStringToObject(r, "inputs", o.a_path ? "npy" : o.dist_text);
    cJSON_AddNumberToObject(r, "seed", (double)o.seed);
    cJSON_AddNumberToObject(r, "inputs_rounded_to_in", (double)(changed_a + changed_b));
    add_num(err, "max_abs", e.max_abs);
    add_num(err, "mean_abs", e.mean_abs);
    add_num(err, "max_rel", e.max_rel);
    add_num(err, "mean_rel", e.mean_rel);
    add_num(err, "max_ulp", e.max_ulp);
    add_num(err, "mean_ulp", e.mean_ulp);
    add_num(err, "max_backward", e.max_bwd);
    cJSON_AddNumberToObject(err, "n_exact", (double)e.n_exact);
    cJSON_AddNumberToObject(err, "n_special", (double)e.n_special);
    cJSON_AddItemToObject(r, "errors", err);
    if (worst != (size_t)-1) {
      cJSON_AddNumberToObject(w, "i", (double)(worst / n));
      cJSON_AddNumberToObject(w, "j", (double)(worst % n));
      add_val(w, "computed", c[worst]);
      add_val(w, "exact", cx[worst]);
    }
    cJSON_AddItemToObject(r, "worst", w);
    add_num(bd, "u", u_acc);
    /* "gamma_k": the deterministic bound of the method (the order's, or the
       tensor-core model's); a vacuous bound is "inf" and has no share */
    cJSON_AddStringToObject(bd, "deterministic", det->have ? det->name : "none");
    add_num(bd, "gamma_k", bound_det);
    cJSON_AddBoolToObject(bd, "vacuous", isinf(bound_det));
    if (!isinf(bound_det)) add_num(bd, "gamma_k_used", e.max_bwd / bound_det);
    if (res.prob.have) {
      double uu = u_acc, lam;
      if (o.have_prod && lowp_format_u(&o.prod) > uu) uu = lowp_format_u(&o.prod);
      lam = lowp_bound_prob_lambda((double)k, uu, o.prob);
      add_num(bd, "prob_lambda", lam);
      add_num(bd, "prob_probability", lowp_bound_prob_probability((double)k, uu, lam));
      add_num(bd, "prob_bound", res.prob.value);
      if (!isinf(res.prob.value)) add_num(bd, "prob_used", e.max_bwd / res.prob.value);
    }
    cJSON_AddItemToObject(r, "bounds", bd);
    add_num(r, "time_subject_s", t_sub);
    add_num(r, "time_exact_s", t_exact);
    if (o.out_exact) cJSON_AddStringToObject(r, "out_exact", o.out_exact);
    txt = cJSON_Print(r);
    printf("%s\n", txt);
    free(txt);
    cJSON_Delete(r);
  } else {
    printf("lowp %s: m=%zu n=%zu k=%zu, inputs %s (%s, seed %llu), %s\n", cmd, m, n, k,
           o.in.name, o.a_path ? "from .npy" : o.dist_text, (unsigned long long)o.seed, subject);
    if (changed_a + changed_b)
      printf("  note: %zu input values were not values of %s and were rounded to it (rne)\n",
             changed_a + changed_b, o.in.name);
    printf("  time: subject %.3f s, exact reference %.3f s\n", t_sub, t_exact);
    printf("  %-18s %12s %12s\n", "error", "max", "mean");
    printf("  %-18s %12.4g %12.4g\n", "absolute", e.max_abs, e.mean_abs);
    printf("  %-18s %12.4g %12.4g\n", "relative", e.max_rel, e.mean_rel);
    printf("  ulp of %-11s %12.4g %12.4g\n", o.acc.name, e.max_ulp, e.mean_ulp);
    printf("  %-18s %12.4g\n", "backward |dC|/|A||B|", e.max_bwd);
    printf("  elements exact: %zu of %zu; NaN/inf disagreements: %zu\n", e.n_exact, mn,
           e.n_special);
    if (worst != (size_t)-1)
      printf("  worst element C[%zu][%zu] (max abs error): computed %.17g (%a), "
             "exact %.17g (%a)\n", worst / n, worst % n, c[worst], c[worst], cx[worst], cx[worst]);
    if (!det->have)
      printf("  deterministic bound: none known for this method\n");
    else if (isinf(bound_det))
      printf("  bound %s, k=%zu: vacuous (no bound at this length and precision)\n",
             det->name, k);
    else
      printf("  bound %s, k=%zu: %.4g; worst backward error uses %.2f%% of it\n", det->name,
             k, bound_det, 100 * e.max_bwd / bound_det);
    if (res.prob.have && isinf(res.prob.value))
      printf("  probabilistic bound (Higham & Mary 2019): vacuous\n");
    else if (res.prob.have)
      printf("  probabilistic bound (Higham & Mary 2019), %s per element: %.4g; uses %.2f%%\n",
             res.prob.name, res.prob.value, 100 * e.max_bwd / res.prob.value);
    else if (!o.model)
      printf("  probabilistic bound: none for this method (it needs round to nearest and a "
             "non-compensated order)\n");
    if (o.out_exact) printf("  exact result (fp64) written to %s\n", o.out_exact);
  }
  free(a); free(b);
  lowp_check_result_free(&res);
  return LOWP_EXIT_OK;
}

/* ----------------------------------------------------------- public API */

int lowp_cmd_gemm(int argc, char **argv) { return run("gemm", argc, argv); }

int lowp_cmd_dot(int argc, char **argv) { return run("dot", argc, argv); }
