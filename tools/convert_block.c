/* lowp convert --to BLOCKFORMAT -- quantize values to a block-scaled format: scales, elements, bits, errors */

/*
 * The values, in order, are one row of a tensor: blocks of the format's
 * size (the last one may be short), each scale chosen by the format's rule
 * or --scale-rule. The quantizers take binary32 inputs: each VALUE is first
 * rounded to fp32 (to nearest even), and the errors are measured against
 * that fp32 value. NVFP4's per-tensor scale comes from the amax of all the
 * values given.
 *
 * Run: lowp convert 0.1 -3 448 1e-3 --to mxfp8_e4m3 --scale-rule rceil
 *      lowp convert 1 2 3 --to nvfp4 --json
 */

#include "cli.h"
#include "format/bsformat.h"
#include "format/bsquant.h"
#include "status.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

static void usage(void) {
  printf("usage: lowp convert VALUE... --to BLOCKFORMAT [--scale-rule RULE] [--json]\n"
         "  BLOCKFORMAT  mxfp8_e4m3 mxfp8_e5m2 mxfp6_e3m2 mxfp6_e2m3 mxfp4 nvfp4 int8_b32\n"
         "               int4_b32, or elem=E,scale=S,block=N[,tensor][,rule=R]\n"
         "  --scale-rule floor|ceil|even|rceil|nvfp4|absmax|ggml (default: the format's)\n"
         "  The values are one row, quantized block by block; each is first rounded to\n"
         "  fp32 (the quantizers' input). Prints each block's scale and each element's\n"
         "  bits, value, dequantized value and error (docs/formats.md).\n");
}

static float parse_f32(const char *text) {
  char *end;
  float v;
  errno = 0;
  v = strtof(text, &end);
  if (end == text || *end)
    lowp_cli_die("convert", "malformed number '%s': expected a decimal (1e-6), a hex float "
                 "(0x1.8p-3), inf or nan", text);
  return v;
}

static void hexs(char *buf, size_t len, uint64_t b, int bits) {
  int digits = bits <= 8 ? 2 : bits <= 16 ? 4 : 8;
  snprintf(buf, len, "0x%0*llx", digits, (unsigned long long)(b & 0xffffffffu));
}

static cJSON *num_or_text(double v) {
  if (isnan(v)) return cJSON_CreateString(signbit(v) ? "-nan" : "nan");
  if (isinf(v)) return cJSON_CreateString(v > 0 ? "inf" : "-inf");
  return cJSON_CreateNumber(v);
}

/* the result: one object with the format, the tensor scale and the blocks */
static cJSON *quantize_values(const lowp_bsformat_t *bf, const float *x, char **texts, size_t n) {
  size_t nb = lowp_bsformat_blocks(bf, n), sb = (size_t)lowp_bsformat_scale_bytes(bf), b, j;
  double *q = malloc(n * sizeof *q), *s = malloc(nb * sizeof *s), *y = malloc(n * sizeof *y), ts = 1.0;
  uint8_t *eb = malloc(lowp_bsformat_row_bytes(bf, n) + 1), *scb = malloc(nb * sb);
  cJSON *root = cJSON_CreateObject(), *blocks;
  char buf[160];
  if (!q || !s || !y || !eb || !scb) lowp_cli_die("convert", "out of memory");
  if (lowp_bs_quantize(q, s, &ts, x, 1, n, bf) || lowp_bs_dequantize(y, q, s, ts, 1, n, bf) ||
      lowp_bs_pack(eb, scb, q, s, 1, n, bf))
    lowp_cli_die("convert", "internal error quantizing to %s", bf->name);
  cJSON_AddStringToObject(root, "format", bf->name);
  lowp_bsformat_spec(buf, sizeof buf, bf);
  cJSON_AddStringToObject(root, "spec", buf);
  cJSON_AddStringToObject(root, "rule", lowp_bsrule_name(bf->rule));
  if (bf->tensor_scale) cJSON_AddItemToObject(root, "tensor_scale", num_or_text(ts));
  {
    /* the stored element bytes of the row (lowp_bs_pack: fp4 two a byte, fp6
       one a byte or, with :dense, 4 in 3 bytes), in hex, first byte first */
    size_t rb = lowp_bsformat_row_bytes(bf, n), u;
    char *hx = malloc(2 * rb + 1);
    if (!hx) lowp_cli_die("convert", "out of memory");
    for (u = 0; u < rb; u++) snprintf(hx + 2 * u, 3, "%02x", eb[u]);
    hx[2 * rb] = '\0';
    cJSON_AddStringToObject(root, "packing", bf->dense ? "dense (LSB-first bit stream)" : bf->elem_bits <= 4
                            ? "two per byte, low nibble first" : "one per byte");
    cJSON_AddStringToObject(root, "element_bytes", hx);
    free(hx);
  }
  blocks = cJSON_AddArrayToObject(root, "blocks");
  for (b = 0; b < nb; b++) {
    cJSON *bo = cJSON_CreateObject(), *vals;
    uint64_t code = 0;
    size_t k;
    for (k = 0; k < sb; k++) code |= (uint64_t)scb[b * sb + k] << (8 * k);
    hexs(buf, sizeof buf, code, 8 * (int)sb);
    cJSON_AddStringToObject(bo, "scale_bits", buf);
    cJSON_AddItemToObject(bo, "scale", num_or_text(s[b]));
    vals = cJSON_AddArrayToObject(bo, "values");
    for (j = b * (size_t)bf->block; j < n && j < (b + 1) * (size_t)bf->block; j++) {
      cJSON *v = cJSON_CreateObject();
      uint64_t e = lowp_bs_code_get(eb, j, bf);
      double err = y[j] - (double)x[j];
      cJSON_AddStringToObject(v, "input", texts[j]);
      cJSON_AddItemToObject(v, "input_fp32", num_or_text((double)x[j]));
      hexs(buf, sizeof buf, e, bf->elem_bits);
      cJSON_AddStringToObject(v, "element_bits", buf);
      cJSON_AddItemToObject(v, "element", num_or_text(q[j]));
      cJSON_AddItemToObject(v, "value", num_or_text(y[j]));
      cJSON_AddItemToObject(v, "abs_error", num_or_text(fabs(err)));
      cJSON_AddItemToObject(v, "rel_error", num_or_text(x[j] != 0.0f ? fabs(err / (double)x[j]) : fabs(err) == 0 ? 0.0 : INFINITY));
      cJSON_AddItemToArray(vals, v);
    }
    cJSON_AddItemToArray(blocks, bo);
  }
  free(q), free(s), free(y), free(eb), free(scb);
  return root;
}

static const char *txt(const cJSON *o, const char *k, char *buf, size_t len) {
  const cJSON *it = cJSON_GetObjectItem(o, k);
  if (cJSON_IsString(it)) return it->valuestring;
  snprintf(buf, len, "%.9g", it ? it->valuedouble : 0.0);
  return buf;
}

static void print_text(const cJSON *root) {
  const cJSON *b, *v;
  char b1[40], b2[40], b3[40], b4[40], b5[40];
  int k = 0;
  printf("%s (%s)", cJSON_GetObjectItem(root, "format")->valuestring,
         cJSON_GetObjectItem(root, "spec")->valuestring);
  if (cJSON_GetObjectItem(root, "tensor_scale"))
    printf("  tensor scale %s", txt(root, "tensor_scale", b1, sizeof b1));
  printf("\n");
  printf("stored elements (%s): %s\n", cJSON_GetObjectItem(root, "packing")->valuestring,
         cJSON_GetObjectItem(root, "element_bytes")->valuestring);
  cJSON_ArrayForEach(b, cJSON_GetObjectItem(root, "blocks")) {
    printf("block %d  scale %s = %s\n", k++, txt(b, "scale_bits", b1, sizeof b1), txt(b, "scale", b2, sizeof b2));
    printf("  %-16s %-14s %-6s %-12s %-14s %-10s %-10s\n", "input", "fp32", "bits", "element", "value",
           "abs_err", "rel_err");
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(b, "values"))
      printf("  %-16s %-14s %-6s %-12s %-14s %-10.3g %-10.3g\n", txt(v, "input", b1, sizeof b1),
             txt(v, "input_fp32", b2, sizeof b2), txt(v, "element_bits", b3, sizeof b3),
             txt(v, "element", b4, sizeof b4), txt(v, "value", b5, sizeof b5),
             cJSON_IsNumber(cJSON_GetObjectItem(v, "abs_error")) ? cJSON_GetObjectItem(v, "abs_error")->valuedouble : NAN,
             cJSON_IsNumber(cJSON_GetObjectItem(v, "rel_error")) ? cJSON_GetObjectItem(v, "rel_error")->valuedouble : NAN);
  }
}

/* ----------------------------------------------------------------- main */

int lowp__convert_block(int argc, char **argv) {
  lowp_bsformat_t bf;
  char err[256], **texts = calloc((size_t)argc, sizeof *texts);
  const char *to = NULL, *rule = NULL;
  float *x = calloc((size_t)argc, sizeof *x);
  size_t n = 0;
  int i, json = 0;
  cJSON *root;
  if (!texts || !x) lowp_cli_die("convert", "out of memory");
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help")) { usage(); free(texts), free(x); return LOWP_EXIT_OK; }
    else if (!strcmp(a, "--to")) to = lowp_cli_need_arg("convert", argc, argv, &i); /* once: tools/lowp.c */
    else if (!strcmp(a, "--scale-rule")) rule = lowp_cli_need_arg("convert", argc, argv, &i);
    else if (!strcmp(a, "--json")) json = 1;
    else if (a[0] == '-' && a[1] == '-')
      lowp_cli_die("convert", "option '%s' does not apply to a block-scaled --to; accepted: --scale-rule, --json", a);
    else texts[n++] = argv[i];
  }
  if (lowp_bsformat_parse(&bf, to, err, sizeof err)) lowp_cli_die("convert", "%s", err);
  if (rule) {
    if (lowp_bsrule_parse(&bf.rule, rule))
      lowp_cli_die("convert", "unknown --scale-rule '%s'; accepted: floor ceil even rceil nvfp4 absmax ggml", rule);
    if (lowp_bsformat_validate(&bf, err, sizeof err)) lowp_cli_die("convert", "--scale-rule %s: %s", rule, err);
  }
  if (n == 0) lowp_cli_die("convert", "no values given");
  for (i = 0; i < (int)n; i++) x[i] = parse_f32(texts[i]);
  root = quantize_values(&bf, x, texts, n);
  if (json) {
    char *s = cJSON_Print(root);
    puts(s);
    free(s);
  } else print_text(root);
  cJSON_Delete(root);
  free(texts), free(x);
  return LOWP_EXIT_OK;
}
