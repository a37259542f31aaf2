/* lowp_tensor_bs_load -- a block-scaled input of saved tensors: elements and a companion scale tensor */

/*
 * A framework that quantizes to a block-scaled format saves what it
 * computed with: the elements (values of the element format, or the packed
 * codes of lowp_bs_pack) and one scale a block (values of the scale format,
 * or its codes), and for NVFP4 the per-tensor scale. lowp reads them, checks
 * every shape and value against the format, and hands the subject the
 * dequantized values q * s * t (exact: lowp_bs_dequantize). Blocks run
 * along the reduction axis, which is the files' last axis: A as (.., m, k),
 * gemm's B as its transpose (.., n, k) (the layout cuBLASLt and
 * torch._scaled_mm take for block-scaled B), x of a dot as (k). Scales are
 * (.., rows, ceil(cols / block)) in the compact layout, or the 128x4 tiled
 * layout of sm_100 GEMMs (lowp_bslayout_t) with its padding.
 */

#include "check/tensors_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/bsquant.h"
#include "io/escape.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "status.h"

/* ------------------------------------------------------ private helpers */

enum { K_VALUES = 0, K_CODES = 1, K_INTEGERS = 2 };

typedef struct {
  double *v;
  size_t shape[LOWP_NPY_MAXDIM], count;
  int ndim, kind, code_bytes;
  char lab[300];
} raw_t;

static void shape_str(char *buf, size_t len, const size_t *sh, int nd) {
  size_t u = 0;
  int d;
  buf[0] = '\0';
  for (d = 0; d < nd && u < len; d++) u += (size_t)snprintf(buf + u, len - u, "%s%zu", d ? ", " : "", sh[d]);
}

/* a file's values (kind VALUES), codes (|u1 <u2 U8) or integers (<i4 <i8 I32 I64) */
static int read_raw(raw_t *R, const char *path, const char *tensor, char *err, size_t errlen) {
  char e2[300];
  int st;
  memset(R, 0, sizeof *R);
  lowp_tensor_label(R->lab, sizeof R->lab, path, tensor);
  if (lowp_tensor_is_safetensors(path)) {
    lowp_st_tensor_t info;
    st = lowp_st_read(path, tensor, &info, &R->v, 0, e2, sizeof e2);
    if (st) return lowp_errf(err, errlen, st, "%s: %s", R->lab, e2);
    R->ndim = info.ndim;
    memcpy(R->shape, info.shape, sizeof R->shape);
    R->count = info.count;
    R->kind = info.dtype == LOWP_ST_U8 ? K_CODES : lowp_st_format(info.dtype) ? K_VALUES : K_INTEGERS;
    R->code_bytes = 1;
    return LOWP_OK;
  } else {
    lowp_npy_info_t info;
    if (tensor)
      return lowp_errf(err, errlen, LOWP_EINVAL, "%s: a tensor name is given but %s is not a .safetensors file",
                       R->lab, path);
    st = lowp_npy_read_codes(path, &info, &R->v, 0);
    if (st) return lowp_errf(err, errlen, st, "%s: %s", R->lab, lowp_tensor_npy_msg(st));
    R->ndim = info.ndim;
    memcpy(R->shape, info.shape, sizeof R->shape);
    R->count = info.count;
    R->kind = info.dtype == LOWP_NPY_U1 || info.dtype == LOWP_NPY_U2 ? K_CODES
              : info.dtype == LOWP_NPY_I4 || info.dtype == LOWP_NPY_I8 ? K_INTEGERS : K_VALUES;
    R->code_bytes = info.dtype == LOWP_NPY_U2 ? 2 : 1;
  }
  return LOWP_OK;
}

/* the element values q (rows x cols) from values or packed codes */
static int elements(double **q, size_t *rows, size_t *cols, const raw_t *E, const lowp_bsformat_t *bf, char *err,
                    size_t errlen) {
  size_t last = E->ndim ? E->shape[E->ndim - 1] : 1, k;
  *rows = last ? E->count / last : 0;
  if (E->kind == K_CODES) {
    uint8_t *b, *zs;
    double *sd;
    size_t r, rb;
    if (E->code_bytes != 1)
      return lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s: element codes are bytes (|u1, U8), not 2-byte "
                       "integers", E->lab);
    *cols = lowp_bsformat_row_cols(bf, last);
    rb = lowp_bsformat_row_bytes(bf, *cols);
    b = malloc(E->count + 1);
    zs = calloc(lowp_bsformat_blocks(bf, *cols) * 4 + 1, 1);
    sd = malloc((lowp_bsformat_blocks(bf, *cols) + 1) * sizeof *sd);
    *q = malloc((*rows * *cols + 1) * sizeof **q);
    if (!b || !zs || !sd || !*q) { free(b), free(zs), free(sd); return LOWP_ENOMEM; }
    for (k = 0; k < E->count; k++) {
      b[k] = (uint8_t)E->v[k];
      if (!bf->dense && bf->elem_bits < 8 && bf->elem_bits > 4 && (b[k] >> bf->elem_bits)) {
        unsigned v = b[k];
        free(b), free(zs), free(sd);
        return lowp_errf(err, errlen, LOWP_ERANGE, "%s: byte %zu = 0x%02x has bits above the %d-bit element "
                         "code (one code a byte, in its low bits)", E->lab, k, v, bf->elem_bits);
      }
    }
    for (r = 0; r < *rows; r++) {
      /* the scale bytes are zeros (a value in every scale format), decoded into sd */
      if (lowp_bs_unpack(*q + r * *cols, sd, b + r * rb, zs, 1, *cols, bf) != LOWP_OK) {
        free(b), free(zs), free(sd);
        return lowp_errf(err, errlen, LOWP_ERANGE, "%s: row %zu holds a code that is not a %s element (%s)",
                         E->lab, r, bf->name, bf->elem_int ? "-2^(bits-1) is not used" : "a pattern of no value");
      }
    }
    free(b), free(zs), free(sd);
    return LOWP_OK;
  }
  *cols = last;
  for (k = 0; k < E->count; k++)
    if (lowp_bs_elem_check(bf, E->v[k]))
      return lowp_errf(err, errlen, LOWP_ERANGE, "%s: element %zu = %.17g is not a %s element value", E->lab, k,
                       E->v[k], bf->name);
  *q = malloc((E->count + 1) * sizeof **q);
  if (!*q) return LOWP_ENOMEM;
  memcpy(*q, E->v, E->count * sizeof **q);
  return LOWP_OK;
}

/* the scales (nbat matrices of rows x nb, compact) from the companion tensor */
static int scales(double **s, const raw_t *S, const raw_t *E, size_t nbat, size_t rows, size_t nb,
                  const lowp_bsformat_t *bf, lowp_bslayout_t lay, char *err, size_t errlen) {
  size_t per = lowp_bs_scale_slots(lay, rows, nb), k, b;
  int sb = lowp_bsformat_scale_bytes(bf);
  char got[120], want[120];
  if (lay == LOWP_BSL_COMPACT) {
    size_t wsh[LOWP_NPY_MAXDIM];
    int d, ok = S->ndim == (E->ndim ? E->ndim : 1);
    for (d = 0; d + 1 < E->ndim; d++) wsh[d] = E->shape[d];
    wsh[E->ndim ? E->ndim - 1 : 0] = nb;
    for (d = 0; ok && d < S->ndim; d++) ok = S->shape[d] == wsh[d];
    if (!ok) {
      shape_str(got, sizeof got, S->shape, S->ndim);
      shape_str(want, sizeof want, wsh, E->ndim ? E->ndim : 1);
      return lowp_errf(err, errlen, LOWP_ESHAPE, "%s: scales of shape (%s), but %zu rows of %zu blocks of %d "
                       "need (%s) (compact layout)", S->lab, got, nbat * rows, nb, bf->block, want);
    }
  } else if (S->count != nbat * per) {
    return lowp_errf(err, errlen, LOWP_ESHAPE, "%s: %zu scales, but the 128x4 layout of %zu x %zu scales needs "
                     "%zu (rows padded to %zu, blocks to %zu)%s", S->lab, S->count, rows, nb, nbat * per,
                     (rows + 127) / 128 * 128, (nb + 3) / 4 * 4, nbat > 1 ? " a batch" : "");
  }
  if (S->kind == K_CODES && S->code_bytes != sb)
    return lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s: %d-byte codes, but %s scales take %d byte%s%s", S->lab,
                     S->code_bytes, bf->name, sb, sb > 1 ? "s" : "", sb == 4 ? " (save fp32 values)" : "");
  if (S->kind == K_INTEGERS)
    return lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s: integers; scales are values of %s or its codes "
                     "(|u1, <u2, U8)", S->lab, bf->name);
  *s = malloc((nbat * rows * nb + 1) * sizeof **s);
  if (!*s) return LOWP_ENOMEM;
  for (b = 0; b < nbat; b++)
    (void)lowp_bs_scales_relayout(*s + b * rows * nb, S->v + b * per, sizeof **s, rows, nb, lay, 0);
  for (k = 0; k < nbat * rows * nb; k++) {
    double v = (*s)[k];
    if (S->kind == K_CODES) {
      uint64_t c = (uint64_t)v;
      if (bf->scale_unsigned) c &= ~((uint64_t)1 << (lowp_format_width(&bf->scale) - 1));
      if (lowp_decode(&(*s)[k], c, &bf->scale))
        return lowp_errf(err, errlen, LOWP_ERANGE, "%s: scale code 0x%llx (block %zu) is not a value of the "
                         "scale format", S->lab, (unsigned long long)c, k);
    } else if (lowp_bs_scale_check(bf, v)) {
      return lowp_errf(err, errlen, LOWP_ERANGE, "%s: scale %zu (block %zu of row %zu) = %.17g is not a %s scale "
                       "value%s", S->lab, k, k % nb, k / nb, v, bf->name,
                       bf->scale_unsigned && v < 0 ? " (the scale is unsigned)" : "");
    }
  }
  return LOWP_OK;
}

/* the per-tensor scale: a number, or a one-value tensor */
static int tensor_scale(double *ts, const lowp_tensor_ref_t *r, const lowp_bsformat_t *bf, const char *lab,
                        char *err, size_t errlen) {
  raw_t T;
  int st;
  *ts = 1;
  if (!bf->tensor_scale) {
    if (r->tensor_scale > 0 || r->ts_path)
      return lowp_errf(err, errlen, LOWP_EINVAL, "%s: \"tensor_scale\" given, but %s has no per-tensor scale", lab,
                       bf->name);
    return LOWP_OK;
  }
  if (r->tensor_scale > 0) {
    *ts = r->tensor_scale;
    return LOWP_OK;
  }
  if (!r->ts_path)
    return lowp_errf(err, errlen, LOWP_EINVAL, "%s: %s needs \"tensor_scale\" (the per-tensor fp32 decode scale, a "
                     "number or a one-value tensor)", lab, bf->name);
  if ((st = read_raw(&T, r->ts_path, r->ts_tensor, err, errlen))) return st;
  st = T.count != 1 || T.kind != K_VALUES || !(T.v[0] > 0) || !isfinite(T.v[0]) || (double)(float)T.v[0] != T.v[0];
  if (st)
    st = lowp_errf(err, errlen, LOWP_EINVAL, "%s: the per-tensor scale must be one positive finite fp32 value "
                   "(%zu %s)", T.lab, T.count, T.kind == K_VALUES ? "values" : "codes or integers");
  else *ts = T.v[0];
  free(T.v);
  return st;
}

/* ----------------------------------------------------------- public API */

int lowp_tensor_bs_load(double **x, size_t *shape, int *ndim, size_t *count, const lowp_tensor_ref_t *r,
                        const lowp_bsformat_t *bf, int gemm_b, char *err, size_t errlen) {
  raw_t E, S;
  double *q = NULL, *s = NULL, ts = 1;
  size_t rows = 0, cols = 0, nbat, nb, per_rows, k;
  int st, d;
  memset(&S, 0, sizeof S);
  *x = NULL;
  if ((st = read_raw(&E, r->path, r->tensor, err, errlen))) return st;
  if (E.kind == K_INTEGERS && !bf->elem_int)
    st = lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s: integers, but %s's elements are floating-point (save "
                   "their values, or their codes as bytes)", E.lab, bf->name);
  else if (gemm_b && E.ndim < 2)
    st = lowp_errf(err, errlen, LOWP_ESHAPE, "%s: gemm's B with companion scales is saved transposed, (.., n, k): "
                   "%d dimension%s", E.lab, E.ndim, E.ndim == 1 ? "" : "s");
  if (!st) st = elements(&q, &rows, &cols, &E, bf, err, errlen);
  if (!st && !(st = tensor_scale(&ts, r, bf, E.lab, err, errlen))) {
    nb = lowp_bsformat_blocks(bf, cols);
    per_rows = E.ndim >= 2 ? E.shape[E.ndim - 2] : 1;
    nbat = per_rows ? rows / per_rows : 0;
    if (!(st = read_raw(&S, r->scales_path, r->scales_tensor, err, errlen)))
      st = scales(&s, &S, &E, nbat, per_rows, nb, bf, (lowp_bslayout_t)r->scale_layout, err, errlen);
  }
  if (!st && !(*x = malloc((rows * cols + 1) * sizeof **x))) st = LOWP_ENOMEM;
  if (!st) st = lowp_bs_dequantize(q, q, s, ts, rows, cols, bf);
  if (!st) {
    *ndim = E.ndim ? E.ndim : 1;
    for (d = 0; d < *ndim; d++) shape[d] = E.ndim ? E.shape[d] : 1;
    shape[*ndim - 1] = cols;
    *count = rows * cols;
    if (gemm_b) { /* (.., n, k) -> the operation's (.., k, n) */
      size_t n = shape[*ndim - 2], b, i, j;
      shape[*ndim - 2] = cols, shape[*ndim - 1] = n;
      for (b = 0, k = 0; b < rows / n; b++)
        for (i = 0; i < n; i++)
          for (j = 0; j < cols; j++, k++) (*x)[b * n * cols + j * n + i] = q[k];
    } else {
      memcpy(*x, q, rows * cols * sizeof **x);
    }
  }
  if (st) free(*x), *x = NULL;
  free(E.v), free(S.v), free(q), free(s);
  return st;
}
