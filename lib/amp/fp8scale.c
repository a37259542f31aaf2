/* lowp_fp8scale -- FP8 scaling recipes: per tensor, delayed, per channel, blocks, MX */

#include "amp/fp8scale.h"

#include "status.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

/* TE's scale formula in fp32 arithmetic; 1 where amax gives no scale. */
static double amax_scale(double amax, const lowp_format_t *elem, int margin) {
  float s;
  if (!(amax > 0) || !isfinite(amax)) return 1.0;
  s = (float)(lowp_format_xmax(elem) / (double)(float)amax);
  s = (float)ldexp((double)s, -margin);
  if (!(s > 0) || !isfinite(s)) return 1.0; /* amax beyond fp32's range */
  return (double)s;
}

/* q = sat(round(v)) and its statistics; returns q. */
static double quant_one(double v, const lowp_format_t *elem, lowp_quant_stats_t *st) {
  static const lowp_policy_t sat = {LOWP_OVF_SAT, LOWP_NANSIGN_KEEP, LOWP_NANMAP_MAXPOS,
                                    0, 0, 0, 0, 0};
  double q;
  lowp_round_f64(&q, v, elem, &sat, LOWP_RND_NE);
  if (st) {
    /* saturated = clamped: v rounds (nearest even, unbounded exponent) to
       a magnitude above max finite. Rounded in a copy of the format with
       two more binades, since NaN-less formats (e2m1) never overflow. */
    lowp_format_t wide = *elem;
    double o;
    wide.emax += 2;
    wide.ebits += 1;
    wide.inf = LOWP_INF_IEEE;
    wide.nan = LOWP_NAN_IEEE;
    lowp_round_f64(&o, v, &wide, NULL, LOWP_RND_NE);
    if (isfinite(v) && fabs(o) > lowp_format_xmax(elem)) st->saturated++;
    if (v != 0 && q == 0) st->flushed++;
    if (q != 0 && fabs(q) < lowp_format_xmin(elem)) st->subnormal++;
  }
  return q;
}

static void note(lowp_quant_stats_t *st, double x, double deq) {
  double e;
  if (!st) return;
  e = deq - x;
  st->n++;
  if (x != 0) { st->nonzero++; st->sum_rel_err += fabs(e) / fabs(x); }
  st->sum_sq_err += e * e;
  st->sum_sq_x += x * x;
  if (fabs(e) > st->max_abs_err) st->max_abs_err = fabs(e);
}

/* --------------------------------------------------------- public API */

double lowp_quant_rel_err(const lowp_quant_stats_t *st) {
  return st->sum_sq_x > 0 ? sqrt(st->sum_sq_err / st->sum_sq_x) : 0.0;
}

double lowp_quant_mean_rel_err(const lowp_quant_stats_t *st) {
  return st->nonzero ? st->sum_rel_err / (double)st->nonzero : 0.0;
}

int lowp_fp8_quantize_blocks(double *deq, double *scales, const double *x,
                             size_t rows, size_t cols, size_t br, size_t bc,
                             const lowp_format_t *elem, lowp_scale_kind_t kind,
                             int margin, lowp_quant_stats_t *st) {
  size_t bi, bj, i, j, b = 0;
  if (!deq || !x || br == 0 || bc == 0 || margin < -64 || margin > 64 ||
      (kind != LOWP_SCALE_AMAX && kind != LOWP_SCALE_E8M0))
    return LOWP_EINVAL;
  if (!elem || lowp_format_validate(elem, NULL, 0) != 0) return LOWP_EFORMAT;
  for (bi = 0; bi < rows; bi += br)
    for (bj = 0; bj < cols; bj += bc, b++) {
      size_t ie = bi + br < rows ? bi + br : rows, je = bj + bc < cols ? bj + bc : cols;
      double amax = 0, s;
      for (i = bi; i < ie; i++)
        for (j = bj; j < je; j++) {
          double a = fabs(x[i * cols + j]);
          if (isfinite(a) && a > amax) amax = a;
        }
      if (kind == LOWP_SCALE_AMAX) {
        s = amax_scale(amax, elem, margin);
        for (i = bi; i < ie; i++)
          for (j = bj; j < je; j++) {
            double v = x[i * cols + j], q = quant_one(v * s, elem, st);
            deq[i * cols + j] = q / s;
            note(st, v, q / s);
          }
      } else {
        int e = -127;
        double X;
        if (amax > 0) {
          (void)frexp(amax, &e); /* amax = f 2^e, f in [0.5, 1): floor(log2) = e - 1 */
          e = e - 1 - elem->emax;
          if (e < -127) e = -127;
          if (e > 127) e = 127;
        }
        X = ldexp(1.0, e);
        s = 1.0 / X;
        for (i = bi; i < ie; i++)
          for (j = bj; j < je; j++) {
            double v = x[i * cols + j], q = quant_one(v / X, elem, st);
            deq[i * cols + j] = q * X;
            note(st, v, q * X);
          }
      }
      if (scales) scales[b] = s;
      if (st) st->nblocks++;
    }
  return LOWP_OK;
}

int lowp_fp8_delayed_init(lowp_fp8_delayed_t *d, size_t len, int use_max, int margin) {
  if (!d || len == 0 || len > sizeof d->hist / sizeof d->hist[0] || margin < -64 || margin > 64)
    return LOWP_EINVAL;
  memset(d, 0, sizeof *d);
  d->len = len;
  d->use_max = use_max ? 1 : 0;
  d->margin = margin;
  d->scale = 1.0;
  return LOWP_OK;
}

int lowp_fp8_delayed_quantize(lowp_fp8_delayed_t *d, double *deq, const double *x,
                              size_t n, const lowp_format_t *elem,
                              double *used_scale, lowp_quant_stats_t *st) {
  size_t i;
  double amax = 0, red, s;
  if (!d || !deq || !x || d->len == 0 || d->len > sizeof d->hist / sizeof d->hist[0])
    return LOWP_EINVAL;
  if (!elem || lowp_format_validate(elem, NULL, 0) != 0) return LOWP_EFORMAT;
  s = d->scale;
  if (used_scale) *used_scale = s;
  for (i = 0; i < n; i++) {
    double v = x[i], a = fabs(v), q;
    if (isfinite(a) && a > amax) amax = a;
    q = quant_one(v * s, elem, st);
    deq[i] = q / s;
    note(st, v, q / s);
  }
  if (st) st->nblocks++;
  /* record this step's amax (most recent first), then the next scale */
  memmove(d->hist + 1, d->hist, (d->len - 1) * sizeof d->hist[0]);
  d->hist[0] = amax;
  if (d->count < d->len) d->count++;
  red = d->hist[0];
  if (d->use_max)
    for (i = 1; i < d->count; i++)
      if (d->hist[i] > red) red = d->hist[i];
  if (red > 0 && isfinite(red)) d->scale = amax_scale(red, elem, d->margin);
  return LOWP_OK;
}
