/* lowp convert -- round values to formats and show bits, class and error */

/*
 * Each VALUE is read exactly (a lowp_point_t of lib/measure/point.h, which
 * rounds correctly to every format in one step), optionally passed through
 * a source format (--from), and rounded to each target format. Errors are
 * measured against the exact input (lowp_point_errors).
 *
 * Run: lowp convert 0.1 1e-6 65520 --to all
 *      lowp convert --bits 0x3c00 --from fp16 --to e4m3 --json
 */

#define _POSIX_C_SOURCE 200809L /* strdup */

#include "cleanup.h"
#include "cli.h"
#include "format/bsformat.h"
#include "format/number.h"
#include "measure/point.h"
#include "status.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FORMATS 64

typedef struct {
  lowp_format_t to[MAX_FORMATS];
  size_t nto;
  int have_from;
  lowp_format_t from;
  lowp_rounding_t rnd;
  lowp_policy_t pol;
  int json, bits;
} opts_t;

/* ------------------------------------------------------ private helpers */

/* a built-in block-scaled format name, with or without :RULE */
static int is_bsformat(const char *name) {
  lowp_bsformat_t b;
  char cut[64];
  size_t len = strcspn(name, ":");
  if (len >= sizeof cut) return 0;
  memcpy(cut, name, len);
  cut[len] = '\0';
  return lowp_bsformat_parse(&b, cut, NULL, 0) == LOWP_OK;
}

static void usage(FILE *out) {
  fprintf(out,
    "usage: lowp convert VALUE... --to F[,F..]|all [options]\n"
    "       lowp convert --bits PATTERN... --from F --to F[,F..]|all [options]\n"
    "  VALUE     decimal (0.1, 1e-6), hex float (0x1.8p-3), inf, nan; exact\n"
    "  --file F  also read values (or --bits patterns) from F, one per line; - or\n"
    "            --file - reads standard input (blank lines and # comments skipped)\n"
    "  --csv     one CSV row a value and format (the --json keys as the header)\n"
    "  --to      target formats (names or one spec p=..,emin=..,emax=..)\n"
    "  --from F  first round each VALUE to F (rne), or with --bits decode F\n"
    "  --bits    the values are bit patterns of --from (0x3c00)\n"
    "  --round   rne|rna|rtz|rup|rdn|rto|sr (default rne)\n"
    "  --sat     saturate overflow and inf to +-max (satfinite)\n"
    "  --overflow ieee|sat|sat-keepinf|nan  overflow policy (default ieee)\n"
    "  --nan-sign keep|positive   sign of NaN results (default keep)\n"
    "  --nan-map max|zero         NaN into formats without NaN (default max)\n"
    "  --ftz     flush subnormal results to zero\n"
    "  --daz     treat subnormal inputs of --from's format as zero\n"
    "  --sr-bits K  random bits for sr (1..32, default 32)\n"
    "  --seed S  stochastic rounding seed (default 0; index = value position)\n"
    "  --json    machine-readable output with stable keys\n"
    "  --to mxfp8_e4m3|mxfp4|nvfp4|int8_b32|...  a block-scaled format: the values\n"
    "            are one row, quantized block by block (--scale-rule; lowp convert\n"
    "            --to mxfp4 --help)\n");
}

static void fields_text(char *buf, size_t len, uint64_t b, const lowp_format_t *f) {
  int w = lowp_format_width(f), i, pos = 0;
  int sbits = f->has_sign ? 1 : 0;
  for (i = w - 1; i >= 0 && pos + 3 < (int)len; i--) {
    buf[pos++] = (char)('0' + (int)((b >> i) & 1));
    if ((sbits && i == w - 1) || (i == f->precision - 1 && i > 0)) buf[pos++] = '.';
  }
  buf[pos] = '\0';
}

/* What the value is, from the format's point of view. */
static const char *class_text(double y, int saturated, const lowp_format_t *f) {
  if (saturated) return "saturated";
  return lowp_class_name(lowp_classify(y, f));
}

static cJSON *one_result(const opts_t *o, const char *input, const lowp_point_t *x,
                         const lowp_format_t *f, uint64_t index) {
  lowp_policy_t pol = o->pol;
  double y, ea, er, eu;
  uint64_t b = 0;
  int tern, sat;
  char fields[96], hex[32], vhex[64];
  cJSON *r = cJSON_CreateObject();

  pol.sr_offset = index;
  tern = lowp_point_round(&y, x, f, &pol, o->rnd);
  (void)lowp_encode(&b, y, f);
  /* saturated: the result is +-max only because the policy clamped an
     overflow, i.e. rounding with an unbounded exponent would exceed xmax */
  sat = isfinite(y) && fabs(y) == lowp_format_xmax(f) && lowp_point_beyond_max(x, f, &pol, o->rnd);
  lowp_point_errors(&ea, &er, &eu, y, x, f); /* against the exact input */
  fields_text(fields, sizeof fields, b, f);
  snprintf(hex, sizeof hex, "0x%0*llx", (lowp_format_width(f) + 3) / 4,
           (unsigned long long)b);
  snprintf(vhex, sizeof vhex, "%a", y);
  cJSON_AddStringToObject(r, "input", input);
  cJSON_AddStringToObject(r, "format", f->name);
  cJSON_AddStringToObject(r, "round", lowp_rounding_name(o->rnd));
  cJSON_AddStringToObject(r, "bits", hex);
  cJSON_AddStringToObject(r, "fields", fields);
  if (isnan(y)) cJSON_AddStringToObject(r, "value", signbit(y) ? "-nan" : "nan");
  else if (isinf(y)) cJSON_AddStringToObject(r, "value", y > 0 ? "inf" : "-inf");
  else cJSON_AddNumberToObject(r, "value", y);
  cJSON_AddStringToObject(r, "value_hex", vhex);
  cJSON_AddStringToObject(r, "class", class_text(y, sat, f));
  cJSON_AddNumberToObject(r, "ternary", tern > 0 ? 1 : tern < 0 ? -1 : 0);
  if (isfinite(ea)) cJSON_AddNumberToObject(r, "abs_error", ea);
  else cJSON_AddStringToObject(r, "abs_error", isnan(ea) ? "nan" : "inf");
  if (isfinite(er)) cJSON_AddNumberToObject(r, "rel_error", er);
  else cJSON_AddStringToObject(r, "rel_error", isnan(er) ? "nan" : "inf");
  if (isfinite(eu)) cJSON_AddNumberToObject(r, "ulp_error", eu);
  else cJSON_AddStringToObject(r, "ulp_error", isnan(eu) ? "nan" : "inf");
  return r;
}

static void print_text(cJSON *res) {
  cJSON *it;
  const char *last = "";
  cJSON_ArrayForEach(it, res) {
    const char *in = cJSON_GetObjectItem(it, "input")->valuestring;
    cJSON *v = cJSON_GetObjectItem(it, "value");
    cJSON *ea = cJSON_GetObjectItem(it, "abs_error");
    cJSON *er = cJSON_GetObjectItem(it, "rel_error");
    cJSON *eu = cJSON_GetObjectItem(it, "ulp_error");
    char vb[48], eab[24], erb[24], eub[24];
    if (strcmp(in, last)) {
      printf("%s%s\n", *last ? "\n" : "", in);
      printf("  %-9s %-5s %-12s %-22s %-15s %-24s %-10s %-10s %-10s %-9s\n",
             "format", "round", "bits", "fields s.e.m", "value", "hex",
             "class", "abs_err", "rel_err", "ulp_err");
      last = in;
    }
    if (cJSON_IsNumber(v)) snprintf(vb, sizeof vb, "%.9g", v->valuedouble);
    else snprintf(vb, sizeof vb, "%s", v->valuestring);
#define ERRTXT(b, j) (cJSON_IsNumber(j) ? (snprintf(b, sizeof b, "%.3g", (j)->valuedouble), b) : (j)->valuestring)
    printf("  %-9s %-5s %-12s %-22s %-15s %-24s %-10s %-10s %-10s %-9s\n",
           cJSON_GetObjectItem(it, "format")->valuestring,
           cJSON_GetObjectItem(it, "round")->valuestring,
           cJSON_GetObjectItem(it, "bits")->valuestring,
           cJSON_GetObjectItem(it, "fields")->valuestring, vb,
           cJSON_GetObjectItem(it, "value_hex")->valuestring,
           cJSON_GetObjectItem(it, "class")->valuestring,
           ERRTXT(eab, ea), ERRTXT(erb, er), ERRTXT(eub, eu));
#undef ERRTXT
  }
}

/* ------------------------------------------------ parse, round, measure */

/* The exact input of value k: a bit pattern of --from decoded, or a number
   read exactly and, with --from, first rounded to that format (rne); --daz
   flushes --from's subnormals to zero. Dies on a malformed value. */
static void read_exact(lowp_point_t *x, const opts_t *o, const char *text) {
  double v;
  if (o->bits) {
    uint64_t b;
    int bs = lowp_parse_u64(&b, text);
    if (bs == LOWP_EPARSE)
      lowp_cli_die("convert", "malformed bit pattern '%s': expected 0x hex or a decimal integer",
                   text);
    if (bs != LOWP_OK) lowp_cli_die("convert", "bit pattern %s is wider than 64 bits", text);
    if (lowp_format_width(&o->from) < 64 && (b >> lowp_format_width(&o->from)) != 0)
      lowp_cli_die("convert", "bit pattern %s is wider than %s's %d bits", text,
                   o->from.name, lowp_format_width(&o->from));
    if (lowp_decode(&v, b, &o->from) != 0)
      lowp_cli_die("convert", "bit pattern %s encodes no value of %s (an exponent "
                   "field above emax's)", text, o->from.name);
  } else {
    if (lowp_point_parse(x, text) != LOWP_OK)
      lowp_cli_die("convert", "malformed number '%s': expected a decimal (1e-6), "
                   "a hex float (0x1.8p-3), inf or nan", text);
    if (!o->have_from) return;
    (void)lowp_point_round(&v, x, &o->from, NULL, LOWP_RND_NE);
  }
  if (o->pol.daz && v != 0 && fabs(v) < lowp_format_xmin(&o->from)) v = signbit(v) ? -0.0 : 0.0;
  lowp_point_set_f64(x, v);
}

/* every value rounded to every --to format, one result object each into res */
static void convert_values(const opts_t *o, const char *const *vals, size_t nv, cJSON *res) {
  lowp_point_t *x;
  size_t k, j;
  if (lowp_point_new(&x) != LOWP_OK) lowp_cli_die("convert", "out of memory");
  for (k = 0; k < nv; k++) {
    read_exact(x, o, vals[k]);
    for (j = 0; j < o->nto; j++)
      cJSON_AddItemToArray(res, one_result(o, vals[k], x, &o->to[j], k));
  }
  lowp_point_free(x);
}

/* ----------------------------------------------------------------- main */

/* Values from a file or standard input ("-"), one per line; blank lines and
   lines starting with '#' are skipped, blanks around a value ignored. Each
   line is appended to *vals (malloc'd copies kept in *owned). */
/* The file of --file, open for reading: standard input for "-" (refused
   if it was closed); else a regular file, opened without waiting (a FIFO
   with no writer would block: refused, like a folder or a device). */
static FILE *open_values(const char *path) {
  struct stat st;
  FILE *f;
  int fd;
  if (!strcmp(path, "-")) {
    if (lowp_stdin_closed()) lowp_cli_die("convert", "--file -: the standard input is closed");
    return stdin;
  }
  fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) lowp_cli_die("convert", "--file %s: cannot open it (%s)", path, strerror(errno));
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    lowp_cli_die("convert", "--file %s: is %s, not a regular file (give - to read a pipe)", path,
                 S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO" :
                 "a device or socket");
  }
  (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  f = fdopen(fd, "r");
  if (!f) lowp_cli_die("convert", "out of memory");
  return f;
}

/* Values from a file or standard input ("-"), one per line; blank lines and
   lines starting with '#' are skipped, blanks around a value ignored. Each
   line is appended to *vals (malloc'd copies kept in *owned). */
static void read_values(const char *path, const char ***vals, size_t *nv, size_t *cap,
                        char ***owned, size_t *nown) {
  FILE *f = open_values(path);
  char *line = NULL;
  size_t lineno = 0, lcap = 0;
  ssize_t len;
  errno = 0;
  while ((len = getline(&line, &lcap, f)) >= 0) {
    char *b = line, *e;
    lineno++;
    if (memchr(line, '\0', (size_t)len))
      lowp_cli_die("convert", "%s line %zu: a NUL byte (not a text file?)", path, lineno);
    if ((size_t)len - (len && line[len - 1] == '\n') > 4094)
      lowp_cli_die("convert", "%s line %zu: longer than %d characters", path, lineno, 4094);
    while (*b && isspace((unsigned char)*b)) b++;
    e = b + strlen(b);
    while (e > b && isspace((unsigned char)e[-1])) *--e = '\0';
    if (!*b || *b == '#') continue;
    if (*nv == *cap) {
      const char **g = realloc((void *)*vals, (*cap = 2 * *cap + 16) * sizeof *g);
      char **h = realloc(*owned, *cap * sizeof *h);
      if (!g || !h) lowp_cli_die("convert", "out of memory");
      *vals = g;
      *owned = h;
    }
    (*owned)[(*nown)++] = strdup(b);
    if (!(*owned)[*nown - 1]) lowp_cli_die("convert", "out of memory");
    (*vals)[(*nv)++] = (*owned)[*nown - 1];
  }
  free(line);
  if (ferror(f))
    lowp_cli_die("convert", "%s: cannot read it (%s)", path, errno ? strerror(errno) : "read error");
  if (f != stdin) fclose(f);
}

/* a CSV field: quoted when it holds a comma, a quote or a blank */
static void csv_field(const char *v, int last) {
  if (strpbrk(v, ",\" \t")) {
    putchar('"');
    for (; *v; v++) {
      if (*v == '"') putchar('"');
      putchar(*v);
    }
    putchar('"');
  } else {
    fputs(v, stdout);
  }
  putchar(last ? '\n' : ',');
}

/* the results as CSV: one header row of the JSON keys, one row a result */
static void print_csv(const cJSON *res) {
  const cJSON *r, *it;
  char buf[64];
  int first = 1;
  cJSON_ArrayForEach(r, res) {
    if (first) {
      cJSON_ArrayForEach(it, r) csv_field(it->string, it->next == NULL);
      first = 0;
    }
    cJSON_ArrayForEach(it, r) {
      if (cJSON_IsNumber(it)) {
        /* the shortest of 15..17 digits that reads back to the same double */
        int d;
        for (d = 15; d <= 17; d++) {
          snprintf(buf, sizeof buf, "%.*g", d, it->valuedouble);
          if (strtod(buf, NULL) == it->valuedouble) break;
        }
      }
      else if (cJSON_IsBool(it)) snprintf(buf, sizeof buf, "%s", cJSON_IsTrue(it) ? "true" : "false");
      csv_field(cJSON_IsString(it) ? it->valuestring : buf, it->next == NULL);
    }
  }
}

int lowp_cmd_convert(int argc, char **argv) {
  opts_t o;
  size_t cap = (size_t)argc + 16, nv = 0, k, nown = 0;
  const char **vals = calloc(cap, sizeof *vals);
  char **owned = calloc(cap, sizeof *owned);
  const char *file = NULL;
  int i, have_to = 0, csv = 0;
  cJSON *root, *res;

  /* a block-scaled --to (mxfp8_e4m3, nvfp4, elem=..): tools/convert_block.c */
  for (i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--to") && (strstr(argv[i + 1], "elem=") || is_bsformat(argv[i + 1]))) {
      free(vals), free(owned);
      return lowp__convert_block(argc, argv);
    }
  memset(&o, 0, sizeof o);
  o.rnd = LOWP_RND_NE;
  if (!vals) lowp_cli_die("convert", "out of memory");
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); free(vals); free(owned); return LOWP_EXIT_OK; }
    else if (!strcmp(a, "--to")) {
      o.nto = lowp_cli_format_list("convert", lowp_cli_need_arg("convert", argc, argv, &i), o.to,
                                   MAX_FORMATS);
      have_to = 1;
    } else if (!strcmp(a, "--from")) {
      o.from = lowp_cli_format("convert", lowp_cli_need_arg("convert", argc, argv, &i));
      o.have_from = 1;
    } else if (!strcmp(a, "--round"))
      o.rnd = lowp_cli_rounding("convert", lowp_cli_need_arg("convert", argc, argv, &i));
    else if (!strcmp(a, "--sat")) o.pol.overflow = LOWP_OVF_SAT;
    else if (!strcmp(a, "--overflow")) {
      const char *v = lowp_cli_need_arg("convert", argc, argv, &i);
      if (!strcmp(v, "ieee")) o.pol.overflow = LOWP_OVF_IEEE;
      else if (!strcmp(v, "sat")) o.pol.overflow = LOWP_OVF_SAT;
      else if (!strcmp(v, "sat-keepinf")) o.pol.overflow = LOWP_OVF_SAT_KEEPINF;
      else if (!strcmp(v, "nan")) o.pol.overflow = LOWP_OVF_NAN;
      else lowp_cli_die("convert", "unknown overflow policy '%s'; accepted: ieee sat sat-keepinf nan", v);
    } else if (!strcmp(a, "--nan-sign")) {
      const char *v = lowp_cli_need_arg("convert", argc, argv, &i);
      if (!strcmp(v, "keep")) o.pol.nan_sign = LOWP_NANSIGN_KEEP;
      else if (!strcmp(v, "positive")) o.pol.nan_sign = LOWP_NANSIGN_POSITIVE;
      else lowp_cli_die("convert", "unknown --nan-sign '%s'; accepted: keep positive", v);
    } else if (!strcmp(a, "--nan-map")) {
      const char *v = lowp_cli_need_arg("convert", argc, argv, &i);
      if (!strcmp(v, "max")) o.pol.nan_map = LOWP_NANMAP_MAXPOS;
      else if (!strcmp(v, "zero")) o.pol.nan_map = LOWP_NANMAP_ZERO;
      else lowp_cli_die("convert", "unknown --nan-map '%s'; accepted: max zero", v);
    } else if (!strcmp(a, "--ftz")) o.pol.ftz = 1;
    else if (!strcmp(a, "--daz")) o.pol.daz = 1;
    else if (!strcmp(a, "--json")) o.json = 1;
    else if (!strcmp(a, "--csv")) csv = 1;
    else if (!strcmp(a, "--file")) {
      file = lowp_cli_need_arg("convert", argc, argv, &i);
    } else if (!strcmp(a, "-")) {
      if (file) lowp_cli_die("convert", "--file given twice (- is standard input)");
      file = "-";
    }
    else if (!strcmp(a, "--bits")) o.bits = 1;
    else if (!strcmp(a, "--scale-rule"))
      lowp_cli_die("convert", "--scale-rule needs a block-scaled --to (mxfp8_e4m3, nvfp4, ...)");
    else if (!strcmp(a, "--sr-bits"))
      o.pol.sr_bits =
          (int)lowp_cli_int("convert", "--sr-bits", lowp_cli_need_arg("convert", argc, argv, &i), 1, 32);
    else if (!strcmp(a, "--seed"))
      o.pol.sr_seed = (uint64_t)lowp_cli_int("convert", "--seed",
                                             lowp_cli_need_arg("convert", argc, argv, &i), 0, INT64_MAX);
    else if (a[0] == '-' && a[1] == '-')
      lowp_cli_die("convert", "unknown option '%s'; see lowp convert --help", a);
    else vals[nv++] = a;
  }
  if (!vals || !owned) lowp_cli_die("convert", "out of memory");
  if (csv && o.json) lowp_cli_die("convert", "give --csv or --json, not both");
  if (!have_to) { free(vals); lowp_cli_die("convert", "missing --to FORMAT[,FORMAT..]|all"); }
  if (file) read_values(file, &vals, &nv, &cap, &owned, &nown);
  if (nv == 0) { free(vals); lowp_cli_die("convert", "no values given"); }
  if (o.bits && !o.have_from) { free(vals); lowp_cli_die("convert", "--bits needs --from FORMAT"); }
  if (o.pol.daz && !o.have_from) {
    free(vals);
    lowp_cli_die("convert", "--daz needs --from FORMAT (it treats that format's subnormal inputs as zero)");
  }

  /* parse every value before printing anything: bad input leaves no output */
  root = cJSON_CreateObject();
  res = cJSON_AddArrayToObject(root, "results");
  convert_values(&o, vals, nv, res);
  if (o.json) {
    char *s;
    cJSON_AddStringToObject(root, "round", lowp_rounding_name(o.rnd));
    if (o.have_from) cJSON_AddStringToObject(root, "from", o.from.name);
    s = cJSON_Print(root);
    puts(s);
    free(s);
  } else if (csv) {
    print_csv(res);
  } else {
    print_text(res);
  }
  cJSON_Delete(root);
  for (k = 0; k < nown; k++) free(owned[k]);
  free(owned);
  free(vals);
  return LOWP_EXIT_OK;
}
