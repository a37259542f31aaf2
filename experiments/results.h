/* lowp_result -- builders for the "results" keys the report renders (registry.h) */
#ifndef LOWP_RESULT_H
#define LOWP_RESULT_H

#include "format/format.h"
#include "io/plot.h"
#include "measure/fpx.h"
#include "catalog.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

/**
 * @brief Report where the first floating-point exception of a computation
 * came from: appends {"context": context, ...lowp_fpx_first_json(t, mask)}
 * (kind, op, step, element, k, seq, result, exact, inherent, spurious,
 * counts) to the results' "first_exceptions" array and writes one summary
 * line "First exception (context): KIND in OP at step S, element E ...".
 * @return the object appended (owned by r->results), NULL when out of memory.
 */
cJSON *lowp_result_first_exception(lowp_run_t *r, const char *context,
                                   const lowp_fpx_trace_t *t, unsigned mask);

/**
 * @brief Append one verdict {"claim", "source", "measured", "verdict"} (keys
 * in that order) to the "verdicts" array.
 * @param[in,out] verdicts the array (owned by run->results)
 * @param[in] claim    the claim as the document states it
 * @param[in] source   document and section
 * @param[in] measured what the experiment computed, as text
 * @param[in] verdict  "holds" | "wrong" | "holds with a qualification: ..."
 */
void lowp_result_verdict(cJSON *verdicts, const char *claim, const char *source,
                         const char *measured, const char *verdict);

/**
 * @brief Append one plot {"file", "caption"} to the "plots" array.
 * @param[in,out] plots the array (owned by run->results)
 * @param[in] file    file name relative to the run's output folder
 * @param[in] caption one-line caption
 */
void lowp_result_plot(cJSON *plots, const char *file, const char *caption);

/**
 * @brief Report that lowp_plot failed: prints "lowp run NAME: gnuplot failed
 * or is missing (STATUS TEXT); nothing was published" on stderr.
 * @param[in] st the status lowp_plot returned (LOWP_EIO, LOWP_EUNSUPPORTED)
 * @return 2, for run() to return (the run then publishes nothing: exit 2
 *   never leaves an output folder)
 */
int lowp_run_plot_failed(const lowp_run_t *r, int st);

/**
 * @brief The line style of a format's curve, the same in every plot: a
 * colour, a dash type and a point type of its own (fixed for the built-in
 * formats, from a stable hash of the name for any other), appended to
 * `with` ("lines", "linespoints", "points"; NULL = "linespoints").
 * For lowp_series_t.style; leave .dashed 0 (the style has its dash type).
 * @param[out] buf receives "WITH lc rgb '#rrggbb' dt D pt P"
 * @return buf
 */
const char *lowp_result_format_style(const char *name, const char *with, char *buf, size_t len);

/**
 * @brief The colour of a format's curves ("#rrggbb"), as in
 * lowp_result_format_style: for bounds or labels drawn in a format's colour.
 */
const char *lowp_result_format_color(const char *name);

/**
 * @brief A style for the i-th of several curves that are not formats
 * (methods, recipes): twelve colours that none of the format colours
 * repeat among themselves, then dash types; same arguments as above.
 */
const char *lowp_result_series_style(size_t i, const char *with, char *buf, size_t len);

/**
 * @brief Mark the curves that lie on an earlier one (lowp_plot_coincide, read back from their CSVs in
 * outdir, within rtol at every shared x): such a curve keeps its colour, is drawn dashed (lines) or
 * with open circles (linespoints) over the earlier one, and its key says "(= X)". titles and
 * styles: the caller's buffers, one per series (series i's title and style point into them when marked).
 * @return the number of curves marked (0 also when the CSVs cannot be read).
 */
int lowp_result_mark_same(const char *outdir, lowp_series_t *sr, size_t ns, double rtol, char (*titles)[200],
                          char (*styles)[96]);

/** @brief The colour of lowp_result_series_style(i, ...) ("#rrggbb"). */
const char *lowp_result_series_color(size_t i);

/**
 * @brief A new JSON array of n strings (a table row or a column list).
 * @return the array; the caller owns it until it adds it to a tree.
 */
cJSON *lowp_result_row(const char *const *cells, size_t n);

/** @brief Append lowp_result_row(cells, n) to the array rows. */
void lowp_result_add_row(cJSON *rows, const char *const *cells, size_t n);

/** @brief lowp_result_add_row, and the same row as a Markdown table row
    ("| c0 | c1 | ... |\n") on md (the run's summary). */
void lowp_result_add_row_md(cJSON *rows, FILE *md, const char *const *cells, size_t n);

/**
 * @brief Append a table {"title", "columns": cols[0..n), "rows": []} to the
 * "tables" array.
 * @return its (empty) "rows" array, owned by the table; fill it with
 *   lowp_result_add_row.
 */
cJSON *lowp_result_table(cJSON *tables, const char *title, const char *const *cols, size_t n);

/**
 * @brief Add one key number {"label", "value"} as member `key` of the object
 *   results.key_numbers (created on first use). `lowp report`'s index shows
 *   an experiment's key numbers in the row of the exercise it answers
 *   (tools/cmd_report.c); the experiment's own results stay the source.
 * @return the object, to which a caller may add "min" and "max" (a range,
 *   e.g. over seeds), "ci95" (a 95% half-width), "seeds", "unit" (printed
 *   after the value, e.g. "%").
 */
cJSON *lowp_result_key(cJSON *results, const char *key, const char *label, double value);

/**
 * @brief Why a format may not be used, or NULL if it may (an experiment's
 * own requirement, e.g. "formats need subnormals and zero").
 */
typedef const char *(*lowp_format_check_t)(const lowp_format_t *f);

/**
 * @brief Parse parameter key as a comma-separated list of built-in format
 * names ("fp16,bf16,e4m3") into out[0..max).
 *
 * On a bad value prints "lowp run NAME: bad value 'V' for KEY: WHY" and
 * exits 2 (lowp_run_bad_param), where WHY is one of
 *   "expected a comma-separated list of format names" (an empty name, a
 *     name of 64 characters or more, or more than max names),
 *   "unknown format name 'X' (lowp formats lists them)",
 *   "expected at least one format" (an empty list),
 *   the text that check (if not NULL) returns for a format it rejects.
 * @param[out] out copies of the descriptors, in the list's order
 * @param[in] max  capacity of out
 * @param[in] check the experiment's requirement, or NULL for none
 * @return the number of formats, in [1, max]
 */
size_t lowp_run_param_formats(const lowp_run_t *r, const char *key, lowp_format_t *out, size_t max,
                              lowp_format_check_t check);


#endif
