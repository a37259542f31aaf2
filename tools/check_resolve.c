/* lowp_chk_prepare -- lowp check: a check of the spec resolved (subject, input files, references, models) */

#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check/op.h"
#include "check/plugin.h"
#include "check/reveal.h"
#include "check_internal.h"
#include "cli.h"
#include "io/escape.h"
#include "io/npy.h"
#include "par.h"
#include "status.h"

/* ------------------------------------------------------ private helpers */

/* physical memory in bytes (0 if unknown) */
static double phys_mem(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  return (pages > 0 && psz > 0) ? (double)pages * (double)psz : 0;
}

/* ------------------------------------------------------------ subjects */

/* a subject's name (a plugin's kernel name) goes into JUnit XML and JSON:
   it must be UTF-8 */
static void name_ok(const lowp_spec_check_t *sc, const char *what, const lowp_subject_t *s) {
  if (!lowp_utf8_valid(s->name, strlen(s->name), NULL))
    lowp_chk_die(sc, "%s: its name '%s' is not UTF-8 (a plugin's kernel name?)", what, s->name);
}

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

/* --plugin-dir DIRs, in order (set by cmd_check.c) */
static const char *const *g_plugin_dirs;
static int g_n_plugin_dirs;

void lowp_chk_set_plugin_dirs(const char *const *dirs, int n) {
  g_plugin_dirs = dirs;
  g_n_plugin_dirs = n;
}

static int is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Where a plugin is loaded from: a file of its name in a --plugin-dir
   (the command line overrides the spec), else the spec's path, else a file
   of its name in the plugins/ folder beside the lowp binary (a build tree:
   BUILD/lowp and BUILD/plugins/, so the README's example runs as written). */
static const char *plugin_path(char *buf, size_t len, const char *path) {
  const char *base = strrchr(path, '/');
  char exe[4096];
  ssize_t n;
  int i;
  base = base ? base + 1 : path;
  for (i = 0; i < g_n_plugin_dirs; i++) {
    snprintf(buf, len, "%s/%s", g_plugin_dirs[i], base);
    if (is_file(buf)) return buf;
  }
  if (is_file(path)) return path;
  n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    char *slash;
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (slash) {
      *slash = '\0';
      snprintf(buf, len, "%s/plugins/%s", exe, base);
      if (is_file(buf)) return buf;
    }
  }
  return path;
}

static int open_plugin(lowp_subject_t *s, const char *path, const char *kernel, double timeout,
                       const lowp_problem_t *p, char *err, size_t errlen) {
#ifdef HAVE_PLUGIN_SUBJECT
  char buf[4200];
  return lowp_plugin_subject_open_ex(s, plugin_path(buf, sizeof buf, path), kernel, timeout, p,
                                     err, errlen);
#else
  (void)s; (void)kernel; (void)timeout; (void)p;
  snprintf(err, errlen, "plugin %s: this build has no plugin subjects", path);
  return LOWP_EUNSUPPORTED;
#endif
}

#ifdef HAVE_TENSOR_SUBJECT
/* Saved outputs must hold values of the output format (the check's "out", else the first
   output file's dtype), as the inputs must of "in" (lib/check/tensors.c) and as lowp.check
   refuses such outputs: an fp32 file declared fp16 passed max_ulp 0.5, its values finer than
   any fp16 kernel's, and layernorm's fp32 mean beside an fp16 y (PyTorch's half layer_norm)
   was measured in fp16 ulps, 1700 fp32 ulps off passing max_ulp 1; each with only a note.
   An "in_format" rule asks to count them instead. */
static void saved_outputs_in_format(const lowp_chk_run_t *r) {
  const lowp_spec_check_t *sc = r->sc;
  const double *const *out = lowp_tensor_subject_outputs(&r->subj);
  int i, j;
  for (i = 0; i < sc->n_rules; i++)
    if (sc->rules[i].rule.kind == LOWP_RULE_IN_FORMAT) return;
  for (j = 0; out && j < sc->op->n_out; j++) {
    size_t sh[LOWP_OP_MAXDIM], c, k;
    int nd;
    if (!out[j] || lowp_op_shape(&r->p, sc->op->n_in + j, sh, &nd, &c)) continue;
    if (lowp_format_count_not_in(&r->p.out, out[j], c, &k))
      lowp_chk_die(sc, "subject: output %s: element %zu = %.17g is not a %s value (%s): the outputs are "
                   "measured in its ulps; declare the format the files hold, or count such values with an "
                   "\"in_format\" rule", sc->op->out_names[j], k, out[j][k],
                   r->p.out.name ? r->p.out.name : "output-format",
                   sc->has_out ? "the check's \"out\"" : "the output format, from the first output file");
  }
}
#endif

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
    memset(ins, 0, sizeof ins);
    for (i = 0; i < d->n_inputs; i++) {
      const lowp_spec_file_t *f = &d->inputs[i];
      ins[i].path = f->path;
      ins[i].tensor = f->tensor;
      ins[i].format = f->format;
      ins[i].scales_path = f->scales_path, ins[i].scales_tensor = f->scales_tensor;
      ins[i].ts_path = f->ts_path, ins[i].ts_tensor = f->ts_tensor;
      ins[i].tensor_scale = f->tensor_scale;
      ins[i].scale_layout = f->scale_layout;
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
static void read_files(lowp_chk_run_t *r) {
  const lowp_spec_check_t *sc = r->sc;
  lowp_npy_info_t info[LOWP_OP_MAXIO];
  const size_t *shapes[LOWP_OP_MAXIO];
  int ndims[LOWP_OP_MAXIO], i;
  char err[400];
  for (i = 0; i < sc->n_files; i++) {
    lowp_format_t fm = sc->n_in_formats ? r->p.in[i] : LOWP_FMT_FP64;
    const lowp_spec_file_t *f = &sc->files[i];
    int st;
    if (f->tensor) lowp_chk_die(sc, "inputs.files[%d] %s: \"tensor\" is for .safetensors files, "
                             "which a tensors subject reads; kernel and plugin inputs are .npy",
                             i, f->path);
    if (f->format && lowp_format_parse(&fm, f->format, NULL, 0)) lowp_chk_die(sc, "bad format");
    st = lowp_npy_read(f->path, &info[i], &r->file_in[i], &fm, 0);
    if (st) lowp_chk_die(sc, "inputs.files[%d] %s: %s", i, f->path, npy_msg(st));
    /* a default follows the data given: the file's own format */
    if (!sc->n_in_formats && !r->p.op->in_index[i]) {
      if (f->format) r->p.in[i] = fm;
      else if (info[i].dtype == LOWP_NPY_F2) r->p.in[i] = LOWP_FMT_FP16;
      else if (info[i].dtype == LOWP_NPY_F4) r->p.in[i] = LOWP_FMT_FP32;
      else if (info[i].dtype == LOWP_NPY_F8) r->p.in[i] = LOWP_FMT_FP64;
      else lowp_chk_die(sc, "inputs.files[%d] %s: raw bits: name their format (\"format\") or "
                     "the check's \"in\"", i, f->path);
    }
    shapes[i] = info[i].shape;
    ndims[i] = info[i].ndim;
  }
  if (!sc->has_out) r->p.out = r->p.in[0]; /* the output follows the (first) input */
  if (lowp_op_dims_infer(&r->p, shapes, ndims, err, sizeof err))
    lowp_chk_die(sc, "inputs.files: %s", err);
#ifdef HAVE_TENSOR_SUBJECT
  if (lowp_tensor_check_indices(&r->p, (const double *const *)r->file_in, err, sizeof err))
    lowp_chk_die(sc, "inputs.files: %s", err);
#endif
  if (sc->has_shape && memcmp(&sc->dims, &r->p.dims, sizeof sc->dims))
    lowp_chk_die(sc, "\"shape\" (batch %zu, m %zu, n %zu, k %zu) disagrees with the input files "
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
    if (st) lowp_chk_die(sc, "inputs.data[%d] %s: %s", i, f->path, npy_msg(st));
    if (di.ndim != info[i].ndim || memcmp(di.shape, info[i].shape, (size_t)di.ndim * sizeof(size_t)))
      lowp_chk_die(sc, "inputs.data[%d] %s: its shape differs from inputs.files[%d]'s", i, f->path, i);
  }
}

/* --------------------------------------------------------------- baseline */
/* ----------------------------------------------------------- public API */

/* "check 'x' (checks[3]): " */
void lowp_chk_die(const lowp_spec_check_t *sc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;
void lowp_chk_die(const lowp_spec_check_t *sc, const char *fmt, ...) {
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
/* ------------------------------------------------------------- preparing */

void lowp_chk_prepare(lowp_chk_run_t *r, const lowp_spec_check_t *sc) {
  char err[600];
  int i, st;
  memset(r, 0, sizeof *r);
  r->sc = sc;
  if (sc->n_rules > 64) lowp_chk_die(sc, "at most 64 rules per check");
  r->refs = calloc((size_t)sc->n_rules, sizeof *r->refs);
  r->ref_open = calloc((size_t)sc->n_rules, sizeof *r->ref_open);
  r->models = calloc((size_t)sc->n_rules, sizeof *r->models);
  r->trees = calloc((size_t)sc->n_rules, sizeof *r->trees);
  r->v = calloc((size_t)sc->n_rules, sizeof *r->v);
  if (!r->refs || !r->ref_open || !r->models || !r->trees || !r->v) lowp_chk_die(sc, "out of memory");
  r->p.op = sc->op;
  r->p.eps = sc->eps;
  r->p.reduction_mean = sc->reduction_mean;
  for (i = 0; i < sc->op->n_in; i++) {
    if (sc->n_in_formats) r->p.in[i] = sc->in[i], r->p.has_bin[i] = sc->has_bin[i], r->p.bin[i] = sc->bin[i];
    if (sc->op->in_index[i]) r->p.in[i] = LOWP_FMT_FP64, r->p.has_bin[i] = 0;
    r->p.has_conv[i] = sc->has_conv[i], r->p.conv[i] = sc->conv[i], r->p.conv_rnd[i] = sc->conv_rnd[i];
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
    if (st) lowp_chk_die(sc, "subject: %s", err);
    r->subj_open = 1;
    name_ok(sc, "subject", &r->subj);
#ifdef HAVE_TENSOR_SUBJECT
    saved_outputs_in_format(r);
#endif
    if (sc->has_shape && memcmp(&sc->dims, &r->p.dims, sizeof sc->dims))
      lowp_chk_die(sc, "\"shape\" (batch %zu, m %zu, n %zu, k %zu) disagrees with the tensor files "
                "(batch %zu, m %zu, n %zu, k %zu)", sc->dims.batch, sc->dims.m, sc->dims.n,
                sc->dims.k, r->p.dims.batch, r->p.dims.m, r->p.dims.n, r->p.dims.k);
  } else {
    if (sc->generated) r->p.dims = sc->dims;
    else read_files(r);
    st = open_subject(&r->subj, &sc->subject, &r->p, err, sizeof err);
    if (st) lowp_chk_die(sc, "subject: %s", err);
    r->subj_open = 1;
    name_ok(sc, "subject", &r->subj);
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
        lowp_chk_die(sc, "the sizes (batch %zu, m %zu, n %zu, k %zu) are too large", r->p.dims.batch,
                  r->p.dims.m, r->p.dims.n, r->p.dims.k);
      need += 8.0 * (double)c * (k < sc->op->n_in ? 4 : 5);
    }
    if (have > 0 && need > 0.8 * have)
      lowp_chk_die(sc, "the sizes (batch %zu, m %zu, n %zu, k %zu) need %.3g GiB of memory; this "
                "machine has %.3g GiB", r->p.dims.batch, r->p.dims.m, r->p.dims.n, r->p.dims.k,
                need / 1073741824.0, have / 1073741824.0);
  }
  if (sc->conv_revealed) lowp_chk_convert(r);
  else lowp_chk_convert_verify(r);
  for (i = 0; i < sc->n_rules; i++) {
    const lowp_spec_rule_t *ru = &sc->rules[i];
    if (ru->has_ref) {
      lowp_problem_t q = r->p;
      st = open_subject(&r->refs[i], &ru->ref, &q, err, sizeof err);
      if (st) lowp_chk_die(sc, "rule %d: reference subject: %s", i + 1, err);
      r->ref_open[i] = 1;
      name_ok(sc, "reference subject", &r->refs[i]);
    }
    if (ru->twin) lowp_chk_twin_prepare(r, i);
    if (ru->rule.kind == LOWP_RULE_BOUND) {
      /* a row operation: the bound lowp_tol derives for the subject's own
         compute and acc formats (lib/check/pipeline.c, row_bound) */
      if (sc->op->kind != LOWP_OPKIND_SUMPROD && ru->rule.bound != LOWP_BOUND_MODEL &&
          !ru->rule.has_accum && !ru->model && r->subj.has_compute && r->subj.has_accum)
        continue;
      if (sc->op->kind != LOWP_OPKIND_SUMPROD)
        lowp_chk_die(sc, "rule %d: a %s bound applies to sums of products (sum, dot, gemv, gemm) "
                  "and to row operations whose subject declares its compute and acc formats "
                  "(lowp's row kernels), not to %s", i + 1,
                  ru->rule.bound == LOWP_BOUND_GAMMA ? "gamma" :
                  ru->rule.bound == LOWP_BOUND_PROB ? "prob" : "model", sc->op->name);
      if (ru->model) {
        st = lowp_tc_model_get(&r->models[i], ru->model, &r->p.in[0], &r->p.out, err, sizeof err);
        if (st) lowp_chk_die(sc, "rule %d: model '%s': %s", i + 1, ru->model, err);
      } else if (ru->rule.bound == LOWP_BOUND_MODEL && !r->subj.has_model) {
        lowp_chk_die(sc, "rule %d: the subject (%s) declares no tensor-core model: name one with "
                  "\"model\"", i + 1, r->subj.name);
      } else if (ru->tree) {
        lowp_chk_tree(r, i);
      } else if (ru->rule.bound != LOWP_BOUND_MODEL && !ru->rule.has_accum && !r->subj.has_accum) {
        lowp_chk_die(sc, "rule %d: the subject (%s) does not say how it accumulates: give \"order\" "
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
        if (ru->tree) rl = r->trees[i];
        st = lowp_check_rule_bound(&b, &rl, &r->p, &r->subj, 0);
        if (st == LOWP_EUNSUPPORTED)
          lowp_chk_die(sc, "rule %d: no %s bound is known for this method (%s)", i + 1,
                    rl.bound == LOWP_BOUND_PROB ? "probabilistic" : "such",
                    rl.bound == LOWP_BOUND_PROB
                        ? "it needs round to nearest and a non-compensated order"
                        : "see docs/pipeline.md, Bounds");
        if (st) lowp_chk_die(sc, "rule %d: bound: %s", i + 1, lowp_status_str(st));
        /* a rule that can never fail is an error of the spec, unless it says so */
        if (isinf(b.value) && !rl.vacuous_ok)
          lowp_chk_die(sc, "rule %d: the bound %s is vacuous for k = %zu: the rule could never "
                       "fail (add \"accept_vacuous\": true to keep it)", i + 1, b.name,
                       r->p.op->id == LOWP_OP_SUM ? r->p.dims.n : r->p.dims.k);
      }
    }
  }
  lowp_chk_declared(r); /* after the rules: a revealed order may have been asked */
}

void lowp_chk_release(lowp_chk_run_t *r) {
  int i;
  if (r->subj_open) lowp_subject_close(&r->subj);
  for (i = 0; r->ref_open && i < r->sc->n_rules; i++)
    if (r->ref_open[i]) lowp_subject_close(&r->refs[i]);
  free(r->refs);
  free(r->ref_open);
  free(r->models);
  free(r->trees);
  free(r->v);
  for (i = 0; r->twins && i < r->sc->n_rules; i++)
    if (r->twin_owned[i]) lowp_reveal_free(&r->twins[i]);
  free(r->twins);
  free(r->twin_owned);
  free(r->alts);
  r->alts = NULL;
  r->twins = NULL;
  r->twin_owned = NULL;
  if (r->rv) lowp_reveal_free(r->rv);
  free(r->rv);
  r->rv = NULL;
  for (i = 0; i < LOWP_OP_MAXIO; i++) {
    free(r->file_in[i]);
    free(r->file_data[i]);
  }
  lowp_check_inputs_free(&r->in);
  lowp_check_result_free(&r->res);
}

