/* lowp_check_same -- measure another subject on the same problem and inputs, reusing the exact references */
#ifndef LOWP_CHECK_SAME_H
#define LOWP_CHECK_SAME_H

#include <stddef.h>

#include "check/pipeline.h"

/**
 * @brief lowp_check_measure for subject s on the problem and inputs of ref
 * (a result lowp_check_measure filled for another subject on `in`): the
 * exact references (exact, exact_out, exact_data, absab) are ref's, borrowed
 * (r->out[j].borrowed: read-only, not copied: at n = 4096 four arrays of
 * 128 MB per subject), instead of being computed again; so r must be freed
 * (or no longer read) before ref is. Then s runs and lowp_check_finish
 * gives the metrics and the bounds of s's declared method. Same numbers as
 * lowp_check_measure(r, &ref->problem, s, in, ...), without the exact work:
 * for comparing many subjects on one set of inputs (an experiment's curves).
 * @param[out] r filled (free with lowp_check_result_free, also on failure)
 * @return LOWP_OK; the subject's status; LOWP_EINVAL; LOWP_ESHAPE; LOWP_ENOMEM.
 */
int lowp_check_measure_same(lowp_check_result_t *r, const lowp_check_result_t *ref,
                            const lowp_subject_t *s, const lowp_check_inputs_t *in,
                            const lowp_check_opts_t *opts, char *err, size_t errlen);

#endif
