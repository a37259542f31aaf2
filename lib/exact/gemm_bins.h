/* lowp_exact GEMM internals -- the accumulator path over row/column sets (lib/exact/gemm_bins.c) */
#ifndef LOWP_EXACT_GEMM_BINS_H
#define LOWP_EXACT_GEMM_BINS_H

#include <stddef.h>

#include "exact/acc.h"
#include "exact/exact.h"

/** @brief 1 when a * b overflows size_t (sizes of the GEMM's buffers). */
static inline int lowp__mul_overflows(size_t a, size_t b) { return b && a > (size_t)-1 / b; }

/** @brief Progress reporting: the callback sees lo + (hi - lo) * fraction. */
typedef struct {
  void (*cb)(void *ctx, double done);
  void *ctx;
  double lo, hi;
} lowp__progress_t;

/** @brief Report fraction t (0..1) of the current stage; call from the
    calling thread only. */
static inline void lowp__progress_set(lowp__progress_t *p, double t) {
  if (p && p->cb) p->cb(p->ctx, p->lo + (p->hi - p->lo) * t);
}

/**
 * @brief The accumulator path for the outputs C[ri[x]][cj[y]] (ri NULL: all
 * m rows, mr ignored; cj NULL: all n columns, nc ignored). Other outputs
 * are not touched. prog may be NULL.
 */
int lowp__exact_gemm_acc(double *c, const double *a, const double *b, const double *c0,
                         size_t m, size_t n, size_t k, const size_t *ri, size_t mr,
                         const size_t *cj, size_t nc, const lowp_format_t *f,
                         const lowp_policy_t *pol, lowp_rounding_t rnd,
                         lowp__progress_t *prog);

/**
 * @brief The accumulator for a list of single outputs: C[out[q] / n][out[q] % n]
 * for q < cnt, each an exact sum of 106-bit products (plus C0), rounded once.
 * For the few outputs the truncated sliced path leaves undecided.
 */
int lowp__exact_gemm_acc_list(double *c, const double *a, const double *b, const double *c0,
                              size_t n, size_t k, const size_t *out, size_t cnt,
                              const lowp_format_t *f, const lowp_policy_t *pol,
                              lowp_rounding_t rnd);

/** @brief Finish output (i, j) whose exact A B sum is in acc: add C0, apply
    the exact-zero sign rule from the signs of a[i][:] * b[:][j], round. */
void lowp__exact_gemm_finish(double *c, lowp_acc_t *acc, const double *ar, const double *b,
                             size_t n, const double *c0, size_t i, size_t j, size_t k,
                             const lowp_format_t *f, const lowp_policy_t *pol,
                             lowp_rounding_t rnd);

#endif
