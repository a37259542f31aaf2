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

#define _POSIX_C_SOURCE 200809L

#include <cjson/cJSON.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check/op.h"
#include "check/pipeline.h"
#include "check/plugin.h"
#include "check/spec.h"
#include "check/subject.h"
#include "cli.h"
#include "io/atomic.h"
#include "io/npy.h"
#include "model/tc.h"
#include "par.h"
#include "progress.h"
#include "status.h"
#ifdef LOWP_HAVE_KERNEL_SUBJECT
#include "../kernels/registry.h" /* not experiments/registry.h */
#endif

#ifndef LOWP_VERSION
#define LOWP_VERSION "0.1.0"
#endif
/** Version of the baseline file format. */
#define BASELINE_FORMAT 1

static const char *CMD = "check";

/* ------------------------------------------------------ private types */

typedef struct {
  const lowp_spec_check_t *sc;
  lowp_problem_t p;
  lowp_subject_t subj;
  int subj_open;
  lowp_subject_t refs[64];       /* per rule with a reference subject */
  int ref_open[64];
  lowp_tc_model_t models[64];    /* per bound-model rule with "model" */
  double *file_in[LOWP_OP_MAXIO], *file_data[LOWP_OP_MAXIO];
  /* results */
  lowp_check_inputs_t in;
  lowp_check_result_t res;
  int measured;                  /* 1: res valid */
  int pass;
  char error[1200];              /* subject or reference failure */
  lowp_verdict_t v[64];
  int n_v;
  double baseline[LOWP_METRIC_COUNT]; /* stored values (NaN: none) */
} run_t;

typedef struct {
  const char *spec_path, *junit, *json;
  int update_baseline, list_ops, threads;
  const char *only[64];
  int n_only;
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
    "  --update-baseline  rewrite the spec's baseline file from this run and say\n"
    "                     what changed (baseline rules are not applied)\n"
    "  --only NAME        run only this check (repeatable)\n"
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
  if (*i + 1 >= argc) lowp_cli_die(CMD, "option %s needs an argument", key);
  return argv[++*i];
}

static void parse(opts_t *o, int argc, char **argv) {
  int i;
  const char *v;
  memset(o, 0, sizeof *o);
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      if (lowp_par_rank() == 0) usage(stdout);
      exit(0);
    }
    else if (!strcmp(a, "--list-ops")) o->list_ops = 1;
    else if (!strcmp(a, "--update-baseline")) o->update_baseline = 1;
    else if ((v = opt_value(argc, argv, &i, "--junit"))) o->junit = v;
    else if ((v = opt_value(argc, argv, &i, "--json"))) o->json = v;
    else if ((v = opt_value(argc, argv, &i, "--only"))) {
      if (o->n_only >= 64) lowp_cli_die(CMD, "at most 64 --only options");
      if (!v[0]) lowp_cli_die(CMD, "--only needs a check name");
      o->only[o->n_only++] = v;
    } else if ((v = opt_value(argc, argv, &i, "--threads")))
      o->threads = (int)lowp_cli_int(CMD, "--threads", v, 1, 1024);
    else if (a[0] == '-' && a[1] != '\0')
      lowp_cli_die(CMD, "unknown option '%s' (see lowp check --help)", a);
    else if (o->spec_path)
      lowp_cli_die(CMD, "one spec at a time ('%s' and '%s')", o->spec_path, a);
    else o->spec_path = a;
  }
  if (!o->spec_path && !o->list_ops) lowp_cli_die(CMD, "give a spec file (or - for stdin); see lowp check --help");
  if (o->junit && o->json && !strcmp(o->junit, o->json))
    lowp_cli_die(CMD, "--junit and --json name the same file '%s'", o->junit);
}

static void add_num(cJSON *obj, const char *key, double v) {
  if (isfinite(v)) cJSON_AddNumberToObject(obj, key, v);
  else if (isnan(v)) cJSON_AddNullToObject(obj, key);
  else cJSON_AddStringToObject(obj, key, v > 0 ? "inf" : "-inf");
}

static double get_num(const cJSON *j) {
  if (cJSON_IsNumber(j)) return j->valuedouble;
  if (cJSON_IsString(j) && !strcmp(j->valuestring, "inf")) return INFINITY;
  return NAN;
}

/* "check 'x' (checks[3]): " */
static void die_check(const lowp_spec_check_t *sc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;
static void die_check(const lowp_spec_check_t *sc, const char *fmt, ...) {
  va_list ap;
  /* in an MPI job only the lowest failed rank speaks (par/par.h) */
  if (!lowp_par_sync(1)) exit(LOWP_EXIT_USAGE);
  fprintf(stderr, "lowp check: check '%s' (checks[%d]): ", sc->name, sc->index);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(LOWP_EXIT_USAGE);
}

/* physical memory in bytes (0 if unknown) */
static double phys_mem(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  return (pages > 0 && psz > 0) ? (double)pages * (double)psz : 0;
}

/* ------------------------------------------------------------ subjects */

/* The subject constructors live in kernels/subject.c and lib/check/
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

static int open_kernel(lowp_subject_t *s, const char *name, const char *params,
                       const lowp_problem_t *p, char *err, size_t errlen) {
#ifdef HAVE_KERNEL_SUBJECT
  int st = lowp_kernel_subject_open(s, name, params, err, errlen);
  if (!st) {
    st = lowp_kernel_subject_bind(s, p, err, errlen);
    if (st) lowp_subject_close(s);
  }
  return st;
#else
  (void)s; (void)params; (void)p;
  snprintf(err, errlen, "kernel '%s': this build has no kernel subjects", name);
  return LOWP_EUNSUPPORTED;
#endif
}

static int open_plugin(lowp_subject_t *s, const char *path, const char *kernel, double timeout,
                       const lowp_problem_t *p, char *err, size_t errlen) {
#ifdef HAVE_PLUGIN_SUBJECT
  return lowp_plugin_subject_open_ex(s, path, kernel, timeout, p, err, errlen);
#else
  (void)s; (void)kernel; (void)timeout; (void)p;
  snprintf(err, errlen, "plugin %s: this build has no plugin subjects", path);
  return LOWP_EUNSUPPORTED;
#endif
}

static int open_subject(lowp_subject_t *s, const lowp_spec_subject_t *d, lowp_problem_t *p,
                        char *err, size_t errlen) {
  memset(s, 0, sizeof *s);
  if (d->kind == LOWP_SPEC_KERNEL) return open_kernel(s, d->kernel, d->params, p, err, errlen);
  if (d->kind == LOWP_SPEC_PLUGIN) return open_plugin(s, d->plugin, d->kernel, d->timeout, p, err, errlen);
#ifdef HAVE_TENSOR_SUBJECT
  {
    lowp_tensor_ref_t ins[LOWP_OP_MAXIO], outs[LOWP_OP_MAXIO];
    int i;
    if (d->n_inputs != p->op->n_in)
      return snprintf(err, errlen, "tensors: %d input files for %s, which has %d inputs",
                      d->n_inputs, p->op->name, p->op->n_in), LOWP_ESHAPE;
    /* the first outputs, in the operation's order: a framework may save
       fewer (PyTorch's layer_norm returns y only) */
    if (d->n_outputs < 1 || d->n_outputs > p->op->n_out)
      return snprintf(err, errlen, "tensors: %d output files for %s, which has %d output%s (%s%s%s%s%s)",
                      d->n_outputs, p->op->name, p->op->n_out, p->op->n_out > 1 ? "s; give the first ones" : "",
                      p->op->out_names[0], p->op->n_out > 1 ? ", " : "", p->op->n_out > 1 ? p->op->out_names[1] : "",
                      p->op->n_out > 2 ? ", " : "", p->op->n_out > 2 ? p->op->out_names[2] : ""), LOWP_ESHAPE;
    memset(outs, 0, sizeof outs);
    for (i = 0; i < d->n_inputs; i++) {
      ins[i].path = d->inputs[i].path;
      ins[i].tensor = d->inputs[i].tensor;
      ins[i].format = d->inputs[i].format;
    }
    for (i = 0; i < d->n_outputs; i++) {
      outs[i].path = d->outputs[i].path;
      outs[i].tensor = d->outputs[i].tensor;
      outs[i].format = d->outputs[i].format;
    }
    return lowp_tensor_subject_open(s, ins, outs, p, err, errlen);
  }
#else
  snprintf(err, errlen, "this build has no tensor subjects");
  return LOWP_EUNSUPPORTED;
#endif
}

/* ---------------------------------------------------------------- inputs */

static const char *npy_msg(int st) {
  switch (st) {
  case LOWP_EFILE: return "not a .npy file, or its header is corrupt or its data truncated";
  case LOWP_EUNSUPPORTED: return "a .npy dtype or layout lowp does not read";
  case LOWP_EIO: return "cannot open or read the file";
  case LOWP_ENOMEM: return "the array would not fit in memory";
  case LOWP_EINVAL: return "raw bytes need an 8-bit \"format\" and must be values of it";
  default: return lowp_status_str(st);
  }
}

/* inputs from .npy files: dims from their shapes, values rounded (rne) to
   the input formats */
static void read_files(run_t *r) {
  const lowp_spec_check_t *sc = r->sc;
  lowp_npy_info_t info[LOWP_OP_MAXIO];
  const size_t *shapes[LOWP_OP_MAXIO];
  int ndims[LOWP_OP_MAXIO], i;
  char err[400];
  for (i = 0; i < sc->n_files; i++) {
    lowp_format_t fm = sc->n_in_formats ? r->p.in[i] : LOWP_FMT_FP64;
    const lowp_spec_file_t *f = &sc->files[i];
    int st;
    if (f->tensor) die_check(sc, "inputs.files[%d] %s: \"tensor\" is for .safetensors files, "
                             "which a tensors subject reads; kernel and plugin inputs are .npy",
                             i, f->path);
    if (f->format && lowp_format_parse(&fm, f->format, NULL, 0)) die_check(sc, "bad format");
    st = lowp_npy_read(f->path, &info[i], &r->file_in[i], &fm, 0);
    if (st) die_check(sc, "inputs.files[%d] %s: %s", i, f->path, npy_msg(st));
    /* a default follows the data given: the file's own format */
    if (!sc->n_in_formats && !r->p.op->in_index[i]) {
      if (f->format) r->p.in[i] = fm;
      else if (info[i].dtype == LOWP_NPY_F2) r->p.in[i] = LOWP_FMT_FP16;
      else if (info[i].dtype == LOWP_NPY_F4) r->p.in[i] = LOWP_FMT_FP32;
      else if (info[i].dtype == LOWP_NPY_F8) r->p.in[i] = LOWP_FMT_FP64;
      else die_check(sc, "inputs.files[%d] %s: raw bits: name their format (\"format\") or "
                     "the check's \"in\"", i, f->path);
    }
    shapes[i] = info[i].shape;
    ndims[i] = info[i].ndim;
  }
  if (!sc->has_out) r->p.out = r->p.in[0]; /* the output follows the (first) input */
  if (lowp_op_dims_infer(&r->p, shapes, ndims, err, sizeof err))
    die_check(sc, "inputs.files: %s", err);
  if (sc->has_shape && memcmp(&sc->dims, &r->p.dims, sizeof sc->dims))
    die_check(sc, "\"shape\" (batch %zu, m %zu, n %zu, k %zu) disagrees with the input files "
              "(batch %zu, m %zu, n %zu, k %zu)", sc->dims.batch, sc->dims.m, sc->dims.n,
              sc->dims.k, r->p.dims.batch, r->p.dims.m, r->p.dims.n, r->p.dims.k);
  for (i = 0; i < sc->n_files; i++) {
    size_t c = 1, k;
    for (k = 0; k < (size_t)info[i].ndim; k++) c *= info[i].shape[k];
    if (r->p.op->in_index[i]) continue;
    (void)lowp_round_array_f64(r->file_in[i], r->file_in[i], c, &r->p.in[i], NULL, LOWP_RND_NE);
  }
  for (i = 0; i < sc->n_data; i++) {
    lowp_npy_info_t di;
    const lowp_spec_file_t *f = &sc->data[i];
    int st = lowp_npy_read(f->path, &di, &r->file_data[i], NULL, 0);
    if (st) die_check(sc, "inputs.data[%d] %s: %s", i, f->path, npy_msg(st));
    if (di.ndim != info[i].ndim || memcmp(di.shape, info[i].shape, (size_t)di.ndim * sizeof(size_t)))
      die_check(sc, "inputs.data[%d] %s: its shape differs from inputs.files[%d]'s", i, f->path, i);
  }
}

/* --------------------------------------------------------------- baseline */

typedef struct {
  cJSON *root;      /* the old baseline file, or NULL */
  const cJSON *checks;
} baseline_t;

static void baseline_load(baseline_t *b, const lowp_spec_t *spec, run_t *runs, int n_runs,
                          int need, int updating) {
  FILE *f;
  char *buf;
  long len;
  const cJSON *v, *it;
  int i, m;
  memset(b, 0, sizeof *b);
  if (!spec->baseline) {
    if (need || updating)
      lowp_cli_die(CMD, "%s: the spec names no \"baseline\" file", updating ?
                   "--update-baseline" : "a baseline rule");
    return;
  }
  f = fopen(spec->baseline, "rb");
  if (!f) {
    if (need && !updating)
      lowp_cli_die(CMD, "baseline %s: cannot read it (run lowp check --update-baseline to "
                   "create it)", spec->baseline);
    return;
  }
  fseek(f, 0, SEEK_END);
  len = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc(len > 0 ? (size_t)len + 1 : 1);
  if (!buf || len < 0 || fread(buf, 1, (size_t)len, f) != (size_t)len) {
    fclose(f);
    free(buf);
    lowp_cli_die(CMD, "baseline %s: cannot read it", spec->baseline);
  }
  fclose(f);
  buf[len] = '\0';
  b->root = cJSON_Parse(buf);
  free(buf);
  if (!b->root || !cJSON_IsObject(b->root) ||
      !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(b->root, "lowp_baseline")) ||
      !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(b->root, "checks"))) {
    if (updating) { cJSON_Delete(b->root); b->root = NULL; return; }
    lowp_cli_die(CMD, "baseline %s: not a lowp baseline file", spec->baseline);
  }
  b->checks = cJSON_GetObjectItemCaseSensitive(b->root, "checks");
  if (updating) return;
  if (cJSON_GetObjectItemCaseSensitive(b->root, "lowp_baseline")->valuedouble != BASELINE_FORMAT)
    lowp_cli_die(CMD, "baseline %s: baseline format %g, this lowp writes %d (run "
                 "--update-baseline)", spec->baseline,
                 cJSON_GetObjectItemCaseSensitive(b->root, "lowp_baseline")->valuedouble,
                 BASELINE_FORMAT);
  v = cJSON_GetObjectItemCaseSensitive(b->root, "lowp_version");
  if (!cJSON_IsString(v) || strcmp(v->valuestring, LOWP_VERSION))
    lowp_cli_die(CMD, "baseline %s was written by lowp %s, this is lowp %s (run "
                 "--update-baseline to accept the new version's numbers)", spec->baseline,
                 cJSON_IsString(v) ? v->valuestring : "(unknown)", LOWP_VERSION);
  /* every check it holds must be in the spec, with the same definition */
  for (it = b->checks->child; it; it = it->next) {
    const lowp_spec_check_t *sc = lowp_spec_find(spec, it->string);
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(it, "fingerprint");
    if (!sc)
      lowp_cli_die(CMD, "baseline %s holds check '%s', which the spec does not have: it was "
                   "written for another spec", spec->baseline, it->string);
    if (!cJSON_IsString(fp) || strcmp(fp->valuestring, sc->fingerprint))
      lowp_cli_die(CMD, "baseline %s: check '%s' (checks[%d]) is defined differently from when "
                   "the baseline was written (fingerprint %s, now %s): run --update-baseline",
                   spec->baseline, sc->name, sc->index, cJSON_IsString(fp) ? fp->valuestring : "?",
                   sc->fingerprint);
  }
  for (i = 0; i < n_runs; i++) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(b->checks, runs[i].sc->name), *mt;
    int uses = 0, k;
    for (k = 0; k < runs[i].sc->n_rules; k++)
      if (runs[i].sc->rules[k].rule.kind == LOWP_RULE_BASELINE) uses = 1;
    for (m = 0; m < LOWP_METRIC_COUNT; m++) runs[i].baseline[m] = NAN;
    if (!uses) continue;
    if (!e)
      lowp_cli_die(CMD, "baseline %s has no entry for check '%s' (checks[%d]): written for "
                   "another spec? run --update-baseline", spec->baseline, runs[i].sc->name,
                   runs[i].sc->index);
    mt = cJSON_GetObjectItemCaseSensitive(e, "metrics");
    for (m = 0; m < LOWP_METRIC_COUNT; m++)
      runs[i].baseline[m] = get_num(cJSON_GetObjectItemCaseSensitive(mt, lowp_metric_name((lowp_metric_t)m)));
    for (k = 0; k < runs[i].sc->n_rules; k++) {
      const lowp_spec_rule_t *ru = &runs[i].sc->rules[k];
      if (ru->rule.kind == LOWP_RULE_BASELINE && isnan(runs[i].baseline[ru->rule.metric]))
        lowp_cli_die(CMD, "baseline %s: check '%s' (checks[%d]) has no stored %s", spec->baseline,
                     runs[i].sc->name, runs[i].sc->index, lowp_metric_name(ru->rule.metric));
    }
  }
}

/* ------------------------------------------------------------- preparing */

static void prepare(run_t *r, const lowp_spec_check_t *sc) {
  char err[600];
  int i, st;
  memset(r, 0, sizeof *r);
  r->sc = sc;
  r->p.op = sc->op;
  r->p.eps = sc->eps;
  r->p.reduction_mean = sc->reduction_mean;
  for (i = 0; i < sc->op->n_in; i++) {
    if (sc->n_in_formats) r->p.in[i] = sc->in[i];
    if (sc->op->in_index[i]) r->p.in[i] = LOWP_FMT_FP64;
  }
  if (sc->has_out) r->p.out = sc->out;
  if (sc->subject.kind == LOWP_SPEC_TENSORS) {
    /* the files decide what the spec leaves open */
    if (!sc->n_in_formats)
      for (i = 0; i < sc->op->n_in; i++)
        if (!sc->op->in_index[i]) r->p.in[i].name = NULL;
    if (!sc->has_out) r->p.out.name = NULL;
    r->p.dims.m = 0;
    st = open_subject(&r->subj, &sc->subject, &r->p, err, sizeof err);
    if (st) die_check(sc, "subject: %s", err);
    r->subj_open = 1;
    if (sc->has_shape && memcmp(&sc->dims, &r->p.dims, sizeof sc->dims))
      die_check(sc, "\"shape\" (batch %zu, m %zu, n %zu, k %zu) disagrees with the tensor files "
                "(batch %zu, m %zu, n %zu, k %zu)", sc->dims.batch, sc->dims.m, sc->dims.n,
                sc->dims.k, r->p.dims.batch, r->p.dims.m, r->p.dims.n, r->p.dims.k);
  } else {
    if (sc->generated) r->p.dims = sc->dims;
    else read_files(r);
    st = open_subject(&r->subj, &sc->subject, &r->p, err, sizeof err);
    if (st) die_check(sc, "subject: %s", err);
    r->subj_open = 1;
  }
  {
    /* sizes whose arrays cannot fit are refused now, not after hours:
       inputs (values, data, |.| copies) and outputs (computed, exact, exact
       in the output format, exact of the data, |A||B|), each binary64 */
    size_t sh[LOWP_OP_MAXDIM], c;
    int nd, k;
    double need = 0, have = phys_mem();
    for (k = 0; k < sc->op->n_in + sc->op->n_out; k++) {
      if (lowp_op_shape(&r->p, k, sh, &nd, &c))
        die_check(sc, "the sizes (batch %zu, m %zu, n %zu, k %zu) are too large", r->p.dims.batch,
                  r->p.dims.m, r->p.dims.n, r->p.dims.k);
      need += 8.0 * (double)c * (k < sc->op->n_in ? 4 : 5);
    }
    if (have > 0 && need > 0.8 * have)
      die_check(sc, "the sizes (batch %zu, m %zu, n %zu, k %zu) need %.3g GiB of memory; this "
                "machine has %.3g GiB", r->p.dims.batch, r->p.dims.m, r->p.dims.n, r->p.dims.k,
                need / 1073741824.0, have / 1073741824.0);
  }
  if (sc->n_rules > 64) die_check(sc, "at most 64 rules per check");
  for (i = 0; i < sc->n_rules; i++) {
    const lowp_spec_rule_t *ru = &sc->rules[i];
    if (ru->has_ref) {
      lowp_problem_t q = r->p;
      st = open_subject(&r->refs[i], &ru->ref, &q, err, sizeof err);
      if (st) die_check(sc, "rule %d: reference subject: %s", i + 1, err);
      r->ref_open[i] = 1;
    }
    if (ru->rule.kind == LOWP_RULE_BOUND) {
      if (sc->op->kind != LOWP_OPKIND_SUMPROD)
        die_check(sc, "rule %d: a %s bound applies to sums of products (sum, dot, gemv, gemm), "
                  "not to %s", i + 1, ru->rule.bound == LOWP_BOUND_GAMMA ? "gamma" :
                  ru->rule.bound == LOWP_BOUND_PROB ? "prob" : "model", sc->op->name);
      if (ru->model) {
        st = lowp_tc_model_get(&r->models[i], ru->model, &r->p.in[0], &r->p.out, err, sizeof err);
        if (st) die_check(sc, "rule %d: model '%s': %s", i + 1, ru->model, err);
      } else if (ru->rule.bound == LOWP_BOUND_MODEL && !r->subj.has_model) {
        die_check(sc, "rule %d: the subject (%s) declares no tensor-core model: name one with "
                  "\"model\"", i + 1, r->subj.name);
      } else if (ru->rule.bound != LOWP_BOUND_MODEL && !ru->rule.has_accum && !r->subj.has_accum) {
        die_check(sc, "rule %d: the subject (%s) does not say how it accumulates: give \"order\" "
                  "and \"acc\" in the rule", i + 1, r->subj.name);
      }
      {
        /* the bound must exist for this method (no probabilistic bound for
           Kahan or directed rounding, ...) */
        lowp_rule_t rl = ru->rule;
        lowp_check_bound_t b;
        if (ru->model) {
          rl.has_model = 1;
          rl.model = r->models[i];
        }
        st = lowp_check_rule_bound(&b, &rl, &r->p, &r->subj, 0);
        if (st == LOWP_EUNSUPPORTED)
          die_check(sc, "rule %d: no %s bound is known for this method (%s)", i + 1,
                    rl.bound == LOWP_BOUND_PROB ? "probabilistic" : "such",
                    rl.bound == LOWP_BOUND_PROB
                        ? "it needs round to nearest and a non-compensated order"
                        : "see docs/pipeline.md, Bounds");
        if (st) die_check(sc, "rule %d: bound: %s", i + 1, lowp_status_str(st));
      }
    }
  }
}

static void release(run_t *r) {
  int i;
  if (r->subj_open) lowp_subject_close(&r->subj);
  for (i = 0; i < 64; i++)
    if (r->ref_open[i]) lowp_subject_close(&r->refs[i]);
  for (i = 0; i < LOWP_OP_MAXIO; i++) {
    free(r->file_in[i]);
    free(r->file_data[i]);
  }
  lowp_check_inputs_free(&r->in);
  lowp_check_result_free(&r->res);
}

/* ---------------------------------------------------------------- running */

static void execute(run_t *r, int updating) {
  const lowp_spec_check_t *sc = r->sc;
  char err[600];
  int i, st;
  lowp_check_opts_t co = {.prob = 0.99};
  r->pass = 0;
  if (sc->subject.kind == LOWP_SPEC_TENSORS) {
#ifdef HAVE_TENSOR_SUBJECT
    const double *const *x = lowp_tensor_subject_inputs(&r->subj);
    st = lowp_check_inputs_copy(&r->in, &r->p, x, NULL);
#else
    st = LOWP_EUNSUPPORTED;
#endif
  } else if (sc->generated) {
    st = lowp_check_inputs_generate(&r->in, &r->p, &sc->dist, sc->seed);
  } else {
    st = lowp_check_inputs_copy(&r->in, &r->p, (const double *const *)r->file_in,
                                sc->n_data ? (const double *const *)r->file_data : NULL);
  }
  if (st) {
    snprintf(r->error, sizeof r->error, "inputs: %s", lowp_status_str(st));
    return;
  }
  /* a large GEMM's exact reference takes a while: show it (terminal only) */
  co.progress.fn = lowp_cli_progress;
  co.progress.ctx = (void *)sc->name;
  st = lowp_check_measure(&r->res, &r->p, &r->subj, &r->in, &co, err, sizeof err);
  lowp_cli_progress_end();
  co.progress.fn = NULL;
  if (st) {
    snprintf(r->error, sizeof r->error, "%s", err[0] ? err : lowp_status_str(st));
    return;
  }
  r->measured = 1;
  r->pass = 1;
  for (i = 0; i < sc->n_rules; i++) {
    lowp_rule_t rule = sc->rules[i].rule;
    lowp_check_result_t other;
    int have_other = 0;
    memset(&other, 0, sizeof other);
    if (rule.kind == LOWP_RULE_BOUND && sc->rules[i].model) {
      rule.has_model = 1;
      rule.model = r->models[i];
    }
    if (rule.kind == LOWP_RULE_BASELINE) {
      if (updating) continue; /* being rewritten: not applied */
      rule.baseline = r->baseline[rule.metric];
    }
    if (sc->rules[i].has_ref) {
      st = lowp_check_measure(&other, &r->p, &r->refs[i], &r->in, &co, err, sizeof err);
      if (st) {
        snprintf(r->error, sizeof r->error, "rule %d: reference subject %.200s failed: %.600s", i + 1,
                 r->refs[i].name, err);
        lowp_check_result_free(&other);
        r->pass = 0;
        continue;
      }
      rule.other = &other;
      have_other = 1;
    }
    st = lowp_check_rule_eval(&r->v[r->n_v], &rule, &r->res, &r->subj);
    if (st) {
      r->v[r->n_v].pass = 0;
      if (!r->v[r->n_v].msg[0])
        snprintf(r->v[r->n_v].msg, sizeof r->v[r->n_v].msg, "%s", lowp_status_str(st));
    }
    if (!r->v[r->n_v].pass) r->pass = 0;
    r->n_v++;
    if (have_other) lowp_check_result_free(&other);
  }
}

static void fmt_pct(char *buf, size_t len, const lowp_verdict_t *v) {
  if (v->vacuous) snprintf(buf, len, "vacuous");
  else if (isnan(v->percent)) snprintf(buf, len, "-");
  else if (isinf(v->percent)) snprintf(buf, len, "inf%%");
  else snprintf(buf, len, "%.1f%%", v->percent);
}

static void print_line(FILE *f, const run_t *r) {
  const lowp_spec_check_t *sc = r->sc;
  char pct[32], idx[128], sum[200];
  int i, d = -1;
  if (!r->measured) {
    fprintf(f, "FAIL %s  %s\n", sc->name, r->error);
    return;
  }
  /* the deciding rule: the first that failed, else the one closest to its limit */
  for (i = 0; i < r->n_v && d < 0; i++)
    if (!r->v[i].pass) d = i;
  if (d < 0)
    for (i = 0; i < r->n_v; i++)
      if (d < 0 || (!isnan(r->v[i].percent) &&
                    (isnan(r->v[d].percent) || r->v[i].percent > r->v[d].percent)))
        d = i;
  fprintf(f, "%s %s ", r->pass ? "PASS" : "FAIL", sc->name);
  if (d >= 0) {
    const lowp_verdict_t *v = &r->v[d];
    fmt_pct(pct, sizeof pct, v);
    if (v->vacuous)
      fprintf(f, " %s %.4g, bound vacuous", v->what, v->measured);
    else
      fprintf(f, " %s %.4g %s %.4g (%s)", v->what, v->measured, v->pass ? "<=" : ">", v->limit, pct);
  }
  {
    int j = 0, k;
    for (k = 0; k < r->res.n_out; k++)
      if (r->res.out[k].err.max_ulp > r->res.out[j].err.max_ulp || r->res.out[k].n_class_mismatch)
        j = k;
    {
      const lowp_check_output_t *o = &r->res.out[j];
      if (o->exact_data)
        fprintf(f, "  input %.3g + compute %.3g ulp", o->ulp_input, o->ulp_compute);
      else
        fprintf(f, "  compute %.3g ulp", o->ulp_compute);
      if (o->worst != (size_t)-1) {
        lowp_check_index_str(idx, sizeof idx, &r->p, j, o->worst);
        lowp_check_inputs_summary(sum, sizeof sum, &r->p, &r->in, j, o->worst);
        fprintf(f, "  worst %s (%s)", idx, sum);
      }
    }
  }
  {
    size_t nn = 0;
    int k;
    for (k = 0; k < r->res.n_out; k++) nn += r->res.out[k].n_not_in_format;
    if (nn) fprintf(f, "  [%zu values are not values of %s]", nn, r->p.out.name ? r->p.out.name : "the output format");
  }
  if (r->error[0]) fprintf(f, "  [%s]", r->error);
  fprintf(f, "\n");
  if (!r->pass)
    for (i = 0; i < r->n_v; i++)
      if (!r->v[i].pass) fprintf(f, "  rule %d failed: %s\n", i + 1, r->v[i].msg);
}

/* ---------------------------------------------------------------- outputs */

static void xml_escape(FILE *f, const char *s) {
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    switch (ch) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&apos;", f); break;
    default:
      if (ch < 0x20 && ch != '\n' && ch != '\t') fprintf(f, "?");
      else fputc(ch, f);
    }
  }
}

/* The output files are written to temporary files (io/atomic.h) and only
   renamed into place together, at the very end (publish_all). */
static lowp_atomic_t g_out[3];
static int g_nout;

static void abort_all(void) {
  int i;
  for (i = 0; i < g_nout; i++) lowp_atomic_abort(&g_out[i]);
  g_nout = 0;
}

static lowp_atomic_t *new_out(const char *path) {
  lowp_atomic_t *w = &g_out[g_nout];
  if (g_nout >= 3 || lowp_atomic_open(w, path)) return NULL;
  g_nout++;
  return w;
}

static int write_junit(const char *path, const run_t *runs, int n, int failures, double total) {
  lowp_atomic_t *wp = new_out(path);
  int i, k;
  if (!wp) return LOWP_EIO;
#define w (*wp)
  fprintf(w.fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(w.fp, "<testsuites tests=\"%d\" failures=\"%d\" errors=\"0\" time=\"%.3f\">\n", n,
          failures, total);
  fprintf(w.fp, "  <testsuite name=\"lowp check\" tests=\"%d\" failures=\"%d\" errors=\"0\" "
          "skipped=\"0\" time=\"%.3f\">\n", n, failures, total);
  for (i = 0; i < n; i++) {
    const run_t *r = &runs[i];
    fprintf(w.fp, "    <testcase classname=\"lowp.check.");
    xml_escape(w.fp, r->sc->op->name);
    fprintf(w.fp, "\" name=\"");
    xml_escape(w.fp, r->sc->name);
    fprintf(w.fp, "\" time=\"%.3f\"", r->res.time_subject_s + r->res.time_exact_s);
    if (r->pass) {
      fprintf(w.fp, "/>\n");
      continue;
    }
    fprintf(w.fp, ">\n      <failure message=\"");
    if (!r->measured) xml_escape(w.fp, r->error);
    else
      for (k = 0; k < r->n_v; k++)
        if (!r->v[k].pass) { xml_escape(w.fp, r->v[k].msg); break; }
    fprintf(w.fp, "\" type=\"precision\">");
    if (!r->measured) xml_escape(w.fp, r->error);
    for (k = 0; k < r->n_v; k++) {
      char line[800];
      snprintf(line, sizeof line, "rule %d (%s): %s: %s\n", k + 1, r->v[k].what,
               r->v[k].pass ? "pass" : "FAIL", r->v[k].msg);
      xml_escape(w.fp, line);
    }
    if (r->error[0] && r->measured) xml_escape(w.fp, r->error);
    fprintf(w.fp, "</failure>\n    </testcase>\n");
  }
  fprintf(w.fp, "  </testsuite>\n</testsuites>\n");
  return ferror(w.fp) ? LOWP_EIO : LOWP_OK;
#undef w
}

static cJSON *metrics_json(const lowp_check_result_t *res) {
  cJSON *m = cJSON_CreateObject();
  int k;
  for (k = 0; k < LOWP_METRIC_COUNT; k++)
    add_num(m, lowp_metric_name((lowp_metric_t)k), lowp_metric_value(res, (lowp_metric_t)k));
  return m;
}

static cJSON *result_json(const run_t *r) {
  cJSON *c = cJSON_CreateObject(), *rules = cJSON_CreateArray();
  int k, j;
  cJSON_AddStringToObject(c, "name", r->sc->name);
  cJSON_AddStringToObject(c, "op", r->sc->op->name);
  cJSON_AddStringToObject(c, "verdict", r->pass ? "pass" : "fail");
  cJSON_AddStringToObject(c, "subject", r->subj.name);
  cJSON_AddStringToObject(c, "fingerprint", r->sc->fingerprint);
  if (r->p.out.name) cJSON_AddStringToObject(c, "out", r->p.out.name);
  {
    cJSON *in = cJSON_CreateArray();
    for (k = 0; k < r->p.op->n_in; k++)
      cJSON_AddItemToArray(in, cJSON_CreateString(r->p.in[k].name ? r->p.in[k].name : "?"));
    cJSON_AddItemToObject(c, "in", in);
  }
  {
    cJSON *d = cJSON_CreateObject();
    cJSON_AddNumberToObject(d, "batch", (double)r->p.dims.batch);
    cJSON_AddNumberToObject(d, "m", (double)r->p.dims.m);
    cJSON_AddNumberToObject(d, "n", (double)r->p.dims.n);
    cJSON_AddNumberToObject(d, "k", (double)r->p.dims.k);
    cJSON_AddItemToObject(c, "dims", d);
  }
  if (r->error[0]) cJSON_AddStringToObject(c, "error", r->error);
  if (r->measured) {
    cJSON *outs = cJSON_CreateArray();
    cJSON_AddItemToObject(c, "metrics", metrics_json(&r->res));
    for (j = 0; j < r->res.n_out; j++) {
      const lowp_check_output_t *o = &r->res.out[j];
      cJSON *oj = cJSON_CreateObject();
      char idx[128], sum[200], hx[64];
      cJSON_AddStringToObject(oj, "name", o->name);
      if (o->absent) { /* the subject did not produce it: nothing measured */
        cJSON_AddBoolToObject(oj, "absent", 1);
        cJSON_AddItemToArray(outs, oj);
        continue;
      }
      add_num(oj, "max_ulp", o->err.max_ulp);
      add_num(oj, "mean_ulp", o->err.mean_ulp);
      add_num(oj, "max_abs", o->err.max_abs);
      add_num(oj, "max_rel", o->err.max_rel);
      add_num(oj, "rmse", o->rmse);
      if (o->absab) add_num(oj, "max_bwd", o->err.max_bwd);
      add_num(oj, "ulp_total", o->ulp_total);
      add_num(oj, "ulp_input", o->ulp_input);
      add_num(oj, "ulp_compute", o->ulp_compute);
      add_num(oj, "max_ulp_input", o->max_ulp_input);
      cJSON_AddNumberToObject(oj, "n_exact", (double)o->err.n_exact);
      cJSON_AddNumberToObject(oj, "n_class_mismatch", (double)o->n_class_mismatch);
      cJSON_AddNumberToObject(oj, "n_not_in_format", (double)o->n_not_in_format);
      if (o->worst != (size_t)-1) {
        cJSON *w = cJSON_CreateObject();
        lowp_check_index_str(idx, sizeof idx, &r->p, j, o->worst);
        lowp_check_inputs_summary(sum, sizeof sum, &r->p, &r->in, j, o->worst);
        cJSON_AddStringToObject(w, "index", idx);
        cJSON_AddNumberToObject(w, "flat", (double)o->worst);
        add_num(w, "got", o->got[o->worst]);
        snprintf(hx, sizeof hx, "%a", o->got[o->worst]);
        cJSON_AddStringToObject(w, "got_hex", hx);
        add_num(w, "exact", o->exact[o->worst]);
        snprintf(hx, sizeof hx, "%a", o->exact[o->worst]);
        cJSON_AddStringToObject(w, "exact_hex", hx);
        cJSON_AddStringToObject(w, "inputs", sum);
        cJSON_AddItemToObject(oj, "worst", w);
      }
      cJSON_AddItemToArray(outs, oj);
    }
    cJSON_AddItemToObject(c, "outputs", outs);
    {
      const lowp_check_bound_t *bs[3] = {&r->res.gamma, &r->res.prob, &r->res.model};
      const char *bn[3] = {"gamma", "prob", "model"};
      cJSON *b = cJSON_CreateObject();
      for (k = 0; k < 3; k++)
        if (bs[k]->have) {
          cJSON *x = cJSON_CreateObject();
          add_num(x, "value", bs[k]->value);
          cJSON_AddBoolToObject(x, "vacuous", isinf(bs[k]->value));
          if (!isinf(bs[k]->value)) add_num(x, "used", bs[k]->used);
          cJSON_AddStringToObject(x, "name", bs[k]->name);
          cJSON_AddItemToObject(b, bn[k], x);
        }
      cJSON_AddItemToObject(c, "bounds", b);
    }
    add_num(c, "time_subject_s", r->res.time_subject_s);
    add_num(c, "time_exact_s", r->res.time_exact_s);
  }
  for (k = 0; k < r->n_v; k++) {
    const lowp_verdict_t *v = &r->v[k];
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "rule", v->what);
    cJSON_AddBoolToObject(x, "pass", v->pass);
    add_num(x, "measured", v->measured);
    add_num(x, "limit", v->limit);
    add_num(x, "percent", v->percent);
    cJSON_AddBoolToObject(x, "vacuous", v->vacuous);
    cJSON_AddStringToObject(x, "message", v->msg);
    cJSON_AddItemToArray(rules, x);
  }
  cJSON_AddItemToObject(c, "rules", rules);
  return c;
}

static int write_json_file(const char *path, cJSON *j) {
  char *txt = cJSON_Print(j);
  int st;
  size_t n;
  if (!txt) return LOWP_ENOMEM;
  n = strlen(txt);
  txt = realloc(txt, n + 2);
  txt[n] = '\n';
  txt[n + 1] = '\0';
  {
    lowp_atomic_t *w = new_out(path);
    st = (w && fwrite(txt, 1, n + 1, w->fp) == n + 1 && !ferror(w->fp)) ? LOWP_OK : LOWP_EIO;
  }
  free(txt);
  return st;
}

/* the new baseline: the old entries of checks not run, the new of those run */
static int update_baseline(const lowp_spec_t *spec, const baseline_t *old, const run_t *runs,
                           int n) {
  cJSON *root = cJSON_CreateObject(), *checks = cJSON_CreateObject();
  int i, k, st;
  cJSON_AddNumberToObject(root, "lowp_baseline", BASELINE_FORMAT);
  cJSON_AddStringToObject(root, "lowp_version", LOWP_VERSION);
  cJSON_AddItemToObject(root, "checks", checks);
  for (i = 0; i < spec->n_checks; i++) {
    const lowp_spec_check_t *sc = &spec->checks[i];
    const run_t *r = NULL;
    const cJSON *oe = old->checks ? cJSON_GetObjectItemCaseSensitive(old->checks, sc->name) : NULL;
    for (k = 0; k < n; k++)
      if (runs[k].sc == sc) r = &runs[k];
    if (!r) {
      if (oe) cJSON_AddItemToObject(checks, sc->name, cJSON_Duplicate(oe, 1));
      continue;
    }
    if (!r->measured) {
      printf("baseline: %s: not measured (%s); %s\n", sc->name, r->error,
             oe ? "old entry kept" : "no entry");
      if (oe) cJSON_AddItemToObject(checks, sc->name, cJSON_Duplicate(oe, 1));
      continue;
    }
    {
      cJSON *e = cJSON_CreateObject(), *m = metrics_json(&r->res);
      const cJSON *om = oe ? cJSON_GetObjectItemCaseSensitive(oe, "metrics") : NULL;
      const cJSON *ofp = oe ? cJSON_GetObjectItemCaseSensitive(oe, "fingerprint") : NULL;
      cJSON_AddStringToObject(e, "fingerprint", sc->fingerprint);
      cJSON_AddItemToObject(e, "metrics", m);
      cJSON_AddItemToObject(checks, sc->name, e);
      printf("baseline: %s:", sc->name);
      if (!oe) printf(" new entry");
      else if (!cJSON_IsString(ofp) || strcmp(ofp->valuestring, sc->fingerprint))
        printf(" definition changed (fingerprint %s -> %s)",
               cJSON_IsString(ofp) ? ofp->valuestring : "?", sc->fingerprint);
      for (k = 0; k < LOWP_METRIC_COUNT; k++) {
        const char *mn = lowp_metric_name((lowp_metric_t)k);
        double nv = lowp_metric_value(&r->res, (lowp_metric_t)k);
        double ov = om ? get_num(cJSON_GetObjectItemCaseSensitive(om, mn)) : NAN;
        if (isnan(nv) && isnan(ov)) continue;
        if (oe && (nv == ov)) continue;
        if (oe) printf(" %s %.6g -> %.6g", mn, ov, nv);
        else printf(" %s %.6g", mn, nv);
      }
      if (oe && om) {
        int same = 1;
        for (k = 0; k < LOWP_METRIC_COUNT; k++) {
          double nv = lowp_metric_value(&r->res, (lowp_metric_t)k);
          double ov = get_num(cJSON_GetObjectItemCaseSensitive(om, lowp_metric_name((lowp_metric_t)k)));
          if (!(nv == ov || (isnan(nv) && isnan(ov)))) same = 0;
        }
        if (same && cJSON_IsString(ofp) && !strcmp(ofp->valuestring, sc->fingerprint))
          printf(" unchanged");
      }
      printf("\n");
    }
  }
  st = write_json_file(spec->baseline, root);
  cJSON_Delete(root);
  return st;
}

/* an output path must be creatable now, and not be a folder or a special
   file (the result is renamed over it at the end) */
static void probe_output(const char *what, const char *path) {
  lowp_atomic_t probe;
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
    lowp_cli_die(CMD, "%s %s: exists and is not a regular file", what, path);
  if (lowp_atomic_open(&probe, path) != 0)
    lowp_cli_die(CMD, "%s %s: cannot create a file in that folder", what, path);
  lowp_atomic_abort(&probe);
}

/* ----------------------------------------------------------- public API */

/* ------------------------------------------------------------ MPI ranks */

/* What rank 0 needs of a check another rank ran: its verdicts and the
   scalars of its result (no arrays; pointers are rank 0's own again). */
typedef struct {
  int measured, pass, n_v;
  char error[1200];
  lowp_verdict_t v[64];
  lowp_check_result_t res;
} shipped_t;

/* Collective: check i runs on rank i mod N; its report line (and JSON when
   asked) is made there; rank 0 receives them with the verdicts and result
   scalars (JUnit, baseline, the totals), in the spec's order. */
static void spread_checks(run_t *runs, int n, int updating, int want_json, char **lines,
                          char **jsons) {
  int me = lowp_par_rank(), np = lowp_par_size(), i, j;
  for (i = 0; i < n; i++) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    if (i % np != me) continue;
    execute(&runs[i], updating);
    f = open_memstream(&buf, &len);
    if (!f) lowp_cli_die(CMD, "rank %d: out of memory", me);
    print_line(f, &runs[i]);
    if (fclose(f) != 0) lowp_cli_die(CMD, "rank %d: out of memory", me);
    lines[i] = buf;
    if (want_json) {
      cJSON *jr = result_json(&runs[i]);
      jsons[i] = cJSON_PrintUnformatted(jr);
      cJSON_Delete(jr);
      if (!jsons[i]) lowp_cli_die(CMD, "rank %d: out of memory", me);
    }
    if (me == 0 && isatty(2)) /* progress: the job's checks, from rank 0 */
      fprintf(stderr, "lowp check: [%d/%d] %s\n", i + 1, n, runs[i].sc->name);
  }
  lowp_par_sync(0);
  for (i = 0; i < n; i++) {
    int owner = i % np;
    run_t *r = &runs[i];
    if (owner == 0) continue;
    if (me == owner) {
      shipped_t *sh = calloc(1, sizeof *sh);
      int bad;
      if (!sh) lowp_cli_die(CMD, "rank %d: out of memory", me);
      sh->measured = r->measured;
      sh->pass = r->pass;
      sh->n_v = r->n_v;
      memcpy(sh->error, r->error, sizeof sh->error);
      memcpy(sh->v, r->v, sizeof sh->v);
      sh->res = r->res;
      for (j = 0; j < LOWP_OP_MAXIO; j++) { /* arrays and names stay here */
        lowp_check_output_t *o = &sh->res.out[j];
        o->name = NULL;
        o->got = o->exact = o->exact_out = o->exact_data = o->absab = NULL;
      }
      memset(&sh->res.problem, 0, sizeof sh->res.problem);
      bad = lowp_par_send(sh, sizeof *sh, 0) ||
            lowp_par_send(lines[i], strlen(lines[i]) + 1, 0) ||
            (want_json && lowp_par_send(jsons[i], strlen(jsons[i]) + 1, 0));
      free(sh);
      if (bad) lowp_cli_die(CMD, "rank %d: sending the result of %s failed", me, r->sc->name);
    } else if (me == 0) {
      void *b = NULL;
      size_t len = 0;
      shipped_t sh;
      if (lowp_par_recv(&b, &len, owner) || len != sizeof sh)
        lowp_cli_die(CMD, "receiving the result of %s from rank %d failed", r->sc->name, owner);
      memcpy(&sh, b, sizeof sh);
      free(b);
      r->measured = sh.measured;
      r->pass = sh.pass;
      r->n_v = sh.n_v;
      memcpy(r->error, sh.error, sizeof r->error);
      memcpy(r->v, sh.v, sizeof r->v);
      lowp_check_result_free(&r->res);
      r->res = sh.res;
      r->res.problem = r->p;
      for (j = 0; j < r->res.n_out && j < LOWP_OP_MAXIO; j++)
        r->res.out[j].name = r->p.op->out_names[j];
      if (lowp_par_recv(&b, &len, owner) || !len || ((char *)b)[len - 1])
        lowp_cli_die(CMD, "receiving the result of %s from rank %d failed", r->sc->name, owner);
      lines[i] = b;
      if (want_json) {
        if (lowp_par_recv(&b, &len, owner) || !len || ((char *)b)[len - 1])
          lowp_cli_die(CMD, "receiving the result of %s from rank %d failed", r->sc->name, owner);
        jsons[i] = b;
      }
      if (isatty(2))
        fprintf(stderr, "lowp check: [%d/%d] %s (rank %d)\n", i + 1, n, r->sc->name, owner);
    }
  }
  lowp_par_sync(0);
}

int lowp_cmd_check(int argc, char **argv) {
  opts_t o;
  lowp_spec_t spec;
  baseline_t base;
  run_t *runs;
  char err[800];
  int i, k, n = 0, failures = 0, need_base = 0, st;
  double total = 0;
  char **lines = NULL, **jsons = NULL; /* an MPI job: each check's line and JSON */

  parse(&o, argc, argv);
  if (o.list_ops) {
    list_ops();
    if (!o.spec_path) return LOWP_EXIT_OK;
  }
  if (o.threads) omp_set_num_threads(o.threads);
  st = lowp_spec_read(&spec, o.spec_path, err, sizeof err);
  if (st) {
    lowp_spec_free(&spec);
    lowp_cli_die(CMD, "%s", err[0] ? err : lowp_status_str(st));
  }
  for (k = 0; k < o.n_only; k++)
    if (!lowp_spec_find(&spec, o.only[k]))
      lowp_cli_die(CMD, "--only %s: the spec has no check of that name", o.only[k]);

  /* phase 1: everything is opened and checked before any work */
  runs = calloc((size_t)spec.n_checks, sizeof *runs);
  if (!runs) lowp_cli_die(CMD, "out of memory");
  for (i = 0; i < spec.n_checks; i++) {
    const lowp_spec_check_t *sc = &spec.checks[i];
    int sel = o.n_only == 0;
    for (k = 0; k < o.n_only; k++)
      if (!strcmp(o.only[k], sc->name)) sel = 1;
    if (!sel) continue;
    prepare(&runs[n], sc);
    for (k = 0; k < sc->n_rules; k++)
      if (sc->rules[k].rule.kind == LOWP_RULE_BASELINE) need_base = 1;
    n++;
  }
  baseline_load(&base, &spec, runs, n, need_base, o.update_baseline);
  {
    const char *outs[2] = {o.junit, o.json};
    const char *names[2] = {"--junit", "--json"};
    for (k = 0; k < 2 && lowp_par_rank() == 0; k++)
      if (outs[k]) probe_output(names[k], outs[k]);
    if (o.update_baseline && lowp_par_rank() == 0) probe_output("baseline", spec.baseline);
  }
  /* an MPI job: the checks are spread over the ranks, rank 0 gets the
     results and writes everything (par/par.h, docs/scale.md) */
  if (lowp_par_size() > 1) {
    if (lowp_par_size() > n)
      lowp_cli_die(CMD, "%d MPI ranks for %d checks: the ranks share whole checks, so run at "
                   "most %d", lowp_par_size(), n, n);
    lowp_par_sync(0); /* every rank opened every subject and read every file */
    lines = calloc((size_t)n, sizeof *lines);
    jsons = calloc((size_t)n, sizeof *jsons);
    if (!lines || !jsons) lowp_cli_die(CMD, "out of memory");
    spread_checks(runs, n, o.update_baseline, o.json != NULL, lines, jsons);
    if (lowp_par_rank() != 0) { /* rank 0 writes; wait for its verdict */
      for (i = 0; i < n; i++) { release(&runs[i]); free(lines[i]); free(jsons[i]); }
      free(runs); free(lines); free(jsons);
      cJSON_Delete(base.root);
      lowp_spec_free(&spec);
      lowp_par_sync(0);
      return LOWP_EXIT_OK;
    }
  }

  /* phase 2: run */
  for (i = 0; i < n; i++) {
    if (lines) fputs(lines[i], stdout); /* an MPI job: measured on the rank that owns it */
    else {
      execute(&runs[i], o.update_baseline);
      print_line(stdout, &runs[i]);
    }
    fflush(stdout);
    if (!runs[i].pass) failures++;
    total += runs[i].res.time_subject_s + runs[i].res.time_exact_s;
  }
  printf("%d of %d checks passed", n - failures, n);
  if (failures) {
    int shown = 0;
    printf("; failed:");
    for (i = 0; i < n; i++)
      if (!runs[i].pass && shown++ < 20) printf(" %s", runs[i].sc->name);
    if (shown > 20) printf(" (and %d more)", shown - 20);
  }
  printf("\n");

  /* outputs: all written to temporary files first, with SIGINT, SIGTERM
     and SIGHUP held; if one arrived meanwhile (or any write failed) none is
     published, else all are renamed into place, then the signal acts */
  {
    sigset_t hold, old;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT);
    sigaddset(&hold, SIGTERM);
    sigaddset(&hold, SIGHUP);
    sigprocmask(SIG_BLOCK, &hold, &old);
    if (o.update_baseline && update_baseline(&spec, &base, runs, n)) {
      abort_all();
      lowp_cli_die(CMD, "baseline %s: cannot write it (nothing written)", spec.baseline);
    }
    if (o.junit && write_junit(o.junit, runs, n, failures, total)) {
      abort_all();
      lowp_cli_die(CMD, "--junit %s: cannot write it (nothing written)", o.junit);
    }
    if (o.json) {
      cJSON *root = cJSON_CreateObject(), *arr = cJSON_CreateArray();
      cJSON_AddStringToObject(root, "lowp_version", LOWP_VERSION);
      cJSON_AddStringToObject(root, "spec", o.spec_path);
      cJSON_AddNumberToObject(root, "checks_run", n);
      cJSON_AddNumberToObject(root, "passed", n - failures);
      cJSON_AddNumberToObject(root, "failed", failures);
      for (i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, jsons ? cJSON_Parse(jsons[i]) : result_json(&runs[i]));
      cJSON_AddItemToObject(root, "checks", arr);
      st = write_json_file(o.json, root);
      cJSON_Delete(root);
      if (st) {
        abort_all();
        lowp_cli_die(CMD, "--json %s: cannot write it (nothing written)", o.json);
      }
    }
    {
      sigset_t pend;
      int k2, interrupted = 0;
      st = 0;
      if (sigpending(&pend) == 0)
        interrupted = sigismember(&pend, SIGINT) == 1 || sigismember(&pend, SIGTERM) == 1 ||
                      sigismember(&pend, SIGHUP) == 1;
      if (interrupted) abort_all();
      for (k2 = 0; k2 < g_nout; k2++)
        if (lowp_atomic_commit(&g_out[k2]) != LOWP_OK) {
          fprintf(stderr, "lowp check: cannot publish an output file (disk full?)\n");
          st = -1;
        }
      g_nout = 0;
      sigprocmask(SIG_SETMASK, &old, NULL); /* a held signal acts now */
      if (st == -1) return LOWP_EXIT_USAGE;
    }
  }
  for (i = 0; i < n; i++) release(&runs[i]);
  free(runs);
  if (lines) {
    for (i = 0; i < n; i++) { free(lines[i]); free(jsons[i]); }
    free(lines); free(jsons);
    lowp_par_sync(0); /* the outputs are in place: the other ranks may leave */
  }
  cJSON_Delete(base.root);
  lowp_spec_free(&spec);
  return failures ? LOWP_EXIT_CHECK : LOWP_EXIT_OK;
}
