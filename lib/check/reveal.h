/* lowp_reveal -- find a subject's summation tree and hidden input conversions from crafted inputs (FPRev) */
#ifndef LOWP_REVEAL_H
#define LOWP_REVEAL_H

/*
 * FPRev (Xie et al., "FPRev: revealing the order of floating-point
 * summation by numerical testing", USENIX ATC 2025, arXiv:2411.00442):
 * give every term the value 1 except +M at position i and -M at position j,
 * M so large that M + (any count of units) rounds back to M in the
 * accumulator. Every node that holds one of the two big terms and not the
 * other evaluates to +-M (its units are absorbed); their lowest common
 * ancestor evaluates to 0 (the units under it are lost); every other node
 * counts its units exactly. The output is therefore
 *     n - |leaves under LCA(i, j)|,
 * which names the size of the LCA. From the sizes of LCA(x, y) for one
 * pivot x against every y, the ancestors of x (distinct sizes s_1 < s_2 <
 * ...) and the leaves hanging off each (the y with that size) follow; each
 * such group is a set of sibling subtrees, revealed recursively. A node
 * with more than two children (a block FMA) shows as a group whose members
 * all meet at the parent. lowp probes one pivot against its whole group in
 * one round, all groups of a round together, and packs each round into
 * batched calls (one probe per row of A: a GEMM call of B x m rows is B m
 * probes), so a tree of depth d costs about d calls; a group whose pivot
 * meets every other member at the parent is resolved by probing all its
 * pairs at once (a block FMA of b terms: b(b-1)/2 probes, one round).
 *
 * The order found, lowp identifies the arithmetic: the accumulation
 * format's precision seen at the output (1 + 2^-t probes), then candidate
 * arithmetics on the revealed shape (accumulation format and rounding,
 * products exact or rounded, an FMA chain's first product rounded alone,
 * block FMAs of every tensor-core preset for the input format), each run as
 * a twin on random inputs: the one that reproduces the subject bit for bit
 * on every validation output is the tree. Hidden conversions: each input is
 * given random values off the grid of every narrower format, against a
 * one-hot partner, so that each output is one input value as the kernel
 * read it; the format and rounding that reproduce every output are
 * reported ("B is rounded to fp16 (rne) before use").
 *
 * Groups of one round whose leaves are an earlier group's moved by d
 * (OpenBLAS's panels, a SIMD kernel's lanes) are presumed copies of it once
 * it is revealed, checked by a few pairs, probed in full where one differs;
 * a class whose twin then fails is revealed again without copies
 * (reveal_order.c, reveal.c). Every call is made twice at the start (classification); outputs that
 * differ mean a nondeterministic subject (atomics, a split chosen per call),
 * which gets no tree. Output positions (rows and columns of C) whose LCA
 * sizes differ on a set of probe pairs are different classes, each
 * revealed on its own.
 *
 * Limits (reported, never guessed past): the outputs must be counts, and
 * the accumulator must round to nearest or down (absorption fails under
 * truncation toward zero of a negative big value; a retry with negative
 * units covers rounding up); the products must span 2^(log2 w + P + 1)
 * between unit and M, with P the accumulator's precision and w the units of
 * one probe. The probed quantity is a_l b_l, so where input 0 alone cannot
 * hold the span (fp16 at K = 16384 with fp32 accumulation, fp8) M's
 * magnitude is split across both operands (input 1 then differs per probe:
 * a GEMM carries one per row, each row in its own column of B, a gemv or
 * dot one per batch entry); fp16 products span about 2^78, e5m2's about
 * 2^62, e4m3's 2^34 (2^-18 .. 2^16). Where even the products cannot span K units, or the
 * accumulator or the output cannot count K (an fp16 accumulator at K >
 * 2048, a bf16 output at K > 256), a probe's units are confined to a window
 * of w terms (the others are 0, added exactly) and a pair is probed once
 * per window: its LCA size is 2 + the units under it, summed over the
 * windows. Windows cover only the leaves of the node known to hold the LCA
 * (reveal_order.c passes it as the pair's scope), so a subtree costs
 * windows in proportion to its own size; a group of leaves hanging off a
 * known node is probed over its own leaves (sub) and one more probe whose
 * only unit is a leaf of the node outside the group: under the LCA exactly
 * when the LCA is the node itself (then its size is the node's). A pair of several
 * windows is first probed in its partner's window alone; pairs of one pivot,
 * window and count share their LCA (reveal.c), and one of them is probed in
 * the other windows. e4m3 with fp32 accumulation takes windows of 512
 * (17,093 probes in 10 calls at K = 4096). The
 * accumulator's bits are seen from products of both inputs where input 0
 * runs out of range (e4m3: 2^-9 .. 2^8); where even they run out (a sum of
 * e4m3 values) precision_lower says the count is a lower bound. The tree
 * is assumed the same for every batch entry (lowp varies the batch to pack
 * probes). Fewer bits seen than the declared output holds (a kernel that
 * rounds its result to bf16) or a wider accumulator behind the output
 * (binary64 sums returned in fp32) make classes without a tree: lowp_reveal
 * then reveals again with the narrower output format, or with M sized for 53
 * bits, and keeps what gives more trees (out_narrowed, acc_bits_assumed).
 */

#include <stddef.h>
#include <stdint.h>

#include "check/subject.h"
#include "model/tree.h"

/** @brief Options (zero-initialised = defaults). */
typedef struct {
  uint64_t seed;       /**< random validation inputs */
  size_t validate;     /**< outputs compared per class, every class (0:
                            10000, fewer when K is large: at most 2^25 terms
                            per class and 8 calls) */
  size_t max_elems;    /**< elements of one call's inputs (0: 2^25) */
  int no_conversions;  /**< skip the conversion probes */
  int conversions_only;/**< stop after the conversion probes (no classes) */
  int acc_bits;        /**< 0: the probes' M is sized for the accumulator bits
                            seen at the output (lowp_reveal then retries what
                            gets no tree: see out_narrowed and acc_bits_assumed);
                            N: for an accumulator of at least N bits, no retry */
  int m_out_range;     /**< 0: where the probes assume an accumulator wider than
                            the output, M may exceed the output's range (it
                            cancels before the result is rounded); 1: M within
                            the output format's range, sized for an accumulator
                            of the output's format; 2: within it, sized for 24
                            bits (partial sums rounded to the output: small
                            windows, many probes). lowp_reveal falls back from
                            0 to 1 to 2 by itself where counts fit no tree */
  int normal_units;    /**< 1: the probes' units are normal numbers of the
                            output; 0: subnormal ones where they need fewer
                            windows (an fp16 sum returned in fp16: windows of
                            2048 terms, not 8), once one call has shown that
                            the kernel returns a single such unit (a kernel
                            that flushes subnormals gets normal units) */
} lowp_reveal_opts_t;

/** @brief What lowp found about one input's conversion. */
typedef struct {
  int tested;              /**< 1: probed (formats narrower than the declared one exist) */
  int converted;           /**< 1: the kernel reads it rounded to fmt with rnd */
  int ambiguous;           /**< 1: another candidate fits every output too */
  int unexplained;         /**< 1: no format (the declared one included) explains
                                the outputs: 1.5 x v came out rounded (a narrow
                                accumulator) */
  lowp_format_t fmt;
  lowp_rounding_t rnd;
} lowp_reveal_conv_t;

/** @brief One class of output positions that share a tree. */
typedef struct {
  size_t *pos;         /**< positions: i * cols + j within one batch entry */
  size_t n_pos;
  int has_tree;        /**< 0: see note */
  int no_order;        /**< 1: the probes' counts fit no tree (note says why) */
  lowp_tree_t tree;    /**< the revealed tree (order and arithmetic) */
  size_t probes;       /**< LCA probes spent on the order */
  size_t calls;        /**< subject calls spent on the order */
  size_t validated;    /**< outputs the twin reproduced bit for bit */
  size_t mismatched;   /**< outputs it did not (0 when has_tree) */
  size_t candidates;   /**< arithmetics that fitted the first outputs */
  size_t refuted;      /**< of those, ruled out by later outputs (the next one taken) */
  double seconds;      /**< wall seconds of its order and of the validation
                            calls it took part in (a call that served several
                            classes counts for each); not in the JSON */
  char arith[240];     /**< the arithmetic in words */
  char note[400];      /**< why there is no tree, or what stays undecided */
} lowp_reveal_class_t;

/** @brief The result of lowp_reveal (lowp_reveal_free releases it). */
typedef struct lowp_reveal_s {
  size_t K;               /**< terms per output */
  size_t rows, cols;      /**< output positions per batch entry */
  int deterministic;      /**< 0: two identical calls differed (no trees) */
  int precision_seen;     /**< accumulator bits seen at the output (1 + 2^-t) */
  int precision_lower;    /**< 1: no probe failed (the inputs' and products'
                               range ran out first): at least precision_seen bits */
  lowp_reveal_conv_t conv[2];
  lowp_reveal_class_t *classes;
  size_t n_classes;
  size_t calls, probes;   /**< totals, conversions and validation included */
  size_t calls_classify, calls_validate;
  int out_narrowed;       /**< 1: the outputs are values of out_fmt, narrower than
                               the declared output format (a kernel that rounds
                               its result, e.g. a bf16 GEMM returned in fp32):
                               revealed with out_fmt as the output, the trees
                               round to it */
  lowp_format_t out_fmt;  /**< (out_narrowed) */
  int acc_bits_assumed;   /**< 0: the probes were sized for precision_seen; N:
                               for an N-bit accumulator hidden behind the output
                               (fp64 sums of fp32 products), after a class got
                               no tree with precision_seen */
  int units_subnormal;    /**< 1: some probes' units were subnormal numbers of
                               the output (see normal_units) */
  char msg[400];          /**< a one-line summary, or why revelation stopped */
} lowp_reveal_t;

/**
 * @brief Reveal the summation trees of a subject for problem p (sum, dot,
 * gemv or gemm; the shape is kept, the batch is lowp's to choose).
 * @return LOWP_OK (r filled; a nondeterministic subject or a class without
 *         a tree is a result, said in r, not an error); LOWP_EUNSUPPORTED
 *         (another operation; formats that cannot make the probes: err
 *         says why); a subject's own failure status (err has its message);
 *         LOWP_ENOMEM.
 */
int lowp_reveal(lowp_reveal_t *r, const lowp_subject_t *s, const lowp_problem_t *p,
                const lowp_reveal_opts_t *o, char *err, size_t errlen);

/** @brief Release what lowp_reveal allocated. */
void lowp_reveal_free(lowp_reveal_t *r);

/**
 * @brief The twin: the problem's outputs computed from the revealed trees
 * and conversions (every position's class tree; inputs converted first).
 * p's shape must keep r's rows, cols and K (any batch).
 * @return LOWP_OK; LOWP_EINVAL (a class without a tree, another shape).
 */
int lowp_reveal_twin(double *out, const lowp_reveal_t *r, const double *const *in,
                     const lowp_problem_t *p);

/**
 * @brief The result as JSON text (malloc'd; lib/check/reveal_json.c): shape,
 * conversions, classes with their positions and trees (model/tree.h JSON).
 * @return LOWP_OK; LOWP_ENOMEM.
 */
int lowp_reveal_to_json(char **text, const lowp_reveal_t *r, const lowp_problem_t *p);

/** @brief Read lowp_reveal_to_json's text back (what a twin needs: shape,
    conversions, classes and trees). @return LOWP_OK; LOWP_EFILE (err says
    what); LOWP_ENOMEM. */
int lowp_reveal_from_json(lowp_reveal_t *r, const char *text, char *err, size_t errlen);

/**
 * @brief Check a declared conversion (a check's "convert") against the
 * subject: one call of the conversion probe (single values of input w
 * against a one-hot partner, some of them ties of f) at p's shape.
 * *fits: every output is the value rounded to f with rnd; *as_declared:
 * every output is the value as given (no conversion).
 * @return LOWP_OK; LOWP_EUNSUPPORTED (not sum/dot/gemv/gemm); the subject's
 *         status (err has its message).
 */
int lowp_reveal_conv_verify(int *fits, int *as_declared, const lowp_subject_t *s, const lowp_problem_t *p,
                            int w, const lowp_format_t *f, lowp_rounding_t rnd, uint64_t seed, char *err,
                            size_t errlen);

/** @brief Where a subject first leaves its twin (lowp_reveal_diff). */
typedef struct {
  size_t cls;               /**< the output's class */
  size_t node;              /**< the node (id n + k in the class tree) */
  char what[96];            /**< "an addition of 2 operands in fp32 (rne)" */
  size_t kids;              /**< its inputs (partial sums and terms) */
  size_t n_terms, first_term, last_term; /**< the terms under it */
  double expected, got;     /**< its terms alone summed by the twin, by the subject */
  size_t calls, rounds;
} lowp_reveal_diff_t;

/**
 * @brief The first node of the twin's tree at which subject s differs, for
 * output o (flat index into output 0 of p, any batch) of inputs in: the
 * node whose terms alone the subject sums differently from the twin while
 * each of its inputs agrees (lib/check/reveal_diff.c: restricted probes,
 * batched, descending from the root).
 * @return LOWP_OK; LOWP_EINVAL (tw does not fit p, o has no tree, or the
 *         output agrees with the twin: err says so); the subject's status.
 */
int lowp_reveal_diff(lowp_reveal_diff_t *r, const lowp_reveal_t *tw, const lowp_subject_t *s,
                     const lowp_problem_t *p, const double *const *in, size_t o, char *err, size_t errlen);

/** @brief One line: "first differing node: 4130 of class 0 (...) over 32 terms ...". */
void lowp_reveal_diff_str(char *buf, size_t len, const lowp_reveal_diff_t *r);

/** @brief Sentence for a conversion: "B is rounded to fp16 (rne) before use". */
void lowp_reveal_conv_str(char *buf, size_t len, const lowp_reveal_t *r, const lowp_problem_t *p,
                          int which);

#endif
