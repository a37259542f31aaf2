/* lowp_tree_to_json, lowp_tree_from_json -- a summation tree as a JSON file (cJSON) */

/*
 * {"lowp_tree": 1, "n": 4,
 *  "arith": [{"kind": "add", "acc": "fp32", "rnd": "rne", "products": "exact"},
 *            {"kind": "add", "acc": "fp32", "rnd": "rne", "products": "rounded",
 *             "prod": "fp16", "prod_rnd": "rne"},
 *            {"kind": "fused", "in": "fp16", "out": "fp32", "bfma": "b=16,F=25,..."}],
 *  "nodes": [[0, 0, 1], [0, 4, 2], [0, 5, 3]],      arith index, then children
 *  "out": {"format": "fp16", "rnd": "rne"}}           or null
 * Children: 0..n-1 the leaves, n + k the k-th node, -1 the constant +0.
 * Formats are built-in names, or lowp_format_spec_str's spec for others.
 */

#include "model/tree.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "io/escape.h"

/* ------------------------------------------------------ private helpers */

static cJSON *fmt_json(const lowp_format_t *f) {
  char buf[200];
  const lowp_format_t *b = f->name ? lowp_format_by_name(f->name) : NULL;
  if (b && b->precision == f->precision && b->emin == f->emin && b->emax == f->emax &&
      b->subnormals == f->subnormals && b->inf == f->inf && b->nan == f->nan)
    return cJSON_CreateString(b->name);
  if (lowp_format_spec_str(buf, sizeof buf, f) != LOWP_OK) return NULL;
  return cJSON_CreateString(buf);
}

static int add_fmt(cJSON *o, const char *key, const lowp_format_t *f) {
  cJSON *s = fmt_json(f);
  return s && cJSON_AddItemToObject(o, key, s) ? 0 : -1;
}

static cJSON *arith_json(const lowp_tree_arith_t *a) {
  cJSON *o = cJSON_CreateObject();
  int bad = !o;
  if (bad) return NULL;
  if (a->kind == LOWP_NODE_FUSED) {
    lowp_tc_model_t m;
    char buf[400];
    memset(&m, 0, sizeof m);
    m.bfma = a->bfma;
    lowp_tc_model_str(buf, sizeof buf, &m);
    bad |= !cJSON_AddStringToObject(o, "kind", "fused");
    bad |= add_fmt(o, "in", &a->in) != 0;
    bad |= add_fmt(o, "out", &a->acc) != 0;
    bad |= !cJSON_AddStringToObject(o, "bfma", buf);
  } else {
    bad |= !cJSON_AddStringToObject(o, "kind", "add");
    bad |= add_fmt(o, "acc", &a->acc) != 0;
    bad |= !cJSON_AddStringToObject(o, "rnd", lowp_rounding_name(a->rnd));
    bad |= !cJSON_AddStringToObject(o, "products", a->leaf_exact ? "exact" : "rounded");
    if (!a->leaf_exact) {
      bad |= add_fmt(o, "prod", &a->prod) != 0;
      bad |= !cJSON_AddStringToObject(o, "prod_rnd", lowp_rounding_name(a->prod_rnd));
    }
  }
  if (bad) { cJSON_Delete(o); return NULL; }
  return o;
}

/* ----------------------------------------------------------- writing */

int lowp_tree_to_json(char **text, const lowp_tree_t *t) {
  cJSON *root = cJSON_CreateObject(), *ar, *nodes, *out;
  size_t k, i;
  int bad = !root;
  *text = NULL;
  if (bad) return LOWP_ENOMEM;
  bad |= !cJSON_AddNumberToObject(root, "lowp_tree", 1);
  bad |= !cJSON_AddNumberToObject(root, "n", (double)t->n);
  ar = cJSON_AddArrayToObject(root, "arith");
  nodes = cJSON_AddArrayToObject(root, "nodes");
  bad |= !ar || !nodes;
  for (k = 0; k < t->n_arith && !bad; k++) {
    cJSON *a = arith_json(&t->arith[k]);
    bad |= !a || !cJSON_AddItemToArray(ar, a);
  }
  for (k = 0; k < t->n_nodes && !bad; k++) {
    const lowp_tree_node_t *nd = &t->nodes[k];
    cJSON *a = cJSON_CreateArray();
    bad |= !a || !cJSON_AddItemToArray(nodes, a);
    bad |= bad || !cJSON_AddItemToArray(a, cJSON_CreateNumber((double)nd->arith));
    for (i = 0; i < nd->count && !bad; i++) {
      size_t id = t->kids[nd->first + i];
      bad |= !cJSON_AddItemToArray(a, cJSON_CreateNumber(id == LOWP_TREE_ZERO ? -1.0 : (double)id));
    }
  }
  if (!bad && t->has_out) {
    out = cJSON_AddObjectToObject(root, "out");
    bad |= !out || add_fmt(out, "format", &t->out) != 0 ||
           !cJSON_AddStringToObject(out, "rnd", lowp_rounding_name(t->out_rnd));
  } else if (!bad) {
    bad |= !cJSON_AddNullToObject(root, "out");
  }
  if (!bad) *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return *text ? LOWP_OK : LOWP_ENOMEM;
}

/* ----------------------------------------------------------- reading */

typedef struct {
  char *err;
  size_t errlen;
} rd_t;

static int fail(rd_t *r, const char *what, const char *detail) {
  if (r->err && r->errlen)
    lowp_errf(r->err, r->errlen, 0, "tree file: %s%s%s", what, detail ? ": " : "", detail ? detail : "");
  return LOWP_EFILE;
}

static int get_fmt(lowp_format_t *f, const cJSON *o, const char *key, rd_t *r) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
  char e[160];
  if (!cJSON_IsString(s)) return fail(r, "missing format", key);
  if (lowp_format_parse(f, s->valuestring, e, sizeof e) != LOWP_OK) return fail(r, key, e);
  return LOWP_OK;
}

static int get_rnd(lowp_rounding_t *m, const cJSON *o, const char *key, rd_t *r) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsString(s) || lowp_rounding_parse(m, s->valuestring) != LOWP_OK)
    return fail(r, "missing or unknown rounding", key);
  return LOWP_OK;
}

static int read_arith(lowp_tree_arith_t *a, const cJSON *o, rd_t *r) {
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
  memset(a, 0, sizeof *a);
  if (!cJSON_IsObject(o) || !cJSON_IsString(kind)) return fail(r, "an arith entry needs a kind", NULL);
  if (!strcmp(kind->valuestring, "fused")) {
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "bfma");
    lowp_tc_model_t m;
    char e[200];
    a->kind = LOWP_NODE_FUSED;
    if (get_fmt(&a->in, o, "in", r) || get_fmt(&a->acc, o, "out", r)) return LOWP_EFILE;
    if (!cJSON_IsString(b)) return fail(r, "a fused arith needs \"bfma\"", NULL);
    if (lowp_tc_model_get(&m, b->valuestring, &a->in, &a->acc, e, sizeof e) != LOWP_OK)
      return fail(r, "bfma", e);
    if (m.promote) return fail(r, "bfma", "promote belongs to the tree's nodes, not to a block");
    a->bfma = m.bfma;
    return LOWP_OK;
  }
  if (strcmp(kind->valuestring, "add")) return fail(r, "unknown arith kind", kind->valuestring);
  {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "products");
    a->kind = LOWP_NODE_ADD;
    if (get_fmt(&a->acc, o, "acc", r) || get_rnd(&a->rnd, o, "rnd", r)) return LOWP_EFILE;
    if (!cJSON_IsString(p) || (strcmp(p->valuestring, "exact") && strcmp(p->valuestring, "rounded")))
      return fail(r, "\"products\" must be \"exact\" or \"rounded\"", NULL);
    a->leaf_exact = !strcmp(p->valuestring, "exact");
    a->prod = a->acc;
    a->prod_rnd = a->rnd;
    if (!a->leaf_exact && (get_fmt(&a->prod, o, "prod", r) || get_rnd(&a->prod_rnd, o, "prod_rnd", r)))
      return LOWP_EFILE;
  }
  return LOWP_OK;
}

static int get_count(double *v, const cJSON *j, double lo, double hi) {
  if (!cJSON_IsNumber(j)) return -1;
  *v = j->valuedouble;
  return (*v == floor(*v) && *v >= lo && *v <= hi) ? 0 : -1;
}

static int read_nodes(lowp_tree_t *t, const cJSON *nodes, rd_t *r) {
  const cJSON *nd;
  size_t kids[1025];
  cJSON_ArrayForEach(nd, nodes) {
    const cJSON *c;
    double v;
    size_t cnt = 0, ar = 0;
    int first = 1;
    if (!cJSON_IsArray(nd)) return fail(r, "a node must be an array [arith, child, ...]", NULL);
    cJSON_ArrayForEach(c, nd) {
      if (first) {
        if (get_count(&v, c, 0, (double)t->n_arith - 1)) return fail(r, "a node's arith index is out of range", NULL);
        ar = (size_t)v;
        first = 0;
        continue;
      }
      if (cnt == 1025 || get_count(&v, c, -1, (double)(t->n + t->n_nodes) - 1))
        return fail(r, "a child is out of range (or defined after its parent)", NULL);
      kids[cnt++] = v < 0 ? LOWP_TREE_ZERO : (size_t)v;
    }
    if (cnt == 0) return fail(r, "a node without children", NULL);
    if (lowp_tree_node_add(t, ar, kids, cnt) == LOWP_TREE_ZERO) return LOWP_ENOMEM;
  }
  return LOWP_OK;
}

int lowp_tree_from_json(lowp_tree_t *t, const char *text, char *err, size_t errlen) {
  rd_t r = {err, errlen};
  cJSON *root = cJSON_Parse(text);
  const cJSON *ver, *n, *ar, *nodes, *out, *a;
  double v;
  int st = LOWP_OK;
  lowp_tree_init(t, 0);
  if (!root || !cJSON_IsObject(root)) { cJSON_Delete(root); return fail(&r, "not a JSON object", NULL); }
  ver = cJSON_GetObjectItemCaseSensitive(root, "lowp_tree");
  n = cJSON_GetObjectItemCaseSensitive(root, "n");
  ar = cJSON_GetObjectItemCaseSensitive(root, "arith");
  nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
  out = cJSON_GetObjectItemCaseSensitive(root, "out");
  if (!cJSON_IsNumber(ver) || ver->valuedouble != 1) st = fail(&r, "\"lowp_tree\": 1 expected", NULL);
  else if (get_count(&v, n, 0, 1e12)) st = fail(&r, "\"n\" must be a count", NULL);
  else if (!cJSON_IsArray(ar) || !cJSON_IsArray(nodes)) st = fail(&r, "\"arith\" and \"nodes\" must be arrays", NULL);
  if (st == LOWP_OK) {
    t->n = (size_t)v;
    cJSON_ArrayForEach(a, ar) {
      lowp_tree_arith_t x;
      if ((st = read_arith(&x, a, &r)) != LOWP_OK) break;
      /* kept as written, duplicates too: the nodes index this table */
      if (t->n_arith == t->cap_arith) {
        size_t nc = t->cap_arith ? 2 * t->cap_arith : 8;
        lowp_tree_arith_t *q = realloc(t->arith, nc * sizeof *q);
        if (!q) { st = LOWP_ENOMEM; break; }
        t->arith = q;
        t->cap_arith = nc;
      }
      t->arith[t->n_arith++] = x;
    }
  }
  if (st == LOWP_OK) st = read_nodes(t, nodes, &r);
  if (st == LOWP_OK && out && !cJSON_IsNull(out)) {
    if (!cJSON_IsObject(out)) st = fail(&r, "\"out\" must be an object or null", NULL);
    else if (!(st = get_fmt(&t->out, out, "format", &r))) st = get_rnd(&t->out_rnd, out, "rnd", &r);
    t->has_out = st == LOWP_OK;
  }
  cJSON_Delete(root);
  if (st == LOWP_OK && lowp_tree_validate(t, err, errlen) != LOWP_OK) st = LOWP_EFILE;
  if (st != LOWP_OK) lowp_tree_free(t);
  return st;
}
