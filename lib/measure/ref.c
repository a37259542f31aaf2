/* lowp_ref -- exact reference values a simulation compares against, rounded once to binary64 */

/* Methods are stated on each function in measure/ref.h. */

#include "measure/ref.h"

#include <math.h>
#include <stdlib.h>

#include <gmp.h>
#include <mpfr.h>

#include "status.h"

#define REF_PREC0 128
#define REF_PRECMAX 65536

/* ----------------------------------------------------------- public API */

int lowp_ref_log_ratio(double *y, double a, double b) {
  mpfr_t q, t;
  mpfr_prec_t w;
  int ok = 0;
  if (!y || !(a > 0) || !(b > 0) || !isfinite(a) || !isfinite(b)) return LOWP_EINVAL;
  if (a == b) { *y = 0; return LOWP_OK; } /* the only rational case */
  mpfr_inits2(REF_PREC0, q, t, (mpfr_ptr)0);
  for (w = REF_PREC0; !ok && w <= REF_PRECMAX; w *= 2) {
    mpfr_exp_t e;
    mpfr_set_prec(q, w);
    mpfr_set_prec(t, w);
    mpfr_set_d(q, a, MPFR_RNDN);
    mpfr_div_d(q, q, b, MPFR_RNDN);
    mpfr_log(t, q, MPFR_RNDN);
    if (mpfr_zero_p(t)) continue; /* a != b: not yet resolved */
    /* error <= 2^(1-w) + 2^(e-w) <= 2^(max(1, e) + 1 - w), e = EXP(t) */
    e = mpfr_get_exp(t);
    ok = mpfr_can_round(t, w - 1 - (e < 1 ? 1 - e : 0) - 1, MPFR_RNDN, MPFR_RNDZ, 54);
    if (ok) *y = mpfr_get_d(t, MPFR_RNDN);
  }
  mpfr_clears(q, t, (mpfr_ptr)0);
  return ok ? LOWP_OK : LOWP_ERANGE;
}

struct lowp_ref_harmonic {
  mpfr_t h, t;
  unsigned long k;
};

lowp_ref_harmonic_t *lowp_ref_harmonic_new(void) {
  lowp_ref_harmonic_t *h = malloc(sizeof *h);
  if (!h) return NULL;
  mpfr_inits2(128, h->h, h->t, (mpfr_ptr)0);
  mpfr_set_ui(h->h, 0, MPFR_RNDN);
  h->k = 0;
  return h;
}

double lowp_ref_harmonic_next(lowp_ref_harmonic_t *h) {
  h->k++;
  mpfr_set_ui(h->t, 1, MPFR_RNDN);
  mpfr_div_ui(h->t, h->t, h->k, MPFR_RNDN);
  mpfr_add(h->h, h->h, h->t, MPFR_RNDN);
  return mpfr_get_d(h->h, MPFR_RNDN);
}

void lowp_ref_harmonic_free(lowp_ref_harmonic_t *h) {
  if (!h) return;
  mpfr_clears(h->h, h->t, (mpfr_ptr)0);
  free(h);
}
