/* lowp_exact_sum -- correctly rounded sum of binary64 values */

#include "exact/exact.h"

#include "exact/acc.h"
#include "exact/internal.h"

/* ----------------------------------------------------------- public API */

/* One exact accumulation (exact/acc.h), one rounding. */
int lowp_exact_sum(double *y, const double *x, size_t n, const lowp_format_t *f,
                   const lowp_policy_t *pol, lowp_rounding_t rnd) {
  lowp_acc_t acc;
  size_t i;
  int st = lowp__exact_check(f, rnd);
  if (st) return st;
  if (!y || (n && !x)) return LOWP_EINVAL;
  lowp_acc_init(&acc);
  for (i = 0; i < n; i++) lowp_acc_add(&acc, x[i]);
  (void)lowp_acc_round(y, &acc, f, pol, rnd, lowp__exact_index(pol, 0));
  return LOWP_OK;
}
