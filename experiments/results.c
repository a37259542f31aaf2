/* lowp_result -- builders for the "results" keys the report renders (registry.h) */

#include "results.h"

#include "check/fpx_json.h"

#include "status.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

/* One style per built-in format (lowp formats): distinct colours, and the
   formats that are near-twins (e4m3 / e4m3fnuz, e5m2 / e5m2fnuz, fp32 /
   tf32) differ in dash and point type too, so one never hides the other. */
typedef struct {
  const char *name, *color;
  int dt, pt;
} style_t;

static const style_t fmt_styles[] = {
    {"fp64", "#000000", 1, 1},   {"fp32", "#1f77b4", 1, 7},     {"tf32", "#17becf", 2, 4},
    {"fp16", "#d62728", 1, 9},   {"bf16", "#ff7f0e", 1, 11},    {"e4m3", "#2ca02c", 1, 13},
    {"e4m3fnuz", "#7fd36b", 3, 6}, {"e5m2", "#9467bd", 1, 15},  {"e5m2fnuz", "#c5a3e6", 3, 8},
    {"e3m2", "#8c564b", 4, 5},   {"e2m3", "#e377c2", 4, 10},    {"e2m1", "#7f7f7f", 5, 12},
    {"e8m0", "#bcbd22", 5, 14},
};

/* Colours for curves that are not formats (and for unknown formats, by hash). */
static const char *const palette[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02",
                                      "#a6761d", "#666666", "#000080", "#b2df8a", "#fb9a99", "#cab2d6"};
#define NPAL (sizeof palette / sizeof palette[0])

static const style_t *fmt_style(const char *name) {
  size_t i;
  for (i = 0; name && i < sizeof fmt_styles / sizeof fmt_styles[0]; i++)
    if (!strcmp(fmt_styles[i].name, name)) return &fmt_styles[i];
  return NULL;
}

static uint32_t fnv1a(const char *s) {
  uint32_t h = 2166136261u;
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* ----------------------------------------------------------- public API */

const char *lowp_result_format_color(const char *name) {
  const style_t *st = fmt_style(name);
  return st ? st->color : palette[fnv1a(name) % NPAL];
}

const char *lowp_result_format_style(const char *name, const char *with, char *buf, size_t len) {
  const style_t *st = fmt_style(name);
  uint32_t h = fnv1a(name);
  snprintf(buf, len, "%s lc rgb '%s' dt %d pt %d", with ? with : "linespoints", lowp_result_format_color(name),
           st ? st->dt : (int)(h / NPAL % 5) + 1, st ? st->pt : (int)(h / NPAL / 5 % 14) + 1);
  return buf;
}

const char *lowp_result_series_color(size_t i) { return palette[i % NPAL]; }

const char *lowp_result_series_style(size_t i, const char *with, char *buf, size_t len) {
  snprintf(buf, len, "%s lc rgb '%s' dt %d pt %d", with ? with : "linespoints", palette[i % NPAL],
           (int)(i / NPAL % 5) + 1, (int)(i % 14) + 1);
  return buf;
}

void lowp_result_verdict(cJSON *verdicts, const char *claim, const char *source,
                         const char *measured, const char *verdict) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "claim", claim);
  cJSON_AddStringToObject(o, "source", source);
  cJSON_AddStringToObject(o, "measured", measured);
  cJSON_AddStringToObject(o, "verdict", verdict);
  cJSON_AddItemToArray(verdicts, o);
}

void lowp_result_plot(cJSON *plots, const char *file, const char *caption) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "file", file);
  cJSON_AddStringToObject(o, "caption", caption);
  cJSON_AddItemToArray(plots, o);
}

int lowp_run_plot_failed(const lowp_run_t *r, int st) {
  fprintf(stderr, "lowp run %s: gnuplot failed or is missing (%s); nothing was published\n",
          r->exp->name, lowp_status_str(st));
  return 2;
}

cJSON *lowp_result_row(const char *const *cells, size_t n) {
  cJSON *a = cJSON_CreateArray();
  size_t i;
  for (i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(cells[i]));
  return a;
}

void lowp_result_add_row(cJSON *rows, const char *const *cells, size_t n) {
  cJSON_AddItemToArray(rows, lowp_result_row(cells, n));
}

void lowp_result_add_row_md(cJSON *rows, FILE *md, const char *const *cells, size_t n) {
  size_t i;
  lowp_result_add_row(rows, cells, n);
  fputc('|', md);
  for (i = 0; i < n; i++) fprintf(md, " %s |", cells[i]);
  fputc('\n', md);
}

cJSON *lowp_result_table(cJSON *tables, const char *title, const char *const *cols, size_t n) {
  cJSON *t = cJSON_CreateObject();
  cJSON_AddStringToObject(t, "title", title);
  cJSON_AddItemToObject(t, "columns", lowp_result_row(cols, n));
  cJSON_AddItemToArray(tables, t);
  return cJSON_AddArrayToObject(t, "rows");
}

cJSON *lowp_result_key(cJSON *results, const char *key, const char *label, double value) {
  cJSON *kn = cJSON_GetObjectItemCaseSensitive(results, "key_numbers"), *o;
  if (!kn) kn = cJSON_AddObjectToObject(results, "key_numbers");
  o = cJSON_AddObjectToObject(kn, key);
  cJSON_AddStringToObject(o, "label", label);
  cJSON_AddNumberToObject(o, "value", value);
  return o;
}

size_t lowp_run_param_formats(const lowp_run_t *r, const char *key, lowp_format_t *out, size_t max,
                              lowp_format_check_t check) {
  const char *s = lowp_run_param(r, key);
  size_t nf = 0;
  while (*s) {
    char name[64];
    size_t len = strcspn(s, ",");
    const lowp_format_t *f;
    const char *why;
    if (len == 0 || len >= sizeof name || nf == max)
      lowp_run_bad_param(r, key, "expected a comma-separated list of format names");
    memcpy(name, s, len);
    name[len] = '\0';
    f = lowp_format_by_name(name);
    if (!f) {
      char msg[128];
      snprintf(msg, sizeof msg, "unknown format name '%s' (lowp formats lists them)", name);
      lowp_run_bad_param(r, key, msg);
    }
    if (check && (why = check(f)) != NULL) lowp_run_bad_param(r, key, why);
    out[nf++] = *f;
    s += len;
    if (*s && !*++s) lowp_run_bad_param(r, key, "a ',' ends the list (an empty format name)");
  }
  if (nf == 0) lowp_run_bad_param(r, key, "expected at least one format");
  return nf;
}

int lowp_result_mark_same(const char *outdir, lowp_series_t *sr, size_t ns, double rtol, char (*titles)[200],
                          char (*styles)[96]) {
  int *same = malloc((ns ? ns : 1) * sizeof *same), n = 0;
  size_t i;
  if (!same || lowp_plot_coincide(outdir, sr, ns, rtol, same) != LOWP_OK) {
    free(same);
    return 0;
  }
  for (i = 0; i < ns; i++) {
    const char *st = sr[i].style ? sr[i].style : "linespoints", *lc = strstr(st, "lc rgb '");
    char col[16] = "#000000";
    if (same[i] < 0) continue;
    if (lc) snprintf(col, sizeof col, "%.*s", (int)strcspn(lc + 8, "'"), lc + 8);
    snprintf(titles[i], 200, "%s (= %s)", sr[i].title ? sr[i].title : "", sr[same[i]].title ? sr[same[i]].title : "");
    /* a series drawn dashed gets its dash from the driver (lib/io/plot.c): no second dt */
    if (!strncmp(st, "lines ", 6) || !strcmp(st, "lines"))
      snprintf(styles[i], 96, "lines lc rgb '%s'%s", col, sr[i].dashed ? "" : " dt 2"); /* the driver adds lw */
    else
      snprintf(styles[i], 96, "linespoints lc rgb '%s'%s pt 6 ps 2.4", col, sr[i].dashed ? "" : " dt 3");
    sr[i].title = titles[i];
    sr[i].style = styles[i];
    n++;
  }
  free(same);
  return n;
}

cJSON *lowp_result_first_exception(lowp_run_t *r, const char *context,
                                   const lowp_fpx_trace_t *t, unsigned mask) {
  cJSON *arr = cJSON_GetObjectItemCaseSensitive(r->results, "first_exceptions");
  cJSON *o = lowp_fpx_first_json(t, mask);
  char line[512];
  if (!o) return NULL;
  if (!arr) arr = cJSON_AddArrayToObject(r->results, "first_exceptions");
  cJSON_AddItemToObject(o, "context", cJSON_CreateString(context));
  cJSON_AddItemToArray(arr, o);
  (void)lowp_fpx_first_text(line, sizeof line, t, mask);
  fprintf(r->summary, "First exception (%s): %s.\n\n", context, line);
  return o;
}
