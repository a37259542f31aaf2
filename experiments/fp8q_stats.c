/* fp8q_stats -- paired statistics of exercise 6: McNemar's exact test, paired bootstrap, KL divergence */

#include "fp8q.h"

#include "rng/rng.h"
#include "status.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int fq_argmax(const float *z) {
  int c, best = 0;
  for (c = 1; c < FQ_NCLASS; c++)
    if (z[c] > z[best]) best = c;
  return best;
}

/* McNemar's test on the discordant pairs (McNemar 1947; the exact form:
   b ~ Bin(b + c, 1/2) under the null): the binomial tail summed in log space. */
double fq_mcnemar(long b, long c) {
  long n = b + c, k, lo = b < c ? b : c;
  double p = 0.0;
  if (n == 0) return 1.0;
  for (k = 0; k <= lo; k++)
    p += exp(lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) - (double)n * log(2.0));
  p *= 2.0;
  return p > 1.0 ? 1.0 : p;
}

double fq_kl(const float *zp, const float *zq) {
  double mp = zp[0], mq = zq[0], sp = 0.0, sq = 0.0, kl = 0.0;
  int k;
  for (k = 1; k < FQ_NCLASS; k++) {
    if (zp[k] > mp) mp = zp[k];
    if (zq[k] > mq) mq = zq[k];
  }
  for (k = 0; k < FQ_NCLASS; k++) {
    sp += exp((double)zp[k] - mp);
    sq += exp((double)zq[k] - mq);
  }
  for (k = 0; k < FQ_NCLASS; k++) {
    double lp = (double)zp[k] - mp - log(sp), lq = (double)zq[k] - mq - log(sq);
    kl += exp(lp) * (lp - lq);
  }
  return kl > 0.0 ? kl : 0.0;
}

int fq_boot_weights(uint8_t **w, size_t n, int reps, uint64_t seed) {
  int b;
  *w = calloc((size_t)reps * n, 1);
  if (!*w) return LOWP_ENOMEM;
  for (b = 0; b < reps; b++) {
    lowp_rng_t rng;
    uint8_t *wb = *w + (size_t)b * n;
    size_t i;
    lowp_rng_init(&rng, seed, (uint32_t)(77000 + b));
    for (i = 0; i < n; i++) {
      size_t j = (size_t)(lowp_rng_next(&rng) % (uint64_t)n);
      if (wb[j] < 255) wb[j]++;
    }
  }
  return LOWP_OK;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* 2.5% and 97.5% percentiles of v (sorted here) by the nearest rank */
static void percentiles(double *v, int reps, double *lo, double *hi) {
  qsort(v, (size_t)reps, sizeof *v, cmp_double);
  *lo = v[(size_t)floor(0.025 * (reps - 1) + 0.5)];
  *hi = v[(size_t)floor(0.975 * (reps - 1) + 0.5)];
}

void fq_boot_ci(const uint8_t *w, size_t n, int reps, const int8_t *d, double *lo, double *hi) {
  double *v = malloc((size_t)reps * sizeof *v);
  size_t i, nd = 0, *idx = malloc(n * sizeof *idx);
  int b;
  *lo = *hi = 0.0;
  if (!v || !idx || reps < 1) { free(v); free(idx); return; }
  for (i = 0; i < n; i++)
    if (d[i]) idx[nd++] = i; /* only the discordant images move the difference */
  for (b = 0; b < reps; b++) {
    const uint8_t *wb = w + (size_t)b * n;
    long s = 0;
    size_t j;
    for (j = 0; j < nd; j++) s += (long)wb[idx[j]] * d[idx[j]];
    v[b] = (double)s / (double)n;
  }
  percentiles(v, reps, lo, hi);
  free(v);
  free(idx);
}

void fq_boot_ci_mix(const uint8_t *w, size_t n, int reps, const int8_t *const *d, int nd, uint64_t seed,
                    double *lo, double *hi) {
  double *v = malloc((size_t)reps * sizeof *v);
  int b;
  *lo = *hi = 0.0;
  if (!v || reps < 1 || nd < 1) { free(v); return; }
  for (b = 0; b < reps; b++) {
    const uint8_t *wb = w + (size_t)b * n;
    lowp_rng_t rng;
    const int8_t *dk;
    long s = 0;
    size_t i;
    lowp_rng_init(&rng, seed, (uint32_t)(78000 + b));
    dk = d[lowp_rng_next(&rng) % (uint64_t)nd];
    for (i = 0; i < n; i++) s += (long)wb[i] * dk[i];
    v[b] = (double)s / (double)n;
  }
  percentiles(v, reps, lo, hi);
  free(v);
}
