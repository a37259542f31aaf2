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

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/reveal.h"
#include "io/atomic.h"
#include "check/reveal_bound.h"
#include "check_internal.h"
#include "status.h"

char *lowp_chk_read_text(const char *path) {
  FILE *f = lowp_fopen_regular(path); /* not a FIFO, device or folder: it seeks */
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

/* one class of every position (R x C) holding tree t (taken) */
int lowp_chk_one_class(lowp_reveal_t *rv, lowp_tree_t *t, size_t R, size_t C) {
  size_t k;
  memset(rv, 0, sizeof *rv);
  rv->deterministic = 1;
  rv->K = t->n;
  rv->rows = R;
  rv->cols = C;
  rv->n_classes = 1;
  rv->classes = calloc(1, sizeof *rv->classes);
  if (rv->classes) rv->classes[0].pos = malloc((R * C + 1) * sizeof *rv->classes[0].pos);
  if (!rv->classes || !rv->classes[0].pos) {
    lowp_tree_free(t);
    lowp_reveal_free(rv);
    return LOWP_ENOMEM;
  }
  for (k = 0; k < R * C; k++) rv->classes[0].pos[k] = k;
  rv->classes[0].n_pos = R * C;
  rv->classes[0].has_tree = 1;
  rv->classes[0].tree = *t;
  return LOWP_OK;
}

/* output positions (rows, columns) of one batch entry of p, as lowp_reveal counts them */
static void positions(const lowp_problem_t *p, size_t *R, size_t *C) {
  int id = p->op->id;
  *R = id == LOWP_OP_DOT ? 1 : p->dims.m;
  *C = id == LOWP_OP_GEMM ? p->dims.n : 1;
}

void lowp_chk_load_reveal(lowp_reveal_t *rv, const char *path, const lowp_chk_run_t *r, int i, int twin) {
  const lowp_spec_check_t *sc = r->sc;
  size_t K = r->p.op->id == LOWP_OP_SUM ? r->p.dims.n : r->p.dims.k, R, C;
  char err[600], *text = lowp_chk_read_text(path);
  int st;
  lowp_tree_t t;
  if (!text) lowp_chk_die(sc, "rule %d: \"order\": {\"tree\": \"%s\"}: cannot read it", i + 1, path);
  positions(&r->p, &R, &C);
  if (strstr(text, "\"lowp_reveal\"")) st = lowp_reveal_from_json(rv, text, err, sizeof err);
  else if ((st = lowp_tree_from_json(&t, text, err, sizeof err)) == LOWP_OK)
    st = lowp_chk_one_class(rv, &t, R, C);
  free(text);
  if (st == LOWP_ENOMEM) lowp_chk_die(sc, "out of memory");
  if (st) lowp_chk_die(sc, "rule %d: \"order\": {\"tree\": \"%s\"}: %s", i + 1, path, err);
  if (rv->K != K)
    lowp_chk_die(sc, "rule %d: the tree in %s has %zu leaves; the check sums %zu terms", i + 1, path, rv->K, K);
  if (twin && (rv->rows != R || rv->cols != C))
    lowp_chk_die(sc, "rule %d: %s was revealed on %zu x %zu outputs per batch entry; the check has %zu x %zu "
                 "(reveal at the check's shape)", i + 1, path, rv->rows, rv->cols, R, C);
}

void lowp_chk_note(lowp_chk_run_t *r, const char *fmt, ...) {
  size_t u = strlen(r->notes);
  va_list ap;
  if (u + 2 >= sizeof r->notes) return;
  if (u) r->notes[u++] = '\n', r->notes[u] = '\0';
  va_start(ap, fmt);
  vsnprintf(r->notes + u, sizeof r->notes - u, fmt, ap);
  va_end(ap);
}

const lowp_reveal_t *lowp_chk_revealed(lowp_chk_run_t *r) {
  lowp_reveal_opts_t o;
  lowp_problem_t q = r->p;
  char err[600];
  int st, w;
  if (r->rv) return r->rv;
  if (!(r->rv = calloc(1, sizeof *r->rv))) lowp_chk_die(r->sc, "out of memory");
  memset(&o, 0, sizeof o);
  o.seed = 1;
  o.validate = 2000;
  q.dims.batch = 1;
  for (w = 0; w < LOWP_OP_MAXIO; w++) q.has_conv[w] = 0;
  st = lowp_reveal(r->rv, &r->subj, &q, &o, err, sizeof err);
  if (st) {
    free(r->rv);
    r->rv = NULL;
    lowp_chk_die(r->sc, "revealing the subject: %s", err[0] ? err : lowp_status_str(st));
  }
  return r->rv;
}

void lowp_chk_convert(lowp_chk_run_t *r) {
  const lowp_reveal_t *rv = lowp_chk_revealed(r);
  char line[300];
  int w, any = 0;
  for (w = 0; w < 2 && w < r->p.op->n_in; w++) {
    const lowp_reveal_conv_t *c = &rv->conv[w];
    if (!c->tested) continue;
    lowp_reveal_conv_str(line, sizeof line, rv, &r->p, w);
    if (c->unexplained)
      lowp_chk_die(r->sc, "\"convert\": \"revealed\": %s", line);
    if (c->converted) {
      r->p.has_conv[w] = 1;
      r->p.conv[w] = c->fmt;
      r->p.conv_rnd[w] = c->rnd;
      any = 1;
    }
    lowp_chk_note(r, "convert (revealed): %s", line);
  }
  if (!any && !r->notes[0]) lowp_chk_note(r, "convert (revealed): no conversion found");
}

void lowp_chk_convert_verify(lowp_chk_run_t *r) {
  const lowp_op_t *op = r->p.op;
  char err[600];
  int w, fits, plain, st;
  if (r->sc->subject.kind == LOWP_SPEC_TENSORS || op->kind != LOWP_OPKIND_SUMPROD) return;
  for (w = 0; w < op->n_in; w++) {
    if (!r->p.has_conv[w]) continue;
    st = lowp_reveal_conv_verify(&fits, &plain, &r->subj, &r->p, w, &r->p.conv[w], r->p.conv_rnd[w], 7, err,
                                 sizeof err);
    if (st == LOWP_EUNSUPPORTED) return; /* too few terms to probe: nothing said */
    if (st) lowp_chk_die(r->sc, "\"convert\": probing the subject: %s", err[0] ? err : lowp_status_str(st));
    if (fits) continue;
    {
      lowp_reveal_t rv;
      lowp_reveal_opts_t o;
      char found[300] = "";
      lowp_problem_t q = r->p;
      memset(&o, 0, sizeof o);
      o.conversions_only = 1;
      q.dims.batch = 1;
      /* what it does instead: the candidates revelation knows */
      if (!plain && lowp_reveal(&rv, &r->subj, &q, &o, err, sizeof err) == LOWP_OK) {
        if (rv.conv[w].converted) lowp_reveal_conv_str(found, sizeof found, &rv, &q, w);
        lowp_reveal_free(&rv);
      }
      if (!found[0]) snprintf(found, sizeof found, "%s is %s", op->in_names[w],
                              plain ? "read as given, not converted" : "read in no format lowp can name");
      snprintf(r->conv_bad, sizeof r->conv_bad, "\"convert\" declares %s rounded to %s (%s); the kernel does "
               "otherwise: %s", op->in_names[w], r->p.conv[w].name, lowp_rounding_name(r->p.conv_rnd[w]), found);
      return;
    }
  }
}

/* t->tree_bound and t->tree_name from the trees of rv, the additions
   bounded in acc (how: "revealed" or "given"); the bound is
   lowp_reveal_bound's; returns the fewest significand bits of the trees'
   additions (0: none known), and in *prod_bits (unless NULL) those of their
   rounded products (0: none) */
int lowp_chk_tree_bound(lowp_rule_t *t, int *prod_bits, const lowp_reveal_t *rv, const lowp_format_t *acc,
                        const char *how, const lowp_spec_check_t *sc, int i) {
  lowp_reveal_bound_t b;
  size_t c;
  int st, fewer;
  if (prod_bits) *prod_bits = 0;
  if (!rv->deterministic) {
    t->tree_bound = 0;
    snprintf(t->tree_name, sizeof t->tree_name, "no tree: the subject is nondeterministic (bound 0)");
    return 0;
  }
  for (c = 0; c < rv->n_classes; c++)
    if (!rv->classes[c].has_tree) {
      t->tree_bound = 0;
      snprintf(t->tree_name, sizeof t->tree_name, "no tree (bound 0) for positions class %zu: %.100s", c,
               rv->classes[c].note);
      return 0;
    }
  if ((st = lowp_reveal_bound(&b, rv, acc)) == LOWP_ERANGE)
    lowp_chk_die(sc, "rule %d: a tree of the subject has no bound (too deep for %s)", i + 1, acc->name);
  if (st != LOWP_OK) lowp_chk_die(sc, "rule %d: out of memory bounding the subject's tree", i + 1);
  t->tree_bound = b.bound;
  fewer = (b.narrowest && b.narrowest < acc->precision) || (b.narrowest_prod && b.narrowest_prod < acc->precision);
  snprintf(t->tree_name, sizeof t->tree_name, "%s tree, %zu class%s, deepest leaf %zu roundings, in %s%s", how,
           rv->n_classes, rv->n_classes == 1 ? "" : "es", b.depth, acc->name,
           fewer ? " (the kernel accumulates in fewer bits than declared)" : "");
  if (prod_bits) *prod_bits = b.narrowest_prod;
  return b.narrowest;
}

void lowp_chk_tree(lowp_chk_run_t *r, int i) {
  const lowp_spec_check_t *sc = r->sc;
  const lowp_spec_rule_t *ru = &sc->rules[i];
  lowp_rule_t *t = &r->trees[i];
  const lowp_format_t *acc = &ru->rule.accum.acc;
  lowp_reveal_t file, *rvp = &file;
  int revealed = !strcmp(ru->tree, "revealed"), bits, pbits;
  *t = ru->rule;
  t->has_tree = 1;
  memset(&file, 0, sizeof file);
  if (revealed) {
    rvp = (lowp_reveal_t *)lowp_chk_revealed(r);
  } else {
    lowp_chk_load_reveal(&file, ru->tree, r, i, 0);
  }
  bits = lowp_chk_tree_bound(t, &pbits, rvp, acc, revealed ? "revealed" : "given", sc, i);
  /* the kernel itself, probed, adds in fewer bits than the rule's accumulator: the rule fails whatever
     the data (a narrower accumulator's error can stay under the bound on some data: fp16 lanes of 512
     terms at K = 16384 gave 95% of fp32's tree bound on two outputs) */
  t->tree_bits = revealed ? bits : 0; /* lowp_check_rule_eval fails the rule when fewer than acc's */
  /* so do products rounded to fewer bits (fp16 inputs, products rounded to bf16: the tree's own bound,
     u_bf16 per product, passed such a kernel at 10.7% where recursive in fp32 failed it at 2746%) */
  t->tree_prod_bits = revealed ? pbits : 0;
  lowp_reveal_free(&file);
}
