/* lowp_chk_write_junit -- lowp check: JUnit XML for CI */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check_internal.h"
#include "io/escape.h"
#include "status.h"

/* ------------------------------------------------------ private helpers */

/* Text into XML 1.0: markup characters as entities; newline and tab kept;
   what XML cannot hold (other control characters, U+FFFE, U+FFFF) and
   bytes that are not UTF-8 (a plugin's message) as U+FFFD, so the file
   always parses. */
static void xml_escape(FILE *f, const char *s) {
  size_t len = strlen(s), i = 0;
  while (i < len) {
    uint32_t cp;
    size_t n = lowp_utf8_next(s + i, len - i, &cp);
    if (!n || !lowp_xml_char_ok(cp) || cp == '\r') {
      fputs("\xef\xbf\xbd", f); /* U+FFFD */
      i += n ? n : 1;
      continue;
    }
    switch (cp) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&apos;", f); break;
    default: fwrite(s + i, 1, n, f);
    }
    i += n;
  }
}

/* ----------------------------------------------------------- public API */

int lowp_chk_write_junit(const char *path, const lowp_chk_run_t *runs, int n, int failures,
                         double total) {
  lowp_atomic_t *wp = lowp_chk_new_out(path);
  int i, k, errors = 0;
  if (!wp) return LOWP_EIO;
  /* a check that could not be measured (the subject crashed, hung, failed
     to load; a reference failed) is an error, not a precision failure */
  for (i = 0; i < n; i++) errors += !runs[i].pass && !runs[i].measured;
  failures -= errors;
#define w (*wp)
  fprintf(w.fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(w.fp, "<testsuites tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n", n,
          failures, errors, total);
  fprintf(w.fp, "  <testsuite name=\"lowp check\" tests=\"%d\" failures=\"%d\" errors=\"%d\" "
          "skipped=\"0\" time=\"%.3f\">\n", n, failures, errors, total);
  for (i = 0; i < n; i++) {
    const lowp_chk_run_t *r = &runs[i];
    fprintf(w.fp, "    <testcase classname=\"lowp.check.");
    xml_escape(w.fp, r->sc->op->name);
    fprintf(w.fp, "\" name=\"");
    xml_escape(w.fp, r->sc->name);
    fprintf(w.fp, "\" time=\"%.3f\"", r->res.time_subject_s + r->res.time_exact_s);
    if (r->pass && !(r->fpx.on && r->measured)) {
      fprintf(w.fp, "/>\n");
      continue;
    }
    if (r->pass) { /* --fpx: the trace as properties */
      fprintf(w.fp, ">\n");
      lowp_chk_fpx_junit(w.fp, r);
      fprintf(w.fp, "    </testcase>\n");
      continue;
    }
    if (!r->measured) {
      fprintf(w.fp, ">\n      <error message=\"");
      xml_escape(w.fp, r->error);
      fprintf(w.fp, "\" type=\"error\">");
      xml_escape(w.fp, r->error);
      fprintf(w.fp, "</error>\n    </testcase>\n");
      continue;
    }
    fprintf(w.fp, ">\n");
    if (r->fpx.on) lowp_chk_fpx_junit(w.fp, r);
    fprintf(w.fp, "      <failure message=\"");
    if (!r->measured) xml_escape(w.fp, r->error);
    else
      for (k = 0; k < r->n_v; k++)
        if (!r->v[k].pass) { xml_escape(w.fp, r->v[k].msg); break; }
    fprintf(w.fp, "\" type=\"precision\">");
    if (!r->measured) xml_escape(w.fp, r->error);
    for (k = 0; k < r->n_v; k++) {
      char line[800];
      snprintf(line, sizeof line, "rule %d (%s): %s: %s\n", k + 1, r->v[k].what,
               r->v[k].pass ? "pass" : "FAIL", r->v[k].msg);
      xml_escape(w.fp, line);
    }
    if (r->error[0] && r->measured) xml_escape(w.fp, r->error);
    fprintf(w.fp, "</failure>\n    </testcase>\n");
  }
  fprintf(w.fp, "  </testsuite>\n</testsuites>\n");
  return ferror(w.fp) ? LOWP_EIO : LOWP_OK;
#undef w
}

