/* lowp bench gemm -- emulated GEMM kernels: reference vs fast path vs OpenBLAS vs exact */

/*
 * One table, one run, one thread (process CPU time), m = n = k = N
 * (default 1024; --quick 128): for each configuration of the accumulation
 * kernel (cpu/gemm_acc.h), ns per multiply-add of
 *   ref     lowp_gemm_acc_scalar, the scalar reference, on the first --rows rows
 *   fast    lowp_gemm_acc_ref as every caller runs it, on the --isa copy (the fast kernel it
 *           dispatches to is named), all N^3, best of --reps
 *   sgemm   OpenBLAS cblas_sgemm on the same data, best of --reps
 *   exact   the pipeline's exact reference (lowp_op_exact: lib/exact's GEMM, rounded once to fp64), once
 * with the ratios ref/fast and fast/sgemm. Validation first (docs/style.md B8): the
 * fast result equals the reference on the sampled rows bit for bit; a case
 * that does not validate prints FAIL and the exit status is 1.
 * Target (issue 22): fast <= 0.2 ns per multiply-add at N = 1024 for
 * recursive summation; printed, never enforced by a test.
 * A second table does the same for the tensor-core model (registry gemm_tc):
 * ref = lowp_gemm_tc_scalar on the first rows, fast = lowp_gemm_tc_ref (the
 * integer kernel of cpu/gemm_tc_fast.h), sgemm; its last column says "same"
 * (equal bytes) or FAIL. Target <= 2 ns per multiply-add.
 *
 * --isa generic|avx2|avx512 runs the fast paths' copy for that instruction
 * set (default: the widest this CPU runs), so the tables can be measured per ISA.
 *
 * Run: lowp bench gemm [--n N] [--quick] [--reps R] [--rows R] [--seed S] [--isa I]
 */

#define _POSIX_C_SOURCE 200809L

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/op.h"
#include "bench.h"
#include "cli.h"
#include "cpu.h"
#include "cpu/gemm_acc.h"
#include "cpu/gemm_acc_fast.h"
#include "cpu/reduce_fast.h"
#include "cpu/gemm_tc.h"
#include "cpu/gemm_tc_fast.h"
#include "exact/exact.h"
#include "rng/dist.h"
#include "status.h"

/* ---------------------------------------------------------------- types */

typedef struct {
  const char *label;
  const lowp_format_t *in, *acc, *prod;
  lowp_rounding_t acc_rnd, prod_rnd;
  lowp_dist_kind_t dist;
} gcase_t;

/* a tensor-core model case: preset, input, output, promotion (-1: preset's) */
typedef struct {
  const char *model;
  const lowp_format_t *in, *out;
  long promote;
} tcase_t;

typedef struct {
  size_t n, rows;
  int reps;
  uint64_t seed;
  unsigned tables; /* T_ACC | T_ORD | T_TC: which tables run */
  const char *isa; /* the fast paths' instruction set (lowp_isa_name's) */
} gopts_t;

enum { T_ACC = 1, T_ORD = 2, T_TC = 4 };

/* --tables: a comma-separated list of acc, orders, tc */
static unsigned parse_tables(const char *val) {
  unsigned t = 0;
  const char *p = val;
  lowp_cli_list_check("bench", "--tables", val, ',');
  while (*p) {
    size_t len = strcspn(p, ",");
    if (len == 3 && !strncmp(p, "acc", 3)) t |= T_ACC;
    else if (len == 6 && !strncmp(p, "orders", 6)) t |= T_ORD;
    else if (len == 2 && !strncmp(p, "tc", 2)) t |= T_TC;
    else lowp_cli_die("bench gemm", "--tables: unknown table '%.*s' (acc, orders, tc)", (int)len, p);
    p += len;
    if (*p == ',') p++;
  }
  if (!t) lowp_cli_die("bench gemm", "--tables needs at least one of acc, orders, tc");
  return t;
}

/* --isa: an instruction set this CPU runs (lib/cpu.h); `bench round` shares it */
const char *lowp_bench_parse_isa(const char *cmd, const char *val, int need_fma) {
  int isa = lowp_isa_parse(val);
  lowp_isa_t best = lowp_cpu_isa(need_fma);
  if (isa < 0)
    lowp_cli_die(cmd, "--isa: unknown instruction set '%s' (generic, avx2, avx512)", val);
  if (isa > (int)best)
    lowp_cli_die(cmd, "--isa %s: this CPU runs at most %s", val, lowp_isa_name(best));
  return lowp_isa_name((lowp_isa_t)isa);
}

/* ------------------------------------------------------ private helpers */

/* a kernel under timing: the reference (first rows) or the fast path on
   the instruction set isa (the references ignore it) */
typedef int (*gemm_fn)(double *c, const double *a, const double *b, size_t m, size_t n,
                       size_t k, const void *cfg, const char *isa);

static int acc_scalar(double *c, const double *a, const double *b, size_t m, size_t n, size_t k,
                      const void *cfg, const char *isa) {
  (void)isa;
  return lowp_gemm_acc_scalar(c, a, b, m, n, k, cfg);
}
/* lowp_gemm_acc_ref's dispatch (gemm_acc.c), the fast kernel on isa */
static int acc_fast(double *c, const double *a, const double *b, size_t m, size_t n, size_t k,
                    const void *cfg, const char *isa) {
  lowp_accfast_kind_t kd = lowp_gemm_acc_fast_kind(a, b, m, n, k, cfg);
  if (kd != LOWP_ACCFAST_NONE && lowp_gemm_acc_fast(c, a, b, m, n, k, cfg, kd, isa) == LOWP_OK)
    return LOWP_OK;
  return lowp_gemm_acc_ref(c, a, b, m, n, k, cfg);
}
static int tc_scalar(double *c, const double *a, const double *b, size_t m, size_t n, size_t k,
                     const void *cfg, const char *isa) {
  (void)isa;
  return lowp_gemm_tc_scalar(c, a, b, m, n, k, cfg);
}
/* lowp_gemm_tc_ref's dispatch (gemm_tc.c), the fast kernel on isa */
static int tc_fast(double *c, const double *a, const double *b, size_t m, size_t n, size_t k,
                   const void *cfg, const char *isa) {
  if (lowp_gemm_tc_fast_ok(cfg) && lowp_gemm_tc_fast(c, a, b, m, n, k, cfg, isa) == LOWP_OK)
    return LOWP_OK;
  return lowp_gemm_tc_ref(c, a, b, m, n, k, cfg);
}

static int ord_scalar(double *c, const double *a, const double *b, size_t m, size_t n, size_t k,
                      const void *cfg, const char *isa) {
  size_t i, j;
  (void)isa;
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++)
      if (lowp_accum_dot(&c[i * n + j], a + i * k, 1, b + j, n, k, cfg) != LOWP_OK)
        return LOWP_EINVAL;
  return LOWP_OK;
}
static int ord_fast(double *c, const double *a, const double *b, size_t m, size_t n, size_t k,
                    const void *cfg, const char *isa) {
  return lowp_gemm_order_fast(c, a, b, m, n, k, cfg, isa);
}

/* one timed run of fast (its isa copy) on the N^3 problem, into c zeroed first: ns per multiply-add */
static double time_run(gemm_fn fast, double *c, const double *a, const double *b, size_t N,
                       const void *cfg, const char *isa) {
  double t;
  memset(c, 0, N * N * sizeof *c);
  t = lowp_bench_clock_s(0);
  if (fast(c, a, b, N, N, N, cfg, isa) != LOWP_OK) lowp_cli_die("bench gemm", "kernel failed");
  return 1e9 * (lowp_bench_clock_s(0) - t) / ((double)N * N * N);
}

/* ns per multiply-add of the reference on the first r rows (into cr), of the
   fast path (best of o->reps, into c) and of OpenBLAS sgemm on the same
   data; *bad = 1 when the fast path's first r rows differ from the
   reference's in any bit (validate before reporting: docs/style.md B8) */
typedef struct {
  double ref, fast, blas;
  int bad;
} times_t;

static times_t time_kernels(double *c, double *cr, const double *a, const double *b, size_t N,
                            size_t r, const gopts_t *o, gemm_fn ref, gemm_fn fast,
                            const void *cfg) {
  times_t tm = {0, 1e300, 0, 0};
  double t, madds = (double)N * N * N;
  size_t e;
  int rep;
  t = lowp_bench_clock_s(0);
  if (ref(cr, a, b, r, N, N, cfg, NULL) != LOWP_OK) lowp_cli_die("bench gemm", "reference kernel failed");
  tm.ref = 1e9 * (lowp_bench_clock_s(0) - t) / ((double)r * N * N);
  for (rep = 0; rep < o->reps; rep++)
    if ((t = time_run(fast, c, a, b, N, cfg, o->isa)) < tm.fast) tm.fast = t;
  for (e = 0; e < r * N; e++)
    if (memcmp(&c[e], &cr[e], sizeof *c)) tm.bad = 1;
  tm.blas = 1e9 * lowp_bench_time_blas(0, a, b, N, o->reps) / madds;
  return tm;
}

/* the exact reference the measurement pipeline computes for an N^3 GEMM
   (lowp_op_exact: lib/exact's GEMM, rounded once to fp64) */
static int exact_reference(double *c, const double *a, const double *b, size_t N) {
  lowp_problem_t p;
  double *outs[1];
  const double *ins[2];
  memset(&p, 0, sizeof p);
  p.op = lowp_op_get(LOWP_OP_GEMM);
  p.dims.batch = 1;
  p.dims.m = p.dims.n = p.dims.k = N;
  p.in[0] = p.in[1] = LOWP_FMT_FP64;
  p.out = LOWP_FMT_FP64;
  outs[0] = c;
  ins[0] = a;
  ins[1] = b;
  return lowp_op_exact(outs, NULL, ins, &p, &LOWP_FMT_FP64, LOWP_RND_NE);
}

static const char *kind_name(lowp_accfast_kind_t k) {
  switch (k) {
  case LOWP_ACCFAST_FMA64: return "fma64";
  case LOWP_ACCFAST_FMA32: return "fma32";
  case LOWP_ACCFAST_RO64: return "ro64";
  case LOWP_ACCFAST_RO32: return "ro32";
  default: return "none";
  }
}

static void *xalloc(size_t bytes) {
  void *p = calloc(bytes ? bytes : 1, 1);
  if (!p) lowp_cli_die("bench gemm", "out of memory (%zu bytes); try a smaller --n", bytes);
  return p;
}

/* one row of the table; returns 1 when validation failed */
static int run_gcase(const gcase_t *gc, const gopts_t *o) {
  size_t N = o->n, r = o->rows < N ? o->rows : N, len = N * N;
  double *a = xalloc(len * sizeof *a), *b = xalloc(len * sizeof *b);
  double *c = xalloc(len * sizeof *c), *cr = xalloc(r * N * sizeof *cr);
  double t, t_exact, madds = (double)N * N * N;
  lowp_dist_t d = {gc->dist, 0x1p-20, 1.0};
  lowp_gemm_acc_cfg_t cfg;
  times_t tm;
  memset(&cfg, 0, sizeof cfg);
  cfg.acc = gc->acc, cfg.acc_rnd = gc->acc_rnd, cfg.prod = gc->prod, cfg.prod_rnd = gc->prod_rnd;
  if (lowp_dist_fill(a, len, &d, gc->in, o->seed, 1) ||
      lowp_dist_fill(b, len, &d, gc->in, o->seed, 2))
    lowp_cli_die("bench gemm", "input generation failed");
  /* reference on the first r rows, then the fast path on all, compared */
  tm = time_kernels(c, cr, a, b, N, r, o, acc_scalar, acc_fast, &cfg);
  t = lowp_bench_clock_s(0);
  if (exact_reference(c, a, b, N))
    lowp_cli_die("bench gemm", "exact GEMM failed");
  t_exact = 1e9 * (lowp_bench_clock_s(0) - t) / madds;
  printf("%-34s %-6s %9.3f %9.4f %9.4f %9.4f %8.0fx %8.1fx  %s\n", gc->label,
         kind_name(lowp_gemm_acc_fast_kind(a, b, N, N, N, &cfg)), tm.ref, tm.fast, tm.blas,
         t_exact, tm.ref / tm.fast, tm.fast / tm.blas, tm.bad ? "FAIL" : "ok");
  free(a), free(b), free(c), free(cr);
  return tm.bad;
}

/* a summation order case (lowp_accum_dot's orders, cpu/reduce_fast.h) */
typedef struct {
  const char *spec; /* lowp_accum_parse's */
  const lowp_format_t *in;
} ocase_t;

/* one row of the orders table: ref = lowp_accum_dot per output on the first
   rows, fast = lowp_gemm_order_fast, rec = the recursive path every caller
   runs (lowp_gemm_acc_ref, the fast kernels of gemm_acc_fast.h, on the --isa
   copy) on the same data and accumulator, best of o->reps (fast: of 2 o->reps,
   the second half beside rec's runs); returns 1 when validation failed */
static int run_ocase(const ocase_t *oc, const gopts_t *o) {
  size_t N = o->n, r = o->rows < N ? o->rows : N, len = N * N;
  double *a = xalloc(len * sizeof *a), *b = xalloc(len * sizeof *b);
  double *c = xalloc(len * sizeof *c), *cr = xalloc(r * N * sizeof *cr);
  double t, rec = 1e300;
  lowp_dist_t d = {LOWP_DIST_NORMAL, 0x1p-20, 1.0};
  lowp_accum_t ac;
  lowp_gemm_acc_cfg_t g;
  times_t tm;
  int rep;
  char label[64];
  if (lowp_accum_parse(&ac, oc->spec, NULL, 0) != LOWP_OK)
    lowp_cli_die("bench gemm", "bad order case %s", oc->spec);
  if (lowp_dist_fill(a, len, &d, oc->in, o->seed, 1) ||
      lowp_dist_fill(b, len, &d, oc->in, o->seed, 2))
    lowp_cli_die("bench gemm", "input generation failed");
  tm = time_kernels(c, cr, a, b, N, r, o, ord_scalar, ord_fast, &ac);
  memset(&g, 0, sizeof g);
  g.acc = &ac.acc, g.acc_rnd = ac.rnd, g.prod = ac.fma ? NULL : &ac.acc, g.prod_rnd = ac.rnd;
  /* the recursive path, each run beside one more run of fast: the two best times then come from
     the same moments of a shared machine, whose speed moves (a ratio of 4.5 against 1.35 alone, the
     generic copy's fp16 pairwise row beside another test, 2026-12-01) */
  for (rep = 0; rep < o->reps; rep++) {
    if ((t = time_run(ord_fast, c, a, b, N, &ac, o->isa)) < tm.fast) tm.fast = t;
    if ((t = time_run(acc_fast, c, a, b, N, &g, o->isa)) < rec) rec = t;
  }
  snprintf(label, sizeof label, "%s in, %s", oc->in->name, oc->spec);
  printf("%-44s %9.3f %9.4f %9.4f %8.0fx %8.2fx  %s\n", label, tm.ref, tm.fast, rec,
         tm.ref / tm.fast, tm.fast / rec, tm.bad ? "FAIL" : "ok");
  free(a), free(b), free(c), free(cr);
  return tm.bad;
}

static const ocase_t ocases[] = {
    {"recursive,acc=fp32,fma=1", &LOWP_FMT_FP32},
    {"pairwise,acc=fp32,fma=1", &LOWP_FMT_FP32},
    {"blocked:32,acc=fp32,fma=1", &LOWP_FMT_FP32},
    {"splitk:4,acc=fp32,fma=1", &LOWP_FMT_FP32},
    {"pairwise,acc=fp32,fma=0", &LOWP_FMT_FP32},
    {"pairwise,acc=fp32,rnd=rtz,fma=1", &LOWP_FMT_FP32},
    {"pairwise,acc=fp16,fma=1", &LOWP_FMT_FP16},
    {"pairwise,acc=bf16,fma=1", &LOWP_FMT_BF16},
    {"blocked:32,acc=fp16,fma=1", &LOWP_FMT_FP16},
    {"pairwise,acc=fp64,fma=1", &LOWP_FMT_FP64},
    {"splitk:4,acc=fp64,fma=1", &LOWP_FMT_FP64},
};

/* one row of the tensor-core table (ref = lowp_gemm_tc_scalar on the first
   rows, fast = lowp_gemm_tc_ref on all); returns 1 when validation failed */
static int run_tcase(const tcase_t *tc, const gopts_t *o) {
  size_t N = o->n, r = o->rows < N ? o->rows : N, len = N * N;
  double *a = xalloc(len * sizeof *a), *b = xalloc(len * sizeof *b);
  double *c = xalloc(len * sizeof *c), *cr = xalloc(r * N * sizeof *cr);
  lowp_dist_t d = {LOWP_DIST_NORMAL, 0x1p-20, 1.0};
  lowp_gemm_tc_cfg_t cfg;
  char err[256], label[64];
  times_t tm;
  if (lowp_gemm_tc_config(&cfg, tc->model, tc->promote, tc->in, tc->out, err, sizeof err))
    lowp_cli_die("bench gemm", "%s", err);
  if (lowp_dist_fill(a, len, &d, tc->in, o->seed, 1) ||
      lowp_dist_fill(b, len, &d, tc->in, o->seed, 2))
    lowp_cli_die("bench gemm", "input generation failed");
  tm = time_kernels(c, cr, a, b, N, r, o, tc_scalar, tc_fast, &cfg);
  snprintf(label, sizeof label, "%s %s->%s%s%.0ld", tc->model, tc->in->name, tc->out->name,
           cfg.model.promote ? " promote " : "", (long)cfg.model.promote);
  printf("%-34s %-6s %9.3f %9.4f %9.4f %9s %8.0fx %8.1fx  %s\n", label,
         lowp_gemm_tc_fast_ok(&cfg) ? "int" : "none", tm.ref, tm.fast, tm.blas, "-",
         tm.ref / tm.fast, tm.fast / tm.blas, tm.bad ? "FAIL" : "same");
  free(a), free(b), free(c), free(cr);
  return tm.bad;
}

static const tcase_t tcases[] = {
    {"h100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, 0},   {"h100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, 128},
    {"h100", &LOWP_FMT_BF16, &LOWP_FMT_FP32, 0},   {"h100", &LOWP_FMT_BF16, &LOWP_FMT_FP32, 128},
    {"h100", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, 0},   {"h100", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, 128},
    {"b200", &LOWP_FMT_FP16, &LOWP_FMT_FP32, 0},   {"b200", &LOWP_FMT_BF16, &LOWP_FMT_FP32, 128},
    {"b200", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, 0},   {"b200", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, 128},
    {"h100", &LOWP_FMT_E5M2, &LOWP_FMT_FP16, 0},   {"h100", &LOWP_FMT_FP16, &LOWP_FMT_FP16, 0},
    {"a100", &LOWP_FMT_TF32, &LOWP_FMT_FP32, 0},   {"v100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, 0},
    {"ada", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, 0},
};

static void gemm_usage(void) {
  printf("usage: lowp bench gemm [--n N] [--quick] [--reps R] [--rows R] [--seed S]\n"
         "                       [--tables acc,orders,tc] [--isa generic|avx2|avx512]\n"
         "  The emulated GEMM kernels (lowp gemm's subject, registry gemm_acc), one\n"
         "  thread, m = n = k = N: ns per multiply-add of the scalar reference (first R\n"
         "  rows), the fast path every caller runs, OpenBLAS sgemm, and the exact\n"
         "  reference (the pipeline's, lowp_op_exact), side by side. Validates fast == reference bit\n"
         "  for bit on the sampled rows first.\n"
         "  --n N      size (default 1024; 8 .. 8192)   --quick   N = 128\n"
         "  --reps R   repetitions of fast and sgemm, minimum kept (default 3)\n"
         "  --rows R   rows of the reference timed and compared (default 2)\n"
         "  --seed S   input seed (default 11)\n"
         "  --tables T which tables run, comma-separated (default acc,orders,tc)\n"
         "  --isa I    the fast paths' copy: generic, avx2 or avx512 (default: the\n"
         "             widest this CPU runs; one it cannot run is bad usage)\n"
         "  Then the tensor-core model (registry gemm_tc, lowp gemm --model): ref is\n"
         "  lowp_gemm_tc_scalar (lowp_tc_dot per element), fast lowp_gemm_tc_ref\n"
         "  (the integer kernel, cpu/gemm_tc_fast.h); bits: same = equal bytes.\n"
         "  Targets (issue 22): fast <= 0.2 ns per multiply-add at N = 1024 (recursive),\n"
         "  <= 2 ns (tensor-core models).\n"
         "  Orders table: ref lowp_accum_dot per output (first rows), fast\n"
         "  lowp_gemm_order_fast (cpu/reduce_fast.h), rec the recursive path\n"
         "  (lowp_gemm_acc_ref) on the same data, each of its R runs beside one\n"
         "  more run of fast (best of 2R); target fast/rec <= 2.\n"
         "  Exit: 0 ok; 1 validation failed; 2 bad usage.\n");
}

static void parse(gopts_t *o, int argc, char **argv) {
  int i;
  for (i = 1; i < argc; i++) {
    const char *arg = argv[i], *val = NULL, *eq = strchr(arg, '=');
    char key[32];
    if (eq && (size_t)(eq - arg) < sizeof key) {
      memcpy(key, arg, (size_t)(eq - arg));
      key[eq - arg] = 0;
      val = eq + 1;
      arg = key;
    }
    if (!strcmp(arg, "--quick") && !val) { o->n = 128; continue; }
    if (!strcmp(arg, "--help") && !val) { gemm_usage(); exit(LOWP_EXIT_OK); }
    if (strcmp(arg, "--n") && strcmp(arg, "--reps") && strcmp(arg, "--rows") &&
        strcmp(arg, "--seed") && strcmp(arg, "--tables") && strcmp(arg, "--isa"))
      lowp_cli_die("bench gemm", "unknown option '%s' (see --help)", argv[i]);
    if (!val) {
      if (i + 1 >= argc) lowp_cli_die("bench gemm", "%s needs a value", arg);
      val = argv[++i];
    }
    if (!strcmp(arg, "--n")) o->n = (size_t)lowp_cli_int("bench gemm", "--n", val, 8, 8192);
    else if (!strcmp(arg, "--reps"))
      o->reps = (int)lowp_cli_int("bench gemm", "--reps", val, 1, 100);
    else if (!strcmp(arg, "--rows"))
      o->rows = (size_t)lowp_cli_int("bench gemm", "--rows", val, 1, 8192);
    else if (!strcmp(arg, "--tables")) o->tables = parse_tables(val);
    else if (!strcmp(arg, "--isa")) o->isa = lowp_bench_parse_isa("bench gemm", val, 1);
    else o->seed = (uint64_t)lowp_cli_int("bench gemm", "--seed", val, 0, INT64_MAX);
  }
}

/* ----------------------------------------------------------- public API */

int lowp_bench_gemm(int argc, char **argv) {
  static const gcase_t cases[] = {
      {"fp32 in, fp32 acc (fma), normal", &LOWP_FMT_FP32, &LOWP_FMT_FP32, NULL, LOWP_RND_NE,
       LOWP_RND_NE, LOWP_DIST_NORMAL},
      {"fp32 in, fp32 acc, loguniform 2^-20", &LOWP_FMT_FP32, &LOWP_FMT_FP32, NULL,
       LOWP_RND_NE, LOWP_RND_NE, LOWP_DIST_LOGUNIFORM},
      {"fp32 in, fp32 prod, fp32 acc", &LOWP_FMT_FP32, &LOWP_FMT_FP32, &LOWP_FMT_FP32,
       LOWP_RND_NE, LOWP_RND_NE, LOWP_DIST_NORMAL},
      {"fp16 in, fp32 acc", &LOWP_FMT_FP16, &LOWP_FMT_FP32, NULL, LOWP_RND_NE, LOWP_RND_NE,
       LOWP_DIST_NORMAL},
      {"fp16 in, fp32 acc rtz", &LOWP_FMT_FP16, &LOWP_FMT_FP32, NULL, LOWP_RND_TZ,
       LOWP_RND_NE, LOWP_DIST_NORMAL},
      {"fp16 in, fp16 acc", &LOWP_FMT_FP16, &LOWP_FMT_FP16, NULL, LOWP_RND_NE, LOWP_RND_NE,
       LOWP_DIST_NORMAL},
      {"bf16 in, bf16 acc", &LOWP_FMT_BF16, &LOWP_FMT_BF16, NULL, LOWP_RND_NE, LOWP_RND_NE,
       LOWP_DIST_NORMAL},
      {"fp16 in, fp16 prod, fp16 acc", &LOWP_FMT_FP16, &LOWP_FMT_FP16, &LOWP_FMT_FP16,
       LOWP_RND_NE, LOWP_RND_NE, LOWP_DIST_NORMAL},
      {"bf16 in, bf16 prod, bf16 acc", &LOWP_FMT_BF16, &LOWP_FMT_BF16, &LOWP_FMT_BF16,
       LOWP_RND_NE, LOWP_RND_NE, LOWP_DIST_NORMAL},
      {"fp16 in, fp16 acc rtz", &LOWP_FMT_FP16, &LOWP_FMT_FP16, NULL, LOWP_RND_TZ,
       LOWP_RND_NE, LOWP_DIST_NORMAL},
      {"fp64 in, fp64 acc (fma)", &LOWP_FMT_FP64, &LOWP_FMT_FP64, NULL, LOWP_RND_NE,
       LOWP_RND_NE, LOWP_DIST_NORMAL},
  };
  gopts_t o = {1024, 2, 3, 11, T_ACC | T_ORD | T_TC, NULL};
  size_t i;
  int bad = 0;
  parse(&o, argc, argv);
  if (!o.isa) o.isa = lowp_isa_name(lowp_cpu_isa(1));
  omp_set_num_threads(1);
  printf("lowp bench gemm: m = n = k = %zu, one thread (CPU time), seed %llu, isa %s; ns per "
         "multiply-add; ref on the first %zu rows, fast and sgemm best of %d, exact once\n",
         o.n, (unsigned long long)o.seed, o.isa, o.rows < o.n ? o.rows : o.n, o.reps);
  if (o.tables & T_ACC) {
    printf("%-34s %-6s %9s %9s %9s %9s %9s %9s  %s\n", "case (recursive order)", "kernel", "ref",
           "fast", "sgemm", "exact", "ref/fast", "fast/S", "fast==ref");
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) bad |= run_gcase(&cases[i], &o);
    printf("target (issue 22): fast <= 0.2 ns per multiply-add at N = 1024, one thread\n");
  }
  if (o.tables & T_ORD) {
    printf("%-44s %9s %9s %9s %9s %9s  %s\n", "summation order (lowp_accum_dot)", "ref",
           "fast", "rec", "ref/fast", "fast/rec", "fast==ref");
    for (i = 0; i < sizeof ocases / sizeof ocases[0]; i++) bad |= run_ocase(&ocases[i], &o);
    printf("target (issue 22): pairwise, blocked and splitk within 2x of the recursive path "
           "(fast/rec <= 2)\n");
  }
  if (o.tables & T_TC) {
    printf("%-34s %-6s %9s %9s %9s %9s %9s %9s  %s\n", "tensor-core model (gemm_tc)", "kernel",
           "ref", "fast", "sgemm", "exact", "ref/fast", "fast/S", "bits");
    for (i = 0; i < sizeof tcases / sizeof tcases[0]; i++) bad |= run_tcase(&tcases[i], &o);
    printf("target (issue 22): tensor-core models <= 2 ns per multiply-add at N = 1024\n");
    bad |= lowp__bench_gemm_bs(o.n, o.rows, o.reps, o.seed, o.isa);
  }
  return bad ? LOWP_EXIT_CHECK : LOWP_EXIT_OK;
}
