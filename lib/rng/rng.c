/* lowp_rng -- counter-based random numbers (Random123 Philox4x32-10) */

#include "rng/rng.h"

#include <Random123/philox.h>
#include <math.h>

/* ------------------------------------------------------ private helpers */

static philox4x32_ctr_t philox_block(uint64_t seed, uint64_t index, uint32_t stream) {
  philox4x32_ctr_t c = {{(uint32_t)index, (uint32_t)(index >> 32), stream, 0}};
  philox4x32_key_t k = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
  return philox4x32(c, k);
}

/* ----------------------------------------------------------- public API */

uint32_t lowp_rng_u32(uint64_t seed, uint64_t index, uint32_t stream) {
  return philox_block(seed, index, stream).v[0];
}

uint64_t lowp_rng_u64(uint64_t seed, uint64_t index, uint32_t stream) {
  philox4x32_ctr_t r = philox_block(seed, index, stream);
  return ((uint64_t)r.v[1] << 32) | r.v[0];
}

void lowp_rng_init(lowp_rng_t *r, uint64_t seed, uint32_t stream) {
  r->seed = seed;
  r->counter = 0;
  r->stream = stream;
}

uint64_t lowp_rng_next(lowp_rng_t *r) {
  return lowp_rng_u64(r->seed, r->counter++, r->stream);
}

double lowp_rng_uniform(lowp_rng_t *r) {
  return (double)(lowp_rng_next(r) >> 11) * 0x1p-53;
}

double lowp_rng_normal(lowp_rng_t *r) {
  /* u1 in (0, 1] so log(u1) is finite */
  double u1 = 1.0 - lowp_rng_uniform(r);
  double u2 = lowp_rng_uniform(r);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
