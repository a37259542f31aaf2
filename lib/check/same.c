/* lowp_check_same -- measure another subject on the same problem and inputs, reusing the exact references */

#include "check/same.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "io/escape.h"

int lowp_check_measure_same(lowp_check_result_t *r, const lowp_check_result_t *ref,
                            const lowp_subject_t *s, const lowp_check_inputs_t *in,
                            const lowp_check_opts_t *opts, char *err, size_t errlen) {
  double *outs[LOWP_OP_MAXIO] = {0};
  const double *ins[LOWP_OP_MAXIO] = {0};
  int j, st;
  if (err && errlen) err[0] = '\0';
  if (!r) return LOWP_EINVAL;
  memset(r, 0, sizeof *r);
  if (!ref || !ref->problem.op || !s || !s->run || !in) return LOWP_EINVAL;
  r->problem = ref->problem;
  snprintf(r->subject, sizeof r->subject, "%s", s->name);
  r->n_out = ref->n_out;
  for (j = 0; j < ref->problem.op->n_in; j++) {
    if (!in->x[j]) return LOWP_ESHAPE;
    ins[j] = in->x[j];
  }
  for (j = 0; j < r->n_out; j++) {
    const lowp_check_output_t *a = &ref->out[j];
    lowp_check_output_t *o = &r->out[j];
    o->name = a->name;
    o->count = a->count;
    o->got = calloc(o->count, sizeof(double));
    o->borrowed = 1; /* ref's arrays, read here (lowp_check_finish), never written */
    o->exact = a->exact;
    o->exact_out = a->exact_out;
    o->exact_data = a->exact_data;
    o->exact_lo = a->exact_lo;
    o->absab = a->absab;
    if (!o->got || !o->exact || !o->exact_out) {
      lowp_errf(err, errlen, 0, "out of memory for the results");
      return LOWP_ENOMEM;
    }
    outs[j] = o->got;
  }
  st = s->run(s, outs, ins, &r->problem, err, errlen);
  if (st) {
    if (err && errlen && !err[0])
      lowp_errf(err, errlen, 0, "subject %s failed: %s", s->name, lowp_status_str(st));
    return st;
  }
  r->time_exact_s = 0;
  return lowp_check_finish(r, s, opts);
}
