/* lowp_gemm_blas -- OpenBLAS's cblas_sgemm and cblas_dgemm as registry kernels: optimized BLAS to measure */

/*
 * What an optimized fp32 GEMM gives, beside lowp's recursive fp32 kernel
 * (gemm_acc acc=fp32,prod=acc): OpenBLAS blocks the k loop (its GEMM_Q
 * panels) and accumulates each panel in vector registers, with FMA where the
 * CPU has it, then adds the panel into C; the order is its own and depends
 * on the CPU kernel OpenBLAS selects at run time (lowp_gemm_sgemm_info names
 * it). Whatever the order, with or without FMA, the componentwise backward
 * error is at most gamma_k of fp32 (Higham, Accuracy and Stability of
 * Numerical Algorithms, 2nd ed., 2002, Sec. 3.1: the bound (3.5) holds for
 * any order of evaluation). The call runs on threads= OpenBLAS threads
 * (default one): OpenBLAS splits m and n over its threads, and one thread
 * rules out any dependence on the thread count (lib/exact/ozaki.c sets it
 * for its DGEMMs); lowp reveal shows what two change.
 */

#include "cpu/gemm_blas.h"

#include <cblas.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

/* Debian's cblas.h for OpenBLAS declares them; repeated for other cblas.h headers */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char *openblas_get_config(void);
char *openblas_get_corename(void);

/* ------------------------------------------------------ private helpers */

/* x (n values) as floats; 1 when one is not an fp32 value (NaN and infinities pass; a finite value beyond
   fp32's range is refused). lowp reveal calls sgemm on tens of thousands of batch entries, so the
   common case is one pass: every value converted and converted back, and compared (with SSE2, four at
   a time and as values: GCC's -O2 left the plain loop scalar, a third of a revelation's time; else
   their bits) (C11 Annex F, the IEC 60559 binding that GCC and Clang declare with __STDC_IEC_559__,
   makes an out-of-range conversion an infinity, caught by the comparison); only when some bits differ
   (a NaN's payload, or a value that is not fp32) are the values checked one by one. */
static int to_float(float *y, const double *x, size_t n) {
  size_t i = 0;
  uint64_t diff = 0;
#if defined(__SSE2__)
  /* a value that does not come back equal (not fp32, or a NaN) sends every value to the check */
  for (; i + 4 <= n; i += 4) {
    __m128d a0 = _mm_loadu_pd(x + i), a1 = _mm_loadu_pd(x + i + 2);
    __m128 f = _mm_movelh_ps(_mm_cvtpd_ps(a0), _mm_cvtpd_ps(a1));
    _mm_storeu_ps(y + i, f);
    diff |= (uint64_t)(_mm_movemask_pd(_mm_cmpneq_pd(a0, _mm_cvtps_pd(f))) |
                       _mm_movemask_pd(_mm_cmpneq_pd(a1, _mm_cvtps_pd(_mm_movehl_ps(f, f)))));
  }
#endif
  for (; i < n; i++) {
    double back;
    uint64_t u, v;
    y[i] = (float)x[i];
    back = (double)y[i];
    memcpy(&u, &back, sizeof u);
    memcpy(&v, &x[i], sizeof v);
    diff |= u ^ v;
  }
  if (!diff) return 0;
  for (i = 0; i < n; i++) {
    if (isfinite(x[i]) && fabs(x[i]) > FLT_MAX) return 1;
    if ((double)y[i] != x[i] && x[i] == x[i]) return 1;
  }
  return 0;
}

/* ----------------------------------------------------------- public API */

int lowp_kernel_gemm_sgemm(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                           const lowp_problem_t *p, char *err, size_t errlen) {
  const lowp_dims_t *d = &p->dims;
  size_t mk = d->m * d->k, kn = d->k * d->n, mn = d->m * d->n, bt, i;
  float *a, *b, *cc;
  int st = LOWP_OK, saved;
  if (d->m > INT_MAX || d->n > INT_MAX || d->k > INT_MAX) {
    if (err && errlen) snprintf(err, errlen, "gemm_sgemm: m, n and k must be at most %d (cblas ints)", INT_MAX);
    return LOWP_EUNSUPPORTED;
  }
  a = malloc((mk ? mk : 1) * sizeof *a);
  b = malloc((kn ? kn : 1) * sizeof *b);
  cc = malloc((mn ? mn : 1) * sizeof *cc);
  if (!a || !b || !cc) {
    free(a); free(b); free(cc);
    return LOWP_ENOMEM;
  }
  saved = openblas_get_num_threads();
  openblas_set_num_threads(c && c->threads > 0 ? c->threads : 1);
  for (bt = 0; bt < d->batch && st == LOWP_OK; bt++) {
    if (to_float(a, &in[0][bt * mk], mk) || to_float(b, &in[1][bt * kn], kn)) {
      if (err && errlen) snprintf(err, errlen, "gemm_sgemm: an input is not an fp32 value (sgemm takes fp32)");
      st = LOWP_EUNSUPPORTED;
      break;
    }
    memset(cc, 0, (mn ? mn : 1) * sizeof *cc);
    if (mn && d->k)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)d->m, (int)d->n, (int)d->k, 1.0f, a,
                  (int)d->k, b, (int)d->n, 0.0f, cc, (int)d->n);
    for (i = 0; i < mn; i++) (void)lowp_round_f64(&out[0][bt * mn + i], (double)cc[i], &p->out, NULL, LOWP_RND_NE);
  }
  openblas_set_num_threads(saved > 0 ? saved : 1);
  free(a); free(b); free(cc);
  return st;
}

int lowp_kernel_gemm_dgemm(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                           const lowp_problem_t *p, char *err, size_t errlen) {
  const lowp_dims_t *d = &p->dims;
  size_t mk = d->m * d->k, kn = d->k * d->n, mn = d->m * d->n, bt, i;
  int saved;
  if (d->m > INT_MAX || d->n > INT_MAX || d->k > INT_MAX) {
    if (err && errlen) snprintf(err, errlen, "gemm_dgemm: m, n and k must be at most %d (cblas ints)", INT_MAX);
    return LOWP_EUNSUPPORTED;
  }
  if (p->in[0].precision != 53 || p->in[1].precision != 53) {
    if (err && errlen) snprintf(err, errlen, "gemm_dgemm: A and B must be fp64 (dgemm takes fp64)");
    return LOWP_EUNSUPPORTED;
  }
  saved = openblas_get_num_threads();
  openblas_set_num_threads(c && c->threads > 0 ? c->threads : 1);
  for (bt = 0; bt < d->batch; bt++) {
    double *cc = &out[0][bt * mn];
    memset(cc, 0, (mn ? mn : 1) * sizeof *cc);
    if (mn && d->k)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)d->m, (int)d->n, (int)d->k, 1.0,
                  &in[0][bt * mk], (int)d->k, &in[1][bt * kn], (int)d->n, 0.0, cc, (int)d->n);
    for (i = 0; i < mn; i++) (void)lowp_round_f64(&cc[i], cc[i], &p->out, NULL, LOWP_RND_NE);
  }
  openblas_set_num_threads(saved > 0 ? saved : 1);
  return LOWP_OK;
}

void lowp_gemm_sgemm_info(char *buf, size_t len) {
  const char *cfg = openblas_get_config(), *core = openblas_get_corename();
  if (!buf || !len) return;
  snprintf(buf, len, "%s, core %s", cfg ? cfg : "OpenBLAS (no config string)", core ? core : "unknown");
}
