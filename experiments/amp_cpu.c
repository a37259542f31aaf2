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

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

double lowp_ampc_median(double *v, size_t n) {
  if (n == 0) return NAN;
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
