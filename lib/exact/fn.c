/* lowp_exact_fn -- correctly rounded elementwise exp, log, tanh and GELU */

/*
 * exp, log, tanh: MPFR's functions are correctly rounded, so one call at 66
 * bits toward zero, with its ternary value, gives round-to-odd at 66 bits
 * directly (66 >= 64 + 2: exact.h); no loop is needed.
 * GELU(x) = x/2 (1 + erf(x/sqrt 2)) = x/2 erfc(-x/sqrt 2): written with
 * erfc, which has no cancellation for x << 0 (1 + erf would need as many
 * extra bits as erfc is small), and evaluated in the interval loop of
 * lowp_exact_softmax (sqrt 2, the division and erfc enclosed in [lo, hi]).
 * GELU(+-0) = +-0, GELU(+inf) = +inf, GELU(-inf) = -0 (the limit).
 */

#include "exact/exact.h"

#include <math.h>

#include "exact/internal.h"
#include "exact/ival.h"

/* ------------------------------------------------------ private helpers */

/* ro66(gelu(x)) for finite nonzero x; 0 if undecided within the limit */
static int gelu_odd(mpfr_ptr out, double x) {
  mpfr_prec_t w;
  int ok = 0;
  for (w = LOWP__IV_PREC0; !ok && w <= LOWP__IV_PRECMAX; w *= 2) {
    lowp__iv_t r2, u, t;
    lowp__iv_init(&r2, w);
    lowp__iv_init(&u, w);
    lowp__iv_init(&t, w);
    r2.slo = mpfr_sqrt_ui(r2.lo, 2, MPFR_RNDD) != 0;
    r2.shi = mpfr_sqrt_ui(r2.hi, 2, MPFR_RNDU) != 0;
    lowp__iv_set_d(&u, -x);
    lowp__iv_div(&u, &u, &r2);     /* -x / sqrt 2 */
    lowp__iv_erfc(&t, &u);         /* 1 + erf(x / sqrt 2), in (0, 2) */
    lowp__iv_mul_d(&t, &t, x);     /* x erfc(.), then halve: exact in MPFR */
    mpfr_div_2ui(t.lo, t.lo, 1, MPFR_RNDD);
    mpfr_div_2ui(t.hi, t.hi, 1, MPFR_RNDU);
    ok = lowp__iv_decide(out, &t);
    lowp__iv_clear(&r2);
    lowp__iv_clear(&u);
    lowp__iv_clear(&t);
  }
  return ok;
}

/* ----------------------------------------------------------- public API */

const char *lowp_fn_name(lowp_fn_t fn) {
  switch (fn) {
  case LOWP_FN_EXP: return "exp";
  case LOWP_FN_LOG: return "log";
  case LOWP_FN_TANH: return "tanh";
  case LOWP_FN_GELU: return "gelu";
  }
  return NULL;
}

int lowp_exact_fn(double *y, const double *x, size_t n, lowp_fn_t fn,
                  const lowp_format_t *f, const lowp_policy_t *pol,
                  lowp_rounding_t rnd) {
  mpfr_t xi, r;
  size_t i;
  int st = lowp__exact_check(f, rnd), bad = 0;
  if (st) return st;
  if (!lowp_fn_name(fn)) return LOWP_EINVAL;
  if (n && (!x || !y)) return LOWP_EINVAL;
  mpfr_init2(xi, 53);
  mpfr_init2(r, LOWP__ODD_PREC);
  for (i = 0; i < n; i++) {
    double v = x[i];
    int tern;
    uint64_t idx = lowp__exact_index(pol, i);
    mpfr_set_d(xi, v, MPFR_RNDN); /* exact */
    mpfr_set_prec(r, LOWP__ODD_PREC);
    switch (fn) {
    case LOWP_FN_EXP:
      tern = mpfr_exp(r, xi, MPFR_RNDZ);
      lowp__odd_fix(r, tern, 1);
      break;
    case LOWP_FN_LOG:
      tern = mpfr_log(r, xi, MPFR_RNDZ);
      lowp__odd_fix(r, tern, v < 1 ? -1 : 1);
      break;
    case LOWP_FN_TANH:
      tern = mpfr_tanh(r, xi, MPFR_RNDZ);
      lowp__odd_fix(r, tern, signbit(v) ? -1 : 1);
      break;
    case LOWP_FN_GELU:
    default:
      if (isnan(v) || v == 0 || v == INFINITY) { mpfr_set_d(r, v, MPFR_RNDN); break; }
      if (v == -INFINITY) { mpfr_set_zero(r, -1); break; }
      if (!gelu_odd(r, v)) { bad = 1; mpfr_set_nan(r); }
      break;
    }
    (void)lowp__exact_round_mpfr(&y[i], r, f, pol, rnd, idx);
  }
  mpfr_clears(xi, r, (mpfr_ptr)0);
  return bad ? LOWP_ERANGE : LOWP_OK;
}
