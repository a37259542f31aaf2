/* lowp_capi_bs -- the flat C API of block-scaled quantization, for the Python binding */

#include "check/capi.h"
#include "format/bsformat.h"
#include "format/bsquant.h"
#include "status.h"

#include <stdio.h>
#include "io/escape.h"

/* ------------------------------------------------------ private helpers */

static int get(lowp_bsformat_t *bf, const char *format, char *err, size_t errlen) {
  if (!format) {
    lowp_errf(err, errlen, 0, "no block-scaled format given");
    return LOWP_EINVAL;
  }
  return lowp_bsformat_parse(bf, format, err, errlen);
}

static int fail(int st, const char *what, char *err, size_t errlen) {
  if (st) lowp_errf(err, errlen, 0, "%s: %s", what, lowp_status_str(st));
  return st;
}

/* ----------------------------------------------------------- public API */

int lowp_capi_bs_info(int *block, int *scale_bytes, int *elem_bits, int *tensor, const char *format,
                      char *err, size_t errlen) {
  lowp_bsformat_t bf;
  int st;
  if (!block || !scale_bytes || !elem_bits || !tensor) return LOWP_EINVAL;
  if ((st = get(&bf, format, err, errlen))) return st;
  *block = bf.block;
  *scale_bytes = lowp_bsformat_scale_bytes(&bf);
  *elem_bits = bf.elem_bits;
  *tensor = bf.tensor_scale;
  return LOWP_OK;
}

int lowp_capi_bs_quantize(double *q, double *s, double *ts, const float *x, size_t rows, size_t cols,
                          const char *format, char *err, size_t errlen) {
  lowp_bsformat_t bf;
  int st;
  if ((st = get(&bf, format, err, errlen))) return st;
  return fail(lowp_bs_quantize(q, s, ts, x, rows, cols, &bf), "quantize", err, errlen);
}

int lowp_capi_bs_dequantize(double *y, const double *q, const double *s, double ts, size_t rows,
                            size_t cols, const char *format, char *err, size_t errlen) {
  lowp_bsformat_t bf;
  int st;
  if ((st = get(&bf, format, err, errlen))) return st;
  return fail(lowp_bs_dequantize(y, q, s, ts, rows, cols, &bf), "dequantize", err, errlen);
}

int lowp_capi_bs_pack(uint8_t *elems, uint8_t *scales, double *q, double *s, size_t rows, size_t cols,
                      int unpack, const char *format, char *err, size_t errlen) {
  lowp_bsformat_t bf;
  int st;
  if ((st = get(&bf, format, err, errlen))) return st;
  st = unpack ? lowp_bs_unpack(q, s, elems, scales, rows, cols, &bf)
              : lowp_bs_pack(elems, scales, q, s, rows, cols, &bf);
  return fail(st, unpack ? "unpack (a byte that is no value of the format?)"
                         : "pack (a value that is not one of the format's?)", err, errlen);
}

int lowp_capi_bs_relayout(void *dst, const void *src, size_t size, size_t rows, size_t nb, const char *layout,
                          int to_layout, size_t *slots, char *err, size_t errlen) {
  lowp_bslayout_t l;
  if (!layout || lowp_bslayout_parse(&l, layout)) {
    lowp_errf(err, errlen, 0, "scale layout '%.40s': compact or 128x4", layout ? layout : "");
    return LOWP_EINVAL;
  }
  if (slots) *slots = lowp_bs_scale_slots(l, rows, nb);
  if (!dst) return LOWP_OK; /* the size alone */
  return fail(lowp_bs_scales_relayout(dst, src, size, rows, nb, l, to_layout), "relayout", err, errlen);
}

int lowp_capi_bs_row_bytes(size_t *bytes, size_t cols, const char *format, char *err, size_t errlen) {
  lowp_bsformat_t bf;
  int st;
  if (!bytes) return LOWP_EINVAL;
  if ((st = get(&bf, format, err, errlen))) return st;
  *bytes = lowp_bsformat_row_bytes(&bf, cols);
  return LOWP_OK;
}
