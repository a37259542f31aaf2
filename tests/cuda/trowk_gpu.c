/* trowk_gpu -- the GPU row kernels (kernels/cuda/rowk.cu) against their CPU twins, bit for bit */

/*
 * Label cuda: skips (exit 77) without a CUDA build or a device. For each
 * kernel (sum in fp32/fp16/bf16, softmax naive and stable, layer norm in
 * three variants, cross-entropy, the grad scaler's unscale and update) and
 * row lengths around the warp and block sizes, it runs the GPU kernel and
 * its twin (kernels/cpu/rowk.c) on the same seeded inputs and counts the
 * elements whose bits differ; the first few are printed in hex.
 * Run: ctest --test-dir build -L cuda --output-on-failure
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cvt.h"
#include "format/format.h"
#include "common/karith.h"
#include "rng/rng.h"
#include "common/rowk.h"
#include "status.h"
#include "testutil.h"

static long compare(const char *what, const float *g, const float *c, size_t n) {
  size_t i;
  long bad = 0;
  for (i = 0; i < n; i++)
    if (memcmp(&g[i], &c[i], sizeof g[i])) {
      if (bad++ < 4)
        printf("  %s [%zu]: gpu %a [%08x] cpu %a [%08x]\n", what, i, (double)g[i],
               lowp_ka_bits(g[i]), (double)c[i], lowp_ka_bits(c[i]));
    }
  return bad;
}

int main(void) {
  static const size_t ns[] = {1, 7, 32, 33, 255, 256, 257, 1000, 4097};
  enum { R = 5, NMAX = 4097 };
  static float x[R * NMAX], yg[R * NMAX], yc[R * NMAX], mg[R], mc[R], vg[R], vc[R];
  int32_t t[R];
  lowp_rng_t r;
  size_t a, i;
  lowp_test_start("trowk_gpu");
  if (lowp_cuda_device_count() == 0) lowp_test_skip("no CUDA device (or a build without CUDA)");
  lowp_rng_init(&r, lowp_test_seed(), 31);
  for (a = 0; a < sizeof ns / sizeof ns[0]; a++) {
    size_t n = ns[a];
    char what[64];
    int v, st1, st2;
    for (i = 0; i < R * n; i++) x[i] = (float)(lowp_rng_normal(&r) * 6 + (i % 3));
    for (v = 0; v < 3; v++) {
      const lowp_format_t *f = v == 0 ? &LOWP_FMT_FP32 : v == 1 ? &LOWP_FMT_FP16 : &LOWP_FMT_BF16;
      lowp_ka_fmt_t k;
      lowp_rowk_fmt(&k, f);
      st1 = lowp_rsum_cuda(yg, x, R, n, k);
      st2 = lowp_rsum_cpu(yc, x, R, n, k);
      snprintf(what, sizeof what, "sum %s n=%zu", f->name, n);
      lowp_test_check(st1 == LOWP_OK && st2 == LOWP_OK && compare(what, yg, yc, R) == 0,
                      "%s: GPU = twin (status %d %d)", what, st1, st2);
    }
    for (v = 0; v < 2; v++) {
      st1 = lowp_softmax_cuda(yg, x, R, n, v);
      st2 = lowp_softmax_cpu(yc, x, R, n, v);
      snprintf(what, sizeof what, "softmax %s n=%zu", v ? "stable" : "naive", n);
      lowp_test_check(st1 == LOWP_OK && st2 == LOWP_OK && compare(what, yg, yc, R * n) == 0,
                      "%s: GPU = twin (status %d %d)", what, st1, st2);
    }
    for (v = 0; v < 3; v++) {
      st1 = lowp_layernorm_cuda(yg, mg, vg, x, R, n, 1e-5f, v);
      st2 = lowp_layernorm_cpu(yc, mc, vc, x, R, n, 1e-5f, v);
      snprintf(what, sizeof what, "layernorm variant %d n=%zu", v, n);
      lowp_test_check(st1 == LOWP_OK && st2 == LOWP_OK && compare(what, yg, yc, R * n) == 0 &&
                          compare(what, mg, mc, R) == 0 && compare(what, vg, vc, R) == 0,
                      "%s: GPU = twin (status %d %d)", what, st1, st2);
    }
    for (i = 0; i < R; i++) t[i] = (int32_t)(lowp_rng_next(&r) % n);
    st1 = lowp_xent_cuda(yg, x, t, R, n);
    st2 = lowp_xent_cpu(yc, x, t, R, n);
    snprintf(what, sizeof what, "xent n=%zu", n);
    lowp_test_check(st1 == LOWP_OK && st2 == LOWP_OK && compare(what, yg, yc, R) == 0,
                    "%s: GPU = twin (status %d %d)", what, st1, st2);
  }
  /* grad scaler: unscale with an inf among the gradients, then updates */
  {
    enum { G = 100000 };
    static float gg[G], gc[G];
    int fg = -1, fc = -1, step, ok = 1;
    float sg = 65536.0f, sc = 65536.0f;
    int32_t tg = 0, tc = 0;
    for (i = 0; i < G; i++) gg[i] = gc[i] = (float)(lowp_rng_normal(&r) * 1e4);
    gg[G / 2] = gc[G / 2] = INFINITY;
    lowp_test_check(lowp_unscale_cuda(gg, G, 1.0f / 65536.0f, &fg) == LOWP_OK &&
                        lowp_unscale_cpu(gc, G, 1.0f / 65536.0f, &fc) == LOWP_OK && fg == 1 &&
                        fc == 1 && compare("unscale", gg, gc, G) == 0,
                    "unscale: GPU = twin, inf found (%d %d)", fg, fc);
    for (step = 0; step < 40 && ok; step++) {
      int inf = step % 7 == 3;
      ok = lowp_scaler_update_cuda(&sg, &tg, inf, 2.0, 0.5, 3) == LOWP_OK;
      lowp_ka_scaler_update(&sc, &tc, inf, 2.0, 0.5, 3);
      ok = ok && sg == sc && tg == tc;
    }
    lowp_test_check(ok, "scaler update: GPU = twin over %d steps", step);
  }
  return lowp_test_end();
}
