/* lowp_reduce -- plain CPU kernels of sums of products: sum, dot, gemv, gemm (batched), tensor-core gemm */

/*
 * Variants (registry names):
 *   sum_acc   each row of x summed in acc, in order (lib/model/accum.h)
 *   dot_acc   one dot product per batch entry
 *   gemv_acc  y = A x per batch entry, one dot per row of A
 *   gemm_acc  C = A B per batch entry, one dot per output element
 *   gemm_tc   C = A B on a tensor-core model (kernels/cpu/gemm_tc.h)
 * With the recursive order and prod=FORMAT, products are rounded to FORMAT
 * first and each dot is lowp_dot_acc_ref (kernels/cpu/gemm_acc.h); otherwise
 * lowp_accum_dot in the order (products exact: an FMA chain; or rounded to
 * acc when fma=0). The result, a value of acc, is rounded (rne) to the
 * output format. Every output element is computed by its own operations
 * (eight side by side, interleaved: lowp_accum_dot_many, lowp_dot_acc_ref_many),
 * so the result does not depend on the thread count (OpenMP over groups of
 * eight output elements).
 * gemm shapes whose order cpu/reduce_fast.h serves run there (same bits:
 * tests/treduce_fast.c).
 */

#include "cpu/reduce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/gemm_acc.h"
#include "cpu/gemm_acc_fast.h"
#include "cpu/gemm_tc.h"
#include "cpu/reduce_fast.h"
#include "status.h"
#include "io/escape.h"

/* ------------------------------------------------------ private helpers */

static void seterr(char *err, size_t errlen, const char *msg) {
  lowp_errf(err, errlen, 0, "%s", msg);
}

/* y[l] = sum_t a[l][t] b[l][t sb], l < g <= LOWP_ACCUM_LANES (and LOWP_DOT_FAST_LANES), the configured
   way, the g dots interleaved (each output's bits its own dot's) */
_Static_assert(LOWP_ACCUM_LANES <= LOWP_DOT_FAST_LANES, "one_dots hands a task of lanes to both");
static int one_dots(double *y, size_t g, const double *const *a, const double *const *b, size_t sb, size_t k,
                    const lowp_kcfg_t *c) {
  if (c->have_prod) {
    lowp_gemm_acc_cfg_t gc;
    memset(&gc, 0, sizeof gc);
    gc.prod = &c->prod;
    gc.prod_rnd = c->acc.rnd;
    gc.acc = &c->acc.acc;
    gc.acc_rnd = c->acc.rnd;
    gc.order = LOWP_ORDER_RECURSIVE;
    return lowp_dot_acc_ref_many(y, g, a, 1, b, sb, k, 0.0, &gc);
  }
  return lowp_accum_dot_many(y, g, a, 1, b, sb, k, &c->acc);
}

/* n outputs y[e] = dot(e), e < n, in parallel; then rounded to out */
typedef struct {
  const double *a, *b;
  size_t m, n, k; /* gemm shape of one batch entry (gemv: n = 1; dot: m = n = 1) */
} shape_t;

/* the batch entries that cpu/reduce_fast.h serves (same bits, whole rows of
   outputs at once; gemm shapes of 8 columns or more), done: 1; else 0 */
static int dots_fast(double *y, const shape_t *s, size_t batch, const lowp_kcfg_t *c) {
  size_t bt, mn = s->m * s->n;
  if (c->have_prod || s->n < 8) return 0;
  for (bt = 0; bt < batch; bt++)
    if (!lowp_gemm_order_fast_ok(s->a + bt * s->m * s->k, s->b + bt * s->k * s->n, s->m,
                                 s->n, s->k, &c->acc))
      return 0;
  for (bt = 0; bt < batch; bt++)
    if (lowp_gemm_order_fast(y + bt * mn, s->a + bt * s->m * s->k, s->b + bt * s->k * s->n,
                             s->m, s->n, s->k, &c->acc, NULL) != LOWP_OK)
      return 0;
  return 1;
}

static int dots(double *y, const shape_t *s, size_t batch, const lowp_kcfg_t *c,
                const lowp_format_t *out) {
  long long e, total = (long long)(batch * s->m * s->n);
  int bad = 0;
  if (dots_fast(y, s, batch, c))
    return lowp_round_array_f64(y, y, (size_t)total, out, NULL, LOWP_RND_NE);
  /* LOWP_ACCUM_LANES outputs a task, their dots interleaved (lowp_accum_dot_many: each output's bits are
     its own dot's; order-revelation's probes, batches of 2 x 2 x 4096 one output at a time, were half
     of its time, each output a serial chain of roundings) */
#pragma omp parallel for schedule(static) reduction(|| : bad)
  for (e = 0; e < (total + LOWP_ACCUM_LANES - 1) / LOWP_ACCUM_LANES; e++) {
    const double *a[LOWP_ACCUM_LANES], *b[LOWP_ACCUM_LANES];
    size_t e0 = (size_t)e * LOWP_ACCUM_LANES, g = (size_t)total - e0 < LOWP_ACCUM_LANES ? (size_t)total - e0
                                                                                        : LOWP_ACCUM_LANES, l;
    for (l = 0; l < g; l++) {
      size_t bt = (e0 + l) / (s->m * s->n), ij = (e0 + l) % (s->m * s->n);
      a[l] = s->a + bt * s->m * s->k + ij / s->n * s->k;
      b[l] = s->b + bt * s->k * s->n + ij % s->n;
    }
    if (one_dots(&y[e0], g, a, b, s->n, s->k, c) != LOWP_OK) bad = 1;
  }
  if (bad) return LOWP_EINVAL;
  return lowp_round_array_f64(y, y, (size_t)total, out, NULL, LOWP_RND_NE);
}

/* ----------------------------------------------------------- public API */

int lowp_kernel_sum_acc(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                        const lowp_problem_t *p, char *err, size_t errlen) {
  const lowp_dims_t *d = &p->dims;
  long long r, rows = (long long)(d->batch * d->m);
  int bad = 0;
  if (c->have_prod) {
    seterr(err, errlen, "sum_acc: a sum has no products (drop prod=)");
    return LOWP_EUNSUPPORTED;
  }
  /* LOWP_ACCUM_LANES rows a task, their sums interleaved (each row's bits its own sum's) */
#pragma omp parallel for schedule(static) reduction(|| : bad)
  for (r = 0; r < (rows + LOWP_ACCUM_LANES - 1) / LOWP_ACCUM_LANES; r++) {
    const double *x[LOWP_ACCUM_LANES];
    size_t r0 = (size_t)r * LOWP_ACCUM_LANES, g = (size_t)rows - r0 < LOWP_ACCUM_LANES ? (size_t)rows - r0
                                                                                     : LOWP_ACCUM_LANES, l;
    for (l = 0; l < g; l++) x[l] = &in[0][(r0 + l) * d->n];
    if (lowp_accum_sum_many(&out[0][r0], g, x, d->n, &c->acc) != LOWP_OK) bad = 1;
  }
  if (bad) return LOWP_EINVAL;
  return lowp_round_array_f64(out[0], out[0], (size_t)rows, &p->out, NULL, LOWP_RND_NE);
}

int lowp_kernel_dot_acc(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                        const lowp_problem_t *p, char *err, size_t errlen) {
  shape_t s = {in[0], in[1], 1, 1, p->dims.k};
  (void)err; (void)errlen;
  return dots(out[0], &s, p->dims.batch, c, &p->out);
}

int lowp_kernel_gemv_acc(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                         const lowp_problem_t *p, char *err, size_t errlen) {
  shape_t s = {in[0], in[1], p->dims.m, 1, p->dims.k};
  (void)err; (void)errlen;
  return dots(out[0], &s, p->dims.batch, c, &p->out);
}

int lowp_kernel_gemm_acc(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                         const lowp_problem_t *p, char *err, size_t errlen) {
  shape_t s = {in[0], in[1], p->dims.m, p->dims.n, p->dims.k};
  (void)err; (void)errlen;
  return dots(out[0], &s, p->dims.batch, c, &p->out);
}

int lowp_kernel_gemm_tc(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                        const lowp_problem_t *p, char *err, size_t errlen) {
  const lowp_dims_t *d = &p->dims;
  lowp_gemm_tc_cfg_t tc;
  size_t bt, mn = d->m * d->n;
  int st;
  if (memcmp(&p->in[0], &p->in[1], sizeof p->in[0]) != 0) {
    seterr(err, errlen, "gemm_tc: A and B must have one format");
    return LOWP_EUNSUPPORTED;
  }
  st = lowp_gemm_tc_config(&tc, c->model, c->promote, &p->in[0], &p->out, err, errlen);
  if (st) return st == LOWP_EINVAL ? LOWP_EUNSUPPORTED : st;
  memset(out[0], 0, d->batch * mn * sizeof out[0][0]);
  for (bt = 0; bt < d->batch; bt++) {
    st = lowp_gemm_tc_ref(&out[0][bt * mn], &in[0][bt * d->m * d->k], &in[1][bt * d->k * d->n],
                          d->m, d->n, d->k, &tc);
    if (st) {
      seterr(err, errlen, st == LOWP_ERANGE ? "gemm_tc: an input is not a value of its format"
                                            : "gemm_tc: the model failed");
      return st;
    }
  }
  return LOWP_OK;
}
