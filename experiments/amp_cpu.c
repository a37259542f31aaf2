/* amp_cpu -- amp-speedup's CPU measurement helpers: plain fp32 row kernels, a STREAM triad, medians */

#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "amp_cpu.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

void lowp_ampc_softmax(float *y, const float *x, size_t rows, size_t cols) {
  long long r, nr = (long long)rows;
#pragma omp parallel for schedule(static)
  for (r = 0; r < nr; r++) {
    const float *xr = x + (size_t)r * cols;
    float *yr = y + (size_t)r * cols, mx = -INFINITY, s = 0, inv;
    size_t j;
    for (j = 0; j < cols; j++) mx = xr[j] > mx ? xr[j] : mx;
    for (j = 0; j < cols; j++) {
      yr[j] = expf(xr[j] - mx);
      s += yr[j];
    }
    inv = 1.0f / s;
    for (j = 0; j < cols; j++) yr[j] *= inv;
  }
}

void lowp_ampc_layernorm(float *y, float *mean, float *rstd, const float *x, size_t rows, size_t cols,
                         float eps) {
  long long r, nr = (long long)rows;
#pragma omp parallel for schedule(static)
  for (r = 0; r < nr; r++) {
    const float *xr = x + (size_t)r * cols;
    float *yr = y + (size_t)r * cols, m = 0, v = 0, rs;
    size_t j;
    for (j = 0; j < cols; j++) m += xr[j];
    m /= (float)cols;
    for (j = 0; j < cols; j++) v += (xr[j] - m) * (xr[j] - m);
    v /= (float)cols;
    rs = 1.0f / sqrtf(v + eps);
    for (j = 0; j < cols; j++) yr[j] = (xr[j] - m) * rs;
    mean[r] = m;
    rstd[r] = rs;
  }
}

void lowp_ampc_gelu(float *y, const float *x, size_t n) {
  long long i, nn = (long long)n;
#pragma omp parallel for schedule(static)
  for (i = 0; i < nn; i++) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678f));
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int lowp_ampc_triad_new(lowp_ampc_triad_t *t, size_t n) {
  long long i, nn = (long long)n;
  t->n = n;
  t->a = malloc(n * sizeof *t->a);
  t->b = malloc(n * sizeof *t->b);
  t->c = malloc(n * sizeof *t->c);
  if (!t->a || !t->b || !t->c || n == 0) {
    lowp_ampc_triad_free(t);
    return -1;
  }
#pragma omp parallel for schedule(static)
  for (i = 0; i < nn; i++) { t->a[i] = 0; t->b[i] = 1; t->c[i] = 2; }
  return 0;
}

double lowp_ampc_triad_run(lowp_ampc_triad_t *t, int reps) {
  float *a = t->a;
  const float *b = t->b, *c = t->c;
  double best = INFINITY;
  long long i, nn = (long long)t->n;
  int r;
  if (!a) return NAN;
  for (r = 0; r < reps; r++) {
    double s = now_s();
#pragma omp parallel for schedule(static)
    for (i = 0; i < nn; i++) a[i] = b[i] + 3.0f * c[i];
    s = now_s() - s;
    if (s < best) best = s;
  }
  return a[t->n / 2] == 7.0f ? 3.0 * 4.0 * (double)t->n / best : NAN; /* the triad happened */
}

void lowp_ampc_triad_free(lowp_ampc_triad_t *t) {
  free(t->a); free(t->b); free(t->c);
  t->a = t->b = t->c = NULL;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define NCHAIN 12
#define CHAIN_ITERS 65536L /* 2^16: the sums stay exact powers of two (see the header) */

/* every lane of every accumulator (stored in v) holds want */
static int chains_hold(const float *v, float want) {
  int i, ok = 1;
  for (i = 0; i < NCHAIN * 16; i++) ok &= v[i] == want;
  return ok;
}

/* 12 chains of VFMADD231PS: acc += 1 * 2^-20; seconds, and the check */
__attribute__((target("avx512f"))) static double chain_fp32(int *ok) {
  __m512 a = _mm512_set1_ps(1.0f), b = _mm512_set1_ps(0x1p-20f), acc[NCHAIN];
  float out[NCHAIN * 16];
  double t;
  long i;
  int k;
  for (k = 0; k < NCHAIN; k++) acc[k] = _mm512_setzero_ps();
  t = now_s();
  for (i = 0; i < CHAIN_ITERS; i++)
    for (k = 0; k < NCHAIN; k++) acc[k] = _mm512_fmadd_ps(a, b, acc[k]);
  t = now_s() - t;
  for (k = 0; k < NCHAIN; k++) _mm512_storeu_ps(out + 16 * k, acc[k]);
  *ok = chains_hold(out, (float)CHAIN_ITERS * 0x1p-20f);
  return t;
}

/* 12 chains of VDPBF16PS: acc += 1 * 2^-20 + 1 * 2^-20 per lane; seconds, and the check */
__attribute__((target("avx512f,avx512bf16"))) static double chain_bf16(int *ok) {
  __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1.0f), _mm512_set1_ps(1.0f));
  __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0x1p-20f), _mm512_set1_ps(0x1p-20f));
  __m512 acc[NCHAIN];
  float out[NCHAIN * 16];
  double t;
  long i;
  int k;
  for (k = 0; k < NCHAIN; k++) acc[k] = _mm512_setzero_ps();
  t = now_s();
  for (i = 0; i < CHAIN_ITERS; i++)
    for (k = 0; k < NCHAIN; k++) acc[k] = _mm512_dpbf16_ps(acc[k], a, b);
  t = now_s() - t;
  for (k = 0; k < NCHAIN; k++) _mm512_storeu_ps(out + 16 * k, acc[k]);
  *ok = chains_hold(out, (float)CHAIN_ITERS * 0x1p-19f);
  return t;
}

double lowp_ampc_bf16_rate_ratio(int has_bf16, int reps, double *gf32, double *gf16) {
  double b32 = INFINITY, b16 = INFINITY, n = (double)CHAIN_ITERS * NCHAIN;
  int r, ok32 = 1, ok16 = 1, ok;
  *gf32 = *gf16 = NAN;
  if (!has_bf16 || reps < 1) return NAN;
  for (r = 0; r < reps; r++) { /* interleaved: a load change hits both */
    double t = chain_fp32(&ok);
    ok32 &= ok;
    if (t < b32) b32 = t;
    t = chain_bf16(&ok);
    ok16 &= ok;
    if (t < b16) b16 = t;
  }
  if (!ok32 || !ok16) return NAN;
  *gf32 = 32.0 * n / b32 / 1e9;
  *gf16 = 64.0 * n / b16 / 1e9;
  return *gf16 / *gf32;
}
#else
double lowp_ampc_bf16_rate_ratio(int has_bf16, int reps, double *gf32, double *gf16) {
  (void)has_bf16; (void)reps;
  *gf32 = *gf16 = NAN;
  return NAN;
}
#endif

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

double lowp_ampc_median(double *v, size_t n) {
  if (n == 0) return NAN;
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
