/* trowk_fpx -- the CPU twin of the device tracer (kernels/common/fpxd.h): planted exceptions at their keys */

/*
 * The row kernels' CPU twins (kernels/cpu/rowk.c) traced with the device
 * tracer's functions, on rows with one exception planted where the launch
 * order (kernels/common/karith.h) puts it, the expected key derived here by
 * hand from that order:
 *   - exp(100) overflows fp32 at row 2, element 537: the fold's exp
 *     (phase 0, op exp), again in the output pass, then inf / inf there;
 *   - two exp(88.5) = 2.7e38 folded by the same thread (elements 10 and
 *     266: thread 10) overflow at the fold's addition of element 266;
 *   - the same two on threads 10 and 11 meet in the warp tree at offset 1
 *     (level 4) on thread 0: element 256 * 4 + 0;
 *   - on threads 0 and 32 (warps 0 and 1) in the warp fold: 256 * 5 + 1;
 *   - a +inf input under max subtraction: inf - inf at its element (op sub);
 *   - exps that all underflow to 0: 0 / 0 at every output, the first at 0;
 *   - a NaN input: nan_propagated at its exp;
 *   - unscale: a NaN gradient and one that overflows when multiplied by 2.
 * Every NaN the twins store has the GPU's bits 0x7fffffff (karith.h,
 * lowp_ka_gpu_nan), where x86 arithmetic gives 0xffc00000 or passes an
 * operand's payload on: softmax (inf / inf, 0 / 0, NaN inputs, one with a
 * negative sign and a payload), unscale (and unscale by 1, which keeps
 * every bit), sum, cross-entropy and the three layer norms.
 * The record is the same for 1 and several OpenMP threads, and the traced
 * outputs have the untraced kernel's bits.
 * Run: ctest --test-dir build -R trowk_fpx
 */

#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "common/fpxd.h"
#include "common/karith.h"
#include "common/rowk.h"
#include "status.h"

#define ROWS 4
#define N 1000

static float X[ROWS * N], Y[ROWS * N], Y2[ROWS * N];

/* the NaN an x86 multiplication or division would pass on (a negative NaN
   with a payload), and the test of the GPU's NaN bits on the twin's outputs */
#define PNAN_BITS 0xffc00123u


static float pnan(void) {
  uint32_t u = PNAN_BITS;
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* every NaN among y[0..n-1] has the GPU's bits 0x7fffffff (karith.h,
   lowp_ka_gpu_nan), and there are `expect` of them */
static void gpu_nans(const char *what, const float *y, size_t n, size_t expect) {
  size_t i, nans = 0, bad = 0, first = n;
  for (i = 0; i < n; i++)
    if (y[i] != y[i]) {
      nans++;
      if (lowp_ka_bits(y[i]) != LOWP_KA_GPU_NAN && bad++ == 0) first = i;
    }
  lowp_test_check(bad == 0, "%s: %zu of %zu NaN outputs are not 0x%08x, first [%zu] 0x%08x", what, bad, nans,
                  (unsigned)LOWP_KA_GPU_NAN, first, first < n ? (unsigned)lowp_ka_bits(y[first]) : 0u);
  lowp_test_check(nans == expect, "%s: %zu NaN outputs, expected %zu", what, nans, expect);
}

static void fill(float v) {
  int i;
  for (i = 0; i < ROWS * N; i++) X[i] = v;
}

/* run the traced softmax; check the first key's fields and a count */
static void expect(const char *what, int stable, uint32_t row, unsigned phase, uint32_t elem, unsigned op,
                   int kind, int count_kind, unsigned long long count) {
  lowp_fpxd_t t;
  uint32_t r, e;
  unsigned ph, o;
  int k;
  lowp_test_check(lowp_softmax_fpx_cpu(Y, X, ROWS, N, stable, &t) == LOWP_OK, "%s: run", what);
  lowp_fpxd_decode(t.first, &r, &ph, &e, &o, &k);
  lowp_test_check(r == row && ph == phase && e == elem && o == op && k == kind,
                  "%s: first (row %u, phase %u, element %u, op %u, kind %d), expected (%u, %u, %u, %u, %d)", what,
                  r, ph, e, o, k, row, phase, elem, op, kind);
  lowp_test_check(t.first == (lowp_fpxd_key(row, phase, elem, op) | (unsigned long long)kind), "%s: key", what);
  lowp_test_check(t.count[count_kind] == count, "%s: count of kind %d: %llu, expected %llu", what, count_kind,
                  t.count[count_kind], count);
}

static void softmax_cases(void) {
  fill(0.5f);
  X[2 * N + 537] = 100;
  expect("exp(100) at row 2, element 537", 0, 2, LOWP_FPXD_FOLD, 537, LOWP_FPXD_EXP, LOWP_FPXD_OVF_INF,
         LOWP_FPXD_OVF_INF, 2);
  expect("... then inf / inf", 0, 2, LOWP_FPXD_FOLD, 537, LOWP_FPXD_EXP, LOWP_FPXD_OVF_INF, LOWP_FPXD_INVALID, 1);
  gpu_nans("inf / inf (x86: 0xffc00000)", Y, ROWS * N, 1);
  fill(0);
  X[N + 10] = X[N + 266] = 88.5f;
  expect("fold addition of element 266 (thread 10)", 0, 1, LOWP_FPXD_FOLD, 266, LOWP_FPXD_ADD, LOWP_FPXD_OVF_INF,
         LOWP_FPXD_OVF_INF, 1);
  fill(0);
  X[3 * N + 10] = X[3 * N + 11] = 88.5f;
  expect("warp tree, offset 1, thread 0", 0, 3, LOWP_FPXD_TREE, 256 * 4 + 0, 0, LOWP_FPXD_OVF_INF,
         LOWP_FPXD_OVF_INF, 1);
  fill(0);
  X[0] = X[32] = 88.5f;
  expect("warp fold, warp 1", 0, 0, LOWP_FPXD_TREE, 256 * 5 + 1, 0, LOWP_FPXD_OVF_INF, LOWP_FPXD_OVF_INF, 1);
  fill(1);
  X[N + 5] = INFINITY;
  expect("stable: inf - inf at row 1, element 5", 1, 1, LOWP_FPXD_FOLD, 5, LOWP_FPXD_SUB, LOWP_FPXD_INVALID,
         LOWP_FPXD_INVALID, 2);
  fill(-200);
  expect("0 / 0 after exps underflow", 0, 0, LOWP_FPXD_OUT, 0, LOWP_FPXD_DIV, LOWP_FPXD_INVALID, LOWP_FPXD_INVALID,
         ROWS * N);
  gpu_nans("0 / 0", Y, ROWS * N, ROWS * N);
  fill(1);
  X[7] = NAN;
  expect("NaN input at element 7", 0, 0, LOWP_FPXD_FOLD, 7, LOWP_FPXD_EXP, LOWP_FPXD_NAN_PROP, LOWP_FPXD_INVALID,
         0);
  gpu_nans("NaN input", Y, ROWS * N, N);
  X[7] = pnan();
  X[2 * N + 1] = INFINITY;
  X[2 * N + 2] = -INFINITY;
  /* stable: row 0's max is the NaN, so its first subtraction x_0 - m propagates it; row 2's inf - inf
     is invalid in the fold and again in the output pass */
  expect("stable, NaN input with a payload", 1, 0, LOWP_FPXD_FOLD, 0, LOWP_FPXD_SUB, LOWP_FPXD_NAN_PROP,
         LOWP_FPXD_INVALID, 2);
  gpu_nans("stable, payload NaN and +-inf (x86: 0xffc00123, 0xffc00000)", Y, ROWS * N, 2 * N);
  (void)lowp_softmax_fpx_cpu(Y, X, ROWS, N, 0, NULL);
  gpu_nans("naive, payload NaN and +-inf", Y, ROWS * N, N + 1);
}

/* the other row kernels' twins: a NaN with a payload in, the GPU's NaN out */
static void other_twins(void) {
  static const lowp_ka_fmt_t f32 = {24, -126, 127}, bf16 = {8, -126, 127};
  float y[ROWS], mu[ROWS], var[ROWS];
  int32_t t[ROWS] = {0, 1, 2, 3};
  int v;
  fill(0.25f);
  X[N + 17] = pnan();
  X[3 * N + 0] = INFINITY;
  X[3 * N + 1] = -INFINITY;
  (void)lowp_rsum_cpu(y, X, ROWS, N, f32);
  gpu_nans("sum fp32", y, ROWS, 2);
  (void)lowp_rsum_cpu(y, X, ROWS, N, bf16);
  gpu_nans("sum bf16", y, ROWS, 2);
  (void)lowp_xent_cpu(y, X, t, ROWS, N);
  gpu_nans("cross-entropy", y, ROWS, 2);
  for (v = 0; v < 3; v++) {
    char w[64];
    (void)lowp_layernorm_cpu(Y, mu, var, X, ROWS, N, 1e-5f, v);
    snprintf(w, sizeof w, "layernorm %d outputs", v);
    gpu_nans(w, Y, ROWS * N, 2 * N);
    snprintf(w, sizeof w, "layernorm %d means", v);
    gpu_nans(w, mu, ROWS, 2);
    snprintf(w, sizeof w, "layernorm %d variances", v);
    gpu_nans(w, var, ROWS, 2);
  }
}

static void unscale_cases(void) {
  static float g[20000];
  lowp_fpxd_t t;
  int found, i;
  for (i = 0; i < 20000; i++) g[i] = 1e-3f * (float)(i % 7);
  g[12345] = NAN;
  g[100] = 3e38f;
  lowp_test_check(lowp_unscale_fpx_cpu(g, 20000, 2.0f, &found, &t) == LOWP_OK && found == 1, "unscale run");
  lowp_test_check(t.first == ((100ULL << 4) | LOWP_FPXD_OVF_INF) && t.count[LOWP_FPXD_OVF_INF] == 1 &&
                      t.count[LOWP_FPXD_NAN_PROP] == 1,
                  "unscale: first 0x%llx (overflow at 100 expected), counts %llu %llu", t.first,
                  t.count[LOWP_FPXD_OVF_INF], t.count[LOWP_FPXD_NAN_PROP]);
  g[100] = 1;
  g[12345] = NAN;
  (void)lowp_unscale_fpx_cpu(g, 20000, 0.5f, &found, &t);
  lowp_test_check(t.first == ((12345ULL << 4) | LOWP_FPXD_NAN_PROP), "unscale: NaN at 12345: 0x%llx", t.first);
  g[12345] = pnan();
  g[12346] = NAN;
  (void)lowp_unscale_fpx_cpu(g, 20000, 0.5f, &found, &t);
  gpu_nans("unscale: NaN times 0.5 (x86: the operand's NaN)", g, 20000, 2);
  g[12345] = pnan();
  (void)lowp_unscale_fpx_cpu(g, 20000, 1.0f, &found, &t);
  lowp_test_check(found == 1 && lowp_ka_bits(g[12345]) == PNAN_BITS && lowp_ka_bits(g[12346]) == LOWP_KA_GPU_NAN,
                  "unscale by 1 keeps every bit: found %d, 0x%08x 0x%08x", found, (unsigned)lowp_ka_bits(g[12345]),
                  (unsigned)lowp_ka_bits(g[12346]));
}

/* random rows with exceptions scattered: the same record for any thread
   count, and the untraced kernel's bits */
static void invariance(void) {
  lowp_fpxd_t a, b;
  int i, same = 1;
  srand(36);
  for (i = 0; i < ROWS * N; i++) X[i] = (float)(rand() % 2000) / 10.0f - 100.0f;
  X[3 * N + 999] = NAN;
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  (void)lowp_softmax_fpx_cpu(Y, X, ROWS, N, 0, &a);
#ifdef _OPENMP
  omp_set_num_threads(4);
#endif
  (void)lowp_softmax_fpx_cpu(Y2, X, ROWS, N, 0, &b);
  lowp_test_check(memcmp(&a, &b, sizeof a) == 0 && a.first != LOWP_FPXD_NONE,
                  "1 vs 4 threads: 0x%llx vs 0x%llx", a.first, b.first);
  (void)lowp_softmax_cpu(Y2, X, ROWS, N, 0);
  for (i = 0; i < ROWS * N; i++) same &= memcmp(&Y[i], &Y2[i], sizeof Y[i]) == 0;
  lowp_test_check(same, "traced outputs differ from the untraced kernel's");
  printf("random rows: first key 0x%016llx, overflow %llu, invalid %llu, nan %llu\n", a.first,
         a.count[LOWP_FPXD_OVF_INF], a.count[LOWP_FPXD_INVALID], a.count[LOWP_FPXD_NAN_PROP]);
}

int main(void) {
  lowp_test_start("trowk_fpx");
  softmax_cases();
  unscale_cases();
  other_twins();
  invariance();
  return lowp_test_end();
}
