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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/accum.h"
#include "status.h"

/* x + y rounded once to acc (rne), as lowp_accum_add gives it, in binary64 arithmetic where that is
   quick (fast: acc a signed format with zero and subnormals, p <= 24, emax <= 127; ebmin the binary64
   exponent field of 2^emin, p its precision, xmax its largest value):
   TwoSum s + e = x + y exactly; s made round-to-odd (an inexact s with an even last bit moved one ulp
   toward e); then rounded to nearest even at acc's quantum in s's binade, 2^(max(e_s, emin) - p + 1),
   by (s + M) - M with M = 1.5 2^(max(e_s, emin) + 53 - p) (x + M stays in M's binade, whose ulp is that
   quantum; a zero result takes s's sign). Rounding to odd in 53 bits and then to nearest in p <= 51 is rounding to nearest once
   (Boldo & Melquiond, IEEE TC 57(4), 2008, Theorem 1). A sum that is zero, not finite, or rounds beyond
   xmax takes lowp_accum_add (signed zeros, overflow, NaN). tests/tgemm_lanes.c holds the kernel to its
   definition with lowp_accum_add. */
typedef struct {
  int fast;
  uint64_t ebmin;
  int p;
  double xmax;
} lanes_acc_t;

static lanes_acc_t lanes_acc(const lowp_format_t *f) {
  lanes_acc_t q;
  q.fast = f->subnormals && f->has_sign && f->has_zero && f->precision <= 24 && f->emax <= 127 && f->emin >= -1000;
  q.ebmin = (uint64_t)(f->emin + 1023);
  q.p = f->precision;
  q.xmax = lowp_format_xmax(f);
  return q;
}

static inline double lanes_add(double x, double y, const lanes_acc_t *q, const lowp_format_t *acc) {
  double s = x + y, bb = s - x, e = (x - (s - bb)) + (y - bb), m, r;
  uint64_t u, eb;
  if (q->fast && s != 0 && fabs(s) < INFINITY) {
    memcpy(&u, &s, sizeof u);
    if (e != 0 && !(u & 1)) u += (e > 0) == (s > 0) ? 1 : (uint64_t)-1;
    memcpy(&s, &u, sizeof s);
    eb = (u >> 52) & 0x7ff;
    if (eb < q->ebmin) eb = q->ebmin;
    u = ((eb + 53 - (uint64_t)q->p) << 52) | ((uint64_t)1 << 51);
    memcpy(&m, &u, sizeof m);
    r = (s + m) - m;
    if (r == 0) r = copysign(0.0, s); /* a sum that rounds to zero keeps its sign; (s + M) - M is +0 */
    if (fabs(r) <= q->xmax) return r;
  }
  (void)lowp_accum_add(&r, x, y, acc, LOWP_RND_NE);
  return r;
}

/* the lanes dot of a (stride 1) and b (stride sb), k terms */
static double lanes_dot(const double *a, const double *b, size_t sb, size_t k, size_t L,
                        const lowp_format_t *acc, double *lane) {
  const lanes_acc_t q = lanes_acc(acc);
  size_t l, t, w;
  for (l = 0; l < L; l++) lane[l] = 0.0;
  for (t = 0; t < k; t++) lane[t % L] = lanes_add(lane[t % L], a[t] * b[t * sb], &q, acc);
  for (w = L / 2; w >= 1; w /= 2)
    for (l = 0; l < w; l++)
      if (l + w < k) lane[l] = lanes_add(lane[l], lane[l + w], &q, acc);
  return lane[0];
}

/* the same in fp32 arithmetic (acc fp32, inputs fp32 values): fmaf is the
   product exact plus one rounding to nearest, a float sum one rounding */
static double lanes_dot32(const double *a, const double *b, size_t sb, size_t k, size_t L, float *lane) {
  size_t l, t, w;
  for (l = 0; l < L; l++) lane[l] = 0.0f;
  for (t = 0; t < k; t++) lane[t % L] = fmaf((float)a[t], (float)b[t * sb], lane[t % L]);
  for (w = L / 2; w >= 1; w /= 2)
    for (l = 0; l < w; l++)
      if (l + w < k) lane[l] = lane[l] + lane[l + w];
  return lane[0];
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
    if (err && errlen)
      snprintf(err, errlen, "gemm_lanes: %s x %s products are not exact in binary64 (at most 53 bits together)",
               p->in[0].name, p->in[1].name);
    return LOWP_EUNSUPPORTED;
  }
  int f32 = is_fp32(&c->acc.acc) && fits_float(&p->in[0]) && fits_float(&p->in[1]);
  if (!(lane = malloc(L * sizeof *lane))) return LOWP_ENOMEM;
  for (bt = 0; bt < d->batch; bt++) {
    const double *A = in[0] + bt * d->m * d->k, *B = in[1] + bt * d->k * d->n;
    double *C = out[0] + bt * d->m * d->n;
    for (i = 0; i < d->m; i++)
      for (j = 0; j < d->n; j++)
        C[i * d->n + j] = lowp_kcfg_r(f32 ? lanes_dot32(A + i * d->k, B + j, d->n, d->k, L, (float *)lane)
                                          : lanes_dot(A + i * d->k, B + j, d->n, d->k, L, &c->acc.acc, lane),
                                      &p->out);
  }
  free(lane);
  return LOWP_OK;
}
