/* tformat_spec -- every small format spec: accepted ones round-trip, rejected ones advise well */

/*
 * Issue 14 (found by fuzzing): "p=1,emin=-2,emax=1,nan=allones" validated
 * although infinity and NaN had the same bits, and
 * "p=3,emin=-2,emax=3,nozero,noinf,nan=negzero" encoded -0.25 as its NaN.
 * This test proves the validator's contract on every spec of a small box
 * (p 1..5, emin -4..2, emax emin..emin+4, sub/nosub, inf/noinf, the four
 * NaN encodings, signed/unsigned, zero/nozero, ebits default or 1..5):
 *
 * For every ACCEPTED spec, with oracles that share no code with encode.c:
 *   - lowp_format_spec_str prints it and lowp_format_parse reads it back to
 *     the same descriptor;
 *   - every bit pattern b: lowp_decode either says the pattern is unused
 *     (LOWP_ERANGE; then no value encodes to it) or gives v, and
 *     lowp_encode(v) gives b again (NaN: a NaN pattern; a zero of a format
 *     without subnormals: the canonical zero) which decodes to v, bit for bit;
 *   - every value of the format, enumerated from the definition
 *     (+-m * 2^(e-p+1)), encodes, decodes to itself, and no two values share
 *     a pattern; their number is lowp_format_count_finite; the largest is
 *     lowp_format_xmax; +-inf and NaN encode iff the format has them and
 *     decode to themselves;
 *   - what lowp_round_f64 returns (five modes, values from tiny to huge,
 *     +-0, +-inf, NaN) is a value of the format: it encodes;
 * For every REJECTED spec: the message is non-empty, and where it advises
 * "try 'SPEC'", SPEC is accepted and passes every check above.
 *
 * Run: ctest --test-dir build -R '^tformat_spec$'
 */

#include "format/format.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

static long n_accepted, n_rejected, n_advised, n_patterns, n_unused;

static int same_bits(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return memcmp(&a, &b, sizeof a) == 0;
}

/* The value m * 2^(e-p+1) as a double, computed with plain multiplication
   (exact: all values here are far inside binary64). */
static double value_of(long m, int e, int p) {
  double v = (double)m;
  int k = e - p + 1;
  while (k > 0) { v *= 2.0; k--; }
  while (k < 0) { v *= 0.5; k++; }
  return v;
}

/* Check one accepted format; returns 1 if every property holds. */
static int check_format(const lowp_format_t *f, const char *spec) {
  const int w = lowp_format_width(f);
  const uint64_t npat = UINT64_C(1) << w;
  unsigned char *hit;
  uint64_t b, bits;
  double v, v2, vmax = 0.0;
  long count = 0, fails = 0;
  char printed[128], err[320];
  lowp_format_t g;
  int s, sign, e;
  long m;

  /* printed and parsed back: the same descriptor */
  if (lowp_format_spec_str(printed, sizeof printed, f) != LOWP_OK ||
      lowp_format_parse(&g, printed, err, sizeof err) != LOWP_OK ||
      g.precision != f->precision || g.emin != f->emin || g.emax != f->emax ||
      g.ebits != f->ebits || g.subnormals != f->subnormals || g.inf != f->inf ||
      g.nan != f->nan || g.has_sign != f->has_sign || g.has_zero != f->has_zero) {
    lowp_test_check(0, "'%s': printed as '%s', which does not parse back (%s)", spec,
                    printed, err);
    return 0;
  }

  /* every pattern: decode -> encode -> decode */
  hit = calloc((size_t)npat, 1);
  if (!hit) { lowp_test_check(0, "out of memory"); return 0; }
  for (b = 0; b < npat; b++) {
    n_patterns++;
    s = lowp_decode(&v, b, f);
    if (s == LOWP_ERANGE) { n_unused++; continue; }
    if (s != LOWP_OK) {
      fails += !lowp_test_check(0, "'%s': decode 0x%llx status %d", spec,
                                (unsigned long long)b, s);
      continue;
    }
    s = lowp_encode(&bits, v, f);
    if (s != LOWP_OK || lowp_decode(&v2, bits, f) != LOWP_OK || !same_bits(v, v2)) {
      fails += !lowp_test_check(0, "'%s': pattern 0x%llx decodes to %a, which encodes "
                                "(status %d) to 0x%llx, which decodes to %a", spec,
                                (unsigned long long)b, v, s, (unsigned long long)bits, v2);
      continue;
    }
    /* canonical patterns come back unchanged */
    if (!isnan(v) && !(v == 0.0 && !f->subnormals) && bits != b)
      fails += !lowp_test_check(0, "'%s': 0x%llx -> %a -> 0x%llx", spec,
                                (unsigned long long)b, v, (unsigned long long)bits);
    if (fails > 5) break;
  }

  /* every value from the definition: encode -> decode; no two share bits */
  for (sign = 0; sign <= f->has_sign && fails <= 5; sign++) {
    double sg = sign ? -1.0 : 1.0;
    /* zero: -0 exists only with a sign and without the fnuz NaN */
    if (f->has_zero && (!sign || f->nan != LOWP_NAN_NEGZERO)) {
      v = sign ? -0.0 : 0.0;
      if (lowp_encode(&bits, v, f) != LOWP_OK || lowp_decode(&v2, bits, f) != LOWP_OK ||
          !same_bits(v, v2) || hit[bits]++)
        fails += !lowp_test_check(0, "'%s': zero %a does not round-trip", spec, v);
      count++;
    }
    if (f->subnormals)
      for (m = 1; m < (1L << (f->precision - 1)); m++) {
        v = sg * value_of(m, f->emin, f->precision);
        if (lowp_encode(&bits, v, f) != LOWP_OK || lowp_decode(&v2, bits, f) != LOWP_OK ||
            !same_bits(v, v2) || hit[bits]++)
          fails += !lowp_test_check(0, "'%s': subnormal %a does not round-trip", spec, v);
        count++;
      }
    for (e = f->emin; e <= f->emax; e++)
      for (m = 1L << (f->precision - 1); m < (1L << f->precision); m++) {
        int last = e == f->emax && m == (1L << f->precision) - 1;
        v = sg * value_of(m, e, f->precision);
        s = lowp_encode(&bits, v, f);
        /* the one value that may be missing: the top significand, when the
           all-ones NaN takes its pattern */
        if (last && f->nan == LOWP_NAN_ALLONES && s == LOWP_ERANGE) {
          if (lowp_format_xmax(f) >= fabs(v))
            fails += !lowp_test_check(0, "'%s': xmax %a includes the NaN's value", spec,
                                      lowp_format_xmax(f));
          continue;
        }
        if (s != LOWP_OK || lowp_decode(&v2, bits, f) != LOWP_OK || !same_bits(v, v2) ||
            hit[bits]++) {
          fails += !lowp_test_check(0, "'%s': value %a does not round-trip (status %d, "
                                    "0x%llx -> %a)", spec, v, s,
                                    (unsigned long long)bits, v2);
          continue;
        }
        count++;
        if (fabs(v) > vmax) vmax = fabs(v);
      }
  }
  if (lowp_format_count_finite(f) != (double)count)
    fails += !lowp_test_check(0, "'%s': %ld values, lowp_format_count_finite says %g", spec,
                              count, lowp_format_count_finite(f));
  if (lowp_format_xmax(f) != vmax)
    fails += !lowp_test_check(0, "'%s': largest value %a, lowp_format_xmax %a", spec, vmax,
                              lowp_format_xmax(f));

  /* infinity and NaN: encodable iff the format has them, and distinct */
  for (sign = 0; sign <= 1; sign++) {
    double inf = sign ? -INFINITY : INFINITY;
    s = lowp_encode(&bits, inf, f);
    if (f->inf == LOWP_INF_IEEE && (f->has_sign || !sign)) {
      if (s != LOWP_OK || lowp_decode(&v2, bits, f) != LOWP_OK || !same_bits(v2, inf) ||
          hit[bits]++)
        fails += !lowp_test_check(0, "'%s': %a does not round-trip", spec, inf);
    } else if (s == LOWP_OK) {
      fails += !lowp_test_check(0, "'%s': %a encodes in a format without it", spec, inf);
    }
  }
  s = lowp_encode(&bits, NAN, f);
  if (f->nan != LOWP_NAN_NONE) {
    if (s != LOWP_OK || lowp_decode(&v2, bits, f) != LOWP_OK || !isnan(v2) || hit[bits])
      fails += !lowp_test_check(0, "'%s': NaN encodes (status %d) to 0x%llx, which is "
                                "not only NaN", spec, s, (unsigned long long)bits);
  } else if (s == LOWP_OK) {
    fails += !lowp_test_check(0, "'%s': NaN encodes in a format without NaN", spec);
  }
  /* whatever rounding returns is a value of the format: it encodes */
  {
    static const double xs[] = {0.1, -0.3, 1.0, -1.0, 3.0, 1e30, -1e30, 1e-30, -1e-30, 0.0, -0.0,
                                INFINITY, -INFINITY, NAN};
    static const lowp_rounding_t rs[] = {LOWP_RND_NE, LOWP_RND_TZ, LOWP_RND_UP, LOWP_RND_DN,
                                         LOWP_RND_TO};
    size_t xi, ri;
    for (xi = 0; xi < sizeof xs / sizeof xs[0] && fails <= 5; xi++)
      for (ri = 0; ri < sizeof rs / sizeof rs[0]; ri++) {
        double y;
        (void)lowp_round_f64(&y, xs[xi], f, NULL, rs[ri]);
        if (lowp_encode(&bits, y, f) != LOWP_OK)
          fails += !lowp_test_check(0, "'%s': %a rounded (%s) to %a, which does not encode", spec,
                                    xs[xi], lowp_rounding_name(rs[ri]), y);
      }
  }
  free(hit);
  return fails == 0;
}

static void check_spec(const char *spec) {
  lowp_format_t f, g;
  char err[512] = "";
  const char *t, *q;
  if (lowp_format_parse(&f, spec, err, sizeof err) == LOWP_OK) {
    n_accepted++;
    check_format(&f, spec);
    return;
  }
  n_rejected++;
  if (!lowp_test_check(err[0] != '\0', "'%s' rejected without a message", spec)) return;
  t = strstr(err, "try '");
  if (!t) return;
  t += 5;
  q = strchr(t, '\'');
  if (!lowp_test_check(q != NULL, "'%s': unterminated advice in '%s'", spec, err)) return;
  {
    char advice[256];
    size_t n = (size_t)(q - t);
    if (n >= sizeof advice) n = sizeof advice - 1;
    memcpy(advice, t, n);
    advice[n] = '\0';
    n_advised++;
    if (!lowp_test_check(lowp_format_parse(&g, advice, err, sizeof err) == LOWP_OK,
                         "'%s': advised '%s', which is rejected: %s", spec, advice, err))
      return;
    check_format(&g, advice);
  }
}

/* ----------------------------------------------------- hand-picked cases */

/* The cases the fuzzer found (issue 14), and the messages that once advised
   a spec that was then wrong ("with p=1 use nan=allones" gave the first). */
static void found_cases(void) {
  lowp_format_t f;
  char err[512];
  lowp_test_check(lowp_format_parse(&f, "p=1,emin=-2,emax=1,nan=allones", err, sizeof err) ==
                      LOWP_EFORMAT && strstr(err, "infinity"),
                  "inf and all-ones NaN sharing bits accepted (%s)", err);
  lowp_test_check(lowp_format_parse(&f, "p=3,emin=-2,emax=3,nozero,noinf,nan=negzero", err,
                                    sizeof err) == LOWP_EFORMAT && strstr(err, "-2^emin"),
                  "negzero NaN without zero accepted (%s)", err);
  lowp_test_check(lowp_format_parse(&f, "p=1,emin=-4,emax=4", err, sizeof err) ==
                      LOWP_EFORMAT && strstr(err, "try 'p=1,emin=-4,emax=4,ebits=4,nan=none'"),
                  "p=1 with IEEE NaN: advice '%s'", err);
  /* the built-in formats are specs like any other */
  {
    size_t i;
    for (i = 0; i < lowp_format_count(); i++) {
      const lowp_format_t *b = lowp_format_at(i);
      if (lowp_format_width(b) <= 16) check_format(b, b->name);
    }
  }
  /* duplicate keys are errors, not "the last wins" */
  lowp_test_check(lowp_format_parse(&f, "p=3,p=4,emin=-2,emax=3", err, sizeof err) ==
                      LOWP_EFORMAT && strstr(err, "repeats"), "p twice: %s", err);
  lowp_test_check(lowp_format_parse(&f, "p=3,emin=-2,emax=3,sub,nosub", err, sizeof err) ==
                      LOWP_EFORMAT && strstr(err, "repeats"), "sub,nosub: %s", err);
  lowp_test_check(lowp_format_parse(&f, "p=3,emin=-2,emax=3,nan=none,nan=ieee", err,
                                    sizeof err) == LOWP_EFORMAT, "nan twice: %s", err);
  /* "sub" is not silently dropped by nozero */
  lowp_test_check(lowp_format_parse(&f, "p=3,emin=-2,emax=3,sub,nozero", err, sizeof err) ==
                      LOWP_EFORMAT && strstr(err, "zero"), "sub,nozero: %s", err);
  /* numbers: decimal only */
  lowp_test_check(lowp_format_parse(&f, "p=0x3,emin=-2,emax=3", err, sizeof err) ==
                      LOWP_EFORMAT, "p=0x3 accepted");
  lowp_test_check(lowp_format_parse(&f, "p= 3,emin=-2,emax=3", err, sizeof err) ==
                      LOWP_EFORMAT, "'p= 3' accepted");
  lowp_test_check(lowp_format_parse(&f, "p=+3,emin=-2,emax=3", err, sizeof err) ==
                      LOWP_EFORMAT, "'p=+3' accepted");
  /* p above 53 is rejected, as format.h says */
  lowp_test_check(lowp_format_parse(&f, "p=54,emin=-2,emax=3", err, sizeof err) ==
                      LOWP_EFORMAT && strstr(err, "53"), "p=54: %s", err);
}

/* ----------------------------------------------------------------- main */

int main(void) {
  static const char *const sub[] = {"", ",nosub"};
  static const char *const inf[] = {"", ",noinf"};
  static const char *const nan[] = {"", ",nan=ieee", ",nan=allones", ",nan=negzero",
                                    ",nan=none"};
  static const char *const sgn[] = {"", ",unsigned"};
  static const char *const zero[] = {"", ",nozero"};
  int p, emin, emax, a, b, c, d, z, eb;
  char spec[160];

  lowp_test_start("tformat_spec");
  found_cases();
  for (p = 1; p <= 5; p++)
    for (emin = -4; emin <= 2; emin++)
      for (emax = emin - 1; emax <= emin + 4; emax++)
        for (a = 0; a < 2; a++)
          for (b = 0; b < 2; b++)
            for (c = 0; c < 5; c++)
              for (d = 0; d < 2; d++)
                for (z = 0; z < 2; z++)
                  for (eb = 0; eb <= 5; eb++) {
                    char ebs[16] = "";
                    if (eb) snprintf(ebs, sizeof ebs, ",ebits=%d", eb);
                    snprintf(spec, sizeof spec, "p=%d,emin=%d,emax=%d%s%s%s%s%s%s", p, emin,
                             emax, sub[a], inf[b], nan[c], sgn[d], zero[z], ebs);
                    check_spec(spec);
                    if (lowp_test_failures() > 20) goto done;
                  }
done:
  printf("tformat_spec: %ld specs accepted (%ld bit patterns, %ld unused), %ld rejected, "
         "%ld advised fixes checked\n", n_accepted, n_patterns, n_unused, n_rejected,
         n_advised);
  lowp_test_check(n_accepted > 10000 && n_advised > 1000, "too few specs exercised");
  return lowp_test_end();
}
