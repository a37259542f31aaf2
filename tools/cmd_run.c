/* lowp run / lowp list -- run one registered experiment into its own folder */

/*
 * A run is atomic: the output folder is checked before any work, everything
 * is written into DIR.tmp.PID.N and put in place at the end (tools/output.h),
 * so a failed or interrupted run (exit 2, 130, 143) publishes nothing and
 * leaves no temporary behind, and a previous output is replaced only if lowp
 * made it.
 *
 * Run: lowp run formats --out reports/formats
 */

#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "thp.h"
#include "env.h"
#include "io/plot.h"
#include "io/spawn.h"
#include "output.h"
#include "par.h"
#include "results.h"
#include "status.h"
#include "catalog.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_SEED 20261122ULL

/* ------------------------------------------------------ private helpers */

static cJSON *format_descriptor(const lowp_format_t *f) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", f->name);
  cJSON_AddNumberToObject(o, "p", f->precision);
  cJSON_AddNumberToObject(o, "emin", f->emin);
  cJSON_AddNumberToObject(o, "emax", f->emax);
  cJSON_AddBoolToObject(o, "subnormals", f->subnormals);
  cJSON_AddNumberToObject(o, "inf", f->inf);
  cJSON_AddNumberToObject(o, "nan", f->nan);
  cJSON_AddBoolToObject(o, "signed", f->has_sign);
  cJSON_AddNumberToObject(o, "ebits", f->ebits);
  return o;
}

/* The run header (docs/style.md B14): printed first and embedded in results.json.
   It holds nothing that changes between identical runs (no clock: the date is in "environment"). */
static cJSON *run_header(const lowp_run_t *r) {
  cJSON *h = cJSON_CreateObject(), *params, *fmts;
  const char *rev = lowp_env_git_revision(); /* git describe of the source tree (tools/env.c) */
  size_t i;
  cJSON_AddStringToObject(h, "experiment", r->exp->name);
  cJSON_AddStringToObject(h, "git_revision", rev[0] ? rev : "unknown");
  cJSON_AddStringToObject(h, "build_type", LOWP_BUILD_TYPE);
#ifdef __VERSION__
  cJSON_AddStringToObject(h, "compiler", "gcc " __VERSION__);
#endif
  cJSON_AddStringToObject(h, "device", "cpu-only (CPU models; no GPU used)");
  cJSON_AddNumberToObject(h, "seed", (double)r->seed);
  cJSON_AddBoolToObject(h, "quick", r->quick);
  params = cJSON_AddObjectToObject(h, "params");
  for (i = 0; r->keys[i]; i++) cJSON_AddStringToObject(params, r->keys[i], r->values[i]);
  fmts = cJSON_AddArrayToObject(h, "formats");
  for (i = 0; i < lowp_format_count(); i++)
    cJSON_AddItemToArray(fmts, format_descriptor(lowp_format_at(i)));
  return h;
}

static void print_header(const cJSON *h, const lowp_run_t *r) {
  const cJSON *it;
  printf("# lowp run %s\n", r->exp->name);
  {
    char q[2048];
    printf("#   question: %s\n", lowp_run_text(r, r->exp->question, q, sizeof q));
  }
  printf("#   git %s, build %s, %s\n",
         cJSON_GetObjectItem(h, "git_revision")->valuestring, LOWP_BUILD_TYPE,
         cJSON_GetObjectItem(h, "device")->valuestring);
  printf("#   seed %llu%s\n", (unsigned long long)r->seed, r->quick ? " (quick)" : "");
  cJSON_ArrayForEach(it, cJSON_GetObjectItem(h, "params"))
    printf("#   %s = %s\n", it->string, it->valuestring);
  printf("#   formats:");
  cJSON_ArrayForEach(it, cJSON_GetObjectItem(h, "formats"))
    printf(" %s(p=%d,emin=%d,emax=%d)", cJSON_GetObjectItem(it, "name")->valuestring,
           cJSON_GetObjectItem(it, "p")->valueint, cJSON_GetObjectItem(it, "emin")->valueint,
           cJSON_GetObjectItem(it, "emax")->valueint);
  printf("\n");
  fflush(stdout);
}

static int write_json(const char *path, const cJSON *root) {
  char *s = cJSON_Print(root);
  FILE *f;
  int ok;
  if (!s) return 0;
  f = fopen(path, "w");
  if (!f) { free(s); return 0; }
  ok = fputs(s, f) >= 0 && fputc('\n', f) != EOF;
  ok = (fclose(f) == 0) && ok;
  free(s);
  return ok;
}

/* `lowp run NAME --help`: the experiment's question and parameters */
static void experiment_help(const lowp_experiment_t *e) {
  const lowp_param_t *p;
  printf("usage: lowp run %s [--key=value ...] [--quick] [--seed=S] [--out DIR]\n"
         "question: %s\nmethod: %s\nparameters (default; quick):\n", e->name, e->question,
         e->method);
  for (p = e->params; p && p->key; p++)
    printf("  --%s=%s%s%s%s  %s\n", p->key, p->def, p->quick ? " (quick: " : "",
           p->quick ? p->quick : "", p->quick ? ")" : "", p->help);
  printf("Output: results.json, CSV, plots and summary.md in --out DIR "
         "(default reports/%s). Exit status: 0 ok, 1 a verdict failed, 2 bad input.\n",
         e->name);
}

static void run_usage(FILE *out) {
  size_t i;
  fprintf(out, "usage: lowp run EXPERIMENT [--key=value ...] [--quick] [--seed=S] [--out DIR]\n"
               "experiments (lowp list shows their questions):\n");
  for (i = 0; i < lowp_experiment_count(); i++)
    fprintf(out, "  %s\n", lowp_experiment_at(i)->name);
}

/* The arguments of `lowp run NAME` (after --help and --quick were seen):
   --out, --seed and --key=value / --key value of the experiment's np
   parameters (keys[]) into values[]; dies on an unknown, repeated or
   valueless one. */
static void parse_args(const lowp_experiment_t *e, int argc, char **argv, const char **keys,
                       const char **values, size_t np, const char **out, uint64_t *seed) {
  size_t i, klen;
  int a;
  for (a = 0; a < argc; a++) {
    const char *arg = argv[a], *eq;
    if (!strcmp(arg, "--quick")) continue;
    if (!strcmp(arg, "--out")) {
      if (a + 1 >= argc) lowp_cli_die("run", "--out needs a folder");
      *out = argv[++a];
      continue;
    }
    if (!strncmp(arg, "--out=", 6)) { *out = arg + 6; continue; }
    if (!strcmp(arg, "--seed")) {
      if (a + 1 >= argc) lowp_cli_die("run", "--seed needs a number");
      *seed = (uint64_t)lowp_cli_int("run", "--seed", argv[++a], 0, INT64_MAX);
      continue;
    }
    if (!strncmp(arg, "--seed=", 7)) {
      *seed = (uint64_t)lowp_cli_int("run", "--seed", arg + 7, 0, INT64_MAX);
      continue;
    }
    if (strncmp(arg, "--", 2) || arg[2] == '\0' || arg[2] == '=')
      lowp_cli_die("run", "unexpected argument '%s' (parameters are --key=value or --key value; "
                   "see lowp run %s --help)", arg, e->name);
    eq = strchr(arg, '=');
    klen = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    for (i = 0; i < np; i++)
      if (strlen(keys[i]) == klen && !strncmp(keys[i], arg + 2, klen)) break;
    if (i == np) {
      char acc[1024] = "";
      size_t j;
      for (j = 0; j < np; j++) {
        strncat(acc, " ", sizeof acc - strlen(acc) - 1);
        strncat(acc, keys[j], sizeof acc - strlen(acc) - 1);
      }
      lowp_cli_die("run", "unknown parameter '%.*s' for %s; accepted:%s", (int)klen,
                   arg + 2, e->name, np ? acc : " (none)");
    }
    /* (a parameter given twice: refused before, tools/lowp.c's refuse_repeats) */
    if (eq) values[i] = eq + 1;
    else if (a + 1 < argc) values[i] = argv[++a];
    else lowp_cli_die("run", "parameter --%s needs a value", keys[i]);
  }
}

/* ----------------------------------------------------------------- main */

int lowp_run_experiment(const lowp_experiment_t *e, int argc, char **argv,
                        const char *default_out) {
  const char *keys[64], *values[64], *out = NULL;
  size_t np = 0, i;
  int quick = 0, a, rc, st;
  uint64_t seed = DEFAULT_SEED;
  char outdir[4096], what[200];
  lowp_outdir_t od;
  lowp_run_t r;
  cJSON *root, *header;
  static char tq[2048], tm[4096], te[2048]; /* the texts with the parameters filled in */
  FILE *summary;
  /* under mpirun every rank runs the experiment; its work items are shared
     (par/par.h) and rank 0 alone writes the folder and prints */
  int job = lowp_par_spread(), me = lowp_par_rank();

  for (np = 0; e->params && e->params[np].key; np++) {
    if (np >= 63) lowp_cli_die("run", "too many parameters in %s", e->name);
    keys[np] = e->params[np].key;
    values[np] = e->params[np].def;
  }
  keys[np] = NULL;
  values[np] = NULL;
  for (a = 0; a < argc; a++)
    if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
      if (lowp_par_rank() == 0) experiment_help(e); /* once in an MPI job */
      return LOWP_EXIT_OK;
    }
  for (a = 0; a < argc; a++)
    if (!strcmp(argv[a], "--quick")) quick = 1;
  if (quick)
    for (i = 0; i < np; i++)
      if (e->params[i].quick) values[i] = e->params[i].quick;
  parse_args(e, argc, argv, keys, values, np, &out, &seed);
  /* check parameter values before anything is printed or created */
  memset(&r, 0, sizeof r);
  r.exp = e;
  r.seed = seed;
  r.quick = quick;
  r.keys = keys;
  r.values = values;
  /* the command line holds: its arrays in huge pages (tools/thp.h). Before the experiment's own check, which
     the new image does again: a check that reads the experiment's data (fp8-quantization's Fashion-MNIST, 0.3 s
     of CPU) is done once, in the image that runs, and a parameter refused there costs one exec more */
  lowp_thp_reexec();
  if (e->check) e->check(&r);

  if ((size_t)snprintf(outdir, sizeof outdir, "%s%s%s", out ? out : default_out,
                       out ? "" : "/", out ? "" : e->name) >= sizeof outdir)
    lowp_cli_die("run", "output folder name too long");
  if (job && me != 0) {
    /* the other ranks' copies of the files go to a scratch folder, removed
       at the end; their standard output is rank 0's to give */
    const char *tmp = getenv("TMPDIR");
    if ((size_t)snprintf(outdir, sizeof outdir, "%s/lowp-run-rank%d-%ld",
                         tmp && *tmp ? tmp : "/tmp", me, (long)getpid()) >= sizeof outdir)
      lowp_cli_die("run", "rank %d: scratch folder name too long", me);
    if (!freopen("/dev/null", "w", stdout))
      lowp_cli_die("run", "rank %d: cannot quiet its standard output", me);
  }
  lowp_outdir_begin(&od, "run", "--out", outdir);
  if (job) lowp_par_sync(0);
  r.outdir = od.tmp;
  r.progress = isatty(2) && me == 0;
  root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "generated_by", "lowp run (do not edit: re-run to update)");
  header = run_header(&r);
  cJSON_AddItemToObject(root, "header", header);
  /* what the run executed on (the date too): kept apart from the rest, which is the same bytes for the same
     seed and revision except the rows environment_dependent names (tools/env.h) */
  cJSON_AddItemToObject(root, "environment", lowp_env_manifest(e->name));
  cJSON_AddItemToObject(root, "environment_dependent", lowp_env_dependent(e->name));
  /* the texts follow the run's parameters ("{lo}" -> its value) */
  lowp_run_text(&r, e->question, tq, sizeof tq);
  lowp_run_text(&r, e->method, tm, sizeof tm);
  lowp_run_text(&r, e->expected, te, sizeof te);
  cJSON_AddStringToObject(root, "question", tq);
  cJSON_AddStringToObject(root, "method", tm);
  cJSON_AddStringToObject(root, "expected", te);
  r.results = cJSON_AddObjectToObject(root, "results");
  print_header(header, &r);

  summary = fopen(lowp_run_path(&r, "summary.md"), "w");
  if (!summary) lowp_cli_die("run", "cannot write into '%s'", od.tmp);
  fprintf(summary, "<!-- generated by lowp run %s, do not edit -->\n# %s\n\n**Question.** %s\n\n"
          "**Method.** %s\n\n**Expected.** %s\n\n**Seed** %llu%s.\n\n",
          e->name, e->name, tq, tm, te,
          (unsigned long long)seed, quick ? " (quick settings)" : "");
  r.summary = summary;

  /* the plots are drawn after the run, all by one gnuplot (lib/io/plot.c): as a plot that fails during the
     run, one that fails there publishes nothing */
  lowp_plot_defer(1);
  rc = e->run(&r);
  if (rc == 2) lowp_plot_discard();
  else if ((st = lowp_plot_flush()) != LOWP_OK) rc = lowp_run_plot_failed(&r, st);
  lowp_plot_defer(0);
  if (r.progress) fprintf(stderr, "\r\033[K");
  if (fclose(summary) != 0) rc = rc == 2 ? 2 : 3;
  /* a rank that failed (exit 2): the job ends here, without output */
  if (job && lowp_par_sync(rc == 2)) rc = 2;
  if (rc == 2) {
    /* bad input found during the run (the experiment said why): exit 2
       means nothing is published */
    cJSON_Delete(root);
    lowp_outdir_abort(&od);
    return LOWP_EXIT_USAGE;
  }
  if (job && me != 0) rc = rc == 3 ? 0 : rc; /* its scratch copy is dropped anyway */
  else if (rc == 3 || !write_json(lowp_run_path(&r, "results.json"), root))
    lowp_cli_die("run", "cannot write results into '%s'", od.tmp);
  cJSON_Delete(root);
  snprintf(what, sizeof what, "`lowp run %s`", e->name);
  if (job && me != 0) { /* rank 0 publishes; wait for its verdict */
    lowp_outdir_abort(&od);
    lowp_par_sync(0);
    return rc;
  }
  lowp_outdir_publish(&od, "run", what);
  if (job) lowp_par_sync(0);
  printf("results: %s/ (results.json, summary.md, CSV, plots)%s\n", od.final,
         rc == 1 ? "  -- a verdict FAILED" : "");
  return rc;
}

int lowp_cmd_run(int argc, char **argv) {
  const lowp_experiment_t *e;
  if (argc < 2) lowp_cli_die("run", "missing experiment name (see lowp run --help)");
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    if (lowp_par_rank() == 0) run_usage(stdout);
    return LOWP_EXIT_OK;
  }
  e = lowp_experiment_find(argv[1]);
  if (!e) lowp_cli_die("run", "unknown experiment '%s' (lowp list shows them)", argv[1]);
  return lowp_run_experiment(e, argc - 2, argv + 2, "reports");
}

int lowp_cmd_list(int argc, char **argv) {
  size_t i;
  int verbose = argc > 1 && !strcmp(argv[1], "-v");
  if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    printf("usage: lowp list [-v]\n  the experiments and their questions; -v adds each "
           "one's method and parameters (lowp run NAME --help shows one)\n");
    return LOWP_EXIT_OK;
  }
  if (argc > 2) lowp_cli_die("list", "unexpected argument '%s' (see lowp list --help)", argv[2]);
  if (argc > 1 && !verbose)
    lowp_cli_die("list", "unknown option '%s'; accepted: -v (see lowp list --help)", argv[1]);
  for (i = 0; i < lowp_experiment_count(); i++) {
    const lowp_experiment_t *e = lowp_experiment_at(i);
    const lowp_param_t *p;
    printf("%-22s %s\n", e->name, e->question);
    if (!verbose) continue;
    printf("%-22s method: %s\n", "", e->method);
    for (p = e->params; p && p->key; p++)
      printf("%-22s   --%s=%s%s%s  %s\n", "", p->key, p->def, p->quick ? " (quick: " : "",
             p->quick ? p->quick : "", p->help);
  }
  return LOWP_EXIT_OK;
}
