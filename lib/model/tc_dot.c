/* lowp_tc_dot -- a dot product on a tensor-core model: chained blocks, fp32 promotion */

/*
 * Chaining (Fasi et al. 2021, sec. 4; Khattak & Mikaitis 2025): a dot
 * product of length k > b is ceil(k/b) block FMAs, the rounded output of one
 * being the c of the next (the accumulator stays in the tensor core, in the
 * output format; for Ada/Hopper fp8, with 13 fraction bits).
 *
 * Promotion (DeepSeek-V3 technical report, arXiv:2412.19437, sec. 3.3.2):
 * every N_C products the tensor-core partial sum, started from zero, is
 * added to an fp32 total held in CUDA-core registers, by an ordinary fp32
 * addition (round to nearest even); the total starts at c.
 */

#include "measure/fpx_dot.h"
#include "model/accum.h"
#include "model/tc.h"
#include "status.h"

#include <math.h>
#include <string.h>

/*
 * A chain over products [lo, hi), starting from *acc. One "instruction"
 * takes b products, or 2b with interleave P (two blocks: first the offsets
 * whose (offset / P) is even, then the others). With late_c the blocks of an
 * instruction start from zero and the running value is added after them by
 * one addition in the output format, rounded by c_rnd (the blocks round by
 * out_rnd / out16_rnd).
 */
/* the position of the block's first product that is NaN or infinite, else
   of its last: where a trace points for an exception of the block */
static size_t block_pos(const double *a, const double *b, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (!isfinite(a[i]) || !isfinite(b[i])) return i;
  return n - 1;
}

/* the operands' NaN flag of a block (lib/measure/fpx.h) */
static unsigned nan_in(const double *a, const double *b, size_t n, double c) {
  size_t i;
  for (i = 0; i < n; i++)
    if (isnan(a[i]) || isnan(b[i])) return LOWP_FPX_IN_NAN;
  return isnan(c) ? LOWP_FPX_IN_NAN : 0;
}

/* tr (NULL: untraced) sees each block FMA (sequence offset 2 last + 1, last
   the instruction's last product index) and each rounded addition (2 last +
   2). A block's event is judged against the exact sum of every product the
   instruction has consumed (done: both blocks' for an interleaved second
   block) plus the block's c: the exact partial sum before the instruction,
   or nothing where the blocks start from zero (late c) */
static int chain(double *acc, const double *a, size_t sa, const double *b,
                 size_t sb, size_t lo, size_t hi, const lowp_bfma_t *p,
                 const lowp_format_t *in, const lowp_format_t *out, lowp_fpx_dot_t *tr) {
  double ab[1024], bb[1024];
  size_t idx[1024], done[2048], nd;
  size_t i, j, w = (size_t)p->b, P = (size_t)p->interleave;
  size_t g = P ? 2 * w : w;
  int st, half;
  for (i = lo; i < hi; i += g) {
    size_t n = hi - i < g ? hi - i : g;
    double x = p->late_c ? 0.0 : *acc;
    nd = 0;
    for (half = 0; half < (P ? 2 : 1); half++) {
      size_t cnt = 0;
      for (j = 0; j < n; j++)
        if (!P || (int)((j / P) % 2) == half) {
          ab[cnt] = a[(i + j) * sa];
          bb[cnt] = b[(i + j) * sb];
          idx[cnt] = i + j;
          cnt++;
        }
      if (cnt == 0) continue;
      if (!tr) {
        if ((st = lowp_bfma(&x, ab, bb, cnt, x, p, in, out)) != LOWP_OK) return st;
      } else {
        lowp_bfma_exact_t ex;
        double c0 = x;
        size_t q = block_pos(ab, bb, cnt);
        lowp_rounding_t r = out->precision < LOWP_FMT_FP32.precision ? p->out16_rnd : p->out_rnd;
        if ((st = lowp_bfma_ex(&x, &ex, ab, bb, cnt, c0, p, in, out)) != LOWP_OK) return st;
        memcpy(done + nd, idx, cnt * sizeof *idx);
        nd += cnt;
        if (!lowp_fpx_dot_quiet(tr, out, x))
          lowp_fpx_dot_note_block(tr, 2 * (i + n - 1) + 1, (int64_t)idx[q], LOWP_FPX_OP_BFMA, ex.x,
                                  ex.sticky, x, nan_in(ab, bb, cnt, c0) | (ex.cut ? LOWP_FPX_IN_INEXACT : 0u),
                                  !p->late_c, i, done, nd, out,
                                  r, ab[q], bb[q], c0);
      }
    }
    if (p->late_c) {
      double a0 = *acc;
      lowp_accum_add(acc, x, a0, out, p->c_rnd);
      if (tr && !lowp_fpx_dot_quiet(tr, out, *acc))
        lowp_fpx_dot_step(tr, 2 * (i + n - 1) + 2, LOWP_FPX_OP_ADD, a0, x, 0.0, *acc, out,
                          p->c_rnd);
    } else {
      *acc = x;
    }
  }
  return LOWP_OK;
}

/* tr (NULL: untraced) sees the rounding of v (c, or the fp32 total of a
   promoted chain) to the output format, y its result, at sequence offset s:
   an fp32 total above 65504 is an overflow of an fp16 output that no block
   or addition of the chain raised. k: the last product (-1: none); the
   reference is the exact dot through it. */
static void out_note(lowp_fpx_dot_t *tr, uint64_t s, int64_t k, double v, double y,
                     const lowp_format_t *out) {
  if (!tr || lowp_fpx_dot_quiet(tr, out, y)) return;
  lowp_fpx_dot_note(tr, s, k, LOWP_FPX_OP_ROUND, v, 0, y, isnan(v) ? LOWP_FPX_IN_NAN : 0, k >= 0, out,
                    LOWP_RND_NE, v, 0.0, 0.0);
}

int lowp_tc_dot(double *d, const double *a, size_t sa, const double *b,
                size_t sb, size_t k, double c, const lowp_tc_model_t *m,
                const lowp_format_t *in, const lowp_format_t *out) {
  return lowp_tc_dot_fpx(d, a, sa, b, sb, k, c, m, in, out, NULL);
}

int lowp_tc_dot_fpx(double *d, const double *a, size_t sa, const double *b, size_t sb,
                    size_t k, double c, const lowp_tc_model_t *m, const lowp_format_t *in,
                    const lowp_format_t *out, lowp_fpx_dot_t *tr) {
  const lowp_bfma_t *p = &m->bfma;
  double total, part;
  size_t lo;
  int st;

  if (lowp_bfma_validate(p, NULL, 0) != LOWP_OK) return LOWP_EINVAL;
  if (m->promote == 0 || k == 0) {
    double acc = c;
    if (k == 0) { /* no block runs: c as the output format holds it */
      lowp_round_f64(d, c, out, NULL, LOWP_RND_NE);
      out_note(tr, 0, -1, c, *d, out);
      return LOWP_OK;
    }
    st = chain(&acc, a, sa, b, sb, 0, k, p, in, out, tr);
    *d = acc;
    return st;
  }
  if (m->promote % (size_t)p->b) return LOWP_EINVAL;
  total = c;
  for (lo = 0; lo < k; lo += m->promote) {
    size_t hi = lo + m->promote < k ? lo + m->promote : k;
    double t0 = total;
    part = 0.0;
    if (tr) lowp_fpx_dot_scope(tr, lo); /* the chain's partial sums start from zero at lo */
    if ((st = chain(&part, a, sa, b, sb, lo, hi, p, in, out, tr)) != LOWP_OK) return st;
    if (tr) lowp_fpx_dot_scope(tr, SIZE_MAX); /* the total's: c + the products through hi - 1 */
    lowp_accum_add(&total, t0, part, &LOWP_FMT_FP32, LOWP_RND_NE);
    if (tr && !lowp_fpx_dot_quiet(tr, &LOWP_FMT_FP32, total))
      lowp_fpx_dot_step(tr, 2 * (hi - 1) + 2, LOWP_FPX_OP_ADD, t0, part, 0.0, total,
                        &LOWP_FMT_FP32, LOWP_RND_NE);
  }
  lowp_round_f64(d, total, out, NULL, LOWP_RND_NE);
  out_note(tr, 2 * k, (int64_t)k - 1, total, *d, out);
  return LOWP_OK;
}
