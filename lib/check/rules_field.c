/* lowp_check rules the field gates on (lib/check/pipeline.h): SQNR in dB
   (torchao: >= 25 dB fp8 unit tests, >= 20 dB LLaMA-3-70B FFN shapes, >= 15
   dB MXFP4/NVFP4), cosine similarity, and the count or fraction of elements
   outside rtol/atol (assert_close's "Mismatched elements: 556/768"). */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check/pipeline.h"
#include "status.h"

/* the present output with the smallest value of sqnr_db (sim = 0) or cosine
   (sim = 1); NaN (a class mismatch) counts as the smallest */
static int lowest_out(const lowp_check_result_t *r, int sim) {
  int j, w = -1;
  for (j = 0; j < r->n_out; j++) {
    double x, y;
    if (r->out[j].absent) continue;
    if (w < 0) { w = j; continue; }
    x = sim ? r->out[j].cosine : r->out[j].sqnr_db;
    y = sim ? r->out[w].cosine : r->out[w].sqnr_db;
    if (isnan(x) || x < y) w = j;
  }
  return w < 0 ? 0 : w;
}

static void worst_abs(lowp_verdict_t *v, const lowp_check_result_t *r, int j) {
  const lowp_check_output_t *o = &r->out[j];
  v->where_out = j;
  if (o->n_class_mismatch) v->where = o->first_class_mismatch;
  else v->where = o->err.n > o->err.n_exact ? o->err.argmax_abs : (size_t)-1;
}

static void where_text(char *buf, size_t len, const lowp_verdict_t *v,
                       const lowp_check_result_t *r) {
  if (v->where == (size_t)-1) snprintf(buf, len, "-");
  else lowp_check_index_str(buf, len, &r->problem, v->where_out, v->where);
}

static int eval_sqnr(lowp_verdict_t *v, const lowp_rule_t *rule, const lowp_check_result_t *r) {
  char idx[96];
  int j = lowest_out(r, 0);
  snprintf(v->what, sizeof v->what, "sqnr_db");
  v->measured = r->out[j].sqnr_db;
  v->limit = rule->limit;
  v->pass = v->measured >= v->limit;
  /* a gate in dB has no "percent of the limit": the message and the report
     give the margin in dB (measured - gate) instead */
  v->percent = NAN;
  worst_abs(v, r, j);
  where_text(idx, sizeof idx, v, r);
  snprintf(v->msg, sizeof v->msg, "SQNR %.4g dB %s gate %.4g dB (margin %+.3g dB; output %s; "
           "largest |d| at %s)", v->measured, v->pass ? ">=" : "<", v->limit,
           v->measured - v->limit, r->out[j].name, idx);
  return LOWP_OK;
}

static int eval_cosine(lowp_verdict_t *v, const lowp_rule_t *rule, const lowp_check_result_t *r) {
  char idx[96];
  int j = lowest_out(r, 1);
  snprintf(v->what, sizeof v->what, "cosine");
  v->measured = r->out[j].cosine;
  v->limit = rule->limit;
  v->pass = v->measured >= v->limit;
  v->percent = v->limit < 1 ? 100 * (1 - v->measured) / (1 - v->limit)
                            : (v->measured >= 1 ? 0 : INFINITY);
  if (isnan(v->measured)) v->percent = INFINITY;
  worst_abs(v, r, j);
  where_text(idx, sizeof idx, v, r);
  snprintf(v->msg, sizeof v->msg, "cosine similarity %.9g %s %.9g (output %s; largest |d| at "
           "%s)", v->measured, v->pass ? ">=" : "<", v->limit, r->out[j].name, idx);
  return LOWP_OK;
}

static int eval_mismatch(lowp_verdict_t *v, const lowp_rule_t *rule,
                         const lowp_check_result_t *r) {
  double rt = rule->rtol, at = rule->atol, worst;
  size_t n, total;
  char idx[96];
  if (rule->pytorch) lowp_check_pytorch_tol(&rt, &at, &r->problem.out);
  snprintf(v->what, sizeof v->what, "mismatch");
  n = lowp_check_mismatch(r, rt, at, &total, &worst, &v->where_out, &v->where);
  v->measured = rule->fraction ? (total ? (double)n / (double)total : 0) : (double)n;
  v->limit = rule->limit;
  v->pass = v->measured <= v->limit;
  if (v->limit > 0) v->percent = 100 * v->measured / v->limit;
  else v->percent = v->measured == 0 ? 0 : INFINITY;
  where_text(idx, sizeof idx, v, r);
  if (rule->fraction)
    snprintf(v->msg, sizeof v->msg, "mismatched elements: %zu/%zu (%.4g%%) %s %.4g%% under "
             "rtol %g, atol %g%s; worst |d| / (atol + rtol |x|) %.4g at %s", n, total,
             100 * v->measured, v->pass ? "<=" : ">", 100 * v->limit, rt, at,
             rule->pytorch ? " (PyTorch's defaults)" : "", worst, idx);
  else
    snprintf(v->msg, sizeof v->msg, "mismatched elements: %zu/%zu (%.4g%%) %s %.0f under "
             "rtol %g, atol %g%s; worst |d| / (atol + rtol |x|) %.4g at %s", n, total,
             total ? 100.0 * (double)n / (double)total : 0.0, v->pass ? "<=" : ">", v->limit,
             rt, at, rule->pytorch ? " (PyTorch's defaults)" : "", worst, idx);
  return LOWP_OK;
}

/* {"in_format": N}: how many output values are not values of the output
   format (an fp64 array declared fp16 holding 0.1); the first one is the
   rule's element */
static int eval_in_format(lowp_verdict_t *v, const lowp_rule_t *rule,
                          const lowp_check_result_t *r) {
  const lowp_format_t *f = &r->problem.out;
  char idx[96];
  size_t n = 0, i;
  int j;
  snprintf(v->what, sizeof v->what, "in_format");
  v->where = (size_t)-1;
  for (j = 0; j < r->n_out; j++) {
    const lowp_check_output_t *o = &r->out[j];
    n += o->absent ? 0 : o->n_not_in_format;
    for (i = 0; v->where == (size_t)-1 && !o->absent && o->n_not_in_format && i < o->count; i++) {
      double y, g = o->got[i];
      if (isnan(g)) continue;
      (void)lowp_round_f64(&y, g, f, NULL, LOWP_RND_NE);
      if (y != g) {
        v->where = i;
        v->where_out = j;
      }
    }
  }
  v->measured = (double)n;
  v->limit = rule->limit;
  v->pass = v->measured <= v->limit;
  v->percent = v->limit > 0 ? 100 * v->measured / v->limit : (n ? INFINITY : 0);
  where_text(idx, sizeof idx, v, r);
  if (n)
    snprintf(v->msg, sizeof v->msg, "%zu output values are not %s values (%s %.0f); the first "
             "at %s: %.17g", n, f->name ? f->name : "output-format", v->pass ? "<=" : ">",
             v->limit, idx, r->out[v->where_out].got[v->where]);
  else
    snprintf(v->msg, sizeof v->msg, "every output value is a %s value",
             f->name ? f->name : "output-format");
  return LOWP_OK;
}

int lowp_check_rule_eval_field(lowp_verdict_t *v, const lowp_rule_t *rule,
                               const lowp_check_result_t *r) {
  if (!v || !rule || !r) return LOWP_EINVAL;
  switch (rule->kind) {
  case LOWP_RULE_SQNR: return eval_sqnr(v, rule, r);
  case LOWP_RULE_COSINE: return eval_cosine(v, rule, r);
  case LOWP_RULE_MISMATCH: return eval_mismatch(v, rule, r);
  case LOWP_RULE_IN_FORMAT: return eval_in_format(v, rule, r);
  default: return LOWP_EINVAL;
  }
}
