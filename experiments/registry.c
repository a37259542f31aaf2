/* lowp_experiment -- the registry: every experiment described once */

#include "registry.h"

#include "format/number.h"
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

void lowp_run_bad_param(const lowp_run_t *r, const char *key, const char *why) {
  fprintf(stderr, "lowp run %s: bad value '%s' for %s: %s\n", r->exp->name,
          lowp_run_param(r, key), key, why);
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
