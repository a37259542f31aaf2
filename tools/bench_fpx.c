/* lowp bench fpx -- the cost of exception tracing: each traced path beside the same path untraced */

/*
 * Run: lowp bench fpx [--n N] [--reps R] [--seed S] [--strict]
 * One thread, process CPU time (the machines are shared; ratios side by side, docs/style.md
 * B8). Each case first checks that the traced run gives the untraced bits,
 * then times both (best of R) and prints the ratio traced / untraced.
 *   gemm_acc  fp16 accumulation of exact fp16 products, N^3 (the reference
 *             path: a traced GEMM always runs it), clean data
 *   gemm_acc  the same on data that overflows fp16 in every output
 *   gemm_tc   the h100 model, fp16 in, fp32 out, N^3, clean data
 *   cast      16 N^2 binary64 values rounded to e4m3 (lowp_round_array_f64
 *             vs lowp_fpx_round_array_f64 with a trace)
 *   off       the untraced reference timed twice (A/A): the noise of the
 *             machine, against which "tracing off costs nothing" is read
 * --strict: exit 1 unless every clean traced case is <= 1.25x.
 */

#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "cpu/gemm_acc.h"
#include "cpu/gemm_tc.h"
#include "measure/fpx.h"
#include "rng/rng.h"
#include "status.h"

#define CMD "bench fpx"

typedef struct {
  const double *a, *b;
  size_t n;
  int traced, tc;
  lowp_gemm_acc_cfg_t g;
  lowp_gemm_tc_cfg_t t;
  lowp_fpx_trace_t tr;
} job_t;

/* one run into c; returns seconds */
static double run_gemm(job_t *j, double *c) {
  double t0;
  size_t n = j->n;
  memset(c, 0, n * n * sizeof *c);
  lowp_fpx_init(&j->tr);
  t0 = lowp_bench_clock_s(0);
  if (j->tc) {
    if (j->traced) lowp_gemm_tc_fpx(c, j->a, j->b, n, n, n, &j->t, &j->tr);
    else lowp_gemm_tc_scalar(c, j->a, j->b, n, n, n, &j->t);
  } else {
    if (j->traced) lowp_gemm_acc_fpx(c, j->a, j->b, n, n, n, &j->g, &j->tr);
    else lowp_gemm_acc_scalar(c, j->a, j->b, n, n, n, &j->g);
  }
  return lowp_bench_clock_s(0) - t0;
}

static double run_cast(const double *x, double *y, size_t n, int traced) {
  lowp_fpx_trace_t t;
  double t0;
  lowp_fpx_init(&t);
  t0 = lowp_bench_clock_s(0);
  lowp_fpx_round_array_f64(traced ? &t : NULL, 0, y, x, n, &LOWP_FMT_E4M3, NULL, LOWP_RND_NE);
  return lowp_bench_clock_s(0) - t0;
}

/* best of reps of untraced (A) and traced (B), interleaved; bits must agree */
static int gemm_case(const char *name, job_t *j, int reps, double *ratio) {
  size_t n = j->n;
  double *c0 = malloc(n * n * sizeof *c0), *c1 = malloc(n * n * sizeof *c1), ta = INFINITY, tb = INFINITY;
  int r, ok;
  if (!c0 || !c1) lowp_cli_die(CMD, "out of memory");
  for (r = 0; r < reps; r++) {
    double t;
    j->traced = 0;
    if ((t = run_gemm(j, c0)) < ta) ta = t;
    j->traced = 1;
    if ((t = run_gemm(j, c1)) < tb) tb = t;
  }
  ok = !memcmp(c0, c1, n * n * sizeof *c0);
  *ratio = tb / ta;
  printf("  %-28s %10.4f %10.4f %8.3fx  %s; events %llu\n", name, ta, tb, *ratio,
         ok ? "same bits" : "BITS DIFFER", (unsigned long long)(j->tr.count[LOWP_FPX_OVF_INF] +
                                                                 j->tr.count[LOWP_FPX_SATURATE]));
  free(c0);
  free(c1);
  return ok;
}

int lowp_bench_fpx(int argc, char **argv) {
  size_t n = 96, i, nn;
  int reps = 3, strict = 0, ok = 1, a;
  uint64_t seed = 1;
  double *A, *B, *Abig, *x, *y, r1, r2, r3, r4, ta = INFINITY, tb = INFINITY, t0a = INFINITY, t0b = INFINITY;
  job_t j;
  for (a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
      printf("usage: lowp bench fpx [--n N] [--reps R] [--seed S] [--strict]\n\n"
             "Exception tracing (lowp fpx, gemm --fpx) against the same path untraced,\n"
             "one thread, best of R: gemm_acc (fp16 accumulation, N^3, clean and\n"
             "overflowing data), gemm_tc (h100 model, N^3), a cast of N^2 values to\n"
             "e4m3, and the untraced path timed twice (the noise). --strict: exit 1\n"
             "unless each clean traced case is at most 1.25x.\n");
      return LOWP_EXIT_OK;
    } else if (!strcmp(argv[a], "--n")) n = (size_t)lowp_cli_int(CMD, "--n", lowp_cli_need_arg(CMD, argc, argv, &a), 8, 4096);
    else if (!strcmp(argv[a], "--reps")) reps = (int)lowp_cli_int(CMD, "--reps", lowp_cli_need_arg(CMD, argc, argv, &a), 1, 100);
    else if (!strcmp(argv[a], "--seed")) seed = (uint64_t)lowp_cli_int(CMD, "--seed", lowp_cli_need_arg(CMD, argc, argv, &a), 0, INT64_MAX);
    else if (!strcmp(argv[a], "--strict")) strict = 1;
    else lowp_cli_die(CMD, "unknown option %s (lowp bench fpx --help)", argv[a]);
  }
  omp_set_num_threads(1);
  nn = n * n;
  A = malloc(nn * sizeof *A);
  B = malloc(nn * sizeof *B);
  Abig = malloc(nn * sizeof *Abig);
  x = malloc(nn * 16 * sizeof *x);
  y = malloc(nn * 16 * sizeof *y);
  if (!A || !B || !Abig || !x || !y) lowp_cli_die(CMD, "out of memory");
  for (i = 0; i < nn; i++) {
    lowp_round_f64(&A[i], 2 * (double)lowp_rng_u32(seed, i, 1) * 0x1p-32 - 1, &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
    lowp_round_f64(&B[i], 2 * (double)lowp_rng_u32(seed, i, 2) * 0x1p-32 - 1, &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
    Abig[i] = fabs(A[i]) * 60000.0 + 1000.0;
    lowp_round_f64(&Abig[i], Abig[i], &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
  }
  for (i = 0; i < nn * 16; i++) x[i] = 400 * (2 * (double)lowp_rng_u32(seed, i, 3) * 0x1p-32 - 1);
  printf("lowp bench fpx: n=%zu, 1 thread, best of %d (seconds; traced / untraced)\n", n, reps);
  printf("  %-28s %10s %10s %9s\n", "case", "untraced", "traced", "ratio");
  memset(&j, 0, sizeof j);
  j.a = A; j.b = B; j.n = n;
  j.g.acc = &LOWP_FMT_FP16;
  j.g.acc_rnd = LOWP_RND_NE;
  ok &= gemm_case("gemm_acc fp16, clean", &j, reps, &r1);
  j.a = Abig;
  ok &= gemm_case("gemm_acc fp16, overflowing", &j, reps, &r2);
  j.a = A;
  j.tc = 1;
  if (lowp_gemm_tc_config(&j.t, "h100", -1, &LOWP_FMT_FP16, &LOWP_FMT_FP32, NULL, 0))
    lowp_cli_die(CMD, "the h100 model has no fp16 datapath");
  ok &= gemm_case("gemm_tc h100 fp16, clean", &j, reps, &r3);
  for (a = 0; a < reps; a++) {
    double t;
    if ((t = run_cast(x, y, nn * 16, 0)) < ta) ta = t;
    if ((t = run_cast(x, y, nn * 16, 1)) < tb) tb = t;
  }
  r4 = tb / ta;
  printf("  %-28s %10.4f %10.4f %8.3fx\n", "cast to e4m3, clean", ta, tb, r4);
  /* A/A: the untraced reference twice; the only cost of tracing off is one
     NULL test per rounding in the reference paths (none in the fast paths) */
  j.tc = 0;
  for (a = 0; a < reps; a++) {
    double *c = malloc(nn * sizeof *c), t;
    j.traced = 0;
    if ((t = run_gemm(&j, c)) < t0a) t0a = t;
    if ((t = run_gemm(&j, c)) < t0b) t0b = t;
    free(c);
  }
  printf("  %-28s %10.4f %10.4f %8.3fx  (A/A: the machine's noise)\n", "off: gemm_acc untraced x2",
         t0a, t0b, t0b / t0a);
  printf("  target: traced <= 1.25x on clean data: %s\n",
         r1 <= 1.25 && r3 <= 1.25 && r4 <= 1.25 ? "met" : "MISSED");
  free(A); free(B); free(Abig); free(x); free(y);
  if (!ok) return LOWP_EXIT_CHECK;
  if (strict && !(r1 <= 1.25 && r3 <= 1.25 && r4 <= 1.25)) return LOWP_EXIT_CHECK;
  (void)r2;
  return LOWP_EXIT_OK;
}
