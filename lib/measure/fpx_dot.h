/* lowp_fpx_dot -- the exception trace of one dot product: hooks for the accumulators and the tensor-core chain */
#ifndef LOWP_FPX_DOT_H
#define LOWP_FPX_DOT_H

#include <stddef.h>
#include <stdint.h>

#include "exact/acc.h"
#include "format/format.h"
#include "measure/fpx.h"

/**
 * @brief What the hook of one dot product knows: its trace, its inputs (for
 * the exact reference), its sequence base and indices, and the exact partial
 * sum init + sum_{t < ref_n} x_t w_t, built only when an exception needs it
 * (an event of an addition is inherent when that exact partial sum raises
 * the same kind, spurious when it does not).
 */
typedef struct lowp_fpx_dot_s {
  lowp_fpx_trace_t *t;
  const double *x, *w;
  size_t incx, incw;
  double init;
  uint64_t seq0;
  int64_t i, j;
  const lowp_format_t *lf[2]; /**< formats whose limits are cached */
  double lmin[2], lmax[2];    /**< their xmin and xmax */
  int ref_on;     /**< ref initialised */
  size_t ref_n;   /**< products in ref */
  lowp_acc_t ref; /**< the exact partial sum */
  size_t seg_lo;  /**< SIZE_MAX: partial sums are ref's; else seg's (lowp_fpx_dot_scope) */
  int seg_on;     /**< seg initialised */
  size_t seg_n;   /**< seg holds the products seg_lo .. seg_n - 1 */
  lowp_acc_t seg; /**< the exact partial sum of a chain that started from zero at seg_lo */
} lowp_fpx_dot_t;

/** @brief Start the dot of output (i, j) (init + sum x_l w_l) with sequence base seq0. */
void lowp_fpx_dot_begin(lowp_fpx_dot_t *d, lowp_fpx_trace_t *t, const double *x,
                        size_t incx, const double *w, size_t incw, double init,
                        uint64_t seq0, int64_t i, int64_t j);

/**
 * @brief The scope of the partial sums that judge later events: lo =
 * SIZE_MAX (lowp_fpx_dot_begin's) the dot's, init + x_0 w_0 + ...; else the
 * products from lo alone (a promoted tensor-core chain's partial sum starts
 * from zero at lo: its events are judged against that exact partial sum,
 * not against the dot's, which holds the total it will be added to).
 */
void lowp_fpx_dot_scope(lowp_fpx_dot_t *d, size_t lo);

/** @brief The slot of f's cached limits (filled on first use). */
int lowp_fpx_dot_slot(lowp_fpx_dot_t *d, const lowp_format_t *f);

/** @brief 1 when no exception can have given y in f: y strictly inside
    (xmin, xmax), the test every rounding of a traced dot pays (counts the
    operation). Inline: a comparison with cached limits. */
static inline int lowp_fpx_dot_quiet(lowp_fpx_dot_t *d, const lowp_format_t *f, double y) {
  int s = f == d->lf[0] ? 0 : f == d->lf[1] ? 1 : lowp_fpx_dot_slot(d, f);
  double ay = y < 0 ? -y : y;
  d->t->ops++;
  return ay > d->lmin[s] && ay < d->lmax[s];
}

/**
 * @brief One rounding of the dot, y its result in f under rnd; s is the
 * sequence offset (the accumulators: 0 the addend's rounding, 2l + 1
 * product l, 2l + 2 addition l; event index k = (s - 1) / 2). The exact
 * value rounded: op ROUND a; MUL a b; ADD acc + a; FMA acc + a b. Cheap when
 * y is strictly inside (xmin, xmax).
 */
void lowp_fpx_dot_step(lowp_fpx_dot_t *d, uint64_t s, lowp_fpx_op_t op, double acc,
                       double a, double b, double y, const lowp_format_t *f,
                       lowp_rounding_t rnd);

/**
 * @brief A rounding whose exact value the caller computed ((x, sticky) as
 * lowp_fpx_classify takes it; in: LOWP_FPX_IN_* of its operands): classify,
 * and record with sequence seq0 + s, index k, operand bits a, b, c, and the
 * reference at that point: the exact partial sum through product k when
 * partial is 1, else the rounded value itself.
 */
void lowp_fpx_dot_note(lowp_fpx_dot_t *d, uint64_t s, int64_t k, lowp_fpx_op_t op,
                       double x, int sticky, double y, unsigned in, int partial,
                       const lowp_format_t *f, lowp_rounding_t rnd, double a, double b,
                       double c);

/**
 * @brief A block's rounding (a tensor-core block FMA): as lowp_fpx_dot_note,
 * with the reference at that point the exact sum of every product the block
 * consumed, x_t w_t for t in idx[0..n) (an interleaved instruction's second
 * block: both blocks' products), plus, when run is 1, the exact partial sum
 * (in the current scope) of the products before run_n, the block's c. A
 * block that starts from zero (late c) takes run 0. k is only the index
 * reported (the block's first non-finite product, else its last).
 */
void lowp_fpx_dot_note_block(lowp_fpx_dot_t *d, uint64_t s, int64_t k, lowp_fpx_op_t op,
                             double x, int sticky, double y, unsigned in, int run, size_t run_n,
                             const size_t *idx, size_t n, const lowp_format_t *f,
                             lowp_rounding_t rnd, double a, double b, double c);

#endif
