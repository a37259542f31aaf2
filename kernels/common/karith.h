/* lowp_ka -- the per-element and per-block arithmetic of lowp's row kernels, written once for the GPU and its CPU twin */
#ifndef LOWP_KARITH_H
#define LOWP_KARITH_H

/*
 * Every function here is `static inline` and, under nvcc, __host__
 * __device__: kernels/cuda/rowk.cu runs it on the GPU and kernels/cpu/rowk.c
 * (plain C11) runs the same source on the CPU. Only fp32 operations that
 * IEEE 754 defines exactly are used (+ - * / sqrt, comparisons, bit moves),
 * so the two agree bit for bit provided that
 *   - no operation is contracted into an FMA: the C side builds with
 *     -ffp-contract=off, the CUDA side with --fmad=false (CMakeLists.txt);
 *   - no fast math: nvcc's defaults -prec-div=true -prec-sqrt=true
 *     -ftz=false give IEEE division, square root and subnormals;
 *   - exp and log are lowp_ka_expf / lowp_ka_logf below (a fixed sequence of
 *     fp32 operations), never libm's or CUDA's expf/logf, which differ;
 *   - NaN bits: the GPU's arithmetic returns one NaN, 0x7fffffff, and x86's
 *     does not, so the twins pass each stored result through
 *     lowp_ka_gpu_nan (below).
 *
 * THE LAUNCH ORDER (kernels/cuda/rowk.cu implements it; kernels/cpu/rowk.c
 * replays it; tests/trowk.c checks the replay against an independent
 * implementation of this text):
 *
 *   One block of LOWP_KA_THREADS = 256 threads (8 warps of 32) per row of n
 *   elements. A reduction of f(x[0..n-1]) with operator op and identity id:
 *   1. thread t (0..255) folds its elements in increasing index:
 *        s_t = id; for (i = t; i < n; i += 256) s_t = op(s_t, f(x[i]))
 *   2. in each warp w, a shuffle-down tree over its lanes s_{32w+l}:
 *        for off = 16, 8, 4, 2, 1: lane l (< off) s_l = op(s_l, s_{l+off})
 *      (lanes >= off compute values nobody reads); lane 0 holds the warp's
 *      result r_w = tree of its 32 partials.
 *   3. thread 0 folds the warp results in warp order:
 *        r = r_0; for w = 1..7: r = op(r, r_w)
 *      and broadcasts r to the block through shared memory.
 *   op takes its own value first (op(mine, other)); the sum's op is
 *   commutative in IEEE arithmetic anyway, the max's only up to the sign of
 *   a zero (max(+0, -0) keeps the second), hence the fixed operand order.
 *
 * Sums accumulate in a format F (fp32, fp16, bf16: lowp_ka_fmt_t): op(a, b)
 * = round_F(a + b), the fp32 sum rounded to F to nearest even; since 24 >=
 * 2p + 2 for p <= 11 that is F's correctly rounded addition (S. A.
 * Figueroa, "When is double rounding innocuous?", SIGNUM Newsletter 30(3),
 * 1995); bf16 (p = 8) likewise. The rounding is lowp_ka_round, lowp's own
 * bit-level code, checked against lib/format's lowp_round_f32 in
 * tests/tkarith.c.
 *
 * Kernels (all arithmetic in fp32 except the sum's accumulator):
 *   sum       y = reduce(+_F, x)
 *   softmax   naive: s = reduce(+, exp(x_i)); y_i = exp(x_i) / s
 *             stable: m = reduce(max, x_i); s = reduce(+, exp(x_i - m));
 *             y_i = exp(x_i - m) / s
 *   layernorm onepass: S = reduce(+, x_i), Q = reduce(+, x_i * x_i),
 *             mean = S / n, var = max(Q / n - mean * mean, 0)
 *             twopass: mean = reduce(+, x_i) / n,
 *             var = reduce(+, (x_i - mean) * (x_i - mean)) / n
 *             welford: reduce(lowp_ka_welford_merge) over per-thread
 *             Welford states (step 1 uses lowp_ka_welford_add), var = M2 / n
 *             all: y_i = (x_i - mean) * (1 / sqrt(var + eps))
 *   xent      m = reduce(max, x_i); s = reduce(+, exp(x_i - m));
 *             loss = log(s) - (x_t - m)
 *   scaler    unscale: lowp_ka_unscale per element (found_inf if any
 *             incoming g_i is NaN or inf: order-free); update:
 *             lowp_ka_scaler_update (one thread), PyTorch's _amp_update_scale_.
 */

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define LOWP_HD __host__ __device__
#else
#define LOWP_HD
#endif

/** @brief Threads per block (one block per row) and warps per block. */
#define LOWP_KA_THREADS 256
#define LOWP_KA_WARPS (LOWP_KA_THREADS / 32)

/* ------------------------------------------------------------------ types */

/** @brief An accumulation format as lowp_ka_round needs it: p significand
    bits (<= 24), emin, emax, IEEE infinities, subnormals, and a quantum
    2^(emin - p + 1) >= 2^-149 (fp32's). kernels/cpu/rowk.c builds it from a
    lowp_format_t (lowp_ka_fmt_from) and refuses other formats. */
typedef struct {
  int p, emin, emax;
} lowp_ka_fmt_t;

/** @brief A Welford state: count, mean, sum of squared deviations. */
typedef struct {
  float n, mean, m2;
} lowp_ka_welford_t;

/* -------------------------------------------------------- private helpers */

static inline LOWP_HD uint32_t lowp_ka_bits(float x) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(x);
#else
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
#endif
}

static inline LOWP_HD float lowp_ka_float(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
#endif
}

/** @brief 2^q as an fp32 (exact), for -149 <= q <= 127. */
static inline LOWP_HD float lowp_ka_pow2(int q) {
  if (q >= -126) return lowp_ka_float((uint32_t)(q + 127) << 23);
  return lowp_ka_float(1u << (q + 149));
}

/* ------------------------------------------------------------- rounding */

/**
 * @brief x rounded to nearest even in f (NaN and infinities unchanged,
 * overflow to infinity, gradual underflow, the sign of zero kept).
 * The value |x| = M 2^e with M normalised to 24 bits; the result's quantum
 * is 2^q, q = max(floor(log2|x|), emin) - p + 1; M is cut at bit q - e and
 * rounded to nearest even on the remainder; r 2^q is exact in fp32
 * (r <= 2^p, q >= -149).
 */
static inline LOWP_HD float lowp_ka_round(float x, lowp_ka_fmt_t f) {
  uint32_t u = lowp_ka_bits(x), a = u & 0x7fffffffu, sign = u & 0x80000000u;
  uint32_t M, r;
  int e, E, q, shift;
  float res, maxf;
  if (a >= 0x7f800000u || a == 0) return x; /* NaN, inf, zero */
  if (a >> 23) {
    M = (a & 0x7fffffu) | 0x800000u;
    e = (int)(a >> 23) - 150;
  } else { /* fp32 subnormal: normalise */
    M = a;
    e = -149;
    while (!(M & 0x800000u)) {
      M <<= 1;
      e--;
    }
  }
  E = e + 23; /* floor(log2 |x|) */
  q = (E > f.emin ? E : f.emin) - (f.p - 1);
  shift = q - e;
  if (shift <= 0) return x; /* already on F's grid */
  if (shift >= 25) {
    r = 0; /* |x| < 2^24 2^e <= half the quantum */
  } else {
    uint32_t rem = M & ((1u << shift) - 1u), half = 1u << (shift - 1);
    r = M >> shift;
    if (rem > half || (rem == half && (r & 1u))) r++;
  }
  res = (float)r * lowp_ka_pow2(q);
  maxf = (float)((1u << f.p) - 1u) * lowp_ka_pow2(f.emax - f.p + 1);
  if (res > maxf) res = lowp_ka_float(0x7f800000u);
  return lowp_ka_float(lowp_ka_bits(res) | sign);
}

/** @brief round_F(a + b): F's addition (see the top of this file). */
static inline LOWP_HD float lowp_ka_add(float a, float b, lowp_ka_fmt_t f) {
  return lowp_ka_round(a + b, f);
}

/** @brief max with NaN propagation and a fixed choice on ties (b). */
static inline LOWP_HD float lowp_ka_max(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  return a > b ? a : b;
}

/**
 * @brief The NaN of an NVIDIA GPU's fp32 arithmetic: every add, sub, mul
 * and IEEE div (div.rn.f32) whose result is NaN returns the canonical NaN
 * 0x7fffffff, whatever the operands' NaN payloads or signs (CUDA's
 * math_constants.h: CUDART_NAN_F is __int_as_float(0x7fffffff); the PTX
 * ISA calls it "canonical NaN"; seen on an H200 in trowk_fpx_gpu). x86 SSE
 * instead returns the default NaN 0xffc00000 for an invalid operation and
 * the first NaN operand, quieted, otherwise (Intel SDM vol. 1, 4.8.3.5,
 * table 4-7), and which operand is "first" is the C compiler's choice.
 */
#define LOWP_KA_GPU_NAN 0x7fffffffu

/**
 * @brief x, or the GPU's NaN if x is a NaN. The CPU twins apply it to every
 * value they store that the GPU computes by an fp32 arithmetic operation:
 * intermediate NaN bits may differ (lowp_ka_expf and lowp_ka_max pass a NaN
 * operand's bits on, x86 arithmetic keeps payloads), but they only reach
 * NaN tests and further arithmetic, which on the GPU ends in 0x7fffffff.
 * A value the GPU stores without arithmetic (unscale with inv_scale 1) keeps
 * its bits and is not passed through this.
 */
static inline LOWP_HD float lowp_ka_gpu_nan(float x) {
  return x != x ? lowp_ka_float(LOWP_KA_GPU_NAN) : x;
}

/** @brief 1 if x is NaN or an infinity. */
static inline LOWP_HD int lowp_ka_nonfinite(float x) {
  return (lowp_ka_bits(x) & 0x7f800000u) == 0x7f800000u;
}

/* --------------------------------------------------------- exp and log */

/**
 * @brief e^x in fp32 operations only. x = n ln2 + r with n = floor(x log2(e)
 * + 1/2) and r = (x - n ln2_hi) - n ln2_lo (Cody & Waite; ln2_hi has 15
 * significant bits, so n ln2_hi is exact for |n| < 2^9); e^r by its Taylor
 * polynomial of degree 7 in Horner form (|r| <= 0.35: truncation below
 * 0.35^8 / 8! = 6e-9 relative); then two exact-or-rounded scalings by
 * 2^(n/2) and 2^(n - n/2). Accuracy: tests/tkarith.c measures it against
 * binary64 exp.
 */
static inline LOWP_HD float lowp_ka_expf(float x) {
  const float log2e = 1.44269504f, ln2_hi = 0.693145752f, ln2_lo = 1.42860677e-06f;
  float t, nf, r, p;
  int n, n1;
  if (x != x) return x;
  if (x > 88.7228394f) return lowp_ka_float(0x7f800000u); /* > ln(FLT_MAX) */
  if (x < -104.0f) return 0.0f;                           /* < ln(2^-150) */
  t = x * log2e + 0.5f;
  nf = (float)(int)t;
  if (nf > t) nf = nf - 1.0f; /* floor */
  n = (int)nf;
  r = (x - nf * ln2_hi) - nf * ln2_lo;
  p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  n1 = n / 2;
  return p * lowp_ka_pow2(n1) * lowp_ka_pow2(n - n1);
}

/**
 * @brief log(x) in fp32 operations only. x = m 2^e with m in [sqrt(1/2),
 * sqrt(2)), f = m - 1 (exact), s = f / (2 + f), z = s^2; log(1 + f) =
 * f - (hfsq - s (hfsq + R)) with hfsq = f^2 / 2 and R = z (2/3 + 2/5 z +
 * ... + 2/11 z^4) (the odd series of 2 atanh(s) = 2s + s R, rearranged as
 * in fdlibm's e_log.c so that f, exact, carries the leading part);
 * truncation below 2 s^13 / 13 = 2e-11 for |s| <= 0.1716; then
 * e ln2_hi - ((hfsq - (s (hfsq + R) + e ln2_lo)) - f).
 */
static inline LOWP_HD float lowp_ka_logf(float x) {
  const float ln2_hi = 0.693145752f, ln2_lo = 1.42860677e-06f;
  uint32_t u = lowp_ka_bits(x);
  float m, f, s, z, R, hfsq, ef;
  int e;
  if (x != x) return x;
  if (x < 0.0f) return lowp_ka_float(0x7fc00000u);
  if (x == 0.0f) return lowp_ka_float(0xff800000u);
  if (u == 0x7f800000u) return x;
  e = 0;
  if (!(u >> 23)) { /* subnormal: scale up by 2^24 (exact) */
    x = x * 16777216.0f;
    u = lowp_ka_bits(x);
    e = -24;
  }
  e += (int)(u >> 23) - 127;
  m = lowp_ka_float((u & 0x7fffffu) | 0x3f800000u); /* [1, 2) */
  if (m > 1.41421356f) {
    m = m * 0.5f;
    e++;
  }
  f = m - 1.0f; /* exact (Sterbenz) */
  s = f / (2.0f + f);
  z = s * s;
  R = 2.0f / 11.0f;
  R = R * z + 2.0f / 9.0f;
  R = R * z + 2.0f / 7.0f;
  R = R * z + 2.0f / 5.0f;
  R = R * z + 2.0f / 3.0f;
  R = R * z;
  hfsq = 0.5f * f * f;
  ef = (float)e;
  return ef * ln2_hi - ((hfsq - (s * (hfsq + R) + ef * ln2_lo)) - f);
}

/* ---------------------------------------------------------------- Welford */

/** @brief Welford's update with one value (Welford 1962; Higham 2002, 1.9). */
static inline LOWP_HD lowp_ka_welford_t lowp_ka_welford_add(lowp_ka_welford_t a, float x) {
  float d;
  a.n = a.n + 1.0f;
  d = x - a.mean;
  a.mean = a.mean + d / a.n;
  a.m2 = a.m2 + d * (x - a.mean);
  return a;
}

/** @brief Merge two Welford states (Chan, Golub & LeVeque 1979, the
    pairwise update): an empty side leaves the other unchanged. */
static inline LOWP_HD lowp_ka_welford_t lowp_ka_welford_merge(lowp_ka_welford_t a,
                                                              lowp_ka_welford_t b) {
  lowp_ka_welford_t c;
  float d;
  if (b.n == 0.0f) return a;
  if (a.n == 0.0f) return b;
  c.n = a.n + b.n;
  d = b.mean - a.mean;
  c.mean = a.mean + d * (b.n / c.n);
  c.m2 = (a.m2 + b.m2) + (d * d) * ((a.n * b.n) / c.n);
  return c;
}

/* ------------------------------------------------------- row finishing */

/** @brief Layer norm's scale 1 / sqrt(var + eps). */
static inline LOWP_HD float lowp_ka_rstd(float var, float eps) {
  return 1.0f / sqrtf(var + eps);
}

/** @brief One-pass variance from the sums S and Q over n: max(Q/n - mean^2, 0). */
static inline LOWP_HD float lowp_ka_onepass_var(float S, float Q, float n, float *mean) {
  float m = S / n, v = Q / n - m * m;
  *mean = m;
  return v < 0.0f ? 0.0f : v;
}

/* ------------------------------------------------------------ grad scaler */

/**
 * @brief One gradient of PyTorch's _amp_foreach_non_finite_check_and_unscale_
 * (aten/src/ATen/native/cuda/AmpKernels.cu; lib/amp/scaler.c): the incoming
 * (still scaled) value is checked, then multiplied by inv_scale in fp32,
 * the multiplication skipped when inv_scale is 1. Returns 1 if g was NaN
 * or infinite.
 */
static inline LOWP_HD int lowp_ka_unscale(float *g, float inv_scale) {
  int bad = lowp_ka_nonfinite(*g);
  if (inv_scale != 1.0f) *g = *g * inv_scale;
  return bad;
}

/**
 * @brief PyTorch's _amp_update_scale_ (aten/src/ATen/native/cuda/
 * AmpKernels.cu; lib/amp/scaler.h): on found_inf scale = fp32(scale *
 * backoff) with the product in binary64 and tracker = 0; otherwise
 * successful = tracker + 1, and when it equals interval the scale grows to
 * fp32(scale * growth) if that is finite, tracker = 0; else tracker =
 * successful.
 */
static inline LOWP_HD void lowp_ka_scaler_update(float *scale, int32_t *tracker, int found_inf,
                                                 double growth, double backoff,
                                                 int32_t interval) {
  if (found_inf) {
    *scale = (float)((double)*scale * backoff);
    *tracker = 0;
  } else {
    int32_t successful = (int32_t)((uint32_t)*tracker + 1u); /* int32 wraps */
    if (successful == interval) {
      float ns = (float)((double)*scale * growth);
      if (!lowp_ka_nonfinite(ns)) *scale = ns;
      *tracker = 0;
    } else {
      *tracker = successful;
    }
  }
}

#endif
