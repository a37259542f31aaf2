/* lowp_chk_print_line -- lowp check: the report line of a check */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_internal.h"
#include "format/format.h"
#include "measure/measure.h"

/* ------------------------------------------------------ private helpers */

static void fmt_pct(char *buf, size_t len, const lowp_verdict_t *v) {
  if (v->vacuous) snprintf(buf, len, "vacuous");
  else if (!strcmp(v->what, "sqnr_db")) snprintf(buf, len, "margin %+.3g dB", v->measured - v->limit);
  else if (isnan(v->percent)) snprintf(buf, len, "-");
  else if (isinf(v->percent)) snprintf(buf, len, "inf%%");
  else snprintf(buf, len, "%.1f%%", v->percent);
}

/* The element that decided rule v (the worst of the rule's own metric, not
   the largest ulp error, which at near-zero outputs can be alarming and
   beside the point), with its split: input rounding + computation, in ulps
   of the output format at the exact value. */
static void print_worst(FILE *f, const lowp_chk_run_t *r, const lowp_verdict_t *v) {
  char idx[128], sum[200];
  const lowp_check_output_t *o;
  size_t w = v->where;
  double x, ul;
  if (w == (size_t)-1 || v->where_out < 0 || v->where_out >= r->res.n_out) return;
  o = &r->res.out[v->where_out];
  if (w >= o->count) return;
  x = o->exact[w];
  lowp_check_index_str(idx, sizeof idx, &r->p, v->where_out, w);
  lowp_check_inputs_summary(sum, sizeof sum, &r->p, &r->in, v->where_out, w);
  fprintf(f, "  worst %s by %s: got %.6g, exact %.6g", idx, v->what, o->got[w], x);
  ul = isfinite(x) ? lowp_ulp_toward(x, o->got[w], &r->p.out) : NAN;
  if (isfinite(o->got[w]) && isfinite(ul) && ul > 0) {
    /* x + lo the exact value (lowp_measure_errors_lo), as the worst element's split counts it */
    double lo = o->exact_lo ? o->exact_lo[w] : 0;
    double uc = fabs((o->got[w] - x) - lo) / lowp_measure_ulp_unit(o->got[w], x, lo, &r->p.out);
    if (o->exact_data && isfinite(o->exact_data[w]))
      fprintf(f, " (input %.3g + compute %.3g ulp)", fabs(x - o->exact_data[w]) / ul, uc);
    else
      fprintf(f, " (compute %.3g ulp)", uc);
  }
  fprintf(f, " (%s)", sum);
}

/* ----------------------------------------------------------- public API */

void lowp_chk_print_line(FILE *f, const lowp_chk_run_t *r) {
  const lowp_spec_check_t *sc = r->sc;
  char pct[32];
  int i, d = -1;
  if (!r->measured) {
    fprintf(f, "FAIL %s  %s\n", sc->name, r->error);
    return;
  }
  /* the deciding rule: the first that failed, else the one closest to its limit */
  for (i = 0; i < r->n_v && d < 0; i++)
    if (!r->v[i].pass) d = i;
  if (d < 0)
    for (i = 0; i < r->n_v; i++)
      if (d < 0 || (!isnan(r->v[i].percent) &&
                    (isnan(r->v[d].percent) || r->v[i].percent > r->v[d].percent)))
        d = i;
  fprintf(f, "%s %s ", r->pass ? "PASS" : "FAIL", sc->name);
  if (d >= 0) {
    const lowp_verdict_t *v = &r->v[d];
    fmt_pct(pct, sizeof pct, v);
    /* SQNR and cosine pass from below: measured >= limit */
    int up = !strcmp(v->what, "sqnr_db") || !strcmp(v->what, "cosine");
    /* the comparison as measured (a rule can fail within its limit: a revealed narrower accumulator) */
    int within = v->pass || (up ? v->measured >= v->limit : v->measured <= v->limit);
    if (v->vacuous)
      fprintf(f, " %s %.4g, bound vacuous", v->what, v->measured);
    else
      fprintf(f, " %s %.4g %s %.4g (%s)", v->what, v->measured,
              within ? (up ? ">=" : "<=") : (up ? "<" : ">"), v->limit, pct);
  }
  if (d >= 0) print_worst(f, r, &r->v[d]);
  {
    size_t nn = 0;
    int k;
    for (k = 0; k < r->res.n_out; k++) nn += r->res.out[k].n_not_in_format;
    if (nn) fprintf(f, "  [%zu values are not values of %s]", nn, r->p.out.name ? r->p.out.name : "the output format");
  }
  if (r->error[0]) fprintf(f, "  [%s]", r->error);
  fprintf(f, "\n");
  if (!r->pass)
    for (i = 0; i < r->n_v; i++)
      if (!r->v[i].pass) fprintf(f, "  rule %d failed: %s\n", i + 1, r->v[i].msg);
  if (r->fpx.on) lowp_chk_fpx_print(f, r);
  if (r->notes[0]) { /* one line each */
    const char *q = r->notes, *e;
    for (; *q; q = *e ? e + 1 : e) {
      e = strchr(q, '\n');
      if (!e) e = q + strlen(q);
      fprintf(f, "  note: %.*s\n", (int)(e - q), q);
    }
  }
}

