/* lowp_format -- the table of built-in formats and their derived constants */

#include "format/format.h"
#include "format/pow2.h"
#include "status.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/escape.h"

/* ------------------------------------------------------------ the table */

/* Sources: IEEE 754-2019 (fp64, fp32, fp16); NVIDIA A100 whitepaper (tf32:
   8-bit exponent, 10-bit fraction); Google Brain bfloat16; OCP 8-bit
   Floating Point Specification (OFP8) rev 1.0, 2023 (e4m3 "fn", e5m2);
   Graphcore/AMD "fnuz" variants (Noune et al., arXiv:2206.02915, bias 8 and
   16, NaN = 0x80); OCP Microscaling Formats (MX) v1.0, 2023 (e3m2, e2m3,
   e2m1, e8m0). Fields: name, p, emin, emax, subnormals, inf, nan,
   has_sign, has_zero, ebits, aliases, doc. */
const lowp_format_t LOWP_FMT_FP64 = {"fp64", 53, -1022, 1023, 1, LOWP_INF_IEEE,
    LOWP_NAN_IEEE, 1, 1, 11, "binary64,double,float64,f64", "IEEE 754 binary64"};
const lowp_format_t LOWP_FMT_FP32 = {"fp32", 24, -126, 127, 1, LOWP_INF_IEEE,
    LOWP_NAN_IEEE, 1, 1, 8, "binary32,float,float32,f32", "IEEE 754 binary32"};
const lowp_format_t LOWP_FMT_TF32 = {"tf32", 11, -126, 127, 1, LOWP_INF_IEEE,
    LOWP_NAN_IEEE, 1, 1, 8, "tensorfloat32", "NVIDIA TensorFloat-32 (A100 whitepaper): fp32 range, fp16 precision"};
const lowp_format_t LOWP_FMT_FP16 = {"fp16", 11, -14, 15, 1, LOWP_INF_IEEE,
    LOWP_NAN_IEEE, 1, 1, 5, "binary16,half,float16,f16", "IEEE 754 binary16"};
const lowp_format_t LOWP_FMT_BF16 = {"bf16", 8, -126, 127, 1, LOWP_INF_IEEE,
    LOWP_NAN_IEEE, 1, 1, 8, "bfloat16", "Google Brain bfloat16: fp32 range, 8-bit significand"};
const lowp_format_t LOWP_FMT_E4M3 = {"e4m3", 4, -6, 8, 1, LOWP_INF_NONE,
    LOWP_NAN_ALLONES, 1, 1, 4, "e4m3fn,fp8e4m3,float8_e4m3fn", "OCP OFP8 E4M3 (fn): no inf, NaN = S.1111.111"};
const lowp_format_t LOWP_FMT_E5M2 = {"e5m2", 3, -14, 15, 1, LOWP_INF_IEEE,
    LOWP_NAN_IEEE, 1, 1, 5, "fp8e5m2,float8_e5m2", "OCP OFP8 E5M2: IEEE-like"};
const lowp_format_t LOWP_FMT_E4M3FNUZ = {"e4m3fnuz", 4, -7, 7, 1, LOWP_INF_NONE,
    LOWP_NAN_NEGZERO, 1, 1, 4, "float8_e4m3fnuz", "Graphcore/AMD E4M3 fnuz: bias 8, NaN = 0x80, no -0"};
const lowp_format_t LOWP_FMT_E5M2FNUZ = {"e5m2fnuz", 3, -15, 15, 1, LOWP_INF_NONE,
    LOWP_NAN_NEGZERO, 1, 1, 5, "float8_e5m2fnuz", "Graphcore/AMD E5M2 fnuz: bias 16, NaN = 0x80, no -0"};
const lowp_format_t LOWP_FMT_E3M2 = {"e3m2", 3, -2, 4, 1, LOWP_INF_NONE,
    LOWP_NAN_NONE, 1, 1, 3, "fp6e3m2,float6_e3m2fn", "OCP MX FP6 E3M2: no inf, no NaN"};
const lowp_format_t LOWP_FMT_E2M3 = {"e2m3", 4, 0, 2, 1, LOWP_INF_NONE,
    LOWP_NAN_NONE, 1, 1, 2, "fp6e2m3,float6_e2m3fn", "OCP MX FP6 E2M3: no inf, no NaN"};
const lowp_format_t LOWP_FMT_E2M1 = {"e2m1", 2, 0, 2, 1, LOWP_INF_NONE,
    LOWP_NAN_NONE, 1, 1, 2, "fp4,fp4e2m1,float4_e2m1fn", "OCP MX FP4 E2M1: no inf, no NaN"};
const lowp_format_t LOWP_FMT_E8M0 = {"e8m0", 1, -127, 127, 0, LOWP_INF_NONE,
    LOWP_NAN_ALLONES, 0, 0, 8, "ue8m0,float8_e8m0fnu", "OCP MX scale E8M0: unsigned powers of two, NaN = 0xFF"};

static const lowp_format_t *const table[] = {
    &LOWP_FMT_FP64, &LOWP_FMT_FP32, &LOWP_FMT_TF32, &LOWP_FMT_FP16,
    &LOWP_FMT_BF16, &LOWP_FMT_E4M3, &LOWP_FMT_E5M2, &LOWP_FMT_E4M3FNUZ,
    &LOWP_FMT_E5M2FNUZ, &LOWP_FMT_E3M2, &LOWP_FMT_E2M3, &LOWP_FMT_E2M1,
    &LOWP_FMT_E8M0};

/* ------------------------------------------------------ private helpers */

static int streq_nocase(const char *a, const char *b, size_t nb) {
  size_t i;
  for (i = 0; i < nb; i++) {
    if (a[i] == '\0' || tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
      return 0;
  }
  return a[nb] == '\0';
}

static int name_matches(const lowp_format_t *f, const char *name) {
  const char *s;
  if (streq_nocase(name, f->name, strlen(f->name))) return 1;
  for (s = f->alias; s && *s;) {
    size_t len = strcspn(s, ",");
    if (streq_nocase(name, s, len)) return 1;
    s += len;
    if (*s == ',') s++;
  }
  return 0;
}

static void set_err(char *err, size_t errlen, const char *msg) {
  lowp_errf(err, errlen, 0, "%s", msg);
}

/* ----------------------------------------------------------- public API */

size_t lowp_format_count(void) { return sizeof table / sizeof table[0]; }

const lowp_format_t *lowp_format_at(size_t i) {
  return i < lowp_format_count() ? table[i] : NULL;
}

const lowp_format_t *lowp_format_by_name(const char *name) {
  size_t i;
  if (!name) return NULL;
  for (i = 0; i < lowp_format_count(); i++)
    if (name_matches(table[i], name)) return table[i];
  return NULL;
}

int lowp_format_bias(const lowp_format_t *f) {
  /* Field 0 holds zero and subnormals; field 1 is emin. A format with no
     zero (e8m0) uses field 0 for emin itself. */
  return f->has_zero ? 1 - f->emin : -f->emin;
}

int lowp_format_width(const lowp_format_t *f) {
  return (f->has_sign ? 1 : 0) + f->ebits + f->precision - 1;
}

/* The top exponent field that holds a finite binade (emax + bias) may be at
   most this: one below the all-ones field when that field is reserved (IEEE
   inf or NaN, or an all-ones NaN that would otherwise be a whole binade when
   p = 1), else the all-ones field itself. */
static int top_finite_field_limit(const lowp_format_t *f) {
  int ones = (1 << f->ebits) - 1;
  if (f->inf == LOWP_INF_IEEE || f->nan == LOWP_NAN_IEEE) return ones - 1;
  if (f->nan == LOWP_NAN_ALLONES && f->precision == 1) return ones - 1;
  return ones;
}

/* The rules, in order. Each returns 0 or writes its reason into buf and
   returns a rule number, which advise() uses to propose a fix. Every rule
   exists because breaking it makes two classes share a bit pattern or makes
   a value impossible to encode (tests/tformat_spec.c proves the converse on
   every small spec: what passes round-trips through lowp_encode and
   lowp_decode). */
enum { R_OK = 0, R_P, R_ORDER, R_RANGE, R_EBITS, R_WIDTH, R_ZEROSUB, R_NEGZERO_SIGN,
       R_NEGZERO_ZERO, R_IEEENAN_P1, R_INF_ALLONES_P1, R_FIELDS };

static int check_rules(const lowp_format_t *f, char *buf, size_t len) {
  if (f->precision < 1 || f->precision > 53) {
    snprintf(buf, len, "precision p=%d out of range: need 1 <= p <= 53 (lowp's "
             "values are binary64 values)", f->precision);
    return R_P;
  }
  if (f->emin > f->emax) {
    snprintf(buf, len, "emin=%d > emax=%d", f->emin, f->emax);
    return R_ORDER;
  }
  if (f->emin < -1022 || f->emax > 1023 ||
      (f->subnormals && f->emin - f->precision + 1 < -1074)) {
    snprintf(buf, len, "exponent range exceeds binary64 (need emin >= -1022, "
             "emax <= 1023, emin-p+1 >= -1074)");
    return R_RANGE;
  }
  if (f->ebits < 1 || f->ebits > 11) {
    snprintf(buf, len, "exponent field width ebits=%d out of range: need 1..11",
             f->ebits);
    return R_EBITS;
  }
  if (lowp_format_width(f) > 64) {
    snprintf(buf, len, "the encoding needs %d bits (sign, %d exponent bits, %d "
             "fraction bits): at most 64", lowp_format_width(f), f->ebits,
             f->precision - 1);
    return R_WIDTH;
  }
  if (!f->has_zero && f->subnormals) {
    snprintf(buf, len, "a format without zero cannot have subnormals");
    return R_ZEROSUB;
  }
  if (f->nan == LOWP_NAN_NEGZERO && !f->has_sign) {
    snprintf(buf, len, "nan=negzero needs a sign bit");
    return R_NEGZERO_SIGN;
  }
  if (f->nan == LOWP_NAN_NEGZERO && !f->has_zero) {
    /* field 0 is emin when there is no zero: 1.0..0.0..0 is -2^emin */
    snprintf(buf, len, "nan=negzero uses the pattern of -0, which a format "
             "without zero gives to -2^emin");
    return R_NEGZERO_ZERO;
  }
  if (f->nan == LOWP_NAN_IEEE && f->precision < 2) {
    /* an IEEE NaN is the top field with a nonzero fraction: p=1 has no
       fraction bit, so NaN would encode as infinity */
    snprintf(buf, len, "nan=ieee needs p >= 2 (a fraction bit to tell NaN "
             "from inf)");
    return R_IEEENAN_P1;
  }
  if (f->nan == LOWP_NAN_ALLONES && f->inf == LOWP_INF_IEEE && f->precision == 1) {
    /* all ones is the top field with fraction 1..1; with no fraction bit
       that is also infinity's pattern */
    snprintf(buf, len, "with p=1 the all-ones NaN is infinity's pattern");
    return R_INF_ALLONES_P1;
  }
  if (f->emax + lowp_format_bias(f) > top_finite_field_limit(f)) {
    snprintf(buf, len, "emax=%d does not fit in %d exponent bits%s", f->emax,
             f->ebits, top_finite_field_limit(f) < (1 << f->ebits) - 1
                           ? " (the all-ones field is reserved for inf/NaN)" : "");
    return R_FIELDS;
  }
  return R_OK;
}

/* Candidate fixes for a broken rule, in order of preference; the first that
   passes every rule is advised (so the advice is never itself rejected).
   Returns 1 and fills *fix, or 0 when no candidate passes. */
static int advise(lowp_format_t *fix, const lowp_format_t *f, int rule) {
  char tmp[200];
  lowp_format_t c[16];
  int n = 0, i, eb;
  switch (rule) {
  case R_ZEROSUB:
    c[n] = *f; c[n].subnormals = 0; n++;
    break;
  case R_NEGZERO_ZERO:
    c[n] = *f; c[n].has_zero = 1; n++;
    c[n] = *f; c[n].nan = LOWP_NAN_ALLONES; n++;
    c[n] = *f; c[n].nan = LOWP_NAN_NONE; n++;
    break;
  case R_IEEENAN_P1:
  case R_INF_ALLONES_P1:
    c[n] = *f; c[n].nan = LOWP_NAN_NONE; n++;
    c[n] = *f; c[n].nan = LOWP_NAN_ALLONES; c[n].inf = LOWP_INF_NONE; n++;
    break;
  case R_FIELDS:
  case R_EBITS:
    for (eb = 1; eb <= 11 && n < 16; eb++) {
      c[n] = *f; c[n].ebits = eb;
      if (check_rules(&c[n], tmp, sizeof tmp) == R_OK) { n++; break; }
    }
    break;
  default:
    break;
  }
  /* a fix may break a later rule (ebits): give it the smallest ebits that
     holds its range */
  for (i = 0; i < n; i++) {
    if (check_rules(&c[i], tmp, sizeof tmp) == R_FIELDS)
      for (eb = 1; eb <= 11; eb++) {
        c[i].ebits = eb;
        if (check_rules(&c[i], tmp, sizeof tmp) == R_OK) break;
      }
    if (check_rules(&c[i], tmp, sizeof tmp) == R_OK) { *fix = c[i]; return 1; }
  }
  return 0;
}

int lowp_format_validate(const lowp_format_t *f, char *err, size_t errlen) {
  char buf[200], spec[128];
  lowp_format_t fix;
  int rule;
  if (!f) { set_err(err, errlen, "no format"); return LOWP_EFORMAT; }
  rule = check_rules(f, buf, sizeof buf);
  if (rule == R_OK) return LOWP_OK;
  if (err && errlen) {
    if (advise(&fix, f, rule) && lowp_format_spec_str(spec, sizeof spec, &fix) == LOWP_OK)
      lowp_errf(err, errlen, 0, "%s; try '%s'", buf, spec);
    else
      lowp_errf(err, errlen, 0, "%s", buf);
  }
  return LOWP_EFORMAT;
}

int lowp_format_spec_str(char *buf, size_t len, const lowp_format_t *f) {
  static const char *const nan_names[] = {"none", "ieee", "allones", "negzero"};
  int n;
  if (!buf || !f || (unsigned)f->nan > 3u) return LOWP_EINVAL;
  n = snprintf(buf, len, "p=%d,emin=%d,emax=%d,ebits=%d%s%s,nan=%s%s%s",
               f->precision, f->emin, f->emax, f->ebits,
               f->subnormals ? "" : ",nosub",
               f->inf == LOWP_INF_IEEE ? "" : ",noinf", nan_names[f->nan],
               f->has_sign ? "" : ",unsigned", f->has_zero ? "" : ",nozero");
  return (n < 0 || (size_t)n >= len) ? LOWP_ERANGE : LOWP_OK;
}

double lowp_format_u(const lowp_format_t *f) { return ldexp(1.0, -f->precision); }

double lowp_format_eps(const lowp_format_t *f) {
  return ldexp(1.0, 1 - f->precision);
}

double lowp_format_xmin(const lowp_format_t *f) {
  return (f->emin >= -1022 && f->emin <= 1023) ? lowp__pow2(f->emin) : ldexp(1.0, f->emin);
}

double lowp_format_xmins(const lowp_format_t *f) {
  return f->subnormals ? ldexp(1.0, f->emin - f->precision + 1)
                       : ldexp(1.0, f->emin);
}

/* The all-ones NaN (e4m3's S.1111.111) takes the largest significand of the
   top binade when that binade's field is the all-ones field. */
static int top_significand_is_nan(const lowp_format_t *f) {
  return f->nan == LOWP_NAN_ALLONES &&
         f->emax + lowp_format_bias(f) == (1 << f->ebits) - 1;
}

double lowp_format_xmax(const lowp_format_t *f) {
  int p = f->precision;
  /* largest significand (2^p - 1), or 2^p - 2 when its pattern is NaN */
  double m;
  if (p < 1 || p > 53 || f->emax < -1022 || f->emax > 1023) {
    /* not a valid format: still return something finite-or-inf, slowly */
    m = ldexp(1.0, p) - (top_significand_is_nan(f) ? 2.0 : 1.0);
    return ldexp(m, f->emax - p + 1);
  }
  /* exact integer significand, then one exact scaling (this is on the
     scalar rounding path, where ldexp's cost showed) */
  m = (double)((UINT64_C(1) << p) - (top_significand_is_nan(f) ? 2u : 1u));
  return lowp__scale2(m, f->emax - p + 1);
}

double lowp_format_count_finite(const lowp_format_t *f) {
  double half = ldexp(1.0, f->precision - 1);
  double pos = (double)(f->emax - f->emin + 1) * half; /* normals */
  double zeros;
  if (f->subnormals) pos += half - 1.0;
  if (top_significand_is_nan(f)) pos -= 1.0;
  if (!f->has_zero) zeros = 0.0;
  else if (f->has_sign && f->nan != LOWP_NAN_NEGZERO) zeros = 2.0;
  else zeros = 1.0;
  return (f->has_sign ? 2.0 * pos : pos) + zeros;
}

double lowp_format_range_decades(const lowp_format_t *f) {
  return log10(lowp_format_xmax(f)) - log10(lowp_format_xmins(f));
}

/* Parse "p=5,emin=-6,emax=7,nosub". Defaults: subnormals (none without
   zero), IEEE inf and NaN, signed, with zero, and the smallest ebits that
   holds the range. Each property may be given once: "p=3,p=4" or
   "sub,nosub" is an error, not "the last one wins". */
enum { K_P = 1, K_EMIN = 2, K_EMAX = 4, K_EBITS = 8, K_SUB = 16, K_INF = 32,
       K_NAN = 64, K_SIGN = 128, K_ZERO = 256 };

int lowp_format_parse(lowp_format_t *out, const char *text, char *err,
                      size_t errlen) {
  const lowp_format_t *b;
  lowp_format_t f;
  unsigned seen = 0, k;
  char buf[320];
  const char *s;

  if (!text || !*text) {
    set_err(err, errlen, "empty format name");
    return LOWP_EFORMAT;
  }
  b = lowp_format_by_name(text);
  if (b) { *out = *b; return LOWP_OK; }
  if (!strchr(text, '=')) {
    snprintf(buf, sizeof buf, "unknown format '%.64s'; known: fp64 fp32 tf32 "
             "fp16 bf16 e4m3 e5m2 e4m3fnuz e5m2fnuz e3m2 e2m3 e2m1 e8m0, or a "
             "spec such as p=5,emin=-6,emax=7[,nosub,noinf,nan=none]", text);
    set_err(err, errlen, buf);
    return LOWP_EFORMAT;
  }
  memset(&f, 0, sizeof f);
  f.name = "custom";
  f.subnormals = 1; f.inf = LOWP_INF_IEEE; f.nan = LOWP_NAN_IEEE;
  f.has_sign = 1; f.has_zero = 1;
  for (s = text; *s;) {
    size_t len = strcspn(s, ",");
    char key[32], *end;
    const char *eq = memchr(s, '=', len);
    long v = 0;
    size_t klen = eq ? (size_t)(eq - s) : len;
    if (klen == 0 || klen >= sizeof key) goto bad_item;
    memcpy(key, s, klen); key[klen] = '\0';
    if (eq) {
      const char *vs = eq + 1;
      size_t vlen = len - klen - 1;
      if (!strcmp(key, "nan")) {
        k = K_NAN;
        if (vlen == 4 && !strncmp(vs, "ieee", 4)) f.nan = LOWP_NAN_IEEE;
        else if (vlen == 7 && !strncmp(vs, "allones", 7)) f.nan = LOWP_NAN_ALLONES;
        else if (vlen == 7 && !strncmp(vs, "negzero", 7)) f.nan = LOWP_NAN_NEGZERO;
        else if (vlen == 4 && !strncmp(vs, "none", 4)) f.nan = LOWP_NAN_NONE;
        else goto bad_item;
      } else {
        /* an optional '-' and decimal digits only: strtol would also take
           blanks, '+' and "0x" */
        size_t d = (vlen && vs[0] == '-') ? 1 : 0;
        if (vlen == d || vlen > 12) goto bad_item;
        for (; d < vlen; d++)
          if (vs[d] < '0' || vs[d] > '9') goto bad_item;
        v = strtol(vs, &end, 10);
        /* |v| <= 100000: far beyond any valid p, emin, emax or ebits, and
           the cast to int below cannot wrap ("emax=4294967297" was read
           as emax=1 before this check) */
        if (end != vs + vlen || v < -100000 || v > 100000) goto bad_item;
        if (!strcmp(key, "p")) { f.precision = (int)v; k = K_P; }
        else if (!strcmp(key, "emin")) { f.emin = (int)v; k = K_EMIN; }
        else if (!strcmp(key, "emax")) { f.emax = (int)v; k = K_EMAX; }
        else if (!strcmp(key, "ebits")) { f.ebits = (int)v; k = K_EBITS; }
        else goto bad_item;
      }
    } else if (!strcmp(key, "sub")) { f.subnormals = 1; k = K_SUB; }
    else if (!strcmp(key, "nosub")) { f.subnormals = 0; k = K_SUB; }
    else if (!strcmp(key, "inf")) { f.inf = LOWP_INF_IEEE; k = K_INF; }
    else if (!strcmp(key, "noinf")) { f.inf = LOWP_INF_NONE; k = K_INF; }
    else if (!strcmp(key, "unsigned")) { f.has_sign = 0; k = K_SIGN; }
    else if (!strcmp(key, "nozero")) { f.has_zero = 0; k = K_ZERO; }
    else goto bad_item;
    if (seen & k) {
      snprintf(buf, sizeof buf, "'%.*s' repeats a property already given in "
               "format spec '%.64s': give each of p, emin, emax, ebits, "
               "sub/nosub, inf/noinf, nan, unsigned, nozero at most once",
               (int)len, s, text);
      set_err(err, errlen, buf);
      return LOWP_EFORMAT;
    }
    seen |= k;
    s += len;
    if (*s == ',' && *++s == '\0') { len = 0; goto bad_item; } /* "p=5,...," */
    continue;
  bad_item:
    snprintf(buf, sizeof buf, "bad item '%.*s' in format spec; accepted: p=N, "
             "emin=N, emax=N, ebits=N, sub, nosub, inf, noinf, "
             "nan=ieee|allones|negzero|none, unsigned, nozero", (int)len, s);
    set_err(err, errlen, buf);
    return LOWP_EFORMAT;
  }
  if ((seen & (K_P | K_EMIN | K_EMAX)) != (K_P | K_EMIN | K_EMAX)) {
    set_err(err, errlen, "a format spec needs p=, emin= and emax=");
    return LOWP_EFORMAT;
  }
  /* a format without zero has no subnormals unless "sub" says otherwise
     (which validation then rejects, rather than ignoring it) */
  if (!f.has_zero && !(seen & K_SUB)) f.subnormals = 0;
  if (f.emin > f.emax) {
    snprintf(buf, sizeof buf, "emin=%d > emax=%d", f.emin, f.emax);
    set_err(err, errlen, buf);
    return LOWP_EFORMAT;
  }
  if (!(seen & K_EBITS)) {
    /* smallest field that holds every binade plus the reserved all-ones
       field (top_finite_field_limit's rule) */
    int reserve = (f.inf == LOWP_INF_IEEE || f.nan == LOWP_NAN_IEEE ||
                   (f.nan == LOWP_NAN_ALLONES && f.precision == 1)) ? 1 : 0;
    long fields = (long)f.emax - f.emin + 1 + (f.has_zero ? 1 : 0) + reserve;
    f.ebits = 1;
    while (f.ebits < 11 && (1L << f.ebits) < fields) f.ebits++;
  }
  if (lowp_format_validate(&f, err, errlen)) return LOWP_EFORMAT;
  *out = f;
  return LOWP_OK;
}

static const char *const rnd_names[LOWP_RND_COUNT] = {"rne", "rna", "rtz",
                                                      "rup", "rdn", "rto", "sr"};

int lowp_rounding_parse(lowp_rounding_t *rnd, const char *text) {
  int i;
  for (i = 0; i < LOWP_RND_COUNT; i++)
    if (text && !strcmp(text, rnd_names[i])) {
      *rnd = (lowp_rounding_t)i;
      return LOWP_OK;
    }
  return LOWP_EROUND;
}

const char *lowp_rounding_name(lowp_rounding_t rnd) {
  return (unsigned)rnd < LOWP_RND_COUNT ? rnd_names[rnd] : "?";
}

const char *lowp_class_name(lowp_class_t c) {
  static const char *const names[] = {"zero", "subnormal", "normal", "inf", "nan"};
  return (unsigned)c < 5 ? names[c] : "?";
}

lowp_class_t lowp_classify(double v, const lowp_format_t *f) {
  if (isnan(v)) return LOWP_CLASS_NAN;
  if (isinf(v)) return LOWP_CLASS_INF;
  if (v == 0.0) return LOWP_CLASS_ZERO;
  if (fabs(v) < lowp_format_xmin(f)) return LOWP_CLASS_SUBNORMAL;
  return LOWP_CLASS_NORMAL;
}

double lowp_ulp(double v, const lowp_format_t *f) {
  int e;
  if (v == 0.0 || !isfinite(v)) return ldexp(1.0, f->emin - f->precision + 1);
  (void)frexp(v, &e); /* v = fr * 2^e, fr in [0.5, 1) */
  e -= 1;
  if (e < f->emin) e = f->emin;
  return ldexp(1.0, e - f->precision + 1);
}

double lowp_ulp_toward(double v, double w, const lowp_format_t *f) {
  double u = lowp_ulp(v, f);
  int e;
  if (v == 0.0 || !isfinite(v) || !(fabs(w) < fabs(v))) return u;
  if (fabs(frexp(v, &e)) == 0.5 && e - 1 > f->emin) u *= 0.5; /* |v| = 2^(e-1) */
  return u;
}
