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

#define SFX _generic
#define ATTR
#include "cpu/reduce_fast_body.h"
#undef SFX
#undef ATTR

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define LOWP_ORDFAST_X86 1
#define SFX _avx2
#define ATTR __attribute__((target("avx2,fma")))
#include "cpu/reduce_fast_body.h"
#undef SFX
#undef ATTR
#define SFX _avx512
#define ATTR __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma")))
#include "cpu/reduce_fast_body.h"
#undef SFX
#undef ATTR
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

static int best_isa(void) {
#ifdef LOWP_ORDFAST_X86
  return (int)lowp_cpu_isa(1);
#else
  return LOWP_ISA_GENERIC;
#endif
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

int lowp_gemm_order_fast_ok(const double *a, const double *b, size_t m, size_t n, size_t k,
                            const lowp_accum_t *acc) {
  if (!acc || lowp_accum_validate(acc, NULL, 0) != LOWP_OK || acc->order == LOWP_ACC_KAHAN)
    return 0;
  if (fast_mode_of(acc->rnd) < 0 || acc->acc.precision > 53) return 0;
  /* FMA64 is fp64 in rne; every other kind runs on formats of p <= 51
     (gemm_acc_fast.c's ro_fits) with binary32 inputs */
  return kind_for(a, b, m, n, k, acc) != LOWP_ACCFAST_NONE;
}

int lowp_gemm_order_fast(double *c, const double *a, const double *b, size_t m, size_t n,
                         size_t k, const lowp_accum_t *acc, const char *isa) {
  size_t nj, ni, e;
  long long t;
  int best = best_isa(), use = best, fail = 0, f64;
  if (isa) {
    if ((use = lowp_isa_parse(isa)) < 0) return LOWP_EINVAL;
    if (use > best) return LOWP_EUNSUPPORTED;
  }
  if ((m && n && !c) || !lowp_gemm_order_fast_ok(a, b, m, n, k, acc)) return LOWP_EINVAL;
  if (m == 0 || n == 0) return LOWP_OK;
  if (k == 0) {
    for (e = 0; e < m * n; e++) c[e] = 0.0;
    return LOWP_OK;
  }
  f64 = kind_for(a, b, m, n, k, acc) == LOWP_ACCFAST_FMA64;
  nj = (n + OW - 1) / OW, ni = (m + IRO - 1) / IRO;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : fail)
  for (t = 0; t < (long long)(nj * ni); t++) {
    size_t j0 = ((size_t)t % nj) * OW, i0 = ((size_t)t / nj) * IRO, i, l, j;
    size_t jw = n - j0 < OW ? n - j0 : OW, i1 = m - i0 < IRO ? m : i0 + IRO;
    double *panel = aligned_alloc(64, k * OW * sizeof(double)), out[OW];
    octx_t oc;
    if (!panel) { fail = 1; continue; }
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
      row_isa(use, out, &oc, k);
      for (j = 0; j < jw; j++) c[i * n + j0 + j] = canon(out[j]);
    }
    free(panel);
  }
  return fail ? LOWP_ENOMEM : LOWP_OK;
}
