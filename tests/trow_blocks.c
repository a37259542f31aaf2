/* trow_blocks -- what an MPI job of lowp gemm relies on, checked in one process */

/*
 * Under mpirun (par/par.h, docs/scale.md) a rank generates only its rows
 * of A (lowp_dist_fill_at), measures only its rows of C, and rank 0 measures
 * the gathered rows whole (lowp_check_finish). The job's output is the
 * one-process output only if
 *   1. lowp_dist_fill_at(first) is bit for bit the slice [first, first + n)
 *      of lowp_dist_fill, for every distribution (cancel: first 0 only);
 *   2. the subject, the exact reference and |A||B| of a block of rows are
 *      the same rows of the whole problem's (elementwise computations), and
 *      lowp_check_finish on the concatenated blocks gives the metrics,
 *      worst element and bounds of lowp_check_measure on the whole.
 * Both are checked here against the whole computation as the oracle, for
 * uneven splits (7 rows into 1, 2, 3 and 7 blocks).
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/pipeline.h"
#include "check/subject.h"
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

#define N 1001

static void fill_blocks(void) {
  static const char *const dists[] = {"uniform01", "uniform11", "normal", "loguniform:1e-3:1e3",
                                      "spread"};
  static const char *const fmts[] = {"fp16", "e4m3", "bf16"};
  static double whole[N], part[N];
  size_t di, fi, nb;
  for (di = 0; di < sizeof dists / sizeof *dists; di++)
    for (fi = 0; fi < sizeof fmts / sizeof *fmts; fi++) {
      lowp_dist_t d;
      const lowp_format_t *f = lowp_format_by_name(fmts[fi]);
      int ok = 1;
      lowp_dist_parse(&d, dists[di]);
      lowp_test_check(lowp_dist_fill(whole, N, &d, f, lowp_test_seed(), 3) == LOWP_OK,
                      "fill %s %s", dists[di], fmts[fi]);
      for (nb = 1; nb <= 7; nb += 3) { /* 1, 4, 7 blocks: uneven */
        size_t b;
        for (b = 0; b < nb; b++) {
          size_t lo = b * N / nb, hi = (b + 1) * N / nb;
          if (lowp_dist_fill_at(part, hi - lo, &d, f, lowp_test_seed(), 3, lo) != LOWP_OK ||
              memcmp(part, &whole[lo], (hi - lo) * sizeof *part) != 0)
            ok = 0;
        }
      }
      lowp_test_check(ok, "fill_at blocks == the whole fill's slices: %s %s", dists[di],
                      fmts[fi]);
    }
  {
    lowp_dist_t d;
    lowp_dist_parse(&d, "cancel");
    lowp_test_check(lowp_dist_fill_at(part, 10, &d, lowp_format_by_name("fp16"), 1, 1, 5) ==
                    LOWP_EINVAL, "cancel is whole-array: fill_at with first > 0 refused");
    lowp_test_check(lowp_dist_fill_at(part, N, &d, lowp_format_by_name("fp16"), 1, 1, 0) ==
                        LOWP_OK &&
                    lowp_dist_fill(whole, N, &d, lowp_format_by_name("fp16"), 1, 1) == LOWP_OK &&
                    !memcmp(part, whole, sizeof whole), "cancel fill_at(0) == fill");
  }
}

/* measure rows [r0, r1) of the problem p (inputs A m x k, B k x n) */
static int measure_rows(lowp_check_result_t *r, const lowp_problem_t *p, const lowp_subject_t *s,
                        const double *a, const double *b, size_t r0, size_t r1) {
  lowp_problem_t q = *p;
  lowp_check_inputs_t in;
  const double *xs[2];
  lowp_check_opts_t co = {0};
  char err[600];
  int st;
  q.dims.m = r1 - r0;
  xs[0] = &a[r0 * p->dims.k];
  xs[1] = b;
  co.prob = 0.99;
  if (lowp_check_inputs_copy(&in, &q, xs, NULL)) return LOWP_ENOMEM;
  st = lowp_check_measure(r, &q, s, &in, &co, err, sizeof err);
  lowp_check_inputs_free(&in);
  return st;
}

static void finish_blocks(const char *model_params, const char *in_fmt, const char *dist) {
  const size_t m = 7, n = 5, k = 300;
  lowp_problem_t p;
  lowp_subject_t s;
  lowp_check_inputs_t in;
  lowp_check_result_t whole;
  lowp_check_opts_t co = {0};
  lowp_dist_t d;
  char err[600];
  size_t nb;
  memset(&p, 0, sizeof p);
  p.op = lowp_op_by_name("gemm");
  p.dims.batch = 1; p.dims.m = m; p.dims.n = n; p.dims.k = k;
  p.in[0] = p.in[1] = *lowp_format_by_name(in_fmt);
  p.out = *lowp_format_by_name("fp32");
  co.prob = 0.99;
  lowp_dist_parse(&d, dist);
  if (!lowp_test_check(lowp_kernel_subject_open(&s, "gemm_acc", model_params, err, sizeof err) ==
                       LOWP_OK && lowp_kernel_subject_bind(&s, &p, err, sizeof err) == LOWP_OK,
                       "subject gemm_acc[%s]: %s", model_params, err))
    return;
  lowp_check_inputs_generate(&in, &p, &d, lowp_test_seed());
  lowp_test_check(lowp_check_measure(&whole, &p, &s, &in, &co, err, sizeof err) == LOWP_OK,
                  "whole: %s", err);
  for (nb = 1; nb <= 7; nb++) {
    lowp_check_result_t w;
    lowp_check_output_t *o = &w.out[0];
    size_t b, mn = m * n;
    int ok = 1;
    if (nb == 4 || nb == 5 || nb == 6) continue; /* 1, 2, 3, 7 blocks */
    memset(&w, 0, sizeof w);
    w.problem = p;
    w.n_out = 1;
    o->name = whole.out[0].name;
    o->count = mn;
    o->got = malloc(mn * sizeof(double));
    o->exact = malloc(mn * sizeof(double));
    o->exact_out = malloc(mn * sizeof(double));
    o->absab = malloc(mn * sizeof(double));
    for (b = 0; b < nb && ok; b++) {
      size_t r0 = b * m / nb, r1 = (b + 1) * m / nb, c = (r1 - r0) * n;
      lowp_check_result_t r;
      if (measure_rows(&r, &p, &s, in.x[0], in.x[1], r0, r1) != LOWP_OK) ok = 0;
      else {
        memcpy(&o->got[r0 * n], r.out[0].got, c * sizeof(double));
        memcpy(&o->exact[r0 * n], r.out[0].exact, c * sizeof(double));
        memcpy(&o->exact_out[r0 * n], r.out[0].exact_out, c * sizeof(double));
        memcpy(&o->absab[r0 * n], r.out[0].absab, c * sizeof(double));
      }
      lowp_check_result_free(&r);
    }
    ok = ok && lowp_check_finish(&w, &s, &co) == LOWP_OK;
    ok = ok && !memcmp(o->got, whole.out[0].got, mn * sizeof(double)) &&
         !memcmp(o->exact, whole.out[0].exact, mn * sizeof(double)) &&
         !memcmp(o->exact_out, whole.out[0].exact_out, mn * sizeof(double)) &&
         !memcmp(o->absab, whole.out[0].absab, mn * sizeof(double));
    lowp_test_check(ok, "%s %s %s, %zu row blocks: the blocks' outputs are the whole's rows",
                    model_params, in_fmt, dist, nb);
    lowp_test_check(ok && !memcmp(&o->err, &whole.out[0].err, sizeof o->err) &&
                    o->worst == whole.out[0].worst &&
                    !memcmp(&o->rmse, &whole.out[0].rmse, sizeof o->rmse) &&
                    o->n_class_mismatch == whole.out[0].n_class_mismatch &&
                    !memcmp(&w.max_bwd, &whole.max_bwd, sizeof w.max_bwd) &&
                    w.gamma.have == whole.gamma.have &&
                    !memcmp(&w.gamma.value, &whole.gamma.value, sizeof w.gamma.value) &&
                    !memcmp(&w.prob.value, &whole.prob.value, sizeof w.prob.value) &&
                    !memcmp(&w.model.value, &whole.model.value, sizeof w.model.value),
                    "%s %s %s, %zu row blocks: lowp_check_finish == lowp_check_measure "
                    "(errors, worst, rmse, bounds)", model_params, in_fmt, dist, nb);
    lowp_check_result_free(&w);
  }
  lowp_check_result_free(&whole);
  lowp_check_inputs_free(&in);
  lowp_subject_close(&s);
}

int main(void) {
  lowp_test_start("trow_blocks");
  fill_blocks();
  finish_blocks("acc=fp32", "fp16", "normal");
  finish_blocks("acc=bf16,order=pairwise", "bf16", "uniform11");
  finish_blocks("acc=fp16,round=rtz", "e4m3", "spread");
  return lowp_test_end();
}
