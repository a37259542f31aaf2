/* fuzz_plugin_table -- libFuzzer harness of lowp_plugin_table_check (a plugin's kernel table) */

/*
 * Input: text; each line is one table entry "name|op|in0|in1|out" (fields
 * may be missing: they become NULL; an empty name stays empty). Properties:
 *   - a table is accepted exactly when an independent check, written here
 *     from include/lowp_plugin.h, accepts it: names non-empty and unique,
 *     operations lowp knows, as many input formats as the operation has
 *     inputs (lowp format names with a container, "i64" for class indices),
 *     an output format;
 *   - a refusal has a one-line message.
 */

#include "fuzz.h"

#include "check/op.h"
#include "check/plugin.h"
#include "format/format.h"
#include "status.h"

static int dummy(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  (void)o; (void)i; (void)d;
  return 0;
}

/* a format name with a container: fp64, or <= 16 bits wide, or within binary32 */
static int fmt_ok(const char *s) {
  lowp_format_t f;
  int w;
  if (!s || lowp_format_parse(&f, s, NULL, 0) != LOWP_OK) return 0;
  w = lowp_format_width(&f);
  if (f.precision == 53 && f.emin == -1022 && f.emax == 1023) return 1;
  return w <= 16 || (f.precision <= 24 && f.emin >= -126 && f.emax <= 127);
}

static int oracle(const lowp_plugin_kernel_t *t, size_t n) {
  size_t i, j;
  if (n == 0 || n > 4096) return 0;
  for (i = 0; i < n; i++) {
    const lowp_op_t *op = t[i].op ? lowp_op_by_name(t[i].op) : NULL;
    int k;
    if (!t[i].name || !t[i].name[0] || !op || !fmt_ok(t[i].out)) return 0;
    for (k = 0; k < op->n_in; k++) {
      if (!t[i].in[k]) return 0;
      if (op->in_index[k] ? strcmp(t[i].in[k], "i64") != 0 : !fmt_ok(t[i].in[k])) return 0;
    }
    for (j = 0; j < i; j++)
      if (!strcmp(t[i].name, t[j].name)) return 0;
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lowp_plugin_kernel_t tab[64];
  char *text, *line, *save = NULL, err[500] = "";
  size_t n = 0;
  int st, want;
  if (size > 4096) return 0;
  text = fuzz_cstr(data, size);
  memset(tab, 0, sizeof tab);
  for (line = strtok_r(text, "\n", &save); line && n < 64; line = strtok_r(NULL, "\n", &save)) {
    char *f[5] = {0}, *p = line;
    int k;
    for (k = 0; k < 5 && p; k++) {
      char *bar = strchr(p, '|');
      f[k] = p;
      if (bar) *bar = '\0';
      p = bar ? bar + 1 : NULL;
    }
    tab[n].name = f[0];
    tab[n].op = f[1];
    tab[n].in[0] = f[2];
    tab[n].in[1] = f[3];
    tab[n].out = f[4];
    tab[n].fn = dummy;
    n++;
  }
  st = lowp_plugin_table_check(tab, n, err, sizeof err);
  want = oracle(tab, n);
  FUZZ_CHECK((st == LOWP_OK) == want, "table of %zu entries: lowp %s (%s), the oracle %s", n,
             st == LOWP_OK ? "accepts" : "refuses", err, want ? "accepts" : "refuses");
  if (st != LOWP_OK) FUZZ_CHECK(err[0] && !strchr(err, '\n'), "message '%s'", err);
  free(text);
  return 0;
}
