/* lowp_round_fast -- branch-free fast path for rounding binary32 arrays */

#include "format/round_fast.h"
#include "status.h"

/* Placeholder-free: until the vectorised path lands, it applies nowhere and
   lowp_encode_array_f32 uses the reference loop. */
int lowp_round_fast_applies(const lowp_format_t *f, const lowp_policy_t *pol,
                            lowp_rounding_t rnd) {
  (void)f; (void)pol; (void)rnd;
  return 0;
}

int lowp_round_fast_encode_f32(void *bits, const float *x, size_t n,
                               const lowp_format_t *f, const lowp_policy_t *pol,
                               lowp_rounding_t rnd) {
  return lowp_encode_array_f32_ref(bits, x, n, f, pol, rnd);
}
