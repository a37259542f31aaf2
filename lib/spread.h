/* lowp_spread -- independent pieces of work on the caller's thread and helper threads, without spinning */
#ifndef LOWP_SPREAD_H
#define LOWP_SPREAD_H

#include <stddef.h>

/** @brief The threads lowp_spread(n, threads, ...) may use: threads (<= 0:
    omp_get_max_threads(), the count OMP_NUM_THREADS sets), at most n and 64,
    at least 1. */
int lowp_spread_width(size_t n, int threads);

/**
 * @brief Run fn(ctx, i, w) for every i in [0, n), w the worker (0 .. width -
 * 1, lowp_spread_width: per-worker buffers): the caller's thread (w = 0)
 * and helper threads take the next i from a shared counter, so a
 * helper the system does not schedule leaves its share to the others. A
 * waiting thread sleeps in pthread_join instead of spinning (OpenMP's
 * default spins between regions, which on a loaded machine of few cores
 * takes the core the working thread needs). fn must give each i's result
 * alone (no order between calls), so the results are the same for every
 * thread count. Runs on the caller's thread alone when n < 2 or a helper
 * cannot start.
 */
void lowp_spread(size_t n, int threads, void (*fn)(void *ctx, size_t i, int w), void *ctx);

/** @brief Seconds of a monotonic wall clock (CLOCK_MONOTONIC): the time a
    spread takes, and lowp reveal's time per class. */
double lowp_wall_now(void);

#endif
