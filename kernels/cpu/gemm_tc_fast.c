/* lowp_gemm_tc_fast -- the tensor-core block-FMA model on integer SIMD (see gemm_tc_fast.h) */

/*
 * The model (lib/model/tc.h, bfma.c, tc_dot.c) with the same integers,
 * reorganised so that the compiler vectorises over output columns:
 *
 *  pack    every input v = m 2^(x - p + 1), m a signed integer (|m| < 2^p),
 *          x = max(floor(log2|v|), emin) as bfma.c's unpack (emin of fp16
 *          on the late-c fp8 datapath); zeros get x = -2^20. The k order is
 *          permuted once so that each block (interleaved halves included)
 *          is a run of consecutive indices. B is packed in panels of W
 *          columns, so that a panel stays in cache across rows.
 *  block   X = max(x_c, xa + xb) over the block; each product ma mb (exact,
 *          < 2^(2p)) is cut at 2^(X - F) by a left shift of F - 2p + 2 and a
 *          right shift of X - xa - xb (truncation of the magnitude, as
 *          bfma.c's cut); c likewise; the signed sum is an int64 below
 *          2^52. One normalisation: the sum rounded to the block's precision
 *          (out_frac + 1 or the output's) in the output's exponent range,
 *          rtz or rne, infinity beyond emax (ovf = inf).
 *  chain   the late-c addition and the fp32 promotion are the additions of
 *          tc_dot.c (lowp_accum_add; fp32 rne as one binary64 addition
 *          rounded to binary32, which is correctly rounded: 53 >= 2 24 + 2).
 *
 * Blocks whose products are all zero with c = 0 take bfma.c's sign rule from
 * the original values (zsum); a sum rounded to zero is +0 with zrnd=pos; c =
 * 0 raises X to the output's emin with c0align=emin. Outputs touching NaN or inf (inputs, C, or a result
 * that overflowed) are recomputed by lowp_tc_dot, the reference. Compiled
 * three times (baseline, AVX2, AVX-512) and chosen at run time, as
 * gemm_acc_fast.c.
 */

#include "cpu.h"
#include "bits.h"
#include "cpu/gemm_tc_fast.h"
#include "omp_inline.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/accum.h"
#include "status.h"

#define AI static inline __attribute__((always_inline))

enum { W = 64, W8 = 8, ZX = -(1 << 20), ZC = -(1 << 22) };
enum { SEG_CHAIN0 = 1, SEG_INSTR0 = 2, SEG_INSTR1 = 4, SEG_CHAIN1 = 8 };

/* ---------------------------------------------------------------- types */

typedef struct {
  size_t start, len;
  int flags;
} seg_t;

/* Everything the kernels read. */
typedef struct {
  int pin, xemin;             /* input precision, exponent clamp of the multiplier */
  int pout, oemin, oemax;     /* output format */
  int F, l0, r0, lc, rc;      /* cut shifts of products and of c */
  int P, rne;                 /* block rounding: precision, 1 = rne (else rtz) */
  int late_c, promote;
  int zsum_pos, zrnd_pos, c0_emin; /* the zero parameters (model/tc.h) */
  int q32, lq;                /* the AVX2 32-bit-lane copy: 1 or 2 accumulators, else 0;
                                 c's left shift there (gemm_tc_fast_avx2.h) */
  size_t pw;                  /* B's panel width: W, or W8 for that copy */
  lowp_rounding_t c_rnd;
  const lowp_format_t *out;
  const int32_t *ma, *xa, *mb, *xb; /* A (m x k), B panels (npan x k x W) */
  const size_t *perm;
  const seg_t *seg;
  size_t nseg, m, n, k, npan;
  const double *a, *b;
  double *c;
} job_t;

/* Per panel-row state. */
typedef struct {
  double acc[W], cur[W], tot[W];
  int64_t X[W], S[W];
} st_t;

/* ------------------------------------------------------ private helpers */

AI uint64_t bits_of(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

AI double of_bits(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

AI int64_t imax(int64_t x, int64_t y) { return x > y ? x : y; }
AI int64_t imin(int64_t x, int64_t y) { return x < y ? x : y; }

/* v (finite, a value of precision p) as m 2^(x - p + 1), x clamped at emin */
static void unpack(int32_t *m, int32_t *x, double v, int p, int emin) {
  int e;
  if (v == 0.0 || !isfinite(v)) { *m = 0, *x = ZX; return; }
  e = (int)((bits_of(v) >> 52) & 0x7ff) - 1023;
  if (e < emin) e = emin;
  *x = e;
  *m = (int32_t)ldexp(v, p - 1 - e); /* exact: v has <= p bits at 2^(e-p+1) */
}

/* The block: cur[j] = bfma(products of segment s, c = cur[j]) for j < W. */
AI void tc_block(const job_t *g, st_t *t, const int32_t *ma, const int32_t *xa,
              const int32_t *mb, const int32_t *xb, size_t len) {
  int64_t mc[W], xc[W], sc[W];
  size_t kk;
  int j;
  for (j = 0; j < W; j++) { /* c: a finite output value (inf handled after) */
    uint64_t u = bits_of(t->cur[j]);
    int64_t e = (int64_t)((u >> 52) & 0x7ff) - 1023, nz = (u << 1) != 0;
    int64_t x = imax(e, g->oemin);
    uint64_t mant = (u & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
    int64_t sh = imin(52 - g->pout + 1 + x - e, 63);
    mc[j] = nz ? (int64_t)(mant >> sh) : 0;
    xc[j] = nz ? x : ZC;
    sc[j] = -(int64_t)(u >> 63);
    t->X[j] = xc[j];
  }
  for (kk = 0; kk < len; kk++) {
    int64_t x0 = xa[kk];
    const int32_t *xr = xb + kk * W;
    for (j = 0; j < W; j++) t->X[j] = imax(t->X[j], x0 + xr[j]);
  }
  if (g->c0_emin) /* c = 0 at 2^emin once a product is nonzero (all-zero lanes keep X < ZX / 2) */
    for (j = 0; j < W; j++)
      t->X[j] = imax(t->X[j], xc[j] == ZC && t->X[j] > ZX / 2 ? g->oemin : ZC);
  for (j = 0; j < W; j++) {
    uint64_t q = ((uint64_t)mc[j] << g->lc) >> imin(t->X[j] - xc[j] + g->rc, 63);
    t->S[j] = (int64_t)((q ^ (uint64_t)sc[j]) - (uint64_t)sc[j]);
  }
  for (kk = 0; kk < len; kk++) {
    int64_t m0 = ma[kk], x0 = xa[kk] - g->r0;
    const int32_t *mr = mb + kk * W, *xr = xb + kk * W;
    for (j = 0; j < W; j++) {
      int64_t p = m0 * mr[j], sg = p >> 63;
      uint64_t ap = (uint64_t)((p ^ sg) - sg);
      uint64_t q = (ap << g->l0) >> imin(t->X[j] - x0 - xr[j], 63);
      t->S[j] += (int64_t)((q ^ (uint64_t)sg) - (uint64_t)sg);
    }
  }
}

/* The block sum S 2^(X - F) rounded once (bfma.c's round_out, ovf = inf),
   8 outputs at a time in GCC vector extensions (branch-free; the compiler
   does not vectorise the plain loop). Masks (-1 / 0 lanes) come from the
   sign of a difference (every operand is far below 2^62): vector compares
   were scalarised. */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef int64_t vi __attribute__((vector_size(64)));
typedef uint64_t vu __attribute__((vector_size(64)));
typedef double vd __attribute__((vector_size(64)));

AI vi lt(vi x, vi y) { return (x - y) >> 63; } /* x < y */
AI vi vmin(vi x, vi y) { vi m = lt(x, y); return (x & m) | (y & ~m); }
AI vi vmax(vi x, vi y) { vi m = lt(y, x); return (x & m) | (y & ~m); }

AI void normalise(const job_t *g, st_t *t) {
  const double lim = of_bits((uint64_t)(g->oemax + 1 + 1023) << 52);
  const vu one = {1, 1, 1, 1, 1, 1, 1, 1}, magic = one * (UINT64_C(0x433) << 52);
  const vi zero = {0}, rne = zero - (int64_t)g->rne, zk = zero - (int64_t)!g->zrnd_pos;
  const vd inf = (vd)(one * (UINT64_C(0x7ff) << 52));
  int j;
  for (j = 0; j < W; j += 8) {
    vi S, X, L, sg, e, q, s, qq, up, ov, keep;
    vu U, r, rem, half, uc;
    vd cur, dU, v;
    memcpy(&S, t->S + j, sizeof S);
    memcpy(&X, t->X + j, sizeof X);
    memcpy(&cur, t->cur + j, sizeof cur);
    L = X - (int64_t)g->F, sg = S >> 63;
    U = (vu)((S ^ sg) - sg), uc = (vu)cur;
    dU = (vd)(U | magic) - 0x1p52; /* exact: U < 2^52 */
    e = L + (vi)(((vu)dU >> 52) & 0x7ff) - 1023;
    q = vmax(e, zero + g->oemin) - g->P + 1;
    s = vmin(vmax(q - L, zero), zero + 63);
    r = U >> (vu)s, rem = U & ((one << (vu)s) - 1), half = (one << (vu)s) >> 1;
    qq = vmin(vmax(L + s, zero - 1000), zero + 1000);
    up = lt((vi)half, (vi)rem) | (((vi)(rem ^ half) - 1) >> 63 & (zero - (vi)(r & 1)));
    r -= (vu)(up & lt(zero, s) & rne);
    v = ((vd)(r | magic) - 0x1p52) * (vd)((vu)(qq + 1023) << 52);
    ov = lt(zero + g->oemax, e) | ~lt((vi)v, zero + (int64_t)bits_of(lim)); /* v >= 0 */
    v = (vd)(((vi)v & ~ov) | ((vi)inf & ov));
    v = (vd)((vu)v | ((vu)(sg & (lt(zero, (vi)v) | zk)) << 63)); /* zrnd=pos: +0 */
    /* inf, NaN stay (c's rule); all-zero blocks were signed by zero_signs */
    keep = lt(zero + 0x7fe, (vi)((uc >> 52) & 0x7ff)) | lt(X, zero + ZX / 2);
    cur = (vd)(((vi)cur & keep) | ((vi)v & ~keep));
    memcpy(t->cur + j, &cur, sizeof cur);
  }
}

/* A block whose products are all zero and c = 0: -0 only if all are -0
   and zsum=ieee (before normalise: cur[j] is still c). */
static void zero_signs(const job_t *g, st_t *t, size_t i, size_t j0, size_t s0,
                       size_t len) {
  int j;
  size_t kk;
  for (j = 0; j < W && j0 + (size_t)j < g->n; j++) {
    int neg;
    if (t->X[j] >= ZX / 2) continue;
    neg = !g->zsum_pos && signbit(t->cur[j]) != 0;
    for (kk = 0; kk < len && neg; kk++) {
      size_t l = g->perm[s0 + kk];
      neg = signbit(g->a[i * g->k + l]) != signbit(g->b[l * g->n + j0 + (size_t)j]);
    }
    t->cur[j] = neg ? -0.0 : 0.0;
  }
}

/* x + y in the output format by rnd (tc_dot.c's additions): fp32 rne as one
   binary64 addition rounded to binary32; fp16 rne as the exact binary64 sum
   of two fp16 values rounded to 11 bits at its quantum (nearbyint: the
   default mode, to nearest even; 2^16 and beyond is inf, as IEEE); else
   lowp_accum_add. */
AI double add_out(double x, double y, const lowp_format_t *f, lowp_rounding_t rnd) {
  double z;
  if (rnd == LOWP_RND_NE && f->precision == 24 && f->emax == 127 && f->emin == -126)
    return (double)(float)(x + y);
  if (rnd == LOWP_RND_NE && f->precision == 11 && f->emax == 15 && f->emin == -14 &&
      isfinite(x) && isfinite(y)) {
    double v = x + y; /* exact: both are multiples of 2^-24 below 2^16 */
    int64_t e = (int64_t)((bits_of(v) >> 52) & 0x7ff) - 1023, q = imax(e, -14) - 10;
    z = nearbyint(v * of_bits((uint64_t)(1023 - q) << 52)) * of_bits((uint64_t)(1023 + q) << 52);
    return fabs(z) >= 0x1p16 ? copysign(INFINITY, z) : z;
  }
  lowp_accum_add(&z, x, y, f, rnd);
  return z;
}

/* One row i of one panel: the whole chain of tc_dot.c over the segments. */
AI void row_panel(const job_t *g, size_t i, size_t pan) {
  st_t t;
  size_t s, j0 = pan * W, nj = g->n - j0 < W ? g->n - j0 : W;
  const int32_t *ma = g->ma + i * g->k, *xa = g->xa + i * g->k;
  const int32_t *mb = g->mb + pan * g->k * W, *xb = g->xb + pan * g->k * W;
  int j;
  for (j = 0; j < W; j++) {
    double c0 = (size_t)j < nj ? g->c[i * g->n + j0 + (size_t)j] : 0.0;
    t.tot[j] = c0, t.acc[j] = c0, t.cur[j] = c0;
  }
  for (s = 0; s < g->nseg; s++) {
    const seg_t *sg = &g->seg[s];
    if (sg->flags & SEG_CHAIN0)
      for (j = 0; j < W; j++) t.acc[j] = g->promote ? 0.0 : t.acc[j];
    if (sg->flags & SEG_INSTR0)
      for (j = 0; j < W; j++) t.cur[j] = g->late_c ? 0.0 : t.acc[j];
    tc_block(g, &t, ma + sg->start, xa + sg->start, mb + sg->start * W, xb + sg->start * W,
          sg->len);
    {
      int64_t lo = 0;
      for (j = 0; j < W; j++) lo = imin(lo, t.X[j]);
      if (lo < ZX / 2) zero_signs(g, &t, i, j0, sg->start, sg->len);
    }
    normalise(g, &t);
    if (sg->flags & SEG_INSTR1) {
      if (g->late_c)
        for (j = 0; j < (int)nj; j++) t.acc[j] = add_out(t.cur[j], t.acc[j], g->out, g->c_rnd);
      else
        for (j = 0; j < W; j++) t.acc[j] = t.cur[j];
    }
    if ((sg->flags & SEG_CHAIN1) && g->promote)
      for (j = 0; j < W; j++) t.tot[j] = (double)(float)(t.tot[j] + t.acc[j]);
  }
  for (j = 0; j < (int)nj; j++) {
    double d = g->promote ? t.tot[j] : t.acc[j];
    if (g->promote && g->pout < 24) lowp_round_f64(&d, d, g->out, NULL, LOWP_RND_NE);
    g->c[i * g->n + j0 + (size_t)j] = d;
  }
}

static void run_rows(const job_t *g, size_t i0, size_t i1, size_t pan) {
  size_t i;
  for (i = i0; i < i1; i++) row_panel(g, i, pan);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define LOWP_TCFAST_X86 1
#if defined(__clang__)
#define LOWP_TC_AVX512 "avx512f,avx512bw,avx512vl,avx512dq"
#else
#define LOWP_TC_AVX512 "avx512f,avx512bw,avx512vl,avx512dq,prefer-vector-width=512"
#endif
__attribute__((target("avx2"))) static void run_avx2(const job_t *g, size_t i0, size_t i1,
                                                      size_t pan) {
  size_t i;
  for (i = i0; i < i1; i++) row_panel(g, i, pan);
}
__attribute__((target(LOWP_TC_AVX512))) static void run_avx512(const job_t *g, size_t i0,
                                                                size_t i1, size_t pan) {
  size_t i;
  for (i = i0; i < i1; i++) row_panel(g, i, pan);
}
#include "cpu/gemm_tc_fast_avx2.h"
#endif

enum { ISA_GENERIC = LOWP_ISA_GENERIC, ISA_AVX2 = LOWP_ISA_AVX2, ISA_AVX512 = LOWP_ISA_AVX512 };

static void run_isa(int isa, const job_t *g, size_t i0, size_t i1, size_t pan) {
  switch (isa) {
#ifdef LOWP_TCFAST_X86
  case ISA_AVX512:
    if (g->q32) run_q32(g, i0, i1, pan); /* faster there too (docs/tc-gemm-fast.md) */
    else run_avx512(g, i0, i1, pan);
    break;
  case ISA_AVX2:
    if (g->q32) run_q32(g, i0, i1, pan);
    else run_avx2(g, i0, i1, pan);
    break;
#endif
  default: run_rows(g, i0, i1, pan); break;
  }
}

/* ---------------------------------------------------------- the k order */

/* The segments of tc_dot.c's loops (promotion chunks, instructions of b or
   2b products, interleaved halves) over the permuted k order. Returns the
   count. perm: k entries; seg: room for 2 k + 2. */
static size_t plan(size_t *perm, seg_t *seg, size_t k, const lowp_tc_model_t *m) {
  size_t w = (size_t)m->bfma.b, P = (size_t)m->bfma.interleave, g = P ? 2 * w : w;
  size_t lo, i, j, pos = 0, ns = 0, chunk = m->promote ? m->promote : k;
  int half;
  for (lo = 0; lo < k; lo += chunk) {
    size_t hi = lo + chunk < k ? lo + chunk : k, first = ns;
    for (i = lo; i < hi; i += g) {
      size_t n = hi - i < g ? hi - i : g, s0 = ns;
      for (half = 0; half < (P ? 2 : 1); half++) {
        size_t cnt = 0, start = pos;
        for (j = 0; j < n; j++)
          if (!P || (int)((j / P) % 2) == half) perm[pos++] = i + j, cnt++;
        if (!cnt) continue;
        seg[ns].start = start, seg[ns].len = cnt, seg[ns].flags = 0;
        ns++;
      }
      seg[s0].flags |= SEG_INSTR0;
      seg[ns - 1].flags |= SEG_INSTR1;
    }
    seg[first].flags |= SEG_CHAIN0;
    seg[ns - 1].flags |= SEG_CHAIN1;
  }
  return ns;
}

/* ------------------------------------------------------------- packing */

/* B in panels of g->pw columns; for the 32-bit-lane copy each significand
   as the int16 in the low half of its lane, the high half 0 (vpmaddwd) */
static int pack(job_t *g, int32_t *ma, int32_t *xa, int32_t *mb, int32_t *xb, char *rbad,
                char *cbad) {
  size_t i, j, kk, pw = g->pw;
  for (i = 0; i < g->m; i++)
    for (kk = 0; kk < g->k; kk++) {
      size_t at = i * g->k + kk;
      double v = g->a[i * g->k + g->perm[kk]];
      if (!isfinite(v)) rbad[i] = 1;
      unpack(&ma[at], &xa[at], v, g->pin, g->xemin);
      if (g->q32) ma[at] &= 0xffff;
    }
  for (kk = 0; kk < g->k; kk++)
    for (j = 0; j < g->npan * pw; j++) {
      size_t at = ((j / pw) * g->k + kk) * pw + j % pw;
      double v = j < g->n ? g->b[g->perm[kk] * g->n + j] : 0.0;
      if (!isfinite(v)) cbad[j] = 1;
      unpack(&mb[at], &xb[at], v, g->pin, g->xemin);
      if (g->q32) mb[at] &= 0xffff;
    }
  return LOWP_OK;
}


static void setup(job_t *g, const lowp_gemm_tc_cfg_t *cfg) {
  const lowp_bfma_t *p = &cfg->model.bfma;
  int narrow = cfg->out->precision < LOWP_FMT_FP32.precision, s;
  g->pin = cfg->in->precision;
  g->xemin = cfg->in->emin;
  if (p->late_c && lowp_format_width(cfg->in) <= 8 && LOWP_FMT_FP16.emin < g->xemin)
    g->xemin = LOWP_FMT_FP16.emin;
  g->pout = cfg->out->precision, g->oemin = cfg->out->emin, g->oemax = cfg->out->emax;
  g->F = p->F;
  s = p->F - 2 * g->pin + 2;
  g->l0 = s > 0 ? s : 0, g->r0 = s < 0 ? -s : 0;
  s = p->F - g->pout + 1;
  g->lc = s > 0 ? s : 0, g->rc = s < 0 ? -s : 0;
  g->P = g->pout;
  if (!narrow && p->out_frac > 0 && p->out_frac + 1 < g->P) g->P = p->out_frac + 1;
  g->rne = (narrow ? p->out16_rnd : p->out_rnd) == LOWP_RND_NE;
  g->late_c = p->late_c, g->c_rnd = p->c_rnd;
  g->zsum_pos = p->zsum_pos, g->zrnd_pos = p->zrnd_pos;
  /* the floor moves X only where a nonzero product can lie below 2^oemin
     (x >= 2 xemin): not fp16 or fp8 into fp32 (no work there) */
  g->c0_emin = p->c0_emin && 2 * g->xemin < g->oemin;
  g->promote = cfg->model.promote != 0;
  g->out = cfg->out;
}

/* ----------------------------------------------------------- public API */

int lowp_gemm_tc_fast_ok(const lowp_gemm_tc_cfg_t *cfg) {
  const lowp_bfma_t *p;
  lowp_rounding_t r;
  if (!cfg || !cfg->in || !cfg->out) return 0;
  p = &cfg->model.bfma;
  r = cfg->out->precision < LOWP_FMT_FP32.precision ? p->out16_rnd : p->out_rnd;
  if (lowp_bfma_validate(p, NULL, 0) != LOWP_OK) return 0;
  if (p->align != LOWP_RND_TZ || p->sticky || !p->ovf_inf) return 0;
  if (r != LOWP_RND_TZ && r != LOWP_RND_NE) return 0;
  if (cfg->in->precision > 12 || cfg->in->emin < -200 || cfg->in->emax > 200) return 0;
  if (cfg->out->precision > 24 || cfg->out->emin < -126 || cfg->out->emax > 127) return 0;
  if (!cfg->in->subnormals || !cfg->out->subnormals) return 0;
  if (p->F + 2 + lowp_bitlen64((uint64_t)p->b + 1) > 52) return 0;
  if (cfg->model.promote % (size_t)p->b) return 0;
  return 1;
}

/* task t of run_all: 8 rows of one panel */
static void run_task(const job_t *g, int isa, long t) {
  size_t pan = (size_t)t % g->npan, i0 = ((size_t)t / g->npan) * 8;
  run_isa(isa, g, i0, i0 + 8 < g->m ? i0 + 8 : g->m, pan);
}

/* whether the loops here open a parallel region: a large enough product,
   not nested in another region (omp_inline.h) */
static int par_worth(const job_t *g) {
  return (double)g->m * (double)g->n * (double)g->k >= LOWP_GEMM_TC_PAR_MIN && !lowp_omp_inline();
}

/* Row i of fixup: its outputs touching NaN or inf, or not finite, by the
   reference; the last failing status, or LOWP_OK. */
static int fixup_row(const job_t *g, const double *c0, const char *rbad, const char *cbad,
                     const lowp_gemm_tc_cfg_t *cfg, long i) {
  size_t j;
  int status = LOWP_OK;
  for (j = 0; j < g->n; j++) {
    size_t e = (size_t)i * g->n + j;
    double d;
    int st;
    if (!rbad[i] && !cbad[j] && isfinite(c0[e]) && isfinite(g->c[e])) continue;
    st = lowp_tc_dot(&d, g->a + (size_t)i * g->k, 1, g->b + j, g->n, g->k, c0[e],
                     &cfg->model, cfg->in, cfg->out);
    if (st != LOWP_OK) status = st;
    g->c[e] = d;
  }
  return status;
}

/* Outputs touching NaN or inf, or not finite: the reference, per element. */
static int fixup(const job_t *g, const double *c0, const char *rbad, const char *cbad,
                 const lowp_gemm_tc_cfg_t *cfg) {
  long i;
  int status = LOWP_OK;
  if (!par_worth(g)) {
    for (i = 0; i < (long)g->m; i++) {
      int st = fixup_row(g, c0, rbad, cbad, cfg, i);
      if (st != LOWP_OK) status = st;
    }
    return status;
  }
#pragma omp parallel for schedule(static)
  for (i = 0; i < (long)g->m; i++) {
    int st = fixup_row(g, c0, rbad, cbad, cfg, i);
    if (st != LOWP_OK) {
#pragma omp critical(lowp_gemm_tc_fast_status)
      status = st;
    }
  }
  return status;
}

static void run_all(const job_t *g, int isa) {
  long t, nt = (long)(g->npan * ((g->m + 7) / 8));
  if (!par_worth(g)) {
    for (t = 0; t < nt; t++) run_task(g, isa, t);
    return;
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (t = 0; t < nt; t++) run_task(g, isa, t);
}

int lowp_gemm_tc_fast(double *c, const double *a, const double *b, size_t m, size_t n,
                      size_t k, const lowp_gemm_tc_cfg_t *cfg, const char *isa) {
  job_t g;
  int use = (int)lowp_cpu_isa(0), st = LOWP_ENOMEM;
  size_t npan, *perm;
  int32_t *buf;
  seg_t *seg;
  double *c0;
  char *flags;
  if (!lowp_gemm_tc_fast_ok(cfg)) return LOWP_EINVAL;
  if (isa) {
    int want = lowp_isa_parse(isa);
    if (want < 0) return LOWP_EINVAL;
    if (want > use) return LOWP_EUNSUPPORTED;
    use = want;
  }
  if (m == 0 || n == 0) return LOWP_OK;
  memset(&g, 0, sizeof g);
  setup(&g, cfg);
#ifdef LOWP_TCFAST_X86
  if (use >= ISA_AVX2) g.q32 = q32_fits(cfg, g.F, g.P, g.pout);
#endif
  g.pw = g.q32 ? W8 : W, npan = (n + g.pw - 1) / g.pw;
  g.lq = g.F + 1 - g.P > 0 ? g.F + 1 - g.P : 0;
  g.m = m, g.n = n, g.k = k, g.npan = npan, g.a = a, g.b = b, g.c = c;
  perm = malloc((k + 1) * sizeof *perm);
  seg = malloc((2 * k + 2) * sizeof *seg);
  buf = malloc((2 * m * k + 2 * npan * g.pw * k + 1) * sizeof *buf);
  c0 = malloc(m * n * sizeof *c0);
  flags = calloc(m + npan * g.pw, 1);
  if (perm && seg && buf && c0 && flags) {
    g.nseg = k ? plan(perm, seg, k, &cfg->model) : 0;
    g.perm = perm, g.seg = seg;
    g.ma = buf, g.xa = buf + m * k, g.mb = buf + 2 * m * k, g.xb = g.mb + npan * g.pw * k;
    memcpy(c0, c, m * n * sizeof *c0);
    pack(&g, buf, buf + m * k, buf + 2 * m * k, buf + 2 * m * k + npan * g.pw * k, flags,
         flags + m);
    run_all(&g, use);
    st = fixup(&g, c0, flags, flags + m, cfg);
  }
  free(perm), free(seg), free(buf), free(c0), free(flags);
  return st;
}
