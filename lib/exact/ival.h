/* lowp__ival -- MPFR intervals with strict ends, and deciding the round-to-odd of their content */
#ifndef LOWP_IVAL_H
#define LOWP_IVAL_H

#include <mpfr.h>

/*
 * Internal to lib/exact. An interval says: the exact value x satisfies
 * lo <= x <= hi, and moreover x > lo if slo, x < hi if shi. Every operation
 * rounds lo down and hi up, and marks an end strict when its rounding was
 * inexact or the operand's end was strict (all the operations used are
 * strictly monotone in each operand), so the enclosure is rigorous at any
 * precision. lowp__iv_decide then asks whether every x the interval allows
 * has the same round-to-odd value at 66 bits (see exact.h for why 66).
 */
typedef struct {
  mpfr_t lo, hi;
  int slo, shi;
} lowp__iv_t;

/** @brief Precision of the round-to-odd result (>= 64 + 2). */
#define LOWP__ODD_PREC 66
/** @brief First and last working precision of the interval loops. */
#define LOWP__IV_PREC0 128
#define LOWP__IV_PRECMAX 65536

void lowp__iv_init(lowp__iv_t *v, mpfr_prec_t p);
void lowp__iv_clear(lowp__iv_t *v);
/** @brief Change the precision (contents lost). */
void lowp__iv_set_prec(lowp__iv_t *v, mpfr_prec_t p);
/** @brief The point x (exact at precision >= 53). */
void lowp__iv_set_d(lowp__iv_t *v, double x);
/** @brief The point x, rounded outward to v's precision (strict where inexact). */
void lowp__iv_set_mpfr(lowp__iv_t *v, mpfr_srcptr x);
/** @brief r = sqrt(a), a's lower end >= 0. */
void lowp__iv_sqrt(lowp__iv_t *r, const lowp__iv_t *a);
/** @brief r = a + b, r = a - b (r may alias a or b). */
void lowp__iv_add(lowp__iv_t *r, const lowp__iv_t *a, const lowp__iv_t *b);
void lowp__iv_sub(lowp__iv_t *r, const lowp__iv_t *a, const lowp__iv_t *b);
/** @brief r = exp(a). */
void lowp__iv_exp(lowp__iv_t *r, const lowp__iv_t *a);
/** @brief r = log(a), a's lower end > 0. */
void lowp__iv_log(lowp__iv_t *r, const lowp__iv_t *a);
/** @brief r = erfc(a) (decreasing: the ends swap). */
void lowp__iv_erfc(lowp__iv_t *r, const lowp__iv_t *a);
/** @brief r = a / b with b's lower end > 0. */
void lowp__iv_div(lowp__iv_t *r, const lowp__iv_t *a, const lowp__iv_t *b);
/** @brief r = a * x for a binary64 point x (exact scaling by x's sign handled). */
void lowp__iv_mul_d(lowp__iv_t *r, const lowp__iv_t *a, double x);

/**
 * @brief If every value the interval allows has the same round-to-odd value
 * at LOWP__ODD_PREC bits, set out (precision LOWP__ODD_PREC) to it and
 * return 1; else 0. Values below 2^-1150 in magnitude (or above 2^1100),
 * known to be nonzero with a known sign, all round alike to every lowp
 * format in every mode, so such intervals decide to a representative
 * (+-2^-1151 or +-2^1101) even when MPFR's exponent range cannot pin them.
 */
int lowp__iv_decide(mpfr_ptr out, const lowp__iv_t *v);

/**
 * @brief The value of an MPFR function evaluated at LOWP__ODD_PREC bits
 * toward zero with ternary tern, made round-to-odd; an underflow to zero or
 * an overflow to infinity (tern != 0) becomes the representative of
 * lowp__iv_decide. sign: the sign of the exact value (needed for zero).
 */
void lowp__odd_fix(mpfr_ptr x, int tern, int sign);

#endif
