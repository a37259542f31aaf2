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
          "                or model:PRESET[,key=value...] (e.g. model:h100,promote=128), or\n"
          "                a block-scaled model (model:b200,kind=mxf8f6f4 with --input mxfp8_e4m3)\n"
          "  --confidence  P in (0, 1): holds with probability >= P per element\n"
          "                (Higham & Mary 2019); worst (default): always\n"
          "  --scale S     sums of products: bound on the mean of |a_i b_i| along k\n"
          "                (|x_i| for sum; default 1); row ops: bound on |x_i|\n"
          "                (layernorm: on |x_i - mean| / std)\n"
          "  --json        print the result as JSON\n\n"
          "Example: lowp tol gemm --k 4096 --input bf16 --acc fp32 --out bf16 --confidence 0.999\n"
          "Exit status: 0 (a vacuous bound is reported, not an error), 2 bad usage.\n");
}

static const char *opt_value(int argc, char **argv, int *i, const char *key) {
  size_t n = strlen(key);
  const char *a = argv[*i];
  if (strncmp(a, key, n)) return NULL;
  if (a[n] == '=') return a + n + 1;
  if (a[n] != '\0') return NULL;
  if (*i + 1 >= argc) lowp_cli_die(CMD, "option %s needs an argument", key);
  return argv[++*i];
}

/* the options as lowp_capi_tol's query (one parser for the CLI and Python) */
static cJSON *parse(int argc, char **argv, int *as_json) {
  cJSON *q = cJSON_CreateObject();
  const char *v;
  int i, have_op = 0, have_k = 0;
  *as_json = 0;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      exit(0);
    } else if (!strcmp(a, "--json")) {
      *as_json = 1;
    } else if ((v = opt_value(argc, argv, &i, "--k"))) {
      cJSON_AddNumberToObject(q, "k", (double)lowp_cli_int(CMD, "--k", v, 1, 1LL << 40));
      have_k = 1;
    } else if ((v = opt_value(argc, argv, &i, "--input"))) {
      cJSON_AddStringToObject(q, "input", v);
    } else if ((v = opt_value(argc, argv, &i, "--acc"))) {
      cJSON_AddStringToObject(q, "acc", v);
    } else if ((v = opt_value(argc, argv, &i, "--out"))) {
      cJSON_AddStringToObject(q, "out", v);
    } else if ((v = opt_value(argc, argv, &i, "--method"))) {
      cJSON_AddStringToObject(q, "method", v);
    } else if ((v = opt_value(argc, argv, &i, "--confidence"))) {
      if (strcmp(v, "worst")) {
        double p = lowp_cli_number(CMD, "--confidence", v);
        if (!(p > 0 && p < 1)) lowp_cli_die(CMD, "--confidence must lie in (0, 1) or be 'worst', not %s", v);
        cJSON_AddNumberToObject(q, "confidence", p);
      }
    } else if ((v = opt_value(argc, argv, &i, "--scale"))) {
      double s = lowp_cli_number(CMD, "--scale", v);
      if (!(s > 0) || !isfinite(s)) lowp_cli_die(CMD, "--scale must be a finite number > 0, not %s", v);
      cJSON_AddNumberToObject(q, "scale", s);
    } else if (a[0] == '-' && a[1] != '\0') {
      lowp_cli_die(CMD, "unknown option '%s' (see lowp tol --help)", a);
    } else if (have_op) {
      lowp_cli_die(CMD, "one operation at a time ('%s')", a);
    } else {
      cJSON_AddStringToObject(q, "op", a);
      have_op = 1;
    }
  }
  if (!have_op) lowp_cli_die(CMD, "give an operation (e.g. lowp tol dot --k 1024); see lowp tol --help");
  if (!have_k) lowp_cli_die(CMD, "give the reduction length --k");
  return q;
}

static void print_text(const lowp_tol_t *t, const lowp_tol_query_t *q) {
  char meth[160];
  if (q->has_model) lowp_tc_model_str(meth, sizeof meth, &q->model);
  printf("%s, k = %zu: %s inputs, %s output, ", q->op->name, q->k,
         q->has_bs ? q->bs.name : q->in.name ? q->in.name : "custom", q->out.name ? q->out.name : "custom");
  if (q->has_bsmodel) {
    lowp_bsmma_str(meth, sizeof meth, &q->bsmodel);
    printf("block-scaled model %s", meth);
  } else if (q->has_model) printf("tensor-core model %s", meth);
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
