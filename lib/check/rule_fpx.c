/* lowp_check_rule_eval_fpx -- the no_exceptions rule: no output element shows the refused exception kinds */

/*
 * A subject is a black box: each output element c is read as the rounding,
 * to the output format, of the exact result x the pipeline computed
 * (binary64, rounded once): lowp_fpx_classify(out, rne, x, 0, c) gives its
 * overflow and underflow kinds; a NaN where x is not NaN is invalid (the
 * subject produced it), a NaN where x is NaN propagated, an infinity where
 * x is finite an overflow to infinity. The verdict counts the elements
 * showing a refused kind and points at the first (row-major, outputs in
 * order).
 */

#include <math.h>
#include <stdio.h>

#include "check/pipeline.h"
#include "measure/fpx.h"
#include "status.h"

/* the kinds output element c shows against its exact value x */
static unsigned kinds_of(const lowp_format_t *f, double x, double c) {
  if (isnan(c)) return LOWP_FPX_BIT(isnan(x) ? LOWP_FPX_NAN_PROP : LOWP_FPX_INVALID);
  if (isinf(c) && isfinite(x)) return LOWP_FPX_BIT(LOWP_FPX_OVF_INF);
  return lowp_fpx_classify(f, LOWP_RND_NE, x, 0, c, isnan(x) ? LOWP_FPX_IN_NAN : 0);
}

int lowp_check_rule_eval_fpx(lowp_verdict_t *v, const lowp_rule_t *rule,
                             const lowp_check_result_t *r) {
  const lowp_format_t *f = &r->problem.out;
  size_t n = 0, i, first = (size_t)-1;
  unsigned seen = 0, at = 0;
  int j, fj = 0, k;
  char idx[96], names[200] = "";
  snprintf(v->what, sizeof v->what, "no_exceptions");
  for (j = 0; j < r->n_out; j++) {
    const lowp_check_output_t *o = &r->out[j];
    if (o->absent || !o->got || !o->exact) continue;
    for (i = 0; i < o->count; i++) {
      unsigned m = kinds_of(f, o->exact[i], o->got[i]) & rule->fpx_mask;
      if (!m) continue;
      if (first == (size_t)-1) { first = i; fj = j; at = m; }
      seen |= m;
      n++;
    }
  }
  lowp__check_verdict_count(v, n, first, fj);
  if (!n) {
    snprintf(v->msg, sizeof v->msg, "no output shows the refused exceptions");
    return LOWP_OK;
  }
  for (k = 0; k < LOWP_FPX_NKINDS; k++)
    if (seen & LOWP_FPX_BIT(k)) {
      size_t u = 0;
      while (names[u]) u++;
      snprintf(names + u, sizeof names - u, "%s%s", u ? ", " : "",
               lowp_fpx_kind_name((lowp_fpx_kind_t)k));
    }
  lowp_check_index_str(idx, sizeof idx, &r->problem, fj, first);
  for (k = 0; !(at & LOWP_FPX_BIT(k)); k++) {}
  snprintf(v->msg, sizeof v->msg, "%zu outputs show %s; first at %s (%s): got %g, exact %g", n,
           names, idx, lowp_fpx_kind_name((lowp_fpx_kind_t)k), r->out[fj].got[first],
           r->out[fj].exact[first]);
  return LOWP_OK;
}
