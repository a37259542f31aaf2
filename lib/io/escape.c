/* lowp_escape -- make untrusted text (names, values, paths) printable on one line */

#include "io/escape.h"

#include <stdarg.h>
#include <stdio.h>

size_t lowp_escape_ctl(char *out, size_t len, const char *in) {
  size_t n = 0;
  if (!len) return 0;
  for (; in && *in; in++) {
    unsigned char c = (unsigned char)*in;
    char esc[5];
    size_t k, m;
    if (c >= 0x20 && c != 0x7f) {
      esc[0] = (char)c;
      m = 1;
    } else if (c == '\n' || c == '\r' || c == '\t') {
      esc[0] = '\\';
      esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
      m = 2;
    } else {
      snprintf(esc, sizeof esc, "\\x%02x", c);
      m = 4;
    }
    if (n + m >= len) break; /* whole escapes only */
    for (k = 0; k < m; k++) out[n++] = esc[k];
  }
  out[n] = '\0';
  return n;
}

int lowp_errf(char *err, size_t errlen, int st, const char *fmt, ...) {
  va_list ap;
  char raw[1024];
  if (!err || !errlen) return st;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  lowp_escape_ctl(err, errlen, raw);
  return st;
}
