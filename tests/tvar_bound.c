/* tvar_bound -- lowp_bound_variance holds for the kernel layernorm's statistics, row by row */

/*
 * The registry kernel layernorm (variant=onepass|twopass|welford,
 * clamp=off) computes the variance of rows of fp16, bf16 and fp32 data with
 * its statistics in the data's format or in fp32 (acc=); each row's
 * relative error against the exact variance (lowp_exact_meanvar, MPFR-free
 * exact sums) must not exceed lowp_bound_variance wherever the result is
 * finite. Rows: mean + N(0,1) with mean/std from 1 to 1e4 (the
 * autocast-policy study's data), the same sorted ascending (the recursive
 * sums' worst growth), and rows of n - 1 equal values and one outlier. The
 * bound must also be informative: the largest error/bound ratio seen is
 * above 1e-3 (a bound of 1e30 would pass the first check and fail this one),
 * two-pass fp32 at mean/std 1 is below 1e-5, and it is +inf where it
 * cannot apply.
 *
 * Run: ctest --test-dir build -R tvar_bound
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/op.h"
#include "exact/exact.h"
#include "measure/measure.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"
#include "tkernel.h"

static const char *const VAR[3] = {"onepass", "twopass", "welford"};

typedef struct { long rows, finite, viol; double worst; } tally_t;

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* the variance of x (values of F) by method m with the statistics in A */
static double kernel_var(const double *x, size_t n, int m, const lowp_format_t *F, const lowp_format_t *A) {
  lowp_problem_t p;
  double *y = malloc(n * sizeof *y), mean = NAN, var = NAN;
  double *out[3];
  const double *in[1];
  char par[160], err[300];
  int i;
  memset(&p, 0, sizeof p);
  p.op = lowp_op_by_name("layernorm");
  p.dims.batch = p.dims.m = p.dims.k = 1;
  p.dims.n = n;
  for (i = 0; i < LOWP_OP_MAXIO; i++) p.in[i] = *F;
  p.out = *A;
  p.eps = 1e-5;
  snprintf(par, sizeof par, "compute=%s,acc=%s,variant=%s,clamp=off", F->name, A->name, VAR[m]);
  out[0] = y; out[1] = &mean; out[2] = &var; in[0] = x;
  if (!y || lowp_test_run_kernel(out, in, "layernorm", par, &p, err, sizeof err) != LOWP_OK) {
    lowp_test_check(0, "layernorm %s: %s", par, err);
    var = NAN;
  }
  free(y);
  return var;
}

/* one row: every method, statistics in F and in fp32 */
static void row(tally_t *t, const double *x, size_t n, const lowp_format_t *F) {
  double mean, ev;
  int a, m;
  if (lowp_exact_meanvar(&mean, &ev, x, n, 0, &LOWP_FMT_FP64, NULL, LOWP_RND_NE) != LOWP_OK || !(ev > 0)) return;
  for (a = 0; a < 2; a++) {
    const lowp_format_t *A = a ? &LOWP_FMT_FP32 : F;
    for (m = 0; m < 3; m++) {
      double v = kernel_var(x, n, m, F, A), e, b;
      t->rows++;
      if (!isfinite(v)) continue;
      t->finite++;
      e = fabs(v - ev) / ev;
      b = lowp_bound_variance(x, n, (lowp_var_alg_t)m, lowp_format_u(A), lowp_format_xmins(A) / 2, mean, ev);
      if (!(e <= b)) {
        t->viol++;
        lowp_test_check(0, "%s data, %s statistics, %s, n = %zu, mean %g: error %.3e > bound %.3e", F->name,
                        A->name, VAR[m], n, mean, e, b);
      }
      if (e / b > t->worst) t->worst = e / b;
    }
  }
}

static void study(tally_t *t) {
  static const lowp_format_t *const FS[3] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_FP32};
  static const size_t NS[3] = {16, 256, 1000};
  double *x = malloc(1000 * sizeof *x);
  lowp_rng_t g;
  int f, k, r, kind;
  size_t ni, i;
  lowp_rng_init(&g, lowp_test_seed(), 71);
  for (f = 0; f < 3; f++)
    for (ni = 0; ni < 3; ni++)
      for (k = 0; k <= 8; k++)
        for (kind = 0; kind < 3; kind++)
          for (r = 0; r < 2; r++) {
            size_t n = NS[ni];
            double mu = pow(10, 0.5 * k);
            for (i = 0; i < n; i++) {
              double z = kind == 2 ? (i == n / 2 ? 8 : 0) : lowp_rng_normal(&g);
              lowp_round_f64(&x[i], mu + (kind == 1 ? fabs(z) : z), FS[f], NULL, LOWP_RND_NE);
            }
            if (kind == 1) qsort(x, n, sizeof *x, cmp);
            row(t, x, n, FS[f]);
          }
  free(x);
}

int main(void) {
  tally_t t = {0, 0, 0, 0};
  double one[4] = {1, 2, 3, 4};
  lowp_test_start("tvar_bound");
  study(&t);
  printf("%ld results, %ld finite, %ld above the bound; largest error / bound %.3g\n", t.rows, t.finite, t.viol,
         t.worst);
  lowp_test_check(t.finite > 1000 && t.viol == 0, "every finite variance within its bound (%ld of %ld finite)",
                  t.finite, t.rows);
  lowp_test_check(t.finite < t.rows, "some fp16 statistics overflow (the bound does not apply there)");
  lowp_test_check(t.worst > 1e-3, "the bound is not vacuous: largest error / bound %.3g", t.worst);
  /* two-pass in fp32 on benign data: (n + 3) u to first order */
  lowp_test_check(lowp_bound_variance(one, 4, LOWP_VAR_TWOPASS, 0x1p-24, 0x1p-150, 2.5, 1.25) < 1e-5,
                  "two-pass fp32 bound on [1 2 3 4] is a few u");
  lowp_test_check(isinf(lowp_bound_variance(one, 4, LOWP_VAR_ONEPASS, 0x1p-24, 0x1p-150, 2.5, 0)) &&
                      isinf(lowp_bound_variance(one, 4, LOWP_VAR_WELFORD, 0.5, 0, 2.5, 1.25)) &&
                      isinf(lowp_bound_variance(one, 4, (lowp_var_alg_t)7, 0x1p-24, 0, 2.5, 1.25)),
                  "no bound (+inf) for V = 0, n u >= 1 or an unknown algorithm");
  return lowp_test_end();
}
