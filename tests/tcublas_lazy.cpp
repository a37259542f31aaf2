/* tcublas_lazy -- cuBLAS and cuBLASLt opened on first use (kernels/cuda/cublas_lazy.h), calls forwarded intact */

/*
 * A program linked like lowp has no cuBLAS library mapped until it makes
 * its first cuBLAS call (issue 34: linked, they held 217 MB of every
 * command). Then host-only cuBLASLt calls (descriptors: no GPU needed) go
 * through the forwarding and their values come back through another
 * forwarded call: 64-bit sizes, enums and pointers arrive unchanged. A name
 * the library lacks gives NULL and a message naming it.
 *
 * Build: g++ with -I/usr/local/cuda/include (CMake does it; no GPU needed).
 * Run:   ctest --test-dir build -R tcublas_lazy
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "testutil.h"
}

#ifdef LOWP_HAVE_CUDA
#include "cuda/cublas_lazy.h"

/* 1 if a library whose path contains name is mapped into this process */
static int mapped(const char *name) {
  char line[1024];
  int found = 0;
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (strstr(line, name)) found = 1;
  fclose(f);
  return found;
}

int main(void) {
  cublasLtMatrixLayout_t lay = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t ta = -1;
  cublasOperation_t t = CUBLAS_OP_T;
  size_t w = 0;
  cublasStatus_t s;
  lowp_test_start("tcublas_lazy");
  lowp_test_check(mapped("libcublas") == 0, "libcublas is mapped before any cuBLAS call");

  s = cublasLtMatrixLayoutCreate(&lay, CUDA_R_16F, 70, 33, 80);
  if (s == CUBLAS_STATUS_NOT_INITIALIZED && *lowp_cublas_error())
    lowp_test_skip(lowp_cublas_error()); /* the CUDA libraries are not on this machine */
  lowp_test_check(s == CUBLAS_STATUS_SUCCESS, "cublasLtMatrixLayoutCreate: status %d", (int)s);
  lowp_test_check(mapped("libcublasLt") == 1, "libcublasLt not mapped after a call");
  s = LOWP_CUBLASLT(cublasLtMatrixLayoutGetAttribute, lay, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof rows, &w);
  lowp_test_check(s == CUBLAS_STATUS_SUCCESS && rows == 70 && w == sizeof rows, "rows %llu (status %d)",
                  (unsigned long long)rows, (int)s);
  s = LOWP_CUBLASLT(cublasLtMatrixLayoutGetAttribute, lay, CUBLASLT_MATRIX_LAYOUT_COLS, &cols, sizeof cols, &w);
  lowp_test_check(s == CUBLAS_STATUS_SUCCESS && cols == 33, "cols %llu (status %d)", (unsigned long long)cols,
                  (int)s);
  s = LOWP_CUBLASLT(cublasLtMatrixLayoutGetAttribute, lay, CUBLASLT_MATRIX_LAYOUT_LD, &ld, sizeof ld, &w);
  lowp_test_check(s == CUBLAS_STATUS_SUCCESS && ld == 80, "ld %lld (status %d)", (long long)ld, (int)s);
  lowp_test_check(cublasLtMatrixLayoutDestroy(lay) == CUBLAS_STATUS_SUCCESS, "layout destroy");

  s = cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  lowp_test_check(s == CUBLAS_STATUS_SUCCESS, "cublasLtMatmulDescCreate: status %d", (int)s);
  s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t);
  lowp_test_check(s == CUBLAS_STATUS_SUCCESS, "TRANSA set: status %d", (int)s);
  s = LOWP_CUBLASLT(cublasLtMatmulDescGetAttribute, op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta, &w);
  lowp_test_check(s == CUBLAS_STATUS_SUCCESS && ta == (int32_t)CUBLAS_OP_T, "TRANSA %d (status %d)", (int)ta,
                  (int)s);
  lowp_test_check(cublasLtMatmulDescDestroy(op) == CUBLAS_STATUS_SUCCESS, "descriptor destroy");

  /* cuBLAS proper: found (its handle needs a GPU, so only the lookup is checked) */
  lowp_test_check(lowp_cublas_sym(0, "cublasCreate_v2") != nullptr, "cublasCreate_v2 not found: %s",
                  lowp_cublas_error());
  lowp_test_check(mapped("libcublas.so") == 1, "libcublas not mapped after a lookup");
  lowp_test_check(lowp_cublas_sym(1, "lowp_no_such_function") == nullptr &&
                      strstr(lowp_cublas_error(), "lowp_no_such_function") != nullptr,
                  "an unknown name: '%s'", lowp_cublas_error());
  return lowp_test_end();
}
#else
int main(void) {
  lowp_test_start("tcublas_lazy");
  lowp_test_skip("built without CUDA");
  return 77;
}
#endif
