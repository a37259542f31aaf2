/* lowp bench check -- the measurement pipeline's speed: a 1024^3 fp16 GEMM check and a spec of 50 small checks */

/*
 * Part 1: one check of an m = n = k = 1024 GEMM, fp16 inputs, fp32 output,
 * through lowp_check_measure (subject, exact reference and |A||B|, metrics,
 * bounds) and a gamma-bound rule. The subject is a native fp32 kernel (the
 * kind of fast kernel a user brings: products of fp16 values are exact in
 * fp32, every addition is one IEEE fp32 addition in recursive order); before
 * timing it is checked bit for bit against lowp's emulating twin
 * (kernels/cpu/gemm_acc, recursive fp32) on a 96 x 80 x 300 problem.
 * Part 2: a spec of 50 small checks (gemm_acc kernels, 32..96-sized GEMMs,
 * gamma, probabilistic, nan_inf and rtol/atol rules) run by `lowp check` in a
 * child process, timed end to end (skipped when the build has no kernel
 * subjects).
 *
 * Run: lowp bench check [--size N] [--threads T] [--seed S] [--strict]
 *      --strict: exit 1 unless part 1 takes < 10 s and part 2 < 10 s.
 */

#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "check/pipeline.h"
#include "cli.h"
#include "cpu/gemm_acc.h"
#include "status.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* the native subject: fp32 recursive accumulation of exact fp16 products */
static int native_run(const lowp_subject_t *s, double *const *out, const double *const *in,
                      const lowp_problem_t *p, char *err, size_t errlen) {
  size_t m = p->dims.m, n = p->dims.n, k = p->dims.k;
  float *bt = malloc(k * n * sizeof *bt), *a = malloc(m * k * sizeof *a);
  long long i;
  size_t j, q;
  (void)s;
  if (!bt || !a) {
    free(bt);
    free(a);
    snprintf(err, errlen, "out of memory");
    return LOWP_ENOMEM;
  }
  for (q = 0; q < k; q++)
    for (j = 0; j < n; j++) bt[j * k + q] = (float)in[1][q * n + j];
  for (q = 0; q < m * k; q++) a[q] = (float)in[0][q];
#pragma omp parallel for schedule(static) private(j, q)
  for (i = 0; i < (long long)m; i++)
    for (j = 0; j < n; j++) {
      const float *ar = a + (size_t)i * k, *bc = bt + j * k;
      float acc = 0.0f;
      for (q = 0; q < k; q++) {
        float prod = ar[q] * bc[q]; /* exact: 11 x 11 significant bits */
        acc = acc + prod;           /* one IEEE fp32 addition (no contraction: -ffp-contract=off) */
      }
      out[0][(size_t)i * n + j] = (double)acc;
    }
  free(bt);
  free(a);
  return LOWP_OK;
}

static lowp_subject_t native_subject(void) {
  lowp_subject_t s;
  memset(&s, 0, sizeof s);
  snprintf(s.name, sizeof s.name, "native fp32 recursive (fp16 inputs)");
  s.kind = "kernel";
  s.run = native_run;
  s.has_accum = 1;
  s.accum.order = LOWP_ACC_RECURSIVE;
  s.accum.acc = LOWP_FMT_FP32;
  s.accum.rnd = LOWP_RND_NE;
  s.accum.fma = 1;
  return s;
}

static lowp_problem_t gemm_problem(size_t m, size_t n, size_t k) {
  lowp_problem_t p;
  memset(&p, 0, sizeof p);
  p.op = lowp_op_by_name("gemm");
  p.dims.batch = 1;
  p.dims.m = m;
  p.dims.n = n;
  p.dims.k = k;
  p.in[0] = p.in[1] = LOWP_FMT_FP16;
  p.out = LOWP_FMT_FP32;
  return p;
}

/* the native subject equals lowp's emulating twin, bit for bit */
static int validate(uint64_t seed) {
  lowp_problem_t p = gemm_problem(96, 80, 300);
  lowp_check_inputs_t in;
  lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
  lowp_subject_t s = native_subject();
  lowp_gemm_acc_cfg_t cfg;
  double *want = calloc(96 * 80, sizeof *want), *got = calloc(96 * 80, sizeof *got);
  double *outs[1] = {got};
  char err[200];
  size_t i, diff = 0;
  if (!want || !got || lowp_check_inputs_generate(&in, &p, &d, seed)) lowp_cli_die("bench", "out of memory");
  memset(&cfg, 0, sizeof cfg);
  cfg.acc = &LOWP_FMT_FP32;
  cfg.acc_rnd = LOWP_RND_NE;
  cfg.order = LOWP_ORDER_RECURSIVE;
  (void)lowp_gemm_acc_ref(want, in.x[0], in.x[1], 96, 80, 300, &cfg);
  (void)native_run(&s, outs, (const double *const *)in.x, &p, err, sizeof err);
  for (i = 0; i < 96 * 80; i++)
    if (memcmp(&want[i], &got[i], sizeof got[i])) diff++;
  printf("  validation: native fp32 kernel vs lowp's gemm_acc twin on 96x80x300: %zu of %d "
         "elements differ\n", diff, 96 * 80);
  free(want);
  free(got);
  lowp_check_inputs_free(&in);
  return diff == 0;
}

static double big_check(size_t N, uint64_t seed, int *ok) {
  lowp_problem_t p = gemm_problem(N, N, N);
  lowp_check_inputs_t in;
  lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
  lowp_subject_t s = native_subject();
  lowp_check_result_t r;
  lowp_rule_t rule;
  lowp_verdict_t v;
  char err[300];
  double t0 = now_s(), t_gen, t_meas, t_rule, total;
  if (lowp_check_inputs_generate(&in, &p, &d, seed)) lowp_cli_die("bench", "out of memory");
  t_gen = now_s() - t0;
  t0 = now_s();
  if (lowp_check_measure(&r, &p, &s, &in, NULL, err, sizeof err))
    lowp_cli_die("bench", "measurement failed: %s", err);
  t_meas = now_s() - t0;
  t0 = now_s();
  memset(&rule, 0, sizeof rule);
  rule.kind = LOWP_RULE_BOUND;
  rule.bound = LOWP_BOUND_GAMMA;
  rule.limit = 1;
  (void)lowp_check_rule_eval(&v, &rule, &r, &s);
  t_rule = now_s() - t0;
  total = t_gen + t_meas + t_rule;
  printf("  %zu^3 fp16 GEMM, fp32 out: inputs %.2f s, subject %.2f s, exact + |A||B| %.2f s, "
         "metrics %.2f s, rule %.3f s; total %.2f s on %d threads\n", N, t_gen, r.time_subject_s,
         r.time_exact_s, t_meas - r.time_subject_s - r.time_exact_s, t_rule, total,
         omp_get_max_threads());
  printf("  verdict: %s (%s); max %.3g ulp\n", v.pass ? "PASS" : "FAIL", v.msg, r.max_ulp);
  *ok = v.pass && r.out[0].n_class_mismatch == 0;
  lowp_check_result_free(&r);
  lowp_check_inputs_free(&in);
  return total;
}

/* 50 small checks as a spec, run by `lowp check` in a child process */
static double small_spec(uint64_t seed, int threads, int nchecks, int *ran) {
  char dir[] = "/tmp/lowp-bench-check.XXXXXX", path[256], exe[4096], th[32];
  FILE *f;
  int i, status;
  pid_t pid;
  double t0, t;
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  *ran = 0;
  if (len <= 0 || !mkdtemp(dir)) return 0;
  exe[len] = '\0';
  snprintf(path, sizeof path, "%s/spec.json", dir);
  f = fopen(path, "w");
  if (!f) return 0;
  fprintf(f, "{ \"lowp_check\": 1, \"defaults\": { \"in\": \"fp16\", \"out\": \"fp32\" },\n"
             "  \"checks\": [\n");
  for (i = 0; i < nchecks; i++) {
    static const char *orders[] = {"recursive", "pairwise", "blocked:16", "splitk:4", "kahan"};
    size_t m = 32 + (size_t)(i % 3) * 32, n = 32 + (size_t)(i % 2) * 32, k = 64 + (size_t)(i % 4) * 64;
    fprintf(f, "    { \"name\": \"c%02d\", \"op\": \"gemm\", \"subject\": { \"kernel\": \"gemm_acc\", "
               "\"params\": \"acc=fp32,order=%s\" }, \"shape\": { \"m\": %zu, \"n\": %zu, \"k\": %zu },"
               " \"inputs\": { \"dist\": \"normal\", \"seed\": %llu },"
               " \"rules\": [ { \"bound\": \"gamma\" }, %s{ \"nan_inf\": \"match\" }, "
               "{ \"rtol\": 1e-4, \"atol\": 1e-5 } ] }%s\n",
            i, orders[i % 5], m, n, k, (unsigned long long)(seed + (uint64_t)i),
            i % 5 == 4 ? "" : "{ \"bound\": \"prob\" }, ", i == nchecks - 1 ? "" : ",");
  }
  fprintf(f, "  ] }\n");
  fclose(f);
  snprintf(th, sizeof th, "%d", threads);
  t0 = now_s();
  pid = fork();
  if (pid == 0) {
    int fd = open("/dev/null", 1);
    if (fd >= 0) { dup2(fd, 1); dup2(fd, 2); }
    execl(exe, exe, "check", path, "--threads", th, (char *)NULL);
    _exit(127);
  }
  if (pid < 0 || waitpid(pid, &status, 0) < 0) status = -1;
  t = now_s() - t0;
  unlink(path);
  rmdir(dir);
  if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) <= 1) *ran = 1 + (WEXITSTATUS(status) == 0);
  return t;
}

int lowp_bench_check(int argc, char **argv) {
  size_t N = 1024;
  uint64_t seed = 7;
  int threads = 2, strict = 0, i, ok = 0, ran = 0, nchecks = 50;
  double t1, t2;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    if (!strncmp(a, "--size=", 7) || !strncmp(a, "--seed=", 7)) v = a + 7;
    else if (!strncmp(a, "--threads=", 10) || !strncmp(a, "--checks=", 9)) v = strchr(a, '=') + 1;
    else if (i + 1 < argc && (!strcmp(a, "--size") || !strcmp(a, "--seed") || !strcmp(a, "--threads") ||
                              !strcmp(a, "--checks")))
      v = argv[++i], a = argv[i - 1];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("usage: lowp bench check [--size N] [--checks C] [--threads T] [--seed S] [--strict]\n"
             "  a check of an N^3 fp16 GEMM (default 1024) through the pipeline, and a spec\n"
             "  of C small checks (default 50; 0: none) run by lowp check; --strict: exit 1\n"
             "  unless each part takes < 10 s\n");
      return 0;
    } else if (!strcmp(a, "--strict")) strict = 1;
    else if (v && !strncmp(a, "--size", 6)) N = (size_t)lowp_cli_int("bench", "--size", v, 1, 16384);
    else if (v && !strncmp(a, "--seed", 6)) seed = (uint64_t)lowp_cli_int("bench", "--seed", v, 0, INT64_MAX);
    else if (v && !strncmp(a, "--threads", 9)) threads = (int)lowp_cli_int("bench", "--threads", v, 1, 1024);
    else if (v && !strncmp(a, "--checks", 8)) nchecks = (int)lowp_cli_int("bench", "--checks", v, 0, 10000);
    else lowp_cli_die("bench", "unknown or incomplete option '%s' (see lowp bench check --help)", a);
  }
  omp_set_num_threads(threads);
  printf("lowp bench check: the measurement pipeline (subject + exact reference + metrics + rules), "
         "seed %llu\n", (unsigned long long)seed);
  if (!validate(seed)) {
    printf("  validation failed: the native subject is not the recursive fp32 kernel; not timed\n");
    return LOWP_EXIT_CHECK;
  }
  t1 = big_check(N, seed, &ok);
  t2 = nchecks ? small_spec(seed, threads, nchecks, &ran) : 0;
  if (!nchecks)
    printf("  spec of small checks: not asked for (--checks 0)\n");
  else if (ran)
    printf("  spec of %d small checks (gemm_acc kernels, 32..96 x 32..64 x 64..256, 3-4 rules "
           "each), lowp check end to end: %.2f s (%s)\n", nchecks, t2,
           ran == 2 ? "all passed" : "some failed");
  else
    printf("  spec of %d small checks: not run (lowp check refused the spec: does this build "
           "have kernel subjects with gemm_acc's orders?)\n", nchecks);
  if (!ok) return LOWP_EXIT_CHECK;
  if (strict && (t1 >= 10 || (ran && t2 >= 10))) return LOWP_EXIT_CHECK;
  return LOWP_EXIT_OK;
}
