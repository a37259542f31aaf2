/* lowp bench exact -- the exact GEMM reference against an MPFR loop and OpenBLAS */

/*
 * What it times, side by side in one run on the same inputs, one thread
 * (process CPU time), m = n = k = N for each N of --sizes (512,2048,4096;
 * --quick: 512), for fp16, bf16, fp32, e4m3, e5m2 inputs with standard
 * normal and uniform [-1, 1) data, one fp32 wide-exponent case
 * (LOWP_DIST_SPREAD: exponents over the whole range; full slicing costs
 * as much as the accumulator, so the truncated form is chosen where it pays
 * and the accumulator below that, e.g. at N = 37), and two cases of data with a few far-off entries:
 *   grad     fp32 "gradient-like" data: magnitudes log-uniform on
 *            [2^-40, 1], random signs (rows span about 64 bits; the low
 *            slices hold few nonzeros and are multiplied as sparse slices)
 *   offgrid  fp16 normal data with 16 entries per matrix off the fp16 grid
 *            (8 times x (1 + 2^-30), 8 times x 2^-40): a handful of entries
 *            that widen their rows
 * and prints each case's time over the fp32 normal case's ("x fp32n"):
 *   exact   lowp_exact_gemm_ex, best of 2 (automatic choice; the slices per row of A /
 *           column of B and the share of outputs taken from slices printed;
 *           "trunc D doubt x%": the truncated form's diagonals, 0 when not
 *           used, and the share of outputs its bound left to the
 *           accumulator), all outputs rounded to fp64
 *   acc     the same, accumulator only (LOWP_GEMM_ACC); --no-acc skips it
 *   mpfr    the cheapest exact MPFR loop, lowp_exact_gemm_plain_mpfr
 *           (lib/exact/gemm_mpfr.c: operands at the input precision,
 *           products at twice it, accumulator as wide as these data need),
 *           on the first --rows rows, reported per multiply-add
 *   sgemm / dgemm   OpenBLAS on the same data, one thread, best of 3
 *           (1 above N = 1024): the ratios "x S", "x D" are against these.
 *   DGEMM floor     the slice-pair DGEMM calls alone (calls x dgemm time):
 *           the cost of the method without splitting and combining.
 * Validation first (docs/style.md B8): exact == acc on every output and == the MPFR
 * loop on the sampled rows, bit for bit; a case that does not validate
 * prints no timings. --big also times the 4096^3 fp16 exact GEMM on
 * --threads threads (wall time).
 *
 * Run: lowp bench exact [--sizes N1,N2] [--quick] [--formats F1,..] [--rows R] [--seed S] [--no-acc]
 *                       [--big] [--threads T]
 * Exit: 0, or 1 if validation failed; 2 on bad usage.
 */

#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cli.h"
#include "exact/exact.h"
#include "rng/dist.h"
#include "rng/rng.h"

#include <cblas.h>
void openblas_set_num_threads(int num_threads);

/* ------------------------------------------------------ private helpers */

/* Single-thread timings use the process's CPU time, which other processes
   sharing the machine do not inflate; --big (several threads) uses wall
   time (wall = 1). */
double lowp_bench_clock_s(int wall) {
  struct timespec t;
  clock_gettime(wall ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The MPFR baseline on rows [0, rows): c[i*n+j] = RN64(sum_l a*b); CPU
   seconds, operand conversion included (k n + rows k sets) */
static double plain_baseline(double *c, const double *a, const double *b, size_t rows,
                            size_t n, size_t k, int pin) {
  double t0 = lowp_bench_clock_s(0);
  if (lowp_exact_gemm_plain_mpfr(c, a, b, rows, n, k, pin, &LOWP_FMT_FP64, LOWP_RND_NE))
    lowp_cli_die("bench", "the MPFR baseline failed");
  return lowp_bench_clock_s(0) - t0;
}

static void gen(double *x, size_t len, const lowp_format_t *f, lowp_dist_kind_t kind,
                uint64_t seed, uint32_t stream) {
  lowp_dist_t d = {kind, 0, 0};
  if (lowp_dist_fill(x, len, &d, f, seed, stream) != 0)
    lowp_cli_die("bench", "input generation failed");
}

/* the cases beyond a format and a distribution (see the top comment) */
enum { CASE_PLAIN = 0, CASE_GRAD = 1, CASE_OFFGRID = 2 };

/* inputs of a case: gen's, or the gradient-like / off-grid data */
static void gen_case(double *x, size_t len, const lowp_format_t *f, lowp_dist_kind_t kind,
                     int which, uint64_t seed, uint32_t stream) {
  size_t i;
  if (which == CASE_GRAD) {
    lowp_dist_t d = {LOWP_DIST_LOGUNIFORM, ldexp(1.0, -40), 1.0};
    if (lowp_dist_fill(x, len, &d, f, seed, stream) != 0)
      lowp_cli_die("bench", "input generation failed");
    for (i = 0; i < len; i++)
      if (lowp_rng_u64(seed, i, stream + 100) & 1) x[i] = -x[i];
    return;
  }
  gen(x, len, f, kind, seed, stream);
  if (which == CASE_OFFGRID)
    for (i = 0; i < 16; i++) {
      size_t at = (size_t)(lowp_rng_u64(seed, i, stream + 200) % len);
      x[at] = i < 8 ? x[at] * (1.0 + ldexp(1.0, -30)) : ldexp(x[at], -40);
    }
}

double lowp_bench_time_blas(int dbl, const double *a, const double *b, size_t N, int reps) {
  size_t len = N * N, i;
  double best = 1e30, t;
  int rep;
  openblas_set_num_threads(1);
  if (dbl) {
    double *dc = malloc(len * sizeof *dc);
    if (!dc) lowp_cli_die("bench", "out of memory for dgemm");
    for (rep = 0; rep < reps; rep++) {
      t = lowp_bench_clock_s(0);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)N, (int)N, (int)N, 1.0, a,
                  (int)N, b, (int)N, 0.0, dc, (int)N);
      t = lowp_bench_clock_s(0) - t;
      if (t < best) best = t;
    }
    free(dc);
  } else {
    float *fa = malloc(len * sizeof *fa), *fb = malloc(len * sizeof *fb),
          *fc = malloc(len * sizeof *fc);
    if (!fa || !fb || !fc) lowp_cli_die("bench", "out of memory for sgemm");
    for (i = 0; i < len; i++) { fa[i] = (float)a[i]; fb[i] = (float)b[i]; }
    for (rep = 0; rep < reps; rep++) {
      t = lowp_bench_clock_s(0);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)N, (int)N, (int)N, 1.0f, fa,
                  (int)N, fb, (int)N, 0.0f, fc, (int)N);
      t = lowp_bench_clock_s(0) - t;
      if (t < best) best = t;
    }
    free(fa);
    free(fb);
    free(fc);
  }
  return best;
}

/* One case: same inputs for every method; validate, then report. Returns 1
   if validation failed. *t_out: the exact GEMM's time; t_ref > 0: the fp32
   normal case's, printed as a ratio. */
static int run_case(const lowp_format_t *fin, lowp_dist_kind_t kind, int which, size_t N,
                    size_t rows, uint64_t seed, int no_acc, double *t_out, double t_ref) {
  size_t len = N * N, i, bad = 0;
  double *a = malloc(len * sizeof *a), *b = malloc(len * sizeof *b);
  double *c = malloc(len * sizeof *c), *ca = malloc(len * sizeof *ca),
         *cm = malloc(rows * N * sizeof *cm);
  double t_sl, t_acc = 0, t_mpfr, t_s, t_d, macs = (double)N * N * N, floor_;
  lowp_gemm_opts_t oa = {.method = LOWP_GEMM_ACC};
  lowp_gemm_stats_t st;
  const char *dn = which == CASE_GRAD ? "grad" : which == CASE_OFFGRID ? "offgrid"
                                                                      : lowp_dist_name(kind);
  /* off-grid entries need all 53 bits in the MPFR loop */
  int pin = which == CASE_OFFGRID ? 53 : fin->precision;
  *t_out = 0.0;
  if (!a || !b || !c || !ca || !cm) lowp_cli_die("bench", "out of memory at size %zu", N);
  gen_case(a, len, fin, kind, which, seed, 1);
  gen_case(b, len, fin, kind, which, seed, 2);

  omp_set_num_threads(1);
  /* best of 2, as the BLAS calls are timed best of 3: the first call of a
     process also pays the page faults of fresh scratch memory */
  t_sl = 1e30;
  for (i = 0; i < 2; i++) {
    double t = lowp_bench_clock_s(0);
    if (lowp_exact_gemm_ex(c, a, b, NULL, N, N, N, &LOWP_FMT_FP64, NULL, LOWP_RND_NE, NULL, &st))
      lowp_cli_die("bench", "lowp_exact_gemm failed");
    t = lowp_bench_clock_s(0) - t;
    if (t < t_sl) t_sl = t;
  }
  if (!no_acc) {
    t_acc = lowp_bench_clock_s(0);
    if (lowp_exact_gemm_ex(ca, a, b, NULL, N, N, N, &LOWP_FMT_FP64, NULL, LOWP_RND_NE, &oa,
                           NULL))
      lowp_cli_die("bench", "lowp_exact_gemm failed");
    t_acc = lowp_bench_clock_s(0) - t_acc;
    for (i = 0; i < len; i++)
      if (memcmp(&c[i], &ca[i], sizeof c[i]) != 0 && bad++ < 5)
        printf("  MISMATCH C[%zu][%zu]: sliced %a acc %a\n", i / N, i % N, c[i], ca[i]);
  }
  t_mpfr = plain_baseline(cm, a, b, rows, N, N, pin);
  for (i = 0; i < rows * N; i++)
    if (memcmp(&c[i], &cm[i], sizeof c[i]) != 0 && bad++ < 5)
      printf("  MISMATCH C[%zu][%zu]: sliced %a mpfr %a\n", i / N, i % N, c[i], cm[i]);
  if (bad) {
    printf("%-5s %-9s %5zu VALIDATION FAILED: %zu mismatches; no timings\n", fin->name, dn, N,
           bad);
    free(a); free(b); free(c); free(ca); free(cm);
    return 1;
  }
  t_s = lowp_bench_time_blas(0, a, b, N, N <= 1024 ? 3 : 1);
  t_d = lowp_bench_time_blas(1, a, b, N, N <= 1024 ? 3 : 1);
  floor_ = (double)st.dgemm_calls * t_d;
  *t_out = t_sl;
#define NS(t) (1e9 * (t) / macs)
  /* trunc: the truncated form's diagonals D (0: full slices) and the share
     of outputs its bound left in doubt (computed by the accumulator) */
  printf("%-5s %-9s %5zu | slices %2dx%-2d s=%2d+%-2d sliced %5.1f%% sparse %2zu trunc %2d"
         " doubt %5.2f%% | exact %7.3f ns %6.1fx S %5.1fx D (DGEMM floor %5.1fx D)",
         fin->name, dn, N, st.slices_a, st.slices_b, st.slice_bits_a, st.slice_bits_b,
         100.0 * (double)st.sliced_outputs / (double)len, st.sparse_products,
         st.trunc_diagonals, 100.0 * (double)st.trunc_undecided / (double)len, NS(t_sl),
         t_sl / t_s, t_sl / t_d, floor_ / t_d);
  if (t_ref > 0) printf(" %5.2fx fp32n", t_sl / t_ref);
  printf(" | acc ");
  if (no_acc) printf("   (skipped)          ");
  else printf("%7.3f ns %6.1fx S", NS(t_acc), t_acc / t_s);
  printf(" | mpfr %7.1f ns (%zu rows) | sgemm %6.4f ns dgemm %6.4f ns\n",
         1e9 * t_mpfr / ((double)rows * N * N), rows, NS(t_s), NS(t_d));
#undef NS
  fflush(stdout);
  free(a);
  free(b);
  free(c);
  free(ca);
  free(cm);
  return 0;
}

static void run_big(size_t N, int threads, uint64_t seed) {
  size_t len = N * N;
  double *a = malloc(len * sizeof *a), *b = malloc(len * sizeof *b),
         *c = malloc(len * sizeof *c), t;
  lowp_gemm_stats_t st;
  if (!a || !b || !c) lowp_cli_die("bench", "out of memory for --big (%zu^2 x 3 doubles)", N);
  gen(a, len, &LOWP_FMT_FP16, LOWP_DIST_NORMAL, seed, 1);
  gen(b, len, &LOWP_FMT_FP16, LOWP_DIST_NORMAL, seed, 2);
  omp_set_num_threads(threads);
  t = lowp_bench_clock_s(1);
  if (lowp_exact_gemm_ex(c, a, b, NULL, N, N, N, &LOWP_FMT_FP64, NULL, LOWP_RND_NE, NULL, &st))
    lowp_cli_die("bench", "lowp_exact_gemm failed");
  t = lowp_bench_clock_s(1) - t;
  printf("big: exact fp16 GEMM %zu^3 on %d threads (wall): %.1f s, %dx%d slices\n", N, threads,
         t, st.slices_a, st.slices_b);
  free(a);
  free(b);
  free(c);
}

/* ----------------------------------------------------------------- main */

int lowp_bench_exact(int argc, char **argv) {
  size_t sizes[8] = {512, 2048, 4096}, nsizes = 3, rows = 0, z;
  uint64_t seed = 7;
  int big = 0, threads = 2, no_acc = 0, i, bad = 0, want[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  static const char *const extra[] = {"spread", "grad", "offgrid"};
  static const lowp_format_t *fmts[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_FP32,
                                        &LOWP_FMT_E4M3, &LOWP_FMT_E5M2};
  for (i = 1; i < argc; i++) {
    const char *arg = argv[i], *val = NULL;
    char key[32];
    const char *eq = strchr(arg, '=');
    if (eq && (size_t)(eq - arg) < sizeof key) {
      memcpy(key, arg, (size_t)(eq - arg));
      key[eq - arg] = 0;
      val = eq + 1;
      arg = key;
    }
#define VAL() (val ? val : (i + 1 < argc ? argv[++i] : (lowp_cli_die("bench", "%s needs a value", arg), "")))
    if (!strcmp(arg, "--sizes") || !strcmp(arg, "--size")) {
      char buf[256], *tok, *save = NULL;
      snprintf(buf, sizeof buf, "%s", VAL());
      lowp_cli_list_check("bench", "--sizes", buf, ',');
      nsizes = 0;
      for (tok = strtok_r(buf, ",", &save); tok && nsizes < 8; tok = strtok_r(NULL, ",", &save))
        sizes[nsizes++] = (size_t)lowp_cli_int("bench", "--sizes", tok, 1, 65536);
      if (nsizes == 0) lowp_cli_die("bench", "--sizes: no size given");
    } else if (!strcmp(arg, "--formats")) {
      char buf[256], *tok, *save = NULL;
      size_t q;
      snprintf(buf, sizeof buf, "%s", VAL());
      lowp_cli_list_check("bench", "--formats", buf, ',');
      memset(want, 0, sizeof want);
      for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        for (q = 0; q < 8 && strcmp(tok, q < 5 ? fmts[q]->name : extra[q - 5]); q++) {}
        if (q == 8)
          lowp_cli_die("bench", "--formats: unknown case '%s' (fp16, bf16, fp32, e4m3, e5m2, "
                       "spread, grad, offgrid)", tok);
        want[q] = 1;
      }
    } else if (!strcmp(arg, "--rows"))
      rows = (size_t)lowp_cli_int("bench", "--rows", VAL(), 1, 65536);
    else if (!strcmp(arg, "--seed"))
      seed = (uint64_t)lowp_cli_int("bench", "--seed", VAL(), 0, INT64_MAX);
    else if (!strcmp(arg, "--threads"))
      threads = (int)lowp_cli_int("bench", "--threads", VAL(), 1, 1024);
    else if (!strcmp(arg, "--quick") && !val) {
      sizes[0] = 512;
      nsizes = 1;
    } else if (!strcmp(arg, "--no-acc") && !val)
      no_acc = 1;
    else if (!strcmp(arg, "--big") && !val)
      big = 1;
    else if (!strcmp(arg, "--help") && !val) {
      printf("usage: lowp bench exact [--sizes N1,N2,..] [--quick] [--formats F1,F2,..]\n"
             "                        [--rows R] [--seed S]\n"
             "                        [--no-acc] [--big] [--threads T]\n"
             "  Times, on the same inputs, single thread: the exact GEMM (sliced path where\n"
             "  chosen), the accumulator alone, the MPFR loop (first R rows), OpenBLAS sgemm\n"
             "  and dgemm; fp16, bf16, fp32, e4m3, e5m2 inputs, normal and uniform data, and\n"
             "  an fp32 wide-exponent case (the accumulator must be chosen). Sizes default to\n"
             "  512,2048,4096 (--quick: 512). Ratios: x S = time / sgemm, x D = / dgemm;\n"
             "  DGEMM floor = the slice-pair DGEMM calls alone. --big: 4096^3 fp16 on T threads.\n"
             "  --formats: a subset of fp16,bf16,fp32,e4m3,e5m2,spread,grad,offgrid (default\n"
             "  all). grad: fp32, magnitudes log-uniform on [2^-40, 1], random signs;\n"
             "  offgrid: fp16 normal with 16 entries off the fp16 grid. x fp32n: time over\n"
             "  the fp32 normal case's (run when fp32 is among the cases).\n");
      return 0;
    } else
      lowp_cli_die("bench", "unknown or incomplete option '%s' (see --help)", argv[i]);
#undef VAL
  }
  printf("lowp bench exact: m=n=k=N, one thread (CPU time), seed %llu; exact results rounded to "
         "fp64; ns per multiply-add; validated bit for bit (sliced == accumulator on all "
         "outputs, == MPFR loop on the sampled rows)\n", (unsigned long long)seed);
  for (z = 0; z < nsizes; z++) {
    size_t N = sizes[z], r = rows ? rows : (16 * 512 * 512) / (N * N);
    size_t fi;
    double t, tn = 0.0;
    if (r < 1) r = 1;
    if (r > N) r = N;
    for (fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
      if (!want[fi]) continue;
      bad |= run_case(fmts[fi], LOWP_DIST_NORMAL, CASE_PLAIN, N, r, seed, no_acc, &t, tn);
      if (fmts[fi] == &LOWP_FMT_FP32) tn = t;
      bad |= run_case(fmts[fi], LOWP_DIST_UNIFORM11, CASE_PLAIN, N, r, seed, no_acc, &t, tn);
    }
    if (want[5])
      bad |= run_case(&LOWP_FMT_FP32, LOWP_DIST_SPREAD, CASE_PLAIN, N, r, seed, no_acc, &t, tn);
    if (want[6])
      bad |= run_case(&LOWP_FMT_FP32, LOWP_DIST_NORMAL, CASE_GRAD, N, r, seed, no_acc, &t, tn);
    if (want[7])
      bad |= run_case(&LOWP_FMT_FP16, LOWP_DIST_NORMAL, CASE_OFFGRID, N, r, seed, no_acc, &t,
                      tn);
  }
  if (big) run_big(4096, threads, seed);
  return bad ? LOWP_EXIT_CHECK : LOWP_EXIT_OK;
}
