/* lowp_gemm_lanes -- a SIMD dot product as a registry kernel: interleaved FMA lanes, then a horizontal tree */

/*
 * The order of a vectorised dot product (an AVX2 kernel keeps 4 registers
 * of 8 fp32 lanes: 32 partial sums, each an FMA chain over every 32nd
 * product, reduced at the end by halving), written plainly: every
 * addition is lowp_accum_add (the exact sum rounded once to acc), every
 * product exact in binary64 (inputs of at most 53 bits together). Its
 * summation tree is lowp_tree_from_lanes (model/tree_lanes.h); lowp reveal
 * finds it from the kernel (experiments/order_revelation.c).
 */

#include "cpu/gemm_lanes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu.h"
#include "format/round_ne.h"
#include "model/accum.h"
#include "status.h"
#include "io/escape.h"

/* x + y rounded once to acc (rne), as lowp_accum_add gives it: TwoSum, then the rounding by one binary64
   addition of format/round_ne.h with the remainder's sign as sticky, called here directly (in
   lowp_accum_add it comes after the fp64 and finiteness tests and through lowp_round_f64, a call and its
   policy checks per addition: most of order-revelation's time in its fp16-lane kernels); where it does
   not apply (zero, subnormal binary64 or non-finite sums, a sum on acc's lattice or midway with a
   remainder, overflow, formats it does not cover) lowp_accum_add itself. tests/tgemm_lanes.c holds the
   kernel to its definition with lowp_accum_add. */
static inline double lanes_add(double x, double y, const lowp_format_t *acc, int zeros) {
  double s = x + y, bb = s - x, e = (x - (s - bb)) + (y - bb), r;
  int tern;
  /* a zero sum (x = -y: a binary64 sum is zero only when exact) where acc holds both zeros as they are
     (lanes_zeros): lowp_accum_add's IEEE 754 6.3 rule, like zeros keep their sign, else +0 (the
     probes of lowp reveal are mostly zeros: these were most of the fallbacks) */
  if (s == 0 && zeros) return x == 0 && y == 0 && signbit(x) == signbit(y) ? x : 0.0;
  if (lowp__round_ne_fast(&r, &tern, s, e > 0 ? 1 : e < 0 ? -1 : 0, acc)) return r;
  (void)lowp_accum_add(&r, x, y, acc, LOWP_RND_NE);
  return r;
}

/* 1 if acc holds both zeros, so that lowp_accum_add's zero sum is the IEEE rule's as it is (format/round.c's
   zero_of turns -0 into +0 in an unsigned or fnuz format, its rounding 0 into xmin without a zero) */
static int lanes_zeros(const lowp_format_t *acc) {
  return acc->has_zero && acc->has_sign && acc->nan != LOWP_NAN_NEGZERO;
}

/* the lanes dot of a (stride 1) and b (stride sb), k terms */
static double lanes_dot(const double *a, const double *b, size_t sb, size_t k, size_t L,
                        const lowp_format_t *acc, double *lane) {
  const int zeros = lanes_zeros(acc);
  size_t l, t, w;
  for (l = 0; l < L; l++) lane[l] = 0.0;
  for (t = 0; t < k; t++) lane[t % L] = lanes_add(lane[t % L], a[t] * b[t * sb], acc, zeros);
  for (w = L / 2; w >= 1; w /= 2)
    for (l = 0; l < w; l++)
      if (l + w < k) lane[l] = lanes_add(lane[l], lane[l + w], acc, zeros);
  return lane[0];
}

/* the same in fp32 arithmetic (acc fp32, inputs fp32 values): fmaf is the
   product exact plus one rounding to nearest, a float sum one rounding. The
   terms in rounds of L, lane l's term of a round its FMA: a loop over the
   lanes that the compiler vectorises where FMA is an instruction (each lane
   its own chain, its operations as in the term loop). */
static LOWP_ALWAYS_INLINE double lanes_dot32_body(const double *a, const double *b, size_t sb, size_t k, size_t L,
                                                  float *lane) {
  size_t l, t, w;
  for (l = 0; l < L; l++) lane[l] = 0.0f;
  for (t = 0; t + L <= k; t += L) {
    const double *ar = a + t, *br = b + t * sb;
    for (l = 0; l < L; l++) lane[l] = fmaf((float)ar[l], (float)br[l * sb], lane[l]);
  }
  for (; t < k; t++) lane[t % L] = fmaf((float)a[t], (float)b[t * sb], lane[t % L]);
  for (w = L / 2; w >= 1; w /= 2)
    for (l = 0; l < w; l++)
      if (l + w < k) lane[l] = lane[l] + lane[l + w];
  return lane[0];
}

static double lanes_dot32_base(const double *a, const double *b, size_t sb, size_t k, size_t L, float *lane) {
  return lanes_dot32_body(a, b, sb, k, L, lane);
}

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
/* fmaf one vfmadd instead of a call into libm (a quarter of order-revelation's samples went to this
   kernel and libm's fmaf, 2026-12-01) */
__attribute__((target("avx2,fma"))) static double lanes_dot32_fma(const double *a, const double *b, size_t sb,
                                                                 size_t k, size_t L, float *lane) {
  return lanes_dot32_body(a, b, sb, k, L, lane);
}
#endif

static double lanes_dot32(const double *a, const double *b, size_t sb, size_t k, size_t L, float *lane, int fma) {
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
  if (fma) return lanes_dot32_fma(a, b, sb, k, L, lane);
#endif
  (void)fma;
  return lanes_dot32_base(a, b, sb, k, L, lane);
}

static int is_fp32(const lowp_format_t *f) {
  return f->precision == 24 && f->emin == -126 && f->emax == 127 && f->subnormals;
}

/* every value of f is a float (fmaf takes it exactly) */
static int fits_float(const lowp_format_t *f) {
  return f->precision <= 24 && f->emax <= 127 && f->emin - (f->subnormals ? f->precision - 1 : 0) >= -149;
}

int lowp_kernel_gemm_lanes(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                           const lowp_problem_t *p, char *err, size_t errlen) {
  const lowp_dims_t *d = &p->dims;
  size_t L = c->lanes ? (size_t)c->lanes : 32, bt, i, j;
  double *lane;
  if (p->in[0].precision + p->in[1].precision > 53) {
    lowp_errf(err, errlen, 0, "gemm_lanes: %s x %s products are not exact in binary64 (at most 53 bits together)",
              p->in[0].name, p->in[1].name);
    return LOWP_EUNSUPPORTED;
  }
  int f32 = is_fp32(&c->acc.acc) && fits_float(&p->in[0]) && fits_float(&p->in[1]);
  const int fma = lowp_cpu_isa(1) >= LOWP_ISA_AVX2;
  if (!(lane = malloc(L * sizeof *lane))) return LOWP_ENOMEM;
  for (bt = 0; bt < d->batch; bt++) {
    const double *A = in[0] + bt * d->m * d->k, *B = in[1] + bt * d->k * d->n;
    double *C = out[0] + bt * d->m * d->n;
    for (i = 0; i < d->m; i++)
      for (j = 0; j < d->n; j++)
        C[i * d->n + j] = lowp_kcfg_r(f32 ? lanes_dot32(A + i * d->k, B + j, d->n, d->k, L, (float *)lane, fma)
                                          : lanes_dot(A + i * d->k, B + j, d->n, d->k, L, &c->acc.acc, lane),
                                      &p->out);
  }
  free(lane);
  return LOWP_OK;
}
