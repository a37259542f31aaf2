/* lowp_exact_add2, lowp_exact_mul2 -- one correctly rounded addition or product */

/*
 * a + b and a * b of binary64 values rounded once to any format. The exact
 * result goes through the accumulator (exact/acc.h), so nothing is rounded
 * on the way: computing fl64(a + b) first and rounding that to fp32 would
 * round twice (wrong on midpoints, and for directed modes whenever the
 * binary64 sum is inexact). A cheap test keeps the common case fast: when
 * the binary64 operation is exact (TwoSum error zero, or product with at
 * most 53 significant bits), round its result directly.
 */

#include "exact/exact.h"

#include <math.h>

#include "exact/acc.h"
#include "exact/internal.h"

/* ------------------------------------------------------ private helpers */

static lowp_policy_t with_index(const lowp_policy_t *pol, uint64_t index) {
  static const lowp_policy_t dflt;
  lowp_policy_t p = pol ? *pol : dflt;
  p.sr_offset = index;
  return p;
}

/* 32 or 64 when rounding a binary64 value to f in mode rnd under pol is
   exactly what the hardware conversion does (binary32 or binary64 layout,
   round to nearest even, IEEE overflow, no FTZ/DAZ), else 0. For finite
   results only: NaN payloads are left to lowp_round_f64. */
static int native(const lowp_format_t *f, const lowp_policy_t *pol, lowp_rounding_t rnd) {
  if (rnd != LOWP_RND_NE || !f->subnormals || f->inf != LOWP_INF_IEEE ||
      f->nan != LOWP_NAN_IEEE || !f->has_sign || !f->has_zero)
    return 0;
  if (pol && (pol->overflow != LOWP_OVF_IEEE || pol->ftz || pol->daz)) return 0;
  if (f->precision == 24 && f->emin == -126 && f->emax == 127) return 32;
  if (f->precision == 53 && f->emin == -1022 && f->emax == 1023) return 64;
  return 0;
}

/* round the exact binary64 value s to f: hardware when native, else lib */
static int round_exact(double *y, double s, const lowp_format_t *f,
                       const lowp_policy_t *pol, lowp_rounding_t rnd, uint64_t index) {
  int nat = native(f, pol, rnd);
  if (nat == 64) { *y = s; return 0; }
  if (nat == 32) {
    double t = (double)(float)s; /* IEEE 754 conversion: rne, once */
    if (isfinite(t)) { *y = t; return (t > s) - (t < s); }
  }
  {
    lowp_policy_t p = with_index(pol, index);
    return lowp_round_f64(y, s, f, &p, rnd);
  }
}

/* ----------------------------------------------------------- public API */

int lowp_exact_add2(double *y, double a, double b, const lowp_format_t *f,
                    const lowp_policy_t *pol, lowp_rounding_t rnd, uint64_t index) {
  lowp_acc_t acc;
  double s = a + b;
  if (isfinite(s)) {
    /* Knuth's TwoSum: s + e == a + b exactly (no overflow, any order) */
    double bb = s - a, e = (a - (s - bb)) + (b - bb);
    if (e == 0.0 && s != 0.0) return round_exact(y, s, f, pol, rnd, index);
  }
  lowp_acc_init(&acc);
  lowp_acc_add(&acc, a);
  lowp_acc_add(&acc, b);
  return lowp_acc_round(y, &acc, f, pol, rnd, index);
}

int lowp_exact_mul2(double *y, double a, double b, const lowp_format_t *f,
                    const lowp_policy_t *pol, lowp_rounding_t rnd, uint64_t index) {
  lowp_acc_t acc;
  double p = a * b;
  if (lowp__exact_prod_is_exact(a, b, p)) return round_exact(y, p, f, pol, rnd, index);
  lowp_acc_init(&acc);
  lowp_acc_add_prod(&acc, a, b);
  return lowp_acc_round(y, &acc, f, pol, rnd, index);
}
