/* lowp_encode_array_f32_ref -- the reference loop that rounds and encodes binary32 arrays, one element at a time */

/*
 * One call of the scalar core (lowp_round_f32, lowp_encode) per element:
 * what lowp_encode_array_f32 computes when its fast path (round_fast.c)
 * does not apply, the fast path's fallback, and the tests' reference.
 */

#include "format/format.h"
#include "format/round_fast.h"
#include "status.h"

/* ------------------------------------------------------ private helpers */

static void store_bits(void *out, size_t i, uint64_t b, int width) {
  if (width <= 8) ((uint8_t *)out)[i] = (uint8_t)b;
  else if (width <= 16) ((uint16_t *)out)[i] = (uint16_t)b;
  else if (width <= 32) ((uint32_t *)out)[i] = (uint32_t)b;
  else ((uint64_t *)out)[i] = b;
}

/* ----------------------------------------------------------- public API */

int lowp_encode_array_f32_ref(void *bits, const float *x, size_t n,
                              const lowp_format_t *f, const lowp_policy_t *pol,
                              lowp_rounding_t rnd) {
  static const lowp_policy_t dflt;
  lowp_policy_t p = pol ? *pol : dflt;
  uint64_t base = p.sr_offset;
  int width;
  size_t i;
  if ((unsigned)rnd >= LOWP_RND_COUNT) return LOWP_EROUND;
  if (lowp_format_validate(f, NULL, 0)) return LOWP_EFORMAT;
  width = lowp_format_width(f);
  for (i = 0; i < n; i++) {
    double r;
    uint64_t b = 0;
    p.sr_offset = base + i;
    (void)lowp_round_f32(&r, x[i], f, &p, rnd);
    (void)lowp_encode(&b, r, f);
    store_bits(bits, i, b, width);
  }
  return LOWP_OK;
}
