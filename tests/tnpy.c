/* tnpy -- tests of the .npy reader and writer and the atomic file writes */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic.h"
#include "io/npy.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

/* a v1.0 file: magic, version, header padded to 64 bytes with '\n', data */
static size_t make(unsigned char *buf, const char *dict, const void *data, size_t dlen) {
  size_t h = strlen(dict), total;
  size_t pad = (64 - (10 + h + 1) % 64) % 64;
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (unsigned char)((h + pad + 1) & 0xff);
  buf[9] = (unsigned char)((h + pad + 1) >> 8);
  memcpy(buf + 10, dict, h);
  memset(buf + 10 + h, ' ', pad);
  buf[10 + h + pad] = '\n';
  total = 10 + h + pad + 1;
  if (dlen) memcpy(buf + total, data, dlen);
  return total + dlen;
}

static void check_header(const char *what, const unsigned char *buf, size_t len,
                         int want) {
  lowp_npy_info_t info;
  int st = lowp_npy_parse_header(&info, buf, len, len);
  lowp_test_check(st == want, "%s: status %d (%s), want %d", what, st,
                  lowp_status_str(st), want);
}

static void check_dict(const char *what, const char *dict, size_t dlen, int want) {
  unsigned char buf[1024];
  double d[16] = {0};
  check_header(what, buf, make(buf, dict, d, dlen), want);
}

int main(void) {
  unsigned char buf[2048];
  double data[12];
  size_t i;
  char path[] = "build-tnpy-XXXXXX.npy", tmpl[64];
  lowp_test_start("tnpy");
  snprintf(tmpl, sizeof tmpl, "/tmp/tnpy_%llu.npy", (unsigned long long)lowp_test_seed());
  (void)path;

  /* valid headers: both quotes, whitespace, trailing comma, key order */
  check_dict("f8 (2,3)", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 48, LOWP_OK);
  check_dict("order of keys, no trailing comma",
             "{\"shape\": (2,3), \"fortran_order\": False, \"descr\": \"<f8\"}", 48, LOWP_OK);
  check_dict("scalar ()", "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 8, LOWP_OK);
  check_dict("1-D (5,)", "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }", 5, LOWP_OK);
  check_dict("empty (0,)", "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", 0, LOWP_OK);
  /* malformed, each field: numpy/lib/format.py is the grammar */
  check_dict("data too short", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 40, LOWP_EFILE);
  check_dict("data too long", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 56, LOWP_EFILE);
  check_dict("big-endian", "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", 16, LOWP_EUNSUPPORTED);
  check_dict("int16 dtype", "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", 4, LOWP_EUNSUPPORTED);
  check_dict("uint32 dtype", "{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }", 8, LOWP_EUNSUPPORTED);
  check_dict("<u2 (raw 16-bit patterns)", "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }", 4, LOWP_OK);
  check_dict("<i4 (indices)", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8, LOWP_OK);
  check_dict("<i8 (indices)", "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", 16, LOWP_OK);
  check_dict("<i8 size mismatch", "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", 8, LOWP_EFILE);
  check_dict("fortran order", "{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }", 16, LOWP_EUNSUPPORTED);
  check_dict("fortran_order junk", "{'descr': '<f8', 'fortran_order': 0, 'shape': (2,), }", 16, LOWP_EFILE);
  check_dict("missing shape", "{'descr': '<f8', 'fortran_order': False, }", 8, LOWP_EFILE);
  check_dict("missing descr", "{'fortran_order': False, 'shape': (2,), }", 16, LOWP_EFILE);
  check_dict("duplicate key", "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16, LOWP_EFILE);
  check_dict("extra key", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1, }", 16, LOWP_EFILE);
  check_dict("negative dim", "{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }", 16, LOWP_EFILE);
  check_dict("absurd shape (overflow)", "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", 16, LOWP_EFILE);
  check_dict("absurd dim (too many digits)", "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,), }", 16, LOWP_EFILE);
  check_dict("huge shape vs small file", "{'descr': '<f8', 'fortran_order': False, 'shape': (100000000,), }", 16, LOWP_EFILE);
  check_dict("too many dims", "{'descr': '<f8', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 8, LOWP_EUNSUPPORTED);
  check_dict("(2) is not a tuple", "{'descr': '<f8', 'fortran_order': False, 'shape': (2), }", 16, LOWP_EFILE);
  check_dict("shape not a tuple", "{'descr': '<f8', 'fortran_order': False, 'shape': [2], }", 16, LOWP_EFILE);
  check_dict("unterminated string", "{'descr': '<f8, 'fortran_order': False, 'shape': (2,), }", 16, LOWP_EFILE);
  check_dict("no closing brace", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), ", 16, LOWP_EFILE);
  check_dict("junk after dict", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), } x", 16, LOWP_EFILE);
  check_dict("not a dict", "['descr', '<f8']", 16, LOWP_EFILE);
  {
    unsigned char b[256];
    size_t len = make(b, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", data, 8);
    check_header("valid reference", b, len, LOWP_OK);
    check_header("truncated before header length", b, 9, LOWP_EFILE);
    check_header("truncated inside header", b, 40, LOWP_EFILE);
    check_header("truncated data", b, len - 1, LOWP_EFILE);
    b[0] = 'x';
    check_header("bad magic", b, len, LOWP_EFILE);
    b[0] = 0x93;
    b[6] = 3;
    check_header("version 3.0", b, len, LOWP_EUNSUPPORTED);
    b[6] = 9;
    check_header("version 9.0", b, len, LOWP_EFILE);
    b[6] = 1;
    b[8] = 0xff;
    b[9] = 0xff;
    check_header("header length beyond file", b, len, LOWP_EFILE);
    b[8] = 10;
    b[9] = 0;
    check_header("header not ending in newline", b, len, LOWP_EFILE);
  }
  /* fuzz: random bytes over a valid file never crash and never pass with
     a size that disagrees with the file (the parser checks sizes first) */
  {
    unsigned char ref[256], b[256];
    size_t len = make(ref, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", data, 24);
    int trial;
    for (trial = 0; trial < 20000; trial++) {
      lowp_npy_info_t info;
      uint64_t r = lowp_rng_u64(lowp_test_seed(), (uint64_t)trial, 9);
      int k, st;
      memcpy(b, ref, len);
      for (k = 0; k < 1 + (int)(r & 3); k++) {
        uint64_t q = lowp_rng_u64(lowp_test_seed(), (uint64_t)trial * 8 + (uint64_t)k, 10);
        b[q % len] = (unsigned char)(q >> 32);
      }
      st = lowp_npy_parse_header(&info, b, (size_t)(r >> 40) % (len + 1), len);
      if (st == LOWP_OK)
        lowp_test_check(info.data_offset + info.count * lowp_npy_itemsize(info.dtype) == len,
                        "fuzz %d: accepted with inconsistent size", trial);
    }
  }
  /* round trips through files, every dtype */
  {
    static const double vals[6] = {1.0, -2.5, 0.0, 65504.0, 0x1p-24, -0.0};
    static const lowp_npy_dtype_t types[3] = {LOWP_NPY_F2, LOWP_NPY_F4, LOWP_NPY_F8};
    size_t shape[2] = {2, 3};
    int t;
    for (t = 0; t < 3; t++) {
      lowp_npy_info_t info;
      double *back = NULL;
      int st = lowp_npy_write(tmpl, types[t], shape, 2, vals, NULL);
      lowp_test_check(st == LOWP_OK, "write %s: %d", lowp_npy_descr(types[t]), st);
      st = lowp_npy_read(tmpl, &info, &back, NULL, 0);
      lowp_test_check(st == LOWP_OK && info.ndim == 2 && info.shape[0] == 2 &&
                      info.shape[1] == 3 && info.dtype == types[t], "read %s: %d",
                      lowp_npy_descr(types[t]), st);
      for (i = 0; st == LOWP_OK && i < 6; i++)
        lowp_test_check(memcmp(&back[i], &vals[i], 8) == 0, "%s[%zu]: %a vs %a",
                        lowp_npy_descr(types[t]), i, back[i], vals[i]);
      free(back);
    }
    /* u1 holds e4m3 bit patterns; reading needs the format */
    {
      static const double e4[4] = {1.0, -448.0, 0x1p-9, 0.5};
      size_t s1 = 4;
      lowp_npy_info_t info;
      double *back = NULL;
      int st = lowp_npy_write(tmpl, LOWP_NPY_U1, &s1, 1, e4, &LOWP_FMT_E4M3);
      lowp_test_check(st == LOWP_OK, "write u1 e4m3: %d", st);
      st = lowp_npy_read(tmpl, &info, &back, NULL, 0);
      lowp_test_check(st == LOWP_EINVAL, "u1 without a format: %d", st);
      st = lowp_npy_read(tmpl, &info, &back, &LOWP_FMT_E4M3, 0);
      for (i = 0; st == LOWP_OK && i < 4; i++)
        lowp_test_check(back[i] == e4[i], "u1[%zu]: %a vs %a", i, back[i], e4[i]);
      free(back);
      st = lowp_npy_read(tmpl, &info, &back, &LOWP_FMT_E4M3, 3);
      lowp_test_check(st == LOWP_ENOMEM && back == NULL, "max_count refuses before allocating");
    }
    /* u2 holds bf16 bit patterns (PyTorch's bf16 saved as uint16) */
    {
      static const double bf[4] = {1.0, -0x1.fep127, 0x1p-133, 3.140625};
      size_t s1 = 4;
      lowp_npy_info_t info;
      double *back = NULL;
      int st = lowp_npy_write(tmpl, LOWP_NPY_U2, &s1, 1, bf, &LOWP_FMT_BF16);
      lowp_test_check(st == LOWP_OK, "write u2 bf16: %d", st);
      lowp_test_check(lowp_npy_read(tmpl, &info, &back, NULL, 0) == LOWP_EINVAL, "u2 without a format");
      lowp_test_check(lowp_npy_read(tmpl, &info, &back, &LOWP_FMT_E4M3, 0) == LOWP_EINVAL, "u2 with an 8-bit format");
      st = lowp_npy_read(tmpl, &info, &back, &LOWP_FMT_BF16, 0);
      lowp_test_check(st == LOWP_OK && info.dtype == LOWP_NPY_U2, "read u2 bf16: %d", st);
      for (i = 0; st == LOWP_OK && i < 4; i++)
        lowp_test_check(back[i] == bf[i], "u2[%zu]: %a vs %a", i, back[i], bf[i]);
      free(back);
      lowp_test_check(lowp_npy_write(tmpl, LOWP_NPY_U2, &s1, 1, bf, &LOWP_FMT_FP16) == LOWP_ERANGE,
                      "bf16 values are not fp16 values: u2 write refused");
    }
    /* integers: class indices */
    {
      static const double idx[3] = {0, 7, 9007199254740992.0};
      size_t s1 = 3;
      lowp_npy_info_t info;
      double *back = NULL, big = 9007199254740994.0, half = 0.5;
      int st = lowp_npy_write(tmpl, LOWP_NPY_I8, &s1, 1, idx, NULL);
      lowp_test_check(st == LOWP_OK, "write i8: %d", st);
      st = lowp_npy_read(tmpl, &info, &back, NULL, 0);
      lowp_test_check(st == LOWP_OK && back[1] == 7 && back[2] == idx[2], "read i8: %d", st);
      free(back);
      lowp_test_check(lowp_npy_write(tmpl, LOWP_NPY_I4, &s1, 1, idx, NULL) == LOWP_ERANGE, "2^53 is no int32");
      s1 = 2;
      st = lowp_npy_write(tmpl, LOWP_NPY_I4, &s1, 1, idx, NULL);
      st = st ? st : lowp_npy_read(tmpl, &info, &back, NULL, 0);
      lowp_test_check(st == LOWP_OK && back[1] == 7, "i4 round trip: %d", st);
      free(back);
      s1 = 1;
      lowp_test_check(lowp_npy_write(tmpl, LOWP_NPY_I8, &s1, 1, &half, NULL) == LOWP_ERANGE, "0.5 is no integer");
      {
        /* a file holding 2^53 + 2 as <i8: refused, not rounded */
        unsigned char f[136];
        const char *d = "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }";
        size_t hl = 118, k;
        FILE *fp;
        memset(f, ' ', sizeof f);
        memcpy(f, "\x93NUMPY\x01\x00", 8);
        f[8] = (unsigned char)hl; f[9] = 0;
        memcpy(f + 10, d, strlen(d));
        f[10 + hl - 1] = '\n';
        for (k = 0; k < 8; k++) f[128 + k] = (unsigned char)((uint64_t)(int64_t)big >> (8 * k));
        fp = fopen(tmpl, "wb");
        fwrite(f, 1, 136, fp);
        fclose(fp);
        lowp_test_check(lowp_npy_read(tmpl, &info, &back, NULL, 0) == LOWP_ERANGE, "an <i8 beyond 2^53 is refused");
      }
    }
    /* not representable in the dtype: nothing written */
    {
      double third = 1.0 / 3.0;
      size_t s1 = 1;
      remove(tmpl);
      lowp_test_check(lowp_npy_write(tmpl, LOWP_NPY_F4, &s1, 1, &third, NULL) == LOWP_ERANGE,
                      "1/3 as <f4 is refused");
      lowp_test_check(fopen(tmpl, "rb") == NULL, "and no file is left behind");
    }
  }
  /* atomic writes: an unwritable directory fails cleanly */
  lowp_test_check(lowp_atomic_write("/nonexistent-dir/x.npy", "x", 1) == LOWP_EIO,
                  "unwritable directory");
  {
    lowp_atomic_t w;
    FILE *fp;
    remove(tmpl);
    lowp_test_check(lowp_atomic_open(&w, tmpl) == LOWP_OK, "atomic open");
    fputs("partial", w.fp);
    fp = fopen(tmpl, "rb");
    lowp_test_check(fp == NULL, "destination absent before commit");
    if (fp) fclose(fp);
    lowp_atomic_abort(&w);
    fp = fopen(tmpl, "rb");
    lowp_test_check(fp == NULL, "destination absent after abort");
    if (fp) fclose(fp);
  }
  /* issue 19: a v2.0 header over 64 KiB (numpy writes one for long dicts)
     is read, not called corrupt */
  {
    const char *dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
    size_t hl = 70000, k;
    unsigned char *big = malloc(12 + hl + 16);
    double two[2] = {1.5, -2.25}, *back = NULL;
    lowp_npy_info_t info;
    FILE *fp;
    int st;
    memcpy(big, "\x93NUMPY\x02\x00", 8);
    for (k = 0; k < 4; k++) big[8 + k] = (unsigned char)(hl >> (8 * k));
    memset(big + 12, ' ', hl);
    memcpy(big + 12, dict, strlen(dict));
    big[12 + hl - 1] = '\n';
    memcpy(big + 12 + hl, two, 16);
    fp = fopen(tmpl, "wb");
    fwrite(big, 1, 12 + hl + 16, fp);
    fclose(fp);
    st = lowp_npy_read(tmpl, &info, &back, NULL, 0);
    lowp_test_check(st == LOWP_OK && info.count == 2 && back && back[0] == 1.5 && back[1] == -2.25,
                    "a v2.0 header of %zu bytes is read: %d", hl, st);
    free(back);
    /* the same header, the data cut short: corrupt */
    fp = fopen(tmpl, "wb");
    fwrite(big, 1, 12 + hl + 8, fp);
    fclose(fp);
    back = NULL;
    lowp_test_check(lowp_npy_read(tmpl, &info, &back, NULL, 0) == LOWP_EFILE && !back,
                    "a long v2.0 header, data truncated: corrupt");
    free(big);
  }
  remove(tmpl);
  (void)buf;
  return lowp_test_end();
}
