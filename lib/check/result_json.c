/* lowp_check_result_json -- a measured result and its verdicts as JSON (the
   keys of lowp check's --json: README, "lowp check") */

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check/pipeline.h"
#include "check/result_json.h"

void lowp_json_num(cJSON *obj, const char *key, double v) {
  /* JSON has no NaN or infinity: they are the strings "nan", "inf", "-inf" */
  if (isnan(v)) cJSON_AddStringToObject(obj, key, "nan");
  else if (isinf(v)) cJSON_AddStringToObject(obj, key, v > 0 ? "inf" : "-inf");
  else cJSON_AddNumberToObject(obj, key, v);
}

cJSON *lowp_check_element_json(const lowp_check_result_t *r, const lowp_check_inputs_t *in, int j,
                           size_t i) {
  const lowp_check_output_t *o = &r->out[j];
  cJSON *w = cJSON_CreateObject();
  char idx[128], sum[200], hx[64];
  lowp_check_index_str(idx, sizeof idx, &r->problem, j, i);
  cJSON_AddStringToObject(w, "output", o->name);
  cJSON_AddStringToObject(w, "index", idx);
  cJSON_AddNumberToObject(w, "flat", (double)i);
  lowp_json_num(w, "got", o->got[i]);
  snprintf(hx, sizeof hx, "%a", o->got[i]);
  cJSON_AddStringToObject(w, "got_hex", hx);
  lowp_json_num(w, "exact", o->exact[i]);
  snprintf(hx, sizeof hx, "%a", o->exact[i]);
  cJSON_AddStringToObject(w, "exact_hex", hx);
  if (in) {
    lowp_check_inputs_summary(sum, sizeof sum, &r->problem, in, j, i);
    cJSON_AddStringToObject(w, "inputs", sum);
  }
  return w;
}

static cJSON *output_json(const lowp_check_result_t *r, const lowp_check_inputs_t *in, int j) {
  const lowp_check_output_t *o = &r->out[j];
  cJSON *oj = cJSON_CreateObject();
  cJSON_AddStringToObject(oj, "name", o->name);
  if (o->absent) { /* the subject did not produce it: nothing measured */
    cJSON_AddBoolToObject(oj, "absent", 1);
    return oj;
  }
  lowp_json_num(oj, "max_ulp", o->err.max_ulp);
  lowp_json_num(oj, "mean_ulp", o->err.mean_ulp);
  lowp_json_num(oj, "max_abs", o->err.max_abs);
  lowp_json_num(oj, "max_rel", o->err.max_rel);
  lowp_json_num(oj, "rmse", o->rmse);
  if (o->absab) lowp_json_num(oj, "max_bwd", o->err.max_bwd);
  lowp_json_num(oj, "sqnr_db", o->sqnr_db);
  lowp_json_num(oj, "cosine", o->cosine);
  lowp_json_num(oj, "ulp_total", o->ulp_total);
  lowp_json_num(oj, "ulp_input", o->ulp_input);
  lowp_json_num(oj, "ulp_compute", o->ulp_compute);
  lowp_json_num(oj, "max_ulp_input", o->max_ulp_input);
  cJSON_AddNumberToObject(oj, "count", (double)o->count);
  cJSON_AddNumberToObject(oj, "n_exact", (double)o->err.n_exact);
  cJSON_AddNumberToObject(oj, "n_class_mismatch", (double)o->n_class_mismatch);
  cJSON_AddNumberToObject(oj, "n_not_in_format", (double)o->n_not_in_format);
  if (o->worst != (size_t)-1) cJSON_AddItemToObject(oj, "worst", lowp_check_element_json(r, in, j, o->worst));
  return oj;
}

static void bound_json(cJSON *b, const char *name, const lowp_check_bound_t *x) {
  cJSON *o = cJSON_CreateObject();
  lowp_json_num(o, "value", x->value);
  cJSON_AddBoolToObject(o, "vacuous", isinf(x->value));
  if (!isinf(x->value)) lowp_json_num(o, "used", x->used);
  cJSON_AddStringToObject(o, "name", x->name);
  cJSON_AddItemToObject(b, name, o);
}

cJSON *lowp_check_bounds_json(const lowp_check_result_t *r, const lowp_verdict_t *v, int n_v) {
  static const char *bn[3] = {"gamma", "prob", "model"};
  const lowp_check_bound_t *bs[3] = {&r->gamma, &r->prob, &r->model};
  cJSON *b = cJSON_CreateObject();
  int k;
  for (k = 0; k < 3; k++)
    if (bs[k]->have) bound_json(b, bn[k], bs[k]);
  /* a subject without a declared method (saved tensors, a plugin): the
     bounds its rules named */
  for (k = 0; k < n_v; k++)
    if (v[k].bound.have && v[k].bound_kind >= 0 && v[k].bound_kind < 3 &&
        !cJSON_GetObjectItemCaseSensitive(b, bn[v[k].bound_kind]))
      bound_json(b, bn[v[k].bound_kind], &v[k].bound);
  return b;
}

cJSON *lowp_check_verdict_json(const lowp_check_result_t *r, const lowp_check_inputs_t *in,
                               const lowp_verdict_t *v) {
  cJSON *x = cJSON_CreateObject();
  cJSON_AddStringToObject(x, "rule", v->what);
  cJSON_AddBoolToObject(x, "pass", v->pass);
  lowp_json_num(x, "measured", v->measured);
  lowp_json_num(x, "limit", v->limit);
  lowp_json_num(x, "percent", v->percent);
  cJSON_AddBoolToObject(x, "vacuous", v->vacuous);
  cJSON_AddStringToObject(x, "message", v->msg);
  if (r && v->where != (size_t)-1 && v->where_out >= 0 && v->where_out < r->n_out &&
      v->where < r->out[v->where_out].count)
    cJSON_AddItemToObject(x, "worst", lowp_check_element_json(r, in, v->where_out, v->where));
  return x;
}

cJSON *lowp_check_result_json(const lowp_check_result_t *r, const lowp_check_inputs_t *in,
                              const lowp_verdict_t *v, int n_v) {
  cJSON *c = cJSON_CreateObject(), *outs = cJSON_CreateArray(), *m = cJSON_CreateObject(),
        *rules = cJSON_CreateArray(), *d = cJSON_CreateObject(), *ins = cJSON_CreateArray();
  int j, k, pass = 1;
  cJSON_AddStringToObject(c, "op", r->problem.op->name);
  cJSON_AddStringToObject(c, "subject", r->subject);
  if (r->problem.out.name) cJSON_AddStringToObject(c, "out", r->problem.out.name);
  for (k = 0; k < r->problem.op->n_in; k++)
    cJSON_AddItemToArray(ins, cJSON_CreateString(r->problem.has_bin[k] ? r->problem.bin[k].name
                                                 : r->problem.in[k].name ? r->problem.in[k].name : "custom"));
  cJSON_AddItemToObject(c, "in", ins);
  cJSON_AddNumberToObject(d, "batch", (double)r->problem.dims.batch);
  cJSON_AddNumberToObject(d, "m", (double)r->problem.dims.m);
  cJSON_AddNumberToObject(d, "n", (double)r->problem.dims.n);
  cJSON_AddNumberToObject(d, "k", (double)r->problem.dims.k);
  cJSON_AddItemToObject(c, "dims", d);
  for (k = 0; k < LOWP_METRIC_COUNT; k++)
    lowp_json_num(m, lowp_metric_name((lowp_metric_t)k), lowp_metric_value(r, (lowp_metric_t)k));
  {
    double sq = INFINITY, co = 1;
    for (j = 0; j < r->n_out; j++)
      if (!r->out[j].absent) {
        if (r->out[j].sqnr_db < sq || isnan(r->out[j].sqnr_db)) sq = r->out[j].sqnr_db;
        if (r->out[j].cosine < co || isnan(r->out[j].cosine)) co = r->out[j].cosine;
      }
    lowp_json_num(m, "sqnr_db", sq);
    lowp_json_num(m, "cosine", co);
  }
  cJSON_AddItemToObject(c, "metrics", m);
  for (j = 0; j < r->n_out; j++) cJSON_AddItemToArray(outs, output_json(r, in, j));
  cJSON_AddItemToObject(c, "outputs", outs);
  cJSON_AddItemToObject(c, "bounds", lowp_check_bounds_json(r, v, n_v));
  for (k = 0; k < n_v; k++) {
    cJSON_AddItemToArray(rules, lowp_check_verdict_json(r, in, &v[k]));
    if (!v[k].pass) pass = 0;
  }
  cJSON_AddItemToObject(c, "rules", rules);
  cJSON_AddStringToObject(c, "verdict", pass ? "pass" : "fail");
  return c;
}
