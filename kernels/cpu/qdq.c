/* lowp_qdq -- quantize-dequantize fp32 matrices to a scaled low-precision format */

/*
 * The scale rules are the ones the documents and the OCP MX specification
 * state: per tensor and per row s = xmax / amax (the largest magnitude maps
 * onto the format's largest finite value: the seed document's compute_scale
 * and per_channel_scale; Micikevicius et al., "FP8 Formats for Deep
 * Learning", arXiv:2209.05433), kept as an fp32 number as scaling recipes do; MX blocks a
 * power of two chosen from the block's largest exponent, so the top of the
 * block's binade can exceed xmax and saturate (e4m3: block values at or
 * above 464 * 2^scale, i.e. from 0.906 times the next power of two, are
 * clamped to 448 * 2^scale; OCP MX v1.0 section 6.3 clamps them).
 */

#include "cpu/qdq.h"
#include "format/amax_bits.h"
#include "format/pow2.h"
#include "cpu.h"
#include "omp_inline.h"

#include "status.h"

#include <float.h>
#include <math.h>
#ifdef __x86_64__
#include <immintrin.h>
#endif
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

typedef struct {
  const lowp_format_t *f;
  lowp_policy_t pol;
  int fast;   /* round with round_fast: a signed format with subnormals and zero, p <= 52 */
  int isa;    /* the copy of group_fast to run: lowp_cpu_isa (LOWP_ISA limits it) */
  int v32;    /* every value of f is a binary32 number: p <= 24, quantum 2^(emin - p + 1) >= 2^-149,
                 xmax <= FLT_MAX (group_fast's binary32 division) */
  int f32;    /* group_f32_avx2 applies: v32, p <= 23, emax + 24 - p <= 127, and the CPU has FMA */
  double xmax, xmin;
  double ovf; /* xmax + ulp(xmax)/2: from here on, round to nearest overflows */
} qctx_t;

/* v rounded to nearest even in q->f, saturating: the same value as
   lowp_round_f64 with the saturating policy, for formats with gradual
   underflow (checked by tests/tqdq.c against a brute-force oracle). The
   quantum 2^(max(e, emin) - p + 1) is a power of two, so a / quantum is
   exact and rint (the default rounding mode, to nearest even) does the one
   rounding; a result above xmax saturates. */
static double round_fast(double v, const qctx_t *q) {
  double a = fabs(v), r;
  uint64_t u;
  int e;
  if (a == 0.0 || !isfinite(a)) return v;
  if (a < 0x1p-1000) return lowp_round_f64(&r, v, q->f, &q->pol, LOWP_RND_NE), r; /* far below any xmin */
  memcpy(&u, &a, sizeof u);
  e = (int)((u >> 52) & 0x7ff) - 1023; /* floor(log2 a): a is a normal double */
  if (e < q->f->emin) e = q->f->emin;
  r = rint(a * lowp__pow2(q->f->precision - 1 - e)) * lowp__pow2(e - q->f->precision + 1);
  if (r > q->xmax) r = q->xmax;
  return v < 0 ? -r : r;
}

/* x*s rounded to f (exact product: s is fp32 or a power of two); counts
   into c. The caller divides by s to dequantize. */
static double q1r(float x, double s, const qctx_t *q, lowp_qstats_t *c) {
  double v = (double)x * s, r;
  if (q->fast) r = round_fast(v, q);
  else (void)lowp_round_f64(&r, v, q->f, &q->pol, LOWP_RND_NE);
  if (fabs(v) >= q->ovf) c->saturated++;
  if (x != 0.0f) {
    c->nonzero++;
    if (r == 0.0) c->flushed++;
    else if (fabs(r) < q->xmin) c->subnormal++;
  }
  return r;
}

/* ------------------------------------------------- the vectorised path */

/* The same rounding as round_fast, without branches, for a group of
   elements sharing the scale s (2^-700 <= s <= 2^700, so every nonzero
   v = x * s has 2^-849 <= |v| < 2^829: a normal double, far from both
   ends). For a = |v| with exponent E = max(floor(log2 a), emin) the
   quantum is u = 2^(E - p + 1); C = 2^52 u is a power of two above a
   (p <= 52), so a + C lies in [C, 2C] where the doubles are the multiples
   of u, and fl(a + C) - C (exact) is a rounded to the nearest multiple of
   u, ties to the even multiple (C is an even one): rint(a / u) * u, which
   round_fast computes. A result above xmax saturates; the sign is put
   back on (0 keeps the sign of v, as in round_fast). The counts are those
   of q1r. Compiled for AVX-512, AVX2 and the baseline ISA where the
   compiler can, the copy chosen at run time by lowp_cpu_isa (so that
   LOWP_ISA=avx2 runs what an AVX2 CPU runs): integer and IEEE operations
   only, so every copy gives the same bits (tests/tqdq_fast.c checks them
   against q1r).

   The dequantization y = fl32(r / s) (r / s rounded to binary64, then to binary32) is one binary32
   division fl32(r32 / s32) (eight lanes a division instead of four; perf put most of the loop's samples
   right after its two vdivpd at AVX2, but alone this gained 2-5%) where div32 is set: s is a binary32
   number (s32 = s exactly) and so is every
   value of the format (v32 above), so r32 = r too. The two are the same number: write the exact
   quotient q = r / s (r = 0 gives +-0 both ways, the sign of r, as s > 0) as q = A 2^c / B with A, B
   the integer significands (1 <= A, B < 2^24) and e = floor(log2 |q|); r and s are binary32, so
   2^-277 < |q| < 2^277 is a normal binary64 number, and |fl64(q) - q| <= 2^(e - 53). The rounding
   to binary32 (to nearest even, gradual underflow, overflow to infinity at FLT_MAX + ulp / 2) is a
   monotone function whose value changes only at its boundaries M = (2K + 1) 2^(E - 1), the midpoints
   of the binary32 numbers of quantum 2^E around q (E = max(e, -126) - 23; the overflow threshold is
   one, with K = 2^24 - 1, E = 104; 0 and 2^-149 have the midpoint 2^-150); each M has at most 25
   significant bits and is a binary64 number. So if fl32(fl64(q)) != fl32(q), some M lies between q
   and fl64(q), both included, and fl64 being monotone too with fl64(M) = M, that means fl64(q) = M
   with q != M, so 0 < |q - M| <= 2^(e - 53). But q - M = (A 2^c - (2K + 1) 2^(E - 1) B) / B, a
   nonzero multiple of 2^min(c, E - 1) / B: |q - M| > 2^(E - 1 - 24) >= 2^(e - 48) (E >= e - 23),
   or |q - M| >= 2^c / B = |q| / A > 2^(e - 24); neither is <= 2^(e - 53). (This is the innocuous
   double rounding of Figueroa, "When is double rounding innocuous?", ACM SIGNUM Newsletter 30(3),
   1995: division in 53 >= 2 24 + 2 bits.) Where s is not a binary32 number (an MX scale 2^-e is one
   for the E8M0 exponents, 2^-127 a binary32 subnormal; an amax-scaled s always: fl32(xmax / amax);
   a cast s = 1) or the format has values beyond binary32, the binary64 division stays. This assumes
   IEEE binary32 division, no flush-to-zero or denormals-are-zero (lowp never sets them, and the
   vectorised fl32 conversion assumed the same). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__SANITIZE_ADDRESS__)
#define LOWP_QDQ_X86 1
#endif
static LOWP_ALWAYS_INLINE void group_fast_body(float *y, double *qo, const float *x, size_t len, double s,
                                               const qctx_t *q, lowp_qstats_t *c, int div32) {
  const uint64_t cadd = (uint64_t)(53 - q->f->precision) << 52, sign = (uint64_t)1 << 63;
  const uint64_t expo = (uint64_t)0x7ff << 52;
  const double xmax = q->xmax, xmin = q->xmin, ovf = q->ovf, cmin = lowp__pow2(q->f->emin + 53 - q->f->precision);
  const float s32 = (float)s;
  size_t j, nz = 0, sat = 0, rnz = 0, low = 0;
  for (j = 0; j < len; j++) {
    double v = (double)x[j] * s, a, cc, r;
    uint64_t u, sg;
    memcpy(&u, &v, sizeof u);
    sg = u & sign;
    u ^= sg;
    memcpy(&a, &u, sizeof a);
    /* C = 2^(max(floor(log2 a), emin) + 52 - p + 1): a's exponent field raised by 53 - p (a normal
       double again: 53 - p + floor(log2 a) < 1023), then the larger of it and cmin, the one of emin
       (doubles of one sign order as their exponents do; a = 0 gives a tiny power of two below cmin):
       a maximum on doubles, where a 64-bit integer maximum is two instructions and a blend on AVX2 */
    u = (u & expo) + cadd;
    memcpy(&cc, &u, sizeof cc);
    cc = cc > cmin ? cc : cmin;
    r = (a + cc) - cc;
    r = r > xmax ? xmax : r;
    memcpy(&u, &r, sizeof u);
    /* (a != 0 is x != 0: x s is exact and normal; the counts on binary64 lanes alone, where a binary32
       comparison split its 16 lanes for the 64-bit counters: a third of the loop's time). r != 0
       implies a != 0, so the flushed (a != 0, r = 0) are nz - rnz and the subnormal (0 < r < xmin)
       low - (len - rnz): four plain comparisons, no conjunctions. */
    sat += a >= ovf;
    nz += a != 0.0;
    rnz += r != 0.0;
    low += r < xmin;
    u |= sg;
    memcpy(&r, &u, sizeof r);
    if (qo) qo[j] = r;
    else if (div32) y[j] = (float)r / s32; /* = fl32(r / s): the proof above */
    else y[j] = (float)(r / s);
  }
  c->nonzero += nz;
  c->saturated += sat;
  c->flushed += nz - rnz;
  c->subnormal += low - (len - rnz);
}

/* div32 a constant in each loop: the binary32 division where it applies (above) */
static LOWP_ALWAYS_INLINE void group_fast_split(float *y, double *qo, const float *x, size_t len, double s,
                                                const qctx_t *q, lowp_qstats_t *c) {
  if (!qo && q->v32 && (double)(float)s == s) group_fast_body(y, NULL, x, len, s, q, c, 1);
  else group_fast_body(y, qo, x, len, s, q, c, 0);
}

#define GF_ARGS float *y, double *qo, const float *x, size_t len, double s, const qctx_t *q, lowp_qstats_t *c
static void group_fast_generic(GF_ARGS) { group_fast_split(y, qo, x, len, s, q, c); }
#ifdef LOWP_QDQ_X86
__attribute__((target("avx2"))) static void group_fast_avx2(GF_ARGS) { group_fast_split(y, qo, x, len, s, q, c); }
__attribute__((target("avx512f"))) static void group_fast_avx512(GF_ARGS) {
  group_fast_split(y, qo, x, len, s, q, c);
}
#endif
#undef GF_ARGS

#ifdef LOWP_QDQ_X86
/* group_fast_body's div32 case (no qo; s and every value of the format binary32 numbers) on eight
   binary32 lanes where that loop ran four binary64 ones; elements the argument below does not cover
   go through group_fast_body, eight at a time, so every output bit and count is that loop's.

   Notation: x and s binary32 (s > 0), v = x s exact (binary64's), w = |v|; RN32 rounds to binary32,
   to nearest even. The format f has precision pf <= 23 and emax + 24 - pf <= 127 (q->f32); its grid
   rounding G(w) = min(RN_f(w), xmax), with RN_f to nearest even on the multiples of the quantum
   u = 2^(max(floor(log2 w), emin) - pf + 1) (gradual underflow, no upper bound), is the r of
   group_fast_body.
   (1) The product and its error: p = RN32(x s), e = fmaf(x, s, -p). Where |p| >= 2^-100 and p is
   finite, e = v - p exactly: with ex = floor(log2 |x|), es = floor(log2 s), x is a multiple of
   2^(ex - 23) (also when subnormal: 2^-149 is one) and s of 2^(es - 23), so v is a multiple of
   Q = 2^(ex + es - 46), and so is p (|p| >= 2^(ex + es), a normal binary32 number: ulp(p) >=
   2^(ex + es - 23)); w < 2^(ex + es + 2) makes |v - p| <= 2^(ex + es - 23), so v - p = k Q with
   |k| <= 2^23. |p| >= 2^-100 gives w > 2^-101 (2^-100 is a binary32 number), so ex + es >= -102 and
   Q >= 2^-148: k Q is a binary32 number and the FMA's one rounding returns it (binary32's case of the
   condition ex + es >= emin + 23 under which the error of a product is representable: Boldo and
   Daumas, "Representable correcting terms for possibly underflowing floating point operations",
   ARITH 16, 2003). So e = 0 iff v = p, and e has the sign of v - p. Where x != 0 and |p| < 2^-100
   (x s towards binary32's subnormals) the element goes to group_fast_body; x = 0 gives p = v = +-0,
   e = 0. Where p = +-inf, w > FLT_MAX >= ovf (4): G(w) = xmax and the element saturates, which the
   steps below give too (ac = xmax, r = xmax, a >= ovf, a != ovf; e = -+inf, not NaN).
   (2) Rounding in binary32. a = |p| = RN32(w) (RN32 is odd); ac = min(a, xmax) <= xmax < 2^(emax+1).
   With E = max(floor(log2 ac), emin), C = 2^(E + 24 - pf) is a binary32 normal number (E + 24 - pf <=
   127 above, and >= emin + 24 - pf >= -126 as the quantum 2^(emin - pf + 1) >= 2^-149), built from
   ac's exponent field as group_fast_body builds its C, and C > ac (24 - pf >= 1). On [C, 2C]
   binary32's numbers are the multiples of C 2^-23 = 2^(E - pf + 1) = u, so RN32(ac + C) - C (exact: a
   multiple of u in [0, C]) is ac rounded to the nearest multiple of u, ties to the even one (C / u =
   2^23 is even): r = RN_f(ac) = G(a) (RN_f(xmax) = xmax and RN_f >= xmax above it), the argument the
   comment above group_fast_body makes in binary64. (ac = 0 gives r = 0 with any C.)
   (3) G(a) = G(w) unless a is a midpoint of the grid below xmax and e != 0. G is nondecreasing and
   changes value only at the midpoints m = (2k + 1) u / 2 < xmax, where it takes the even neighbour.
   If G(w) != G(a), such an m lies between w and a, both included; m has at most pf + 1 <= 24
   significant bits and lies above 2^-101 (w and a do) and below FLT_MAX: a binary32 number. w = m
   makes w a binary32 number, so a = w; w < m <= a or a <= m < w, with RN32 monotone and RN32(m) = m,
   makes a = m: either way a = m, a midpoint, and G(w) != G(a) needs w != a, e != 0 (no midpoint lies
   strictly between v and RN32(v), the midpoints being binary32 numbers). Such lanes go to
   group_fast_body. The test: r is within u / 2 of ac, so ac is a midpoint iff |ac - r| = u / 2 =
   C 2^-24 (ac - r is exact: r = 0, or r / 2 <= ac <= 2 r; C 2^-24 >= 2^-123 is normal as a >= 2^-100).
   (4) The counts. saturated is w >= ovf; ovf = xmax + ulp(xmax) / 2 has pf + 1 <= 24 bits and is
   below 2^(emax + 1) <= 2^128, a binary32 number, so where a != ovf, w >= ovf iff a >= ovf (RN32
   monotone, RN32(ovf) = ovf); a = ovf with e = 0 is w = ovf; a = ovf with e != 0 goes to
   group_fast_body. nonzero: x != 0 iff a != 0 on the lanes kept; flushed and subnormal depend on r
   alone, group_fast_body's r (a binary32 number, the same value). The sign of p is v's (RN32 is odd;
   p = -0 for x = -0), put back on r as group_fast_body puts v's; y = fl32(r / s) is then the same
   binary32 division as its div32 case. The counters are 32-bit lanes summed into the size_t counts
   every 2^28 elements (2^25 a lane at most). IEEE binary32 arithmetic without flush-to-zero is
   assumed, as in group_fast_body; -ffp-contract=off keeps every operation as written. */
/* group_f32_avx2's constants */
typedef struct {
  __m256 sv, absm, xmax, xmin, ovf, zero, cmin, half, tiny;
  __m256i expo, cadd;
} f32c_t;
/* group_f32_avx2's steps (1) and (2) on the eight lanes at x: *p = RN32(x s), *a = |p|, *r the grid
   rounding; returns the lanes group_fast_body must take instead ((3), (4): a midpoint below xmax, or ovf,
   with e != 0; (1): x != 0 with |p| < 2^-100) */
__attribute__((target("avx2,fma"))) static LOWP_ALWAYS_INLINE __m256 f32_lanes(const float *x, const f32c_t *k,
                                                                             __m256 *p, __m256 *a, __m256 *r) {
  const __m256 xv = _mm256_loadu_ps(x), e = _mm256_fmsub_ps(xv, k->sv, *p = _mm256_mul_ps(xv, k->sv));
  const __m256 ac = _mm256_min_ps(*a = _mm256_and_ps(*p, k->absm), k->xmax);
  __m256 cc, bad, low1;
  cc = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_and_si256(_mm256_castps_si256(ac), k->expo), k->cadd));
  cc = _mm256_max_ps(cc, k->cmin);
  *r = _mm256_sub_ps(_mm256_add_ps(ac, cc), cc);
  bad = _mm256_cmp_ps(_mm256_and_ps(_mm256_sub_ps(ac, *r), k->absm), _mm256_mul_ps(cc, k->half), _CMP_EQ_OQ);
  bad = _mm256_or_ps(bad, _mm256_cmp_ps(*a, k->ovf, _CMP_EQ_OQ));
  bad = _mm256_and_ps(bad, _mm256_cmp_ps(e, k->zero, _CMP_NEQ_OQ));
  low1 = _mm256_andnot_ps(_mm256_cmp_ps(xv, k->zero, _CMP_EQ_OQ), _mm256_cmp_ps(*a, k->tiny, _CMP_LT_OQ));
  return _mm256_or_ps(bad, low1);
}
/* (4) on lanes f32_lanes kept: the four counters, and y = fl32(r / s) with p's sign (the comment above
   group_fast_body) */
__attribute__((target("avx2,fma"))) static LOWP_ALWAYS_INLINE void f32_store(float *y, const f32c_t *k, __m256 p,
                                                                           __m256 a, __m256 r, __m256i *cnt) {
  cnt[0] = _mm256_sub_epi32(cnt[0], _mm256_castps_si256(_mm256_cmp_ps(a, k->zero, _CMP_NEQ_OQ)));
  cnt[1] = _mm256_sub_epi32(cnt[1], _mm256_castps_si256(_mm256_cmp_ps(a, k->ovf, _CMP_GE_OQ)));
  cnt[2] = _mm256_sub_epi32(cnt[2], _mm256_castps_si256(_mm256_cmp_ps(r, k->zero, _CMP_NEQ_OQ)));
  cnt[3] = _mm256_sub_epi32(cnt[3], _mm256_castps_si256(_mm256_cmp_ps(r, k->xmin, _CMP_LT_OQ)));
  _mm256_storeu_ps(y, _mm256_div_ps(_mm256_or_ps(r, _mm256_andnot_ps(k->absm, p)), k->sv));
}
__attribute__((target("avx2,fma"))) static void group_f32_avx2(float *y, const float *x, size_t len, double s,
                                                               const qctx_t *q, lowp_qstats_t *c) {
  const int pf = q->f->precision;
  f32c_t k;
  size_t j = 0;
  k.sv = _mm256_set1_ps((float)s), k.absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  k.xmax = _mm256_set1_ps((float)q->xmax), k.xmin = _mm256_set1_ps((float)q->xmin);
  k.ovf = _mm256_set1_ps((float)q->ovf), k.zero = _mm256_setzero_ps();
  k.cmin = _mm256_set1_ps((float)lowp__pow2(q->f->emin + 24 - pf)), k.half = _mm256_set1_ps(0x1p-24f);
  k.tiny = _mm256_set1_ps(0x1p-100f);
  k.expo = _mm256_set1_epi32(0x7f800000), k.cadd = _mm256_set1_epi32((24 - pf) << 23);
  while (len - j >= 8) {
    const size_t stop = len - j > ((size_t)1 << 28) ? j + ((size_t)1 << 28) : len;
    __m256i cnt[4]; /* nonzero, saturated, r nonzero, r below xmin */
    size_t i, n = 0, sum[4] = {0, 0, 0, 0};
    int32_t t[4][8];
    cnt[0] = cnt[1] = cnt[2] = cnt[3] = _mm256_setzero_si256();
    /* two vectors a step, one test and branch for both: the steps of one vector are a single chain of
       about thirty operations, which alone left the vector units idle (e4m3 per tensor, 2^16 values in
       cache, one thread, old and new alternated: 0.539-0.547 -> 0.464-0.473 ns a value at AVX2); a step
       with a lane to mend sends its elements through group_fast_body */
    for (; j + 16 <= stop; j += 16) {
      __m256 p0, a0, r0, p1, a1, r1;
      if (_mm256_movemask_ps(_mm256_or_ps(f32_lanes(x + j, &k, &p0, &a0, &r0),
                                          f32_lanes(x + j + 8, &k, &p1, &a1, &r1))) != 0) {
        group_fast_body(y + j, NULL, x + j, 16, s, q, c, 1);
        continue;
      }
      n += 16;
      f32_store(y + j, &k, p0, a0, r0, cnt);
      f32_store(y + j + 8, &k, p1, a1, r1, cnt);
    }
    for (; j + 8 <= stop; j += 8) {
      __m256 p0, a0, r0;
      if (_mm256_movemask_ps(f32_lanes(x + j, &k, &p0, &a0, &r0)) != 0) {
        group_fast_body(y + j, NULL, x + j, 8, s, q, c, 1);
        continue;
      }
      n += 8;
      f32_store(y + j, &k, p0, a0, r0, cnt);
    }
    for (i = 0; i < 4; i++) _mm256_storeu_si256((__m256i *)t[i], cnt[i]);
    for (i = 0; i < 8; i++)
      sum[0] += (size_t)t[0][i], sum[1] += (size_t)t[1][i], sum[2] += (size_t)t[2][i], sum[3] += (size_t)t[3][i];
    c->nonzero += sum[0]; /* group_fast_body's four counts */
    c->saturated += sum[1];
    c->flushed += sum[0] - sum[2];
    c->subnormal += sum[3] + sum[2] - n; /* low - (n - rnz): each lane counts in low or rnz */
  }
  if (j < len) group_fast_body(y + j, NULL, x + j, len - j, s, q, c, 1);
}
#endif

static void group_fast(float *y, double *qo, const float *x, size_t len, double s, const qctx_t *q,
                       lowp_qstats_t *c) {
#ifdef LOWP_QDQ_X86
  if (q->isa == LOWP_ISA_AVX512) { group_fast_avx512(y, qo, x, len, s, q, c); return; }
  if (q->isa == LOWP_ISA_AVX2) {
    if (!qo && q->f32 && (double)(float)s == s) group_f32_avx2(y, x, len, s, q, c);
    else group_fast_avx2(y, qo, x, len, s, q, c);
    return;
  }
#endif
  group_fast_generic(y, qo, x, len, s, q, c);
}

/* One group: the vectorised path where it applies, else q1r element by
   element (the reference, also used when ref is set). */
static void group(float *y, double *qo, const float *x, size_t len, double s, const qctx_t *q,
                  lowp_qstats_t *c, int ref) {
  size_t j;
  if (!ref && q->fast && s >= 0x1p-700 && s <= 0x1p700) group_fast(y, qo, x, len, s, q, c);
  else if (qo)
    for (j = 0; j < len; j++) qo[j] = q1r(x[j], s, q, c);
  else
    for (j = 0; j < len; j++) y[j] = (float)(q1r(x[j], s, q, c) / s);
}

/* max |x[i]| (NaNs skipped); *finite cleared if an infinity or NaN is among them. A pattern at or above
   the infinity's sends the data through the element loop, which skips NaNs as before. */
static double amax_of(const float *x, size_t n, int *finite) {
  uint32_t m = lowp__amax_bits(x, n); /* format/amax_bits.h: vectorised (fp8-quantization: a loop of
                                          compare-and-branch on doubles over every operand of every
                                          product was 6.5% of its samples) */
  double a = 0.0;
  size_t i;
  if (m < 0x7f800000u) { /* all finite */
    float v;
    memcpy(&v, &m, sizeof v);
    return (double)v;
  }
  for (i = 0; i < n; i++) {
    double v = fabs((double)x[i]);
    if (!isfinite(v)) *finite = 0;
    if (v > a) a = v;
  }
  return a;
}

/* ----------------------------------------------------------- public API */

float lowp_qdq_scale(double amax, const lowp_format_t *f) {
  if (!(amax > 0.0) || isinf(amax)) return 1.0f;
  return (float)(lowp_format_xmax(f) / amax);
}

int lowp_qdq_mx_exponent(double amax, const lowp_format_t *f) {
  int e;
  if (!(amax > 0.0)) return LOWP_FMT_E8M0.emin;
  (void)frexp(amax, &e); /* amax = m * 2^e, m in [0.5, 1): floor(log2) = e - 1 */
  e = e - 1 - f->emax;
  if (e < LOWP_FMT_E8M0.emin) e = LOWP_FMT_E8M0.emin;
  if (e > LOWP_FMT_E8M0.emax) e = LOWP_FMT_E8M0.emax;
  return e;
}

/* The scale of an amax-scaled group: fl32(xmax / amax) as a double. */
static double amax_scale(double a, const lowp_format_t *f) { return (double)lowp_qdq_scale(a, f); }

/* What every row of quant shares. */
typedef struct {
  float *y;
  double *qo;
  float *sinv;
  const float *x;
  size_t cols, block, nb;
  size_t rows, rpt; /* rows of x; rows per task (more than one only where one scale covers them all) */
  const lowp_format_t *f;
  lowp_qscheme_t scheme;
  int blocked, ref;
  double s_tensor;
  const qctx_t *q;
} qrows_t;

/* Task r of quant: rows [r rpt, (r + 1) rpt) (a->rpt > 1 only for one scale over the whole tensor
   and no blocks: one group over them, its count sums the same as row by row); its counts added to *nz,
   *sat, *fl, *sub. */
static void quant_row(long r, const qrows_t *a, size_t *nz, size_t *sat, size_t *fl, size_t *sub) {
  const size_t r0 = (size_t)r * a->rpt, nr = a->rows - r0 < a->rpt ? a->rows - r0 : a->rpt;
  const size_t cols = a->cols * nr, block = a->block;
  const float *xr = a->x + r0 * a->cols;
  lowp_qstats_t c;
  size_t b, g;
  double s = a->s_tensor;
  memset(&c, 0, sizeof c);
  if (a->scheme == LOWP_QS_ROW) {
    int fin = 1;
    s = lowp_qdq_scale(amax_of(xr, cols, &fin), a->f);
  }
  for (b = 0, g = 0; b < cols; b += a->blocked || a->qo ? block : cols, g++) {
    size_t len = a->blocked || a->qo ? (cols - b < block ? cols - b : block) : cols;
    if (a->blocked) {
      int fin = 1;
      double am = amax_of(xr + b, len, &fin);
      s = a->scheme == LOWP_QS_MXBLOCK ? ldexp(1.0, -lowp_qdq_mx_exponent(am, a->f)) : amax_scale(am, a->f);
    }
    group(a->qo ? NULL : a->y + r0 * a->cols + b, a->qo ? a->qo + r0 * a->cols + b : NULL, xr + b, len, s, a->q,
          &c, a->ref);
    if (a->qo) a->sinv[r0 * a->nb + g] = (float)(1.0 / s);
  }
  *nz += c.nonzero;
  *sat += c.saturated;
  *fl += c.flushed;
  *sub += c.subnormal;
}

enum { QTASK = 4096 };

/* Both entry points: y = q / s (fp32), or q and the groups' fl32(1 / s). */
static int quant(float *y, double *qo, float *sinv, const float *x, size_t rows, size_t cols,
                 const lowp_format_t *f, lowp_qscheme_t scheme, size_t block,
                 const double *amax, lowp_qstats_t *st, int ref) {
  qctx_t q;
  qrows_t a;
  int finite = 1, blocked = scheme == LOWP_QS_MXBLOCK || scheme == LOWP_QS_BLOCK;
  long r, ntask;
  size_t nz = 0, sat = 0, fl = 0, sub = 0;

  if (lowp_format_validate(f, NULL, 0)) return LOWP_EFORMAT;
  if (scheme < LOWP_QS_CAST || scheme > LOWP_QS_BLOCK) return LOWP_EINVAL;
  if ((blocked || qo) && block == 0) return LOWP_EINVAL;
  memset(&q, 0, sizeof q);
  q.f = f;
  q.isa = (int)lowp_cpu_isa(0);
  q.pol.overflow = LOWP_OVF_SAT;
  q.xmax = lowp_format_xmax(f);
  q.xmin = lowp_format_xmin(f);
  q.ovf = q.xmax + lowp_ulp(q.xmax, f) / 2;
  q.v32 = f->precision <= 24 && f->emin - f->precision + 1 >= -149 && q.xmax <= FLT_MAX;
  q.f32 = q.v32 && f->precision <= 23 && f->emax + 24 - f->precision <= 127 && lowp_cpu_isa(1) >= LOWP_ISA_AVX2;
  q.fast = f->nan != LOWP_NAN_NEGZERO && f->subnormals && f->has_zero && f->has_sign && f->precision <= 52 && f->emin > -1000 &&
           f->emax < 1000;
  a.y = y, a.qo = qo, a.sinv = sinv, a.x = x, a.cols = cols, a.block = block;
  a.nb = block ? (cols + block - 1) / block : 1;
  a.f = f, a.scheme = scheme, a.blocked = blocked, a.ref = ref, a.s_tensor = 1.0, a.q = &q;
  /* one scale for the whole tensor, no blocks: tasks of whole rows, at least QTASK values each (a short
     row's call cost more than its values: the ViT's rows are 16 to 256 long) */
  a.rows = rows;
  a.rpt = !blocked && !qo && scheme != LOWP_QS_ROW && cols > 0 && cols < QTASK ? (QTASK + cols - 1) / cols : 1;
  ntask = (long)((rows + a.rpt - 1) / a.rpt);
  {
    double am = amax_of(x, rows * cols, &finite);
    if (!finite) return LOWP_EINVAL;
    if (scheme == LOWP_QS_TENSOR) a.s_tensor = lowp_qdq_scale(amax ? *amax : am, f);
  }
  if (lowp_omp_inline()) /* the same tasks on this thread (omp_inline.h) */
    for (r = 0; r < ntask; r++) quant_row(r, &a, &nz, &sat, &fl, &sub);
  else {
#pragma omp parallel for schedule(static) reduction(+ : nz, sat, fl, sub)
    for (r = 0; r < ntask; r++) quant_row(r, &a, &nz, &sat, &fl, &sub);
  }
  if (st) {
    st->n += rows * cols;
    st->nonzero += nz;
    st->saturated += sat;
    st->flushed += fl;
    st->subnormal += sub;
  }
  return LOWP_OK;
}

int lowp_qdq_f32(float *y, const float *x, size_t rows, size_t cols,
                 const lowp_format_t *f, lowp_qscheme_t scheme, size_t block,
                 const double *amax, lowp_qstats_t *st) {
  return quant(y, NULL, NULL, x, rows, cols, f, scheme, block, amax, st, 0);
}

int lowp_qdq_f32_ref(float *y, const float *x, size_t rows, size_t cols, const lowp_format_t *f,
                     lowp_qscheme_t scheme, size_t block, const double *amax, lowp_qstats_t *st) {
  return quant(y, NULL, NULL, x, rows, cols, f, scheme, block, amax, st, 1);
}

int lowp_qdq_quant(double *q, float *sinv, const float *x, size_t rows, size_t cols,
                   const lowp_format_t *f, lowp_qscheme_t scheme, size_t block,
                   const double *amax, lowp_qstats_t *st) {
  if (!q || !sinv) return LOWP_EINVAL;
  return quant(NULL, q, sinv, x, rows, cols, f, scheme, block, amax, st, 0);
}

int lowp_qdq_quant_ref(double *q, float *sinv, const float *x, size_t rows, size_t cols,
                       const lowp_format_t *f, lowp_qscheme_t scheme, size_t block,
                       const double *amax, lowp_qstats_t *st) {
  if (!q || !sinv) return LOWP_EINVAL;
  return quant(NULL, q, sinv, x, rows, cols, f, scheme, block, amax, st, 1);
}
