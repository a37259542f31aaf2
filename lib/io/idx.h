/* lowp_idx -- a strict reader of the IDX format (MNIST, Fashion-MNIST), plain or gzip */
#ifndef LOWP_IDX_H
#define LOWP_IDX_H

#include <stddef.h>
#include <stdint.h>

/*
 * The IDX format (LeCun, Cortes, Burges, "THE MNIST DATABASE of handwritten
 * digits", http://yann.lecun.com/exdb/mnist/, section "FILE FORMATS"):
 *   bytes 0-1  zero
 *   byte  2    element type: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
 *              0x0D float32, 0x0E float64
 *   byte  3    number of dimensions (1..255)
 *   then one 32-bit big-endian size per dimension, then the elements,
 *   big-endian, in row-major order, and nothing after them.
 * A gzip-compressed file (as Debian's dataset-fashion-mnist ships them) is
 * recognised by its magic bytes and decompressed with zlib; the gzip CRC and
 * length trailer are checked, so a corrupt or truncated archive is an error.
 */

/** @brief IDX element types (the values are the type byte of the header). */
typedef enum {
  LOWP_IDX_U8 = 0x08,
  LOWP_IDX_I8 = 0x09,
  LOWP_IDX_I16 = 0x0B,
  LOWP_IDX_I32 = 0x0C,
  LOWP_IDX_F32 = 0x0D,
  LOWP_IDX_F64 = 0x0E
} lowp_idx_type_t;

/** @brief Most dimensions lowp accepts (the format allows 255). */
#define LOWP_IDX_MAXDIMS 8

/** @brief Most bytes of element data lowp reads from one file (4 GiB). */
#define LOWP_IDX_MAXBYTES ((uint64_t)1 << 32)

/** @brief A tensor read from an IDX file; data in host byte order. */
typedef struct {
  lowp_idx_type_t type;
  int ndims;
  uint32_t dims[LOWP_IDX_MAXDIMS];
  size_t count;     /**< product of dims */
  size_t elem_size; /**< bytes per element: 1, 2, 4 or 8 */
  void *data;       /**< count * elem_size bytes (malloc'd; NULL if count is 0) */
} lowp_idx_t;

/**
 * @brief Read an IDX file (plain or gzip-compressed), checking every field.
 * @param[out] out   filled on success; zeroed on failure (nothing to free)
 * @param[in]  path  the file
 * @param[out] err   if non-NULL, on failure a one-line reason (<= errlen chars)
 * @return LOWP_OK; LOWP_EIO if the file cannot be opened or read;
 *         LOWP_EFILE if it is not a well-formed IDX file: not a regular
 *         file, bad magic, unknown type, zero or too many dimensions, a
 *         header that claims more data than the file's size can hold
 *         (checked before anything is allocated: plain files must be exactly
 *         header + data, gzip files at most 1032 times their size, deflate's
 *         limit), truncated, trailing bytes, or a corrupt gzip stream;
 *         LOWP_ENOMEM if the data exceeds
 *         LOWP_IDX_MAXBYTES or cannot be allocated.
 */
int lowp_idx_read(lowp_idx_t *out, const char *path, char *err, size_t errlen);

/** @brief Free what lowp_idx_read allocated; safe on a zeroed struct. */
void lowp_idx_free(lowp_idx_t *t);

/** @brief Bytes per element of an IDX type, or 0 if the byte is no IDX type. */
size_t lowp_idx_type_size(int type);

#endif
