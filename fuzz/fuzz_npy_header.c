/* fuzz_npy_header -- libFuzzer harness of lowp_npy_parse_header */

/*
 * Input: the whole of a would-be .npy file. Properties of an accepted header:
 *   - it is consistent: 1 <= major <= 2 and the magic bytes say so, ndim in
 *     0..LOWP_NPY_MAXDIM, count = product of shape, and data_offset +
 *     count * itemsize = the file's size exactly;
 *   - re-serialised (lowp_npy_write of zeros with that dtype and shape) it
 *     parses back to the same dtype, ndim, shape and count;
 *   - parsing only a prefix of the bytes that ends before data_offset fails.
 */

#include "fuzz.h"

#include "format/format.h"
#include "io/npy.h"
#include "status.h"

#include <sys/stat.h>

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  struct stat st;
  unsigned char *buf;
  if (!fp || stat(path, &st) != 0) abort();
  buf = malloc((size_t)st.st_size + 1);
  if (!buf || fread(buf, 1, (size_t)st.st_size, fp) != (size_t)st.st_size) abort();
  fclose(fp);
  *len = (size_t)st.st_size;
  return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lowp_npy_info_t info, back;
  size_t prod = 1, item, len, i;
  double *zeros;
  char *path;
  unsigned char *buf;
  int st;
  memset(&info, 0, sizeof info);
  if (lowp_npy_parse_header(&info, data, size, size) != LOWP_OK) return 0;

  FUZZ_CHECK(info.major == 1 || info.major == 2, "major %d", info.major);
  FUZZ_CHECK(size >= 8 && data[6] == info.major && data[7] == 0, "version bytes");
  FUZZ_CHECK(info.ndim >= 0 && info.ndim <= LOWP_NPY_MAXDIM, "ndim %d", info.ndim);
  for (i = 0; i < (size_t)info.ndim; i++) prod *= info.shape[i];
  FUZZ_CHECK(prod == info.count, "count %zu, product of shape %zu", info.count, prod);
  item = lowp_npy_itemsize(info.dtype);
  FUZZ_CHECK(item == 1 || item == 2 || item == 4 || item == 8, "itemsize %zu", item);
  FUZZ_CHECK(info.data_offset <= size && (size - info.data_offset) / item == info.count &&
                 (size - info.data_offset) % item == 0,
             "data_offset %zu + %zu * %zu != file size %zu", info.data_offset, info.count,
             item, size);
  FUZZ_CHECK(data[info.data_offset - 1] == '\n', "header does not end in newline");
  /* a file cut before the data cannot be accepted as the same file */
  FUZZ_CHECK(lowp_npy_parse_header(&back, data, info.data_offset - 1, size) != LOWP_OK,
             "accepted a header cut one byte short");

  /* re-serialise: lowp's own writer, then lowp's own reader */
  zeros = calloc(info.count ? info.count : 1, sizeof *zeros);
  if (!zeros) abort();
  path = fuzz_tmpfile("", 0);
  st = lowp_npy_write(path, info.dtype, info.shape, info.ndim, zeros,
                      info.dtype == LOWP_NPY_U2 ? &LOWP_FMT_BF16 : &LOWP_FMT_E4M3);
  FUZZ_CHECK(st == LOWP_OK, "lowp_npy_write of an accepted header's shape: %s",
             lowp_status_str(st));
  buf = slurp(path, &len);
  memset(&back, 0, sizeof back);
  st = lowp_npy_parse_header(&back, buf, len, len);
  FUZZ_CHECK(st == LOWP_OK, "re-serialised header rejected: %s", lowp_status_str(st));
  FUZZ_CHECK(back.dtype == info.dtype && back.ndim == info.ndim && back.count == info.count,
             "re-parsed header differs (dtype %d/%d, ndim %d/%d, count %zu/%zu)",
             (int)back.dtype, (int)info.dtype, back.ndim, info.ndim, back.count, info.count);
  for (i = 0; i < (size_t)info.ndim; i++)
    FUZZ_CHECK(back.shape[i] == info.shape[i], "shape[%zu] %zu != %zu", i, back.shape[i],
               info.shape[i]);
  FUZZ_CHECK(back.data_offset % 64 == 0, "written data offset %zu not 64-aligned",
             back.data_offset);
  unlink(path);
  free(path);
  free(buf);
  free(zeros);
  return 0;
}
