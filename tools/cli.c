/* lowp_cli -- shared helpers of the lowp command line (tools/ only) */

#define _POSIX_C_SOURCE 200809L /* sigset_t (cleanup.h) under -std=c11 */

#include "cli.h"

#include "cleanup.h"
#include "format/number.h"
#include "io/escape.h"
#include "par.h"
#include "status.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* par/ exits failed MPI jobs itself, with the status of bad input */
_Static_assert(LOWP_PAR_EXIT == LOWP_EXIT_USAGE, "par/par.h and tools/cli.h disagree on exit 2");

void lowp_cli_die(const char *cmd, const char *fmt, ...) {
  char msg[4096], safe[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* the message quotes what the user typed: a newline in it must not make
     two lines, nor an escape sequence reach the terminal */
  lowp_escape_ctl(safe, sizeof safe, msg);
  /* in an MPI job only the lowest failed rank speaks; the others exit 2 (par/par.h) */
  if (lowp_par_sync(1)) fprintf(stderr, "lowp %s: %s\n", cmd, safe);
  lowp_stdout_discard(); /* one message: no second one about stdout at exit */
  exit(LOWP_EXIT_USAGE);
}

void lowp_cli_list_check(const char *cmd, const char *opt, const char *text, char sep) {
  size_t n = strlen(text), i;
  int bad = n == 0 || text[0] == sep || text[n - 1] == sep;
  for (i = 1; i < n && !bad; i++) bad = text[i] == sep && text[i - 1] == sep;
  if (bad)
    lowp_cli_die(cmd, "%s '%s': an empty item (a '%c' at the start, the end, or twice; or nothing at all)", opt,
                 text, sep);
}

void lowp_stdout_before_publish(const char *cmd, const char *what) {
  if (fflush(stdout) != 0 || ferror(stdout))
    lowp_cli_die(cmd, "cannot write to the standard output (a full disk or a closed file?): %s not written",
                 what);
}

const char *lowp_cli_need_arg(const char *cmd, int argc, char **argv, int *i) {
  if (*i + 1 >= argc) lowp_cli_die(cmd, "option %s needs an argument", argv[*i]);
  return argv[++*i];
}

lowp_format_t lowp_cli_format(const char *cmd, const char *text) {
  lowp_format_t f;
  char err[320];
  if (lowp_format_parse(&f, text, err, sizeof err) != 0)
    lowp_cli_die(cmd, "%s", err);
  return f;
}

size_t lowp_cli_format_list(const char *cmd, const char *text,
                            lowp_format_t *out, size_t max) {
  size_t n = 0;
  const char *s = text, *seps;
  if (!*text) lowp_cli_die(cmd, "empty format list: give names such as fp16,bf16, or all");
  if (!strcmp(text, "all")) {
    for (n = 0; n < lowp_format_count() && n < max; n++) out[n] = *lowp_format_at(n);
    return n;
  }
  /* items are separated by ',' -- but a spec "p=5,emin=.." uses ',' itself,
     so with a spec in the list the separator is ';' ("fp16;p=5,emin=-6,emax=7") */
  seps = strchr(text, ';') ? ";" : strchr(text, '=') ? "" : ",";
  if (!*seps) {
    if (max) out[0] = lowp_cli_format(cmd, text);
    return 1;
  }
  for (;;) {
    char name[256];
    size_t len = strcspn(s, seps);
    if (len == 0)
      lowp_cli_die(cmd, "empty format name in '%s' (a separator at the start, the end, or twice)",
                   text);
    if (len >= sizeof name) lowp_cli_die(cmd, "overlong format name in '%s'", text);
    if (n >= max) lowp_cli_die(cmd, "too many formats in '%s' (at most %zu)", text, max);
    memcpy(name, s, len);
    name[len] = '\0';
    out[n++] = lowp_cli_format(cmd, name);
    s += len;
    if (!*s) break;
    s++;
  }
  return n;
}

lowp_rounding_t lowp_cli_rounding(const char *cmd, const char *text) {
  lowp_rounding_t r;
  if (lowp_rounding_parse(&r, text) != 0)
    lowp_cli_die(cmd, "unknown rounding mode '%s'; accepted: rne rna rtz rup rdn rto sr", text);
  return r;
}

double lowp_cli_number(const char *cmd, const char *what, const char *text) {
  double v;
  /* format/number.h's grammar; out-of-range decimals round to nearest
     (1e999 is inf, 1e-999 is 0), as IEEE 754 says */
  if (lowp_parse_f64(&v, text) != 0)
    lowp_cli_die(cmd, "malformed %s '%s': expected a decimal (1e-6), a hex float "
                 "(0x1.8p-3), inf or nan", what, text);
  return v;
}

long long lowp_cli_int(const char *cmd, const char *what, const char *text,
                       long long lo, long long hi) {
  long long v;
  int s = lowp_parse_int(&v, text, lo, hi);
  if (s == LOWP_EPARSE)
    lowp_cli_die(cmd, "malformed %s '%s': expected an integer (decimal or 0x hex)", what, text);
  if (s != 0)
    lowp_cli_die(cmd, "%s %s out of range [%lld, %lld]", what, text, lo, hi);
  return v;
}
