/* lowp_check_index_str -- an output element's name with its indices ("C[3][17]") */

#include <stdio.h>

#include "check/op.h"
#include "check/pipeline.h"

void lowp_check_index_str(char *buf, size_t len, const lowp_problem_t *p, int out_j,
                          size_t i) {
  size_t sh[LOWP_OP_MAXDIM], c, used;
  size_t idx[LOWP_OP_MAXDIM];
  int nd, d;
  const char *name;
  if (!buf || !len) return;
  if (!p || !p->op || out_j < 0 || out_j >= p->op->n_out ||
      lowp_op_shape(p, p->op->n_in + out_j, sh, &nd, &c)) {
    snprintf(buf, len, "[%zu]", i);
    return;
  }
  name = p->op->out_names[out_j];
  for (d = nd - 1; d >= 0; d--) {
    idx[d] = i % sh[d];
    i /= sh[d];
  }
  used = (size_t)snprintf(buf, len, "%s", name);
  for (d = 0; d < nd && used < len; d++)
    used += (size_t)snprintf(buf + used, len - used, "[%zu]", idx[d]);
}
