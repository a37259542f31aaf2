/* lowp_escape -- make untrusted text (names, values, paths) printable on one line */

#include "io/escape.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

int lowp_verrf(char *err, size_t errlen, int st, const char *fmt, va_list ap) {
  char raw[4096]; /* every message in lib/ and kernels/ goes through here: room for a long path in one */
  if (!err || !errlen) return st;
  vsnprintf(raw, sizeof raw, fmt, ap);
  lowp_escape_ctl(err, errlen, raw);
  return st;
}

int lowp_errf(char *err, size_t errlen, int st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  st = lowp_verrf(err, errlen, st, fmt, ap);
  va_end(ap);
  return st;
}

size_t lowp_utf8_next(const char *s, size_t len, uint32_t *cp) {
  const unsigned char *u = (const unsigned char *)s;
  uint32_t c, min;
  size_t n, k;
  if (!len) return 0;
  c = u[0];
  if (c < 0x80) { *cp = c; return 1; }
  if (c >= 0xc2 && c <= 0xdf) { n = 2; c &= 0x1f; min = 0x80; }
  else if (c >= 0xe0 && c <= 0xef) { n = 3; c &= 0x0f; min = 0x800; }
  else if (c >= 0xf0 && c <= 0xf4) { n = 4; c &= 0x07; min = 0x10000; }
  else return 0; /* a continuation byte, 0xc0, 0xc1, 0xf5.. */
  if (len < n) return 0;
  for (k = 1; k < n; k++) {
    if ((u[k] & 0xc0) != 0x80) return 0;
    c = (c << 6) | (u[k] & 0x3f);
  }
  if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
  *cp = c;
  return n;
}

int lowp_utf8_valid(const char *s, size_t len, size_t *bad) {
  size_t i = 0;
  while (i < len) {
    uint32_t cp;
    size_t n = lowp_utf8_next(s + i, len - i, &cp);
    if (!n) {
      if (bad) *bad = i;
      return 0;
    }
    i += n;
  }
  return 1;
}

int lowp_xml_char_ok(uint32_t cp) {
  return cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) ||
         (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

int lowp_name_ok(const char *s) {
  size_t len = s ? strlen(s) : 0, i = 0;
  while (i < len) {
    uint32_t cp;
    size_t n = lowp_utf8_next(s + i, len - i, &cp);
    if (!n || cp < 0x20 || cp == 0x7f || !lowp_xml_char_ok(cp)) return 0;
    i += n;
  }
  return 1;
}

size_t lowp_utf8_sanitize(char *s) {
  size_t len = s ? strlen(s) : 0, i = 0, bad = 0;
  while (i < len) {
    uint32_t cp;
    size_t n = lowp_utf8_next(s + i, len - i, &cp);
    if (!n) {
      s[i++] = '?';
      bad++;
    } else {
      i += n;
    }
  }
  return bad;
}

int lowp_json_find_nul(const char *text, size_t len, size_t *off) {
  size_t i;
  for (i = 0; text && i < len; i++) {
    if (text[i] == '\0') {
      if (off) *off = i;
      return 1;
    }
    /* in a string every backslash starts an escape: skip what it escapes */
    if (text[i] == '\\' && i + 1 < len) {
      if (text[i + 1] == 'u' && i + 5 < len && !memcmp(text + i + 2, "0000", 4)) {
        if (off) *off = i;
        return 2;
      }
      i++;
    }
  }
  return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

int lowp_json_find_bad_number(const char *text, size_t len, size_t *off) {
  size_t i = 0, s, d;
  int in_str = 0, bad;
  while (text && i < len) {
    char c = text[i];
    if (in_str) {
      if (c == '\\') i++;
      else if (c == '"') in_str = 0;
      i++;
      continue;
    }
    if (c == '"') { in_str = 1; i++; continue; }
    if (c != '-' && !is_digit(c)) { i++; continue; }
    /* a number: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
    s = i;
    if (c == '-') i++;
    if (i >= len || !is_digit(text[i])) continue; /* "-" alone, "-Infinity": cJSON refuses them itself */
    bad = i + 1 < len && text[i] == '0' && is_digit(text[i + 1]);
    for (d = i; i < len && is_digit(text[i]); i++) {}
    if (!bad && i < len && text[i] == '.') {
      for (d = ++i; i < len && is_digit(text[i]); i++) {}
      bad = i == d;
    }
    if (!bad && i < len && (text[i] == 'e' || text[i] == 'E')) {
      i++;
      if (i < len && (text[i] == '+' || text[i] == '-')) i++;
      for (d = i; i < len && is_digit(text[i]); i++) {}
      bad = i == d;
    }
    if (bad) {
      if (off) *off = s;
      return 1;
    }
  }
  return 0;
}
