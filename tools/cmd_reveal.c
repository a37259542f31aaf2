/* lowp reveal, lowp twin -- reveal a kernel's summation trees and hidden conversions; run a revealed tree as a twin
   (lib/check/reveal.h) */

#define _POSIX_C_SOURCE 200809L /* strtok_r */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/reveal.h"
#include "check/subject.h"
#include "check_internal.h"
#include "cli.h"
#include "io/atomic.h"
#include "measure/measure.h"
#include "output.h"
#include "rng/rng.h"
#include "spread.h"
#include "status.h"
#include "thp.h"

/* ------------------------------------------------------ shared options */

typedef struct {
  const char *op, *shape, *in, *out, *kernel, *params, *plugin, *name, *save, *tree;
  size_t validate, rows;
  uint64_t seed;
  int json;
} opts_t;

static void usage_reveal(FILE *f) {
  fprintf(f,
          "usage: lowp reveal (--kernel NAME [--params P] | --plugin LIB.so [--name KERNEL])\n"
          "                   [--op sum|dot|gemv|gemm] [--shape DIMS] [--in FMT[,FMT]] [--out FMT]\n"
          "                   [--validate N] [--seed S] [--save FILE] [--json]\n\n"
          "Reveal how a kernel sums: its summation tree for every class of output\n"
          "positions (FPRev probes: +M and -M among units, the output counts the\n"
          "leaves outside their lowest common ancestor; Xie et al., USENIX ATC 2025),\n"
          "the arithmetic of its nodes (accumulator format and rounding, FMA or rounded\n"
          "products, tensor-core block FMAs), the conversions it applies to its inputs,\n"
          "and whether it is deterministic. Each tree is validated as a twin: it must\n"
          "reproduce the kernel bit for bit on random inputs.\n\n"
          "  --kernel NAME   a registry kernel (gemm_acc, gemm_tc, gemm_sgemm, gemm_dgemm, ...)\n"
          "  --params P      its parameters (\"acc=fp32,order=pairwise\", \"threads=2\")\n"
          "  --plugin LIB    a plugin library (include/lowp_plugin.h); --name its kernel\n"
          "  --op OP         sum, dot, gemv or gemm (default gemm)\n"
          "  --shape DIMS    gemm M,N,K (default 8,8,256); gemv M,K; dot K; sum M,N\n"
          "  --in FMT        input formats (default fp32; one for both)\n"
          "  --out FMT       output format (default fp32)\n"
          "  --validate N    outputs per class the twin must reproduce (default 10000)\n"
          "  --seed S        seed of the validation inputs (default 1)\n"
          "  --save FILE     write the result (trees, conversions) as JSON for\n"
          "                  lowp twin and a spec's \"order\": {\"tree\": FILE}\n"
          "  --json          print the result as JSON instead of text\n\n"
          "Example: lowp reveal --kernel gemm_sgemm --params threads=2 --shape 33,17,1000\n"
          "Exit status: 0 every class has a validated tree; 1 a class has none (or the\n"
          "kernel is nondeterministic); 2 bad usage.\n");
}

static void usage_twin(FILE *f) {
  fprintf(f,
          "usage: lowp twin --tree FILE (--kernel NAME [--params P] | --plugin LIB.so [--name K])\n"
          "                 [--op OP] [--shape DIMS] [--in FMT[,FMT]] [--out FMT] [--rows N] [--seed S]\n\n"
          "Run a revealed tree (lowp reveal --save FILE) as a twin on new random inputs\n"
          "and compare it bit for bit with the kernel: the twin must give the kernel's\n"
          "bits on every output. --op, --shape, --in and --out must be those the tree was\n"
          "revealed with (the batch is free: --rows outputs per class, default 10000).\n\n"
          "Exit status: 0 every output equal; 1 an output differs (the first is printed,\n"
          "with the first differing node of its tree: the node whose terms alone the\n"
          "kernel sums otherwise while each of its inputs agrees);\n"
          "2 bad usage or a bad tree file.\n");
}

static void parse(opts_t *o, const char *cmd, int argc, char **argv, void (*usage)(FILE *)) {
  int i;
  memset(o, 0, sizeof *o);
  o->op = "gemm";
  o->in = "fp32";
  o->out = "fp32";
  o->seed = 1;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); exit(0); }
    else if (!strcmp(a, "--json")) o->json = 1;
    else if (!strcmp(a, "--op")) o->op = lowp_cli_need_arg(cmd, argc, argv, &i);
    else if (!strcmp(a, "--shape")) o->shape = lowp_cli_need_arg(cmd, argc, argv, &i);
    else if (!strcmp(a, "--in")) o->in = lowp_cli_need_arg(cmd, argc, argv, &i);
    else if (!strcmp(a, "--out")) o->out = lowp_cli_need_arg(cmd, argc, argv, &i);
    else if (!strcmp(a, "--kernel")) o->kernel = lowp_cli_need_arg(cmd, argc, argv, &i);
    else if (!strcmp(a, "--params")) o->params = lowp_cli_need_arg(cmd, argc, argv, &i);
    else if (!strcmp(a, "--plugin")) o->plugin = lowp_cli_need_arg(cmd, argc, argv, &i);
    else if (!strcmp(a, "--name")) o->name = lowp_cli_need_arg(cmd, argc, argv, &i);
    else if (!strcmp(a, "--save")) o->save = lowp_cli_need_arg(cmd, argc, argv, &i);
    else if (!strcmp(a, "--tree")) o->tree = lowp_cli_need_arg(cmd, argc, argv, &i);
    else if (!strcmp(a, "--validate"))
      o->validate = (size_t)lowp_cli_int(cmd, "--validate", lowp_cli_need_arg(cmd, argc, argv, &i), 1, 1 << 24);
    else if (!strcmp(a, "--rows"))
      o->rows = (size_t)lowp_cli_int(cmd, "--rows", lowp_cli_need_arg(cmd, argc, argv, &i), 1, 1 << 24);
    else if (!strcmp(a, "--seed"))
      o->seed = (uint64_t)lowp_cli_int(cmd, "--seed", lowp_cli_need_arg(cmd, argc, argv, &i), 0, (1LL << 62));
    else lowp_cli_die(cmd, "unknown option '%s' (see lowp %s --help)", a, cmd);
    /* one parser, two commands: an option of the other is refused, not ignored */
    if (!strcmp(cmd, "twin") && (!strcmp(a, "--json") || !strcmp(a, "--save") || !strcmp(a, "--validate")))
      lowp_cli_die(cmd, "unknown option '%s' (it belongs to lowp reveal; see lowp twin --help)", a);
    if (!strcmp(cmd, "reveal") && (!strcmp(a, "--rows") || !strcmp(a, "--tree")))
      lowp_cli_die(cmd, "%s belongs to lowp twin (see lowp reveal --help)", a);
  }
  if (!o->kernel == !o->plugin) lowp_cli_die(cmd, "give one subject: --kernel NAME or --plugin LIB.so");
  if (o->params && !o->kernel) lowp_cli_die(cmd, "--params belongs to --kernel");
  if (o->params) lowp_cli_list_check(cmd, "--params", o->params, ',');
  if (o->shape) lowp_cli_list_check(cmd, "--shape", o->shape, ',');
  if (o->name && !o->plugin) lowp_cli_die(cmd, "--name belongs to --plugin");
}

/* the problem from --op, --shape, --in, --out */
static void problem(lowp_problem_t *p, const char *cmd, const opts_t *o) {
  long long d[3] = {0, 0, 0};
  int nd = 0, want;
  lowp_format_t f[2];
  size_t nf;
  memset(p, 0, sizeof *p);
  if (!(p->op = lowp_op_by_name(o->op)) ||
      (p->op->id != LOWP_OP_SUM && p->op->id != LOWP_OP_DOT && p->op->id != LOWP_OP_GEMV &&
       p->op->id != LOWP_OP_GEMM))
    lowp_cli_die(cmd, "--op %s: expected sum, dot, gemv or gemm", o->op);
  want = p->op->id == LOWP_OP_GEMM ? 3 : p->op->id == LOWP_OP_DOT ? 1 : 2;
  if (o->shape) {
    char buf[200], *s, *save = NULL;
    if (strlen(o->shape) >= sizeof buf) lowp_cli_die(cmd, "--shape: too long");
    strcpy(buf, o->shape);
    for (s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
      if (nd == 3) lowp_cli_die(cmd, "--shape %s: too many sizes", o->shape);
      d[nd++] = lowp_cli_int(cmd, "--shape", s, 1, 1 << 24);
    }
    if (nd != want)
      lowp_cli_die(cmd, "--shape %s: %s takes %d sizes (%s)", o->shape, o->op, want,
                   want == 3 ? "M,N,K" : want == 1 ? "K" : p->op->id == LOWP_OP_SUM ? "M,N" : "M,K");
  } else {
    d[0] = want == 1 ? 256 : 8;
    d[1] = want == 3 ? 8 : 256;
    d[2] = 256;
  }
  p->dims.batch = 1;
  p->dims.m = p->dims.n = p->dims.k = 1;
  switch (p->op->id) {
  case LOWP_OP_SUM: p->dims.m = (size_t)d[0]; p->dims.n = (size_t)d[1]; break;
  case LOWP_OP_DOT: p->dims.k = (size_t)d[0]; break;
  case LOWP_OP_GEMV: p->dims.m = (size_t)d[0]; p->dims.k = (size_t)d[1]; break;
  default: p->dims.m = (size_t)d[0]; p->dims.n = (size_t)d[1]; p->dims.k = (size_t)d[2];
  }
  nf = lowp_cli_format_list(cmd, o->in, f, 2);
  p->in[0] = f[0];
  p->in[1] = nf > 1 ? f[1] : f[0];
  if (p->op->id == LOWP_OP_SUM && nf > 1) lowp_cli_die(cmd, "--in: a sum has one input");
  p->out = lowp_cli_format(cmd, o->out);
}

static void open_subject(lowp_subject_t *s, const char *cmd, const opts_t *o, const lowp_problem_t *p) {
  char err[600];
  int st;
  if (o->kernel) {
    st = lowp_kernel_subject_open(s, o->kernel, o->params, err, sizeof err);
    if (st == LOWP_OK) st = lowp_kernel_subject_bind(s, p, err, sizeof err);
  } else {
    st = lowp_plugin_subject_open(s, o->plugin, o->name, p, err, sizeof err);
  }
  if (st != LOWP_OK) lowp_cli_die(cmd, "%s", err);
}

/* ------------------------------------------------------------- reveal */

/* how much tighter the tree's bound is than recursive summation's gamma_{K-1}
   (the declaration users write by default), for terms of equal magnitude */
static double bound_ratio(const lowp_tree_t *t) {
  double *c = malloc((t->n + 1) * sizeof *c), sum = 0, u = 0;
  size_t i, k;
  if (!c || lowp_tree_bound_coef(c, t) != LOWP_OK || t->n < 2) { free(c); return NAN; }
  for (i = 0; i < t->n; i++) sum += c[i];
  for (k = 0; k < t->n_arith; k++)
    if (t->arith[k].kind == LOWP_NODE_ADD) {
      double uk = lowp_format_u(&t->arith[k].acc);
      if (uk > u) u = uk;
    }
  free(c);
  if (u == 0) return NAN;
  return lowp_bound_gamma((double)(t->n - 1), u) * (double)t->n / sum;
}

/* what a tree rounds beyond its accumulator's additions, which bound_ratio's gamma leaves out: its
   products (rounded before they are added), block FMAs, its result (rounded to a coarser output) */
static void looser_why(char *buf, size_t len, const lowp_tree_t *t) {
  const char *what[3];
  char out[80];
  double u = 0;
  int prod = 0, fused = 0, n = 0, i;
  size_t k, at;
  for (k = 0; k < t->n_arith; k++) {
    if (t->arith[k].kind == LOWP_NODE_FUSED) fused = 1;
    else {
      if (!t->arith[k].leaf_exact) prod = 1;
      if (lowp_format_u(&t->arith[k].acc) > u) u = lowp_format_u(&t->arith[k].acc);
    }
  }
  if (prod) what[n++] = "its products";
  if (fused) what[n++] = "its block FMAs' results";
  if (t->has_out && lowp_format_u(&t->out) > u) {
    snprintf(out, sizeof out, "its result to %s", t->out.name ? t->out.name : "the output");
    what[n++] = out;
  }
  if (!n) { snprintf(buf, len, "the tree's other roundings count"); return; }
  at = (size_t)snprintf(buf, len, "beyond its additions, the tree rounds ");
  for (i = 0; i < n && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, "%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ", what[i]);
}

static void print_text(const lowp_reveal_t *r, const lowp_problem_t *p, const lowp_subject_t *s,
                       double secs) {
  size_t c;
  int w;
  char buf[400];
  printf("lowp reveal: %s, %s, K = %zu, %zu x %zu outputs per batch entry\n", s->name, p->op->name,
         r->K, r->rows, r->cols);
  printf("deterministic: %s; accumulator bits seen at the output: %s%d\n",
         r->deterministic ? "yes" : "NO (two identical calls differed: no tree)",
         r->precision_lower ? "at least " : "", r->precision_seen);
  if (r->out_narrowed)
    printf("output: every value is a %s value (declared %s): the kernel rounds its result to %s; revealed "
           "with %s as the output\n", r->out_fmt.name, p->out.name, r->out_fmt.name, r->out_fmt.name);
  if (r->acc_bits_assumed)
    printf("accumulator: wider than the output: the probes sized for %d bits fit no tree, sized for %d "
           "they do\n", r->precision_seen, r->acc_bits_assumed);
  for (w = 0; w < (p->op->id == LOWP_OP_SUM ? 1 : 2); w++) {
    lowp_reveal_conv_str(buf, sizeof buf, r, p, w);
    printf("conversion: %s\n", buf);
  }
  for (c = 0; c < r->n_classes; c++) {
    const lowp_reveal_class_t *cl = &r->classes[c];
    printf("class %zu: %zu position%s (first %zu, last %zu)\n", c, cl->n_pos, cl->n_pos == 1 ? "" : "s",
           cl->pos[0], cl->pos[cl->n_pos - 1]);
    if (cl->has_tree) {
      lowp_tree_str(buf, sizeof buf, &cl->tree);
      printf("  tree: %s\n  arithmetic: %s\n", buf, cl->arith);
      double br = bound_ratio(&cl->tree);
      if (isinf(br)) /* (K - 1) u >= 1: gamma has no value */
        printf("  bound: finite, where recursive summation's gamma_%zu in the accumulator is not ((K - 1) u >= 1)\n",
               r->K - 1);
      else if (br >= 1)
        printf("  bound: %.3gx tighter than recursive summation's gamma_%zu in the accumulator (terms of equal "
               "size)\n", br, r->K - 1);
      else {
        char why[160];
        looser_why(why, sizeof why, &cl->tree);
        printf("  bound: %.3gx looser than recursive summation's gamma_%zu in the accumulator (terms of equal "
               "size): %s\n", 1 / br, r->K - 1, why);
      }
    } else {
      printf("  no tree: %s\n", cl->note);
    }
    printf("  %zu probes in %zu calls; twin bit-exact on %zu outputs (%zu differ)%s; %.2f s\n", cl->probes,
           cl->calls, cl->validated, cl->mismatched,
           cl->candidates > 1 ? "; other arithmetics fit too" : "", cl->seconds);
  }
  printf("%s; %.2f s\n", r->msg, secs);
}

int lowp_cmd_reveal(int argc, char **argv) {
  opts_t o;
  lowp_problem_t p;
  lowp_subject_t s;
  lowp_reveal_t r;
  lowp_reveal_opts_t ro;
  char err[600], *js = NULL;
  double t0;
  size_t c;
  int st, ok = 1;
  parse(&o, "reveal", argc, argv, usage_reveal);
  problem(&p, "reveal", &o);
  if (o.save) lowp_output_check_file("reveal", "--save", o.save); /* its type and folder, before the probes */
  lowp_thp_reexec(); /* the command line holds: its probes' arrays in huge pages (tools/thp.h) */
  open_subject(&s, "reveal", &o, &p);
  memset(&ro, 0, sizeof ro);
  ro.seed = o.seed;
  ro.validate = o.validate;
  t0 = lowp_wall_now();
  st = lowp_reveal(&r, &s, &p, &ro, err, sizeof err);
  if (st != LOWP_OK) {
    lowp_subject_close(&s);
    lowp_cli_die("reveal", "%s", err[0] ? err : lowp_status_str(st));
  }
  ok = r.deterministic;
  for (c = 0; c < r.n_classes; c++) ok &= r.classes[c].has_tree;
  if ((o.save || o.json) && lowp_reveal_to_json(&js, &r, &p) != LOWP_OK)
    lowp_cli_die("reveal", "out of memory writing the JSON");
  if (o.json) printf("%s\n", js);
  else print_text(&r, &p, &s, lowp_wall_now() - t0);
  if (o.save) lowp_stdout_before_publish("reveal", o.save); /* printed first, or nothing published */
  if (o.save && lowp_atomic_write(o.save, js, strlen(js)) != LOWP_OK)
    lowp_cli_die("reveal", "--save %s: cannot write it", o.save);
  free(js);
  lowp_reveal_free(&r);
  lowp_subject_close(&s);
  return ok ? LOWP_EXIT_OK : LOWP_EXIT_CHECK;
}

/* --------------------------------------------------------------- twin */

static double rand_val(uint64_t seed, uint64_t i, uint32_t stream, const lowp_format_t *f) {
  uint64_t x = lowp_rng_u64(seed, i, stream);
  double v = ldexp(1.0 + (double)(x >> 12) / 4503599627370496.0, (int)((x >> 4) % 13) - 6), y;
  lowp_round_f64(&y, (x & 1) ? -v : v, f, NULL, LOWP_RND_NE);
  return y;
}

int lowp_cmd_twin(int argc, char **argv) {
  opts_t o;
  lowp_problem_t p;
  lowp_subject_t s;
  lowp_reveal_t r;
  char err[600], *text;
  size_t per_a, per_b, nout, i, batch, diff = 0, first = 0, minpos = (size_t)-1, c;
  double *a, *b, *ys, *yt;
  const double *in[2];
  double *out[1];
  int st;
  parse(&o, "twin", argc, argv, usage_twin);
  if (!o.tree) lowp_cli_die("twin", "--tree FILE is required (lowp reveal --save FILE)");
  problem(&p, "twin", &o);
  lowp_thp_reexec(); /* before --tree is read (it may be the standard input): its arrays in huge pages */
  if (!(text = lowp_chk_read_text(o.tree))) lowp_cli_die("twin", "--tree %s: cannot read it", o.tree);
  st = lowp_reveal_from_json(&r, text, err, sizeof err);
  free(text);
  if (st != LOWP_OK) lowp_cli_die("twin", "--tree %s: %s", o.tree, err);
  for (c = 0; c < r.n_classes; c++) {
    if (!r.classes[c].has_tree) lowp_cli_die("twin", "--tree %s: class %zu has no tree", o.tree, c);
    if (r.classes[c].n_pos < minpos) minpos = r.classes[c].n_pos;
  }
  if (r.n_classes == 0) lowp_cli_die("twin", "--tree %s: no classes", o.tree);
  open_subject(&s, "twin", &o, &p);
  per_a = p.op->id == LOWP_OP_SUM ? p.dims.m * p.dims.n : (p.op->id == LOWP_OP_DOT ? 1 : p.dims.m) * p.dims.k;
  per_b = p.op->id == LOWP_OP_SUM ? 0 : p.op->id == LOWP_OP_GEMM ? p.dims.k * p.dims.n : p.dims.k;
  nout = p.op->id == LOWP_OP_GEMM ? p.dims.m * p.dims.n : p.op->id == LOWP_OP_DOT ? 1 : p.dims.m;
  batch = ((o.rows ? o.rows : 10000) + minpos - 1) / minpos;
  if (batch * (per_a + per_b) > ((size_t)1 << 26)) batch = ((size_t)1 << 26) / (per_a + per_b) + 1;
  p.dims.batch = batch;
  a = malloc(batch * per_a * sizeof *a + 8);
  b = malloc(batch * per_b * sizeof *b + 8);
  ys = malloc(batch * nout * sizeof *ys + 8);
  yt = malloc(batch * nout * sizeof *yt + 8);
  if (!a || !b || !ys || !yt) lowp_cli_die("twin", "out of memory");
  for (i = 0; i < batch * per_a; i++) a[i] = rand_val(o.seed, i, 61, &p.in[0]);
  for (i = 0; i < batch * per_b; i++) b[i] = rand_val(o.seed, i, 62, &p.in[1]);
  in[0] = a;
  in[1] = b;
  out[0] = ys;
  if ((st = s.run(&s, out, in, &p, err, sizeof err)) != LOWP_OK) lowp_cli_die("twin", "the kernel: %s", err);
  if ((st = lowp_reveal_twin(yt, &r, in, &p)) != LOWP_OK)
    lowp_cli_die("twin", "--tree %s does not fit --op/--shape (K %zu, %zu x %zu outputs)", o.tree, r.K, r.rows, r.cols);
  for (i = 0; i < batch * nout; i++)
    if (memcmp(&ys[i], &yt[i], sizeof ys[i])) { if (!diff++) first = i; }
  if (diff) {
    lowp_reveal_diff_t d;
    char line[900];
    printf("lowp twin: %zu of %zu outputs differ; first: output %zu, kernel %a, twin %a\n", diff,
           batch * nout, first, ys[first], yt[first]);
    /* where in the tree (lib/check/reveal_diff.c): one batch entry's probes */
    if (lowp_reveal_diff(&d, &r, &s, &p, in, first, err, sizeof err) == LOWP_OK) {
      lowp_reveal_diff_str(line, sizeof line, &d);
      printf("lowp twin: %s\n", line);
    } else {
      printf("lowp twin: no differing node found: %s\n", err);
    }
  } else
    printf("lowp twin: %zu of %zu outputs bit-exact (%zu classes)\n", batch * nout, batch * nout, r.n_classes);
  free(a); free(b); free(ys); free(yt);
  lowp_reveal_free(&r);
  lowp_subject_close(&s);
  return diff ? LOWP_EXIT_CHECK : LOWP_EXIT_OK;
}
