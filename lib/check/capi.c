/* lowp_capi -- the flat C API for the Python binding (lib/check/capi.h) */

#define _POSIX_C_SOURCE 200809L

#include "check/capi.h"
#include "format/bsformat.h"
#include "model/bsmma.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/pipeline.h"
#include "check/result_json.h"
#include "check/spec.h"
#include "check/tol.h"
#include "status.h"

#define ITEM(o, key) cJSON_GetObjectItemCaseSensitive(o, key)

static int bad(char *err, size_t errlen, int st, const char *fmt, const char *a) {
  if (err && errlen) snprintf(err, errlen, fmt, a ? a : "");
  return st;
}

static int get_format(lowp_format_t *f, const cJSON *j, const char *key, const char *dflt,
                      char *err, size_t errlen) {
  const char *name = cJSON_IsString(j) ? j->valuestring : dflt;
  const lowp_format_t *b;
  char e[200];
  if (!name) return bad(err, errlen, LOWP_EINVAL, "\"%s\": a format name is needed", key);
  b = name ? lowp_format_by_name(name) : NULL;
  if (b) {
    *f = *b;
    return LOWP_OK;
  }
  if (lowp_format_parse(f, name, e, sizeof e)) {
    if (err && errlen) snprintf(err, errlen, "\"%s\": unknown format '%s' (%s)", key, name, e);
    return LOWP_EFORMAT;
  }
  return LOWP_OK;
}

/* a size: 1 when absent; 0 (refused by the caller) when not in [1, 2^48] */
static size_t get_size(const cJSON *o, const char *key) {
  const cJSON *j = ITEM(o, key);
  if (!j) return 1;
  if (!cJSON_IsNumber(j) || !(j->valuedouble >= 1 && j->valuedouble <= 281474976710656.0))
    return 0;
  return (size_t)j->valuedouble;
}

/* "shapes": [[..], ..] of the inputs -> p->dims (lowp_op_dims_infer) */
static int dims_from_shapes(lowp_problem_t *p, const cJSON *shapes, char *err, size_t errlen) {
  size_t sh[LOWP_OP_MAXIO][LOWP_OP_MAXDIM];
  const size_t *sp[LOWP_OP_MAXIO];
  int nd[LOWP_OP_MAXIO], i;
  if (!cJSON_IsArray(shapes) || cJSON_GetArraySize(shapes) != p->op->n_in)
    return bad(err, errlen, LOWP_ESHAPE, "%s: give \"dims\" or the shape of every input",
               p->op->name);
  for (i = 0; i < p->op->n_in; i++) {
    const cJSON *s = cJSON_GetArrayItem(shapes, i), *x;
    nd[i] = 0;
    sp[i] = sh[i];
    if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) > LOWP_OP_MAXDIM)
      return bad(err, errlen, LOWP_ESHAPE, "input %s: at most 4 axes", p->op->in_names[i]);
    cJSON_ArrayForEach(x, s) {
      if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0 && x->valuedouble <= 281474976710656.0))
        return bad(err, errlen, LOWP_ESHAPE, "input %s: bad shape", p->op->in_names[i]);
      sh[i][nd[i]++] = (size_t)x->valuedouble;
    }
  }
  return lowp_op_dims_infer(p, sp, nd, err, errlen);
}

/* op, dims (or shapes), in, out, eps, reduction */
static int desc_problem(lowp_problem_t *p, const cJSON *d, char *err, size_t errlen) {
  const cJSON *j = ITEM(d, "op"), *in = ITEM(d, "in"), *dims = ITEM(d, "dims");
  int i, st;
  memset(p, 0, sizeof *p);
  p->eps = 1e-5;
  if (!cJSON_IsString(j)) return bad(err, errlen, LOWP_EINVAL, "%s\"op\" is needed", "");
  p->op = lowp_op_by_name(j->valuestring);
  if (!p->op) return bad(err, errlen, LOWP_EINVAL, "unknown operation '%s'", j->valuestring);
  p->dims.batch = get_size(dims, "batch");
  p->dims.m = get_size(dims, "m");
  p->dims.n = get_size(dims, "n");
  p->dims.k = get_size(dims, "k");
  if (!p->dims.batch || !p->dims.m || !p->dims.n || !p->dims.k)
    return bad(err, errlen, LOWP_EINVAL, "%s\"dims\": sizes are integers in [1, 2^48]", "");
  if (!cJSON_IsObject(dims) && (st = dims_from_shapes(p, ITEM(d, "shapes"), err, errlen)))
    return st;
  for (i = 0; i < p->op->n_in; i++) {
    const cJSON *f = cJSON_IsArray(in) ? cJSON_GetArrayItem(in, i) : in;
    if (p->op->in_index[i]) { p->in[i] = LOWP_FMT_FP64; continue; }
    if ((st = get_format(&p->in[i], f, "in", NULL, err, errlen))) return st;
  }
  if ((st = get_format(&p->out, ITEM(d, "out"), "out", p->in[0].name, err, errlen))) return st;
  if (cJSON_IsNumber(ITEM(d, "eps"))) p->eps = ITEM(d, "eps")->valuedouble;
  j = ITEM(d, "reduction");
  p->reduction_mean = cJSON_IsString(j) && !strcmp(j->valuestring, "mean");
  return LOWP_OK;
}

/* "order"/"acc" -> an accumulation; "model" -> a tensor-core model */
static int desc_method(lowp_subject_t *s, const cJSON *d, const lowp_problem_t *p,
                       const char *acc_default, char *err, size_t errlen) {
  const cJSON *o = ITEM(d, "order"), *a = ITEM(d, "acc"), *m = ITEM(d, "model");
  char e[200];
  int st;
  if (cJSON_IsString(m)) {
    st = lowp_tc_model_get(&s->model, m->valuestring, &p->in[0], &p->out, e, sizeof e);
    if (st) {
      if (err && errlen) snprintf(err, errlen, "model '%s': %s", m->valuestring, e);
      return st;
    }
    s->has_model = 1;
    return LOWP_OK;
  }
  if (!cJSON_IsString(o) && !cJSON_IsString(a) && !acc_default) return LOWP_OK;
  if (lowp_accum_parse(&s->accum, cJSON_IsString(o) ? o->valuestring : "recursive", e, sizeof e)) {
    if (err && errlen) snprintf(err, errlen, "order: %s", e);
    return LOWP_EINVAL;
  }
  if ((st = get_format(&s->accum.acc, a, "acc", acc_default ? acc_default : p->out.name, err,
                       errlen)))
    return st;
  if (lowp_accum_validate(&s->accum, e, sizeof e)) {
    if (err && errlen) snprintf(err, errlen, "accumulation: %s", e);
    return LOWP_EINVAL;
  }
  s->has_accum = 1;
  return LOWP_OK;
}

/* ------------------------------------------------------ the arrays subject */

static int arrays_run(const lowp_subject_t *s, double *const *out, const double *const *in,
                      const lowp_problem_t *p, char *err, size_t errlen) {
  const double *const *src = (const double *const *)s->ctx;
  int j;
  (void)in;
  (void)err;
  (void)errlen;
  for (j = 0; j < p->op->n_out; j++) {
    size_t shape[LOWP_OP_MAXDIM], c;
    int nd;
    if (lowp_op_shape(p, p->op->n_in + j, shape, &nd, &c)) return LOWP_EINVAL;
    if (src[j]) memcpy(out[j], src[j], c * sizeof(double));
  }
  return LOWP_OK;
}

static void arrays_subject(lowp_subject_t *s, const char *name, const double *const *outs,
                           const lowp_problem_t *p, const cJSON *absent) {
  int j;
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", name);
  s->kind = "arrays";
  s->run = arrays_run;
  s->ctx = (void *)(size_t)outs;
  for (j = 1; j < p->op->n_out; j++)
    if (!outs[j]) s->absent |= 1u << j;
  if (cJSON_IsArray(absent)) {
    const cJSON *it;
    cJSON_ArrayForEach(it, absent)
      if (cJSON_IsNumber(it) && it->valueint > 0 && it->valueint < p->op->n_out)
        s->absent |= 1u << it->valueint;
  }
}

/* ------------------------------------------------------------------ rules */

/* models named in bound rules; a vacuous bound refused unless accepted */
static int rules_prepare(lowp_spec_rule_t *ru, int n, const lowp_problem_t *p,
                         const lowp_subject_t *s, char *err, size_t errlen) {
  int i, st;
  char e[200];
  for (i = 0; i < n; i++) {
    lowp_rule_t *r = &ru[i].rule;
    lowp_check_bound_t b;
    if (r->kind != LOWP_RULE_BOUND) continue;
    if (ru[i].model) {
      st = lowp_tc_model_get(&r->model, ru[i].model, &p->in[0], &p->out, e, sizeof e);
      if (st) {
        if (err && errlen) snprintf(err, errlen, "rule %d: model '%s': %s", i + 1, ru[i].model, e);
        return st;
      }
      r->has_model = 1;
    }
    if (p->op->kind != LOWP_OPKIND_SUMPROD) continue; /* eval says why */
    st = lowp_check_rule_bound(&b, r, p, s, 0);
    if (!st && isinf(b.value) && !r->vacuous_ok) {
      if (err && errlen)
        snprintf(err, errlen, "rule %d: the bound %s is vacuous for k = %zu: the rule could "
                 "never fail (say \"accept_vacuous\": true to keep it)", i + 1, b.name,
                 p->op->id == LOWP_OP_SUM ? p->dims.n : p->dims.k);
      return LOWP_EPARSE;
    }
  }
  return LOWP_OK;
}

static int eval_rules(lowp_verdict_t *v, lowp_spec_rule_t *ru, int n,
                      const lowp_check_result_t *r, const lowp_check_result_t *ref,
                      const lowp_subject_t *s, char *err, size_t errlen) {
  int i, st;
  for (i = 0; i < n; i++) {
    lowp_rule_t rule = ru[i].rule;
    if (ru[i].has_ref) {
      if (!ref)
        return bad(err, errlen, LOWP_EINVAL, "a %s rule needs the reference's outputs "
                   "(reference=...)", rule.kind == LOWP_RULE_BITEXACT ? "bitexact" : "vs_reference");
      rule.other = ref;
    }
    st = lowp_check_rule_eval(&v[i], &rule, r, s);
    if (st) {
      if (err && errlen) snprintf(err, errlen, "rule %d: %s", i + 1, v[i].msg);
      return st == LOWP_EUNSUPPORTED ? LOWP_EPARSE : st;
    }
  }
  return LOWP_OK;
}

/* "mismatch": elements outside rtol/atol (assert_close's "Mismatched
   elements"), under the first rtol/atol rule's tolerance or PyTorch's
   defaults for the output format */
static void add_mismatch(cJSON *res, const lowp_check_result_t *r, const lowp_spec_rule_t *ru,
                         int n) {
  double rt = 0, at = 0, worst;
  size_t cnt, total;
  int i, pt = 1;
  cJSON *m = cJSON_CreateObject();
  for (i = 0; i < n; i++)
    if (ru[i].rule.kind == LOWP_RULE_TOL || ru[i].rule.kind == LOWP_RULE_MISMATCH) {
      pt = ru[i].rule.pytorch;
      rt = ru[i].rule.rtol;
      at = ru[i].rule.atol;
      break;
    }
  if (pt) lowp_check_pytorch_tol(&rt, &at, &r->problem.out);
  cnt = lowp_check_mismatch(r, rt, at, &total, &worst, NULL, NULL);
  cJSON_AddNumberToObject(m, "count", (double)cnt);
  cJSON_AddNumberToObject(m, "total", (double)total);
  lowp_json_num(m, "rtol", rt);
  lowp_json_num(m, "atol", at);
  lowp_json_num(m, "worst_ratio", worst);
  cJSON_AddItemToObject(res, "mismatch", m);
}

static int measure(lowp_check_result_t *r, const lowp_problem_t *p, const lowp_subject_t *s,
                   const lowp_check_inputs_t *in, double prob, char *err, size_t errlen) {
  lowp_check_opts_t o;
  memset(&o, 0, sizeof o);
  o.prob = prob;
  return lowp_check_measure(r, p, s, in, &o, err, errlen);
}

int lowp_capi_check(char **json, const char *desc, const double *const *in,
                    const double *const *out, const double *const *ref, char *err,
                    size_t errlen) {
  cJSON *d = NULL, *res = NULL;
  lowp_problem_t p;
  lowp_subject_t s, rs;
  lowp_check_inputs_t inp;
  lowp_check_result_t r, rr;
  lowp_spec_rule_t *ru = NULL;
  lowp_verdict_t *v = NULL;
  int n = 0, st;
  char *rules_txt = NULL;
  const cJSON *jn;
  double prob;
  if (err && errlen) err[0] = '\0';
  if (!json || !desc || !in || !out) return LOWP_EINVAL;
  *json = NULL;
  memset(&inp, 0, sizeof inp);
  memset(&r, 0, sizeof r);
  memset(&rr, 0, sizeof rr);
  d = cJSON_Parse(desc);
  if (!cJSON_IsObject(d)) {
    cJSON_Delete(d);
    return bad(err, errlen, LOWP_EPARSE, "%sthe description is not a JSON object", "");
  }
  jn = ITEM(d, "prob");
  prob = cJSON_IsNumber(jn) ? jn->valuedouble : 0.99;
  if ((st = desc_problem(&p, d, err, errlen))) goto done;
  jn = ITEM(d, "subject");
  arrays_subject(&s, cJSON_IsString(jn) ? jn->valuestring : "arrays", out, &p, ITEM(d, "absent"));
  if ((st = desc_method(&s, d, &p, NULL, err, errlen))) goto done;
  jn = ITEM(d, "reference");
  arrays_subject(&rs, cJSON_IsString(jn) ? jn->valuestring : "reference", ref ? ref : out, &p,
                 ITEM(d, "absent"));
  if (cJSON_IsArray(ITEM(d, "rules"))) rules_txt = cJSON_PrintUnformatted(ITEM(d, "rules"));
  if ((st = lowp_spec_rules_parse(&ru, &n, rules_txt ? rules_txt : "[]", &p.out, err, errlen)))
    goto done;
  if ((st = rules_prepare(ru, n, &p, &s, err, errlen))) goto done;
  if ((st = lowp_check_inputs_copy(&inp, &p, in, NULL))) {
    bad(err, errlen, st, "inputs: %s", lowp_status_str(st));
    goto done;
  }
  if ((st = measure(&r, &p, &s, &inp, prob, err, errlen))) goto done;
  if (ref && (st = measure(&rr, &p, &rs, &inp, prob, err, errlen))) goto done;
  v = calloc(n ? (size_t)n : 1, sizeof *v);
  if (!v) { st = LOWP_ENOMEM; goto done; }
  if ((st = eval_rules(v, ru, n, &r, ref ? &rr : NULL, &s, err, errlen))) goto done;
  res = lowp_check_result_json(&r, &inp, v, n);
  add_mismatch(res, &r, ru, n);
  if (ref) {
    cJSON *m = cJSON_CreateObject();
    int k;
    for (k = 0; k < LOWP_METRIC_COUNT; k++)
      lowp_json_num(m, lowp_metric_name((lowp_metric_t)k),
                    lowp_metric_value(&rr, (lowp_metric_t)k));
    cJSON_AddItemToObject(res, "reference_metrics", m);
  }
  *json = cJSON_PrintUnformatted(res);
  st = *json ? LOWP_OK : LOWP_ENOMEM;
done:
  if (rules_txt) cJSON_free(rules_txt);
  cJSON_Delete(res);
  cJSON_Delete(d);
  free(v);
  lowp_spec_rules_free(ru, n);
  lowp_check_result_free(&r);
  lowp_check_result_free(&rr);
  lowp_check_inputs_free(&inp);
  return st;
}

int lowp_capi_shapes(char **json, const char *desc, char *err, size_t errlen) {
  cJSON *d, *o, *ins, *outs, *shapes, *index;
  lowp_problem_t p;
  int i, st;
  if (!json || !desc) return LOWP_EINVAL;
  *json = NULL;
  d = cJSON_Parse(desc);
  if (!cJSON_IsObject(d)) {
    cJSON_Delete(d);
    return bad(err, errlen, LOWP_EPARSE, "%sthe description is not a JSON object", "");
  }
  st = desc_problem(&p, d, err, errlen);
  cJSON_Delete(d);
  if (st) return st;
  o = cJSON_CreateObject();
  ins = cJSON_AddArrayToObject(o, "inputs");
  outs = cJSON_AddArrayToObject(o, "outputs");
  shapes = cJSON_AddArrayToObject(o, "shapes");
  index = cJSON_AddArrayToObject(o, "index"); /* inputs of integer indices (xent's target) */
  for (i = 0; i < p.op->n_in; i++) cJSON_AddItemToArray(index, cJSON_CreateBool(p.op->in_index[i]));
  for (i = 0; i < p.op->n_in + p.op->n_out; i++) {
    size_t shape[LOWP_OP_MAXDIM], c;
    int nd, k;
    cJSON *sh = cJSON_CreateArray();
    if ((st = lowp_op_shape(&p, i, shape, &nd, &c))) {
      cJSON_Delete(sh);
      cJSON_Delete(o);
      return bad(err, errlen, st, "%sbad sizes", "");
    }
    for (k = 0; k < nd; k++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)shape[k]));
    cJSON_AddItemToArray(shapes, sh);
    cJSON_AddItemToArray(i < p.op->n_in ? ins : outs, cJSON_CreateString(
        i < p.op->n_in ? p.op->in_names[i] : p.op->out_names[i - p.op->n_in]));
  }
  *json = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return *json ? LOWP_OK : LOWP_ENOMEM;
}

/* a tensor-core model preset's name before the first ',' */
static int is_preset(const char *spec) {
  char name[64];
  size_t n = strcspn(spec, ",");
  if (n >= sizeof name) return 0;
  memcpy(name, spec, n);
  name[n] = '\0';
  return lowp_tc_preset_find(name) != NULL;
}

static int tol_query(lowp_tol_query_t *q, const cJSON *d, char *err, size_t errlen) {
  const cJSON *j = ITEM(d, "op"), *m = ITEM(d, "method");
  lowp_problem_t p;
  lowp_subject_t s;
  cJSON *md;
  int st;
  memset(q, 0, sizeof *q);
  if (!cJSON_IsString(j)) return bad(err, errlen, LOWP_EINVAL, "%s\"op\" is needed", "");
  q->op = lowp_op_by_name(j->valuestring);
  if (!q->op) return bad(err, errlen, LOWP_EINVAL, "unknown operation '%s'", j->valuestring);
  j = ITEM(d, "k");
  if (!cJSON_IsNumber(j) || !(j->valuedouble >= 1) || j->valuedouble > 1e15)
    return bad(err, errlen, LOWP_EINVAL, "%s\"k\" must be an integer >= 1", "");
  q->k = (size_t)j->valuedouble;
  j = ITEM(d, "input");
  if (cJSON_IsString(j) && lowp_bsformat_parse(&q->bs, j->valuestring, NULL, 0) == LOWP_OK) {
    /* block-scaled inputs: a dequantized value holds the element's and the
       scale's significand bits; the products' exactness follows from that */
    q->has_bs = 1;
    q->in = q->bs.elem;
    q->in.precision = q->bs.elem.precision + q->bs.scale.precision - 1;
    if ((st = get_format(&q->out, ITEM(d, "out"), "out", "fp32", err, errlen))) return st;
  } else {
    if ((st = get_format(&q->in, ITEM(d, "input"), "input", "fp32", err, errlen))) return st;
    if ((st = get_format(&q->out, ITEM(d, "out"), "out", q->in.name ? q->in.name : "fp32", err,
                         errlen)))
      return st;
  }
  if (cJSON_IsString(m) && !strncmp(m->valuestring, "model:", 6) && strstr(m->valuestring, "kind=")) {
    lowp_bsmma_model_t bm;
    if ((st = lowp_bsmma_get(&bm, m->valuestring + 6, err, errlen))) return st;
    q->has_bsmodel = 1;
    q->bsmodel = bm.p;
    q->accum.acc = LOWP_FMT_FP32;
    j = ITEM(d, "confidence");
    if (cJSON_IsNumber(j) && j->valuedouble < 1) q->confidence = j->valuedouble;
    j = ITEM(d, "scale");
    if (cJSON_IsNumber(j) && j->valuedouble > 0 && isfinite(j->valuedouble)) q->scale = j->valuedouble;
    return LOWP_OK;
  }
  /* the method: an order (with "acc") or "model:PRESET[,key=value]" */
  memset(&p, 0, sizeof p);
  p.op = q->op;
  p.in[0] = p.in[1] = q->in;
  p.out = q->out;
  memset(&s, 0, sizeof s);
  md = cJSON_CreateObject();
  if (cJSON_IsString(m) && !strncmp(m->valuestring, "model:", 6))
    cJSON_AddStringToObject(md, "model", m->valuestring + 6);
  else if (cJSON_IsString(m) && is_preset(m->valuestring)) /* "h100", "h100,promote=128" */
    cJSON_AddStringToObject(md, "model", m->valuestring);
  else if (cJSON_IsString(m))
    cJSON_AddStringToObject(md, "order", m->valuestring);
  if (cJSON_IsString(ITEM(d, "acc"))) cJSON_AddStringToObject(md, "acc", ITEM(d, "acc")->valuestring);
  st = desc_method(&s, md, &p, "fp32", err, errlen);
  cJSON_Delete(md);
  if (st) return st;
  q->accum = s.accum;
  q->has_model = s.has_model;
  q->model = s.model;
  j = ITEM(d, "confidence");
  if (cJSON_IsNumber(j)) {
    if (!(j->valuedouble > 0 && j->valuedouble <= 1))
      return bad(err, errlen, LOWP_EINVAL, "%s\"confidence\" must lie in (0, 1]", "");
    q->confidence = j->valuedouble >= 1 ? 0 : j->valuedouble;
  }
  j = ITEM(d, "scale");
  if (cJSON_IsNumber(j)) {
    if (!(j->valuedouble > 0) || !isfinite(j->valuedouble))
      return bad(err, errlen, LOWP_EINVAL, "%s\"scale\" must be a finite number > 0", "");
    q->scale = j->valuedouble;
  }
  return LOWP_OK;
}

cJSON *lowp_tol_json(const lowp_tol_t *t, const lowp_tol_query_t *q) {
  cJSON *o = cJSON_CreateObject();
  lowp_json_num(o, "rtol", t->rtol);
  lowp_json_num(o, "atol", t->atol);
  lowp_json_num(o, "bound", t->bound);
  lowp_json_num(o, "bound_acc", t->bound_acc);
  lowp_json_num(o, "rtol_same_sign", t->rtol_same_sign);
  cJSON_AddBoolToObject(o, "vacuous", t->vacuous);
  cJSON_AddStringToObject(o, "bound_name", t->bound_name);
  cJSON_AddStringToObject(o, "explanation", t->why);
  cJSON_AddStringToObject(o, "op", q->op->name);
  cJSON_AddNumberToObject(o, "k", (double)q->k);
  cJSON_AddStringToObject(o, "input", q->has_bs ? q->bs.name : q->in.name ? q->in.name : "custom");
  cJSON_AddStringToObject(o, "acc", q->has_model ? "model" : (q->accum.acc.name ? q->accum.acc.name : "custom"));
  cJSON_AddStringToObject(o, "out", q->out.name ? q->out.name : "custom");
  if (q->confidence > 0) lowp_json_num(o, "confidence", q->confidence);
  else cJSON_AddStringToObject(o, "confidence", "worst case");
  lowp_json_num(o, "scale", q->scale > 0 ? q->scale : 1);
  return o;
}

int lowp_capi_tol(char **json, const char *query, char *err, size_t errlen) {
  cJSON *d, *o;
  lowp_tol_query_t q;
  lowp_tol_t t;
  int st;
  if (err && errlen) err[0] = '\0';
  if (!json || !query) return LOWP_EINVAL;
  *json = NULL;
  d = cJSON_Parse(query);
  if (!cJSON_IsObject(d)) {
    cJSON_Delete(d);
    return bad(err, errlen, LOWP_EPARSE, "%sthe query is not a JSON object", "");
  }
  st = tol_query(&q, d, err, errlen);
  cJSON_Delete(d);
  if (st) return st;
  if ((st = lowp_tol(&t, &q, err, errlen))) return st;
  o = lowp_tol_json(&t, &q);
  *json = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return *json ? LOWP_OK : LOWP_ENOMEM;
}

int lowp_capi_tol_query(lowp_tol_query_t *q, const char *query, char *err, size_t errlen) {
  cJSON *d = cJSON_Parse(query);
  int st;
  if (!cJSON_IsObject(d)) {
    cJSON_Delete(d);
    return bad(err, errlen, LOWP_EPARSE, "%sthe query is not a JSON object", "");
  }
  st = tol_query(q, d, err, errlen);
  cJSON_Delete(d);
  return st;
}

int lowp_capi_decode(double *out, const void *bits, size_t n, int width, const char *format,
                     char *err, size_t errlen) {
  lowp_format_t f;
  size_t i;
  int st;
  if (!out || (!bits && n) || (width != 1 && width != 2 && width != 4)) return LOWP_EINVAL;
  if ((st = get_format(&f, NULL, "format", format, err, errlen))) return st;
  for (i = 0; i < n; i++) {
    uint64_t b = width == 1 ? ((const uint8_t *)bits)[i]
               : width == 2 ? ((const uint16_t *)bits)[i] : ((const uint32_t *)bits)[i];
    if ((st = lowp_decode(&out[i], b, &f))) {
      if (err && errlen) snprintf(err, errlen, "bit pattern 0x%llx is not a %s value",
                                  (unsigned long long)b, format);
      return st;
    }
  }
  return LOWP_OK;
}

void lowp_capi_free(char *p) { cJSON_free(p); }
