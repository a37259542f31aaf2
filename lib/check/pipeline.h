/* lowp_pipeline -- subject -> exact reference -> metrics and bounds -> rules -> verdicts */
#ifndef LOWP_PIPELINE_H
#define LOWP_PIPELINE_H

/*
 * The one measurement pipeline (docs/pipeline.md). Three steps, each usable
 * alone:
 *
 *   1. lowp_check_inputs_generate: seeded inputs for a problem (fp64 draws
 *      rounded rne to each input's format; the unrounded draws are kept as
 *      the "data" for the input/computation split; xent targets are
 *      uniform class indices). Deterministic whatever the thread count.
 *   2. lowp_check_measure: runs the subject on the inputs, the exact
 *      reference of the rounded inputs (and of the data when given), and
 *      fills a lowp_check_result_t: per output the errors (lib/measure),
 *      RMSE, the worst element, the split total = input rounding +
 *      computation in ulps of the output format, NaN/inf class
 *      disagreements, and for sums of products the bounds that fit the
 *      subject's declared method.
 *   3. lowp_check_rule_eval: one rule against a result -> a verdict (pass,
 *      measured, limit, share of the limit, vacuous flag, one-line message).
 *
 * lib/check depends on lib/exact, lib/measure, lib/model, lib/rng and
 * lib/format only; kernels/ and tools/ build subjects and call it.
 */

#include <stddef.h>
#include <stdint.h>

#include "check/op.h"
#include "check/subject.h"
#include "measure/measure.h"
#include "rng/dist.h"

/* ------------------------------------------------------------------ inputs */

/** @brief Inputs of one problem: n_in arrays of lowp_op_shape's counts. */
typedef struct {
  int n;                          /**< the operation's n_in */
  double *x[LOWP_OP_MAXIO];       /**< values of p->in[i] (owned) */
  double *data[LOWP_OP_MAXIO];    /**< unrounded originals, or NULL (owned) */
  size_t count[LOWP_OP_MAXIO];
} lowp_check_inputs_t;

/**
 * @brief Generate inputs: input i is lowp_dist_fill'ed at fp64 from
 * (seed, stream i + 1) and rounded rne to p->in[i]; data[i] keeps the fp64
 * draws (for inputs of at most 12 bits, rounded to fp32: see pipeline.c). Index inputs (xent target) are uniform integers in [0, n) drawn
 * from the same stream (uniform01 * n, floored). LOWP_DIST_CANCEL for gemm
 * uses lowp_dist_cancel_gemm per batch (no data: the inputs are exact).
 * @return LOWP_OK; LOWP_EINVAL; LOWP_ENOMEM; LOWP_EFORMAT.
 */
int lowp_check_inputs_generate(lowp_check_inputs_t *in, const lowp_problem_t *p,
                               const lowp_dist_t *d, uint64_t seed);

/**
 * @brief Take inputs from caller arrays (copied): x[i] values, data[i]
 * unrounded originals or NULL. Values of x that are not values of p->in[i]
 * are left as they are (the caller decides whether to round them).
 * @return LOWP_OK, LOWP_EINVAL, LOWP_ENOMEM.
 */
int lowp_check_inputs_copy(lowp_check_inputs_t *in, const lowp_problem_t *p,
                           const double *const *x, const double *const *data);

/** @brief Free inputs (safe on a zeroed struct). */
void lowp_check_inputs_free(lowp_check_inputs_t *in);

/**
 * @brief Input i of a block-scaled format (p->bin[i]): data (c fp32 values
 * in the operation's layout) quantized by the format's rule in blocks along
 * the reduction axis (A's rows, gemm's B down its columns) and dequantized
 * into x. @return LOWP_OK, LOWP_EINVAL (c is not input i's count),
 * LOWP_ENOMEM, or lowp_bs_quantize's status.
 */
int lowp_check_bs_qdq(double *x, const double *data, size_t c, const lowp_problem_t *p, int i);

/**
 * @brief lowp_check_bs_qdq's quantization itself: q (c element values) and
 * s (scales) in the blocked orientation, nbat matrices of rows x cols, rows
 * = A's m (gemm's B: its n, the matrix transposed), cols = the reduction
 * length k; s holds rows x ceil(cols / block) a matrix; ts[b] matrix b's
 * per-tensor scale (1 if the format has none; nbat = the batch for gemm's
 * B, else 1).
 */
int lowp_check_bs_quantize(double *q, double *s, double *ts, const double *data, size_t c, const lowp_problem_t *p,
                           int i);

/* ----------------------------------------------------------------- results */

/** @brief A bound of the backward error, for sums of products; for a row
    operation whose subject declares compute and acc, its derived tolerance
    (value: the rtol of the loosest row; used: the largest |c - x| / (atol +
    rtol |x|), at element row_where of output 0). */
typedef struct {
  int have;         /**< 1 when computed */
  double value;     /**< +inf: vacuous */
  double used;      /**< max backward error / value (0 when vacuous) */
  size_t row_where; /**< row operations: the element of used */
  char name[200];
  /** the constants of gamma and prob bounds (lowp_op_bound_units): the
      accumulation's u (2u for directed modes); prob: lambda and the
      probability the bound holds with. NaN where they do not apply. */
  double u, lambda, probability;
} lowp_check_bound_t;

/** @brief What one output of the subject measured. */
typedef struct {
  const char *name;        /**< the op's output name ("C", "y", "mean") */
  size_t count;
  double *got;             /**< the subject's output (owned) */
  double *exact;           /**< exact result of the rounded inputs, in fp64 (owned) */
  double *exact_out;       /**< the same rounded once to p->out (owned) */
  double *exact_data;      /**< exact result of the unrounded data, fp64, or NULL */
  double *exact_lo;        /**< for an output as wide as binary64 (sums of products): what
                                exact leaves out, exact + exact_lo the exact result
                                (lowp_op_exact_lo); NULL elsewhere */
  double *absab;           /**< |A||B| per element (sums of products), or NULL */
  lowp_errors_t err;       /**< got vs exact, ulps of p->out, bwd when absab */
  double rmse;             /**< root mean square of got - exact (finite elements) */
  double max_abs_exact;    /**< max |exact| over finite elements (scale for atol) */
  size_t worst;            /**< element with the largest ulp error (or the first
                                class mismatch); (size_t)-1 when none */
  /** the split, in ulps of p->out at the exact value, at the worst element:
      total = |got - exact(data)|, input = |exact(x) - exact(data)|,
      compute = |got - exact(x)| (so total <= input + compute). Without data:
      input = 0 and total = compute. */
  double ulp_total, ulp_input, ulp_compute;
  double max_ulp_input;    /**< max over elements of the input part */
  size_t n_class_mismatch; /**< elements whose NaN/+inf/-inf/finite class differs
                                from exact_out's */
  size_t first_class_mismatch;
  size_t n_not_in_format;  /**< got values that are not values of p->out */
  int absent;              /**< the subject did not produce it (subject.h):
                                got = exact_out, left out of metrics and rules */
  int borrowed;            /**< exact, exact_out, exact_data and absab are another
                                result's (lowp_check_measure_same): read-only,
                                not freed with this one */
  /** signal-to-quantization-noise ratio, 10 log10(sum x^2 / sum (got - x)^2)
      over finite elements (+inf when got equals exact, -inf when x is all 0
      and got is not); cosine similarity of got and exact (1 when both are 0) */
  double sqnr_db, cosine;
} lowp_check_output_t;

/** @brief Everything the pipeline measured for one problem and subject. */
typedef struct {
  lowp_problem_t problem;
  char subject[256];
  int n_out;
  lowp_check_output_t out[LOWP_OP_MAXIO];
  /** bounds on the backward error (sums of products with a known method) */
  lowp_check_bound_t gamma, prob, model;
  double max_ulp;          /**< largest ulp error over all outputs (special excluded) */
  double max_abs;
  double max_bwd;          /**< NaN for forward ops */
  double rmse;             /**< of the first output */
  double time_subject_s, time_exact_s;
} lowp_check_result_t;

/** @brief Options of lowp_check_measure. */
typedef struct {
  double prob;             /**< probability of the probabilistic bound (0: 0.99) */
  /** progress of the exact reference of the rounded inputs (the long
      step of a large GEMM): fn(ctx, done in [0, 1]); NULL fn for none */
  lowp_op_progress_t progress;
  /** sums of products: no |A||B| (absab NULL: no backward error, NaN; it
      costs one more exact product), for measurements that do not need it;
      nor exact_lo for an output as wide as binary64 (one more exact product
      too: its ulp errors then read up to half an ulp low) */
  int no_absab;
} lowp_check_opts_t;

/**
 * @brief Run subject s on inputs in and measure it against the exact
 * reference of p (see the top of this file).
 * @param[out] r   filled (free with lowp_check_result_free, also on failure)
 * @param[out] err one line on failure (subject's message, or the stage)
 * @return LOWP_OK; the subject's status (LOWP_EUNSUPPORTED, LOWP_EIO...);
 *         lib/exact's; LOWP_ENOMEM.
 */
int lowp_check_measure(lowp_check_result_t *r, const lowp_problem_t *p,
                       const lowp_subject_t *s, const lowp_check_inputs_t *in,
                       const lowp_check_opts_t *opts, char *err, size_t errlen);

/**
 * @brief Steps 3 and 4 of lowp_check_measure alone: the metrics and the
 * bounds of a result whose problem, outputs (got, exact, exact_out, absab)
 * are filled, as lowp_check_measure fills them. A caller that computes the
 * outputs in blocks of rows elsewhere (par/par.h: an MPI job) and gathers
 * them calls this on the whole result: same numbers as lowp_check_measure.
 * @return LOWP_OK; LOWP_EINVAL.
 */
int lowp_check_finish(lowp_check_result_t *r, const lowp_subject_t *s,
                      const lowp_check_opts_t *opts);

/** @brief Free a result (safe on a zeroed struct). */
void lowp_check_result_free(lowp_check_result_t *r);

/**
 * @brief The bound of kind k for the problem as subject s computes it
 * (its declared accumulation or model); an explicit accumulation or model
 * may override it (over_accum / over_model non-NULL).
 * @return as lowp_op_bound; LOWP_EUNSUPPORTED when the subject declares no
 *         method and none is given.
 */
int lowp_check_bound(lowp_check_bound_t *b, const lowp_problem_t *p, const lowp_subject_t *s,
                     lowp_bound_kind_t k, double prob, const lowp_accum_t *over_accum,
                     const lowp_tc_model_t *over_model, double max_bwd);

/* ------------------------------------------------------------------- rules */

/** @brief Rule kinds (spec names in brackets). */
typedef enum {
  LOWP_RULE_MAX_ULP = 0,     /**< {"max_ulp": L} */
  LOWP_RULE_BOUND = 1,       /**< {"bound": "gamma"|"prob"|"model", "fraction": F} */
  LOWP_RULE_VS_REF = 2,      /**< {"vs_reference": {...}, "factor": C, "metric": M} */
  LOWP_RULE_TOL = 3,         /**< {"rtol": R, "atol": A} or {"assert_close": "pytorch"} */
  LOWP_RULE_BASELINE = 4,    /**< {"baseline": METRIC, "growth": G} */
  LOWP_RULE_NAN_INF = 5,     /**< {"nan_inf": "match"} */
  LOWP_RULE_BITEXACT = 6,    /**< {"bitexact": {...}} */
  LOWP_RULE_SQNR = 7,        /**< {"sqnr_db": D}: SQNR >= D dB (torchao's gates) */
  LOWP_RULE_COSINE = 8,      /**< {"cosine": C}: cosine similarity >= C */
  LOWP_RULE_MISMATCH = 9,    /**< {"mismatch": N|"F%", "rtol": R, "atol": A} or with
                                  "assert_close": "pytorch": at most N elements (or a
                                  fraction F) outside atol + rtol |x| */
  LOWP_RULE_IN_FORMAT = 10,  /**< {"in_format": N}: at most N output values that are
                                  not values of the output format */
  LOWP_RULE_NO_EXC = 11      /**< {"no_exceptions": ["invalid", "overflow", ...]}: no
                                  output element shows those kinds (lib/check/rule_fpx.c) */
} lowp_rule_kind_t;

/** @brief Metrics a rule can name ("max_ulp", "max_abs", "rmse", "max_rel",
    "max_bwd", "mean_ulp"). */
typedef enum {
  LOWP_METRIC_MAX_ULP = 0,
  LOWP_METRIC_MAX_ABS = 1,
  LOWP_METRIC_RMSE = 2,
  LOWP_METRIC_MAX_REL = 3,
  LOWP_METRIC_MAX_BWD = 4,
  LOWP_METRIC_MEAN_ULP = 5
} lowp_metric_t;
#define LOWP_METRIC_COUNT 6

/** @brief "max_ulp", ... or NULL. */
const char *lowp_metric_name(lowp_metric_t m);
/** @brief Parse a metric name: LOWP_OK or LOWP_EINVAL. */
int lowp_metric_parse(lowp_metric_t *m, const char *name);
/** @brief The value of a metric in a result (NaN if it does not apply). */
double lowp_metric_value(const lowp_check_result_t *r, lowp_metric_t m);

/** @brief One acceptance rule, as data. */
typedef struct {
  lowp_rule_kind_t kind;
  double limit;                 /**< max_ulp L; bound fraction F; vs_ref factor C;
                                     baseline growth G */
  lowp_bound_kind_t bound;      /**< BOUND */
  double prob;                  /**< BOUND prob (0: 0.99) */
  int has_accum;                /**< BOUND: accumulation given in the rule */
  lowp_accum_t accum;
  int accum_given;              /**< BOUND: which parts of accum the rule gave:
                                     1 the order (and block, rnd, fma), 2 the
                                     format; the others come from the subject's
                                     declared accumulation when it has one
                                     (0 with has_accum: all of accum) */
  int has_model;                /**< BOUND: model given in the rule */
  lowp_tc_model_t model;
  int has_tree;                 /**< BOUND: the bound of a summation tree
                                     (model/tree.h: its deepest leaf's
                                     coefficient), resolved by tools/ from
                                     "order": "revealed" or {"tree": FILE} */
  double tree_bound;            /**< that bound (0: no tree; every error fails) */
  int tree_bits;                /**< the fewest significand bits of the subject's
                                     additions, as revelation saw them (0: not
                                     revealed); fewer than accum.acc's precision
                                     fails the rule whatever the error */
  int tree_prod_bits;           /**< the same for its rounded products (0: not
                                     revealed, or every product exact) */
  char tree_name[200];          /**< how it was found, for messages */
  lowp_metric_t metric;         /**< VS_REF (max_abs|rmse), BASELINE */
  double rtol, atol;            /**< TOL */
  int pytorch;                  /**< TOL, MISMATCH: PyTorch's assert_close defaults */
  int fraction;                 /**< MISMATCH: limit is a fraction of the elements */
  double floor;                 /**< VS_REF: limit = factor x theirs + floor
                                     (FlashAttention's 2x same-dtype reference + floor) */
  int vacuous_ok;               /**< BOUND: the spec accepts a vacuous bound
                                     ("accept_vacuous": true); lowp check and
                                     lowp.check refuse one without it, before any
                                     work (lowp_check_rule_eval itself passes it,
                                     flagged vacuous) */
  double baseline;              /**< BASELINE: the stored value (NaN: none) */
  unsigned fpx_mask;            /**< NO_EXC: the kinds refused (measure/fpx.h bits) */
  /** VS_REF and BITEXACT: the other subject's result on the same inputs
      (the caller runs it with lowp_check_measure) */
  const lowp_check_result_t *other;
} lowp_rule_t;

/**
 * @brief The bound a BOUND rule means for problem p and subject s: the
 * rule's model, or its order/format merged with the subject's declared
 * method (lowp_rule_t.accum_given). Callers can ask it before any work to
 * refuse a rule whose bound does not exist.
 * @return as lowp_check_bound.
 */
int lowp_check_rule_bound(lowp_check_bound_t *b, const lowp_rule_t *rule,
                          const lowp_problem_t *p, const lowp_subject_t *s, double max_bwd);

/** @brief The accumulation a BOUND rule means for subject s: the rule's
    order and format (the parts it gave, lowp_rule_t.accum_given) over the
    subject's declared method. @return 1 (acc set); 0 (neither declares one). */
int lowp_check_rule_accum(lowp_accum_t *acc, const lowp_rule_t *rule, const lowp_subject_t *s);

/** @brief The outcome of one rule. */
typedef struct {
  int pass;
  double measured, limit;
  double percent;               /**< 100 measured / limit; NaN when vacuous or limit 0 */
  int vacuous;                  /**< the bound does not exist (k u >= 1, ...) */
  size_t where;                 /**< element that decided it, or (size_t)-1: the
                                     worst element of the rule's own metric */
  int where_out;                /**< which output */
  char what[64];                /**< "max_ulp", "gamma bound", ... */
  lowp_check_bound_t bound;     /**< BOUND: the bound the rule used (have = 1) */
  int bound_kind;               /**< BOUND: its lowp_bound_kind_t */
  char msg[640];                /**< one line */
} lowp_verdict_t;

/**
 * @brief PyTorch's torch.testing.assert_close default (rtol, atol) for a
 * format: float16 (1e-3, 1e-5), bfloat16 (1.6e-2, 1e-5), float32
 * (1.3e-6, 1e-5), float64 (1e-7, 1e-7) (torch/testing/_comparison.py,
 * _DTYPE_PRECISIONS, PyTorch 1.13 - 2.x); other formats: by precision, the
 * entry of the nearest wider PyTorch dtype (fp8: bf16's / fp16's by width).
 */
void lowp_check_pytorch_tol(double *rtol, double *atol, const lowp_format_t *f);

/**
 * @brief Evaluate one rule on a result.
 * @return LOWP_OK (v filled); LOWP_EUNSUPPORTED (a bound that does not
 *         apply: v->msg says why; the caller reports it as a failure of
 *         the spec); LOWP_EINVAL.
 */
int lowp_check_rule_eval(lowp_verdict_t *v, const lowp_rule_t *rule,
                         const lowp_check_result_t *r, const lowp_subject_t *s);

/**
 * @brief Elements outside atol + rtol |x| (torch.isclose's test against the
 * exact result; NaN/inf agree when their classes match), over every present
 * output; *worst_q the largest |d| / (atol + rtol |x|) at (*wj, *wi).
 * @return the count of mismatched elements; *total the elements compared.
 */
size_t lowp_check_mismatch(const lowp_check_result_t *r, double rtol, double atol,
                           size_t *total, double *worst_q, int *wj, size_t *wi);

/** @brief The rules of lib/check/rules_field.c (SQNR, COSINE, MISMATCH);
    lowp_check_rule_eval calls it. */
int lowp_check_rule_eval_field(lowp_verdict_t *v, const lowp_rule_t *rule,
                               const lowp_check_result_t *r);

/** @brief A verdict that counts elements (limit 0): measured n, pass when
    none, where the first (pipeline.c; shared by lib/check's rule files). */
void lowp__check_verdict_count(lowp_verdict_t *v, size_t n, size_t first, int out);

/** @brief Evaluate a no_exceptions rule (lib/check/rule_fpx.c);
    lowp_check_rule_eval calls it. */
int lowp_check_rule_eval_fpx(lowp_verdict_t *v, const lowp_rule_t *rule,
                             const lowp_check_result_t *r);

/** @brief sqnr_db and cosine of an output (lib/check/metrics.c). */
void lowp_check_output_similarity(lowp_check_output_t *o);

/** @brief Index text of element i of output j: "C[3][17]", "y[0][2][5]", "loss". */
void lowp_check_index_str(char *buf, size_t len, const lowp_problem_t *p, int out_j,
                          size_t i);

/** @brief A short summary of the inputs feeding element i of output j:
    for sums of products the row/column's length and |x|_max; for row ops the
    row's min/max; elementwise the input value. */
void lowp_check_inputs_summary(char *buf, size_t len, const lowp_problem_t *p,
                               const lowp_check_inputs_t *in, int out_j, size_t i);

#endif
