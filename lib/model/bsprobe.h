/* lowp_bsprobe -- probes of a block-scaled MMA (a GPU's, or lowp's model): F and the group size */
#ifndef LOWP_BSPROBE_H
#define LOWP_BSPROBE_H

/*
 * In the manner of the tensor-core probes (model/probe.h; Fasi, Higham,
 * Mikaitis & Pranesh 2021): inputs built so that one feature shows in one
 * output. All scales are 1 (e8m0 0x7f); the elements are T = 2^(emax - 1)
 * of the element format times 1.5, 1 and 0.5 (values of every MX element
 * format), B's elements 1; c is the probe's tiny, an fp32 power of two. Units
 * below are of T: the products sit above 2^(2 emin), so zero terms do not
 * set the alignment under either zero convention.
 *
 *   F      +1 at index 0, -1 at index K-1, c = 2^-j: the pair cancels
 *          exactly and c survives the cut at 2^(X - F) = 2^-F iff j <= F.
 *          F = the largest j with d == c. (Index 0 and K-1 must be in
 *          different groups: a single exact group of K makes every j
 *          survive; then F is reported as not found.)
 *   group  +1.5 at 0, -1 at r, -0.5 at K-1, c = 2^-(F+1): when 0 and r are
 *          summed exactly in one group their term is 0.5 (exponent -1), X =
 *          -1 and c, one unit of 2^(X-F), survives; in separate terms X = 0
 *          and c, half a unit, is cut. The group size is the first r with
 *          d == 0 (1: every product is its own term).
 *
 * The device computes one instruction of n <= K products:
 * d = sum a_i b_i sa(i/blk) sb(i/blk) + c.
 */

#include <stddef.h>

#include "format/format.h"
#include "model/bsmma.h"

/** @brief One instruction on the device (a GPU kernel, or lowp_bsprobe_model_dev). */
typedef int (*lowp_bsprobe_fn)(void *ctx, double *d, const double *a, const double *b, const double *sa,
                               const double *sb, size_t n, size_t blk, double c);

/** @brief What the probes found. */
typedef struct {
  int K;      /**< the instruction length probed (given) */
  int F;      /**< fraction bits kept below 2^X; -1 if not found (one exact group) */
  int group;  /**< products summed exactly per term: 1 (each product a term) .. K */
} lowp_bsprobe_t;

/** @brief Run the probes on a device of instruction length K, scale block blk,
    element format el (A's and B's).
    @return LOWP_OK, or the device's status. */
int lowp_bsprobe_run(lowp_bsprobe_t *r, lowp_bsprobe_fn dev, void *ctx, int K, size_t blk,
                     const lowp_format_t *el);

/** @brief The context of lowp's model as a device. */
typedef struct {
  const lowp_bsmma_t *p;
  const lowp_format_t *fa, *fb, *fs;
} lowp_bsprobe_model_t;

/** @brief lowp_bsmma as a probe device (ctx: a lowp_bsprobe_model_t). */
int lowp_bsprobe_model_dev(void *ctx, double *d, const double *a, const double *b, const double *sa,
                           const double *sb, size_t n, size_t blk, double c);

#endif
