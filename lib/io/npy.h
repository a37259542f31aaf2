/* lowp_npy -- strict reader and writer of NumPy .npy files (v1.0 and v2.0) */
#ifndef LOWP_NPY_H
#define LOWP_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

/* ------------------------------------------------------------------ types */

/** @brief Most dimensions accepted. */
#define LOWP_NPY_MAXDIM 8

/** @brief Element types lowp reads and writes (little-endian only). */
typedef enum {
  LOWP_NPY_F2 = 0, /**< '<f2' IEEE binary16 */
  LOWP_NPY_F4 = 1, /**< '<f4' IEEE binary32 */
  LOWP_NPY_F8 = 2, /**< '<f8' IEEE binary64 */
  LOWP_NPY_U1 = 3, /**< '|u1' bytes: bit patterns of an 8-bit lowp format (fp8) */
  LOWP_NPY_U2 = 4, /**< '<u2' bit patterns of a 9- to 16-bit lowp format (bf16 saved by
                        PyTorch as uint16) */
  LOWP_NPY_I4 = 5, /**< '<i4' integers (class indices) */
  LOWP_NPY_I8 = 6  /**< '<i8' integers (class indices) */
} lowp_npy_dtype_t;

/** @brief What a header says. */
typedef struct {
  lowp_npy_dtype_t dtype;
  int ndim;                        /**< 0 (a scalar) .. LOWP_NPY_MAXDIM */
  size_t shape[LOWP_NPY_MAXDIM];
  size_t count;                    /**< product of shape (1 for ndim 0) */
  size_t data_offset;              /**< bytes before the data */
  int major;                       /**< 1 or 2 */
} lowp_npy_info_t;

/* ------------------------------------------------------------- public API */

/** @brief Bytes per element of a dtype. */
size_t lowp_npy_itemsize(lowp_npy_dtype_t t);
/** @brief "<f2", "<f4", "<f8", "|u1", "<u2", "<i4", "<i8". */
const char *lowp_npy_descr(lowp_npy_dtype_t t);

/** @brief The lowp format name of a float dtype ("fp16", "fp32", "fp64"), NULL for the others. */
const char *lowp_npy_float_format(lowp_npy_dtype_t t);

/**
 * @brief Read and check a file's header alone (lowp_npy_parse_header's checks), not its data.
 * @return LOWP_OK; LOWP_EIO (cannot open or read; not a regular file); lowp_npy_parse_header's codes.
 */
int lowp_npy_read_info(const char *path, lowp_npy_info_t *info);

/**
 * @brief Parse and check a header. buf holds the first len bytes of a file
 * of file_size bytes. Checked: the magic; version 1.0 or 2.0; the header
 * length fits in the file and the header ends in '\n'; the header is a
 * Python dict literal with exactly the keys 'descr', 'fortran_order' and
 * 'shape', each once; descr is one of the four dtypes; fortran_order is
 * False; shape is a tuple of at most LOWP_NPY_MAXDIM non-negative integers
 * whose product times the itemsize does not overflow and equals the bytes
 * left in the file exactly (truncated or padded data are errors).
 * @return LOWP_OK; LOWP_EFILE (not a .npy file, corrupt or truncated
 *         header, size mismatch); LOWP_EUNSUPPORTED (valid .npy lowp does
 *         not read: other dtypes, big-endian, fortran_order True, v3.0,
 *         too many dimensions); LOWP_EINVAL (NULL).
 */
int lowp_npy_parse_header(lowp_npy_info_t *info, const unsigned char *buf, size_t len,
                          uint64_t file_size);

/**
 * @brief Read a .npy file into binary64 values (malloc'd; caller frees).
 * f2/f4/f8 are converted exactly; u1 bytes are decoded as bit patterns of
 * u1_format (an 8-bit-wide lowp format such as e4m3), required for u1; u2
 * values as bit patterns of u1_format then (a 9- to 16-bit format such as
 * bf16), required for u2; i4/i8 integers as their values (|v| <= 2^53,
 * else LOWP_ERANGE).
 * @param[in] max_count refuse (LOWP_ENOMEM, before allocating) files with
 *            more elements than this; 0 = no limit beyond size_t
 * @return LOWP_OK; LOWP_EIO (cannot open or read); the codes of
 *         lowp_npy_parse_header; LOWP_EINVAL (u1/u2 without a format of
 *         their width, or a pattern that is not a value of it);
 *         LOWP_ERANGE (an integer beyond 2^53); LOWP_ENOMEM.
 */
int lowp_npy_read(const char *path, lowp_npy_info_t *info, double **data,
                  const lowp_format_t *u1_format, size_t max_count);

/**
 * @brief lowp_npy_read, except that |u1 and <u2 data are read as the
 * unsigned integers they hold (0..255, 0..65535: packed element codes and
 * scale codes of block-scaled tensors), needing no format.
 */
int lowp_npy_read_codes(const char *path, lowp_npy_info_t *info, double **data, size_t max_count);

/**
 * @brief Write values as a .npy file of dtype t and the given shape,
 * atomically (io/atomic.h). Values must be exactly representable in t
 * (binary16/32 values; for u1/u2, values of u1_format of that width; for
 * i4/i8, integers in their range); a version 1.0 header,
 * padded so the data start on a 64-byte boundary.
 * @return LOWP_OK; LOWP_EINVAL (bad arguments, ndim out of range);
 *         LOWP_ERANGE (a value not representable: nothing is written);
 *         LOWP_EIO; LOWP_ENOMEM.
 */
int lowp_npy_write(const char *path, lowp_npy_dtype_t t, const size_t *shape, int ndim,
                   const double *data, const lowp_format_t *u1_format);

#endif
