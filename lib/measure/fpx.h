/* lowp_fpx -- floating-point exceptions: classification of a rounding, and a trace of the first of each kind */
#ifndef LOWP_FPX_H
#define LOWP_FPX_H

/*
 * Every exception lowp reports comes from one pure function,
 * lowp_fpx_classify: the format, the rounding mode, the exact value that was
 * rounded and the result decide the kinds (IEEE 754-2019 section 7, with the
 * formats without infinity or NaN of the OCP 8-bit and MX specifications).
 * The hook points (traced rounding here, the tensor-core block FMA, the
 * accumulators of kernels/cpu/gemm_acc.c, the tensor-core GEMM, qdq scales)
 * compute the exact value they already know and call it.
 *
 * The exact value is passed as a binary64 number x rounded toward zero plus
 * a sticky flag (nonzero bits below x's last bit): every comparison the
 * classification makes (with xmax, the midpoint above it, xmin and the
 * midpoint below it) is decided exactly by that pair for every format of
 * precision <= 52. For fp64 targets those midpoints are not binary64 values;
 * there the result decides (overflow under rne/rna: an infinite result;
 * tininess: the truncated value's own comparison with xmin). A finite exact
 * value of 2^1024 or more is passed as x = +-inf with sticky = 1
 * (lowp_fpx_exact_acc does this).
 *
 * Underflow is IEEE 754's: the result is tiny and inexact, tininess
 * detected AFTER rounding (the rounding of the exact value to p bits with an
 * unbounded exponent is below xmin), as x86 SSE/AVX and MPFR with
 * mpfr_subnormalize detect it, so the counts are comparable with both.
 * Overflow is also IEEE's: the rounding with an unbounded exponent exceeds
 * xmax (so fp16's 65519 under rne does not overflow, 65520 does, and RTZ's
 * 70000 -> 65504 does, as a saturation). Stochastic rounding has no unbounded
 * rounding to compare with: there exact values beyond xmax overflow and
 * exact values below xmin are tiny.
 *
 * "First" is the occurrence with the smallest sequence number, a pure
 * function of the indices in lowp's evaluation order (e.g. for a GEMM output
 * e = i n + j and step l: e (2k + 1) + 2l + 1), so per-thread traces merge by
 * minimum into the same trace for any thread count.
 */

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

/* ------------------------------------------------------------------ kinds */

/** @brief Kinds of exception. Explicit values: they index arrays and appear
    in JSON by name (lowp_fpx_kind_name). */
typedef enum {
  LOWP_FPX_INVALID = 0,   /**< a NaN produced from non-NaN operands (inf - inf, 0 x inf, 0/0) */
  LOWP_FPX_NAN_PROP = 1,  /**< a NaN result from a NaN operand */
  LOWP_FPX_DIVZERO = 2,   /**< an exact infinity from finite operands (x/0) */
  LOWP_FPX_OVF_INF = 3,   /**< overflow to infinity */
  LOWP_FPX_OVF_NAN = 4,   /**< overflow (or an infinity) to NaN: formats without inf, e4m3 non-saturating */
  LOWP_FPX_SATURATE = 5,  /**< overflow (or an infinity) clamped to +-xmax */
  LOWP_FPX_UNF_SUB = 6,   /**< underflow to a nonzero value (subnormal, or xmin) */
  LOWP_FPX_UNF_ZERO = 7,  /**< underflow to zero */
  LOWP_FPX_SCALE = 8      /**< a scale that is NaN, infinite, or clamped to its format's range */
} lowp_fpx_kind_t;
#define LOWP_FPX_NKINDS 9
#define LOWP_FPX_BIT(k) (1u << (k))
/** @brief Groups (rules name them): overflow = inf | NaN | saturation. */
#define LOWP_FPX_OVERFLOW (LOWP_FPX_BIT(LOWP_FPX_OVF_INF) | LOWP_FPX_BIT(LOWP_FPX_OVF_NAN) | LOWP_FPX_BIT(LOWP_FPX_SATURATE))
#define LOWP_FPX_UNDERFLOW (LOWP_FPX_BIT(LOWP_FPX_UNF_SUB) | LOWP_FPX_BIT(LOWP_FPX_UNF_ZERO))
#define LOWP_FPX_ALL ((1u << LOWP_FPX_NKINDS) - 1)

/** @brief What the operands were: flags for lowp_fpx_classify. */
#define LOWP_FPX_IN_NAN 1u     /**< some operand was a NaN */
#define LOWP_FPX_IN_DIVZERO 2u /**< a division of a finite nonzero value by zero */
/** the operation lost nonzero bits before the rounding classified (a tensor-core
    block's alignment cut): its result is inexact even where x is exactly y */
#define LOWP_FPX_IN_INEXACT 4u

/** @brief The operation of an event. */
typedef enum {
  LOWP_FPX_OP_ROUND = 0, /**< conversion of a value (cast, tensor scan) */
  LOWP_FPX_OP_ADD,       /**< s + p rounded */
  LOWP_FPX_OP_MUL,       /**< a x b rounded */
  LOWP_FPX_OP_FMA,       /**< s + a x b rounded once */
  LOWP_FPX_OP_DIV,       /**< a / b rounded */
  LOWP_FPX_OP_BFMA,      /**< one tensor-core block FMA */
  LOWP_FPX_OP_SCALE,     /**< a scale computed from an amax */
  LOWP_FPX_OP_OUTPUT,    /**< an output of a black-box subject */
  LOWP_FPX_OP_EXP        /**< exp(a) rounded once (an elementary function) */
} lowp_fpx_op_t;
#define LOWP_FPX_NOPS 9

/** @brief One occurrence. Operand and result bits are binary64 bits (every
    lowp format's values are binary64 values). */
typedef struct {
  uint64_t seq;        /**< sequence number in lowp's evaluation order; UINT64_MAX: none */
  int64_t i, j, k;     /**< indices: output row, column, reduction step (-1: none) */
  lowp_fpx_op_t op;    /**< the operation */
  uint64_t a, b, c;    /**< operand bits (a: first operand / accumulator) */
  uint64_t r;          /**< result bits */
  double exact;        /**< the exact value rounded, truncated to binary64 */
  int sticky;          /**< nonzero bits of the exact value below exact's last bit */
  int inherent;        /**< 1: the exact reference at this point raises it too;
                            0: spurious (the exact reference is finite, in range);
                            -1: no reference at this point */
} lowp_fpx_event_t;

/** @brief A trace: counts per kind and the first occurrence of each. */
typedef struct lowp_fpx_trace_s {
  uint64_t count[LOWP_FPX_NKINDS];
  uint64_t inherent[LOWP_FPX_NKINDS];  /**< of count, how many were inherent */
  uint64_t spurious[LOWP_FPX_NKINDS];  /**< of count, how many were spurious */
  lowp_fpx_event_t first[LOWP_FPX_NKINDS];
  uint64_t ops;                        /**< operations traced */
} lowp_fpx_trace_t;

/* ------------------------------------------------------------ functions */

/** @brief "invalid", "nan_propagated", "divzero", "overflow_inf",
    "overflow_nan", "saturation", "underflow_subnormal", "underflow_zero", "scale". */
const char *lowp_fpx_kind_name(lowp_fpx_kind_t k);
/** @brief "round", "add", "mul", "fma", "div", "bfma", "scale", "output", "exp". */
const char *lowp_fpx_op_name(lowp_fpx_op_t op);

/**
 * @brief The kinds a name stands for: a kind's name, or a group
 * ("overflow", "underflow", "nan" = invalid | nan_propagated, "all").
 * @return a mask of LOWP_FPX_BIT(kind), 0 for an unknown name.
 */
unsigned lowp_fpx_mask_parse(const char *name);

/**
 * @brief The exceptions of one rounding: a pure function.
 * @param f    the target format      @param rnd the mode used
 * @param x    the exact value, rounded toward zero to binary64 (NaN, +-inf
 *             when the exact value is one)
 * @param sticky 1 when nonzero bits of the exact value lie below x's last bit
 * @param y    the result the rounding gave (NaN for NaN)
 * @param in   LOWP_FPX_IN_* flags describing the operands
 * @return a mask of LOWP_FPX_BIT(kind); 0 for none.
 */
unsigned lowp_fpx_classify(const lowp_format_t *f, lowp_rounding_t rnd, double x,
                           int sticky, double y, unsigned in);

/**
 * @brief Whether an exact reference value at the point of an exception of
 * kind k in format f raises that kind's group too (inherent): NaN kinds a
 * NaN reference; divzero an infinite one; overflow kinds one that overflows
 * when rounded to f in mode rnd (IEEE: its rounding with an unbounded
 * exponent exceeds xmax; fp16, rne: 65519 does not, 65520 does; for p > 52
 * under rne or rna, any reference above xmax); underflow kinds one that
 * underflows when rounded (tiny after rounding and inexact: an exact
 * subnormal does not); scale one not finite or out of range. Same
 * (x, sticky) convention as lowp_fpx_classify.
 */
int lowp_fpx_inherent(const lowp_format_t *f, lowp_rounding_t rnd, lowp_fpx_kind_t k, double x,
                      int sticky);

/** @brief Kinds of a scale: LOWP_FPX_SCALE when the exact scale (x, sticky)
    is NaN or infinite, or lies outside [xmins, xmax] of the scale format f,
    or the scale y that was used is NaN; else 0. */
unsigned lowp_fpx_classify_scale(const lowp_format_t *f, double x, int sticky, double y);

/** @brief The exact product a b as lowp_fpx_classify takes it: truncated
    to binary64 (*x), sticky, +-inf with sticky at 2^1024 or more; NaN for
    a NaN or 0 x inf. Costs one fma where the product is a normal binary64
    number. */
void lowp_fpx_exact_mul(double *x, int *sticky, double a, double b);

/** @brief The exact sum a + b, likewise (TwoSum where the binary64 sum is
    finite: Knuth, TAOCP vol. 2, 4.2.2). */
void lowp_fpx_exact_add(double *x, int *sticky, double a, double b);

struct lowp_acc_s;
/** @brief The exact value held by an exact accumulator (exact/acc.h) as
    lowp_fpx_classify takes it: truncated to binary64, sticky, and +-inf
    with sticky for a finite value of 2^1024 or more. */
void lowp_fpx_exact_acc(double *x, int *sticky, struct lowp_acc_s *a);

/** @brief An empty trace. */
void lowp_fpx_init(lowp_fpx_trace_t *t);
/** @brief An event with no occurrence (seq UINT64_MAX, indices -1, inherent -1). */
void lowp_fpx_event_init(lowp_fpx_event_t *e);
/** @brief Count the kinds of mask for ev and keep ev as the first of each
    kind where its seq is smaller. ev->inherent says which column counts it. */
void lowp_fpx_record(lowp_fpx_trace_t *t, unsigned mask, const lowp_fpx_event_t *ev);
/** @brief dst += src (counts), firsts by minimum seq. */
void lowp_fpx_merge(lowp_fpx_trace_t *dst, const lowp_fpx_trace_t *src);
/** @brief The kinds with a nonzero count. */
unsigned lowp_fpx_kinds(const lowp_fpx_trace_t *t);
/** @brief The kind with the smallest first seq among mask, or -1 if none occurred. */
int lowp_fpx_first_kind(const lowp_fpx_trace_t *t, unsigned mask);

/** @brief binary64 bits of v. */
uint64_t lowp_fpx_bits(double v);

/**
 * @brief Round x to f like lowp_round_f64 and trace it (t may be NULL: then
 * exactly lowp_round_f64). The event has op round, indices (i, -1, -1) and
 * sequence seq; a conversion's exceptions are inherent (its exact value is
 * the input).
 * @return as lowp_round_f64.
 */
int lowp_fpx_round_f64(lowp_fpx_trace_t *t, uint64_t seq, int64_t i, double *y,
                       double x, const lowp_format_t *f, const lowp_policy_t *pol,
                       lowp_rounding_t rnd);

/**
 * @brief lowp_round_array_f64 (same bits) with each conversion traced as
 * lowp_fpx_round_f64 with sequence and index seq0 + i (t NULL: untraced).
 * Results strictly inside (xmin, xmax) cost one comparison.
 * @return as lowp_round_array_f64.
 */
int lowp_fpx_round_array_f64(lowp_fpx_trace_t *t, uint64_t seq0, double *y, const double *x,
                             size_t n, const lowp_format_t *f, const lowp_policy_t *pol,
                             lowp_rounding_t rnd);

/**
 * @brief One traced addition or product: *y = round(a + b) or round(a b) to f
 * (lowp_exact_add2/mul2, the accumulators' building blocks), classified
 * from the exact value, whose own exceptions are inherent. where (NULL:
 * none) gives the event's sequence and indices. t may be NULL (then exactly
 * lowp_exact_add2/mul2).
 * @return the ternary value, as lowp_exact_add2.
 */
int lowp_fpx_op2(lowp_fpx_trace_t *t, const lowp_fpx_event_t *where, lowp_fpx_op_t op,
                 double *y, double a, double b, const lowp_format_t *f,
                 const lowp_policy_t *pol, lowp_rounding_t rnd, uint64_t index);

/**
 * @brief *y = a / b correctly rounded to f (the exact quotient through MPFR,
 * rounded once), traced into t (NULL: not traced): division by zero of a
 * finite nonzero a is divzero; 0/0 and inf/inf invalid.
 * @return the ternary value.
 */
int lowp_fpx_div(lowp_fpx_trace_t *t, const lowp_fpx_event_t *where, double *y, double a,
                 double b, const lowp_format_t *f, const lowp_policy_t *pol,
                 lowp_rounding_t rnd);

/**
 * @brief The evaluation behind lowp_fpx_op2 without recording: *y as
 * lowp_exact_add2/mul2 (*tern its ternary value, tern may be NULL); when the rounding raised anything, fills ev's op,
 * operand and result bits, exact and sticky (the rest is the caller's:
 * sequence, indices, inherent) and returns the kinds; else 0.
 */
unsigned lowp_fpx_op2_eval(lowp_fpx_event_t *ev, int *tern, double *y, lowp_fpx_op_t op,
                           double a, double b, const lowp_format_t *f,
                           const lowp_policy_t *pol, lowp_rounding_t rnd, uint64_t index);

/**
 * @brief The division behind lowp_fpx_div without recording: *y as
 * lowp_fpx_div gives it (*tern its ternary value; tern may be NULL); when
 * the rounding raised anything, fills ev's op, operand and result bits,
 * exact and sticky and returns the kinds; else 0.
 */
unsigned lowp_fpx_div_eval(lowp_fpx_event_t *ev, int *tern, double *y, double a, double b,
                           const lowp_format_t *f, const lowp_policy_t *pol,
                           lowp_rounding_t rnd);

/**
 * @brief One rounding whose exact value the caller computed (an elementary
 * function, a product formed exactly elsewhere): classifies (x, sticky) ->
 * y in f under rnd (lowp_fpx_classify, operand flags in) and, when it
 * raised anything, fills ev's op, operands a and b, result, exact and
 * sticky (the rest is the caller's) and returns the kinds; else 0.
 */
unsigned lowp_fpx_eval(lowp_fpx_event_t *ev, lowp_fpx_op_t op, double a, double b, double x,
                       int sticky, double y, const lowp_format_t *f, lowp_rounding_t rnd,
                       unsigned in);

/**
 * @brief Record an evaluated event (mask from one of the _eval functions)
 * with its inherent flag decided against the exact reference of the whole
 * computation at that point: ref (truncated to binary64, ref_sticky its
 * sticky bit, lowp_fpx_classify's convention), or, with ref NULL, against
 * the operation's own exact value (ev->exact, ev->sticky), each rounded to f
 * in rnd, the mode of the operation (lowp_fpx_inherent). t->ops is the
 * caller's. Does nothing for mask 0.
 */
void lowp_fpx_record_ref(lowp_fpx_trace_t *t, unsigned mask, lowp_fpx_event_t *ev,
                         const lowp_format_t *f, lowp_rounding_t rnd, const double *ref,
                         int ref_sticky);

#define LOWP_FPX_HIST 2112 /**< histogram bins: fp64's emin - p .. emax + 2 */

/** @brief A scan of one tensor against a format. */
typedef struct {
  lowp_fpx_trace_t trace;    /**< the conversion of each element, seq = index */
  uint64_t n;                /**< elements */
  uint64_t nan_in, inf_in;   /**< elements already NaN / infinite */
  uint64_t zero_in;          /**< elements exactly zero */
  int hist_lo;               /**< exponent of hist[0] */
  uint64_t hist[LOWP_FPX_HIST]; /**< finite nonzero elements by floor(log2|x|),
                                  from hist_lo (clamped into the first and last bin) */
  int hist_n;                /**< bins used */
  int64_t first_bad;         /**< index of the first element with any exception or
                                  already NaN/inf, -1 if none */
} lowp_fpx_scan_t;

/**
 * @brief Convert each element of x to f (as a cast would) and trace it: the
 * counts, the first index of each kind, which elements were already
 * exceptional, and the histogram of exponents against f's range
 * (hist_lo = emin - p, hist_n bins up to emax + 2, clamped).
 * @return LOWP_OK; LOWP_EINVAL (NULL); LOWP_EFORMAT; LOWP_EROUND.
 */
int lowp_fpx_scan(lowp_fpx_scan_t *s, const double *x, size_t n, const lowp_format_t *f,
                  const lowp_policy_t *pol, lowp_rounding_t rnd);

/**
 * @brief Black-box subjects: the first exceptional output. *first is the
 * smallest index of y (n outputs, row-major, values of format f) that is NaN
 * or infinite, or -1. For each of ninputs inputs (x[q], nx[q] elements)
 * bad_in[q] is set to 1 if it holds a NaN or an infinity (the output's
 * exception may then be propagated, not produced). kinds gets the kinds of
 * that output: nan_propagated where an input held a NaN, invalid for a NaN
 * where none did, overflow_inf for an infinity where no input held an
 * infinity (a NaN input propagates as NaN, not as an infinity), none for an
 * infinity where one did (propagated).
 * @return LOWP_OK; LOWP_EINVAL.
 */
int lowp_fpx_outputs(int64_t *first, unsigned *kinds, int *bad_in, const double *y,
                     size_t n, const double *const *x, const size_t *nx, size_t ninputs);

#endif
