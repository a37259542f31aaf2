/* lowp_spec -- strict parser of lowp check specs (lib/check/spec.h) */

#define _POSIX_C_SOURCE 200809L /* strdup, getcwd */

#include "check/spec.h"
#include "measure/fpx.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/number.h"
#include "model/accum.h"
#include "io/escape.h"
#include "status.h"

/* ------------------------------------------------------- private helpers */

typedef struct {
  char *err;
  size_t errlen;
  char where[320];   /* "check 'x' (checks[3]): " or "spec: " */
  const char *dir;
} ctx_t;

static int fail(ctx_t *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int fail(ctx_t *c, const char *fmt, ...) {
  va_list ap;
  size_t n;
  if (c->err && c->errlen) {
    char raw[1024];
    n = (size_t)snprintf(raw, sizeof raw, "%s", c->where);
    if (n < sizeof raw) {
      va_start(ap, fmt);
      vsnprintf(raw + n, sizeof raw - n, fmt, ap);
      va_end(ap);
    }
    /* keys, names and values come from the user's file: the message stays
       one line, with no terminal control sequence in it */
    lowp_escape_ctl(c->err, c->errlen, raw);
  }
  return LOWP_EPARSE;
}

static char *dupstr(const char *s) {
  return s ? strdup(s) : NULL;
}

static const char *type_name(const cJSON *j) {
  if (cJSON_IsString(j)) return "a string";
  if (cJSON_IsNumber(j)) return "a number";
  if (cJSON_IsBool(j)) return "a boolean";
  if (cJSON_IsNull(j)) return "null";
  if (cJSON_IsArray(j)) return "an array";
  if (cJSON_IsObject(j)) return "an object";
  return "invalid";
}

/* every key of obj must be in allowed (NULL-terminated), or "comment" (a
   string); no key twice */
static int check_keys(ctx_t *c, const cJSON *obj, const char *what, const char *const *allowed) {
  const cJSON *it, *jt;
  for (it = obj->child; it; it = it->next) {
    int ok = 0, i;
    for (jt = obj->child; jt != it; jt = jt->next)
      if (!strcmp(jt->string, it->string))
        return fail(c, "%sduplicate key '%s'", what, it->string);
    if (!strcmp(it->string, "comment")) {
      if (!cJSON_IsString(it)) return fail(c, "%s\"comment\" must be a string", what);
      continue;
    }
    for (i = 0; allowed[i]; i++)
      if (!strcmp(allowed[i], it->string)) ok = 1;
    if (!ok) {
      char list[400];
      size_t u = 0;
      list[0] = '\0';
      for (i = 0; allowed[i] && u < sizeof list; i++)
        u += (size_t)snprintf(list + u, sizeof list - u, "%s%s", i ? ", " : "", allowed[i]);
      return fail(c, "%sunknown key '%s' (expected: %s)", what, it->string, list);
    }
  }
  return LOWP_OK;
}

static int get_string(ctx_t *c, const cJSON *j, const char *what, const char **out) {
  if (!cJSON_IsString(j) || !j->valuestring)
    return fail(c, "%s must be a string, not %s", what, type_name(j));
  if (!j->valuestring[0]) return fail(c, "%s must not be empty", what);
  *out = j->valuestring;
  return LOWP_OK;
}

static int get_number(ctx_t *c, const cJSON *j, const char *what, double lo, double *out) {
  if (!cJSON_IsNumber(j)) return fail(c, "%s must be a number, not %s", what, type_name(j));
  if (!isfinite(j->valuedouble) || j->valuedouble < lo)
    return fail(c, "%s must be a finite number >= %g, not %g", what, lo, j->valuedouble);
  *out = j->valuedouble;
  return LOWP_OK;
}

static int get_uint(ctx_t *c, const cJSON *j, const char *what, double lo, double hi,
                    uint64_t *out) {
  double v;
  if (!cJSON_IsNumber(j)) return fail(c, "%s must be an integer, not %s", what, type_name(j));
  v = j->valuedouble;
  if (!isfinite(v) || v != floor(v) || v < lo || v > hi)
    return fail(c, "%s must be an integer in [%.0f, %.0f], not %g", what, lo, hi, v);
  *out = (uint64_t)v;
  return LOWP_OK;
}

static int get_format(ctx_t *c, const cJSON *j, const char *what, lowp_format_t *f) {
  const char *s = NULL;
  char e[200];
  int st = get_string(c, j, what, &s);
  if (st) return st;
  if (lowp_format_parse(f, s, e, sizeof e) != LOWP_OK)
    return fail(c, "%s: unknown format '%s' (%s)", what, s, e);
  return LOWP_OK;
}

/* an input format: a lowp format, or a block-scaled one ("mxfp8_e4m3",
   "int8_b32:absmax", "elem=..,scale=..,block=.."): the input is then fp32
   data quantized by the format's rule (lowp_problem_t.bin) */
static int get_in_format(ctx_t *c, const cJSON *j, const char *what, lowp_spec_check_t *ck, int i) {
  const char *s = NULL;
  char e[256];
  int st = get_string(c, j, what, &s);
  if (st) return st;
  ck->has_bin[i] = 0;
  if (lowp_bsformat_parse(&ck->bin[i], s, e, sizeof e) == LOWP_OK) {
    ck->has_bin[i] = 1;
    ck->in[i] = LOWP_FMT_FP32;
    return LOWP_OK;
  }
  if (strstr(s, "elem=") || strchr(s, ':')) return fail(c, "%s: %s", what, e);
  return get_format(c, j, what, &ck->in[i]);
}

static char *resolve(ctx_t *c, const char *path) {
  size_t n;
  char *r;
  if (path[0] == '/' || !c->dir || !c->dir[0]) return strdup(path);
  n = strlen(c->dir) + strlen(path) + 2;
  r = malloc(n);
  if (r) snprintf(r, n, "%s/%s", c->dir, path);
  return r;
}

/* ------------------------------------------------------- files, subjects */

/* an object's "path" (resolved) and optional "tensor" */
static int get_path_tensor(ctx_t *c, const cJSON *j, const char *what, char **path, char **tensor) {
  const char *s = NULL;
  char w[200];
  int st;
  if (!cJSON_GetObjectItemCaseSensitive(j, "path")) return fail(c, "%s: \"path\" is missing", what);
  snprintf(w, sizeof w, "%s \"path\"", what);
  if ((st = get_string(c, cJSON_GetObjectItemCaseSensitive(j, "path"), w, &s))) return st;
  if (!(*path = resolve(c, s))) return LOWP_ENOMEM;
  if (cJSON_GetObjectItemCaseSensitive(j, "tensor")) {
    snprintf(w, sizeof w, "%s \"tensor\"", what);
    if ((st = get_string(c, cJSON_GetObjectItemCaseSensitive(j, "tensor"), w, &s))) return st;
    if (!(*tensor = dupstr(s))) return LOWP_ENOMEM;
  }
  return LOWP_OK;
}

/* {"path": P[, "tensor": T]} or a path: a companion tensor's reference */
static int parse_ref(ctx_t *c, const cJSON *j, const char *what, char **path, char **tensor) {
  static const char *const keys[] = {"path", "tensor", NULL};
  const char *s = NULL;
  char w[200];
  int st;
  if (cJSON_IsString(j)) {
    if ((st = get_string(c, j, what, &s))) return st;
    *path = resolve(c, s);
    return *path ? LOWP_OK : LOWP_ENOMEM;
  }
  if (!cJSON_IsObject(j))
    return fail(c, "%s must be a path or {\"path\": ..., \"tensor\": ...}, not %s", what, type_name(j));
  snprintf(w, sizeof w, "%s: ", what);
  if ((st = check_keys(c, j, w, keys))) return st;
  return get_path_tensor(c, j, what, path, tensor);
}

/* a block-scaled input's keys: "scales", "tensor_scale", "scale_layout" */
static int parse_file_bs(ctx_t *c, const cJSON *j, const char *what, lowp_spec_file_t *f) {
  const cJSON *it;
  char w[200];
  int st;
  if ((it = cJSON_GetObjectItemCaseSensitive(j, "scales"))) {
    snprintf(w, sizeof w, "%s \"scales\"", what);
    if ((st = parse_ref(c, it, w, &f->scales_path, &f->scales_tensor))) return st;
  }
  if ((it = cJSON_GetObjectItemCaseSensitive(j, "tensor_scale"))) {
    snprintf(w, sizeof w, "%s \"tensor_scale\"", what);
    if (cJSON_IsNumber(it)) {
      if (!(it->valuedouble > 0) || !isfinite(it->valuedouble) || (double)(float)it->valuedouble != it->valuedouble)
        return fail(c, "%s must be a positive finite fp32 number, not %.17g", w, it->valuedouble);
      f->tensor_scale = it->valuedouble;
    } else if ((st = parse_ref(c, it, w, &f->ts_path, &f->ts_tensor))) return st;
  }
  if ((it = cJSON_GetObjectItemCaseSensitive(j, "scale_layout"))) {
    lowp_bslayout_t l;
    const char *s = NULL;
    snprintf(w, sizeof w, "%s \"scale_layout\"", what);
    if ((st = get_string(c, it, w, &s))) return st;
    if (lowp_bslayout_parse(&l, s)) return fail(c, "%s: '%s' is not a layout (compact, 128x4)", w, s);
    f->scale_layout = (int)l;
  }
  if (!f->scales_path && (f->ts_path || f->tensor_scale > 0 || cJSON_GetObjectItemCaseSensitive(j, "scale_layout")))
    return fail(c, "%s: \"tensor_scale\" and \"scale_layout\" go with \"scales\", the companion scale tensor",
                what);
  return LOWP_OK;
}

/* bs: an input of saved tensors, which may name companion scales */
static int parse_file(ctx_t *c, const cJSON *j, const char *what, lowp_spec_file_t *f, int bs) {
  static const char *const keys[] = {"path", "tensor", "format", NULL};
  static const char *const keys_bs[] = {"path", "tensor", "format", "scales", "tensor_scale", "scale_layout",
                                        NULL};
  const char *s = NULL;
  char w[200];
  int st;
  memset(f, 0, sizeof *f);
  if (cJSON_IsString(j)) {
    if ((st = get_string(c, j, what, &s))) return st;
    f->path = resolve(c, s);
    return f->path ? LOWP_OK : LOWP_ENOMEM;
  }
  if (!cJSON_IsObject(j))
    return fail(c, "%s must be a path or {\"path\": ...}, not %s", what, type_name(j));
  snprintf(w, sizeof w, "%s: ", what);
  if ((st = check_keys(c, j, w, bs ? keys_bs : keys))) return st;
  if ((st = get_path_tensor(c, j, what, &f->path, &f->tensor))) return st;
  if (cJSON_GetObjectItemCaseSensitive(j, "format")) {
    lowp_format_t fm;
    snprintf(w, sizeof w, "%s \"format\"", what);
    if ((st = get_format(c, cJSON_GetObjectItemCaseSensitive(j, "format"), w, &fm))) return st;
    f->format = dupstr(cJSON_GetObjectItemCaseSensitive(j, "format")->valuestring);
  }
  return bs ? parse_file_bs(c, j, what, f) : LOWP_OK;
}

static void free_file(lowp_spec_file_t *f) {
  free(f->path);
  free(f->tensor);
  free(f->format);
  free(f->scales_path);
  free(f->scales_tensor);
  free(f->ts_path);
  free(f->ts_tensor);
}

static int parse_files(ctx_t *c, const cJSON *j, const char *what, lowp_spec_file_t **out,
                       int *n, int bs) {
  const cJSON *e;
  int i, st, cnt;
  char w[160];
  if (!cJSON_IsArray(j)) return fail(c, "%s must be an array of files, not %s", what, type_name(j));
  cnt = cJSON_GetArraySize(j);
  if (cnt < 1 || cnt > LOWP_OP_MAXIO)
    return fail(c, "%s must list 1 to %d files, not %d", what, LOWP_OP_MAXIO, cnt);
  *out = calloc((size_t)cnt, sizeof **out);
  if (!*out) return LOWP_ENOMEM;
  *n = cnt;
  for (i = 0, e = j->child; e && i < cnt; i++, e = e->next) {
    snprintf(w, sizeof w, "%s[%d]", what, i);
    if ((st = parse_file(c, e, w, &(*out)[i], bs))) return st;
  }
  return LOWP_OK;
}

static void free_subject(lowp_spec_subject_t *s) {
  int i;
  free(s->kernel);
  free(s->params);
  free(s->plugin);
  for (i = 0; i < s->n_inputs; i++) free_file(&s->inputs[i]);
  for (i = 0; i < s->n_outputs; i++) free_file(&s->outputs[i]);
  free(s->inputs);
  free(s->outputs);
  memset(s, 0, sizeof *s);
}

/* "params": a string "k=v,..." or an object {"k": "v" | number} */
static int parse_params(ctx_t *c, const cJSON *j, const char *what, char **out) {
  const cJSON *it;
  char buf[1024];
  size_t u = 0;
  if (cJSON_IsString(j)) {
    *out = dupstr(j->valuestring);
    return *out ? LOWP_OK : LOWP_ENOMEM;
  }
  if (!cJSON_IsObject(j))
    return fail(c, "%s \"params\" must be a string \"key=value,...\" or an object, not %s", what,
                type_name(j));
  buf[0] = '\0';
  for (it = j->child; it; it = it->next) {
    const cJSON *jt;
    for (jt = j->child; jt != it; jt = jt->next)
      if (!strcmp(jt->string, it->string))
        return fail(c, "%s \"params\": duplicate key '%s'", what, it->string);
    if (cJSON_IsString(it))
      u += (size_t)snprintf(buf + u, sizeof buf - u, "%s%s=%s", u ? "," : "", it->string,
                            it->valuestring);
    else if (cJSON_IsNumber(it) && isfinite(it->valuedouble))
      u += (size_t)snprintf(buf + u, sizeof buf - u, "%s%s=%.17g", u ? "," : "", it->string,
                            it->valuedouble);
    else
      return fail(c, "%s \"params\": '%s' must be a string or a number, not %s", what,
                  it->string, type_name(it));
    if (u >= sizeof buf) return fail(c, "%s \"params\" is too long", what);
  }
  *out = strdup(buf);
  return *out ? LOWP_OK : LOWP_ENOMEM;
}

/* a plugin subject's "timeout": seconds for each call (and the load), > 0
   and at most 1e9; absent: 0 (LOWP_PLUGIN_TIMEOUT or 600 s) */
static int parse_timeout(ctx_t *c, const cJSON *j, const char *what, double *out) {
  *out = 0;
  if (!j) return LOWP_OK;
  if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble) || !(j->valuedouble > 0) ||
      j->valuedouble > 1e9)
    return fail(c, "%s \"timeout\" must be a number of seconds > 0 and at most 1e9", what);
  *out = j->valuedouble;
  return LOWP_OK;
}

static int parse_subject(ctx_t *c, const cJSON *j, const char *what, int allow_tensors,
                         lowp_spec_subject_t *s) {
  static const char *const k_kernel[] = {"kernel", "params", NULL};
  static const char *const k_plugin[] = {"plugin", "kernel", "timeout", NULL};
  static const char *const k_tensors[] = {"tensors", NULL};
  static const char *const k_tio[] = {"inputs", "outputs", NULL};
  const char *str = NULL;
  char w[200];
  int st;
  memset(s, 0, sizeof *s);
  if (!cJSON_IsObject(j)) return fail(c, "%s must be an object, not %s", what, type_name(j));
  snprintf(w, sizeof w, "%s: ", what);
  if (cJSON_GetObjectItemCaseSensitive(j, "plugin")) {
    s->kind = LOWP_SPEC_PLUGIN;
    if ((st = check_keys(c, j, w, k_plugin))) return st;
    snprintf(w, sizeof w, "%s \"plugin\"", what);
    if ((st = get_string(c, cJSON_GetObjectItemCaseSensitive(j, "plugin"), w, &str))) return st;
    s->plugin = resolve(c, str);
    if (cJSON_GetObjectItemCaseSensitive(j, "kernel")) {
      snprintf(w, sizeof w, "%s \"kernel\"", what);
      if ((st = get_string(c, cJSON_GetObjectItemCaseSensitive(j, "kernel"), w, &str))) return st;
      s->kernel = dupstr(str);
    }
    return parse_timeout(c, cJSON_GetObjectItemCaseSensitive(j, "timeout"), what, &s->timeout);
  }
  if (cJSON_GetObjectItemCaseSensitive(j, "tensors")) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "tensors");
    if (!allow_tensors) return fail(c, "%s: saved tensors cannot be a reference subject", what);
    s->kind = LOWP_SPEC_TENSORS;
    if ((st = check_keys(c, j, w, k_tensors))) return st;
    if (!cJSON_IsObject(t))
      return fail(c, "%s \"tensors\" must be an object {\"inputs\": [...], \"outputs\": [...]}",
                  what);
    snprintf(w, sizeof w, "%s \"tensors\": ", what);
    if ((st = check_keys(c, t, w, k_tio))) return st;
    if (!cJSON_GetObjectItemCaseSensitive(t, "inputs") ||
        !cJSON_GetObjectItemCaseSensitive(t, "outputs"))
      return fail(c, "%s \"tensors\" needs \"inputs\" and \"outputs\"", what);
    snprintf(w, sizeof w, "%s tensors.inputs", what);
    if ((st = parse_files(c, cJSON_GetObjectItemCaseSensitive(t, "inputs"), w, &s->inputs,
                          &s->n_inputs, 1)))
      return st;
    snprintf(w, sizeof w, "%s tensors.outputs", what);
    return parse_files(c, cJSON_GetObjectItemCaseSensitive(t, "outputs"), w, &s->outputs,
                       &s->n_outputs, 0);
  }
  if (cJSON_GetObjectItemCaseSensitive(j, "kernel")) {
    s->kind = LOWP_SPEC_KERNEL;
    if ((st = check_keys(c, j, w, k_kernel))) return st;
    snprintf(w, sizeof w, "%s \"kernel\"", what);
    if ((st = get_string(c, cJSON_GetObjectItemCaseSensitive(j, "kernel"), w, &str))) return st;
    s->kernel = dupstr(str);
    if (cJSON_GetObjectItemCaseSensitive(j, "params"))
      return parse_params(c, cJSON_GetObjectItemCaseSensitive(j, "params"), what, &s->params);
    return LOWP_OK;
  }
  return fail(c, "%s needs one of \"kernel\", \"plugin\"%s", what,
              allow_tensors ? " or \"tensors\"" : "");
}

/* ------------------------------------------------------------------ rules */

static const char *const rule_names[] = {"max_ulp", "bound", "vs_reference", "rtol", "atol",
                                         "assert_close", "baseline", "nan_inf", "bitexact",
                                         "sqnr_db", "cosine", "mismatch", "in_format",
                                         "no_exceptions", "vs_twin",
                                         NULL};

/* {"no_exceptions": [KIND, ...]}: kinds or groups of measure/fpx.h */
static int parse_rule_fpx(ctx_t *c, const cJSON *j, const char *w, lowp_rule_t *ru) {
  static const char *const keys[] = {"no_exceptions", NULL};
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, "no_exceptions"), *it;
  int st;
  if ((st = check_keys(c, j, w, keys))) return st;
  if (!cJSON_IsArray(x) || !x->child)
    return fail(c, "%s\"no_exceptions\" must be a non-empty list of kinds", w);
  ru->kind = LOWP_RULE_NO_EXC;
  cJSON_ArrayForEach(it, x) {
    unsigned m = cJSON_IsString(it) ? lowp_fpx_mask_parse(it->valuestring) : 0;
    if (!m)
      return fail(c, "%sunknown exception kind %s (invalid, nan_propagated, divzero, "
                  "overflow_inf, overflow_nan, saturation, underflow_subnormal, "
                  "underflow_zero, scale; groups overflow, underflow, nan, all)", w,
                  cJSON_IsString(it) ? it->valuestring : "(not a string)");
    ru->fpx_mask |= m;
  }
  return LOWP_OK;
}

/* the rules the field uses: {"sqnr_db": D}, {"cosine": C}, and {"mismatch":
   N or "F%", "rtol": R, "atol": A} or with "assert_close": "pytorch" */
static int parse_rule_field(ctx_t *c, const cJSON *j, int i, lowp_rule_t *ru) {
  char w[64];
  const cJSON *x;
  int st;
  snprintf(w, sizeof w, "rule %d: ", i + 1);
#define ITEM(key) cJSON_GetObjectItemCaseSensitive(j, key)
  if (ITEM("sqnr_db") || ITEM("cosine")) {
    static const char *const ks[] = {"sqnr_db", NULL};
    static const char *const kc[] = {"cosine", NULL};
    int sq = ITEM("sqnr_db") != NULL;
    if ((st = check_keys(c, j, w, sq ? ks : kc))) return st;
    ru->kind = sq ? LOWP_RULE_SQNR : LOWP_RULE_COSINE;
    x = ITEM(sq ? "sqnr_db" : "cosine");
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble))
      return fail(c, "%s\"%s\" must be a finite number, not %s", w, sq ? "sqnr_db" : "cosine",
                  type_name(x));
    ru->limit = x->valuedouble;
    if (!sq && !(ru->limit >= -1 && ru->limit <= 1))
      return fail(c, "%s\"cosine\" must lie in [-1, 1], not %g", w, ru->limit);
    return LOWP_OK;
  }
  {
    static const char *const km[] = {"mismatch", "rtol", "atol", "assert_close", NULL};
    if ((st = check_keys(c, j, w, km))) return st;
    ru->kind = LOWP_RULE_MISMATCH;
    x = ITEM("mismatch");
    if (cJSON_IsString(x)) {
      double f = -1;
      if (lowp_parse_percent(&f, x->valuestring) || !(f >= 0 && f <= 100))
        return fail(c, "%s\"mismatch\" '%s': a count or a percentage like \"0.1%%\"", w,
                    x->valuestring);
      ru->limit = f / 100;
      ru->fraction = 1;
    } else if ((st = get_number(c, x, "\"mismatch\"", 0, &ru->limit))) {
      return st;
    }
    if (ITEM("assert_close")) {
      const char *s = NULL;
      if (ITEM("rtol") || ITEM("atol"))
        return fail(c, "%s\"assert_close\" or \"rtol\"/\"atol\", not both", w);
      if ((st = get_string(c, ITEM("assert_close"), "\"assert_close\"", &s))) return st;
      if (strcmp(s, "pytorch"))
        return fail(c, "%sunknown assert_close defaults '%s' (pytorch)", w, s);
      ru->pytorch = 1;
      return LOWP_OK;
    }
    if (!ITEM("rtol") && !ITEM("atol"))
      return fail(c, "%s\"mismatch\" needs \"rtol\"/\"atol\" or \"assert_close\": \"pytorch\"", w);
    if (ITEM("rtol") && (st = get_number(c, ITEM("rtol"), "\"rtol\"", 0, &ru->rtol))) return st;
    if (ITEM("atol") && (st = get_number(c, ITEM("atol"), "\"atol\"", 0, &ru->atol))) return st;
    return LOWP_OK;
  }
#undef ITEM
}

#define ITEM(key) cJSON_GetObjectItemCaseSensitive(j, key)
/* {"bound": "gamma"|"prob"|"model", ...}: the order or tree, the model */
static int parse_rule_bound(ctx_t *c, const cJSON *j, int i, const char *w, const lowp_spec_check_t *ck,
                           lowp_spec_rule_t *r) {
  char e[200];
  const char *s = NULL;
  int st;
  lowp_rule_t *ru = &r->rule;
  (void)i, (void)ck;
  static const char *const keys[] = {"bound", "fraction", "prob", "order", "acc", "model",
                                     "accept_vacuous", NULL};
  if ((st = check_keys(c, j, w, keys))) return st;
  ru->kind = LOWP_RULE_BOUND;
  ru->limit = 1;
  if ((st = get_string(c, ITEM("bound"), "\"bound\"", &s))) return st;
  if (!strcmp(s, "gamma")) ru->bound = LOWP_BOUND_GAMMA;
  else if (!strcmp(s, "prob")) ru->bound = LOWP_BOUND_PROB;
  else if (!strcmp(s, "model")) ru->bound = LOWP_BOUND_MODEL;
  else return fail(c, "%sunknown bound '%s' (gamma, prob, model)", w, s);
  if (ITEM("fraction") && (st = get_number(c, ITEM("fraction"), "\"fraction\"", 0, &ru->limit)))
    return st;
  if (ITEM("prob")) {
    if ((st = get_number(c, ITEM("prob"), "\"prob\"", 0, &ru->prob))) return st;
    if (!(ru->prob > 0 && ru->prob < 1)) return fail(c, "%s\"prob\" must lie in (0, 1)", w);
  }
  if ((ITEM("order") || ITEM("acc")) && ru->bound == LOWP_BOUND_MODEL)
    return fail(c, "%sa model bound takes \"model\", not \"order\"/\"acc\"", w);
  if (ITEM("model") && ru->bound != LOWP_BOUND_MODEL)
    return fail(c, "%s\"model\" belongs to {\"bound\": \"model\"}", w);
  if (ITEM("order") && (cJSON_IsObject(ITEM("order")) ||
                        (cJSON_IsString(ITEM("order")) && !strcmp(ITEM("order")->valuestring, "revealed")))) {
    /* the kernel's own tree: revealed now, or from a file (tools/ resolve it) */
    const cJSON *o = ITEM("order"), *f = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "tree") : NULL;
    if (ru->bound != LOWP_BOUND_GAMMA)
      return fail(c, "%sa revealed or given tree bounds \"bound\": \"gamma\" only", w);
    if (cJSON_IsObject(o) && (cJSON_GetArraySize(o) != 1 || !cJSON_IsString(f) || !f->valuestring[0]))
      return fail(c, "%s\"order\" as an object is {\"tree\": \"FILE\"} (lowp reveal --save FILE)", w);
    r->tree = f ? resolve(c, f->valuestring) : dupstr("revealed"); /* relative to the spec's folder */
    if (!r->tree) return fail(c, "%sout of memory", w);
    ru->accum.acc = LOWP_FMT_FP32;
    if (ITEM("acc") && (st = get_format(c, ITEM("acc"), "\"acc\"", &ru->accum.acc))) return st;
    ru->has_tree = 1;
  } else if (ITEM("order") || ITEM("acc")) {
    const char *os = "recursive";
    lowp_format_t acc;
    if (ITEM("order") && (st = get_string(c, ITEM("order"), "\"order\"", &os))) return st;
    if (lowp_accum_parse(&ru->accum, os, e, sizeof e))
      return fail(c, "%s\"order\" %s: %s", w, os, e);
    if (ITEM("acc")) {
      if ((st = get_format(c, ITEM("acc"), "\"acc\"", &acc))) return st;
      ru->accum.acc = acc;
    } else if (ck->has_out) {
      ru->accum.acc = ck->out;
    }
    if (lowp_accum_validate(&ru->accum, e, sizeof e))
      return fail(c, "%s\"order\" %s: %s", w, os, e);
    ru->has_accum = 1;
    ru->accum_given = (ITEM("order") ? 1 : 0) | (ITEM("acc") ? 2 : 0);
  }
  if (ITEM("model")) {
    if ((st = get_string(c, ITEM("model"), "\"model\"", &s))) return st;
    r->model = dupstr(s);
  }
  if (ITEM("accept_vacuous")) {
    if (!cJSON_IsBool(ITEM("accept_vacuous")))
      return fail(c, "%s\"accept_vacuous\" must be true or false", w);
    ru->vacuous_ok = cJSON_IsTrue(ITEM("accept_vacuous"));
  }
  return LOWP_OK;
}

/* {"vs_twin": true, "order": ..., "acc": F} and {"bitexact": "twin", ...}:
   bit for bit against the twin of a tree: "revealed" (the default), {"tree":
   FILE}, or a named order with "acc" (default the check's "out", else fp32) */
static int parse_rule_twin(ctx_t *c, const cJSON *j, const char *w0, const lowp_spec_check_t *ck,
                           lowp_spec_rule_t *r) {
  static const char *const kv[] = {"vs_twin", "order", "acc", NULL};
  static const char *const kb[] = {"bitexact", "order", "acc", NULL};
  const cJSON *o = ITEM("order"), *f = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "tree") : NULL;
  int vs = ITEM("vs_twin") != NULL, st;
  char e[200];
  if ((st = check_keys(c, j, w0, vs ? kv : kb))) return st;
  if (vs && !cJSON_IsTrue(ITEM("vs_twin")))
    return fail(c, "%s\"vs_twin\" must be true (leave the rule out to compare with no twin)", w0);
  r->rule.kind = LOWP_RULE_BITEXACT;
  r->twin = 1;
  r->rule.accum.acc = ck->has_out ? ck->out : LOWP_FMT_FP32;
  if (ITEM("acc") && (st = get_format(c, ITEM("acc"), "\"acc\"", &r->rule.accum.acc))) return st;
  if (!o || (cJSON_IsString(o) && !strcmp(o->valuestring, "revealed")) || cJSON_IsObject(o)) {
    if (cJSON_IsObject(o) && (cJSON_GetArraySize(o) != 1 || !cJSON_IsString(f) || !f->valuestring[0]))
      return fail(c, "%s\"order\" as an object is {\"tree\": \"FILE\"} (lowp reveal --save FILE)", w0);
    if (ITEM("acc")) return fail(c, "%s\"acc\" goes with a named order; a revealed or given tree has its own arithmetic", w0);
    if (!(r->tree = f ? resolve(c, f->valuestring) : dupstr("revealed"))) return fail(c, "%sout of memory", w0);
    return LOWP_OK;
  }
  {
    const char *os = NULL;
    lowp_format_t acc = r->rule.accum.acc;
    if ((st = get_string(c, o, "\"order\"", &os))) return st;
    if (lowp_accum_parse(&r->rule.accum, os, e, sizeof e)) return fail(c, "%s\"order\" %s: %s", w0, os, e);
    r->rule.accum.acc = acc;
    if (lowp_accum_validate(&r->rule.accum, e, sizeof e)) return fail(c, "%s\"order\" %s: %s", w0, os, e);
    if (r->rule.accum.order == LOWP_ACC_KAHAN)
      return fail(c, "%s\"order\" kahan has no twin tree (its correction term makes a DAG)", w0);
    r->rule.has_accum = 1;
  }
  return LOWP_OK;
}

/* {"vs_reference": SUBJECT, ...} and {"bitexact": SUBJECT} */
static int parse_rule_ref(ctx_t *c, const cJSON *j, int i, const char *w0, const lowp_spec_check_t *ck,
                           lowp_spec_rule_t *r) {
  char w[64];
  const char *s = NULL;
  int st;
  lowp_rule_t *ru = &r->rule;
  (void)ck;
  static const char *const kv[] = {"vs_reference", "factor", "metric", "floor", NULL};
  static const char *const kb[] = {"bitexact", NULL};
  int vs = ITEM("vs_reference") != NULL;
  if ((st = check_keys(c, j, w0, vs ? kv : kb))) return st;
  ru->kind = vs ? LOWP_RULE_VS_REF : LOWP_RULE_BITEXACT;
  ru->limit = 1;
  ru->metric = LOWP_METRIC_MAX_ABS;
  snprintf(w, sizeof w, "rule %d: \"%s\"", i + 1, vs ? "vs_reference" : "bitexact");
  if ((st = parse_subject(c, ITEM(vs ? "vs_reference" : "bitexact"), w, 0, &r->ref))) return st;
  r->has_ref = 1;
  if (ITEM("factor") && (st = get_number(c, ITEM("factor"), "\"factor\"", 0, &ru->limit)))
    return st;
  if (ITEM("floor") && (st = get_number(c, ITEM("floor"), "\"floor\"", 0, &ru->floor)))
    return st;
  if (ITEM("metric")) {
    if ((st = get_string(c, ITEM("metric"), "\"metric\"", &s))) return st;
    if (strcmp(s, "max_abs") && strcmp(s, "rmse") && strcmp(s, "max_ulp"))
      return fail(c, "rule %d: unknown metric '%s' (max_abs, rmse, max_ulp)", i + 1, s);
    (void)lowp_metric_parse(&ru->metric, s);
  }
  return LOWP_OK;
}

/* {"rtol": R, "atol": A} and {"assert_close": "pytorch"} */
static int parse_rule_tol(ctx_t *c, const cJSON *j, int i, const char *w, const lowp_spec_check_t *ck,
                           lowp_spec_rule_t *r) {
  const char *s = NULL;
  int st;
  lowp_rule_t *ru = &r->rule;
  (void)i, (void)ck;
  static const char *const kt[] = {"rtol", "atol", NULL};
  static const char *const ka[] = {"assert_close", NULL};
  ru->kind = LOWP_RULE_TOL;
  if (ITEM("assert_close")) {
    if ((st = check_keys(c, j, w, ka))) return st;
    if ((st = get_string(c, ITEM("assert_close"), "\"assert_close\"", &s))) return st;
    if (strcmp(s, "pytorch"))
      return fail(c, "%sunknown assert_close defaults '%s' (pytorch)", w, s);
    ru->pytorch = 1;
    return LOWP_OK;
  }
  if ((st = check_keys(c, j, w, kt))) return st;
  if (ITEM("rtol") && (st = get_number(c, ITEM("rtol"), "\"rtol\"", 0, &ru->rtol))) return st;
  if (ITEM("atol") && (st = get_number(c, ITEM("atol"), "\"atol\"", 0, &ru->atol))) return st;
  return LOWP_OK;
}

/* {"baseline": METRIC, "growth": G} */
static int parse_rule_baseline(ctx_t *c, const cJSON *j, int i, const char *w, const lowp_spec_check_t *ck,
                           lowp_spec_rule_t *r) {
  const char *s = NULL;
  int st;
  lowp_rule_t *ru = &r->rule;
  (void)i, (void)ck;
  static const char *const keys[] = {"baseline", "growth", NULL};
  if ((st = check_keys(c, j, w, keys))) return st;
  ru->kind = LOWP_RULE_BASELINE;
  ru->limit = 1;
  if ((st = get_string(c, ITEM("baseline"), "\"baseline\"", &s))) return st;
  if (lowp_metric_parse(&ru->metric, s))
    return fail(c, "%sunknown metric '%s' (max_ulp, max_abs, rmse, max_rel, max_bwd, "
                "mean_ulp)", w, s);
  r->baseline_metric = dupstr(s);
  if (ITEM("growth")) {
    if ((st = get_number(c, ITEM("growth"), "\"growth\"", 0, &ru->limit))) return st;
    if (ru->limit < 1) return fail(c, "%s\"growth\" must be >= 1, not %g", w, ru->limit);
  }
  return LOWP_OK;
}

#undef ITEM

static int parse_rule(ctx_t *c, const cJSON *j, int i, const lowp_spec_check_t *ck,
                      lowp_spec_rule_t *r) {
  char w[64];
  const cJSON *it;
  const char *s = NULL;
  int st, known = 0, k;
  lowp_rule_t *ru = &r->rule;
  memset(r, 0, sizeof *r);
  ru->baseline = NAN;
  snprintf(w, sizeof w, "rule %d: ", i + 1);
  if (!cJSON_IsObject(j)) return fail(c, "%smust be an object, not %s", w, type_name(j));
  /* which rule: the first key naming one */
  for (it = j->child; it && !known; it = it->next)
    for (k = 0; rule_names[k]; k++)
      if (!strcmp(it->string, rule_names[k])) known = 1;
  if (!known) {
    const char *first = j->child ? j->child->string : "";
    return fail(c, "%sunknown rule '%s' (max_ulp, bound, vs_reference, rtol/atol, "
                "assert_close, baseline, nan_inf, bitexact, vs_twin, sqnr_db, cosine, mismatch, "
                "in_format, no_exceptions)", w, first);
  }
#define ITEM(key) cJSON_GetObjectItemCaseSensitive(j, key)
  if (ITEM("sqnr_db") || ITEM("cosine") || ITEM("mismatch")) return parse_rule_field(c, j, i, ru);
  if (ITEM("no_exceptions")) return parse_rule_fpx(c, j, w, ru);
  if (ITEM("in_format")) {
    static const char *const keys[] = {"in_format", NULL};
    uint64_t n = 0;
    if ((st = check_keys(c, j, w, keys))) return st;
    ru->kind = LOWP_RULE_IN_FORMAT;
    snprintf(w, sizeof w, "rule %d: \"in_format\"", i + 1);
    if ((st = get_uint(c, ITEM("in_format"), w, 0, 9007199254740992.0, &n))) return st;
    ru->limit = (double)n;
    return LOWP_OK;
  }
  if (ITEM("max_ulp")) {
    static const char *const keys[] = {"max_ulp", NULL};
    if ((st = check_keys(c, j, w, keys))) return st;
    ru->kind = LOWP_RULE_MAX_ULP;
    snprintf(w, sizeof w, "rule %d: \"max_ulp\"", i + 1);
    return get_number(c, ITEM("max_ulp"), w, 0, &ru->limit);
  }
  if (ITEM("bound")) return parse_rule_bound(c, j, i, w, ck, r);
  if (ITEM("vs_twin") || (cJSON_IsString(ITEM("bitexact")) && !strcmp(ITEM("bitexact")->valuestring, "twin")))
    return parse_rule_twin(c, j, w, ck, r);
  if (ITEM("vs_reference") || ITEM("bitexact")) return parse_rule_ref(c, j, i, w, ck, r);
  if (ITEM("rtol") || ITEM("atol") || ITEM("assert_close")) return parse_rule_tol(c, j, i, w, ck, r);
  if (ITEM("baseline")) return parse_rule_baseline(c, j, i, w, ck, r);
  {
    static const char *const keys[] = {"nan_inf", NULL};
    if ((st = check_keys(c, j, w, keys))) return st;
    ru->kind = LOWP_RULE_NAN_INF;
    if ((st = get_string(c, ITEM("nan_inf"), "\"nan_inf\"", &s))) return st;
    if (strcmp(s, "match")) return fail(c, "%sunknown nan_inf mode '%s' (match)", w, s);
    return LOWP_OK;
  }
#undef ITEM
}

static void free_rule(lowp_spec_rule_t *r) {
  free(r->model);
  free(r->baseline_metric);
  free(r->tree);
  if (r->has_ref) free_subject(&r->ref);
}

/* ------------------------------------------------------------------ checks */

/* canonical JSON: keys sorted, recursively; "comment" keys dropped */
static cJSON *canonical(const cJSON *j) {
  cJSON *r;
  if (cJSON_IsObject(j)) {
    const cJSON *it;
    const char *names[256];
    int n = 0, a, b;
    r = cJSON_CreateObject();
    for (it = j->child; it && n < 256; it = it->next)
      if (strcmp(it->string, "comment")) names[n++] = it->string;
    for (a = 1; a < n; a++)
      for (b = a; b > 0 && strcmp(names[b - 1], names[b]) > 0; b--) {
        const char *t = names[b];
        names[b] = names[b - 1];
        names[b - 1] = t;
      }
    for (a = 0; a < n; a++)
      cJSON_AddItemToObject(r, names[a], canonical(cJSON_GetObjectItemCaseSensitive(j, names[a])));
    return r;
  }
  if (cJSON_IsArray(j)) {
    const cJSON *it;
    r = cJSON_CreateArray();
    for (it = j->child; it; it = it->next) cJSON_AddItemToArray(r, canonical(it));
    return r;
  }
  return cJSON_Duplicate(j, 1);
}

void lowp_spec_hash(char out[17], const void *data, size_t len) {
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ULL;
  size_t i;
  for (i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

static int required_dims(ctx_t *c, lowp_spec_check_t *ck, const cJSON *shape) {
  /* the sizes each operation needs when inputs are generated */
  const char *need[3] = {NULL, NULL, NULL};
  int i;
  switch (ck->op->id) {
  case LOWP_OP_GEMM: need[0] = "m"; need[1] = "n"; need[2] = "k"; break;
  case LOWP_OP_GEMV: need[0] = "m"; need[1] = "k"; break;
  case LOWP_OP_DOT: need[0] = "k"; break;
  default: need[0] = "n"; break;
  }
  for (i = 0; i < 3 && need[i]; i++)
    if (!shape || !cJSON_GetObjectItemCaseSensitive(shape, need[i]))
      return fail(c, "\"shape\" needs \"%s\" for %s (generated inputs)", need[i], ck->op->name);
  return LOWP_OK;
}

/* ---------------------------------------------------------- the name index */

static uint64_t name_hash(const char *s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 0x100000001b3ULL;
  }
  return h;
}

/* slots for n names: a power of 2, at least 2n (open addressing, linear
   probing; a slot holds the check's index + 1, 0 when empty) */
static int index_alloc(lowp_spec_t *s, int n) {
  size_t cap = 16;
  while (cap < 2 * (size_t)n) cap *= 2;
  s->by_name = calloc(cap, sizeof *s->by_name);
  if (!s->by_name) return LOWP_ENOMEM;
  s->by_name_cap = cap;
  return LOWP_OK;
}

/* the slot of name: where it is, or the empty slot where it would go */
static size_t index_slot(const lowp_spec_t *s, const char *name, unsigned long long *probes) {
  size_t mask = s->by_name_cap - 1, k = (size_t)name_hash(name) & mask;
  while (s->by_name[k]) {
    if (probes) ++*probes;
    if (!strcmp(s->checks[s->by_name[k] - 1].name, name)) break;
    k = (k + 1) & mask;
  }
  return k;
}

/* ------------------------------------------------------------------ checks */

/* a name (of a check, of a subject): a string without control characters
   that JUnit XML can hold */
static int get_name(ctx_t *c, const cJSON *j, const char *what, const char **out) {
  const char *s = NULL;
  int st, i;
  if ((st = get_string(c, j, what, &s))) return st;
  for (i = 0; s[i]; i++)
    if ((unsigned char)s[i] < 0x20) return fail(c, "%s contains a control character", what);
  if (!lowp_name_ok(s))
    return fail(c, "%s '%s' holds a character JUnit XML cannot (U+007F, U+FFFE, U+FFFF)", what, s);
  *out = s;
  return LOWP_OK;
}

static int get_op(ctx_t *c, const cJSON *it, lowp_spec_check_t *ck) {
  const char *s = NULL;
  int st;
  if (!it) return fail(c, "\"op\" is missing");
  if ((st = get_string(c, it, "\"op\"", &s))) return st;
  ck->op = lowp_op_by_name(s);
  if (!ck->op)
    return fail(c, "unknown op '%s' (cast, sum, dot, gemv, gemm, softmax, logsoftmax, "
                "logsumexp, layernorm, rmsnorm, xent, exp, log, tanh, gelu)", s);
  return LOWP_OK;
}

/* "name" (unique), "op", "subject" and the keys */
static int check_head(ctx_t *c, const cJSON *j, int idx, lowp_spec_check_t *ck, lowp_spec_t *spec) {
  static const char *const keys[] = {"name", "op", "subject", "in", "out", "shape", "inputs",
                                     "rules", "eps", "reduction", "convert", NULL};
  const cJSON *it;
  const char *s = NULL;
  size_t slot;
  int st;
  if (!cJSON_IsObject(j)) return fail(c, "must be an object, not %s", type_name(j));
  it = cJSON_GetObjectItemCaseSensitive(j, "name");
  if (!it) return fail(c, "\"name\" is missing");
  if ((st = get_name(c, it, "\"name\"", &s))) return st;
  ck->name = dupstr(s);
  if (!ck->name) return LOWP_ENOMEM;
  snprintf(c->where, sizeof c->where, "check '%.200s' (checks[%d]): ", s, idx);
  slot = index_slot(spec, s, &spec->name_probes);
  if (spec->by_name[slot])
    return fail(c, "duplicate check name (also checks[%d])", spec->by_name[slot] - 1);
  spec->by_name[slot] = idx + 1;
  if ((st = check_keys(c, j, "", keys))) return st;
  if ((st = get_op(c, cJSON_GetObjectItemCaseSensitive(j, "op"), ck))) return st;
  it = cJSON_GetObjectItemCaseSensitive(j, "subject");
  if (!it) return fail(c, "\"subject\" is missing");
  return parse_subject(c, it, "subject", 1, &ck->subject);
}

/* formats: the check's, else the defaults' -- except for saved tensors,
   whose files say what they hold unless the check itself says otherwise */
static int check_formats(ctx_t *c, const cJSON *j, const cJSON *defaults, lowp_spec_check_t *ck,
                         const cJSON **in_out, const cJSON **out_out) {
  const cJSON *in_j = cJSON_GetObjectItemCaseSensitive(j, "in");
  const cJSON *out_j = cJSON_GetObjectItemCaseSensitive(j, "out");
  int st, i;
  if (defaults && ck->subject.kind != LOWP_SPEC_TENSORS) {
    if (!in_j) in_j = cJSON_GetObjectItemCaseSensitive(defaults, "in");
    if (!out_j) out_j = cJSON_GetObjectItemCaseSensitive(defaults, "out");
  }
  *in_out = in_j;
  *out_out = out_j;
  if (in_j) {
    if (cJSON_IsArray(in_j)) {
      const cJSON *e;
      int n = cJSON_GetArraySize(in_j);
      if (n != ck->op->n_in)
        return fail(c, "\"in\" lists %d formats but %s has %d inputs", n, ck->op->name,
                    ck->op->n_in);
      for (i = 0, e = in_j->child; e; i++, e = e->next) {
        char w[32];
        snprintf(w, sizeof w, "\"in\"[%d]", i);
        if ((st = get_in_format(c, e, w, ck, i))) return st;
      }
      ck->n_in_formats = n;
    } else {
      if ((st = get_in_format(c, in_j, "\"in\"", ck, 0))) return st;
      for (i = 1; i < ck->op->n_in; i++)
        ck->in[i] = ck->in[0], ck->has_bin[i] = ck->has_bin[0], ck->bin[i] = ck->bin[0];
      ck->n_in_formats = 1;
    }
    for (i = 0; i < ck->op->n_in; i++)
      if (ck->op->in_index[i]) ck->in[i] = LOWP_FMT_FP64, ck->has_bin[i] = 0;
  }
  if (out_j) {
    if ((st = get_format(c, out_j, "\"out\"", &ck->out))) return st;
    ck->has_out = 1;
  }
  return LOWP_OK;
}

static int check_shape(ctx_t *c, const cJSON *shape, const char *key, lowp_spec_check_t *ck) {
  static const char *const sk[] = {"batch", "m", "n", "k", NULL};
  size_t *dst[4] = {&ck->dims.batch, &ck->dims.m, &ck->dims.n, &ck->dims.k};
  int st, i;
  ck->dims.batch = ck->dims.m = ck->dims.n = ck->dims.k = 1;
  if (!shape) return LOWP_OK;
  if (!cJSON_IsObject(shape)) return fail(c, "\"%s\" must be an object, not %s", key, type_name(shape));
  {
    char w[32];
    snprintf(w, sizeof w, "\"%s\": ", key);
    if ((st = check_keys(c, shape, w, sk))) return st;
  }
  for (i = 0; i < 4; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(shape, sk[i]);
    uint64_t x = 0;
    char w[32];
    if (!v) continue;
    snprintf(w, sizeof w, "\"%s\".%s", key, sk[i]);
    if ((st = get_uint(c, v, w, 1, 1 << 30, &x))) return st;
    *dst[i] = (size_t)x;
  }
  ck->has_shape = 1;
  return LOWP_OK;
}

/* generated inputs: "dist" and "seed" */
static int check_generated(ctx_t *c, const cJSON *inputs, const cJSON *shape,
                           lowp_spec_check_t *ck) {
  static const char *const ik[] = {"dist", "seed", NULL};
  const char *ds = "normal";
  int st;
  ck->generated = 1;
  ck->seed = 1;
  if (inputs) {
    if (!cJSON_IsObject(inputs))
      return fail(c, "\"inputs\" must be an object, not %s", type_name(inputs));
    if ((st = check_keys(c, inputs, "\"inputs\": ", ik))) return st;
    if (cJSON_GetObjectItemCaseSensitive(inputs, "dist") &&
        (st = get_string(c, cJSON_GetObjectItemCaseSensitive(inputs, "dist"), "\"inputs\".dist",
                         &ds)))
      return st;
    if (cJSON_GetObjectItemCaseSensitive(inputs, "seed") &&
        (st = get_uint(c, cJSON_GetObjectItemCaseSensitive(inputs, "seed"), "\"inputs\".seed", 0,
                       9007199254740992.0, &ck->seed)))
      return st;
  }
  if (lowp_dist_parse(&ck->dist, ds))
    return fail(c, "\"inputs\".dist: unknown distribution '%s' (uniform01, uniform11, normal, "
                "loguniform[:lo:hi], cancel, spread)", ds);
  ck->dist_text = dupstr(ds);
  if ((st = required_dims(c, ck, shape))) return st;
  /* generated data have no format of their own */
  if (!ck->n_in_formats || !ck->has_out)
    return fail(c, "\"in\" and \"out\" formats are needed for generated inputs (here or in "
                "\"defaults\")");
  return LOWP_OK;
}

static int check_inputs(ctx_t *c, const cJSON *j, const cJSON *shape, lowp_spec_check_t *ck) {
  static const char *const ik[] = {"files", "data", NULL};
  const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(j, "inputs");
  int st;
  if (ck->subject.kind == LOWP_SPEC_TENSORS) {
    if (inputs) return fail(c, "\"inputs\": a tensors subject reads its inputs from its files");
    return LOWP_OK;
  }
  if (!inputs || !cJSON_GetObjectItemCaseSensitive(inputs, "files"))
    return check_generated(c, inputs, shape, ck);
  if ((st = check_keys(c, inputs, "\"inputs\": ", ik))) return st;
  if ((st = parse_files(c, cJSON_GetObjectItemCaseSensitive(inputs, "files"), "\"inputs\".files",
                        &ck->files, &ck->n_files, 0)))
    return st;
  if (ck->n_files != ck->op->n_in)
    return fail(c, "\"inputs\".files lists %d files but %s has %d inputs", ck->n_files,
                ck->op->name, ck->op->n_in);
  if (cJSON_GetObjectItemCaseSensitive(inputs, "data")) {
    if ((st = parse_files(c, cJSON_GetObjectItemCaseSensitive(inputs, "data"), "\"inputs\".data",
                          &ck->data, &ck->n_data, 0)))
      return st;
    if (ck->n_data != ck->n_files)
      return fail(c, "\"inputs\".data lists %d files, \"files\" %d", ck->n_data, ck->n_files);
  }
  return LOWP_OK;
}

/* "convert": conversions inside the subject, per input name: a format
   (rounded rne) or {"format": F, "rnd": R}; or "revealed" */
static int check_convert(ctx_t *c, const cJSON *j, lowp_spec_check_t *ck) {
  static const char *const fk[] = {"format", "rnd", NULL};
  const cJSON *cv = cJSON_GetObjectItemCaseSensitive(j, "convert"), *it;
  int i, st;
  if (!cv) return LOWP_OK;
  if (cJSON_IsString(cv) && !strcmp(cv->valuestring, "revealed")) {
    ck->conv_revealed = 1;
    return LOWP_OK;
  }
  if (!cJSON_IsObject(cv) || !cv->child)
    return fail(c, "\"convert\" must be \"revealed\" or an object naming inputs, e.g. {\"B\": "
                "\"fp16\"} or {\"B\": {\"format\": \"fp16\", \"rnd\": \"rtz\"}}, not %s",
                cJSON_IsString(cv) ? "that string" : type_name(cv));
  {
    const char *names[LOWP_OP_MAXIO + 1] = {0};
    for (i = 0; i < ck->op->n_in; i++) names[i] = ck->op->in_names[i];
    if ((st = check_keys(c, cv, "\"convert\": ", names))) return st; /* inputs, once each */
  }
  cJSON_ArrayForEach(it, cv) {
    char w[96];
    const cJSON *fj = it;
    if (!strcmp(it->string, "comment")) continue;
    for (i = 0; strcmp(ck->op->in_names[i], it->string); i++) continue;
    snprintf(w, sizeof w, "\"convert\".%s: ", it->string);
    if (ck->op->in_index[i]) return fail(c, "%sinput %s holds indices, not values", w, it->string);
    if (ck->has_bin[i])
      return fail(c, "%sinput %s is block-scaled (its dequantized values are what lowp gives)", w, it->string);
    ck->conv_rnd[i] = LOWP_RND_NE;
    if (cJSON_IsObject(it)) {
      const char *rs = NULL;
      if ((st = check_keys(c, it, w, fk))) return st;
      fj = cJSON_GetObjectItemCaseSensitive(it, "format");
      if (!fj) return fail(c, "%s\"format\" is missing", w);
      if (cJSON_GetObjectItemCaseSensitive(it, "rnd")) {
        if ((st = get_string(c, cJSON_GetObjectItemCaseSensitive(it, "rnd"), "\"rnd\"", &rs))) return st;
        if (lowp_rounding_parse(&ck->conv_rnd[i], rs) || ck->conv_rnd[i] == LOWP_RND_SR)
          return fail(c, "%sunknown rounding '%s' (rne, rna, rtz, rup, rdn, rto)", w, rs);
      }
    }
    snprintf(w, sizeof w, "\"convert\".%s", it->string);
    if ((st = get_format(c, fj, w, &ck->conv[i]))) return st;
    ck->has_conv[i] = 1;
  }
  return LOWP_OK;
}

/* "eps" and "reduction" */
static int check_params(ctx_t *c, const cJSON *j, lowp_spec_check_t *ck) {
  const cJSON *it;
  const char *s = NULL;
  int st;
  if ((it = cJSON_GetObjectItemCaseSensitive(j, "eps"))) {
    if (ck->op->id != LOWP_OP_LAYERNORM && ck->op->id != LOWP_OP_RMSNORM)
      return fail(c, "\"eps\" belongs to layernorm and rmsnorm, not %s", ck->op->name);
    if ((st = get_number(c, it, "\"eps\"", 0, &ck->eps))) return st;
  }
  if ((it = cJSON_GetObjectItemCaseSensitive(j, "reduction"))) {
    if (ck->op->id != LOWP_OP_XENT)
      return fail(c, "\"reduction\" belongs to xent, not %s", ck->op->name);
    if ((st = get_string(c, it, "\"reduction\"", &s))) return st;
    if (!strcmp(s, "mean")) ck->reduction_mean = 1;
    else if (strcmp(s, "none")) return fail(c, "unknown reduction '%s' (none, mean)", s);
  }
  return LOWP_OK;
}

/* "rules": a non-empty array */
static int check_rules(ctx_t *c, const cJSON *rules, lowp_spec_check_t *ck) {
  const cJSON *it;
  int st, i;
  if (!rules) return fail(c, "\"rules\" is missing");
  if (!cJSON_IsArray(rules) || cJSON_GetArraySize(rules) < 1)
    return fail(c, "\"rules\" must be a non-empty array");
  ck->n_rules = cJSON_GetArraySize(rules);
  ck->rules = calloc((size_t)ck->n_rules, sizeof *ck->rules);
  if (!ck->rules) return LOWP_ENOMEM;
  for (i = 0, it = rules->child; it; i++, it = it->next)
    if ((st = parse_rule(c, it, i, ck, &ck->rules[i]))) return st;
  return LOWP_OK;
}

/* fingerprint: the definition without the rules, defaults applied */
static int check_fingerprint(const cJSON *j, const cJSON *in_j, const cJSON *out_j,
                             lowp_spec_check_t *ck) {
  cJSON *canon = cJSON_Duplicate(j, 1), *cc;
  char *txt;
  if (!canon) return LOWP_ENOMEM;
  cJSON_DeleteItemFromObjectCaseSensitive(canon, "rules");
  if (!cJSON_GetObjectItemCaseSensitive(canon, "in") && in_j)
    cJSON_AddItemToObject(canon, "in", cJSON_Duplicate(in_j, 1));
  if (!cJSON_GetObjectItemCaseSensitive(canon, "out") && out_j)
    cJSON_AddItemToObject(canon, "out", cJSON_Duplicate(out_j, 1));
  cc = canonical(canon);
  txt = cJSON_PrintUnformatted(cc);
  cJSON_Delete(cc);
  cJSON_Delete(canon);
  if (!txt) return LOWP_ENOMEM;
  lowp_spec_hash(ck->fingerprint, txt, strlen(txt));
  free(txt);
  return LOWP_OK;
}

static int parse_check(ctx_t *c, const cJSON *j, int idx, const cJSON *defaults,
                       lowp_spec_check_t *ck, lowp_spec_t *spec) {
  const cJSON *in_j = NULL, *out_j = NULL, *shape;
  int st;
  memset(ck, 0, sizeof *ck);
  ck->index = idx;
  ck->eps = 1e-5;
  snprintf(c->where, sizeof c->where, "checks[%d]: ", idx);
  if ((st = check_head(c, j, idx, ck, spec))) return st;
  if ((st = check_formats(c, j, defaults, ck, &in_j, &out_j))) return st;
  shape = cJSON_GetObjectItemCaseSensitive(j, "shape");
  if ((st = check_shape(c, shape, "shape", ck))) return st;
  if ((st = check_inputs(c, j, shape, ck))) return st;
  if ((st = check_params(c, j, ck))) return st;
  if ((st = check_convert(c, j, ck))) return st;
  if ((st = check_rules(c, cJSON_GetObjectItemCaseSensitive(j, "rules"), ck))) return st;
  return check_fingerprint(j, in_j, out_j, ck);
}

static void free_check(lowp_spec_check_t *ck) {
  int i;
  free(ck->name);
  free(ck->dist_text);
  free_subject(&ck->subject);
  for (i = 0; i < ck->n_files; i++) free_file(&ck->files[i]);
  for (i = 0; i < ck->n_data; i++) free_file(&ck->data[i]);
  free(ck->files);
  free(ck->data);
  for (i = 0; i < ck->n_rules; i++) free_rule(&ck->rules[i]);
  free(ck->rules);
}

/* ----------------------------------------------------------- public API */

static size_t line_of(const char *text, size_t off) {
  size_t line = 1, k;
  for (k = 0; k < off; k++)
    if (text[k] == '\n') line++;
  return line;
}

/* 1 when the text at off is a NaN or Infinity literal (what Python's json
   writes for float("nan") and float("inf")); key: the last "key": before it */
static int nonfinite_at(const char *text, size_t len, size_t off, char *key, size_t keylen) {
  static const char *const lit[] = {"NaN", "Infinity", "-Infinity", "nan", "inf", "-inf"};
  size_t i, a, b;
  key[0] = '\0';
  for (i = 0; i < sizeof lit / sizeof *lit; i++)
    if (len - off >= strlen(lit[i]) && !strncmp(text + off, lit[i], strlen(lit[i]))) break;
  if (i == sizeof lit / sizeof *lit) return 0;
  /* back over blanks, an optional ':' or ',' or '[', to a quoted key */
  b = off;
  while (b > 0 && strchr(" \t\r\n", text[b - 1])) b--;
  if (b > 0 && text[b - 1] == ':') {
    b--;
    while (b > 0 && strchr(" \t\r\n", text[b - 1])) b--;
    if (b > 0 && text[b - 1] == '"') {
      a = b - 1;
      while (a > 0 && text[a - 1] != '"') a--;
      if (a > 0 && b - 1 - a < keylen) {
        memcpy(key, text + a, b - 1 - a);
        key[b - 1 - a] = '\0';
        for (i = 0; key[i]; i++)
          if ((unsigned char)key[i] < 0x20 || key[i] == '\\') key[0] = '\0';
      }
    }
  }
  return 1;
}

int lowp_spec_json(cJSON **root, const char *text, size_t len, char *err, size_t errlen) {
  const char *ep = NULL;
  size_t i, bad = 0;
  if (err && errlen) err[0] = '\0';
  if (!root) return LOWP_EINVAL;
  *root = NULL;
  if (!text) return lowp_errf(err, errlen, LOWP_EPARSE, "no text");
  switch (lowp_json_find_nul(text, len, &i)) {
  case 1:
    return lowp_errf(err, errlen, LOWP_EPARSE, "a NUL byte at byte %zu (line %zu): not JSON "
                     "text", i, line_of(text, i));
  case 2:
    return lowp_errf(err, errlen, LOWP_EPARSE, "\\u0000 (a NUL character) at byte %zu (line "
                     "%zu): no name or string may hold it", i, line_of(text, i));
  default: break;
  }
  if (!lowp_utf8_valid(text, len, &bad))
    return lowp_errf(err, errlen, LOWP_EPARSE, "not UTF-8 (byte 0x%02x at byte %zu, line %zu)",
                     (unsigned char)text[bad], bad, line_of(text, bad));
  if (lowp_json_find_bad_number(text, len, &bad))
    return lowp_errf(err, errlen, LOWP_EPARSE, "a number JSON does not allow at line %zu, byte %zu (a leading "
                     "zero, or a point or exponent without digits: JSON's grammar, which cJSON does not "
                     "enforce)", line_of(text, bad), bad);
  *root = cJSON_ParseWithLengthOpts(text, len, &ep, 0);
  if (*root && ep) {
    /* only white space may follow the value */
    const char *q = ep;
    while ((size_t)(q - text) < len && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) q++;
    if ((size_t)(q - text) < len) {
      cJSON_Delete(*root);
      *root = NULL;
      ep = q;
    }
  }
  if (!*root) {
    size_t off = ep ? (size_t)(ep - text) : 0;
    char key[80];
    if (off > len) off = len;
    if (nonfinite_at(text, len, off, key, sizeof key))
      return lowp_errf(err, errlen, LOWP_EPARSE, "%s%s%sa number that is not finite (NaN or "
                       "Infinity; JSON has none) near line %zu, byte %zu: give a finite number",
                       key[0] ? "\"" : "", key, key[0] ? "\": " : "", line_of(text, off), off);
    return lowp_errf(err, errlen, LOWP_EPARSE, "not valid JSON (near line %zu, byte %zu)",
                     line_of(text, off), off);
  }
  return LOWP_OK;
}

void lowp_spec_free(lowp_spec_t *s) {
  int i;
  if (!s) return;
  for (i = 0; i < s->n_checks; i++) free_check(&s->checks[i]);
  free(s->checks);
  free(s->dir);
  free(s->baseline);
  free(s->by_name);
  memset(s, 0, sizeof *s);
}

const lowp_spec_check_t *lowp_spec_find(const lowp_spec_t *s, const char *name) {
  int i;
  if (!s || !name) return NULL;
  if (s->by_name_cap) {
    size_t k = index_slot(s, name, NULL);
    return s->by_name[k] ? &s->checks[s->by_name[k] - 1] : NULL;
  }
  for (i = 0; i < s->n_checks; i++)
    if (s->checks[i].name && !strcmp(s->checks[i].name, name)) return &s->checks[i];
  return NULL;
}

/* ------------------------------------------- parametrised checks */

/* A check whose "shape" is a list of shapes, or whose "inputs"."seed" is a
   list of seeds, stands for one check per combination (shapes x seeds), each
   named NAME[m=64,n=64,k=127,seed=3] (the axes its shape gives, the seed when
   seeds are listed): each is its own JUnit testcase, JSON result and
   baseline entry. A dropped odd-k element shows only when some k is odd. */
#define LOWP_SPEC_MAX_CASES 100000

static int case_name(ctx_t *c, char *buf, size_t len, const char *name, const cJSON *shape,
                     const cJSON *seed) {
  static const char *const axes[] = {"batch", "m", "n", "k", NULL};
  size_t used;
  int k, first = 1;
  used = (size_t)snprintf(buf, len, "%s[", name);
  for (k = 0; shape && axes[k]; k++) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(shape, axes[k]);
    if (!cJSON_IsNumber(a) || used >= len) continue;
    used += (size_t)snprintf(buf + used, len - used, "%s%s=%.0f", first ? "" : ",", axes[k],
                             a->valuedouble);
    first = 0;
  }
  if (seed && used < len)
    used += (size_t)snprintf(buf + used, len - used, "%sseed=%.0f", first ? "" : ",",
                             seed->valuedouble);
  if (used + 1 >= len) return fail(c, "check '%s': a case name is too long", name);
  snprintf(buf + used, len - used, "]");
  return LOWP_OK;
}

/* the cases of check j (shape list x seed list) appended to out */
static int expand_one(ctx_t *c, const cJSON *j, cJSON *out, int *count) {
  const cJSON *shape = cJSON_GetObjectItemCaseSensitive(j, "shape");
  const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(j, "inputs");
  const cJSON *seed = cJSON_IsObject(inputs) ? cJSON_GetObjectItemCaseSensitive(inputs, "seed")
                                             : NULL;
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
  int ns = cJSON_IsArray(shape) ? cJSON_GetArraySize(shape) : 1;
  int nd = cJSON_IsArray(seed) ? cJSON_GetArraySize(seed) : 1;
  const cJSON *sh;
  int a, b;
  if (!cJSON_IsArray(shape) && !cJSON_IsArray(seed)) {
    cJSON_AddItemToArray(out, cJSON_Duplicate(j, 1));
    return ++*count > LOWP_SPEC_MAX_CASES ? fail(c, "more than %d checks", LOWP_SPEC_MAX_CASES)
                                          : LOWP_OK;
  }
  if (!cJSON_IsString(name)) return fail(c, "a parametrised check needs a \"name\"");
  if (ns < 1 || nd < 1)
    return fail(c, "check '%s': an empty list of %s", name->valuestring, ns < 1 ? "shapes" : "seeds");
  /* walked through their links, not by index: linear in the cases */
  sh = cJSON_IsArray(shape) ? shape->child : shape;
  for (a = 0; a < ns; a++, sh = cJSON_IsArray(shape) ? sh->next : sh) {
    const cJSON *sd = cJSON_IsArray(seed) ? seed->child : NULL;
    for (b = 0; b < nd; b++, sd = sd ? sd->next : NULL) {
      char nm[1024];
      cJSON *x;
      int st;
      if (cJSON_IsArray(shape) && !cJSON_IsObject(sh))
        return fail(c, "check '%s': \"shape\"[%d] must be an object", name->valuestring, a);
      if (sd && !cJSON_IsNumber(sd))
        return fail(c, "check '%s': \"inputs\".seed[%d] must be a number", name->valuestring, b);
      if ((st = case_name(c, nm, sizeof nm, name->valuestring,
                          cJSON_IsArray(shape) ? sh : NULL, sd)))
        return st;
      x = cJSON_Duplicate(j, 1);
      if (!x) return LOWP_ENOMEM;
      cJSON_ReplaceItemInObjectCaseSensitive(x, "name", cJSON_CreateString(nm));
      if (cJSON_IsArray(shape))
        cJSON_ReplaceItemInObjectCaseSensitive(x, "shape", cJSON_Duplicate(sh, 1));
      if (sd)
        cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(x, "inputs"),
                                               "seed", cJSON_Duplicate(sd, 1));
      cJSON_AddItemToArray(out, x);
      if (++*count > LOWP_SPEC_MAX_CASES) return fail(c, "more than %d checks", LOWP_SPEC_MAX_CASES);
    }
  }
  return LOWP_OK;
}

/* root's "checks" with every parametrised check expanded (in place) */
static int expand_params(ctx_t *c, cJSON *root) {
  cJSON *checks = cJSON_GetObjectItemCaseSensitive(root, "checks"), *out, *it;
  int count = 0, st, any = 0;
  if (!cJSON_IsArray(checks)) return LOWP_OK; /* said by the caller */
  cJSON_ArrayForEach(it, checks) {
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(it, "shape");
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(it, "inputs");
    if (cJSON_IsArray(sh) ||
        (cJSON_IsObject(in) && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(in, "seed"))))
      any = 1;
  }
  if (!any) return LOWP_OK;
  out = cJSON_CreateArray();
  if (!out) return LOWP_ENOMEM;
  cJSON_ArrayForEach(it, checks) {
    if ((st = expand_one(c, it, out, &count))) {
      cJSON_Delete(out);
      return st;
    }
  }
  cJSON_ReplaceItemInObjectCaseSensitive(root, "checks", out);
  return LOWP_OK;
}

int lowp_spec_parse(lowp_spec_t *s, const char *text, size_t len, const char *dir,
                    char *err, size_t errlen) {
  static const char *const keys[] = {"lowp_check", "baseline", "defaults", "checks", NULL};
  static const char *const dkeys[] = {"in", "out", NULL};
  ctx_t c;
  cJSON *root;
  const cJSON *it, *defaults, *checks;
  int st = LOWP_OK, i, n;
  uint64_t ver = 0;
  if (!s) return LOWP_EINVAL;
  memset(s, 0, sizeof *s);
  memset(&c, 0, sizeof c);
  c.err = err;
  c.errlen = errlen;
  snprintf(c.where, sizeof c.where, "spec: ");
  if (err && errlen) err[0] = '\0';
  if (!text) return fail(&c, "no text");
  s->dir = strdup(dir ? dir : ".");
  c.dir = s->dir;
  {
    char e[400];
    if ((st = lowp_spec_json(&root, text, len, e, sizeof e)))
      return st == LOWP_EPARSE ? fail(&c, "%s", e) : st;
  }
  if (!cJSON_IsObject(root)) { st = fail(&c, "the top level must be an object"); goto done; }
  if ((st = check_keys(&c, root, "", keys))) goto done;
  it = cJSON_GetObjectItemCaseSensitive(root, "lowp_check");
  if (!it) { st = fail(&c, "\"lowp_check\": 1 (the format version) is missing"); goto done; }
  if ((st = get_uint(&c, it, "\"lowp_check\"", 1, 1e9, &ver))) goto done;
  if (ver != LOWP_SPEC_VERSION) {
    st = fail(&c, "format version %llu is not supported (this lowp reads %d)",
              (unsigned long long)ver, LOWP_SPEC_VERSION);
    goto done;
  }
  s->version = (int)ver;
  if ((it = cJSON_GetObjectItemCaseSensitive(root, "baseline"))) {
    const char *b = NULL;
    if ((st = get_string(&c, it, "\"baseline\"", &b))) goto done;
    s->baseline = resolve(&c, b);
  }
  defaults = cJSON_GetObjectItemCaseSensitive(root, "defaults");
  if (defaults) {
    lowp_format_t f;
    if (!cJSON_IsObject(defaults)) { st = fail(&c, "\"defaults\" must be an object"); goto done; }
    if ((st = check_keys(&c, defaults, "\"defaults\": ", dkeys))) goto done;
    if ((it = cJSON_GetObjectItemCaseSensitive(defaults, "out")) &&
        (st = get_format(&c, it, "\"defaults\".out", &f)))
      goto done;
    if ((it = cJSON_GetObjectItemCaseSensitive(defaults, "in")) && !cJSON_IsArray(it) &&
        (st = get_format(&c, it, "\"defaults\".in", &f)))
      goto done;
  }
  if ((st = expand_params(&c, root))) goto done;
  checks = cJSON_GetObjectItemCaseSensitive(root, "checks");
  if (!checks) { st = fail(&c, "\"checks\" is missing"); goto done; }
  if (!cJSON_IsArray(checks) || (n = cJSON_GetArraySize(checks)) < 1) {
    st = fail(&c, "\"checks\" must be a non-empty array");
    goto done;
  }
  s->checks = calloc((size_t)n, sizeof *s->checks);
  if (!s->checks || index_alloc(s, n)) { st = LOWP_ENOMEM; goto done; }
  for (i = 0, it = checks->child; it; i++, it = it->next) {
    s->n_checks = i + 1;
    if ((st = parse_check(&c, it, i, defaults, &s->checks[i], s))) goto done;
  }
done:
  cJSON_Delete(root);
  return st;
}

int lowp_spec_slurp(char **text, size_t *len_out, const char *path, char *err, size_t errlen) {
  FILE *f;
  char *buf = NULL, ep[512];
  size_t len = 0, cap = 0, n;
  int is_stdin;
  if (!text || !len_out || !path) return LOWP_EINVAL;
  *text = NULL;
  *len_out = 0;
  lowp_escape_ctl(ep, sizeof ep, path); /* the path as messages show it */
  is_stdin = !strcmp(path, "-");
  f = is_stdin ? stdin : fopen(path, "rb");
  if (!f) {
    lowp_errf(err, errlen, 0, "spec %s: cannot open it", ep);
    return LOWP_EIO;
  }
  for (;;) {
    if (len + 4096 + 1 > cap) {
      char *nb;
      cap = cap ? 2 * cap : 65536;
      if (cap > ((size_t)64 << 20)) {
        if (!is_stdin) fclose(f);
        free(buf);
        lowp_errf(err, errlen, 0, "spec %s: larger than 64 MiB", ep);
        return LOWP_EIO;
      }
      nb = realloc(buf, cap);
      if (!nb) {
        if (!is_stdin) fclose(f);
        free(buf);
        return LOWP_ENOMEM;
      }
      buf = nb;
    }
    n = fread(buf + len, 1, 4096, f);
    len += n;
    if (n < 4096) break;
  }
  if (ferror(f)) {
    if (!is_stdin) fclose(f);
    free(buf);
    lowp_errf(err, errlen, 0, "spec %s: read error (a folder?)", ep);
    return LOWP_EIO;
  }
  if (!is_stdin) fclose(f);
  buf[len] = '\0';
  *text = buf;
  *len_out = len;
  return LOWP_OK;
}

int lowp_spec_parse_path(lowp_spec_t *s, const char *text, size_t len, const char *path, char *err,
                         size_t errlen) {
  char *dir;
  int st;
  if (!s || !text || !path) return LOWP_EINVAL;
  memset(s, 0, sizeof *s);
  if (!strcmp(path, "-")) {
    dir = strdup(".");
  } else {
    const char *sl = strrchr(path, '/');
    dir = sl ? strndup(path, (size_t)(sl - path) + (sl == path)) : strdup(".");
  }
  if (!dir) return LOWP_ENOMEM;
  st = lowp_spec_parse(s, text, len, dir, err, errlen);
  free(dir);
  return st;
}

int lowp_spec_read(lowp_spec_t *s, const char *path, char *err, size_t errlen) {
  char *buf;
  size_t len;
  int st;
  if (!s || !path) return LOWP_EINVAL;
  memset(s, 0, sizeof *s);
  st = lowp_spec_slurp(&buf, &len, path, err, errlen);
  if (st) return st;
  st = lowp_spec_parse_path(s, buf, len, path, err, errlen);
  free(buf);
  return st;
}

/* ------------------------------------------- rules alone (the Python API) */

/* "vs_reference"/"bitexact": "outputs" names arrays the caller gives (its
   subject description reads kernel "outputs") */
static void rules_outputs(cJSON *rules) {
  static const char *const refk[] = {"vs_reference", "bitexact"};
  cJSON *it;
  cJSON_ArrayForEach(it, rules) {
    int r;
    for (r = 0; r < 2 && cJSON_IsObject(it); r++) {
      cJSON *v = cJSON_GetObjectItemCaseSensitive(it, refk[r]);
      if (cJSON_IsString(v) && !strcmp(v->valuestring, "outputs")) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kernel", "outputs");
        cJSON_ReplaceItemInObjectCaseSensitive(it, refk[r], o);
      }
    }
  }
}

int lowp_spec_desc_parse(lowp_spec_check_t *ck, const cJSON *j, const char *const *extra,
                         int need_rules, char *err, size_t errlen) {
  static const char *const own[] = {"op", "name", "in", "out", "dims", "eps", "reduction",
                                    "rules", "convert"};
  const char *allowed[48];
  const cJSON *in_j, *out_j, *it;
  size_t na = 0, i;
  ctx_t c;
  int st;
  if (!ck) return LOWP_EINVAL;
  memset(ck, 0, sizeof *ck);
  ck->eps = 1e-5;
  memset(&c, 0, sizeof c);
  c.err = err;
  c.errlen = errlen;
  c.dir = ".";
  if (err && errlen) err[0] = '\0';
  if (!cJSON_IsObject(j)) return fail(&c, "the description must be a JSON object, not %s", type_name(j));
  for (i = 0; i < sizeof own / sizeof *own; i++) allowed[na++] = own[i];
  for (i = 0; extra && extra[i] && na + 1 < sizeof allowed / sizeof *allowed; i++)
    allowed[na++] = extra[i];
  allowed[na] = NULL;
  if ((st = check_keys(&c, j, "", allowed))) return st;
  if ((st = get_op(&c, cJSON_GetObjectItemCaseSensitive(j, "op"), ck))) return st;
  if ((it = cJSON_GetObjectItemCaseSensitive(j, "name"))) {
    const char *s = NULL;
    if ((st = get_name(&c, it, "\"name\"", &s))) return st;
    if (!(ck->name = dupstr(s))) return LOWP_ENOMEM;
  }
  if ((st = check_formats(&c, j, NULL, ck, &in_j, &out_j))) return st;
  if ((st = check_shape(&c, cJSON_GetObjectItemCaseSensitive(j, "dims"), "dims", ck))) return st;
  if ((st = check_params(&c, j, ck))) return st;
  if ((st = check_convert(&c, j, ck))) return st;
  it = cJSON_GetObjectItemCaseSensitive(j, "rules");
  if (it || need_rules) {
    cJSON *dup = it ? cJSON_Duplicate(it, 1) : NULL;
    if (it && !dup) return LOWP_ENOMEM;
    rules_outputs(dup);
    st = check_rules(&c, dup, ck);
    cJSON_Delete(dup);
    if (st) return st;
  }
  return LOWP_OK;
}

int lowp_spec_name_check(const cJSON *j, const char *what, char *err, size_t errlen) {
  ctx_t c;
  const char *s;
  memset(&c, 0, sizeof c);
  c.err = err;
  c.errlen = errlen;
  return get_name(&c, j, what, &s);
}

void lowp_spec_check_free(lowp_spec_check_t *ck) {
  if (ck) free_check(ck);
}

int lowp_spec_rules_parse(lowp_spec_rule_t **rules, int *n_rules, const char *json,
                          const lowp_format_t *out, char *err, size_t errlen) {
  ctx_t c;
  lowp_spec_check_t ck;
  cJSON *root, *it;
  int n, i = 0, st = LOWP_OK;
  if (!rules || !n_rules || !json) return LOWP_EINVAL;
  *rules = NULL;
  *n_rules = 0;
  memset(&c, 0, sizeof c);
  c.err = err;
  c.errlen = errlen;
  c.dir = ".";
  snprintf(c.where, sizeof c.where, "rules: ");
  memset(&ck, 0, sizeof ck);
  if (out) {
    ck.has_out = 1;
    ck.out = *out;
  }
  root = cJSON_Parse(json);
  if (!root || !cJSON_IsArray(root)) {
    cJSON_Delete(root);
    return fail(&c, "expected a JSON array of rules");
  }
  n = cJSON_GetArraySize(root);
  *rules = calloc(n ? (size_t)n : 1, sizeof **rules);
  if (!*rules) {
    cJSON_Delete(root);
    return LOWP_ENOMEM;
  }
  rules_outputs(root);
  cJSON_ArrayForEach(it, root) {
    st = parse_rule(&c, it, i, &ck, &(*rules)[i]);
    i++;
    if (st) break;
  }
  cJSON_Delete(root);
  *n_rules = i;
  return st;
}

void lowp_spec_rules_free(lowp_spec_rule_t *rules, int n_rules) {
  int i;
  for (i = 0; rules && i < n_rules; i++) free_rule(&rules[i]);
  free(rules);
}
