/* lowp_qdq_bs -- quantize-dequantize fp32 matrices through a block-scaled format, with counts */

#include "cpu/qdq_bs.h"

#include "cpu.h"
#include "format/bsquant.h"
#include "status.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

/* the saturation threshold xmax + ulp(xmax) / 2 and the smallest normal 2^emin of bf's elements */
static double sat_limit(const lowp_bsformat_t *bf) {
  return lowp_bsformat_elem_max(bf) + ldexp(1.0, bf->elem.emax - bf->elem.precision);
}
static double normal_min(const lowp_bsformat_t *bf) { return ldexp(1.0, bf->elem.emin); }

/* One block of lowp_qdq_bs_f32: x's len values, q their quantized elements, sc the block's scale, ts the tensor's.
   Adds the block's nonzero, flushed, subnormal and saturated counts to c[0..3] and writes y = (q sc) ts
   rounded to fp32, the product and NaN of lowp_bs_dequantize then one rounding, as the reference does in
   three passes over a binary64 copy; y is written after every read of x (y may be x).
   Nonzero: x != 0 exactly where |x|'s bit pattern (sign cleared) is nonzero, NaN included.
   Saturated: the test fl(|x| / d) >= lim, d = sc ts, per element only where some element can pass it.
   A = max |x|, taken as the largest such pattern (binary32 magnitudes that are not NaN order as their
   patterns do; a NaN's pattern lies above +inf's, so A reads as NaN exactly when some x is NaN). If d > 0
   and A is not NaN, every |x| <= A, and v -> fl(v / d) is nondecreasing (the exact quotient is, for
   d > 0, +inf included, and so is rounding to nearest): fl(|x| / d) <= fl(A / d). So fl(A / d) < lim
   leaves no element at or above lim, and the block's count is 0, as the test per element gives. Any
   other block (A or d NaN, d <= 0, fl(A / d) >= lim) takes the test per element. The division per
   element, a branch on the counters and the two extra passes were most of the 4.2% of
   fp8-quantization's samples at AVX2 that this function (then experiments/fp8q_quant.c's bs_qdq) took. */
static LOWP_ALWAYS_INLINE void bs_block_body(float *y, const float *x, const double *q, size_t len, double sc,
                                             double ts, double lim, double tiny, size_t *c) {
  const double d = sc * ts;
  size_t i;
  uint32_t nz = 0, fl = 0, sub = 0, sat = 0; /* len <= bf->block, an int: below 2^32 */
  uint32_t m = 0;
  float a;
  for (i = 0; i < len; i++) {
    uint32_t u;
    int on;
    memcpy(&u, &x[i], sizeof u);
    u &= 0x7fffffffu;
    on = u != 0;
    m = u > m ? u : m;
    nz += on;
    fl += on & (q[i] == 0.0);
    sub += on & (q[i] != 0.0) & (fabs(q[i]) < tiny);
  }
  memcpy(&a, &m, sizeof a);
  if (!(d > 0.0 && (double)a / d < lim))
    for (i = 0; i < len; i++) sat += (x[i] != 0.0f) & (fabs((double)x[i]) / d >= lim);
  for (i = 0; i < len; i++) y[i] = (float)(isnan(sc) ? NAN : q[i] * sc * ts);
  c[0] += nz;
  c[1] += fl;
  c[2] += sub;
  c[3] += sat;
}

/* bs_block_body over every block of a rows x cols matrix (sc: the blocks' scales, row-major), compiled once
   per instruction set (vectorised), the copy chosen by lowp_cpu_isa */
#define BS_BLOCKS_ARGS (float *y, const float *x, const double *q, const double *sc, size_t rows, size_t cols, \
                        size_t bs, double ts, double lim, double tiny, size_t *c)
static LOWP_ALWAYS_INLINE void bs_blocks_body BS_BLOCKS_ARGS {
  size_t nb = cols > 0 ? (cols + bs - 1) / bs : 0, r, b;
  for (r = 0; r < rows; r++)
    for (b = 0; b < nb; b++) {
      const size_t j0 = r * cols + b * bs, len = cols - b * bs < bs ? cols - b * bs : bs;
      bs_block_body(y + j0, x + j0, q + j0, len, sc[r * nb + b], ts, lim, tiny, c);
    }
}
typedef void(*bs_blocks_fn) BS_BLOCKS_ARGS;
static void bs_blocks_generic BS_BLOCKS_ARGS { bs_blocks_body(y, x, q, sc, rows, cols, bs, ts, lim, tiny, c); }
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target("avx2"))) static void bs_blocks_avx2 BS_BLOCKS_ARGS {
  bs_blocks_body(y, x, q, sc, rows, cols, bs, ts, lim, tiny, c);
}
__attribute__((target("avx512f"))) static void bs_blocks_avx512 BS_BLOCKS_ARGS {
  bs_blocks_body(y, x, q, sc, rows, cols, bs, ts, lim, tiny, c);
}
static bs_blocks_fn pick_bs_blocks(void) {
  lowp_isa_t isa = lowp_cpu_isa(0);
  return isa == LOWP_ISA_AVX512 ? bs_blocks_avx512 : isa == LOWP_ISA_AVX2 ? bs_blocks_avx2 : bs_blocks_generic;
}
#else
static bs_blocks_fn pick_bs_blocks(void) { return bs_blocks_generic; }
#endif
#undef BS_BLOCKS_ARGS

/* ----------------------------------------------------------- public API */

int lowp_qdq_bs_f32(float *y, const float *x, size_t rows, size_t cols, const lowp_bsformat_t *bf,
                    double tamax, lowp_qstats_t *st) {
  size_t n = rows * cols, nb, ns, c[4] = {0, 0, 0, 0};
  double *q, *sc, ts = 1.0;
  int rc;
  if (!y || !st || !bf) return LOWP_EINVAL;
  nb = lowp_bsformat_blocks(bf, cols);
  ns = rows * nb > 0 ? rows * nb : 1;
  q = malloc((n > 0 ? n : 1) * sizeof *q);
  sc = malloc(ns * sizeof *sc);
  rc = q && sc ? LOWP_OK : LOWP_ENOMEM;
  /* the tensor amax only where the format has a tensor scale (the others ignore it) */
  if (rc == LOWP_OK)
    rc = lowp_bs_quantize_amax(q, sc, &ts, x, rows, cols, bf, tamax < 0 && bf->tensor_scale ? lowp_bs_amax(x, n) : tamax);
  if (rc == LOWP_OK) {
    pick_bs_blocks()(y, x, q, sc, rows, cols, (size_t)bf->block, ts, sat_limit(bf), normal_min(bf), c);
    st->n += n;
    st->nonzero += c[0];
    st->flushed += c[1];
    st->subnormal += c[2];
    st->saturated += c[3];
  }
  free(q);
  free(sc);
  return rc;
}

int lowp_qdq_bs_f32_ref(float *y, const float *x, size_t rows, size_t cols, const lowp_bsformat_t *bf,
                        double tamax, lowp_qstats_t *st) {
  size_t n = rows * cols, nb, bs, i, r, b, ns;
  double *q, *sc, ts = 1.0, lim, tiny;
  int rc;
  if (!y || !st || !bf) return LOWP_EINVAL;
  nb = lowp_bsformat_blocks(bf, cols);
  bs = (size_t)bf->block;
  ns = rows * nb > 0 ? rows * nb : 1;
  q = malloc((n > 0 ? n : 1) * sizeof *q);
  sc = malloc(ns * sizeof *sc);
  lim = sat_limit(bf);
  tiny = normal_min(bf);
  rc = q && sc ? LOWP_OK : LOWP_ENOMEM;
  if (rc == LOWP_OK) rc = lowp_bs_quantize_amax(q, sc, &ts, x, rows, cols, bf, tamax < 0 ? lowp_bs_amax(x, n) : tamax);
  for (r = 0; rc == LOWP_OK && r < rows; r++)
    for (b = 0; b < nb; b++) {
      const double d = sc[r * nb + b] * ts;
      const size_t j0 = r * cols + b * bs, j1 = r * cols + (cols - b * bs < bs ? cols : (b + 1) * bs);
      for (i = j0; i < j1; i++) {
        if (x[i] == 0.0f) continue;
        st->nonzero++;
        if (q[i] == 0.0) st->flushed++;
        else if (fabs(q[i]) < tiny) st->subnormal++;
        if (fabs((double)x[i]) / d >= lim) st->saturated++;
      }
      st->n += j1 - j0;
    }
  if (rc == LOWP_OK) rc = lowp_bs_dequantize(q, q, sc, ts, rows, cols, bf);
  for (i = 0; rc == LOWP_OK && i < n; i++) y[i] = (float)q[i];
  free(q);
  free(sc);
  return rc;
}
