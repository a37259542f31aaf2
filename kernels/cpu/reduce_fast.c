/* lowp_reduce_fast -- the summation orders of lowp_accum_dot on vectors of outputs, same bits */

/*
 * lib/model/accum.c defines each order per output: recursive (the first
 * two terms in one rounding, a lone term rounded once as t + 0), pairwise
 * (mid = lo + (hi - lo) / 2, exact terms at the leaves), blocked:B and
 * splitk:S (recursive sums of width B, or ceil(k / S), then added left to
 * right from the first). The shape of every one depends only on k, so OW
 * outputs of a row of C (columns j0 .. j0 + OW) follow the same tree at
 * once: a term is a vector over j (a[i l] b[l j], rounded to acc first
 * when fma = 0), an addition a vector of roundings.
 *
 * Each addition is gemm_acc_fast.c's step (cpu/acc_steps.h), proven there:
 * fp64 (p = 53, rne) adds in binary64 as accum.c does; narrower formats
 * (p <= 51) take x + y rounded to odd at 53 bits by TwoSum, then rounded
 * once to acc in the mode (Boldo and Melquiond, IEEE Trans. Computers
 * 57(4), 2008, Theorem 1). That step holds for any two binary64 operands
 * whose sum TwoSum gets exactly: here both are values of acc or exact
 * products of binary32 values (48 bits, exponent >= -298: every sum of two
 * of them is a multiple of 2^-298, far inside binary64's subnormal grid,
 * and far below its overflow). Zeros follow IEEE 754 6.3 as accum.c does
 * (x + 0 keeps the sign of x; an exact zero sum is +0, or -0 in rdn unless
 * both terms are +0); a NaN result is the positive quiet NaN.
 *
 * Loops: tasks of (column block, row group), the column block of B packed
 * as k x OW (zeros past n). Compiled three times (baseline, AVX2+FMA,
 * AVX-512) and chosen at run time, as in gemm_acc_fast.c.
 */

#include "cpu.h"
#include "cpu/gemm_acc_fast.h"
#include "cpu/reduce_fast.h"
#include "cpu/reduce_fast32.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

#include "cpu/acc_steps.h"

enum { OW = 32, IRO = 64 };

/* Everything the loops read. */
typedef struct {
  const double *arow;  /* row i of A (k entries) */
  const double *panel; /* k x OW, columns j0 .. j0 + OW of B */
  tgt_t acc;
  int rp;  /* fma = 0: products rounded to acc */
  int f64; /* fp64 in rne: binary64 operations */
  lowp_acc_order_t order;
  size_t block;
} octx_t;

/* out = the terms a[i l] b[l j] of the OW columns */
AI void term(double *out, const octx_t *c, size_t l) {
  const vd va = vsplat(c->arow[l]);
  const double *bl = c->panel + l * OW;
  size_t j;
  for (j = 0; j < OW; j += VW) {
    vd vb, p;
    memcpy(&vb, bl + j, sizeof vb);
    p = va * vb;
    if (c->rp && !c->f64) p = vround_to(p, &c->acc);
    memcpy(out + j, &p, sizeof p);
  }
}

/* x = x + y, each lane rounded once to acc */
AI void add_to(double *x, const double *y, const octx_t *c) {
  size_t j;
  for (j = 0; j < OW; j += VW) {
    vd vx, vy;
    memcpy(&vx, x + j, sizeof vx);
    memcpy(&vy, y + j, sizeof vy);
    vx = c->f64 ? vx + vy : vround_to(vadd_odd(vx, vy, c->acc.mode), &c->acc);
    memcpy(x + j, &vx, sizeof vx);
  }
}

/* the fp32-in-rne lanes */
enum { OWF = 64 };
typedef float vf8 __attribute__((vector_size(32)));

typedef struct {
  const float *arow;  /* row i of A as binary32 */
  const float *panel; /* k x OWF, columns j0 .. j0 + OWF of B */
  int rp;
  lowp_acc_order_t order;
  size_t block;
} fctx_t;

/* out = round(t_l + t_{l+1}), the two terms exact: fma = 1, TwoSum rounded
   to odd at 53 bits then to binary32 by the conversion (rne; Boldo and
   Melquiond, Theorem 1: 53 >= 24 + 2); fma = 0, binary32 products added */
AI void ftwo(float *out, const fctx_t *c, size_t l) {
  const float a0 = c->arow[l], a1 = c->arow[l + 1];
  const float *b0 = c->panel + l * OWF, *b1 = b0 + OWF;
  size_t j;
  if (c->rp) {
    for (j = 0; j < OWF; j++) out[j] = a0 * b0[j] + a1 * b1[j];
    return;
  }
  for (j = 0; j < OWF; j += 8) {
    vf8 f0, f1;
    vd p0, p1;
    memcpy(&f0, b0 + j, sizeof f0);
    memcpy(&f1, b1 + j, sizeof f1);
    p0 = vsplat(a0) * __builtin_convertvector(f0, vd);
    p1 = vsplat(a1) * __builtin_convertvector(f1, vd);
    f0 = __builtin_convertvector(vadd_odd(p0, p1, M_NE), vf8);
    memcpy(out + j, &f0, sizeof f0);
  }
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define LOWP_ORD_AVX512 "avx512f,avx512bw,avx512vl,avx512dq,fma"
/* ftwo on AVX-512, fma = 1: the sum rounded to odd from the two roundings
   of the same exact sum, down (d) and up (u), AVX-512's rounding in the
   instruction (gemm_acc_fast.c's rofma argument on binary64): d == u, the
   sum is exact (u: the sign of an exact zero sum as rne gives it); else
   they are adjacent and the odd one is the value rounded to odd */
__attribute__((target(LOWP_ORD_AVX512))) AI void ftwo512(float *out, const fctx_t *c,
                                                          size_t l) {
  const float *b0 = c->panel + l * OWF, *b1 = b0 + OWF;
  const __m512d va0 = _mm512_set1_pd((double)c->arow[l]);
  const __m512d va1 = _mm512_set1_pd((double)c->arow[l + 1]);
  const __m512i one = _mm512_set1_epi64(1);
  size_t j;
  if (c->rp) {
    ftwo(out, c, l);
    return;
  }
  for (j = 0; j < OWF; j += 8) {
    __m512d p0 = _mm512_mul_pd(va0, _mm512_cvtps_pd(_mm256_loadu_ps(b0 + j)));
    __m512d p1 = _mm512_mul_pd(va1, _mm512_cvtps_pd(_mm256_loadu_ps(b1 + j)));
    __m512d d = _mm512_add_round_pd(p0, p1, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m512d u = _mm512_add_round_pd(p0, p1, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    __mmask8 pick_d = _mm512_cmp_pd_mask(d, u, _CMP_NEQ_OQ) &
                      _mm512_test_epi64_mask(_mm512_castpd_si512(d), one);
    _mm256_storeu_ps(out + j, _mm512_cvtpd_ps(_mm512_mask_blend_pd(pick_d, u, d)));
  }
}
#endif

/* out = round(t_l + 0): a lone term, -0 to +0 */
AI void flone(float *out, const fctx_t *c, size_t l) {
  const float a0 = c->arow[l], *b0 = c->panel + l * OWF;
  size_t j;
  for (j = 0; j < OWF; j++)
    out[j] = c->rp ? a0 * b0[j] + 0.0f : (float)((double)a0 * (double)b0[j] + 0.0);
}

#define SFX _generic
#define ATTR
#define FTWO ftwo
#include "cpu/reduce_fast_body.h"
#undef SFX
#undef ATTR
#undef FTWO

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define LOWP_ORDFAST_X86 1
#define SFX _avx2
#define ATTR __attribute__((target("avx2,fma")))
#define FTWO ftwo
#include "cpu/reduce_fast_body.h"
#undef SFX
#undef ATTR
#undef FTWO
#define SFX _avx512
#define ATTR __attribute__((target(LOWP_ORD_AVX512)))
#define FTWO ftwo512
#include "cpu/reduce_fast_body.h"
#undef SFX
#undef ATTR
#undef FTWO
#endif

static void row_isa(int isa, double *out, const octx_t *c, size_t k) {
  switch (isa) {
#ifdef LOWP_ORDFAST_X86
  case LOWP_ISA_AVX512: row__avx512(out, c, k); break;
  case LOWP_ISA_AVX2: row__avx2(out, c, k); break;
#endif
  default: row__generic(out, c, k); break;
  }
}

static void frow_isa(int isa, float *out, const fctx_t *c, size_t k) {
  switch (isa) {
#ifdef LOWP_ORDFAST_X86
  case LOWP_ISA_AVX512: frow__avx512(out, c, k); break;
  case LOWP_ISA_AVX2: frow__avx2(out, c, k); break;
#endif
  default: frow__generic(out, c, k); break;
  }
}

static int fast_mode_of(lowp_rounding_t rnd) {
  switch (rnd) {
  case LOWP_RND_NE: return M_NE;
  case LOWP_RND_TZ: return M_TZ;
  case LOWP_RND_UP: return M_UP;
  case LOWP_RND_DN: return M_DN;
  default: return -1;
  }
}

/* the recursive order's fast kernel for this accumulator, or NONE */
static lowp_accfast_kind_t kind_for(const double *a, const double *b, size_t m, size_t n,
                                    size_t k, const lowp_accum_t *acc) {
  lowp_gemm_acc_cfg_t g;
  memset(&g, 0, sizeof g);
  g.acc = &acc->acc;
  g.acc_rnd = acc->rnd;
  g.prod = acc->fma ? NULL : &acc->acc;
  g.prod_rnd = acc->rnd;
  g.order = LOWP_ORDER_RECURSIVE;
  return lowp_gemm_acc_fast_kind(a, b, m, n, k, &g);
}

/* ----------------------------------------------------------- public API */

/* the recursive order's fast kernel when this one serves acc, or NONE */
static lowp_accfast_kind_t usable_kind(const double *a, const double *b, size_t m, size_t n,
                                       size_t k, const lowp_accum_t *acc) {
  if (!acc || lowp_accum_validate(acc, NULL, 0) != LOWP_OK || acc->order == LOWP_ACC_KAHAN)
    return LOWP_ACCFAST_NONE;
  if (fast_mode_of(acc->rnd) < 0 || acc->acc.precision > 53) return LOWP_ACCFAST_NONE;
  /* FMA64 is fp64 in rne; every other kind runs on formats of p <= 51
     (gemm_acc_fast.c's ro_fits) with binary32 inputs */
  return kind_for(a, b, m, n, k, acc);
}

int lowp_gemm_order_fast_ok(const double *a, const double *b, size_t m, size_t n, size_t k,
                            const lowp_accum_t *acc) {
  return usable_kind(a, b, m, n, k, acc) != LOWP_ACCFAST_NONE;
}

/* the loops that run kind kd on isa use: 2 cpu/reduce_fast32.h, 1 the
   fp32-in-rne binary32 lanes here, 0 the binary64 lanes */
static int path_of(lowp_accfast_kind_t kd, const lowp_accum_t *acc, int use, size_t k) {
  if (lowp_order_fast32_ok(kd, acc, use, k)) return 2;
  /* fp32 (FMA32: binary32 inputs) in rne: binary32 lanes */
  return kd == LOWP_ACCFAST_FMA32 && acc->rnd == LOWP_RND_NE;
}

/* the isa argument as lowp_isa_t, or -1 (unknown) or -2 (not on this CPU) */
static int isa_use(const char *isa) {
  int best = (int)lowp_cpu_isa(1), use;
  if (!isa) return best;
  if ((use = lowp_isa_parse(isa)) < 0) return -1;
  return use > best ? -2 : use;
}

int lowp_gemm_order_fast_lanes(const double *a, const double *b, size_t m, size_t n, size_t k,
                               const lowp_accum_t *acc, const char *isa) {
  int use = isa_use(isa);
  lowp_accfast_kind_t kd = usable_kind(a, b, m, n, k, acc);
  if (use < 0 || kd == LOWP_ACCFAST_NONE) return 0;
  return path_of(kd, acc, use, k) ? 32 : 64;
}

/* one task of the binary64 lanes: rows [i0, i1), columns j0 .. j0 + jw */
static int task64(double *c, const double *a, const double *b, size_t n, size_t k,
                  const lowp_accum_t *acc, int f64, int isa, size_t i0, size_t i1, size_t j0,
                  size_t jw) {
  double *panel = aligned_alloc(64, k * OW * sizeof(double)), out[OW];
  size_t i, l, j;
  octx_t oc;
  if (!panel) return 1;
  for (l = 0; l < k; l++)
    for (j = 0; j < OW; j++) panel[l * OW + j] = j < jw ? b[l * n + j0 + j] : 0.0;
  memset(&oc, 0, sizeof oc);
  oc.panel = panel;
  oc.acc.p = acc->acc.precision;
  oc.acc.emin = acc->acc.emin;
  oc.acc.mode = fast_mode_of(acc->rnd);
  oc.acc.xmax = lowp_format_xmax(&acc->acc);
  oc.rp = !acc->fma;
  oc.f64 = f64;
  oc.order = acc->order;
  oc.block = acc->block;
  for (i = i0; i < i1; i++) {
    oc.arow = a + i * k;
    row_isa(isa, out, &oc, k);
    for (j = 0; j < jw; j++) c[i * n + j0 + j] = canon(out[j]);
  }
  free(panel);
  return 0;
}

/* one task of the binary32 lanes (fp32 in rne) */
static int task32(double *c, const double *a, const double *b, size_t n, size_t k,
                  const lowp_accum_t *acc, int isa, size_t i0, size_t i1, size_t j0,
                  size_t jw) {
  float *panel = aligned_alloc(64, k * OWF * sizeof(float)), *arow = malloc(k * sizeof(float));
  float out[OWF] __attribute__((aligned(64)));
  size_t i, l, j;
  fctx_t fc;
  if (!panel || !arow) {
    free(panel), free(arow);
    return 1;
  }
  for (l = 0; l < k; l++)
    for (j = 0; j < OWF; j++) panel[l * OWF + j] = j < jw ? (float)b[l * n + j0 + j] : 0.0f;
  memset(&fc, 0, sizeof fc);
  fc.panel = panel;
  fc.arow = arow;
  fc.rp = !acc->fma;
  fc.order = acc->order;
  fc.block = acc->block;
  for (i = i0; i < i1; i++) {
    for (l = 0; l < k; l++) arow[l] = (float)a[i * k + l];
    frow_isa(isa, out, &fc, k);
    for (j = 0; j < jw; j++) c[i * n + j0 + j] = canon((double)out[j]);
  }
  free(panel), free(arow);
  return 0;
}

int lowp_gemm_order_fast(double *c, const double *a, const double *b, size_t m, size_t n,
                         size_t k, const lowp_accum_t *acc, const char *isa) {
  size_t nj, ni, e, w;
  long long t;
  int use = isa_use(isa), fail = 0, f64, f32, path;
  lowp_accfast_kind_t kd;
  if (use < 0) return use == -1 ? LOWP_EINVAL : LOWP_EUNSUPPORTED;
  /* the inputs read once (the kind scans them) */
  kd = usable_kind(a, b, m, n, k, acc);
  if ((m && n && !c) || kd == LOWP_ACCFAST_NONE) return LOWP_EINVAL;
  if (m == 0 || n == 0) return LOWP_OK;
  if (k == 0) {
    for (e = 0; e < m * n; e++) c[e] = 0.0;
    return LOWP_OK;
  }
  /* narrow accumulators and fp32 in directed modes: cpu/reduce_fast32.h */
  path = path_of(kd, acc, use, k);
  if (path == 2) return lowp_order_fast32(c, a, b, m, n, k, acc, fast_mode_of(acc->rnd), use);
  f64 = kd == LOWP_ACCFAST_FMA64;
  f32 = path == 1;
  w = f32 ? OWF : OW;
  nj = (n + w - 1) / w, ni = (m + IRO - 1) / IRO;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : fail)
  for (t = 0; t < (long long)(nj * ni); t++) {
    size_t j0 = ((size_t)t % nj) * w, i0 = ((size_t)t / nj) * IRO;
    size_t jw = n - j0 < w ? n - j0 : w, i1 = m - i0 < IRO ? m : i0 + IRO;
    fail |= f32 ? task32(c, a, b, n, k, acc, use, i0, i1, j0, jw)
                : task64(c, a, b, n, k, acc, f64, use, i0, i1, j0, jw);
  }
  return fail ? LOWP_ENOMEM : LOWP_OK;
}
