/* lowp_round_mpfr -- round an MPFR number to a lowp format in one step */

#include "format/round_mpfr.h"

#include <gmp.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "format/number.h"
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
  /* lowp's grammar only (format/number.h): mpfr_strtofr alone would also
     take "0b101", "1@3", "nan(...)", "@inf@" and leading blanks */
  if (lowp_number_syntax(text) != LOWP_OK) return LOWP_EPARSE;
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
  {
    /* An exponent of 16 or more digits decides alone: the digits before it
       (fewer than 10^15 of them in any text in memory) move the value by
       fewer than 10^15 decades, so the number is zero, or beyond MPFR's
       range on the exponent's side. mpfr_strtofr must not see it: its
       exponent arithmetic wraps near LONG_MIN ("0.00001e-9223372036854775807"
       reads as 2^(2^62), found by fuzz/fuzz_number.c). */
    int hex = t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
    const char *m = hex ? t + 2 : t, *q;
    int nonzero = 0, eneg = 0;
    size_t edig = 0;
    for (q = m; *q && *q != (hex ? 'p' : 'e') && *q != (hex ? 'P' : 'E'); q++)
      if (*q != '.' && *q != '0') nonzero = 1;
    if (*q) {
      q++;
      if (*q == '+' || *q == '-') eneg = *q++ == '-';
      while (*q == '0') q++;
      edig = strlen(q);
    }
    if (edig >= 16) {
      if (!nonzero) mpfr_set_zero(x, neg ? -1 : 1);
      else if (eneg) { /* below MPFR's range: as below */
        mpfr_set_zero(x, neg ? -1 : 1);
        if (neg) mpfr_nextbelow(x); else mpfr_nextabove(x);
      } else { /* beyond MPFR's range: as below */
        mpfr_set_inf(x, neg ? -1 : 1);
        if (neg) mpfr_nextabove(x); else mpfr_nextbelow(x);
      }
      return LOWP_OK;
    }
  }
  mpfr_clear_flags();
  tern = mpfr_strtofr(x, text, &end, 0, MPFR_RNDZ);
  if (end == text || *end != '\0' || mpfr_nan_p(x)) return LOWP_EPARSE;
  if (mpfr_overflow_p() || mpfr_inf_p(x)) {
    /* beyond MPFR's exponent range (|x| >= 2^(2^30) by default): the
       largest MPFR number of the sign stands in; it is beyond every lowp
       format, so it rounds as the exact value would (format/number.h) */
    mpfr_set_inf(x, neg ? -1 : 1);
    if (neg) mpfr_nextabove(x); else mpfr_nextbelow(x);
    return LOWP_OK;
  }
  if (tern != 0 && mpfr_zero_p(x)) {
    /* below MPFR's range: the smallest MPFR number of the sign stands in,
       below half of every lowp format's smallest subnormal */
    mpfr_set_zero(x, neg ? -1 : 1);
    if (neg) mpfr_nextbelow(x); else mpfr_nextabove(x);
    return LOWP_OK;
  }
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
