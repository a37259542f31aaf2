/* lowp formats -- the table of formats, every number computed from the descriptors */

#include "cli.h"
#include "format/bsformat.h"
#include "status.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

static const char *inf_text(const lowp_format_t *f) {
  return f->inf == LOWP_INF_IEEE ? "ieee" : "none";
}

static const char *nan_text(const lowp_format_t *f) {
  switch (f->nan) {
  case LOWP_NAN_IEEE: return "ieee";
  case LOWP_NAN_ALLONES: return "allones";
  case LOWP_NAN_NEGZERO: return "negzero";
  default: return "none";
  }
}

static void hexbits(char *buf, size_t len, double v, const lowp_format_t *f) {
  uint64_t b = 0;
  int w = lowp_format_width(f);
  if (lowp_encode(&b, v, f) != 0) { snprintf(buf, len, "-"); return; }
  snprintf(buf, len, "0x%0*llx", (w + 3) / 4, (unsigned long long)b);
}

static cJSON *format_json(const lowp_format_t *f) {
  cJSON *o = cJSON_CreateObject();
  char buf[64];
  cJSON_AddStringToObject(o, "name", f->name);
  cJSON_AddNumberToObject(o, "precision", f->precision);
  cJSON_AddNumberToObject(o, "emin", f->emin);
  cJSON_AddNumberToObject(o, "emax", f->emax);
  cJSON_AddNumberToObject(o, "width", lowp_format_width(f));
  cJSON_AddNumberToObject(o, "exponent_bits", f->ebits);
  cJSON_AddNumberToObject(o, "bias", lowp_format_bias(f));
  cJSON_AddBoolToObject(o, "subnormals", f->subnormals);
  cJSON_AddBoolToObject(o, "signed", f->has_sign);
  cJSON_AddStringToObject(o, "inf", inf_text(f));
  cJSON_AddStringToObject(o, "nan", nan_text(f));
  cJSON_AddNumberToObject(o, "unit_roundoff", lowp_format_u(f));
  cJSON_AddNumberToObject(o, "machine_epsilon", lowp_format_eps(f));
  cJSON_AddNumberToObject(o, "min_subnormal", lowp_format_xmins(f));
  cJSON_AddNumberToObject(o, "min_normal", lowp_format_xmin(f));
  cJSON_AddNumberToObject(o, "max_finite", lowp_format_xmax(f));
  hexbits(buf, sizeof buf, lowp_format_xmax(f), f);
  cJSON_AddStringToObject(o, "max_finite_bits", buf);
  cJSON_AddNumberToObject(o, "finite_values", lowp_format_count_finite(f));
  cJSON_AddNumberToObject(o, "range_decades", lowp_format_range_decades(f));
  if (f->doc) cJSON_AddStringToObject(o, "source", f->doc);
  return o;
}

static void print_table(const lowp_format_t *fs, size_t n) {
  size_t i;
  printf("%-9s %3s %6s %5s %4s %5s %4s %4s %-7s %-10s %-10s %-10s %-10s %-11s %14s %7s\n",
         "format", "p", "emin", "emax", "bits", "bias", "sub", "inf", "nan",
         "u", "eps", "min_subn", "min_norm", "max_finite", "finite_values", "decades");
  for (i = 0; i < n; i++) {
    const lowp_format_t *f = &fs[i];
    printf("%-9s %3d %6d %5d %4d %5d %4s %4s %-7s %-10.4g %-10.4g %-10.4g %-10.4g %-11.6g %14.0f %7.2f\n",
           f->name, f->precision, f->emin, f->emax, lowp_format_width(f),
           lowp_format_bias(f), f->subnormals ? "yes" : "no", inf_text(f),
           nan_text(f), lowp_format_u(f), lowp_format_eps(f),
           lowp_format_xmins(f), lowp_format_xmin(f), lowp_format_xmax(f),
           lowp_format_count_finite(f), lowp_format_range_decades(f));
  }
  printf("\nu = 2^-p (unit roundoff), eps = 2^(1-p); max_finite excludes NaN "
         "encodings; decades = log10(max_finite / min_subn).\n");
}

/* ------------------------------------------------- block-scaled formats */

static void scale_name(char *buf, size_t len, const lowp_bsformat_t *b) {
  snprintf(buf, len, "%s%s", b->scale_unsigned ? "u" : "", b->scale.name);
}

static cJSON *bsformat_json(const lowp_bsformat_t *b) {
  cJSON *o = cJSON_CreateObject();
  char buf[160];
  cJSON_AddStringToObject(o, "name", b->name);
  lowp_bsformat_spec(buf, sizeof buf, b);
  cJSON_AddStringToObject(o, "spec", buf);
  cJSON_AddStringToObject(o, "element", b->elem.name);
  cJSON_AddNumberToObject(o, "element_bits", b->elem_bits);
  cJSON_AddBoolToObject(o, "integer_elements", b->elem_int);
  cJSON_AddNumberToObject(o, "element_max", lowp_bsformat_elem_max(b));
  scale_name(buf, sizeof buf, b);
  cJSON_AddStringToObject(o, "scale", buf);
  cJSON_AddNumberToObject(o, "scale_bytes", lowp_bsformat_scale_bytes(b));
  cJSON_AddNumberToObject(o, "block", b->block);
  cJSON_AddBoolToObject(o, "tensor_scale", b->tensor_scale);
  cJSON_AddStringToObject(o, "rule", lowp_bsrule_name(b->rule));
  cJSON_AddNumberToObject(o, "bits_per_value", lowp_bsformat_bits_per_value(b));
  cJSON_AddStringToObject(o, "packing", b->dense && b->elem_bits != 4 && b->elem_bits != 8
                                        ? "dense: one LSB-first bit stream a row"
                                        : b->elem_bits <= 4 ? "two per byte, low nibble first"
                                        : b->elem_bits < 8 ? "one per byte, low bits (:dense: 4 in 3 bytes)" : "one per byte");
  if (b->doc) cJSON_AddStringToObject(o, "source", b->doc);
  return o;
}

static void print_bstable(const lowp_bsformat_t *bs, size_t n) {
  size_t i;
  printf("\n%-11s %-6s %4s %-6s %5s %-6s %-6s %7s %10s\n", "block fmt", "elem", "bits", "scale", "block",
         "tensor", "rule", "bits/v", "elem_max");
  for (i = 0; i < n; i++) {
    char sc[32];
    scale_name(sc, sizeof sc, &bs[i]);
    printf("%-11s %-6s %4d %-6s %5d %-6s %-6s %7.3f %10g\n", bs[i].name, bs[i].elem.name, bs[i].elem_bits, sc,
           bs[i].block, bs[i].tensor_scale ? "fp32" : "-", lowp_bsrule_name(bs[i].rule),
           lowp_bsformat_bits_per_value(&bs[i]), lowp_bsformat_elem_max(&bs[i]));
  }
  printf("\nA value is element * block scale (* the fp32 tensor scale); bits/v counts the\n"
         "block scale's share. Rules and sources: docs/formats.md, \"Block-scaled formats\".\n");
}

/* ----------------------------------------------------------------- main */

int lowp_cmd_formats(int argc, char **argv) {
  int json = 0, i;
  lowp_format_t fs[64];
  lowp_bsformat_t bs[64];
  size_t n = 0, nbs = 0;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: lowp formats [--json] [FORMAT...]\n"
             "  Prints every built-in format (or the named ones, including specs\n"
             "  such as p=5,emin=-6,emax=7,nosub) with its computed properties, then\n"
             "  the block-scaled formats (mxfp8_e4m3 ... nvfp4, int8_b32, or specs such\n"
             "  as elem=e4m3,scale=fp16,block=16,rule=absmax).\n");
      return LOWP_EXIT_OK;
    } else if (argv[i][0] == '-') lowp_cli_die("formats", "unknown option '%s'; accepted: --json, --help", argv[i]);
    else if (n + nbs == sizeof fs / sizeof *fs)
      lowp_cli_die("formats", "at most %zu formats at a time ('%s' is one more)", sizeof fs / sizeof *fs, argv[i]);
    else {
      lowp_bsformat_t b;
      char err[256];
      int st = lowp_bsformat_parse(&b, argv[i], err, sizeof err);
      if (st == LOWP_OK) bs[nbs++] = b;
      else if (strstr(argv[i], "elem=")) lowp_cli_die("formats", "%s", err);
      else fs[n++] = lowp_cli_format("formats", argv[i]);
    }
  }
  if (n == 0 && nbs == 0) {
    for (n = 0; n < lowp_format_count(); n++) fs[n] = *lowp_format_at(n);
    for (nbs = 0; nbs < lowp_bsformat_count(); nbs++) bs[nbs] = *lowp_bsformat_at(nbs);
  }
  if (json) {
    cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "formats");
    char *s;
    size_t k;
    for (k = 0; k < n; k++) cJSON_AddItemToArray(arr, format_json(&fs[k]));
    arr = cJSON_AddArrayToObject(root, "block_formats");
    for (k = 0; k < nbs; k++) cJSON_AddItemToArray(arr, bsformat_json(&bs[k]));
    s = cJSON_Print(root);
    puts(s);
    free(s);
    cJSON_Delete(root);
  } else {
    if (n) print_table(fs, n);
    if (nbs) print_bstable(bs, nbs);
  }
  return LOWP_EXIT_OK;
}
