/* lowp_npy -- strict reader and writer of NumPy .npy files (v1.0 and v2.0) */

/*
 * The format (numpy/lib/format.py, "NEP 1"): the magic "\x93NUMPY", a major
 * and minor version byte, the header length (uint16 LE in 1.0, uint32 LE in
 * 2.0), then an ASCII Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces and ended by '\n', then the raw data in C order.
 * The parser below accepts exactly that grammar (whitespace anywhere
 * between tokens, either quote, an optional trailing comma) and nothing
 * else; every size is checked before it is used, so malformed input gives a
 * status code, never an out-of-bounds read.
 */

#include "io/npy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic.h"
#include "status.h"

/* ------------------------------------------------------ private helpers */

typedef struct {
  const char *s, *end;
} cursor_t;

static void skip_ws(cursor_t *c) {
  while (c->s < c->end && (*c->s == ' ' || *c->s == '\t')) c->s++;
}

static int eat(cursor_t *c, char ch) {
  skip_ws(c);
  if (c->s < c->end && *c->s == ch) { c->s++; return 1; }
  return 0;
}

/* a quoted string (no escapes: none of the valid values has one) */
static int parse_str(cursor_t *c, char *out, size_t cap) {
  char q;
  size_t n = 0;
  skip_ws(c);
  if (c->s >= c->end || (*c->s != '\'' && *c->s != '"')) return 0;
  q = *c->s++;
  while (c->s < c->end && *c->s != q) {
    if (*c->s == '\\' || n + 1 >= cap) return 0;
    out[n++] = *c->s++;
  }
  if (c->s >= c->end) return 0;
  c->s++;
  out[n] = '\0';
  return 1;
}

static int parse_word(cursor_t *c, const char *w) {
  size_t n = strlen(w);
  skip_ws(c);
  if ((size_t)(c->end - c->s) >= n && !memcmp(c->s, w, n)) { c->s += n; return 1; }
  return 0;
}

/* a non-negative decimal integer that fits in size_t */
static int parse_size(cursor_t *c, size_t *v) {
  size_t x = 0;
  int any = 0;
  skip_ws(c);
  while (c->s < c->end && *c->s >= '0' && *c->s <= '9') {
    size_t d = (size_t)(*c->s - '0');
    if (x > ((size_t)-1 - d) / 10) return 0;
    x = x * 10 + d;
    c->s++;
    any = 1;
  }
  if (any && c->s < c->end && (*c->s == 'L')) c->s++; /* Python 2 long */
  *v = x;
  return any;
}

static int parse_shape(cursor_t *c, lowp_npy_info_t *info) {
  int too_many = 0;
  if (!eat(c, '(')) return LOWP_EFILE;
  info->ndim = 0;
  if (eat(c, ')')) return LOWP_OK;
  for (;;) {
    size_t v;
    if (!parse_size(c, &v)) return LOWP_EFILE;
    if (info->ndim == LOWP_NPY_MAXDIM) too_many = 1; /* parse on, report later */
    else info->shape[info->ndim++] = v;
    if (eat(c, ')')) {
      /* "(3)" is an int in Python, not a tuple: one dimension needs "(3,)" */
      if (info->ndim == 1 && !too_many) return LOWP_EFILE;
      break;
    }
    if (!eat(c, ',')) return LOWP_EFILE;
    if (eat(c, ')')) break;
  }
  return too_many ? LOWP_EUNSUPPORTED : LOWP_OK;
}

static int dtype_of(const char *d, lowp_npy_dtype_t *t) {
  if (!strcmp(d, "<f2")) *t = LOWP_NPY_F2;
  else if (!strcmp(d, "<f4")) *t = LOWP_NPY_F4;
  else if (!strcmp(d, "<f8")) *t = LOWP_NPY_F8;
  else if (!strcmp(d, "|u1")) *t = LOWP_NPY_U1;
  else if (!strcmp(d, "<u2")) *t = LOWP_NPY_U2;
  else if (!strcmp(d, "<i4")) *t = LOWP_NPY_I4;
  else if (!strcmp(d, "<i8")) *t = LOWP_NPY_I8;
  else return 0;
  return 1;
}

static uint64_t le(const unsigned char *p, int n) {
  uint64_t v = 0;
  int i;
  for (i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* u1 and u2 hold bit patterns of a format of their width (u1: up to 8
   bits; u2: 9 to 16); other dtypes need none */
static int bits_format_ok(lowp_npy_dtype_t t, const lowp_format_t *f) {
  if (t == LOWP_NPY_U1) return f && lowp_format_width(f) <= 8;
  if (t == LOWP_NPY_U2) return f && lowp_format_width(f) > 8 && lowp_format_width(f) <= 16;
  return 1;
}

/* ----------------------------------------------------------- public API */

size_t lowp_npy_itemsize(lowp_npy_dtype_t t) {
  switch (t) {
  case LOWP_NPY_F2: return 2;
  case LOWP_NPY_F4: return 4;
  case LOWP_NPY_F8: return 8;
  case LOWP_NPY_U1: return 1;
  case LOWP_NPY_U2: return 2;
  case LOWP_NPY_I4: return 4;
  case LOWP_NPY_I8: return 8;
  }
  return 0;
}

const char *lowp_npy_descr(lowp_npy_dtype_t t) {
  switch (t) {
  case LOWP_NPY_F2: return "<f2";
  case LOWP_NPY_F4: return "<f4";
  case LOWP_NPY_F8: return "<f8";
  case LOWP_NPY_U1: return "|u1";
  case LOWP_NPY_U2: return "<u2";
  case LOWP_NPY_I4: return "<i4";
  case LOWP_NPY_I8: return "<i8";
  }
  return "?";
}

int lowp_npy_parse_header(lowp_npy_info_t *info, const unsigned char *buf, size_t len,
                          uint64_t file_size) {
  size_t pre, hlen, i;
  cursor_t c;
  int seen_descr = 0, seen_fo = 0, seen_shape = 0, fortran = 0, st, shape_st = LOWP_OK;
  char descr[32] = "";
  if (!info || !buf) return LOWP_EINVAL;
  memset(info, 0, sizeof *info);
  if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0) return LOWP_EFILE;
  if (buf[6] == 3 && buf[7] == 0) return LOWP_EUNSUPPORTED; /* utf-8 header */
  if ((buf[6] != 1 && buf[6] != 2) || buf[7] != 0) return LOWP_EFILE;
  info->major = buf[6];
  pre = buf[6] == 1 ? 10 : 12;
  if (len < pre) return LOWP_EFILE;
  hlen = (size_t)le(buf + 8, buf[6] == 1 ? 2 : 4);
  if (hlen == 0 || hlen > len - pre || (uint64_t)(pre + hlen) > file_size) return LOWP_EFILE;
  if (buf[pre + hlen - 1] != '\n') return LOWP_EFILE;
  for (i = pre; i < pre + hlen; i++) /* printable ASCII, spaces, the final newline */
    if ((buf[i] < 0x20 || buf[i] > 0x7e) && !(buf[i] == '\n' && i == pre + hlen - 1))
      return LOWP_EFILE;
  info->data_offset = pre + hlen;
  c.s = (const char *)buf + pre;
  c.end = (const char *)buf + pre + hlen - 1;

  if (!eat(&c, '{')) return LOWP_EFILE;
  while (!eat(&c, '}')) {
    char key[32];
    if (!parse_str(&c, key, sizeof key) || !eat(&c, ':')) return LOWP_EFILE;
    /* the whole dict is parsed before judging what it says, so a corrupt
       header is reported as corrupt, not as an unsupported dtype */
    if (!strcmp(key, "descr")) {
      if (seen_descr++ || !parse_str(&c, descr, sizeof descr)) return LOWP_EFILE;
    } else if (!strcmp(key, "fortran_order")) {
      if (seen_fo++) return LOWP_EFILE;
      if (parse_word(&c, "True")) fortran = 1;
      else if (!parse_word(&c, "False")) return LOWP_EFILE;
    } else if (!strcmp(key, "shape")) {
      if (seen_shape++) return LOWP_EFILE;
      if ((st = parse_shape(&c, info)) == LOWP_EFILE) return st;
      shape_st = st;
    } else {
      return LOWP_EFILE;
    }
    if (!eat(&c, ',')) {
      if (!eat(&c, '}')) return LOWP_EFILE;
      break;
    }
  }
  skip_ws(&c);
  if (c.s != c.end) return LOWP_EFILE; /* only padding before the '\n' */
  if (!seen_descr || !seen_fo || !seen_shape) return LOWP_EFILE;
  if (!dtype_of(descr, &info->dtype) || fortran || shape_st) return LOWP_EUNSUPPORTED;

  info->count = 1;
  for (i = 0; i < (size_t)info->ndim; i++) {
    if (info->shape[i] && info->count > (size_t)-1 / info->shape[i]) return LOWP_EFILE;
    info->count *= info->shape[i];
  }
  if (info->count > (size_t)-1 / lowp_npy_itemsize(info->dtype)) return LOWP_EFILE;
  if ((uint64_t)info->count * lowp_npy_itemsize(info->dtype) !=
      file_size - info->data_offset)
    return LOWP_EFILE;
  return LOWP_OK;
}

/* Open path (a regular file: not a FIFO, device or folder, io/atomic.h) and parse its header into info;
   *fp is left open on LOWP_OK, closed otherwise. */
static int open_header(const char *path, lowp_npy_info_t *info, FILE **fp_out) {
  FILE *fp;
  long fsize;
  unsigned char head[65536 + 12];
  size_t got;
  int st;
  *fp_out = NULL;
  fp = lowp_fopen_regular(path);
  if (!fp) return LOWP_EIO;
  if (fseek(fp, 0, SEEK_END) != 0 || (fsize = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET) != 0) {
    fclose(fp);
    return LOWP_EIO;
  }
  got = fread(head, 1, sizeof head, fp);
  /* a v2.0 header may be longer than the buffer (numpy writes one when a
     v1.0 header would pass 64 KiB): read it whole, up to 256 MiB */
  if (got >= 12 && !memcmp(head, "\x93NUMPY\x02\x00", 8) && 12 + le(head + 8, 4) > got &&
      12 + le(head + 8, 4) <= (uint64_t)fsize) {
    uint64_t need = 12 + le(head + 8, 4);
    unsigned char *big;
    if (need > ((uint64_t)1 << 28)) { fclose(fp); return LOWP_EUNSUPPORTED; }
    big = malloc((size_t)need);
    if (!big) { fclose(fp); return LOWP_ENOMEM; }
    memcpy(big, head, got);
    if (fread(big + got, 1, (size_t)need - got, fp) != (size_t)need - got) {
      free(big);
      fclose(fp);
      return LOWP_EIO;
    }
    st = lowp_npy_parse_header(info, big, (size_t)need, (uint64_t)fsize);
    free(big);
  } else {
    st = lowp_npy_parse_header(info, head, got, (uint64_t)fsize);
  }
  if (st) { fclose(fp); return st; }
  *fp_out = fp;
  return LOWP_OK;
}

int lowp_npy_read_info(const char *path, lowp_npy_info_t *info) {
  FILE *fp;
  int st;
  if (!path || !info) return LOWP_EINVAL;
  if ((st = open_header(path, info, &fp)) == LOWP_OK) fclose(fp);
  return st;
}

const char *lowp_npy_float_format(lowp_npy_dtype_t t) {
  return t == LOWP_NPY_F2 ? "fp16" : t == LOWP_NPY_F4 ? "fp32" : t == LOWP_NPY_F8 ? "fp64" : NULL;
}

/* codes: |u1 and <u2 read as the unsigned integers they hold */
static int read_npy(const char *path, lowp_npy_info_t *info, double **data,
                    const lowp_format_t *u1_format, size_t max_count, int codes) {
  FILE *fp;
  size_t i, isz;
  unsigned char *raw;
  double *out;
  int st;
  if (!path || !info || !data) return LOWP_EINVAL;
  *data = NULL;
  if ((st = open_header(path, info, &fp))) return st;
  if (!codes && !bits_format_ok(info->dtype, u1_format)) {
    fclose(fp);
    return LOWP_EINVAL;
  }
  if (max_count && info->count > max_count) { fclose(fp); return LOWP_ENOMEM; }
  if (info->count > (size_t)-1 / sizeof(double)) { fclose(fp); return LOWP_ENOMEM; }
  isz = lowp_npy_itemsize(info->dtype);
  raw = malloc(info->count * isz + 1);
  out = malloc(info->count * sizeof *out + 1);
  if (!raw || !out) { free(raw); free(out); fclose(fp); return LOWP_ENOMEM; }
  if (fseek(fp, (long)info->data_offset, SEEK_SET) != 0 ||
      fread(raw, isz, info->count, fp) != info->count) {
    free(raw); free(out); fclose(fp);
    return LOWP_EIO;
  }
  fclose(fp);
  for (i = 0; i < info->count; i++) {
    const unsigned char *p = raw + i * isz;
    switch (info->dtype) {
    case LOWP_NPY_F2:
      (void)lowp_decode(&out[i], le(p, 2), &LOWP_FMT_FP16);
      break;
    case LOWP_NPY_F4: {
      uint32_t u = (uint32_t)le(p, 4);
      float f;
      memcpy(&f, &u, sizeof f);
      out[i] = f;
      break;
    }
    case LOWP_NPY_F8: {
      uint64_t u = le(p, 8);
      memcpy(&out[i], &u, sizeof u);
      break;
    }
    case LOWP_NPY_U1:
    case LOWP_NPY_U2:
      if (codes) out[i] = (double)le(p, (int)isz);
      else if (lowp_decode(&out[i], le(p, (int)isz), u1_format) != 0) {
        free(raw); free(out);
        return LOWP_EINVAL;
      }
      break;
    case LOWP_NPY_I4:
    case LOWP_NPY_I8: {
      uint64_t u = le(p, (int)isz);
      int64_t v = isz == 4 ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;
      if (v > (INT64_C(1) << 53) || v < -(INT64_C(1) << 53)) {
        free(raw); free(out);
        return LOWP_ERANGE;
      }
      out[i] = (double)v;
      break;
    }
    }
  }
  free(raw);
  *data = out;
  return LOWP_OK;
}

int lowp_npy_read(const char *path, lowp_npy_info_t *info, double **data,
                  const lowp_format_t *u1_format, size_t max_count) {
  return read_npy(path, info, data, u1_format, max_count, 0);
}

int lowp_npy_read_codes(const char *path, lowp_npy_info_t *info, double **data, size_t max_count) {
  return read_npy(path, info, data, NULL, max_count, 1);
}

int lowp_npy_write(const char *path, lowp_npy_dtype_t t, const size_t *shape, int ndim,
                   const double *data, const lowp_format_t *u1_format) {
  char hdr[512];
  int n, i;
  size_t count = 1, k, isz = lowp_npy_itemsize(t), total;
  unsigned char *buf;
  int st;
  if (!path || ndim < 0 || ndim > LOWP_NPY_MAXDIM || (ndim && !shape) || !isz)
    return LOWP_EINVAL;
  if (!bits_format_ok(t, u1_format)) return LOWP_EINVAL;
  n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (",
               lowp_npy_descr(t));
  for (i = 0; i < ndim; i++) {
    if (shape[i] && count > (size_t)-1 / shape[i]) return LOWP_EINVAL;
    count *= shape[i];
    n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%s%zu", i ? ", " : "", shape[i]);
  }
  /* a one-element tuple is written "(5,)" */
  n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%s), }", ndim == 1 ? "," : "");
  if (count && !data) return LOWP_EINVAL;
  /* pad with spaces so 10 + header length is a multiple of 64 */
  while ((10 + n + 1) % 64) hdr[n++] = ' ';
  hdr[n++] = '\n';
  if (count > ((size_t)-1 - 10 - (size_t)n) / isz) return LOWP_ENOMEM;
  total = 10 + (size_t)n + count * isz;
  buf = malloc(total);
  if (!buf) return LOWP_ENOMEM;
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (unsigned char)(n & 0xff);
  buf[9] = (unsigned char)(n >> 8);
  memcpy(buf + 10, hdr, (size_t)n);
  for (k = 0; k < count; k++) {
    unsigned char *p = buf + 10 + n + k * isz;
    uint64_t bits = 0;
    double v = data[k];
    switch (t) {
    case LOWP_NPY_F2:
      st = lowp_encode(&bits, v, &LOWP_FMT_FP16);
      break;
    case LOWP_NPY_F4: {
      float f = (float)v;
      uint32_t u;
      st = ((double)f == v || isnan(v)) ? LOWP_OK : LOWP_ERANGE;
      memcpy(&u, &f, sizeof u);
      bits = u;
      break;
    }
    case LOWP_NPY_F8:
      memcpy(&bits, &v, sizeof bits);
      st = LOWP_OK;
      break;
    case LOWP_NPY_I4:
    case LOWP_NPY_I8: {
      double lim = t == LOWP_NPY_I4 ? 2147483648.0 : 9007199254740992.0;
      st = (v == floor(v) && v >= -lim && v <= lim && (t == LOWP_NPY_I8 || v < lim)) ? LOWP_OK : LOWP_ERANGE;
      if (!st) bits = (uint64_t)(int64_t)v;
      break;
    }
    case LOWP_NPY_U1:
    case LOWP_NPY_U2:
    default:
      st = lowp_encode(&bits, v, u1_format);
      break;
    }
    if (st) { free(buf); return LOWP_ERANGE; }
    for (i = 0; i < (int)isz; i++) p[i] = (unsigned char)(bits >> (8 * i));
  }
  st = lowp_atomic_write(path, buf, total);
  free(buf);
  return st;
}
