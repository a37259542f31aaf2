/* lowp_fpx_cli -- exception traces on the command line: the traced reference of a GEMM, text rendering */

#include "fpx_cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/gemm_acc.h"
#include "cpu/gemm_tc.h"
#include "status.h"

int lowp_fpx_cli_gemm(lowp_fpx_trace_t *t, const double *a, const double *b, size_t m,
                      size_t n, size_t k, const lowp_fpx_gemm_spec_t *spec, char *err,
                      size_t errlen) {
  double *c = calloc(m * n != 0 ? m * n : 1, sizeof *c);
  int st;
  if (!c) return LOWP_ENOMEM;
  lowp_fpx_init(t);
  if (spec->model) {
    lowp_gemm_tc_cfg_t cfg;
    st = lowp_gemm_tc_config(&cfg, spec->model, spec->promote, spec->in, spec->acc, err, errlen);
    if (!st) st = lowp_gemm_tc_fpx(c, a, b, m, n, k, &cfg, t);
  } else {
    lowp_gemm_acc_cfg_t g;
    memset(&g, 0, sizeof g);
    g.acc = spec->acc;
    g.acc_rnd = spec->rnd;
    g.prod = spec->prod;
    g.prod_rnd = spec->prod_rnd;
    g.order = LOWP_ORDER_RECURSIVE;
    st = lowp_gemm_acc_fpx(c, a, b, m, n, k, &g, t);
  }
  free(c);
  if (st && err && errlen && !err[0]) snprintf(err, errlen, "%s", lowp_status_str(st));
  return st;
}

static double value_of(uint64_t bits) {
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

void lowp_fpx_cli_print(FILE *out, const lowp_fpx_trace_t *t, const char *what) {
  int k, first = lowp_fpx_first_kind(t, LOWP_FPX_ALL);
  if (first < 0) {
    fprintf(out, "  exceptions: none in %" PRIu64 " operations\n", t->ops);
    return;
  }
  fprintf(out, "  exceptions in %" PRIu64 " operations; the first: %s\n", t->ops,
          lowp_fpx_kind_name((lowp_fpx_kind_t)first));
  for (k = 0; k < LOWP_FPX_NKINDS; k++) {
    const lowp_fpx_event_t *e = &t->first[k];
    char at[96];
    if (!t->count[k]) continue;
    if (e->j >= 0) snprintf(at, sizeof at, "%s[%" PRId64 "][%" PRId64 "]", what, e->i, e->j);
    else snprintf(at, sizeof at, "%s[%" PRId64 "]", what, e->i);
    fprintf(out, "    %-20s %10" PRIu64 "  (inherent %" PRIu64 ", spurious %" PRIu64 ")\n",
            lowp_fpx_kind_name((lowp_fpx_kind_t)k), t->count[k], t->inherent[k], t->spurious[k]);
    fprintf(out, "      first: %s", at);
    if (e->k >= 0) fprintf(out, " k=%" PRId64, e->k);
    fprintf(out, " seq %" PRIu64 ", %s(%.17g [%016" PRIx64 "]", e->seq, lowp_fpx_op_name(e->op),
            value_of(e->a), e->a);
    if (e->op != LOWP_FPX_OP_ROUND && e->op != LOWP_FPX_OP_SCALE)
      fprintf(out, ", %.17g [%016" PRIx64 "]", value_of(e->b), e->b);
    if (e->op == LOWP_FPX_OP_FMA || e->op == LOWP_FPX_OP_BFMA)
      fprintf(out, ", %.17g [%016" PRIx64 "]", value_of(e->c), e->c);
    fprintf(out, ") -> %.17g [%016" PRIx64 "], exact %.17g%s\n", value_of(e->r), e->r, e->exact,
            e->inherent == 1 ? " (inherent)" : e->inherent == 0 ? " (spurious)" : "");
  }
}
