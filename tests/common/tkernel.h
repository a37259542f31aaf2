/* tkernel -- run a registry kernel as a subject, for tests of the kernels (header only) */
#ifndef LOWP_TKERNEL_H
#define LOWP_TKERNEL_H

#include <stddef.h>

#include "check/op.h"
#include "check/subject.h"

/** @brief Open kernel name[params], bind it to p and run it; returns its
    status with the message in err. */
static inline int lowp_test_run_kernel(double *const *out, const double *const *in,
                                       const char *name, const char *params,
                                       const lowp_problem_t *p, char *err, size_t errlen) {
  lowp_subject_t s;
  int st = lowp_kernel_subject_open(&s, name, params, err, errlen);
  if (st) return st;
  st = lowp_kernel_subject_bind(&s, p, err, errlen);
  if (!st) st = s.run(&s, out, in, p, err, errlen);
  lowp_subject_close(&s);
  return st;
}

#endif
