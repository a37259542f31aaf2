/* lowp_experiment -- the registry: every experiment described once */
#ifndef LOWP_EXPERIMENT_H
#define LOWP_EXPERIMENT_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

/** @brief One parameter with its default (a string, parsed by the experiment). */
typedef struct {
  const char *key;
  const char *def;   /**< default value */
  const char *quick; /**< value under --quick, or NULL = same as def */
  const char *help;
} lowp_param_t;

/**
 * @brief What an experiment gets when it runs. The framework creates
 * outdir, fills args (defaults, then --quick values, then --key=value
 * overrides; unknown keys were already rejected), prints and records the run
 * header, and after run() returns writes results.json (header + the
 * "results" object the experiment filled) atomically. The experiment writes
 * its CSVs and plots into outdir and its Markdown summary to summary.
 */
/*
 * What an experiment puts into run->results (the report renders these keys
 * generically; anything else is kept in results.json for machines):
 *   "answer":   string, the answer to the question in one or two sentences,
 *               built from computed numbers (never typed by hand);
 *   "verdicts": array of {"claim", "source" (document and section),
 *               "measured" (string or number), "verdict": "holds" | "wrong" |
 *               "holds with a qualification: ..."};
 *   "tables":   array of {"title", "columns": [..], "rows": [[..], ..]};
 *   "plots":    array of {"file": "x.png" (relative to outdir), "caption"}.
 * experiments/results.h builds them (lowp_result_verdict, lowp_result_table,
 * lowp_result_add_row, lowp_result_plot) and parses a list of formats
 * (lowp_run_param_formats).
 * Add an experiment: write experiments/<slug>.c defining
 * `const lowp_experiment_t lowp_exp_<slug>` and add its extern and one line
 * to the table in experiments/catalog.c.
 */
typedef struct lowp_run {
  const struct lowp_experiment *exp;
  const char *outdir;   /**< existing folder for this run's files */
  uint64_t seed;        /**< from --seed=, default 20261122; printed */
  int quick;            /**< 1 under --quick */
  cJSON *results;       /**< object to fill: answers, tables, verdicts */
  FILE *summary;        /**< Markdown summary (summary.md), header written */
  int progress;         /**< 1 if stderr is a terminal: show progress there */
  const char *const *keys;   /**< parameter keys (same order as exp->params) */
  const char *const *values; /**< their effective values */
} lowp_run_t;

/** @brief An experiment (docs/style.md B14: question, method, expected). */
typedef struct lowp_experiment {
  const char *name;      /**< "error-growth" */
  const char *question;  /**< one sentence ending in '?' */
  const char *method;    /**< formats, modes, sizes, reference used */
  const char *expected;  /**< what would confirm or refute the expectation */
  const lowp_param_t *params; /**< terminated by {NULL} */
  /** Runs; returns 0 ok, 1 a verdict failed (still writes results), 2 bad
      parameter value (message already printed by lowp_run_bad_param). */
  int (*run)(lowp_run_t *run);
  /** Optional (NULL = none): parse and check every parameter value before
      anything is printed or written, calling lowp_run_bad_param on a bad
      one; r->outdir and r->results are not set yet. */
  void (*check)(const lowp_run_t *r);
} lowp_experiment_t;

/** @brief Number of experiments; the i-th (registry order); by name or NULL. */
size_t lowp_experiment_count(void);
const lowp_experiment_t *lowp_experiment_at(size_t i);
const lowp_experiment_t *lowp_experiment_find(const char *name);

/** @brief The effective value of parameter key (never NULL for declared keys). */
const char *lowp_run_param(const lowp_run_t *r, const char *key);
/** @brief An experiment's text (question, method, expected) with each
    "{key}" of a declared parameter replaced by its effective value, so the
    texts follow the parameters of the run. Returns out. */
const char *lowp_run_text(const lowp_run_t *r, const char *tmpl, char *out, size_t len);
/** @brief A path parameter, as the program opens it: a leading "<source>/"
    (how defaults inside lowp's source tree are written, so that results and
    reports name no folder of the machine that made them) becomes the source
    folder lowp was built from. buf receives the path; returns buf. */
const char *lowp_run_param_path(const lowp_run_t *r, const char *key, char *buf, size_t len);
/** @brief Parameter as a double / integer in [lo, hi]; on a malformed value
    prints "lowp run NAME: bad value for KEY: ..." and exits 2. */
double lowp_run_param_num(const lowp_run_t *r, const char *key);
long long lowp_run_param_int(const lowp_run_t *r, const char *key, long long lo, long long hi);
/** @brief A comma-separated list parameter: each item in format/number.h's
    grammar, finite and in [lo, hi] (integers: whole numbers in [lo, hi]);
    1 to max items, none empty ("1,,2", "1," and "" are bad values). Fills
    out and returns the count, or reports the bad value and exits 2. */
size_t lowp_run_param_list_num(const lowp_run_t *r, const char *key, double *out, size_t max,
                               double lo, double hi);
size_t lowp_run_param_list_int(const lowp_run_t *r, const char *key, long long *out,
                               size_t max, long long lo, long long hi);
/** @brief Report a bad parameter value and exit 2. */
void lowp_run_bad_param(const lowp_run_t *r, const char *key, const char *why);
/** @brief Progress on stderr (only when it is a terminal): "name: msg". */
void lowp_run_progress(const lowp_run_t *r, const char *fmt, ...);
/** @brief Path of a file in the output folder (static buffer per call site:
    copy it before the next call). */
const char *lowp_run_path(const lowp_run_t *r, const char *file);

#endif
