/* lowp_number -- the one syntax of a real or integer number in lowp's input */

#include "format/number.h"
#include "status.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------ private helpers */

/* Count the characters of s that satisfy cls (isdigit or isxdigit). */
static size_t span(const char *s, int (*cls)(int)) {
  size_t n = 0;
  while (s[n] && cls((unsigned char)s[n])) n++;
  return n;
}

/* ----------------------------------------------------------- public API */

int lowp_number_syntax(const char *text) {
  const char *t = text;
  size_t ni, nf;
  int hex;
  if (!t || !*t) return LOWP_EPARSE;
  if (*t == '+' || *t == '-') t++;
  if (!strcasecmp(t, "inf") || !strcasecmp(t, "infinity") || !strcasecmp(t, "nan"))
    return LOWP_OK;
  hex = t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  if (hex) t += 2;
  ni = span(t, hex ? isxdigit : isdigit);
  t += ni;
  nf = 0;
  if (*t == '.') {
    t++;
    nf = span(t, hex ? isxdigit : isdigit);
    t += nf;
  }
  if (ni + nf == 0) return LOWP_EPARSE;
  if (*t == (hex ? 'p' : 'e') || *t == (hex ? 'P' : 'E')) {
    t++;
    if (*t == '+' || *t == '-') t++;
    if (span(t, isdigit) == 0) return LOWP_EPARSE;
    t += span(t, isdigit);
  }
  return *t == '\0' ? LOWP_OK : LOWP_EPARSE;
}

int lowp_parse_f64(double *x, const char *text) {
  char *end;
  double v;
  if (lowp_number_syntax(text) != LOWP_OK) return LOWP_EPARSE;
  /* the grammar is a subset of strtod's; ERANGE (overflow to inf,
     underflow to 0 or a subnormal) is the documented IEEE result */
  v = strtod(text, &end);
  if (*end != '\0') return LOWP_EPARSE;
  *x = v;
  return LOWP_OK;
}

int lowp_parse_int(long long *v, const char *text, long long lo, long long hi) {
  const char *t = text;
  char *end;
  int neg = 0, hex;
  unsigned long long u;
  if (!t || !*t) return LOWP_EPARSE;
  if (*t == '+' || *t == '-') { neg = *t == '-'; t++; }
  hex = t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  if (hex) t += 2;
  if (span(t, hex ? isxdigit : isdigit) == 0 ||
      t[span(t, hex ? isxdigit : isdigit)] != '\0')
    return LOWP_EPARSE;
  errno = 0;
  u = strtoull(t, &end, hex ? 16 : 10);
  if (errno == ERANGE) return LOWP_ERANGE;
  if (neg) {
    /* -(LLONG_MIN) does not fit in long long: compare magnitudes */
    if (u > (unsigned long long)LLONG_MAX + 1u) return LOWP_ERANGE;
    if (u == (unsigned long long)LLONG_MAX + 1u) {
      if (lo > LLONG_MIN) return LOWP_ERANGE;
      *v = LLONG_MIN;
      return LOWP_OK;
    }
    if (-(long long)u < lo || -(long long)u > hi) return LOWP_ERANGE;
    *v = -(long long)u;
  } else {
    if (u > (unsigned long long)LLONG_MAX || (long long)u > hi || (long long)u < lo)
      return LOWP_ERANGE;
    *v = (long long)u;
  }
  return LOWP_OK;
}

int lowp_parse_u64(uint64_t *v, const char *text) {
  const char *t = text;
  unsigned long long u;
  char *end;
  int hex;
  if (!t || !*t) return LOWP_EPARSE;
  hex = t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  if (hex) t += 2;
  if (span(t, hex ? isxdigit : isdigit) == 0 || t[span(t, hex ? isxdigit : isdigit)] != '\0')
    return LOWP_EPARSE;
  errno = 0;
  u = strtoull(t, &end, hex ? 16 : 10);
  if (errno == ERANGE || u > UINT64_MAX) return LOWP_ERANGE;
  *v = (uint64_t)u;
  return LOWP_OK;
}

int lowp_parse_percent(double *x, const char *text) {
  const char *t = text;
  size_t ni, nf = 0, len;
  char buf[64];
  double v;
  if (!t) return LOWP_EPARSE;
  ni = span(t, isdigit);
  t += ni;
  if (*t == '.') {
    t++;
    nf = span(t, isdigit);
    t += nf;
  }
  if (ni + nf == 0 || strcmp(t, "%")) return LOWP_EPARSE;
  len = (size_t)(t - text);
  if (len >= sizeof buf) return LOWP_EPARSE;
  memcpy(buf, text, len);
  buf[len] = '\0';
  if (lowp_parse_f64(&v, buf) != LOWP_OK) return LOWP_EPARSE;
  *x = v;
  return LOWP_OK;
}
