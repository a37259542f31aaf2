/* lowp_chk_print_line -- lowp check: the report line of a check */

#include <math.h>
#include <stdio.h>

#include "check_internal.h"

/* ------------------------------------------------------ private helpers */

static void fmt_pct(char *buf, size_t len, const lowp_verdict_t *v) {
  if (v->vacuous) snprintf(buf, len, "vacuous");
  else if (isnan(v->percent)) snprintf(buf, len, "-");
  else if (isinf(v->percent)) snprintf(buf, len, "inf%%");
  else snprintf(buf, len, "%.1f%%", v->percent);
}

/* ----------------------------------------------------------- public API */

void lowp_chk_print_line(FILE *f, const lowp_chk_run_t *r) {
  const lowp_spec_check_t *sc = r->sc;
  char pct[32], idx[128], sum[200];
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
    if (v->vacuous)
      fprintf(f, " %s %.4g, bound vacuous", v->what, v->measured);
    else
      fprintf(f, " %s %.4g %s %.4g (%s)", v->what, v->measured, v->pass ? "<=" : ">", v->limit, pct);
  }
  {
    int j = 0, k;
    for (k = 0; k < r->res.n_out; k++)
      if (r->res.out[k].err.max_ulp > r->res.out[j].err.max_ulp || r->res.out[k].n_class_mismatch)
        j = k;
    {
      const lowp_check_output_t *o = &r->res.out[j];
      if (o->exact_data)
        fprintf(f, "  input %.3g + compute %.3g ulp", o->ulp_input, o->ulp_compute);
      else
        fprintf(f, "  compute %.3g ulp", o->ulp_compute);
      if (o->worst != (size_t)-1) {
        lowp_check_index_str(idx, sizeof idx, &r->p, j, o->worst);
        lowp_check_inputs_summary(sum, sizeof sum, &r->p, &r->in, j, o->worst);
        fprintf(f, "  worst %s (%s)", idx, sum);
      }
    }
  }
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
}

