/* lowp_cvt -- conversion of fp32 bit patterns by the GPU's cvt and by its CPU twin */
#ifndef LOWP_CVT_H
#define LOWP_CVT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Variants (one PTX instruction each; the CPU twin applies lib/format with
 * the format, mode and policy the table in kernels/cpu/cvt.c gives):
 *   1 fp16 cvt.rn.f16.f32      2 fp16 cvt.rz.f16.f32
 *   3 fp16 cvt.rm.f16.f32      4 fp16 cvt.rp.f16.f32
 *   5 bf16 cvt.rn.bf16.f32     6 bf16 cvt.rz.bf16.f32
 *   7 tf32 cvt.rna.tf32.f32 (result in fp32 layout, low 13 bits zero; not one
 *     instruction: the twin is the machine code, LOWP_CVT_SEQ_TF32_ADD_MASK)
 *   8 e4m3 cvt.rn.satfinite.e4m3x2.f32   9 e5m2 cvt.rn.satfinite.e5m2x2.f32
 * Outputs: uint16_t per element for 1-6, uint32_t for 7, uint8_t for 8-9.
 */
#define LOWP_CVT_VARIANTS 9

/** @brief Machine-code sequences a variant compiles to (tests/tsass.c
    decodes them from the cubins); 0: none lowp knows. */
#define LOWP_CVT_SEQ_TF32_ADD_MASK 1 /**< finite x: (x + 0x1000) & 0xffffe000;
                                          inf, NaN: x & 0xffffe000 */
/** @brief The sequence cvt.rna.tf32.f32 runs as on a device of compute
    capability sm (major*10 + minor; the cubin it runs is the newest lowp
    builds of the same major, not newer): LOWP_CVT_SEQ_*, 0 if unknown. */
int lowp_cvt_tf32_seq(int sm);

/** @brief Bytes per output element of a variant (0 for an unknown one). */
int lowp_cvt_out_bytes(int variant);
/** @brief Short name ("fp16.rn", ...) or NULL for an unknown variant. */
const char *lowp_cvt_name(int variant);

/**
 * @brief CPU twin: convert the fp32 values whose bit patterns are
 * start, start+1, ..., start+n-1 (n <= 2^32 - start).
 * @return LOWP_OK or LOWP_EINVAL (unknown variant, range past 2^32).
 */
int lowp_cvt_cpu(int variant, void *out, uint64_t start, size_t n);
/** @brief The twin of the machine code a device of compute capability sm
    runs (sm 0: the sequence every built architecture shares). @return as
    lowp_cvt_cpu; LOWP_EUNSUPPORTED for an architecture whose sequence lowp
    has not decoded (lowp_cvt_tf32_seq(sm) == 0) on variant 7. */
int lowp_cvt_cpu_sm(int variant, int sm, void *out, uint64_t start, size_t n);

/** @brief Number of usable CUDA devices (0 without a driver, a device, or a
    CUDA build). */
int lowp_cuda_device_count(void);

/**
 * @brief GPU: the same conversion with the hardware instruction. out is host
 * memory. @return LOWP_OK; LOWP_EINVAL for an unknown variant or range;
 * LOWP_EUNSUPPORTED without a CUDA build or device; LOWP_EIO on a CUDA error.
 */
int lowp_cvt_cuda(int variant, void *out, uint64_t start, size_t n);

#endif
