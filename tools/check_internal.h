/* lowp_chk -- the parts of `lowp check` (tools/cmd_check.c and tools/check_*.c), tools/ only */
#ifndef LOWP_CHECK_INTERNAL_H
#define LOWP_CHECK_INTERNAL_H

/*
 * `lowp check` in files by concern:
 *   cmd_check.c       command line, the two phases, publication of the outputs
 *   check_resolve.c   spec -> subjects: subjects opened, input files read, sizes checked
 *   check_run.c       executing a check through the pipeline; an MPI job's spread
 *   check_baseline.c  the baseline file: read and checked, rewritten
 *   check_text.c      the report line of a check
 *   check_junit.c     JUnit XML
 *   check_json.c      JSON results
 * Everything here dies (one message, exit 2) on bad input: these are the
 * command's parts, not a library.
 */

#include <cjson/cJSON.h>
#include <stdio.h>

#include "check/pipeline.h"
#include "check/reveal.h"
#include "check/spec.h"
#include "check/subject.h"
#include "io/atomic.h"
#include "model/tc.h"

#ifndef LOWP_VERSION
#define LOWP_VERSION "0.1.0"
#endif
/** Version of the baseline file format. */
#define LOWP_CHK_BASELINE_FORMAT 1
/** The command's name in messages. */
#define LOWP_CHK_CMD "check"

/* The subject constructors live in kernels/registry_subject.c and lib/check/
   {plugin,tensors}.c; CMakeLists.txt defines LOWP_HAVE_*_SUBJECT for those
   in the tree, and for a missing one this build says so. */
#ifdef LOWP_HAVE_KERNEL_SUBJECT
#define HAVE_KERNEL_SUBJECT 1
#endif
#ifdef LOWP_HAVE_PLUGIN_SUBJECT
#define HAVE_PLUGIN_SUBJECT 1
#endif
#ifdef LOWP_HAVE_TENSOR_SUBJECT
#define HAVE_TENSOR_SUBJECT 1
#endif

/** @brief One selected check: what it needs, then what it gave. */
typedef struct {
  const lowp_spec_check_t *sc;
  lowp_problem_t p;
  lowp_subject_t subj;
  int subj_open;
  /* per rule (sc->n_rules of each, allocated by prepare: a spec of 100k
     checks must fit in memory) */
  lowp_subject_t *refs;          /* per rule with a reference subject */
  int *ref_open;
  lowp_tc_model_t *models;       /* per bound-model rule with "model" */
  lowp_rule_t *trees;            /* per bound rule with a tree: has_tree, tree_bound, tree_name */
  struct lowp_reveal_s *rv;      /* the subject revealed (check_tree.c: once per check), or NULL */
  struct lowp_reveal_s *twins;   /* per rule: the twin of a twin rule (check_twin.c) */
  int *twin_owned;               /* per rule: 1 when twins[i] owns its classes */
  lowp_rule_t *alts;             /* per rule: the rule under the revealed tree (check_declared.c) */
  unsigned alt_on[2];            /* bit i: alts[i] holds one (at most 64 rules) */
  char notes[1600];              /* lines the report adds after the verdict (lowp_chk_note) */
  char conv_bad[600];            /* a declared "convert" the subject does not do (the check fails) */
  double *file_in[LOWP_OP_MAXIO], *file_data[LOWP_OP_MAXIO];
  /* results */
  lowp_check_inputs_t in;
  lowp_check_result_t res;
  int measured;                  /* 1: res valid */
  int pass;
  char error[1200];              /* subject or reference failure */
  lowp_verdict_t *v;             /* per rule */
  int n_v;
  double baseline[LOWP_METRIC_COUNT]; /* stored values (NaN: none) */
  struct {                       /* --fpx (check_fpx.c) */
    int on, out, inherent;       /* out: the output holding the first, -1 none */
    long long first;             /* its flat index, -1 none */
    unsigned kinds;
    int bad_in[LOWP_OP_MAXIO];   /* inputs already NaN/inf */
  } fpx;
} lowp_chk_run_t;

/** @brief The old baseline file. */
typedef struct {
  cJSON *root;      /* the old baseline file, or NULL */
  const cJSON *checks;
  const cJSON **entry; /* per check of the spec (its index): its entry, or NULL */
} lowp_chk_baseline_t;

/* ---------------------------------------------------- check_resolve.c */

/** @brief "lowp check: check 'x' (checks[3]): ..." and exit 2 (in an MPI
    job only the lowest failed rank speaks). */
void lowp_chk_die(const lowp_spec_check_t *sc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;

/** @brief Open everything check sc needs (subject, files, references,
    models) and check it, or die. */
void lowp_chk_prepare(lowp_chk_run_t *r, const lowp_spec_check_t *sc);

/** @brief Folders searched first for plugins (--plugin-dir, in order); the
    strings must outlive the run. */
void lowp_chk_set_plugin_dirs(const char *const *dirs, int n);

/** @brief Close and free what prepare and execute made. */
void lowp_chk_release(lowp_chk_run_t *r);

/* -------------------------------------------------------- check_run.c */

/** @brief Measure a prepared check and apply its rules (baseline rules not
    when updating). A failure is recorded in r, never fatal. */
void lowp_chk_execute(lowp_chk_run_t *r, int updating);

/** @brief Collective (MPI): check i runs on rank i mod N; rank 0 gets each
    report line, JSON (when want_json) and the verdicts, in the spec's order. */
/** @brief The test hook of par/par.h at a point of lowp check: with
    LOWP_FAULT=POINT:RANK this rank fails here alone, as a real failure
    would (lowp_cli_die: one message, exit 2, every rank ends;
    tests/mpi/mpi_faults.sh). */
void lowp_chk_fault(const char *point);

void lowp_chk_spread(lowp_chk_run_t *runs, int n, int updating, int want_json, char **lines,
                     char **jsons);

/* --------------------------------------------------- check_baseline.c */

/** @brief Read the spec's baseline and check it belongs to this spec and
    lowp (unless updating); fills runs[].baseline; dies on a bad one. */
void lowp_chk_baseline_load(lowp_chk_baseline_t *b, const lowp_spec_t *spec,
                            lowp_chk_run_t *runs, int n_runs, int need, int updating);

/** @brief Free what lowp_chk_baseline_load made. */
void lowp_chk_baseline_free(lowp_chk_baseline_t *b);

/** @brief Write the new baseline (as an output of the run) and print what
    changed. @return LOWP_OK or a status. */
int lowp_chk_baseline_update(const lowp_spec_t *spec, const lowp_chk_baseline_t *old,
                             const lowp_chk_run_t *runs, int n);

/** @brief A number stored by lowp_chk_add_num (NaN for null or absent). */
double lowp_chk_get_num(const cJSON *j);

/* -------------------------------------------------------- check_fpx.c */

/** @brief --fpx: find the first NaN/inf output of a measured run. */
void lowp_chk_fpx(lowp_chk_run_t *r);
/** @brief --fpx: its report line, JSON object and JUnit properties. */
void lowp_chk_fpx_print(FILE *f, const lowp_chk_run_t *r);
cJSON *lowp_chk_fpx_json(const lowp_chk_run_t *r);
void lowp_chk_fpx_junit(FILE *f, const lowp_chk_run_t *r);

/* ------------------------------------------------------- check_text.c */

/** @brief The report line(s) of a run check. */
void lowp_chk_print_line(FILE *f, const lowp_chk_run_t *r);

/* ------------------------------------------------------ check_junit.c */

/** @brief Write JUnit XML (as an output of the run). @return LOWP_OK or a status. */
int lowp_chk_write_junit(const char *path, const lowp_chk_run_t *runs, int n, int failures,
                         double total);

/* ------------------------------------------------------- check_json.c */

/** @brief A number into JSON: finite as is, NaN null, infinities "inf"/"-inf". */
void lowp_chk_add_num(cJSON *obj, const char *key, double v);

/** @brief Every metric of a result, by name. */
cJSON *lowp_chk_metrics_json(const lowp_check_result_t *res);

/** @brief The JSON result of one check. */
cJSON *lowp_chk_result_json(const lowp_chk_run_t *r);

/** @brief Write j, pretty-printed (as an output of the run). @return LOWP_OK or a status. */
int lowp_chk_write_json(const char *path, cJSON *j);

/* ------------------------------------------------------- check_dump.c */

/** @brief --dump DIR must be absent or an empty folder, or die. */
void lowp_chk_dump_probe(const char *dir);

/** @brief Write each failing measured check's inputs, outputs and exact
    reference as .npy into DIR/NAME/ (and a note of what failed); says on
    stderr what it could not write, never fatal. */
void lowp_chk_dump(const char *dir, const lowp_chk_run_t *runs, int n);

/* ----------------------------------------------------- check_outputs.c */

/** @brief A new output of the run: a temporary beside path, published with
    the others at the end. @return NULL if it cannot be created. */
lowp_atomic_t *lowp_chk_new_out(const char *path);

/** @brief Remove every output's temporary (nothing published). */
void lowp_chk_abort_all(void);

/** @brief Publish every output together (io/atomic.h: all or none).
    @return LOWP_OK, or the status of the failure (none published). */
int lowp_chk_commit_all(void);

/* tools/check_tree.c: the bound of rule i's tree ("order": "revealed" reveals
   the subject now; {"tree": FILE} reads lowp reveal's file or a tree file),
   into r->trees[i]; dies on a bad file */
void lowp_chk_tree(lowp_chk_run_t *r, int i);
/* the subject revealed at the check's shape (batch 1), once per check and
   kept in r->rv; dies when revelation cannot run */
const struct lowp_reveal_s *lowp_chk_revealed(lowp_chk_run_t *r);
/* "convert": "revealed": the conversions revelation finds become r->p's
   (a note says which) */
void lowp_chk_convert(lowp_chk_run_t *r);
/* a declared "convert": probe the subject's conversion (sum, dot, gemv and
   gemm subjects lowp calls); a mismatch goes to r->conv_bad */
void lowp_chk_convert_verify(lowp_chk_run_t *r);
/* append one line to r->notes (printed after the verdict, in JSON "notes") */
void lowp_chk_note(lowp_chk_run_t *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* rv from FILE (lowp reveal's file, or one tree: one class of every
   position) for rule i; its leaves must be the check's K, and for a twin
   its positions the check's; dies on a bad file */
void lowp_chk_load_reveal(struct lowp_reveal_s *rv, const char *path, const lowp_chk_run_t *r, int i, int twin);
/* rv: one class of every position (R x C) holding tree t (taken);
   LOWP_OK or LOWP_ENOMEM */
int lowp_chk_one_class(struct lowp_reveal_s *rv, struct lowp_tree_s *t, size_t R, size_t C);
/* t->tree_bound and t->tree_name from the trees of rv, the additions
   bounded in acc (how: "revealed" or "given"; rule i for messages); returns
   the fewest significand bits of the trees' additions (0: none known), and
   in *prod_bits (when not NULL) those of their rounded products (0: none) */
int lowp_chk_tree_bound(lowp_rule_t *t, int *prod_bits, const lowp_reveal_t *rv, const lowp_format_t *acc,
                        const char *how, const lowp_spec_check_t *sc, int i);
/* check_declared.c: --reveal (every check with a declared order is revealed) */
void lowp_chk_set_reveal(int on);
/* a declared order that is not the revealed tree: one note per bound rule
   (prepare, after the rules), and which verdicts change (after execute) */
void lowp_chk_declared(lowp_chk_run_t *r);
void lowp_chk_declared_verdicts(lowp_chk_run_t *r);
/* check_twin.c: rule i's twin ({"vs_twin": true} / {"bitexact": "twin"})
   built (prepare) and compared bit for bit, the first differing node named
   in the notes (execute) */
void lowp_chk_twin_prepare(lowp_chk_run_t *r, int i);
void lowp_chk_twin_eval(lowp_chk_run_t *r, int i, lowp_verdict_t *v);
/* a whole file as a NUL-terminated string (malloc'd; NULL if unreadable or
   over 1 GiB): tree and reveal files */
char *lowp_chk_read_text(const char *path);

#endif
