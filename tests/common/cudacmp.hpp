/* lowp_cudacmp -- the CUDA 13 headers' host conversions as an oracle for lowp */
#ifndef LOWP_CUDACMP_HPP
#define LOWP_CUDACMP_HPP

/*
 * Shared by tests/tcuda_sample.cpp (a sample, default run) and
 * tests/long/tcuda_exhaustive.cpp (all 2^32 binary32 inputs). Test code
 * only: the CUDA headers are an oracle and nothing of them goes into lib/.
 *
 * Each case pairs one CUDA host conversion with the lowp format, mode and
 * policy that must reproduce it bit for bit. The policy is where CUDA's
 * choices show (docs/formats.md):
 *   - fp16/bf16 NaN results are the positive NaN 0x7fff (sign dropped):
 *     LOWP_NANSIGN_POSITIVE; lowp's default keeps the sign;
 *   - fp8 from binary32 (__nv_cvt_float_to_fp8) first replaces any NaN by
 *     0x7fffffff, so its NaN results are the positive canonical 0x7f:
 *     LOWP_NANSIGN_POSITIVE again. (The binary64 entry point,
 *     __nv_cvt_double_to_fp8, keeps the sign and, for e5m2, the top fraction
 *     bits of the NaN, 0x7e|m; lowp canonicalises payloads, see
 *     docs/formats.md);
 *   - __NV_SATFINITE clamps infinite inputs too: LOWP_OVF_SAT;
 *     __NV_NOSAT: e4m3 overflow is NaN, e5m2 overflow inf: LOWP_OVF_IEEE;
 *   - fp6/fp4 saturate and map NaN to +max: lowp's defaults;
 *   - e8m0 (rz, rp): |x| to a power of two, 0 and underflow to 2^-127.
 */

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

extern "C" {
#include "format/format.h"
#include "testutil.h"
}

/* ------------------------------------------------------------ the cases */

typedef uint32_t (*cuda_cvt)(float);

static uint32_t c_h_rn(float x) { __half_raw r = __float2half_rn(x); return r.x; }
static uint32_t c_h_rz(float x) { __half_raw r = __float2half_rz(x); return r.x; }
static uint32_t c_h_ru(float x) { __half_raw r = __float2half_ru(x); return r.x; }
static uint32_t c_h_rd(float x) { __half_raw r = __float2half_rd(x); return r.x; }
static uint32_t c_b_rn(float x) { __nv_bfloat16_raw r = __float2bfloat16_rn(x); return r.x; }
static uint32_t c_b_rz(float x) { __nv_bfloat16_raw r = __float2bfloat16_rz(x); return r.x; }
static uint32_t c_b_ru(float x) { __nv_bfloat16_raw r = __float2bfloat16_ru(x); return r.x; }
static uint32_t c_b_rd(float x) { __nv_bfloat16_raw r = __float2bfloat16_rd(x); return r.x; }
static uint32_t c_e4m3_sat(float x) { return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3); }
static uint32_t c_e4m3_nosat(float x) { return __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3); }
static uint32_t c_e5m2_sat(float x) { return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2); }
static uint32_t c_e5m2_nosat(float x) { return __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E5M2); }
static uint32_t c_e2m3_rn(float x) { return __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest); }
static uint32_t c_e2m3_rz(float x) { return __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundZero); }
static uint32_t c_e3m2_rn(float x) { return __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest); }
static uint32_t c_e3m2_rz(float x) { return __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundZero); }
static uint32_t c_e2m1_rn(float x) { return __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest); }
static uint32_t c_e2m1_rz(float x) { return __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundZero); }
static uint32_t c_e8m0_rz_sat(float x) { return __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundZero); }
static uint32_t c_e8m0_rz_nosat(float x) { return __nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundZero); }
static uint32_t c_e8m0_rp_sat(float x) { return __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf); }
static uint32_t c_e8m0_rp_nosat(float x) { return __nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundPosInf); }

typedef struct {
  const char *name;
  const lowp_format_t *f;
  lowp_rounding_t rnd;
  lowp_overflow_t overflow;
  lowp_nansign_t nan_sign;
  cuda_cvt cuda;
} cuda_case_t;

static const cuda_case_t cuda_cases[] = {
    {"fp16 __float2half_rn", &LOWP_FMT_FP16, LOWP_RND_NE, LOWP_OVF_IEEE, LOWP_NANSIGN_POSITIVE, c_h_rn},
    {"fp16 __float2half_rz", &LOWP_FMT_FP16, LOWP_RND_TZ, LOWP_OVF_IEEE, LOWP_NANSIGN_POSITIVE, c_h_rz},
    {"fp16 __float2half_ru", &LOWP_FMT_FP16, LOWP_RND_UP, LOWP_OVF_IEEE, LOWP_NANSIGN_POSITIVE, c_h_ru},
    {"fp16 __float2half_rd", &LOWP_FMT_FP16, LOWP_RND_DN, LOWP_OVF_IEEE, LOWP_NANSIGN_POSITIVE, c_h_rd},
    {"bf16 __float2bfloat16_rn", &LOWP_FMT_BF16, LOWP_RND_NE, LOWP_OVF_IEEE, LOWP_NANSIGN_POSITIVE, c_b_rn},
    {"bf16 __float2bfloat16_rz", &LOWP_FMT_BF16, LOWP_RND_TZ, LOWP_OVF_IEEE, LOWP_NANSIGN_POSITIVE, c_b_rz},
    {"bf16 __float2bfloat16_ru", &LOWP_FMT_BF16, LOWP_RND_UP, LOWP_OVF_IEEE, LOWP_NANSIGN_POSITIVE, c_b_ru},
    {"bf16 __float2bfloat16_rd", &LOWP_FMT_BF16, LOWP_RND_DN, LOWP_OVF_IEEE, LOWP_NANSIGN_POSITIVE, c_b_rd},
    {"e4m3 __nv_cvt_float_to_fp8 SATFINITE", &LOWP_FMT_E4M3, LOWP_RND_NE, LOWP_OVF_SAT, LOWP_NANSIGN_POSITIVE, c_e4m3_sat},
    {"e4m3 __nv_cvt_float_to_fp8 NOSAT", &LOWP_FMT_E4M3, LOWP_RND_NE, LOWP_OVF_IEEE, LOWP_NANSIGN_POSITIVE, c_e4m3_nosat},
    {"e5m2 __nv_cvt_float_to_fp8 SATFINITE", &LOWP_FMT_E5M2, LOWP_RND_NE, LOWP_OVF_SAT, LOWP_NANSIGN_POSITIVE, c_e5m2_sat},
    {"e5m2 __nv_cvt_float_to_fp8 NOSAT", &LOWP_FMT_E5M2, LOWP_RND_NE, LOWP_OVF_IEEE, LOWP_NANSIGN_POSITIVE, c_e5m2_nosat},
    {"e2m3 __nv_cvt_float_to_fp6 rn", &LOWP_FMT_E2M3, LOWP_RND_NE, LOWP_OVF_IEEE, LOWP_NANSIGN_KEEP, c_e2m3_rn},
    {"e2m3 __nv_cvt_float_to_fp6 rz", &LOWP_FMT_E2M3, LOWP_RND_TZ, LOWP_OVF_IEEE, LOWP_NANSIGN_KEEP, c_e2m3_rz},
    {"e3m2 __nv_cvt_float_to_fp6 rn", &LOWP_FMT_E3M2, LOWP_RND_NE, LOWP_OVF_IEEE, LOWP_NANSIGN_KEEP, c_e3m2_rn},
    {"e3m2 __nv_cvt_float_to_fp6 rz", &LOWP_FMT_E3M2, LOWP_RND_TZ, LOWP_OVF_IEEE, LOWP_NANSIGN_KEEP, c_e3m2_rz},
    {"e2m1 __nv_cvt_float_to_fp4 rn", &LOWP_FMT_E2M1, LOWP_RND_NE, LOWP_OVF_IEEE, LOWP_NANSIGN_KEEP, c_e2m1_rn},
    {"e2m1 __nv_cvt_float_to_fp4 rz", &LOWP_FMT_E2M1, LOWP_RND_TZ, LOWP_OVF_IEEE, LOWP_NANSIGN_KEEP, c_e2m1_rz},
    {"e8m0 __nv_cvt_float_to_e8m0 rz SATFINITE", &LOWP_FMT_E8M0, LOWP_RND_TZ, LOWP_OVF_SAT, LOWP_NANSIGN_KEEP, c_e8m0_rz_sat},
    {"e8m0 __nv_cvt_float_to_e8m0 rz NOSAT", &LOWP_FMT_E8M0, LOWP_RND_TZ, LOWP_OVF_IEEE, LOWP_NANSIGN_KEEP, c_e8m0_rz_nosat},
    {"e8m0 __nv_cvt_float_to_e8m0 rp SATFINITE", &LOWP_FMT_E8M0, LOWP_RND_UP, LOWP_OVF_SAT, LOWP_NANSIGN_KEEP, c_e8m0_rp_sat},
    {"e8m0 __nv_cvt_float_to_e8m0 rp NOSAT", &LOWP_FMT_E8M0, LOWP_RND_UP, LOWP_OVF_IEEE, LOWP_NANSIGN_KEEP, c_e8m0_rp_nosat},
};
#define NCUDA_CASES (sizeof cuda_cases / sizeof cuda_cases[0])

/* --------------------------------------------------------- comparison */

typedef struct {
  uint64_t checked[NCUDA_CASES];
  uint64_t mismatches[NCUDA_CASES];
} cuda_tally_t;

/* lowp's bits for x under case c */
static inline uint64_t lowp_bits(const cuda_case_t *c, float x) {
  lowp_policy_t pol;
  double y;
  uint64_t b = ~UINT64_C(0);
  std::memset(&pol, 0, sizeof pol);
  pol.overflow = c->overflow;
  pol.nan_sign = c->nan_sign;
  (void)lowp_round_f32(&y, x, c->f, &pol, c->rnd);
  if (lowp_encode(&b, y, c->f) != 0) b = ~UINT64_C(0);
  return b;
}

/* Compare one input under every case; record; print the first few
   mismatches of each case (the caller serialises printing). Returns the
   number of mismatches. */
static inline int cuda_compare_one(float x, cuda_tally_t *t, int print) {
  int bad = 0;
  for (size_t k = 0; k < NCUDA_CASES; k++) {
    const cuda_case_t *c = &cuda_cases[k];
    uint64_t want = c->cuda(x), got = lowp_bits(c, x);
    t->checked[k]++;
    if (got == want) continue;
    t->mismatches[k]++;
    bad++;
    if (print && t->mismatches[k] <= 5) {
      uint32_t u;
      std::memcpy(&u, &x, sizeof u);
      std::printf("MISMATCH %s: x=%a (%.9g) [%08x]: lowp 0x%llx, CUDA 0x%llx\n", c->name,
                  (double)x, (double)x, u, (unsigned long long)got, (unsigned long long)want);
    }
  }
  return bad;
}

/* One check per case in the test's tally, with counts in the message. */
static inline void cuda_report(const cuda_tally_t *t) {
  for (size_t k = 0; k < NCUDA_CASES; k++) {
    lowp_test_check(t->mismatches[k] == 0, "%s: %llu of %llu inputs differ", cuda_cases[k].name,
                    (unsigned long long)t->mismatches[k], (unsigned long long)t->checked[k]);
    std::printf("  %-42s %12llu inputs, %llu mismatches\n", cuda_cases[k].name,
                (unsigned long long)t->checked[k], (unsigned long long)t->mismatches[k]);
  }
}

#endif
