/* lowp_order_fast32's AVX2 copy (intrinsics, F16C), bf16 and fp32 in the directed modes; same bits: design in reduce_fast32.c */

#include "cpu/reduce_fast32_avx2.h"

#if defined(LOWP_N32_X86)
#define LOWP_N32_CASES(CALL) \
  LOWP_MALL(CALL, F_BF16) LOWP_MDIR(CALL, F_DIR)
#define LOWP_N32_BLOCKS(out, c, k, w) a_blocks(out, c, k, w, F_BF16)
#define SFX _avx2b
/* bf16 keeps 8-term leaves (reduce_fast32_avx2.h): its pairwise row is the bench's nearest to 2x */
#ifndef LOWP_SANITIZED
#define LOWP_N32_BIG(fmt) ((fmt) == F_BF16)
#endif
#include "cpu/reduce_fast32_body.h"
#endif
