/* lowp bench gemm, block-scaled rows -- the block-scaled MMA model: reference vs fast path, ns per multiply-add */

/*
 * Inputs: N x N normal data quantized to the operands' formats by their
 * default rules. ref = lowp_gemm_bs_ref (one lowp_bsmma_dot per output) on
 * the first rows; fast = lowp_gemm_bs_fast_isa on all N rows (the --isa
 * copy: --isa avx2 times the AVX2 kernel on an AVX-512 CPU), best of reps; the
 * rows both computed are compared byte for byte ("same") before any time is
 * printed as valid. One thread (the kernel has no threading).
 */

#include "bench.h"
#include "cli.h"
#include "cpu/gemm_bs.h"
#include "format/bsquant.h"
#include "rng/rng.h"
#include "status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) lowp_cli_die("bench gemm", "out of memory");
  return p;
}

/* N x N fp32 normals quantized to bf along rows: elements q, scales s */
static void quantized(double *q, double *s, const lowp_bsformat_t *bf, size_t N, uint64_t seed, uint32_t stream) {
  float *x = xalloc(N * N * sizeof *x);
  lowp_rng_t g;
  double ts;
  size_t i;
  lowp_rng_init(&g, seed, stream);
  for (i = 0; i < N * N; i++) x[i] = (float)lowp_rng_normal(&g);
  if (lowp_bs_quantize(q, s, &ts, x, N, N, bf) != LOWP_OK) lowp_cli_die("bench gemm", "quantization failed");
  free(x);
}

static int bs_row(const char *model, const char *fa, const char *fb, size_t N, size_t rows, int reps, uint64_t seed,
                  const char *isa) {
  lowp_gemm_bs_cfg_t cfg;
  char err[256], label[96];
  size_t nb, r = rows < N ? rows : N, i, j;
  double *A, *SA, *BT, *B, *SB, *C, *Cr, t, best = 1e300, tref, madds = (double)N * N * N;
  int rep, bad = 0;
  if (lowp_gemm_bs_config(&cfg, model, fa, fb, err, sizeof err)) lowp_cli_die("bench gemm", "%s", err);
  nb = lowp_bsformat_blocks(&cfg.fa, N);
  A = xalloc(N * N * sizeof *A), SA = xalloc(N * nb * sizeof *SA), BT = xalloc(N * N * sizeof *BT);
  B = xalloc(N * N * sizeof *B), SB = xalloc(N * nb * sizeof *SB), C = xalloc(N * N * sizeof *C);
  Cr = xalloc(r * N * sizeof *Cr);
  quantized(A, SA, &cfg.fa, N, seed, 1);
  quantized(BT, SB, &cfg.fb, N, seed, 2);
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) B[j * N + i] = BT[i * N + j];
  memset(Cr, 0, r * N * sizeof *Cr);
  t = lowp_bench_clock_s(0);
  if (lowp_gemm_bs_ref(Cr, A, SA, B, SB, r, N, N, &cfg)) lowp_cli_die("bench gemm", "reference failed");
  tref = 1e9 * (lowp_bench_clock_s(0) - t) / ((double)r * N * N);
  for (rep = 0; rep < reps; rep++) {
    memset(C, 0, N * N * sizeof *C);
    t = lowp_bench_clock_s(0);
    if (lowp_gemm_bs_fast_isa(C, A, SA, B, SB, N, N, N, &cfg, isa)) lowp_cli_die("bench gemm", "fast path failed");
    t = lowp_bench_clock_s(0) - t;
    if (t < best) best = t;
  }
  best *= 1e9 / madds;
  bad = memcmp(C, Cr, r * N * sizeof *C) != 0;
  snprintf(label, sizeof label, "%s %s", model, fa);
  printf("%-44s %-6s %9.3f %9.4f %8.0fx  %s\n", label, isa, tref, best, tref / best, bad ? "FAIL" : "same");
  free(A), free(SA), free(BT), free(B), free(SB), free(C), free(Cr);
  return bad;
}

int lowp__bench_gemm_bs(size_t N, size_t rows, int reps, uint64_t seed, const char *isa) {
  int bad = 0;
  printf("%-44s %-6s %9s %9s %9s  %s\n", "block-scaled model (lowp_gemm_bs)", "kernel", "ref", "fast", "ref/fast",
         "bits");
  bad |= bs_row("b200,kind=mxf8f6f4", "mxfp8_e4m3", "mxfp8_e4m3", N, rows, reps, seed, isa);
  bad |= bs_row("b200,kind=mxf8f6f4", "mxfp6_e3m2", "mxfp6_e3m2", N, rows, reps, seed, isa);
  bad |= bs_row("b200,kind=mxf4nvf4", "mxfp4", "mxfp4", N, rows, reps, seed, isa);
  bad |= bs_row("b200,kind=mxf4nvf4", "elem=e2m1,scale=ue4m3,block=16,rule=absmax",
                "elem=e2m1,scale=ue4m3,block=16,rule=absmax", N, rows, reps, seed, isa);
  printf("target (issue 33): block-scaled models <= 4 ns per multiply-add at N = 1024, one thread\n");
  return bad;
}
