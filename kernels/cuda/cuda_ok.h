/* cuda_ok.h -- the one CUDA error idiom of kernels/cuda: if (!lowp_cuda_ok(call)) ... */
#ifndef LOWP_CUDA_OK_H
#define LOWP_CUDA_OK_H

#include <cuda_runtime.h>

/* true if a CUDA runtime call succeeded. On failure the error is read back
   (cudaGetLastError), so that a failed call does not surface again in the
   next, unrelated check (a sticky error, a lost context, stays whatever is
   done: every later call fails too). Every call in kernels/cuda is checked
   this way; the caller returns its status (LOWP_EIO, LOWP_ENOMEM, ...) and,
   where it has one, fills err. */
static inline bool lowp_cuda_ok(cudaError_t e) {
  if (e == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}

#endif
