/* lowp__exact_make_odd -- round-to-odd from a truncated MPFR result; rounding with an SR index */

#include "exact/internal.h"

#include <gmp.h>

void lowp__exact_make_odd(mpfr_ptr x, int tern) {
  mpz_t z;
  if (tern == 0 || !mpfr_number_p(x)) return;
  if (mpfr_zero_p(x)) return; /* not produced by RNDZ of a nonzero value */
  mpz_init(z);
  (void)mpfr_get_z_2exp(z, x); /* x = z * 2^k with z of exactly prec(x) bits */
  if (mpz_even_p(z)) {
    if (mpfr_sgn(x) > 0) mpfr_nextabove(x);
    else mpfr_nextbelow(x);
  }
  mpz_clear(z);
}

int lowp__exact_round_mpfr(double *y, mpfr_srcptr x, const lowp_format_t *f,
                           const lowp_policy_t *pol, lowp_rounding_t rnd,
                           uint64_t index) {
  lowp_policy_t p;
  if (pol) p = *pol;
  else {
    static const lowp_policy_t dflt;
    p = dflt;
  }
  p.sr_offset = index;
  return lowp_round_mpfr(y, x, f, &p, rnd);
}
