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
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "spread.h"
#include "status.h"
#include "io/escape.h"

/* Debian's cblas.h for OpenBLAS declares them; repeated for other cblas.h headers */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char *openblas_get_config(void);
char *openblas_get_corename(void);

/* ------------------------------------------------------ private helpers */

#if defined(__x86_64__) || defined(__i386__)
/* the values of x converted, 8 at a time with AVX (half the instructions of SSE2's 4); returns the
   values done (a multiple of 8) and sets *diff when one does not come back equal */
__attribute__((target("avx"))) static size_t to_float_avx(float *y, const double *x, size_t n, uint64_t *diff) {
  size_t i = 0;
  int d = 0;
  for (; i + 8 <= n; i += 8) {
    __m256d a0 = _mm256_loadu_pd(x + i), a1 = _mm256_loadu_pd(x + i + 4);
    __m128 f0 = _mm256_cvtpd_ps(a0), f1 = _mm256_cvtpd_ps(a1);
    _mm_storeu_ps(y + i, f0);
    _mm_storeu_ps(y + i + 4, f1);
    d |= _mm256_movemask_pd(_mm256_cmp_pd(a0, _mm256_cvtps_pd(f0), _CMP_NEQ_UQ)) |
         _mm256_movemask_pd(_mm256_cmp_pd(a1, _mm256_cvtps_pd(f1), _CMP_NEQ_UQ));
  }
  *diff |= (uint64_t)d;
  return i;
}
#endif

/* x (n values) as floats; 1 when one is not an fp32 value (NaN and infinities pass; a finite value beyond
   fp32's range is refused). lowp reveal calls sgemm on tens of thousands of batch entries, so the
   common case is one pass: every value converted and converted back, and compared as values (eight at
   a time with AVX where the CPU has AVX2, four with SSE2: GCC's -O2 left the plain loop scalar, a third
   of a revelation's time; else their bits) (C11 Annex F, the IEC 60559 binding that GCC and Clang
   declare with __STDC_IEC_559__, makes an out-of-range conversion an infinity, caught by the
   comparison); only when some bits differ (a NaN's payload, or a value that is not fp32) are the
   values checked one by one. */
static int to_float(float *y, const double *x, size_t n) {
  size_t i = 0;
  uint64_t diff = 0;
#if defined(__x86_64__) || defined(__i386__)
  if (lowp_cpu_isa(0) >= LOWP_ISA_AVX2) i = to_float_avx(y, x, n, &diff);
#endif
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

/* Batch entries of one call side by side: with threads = 1 each entry is its own one-thread OpenBLAS
   call, so entries run on lowp_spread's threads (lowp reveal makes tens of thousands of calls of a
   33 x 17 x 8192 GEMM, one output each for a corner class); each entry's order is OpenBLAS's alone,
   whatever thread runs it, so the outputs are the same bytes for every thread count. threads > 1:
   OpenBLAS's own threads share each call, and entries go one after the other. */
static int entry_width(const lowp_kcfg_t *c, size_t batch) {
  return (!c || c->threads <= 1) ? lowp_spread_width(batch, 0) : 1;
}

typedef struct {
  double *const *out;
  const double *const *in;
  const lowp_problem_t *p;
  float **buf;  /* per worker: A (m k), B (k n), C (m n) */
  int *st;      /* per worker: its first failure */
} sg_job_t;

/* sgemm of batch entry bt (row-major, C rounded to the output format) in the caller's float buffers
   a (m k), b (k n) and cc (m n) */
static int sgemm_entry(double *const *out, const double *const *in, const lowp_problem_t *p, size_t bt,
                       float *a, float *b, float *cc) {
  const lowp_dims_t *d = &p->dims;
  size_t mk = d->m * d->k, kn = d->k * d->n, mn = d->m * d->n, i;
  if (to_float(a, &in[0][bt * mk], mk) || to_float(b, &in[1][bt * kn], kn)) return LOWP_EUNSUPPORTED;
  memset(cc, 0, (mn ? mn : 1) * sizeof *cc);
  if (mn && d->k)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)d->m, (int)d->n, (int)d->k, 1.0f, a,
                (int)d->k, b, (int)d->n, 0.0f, cc, (int)d->n);
  for (i = 0; i < mn; i++) (void)lowp_round_f64(&out[0][bt * mn + i], (double)cc[i], &p->out, NULL, LOWP_RND_NE);
  return LOWP_OK;
}

static void sgemm_one(void *ctx, size_t bt, int w) {
  sg_job_t *j = ctx;
  const lowp_dims_t *d = &j->p->dims;
  float *a = j->buf[w];
  if (j->st[w] == LOWP_OK)
    j->st[w] = sgemm_entry(j->out, j->in, j->p, bt, a, a + d->m * d->k, a + d->m * d->k + d->k * d->n);
}

/* dgemm of batch entry bt */
static void dgemm_entry(double *const *out, const double *const *in, const lowp_problem_t *p, size_t bt) {
  const lowp_dims_t *d = &p->dims;
  size_t mk = d->m * d->k, kn = d->k * d->n, mn = d->m * d->n, i;
  double *cc = &out[0][bt * mn];
  memset(cc, 0, (mn ? mn : 1) * sizeof *cc);
  if (mn && d->k)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)d->m, (int)d->n, (int)d->k, 1.0,
                &in[0][bt * mk], (int)d->k, &in[1][bt * kn], (int)d->n, 0.0, cc, (int)d->n);
  for (i = 0; i < mn; i++) (void)lowp_round_f64(&cc[i], cc[i], &p->out, NULL, LOWP_RND_NE);
}

static void dgemm_one(void *ctx, size_t bt, int w) {
  const sg_job_t *j = ctx;
  (void)w;
  dgemm_entry(j->out, j->in, j->p, bt);
}

/* ----------------------------------------------------------- public API */

int lowp_kernel_gemm_sgemm(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                           const lowp_problem_t *p, char *err, size_t errlen) {
  const lowp_dims_t *d = &p->dims;
  int st = LOWP_OK, saved, nw, w;
  sg_job_t j;
  if (d->m > INT_MAX || d->n > INT_MAX || d->k > INT_MAX) {
    lowp_errf(err, errlen, 0, "gemm_sgemm: m, n and k must be at most %d (cblas ints)", INT_MAX);
    return LOWP_EUNSUPPORTED;
  }
  saved = openblas_get_num_threads();
  openblas_set_num_threads(c && c->threads > 0 ? c->threads : 1);
  /* each worker its own float buffers; a worker stops at its first failure */
  nw = entry_width(c, d->batch);
  j.out = out;
  j.in = in;
  j.p = p;
  j.buf = calloc((size_t)nw, sizeof *j.buf);
  j.st = calloc((size_t)nw, sizeof *j.st);
  for (w = 0; w < nw && j.buf && j.st; w++)
    if (!(j.buf[w] = malloc((d->m * d->k + d->k * d->n + d->m * d->n + 1) * sizeof **j.buf))) break;
  if (!j.buf || !j.st || w < nw) st = LOWP_ENOMEM;
  if (st == LOWP_OK) lowp_spread(d->batch, nw, sgemm_one, &j);
  for (w = 0; w < nw && st == LOWP_OK; w++) /* a refused input before a lack of memory: the same words */
    if (j.st[w] == LOWP_EUNSUPPORTED) st = j.st[w];
  for (w = 0; w < nw && j.st; w++)
    if (st == LOWP_OK) st = j.st[w];
  for (w = 0; w < nw && j.buf; w++) free(j.buf[w]);
  free(j.buf);
  free(j.st);
  openblas_set_num_threads(saved > 0 ? saved : 1);
  if (st == LOWP_EUNSUPPORTED && err && errlen)
    lowp_errf(err, errlen, 0, "gemm_sgemm: an input is not an fp32 value (sgemm takes fp32)");
  return st;
}

int lowp_kernel_gemm_dgemm(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                           const lowp_problem_t *p, char *err, size_t errlen) {
  const lowp_dims_t *d = &p->dims;
  int saved;
  sg_job_t j;
  if (d->m > INT_MAX || d->n > INT_MAX || d->k > INT_MAX) {
    lowp_errf(err, errlen, 0, "gemm_dgemm: m, n and k must be at most %d (cblas ints)", INT_MAX);
    return LOWP_EUNSUPPORTED;
  }
  if (p->in[0].precision != 53 || p->in[1].precision != 53) {
    lowp_errf(err, errlen, 0, "gemm_dgemm: A and B must be fp64 (dgemm takes fp64)");
    return LOWP_EUNSUPPORTED;
  }
  saved = openblas_get_num_threads();
  openblas_set_num_threads(c && c->threads > 0 ? c->threads : 1);
  j.out = out;
  j.in = in;
  j.p = p;
  lowp_spread(d->batch, entry_width(c, d->batch), dgemm_one, &j);
  openblas_set_num_threads(saved > 0 ? saved : 1);
  return LOWP_OK;
}

void lowp_gemm_sgemm_info(char *buf, size_t len) {
  const char *cfg = openblas_get_config(), *core = openblas_get_corename();
  if (!buf || !len) return;
  snprintf(buf, len, "%s, core %s", cfg ? cfg : "OpenBLAS (no config string)", core ? core : "unknown");
}
