/* lowp report --diff OTHER -- compare two report folders, telling expected differences from the rest */

/*
 * Same seed, same bytes holds on one machine; on another, the rows that
 * come from a CPU-specific library kernel or a timing differ. Each
 * results.json names them ("environment_dependent", tools/env.h: a match
 * string or a whole file, with why); an older report without the list gets
 * this build's (lowp_env_dependent). Every experiment folder of the
 * catalog is compared:
 *  - results.json as a tree, leaving out "environment" (what the run
 *    executed on: its differences are listed, and expected) and
 *    "environment_dependent"; a difference is expected when it sits under a
 *    key that mentions a match string, in a table row (an array of plain
 *    values) that does, or, in a text, in a sentence (split at ". "
 *    outside parentheses, the two texts' sentences aligned) that does;
 *  - every other text file (CSV, gnuplot script, summary.md, JSON) line by
 *    line, each differing line judged as a text; a file listed as a whole
 *    is expected to differ; PNG and SVG files are drawn from the CSV and
 *    script beside them and are not compared.
 * Exit 0: no unexpected difference; 1: some; 2: a folder that is not a
 * report, or a results.json that is not JSON.
 */

#define _POSIX_C_SOURCE 200809L

#include "report_diff.h"
#include "io/atomic.h"
#include "catalog.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "env.h"

#define SHOW 6 /* differences printed per experiment and kind */

typedef struct {
  const cJSON *deps[2]; /* the two runs' environment_dependent lists */
  const cJSON *env[2];  /* the two runs' environment manifests (NULL: a run made before them) */
  const char *held;     /* the last text's match whose "when" items are the same in both runs */
  cJSON *own;           /* this build's list, when a run has none */
  size_t nexp, nunexp;  /* differences of the current experiment */
  FILE *out;
  const char *exp;
} diff_t;

/* ------------------------------------------------------ private helpers */

char *lowp_report_slurp(const char *path) {
  FILE *f = lowp_fopen_regular(path); /* it seeks; a FIFO would block (io/atomic.h) */
  long n;
  char *buf;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return NULL;
  }
  buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
  if (buf) buf[n] = '\0';
  fclose(f);
  return buf;
}

static int ci_contains(const char *hay, const char *needle) {
  size_t n = strlen(needle), i;
  if (!hay || !n) return 0;
  for (; *hay; hay++) {
    for (i = 0; i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]); i++) {}
    if (i == n) return 1;
  }
  return 0;
}

/* the manifest item at a dotted path ("openblas.core"), or NULL */
static const cJSON *env_item(const cJSON *env, const char *path) {
  char key[64];
  while (env && *path) {
    size_t n = strcspn(path, ".");
    snprintf(key, sizeof key, "%.*s", (int)n, path);
    env = cJSON_GetObjectItemCaseSensitive(env, key);
    path += n + (path[n] == '.');
  }
  return env;
}

/* does entry e of a list apply to these two runs? Yes without "when" (it differs from run to run), when a run
   has no manifest (nothing to tell by), or when one of its "when" items differs between the runs */
static int dep_applies(const diff_t *d, const cJSON *e) {
  const cJSON *w = cJSON_GetObjectItem(e, "when"), *p;
  if (!cJSON_IsArray(w) || !d->env[0] || !d->env[1]) return 1;
  cJSON_ArrayForEach(p, w) {
    const cJSON *a = cJSON_IsString(p) ? env_item(d->env[0], p->valuestring) : NULL;
    const cJSON *b = cJSON_IsString(p) ? env_item(d->env[1], p->valuestring) : NULL;
    if (!a || !b || !cJSON_Compare(a, b, 1)) return 1;
  }
  return 0;
}

/* the first entry of the runs' environment_dependent lists (and this build's) whose member key fits text and
   that applies to the two runs: "match" a string text mentions (case-insensitive), "file" text itself; its
   value, or NULL (d->held: a fitting entry that does not apply, for the message) */
static const char *dep_lookup(diff_t *d, const char *key, const char *text) {
  int k;
  const cJSON *e;
  for (k = 0; k < 3; k++) {
    const cJSON *list = k < 2 ? d->deps[k] : d->own;
    cJSON_ArrayForEach(e, list) {
      const cJSON *m = cJSON_GetObjectItem(e, key);
      if (cJSON_IsString(m) && (key[0] == 'm' ? ci_contains(text, m->valuestring) : !strcmp(m->valuestring, text))) {
        if (dep_applies(d, e)) return m->valuestring;
        if (!d->held) d->held = m->valuestring;
      }
    }
  }
  return NULL;
}

/* the first match string text mentions, or NULL */
static const char *mentions(diff_t *d, const char *text) { return text ? dep_lookup(d, "match", text) : NULL; }

/* is file name listed as a whole? */
static const char *whole_file(diff_t *d, const char *name) { return dep_lookup(d, "file", name); }

/* one difference, counted and (up to SHOW of each kind) printed; an unexpected one that mentions a match whose
   environment items are the same in both runs says so */
static void report(diff_t *d, int expected, const char *where, const char *a, const char *b, const char *why) {
  size_t *n = expected ? &d->nexp : &d->nunexp;
  const char *held = !expected ? d->held : NULL;
  if ((*n)++ < SHOW)
    fprintf(d->out, "  %s %s: %.160s%s | %.160s%s%s%s%s%s%s%s\n", expected ? "expected:  " : "UNEXPECTED:", where,
            a ? a : "(absent)", a && strlen(a) > 160 ? "..." : "", b ? b : "(absent)",
            b && strlen(b) > 160 ? "..." : "", why ? " (mentions '" : "", why ? why : "", why ? "')" : "",
            held ? " (mentions '" : "", held ? held : "",
            held ? "', but what it depends on is the same in both runs)" : "");
  d->held = NULL;
}

/* Does the word before text[i] (a '.') abbreviate, so that ". " there ends no sentence? */
static int abbreviation(const char *text, size_t i) {
  static const char *const abbr[] = {"al", "e.g", "i.e", "cf", "vs", "Fig", "Eq", "Sec", "Thm", "Ch", "ed", "no",
                                     "vol", "approx", "etc", NULL};
  size_t k, b = i;
  while (b > 0 && text[b - 1] != ' ' && text[b - 1] != '(') b--;
  for (k = 0; abbr[k]; k++)
    if (i - b == strlen(abbr[k]) && !strncmp(text + b, abbr[k], i - b)) return 1;
  return 0;
}

size_t lowp_report_sentence_len(const char *text) {
  size_t i;
  int depth = 0;
  for (i = 0; text[i]; i++) {
    if (text[i] == '(' || text[i] == '[') depth++;
    else if ((text[i] == ')' || text[i] == ']') && depth > 0) depth--;
    else if (text[i] == '.' && text[i + 1] == ' ' && depth == 0 && !abbreviation(text, i)) return i + 1;
  }
  return i;
}

/* the sentences of a text (lowp_report_sentence_len, each with the space after it): "(OpenBLAS ...; one thread),
   errs by ..." and "(Higham 2002, Sec. 4.2; ...); its error grows like ..." stay in the sentence that names their
   subject */
static size_t sentences(const char *s, const char **start, size_t *len, size_t max) {
  size_t n = 0;
  const char *p = s;
  while (*p && n < max) {
    size_t l = lowp_report_sentence_len(p);
    if (p[l] == ' ') l++;
    start[n] = p;
    len[n++] = l;
    p += l;
  }
  return *p ? max + 1 : n; /* more than max: compared whole */
}

static int same_sentence(const char *a, size_t la, const char *b, size_t lb) { return la == lb && !memcmp(a, b, la); }

/* one differing sentence (either side may be absent), expected when it mentions a match */
static void diff_sentence(diff_t *d, const char *where, const char *a, size_t la, const char *b, size_t lb) {
  char *x = a ? strndup(a, la) : NULL, *y = b ? strndup(b, lb) : NULL;
  const char *why = mentions(d, x) ? mentions(d, x) : mentions(d, y);
  if ((a && !x) || (b && !y)) why = NULL;
  report(d, why != NULL, where, x, y, why);
  free(x);
  free(y);
}

/* two texts that differ: sentence by sentence, aligned by their longest common subsequence (a sentence added or
   dropped on one side shifts no other), each differing one expected when it mentions a match; the unmatched
   sentences between two common ones are paired in order */
static void diff_text(diff_t *d, const char *where, const char *a, const char *b, int ctx) {
  enum { MAXS = 400 };
  static const char *sa[MAXS + 1], *sb[MAXS + 1];
  static size_t la[MAXS + 1], lb[MAXS + 1];
  static unsigned short L[MAXS + 1][MAXS + 1];
  size_t na, nb, i, j;
  if (!strcmp(a, b)) return;
  if (ctx) { report(d, 1, where, a, b, NULL); return; }
  na = sentences(a, sa, la, MAXS);
  nb = sentences(b, sb, lb, MAXS);
  if (na > MAXS || nb > MAXS) { /* too many sentences to align: compared whole */
    diff_sentence(d, where, a, strlen(a), b, strlen(b));
    return;
  }
  for (i = na + 1; i-- > 0;)
    for (j = nb + 1; j-- > 0;)
      L[i][j] = (unsigned short)(i == na || j == nb ? 0
                                 : same_sentence(sa[i], la[i], sb[j], lb[j]) ? L[i + 1][j + 1] + 1
                                 : L[i + 1][j] > L[i][j + 1] ? L[i + 1][j] : L[i][j + 1]);
  i = j = 0;
  while (i < na || j < nb) {
    size_t i0 = i, j0 = j;
    if (i < na && j < nb && same_sentence(sa[i], la[i], sb[j], lb[j])) { i++; j++; continue; }
    while (i < na || j < nb) { /* the run of unmatched sentences up to the next common one */
      if (i < na && j < nb && same_sentence(sa[i], la[i], sb[j], lb[j]) && L[i][j] == L[i + 1][j + 1] + 1) break;
      if (j == nb || (i < na && L[i + 1][j] >= L[i][j + 1])) i++;
      else j++;
    }
    for (; i0 < i || j0 < j; i0 += i0 < i, j0 += j0 < j)
      diff_sentence(d, where, i0 < i ? sa[i0] : NULL, la[i0], j0 < j ? sb[j0] : NULL, lb[j0]);
  }
}

static int plain_row(const cJSON *a) {
  const cJSON *c;
  if (!cJSON_IsArray(a)) return 0;
  cJSON_ArrayForEach(c, a)
    if (cJSON_IsArray(c) || cJSON_IsObject(c)) return 0;
  return 1;
}

static void diff_json(diff_t *d, const cJSON *a, const cJSON *b, const char *path, int ctx);

static void diff_children(diff_t *d, const cJSON *a, const cJSON *b, const char *path, int ctx) {
  char sub[1024];
  const cJSON *c;
  if (cJSON_IsObject(a)) {
    cJSON_ArrayForEach(c, a) {
      const cJSON *o = cJSON_GetObjectItemCaseSensitive(b, c->string);
      snprintf(sub, sizeof sub, "%s.%s", path, c->string);
      if (!path[0] && (!strcmp(c->string, "environment") || !strcmp(c->string, "environment_dependent"))) continue;
      diff_json(d, c, o, sub, ctx || mentions(d, c->string));
      d->held = NULL;
    }
    cJSON_ArrayForEach(c, b)
      if (!cJSON_GetObjectItemCaseSensitive(a, c->string)) {
        snprintf(sub, sizeof sub, "%s.%s", path, c->string);
        if (!path[0] && (!strcmp(c->string, "environment") || !strcmp(c->string, "environment_dependent"))) continue;
        diff_json(d, NULL, c, sub, ctx || mentions(d, c->string));
      }
    return;
  }
  {
    int i, na = cJSON_GetArraySize(a), nb = cJSON_GetArraySize(b), n = na > nb ? na : nb;
    for (i = 0; i < n; i++) {
      const cJSON *x = cJSON_GetArrayItem(a, i), *y = cJSON_GetArrayItem(b, i);
      int row = 0;
      snprintf(sub, sizeof sub, "%s[%d]", path, i);
      if (plain_row(x) || plain_row(y)) { /* a table row: expected as a whole when it mentions a match */
        char *px = x ? cJSON_PrintUnformatted(x) : NULL, *py = y ? cJSON_PrintUnformatted(y) : NULL;
        row = mentions(d, px) || mentions(d, py);
        free(px);
        free(py);
      }
      diff_json(d, x, y, sub, ctx || row);
    }
  }
}

static void diff_json(diff_t *d, const cJSON *a, const cJSON *b, const char *path, int ctx) {
  char *pa, *pb;
  if (a && b && cJSON_Compare(a, b, 1)) return;
  if (a && b && cJSON_IsString(a) && cJSON_IsString(b)) {
    diff_text(d, path, a->valuestring, b->valuestring, ctx);
    return;
  }
  if (a && b && ((cJSON_IsObject(a) && cJSON_IsObject(b)) || (cJSON_IsArray(a) && cJSON_IsArray(b)))) {
    diff_children(d, a, b, path, ctx);
    return;
  }
  pa = a ? cJSON_PrintUnformatted(a) : NULL;
  pb = b ? cJSON_PrintUnformatted(b) : NULL;
  report(d, ctx || mentions(d, pa) || mentions(d, pb), path, pa, pb, NULL);
  free(pa);
  free(pb);
}

/* a text file, line by line */
static void diff_lines(diff_t *d, const char *name, char *a, char *b) {
  char where[600];
  size_t line = 0;
  char *pa = a, *pb = b;
  while (pa || pb) {
    char *ea = pa ? strchr(pa, '\n') : NULL, *eb = pb ? strchr(pb, '\n') : NULL;
    line++;
    if (ea) *ea = '\0';
    if (eb) *eb = '\0';
    snprintf(where, sizeof where, "%s:%zu", name, line);
    if (pa && pb) diff_text(d, where, pa, pb, 0);
    else {
      const char *x = pa ? pa : pb, *why = mentions(d, x);
      report(d, why != NULL, where, pa, pb, why);
    }
    pa = pa && ea && ea[1] ? ea + 1 : NULL;
    pb = pb && eb && eb[1] ? eb + 1 : NULL;
  }
}

static int skipped(const char *n) {
  size_t l = strlen(n);
  return n[0] == '.' || (l > 4 && (!strcmp(n + l - 4, ".png") || !strcmp(n + l - 4, ".svg"))) ||
         !strcmp(n, "results.json") || (l > 4 && !strcmp(n + l - 4, ".log"));
}

/* the other files of one experiment folder (both sides' names) */
static void diff_files(diff_t *d, const char *da, const char *db) {
  const char *dirs[2] = {da, db};
  int side;
  for (side = 0; side < 2; side++) {
    DIR *dir = opendir(dirs[side]);
    struct dirent *e;
    if (!dir) continue;
    while ((e = readdir(dir)) != NULL) {
      char p0[8600], p1[8600], *a, *b;
      if (skipped(e->d_name)) continue;
      snprintf(p0, sizeof p0, "%s/%s", da, e->d_name);
      snprintf(p1, sizeof p1, "%s/%s", db, e->d_name);
      a = lowp_report_slurp(p0);
      b = lowp_report_slurp(p1);
      if (side == 1 && a) { free(a); free(b); continue; } /* seen from side 0 */
      if (!a || !b || strcmp(a, b)) {
        const char *w = whole_file(d, e->d_name);
        if (w || !a || !b) report(d, w != NULL, e->d_name, a ? "(present)" : NULL, b ? "(present)" : NULL, NULL);
        else diff_lines(d, e->d_name, a, b);
      }
      free(a);
      free(b);
    }
    closedir(dir);
  }
}

/* the environments of the two runs, field by field (flattened); each line once per comparison */
typedef struct {
  char line[64][640];
  size_t n;
} seen_t;

static void env_lines(FILE *out, const cJSON *a, const cJSON *b, const char *path, seen_t *seen) {
  const cJSON *c;
  char sub[512];
  if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
    cJSON_ArrayForEach(c, a) {
      snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", c->string);
      env_lines(out, c, cJSON_GetObjectItemCaseSensitive(b, c->string), sub, seen);
    }
    return;
  }
  if ((!a && !b) || (a && b && cJSON_Compare(a, b, 1))) return; /* neither run has it, or the same */
  {
    char *pa = a ? cJSON_PrintUnformatted(a) : NULL, *pb = b ? cJSON_PrintUnformatted(b) : NULL, l[640];
    size_t i;
    snprintf(l, sizeof l, "  environment: %s: %.280s | %.280s", path, pa ? pa : "(absent)", pb ? pb : "(absent)");
    for (i = 0; i < seen->n && strcmp(seen->line[i], l); i++) {}
    if (i == seen->n) {
      fprintf(out, "%s\n", l);
      if (seen->n < 64) snprintf(seen->line[seen->n++], sizeof seen->line[0], "%s", l);
    }
    free(pa);
    free(pb);
  }
}

static int is_report(const char *dir) {
  char p[8400];
  struct stat st;
  snprintf(p, sizeof p, "%s/index.html", dir);
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* ----------------------------------------------------------- public API */

int lowp_report_diff(const char *a, const char *b, FILE *out, char *err, size_t errlen) {
  size_t k, n = lowp_experiment_count(), same = 0, onlyexp = 0, bad = 0;
  static seen_t seen;
  cJSON *roots[2] = {NULL, NULL};
  seen.n = 0;
  if (!is_report(a) || !is_report(b)) {
    snprintf(err, errlen, "'%s' is not a lowp report folder (no index.html in it)", is_report(a) ? b : a);
    return 2;
  }
  /* every results.json must parse before anything is said */
  for (k = 0; k < n; k++) {
    const char *name = lowp_experiment_at(k)->name;
    int s;
    for (s = 0; s < 2; s++) {
      char p[8400], *t;
      cJSON *j;
      snprintf(p, sizeof p, "%s/%s/results.json", s ? b : a, name);
      t = lowp_report_slurp(p);
      if (!t) continue;
      j = cJSON_Parse(t);
      free(t);
      if (!j || !cJSON_IsObject(j)) {
        cJSON_Delete(j);
        snprintf(err, errlen, "'%s' is not a results.json (not a JSON object)", p);
        return 2;
      }
      cJSON_Delete(j);
    }
  }
  fprintf(out, "lowp report --diff: %s against %s\n", a, b);
  for (k = 0; k < n; k++) {
    const char *name = lowp_experiment_at(k)->name;
    char pa[8400], pb[8400], da[8200], db[8200];
    char *ta, *tb;
    diff_t d;
    memset(&d, 0, sizeof d);
    d.out = out;
    d.exp = name;
    snprintf(da, sizeof da, "%s/%s", a, name);
    snprintf(db, sizeof db, "%s/%s", b, name);
    snprintf(pa, sizeof pa, "%s/results.json", da);
    snprintf(pb, sizeof pb, "%s/results.json", db);
    ta = lowp_report_slurp(pa);
    tb = lowp_report_slurp(pb);
    if (!ta && !tb) { free(ta); free(tb); continue; }
    fprintf(out, "%s:\n", name);
    roots[0] = ta ? cJSON_Parse(ta) : NULL;
    roots[1] = tb ? cJSON_Parse(tb) : NULL;
    free(ta);
    free(tb);
    d.deps[0] = cJSON_GetObjectItem(roots[0], "environment_dependent");
    d.deps[1] = cJSON_GetObjectItem(roots[1], "environment_dependent");
    d.env[0] = cJSON_GetObjectItem(roots[0], "environment");
    d.env[1] = cJSON_GetObjectItem(roots[1], "environment");
    d.own = lowp_env_dependent(name);
    if (roots[0] && roots[1]) /* what each run executed on: listed (new lines only), never a difference */
      env_lines(out, cJSON_GetObjectItem(roots[0], "environment"), cJSON_GetObjectItem(roots[1], "environment"), "",
                &seen);
    if (!roots[0] || !roots[1]) report(&d, 0, "results.json", roots[0] ? "(present)" : NULL,
                                       roots[1] ? "(present)" : NULL, NULL);
    else diff_json(&d, roots[0], roots[1], "", 0);
    diff_files(&d, da, db);
    if (!d.nexp && !d.nunexp) { fprintf(out, "  the same\n"); same++; }
    else {
      if (d.nexp > SHOW || d.nunexp > SHOW) fprintf(out, "  (%zu expected, %zu unexpected in all; %d of each shown)\n",
                                                     d.nexp, d.nunexp, SHOW);
      fprintf(out, "  %zu difference%s expected (environment-dependent rows), %zu unexpected\n", d.nexp,
              d.nexp == 1 ? "" : "s", d.nunexp);
      if (d.nunexp) bad++;
      else onlyexp++;
    }
    cJSON_Delete(d.own);
    cJSON_Delete(roots[0]);
    cJSON_Delete(roots[1]);
  }
  fprintf(out, "summary: %zu experiment%s the same, %zu with expected differences only, %zu with unexpected "
          "differences\n", same, same == 1 ? "" : "s", onlyexp, bad);
  return bad ? 1 : 0;
}
