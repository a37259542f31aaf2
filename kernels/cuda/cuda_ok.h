/* cuda_ok.h -- the one CUDA error idiom of kernels/cuda: if (!lowp_cuda_ok(call)) ...; and the device
   buffer that grows to a size (lowp_cuda_grow), which the Ozaki GEMMs keep between calls */
#ifndef LOWP_CUDA_OK_H
#define LOWP_CUDA_OK_H

#include <cuda_runtime.h>

#include "status.h"

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

/* *p holds at least need elements of T on the device (*cap: what it holds): freed and allocated
   again when need > *cap; LOWP_OK, LOWP_EIO (the free failed), LOWP_ENOMEM (*p NULL, *cap 0) */
template <typename T>
static int lowp_cuda_grow(T **p, size_t *cap, size_t need) {
  if (need <= *cap) return LOWP_OK;
  if (*p && !lowp_cuda_ok(cudaFree(*p))) return LOWP_EIO;
  *p = nullptr;
  *cap = 0;
  if (!lowp_cuda_ok(cudaMalloc((void **)p, need * sizeof(T)))) {
    *p = nullptr;
    return LOWP_ENOMEM;
  }
  *cap = need;
  return LOWP_OK;
}

#endif
