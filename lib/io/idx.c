/* lowp_idx_read -- read an IDX file (plain or gzip), checking every header field */

/*
 * zlib's gzread reads a gzip stream and, in "transparent" mode, a file that
 * is not gzip as it is, so one code path serves both. Strictness comes from
 * three checks beyond the header: the data must be exactly as long as the
 * dimensions say (short = truncated, longer = trailing bytes), and a gzip
 * stream must end cleanly (zlib verifies the CRC-32 and length trailer when
 * it reaches the end, and reports a stream cut short as Z_BUF_ERROR).
 */

#define _POSIX_C_SOURCE 200809L /* fileno, fstat */

#include "io/idx.h"
#include "status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include "io/atomic.h"
#include "io/escape.h"

/* deflate's largest expansion, output bytes per input byte (see below) */
#define LOWP_IDX_MAX_RATIO 1032u

/* ------------------------------------------------------ private helpers */

static int fail(lowp_idx_t *out, int status, char *err, size_t errlen,
                const char *fmt, ...) {
  va_list ap;
  lowp_idx_free(out);
  if (err && errlen) {
    va_start(ap, fmt);
    lowp_verrf(err, errlen, 0, fmt, ap);
    va_end(ap);
  }
  return status;
}

/* Read exactly n bytes; returns the number read (short at end of data), or
   -1 on an error (errnum from gzerror in *zerr). */
static long long read_full(gzFile gz, unsigned char *buf, uint64_t n, int *zerr) {
  uint64_t got = 0;
  *zerr = Z_OK;
  while (got < n) {
    uint64_t want = n - got;
    int r;
    if (want > ((uint64_t)1 << 30)) want = (uint64_t)1 << 30;
    r = gzread(gz, buf + got, (unsigned)want);
    if (r < 0) {
      (void)gzerror(gz, zerr);
      return -1;
    }
    if (r == 0) break;
    got += (uint64_t)r;
  }
  if (got < n) (void)gzerror(gz, zerr); /* Z_BUF_ERROR: gzip stream cut short */
  return (long long)got;
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Big-endian elements to host order, in place. */
static void to_host(unsigned char *d, size_t count, size_t size) {
  size_t i;
  for (i = 0; i < count; i++) {
    unsigned char *p = d + i * size;
    if (size == 2) {
      uint16_t v = (uint16_t)(p[0] << 8 | p[1]);
      memcpy(p, &v, 2);
    } else if (size == 4) {
      uint32_t v = be32(p);
      memcpy(p, &v, 4);
    } else if (size == 8) {
      uint64_t v = (uint64_t)be32(p) << 32 | be32(p + 4);
      memcpy(p, &v, 8);
    }
  }
}

/* ----------------------------------------------------------- public API */

size_t lowp_idx_type_size(int type) {
  switch (type) {
    case LOWP_IDX_U8: case LOWP_IDX_I8: return 1;
    case LOWP_IDX_I16: return 2;
    case LOWP_IDX_I32: case LOWP_IDX_F32: return 4;
    case LOWP_IDX_F64: return 8;
    default: return 0;
  }
}

void lowp_idx_free(lowp_idx_t *t) {
  if (!t) return;
  free(t->data);
  memset(t, 0, sizeof *t);
}

int lowp_idx_read(lowp_idx_t *out, const char *path, char *err, size_t errlen) {
  unsigned char hdr[4], dimb[4 * LOWP_IDX_MAXDIMS], extra;
  FILE *probe;
  gzFile gz;
  uint64_t count = 1, bytes;
  long long got;
  uint64_t file_size = 0;
  int zerr, d, st, gzipped = 0;
  const char *what;

  memset(out, 0, sizeof *out);
  if (err && errlen) err[0] = '\0';
  /* opened first: its errno names a missing or unreadable file precisely; a FIFO, device or folder is
     refused without blocking (io/atomic.h) */
  probe = lowp_fopen_regular(path);
  if (!probe && (errno == EINVAL || errno == EISDIR))
    return fail(out, LOWP_EFILE, err, errlen, "%s: not a regular file", path);
  if (!probe) return fail(out, LOWP_EIO, err, errlen, "%s: %s", path, strerror(errno));
  /* the file's size bounds what its header may claim (checked before any
     allocation: an 8-byte file once made lowp allocate 4 GiB) */
  {
    struct stat sb;
    unsigned char m[2] = {0, 0};
    if (fstat(fileno(probe), &sb) != 0) {
      fclose(probe);
      return fail(out, LOWP_EIO, err, errlen, "%s: %s", path, strerror(errno));
    }
    file_size = (uint64_t)sb.st_size;
    gzipped = fread(m, 1, 2, probe) == 2 && m[0] == 0x1f && m[1] == 0x8b;
  }
  fclose(probe);
  gz = gzopen(path, "rb");
  if (!gz) return fail(out, LOWP_EIO, err, errlen, "%s: cannot open", path);
  (void)gzbuffer(gz, 1u << 17);

  got = read_full(gz, hdr, 4, &zerr);
  if (got != 4) { st = LOWP_EFILE; what = "shorter than the 4-byte IDX header"; goto bad; }
  if (hdr[0] != 0 || hdr[1] != 0) {
    st = LOWP_EFILE; what = "bad magic (the first two bytes must be zero)"; goto bad;
  }
  out->elem_size = lowp_idx_type_size(hdr[2]);
  if (!out->elem_size) {
    gzclose(gz);
    return fail(out, LOWP_EFILE, err, errlen, "%s: unknown IDX element type 0x%02X", path, hdr[2]);
  }
  out->type = (lowp_idx_type_t)hdr[2];
  out->ndims = hdr[3];
  if (out->ndims < 1 || out->ndims > LOWP_IDX_MAXDIMS) {
    int nd = out->ndims;
    gzclose(gz);
    return fail(out, LOWP_EFILE, err, errlen, "%s: %d dimensions (lowp reads 1 to %d)", path,
                nd, LOWP_IDX_MAXDIMS);
  }
  got = read_full(gz, dimb, 4 * (uint64_t)out->ndims, &zerr);
  if (got != 4 * out->ndims) { st = LOWP_EFILE; what = "truncated in the dimension sizes"; goto bad; }
  for (d = 0; d < out->ndims; d++) out->dims[d] = be32(dimb + 4 * d);
  for (d = 0; d < out->ndims; d++)
    if (out->dims[d] == 0) count = 0;
  if (count)
    for (d = 0; d < out->ndims; d++) {
      count *= out->dims[d]; /* no overflow: count <= MAXBYTES < 2^33 before */
      if (count > LOWP_IDX_MAXBYTES / out->elem_size) {
        gzclose(gz);
        return fail(out, LOWP_ENOMEM, err, errlen,
                    "%s: dimensions give more than %llu bytes of data", path,
                    (unsigned long long)LOWP_IDX_MAXBYTES);
      }
    }
  bytes = count * out->elem_size;
  /* plain: the file is exactly header + data; gzip: deflate expands at most
     1032:1 (RFC 1951: a 258-byte match per 2 bits at best; zlib's zlib.h
     "technical details" give the same bound), so a claim beyond that is a
     lie whatever the stream holds */
  {
    uint64_t need = 4 + 4 * (uint64_t)out->ndims + bytes;
    if (gzipped ? need / LOWP_IDX_MAX_RATIO > file_size : need != file_size) {
      gzclose(gz);
      return fail(out, LOWP_EFILE, err, errlen,
                  "%s: %s: the header claims %llu data bytes, which a %s file of %llu bytes "
                  "cannot hold", path, need > file_size ? "truncated" : "trailing bytes after the data",
                  (unsigned long long)bytes, gzipped ? "gzip" : "plain",
                  (unsigned long long)file_size);
    }
  }
  if ((uint64_t)(size_t)bytes != bytes) {
    gzclose(gz);
    return fail(out, LOWP_ENOMEM, err, errlen, "%s: too large for this machine", path);
  }
  out->count = (size_t)count;
  if (bytes) {
    out->data = malloc((size_t)bytes);
    if (!out->data) {
      gzclose(gz);
      return fail(out, LOWP_ENOMEM, err, errlen, "%s: cannot allocate %llu bytes", path,
                  (unsigned long long)bytes);
    }
    got = read_full(gz, out->data, bytes, &zerr);
    if (got < 0 || (uint64_t)got != bytes) {
      if (got >= 0 && zerr == Z_OK) {
        gzclose(gz);
        return fail(out, LOWP_EFILE, err, errlen,
                    "%s: truncated: %lld of %llu data bytes", path, got,
                    (unsigned long long)bytes);
      }
      st = LOWP_EFILE; what = "truncated data"; goto bad;
    }
  }
  /* nothing may follow the data, and a gzip stream must end cleanly */
  got = read_full(gz, &extra, 1, &zerr);
  if (got < 0 || zerr != Z_OK) { st = LOWP_EFILE; what = "at the end of the data"; goto bad; }
  if (got != 0) { st = LOWP_EFILE; what = "trailing bytes after the data"; goto bad; }
  if (gzclose(gz) != Z_OK)
    return fail(out, LOWP_EFILE, err, errlen, "%s: corrupt gzip stream", path);
  to_host(out->data, out->count, out->elem_size);
  return LOWP_OK;

bad:
  /* a zlib error outranks what the short read looked like: a damaged or
     cut-short gzip stream is reported as such */
  if (zerr == Z_ERRNO) {
    int e = errno;
    gzclose(gz);
    return fail(out, LOWP_EIO, err, errlen, "%s: read error: %s", path, strerror(e));
  }
  if (zerr == Z_BUF_ERROR) {
    gzclose(gz);
    return fail(out, LOWP_EFILE, err, errlen, "%s: gzip stream cut short (%s)", path, what);
  }
  if (zerr != Z_OK) {
    gzclose(gz);
    return fail(out, LOWP_EFILE, err, errlen, "%s: corrupt gzip stream (%s)", path, what);
  }
  gzclose(gz);
  return fail(out, st, err, errlen, "%s: %s", path, what);
}
