/* tsafetensors -- the .safetensors reader and writer: round trips of every dtype, and every corrupt file refused */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/safetensors.h"
#include "status.h"
#include "testutil.h"

static char path[256];

/* write a file: 8-byte length of hdr, hdr, then data bytes */
static void raw_file(const char *hdr, const unsigned char *data, size_t dlen, long long claim) {
  FILE *f = fopen(path, "wb");
  unsigned long long n = claim >= 0 ? (unsigned long long)claim : strlen(hdr);
  int i;
  for (i = 0; i < 8; i++) fputc((int)((n >> (8 * i)) & 0xff), f);
  fwrite(hdr, 1, strlen(hdr), f);
  if (dlen) fwrite(data, 1, dlen, f);
  fclose(f);
}

static void refused(const char *what, const char *hdr, size_t dlen, long long claim, int want,
                    const char *msg) {
  static unsigned char zeros[4096];
  lowp_st_tensor_t info;
  double *v = NULL;
  char err[300] = "";
  int st;
  raw_file(hdr, zeros, dlen, claim);
  st = lowp_st_read(path, NULL, &info, &v, 0, err, sizeof err);
  lowp_test_check(st == want && (want == LOWP_OK || v == NULL) && strstr(err, msg) != NULL,
                  "%s: status %d (want %d), message '%s' (want '%s')", what, st, want, err, msg);
  free(v);
}

static void round_trips(void) {
  static const double bf[3] = {1.0, -0x1.fep127, 0x1p-133}, h[3] = {65504, -0x1p-24, 0.333251953125},
                      f4[3] = {0x1.fffffep127f, 0x1p-149, -1.5}, f8[3] = {0.1, -1e308, 0x1p-1074},
                      e43[3] = {448, -0x1p-9, 1.125}, e52[3] = {57344, -0x1p-16, 1.5},
                      i32[3] = {0, 2147483647.0, -2147483648.0}, i64[3] = {0, 9007199254740992.0, -3},
                      u8[3] = {0, 255, 17}, e80[3] = {0x1p-127, 0x1p127, 1};
  const double *data[10] = {bf, h, f4, f8, e43, e52, i32, i64, u8, e80};
  const char *names[10] = {"bf", "h", "f4", "f8", "e43", "e52", "i32", "i64", "u8", "e80"};
  lowp_st_dtype_t dt[10] = {LOWP_ST_BF16, LOWP_ST_F16, LOWP_ST_F32, LOWP_ST_F64, LOWP_ST_F8_E4M3,
                            LOWP_ST_F8_E5M2, LOWP_ST_I32, LOWP_ST_I64, LOWP_ST_U8, LOWP_ST_F8_E8M0};
  size_t s3[1] = {3};
  const size_t *shapes[10] = {s3, s3, s3, s3, s3, s3, s3, s3, s3, s3};
  int nd[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, i, k;
  char err[300];
  lowp_test_check(lowp_st_write(path, 10, names, dt, shapes, nd, data) == LOWP_OK, "write 10 tensors");
  for (i = 0; i < 10; i++) {
    lowp_st_tensor_t info;
    double *v = NULL;
    int st = lowp_st_read(path, names[i], &info, &v, 0, err, sizeof err);
    lowp_test_check(st == LOWP_OK && info.dtype == dt[i] && info.count == 3 && info.ndim == 1,
                    "read %s: %d %s", names[i], st, err);
    for (k = 0; st == LOWP_OK && k < 3; k++)
      lowp_test_check(memcmp(&v[k], &data[i][k], 8) == 0, "%s[%d] = %a, wrote %a", names[i], k, v[k], data[i][k]);
    free(v);
  }
  {
    lowp_st_tensor_t info;
    double *v = NULL;
    lowp_test_check(lowp_st_read(path, NULL, &info, &v, 0, err, sizeof err) == LOWP_EINVAL &&
                        strstr(err, "10 tensors: name the one"), "several tensors, no name: %s", err);
    lowp_test_check(lowp_st_read(path, "nope", &info, &v, 0, err, sizeof err) == LOWP_EINVAL &&
                        strstr(err, "no tensor named 'nope'"), "unknown name: %s", err);
    lowp_test_check(lowp_st_read(path, "h", &info, &v, 2, err, sizeof err) == LOWP_ENOMEM && !v,
                    "max_count refuses before allocating");
  }
  /* a 2-D tensor, a scalar and an empty one */
  {
    static const double m[6] = {1, 2, 3, 4, 5, 6}, sc = 2.5;
    size_t s23[2] = {2, 3}, s0[1] = {0};
    const size_t *sh[3] = {s23, NULL, s0};
    const double *d3[3] = {m, &sc, m};
    const char *nm[3] = {"m", "s", "empty"};
    lowp_st_dtype_t t3[3] = {LOWP_ST_F32, LOWP_ST_F64, LOWP_ST_F16};
    int n3[3] = {2, 0, 1};
    lowp_st_tensor_t info;
    double *v = NULL;
    lowp_test_check(lowp_st_write(path, 3, nm, t3, sh, n3, d3) == LOWP_OK, "write 2-D, scalar, empty");
    lowp_test_check(lowp_st_read(path, "m", &info, &v, 0, err, sizeof err) == LOWP_OK && info.ndim == 2 &&
                        info.shape[0] == 2 && info.shape[1] == 3 && v[5] == 6, "2-D");
    free(v);
    lowp_test_check(lowp_st_read(path, "s", &info, &v, 0, err, sizeof err) == LOWP_OK && info.ndim == 0 &&
                        info.count == 1 && v[0] == 2.5, "scalar");
    free(v);
    lowp_test_check(lowp_st_read(path, "empty", &info, &v, 0, err, sizeof err) == LOWP_OK && info.count == 0,
                    "empty tensor");
    free(v);
  }
  /* values not of the dtype, duplicate names: nothing written */
  {
    static const double third = 1.0 / 3;
    size_t s1[1] = {1};
    const size_t *sh[2] = {s1, s1};
    const double *d[2] = {&third, &third};
    const char *nm[2] = {"a", "a"};
    lowp_st_dtype_t t[2] = {LOWP_ST_F16, LOWP_ST_F64};
    int n1[2] = {1, 1};
    remove(path);
    lowp_test_check(lowp_st_write(path, 1, nm, t, sh, n1, d) == LOWP_ERANGE, "1/3 as F16 refused");
    t[0] = LOWP_ST_F64;
    lowp_test_check(lowp_st_write(path, 2, nm, t, sh, n1, d) == LOWP_EINVAL, "duplicate names refused");
    lowp_test_check(fopen(path, "rb") == NULL, "and no file left behind");
  }
}

static void corrupt(void) {
  const char *ok = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  refused("the good one is read", ok, 8, -1, LOWP_OK, "");
  refused("no header length", "", 0, -2, LOWP_EFILE, "header length");
  refused("absurd header length", ok, 8, 1LL << 40, LOWP_EFILE, "impossible");
  refused("header longer than the file", ok, 0, 500, LOWP_EFILE, "impossible");
  refused("not JSON", "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", 8, -1, LOWP_EFILE, "not a JSON object");
  refused("not starting with {", " {\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, -1, LOWP_EFILE, "begin with '{'");
  refused("padding other than spaces", "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}\n", 8, -1, LOWP_EFILE, "other than spaces");
  refused("trailing bytes", ok, 12, -1, LOWP_EFILE, "4 bytes after the last tensor");
  refused("truncated data", ok, 4, -1, LOWP_EFILE, "beyond the 4 bytes of data");
  refused("size disagrees with shape", "{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, -1, LOWP_EFILE, "8 bytes for 3 elements");
  refused("overlap", "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"y\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, -1, LOWP_EFILE, "overlap");
  refused("hole", "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"y\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12, -1, LOWP_EFILE, "hole");
  refused("data not starting at 0", "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, -1, LOWP_EFILE, "do not start");
  refused("duplicate name", "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, -1, LOWP_EFILE, "appears twice");
  refused("unknown dtype", "{\"x\":{\"dtype\":\"F17\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, -1, LOWP_EFILE, "dtype F17");
  refused("dtype lowp does not read", "{\"x\":{\"dtype\":\"U16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, -1, LOWP_EUNSUPPORTED, "dtype U16");
  refused("negative size", "{\"x\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, -1, LOWP_EFILE, "non-negative integer");
  refused("fractional offset", "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4.5]}}", 4, -1, LOWP_EFILE, "data_offsets");
  refused("reversed offsets", "{\"x\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,0]}}", 4, -1, LOWP_EFILE, "begin <= end");
  refused("missing shape", "{\"x\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, -1, LOWP_EFILE, "needs dtype, shape");
  refused("unknown key", "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"order\":\"F\"}}", 4, -1, LOWP_EFILE, "unknown key 'order'");
  refused("metadata not strings", "{\"__metadata__\":{\"a\":1},\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, -1, LOWP_EFILE, "must be strings");
  refused("too many dimensions", "{\"x\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, -1, LOWP_EUNSUPPORTED, "dimensions");
  refused("sizes that overflow", "{\"x\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,4]}}", 4, -1, LOWP_EFILE, "overflow");
  refused("invalid UTF-8", "{\"x\xff\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, -1, LOWP_EFILE, "UTF-8");
  refused("data but no tensor", "{\"__metadata__\":{\"a\":\"b\"}}", 4, -1, LOWP_EFILE, "no tensor");
  /* metadata allowed; a bf16 NaN pattern reads as NaN; an e4m3 pattern of no value */
  {
    static const unsigned char d[2] = {0xc0, 0x7f};
    lowp_st_tensor_t info;
    double *v = NULL;
    char err[300];
    raw_file("{\"__metadata__\":{\"format\":\"pt\"},\"x\":{\"dtype\":\"BF16\",\"shape\":[],\"data_offsets\":[0,2]}}", d, 2, -1);
    lowp_test_check(lowp_st_read(path, "x", &info, &v, 0, err, sizeof err) == LOWP_OK && isnan(v[0]),
                    "metadata and a bf16 NaN: %s", err);
    free(v);
  }
}

/* issue 19: a NUL in a tensor name (raw, or \u0000) is refused, not read
   as the name's prefix */
static void nul_names(void) {
  static const char raw[] = "{\"a\0b\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}";
  FILE *f = fopen(path, "wb");
  unsigned long long n = sizeof raw - 1;
  lowp_st_tensor_t info;
  double *v = NULL;
  char err[300] = "";
  int i, st;
  for (i = 0; i < 8; i++) fputc((int)((n >> (8 * i)) & 0xff), f);
  fwrite(raw, 1, sizeof raw - 1, f);
  fclose(f);
  st = lowp_st_read(path, "a", &info, &v, 0, err, sizeof err);
  lowp_test_check(st == LOWP_EFILE && strstr(err, "a NUL byte at byte 3"), "raw NUL in a name: %d %s", st, err);
  free(v);
  refused("\\u0000 in a name", "{\"a\\u0000b\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}", 0, -1,
          LOWP_EFILE, "\\u0000 (a NUL character) at byte 3");
  refused("an escaped backslash before u0000 is text", "{\"a\\\\u0000b\":{\"dtype\":\"F32\",\"shape\":[1],"
          "\"data_offsets\":[0,4]}}", 4, -1, LOWP_OK, "");
}

/* issue 19 (HIGH 5): 80k zero-size tensors took 47 s (each name compared
   with every earlier one). 200k, the last a duplicate of the first, are
   read at once (the test's time limit in CMakeLists.txt holds it: the old
   search would make 2e10 comparisons). */
static void many_tensors(void) {
  const int n = 200000;
  size_t cap = (size_t)n * 64 + 64, u = 0;
  char *h = malloc(cap);
  unsigned char *buf;
  lowp_st_tensor_t *t = NULL;
  size_t nt = 0;
  char err[300] = "";
  int i, k, st;
  for (k = 0; k < 2; k++) {
    u = (size_t)snprintf(h, cap, "{");
    for (i = 0; i < n; i++)
      u += (size_t)snprintf(h + u, cap - u, "%s\"t%d\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}",
                            i ? "," : "", k && i == n - 1 ? 0 : i);
    u += (size_t)snprintf(h + u, cap - u, "}");
    buf = malloc(8 + u);
    for (i = 0; i < 8; i++) buf[i] = (unsigned char)(((unsigned long long)u >> (8 * i)) & 0xff);
    memcpy(buf + 8, h, u);
    st = lowp_st_parse_header(&t, &nt, buf, 8 + u, 8 + u, err, sizeof err);
    if (!k)
      lowp_test_check(st == LOWP_OK && nt == (size_t)n, "%d zero-size tensors (a %zu-byte header): %d %s",
                      n, u, st, err);
    else
      lowp_test_check(st == LOWP_EFILE && strstr(err, "the name 't0' appears twice"),
                      "the last of %d a duplicate: %d %s", n, st, err);
    free(t);
    t = NULL;
    free(buf);
  }
  free(h);
}

int main(void) {
  lowp_test_start("tsafetensors");
  snprintf(path, sizeof path, "/tmp/tsafetensors_%d.safetensors", (int)getpid());
  round_trips();
  corrupt();
  nul_names();
  many_tensors();
  remove(path);
  return lowp_test_end();
}
