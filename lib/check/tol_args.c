/* lowp_tol_args -- lowp tol's command line as a lowp_capi_tol query (lib/check/capi.h) */

#include "check/capi.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "format/number.h"
#include "status.h"
#include "io/escape.h"

static int no(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int no(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  if (err && errlen) {
    va_start(ap, fmt);
    lowp_verrf(err, errlen, 0, fmt, ap);
    va_end(ap);
  }
  return LOWP_EPARSE;
}

/* the options, in the order of the bits of `seen` */
static const char *const options[] = {"--json",   "--k",      "--input", "--acc",
                                      "--out",    "--method", "--confidence", "--scale",
                                      "--compute", "--a",     "--b",     "--save-atol",
                                      "--risk",   "--numel",  NULL};

/* argv[*i] as option key: its value (--key value or --key=value), or NULL
   when argv[*i] is another option; *bad set when the value is missing */
static const char *value(int argc, char *const *argv, int *i, const char *key, int *bad) {
  size_t n = strlen(key);
  const char *a = argv[*i];
  if (strncmp(a, key, n)) return NULL;
  if (a[n] == '=') return a + n + 1;
  if (a[n] != '\0') return NULL;
  if (*i + 1 >= argc) {
    *bad = 1;
    return NULL;
  }
  return argv[++*i];
}

static int add_number(cJSON *q, const char *key, double v) {
  return cJSON_AddNumberToObject(q, key, v) ? LOWP_OK : LOWP_ENOMEM;
}

static int add_string(cJSON *q, const char *key, const char *v) {
  return cJSON_AddStringToObject(q, key, v) ? LOWP_OK : LOWP_ENOMEM;
}

/* one option's value into the query; numbers read with the one grammar of
   format/number.h */
static int option(cJSON *q, int b, const char *v, char *err, size_t errlen) {
  double x;
  long long k;
  int st;
  switch (b) {
  case 1:
    st = lowp_parse_int(&k, v, 1, 1LL << 40);
    if (st == LOWP_EPARSE)
      return no(err, errlen, "malformed --k '%s': expected an integer (decimal or 0x hex)", v);
    if (st) return no(err, errlen, "--k %s out of range [1, %lld]", v, 1LL << 40);
    return add_number(q, "k", (double)k);
  case 6:
    if (!strcmp(v, "worst")) return add_string(q, "confidence", "worst");
    if (lowp_parse_f64(&x, v))
      return no(err, errlen, "malformed --confidence '%s': expected a decimal (1e-6), a hex "
                "float (0x1.8p-3), inf or nan", v);
    if (!(x > 0 && x < 1))
      return no(err, errlen, "--confidence must lie in (0, 1) or be 'worst', not %s", v);
    return add_number(q, "confidence", x);
  case 7:
    if (lowp_parse_f64(&x, v))
      return no(err, errlen, "malformed --scale '%s': expected a decimal (1e-6), a hex float "
                "(0x1.8p-3), inf or nan", v);
    if (!(x > 0) || !isfinite(x))
      return no(err, errlen, "--scale must be a finite number > 0, not %s", v);
    return add_number(q, "scale", x);
  case 9: /* the data-aware tolerance's files: the caller takes them out */
  case 10:
    return add_string(q, options[b] + 2, v);
  case 11:
    return add_string(q, "save_atol", v);
  case 12:
    if (lowp_parse_f64(&x, v))
      return no(err, errlen, "malformed --risk '%s': expected a decimal (1e-6) or a hex float", v);
    if (!(x > 0 && x < 1)) return no(err, errlen, "--risk must lie in (0, 1), not %s", v);
    return add_number(q, "risk", x);
  case 13:
    st = lowp_parse_int(&k, v, 1, 1LL << 50);
    if (st == LOWP_EPARSE)
      return no(err, errlen, "malformed --numel '%s': expected an integer (decimal or 0x hex)", v);
    if (st) return no(err, errlen, "--numel %s out of range [1, %lld]", v, 1LL << 50);
    return add_number(q, "numel", (double)k);
  default:
    return add_string(q, options[b] + 2, v);
  }
}

int lowp_tol_args(cJSON **query, int *as_json, int *help, int argc, char *const *argv,
                  char *err, size_t errlen) {
  cJSON *q;
  unsigned seen = 0;
  int i, have_op = 0, st = LOWP_OK;
  if (err && errlen) err[0] = '\0';
  if (!query || !as_json || !help || (argc > 0 && !argv)) return LOWP_EINVAL;
  *query = NULL;
  *as_json = *help = 0;
  if (!(q = cJSON_CreateObject())) return LOWP_ENOMEM;
  for (i = 1; i < argc && !st; i++) {
    const char *a = argv[i], *v = NULL;
    int b, missing = 0;
    if (!a) { st = LOWP_EINVAL; break; }
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      *help = 1;
      break;
    }
    for (b = 0; options[b]; b++) {
      if (b == 0 ? !strcmp(a, "--json") : (v = value(argc, argv, &i, options[b], &missing)) != NULL)
        break;
      if (missing) break;
    }
    if (missing) {
      st = no(err, errlen, "option %s needs an argument", options[b]);
    } else if (options[b]) {
      /* an option given twice is refused (--k 64 --k 65: which one?), in
         either spelling */
      if (seen & (1u << b)) st = no(err, errlen, "option %s given twice", options[b]);
      seen |= 1u << b;
      if (!st && b == 0) *as_json = 1;
      else if (!st) st = option(q, b, v, err, errlen);
    } else if (a[0] == '-' && a[1] != '\0') {
      st = no(err, errlen, "unknown option '%s' (see lowp tol --help)", a);
    } else if (have_op) {
      st = no(err, errlen, "one operation at a time ('%s')", a);
    } else {
      st = add_string(q, "op", a);
      have_op = 1;
    }
  }
  if (!st && !*help && !have_op)
    st = no(err, errlen, "give an operation (e.g. lowp tol dot --k 1024); see lowp tol --help");
  /* the data-aware tolerance (--a, --b) takes k from the inputs' shapes */
  if (!st && !*help && (seen & (1u << 10)) && !(seen & (1u << 9)))
    st = no(err, errlen, "--b needs --a");
  if (!st && !*help && (seen & (1u << 11)) && !(seen & (1u << 9)))
    st = no(err, errlen, "--save-atol needs the inputs (--a, --b)");
  if (!st && !*help && !(seen & 2u)) {
    if (seen & (1u << 9)) st = add_number(q, "k", 1);
    else st = no(err, errlen, "give the reduction length --k (or the inputs --a, --b)");
  }
  if (st) {
    cJSON_Delete(q);
    return st;
  }
  *query = q;
  return LOWP_OK;
}
