/* lowp_reduce_fast32 -- the summation orders on binary32 lanes (narrow accumulators, fp32 in directed modes), same bits */

/*
 * lowp_gemm_order_fast (reduce_fast.c) runs lowp_accum_dot's orders on
 * vectors of outputs; this file serves, on 16-lane binary32 vectors, the
 * cases whose recursive order gemm_acc_fast.c runs on binary32 lanes:
 *
 * RO32 (lowp_gemm_acc_fast_kind: acc and data narrow; every product is
 * exact in binary32, acc of p <= 22 with a quantum >= 2^-147). Each
 * addition of two exact binary32 values x + y (terms, rounded products,
 * partial sums: all values of acc or exact products) is rounded to odd at
 * 24 bits, then once to acc in the mode (Boldo and Melquiond, "Emulation
 * of FMA and correctly rounded sums: proved algorithms using rounding to
 * odd", IEEE Trans. Computers 57(4), 2008, Theorem 1; directed modes keep
 * the floor and ceiling): gemm_acc_fast.c's RO32 step, proven there. On
 * AVX-512 (gcc builds) the odd value is the odd one of the sum rounded
 * down and up in the instruction (rofma_pick; a term a b added to a
 * partial sum by the fused multiply-add, a b being exact), then fp16 by
 * vcvtps2ph in the mode, bf16 on the bits; elsewhere TwoSum in binary32
 * rounded to odd (fadd_odd), then fround_to or fround_bf16. The bound
 * k <= 2^24 keeps every sum inside binary32 (RO32 data: |a b| <= 2^100,
 * so a partial sum stays below 2^125 and two of them below 2^126; a
 * narrower accumulator's largest values are far below that), where TwoSum
 * is exact and fround_to's binade reasoning holds.
 *
 * FMA32 in rtz/rup/rdn on AVX-512 (fp32 acc, binary32 inputs; products
 * exact in binary64 only): a partial sum plus a term is one
 * _mm512_fmadd_round_ps in the mode (IEEE 754 fusedMultiplyAdd: the exact
 * s + a b rounded once), two fp32 values one _mm512_add_round_ps, a
 * rounded product (fma = 0) one _mm512_mul_round_ps; two exact terms are
 * added by one binary64 fused multiply-add in the mode and converted to
 * binary32 in the mode. Rounding twice in one directed mode is rounding
 * once, since the binary32 values (subnormals included) are binary64
 * values: floor32(floor64(x)) = floor32(x), the same for the ceiling, and
 * truncation is one of the two by the sign, which the first rounding
 * keeps; beyond FLT_MAX both give the mode's overflow (+-max or +-inf).
 * A lone term is round(a b + 0): a b + 0 in binary64 in the mode (-0 + +0
 * = -0 only in rdn; a nonzero product that rounds to zero keeps its sign),
 * then the conversion; with fma = 0 it is round(a b) + 0 in binary32.
 *
 * Zeros and NaN: every operation is IEEE 754's in its mode, the sign of an
 * exact zero sum as 6.3 and lowp_accum_add give it (rofma_pick takes the
 * mode's own zero); a NaN is the positive quiet NaN at the output.
 *
 * Orders (lowp_accum_dot): pairwise keeps subtrees of up to LOWP_N32_LEAF
 * terms in registers (4, and 8 for bf16 on AVX2: 8 everywhere took the AVX2
 * and AVX-512 files about three times as long to compile for a few percent,
 * reduce_fast32_avx2.h; the tree's shape depends only on k), the additions above them on OW32 lanes
 * in memory; recursive, blocked and splitk step LOWP_N32_NVB vectors of a
 * row together (independent chains: all NV on AVX-512, 2 elsewhere).
 * The pairwise tree runs RB_RO rows of A at once (RB for FMA32), so that
 * each leaf's rows of the panel come from L1 after the first row: FMA32's
 * binary64 panel (k x OW32 x 8 bytes, 1 MiB at k = 1024) streams from L2
 * once per group of rows, and 16 rows rather than 4 took the fp32 rtz
 * pairwise order from 0.082 to 0.075 ns per multiply-add (docs/orders-fast.md). Tasks of (column block, row
 * group), buffers once per thread. Compiled per
 * instruction set and chosen at run time: the vector-extension steps (v_)
 * in a baseline copy (this file, with the dispatch), the AVX2 intrinsics
 * (a_, cpu/reduce_fast32_avx2.h) in reduce_fast32_avx2.c (fp16, others)
 * and reduce_fast32_avx2b.c (bf16, fp32), the AVX-512 intrinsics (m_) in
 * reduce_fast32_avx512.c: translation units a parallel build compiles
 * side by side (the single file took 52 s of CPU);
 * clang builds (no LOWP_ACC_RO16) run RO32 on the AVX2 copy there, and
 * RO32 accumulators other than fp16 and bf16 (fround_to) always do.
 */

#include "cpu/reduce_fast32_int.h"

#include <stdlib.h>
#include <string.h>

/* ----------------------------------------- vector-extension steps (v_) */

AI vf v_b(const nctx_t *c, size_t l, size_t jv) {
  vf b;
  memcpy(&b, c->panel + l * OW32 + jv * VWF, sizeof b);
  return b;
}

AI vf v_ld(const float *p) {
  vf x;
  memcpy(&x, p, sizeof x);
  return x;
}

AI void v_st(float *p, vf x) { memcpy(p, &x, sizeof x); }

/* x (exact or rounded to odd at 24 bits) rounded once to acc */
AI vf v_ra(vf x, const nctx_t *c, int fmt, int mode) {
  tgt_t t = c->acc;
  t.mode = mode;
  return fmt == F_BF16 ? fround_bf16(x, mode) : fround_to(x, &t);
}

/* term l of the 16 columns of vector jv: a b (exact), or rounded (rp) */
AI vf v_term(const nctx_t *c, size_t l, size_t jv, KP) {
  vf p = fsplat(c->arow[l]) * v_b(c, l, jv);
  return rp ? v_ra(p, c, fmt, mode) : p;
}

/* round(x + y) */
AI vf v_add(vf x, vf y, const nctx_t *c, KP) {
  (void)rp;
  return v_ra(fadd_odd(x, y, mode), c, fmt, mode);
}

/* round(x + t_l) */
AI vf v_addt(vf x, const nctx_t *c, size_t l, size_t jv, KP) {
  return v_add(x, v_term(c, l, jv, KN), c, KN);
}

/* round(t_l + t_{l+1}) */
AI vf v_two(const nctx_t *c, size_t l, size_t jv, KP) {
  return v_add(v_term(c, l, jv, KN), v_term(c, l + 1, jv, KN), c, KN);
}

/* round(t_l + 0) */
AI vf v_lone(const nctx_t *c, size_t l, size_t jv, KP) {
  return v_add(v_term(c, l, jv, KN), (vf){0}, c, KN);
}

#define SFX _generic
#define ATTR
/* (16 lanes on 8 or 16 registers: few values live at once) */
#define LOWP_N32_LEAF 4
#define LOWP_N32_NVB 2
#define V vf
#define OPFX v_
#define v_sum v_add /* (no test to skip here: reduce_fast32_body.h) */
/* the vector-extension copies take the mode at run time (fround_to and
   fadd_odd read it per call): one instance per (fmt, rp); a constant mode
   per instance too made this file a minute and a half of compiling for the
   seldom-run baseline and AVX2 copies */
#define LOWP_N32_KEY(c) ((c)->fmt * 2 + (c)->rp)
#define LOWP_N32_CASES(CALL)                                                       \
  CALL(F_OTHER, c->acc.mode, 0, F_OTHER * 2) CALL(F_OTHER, c->acc.mode, 1, F_OTHER * 2 + 1) \
  CALL(F_BF16, c->acc.mode, 0, F_BF16 * 2) CALL(F_BF16, c->acc.mode, 1, F_BF16 * 2 + 1)
#include "cpu/reduce_fast32_body.h"
#undef SFX
#undef ATTR

#undef V
#undef OPFX
#undef LOWP_N32_CASES
#undef LOWP_N32_KEY

/* ------------------------------------------------------------- dispatch */

/* whether the AVX2 copy (intrinsics with F16C) runs on isa here */
static int avx2_runs(int isa) {
#ifdef LOWP_N32_X86
  return isa >= LOWP_ISA_AVX2 && lowp_cpu_has_f16c();
#else
  (void)isa;
  return 0;
#endif
}

/* the copy that runs: 2 the AVX-512 intrinsics, 1 the AVX2 copy, 0 the
   baseline; c->fmt set for it */
static int copy_for(nctx_t *c, int isa) {
  int dir = c->fmt == F_DIR;
#ifdef LOWP_N32_X86
#ifdef LOWP_ACC_RO16
  if (isa == LOWP_ISA_AVX512 && (dir || c->fmt == F_FP16 || c->fmt == F_BF16)) return 2;
#else
  if (isa == LOWP_ISA_AVX512 && dir) return 2;
#endif
  if (avx2_runs(isa)) return 1;
#endif
  (void)dir;
  if (c->fmt == F_FP16) c->fmt = F_OTHER; /* fround_to on the vector-extension steps */
  return 0;
}

#ifdef LOWP_N32_X86
/* the AVX2 copy of FMA32 in a directed mode: MXCSR's rounding control
   (bits 13-14: 01 down, 10 up, 11 toward zero) set to the mode for the
   call, then restored. lowp_n32_row_avx2b is in another translation unit
   (reduce_fast32_avx2b.c), never inlined here: every floating-point
   operation of the copy runs between the two writes of MXCSR, on this
   thread (each OpenMP thread has its own). */
static void row_dir_avx2(float *out, const nctx_t *c, size_t k) {
  const unsigned csr = _mm_getcsr();
  const unsigned rc = c->acc.mode == M_DN ? 0x2000u : c->acc.mode == M_UP ? 0x4000u : 0x6000u;
  _mm_setcsr((csr & ~0x6000u) | rc);
  lowp_n32_row_avx2b(out, c, k);
  _mm_setcsr(csr);
}
#endif

static void row_copy(int copy, float *out, const nctx_t *c, size_t k) {
  switch (copy) {
#ifdef LOWP_N32_X86
  case 2: lowp_n32_row_avx512(out, c, k); break;
  case 1:
    (c->fmt == F_DIR    ? row_dir_avx2
     : c->fmt == F_BF16 ? lowp_n32_row_avx2b
                        : lowp_n32_row_avx2)(out, c, k);
    break;
#endif
  default: lowp_n32_row_generic(out, c, k); break;
  }
}

int lowp_order_fast32_ok(lowp_accfast_kind_t kind, const lowp_accum_t *acc, int isa, size_t k) {
  if (!acc || acc->order == LOWP_ACC_KAHAN) return 0;
  if (kind == LOWP_ACCFAST_RO32) return k <= ((size_t)1 << 24);
#ifdef LOWP_N32_X86
  return kind == LOWP_ACCFAST_FMA32 && acc->rnd != LOWP_RND_NE &&
         (isa == LOWP_ISA_AVX512 || avx2_runs(isa));
#else
  (void)isa;
  return 0;
#endif
}

/* The buffers of one thread: the panels and a row of A. */
typedef struct {
  float *panel, *arow;
  double *pd, *ad;
} bufs_t;

static int bufs_alloc(bufs_t *w, size_t k, int wide) {
  w->panel = aligned_alloc(64, k * OW32 * sizeof(float));
  w->arow = malloc(RB * k * sizeof(float));
  w->pd = wide ? aligned_alloc(64, k * OW32 * sizeof(double)) : NULL;
  w->ad = wide ? malloc(RB * k * sizeof(double)) : NULL;
  return w->panel && w->arow && ((w->pd && w->ad) || !wide);
}

static void bufs_free(bufs_t *w) { free(w->panel), free(w->arow), free(w->pd), free(w->ad); }

/* one task: rows [i0, i1), columns j0 .. j0 + jw; RB (FMA32) or RB_RO rows
   of A at a time (the pairwise leaves reuse the panel's rows from L1) */
static void task(double *c, const double *a, const double *b, size_t n, size_t k,
                 const nctx_t *proto, const bufs_t *w, int copy, size_t i0, size_t i1,
                 size_t j0, size_t jw) {
  float out[RB * OW32] __attribute__((aligned(64)));
  size_t i, l, j, r, rb = proto->fmt == F_DIR ? RB : RB_RO;
  nctx_t nc = *proto;
  for (l = 0; l < k; l++)
    for (j = 0; j < OW32; j++) w->panel[l * OW32 + j] = j < jw ? (float)b[l * n + j0 + j] : 0.0f;
  for (l = 0; w->pd && l < k * OW32; l++) w->pd[l] = w->panel[l];
  nc.panel = w->panel;
  nc.pd = w->pd;
  nc.ad = w->ad;
  nc.arow = w->arow;
  nc.k = k;
  for (i = i0; i < i1; i += nc.rows) {
    nc.rows = i1 - i < rb ? i1 - i : rb;
    for (l = 0; l < nc.rows * k; l++) w->arow[l] = (float)a[i * k + l];
    for (l = 0; w->ad && l < nc.rows * k; l++) w->ad[l] = w->arow[l];
    row_copy(copy, out, &nc, k);
    for (r = 0; r < nc.rows; r++)
      for (j = 0; j < jw; j++) c[(i + r) * n + j0 + j] = canon((double)out[r * OW32 + j]);
  }
}

/* the accumulator as the steps read it */
static void proto_of(nctx_t *p, const lowp_accum_t *acc, int mode) {
  const lowp_format_t *f = &acc->acc;
  memset(p, 0, sizeof *p);
  p->acc.p = f->precision;
  p->acc.emin = f->emin;
  p->acc.mode = mode;
  p->acc.xmax = lowp_format_xmax(f);
  /* RO32 formats are IEEE-like (lowp_gemm_acc_fast_kind): these three
     shapes are bf16, fp16 and fp32 (FMA32, the only one of p = 24) */
  p->fmt = f->precision == 24                                        ? F_DIR
           : f->precision == 8 && f->emin == -126 && f->emax == 127 ? F_BF16
           : f->precision == 11 && f->emin == -14 && f->emax == 15  ? F_FP16
                                                                    : F_OTHER;
  p->acc.bf16 = p->fmt == F_BF16;
  p->acc.fp16 = p->fmt == F_FP16;
  p->rp = !acc->fma;
  p->order = acc->order;
  p->block = acc->block;
}

int lowp_order_fast32(double *c, const double *a, const double *b, size_t m, size_t n,
                      size_t k, const lowp_accum_t *acc, int mode, int isa) {
  nctx_t proto;
  size_t nj = (n + OW32 - 1) / OW32, ni = (m + IRO32 - 1) / IRO32;
  int copy, fail = 0;
  proto_of(&proto, acc, mode);
  copy = copy_for(&proto, isa);
  /* buffers once per thread (fresh pages per task cost more than a row) */
#pragma omp parallel reduction(| : fail)
  {
    bufs_t w;
    long long t;
    int ok = bufs_alloc(&w, k, proto.fmt == F_DIR && !proto.rp);
#pragma omp for schedule(dynamic, 1)
    for (t = 0; t < (long long)(nj * ni); t++) {
      size_t j0 = ((size_t)t % nj) * OW32, i0 = ((size_t)t / nj) * IRO32;
      size_t jw = n - j0 < OW32 ? n - j0 : OW32, i1 = m - i0 < IRO32 ? m : i0 + IRO32;
      if (ok) task(c, a, b, n, k, &proto, &w, copy, i0, i1, j0, jw);
      else fail = 1;
    }
    bufs_free(&w);
  }
  return fail ? LOWP_ENOMEM : LOWP_OK;
}
