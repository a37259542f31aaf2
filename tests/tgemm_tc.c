/* tgemm_tc -- the tensor-core GEMM twin: per-element contract, threads, promotion, exact limits */

/*
 * Build: cmake --build build --target tgemm_tc; run from the source root.
 *
 * Oracles: (1) lowp_tc_dot per element (the contract of the twin); (2) the
 * exact GEMM of lib/exact (shares no code with the model): a model that
 * keeps every bit (one block covering k, F wide enough, rounded to nearest)
 * must return the correctly rounded product; (3) hand-computed chains.
 */

#include "cpu/gemm_tc.h"
#include "exact/exact.h"
#include "registry.h"
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fill(double *x, size_t n, const lowp_format_t *f, const char *dist, uint32_t stream) {
  lowp_dist_t d;
  lowp_dist_parse(&d, dist);
  lowp_dist_fill(x, n, &d, f, lowp_test_seed(), stream);
}

/* (1) every element equals lowp_tc_dot; (threads) same bytes with 1 and 2 threads */
static void contract_and_threads(const char *spec, const lowp_format_t *in, const lowp_format_t *out) {
  enum { M = 7, N = 5, K = 300 };
  double a[M * K], b[K * N], c0[M * N], c1[M * N], c2[M * N];
  lowp_gemm_tc_cfg_t cfg;
  char err[256];
  size_t i, j, bad = 0;
  int st;
  fill(a, M * K, in, "normal", 1);
  fill(b, K * N, in, "uniform11", 2);
  fill(c0, M * N, out, "uniform01", 3);
  st = lowp_gemm_tc_config(&cfg, spec, -1, in, out, err, sizeof err);
  if (!lowp_test_check(st == LOWP_OK, "config %s: %s", spec, err)) return;
  memcpy(c1, c0, sizeof c0);
  memcpy(c2, c0, sizeof c0);
  omp_set_num_threads(1);
  st = lowp_gemm_tc_ref(c1, a, b, M, N, K, &cfg);
  omp_set_num_threads(2);
  st |= lowp_gemm_tc_ref(c2, a, b, M, N, K, &cfg);
  lowp_test_check(st == LOWP_OK, "%s: gemm status", spec);
  lowp_test_check(!memcmp(c1, c2, sizeof c1), "%s: 1 and 2 threads differ", spec);
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) {
      double d;
      lowp_tc_dot(&d, a + i * K, 1, b + j, N, K, c0[i * N + j], &cfg.model, in, out);
      bad += memcmp(&d, &c1[i * N + j], sizeof d) != 0;
    }
  lowp_test_check(bad == 0, "%s on %s->%s: %zu elements differ from lowp_tc_dot", spec, in->name,
                  out->name, bad);
}

/* (2) a model with (almost) no loss before the one final rounding is the
   exact GEMM correctly rounded: one block spanning k, F = 50 bits, align and
   output to nearest. Products of fp16 values on [0,1) have 22 significant
   bits; only products below 2^-28 (both factors tiny) can lose bits below
   2^-50, and then the fp32 result changes only if the exact value lies
   within 2^-50 of a rounding midpoint: not seen for any seed tried. */
static void exact_limit(void) {
  enum { M = 6, N = 4, K = 64 };
  double a[M * K], b[K * N], c[M * N], r[M * N];
  lowp_gemm_tc_cfg_t cfg;
  char err[256], h1[64], h2[64];
  size_t i, bad = 0;
  fill(a, M * K, &LOWP_FMT_FP16, "uniform01", 4);
  fill(b, K * N, &LOWP_FMT_FP16, "uniform01", 5);
  memset(c, 0, sizeof c);
  lowp_gemm_tc_config(&cfg, "b=64,F=50,align=rne,out=rne", -1, &LOWP_FMT_FP16, &LOWP_FMT_FP32, err,
                      sizeof err);
  lowp_gemm_tc_ref(c, a, b, M, N, K, &cfg);
  lowp_exact_gemm(r, a, b, NULL, M, N, K, &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
  for (i = 0; i < M * N; i++)
    if (c[i] != r[i] && bad++ == 0)
      lowp_test_check(0, "exact limit: element %zu model %s exact %s", i,
                      lowp_test_hex(c[i], h1, sizeof h1), lowp_test_hex(r[i], h2, sizeof h2));
  lowp_test_check(bad == 0, "exact limit: %zu of %d elements differ from lib/exact", bad, M * N);
}

/* (3) chains and promotion by hand, on the fp8 H100 model (13 bits, terms
   truncated individually at 2^(X-13), X the block's largest exponent):
   4096 products 2^-14 (a = b = 2^-7). From c = 0 the chain stays exact
   (X never exceeds -3, so 2^-14 is never cut): 0.25. From c = 1 every
   block aligns to 2^0 and each 2^-14 falls below 2^-13: total stagnation
   at 1. Promoting every 128 products restarts each chain from 0 and adds
   the exact partials 2^-7 in fp32: 1.25. */
static void chains(void) {
  enum { K = 4096 };
  static double a[K], b[K];
  lowp_tc_model_t m;
  char err[256];
  double d;
  size_t i;
  for (i = 0; i < K; i++) { a[i] = 0x1p-7; b[i] = 0x1p-7; }
  lowp_tc_model_get(&m, "h100", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, err, sizeof err);
  lowp_tc_dot(&d, a, 1, b, 1, K, 0.0, &m, &LOWP_FMT_E4M3, &LOWP_FMT_FP32);
  lowp_test_check(d == 0.25, "h100 fp8 chain from 0: %.17g, want 0.25", d);
  lowp_tc_dot(&d, a, 1, b, 1, K, 1.0, &m, &LOWP_FMT_E4M3, &LOWP_FMT_FP32);
  lowp_test_check(d == 1.0, "h100 fp8 chain from 1 stagnates: %.17g, want 1", d);
  m.promote = 128;
  lowp_tc_dot(&d, a, 1, b, 1, K, 1.0, &m, &LOWP_FMT_E4M3, &LOWP_FMT_FP32);
  lowp_test_check(d == 1.25, "h100 fp8 promote=128: %.17g, want 1.25", d);
  /* b200 keeps 25 bits: no stagnation without promotion */
  lowp_tc_model_get(&m, "b200", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, err, sizeof err);
  lowp_tc_dot(&d, a, 1, b, 1, K, 1.0, &m, &LOWP_FMT_E4M3, &LOWP_FMT_FP32);
  lowp_test_check(d == 1.25, "b200 fp8 from 1: %.17g, want 1.25", d);
}

static void registry(void) {
  const lowp_kernel_t *k = lowp_kernel_find("gemm_tc");
  lowp_test_check(k && k->gemm == lowp_gemm_tc_ref && k->op == LOWP_OP_GEMM, "registry has gemm_tc");
}

static void bad_input(void) {
  double a[2] = {0.1, 1}, b[2] = {1, 1}, c[1] = {0};
  lowp_gemm_tc_cfg_t cfg;
  char err[256];
  lowp_gemm_tc_config(&cfg, "a100", -1, &LOWP_FMT_FP16, &LOWP_FMT_FP32, err, sizeof err);
  lowp_test_check(lowp_gemm_tc_ref(c, a, b, 1, 1, 2, &cfg) == LOWP_ERANGE, "0.1 is not fp16: ERANGE");
  lowp_test_check(lowp_gemm_tc_config(&cfg, "h100", 100, &LOWP_FMT_E4M3, &LOWP_FMT_FP32, err, sizeof err) ==
                      LOWP_EINVAL,
                  "promote 100 not a multiple of 32");
  lowp_test_check(lowp_gemm_tc_config(&cfg, "v100", -1, &LOWP_FMT_E4M3, &LOWP_FMT_FP32, err, sizeof err) ==
                      LOWP_EUNSUPPORTED,
                  "v100 has no fp8");
}

int main(void) {
  lowp_test_start("tgemm_tc");
  bad_input();
  chains();
  exact_limit();
  contract_and_threads("h100", &LOWP_FMT_FP16, &LOWP_FMT_FP32);
  contract_and_threads("a100", &LOWP_FMT_BF16, &LOWP_FMT_FP32);
  contract_and_threads("v100", &LOWP_FMT_FP16, &LOWP_FMT_FP16);
  contract_and_threads("h100,promote=128", &LOWP_FMT_E4M3, &LOWP_FMT_FP32);
  contract_and_threads("b200", &LOWP_FMT_E5M2, &LOWP_FMT_FP16);
  contract_and_threads("ada", &LOWP_FMT_TF32, &LOWP_FMT_FP32);
  registry();
  return lowp_test_end();
}
