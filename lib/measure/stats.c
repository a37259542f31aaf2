/* lowp_measure_stats -- max with location, mean, median, p99 of an array */

#include "measure/measure.h"

#include <math.h>
#include <stdlib.h>

#include "status.h"

/* ------------------------------------------------------ private helpers */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ----------------------------------------------------------- public API */

int lowp_measure_stats(lowp_stats_t *s, const double *x, size_t n) {
  double *v, sum = 0;
  size_t i, m = 0, rank;
  if (!s || (n && !x)) return LOWP_EINVAL;
  s->n = s->n_nan = 0;
  s->min = s->max = s->mean = s->median = s->p99 = NAN;
  s->argmax = (size_t)-1;
  v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return LOWP_ENOMEM;
  for (i = 0; i < n; i++) {
    if (isnan(x[i])) { s->n_nan++; continue; }
    if (s->argmax == (size_t)-1 || x[i] > s->max) { s->max = x[i]; s->argmax = i; }
    v[m++] = x[i];
    sum += x[i];
  }
  s->n = m;
  if (m) {
    qsort(v, m, sizeof *v, cmp_double);
    s->min = v[0];
    s->mean = sum / (double)m;
    s->median = m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
    /* nearest rank: the smallest value with at least 99% of the data <= it,
       ceil(0.99 m) computed in integers (99 m + 99) / 100 */
    rank = (99 * m + 99) / 100;
    s->p99 = v[rank - 1];
  }
  free(v);
  return LOWP_OK;
}
