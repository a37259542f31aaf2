/* lowp_reveal_bound -- the worst-case bound of a revealed kernel, its additions in a declared format */
#ifndef LOWP_REVEAL_BOUND_H
#define LOWP_REVEAL_BOUND_H

#include <stddef.h>

#include "check/reveal.h"

/** @brief What lowp_reveal_bound found. */
typedef struct {
  double bound;     /**< max over classes and leaves of c_i (model/tree.h): the
                         componentwise backward-error bound; 0 without a tree */
  size_t depth;     /**< the deepest leaf's roundings, over the classes */
  int narrowest;    /**< the fewest significand bits of an addition the trees
                         hold (as revealed; 0: no tree) */
  int narrowest_prod; /**< the fewest significand bits of a rounded product
                         the trees hold (as revealed; 0: every product exact
                         or no tree) */
  int has_tree;     /**< 1: every class has a tree (else bound 0) */
} lowp_reveal_bound_t;

/**
 * @brief The bound of r's trees with every addition bounded in acc (the
 * declared accumulator, not the revealed one: a kernel that adds in fewer
 * bits than declared must fail against it; a product rounded to fewer bits
 * than acc is bounded as rounded to acc, and reported in narrowest_prod):
 * sum_i c_i |a_i b_i| <= max_i c_i
 * sum_i |a_i b_i| (Higham 2002, eq. (3.5), per leaf depth). r is not changed.
 * @return LOWP_OK (b->has_tree 0 when r is nondeterministic or a class has
 *         no tree); LOWP_ERANGE (a leaf too deep for acc: no bound);
 *         LOWP_ENOMEM.
 */
int lowp_reveal_bound(lowp_reveal_bound_t *b, const lowp_reveal_t *r, const lowp_format_t *acc);

#endif
