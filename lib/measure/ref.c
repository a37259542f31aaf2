/* lowp_ref -- exact reference values a simulation compares against, rounded once to binary64 */

/* Methods are stated on each function in measure/ref.h. */

#include "measure/ref.h"

#include <math.h>
#include <stdlib.h>

#include <gmp.h>
#include <mpfr.h>

#include "format/round_mpfr.h"
#include "status.h"

#define REF_PREC0 128
#define REF_PRECMAX 65536

/* ----------------------------------------------------------- public API */

int lowp_ref_log_ratio(double *y, double a, double b, const lowp_format_t *f,
                       lowp_rounding_t rnd) {
  mpfr_t q, t;
  mpfr_prec_t w;
  int ok = 0;
  if (!y || !(a > 0) || !(b > 0) || !isfinite(a) || !isfinite(b)) return LOWP_EINVAL;
  if (!f || lowp_format_validate(f, NULL, 0) != 0) return LOWP_EFORMAT;
  if (a == b) { (void)lowp_round_f64(y, 0.0, f, NULL, rnd); return LOWP_OK; } /* rational */
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
    ok = mpfr_can_round(t, w - 1 - (e < 1 ? 1 - e : 0) - 1, MPFR_RNDN, MPFR_RNDZ,
                        (mpfr_prec_t)f->precision + 1);
    if (ok) (void)lowp_round_mpfr(y, t, f, NULL, rnd);
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

int lowp_ref_softmax256(double *y, const double *x, size_t n) {
  mpfr_t m, s, *t;
  size_t i;
  if (!y || !x || !n) return LOWP_EINVAL;
  for (i = 0; i < n; i++)
    if (!isfinite(x[i])) return LOWP_EINVAL;
  t = malloc(n * sizeof *t);
  if (!t) return LOWP_ENOMEM;
  mpfr_inits2(256, m, s, (mpfr_ptr)0);
  mpfr_set_d(m, x[0], MPFR_RNDN);
  for (i = 1; i < n; i++) if (mpfr_cmp_d(m, x[i]) < 0) mpfr_set_d(m, x[i], MPFR_RNDN);
  mpfr_set_zero(s, 1);
  for (i = 0; i < n; i++) {
    mpfr_init2(t[i], 256);
    mpfr_set_d(t[i], x[i], MPFR_RNDN);
    mpfr_sub(t[i], t[i], m, MPFR_RNDN);
    mpfr_exp(t[i], t[i], MPFR_RNDN);
    mpfr_add(s, s, t[i], MPFR_RNDN);
  }
  for (i = 0; i < n; i++) {
    mpfr_div(t[i], t[i], s, MPFR_RNDN);
    y[i] = mpfr_get_d(t[i], MPFR_RNDN);
    mpfr_clear(t[i]);
  }
  mpfr_clears(m, s, (mpfr_ptr)0);
  free(t);
  return LOWP_OK;
}

int lowp_ref_round_product(double *y, double *rel, double a, double b, const lowp_format_t *f) {
  mpfr_t x, d;
  if (!y || !rel || !isfinite(a) || !isfinite(b)) return LOWP_EINVAL;
  if (!f || lowp_format_validate(f, NULL, 0) != 0) return LOWP_EFORMAT;
  mpfr_inits2(256, x, d, (mpfr_ptr)0);
  mpfr_set_d(x, a, MPFR_RNDN);
  mpfr_mul_d(x, x, b, MPFR_RNDN); /* exact: 106 bits */
  (void)lowp_round_mpfr(y, x, f, NULL, LOWP_RND_NE);
  if (isinf(*y) || isnan(*y)) *rel = INFINITY;
  else if (mpfr_zero_p(x)) *rel = 0;
  else {
    mpfr_sub_d(d, x, *y, MPFR_RNDN);
    mpfr_div(d, d, x, MPFR_RNDN);
    *rel = fabs(mpfr_get_d(d, MPFR_RNDN));
  }
  mpfr_clears(x, d, (mpfr_ptr)0);
  return LOWP_OK;
}

int lowp_ref_cmp_quotient(double v, double a, double b, double c) {
  mpfr_t l, r;
  int s;
  mpfr_inits2(256, l, r, (mpfr_ptr)0);
  mpfr_set_d(l, v, MPFR_RNDN);
  mpfr_mul_d(l, l, b, MPFR_RNDN); /* exact: 106 bits */
  mpfr_mul_d(l, l, c, MPFR_RNDN); /* exact: 159 bits */
  mpfr_set_d(r, a, MPFR_RNDN);
  s = mpfr_cmp(l, r);
  mpfr_clears(l, r, (mpfr_ptr)0);
  /* b c < 0 flips the comparison of v with a / (b c) */
  if ((b < 0) != (c < 0)) s = -s;
  return (s > 0) - (s < 0);
}

int lowp_ref_quotient_str(char *buf, size_t len, int digits, double a, double b, double c) {
  mpfr_t q, d;
  if (!buf || !len || digits < 1 || digits > 60 || b == 0 || c == 0) return LOWP_EINVAL;
  mpfr_inits2(256, q, d, (mpfr_ptr)0);
  mpfr_set_d(d, b, MPFR_RNDN);
  mpfr_mul_d(d, d, c, MPFR_RNDN); /* exact */
  mpfr_set_d(q, a, MPFR_RNDN);
  mpfr_div(q, q, d, MPFR_RNDN);
  mpfr_snprintf(buf, len, "%.*Rg", digits, q);
  mpfr_clears(q, d, (mpfr_ptr)0);
  return LOWP_OK;
}

#define REF_DPREC 256

int lowp_ref_decimal(double *v, int *sign, const char *text) {
  mpfr_t x;
  int st = LOWP_OK;
  if (!text) return LOWP_EINVAL;
  mpfr_init2(x, REF_DPREC);
  if (lowp_mpfr_parse(x, text) != LOWP_OK || !mpfr_number_p(x)) st = LOWP_EINVAL;
  else {
    if (v) *v = mpfr_get_d(x, MPFR_RNDN);
    if (sign) *sign = mpfr_sgn(x) > 0 ? 1 : mpfr_sgn(x) < 0 ? -1 : 0;
  }
  mpfr_clear(x);
  return st;
}

int lowp_ref_decimal_cmp(const char *a, const char *b) {
  mpfr_t x, y;
  int c = 2;
  if (!a || !b) return 2;
  mpfr_inits2(REF_DPREC, x, y, (mpfr_ptr)0);
  if (lowp_mpfr_parse(x, a) == LOWP_OK && lowp_mpfr_parse(y, b) == LOWP_OK && mpfr_number_p(x) &&
      mpfr_number_p(y)) {
    c = mpfr_cmp(x, y);
    c = (c > 0) - (c < 0);
  }
  mpfr_clears(x, y, (mpfr_ptr)0);
  return c;
}

int lowp_ref_share(double *y, const char *at, const char *bt, double lo, double hi, int law) {
  mpfr_t a, b, l, h, t, out;
  int st = LOWP_OK;
  if (!y || (law != 0 && law != 1)) return LOWP_EINVAL;
  mpfr_inits2(REF_DPREC, a, b, l, h, t, out, (mpfr_ptr)0);
  if (lowp_mpfr_parse(a, at ? at : "") != LOWP_OK || lowp_mpfr_parse(b, bt ? bt : "") != LOWP_OK ||
      !mpfr_number_p(a) || !mpfr_number_p(b) || mpfr_cmp(b, a) <= 0 || (law == 1 && mpfr_sgn(a) <= 0))
    st = LOWP_EINVAL;
  else {
    if (lo < 0) mpfr_set(l, a, MPFR_RNDN);
    else { mpfr_set_d(l, lo, MPFR_RNDN); mpfr_max(l, l, a, MPFR_RNDN); }
    if (isinf(hi)) mpfr_set(h, b, MPFR_RNDN);
    else { mpfr_set_d(h, hi, MPFR_RNDN); mpfr_min(h, h, b, MPFR_RNDN); }
    if (mpfr_cmp(h, l) <= 0) mpfr_set_zero(out, 1);
    else if (law == 0) {
      mpfr_sub(out, h, l, MPFR_RNDN);
      mpfr_sub(t, b, a, MPFR_RNDN);
      mpfr_div(out, out, t, MPFR_RNDN);
    } else {
      mpfr_log(h, h, MPFR_RNDN);
      mpfr_log(l, l, MPFR_RNDN);
      mpfr_sub(out, h, l, MPFR_RNDN);
      mpfr_log(h, b, MPFR_RNDN);
      mpfr_log(l, a, MPFR_RNDN);
      mpfr_sub(t, h, l, MPFR_RNDN);
      mpfr_div(out, out, t, MPFR_RNDN);
    }
    *y = mpfr_get_d(out, MPFR_RNDN);
  }
  mpfr_clears(a, b, l, h, t, out, (mpfr_ptr)0);
  return st;
}

int lowp_ref_round_quotient(double *y, double a, double b, const lowp_format_t *f) {
  mpfr_t q, d;
  int tern;
  if (!y) return LOWP_EINVAL;
  if (!f || lowp_format_validate(f, NULL, 0) != 0) return LOWP_EFORMAT;
  mpfr_inits2(128, q, d, (mpfr_ptr)0);
  mpfr_set_d(q, a, MPFR_RNDN); /* exact: 128 >= 53 */
  mpfr_set_d(d, b, MPFR_RNDN);
  tern = mpfr_div(q, q, d, MPFR_RNDZ);
  lowp_mpfr_make_odd(q, tern);
  (void)lowp_round_mpfr(y, q, f, NULL, LOWP_RND_NE);
  mpfr_clears(q, d, (mpfr_ptr)0);
  return LOWP_OK;
}

/* ------------------------------------------------------- sums of exps */

struct lowp_ref_expsum {
  double *v;       /* the finite nonzero arguments, for a recomputation */
  size_t n, cap;
  int nan, pinf;   /* a NaN / +inf argument was added */
  int inexact;     /* some finite nonzero argument: E is transcendental */
  unsigned long ones; /* arguments 0 (exp(0) = 1) */
  mpfr_t lo, hi;   /* E in [lo, hi] */
};

lowp_ref_expsum_t *lowp_ref_expsum_new(void) {
  lowp_ref_expsum_t *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  mpfr_inits2(REF_PREC0, s->lo, s->hi, (mpfr_ptr)0);
  mpfr_set_zero(s->lo, 1);
  mpfr_set_zero(s->hi, 1);
  return s;
}

/* t = exp(v) rounded in mode r, added to a rounded in mode r */
static void expsum_term(mpfr_t a, mpfr_t t, double v, mpfr_rnd_t r) {
  mpfr_set_d(t, v, MPFR_RNDN); /* exact */
  mpfr_exp(t, t, r);
  mpfr_add(a, a, t, r);
}

int lowp_ref_expsum_add(lowp_ref_expsum_t *s, double v) {
  mpfr_t t;
  if (!s) return LOWP_EINVAL;
  if (isnan(v)) { s->nan = 1; return LOWP_OK; }
  if (isinf(v)) { s->pinf |= v > 0; return LOWP_OK; } /* exp(-inf) = 0 */
  if (v == 0) { /* exp(0) = 1 exactly */
    s->ones++;
    mpfr_add_ui(s->lo, s->lo, 1, MPFR_RNDD);
    mpfr_add_ui(s->hi, s->hi, 1, MPFR_RNDU);
    return LOWP_OK;
  }
  if (s->n == s->cap) {
    size_t c = s->cap ? 2 * s->cap : 64;
    double *nv = realloc(s->v, c * sizeof *nv);
    if (!nv) return LOWP_ENOMEM;
    s->v = nv;
    s->cap = c;
  }
  s->v[s->n++] = v;
  s->inexact = 1;
  mpfr_init2(t, mpfr_get_prec(s->lo));
  expsum_term(s->lo, t, v, MPFR_RNDD);
  expsum_term(s->hi, t, v, MPFR_RNDU);
  mpfr_clear(t);
  return LOWP_OK;
}

/* m truncated to binary64; +inf at 2^1024 and above (m >= 0) */
static double trunc64(const mpfr_t m) {
  if (mpfr_regular_p(m) && mpfr_get_exp(m) > 1024) return INFINITY;
  return mpfr_get_d(m, MPFR_RNDZ);
}

int lowp_ref_expsum_get(lowp_ref_expsum_t *s, double *x, int *sticky) {
  mpfr_prec_t w;
  if (!s || !x || !sticky) return LOWP_EINVAL;
  w = mpfr_get_prec(s->lo);
  *sticky = 0;
  if (s->nan) { *x = NAN; return LOWP_OK; }
  if (s->pinf) { *x = INFINITY; return LOWP_OK; }
  if (!s->inexact) { /* a sum of ones */
    *x = trunc64(s->lo);
    *sticky = mpfr_cmp_d(s->lo, *x) != 0;
    return LOWP_OK;
  }
  *sticky = 1;
  while (trunc64(s->lo) != trunc64(s->hi)) {
    mpfr_t t;
    size_t i;
    if (w >= REF_PRECMAX) { *x = trunc64(s->lo); return LOWP_ERANGE; }
    w *= 2;
    mpfr_set_prec(s->lo, w);
    mpfr_set_prec(s->hi, w);
    mpfr_init2(t, w);
    mpfr_set_ui(s->lo, s->ones, MPFR_RNDD);
    mpfr_set_ui(s->hi, s->ones, MPFR_RNDU);
    for (i = 0; i < s->n; i++) {
      expsum_term(s->lo, t, s->v[i], MPFR_RNDD);
      expsum_term(s->hi, t, s->v[i], MPFR_RNDU);
    }
    mpfr_clear(t);
  }
  *x = trunc64(s->lo);
  return LOWP_OK;
}

void lowp_ref_expsum_free(lowp_ref_expsum_t *s) {
  if (!s) return;
  mpfr_clears(s->lo, s->hi, (mpfr_ptr)0);
  free(s->v);
  free(s);
}
