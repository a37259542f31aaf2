/* fuzz_format_spec -- libFuzzer harness of lowp_format_parse */

/*
 * Input: a format name or spec ("p=5,emin=-6,emax=7,nosub"; an embedded NUL
 * ends it). Properties of every format lowp accepts:
 *   - it validates (lowp_format_validate);
 *   - its bit encoding round-trips: for every bit pattern (all of them up to
 *     12 bits wide; otherwise every exponent field up to 8 bits, or a sample
 *     of them, with the sign, the smallest and largest fractions and one
 *     drawn from the input) that decodes, the value is one of the format
 *     (rounding it to the format is exact), and it encodes to a pattern that
 *     decodes to the same value, bit for bit (NaN to NaN);
 *   - +-0, +-xmin, +-xmins, +-xmax, infinity and NaN (where the format has
 *     them), and binary64 values drawn from the input rounded to the format,
 *     encode and decode back to themselves;
 *   - its printed form (lowp_format_spec_str where the library has it; the
 *     spec this harness writes from the descriptor's fields in any case)
 *     parses to the same descriptor.
 */

#include "fuzz.h"

#include "format/format.h"
#include "status.h"

#include <math.h>

static int same_value(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return fuzz_same_bits(a, b);
}

static void same_descriptor(const lowp_format_t *a, const lowp_format_t *b, const char *spec) {
  FUZZ_CHECK(a->precision == b->precision && a->emin == b->emin && a->emax == b->emax &&
                 a->subnormals == b->subnormals && a->inf == b->inf && a->nan == b->nan &&
                 a->has_sign == b->has_sign && a->has_zero == b->has_zero &&
                 a->ebits == b->ebits,
             "'%s' parses to another descriptor (p %d/%d emin %d/%d emax %d/%d sub %d/%d "
             "inf %d/%d nan %d/%d sign %d/%d zero %d/%d ebits %d/%d)",
             spec, b->precision, a->precision, b->emin, a->emin, b->emax, a->emax,
             b->subnormals, a->subnormals, (int)b->inf, (int)a->inf, (int)b->nan, (int)a->nan,
             b->has_sign, a->has_sign, b->has_zero, a->has_zero, b->ebits, a->ebits);
}

static void reparse(const lowp_format_t *f, const char *spec) {
  lowp_format_t g;
  char err[512];
  int st = lowp_format_parse(&g, spec, err, sizeof err);
  FUZZ_CHECK(st == LOWP_OK, "printed form '%s' rejected: %s", spec, err);
  same_descriptor(f, &g, spec);
}

/* A value v of f must be exactly representable and encode/decode to itself. */
static void value_roundtrip(double v, const lowp_format_t *f, const char *what) {
  uint64_t b;
  double back, r;
  int st = lowp_encode(&b, v, f);
  FUZZ_CHECK(st == LOWP_OK, "%s %a is not encodable: %s", what, v, lowp_status_str(st));
  st = lowp_decode(&back, b, f);
  FUZZ_CHECK(st == LOWP_OK, "%s %a encodes to 0x%llx, which does not decode", what, v,
             (unsigned long long)b);
  FUZZ_CHECK(same_value(back, v), "%s %a encodes to 0x%llx, which decodes to %a", what, v,
             (unsigned long long)b, back);
  if (!isnan(v)) {
    st = lowp_round_f64(&r, v, f, NULL, LOWP_RND_NE);
    FUZZ_CHECK(st == 0 && same_value(r, v), "%s %a is not a value of the format (rounds to %a)",
               what, v, r);
  }
}

static void pattern_roundtrip(uint64_t bits, const lowp_format_t *f) {
  double v;
  if (lowp_decode(&v, bits, f) != LOWP_OK) return; /* not a pattern of f */
  value_roundtrip(v, f, "decoded pattern");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lowp_format_t f;
  char err[512], spec[256], *t;
  int st, w, sbit, fbits, ebits, s;
  uint64_t e, emax_field, draw = 0x9e3779b97f4a7c15ull, i;
  size_t k;
  if (size > 512) return 0;
  t = fuzz_cstr(data, size);
  st = lowp_format_parse(&f, t, err, sizeof err);
  if (st != LOWP_OK) {
    FUZZ_CHECK(st == LOWP_EFORMAT && err[0], "error '%s' (status %d)",
               err, st);
    free(t);
    return 0;
  }
  st = lowp_format_validate(&f, err, sizeof err);
  FUZZ_CHECK(st == LOWP_OK, "'%s' parses but does not validate: %s", t, err);
  for (k = 0; k < size; k++) draw = (draw ^ data[k]) * 0x100000001b3ull;

  /* every pattern, or every exponent field with chosen fractions */
  w = lowp_format_width(&f);
  fbits = f.precision - 1;
  ebits = f.ebits;
  sbit = f.has_sign;
  FUZZ_CHECK(w == sbit + ebits + fbits && w >= 1 && w <= 64, "width %d", w);
  if (w <= 12) {
    for (i = 0; i < (1ull << w); i++) pattern_roundtrip(i, &f);
  } else {
    emax_field = (1ull << ebits) - 1;
    for (e = 0; e <= emax_field; e++) {
      uint64_t fr[5], fmax = fbits ? (fbits == 64 ? ~0ull : (1ull << fbits) - 1) : 0;
      if (ebits > 8 && e > 3 && e + 4 < emax_field && (e ^ draw) % 61) continue;
      fr[0] = 0; fr[1] = 1 & fmax; fr[2] = fmax; fr[3] = fmax - (fmax > 0);
      draw = draw * 6364136223846793005ull + 1442695040888963407ull;
      fr[4] = (draw >> 11) & fmax;
      for (s = 0; s <= sbit; s++)
        for (k = 0; k < 5; k++)
          pattern_roundtrip(((uint64_t)s << (w - 1)) | (e << fbits) | fr[k], &f);
    }
  }

  /* the named values */
  if (f.has_zero) {
    value_roundtrip(0.0, &f, "+0");
    if (f.has_sign && f.nan != LOWP_NAN_NEGZERO) value_roundtrip(-0.0, &f, "-0");
  }
  value_roundtrip(lowp_format_xmin(&f), &f, "xmin");
  value_roundtrip(lowp_format_xmins(&f), &f, "xmins");
  value_roundtrip(lowp_format_xmax(&f), &f, "xmax");
  if (f.has_sign) {
    value_roundtrip(-lowp_format_xmin(&f), &f, "-xmin");
    value_roundtrip(-lowp_format_xmax(&f), &f, "-xmax");
  }
  if (f.inf == LOWP_INF_IEEE) {
    value_roundtrip(INFINITY, &f, "+inf");
    if (f.has_sign) value_roundtrip(-INFINITY, &f, "-inf");
  }
  if (f.nan != LOWP_NAN_NONE) value_roundtrip(NAN, &f, "NaN");

  /* values drawn from the input, rounded into the format */
  for (k = 0; k < 16; k++) {
    double x, y;
    uint64_t u;
    draw = draw * 6364136223846793005ull + 1442695040888963407ull;
    u = draw;
    memcpy(&x, &u, sizeof x);
    if (isnan(x)) continue;
    if (k & 1) x = ldexp(1.0 + (double)(draw >> 12) / 4503599627370496.0,
                         f.emin - f.precision - 1 + (int)((draw >> 3) % (unsigned)(f.emax - f.emin + f.precision + 4)));
    if ((k & 2) && f.has_sign) x = -x;
    lowp_round_f64(&y, x, &f, NULL, (lowp_rounding_t)(k % 6));
    if (isnan(y) && f.nan == LOWP_NAN_NONE) continue;
    value_roundtrip(y, &f, "rounded value");
  }

  /* the printed form parses back to the same descriptor */
  snprintf(spec, sizeof spec, "p=%d,emin=%d,emax=%d,ebits=%d%s,%s,%s,nan=%s%s", f.precision,
           f.emin, f.emax, f.ebits, f.has_zero ? "" : ",nozero", f.subnormals ? "sub" : "nosub",
           f.inf == LOWP_INF_IEEE ? "inf" : "noinf",
           f.nan == LOWP_NAN_IEEE ? "ieee" : f.nan == LOWP_NAN_ALLONES ? "allones"
           : f.nan == LOWP_NAN_NEGZERO ? "negzero" : "none",
           f.has_sign ? "" : ",unsigned");
  reparse(&f, spec);
#if defined(__has_include)
#if __has_include("format/number.h") /* lowp_format_spec_str came with it */
  st = lowp_format_spec_str(spec, sizeof spec, &f);
  FUZZ_CHECK(st == LOWP_OK, "lowp_format_spec_str: %s", lowp_status_str(st));
  reparse(&f, spec);
#endif
#endif
  free(t);
  return 0;
}
