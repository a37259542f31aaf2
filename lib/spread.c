/* lowp_spread -- independent pieces of work on the caller's thread and helper threads, without spinning */
#define _POSIX_C_SOURCE 200809L

#include "spread.h"

#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

/* ------------------------------------------------------ private helpers */

enum { MAXT = 64 };

typedef struct {
  atomic_size_t next;
  size_t n;
  void (*fn)(void *, size_t, int);
  void *ctx;
} job_t;

typedef struct {
  job_t *j;
  int w;
} worker_t;

static void *work(void *arg) {
  const worker_t *k = arg;
  size_t i;
  while ((i = atomic_fetch_add(&k->j->next, 1)) < k->j->n) k->j->fn(k->j->ctx, i, k->w);
  return NULL;
}

/* ----------------------------------------------------------- public API */

int lowp_spread_width(size_t n, int threads) {
  if (threads <= 0) threads = omp_get_max_threads();
  if ((size_t)threads > n) threads = (int)n;
  if (threads > MAXT) threads = MAXT;
  return threads < 1 ? 1 : threads;
}

void lowp_spread(size_t n, int threads, void (*fn)(void *ctx, size_t i, int w), void *ctx) {
  pthread_t tid[MAXT];
  worker_t wk[MAXT];
  job_t j;
  int t, started = 0;
  threads = lowp_spread_width(n, threads);
  atomic_init(&j.next, 0);
  j.n = n;
  j.fn = fn;
  j.ctx = ctx;
  for (t = 0; t < threads; t++) {
    wk[t].j = &j;
    wk[t].w = t;
  }
  for (t = 1; t < threads; t++) /* a helper that cannot start leaves its share to the others */
    if (pthread_create(&tid[started], NULL, work, &wk[t]) == 0) started++;
  work(&wk[0]);
  for (t = 0; t < started; t++) pthread_join(tid[t], NULL);
}

double lowp_wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
