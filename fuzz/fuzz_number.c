/* fuzz_number -- libFuzzer harness of lowp's number parser (lowp_mpfr_parse) */

/*
 * Input: a text (an embedded NUL ends it). Properties of every number lowp
 * accepts:
 *   - lowp_mpfr_parse at precision 128 gives the exact value rounded to odd
 *     at 128 bits, as an oracle computes it from MPFR's own mpfr_strtofr of
 *     the same text (base 10, or 16 after 0x; round toward zero and away
 *     from zero, the odd one of the two when inexact): lowp's parser and its
 *     round-to-odd step share no code with that;
 *   - rounded to binary64 by lowp_round_mpfr (nearest even) it equals
 *     glibc's strtod of the same text, bit for bit (NaN as NaN);
 *   - numbers beyond MPFR's exponent range stand in as a number beyond every
 *     lowp format, of the right sign.
 * Where lib/format/number.h exists (the one number grammar), also:
 *   - lowp_number_syntax, lowp_parse_f64 and lowp_mpfr_parse accept exactly
 *     the texts of the grammar written out below (checked independently),
 *     and lowp_parse_f64 equals strtod;
 *   - lowp_parse_int accepts exactly the integer grammar, with the value
 *     GMP's mpz_set_str gives, and LOWP_ERANGE outside [LLONG_MIN, LLONG_MAX].
 */

#include "fuzz.h"

#include "format/format.h"
#include "format/round_mpfr.h"
#include "status.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <strings.h>

#include <gmp.h>
#include <mpfr.h>

#if defined(__has_include)
#if __has_include("format/number.h")
#include "format/number.h"
#define HAVE_NUMBER_H 1
#endif
#endif

#define PREC 128

static int digits(const char **p, int hex) {
  int n = 0;
  while (hex ? isxdigit((unsigned char)**p) : isdigit((unsigned char)**p)) (*p)++, n++;
  return n;
}

/* The real grammar of number.h, written out: sign, then a name, a decimal
   or a hex float, and nothing else. */
static int grammar_real(const char *t) {
  const char *p = t;
  int hex = 0, m;
  if (*p == '+' || *p == '-') p++;
  if (!strcasecmp(p, "inf") || !strcasecmp(p, "infinity") || !strcasecmp(p, "nan")) return 1;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) hex = 1, p += 2;
  m = digits(&p, hex);
  if (*p == '.') {
    p++;
    m += digits(&p, hex);
  }
  if (m == 0) return 0;
  if (*p == (hex ? 'p' : 'e') || *p == (hex ? 'P' : 'E')) {
    p++;
    if (*p == '+' || *p == '-') p++;
    if (!digits(&p, 0)) return 0;
  }
  return *p == '\0';
}

/* The oracle: the text's exact value rounded to odd at PREC bits, from
   mpfr_strtofr. Returns 0 if MPFR does not read the whole text, 2 if the
   value is beyond MPFR's exponent range, 1 otherwise. */
static int oracle(mpfr_t y, const char *t) {
  const char *p = t;
  char *end;
  int hex, tz, ta, neg = 0;
  mpfr_t a;
  if (*p == '+' || *p == '-') neg = *p == '-', p++;
  if (!strcasecmp(p, "inf") || !strcasecmp(p, "infinity")) {
    mpfr_set_inf(y, neg ? -1 : 1);
    return 1;
  }
  if (!strcasecmp(p, "nan")) {
    mpfr_set_nan(y);
    return 1;
  }
  if (!*p || isspace((unsigned char)*p) || *p == '+' || *p == '-') return 0;
  hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
  tz = mpfr_strtofr(y, t, &end, hex ? 16 : 10, MPFR_RNDZ);
  if (*end != '\0' || end == t) return 0;
  mpfr_init2(a, PREC);
  ta = mpfr_strtofr(a, t, &end, hex ? 16 : 10, MPFR_RNDA);
  if (mpfr_inf_p(y) || mpfr_inf_p(a) || mpfr_nan_p(y) || (tz && mpfr_zero_p(y)) ||
      (ta && mpfr_zero_p(a))) {
    mpfr_clear(a);
    return 2;
  }
  if (tz && mpfr_min_prec(y) < PREC) mpfr_set(y, a, MPFR_RNDN); /* y even: a is odd */
  (void)ta;
  mpfr_clear(a);
  return 1;
}

static void check_real(const char *t) {
  mpfr_t x, y;
  int st, o;
  double d, want;
  char *end;
  mpfr_init2(x, PREC);
  mpfr_init2(y, PREC);
  st = lowp_mpfr_parse(x, t);
  o = oracle(y, t);
#ifdef HAVE_NUMBER_H
  {
    int g = grammar_real(t), s2 = lowp_number_syntax(t), s3;
    double f = 0;
    FUZZ_CHECK((st == LOWP_OK) == g, "lowp_mpfr_parse %s '%s', the grammar %s",
               st == LOWP_OK ? "accepts" : "rejects", t, g ? "accepts" : "rejects");
    FUZZ_CHECK((s2 == LOWP_OK) == g, "lowp_number_syntax disagrees with the grammar on '%s'", t);
    s3 = lowp_parse_f64(&f, t);
    FUZZ_CHECK((s3 == LOWP_OK) == g, "lowp_parse_f64 disagrees with the grammar on '%s'", t);
    if (g) {
      want = strtod(t, &end);
      FUZZ_CHECK(*end == '\0', "strtod does not read all of '%s'", t);
      FUZZ_CHECK(isnan(want) ? isnan(f) : fuzz_same_bits(f, want),
                 "lowp_parse_f64('%s') = %a, strtod %a", t, f, want);
    }
  }
#endif
  if (st == LOWP_OK) {
#ifdef HAVE_NUMBER_H
    FUZZ_CHECK(grammar_real(t), "accepted '%s' outside the grammar", t);
#endif
    FUZZ_CHECK(o != 0, "lowp accepts '%s', which MPFR (base 10/16) does not read whole", t);
    if (o == 1) {
      FUZZ_CHECK(mpfr_nan_p(x) ? mpfr_nan_p(y) != 0 : mpfr_equal_p(x, y) && mpfr_signbit(x) == mpfr_signbit(y),
                 "'%s': lowp %s, MPFR rounded to odd %s", t,
                 mpfr_get_str(NULL, NULL, 16, 0, x, MPFR_RNDN),
                 mpfr_get_str(NULL, NULL, 16, 0, y, MPFR_RNDN));
    } else { /* beyond MPFR's range: beyond every format, same sign */
      FUZZ_CHECK(mpfr_regular_p(x) && (mpfr_get_exp(x) > 100000 || mpfr_get_exp(x) < -100000) &&
                     !mpfr_signbit(x) == (t[0] != '-'),
                 "'%s' (beyond MPFR's range) parsed to %g", t, mpfr_get_d(x, MPFR_RNDN));
    }
    lowp_round_mpfr(&d, x, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    want = strtod(t, &end);
    FUZZ_CHECK(*end == '\0', "strtod does not read all of '%s'", t);
    FUZZ_CHECK(isnan(want) ? isnan(d) : fuzz_same_bits(d, want),
               "'%s' to binary64: lowp %a, strtod %a", t, d, want);
  }
  mpfr_clear(x);
  mpfr_clear(y);
}

#ifdef HAVE_NUMBER_H
static int grammar_int(const char *t, int *hex) {
  const char *p = t;
  if (*p == '+' || *p == '-') p++;
  *hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
  if (*hex) p += 2;
  if (!digits(&p, *hex)) return 0;
  return *p == '\0';
}

static void check_int(const char *t) {
  long long v = 0;
  int hex, g = grammar_int(t, &hex), st = lowp_parse_int(&v, t, LLONG_MIN, LLONG_MAX);
  mpz_t z;
  const char *p = t;
  if (!g) {
    FUZZ_CHECK(st == LOWP_EPARSE, "lowp_parse_int accepts '%s' outside the grammar", t);
    return;
  }
  if (*p == '+' || *p == '-') p++;
  if (hex) p += 2;
  mpz_init(z);
  if (mpz_set_str(z, p, hex ? 16 : 10) != 0) abort();
  if (t[0] == '-') mpz_neg(z, z);
  if (mpz_cmp_si(z, LONG_MIN) >= 0 && mpz_cmp_si(z, LONG_MAX) <= 0 && sizeof(long) == sizeof v) {
    FUZZ_CHECK(st == LOWP_OK && v == mpz_get_si(z), "lowp_parse_int('%s') = %lld (status %d)",
               t, v, st);
  } else {
    FUZZ_CHECK(st == LOWP_ERANGE, "lowp_parse_int('%s') out of range gave status %d", t, st);
  }
  mpz_clear(z);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *t;
  if (size > 4096) return 0; /* long digit strings add nothing but time */
  t = fuzz_cstr(data, size);
  (void)grammar_real; /* used only with number.h */
  check_real(t);
#ifdef HAVE_NUMBER_H
  check_int(t);
#endif
  free(t);
  return 0;
}
