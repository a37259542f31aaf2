/* lowp_bsformat -- block-scaled formats (OCP MX, NVFP4, int8/int4 blocks) as data; packing */
#ifndef LOWP_BSFORMAT_H
#define LOWP_BSFORMAT_H

#include "format/format.h"

#include <stddef.h>
#include <stdint.h>

/**
 * @brief How a block's scale is chosen from its elements (lib/format/bsquant.c
 * states each rule exactly, with its source). Explicit values: stored in files.
 */
typedef enum {
  /** OCP MX v1.0 section 6.3: X = 2^(floor(log2 amax) - emax_elem); elements
      rounded to nearest even and clamped to +-xmax_elem */
  LOWP_BSR_FLOOR = 0,
  /** X = 2^(ceil(log2 amax) - emax_elem) (torchao ScaleCalculationMode.CEIL) */
  LOWP_BSR_CEIL = 1,
  /** amax first rounded to the element's significand width, ties away, then
      floor (torchao ScaleCalculationMode.EVEN) */
  LOWP_BSR_EVEN = 2,
  /** X = 2^ceil(log2 fl32(amax / xmax_elem)), saturated to the scale's range
      (cuBLAS "1D block quantization", FP8 with UE8M0 scales; PTX
      cvt.rp.satfinite.ue8m0x2.f32) */
  LOWP_BSR_RCEIL = 3,
  /** NVFP4's two-level rule in TransformerEngine's order of fp32 operations:
      per-tensor encode scale fl32(fl32(xmax_s * xmax_e) / amax_tensor),
      block decode scale RN_sat(fl32(amax_b * fl32(S_enc * fl32(1 / xmax_e)))) */
  LOWP_BSR_NVFP4 = 4,
  /** exact: d = RN_scale(amax / xmax_elem), q = RN_sat(x / d) against the
      stored d (one rounding each, from the exact quotients) */
  LOWP_BSR_ABSMAX = 5,
  /** ggml's q8_0 reference order: d = fl32(amax / qmax), id = fl32(1 / d),
      q = round-half-away(fl32(x * id)); the stored scale is RN_scale(d) */
  LOWP_BSR_GGML = 6
} lowp_bsrule_t;
#define LOWP_BSR_COUNT 7

/**
 * @brief A block-scaled format: element format, scale format, block size,
 * optional second-level per-tensor scale, packing. Value of element i of a
 * block with scale s (and tensor scale t, 1 if none): q_i * s * t.
 *
 * Integer elements (elem_int) are described by the format of the integers
 * 0..qmax (p = bits - 1, emin = emax = bits - 2: values m * 2^0), so the
 * same rounding code serves them; qmax = 2^(bits-1) - 1 (symmetric: -128 of
 * int8 is never produced). They pack as two's-complement integers.
 *
 * Packing (lowp_bs_pack): elements row by row, each row starting on a byte;
 * with dense (pack=dense) the codes of a row form one bit stream, code j in
 * bits [bits j, bits (j + 1)) counted from bit 0 of the row's first byte
 * (least significant first), the last byte's unused high bits 0. Otherwise
 * 4-bit elements two per byte, the even element in the low nibble (OCP MX
 * v1.0 section 5.2 does not fix it; PTX's e2m1x2 and NVIDIA ModelOpt store
 * the first element low); 6-bit elements one per byte in the low 6 bits
 * (torchao's "unpacked" fp6); 8-bit one per byte. Scales: one per block,
 * row-major [rows][ceil(cols / block)] (the "compact" layout; cuBLAS's
 * swizzled 128x4 tiles are not produced), in the scale format's width,
 * little-endian; an unsigned scale (ue4m3) has its sign bit written 0 and
 * ignored when read.
 */
typedef struct {
  const char *name;       /**< "mxfp8_e4m3", ...; user formats: "custom" */
  lowp_format_t elem;     /**< element format (integers: see above) */
  int elem_bits;          /**< bits of one packed element (4, 6, 8; 2..8 for integers) */
  int elem_int;           /**< 1: two's-complement integer elements */
  lowp_format_t scale;    /**< block scale format */
  int scale_unsigned;     /**< 1: the scale's sign bit is ignored (ue4m3) */
  int block;              /**< elements per block, >= 1 */
  int tensor_scale;       /**< 1: a second-level per-tensor fp32 scale */
  lowp_bsrule_t rule;     /**< the default scale rule */
  const char *alias;      /**< other accepted names, comma separated, or NULL */
  const char *doc;        /**< where the format comes from */
  int dense;              /**< 1: a row's codes as one LSB-first bit stream, ceil(bits cols / 8)
                               bytes (fp6: 4 values in 3 bytes, ONNX FLOAT6's packing); 0: the
                               default packing above. Spec key pack=dense|byte; a built-in
                               name takes ":dense" ("mxfp6_e2m3:dense", "mxfp6:rceil:dense") */
} lowp_bsformat_t;

/** @brief Number of built-in block-scaled formats. */
size_t lowp_bsformat_count(void);
/** @brief The i-th built-in block-scaled format, or NULL past the end. */
const lowp_bsformat_t *lowp_bsformat_at(size_t i);

/**
 * @brief Parse a block-scaled format: a built-in name or alias
 * (case-insensitive), or a spec "elem=E,scale=S,block=N[,tensor][,rule=R]"
 * where E is a built-in element format name or intN (2 <= N <= 8), S a
 * built-in format name or ue4m3 (e4m3 with its sign ignored), N 1..65536,
 * tensor adds the per-tensor fp32 scale and R a rule name (default floor
 * for a power-of-two scale format (precision 1), nvfp4 with tensor, else
 * absmax). A built-in name may carry ":RULE" to change its rule
 * ("mxfp8_e4m3:rceil").
 * @return LOWP_OK, or LOWP_EFORMAT with err saying what was wrong.
 */
int lowp_bsformat_parse(lowp_bsformat_t *out, const char *text, char *err, size_t errlen);

/** @brief Check a descriptor (elements <= 8 bits, a valid scale of <= 32
    bits, block >= 1, the rule applicable: nvfp4 needs the tensor scale).
    @return LOWP_OK or LOWP_EFORMAT with the reason in err. */
int lowp_bsformat_validate(const lowp_bsformat_t *bf, char *err, size_t errlen);

/** @brief Parse a rule name (floor, ceil, even, rceil, nvfp4, absmax,
    ggml); LOWP_OK or LOWP_EINVAL. */
int lowp_bsrule_parse(lowp_bsrule_t *rule, const char *text);
/** @brief The name of a rule ("floor", ...), or "?" */
const char *lowp_bsrule_name(lowp_bsrule_t rule);

/** @brief The spec string of bf ("elem=e4m3,scale=e8m0,block=32,rule=floor"). */
int lowp_bsformat_spec(char *buf, size_t len, const lowp_bsformat_t *bf);

/** @brief Largest element magnitude: xmax of the element format (qmax for integers). */
double lowp_bsformat_elem_max(const lowp_bsformat_t *bf);
/** @brief Bytes of one stored scale (1, 2 or 4). */
int lowp_bsformat_scale_bytes(const lowp_bsformat_t *bf);
/** @brief Bytes of one packed row of cols elements. */
/* (dense: ceil(elem_bits cols / 8)) */
size_t lowp_bsformat_row_bytes(const lowp_bsformat_t *bf, size_t cols);
/** @brief The most elements a packed row of nbytes bytes holds (the
    inverse of lowp_bsformat_row_bytes where it is one: fp4 2 nbytes, dense
    fp6 floor(8 nbytes / 6)). */
size_t lowp_bsformat_row_cols(const lowp_bsformat_t *bf, size_t nbytes);
/** @brief Code j of a packed row. */
uint64_t lowp_bs_code_get(const uint8_t *row, size_t j, const lowp_bsformat_t *bf);
/** @brief Blocks in a row of cols elements: ceil(cols / block). */
size_t lowp_bsformat_blocks(const lowp_bsformat_t *bf, size_t cols);
/** @brief Bits per element, the block scale's share included (OCP MX v1.0
    counts MXFP8 as 8.25): elem_bits + scale bits / block. The per-tensor
    scale (32 bits a tensor) and fp6's byte-per-element storage are not
    counted. */
double lowp_bsformat_bits_per_value(const lowp_bsformat_t *bf);

/**
 * @brief Encode element values q (rows x cols, values of bf's element
 * format; NaN allowed where the element format has NaN) and scale values s
 * (rows x blocks; NaN encodes as the scale format's NaN) into bytes.
 * @param[out] elems  rows * lowp_bsformat_row_bytes(bf, cols) bytes
 * @param[out] scales rows * blocks * lowp_bsformat_scale_bytes(bf) bytes
 * @return LOWP_OK, LOWP_ERANGE if a value is not one of its format's values,
 *         LOWP_EINVAL on NULL pointers.
 */
int lowp_bs_pack(uint8_t *elems, uint8_t *scales, const double *q, const double *s,
                 size_t rows, size_t cols, const lowp_bsformat_t *bf);

/**
 * @brief Decode packed bytes into element values q and scale values s (the
 * inverse of lowp_bs_pack; a scale NaN pattern decodes to NaN).
 * @return LOWP_OK, LOWP_ERANGE on a pattern the format does not use.
 */
int lowp_bs_unpack(double *q, double *s, const uint8_t *elems, const uint8_t *scales,
                   size_t rows, size_t cols, const lowp_bsformat_t *bf);

/** @brief LOWP_OK if v is a value of bf's element format (an integer in
    [-qmax, qmax] for integer elements; NaN where the format has NaN), else
    LOWP_ERANGE. */
int lowp_bs_elem_check(const lowp_bsformat_t *bf, double v);

/** @brief LOWP_OK if v is a value of bf's scale format (NaN where it has
    NaN; an unsigned scale (ue4m3) must not be negative), else LOWP_ERANGE. */
int lowp_bs_scale_check(const lowp_bsformat_t *bf, double v);

/**
 * @brief Where a tensor's block scales lie in memory.
 *
 * COMPACT: row-major [rows][nb] (nb = blocks a row).
 *
 * TILED128X4: the layout cuBLASLt ("1D Block Scaling Factors Layout",
 * cuBLAS 12.8+ documentation), cuDNN (cudnn-frontend blog "MXFP8 scale
 * factor 128x4 layout") and TransformerEngine (nvte_swizzle_scaling_factors:
 * "padded to 128x4 for row-scale") give sm_100 block-scaled GEMMs. The
 * [rows][nb] matrix is padded to R = 128 ceil(rows / 128) rows and
 * C = 4 ceil(nb / 4) columns and cut into 128 x 4 tiles of 512 slots,
 * stored one after another in row-major order of the tiles; inside a tile,
 * row r = 32 a + b (a = 0..3, b = 0..31) and column c = 0..3 lie at
 * slot 16 b + 4 a + c (the four 32-row strips interleaved, so the 16 slots
 * of one b are contiguous). Padding slots are written 0 and never read.
 * Several matrices (batches) are each laid out so, one after another.
 */
typedef enum { LOWP_BSL_COMPACT = 0, LOWP_BSL_TILED128X4 = 1 } lowp_bslayout_t;

/** @brief "compact" or "128x4" (also "tiled", "swizzled"); LOWP_OK or LOWP_EINVAL. */
int lowp_bslayout_parse(lowp_bslayout_t *l, const char *text);
/** @brief "compact" or "128x4". */
const char *lowp_bslayout_name(lowp_bslayout_t l);
/** @brief Scale slots of one rows x nb matrix in layout l (padding included). */
size_t lowp_bs_scale_slots(lowp_bslayout_t l, size_t rows, size_t nb);
/** @brief The slot of scale (r, j) of a rows x nb matrix in layout l. */
size_t lowp_bs_scale_slot(lowp_bslayout_t l, size_t rows, size_t nb, size_t r, size_t j);
/**
 * @brief Reorder scales between the compact layout and l, items of size
 * bytes each (a double, or a stored scale's 1, 2 or 4 bytes): to_layout = 1
 * moves compact src (rows x nb) into dst (lowp_bs_scale_slots slots,
 * padding zeroed); 0 moves dst = the compact matrix read from src in l.
 * @return LOWP_OK or LOWP_EINVAL (NULL pointers, size 0).
 */
int lowp_bs_scales_relayout(void *dst, const void *src, size_t size, size_t rows, size_t nb,
                            lowp_bslayout_t l, int to_layout);

#endif
