/* tgemm_tc8 -- the fast fp8 tensor-core GEMM: bit-equal to lib/model's lowp_tc_dot, scales, threads */

/*
 * Build: cmake --build build --target tgemm_tc8; run from the source root.
 *
 * Oracle: lowp_tc_dot (lib/model/bfma.c: integer unpacking, the model the
 * GPU-captured vectors pin down), which shares no code with the fast path.
 * Inputs: e4m3 and e5m2 values drawn normal, spread over the whole exponent
 * range (subnormals included), with zeros mixed in; lengths that end inside
 * a block; the h100 and ada presets, with and without promotion; fp32
 * outputs compared bit for bit. Then the scaled GEMM: the dequantized
 * product of power-of-two scales equals the unscaled one times the scale
 * product, and bytes do not depend on the thread count.
 */

#include "cpu/gemm_tc8.h"
#include "rng/dist.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fill(double *x, size_t n, const lowp_format_t *f, const char *dist, uint32_t stream) {
  lowp_dist_t d;
  lowp_rng_t r;
  size_t i;
  lowp_dist_parse(&d, dist);
  lowp_dist_fill(x, n, &d, f, lowp_test_seed(), stream);
  lowp_rng_init(&r, lowp_test_seed(), stream + 1000);
  for (i = 0; i < n; i++)
    if (lowp_rng_next(&r) % 7 == 0) x[i] = 0.0; /* zeros inside blocks */
}

/* The dot product, fast path against the model, for many lengths. */
static void dots(const char *spec, const lowp_format_t *in, const char *dist, long promote) {
  enum { KMAX = 700, REPS = 60 };
  static double a[KMAX], b[KMAX];
  static int8_t xa[KMAX], xb[KMAX];
  lowp_tc_model_t m;
  char err[256], h1[64], h2[64];
  size_t bad = 0, tried = 0;
  int rep, st = lowp_tc_model_get(&m, spec, in, &LOWP_FMT_FP32, err, sizeof err);
  if (!lowp_test_check(st == LOWP_OK, "model %s: %s", spec, err)) return;
  if (promote >= 0) m.promote = (size_t)promote;
  lowp_test_check(lowp_tc8_supported(&m, in) == LOWP_OK, "%s on %s is supported", spec, in->name);
  for (rep = 0; rep < REPS; rep++) {
    size_t k = 1 + (size_t)(rep * 37 % KMAX), chunk = m.promote ? m.promote : k;
    double want, got;
    float y, one = 1.0f;
    fill(a, k, in, dist, (uint32_t)(10 + 2 * rep));
    fill(b, k, in, dist, (uint32_t)(11 + 2 * rep));
    lowp_tc8_exponents(xa, a, k, in);
    lowp_tc8_exponents(xb, b, k, in);
    lowp_tc_dot(&want, a, 1, b, 1, k, 0.0, &m, in, &LOWP_FMT_FP32);
    {
      /* the GEMM of one row and one column, scales 1: promotion by chunk */
      size_t nch = (k + chunk - 1) / chunk, c;
      float *sa = malloc(nch * sizeof *sa), *sb = malloc(nch * sizeof *sb);
      for (c = 0; c < nch; c++) sa[c] = sb[c] = one;
      st = lowp_gemm_tc8(&y, a, xa, 1, k, b, xb, 1, &m, in, chunk, sa, sb, NULL);
      free(sa);
      free(sb);
    }
    got = y;
    if (!m.promote) {
      double d = lowp_tc8_dot(a, xa, b, xb, k, &m);
      if (memcmp(&d, &want, sizeof d) && bad++ < 3)
        lowp_test_check(0, "%s %s %s k=%zu: dot %s, model %s", spec, in->name, dist, k,
                        lowp_test_hex(d, h1, sizeof h1), lowp_test_hex(want, h2, sizeof h2));
    }
    if ((st != LOWP_OK || got != want || signbit(got) != signbit(want)) && bad++ < 3)
      lowp_test_check(0, "%s promote=%zu %s %s k=%zu: gemm %s, model %s (status %d)", spec,
                      m.promote, in->name, dist, k, lowp_test_hex(got, h1, sizeof h1),
                      lowp_test_hex(want, h2, sizeof h2), st);
    tried++;
  }
  lowp_test_check(bad == 0, "%s promote=%zu %s %s: %zu of %zu differ from lowp_tc_dot", spec,
                  m.promote, in->name, dist, bad, tried);
}

/* Scales: power-of-two scales commute with every rounding of the model
   (no value is near fp32's range limits), so the scaled GEMM is the
   unscaled one times the scale product; 1 and 2 threads give the same bytes. */
static void scaled(void) {
  enum { M = 9, N = 7, K = 300, CH = 128, NCH = 3 };
  static double a[M * K], bt[N * K];
  static int8_t xa[M * K], xb[N * K];
  float sa[M * NCH], sb[N * NCH], one[M * NCH > N * NCH ? M * NCH : N * NCH];
  float y0[M * N], y1[M * N], y2[M * N], bias[N];
  lowp_tc_model_t m;
  char err[256];
  size_t i, j, c, bad = 0;
  int st;
  lowp_tc_model_get(&m, "h100", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, err, sizeof err);
  fill(a, M * K, &LOWP_FMT_E4M3, "normal", 200);
  fill(bt, N * K, &LOWP_FMT_E4M3, "normal", 201);
  lowp_tc8_exponents(xa, a, M * K, &LOWP_FMT_E4M3);
  lowp_tc8_exponents(xb, bt, N * K, &LOWP_FMT_E4M3);
  for (i = 0; i < M * NCH || i < N * NCH; i++) one[i] = 1.0f;
  for (i = 0; i < M; i++) sa[i * NCH + 0] = sa[i * NCH + 1] = sa[i * NCH + 2] = ldexpf(1.0f, (int)(i % 5) - 2);
  for (j = 0; j < N; j++) sb[j * NCH + 0] = sb[j * NCH + 1] = sb[j * NCH + 2] = ldexpf(1.0f, -(int)(j % 3));
  for (j = 0; j < N; j++) bias[j] = 0.0f;
  st = lowp_gemm_tc8(y0, a, xa, M, K, bt, xb, N, &m, &LOWP_FMT_E4M3, CH, one, one, bias);
  omp_set_num_threads(1);
  st |= lowp_gemm_tc8(y1, a, xa, M, K, bt, xb, N, &m, &LOWP_FMT_E4M3, CH, sa, sb, bias);
  omp_set_num_threads(2);
  st |= lowp_gemm_tc8(y2, a, xa, M, K, bt, xb, N, &m, &LOWP_FMT_E4M3, CH, sa, sb, bias);
  lowp_test_check(st == LOWP_OK, "scaled gemm status");
  lowp_test_check(!memcmp(y1, y2, sizeof y1), "scaled gemm: 1 and 2 threads differ");
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) bad += y1[i * N + j] != y0[i * N + j] * sa[i * NCH] * sb[j * NCH];
  lowp_test_check(bad == 0, "scaled gemm: %zu of %d elements are not the unscaled ones times the scales",
                  bad, M * N);
  /* a bias is added once, in fp32, at the end */
  for (j = 0; j < N; j++) bias[j] = 0.375f * (float)j;
  lowp_gemm_tc8(y2, a, xa, M, K, bt, xb, N, &m, &LOWP_FMT_E4M3, CH, sa, sb, bias);
  for (bad = 0, i = 0; i < M; i++)
    for (j = 0; j < N; j++) bad += y2[i * N + j] != y1[i * N + j] + bias[j];
  lowp_test_check(bad == 0, "bias: %zu elements differ from the total plus bias", bad);
  /* refusals */
  lowp_test_check(lowp_gemm_tc8(y2, a, xa, M, K, bt, xb, N, &m, &LOWP_FMT_E4M3, 100, sa, sb, NULL) ==
                      LOWP_EINVAL, "chunk 100 (not a multiple of 32) refused");
  c = 0;
  {
    lowp_tc_model_t mm;
    lowp_tc_model_get(&mm, "b200", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, err, sizeof err);
    c = lowp_tc8_supported(&mm, &LOWP_FMT_E4M3) == LOWP_EUNSUPPORTED;
    lowp_tc_model_get(&mm, "h100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, err, sizeof err);
    c &= lowp_tc8_supported(&mm, &LOWP_FMT_FP16) == LOWP_EUNSUPPORTED;
  }
  lowp_test_check((int)c, "b200 fp8 (mma.sync, late c) and fp16 inputs are refused");
}

int main(void) {
  static const char *const dist[3] = {"normal", "spread", "uniform01"};
  int d;
  lowp_test_start("tgemm_tc8");
  for (d = 0; d < 3; d++) {
    dots("h100", &LOWP_FMT_E4M3, dist[d], -1);
    dots("h100", &LOWP_FMT_E5M2, dist[d], -1);
    dots("h100", &LOWP_FMT_E4M3, dist[d], 128);
    dots("h100", &LOWP_FMT_E5M2, dist[d], 64);
    dots("ada", &LOWP_FMT_E4M3, dist[d], -1);
    dots("ada", &LOWP_FMT_E5M2, dist[d], 32);
    dots("b=16,F=20,out=rne", &LOWP_FMT_E4M3, dist[d], -1);
  }
  scaled();
  return lowp_test_end();
}
