/* lowp_reveal_to_json, lowp_reveal_from_json -- a revelation (trees, classes, conversions) as a JSON file */

/*
 * {"lowp_reveal": 1, "op": "gemm", "K": 256, "rows": 4, "cols": 4,
 *  "deterministic": true, "precision_seen": 24, "calls": 31, "probes": 1400,
 *  ["output_format": "bf16",]  (the outputs are bf16 values: lowp_reveal's out_narrowed)
 *  ["acc_bits_assumed": 53,]   (lowp_reveal_t's)
 *  "conversions": [{"input": "A", "tested": true, "converted": false},
 *                  {"input": "B", "tested": true, "converted": true,
 *                   "format": "fp16", "rnd": "rne"}],
 *  "classes": [{"positions": [0, 1, ...], "tree": {lowp_tree JSON} | null,
 *               "probes": 700, "calls": 9, "validated": 10000,
 *               "mismatched": 0, "arith": "...", "note": ""}]}
 * The tree objects are model/tree_json.c's. Reading keeps what a twin
 * needs: shape, conversions, classes and their trees.
 */

#include "check/reveal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "io/escape.h"

/* ----------------------------------------------------------- writing */

static cJSON *conv_json(const lowp_reveal_t *r, const lowp_problem_t *p, int w) {
  const lowp_reveal_conv_t *c = &r->conv[w];
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "input", p->op->in_names[w] ? p->op->in_names[w] : "input");
  cJSON_AddStringToObject(o, "declared", p->in[w].name ? p->in[w].name : "custom");
  cJSON_AddBoolToObject(o, "tested", c->tested);
  cJSON_AddBoolToObject(o, "converted", c->converted);
  cJSON_AddBoolToObject(o, "unexplained", c->unexplained);
  if (c->converted) {
    cJSON_AddStringToObject(o, "format", c->fmt.name);
    cJSON_AddStringToObject(o, "rnd", lowp_rounding_name(c->rnd));
    cJSON_AddBoolToObject(o, "ambiguous", c->ambiguous);
  }
  return o;
}

static cJSON *class_json(const lowp_reveal_class_t *cl) {
  cJSON *o = cJSON_CreateObject(), *pos;
  size_t i;
  if (!o) return NULL;
  pos = cJSON_AddArrayToObject(o, "positions");
  for (i = 0; pos && i < cl->n_pos; i++) cJSON_AddItemToArray(pos, cJSON_CreateNumber((double)cl->pos[i]));
  if (cl->has_tree) {
    char *t = NULL;
    cJSON *tj;
    if (lowp_tree_to_json(&t, &cl->tree) != LOWP_OK || !(tj = cJSON_Parse(t))) {
      free(t);
      cJSON_Delete(o);
      return NULL;
    }
    free(t);
    cJSON_AddItemToObject(o, "tree", tj);
    { /* the leaves' depths (roundings on their paths): the bound's reach */
      size_t *d = malloc((cl->tree.n + 1) * sizeof *d), i, lo = (size_t)-1, hi = 0;
      cJSON *dj;
      if (d && lowp_tree_depths(d, &cl->tree) == LOWP_OK && cl->tree.n && (dj = cJSON_AddArrayToObject(o, "depth"))) {
        for (i = 0; i < cl->tree.n; i++) {
          if (d[i] < lo) lo = d[i];
          if (d[i] > hi) hi = d[i];
        }
        cJSON_AddItemToArray(dj, cJSON_CreateNumber((double)lo));
        cJSON_AddItemToArray(dj, cJSON_CreateNumber((double)hi));
      }
      free(d);
    }
  } else {
    cJSON_AddNullToObject(o, "tree");
  }
  cJSON_AddNumberToObject(o, "probes", (double)cl->probes);
  cJSON_AddNumberToObject(o, "calls", (double)cl->calls);
  cJSON_AddNumberToObject(o, "validated", (double)cl->validated);
  cJSON_AddNumberToObject(o, "mismatched", (double)cl->mismatched);
  cJSON_AddNumberToObject(o, "candidates", (double)cl->candidates);
  cJSON_AddStringToObject(o, "arith", cl->arith);
  cJSON_AddStringToObject(o, "note", cl->note);
  return o;
}

int lowp_reveal_to_json(char **text, const lowp_reveal_t *r, const lowp_problem_t *p) {
  cJSON *root = cJSON_CreateObject(), *cv, *cls;
  size_t c;
  int w, bad = !root;
  *text = NULL;
  if (bad) return LOWP_ENOMEM;
  cJSON_AddNumberToObject(root, "lowp_reveal", 1);
  cJSON_AddStringToObject(root, "op", p->op->name);
  cJSON_AddNumberToObject(root, "K", (double)r->K);
  cJSON_AddNumberToObject(root, "rows", (double)r->rows);
  cJSON_AddNumberToObject(root, "cols", (double)r->cols);
  cJSON_AddBoolToObject(root, "deterministic", r->deterministic);
  cJSON_AddNumberToObject(root, "precision_seen", r->precision_seen);
  /* only when it is a lower bound (the probes' range ran out): the files of
     every other revelation keep their bytes */
  if (r->precision_lower) cJSON_AddBoolToObject(root, "precision_at_least", 1);
  /* only when lowp_reveal retried (the same: other files keep their bytes) */
  if (r->out_narrowed) cJSON_AddStringToObject(root, "output_format", r->out_fmt.name);
  if (r->acc_bits_assumed) cJSON_AddNumberToObject(root, "acc_bits_assumed", r->acc_bits_assumed);
  cJSON_AddNumberToObject(root, "calls", (double)r->calls);
  cJSON_AddNumberToObject(root, "probes", (double)r->probes);
  cJSON_AddStringToObject(root, "summary", r->msg);
  cv = cJSON_AddArrayToObject(root, "conversions");
  cls = cJSON_AddArrayToObject(root, "classes");
  bad |= !cv || !cls;
  for (w = 0; w < (p->op->id == LOWP_OP_SUM ? 1 : 2) && !bad; w++) {
    cJSON *o = conv_json(r, p, w);
    bad |= !o || !cJSON_AddItemToArray(cv, o);
  }
  for (c = 0; c < r->n_classes && !bad; c++) {
    cJSON *o = class_json(&r->classes[c]);
    bad |= !o || !cJSON_AddItemToArray(cls, o);
  }
  if (!bad) *text = cJSON_Print(root);
  cJSON_Delete(root);
  return *text ? LOWP_OK : LOWP_ENOMEM;
}

/* ----------------------------------------------------------- reading */

static int fail(char *err, size_t errlen, const char *what) {
  lowp_errf(err, errlen, 0, "reveal file: %s", what);
  return LOWP_EFILE;
}

static int count(size_t *v, const cJSON *o, const char *key) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(j) || j->valuedouble < 0 || j->valuedouble > 1e15 ||
      j->valuedouble != (double)(size_t)j->valuedouble)
    return -1;
  *v = (size_t)j->valuedouble;
  return 0;
}

static int read_conv(lowp_reveal_conv_t *c, const cJSON *o, char *err, size_t errlen) {
  const cJSON *cv = cJSON_GetObjectItemCaseSensitive(o, "converted");
  memset(c, 0, sizeof *c);
  if (!cJSON_IsObject(o) || !cJSON_IsBool(cv)) return fail(err, errlen, "a conversion needs \"converted\"");
  c->tested = 1;
  c->converted = cJSON_IsTrue(cv);
  if (c->converted) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "format"), *m = cJSON_GetObjectItemCaseSensitive(o, "rnd");
    if (!cJSON_IsString(f) || lowp_format_parse(&c->fmt, f->valuestring, NULL, 0) != LOWP_OK)
      return fail(err, errlen, "a conversion's \"format\" is missing or unknown");
    if (!cJSON_IsString(m) || lowp_rounding_parse(&c->rnd, m->valuestring) != LOWP_OK)
      return fail(err, errlen, "a conversion's \"rnd\" is missing or unknown");
  }
  return LOWP_OK;
}

static int read_class(lowp_reveal_class_t *cl, const cJSON *o, size_t npos, char *err, size_t errlen) {
  const cJSON *pos = cJSON_GetObjectItemCaseSensitive(o, "positions"), *t, *it;
  size_t i = 0;
  if (!cJSON_IsObject(o) || !cJSON_IsArray(pos)) return fail(err, errlen, "a class needs \"positions\"");
  cl->n_pos = (size_t)cJSON_GetArraySize(pos);
  if (!(cl->pos = malloc((cl->n_pos + 1) * sizeof *cl->pos))) return LOWP_ENOMEM;
  cJSON_ArrayForEach(it, pos) {
    if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble >= (double)npos ||
        it->valuedouble != (double)(size_t)it->valuedouble)
      return fail(err, errlen, "a position is out of range");
    cl->pos[i++] = (size_t)it->valuedouble;
  }
  t = cJSON_GetObjectItemCaseSensitive(o, "tree");
  if (t && !cJSON_IsNull(t)) {
    char *txt = cJSON_PrintUnformatted(t);
    int st;
    if (!txt) return LOWP_ENOMEM;
    st = lowp_tree_from_json(&cl->tree, txt, err, errlen);
    free(txt);
    if (st) return st;
    cl->has_tree = 1;
  }
  (void)count(&cl->validated, o, "validated");
  (void)count(&cl->probes, o, "probes");
  (void)count(&cl->calls, o, "calls");
  return LOWP_OK;
}

/* the classes' positions: each of the rows x cols outputs in exactly one class, no class empty (a twin
   looks up every output's class); a file without classes (revelation stopped before them) has none */
static int partition(const lowp_reveal_t *r, size_t npos, char *err, size_t errlen) {
  unsigned char *seen = calloc(npos + 1, 1);
  size_t c, k, missing = 0;
  char w[160];
  int st = LOWP_OK;
  if (!seen) return LOWP_ENOMEM;
  if (r->n_classes == 0) {
    free(seen);
    return LOWP_OK;
  }
  for (c = 0; c < r->n_classes && st == LOWP_OK; c++) {
    const lowp_reveal_class_t *cl = &r->classes[c];
    if (cl->n_pos == 0) {
      snprintf(w, sizeof w, "class %zu has no positions", c);
      st = fail(err, errlen, w);
    }
    for (k = 0; k < cl->n_pos && st == LOWP_OK; k++)
      if (seen[cl->pos[k]]++) {
        snprintf(w, sizeof w, "position %zu is listed twice (each output is in exactly one class)", cl->pos[k]);
        st = fail(err, errlen, w);
      }
  }
  for (k = 0; k < npos && st == LOWP_OK; k++)
    if (!seen[k] && !missing++)
      c = k;
  if (st == LOWP_OK && missing) {
    snprintf(w, sizeof w, "%zu of the %zu output positions are in no class (the first: %zu)", missing, npos, c);
    st = fail(err, errlen, w);
  }
  free(seen);
  return st;
}

int lowp_reveal_from_json(lowp_reveal_t *r, const char *text, char *err, size_t errlen) {
  cJSON *root = cJSON_Parse(text);
  const cJSON *cv, *cls, *it, *ver;
  size_t c = 0, npos;
  int st = LOWP_OK, w = 0;
  memset(r, 0, sizeof *r);
  if (!cJSON_IsObject(root)) { cJSON_Delete(root); return fail(err, errlen, "not a JSON object"); }
  ver = cJSON_GetObjectItemCaseSensitive(root, "lowp_reveal");
  cv = cJSON_GetObjectItemCaseSensitive(root, "conversions");
  cls = cJSON_GetObjectItemCaseSensitive(root, "classes");
  if (!cJSON_IsNumber(ver) || ver->valuedouble != 1) st = fail(err, errlen, "\"lowp_reveal\": 1 expected");
  else if (count(&r->K, root, "K") || count(&r->rows, root, "rows") || count(&r->cols, root, "cols") ||
           r->rows == 0 || r->cols == 0 || r->rows > ((size_t)1 << 30) / r->cols)
    st = fail(err, errlen, "\"K\", \"rows\" and \"cols\" must be counts");
  else if (!cJSON_IsArray(cv) || cJSON_GetArraySize(cv) > 2 || !cJSON_IsArray(cls))
    st = fail(err, errlen, "\"conversions\" and \"classes\" must be arrays");
  r->deterministic = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "deterministic"));
  ver = cJSON_GetObjectItemCaseSensitive(root, "output_format");
  if (st == LOWP_OK && ver) {
    if (!cJSON_IsString(ver) || lowp_format_parse(&r->out_fmt, ver->valuestring, NULL, 0) != LOWP_OK)
      st = fail(err, errlen, "\"output_format\" is not a format");
    else
      r->out_narrowed = 1;
  }
  if (st == LOWP_OK) {
    cJSON_ArrayForEach(it, cv) if (st == LOWP_OK) st = read_conv(&r->conv[w++], it, err, errlen);
  }
  if (st == LOWP_OK) {
    npos = r->rows * r->cols;
    r->n_classes = (size_t)cJSON_GetArraySize(cls);
    if (!(r->classes = calloc(r->n_classes + 1, sizeof *r->classes))) st = LOWP_ENOMEM;
    cJSON_ArrayForEach(it, cls) if (st == LOWP_OK) st = read_class(&r->classes[c++], it, npos, err, errlen);
    if (st == LOWP_OK) st = partition(r, npos, err, errlen);
    for (c = 0; c < r->n_classes && st == LOWP_OK; c++)
      if (r->classes[c].has_tree && r->classes[c].tree.n != r->K)
        st = fail(err, errlen, "a class's tree has another number of leaves than K");
  }
  cJSON_Delete(root);
  if (st != LOWP_OK) lowp_reveal_free(r);
  return st;
}
