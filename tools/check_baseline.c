/* lowp_chk_baseline -- lowp check: the baseline file, read and checked against the spec, and rewritten */

#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_internal.h"
#include "cli.h"
#include "status.h"

/* ----------------------------------------------------------- public API */

double lowp_chk_get_num(const cJSON *j) {
  if (cJSON_IsNumber(j)) return j->valuedouble;
  if (cJSON_IsString(j) && !strcmp(j->valuestring, "inf")) return INFINITY;
  return NAN;
}

void lowp_chk_baseline_load(lowp_chk_baseline_t *b, const lowp_spec_t *spec,
                            lowp_chk_run_t *runs, int n_runs, int need, int updating) {
  FILE *f;
  char *buf;
  long len;
  const cJSON *v, *it;
  int i, m;
  memset(b, 0, sizeof *b);
  if (!spec->baseline) {
    if (need || updating)
      lowp_cli_die(LOWP_CHK_CMD, "%s: the spec names no \"baseline\" file", updating ?
                   "--update-baseline" : "a baseline rule");
    return;
  }
  f = fopen(spec->baseline, "rb");
  if (!f) {
    if (need && !updating)
      lowp_cli_die(LOWP_CHK_CMD, "baseline %s: cannot read it (run lowp check --update-baseline to "
                   "create it)", spec->baseline);
    return;
  }
  fseek(f, 0, SEEK_END);
  len = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc(len > 0 ? (size_t)len + 1 : 1);
  if (!buf || len < 0 || fread(buf, 1, (size_t)len, f) != (size_t)len) {
    fclose(f);
    free(buf);
    lowp_cli_die(LOWP_CHK_CMD, "baseline %s: cannot read it", spec->baseline);
  }
  fclose(f);
  buf[len] = '\0';
  b->root = cJSON_Parse(buf);
  free(buf);
  if (!b->root || !cJSON_IsObject(b->root) ||
      !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(b->root, "lowp_baseline")) ||
      !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(b->root, "checks"))) {
    if (updating) { cJSON_Delete(b->root); b->root = NULL; return; }
    lowp_cli_die(LOWP_CHK_CMD, "baseline %s: not a lowp baseline file", spec->baseline);
  }
  b->checks = cJSON_GetObjectItemCaseSensitive(b->root, "checks");
  if (updating) return;
  if (cJSON_GetObjectItemCaseSensitive(b->root, "lowp_baseline")->valuedouble != LOWP_CHK_BASELINE_FORMAT)
    lowp_cli_die(LOWP_CHK_CMD, "baseline %s: baseline format %g, this lowp writes %d (run "
                 "--update-baseline)", spec->baseline,
                 cJSON_GetObjectItemCaseSensitive(b->root, "lowp_baseline")->valuedouble,
                 LOWP_CHK_BASELINE_FORMAT);
  v = cJSON_GetObjectItemCaseSensitive(b->root, "lowp_version");
  if (!cJSON_IsString(v) || strcmp(v->valuestring, LOWP_VERSION))
    lowp_cli_die(LOWP_CHK_CMD, "baseline %s was written by lowp %s, this is lowp %s (run "
                 "--update-baseline to accept the new version's numbers)", spec->baseline,
                 cJSON_IsString(v) ? v->valuestring : "(unknown)", LOWP_VERSION);
  /* every check it holds must be in the spec, with the same definition */
  for (it = b->checks->child; it; it = it->next) {
    const lowp_spec_check_t *sc = lowp_spec_find(spec, it->string);
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(it, "fingerprint");
    if (!sc)
      lowp_cli_die(LOWP_CHK_CMD, "baseline %s holds check '%s', which the spec does not have: it was "
                   "written for another spec", spec->baseline, it->string);
    if (!cJSON_IsString(fp) || strcmp(fp->valuestring, sc->fingerprint))
      lowp_cli_die(LOWP_CHK_CMD, "baseline %s: check '%s' (checks[%d]) is defined differently from when "
                   "the baseline was written (fingerprint %s, now %s): run --update-baseline",
                   spec->baseline, sc->name, sc->index, cJSON_IsString(fp) ? fp->valuestring : "?",
                   sc->fingerprint);
  }
  for (i = 0; i < n_runs; i++) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(b->checks, runs[i].sc->name), *mt;
    int uses = 0, k;
    for (k = 0; k < runs[i].sc->n_rules; k++)
      if (runs[i].sc->rules[k].rule.kind == LOWP_RULE_BASELINE) uses = 1;
    for (m = 0; m < LOWP_METRIC_COUNT; m++) runs[i].baseline[m] = NAN;
    if (!uses) continue;
    if (!e)
      lowp_cli_die(LOWP_CHK_CMD, "baseline %s has no entry for check '%s' (checks[%d]): written for "
                   "another spec? run --update-baseline", spec->baseline, runs[i].sc->name,
                   runs[i].sc->index);
    mt = cJSON_GetObjectItemCaseSensitive(e, "metrics");
    for (m = 0; m < LOWP_METRIC_COUNT; m++)
      runs[i].baseline[m] = lowp_chk_get_num(cJSON_GetObjectItemCaseSensitive(mt, lowp_metric_name((lowp_metric_t)m)));
    for (k = 0; k < runs[i].sc->n_rules; k++) {
      const lowp_spec_rule_t *ru = &runs[i].sc->rules[k];
      if (ru->rule.kind == LOWP_RULE_BASELINE && isnan(runs[i].baseline[ru->rule.metric]))
        lowp_cli_die(LOWP_CHK_CMD, "baseline %s: check '%s' (checks[%d]) has no stored %s", spec->baseline,
                     runs[i].sc->name, runs[i].sc->index, lowp_metric_name(ru->rule.metric));
    }
  }
}


/* the new baseline: the old entries of checks not run, the new of those run */
int lowp_chk_baseline_update(const lowp_spec_t *spec, const lowp_chk_baseline_t *old,
                             const lowp_chk_run_t *runs, int n) {
  cJSON *root = cJSON_CreateObject(), *checks = cJSON_CreateObject();
  int i, k, st;
  cJSON_AddNumberToObject(root, "lowp_baseline", LOWP_CHK_BASELINE_FORMAT);
  cJSON_AddStringToObject(root, "lowp_version", LOWP_VERSION);
  cJSON_AddItemToObject(root, "checks", checks);
  for (i = 0; i < spec->n_checks; i++) {
    const lowp_spec_check_t *sc = &spec->checks[i];
    const lowp_chk_run_t *r = NULL;
    const cJSON *oe = old->checks ? cJSON_GetObjectItemCaseSensitive(old->checks, sc->name) : NULL;
    for (k = 0; k < n; k++)
      if (runs[k].sc == sc) r = &runs[k];
    if (!r) {
      if (oe) cJSON_AddItemToObject(checks, sc->name, cJSON_Duplicate(oe, 1));
      continue;
    }
    if (!r->measured) {
      printf("baseline: %s: not measured (%s); %s\n", sc->name, r->error,
             oe ? "old entry kept" : "no entry");
      if (oe) cJSON_AddItemToObject(checks, sc->name, cJSON_Duplicate(oe, 1));
      continue;
    }
    {
      cJSON *e = cJSON_CreateObject(), *m = lowp_chk_metrics_json(&r->res);
      const cJSON *om = oe ? cJSON_GetObjectItemCaseSensitive(oe, "metrics") : NULL;
      const cJSON *ofp = oe ? cJSON_GetObjectItemCaseSensitive(oe, "fingerprint") : NULL;
      cJSON_AddStringToObject(e, "fingerprint", sc->fingerprint);
      cJSON_AddItemToObject(e, "metrics", m);
      cJSON_AddItemToObject(checks, sc->name, e);
      printf("baseline: %s:", sc->name);
      if (!oe) printf(" new entry");
      else if (!cJSON_IsString(ofp) || strcmp(ofp->valuestring, sc->fingerprint))
        printf(" definition changed (fingerprint %s -> %s)",
               cJSON_IsString(ofp) ? ofp->valuestring : "?", sc->fingerprint);
      for (k = 0; k < LOWP_METRIC_COUNT; k++) {
        const char *mn = lowp_metric_name((lowp_metric_t)k);
        double nv = lowp_metric_value(&r->res, (lowp_metric_t)k);
        double ov = om ? lowp_chk_get_num(cJSON_GetObjectItemCaseSensitive(om, mn)) : NAN;
        if (isnan(nv) && isnan(ov)) continue;
        if (oe && (nv == ov)) continue;
        if (oe) printf(" %s %.6g -> %.6g", mn, ov, nv);
        else printf(" %s %.6g", mn, nv);
      }
      if (oe && om) {
        int same = 1;
        for (k = 0; k < LOWP_METRIC_COUNT; k++) {
          double nv = lowp_metric_value(&r->res, (lowp_metric_t)k);
          double ov = lowp_chk_get_num(cJSON_GetObjectItemCaseSensitive(om, lowp_metric_name((lowp_metric_t)k)));
          if (!(nv == ov || (isnan(nv) && isnan(ov)))) same = 0;
        }
        if (same && cJSON_IsString(ofp) && !strcmp(ofp->valuestring, sc->fingerprint))
          printf(" unchanged");
      }
      printf("\n");
    }
  }
  st = lowp_chk_write_json(spec->baseline, root);
  cJSON_Delete(root);
  return st;
}

