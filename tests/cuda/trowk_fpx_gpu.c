/* trowk_fpx_gpu -- the device tracer (atomicMin on a 64-bit key) against its CPU twin, bit for bit */

/*
 * Label cuda: skips (exit 77) without a CUDA build or a device. On a GPU
 * the traced softmax kernels (naive and stable) and the traced unscale
 * kernel run on rows with planted exceptions (an exp overflow, two large
 * exps meeting in the fold, in the warp tree and in the warp fold, inf -
 * inf, 0 / 0, a NaN) and on random rows whose exps overflow and whose sums
 * overflow in many places; the GPU's record (first key, counts per kind)
 * and outputs must equal the CPU twin's bit for bit
 * (kernels/common/fpxd.h, tests/trowk_fpx.c checks the twin's keys).
 * Run: ctest --test-dir build -L cuda --output-on-failure
 */

#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fpxd.h"
#include "common/rowk.h"
#include "status.h"

#define ROWS 64
#define N 3000

static float X[ROWS * N], YG[ROWS * N], YC[ROWS * N];

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
  lowp_test_check(memcmp(YG, YC, sizeof YG) == 0, "%s: outputs differ", what);
  printf("%-28s %-6s first 0x%016llx counts invalid %llu nan %llu divzero %llu overflow %llu\n", what,
         stable ? "stable" : "naive", g.first, g.count[0], g.count[1], g.count[2], g.count[3]);
}

static void fill(float v) {
  int i;
  for (i = 0; i < ROWS * N; i++) X[i] = v;
}

int main(void) {
  static float gg[1 << 20], gc[1 << 20];
  lowp_fpxd_t tg, tc;
  int i, s, fg = 0, fc = 0, st;
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
  for (i = 0; i < (1 << 20); i++) gg[i] = gc[i] = (float)((i * 2654435761u) % 1000u) * 3.5e35f;
  gg[777777] = gc[777777] = NAN;
  st = lowp_unscale_fpx_cuda(gg, 1 << 20, 1024.0f, &fg, &tg);
  (void)lowp_unscale_fpx_cpu(gc, 1 << 20, 1024.0f, &fc, &tc);
  lowp_test_check(st == LOWP_OK && fg == fc && memcmp(&tg, &tc, sizeof tg) == 0 && memcmp(gg, gc, sizeof gg) == 0,
                  "unscale: gpu 0x%016llx cpu 0x%016llx", tg.first, tc.first);
  printf("unscale: first 0x%016llx, overflow %llu, nan %llu\n", tg.first, tg.count[3], tg.count[1]);
  return lowp_test_end();
}
