/* lowp_exp_measure -- one experiment measurement: a registry kernel on declared inputs, through the pipeline */

#include "exp_check.h"

#include <stdio.h>
#include <string.h>

#include "check/subject.h"
#include "status.h"

int lowp_exp_subject(lowp_subject_t *s, const lowp_problem_t *p, const char *kernel,
                     const char *params, char *err, size_t errlen) {
  int st = lowp_kernel_subject_open(s, kernel, params, err, errlen);
  if (st) return st;
  st = lowp_kernel_subject_bind(s, p, err, errlen);
  if (st) lowp_subject_close(s);
  return st;
}

int lowp_exp_measure(lowp_check_result_t *r, const lowp_problem_t *p, const char *kernel,
                     const char *params, const lowp_check_inputs_t *in, char *err,
                     size_t errlen) {
  lowp_subject_t s;
  int st;
  memset(r, 0, sizeof *r);
  st = lowp_exp_subject(&s, p, kernel, params, err, errlen);
  if (st) return st;
  st = lowp_check_measure(r, p, &s, in, NULL, err, errlen);
  lowp_subject_close(&s);
  return st;
}

lowp_problem_t lowp_exp_problem(const char *op, size_t batch, size_t m, size_t n, size_t k,
                                const lowp_format_t *in, const lowp_format_t *out) {
  lowp_problem_t p;
  int i;
  if (lowp_problem_init(&p, lowp_op_by_name(op))) memset(&p, 0, sizeof p); /* op NULL */
  p.dims.batch = batch;
  p.dims.m = m;
  p.dims.n = n;
  p.dims.k = k;
  for (i = 0; i < LOWP_OP_MAXIO; i++) p.in[i] = *in;
  p.out = *out;
  return p;
}
