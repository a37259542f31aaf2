/* lowp_gemm_bs -- GEMM on the block-scaled MMA model: scalar reference and integer-SIMD fast path */

/*
 * The fast path computes lowp_bsmma's integers (lib/model/bsmma.c) for 64
 * output columns at once, so that the compiler vectorises the lanes:
 *
 *  pack   every element v = m 2^(x - p + 1) (m a signed integer, |m| < 2^p,
 *         x = max(floor(log2|v|), emin)); every scale s = ms 2^(xs - ps + 1);
 *         in group mode elements are fixed-point integers n 2^(emin - p + 1)
 *         (taken only when |n| < 2^15, as for fp4 and fp6). B is packed in
 *         panels of 64 columns.
 *  terms  product mode: x = xa + xb + xsA + xsB and |M| = |ma mb| msA msB at
 *         2^(x - c0), c0 = (pa - 1) + (pb - 1) + 2 (ps - 1); group mode: the
 *         exact group sum G (int64), x = bitlen|G| - 1 + qa + qb + xsA + xsB,
 *         |M| = |G| msA msB. Zero terms: x = -2^20 (zero = ignore) or the
 *         emins' exponent (zero = emin).
 *  cut    X = max(x, x_c); a term at 2^E is truncated at 2^(X - F) by a
 *         left shift of max(s, 0) and a right shift of min(max(-s, 0), 63),
 *         s = E - X + F (the magnitude: truncation, as lowp__tc_cut); the
 *         signed int64 sum is below 2^(F + 14).
 *  round  toward zero to fp32: the sum truncated to 24 bits (fewer in
 *         fp32's subnormal range), infinity beyond 2^128 (the model's ovf).
 *
 * Outputs whose row or column holds NaN or inf (elements or scales), whose
 * C entry is not finite, or that meet an instruction with no nonzero term
 * and c = 0 (the sign-of-zero rule) are recomputed by the reference, as are
 * whole GEMMs the fast path does not cover (out rounding other than rtz,
 * group-mode elements beyond 2^15). Compiled for AVX-512, AVX2 and the
 * baseline (three copies of the panel kernel, chosen at run time or by
 * lowp_gemm_bs_fast_isa); integer and IEEE operations only, so every copy
 * gives the same bits. tests/tgemm_bs.c holds it to the reference.
 */

#include "cpu/gemm_bs.h"
#include "bits.h"
#include "cpu.h"
#include "status.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/escape.h"

/* the panel kernel is compiled three times (generic, AVX2, AVX-512F) and
   chosen at run time (lowp_gemm_bs_fast_isa); under ASan one copy */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__SANITIZE_ADDRESS__)
#define LOWP_BS_X86 1
#endif

enum { W = 64, ZX = -(1 << 20) };

/* ------------------------------------------------------ private helpers */

/* v = m 2^(x - p + 1), x = max(floor(log2|v|), emin); zero: m = 0, x = emin */
static void unpack(int32_t *m, int32_t *x, double v, int p, int emin) {
  int e;
  if (v == 0.0) { *m = 0, *x = emin; return; }
  (void)frexp(v, &e);
  e = e - 1 < emin ? emin : e - 1;
  *x = e;
  *m = (int32_t)ldexp(v, p - 1 - e); /* exact: v has <= p bits at 2^(e - p + 1) */
}

static int finite_row(const double *v, size_t n, size_t stride) {
  size_t i;
  for (i = 0; i < n; i++)
    if (!isfinite(v[i * stride])) return 0;
  return 1;
}

typedef struct {
  const lowp_gemm_bs_cfg_t *cfg;
  int pa, pb, ps, ea, eb, es, F, c0, group, K, emin_rule, fold; /* fold: scales folded into elements */
  int qa, qb; /* fixed-point exponents of group mode */
  size_t blk, nb, k;
} kp_t;

/* m 2^s truncated toward zero (|m| < 2^62 and |m| 2^s < 2^63): the cut of
   a signed term, as lowp__tc_cut on its magnitude */
static inline __attribute__((always_inline)) int64_t cut(int64_t m, int64_t s) {
  int64_t sg = m >> 63, l = s > 0 ? (s > 63 ? 63 : s) : 0, r = s < 0 ? (-s > 63 ? 63 : -s) : 0;
  uint64_t a = (uint64_t)((m ^ sg) - sg), t = (a << l) >> r;
  return (int64_t)((t ^ (uint64_t)sg) - (uint64_t)sg);
}

/* round sign * U 2^L toward zero to fp32 (U > 0); inf beyond 2^128 */
static double to_f32_rtz(int neg, uint64_t U, int L) {
  int nbits = lowp_bitlen64(U), e = L + nbits - 1, P = e >= -126 ? 24 : 24 - (-126 - e), drop;
  double v;
  if (e > 127) return neg ? -INFINITY : INFINITY;
  if (P <= 0) return neg ? -0.0 : 0.0;
  drop = nbits - P;
  if (drop > 0) U = (U >> drop) << drop;
  v = ldexp((double)U, L);
  return neg ? -v : v;
}

/* One panel-row: the chain of instructions for W columns. acc: C on entry,
   the result on exit; slow[j] set where the reference must decide. */
static LOWP_ALWAYS_INLINE void panel_body(double *acc, int *slow, const kp_t *q, const int32_t *ma, const int32_t *xa,
                                          const int32_t *sam, const int32_t *sax, const int32_t *mb, const int32_t *xb,
                                          const int32_t *sbm, const int32_t *sbx) {
  size_t k0, p;
  int j;
  for (k0 = 0; k0 < q->k; k0 += (size_t)q->K) {
    size_t len = q->k - k0 < (size_t)q->K ? q->k - k0 : (size_t)q->K;
    int64_t X[W], S[W], mc[W], xc[W], live[W];
    for (j = 0; j < W; j++) { /* c: fp32 m 2^(x - 23) */
      double c = acc[j];
      int32_t m, x;
      if (!isfinite(c) || c == 0.0) { mc[j] = 0, xc[j] = ZX, X[j] = ZX, live[j] = 0; continue; }
      unpack(&m, &x, c, 24, -126);
      mc[j] = m, xc[j] = x, X[j] = x, live[j] = 1;
    }
    if (q->fold) { /* scales folded into the elements (fold()) */
      for (p = k0; p < k0 + len; p++) {
        int64_t x0 = xa[p];
        const int32_t *xbr = xb + p * W;
        for (j = 0; j < W; j++) {
          int64_t x = x0 + xbr[j];
          X[j] = x > X[j] ? x : X[j];
        }
      }
      for (j = 0; j < W; j++) {
        S[j] = cut(mc[j], xc[j] - 23 - X[j] + q->F); /* c at 2^(xc - 23) */
        live[j] = X[j] > ZX / 2; /* a nonzero term or c */
      }
      for (p = k0; p < k0 + len; p++) { /* (|M| << (F - c0)) >> (X - x): F >= c0 (fold) */
        int64_t m0 = ma[p], x0 = xa[p];
        const int32_t *mbr = mb + p * W, *xbr = xb + p * W;
        for (j = 0; j < W; j++) {
          int64_t pr = m0 * mbr[j], sg = pr >> 63, r = X[j] - x0 - xbr[j];
          uint64_t a = (uint64_t)((pr ^ sg) - sg), t = (a << (q->F - q->c0)) >> (r < 0 ? 0 : r > 63 ? 63 : r);
          S[j] += (int64_t)((t ^ (uint64_t)sg) - (uint64_t)sg);
        }
      }
    } else if (!q->group) {
      for (p = k0; p < k0 + len; p++) { /* X */
        size_t b = p / q->blk;
        int64_t xap = xa[p] + sax[b], za = ma[p] == 0 || sam[b] == 0;
        const int32_t *mbr = mb + p * W, *xbr = xb + p * W, *sbmr = sbm + b * W, *sbxr = sbx + b * W;
        int64_t zx = q->emin_rule ? q->ea + q->eb + sax[b] : ZX;
        for (j = 0; j < W; j++) {
          int64_t z = za | (mbr[j] == 0) | (sbmr[j] == 0);
          int64_t x = z ? zx + (q->emin_rule ? sbxr[j] : 0) : xap + xbr[j] + sbxr[j];
          X[j] = x > X[j] ? x : X[j];
          live[j] |= !z;
        }
      }
      for (j = 0; j < W; j++) {
        S[j] = cut(mc[j], xc[j] - 23 - X[j] + q->F); /* c at 2^(xc - 23) */
      }
      for (p = k0; p < k0 + len; p++) { /* the cut products */
        size_t b = p / q->blk;
        int64_t m0 = (int64_t)ma[p] * sam[b], x0 = xa[p] + sax[b] - q->c0 + q->F;
        const int32_t *mbr = mb + p * W, *xbr = xb + p * W, *sbmr = sbm + b * W, *sbxr = sbx + b * W;
        for (j = 0; j < W; j++) {
          S[j] += cut(m0 * (int64_t)mbr[j] * sbmr[j], x0 + xbr[j] + sbxr[j] - X[j]);
        }
      }
    } else {
      int64_t GM[16][W], GX[16][W];
      size_t g, ng = (len + (size_t)q->group - 1) / (size_t)q->group;
      for (g = 0; g < ng; g++) {
        size_t g0 = k0 + g * (size_t)q->group, b = g0 / q->blk, ge = g0 + (size_t)q->group;
        const int32_t *sbmr = sbm + b * W, *sbxr = sbx + b * W;
        int64_t G[W];
        if (ge > k0 + len) ge = k0 + len;
        for (j = 0; j < W; j++) G[j] = 0;
        for (p = g0; p < ge; p++) {
          int32_t n0 = ma[p];
          const int32_t *nbr = mb + p * W;
          for (j = 0; j < W; j++) G[j] += (int64_t)(n0 * nbr[j]); /* |n| < 2^15: no overflow */
        }
        for (j = 0; j < W; j++) {
          int64_t sg = G[j] >> 63, U = (G[j] ^ sg) - sg;
          int64_t z = U == 0 || sam[b] == 0 || sbmr[j] == 0;
          int64_t x = z ? (q->emin_rule ? q->ea + q->eb + sax[b] + sbxr[j] : ZX)
                        : lowp_bitlen64((uint64_t)U) - 1 + q->qa + q->qb + sax[b] + sbxr[j];
          GM[g][j] = z ? 0 : ((U * sam[b] * sbmr[j]) ^ sg) - sg;
          GX[g][j] = q->qa + q->qb + sax[b] + sbxr[j] - 2 * (q->ps - 1); /* E of the term */
          X[j] = x > X[j] ? x : X[j];
          live[j] |= !z;
        }
      }
      for (j = 0; j < W; j++) {
        S[j] = cut(mc[j], xc[j] - 23 - X[j] + q->F); /* c at 2^(xc - 23) */
      }
      for (g = 0; g < ng; g++)
        for (j = 0; j < W; j++) {
          S[j] += cut(GM[g][j], GX[g][j] - X[j] + q->F);
        }
    }
    for (j = 0; j < W; j++) {
      if (isinf(acc[j])) continue; /* an overflowed chain stays infinite */
      if (!live[j]) { slow[j] = 1; continue; } /* the sign-of-zero rule: the reference */
      if (S[j] == 0) acc[j] = 0.0;
      else acc[j] = to_f32_rtz(S[j] < 0, S[j] < 0 ? (uint64_t)(-(S[j] + 1)) + 1 : (uint64_t)S[j], (int)X[j] - q->F);
    }
  }
}

#define PANEL_ARGS                                                                                          \
  double *acc, int *slow, const kp_t *q, const int32_t *ma, const int32_t *xa, const int32_t *sam,          \
      const int32_t *sax, const int32_t *mb, const int32_t *xb, const int32_t *sbm, const int32_t *sbx
#define PANEL_CALL acc, slow, q, ma, xa, sam, sax, mb, xb, sbm, sbx
static void panel_generic(PANEL_ARGS) { panel_body(PANEL_CALL); }
#ifdef LOWP_BS_X86
__attribute__((target("avx2"))) static void panel_avx2(PANEL_ARGS) { panel_body(PANEL_CALL); }
__attribute__((target("avx512f"))) static void panel_avx512(PANEL_ARGS) { panel_body(PANEL_CALL); }
#endif

/* the copy for instruction set isa (lowp_isa_t) */
static void panel_row(int isa, PANEL_ARGS) {
  switch (isa) {
#ifdef LOWP_BS_X86
  case LOWP_ISA_AVX512: panel_avx512(PANEL_CALL); break;
  case LOWP_ISA_AVX2: panel_avx2(PANEL_CALL); break;
#endif
  default: panel_generic(PANEL_CALL); break;
  }
}

/* ----------------------------------------------------------- public API */

int lowp_gemm_bs_config(lowp_gemm_bs_cfg_t *cfg, const char *model, const char *fa, const char *fb, char *err,
                        size_t errlen) {
  int st;
  if (!cfg || !model || !fa || !fb) return LOWP_EINVAL;
  memset(cfg, 0, sizeof *cfg);
  if ((st = lowp_bsmma_get(&cfg->model, model, err, errlen))) return st;
  if ((st = lowp_bsformat_parse(&cfg->fa, fa, err, errlen)) || (st = lowp_bsformat_parse(&cfg->fb, fb, err, errlen)))
    return LOWP_EINVAL;
  if (cfg->fa.block != cfg->fb.block || cfg->fa.scale.precision != cfg->fb.scale.precision ||
      cfg->fa.scale.emin != cfg->fb.scale.emin || cfg->fa.elem_int || cfg->fb.elem_int ||
      (cfg->model.p.group && cfg->fa.block % cfg->model.p.group)) {
    lowp_errf(err, errlen, 0, "%s x %s on %s: the operands need one scale format and block size, floating-point "
              "elements, and blocks that hold whole groups of %d", fa, fb, model, cfg->model.p.group);
    return LOWP_EINVAL;
  }
  return LOWP_OK;
}

int lowp_gemm_bs_kind_check(const char *model, const lowp_bsformat_t *q, char *err, size_t errlen) {
  int e8m0 = q->scale.name && !strcmp(q->scale.name, "e8m0");
  int ue4m3 = q->scale_unsigned && q->scale.name && !strcmp(q->scale.name, "e4m3");
  int e2m1 = q->elem.name && !strcmp(q->elem.name, "e2m1");
  if (strstr(model, "kind=mxf8f6f4") && !(e8m0 && q->block == 32)) {
    lowp_errf(err, errlen, 0, "kind=mxf8f6f4 takes ue8m0 scales a block of 32 (MX formats), not %s scales a block "
              "of %d", q->scale_unsigned ? "ue4m3" : q->scale.name, q->block);
    return LOWP_EINVAL;
  }
  if (strstr(model, "kind=mxf4nvf4") && !(e2m1 && ((e8m0 && q->block == 32) || (ue4m3 && q->block == 16)))) {
    lowp_errf(err, errlen, 0, "kind=mxf4nvf4 takes e2m1 elements with ue8m0 scales a block of 32 (mxfp4) or ue4m3 "
              "scales a block of 16 (nvfp4)");
    return LOWP_EINVAL;
  }
  return LOWP_OK;
}

int lowp_gemm_bs_ref(double *C, const double *A, const double *SA, const double *B, const double *SB,
                     size_t m, size_t n, size_t k, const lowp_gemm_bs_cfg_t *cfg) {
  size_t nb = (k + (size_t)cfg->fa.block - 1) / (size_t)cfg->fa.block, i, j, p;
  double *col = malloc((k ? k : 1) * sizeof *col);
  int st = LOWP_OK;
  if (!col) return LOWP_ENOMEM;
  for (j = 0; j < n && !st; j++) {
    for (p = 0; p < k; p++) col[p] = B[p * n + j];
    for (i = 0; i < m && !st; i++)
      st = lowp_bsmma_dot(&C[i * n + j], A + i * k, col, SA + i * nb, SB + j * nb, k, (size_t)cfg->fa.block,
                          C[i * n + j], &cfg->model.p, &cfg->fa.elem, &cfg->fb.elem, &cfg->fa.scale);
  }
  free(col);
  return st;
}

/* product mode with zero = ignore: element and scale folded into one code,
   m' = m ms, x' = x + xs (zeros: m' = 0, x' = ZX); E = x' - c0 still holds */
static void fold(int32_t *mm, int32_t *xx, const int32_t *sm, const int32_t *sx, size_t k, size_t blk) {
  size_t p;
  for (p = 0; p < k; p++) {
    int32_t ms = sm[p / blk];
    if (mm[p] == 0 || ms == 0) mm[p] = 0, xx[p] = ZX;
    else mm[p] *= ms, xx[p] += sx[p / blk];
  }
}

/* element and scale codes of the fast path; 0 if a value does not fit */
static int pack_val(int32_t *mm, int32_t *xx, double v, const lowp_format_t *f, int fixed) {
  if (!fixed) {
    unpack(mm, xx, v, f->precision, f->emin);
    return 1;
  } else {
    double nq = ldexp(v, -(f->emin - f->precision + 1));
    if (fabs(nq) >= 32768.0 || nq != floor(nq)) return 0;
    *mm = (int32_t)nq, *xx = 0;
    return 1;
  }
}

int lowp_gemm_bs_fast(double *C, const double *A, const double *SA, const double *B, const double *SB,
                      size_t m, size_t n, size_t k, const lowp_gemm_bs_cfg_t *cfg) {
  return lowp_gemm_bs_fast_isa(C, A, SA, B, SB, m, n, k, cfg, NULL);
}

int lowp_gemm_bs_fast_isa(double *C, const double *A, const double *SA, const double *B, const double *SB,
                          size_t m, size_t n, size_t k, const lowp_gemm_bs_cfg_t *cfg, const char *isa) {
  int use = (int)lowp_cpu_isa(0);
  kp_t q;
  size_t npan = (n + W - 1) / W, i, j, p, pan;
  int32_t *ma, *xa, *sam, *sax, *mb, *xb, *sbm, *sbx;
  int *colok, fixed = cfg->model.p.group > 0, st = LOWP_OK;
  const lowp_format_t *fs = &cfg->fa.scale;
  if (isa) {
    int want = lowp_isa_parse(isa);
    if (want < 0) return LOWP_EINVAL;
    if (want > use) return LOWP_EUNSUPPORTED;
    use = want;
  }
  if (cfg->model.p.out_rnd != LOWP_RND_TZ || lowp_bsmma_validate(&cfg->model.p, NULL, 0))
    return lowp_gemm_bs_ref(C, A, SA, B, SB, m, n, k, cfg);
  memset(&q, 0, sizeof q);
  q.cfg = cfg, q.pa = cfg->fa.elem.precision, q.pb = cfg->fb.elem.precision, q.ps = fs->precision;
  q.ea = cfg->fa.elem.emin, q.eb = cfg->fb.elem.emin, q.es = fs->emin, q.F = cfg->model.p.F;
  q.c0 = (q.pa - 1) + (q.pb - 1) + 2 * (q.ps - 1), q.group = cfg->model.p.group, q.K = cfg->model.p.K;
  q.emin_rule = cfg->model.p.zero == LOWP_BSZ_EMIN;
  q.fold = !q.group && !q.emin_rule && q.F >= q.c0;
  q.qa = q.ea - q.pa + 1, q.qb = q.eb - q.pb + 1;
  q.blk = (size_t)cfg->fa.block, q.nb = (k + q.blk - 1) / q.blk, q.k = k;
  if (q.group && q.K / q.group > 16) return lowp_gemm_bs_ref(C, A, SA, B, SB, m, n, k, cfg); /* GM[16] */
  ma = malloc((k + 1) * sizeof *ma), xa = malloc((k + 1) * sizeof *xa);
  sam = malloc((q.nb + 1) * sizeof *sam), sax = malloc((q.nb + 1) * sizeof *sax);
  mb = calloc(npan * (k + 1) * W, sizeof *mb), xb = calloc(npan * (k + 1) * W, sizeof *xb);
  sbm = calloc(npan * (q.nb + 1) * W, sizeof *sbm), sbx = calloc(npan * (q.nb + 1) * W, sizeof *sbx);
  colok = calloc(npan * W, sizeof *colok);
  if (!ma || !xa || !sam || !sax || !mb || !xb || !sbm || !sbx || !colok) { st = LOWP_ENOMEM; goto done; }
  for (j = 0; j < n; j++) { /* B in panels; a column with NaN/inf (or out of fixed range) is slow */
    int32_t *pm = mb + (j / W) * k * W, *px = xb + (j / W) * k * W;
    int ok = finite_row(B + j, k, n) && finite_row(SB + j * q.nb, q.nb, 1);
    for (p = 0; p < k && ok; p++) ok = pack_val(&pm[p * W + j % W], &px[p * W + j % W], B[p * n + j], &cfg->fb.elem, fixed);
    for (p = 0; p < q.nb && ok; p++)
      unpack(&sbm[(j / W) * q.nb * W + p * W + j % W], &sbx[(j / W) * q.nb * W + p * W + j % W], SB[j * q.nb + p],
             q.ps, q.es);
    if (!ok) /* zeros keep the lanes harmless; the reference recomputes the column */
      for (p = 0; p < k; p++) pm[p * W + j % W] = 0;
    colok[j] = ok;
    if (ok && q.fold) { /* B's scales into its elements, down the column */
      int32_t *sm = sbm + (j / W) * q.nb * W + j % W, *sx = sbx + (j / W) * q.nb * W + j % W;
      for (p = 0; p < k; p++) {
        int32_t ms = sm[(p / q.blk) * W], *m0 = &pm[p * W + j % W], *x0 = &px[p * W + j % W];
        if (*m0 == 0 || ms == 0) *m0 = 0, *x0 = ZX;
        else *m0 *= ms, *x0 += sx[(p / q.blk) * W];
      }
    }
  }
  for (i = 0; i < m && !st; i++) {
    int rowok = finite_row(A + i * k, k, 1) && finite_row(SA + i * q.nb, q.nb, 1);
    for (p = 0; p < k && rowok; p++) rowok = pack_val(&ma[p], &xa[p], A[i * k + p], &cfg->fa.elem, fixed);
    for (p = 0; p < q.nb && rowok; p++) unpack(&sam[p], &sax[p], SA[i * q.nb + p], q.ps, q.es);
    if (rowok && q.fold) fold(ma, xa, sam, sax, k, q.blk);
    for (pan = 0; pan < npan && !st; pan++) {
      double acc[W], c0[W];
      int slow[W];
      size_t w = n - pan * W < W ? n - pan * W : W, jj;
      for (jj = 0; jj < W; jj++) {
        c0[jj] = jj < w ? C[i * n + pan * W + jj] : 0.0;
        acc[jj] = c0[jj];
        slow[jj] = jj >= w || !rowok || !colok[pan * W + jj] || !isfinite(c0[jj]);
      }
      if (rowok)
        panel_row(use, acc, slow, &q, ma, xa, sam, sax, mb + pan * k * W, xb + pan * k * W, sbm + pan * q.nb * W,
                  sbx + pan * q.nb * W);
      for (jj = 0; jj < w && !st; jj++) {
        size_t jg = pan * W + jj;
        if (!slow[jj]) { C[i * n + jg] = acc[jj]; continue; }
        { /* one output by the reference */
          double *col = malloc((k ? k : 1) * sizeof *col);
          if (!col) { st = LOWP_ENOMEM; break; }
          for (p = 0; p < k; p++) col[p] = B[p * n + jg];
          st = lowp_bsmma_dot(&C[i * n + jg], A + i * k, col, SA + i * q.nb, SB + jg * q.nb, k, q.blk, c0[jj],
                              &cfg->model.p, &cfg->fa.elem, &cfg->fb.elem, fs);
          free(col);
        }
      }
    }
  }
done:
  free(ma), free(xa), free(sam), free(sax), free(mb), free(xb), free(sbm), free(sbx), free(colok);
  return st;
}
