/* lowp_tc -- the block-FMA model of tensor-core arithmetic, its presets, chained dots */
#ifndef LOWP_TC_H
#define LOWP_TC_H

/*
 * One parameterised model of how NVIDIA tensor cores add (a model is a set of
 * parameters, not one code path per GPU):
 *
 *   Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor
 *   cores", PeerJ Computer Science 7:e330 (2021): products exact; the terms
 *   of a block are aligned to the largest exponent and truncated, with no
 *   sticky bit; one normalisation per block; fp32 output truncated (RZ),
 *   fp16 output rounded to nearest.
 *   Khattak & Mikaitis, "Generalized methodology for determining numerical
 *   features of hardware floating-point matrix multipliers: Part I", IEEE
 *   HPEC 2025, and "Accurate models of NVIDIA tensor cores" (2025): the block
 *   sizes, extra alignment bits and the fp8 13-bit accumulator of Ada and
 *   Hopper, for V100 to B200.
 *   DeepSeek-AI, "DeepSeek-V3 technical report", arXiv:2412.19437, 3.3.2:
 *   Hopper fp8 GEMMs keep about 14 significant bits in the tensor-core
 *   accumulator; promoting the partial sum to fp32 CUDA-core registers every
 *   N_C = 128 products fixes it.
 *
 * The block FMA, exactly (integer arithmetic, no floating-point shortcut):
 *
 *   for each nonzero product p_i = a_i b_i (exact: <= 64-bit significand)
 *     x_i = ea_i + eb_i, with ea = max(floor(log2|a|), emin of the input
 *     format) (so the product's significand is in [0,4) at 2^x_i);
 *   x_c = max(floor(log2|c|), emin of the output format) for c != 0;
 *         for c = 0, emin of the output (c0align=emin) or nothing (skip);
 *   X   = max(x_i, x_c)                       the alignment exponent
 *   every term is cut at 2^(X - F): truncated (align = rtz, the hardware),
 *     or rounded (align = rne), optionally with a sticky bit below;
 *   S   = the exact signed integer sum of the cut terms (one normalisation);
 *   d   = S * 2^(X-F) rounded once to the output: to fp32 with out_rnd
 *         (keeping only out_frac fraction bits when out_frac > 0: the fp8
 *         accumulator of Ada/Hopper), or to fp16 with out16_rnd.
 *
 * A dot product of length k chains ceil(k/b) blocks: the output of one block
 * is the c of the next. Two variants seen on Hopper/Blackwell fp8 mma.sync
 * (tests/data/tensor-core-vectors): interleave (one instruction of 2b
 * products is two blocks, the products paired 0,1,4,5,... then 2,3,6,7,...)
 * and late_c (the blocks of an instruction start from zero; c is added
 * after them by one rounded addition). With promote = N_C > 0, the chain
 * restarts from zero every N_C products and each partial result is added to
 * an fp32 total with one IEEE fp32 addition (round to nearest even), as
 * DeepSeek-V3 does.
 *
 * What the captured vectors pin down (1000 rows per file, one instruction
 * per row): F exactly, for every fp32 output; b only from below (a row
 * never spans two instructions, except Ada fp8 where b = 16 < K = 32);
 * chaining and promotion follow the published descriptions, not data.
 *
 * Zeros (docs/gpu.md, "The four zero questions"): an exact cancellation
 * gives +0; a block of zero addends gives -0 only if every addend is -0
 * (zsum=ieee) or always +0 (zsum=pos); a nonzero sum rounded to zero keeps
 * its sign (zrnd=ieee) or gives +0 (zrnd=pos). `lowp probe` on an NVIDIA
 * H200 found pos, pos and c0align=emin (the h100 / h200 presets).
 *
 * NaN and infinity (Khattak & Mikaitis's exceptional-case rules): any NaN
 * input, or inf * 0, or +inf and -inf together gives NaN; otherwise an
 * infinite product or c gives that infinity. A finite sum beyond the output
 * range gives infinity (the exponent field saturates), also under RZ.
 */

#include <stddef.h>

#include "format/format.h"

/* ------------------------------------------------------------------ types */

/** @brief Parameters of one block FMA (one input format on one GPU). */
typedef struct {
  int b;                     /**< products per block (the FMA size), 1..1024 */
  int F;                     /**< fraction bits kept below 2^X in alignment
                                  (F + 2 + log2(b+1) <= 62) */
  lowp_rounding_t align;     /**< cut of the aligned terms: LOWP_RND_TZ (truncate),
                                  LOWP_RND_NE, LOWP_RND_TO; others are rejected */
  int sticky;                /**< 1: keep one sticky bit below the F bits */
  lowp_rounding_t out_rnd;   /**< rounding of the block sum to an fp32 output */
  lowp_rounding_t out16_rnd; /**< rounding to an fp16 (or other narrower) output */
  int out_frac;              /**< >0: an fp32 output keeps only this many fraction
                                  bits (cut by out_rnd): the fp8 accumulator of
                                  Ada and Hopper. A narrower output is rounded
                                  from the block sum directly */
  int ovf_inf;               /**< 1: overflow gives infinity whatever the mode */
  int late_c;                /**< 1: each instruction (b products, 2b with
                                  interleave) sums its products from zero; c is
                                  added after them by one rounded addition in
                                  the output format (fp8 mma.sync on Hopper and
                                  Blackwell) */
  int interleave;            /**< 0: blocks take consecutive products. P > 0:
                                  each run of 2b products is split into two
                                  blocks, the first taking indices i with
                                  (i / P) even, the second the rest */
  lowp_rounding_t c_rnd;     /**< late_c only: rounding of the addition of c
                                  to the instruction's blocks (either output
                                  width); the blocks themselves round with
                                  out_rnd / out16_rnd. B200 fp8: blocks rtz,
                                  this addition rne */
  int zsum_pos;              /**< an exact zero sum of zero addends (every product
                                  zero, c = 0): 0 (zsum=ieee) -0 only if every
                                  addend is -0 (IEEE 754 6.3); 1 (zsum=pos) +0 */
  int zrnd_pos;              /**< a nonzero sum rounded to zero: 0 (zrnd=ieee)
                                  keeps the sum's sign; 1 (zrnd=pos) +0 */
  int c0_emin;               /**< c = 0 in the alignment: 0 (c0align=skip) takes no
                                  part, X is the largest product's; 1
                                  (c0align=emin) counts as the exponent emin of
                                  the output, as a nonzero c below 2^emin does */
} lowp_bfma_t;

/** @brief A tensor-core GEMM model for one input format. */
typedef struct {
  char name[64];     /**< preset name, "custom", or preset + overrides */
  lowp_bfma_t bfma;  /**< the block FMA */
  size_t promote;    /**< N_C: promote to an fp32 total every N_C products; 0 = never */
} lowp_tc_model_t;

/** @brief A named preset: the block FMA per class of input format. */
typedef struct {
  const char *name;      /**< "v100", "a100", ... */
  const char *doc;       /**< one line: GPU and evidence */
  lowp_bfma_t fp16, bf16, tf32, fp8; /**< b == 0: input not supported */
  lowp_bfma_t fp8_h;     /**< fp8 inputs with fp16 output, where it is another
                              datapath; b == 0: same as fp8 */
} lowp_tc_preset_t;

/* -------------------------------------------------------------- public API */

/** @brief Number of presets; the i-th; by name (case-insensitive) or NULL. */
size_t lowp_tc_preset_count(void);
const lowp_tc_preset_t *lowp_tc_preset_at(size_t i);
const lowp_tc_preset_t *lowp_tc_preset_find(const char *name);

/**
 * @brief Resolve a model for an input format.
 *
 * spec is a preset name ("h100"), a preset with overrides
 * ("h100,promote=128", "a100,F=30"), or parameters alone
 * ("b=16,F=25,align=rtz,out=rtz"). Keys: b, F, align (rtz|rne|rto),
 * sticky (0|1), out (rounding to fp32 output), out16 (to fp16 output),
 * outfrac (0 = none), ovf (inf|ieee), latec (0|1), interleave (P, 0 = off),
 * crnd (rounding of the late c addition), zsum (ieee|pos), zrnd (ieee|pos),
 * c0align (skip|emin), promote (N_C, 0 = off).
 * Parameters alone start from b=16, F=25, align=rtz, sticky=0, out=rtz,
 * out16=rne, outfrac=0, ovf=inf, latec=0, interleave=0, crnd=rne, zsum=ieee,
 * zrnd=ieee, c0align=skip, promote=0.
 * @param[out] m    filled on success
 * @param[in]  in   the input format (selects the preset's fp16 / bf16 / tf32 /
 *                  fp8 datapath by its precision and exponent width)
 * @param[in]  out  the output format (fp32, or fp16: some GPUs use another
 *                  fp8 datapath for fp16 output)
 * @param[out] err  if non-NULL, the reason on failure (<= errlen chars)
 * @return LOWP_OK; LOWP_EINVAL (unknown preset or key, bad value);
 *         LOWP_EUNSUPPORTED (the preset has no datapath for this input).
 */
int lowp_tc_model_get(lowp_tc_model_t *m, const char *spec,
                      const lowp_format_t *in, const lowp_format_t *out,
                      char *err, size_t errlen);

/** @brief Check parameters: LOWP_OK or LOWP_EINVAL (err says which). */
int lowp_bfma_validate(const lowp_bfma_t *p, char *err, size_t errlen);

/** @brief One line describing a model: "b=16,F=25,align=rtz,...". */
void lowp_tc_model_str(char *buf, size_t len, const lowp_tc_model_t *m);

/**
 * @brief One block FMA: *d = sum_{i<n} a[i] b[i] + c, as the model computes it.
 * @param[in] a,b  n values of format in (n <= p->b is not enforced: a block
 *                 of any length is one normalisation)
 * @param[in] c    a value of format out
 * @param[in] out  output format (fp32 or fp16 for the presets)
 * @return LOWP_OK; LOWP_EINVAL (bad parameters, or a value that is not
 *         representable with <= 32 significand bits).
 */
int lowp_bfma(double *d, const double *a, const double *b, size_t n, double c,
              const lowp_bfma_t *p, const lowp_format_t *in,
              const lowp_format_t *out);

/** @brief The value a block FMA rounded (its integer sum S 2^(X-F), or NaN
    or an infinity from the special-value rules), truncated to binary64, and
    whether nonzero bits lie below (lib/measure/fpx.h's convention). */
typedef struct {
  double x;
  int sticky;
  int cut; /**< the alignment cut nonzero bits of a term: the block's result is inexact */
} lowp_bfma_exact_t;

/** @brief lowp_bfma, also reporting in *ex (NULL: not) the value it rounded. */
int lowp_bfma_ex(double *d, lowp_bfma_exact_t *ex, const double *a, const double *b,
                 size_t n, double c, const lowp_bfma_t *p, const lowp_format_t *in,
                 const lowp_format_t *out);

/**
 * @brief A dot product of length k on the model: blocks of m->bfma.b chained
 * through c, with promotion every m->promote products (a multiple of b).
 * Strided inputs: a[i*sa], b[i*sb] (GEMM rows and columns).
 * @return as lowp_bfma; LOWP_EINVAL if promote is not a multiple of b.
 */
int lowp_tc_dot(double *d, const double *a, size_t sa, const double *b,
                size_t sb, size_t k, double c, const lowp_tc_model_t *m,
                const lowp_format_t *in, const lowp_format_t *out);

struct lowp_fpx_dot_s;
/**
 * @brief lowp_tc_dot (same bits) traced into tr (measure/fpx_dot.h; NULL:
 * untraced): each block FMA classified from the integer sum it rounds
 * (sequence offset 2 last + 1, index last, the block's last product; the
 * reference at that point: the exact partial dot through it), each rounded
 * addition of late_c and promotion (offset 2 last + 2).
 */
int lowp_tc_dot_fpx(double *d, const double *a, size_t sa, const double *b, size_t sb,
                    size_t k, double c, const lowp_tc_model_t *m, const lowp_format_t *in,
                    const lowp_format_t *out, struct lowp_fpx_dot_s *tr);

/* --------------------------------------------------- GPU-captured vectors */

/** @brief What replaying one vectors file found. */
typedef struct {
  size_t rows;          /**< rows compared */
  size_t match;         /**< rows reproduced bit for bit */
  long first_bad;       /**< 0-based row of the first mismatch, -1 if none */
  uint32_t got, want;   /**< fp32 bits of that row's model and GPU outputs */
} lowp_tc_replay_t;

/**
 * @brief Replay DIR/GPU/FMT/{a,b,c,d}_GPU_*.txt (the layout of
 * tests/data/tensor-core-vectors/README.md) through a model.
 * @param[in] dir     the vectors folder
 * @param[in] gpu     "H100", ...   @param[in] fmt "fp16", "E4M3", ...
 * @param[in] out     LOWP_FMT_FP32 or LOWP_FMT_FP16: which d file
 * @param[in] c_zero  1: treat c as 0 (the H100 fp8 rows with fp32 output were
 *                    captured that way, wgmma D = A.B + D from zero; the
 *                    fp16-output rows do carry c)
 * @param[in] m       the model; NULL checks the files only (r->rows counted,
 *                    nothing computed), so that a program can refuse corrupt
 *                    vectors before it writes anything
 * @return LOWP_OK; LOWP_EIO (a file is missing); LOWP_EFILE (a malformed
 *         line: not 1..8-digit hex words or a 32-character binary string, a
 *         NUL byte, an empty file, row counts that differ, a truncated file);
 *         LOWP_EUNSUPPORTED (model has no datapath).
 */
int lowp_tc_replay(lowp_tc_replay_t *r, const char *dir, const char *gpu,
                   const char *fmt, const lowp_format_t *out, int c_zero,
                   const lowp_tc_model_t *m);

/** @brief The lowp input format of a vectors folder name ("fp16", "E4M3", ...) or NULL. */
const lowp_format_t *lowp_tc_vectors_format(const char *fmt);

#endif
