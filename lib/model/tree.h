/* lowp_tree -- summation trees as data: leaves, rounded additions, fused block FMAs */
#ifndef LOWP_TREE_H
#define LOWP_TREE_H

/*
 * A summation tree says in which order, and with which arithmetic, a kernel
 * adds the n terms of one output (a sum's x_i, or a dot product's a_i b_i).
 * Every named order of lowp (model/accum.h: recursive, pairwise, blocked:B,
 * splitk:S; the FMA chains of cpu/gemm_acc.h; the chained block FMAs of the
 * tensor-core models, model/tc.h) is one tree per n; a revealed order
 * (check/reveal.h, FPRev: Xie et al., USENIX ATC 2025, arXiv:2411.00442) is
 * another. Kahan's compensated sum is not a tree (its correction term
 * feeds one sum into several later operations: a DAG), and is refused.
 *
 * Nodes (ids: 0..n-1 the leaves, term i; n + k the k-th internal node;
 * LOWP_TREE_ZERO the constant +0):
 *   ADD    one or two children; z = x + y (a lone child: x + 0) rounded once
 *          to the node's accumulation format and rounding. A leaf child (a
 *          dot's product) enters exactly (leaf_exact = 1: an FMA) or rounded
 *          to prod with prod_rnd first (leaf_exact = 0). A sum's terms always
 *          enter exactly (model/accum.h's convention).
 *   FUSED  any number of leaf children (products) and at most one other
 *          child (c, or +0 when none): one block FMA of model/tc.h (lowp_bfma
 *          with the node's parameters, input and output formats).
 * Internal nodes are stored children first; the last one is the root. The
 * result is the root's value, rounded to `out` with out_rnd when has_out.
 *
 * Error bound (Higham, "Accuracy and Stability of Numerical Algorithms",
 * 2nd ed., 2002, eq. (3.5) and sec. 4.2): every node v multiplies the sum
 * of its inputs by (1 + d_v) with |d_v| <= delta_v (delta = u for a rounded
 * addition; for a block FMA of t terms, t 2^-F (truncated; half that rounded)
 * plus its output rounding, Fasi et al. 2021 sec. 3). Hence
 *   |computed - exact| <= sum_i c_i |x_i|,
 *   c_i = prod_{v above leaf i} (1 + delta_v) - 1 <= t_i / (1 - t_i),
 *   t_i = sum_{v above i} delta_v,
 * which is gamma_{d_i} when every delta is u (d_i the depth of leaf i): no
 * larger than gamma_{n-1} (recursive) or any named order's bound that uses
 * the tree's deepest leaf, and smaller wherever leaves sit higher. Block
 * FMA terms assume normal inputs (a subnormal term's exponent is clamped to
 * emin and the relative bound does not hold for it).
 */

#include <stddef.h>

#include "format/format.h"
#include "model/accum.h"
#include "model/tc.h"

/** @brief The constant +0 as a child. */
#define LOWP_TREE_ZERO ((size_t)-1)

/** @brief Node kinds. Explicit values: they are stored in files. */
typedef enum { LOWP_NODE_ADD = 0, LOWP_NODE_FUSED = 1 } lowp_node_kind_t;

/** @brief The arithmetic of a node (several nodes share one). */
typedef struct {
  lowp_node_kind_t kind;
  lowp_format_t acc;      /**< ADD: the sum's format; FUSED: the output format */
  lowp_rounding_t rnd;    /**< ADD: rounding of the sum (not SR) */
  int leaf_exact;         /**< ADD: products enter exactly (1) or rounded (0) */
  lowp_format_t prod;     /**< ADD, leaf_exact 0: format of a rounded product */
  lowp_rounding_t prod_rnd;
  lowp_bfma_t bfma;       /**< FUSED: the block FMA */
  lowp_format_t in;       /**< FUSED: the input format (of a and b) */
} lowp_tree_arith_t;

/** @brief An internal node: its arithmetic and its children. */
typedef struct {
  size_t arith;   /**< index into the tree's arith table */
  size_t first;   /**< its children are kids[first .. first + count) */
  size_t count;
} lowp_tree_node_t;

/** @brief A summation tree (owns its arrays; lowp_tree_free). */
typedef struct lowp_tree_s {
  size_t n;                 /**< leaves */
  lowp_tree_node_t *nodes;  /**< internal nodes, children first, root last */
  size_t n_nodes, cap_nodes;
  size_t *kids;             /**< children of every node, in node order */
  size_t n_kids, cap_kids;
  lowp_tree_arith_t *arith;
  size_t n_arith, cap_arith;
  int has_out;              /**< the root is rounded to out at the end */
  lowp_format_t out;
  lowp_rounding_t out_rnd;
} lowp_tree_t;

/* ---------------------------------------------------------- building */

/** @brief An empty tree of n leaves (no nodes; evaluates to +0 while empty). */
void lowp_tree_init(lowp_tree_t *t, size_t n);
/** @brief Free the arrays (the struct itself is the caller's). */
void lowp_tree_free(lowp_tree_t *t);
/** @brief A deep copy of src into dst (dst's old arrays are not freed).
    @return LOWP_OK; LOWP_ENOMEM (dst left empty). */
int lowp_tree_copy(lowp_tree_t *dst, const lowp_tree_t *src);
/** @brief Index of arithmetic a in t's table (added if new), or (size_t)-1 (no memory). */
size_t lowp_tree_arith_add(lowp_tree_t *t, const lowp_tree_arith_t *a);
/** @brief Append a node (children ids, count >= 1); returns its id (n + k),
    or LOWP_TREE_ZERO when out of memory or a child id is not yet defined. */
size_t lowp_tree_node_add(lowp_tree_t *t, size_t arith, const size_t *kids, size_t count);

/** @brief ADD arithmetic: acc, rnd; products exact (fma) or rounded to prod. */
lowp_tree_arith_t lowp_tree_arith_sum(const lowp_format_t *acc, lowp_rounding_t rnd,
                                      int leaf_exact, const lowp_format_t *prod,
                                      lowp_rounding_t prod_rnd);

/**
 * @brief The tree of model/accum.h's order m for n terms (lowp_accum_sum
 * when dot = 0, lowp_accum_dot when dot = 1), node for node as accum.c
 * computes it. No final rounding (has_out 0).
 * @return LOWP_OK; LOWP_EUNSUPPORTED (kahan: not a tree); LOWP_EINVAL;
 *         LOWP_ENOMEM.
 */
int lowp_tree_from_accum(lowp_tree_t *t, size_t n, const lowp_accum_t *m, int dot);

/**
 * @brief The tree of cpu/gemm_acc.h's dot (recursive): s = +0; then
 * s = s + p_l for each l, the product exact (prod NULL: an FMA chain) or
 * rounded to prod with prod_rnd; each addition rounded to acc with acc_rnd.
 */
int lowp_tree_from_fma_chain(lowp_tree_t *t, size_t n, const lowp_format_t *prod,
                             lowp_rounding_t prod_rnd, const lowp_format_t *acc,
                             lowp_rounding_t acc_rnd);

/**
 * @brief The tree of lowp_tc_dot (model/tc.h) for k products of format in
 * with output out and c = 0: chained block FMAs (interleave, late_c,
 * promotion to fp32 every m->promote products and the final rounding).
 */
int lowp_tree_from_tc(lowp_tree_t *t, size_t k, const lowp_tc_model_t *m,
                      const lowp_format_t *in, const lowp_format_t *out);

/* -------------------------------------------------------- evaluating */

/**
 * @brief *y = the tree's result for terms a[i*sa] b[i*sb] (b NULL: a sum of
 * a[i*sa]). Products are exact (binary64 products of <= 26-bit
 * significands; otherwise an FMA node with one product and a binary64
 * accumulation uses C's fma). tmp: scratch of t->n_nodes doubles (NULL:
 * allocated).
 * @return LOWP_OK; LOWP_EINVAL (bad tree); LOWP_EUNSUPPORTED (a product
 *         binary64 cannot hold where no fma covers it); LOWP_ENOMEM.
 */
int lowp_tree_eval(double *y, const lowp_tree_t *t, const double *a, size_t sa,
                   const double *b, size_t sb, double *tmp);

/**
 * @brief lowp_tree_eval for m outputs: y[o] from terms a[o][i*sa] b[o][i*sb]
 * (b NULL: sums), the same bits as m calls; where the tree's nodes are
 * additions in binary32 or binary64 the m outputs are evaluated side by
 * side (independent chains, several times faster). tmp: scratch of
 * m * t->n_nodes doubles (required).
 * @return as lowp_tree_eval (the first failure).
 */
int lowp_tree_eval_many(double *y, size_t m, const lowp_tree_t *t, const double *const *a, size_t sa,
                        const double *const *b, size_t sb, double *tmp);

/** @brief Check a tree: ids in range, children before parents, every leaf
    used exactly once, the root last covering all, arithmetic valid. */
int lowp_tree_validate(const lowp_tree_t *t, char *err, size_t errlen);

/* ------------------------------------------------------------ bounds */

/**
 * @brief c[i] (n values): the coefficient of |x_i| in the tree's worst-case
 * error bound (see the header): t_i / (1 - t_i), t_i the sum of the deltas
 * above leaf i (with the leaf's product rounding and the final rounding).
 * @return LOWP_OK; LOWP_ERANGE (some t_i >= 1: no bound); LOWP_EINVAL.
 */
int lowp_tree_bound_coef(double *c, const lowp_tree_t *t);

/** @brief The depth of each leaf (roundings on its path, product and final
    rounding included): d[i], n values. */
int lowp_tree_depths(size_t *d, const lowp_tree_t *t);

/* -------------------------------------------------------- comparing */

/**
 * @brief Are two trees the same node for node? Children are compared as
 * sets (an addition and a block FMA are commutative), nodes by their
 * arithmetic; with shape_only the arithmetic is not compared and a node of
 * one child (x + 0, a lone product rounded) is looked through: the shape
 * that counting probes (check/reveal.h) can see.
 * @return 1 same, 0 different (*where: the id in a of the first node that
 *         differs, or LOWP_TREE_ZERO for a different leaf count or root).
 */
int lowp_tree_same(const lowp_tree_t *a, const lowp_tree_t *b, int shape_only, size_t *where);

/** @brief One line: "n=4096, 4095 nodes (add fp32 rne fma), depth 12..12". */
void lowp_tree_str(char *buf, size_t len, const lowp_tree_t *t);

/* ------------------------------------------------------------ files */

/**
 * @brief The tree as JSON text (malloc'd, caller frees):
 * {"lowp_tree": 1, "n": N, "arith": [...], "nodes": [[arith, kid, ...], ...],
 *  "out": {"format": "fp32", "rnd": "rne"}} (kid -1: the constant +0).
 * @return LOWP_OK; LOWP_ENOMEM.
 */
int lowp_tree_to_json(char **text, const lowp_tree_t *t);

/** @brief Parse lowp_tree_to_json's text (strictly: every field checked,
    then lowp_tree_validate). @return LOWP_OK; LOWP_EFILE (err says what). */
int lowp_tree_from_json(lowp_tree_t *t, const char *text, char *err, size_t errlen);

#endif
