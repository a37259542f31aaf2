/* trowk_fpx_gpu -- the device tracer (atomicMin on a 64-bit key) against its CPU twin, bit for bit */

/*
 * Label cuda: skips (exit 77) without a CUDA build or a device. On a GPU
 * the traced softmax kernels (naive and stable) and the traced unscale
 * kernel run on rows with planted exceptions (an exp overflow, two large
 * exps meeting in the fold, in the warp tree and in the warp fold, inf -
 * inf, 0 / 0, a NaN) and on random rows whose exps overflow and whose sums
 * overflow in many places, and on a NaN with a payload and a negative sign;
 * the GPU's record (first key, counts per kind), found_inf and outputs must
 * equal the CPU twin's bit for bit, NaN bits included (the GPU's
 * arithmetic returns 0x7fffffff: kernels/common/karith.h, lowp_ka_gpu_nan)
 * (kernels/common/fpxd.h, tests/trowk_fpx.c checks the twin's keys and
 * NaN bits). A difference prints one line: how many outputs differ, the
 * first with both bit patterns and its input; for unscale each field.
 * Run: ctest --test-dir build -L cuda --output-on-failure
 */

#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fpxd.h"
#include "common/karith.h"
#include "common/rowk.h"
#include "status.h"

#define ROWS 64
#define N 3000

static float X[ROWS * N], YG[ROWS * N], YC[ROWS * N];


/* 1 if g and c have the same bits; else one FAIL line: the count of
   differing elements and the first of them with both bit patterns and
   the input there (x NULL: none) */
static int same_bits(const char *what, const float *g, const float *c, const float *x, size_t n) {
  size_t i, first = n, ndiff = 0;
  for (i = 0; i < n; i++)
    if (lowp_ka_bits(g[i]) != lowp_ka_bits(c[i])) {
      if (first == n) first = i;
      ndiff++;
    }
  if (first < n)
    lowp_test_check(0, "%s: %zu outputs differ, first [%zu] gpu 0x%08x cpu 0x%08x (input 0x%08x; GPU NaN 0x%08x)",
                    what, ndiff, first, (unsigned)lowp_ka_bits(g[first]), (unsigned)lowp_ka_bits(c[first]),
                    x ? (unsigned)lowp_ka_bits(x[first]) : 0u, (unsigned)LOWP_KA_GPU_NAN);
  else
    lowp_test_check(1, "%s: outputs equal", what);
  return first == n;
}

static void compare(const char *what, int stable) {
  lowp_fpxd_t g, c;
  int sg = lowp_softmax_fpx_cuda(YG, X, ROWS, N, stable, &g);
  int sc = lowp_softmax_fpx_cpu(YC, X, ROWS, N, stable, &c);
  if (sg == LOWP_EUNSUPPORTED) lowp_test_skip("no CUDA device (or a build without CUDA)");
  lowp_test_check(sg == LOWP_OK && sc == LOWP_OK, "%s: status gpu %d cpu %d", what, sg, sc);
  lowp_test_check(memcmp(&g, &c, sizeof g) == 0,
                  "%s (%s): gpu first 0x%016llx counts %llu %llu %llu %llu, cpu 0x%016llx %llu %llu %llu %llu", what,
                  stable ? "stable" : "naive", g.first, g.count[0], g.count[1], g.count[2], g.count[3], c.first,
                  c.count[0], c.count[1], c.count[2], c.count[3]);
  {
    char w[96];
    snprintf(w, sizeof w, "%s (%s)", what, stable ? "stable" : "naive");
    (void)same_bits(w, YG, YC, X, (size_t)ROWS * N);
  }
  printf("%-28s %-6s first 0x%016llx counts invalid %llu nan %llu divzero %llu overflow %llu\n", what,
         stable ? "stable" : "naive", g.first, g.count[0], g.count[1], g.count[2], g.count[3]);
}

static void fill(float v) {
  int i;
  for (i = 0; i < ROWS * N; i++) X[i] = v;
}

int main(void) {
  static float gg[1 << 20], gc[1 << 20], gi[1 << 20];
  static const float g0[4] = {1.0f, 3e38f, -2.5f, 0.0f}; /* any finite values */
  lowp_fpxd_t tg, tc;
  int i, k, s, fg = 0, fc = 0, st;
  uint32_t payload = 0xffc00123u; /* a negative NaN with a payload */
  float pnan;
  lowp_test_start("trowk_fpx_gpu");
  fill(0.5f);
  X[2 * N + 537] = 100;
  for (s = 0; s < 2; s++) compare("exp(100)", s);
  fill(0);
  X[N + 10] = X[N + 266] = 88.5f;
  X[3 * N + 10] = X[3 * N + 11] = 88.5f;
  X[5 * N + 0] = X[5 * N + 32] = 88.5f;
  compare("fold, tree and warp fold", 0);
  fill(1);
  X[N + 5] = INFINITY;
  X[40 * N + 2999] = NAN;
  for (s = 0; s < 2; s++) compare("inf and NaN inputs", s);
  fill(-200);
  compare("0 / 0", 0);
  srand(3636);
  for (i = 0; i < ROWS * N; i++) X[i] = (float)(rand() % 20000) / 100.0f - 100.0f;
  for (s = 0; s < 2; s++) compare("random in [-100, 100)", s);
  memcpy(&pnan, &payload, sizeof pnan);
  fill(1);
  X[7 * N + 100] = pnan;
  X[9 * N + 0] = -INFINITY;
  X[9 * N + 1] = INFINITY;
  for (s = 0; s < 2; s++) compare("NaN with payload, +-inf", s);
  for (i = 0; i < (1 << 20); i++) gg[i] = gc[i] = (float)((i * 2654435761u) % 1000u) * 3.5e35f;
  gg[777777] = gc[777777] = NAN;
  gg[777778] = gc[777778] = pnan;
  memcpy(gi, gg, sizeof gi);
  st = lowp_unscale_fpx_cuda(gg, 1 << 20, 1024.0f, &fg, &tg);
  (void)lowp_unscale_fpx_cpu(gc, 1 << 20, 1024.0f, &fc, &tc);
  lowp_test_check(st == LOWP_OK, "unscale: status %d", st);
  lowp_test_check(fg == fc, "unscale: found_inf gpu %d cpu %d", fg, fc);
  lowp_test_check(tg.first == tc.first, "unscale: first gpu 0x%016llx cpu 0x%016llx", tg.first, tc.first);
  for (k = 0; k < LOWP_FPXD_NKINDS; k++)
    lowp_test_check(tg.count[k] == tc.count[k], "unscale: count of kind %d gpu %llu cpu %llu", k, tg.count[k],
                    tc.count[k]);
  (void)same_bits("unscale", gg, gc, gi, (size_t)1 << 20);
  printf("unscale: first 0x%016llx, overflow %llu, nan %llu, found %d, g[777777] 0x%08x g[777778] 0x%08x\n",
         tg.first, tg.count[3], tg.count[1], fg, (unsigned)lowp_ka_bits(gg[777777]), (unsigned)lowp_ka_bits(gg[777778]));
  /* inv_scale 1: no multiplication, every bit (a NaN's too) stays */
  for (i = 0; i < 4; i++) gg[i] = gc[i] = g0[i];
  gg[4] = gc[4] = pnan;
  st = lowp_unscale_fpx_cuda(gg, 5, 1.0f, &fg, &tg);
  (void)lowp_unscale_fpx_cpu(gc, 5, 1.0f, &fc, &tc);
  lowp_test_check(st == LOWP_OK && fg == 1 && fc == 1 && tg.first == LOWP_FPXD_NONE && tc.first == LOWP_FPXD_NONE,
                  "unscale by 1: status %d, found gpu %d cpu %d, first gpu 0x%016llx cpu 0x%016llx", st, fg, fc,
                  tg.first, tc.first);
  (void)same_bits("unscale by 1", gg, gc, g0, 4);
  lowp_test_check(lowp_ka_bits(gg[4]) == payload && lowp_ka_bits(gc[4]) == payload, "unscale by 1: NaN kept, gpu 0x%08x cpu 0x%08x",
                  (unsigned)lowp_ka_bits(gg[4]), (unsigned)lowp_ka_bits(gc[4]));
  return lowp_test_end();
}
