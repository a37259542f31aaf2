/* lowp_exact_dot_mpfr -- sums and dot products from MPFR alone: the oracle of the fast path */

/*
 * Shares no code with exact/acc.c: products by mpfr_mul at 106 bits (the
 * exact product of two 53-bit significands), their sum by mpfr_sum (which
 * MPFR rounds correctly, once), toward zero at 128 bits; the ternary turns
 * that into round-to-odd, which then rounds to every lowp format and mode
 * exactly as the exact value would (see exact.h).
 */

#include "exact/exact.h"

#include <stdlib.h>

#include "exact/internal.h"

/* ------------------------------------------------------ private helpers */

#define PROD_PREC 106 /* 53 + 53: mpfr_mul of two binary64 values is exact */
#define ODD_PREC 128  /* >= 64 + 2: see exact.h */

typedef struct {
  mpfr_t *t;
  mpfr_ptr *p;
  size_t n;
} terms_t;

static int terms_init(terms_t *s, size_t n) {
  size_t i;
  s->n = 0;
  s->t = malloc((n ? n : 1) * sizeof *s->t);
  s->p = malloc((n ? n : 1) * sizeof *s->p);
  if (!s->t || !s->p) { free(s->t); free(s->p); return LOWP_ENOMEM; }
  for (i = 0; i < n; i++) {
    mpfr_init2(s->t[i], PROD_PREC);
    s->p[i] = s->t[i];
  }
  s->n = n;
  return LOWP_OK;
}

static void terms_clear(terms_t *s) {
  size_t i;
  for (i = 0; i < s->n; i++) mpfr_clear(s->t[i]);
  free(s->t);
  free(s->p);
}

/* out = ro128(sum of the n terms), zero sign by mpfr_sum in rnd's mode */
static void sum_terms(mpfr_ptr out, terms_t *s, size_t n, lowp_rounding_t rnd) {
  int tern;
  mpfr_set_prec(out, ODD_PREC);
  tern = mpfr_sum(out, s->p, (unsigned long)n, MPFR_RNDZ);
  if (mpfr_zero_p(out))
    (void)mpfr_sum(out, s->p, (unsigned long)n,
                   rnd == LOWP_RND_DN ? MPFR_RNDD : MPFR_RNDN);
  else
    lowp__exact_make_odd(out, tern);
}

/* ----------------------------------------------------------- public API */

int lowp_exact_dot_mpfr_raw(mpfr_ptr out, const double *x, const double *w,
                            size_t incw, size_t n, lowp_rounding_t rnd) {
  terms_t s;
  size_t i;
  if (terms_init(&s, n)) return LOWP_ENOMEM;
  for (i = 0; i < n; i++) {
    if (w) {
      mpfr_t b;
      mpfr_init2(b, 53);
      mpfr_set_d(b, w[i * incw], MPFR_RNDN); /* exact */
      mpfr_set_d(s.t[i], x[i], MPFR_RNDN);   /* exact */
      mpfr_mul(s.t[i], s.t[i], b, MPFR_RNDN); /* exact at 106 bits */
      mpfr_clear(b);
    } else {
      mpfr_set_d(s.t[i], x[i], MPFR_RNDN);
    }
  }
  sum_terms(out, &s, n, rnd);
  terms_clear(&s);
  return LOWP_OK;
}

int lowp_exact_sum_mpfr(double *y, const double *x, size_t n, const lowp_format_t *f,
                        const lowp_policy_t *pol, lowp_rounding_t rnd) {
  return lowp_exact_dot_mpfr(y, x, NULL, n, f, pol, rnd);
}

int lowp_exact_dot_mpfr(double *y, const double *x, const double *w, size_t n,
                        const lowp_format_t *f, const lowp_policy_t *pol,
                        lowp_rounding_t rnd) {
  mpfr_t r;
  int st = lowp__exact_check(f, rnd);
  if (st) return st;
  if (!y || (n && !x)) return LOWP_EINVAL;
  mpfr_init2(r, ODD_PREC);
  st = lowp_exact_dot_mpfr_raw(r, x, w, 1, n, rnd);
  if (!st) (void)lowp__exact_round_mpfr(y, r, f, pol, rnd, lowp__exact_index(pol, 0));
  mpfr_clear(r);
  return st;
}

int lowp_exact_gemm_mpfr(double *c, const double *a, const double *b,
                         const double *c0, size_t m, size_t n, size_t k,
                         const lowp_format_t *f, const lowp_policy_t *pol,
                         lowp_rounding_t rnd) {
  terms_t s;
  mpfr_t r, bv;
  size_t i, j, l;
  int st = lowp__exact_check(f, rnd);
  if (st) return st;
  if (m == 0 || n == 0) return LOWP_OK;
  if (!c || (k && (!a || !b))) return LOWP_EINVAL;
  if (terms_init(&s, k + 1)) return LOWP_ENOMEM;
  mpfr_inits2(ODD_PREC, r, (mpfr_ptr)0);
  mpfr_init2(bv, 53);
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      for (l = 0; l < k; l++) {
        mpfr_set_d(s.t[l], a[i * k + l], MPFR_RNDN);
        mpfr_set_d(bv, b[l * n + j], MPFR_RNDN);
        mpfr_mul(s.t[l], s.t[l], bv, MPFR_RNDN);
      }
      if (c0) mpfr_set_d(s.t[k], c0[i * n + j], MPFR_RNDN);
      sum_terms(r, &s, c0 ? k + 1 : k, rnd);
      (void)lowp__exact_round_mpfr(&c[i * n + j], r, f, pol, rnd,
                                   lowp__exact_index(pol, i * n + j));
    }
  mpfr_clears(r, bv, (mpfr_ptr)0);
  terms_clear(&s);
  return LOWP_OK;
}
