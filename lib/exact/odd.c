/* lowp__exact_make_odd -- round-to-odd from a truncated MPFR result; rounding with an SR index */

#include "exact/internal.h"
#include "format/round_mpfr.h"

#include <gmp.h>

void lowp__exact_make_odd(mpfr_ptr x, int tern) { lowp_mpfr_make_odd(x, tern); }

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
