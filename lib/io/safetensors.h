/* lowp_safetensors -- strict reader and writer of .safetensors files */
#ifndef LOWP_SAFETENSORS_H
#define LOWP_SAFETENSORS_H

/*
 * The format (huggingface/safetensors, "Format" in its README): 8 bytes,
 * an unsigned little-endian 64-bit header length N; N bytes of UTF-8 JSON,
 * an object that begins with '{' and may be padded at the end with spaces;
 * then the byte buffer. Each key of the object is a tensor name, mapped to
 * {"dtype": D, "shape": [..], "data_offsets": [BEGIN, END]} with offsets
 * relative to the start of the byte buffer; the optional key
 * "__metadata__" maps strings to strings. Tensors are little-endian and
 * row-major. The buffer must be entirely indexed with no holes and no
 * overlaps (the format forbids them, so no file can be a polyglot), and
 * each tensor's bytes must equal its element count times its item size.
 * lowp reads the dtypes BF16 F16 F32 F64 F8_E4M3 F8_E5M2 F8_E8M0 (values),
 * I32 I64 (class indices) and U8 (bytes: block-scaled element codes, scale
 * codes); any other valid dtype is LOWP_EUNSUPPORTED.
 */

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

/** @brief Most dimensions of a tensor lowp reads. */
#define LOWP_ST_MAXDIM 8
/** @brief Largest header accepted (the reference implementation's limit: 100 MB). */
#define LOWP_ST_MAXHEADER 100000000ULL

/** @brief dtypes lowp reads. */
typedef enum {
  LOWP_ST_BF16 = 0, LOWP_ST_F16, LOWP_ST_F32, LOWP_ST_F64, LOWP_ST_F8_E4M3, LOWP_ST_F8_E5M2,
  LOWP_ST_I32, LOWP_ST_I64, LOWP_ST_U8, LOWP_ST_F8_E8M0
} lowp_st_dtype_t;

/** @brief One tensor of a file. */
typedef struct {
  char name[256];
  lowp_st_dtype_t dtype;
  int ndim;
  size_t shape[LOWP_ST_MAXDIM];
  size_t count;             /**< product of shape (1 for a scalar) */
  uint64_t begin, end;      /**< byte range in the file (absolute) */
} lowp_st_tensor_t;

/** @brief "BF16", "F16", ... */
const char *lowp_st_dtype_name(lowp_st_dtype_t t);
/** @brief Bytes per element. */
size_t lowp_st_itemsize(lowp_st_dtype_t t);
/** @brief The lowp format of a floating dtype (NULL for I32/I64/U8). */
const lowp_format_t *lowp_st_format(lowp_st_dtype_t t);

/**
 * @brief Parse and check the header of a file of file_size bytes whose
 * first len bytes are in buf (the whole header must be there: 8 + N bytes).
 * @param[out] t  malloc'd array of *n tensors in file order of their
 *                offsets (caller frees); NULL on failure
 * @param[out] err one line on failure
 * @return LOWP_OK; LOWP_EFILE (not a safetensors file, corrupt header,
 *         offsets that overlap, leave holes or leave the file, sizes that
 *         disagree with shapes, duplicate names, trailing bytes);
 *         LOWP_EUNSUPPORTED (a dtype lowp does not read, too many
 *         dimensions); LOWP_ENOMEM.
 */
int lowp_st_parse_header(lowp_st_tensor_t **t, size_t *n, const unsigned char *buf, size_t len,
                         uint64_t file_size, char *err, size_t errlen);

/**
 * @brief Read the tensor called name (NULL: the only tensor of the file)
 * into binary64 values (malloc'd; caller frees).
 * @param[in] max_count refuse larger tensors (LOWP_ENOMEM) before
 *            allocating; 0 = no limit
 * @return LOWP_OK; LOWP_EIO (cannot open or read); the codes of
 *         lowp_st_parse_header; LOWP_EINVAL (no tensor of that name, or
 *         several and no name); LOWP_ERANGE (an integer beyond 2^53, or a
 *         bit pattern that is not a value of its format); LOWP_ENOMEM.
 */
int lowp_st_read(const char *path, const char *name, lowp_st_tensor_t *info, double **data,
                 size_t max_count, char *err, size_t errlen);

/**
 * @brief Write n tensors to a file atomically (io/atomic.h): names[i],
 * dtypes[i], shapes[i] with ndims[i] dimensions, values data[i] (values of
 * the dtype's format, or integers for I32/I64). Header padded with spaces
 * to a multiple of 8 bytes; tensors in the order given.
 * @return LOWP_OK; LOWP_EINVAL (bad arguments, duplicate names);
 *         LOWP_ERANGE (a value not representable); LOWP_EIO; LOWP_ENOMEM.
 */
int lowp_st_write(const char *path, size_t n, const char *const *names,
                  const lowp_st_dtype_t *dtypes, const size_t *const *shapes, const int *ndims,
                  const double *const *data);

#endif
