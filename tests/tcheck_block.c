/* tcheck_block -- lowp check with block-scaled inputs: a planted int8-block scale bug is caught, the honest kernel passes */

/*
 * The subject is an int8 block GEMM in ggml's style (block_q8_0: 32 int8
 * values and an fp16 scale; vec_dot_q8_0_q8_0: exact int32 block sums,
 * sumf += sumi * (d_a * d_b) in fp32), written here from ggml's description
 * and sharing no code with lowp. It quantizes the inputs it is given. The
 * planted bug stores the scale as amax/128 instead of amax/127 (issue 33:
 * sqnr_db 42.1 against the honest 42.4 cannot see it).
 *
 * The check: "in": "int8_b32" makes the pipeline draw fp32 data, quantize it
 * by the format's rule (q8_0's) and give the subject the dequantized values;
 * the exact reference is that of the dequantized values. An honest kernel
 * re-quantizes them exactly (q8_0's quantization is idempotent on its own
 * values), so its only error is the fp32 accumulation over the blocks, which
 * the bound of the declared order (blocked:32, fp32) covers; the buggy
 * kernel re-quantizes onto another grid, an error of about d / sqrt(12) per
 * element that the bound does not allow. For K = 256 .. 16384 the honest
 * kernel must pass and the buggy one fail, on two seeds.
 */

#include "check/pipeline.h"
#include "check/subject.h"
#include "format/bsformat.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------- the int8 kernel */

/* fp32 -> fp16 -> fp32, round to nearest even (fp16 normal range only:
   the scales here are far from its ends) */
static float f16_round(float v) {
  int e;
  double m = frexp(v, &e); /* v = m 2^e, 11 bits: quantum 2^(e - 11) */
  return (float)ldexp(nearbyint(ldexp(m, 11)), e - 11);
}

/* quantize n values (a multiple of 32) as block_q8_0 with divisor div */
static void q8(int8_t *q, float *d, const double *x, size_t n, size_t stride, float div) {
  size_t b, j;
  for (b = 0; b < n / 32; b++) {
    float amax = 0.0f, dd, id;
    for (j = 0; j < 32; j++) {
      float v = fabsf((float)x[(b * 32 + j) * stride]);
      if (v > amax) amax = v;
    }
    dd = amax / div;
    id = dd != 0.0f ? 1.0f / dd : 0.0f;
    for (j = 0; j < 32; j++) { /* clamped: the bug does not also wrap 128 to -128 */
      float r = roundf((float)x[(b * 32 + j) * stride] * id);
      q[b * 32 + j] = (int8_t)(r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r);
    }
    d[b] = f16_round(dd);
  }
}

static int run_q8(const lowp_subject_t *s, double *const *out, const double *const *in, const lowp_problem_t *p,
                  char *err, size_t errlen) {
  float div = *(const float *)s->ctx;
  size_t m = p->dims.m, n = p->dims.n, k = p->dims.k, i, j, b, t;
  int8_t *qa = malloc(k), *qb = malloc(k);
  float *da = malloc(k / 32 * sizeof *da), *db = malloc(k / 32 * sizeof *db);
  (void)err, (void)errlen;
  if (!qa || !qb || !da || !db) return LOWP_ENOMEM;
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      float sumf = 0.0f;
      q8(qa, da, in[0] + i * k, k, 1, div);
      q8(qb, db, in[1] + j, k, n, div);
      for (b = 0; b < k / 32; b++) {
        int32_t sumi = 0;
        for (t = 0; t < 32; t++) sumi += (int32_t)qa[b * 32 + t] * qb[b * 32 + t];
        sumf += (float)sumi * (da[b] * db[b]);
      }
      out[0][i * n + j] = sumf;
    }
  free(qa), free(qb), free(da), free(db);
  return LOWP_OK;
}

/* ---------------------------------------------------------------- test */

static int verdict(float div, size_t k, uint64_t seed, double *percent) {
  lowp_problem_t p;
  lowp_subject_t s;
  lowp_check_inputs_t in;
  lowp_check_result_t r;
  lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
  lowp_rule_t rule;
  lowp_verdict_t v;
  char err[300];
  int i, st;
  memset(&p, 0, sizeof p);
  p.op = lowp_op_by_name("gemm");
  p.dims.batch = 1, p.dims.m = 8, p.dims.n = 8, p.dims.k = k;
  for (i = 0; i < 2; i++) {
    p.in[i] = LOWP_FMT_FP32;
    p.has_bin[i] = 1;
    (void)lowp_bsformat_parse(&p.bin[i], "int8_b32", NULL, 0);
  }
  p.out = LOWP_FMT_FP32;
  memset(&s, 0, sizeof s);
  snprintf(s.name, sizeof s.name, "q8_0 gemm, d = amax/%g", div);
  s.kind = "kernel", s.run = run_q8, s.ctx = &div, s.has_accum = 1;
  (void)lowp_accum_parse(&s.accum, "blocked:32,acc=fp32,fma=0", NULL, 0);
  if (lowp_check_inputs_generate(&in, &p, &d, seed)) return -1;
  st = lowp_check_measure(&r, &p, &s, &in, NULL, err, sizeof err);
  if (st) { lowp_test_check(0, "measure: %s", err); return -1; }
  memset(&rule, 0, sizeof rule);
  rule.kind = LOWP_RULE_BOUND, rule.bound = LOWP_BOUND_GAMMA, rule.limit = 1.0;
  st = lowp_check_rule_eval(&v, &rule, &r, &s);
  *percent = v.percent;
  lowp_check_result_free(&r);
  lowp_check_inputs_free(&in);
  return st ? -1 : v.pass;
}

/* the pipeline's inputs are the format's quantization: every block's values
   are multiples of one fp16 scale with |q| <= 127, one of them 127 */
static void test_inputs(void) {
  lowp_problem_t p;
  lowp_check_inputs_t in;
  lowp_dist_t d = {LOWP_DIST_NORMAL, 0, 0};
  size_t j, b;
  int ok = 1;
  memset(&p, 0, sizeof p);
  p.op = lowp_op_by_name("gemm");
  p.dims.batch = 1, p.dims.m = 2, p.dims.n = 3, p.dims.k = 64;
  p.in[0] = p.in[1] = p.out = LOWP_FMT_FP32;
  p.has_bin[0] = p.has_bin[1] = 1;
  (void)lowp_bsformat_parse(&p.bin[0], "int8_b32", NULL, 0);
  p.bin[1] = p.bin[0];
  lowp_test_check(lowp_check_inputs_generate(&in, &p, &d, 5) == LOWP_OK, "generate");
  for (b = 0; b < 2 * 64 / 32; b++) { /* A: blocks along rows */
    double amax = 0, sc;
    for (j = 0; j < 32; j++) amax = fmax(amax, fabs(in.x[0][b * 32 + j]));
    sc = amax / 127;
    for (j = 0; j < 32; j++) ok &= fabs(in.x[0][b * 32 + j] / sc - nearbyint(in.x[0][b * 32 + j] / sc)) < 1e-9;
    ok &= in.x[0][b * 32] != in.data[0][b * 32] || in.x[0][b * 32 + 1] != in.data[0][b * 32 + 1];
  }
  for (b = 0; b < 3 * 2; b++) { /* B (64 x 3): blocks down the columns */
    double amax = 0, sc;
    size_t col = b % 3, k0 = (b / 3) * 32;
    for (j = 0; j < 32; j++) amax = fmax(amax, fabs(in.x[1][(k0 + j) * 3 + col]));
    sc = amax / 127;
    for (j = 0; j < 32; j++) {
      double t = in.x[1][(k0 + j) * 3 + col] / sc;
      ok &= fabs(t - nearbyint(t)) < 1e-9;
    }
  }
  lowp_test_check(ok, "int8_b32 inputs are q8_0 blocks (A along rows, B down columns)");
  lowp_check_inputs_free(&in);
}

int main(void) {
  static const size_t ks[] = {256, 1024, 4096, 16384};
  size_t i;
  uint64_t seed;
  lowp_test_start("tcheck_block");
  test_inputs();
  for (seed = 1; seed <= 2; seed++)
    for (i = 0; i < sizeof ks / sizeof ks[0]; i++) {
      double ph = 0, pb = 0;
      int honest = verdict(127.0f, ks[i], seed, &ph), buggy = verdict(128.0f, ks[i], seed, &pb);
      printf("  K = %5zu seed %llu: honest %.1f%% of the bound, amax/128 %.1f%%\n", ks[i],
             (unsigned long long)seed, ph, pb);
      lowp_test_check(honest == 1, "K = %zu: the honest q8_0 kernel passes (%.1f%% of the bound)", ks[i], ph);
      lowp_test_check(buggy == 0, "K = %zu: d = amax/128 is caught (%.1f%% of the bound)", ks[i], pb);
    }
  return lowp_test_end();
}
