/* lowp_acc -- exact accumulator: sums of binary64 values and products, no rounding */

/*
 * A fixed-point window of 136 signed 64-bit limbs, each carrying one 32-bit
 * digit plus slack (carry-save), in the manner of Kulisch's long accumulator
 * and Neal's "small superaccumulator" (arXiv:1505.05571). Adding splits the
 * term's integer significand into 32-bit digits shifted into place; no carry
 * is propagated until 2^29 additions have accumulated or the value is read.
 * Reading propagates carries, takes |value|, and hands the top 64 bits plus
 * a sticky bit to lowp_round_sig: one rounding, from the exact value.
 */

#include "exact/acc.h"

#include <gmp.h>
#include <math.h>
#include <string.h>

#include "status.h"

/* ------------------------------------------------------ private helpers */

#define M32 0xffffffffu
#define PENDING_MAX (1u << 29) /* pending * 2^33 <= 2^62 < INT64_MAX */

__extension__ typedef unsigned __int128 u128;

/* |x| = m * 2^e for finite nonzero x, m < 2^53 */
static void split(double x, uint64_t *m, int *e) {
  uint64_t b;
  int E;
  memcpy(&b, &x, sizeof b);
  E = (int)((b >> 52) & 0x7ff);
  *m = b & ((UINT64_C(1) << 52) - 1);
  if (E == 0) {
    *e = -1074;
  } else {
    *m |= UINT64_C(1) << 52;
    *e = E - 1075;
  }
}

/* Propagate carries so the limbs below a->hi lie in [0, 2^32) and the top
   limb a->hi is signed with |limb| < 2^40 (or < 2^32 and >= 0 if strict
   and the value is non-negative): the value is negative iff that top limb
   is. Limbs below a->lo are zero; only [lo, hi] is visited, so a sum that
   touched three limbs costs three steps, whatever its sign. */
static void carry_up(lowp_acc_t *a, int i) {
  int64_t v = a->limb[i];
  int64_t low = (int64_t)((uint64_t)v & M32);
  a->limb[i] = low;
  a->limb[i + 1] += (v - low) / ((int64_t)1 << 32); /* exact division */
}

static void normalize(lowp_acc_t *a, int strict) {
  int i;
  const int64_t big = (int64_t)1 << 40;
  if (a->hi < a->lo) { a->pending = 0; return; }
  for (i = a->lo; i < a->hi; i++) carry_up(a, i);
  while (a->hi < LOWP_ACC_LIMBS - 1 &&
         (a->limb[a->hi] >= (strict ? ((int64_t)1 << 32) : big) || a->limb[a->hi] <= -big)) {
    carry_up(a, a->hi);
    a->hi++;
  }
  a->pending = 0;
}

/* Highest limb that is nonzero, or -1. Assumes normalised. */
static int top_limb(const lowp_acc_t *a) {
  int i;
  for (i = a->hi; i >= a->lo && i >= 0; i--)
    if (a->limb[i] != 0) return i;
  return -1;
}

/* Normalise (strictly) and make the limbs hold |value|; 1 if value < 0. */
static int make_abs(lowp_acc_t *a) {
  int i, t;
  normalize(a, 0);
  t = top_limb(a);
  if (t >= 0 && a->limb[t] < 0) {
    for (i = a->lo; i <= a->hi; i++) a->limb[i] = -a->limb[i];
    normalize(a, 1);
    return 1;
  }
  normalize(a, 1);
  return 0;
}

/* The exact-zero sign rule (see acc.h). */
static int zero_neg(const lowp_acc_t *a, lowp_rounding_t rnd) {
  if (a->zsign == -1) return 1;
  if (a->zsign == 2) return rnd == LOWP_RND_DN;
  return 0;
}

/* ----------------------------------------------------------- public API */

void lowp_acc_reset(lowp_acc_t *a) {
  if (a->hi >= a->lo)
    memset(a->limb + a->lo, 0, (size_t)(a->hi - a->lo + 1) * sizeof a->limb[0]);
  a->lo = LOWP_ACC_LIMBS;
  a->hi = -1;
  a->pending = 0;
  a->nan = a->pinf = a->ninf = 0;
  a->zsign = 0;
}

void lowp_acc_init(lowp_acc_t *a) {
  memset(a->limb, 0, sizeof a->limb);
  a->lo = LOWP_ACC_LIMBS;
  a->hi = -1;
  a->pending = 0;
  a->nan = a->pinf = a->ninf = 0;
  a->zsign = 0;
}

int lowp_acc_is_zero(lowp_acc_t *a) {
  if (a->nan || a->pinf || a->ninf) return 0;
  normalize(a, 0);
  return top_limb(a) < 0;
}

int lowp_acc_empty(const lowp_acc_t *a) { return a->zsign == 0; }

void lowp_acc_note_term(lowp_acc_t *a, double term) {
  if (term == 0.0) {
    signed char s = signbit(term) ? -1 : 1;
    if (a->zsign == 0) a->zsign = s;
    else if (a->zsign != s) a->zsign = 2;
  } else {
    a->zsign = 2;
  }
}

void lowp_acc_add_int(lowp_acc_t *a, uint64_t m, int e, int neg) {
  int pos = e - LOWP_ACC_LSB, li = pos >> 5, sh = pos & 31;
  uint64_t t0 = (m & M32) << sh, t1 = (m >> 32) << sh; /* each < 2^63 */
  int64_t d0 = (int64_t)(t0 & M32);
  int64_t d1 = (int64_t)((t0 >> 32) + (t1 & M32)); /* < 2^33 */
  int64_t d2 = (int64_t)(t1 >> 32);
  if (m == 0) return;
  if (neg) { d0 = -d0; d1 = -d1; d2 = -d2; }
  a->limb[li] += d0;
  a->limb[li + 1] += d1;
  a->limb[li + 2] += d2;
  if (li < a->lo) a->lo = li;
  if (li + 2 > a->hi) a->hi = li + 2;
  if (++a->pending >= PENDING_MAX) normalize(a, 0);
}

void lowp_acc_add(lowp_acc_t *a, double x) {
  uint64_t m;
  int e;
  lowp_acc_note_term(a, x);
  if (isnan(x)) { a->nan = 1; return; }
  if (isinf(x)) { if (x > 0) a->pinf = 1; else a->ninf = 1; return; }
  if (x == 0.0) return;
  split(x, &m, &e);
  lowp_acc_add_int(a, m, e, x < 0);
}

void lowp_acc_add_prod(lowp_acc_t *a, double x, double y) {
  uint64_t mx, my;
  int ex, ey, neg = signbit(x) != signbit(y);
  u128 p;
  if (isnan(x) || isnan(y)) { a->zsign = 2; a->nan = 1; return; }
  if (isinf(x) || isinf(y)) {
    a->zsign = 2;
    if (x == 0.0 || y == 0.0) a->nan = 1; /* inf * 0 */
    else if (neg) a->ninf = 1;
    else a->pinf = 1;
    return;
  }
  if (x == 0.0 || y == 0.0) {
    lowp_acc_note_term(a, neg ? -0.0 : 0.0);
    return;
  }
  a->zsign = 2;
  split(x, &mx, &ex);
  split(y, &my, &ey);
  p = (u128)mx * my; /* < 2^106: exact */
  lowp_acc_add_int(a, (uint64_t)p, ex + ey, neg);
  lowp_acc_add_int(a, (uint64_t)(p >> 64), ex + ey + 64, neg);
}

int lowp_acc_round(double *y, lowp_acc_t *a, const lowp_format_t *f,
                   const lowp_policy_t *pol, lowp_rounding_t rnd, uint64_t index) {
  int neg, h, b, i, sticky;
  uint64_t x2, x1, x0, sig;
  int64_t e;
  if (a->nan || (a->pinf && a->ninf)) return lowp_round_f64(y, NAN, f, pol, rnd);
  if (a->pinf) return lowp_round_f64(y, INFINITY, f, pol, rnd);
  if (a->ninf) return lowp_round_f64(y, -INFINITY, f, pol, rnd);
  neg = make_abs(a);
  h = top_limb(a);
  if (h < 0)
    return lowp_round_sig(y, zero_neg(a, rnd), 0, 0, 0, f, pol, rnd, index);
  /* top 64 bits of limb[h] : limb[h-1] : limb[h-2], rest -> sticky */
  x2 = (uint64_t)a->limb[h];
  x1 = h >= 1 ? (uint64_t)a->limb[h - 1] : 0;
  x0 = h >= 2 ? (uint64_t)a->limb[h - 2] : 0;
  b = 63 - __builtin_clzll(x2); /* 0..31 */
  sig = (x2 << (63 - b)) | (x1 << (31 - b)) | (x0 >> (b + 1));
  sticky = (x0 & ((UINT64_C(1) << (b + 1)) - 1)) != 0;
  for (i = h - 3; i >= 0 && i >= a->lo && !sticky; i--) sticky = a->limb[i] != 0;
  e = (int64_t)LOWP_ACC_LSB + 32 * (int64_t)h + b;
  return lowp_round_sig(y, neg, e, sig, sticky, f, pol, rnd, index);
}

void lowp_acc_get_mpfr(mpfr_ptr x, lowp_acc_t *a) {
  int neg, h, l;
  mpz_t z;
  uint32_t digits[LOWP_ACC_LIMBS];
  if (a->nan || (a->pinf && a->ninf)) { mpfr_set_prec(x, 64); mpfr_set_nan(x); return; }
  if (a->pinf || a->ninf) { mpfr_set_prec(x, 64); mpfr_set_inf(x, a->pinf ? 1 : -1); return; }
  neg = make_abs(a);
  h = top_limb(a);
  if (h < 0) {
    mpfr_set_prec(x, 64);
    mpfr_set_zero(x, zero_neg(a, LOWP_RND_NE) ? -1 : 1);
    return;
  }
  for (l = a->lo; a->limb[l] == 0; l++) {}
  for (int i = l; i <= h; i++) digits[i - l] = (uint32_t)a->limb[i];
  mpz_init(z);
  mpz_import(z, (size_t)(h - l + 1), -1, sizeof digits[0], 0, 0, digits);
  mpfr_set_prec(x, 32 * (h - l + 1));
  mpfr_set_z_2exp(x, z, LOWP_ACC_LSB + 32 * l, MPFR_RNDN); /* exact: enough bits */
  if (neg) mpfr_neg(x, x, MPFR_RNDN);
  mpz_clear(z);
}
