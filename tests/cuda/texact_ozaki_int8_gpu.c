/* texact_ozaki_int8_gpu -- the sliced exact GEMM on INT8 tensor cores (cuBLAS int8 -> int32) vs the CPU path, bit for bit */

/*
 * Label cuda: skips (exit 77) without a CUDA build or a device. On a GPU,
 * lowp_exact_gemm_cuda_int8 must equal lowp_exact_gemm on every output for
 * fp16, bf16, fp32, e4m3, e5m2 and fp64 inputs (normal and whole-range
 * data, inf/NaN injected, odd k), with 7-bit slices; and with the budget
 * broken by one bit the exactness check must catch rows and the result
 * stay exact; without the break, the same path as lowp_exact_gemm_ex with
 * the same engine settings and no hook (every statistic). The CPU proof of
 * the same engine arithmetic (an int8 x int8 -> wrapping int32 GEMM) is in
 * tests/texact_ozaki.c and tests/texact_ozaki_twin.c.
 * Run: ctest --test-dir build -L cuda --output-on-failure
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact/exact.h"
#include "gemm_twin.h"
#include "gpu/ozaki_gpu.h"
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

static void one(const double *a, const double *b, size_t m, size_t n, size_t k,
                const lowp_format_t *fo, int extra, const char *what) {
  double *cg = malloc(m * n * sizeof *cg), *cc = malloc(m * n * sizeof *cc);
  lowp_gemm_stats_t sg = {0};
  size_t i, bad = 0;
  int s1, s2;
  if (!cg || !cc) { printf("out of memory\n"); exit(1); }
  s1 = lowp_exact_gemm_cuda_int8(cg, a, b, NULL, m, n, k, fo, NULL, LOWP_RND_NE, extra, &sg);
  s2 = lowp_exact_gemm(cc, a, b, NULL, m, n, k, fo, NULL, LOWP_RND_NE);
  lowp_test_check(s1 == LOWP_OK && s2 == LOWP_OK, "%s: status gpu %d cpu %d", what, s1, s2);
  for (i = 0; i < m * n; i++)
    if (memcmp(&cg[i], &cc[i], sizeof cg[i]) != 0 && bad++ < 3)
      lowp_test_check(0, "%s: C[%zu] gpu %a cpu %a", what, i, cg[i], cc[i]);
  lowp_test_check(bad == 0, "%s: %zu mismatches", what, bad);
  if (extra) {
    lowp_test_check(sg.slices_a == 0 || sg.check_failed_rows > 0,
                    "%s: budget broken by %d bit(s), no row caught", what, extra);
    lowp_twin_print(what, "gpu", m * n, &sg);
  } else {
    /* the same engine settings without the hook: the same path, field by
       field (tests/common/gemm_twin.h; its CPU twin: tests/texact_ozaki_twin.c) */
    lowp_gemm_opts_t o = {.engine_bits = 31, .slice_bits_max = 7};
    lowp_gemm_stats_t st;
    lowp_test_check(sg.slice_bits_a <= 7 && sg.slice_bits_b <= 7,
                    "%s: %d+%d slice bits", what, sg.slice_bits_a, sg.slice_bits_b);
    s2 = lowp_exact_gemm_ex(cc, a, b, NULL, m, n, k, fo, NULL, LOWP_RND_NE, &o, &st);
    if (lowp_test_check(s2 == LOWP_OK, "%s: status cpu with int8 settings %d", what, s2))
      lowp_twin_compare(what, "gpu", cg, cc, m, n, &sg, &st);
  }
  free(cg);
  free(cc);
}

int main(void) {
  static const lowp_format_t *fin[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_FP32,
                                       &LOWP_FMT_E4M3, &LOWP_FMT_E5M2, &LOWP_FMT_FP64};
  static const lowp_dist_kind_t kinds[] = {LOWP_DIST_NORMAL, LOWP_DIST_SPREAD};
  const size_t m = 37, n = 53, k = 1001;
  uint64_t seed;
  size_t fi, ki;
  double *a, *b;
  lowp_test_start("texact_ozaki_int8_gpu");
  {
    double x = 1.0, y;
    if (lowp_exact_gemm_cuda_int8(&y, &x, &x, NULL, 1, 1, 1, &LOWP_FMT_FP64, NULL, LOWP_RND_NE,
                                  0, NULL) == LOWP_EUNSUPPORTED)
      lowp_test_skip("no CUDA device (or a build without CUDA)");
  }
  seed = lowp_test_seed();
  a = malloc(m * k * sizeof *a);
  b = malloc(k * n * sizeof *b);
  if (!a || !b) { printf("out of memory\n"); return 1; }
  for (fi = 0; fi < sizeof fin / sizeof fin[0]; fi++)
    for (ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
      lowp_dist_t d = {kinds[ki], 0, 0};
      char what[96];
      lowp_dist_fill(a, m * k, &d, fin[fi], seed, 1);
      lowp_dist_fill(b, k * n, &d, fin[fi], seed, 2);
      snprintf(what, sizeof what, "%s %s %zux%zux%zu", fin[fi]->name, lowp_dist_name(kinds[ki]),
               m, n, k);
      one(a, b, m, n, k, &LOWP_FMT_FP64, 0, what);
      one(a, b, m, n, k, &LOWP_FMT_FP32, 1, "budget + 1 bit");
      a[5] = INFINITY;
      b[3 * n + 7] = NAN;
      one(a, b, m, n, k, &LOWP_FMT_FP32, 0, "with inf/NaN");
    }
  free(a);
  free(b);
  return lowp_test_end();
}
