/* lowp check -- regression-test the precision of kernels against exact references (a spec of checks) */

/*
 * `lowp check SPEC.json|- [--junit FILE] [--json FILE] [--update-baseline]
 *  [--only NAME]... [--threads T] [--list-ops] [--help]`
 *
 * Two phases. First everything that can be wrong with the spec or the
 * command line is found: the spec parses (lib/check/spec.c), every selected
 * check's subject opens (a registry kernel, a plugin library, saved tensor
 * files), input files read and agree with the operation, reference and
 * bit-exact subjects open, models resolve, the baseline belongs to this spec
 * and this lowp, and the --junit/--json destinations are writable. Any
 * problem: one message naming the check, exit 2, nothing written. Then
 * each check runs through the pipeline (lib/check/pipeline.h) and prints one
 * line; JUnit XML, JSON results and the baseline are written atomically at
 * the end. Exit 0 all pass, 1 any fails (a crashing plugin fails its check,
 * and the run goes on), 2 bad spec or input.
 */

#define _GNU_SOURCE /* NSIG */

#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check/op.h"
#include "check_internal.h"
#include "cleanup.h"
#include "cli.h"
#include "io/atomic.h"
#include "io/spawn.h"
#include "output.h"
#include "par.h"
#include "status.h"
#ifdef LOWP_HAVE_KERNEL_SUBJECT
#include "../kernels/registry.h"
#endif

/* ------------------------------------------------------ private types */

typedef struct {
  const char *spec_path, *junit, *json;
  int update_baseline, list_ops, threads, fpx;
  const char *only[64];
  int n_only;
  const char *plugin_dirs[16];
  int n_plugin_dirs;
  const char *dump;
} opts_t;

/* ------------------------------------------------------ private helpers */

static void usage(FILE *out) {
  fprintf(out,
    "usage: lowp check SPEC.json|- [options]\n"
    "  Run the checks of a spec (JSON; docs/check-spec.schema.json, README \"lowp check\"):\n"
    "  each measures a subject (a registry kernel, a plugin, or saved tensors) against\n"
    "  the exact result and applies its rules. One line per check; exit 0 all pass,\n"
    "  1 any fails, 2 bad spec or input (nothing written).\n"
    "  --junit FILE       write JUnit XML (testsuite/testcase/failure) for CI\n"
    "  --json FILE        write the results as JSON\n"
    "  --fpx              also report each subject's first NaN/inf output, its kind,\n"
    "                     whether its inputs already held one, and whether the exact\n"
    "                     result is finite there (spurious) or not (inherent)\n"
    "  --reveal           reveal every check's subject (sum, dot, gemv, gemm) and say\n"
    "                     where a declared order is not the kernel's tree: both\n"
    "                     bounds and which verdicts change (lowp reveal)\n"
    "  --update-baseline  rewrite the spec's baseline file from this run and say\n"
    "                     what changed (baseline rules are not applied)\n"
    "  --only NAME        run only this check (repeatable)\n"
    "  --plugin-dir DIR   load a spec's plugin from DIR when DIR holds a file of its\n"
    "                     name (repeatable; before the spec's path; a build's\n"
    "                     plugins/ beside the lowp binary is searched last)\n"
    "  --dump DIR         for each failing check write its inputs, outputs and the\n"
    "                     exact reference as .npy to DIR/NAME/ (DIR: absent or empty)\n"
    "  --threads T        OpenMP threads (results do not depend on it)\n"
    "  --list-ops         list the operations (inputs, outputs) and the registry kernels\n"
    "  --help             this text\n"
    "  Options take 'value' or '=value'; '-' reads the spec from stdin (paths in it\n"
    "  are then relative to the current folder).\n");
}

static void list_ops(void) {
  int i, j;
  printf("%-11s %-22s %-18s %s\n", "op", "inputs", "outputs", "what");
  for (i = 0; i < LOWP_OP_COUNT; i++) {
    const lowp_op_t *op = lowp_op_get((lowp_op_id_t)i);
    char ins[64] = "", outs[64] = "";
    size_t u = 0;
    for (j = 0; j < op->n_in; j++)
      u += (size_t)snprintf(ins + u, sizeof ins - u, "%s%s%s", j ? ", " : "", op->in_names[j],
                            op->in_index[j] ? " (indices)" : "");
    u = 0;
    for (j = 0; j < op->n_out; j++)
      u += (size_t)snprintf(outs + u, sizeof outs - u, "%s%s", j ? ", " : "", op->out_names[j]);
    printf("%-11s %-22s %-18s %s\n", op->name, ins, outs, op->doc);
  }
#ifdef LOWP_HAVE_KERNEL_SUBJECT
  printf("\nregistry kernels (\"subject\": {\"kernel\": NAME, \"params\": \"key=value,...\"}):\n");
  printf("%-19s %-10s %-32s %s\n", "kernel", "op", "parameters (defaults)", "what");
  for (i = 0; lowp_kernel_at((size_t)i); i++) {
    const lowp_kernel_t *k = lowp_kernel_at((size_t)i);
    printf("%-19s %-10s %-32s %s%s\n", k->name, lowp_op_get(k->op)->name, k->defaults, k->doc,
           k->gpu ? " [GPU kernel built]" : "");
  }
#endif
}

/* --key value and --key=value */
static const char *opt_value(int argc, char **argv, int *i, const char *key) {
  size_t n = strlen(key);
  const char *a = argv[*i];
  if (strncmp(a, key, n)) return NULL;
  if (a[n] == '=') return a + n + 1;
  if (a[n] != '\0') return NULL;
  if (*i + 1 >= argc) lowp_cli_die(LOWP_CHK_CMD, "option %s needs an argument", key);
  return argv[++*i];
}

static void parse(opts_t *o, int argc, char **argv) {
  int i; /* an option given twice: refused before (tools/lowp.c, refuse_repeats) */
  const char *v;
  memset(o, 0, sizeof *o);
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      if (lowp_par_rank() == 0) usage(stdout);
      exit(0);
    }
    else if (!strcmp(a, "--list-ops")) {
      o->list_ops = 1;
    } else if (!strcmp(a, "--update-baseline")) {
      o->update_baseline = 1;
    } else if ((v = opt_value(argc, argv, &i, "--junit"))) {
      o->junit = v;
    } else if ((v = opt_value(argc, argv, &i, "--json"))) {
      o->json = v;
    }
    else if (!strcmp(a, "--reveal")) {
      lowp_chk_set_reveal(1);
    }
    else if (!strcmp(a, "--fpx")) {
      if (lowp_par_size() > 1) lowp_cli_die(LOWP_CHK_CMD, "--fpx runs in one process (no MPI ranks)");
      o->fpx = 1;
    }
    else if ((v = opt_value(argc, argv, &i, "--plugin-dir"))) {
      if (o->n_plugin_dirs >= 16) lowp_cli_die(LOWP_CHK_CMD, "at most 16 --plugin-dir options");
      if (!v[0]) lowp_cli_die(LOWP_CHK_CMD, "--plugin-dir needs a folder");
      o->plugin_dirs[o->n_plugin_dirs++] = v;
    } else if ((v = opt_value(argc, argv, &i, "--dump"))) {
      if (!v[0]) lowp_cli_die(LOWP_CHK_CMD, "--dump needs a folder");
      o->dump = v;
    }
    else if ((v = opt_value(argc, argv, &i, "--only"))) {
      if (o->n_only >= 64) lowp_cli_die(LOWP_CHK_CMD, "at most 64 --only options");
      if (!v[0]) lowp_cli_die(LOWP_CHK_CMD, "--only needs a check name");
      o->only[o->n_only++] = v;
    } else if ((v = opt_value(argc, argv, &i, "--threads"))) {
      o->threads = (int)lowp_cli_int(LOWP_CHK_CMD, "--threads", v, 1, 1024);
    }
    else if (a[0] == '-' && a[1] != '\0')
      lowp_cli_die(LOWP_CHK_CMD, "unknown option '%s' (see lowp check --help)", a);
    else if (o->spec_path)
      lowp_cli_die(LOWP_CHK_CMD, "one spec at a time ('%s' and '%s')", o->spec_path, a);
    else o->spec_path = a;
  }
  if (!o->spec_path && !o->list_ops) lowp_cli_die(LOWP_CHK_CMD, "give a spec file (or - for stdin); see lowp check --help");
  /* an MPI job spreads the checks: a failing check's arrays are on the rank
     that ran it, and --dump writes them from one process (docs/scale.md) */
  if (o->dump && lowp_par_size() > 1)
    lowp_cli_die(LOWP_CHK_CMD, "--dump is not available in an MPI job (each failing check's arrays "
                 "stay on the rank that ran it): run lowp check without mpirun, with --only NAME "
                 "for the failing checks, to dump them");
  if (o->junit && o->json && !strcmp(o->junit, o->json))
    lowp_cli_die(LOWP_CHK_CMD, "--junit and --json name the same file '%s'", o->junit);
}

/* the files a subject reads */
static void subject_inputs(const lowp_outputs_t *outs, const lowp_spec_subject_t *d,
                           const char *what) {
  int i;
  lowp_outputs_input(outs, LOWP_CHK_CMD, what, d->plugin);
  for (i = 0; i < d->n_inputs; i++) lowp_outputs_input(outs, LOWP_CHK_CMD, what, d->inputs[i].path);
  for (i = 0; i < d->n_outputs; i++) lowp_outputs_input(outs, LOWP_CHK_CMD, what, d->outputs[i].path);
}

/* The outputs (--junit, --json, the baseline when it is rewritten) are
   writable, regular files or new ones, not symbolic links (tools/output.h),
   different from each other and from every file the run reads: the spec,
   the baseline it reads, every check's input files, plugins and tensor
   files. Else one message, exit 2, before any work. */
static void check_outputs(const opts_t *o, const lowp_spec_t *spec) {
  lowp_outputs_t outs;
  int i, k;
  memset(&outs, 0, sizeof outs);
  lowp_outputs_add(&outs, LOWP_CHK_CMD, "--junit", o->junit);
  lowp_outputs_add(&outs, LOWP_CHK_CMD, "--json", o->json);
  lowp_outputs_add(&outs, LOWP_CHK_CMD, "--dump", o->dump); /* a folder, but not theirs */
  if (o->update_baseline) lowp_outputs_add(&outs, LOWP_CHK_CMD, "the baseline", spec->baseline);
  else lowp_outputs_input(&outs, LOWP_CHK_CMD, "the baseline", spec->baseline);
  lowp_outputs_input(&outs, LOWP_CHK_CMD, "the spec", o->spec_path);
  for (i = 0; i < spec->n_checks; i++) {
    const lowp_spec_check_t *sc = &spec->checks[i];
    char what[300];
    snprintf(what, sizeof what, "an input of check '%.200s'", sc->name);
    for (k = 0; k < sc->n_files; k++) lowp_outputs_input(&outs, LOWP_CHK_CMD, what, sc->files[k].path);
    for (k = 0; k < sc->n_data; k++) lowp_outputs_input(&outs, LOWP_CHK_CMD, what, sc->data[k].path);
    subject_inputs(&outs, &sc->subject, what);
    for (k = 0; k < sc->n_rules; k++)
      if (sc->rules[k].has_ref) subject_inputs(&outs, &sc->rules[k].ref, what);
  }
  /* last: it makes (and removes) a temporary beside each */
  if (o->junit) lowp_output_check_file(LOWP_CHK_CMD, "--junit", o->junit);
  if (o->json) lowp_output_check_file(LOWP_CHK_CMD, "--json", o->json);
  if (o->update_baseline && spec->baseline)
    lowp_output_check_file(LOWP_CHK_CMD, "baseline", spec->baseline);
}

/* Under MPI every rank reads the files the spec names (the spec itself is
   on the command line, compared at start): they must be the same files on
   every rank (par/par.h), or the job ends before any work. */
static void add_path(char ***v, int *n, int *cap, const char *p) {
  if (!p) return;
  if (*n == *cap) {
    char **w = realloc(*v, (size_t)(*cap = *cap ? 2 * *cap : 64) * sizeof *w);
    if (!w) lowp_cli_die(LOWP_CHK_CMD, "out of memory");
    *v = w;
  }
  (*v)[(*n)++] = (char *)p;
}

static void add_subject_paths(char ***v, int *n, int *cap, const lowp_spec_subject_t *d) {
  int i;
  add_path(v, n, cap, d->plugin);
  for (i = 0; i < d->n_inputs; i++) add_path(v, n, cap, d->inputs[i].path);
  for (i = 0; i < d->n_outputs; i++) add_path(v, n, cap, d->outputs[i].path);
}

static void agree_spec_files(const opts_t *o, const lowp_spec_t *spec) {
  char **v = NULL;
  int n = 0, cap = 0, i, k;
  if (lowp_par_size() < 2) return;
  if (!o->update_baseline) add_path(&v, &n, &cap, spec->baseline);
  for (i = 0; i < spec->n_checks; i++) {
    const lowp_spec_check_t *sc = &spec->checks[i];
    for (k = 0; k < sc->n_files; k++) add_path(&v, &n, &cap, sc->files[k].path);
    for (k = 0; k < sc->n_data; k++) add_path(&v, &n, &cap, sc->data[k].path);
    add_subject_paths(&v, &n, &cap, &sc->subject);
    for (k = 0; k < sc->n_rules; k++)
      if (sc->rules[k].has_ref) add_subject_paths(&v, &n, &cap, &sc->rules[k].ref);
  }
  lowp_par_agree_files("the files the spec names differ: ", n, v);
  free(v);
}

/* ---------------------------------------------------------------- outputs */

/* outputs: all written to temporary files first, with SIGINT, SIGTERM,
   SIGHUP and the other terminating signals held; if one arrived meanwhile (or any write failed) none is
   published, else all are renamed into place, then the signal acts.
   Returns 0, or -1 if publishing failed (said). */
static int publish(const opts_t *o, const lowp_spec_t *spec, const lowp_chk_baseline_t *base,
                   const lowp_chk_run_t *runs, int n, int failures, double total, char **jsons) {
  int i, st;
  {
    sigset_t hold, old;
    lowp_cleanup_signals(&hold); /* SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, ... */
    sigdelset(&hold, SIGPIPE);   /* a closed stdout is found by the flush below */
    sigprocmask(SIG_BLOCK, &hold, &old);
    if (o->update_baseline && lowp_chk_baseline_update(spec, base, runs, n)) {
      lowp_chk_abort_all();
      lowp_cli_die(LOWP_CHK_CMD, "baseline %s: cannot write it (nothing written)", spec->baseline);
    }
    if (o->junit && lowp_chk_write_junit(o->junit, runs, n, failures, total)) {
      lowp_chk_abort_all();
      lowp_cli_die(LOWP_CHK_CMD, "--junit %s: cannot write it (nothing written)", o->junit);
    }
    if (o->json) {
      cJSON *root = cJSON_CreateObject(), *arr = cJSON_CreateArray();
      cJSON_AddStringToObject(root, "lowp_version", LOWP_VERSION);
      cJSON_AddStringToObject(root, "spec", o->spec_path);
      cJSON_AddNumberToObject(root, "checks_run", n);
      cJSON_AddNumberToObject(root, "passed", n - failures);
      cJSON_AddNumberToObject(root, "failed", failures);
      for (i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, jsons ? cJSON_Parse(jsons[i]) : lowp_chk_result_json(&runs[i]));
      cJSON_AddItemToObject(root, "checks", arr);
      st = lowp_chk_write_json(o->json, root);
      cJSON_Delete(root);
      if (st) {
        lowp_chk_abort_all();
        lowp_cli_die(LOWP_CHK_CMD, "--json %s: cannot write it (nothing written)", o->json);
      }
    }
    {
      sigset_t pend;
      int interrupted = 0, sig;
      st = 0;
      if (sigpending(&pend) == 0)
        for (sig = 1; sig < NSIG; sig++)
          if (sigismember(&hold, sig) == 1 && sigismember(&pend, sig) == 1) interrupted = 1;
      if (interrupted) lowp_chk_abort_all();
      /* the report on stdout is part of the run: if it could not be
         written, nothing is published */
      if (!interrupted && (fflush(stdout) != 0 || ferror(stdout))) {
        lowp_chk_abort_all();
        fprintf(stderr, "lowp check: cannot write the standard output (a full disk or a closed "
                "file?): no output file written\n");
        st = -1;
      }
      /* nothing a kernel started may outlive the run and write over what
         is published: every such process is ended first, and the files
         are renamed into place only once none is left (io/spawn.h) */
      if (st == 0 && !interrupted && !lowp_spawn_contained()) {
        lowp_chk_abort_all();
        fprintf(stderr, "lowp check: processes a plugin kernel started could not be ended: no "
                "output file written\n");
        st = -1;
      }
      /* together or not at all (io/atomic.h) */
      if (st == 0 && lowp_chk_commit_all() != LOWP_OK) {
        fprintf(stderr, "lowp check: cannot publish the output files (disk full?): none "
                "written\n");
        st = -1;
      }
      sigprocmask(SIG_SETMASK, &old, NULL); /* a held signal acts now */
      if (st == -1) return -1;
    }
  }
  return 0;
}

/* ------------------------------------------------------------- the spec */

/* Read and parse the spec. In an MPI job every rank must parse the same
   bytes: "-" (the standard input, which mpirun gives rank 0 alone) is read
   by rank 0 and sent to the others; any other path is read by every rank
   and what they read compared (a FIFO, /dev/stdin or a file that differs
   per node ends the job: par/par.h). Any failure on one rank ends all. */
static void read_spec(lowp_spec_t *spec, const opts_t *o) {
  char err[800], *text = NULL, hint[200] = "";
  size_t len = 0;
  int st, from_root = !strcmp(o->spec_path, "-") && lowp_par_size() > 1;
  memset(spec, 0, sizeof *spec);
  if (!from_root || lowp_par_rank() == 0) {
    if (!strcmp(o->spec_path, "-") && lowp_stdin_closed())
      lowp_cli_die(LOWP_CHK_CMD, "spec -: the standard input is closed");
    st = lowp_spec_slurp(&text, &len, o->spec_path, err, sizeof err);
    if (st) lowp_cli_die(LOWP_CHK_CMD, "%s", err[0] ? err : lowp_status_str(st));
  }
  lowp_chk_fault("spec-read");
  {
    struct stat sb;
    if (!strcmp(o->spec_path, "/dev/stdin") || !strncmp(o->spec_path, "/dev/fd/", 8) ||
        !strncmp(o->spec_path, "/proc/", 6) || (stat(o->spec_path, &sb) == 0 && !S_ISREG(sb.st_mode)))
      snprintf(hint, sizeof hint, "(under mpirun only rank 0 has the standard input, and each rank "
               "reads a FIFO or device on its own: give the spec as '-', which rank 0 reads for "
               "all, or as a file)");
  }
  lowp_par_agree_text("specs", hint, &text, &len, from_root);
  st = lowp_spec_parse_path(spec, text, len, o->spec_path, err, sizeof err);
  free(text);
  if (st) {
    lowp_spec_free(spec);
    lowp_cli_die(LOWP_CHK_CMD, "%s", err[0] ? err : lowp_status_str(st));
  }
  lowp_chk_fault("spec-parse");
}

/* ----------------------------------------------------------- public API */

int lowp_cmd_check(int argc, char **argv) {
  opts_t o;
  lowp_spec_t spec;
  lowp_chk_baseline_t base;
  lowp_chk_run_t *runs;
  int i, k, n = 0, failures = 0, need_base = 0, rc;
  double total = 0;
  char **lines = NULL, **jsons = NULL; /* an MPI job: each check's line and JSON */

  parse(&o, argc, argv);
  lowp_chk_set_plugin_dirs(o.plugin_dirs, o.n_plugin_dirs);
  if (o.dump) lowp_chk_dump_probe(o.dump);
  if (o.list_ops) {
    list_ops();
    if (!o.spec_path) return LOWP_EXIT_OK;
  }
  if (o.threads) omp_set_num_threads(o.threads);
  read_spec(&spec, &o);
  for (k = 0; k < o.n_only; k++)
    if (!lowp_spec_find(&spec, o.only[k]))
      lowp_cli_die(LOWP_CHK_CMD, "--only %s: the spec has no check of that name", o.only[k]);

  /* phase 1: everything is opened and checked before any work */
  agree_spec_files(&o, &spec);
  lowp_chk_fault("outputs");
  if (lowp_par_rank() == 0) check_outputs(&o, &spec);
  runs = calloc((size_t)spec.n_checks, sizeof *runs);
  if (!runs) lowp_cli_die(LOWP_CHK_CMD, "out of memory");
  for (i = 0; i < spec.n_checks; i++) {
    const lowp_spec_check_t *sc = &spec.checks[i];
    int sel = o.n_only == 0;
    for (k = 0; k < o.n_only; k++)
      if (!strcmp(o.only[k], sc->name)) sel = 1;
    if (!sel) continue;
    lowp_chk_prepare(&runs[n], sc);
    lowp_chk_fault("load");
    runs[n].fpx.on = o.fpx;
    for (k = 0; k < sc->n_rules; k++)
      if (sc->rules[k].rule.kind == LOWP_RULE_BASELINE) need_base = 1;
    n++;
  }
  lowp_chk_baseline_load(&base, &spec, runs, n, need_base, o.update_baseline);
  lowp_chk_fault("baseline");
  /* an MPI job: the checks are spread over the ranks, rank 0 gets the
     results and writes everything (par/par.h, docs/scale.md) */
  if (lowp_par_size() > 1) {
    if (lowp_par_size() > n)
      lowp_cli_die(LOWP_CHK_CMD, "%d MPI ranks for %d checks: the ranks share whole checks, so run at "
                   "most %d", lowp_par_size(), n, n);
    lowp_par_sync(0); /* every rank opened every subject and read every file */
    lines = calloc((size_t)n, sizeof *lines);
    jsons = calloc((size_t)n, sizeof *jsons);
    if (!lines || !jsons) lowp_cli_die(LOWP_CHK_CMD, "out of memory");
    lowp_chk_spread(runs, n, o.update_baseline, o.json != NULL, lines, jsons);
    if (lowp_par_rank() != 0) { /* rank 0 writes; wait for its verdict */
      for (i = 0; i < n; i++) { lowp_chk_release(&runs[i]); free(lines[i]); free(jsons[i]); }
      free(runs); free(lines); free(jsons);
      lowp_chk_baseline_free(&base);
      lowp_spec_free(&spec);
      lowp_par_sync(0);
      return LOWP_EXIT_OK;
    }
  }

  /* phase 2: run */
  for (i = 0; i < n; i++) {
    if (lines) fputs(lines[i], stdout); /* an MPI job: measured on the rank that owns it */
    else {
      lowp_chk_execute(&runs[i], o.update_baseline);
      lowp_chk_print_line(stdout, &runs[i]);
    }
    fflush(stdout);
    if (!runs[i].pass) failures++;
    total += runs[i].res.time_subject_s + runs[i].res.time_exact_s;
  }
  if (o.dump && failures && !lines) lowp_chk_dump(o.dump, runs, n);
  printf("%d of %d checks passed", n - failures, n);
  if (failures) {
    int shown = 0;
    printf("; failed:");
    for (i = 0; i < n; i++)
      if (!runs[i].pass && shown++ < 20) printf(" %s", runs[i].sc->name);
    if (shown > 20) printf(" (and %d more)", shown - 20);
  }
  printf("\n");

  /* phase 3: publish (nothing on failure: said), then free on every path */
  rc = publish(&o, &spec, &base, runs, n, failures, total, jsons) ? LOWP_EXIT_USAGE
       : failures                                                  ? LOWP_EXIT_CHECK
                                                                   : LOWP_EXIT_OK;
  for (i = 0; i < n; i++) lowp_chk_release(&runs[i]);
  free(runs);
  if (lines) {
    for (i = 0; i < n; i++) { free(lines[i]); free(jsons[i]); }
    free(lines); free(jsons);
    /* the outputs are in place (or none is): the other ranks may leave */
    lowp_par_sync(rc == LOWP_EXIT_USAGE);
  }
  lowp_chk_baseline_free(&base);
  lowp_spec_free(&spec);
  return rc;
}
