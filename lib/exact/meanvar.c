/* lowp_exact_meanvar -- correctly rounded mean and variance (layer-norm statistics) */

/*
 * With S = sum x_i and Q = sum x_i^2 formed exactly, mean = S / n and
 * var = (n Q - S^2) / (n (n - ddof)) are each one division of exact
 * numbers, which MPFR rounds correctly: toward zero at 66 bits with its
 * ternary, i.e. round-to-odd (exact.h), then lowp_round_mpfr. Precisions:
 * S and Q come from the exact accumulator (lowp_acc_get_mpfr sets the
 * precision each needs, at most ~4400 bits); n Q needs prec(Q) + 64 bits,
 * S^2 needs 2 prec(S), and their difference, a multiple of the smaller
 * quantum below the larger magnitude, needs at most the sum of both
 * precisions plus 2: PBIG below. Each step's ternary is checked to be 0.
 */

#include "exact/exact.h"

#include <math.h>

#include "exact/acc.h"
#include "exact/internal.h"
#include "exact/ival.h"

/* ----------------------------------------------------------- public API */

int lowp_exact_meanvar(double *mean, double *var, const double *x, size_t n,
                       unsigned ddof, const lowp_format_t *f,
                       const lowp_policy_t *pol, lowp_rounding_t rnd) {
  lowp_acc_t as, aq;
  mpfr_t S, Q, t, u, r;
  mpfr_prec_t pbig;
  size_t i;
  int st = lowp__exact_check(f, rnd), inexact = 0, tern;
  if (st) return st;
  if (!x || n <= ddof || n == 0) return LOWP_EINVAL;
  lowp_acc_init(&as);
  lowp_acc_init(&aq);
  for (i = 0; i < n; i++) {
    lowp_acc_add(&as, x[i]);
    lowp_acc_add_prod(&aq, x[i], x[i]);
  }
  mpfr_inits2(64, S, Q, t, u, (mpfr_ptr)0);
  mpfr_init2(r, LOWP__ODD_PREC);
  lowp_acc_get_mpfr(S, &as);
  lowp_acc_get_mpfr(Q, &aq);
  if (mean) {
    if (mpfr_nan_p(S) || mpfr_inf_p(S)) mpfr_set(r, S, MPFR_RNDN);
    else {
      tern = mpfr_div_ui(r, S, (unsigned long)n, MPFR_RNDZ);
      lowp__odd_fix(r, tern, mpfr_sgn(S));
    }
    (void)lowp__exact_round_mpfr(mean, r, f, pol, rnd, lowp__exact_index(pol, 0));
  }
  if (var) {
    if (!mpfr_number_p(S) || !mpfr_number_p(Q)) {
      mpfr_set_nan(r); /* inf - inf, or NaN */
    } else {
      pbig = mpfr_get_prec(Q) + 64 + 2 * mpfr_get_prec(S) + 2;
      mpfr_set_prec(t, pbig);
      mpfr_set_prec(u, pbig);
      inexact |= mpfr_mul_ui(t, Q, (unsigned long)n, MPFR_RNDN) != 0; /* n Q */
      inexact |= mpfr_sqr(u, S, MPFR_RNDN) != 0;                      /* S^2 */
      inexact |= mpfr_sub(t, t, u, MPFR_RNDN) != 0;                    /* >= 0 */
      inexact |= mpfr_set_ui(u, (unsigned long)n, MPFR_RNDN) != 0;
      inexact |= mpfr_mul_ui(u, u, (unsigned long)(n - ddof), MPFR_RNDN) != 0;
      tern = mpfr_div(r, t, u, MPFR_RNDZ);
      lowp__odd_fix(r, tern, 1);
    }
    (void)lowp__exact_round_mpfr(var, r, f, pol, rnd, lowp__exact_index(pol, 1));
  }
  mpfr_clears(S, Q, t, u, r, (mpfr_ptr)0);
  return inexact ? LOWP_ERANGE : LOWP_OK; /* cannot happen: precisions above */
}
