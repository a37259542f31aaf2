/* texact_ozaki_gpu -- the sliced exact GEMM on cuBLAS DGEMM vs the CPU path, bit for bit */

/*
 * Label cuda: skips (exit 77) without a CUDA build or a device. On a GPU,
 * lowp_exact_gemm_cuda must equal lowp_exact_gemm (OpenBLAS slices and the
 * accumulator) on every output, for fp16, bf16, fp32, e4m3, fp64 inputs,
 * normal and whole-range data (the latter mostly on the accumulator), with
 * inf/NaN injected, odd shapes and one 1024^3 product, and take the sliced
 * path where the CPU does.
 * Run: ctest --test-dir build -L cuda --output-on-failure
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact/exact.h"
#include "gpu/ozaki_gpu.h"
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

static void one(const double *a, const double *b, size_t m, size_t n, size_t k,
                const lowp_format_t *fo, const char *what) {
  double *cg = malloc(m * n * sizeof *cg), *cc = malloc(m * n * sizeof *cc);
  lowp_gemm_stats_t sg, sc;
  size_t i, bad = 0;
  int s1, s2;
  if (!cg || !cc) { printf("out of memory\n"); exit(1); }
  s1 = lowp_exact_gemm_cuda(cg, a, b, NULL, m, n, k, fo, NULL, LOWP_RND_NE, &sg);
  s2 = lowp_exact_gemm_ex(cc, a, b, NULL, m, n, k, fo, NULL, LOWP_RND_NE, NULL, &sc);
  lowp_test_check(s1 == LOWP_OK && s2 == LOWP_OK, "%s: status gpu %d cpu %d", what, s1, s2);
  for (i = 0; i < m * n; i++)
    if (memcmp(&cg[i], &cc[i], sizeof cg[i]) != 0 && bad++ < 3)
      lowp_test_check(0, "%s: C[%zu] gpu %a cpu %a", what, i, cg[i], cc[i]);
  lowp_test_check(bad == 0, "%s: %zu mismatches", what, bad);
  lowp_test_check(sg.sliced_outputs == sc.sliced_outputs && sg.slices_a == sc.slices_a &&
                      sg.slices_b == sc.slices_b && sg.check_failed_rows == 0,
                  "%s: gpu %zu sliced (%dx%d), cpu %zu (%dx%d), %zu check failures", what,
                  sg.sliced_outputs, sg.slices_a, sg.slices_b, sc.sliced_outputs, sc.slices_a,
                  sc.slices_b, sg.check_failed_rows);
  free(cg);
  free(cc);
}

int main(void) {
  static const lowp_format_t *fin[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_FP32,
                                       &LOWP_FMT_E4M3, &LOWP_FMT_FP64};
  static const lowp_dist_kind_t kinds[] = {LOWP_DIST_NORMAL, LOWP_DIST_SPREAD};
  const size_t M = 1024;
  uint64_t seed;
  size_t fi, ki;
  double *a, *b;
  lowp_test_start("texact_ozaki_gpu");
  {
    double x = 1.0, y;
    if (lowp_exact_gemm_cuda(&y, &x, &x, NULL, 1, 1, 1, &LOWP_FMT_FP64, NULL, LOWP_RND_NE,
                             NULL) == LOWP_EUNSUPPORTED)
      lowp_test_skip("no CUDA device (or a build without CUDA)");
  }
  seed = lowp_test_seed();
  a = malloc(M * M * sizeof *a);
  b = malloc(M * M * sizeof *b);
  if (!a || !b) { printf("out of memory\n"); return 1; }
  for (fi = 0; fi < sizeof fin / sizeof fin[0]; fi++)
    for (ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
      lowp_dist_t d = {kinds[ki], 0, 0};
      size_t m = 37, n = 53, k = 1001;
      char what[96];
      lowp_dist_fill(a, m * k, &d, fin[fi], seed, 1);
      lowp_dist_fill(b, k * n, &d, fin[fi], seed, 2);
      snprintf(what, sizeof what, "%s %s %zux%zux%zu", fin[fi]->name, lowp_dist_name(kinds[ki]),
               m, n, k);
      one(a, b, m, n, k, &LOWP_FMT_FP64, what);
      a[5] = INFINITY;
      b[3 * n + 7] = NAN;
      one(a, b, m, n, k, &LOWP_FMT_FP32, "with inf/NaN");
    }
  {
    lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
    lowp_dist_fill(a, M * M, &d, &LOWP_FMT_FP16, seed, 3);
    lowp_dist_fill(b, M * M, &d, &LOWP_FMT_FP16, seed, 4);
    one(a, b, M, M, M, &LOWP_FMT_FP64, "fp16 normal 1024^3");
  }
  free(a);
  free(b);
  return lowp_test_end();
}
