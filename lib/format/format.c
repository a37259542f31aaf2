/* lowp_format -- the table of built-in formats and their derived constants */

#include "format/format.h"
#include "format/pow2.h"
#include "status.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  if (err && errlen) snprintf(err, errlen, "%s", msg);
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

int lowp_format_validate(const lowp_format_t *f, char *err, size_t errlen) {
  int bias, topfield;
  char buf[160];
  if (!f) { set_err(err, errlen, "no format"); return LOWP_EFORMAT; }
  if (f->precision < 1 || f->precision > 53) {
    snprintf(buf, sizeof buf, "precision p=%d out of range: need 1 <= p <= 53 "
             "(lowp's values are binary64 values)", f->precision);
    set_err(err, errlen, buf);
    return LOWP_EFORMAT;
  }
  if (f->emin > f->emax) {
    snprintf(buf, sizeof buf, "emin=%d > emax=%d", f->emin, f->emax);
    set_err(err, errlen, buf);
    return LOWP_EFORMAT;
  }
  if (f->emin < -1022 || f->emax > 1023 ||
      (f->subnormals && f->emin - f->precision + 1 < -1074)) {
    set_err(err, errlen, "exponent range exceeds binary64 (need emin >= -1022, "
            "emax <= 1023, emin-p+1 >= -1074)");
    return LOWP_EFORMAT;
  }
  if (f->ebits < 1 || f->ebits > 11 || lowp_format_width(f) > 64) {
    set_err(err, errlen, "exponent field width ebits must be 1..11");
    return LOWP_EFORMAT;
  }
  if (!f->has_zero && f->subnormals) {
    set_err(err, errlen, "a format without zero cannot have subnormals");
    return LOWP_EFORMAT;
  }
  bias = lowp_format_bias(f);
  topfield = f->emax + bias;
  if (f->inf == LOWP_INF_IEEE || f->nan == LOWP_NAN_IEEE) {
    if (topfield > (1 << f->ebits) - 2) {
      snprintf(buf, sizeof buf, "emax=%d needs more than %d exponent bits "
               "when the top field is reserved for inf/NaN", f->emax, f->ebits);
      set_err(err, errlen, buf);
      return LOWP_EFORMAT;
    }
  } else if (topfield > (1 << f->ebits) - 1) {
    snprintf(buf, sizeof buf, "emax=%d does not fit in %d exponent bits",
             f->emax, f->ebits);
    set_err(err, errlen, buf);
    return LOWP_EFORMAT;
  }
  if (f->nan == LOWP_NAN_ALLONES && f->precision == 1 &&
      topfield == (1 << f->ebits) - 1) {
    set_err(err, errlen, "with p=1 the all-ones NaN would take the whole top "
            "binade: lower emax");
    return LOWP_EFORMAT;
  }
  if (f->nan == LOWP_NAN_IEEE && f->precision < 2) {
    /* an IEEE NaN is the top field with a nonzero fraction: p=1 has no
       fraction bit, so NaN would encode as infinity */
    set_err(err, errlen, "nan=ieee needs p >= 2 (a fraction bit to tell NaN "
            "from inf): with p=1 use nan=allones or nan=none");
    return LOWP_EFORMAT;
  }
  if (f->nan == LOWP_NAN_NEGZERO && !f->has_sign) {
    set_err(err, errlen, "nan=negzero needs a sign bit");
    return LOWP_EFORMAT;
  }
  return LOWP_OK;
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

/* Parse "p=5,emin=-6,emax=7,nosub". Defaults: subnormals, IEEE inf and NaN,
   signed, with zero, and the smallest ebits that holds the range. */
int lowp_format_parse(lowp_format_t *out, const char *text, char *err,
                      size_t errlen) {
  const lowp_format_t *b;
  lowp_format_t f;
  int have_p = 0, have_emin = 0, have_emax = 0, have_ebits = 0;
  char buf[256];
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
        if (vlen == 4 && !strncmp(vs, "ieee", 4)) f.nan = LOWP_NAN_IEEE;
        else if (vlen == 7 && !strncmp(vs, "allones", 7)) f.nan = LOWP_NAN_ALLONES;
        else if (vlen == 7 && !strncmp(vs, "negzero", 7)) f.nan = LOWP_NAN_NEGZERO;
        else if (vlen == 4 && !strncmp(vs, "none", 4)) f.nan = LOWP_NAN_NONE;
        else goto bad_item;
      } else {
        if (vlen == 0 || vlen > 12) goto bad_item;
        v = strtol(vs, &end, 10);
        /* |v| <= 100000: far beyond any valid p, emin, emax or ebits, and
           the cast to int below cannot wrap ("emax=4294967297" was read
           as emax=1 before this check) */
        if (end != vs + vlen || v < -100000 || v > 100000) goto bad_item;
        if (!strcmp(key, "p")) { f.precision = (int)v; have_p = 1; }
        else if (!strcmp(key, "emin")) { f.emin = (int)v; have_emin = 1; }
        else if (!strcmp(key, "emax")) { f.emax = (int)v; have_emax = 1; }
        else if (!strcmp(key, "ebits")) { f.ebits = (int)v; have_ebits = 1; }
        else goto bad_item;
      }
    } else if (!strcmp(key, "sub")) f.subnormals = 1;
    else if (!strcmp(key, "nosub")) f.subnormals = 0;
    else if (!strcmp(key, "inf")) f.inf = LOWP_INF_IEEE;
    else if (!strcmp(key, "noinf")) f.inf = LOWP_INF_NONE;
    else if (!strcmp(key, "unsigned")) f.has_sign = 0;
    else if (!strcmp(key, "nozero")) { f.has_zero = 0; f.subnormals = 0; }
    else goto bad_item;
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
  if (!have_p || !have_emin || !have_emax) {
    set_err(err, errlen, "a format spec needs p=, emin= and emax=");
    return LOWP_EFORMAT;
  }
  if (f.emin > f.emax) {
    snprintf(buf, sizeof buf, "emin=%d > emax=%d", f.emin, f.emax);
    set_err(err, errlen, buf);
    return LOWP_EFORMAT;
  }
  if (!have_ebits) {
    /* smallest field that holds every binade plus the reserved ones */
    int reserve = (f.inf == LOWP_INF_IEEE || f.nan == LOWP_NAN_IEEE) ? 1 : 0;
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
