/* lowp_round_mpfr -- round an MPFR number to a lowp format in one step */

#include "format/round_mpfr.h"

#include <gmp.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "status.h"

/* ----------------------------------------------------------- public API */

int lowp_round_mpfr(double *y, mpfr_srcptr x, const lowp_format_t *f,
                    const lowp_policy_t *pol, lowp_rounding_t rnd) {
  static const lowp_policy_t dflt;
  mpfr_t t;
  mpz_t z;
  uint64_t sig;
  int64_t e;
  int sticky, neg, tern;
  size_t count = 0;

  if (!pol) pol = &dflt;
  neg = mpfr_signbit(x) != 0;
  if (mpfr_nan_p(x)) return lowp_round_f64(y, neg ? -NAN : NAN, f, pol, rnd);
  if (mpfr_inf_p(x)) return lowp_round_f64(y, neg ? -INFINITY : INFINITY, f, pol, rnd);
  if (mpfr_zero_p(x)) return lowp_round_sig(y, neg, 0, 0, 0, f, pol, rnd, pol->sr_offset);

  /* truncate to 64 bits: the inexact flag is the sticky bit */
  mpfr_init2(t, 64);
  sticky = mpfr_set(t, x, MPFR_RNDZ) != 0;
  /* MPFR: x = 0.1b... * 2^E, so x = 1.b... * 2^(E-1) */
  e = (int64_t)mpfr_get_exp(t) - 1;
  mpz_init(z);
  mpfr_abs(t, t, MPFR_RNDN); /* exact */
  (void)mpfr_get_z_2exp(z, t);  /* |t| = z * 2^k with z of exactly 64 bits */
  sig = 0;
  mpz_export(&sig, &count, -1, sizeof sig, 0, 0, z);
  mpz_clear(z);
  mpfr_clear(t);
  tern = lowp_round_sig(y, neg, e, sig, sticky, f, pol, rnd, pol->sr_offset);
  return tern;
}

int lowp_mpfr_parse(mpfr_ptr x, const char *text) {
  const char *t = text;
  char *end;
  int neg = 0, tern;
  if (!text || !*text) return LOWP_EPARSE;
  if (*t == '+' || *t == '-') { neg = *t == '-'; t++; }
  if (!strcasecmp(t, "inf") || !strcasecmp(t, "infinity")) {
    mpfr_set_inf(x, neg ? -1 : 1);
    return LOWP_OK;
  }
  if (!strcasecmp(t, "nan")) {
    mpfr_set_nan(x);
    mpfr_setsign(x, x, neg, MPFR_RNDN); /* MPFR leaves a NaN's sign unspecified */
    return LOWP_OK;
  }
  /* only digits, '.', exponent, hex prefix: mpfr_strtofr alone would also
     take "nan(...)", "@inf@" and leading blanks */
  if (!strchr("0123456789.", *t)) return LOWP_EPARSE;
  tern = mpfr_strtofr(x, text, &end, 0, MPFR_RNDZ);
  if (end == text || *end != '\0' || mpfr_nan_p(x) || mpfr_inf_p(x))
    return LOWP_EPARSE;
  /* truncated to zero from a nonzero number: MPFR's exponent range was exceeded */
  if (tern != 0 && mpfr_zero_p(x)) return LOWP_EPARSE;
  lowp_mpfr_make_odd(x, tern);
  return LOWP_OK;
}

void lowp_mpfr_make_odd(mpfr_ptr x, int tern) {
  mpz_t z;
  if (tern == 0 || !mpfr_number_p(x) || mpfr_zero_p(x)) return;
  mpz_init(z);
  (void)mpfr_get_z_2exp(z, x); /* x = z * 2^k with z of exactly prec(x) bits */
  if (mpz_even_p(z)) {
    if (mpfr_sgn(x) > 0) mpfr_nextabove(x);
    else mpfr_nextbelow(x);
  }
  mpz_clear(z);
}
