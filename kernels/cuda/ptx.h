/* ptx.h -- the PTX strings whose machine code lowp's CPU twins assume (tests/tsass.c compiles them) */
#ifndef LOWP_PTX_H
#define LOWP_PTX_H

/* tf32 rounding to nearest, ties away: not one instruction (kernels/cpu/cvt.c) */
#define LOWP_PTX_CVT_TF32_RNA "cvt.rna.tf32.f32 %0, %1;"

/* fp8 e4m3 mma.sync with fp32 C/D: sm_89+; on sm_90 and sm_100 emulated with
   fp16 HMMAs (lib/model/tc_model.c, FP8_MMA_SYNC) */
#define LOWP_PTX_MMA_E4M3_F32                                                   \
  "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, " \
  "{%8,%9}, {%0,%1,%2,%3};"

#endif
