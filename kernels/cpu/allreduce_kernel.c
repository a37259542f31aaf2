/* lowp_kernel_allreduce -- the gradient all-reduce of lib/amp/allreduce as a registry kernel (op sum) */

#include "cpu/allreduce_kernel.h"

#include <stdio.h>
#include <stdlib.h>

#include "amp/allreduce.h"
#include "status.h"
#include "io/escape.h"

int lowp_kernel_allreduce(const lowp_kcfg_t *c, double *const *out, const double *const *in,
                          const lowp_problem_t *p, char *err, size_t errlen) {
  const lowp_dims_t *d = &p->dims;
  size_t rows = d->batch * d->m, W = d->n, i, w;
  float *g, *o;
  int st;
  if (p->in[0].precision > 24 || p->in[0].emax > 127) {
    lowp_errf(err, errlen, 0, "allreduce: the workers' gradients are fp32 values (input %s)",
              p->in[0].name ? p->in[0].name : "?");
    return LOWP_EUNSUPPORTED;
  }
  g = calloc(rows * W, sizeof *g);
  o = malloc(rows * sizeof *o);
  if (!g || !o) {
    free(g);
    free(o);
    return LOWP_ENOMEM;
  }
  for (i = 0; i < rows; i++) /* row i = element i as the W workers hold it; lib/amp wants worker-major */
    for (w = 0; w < W; w++) g[w * rows + i] = (float)in[0][i * W + w];
  st = lowp_allreduce(o, g, W, rows, c->reduce == 1 ? LOWP_AR_TREE : LOWP_AR_RING, &c->comm,
                      &c->acc.acc, NULL);
  if (st) lowp_errf(err, errlen, 0, "allreduce: comm and acc must fit in fp32");
  for (i = 0; !st && i < rows; i++) out[0][i] = (double)o[i];
  free(g);
  free(o);
  return st ? st : lowp_round_array_f64(out[0], out[0], rows, &p->out, NULL, LOWP_RND_NE);
}
