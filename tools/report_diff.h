/* lowp report --diff -- compare two report folders (tools/ only) */
#ifndef LOWP_REPORT_DIFF_H
#define LOWP_REPORT_DIFF_H

#include <stddef.h>
#include <stdio.h>

/**
 * @brief Compare report folders a and b experiment by experiment (see
 * report_diff.c), writing what differs to out, each difference marked
 * expected (a row that depends on the machine: results.json
 * "environment_dependent") or UNEXPECTED.
 * @return 0 no unexpected difference, 1 some, 2 bad input (err says why;
 *         nothing was written to out).
 */
int lowp_report_diff(const char *a, const char *b, FILE *out, char *err, size_t errlen);

/**
 * @brief The length of text's first sentence: up to and including the first
 * '.' followed by a space outside parentheses and brackets and not after an
 * abbreviation ("et al.", "Sec.", "e.g." ...), or the whole text. The
 * index's first sentences and --diff's sentences both end there.
 */
size_t lowp_report_sentence_len(const char *text);

/** @brief A whole file as a NUL-terminated string (caller frees), or NULL. */
char *lowp_report_slurp(const char *path);

#endif
