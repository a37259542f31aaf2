/* lowp bench exact -- the exact GEMM reference against an MPFR loop and OpenBLAS */

/*
 * What it times, side by side in one run, single thread, m = n = k = 512
 * (--size), with fp16 and with fp32 inputs (standard normal, seeded):
 *   exact   lowp_exact_gemm, all m*n outputs, rounded to fp64
 *   mpfr    the straightforward MPFR loop: per output, a wide MPFR
 *           accumulator and one mpfr_mul + one mpfr_add per product; the
 *           accumulator's precision is what these data need to be exact
 *           (exponent span of the products + log2 k + 2 bits), operands at
 *           the input precision and products at twice it (exact), so it is
 *           the cheapest exact MPFR loop. Timed on the first --rows rows (16 by
 *           default) and reported per multiply-add, which is what scales.
 *   sgemm   OpenBLAS cblas_sgemm on the same data as float (fp32 out),
 *           one thread: what a fast approximate product costs.
 * Validation first (STYLE B8): on the MPFR rows the exact results must equal
 * the MPFR loop's, rounded to fp64, bit for bit; no number is printed for a
 * path that did not validate. --big also times the 4096^3 fp16 exact GEMM on
 * --threads threads (2 by default).
 *
 * Run: lowp bench exact [--size N] [--rows R] [--seed S] [--big] [--threads T] [--strict]
 * Exit: 0, or 1 if validation failed (or --strict and a ratio is below 50).
 */

#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpfr.h>

#include "bench.h"
#include "cli.h"
#include "exact/exact.h"
#include "format/round_mpfr.h"
#include "rng/dist.h"

#ifdef LOWP_HAVE_OPENBLAS
#include <cblas.h>
void openblas_set_num_threads(int num_threads);
#endif

/* ------------------------------------------------------ private helpers */

/* Single-thread timings use the process's CPU time, which other processes
   sharing the machine do not inflate; --big (several threads) uses wall
   time (wall = 1). */
static double clock_s(int wall) {
  struct timespec t;
  clock_gettime(wall ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* exponent of the last bit of x (x a nonzero binary64 value) */
static int lsb_exp(double x) {
  int e;
  double m = frexp(fabs(x), &e); /* |x| = m 2^e, m in [0.5, 1) */
  int b = 0;
  while (m != floor(m)) { m *= 2; b++; }
  return e - b;
}

/* precision that makes an accumulator exact for all dot products of A, B */
static long wide_prec(const double *a, const double *b, size_t len, size_t k) {
  int emax_a = -100000, emax_b = -100000, lmin_a = 100000, lmin_b = 100000, e;
  size_t i;
  for (i = 0; i < len; i++) {
    if (a[i] != 0) {
      (void)frexp(a[i], &e);
      if (e > emax_a) emax_a = e;
      if (lsb_exp(a[i]) < lmin_a) lmin_a = lsb_exp(a[i]);
    }
    if (b[i] != 0) {
      (void)frexp(b[i], &e);
      if (e > emax_b) emax_b = e;
      if (lsb_exp(b[i]) < lmin_b) lmin_b = lsb_exp(b[i]);
    }
  }
  e = 0;
  while (((size_t)1 << e) < k) e++;
  return (long)(emax_a + emax_b) - (lmin_a + lmin_b) + e + 2;
}

/* The MPFR loop on rows [0, rows): c[i*n+j] = RN64(sum_l a*b). */
static double mpfr_loop(double *c, const double *a, const double *b, size_t rows,
                        size_t n, size_t k, long prec, int pin) {
  mpfr_t *ma = malloc(rows * k * sizeof *ma), *mb = malloc(k * n * sizeof *mb);
  mpfr_t acc, prod;
  size_t i, j, l;
  double t0, t1;
  if (!ma || !mb) lowp_cli_die("bench", "out of memory for the MPFR loop");
  /* operands at the input precision, products at twice it: the smallest
     exact sizes, which keep every MPFR number in one limb where possible */
  for (i = 0; i < rows * k; i++) { mpfr_init2(ma[i], pin); mpfr_set_d(ma[i], a[i], MPFR_RNDN); }
  for (i = 0; i < k * n; i++) { mpfr_init2(mb[i], pin); mpfr_set_d(mb[i], b[i], MPFR_RNDN); }
  mpfr_init2(acc, (mpfr_prec_t)prec);
  mpfr_init2(prod, 2 * pin);
  t0 = clock_s(0);
  for (i = 0; i < rows; i++)
    for (j = 0; j < n; j++) {
      mpfr_set_zero(acc, 1);
      for (l = 0; l < k; l++) {
        mpfr_mul(prod, ma[i * k + l], mb[l * n + j], MPFR_RNDN); /* exact */
        mpfr_add(acc, acc, prod, MPFR_RNDN);                     /* exact by prec */
      }
      (void)lowp_round_mpfr(&c[i * n + j], acc, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    }
  t1 = clock_s(0);
  for (i = 0; i < rows * k; i++) mpfr_clear(ma[i]);
  for (i = 0; i < k * n; i++) mpfr_clear(mb[i]);
  mpfr_clears(acc, prod, (mpfr_ptr)0);
  free(ma);
  free(mb);
  return t1 - t0;
}

static void gen(double *x, size_t len, const lowp_format_t *f, uint64_t seed,
                uint32_t stream) {
  lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
  if (lowp_dist_fill(x, len, &d, f, seed, stream) != 0)
    lowp_cli_die("bench", "input generation failed");
}

/* One input format: validate, then time. Returns 0 if validated and (with
   strict) the 50x target is met, 1 otherwise. */
static int run_size(const lowp_format_t *fin, size_t N, size_t rows, uint64_t seed,
                    int strict) {
  size_t len = N * N, i, bad = 0;
  double *a = malloc(len * sizeof *a), *b = malloc(len * sizeof *b);
  double *c = malloc(len * sizeof *c), *cm = malloc(rows * N * sizeof *cm);
  double t_exact, t_mpfr, macs = (double)N * N * N, ns_e, ns_m;
  long prec;
  if (!a || !b || !c || !cm) lowp_cli_die("bench", "out of memory at size %zu", N);
  gen(a, len, fin, seed, 1);
  gen(b, len, fin, seed, 2);
  prec = wide_prec(a, b, len, N);

  omp_set_num_threads(1);
  t_exact = clock_s(0);
  if (lowp_exact_gemm(c, a, b, NULL, N, N, N, &LOWP_FMT_FP64, NULL, LOWP_RND_NE) != 0)
    lowp_cli_die("bench", "lowp_exact_gemm failed");
  t_exact = clock_s(0) - t_exact;
  t_mpfr = mpfr_loop(cm, a, b, rows, N, N, prec, fin->precision);

  /* validate: bit for bit on the MPFR rows */
  for (i = 0; i < rows * N; i++)
    if (memcmp(&c[i], &cm[i], sizeof c[i]) != 0 && bad++ < 5)
      printf("  MISMATCH C[%zu][%zu]: exact %a mpfr %a\n", i / N, i % N, c[i], cm[i]);
  if (bad) {
    printf("  %-5s VALIDATION FAILED: %zu mismatches; no timings reported\n", fin->name, bad);
    free(a); free(b); free(c); free(cm);
    return 1;
  }
  printf("  %-5s validated: exact == MPFR loop (acc %ld bits) on rows 0..%zu, %zu values, bit for bit\n",
         fin->name, prec, rows - 1, rows * N);
  ns_e = 1e9 * t_exact / macs;
  ns_m = 1e9 * t_mpfr / ((double)rows * N * N);
  printf("  %-5s exact %8.3f s %7.3f ns/MAC | MPFR loop %7.2f ns/MAC (%zu rows) | "
         "exact is %.1fx faster than MPFR\n", fin->name, t_exact, ns_e, ns_m, rows, ns_m / ns_e);
#ifdef LOWP_HAVE_OPENBLAS
  {
    float *fa = malloc(len * sizeof *fa), *fb = malloc(len * sizeof *fb),
          *fc = malloc(len * sizeof *fc);
    double t_s, best = 1e30;
    int rep;
    if (!fa || !fb || !fc) lowp_cli_die("bench", "out of memory for sgemm");
    for (i = 0; i < len; i++) { fa[i] = (float)a[i]; fb[i] = (float)b[i]; }
    openblas_set_num_threads(1);
    for (rep = 0; rep < 3; rep++) {
      t_s = clock_s(0);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)N, (int)N, (int)N,
                  1.0f, fa, (int)N, fb, (int)N, 0.0f, fc, (int)N);
      t_s = clock_s(0) - t_s;
      if (t_s < best) best = t_s;
    }
    printf("  %-5s OpenBLAS sgemm %7.4f ns/MAC (best of 3) | exact costs %.1fx sgemm\n",
           fin->name, 1e9 * best / macs, t_exact / best);
    free(fa);
    free(fb);
    free(fc);
  }
#else
  printf("  %-5s OpenBLAS not found at build time: no sgemm comparison\n", fin->name);
#endif
  free(a);
  free(b);
  free(c);
  free(cm);
  return strict && ns_m / ns_e < 50;
}

static void run_big(size_t N, int threads, uint64_t seed) {
  size_t len = N * N;
  double *a = malloc(len * sizeof *a), *b = malloc(len * sizeof *b),
         *c = malloc(len * sizeof *c), t;
  if (!a || !b || !c) lowp_cli_die("bench", "out of memory for --big (%zu^2 x 3 doubles)", N);
  gen(a, len, &LOWP_FMT_FP16, seed, 1);
  gen(b, len, &LOWP_FMT_FP16, seed, 2);
  omp_set_num_threads(threads);
  t = clock_s(1);
  if (lowp_exact_gemm(c, a, b, NULL, N, N, N, &LOWP_FMT_FP64, NULL, LOWP_RND_NE) != 0)
    lowp_cli_die("bench", "lowp_exact_gemm failed");
  t = clock_s(1) - t;
  printf("  big: exact fp16 GEMM %zu^3 on %d threads: %.1f s (%.3f ns/MAC, %.3f ns/MAC/thread)\n",
         N, threads, t, 1e9 * t / ((double)N * N * N), 1e9 * t * threads / ((double)N * N * N));
  free(a);
  free(b);
  free(c);
}

/* ----------------------------------------------------------------- main */

int lowp_bench_exact(int argc, char **argv) {
  size_t N = 512, rows = 16;
  uint64_t seed = 7;
  int big = 0, threads = 2, strict = 0, i, bad;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--size") && i + 1 < argc)
      N = (size_t)lowp_cli_int("bench", "--size", argv[++i], 1, 65536);
    else if (!strcmp(argv[i], "--rows") && i + 1 < argc)
      rows = (size_t)lowp_cli_int("bench", "--rows", argv[++i], 1, 65536);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = (uint64_t)lowp_cli_int("bench", "--seed", argv[++i], 0, INT64_MAX);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = (int)lowp_cli_int("bench", "--threads", argv[++i], 1, 1024);
    else if (!strcmp(argv[i], "--big"))
      big = 1;
    else if (!strcmp(argv[i], "--strict"))
      strict = 1;
    else if (!strcmp(argv[i], "--help")) {
      printf("usage: lowp bench exact [--size N] [--rows R] [--seed S] [--big] [--threads T] [--strict]\n"
             "  --strict  exit 1 unless exact is >= 50x faster than the MPFR loop\n");
      return 0;
    } else
      lowp_cli_die("bench", "unknown or incomplete option '%s' (see --help)", argv[i]);
  }
  if (rows > N) rows = N;
  printf("lowp bench exact: m=n=k=%zu, single thread (CPU time), inputs standard normal rounded "
         "(rne), seed %llu; exact results rounded to fp64\n", N, (unsigned long long)seed);
  bad = run_size(&LOWP_FMT_FP16, N, rows, seed, strict);
  bad |= run_size(&LOWP_FMT_FP32, N, rows, seed, strict);
  if (big) run_big(4096, threads, seed);
  return bad ? LOWP_EXIT_CHECK : LOWP_EXIT_OK;
}
