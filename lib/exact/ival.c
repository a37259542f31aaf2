/* lowp__ival -- MPFR intervals with strict ends, and deciding the round-to-odd of their content */

#include "exact/ival.h"

#include <gmp.h>

#include "exact/internal.h"

/* ------------------------------------------------------ private helpers */

static int is_odd(mpfr_srcptr x) {
  mpz_t z;
  int odd;
  mpz_init(z);
  (void)mpfr_get_z_2exp(z, x);
  odd = mpz_odd_p(z);
  mpz_clear(z);
  return odd;
}

/* ro(v): round to odd at the precision of out */
static void ro(mpfr_ptr out, mpfr_srcptr v) {
  int t = mpfr_set(out, v, MPFR_RNDZ);
  lowp__exact_make_odd(out, t);
}

/* ro of the numbers just above (dir > 0) or just below (dir < 0) v */
static void ro_side(mpfr_ptr out, mpfr_srcptr v, int dir) {
  int t = mpfr_set(out, v, MPFR_RNDZ);
  if (t != 0) { lowp__exact_make_odd(out, t); return; }
  /* v is representable: the gap next to it has v and its neighbour as
     ends; the numbers inside round to whichever end is odd */
  if (!is_odd(out)) {
    if (dir > 0) mpfr_nextabove(out);
    else mpfr_nextbelow(out);
  }
}

static void tiny_or_huge(mpfr_ptr out, int sign, int huge) {
  mpfr_set_ui_2exp(out, 1, huge ? 1101 : -1151, MPFR_RNDN);
  if (sign < 0) mpfr_neg(out, out, MPFR_RNDN);
}

/* ----------------------------------------------------------- public API */

void lowp__iv_init(lowp__iv_t *v, mpfr_prec_t p) {
  mpfr_init2(v->lo, p);
  mpfr_init2(v->hi, p);
  v->slo = v->shi = 0;
}

void lowp__iv_clear(lowp__iv_t *v) {
  mpfr_clear(v->lo);
  mpfr_clear(v->hi);
}

void lowp__iv_set_prec(lowp__iv_t *v, mpfr_prec_t p) {
  mpfr_set_prec(v->lo, p);
  mpfr_set_prec(v->hi, p);
  v->slo = v->shi = 0;
}

void lowp__iv_set_d(lowp__iv_t *v, double x) {
  v->slo = mpfr_set_d(v->lo, x, MPFR_RNDD) != 0;
  v->shi = mpfr_set_d(v->hi, x, MPFR_RNDU) != 0;
}

void lowp__iv_set_mpfr(lowp__iv_t *v, mpfr_srcptr x) {
  v->slo = mpfr_set(v->lo, x, MPFR_RNDD) != 0;
  v->shi = mpfr_set(v->hi, x, MPFR_RNDU) != 0;
}

void lowp__iv_sqrt(lowp__iv_t *r, const lowp__iv_t *a) {
  int sl = a->slo, sh = a->shi; /* sqrt is increasing */
  sl |= mpfr_sqrt(r->lo, a->lo, MPFR_RNDD) != 0;
  sh |= mpfr_sqrt(r->hi, a->hi, MPFR_RNDU) != 0;
  r->slo = sl;
  r->shi = sh;
}

void lowp__iv_add(lowp__iv_t *r, const lowp__iv_t *a, const lowp__iv_t *b) {
  int sl = a->slo || b->slo, sh = a->shi || b->shi;
  sl |= mpfr_add(r->lo, a->lo, b->lo, MPFR_RNDD) != 0;
  sh |= mpfr_add(r->hi, a->hi, b->hi, MPFR_RNDU) != 0;
  r->slo = sl;
  r->shi = sh;
}

void lowp__iv_sub(lowp__iv_t *r, const lowp__iv_t *a, const lowp__iv_t *b) {
  int sl = a->slo || b->shi, sh = a->shi || b->slo;
  mpfr_t t;
  mpfr_init2(t, mpfr_get_prec(r->lo));
  sl |= mpfr_sub(t, a->lo, b->hi, MPFR_RNDD) != 0;
  sh |= mpfr_sub(r->hi, a->hi, b->lo, MPFR_RNDU) != 0;
  mpfr_set(r->lo, t, MPFR_RNDD);
  mpfr_clear(t);
  r->slo = sl;
  r->shi = sh;
}

void lowp__iv_exp(lowp__iv_t *r, const lowp__iv_t *a) {
  int sl = a->slo, sh = a->shi;
  sl |= mpfr_exp(r->lo, a->lo, MPFR_RNDD) != 0;
  sh |= mpfr_exp(r->hi, a->hi, MPFR_RNDU) != 0;
  r->slo = sl;
  r->shi = sh;
}

void lowp__iv_log(lowp__iv_t *r, const lowp__iv_t *a) {
  int sl = a->slo, sh = a->shi;
  sl |= mpfr_log(r->lo, a->lo, MPFR_RNDD) != 0;
  sh |= mpfr_log(r->hi, a->hi, MPFR_RNDU) != 0;
  r->slo = sl;
  r->shi = sh;
}

void lowp__iv_erfc(lowp__iv_t *r, const lowp__iv_t *a) {
  int sl = a->shi, sh = a->slo;
  mpfr_t t;
  mpfr_init2(t, mpfr_get_prec(r->lo));
  sl |= mpfr_erfc(t, a->hi, MPFR_RNDD) != 0;
  sh |= mpfr_erfc(r->hi, a->lo, MPFR_RNDU) != 0;
  mpfr_set(r->lo, t, MPFR_RNDD);
  mpfr_clear(t);
  r->slo = sl;
  r->shi = sh;
}

void lowp__iv_div(lowp__iv_t *r, const lowp__iv_t *a, const lowp__iv_t *b) {
  /* b > 0. a >= 0: [a.lo/b.hi, a.hi/b.lo]; a <= 0: [a.lo/b.lo, a.hi/b.hi];
     a straddling 0: [a.lo/b.lo, a.hi/b.lo] */
  mpfr_t lo, hi;
  int sl, sh;
  mpfr_inits2(mpfr_get_prec(r->lo), lo, hi, (mpfr_ptr)0);
  if (mpfr_sgn(a->lo) >= 0) {
    sl = a->slo || b->shi;
    sh = a->shi || b->slo;
    sl |= mpfr_div(lo, a->lo, b->hi, MPFR_RNDD) != 0;
    sh |= mpfr_div(hi, a->hi, b->lo, MPFR_RNDU) != 0;
  } else if (mpfr_sgn(a->hi) <= 0) {
    sl = a->slo || b->slo;
    sh = a->shi || b->shi;
    sl |= mpfr_div(lo, a->lo, b->lo, MPFR_RNDD) != 0;
    sh |= mpfr_div(hi, a->hi, b->hi, MPFR_RNDU) != 0;
  } else {
    sl = a->slo || b->slo;
    sh = a->shi || b->slo;
    sl |= mpfr_div(lo, a->lo, b->lo, MPFR_RNDD) != 0;
    sh |= mpfr_div(hi, a->hi, b->lo, MPFR_RNDU) != 0;
  }
  mpfr_set(r->lo, lo, MPFR_RNDD);
  mpfr_set(r->hi, hi, MPFR_RNDU);
  r->slo = sl;
  r->shi = sh;
  mpfr_clears(lo, hi, (mpfr_ptr)0);
}

void lowp__iv_mul_d(lowp__iv_t *r, const lowp__iv_t *a, double x) {
  mpfr_t lo, hi;
  int sl, sh;
  mpfr_inits2(mpfr_get_prec(r->lo), lo, hi, (mpfr_ptr)0);
  if (x >= 0) {
    sl = a->slo; sh = a->shi;
    sl |= mpfr_mul_d(lo, a->lo, x, MPFR_RNDD) != 0;
    sh |= mpfr_mul_d(hi, a->hi, x, MPFR_RNDU) != 0;
  } else {
    sl = a->shi; sh = a->slo;
    sl |= mpfr_mul_d(lo, a->hi, x, MPFR_RNDD) != 0;
    sh |= mpfr_mul_d(hi, a->lo, x, MPFR_RNDU) != 0;
  }
  if (x == 0) sl = sh = 0;
  mpfr_set(r->lo, lo, MPFR_RNDD);
  mpfr_set(r->hi, hi, MPFR_RNDU);
  r->slo = sl;
  r->shi = sh;
  mpfr_clears(lo, hi, (mpfr_ptr)0);
}

int lowp__iv_decide(mpfr_ptr out, const lowp__iv_t *v) {
  mpfr_t L, H;
  int ok, slo = v->slo, shi = v->shi;
  mpfr_set_prec(out, LOWP__ODD_PREC);
  if (mpfr_nan_p(v->lo) || mpfr_nan_p(v->hi) || mpfr_greater_p(v->lo, v->hi)) return 0;
  if (mpfr_equal_p(v->lo, v->hi) && !slo && !shi) { ro(out, v->lo); return 1; }
  /* strictly positive (or negative) and below 2^-1150 in magnitude, or
     beyond 2^1100: one representative rounds like every such value */
  if ((mpfr_sgn(v->lo) > 0 || (mpfr_zero_p(v->lo) && slo)) &&
      mpfr_cmp_ui_2exp(v->hi, 1, -1150) < 0) { tiny_or_huge(out, 1, 0); return 1; }
  if ((mpfr_sgn(v->hi) < 0 || (mpfr_zero_p(v->hi) && shi)) &&
      mpfr_cmp_si_2exp(v->lo, -1, -1150) > 0) { tiny_or_huge(out, -1, 0); return 1; }
  if (mpfr_cmp_ui_2exp(v->lo, 1, 1100) > 0) { tiny_or_huge(out, 1, 1); return 1; }
  if (mpfr_cmp_si_2exp(v->hi, -1, 1100) < 0) { tiny_or_huge(out, -1, 1); return 1; }
  /* an interval reaching zero from both sides (or touching it) is not
     decided: MPFR has no smallest number to round toward */
  if (mpfr_sgn(v->lo) <= 0 && mpfr_sgn(v->hi) >= 0) return 0;
  if (mpfr_inf_p(v->lo) || mpfr_inf_p(v->hi)) return 0;
  mpfr_inits2(LOWP__ODD_PREC, L, H, (mpfr_ptr)0);
  if (slo) ro_side(L, v->lo, 1); else ro(L, v->lo);
  if (shi) ro_side(H, v->hi, -1); else ro(H, v->hi);
  ok = mpfr_equal_p(L, H);
  if (ok) mpfr_set(out, L, MPFR_RNDN);
  mpfr_clears(L, H, (mpfr_ptr)0);
  return ok;
}

void lowp__odd_fix(mpfr_ptr x, int tern, int sign) {
  if (tern != 0 && mpfr_zero_p(x)) { tiny_or_huge(x, sign, 0); return; }
  if (tern != 0 && mpfr_inf_p(x)) { tiny_or_huge(x, sign, 1); return; }
  lowp__exact_make_odd(x, tern);
}
