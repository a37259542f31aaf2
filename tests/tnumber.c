/* tnumber -- lowp's number grammar: what it takes, what it refuses, and the overflow rule */

/*
 * Cases: issue 14 (1e999999999 accepted while 1e-999999999 was "malformed";
 * MPFR's "0b101" and "1@3" accepted without being documented), plus the
 * grammar's edges. The binary64 results are checked against C hex-float
 * literals (the compiler's conversion, not strtod's at run time), and the
 * MPFR path against MPFR's own rounding of the same value.
 *
 * Run: ctest --test-dir build -R '^tnumber$'
 */

#include "format/number.h"
#include "format/round_mpfr.h"
#include "status.h"
#include "testutil.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

static void f64_ok(const char *text, double want) {
  double v = 12345.0;
  int s = lowp_parse_f64(&v, text);
  lowp_test_check(s == LOWP_OK && (memcmp(&v, &want, sizeof v) == 0 || (isnan(v) && isnan(want))),
                  "parse_f64('%s') = %a (status %d), want %a", text, v, s, want);
}

static void f64_bad(const char *text) {
  double v = 12345.0;
  lowp_test_check(lowp_parse_f64(&v, text) == LOWP_EPARSE && v == 12345.0,
                  "parse_f64('%s') accepted (%a)", text, v);
}

static void int_is(const char *text, long long lo, long long hi, int status, long long want) {
  long long v = 777;
  int s = lowp_parse_int(&v, text, lo, hi);
  lowp_test_check(s == status && (s != LOWP_OK || v == want),
                  "parse_int('%s', %lld, %lld) = %lld status %d, want %lld status %d", text, lo,
                  hi, v, s, want, status);
}

int main(void) {
  static const char *const bad[] = {
      "", " 1", "1 ", "0b101", "1@3", "nan(1)", "@inf@", "1e", "1e+", "e5", ".", "0x", "0x.",
      "0xp3", "1.2.3", "1_000", "--1", "+-1", "1e5.5", "0x1g", "infinit", "in", "1,5", "0x1p",
      "1d5", "\t1", "0x1.8e3p", "١"};
  size_t i;
  mpfr_t x;
  lowp_test_start("tnumber");

  /* accepted forms */
  f64_ok("1", 1.0);
  f64_ok("-0", -0.0);
  f64_ok("+2.5", 2.5);
  f64_ok(".5", 0.5);
  f64_ok("5.", 5.0);
  f64_ok("1e-6", 1e-6);
  f64_ok("1E+3", 1000.0);
  f64_ok("0x1.8p-3", 0x1.8p-3);
  f64_ok("0X1P4", 16.0);
  f64_ok("0x10", 16.0); /* hex without exponent, as strtod */
  f64_ok("0x.8", 0.5);
  f64_ok("010", 10.0);  /* leading zeros are decimal */
  f64_ok("inf", INFINITY);
  f64_ok("-Infinity", -INFINITY);
  f64_ok("NaN", NAN);
  /* the overflow rule, both ways: IEEE round to nearest */
  f64_ok("1e999999999", INFINITY);
  f64_ok("-1e999999999", -INFINITY);
  f64_ok("1e-999999999", 0.0);
  f64_ok("-1e-999999999", -0.0);
  f64_ok("1e-320", 1e-320);
  f64_ok("1e99999999999999999999999", INFINITY);
  f64_ok("1e-99999999999999999999999", 0.0);
  f64_ok("0x1p-1075", 0.0);          /* a tie below the smallest subnormal: even */
  f64_ok("0x1.0000000000001p-1075", 0x1p-1074);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    f64_bad(bad[i]);
    lowp_test_check(lowp_number_syntax(bad[i]) == LOWP_EPARSE, "syntax accepts '%s'", bad[i]);
  }
  lowp_test_check(lowp_number_syntax(NULL) == LOWP_EPARSE, "syntax accepts NULL");

  /* MPFR path: same grammar; beyond MPFR's range rounds as the exact value */
  mpfr_init2(x, 128);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
    lowp_test_check(lowp_mpfr_parse(x, bad[i]) == LOWP_EPARSE, "mpfr_parse accepts '%s'", bad[i]);
  {
    static const struct { const char *text; lowp_rounding_t rnd; double want; } ov[] = {
        {"1e999999999", LOWP_RND_NE, INFINITY},   {"1e999999999", LOWP_RND_TZ, 65504.0},
        {"-1e999999999", LOWP_RND_UP, -65504.0},  {"-1e999999999", LOWP_RND_DN, -INFINITY},
        {"1e-999999999", LOWP_RND_NE, 0.0},       {"1e-999999999", LOWP_RND_UP, 0x1p-24},
        {"1e-999999999", LOWP_RND_TO, 0x1p-24},   {"-1e-999999999", LOWP_RND_TZ, -0.0},
        {"-1e-999999999", LOWP_RND_DN, -0x1p-24}, {"1e-400", LOWP_RND_UP, 0x1p-24},
        /* exponents where MPFR's own reading wraps (found by fuzzing) */
        {"0.00001e-9223372036854775807", LOWP_RND_NE, 0.0},
        {"-0.00001e-9223372036854775807", LOWP_RND_DN, -0x1p-24},
        {"0.01e-99999999999999999999999", LOWP_RND_UP, 0x1p-24},
        {"0x0.01p-9223372036854775807", LOWP_RND_NE, 0.0},
        {"12.5e9223372036854775807", LOWP_RND_NE, INFINITY},
        {"-12.5e+0009223372036854775807", LOWP_RND_TZ, -65504.0},
        {"0.000e99999999999999999999", LOWP_RND_UP, 0.0},
        {"-0e-99999999999999999999", LOWP_RND_DN, -0.0},
    };
    for (i = 0; i < sizeof ov / sizeof ov[0]; i++) {
      double y = 1.0;
      int s = lowp_mpfr_parse(x, ov[i].text);
      if (s == LOWP_OK) (void)lowp_round_mpfr(&y, x, &LOWP_FMT_FP16, NULL, ov[i].rnd);
      lowp_test_check(s == LOWP_OK && memcmp(&y, &ov[i].want, sizeof y) == 0,
                      "'%s' to fp16 %s = %a (status %d), want %a", ov[i].text,
                      lowp_rounding_name(ov[i].rnd), y, s, ov[i].want);
    }
  }
  lowp_test_check(lowp_mpfr_parse(x, "0x1.8p-3") == LOWP_OK && mpfr_cmp_d(x, 0x1.8p-3) == 0,
                  "mpfr_parse 0x1.8p-3");
  mpfr_clear(x);

  /* integers */
  int_is("42", 0, 100, LOWP_OK, 42);
  int_is("-42", -100, 100, LOWP_OK, -42);
  int_is("+7", 0, 100, LOWP_OK, 7);
  int_is("0x1F", 0, 100, LOWP_OK, 31);
  int_is("010", 0, 100, LOWP_OK, 10);
  int_is("101", 0, 100, LOWP_ERANGE, 0);
  int_is("99999999999999999999", 0, LLONG_MAX, LOWP_ERANGE, 0);
  int_is("-99999999999999999999", LLONG_MIN, 0, LOWP_ERANGE, 0);
  int_is("9223372036854775807", 0, LLONG_MAX, LOWP_OK, LLONG_MAX);
  int_is("9223372036854775808", 0, LLONG_MAX, LOWP_ERANGE, 0);
  int_is("-9223372036854775808", LLONG_MIN, 0, LOWP_OK, LLONG_MIN);
  int_is("-9223372036854775808", LLONG_MIN + 1, 0, LOWP_ERANGE, 0);
  int_is("1e3", 0, 10000, LOWP_EPARSE, 0);
  int_is("1.0", 0, 10, LOWP_EPARSE, 0);
  int_is(" 1", 0, 10, LOWP_EPARSE, 0);
  int_is("0b1", 0, 10, LOWP_EPARSE, 0);
  int_is("", 0, 10, LOWP_EPARSE, 0);
  int_is("-", 0, 10, LOWP_EPARSE, 0);
  int_is("0x", 0, 10, LOWP_EPARSE, 0);
  int_is("--1", -10, 10, LOWP_EPARSE, 0);
  /* unsigned 64-bit patterns (fp64's sign bit set) */
  {
    uint64_t u = 7;
    lowp_test_check(lowp_parse_u64(&u, "0xfff0000000000000") == LOWP_OK &&
                        u == UINT64_C(0xfff0000000000000), "u64 0xfff0...");
    lowp_test_check(lowp_parse_u64(&u, "18446744073709551615") == LOWP_OK && u == UINT64_MAX,
                    "u64 2^64-1");
    lowp_test_check(lowp_parse_u64(&u, "0x10000000000000000") == LOWP_ERANGE, "u64 2^64");
    lowp_test_check(lowp_parse_u64(&u, "-1") == LOWP_EPARSE, "u64 -1");
    lowp_test_check(lowp_parse_u64(&u, "+1") == LOWP_EPARSE, "u64 +1");
    lowp_test_check(lowp_parse_u64(&u, "0x") == LOWP_EPARSE, "u64 0x");
    lowp_test_check(lowp_parse_u64(&u, " 1") == LOWP_EPARSE, "u64 ' 1'");
  }
  return lowp_test_end();
}
