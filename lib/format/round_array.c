/* lowp_round_array_f32 -- round and encode arrays of binary32 values */

/*
 * The reference array paths: one call of the scalar core per element, so the
 * array and scalar results agree by construction. lowp_encode_array_f32 and
 * lowp_round_array_f32 are the hot paths of `lowp bench round`; a
 * branch-free fast path for the common case (see round_fast.c) is selected
 * when it applies, and the tests hold it to these reference results bit for
 * bit.
 */

#include "format/format.h"
#include "format/round_fast.h"
#include "status.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

/* Every result of rounding a binary32 to f is a binary32 value when f's
   values are a subset of binary32's, or when f contains binary32 (then the
   rounding is the identity on finite inputs) -- unless an infinite input
   becomes f's +-max (satfinite, or a format with neither inf nor NaN),
   which for a wider f such as fp64 is no binary32 value (found by
   tests/tround_array.c: fp64, LOWP_OVF_SAT, x = inf gave inf). */
static int results_fit_f32(const lowp_format_t *f, const lowp_policy_t *pol) {
  int subset = f->precision <= 24 && f->emax <= 127 &&
               (f->subnormals ? f->emin - f->precision + 1 : f->emin) >= -149;
  int superset = f->precision >= 24 && f->emax >= 127 && f->emin <= -126 &&
                 f->subnormals && f->emin - f->precision + 1 <= -149;
  int inf_to_max = pol->overflow == LOWP_OVF_SAT ||
                   (f->nan == LOWP_NAN_NONE &&
                    (f->inf != LOWP_INF_IEEE || pol->overflow == LOWP_OVF_NAN));
  if (superset && inf_to_max && lowp_format_xmax(f) > 0x1.fffffep127)
    superset = 0;
  return subset || superset;
}


/* ----------------------------------------------------------- public API */

int lowp_round_array_f32(float *y, const float *x, size_t n,
                         const lowp_format_t *f, const lowp_policy_t *pol,
                         lowp_rounding_t rnd) {
  static const lowp_policy_t dflt;
  lowp_policy_t p = pol ? *pol : dflt;
  if ((unsigned)rnd >= LOWP_RND_COUNT) return LOWP_EROUND;
  if (lowp_format_validate(f, NULL, 0)) return LOWP_EFORMAT;
  if (lowp_round_fast_applies(f, &p, rnd))
    return lowp_round_fast_values_f32_isa(y, x, n, f, &p, rnd, NULL);
  return lowp_round_array_f32_ref(y, x, n, f, pol, rnd);
}

int lowp_round_array_f32_ref(float *y, const float *x, size_t n,
                             const lowp_format_t *f, const lowp_policy_t *pol,
                             lowp_rounding_t rnd) {
  static const lowp_policy_t dflt;
  lowp_policy_t p = pol ? *pol : dflt;
  uint64_t base = p.sr_offset;
  size_t i;
  if ((unsigned)rnd >= LOWP_RND_COUNT) return LOWP_EROUND;
  if (lowp_format_validate(f, NULL, 0) || !results_fit_f32(f, &p)) return LOWP_EFORMAT;
  for (i = 0; i < n; i++) {
    double r;
    p.sr_offset = base + i;
    (void)lowp_round_f32(&r, x[i], f, &p, rnd);
    y[i] = (float)r; /* exact: r is a binary32 value (results_fit_f32) */
  }
  return LOWP_OK;
}

int lowp_encode_array_f32(void *bits, const float *x, size_t n,
                          const lowp_format_t *f, const lowp_policy_t *pol,
                          lowp_rounding_t rnd) {
  static const lowp_policy_t dflt;
  lowp_policy_t p = pol ? *pol : dflt;
  if ((unsigned)rnd >= LOWP_RND_COUNT) return LOWP_EROUND;
  if (lowp_format_validate(f, NULL, 0)) return LOWP_EFORMAT;
  if (lowp_round_fast_applies(f, &p, rnd))
    return lowp_round_fast_encode_f32(bits, x, n, f, &p, rnd);
  return lowp_encode_array_f32_ref(bits, x, n, f, pol, rnd);
}

size_t lowp_format_count_not_in(const lowp_format_t *f, const double *x, size_t n, size_t *first) {
  size_t k, bad_n = 0;
  *first = 0;
  for (k = 0; k < n; k++) {
    double y;
    if (isnan(x[k])) continue;
    (void)lowp_round_f64(&y, x[k], f, NULL, LOWP_RND_NE);
    if (y != x[k] && !bad_n++) *first = k;
  }
  return bad_n;
}
