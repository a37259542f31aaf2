/* fuzz_idx -- libFuzzer harness of lowp_idx_read */

/*
 * Input: the bytes of an IDX file, plain or gzip (written to a temporary
 * file). An independent reader in this harness decodes the same bytes (a
 * single gzip member through zlib's inflate, not gzread as lowp does; then
 * the IDX fields, LeCun et al.'s "FILE FORMATS") and the two must agree:
 *   - lowp accepts if and only if the oracle finds a well-formed file within
 *     lowp's documented limits (1..LOWP_IDX_MAXDIMS dimensions, at most
 *     LOWP_IDX_MAXBYTES of data): then type, dims, count, element size and
 *     every element (big-endian bytes -> host order) are the same;
 *   - on failure the output is zeroed and there is a message.
 * Where a gzip member is followed by more bytes (zlib's gzread reads
 * concatenated members and ignores trailing non-gzip bytes) only the
 * consistency of what lowp accepted is checked.
 */

#include "fuzz.h"

#include "io/idx.h"
#include "status.h"

#include <zlib.h>

#define ORACLE_MAX ((size_t)64 << 20) /* decompressed bytes the oracle looks at */

/* Inflate one gzip member. 1: ok (*rest = compressed bytes after it);
   0: corrupt or cut short; -1: more than ORACLE_MAX bytes. */
static int gunzip(uint8_t **out, size_t *outlen, size_t *rest, const uint8_t *in, size_t n) {
  z_stream zs;
  size_t cap = 1 << 16;
  int r;
  memset(&zs, 0, sizeof zs);
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) abort();
  *out = malloc(cap);
  if (!*out) abort();
  zs.next_in = (Bytef *)(uintptr_t)in;
  zs.avail_in = (uInt)n;
  for (;;) {
    if (zs.total_out == cap) {
      if (cap >= ORACLE_MAX) { inflateEnd(&zs); return -1; }
      cap *= 2;
      *out = realloc(*out, cap);
      if (!*out) abort();
    }
    zs.next_out = *out + zs.total_out;
    zs.avail_out = (uInt)(cap - zs.total_out);
    r = inflate(&zs, Z_NO_FLUSH);
    if (r == Z_STREAM_END) break;
    if (r != Z_OK || (zs.avail_in == 0 && zs.avail_out != 0)) { inflateEnd(&zs); return 0; }
  }
  *outlen = zs.total_out;
  *rest = zs.avail_in;
  inflateEnd(&zs);
  return 1;
}

static uint64_t be(const uint8_t *p, size_t n) {
  uint64_t v = 0;
  size_t i;
  for (i = 0; i < n; i++) v = v << 8 | p[i];
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lowp_idx_t t;
  char err[512];
  char *path;
  const uint8_t *raw = data;
  uint8_t *unz = NULL;
  size_t rawlen = size, rest = 0, esize, i;
  uint64_t count = 1;
  int st, oracle = 1, strict = 1, nd, d;

  path = fuzz_tmpfile(data, size);
  st = lowp_idx_read(&t, path, err, sizeof err);
  unlink(path);
  free(path);
  if (st != LOWP_OK) {
    FUZZ_CHECK(t.data == NULL && t.count == 0 && t.ndims == 0, "output not zeroed on failure");
    FUZZ_CHECK(err[0], "no message on failure");
  }

  /* the oracle */
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
    int g = gunzip(&unz, &rawlen, &rest, data, size);
    if (g < 0) { free(unz); lowp_idx_free(&t); return 0; } /* too big to compare */
    if (g == 0) oracle = 0;
    raw = unz;
    if (rest) strict = 0;
  }
  if (oracle) {
    if (rawlen < 4 || raw[0] || raw[1] || !lowp_idx_type_size(raw[2]) || raw[3] < 1 ||
        raw[3] > LOWP_IDX_MAXDIMS || rawlen < 4 + 4 * (size_t)raw[3]) {
      oracle = 0;
    } else {
      nd = raw[3];
      esize = lowp_idx_type_size(raw[2]);
      for (d = 0; d < nd; d++) count *= be(raw + 4 + 4 * d, 4); /* < 2^256: see below */
      for (d = 0; d < nd; d++)
        if (be(raw + 4 + 4 * d, 4) == 0) count = 0;
      /* product overflow: any dim > 0 and product > limit is refused anyway */
      {
        long double c = 1;
        for (d = 0; d < nd; d++) c *= (long double)be(raw + 4 + 4 * d, 4);
        /* c, not count: count wraps modulo 2^64 (dims of 2^16 x 4 give 0) */
        if (c != 0 && c * esize > (long double)LOWP_IDX_MAXBYTES) oracle = 0;
      }
      if (oracle && rawlen - 4 - 4 * (size_t)nd != count * esize) oracle = 0;
    }
  }

  if (strict)
    FUZZ_CHECK((st == LOWP_OK) == (oracle == 1), "lowp %s (%s), the oracle %s",
               st == LOWP_OK ? "accepts" : "rejects", st == LOWP_OK ? "" : err,
               oracle ? "accepts" : "rejects");
  if (st == LOWP_OK) {
    uint64_t prod = 1;
    FUZZ_CHECK(t.ndims >= 1 && t.ndims <= LOWP_IDX_MAXDIMS, "ndims %d", t.ndims);
    FUZZ_CHECK(t.elem_size == lowp_idx_type_size(t.type), "elem_size");
    for (d = 0; d < t.ndims; d++) prod *= t.dims[d];
    FUZZ_CHECK(prod == t.count, "count %zu != product of dims", t.count);
    FUZZ_CHECK((t.count == 0) == (t.data == NULL), "data pointer and count disagree");
    if (oracle && strict) {
      const uint8_t *body = raw + 4 + 4 * (size_t)t.ndims;
      FUZZ_CHECK((int)t.type == raw[2] && t.ndims == raw[3], "type or ndims");
      for (d = 0; d < t.ndims; d++)
        FUZZ_CHECK(t.dims[d] == be(raw + 4 + 4 * d, 4), "dims[%d]", d);
      for (i = 0; i < t.count; i++) {
        uint64_t want = be(body + i * t.elem_size, t.elem_size), got = 0;
        const uint8_t *p = (const uint8_t *)t.data + i * t.elem_size;
        switch (t.elem_size) {
          case 1: got = p[0]; break;
          case 2: { uint16_t v; memcpy(&v, p, 2); got = v; break; }
          case 4: { uint32_t v; memcpy(&v, p, 4); got = v; break; }
          default: { uint64_t v; memcpy(&v, p, 8); got = v; break; }
        }
        FUZZ_CHECK(got == want, "element %zu: %llx != %llx", i, (unsigned long long)got,
                   (unsigned long long)want);
      }
    }
  }
  free(unz);
  lowp_idx_free(&t);
  return 0;
}
