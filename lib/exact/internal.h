/* lowp_exact internals -- argument checks and rounding helpers shared by lib/exact */
#ifndef LOWP_EXACT_INTERNAL_H
#define LOWP_EXACT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <mpfr.h>

#include "format/format.h"
#include "format/round_mpfr.h"
#include "status.h"

/** @brief LOWP_OK if f is a valid format and rnd a valid mode, else
    LOWP_EFORMAT / LOWP_EROUND. */
static inline int lowp__exact_check(const lowp_format_t *f, lowp_rounding_t rnd) {
  if (!f || lowp_format_validate(f, NULL, 0) != 0) return LOWP_EFORMAT;
  if ((unsigned)rnd >= LOWP_RND_COUNT) return LOWP_EROUND;
  return LOWP_OK;
}

/** @brief The element index stochastic rounding draws for output i. */
static inline uint64_t lowp__exact_index(const lowp_policy_t *pol, size_t i) {
  return (pol ? pol->sr_offset : 0) + (uint64_t)i;
}

/**
 * @brief Turn x, the result of an MPFR operation rounded toward zero with
 * ternary value tern, into the round-to-odd value at x's precision: if the
 * operation was inexact and x's last bit is 0, move x one ulp away from
 * zero. (Round to odd = truncate, then set the last bit if inexact.)
 */
void lowp__exact_make_odd(mpfr_ptr x, int tern);

/**
 * @brief Round x to f via lowp_round_mpfr with the SR index set to index.
 */
int lowp__exact_round_mpfr(double *y, mpfr_srcptr x, const lowp_format_t *f,
                           const lowp_policy_t *pol, lowp_rounding_t rnd,
                           uint64_t index);

/**
 * @brief 1 if p = fl64(a * b) is the exact product (a cheap sufficient test,
 * no FMA): both factors have at most 26 significant bits (their 27 lowest
 * fraction bits are zero, so the product has at most 52) and p is a normal
 * binary64 number (no underflow, no overflow). 0 means "unknown".
 */
static inline int lowp__exact_prod_is_exact(double a, double b, double p) {
  uint64_t ua, ub, up;
  const uint64_t low27 = ((uint64_t)1 << 27) - 1;
  memcpy(&ua, &a, sizeof ua);
  memcpy(&ub, &b, sizeof ub);
  memcpy(&up, &p, sizeof up);
  if ((ua & low27) || (ub & low27)) return 0;
  up = (up >> 52) & 0x7ff;
  return up != 0 && up != 0x7ff; /* normal: exponent field neither 0 nor all ones */
}

#endif
