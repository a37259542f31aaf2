/* tformat -- the format table, its derived constants, parsing and validation */

/*
 * The expected numbers below are typed in from the sources, not computed
 * the way lib/format/format.c computes them: IEEE 754-2019 table 3.5
 * (binary16/32/64), the NVIDIA A100 whitepaper (tf32), the OCP OFP8 v1.0
 * specification tables (e4m3 max 448 = S.1111.110, e5m2 max 57344), Noune
 * et al., arXiv:2206.02915 (fnuz: bias 8/16, max 240/57344), the OCP MX v1.0
 * specification section 5.3 (fp6 max 28 and 7.5, fp4 max 6, e8m0 2^-127 ..
 * 2^127, 0xFF = NaN), and docs/design.md's table. Counts of finite values are
 * 2^width minus the inf/NaN patterns, counted by hand per format.
 *
 * Run: ctest --test-dir build -R '^tformat$'
 */

#include "format/format.h"
#include "status.h"
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  const lowp_format_t *f;
  const char *name;
  int p, emin, emax, width, bias;
  double xmax, xmin, xmins, count;
} expect_t;

/* count = 2^width - (patterns that are inf or NaN) */
static const expect_t table[] = {
    /* fp64: 2 x 2^52 patterns in the top field */
    {&LOWP_FMT_FP64, "fp64", 53, -1022, 1023, 64, 1023, DBL_MAX, 0x1p-1022, 0x1p-1074,
     0x1p64 - 0x1p53},
    {&LOWP_FMT_FP32, "fp32", 24, -126, 127, 32, 127, 3.4028235e38f, 0x1p-126, 0x1p-149,
     4294967296.0 - 2 * 8388608.0},
    {&LOWP_FMT_TF32, "tf32", 11, -126, 127, 19, 127, 0x1.ffcp127, 0x1p-126, 0x1p-136,
     524288.0 - 2 * 1024.0},
    {&LOWP_FMT_FP16, "fp16", 11, -14, 15, 16, 15, 65504.0, 0x1p-14, 0x1p-24,
     65536.0 - 2048.0},
    {&LOWP_FMT_BF16, "bf16", 8, -126, 127, 16, 127, 0x1.fep127, 0x1p-126, 0x1p-133,
     65536.0 - 256.0},
    /* e4m3: only S.1111.111 is NaN (2 patterns) */
    {&LOWP_FMT_E4M3, "e4m3", 4, -6, 8, 8, 7, 448.0, 0x1p-6, 0x1p-9, 254.0},
    /* e5m2: top field = 2 x (1 inf + 3 NaN) */
    {&LOWP_FMT_E5M2, "e5m2", 3, -14, 15, 8, 15, 57344.0, 0x1p-14, 0x1p-16, 248.0},
    /* fnuz: 0x80 is the only NaN, no -0 */
    {&LOWP_FMT_E4M3FNUZ, "e4m3fnuz", 4, -7, 7, 8, 8, 240.0, 0x1p-7, 0x1p-10, 255.0},
    {&LOWP_FMT_E5M2FNUZ, "e5m2fnuz", 3, -15, 15, 8, 16, 57344.0, 0x1p-15, 0x1p-17, 255.0},
    /* fp6, fp4: every pattern is finite */
    {&LOWP_FMT_E3M2, "e3m2", 3, -2, 4, 6, 3, 28.0, 0.25, 0.0625, 64.0},
    {&LOWP_FMT_E2M3, "e2m3", 4, 0, 2, 6, 1, 7.5, 1.0, 0.125, 64.0},
    {&LOWP_FMT_E2M1, "e2m1", 2, 0, 2, 4, 1, 6.0, 1.0, 0.5, 16.0},
    /* e8m0: 0x00..0xFE are 2^-127..2^127, 0xFF NaN */
    {&LOWP_FMT_E8M0, "e8m0", 1, -127, 127, 8, 127, 0x1p127, 0x1p-127, 0x1p-127, 255.0},
};
#define NTABLE (sizeof table / sizeof table[0])

/* --------------------------------------------------------- derived */

static void check_eq(double got, double want, const char *what, const char *fmt) {
  lowp_test_check(got == want, "%s %s: got %a (%.17g), want %a (%.17g)", fmt,
                  what, got, got, want, want);
}

static void derived_constants(void) {
  size_t i;
  lowp_test_check(lowp_format_count() == NTABLE, "lowp_format_count %zu, want %zu",
                  lowp_format_count(), NTABLE);
  for (i = 0; i < NTABLE; i++) {
    const expect_t *e = &table[i];
    const lowp_format_t *f = e->f;
    lowp_test_check(lowp_format_at(i) == f, "format %zu is %s, want %s (docs/design.md order)",
                    i, lowp_format_at(i) ? lowp_format_at(i)->name : "NULL", e->name);
    lowp_test_check(!strcmp(f->name, e->name), "name %s want %s", f->name, e->name);
    lowp_test_check(f->precision == e->p && f->emin == e->emin && f->emax == e->emax,
                    "%s: p emin emax = %d %d %d, want %d %d %d", e->name, f->precision,
                    f->emin, f->emax, e->p, e->emin, e->emax);
    lowp_test_check(lowp_format_width(f) == e->width, "%s width %d want %d", e->name,
                    lowp_format_width(f), e->width);
    lowp_test_check(lowp_format_bias(f) == e->bias, "%s bias %d want %d", e->name,
                    lowp_format_bias(f), e->bias);
    check_eq(lowp_format_xmax(f), e->xmax, "xmax", e->name);
    check_eq(lowp_format_xmin(f), e->xmin, "xmin", e->name);
    check_eq(lowp_format_xmins(f), e->xmins, "xmins", e->name);
    check_eq(lowp_format_count_finite(f), e->count, "count_finite", e->name);
    /* u = 2^-p, eps = 2^(1-p) (Higham, Accuracy and Stability, 2nd ed., 2.1) */
    check_eq(lowp_format_u(f), ldexp(1.0, -e->p), "u", e->name);
    check_eq(lowp_format_eps(f), ldexp(1.0, 1 - e->p), "eps", e->name);
    {
      double want = log10(e->xmax) - log10(e->xmins);
      double got = lowp_format_range_decades(f);
      lowp_test_check(fabs(got - want) <= 1e-12 * want, "%s range_decades %.17g want %.17g",
                      e->name, got, want);
    }
    lowp_test_check(lowp_format_validate(f, NULL, 0) == LOWP_OK, "%s does not validate",
                    e->name);
    lowp_test_check(lowp_format_by_name(e->name) == f, "by_name(%s)", e->name);
  }
  /* docs/design.md's table, as printed there */
  lowp_test_check(fabs(lowp_format_xmax(&LOWP_FMT_TF32) - 3.401e38) < 0.001e38, "tf32 ~3.401e38");
  lowp_test_check(fabs(lowp_format_xmax(&LOWP_FMT_BF16) - 3.390e38) < 0.001e38, "bf16 ~3.390e38");
  lowp_test_check(fabs(lowp_format_xmax(&LOWP_FMT_FP64) - 1.797e308) < 0.001e308, "fp64 ~1.797e308");
  /* names and aliases, case-insensitive */
  lowp_test_check(lowp_format_by_name("HALF") == &LOWP_FMT_FP16, "alias HALF");
  lowp_test_check(lowp_format_by_name("bfloat16") == &LOWP_FMT_BF16, "alias bfloat16");
  lowp_test_check(lowp_format_by_name("float8_e4m3fn") == &LOWP_FMT_E4M3, "alias float8_e4m3fn");
  lowp_test_check(lowp_format_by_name("ue8m0") == &LOWP_FMT_E8M0, "alias ue8m0");
  lowp_test_check(lowp_format_by_name("fp1") == NULL, "fp1 is no alias (prefix of fp16)");
  lowp_test_check(lowp_format_by_name("fp160") == NULL, "fp160 unknown");
  lowp_test_check(lowp_format_by_name(NULL) == NULL, "NULL name");
  lowp_test_check(lowp_format_at(NTABLE) == NULL, "format_at past the end");
}

/* ----------------------------------------------------------- parsing */

static void parse_ok(const char *spec, int p, int emin, int emax, int sub,
                     lowp_inf_t inf, lowp_nan_t nan, int width, double xmax) {
  lowp_format_t f;
  char err[256] = "";
  int s = lowp_format_parse(&f, spec, err, sizeof err);
  if (!lowp_test_check(s == LOWP_OK, "parse '%s' failed: %d %s", spec, s, err)) return;
  lowp_test_check(f.precision == p && f.emin == emin && f.emax == emax &&
                      f.subnormals == sub && f.inf == inf && f.nan == nan,
                  "parse '%s': p=%d emin=%d emax=%d sub=%d inf=%d nan=%d", spec,
                  f.precision, f.emin, f.emax, f.subnormals, f.inf, f.nan);
  lowp_test_check(lowp_format_width(&f) == width, "parse '%s': width %d want %d", spec,
                  lowp_format_width(&f), width);
  check_eq(lowp_format_xmax(&f), xmax, "xmax", spec);
  lowp_test_check(lowp_format_validate(&f, NULL, 0) == LOWP_OK, "'%s' does not validate", spec);
}

/* A bad spec: LOWP_EFORMAT, and the message names what was wrong (it
   contains "needle"). */
static void parse_bad(const char *spec, const char *needle) {
  lowp_format_t f;
  char err[320] = "";
  int s = lowp_format_parse(&f, spec, err, sizeof err);
  lowp_test_check(s == LOWP_EFORMAT, "parse '%s': status %d, want LOWP_EFORMAT", spec, s);
  lowp_test_check(strstr(err, needle) != NULL, "parse '%s': message '%s' lacks '%s'",
                  spec, err, needle);
  /* err may be NULL */
  lowp_test_check(lowp_format_parse(&f, spec, NULL, 0) == LOWP_EFORMAT,
                  "parse '%s' with err NULL", spec);
}

static void parsing(void) {
  lowp_format_t f;
  lowp_rounding_t r;
  int i;
  lowp_test_check(lowp_format_parse(&f, "FP16", NULL, 0) == LOWP_OK &&
                      f.precision == 11 && f.emax == 15, "parse FP16");
  /* docs/design.md's example spec: 2^7 * (2 - 2^-4) = 248 */
  parse_ok("p=5,emin=-6,emax=7,nosub", 5, -6, 7, 0, LOWP_INF_IEEE, LOWP_NAN_IEEE, 9, 248.0);
  /* e4m3 rebuilt from a spec gives e4m3's numbers */
  parse_ok("p=4,emin=-6,emax=8,noinf,nan=allones", 4, -6, 8, 1, LOWP_INF_NONE,
           LOWP_NAN_ALLONES, 8, 448.0);
  parse_ok("p=3,emin=-2,emax=4,noinf,nan=none", 3, -2, 4, 1, LOWP_INF_NONE, LOWP_NAN_NONE,
           6, 28.0);
  parse_ok("p=11,emin=-14,emax=15", 11, -14, 15, 1, LOWP_INF_IEEE, LOWP_NAN_IEEE, 16, 65504.0);
  parse_ok("p=4,emin=-7,emax=7,noinf,nan=negzero", 4, -7, 7, 1, LOWP_INF_NONE,
           LOWP_NAN_NEGZERO, 8, 240.0);

  parse_bad("p=0,emin=-6,emax=7", "p=0");
  parse_bad("p=-3,emin=-6,emax=7", "p=-3");
  parse_bad("p=54,emin=-6,emax=7", "p=54");
  parse_bad("p=5,emin=7,emax=-6", "emin=7 > emax=-6");
  parse_bad("p=5,emin=-6,emax=7,bogus", "bogus");
  parse_bad("p=5,emin=-6,emax=7,nan=maybe", "nan=maybe");
  parse_bad("p=5,emin=x,emax=7", "emin=x");
  /* values beyond int: must not wrap (emax=2^32+1 once read as emax=1) */
  parse_bad("p=5,emin=-6,emax=4294967297", "emax=4294967297");
  parse_bad("p=4294967301,emin=-6,emax=7", "p=4294967301");
  parse_bad("p=5,emin=-2147483649,emax=7", "emin=-2147483649");
  parse_bad("p=5,emin=-6,emax=7,", "bad item ''");   /* trailing comma: an empty item */
  parse_bad("p=5,emin=-6", "emax");
  parse_bad("p=5,emin=-6,emax=7,ebits=3", "exponent bits");
  parse_bad("p=5,emin=-6,emax=7,ebits=12", "ebits");
  parse_bad("p=5,emin=-2000,emax=7", "binary64");
  parse_bad("p=5,emin=-6,emax=7,nozero,sub", "zero");
  /* p=1 leaves no fraction bit to tell an IEEE NaN from infinity */
  parse_bad("p=1,emin=-4,emax=4", "NaN");
  parse_bad("fp17", "unknown format 'fp17'");
  parse_bad("", "empty");

  /* rounding mode names */
  for (i = 0; i < LOWP_RND_COUNT; i++) {
    const char *n = lowp_rounding_name((lowp_rounding_t)i);
    lowp_test_check(lowp_rounding_parse(&r, n) == LOWP_OK && (int)r == i,
                    "rounding %d '%s' does not parse back", i, n);
  }
  lowp_test_check(lowp_rounding_parse(&r, "rnx") == LOWP_EROUND, "rnx parses");
  lowp_test_check(lowp_rounding_parse(&r, "") == LOWP_EROUND, "'' parses");
  lowp_test_check(lowp_rounding_parse(&r, NULL) == LOWP_EROUND, "NULL parses");
  lowp_test_check(!strcmp(lowp_rounding_name((lowp_rounding_t)99), "?"), "name of 99");
}

/* -------------------------------------------------------- validation */

static void validation(void) {
  struct { const char *why; lowp_format_t f; const char *needle; } bad[] = {
    {"p=0", {"x", 0, -6, 7, 1, LOWP_INF_IEEE, LOWP_NAN_IEEE, 1, 1, 5, NULL, NULL}, "p=0"},
    {"emin>emax", {"x", 5, 8, 7, 1, LOWP_INF_IEEE, LOWP_NAN_IEEE, 1, 1, 5, NULL, NULL}, "emin"},
    {"no zero, subnormals", {"x", 3, -6, 7, 1, LOWP_INF_NONE, LOWP_NAN_NONE, 1, 0, 4, NULL, NULL}, "zero"},
    {"negzero NaN unsigned", {"x", 3, -6, 7, 1, LOWP_INF_NONE, LOWP_NAN_NEGZERO, 0, 1, 4, NULL, NULL}, "sign"},
    {"ebits too small", {"x", 3, -6, 7, 1, LOWP_INF_IEEE, LOWP_NAN_IEEE, 1, 1, 3, NULL, NULL}, "exponent bits"},
    {"ebits 0", {"x", 3, 0, 0, 1, LOWP_INF_NONE, LOWP_NAN_NONE, 1, 1, 0, NULL, NULL}, "ebits"},
    {"p=1 IEEE NaN", {"x", 1, -4, 4, 1, LOWP_INF_IEEE, LOWP_NAN_IEEE, 1, 1, 4, NULL, NULL}, "NaN"},
  };
  size_t i;
  char err[256];
  lowp_test_check(lowp_format_validate(NULL, err, sizeof err) == LOWP_EFORMAT, "validate NULL");
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    lowp_test_check(lowp_format_validate(&bad[i].f, err, sizeof err) == LOWP_EFORMAT,
                    "validate accepts %s", bad[i].why);
    lowp_test_check(strstr(err, bad[i].needle) != NULL, "validate %s: message '%s' lacks '%s'",
                    bad[i].why, err, bad[i].needle);
  }
}

int main(void) {
  lowp_test_start("tformat");
  derived_constants();
  parsing();
  validation();
  return lowp_test_end();
}
