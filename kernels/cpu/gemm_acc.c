/* lowp_gemm_acc -- CPU twin of a GEMM that accumulates in a chosen format */

/*
 * Variants (one code path, chosen by the cfg data):
 *   prod = NULL      products exact, each addition rounded to acc: a chain
 *                    of fused multiply-adds in acc (FMA-based CUDA-core GEMM)
 *   prod = format    products rounded to prod first, then added (no FMA)
 * Orders: recursive only (see gemm_acc.h).
 * The scalar code below is the reference; the public entry points run the
 * vectorised kernels of gemm_acc_fast.c where those give the same bits.
 */

#include "cpu/gemm_acc.h"

#include "cpu/gemm_acc_fast.h"
#include "measure/fpx_dot.h"

#include <math.h>

#include "exact/acc.h"
#include "exact/exact.h"
#include "exact/internal.h"
#include "status.h"

/* ------------------------------------------------------ private helpers */

static int check(const lowp_gemm_acc_cfg_t *g) {
  if (!g || !g->acc) return LOWP_EINVAL;
  if (g->order != LOWP_ORDER_RECURSIVE) return LOWP_EINVAL;
  if (lowp_format_validate(g->acc, NULL, 0) != 0) return LOWP_EFORMAT;
  if (g->prod && lowp_format_validate(g->prod, NULL, 0) != 0) return LOWP_EFORMAT;
  if ((unsigned)g->acc_rnd >= LOWP_RND_COUNT || (unsigned)g->prod_rnd >= LOWP_RND_COUNT)
    return LOWP_EROUND;
  return LOWP_OK;
}

/* round(s + a*b) to acc with the product exact: one rounding of a
   three-term exact sum when binary64 cannot hold a*b */
static void fma_acc(double *s, double a, double b, const lowp_gemm_acc_cfg_t *g,
                    uint64_t index) {
  double p = a * b;
  lowp_acc_t acc;
  /* binary64 holds a*b exactly (a zero factor, or the test of
     exact/internal.h): then one correctly rounded add2 */
  if (((a == 0.0 || b == 0.0) && isfinite(a) && isfinite(b)) ||
      lowp__exact_prod_is_exact(a, b, p)) {
    (void)lowp_exact_add2(s, *s, p, g->acc, g->pol, g->acc_rnd, index);
    return;
  }
  lowp_acc_init(&acc);
  lowp_acc_add(&acc, *s);
  lowp_acc_add_prod(&acc, a, b);
  (void)lowp_acc_round(s, &acc, g->acc, g->pol, g->acc_rnd, index);
}

/* the dot product of one output; base is its first SR index. tr (NULL:
   untraced) sees every rounding: measure/fpx_dot.h */
static double dot(double init, const double *x, size_t incx, const double *w,
                  size_t incw, size_t k, const lowp_gemm_acc_cfg_t *g, uint64_t base,
                  uint64_t init_index, lowp_fpx_dot_t *tr) {
  double s, s0;
  size_t l;
  lowp_policy_t p0 = {0};
  if (g->pol) p0 = *g->pol;
  p0.sr_offset = init_index;
  (void)lowp_round_f64(&s, init, g->acc, &p0, g->acc_rnd);
  if (tr && !lowp_fpx_dot_quiet(tr, g->acc, s))
    lowp_fpx_dot_step(tr, 0, LOWP_FPX_OP_ROUND, 0.0, init, 0.0, s, g->acc, g->acc_rnd);
  for (l = 0; l < k; l++) {
    double a = x[l * incx], b = w[l * incw];
    s0 = s;
    if (g->prod) {
      double p;
      (void)lowp_exact_mul2(&p, a, b, g->prod, g->pol, g->prod_rnd, base + 2 * l + 1);
      (void)lowp_exact_add2(&s, s, p, g->acc, g->pol, g->acc_rnd, base + 2 * l);
      if (tr && !lowp_fpx_dot_quiet(tr, g->prod, p))
        lowp_fpx_dot_step(tr, 2 * l + 1, LOWP_FPX_OP_MUL, 0.0, a, b, p, g->prod, g->prod_rnd);
      if (tr && !lowp_fpx_dot_quiet(tr, g->acc, s))
        lowp_fpx_dot_step(tr, 2 * l + 2, LOWP_FPX_OP_ADD, s0, p, 0.0, s, g->acc, g->acc_rnd);
    } else {
      fma_acc(&s, a, b, g, base + 2 * l);
      if (tr && !lowp_fpx_dot_quiet(tr, g->acc, s))
        lowp_fpx_dot_step(tr, 2 * l + 2, LOWP_FPX_OP_FMA, s0, a, b, s, g->acc, g->acc_rnd);
    }
  }
  return s;
}

/* ----------------------------------------------------------- public API */

/* the scalar reference, traced into tr when tr is not NULL: each thread
   keeps its own trace, merged by minimum sequence (thread-count independent) */
static int gemm_scalar(double *c, const double *a, const double *b, size_t m, size_t n,
                       size_t k, const lowp_gemm_acc_cfg_t *g, lowp_fpx_trace_t *tr) {
  uint64_t off;
  int st = check(g);
  if (st) return st;
  if (m == 0 || n == 0) return LOWP_OK;
  if (!c || (k && (!a || !b))) return LOWP_EINVAL;
  off = g->pol ? g->pol->sr_offset : 0;
#pragma omp parallel
  {
    lowp_fpx_trace_t mine;
    lowp_fpx_dot_t ctx, *cp = tr ? &ctx : NULL;
    long long i;
    if (tr) lowp_fpx_init(&mine);
#pragma omp for schedule(dynamic, 1)
    for (i = 0; i < (long long)m; i++) {
      size_t j;
      for (j = 0; j < n; j++) {
        uint64_t e = (uint64_t)i * n + j;
        if (cp)
          lowp_fpx_dot_begin(cp, &mine, a + (size_t)i * k, 1, b + j, n, c[e],
                              e * (2 * (uint64_t)k + 1), i, (int64_t)j);
        c[e] = dot(c[e], a + (size_t)i * k, 1, b + j, n, k, g, off + 2 * (uint64_t)k * e,
                   off + 2 * (uint64_t)k * m * n + e, cp);
      }
    }
    if (tr) {
#pragma omp critical(lowp_fpx_merge)
      lowp_fpx_merge(tr, &mine);
    }
  }
  return LOWP_OK;
}

int lowp_gemm_acc_scalar(double *c, const double *a, const double *b, size_t m,
                         size_t n, size_t k, const void *cfg) {
  return gemm_scalar(c, a, b, m, n, k, cfg, NULL);
}

int lowp_gemm_acc_fpx(double *c, const double *a, const double *b, size_t m, size_t n,
                      size_t k, const lowp_gemm_acc_cfg_t *cfg, lowp_fpx_trace_t *trace) {
  return gemm_scalar(c, a, b, m, n, k, cfg, trace);
}

int lowp_dot_acc_scalar(double *y, const double *x, size_t incx, const double *w,
                        size_t incw, size_t n, double init,
                        const lowp_gemm_acc_cfg_t *cfg) {
  uint64_t off;
  int st = check(cfg);
  if (st) return st;
  if (!y || (n && (!x || !w))) return LOWP_EINVAL;
  off = cfg->pol ? cfg->pol->sr_offset : 0;
  *y = dot(init, x, incx, w, incw, n, cfg, off, off + 2 * (uint64_t)n, NULL);
  return LOWP_OK;
}

int lowp_gemm_acc_ref(double *c, const double *a, const double *b, size_t m,
                      size_t n, size_t k, const void *cfg) {
  const lowp_gemm_acc_cfg_t *g = cfg;
  lowp_accfast_kind_t kd;
  int st = check(g);
  if (st) return st;
  if (m == 0 || n == 0) return LOWP_OK;
  if (!c || (k && (!a || !b))) return LOWP_EINVAL;
  kd = lowp_gemm_acc_fast_kind(a, b, m, n, k, g);
  if (kd != LOWP_ACCFAST_NONE && lowp_gemm_acc_fast(c, a, b, m, n, k, g, kd, NULL) == LOWP_OK)
    return LOWP_OK;
  return lowp_gemm_acc_scalar(c, a, b, m, n, k, cfg);
}

int lowp_dot_acc_ref(double *y, const double *x, size_t incx, const double *w,
                     size_t incw, size_t n, double init,
                     const lowp_gemm_acc_cfg_t *cfg) {
  int st = check(cfg);
  if (st) return st;
  if (!y || (n && (!x || !w))) return LOWP_EINVAL;
  if (lowp_dot_acc_fast(y, x, incx, w, incw, n, init, cfg) == LOWP_OK) return LOWP_OK;
  return lowp_dot_acc_scalar(y, x, incx, w, incw, n, init, cfg);
}

int lowp_dot_acc_ref_many(double *y, size_t g, const double *const *x, size_t incx, const double *const *w,
                          size_t incw, size_t n, double init, const lowp_gemm_acc_cfg_t *cfg) {
  size_t q;
  int st = check(cfg);
  if (st) return st;
  if (lowp_dot_acc_fast_many(y, g, x, incx, w, incw, n, init, cfg, NULL) == LOWP_OK) return LOWP_OK;
  for (q = 0; q < g; q++) /* lane by lane where the fast step does not serve them all */
    if ((st = lowp_dot_acc_ref(&y[q], x[q], incx, w[q], incw, n, init, cfg)) != LOWP_OK) return st;
  return LOWP_OK;
}
