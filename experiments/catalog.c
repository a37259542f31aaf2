/* lowp_experiment -- the registry: every experiment described once */

#include "par.h"
#include "catalog.h"

#include "format/number.h"
#include "io/escape.h"
#include "status.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- table */

/* One line per experiment; `lowp list`, `lowp run` and `lowp report` all
   read this table, in this order. */
extern const lowp_experiment_t lowp_exp_formats;
extern const lowp_experiment_t lowp_exp_loss_scaling;
extern const lowp_experiment_t lowp_exp_dynamic_range;
extern const lowp_experiment_t lowp_exp_softmax_overflow;
extern const lowp_experiment_t lowp_exp_claims;
extern const lowp_experiment_t lowp_exp_matmul_precision;
extern const lowp_experiment_t lowp_exp_fp8_quantization;
extern const lowp_experiment_t lowp_exp_tensor_core_models;
extern const lowp_experiment_t lowp_exp_error_growth;
extern const lowp_experiment_t lowp_exp_gradscaler_dynamics;
extern const lowp_experiment_t lowp_exp_master_weights;
extern const lowp_experiment_t lowp_exp_fp8_scaling;
extern const lowp_experiment_t lowp_exp_allreduce_precision;
extern const lowp_experiment_t lowp_exp_autocast_policy;
extern const lowp_experiment_t lowp_exp_amp_speedup;
extern const lowp_experiment_t lowp_exp_order_revelation;

static const lowp_experiment_t *const table[] = {
    &lowp_exp_formats,
    &lowp_exp_loss_scaling,
    &lowp_exp_dynamic_range,
    &lowp_exp_softmax_overflow,
    &lowp_exp_claims,
    &lowp_exp_matmul_precision,
    &lowp_exp_fp8_quantization,
    &lowp_exp_tensor_core_models,
    &lowp_exp_error_growth,
    &lowp_exp_gradscaler_dynamics,
    &lowp_exp_master_weights,
    &lowp_exp_fp8_scaling,
    &lowp_exp_allreduce_precision,
    &lowp_exp_autocast_policy,
    &lowp_exp_amp_speedup,
    &lowp_exp_order_revelation,
};

/* ----------------------------------------------------------- public API */

size_t lowp_experiment_count(void) { return sizeof table / sizeof table[0]; }

const lowp_experiment_t *lowp_experiment_at(size_t i) {
  return i < lowp_experiment_count() ? table[i] : NULL;
}

const lowp_experiment_t *lowp_experiment_find(const char *name) {
  size_t i;
  for (i = 0; i < lowp_experiment_count(); i++)
    if (!strcmp(table[i]->name, name)) return table[i];
  return NULL;
}

const char *lowp_run_param(const lowp_run_t *r, const char *key) {
  size_t i;
  for (i = 0; r->keys[i]; i++)
    if (!strcmp(r->keys[i], key)) return r->values[i];
  fprintf(stderr, "lowp run %s: internal error: undeclared parameter '%s'\n",
          r->exp->name, key);
  exit(2);
}

#ifndef LOWP_SOURCE_DIR
#define LOWP_SOURCE_DIR "."
#endif

const char *lowp_run_text(const lowp_run_t *r, const char *tmpl, char *out, size_t len) {
  size_t n = 0;
  const char *t = tmpl;
  if (!len) return out;
  while (*t && n + 1 < len) {
    const char *close = *t == '{' ? strchr(t, '}') : NULL;
    size_t i, k = close ? (size_t)(close - t - 1) : 0;
    int done = 0;
    for (i = 0; close && r->keys[i]; i++)
      if (strlen(r->keys[i]) == k && !strncmp(r->keys[i], t + 1, k)) {
        n += (size_t)snprintf(out + n, len - n, "%s", r->values[i]);
        if (n >= len) n = len - 1;
        t = close + 1;
        done = 1;
        break;
      }
    if (!done) out[n++] = *t++;
  }
  out[n] = '\0';
  return out;
}

const char *lowp_run_param_path(const lowp_run_t *r, const char *key, char *buf, size_t len) {
  const char *v = lowp_run_param(r, key);
  if (!strncmp(v, "<source>/", 9)) snprintf(buf, len, "%s/%s", LOWP_SOURCE_DIR, v + 9);
  else snprintf(buf, len, "%s", v);
  return buf;
}

void lowp_run_bad_param(const lowp_run_t *r, const char *key, const char *why) {
  char msg[8192], safe[8192];
  /* one line whatever the value holds (lowp_escape_ctl) */
  snprintf(msg, sizeof msg, "bad value '%s' for %s: %s", lowp_run_param(r, key), key, why);
  lowp_escape_ctl(safe, sizeof safe, msg);
  /* in an MPI job only the lowest failed rank speaks (par/par.h) */
  if (lowp_par_sync(1)) fprintf(stderr, "lowp run %s: %s\n", r->exp->name, safe);
  exit(2);
}

double lowp_run_param_num(const lowp_run_t *r, const char *key) {
  double d;
  /* format/number.h's grammar; parameters are finite (1e999 reads as inf
     by the IEEE rule, and is then refused here like "inf") */
  if (lowp_parse_f64(&d, lowp_run_param(r, key)) != 0)
    lowp_run_bad_param(r, key, "expected a number (decimal such as 1e-6, or hex float)");
  if (!isfinite(d)) lowp_run_bad_param(r, key, "expected a finite number");
  return d;
}

long long lowp_run_param_int(const lowp_run_t *r, const char *key, long long lo,
                             long long hi) {
  char why[128];
  long long d;
  int s = lowp_parse_int(&d, lowp_run_param(r, key), lo, hi);
  if (s == LOWP_EPARSE) lowp_run_bad_param(r, key, "expected an integer (decimal or 0x hex)");
  if (s != 0) {
    snprintf(why, sizeof why, "must be in [%lld, %lld]", lo, hi);
    lowp_run_bad_param(r, key, why);
  }
  return d;
}

/* The next item of a comma-separated list into buf; 0 if it is empty or
   too long. *s moves past the item and its comma; *last says whether the
   list ended (a trailing comma leaves an empty last item). */
static int list_item(const char **s, char *buf, size_t len, int *last) {
  size_t n = strcspn(*s, ",");
  if (n == 0 || n >= len) return 0;
  memcpy(buf, *s, n);
  buf[n] = '\0';
  *s += n;
  *last = **s == '\0';
  if (!*last) (*s)++;
  return 1;
}

size_t lowp_run_param_list_num(const lowp_run_t *r, const char *key, double *out, size_t max,
                               double lo, double hi) {
  const char *s = lowp_run_param(r, key);
  char item[128], why[160];
  size_t n = 0;
  int last = 0;
  snprintf(why, sizeof why, "expected 1 to %zu comma-separated numbers in [%g, %g]", max, lo, hi);
  while (!last) {
    double v = 0;
    if (n == max || !list_item(&s, item, sizeof item, &last) || lowp_parse_f64(&v, item) != 0 ||
        !(v >= lo && v <= hi))
      lowp_run_bad_param(r, key, why);
    out[n++] = v;
  }
  return n;
}

size_t lowp_run_param_list_int(const lowp_run_t *r, const char *key, long long *out,
                               size_t max, long long lo, long long hi) {
  const char *s = lowp_run_param(r, key);
  char item[128], why[160];
  size_t n = 0;
  int last = 0;
  snprintf(why, sizeof why, "expected 1 to %zu comma-separated integers in [%lld, %lld]", max, lo,
           hi);
  while (!last) {
    long long v = 0;
    if (n == max || !list_item(&s, item, sizeof item, &last) ||
        lowp_parse_int(&v, item, lo, hi) != 0)
      lowp_run_bad_param(r, key, why);
    out[n++] = v;
  }
  return n;
}

void lowp_run_progress(const lowp_run_t *r, const char *fmt, ...) {
  va_list ap;
  if (!r->progress) return;
  fprintf(stderr, "\r%s: ", r->exp->name);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\033[K");
  fflush(stderr);
}

/* lowp__g_path: four rotating buffers so that up to four paths can be used
   in one expression (fopen(path a), rename(path b, path c)); a program runs
   one experiment at a time, single-threaded, so sharing them is safe. */
static char lowp__g_path[4][4096];
static int lowp__g_path_k;

const char *lowp_run_path(const lowp_run_t *r, const char *file) {
  lowp__g_path_k = (lowp__g_path_k + 1) & 3;
  snprintf(lowp__g_path[lowp__g_path_k], sizeof lowp__g_path[0], "%s/%s",
           r->outdir, file);
  return lowp__g_path[lowp__g_path_k];
}
