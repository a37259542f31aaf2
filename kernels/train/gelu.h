/* lowp_gelu_tanh_f32 -- the ViT's GELU (tanh form) over an fp32 array, vectorised, the same bits as the scalar form */
#ifndef LOWP_TRAIN_GELU_H
#define LOWP_TRAIN_GELU_H

#include "cpu.h"

#include <stddef.h>

/**
 * @brief y[i] = (float)(0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))) in binary64 with libm's tanh,
 * u = x[i] (Hendrycks and Gimpel 2016, arXiv:1606.08415): lowp_gelu_tanh_ref's bits for every input. The
 * AVX2 copy (its own vector tanh) and the AVX-512 copy (glibc's vector library) (lowp_cpu_isa) keep a
 * lane's result only where it provably rounds to the same float (gelu.c); the others are computed as the
 * reference does.
 * y may be x.
 */
void lowp_gelu_tanh_f32(float *y, const float *x, size_t n);

/** @brief lowp_gelu_tanh_f32 through the copy for isa (at most what this CPU runs; the baseline where
    glibc's libmvec is missing): the same bits from every copy. */
void lowp_gelu_tanh_f32_isa(float *y, const float *x, size_t n, lowp_isa_t isa);

/** @brief The scalar definition of lowp_gelu_tanh_f32 (libm tanh), one value. */
float lowp_gelu_tanh_ref(float u);

#endif
