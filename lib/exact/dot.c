/* lowp_exact_dot -- correctly rounded dot product of binary64 vectors */

#include "exact/exact.h"

#include "exact/acc.h"
#include "exact/internal.h"

/* ----------------------------------------------------------- public API */

/* Exact products (106-bit integer significands) into one exact accumulator,
   one rounding at the end. */
int lowp_exact_dot(double *y, const double *x, size_t incx, const double *w,
                   size_t incw, size_t n, const lowp_format_t *f,
                   const lowp_policy_t *pol, lowp_rounding_t rnd) {
  lowp_acc_t acc;
  size_t i;
  int st = lowp__exact_check(f, rnd);
  if (st) return st;
  if (!y || (n && (!x || !w))) return LOWP_EINVAL;
  lowp_acc_init(&acc);
  for (i = 0; i < n; i++) lowp_acc_add_prod(&acc, x[i * incx], w[i * incw]);
  (void)lowp_acc_round(y, &acc, f, pol, rnd, lowp__exact_index(pol, 0));
  return LOWP_OK;
}
