/* reduce_fast32_int.h -- what the copies of lowp_order_fast32 share (private to reduce_fast32*.c) */

/* reduce_fast32.c holds the design (its opening comment), the baseline
   copy and the dispatch; reduce_fast32_avx2.c and reduce_fast32_avx2b.c
   the AVX2 copy (cpu/reduce_fast32_avx2.h's steps; fp16 and the others,
   bf16 and fp32), reduce_fast32_avx512.c the AVX-512 copy: separate
   translation units, so that a parallel build compiles them side by side
   (the one file they were took 52 s of CPU). */

#ifndef LOWP_REDUCE_FAST32_INT_H
#define LOWP_REDUCE_FAST32_INT_H

#include "cpu.h"
#include "cpu/pairwise_split.h"
#include "cpu/reduce_fast32.h"

#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "status.h"

#include "cpu/acc_steps.h"

enum { OW32 = 128, NV = OW32 / VWF, IRO32 = 256, RB = 16, RB_RO = 4 };

/* how the last rounding goes: fround_to, bf16 on the bits, fp16 by
   vcvtps2ph, or fp32 in a directed mode (FMA32) */
enum { F_OTHER, F_BF16, F_FP16, F_DIR };

/* Everything the loops read. */
typedef struct {
  const float *arow;  /* row i of A (k entries; rows i + 1 .. follow) */
  size_t k, rows;     /* rows of A the pairwise tree runs at once (<= RB) */
  const float *panel; /* k x OW32: columns j0 .. j0 + OW32 of B (zeros past n) */
  const double *pd;   /* the same in binary64 (FMA32 without rp), else NULL */
  const double *ad;   /* with pd: arow in binary64 (broadcast from memory), else NULL */
  tgt_t acc;
  int fmt, rp; /* rp: fma = 0, products rounded to acc first */
  lowp_acc_order_t order;
  size_t block;
} nctx_t;

/* the compile-time knobs of a step: fmt, mode, rp */
#define KP int fmt, int mode, int rp
#define KN fmt, mode, rp

/* one copy: c->rows rows of OW32 outputs (out: rows x OW32) in c's order,
   k >= 1 (cpu/reduce_fast32_body.h's row_) */
void lowp_n32_row_generic(float *out, const nctx_t *c, size_t k);

#if defined(LOWP_ACC_AVX512)
#define LOWP_N32_X86 1
void lowp_n32_row_avx2(float *out, const nctx_t *c, size_t k);  /* fp16, F_OTHER */
void lowp_n32_row_avx2b(float *out, const nctx_t *c, size_t k); /* bf16, F_DIR */
void lowp_n32_row_avx512(float *out, const nctx_t *c, size_t k);
#endif

#endif
