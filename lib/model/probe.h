/* lowp_probe -- tensor-core feature probes on any device: a GPU, or a model */
#ifndef LOWP_PROBE_H
#define LOWP_PROBE_H

/*
 * Probes in the manner of Fasi, Higham, Mikaitis & Pranesh, "Numerical
 * behavior of NVIDIA tensor cores", PeerJ Comput. Sci. 7:e330 (2021), and of
 * Khattak & Mikaitis (2025, the fp8 / Hopper / Blackwell follow-up):
 * inputs built so that each feature of the block FMA shows in one output
 * bit pattern. Re-implemented from their descriptions; every input is a
 * product of two values of the input format that the probe chooses from
 * the format's data (exponent range, precision), never from its name.
 *
 * The device is a callback computing D = sum_i a_i b_i + c for a dot of n
 * products as the hardware does it (one instruction, or instructions
 * chained through the accumulator for n longer than one instruction): a
 * GPU kernel (kernels/cuda/probe.cu), or lowp's own model (lowp_tc_dot),
 * so that the probes can be checked to recover every preset.
 *
 * Probes, in order (each uses what the earlier ones found):
 *   products     a = b = 1 + 2^(1-t): D == a*b exactly (2t-1 bits)?
 *   sub_in       the smallest subnormal input times a power of two: kept?
 *   sub_out      a result in the output's subnormal range (from a product
 *                if the input range reaches it, else from c): kept?
 *   block        the first normalisation block: +2^s at 0, -2^s at 1, and a
 *                tiny 2^(s-m) at index r (m beyond any F): D == 0 means r
 *                was aligned with the cancelled pair (same block); D ==
 *                tiny means it was summed apart. The members give b and
 *                an interleave period P (Hopper/Blackwell fp8 mma.sync).
 *                A term after an exact cancellation still cut: one
 *                normalisation per block (not per addition).
 *   F            the same pair and 2^(s-j) in the block: largest j kept.
 *   align        +-0.75, +0.25 units of 2^(s-F) in the block: truncation
 *                (rtz), floor (rdn), nearest (rne), odd (rto), or a sticky
 *                bit (0.5 units).
 *   late_c       +2^s at 0, tiny outside the first block, c = -2^s: D == tiny
 *                means c was in the first block; D == 0 means c was added
 *                after the instruction's blocks.
 *   outfrac      2^e + 2^e + 2^(e-k): the largest k kept gives the fraction
 *                bits of the block result (the fp8 13-bit accumulator).
 *   out_rnd      three products 1.75^2 2^e and +-0.25, +0.5, +0.75 ulp of the
 *                result: rne, rna, rtz, rup, rdn or rto.
 *   c_rnd        the same with the fraction of an ulp given by c.
 *   monotone     trials: a product's factor stepped up across a binade (the
 *                alignment exponent grows); does D ever decrease?
 *   promote      (devices with dev->promote set: a library GEMM with fp32
 *                promotion, or the model) +2^s at 0, c = -2^s, tiny
 *                everywhere else: the tinies summed in fresh chains count
 *                the products after the first promotion.
 *
 * Limits: late_c is seen only when one instruction holds two blocks (the
 * interleaved fp8 mma.sync datapath) or with promotion; a sticky bit below F
 * bits cuts single terms exactly as round-to-odd at F + 1 bits, and is
 * reported so; the accumulator width is a lower bound when F limits it;
 * overflow (ovf) is not probed.
 */

#include <stddef.h>

#include "format/format.h"
#include "model/tc.h"

/** @brief Most products a probe dot uses. */
#define LOWP_PROBE_KMAX 1024

/**
 * @brief A device: d = sum_{i<n} a[i] b[i] + c, computed as the hardware (or a
 * model) does, a, b values of format in, c and d values of format out.
 * @return LOWP_OK, or an error status (the probe stops and returns it).
 */
typedef int (*lowp_probe_dot_fn)(void *ctx, double *d, const double *a, const double *b,
                                 size_t n, double c, const lowp_format_t *in,
                                 const lowp_format_t *out);

/** @brief A device for the probes. */
typedef struct {
  lowp_probe_dot_fn dot; /**< the computation */
  void *ctx;             /**< passed to dot */
  size_t kmax;           /**< longest dot it takes (>= 64 to find blocks of 32) */
  int promote;           /**< 1: its long dots may promote to fp32 (probe promote) */
} lowp_probe_dev_t;

/** @brief What the probes measured and inferred for one input/output pair. */
typedef struct {
  int products_exact;    /**< 1 exact, 0 not */
  int sub_in;            /**< 1 subnormal inputs kept, 0 flushed */
  int sub_out;           /**< 1 subnormal results kept, 0 flushed */
  int sub_out_from_c;    /**< 1: the output range could only be reached through c */
  size_t n;              /**< products per probe dot (min(kmax, 128)) */
  int members[128];      /**< 1: index in the first block (the block probe) */
  int b;                 /**< block size; 0 undetermined */
  int b_atleast;         /**< 1: every index was in the first block: b >= n */
  int interleave;        /**< P, 0 = consecutive blocks */
  int per_block;         /**< 1: one normalisation per block */
  int m;                 /**< exponent gap of the tiny term (must exceed F) */
  int F;                 /**< alignment fraction bits; 0 undetermined */
  int F_atleast;         /**< 1: every tested j was kept: F >= this */
  double align_units[3]; /**< +0.75, -0.75, +0.25 units: what came out */
  lowp_rounding_t align; /**< inferred (LOWP_RND_TZ/NE/TO/DN) */
  int sticky;            /**< 1: a sticky bit (0.5 units out) */
  int align_ok;          /**< 1: the pattern is one of the known ones */
  int late_c;            /**< 1: c added after the blocks */
  int out_frac;          /**< fraction bits of an fp32 block result; 0 = all 23 */
  int out_frac_atleast;  /**< 1: only a lower bound (F limited the probe) */
  int out_pattern[4];    /**< +0.75, +0.25, +0.5, -0.75 ulp: 1 rounded away, 0 not */
  lowp_rounding_t out_rnd; /**< block result rounding (for this output) */
  int out_ok;
  int c_pattern[4];
  lowp_rounding_t c_rnd; /**< rounding when c brings the bits below the ulp */
  int c_ok;
  long mono_trials, mono_decreases; /**< monotonicity */
  double mono_example[2];          /**< first decrease: D before, D after */
  int promote_probed;
  size_t promote;        /**< N_C found; 0 = none observed */
  /* the zero questions (docs/gpu.md): -1 IEEE 754's reading (zsum=ieee,
     zrnd=ieee, a zero takes no part in the alignment: c0align=skip), 1 the
     other (+0, aligned at emin: MMA-Sim's; the H200's except (c)), 0 not
     probed (unbuildable, or undecidable here). The inferred spec (model)
     carries (a), (b), (d) as zsum, zrnd, c0align; (c) has no parameter */
  int zero_neg;          /**< (a) every addend -0: -1 gives -0, 1 gives +0 */
  int zero_round;        /**< (b) a negative sum rounded to zero: -1 -0, 1 +0 */
  int zero_align;        /**< (c) 0 x 2^emax beside small products: 1 it moves the alignment */
  int zero_floor;        /**< (d) c = 0, every product below the output's emin: 1 aligned
                              at 2^emin, -1 at the largest product */
  char model[256];       /**< the inferred parameters, a lowp_tc_model_get spec */
} lowp_probe_t;

/**
 * @brief Run every probe for inputs in and outputs out on dev.
 * @return LOWP_OK (r filled; undetermined items say so); LOWP_EINVAL (no
 *         device, kmax < 8, or a format the probes cannot build inputs
 *         for); a device error status.
 */
int lowp_probe_run(lowp_probe_t *r, const lowp_probe_dev_t *dev, const lowp_format_t *in,
                   const lowp_format_t *out);

/**
 * @brief Compare the inferred parameters with a model's, item by item.
 * Items the probes could not determine are not compared.
 * @param[out] why  the differing items ("F 24 vs 25; ..."), "" if none
 * @return number of differing items.
 */
int lowp_probe_compare(const lowp_probe_t *r, const lowp_tc_model_t *m, const lowp_format_t *out,
                       char *why, size_t whylen);

/** @brief A device that is lowp's model m (ctx = the lowp_tc_model_t). */
int lowp_probe_model_dot(void *ctx, double *d, const double *a, const double *b, size_t n,
                         double c, const lowp_format_t *in, const lowp_format_t *out);

#endif
