/* lowp_capi -- the flat C API of liblowp.so that the Python binding (python/lowp) calls */
#ifndef LOWP_CAPI_H
#define LOWP_CAPI_H

/*
 * Three calls, plain C types, JSON text in and out, so that a ctypes layer
 * holds no struct layout and no numerics (python/lowp is a thin binding):
 *
 *   lowp_capi_check  the pipeline (lib/check/pipeline.h) on arrays the caller
 *                    computed: inputs, outputs, optionally a reference
 *                    subject's outputs; rules in the spec's syntax
 *                    (docs/check-spec.schema.json); returns the result as
 *                    JSON (lowp_check_result_json)
 *   lowp_capi_tol    lowp_tol (lib/check/tol.h) as JSON
 *   lowp_capi_free   frees a returned string
 *
 * The description of a check (JSON object), read as strictly as a spec
 * (lowp_spec_json: valid UTF-8, no NUL, no NaN/Infinity, whose key is
 * named) and by the spec's own parser of a check (lowp_spec_desc_parse), so
 * that the Python binding refuses what lowp check refuses:
 *   "op": "gemm", "dims": {"batch", "m", "n", "k"} (a spec's "shape":
 *   integers in [1, 2^30], missing: 1; without "dims", from "shapes"),
 *   "in": "fp16" or ["fp16", "bf16"] (one per input), "out": "fp16",
 *   "order": "recursive|pairwise|blocked:B|splitk:S|kahan|fma" and/or "acc":
 *   FORMAT (the subject's declared accumulation, for the bounds), or
 *   "model": "h100,promote=128" (a tensor-core model), "prob": P in (0, 1)
 *   (default 0.99: the reported prob bound's and every {"bound": "prob"}
 *   rule's that names none), "eps": 1e-5 (layernorm, rmsnorm),
 *   "reduction": "none"|"mean" (xent), "subject": "a name", "reference":
 *   "a name" (names as a spec's check names), "absent": [1, 2] (outputs not
 *   produced), "rules": [ ... ] (a non-empty array in the spec's syntax;
 *   "vs_reference": "outputs" compares with the reference outputs given).
 * The arrays' shapes: "shapes" (each input), "out_shapes" (each output,
 * null for one not given), "ref_shapes" (with ref): lowp_capi_check reads
 * exactly the elements those shapes hold, and only after checking each
 * against the problem's shape (lowp_op_shape_matches: leading axes of size
 * 1 aside, equal; a transposed or shorter array is refused). Values that
 * are not values of their declared format are refused (LOWP_EFORMAT).
 * A bound rule whose bound is vacuous is refused (LOWP_EPARSE) unless it
 * says "accept_vacuous": true; a rule whose limit is infinite or NaN fails
 * (lowp_check_rule_eval fails closed).
 *
 * The query of a tolerance: "op", "k" (an integer in [1, 2^40]), "input",
 * "acc", "out", "method" (an order as above, or "model:PRESET[,key=value...]"
 * for dot, gemv, gemm), "confidence" (absent or 1: worst case; else in
 * (0, 1)), "scale" (finite, > 0); no other key, none twice, no NaN. Every
 * result passes lowp_tol's one check: finite and >= 0, or vacuous.
 */

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "check/tol.h"

/**
 * @brief Check arrays: in[i] holds lowp_op_shape's count of input i (values
 * of its format), out[j] and ref[j] (ref may be NULL) of output j.
 * @param[out] json  on LOWP_OK, the result (free with lowp_capi_free)
 * @return LOWP_OK; LOWP_EPARSE / LOWP_EINVAL / LOWP_EFORMAT / LOWP_ESHAPE
 *         (err says which entry); lib/exact's status.
 */
int lowp_capi_check(char **json, const char *desc, const double *const *in,
                    const double *const *out, const double *const *ref, char *err,
                    size_t errlen);

/** @brief A derived tolerance as JSON (see the top of this file). */
int lowp_capi_tol(char **json, const char *query, char *err, size_t errlen);

/** @brief A data-aware tolerance (lowp_tol_data): the query of
    lowp_capi_tol with "shapes" (or "dims") of the inputs in[] instead of "k";
    atol (and rtol, may be NULL) get count = lowp_op_shape's count of output 0
    values; json the loosest element's tolerance with "data_aware": true. */
int lowp_capi_tol_data(char **json, const char *query, const double *const *in, double *atol,
                       double *rtol, size_t count, char *err, size_t errlen);

/** @brief The exact result (output 0 of a described problem: "op", "in",
    "shapes" or "dims", "eps", "reduction"), rounded once to binary64, or,
    where the description names "out", once to that format (rne; overflow
    to infinity where the format has one), into out (count values:
    lowp_op_shape's count of output 0). */
int lowp_capi_exact(const char *desc, const double *const *in, double *out, size_t count,
                    char *err, size_t errlen);

/** @brief How many of x[0..n) are not values of format (a name or a
    format string as in "in"; NaN counts as a value): *n_bad, and the index
    of the first in *first (0 when none). lowp_capi_tol_data and
    lowp_capi_exact refuse inputs that are not values of their declared
    formats (LOWP_EFORMAT) as lowp_capi_check does; this checks an output
    (Python's lowp.assert_close) the same way. */
int lowp_capi_in_format(size_t *n_bad, size_t *first, const char *format, const double *x,
                        size_t n, char *err, size_t errlen);

/** @brief The inputs and outputs of a described problem, as JSON
    {"inputs": [names], "outputs": [names], "shapes": [[..], ..] (inputs then
    outputs), "index": [whether each input holds integer indices]}. */
int lowp_capi_shapes(char **json, const char *desc, char *err, size_t errlen);

/** @brief The query of lowp_capi_tol parsed (lowp tol builds it from its
    options the same way). */
int lowp_capi_tol_query(lowp_tol_query_t *q, const char *query, char *err, size_t errlen);

/**
 * @brief lowp tol's command line (argv[0] the command, then OP and the
 * options of `lowp tol --help`, "--key value" or "--key=value", each at
 * most once) as the query of lowp_capi_tol, numbers read with the grammar
 * of format/number.h; the query then goes through lowp_capi_tol_query like
 * Python's (lib/check/tol_args.c).
 * @param[out] query  on LOWP_OK without help: the query (cJSON_Delete it)
 * @param[out] help   1 when --help or -h was given (nothing else read after)
 * @return LOWP_OK; LOWP_EPARSE (err: one line); LOWP_ENOMEM; LOWP_EINVAL.
 */
int lowp_tol_args(cJSON **query, int *as_json, int *help, int argc, char *const *argv,
                  char *err, size_t errlen);

/** @brief lowp_tol's result as a cJSON object (lowp tol --json prints it). */
cJSON *lowp_tol_json(const lowp_tol_t *t, const lowp_tol_query_t *q);

/** @brief Decode n bit patterns of width bytes (1, 2, 4: little-endian
    host order) of a format (bf16, e4m3, e5m2, ...) to binary64 (lowp_decode):
    torch's bf16 and fp8 tensors reach the pipeline by their bits. */
int lowp_capi_decode(double *out, const void *bits, size_t n, int width, const char *format,
                     char *err, size_t errlen);

/**
 * @brief Reveal a caller's kernel (lib/check/reveal.h) through a callback:
 * fn(ctx, out, in, dims) computes the problem's outputs out[j] from the
 * inputs in[i] (binary64 arrays of lowp_op_shape's counts for dims =
 * {batch, m, n, k}) and returns 0, or nonzero when it failed. desc: "op"
 * (sum, dot, gemv, gemm), "dims" (or "shapes"), "in", "out" as lowp_capi_check's,
 * and "seed" (integer, default 1), "validate" (outputs compared per class,
 * default lowp_reveal's), "max_elems" (input elements per call, default 2^22).
 * @param[out] json  lowp_reveal_to_json's text (free with lowp_capi_free)
 * @return LOWP_OK (a nondeterministic kernel is a result); LOWP_EPARSE /
 *         LOWP_EINVAL (err says which key); LOWP_EUNSUPPORTED (err says why);
 *         LOWP_EIO (the callback failed).
 */
typedef int (*lowp_capi_fn)(void *ctx, double *const *out, const double *const *in, const size_t *dims);
int lowp_capi_reveal(char **json, const char *desc, lowp_capi_fn fn, void *ctx, char *err, size_t errlen);

/** @brief lowp_capi_reveal of a plugin kernel (include/lowp_plugin.h):
    library path, kernel (NULL: the table's only entry of the operation),
    each call in a child process as lowp check runs plugins. */
int lowp_capi_reveal_plugin(char **json, const char *desc, const char *path, const char *kernel, char *err,
                            size_t errlen);

/** @brief The twin of a revelation (lowp_capi_reveal's or lowp reveal
    --save's JSON) on new inputs of the problem desc describes (any batch;
    the revealed shape otherwise): out gets count = output 0's values. */
int lowp_capi_twin(double *out, size_t count, const char *reveal_json, const char *desc,
                   const double *const *in, char *err, size_t errlen);

/** @brief capi.c's parser of a description (not public: capi_reveal.c
    shares it): keys NULL for lowp_capi_check's extra keys. */
struct lowp_spec_check_s;
int lowp__capi_desc(cJSON **d, struct lowp_spec_check_s *ck, lowp_problem_t *p, const char *desc,
                    int need_rules, const char *const *keys, char *err, size_t errlen);

/** @brief Free a string returned by lowp_capi_*. */
void lowp_capi_free(char *p);

/* Block-scaled formats for Python (lib/check/capi_block.c): FORMAT is a
   lowp_bsformat_parse string ("mxfp8_e4m3", "nvfp4:nvfp4", "elem=..");
   arrays are row-major rows x cols, blocks along the rows. Each returns a
   status with a message in err. */
/** @brief block size, stored scale bytes, element bits, 1 if a tensor scale. */
int lowp_capi_bs_info(int *block, int *scale_bytes, int *elem_bits, int *tensor, const char *format,
                      char *err, size_t errlen);
/** @brief lowp_bs_quantize on fp32 x; q rows*cols, s rows*blocks, *ts. */
int lowp_capi_bs_quantize(double *q, double *s, double *ts, const float *x, size_t rows, size_t cols,
                          const char *format, char *err, size_t errlen);
/** @brief lowp_bs_dequantize. */
int lowp_capi_bs_dequantize(double *y, const double *q, const double *s, double ts, size_t rows,
                            size_t cols, const char *format, char *err, size_t errlen);
/** @brief lowp_bs_scales_relayout of items of size bytes between the
    compact layout and layout ("compact", "128x4"); *slots: the slots of
    the layout (dst NULL: only that). */
int lowp_capi_bs_relayout(void *dst, const void *src, size_t size, size_t rows, size_t nb, const char *layout,
                          int to_layout, size_t *slots, char *err, size_t errlen);
/** @brief lowp_bsformat_row_bytes of format (its packing: fp6 with :dense 4 values in 3 bytes). */
int lowp_capi_bs_row_bytes(size_t *bytes, size_t cols, const char *format, char *err, size_t errlen);
/** @brief lowp_bs_pack (unpack = 0) or lowp_bs_unpack (unpack = 1). */
int lowp_capi_bs_pack(uint8_t *elems, uint8_t *scales, double *q, double *s, size_t rows, size_t cols,
                      int unpack, const char *format, char *err, size_t errlen);

#endif
