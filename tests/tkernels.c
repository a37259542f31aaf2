/* tkernels -- the registry's plain CPU kernels as subjects: against independent computations, parameters, threads */

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amp/allreduce.h"
#include "check/op.h"
#include "check/pipeline.h"
#include "check/same.h"
#include "check/subject.h"
#include "cpu/gemm_tc.h"
#include "exact/exact.h"
#include "measure/measure.h"
#include "model/accum.h"
#include "registry.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"
#include "tkernel.h"

/* OpenBLAS's thread count (cblas.h of OpenBLAS declares them; kernels/cpu/gemm_blas.c pins one thread) */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

/* a problem of op with dims and formats */
static lowp_problem_t prob(const char *op, size_t batch, size_t m, size_t n, size_t k,
                           const lowp_format_t *in, const lowp_format_t *out) {
  lowp_problem_t p;
  int i;
  memset(&p, 0, sizeof p);
  p.op = lowp_op_by_name(op);
  p.dims.batch = batch; p.dims.m = m; p.dims.n = n; p.dims.k = k;
  for (i = 0; i < LOWP_OP_MAXIO; i++) p.in[i] = *in;
  p.out = *out;
  p.eps = 1e-5;
  return p;
}


static void fill(double *x, size_t n, const lowp_format_t *f, double shift, uint32_t stream) {
  lowp_rng_t g;
  size_t i;
  lowp_rng_init(&g, lowp_test_seed(), stream);
  for (i = 0; i < n; i++) lowp_round_f64(&x[i], shift + lowp_rng_normal(&g), f, NULL, LOWP_RND_NE);
}

static void sums(void) {
  enum { M = 6, N = 700 };
  static double x[M * N], y[M], a[M * 64], b[64 * 5], c[M * 5];
  double *out[1] = {y};
  const double *in[1] = {x};
  lowp_problem_t p = prob("sum", 1, M, N, 1, &LOWP_FMT_FP16, &LOWP_FMT_FP16);
  char err[300];
  size_t r, i;
  int bad = 0;
  fill(x, M * N, &LOWP_FMT_FP16, 1, 1);
  /* recursive fp16: a loop of lowp_accum_add from 0 */
  lowp_test_check(lowp_test_run_kernel(out, in, "sum_acc", "acc=fp16", &p, err, sizeof err) == LOWP_OK, "sum_acc: %s", err);
  for (r = 0; r < M; r++) {
    double s = 0;
    for (i = 0; i < N; i++) lowp_accum_add(&s, s, x[r * N + i], &LOWP_FMT_FP16, LOWP_RND_NE);
    if (s != y[r]) bad++;
  }
  lowp_test_check(bad == 0, "sum_acc recursive fp16 vs a loop of accum_add: %d rows differ", bad);
  /* pairwise fp16 vs lowp_accum_sum directly */
  {
    lowp_accum_t m;
    lowp_test_check(lowp_accum_parse(&m, "pairwise,acc=fp16", err, sizeof err) == LOWP_OK, "parse");
    lowp_test_check(lowp_test_run_kernel(out, in, "sum_acc", "acc=fp16,order=pairwise", &p, err, sizeof err) == LOWP_OK, "%s", err);
    for (bad = 0, r = 0; r < M; r++) {
      double s;
      lowp_accum_sum(&s, &x[r * N], N, &m);
      if (s != y[r]) bad++;
    }
    lowp_test_check(bad == 0, "sum_acc pairwise: %d rows differ", bad);
  }
  /* gemm_acc with prod=fp16: each product rounded to fp16, then added in fp32 */
  {
    lowp_problem_t q = prob("gemm", 1, M, 5, 64, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
    double *o2[1] = {c};
    const double *i2[2] = {a, b};
    size_t j, l;
    fill(a, M * 64, &LOWP_FMT_FP16, 0, 2);
    fill(b, 64 * 5, &LOWP_FMT_FP16, 0, 3);
    lowp_test_check(lowp_test_run_kernel(o2, i2, "gemm_acc", "acc=fp32,prod=fp16", &q, err, sizeof err) == LOWP_OK, "%s", err);
    for (bad = 0, i = 0; i < M; i++)
      for (j = 0; j < 5; j++) {
        double s = 0, pr;
        for (l = 0; l < 64; l++) {
          lowp_round_f64(&pr, a[i * 64 + l] * b[l * 5 + j], &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
          lowp_accum_add(&s, s, pr, &LOWP_FMT_FP32, LOWP_RND_NE);
        }
        if (s != c[i * 5 + j]) bad++;
      }
    lowp_test_check(bad == 0, "gemm_acc prod=fp16: %d outputs differ from a loop", bad);
  }
  /* gemm_tc equals lowp_gemm_tc_ref */
  {
    lowp_problem_t q = prob("gemm", 1, M, 5, 64, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
    double *o2[1] = {c}, d[M * 5] = {0};
    const double *i2[2] = {a, b};
    lowp_gemm_tc_cfg_t tc;
    lowp_test_check(lowp_test_run_kernel(o2, i2, "gemm_tc", "model=a100", &q, err, sizeof err) == LOWP_OK, "%s", err);
    lowp_gemm_tc_config(&tc, "a100", -1, &LOWP_FMT_FP16, &LOWP_FMT_FP32, err, sizeof err);
    lowp_gemm_tc_ref(d, a, b, M, 5, 64, &tc);
    lowp_test_check(memcmp(c, d, sizeof d) == 0, "gemm_tc kernel == lowp_gemm_tc_ref");
  }
}

/* v rounded to fp32, nearest even */
static double rne32(double v) {
  double y;
  lowp_round_f64(&y, v, &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
  return y;
}

static double max_rel(const double *got, const double *want, size_t n) {
  double e = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    double d = fabs(got[i] - want[i]) / fabs(want[i]);
    if (!(d <= e)) e = d;
  }
  return e;
}

/* ------------------------------------------------ acc=: the reductions' format */

/* v rounded to nearest even with p significand bits, exponents >= emin
   (subnormals below), inf beyond xmax: an independent rounding by frexp/rint
   (the default rounding mode is nearest even), not lib/format's */
static double rnd_p(double v, int p, int emin, double xmax) {
  int e, q;
  double r;
  if (v == 0 || !isfinite(v)) return v;
  (void)frexp(v, &e); /* |v| in [2^(e-1), 2^e) */
  q = (e - 1 < emin ? emin : e - 1) - (p - 1);
  r = ldexp(rint(ldexp(v, -q)), q);
  return fabs(r) > xmax ? copysign(INFINITY, v) : r;
}
static double r16(double v) { return rnd_p(v, 11, -14, 65504.0); }
static double rbf(double v) { return rnd_p(v, 8, -126, 0x1.fep127); }

/* the statistics of one row in C float arithmetic (fp32 = acc), in the
   kernel's order; products through a volatile so that no FMA contracts them */
static void stats_f32(float *mean, float *var, const double *x, size_t n, int variant) {
  float s = 0, q = 0, m, dn = (float)n;
  volatile float pr;
  size_t i;
  if (variant == 2) { /* welford */
    float m2 = 0;
    m = 0;
    for (i = 0; i < n; i++) {
      float xi = (float)x[i], d = xi - m, t = d / (float)(i + 1);
      m = m + t;
      pr = d * (xi - m);
      m2 = m2 + pr;
    }
    *mean = m;
    *var = m2 / dn;
    return;
  }
  for (i = 0; i < n; i++) {
    float xi = (float)x[i];
    s = s + xi;
    if (variant == 1) { pr = xi * xi; q = q + pr; }
  }
  m = s / dn;
  *mean = m;
  if (variant == 1) {
    float a = q / dn;
    pr = m * m;
    *var = a - pr;
    if (*var < 0) *var = 0;
    return;
  }
  for (i = 0; i < n; i++) {
    float d = (float)x[i] - m;
    pr = d * d;
    q = q + pr;
  }
  *var = q / dn;
}

/* softmax and layer norm with acc=fp32 against the same computed with C
   float sums and frexp/rint rounding to fp16 or bf16, bit for bit; acc=compute
   is the default; acc=fp32 changes the result where the low-format sum drifts */
static void accum_param(void) {
  enum { M = 3, N = 1500 };
  static double x[M * N], y[M * N], y2[M * N], mean[M], var[M], mean2[M], var2[M];
  static const char *const variants[3] = {"twopass", "onepass", "welford"};
  double *out[3] = {y, mean, var}, *out2[3] = {y2, mean2, var2};
  const double *in[1] = {x};
  char err[300], par[128];
  size_t r, i;
  int v, bad = 0, naive;
  lowp_problem_t p = prob("softmax", 1, M, N, 1, &LOWP_FMT_BF16, &LOWP_FMT_BF16);
  fill(x, M * N, &LOWP_FMT_BF16, 0, 21);
  for (naive = 0; naive < 2; naive++) {
    const char *k = naive ? "softmax_naive" : "softmax_stable";
    lowp_test_check(lowp_test_run_kernel(out, in, k, "compute=bf16,acc=fp32", &p, err, sizeof err) == LOWP_OK, "%s: %s", k, err);
    for (r = 0, bad = 0; r < M; r++) {
      const double *xr = &x[r * N];
      double m = -INFINITY;
      float s = 0;
      for (i = 0; i < N; i++) if (xr[i] > m) m = xr[i];
      if (naive) m = 0;
      for (i = 0; i < N; i++) s = s + (float)rbf(exp(rbf(xr[i] - m)));
      for (i = 0; i < N; i++) bad += y[r * N + i] != rbf(rbf(exp(rbf(xr[i] - m))) / (double)s);
    }
    lowp_test_check(bad == 0, "%s compute=bf16,acc=fp32 == float sum, rint rounding: %d differ", k, bad);
    lowp_test_check(lowp_test_run_kernel(out2, in, k, "compute=bf16", &p, err, sizeof err) == LOWP_OK &&
                        memcmp(y, y2, sizeof y) != 0,
                    "%s: acc=fp32 differs from the bf16 sum over %d terms", k, N);
    lowp_test_check(lowp_test_run_kernel(out, in, k, "compute=bf16,acc=compute", &p, err, sizeof err) == LOWP_OK &&
                        lowp_test_run_kernel(out2, in, k, "compute=bf16,acc=bf16", &p, err, sizeof err) == LOWP_OK &&
                        memcmp(y, y2, sizeof y) == 0,
                    "%s: acc=compute and acc=bf16 are the default", k);
  }
  /* layer norm, fp16 data and normalisation, statistics in fp32; data with
     mean 30 (cancellation in the one-pass formula) */
  p = prob("layernorm", 1, M, N, 1, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
  fill(x, M * N, &LOWP_FMT_FP16, 30, 22);
  for (v = 0; v < 3; v++) {
    int sc;
    for (sc = 0; sc < 2; sc++) {
      snprintf(par, sizeof par, "compute=fp16,acc=fp32,variant=%s,scale=%s", variants[v], sc ? "rsqrt" : "div");
      lowp_test_check(lowp_test_run_kernel(out, in, "layernorm", par, &p, err, sizeof err) == LOWP_OK, "%s: %s", par, err);
      for (r = 0, bad = 0; r < M; r++) {
        float fm, fv, ve, den;
        stats_f32(&fm, &fv, &x[r * N], N, v);
        ve = fv + (float)1e-5;
        den = sc ? (float)(1.0 / sqrt((double)ve)) : sqrtf(ve);
        bad += mean[r] != (double)fm || var[r] != (double)fv;
        for (i = 0; i < N; i++) {
          double d = r16(x[r * N + i] - (double)fm);
          bad += y[r * N + i] != r16(sc ? d * (double)den : d / (double)den);
        }
      }
      lowp_test_check(bad == 0, "layernorm %s == C float statistics, rint rounding: %d differ", par, bad);
    }
    snprintf(par, sizeof par, "compute=fp16,variant=%s", variants[v]);
    lowp_test_check(lowp_test_run_kernel(out2, in, "layernorm", par, &p, err, sizeof err) == LOWP_OK &&
                        var2[0] != var[0],
                    "layernorm %s: fp16 statistics differ from fp32 ones (%g vs %g)", par, var2[0], var[0]);
  }
}

static void nonlinear(void) {
  enum { M = 4, N = 300 };
  static double x[M * N], y[M * N], ex[M * N], mean[M], var[M];
  double *out[3] = {y, mean, var};
  const double *in[1] = {x};
  char err[300];
  size_t r;
  lowp_problem_t p = prob("softmax", 1, M, N, 1, &LOWP_FMT_FP64, &LOWP_FMT_FP64);
  fill(x, M * N, &LOWP_FMT_FP64, 0, 4);
  /* softmax_stable in fp64 vs the exact softmax: each output is exp, a
     subtraction, a sum of n terms and a division, each with relative error
     at most u (libm exp: under 1 ulp): |y - y*| / y* <= (n + 4) u + O(u^2) */
  lowp_test_check(lowp_test_run_kernel(out, in, "softmax_stable", "compute=fp64", &p, err, sizeof err) == LOWP_OK, "%s", err);
  for (r = 0; r < M; r++) lowp_exact_softmax(&ex[r * N], &x[r * N], N, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
  lowp_test_check(max_rel(y, ex, M * N) <= (N + 4) * 0x1p-53 * 1.01,
                  "softmax_stable fp64 within (n+4)u of the exact: %g", max_rel(y, ex, M * N));
  /* layer norm: welford and twopass agree on benign data (fp32), and one-pass
     fails where the mean is 1e4 standard deviations away from 0 */
  {
    lowp_problem_t q = prob("layernorm", 1, M, N, 1, &LOWP_FMT_FP32, &LOWP_FMT_FP32);
    static double yw[M * N], y2[M * N], y1[M * N], m2[M], v2[M];
    double *ow[3] = {yw, mean, var}, *o2[3] = {y2, m2, v2}, *o1[3] = {y1, mean, var};
    fill(x, M * N, &LOWP_FMT_FP32, 0, 5);
    lowp_test_run_kernel(ow, in, "layernorm", "variant=welford", &q, err, sizeof err);
    lowp_test_run_kernel(o2, in, "layernorm", "variant=twopass", &q, err, sizeof err);
    for (r = 0; r < M; r++) lowp_exact_layernorm(&ex[r * N], NULL, NULL, &x[r * N], N, q.eps, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    {
      double e2 = 0, ew = 0;
      size_t i;
      for (i = 0; i < M * N; i++) {
        e2 = fmax(e2, fabs(y2[i] - ex[i]));
        ew = fmax(ew, fabs(yw[i] - ex[i]));
      }
      /* |y| <= sqrt(n) and the statistics carry O(n u) relative error */
      printf("layer norm, fp32, benign: max |error| twopass %.3g, welford %.3g\n", e2, ew);
      lowp_test_check(e2 < 4 * N * 0x1p-24 && ew < 4 * N * 0x1p-24,
                      "twopass %g and welford %g within 4 n u of exact", e2, ew);
    }
    {
      /* scale=rsqrt: y = F(F(x - mean) * F(1/sqrt(F(var + F(eps))))), from the
         kernel's own statistics (mean and var are fp32 values: out = compute) */
      static double yr[M * N], mr[M], vr[M];
      double *orr[3] = {yr, mr, vr}, e = 0;
      size_t i;
      int bad = 0;
      lowp_test_check(lowp_test_run_kernel(orr, in, "layernorm", "variant=twopass,scale=rsqrt", &q, err,
                                           sizeof err) == LOWP_OK, "%s", err);
      for (r = 0; r < M; r++) {
        double ve = rne32(vr[r] + rne32(q.eps)), rs = rne32(1.0 / sqrt(ve));
        bad += mr[r] != m2[r] || vr[r] != v2[r]; /* the same two passes */
        for (i = r * N; i < (r + 1) * N; i++) {
          bad += yr[i] != rne32(rne32(x[i] - mr[r]) * rs);
          e = fmax(e, fabs(yr[i] - ex[i]));
        }
      }
      lowp_test_check(bad == 0, "scale=rsqrt multiplies by F(1/sqrt(F(var + eps))) (%d differ)", bad);
      lowp_test_check(e < 4 * N * 0x1p-24, "scale=rsqrt within 4 n u of exact: %g", e);
    }
    fill(x, M * N, &LOWP_FMT_FP32, 1e4, 6);
    lowp_test_run_kernel(o1, in, "layernorm", "variant=onepass", &q, err, sizeof err);
    lowp_test_run_kernel(o2, in, "layernorm", "variant=twopass", &q, err, sizeof err);
    for (r = 0; r < M; r++) lowp_exact_layernorm(&ex[r * N], NULL, NULL, &x[r * N], N, q.eps, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    {
      double e1 = 0, e2 = 0;
      size_t i;
      for (i = 0; i < M * N; i++) {
        e1 = fmax(e1, fabs(y1[i] - ex[i]));
        e2 = fmax(e2, fabs(y2[i] - ex[i]));
      }
      printf("layer norm, fp32, mean/std = 1e4: max |error| onepass %.3g, twopass %.3g\n", e1, e2);
      lowp_test_check(e1 > 0.1 && e2 < 0.05,
                      "mean/std = 1e4 in fp32: onepass max error %g (catastrophic), twopass %g", e1, e2);
    }
    {
      /* clamp=off: the one-pass formula's own variance; clamp=on (the
         default) is the same clamped at 0, the means identical */
      static double yo[M * N], mo[M], vo[M];
      double *oo[3] = {yo, mo, vo};
      int neg = 0, bad = 0;
      lowp_test_check(lowp_test_run_kernel(oo, in, "layernorm", "variant=onepass,clamp=off", &q, err,
                                           sizeof err) == LOWP_OK, "%s", err);
      for (r = 0; r < M; r++) {
        neg += vo[r] < 0;
        bad += mo[r] != mean[r] || var[r] != (vo[r] < 0 ? 0 : vo[r]);
      }
      printf("layer norm, fp32, mean/std = 1e4, one-pass: %d of %d raw variances negative\n", neg, M);
      lowp_test_check(bad == 0 && neg > 0, "clamp=off: %d negative variances, clamp=on their clamp (%d differ)",
                      neg, bad);
    }
  }
  /* elementwise: exp in fp64 is libm's exp */
  {
    lowp_problem_t q = prob("exp", 1, M, N, 1, &LOWP_FMT_FP64, &LOWP_FMT_FP64);
    size_t i;
    int bad = 0;
    fill(x, M * N, &LOWP_FMT_FP64, 0, 7);
    lowp_test_run_kernel(out, in, "exp", "compute=fp64", &q, err, sizeof err);
    for (i = 0; i < M * N; i++) bad += y[i] != exp(x[i]);
    lowp_test_check(bad == 0, "exp compute=fp64 is libm exp (%d differ)", bad);
    q = prob("cast", 1, M, N, 1, &LOWP_FMT_FP64, &LOWP_FMT_BF16);
    lowp_test_run_kernel(out, in, "cast", "round=rtz", &q, err, sizeof err);
    for (bad = 0, i = 0; i < M * N; i++) {
      double w;
      lowp_round_f64(&w, x[i], &LOWP_FMT_BF16, NULL, LOWP_RND_TZ);
      bad += memcmp(&w, &y[i], sizeof w) != 0;
    }
    lowp_test_check(bad == 0, "cast round=rtz to bf16 (%d differ)", bad);
  }
}

/* allreduce: each row is one element over W workers; the registry kernel
   equals lib/amp's all-reduce called on the worker-major vectors */
static void allreduce(void) {
  enum { W = 7, N = 50 };
  static double x[N * W], y[N];
  static float g[W * N], o[N];
  static const char *const orders[2] = {"ring", "tree"};
  double *out[1] = {y};
  const double *in[1] = {x};
  lowp_problem_t p = prob("sum", 1, N, W, 1, &LOWP_FMT_FP32, &LOWP_FMT_FP16);
  char err[300], prm[64];
  size_t i, w;
  int od, bad;
  fill(x, N * W, &LOWP_FMT_FP32, 0.5, 11);
  for (i = 0; i < N; i++)
    for (w = 0; w < W; w++) g[w * N + i] = (float)x[i * W + w];
  for (od = 0; od < 2; od++) {
    snprintf(prm, sizeof prm, "comm=bf16,acc=fp16,order=%s", orders[od]);
    lowp_test_check(lowp_test_run_kernel(out, in, "allreduce", prm, &p, err, sizeof err) == LOWP_OK,
                    "allreduce[%s]: %s", prm, err);
    lowp_test_check(lowp_allreduce(o, g, W, N, (lowp_ar_order_t)od, &LOWP_FMT_BF16, &LOWP_FMT_FP16,
                                   NULL) == LOWP_OK, "lowp_allreduce");
    for (bad = 0, i = 0; i < N; i++) bad += y[i] != (double)o[i];
    lowp_test_check(bad == 0, "allreduce[%s] vs lib/amp's all-reduce: %d elements differ", prm, bad);
  }
}

/* lowp_check_measure_same: another subject on the same inputs, the exact
   references reused, gives the numbers lowp_check_measure gives */
static void measure_same(void) {
  lowp_problem_t p = prob("gemm", 2, 5, 6, 70, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
  lowp_check_inputs_t in;
  lowp_check_result_t ref, a, b;
  lowp_subject_t s1, s2;
  lowp_dist_t d;
  char err[300];
  int ok;
  lowp_dist_parse(&d, "uniform01");
  lowp_test_check(lowp_check_inputs_generate(&in, &p, &d, 7) == LOWP_OK, "inputs");
  lowp_test_check(lowp_kernel_subject_open(&s1, "gemm_acc", "acc=fp16", err, sizeof err) == LOWP_OK &&
                      lowp_kernel_subject_open(&s2, "gemm_tc", "model=a100", err, sizeof err) == LOWP_OK &&
                      lowp_kernel_subject_bind(&s2, &p, err, sizeof err) == LOWP_OK, "%s", err);
  lowp_test_check(lowp_check_measure(&ref, &p, &s1, &in, NULL, err, sizeof err) == LOWP_OK &&
                      lowp_check_measure(&a, &p, &s2, &in, NULL, err, sizeof err) == LOWP_OK &&
                      lowp_check_measure_same(&b, &ref, &s2, &in, NULL, err, sizeof err) == LOWP_OK,
                  "measure: %s", err);
  ok = !memcmp(a.out[0].got, b.out[0].got, a.out[0].count * sizeof(double)) &&
       !memcmp(a.out[0].exact, b.out[0].exact, a.out[0].count * sizeof(double)) &&
       !memcmp(a.out[0].absab, b.out[0].absab, a.out[0].count * sizeof(double)) &&
       a.max_bwd == b.max_bwd && a.max_ulp == b.max_ulp && a.rmse == b.rmse && a.model.have &&
       b.model.have && a.model.value == b.model.value && !strcmp(b.subject, s2.name) && !b.gamma.have;
  lowp_test_check(ok && b.max_bwd > 0 && ref.gamma.have && ref.max_bwd != b.max_bwd,
                  "measure_same: the same numbers as measure (bwd %g vs %g, model bound %g vs %g)",
                  a.max_bwd, b.max_bwd, a.model.value, b.model.value);
  /* the bound carries its constants: gemm_acc acc=fp16 rne: u = 2^-11, lambda for P = 0.99 */
  lowp_test_check(ref.gamma.u == ldexp(1, -11) && ref.prob.have && ref.prob.u == ldexp(1, -11) &&
                      ref.prob.lambda == lowp_bound_prob_lambda(70, ldexp(1, -11), 0.99) &&
                      fabs(ref.prob.probability - 0.99) < 1e-6 && isnan(ref.gamma.lambda),
                  "the bounds' u %g, lambda %g, probability %g", ref.gamma.u, ref.prob.lambda,
                  ref.prob.probability);
  {
    /* no_absab: the same outputs and exact product, no |A||B| and no backward error */
    lowp_check_opts_t o;
    lowp_check_result_t c;
    memset(&o, 0, sizeof o);
    o.no_absab = 1;
    ok = lowp_check_measure(&c, &p, &s1, &in, &o, err, sizeof err) == LOWP_OK;
    lowp_test_check(ok && !c.out[0].absab && isnan(c.out[0].err.max_bwd) && c.max_ulp == ref.max_ulp &&
                        !memcmp(c.out[0].exact, ref.out[0].exact, c.out[0].count * sizeof(double)),
                    "no_absab: no |A||B| (max_bwd %g), the same errors (max_ulp %g vs %g)",
                    c.out[0].err.max_bwd, c.max_ulp, ref.max_ulp);
    lowp_check_result_free(&c);
  }
  lowp_check_result_free(&ref);
  lowp_check_result_free(&a);
  lowp_check_result_free(&b);
  lowp_test_check(lowp_check_measure_same(&b, NULL, &s2, &in, NULL, err, sizeof err) == LOWP_EINVAL,
                  "measure_same without a reference: EINVAL");
  lowp_check_result_free(&b);
  lowp_subject_close(&s1);
  lowp_subject_close(&s2);
  lowp_check_inputs_free(&in);
}

/* gemm_sgemm (OpenBLAS cblas_sgemm): within gamma_k of fp32 against a binary64 product (whose own error
   is far below it), fp32 values, the same bytes whatever OpenBLAS's and OpenMP's thread counts (with one
   OpenBLAS thread the batch entries go to lowp_spread's threads: an odd batch, and each entry alone), the
   output rounded once to a narrower format, inputs that are not fp32 values refused (in the last entry too) */
static void sgemm(void) {
  enum { B = 5, M = 7, N = 9, K = 300 };
  static double a[B * M * K], b[B * K * N], c1[B * M * N], c2[B * M * N], c16[B * M * N];
  lowp_problem_t p = prob("gemm", B, M, N, K, &LOWP_FMT_FP32, &LOWP_FMT_FP32);
  lowp_problem_t p16 = prob("gemm", B, M, N, K, &LOWP_FMT_FP32, &LOWP_FMT_FP16);
  lowp_problem_t p64 = prob("gemm", B, M, N, K, &LOWP_FMT_FP64, &LOWP_FMT_FP64);
  double *o1[1] = {c1}, *o2[1] = {c2}, *o16[1] = {c16}, worst = 0, g = lowp_bound_gamma(K, ldexp(1, -24));
  const double *in[2] = {a, b};
  lowp_subject_t s;
  char err[300];
  int ok = 1, st, t, bt, i, j, l;
  fill(a, sizeof a / sizeof a[0], &LOWP_FMT_FP32, 0, 31);
  fill(b, sizeof b / sizeof b[0], &LOWP_FMT_FP32, 0, 32);
  lowp_test_check(lowp_kernel_subject_open(&s, "gemm_sgemm", "", err, sizeof err) == LOWP_OK && !s.has_accum,
                  "gemm_sgemm opens and declares no method: %s", err);
  st = s.run(&s, o1, in, &p, err, sizeof err);
  lowp_test_check(st == LOWP_OK, "gemm_sgemm runs: %s", err);
  for (bt = 0; bt < B; bt++)
    for (i = 0; i < M; i++)
      for (j = 0; j < N; j++) {
        double x = 0, ab = 0, y = c1[(bt * M + i) * N + j];
        for (l = 0; l < K; l++) {
          x += a[(bt * M + i) * K + l] * b[(bt * K + l) * N + j];
          ab += fabs(a[(bt * M + i) * K + l] * b[(bt * K + l) * N + j]);
        }
        ok &= (double)(float)y == y;
        if (fabs(y - x) / ab > worst) worst = fabs(y - x) / ab;
      }
  lowp_test_check(ok && worst <= g && worst > 0,
                  "gemm_sgemm: fp32 values, backward error %.3g within gamma_%d(fp32) = %.3g", worst, K, g);
  for (t = 1; t <= 2; t++) {
    omp_set_num_threads(t);
    openblas_set_num_threads(3 - t); /* OpenBLAS's own count, changed: the kernel pins one thread */
    memset(c2, 0, sizeof c2);
    st = s.run(&s, o2, in, &p, err, sizeof err);
    lowp_test_check(st == LOWP_OK && !memcmp(c1, c2, sizeof c1) && openblas_get_num_threads() == 3 - t,
                    "gemm_sgemm: the same bytes with %d OpenMP and %d OpenBLAS threads (restored: %d)", t, 3 - t,
                    openblas_get_num_threads());
  }
  for (bt = 0, ok = 1; bt < B; bt++) { /* each entry alone: batch 1 */
    lowp_problem_t p1 = prob("gemm", 1, M, N, K, &LOWP_FMT_FP32, &LOWP_FMT_FP32);
    const double *in1[2] = {a + (size_t)bt * M * K, b + (size_t)bt * K * N};
    double *o[1] = {c2};
    ok &= s.run(&s, o, in1, &p1, err, sizeof err) == LOWP_OK && !memcmp(c2, c1 + (size_t)bt * M * N, M * N * sizeof *c2);
  }
  lowp_test_check(ok, "gemm_sgemm: each of %d batch entries alone gives the bytes of the batched call", B);
  omp_set_num_threads(2);
  st = s.run(&s, o16, in, &p16, err, sizeof err);
  for (i = 0, ok = st == LOWP_OK; i < B * M * N; i++) {
    double y;
    lowp_round_f64(&y, c1[i], &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
    ok &= y == c16[i];
  }
  lowp_test_check(ok, "gemm_sgemm with fp16 output: the fp32 result rounded once (rne)");
  a[5] = 0.1; /* not an fp32 value */
  st = s.run(&s, o1, in, &p64, err, sizeof err);
  lowp_test_check(st == LOWP_EUNSUPPORTED && strstr(err, "not an fp32 value"), "a non-fp32 input refused: %s", err);
  a[5] = 1e300; /* beyond fp32's range */
  err[0] = '\0';
  st = s.run(&s, o1, in, &p64, err, sizeof err);
  lowp_test_check(st == LOWP_EUNSUPPORTED && strstr(err, "not an fp32 value"), "1e300 refused: %s", err);
  a[5] = 0.0;
  a[(B - 1) * M * K + 7] = 0.1; /* in the last entry (another thread's) */
  err[0] = '\0';
  st = s.run(&s, o1, in, &p, err, sizeof err);
  lowp_test_check(st == LOWP_EUNSUPPORTED && strstr(err, "not an fp32 value"), "a non-fp32 input in entry %d refused: %s",
                  B - 1, err);
  lowp_subject_close(&s);
  a[(B - 1) * M * K + 7] = 0.0;
  /* gemm_dgemm: the same bytes on 1 and 2 threads, and each entry alone */
  lowp_test_check(lowp_kernel_subject_open(&s, "gemm_dgemm", "", err, sizeof err) == LOWP_OK, "gemm_dgemm opens: %s", err);
  for (t = 1, ok = 1; t <= 2; t++) {
    omp_set_num_threads(t);
    ok &= s.run(&s, t == 1 ? o1 : o2, in, &p64, err, sizeof err) == LOWP_OK;
  }
  ok &= !memcmp(c1, c2, sizeof c1);
  for (bt = 0; bt < B; bt++) {
    lowp_problem_t p1 = prob("gemm", 1, M, N, K, &LOWP_FMT_FP64, &LOWP_FMT_FP64);
    const double *in1[2] = {a + (size_t)bt * M * K, b + (size_t)bt * K * N};
    double *o[1] = {c2};
    ok &= s.run(&s, o, in1, &p1, err, sizeof err) == LOWP_OK && !memcmp(c2, c1 + (size_t)bt * M * N, M * N * sizeof *c2);
  }
  lowp_test_check(ok, "gemm_dgemm: the same bytes on 1 and 2 threads and for each entry alone");
  lowp_subject_close(&s);
}

static void params(void) {
  static const struct { const char *name, *params, *want; } bad[] = {
      {"gemm_nope", "", "unknown kernel 'gemm_nope' (known: cast sum_acc"},
      {"gemm_acc", "acc", "not key=value"},
      {"gemm_acc", "acc=", "not key=value"},
      {"gemm_acc", "acc=fp17", "acc=fp17"},
      {"gemm_acc", "acc=e8m0", "acc=e8m0"},
      {"gemm_acc", "acc=fp32,acc=fp16", "given twice"},
      {"gemm_acc", "compute=fp16", "takes no parameter 'compute'"},
      {"gemm_acc", "order=blocked:0", "order=blocked:0"},
      {"gemm_acc", "order=zigzag", "order=zigzag"},
      {"gemm_acc", "order=pairwise,prod=fp16", "need order=recursive"},
      {"gemm_acc", "order=fma,prod=fp16", "drop prod"},
      {"gemm_acc", "round=nearest", "round=nearest"},
      {"gemm_acc", "round=sr", "accumulation"},
      {"softmax_stable", "compute=p=40;emin=-100;emax=100", "at most 25 significand bits"},
      {"layernorm", "variant=threepass", "variant=threepass"},
      {"layernorm", "scale=mul", "scale=mul: expected div or rsqrt"},
      {"layernorm", "clamp=yes", "clamp=yes: expected on or off"},
      {"softmax_stable", "scale=rsqrt", "takes no parameter 'scale'"},
      {"softmax_stable", "compute=fp16,acc=p=30;emin=-100;emax=100", "accumulation format needs at most 25"},
      {"softmax_naive", "acc=e8m0", "acc=e8m0"},
      {"layernorm", "acc=fp17", "acc=fp17"},
      {"exp", "acc=fp32", "takes no parameter 'acc'"},
      {"logsumexp", "acc=fp17", "acc=fp17"},
      {"gemm_tc", "promote=-3", "promote=-3"},
      {"cast", "order=pairwise", "takes no parameter 'order'"},
      {"allreduce", "order=pairwise", "expected ring or tree"},
      {"allreduce", "comm=fp17", "comm=fp17"},
      {"allreduce", "acc=fp17", "acc=fp17"},
      {"allreduce", "prod=fp16", "takes no parameter 'prod'"},
      /* control characters in what the user typed: quoted escaped, the message one line */
      {"no\nsuch", "", "unknown kernel 'no\\nsuch'"},
      {"gemm_acc", "acc=fp\n16", "acc=fp\\n16"},
      {"softmax_stable", "sc\x1b[2Jale=rsqrt", "parameter 'sc\\x1b[2Jale'"},
  };
  size_t i;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    lowp_subject_t s;
    char err[400] = "";
    int st = lowp_kernel_subject_open(&s, bad[i].name, bad[i].params, err, sizeof err);
    lowp_test_check(st == LOWP_EINVAL && strstr(err, bad[i].want) && !strpbrk(err, "\n\r\033"),
                    "%s[%s]: status %d, message '%s' (want '%s')", bad[i].name, bad[i].params,
                    st, err, bad[i].want);
  }
  /* good ones, and what they declare */
  {
    lowp_subject_t s;
    char err[300];
    lowp_problem_t p = prob("gemm", 1, 2, 2, 2, &LOWP_FMT_E4M3, &LOWP_FMT_FP32);
    lowp_test_check(lowp_kernel_subject_open(&s, "gemm_acc", "acc=bf16,order=blocked:32,round=rtz", err, sizeof err) == LOWP_OK &&
                        s.has_accum && s.accum.order == LOWP_ACC_BLOCKED && s.accum.block == 32 &&
                        s.accum.rnd == LOWP_RND_TZ && !strcmp(s.accum.acc.name, "bf16") && s.accum.fma == 1,
                    "gemm_acc declares its accumulation: %s", err);
    lowp_subject_close(&s);
    lowp_test_check(lowp_kernel_subject_open(&s, "gemm_tc", "model=b=16,F=13,align=rtz,promote=128", err, sizeof err) == LOWP_OK &&
                        lowp_kernel_subject_bind(&s, &p, err, sizeof err) == LOWP_OK && s.has_model,
                    "gemm_tc with a custom model spec and promotion: %s", err);
    lowp_subject_close(&s);
    p = prob("softmax", 1, 2, 2, 1, &LOWP_FMT_FP32, &LOWP_FMT_FP32);
    lowp_test_check(lowp_kernel_subject_open(&s, "dot_acc", "", err, sizeof err) == LOWP_OK &&
                        lowp_kernel_subject_bind(&s, &p, err, sizeof err) == LOWP_EUNSUPPORTED &&
                        strstr(err, "computes dot, not softmax"),
                    "a kernel bound to another operation: %s", err);
    lowp_subject_close(&s);
  }
  /* every entry opens with its defaults and names a known operation */
  for (i = 0; lowp_kernel_at(i); i++) {
    const lowp_kernel_t *k = lowp_kernel_at(i);
    lowp_subject_t s;
    char err[300];
    lowp_test_check(lowp_op_get(k->op) && k->run && k->doc && k->keys &&
                        lowp_kernel_subject_open(&s, k->name, k->defaults, err, sizeof err) == LOWP_OK,
                    "entry %s with its defaults '%s': %s", k->name, k->defaults, err);
    lowp_subject_close(&s);
  }
}

/* every kernel gives the same bytes on 1 and 2 threads */
static void threads(void) {
  static const struct { const char *name, *params, *op; } ks[] = {
      {"sum_acc", "acc=fp16,order=pairwise", "sum"}, {"gemv_acc", "acc=bf16", "gemv"},
      {"gemm_acc", "acc=fp32,order=kahan", "gemm"}, {"gemm_tc", "model=h100", "gemm"},
      {"softmax_stable", "compute=fp16", "softmax"}, {"logsoftmax", "", "logsoftmax"},
      {"logsumexp", "", "logsumexp"}, {"layernorm", "variant=welford", "layernorm"},
      {"rmsnorm", "", "rmsnorm"}, {"gelu", "compute=bf16", "gelu"}, {"dot_acc", "", "dot"},
      {"softmax_naive", "compute=bf16,acc=fp32", "softmax"},
      {"layernorm", "compute=fp16,acc=fp32,variant=onepass", "layernorm"}};
  enum { B = 2, M = 16, N = 40, K = 48 };
  static double a[B * M * 64], b[B * 64 * N], o1[3][B * M * N], o2[3][B * M * N];
  size_t i;
  fill(a, sizeof a / sizeof a[0], &LOWP_FMT_FP16, 0, 8);
  fill(b, sizeof b / sizeof b[0], &LOWP_FMT_FP16, 0, 9);
  for (i = 0; i < sizeof ks / sizeof ks[0]; i++) {
    lowp_problem_t p = prob(ks[i].op, B, M, N, K, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
    double *out1[3] = {o1[0], o1[1], o1[2]}, *out2[3] = {o2[0], o2[1], o2[2]};
    const double *in[2] = {a, b};
    char err[300];
    int s1, s2;
    memset(o1, 0, sizeof o1);
    memset(o2, 0, sizeof o2);
    omp_set_num_threads(1);
    s1 = lowp_test_run_kernel(out1, in, ks[i].name, ks[i].params, &p, err, sizeof err);
    omp_set_num_threads(2);
    s2 = lowp_test_run_kernel(out2, in, ks[i].name, ks[i].params, &p, err, sizeof err);
    lowp_test_check(s1 == LOWP_OK && s2 == LOWP_OK && !memcmp(o1, o2, sizeof o1),
                    "%s: 1 and 2 threads give the same bytes (%s)", ks[i].name, err);
  }
}

/* lowp_kernel_subject_open_args: typed parameters, the same checks as the text */
static void typed_open(void) {
  lowp_subject_t s;
  lowp_kernel_args_t a;
  lowp_problem_t p;
  lowp_format_t f8;
  char err[300];
  int st;
  memset(&a, 0, sizeof a);
  a.compute = &LOWP_FMT_FP16;
  a.acc = &LOWP_FMT_FP32;
  (void)lowp_problem_init(&p, lowp_op_get(LOWP_OP_SOFTMAX));
  p.dims.n = 64;
  p.in[0] = p.out = LOWP_FMT_FP16;
  st = lowp_kernel_subject_open_args(&s, "softmax_stable", &a, &p, err, sizeof err);
  lowp_test_check(st == LOWP_OK && s.has_compute && s.compute.precision == 11 &&
                  s.has_accum && s.accum.acc.precision == 24 &&
                  strstr(s.name, "compute=fp16,acc=fp32"), "softmax typed: %s %s", err, s.name);
  lowp_subject_close(&s);
  memset(&a, 0, sizeof a);
  a.acc = &LOWP_FMT_FP16;
  a.has_order = 1;
  a.order = LOWP_ACC_BLOCKED;
  a.block = 32;
  st = lowp_kernel_subject_open_args(&s, "gemm_acc", &a, NULL, err, sizeof err);
  lowp_test_check(st == LOWP_OK && s.has_accum && s.accum.order == LOWP_ACC_BLOCKED &&
                  s.accum.block == 32 && s.accum.acc.precision == 11, "gemm_acc typed: %s", err);
  lowp_subject_close(&s);
  /* a format without a name goes as its spec */
  lowp_test_check(lowp_format_parse(&f8, "p=8,emin=-14,emax=15", err, sizeof err) == LOWP_OK, "f8: %s", err);
  f8.name = NULL;
  memset(&a, 0, sizeof a);
  a.compute = &f8;
  st = lowp_kernel_subject_open_args(&s, "tanh", &a, NULL, err, sizeof err);
  lowp_test_check(st == LOWP_OK, "custom compute format: %s", err);
  lowp_subject_close(&s);
  /* a parameter the kernel does not take: refused as in text */
  memset(&a, 0, sizeof a);
  a.exp_cr = 1;
  st = lowp_kernel_subject_open_args(&s, "gemm_acc", &a, NULL, err, sizeof err);
  lowp_test_check(st == LOWP_EINVAL && strstr(err, "exp"), "exp=cr on gemm_acc refused: %s", err);
  /* bind: another operation is refused and the subject closed */
  memset(&a, 0, sizeof a);
  st = lowp_kernel_subject_open_args(&s, "gemm_acc", &a, &p, err, sizeof err);
  lowp_test_check(st == LOWP_EUNSUPPORTED && s.ctx == NULL, "bind refused: %s", err);
}

int main(void) {
  lowp_test_start("tkernels");
  typed_open();
  sums();
  nonlinear();
  accum_param();
  allreduce();
  measure_same();
  sgemm();
  params();
  threads();
  return lowp_test_end();
}
