/* lowp_bsmma -- the model of block-scaled tensor-core MMA (Blackwell tcgen05 / sm_120 block_scale) */
#ifndef LOWP_BSMMA_H
#define LOWP_BSMMA_H

/*
 * One instruction computes d = sum_i a_i b_i sA(i) sB(i) + c over K
 * products, a_i and b_i elements of block-scaled formats, sA(i) and sB(i)
 * the scales of the blocks holding them. The model is parameters, not code
 * paths (as model/tc.h's block FMA):
 *
 *   group = 0 (the K = 32 instructions, kind::mxf8f6f4): each product is a
 *     term; its exponent is x = xa + xb + xsA + xsB, where x of a value is
 *     max(floor(log2|v|), emin of its format) (the exponents add, the
 *     significands multiply: the term lies below 2^(x+4));
 *   group = g > 0 (the K = 64 instructions, kind::mxf4nvf4): the products
 *     of each run of g are summed exactly, G; the term is G sA sB, with
 *     exponent x = floor(log2|G|) + xsA + xsB;
 *   X = max(x over the terms and c (x_c with fp32's emin)); every term and
 *     c is truncated at 2^(X - F) (no sticky bit), the cut terms are added
 *     exactly, and the sum is rounded once to fp32 by out_rnd (rtz on B200);
 *     a finite sum beyond fp32's range gives infinity.
 *   Zeros: zero = ignore, a zero term (a zero element, a zero scale, or a
 *     group summing to 0) does not take part in X; zero = emin, it does,
 *     with the exponent of the smallest values of its formats (emin_a +
 *     emin_b + xsA + xsB): an all-zero block under a 2^127 scale then moves
 *     the alignment and can cut c and every other term.
 *   Special values: a NaN scale of any block the instruction reads, a NaN
 *     element or a NaN c gives the canonical NaN; inf * 0 (a zero element
 *     or scale) and +inf with -inf give NaN; otherwise an infinite product
 *     or c gives that infinity.
 *
 * Longer dot products chain instructions through c, in order (as tc_dot.c).
 * What the parameters are for each GPU, with the evidence, is in bsmma.c.
 */

#include <stddef.h>

#include "format/format.h"

/** @brief How a zero term takes part in the alignment exponent. */
typedef enum {
  LOWP_BSZ_IGNORE = 0, /**< zero terms do not take part in X */
  LOWP_BSZ_EMIN = 1    /**< a zero term has the exponent of its formats' emins plus its scales' */
} lowp_bszero_t;

/** @brief Parameters of one block-scaled MMA instruction. */
typedef struct {
  int K;                   /**< products per instruction, 1..256 */
  int group;               /**< 0: products are terms; g: exact sums of g products are terms */
  int F;                   /**< fraction bits kept below 2^X, 1..48 */
  lowp_rounding_t out_rnd; /**< rounding of the sum to fp32 */
  lowp_bszero_t zero;      /**< the zero convention */
} lowp_bsmma_t;

/** @brief A named model: parameters and the instruction it models. */
typedef struct {
  char name[64];     /**< "b200,kind=mxf8f6f4", or with overrides */
  const char *instr; /**< the PTX instruction modelled */
  lowp_bsmma_t p;
} lowp_bsmma_model_t;

/**
 * @brief Resolve a model: "GPU,kind=KIND[,key=value...]" with GPU b200 or
 * sm120 and KIND mxf8f6f4 or mxf4nvf4, or parameters alone
 * ("K=32,group=0,F=25"). Keys: K, group, F, out (rtz|rne|...), zero
 * (ignore|emin).
 * @return LOWP_OK, or LOWP_EINVAL with err saying why.
 */
int lowp_bsmma_get(lowp_bsmma_model_t *m, const char *spec, char *err, size_t errlen);

/** @brief Check parameters: LOWP_OK or LOWP_EINVAL (err says which). */
int lowp_bsmma_validate(const lowp_bsmma_t *p, char *err, size_t errlen);

/** @brief "K=32,group=0,F=25,out=rtz,zero=ignore" */
void lowp_bsmma_str(char *buf, size_t len, const lowp_bsmma_t *p);

/**
 * @brief One instruction over n <= p->K products: *d = sum a_i b_i sA sB + c.
 * @param[in] sa,sb   the scales: product i uses sa[(off + i) / blk]
 * @param[in] off     the index of a[0] in its row (the scale blocks are
 *                    counted from the row's start)
 * @param[in] fa,fb   element formats (their emin gives x of small values)
 * @param[in] fs      scale format
 * @return LOWP_OK; LOWP_EINVAL (bad parameters, or values that are not
 *         values of narrow formats, or a group whose exact sum does not
 *         fit 62 bits).
 */
int lowp_bsmma(double *d, const double *a, const double *b, const double *sa, const double *sb,
               size_t n, size_t off, size_t blk, double c, const lowp_bsmma_t *p,
               const lowp_format_t *fa, const lowp_format_t *fb, const lowp_format_t *fs);

/** @brief A dot product of length k: instructions of p->K products chained
    through c, in order. Same arguments as lowp_bsmma with off = 0. */
int lowp_bsmma_dot(double *d, const double *a, const double *b, const double *sa, const double *sb,
                   size_t k, size_t blk, double c, const lowp_bsmma_t *p, const lowp_format_t *fa,
                   const lowp_format_t *fb, const lowp_format_t *fs);

#endif
