/* lowp_order_fast32's AVX2 copy (intrinsics, F16C), fp16 and the accumulators rounded by ra_round; same bits: design in reduce_fast32.c */

#include "cpu/reduce_fast32_avx2.h"

#if defined(LOWP_N32_X86)
#define LOWP_N32_CASES(CALL) \
  CALL(F_OTHER, c->acc.mode, 0, 0) CALL(F_OTHER, c->acc.mode, 1, 1) LOWP_MALL(CALL, F_FP16)
#define LOWP_N32_BLOCKS(out, c, k, w) a_blocks(out, c, k, w, F_FP16)
#define SFX _avx2
#include "cpu/reduce_fast32_body.h"
#endif
