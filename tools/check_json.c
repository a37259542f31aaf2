/* lowp_chk_result_json -- lowp check: the results as JSON */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_internal.h"
#include "io/escape.h"
#include "check/result_json.h"
#include "status.h"

/* ----------------------------------------------------------- public API */

void lowp_chk_add_num(cJSON *obj, const char *key, double v) {
  if (isfinite(v)) cJSON_AddNumberToObject(obj, key, v);
  else if (isnan(v)) cJSON_AddNullToObject(obj, key);
  else cJSON_AddStringToObject(obj, key, v > 0 ? "inf" : "-inf");
}

cJSON *lowp_chk_metrics_json(const lowp_check_result_t *res) {
  cJSON *m = cJSON_CreateObject();
  int k;
  for (k = 0; k < LOWP_METRIC_COUNT; k++)
    lowp_chk_add_num(m, lowp_metric_name((lowp_metric_t)k), lowp_metric_value(res, (lowp_metric_t)k));
  return m;
}

cJSON *lowp_chk_result_json(const lowp_chk_run_t *r) {
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
      cJSON_AddItemToArray(in, cJSON_CreateString(r->p.has_bin[k] ? r->p.bin[k].name
                                                  : r->p.in[k].name ? r->p.in[k].name : "?"));
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
  {
    cJSON *cv = NULL;
    for (k = 0; k < r->p.op->n_in; k++)
      if (r->p.has_conv[k]) {
        cJSON *o = cJSON_CreateObject();
        if (!cv) cv = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "format", r->p.conv[k].name ? r->p.conv[k].name : "?");
        cJSON_AddStringToObject(o, "rnd", lowp_rounding_name(r->p.conv_rnd[k]));
        cJSON_AddItemToObject(cv, r->p.op->in_names[k], o);
      }
    if (cv) cJSON_AddItemToObject(c, "convert", cv);
  }
  if (r->notes[0]) {
    cJSON *nl = cJSON_CreateArray();
    const char *q = r->notes, *e;
    for (; *q; q = *e ? e + 1 : e) {
      char line[sizeof r->notes];
      e = strchr(q, '\n');
      if (!e) e = q + strlen(q);
      snprintf(line, sizeof line, "%.*s", (int)(e - q), q);
      cJSON_AddItemToArray(nl, cJSON_CreateString(line));
    }
    cJSON_AddItemToObject(c, "notes", nl);
  }
  if (r->error[0]) cJSON_AddStringToObject(c, "error", r->error);
  if (r->measured) {
    cJSON *outs = cJSON_CreateArray();
    cJSON_AddItemToObject(c, "metrics", lowp_chk_metrics_json(&r->res));
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
      lowp_chk_add_num(oj, "max_ulp", o->err.max_ulp);
      lowp_chk_add_num(oj, "mean_ulp", o->err.mean_ulp);
      lowp_chk_add_num(oj, "max_abs", o->err.max_abs);
      lowp_chk_add_num(oj, "max_rel", o->err.max_rel);
      lowp_chk_add_num(oj, "rmse", o->rmse);
      lowp_chk_add_num(oj, "sqnr_db", o->sqnr_db);
      lowp_chk_add_num(oj, "cosine", o->cosine);
      if (o->absab) lowp_chk_add_num(oj, "max_bwd", o->err.max_bwd);
      lowp_chk_add_num(oj, "ulp_total", o->ulp_total);
      lowp_chk_add_num(oj, "ulp_input", o->ulp_input);
      lowp_chk_add_num(oj, "ulp_compute", o->ulp_compute);
      lowp_chk_add_num(oj, "max_ulp_input", o->max_ulp_input);
      cJSON_AddNumberToObject(oj, "n_exact", (double)o->err.n_exact);
      cJSON_AddNumberToObject(oj, "n_class_mismatch", (double)o->n_class_mismatch);
      cJSON_AddNumberToObject(oj, "n_not_in_format", (double)o->n_not_in_format);
      if (o->worst != (size_t)-1) {
        cJSON *w = cJSON_CreateObject();
        lowp_check_index_str(idx, sizeof idx, &r->p, j, o->worst);
        lowp_check_inputs_summary(sum, sizeof sum, &r->p, &r->in, j, o->worst);
        cJSON_AddStringToObject(w, "index", idx);
        cJSON_AddNumberToObject(w, "flat", (double)o->worst);
        lowp_chk_add_num(w, "got", o->got[o->worst]);
        snprintf(hx, sizeof hx, "%a", o->got[o->worst]);
        cJSON_AddStringToObject(w, "got_hex", hx);
        lowp_chk_add_num(w, "exact", o->exact[o->worst]);
        snprintf(hx, sizeof hx, "%a", o->exact[o->worst]);
        cJSON_AddStringToObject(w, "exact_hex", hx);
        cJSON_AddStringToObject(w, "inputs", sum);
        cJSON_AddItemToObject(oj, "worst", w);
      }
      cJSON_AddItemToArray(outs, oj);
    }
    cJSON_AddItemToObject(c, "outputs", outs);
    /* the declared method's bounds and those the bound rules used (a
       tensor or plugin subject declares none: its gamma rule's bound) */
    cJSON_AddItemToObject(c, "bounds", lowp_check_bounds_json(&r->res, r->v, r->n_v));
    lowp_chk_add_num(c, "time_subject_s", r->res.time_subject_s);
    lowp_chk_add_num(c, "time_exact_s", r->res.time_exact_s);
  }
  for (k = 0; k < r->n_v; k++) {
    const lowp_verdict_t *v = &r->v[k];
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "rule", v->what);
    cJSON_AddBoolToObject(x, "pass", v->pass);
    lowp_chk_add_num(x, "measured", v->measured);
    lowp_chk_add_num(x, "limit", v->limit);
    lowp_chk_add_num(x, "percent", v->percent);
    cJSON_AddBoolToObject(x, "vacuous", v->vacuous);
    cJSON_AddStringToObject(x, "message", v->msg);
    if (r->measured && v->where != (size_t)-1 && v->where_out >= 0 && v->where_out < r->res.n_out &&
        v->where < r->res.out[v->where_out].count) /* the element of the rule's own metric */
      cJSON_AddItemToObject(x, "worst", lowp_check_element_json(&r->res, &r->in, v->where_out,
                                                                v->where));
    cJSON_AddItemToArray(rules, x);
  }
  cJSON_AddItemToObject(c, "rules", rules);
  if (r->fpx.on && r->measured) cJSON_AddItemToObject(c, "fpx", lowp_chk_fpx_json(r));
  return c;
}

int lowp_chk_write_json(const char *path, cJSON *j) {
  char *txt = cJSON_Print(j), *t2;
  int st;
  size_t n;
  if (!txt) return LOWP_ENOMEM;
  /* names and messages from plugins and files: bytes that are not UTF-8
     become '?', so the file is JSON (RFC 8259 text is UTF-8) */
  lowp_utf8_sanitize(txt);
  n = strlen(txt);
  t2 = realloc(txt, n + 2);
  if (!t2) {
    free(txt);
    return LOWP_ENOMEM;
  }
  txt = t2;
  txt[n] = '\n';
  txt[n + 1] = '\0';
  {
    lowp_atomic_t *w = lowp_chk_new_out(path);
    st = (w && fwrite(txt, 1, n + 1, w->fp) == n + 1 && !ferror(w->fp)) ? LOWP_OK : LOWP_EIO;
  }
  free(txt);
  return st;
}
