/* fuzz_npy_read -- libFuzzer harness of lowp_npy_read (and lowp_npy_write) */

/*
 * Input: the bytes of a .npy file (written to a temporary file). The u1
 * format is e4m3, e5m2 or e8m0 by the file size modulo 3. Properties:
 *   - lowp_npy_read accepts exactly the files whose header
 *     lowp_npy_parse_header accepts (for '|u1', also every byte must be a
 *     pattern of the u1 format), and reports the same header;
 *   - every value equals an independent decoding of the raw bytes: binary64
 *     and binary32 by memcpy, binary16 from its fields with ldexp, bytes
 *     through lowp_decode (NaN compared as NaN);
 *   - written back with lowp_npy_write (same dtype and shape) and read
 *     again, the values are the same, bit for bit (NaN as NaN).
 */

#include "fuzz.h"

#include "format/format.h"
#include "io/npy.h"
#include "status.h"

#include <math.h>

static double half_to_double(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 0x1f) v = m ? NAN : INFINITY;
  else if (e == 0) v = ldexp((double)m, -24);
  else v = ldexp((double)(m | 0x400), e - 25);
  return s ? -v : v;
}

static int same_value(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return fuzz_same_bits(a, b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const lowp_format_t *const u1[3] = {&LOWP_FMT_E4M3, &LOWP_FMT_E5M2, &LOWP_FMT_E8M0};
  static const lowp_format_t *const u2[2] = {&LOWP_FMT_BF16, &LOWP_FMT_FP16};
  const lowp_format_t *u1f = u1[size % 3];
  lowp_npy_info_t info, hinfo, info2;
  double *v = NULL, *v2 = NULL;
  char *path, *path2;
  int st, hst, i;
  size_t k, item;
  path = fuzz_tmpfile(data, size);
  memset(&hinfo, 0, sizeof hinfo);
  hst = lowp_npy_parse_header(&hinfo, data, size, size);
  /* raw 16-bit patterns need a 16-bit format: pick one for <u2 files */
  if (hst == LOWP_OK && hinfo.dtype == LOWP_NPY_U2) u1f = u2[size % 2];
  st = lowp_npy_read(path, &info, &v, u1f, 0);
  unlink(path);
  free(path);
  if (hst != LOWP_OK) {
    FUZZ_CHECK(st != LOWP_OK, "read accepted a file whose header is rejected (%s)",
               lowp_status_str(hst));
    return 0;
  }
  if (st != LOWP_OK) {
    FUZZ_CHECK(((hinfo.dtype == LOWP_NPY_U1 || hinfo.dtype == LOWP_NPY_U2) && st == LOWP_EINVAL) ||
                   ((hinfo.dtype == LOWP_NPY_I4 || hinfo.dtype == LOWP_NPY_I8) && st == LOWP_ERANGE),
               "header accepted but read failed: %s", lowp_status_str(st));
    return 0;
  }
  FUZZ_CHECK(info.dtype == hinfo.dtype && info.ndim == hinfo.ndim &&
                 info.count == hinfo.count && info.data_offset == hinfo.data_offset,
             "read and parse_header disagree on the header");
  item = lowp_npy_itemsize(info.dtype);
  for (k = 0; k < info.count; k++) {
    const uint8_t *p = data + info.data_offset + k * item;
    double want;
    if (info.dtype == LOWP_NPY_F8) {
      memcpy(&want, p, 8);
    } else if (info.dtype == LOWP_NPY_F4) {
      float f;
      memcpy(&f, p, 4);
      want = f;
    } else if (info.dtype == LOWP_NPY_F2) {
      want = half_to_double((uint16_t)(p[0] | p[1] << 8));
    } else if (info.dtype == LOWP_NPY_U2) {
      FUZZ_CHECK(lowp_decode(&want, (uint16_t)(p[0] | p[1] << 8), u1f) == LOWP_OK, "pattern");
    } else if (info.dtype == LOWP_NPY_I4) {
      int32_t w;
      memcpy(&w, p, 4); /* little-endian host */
      want = w;
    } else if (info.dtype == LOWP_NPY_I8) {
      int64_t w;
      memcpy(&w, p, 8);
      FUZZ_CHECK(w >= -(INT64_C(1) << 53) && w <= (INT64_C(1) << 53), "i8 %lld accepted", (long long)w);
      want = (double)w;
    } else {
      FUZZ_CHECK(lowp_decode(&want, p[0], u1f) == LOWP_OK, "byte 0x%02x", p[0]);
    }
    FUZZ_CHECK(same_value(v[k], want), "element %zu: read %a, bytes say %a", k, v[k], want);
  }

  /* write back, read again */
  path2 = fuzz_tmpfile("", 0);
  st = lowp_npy_write(path2, info.dtype, info.shape, info.ndim, v, u1f);
  FUZZ_CHECK(st == LOWP_OK, "writing back what was read: %s", lowp_status_str(st));
  st = lowp_npy_read(path2, &info2, &v2, u1f, 0);
  FUZZ_CHECK(st == LOWP_OK, "reading back what was written: %s", lowp_status_str(st));
  FUZZ_CHECK(info2.dtype == info.dtype && info2.ndim == info.ndim && info2.count == info.count,
             "written header differs");
  for (i = 0; i < info.ndim; i++) FUZZ_CHECK(info2.shape[i] == info.shape[i], "shape");
  for (k = 0; k < info.count; k++)
    FUZZ_CHECK(same_value(v2[k], v[k]), "element %zu: %a written, %a read", k, v[k], v2[k]);
  unlink(path2);
  free(path2);
  free(v);
  free(v2);
  return 0;
}
