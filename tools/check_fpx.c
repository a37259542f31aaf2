/* lowp_chk_fpx -- `lowp check --fpx`: the first NaN or infinite output of each check's subject */

/*
 * Subjects of lowp check are black boxes (registry kernels, plugins, saved
 * tensors): what can be said of them is which output first became NaN or
 * infinite, whether its inputs already held such values (propagated) or
 * not (produced), and whether the exact result there fits the output
 * format (spurious: the subject lost it) or not (inherent: NaN, infinite,
 * or overflowing when rounded to it). lib/measure/fpx.h's
 * lowp_fpx_outputs decides the first two; the pipeline's exact result the
 * third. Text, JSON and JUnit properties are written from here.
 */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_internal.h"
#include "measure/fpx.h"

void lowp_chk_fpx(lowp_chk_run_t *r) {
  const double *x[LOWP_OP_MAXIO];
  size_t nx[LOWP_OP_MAXIO];
  int q, j;
  r->fpx.out = -1;
  r->fpx.first = -1;
  if (!r->measured) return;
  for (q = 0; q < r->in.n; q++) {
    x[q] = r->in.x[q];
    nx[q] = r->in.count[q];
  }
  for (j = 0; j < r->res.n_out; j++) {
    const lowp_check_output_t *o = &r->res.out[j];
    int64_t first;
    unsigned kinds;
    if (!o->got) continue;
    lowp_fpx_outputs(&first, &kinds, r->fpx.bad_in, o->got, o->count, x, nx, (size_t)r->in.n);
    if (first < 0) continue;
    r->fpx.out = j;
    r->fpx.first = first;
    r->fpx.kinds = kinds;
    /* inherent: the exact result does not fit the output format either
       (NaN or infinite, or it overflows when rounded to it, rne) */
    r->fpx.inherent = -1;
    if (o->exact) {
      double y;
      (void)lowp_round_f64(&y, o->exact[first], &r->p.out, NULL, LOWP_RND_NE);
      r->fpx.inherent = !isfinite(o->exact[first]) || !isfinite(y);
    }
    return;
  }
}

/* the kinds as "a, b" */
static void kinds_text(char *buf, size_t len, unsigned kinds) {
  int k;
  size_t used = 0;
  buf[0] = '\0';
  for (k = 0; k < LOWP_FPX_NKINDS; k++)
    if (kinds & LOWP_FPX_BIT(k))
      used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? ", " : "",
                               lowp_fpx_kind_name((lowp_fpx_kind_t)k));
  if (!buf[0]) snprintf(buf, len, "infinity, and an input held one: propagated");
}

void lowp_chk_fpx_print(FILE *f, const lowp_chk_run_t *r) {
  char kt[200], at[96];
  int q;
  if (!r->measured) return;
  if (r->fpx.first < 0) {
    fprintf(f, "     fpx: no NaN or infinity in the outputs\n");
    return;
  }
  kinds_text(kt, sizeof kt, r->fpx.kinds);
  lowp_check_index_str(at, sizeof at, &r->p, r->fpx.out, (size_t)r->fpx.first);
  fprintf(f, "     fpx: first NaN/inf output %s (%s; %s); inputs already NaN/inf:", at, kt,
          r->fpx.inherent == 1 ? "inherent: the exact result does not fit the output format either"
                               : "spurious: the exact result is finite, in the output's range");
  for (q = 0; q < r->in.n; q++) fprintf(f, " %s", r->fpx.bad_in[q] ? "yes" : "no");
  fprintf(f, "\n");
}

cJSON *lowp_chk_fpx_json(const lowp_chk_run_t *r) {
  cJSON *o = cJSON_CreateObject(), *a;
  int k, q;
  cJSON_AddNumberToObject(o, "first", (double)r->fpx.first);
  if (r->fpx.first >= 0) {
    char at[96];
    lowp_check_index_str(at, sizeof at, &r->p, r->fpx.out, (size_t)r->fpx.first);
    cJSON_AddStringToObject(o, "output", r->res.out[r->fpx.out].name);
    cJSON_AddStringToObject(o, "at", at);
    cJSON_AddBoolToObject(o, "inherent", r->fpx.inherent == 1);
  }
  a = cJSON_AddArrayToObject(o, "kinds");
  for (k = 0; k < LOWP_FPX_NKINDS; k++)
    if (r->fpx.first >= 0 && (r->fpx.kinds & LOWP_FPX_BIT(k)))
      cJSON_AddItemToArray(a, cJSON_CreateString(lowp_fpx_kind_name((lowp_fpx_kind_t)k)));
  a = cJSON_AddArrayToObject(o, "inputs_exceptional");
  for (q = 0; q < r->in.n; q++) cJSON_AddItemToArray(a, cJSON_CreateBool(r->fpx.bad_in[q]));
  return o;
}

void lowp_chk_fpx_junit(FILE *f, const lowp_chk_run_t *r) {
  char kt[200];
  int q;
  fprintf(f, "      <properties>\n        <property name=\"fpx.first\" value=\"%lld\"/>\n",
          (long long)r->fpx.first);
  if (r->fpx.first >= 0) {
    kinds_text(kt, sizeof kt, r->fpx.kinds);
    fprintf(f, "        <property name=\"fpx.output\" value=\"%s\"/>\n", r->res.out[r->fpx.out].name);
    fprintf(f, "        <property name=\"fpx.kinds\" value=\"%s\"/>\n", kt);
    fprintf(f, "        <property name=\"fpx.inherent\" value=\"%s\"/>\n",
            r->fpx.inherent == 1 ? "true" : "false");
  }
  for (q = 0; q < r->in.n; q++)
    fprintf(f, "        <property name=\"fpx.input%d_exceptional\" value=\"%s\"/>\n", q,
            r->fpx.bad_in[q] ? "true" : "false");
  fprintf(f, "      </properties>\n");
}
