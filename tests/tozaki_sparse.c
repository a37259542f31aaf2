/* tozaki_sparse -- the sparse slice products of the exact GEMM (lib/exact/ozaki_sparse.c), every ISA copy */

/*
 * lowp__spmm_a (C = S B) and lowp__spmm_b (C = A S) run one of three
 * compiled copies of their row kernels (baseline, AVX2, AVX-512F), chosen by
 * lowp_cpu_isa, which LOWP_ISA limits. On integer-valued slices within the
 * bit budget every copy must give the exact product: each is checked here
 * against a plain triple loop (exact: |sums| < 2^53), under each limit, on
 * shapes whose rows are empty, short and longer than a vector, with n not a
 * multiple of any vector width.
 *
 * Run: ctest --test-dir build -R tozaki_sparse
 */

#include "cpu.h"
#include "exact/ozaki.h"
#include "rng/rng.h"
#include "testutil.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static lowp_rng_t rng; /* Philox (lib/rng), from the test seed */
static uint64_t next64(void) { return lowp_rng_next(&rng); }

/* x (rows x cols): integers in [-2^20, 2^20], nonzero with probability
   density/64; row 1 left empty */
static void sparse_fill(double *x, size_t rows, size_t cols, unsigned density) {
  size_t i;
  for (i = 0; i < rows * cols; i++) {
    uint64_t r = next64();
    x[i] = (r & 63u) < density && i / cols != 1 ? (double)((int64_t)((r >> 8) % 2097153u) - 1048576) : 0.0;
  }
}

int main(void) {
  const lowp_isa_t isas[] = {LOWP_ISA_AVX512, LOWP_ISA_AVX2, LOWP_ISA_GENERIC};
  const size_t m = 37, n = 301, k = 53;
  double *s1 = malloc(m * k * sizeof *s1), *b = malloc(k * n * sizeof *b);
  double *a = malloc(m * k * sizeof *a), *s2 = malloc(k * n * sizeof *s2);
  double *c = malloc(m * n * sizeof *c), *r1 = calloc(m * n, sizeof *r1), *r2 = calloc(m * n, sizeof *r2);
  lowp__csr_t csa, csb;
  size_t v, i, j, l;
  lowp_test_start("tozaki_sparse");
  lowp_rng_init(&rng, lowp_test_seed(), 0);
  memset(&csa, 0, sizeof csa);
  memset(&csb, 0, sizeof csb);
  if (!lowp_test_check(s1 && b && a && s2 && c && r1 && r2, "allocation")) return lowp_test_end();
  sparse_fill(s1, m, k, 12);
  sparse_fill(s2, k, n, 6);
  for (i = 0; i < k * n; i++) b[i] = (double)((int64_t)(next64() % 2097153u) - 1048576);
  for (i = 0; i < m * k; i++) a[i] = (double)((int64_t)(next64() % 2097153u) - 1048576);
  for (i = 0; i < m; i++) /* the reference products, in double: every sum exact */
    for (l = 0; l < k; l++)
      for (j = 0; j < n; j++) {
        r1[i * n + j] += s1[i * k + l] * b[l * n + j];
        r2[i * n + j] += a[i * k + l] * s2[l * n + j];
      }
  lowp_test_check(lowp__csr_build(&csa, s1, m, k) == 0 && lowp__csr_build(&csb, s2, k, n) == 0, "csr built");
  lowp_test_check(csa.nnz > 0 && csa.nnz < m * k / 2 && csb.nnz > 0 && csb.nnz < k * n / 4,
                  "sparse operands (%zu, %zu nonzeros)", csa.nnz, csb.nnz);
  for (v = 0; v < sizeof isas / sizeof isas[0]; v++) {
    lowp_cpu_isa_limit(isas[v]);
    for (i = 0; i < m * n; i++) c[i] = 0.0; /* rows without nonzeros are not written */
    lowp__spmm_a(c, &csa, b, m, n, k);
    lowp_test_check(memcmp(c, r1, m * n * sizeof *c) == 0, "S B exact with the %s copy",
                    lowp_isa_name(lowp_cpu_isa(0)));
    for (i = 0; i < m * n; i++) c[i] = -1.0; /* every row written */
    lowp__spmm_b(c, a, &csb, m, n, k);
    lowp_test_check(memcmp(c, r2, m * n * sizeof *c) == 0, "A S exact with the %s copy",
                    lowp_isa_name(lowp_cpu_isa(0)));
  }
  lowp__csr_free(&csa);
  lowp__csr_free(&csb);
  free(s1); free(b); free(a); free(s2); free(c); free(r1); free(r2);
  return lowp_test_end();
}
