/* lowp_master -- weight updates: low-precision weights, stochastic rounding, fp32 master copies */

#include "amp/master.h"

#include "rng/rng.h"
#include "status.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

/* Values of f must be fp32 values for the float interface. */
static int fits_fp32(const lowp_format_t *f) {
  if (!f || lowp_format_validate(f, NULL, 0) != 0) return 0;
  return f->precision <= 24 && f->emax <= 127 && f->emin - f->precision >= -126 - 24;
}

static float round_to(float x, const lowp_format_t *f) {
  double y;
  lowp_round_f32(&y, x, f, NULL, LOWP_RND_NE);
  return (float)y;
}

/* --------------------------------------------------------- public API */

float lowp_sr_bf16_llmc(float x, uint32_t random) {
  uint32_t bits, threshold = random & 0xFFFFu;
  double y;
  memcpy(&bits, &x, sizeof bits);
  if (isfinite(x))
    bits = ((bits & 0xFFFFu) > threshold) ? (bits | 0xFFFFu) : (bits & ~0xFFFFu);
  memcpy(&x, &bits, sizeof x);
  /* __float2bfloat16_rn: nearest even. With the low 16 bits all ones the
     value lies strictly above the midpoint, so this rounds away from zero
     (or to inf past bf16's largest finite value, as the CUDA intrinsic does). */
  lowp_round_f32(&y, x, &LOWP_FMT_BF16, NULL, LOWP_RND_NE);
  return (float)y;
}

int lowp_mw_add_rn(float *w, const float *d, size_t n, const lowp_format_t *f) {
  size_t i;
  if (n > 0 && (!w || !d)) return LOWP_EINVAL;
  if (!fits_fp32(f)) return LOWP_EFORMAT;
  for (i = 0; i < n; i++) w[i] = round_to(w[i] + d[i], f);
  return LOWP_OK;
}

int lowp_mw_add_sr_llmc(float *w, const float *d, size_t n, uint64_t seed, uint64_t offset) {
  size_t i;
  if (n > 0 && (!w || !d)) return LOWP_EINVAL;
  for (i = 0; i < n; i++)
    w[i] = lowp_sr_bf16_llmc(w[i] + d[i], lowp_rng_u32(seed, offset + i, LOWP_MW_STREAM));
  return LOWP_OK;
}

int lowp_mw_add_sr_exact(float *w, const float *d, size_t n, const lowp_format_t *f,
                         int sr_bits, uint64_t seed, uint64_t offset) {
  size_t i;
  lowp_policy_t pol;
  if (n > 0 && (!w || !d)) return LOWP_EINVAL;
  if (!fits_fp32(f)) return LOWP_EFORMAT;
  if (sr_bits < 0 || sr_bits > 32) return LOWP_EINVAL;
  memset(&pol, 0, sizeof pol);
  pol.sr_bits = sr_bits;
  pol.sr_seed = seed;
  for (i = 0; i < n; i++) {
    double y;
    pol.sr_offset = offset + i;
    lowp_round_f64(&y, (double)w[i] + (double)d[i], f, &pol, LOWP_RND_SR);
    w[i] = (float)y;
  }
  return LOWP_OK;
}

int lowp_mw_add_master(float *m, float *w, const float *d, size_t n, const lowp_format_t *f) {
  size_t i;
  if (n > 0 && (!m || !d)) return LOWP_EINVAL;
  if (!fits_fp32(f)) return LOWP_EFORMAT;
  for (i = 0; i < n; i++) {
    m[i] = m[i] + d[i];
    if (w) w[i] = round_to(m[i], f);
  }
  return LOWP_OK;
}
