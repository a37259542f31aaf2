/* tround_array -- the array paths give the scalar path's results, element for element */

/*
 * lowp_round_array_f64, lowp_round_array_f32, lowp_encode_array_f32 (which
 * may take the fast path of round_fast.c) and lowp_encode_array_f32_ref
 * against lowp_round_f64/lowp_round_f32 + lowp_encode called once per
 * element with index sr_offset + i, for every built-in format, every mode
 * (stochastic rounding included) and several policies, on inputs that span
 * every binary32 exponent, subnormals, zeros, infinities and NaNs. Also: in
 * place (y == x), n = 0, and the status codes for a bad mode or format.
 * Bits are compared, so NaN signs and -0 count.
 *
 * Run: ctest --test-dir build -R tround_array
 */

#include "format/format.h"
#include "format/round_fast.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 3000

static uint64_t dbits(double d) { uint64_t u; memcpy(&u, &d, sizeof u); return u; }

static uint64_t load_bits(const void *a, size_t i, int w) {
  if (w <= 8) return ((const uint8_t *)a)[i];
  if (w <= 16) return ((const uint16_t *)a)[i];
  if (w <= 32) return ((const uint32_t *)a)[i];
  return ((const uint64_t *)a)[i];
}

typedef int (*encode_array_fn)(void *, const float *, size_t, const lowp_format_t *,
                               const lowp_policy_t *, lowp_rounding_t);

static void inputs(float *x, lowp_rng_t *g) {
  static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN,
                                  0x1p-149f, -0x1p-149f, 0x1p-126f, 3.4028235e38f,
                                  65504.0f, 65520.0f, 448.0f, 464.0f, 57344.0f, 6.0f, 1.0f};
  size_t i, ns = sizeof special / sizeof special[0];
  for (i = 0; i < N; i++) {
    if (i < ns) { x[i] = special[i]; continue; }
    {
      uint32_t u = (uint32_t)lowp_rng_next(g);
      /* half of them at moderate exponents, where the small formats live */
      if (i & 1) u = (u & 0x807fffffu) | ((uint32_t)(100 + (u >> 23) % 56) << 23);
      memcpy(&x[i], &u, sizeof u);
    }
  }
}

static void one(const lowp_format_t *f, const lowp_policy_t *pol, lowp_rounding_t rnd,
                const float *x, const char *tag) {
  static double xd[N], yd[N], inplace[N];
  static float yf[N];
  static uint64_t b1[N], b2[N]; /* large enough for any width */
  const int w = lowp_format_width(f);
  encode_array_fn enc[2] = {lowp_encode_array_f32, lowp_encode_array_f32_ref};
  const char *enc_name[2] = {"encode_array_f32", "encode_array_f32_ref"};
  void *bits[2] = {b1, b2};
  int sf, se[2], k;
  size_t i;
  long bad = 0;
  for (i = 0; i < N; i++) xd[i] = inplace[i] = (double)x[i];
  lowp_test_check(lowp_round_array_f64(yd, xd, N, f, pol, rnd) == LOWP_OK, "%s f64 status", f->name);
  lowp_test_check(lowp_round_array_f64(inplace, inplace, N, f, pol, rnd) == LOWP_OK, "in place");
  sf = lowp_round_array_f32(yf, x, N, f, pol, rnd);
  /* fp64 with satfinite: +-inf would become fp64's max, no binary32 */
  lowp_test_check(sf == ((f == &LOWP_FMT_FP64 && pol && pol->overflow == LOWP_OVF_SAT)
                             ? LOWP_EFORMAT : LOWP_OK),
                  "%s %s: round_array_f32 status %d", f->name, tag, sf);
  for (k = 0; k < 2; k++) {
    se[k] = enc[k](bits[k], x, N, f, pol, rnd);
    lowp_test_check(se[k] == LOWP_OK, "%s %s: %s status %d", f->name, tag, enc_name[k], se[k]);
  }
  for (i = 0; i < N; i++) {
    lowp_policy_t q = pol ? *pol : (lowp_policy_t){0};
    double s64, s32;
    uint64_t sb = 0;
    q.sr_offset = (pol ? pol->sr_offset : 0) + i;
    (void)lowp_round_f64(&s64, xd[i], f, &q, rnd);
    (void)lowp_round_f32(&s32, x[i], f, &q, rnd);
    (void)lowp_encode(&sb, s32, f);
    if (dbits(yd[i]) != dbits(s64) || dbits(inplace[i]) != dbits(s64) ||
        (sf == LOWP_OK && dbits((double)yf[i]) != dbits(s32)) ||
        load_bits(b1, i, w) != sb || load_bits(b2, i, w) != sb) {
      if (bad++ < 5)
        lowp_test_check(0, "%s %s %s [%zu] x=%a (%.9g): scalar f64 %a f32 %a bits 0x%llx; "
                        "array f64 %a (in place %a) f32 %a encode 0x%llx ref 0x%llx",
                        f->name, lowp_rounding_name(rnd), tag, i, (double)x[i], (double)x[i],
                        s64, s32, (unsigned long long)sb, yd[i], inplace[i], (double)yf[i],
                        (unsigned long long)load_bits(b1, i, w),
                        (unsigned long long)load_bits(b2, i, w));
    } else {
      lowp_test_check(1, "");
    }
  }
}

int main(void) {
  static float x[N];
  lowp_rng_t g;
  size_t i;
  int r, k;
  lowp_test_start("tround_array");
  lowp_rng_init(&g, lowp_test_seed(), 3);
  inputs(x, &g);
  for (i = 0; i < lowp_format_count(); i++) {
    const lowp_format_t *f = lowp_format_at(i);
    for (r = 0; r < LOWP_RND_COUNT; r++) {
      lowp_policy_t pol;
      one(f, NULL, (lowp_rounding_t)r, x, "default");
      for (k = 0; k < 4; k++) {
        memset(&pol, 0, sizeof pol);
        pol.overflow = (lowp_overflow_t)k;
        pol.ftz = k & 1;
        pol.daz = (k >> 1) & 1;
        pol.nan_sign = (lowp_nansign_t)(k & 1);
        pol.sr_seed = 42 + (uint64_t)k;
        pol.sr_offset = (uint64_t)k << 40;
        pol.sr_bits = 8 * k;
        one(f, &pol, (lowp_rounding_t)r, x, "policy");
      }
    }
  }
  /* status codes */
  {
    double d = 1.0, e;
    float s = 1.0f, t;
    uint16_t b;
    lowp_format_t bad = LOWP_FMT_FP16, wide;
    bad.precision = 0;
    lowp_test_check(lowp_round_array_f64(&e, &d, 1, &LOWP_FMT_FP16, NULL, (lowp_rounding_t)9) == LOWP_EROUND, "f64 bad mode");
    lowp_test_check(lowp_round_array_f32(&t, &s, 1, &LOWP_FMT_FP16, NULL, (lowp_rounding_t)9) == LOWP_EROUND, "f32 bad mode");
    lowp_test_check(lowp_encode_array_f32(&b, &s, 1, &LOWP_FMT_FP16, NULL, (lowp_rounding_t)9) == LOWP_EROUND, "encode bad mode");
    lowp_test_check(lowp_round_array_f64(&e, &d, 1, &bad, NULL, LOWP_RND_NE) == LOWP_EFORMAT, "f64 bad format");
    lowp_test_check(lowp_round_array_f32(&t, &s, 1, &bad, NULL, LOWP_RND_NE) == LOWP_EFORMAT, "f32 bad format");
    lowp_test_check(lowp_encode_array_f32(&b, &s, 1, &bad, NULL, LOWP_RND_NE) == LOWP_EFORMAT, "encode bad format");
    /* binary32 cannot hold the results of a format that is neither a
       subset nor a superset of binary32 (its max is no float) */
    lowp_test_check(lowp_format_parse(&wide, "p=30,emin=-100,emax=100", NULL, 0) == LOWP_OK, "parse wide");
    lowp_test_check(lowp_round_array_f32(&t, &s, 1, &wide, NULL, LOWP_RND_NE) == LOWP_EFORMAT, "f32 wide format");
    /* nor fp64's max, which satfinite gives for an infinite input */
    {
      lowp_policy_t sat;
      memset(&sat, 0, sizeof sat);
      sat.overflow = LOWP_OVF_SAT;
      lowp_test_check(lowp_round_array_f32(&t, &s, 1, &LOWP_FMT_FP64, &sat, LOWP_RND_NE) == LOWP_EFORMAT,
                      "f32 array into fp64 with satfinite");
      lowp_test_check(lowp_round_array_f32(&t, &s, 1, &LOWP_FMT_FP64, NULL, LOWP_RND_NE) == LOWP_OK,
                      "f32 array into fp64");
    }
    lowp_test_check(lowp_round_array_f64(NULL, NULL, 0, &LOWP_FMT_FP16, NULL, LOWP_RND_NE) == LOWP_OK, "n = 0");
  }
  return lowp_test_end();
}
