/* lowp_bsformat -- the table of block-scaled formats, their spec strings and their packing */

#define _POSIX_C_SOURCE 200809L /* pthread_once, strtok_r */

#include "format/bsformat.h"
#include "status.h"

#include <ctype.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/escape.h"

/* ------------------------------------------------------------ the table */

/* Integer elements as a format: the integers 0..2^(bits-1)-1 are the values
   m * 2^(e-p+1) with p = bits - 1 and e = emin = emax = bits - 2 (all of them
   "subnormal" but the top binade; quantum 1). No inf, no NaN; ebits 1. */
#define INT_FMT(nm, bits) {nm, (bits) - 1, (bits) - 2, (bits) - 2, 1, LOWP_INF_NONE, LOWP_NAN_NONE, 1, 1, 1, NULL, \
    "symmetric two's-complement integers -(2^(b-1)-1)..2^(b-1)-1"}

static const lowp_format_t INT_FORMATS[7] = {INT_FMT("int2", 2), INT_FMT("int3", 3), INT_FMT("int4", 4),
                                             INT_FMT("int5", 5), INT_FMT("int6", 6), INT_FMT("int7", 7),
                                             INT_FMT("int8", 8)};

/* Sources. OCP Microscaling Formats (MX) Specification v1.0 (2023), Table 1
   (section 5): MXFP8 E4M3/E5M2, MXFP6 E3M2/E2M3, MXFP4 E2M1, block k = 32,
   scale E8M0. NVFP4: NVIDIA, "Introducing NVFP4 for Efficient and Accurate
   Low-Precision Inference" (developer blog, 2025) and the PTX ISA (tcgen05.mma
   kind::mxf4nvf4 with scale_vec::4X: blocks of 16 e2m1 with a ue4m3 scale),
   with TransformerEngine's per-tensor fp32 second level. int8_b32: ggml's
   block_q8_0 (ggml/src/ggml-common.h: QK8_0 = 32 int8 values and one fp16
   scale d; quantize_row_q8_0_ref: d = amax / 127). int4_b32: the symmetric
   4-bit analogue (qmax 7, fp16 scale, 32 values) -- not ggml's q4_0, which
   maps the signed extreme value to -8 and stores q + 8. */
#define E8M0S(nm, el, bits, alias, doc) {nm, el, bits, 0, {0}, 0, 32, 0, LOWP_BSR_FLOOR, alias, doc, 0}

/* The table holds the element and scale descriptors by value, and C cannot
   copy an extern const object in a static initializer: it is filled once,
   under pthread_once, on first use. */
static lowp_bsformat_t table[8];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void init_table(void) {
  static const char *const mx = "OCP MX v1.0 Table 1: 32 elements sharing an E8M0 scale";
  lowp_bsformat_t t[8] = {
      E8M0S("mxfp8_e4m3", LOWP_FMT_E4M3, 8, "mxfp8", mx),
      E8M0S("mxfp8_e5m2", LOWP_FMT_E5M2, 8, NULL, mx),
      E8M0S("mxfp6_e3m2", LOWP_FMT_E3M2, 6, NULL, mx),
      E8M0S("mxfp6_e2m3", LOWP_FMT_E2M3, 6, "mxfp6", mx),
      E8M0S("mxfp4", LOWP_FMT_E2M1, 4, "mxfp4_e2m1", mx),
      {"nvfp4", LOWP_FMT_E2M1, 4, 0, LOWP_FMT_E4M3, 1, 16, 1, LOWP_BSR_NVFP4, NULL,
       "NVIDIA NVFP4: 16 e2m1 sharing a ue4m3 scale, times a per-tensor fp32 scale", 0},
      {"int8_b32", INT_FORMATS[6], 8, 1, LOWP_FMT_FP16, 0, 32, 0, LOWP_BSR_GGML, "q8_0",
       "ggml block_q8_0: 32 int8 sharing an fp16 scale d = amax/127", 0},
      {"int4_b32", INT_FORMATS[2], 4, 1, LOWP_FMT_FP16, 0, 32, 0, LOWP_BSR_GGML, NULL,
       "symmetric int4 (-7..7), 32 sharing an fp16 scale d = amax/7 (q8_0's rule; not ggml q4_0)", 0}};
  size_t i;
  for (i = 0; i < 8; i++) {
    if (t[i].scale.name == NULL) t[i].scale = LOWP_FMT_E8M0;
    table[i] = t[i];
  }
}

size_t lowp_bsformat_count(void) { return sizeof table / sizeof table[0]; }

const lowp_bsformat_t *lowp_bsformat_at(size_t i) {
  (void)pthread_once(&table_once, init_table);
  return i < lowp_bsformat_count() ? &table[i] : NULL;
}

/* ------------------------------------------------------ private helpers */

static const char *const RULE_NAMES[LOWP_BSR_COUNT] = {"floor", "ceil",   "even", "rceil",
                                                       "nvfp4", "absmax", "ggml"};

static void set_err(char *err, size_t errlen, const char *fmt, const char *arg) {
  lowp_errf(err, errlen, 0, fmt, arg);
}

static int eq_nocase(const char *a, const char *b, size_t nb) {
  size_t i;
  for (i = 0; i < nb; i++)
    if (!a[i] || tolower((unsigned char)a[i]) != tolower((unsigned char)b[i])) return 0;
  return a[nb] == '\0';
}

static int name_matches(const lowp_bsformat_t *f, const char *name) {
  const char *s;
  if (eq_nocase(name, f->name, strlen(f->name))) return 1;
  for (s = f->alias; s && *s;) {
    size_t len = strcspn(s, ",");
    if (eq_nocase(name, s, len)) return 1;
    s += len + (s[len] == ',');
  }
  return 0;
}

/* an element format: a built-in lowp format of <= 8 bits, or intN */
static int parse_elem(lowp_bsformat_t *bf, const char *v, char *err, size_t errlen) {
  const lowp_format_t *f;
  if (!strncmp(v, "int", 3) && v[3] >= '2' && v[3] <= '8' && v[4] == '\0') {
    bf->elem = INT_FORMATS[v[3] - '2'];
    bf->elem_bits = v[3] - '0';
    bf->elem_int = 1;
    return LOWP_OK;
  }
  f = lowp_format_by_name(v);
  if (!f || lowp_format_width(f) > 8 || !f->has_sign) {
    set_err(err, errlen, "element format '%s': expected a signed built-in format of at most 8 bits "
            "(e4m3, e5m2, e3m2, e2m3, e2m1) or intN, 2 <= N <= 8", v);
    return LOWP_EFORMAT;
  }
  bf->elem = *f;
  bf->elem_bits = lowp_format_width(f);
  bf->elem_int = 0;
  return LOWP_OK;
}

/* a scale format: ue4m3 (e4m3, sign ignored) or a built-in format of <= 32 bits */
static int parse_scale(lowp_bsformat_t *bf, const char *v, char *err, size_t errlen) {
  const lowp_format_t *f;
  bf->scale_unsigned = 0;
  if (eq_nocase(v, "ue4m3", 5)) {
    bf->scale = LOWP_FMT_E4M3;
    bf->scale_unsigned = 1;
    return LOWP_OK;
  }
  f = lowp_format_by_name(v);
  if (!f || lowp_format_width(f) > 32) {
    set_err(err, errlen, "scale format '%s': expected e8m0, ue4m3, fp16, bf16, fp32 or another "
            "built-in format of at most 32 bits", v);
    return LOWP_EFORMAT;
  }
  bf->scale = *f;
  return LOWP_OK;
}

/* the key=value items of a spec, applied to bf; seen marks the keys given */
static int parse_item(lowp_bsformat_t *bf, char *item, unsigned *seen, char *err, size_t errlen) {
  char *eq = strchr(item, '=');
  const char *v = eq ? eq + 1 : "";
  unsigned bit;
  if (eq) *eq = '\0';
  bit = !strcmp(item, "elem") ? 1u : !strcmp(item, "scale") ? 2u : !strcmp(item, "block") ? 4u
      : !strcmp(item, "tensor") ? 8u : !strcmp(item, "rule") ? 16u : !strcmp(item, "pack") ? 32u : 0u;
  if (!bit) {
    set_err(err, errlen, "unknown key '%s'; accepted: elem=, scale=, block=, tensor, rule=, pack=", item);
    return LOWP_EFORMAT;
  }
  if (*seen & bit) {
    set_err(err, errlen, "key '%s' given twice", item);
    return LOWP_EFORMAT;
  }
  *seen |= bit;
  if ((bit == 8) != !eq) {
    set_err(err, errlen, bit == 8 ? "'tensor' takes no value" : "key '%s' needs a value", item);
    return LOWP_EFORMAT;
  }
  if (bit == 1) return parse_elem(bf, v, err, errlen);
  if (bit == 2) return parse_scale(bf, v, err, errlen);
  if (bit == 8) { bf->tensor_scale = 1; return LOWP_OK; }
  if (bit == 32) {
    if (strcmp(v, "dense") && strcmp(v, "byte")) {
      set_err(err, errlen, "pack '%s': dense (a bit stream: fp6 4 values in 3 bytes) or byte", v);
      return LOWP_EFORMAT;
    }
    bf->dense = !strcmp(v, "dense");
    return LOWP_OK;
  }
  if (bit == 16) {
    if (lowp_bsrule_parse(&bf->rule, v) == LOWP_OK) return LOWP_OK;
    set_err(err, errlen, "unknown rule '%s'; accepted: floor ceil even rceil nvfp4 absmax ggml", v);
    return LOWP_EFORMAT;
  }
  {
    char *end;
    long b = strtol(v, &end, 10);
    if (!*v || *end || b < 1 || b > 65536) {
      set_err(err, errlen, "block '%s': expected an integer 1..65536", v);
      return LOWP_EFORMAT;
    }
    bf->block = (int)b;
  }
  return LOWP_OK;
}

static int parse_spec(lowp_bsformat_t *bf, const char *text, char *err, size_t errlen) {
  char buf[256], *item, *save = NULL;
  unsigned seen = 0;
  int st;
  if (strlen(text) >= sizeof buf) {
    set_err(err, errlen, "block format spec longer than %s characters", "255");
    return LOWP_EFORMAT;
  }
  strcpy(buf, text);
  memset(bf, 0, sizeof *bf);
  bf->name = "custom";
  for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save))
    if ((st = parse_item(bf, item, &seen, err, errlen))) return st;
  if ((seen & 7u) != 7u) {
    set_err(err, errlen, "block format spec '%s' needs elem=, scale= and block=", text);
    return LOWP_EFORMAT;
  }
  if (!(seen & 16u))
    bf->rule = bf->tensor_scale ? LOWP_BSR_NVFP4 : bf->scale.precision == 1 ? LOWP_BSR_FLOOR : LOWP_BSR_ABSMAX;
  bf->doc = "user-defined";
  return LOWP_OK;
}

/* ----------------------------------------------------------- public API */

int lowp_bsrule_parse(lowp_bsrule_t *rule, const char *text) {
  int i;
  if (!rule || !text) return LOWP_EINVAL;
  for (i = 0; i < LOWP_BSR_COUNT; i++)
    if (eq_nocase(text, RULE_NAMES[i], strlen(RULE_NAMES[i]))) {
      *rule = (lowp_bsrule_t)i;
      return LOWP_OK;
    }
  return LOWP_EINVAL;
}

const char *lowp_bsrule_name(lowp_bsrule_t rule) {
  return (int)rule >= 0 && (int)rule < LOWP_BSR_COUNT ? RULE_NAMES[rule] : "?";
}

int lowp_bsformat_validate(const lowp_bsformat_t *bf, char *err, size_t errlen) {
  if (!bf) return LOWP_EINVAL;
  if (lowp_format_validate(&bf->elem, NULL, 0) || lowp_format_validate(&bf->scale, NULL, 0)) {
    set_err(err, errlen, "%s: invalid element or scale format", bf->name ? bf->name : "?");
    return LOWP_EFORMAT;
  }
  if (bf->elem_bits < 2 || bf->elem_bits > 8 || lowp_format_width(&bf->scale) > 32 || bf->block < 1) {
    set_err(err, errlen, "%s: elements of 2..8 bits, a scale of at most 32 bits and a block >= 1 "
            "are required", bf->name ? bf->name : "?");
    return LOWP_EFORMAT;
  }
  if ((int)bf->rule < 0 || (int)bf->rule >= LOWP_BSR_COUNT) {
    set_err(err, errlen, "%s: unknown scale rule", bf->name ? bf->name : "?");
    return LOWP_EFORMAT;
  }
  if ((bf->rule == LOWP_BSR_NVFP4) != (bf->tensor_scale != 0)) {
    set_err(err, errlen, "%s: the nvfp4 rule and the per-tensor scale ('tensor') go together",
            bf->name ? bf->name : "?");
    return LOWP_EFORMAT;
  }
  return LOWP_OK;
}

int lowp_bsformat_parse(lowp_bsformat_t *out, const char *text, char *err, size_t errlen) {
  size_t i;
  int st;
  char name[64];
  const char *colon;
  if (!out || !text) return LOWP_EINVAL;
  if (strchr(text, '=')) {
    if ((st = parse_spec(out, text, err, errlen))) return st;
    return lowp_bsformat_validate(out, err, errlen);
  }
  colon = strchr(text, ':');
  if (strlen(text) >= sizeof name) {
    set_err(err, errlen, "unknown block-scaled format '%.40s...'", text);
    return LOWP_EFORMAT;
  }
  memcpy(name, text, (size_t)(colon ? colon - text : (long)strlen(text)));
  name[colon ? colon - text : (long)strlen(text)] = '\0';
  for (i = 0; i < lowp_bsformat_count(); i++)
    if (name_matches(lowp_bsformat_at(i), name)) {
      *out = *lowp_bsformat_at(i);
      while (colon) { /* ":RULE", ":dense", ":byte", in any order */
        char tok[64];
        const char *next = strchr(colon + 1, ':');
        size_t n = next ? (size_t)(next - colon - 1) : strlen(colon + 1);
        memcpy(tok, colon + 1, n < sizeof tok ? n : sizeof tok - 1);
        tok[n < sizeof tok ? n : sizeof tok - 1] = '\0';
        if (!strcmp(tok, "dense") || !strcmp(tok, "byte")) out->dense = !strcmp(tok, "dense");
        else if (lowp_bsrule_parse(&out->rule, tok)) {
          set_err(err, errlen, "unknown rule '%s'; accepted: floor ceil even rceil nvfp4 absmax ggml (or the "
                  "packing dense, byte)", tok);
          return LOWP_EFORMAT;
        }
        colon = next;
      }
      return lowp_bsformat_validate(out, err, errlen);
    }
  set_err(err, errlen, "unknown block-scaled format '%s' (built in: mxfp8_e4m3 mxfp8_e5m2 mxfp6_e3m2 "
          "mxfp6_e2m3 mxfp4 nvfp4 int8_b32 int4_b32; or elem=..,scale=..,block=..)", name);
  return LOWP_EFORMAT;
}

int lowp_bsformat_spec(char *buf, size_t len, const lowp_bsformat_t *bf) {
  int n;
  if (!buf || !bf) return LOWP_EINVAL;
  n = snprintf(buf, len, "elem=%s,scale=%s%s,block=%d%s,rule=%s%s", bf->elem.name,
               bf->scale_unsigned ? "u" : "", bf->scale.name, bf->block,
               bf->tensor_scale ? ",tensor" : "", lowp_bsrule_name(bf->rule),
               bf->dense && bf->elem_bits != 4 && bf->elem_bits != 8 ? ",pack=dense" : "");
  return n < 0 || (size_t)n >= len ? LOWP_ERANGE : LOWP_OK;
}

double lowp_bsformat_elem_max(const lowp_bsformat_t *bf) { return lowp_format_xmax(&bf->elem); }

int lowp_bsformat_scale_bytes(const lowp_bsformat_t *bf) {
  int w = lowp_format_width(&bf->scale);
  return w <= 8 ? 1 : w <= 16 ? 2 : 4;
}

size_t lowp_bsformat_row_bytes(const lowp_bsformat_t *bf, size_t cols) {
  if (bf->dense) return ((size_t)bf->elem_bits * cols + 7) / 8;
  return bf->elem_bits <= 4 ? (cols + 1) / 2 : cols;
}

size_t lowp_bsformat_row_cols(const lowp_bsformat_t *bf, size_t nbytes) {
  if (bf->dense) return 8 * nbytes / (size_t)bf->elem_bits;
  return bf->elem_bits <= 4 ? 2 * nbytes : nbytes;
}

/* where code j lies: its first bit and its width (dense: a bit stream;
   else nibble slots for <= 4 bits, bytes above) */
static void code_at(size_t *bit, int *w, size_t j, const lowp_bsformat_t *bf) {
  *w = bf->elem_bits;
  *bit = bf->dense ? j * (size_t)bf->elem_bits : bf->elem_bits <= 4 ? 4 * j : 8 * j;
}

uint64_t lowp_bs_code_get(const uint8_t *row, size_t j, const lowp_bsformat_t *bf) {
  size_t bit;
  int w, k;
  uint64_t c = 0;
  code_at(&bit, &w, j, bf);
  for (k = 0; k < w; k++) c |= (uint64_t)(row[(bit + (size_t)k) / 8] >> ((bit + (size_t)k) % 8) & 1u) << k;
  return c;
}

static void code_put(uint8_t *row, size_t j, uint64_t c, const lowp_bsformat_t *bf) {
  size_t bit;
  int w, k;
  code_at(&bit, &w, j, bf);
  for (k = 0; k < w; k++)
    if (c >> k & 1u) row[(bit + (size_t)k) / 8] |= (uint8_t)(1u << ((bit + (size_t)k) % 8));
}

size_t lowp_bsformat_blocks(const lowp_bsformat_t *bf, size_t cols) {
  return (cols + (size_t)bf->block - 1) / (size_t)bf->block;
}

double lowp_bsformat_bits_per_value(const lowp_bsformat_t *bf) {
  return bf->elem_bits + 8.0 * lowp_bsformat_scale_bytes(bf) / bf->block;
}

/* one element's bits: two's complement for integers, else the format's code */
static int elem_code(uint64_t *b, double v, const lowp_bsformat_t *bf) {
  if (bf->elem_int) {
    double qmax = lowp_bsformat_elem_max(bf);
    if (!(fabs(v) <= qmax) || v != floor(v)) return LOWP_ERANGE;
    *b = (uint64_t)(int64_t)v & (((uint64_t)1 << bf->elem_bits) - 1);
    return LOWP_OK;
  }
  return lowp_encode(b, v, &bf->elem);
}

static int elem_value(double *v, uint64_t b, const lowp_bsformat_t *bf) {
  if (bf->elem_int) {
    int64_t x = (int64_t)b;
    if (b >> (bf->elem_bits - 1)) x -= (int64_t)1 << bf->elem_bits;
    if (fabs((double)x) > lowp_bsformat_elem_max(bf)) return LOWP_ERANGE; /* -2^(b-1) is unused */
    *v = (double)x;
    return LOWP_OK;
  }
  return lowp_decode(v, b, &bf->elem);
}

/* the arguments checked; blocks a row, bytes of a packed row, bytes a scale */
static int geometry(size_t *nb, size_t *rb, size_t *sb, const void *elems, const void *scales, const void *q,
                    const void *s, size_t cols, const lowp_bsformat_t *bf) {
  if (!elems || !scales || !q || !s || !bf) return LOWP_EINVAL;
  if (lowp_bsformat_validate(bf, NULL, 0)) return LOWP_EFORMAT;
  *nb = lowp_bsformat_blocks(bf, cols);
  *rb = lowp_bsformat_row_bytes(bf, cols);
  *sb = (size_t)lowp_bsformat_scale_bytes(bf);
  return LOWP_OK;
}

int lowp_bs_pack(uint8_t *elems, uint8_t *scales, const double *q, const double *s, size_t rows,
                 size_t cols, const lowp_bsformat_t *bf) {
  size_t r, j, nb, rb, sb;
  int st = geometry(&nb, &rb, &sb, elems, scales, q, s, cols, bf);
  if (st) return st;
  memset(elems, 0, rows * rb);
  for (r = 0; r < rows; r++) {
    for (j = 0; j < cols; j++) {
      uint64_t b;
      if ((st = elem_code(&b, q[r * cols + j], bf))) return st;
      code_put(elems + r * rb, j, b, bf);
    }
    for (j = 0; j < nb; j++) {
      double v = s[r * nb + j];
      uint64_t b;
      size_t k;
      if ((st = lowp_encode(&b, bf->scale_unsigned && !isnan(v) ? fabs(v) : v, &bf->scale))) return st;
      if (bf->scale_unsigned && isnan(v)) b &= ~((uint64_t)1 << (lowp_format_width(&bf->scale) - 1));
      for (k = 0; k < sb; k++) scales[(r * nb + j) * sb + k] = (uint8_t)(b >> (8 * k));
    }
  }
  return LOWP_OK;
}

int lowp_bs_unpack(double *q, double *s, const uint8_t *elems, const uint8_t *scales, size_t rows,
                   size_t cols, const lowp_bsformat_t *bf) {
  size_t r, j, nb, rb, sb;
  int st = geometry(&nb, &rb, &sb, elems, scales, q, s, cols, bf);
  if (st) return st;
  for (r = 0; r < rows; r++) {
    for (j = 0; j < cols; j++) {
      uint64_t b = lowp_bs_code_get(elems + r * rb, j, bf);
      if ((st = elem_value(&q[r * cols + j], b, bf))) return st;
    }
    for (j = 0; j < nb; j++) {
      uint64_t b = 0;
      size_t k;
      for (k = 0; k < sb; k++) b |= (uint64_t)scales[(r * nb + j) * sb + k] << (8 * k);
      if (bf->scale_unsigned) b &= ~((uint64_t)1 << (lowp_format_width(&bf->scale) - 1));
      if ((st = lowp_decode(&s[r * nb + j], b, &bf->scale))) return st;
    }
  }
  return LOWP_OK;
}

/* --------------------------------------------------- checks, scale layouts */

int lowp_bs_elem_check(const lowp_bsformat_t *bf, double v) {
  uint64_t b;
  if (!bf) return LOWP_EINVAL;
  return elem_code(&b, v, bf) ? LOWP_ERANGE : LOWP_OK;
}

int lowp_bs_scale_check(const lowp_bsformat_t *bf, double v) {
  uint64_t b;
  if (!bf) return LOWP_EINVAL;
  if (bf->scale_unsigned && v < 0) return LOWP_ERANGE;
  return lowp_encode(&b, v, &bf->scale) ? LOWP_ERANGE : LOWP_OK;
}

int lowp_bslayout_parse(lowp_bslayout_t *l, const char *text) {
  if (!l || !text) return LOWP_EINVAL;
  if (!strcmp(text, "compact")) *l = LOWP_BSL_COMPACT;
  else if (!strcmp(text, "128x4") || !strcmp(text, "tiled") || !strcmp(text, "swizzled"))
    *l = LOWP_BSL_TILED128X4;
  else return LOWP_EINVAL;
  return LOWP_OK;
}

const char *lowp_bslayout_name(lowp_bslayout_t l) { return l == LOWP_BSL_TILED128X4 ? "128x4" : "compact"; }

size_t lowp_bs_scale_slots(lowp_bslayout_t l, size_t rows, size_t nb) {
  if (l == LOWP_BSL_TILED128X4) return (rows + 127) / 128 * 128 * ((nb + 3) / 4 * 4);
  return rows * nb;
}

size_t lowp_bs_scale_slot(lowp_bslayout_t l, size_t rows, size_t nb, size_t r, size_t j) {
  size_t tiles_across, tile, rr;
  if (l != LOWP_BSL_TILED128X4) return r * nb + j;
  (void)rows;
  tiles_across = (nb + 3) / 4;
  tile = (r / 128) * tiles_across + j / 4;
  rr = r % 128;
  return tile * 512 + (rr % 32) * 16 + (rr / 32) * 4 + j % 4;
}

int lowp_bs_scales_relayout(void *dst, const void *src, size_t size, size_t rows, size_t nb,
                            lowp_bslayout_t l, int to_layout) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  size_t r, j;
  if (!dst || !src || !size) return LOWP_EINVAL;
  if (to_layout) memset(d, 0, lowp_bs_scale_slots(l, rows, nb) * size);
  for (r = 0; r < rows; r++)
    for (j = 0; j < nb; j++) {
      size_t t = lowp_bs_scale_slot(l, rows, nb, r, j), c = r * nb + j;
      if (to_layout) memcpy(d + t * size, s + c * size, size);
      else memcpy(d + c * size, s + t * size, size);
    }
  return LOWP_OK;
}
