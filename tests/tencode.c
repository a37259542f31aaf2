/* tencode -- lowp_encode/lowp_decode over every bit pattern of the small formats */

/*
 * For every format of width <= 19 bits (tf32, fp16, bf16, the fp8, fp6 and
 * fp4 formats, e8m0), all 2^width patterns:
 *   - decode succeeds, and re-encoding the value gives the same pattern;
 *     NaN patterns re-encode to the canonical NaN of the same sign (lowp
 *     canonicalises NaN payloads: docs/formats.md), so for them the class
 *     and the sign are checked, and the number of non-canonical NaN
 *     patterns is counted against the expected count;
 *   - the number of patterns in each class (zero, subnormal, normal, inf,
 *     NaN) equals counts worked out by hand from the format's definition;
 *   - positive finite values increase strictly with the pattern, and the
 *     gap to the next one is lowp_ulp of the value;
 *   - fp16 agrees with the compiler's _Float16, bf16 and tf32 with binary32
 *     bit shifts (independent decoders); the fp8/fp6/fp4/e8m0 formats agree
 *     with values typed in from the OCP OFP8 and MX specifications.
 * lowp_decode rejects patterns wider than the format.
 *
 * Run: ctest --test-dir build -R '^tencode$'
 */

#include "format/format.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

typedef struct {
  const lowp_format_t *f;
  /* patterns per class: zero, subnormal, normal, inf, NaN; and the NaN
     patterns that are not the canonical one of their sign */
  long n[5];
  long noncanonical_nan;
} counts_t;

/* Counts from the definitions: e.g. fp16: 2 zeros, 2 x 1023 subnormals,
   2 x 30 x 1024 normals, 2 infinities, 2 x 1023 NaNs of which 2 canonical. */
static const counts_t expected[] = {
    {&LOWP_FMT_TF32, {2, 2 * 1023, 2 * 254 * 1024, 2, 2 * 1023}, 2 * 1022},
    {&LOWP_FMT_FP16, {2, 2 * 1023, 2 * 30 * 1024, 2, 2 * 1023}, 2 * 1022},
    {&LOWP_FMT_BF16, {2, 2 * 127, 2 * 254 * 128, 2, 2 * 127}, 2 * 126},
    {&LOWP_FMT_E4M3, {2, 2 * 7, 2 * 15 * 8 - 2, 0, 2}, 0},
    {&LOWP_FMT_E5M2, {2, 2 * 3, 2 * 30 * 4, 2, 2 * 3}, 2 * 2},
    {&LOWP_FMT_E4M3FNUZ, {1, 2 * 7, 2 * 15 * 8, 0, 1}, 0},
    {&LOWP_FMT_E5M2FNUZ, {1, 2 * 3, 2 * 31 * 4, 0, 1}, 0},
    {&LOWP_FMT_E3M2, {2, 2 * 3, 2 * 7 * 4, 0, 0}, 0},
    {&LOWP_FMT_E2M3, {2, 2 * 7, 2 * 3 * 8, 0, 0}, 0},
    {&LOWP_FMT_E2M1, {2, 2 * 1, 2 * 3 * 2, 0, 0}, 0},
    {&LOWP_FMT_E8M0, {0, 0, 255, 0, 1}, 0},
};
#define NEXPECTED (sizeof expected / sizeof expected[0])

static int same_value(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) && !signbit(a) == !signbit(b);
  return a == b && !signbit(a) == !signbit(b);
}

/* -------------------------------------------------- independent decoders */

/* fp16 through the compiler's half type (tests/common/half.h: software or
   F16C conversion, no lowp code) */
#include "half.h"
static double ref_fp16(uint64_t b) {
  uint16_t h = (uint16_t)b;
  half_t x;
  memcpy(&x, &h, sizeof x);
  return (double)x;
}
/* bf16 and tf32 are the top 16 and 19 bits of a binary32 */
static double ref_bf16(uint64_t b) {
  uint32_t u = (uint32_t)b << 16;
  float x;
  memcpy(&x, &u, sizeof x);
  return (double)x;
}
static double ref_tf32(uint64_t b) {
  uint32_t u = (uint32_t)b << 13;
  float x;
  memcpy(&x, &u, sizeof x);
  return (double)x;
}

typedef double (*ref_decoder)(uint64_t);

/* ------------------------------------------------------- the sweep */

static void sweep(const counts_t *c, ref_decoder ref) {
  const lowp_format_t *f = c->f;
  const int w = lowp_format_width(f);
  const uint64_t n = UINT64_C(1) << w;
  const uint64_t npos = f->has_sign ? n / 2 : n;
  long cls[5] = {0, 0, 0, 0, 0}, noncanon = 0;
  uint64_t b;
  double prev = 0.0;
  int have_prev = 0;
  for (b = 0; b < n; b++) {
    double v = 0.0;
    uint64_t back = ~UINT64_C(0);
    int s = lowp_decode(&v, b, f);
    lowp_class_t k;
    if (!lowp_test_check(s == LOWP_OK, "%s: decode 0x%llx status %d", f->name,
                         (unsigned long long)b, s))
      continue;
    k = lowp_classify(v, f);
    cls[k]++;
    if (ref) {
      double r = ref(b);
      if (!same_value(v, r))
        lowp_test_check(0, "%s: 0x%llx decodes to %a (%.17g), reference %a (%.17g)",
                        f->name, (unsigned long long)b, v, v, r, r);
    }
    s = lowp_encode(&back, v, f);
    if (isnan(v)) {
      /* canonical NaN: same class and sign (none in fnuz/unsigned formats) */
      double v2 = 0.0;
      int ok = s == LOWP_OK && lowp_decode(&v2, back, f) == LOWP_OK && isnan(v2) &&
               !signbit(v2) == !signbit(v);
      lowp_test_check(ok, "%s: NaN 0x%llx re-encodes to 0x%llx (status %d)", f->name,
                      (unsigned long long)b, (unsigned long long)back, s);
      if (back != b) noncanon++;
    } else {
      if (s != LOWP_OK || back != b)
        lowp_test_check(0, "%s: 0x%llx -> %a (%.17g) -> 0x%llx (status %d)", f->name,
                        (unsigned long long)b, v, v, (unsigned long long)back, s);
      else
        lowp_test_check(1, "");
    }
    /* order and ulp on the positive patterns */
    if (b < npos && isfinite(v)) {
      if (have_prev) {
        double gap = v - prev, u = lowp_ulp(prev, f);
        if (!(v > prev) || gap != u)
          lowp_test_check(0, "%s: 0x%llx = %a follows %a: gap %a, lowp_ulp %a", f->name,
                          (unsigned long long)b, v, prev, gap, u);
      }
      prev = v;
      have_prev = 1;
    }
  }
  for (b = 0; b < 5; b++)
    lowp_test_check(cls[b] == c->n[b], "%s: %ld patterns of class %s, want %ld", f->name,
                    cls[b], lowp_class_name((lowp_class_t)b), c->n[b]);
  lowp_test_check(noncanon == c->noncanonical_nan,
                  "%s: %ld non-canonical NaN patterns, want %ld", f->name, noncanon,
                  c->noncanonical_nan);
  /* finite count agrees with the derived constant */
  lowp_test_check((double)(cls[0] + cls[1] + cls[2]) == lowp_format_count_finite(f),
                  "%s: %ld finite patterns, lowp_format_count_finite %.0f", f->name,
                  cls[0] + cls[1] + cls[2], lowp_format_count_finite(f));
  /* one bit beyond the width is rejected */
  {
    double v;
    lowp_test_check(lowp_decode(&v, n, f) == LOWP_ERANGE, "%s: decode 0x%llx accepted",
                    f->name, (unsigned long long)n);
    lowp_test_check(lowp_decode(&v, n | 1, f) == LOWP_ERANGE, "%s: decode 0x%llx accepted",
                    f->name, (unsigned long long)(n | 1));
  }
}

/* -------------------------------------------------- hand-picked values */

typedef struct { const lowp_format_t *f; uint64_t bits; const char *value; } pattern_t;

/* OCP OFP8 v1.0 tables 1-2; Noune et al. (fnuz); OCP MX v1.0 tables 4-6;
   IEEE 754 binary32/binary64 */
static const pattern_t patterns[] = {
    {&LOWP_FMT_E4M3, 0x38, "1"}, {&LOWP_FMT_E4M3, 0x7e, "448"},
    {&LOWP_FMT_E4M3, 0x7f, "nan"}, {&LOWP_FMT_E4M3, 0xff, "-nan"},
    {&LOWP_FMT_E4M3, 0x01, "0x1p-9"}, {&LOWP_FMT_E4M3, 0x08, "0x1p-6"},
    {&LOWP_FMT_E4M3, 0x80, "-0"},
    {&LOWP_FMT_E5M2, 0x3c, "1"}, {&LOWP_FMT_E5M2, 0x7b, "57344"},
    {&LOWP_FMT_E5M2, 0x7c, "inf"}, {&LOWP_FMT_E5M2, 0xfc, "-inf"},
    {&LOWP_FMT_E5M2, 0x01, "0x1p-16"}, {&LOWP_FMT_E5M2, 0x7f, "nan"},
    {&LOWP_FMT_E4M3FNUZ, 0x40, "1"}, {&LOWP_FMT_E4M3FNUZ, 0x7f, "240"},
    {&LOWP_FMT_E4M3FNUZ, 0x80, "nan"}, {&LOWP_FMT_E4M3FNUZ, 0x01, "0x1p-10"},
    {&LOWP_FMT_E5M2FNUZ, 0x40, "1"}, {&LOWP_FMT_E5M2FNUZ, 0x7f, "57344"},
    {&LOWP_FMT_E5M2FNUZ, 0x80, "nan"}, {&LOWP_FMT_E5M2FNUZ, 0x01, "0x1p-17"},
    {&LOWP_FMT_E3M2, 0x0c, "1"}, {&LOWP_FMT_E3M2, 0x1f, "28"}, {&LOWP_FMT_E3M2, 0x3f, "-28"},
    {&LOWP_FMT_E3M2, 0x01, "0.0625"},
    {&LOWP_FMT_E2M3, 0x08, "1"}, {&LOWP_FMT_E2M3, 0x1f, "7.5"}, {&LOWP_FMT_E2M3, 0x01, "0.125"},
    {&LOWP_FMT_E2M1, 0x2, "1"}, {&LOWP_FMT_E2M1, 0x7, "6"}, {&LOWP_FMT_E2M1, 0x1, "0.5"},
    {&LOWP_FMT_E2M1, 0xf, "-6"}, {&LOWP_FMT_E2M1, 0x8, "-0"},
    {&LOWP_FMT_E8M0, 0x7f, "1"}, {&LOWP_FMT_E8M0, 0x00, "0x1p-127"},
    {&LOWP_FMT_E8M0, 0xfe, "0x1p127"}, {&LOWP_FMT_E8M0, 0xff, "nan"},
    {&LOWP_FMT_FP32, 0x3f800000, "1"}, {&LOWP_FMT_FP32, 0x7f7fffff, "0x1.fffffep127"},
    {&LOWP_FMT_FP32, 0x00000001, "0x1p-149"}, {&LOWP_FMT_FP32, 0xff800000, "-inf"},
    {&LOWP_FMT_FP64, UINT64_C(0x3ff0000000000000), "1"},
    {&LOWP_FMT_FP64, UINT64_C(0x0000000000000001), "0x1p-1074"},
    {&LOWP_FMT_FP64, UINT64_C(0x7fefffffffffffff), "0x1.fffffffffffffp1023"},
};

static void hand_picked(void) {
  size_t i;
  for (i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
    const pattern_t *t = &patterns[i];
    double want, v = 0.0;
    uint64_t back = 0;
    want = !strcmp(t->value, "nan") ? NAN : !strcmp(t->value, "-nan") ? -NAN
                                                                     : strtod(t->value, NULL);
    lowp_test_check(lowp_decode(&v, t->bits, t->f) == LOWP_OK && same_value(v, want),
                    "%s: 0x%llx decodes to %a, want %s", t->f->name,
                    (unsigned long long)t->bits, v, t->value);
    lowp_test_check(lowp_encode(&back, want, t->f) == LOWP_OK && back == t->bits,
                    "%s: %s encodes to 0x%llx, want 0x%llx", t->f->name, t->value,
                    (unsigned long long)back, (unsigned long long)t->bits);
  }
}

/* Values that are not values of the format are refused, not rounded. */
static void encode_errors(void) {
  uint64_t b;
  lowp_test_check(lowp_encode(&b, 1.0 + 0x1p-20, &LOWP_FMT_FP16) == LOWP_ERANGE, "fp16 1+2^-20");
  lowp_test_check(lowp_encode(&b, 0x1p-25, &LOWP_FMT_FP16) == LOWP_ERANGE, "fp16 2^-25");
  lowp_test_check(lowp_encode(&b, 65536.0, &LOWP_FMT_FP16) == LOWP_ERANGE, "fp16 65536");
  lowp_test_check(lowp_encode(&b, 480.0, &LOWP_FMT_E4M3) == LOWP_ERANGE, "e4m3 480");
  lowp_test_check(lowp_encode(&b, INFINITY, &LOWP_FMT_E4M3) == LOWP_ERANGE, "e4m3 inf");
  lowp_test_check(lowp_encode(&b, NAN, &LOWP_FMT_E2M1) == LOWP_ERANGE, "e2m1 nan");
  lowp_test_check(lowp_encode(&b, 0.0, &LOWP_FMT_E8M0) == LOWP_ERANGE, "e8m0 0");
  lowp_test_check(lowp_encode(&b, -1.0, &LOWP_FMT_E8M0) == LOWP_ERANGE, "e8m0 -1");
  lowp_test_check(lowp_encode(&b, 3.0, &LOWP_FMT_E8M0) == LOWP_ERANGE, "e8m0 3");
  /* -0 in fnuz is +0 (0x80 is NaN) */
  lowp_test_check(lowp_encode(&b, -0.0, &LOWP_FMT_E4M3FNUZ) == LOWP_OK && b == 0,
                  "e4m3fnuz -0 -> 0x%llx", (unsigned long long)b);
  /* canonical NaNs: exponent and fraction all ones, sign kept */
  lowp_test_check(lowp_encode(&b, NAN, &LOWP_FMT_FP16) == LOWP_OK && b == 0x7fff,
                  "fp16 NaN -> 0x%llx", (unsigned long long)b);
  lowp_test_check(lowp_encode(&b, -NAN, &LOWP_FMT_BF16) == LOWP_OK && b == 0xffff,
                  "bf16 -NaN -> 0x%llx", (unsigned long long)b);
  lowp_test_check(lowp_encode(&b, -NAN, &LOWP_FMT_E4M3FNUZ) == LOWP_OK && b == 0x80,
                  "e4m3fnuz -NaN -> 0x%llx", (unsigned long long)b);
}

int main(void) {
  size_t i;
  lowp_test_start("tencode");
  hand_picked();
  encode_errors();
  for (i = 0; i < NEXPECTED; i++) {
    ref_decoder ref = NULL;
    if (expected[i].f == &LOWP_FMT_FP16) ref = ref_fp16;
    else if (expected[i].f == &LOWP_FMT_BF16) ref = ref_bf16;
    else if (expected[i].f == &LOWP_FMT_TF32) ref = ref_tf32;
    sweep(&expected[i], ref);
  }
  return lowp_test_end();
}
