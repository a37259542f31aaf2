/* lowp tol -- the (rtol, atol) an assert_close-style test should use, derived
   from the operation, K, the formats, the method and a confidence
   (lib/check/tol.h; docs/tolerances.md) */

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/capi.h"
#include "check/result_json.h"
#include "check/tol.h"
#include "io/npy.h"
#include "cli.h"
#include "output.h"
#include "status.h"

#define CMD "tol"

static void usage(FILE *out) {
  fprintf(out,
          "usage: lowp tol OP --k K [--input FMT] [--acc FMT] [--out FMT] [--method M]\n"
          "                [--compute FMT] [--confidence P|worst] [--risk R] [--numel N]\n"
          "                [--scale S] [--json]\n"
          "       lowp tol OP --a A.npy [--b B.npy] [...] [--save-atol ATOL.npy]\n\n"
          "The tolerance a precision test should use, derived from first principles:\n"
          "the componentwise bound of the accumulation (gamma_r per order, Higham &\n"
          "Mary's probabilistic bound at confidence P, or a tensor-core model's), the\n"
          "rounding to the output, and the rtol/atol pair of torch.isclose's form\n"
          "|c - x| <= atol + rtol |x| against the exact result.\n\n"
          "  OP            sum, dot, gemv, gemm (sums of products); softmax, logsoftmax,\n"
          "                logsumexp, xent, rmsnorm, layernorm (row operations)\n"
          "  --k K         the reduction length (k of dot/gemm, the row length n)\n"
          "  --input FMT   input format (default fp32; with --a/--b the files' dtypes:\n"
          "                <f2 fp16, <f4 fp32, <f8 fp64; their values must be in it)\n"
          "  --acc FMT     accumulation format (default fp32)\n"
          "  --out FMT     output format (default: the input's)\n"
          "  --method M    recursive (default), pairwise, blocked:B, splitk:S, kahan, fma,\n"
          "                or model:PRESET[,key=value...] (e.g. model:h100,promote=128), or\n"
          "                a block-scaled model (model:b200,kind=mxf8f6f4 with --input mxfp8_e4m3)\n"
          "  --compute FMT row ops: the format of exp, log, subtract, divide (default:\n"
          "                the input's); --acc is the row sum's\n"
          "  --confidence  P in (0, 1): probability >= P per element (Higham & Mary\n"
          "                2019); worst: the worst case, never fails an honest kernel.\n"
          "                Default: probabilistic where the errors can be independent,\n"
          "                P = 1 - risk / numel per element\n"
          "  --risk R      the whole test's false-failure probability (default 1e-6)\n"
          "  --numel N     the outputs one test compares (default 2^24; counted from\n"
          "                the inputs when given)\n"
          "  --scale S     sums of products: bound on the mean of |a_i b_i| along k\n"
          "                (|x_i| for sum; default 1); row ops: bound on |x_i|\n"
          "                (layernorm: on mean |x_i| / sqrt(var + eps), 1 for rows\n"
          "                of mean 0)\n"
          "  --a, --b FILE the inputs (.npy; --a only for sum and row ops): atol per\n"
          "                output element from its own sum |a_i b_i| (row ops: scale\n"
          "                per row); --k is then their reduction length\n"
          "  --save-atol F write the per-element atol as .npy (fp64, the output's shape)\n"
          "  --json        print the result as JSON\n\n"
          "Example: lowp tol gemm --k 4096 --input bf16 --acc fp32 --out bf16 --confidence 0.999\n"
          "Exit status: 0 (a vacuous bound is reported, not an error), 2 bad usage.\n");
}

/* the files of a data-aware tolerance (--a, --b, --save-atol), owned */
typedef struct {
  char *a, *b, *save;
} files_t;

static char *copy_str(const char *v) {
  size_t n = strlen(v) + 1;
  char *c = malloc(n);
  if (c) memcpy(c, v, n);
  return c;
}

static void files_free(files_t *fl) {
  free(fl->a);
  free(fl->b);
  free(fl->save);
}

/* the options as lowp_capi_tol's query (lib/check/tol_args.c; one parser of
   the query for the CLI and Python); the file options are taken out of it */
static cJSON *parse(int argc, char **argv, int *as_json, files_t *fl) {
  static const char *const fk[] = {"a", "b", "save_atol"};
  char **fv[] = {&fl->a, &fl->b, &fl->save};
  cJSON *q = NULL;
  char err[512];
  int i, help = 0, st = lowp_tol_args(&q, as_json, &help, argc, argv, err, sizeof err);
  if (st) lowp_cli_die(CMD, "%s", err[0] ? err : lowp_status_str(st));
  if (help) {
    usage(stdout);
    exit(0);
  }
  for (i = 0; i < 3; i++) {
    cJSON *j = cJSON_DetachItemFromObjectCaseSensitive(q, fk[i]);
    *fv[i] = NULL;
    if (cJSON_IsString(j) && !(*fv[i] = copy_str(j->valuestring))) lowp_cli_die(CMD, "out of memory");
    cJSON_Delete(j);
  }
  /* --save-atol's destination now, before any work: a missing folder said "input/output error" at the end */
  if (fl->save) lowp_output_check_file(CMD, "--save-atol", fl->save);
  return q;
}

static void print_text(const lowp_tol_t *t, const lowp_tol_query_t *q) {
  char meth[256];
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
  if (t->probabilistic)
    printf(", probabilistic: P >= 1 - %.3g per element, risk %.3g over %.6g outputs\n",
           1 - t->confidence, t->risk, t->numel);
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
  if (!t->probabilistic) printf("  not probabilistic: %s\n", t->not_prob);
  printf("  why: %s\n", t->why);
}

/* a file's format without --input: its float dtype's (io/npy.h); integer files hold binary64 values */
static const char *file_format(lowp_npy_dtype_t t) {
  return lowp_npy_float_format(t) ? lowp_npy_float_format(t) : "fp64";
}

/* lowp tol --a A.npy [--b B.npy]: the data-aware tolerance (lowp_tol_data) */
static int run_data(cJSON *q, const files_t *fl, int as_json) {
  char err[512], *txt, *js = NULL;
  lowp_npy_info_t info[2];
  double *in[2] = {NULL, NULL}, *atol = NULL, lo = INFINITY, hi = 0;
  const char *paths[2] = {fl->a, fl->b};
  cJSON *shapes = cJSON_AddArrayToObject(q, "shapes"), *o;
  const cJSON *in_fmt = cJSON_GetObjectItemCaseSensitive(q, "input");
  lowp_format_t f;
  size_t count, i, shape[LOWP_OP_MAXDIM];
  int n = fl->b ? 2 : 1, j, st, nd;
  const lowp_format_t *fp = NULL;
  if (cJSON_IsString(in_fmt) && !lowp_format_parse(&f, in_fmt->valuestring, err, sizeof err))
    fp = &f;
  for (j = 0; j < n; j++) {
    cJSON *sh = cJSON_CreateArray();
    int d;
    if ((st = lowp_npy_read(paths[j], &info[j], &in[j], fp, 0)))
      lowp_cli_die(CMD, "%s: cannot read it as .npy (%s)", paths[j], lowp_status_str(st));
    { /* a bound from |A| |B| needs finite data: a NaN made the atol NaN, and a summary of them nonsense */
      size_t bad = 0, first = 0, k;
      for (k = info[j].count; k-- > 0;)
        if (!isfinite(in[j][k])) bad++, first = k;
      if (bad)
        lowp_cli_die(CMD, "%s: %zu of its %zu values are NaN or infinite (the first at flat index %zu): a "
                     "tolerance from the data needs finite inputs", paths[j], bad, info[j].count, first);
    }
    for (d = 0; d < info[j].ndim; d++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)info[j].shape[d]));
    cJSON_AddItemToArray(shapes, sh);
  }
  if (!in_fmt) {
    /* no --input: the formats are the files' dtypes (as lowp check reads them) */
    cJSON *fmts = cJSON_AddArrayToObject(q, "in");
    for (j = 0; j < n; j++)
      cJSON_AddItemToArray(fmts, cJSON_CreateString(file_format(info[j].dtype)));
    /* the output's default follows the wider file (an fp16 A and an fp64 B: fp64, not A's fp16) */
    in_fmt = cJSON_AddStringToObject(q, "input", file_format(n == 2 && info[1].dtype > info[0].dtype
                                                                 ? info[1].dtype : info[0].dtype));
  }
  txt = cJSON_PrintUnformatted(q);
  if (!txt) lowp_cli_die(CMD, "out of memory");
  {
    /* the output's count: lowp_capi_shapes of the same description */
    /* a check's description of the problem alone: op, input format, shapes */
    cJSON *d = cJSON_CreateObject(), *r;
    char *dt, *sj = NULL;
    cJSON_AddStringToObject(d, "op", cJSON_GetObjectItemCaseSensitive(q, "op")->valuestring);
    cJSON_AddItemToObject(d, "shapes", cJSON_Duplicate(shapes, 1));
    cJSON_AddStringToObject(d, "in", cJSON_IsString(in_fmt) ? in_fmt->valuestring : "fp32");
    dt = cJSON_PrintUnformatted(d);
    cJSON_Delete(d);
    st = dt ? lowp_capi_shapes(&sj, dt, err, sizeof err) : LOWP_ENOMEM;
    cJSON_free(dt);
    if (st) lowp_cli_die(CMD, "%s", err[0] ? err : lowp_status_str(st));
    r = cJSON_Parse(sj);
    lowp_capi_free(sj);
    {
      const cJSON *all = cJSON_GetObjectItemCaseSensitive(r, "shapes"), *x;
      const cJSON *out0 = cJSON_GetArrayItem(all, cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "inputs")));
      count = 1;
      nd = 0;
      cJSON_ArrayForEach(x, out0) {
        shape[nd++] = (size_t)x->valuedouble;
        count *= (size_t)x->valuedouble;
      }
    }
    cJSON_Delete(r);
  }
  atol = malloc((count ? count : 1) * sizeof *atol);
  if (!atol) lowp_cli_die(CMD, "out of memory");
  st = lowp_capi_tol_data(&js, txt, (const double *const *)in, atol, NULL, count, err, sizeof err);
  cJSON_free(txt);
  if (st) {
    free(atol); /* bad input (exit 2): nothing left for LeakSanitizer to report */
    lowp_cli_die(CMD, "%s", err[0] ? err : lowp_status_str(st));
  }
  for (i = 0; i < count; i++) {
    if (atol[i] < lo) lo = atol[i];
    if (atol[i] > hi) hi = atol[i];
  }
  o = cJSON_Parse(js);
  lowp_capi_free(js);
  if (!o) lowp_cli_die(CMD, "out of memory");
  lowp_json_num(o, "atol_min", lo);
  lowp_json_num(o, "atol_max", hi);
  cJSON_AddNumberToObject(o, "count", (double)count);
  if (as_json) {
    char *s = cJSON_Print(o);
    if (!s) lowp_cli_die(CMD, "out of memory");
    printf("%s\n", s);
    cJSON_free(s);
  } else {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "explanation");
    const cJSON *np = cJSON_GetObjectItemCaseSensitive(o, "not_probabilistic");
    printf("%s on the inputs (%zu outputs): rtol = %.6g, atol per element from %.6g to %.6g%s%s\n",
           cJSON_GetObjectItemCaseSensitive(q, "op")->valuestring, count,
           cJSON_GetObjectItemCaseSensitive(o, "rtol")->valuedouble, lo, hi,
           fl->save ? "; saved to " : "", fl->save ? fl->save : "");
    if (cJSON_IsString(np) && np->valuestring[0]) printf("  not probabilistic: %s\n", np->valuestring);
    if (cJSON_IsString(e)) printf("  why (the loosest element): %s\n", e->valuestring);
  }
  /* the file last: what was printed must have reached stdout first, or nothing is published */
  if (fl->save) {
    lowp_stdout_before_publish(CMD, fl->save);
    if ((st = lowp_npy_write(fl->save, LOWP_NPY_F8, shape, nd, atol, NULL)))
      lowp_cli_die(CMD, "%s: cannot write it (%s)", fl->save, lowp_status_str(st));
  }
  cJSON_Delete(o);
  free(atol);
  free(in[0]);
  free(in[1]);
  (void)fp;
  return LOWP_EXIT_OK; /* a failed write to stdout: lowp_stdout_finish says so, exit 2 */
}

int lowp_cmd_tol(int argc, char **argv) {
  char err[512], *txt;
  int as_json, st;
  files_t fl = {NULL, NULL, NULL};
  cJSON *q = parse(argc, argv, &as_json, &fl);
  lowp_tol_query_t qq;
  lowp_tol_t t;
  if (fl.a) {
    st = run_data(q, &fl, as_json);
    cJSON_Delete(q);
    files_free(&fl);
    return st;
  }
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
  return LOWP_EXIT_OK; /* a failed write to stdout: lowp_stdout_finish says so, exit 2 */
}
