/* tgemm_lanes -- the SIMD-lanes GEMM kernel (kernels/cpu/gemm_lanes.c) against its definition, addition by addition */

/*
 * The kernel takes two paths: fp32 arithmetic (acc fp32, fmaf and float
 * sums) and lowp_accum_add per addition (every other accumulator). The
 * oracle here is the definition written out: lane t mod L gets every product
 * a[t] b[t] (exact in binary64) by lowp_accum_add in t order, then the lanes
 * are halved, lane l + lane l + w, while l + w < k; the output rounded to
 * the output format. Inputs: random values of the input format with zeros,
 * subnormals, the largest values (sums that overflow narrow accumulators),
 * and some infinities and NaNs; k from 1 to past a few lanes' worth; L = 8
 * to 64. Every output compared by its bits (NaN by being NaN).
 */

#include "cpu/gemm_lanes.h"
#include "cpu/kcfg.h"
#include "format/format.h"
#include "model/accum.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static lowp_rng_t rng_state;

static double uniform(void) { return (double)(lowp_rng_next(&rng_state) >> 11) * 0x1p-53; }

/* a value of f: mostly moderate, sometimes zero or tiny, and in about one
   dot in two of k terms a huge value (sums past acc's range), and with
   specials an infinity or a NaN: rarely enough that most outputs stay
   finite, where the order shows */
static double zero_rate = 0.05; /* the share of zeros (of either sign) */
static double entry(const lowp_format_t *f, int specials, size_t k) {
  double u = uniform(), v, r, q = 0.5 / (double)k, z = zero_rate;
  if (u < z) v = 0.0;
  else if (u < z + 0.05) v = ldexp(uniform(), f->emin - 2); /* subnormal or flushed */
  else if (u < z + 0.05 + q) v = lowp_format_xmax(f) * (0.5 + uniform()); /* largest values, and past */
  else if (specials && u < z + 0.05 + 1.5 * q) v = INFINITY;
  else if (specials && u < z + 0.05 + 2 * q) v = NAN;
  else v = ldexp(uniform() - 0.5, (int)(uniform() * 8) - 4);
  if (uniform() < 0.5) v = -v;
  (void)lowp_round_f64(&r, v, f, NULL, LOWP_RND_NE);
  return r;
}

/* the definition (the file's comment) */
static double oracle(const double *a, const double *b, size_t sb, size_t k, size_t L,
                     const lowp_format_t *acc, const lowp_format_t *out) {
  double lane[64], y;
  size_t t, l, w;
  for (l = 0; l < L; l++) lane[l] = 0.0;
  for (t = 0; t < k; t++) (void)lowp_accum_add(&lane[t % L], lane[t % L], a[t] * b[t * sb], acc, LOWP_RND_NE);
  for (w = L / 2; w >= 1; w /= 2)
    for (l = 0; l < w && l + w < k; l++) (void)lowp_accum_add(&lane[l], lane[l], lane[l + w], acc, LOWP_RND_NE);
  (void)lowp_round_f64(&y, lane[0], out, NULL, LOWP_RND_NE);
  return y;
}

static int same(double x, double y) {
  return (isnan(x) && isnan(y)) || memcmp(&x, &y, sizeof x) == 0;
}

static void run_case(const lowp_format_t *in, const lowp_format_t *acc, size_t L, size_t m, size_t n,
                     size_t k, int specials) {
  double *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b), *c = malloc(m * n * sizeof *c);
  const double *ins[2];
  double *outs[1];
  lowp_kcfg_t cfg;
  lowp_problem_t p;
  char err[200] = "";
  size_t e, bad = 0;
  int st;
  if (!lowp_test_check(a && b && c, "allocation")) goto done;
  for (e = 0; e < m * k; e++) a[e] = entry(in, specials, k);
  for (e = 0; e < k * n; e++) b[e] = entry(in, specials, k);
  memset(&cfg, 0, sizeof cfg);
  cfg.acc.acc = *acc;
  cfg.lanes = (int)L;
  lowp_problem_init(&p, lowp_op_by_name("gemm"));
  p.dims.batch = 1, p.dims.m = m, p.dims.n = n, p.dims.k = k;
  p.in[0] = p.in[1] = *in;
  p.out = LOWP_FMT_FP32;
  ins[0] = a, ins[1] = b, outs[0] = c;
  st = lowp_kernel_gemm_lanes(&cfg, outs, ins, &p, err, sizeof err);
  if (!lowp_test_check(st == LOWP_OK, "%s in, %s acc, L %zu, k %zu: status %d (%s)", in->name, acc->name, L, k,
                       st, err))
    goto done;
  for (e = 0; e < m * n; e++) {
    double want = oracle(a + (e / n) * k, b + e % n, n, k, L, acc, &p.out);
    if (!same(c[e], want) && bad++ < 3) {
      char h1[40], h2[40];
      lowp_test_check(0, "%s in, %s acc, L %zu, k %zu, output %zu: %s, want %s", in->name, acc->name, L, k, e,
                      lowp_test_hex(c[e], h1, sizeof h1), lowp_test_hex(want, h2, sizeof h2));
    }
  }
  lowp_test_check(bad == 0, "%s in, %s acc, L %zu, k %zu: %zu of %zu outputs differ", in->name, acc->name, L, k,
                  bad, m * n);
done:
  free(a), free(b), free(c);
}

/* Sums that binary64 rounds onto a midpoint of acc (fp16): lane 0 holds x = 1 + 2^-10 (odd last bit),
   then gets y = a b = 2^-11 (1 + 2^-23)(1 -+ 2^-23) = 2^-11 -+ 2^-57: x + y = 1 + 3 2^-11 -+ 2^-57 is
   1 + 3 2^-11 in binary64 (the midpoint between 1 + 2^-10 and 1 + 2^-9), but rounds to 1 + 2^-10 (-)
   or 1 + 2^-9 (+) once; ties to even from the binary64 sum would give 1 + 2^-9 both times. Also the
   mirror with negative y, and -x. */
static void double_rounding(void) {
  const double x = 1.0 + 0x1p-10, a2 = 0x1p-11 * (1.0 + 0x1p-23);
  const double signs[4][3] = {{1, 1, -1}, {1, 1, 1}, {-1, -1, -1}, {-1, -1, 1}}; /* x, y, the 2^-23 */
  const double want[4] = {1.0 + 0x1p-10, 1.0 + 0x1p-9, -(1.0 + 0x1p-10), -(1.0 + 0x1p-9)};
  int i;
  for (i = 0; i < 4; i++) {
    /* L = 2, k = 3: lane 0 = x, then x + a2 b2; lane 1 = 0 */
    double a[3] = {signs[i][0] * x, 0.0, signs[i][1] * a2}, b[3] = {1.0, 0.0, 1.0 + signs[i][2] * 0x1p-23}, c[1];
    const double *ins[2] = {a, b};
    double *outs[1] = {c};
    lowp_kcfg_t cfg;
    lowp_problem_t p;
    char err[200] = "", h1[40], h2[40];
    memset(&cfg, 0, sizeof cfg);
    cfg.acc.acc = LOWP_FMT_FP16;
    cfg.lanes = 2;
    lowp_problem_init(&p, lowp_op_by_name("gemm"));
    p.dims.batch = 1, p.dims.m = 1, p.dims.n = 1, p.dims.k = 3;
    p.in[0] = p.in[1] = LOWP_FMT_FP32;
    p.out = LOWP_FMT_FP32;
    lowp_test_check(lowp_kernel_gemm_lanes(&cfg, outs, ins, &p, err, sizeof err) == LOWP_OK && c[0] == want[i] &&
                        oracle(a, b, 1, 3, 2, &LOWP_FMT_FP16, &p.out) == want[i],
                    "a sum binary64 rounds onto an fp16 midpoint (%d): %s, want %s", i, lowp_test_hex(c[0], h1, sizeof h1),
                    lowp_test_hex(want[i], h2, sizeof h2));
  }
}

int main(void) {
  const lowp_format_t *accs[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_TF32, &LOWP_FMT_E5M2,
                                 &LOWP_FMT_E4M3, &LOWP_FMT_FP32};
  const lowp_format_t *ins[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_E4M3, &LOWP_FMT_FP32};
  static const size_t lanes[] = {8, 16, 32, 64}, ks[] = {1, 5, 31, 64, 100, 257};
  size_t ia, ii, il, ik;
  lowp_test_start("tgemm_lanes");
  lowp_rng_init(&rng_state, lowp_test_seed(), 0);
  for (ia = 0; ia < sizeof accs / sizeof *accs; ia++)
    for (ii = 0; ii < sizeof ins / sizeof *ins; ii++)
      for (il = 0; il < sizeof lanes / sizeof *lanes; il++)
        for (ik = 0; ik < sizeof ks / sizeof *ks; ik++)
          run_case(ins[ii], accs[ia], lanes[il], 3, 5, ks[ik], ik % 2);
  /* mostly zeros of both signs (lowp reveal's probes), sums that are zero, and accumulators whose zeros
     the kernel's zero rule must leave to lowp_accum_add (fnuz: no -0; no subnormals) */
  zero_rate = 0.7;
  {
    lowp_format_t nosub = LOWP_FMT_FP16; /* fp16 without subnormals */
    const lowp_format_t *zaccs[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_E4M3, &LOWP_FMT_E4M3FNUZ,
                                    &LOWP_FMT_E5M2FNUZ, &nosub};
    nosub.subnormals = 0;
    for (ia = 0; ia < sizeof zaccs / sizeof *zaccs; ia++)
      for (ii = 0; ii < sizeof ins / sizeof *ins; ii++)
        for (ik = 0; ik < sizeof ks / sizeof *ks; ik++) run_case(ins[ii], zaccs[ia], 8, 3, 5, ks[ik], 0);
  }
  zero_rate = 0.05;
  double_rounding();
  return lowp_test_end();
}
