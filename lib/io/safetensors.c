/* lowp_safetensors -- strict reader and writer of .safetensors files */

#include "io/safetensors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic.h"
#include "io/escape.h"
#include "status.h"

/* ------------------------------------------------------ private helpers */

static const struct {
  const char *name;
  size_t size;
  const lowp_format_t *fmt;
} DT[] = {
    {"BF16", 2, &LOWP_FMT_BF16}, {"F16", 2, &LOWP_FMT_FP16},      {"F32", 4, &LOWP_FMT_FP32},
    {"F64", 8, &LOWP_FMT_FP64},  {"F8_E4M3", 1, &LOWP_FMT_E4M3}, {"F8_E5M2", 1, &LOWP_FMT_E5M2},
    {"I32", 4, NULL},            {"I64", 8, NULL},
    {"U8", 1, NULL},             {"F8_E8M0", 1, &LOWP_FMT_E8M0},
};
#define NDT (sizeof DT / sizeof DT[0])

/* dtypes of the format that lowp does not read */
static const char *const OTHER[] = {"BOOL", "I8", "I16", "U16", "U32", "U64",
                                    "F6_E2M3", "F6_E3M2", "F4", "C64"};


static uint64_t le(const unsigned char *p, int n) {
  uint64_t v = 0;
  int i;
  for (i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* a JSON number that is an integer in [0, 2^53] */
static int get_uint(const cJSON *j, uint64_t *v) {
  double d;
  if (!cJSON_IsNumber(j)) return 0;
  d = j->valuedouble;
  if (!(d >= 0 && d <= 9007199254740992.0) || d != floor(d)) return 0;
  *v = (uint64_t)d;
  return 1;
}

static int by_name(const void *a, const void *b) {
  const lowp_st_tensor_t *x = a, *y = b;
  return strcmp(x->name, y->name);
}

static int by_begin(const void *a, const void *b) {
  const lowp_st_tensor_t *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  return x->end < y->end ? -1 : x->end > y->end;
}

/* ----------------------------------------------------------- public API */

const char *lowp_st_dtype_name(lowp_st_dtype_t t) { return (size_t)t < NDT ? DT[t].name : "?"; }
size_t lowp_st_itemsize(lowp_st_dtype_t t) { return (size_t)t < NDT ? DT[t].size : 0; }
const lowp_format_t *lowp_st_format(lowp_st_dtype_t t) { return (size_t)t < NDT ? DT[t].fmt : NULL; }

int lowp_st_parse_header(lowp_st_tensor_t **out, size_t *nout, const unsigned char *buf,
                         size_t len, uint64_t file_size, char *err, size_t errlen) {
  uint64_t N, data_size;
  cJSON *root;
  const cJSON *it;
  const char *end = NULL;
  int metadata = 0;
  lowp_st_tensor_t *t = NULL;
  size_t n = 0, cap = 0, i;
  int st = LOWP_OK;
  if (!out || !nout || !buf) return LOWP_EINVAL;
  *out = NULL;
  *nout = 0;
  if (len < 8 || file_size < 8) return lowp_errf(err, errlen, LOWP_EFILE, "shorter than the 8-byte header length");
  N = le(buf, 8);
  if (N < 2 || N > LOWP_ST_MAXHEADER || N > file_size - 8)
    return lowp_errf(err, errlen, LOWP_EFILE, "header length %llu is impossible for a file of %llu bytes",
                (unsigned long long)N, (unsigned long long)file_size);
  if (len < 8 + N) return lowp_errf(err, errlen, LOWP_EFILE, "truncated header");
  if (buf[8] != '{') return lowp_errf(err, errlen, LOWP_EFILE, "the header does not begin with '{'");
  if (!lowp_utf8_valid((const char *)buf + 8, (size_t)N, NULL))
    return lowp_errf(err, errlen, LOWP_EFILE, "the header is not UTF-8");
  {
    size_t at = 0;
    int nul = lowp_json_find_nul((const char *)buf + 8, (size_t)N, &at);
    if (nul)
      return lowp_errf(err, errlen, LOWP_EFILE, "%s at byte %zu of the header (a name would be cut "
                       "short there)", nul == 1 ? "a NUL byte" : "\\u0000 (a NUL character)", at);
  }
  root = cJSON_ParseWithLengthOpts((const char *)buf + 8, (size_t)N, &end, 0);
  if (!root || !cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return lowp_errf(err, errlen, LOWP_EFILE, "the header is not a JSON object");
  }
  for (; end < (const char *)buf + 8 + N; end++)
    if (*end != ' ') {
      cJSON_Delete(root);
      return lowp_errf(err, errlen, LOWP_EFILE, "bytes other than spaces after the header's JSON");
    }
  data_size = file_size - 8 - N;
  for (it = root->child; it && !st; it = it->next) {
    const cJSON *dt, *shape, *offs, *e;
    lowp_st_tensor_t x;
    uint64_t b, en, cnt = 1, v;
    size_t k;
    if (!strcmp(it->string, "__metadata__")) {
      if (metadata++) { st = lowp_errf(err, errlen, LOWP_EFILE, "the name '__metadata__' appears twice"); break; }
      if (!cJSON_IsObject(it)) { st = lowp_errf(err, errlen, LOWP_EFILE, "__metadata__ is not an object"); break; }
      for (e = it->child; e; e = e->next)
        if (!cJSON_IsString(e)) { st = lowp_errf(err, errlen, LOWP_EFILE, "__metadata__ values must be strings"); break; }
      continue;
    }
    memset(&x, 0, sizeof x);
    if (strlen(it->string) >= sizeof x.name) { st = lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "a tensor name longer than 255 bytes"); break; }
    snprintf(x.name, sizeof x.name, "%s", it->string);
    if (!cJSON_IsObject(it)) { st = lowp_errf(err, errlen, LOWP_EFILE, "tensor '%.64s' is not an object", x.name); break; }
    for (e = it->child; e; e = e->next)
      if (strcmp(e->string, "dtype") && strcmp(e->string, "shape") && strcmp(e->string, "data_offsets")) {
        st = lowp_errf(err, errlen, LOWP_EFILE, "tensor '%.64s': unknown key '%.32s'", x.name, e->string);
        break;
      }
    if (st) break;
    dt = cJSON_GetObjectItemCaseSensitive(it, "dtype");
    shape = cJSON_GetObjectItemCaseSensitive(it, "shape");
    offs = cJSON_GetObjectItemCaseSensitive(it, "data_offsets");
    if (!cJSON_IsString(dt) || !cJSON_IsArray(shape) || !cJSON_IsArray(offs) ||
        cJSON_GetArraySize(offs) != 2) {
      st = lowp_errf(err, errlen, LOWP_EFILE, "tensor '%.64s' needs dtype, shape and two data_offsets", x.name);
      break;
    }
    for (k = 0; k < NDT; k++)
      if (!strcmp(dt->valuestring, DT[k].name)) break;
    if (k == NDT) {
      size_t o;
      for (o = 0; o < sizeof OTHER / sizeof OTHER[0]; o++)
        if (!strcmp(dt->valuestring, OTHER[o])) break;
      st = lowp_errf(err, errlen, o < sizeof OTHER / sizeof OTHER[0] ? LOWP_EUNSUPPORTED : LOWP_EFILE,
                "tensor '%.64s': dtype %.16s (lowp reads BF16 F16 F32 F64 F8_E4M3 F8_E5M2 I32 I64)",
                x.name, dt->valuestring);
      break;
    }
    x.dtype = (lowp_st_dtype_t)k;
    if (cJSON_GetArraySize(shape) > LOWP_ST_MAXDIM) {
      st = lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "tensor '%.64s' has more than %d dimensions", x.name, LOWP_ST_MAXDIM);
      break;
    }
    for (e = shape->child; e; e = e->next) {
      if (!get_uint(e, &v)) { st = lowp_errf(err, errlen, LOWP_EFILE, "tensor '%.64s': a size is not a non-negative integer", x.name); break; }
      if (v && cnt > UINT64_MAX / v / 8) { st = lowp_errf(err, errlen, LOWP_EFILE, "tensor '%.64s': sizes overflow", x.name); break; }
      cnt *= v;
      x.shape[x.ndim++] = (size_t)v;
    }
    if (st) break;
    if (!get_uint(offs->child, &b) || !get_uint(offs->child->next, &en) || en < b) {
      st = lowp_errf(err, errlen, LOWP_EFILE, "tensor '%.64s': data_offsets must be [begin, end] with begin <= end", x.name);
      break;
    }
    if (en > data_size) {
      st = lowp_errf(err, errlen, LOWP_EFILE, "tensor '%.64s': bytes %llu..%llu beyond the %llu bytes of data",
                x.name, (unsigned long long)b, (unsigned long long)en, (unsigned long long)data_size);
      break;
    }
    if (en - b != cnt * DT[k].size) {
      st = lowp_errf(err, errlen, LOWP_EFILE, "tensor '%.64s': %llu bytes for %llu elements of %s",
                x.name, (unsigned long long)(en - b), (unsigned long long)cnt, DT[k].name);
      break;
    }
    x.count = (size_t)cnt;
    x.begin = 8 + N + b;
    x.end = 8 + N + en;
    if (n == cap) {
      lowp_st_tensor_t *g = realloc(t, (cap = cap ? 2 * cap : 8) * sizeof *t);
      if (!g) { st = LOWP_ENOMEM; break; }
      t = g;
    }
    t[n++] = x;
  }
  cJSON_Delete(root);
  if (!st && n > 1) {
    /* no name twice: sorted by name, equal names are neighbours (n log n:
       a header of a million tensors is read in a second, issue 19) */
    qsort(t, n, sizeof *t, by_name);
    for (i = 1; i < n && !st; i++)
      if (!strcmp(t[i - 1].name, t[i].name))
        st = lowp_errf(err, errlen, LOWP_EFILE, "the name '%.64s' appears twice", t[i].name);
  }
  if (!st && n) {
    /* the buffer entirely indexed: no holes, no overlaps, nothing after */
    qsort(t, n, sizeof *t, by_begin);
    if (t[0].begin != 8 + N) st = lowp_errf(err, errlen, LOWP_EFILE, "the data do not start at tensor '%.64s'", t[0].name);
    for (i = 1; i < n && !st; i++)
      if (t[i].begin != t[i - 1].end)
        st = lowp_errf(err, errlen, LOWP_EFILE, "tensors '%.64s' and '%.64s' %s", t[i - 1].name, t[i].name,
                  t[i].begin < t[i - 1].end ? "overlap" : "leave a hole between them");
    if (!st && t[n - 1].end != file_size)
      st = lowp_errf(err, errlen, LOWP_EFILE, "%llu bytes after the last tensor",
                (unsigned long long)(file_size - t[n - 1].end));
  } else if (!st && data_size) {
    st = lowp_errf(err, errlen, LOWP_EFILE, "%llu bytes of data but no tensor", (unsigned long long)data_size);
  }
  if (st) { free(t); return st; }
  *out = t;
  *nout = n;
  return LOWP_OK;
}

int lowp_st_read(const char *path, const char *name, lowp_st_tensor_t *info, double **data,
                 size_t max_count, char *err, size_t errlen) {
  FILE *fp;
  long fsize;
  unsigned char lenb[8], *head = NULL, *raw = NULL;
  uint64_t N;
  lowp_st_tensor_t *t = NULL, *x = NULL;
  size_t n = 0, i, isz;
  double *out = NULL;
  int st;
  if (!path || !info || !data) return LOWP_EINVAL;
  *data = NULL;
  fp = lowp_fopen_regular(path); /* not a FIFO, device or folder (io/atomic.h) */
  if (!fp) return lowp_errf(err, errlen, LOWP_EIO, "cannot open it (%s)", errno == EINVAL ? "not a regular file" : strerror(errno));
  if (fseek(fp, 0, SEEK_END) != 0 || (fsize = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET) != 0) {
    fclose(fp);
    return lowp_errf(err, errlen, LOWP_EIO, "cannot read it");
  }
  if (fread(lenb, 1, 8, fp) != 8) { fclose(fp); return lowp_errf(err, errlen, LOWP_EFILE, "shorter than the 8-byte header length"); }
  N = le(lenb, 8);
  /* the claim is checked against the file before anything is allocated */
  if (N < 2 || N > LOWP_ST_MAXHEADER || N > (uint64_t)fsize - 8) {
    fclose(fp);
    return lowp_errf(err, errlen, LOWP_EFILE, "header length %llu is impossible for a file of %ld bytes",
                (unsigned long long)N, fsize);
  }
  head = malloc(8 + (size_t)N);
  if (!head) { fclose(fp); return LOWP_ENOMEM; }
  memcpy(head, lenb, 8);
  if (fread(head + 8, 1, (size_t)N, fp) != N) { free(head); fclose(fp); return lowp_errf(err, errlen, LOWP_EIO, "read error"); }
  st = lowp_st_parse_header(&t, &n, head, 8 + (size_t)N, (uint64_t)fsize, err, errlen);
  free(head);
  if (st) { fclose(fp); return st; }
  for (i = 0; i < n; i++)
    if (name ? !strcmp(t[i].name, name) : n == 1) x = &t[i];
  if (!x) {
    if (name) lowp_errf(err, errlen, LOWP_EINVAL, "no tensor named '%.64s' (it has %zu)", name, n);
    else lowp_errf(err, errlen, LOWP_EINVAL, "%zu tensors: name the one to read", n);
    free(t);
    fclose(fp);
    return LOWP_EINVAL;
  }
  *info = *x;
  free(t);
  if (max_count && info->count > max_count) { fclose(fp); return lowp_errf(err, errlen, LOWP_ENOMEM, "too large"); }
  isz = lowp_st_itemsize(info->dtype);
  raw = malloc(info->count * isz + 1);
  out = malloc(info->count * sizeof *out + 1);
  if (!raw || !out) { free(raw); free(out); fclose(fp); return LOWP_ENOMEM; }
  if (fseek(fp, (long)info->begin, SEEK_SET) != 0 || fread(raw, isz, info->count, fp) != info->count) {
    free(raw); free(out); fclose(fp);
    return lowp_errf(err, errlen, LOWP_EIO, "read error");
  }
  fclose(fp);
  for (i = 0; i < info->count && !st; i++) {
    const unsigned char *p = raw + i * isz;
    uint64_t u = le(p, (int)isz);
    switch (info->dtype) {
    case LOWP_ST_F32: {
      uint32_t w = (uint32_t)u;
      float f;
      memcpy(&f, &w, sizeof f);
      out[i] = f;
      break;
    }
    case LOWP_ST_F64: memcpy(&out[i], &u, sizeof u); break;
    case LOWP_ST_I32: out[i] = (double)(int32_t)(uint32_t)u; break;
    case LOWP_ST_U8: out[i] = (double)u; break;
    case LOWP_ST_I64: {
      int64_t v = (int64_t)u;
      if (v > (INT64_C(1) << 53) || v < -(INT64_C(1) << 53))
        st = lowp_errf(err, errlen, LOWP_ERANGE, "element %zu = %lld is beyond 2^53", i, (long long)v);
      out[i] = (double)v;
      break;
    }
    default:
      if (lowp_decode(&out[i], u, lowp_st_format(info->dtype)) != LOWP_OK)
        st = lowp_errf(err, errlen, LOWP_ERANGE, "element %zu (0x%llx) is not a %s value", i,
                  (unsigned long long)u, lowp_st_dtype_name(info->dtype));
    }
  }
  free(raw);
  if (st) { free(out); return st; }
  *data = out;
  return LOWP_OK;
}

int lowp_st_write(const char *path, size_t n, const char *const *names,
                  const lowp_st_dtype_t *dtypes, const size_t *const *shapes, const int *ndims,
                  const double *const *data) {
  cJSON *root;
  char *json;
  size_t i, j, hl, total, off = 0;
  unsigned char *buf;
  int st = LOWP_OK, d;
  if (!path || (n && (!names || !dtypes || !ndims || !data))) return LOWP_EINVAL;
  root = cJSON_CreateObject();
  if (!root) return LOWP_ENOMEM;
  for (i = 0; i < n; i++) {
    cJSON *o = cJSON_CreateObject(), *sh = cJSON_CreateArray(), *of = cJSON_CreateArray();
    size_t cnt = 1;
    if (!names[i] || (size_t)dtypes[i] >= NDT || ndims[i] < 0 || ndims[i] > LOWP_ST_MAXDIM ||
        !strcmp(names[i], "__metadata__"))
      st = LOWP_EINVAL;
    for (j = 0; j < i && !st; j++)
      if (!strcmp(names[i], names[j])) st = LOWP_EINVAL;
    for (d = 0; !st && d < ndims[i]; d++) {
      cnt *= shapes[i][d];
      cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)shapes[i][d]));
    }
    cJSON_AddItemToArray(of, cJSON_CreateNumber((double)off));
    off += cnt * DT[st ? 0 : dtypes[i]].size;
    cJSON_AddItemToArray(of, cJSON_CreateNumber((double)off));
    cJSON_AddStringToObject(o, "dtype", st ? "?" : DT[dtypes[i]].name);
    cJSON_AddItemToObject(o, "shape", sh);
    cJSON_AddItemToObject(o, "data_offsets", of);
    cJSON_AddItemToObject(root, names[i] ? names[i] : "?", o);
    if (st) break;
  }
  json = st ? NULL : cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (st) return st;
  if (!json) return LOWP_ENOMEM;
  hl = strlen(json);
  hl = (hl + 7) / 8 * 8; /* spaces to a multiple of 8 */
  total = 8 + hl + off;
  buf = malloc(total + 1);
  if (!buf) { free(json); return LOWP_ENOMEM; }
  for (i = 0; i < 8; i++) buf[i] = (unsigned char)((uint64_t)hl >> (8 * i));
  memset(buf + 8, ' ', hl);
  memcpy(buf + 8, json, strlen(json));
  free(json);
  off = 8 + hl;
  for (i = 0; i < n && !st; i++) {
    size_t cnt = 1, isz = DT[dtypes[i]].size, k;
    for (d = 0; d < ndims[i]; d++) cnt *= shapes[i][d];
    for (k = 0; k < cnt && !st; k++) {
      double v = data[i][k];
      uint64_t bits = 0;
      switch (dtypes[i]) {
      case LOWP_ST_F32: {
        float f = (float)v;
        uint32_t w;
        if ((double)f != v && !isnan(v)) st = LOWP_ERANGE;
        memcpy(&w, &f, sizeof w);
        bits = w;
        break;
      }
      case LOWP_ST_F64: memcpy(&bits, &v, sizeof bits); break;
      case LOWP_ST_I32:
        if (v != floor(v) || v < -2147483648.0 || v > 2147483647.0) st = LOWP_ERANGE;
        else bits = (uint64_t)(uint32_t)(int32_t)v;
        break;
      case LOWP_ST_U8:
        if (v != floor(v) || !(v >= 0 && v <= 255)) st = LOWP_ERANGE;
        else bits = (uint64_t)v;
        break;
      case LOWP_ST_I64:
        if (v != floor(v) || fabs(v) > 9007199254740992.0) st = LOWP_ERANGE;
        else bits = (uint64_t)(int64_t)v;
        break;
      default:
        if (lowp_encode(&bits, v, DT[dtypes[i]].fmt) != LOWP_OK) st = LOWP_ERANGE;
      }
      for (j = 0; j < isz; j++) buf[off + j] = (unsigned char)(bits >> (8 * j));
      off += isz;
    }
  }
  if (!st) st = lowp_atomic_write(path, buf, total);
  free(buf);
  return st;
}
