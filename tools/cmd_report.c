/* lowp report -- run every experiment and build one static HTML page */

/*
 * Each experiment runs into DIR/<name>/ exactly as `lowp run` would; then
 * DIR/index.html is generated from the results.json files: first document
 * 004's six exercises, each mapped to the experiments that answer it (found
 * by name at run time; exercise 5 to amp-speedup, or a "needs a GPU" note
 * where this build has none) with the first sentence of their answers and
 * their key numbers (results.key_numbers, experiments/results.h
 * lowp_result_key; for an experiment without them, the columns of one of
 * its tables named in table_keys below), and
 * the claims ledger (verdict categories with counts, every claim that does
 * not simply hold with the document's words); then one section per
 * experiment that opens with its question and answer, then method,
 * verdicts, tables and plots. Plain HTML and CSS, no JavaScript, all text
 * escaped. The whole report is written into a
 * temporary folder beside DIR and put in place at the end (tools/output.h):
 * an experiment that fails with bad input (exit 2) or a signal stops the
 * report and publishes nothing.
 *
 * With --jobs N (default: the online cores) up to N experiments run at once,
 * a full report's longest first (report_costs), each as its own `lowp run NAME --out TMP/NAME` process (an experiment's
 * results depend on its seed alone, never on what ran beside it, so the
 * files are the same bytes as with --jobs 1, which runs them one after
 * another in this process). A child's standard output and error are kept
 * and written out in the catalogue's order once it and those before it are
 * done, so lowp report prints the same lines whatever finished first; only
 * the "started"/"took" progress lines on stderr follow the clock. The
 * children are registered with tools/cleanup.h: an interrupt stops them and
 * removes the temporary folder; a child that fails with bad input (exit 2)
 * or dies by a signal stops the others and publishes nothing. The children
 * get OMP_WAIT_POLICY=passive unless it is set (threads that outnumber the
 * cores must not spin).
 *
 * Run: lowp report --out reports/latest [--quick] [--jobs N]
 */

#define _POSIX_C_SOURCE 200809L

#include "cleanup.h"
#include "thp.h"
#include "cli.h"
#include "env.h"
#include "io/escape.h"
#include "output.h"
#include "report_diff.h"
#include "par.h"
#include "catalog.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <time.h>
#include <unistd.h>

int lowp_run_experiment(const lowp_experiment_t *e, int argc, char **argv,
                        const char *default_out);

/* ------------------------------------------------------ private helpers */

/* wall-clock seconds (progress lines only: nothing measured depends on it) */
static double wall_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void esc(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    default: fputc(*s, f);
    }
  }
}

/* Numbers right-aligned, text left-aligned (class "t"). */
static const char *cell_class(const cJSON *c) { return cJSON_IsNumber(c) ? "" : " class=\"t\""; }

static void cell(FILE *f, const cJSON *c) {
  char buf[64];
  if (cJSON_IsNumber(c)) {
    snprintf(buf, sizeof buf, "%.6g", c->valuedouble);
    esc(f, buf);
  } else if (cJSON_IsString(c)) esc(f, c->valuestring);
  else if (cJSON_IsBool(c)) fputs(cJSON_IsTrue(c) ? "yes" : "no", f);
  else {
    char *s = cJSON_PrintUnformatted(c);
    esc(f, s);
    free(s);
  }
}

static void html_tables(FILE *f, const cJSON *res) {
  const cJSON *t, *c, *row;
  cJSON_ArrayForEach(t, cJSON_GetObjectItem(res, "tables")) {
    const cJSON *title = cJSON_GetObjectItem(t, "title");
    fputs("<table>\n", f);
    if (cJSON_IsString(title)) { fputs("<caption>", f); esc(f, title->valuestring); fputs("</caption>\n", f); }
    fputs("<tr>", f);
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(t, "columns")) {
      fputs("<th>", f); cell(f, c); fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(t, "rows")) {
      fputs("<tr>", f);
      cJSON_ArrayForEach(c, row) {
        fprintf(f, "<td%s>", cell_class(c));
        cell(f, c);
        fputs("</td>", f);
      }
      fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
  }
}

/* The CSS class of a verdict: ok (holds), bad (wrong), mid (the rest). */
static const char *verdict_class(const char *vs) {
  if (!strncmp(vs, "wrong", 5)) return "bad";
  if (!strncmp(vs, "holds", 5) && !strstr(vs, "qualif")) return "ok";
  if (!strncmp(vs, "arithmetic re-checked", 21)) return "arith"; /* the claims ledger: nothing measured */
  return "mid";
}

static void html_verdicts(FILE *f, const cJSON *res) {
  const cJSON *v, *list = cJSON_GetObjectItem(res, "verdicts");
  int quotes = 0;
  if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0) return;
  cJSON_ArrayForEach(v, list) quotes |= cJSON_IsString(cJSON_GetObjectItem(v, "quote"));
  fprintf(f, "<table class=\"verdicts\">\n<tr><th>claim</th><th>source</th>%s<th>measured</th><th>verdict</th></tr>\n",
          quotes ? "<th>the document's words</th>" : "");
  cJSON_ArrayForEach(v, list) {
    const cJSON *verdict = cJSON_GetObjectItem(v, "verdict"), *q = cJSON_GetObjectItem(v, "quote");
    const char *vs = cJSON_IsString(verdict) ? verdict->valuestring : "";
    fputs("<tr><td class=\"t\">", f); cell(f, cJSON_GetObjectItem(v, "claim"));
    fputs("</td><td class=\"t\">", f); cell(f, cJSON_GetObjectItem(v, "source"));
    if (quotes) {
      fputs("</td><td class=\"t quote\">", f);
      if (cJSON_IsString(q)) esc(f, q->valuestring);
    }
    fputs("</td><td class=\"t\">", f); cell(f, cJSON_GetObjectItem(v, "measured"));
    fprintf(f, "</td><td class=\"%s\">", verdict_class(vs));
    esc(f, vs);
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n", f);
}

/* An experiment's text as its run wrote it into results.json (with the
   run's parameter values in place of "{key}"), or the registry's. */
static const char *text_of(const cJSON *root, const char *key, const char *fallback) {
  const cJSON *t = cJSON_GetObjectItem(root, key);
  return cJSON_IsString(t) ? t->valuestring : fallback;
}

/* results.see_also: links [{"text", "href"}] relative to the report's folder (e.g. another report beside it);
   an href with a scheme or a quote is not a link (the text is shown alone) */
static void html_see_also(FILE *f, const cJSON *res) {
  const cJSON *l;
  int n = 0;
  cJSON_ArrayForEach(l, cJSON_GetObjectItem(res, "see_also")) {
    const cJSON *t = cJSON_GetObjectItem(l, "text"), *h = cJSON_GetObjectItem(l, "href");
    if (!cJSON_IsString(t)) continue;
    fputs(n++ ? "; " : "<p class=\"files\">See also: ", f);
    if (cJSON_IsString(h) && !strchr(h->valuestring, ':') && !strpbrk(h->valuestring, "\"'<>")) {
      fputs("<a href=\"", f);
      esc(f, h->valuestring);
      fputs("\">", f);
      esc(f, t->valuestring);
      fputs("</a>", f);
    } else esc(f, t->valuestring);
  }
  if (n) fputs(".</p>\n", f);
}

/* One experiment's section: its question, then its answer, then how it was
   found (method, expectation), verdicts, tables and plots. */
static void html_experiment(FILE *f, const char *dir, const lowp_experiment_t *e, int rc) {
  char path[8400];
  char *text;
  cJSON *root, *res = NULL, *p;
  snprintf(path, sizeof path, "%s/%s/results.json", dir, e->name);
  text = lowp_report_slurp(path);
  root = text ? cJSON_Parse(text) : NULL;
  free(text);
  fprintf(f, "<section id=\"%s\">\n<h2>", e->name);
  esc(f, e->name);
  fputs("</h2>\n<p class=\"q\">", f);
  esc(f, text_of(root, "question", e->question));
  fputs("</p>\n", f);
  if (root) res = cJSON_GetObjectItem(root, "results");
  p = cJSON_GetObjectItem(res, "answer");
  if (cJSON_IsString(p)) { fputs("<p class=\"answer\"><b>Answer.</b> ", f); esc(f, p->valuestring); fputs("</p>\n", f); }
  else if (root) fputs("<p class=\"answer\"><b>Answer.</b> This experiment states no answer of its own: see its "
                       "verdicts, tables and plots below.</p>\n", f);
  html_see_also(f, res);
  fputs("<p><b>Method.</b> ", f);
  esc(f, text_of(root, "method", e->method));
  fputs("</p>\n<p><b>Expected.</b> ", f);
  esc(f, text_of(root, "expected", e->expected));
  fputs("</p>\n", f);
  if (!root) {
    fputs("<p class=\"bad\">This experiment did not produce results (see the run's messages).</p>\n</section>\n", f);
    return;
  }
  if (rc == 1) fputs("<p class=\"bad\">A verdict of this experiment failed.</p>\n", f);
  html_verdicts(f, res);
  html_tables(f, res);
  cJSON_ArrayForEach(p, cJSON_GetObjectItem(res, "plots")) {
    const cJSON *file = cJSON_GetObjectItem(p, "file"), *cap = cJSON_GetObjectItem(p, "caption");
    if (!cJSON_IsString(file)) continue;
    fputs("<figure><img src=\"", f);
    esc(f, e->name); fputc('/', f); esc(f, file->valuestring);
    fputs("\" alt=\"", f);
    if (cJSON_IsString(cap)) esc(f, cap->valuestring);
    fputs("\"><figcaption>", f);
    if (cJSON_IsString(cap)) esc(f, cap->valuestring);
    fputs("</figcaption></figure>\n", f);
  }
  fprintf(f, "<p class=\"files\">Files: <a href=\"%s/results.json\">results.json</a>, "
          "<a href=\"%s/summary.md\">summary.md</a> (CSV and gnuplot scripts beside them).</p>\n",
          e->name, e->name);
  fputs("</section>\n", f);
  cJSON_Delete(root);
}

/* The "results" object of an experiment's results.json (caller deletes *root). */
static const cJSON *load_results(const char *dir, const char *name, cJSON **root) {
  char path[8400], *text;
  snprintf(path, sizeof path, "%s/%s/results.json", dir, name);
  text = lowp_report_slurp(path);
  *root = text ? cJSON_Parse(text) : NULL;
  free(text);
  return *root ? cJSON_GetObjectItem(*root, "results") : NULL;
}

/* Document 004's six exercises (its "Exercises" section), each with the
   experiments that answer it, looked up by name when the report runs: an
   experiment that is not in this build (amp-speedup needs the GPU work)
   gets the note instead. */
typedef struct {
  const char *title, *task, *exps[3], *missing;
} exercise_t;

static const exercise_t exercises[] = {
    {"Precision comparison", "matrix multiplication in FP32, FP16 and BF16 for 1000 x 1000 matrices; the maximum "
     "element-wise difference; how the error grows with the size", {"matmul-precision", "error-growth", NULL}, NULL},
    {"Loss scaling", "a gradient that underflows in FP16 (e.g. 1e-6, which fp16 holds only as an inexact subnormal: "
     "tiny and inexact, the IEEE 754 meaning of underflow); whether it becomes zero without loss scaling; the "
     "minimum loss scale that preserves it", {"loss-scaling", "gradscaler-dynamics", NULL}, NULL},
    {"Dynamic range", "values uniform in [1e-8, 1e8]: the fraction lost converting to FP16 and to BF16",
     {"dynamic-range", NULL, NULL}, NULL},
    {"Softmax stability", "softmax without max-subtraction: the smallest input that overflows in FP16; the stable "
     "version", {"softmax-overflow", NULL, NULL}, NULL},
    {"Mixed-precision speedup", "a transformer layer in FP32 vs FP16 on a GPU: the speedup, and how much of it comes "
     "from compute and how much from memory bandwidth", {"amp-speedup", NULL, NULL},
     "Needs a GPU: this build has no amp-speedup experiment, so the speedup was not measured. The claims section "
     "grades the documents' speedup figures as not checkable here."},
    {"FP8 quantization", "per-tensor quantization to FP8 E4M3 of a trained model; accuracy against FP16/BF16",
     {"fp8-quantization", "fp8-scaling", NULL}, NULL},
};

/* The first sentence of text (lowp_report_sentence_len: up to ". " outside parentheses and brackets, not after
   an abbreviation such as "et al.", or the end), escaped: never cut inside "(Markidis et al. ...)". */
static void first_sentence(FILE *f, const char *text) {
  size_t n = lowp_report_sentence_len(text);
  char *buf = malloc(n + 1);
  if (!buf) return;
  memcpy(buf, text, n);
  buf[n] = '\0';
  esc(f, buf);
  free(buf);
}

/* Key numbers read from an experiment's tables, for experiments whose results.json has no key_numbers:
   in the table whose title starts with title and whose columns include label_col, filter_col and cols, each row whose filter_col is
   filter_val gives "label (filter): col value, ...". Matched by column name, so a renamed column
   falls back to the answer's first sentence alone. */
typedef struct {
  const char *exp, *title, *label_col, *filter_col, *filter_val, *cols[3]; /* title: the table's title starts so */
} table_key_t;

static const table_key_t table_keys[] = {
    {"amp-speedup", "Autocast policy", "device", "precision", "fp16",
     {"speedup over FP32", "time saved: from compute", "time saved: from memory traffic"}},
};

/* A number as the index prints it: integers up to 1e6 in full, the rest to 4 significant digits. */
static void num(FILE *f, double v) {
  char buf[64];
  if (v == floor(v) && fabs(v) < 1e6) snprintf(buf, sizeof buf, "%.0f", v);
  else snprintf(buf, sizeof buf, "%.4g", v);
  esc(f, buf);
}

/* One key number (experiments/results.h, lowp_result_key): a number (its name, '_' as ' ', labels
   it), a string, or an object {label, value, [min, max], [ci95], [seeds], [unit]}. */
static void key_number(FILE *f, const cJSON *k) {
  const cJSON *v = cJSON_IsObject(k) ? cJSON_GetObjectItem(k, "value") : k;
  const cJSON *lab = cJSON_GetObjectItem(k, "label"), *lo = cJSON_GetObjectItem(k, "min"),
              *hi = cJSON_GetObjectItem(k, "max"), *ci = cJSON_GetObjectItem(k, "ci95"),
              *sd = cJSON_GetObjectItem(k, "seeds"), *unit = cJSON_GetObjectItem(k, "unit");
  if (cJSON_IsString(lab)) esc(f, lab->valuestring);
  else {
    char buf[200];
    size_t i;
    snprintf(buf, sizeof buf, "%s", k->string ? k->string : "");
    for (i = 0; buf[i]; i++)
      if (buf[i] == '_') buf[i] = ' ';
    esc(f, buf);
  }
  fputs(": ", f);
  if (cJSON_IsNumber(v)) num(f, v->valuedouble);
  else if (cJSON_IsString(v)) esc(f, v->valuestring);
  else fputs("-", f);
  if (cJSON_IsString(unit)) esc(f, unit->valuestring);
  if (cJSON_IsNumber(ci)) { fputs(" +- ", f); num(f, ci->valuedouble); }
  if (cJSON_IsNumber(lo) && cJSON_IsNumber(hi)) {
    fputs(" [", f); num(f, lo->valuedouble); fputs(", ", f); num(f, hi->valuedouble);
    if (cJSON_IsNumber(sd)) { fputs(" over ", f); num(f, sd->valuedouble); fputs(" seeds", f); }
    fputs("]", f);
  }
}

/* The cell of row under the column called name in columns, or NULL. */
static const cJSON *column(const cJSON *columns, const cJSON *row, const char *name) {
  int i = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, columns) {
    if (cJSON_IsString(c) && !strcmp(c->valuestring, name)) return cJSON_GetArrayItem(row, i);
    i++;
  }
  return NULL;
}

/* table_keys' numbers of experiment name from its results; the count printed */
static int table_key_numbers(FILE *f, const char *name, const cJSON *res) {
  size_t q;
  int n = 0, c;
  const cJSON *t, *row;
  for (q = 0; q < sizeof table_keys / sizeof table_keys[0]; q++) {
    const table_key_t *x = &table_keys[q];
    if (strcmp(x->exp, name)) continue;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(res, "tables")) {
      const cJSON *cols = cJSON_GetObjectItem(t, "columns"), *title = cJSON_GetObjectItem(t, "title");
      if (!cJSON_IsString(title) || strncmp(title->valuestring, x->title, strlen(x->title))) continue;
      cJSON_ArrayForEach(row, cJSON_GetObjectItem(t, "rows")) {
        const cJSON *lab = column(cols, row, x->label_col), *fv = column(cols, row, x->filter_col);
        int have = 1;
        if (!cJSON_IsString(lab) || !cJSON_IsString(fv) || strcmp(fv->valuestring, x->filter_val)) continue;
        /* only a table that has every column, and a row with a value in each: never an empty slot (another
           table with the same label and filter columns, e.g. amp-speedup's memory-bound GEMMs, is not it) */
        for (c = 0; c < 3 && x->cols[c]; c++) {
          const cJSON *v = column(cols, row, x->cols[c]);
          if (!v || cJSON_IsNull(v) || (cJSON_IsString(v) && !v->valuestring[0])) have = 0;
        }
        if (!have) continue;
        fputs(n++ ? "; " : "", f);
        esc(f, lab->valuestring);
        fprintf(f, " (%s %s, %s):", x->filter_col, x->filter_val, x->title);
        for (c = 0; c < 3 && x->cols[c]; c++) {
          const cJSON *v = column(cols, row, x->cols[c]);
          fputs(c ? ", " : " ", f);
          esc(f, x->cols[c]);
          fputc(' ', f);
          cell(f, v);
        }
      }
    }
  }
  return n;
}

/* An experiment's key numbers for its exercise's row: results.key_numbers, else table_keys; the count printed */
static int html_key_numbers(FILE *f, const char *name, const cJSON *res) {
  const cJSON *k, *kn = cJSON_GetObjectItem(res, "key_numbers");
  int n = 0;
  fputs(" <span class=\"keys\">Key numbers: ", f);
  cJSON_ArrayForEach(k, kn) {
    fputs(n++ ? "; " : "", f);
    key_number(f, k);
  }
  if (!n) n = table_key_numbers(f, name, res);
  if (!n) fputs("none in its results.json (see its section)", f);
  fputs(".</span>", f);
  return n;
}

static void html_exercises(FILE *f, const char *dir) {
  size_t i, k;
  fputs("<section id=\"exercises\">\n<h2>The six exercises of document 004</h2>\n<p>Document 004 (Reduced "
        "Precision Training) ends with six exercises; each is answered by the experiments named, whose sections "
        "below give the full answer, method and evidence.</p>\n<ol class=\"exercises\">\n", f);
  for (i = 0; i < sizeof exercises / sizeof exercises[0]; i++) {
    const exercise_t *x = &exercises[i];
    int found = 0;
    fprintf(f, "<li id=\"exercise-%zu\"><b>", i + 1);
    esc(f, x->title);
    fputs("</b>: ", f);
    esc(f, x->task);
    fputs(".", f);
    for (k = 0; k < 3 && x->exps[k]; k++) {
      const lowp_experiment_t *e = lowp_experiment_find(x->exps[k]);
      cJSON *root = NULL;
      const cJSON *res, *a;
      if (!e) continue;
      found++;
      res = load_results(dir, e->name, &root);
      a = cJSON_GetObjectItem(res, "answer");
      fprintf(f, "<br><a href=\"#%s\">", e->name);
      esc(f, e->name);
      fputs("</a>: ", f);
      if (cJSON_IsString(a)) first_sentence(f, a->valuestring);
      else fputs("see its section.", f);
      if (res) (void)html_key_numbers(f, e->name, res);
      cJSON_Delete(root);
    }
    if (!found) {
      fputs("<br><span class=\"mid needs-gpu\">", f);
      esc(f, x->missing ? x->missing : "No experiment in this build answers it.");
      fputs("</span>", f);
    }
    fputs("</li>\n", f);
  }
  fputs("</ol>\n</section>\n", f);
}

/* The claims ledger in brief: the verdict categories with their counts, and
   every claim that does not simply hold, with the document's words. */
static void html_claims_summary(FILE *f, const char *dir) {
  cJSON *root = NULL;
  const cJSON *res = load_results(dir, "claims", &root), *c, *v;
  if (!lowp_experiment_find("claims") || !res) { cJSON_Delete(root); return; }
  fputs("<section id=\"claims-ledger\">\n<h2>The documents' claims, by verdict</h2>\n", f);
  c = cJSON_GetObjectItem(res, "answer");
  if (cJSON_IsString(c)) { fputs("<p class=\"answer\"><b>Answer.</b> ", f); esc(f, c->valuestring); fputs("</p>\n", f); }
  fputs("<table class=\"categories\">\n<tr><th>verdict category</th><th>claims</th><th>meaning</th></tr>\n", f);
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(res, "categories")) {
    const cJSON *lab = cJSON_GetObjectItem(c, "label");
    fprintf(f, "<tr><td class=\"t %s\">", verdict_class(cJSON_IsString(lab) ? lab->valuestring : ""));
    cell(f, lab);
    fputs("</td><td>", f); cell(f, cJSON_GetObjectItem(c, "count"));
    fputs("</td><td class=\"t\">", f); cell(f, cJSON_GetObjectItem(c, "meaning"));
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n<p>The claims that are not simply right, each with the document's own words (verbatim) beside "
        "the verdict; all of them, with what was measured, are in <a href=\"#claims\">claims</a>.</p>\n"
        "<table class=\"verdicts\">\n<tr><th>category</th><th>claim</th><th>the document's words</th>"
        "<th>verdict</th></tr>\n", f);
  cJSON_ArrayForEach(v, cJSON_GetObjectItem(res, "verdicts")) {
    const cJSON *cat = cJSON_GetObjectItem(v, "category"), *vd = cJSON_GetObjectItem(v, "verdict");
    if (!cJSON_IsString(cat) || !strcmp(cat->valuestring, "holds") || !strcmp(cat->valuestring, "qualified")) continue;
    fputs("<tr><td class=\"t\">", f); cell(f, cat);
    fputs("</td><td class=\"t\">", f); cell(f, cJSON_GetObjectItem(v, "claim"));
    fputs("</td><td class=\"t quote\">", f); cell(f, cJSON_GetObjectItem(v, "quote"));
    fprintf(f, "</td><td class=\"%s\">", verdict_class(cJSON_IsString(vd) ? vd->valuestring : ""));
    cell(f, vd);
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n</section>\n", f);
  cJSON_Delete(root);
}

/* flattened "key.sub: value" rows of the environment manifest o; with base, only the items of o that base lacks
   or holds with another value, each marked with the experiment exp whose manifest it is */
static void env_rows(FILE *f, const cJSON *o, const cJSON *base, const char *path, const char *exp) {
  const cJSON *c;
  char sub[300];
  cJSON_ArrayForEach(c, o) {
    const cJSON *b = base ? cJSON_GetObjectItemCaseSensitive(base, c->string) : NULL;
    snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", c->string);
    if (cJSON_IsObject(c)) { env_rows(f, c, b, sub, exp); continue; }
    if (exp && b && cJSON_Compare(b, c, 1)) continue; /* as in the first manifest */
    fputs("<tr><td class=\"t\">", f);
    esc(f, sub);
    if (exp) { fputs(" (", f); esc(f, exp); fputs(" only)", f); }
    fputs("</td><td class=\"t\">", f);
    if (cJSON_IsArray(c)) {
      const cJSON *x;
      int n = 0;
      cJSON_ArrayForEach(x, c) { fputs(n++ ? " " : "", f); cell(f, x); }
    } else cell(f, c);
    fputs("</td></tr>\n", f);
  }
}

/* The environment the experiments ran in (tools/env.h; the first experiment's manifest, then each item another
   experiment's manifest adds or holds with another value, such as claims' numpy, named with that experiment;
   and every revision the experiments name: a reference report is one revision), and the rows that depend on it:
   those differ on another machine and are outside "same seed, same bytes" (lowp report --diff expects them to
   differ). */
static void html_environment(FILE *f, const char *dir) {
  size_t k, n = lowp_experiment_count(), nrev = 0, i;
  char revs[32][128];
  int dirty = 0;
  cJSON *first = NULL;
  fputs("<section id=\"environment\">\n<h2>Environment</h2>\n", f);
  for (k = 0; k < n; k++) {
    const lowp_experiment_t *e = lowp_experiment_at(k);
    cJSON *root = NULL;
    const cJSON *env, *rev;
    (void)load_results(dir, e->name, &root);
    env = cJSON_GetObjectItem(root, "environment");
    rev = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "header"), "git_revision");
    if (cJSON_IsString(rev)) {
      for (i = 0; i < nrev && strcmp(revs[i], rev->valuestring); i++) {}
      if (i == nrev && nrev < 32) snprintf(revs[nrev++], sizeof revs[0], "%s", rev->valuestring);
      dirty |= strstr(rev->valuestring, "dirty") != NULL;
    }
    if (!first && cJSON_IsObject(env)) {
      fputs("<p>What the experiments ran on (each results.json holds this manifest as \"environment\"; "
            "the date is the run's UTC day; an item marked with an experiment is that experiment's alone):</p>\n"
            "<table class=\"env\">\n<tr><th>item</th><th>value</th></tr>\n", f);
      env_rows(f, env, NULL, "", NULL);
      first = cJSON_Duplicate(env, 1);
    } else if (first && cJSON_IsObject(env))
      env_rows(f, env, first, "", e->name);
    cJSON_Delete(root);
  }
  if (first) fputs("</table>\n", f);
  else fputs("<p class=\"mid\">The results carry no environment manifest (made by an older lowp).</p>\n", f);
  cJSON_Delete(first);
  fprintf(f, "<p class=\"%s\">Revisions: ", nrev == 1 && !dirty ? "ok" : "bad");
  for (i = 0; i < nrev; i++) { fputs(i ? ", " : "", f); esc(f, revs[i]); }
  fputs(nrev == 1 ? (dirty ? " (one revision, with uncommitted changes)" : " (one revision for the whole report)")
                  : " (more than one: this report mixes runs of different code)", f);
  fputs(".</p>\n<p>Rows that depend on the CPU or a library's build, outside the &quot;same seed, same bytes&quot; "
        "guarantee (another machine gives other numbers there; <code>lowp report --diff OTHER</code> expects "
        "them to differ):</p>\n<ul>\n", f);
  for (k = 0; k < n; k++) {
    const lowp_experiment_t *e = lowp_experiment_at(k);
    cJSON *dep = lowp_env_dependent(e->name);
    const cJSON *x;
    cJSON_ArrayForEach(x, dep) {
      const cJSON *m = cJSON_GetObjectItem(x, "match"), *fl = cJSON_GetObjectItem(x, "file"),
                  *why = cJSON_GetObjectItem(x, "why");
      fprintf(f, "<li><a href=\"#%s\">", e->name);
      esc(f, e->name);
      fputs("</a>: ", f);
      if (cJSON_IsString(m)) { fputs("rows and sentences that mention &quot;", f); esc(f, m->valuestring); fputs("&quot;", f); }
      if (cJSON_IsString(fl)) { fputs("the file ", f); esc(f, fl->valuestring); }
      fputs(": ", f);
      if (cJSON_IsString(why)) esc(f, why->valuestring);
      {
        const cJSON *w = cJSON_GetObjectItem(x, "when"), *it;
        int nw = 0;
        fputs(cJSON_IsArray(w) ? " (differs where " : " (differs from run to run)", f);
        cJSON_ArrayForEach(it, w) {
          fputs(nw++ ? " or " : "", f);
          if (cJSON_IsString(it)) esc(f, it->valuestring);
        }
        if (cJSON_IsArray(w)) fputs(" differs)", f);
      }
      fputs("</li>\n", f);
    }
    cJSON_Delete(dep);
  }
  fputs("</ul>\n</section>\n", f);
}

/* ------------------------------------------------------------ MPI ranks */

/*
 * Under mpirun the experiments are the work items: experiment k runs whole
 * on rank k % N (its own work items then stay on that rank: solo mode,
 * par/par.h) into that rank's folder; the other ranks send theirs to
 * rank 0 as one message each (no shared file system needed), which writes
 * them into the report folder. The files are the experiment's, byte for
 * byte, whichever rank ran it.
 */

/* one experiment's folder (flat: regular files) as one buffer:
   repeated [u32 name length][name][u64 size][bytes] */
static int pack_dir(const char *dir, char **buf, size_t *len) {
  DIR *d = opendir(dir);
  struct dirent *ent;
  char *b = NULL;
  size_t n = 0;
  int bad = 0;
  if (!d) return 1;
  while (!bad && (ent = readdir(d)) != NULL) {
    char path[8700];
    struct stat st;
    FILE *f;
    uint32_t nl = (uint32_t)strlen(ent->d_name);
    uint64_t sz;
    char *nb;
    if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..")) continue;
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) { bad = 1; break; }
    sz = (uint64_t)st.st_size;
    nb = realloc(b, n + 4 + nl + 8 + (size_t)sz);
    if (!nb) { bad = 1; break; }
    b = nb;
    memcpy(b + n, &nl, 4);
    memcpy(b + n + 4, ent->d_name, nl);
    memcpy(b + n + 4 + nl, &sz, 8);
    f = fopen(path, "rb");
    if (!f || fread(b + n + 4 + nl + 8, 1, (size_t)sz, f) != (size_t)sz) bad = 1;
    if (f) fclose(f);
    n += 4 + nl + 8 + (size_t)sz;
  }
  closedir(d);
  if (bad) { free(b); return 1; }
  *buf = b;
  *len = n;
  return 0;
}

/* the inverse, into dir (created); 0 or 1 */
static int unpack_dir(const char *dir, const char *b, size_t n) {
  size_t off = 0;
  if (mkdir(dir, 0777) != 0) return 1;
  while (off < n) {
    uint32_t nl;
    uint64_t sz;
    char name[256], path[8700];
    FILE *f;
    int ok;
    if (n - off < 4) return 1;
    memcpy(&nl, b + off, 4);
    if (nl == 0 || nl >= sizeof name || n - off - 4 < (size_t)nl + 8) return 1;
    memcpy(name, b + off + 4, nl);
    name[nl] = '\0';
    if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) return 1;
    memcpy(&sz, b + off + 4 + nl, 8);
    off += 4 + nl + 8;
    if (sz > n - off) return 1;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (!f) return 1;
    ok = fwrite(b + off, 1, (size_t)sz, f) == (size_t)sz;
    ok = (fclose(f) == 0) && ok;
    if (!ok) return 1;
    off += (size_t)sz;
  }
  return 0;
}

/* Collective: run this rank's experiments into root, then move the others'
   folders to rank 0 (root there is the report's temporary folder). rcs[k]
   is experiment k's status on rank 0. Returns 2 when the job failed (on
   the rank that speaks; the others have exited), else 0. */
static int report_ranks(int *rcs, size_t n, int quick, char **qargv, const char *root) {
  int me = lowp_par_rank(), np = lowp_par_size(), failed = 0;
  size_t k;
  lowp_par_solo(1);
  for (k = 0; k < n; k++) {
    const lowp_experiment_t *e = lowp_experiment_at(k);
    if ((int)(k % (size_t)np) != me) continue;
    if (me == 0)
      fprintf(stderr, "lowp report: [%zu/%zu] %s (rank 0 of %d; the others run theirs at once)\n",
              k + 1, n, e->name, np);
    rcs[k] = lowp_run_experiment(e, quick ? 1 : 0, qargv, root);
    if (rcs[k] == 2) { failed = 1; break; } /* its message is printed */
  }
  lowp_par_solo(0);
  if (lowp_par_sync(failed)) return 2;
  /* Every message is sent and received even after a failure on either
     side (a folder that cannot be read or written): a rank that left the
     exchange early would leave another blocked in a send or a receive it
     never matches (issue 30); the failure ends the job after the loop. */
  {
    char why[9000] = "";
    for (k = 0; k < n; k++) {
      const lowp_experiment_t *e = lowp_experiment_at(k);
      int owner = (int)(k % (size_t)np);
      char dir[8400];
      snprintf(dir, sizeof dir, "%s/%s", root, e->name);
      if (owner == 0) continue;
      if (me == owner) {
        char *b = NULL;
        size_t len = 0;
        int32_t head[2] = {rcs[k], 0};
        /* LOWP_FAULT=report-exchange:R (par/par.h): this folder cannot be read */
        head[1] = lowp_par_fault("report-exchange") ? 1 : pack_dir(dir, &b, &len);
        if (lowp_par_send(head, sizeof head, 0) || (!head[1] && lowp_par_send(b, len, 0)))
          lowp_cli_die("report", "rank %d: sending the results of %s failed", me, e->name);
        free(b);
        if (head[1] && !why[0])
          snprintf(why, sizeof why, "rank %d: cannot read its folder of %s", me, e->name);
      } else if (me == 0) {
        void *h = NULL, *b = NULL;
        size_t hl = 0, len = 0;
        int32_t head[2];
        if (lowp_par_recv(&h, &hl, owner) || hl != sizeof head) {
          free(h);
          lowp_cli_die("report", "receiving the results of %s from rank %d failed", e->name, owner);
        }
        memcpy(head, h, sizeof head);
        free(h);
        if (head[1]) continue; /* the owner says why after the loop */
        if (!why[0])
          fprintf(stderr, "lowp report: [%zu/%zu] %s (from rank %d)\n", k + 1, n, e->name, owner);
        if (lowp_par_recv(&b, &len, owner))
          lowp_cli_die("report", "receiving the results of %s from rank %d failed", e->name, owner);
        if (!why[0] && (lowp_par_fault("report-exchange") || unpack_dir(dir, b, len)))
          snprintf(why, sizeof why, "writing the results of %s from rank %d into '%s' failed", e->name,
                   owner, root);
        free(b);
        rcs[k] = head[0];
      }
    }
    if (why[0]) lowp_cli_die("report", "%s", why);
  }
  lowp_par_sync(0);
  return 0;
}

/* ------------------------------------------- experiments in processes */

#ifdef NSIG
#define REPORT_NSIG NSIG
#else
#define REPORT_NSIG 65
#endif

typedef struct {
  long pid;     /* running child, 0 = not started or done */
  FILE *out;    /* its stdout and stderr, kept (anonymous temporary files) */
  FILE *err;
  double t0;    /* wall clock at its start (progress only) */
  int done;
  int status;   /* raw wait status */
} report_job_t;

/* copy what a child wrote (rewound) to stream to; 0 or -1 */
static int replay(FILE *from, FILE *to) {
  char buf[65536];
  size_t m;
  if (!from) return 0;
  if (fflush(from) != 0 || fseek(from, 0, SEEK_SET) != 0) return -1;
  while ((m = fread(buf, 1, sizeof buf, from)) > 0)
    if (fwrite(buf, 1, m, to) != m) return -1;
  return ferror(from) ? -1 : 0;
}

/* Start `lowp run NAME --out DIR/NAME [--quick]` as a child of this one:
   the same executable (/proc/self/exe), the same environment; its stdout
   and stderr into j->out and j->err. The child gets default signal
   handlers before signals are unblocked (the parent's handler would remove
   the parent's temporaries) and dies with its parent. 0 or -1. */
static int start_child(report_job_t *j, const char *name, const char *root, int quick) {
  char dir[8400];
  char *args[7];
  sigset_t all, old;
  pid_t pid, parent = getpid();
  int na = 0, fo, fe;
  snprintf(dir, sizeof dir, "%s/%s", root, name);
  args[na++] = "lowp";
  args[na++] = "run";
  args[na++] = (char *)name;
  args[na++] = "--out";
  args[na++] = dir;
  if (quick) args[na++] = "--quick";
  args[na] = NULL;
  j->out = tmpfile();
  j->err = tmpfile();
  if (!j->out || !j->err) return -1;
  fo = fileno(j->out);
  fe = fileno(j->err);
  fflush(stdout);
  fflush(stderr);
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &old);
  pid = fork();
  if (pid == 0) {
    int sig, in;
    /* its own process group: an interrupt of lowp report kills the group
       (tools/cleanup.c), so what the child started (gnuplot) goes with it */
    setpgid(0, 0);
    for (sig = 1; sig < REPORT_NSIG; sig++) signal(sig, SIG_DFL); /* SIGKILL, SIGSTOP: refused, harmless */
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127); /* lowp report died before prctl */
#else
    (void)parent;
#endif
    sigprocmask(SIG_SETMASK, &old, NULL);
    in = open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, 0) < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(127);
    execv("/proc/self/exe", args);
    _exit(127);
  }
  if (pid > 0) setpgid(pid, pid); /* also here: no window where it is in lowp's group */
  if (pid > 0 && lowp_cleanup_child((long)pid, 1) != 0) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    pid = -1;
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (pid < 0) return -1;
  j->pid = (long)pid;
  j->t0 = wall_seconds();
  return 0;
}

/* Wait for one of the children in jobs[0..n) to end; its index. */
static size_t wait_child(report_job_t *jobs, size_t n) {
  for (;;) {
    siginfo_t info;
    size_t k;
    memset(&info, 0, sizeof info);
    if (waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) != 0) {
      if (errno == EINTR) continue;
      lowp_cli_die("report", "waiting for the experiments failed (%s)", strerror(errno));
    }
    for (k = 0; k < n; k++)
      if (jobs[k].pid == (long)info.si_pid) break;
    lowp_cleanup_child((long)info.si_pid, 0); /* before it is reaped: its pid is not reused yet */
    if (k == n) { waitpid(info.si_pid, NULL, 0); continue; } /* not one of ours */
    while (waitpid((pid_t)jobs[k].pid, &jobs[k].status, 0) < 0 && errno == EINTR) {}
    jobs[k].pid = 0;
    jobs[k].done = 1;
    return k;
  }
}

/* Stop every child still running (SIGKILL) and reap it; close the files. */
static void stop_jobs(report_job_t *jobs, size_t n) {
  size_t k;
  for (k = 0; k < n; k++) {
    if (jobs[k].pid > 0) {
      kill(-(pid_t)jobs[k].pid, SIGKILL); /* its group: what it started too */
      kill((pid_t)jobs[k].pid, SIGKILL);
      lowp_cleanup_child(jobs[k].pid, 0);
      while (waitpid((pid_t)jobs[k].pid, NULL, 0) < 0 && errno == EINTR) {}
      jobs[k].pid = 0;
    }
    if (jobs[k].out) fclose(jobs[k].out);
    if (jobs[k].err) fclose(jobs[k].err);
    jobs[k].out = jobs[k].err = NULL;
  }
}

/* What an experiment of a full report takes, in seconds on the 2 cores it shares with the others (AMD
   EPYC, 2 cores, LOWP_ISA=avx2, 2026-11-30), for the order the children start in: the longest first
   (Graham's LPT rule: the makespan within 4/3 of the best), so that the two longest do not end the
   report one after the other on one core (8 min 4 s -> 6 min 32 s with this round's kernels). Only the
   start order follows it: what each child computes and what lowp report prints do not. An experiment
   not listed starts first (it may be long). A quick report (seconds, 0.5 to 11 an experiment) starts in
   the catalogue's order: there the order changed no total measurably, and the tests that stop a quick
   report at its first failure (cli_outputs) or interrupt it (cli_signals) waited for the long ones. */
static const struct {
  const char *name;
  double secs;
} report_costs[] = {{"fp8-quantization", 300},  {"matmul-precision", 240},   {"order-revelation", 90},
                    {"error-growth", 75},       {"allreduce-precision", 20}, {"gradscaler-dynamics", 15},
                    {"claims", 10},             {"fp8-scaling", 7},          {"softmax-overflow", 4},
                    {"amp-speedup", 4},         {"master-weights", 4},       {"dynamic-range", 3},
                    {"autocast-policy", 3},     {"formats", 2},              {"tensor-core-models", 1.5},
                    {"loss-scaling", 0.7}};

static double report_cost(const char *name) {
  size_t i;
  for (i = 0; i < sizeof report_costs / sizeof report_costs[0]; i++)
    if (!strcmp(report_costs[i].name, name)) return report_costs[i].secs;
  return HUGE_VAL;
}

/* ord[0..n): the catalogue's indices, for a full report the costliest first (ties in catalogue order) */
static void start_order(size_t *ord, size_t n, int quick) {
  size_t i, j;
  for (i = 0; i < n; i++) {
    double c = quick ? 0 : report_cost(lowp_experiment_at(i)->name);
    for (j = i; j > 0 && !quick && report_cost(lowp_experiment_at(ord[j - 1])->name) < c; j--) ord[j] = ord[j - 1];
    ord[j] = i;
  }
}

/* Run the n experiments, up to njobs at once, into root; rcs[k] their
   statuses (0 or 1). They start in start_order; their output is written in
   catalogue order. Returns 0, or 2 after a failure (said; the other children
   stopped). */
static int report_jobs(int *rcs, size_t n, int quick, int njobs, const char *root) {
  report_job_t *jobs = calloc(n ? n : 1, sizeof *jobs);
  size_t *ord = calloc(n ? n : 1, sizeof *ord);
  size_t next = 0, flushed = 0, running = 0, k;
  int fail = 0;
  char why[600] = "";
  if (!jobs || !ord) lowp_cli_die("report", "out of memory");
  start_order(ord, n, quick);
  /* The children's OpenMP threads (each as many as the cores) outnumber
     the cores: idle ones that spin (libgomp's default) take the cores the
     working ones need, so they wait passively unless the user chose
     (matmul-precision at n <= 512, 2 seeds, AVX2, 2 cores under load: 8.7
     -> 4.8-7.4 s of CPU, the same bytes) */
  setenv("OMP_WAIT_POLICY", "passive", 0);
  while (flushed < n && !fail) {
    while (!fail && next < n && running < (size_t)njobs) {
      const size_t i = ord[next];
      const lowp_experiment_t *e = lowp_experiment_at(i);
      if (start_child(&jobs[i], e->name, root, quick) != 0) {
        snprintf(why, sizeof why, "cannot start the experiment %s (%s)", e->name, strerror(errno));
        fail = 1;
        break;
      }
      fprintf(stderr, "lowp report: [%zu/%zu] %s started\n", i + 1, n, e->name);
      next++;
      running++;
    }
    if (fail) break;
    if (running) {
      report_job_t *j;
      const lowp_experiment_t *e;
      int st;
      k = wait_child(jobs, n);
      running--;
      j = &jobs[k];
      e = lowp_experiment_at(k);
      st = j->status;
      if (WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 1)) {
        rcs[k] = WEXITSTATUS(st);
        fprintf(stderr, "lowp report: [%zu/%zu] %s took %.1f s\n", k + 1, n, e->name, wall_seconds() - j->t0);
      } else {
        /* its own message (exit 2: bad input or a write error) first */
        fflush(stdout);
        replay(j->err, stderr);
        if (WIFSIGNALED(st))
          snprintf(why, sizeof why, "the experiment %s was ended by signal %d; nothing was published",
                   e->name, WTERMSIG(st));
        else if (WEXITSTATUS(st) == 127)
          snprintf(why, sizeof why, "the experiment %s could not be started (/proc/self/exe)", e->name);
        else if (WEXITSTATUS(st) != 2)
          snprintf(why, sizeof why, "the experiment %s ended with status %d; nothing was published",
                   e->name, WEXITSTATUS(st));
        fail = 1;
        break;
      }
    }
    /* the finished prefix, in catalogue order */
    while (flushed < n && jobs[flushed].done) {
      report_job_t *j = &jobs[flushed];
      if (replay(j->out, stdout) != 0 || fflush(stdout) != 0 || replay(j->err, stderr) != 0) {
        snprintf(why, sizeof why, "cannot copy the output of %s", lowp_experiment_at(flushed)->name);
        fail = 1;
        break;
      }
      fclose(j->out);
      fclose(j->err);
      j->out = j->err = NULL;
      flushed++;
    }
  }
  stop_jobs(jobs, n);
  free(jobs);
  free(ord);
  if (fail && why[0]) fprintf(stderr, "lowp report: %s\n", why);
  return fail ? 2 : 0;
}

/* --jobs N: 1 .. 1024; -1 if not that */
static int parse_jobs(const char *s) {
  char *end;
  long v;
  if (!s || *s < '0' || *s > '9') return -1;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno || *end || v < 1 || v > 1024) return -1;
  return (int)v;
}

/* ----------------------------------------------------------------- main */

/* the index page: DIR/index.html from the experiments' results (rcs: their statuses);
   NULL where it cannot be opened, else the open file (the caller closes it) */
static FILE *write_index(const char *dir, const int *rcs, size_t n, int quick, char *fin, size_t finsz) {
  size_t k;
  FILE *f;
  snprintf(fin, finsz, "%s/index.html", dir);
  f = fopen(fin, "w");
  if (!f) return NULL;
  fputs("<!DOCTYPE html>\n<!-- generated by lowp report, do not edit -->\n<html lang=\"en\"><head>"
        "<meta charset=\"utf-8\"><title>lowp report</title>\n<style>\n"
        "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\n"
        "table{border-collapse:collapse;margin:1em 0;font-size:90%}td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}\n"
        "td.t{text-align:left}th{background:#eee}caption{font-weight:bold;text-align:left;padding:4px 0}\n"
        "img{max-width:100%;border:1px solid #ddd}figure{margin:1em 0}figcaption{font-size:90%;color:#555}\n"
        ".q{font-size:110%;font-style:italic}.answer{background:#eef6ee;padding:.6em;border-left:4px solid #4a4}\n"
        ".ok{color:#161}.bad{color:#a11;font-weight:bold}.mid{color:#a60}.arith{color:#246}section{border-top:2px solid #ccc;margin-top:2em}\n"
        ".quote{white-space:pre-wrap;font-family:monospace;font-size:85%;background:#f6f6f0}\n"
        "ol.exercises li{margin:.5em 0}.keys{color:#333;font-size:95%}\n"
        "</style></head><body>\n<h1>lowp report</h1>\n", f);
  fprintf(f, "<p>What low precision costs, measured against exact MPFR references. %s run; "
          "every number below was computed by the experiments listed, from the seed in each "
          "results.json header.</p>\n<ul>\n", quick ? "Quick-settings" : "Default-settings");
  for (k = 0; k < n; k++) {
    const lowp_experiment_t *e = lowp_experiment_at(k);
    cJSON *root = NULL;
    load_results(dir, e->name, &root);
    fprintf(f, "<li><a href=\"#%s\">", e->name);
    esc(f, e->name);
    fputs("</a>: ", f);
    esc(f, text_of(root, "question", e->question));
    fputs("</li>\n", f);
    cJSON_Delete(root);
  }
  fputs("<li><a href=\"#environment\">Environment</a>: the machine, libraries and revision of this run, and the "
        "rows that depend on them</li>\n", f);
  fputs("<li><a href=\"#exercises\">The six exercises of document 004</a> and <a href=\"#claims-ledger\">the "
        "documents' claims, by verdict</a>: summaries of the sections below</li>\n</ul>\n", f);
  html_environment(f, dir);
  html_exercises(f, dir);
  html_claims_summary(f, dir);
  for (k = 0; k < n; k++) html_experiment(f, dir, lowp_experiment_at(k), rcs[k]);
  fputs("</body></html>\n", f);
  return f;
}

/* --jobs 1: the experiments one after another in this process; 2 after an exit-2 experiment */
static int report_serial(int *rcs, size_t n, int quick, char **qargv, const char *dir) {
  size_t k;
  for (k = 0; k < n; k++) {
    const lowp_experiment_t *e = lowp_experiment_at(k);
    double t0 = wall_seconds();
    fprintf(stderr, "lowp report: [%zu/%zu] %s\n", k + 1, n, e->name);
    rcs[k] = lowp_run_experiment(e, quick ? 1 : 0, qargv, dir);
    if (rcs[k] == 2) return 2; /* its message is printed; exit 2 publishes nothing */
    fprintf(stderr, "lowp report: [%zu/%zu] %s took %.1f s\n", k + 1, n, e->name, wall_seconds() - t0);
  }
  return 0;
}

/* --no-svg: the SVG copies dropped, each folder's marker rewritten to list what is left;
   the folder that failed, or NULL */
static const char *drop_svgs(size_t n, const char *dir, char *bad, size_t badsz) {
  size_t k;
  for (k = 0; k < n; k++) {
    const lowp_experiment_t *e = lowp_experiment_at(k);
    char what[200];
    snprintf(bad, badsz, "%s/%s", dir, e->name);
    snprintf(what, sizeof what, "`lowp run %s`", e->name);
    if (lowp_outdir_drop_suffix(bad, ".svg", what) != 0) return bad;
  }
  return NULL;
}

int lowp_cmd_report(int argc, char **argv) {
  const char *out = "reports/latest", *other = NULL;
  char *qargv[1] = {"--quick"};
  int quick = 0, nosvg = 0, i, worst = 0, *rcs, njobs = 0;
  size_t k, n = lowp_experiment_count();
  char fin[4300];
  lowp_outdir_t od;
  FILE *f;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--no-svg")) nosvg = 1;
    else if (!strcmp(argv[i], "--out")) {
      if (i + 1 >= argc) lowp_cli_die("report", "option --out needs an argument (a folder)");
      out = argv[++i];
    }
    else if (!strncmp(argv[i], "--out=", 6)) out = argv[i] + 6;
    else if (!strcmp(argv[i], "--diff")) other = lowp_cli_need_arg("report", argc, argv, &i);
    else if (!strncmp(argv[i], "--diff=", 7)) other = argv[i] + 7;
    else if (!strcmp(argv[i], "--jobs")) {
      const char *v = lowp_cli_need_arg("report", argc, argv, &i);
      char safe[64];
      njobs = parse_jobs(v);
      if (njobs < 0) {
        lowp_escape_ctl(safe, sizeof safe, v);
        lowp_cli_die("report", "--jobs '%s': give a whole number of experiments to run at once, 1 to 1024", safe);
      }
    }
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      if (lowp_par_rank() == 0) /* once in an MPI job */
        printf("usage: lowp report [--out DIR] [--quick] [--no-svg] [--jobs N]\n"
               "       lowp report --diff OTHER [--out DIR]\n"
               "  runs every experiment into DIR/<name>/ and writes DIR/index.html (DIR: reports/latest);\n"
               "  --no-svg keeps only the PNG plots (the committed reference report): each folder's\n"
               "  .lowp-output then lists only the files that are there\n"
               "  --jobs N runs up to N experiments at once, each in its own process (default: the\n"
               "  online cores; 1 runs them one after another in this one); the files and what is\n"
               "  printed are the same bytes, in the same order, whatever N (under mpirun the ranks\n"
               "  share the experiments instead and N is not used)\n"
               "  --diff compares the report in DIR with the one in OTHER, experiment by experiment: each\n"
               "  difference is expected (a row that depends on the CPU or a library build: results.json\n"
               "  \"environment_dependent\") or UNEXPECTED; exit 0 none unexpected, 1 some, 2 bad input\n");
      return LOWP_EXIT_OK;
    } else lowp_cli_die("report", "unknown option '%s'; accepted: --out DIR, --quick, --no-svg, --jobs N, --diff OTHER",
                        argv[i]);
  }
  if (other) {
    char err[9000];
    int rc;
    if (quick || nosvg || njobs)
      lowp_cli_die("report", "--diff compares two existing reports: it takes no %s",
                   quick ? "--quick" : nosvg ? "--no-svg" : "--jobs");
    if (!*other) lowp_cli_die("report", "--diff needs a report folder");
    rc = lowp_par_rank() == 0 ? lowp_report_diff(out, other, stdout, err, sizeof err) : 0;
    if (rc == 2) lowp_cli_die("report", "%s", err);
    return rc;
  }
  lowp_thp_reexec(); /* the command line holds: the experiments' arrays in huge pages (tools/thp.h) */
  if (lowp_par_size() > (int)n)
    lowp_cli_die("report", "%d MPI ranks for %zu experiments: the ranks share whole "
                 "experiments, so run at most %zu", lowp_par_size(), n, n);
  if (lowp_par_size() > 1 && lowp_par_rank() != 0) {
    /* a scratch folder for this rank's experiments, removed at the end */
    const char *tmp = getenv("TMPDIR");
    char scratch[4200];
    snprintf(scratch, sizeof scratch, "%s/lowp-report-rank%d-%ld", tmp && *tmp ? tmp : "/tmp",
             lowp_par_rank(), (long)getpid());
    if (!freopen("/dev/null", "w", stdout))
      lowp_cli_die("report", "rank %d: cannot quiet its standard output", lowp_par_rank());
    lowp_outdir_begin(&od, "report", "--out", scratch);
  } else
    lowp_outdir_begin(&od, "report", "--out", out);
  rcs = calloc(n ? n : 1, sizeof *rcs);
  if (!rcs) lowp_cli_die("report", "out of memory");
  if (lowp_par_size() > 1) {
    lowp_par_sync(0); /* every rank has its folder */
    if (report_ranks(rcs, n, quick, qargv, od.tmp) == 2) {
      free(rcs);
      lowp_outdir_abort(&od);
      return LOWP_EXIT_USAGE;
    }
    if (lowp_par_rank() != 0) { /* rank 0 writes the report */
      free(rcs);
      lowp_outdir_abort(&od);
      lowp_par_sync(0);
      return LOWP_EXIT_OK;
    }
  }
  if (!njobs) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    njobs = c < 1 ? 1 : c > 1024 ? 1024 : (int)c;
  }
  if ((size_t)njobs > n) njobs = n ? (int)n : 1;
  if (lowp_par_size() == 1 && njobs > 1 && report_jobs(rcs, n, quick, njobs, od.tmp) != 0) {
    free(rcs);
    lowp_outdir_abort(&od);
    return LOWP_EXIT_USAGE;
  }
  if (lowp_par_size() == 1 && njobs == 1 && report_serial(rcs, n, quick, qargv, od.tmp) != 0) {
    free(rcs);
    lowp_outdir_abort(&od);
    return LOWP_EXIT_USAGE;
  }
  for (k = 0; k < n; k++)
    if (rcs[k] > worst) worst = rcs[k];
  if (nosvg) {
    char dir[4400];
    if (drop_svgs(n, od.tmp, dir, sizeof dir)) {
      free(rcs);
      lowp_outdir_abort(&od);
      lowp_cli_die("report", "--no-svg: cannot remove the SVG plots from '%s'", dir);
    }
  }
  f = write_index(od.tmp, rcs, n, quick, fin, sizeof fin);
  if (!f) lowp_cli_die("report", "cannot write '%s'", fin);
  free(rcs);
  if (fclose(f) != 0) lowp_cli_die("report", "cannot write '%s'", fin);
  lowp_outdir_publish(&od, "report", "`lowp report`");
  lowp_par_sync(0);
  printf("report: %s/index.html\n", od.final);
  return worst;
}
