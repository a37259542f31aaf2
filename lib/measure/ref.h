/* lowp_ref -- exact reference values a simulation compares against, rounded once to binary64 */
#ifndef LOWP_REF_H
#define LOWP_REF_H

/*
 * Some experiments simulate something that is not an operation of the
 * pipeline (lib/check/op.h): a threshold curve, a running series. The exact
 * values they plot or compare against come from here, so no experiment
 * holds MPFR itself. Each function states its method (special values, exact
 * cases, the MPFR precision or Ziv loop, one final rounding); operations
 * with an op-table entry take their exact value from lowp_op_exact instead.
 */

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

/**
 * @brief y = ln(a / b) rounded once to f in mode rnd (e.g. fp64 rne for a
 * plotted reference; f rup for the smallest value of f above it).
 * Method: Ziv loop. At w = 128, 256, ... bits, q = a/b rounded to nearest
 * (relative error <= 2^-w) and t = log(q) rounded to nearest, so
 * |t - ln(a/b)| <= 2^(1-w) + |t| 2^-w; once mpfr_can_round says t decides
 * f's precision + 1 bits, t is rounded to f by lowp_round_mpfr. ln(a/b) is
 * rational only for a = b (Lindemann-Weierstrass), where it is 0 exactly;
 * otherwise it is never a value of f or a midpoint, so every mode is decided.
 * @return LOWP_OK; LOWP_EINVAL (a or b not finite and > 0); LOWP_EFORMAT;
 *         LOWP_ERANGE (undecided at 2^16 bits: not seen).
 */
int lowp_ref_log_ratio(double *y, double a, double b, const lowp_format_t *f,
                       lowp_rounding_t rnd);

/**
 * @brief The softmax of x[0..n) rounded to nearest binary64, by plain MPFR
 * at 256 bits (m = max x exactly, each x[i] - m exact, exp, the sum and the
 * division rounded to nearest: relative error below 2^-240 before the final
 * rounding). No Ziv loop: an independent cross-check of lib/exact's
 * softmax (lowp_op_exact), not a replacement. Finite x only.
 * @return LOWP_OK; LOWP_EINVAL; LOWP_ENOMEM.
 */
int lowp_ref_softmax256(double *y, const double *x, size_t n);

/**
 * @brief A running sum of exponentials E = exp(v_0) + ... + exp(v_k), kept
 * exactly enough to classify it (lowp_fpx_classify's convention: E
 * truncated to binary64, a sticky bit, +inf with sticky set for a finite E
 * of 2^1024 or more). Method: Ziv loop. Two running sums at 128 bits, one
 * of exps and additions rounded down, one rounded up, enclose E; when their
 * truncations to binary64 differ, the sum is recomputed from the stored
 * arguments at 256, 512, ... bits. E is exact only when every argument is 0
 * or -inf; otherwise it is transcendental (Lindemann-Weierstrass) and the
 * sticky bit is 1. A NaN argument makes E NaN, +inf makes it +inf (exact).
 */
typedef struct lowp_ref_expsum lowp_ref_expsum_t;
/** @brief An empty sum (E = 0), or NULL when out of memory. */
lowp_ref_expsum_t *lowp_ref_expsum_new(void);
/** @brief E += exp(v). @return LOWP_OK; LOWP_EINVAL; LOWP_ENOMEM. */
int lowp_ref_expsum_add(lowp_ref_expsum_t *s, double v);
/** @brief *x = E truncated to binary64, *sticky its sticky bit.
    @return LOWP_OK; LOWP_EINVAL; LOWP_ERANGE (undecided at 2^16 bits, not
    seen: *x is then the lower enclosure's truncation, sticky 1). */
int lowp_ref_expsum_get(lowp_ref_expsum_t *s, double *x, int *sticky);
void lowp_ref_expsum_free(lowp_ref_expsum_t *s);

/** @brief A running harmonic sum H_k = 1 + 1/2 + ... + 1/k (opaque). */
typedef struct lowp_ref_harmonic lowp_ref_harmonic_t;

/**
 * @brief Start a running harmonic sum at H_0 = 0. Method: MPFR at 128 bits,
 * each 1/k and each addition rounded to nearest (relative error of H_K
 * below K 2^-127, far below a binary64 ulp for K <= 2^28).
 * @return the sum, or NULL (out of memory).
 */
lowp_ref_harmonic_t *lowp_ref_harmonic_new(void);
/** @brief Add the next term 1/k (k = 1, 2, ... in order) and return H_k
    rounded to nearest binary64. */
double lowp_ref_harmonic_next(lowp_ref_harmonic_t *h);
/** @brief Free (NULL is fine). */
void lowp_ref_harmonic_free(lowp_ref_harmonic_t *h);

/**
 * @brief y = a b rounded once to f (round to nearest even, IEEE overflow),
 * and rel = |a b - y| / |a b|, the relative error of that rounding against
 * the exact product, rounded to nearest binary64 (+inf when y overflows;
 * 0 when a b = 0). Method: a b exact in MPFR (106 bits), lowp_round_mpfr,
 * then the difference (exact at 256 bits) and the quotient at 256 bits.
 * @return LOWP_OK; LOWP_EINVAL (NULL or a non-finite a, b); LOWP_EFORMAT.
 */
int lowp_ref_round_product(double *y, double *rel, double a, double b, const lowp_format_t *f);

/**
 * @brief y = a / b rounded once to f (round to nearest even, IEEE
 * overflow): the quotient at 128 bits toward zero made round-to-odd
 * (128 >= p + 2 for every lowp format; Boldo & Melquiond 2008), then
 * lowp_round_mpfr. A correctly rounded division to check others against.
 * @return LOWP_OK; LOWP_EINVAL (NULL y); LOWP_EFORMAT.
 */
int lowp_ref_round_quotient(double *y, double a, double b, const lowp_format_t *f);

/** @brief The sign (-1, 0, 1) of v - a / (b c), exactly (b c != 0, all
    finite): v b c against a, products formed exactly in MPFR. */
int lowp_ref_cmp_quotient(double v, double a, double b, double c);

/**
 * @brief Write a / (b c) with `digits` significant decimal digits ("%.*Rg")
 * into buf: b c exact, the quotient at 256 bits, then MPFR's decimal
 * conversion (correctly rounded from that). For exact values that are not
 * binary64 numbers, e.g. xmin / (1 + u).
 * @return LOWP_OK; LOWP_EINVAL.
 */
int lowp_ref_quotient_str(char *buf, size_t len, int digits, double a, double b, double c);

/**
 * @brief A decimal number given as text (e.g. "1e-8", which is not a
 * binary64 value), parsed by lowp_mpfr_parse at 256 bits: *v its nearest
 * binary64 (NULL: not wanted), *sign its sign (-1, 0, 1; NULL: not wanted).
 * @return LOWP_OK; LOWP_EINVAL (NULL text, not a number, or not finite).
 */
int lowp_ref_decimal(double *v, int *sign, const char *text);

/** @brief Compare two decimal texts as numbers (256 bits): -1, 0 or 1;
    2 when either is not a finite number. */
int lowp_ref_decimal_cmp(const char *a, const char *b);

/**
 * @brief The share of the range [a, b] (decimal texts, a < b, read at 256
 * bits: lowp_ref_decimal) that lies in [lo, hi] (lo < 0: from a; hi = +inf:
 * up to b), under the uniform law (law 0: length ratio) or the log-uniform
 * law (law 1: ratio of logarithms; 0 < a), rounded to nearest binary64.
 * Method: MPFR at 256 bits, every operation rounded to nearest (relative
 * error far below a binary64 ulp).
 * @return LOWP_OK; LOWP_EINVAL.
 */
int lowp_ref_share(double *y, const char *a, const char *b, double lo, double hi, int law);

#endif
