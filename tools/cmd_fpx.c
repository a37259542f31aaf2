/* lowp fpx -- floating-point exceptions of any tensor: `lowp fpx scan t.npy --format e4m3`, `lowp fpx outputs` */

#define _POSIX_C_SOURCE 200809L /* strtok_r under -std=c11 */

/*
 * scan: convert every value of a .npy file to a format as a cast would and
 *       report the exceptions (lib/measure/fpx.h): counts per kind, the
 *       first index of each, the elements already NaN or infinite, and the
 *       histogram of exponents against the format's range.
 * outputs: a black-box subject's saved outputs: the first NaN or infinite
 *       output and which of the given inputs already held one.
 */

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/fpx_json.h"
#include "cli.h"
#include "fpx_cli.h"
#include "io/npy.h"
#include "measure/fpx.h"
#include "status.h"

#define CMD "fpx"

static void usage(FILE *out) {
  fprintf(out,
          "usage: lowp fpx scan FILE.npy --format FMT [--rounding R] [--sat] [--json]\n"
          "                [--fail-on KINDS]\n"
          "       lowp fpx outputs OUT.npy [--inputs A.npy,B.npy,...] [--json]\n\n"
          "Floating-point exceptions (README \"Floating-point exceptions\").\n"
          "scan: every value converted to FMT (rounding R, default rne; --sat clamps\n"
          "  overflow to +-max): counts per kind, the first index of each, inherent or\n"
          "  spurious, the values already NaN/inf, and a histogram of exponents.\n"
          "outputs: the first NaN/inf output of a black-box subject, and which inputs\n"
          "  already held a NaN or an infinity (the exception propagated, not produced);\n"
          "  without --inputs the text claims no cause, and --json's kinds read the\n"
          "  inputs as finite.\n\n"
          "Kinds: invalid, nan_propagated, divzero, overflow_inf, overflow_nan,\n"
          "  saturation, underflow_subnormal, underflow_zero, scale; groups overflow,\n"
          "  underflow, nan, all. --fail-on KINDS (comma list): exit 1 if one occurred.\n"
          "Exit status: 0, 1 (--fail-on matched, or outputs found an exception), 2 bad usage.\n");
}

static const char *npy_err(int st) {
  switch (st) {
  case LOWP_EFILE: return "not a .npy file, or its header is corrupt or truncated";
  case LOWP_EUNSUPPORTED: return "unsupported .npy: lowp reads <f2 <f4 <f8 |u1 <u2 <i4 <i8, C order";
  case LOWP_EIO: return "cannot open or read the file";
  case LOWP_EINVAL: return "|u1 (<u2) data need an 8-bit (16-bit) --format whose values they are";
  default: return lowp_status_str(st);
  }
}

static unsigned parse_kinds(const char *text) {
  unsigned m = 0;
  char buf[256], *tok, *save = NULL;
  if (strlen(text) >= sizeof buf) lowp_cli_die(CMD, "--fail-on: list too long");
  lowp_cli_list_check(CMD, "--fail-on", text, ',');
  strcpy(buf, text);
  for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    unsigned k = lowp_fpx_mask_parse(tok);
    if (!k) lowp_cli_die(CMD, "--fail-on: unknown kind '%s' (lowp fpx --help lists them)", tok);
    m |= k;
  }
  if (!m) lowp_cli_die(CMD, "--fail-on: empty list");
  return m;
}

static int scan(int argc, char **argv) {
  const char *path = NULL;
  lowp_format_t f;
  int have_f = 0, json = 0, i, st;
  unsigned fail = 0;
  lowp_rounding_t rnd = LOWP_RND_NE;
  lowp_policy_t pol = {0};
  lowp_npy_info_t info;
  lowp_fpx_scan_t *s;
  double *x;
  for (i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); exit(0); }
    else if (!strcmp(a, "--format")) { f = lowp_cli_format(CMD, lowp_cli_need_arg(CMD, argc, argv, &i)); have_f = 1; }
    else if (!strcmp(a, "--rounding")) rnd = lowp_cli_rounding(CMD, lowp_cli_need_arg(CMD, argc, argv, &i));
    else if (!strcmp(a, "--sat")) pol.overflow = LOWP_OVF_SAT;
    else if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--fail-on")) fail = parse_kinds(lowp_cli_need_arg(CMD, argc, argv, &i));
    else if (a[0] == '-' && a[1]) lowp_cli_die(CMD, "unknown option %s (lowp fpx --help)", a);
    else if (path) lowp_cli_die(CMD, "scan takes one file (got %s and %s)", path, a);
    else path = a;
  }
  if (!path) lowp_cli_die(CMD, "scan needs a .npy file");
  if (!have_f) lowp_cli_die(CMD, "scan needs --format FMT");
  st = lowp_npy_read(path, &info, &x, &f, 0);
  if (st) lowp_cli_die(CMD, "%s: %s", path, npy_err(st));
  s = malloc(sizeof *s);
  if (!s) { free(x); lowp_cli_die(CMD, "out of memory"); }
  lowp_fpx_scan(s, x, info.count, &f, &pol, rnd);
  free(x);
  if (json) {
    cJSON *o = lowp_fpx_scan_json(s, &f);
    char *t = cJSON_Print(o);
    printf("%s\n", t);
    free(t);
    cJSON_Delete(o);
  } else {
    int b, lo = -1, hi = -1;
    printf("lowp fpx scan: %s, %zu values to %s (%s%s)\n", path, info.count, f.name,
           lowp_rounding_name(rnd), pol.overflow == LOWP_OVF_SAT ? ", saturating" : "");
    printf("  already NaN %llu, inf %llu, zero %llu; first exceptional index %lld\n",
           (unsigned long long)s->nan_in, (unsigned long long)s->inf_in,
           (unsigned long long)s->zero_in, (long long)s->first_bad);
    lowp_fpx_cli_print(stdout, &s->trace, "x");
    for (b = 0; b < s->hist_n; b++)
      if (s->hist[b]) { if (lo < 0) lo = b; hi = b; }
    printf("  exponents (floor log2|x|; %s: normal %d..%d, subnormal from %d):\n", f.name, f.emin,
           f.emax, f.subnormals ? f.emin - f.precision + 1 : f.emin);
    for (b = lo; lo >= 0 && b <= hi; b++)
      if (s->hist[b])
        printf("    %s%6d %12llu%s\n", b == 0 ? "<=" : b == s->hist_n - 1 ? ">=" : "  ", s->hist_lo + b,
               (unsigned long long)s->hist[b],
               s->hist_lo + b > f.emax ? "  above the range"
               : s->hist_lo + b < f.emin ? "  below the normals" : "");
  }
  st = (fail & lowp_fpx_kinds(&s->trace)) ? LOWP_EXIT_CHECK : LOWP_EXIT_OK;
  free(s);
  return st;
}

/* split "a.npy,b.npy" into at most max paths (in place) */
static size_t split_paths(char *text, char **out, size_t max) {
  size_t n = 0;
  char *save = NULL, *tok;
  for (tok = strtok_r(text, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (n == max) lowp_cli_die(CMD, "--inputs: at most %zu files", max);
    out[n++] = tok;
  }
  return n;
}

static int outputs(int argc, char **argv) {
  const char *path = NULL;
  char *inputs = NULL, *paths[16];
  double *y, *x[16];
  size_t nx[16], ni = 0, q;
  int i, st, json = 0, bad[16];
  int64_t first;
  unsigned kinds;
  lowp_npy_info_t info;
  for (i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); exit(0); }
    else if (!strcmp(a, "--inputs")) inputs = (char *)lowp_cli_need_arg(CMD, argc, argv, &i);
    else if (!strcmp(a, "--json")) json = 1;
    else if (a[0] == '-' && a[1]) lowp_cli_die(CMD, "unknown option %s (lowp fpx --help)", a);
    else if (path) lowp_cli_die(CMD, "outputs takes one file (got %s and %s)", path, a);
    else path = a;
  }
  if (!path) lowp_cli_die(CMD, "outputs needs a .npy file");
  if (inputs) lowp_cli_list_check(CMD, "--inputs", inputs, ',');
  if (inputs) ni = split_paths(inputs, paths, 16);
  st = lowp_npy_read(path, &info, &y, NULL, 0);
  if (st) lowp_cli_die(CMD, "%s: %s", path, npy_err(st));
  for (q = 0; q < ni; q++) {
    lowp_npy_info_t xi;
    st = lowp_npy_read(paths[q], &xi, &x[q], NULL, 0);
    if (st) lowp_cli_die(CMD, "%s: %s", paths[q], npy_err(st));
    nx[q] = xi.count;
  }
  lowp_fpx_outputs(&first, &kinds, bad, y, info.count, (const double *const *)x, nx, ni);
  if (json) {
    printf("{\"first\": %lld, \"kinds\": [", (long long)first);
    for (i = 0, st = 0; i < LOWP_FPX_NKINDS; i++)
      if (kinds & LOWP_FPX_BIT(i)) printf("%s\"%s\"", st++ ? ", " : "", lowp_fpx_kind_name((lowp_fpx_kind_t)i));
    printf("], \"inputs_exceptional\": [");
    for (q = 0; q < ni; q++) printf("%s%s", q ? ", " : "", bad[q] ? "true" : "false");
    printf("]}\n");
  } else if (first < 0) {
    printf("lowp fpx outputs: %s: no NaN or infinity in %zu values\n", path, info.count);
  } else {
    /* without --inputs nothing is known of the inputs: no cause is claimed */
    printf("lowp fpx outputs: %s: first exceptional output at index %lld: %s\n", path, (long long)first,
           ni == 0 ? (isnan(y[first]) ? "NaN (no --inputs given: produced or propagated is not known)"
                                      : "infinity (no --inputs given: overflow or propagated is not known)")
           : kinds & LOWP_FPX_BIT(LOWP_FPX_NAN_PROP) ? "NaN (an input held a NaN: propagated)"
           : kinds & LOWP_FPX_BIT(LOWP_FPX_INVALID) ? "NaN, and no input held a NaN (produced: invalid)"
           : kinds ? "infinity, and no input held an infinity (produced: overflow)"
                   : "infinity (an input held one: propagated)");
    for (q = 0; q < ni; q++)
      printf("  input %s: %s\n", paths[q], bad[q] ? "already exceptional (NaN or inf)" : "finite");
  }
  free(y);
  for (q = 0; q < ni; q++) free(x[q]);
  return first >= 0 ? LOWP_EXIT_CHECK : LOWP_EXIT_OK;
}

int lowp_cmd_fpx(int argc, char **argv) {
  if (argc < 2) lowp_cli_die(CMD, "give a subcommand: scan or outputs (lowp fpx --help)");
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(stdout);
    return LOWP_EXIT_OK;
  }
  if (!strcmp(argv[1], "scan")) return scan(argc, argv);
  if (!strcmp(argv[1], "outputs")) return outputs(argc, argv);
  lowp_cli_die(CMD, "unknown subcommand '%s' (scan or outputs)", argv[1]);
}
