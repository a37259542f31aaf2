/* lowp_chk_baseline -- lowp check: the baseline file, read and checked against the spec, and rewritten */

#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_internal.h"
#include "cli.h"
#include "status.h"

/* ------------------------------------------------------ private helpers */

#define DIE(...) lowp_cli_die(LOWP_CHK_CMD, __VA_ARGS__)

/* The baseline's text (NUL-terminated), or NULL if there is no file. A
   FIFO, a device or a folder is refused, never waited on; at most 64 MiB. */
static char *read_text(const char *path, size_t *len) {
  struct stat st;
  char *buf;
  size_t got = 0;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return NULL;
  if (fstat(fd, &st) != 0) {
    close(fd);
    DIE("baseline %s: cannot read it", path);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    DIE("baseline %s: is %s, not a regular file", path, S_ISFIFO(st.st_mode) ? "a FIFO" :
        S_ISDIR(st.st_mode) ? "a folder" : "a device or socket");
  }
  if (st.st_size > ((off_t)64 << 20)) {
    close(fd);
    DIE("baseline %s: larger than 64 MiB", path);
  }
  buf = malloc((size_t)st.st_size + 1);
  if (!buf) DIE("baseline %s: out of memory", path);
  while (got < (size_t)st.st_size) {
    ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
    if (r <= 0) {
      close(fd);
      free(buf);
      DIE("baseline %s: cannot read it", path);
    }
    got += (size_t)r;
  }
  close(fd);
  buf[got] = '\0';
  *len = got;
  return buf;
}

/* A metric as stored: a number >= 0, null (does not apply) or "inf". */
static int metric_ok(const cJSON *v) {
  if (cJSON_IsNull(v)) return 1;
  if (cJSON_IsString(v)) return !strcmp(v->valuestring, "inf");
  return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0;
}

/* One entry {"fingerprint": "...", "metrics": {NAME: value, ...}}: NULL if
   fine, else what is wrong (in why). */
static const char *entry_bad(const cJSON *e, char *why, size_t len) {
  const cJSON *it, *fp = NULL, *mt = NULL;
  if (!cJSON_IsObject(e)) return "not an object";
  for (it = e->child; it; it = it->next) {
    const cJSON **slot = !strcmp(it->string, "fingerprint") ? &fp :
                         !strcmp(it->string, "metrics") ? &mt : NULL;
    if (!slot) return snprintf(why, len, "unknown key '%.100s'", it->string), why;
    if (*slot) return snprintf(why, len, "duplicate key '%s'", it->string), why;
    *slot = it;
  }
  if (!cJSON_IsString(fp)) return "\"fingerprint\" is missing or not a string";
  if (!cJSON_IsObject(mt)) return "\"metrics\" is missing or not an object";
  {
    int seen[LOWP_METRIC_COUNT] = {0};
    for (it = mt->child; it; it = it->next) {
      lowp_metric_t m;
      if (lowp_metric_parse(&m, it->string))
        return snprintf(why, len, "unknown metric '%.100s'", it->string), why;
      if (seen[m]++) return snprintf(why, len, "metric '%s' twice", it->string), why;
      if (!metric_ok(it))
        return snprintf(why, len, "metric '%s' is not a number >= 0, null or \"inf\"",
                        it->string), why;
    }
  }
  return NULL;
}

/* The file's structure: exactly lowp_baseline (a number), lowp_version (a
   string) and checks (an object) once each; every entry a check of the spec
   (once) and well formed. NULL if fine, else what is wrong. Fills
   b->entry. */
static const char *structure_bad(lowp_chk_baseline_t *b, const lowp_spec_t *spec, char *why,
                                 size_t len) {
  const cJSON *it, *fmt = NULL, *ver = NULL, *checks = NULL;
  if (!cJSON_IsObject(b->root)) return "not a lowp baseline file (not a JSON object)";
  for (it = b->root->child; it; it = it->next) {
    const cJSON **slot = !strcmp(it->string, "lowp_baseline") ? &fmt :
                         !strcmp(it->string, "lowp_version") ? &ver :
                         !strcmp(it->string, "checks") ? &checks : NULL;
    if (!slot) return snprintf(why, len, "unknown key '%.100s'", it->string), why;
    if (*slot) return snprintf(why, len, "duplicate key '%s'", it->string), why;
    *slot = it;
  }
  if (!cJSON_IsNumber(fmt) || !cJSON_IsObject(checks))
    return "not a lowp baseline file (\"lowp_baseline\" and \"checks\")";
  if (ver && !cJSON_IsString(ver)) return "\"lowp_version\" is not a string";
  b->checks = checks;
  for (it = checks->child; it; it = it->next) {
    const lowp_spec_check_t *sc = lowp_spec_find(spec, it->string);
    const char *eb;
    char w[200];
    if (!sc) {
      snprintf(why, len, "holds check '%.200s', which the spec does not have: it was written for "
               "another spec", it->string);
      return why;
    }
    if (b->entry[sc->index])
      return snprintf(why, len, "check '%.200s' twice", it->string), why;
    b->entry[sc->index] = it;
    if ((eb = entry_bad(it, w, sizeof w)))
      return snprintf(why, len, "check '%.200s': %.180s", it->string, eb), why;
  }
  return NULL;
}

/* ----------------------------------------------------------- public API */

double lowp_chk_get_num(const cJSON *j) {
  if (cJSON_IsNumber(j)) return j->valuedouble;
  if (cJSON_IsString(j) && !strcmp(j->valuestring, "inf")) return INFINITY;
  return NAN;
}

void lowp_chk_baseline_free(lowp_chk_baseline_t *b) {
  cJSON_Delete(b->root);
  free(b->entry);
  memset(b, 0, sizeof *b);
}

void lowp_chk_baseline_load(lowp_chk_baseline_t *b, const lowp_spec_t *spec,
                            lowp_chk_run_t *runs, int n_runs, int need, int updating) {
  char *buf, err[500], why[400];
  const char *bad;
  size_t len = 0;
  const cJSON *v;
  int i, m;
  memset(b, 0, sizeof *b);
  if (!spec->baseline) {
    if (need || updating)
      DIE("%s: the spec names no \"baseline\" file", updating ? "--update-baseline" :
          "a baseline rule");
    return;
  }
  for (i = 0; i < n_runs; i++)
    for (m = 0; m < LOWP_METRIC_COUNT; m++) runs[i].baseline[m] = NAN;
  buf = read_text(spec->baseline, &len);
  if (!buf) {
    if (need && !updating)
      DIE("baseline %s: cannot read it (run lowp check --update-baseline to create it)",
          spec->baseline);
    return;
  }
  b->entry = calloc((size_t)spec->n_checks + 1, sizeof *b->entry);
  if (!b->entry) DIE("out of memory");
  i = lowp_spec_json(&b->root, buf, len, err, sizeof err);
  free(buf);
  if (i) snprintf(why, sizeof why, "not a lowp baseline file (%.300s)", err);
  bad = i ? why : structure_bad(b, spec, why, sizeof why);
  if (bad) {
    /* being rewritten: what is there now does not matter */
    if (updating) { lowp_chk_baseline_free(b); return; }
    DIE("baseline %s: %s", spec->baseline, bad);
  }
  if (updating) return;
  if (cJSON_GetObjectItemCaseSensitive(b->root, "lowp_baseline")->valuedouble != LOWP_CHK_BASELINE_FORMAT)
    DIE("baseline %s: baseline format %g, this lowp writes %d (run --update-baseline)",
        spec->baseline, cJSON_GetObjectItemCaseSensitive(b->root, "lowp_baseline")->valuedouble,
        LOWP_CHK_BASELINE_FORMAT);
  v = cJSON_GetObjectItemCaseSensitive(b->root, "lowp_version");
  if (!cJSON_IsString(v) || strcmp(v->valuestring, LOWP_VERSION))
    DIE("baseline %s was written by lowp %s, this is lowp %s (run --update-baseline to accept "
        "the new version's numbers)", spec->baseline, cJSON_IsString(v) ? v->valuestring :
        "(unknown)", LOWP_VERSION);
  /* every check it holds must be in the spec (structure_bad), with the same definition */
  for (i = 0; i < spec->n_checks; i++) {
    const lowp_spec_check_t *sc = &spec->checks[i];
    const cJSON *fp = b->entry[i] ? cJSON_GetObjectItemCaseSensitive(b->entry[i], "fingerprint") : NULL;
    if (fp && strcmp(fp->valuestring, sc->fingerprint))
      DIE("baseline %s: check '%s' (checks[%d]) is defined differently from when the baseline "
          "was written (fingerprint %s, now %s): run --update-baseline", spec->baseline,
          sc->name, sc->index, fp->valuestring, sc->fingerprint);
  }
  for (i = 0; i < n_runs; i++) {
    const cJSON *e = b->entry[runs[i].sc->index], *mt;
    int uses = 0, k;
    for (k = 0; k < runs[i].sc->n_rules; k++)
      if (runs[i].sc->rules[k].rule.kind == LOWP_RULE_BASELINE) uses = 1;
    if (!uses) continue;
    if (!e)
      DIE("baseline %s has no entry for check '%s' (checks[%d]): written for another spec? run "
          "--update-baseline", spec->baseline, runs[i].sc->name, runs[i].sc->index);
    mt = cJSON_GetObjectItemCaseSensitive(e, "metrics");
    for (m = 0; m < LOWP_METRIC_COUNT; m++)
      runs[i].baseline[m] =
          lowp_chk_get_num(cJSON_GetObjectItemCaseSensitive(mt, lowp_metric_name((lowp_metric_t)m)));
    for (k = 0; k < runs[i].sc->n_rules; k++) {
      const lowp_spec_rule_t *ru = &runs[i].sc->rules[k];
      if (ru->rule.kind == LOWP_RULE_BASELINE && isnan(runs[i].baseline[ru->rule.metric]))
        DIE("baseline %s: check '%s' (checks[%d]) has no stored %s", spec->baseline,
            runs[i].sc->name, runs[i].sc->index, lowp_metric_name(ru->rule.metric));
    }
  }
}

/* the new baseline: the old entries of checks not run, the new of those run */
int lowp_chk_baseline_update(const lowp_spec_t *spec, const lowp_chk_baseline_t *old,
                             const lowp_chk_run_t *runs, int n) {
  cJSON *root = cJSON_CreateObject(), *checks = cJSON_CreateObject();
  int i, k, st;
  const lowp_chk_run_t **run_of = calloc((size_t)spec->n_checks + 1, sizeof *run_of);
  if (!run_of) DIE("out of memory");
  for (k = 0; k < n; k++) run_of[runs[k].sc->index] = &runs[k];
  cJSON_AddNumberToObject(root, "lowp_baseline", LOWP_CHK_BASELINE_FORMAT);
  cJSON_AddStringToObject(root, "lowp_version", LOWP_VERSION);
  cJSON_AddItemToObject(root, "checks", checks);
  for (i = 0; i < spec->n_checks; i++) {
    const lowp_spec_check_t *sc = &spec->checks[i];
    const lowp_chk_run_t *r = run_of[i];
    const cJSON *oe = old->entry ? old->entry[i] : NULL;
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
  free(run_of);
  st = lowp_chk_write_json(spec->baseline, root);
  cJSON_Delete(root);
  return st;
}

