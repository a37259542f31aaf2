/* texp_matmul_precision -- the matmul-precision errors at n = 16 against an independent recomputation */

/*
 * Recomputes the quick run's n = 16 rows (data set 0) of errors.csv without the kernels
 * or lib/exact: the same seeded data (Philox normals rounded to fp32 by a C
 * cast), the exact product with MPFR (200 bits: fp32 products are exact in
 * 48 bits and 16 of them sum with an error far below binary64's), cpu-fp32
 * with C float arithmetic (IEEE binary32, no contraction: the build passes
 * -ffp-contract=off), and cpu-fp16 with MPFR emulating binary16 (precision
 * 11, mpfr_subnormalize) on every product and sum. The maximum errors
 * against the exact product must match the CSV to its printed 7 digits.
 *
 * Run: ctest --test-dir build -R texp_matmul_precision
 */

#define _POSIX_C_SOURCE 200809L

#include "rng/rng.h"
#include "testutil.h"

#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 16

static double f16(mpfr_srcptr x) {
  mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_t t;
  int inex;
  double y;
  mpfr_set_emin(-23);
  mpfr_set_emax(1024);
  mpfr_init2(t, 11);
  inex = mpfr_set(t, x, MPFR_RNDN);
  (void)mpfr_subnormalize(t, inex, MPFR_RNDN);
  y = mpfr_get_d(t, MPFR_RNDN);
  mpfr_clear(t);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  return fabs(y) > 65504 ? copysign(INFINITY, y) : y;
}
static double f16d(double x) {
  mpfr_t t;
  double y;
  mpfr_init2(t, 64);
  mpfr_set_d(t, x, MPFR_RNDN);
  y = f16(t);
  mpfr_clear(t);
  return y;
}

int main(void) {
  char dir[] = "/tmp/texp_matmul.XXXXXX", cmd[4400], path[4300], line[1024];
  float a[N * N], b[N * N];
  double e32 = 0, e16 = 0, got32 = -1, got16 = -1;
  int i, j, l;
  lowp_rng_t g;
  FILE *f;
  mpfr_t x, p, s;
  lowp_test_start("texp_matmul_precision");
  lowp_rng_init(&g, 99, 0); /* the run below uses --seed=99; size index 0 is n = 16 */
  for (i = 0; i < N * N; i++) {
    a[i] = (float)lowp_rng_normal(&g);
    b[i] = (float)lowp_rng_normal(&g);
  }
  mpfr_inits2(200, x, p, s, (mpfr_ptr)0);
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      float c32 = 0;
      double c16 = 0, ex;
      mpfr_set_zero(x, 1);
      for (l = 0; l < N; l++) {
        float pr = a[i * N + l] * b[l * N + j];
        c32 = c32 + pr;
        mpfr_set_flt(p, a[i * N + l], MPFR_RNDN);
        mpfr_mul_d(p, p, (double)b[l * N + j], MPFR_RNDN);
        mpfr_add(x, x, p, MPFR_RNDN);
        /* fp16: inputs rounded, then every product and sum */
        mpfr_set_d(p, f16d(a[i * N + l]), MPFR_RNDN);
        mpfr_mul_d(p, p, f16d(b[l * N + j]), MPFR_RNDN);
        mpfr_set_d(s, f16(p), MPFR_RNDN);
        mpfr_add_d(s, s, c16, MPFR_RNDN);
        c16 = f16(s);
      }
      ex = mpfr_get_d(x, MPFR_RNDN);
      if (fabs(c32 - ex) > e32) e32 = fabs(c32 - ex);
      if (fabs(c16 - ex) > e16) e16 = fabs(c16 - ex);
    }
  mpfr_clears(x, p, s, (mpfr_ptr)0);

  lowp_test_make_tmpdir(dir);
  snprintf(cmd, sizeof cmd, "run matmul-precision --quick --seed=99 --out %s/mm", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 0, "lowp run matmul-precision --quick exits 0 (bounds hold)");
  snprintf(path, sizeof path, "%s/mm/errors.csv", dir);
  f = fopen(path, "r");
  lowp_test_check(f != NULL, "errors.csv written");
  while (f && fgets(line, sizeof line, f)) {
    long n, sd, m;
    char kern[64], fmt[32];
    double e0;
    /* n,seed,kernel,input,entries,max_err_vs_exact_data,...: data set 0 */
    if (sscanf(line, "%ld,%ld,%63[^,],%31[^,],%ld,%lf", &n, &sd, kern, fmt, &m, &e0) != 6 ||
        n != N || sd != 0)
      continue;
    if (!strcmp(kern, "cpu-fp32")) got32 = e0;
    if (!strcmp(kern, "cpu-fp16")) got16 = e0;
  }
  if (f) fclose(f);
  lowp_test_check(fabs(got32 - e32) <= 1e-6 * e32, "cpu-fp32 at n = 16: experiment %.7g, oracle %.7g", got32, e32);
  lowp_test_check(fabs(got16 - e16) <= 1e-6 * e16, "cpu-fp16 at n = 16: experiment %.7g, oracle %.7g", got16, e16);
  snprintf(path, sizeof path, "%s/mm/growth.png", dir);
  lowp_test_check(access(path, R_OK) == 0, "growth.png written");
  snprintf(cmd, sizeof cmd, "run matmul-precision --sizes=0 --out %s/bad", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 2, "a size of 0 exits 2");
  snprintf(cmd, sizeof cmd, "run matmul-precision --model=nosuch --out %s/bad", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 2, "an unknown model exits 2");
  lowp_test_remove_dir(dir);
  return lowp_test_end();
}
