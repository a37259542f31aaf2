/* lowp tol -- the (rtol, atol) an assert_close-style test should use, derived
   from the operation, K, the formats, the method and a confidence
   (lib/check/tol.h; docs/tolerances.md) */

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/capi.h"
#include "check/tol.h"
#include "cli.h"
#include "status.h"

#define CMD "tol"

static void usage(FILE *out) {
  fprintf(out,
          "usage: lowp tol OP --k K [--input FMT] [--acc FMT] [--out FMT] [--method M]\n"
          "                [--confidence P|worst] [--scale S] [--json]\n\n"
          "The tolerance a precision test should use, derived from first principles:\n"
          "the componentwise bound of the accumulation (gamma_r per order, Higham &\n"
          "Mary's probabilistic bound at confidence P, or a tensor-core model's), the\n"
          "rounding to the output, and the rtol/atol pair of torch.isclose's form\n"
          "|c - x| <= atol + rtol |x| against the exact result.\n\n"
          "  OP            sum, dot, gemv, gemm (sums of products); softmax, logsoftmax,\n"
          "                logsumexp, xent, rmsnorm, layernorm (row operations)\n"
          "  --k K         the reduction length (k of dot/gemm, the row length n)\n"
          "  --input FMT   input format (default fp32)\n"
          "  --acc FMT     accumulation format (default fp32)\n"
          "  --out FMT     output format (default: the input's)\n"
          "  --method M    recursive (default), pairwise, blocked:B, splitk:S, kahan, fma,\n"
          "                or model:PRESET[,key=value...] (e.g. model:h100,promote=128)\n"
          "  --confidence  P in (0, 1): holds with probability >= P per element\n"
          "                (Higham & Mary 2019); worst (default): always\n"
          "  --scale S     sums of products: bound on the mean of |a_i b_i| along k\n"
          "                (|x_i| for sum; default 1); row ops: bound on |x_i|\n"
          "                (layernorm: on |x_i - mean| / std)\n"
          "  --json        print the result as JSON\n\n"
          "Example: lowp tol gemm --k 4096 --input bf16 --acc fp32 --out bf16 --confidence 0.999\n"
          "Exit status: 0 (a vacuous bound is reported, not an error), 2 bad usage.\n");
}

/* the options as lowp_capi_tol's query (lib/check/tol_args.c; one parser of
   the query for the CLI and Python) */
static cJSON *parse(int argc, char **argv, int *as_json) {
  cJSON *q = NULL;
  char err[512];
  int help = 0, st = lowp_tol_args(&q, as_json, &help, argc, argv, err, sizeof err);
  if (st) lowp_cli_die(CMD, "%s", err[0] ? err : lowp_status_str(st));
  if (help) {
    usage(stdout);
    exit(0);
  }
  return q;
}

static void print_text(const lowp_tol_t *t, const lowp_tol_query_t *q) {
  char meth[160];
  if (q->has_model) lowp_tc_model_str(meth, sizeof meth, &q->model);
  printf("%s, k = %zu: %s inputs, %s output, ", q->op->name, q->k,
         q->in.name ? q->in.name : "custom", q->out.name ? q->out.name : "custom");
  if (q->has_model) printf("tensor-core model %s", meth);
  else {
    lowp_accum_str(meth, sizeof meth, &q->accum);
    printf("accumulation %s", meth);
  }
  if (q->confidence > 0) printf(", probability >= %g per element\n", q->confidence);
  else printf(", worst case\n");
  if (t->vacuous) {
    printf("  no tolerance: the bound is vacuous (%s)\n", t->bound_name);
  } else {
    printf("  rtol = %.6g\n  atol = %.6g\n", t->rtol, t->atol);
    if (q->op->kind == LOWP_OPKIND_SUMPROD)
      printf("  bound = %.6g on |c - x| / sum |a_i b_i| (%s)\n", t->bound, t->bound_name);
    printf("  torch.testing.assert_close(actual, expected, rtol=%.3g, atol=%.3g)\n", t->rtol,
           t->atol);
  }
  printf("  why: %s\n", t->why);
}

int lowp_cmd_tol(int argc, char **argv) {
  char err[512], *txt;
  int as_json, st;
  cJSON *q = parse(argc, argv, &as_json);
  lowp_tol_query_t qq;
  lowp_tol_t t;
  txt = cJSON_PrintUnformatted(q);
  cJSON_Delete(q);
  if (!txt) lowp_cli_die(CMD, "out of memory");
  st = lowp_capi_tol_query(&qq, txt, err, sizeof err);
  cJSON_free(txt);
  if (st) lowp_cli_die(CMD, "%s", err);
  if ((st = lowp_tol(&t, &qq, err, sizeof err))) lowp_cli_die(CMD, "%s", err[0] ? err : lowp_status_str(st));
  if (as_json) {
    cJSON *o = lowp_tol_json(&t, &qq);
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    if (!s) lowp_cli_die(CMD, "out of memory");
    printf("%s\n", s);
    cJSON_free(s);
  } else {
    print_text(&t, &qq);
  }
  return fflush(stdout) == 0 && !ferror(stdout) ? LOWP_EXIT_OK : LOWP_EXIT_USAGE;
}
