/* fuzz_safetensors -- libFuzzer harness of the .safetensors reader (lib/io/safetensors.h) */

/*
 * Input: the bytes of a file. Properties:
 *   - lowp_st_parse_header and lowp_st_read agree on acceptance; on failure
 *     there is a one-line message;
 *   - every accepted tensor lies inside the file, the tensors tile the data
 *     area exactly (sorted by offset: contiguous from the header's end to
 *     the file's end), and bytes = count * itemsize;
 *   - each element read equals what its bytes say, decoded independently
 *     (IEEE layouts by hand for F16/F32/F64, lowp_decode only for bf16/fp8);
 *   - written back (lowp_st_write, all tensors) and read again, the values
 *     are the same bit for bit (NaN as NaN).
 */

#include "fuzz.h"

#include <math.h>

#include "format/format.h"
#include "io/safetensors.h"
#include "status.h"

static uint64_t le(const uint8_t *p, size_t n) {
  uint64_t v = 0;
  while (n--) v = (v << 8) | p[n];
  return v;
}

static double half(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

static int same(double a, double b) {
  return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lowp_st_tensor_t *t = NULL;
  size_t n = 0, i, k;
  char err[300] = "";
  int st;
  char *path;
  if (size > 1 << 16) return 0;
  st = lowp_st_parse_header(&t, &n, data, size, size, err, sizeof err);
  path = fuzz_tmpfile(data, size);
  if (st != LOWP_OK) {
    lowp_st_tensor_t info;
    double *v = NULL;
    FUZZ_CHECK(err[0] && !strchr(err, '\n'), "message '%s'", err);
    FUZZ_CHECK(lowp_st_read(path, NULL, &info, &v, 0, err, sizeof err) != LOWP_OK && !v,
               "read accepts what parse_header refuses");
    unlink(path);
    free(path);
    return 0;
  }
  for (i = 0; i < n; i++) {
    FUZZ_CHECK(t[i].end <= size && t[i].begin <= t[i].end, "tensor outside the file");
    FUZZ_CHECK(t[i].end - t[i].begin == t[i].count * lowp_st_itemsize(t[i].dtype), "size");
    FUZZ_CHECK(i == 0 || t[i].begin == t[i - 1].end, "hole or overlap accepted");
  }
  FUZZ_CHECK(n == 0 || t[n - 1].end == size, "trailing bytes accepted");
  {
    const char **names = calloc(n + 1, sizeof *names);
    lowp_st_dtype_t *dt = calloc(n + 1, sizeof *dt);
    const size_t **shapes = calloc(n + 1, sizeof *shapes);
    int *nd = calloc(n + 1, sizeof *nd);
    double **vals = calloc(n + 1, sizeof *vals);
    int ok = 1;
    char *path2 = fuzz_tmpfile("", 0);
    for (i = 0; i < n; i++) {
      lowp_st_tensor_t info;
      st = lowp_st_read(path, t[i].name, &info, &vals[i], 0, err, sizeof err);
      if (st == LOWP_ERANGE || st == LOWP_EINVAL) { ok = 0; continue; } /* a pattern of no value; a name with NUL */
      FUZZ_CHECK(st == LOWP_OK, "tensor '%s' listed but not read: %s", t[i].name, err);
      for (k = 0; k < info.count; k++) {
        const uint8_t *p = data + info.begin + k * lowp_st_itemsize(info.dtype);
        double want;
        switch (info.dtype) {
        case LOWP_ST_F16: want = half((uint16_t)le(p, 2)); break;
        case LOWP_ST_F32: { uint32_t u = (uint32_t)le(p, 4); float f; memcpy(&f, &u, 4); want = f; break; }
        case LOWP_ST_F64: { uint64_t u = le(p, 8); memcpy(&want, &u, 8); break; }
        case LOWP_ST_I32: want = (int32_t)(uint32_t)le(p, 4); break;
        case LOWP_ST_I64: want = (double)(int64_t)le(p, 8); break;
        case LOWP_ST_U8: want = p[0]; break;
        default: FUZZ_CHECK(lowp_decode(&want, le(p, lowp_st_itemsize(info.dtype)), lowp_st_format(info.dtype)) == LOWP_OK, "decode");
        }
        FUZZ_CHECK(same(vals[i][k], want), "'%s'[%zu]: read %a, bytes say %a", t[i].name, k, vals[i][k], want);
      }
      names[i] = t[i].name;
      dt[i] = info.dtype;
      shapes[i] = t[i].shape;
      nd[i] = info.ndim;
    }
    if (ok && n) {
      st = lowp_st_write(path2, n, names, dt, shapes, nd, (const double *const *)vals);
      FUZZ_CHECK(st == LOWP_OK, "writing back what was read: %d", st);
      for (i = 0; i < n; i++) {
        lowp_st_tensor_t info;
        double *v2 = NULL;
        FUZZ_CHECK(lowp_st_read(path2, names[i], &info, &v2, 0, err, sizeof err) == LOWP_OK, "re-read: %s", err);
        for (k = 0; k < info.count; k++) FUZZ_CHECK(same(v2[k], vals[i][k]), "round trip of '%s'[%zu]", names[i], k);
        free(v2);
      }
    }
    unlink(path2);
    free(path2);
    for (i = 0; i < n; i++) free(vals[i]);
    free(vals); free(names); free(dt); free(shapes); free(nd);
  }
  free(t);
  unlink(path);
  free(path);
  return 0;
}
