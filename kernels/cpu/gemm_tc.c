/* lowp_gemm_tc -- GEMM on a tensor-core model (CPU twin, reference variant) */

/*
 * Variant ref: one lowp_tc_dot per output element (row of A, column of B
 * with stride n), OpenMP over rows. Inputs are checked to be values of their
 * formats first: the model's integer unpacking assumes it.
 */

#include "cpu/gemm_tc.h"
#include "cpu/gemm_tc_fast.h"
#include "measure/fpx_dot.h"
#include "status.h"

#include <math.h>
#include <stdio.h>
#include "io/escape.h"

/* ------------------------------------------------------ private helpers */

/* 1 if every x[i] is a value of f (NaN and inf pass: the model's rules). */
static int all_in_format(const double *x, size_t n, const lowp_format_t *f) {
  size_t i;
  for (i = 0; i < n; i++) {
    double y;
    if (!isfinite(x[i])) continue;
    lowp_round_f64(&y, x[i], f, NULL, LOWP_RND_NE);
    if (y != x[i]) return 0;
  }
  return 1;
}

/* ------------------------------------------------------ private helpers */

static int same_values(const lowp_format_t *x, const lowp_format_t *y) {
  return x->precision == y->precision && x->emin == y->emin && x->emax == y->emax &&
         x->subnormals == y->subnormals;
}

/* ----------------------------------------------------------- public API */

int lowp_gemm_tc_config(lowp_gemm_tc_cfg_t *cfg, const char *model_spec, long promote,
                        const lowp_format_t *in, const lowp_format_t *out,
                        char *err, size_t errlen) {
  int st;
  if (!cfg || !model_spec || !in || !out) return LOWP_EINVAL;
  /* tensor cores write fp32 or fp16 (D in mma/wgmma); nothing else */
  if (!same_values(out, &LOWP_FMT_FP32) && !same_values(out, &LOWP_FMT_FP16)) {
    lowp_errf(err, errlen, 0, "tensor cores output fp32 or fp16, not %s", out->name);
    return LOWP_EUNSUPPORTED;
  }
  st = lowp_tc_model_get(&cfg->model, model_spec, in, out, err, errlen);
  if (st != LOWP_OK) return st;
  if (promote >= 0) {
    if (promote > 0 && (size_t)promote % (size_t)cfg->model.bfma.b) {
      lowp_errf(err, errlen, 0, "--promote %ld is not a multiple of the block size %d of model %s",
                promote, cfg->model.bfma.b, model_spec);
      return LOWP_EINVAL;
    }
    cfg->model.promote = (size_t)promote;
  }
  cfg->in = in;
  cfg->out = out;
  return LOWP_OK;
}

/* the arguments and their values (both variants) */
static int check(double *c, const double *a, const double *b, size_t m, size_t n, size_t k,
                 const lowp_gemm_tc_cfg_t *cfg) {
  if (!cfg || !cfg->in || !cfg->out || (m * n != 0 && !c) || (m * k != 0 && !a) ||
      (k * n != 0 && !b))
    return LOWP_EINVAL;
  if (!all_in_format(a, m * k, cfg->in) || !all_in_format(b, k * n, cfg->in) ||
      !all_in_format(c, m * n, cfg->out))
    return LOWP_ERANGE;
  return LOWP_OK;
}

int lowp_gemm_tc_ref(double *c, const double *a, const double *b, size_t m,
                     size_t n, size_t k, const void *cfgv) {
  const lowp_gemm_tc_cfg_t *cfg = (const lowp_gemm_tc_cfg_t *)cfgv;
  int st = check(c, a, b, m, n, k, cfg);
  if (st != LOWP_OK) return st;
  if (lowp_gemm_tc_fast_ok(cfg)) {
    st = lowp_gemm_tc_fast(c, a, b, m, n, k, cfg, NULL);
    if (st != LOWP_ENOMEM) return st;
  }
  return lowp_gemm_tc_scalar(c, a, b, m, n, k, cfg);
}

/* the scalar reference, traced into tr when not NULL (per-thread traces
   merged by minimum sequence: the same for any thread count) */
static int gemm_scalar(double *c, const double *a, const double *b, size_t m, size_t n,
                       size_t k, const lowp_gemm_tc_cfg_t *cfg, lowp_fpx_trace_t *tr) {
  int status = check(c, a, b, m, n, k, cfg);
  if (status != LOWP_OK) return status;
  /* a small GEMM on one thread: a parallel region per call costs more than
     it saves (lowp reveal calls thousands of 2 x 2 GEMMs; each output is
     computed alone, so the bits do not depend on it) */
#pragma omp parallel if ((double)m * (double)n * (double)k >= LOWP_GEMM_TC_PAR_MIN)
  {
    lowp_fpx_trace_t mine;
    lowp_fpx_dot_t ctx, *cp = tr ? &ctx : NULL;
    long i;
    if (tr) lowp_fpx_init(&mine);
#pragma omp for schedule(static)
    for (i = 0; i < (long)m; i++) {
      size_t j;
      for (j = 0; j < n; j++) {
        double d;
        size_t e = (size_t)i * n + j;
        int st;
        if (cp)
          lowp_fpx_dot_begin(cp, &mine, a + (size_t)i * k, 1, b + j, n, c[e],
                             (uint64_t)e * (2 * (uint64_t)k + 1), i, (int64_t)j);
        st = lowp_tc_dot_fpx(&d, a + (size_t)i * k, 1, b + j, n, k, c[e], &cfg->model,
                             cfg->in, cfg->out, cp);
        if (st != LOWP_OK) {
#pragma omp critical(lowp_gemm_tc_status)
          status = st;
        }
        c[e] = d;
      }
    }
    if (tr) {
#pragma omp critical(lowp_fpx_merge)
      lowp_fpx_merge(tr, &mine);
    }
  }
  return status;
}

int lowp_gemm_tc_scalar(double *c, const double *a, const double *b, size_t m,
                        size_t n, size_t k, const void *cfgv) {
  return gemm_scalar(c, a, b, m, n, k, (const lowp_gemm_tc_cfg_t *)cfgv, NULL);
}

int lowp_gemm_tc_fpx(double *c, const double *a, const double *b, size_t m, size_t n,
                     size_t k, const lowp_gemm_tc_cfg_t *cfg, lowp_fpx_trace_t *trace) {
  return gemm_scalar(c, a, b, m, n, k, cfg, trace);
}
