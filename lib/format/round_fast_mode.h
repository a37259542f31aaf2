/* round_fast_mode -- the rounding modes of the fast array paths (round_fast.c, round_fast64.c) */
#ifndef LOWP_ROUND_FAST_MODE_H
#define LOWP_ROUND_FAST_MODE_H

#include "format/format.h"

/* The modes with a fast path, as compile-time constants of the always-inlined
   loop bodies (one specialised loop per mode). */
enum { M_NE, M_NA, M_TZ, M_UP, M_DN, M_TO };

/* rnd as one of them, or -1 (stochastic rounding and anything else: the
   reference loop) */
static inline int lowp_fast_mode(lowp_rounding_t rnd) {
  switch (rnd) {
  case LOWP_RND_NE: return M_NE;
  case LOWP_RND_NA: return M_NA;
  case LOWP_RND_TZ: return M_TZ;
  case LOWP_RND_UP: return M_UP;
  case LOWP_RND_DN: return M_DN;
  case LOWP_RND_TO: return M_TO;
  default: return -1;
  }
}

#endif
