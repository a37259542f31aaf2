/* cublas_lazy.h -- cuBLAS and cuBLASLt opened on their first call (dlopen), not at program start */
#ifndef LOWP_CUBLAS_LAZY_H
#define LOWP_CUBLAS_LAZY_H

/*
 * Linked as ordinary libraries, libcublas and libcublasLt are mapped and
 * relocated when lowp starts: 217 MB resident and 0.1-1.8 s for every
 * command, `lowp formats` included, on a machine with or without a GPU
 * (issue 34). The files of kernels/cuda include this header instead of
 * cublas_v2.h and cublasLt.h: each cuBLAS function they call becomes a
 * call through lowp_cublas_sym, which opens the library on the first call
 * (kernels/cuda/cublas_lazy.cu). The function's type is the header's own
 * (decltype), so the arguments convert exactly as in a direct call; a
 * library that cannot be opened makes the call return
 * CUBLAS_STATUS_NOT_INITIALIZED, which every caller already handles as a
 * failed cuBLAS call (lowp_cublas_error says why).
 */

#include <cublasLt.h>
#include <cublas_v2.h>
#include <string.h>

/* NAME's address in libcublas (lt = 0) or libcublasLt (lt = 1), the
   library opened on the first call; NULL if it cannot be opened or lacks NAME */
void *lowp_cublas_sym(int lt, const char *name);
/* why the last lowp_cublas_sym returned NULL ("" if it did not) */
const char *lowp_cublas_error(void);

template <typename F> struct lowp_cublas_fn;
template <typename... A> struct lowp_cublas_fn<cublasStatus_t (*)(A...)> {
  static cublasStatus_t call(int lt, const char *name, A... a) {
    void *p = lowp_cublas_sym(lt, name);
    cublasStatus_t (*fn)(A...);
    if (!p) return CUBLAS_STATUS_NOT_INITIALIZED;
    memcpy(&fn, &p, sizeof fn); /* POSIX: a dlsym result converts to a function pointer */
    return fn(a...);
  }
};
/* a call of NAME of type T (a pointer to the header's function) */
#define LOWP_CUBLAS_CALL(lt, T, name, ...) lowp_cublas_fn<T>::call(lt, #name, __VA_ARGS__)
#define LOWP_CUBLAS(name, ...) LOWP_CUBLAS_CALL(0, decltype(&name), name, __VA_ARGS__)
#define LOWP_CUBLASLT(name, ...) LOWP_CUBLAS_CALL(1, decltype(&name), name, __VA_ARGS__)

/* cublas_api.h also has C++ overloads of these two (a cudaDataType compute
   type): the one lowp calls, with cublasComputeType_t, named by its type */
typedef cublasStatus_t (*lowp_cublas_gemmex_t)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                               int, int, int, const void *, const void *,
                                               cudaDataType, int, const void *, cudaDataType, int,
                                               const void *, void *, cudaDataType, int,
                                               cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*lowp_cublas_gemmsbex_t)(cublasHandle_t, cublasOperation_t,
                                                 cublasOperation_t, int, int, int, const void *,
                                                 const void *, cudaDataType, int, long long int,
                                                 const void *, cudaDataType, int, long long int,
                                                 const void *, void *, cudaDataType, int,
                                                 long long int, int, cublasComputeType_t,
                                                 cublasGemmAlgo_t);

/* every cuBLAS function kernels/cuda calls (a name inside its own macro is
   not expanded again, so each names the header's declaration) */
#undef cublasCreate
#undef cublasDestroy
#undef cublasDgemm
#define cublasCreate(...) LOWP_CUBLAS(cublasCreate_v2, __VA_ARGS__)
#define cublasDestroy(...) LOWP_CUBLAS(cublasDestroy_v2, __VA_ARGS__)
#define cublasDgemm(...) LOWP_CUBLAS(cublasDgemm_v2, __VA_ARGS__)
#define cublasSetMathMode(...) LOWP_CUBLAS(cublasSetMathMode, __VA_ARGS__)
#define cublasGemmEx(...) LOWP_CUBLAS_CALL(0, lowp_cublas_gemmex_t, cublasGemmEx, __VA_ARGS__)
#define cublasGemmStridedBatchedEx(...) \
  LOWP_CUBLAS_CALL(0, lowp_cublas_gemmsbex_t, cublasGemmStridedBatchedEx, __VA_ARGS__)
#define cublasLtCreate(...) LOWP_CUBLASLT(cublasLtCreate, __VA_ARGS__)
#define cublasLtDestroy(...) LOWP_CUBLASLT(cublasLtDestroy, __VA_ARGS__)
#define cublasLtMatmul(...) LOWP_CUBLASLT(cublasLtMatmul, __VA_ARGS__)
#define cublasLtMatmulAlgoConfigGetAttribute(...) \
  LOWP_CUBLASLT(cublasLtMatmulAlgoConfigGetAttribute, __VA_ARGS__)
#define cublasLtMatmulAlgoGetHeuristic(...) LOWP_CUBLASLT(cublasLtMatmulAlgoGetHeuristic, __VA_ARGS__)
#define cublasLtMatmulDescCreate(...) LOWP_CUBLASLT(cublasLtMatmulDescCreate, __VA_ARGS__)
#define cublasLtMatmulDescDestroy(...) LOWP_CUBLASLT(cublasLtMatmulDescDestroy, __VA_ARGS__)
#define cublasLtMatmulDescSetAttribute(...) LOWP_CUBLASLT(cublasLtMatmulDescSetAttribute, __VA_ARGS__)
#define cublasLtMatmulPreferenceCreate(...) LOWP_CUBLASLT(cublasLtMatmulPreferenceCreate, __VA_ARGS__)
#define cublasLtMatmulPreferenceDestroy(...) \
  LOWP_CUBLASLT(cublasLtMatmulPreferenceDestroy, __VA_ARGS__)
#define cublasLtMatmulPreferenceSetAttribute(...) \
  LOWP_CUBLASLT(cublasLtMatmulPreferenceSetAttribute, __VA_ARGS__)
#define cublasLtMatrixLayoutCreate(...) LOWP_CUBLASLT(cublasLtMatrixLayoutCreate, __VA_ARGS__)
#define cublasLtMatrixLayoutDestroy(...) LOWP_CUBLASLT(cublasLtMatrixLayoutDestroy, __VA_ARGS__)

#endif
