/* lowp__reveal -- what the files of lowp_reveal share (not public) */
#ifndef LOWP_REVEAL_INT_H
#define LOWP_REVEAL_INT_H

#include <stddef.h>

#include "check/reveal.h"

/** @brief A probe: +M at x, -M at y (x != y); scope: the leaves of a node
    known to hold LCA(x, y) (nscope of them; NULL: all K), the only units
    the probe needs (the others may be 0). Optionally (sub not NULL) a
    smaller set that is enough: sub (nsub leaves, x and y among them) holds
    every leaf of LCA(x, y) unless the LCA is the scope's node itself (of P
    leaves), and outer, a leaf of that node outside sub, tells which: a
    probe whose only unit is outer counts it under the LCA exactly when the
    LCA is the node. The oracle takes whichever costs fewer windows. */
typedef struct {
  size_t x, y;
  const size_t *scope;
  size_t nscope;
  const size_t *sub;
  size_t nsub, outer, P;
} lowp__pair_t;

/** @brief The LCA oracle: sizes[i] = leaves under LCA(pairs[i]) (batched
    calls of the subject). Returns a status; err set on failure. */
typedef int (*lowp__lca_fn)(void *ctx, size_t *sizes, const lowp__pair_t *pairs, size_t n);

/**
 * @brief The order of K leaves from the oracle (reveal_order.c): *shape
 * gets one node per internal node of the kernel's tree, every node with
 * arithmetic 0 (a placeholder: lowp__reveal_arith assigns the real one);
 * nodes of more than two children are block FMAs. hyp not NULL: groups that
 * repeat an earlier group's leaves moved by d are presumed its copies and
 * checked by a few pairs (hyp[0]: copies accepted, hyp[1]: refuted, then
 * probed in full); NULL: FPRev's recursion alone.
 * @return LOWP_OK; LOWP_EINVAL with err set when the sizes are not those
 *         of any tree (a nondeterministic subject, or outputs that are not
 *         counts); the oracle's status.
 */
int lowp__reveal_order(lowp_tree_t *shape, size_t K, lowp__lca_fn f, void *ctx, size_t *probes,
                       size_t *rounds, size_t *hyp, char *err, size_t errlen);

/** @brief Geometry of a call: slots (rows of A) and output positions. */
typedef struct {
  const lowp_subject_t *s;
  lowp_problem_t p;     /**< the problem; dims.batch set per call */
  lowp_op_id_t op;
  size_t K, R, C;       /**< terms, rows and columns of outputs per batch entry */
  size_t max_elems;
  int acc_bits;         /**< the probes' accumulator bits, at least (0: as seen) */
  int m_out_range;      /**< 1: M's products within the output format's range */
  int normal_units;     /**< 1: the probes' units normal numbers of the output */
  size_t calls;
  char *err;
  size_t errlen;
} lowp__geo_t;

/** @brief The geometry of problem p for subject s (K, R, C; max_elems from
    o, default 2^25). @return LOWP_OK; LOWP_EUNSUPPORTED (err says why). */
int lowp__geo_init(lowp__geo_t *g, const lowp_subject_t *s, const lowp_problem_t *p,
                   const lowp_reveal_opts_t *o, char *err, size_t errlen);

/** @brief Input 0's row of slot s (s = batch entry * R + row). */
double *lowp__slot_a(const lowp__geo_t *g, double *a, size_t s);
/** @brief Element l of input 1 for slot s, column j (NULL for a sum). */
double *lowp__slot_b(const lowp__geo_t *g, double *b, size_t s, size_t l, size_t j);
/** @brief Elements of input 0 / input 1 per batch entry. */
size_t lowp__per_a(const lowp__geo_t *g);
size_t lowp__per_b(const lowp__geo_t *g);
/** @brief Run the subject on batch entries of the problem (g->calls++). */
int lowp__reveal_call(lowp__geo_t *g, size_t batch, const double *a, const double *b, double *out);

/**
 * @brief Identify the arithmetic of every class and validate the twins
 * (reveal_arith.c): candidates on each class's shape, random inputs,
 * bit-for-bit comparison; fills classes[c].tree, has_tree, validated,
 * mismatched, candidates, arith, note. shapes[c] is class c's shape.
 */
int lowp__reveal_arith(lowp_reveal_t *r, lowp__geo_t *g, lowp_tree_t *shapes,
                       const lowp_reveal_opts_t *o);

/** @brief Input values as the kernel reads them: round each to the found
    conversion (copies; NULL where none). */
int lowp__reveal_convert(double *dst, const double *src, size_t n, const lowp_reveal_conv_t *c);

#endif
