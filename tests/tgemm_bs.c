/* tgemm_bs -- the block-scaled GEMM fast path against its reference, bit for bit */

/*
 * lowp_gemm_bs_fast must return the bytes of lowp_gemm_bs_ref (one
 * lowp_bsmma_dot per output; the model itself is held to an independent
 * simulator by tests/tbsmma.c) for every preset and both zero conventions,
 * on data quantized by lowp's rules (realistic), raw bit patterns (huge
 * exponent spreads, zeros, NaN and inf elements and scales), sparse rows
 * (all-zero instructions: the sign-of-zero rule), C near fp32's largest
 * value (overflow mid-chain) and shapes crossing the 64-column panel and
 * leaving partial instructions and blocks (k = 100, 33, 1).
 */

#include "cpu.h"
#include "cpu/gemm_bs.h"
#include "format/bsquant.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int same(double u, double v) {
  if (isnan(u) || isnan(v)) return isnan(u) && isnan(v);
  return u == v && signbit(u) == signbit(v);
}

/* random values of a block-scaled format: quantized normals, with kind 1
   raw element codes, kind 2 sparse, kind 3 NaN/inf sprinkled */
static void fill(double *q, double *s, size_t rows, size_t cols, const lowp_bsformat_t *bf, lowp_rng_t *g, int kind) {
  size_t i, nb = lowp_bsformat_blocks(bf, cols);
  float *x = malloc(rows * cols * sizeof *x);
  double ts;
  for (i = 0; i < rows * cols; i++) {
    double v = lowp_rng_normal(g) * ldexp(1.0, (int)(lowp_rng_next(g) % 7) - 3);
    if (kind == 1) v = ldexp(v, (int)(lowp_rng_next(g) % 60) - 30);
    if (kind == 2 && lowp_rng_next(g) % 8) v = 0.0;
    x[i] = (float)v;
  }
  (void)lowp_bs_quantize(q, s, &ts, x, rows, cols, bf);
  if (kind == 3) {
    q[lowp_rng_next(g) % (rows * cols)] = NAN;
    s[lowp_rng_next(g) % (rows * nb)] = NAN;
  }
  free(x);
}

static void run(const char *model, const char *fa, const char *fb, int zero, size_t m, size_t n, size_t k, int kind,
                lowp_rng_t *g) {
  lowp_gemm_bs_cfg_t cfg;
  char err[256], spec[128];
  size_t nb, i, bad = 0;
  int isa, ok;
  double *A, *SA, *BT, *SB, *B, *C0, *C1, *C2;
  snprintf(spec, sizeof spec, "%s%s", model, zero ? ",zero=emin" : "");
  if (!lowp_test_check(lowp_gemm_bs_config(&cfg, spec, fa, fb, err, sizeof err) == LOWP_OK, "%s: %s", spec, err)) return;
  nb = lowp_bsformat_blocks(&cfg.fa, k);
  A = malloc(m * k * sizeof *A), SA = malloc(m * nb * sizeof *SA), BT = malloc(n * k * sizeof *BT);
  SB = malloc(n * nb * sizeof *SB), B = malloc(n * k * sizeof *B);
  C0 = malloc(m * n * sizeof *C0), C1 = malloc(m * n * sizeof *C1), C2 = malloc(m * n * sizeof *C2);
  fill(A, SA, m, k, &cfg.fa, g, kind);
  fill(BT, SB, n, k, &cfg.fb, g, kind == 3 ? 0 : kind);
  for (i = 0; i < n * k; i++) B[(i % k) * n + i / k] = BT[i]; /* B is k x n; its blocks run down columns */
  for (i = 0; i < m * n; i++) {
    C0[i] = (float)(lowp_rng_normal(g) * (kind == 1 ? 0x1p100 : 1.0));
    if (kind == 3 && i % 17 == 0) C0[i] = 0x1.fffffep127 * (i % 2 ? -1 : 1);
    if (kind == 2) C0[i] = i % 3 ? 0.0 : -0.0;
  }
  memcpy(C1, C0, m * n * sizeof *C0), memcpy(C2, C0, m * n * sizeof *C0);
  lowp_test_check(lowp_gemm_bs_ref(C1, A, SA, B, SB, m, n, k, &cfg) == LOWP_OK, "%s runs", spec);
  for (isa = 0; isa <= (int)lowp_cpu_isa(0); isa++) { /* every copy this CPU runs: the reference's bytes */
    memcpy(C2, C0, m * n * sizeof *C0);
    bad = 0;
    lowp_test_check(lowp_gemm_bs_fast_isa(C2, A, SA, B, SB, m, n, k, &cfg, lowp_isa_name((lowp_isa_t)isa)) == LOWP_OK,
                    "%s runs on %s", spec, lowp_isa_name((lowp_isa_t)isa));
    for (i = 0; i < m * n; i++)
      if (!same(C1[i], C2[i]) && bad++ < 3)
        lowp_test_check(0, "%s %s x %s k=%zu kind %d (%s): C[%zu] fast %a, reference %a", spec, fa, fb, k, kind,
                        lowp_isa_name((lowp_isa_t)isa), i, C2[i], C1[i]);
    lowp_test_check(bad == 0, "%s %s x %s %zux%zux%zu kind %d (%s): %zu of %zu differ", spec, fa, fb, m, n, k, kind,
                    lowp_isa_name((lowp_isa_t)isa), bad, m * n);
  }
  memcpy(C2, C0, m * n * sizeof *C0);
  ok = lowp_gemm_bs_fast(C2, A, SA, B, SB, m, n, k, &cfg) == LOWP_OK; /* the best copy, as callers run it */
  for (i = 0; i < m * n; i++) ok &= same(C1[i], C2[i]);
  lowp_test_check(ok, "%s %s x %s k=%zu kind %d: lowp_gemm_bs_fast gives the reference's bytes", spec, fa, fb, k, kind);
  lowp_test_check(lowp_gemm_bs_fast_isa(C2, A, SA, B, SB, m, n, k, &cfg, "sse9") == LOWP_EINVAL,
                  "an unknown isa is refused");
  free(A), free(SA), free(BT), free(SB), free(B), free(C0), free(C1), free(C2);
}

int main(void) {
  static const struct { const char *model, *fa, *fb; } cases[] = {
      {"b200,kind=mxf8f6f4", "mxfp8_e4m3", "mxfp8_e4m3"}, {"b200,kind=mxf8f6f4", "mxfp8_e5m2", "mxfp4"},
      {"sm120,kind=mxf8f6f4", "mxfp6_e3m2", "mxfp6_e2m3"}, {"b200,kind=mxf4nvf4", "mxfp4", "mxfp4"},
      {"b200,kind=mxf4nvf4", "elem=e2m1,scale=ue4m3,block=16,rule=absmax", "elem=e2m1,scale=ue4m3,block=16,rule=absmax"},
      {"b200,kind=mxf8f6f4,F=30,K=16", "mxfp8_e4m3", "mxfp8_e5m2"}};
  static const size_t shapes[][3] = {{5, 70, 100}, {3, 64, 33}, {2, 130, 1}, {4, 65, 256}};
  size_t c, s;
  int kind, zero;
  lowp_rng_t g;
  lowp_test_start("tgemm_bs");
  lowp_rng_init(&g, lowp_test_seed(), 7);
  for (c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (kind = 0; kind < 4; kind++)
        for (zero = 0; zero < 2; zero++)
          run(cases[c].model, cases[c].fa, cases[c].fb, zero, shapes[s][0], shapes[s][1], shapes[s][2], kind, &g);
  return lowp_test_end();
}
