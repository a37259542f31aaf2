/* tensors_int -- shared by lib/check/tensors.c and tensors_bs.c (not installed) */
#ifndef LOWP_TENSORS_INT_H
#define LOWP_TENSORS_INT_H

#include <stddef.h>

#include "check/subject.h"
#include "format/bsformat.h"

/** @brief "path" or "path[tensor]" for messages. */
void lowp_tensor_label(char *out, size_t len, const char *path, const char *tensor);
/** @brief 1 if path starts like a .safetensors file (not a .npy one). */
int lowp_tensor_is_safetensors(const char *path);
/** @brief What a lowp_npy_read status means, in words. */
const char *lowp_tensor_npy_msg(int st);

/**
 * @brief Input r of a block-scaled format bf with companion scales
 * (r->scales_path): elements and scales read, checked and dequantized into
 * *x (malloc'd), in the operation's layout (gemm_b: the files hold B
 * transposed, (.., n, k); *x is (.., k, n)). shape/ndim/count: that layout.
 * @return LOWP_OK or an error status with err naming the file.
 */
int lowp_tensor_bs_load(double **x, size_t *shape, int *ndim, size_t *count, const lowp_tensor_ref_t *r,
                        const lowp_bsformat_t *bf, int gemm_b, char *err, size_t errlen);

#endif
