/* tnative -- fp16 rounding against the compiler's _Float16 and the CPU's F16C */

/*
 * Two oracles that share nothing with lowp (nor with each other):
 *   - GCC 12's _Float16 on x86-64: conversions from binary32 and binary64
 *     go through libgcc's soft-fp (__truncsfhf2, __truncdfhf2), rounding to
 *     nearest even in one step (also from binary64: no double rounding);
 *   - the F16C instruction vcvtps2ph (Intel SDM vol. 2, "VCVTPS2PH"), whose
 *     immediate selects the rounding: 0 nearest even, 1 down, 2 up,
 *     3 toward zero; used only where __builtin_cpu_supports("f16c").
 * lowp must give the same bits in rne (and with F16C in rdn, rup, rtz) on
 * every binade edge and midpoint of fp16 and a seeded random sample. NaN:
 * both oracles keep the sign (lowp's default) but also the top payload bits
 * (0x7fc00000 -> 0x7e00), which lowp canonicalises to 0x7fff
 * (docs/formats.md): NaN results are compared by class and sign.
 *
 * Run: ctest --test-dir build -R tnative
 */

#include "cpu.h"
#include "format/format.h"
#include "rng/rng.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "half.h"

static uint16_t gcc_from_f32(float x) {
  half_t h = (half_t)x;
  uint16_t u;
  memcpy(&u, &h, sizeof u);
  return u;
}
static uint16_t gcc_from_f64(double x) {
  half_t h = (half_t)x;
  uint16_t u;
  memcpy(&u, &h, sizeof u);
  return u;
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86 1
__attribute__((target("f16c"))) static uint16_t f16c_rne(float x) {
  return (uint16_t)_cvtss_sh(x, 0);
}
__attribute__((target("f16c"))) static uint16_t f16c_rdn(float x) {
  return (uint16_t)_cvtss_sh(x, 1);
}
__attribute__((target("f16c"))) static uint16_t f16c_rup(float x) {
  return (uint16_t)_cvtss_sh(x, 2);
}
__attribute__((target("f16c"))) static uint16_t f16c_rtz(float x) {
  return (uint16_t)_cvtss_sh(x, 3);
}
#else /* not x86: the F16C oracles are never called (have_f16c = 0) */
#define HAVE_X86 0
static uint16_t f16c_none(float x) { (void)x; return 0; }
#define f16c_rne f16c_none
#define f16c_rdn f16c_none
#define f16c_rup f16c_none
#define f16c_rtz f16c_none
#endif

/* An oracle: from binary32 (f32 != NULL) or binary64, in mode rnd. */
typedef struct {
  const char *name;
  uint16_t (*f32)(float);
  uint16_t (*f64)(double);
  lowp_rounding_t rnd;
  int needs_f16c;
} oracle_t;

static const oracle_t oracles[] = {
    {"_Float16 from float", gcc_from_f32, NULL, LOWP_RND_NE, 0},
    {"_Float16 from double", NULL, gcc_from_f64, LOWP_RND_NE, 0},
    {"F16C vcvtps2ph imm=0 (rne)", f16c_rne, NULL, LOWP_RND_NE, 1},
    {"F16C vcvtps2ph imm=1 (rdn)", f16c_rdn, NULL, LOWP_RND_DN, 1},
    {"F16C vcvtps2ph imm=2 (rup)", f16c_rup, NULL, LOWP_RND_UP, 1},
    {"F16C vcvtps2ph imm=3 (rtz)", f16c_rtz, NULL, LOWP_RND_TZ, 1},
};
#define NORACLES (sizeof oracles / sizeof oracles[0])

static long mism[NORACLES], checked[NORACLES];

static void compare(const oracle_t *o, size_t k, double x) {
  double y, ref;
  uint64_t got = 0;
  uint16_t want;
  if (o->f32) {
    float s = (float)x;
    (void)lowp_round_f32(&y, s, &LOWP_FMT_FP16, NULL, o->rnd);
    want = o->f32(s);
    x = s;
  } else {
    (void)lowp_round_f64(&y, x, &LOWP_FMT_FP16, NULL, o->rnd);
    want = o->f64(x);
  }
  (void)lowp_encode(&got, y, &LOWP_FMT_FP16);
  checked[k]++;
  if (got == want) return;
  (void)lowp_decode(&ref, want, &LOWP_FMT_FP16);
  if (isnan(y) && isnan(ref) && !signbit(y) == !signbit(ref)) return; /* payload */
  if (mism[k]++ < 5)
    lowp_test_check(0, "%s: x=%a (%.17g): lowp 0x%04llx (%a), oracle 0x%04x (%a)", o->name,
                    x, x, (unsigned long long)got, y, want, ref);
}

static void all_oracles(double x, int have_f16c) {
  size_t k;
  for (k = 0; k < NORACLES; k++)
    if (!oracles[k].needs_f16c || have_f16c) compare(&oracles[k], k, x);
}

int main(void) {
  lowp_rng_t g;
  long i;
  int e, d, sign;
  int have_f16c;
  size_t k;
  lowp_test_start("tnative");
#if HAVE_X86
  have_f16c = lowp_cpu_has_f16c();
#else
  have_f16c = 0;
#endif
  printf("F16C: %s\n", have_f16c ? "yes" : "no (those oracles skipped)");
  /* boundary: every binade edge of fp16's range and beyond, with the
     half-ulp midpoints of fp16 and their binary32/binary64 neighbours */
  for (sign = 0; sign < 2; sign++)
    for (e = -28; e <= 17; e++)
      for (d = -3; d <= 3; d++) {
        double b = ldexp(1.0, e), u = ldexp(1.0, (e < -14 ? -14 : e) - 10);
        double a[4] = {b, b + d * u / 2, 2 * b - u / 2 + d * u / 4, 65504.0 + d * 8.0};
        int j;
        for (j = 0; j < 4; j++) {
          double x = sign ? -a[j] : a[j];
          all_oracles(x, have_f16c);
          all_oracles(nextafter(x, INFINITY), have_f16c);
          all_oracles(nextafter(x, -INFINITY), have_f16c);
          all_oracles((double)nextafterf((float)x, INFINITY), have_f16c);
          all_oracles((double)nextafterf((float)x, -INFINITY), have_f16c);
        }
      }
  all_oracles(INFINITY, have_f16c);
  all_oracles(-INFINITY, have_f16c);
  all_oracles(NAN, have_f16c);
  all_oracles(-NAN, have_f16c);
  all_oracles(0.0, have_f16c);
  all_oracles(-0.0, have_f16c);
  /* random: binary32 bit patterns, and binary64 values near fp16's range */
  lowp_rng_init(&g, lowp_test_seed(), 11);
  for (i = 0; i < 3000000; i++) {
    uint64_t r = lowp_rng_next(&g);
    uint32_t u = (uint32_t)r;
    float s;
    double x;
    if (i & 1) u = (u & 0x807fffffu) | ((uint32_t)(95 + (u >> 23) % 50) << 23);
    memcpy(&s, &u, sizeof s);
    x = ldexp((double)(r >> 11) * 0x1p-53 + 0.5, (int)(r % 48) - 30) * ((r >> 10) & 1 ? -1 : 1);
    for (k = 0; k < NORACLES; k++) {
      if (oracles[k].needs_f16c && !have_f16c) continue;
      compare(&oracles[k], k, oracles[k].f32 ? (double)s : x);
    }
  }
  for (k = 0; k < NORACLES; k++) {
    printf("  %-28s %9ld inputs, %ld mismatches\n", oracles[k].name, checked[k], mism[k]);
    lowp_test_check(mism[k] == 0, "%s: %ld of %ld differ", oracles[k].name, mism[k], checked[k]);
  }
  return lowp_test_end();
}
