/* lowp_exact_gemv -- correctly rounded matrix-vector product */

#include "exact/exact.h"

#include "exact/acc.h"
#include "exact/internal.h"

/* ----------------------------------------------------------- public API */

/* A gemv is a gemm with one column: the same code, so the fast path and its
   tests cover both. */
int lowp_exact_gemv(double *y, const double *a, const double *x, const double *y0,
                    size_t m, size_t n, const lowp_format_t *f,
                    const lowp_policy_t *pol, lowp_rounding_t rnd) {
  return lowp_exact_gemm(y, a, x, y0, m, 1, n, f, pol, rnd);
}
