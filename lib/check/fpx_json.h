/* lowp_fpx_json -- exception traces and tensor scans as JSON (lowp fpx, lowp gemm --fpx, Python) */
#ifndef LOWP_FPX_JSON_H
#define LOWP_FPX_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "format/format.h"
#include "measure/fpx.h"

/**
 * @brief A trace as JSON: {"ops": N, "first": KIND or null (the kind that
 * occurred first), "kinds": {KIND: {"count", "inherent", "spurious",
 * "first": {"seq", "i", "j", "k", "op", "a", "b", "c", "result", "exact",
 * "inherent"}}}} with only the kinds that occurred; operand and result
 * values as numbers (NaN and inf as the strings "nan", "inf", "-inf") and
 * their binary64 bits in hex ("a_bits", ...).
 * @return a new object (the caller deletes it), NULL when out of memory.
 */
cJSON *lowp_fpx_trace_json(const lowp_fpx_trace_t *t);

/**
 * @brief The first exception of a trace among the kinds of mask (the
 * smallest sequence number; lowp_fpx_first_kind), as an experiment reports
 * it: {"found": false} when none occurred, else {"found": true, "kind",
 * "op", "step" (the event's i; null when -1), "element" (j; null when -1),
 * "k" (null when -1), "seq", "result", "exact" (numbers, or "nan", "inf",
 * "-inf"), "inherent" (true / false / null: no reference), "spurious"
 * (the opposite; null likewise), "counts": {KIND: n} over every kind}.
 * @return a new object, NULL when out of memory.
 */
cJSON *lowp_fpx_first_json(const lowp_fpx_trace_t *t, unsigned mask);

/**
 * @brief The same as one line of text: "overflow_inf in exp at step 3,
 * element 7 (result inf, exact 65536.3): inherent (the exact value raises it
 * too)", or "none" when no kind of mask occurred.
 * @return the length written (snprintf's convention).
 */
int lowp_fpx_first_text(char *buf, size_t len, const lowp_fpx_trace_t *t, unsigned mask);

/** @brief A scan as JSON: the trace, "n", "nan_in", "inf_in", "zero_in",
    "first_bad" (-1 none), "format" and its exponent range, and
    "exponents": {"lo": E, "counts": [...]} trimmed to the used bins. */
cJSON *lowp_fpx_scan_json(const lowp_fpx_scan_t *s, const lowp_format_t *f);

/**
 * @brief Scan n values (C API for Python): query {"format": F, "rounding":
 * "rne", "overflow": "ieee"|"sat"}; *json the scan (lowp_capi_free).
 * @return LOWP_OK; LOWP_EPARSE / LOWP_EFORMAT / LOWP_EROUND (err says why);
 *         LOWP_ENOMEM.
 */
int lowp_capi_fpx_scan(char **json, const double *x, size_t n, const char *query, char *err,
                       size_t errlen);

/**
 * @brief A black-box subject's outputs (C API): the first output (of n,
 * row-major) that is NaN or infinite, its kinds, and which of the ninputs
 * inputs (in[q], nin[q] values) already held a NaN or an infinity.
 * *json: {"first": index or -1, "kinds": [...], "inputs_exceptional": [bools]}.
 * @return LOWP_OK; LOWP_EINVAL; LOWP_ENOMEM.
 */
int lowp_capi_fpx_outputs(char **json, const double *const *in, const size_t *nin,
                          size_t ninputs, const double *y, size_t n, char *err, size_t errlen);

#endif
