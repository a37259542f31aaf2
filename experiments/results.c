/* lowp_result -- builders for the "results" keys the report renders (registry.h) */

#include "results.h"

#include "status.h"

#include <stdio.h>
#include <string.h>

/* ----------------------------------------------------------- public API */

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

cJSON *lowp_result_table(cJSON *tables, const char *title, const char *const *cols, size_t n) {
  cJSON *t = cJSON_CreateObject();
  cJSON_AddStringToObject(t, "title", title);
  cJSON_AddItemToObject(t, "columns", lowp_result_row(cols, n));
  cJSON_AddItemToArray(tables, t);
  return cJSON_AddArrayToObject(t, "rows");
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
