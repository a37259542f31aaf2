/* lowp_fpx_json -- exception traces and tensor scans as JSON */

#include "check/fpx_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "io/escape.h"

/* ------------------------------------------------------ private helpers */

/* a binary64 value: a number, or "nan", "inf", "-inf" (JSON has neither) */
static void add_value(cJSON *o, const char *key, uint64_t bits) {
  double v;
  char hk[32], hv[24];
  memcpy(&v, &bits, sizeof v);
  if (isnan(v)) cJSON_AddStringToObject(o, key, "nan");
  else if (isinf(v)) cJSON_AddStringToObject(o, key, v > 0 ? "inf" : "-inf");
  else cJSON_AddNumberToObject(o, key, v);
  snprintf(hk, sizeof hk, "%s_bits", key);
  snprintf(hv, sizeof hv, "0x%016" PRIx64, bits);
  cJSON_AddStringToObject(o, hk, hv);
}

static cJSON *event_json(const lowp_fpx_event_t *e) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "seq", (double)e->seq);
  cJSON_AddNumberToObject(o, "i", (double)e->i);
  cJSON_AddNumberToObject(o, "j", (double)e->j);
  cJSON_AddNumberToObject(o, "k", (double)e->k);
  cJSON_AddStringToObject(o, "op", lowp_fpx_op_name(e->op));
  add_value(o, "a", e->a);
  add_value(o, "b", e->b);
  add_value(o, "c", e->c);
  add_value(o, "result", e->r);
  add_value(o, "exact", lowp_fpx_bits(e->exact));
  if (e->inherent < 0) cJSON_AddNullToObject(o, "inherent");
  else cJSON_AddBoolToObject(o, "inherent", e->inherent);
  return o;
}

/* an index, or null for -1 (none) */
static void add_index(cJSON *o, const char *key, int64_t v) {
  if (v < 0) cJSON_AddNullToObject(o, key);
  else cJSON_AddNumberToObject(o, key, (double)v);
}

/* ----------------------------------------------------------- public API */

cJSON *lowp_fpx_first_json(const lowp_fpx_trace_t *t, unsigned mask) {
  cJSON *o = cJSON_CreateObject(), *c;
  int k = lowp_fpx_first_kind(t, mask), q;
  const lowp_fpx_event_t *e;
  if (!o) return NULL;
  cJSON_AddBoolToObject(o, "found", k >= 0);
  if (k >= 0) {
    e = &t->first[k];
    cJSON_AddStringToObject(o, "kind", lowp_fpx_kind_name((lowp_fpx_kind_t)k));
    cJSON_AddStringToObject(o, "op", lowp_fpx_op_name(e->op));
    add_index(o, "step", e->i);
    add_index(o, "element", e->j);
    add_index(o, "k", e->k);
    cJSON_AddNumberToObject(o, "seq", (double)e->seq);
    add_value(o, "a", e->a);
    add_value(o, "b", e->b);
    add_value(o, "result", e->r);
    add_value(o, "exact", lowp_fpx_bits(e->exact));
    if (e->inherent < 0) {
      cJSON_AddNullToObject(o, "inherent");
      cJSON_AddNullToObject(o, "spurious");
    } else {
      cJSON_AddBoolToObject(o, "inherent", e->inherent);
      cJSON_AddBoolToObject(o, "spurious", !e->inherent);
    }
  }
  c = cJSON_AddObjectToObject(o, "counts");
  for (q = 0; q < LOWP_FPX_NKINDS; q++)
    if (t->count[q]) cJSON_AddNumberToObject(c, lowp_fpx_kind_name((lowp_fpx_kind_t)q), (double)t->count[q]);
  return o;
}

int lowp_fpx_first_text(char *buf, size_t len, const lowp_fpx_trace_t *t, unsigned mask) {
  int k = lowp_fpx_first_kind(t, mask);
  const lowp_fpx_event_t *e;
  double r;
  char at[96] = "";
  size_t m = 0;
  if (k < 0) return snprintf(buf, len, "none");
  e = &t->first[k];
  memcpy(&r, &e->r, sizeof r);
  if (e->i >= 0) m += (size_t)snprintf(at + m, sizeof at - m, " at step %" PRId64, e->i);
  if (e->j >= 0) m += (size_t)snprintf(at + m, sizeof at - m, "%s element %" PRId64, m ? "," : " at", e->j);
  if (e->k >= 0 && m < sizeof at) snprintf(at + m, sizeof at - m, ", k = %" PRId64, e->k);
  return snprintf(buf, len, "%s in %s%s (result %.9g, exact %.9g%s): %s",
                  lowp_fpx_kind_name((lowp_fpx_kind_t)k), lowp_fpx_op_name(e->op), at, r, e->exact,
                  e->sticky ? "..." : "",
                  e->inherent < 0 ? "no exact reference at this point"
                  : e->inherent ? "inherent (the exact value raises it too)"
                                : "spurious (the exact value is finite and in range: rounding made it)");
}

cJSON *lowp_fpx_trace_json(const lowp_fpx_trace_t *t) {
  cJSON *o = cJSON_CreateObject(), *kinds;
  int k, first = lowp_fpx_first_kind(t, LOWP_FPX_ALL);
  if (!o) return NULL;
  cJSON_AddNumberToObject(o, "ops", (double)t->ops);
  if (first < 0) cJSON_AddNullToObject(o, "first");
  else cJSON_AddStringToObject(o, "first", lowp_fpx_kind_name((lowp_fpx_kind_t)first));
  kinds = cJSON_AddObjectToObject(o, "kinds");
  for (k = 0; k < LOWP_FPX_NKINDS; k++) {
    cJSON *e;
    if (!t->count[k]) continue;
    e = cJSON_AddObjectToObject(kinds, lowp_fpx_kind_name((lowp_fpx_kind_t)k));
    cJSON_AddNumberToObject(e, "count", (double)t->count[k]);
    cJSON_AddNumberToObject(e, "inherent", (double)t->inherent[k]);
    cJSON_AddNumberToObject(e, "spurious", (double)t->spurious[k]);
    cJSON_AddItemToObject(e, "first", event_json(&t->first[k]));
  }
  return o;
}

cJSON *lowp_fpx_scan_json(const lowp_fpx_scan_t *s, const lowp_format_t *f) {
  cJSON *o = cJSON_CreateObject(), *h, *c;
  int lo = 0, hi = -1, b;
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "format", f->name);
  cJSON_AddNumberToObject(o, "emin", f->emin);
  cJSON_AddNumberToObject(o, "emax", f->emax);
  cJSON_AddNumberToObject(o, "emin_subnormal", f->subnormals ? f->emin - f->precision + 1 : f->emin);
  cJSON_AddNumberToObject(o, "n", (double)s->n);
  cJSON_AddNumberToObject(o, "nan_in", (double)s->nan_in);
  cJSON_AddNumberToObject(o, "inf_in", (double)s->inf_in);
  cJSON_AddNumberToObject(o, "zero_in", (double)s->zero_in);
  cJSON_AddNumberToObject(o, "first_bad", (double)s->first_bad);
  cJSON_AddItemToObject(o, "trace", lowp_fpx_trace_json(&s->trace));
  for (b = 0; b < s->hist_n; b++)
    if (s->hist[b]) {
      if (hi < 0) lo = b;
      hi = b;
    }
  h = cJSON_AddObjectToObject(o, "exponents");
  cJSON_AddNumberToObject(h, "lo", hi < 0 ? 0 : s->hist_lo + lo);
  c = cJSON_AddArrayToObject(h, "counts");
  for (b = lo; b <= hi; b++) cJSON_AddItemToArray(c, cJSON_CreateNumber((double)s->hist[b]));
  return o;
}

static int finish(char **json, cJSON *o) {
  char *txt = o ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  if (!txt) return LOWP_ENOMEM;
  *json = txt;
  return LOWP_OK;
}

int lowp_capi_fpx_scan(char **json, const double *x, size_t n, const char *query, char *err,
                       size_t errlen) {
  cJSON *q;
  const cJSON *it;
  lowp_format_t f;
  lowp_rounding_t rnd = LOWP_RND_NE;
  lowp_policy_t pol = {0};
  lowp_fpx_scan_t *s;
  int st;
  if (!json || (n && !x) || !query) return LOWP_EINVAL;
  *json = NULL;
  q = cJSON_Parse(query);
  if (!q || !cJSON_IsObject(q)) {
    lowp_errf(err, errlen, 0, "the query is not a JSON object");
    cJSON_Delete(q);
    return LOWP_EPARSE;
  }
  it = cJSON_GetObjectItemCaseSensitive(q, "format");
  if (!cJSON_IsString(it) || lowp_format_parse(&f, it->valuestring, err, errlen)) {
    if (!cJSON_IsString(it)) lowp_errf(err, errlen, 0, "\"format\" is required");
    cJSON_Delete(q);
    return LOWP_EFORMAT;
  }
  {
    const lowp_format_t *b = lowp_format_by_name(it->valuestring);
    if (b) f = *b; /* keep the built-in's name */
  }
  it = cJSON_GetObjectItemCaseSensitive(q, "rounding");
  if (it && (!cJSON_IsString(it) || lowp_rounding_parse(&rnd, it->valuestring))) {
    lowp_errf(err, errlen, 0, "\"rounding\": rne, rna, rtz, rup, rdn, rto or sr");
    cJSON_Delete(q);
    return LOWP_EROUND;
  }
  it = cJSON_GetObjectItemCaseSensitive(q, "overflow");
  if (it) {
    if (cJSON_IsString(it) && !strcmp(it->valuestring, "sat")) pol.overflow = LOWP_OVF_SAT;
    else if (!cJSON_IsString(it) || strcmp(it->valuestring, "ieee")) {
      lowp_errf(err, errlen, 0, "\"overflow\": ieee or sat");
      cJSON_Delete(q);
      return LOWP_EPARSE;
    }
  }
  cJSON_Delete(q);
  s = malloc(sizeof *s);
  if (!s) return LOWP_ENOMEM;
  st = lowp_fpx_scan(s, x, n, &f, &pol, rnd);
  if (st == LOWP_OK) st = finish(json, lowp_fpx_scan_json(s, &f));
  free(s);
  return st;
}

int lowp_capi_fpx_outputs(char **json, const double *const *in, const size_t *nin,
                          size_t ninputs, const double *y, size_t n, char *err, size_t errlen) {
  int64_t first;
  unsigned kinds;
  int *bad = calloc(ninputs ? ninputs : 1, sizeof *bad), st, k;
  size_t q;
  cJSON *o, *a;
  if (!bad) return LOWP_ENOMEM;
  if (!json) { free(bad); return LOWP_EINVAL; }
  st = lowp_fpx_outputs(&first, &kinds, bad, y, n, in, nin, ninputs);
  if (st) {
    lowp_errf(err, errlen, 0, "missing arrays");
    free(bad);
    return st;
  }
  o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "first", (double)first);
  a = cJSON_AddArrayToObject(o, "kinds");
  for (k = 0; k < LOWP_FPX_NKINDS; k++)
    if (kinds & LOWP_FPX_BIT(k))
      cJSON_AddItemToArray(a, cJSON_CreateString(lowp_fpx_kind_name((lowp_fpx_kind_t)k)));
  a = cJSON_AddArrayToObject(o, "inputs_exceptional");
  for (q = 0; q < ninputs; q++) cJSON_AddItemToArray(a, cJSON_CreateBool(bad[q]));
  free(bad);
  return finish(json, o);
}
