/* omp_inline.h -- whether a kernel's parallel loop should run on the calling thread alone */
#ifndef LOWP_OMP_INLINE_H
#define LOWP_OMP_INLINE_H

#ifdef _OPENMP
#include <omp.h>
#endif

/* 1 inside another active parallel region (a nested region gets one
   thread) or where one thread is all there is: then a kernel runs its loop
   itself rather than open a parallel region. A region of one thread still
   builds a team and ends it with a futex wake (libgomp's team barrier, a
   system call whether or not anyone waits): 1.2 us at top level, 2.9 us
   nested on the 2-core VM, and fp8-quantization --quick opened about 4.9
   million of them, nearly all in its networks' small GEMMs
   (lowp_cnn_gemm_f32 per block of rows, called from its per-config
   parallel loop). The loop's arithmetic is the same either way. */
static inline int lowp_omp_inline(void) {
#ifdef _OPENMP
  return omp_in_parallel() || omp_get_max_threads() == 1;
#else
  return 1;
#endif
}

#endif
