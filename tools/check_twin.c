/* lowp_chk_twin -- lowp check: a twin rule ({"vs_twin": true} or {"bitexact": "twin"}): the subject bit for bit against the twin of a tree */

/*
 * The twin is the tree evaluated on the check's inputs (check/reveal.h,
 * lowp_reveal_twin): the subject's revealed tree ("order": "revealed", the
 * default), a saved one ({"tree": FILE}, lowp reveal --save: a library
 * update that changes the order then fails CI), or a named order with "acc"
 * (the twin of the declaration: lowp_tree_from_accum, final rounding to the
 * check's output format, nearest even). The check's "convert", when given,
 * is the twin's conversion; otherwise a revealed or saved twin keeps the
 * conversions found with it. On a difference, the first differing output is
 * in the rule's message and the first differing node of its tree
 * (lowp_reveal_diff: the node whose terms alone the subject sums otherwise,
 * each of its inputs agreeing) in the check's notes.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/reveal.h"
#include "check_internal.h"
#include "status.h"

/* the twin of the declared order: one class of every position */
static void named_twin(lowp_chk_run_t *r, int i, lowp_reveal_t *tw) {
  const lowp_spec_rule_t *ru = &r->sc->rules[i];
  const lowp_problem_t *p = &r->p;
  size_t K = p->op->id == LOWP_OP_SUM ? p->dims.n : p->dims.k;
  size_t R = p->op->id == LOWP_OP_DOT ? 1 : p->dims.m, C = p->op->id == LOWP_OP_GEMM ? p->dims.n : 1;
  lowp_tree_t t;
  int st = lowp_tree_from_accum(&t, K, &ru->rule.accum, p->op->id != LOWP_OP_SUM);
  if (st) lowp_chk_die(r->sc, "rule %d: the declared order has no tree: %s", i + 1, lowp_status_str(st));
  t.has_out = 1;
  t.out = p->out;
  t.out_rnd = LOWP_RND_NE;
  if (lowp_chk_one_class(tw, &t, R, C)) lowp_chk_die(r->sc, "out of memory");
}

void lowp_chk_twin_prepare(lowp_chk_run_t *r, int i) {
  const lowp_spec_rule_t *ru = &r->sc->rules[i];
  lowp_reveal_t *tw;
  int w;
  if (r->sc->op->kind != LOWP_OPKIND_SUMPROD)
    lowp_chk_die(r->sc, "rule %d: a twin is a summation tree: sum, dot, gemv and gemm only", i + 1);
  if (!r->twins) {
    r->twins = calloc((size_t)r->sc->n_rules, sizeof *r->twins);
    r->twin_owned = calloc((size_t)r->sc->n_rules, sizeof *r->twin_owned);
    if (!r->twins || !r->twin_owned) lowp_chk_die(r->sc, "out of memory");
  }
  tw = &r->twins[i];
  if (!ru->tree) {
    named_twin(r, i, tw);
    r->twin_owned[i] = 1;
  } else if (!strcmp(ru->tree, "revealed")) {
    *tw = *lowp_chk_revealed(r); /* shares the classes of r->rv */
  } else {
    lowp_chk_load_reveal(tw, ru->tree, r, i, 1);
    r->twin_owned[i] = 1;
  }
  for (w = 0; w < 2; w++)
    if (r->sc->has_conv[w] || r->sc->conv_revealed || !ru->tree) {
      memset(&tw->conv[w], 0, sizeof tw->conv[w]);
      tw->conv[w].tested = 1;
      tw->conv[w].converted = r->p.has_conv[w];
      tw->conv[w].fmt = r->p.conv[w];
      tw->conv[w].rnd = r->p.conv_rnd[w];
    }
}

/* why the twin cannot be evaluated, or NULL */
static const char *no_twin(const lowp_reveal_t *tw) {
  size_t c;
  if (!tw->deterministic) return "the subject is nondeterministic: it has no twin";
  for (c = 0; c < tw->n_classes; c++)
    if (!tw->classes[c].has_tree) return tw->classes[c].note[0] ? tw->classes[c].note : "a class without a tree";
  return NULL;
}

void lowp_chk_twin_eval(lowp_chk_run_t *r, int i, lowp_verdict_t *v) {
  const lowp_spec_rule_t *ru = &r->sc->rules[i];
  const lowp_reveal_t *tw = &r->twins[i];
  const char *why = no_twin(tw);
  lowp_check_result_t other;
  lowp_rule_t rule = ru->rule;
  double *y;
  int st;
  memset(v, 0, sizeof *v);
  snprintf(v->what, sizeof v->what, "bitexact");
  v->where = (size_t)-1;
  if (why) {
    snprintf(v->msg, sizeof v->msg, "no twin: %.500s", why);
    return;
  }
  if (!(y = malloc((r->res.out[0].count + 1) * sizeof *y))) {
    snprintf(v->msg, sizeof v->msg, "out of memory for the twin");
    return;
  }
  st = lowp_reveal_twin(y, tw, (const double *const *)r->in.x, &r->p);
  if (st) {
    snprintf(v->msg, sizeof v->msg, "the twin cannot be evaluated: %s", lowp_status_str(st));
    free(y);
    return;
  }
  other = r->res;
  other.out[0].got = y;
  snprintf(other.subject, sizeof other.subject, "the twin of the %s",
           !ru->tree ? "declared order" : !strcmp(ru->tree, "revealed") ? "revealed tree" : "saved tree");
  rule.other = &other;
  st = lowp_check_rule_eval(v, &rule, &r->res, &r->subj);
  if (st == LOWP_OK && !v->pass && v->where != (size_t)-1) {
    lowp_reveal_diff_t d;
    char err[600], line[900];
    if (lowp_reveal_diff(&d, tw, &r->subj, &r->p, (const double *const *)r->in.x, v->where, err, sizeof err) ==
        LOWP_OK) {
      lowp_reveal_diff_str(line, sizeof line, &d);
      lowp_chk_note(r, "rule %d: %s", i + 1, line);
      { /* the short form in the rule's own message (JUnit, JSON verdicts) */
        size_t u = strlen(v->msg);
        snprintf(v->msg + u, sizeof v->msg - u, "; first differing node %zu over %zu terms (k = %zu .. %zu): "
                 "twin %a, kernel %a", d.node, d.n_terms, d.first_term, d.last_term, d.expected, d.got);
      }
    } else {
      lowp_chk_note(r, "rule %d: no differing node found: %s", i + 1, err[0] ? err : "the probe failed");
    }
  }
  free(y);
}
