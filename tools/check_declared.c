/* lowp_chk_declared -- lowp check: a declared summation order held against the revealed tree, said in one note */

/*
 * A bound rule is only as right as the order it declares (issue 32: an
 * fp16-accumulating bug passes under "recursive" and fails under the
 * kernel's real order). When the subject has been revealed (the check asks
 * for it: "order": "revealed", "convert": "revealed", a revealed twin; or
 * `lowp check --reveal`), every gamma or prob bound rule whose declared
 * order (the rule's, over the subject's own declaration) is not the
 * revealed tree, node for node in shape (model/tree.h, lowp_tree_same), gets
 * one note: what was declared, what was revealed (a named order when one
 * fits), both bounds and how much tighter the revealed tree's is, and, once
 * measured, which verdicts change under the revealed tree's bound.
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_internal.h"
#include "status.h"

static int g_reveal; /* --reveal: reveal every check with a declared order */

void lowp_chk_set_reveal(int on) { g_reveal = on; }

/* S interleaved lanes (lane l an addition chain over k = l, l + S, ...
   from zero), then lanes l and l + w added for w = S/2, ..., 1: a SIMD dot
   product's usual shape (issue 32) */
static int lanes_tree(lowp_tree_t *t, size_t K, size_t S) {
  lowp_tree_arith_t a = lowp_tree_arith_sum(&LOWP_FMT_FP32, LOWP_RND_NE, 1, NULL, LOWP_RND_NE);
  size_t *lane = malloc(S * sizeof *lane), l, k, w, kids[2];
  size_t ar;
  lowp_tree_init(t, K);
  if (!lane || (ar = lowp_tree_arith_add(t, &a)) == (size_t)-1) { free(lane); return LOWP_ENOMEM; }
  for (l = 0; l < S; l++) {
    lane[l] = LOWP_TREE_ZERO;
    for (k = l; k < K; k += S) {
      kids[0] = lane[l], kids[1] = k;
      lane[l] = lane[l] == LOWP_TREE_ZERO ? lowp_tree_node_add(t, ar, &kids[1], 1) : lowp_tree_node_add(t, ar, kids, 2);
    }
  }
  for (w = S / 2; w >= 1; w /= 2)
    for (l = 0; l < w; l++) {
      kids[0] = lane[l], kids[1] = lane[l + w];
      lane[l] = lowp_tree_node_add(t, ar, kids, 2);
    }
  free(lane);
  return LOWP_OK;
}

/* a named order whose tree is t's shape, into name; 0 when none fits */
static int name_of(char *name, size_t len, const lowp_tree_t *t, int dot) {
  static const char *const fixed[] = {"recursive", "pairwise"};
  char spec[48];
  size_t K = t->n, b, where;
  int i;
  for (i = 0; i < 2 + 2 * 13; i++) {
    lowp_accum_t a;
    lowp_tree_t c;
    int same;
    if (i < 2) snprintf(spec, sizeof spec, "%s", fixed[i]);
    else {
      b = (size_t)1 << (1 + (i - 2) / 2); /* 2, 4, ..., 2^13 */
      if (b >= K) continue;
      snprintf(spec, sizeof spec, "%s:%zu", (i - 2) % 2 ? "splitk" : "blocked", b);
    }
    if (lowp_accum_parse(&a, spec, NULL, 0) || lowp_tree_from_accum(&c, K, &a, dot)) continue;
    same = lowp_tree_same(&c, t, 1, &where);
    lowp_tree_free(&c);
    if (same) {
      snprintf(name, len, "%s", spec);
      return 1;
    }
  }
  for (b = 2; b <= 64 && b <= K; b *= 2) {
    lowp_tree_t c;
    int same;
    if (lanes_tree(&c, K, b)) continue;
    same = lowp_tree_same(&c, t, 1, &where);
    lowp_tree_free(&c);
    if (same) {
      snprintf(name, len, "%zu interleaved lanes (each a chain over k = lane mod %zu), then a tree of depth %d", b,
               b, (int)(log2((double)b) + 0.5));
      return 1;
    }
  }
  return 0;
}

/* "leaves at depth 5..133" */
static void depth_str(char *buf, size_t len, const lowp_tree_t *t) {
  size_t *d = malloc((t->n + 1) * sizeof *d), i, lo = (size_t)-1, hi = 0;
  if (!d || lowp_tree_depths(d, t)) { snprintf(buf, len, "%zu leaves", t->n); free(d); return; }
  for (i = 0; i < t->n; i++) {
    if (d[i] < lo) lo = d[i];
    if (d[i] > hi) hi = d[i];
  }
  snprintf(buf, len, "leaves at depth %zu..%zu", lo, hi);
  free(d);
}

void lowp_chk_declared(lowp_chk_run_t *r) {
  const lowp_spec_check_t *sc = r->sc;
  const lowp_reveal_t *rv;
  size_t K = r->p.op->id == LOWP_OP_SUM ? r->p.dims.n : r->p.dims.k, c;
  int i, dot = r->p.op->id != LOWP_OP_SUM;
  if (sc->op->kind != LOWP_OPKIND_SUMPROD || sc->subject.kind == LOWP_SPEC_TENSORS) return;
  for (i = 0; i < sc->n_rules; i++) {
    const lowp_spec_rule_t *ru = &sc->rules[i];
    lowp_accum_t acc;
    lowp_tree_t decl;
    lowp_rule_t alt;
    lowp_check_bound_t bd, ba;
    char dname[96], rdesc[400] = "", named[128];
    double ratio;
    size_t where, u = 0;
    int differ = 0;
    if (ru->rule.kind != LOWP_RULE_BOUND || ru->rule.bound == LOWP_BOUND_MODEL || ru->tree || ru->model) continue;
    if (!lowp_check_rule_accum(&acc, &ru->rule, &r->subj) || acc.order == LOWP_ACC_KAHAN) continue;
    if (!r->rv && !g_reveal) return;
    rv = lowp_chk_revealed(r);
    if (!rv->deterministic) {
      lowp_accum_str(dname, sizeof dname, &acc);
      lowp_chk_note(r, "rule %d declares %s; revelation found the subject nondeterministic: no tree to hold "
                    "it against", i + 1, dname);
      continue;
    }
    if (lowp_tree_from_accum(&decl, K, &acc, dot)) continue;
    for (c = 0; c < rv->n_classes && u < sizeof rdesc; c++) {
      const lowp_reveal_class_t *cl = &rv->classes[c];
      char dep[64];
      if (!cl->has_tree) {
        lowp_accum_str(dname, sizeof dname, &acc);
        lowp_chk_note(r, "rule %d declares %s; revelation found no tree (class %zu: %.160s)%s", i + 1, dname, c,
                      cl->note, "");
        if (rv->precision_seen > 0 && !rv->precision_lower && rv->precision_seen < acc.acc.precision)
          lowp_chk_note(r, "rule %d: the output shows %d accumulator bits; the declared %s has %d", i + 1,
                        rv->precision_seen, acc.acc.name, acc.acc.precision);
        differ = -1;
        break;
      }
      if (lowp_tree_same(&decl, &cl->tree, 1, &where)) continue;
      differ = 1;
      depth_str(dep, sizeof dep, &cl->tree);
      if (!name_of(named, sizeof named, &cl->tree, dot)) snprintf(named, sizeof named, "no named order");
      u += (size_t)snprintf(rdesc + u, sizeof rdesc - u, "%sclass %zu (%zu position%s): %s, %s", u ? "; " : "",
                            c, cl->n_pos, cl->n_pos == 1 ? "" : "s", named, dep);
    }
    lowp_tree_free(&decl);
    if (differ <= 0) continue;
    /* the rule under the revealed tree, additions in the declared format */
    alt = ru->rule;
    alt.has_tree = 1;
    alt.accum.acc = acc.acc;
    if (!r->alts && !(r->alts = calloc((size_t)sc->n_rules, sizeof *r->alts))) lowp_chk_die(sc, "out of memory");
    lowp_chk_tree_bound(&alt, NULL, rv, &acc.acc, "revealed", sc, i);
    lowp_accum_str(dname, sizeof dname, &acc);
    if (lowp_check_rule_bound(&bd, &ru->rule, &r->p, &r->subj, 0) || lowp_check_rule_bound(&ba, &alt, &r->p, &r->subj, 0))
      continue;
    r->alts[i] = alt;
    r->alt_on[i / 32] |= 1u << (i % 32);
    ratio = ba.value > 0 ? bd.value / ba.value : INFINITY;
    lowp_chk_note(r, "rule %d declares %s; the kernel sums otherwise: %s; bound %.3g declared, %.3g for the "
                  "revealed tree (%.3gx %s)", i + 1, dname, rdesc, bd.value, ba.value,
                  ratio >= 1 ? ratio : 1 / ratio, ratio >= 1 ? "tighter" : "looser");
  }
}

void lowp_chk_declared_verdicts(lowp_chk_run_t *r) {
  int i;
  if (r->n_v != r->sc->n_rules) return; /* baseline rules left out: verdicts are not one per rule */
  for (i = 0; i < r->sc->n_rules; i++) {
    lowp_verdict_t va;
    const lowp_verdict_t *vd = &r->v[i];
    if (!r->alts || !(r->alt_on[i / 32] & (1u << (i % 32)))) continue;
    if (lowp_check_rule_eval(&va, &r->alts[i], &r->res, &r->subj)) continue;
    if (va.pass == vd->pass)
      lowp_chk_note(r, "rule %d: the verdict is the same under the revealed tree (%s, %.3g%% of its bound; %.3g%% "
                    "of the declared)", i + 1, va.pass ? "pass" : "fail", va.percent, vd->percent);
    else
      lowp_chk_note(r, "rule %d: the verdict changes: %s under the declared order (%.3g%% of its bound), %s under "
                    "the revealed tree (%.3g%%)", i + 1, vd->pass ? "passes" : "fails", vd->percent,
                    va.pass ? "passes" : "fails", va.percent);
  }
}
