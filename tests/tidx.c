/* tidx -- lowp_idx_read: every element type, plain and gzip, and every way a file can be bad */

#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include "io/idx.h"
#include "status.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* lowp__g_dir: the temporary folder of this test program (one process). */
static char lowp__g_dir[64];

static const char *path_of(const char *name) {
  static char p[256]; /* test program: one path at a time */
  snprintf(p, sizeof p, "%s/%s", lowp__g_dir, name);
  return p;
}

static void write_raw(const char *name, const unsigned char *b, size_t n) {
  FILE *f = fopen(path_of(name), "wb");
  if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
    printf("cannot write %s\n", path_of(name));
    exit(1);
  }
}

static void write_gz(const char *name, const unsigned char *b, size_t n) {
  gzFile g = gzopen(path_of(name), "wb");
  if (!g || gzwrite(g, b, (unsigned)n) != (int)n || gzclose(g) != Z_OK) {
    printf("cannot write %s\n", path_of(name));
    exit(1);
  }
}

static unsigned char *slurp(const char *name, size_t *n) {
  FILE *f = fopen(path_of(name), "rb");
  unsigned char *b = malloc(1 << 20);
  *n = f ? fread(b, 1, 1 << 20, f) : 0;
  if (f) fclose(f);
  return b;
}

/* expect status st (and, if pattern, a message containing it) */
static void expect(const char *name, int st, const char *pattern) {
  lowp_idx_t t;
  char err[512];
  int got = lowp_idx_read(&t, path_of(name), err, sizeof err);
  lowp_test_check(got == st, "%s: status %d (%s), want %d; message: %s", name, got,
                  lowp_status_str(got), st, err);
  if (st != LOWP_OK) {
    lowp_test_check(t.data == NULL && t.count == 0, "%s: output not zeroed on failure", name);
    if (pattern)
      lowp_test_check(strstr(err, pattern) != NULL, "%s: message '%s' lacks '%s'", name, err, pattern);
  }
  lowp_idx_free(&t);
}

/* A 2x3 uint8 file and the same as every other type, with known values. */
static void test_types(void) {
  static const unsigned char u8[] = {0, 0, 0x08, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 250, 0, 255};
  static const unsigned char i16[] = {0, 0, 0x0B, 1, 0, 0, 0, 2, 0x12, 0x34, 0xFF, 0xFE};
  static const unsigned char i32[] = {0, 0, 0x0C, 1, 0, 0, 0, 1, 0x80, 0, 0, 1};
  static const unsigned char f32[] = {0, 0, 0x0D, 1, 0, 0, 0, 2, 0x3F, 0x80, 0, 0, 0xC0, 0x49, 0x0F, 0xDB};
  static const unsigned char f64[] = {0, 0, 0x0E, 1, 0, 0, 0, 1, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0};
  static const unsigned char i8[] = {0, 0, 0x09, 1, 0, 0, 0, 2, 0x7F, 0x80};
  static const unsigned char empty[] = {0, 0, 0x08, 2, 0, 0, 0, 0, 0, 0, 0, 5};
  lowp_idx_t t;
  char err[256];
  int pass, st;
  for (pass = 0; pass < 2; pass++) {
    void (*w)(const char *, const unsigned char *, size_t) = pass ? write_gz : write_raw;
    const char *tag = pass ? "gzip" : "plain";
    w("u8", u8, sizeof u8);
    w("i16", i16, sizeof i16);
    w("i32", i32, sizeof i32);
    w("f32", f32, sizeof f32);
    w("f64", f64, sizeof f64);
    w("i8", i8, sizeof i8);
    w("empty", empty, sizeof empty);

    st = lowp_idx_read(&t, path_of("u8"), err, sizeof err);
    lowp_test_check(st == LOWP_OK && t.type == LOWP_IDX_U8 && t.ndims == 2 && t.dims[0] == 2 &&
                        t.dims[1] == 3 && t.count == 6 && t.elem_size == 1,
                    "%s u8 header: st %d %s", tag, st, err);
    if (st == LOWP_OK)
      lowp_test_check(!memcmp(t.data, u8 + 12, 6), "%s u8 data", tag);
    lowp_idx_free(&t);

    st = lowp_idx_read(&t, path_of("i16"), err, sizeof err);
    lowp_test_check(st == LOWP_OK && t.count == 2 && ((int16_t *)t.data)[0] == 0x1234 &&
                        ((int16_t *)t.data)[1] == -2,
                    "%s i16 big-endian: st %d %s", tag, st, err);
    lowp_idx_free(&t);

    st = lowp_idx_read(&t, path_of("i32"), err, sizeof err);
    lowp_test_check(st == LOWP_OK && ((int32_t *)t.data)[0] == INT32_MIN + 1, "%s i32: st %d", tag, st);
    lowp_idx_free(&t);

    st = lowp_idx_read(&t, path_of("f32"), err, sizeof err);
    lowp_test_check(st == LOWP_OK && ((float *)t.data)[0] == 1.0f &&
                        ((float *)t.data)[1] == -3.14159274101257324f,
                    "%s f32: st %d", tag, st);
    lowp_idx_free(&t);

    st = lowp_idx_read(&t, path_of("f64"), err, sizeof err);
    lowp_test_check(st == LOWP_OK && t.elem_size == 8 && ((double *)t.data)[0] == 1.5, "%s f64: st %d",
                    tag, st);
    lowp_idx_free(&t);

    st = lowp_idx_read(&t, path_of("i8"), err, sizeof err);
    lowp_test_check(st == LOWP_OK && ((int8_t *)t.data)[0] == 127 && ((int8_t *)t.data)[1] == -128,
                    "%s i8: st %d", tag, st);
    lowp_idx_free(&t);

    st = lowp_idx_read(&t, path_of("empty"), err, sizeof err);
    lowp_test_check(st == LOWP_OK && t.count == 0 && t.data == NULL && t.dims[1] == 5,
                    "%s zero-size dimension: st %d", tag, st);
    lowp_idx_free(&t);
  }
  lowp_test_check(lowp_idx_type_size(0x08) == 1 && lowp_idx_type_size(0x0E) == 8 &&
                      lowp_idx_type_size(0x0A) == 0 && lowp_idx_type_size(0) == 0,
                  "lowp_idx_type_size");
}

/* Every header field and length checked, plain and gzip. */
static void test_bad(void) {
  static const unsigned char good[] = {0, 0, 0x08, 1, 0, 0, 0, 4, 1, 2, 3, 4};
  unsigned char b[64];
  int pass;
  for (pass = 0; pass < 2; pass++) {
    void (*w)(const char *, const unsigned char *, size_t) = pass ? write_gz : write_raw;
    memcpy(b, good, sizeof good);
    b[0] = 1;
    w("magic0", b, sizeof good);
    expect("magic0", LOWP_EFILE, "magic");
    memcpy(b, good, sizeof good);
    b[1] = 8;
    w("magic1", b, sizeof good);
    expect("magic1", LOWP_EFILE, "magic");
    memcpy(b, good, sizeof good);
    b[2] = 0x0A;
    w("type", b, sizeof good);
    expect("type", LOWP_EFILE, "type 0x0A");
    memcpy(b, good, sizeof good);
    b[3] = 0;
    w("ndims0", b, sizeof good);
    expect("ndims0", LOWP_EFILE, "0 dimensions");
    memcpy(b, good, sizeof good);
    b[3] = LOWP_IDX_MAXDIMS + 1;
    w("ndims9", b, sizeof good);
    expect("ndims9", LOWP_EFILE, "dimensions");
    w("hdr3", good, 3);
    expect("hdr3", LOWP_EFILE, "header");
    w("empty0", good, 0);
    expect("empty0", LOWP_EFILE, "header");
    w("dims", good, 6);
    expect("dims", LOWP_EFILE, "dimension sizes");
    w("short", good, sizeof good - 1);
    expect("short", LOWP_EFILE, "truncated");
    memcpy(b, good, sizeof good);
    b[sizeof good] = 9;
    w("trail", b, sizeof good + 1);
    expect("trail", LOWP_EFILE, "trailing");
    /* a bigger size than the data: truncated; too big to allocate: ENOMEM */
    memcpy(b, good, sizeof good);
    b[7] = 5;
    w("size", b, sizeof good);
    expect("size", LOWP_EFILE, "truncated");
    {
      static const unsigned char huge[] = {0, 0, 0x0E, 3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                           0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
      w("huge", huge, sizeof huge);
      expect("huge", LOWP_ENOMEM, "bytes");
    }
    {
      /* issue 14: an 8-byte file whose header claims 2^32 - 1 bytes (one
         dimension of 0xFFFFFFFF uint8) was allocated before it was read;
         the claim is now checked against the file size first */
      static const unsigned char lie[] = {0, 0, 0x08, 1, 0xFF, 0xFF, 0xFF, 0xFF};
      static const unsigned char lie2[] = {0, 0, 0x08, 2, 0, 1, 0, 0, 0, 0, 0x40, 0, 7};
      w("lie", lie, sizeof lie);
      expect("lie", LOWP_EFILE, "cannot hold");
      w("lie2", lie2, sizeof lie2);
      expect("lie2", LOWP_EFILE, "cannot hold");
    }
  }
  write_raw("good", good, sizeof good);
  expect("good", LOWP_OK, NULL);
  expect("no-such-file", LOWP_EIO, "No such file");
  {
    lowp_idx_t t;
    int st = lowp_idx_read(&t, lowp__g_dir, NULL, 0); /* a directory; NULL err is allowed */
    lowp_test_check(st == LOWP_EIO || st == LOWP_EFILE, "a directory: status %d", st);
    st = lowp_idx_read(&t, "/dev/zero", NULL, 0); /* a device: never read as data */
    lowp_test_check(st == LOWP_EFILE, "/dev/zero: status %d", st);
  }
}

/* Damaged gzip streams: cut short, and a flipped bit (CRC). */
static void test_gzip_damage(void) {
  unsigned char data[4096 + 16], *gz;
  size_t i, n;
  data[0] = data[1] = 0;
  data[2] = 0x08;
  data[3] = 1;
  data[4] = data[5] = 0;
  data[6] = 0x10;
  data[7] = 0;
  for (i = 0; i < 4096; i++) data[8 + i] = (unsigned char)(i * 7 + (i >> 5));
  write_gz("g", data, 8 + 4096);
  expect("g", LOWP_OK, NULL);
  gz = slurp("g", &n);
  lowp_test_check(n > 30 && gz[0] == 0x1f && gz[1] == 0x8b, "gzip written (%zu bytes)", n);
  write_raw("g_cut", gz, n - 4); /* length trailer lost */
  expect("g_cut", LOWP_EFILE, "gzip");
  write_raw("g_half", gz, n / 2); /* deflate data cut */
  expect("g_half", LOWP_EFILE, NULL);
  gz[n - 6] ^= 0x01; /* CRC-32 trailer no longer matches */
  write_raw("g_crc", gz, n);
  expect("g_crc", LOWP_EFILE, "gzip");
  gz[n - 6] ^= 0x01;
  gz[n / 2] ^= 0x55; /* corrupt compressed data */
  write_raw("g_data", gz, n);
  expect("g_data", LOWP_EFILE, NULL);
  free(gz);
}

/* The real files, when Debian's dataset-fashion-mnist is installed:
   shapes, and the published class balance (6000 / 1000 images per class). */
static void test_fashion_mnist(void) {
  static const char *const d = "/usr/share/datasets/fashion-mnist";
  char p[256];
  lowp_idx_t img, lab;
  int split;
  for (split = 0; split < 2; split++) {
    unsigned n = split ? 10000 : 60000, count[10] = {0};
    size_t i;
    int st, c, ok = 1;
    snprintf(p, sizeof p, "%s/%s-labels-idx1-ubyte.gz", d, split ? "t10k" : "train");
    if (access(p, R_OK) != 0) {
      printf("(Fashion-MNIST not installed: real-file checks skipped)\n");
      return;
    }
    st = lowp_idx_read(&lab, p, NULL, 0);
    lowp_test_check(st == LOWP_OK && lab.type == LOWP_IDX_U8 && lab.ndims == 1 && lab.dims[0] == n,
                    "%s: status %d", p, st);
    for (i = 0; st == LOWP_OK && i < lab.count; i++) {
      uint8_t v = ((uint8_t *)lab.data)[i];
      if (v < 10) count[v]++; else ok = 0;
    }
    for (c = 0; c < 10; c++) ok &= count[c] == n / 10;
    lowp_test_check(ok, "%s: labels 0..9, %u each", p, n / 10);
    lowp_idx_free(&lab);
    snprintf(p, sizeof p, "%s/%s-images-idx3-ubyte.gz", d, split ? "t10k" : "train");
    st = lowp_idx_read(&img, p, NULL, 0);
    lowp_test_check(st == LOWP_OK && img.type == LOWP_IDX_U8 && img.ndims == 3 && img.dims[0] == n &&
                        img.dims[1] == 28 && img.dims[2] == 28 && img.count == (size_t)n * 784,
                    "%s: status %d", p, st);
    lowp_idx_free(&img);
  }
}

int main(void) {
  lowp_test_start("tidx");
  strcpy(lowp__g_dir, "/tmp/tidx.XXXXXX");
  if (!mkdtemp(lowp__g_dir)) {
    printf("cannot create a temporary folder\n");
    return 1;
  }
  test_types();
  test_bad();
  test_gzip_damage();
  test_fashion_mnist();
  {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", lowp__g_dir);
    if (system(cmd) != 0) printf("(could not remove %s)\n", lowp__g_dir);
  }
  return lowp_test_end();
}
