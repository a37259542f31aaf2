/* lowp_chk_tree -- a bound rule's tree: "order": "revealed" (reveal the subject now) or {"tree": FILE} */

/*
 * The bound of a tree (model/tree.h) is sum_i c_i |a_i b_i| with c_i the
 * gamma of leaf i's depth; the pipeline's bounds are on the componentwise
 * backward error |c - x| / sum_i |a_i b_i|, so the rule's bound is max_i c_i
 * (the deepest leaf), over every class of output positions. The additions
 * are bounded in the DECLARED accumulator ("acc", default fp32), not the
 * one revelation found: a kernel that accumulates in fp16 where fp32 is
 * declared must fail, and the bound's name says what was found. A subject
 * without a tree (nondeterministic, outputs that are not counts, no
 * arithmetic that reproduces it) gets the bound 0: any error fails, with
 * the reason in the bound's name.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/reveal.h"
#include "check_internal.h"
#include "status.h"

char *lowp_chk_read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  char *b = NULL;
  long n;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && n < (1L << 30) && fseek(f, 0, SEEK_SET) == 0 &&
      (b = malloc((size_t)n + 1)) && fread(b, 1, (size_t)n, f) == (size_t)n)
    b[n] = '\0';
  else { free(b); b = NULL; }
  fclose(f);
  return b;
}

/* the file as a revelation: lowp reveal's file, or one tree (one class) */
static int load(lowp_reveal_t *rv, const char *text, size_t K, char *err, size_t errlen) {
  lowp_tree_t t;
  int st;
  if (strstr(text, "\"lowp_reveal\"")) return lowp_reveal_from_json(rv, text, err, errlen);
  memset(rv, 0, sizeof *rv);
  if ((st = lowp_tree_from_json(&t, text, err, errlen))) return st;
  rv->deterministic = 1;
  rv->K = t.n;
  rv->n_classes = 1;
  rv->classes = calloc(1, sizeof *rv->classes);
  if (!rv->classes) { lowp_tree_free(&t); return LOWP_ENOMEM; }
  rv->classes[0].has_tree = 1;
  rv->classes[0].tree = t;
  (void)K;
  return LOWP_OK;
}

/* max_i c_i of a tree whose additions are bounded in acc; found: the
   narrowest addition the tree holds */
static double deepest(lowp_tree_t *t, const lowp_format_t *acc, int *found_p, size_t *depth) {
  double *c = malloc((t->n + 1) * sizeof *c), m = 0;
  size_t *d = malloc((t->n + 1) * sizeof *d), k, i;
  *depth = 0;
  for (k = 0; k < t->n_arith; k++)
    if (t->arith[k].kind == LOWP_NODE_ADD) {
      if (t->arith[k].acc.precision < *found_p) *found_p = t->arith[k].acc.precision;
      t->arith[k].acc = *acc;
    }
  if (!c || !d || lowp_tree_bound_coef(c, t) != LOWP_OK || lowp_tree_depths(d, t) != LOWP_OK) m = -1;
  for (i = 0; i < t->n && m >= 0; i++) {
    if (c[i] > m) m = c[i];
    if (d[i] > *depth) *depth = d[i];
  }
  free(c);
  free(d);
  return m;
}

void lowp_chk_tree(lowp_chk_run_t *r, int i) {
  const lowp_spec_check_t *sc = r->sc;
  const lowp_spec_rule_t *ru = &sc->rules[i];
  lowp_rule_t *t = &r->trees[i];
  const lowp_format_t *acc = &ru->rule.accum.acc;
  size_t K = r->p.op->id == LOWP_OP_SUM ? r->p.dims.n : r->p.dims.k, c, depth = 0, dmax = 0;
  lowp_reveal_t rv;
  char err[600];
  int st, revealed = !strcmp(ru->tree, "revealed"), found_p = 1000;
  double m = 0;
  *t = ru->rule;
  t->has_tree = 1;
  if (revealed) {
    lowp_reveal_opts_t o;
    lowp_problem_t q = r->p;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.validate = 2000;
    q.dims.batch = 1;
    st = lowp_reveal(&rv, &r->subj, &q, &o, err, sizeof err);
    if (st) lowp_chk_die(sc, "rule %d: \"order\": \"revealed\": %s", i + 1, err[0] ? err : lowp_status_str(st));
  } else {
    char *text = lowp_chk_read_text(ru->tree);
    if (!text) lowp_chk_die(sc, "rule %d: \"order\": {\"tree\": \"%s\"}: cannot read it", i + 1, ru->tree);
    st = load(&rv, text, K, err, sizeof err);
    free(text);
    if (st) lowp_chk_die(sc, "rule %d: \"order\": {\"tree\": \"%s\"}: %s", i + 1, ru->tree, err);
    if (rv.K != K)
      lowp_chk_die(sc, "rule %d: the tree in %s has %zu leaves; the check sums %zu terms", i + 1, ru->tree,
                   rv.K, K);
  }
  if (!rv.deterministic) {
    t->tree_bound = 0;
    snprintf(t->tree_name, sizeof t->tree_name, "no tree: the subject is nondeterministic (bound 0)");
  } else {
    for (c = 0; c < rv.n_classes; c++) {
      double mc;
      if (!rv.classes[c].has_tree) {
        t->tree_bound = 0;
        snprintf(t->tree_name, sizeof t->tree_name, "no tree (bound 0) for positions class %zu: %.100s", c,
                 rv.classes[c].note);
        lowp_reveal_free(&rv);
        return;
      }
      mc = deepest(&rv.classes[c].tree, acc, &found_p, &depth);
      if (mc < 0) lowp_chk_die(sc, "rule %d: the tree of class %zu has no bound (too deep for %s)", i + 1, c, acc->name);
      if (mc > m) m = mc;
      if (depth > dmax) dmax = depth;
    }
    t->tree_bound = m;
    snprintf(t->tree_name, sizeof t->tree_name, "%s tree, %zu class%s, deepest leaf %zu roundings, in %s%s",
             revealed ? "revealed" : "given", rv.n_classes, rv.n_classes == 1 ? "" : "es", dmax, acc->name,
             found_p < acc->precision ? " (the kernel accumulates in fewer bits than declared)" : "");
  }
  lowp_reveal_free(&rv);
}
