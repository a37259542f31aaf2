/* lowp_check_result_json -- results and verdicts of the pipeline as cJSON objects */
#ifndef LOWP_RESULT_JSON_H
#define LOWP_RESULT_JSON_H

#include <cjson/cJSON.h>

#include "check/pipeline.h"

/** @brief Add a number; NaN and infinities as the strings "nan", "inf", "-inf". */
void lowp_json_num(cJSON *obj, const char *key, double v);

/** @brief Element i of output j: output, index ("C[3][17]"), flat, got,
    exact (and their %a), and the summary of the inputs feeding it (in non-NULL). */
cJSON *lowp_check_element_json(const lowp_check_result_t *r, const lowp_check_inputs_t *in,
                               int j, size_t i);

/** @brief {"gamma": {value, vacuous, used, name}, "prob": .., "model": ..}: the
    bounds of the subject's declared method, and those its bound rules used
    (so a tensor subject's gamma rule fills "gamma"). */
cJSON *lowp_check_bounds_json(const lowp_check_result_t *r, const lowp_verdict_t *v, int n_v);

/** @brief One verdict: rule, pass, measured, limit, percent, vacuous, message,
    and "worst": the element of the rule's own metric (index, got, exact). */
cJSON *lowp_check_verdict_json(const lowp_check_result_t *r, const lowp_check_inputs_t *in,
                               const lowp_verdict_t *v);

/** @brief A result (op, subject, formats, dims, metrics incl. sqnr_db and
    cosine, outputs with their worst elements, bounds) with its verdicts and
    "verdict": "pass" | "fail". in may be NULL (no input summaries). */
cJSON *lowp_check_result_json(const lowp_check_result_t *r, const lowp_check_inputs_t *in,
                              const lowp_verdict_t *v, int n_v);

#endif
