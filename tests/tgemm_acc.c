/* tgemm_acc -- the CPU accumulation twin against the hardware's own FMA and adds */

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "cpu/gemm_acc.h"
#include "rng/dist.h"
#include "status.h"
#include "testutil.h"

enum { M = 5, N = 4, K = 700 };

static int same(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  return x == y && signbit(x) == signbit(y);
}

int main(void) {
  static double a[M * K], b[K * N], c[M * N], c2[M * N];
  lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
  lowp_gemm_acc_cfg_t cfg;
  size_t i, j, l;
  uint64_t seed;
  lowp_test_start("tgemm_acc");
  seed = lowp_test_seed();

  /* hand case: double rounding. s = 1 + 2^-23, a b = 2^-24 - 2^-70 (fp32
     factors 1 + 2^-23 and 2^-24 (1 - 2^-23)): s + ab lies just below the
     fp32 midpoint 1 + 2^-23 + 2^-24, but rounds to it in binary64, so
     rounding the binary64 sum to fp32 would give 1 + 2^-22. One rounding
     gives 1 + 2^-23 (as fmaf does). */
  {
    double ha = 1 + 0x1p-23, hb = 0x1p-24 * (1 - 0x1p-23), hc = 1 + 0x1p-23;
    memset(&cfg, 0, sizeof cfg);
    cfg.acc = &LOWP_FMT_FP32;
    lowp_gemm_acc_ref(&hc, &ha, &hb, 1, 1, 1, &cfg);
    lowp_test_check(hc == 1 + 0x1p-23, "double rounding: %a, want 0x1.000002p+0", hc);
    lowp_test_check(hc == (double)fmaf((float)ha, (float)hb, (float)(1 + 0x1p-23)), "fmaf agrees");
  }
  /* oracle 1: exact products, fp64 accumulator, rne = a chain of fma()
     (IEEE 754 fusedMultiplyAdd: one rounding), with fp64 spread data */
  d.kind = LOWP_DIST_UNIFORM11;
  lowp_dist_fill(a, M * K, &d, &LOWP_FMT_FP64, seed, 1);
  lowp_dist_fill(b, K * N, &d, &LOWP_FMT_FP64, seed, 2);
  memset(&cfg, 0, sizeof cfg);
  cfg.acc = &LOWP_FMT_FP64;
  memset(c, 0, sizeof c);
  lowp_test_check(lowp_gemm_acc_ref(c, a, b, M, N, K, &cfg) == LOWP_OK, "fp64 fma run");
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) {
      double s = 0;
      for (l = 0; l < K; l++) s = fma(a[i * K + l], b[l * N + j], s);
      lowp_test_check(same(c[i * N + j], s), "fp64 fma chain C[%zu][%zu]: %a vs %a", i, j,
                      c[i * N + j], s);
    }
  /* oracle 2: products rounded to fp64, then added: plain binary64 a*b + s */
  cfg.prod = &LOWP_FMT_FP64;
  memset(c, 0, sizeof c);
  lowp_gemm_acc_ref(c, a, b, M, N, K, &cfg);
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) {
      double s = 0;
      for (l = 0; l < K; l++) s = s + a[i * K + l] * b[l * N + j];
      lowp_test_check(same(c[i * N + j], s), "fp64 mul+add C[%zu][%zu]: %a vs %a", i, j,
                      c[i * N + j], s);
    }
  /* oracle 3: fp16 inputs, exact products, fp32 accumulator = fmaf chain
     (fmaf rounds a*b + s once to binary32: no double rounding), with an
     addend C; and fp32 inputs, whose products are not exact in fp32 */
  {
    const lowp_format_t *ins[2] = {&LOWP_FMT_FP16, &LOWP_FMT_FP32};
    int q;
    for (q = 0; q < 2; q++) {
      d.kind = LOWP_DIST_NORMAL;
      lowp_dist_fill(a, M * K, &d, ins[q], seed, 3);
      lowp_dist_fill(b, K * N, &d, ins[q], seed, 4);
      lowp_dist_fill(c, M * N, &d, &LOWP_FMT_FP32, seed, 5);
      memcpy(c2, c, sizeof c);
      memset(&cfg, 0, sizeof cfg);
      cfg.acc = &LOWP_FMT_FP32;
      lowp_gemm_acc_ref(c, a, b, M, N, K, &cfg);
      for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
          float s = (float)c2[i * N + j];
          for (l = 0; l < K; l++) s = fmaf((float)a[i * K + l], (float)b[l * N + j], s);
          lowp_test_check(same(c[i * N + j], s), "%s in, fp32 fmaf chain C[%zu][%zu]: %a vs %a",
                          ins[q]->name, i, j, c[i * N + j], (double)s);
        }
    }
  }
  /* property: same bytes for 1 and 2 threads, stochastic rounding included */
  {
    lowp_policy_t pol = {0};
    pol.sr_seed = seed;
    memset(&cfg, 0, sizeof cfg);
    cfg.acc = &LOWP_FMT_BF16;
    cfg.acc_rnd = LOWP_RND_SR;
    cfg.prod = &LOWP_FMT_BF16;
    cfg.prod_rnd = LOWP_RND_SR;
    cfg.pol = &pol;
    memset(c, 0, sizeof c);
    memset(c2, 0, sizeof c2);
    omp_set_num_threads(1);
    lowp_gemm_acc_ref(c, a, b, M, N, K, &cfg);
    omp_set_num_threads(2);
    lowp_gemm_acc_ref(c2, a, b, M, N, K, &cfg);
    lowp_test_check(!memcmp(c, c2, sizeof c), "thread count changes the result");
    /* the dot entry point draws the indices of output 0 */
    {
      double y, bc[K];
      for (l = 0; l < K; l++) bc[l] = b[l * N];
      memset(c2, 0, sizeof c2);
      lowp_gemm_acc_ref(c2, a, b, 1, N, K, &cfg); /* m = 1: output 0 = C[0][0] */
      lowp_dot_acc_ref(&y, a, 1, bc, 1, K, 0.0, &cfg);
      lowp_test_check(same(y, c2[0]), "dot == gemm output 0 under sr: %a vs %a", y, c2[0]);
    }
  }
  /* bad configurations */
  memset(&cfg, 0, sizeof cfg);
  lowp_test_check(lowp_gemm_acc_ref(c, a, b, M, N, K, &cfg) == LOWP_EINVAL, "no acc format");
  cfg.acc = &LOWP_FMT_FP32;
  cfg.acc_rnd = (lowp_rounding_t)42;
  lowp_test_check(lowp_gemm_acc_ref(c, a, b, M, N, K, &cfg) == LOWP_EROUND, "bad mode");
  return lowp_test_end();
}
