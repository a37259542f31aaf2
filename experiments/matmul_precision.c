/* lowp_exp_matmul_precision -- how far fp32, tf32, fp16, bf16 and fp8 matrix products are from the exact product */

/*
 * Question: for random 1000 x 1000 matrices, what is the largest elementwise
 *   error of a matrix product computed in fp32, tf32, fp16, bf16, e4m3 and
 *   e5m2, against the exact product and against fp32 (as the exercise asks),
 *   and how does it grow with the size, up to n = 4096? How much of it is
 *   the rounding of the inputs and how much the accumulation?
 * Method: the data are fp32 matrices with N(0,1) entries (Philox, one
 *   stream per seed and size), rounded to each input format (round to
 *   nearest even). Kernels, every output over the FULL matrix:
 *   cpu-F      every product and every addition rounded to F, recursive
 *              order (kernels/cpu/gemm_acc with prod = acc = F): the
 *              all-F product the exercise describes;
 *   F-in/fp32-acc  inputs rounded to F, products exact, each addition
 *              rounded to fp32 (gemm_acc with prod = NULL, acc = fp32): the
 *              input rounding alone, on an fp32 accumulator;
 *   tc-M-F     kernels/cpu/gemm_tc on the lib/model tensor-core preset M
 *              (default h100), the whole product at every seed, up to
 *              `tcmax` (the model runs at about 0.6 ns per multiply-add,
 *              kernels/cpu/gemm_tc_fast.c: seconds at n = 1000), compared
 *              with F-in/fp32-acc on the same inputs;
 *   openblas-sgemm  OpenBLAS cblas_sgemm on the fp32 data (registry kernel
 *              gemm_sgemm, kernels/cpu/gemm_blas.c: one OpenBLAS thread,
 *              its own blocked order; the version and CPU kernel are in
 *              results.json), beside the recursive cpu-fp32, at every size
 *              fp32 runs at; its bound is gamma_n of fp32, which holds for
 *              any order of evaluation (Higham 2002, Sec. 3.1).
 *   The CPU kernels are emulated at BLAS-like speed (fast_gemm below): in
 *   fp32 arithmetic, each result rounded to F by bit operations. This is
 *   exact, not an approximation: products of two F values (<= 11 bits) are
 *   exact in fp32, and a sum of two F values rounded to fp32 (24 bits) and
 *   then to F (p bits) is rounded once when 24 >= 2p + 2 (double rounding
 *   is innocuous: S. A. Figueroa, "When is double rounding innocuous?",
 *   SIGNUM Newsl. 30(3), 1995). Outputs with a product below fp32's normal
 *   range (where it may be inexact) or a result beyond F's finite range are
 *   recomputed by the reference kernel, and every run is
 *   checked bit for bit against kernels/cpu/gemm_acc on `check` entries.
 *   Every kernel is a registry subject with parameters (gemm_acc
 *   acc=F,prod=acc; gemm_acc acc=fp32,prod=exact; gemm_tc model=M; gemm_sgemm) that
 *   the pipeline measures (lib/check: lowp_check_measure for the first
 *   kernel of a format, lowp_check_measure_same for the others, so one
 *   exact product of the rounded inputs, and |A||B|, serves them all; the
 *   cpu subjects' outputs come from the emulation, the subject's declared
 *   method from the registry). References: the exact product of the fp32
 *   data, and per input format the exact product of the rounded inputs and
 *   |A||B|. Metrics: max |C - X| against the data and against the rounded
 *   inputs, against cpu-fp32; componentwise backward error max |C - X| /
 *   (|A||B|) against the kernel's own inputs (in units of the
 *   accumulator's u) and the bound of the subject's method
 *   (lowp_check_bound: gamma_n with rounded products for cpu-F, gamma_n of
 *   fp32 for F-in/fp32-acc, the tensor-core model bound for tc); normwise
 *   backward error ||C - X||_F / (||A||_F ||B||_F).
 *   Spread: every metric per seed (errors.csv); tables and answer give the
 *   mean over the seeds and their range [min, max]. Seed s of size n draws
 *   from its own Philox stream (s * 16 + size index) of the run's seed, so
 *   the seeds are fixed by --seed.
 *   Growth: per seed, least-squares slope of log(error) on log(n) over the
 *   sizes; mean over seeds, their range and a t-based 95% confidence
 *   interval (mean +- t_{0.975, S-1} sd / sqrt(S)).
 *   Time budget: every format with 8 seeds up to n = big (1000; 3 seeds
 *   gave t_{0.975,2} = 4.30 and nearly useless intervals); above it
 *   one seed of bigformats (fp32, fp16, bf16), without |A||B| (bigabs=0: no
 *   componentwise backward error there). With 3 seeds it took about 153 s
 *   of CPU (user + sys) on the 2-core reference machine, 135 s before the
 *   tensor-core model ran on whole products and OpenBLAS joined (the
 *   reference run took 70 s then); 8 seeds multiply the n <= big part by
 *   8/3 (not yet timed on a quiet machine).
 * Run: lowp run matmul-precision [--sizes=64,...,4096] [--seeds=8]
 *   [--big=1000] [--bigseeds=1] [--bigformats=fp32,fp16,bf16]
 *   [--tcmax=1000] [--bigabs=0] [--model=h100] [--sgemm=1]
 * Expected / acceptance: every backward error within its bound where the
 *   bound exists; fp32 is far closer to exact than the others; cpu-fp16 and
 *   cpu-bf16 grow faster with n than the fp32-accumulating kernels, whose
 *   error is the rounding of the inputs.
 */

#include "par.h"
#include "cpu.h"
#include "catalog.h"
#include "results.h"

#include "check/same.h"
#include "cpu/gemm_acc.h"
#include "cpu/gemm_blas.h"
#include "cpu/gemm_tc.h"
#include "format/amax_bits.h"
#include "format/format.h"
#include "io/plot.h"
#include "measure/measure.h"
#include "model/accum.h"
#include "rng/rng.h"
#include "exp_check.h"
#include "extrapolation.h"
#include "mp_frnd.h"
#include "status.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lowp_param_t params[] = {
    {"sizes", "64,128,256,512,1000,2048,4096", "16,32,64,100",
     "matrix sizes n (n x n times n x n), all measured on the full matrix"},
    {"head", "1000", "64", "the size of the exercise's question (one of sizes)"},
    {"seeds", "8", "2", "independent data sets per size (for the confidence intervals: t_{0.975,7} = 2.36)"},
    {"big", "1000", "64", "sizes above this get only bigseeds data sets and bigformats (time budget)"},
    {"bigseeds", "1", "1", "data sets per size above big"},
    {"formats", "fp32,tf32,fp16,bf16,e4m3,e5m2", NULL, "input formats (cpu-F accumulates in F too)"},
    {"bigformats", "fp32,fp16,bf16", NULL, "the formats measured at sizes above big (time budget; names not in formats are ignored; fp32 always)"},
    {"model", "h100", NULL, "tensor-core model preset (lib/model), or none"},
    {"bigabs", "0", "1", "1: componentwise backward errors above big too (|A||B|: one more exact product per format)"},
    {"tcmax", "1000", "100", "largest n the tensor-core model runs at (whole products, every seed)"},
    {"sgemm", "1", "1", "1: OpenBLAS cblas_sgemm (registry kernel gemm_sgemm) on the fp32 data beside cpu-fp32"},
    {"check", "16", "16", "entries per product checked bit for bit against kernels/cpu/gemm_acc"},
    {NULL, NULL, NULL, NULL}};

#define MAXF 8
#define MAXS 16
#define MAXSEED 31
#define MAXK (3 * MAXF)

/* ------------------------------------------------------ private helpers */

typedef struct {
  long sizes[MAXS];
  int ns, head;
  long seeds, big, bigseeds;
  lowp_format_t fs[MAXF];
  int nf;
  int bigf[MAXF]; /* 1: fs[i] is measured above big too */
  const char *model; /* NULL: no tensor-core kernels */
  long tcmax, check;
  int bigabs, sgemm;
} cfg_t;

/* lowp_run_param_formats check: what fast_gemm emulates exactly (see the
   header): fp32 itself, or a format fp32 holds whose sums rounded through
   fp32 are rounded once (24 >= 2p + 2), with subnormals (the emulation
   rounds below xmin to the subnormal quantum), a zero and a sign */
static const char *fast_ok(const lowp_format_t *f) {
  const lowp_format_t *s = &LOWP_FMT_FP32;
  char err[128];
  if (lowp_accum_format_check(f, err, sizeof err) != LOWP_OK) return "expected formats that can hold a running sum (a zero and a sign)";
  if (f->precision == s->precision && f->emin == s->emin && f->emax == s->emax && f->subnormals) return NULL;
  if (2 * f->precision + 2 > s->precision || f->emin < s->emin || f->emax > s->emax || !f->subnormals)
    return "expected fp32, or formats of at most 11 significand bits inside fp32's range with subnormals (the "
           "emulation rounds through fp32)";
  return NULL;
}

static void parse(const lowp_run_t *r, cfg_t *c) {
  long long sz[MAXS], h;
  int i;
  c->ns = (int)lowp_run_param_list_int(r, "sizes", sz, MAXS, 1, 4096);
  for (i = 0; i < c->ns; i++) c->sizes[i] = (long)sz[i];
  for (i = 1; i < c->ns; i++)
    if (c->sizes[i] <= c->sizes[i - 1]) lowp_run_bad_param(r, "sizes", "expected increasing sizes");
  h = lowp_run_param_int(r, "head", 1, 4096);
  c->head = -1;
  for (i = 0; i < c->ns; i++)
    if (c->sizes[i] == h) c->head = i;
  if (c->head < 0) lowp_run_bad_param(r, "head", "expected one of the sizes");
  c->seeds = (long)lowp_run_param_int(r, "seeds", 1, MAXSEED);
  c->big = (long)lowp_run_param_int(r, "big", 1, 4096);
  c->bigseeds = (long)lowp_run_param_int(r, "bigseeds", 1, MAXSEED);
  if (c->bigseeds > c->seeds) lowp_run_bad_param(r, "bigseeds", "expected at most seeds");
  c->nf = (int)lowp_run_param_formats(r, "formats", c->fs, MAXF, fast_ok);
  {
    lowp_format_t bf[MAXF];
    int nb = (int)lowp_run_param_formats(r, "bigformats", bf, MAXF, fast_ok), q;
    for (i = 0; i < c->nf; i++) c->bigf[i] = 0;
    for (q = 0; q < nb; q++)
      for (i = 0; i < c->nf; i++)
        if (!strcmp(c->fs[i].name, bf[q].name)) c->bigf[i] = 1;
  }
  c->model = lowp_run_param(r, "model");
  if (!strcmp(c->model, "none")) c->model = NULL;
  else {
    lowp_gemm_tc_cfg_t tc;
    char err[256];
    int st = lowp_gemm_tc_config(&tc, c->model, -1, &LOWP_FMT_FP16, &LOWP_FMT_FP32, err, sizeof err);
    if (st != LOWP_OK && st != LOWP_EUNSUPPORTED)
      lowp_run_bad_param(r, "model", "unknown tensor-core model (a lib/model preset such as h100, or none)");
  }
  c->bigabs = (int)lowp_run_param_int(r, "bigabs", 0, 1);
  c->sgemm = (int)lowp_run_param_int(r, "sgemm", 0, 1);
  c->tcmax = (long)lowp_run_param_int(r, "tcmax", 1, 4096);
  c->check = (long)lowp_run_param_int(r, "check", 1, 1000000);
}

static void check(const lowp_run_t *r) {
  cfg_t c;
  parse(r, &c);
}

/* ---- the fast exact emulation of kernels/cpu/gemm_acc (recursive order, round to nearest even) */

/* x rounded to F the way `way` (a constant where it is inlined), with P's parameters (pr or ac); B the flag */
#define FRND(x, P, B)                                                                                        \
  (way == FR_NARROW ? frnd_narrow(x, P##ebmin, P##ebcap, P##mofs, P##xmax, &(B))                            \
   : way == FR_WIDE ? frnd_wide(x, P##d, P##xmax, &(B))                                                      \
                    : frnd(x, P##d, P##xmin, P##magic, P##xmax, &(B)))
/* FRND's parameters of pr (the products' rounding, prefix p) and ac (the sums', prefix a) as locals */
#define FRND_CONSTS(pr, ac)                                                                                  \
  const uint32_t pd = (pr)->drop, ad = (ac)->drop;                                                           \
  const float pxmin = (pr)->xmin, pmagic = (pr)->magic, pxmax = (pr)->xmax;                                  \
  const float axmin = (ac)->xmin, amagic = (ac)->magic, axmax = (ac)->xmax;                                  \
  const uint32_t pebmin = (pr)->ebmin, pebcap = (pr)->ebcap, pmofs = (pr)->mofs;                             \
  const uint32_t aebmin = (ac)->ebmin, aebcap = (ac)->ebcap, amofs = (ac)->mofs
/* FRND where no value comes near F's largest (tile_bounded): the bits alone (FR_WIDE), the exponent field
   raised to 2^emin's without the cap (FR_NARROW), no flag */
#define FRNDB(x, P)                                                                                          \
  (way == FR_NARROW ? frnd_narrow_nocap(x, P##ebmin, P##mofs)                                                \
   : way == FR_WIDE ? frnd_wide_noflag(x, P##d)                                                              \
                    : frnd_gen_noflag(x, P##d, P##xmin, P##magic))
/* a product below fp32's normal range (it may be inexact): tested unless `under` (a constant) is 0 */
#define UNDER(q) (under && (fabsf(q) < FLT_MIN) & ((q) != 0.0f))

#define JB 256
#define LB 256

/* C = A B (n x n, row-major floats holding F values) as gemm_acc computes
   it with prod = F (rounded products) or NULL (exact products), acc = F:
   c_ij = round(... round(round(0 + p_i0j) + p_i1j) ...). Tiles of JB
   columns x LB terms keep B in cache; the terms of every output are added
   in increasing l, as in the reference. flags[i * njb + jb] is set where a
   product fell below fp32's normal range (then it may not be exact) or a
   result left F's range (tested per value, or, where tile_bounded proves that no value of a tile comes
   near F's largest, not at all: tile_rows4_bnd). OpenMP over column tiles: the result does not depend on it, nor
   on the vector width the machine offers (the column tile is compiled for
   the baseline, AVX2 and AVX-512F, the copy chosen by lowp_cpu_isa, so that
   LOWP_ISA=avx2 runs what an AVX2 CPU runs: the same IEEE operations, no
   contraction, on 4, 8 or 16 lanes). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define MP_X86 1
#endif

/* the smallest nonzero magnitude of x[0 .. m - 1] (+inf if all are zero; NaNs skipped) */
static inline __attribute__((always_inline)) float min_nonzero(const float *x, long m) {
  float r = INFINITY;
  long q;
  for (q = 0; q < m; q++) {
    float v = fabsf(x[q]);
    r = v != 0.0f && v < r ? v : r;
  }
  return r;
}

/* |y|'s bits (a float's order is that of these bits where it is not a NaN), and the larger of two */
static inline __attribute__((always_inline)) uint32_t absbits(float y) {
  uint32_t u;
  memcpy(&u, &y, sizeof u);
  return u & 0x7fffffffu;
}
static inline __attribute__((always_inline)) uint32_t umax(uint32_t a, uint32_t b) { return a > b ? a : b; }

/* four rows' terms l0 .. l1 - 1 over columns j0 .. j1 - 1 (see fast_tile); `under` here a constant: 0
   where the caller proved no product of these terms can fall below fp32's normal range */
static inline __attribute__((always_inline)) int tile_rows4(float *restrict c0, float *restrict c1,
                                                            float *restrict c2, float *restrict c3,
                                                            const float *a0, const float *a1,
                                                            const float *a2, const float *a3,
                                                            const float *B, long n, long l0, long l1,
                                                            long j0, long j1, const frnd_t *pr,
                                                            const frnd_t *ac, const int way,
                                                            const int under) {
  FRND_CONSTS(pr, ac);
  int bad = 0;
  uint32_t mx = 0;
  long l, j;
  for (l = l0; l < l1; l++) {
    const float x0 = a0[l], x1 = a1[l], x2 = a2[l], x3 = a3[l], *b = B + (size_t)l * n;
    if (!pr->round && !ac->round) {
      for (j = j0; j < j1; j++) {
        float bj = b[j], p0 = x0 * bj, p1 = x1 * bj, p2 = x2 * bj, p3 = x3 * bj;
        bad |= UNDER(p0) | UNDER(p1) | UNDER(p2) | UNDER(p3);
        c0[j] = c0[j] + p0;
        c1[j] = c1[j] + p1;
        c2[j] = c2[j] + p2;
        c3[j] = c3[j] + p3;
      }
    } else {
      /* FRND's own overflow test (|y| > xmax, per value) left to the largest |y| of the products and
         sums, as the bits of a non-negative float (their order is the values'), tested once at the end
         against the smaller of the two xmax (the same where products and sums round to one format, as
         in every kernel here; else more rows flagged, which the reference recomputes): two operations
         a value instead of three or four; one accumulator, which AVX2's 16 registers still leave in
         memory. A NaN y, only after an infinity already beyond xmax, is flagged too. */
      int dead = 0;
      for (j = j0; j < j1; j++) {
        float bj = b[j], p0 = x0 * bj, p1 = x1 * bj, p2 = x2 * bj, p3 = x3 * bj;
        bad |= UNDER(p0) | UNDER(p1) | UNDER(p2) | UNDER(p3);
        p0 = FRND(p0, p, dead);
        p1 = FRND(p1, p, dead);
        p2 = FRND(p2, p, dead);
        p3 = FRND(p3, p, dead);
        mx = umax(mx, umax(umax(absbits(p0), absbits(p1)), umax(absbits(p2), absbits(p3))));
        c0[j] = FRND(c0[j] + p0, a, dead);
        c1[j] = FRND(c1[j] + p1, a, dead);
        c2[j] = FRND(c2[j] + p2, a, dead);
        c3[j] = FRND(c3[j] + p3, a, dead);
        mx = umax(mx, umax(umax(absbits(c0[j]), absbits(c1[j])), umax(absbits(c2[j]), absbits(c3[j]))));
      }
      (void)dead;
    }
  }
  return bad | (mx > (absbits(pxmax) < absbits(axmax) ? absbits(pxmax) : absbits(axmax)));
}

/* Whether every product and every partial sum of four rows' terms over a tile provably stays within half of
   F's range, from the tile's largest |a| (A), |b| (Bm) and entering |c| (Cin), all finite: then FRND's
   overflow test can never fire and FR_NARROW's cap on the exponent field never binds (tile_rows4_bnd).
   The bound: RN to binary32 and to F are monotone, so a product's fl32(a b) is at most P0 = fl32(A Bm) in
   magnitude, and p = R_p(fl32(a b)) at most P = P0 (1 + u_p) + q_p (u = 2^-p, q F's smallest quantum; below
   F's normal range its error is at most q / 2, above it u |v|). A step s' = R_a(fl32(s + p)) (a binary32
   addition errs by at most 2^-24 relative: below the normal range it is exact) gives |s'| <= g (|s| + P) +
   h, g = (1 + 2^-24)(1 + u_a), h = q_a / 2, so after L steps |s| <= g^L (Cin + L (P + h)) = S, and every
   value rounded, fl32(s + p), is at most g (S + P). Required: P <= pxmax / 2 and S <= axmax / 2 (each
   double computation here errs by far less than that margin); then fl32(s + p) < 2^(emax + 1) too. */
static int tile_bounded(uint32_t abits, uint32_t bbits, uint32_t cbits, long L, const frnd_t *pr, const frnd_t *ac) {
  float fa, fb, fc;
  double up = ldexp(1.0, (int)pr->drop - 24), ua = ldexp(1.0, (int)ac->drop - 24), qp, qa, P, g, S;
  if (abits >= 0x7f800000u || bbits >= 0x7f800000u || cbits >= 0x7f800000u) return 0;
  memcpy(&fa, &abits, sizeof fa), memcpy(&fb, &bbits, sizeof fb), memcpy(&fc, &cbits, sizeof fc);
  qp = (double)pr->magic / 0x1.8p23, qa = (double)ac->magic / 0x1.8p23; /* magic = 1.5 2^(q + 23) */
  P = (double)(fa * fb) * (1.0 + up) + qp;
  g = (1.0 + 0x1p-24) * (1.0 + ua);
  S = pow(g, (double)L) * ((double)fc + (double)L * (P + qa / 2));
  return P <= (double)pr->xmax / 2 && S <= (double)ac->xmax / 2;
}

/* tile_rows4's rounded branch where tile_bounded holds: no overflow test, and FR_NARROW's magic number from
   the exponent field raised to 2^emin's alone (the cap is for values beyond twice F's range). Each
   output's operations and their values are tile_rows4's. Used by the AVX2 and AVX-512 copies for FR_WIDE
   and FR_NARROW; the baseline copy and FR_GEN (no kernel here rounds both that way) keep the test: less
   code to compile (matmul_precision.c 11 -> 9-10 s of CPU). */
static inline __attribute__((always_inline)) void tile_rows4_bnd(float *restrict c0, float *restrict c1,
                                                                 float *restrict c2, float *restrict c3,
                                                                 const float *a0, const float *a1,
                                                                 const float *a2, const float *a3,
                                                                 const float *B, long n, long l0, long l1,
                                                                 long j0, long j1, const frnd_t *pr,
                                                                 const frnd_t *ac, const int way) {
  FRND_CONSTS(pr, ac);
  long l, j;
  (void)pxmin, (void)pmagic, (void)axmin, (void)amagic, (void)pebcap, (void)aebcap;
  (void)pxmax, (void)axmax;
  for (l = l0; l < l1; l++) {
    const float x0 = a0[l], x1 = a1[l], x2 = a2[l], x3 = a3[l], *b = B + (size_t)l * n;
    for (j = j0; j < j1; j++) {
      float bj = b[j];
      c0[j] = FRNDB(c0[j] + FRNDB(x0 * bj, p), a);
      c1[j] = FRNDB(c1[j] + FRNDB(x1 * bj, p), a);
      c2[j] = FRNDB(c2[j] + FRNDB(x2 * bj, p), a);
      c3[j] = FRNDB(c3[j] + FRNDB(x3 * bj, p), a);
    }
  }
}

/* Four rows' fp32 sums of exact products (a kernel that rounds neither products nor sums, where no product
   needs the underflow test), 2 VT-vectors of columns at a time with the sums in registers for the l0 ..
   l1 - 1 terms, instead of loaded and stored per term (the column tile's loop): each output gets the same
   operations in the same order, c = c + a b (one fp32 multiplication, one fp32 addition). Returns the first
   column not done (the column tile's loop does the rest). VT one of the copy's vector types. */
#define MP_RB(NAME, VT)                                                                                      \
  static inline __attribute__((always_inline)) long NAME(                                                  \
      float *restrict c0, float *restrict c1, float *restrict c2, float *restrict c3, const float *a0,     \
      const float *a1, const float *a2, const float *a3, const float *B, long n, long l0, long l1, long j0, \
      long j1) {                                                                                           \
    const long w = (long)(sizeof(VT) / sizeof(float));                                                     \
    long j, l;                                                                                             \
    for (j = j0; j + 2 * w <= j1; j += 2 * w) {                                                            \
      VT s00, s01, s10, s11, s20, s21, s30, s31;                                                           \
      memcpy(&s00, c0 + j, sizeof s00), memcpy(&s01, c0 + j + w, sizeof s01);                              \
      memcpy(&s10, c1 + j, sizeof s10), memcpy(&s11, c1 + j + w, sizeof s11);                              \
      memcpy(&s20, c2 + j, sizeof s20), memcpy(&s21, c2 + j + w, sizeof s21);                              \
      memcpy(&s30, c3 + j, sizeof s30), memcpy(&s31, c3 + j + w, sizeof s31);                              \
      for (l = l0; l < l1; l++) {                                                                          \
        const float *b = B + (size_t)l * n + j, x0 = a0[l], x1 = a1[l], x2 = a2[l], x3 = a3[l];           \
        VT b0, b1;                                                                                         \
        memcpy(&b0, b, sizeof b0), memcpy(&b1, b + w, sizeof b1);                                          \
        s00 = s00 + x0 * b0, s01 = s01 + x0 * b1, s10 = s10 + x1 * b0, s11 = s11 + x1 * b1;                \
        s20 = s20 + x2 * b0, s21 = s21 + x2 * b1, s30 = s30 + x3 * b0, s31 = s31 + x3 * b1;                \
      }                                                                                                    \
      memcpy(c0 + j, &s00, sizeof s00), memcpy(c0 + j + w, &s01, sizeof s01);                              \
      memcpy(c1 + j, &s10, sizeof s10), memcpy(c1 + j + w, &s11, sizeof s11);                              \
      memcpy(c2 + j, &s20, sizeof s20), memcpy(c2 + j + w, &s21, sizeof s21);                              \
      memcpy(c3 + j, &s30, sizeof s30), memcpy(c3 + j + w, &s31, sizeof s31);                              \
    }                                                                                                      \
    return j;                                                                                              \
  }
typedef float mp_v4 __attribute__((vector_size(16)));  /* the baseline's xmm */
typedef float mp_v8 __attribute__((vector_size(32)));  /* AVX2's ymm */
typedef float mp_v16 __attribute__((vector_size(64))); /* AVX-512's zmm */
MP_RB(rb_v4, mp_v4)
MP_RB(rb_v8, mp_v8)
MP_RB(rb_v16, mp_v16)
#undef MP_RB

/* column tile jb of fast_gemm */
static inline __attribute__((always_inline)) void fast_tile(float *C, int *flags, const float *A,
                                                            const float *B, long n, long jb,
                                                            const frnd_t *pr, const frnd_t *ac, const int way,
                                                            const int under, const int vw) {
  const long njb = (n + JB - 1) / JB;
  FRND_CONSTS(pr, ac);
  {
    long j0 = jb * JB, j1 = j0 + JB < n ? j0 + JB : n, l0;
    for (l0 = 0; l0 < n; l0 += LB) {
      long l1 = l0 + LB < n ? l0 + LB : n, i;
      /* the tile's smallest nonzero |b|: with a row group's smallest nonzero |a| it bounds every nonzero
         product from below (a product is at least the exact product of the two minima, rounding being
         monotone and FLT_MIN a float), so where that bound is FLT_MIN or more the product test is left
         out (N(0,1) data: almost every row group of fp32 and bf16 inputs) */
      double bmin = INFINITY;
      /* the tile's largest |b|, for tile_bounded (kernels that round both products and sums) */
      uint32_t bbits = 0;
      if (vw >= 8 && way != FR_GEN && pr->round && ac->round)
        for (i = l0; i < l1; i++) bbits = umax(bbits, lowp__amax_bits_body(B + (size_t)i * n + j0, j1 - j0));
      if (under)
        for (i = l0; i < l1; i++) {
          double m = min_nonzero(B + (size_t)i * n + j0, j1 - j0);
          bmin = m < bmin ? m : bmin;
        }
      for (i = 0; i < n; i += 4) {
        /* four rows at a time share each load of B (kernels round both products and sums, or neither) */
        long r1 = i + 1 < n ? i + 1 : n - 1, r2 = i + 2 < n ? i + 2 : n - 1, r3 = i + 3 < n ? i + 3 : n - 1;
        float *restrict c0 = C + (size_t)i * n, *restrict c1 = C + (size_t)r1 * n;
        float *restrict c2 = C + (size_t)r2 * n, *restrict c3 = C + (size_t)r3 * n;
        const float *a0 = A + (size_t)i * n, *a1 = A + (size_t)r1 * n, *a2 = A + (size_t)r2 * n,
                    *a3 = A + (size_t)r3 * n;
        int bad;
        long l, j;
        if (r3 != i + 3) { /* a short last group: one row at a time */
          long rr;
          for (rr = i; rr < n; rr++) {
            float *c = C + (size_t)rr * n;
            const float *a = A + (size_t)rr * n;
            int bb = 0;
            for (l = l0; l < l1; l++) {
              const float al = a[l], *b = B + (size_t)l * n;
              for (j = j0; j < j1; j++) {
                float p = al * b[j];
                bb |= UNDER(p);
                if (pr->round) p = FRND(p, p, bb);
                c[j] = ac->round ? FRND(c[j] + p, a, bb) : c[j] + p;
              }
            }
            flags[rr * njb + jb] |= bb;
          }
          continue;
        }
        int test = under;
        if (under) {
          double am = min_nonzero(a0 + l0, l1 - l0), m;
          m = min_nonzero(a1 + l0, l1 - l0), am = m < am ? m : am;
          m = min_nonzero(a2 + l0, l1 - l0), am = m < am ? m : am;
          m = min_nonzero(a3 + l0, l1 - l0), am = m < am ? m : am;
          test = !(am * bmin >= (double)FLT_MIN);
        }
        if (test)
          bad = tile_rows4(c0, c1, c2, c3, a0, a1, a2, a3, B, n, l0, l1, j0, j1, pr, ac, way, 1);
        else {
          long jr = j0;
          if (!pr->round && !ac->round) /* sums of exact products in registers, the rest below */
            jr = vw == 16   ? rb_v16(c0, c1, c2, c3, a0, a1, a2, a3, B, n, l0, l1, j0, j1)
                 : vw == 8 ? rb_v8(c0, c1, c2, c3, a0, a1, a2, a3, B, n, l0, l1, j0, j1)
                           : rb_v4(c0, c1, c2, c3, a0, a1, a2, a3, B, n, l0, l1, j0, j1);
          else if (vw >= 8 && way != FR_GEN && pr->round && ac->round) { /* AVX2, AVX-512; not FR_GEN */
            uint32_t ab = umax(umax(lowp__amax_bits_body(a0 + l0, l1 - l0), lowp__amax_bits_body(a1 + l0, l1 - l0)),
                               umax(lowp__amax_bits_body(a2 + l0, l1 - l0), lowp__amax_bits_body(a3 + l0, l1 - l0)));
            uint32_t cb = umax(umax(lowp__amax_bits_body(c0 + j0, j1 - j0), lowp__amax_bits_body(c1 + j0, j1 - j0)),
                               umax(lowp__amax_bits_body(c2 + j0, j1 - j0), lowp__amax_bits_body(c3 + j0, j1 - j0)));
            if (tile_bounded(ab, bbits, cb, l1 - l0, pr, ac)) {
              tile_rows4_bnd(c0, c1, c2, c3, a0, a1, a2, a3, B, n, l0, l1, j0, j1, pr, ac, way);
              jr = j1;
            }
          }
          bad = jr < j1 ? tile_rows4(c0, c1, c2, c3, a0, a1, a2, a3, B, n, l0, l1, jr, j1, pr, ac, way, 0) : 0;
        }
        /* the flag covers the four rows: each is recomputed if set */
        flags[i * njb + jb] |= bad;
        flags[(i + 1) * njb + jb] |= bad;
        flags[(i + 2) * njb + jb] |= bad;
        flags[(i + 3) * njb + jb] |= bad;
      }
    }
  }
}

#define FT_ARGS float *C, int *flags, const float *A, const float *B, long n, long jb, const frnd_t *pr, const frnd_t *ac
#define FT_PASS C, flags, A, B, n, jb, pr, ac
/* a column tile's three copies: the general rounding, FR_WIDE, and FR_NARROW without the product test */
#define FT_WAYS(SUFFIX, ATTR, VW)                                                                            \
  ATTR static void fast_tile_gen##SUFFIX(FT_ARGS) { fast_tile(FT_PASS, FR_GEN, 1, VW); }                    \
  ATTR static void fast_tile_wide##SUFFIX(FT_ARGS) { fast_tile(FT_PASS, FR_WIDE, 1, VW); }                  \
  ATTR static void fast_tile_narrow##SUFFIX(FT_ARGS) { fast_tile(FT_PASS, FR_NARROW, 0, VW); }
typedef void (*fast_tile_fn)(FT_ARGS);
FT_WAYS(, , 4)
#ifdef MP_X86
FT_WAYS(_avx2, __attribute__((target("avx2"))), 8)
FT_WAYS(_avx512, __attribute__((target("avx512f"))), 16)
#endif
#undef FT_WAYS
#undef FT_PASS
#undef FT_ARGS

/* the copy for this ISA and these roundings: FR_NARROW where products need no test (every product is
   rounded, and rounded that way, or none is: fp32 sums of exact products of such inputs), FR_WIDE where
   both roundings are wide, the general one otherwise */
static fast_tile_fn pick_tile(const frnd_t *pr, const frnd_t *ac, int under) {
  int way = !pr->round && !ac->round ? (under ? FR_GEN : FR_NARROW)
            : pr->round && ac->round && pr->way == ac->way && (pr->way != FR_NARROW || !under) ? pr->way
                                                                                              : FR_GEN;
#ifdef MP_X86
  lowp_isa_t isa = lowp_cpu_isa(0);
  if (isa == LOWP_ISA_AVX512)
    return way == FR_NARROW ? fast_tile_narrow_avx512 : way == FR_WIDE ? fast_tile_wide_avx512 : fast_tile_gen_avx512;
  if (isa == LOWP_ISA_AVX2)
    return way == FR_NARROW ? fast_tile_narrow_avx2 : way == FR_WIDE ? fast_tile_wide_avx2 : fast_tile_gen_avx2;
#endif
  return way == FR_NARROW ? fast_tile_narrow : way == FR_WIDE ? fast_tile_wide : fast_tile_gen;
}

/* C = A B of inputs in; `under` 1 when products of two of in's values may fall below fp32's normal range */
static void fast_gemm(float *C, int *flags, const float *A, const float *B, long n, const frnd_t *pr,
                      const frnd_t *ac, int under) {
  long njb = (n + JB - 1) / JB, jb;
  fast_tile_fn tile = pick_tile(pr, ac, under);
  memset(C, 0, (size_t)n * n * sizeof *C);
  if (!pr->exact || !ac->exact) { /* every output flagged: the reference kernel computes them all */
    for (jb = 0; jb < n * njb; jb++) flags[jb] = 1;
    return;
  }
  memset(flags, 0, (size_t)n * njb * sizeof *flags);
#pragma omp parallel for schedule(static)
  for (jb = 0; jb < njb; jb++) tile(C, flags, A, B, n, jb, pr, ac);
}

typedef enum { K_ALL = 0, K_MIX = 1, K_TC = 2, K_BLAS = 3 } kind_t;

typedef struct {
  char name[64];
  const lowp_format_t *in;
  int fi; /* index of the input format */
  kind_t kind;
  lowp_gemm_acc_cfg_t acc;
  lowp_subject_t subj; /* the registry subject: gemm_acc or gemm_tc with parameters (its method) */
  int open;            /* subj is open */
  frnd_t fp, fa;
  int over;            /* 1: the bounds use oacc (a subject that declares no method: gemm_sgemm) */
  lowp_accum_t oacc;
  double bound[MAXS];  /* on the componentwise backward error (lowp_check_bound), +inf: vacuous */
  double pbound[MAXS]; /* probabilistic, P = 0.99 per entry (cpu kernels) */
  char bname[MAXS][200];
  double uacc;         /* u of the accumulator: the unit of the backward error */
} kernel_t;

/* what is kept per (kernel, size, seed) */
enum { M_FWD_DATA, M_FWD_IN, M_VS32, M_CBWD, M_NBWD_IN, M_NBWD_DATA, M_SPECIAL, M_FALLBACK, M_RMS_DATA, NM };

typedef struct {
  double v[MAXK][MAXS][MAXSEED][NM];
  int have[MAXK][MAXS][MAXSEED];
} meas_t;

/* One work item, a (size, seed) pair: what it measured and counted, as plain
   data. Under mpirun the items are dealt over the ranks and gathered in
   their fixed order (par/par.h); the CSV, the sums and every message of the
   job follow that order, as in one process. */
typedef struct {
  double v[MAXK][NM];
  size_t ent[MAXK];   /* entries measured per kernel */
  int have[MAXK];
  long tinyc[MAXF];   /* head size, first seed: data entries below each format's normal range */
  long fallback, checked, bad;
  int failed;         /* 1: the item stopped; msg says why (empty: nothing to add) */
  char msg[256];
} item_t;

static double fro(const double *x, size_t n) {
  double s = 0;
  size_t i;
  for (i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

/* max |c - x| and ||c - x||_F over finite pairs */
static double diff(const double *c, const double *x, size_t n, double *frob) {
  double m = 0, s = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    double d = c[i] - x[i];
    if (!isfinite(d)) continue;
    d = fabs(d);
    if (d > m) m = d;
    s += d * d;
  }
  if (frob) *frob = sqrt(s);
  return m;
}

/* mean slope over the seeds that have every fitted size, the t-based
   95% half-width (NAN with one seed) and the range of the slopes (lohi[0..1]) */
static void growth(const meas_t *M, const cfg_t *c, int k, int which, long nseeds, int nsz, double *mean,
                   double *half, double *lohi, int *used) {
  double sl[MAXSEED], s = 0, v = 0;
  int q = 0, si;
  long sd;
  for (sd = 0; sd < nseeds; sd++) {
    double x[MAXS], y[MAXS];
    int cnt = 0, ok = 1;
    for (si = 0; si < nsz; si++) {
      if (!M->have[k][si][sd]) { ok = 0; break; }
      x[cnt] = (double)c->sizes[si];
      y[cnt++] = M->v[k][si][sd][which];
    }
    if (!ok || cnt < 2) continue;
    sl[q] = lowp_fit_loglog_slope(x, y, (size_t)cnt);
    if (isfinite(sl[q])) q++;
  }
  *used = q;
  *mean = *half = lohi[0] = lohi[1] = NAN;
  if (q == 0) return;
  lohi[0] = lohi[1] = sl[0];
  for (si = 0; si < q; si++) {
    s += sl[si];
    if (sl[si] < lohi[0]) lohi[0] = sl[si];
    if (sl[si] > lohi[1]) lohi[1] = sl[si];
  }
  *mean = s / q;
  if (q < 2) return;
  for (si = 0; si < q; si++) v += (sl[si] - *mean) * (sl[si] - *mean);
  *half = lowp_t_quantile(0.975, (unsigned)(q - 1)) * sqrt(v / (q - 1)) / sqrt((double)q);
}

/* mean over the seeds measured at size si */
static double mean_at(const meas_t *M, int k, int si, int which, int *cnt) {
  double s = 0;
  int sd, q = 0;
  for (sd = 0; sd < MAXSEED; sd++)
    if (M->have[k][si][sd]) { s += M->v[k][si][sd][which]; q++; }
  if (cnt) *cnt = q;
  return q ? s / q : NAN;
}

/* the range over the seeds measured at size si: lohi[0..1] (NAN when none) */
static void range_at(const meas_t *M, int k, int si, int which, double *lohi) {
  int sd;
  lohi[0] = lohi[1] = NAN;
  for (sd = 0; sd < MAXSEED; sd++)
    if (M->have[k][si][sd]) {
      double v = M->v[k][si][sd][which];
      if (!(v >= lohi[0])) lohi[0] = v; /* NAN compares false: the first value sets both */
      if (!(v <= lohi[1])) lohi[1] = v;
    }
}

/* "mean [min, max]" over the seeds at size si, scaled by 1/unit; the mean alone with one seed */
static const char *spread_cell(char *b, size_t len, const meas_t *M, int k, int si, int which, double unit) {
  int q;
  double m = mean_at(M, k, si, which, &q), lh[2];
  range_at(M, k, si, which, lh);
  if (isnan(m)) snprintf(b, len, "-");
  else if (q < 2 || !isfinite(lh[0]) || !isfinite(lh[1])) snprintf(b, len, "%.3g", m / unit);
  else snprintf(b, len, "%.3g [%.3g, %.3g]", m / unit, lh[0] / unit, lh[1] / unit);
  return b;
}

static void cat(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *dst, size_t len, const char *fmt, ...) {
  size_t used = strlen(dst);
  va_list ap;
  if (used >= len - 1) return;
  va_start(ap, fmt);
  vsnprintf(dst + used, len - used, fmt, ap);
  va_end(ap);
}

/* the problem of kernel k at size n (m rows): its input format; the cpu kernels' outputs in fp64 (as
   their exact references), the tensor-core model's in fp32 (its datapath) */
static lowp_problem_t kernel_problem(const kernel_t *k, long m, long n) {
  return lowp_exp_problem("gemm", 1, (size_t)m, (size_t)n, (size_t)n, k->in,
                          k->kind == K_TC ? &LOWP_FMT_FP32 : &LOWP_FMT_FP64);
}

/* the bounds of kernel k at size n, on the componentwise backward error against its own inputs: the
   bound of its subject's declared method (lowp_check_bound; for gemm_sgemm, which declares none, that of
   cpu-fp32: gamma_n and the probabilistic bound hold for any order of evaluation, Higham 2002 Sec. 3.1
   and Higham & Mary 2019 Thm 3.1), and the probabilistic one for the cpu kernels */
static void kernel_bounds(kernel_t *k, int si, long n) {
  lowp_problem_t p = kernel_problem(k, n, n);
  lowp_check_bound_t b;
  k->pbound[si] = NAN;
  if (lowp_check_bound(&b, &p, &k->subj, k->kind == K_TC ? LOWP_BOUND_MODEL : LOWP_BOUND_GAMMA, 0.99,
                       k->over ? &k->oacc : NULL, NULL, 0) == LOWP_OK) {
    k->bound[si] = b.value;
    snprintf(k->bname[si], sizeof k->bname[si], "%s", b.name);
  } else {
    k->bound[si] = INFINITY;
    snprintf(k->bname[si], sizeof k->bname[si], "none");
  }
  if (k->kind != K_TC &&
      lowp_check_bound(&b, &p, &k->subj, LOWP_BOUND_PROB, 0.99, k->over ? &k->oacc : NULL, NULL, 0) == LOWP_OK)
    k->pbound[si] = b.value;
}

/* curves that lie on an earlier one (read back from their CSVs: within 1% at every size, which a log
   axis cannot separate, e.g. cpu-tf32 on cpu-fp16, the tensor-core model on F-in/fp32-acc) are drawn
   with open circles around the earlier curve's points and "(= X)" in the key */
static void mark_same(const char *outdir, lowp_series_t *sr, int ns, char (*styles)[96]) {
  static char titles[2 * MAXK + 2][200];
  (void)lowp_result_mark_same(outdir, sr, (size_t)ns, 0.01, titles, styles);
}

static const char *cell(char *b, size_t len, double v, const char *fmt) {
  if (isnan(v)) snprintf(b, len, "-");
  else if (isinf(v)) snprintf(b, len, "vacuous");
  else snprintf(b, len, fmt, v);
  return b;
}

/* "1.23 +- 0.04 [1.20, 1.27]": mean, t-based 95% half-width, range of the seeds' slopes */
static const char *slope_cell(char *b, size_t len, double m, double h, const double *lohi, int q) {
  if (!isfinite(m)) snprintf(b, len, "-");
  else if (!isfinite(h)) snprintf(b, len, "%.2f (%d seed, no CI)", m, q);
  else snprintf(b, len, "%.2f +- %.2f [%.2f, %.2f]", m, h, lohi[0], lohi[1]);
  return b;
}

/* --------------------------------------------------------------- run */

static const char *const colors[] = {"#000000", "#1f77b4", "#d62728", "#2ca02c",
                                     "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"};
/* gnuplot's filled point types (square, circle, triangle up, triangle down, diamond, pentagon); the
   open one of each is one less */
static const int pts[8] = {5, 7, 9, 11, 13, 15, 5, 7};

/* the run: what it declares (kernels, sizes, seeds), its buffers and what it measured */
typedef struct {
  cfg_t c;
  kernel_t *ks;
  meas_t *M;
  int nk, bad, fi32;
  long nmax, tot_fallback, tot_checked, tinyc[MAXF];
  size_t nn_max, nit;
  item_t *items;
  int *isi;
  long *isd;
  double *A0, *B0, *Ain, *Bin, *Xd, *C32;
  double *Otc; /* the exact product of the rounded inputs rounded to fp32 (the model's output format) */
  float *Af, *Bf, *Cf;
  int *flags;
  char blas_info[256]; /* OpenBLAS's version and CPU kernel (gemm_sgemm) */
  cJSON *tables, *plots;
} mp_t;

/* the growth exponents and where the tables look */
typedef struct {
  double gm[MAXK][5], gh[MAXK][5], gr[MAXK][5][2]; /* mean, CI half-width, range over the seeds; [4]: RMS */
  int gq[MAXK][5];
  int nsmall, tcpos, head, last;
} growth_t;

/* kernel k's registry subject `name` with "key=value,..." parameters, bound to its problem */
static int open_subject(kernel_t *k, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int open_subject(kernel_t *k, const char *name, const char *fmt, ...) {
  lowp_problem_t p = kernel_problem(k, 1, 1);
  char prm[400], err[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prm, sizeof prm, fmt, ap);
  va_end(ap);
  k->open = lowp_exp_subject(&k->subj, &p, name, prm, err, sizeof err) == LOWP_OK;
  return k->open ? LOWP_OK : LOWP_EUNSUPPORTED;
}

/* a format's name as a kernel parameter: its commas as ';' (kernels/registry_subject.c) */
static const char *pname(char *b, size_t len, const lowp_format_t *f) {
  size_t j;
  snprintf(b, len, "%s", f->name);
  for (j = 0; b[j]; j++)
    if (b[j] == ',') b[j] = ';';
  return b;
}

/* OpenBLAS's sgemm on the fp32 inputs, declared right after cpu-fp32 (k32): it shares its exact products;
   its bounds are cpu-fp32's method's (any order of evaluation) */
static void declare_sgemm(mp_t *S, const kernel_t *k32) {
  kernel_t *k = &S->ks[S->nk];
  *k = *k32;
  memset(&k->subj, 0, sizeof k->subj);
  snprintf(k->name, sizeof k->name, "openblas-sgemm");
  k->kind = K_BLAS;
  k->over = 1;
  k->oacc = k32->subj.accum;
  if (open_subject(k, "gemm_sgemm", "%s", "") != LOWP_OK) return;
  lowp_gemm_sgemm_info(S->blas_info, sizeof S->blas_info);
  S->nk++;
}

/* declare the kernels: cpu-F for every format; F-in/fp32-acc for formats
   narrower than fp32; tc-M-F where the model has a datapath */
static void declare_kernels(mp_t *S) {
  int i, si;
  char fb[128];
  /* cpu-fp32 runs first: the others are compared with its result */
  for (i = 0; i < S->c.nf; i++)
    if (S->c.fs[i].precision == LOWP_FMT_FP32.precision && S->c.fs[i].emin == LOWP_FMT_FP32.emin &&
        S->c.fs[i].emax == LOWP_FMT_FP32.emax) {
      lowp_format_t t = S->c.fs[0];
      int tb = S->c.bigf[0];
      S->c.fs[0] = S->c.fs[i];
      S->c.fs[i] = t;
      S->c.bigf[0] = S->c.bigf[i];
      S->c.bigf[i] = tb;
      S->fi32 = 0;
      break;
    }

  /* kernels: cpu-F for every format; F-in/fp32-acc for formats narrower than fp32; tc-M-F where the
     model has a datapath */
  for (i = 0; i < S->c.nf; i++) {
    kernel_t *k = &S->ks[S->nk++];
    snprintf(k->name, sizeof k->name, "cpu-%s", S->c.fs[i].name);
    k->in = &S->c.fs[i];
    k->fi = i;
    k->kind = K_ALL;
    k->acc.prod = &S->c.fs[i];
    k->acc.acc = &S->c.fs[i];
    k->acc.prod_rnd = k->acc.acc_rnd = LOWP_RND_NE;
    k->acc.order = LOWP_ORDER_RECURSIVE;
    frnd_init(&k->fp, &S->c.fs[i]);
    frnd_init(&k->fa, &S->c.fs[i]);
    k->uacc = lowp_format_u(&S->c.fs[i]);
    (void)open_subject(k, "gemm_acc", "acc=%s,order=recursive,round=rne,prod=acc",
                       pname(fb, sizeof fb, k->in));
    if (i == S->fi32 && S->c.sgemm) declare_sgemm(S, k);
  }
  for (i = 0; i < S->c.nf; i++) {
    kernel_t *k = &S->ks[S->nk];
    if (S->c.fs[i].precision >= LOWP_FMT_FP32.precision) continue;
    snprintf(k->name, sizeof k->name, "%s-in/fp32-acc", S->c.fs[i].name);
    k->in = &S->c.fs[i];
    k->fi = i;
    k->kind = K_MIX;
    k->acc.prod = NULL;
    k->acc.acc = &LOWP_FMT_FP32;
    k->acc.prod_rnd = k->acc.acc_rnd = LOWP_RND_NE;
    k->acc.order = LOWP_ORDER_RECURSIVE;
    frnd_init(&k->fp, &LOWP_FMT_FP32);
    frnd_init(&k->fa, &LOWP_FMT_FP32);
    k->uacc = lowp_format_u(&LOWP_FMT_FP32);
    (void)open_subject(k, "gemm_acc", "acc=fp32,order=recursive,round=rne,prod=exact");
    S->nk++;
  }
  if (S->c.model)
    for (i = 0; i < S->c.nf; i++) {
      kernel_t *k = &S->ks[S->nk];
      k->in = &S->c.fs[i];
      k->kind = K_TC;
      if (open_subject(k, "gemm_tc", "model=%s", S->c.model) != LOWP_OK) continue; /* no datapath */
      snprintf(k->name, sizeof k->name, "tc-%s-%s", S->c.model, S->c.fs[i].name);
      k->fi = i;
      k->uacc = lowp_format_u(&LOWP_FMT_FP32);
      S->nk++;
    }
  for (i = 0; i < S->nk; i++)
    for (si = 0; si < S->c.ns; si++) kernel_bounds(&S->ks[i], si, S->c.sizes[si]);

}

static int alloc_buffers(mp_t *S) {
  size_t it;
  int si;
  long sd;
  int nomem;
  S->A0 = malloc(S->nn_max * sizeof *S->A0);
  S->B0 = malloc(S->nn_max * sizeof *S->B0);
  S->Ain = malloc(S->nn_max * sizeof *S->Ain);
  S->Bin = malloc(S->nn_max * sizeof *S->Bin);
  S->Xd = malloc(S->nn_max * sizeof *S->Xd);
  S->C32 = malloc(S->nn_max * sizeof *S->C32);
  {
    long tn = S->c.model ? (S->c.tcmax < S->nmax ? S->c.tcmax : S->nmax) : 1;
    S->Otc = malloc((size_t)tn * tn * sizeof *S->Otc);
  }
  S->Af = malloc(S->nn_max * sizeof *S->Af);
  S->Bf = malloc(S->nn_max * sizeof *S->Bf);
  S->Cf = malloc(S->nn_max * sizeof *S->Cf);
  S->flags = malloc((size_t)S->nmax * ((S->nmax + JB - 1) / JB) * sizeof *S->flags);
  /* the work items (size, seed), in the order of the sizes, then the seeds */
  for (si = 0; si < S->c.ns; si++) S->nit += (size_t)(S->c.sizes[si] > S->c.big ? S->c.bigseeds : S->c.seeds);
  S->items = calloc(S->nit, sizeof *S->items);
  S->isi = malloc(S->nit * sizeof *S->isi);
  S->isd = malloc(S->nit * sizeof *S->isd);
  nomem = !S->A0 || !S->B0 || !S->Ain || !S->Bin || !S->Xd || !S->C32 || !S->Otc || !S->Af || !S->Bf ||
          !S->Cf || !S->flags || !S->items || !S->isi || !S->isd;
  if (lowp_par_spread() ? lowp_par_max(nomem) > 0 : nomem) {
    if (!lowp_par_spread() || lowp_par_rank() == 0) fprintf(stderr, "lowp run matmul-precision: out of memory\n");
    return 2;
  }
  for (it = 0, si = 0; si < S->c.ns; si++)
    for (sd = 0; sd < (S->c.sizes[si] > S->c.big ? S->c.bigseeds : S->c.seeds); sd++, it++) {
      S->isi[it] = si;
      S->isd[it] = sd;
    }
  return 0;
}

static void free_buffers(mp_t *S) {
  int i;
  free(S->A0); free(S->B0); free(S->Ain); free(S->Bin); free(S->Xd); free(S->C32); free(S->Otc);
  free(S->Af); free(S->Bf); free(S->Cf); free(S->flags); free(S->items); free(S->isi); free(S->isd);
  for (i = 0; S->ks && i < MAXK; i++)
    if (S->ks[i].open) lowp_subject_close(&S->ks[i].subj);
  free(S->ks); free(S->M);
}

/* one work item (size, seed) as it is measured */
typedef struct {
  long n, njb, sd;
  size_t nn;
  int si, withabs, tc_here;
  double nA0, nB0, nA, nB;
  lowp_rng_t g;
  item_t *I;
  const lowp_check_result_t *ref; /* the current format's first result: its exact product (and |A||B|) */
  int have_xd;                    /* S->Xd holds this item's exact product of the data */
} ictx_t;

/* data: fp32 N(0,1), one stream per (seed, size) */
static void item_data(lowp_run_t *r, mp_t *S, ictx_t *X) {
  long j;
  size_t nn = X->nn;
  int fi;
  lowp_rng_init(&X->g, r->seed, (uint32_t)(X->sd * MAXS + X->si));
  for (j = 0; j < (long)nn; j++) { /* the draws in the same order, rounded below */
    S->A0[j] = lowp_rng_normal(&X->g);
    S->B0[j] = lowp_rng_normal(&X->g);
  }
  (void)lowp_round_array_f64(S->A0, S->A0, nn, &LOWP_FMT_FP32, NULL, LOWP_RND_NE); /* fp32: cannot fail */
  (void)lowp_round_array_f64(S->B0, S->B0, nn, &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
  X->nA0 = fro(S->A0, nn);
  X->nB0 = fro(S->B0, nn);
  if (X->si == S->c.head && X->sd == 0) /* data entries below each format's normal range, for the answer */
    for (fi = 0; fi < S->c.nf; fi++) {
      double xm = lowp_format_xmin(&S->c.fs[fi]);
      X->I->tinyc[fi] = 0;
      for (j = 0; j < (long)nn; j++) X->I->tinyc[fi] += (fabs(S->A0[j]) < xm) + (fabs(S->B0[j]) < xm);
    }
}

static void kernel_metrics(mp_t *S, ictx_t *X, int i, int fi, const lowp_check_result_t *res, long fb);

/* a registry subject that runs itself (gemm_tc, gemm_sgemm) on the whole product, measured by the
   pipeline on the format's exact references (lowp_check_measure_same); the tensor-core model's problem
   has fp32 outputs, so its exact result rounded once is the exact product rounded to fp32 */
static int kernel_same(mp_t *S, ictx_t *X, int i, int fi) {
  kernel_t *k = &S->ks[i];
  lowp_check_result_t ref = *X->ref, res; /* a shallow copy: the arrays stay the format's */
  lowp_check_inputs_t in;
  int st;
  memset(&in, 0, sizeof in);
  if (k->kind == K_TC) {
    ref.problem = kernel_problem(k, X->n, X->n);
    /* the array path: lowp_round_f64's bits, element by element (format.h), on vectors */
    (void)lowp_round_array_f64(S->Otc, ref.out[0].exact, X->nn, &ref.problem.out, NULL, LOWP_RND_NE);
    ref.out[0].exact_out = S->Otc;
  }
  in.n = 2;
  in.x[0] = S->Ain; /* borrowed, not freed */
  in.x[1] = S->Bin;
  in.count[0] = in.count[1] = X->nn;
  st = lowp_check_measure_same(&res, &ref, &k->subj, &in, NULL, X->I->msg, sizeof X->I->msg);
  if (st != LOWP_OK) {
    lowp_check_result_free(&res);
    snprintf(X->I->msg, sizeof X->I->msg, "kernel %s failed: %s", k->name, lowp_status_str(st));
    return st;
  }
  kernel_metrics(S, X, i, fi, &res, 0);
  lowp_check_result_free(&res);
  return LOWP_OK;
}

/* the emulation of a cpu kernel as the pipeline's subject: the registry subject's declared method
   (gemm_acc with its parameters), its bits computed by fast_gemm; outputs flagged (a product below fp32's
   normal range, a result beyond F's) recomputed by the reference kernel; `check` random entries compared with it */
typedef struct {
  mp_t *S;
  ictx_t *X;
  int i;
  long fb; /* outputs recomputed by the reference kernel */
} emul_t;

static int emul_run(const lowp_subject_t *s, double *const *out, const double *const *in,
                    const lowp_problem_t *p, char *err, size_t errlen) {
  emul_t *E = s->ctx;
  mp_t *S = E->S;
  ictx_t *X = E->X;
  const kernel_t *k = &S->ks[E->i];
  double *C = out[0];
  long n = X->n, q;
  size_t nn = X->nn, e;
  (void)in; (void)p; (void)err; (void)errlen;
  frnd_t fin; /* the inputs' format: may their products fall below fp32's normal range? */
  frnd_init(&fin, k->in);
  fast_gemm(S->Cf, S->flags, S->Af, S->Bf, n, &k->fp, &k->fa, fin.under);
  for (q = 0; q < n * X->njb; q++)
    if (S->flags[q]) {
      long ii = q / X->njb, jb = q % X->njb, jj;
      for (jj = jb * JB; jj < (jb + 1) * JB && jj < n; jj++) {
        double y;
        if (lowp_dot_acc_ref(&y, &S->Ain[(size_t)ii * n], 1, &S->Bin[jj], (size_t)n, (size_t)n, 0.0, &k->acc) != LOWP_OK) return LOWP_EINVAL;
        S->Cf[(size_t)ii * n + jj] = (float)y;
        E->fb++;
      }
    }
  for (e = 0; e < nn; e++) C[e] = (double)S->Cf[e];
  for (q = 0; q < S->c.check; q++) {
    size_t ii = (size_t)(lowp_rng_uniform(&X->g) * (double)n), jj = (size_t)(lowp_rng_uniform(&X->g) * (double)n);
    double y;
    if (ii >= (size_t)n) ii = (size_t)n - 1;
    if (jj >= (size_t)n) jj = (size_t)n - 1;
    if (lowp_dot_acc_ref(&y, &S->Ain[ii * n], 1, &S->Bin[jj], (size_t)n, (size_t)n, 0.0, &k->acc) != LOWP_OK) return LOWP_EINVAL;
    X->I->checked++;
    if (!(y == C[ii * n + jj] || (isnan(y) && isnan(C[ii * n + jj])))) {
      fprintf(stderr, "lowp run matmul-precision: %s at n = %ld (%zu, %zu): emulation %.9g, "
              "kernels/cpu/gemm_acc %.9g\n", k->name, n, ii, jj, C[ii * n + jj], y);
      X->I->bad++;
    }
  }
  return LOWP_OK;
}

/* an emulated kernel measured: the first of a format by lowp_check_measure (the exact product of its
   inputs, |A||B| where withabs; with data, the exact product of the data too), the others on the same
   references (lowp_check_measure_same); res is filled (freed by the caller) */
static int emul_measure(lowp_check_result_t *res, mp_t *S, ictx_t *X, int i, long *fb, int with_data) {
  kernel_t *k = &S->ks[i];
  lowp_problem_t p = kernel_problem(k, X->n, X->n);
  lowp_subject_t es = k->subj; /* the declaration, with the emulation's run */
  lowp_check_inputs_t in;
  lowp_check_opts_t o;
  emul_t E;
  int st;
  memset(&in, 0, sizeof in);
  memset(&o, 0, sizeof o);
  E.S = S; E.X = X; E.i = i; E.fb = 0;
  es.run = emul_run;
  es.ctx = &E;
  es.release = NULL;
  in.n = 2;
  in.x[0] = S->Ain; /* borrowed, not freed */
  in.x[1] = S->Bin;
  in.data[0] = with_data ? S->A0 : NULL;
  in.data[1] = with_data ? S->B0 : NULL;
  in.count[0] = in.count[1] = X->nn;
  o.no_absab = !X->withabs;
  st = X->ref ? lowp_check_measure_same(res, X->ref, &es, &in, &o, X->I->msg, sizeof X->I->msg)
              : lowp_check_measure(res, &p, &es, &in, &o, X->I->msg, sizeof X->I->msg);
  *fb = E.fb;
  if (st != LOWP_OK && !X->I->msg[0])
    snprintf(X->I->msg, sizeof X->I->msg, "kernel %s failed: %s", k->name, lowp_status_str(st));
  return st;
}

/* the metrics of a kernel's result (its got, its exact product) */
static void kernel_metrics(mp_t *S, ictx_t *X, int i, int fi, const lowp_check_result_t *res, long fb) {
  kernel_t *k = &S->ks[i];
  const lowp_check_output_t *o = &res->out[0];
  double *v = X->I->v[i], fro_in, fro_d;
  size_t nn = X->nn;
  X->I->fallback += fb;
  if (k->kind == K_ALL && fi == S->fi32) memcpy(S->C32, o->got, nn * sizeof *S->C32);
  v[M_FWD_IN] = diff(o->got, o->exact, nn, &fro_in);
  v[M_FWD_DATA] = diff(o->got, S->Xd, nn, &fro_d);
  v[M_VS32] = S->fi32 >= 0 ? diff(o->got, S->C32, nn, NULL) : NAN;
  v[M_CBWD] = X->withabs ? o->err.max_bwd : NAN;
  v[M_SPECIAL] = (double)o->err.n_special;
  v[M_NBWD_IN] = fro_in / (X->nA * X->nB);
  v[M_NBWD_DATA] = fro_d / (X->nA0 * X->nB0);
  v[M_FALLBACK] = (double)fb;
  v[M_RMS_DATA] = fro_d / sqrt((double)nn); /* the RMS error over the n^2 entries: a light-tailed statistic beside the max */
  X->I->ent[i] = nn;
}

/* one kernel of input format fi: measured (the first one keeps its result as the format's reference) */
static int item_kernel(lowp_run_t *r, mp_t *S, ictx_t *X, int i, int fi, lowp_check_result_t *first) {
  kernel_t *k = &S->ks[i];
  const double *v = X->I->v[i];
  lowp_check_result_t res;
  long fb = 0;
  int st, with_data = !X->ref && S->fi32 < 0 && !X->have_xd;
  lowp_run_progress(r, "n = %ld, seed %ld: %s%s", X->n, X->sd, k->name,
                    X->ref ? "" : " and the exact product of its inputs");
  if (k->kind == K_TC || k->kind == K_BLAS) {
    if ((st = kernel_same(S, X, i, fi)) != LOWP_OK) return st;
  } else {
    lowp_check_result_t *R = X->ref ? &res : first;
    if ((st = emul_measure(R, S, X, i, &fb, with_data)) != LOWP_OK) {
      if (R == &res) lowp_check_result_free(&res);
      return st;
    }
    if (!X->ref) { /* the format's exact product (of fp32 data: the exact product of the data) */
      if (fi == S->fi32) memcpy(S->Xd, R->out[0].exact, X->nn * sizeof *S->Xd);
      if (with_data) memcpy(S->Xd, R->out[0].exact_data, X->nn * sizeof *S->Xd);
      X->have_xd = 1;
      X->ref = first;
    }
    kernel_metrics(S, X, i, fi, R, fb);
    if (R == &res) lowp_check_result_free(&res);
  }
  X->I->have[i] = 1;
  if (isfinite(k->bound[X->si]) && !isnan(v[M_CBWD]) && !(v[M_CBWD] <= k->bound[X->si])) {
    fprintf(stderr, "lowp run matmul-precision: %s at n = %ld: backward error %.3g above its bound %.3g (%s)\n",
            k->name, X->n, v[M_CBWD], k->bound[X->si], k->bname[X->si]);
    X->I->bad++;
  }
  return LOWP_OK;
}

/* one input format: its rounded inputs, its kernels on the pipeline (one exact product, and |A||B|,
   for all of them) */
static int item_format(lowp_run_t *r, mp_t *S, ictx_t *X, int fi) {
  const lowp_format_t *F = &S->c.fs[fi];
  lowp_check_result_t first;
  size_t nn = X->nn, j;
  int i, st = LOWP_OK;
  /* the array rounding: lowp_round_f64's values, on its vector path (one call per element was 2.5% of
     the experiment's samples at AVX2) */
  if (lowp_round_array_f64(S->Ain, S->A0, nn, F, NULL, LOWP_RND_NE) != LOWP_OK ||
      lowp_round_array_f64(S->Bin, S->B0, nn, F, NULL, LOWP_RND_NE) != LOWP_OK) {
    snprintf(X->I->msg, sizeof X->I->msg, "rounding to %s failed", F->name);
    return LOWP_EFORMAT;
  }
  for (j = 0; j < nn; j++) {
    S->Af[j] = (float)S->Ain[j];
    S->Bf[j] = (float)S->Bin[j];
  }
  X->nA = fro(S->Ain, nn);
  X->nB = fro(S->Bin, nn);
  X->ref = NULL;
  memset(&first, 0, sizeof first);
  for (i = 0; i < S->nk && st == LOWP_OK; i++) {
    const kernel_t *k = &S->ks[i];
    if (k->fi != fi) continue;
    if (k->kind == K_TC && !X->tc_here) continue;
    st = item_kernel(r, S, X, i, fi, &first);
  }
  lowp_check_result_free(&first);
  X->ref = NULL;
  return st;
}

/* one work item: its data, then each format (the exact product of the data: fp32's, or with the
   first format measured) */
static int measure_item(lowp_run_t *r, mp_t *S, size_t it) {
  ictx_t X;
  int fi;
  memset(&X, 0, sizeof X);
  X.I = &S->items[it];
  X.si = S->isi[it];
  X.sd = S->isd[it];
  X.n = S->c.sizes[X.si];
  X.nn = (size_t)X.n * X.n;
  X.njb = (X.n + JB - 1) / JB;
  X.withabs = X.n <= S->c.big || S->c.bigabs;
  X.tc_here = S->c.model && X.n <= S->c.tcmax && X.withabs;
  item_data(r, S, &X);
  for (fi = 0; fi < S->c.nf; fi++) {
    int st;
    if (X.n > S->c.big && !S->c.bigf[fi] && fi != S->fi32) continue;
    if ((st = item_format(r, S, &X, fi)) != LOWP_OK) return st;
  }
  return LOWP_OK;
}

/* the items are independent (each has its own random stream): under mpirun each rank computes its share
   (lowp_par_mine) and every rank then holds them all (par/par.h); a rank stops at its first failed item */
static void measure_items(lowp_run_t *r, mp_t *S) {
  size_t it;
  int failed_here = 0;
  for (it = 0; it < S->nit; it++) {
    if (!lowp_par_mine(it) || failed_here) continue; /* another rank's item, or this rank failed */
    if (measure_item(r, S, it) != LOWP_OK) { /* the item's failure travels with it; this rank computes no more */
      S->items[it].failed = 1;
      failed_here = 1;
    }
  }
}

/* gather the items and write errors.csv in their order */
static int write_errors(lowp_run_t *r, mp_t *S) {
  FILE *csv;
  size_t it;
  int i, si;
  long sd;
  if (lowp_par_allgather_items(S->items, S->nit, sizeof *S->items) != 0) {
    fprintf(stderr, "lowp run matmul-precision: gathering the work items from the MPI ranks failed\n");
    return 2;
  }
  /* every rank holds every item: all agree on the first failure, rank 0 says it */
  for (it = 0; it < S->nit; it++)
    if (S->items[it].failed) {
      if (S->items[it].msg[0] && (!lowp_par_spread() || lowp_par_rank() == 0))
        fprintf(stderr, "lowp run matmul-precision: %s\n", S->items[it].msg);
      return 2;
    }

  csv = fopen(lowp_run_path(r, "errors.csv"), "w");
  if (!csv) { fprintf(stderr, "lowp run matmul-precision: cannot write errors.csv\n"); return 2; }
  fprintf(csv, "n,seed,kernel,input,entries,max_err_vs_exact_data,max_err_vs_exact_inputs,max_diff_vs_cpu_fp32,"
          "comp_bwd,comp_bwd_in_u_acc,bound,bound_name,norm_bwd_vs_inputs,norm_bwd_vs_data,nonfinite,"
          "recomputed_by_reference\n");
  /* the items in their order, the kernels of each input format in turn: the one-process rows */
  for (it = 0; it < S->nit; it++) {
    const item_t *I = &S->items[it];
    int fi;
    long n;
    si = S->isi[it];
    sd = S->isd[it];
    n = S->c.sizes[si];
    if (si == S->c.head && sd == 0) memcpy(S->tinyc, I->tinyc, sizeof S->tinyc);
    S->tot_fallback += I->fallback;
    S->tot_checked += I->checked;
    S->bad += (int)I->bad;
    for (fi = 0; fi < S->c.nf; fi++)
      for (i = 0; i < S->nk; i++) {
        const kernel_t *k = &S->ks[i];
        const double *v = I->v[i];
        if (k->fi != fi || !I->have[i]) continue;
        memcpy(S->M->v[i][si][sd], v, sizeof I->v[i]);
        S->M->have[i][si][sd] = 1;
        fprintf(csv, "%ld,%ld,%s,%s,%zu,%.6e,%.6e,%.6e,%.6e,%.6g,%.6e,\"%s\",%.6e,%.6e,%.0f,%.0f\n", n, sd, k->name,
                k->in->name, I->ent[i], v[M_FWD_DATA], v[M_FWD_IN], v[M_VS32], v[M_CBWD], v[M_CBWD] / k->uacc,
                k->bound[si], k->bname[si], v[M_NBWD_IN], v[M_NBWD_DATA], v[M_SPECIAL], v[M_FALLBACK]);
      }
  }
  fclose(csv);

  return 0;
}

static void growth_all(mp_t *S, growth_t *G) {
  static const int which[3] = {M_FWD_DATA, M_CBWD, M_NBWD_IN};
  int i, si, nseed_small = (int)S->c.seeds, ntc = 0;
  G->nsmall = 0;
  G->tcpos = -1;
  G->head = S->c.head;
  G->last = S->c.ns - 1;
  for (si = 0; si < S->c.ns; si++) {
    if (S->c.sizes[si] <= S->c.big) G->nsmall = si + 1;
    if (S->c.model && S->c.sizes[si] <= S->c.tcmax) G->tcpos = si;
    if (S->c.sizes[si] <= S->c.big && S->c.sizes[si] <= S->c.tcmax) ntc = si + 1;
  }
  for (i = 0; i < S->nk; i++) {
    int w, tc = S->ks[i].kind == K_TC; /* the tensor-core model: over the sizes it ran at */
    for (w = 0; w < 3; w++)
      growth(S->M, &S->c, i, which[w], nseed_small, tc ? ntc : G->nsmall, &G->gm[i][w], &G->gh[i][w],
             G->gr[i][w], &G->gq[i][w]);
    growth(S->M, &S->c, i, M_FWD_DATA, S->c.bigseeds, S->c.ns, &G->gm[i][3], &G->gh[i][3], G->gr[i][3],
           &G->gq[i][3]);
    growth(S->M, &S->c, i, M_RMS_DATA, nseed_small, tc ? ntc : G->nsmall, &G->gm[i][4], &G->gh[i][4], G->gr[i][4],
           &G->gq[i][4]);
  }
}

/* the F-in/fp32-acc kernel of kernel i's input format, or -1 */
static int mix_of(const mp_t *S, int i) {
  int q;
  for (q = 0; q < S->nk; q++)
    if (S->ks[q].kind == K_MIX && S->ks[q].fi == S->ks[i].fi) return q;
  return -1;
}

/* tables at the exercise's size and at the largest, and the growth table */
static void render_tables(mp_t *S, const growth_t *G) {
  int i, hs;
  char t1[256], b[9][96];
  const char *cols1[] = {"kernel", "max |C - exact(data)|", "max |C - exact(rounded inputs)|",
                         "max |C - C_cpu-fp32|", "componentwise backward error (u of the accumulator)",
                         "its bound (u of the accumulator)", "probabilistic bound, P = 0.99 per entry (u)",
                         "normwise backward error vs inputs", "normwise backward error vs data"};
  const char *cols3[] = {"kernel", "max |C - exact(data)| ~ n^a", "componentwise backward error ~ n^a",
                         "normwise backward error ~ n^a", "max |C - exact(data)| ~ n^a, every size",
                         "RMS |C - exact(data)| ~ n^a (over the n^2 entries)"};
  int head = G->head, last = G->last, nsmall = G->nsmall;
  cJSON *rows;
  for (hs = 0; hs < 2; hs++) {
    int at = hs ? last : head, cnt = 0;
    if (hs && last == head) break;
    (void)mean_at(S->M, 0, at, M_FWD_DATA, &cnt);
    snprintf(t1, sizeof t1, "n = %ld, every entry of the %ld x %ld product; fp32 N(0,1) data; mean [min, max] over "
             "%d seed%s", S->c.sizes[at], S->c.sizes[at], S->c.sizes[at], cnt, cnt == 1 ? "" : "s");
    rows = lowp_result_table(S->tables, t1, cols1, 9);
    for (i = 0; i < S->nk; i++) {
      const char *cells[9];
      int q;
      double u = S->ks[i].uacc;
      (void)mean_at(S->M, i, at, M_FWD_DATA, &q);
      if (!q) continue;
      cells[0] = S->ks[i].name;
      cells[1] = spread_cell(b[1], sizeof b[1], S->M, i, at, M_FWD_DATA, 1);
      cells[2] = spread_cell(b[2], sizeof b[2], S->M, i, at, M_FWD_IN, 1);
      cells[3] = spread_cell(b[3], sizeof b[3], S->M, i, at, M_VS32, 1);
      cells[4] = spread_cell(b[4], sizeof b[4], S->M, i, at, M_CBWD, u);
      cells[5] = cell(b[5], sizeof b[5], S->ks[i].bound[at] / u, "%.4g");
      cells[6] = cell(b[6], sizeof b[6], S->ks[i].pbound[at] / u, "%.4g");
      cells[7] = spread_cell(b[7], sizeof b[7], S->M, i, at, M_NBWD_IN, 1);
      cells[8] = spread_cell(b[8], sizeof b[8], S->M, i, at, M_NBWD_DATA, 1);
      lowp_result_add_row(rows, cells, 9);
    }
  }
  snprintf(t1, sizeof t1, "Growth with n: least-squares slope of log(error) on log(n) per seed; mean +- t-based 95%% "
           "half-width [range] over %ld seeds, n = %ld..%ld (tensor-core model: up to n = %ld; last column: n = "
           "%ld..%ld, %ld seed%s)", S->c.seeds, S->c.sizes[0], S->c.sizes[nsmall ? nsmall - 1 : 0], S->c.tcmax,
           S->c.sizes[0], S->c.sizes[last], S->c.bigseeds, S->c.bigseeds == 1 ? "" : "s");
  rows = lowp_result_table(S->tables, t1, cols3, 6);
  for (i = 0; i < S->nk; i++) {
    const char *cells[6];
    int w;
    cells[0] = S->ks[i].name;
    for (w = 0; w < 4; w++)
      cells[w + 1] = slope_cell(b[w + 1], sizeof b[w + 1], G->gm[i][w], G->gh[i][w], G->gr[i][w], G->gq[i][w]);
    cells[5] = slope_cell(b[0], sizeof b[0], G->gm[i][4], G->gh[i][4], G->gr[i][4], G->gq[i][4]);
    lowp_result_add_row(rows, cells, 6);
  }
}

/* the largest error of kernel i at size si: "mean [min, max]" into b */
static const char *err_at(char *b, size_t len, const mp_t *S, int i, int si) {
  return spread_cell(b, len, S->M, i, si, M_FWD_DATA, 1);
}

/* "name mean [min, max], " for every kernel of kind mask measured at size si */
static void list_errors(const mp_t *S, int si, unsigned kinds, char *ans, size_t alen) {
  int i, q;
  char b[96];
  for (i = 0; i < S->nk; i++) {
    (void)mean_at(S->M, i, si, M_FWD_DATA, &q);
    if (q && (kinds >> S->ks[i].kind & 1u)) cat(ans, alen, "%s %s, ", S->ks[i].name, err_at(b, sizeof b, S, i, si));
  }
}

/* the all-F kernel of format name, or -1 */
static int all_of(const mp_t *S, const char *name) {
  int i;
  for (i = 0; i < S->nk; i++)
    if (S->ks[i].kind == K_ALL && !strcmp(S->ks[i].in->name, name)) return i;
  return -1;
}

/* the answer's first sentence (the one the report's index shows): the exercise's three formats in brief */
static void answer_lead(const mp_t *S, const growth_t *G, char *ans, size_t alen) {
  int a = all_of(S, "fp32"), h = all_of(S, "fp16"), b = all_of(S, "bf16"), head = G->head;
  double ea, eh, eb;
  if (a < 0 || h < 0 || b < 0) return;
  ea = mean_at(S->M, a, head, M_FWD_DATA, NULL);
  eh = mean_at(S->M, h, head, M_FWD_DATA, NULL);
  eb = mean_at(S->M, b, head, M_FWD_DATA, NULL);
  {
    /* what GPU libraries do by default: 16-bit inputs, fp32 accumulation (cuBLAS, PyTorch's matmul on GPUs) */
    int mh = mix_of(S, h);
    char dflt[200] = "";
    if (mh >= 0)
      snprintf(dflt, sizeof dflt, " (with fp16 inputs and fp32 accumulation, GPU libraries' default, %.3g times)",
               mean_at(S->M, mh, head, M_FWD_DATA, NULL) / ea);
    cat(ans, alen, "With every product and sum in the format, the largest elementwise error of a %ld x %ld product "
        "is %.3g times fp32's in fp16%s and %.3g times fp16's in bf16, and it grows like n^%.2f (fp32), n^%.2f (fp16) "
        "and n^%.2f (bf16) over n = %ld..%ld. ", S->c.sizes[head],
        S->c.sizes[head], eh / ea, dflt, eb / eh, G->gm[a][0], G->gm[h][0], G->gm[b][0], S->c.sizes[0],
        S->c.sizes[G->nsmall ? G->nsmall - 1 : 0]);
  }
}

/* the answer, from the numbers: the errors at the exercise's size (mean and range over the seeds), the two
   references, input rounding */
static void answer_errors(lowp_run_t *r, mp_t *S, const growth_t *G, char *ans, size_t alen) {
  int i, hs, ls, head = G->head, last = G->last;
  ans[0] = '\0';
  ls = 0;
  (void)mean_at(S->M, 0, head, M_FWD_DATA, &hs);
  (void)mean_at(S->M, 0, last, M_FWD_DATA, &ls);
  answer_lead(S, G, ans, alen);
  cat(ans, alen, "At n = %ld the largest elementwise error against the exact product of the fp32 data (every "
      "entry measured; mean [min, max] over %d seed%s) is ", S->c.sizes[head], hs, hs == 1 ? "" : "s");
  list_errors(S, head, 1u << K_ALL | 1u << K_BLAS | 1u << K_MIX | 1u << K_TC, ans, alen);
  if (last != head) {
    if (S->c.sizes[last] > S->c.big)
      cat(ans, alen, "and at n = %ld (%d seed%s and only %s above n = %ld, for the time budget) ",
          S->c.sizes[last], ls, ls == 1 ? "" : "s", lowp_run_param(r, "bigformats"), S->c.big);
    else
      cat(ans, alen, "and at n = %ld (%d seed%s) ", S->c.sizes[last], ls, ls == 1 ? "" : "s");
    list_errors(S, last, 1u << K_ALL | 1u << K_BLAS | 1u << K_MIX | 1u << K_TC, ans, alen);
  }
  ans[strlen(ans) - 2] = '.';
  ans[strlen(ans) - 1] = ' ';
  if (S->fi32 >= 0) {
    double worst = 0, e32 = mean_at(S->M, 0, head, M_FWD_DATA, NULL);
    for (i = 1; i < S->nk; i++) {
      double d = fabs(mean_at(S->M, i, head, M_VS32, NULL) - mean_at(S->M, i, head, M_FWD_DATA, NULL));
      if (S->ks[i].kind == K_BLAS) continue; /* depends on the CPU: its own sentence (answer_blas) */
      if (d > worst) worst = d;
    }
    cat(ans, alen, "Measured against cpu-fp32 instead (the exercise's second reference) the errors of lowp's "
        "kernels move by at most %.3g, %s cpu-fp32's own error %.3g: that comparison cannot rank anything closer "
        "to exact than fp32. ", worst, worst <= e32 ? "within" : "more than", e32);
  }
  /* input rounding against accumulation */
  for (i = 0; i < S->nk; i++) {
    int q = mix_of(S, i);
    if (S->ks[i].kind != K_ALL || q < 0) continue;
    {
      double ea = mean_at(S->M, i, head, M_FWD_DATA, NULL), em = mean_at(S->M, q, head, M_FWD_DATA, NULL);
      double acc = mean_at(S->M, q, head, M_FWD_IN, NULL);
      cat(ans, alen, "%s inputs: rounding the inputs alone (%s) gives %.3g, while its error against "
          "the exact product of the rounded inputs (the fp32 accumulation alone) is %.2g; accumulating in %s too "
          "multiplies the error by %.1f. ", S->ks[i].in->name, S->ks[q].name, em, acc, S->ks[i].in->name, ea / em);
    }
  }
}

/* the answer: OpenBLAS's sgemm beside the recursive fp32 kernel; PyTorch's CPU bf16 matmul (reports/pytorch-cpu) */
static void answer_blas(mp_t *S, const growth_t *G, char *ans, size_t alen) {
  int i, k32 = -1, kb = -1, kbf = -1, mbf, head = G->head;
  char b1[96], b2[96], b3[96], b4[96];
  for (i = 0; i < S->nk; i++) {
    if (S->ks[i].kind == K_BLAS) kb = i;
    if (S->ks[i].kind == K_ALL && S->ks[i].fi == S->fi32) k32 = i;
    if (S->ks[i].kind == K_ALL && !strcmp(S->ks[i].in->name, "bf16")) kbf = i;
  }
  if (kb >= 0 && k32 >= 0) {
    double eb = mean_at(S->M, kb, head, M_FWD_DATA, NULL), e32 = mean_at(S->M, k32, head, M_FWD_DATA, NULL);
    double vs32 = 0; /* the largest difference from cpu-fp32 over every size and seed measured */
    int si, sd;
    char how[600];
    for (si = 0; si < S->c.ns; si++)
      for (sd = 0; sd < MAXSEED; sd++)
        if (S->M->have[kb][si][sd] && S->M->v[kb][si][sd][M_VS32] > vs32) vs32 = S->M->v[kb][si][sd][M_VS32];
    /* one sentence whatever the CPU (lowp report --diff aligns sentences): which order the kernel OpenBLAS picked
       for this CPU follows is read from the numbers, never assumed */
    if (vs32 == 0)
      snprintf(how, sizeof how, "the same bits as the recursive cpu-fp32 on every entry at every size measured: "
               "the kernel OpenBLAS picks for this CPU rounds each output like one chain of n products and "
               "additions, so its blocking gains nothing here (a kernel that adds in panels, as other CPUs' do, "
               "errs less, as the blocked-summation bound gamma_{(b-1) + (n/b-1)} against gamma_n suggests: "
               "Higham 2002, Sec. 4.2; Blanchard, Higham & Mary 2020)");
    else if (eb <= e32)
      snprintf(how, sizeof how, "%.3g times less, and differs from it by up to %.3g: it adds each output's products "
               "in its own blocked order (the k loop in panels), so a term meets fewer roundings than in one chain of "
               "n rounded products and additions, as the blocked-summation bound gamma_{(b-1) + (n/b-1)} against "
               "gamma_n suggests (Higham 2002, Sec. 4.2; Blanchard, Higham & Mary 2020)", e32 / eb, vs32);
    else
      snprintf(how, sizeof how, "%.3g times more, and differs from it by up to %.3g: its own blocked order (the k "
               "loop in panels) does not lower the error at these sizes", eb / e32, vs32);
    cat(ans, alen, "An optimized fp32 BLAS on the same fp32 inputs, OpenBLAS's cblas_sgemm (%s; one thread), "
        "errs by %s at n = %ld against %s for the recursive cpu-fp32, %s; its error grows like n^%.2f against "
        "n^%.2f, and its componentwise backward error is %s u of fp32 against cpu-fp32's %s, both within gamma_n, "
        "which holds for any order. ",
        S->blas_info, err_at(b1, sizeof b1, S, kb, head), S->c.sizes[head], err_at(b2, sizeof b2, S, k32, head),
        how, G->gm[kb][0], G->gm[k32][0],
        spread_cell(b3, sizeof b3, S->M, kb, head, M_CBWD, S->ks[kb].uacc),
        spread_cell(b4, sizeof b4, S->M, k32, head, M_CBWD, S->ks[k32].uacc));
  }
  if (kbf >= 0 && (mbf = mix_of(S, kbf)) >= 0)
    cat(ans, alen, "PyTorch's CPU bf16 matmul (Debian's PyTorch 1.13.1, measured by lowp check in "
        "reports/pytorch-cpu/README.md) is bit for bit lowp's gemm_acc acc=bf16,prod=bf16 in order k = 0, 1, ...: "
        "the cpu-bf16 kernel here, which accumulates in bf16, so a bf16 a @ b there errs like cpu-bf16 (%s at "
        "n = %ld), not like bf16 inputs with fp32 accumulation (bf16-in/fp32-acc, %s). ",
        err_at(b1, sizeof b1, S, kbf, head), S->c.sizes[head], err_at(b2, sizeof b2, S, mbf, head));
}

/* equal precision, different range: the same significand rounding (cpu-tf32 and cpu-fp16) */
static void answer_equal(mp_t *S, int head, char *ans, size_t alen) {
  int i, q;
  for (i = 0; i < S->nk; i++)
    for (q = i + 1; q < S->nk; q++)
      if (S->ks[i].kind == K_ALL && S->ks[q].kind == K_ALL && S->ks[i].in->precision == S->ks[q].in->precision) {
        double a = mean_at(S->M, i, head, M_FWD_DATA, NULL), b = mean_at(S->M, q, head, M_FWD_DATA, NULL);
        const lowp_format_t *nr = S->ks[i].in->emin > S->ks[q].in->emin ? S->ks[i].in : S->ks[q].in;
        int fn = S->ks[i].in->emin > S->ks[q].in->emin ? S->ks[i].fi : S->ks[q].fi;
        double nd = 2.0 * (double)S->c.sizes[head] * (double)S->c.sizes[head];
        if (a == b)
          cat(ans, alen, "%s and %s give the same largest error at n = %ld", S->ks[i].name, S->ks[q].name,
              S->c.sizes[head]);
        else
          cat(ans, alen, "%s and %s differ by %.2g%% at n = %ld", S->ks[i].name, S->ks[q].name,
              100 * fabs(a - b) / (a > b ? a : b), S->c.sizes[head]);
        cat(ans, alen, ": both keep %d significand bits (u = 2^-%d) in every product and sum, and differ "
            "only in exponent range (%s: 2^%d..2^%d, %s: 2^%d..2^%d), which these data reach only through "
            "the %ld of %.0f inputs (%.3g%%) below %s's smallest normal 2^%d (and products below it). tf32 as "
            "GPUs use it is tf32 inputs with fp32 accumulation: tf32-in/fp32-acc and the tensor-core model. ",
            S->ks[i].in->precision, S->ks[i].in->precision, S->ks[i].in->name, S->ks[i].in->emin, S->ks[i].in->emax,
            S->ks[q].in->name, S->ks[q].in->emin, S->ks[q].in->emax, S->tinyc[fn], nd, 100.0 * (double)S->tinyc[fn] / nd,
            nr->name, nr->emin);
      }
}

/* the tensor-core model on whole products beside F-in/fp32-acc on the same inputs, at the largest size it ran */
static void answer_tc(mp_t *S, const growth_t *G, char *ans, size_t alen) {
  int i, sd, tcpos = G->tcpos, cnt = 0;
  double lo = INFINITY, hi = 0, blo = INFINITY, bhi = 0;
  if (tcpos < 0) return;
  for (i = 0; i < S->nk; i++) {
    int mix = mix_of(S, i);
    if (S->ks[i].kind != K_TC) continue;
    for (sd = 0; sd < MAXSEED; sd++) {
      const double *v = S->M->v[i][tcpos][sd];
      if (!S->M->have[i][tcpos][sd]) continue;
      cnt += mix >= 0 && S->M->have[mix][tcpos][sd];
      if (mix >= 0 && S->M->have[mix][tcpos][sd] && S->M->v[mix][tcpos][sd][M_FWD_DATA] > 0) {
        double ratio = v[M_FWD_DATA] / S->M->v[mix][tcpos][sd][M_FWD_DATA];
        if (ratio < lo) lo = ratio;
        if (ratio > hi) hi = ratio;
      }
      if (v[M_CBWD] / S->ks[i].uacc < blo) blo = v[M_CBWD] / S->ks[i].uacc;
      if (v[M_CBWD] / S->ks[i].uacc > bhi) bhi = v[M_CBWD] / S->ks[i].uacc;
    }
  }
  if (isfinite(lo))
    cat(ans, alen, "The %s tensor-core model (products exact, aligned blocks, fp32 output; every entry of the "
        "product, every seed, n <= %ld) is within a factor [%.4f, %.4f] of F-in/fp32-acc on the same inputs at "
        "n = %ld (%d products, formats x seeds): its error is the rounding of the inputs; against its own inputs its "
        "componentwise backward error is in [%.3g, %.3g] u of fp32, within the model's bound. ",
        S->c.model, S->c.tcmax, lo, hi, S->c.sizes[tcpos], cnt, blo, bhi);
  /* what of it rests on captured hardware data (experiments/extrapolation.h) */
  if (S->c.model) {
    int i2;
    for (i2 = 0; i2 < S->nk; i2++) {
      char ext[512];
      size_t K = 0;
      if (S->ks[i2].kind != K_TC ||
          !lowp_exp_tc_extrapolated(ext, sizeof ext, S->c.model, &S->c.fs[S->ks[i2].fi],
                                    (size_t)(S->c.tcmax < S->nmax ? S->c.tcmax : S->nmax), &K, NULL))
        continue;
      cat(ans, alen, "The %s rows with n > %zu (up to n = %ld) are %s. ", S->ks[i2].name, K,
          S->c.tcmax < S->nmax ? S->c.tcmax : S->nmax, ext);
    }
  }
}

/* the answer: growth, equal precision, the tensor-core model, the checks */
static void answer_growth(lowp_run_t *r, mp_t *S, const growth_t *G, char *ans, size_t alen) {
  int i, head = G->head, nsmall = G->nsmall, last = G->last;
  const double(*gm)[5] = G->gm, (*gh)[5] = G->gh;
  cat(ans, alen, "Growth (slope of log error on log n, n = %ld..%ld, mean and t-based 95%% CI over %ld "
      "seeds, [range of the seeds' slopes]): the largest error grows like ", S->c.sizes[0],
      S->c.sizes[nsmall ? nsmall - 1 : 0], S->c.seeds);
  for (i = 0; i < S->nk; i++)
    if (S->ks[i].kind != K_TC) {
      if (isfinite(gh[i][0]))
        cat(ans, alen, "%s n^(%.2f +- %.2f) [%.2f, %.2f], ", S->ks[i].name, gm[i][0], gh[i][0], G->gr[i][0][0],
            G->gr[i][0][1]);
      else if (isfinite(gm[i][0])) cat(ans, alen, "%s n^%.2f, ", S->ks[i].name, gm[i][0]);
    }
  ans[strlen(ans) - 2] = ';';
  cat(ans, alen, "the componentwise backward error of the all-format kernels like ");
  for (i = 0; i < S->nk; i++)
    if (S->ks[i].kind == K_ALL && isfinite(gm[i][1]))
      cat(ans, alen, "%s n^%.2f, ", S->ks[i].name, gm[i][1]);
  cat(ans, alen, "inside the probabilistic lambda sqrt(n) u (n^0.5) and the worst-case gamma_n (n^1). For the "
      "forward error a random-walk model expects about n^1 from the accumulation (partial sums of size sqrt(k), "
      "n roundings) and n^0.5 from the input rounding, plus the slow growth of a maximum over n^2 entries. ");
  {
    /* the RMS error over the entries: no heavy tail of a maximum, so it reads against theory directly */
    int n4 = 0;
    for (i = 0; i < S->nk; i++)
      if ((S->ks[i].kind == K_ALL || S->ks[i].kind == K_MIX) && isfinite(G->gm[i][4]))
        cat(ans, alen, "%s%s n^(%.2f +- %.2f)", n4++ ? ", " : "The RMS error over the n^2 entries (beside the maximum, "
            "whose tail is heavy) grows like ", S->ks[i].name, G->gm[i][4], G->gh[i][4]);
    if (n4) cat(ans, alen, " (mean and t-based 95%% CI over %ld seeds). ", S->c.seeds);
  }
  answer_equal(S, head, ans, alen);
  answer_tc(S, G, ans, alen);
  answer_blas(S, G, ans, alen);
  if (!S->c.bigabs && S->c.sizes[last] > S->c.big)
    cat(ans, alen, "Componentwise backward errors are measured up to n = %ld (above, |A||B| would cost one "
        "more exact product per format; bigabs=1 adds them). ", S->c.big);
  cat(ans, alen, "Every backward error is %s its bound where the bound exists; the emulated kernels "
      "agreed bit for bit with kernels/cpu/gemm_acc on all %ld entries checked (%ld outputs recomputed by "
      "it).", S->bad ? "NOT always within" : "within", S->tot_checked, S->tot_fallback);
  cJSON_AddStringToObject(r->results, "answer", ans);
  fprintf(r->summary, "**Answer.** %s\n\nSee also: [PyTorch's CPU kernels measured by lowp check]"
          "(../../pytorch-cpu/README.md) (reports/pytorch-cpu: its bf16 matmul accumulates in bf16, as cpu-bf16 "
          "here).\n\nFiles: errors.csv (every size, seed and kernel), growth.csv (means and ranges over the seeds), "
          "bounds.csv, tc.csv, growth.png, backward.png%s.\n", ans,
          S->c.model && S->c.sizes[0] <= S->c.tcmax ? ", growth_tc.png" : "");
}

/* one key number of the index (tools/cmd_report.c): label, mean, range over the seeds, 95% half-width */
static void key_number(lowp_run_t *r, const char *key, const char *label, double v, const double *lohi, double ci,
                       int seeds) {
  cJSON *o = lowp_result_key(r->results, key, label, v);
  if (lohi && isfinite(lohi[0]) && isfinite(lohi[1]) && seeds > 1) {
    cJSON_AddNumberToObject(o, "min", lohi[0]);
    cJSON_AddNumberToObject(o, "max", lohi[1]);
  }
  if (isfinite(ci)) cJSON_AddNumberToObject(o, "ci95", ci);
  cJSON_AddNumberToObject(o, "seeds", seeds);
}

/* results.json: the key numbers (the largest errors of fp32, fp16, bf16 and OpenBLAS at the exercise's size,
   and their growth), OpenBLAS's identity, the link to reports/pytorch-cpu */
static void write_keys(lowp_run_t *r, mp_t *S, const growth_t *G) {
  cJSON *links, *l;
  int i, w, head = G->head;
  for (w = 0; w < 2; w++)
    for (i = 0; i < S->nk; i++) {
      const kernel_t *k = &S->ks[i];
      char key[96], label[160];
      double lh[2];
      int q;
      if (!(k->kind == K_BLAS || (k->kind == K_ALL && (!strcmp(k->in->name, "fp32") || !strcmp(k->in->name, "fp16") ||
                                                      !strcmp(k->in->name, "bf16")))))
        continue;
      if (w == 0) {
        double m = mean_at(S->M, i, head, M_FWD_DATA, &q);
        if (!q) continue;
        range_at(S->M, i, head, M_FWD_DATA, lh);
        snprintf(key, sizeof key, "max_err_%s_n%ld", k->name, S->c.sizes[head]);
        snprintf(label, sizeof label, "%s max |C - exact| at n = %ld", k->name, S->c.sizes[head]);
        key_number(r, key, label, m, lh, NAN, q);
      } else if (isfinite(G->gm[i][0])) {
        snprintf(key, sizeof key, "growth_%s", k->name);
        snprintf(label, sizeof label, "%s growth exponent a (error ~ n^a)", k->name);
        key_number(r, key, label, G->gm[i][0], G->gr[i][0], G->gh[i][0], G->gq[i][0]);
      }
    }
  if (S->blas_info[0]) cJSON_AddStringToObject(r->results, "openblas", S->blas_info);
  links = cJSON_AddArrayToObject(r->results, "see_also");
  l = cJSON_CreateObject();
  cJSON_AddStringToObject(l, "text", "reports/pytorch-cpu: PyTorch's CPU bf16 matmul accumulates in bf16 (bit for bit "
                          "cpu-bf16 here)");
  cJSON_AddStringToObject(l, "href", "../pytorch-cpu/README.md");
  cJSON_AddItemToArray(links, l);
}

static int write_plot_data(lowp_run_t *r, mp_t *S) {
  FILE *csv;
  int i, si;
  /* ---- plot data: means and ranges over the seeds, kernel-major (one kernel's rows consecutive) */
  csv = fopen(lowp_run_path(r, "growth.csv"), "w");
  if (!csv) return 2;
  fprintf(csv, "kernel,n,seeds,max_err_vs_exact_data,max_err_vs_exact_inputs,comp_bwd_in_u_acc,norm_bwd_vs_inputs,"
          "max_err_vs_exact_data_min,max_err_vs_exact_data_max\n");
  for (i = 0; i < S->nk; i++)
    for (si = 0; si < S->c.ns; si++) {
      int cnt;
      double f0 = mean_at(S->M, i, si, M_FWD_DATA, &cnt), lh[2];
      if (!cnt) continue;
      range_at(S->M, i, si, M_FWD_DATA, lh);
      fprintf(csv, "%s,%ld,%d,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e\n", S->ks[i].name, S->c.sizes[si], cnt, f0,
              mean_at(S->M, i, si, M_FWD_IN, NULL), mean_at(S->M, i, si, M_CBWD, NULL) / S->ks[i].uacc,
              mean_at(S->M, i, si, M_NBWD_IN, NULL), lh[0], lh[1]);
    }
  fclose(csv);
  csv = fopen(lowp_run_path(r, "tc.csv"), "w");
  if (!csv) return 2;
  fprintf(csv, "kernel,n,seeds,max_err_vs_exact_data_tc,same_inputs_fp32_acc\n");
  for (i = 0; i < S->nk; i++)
    for (si = 0; si < S->c.ns; si++) {
      int mix = mix_of(S, i), cnt;
      double e = mean_at(S->M, i, si, M_FWD_DATA, &cnt);
      if (S->ks[i].kind != K_TC || !cnt) continue;
      fprintf(csv, "%s,%ld,%d,%.6e,%.6e\n", S->ks[i].name, S->c.sizes[si], cnt, e,
              mix >= 0 ? mean_at(S->M, mix, si, M_FWD_DATA, NULL) : NAN);
    }
  fclose(csv);
  /* the bounds in units of u (fp32's u; to first order they do not depend on u): gamma_n / u and the
     probabilistic gamma~_n(lambda) / u, lambda for P = 0.99 per entry (lib/measure) */
  csv = fopen(lowp_run_path(r, "bounds.csv"), "w");
  if (!csv) return 2;
  fprintf(csv, "n,gamma_n_over_u,lambda_sqrt_n\n");
  {
    double u32 = lowp_format_u(&LOWP_FMT_FP32);
    for (si = 0; si < S->c.ns; si++) {
      double n = (double)S->c.sizes[si], lam = lowp_bound_prob_lambda(n, u32, 0.99);
      fprintf(csv, "%ld,%.6e,%.6e\n", S->c.sizes[si], lowp_bound_gamma(n, u32) / u32,
              lowp_bound_gamma_prob(n, u32, lam) / u32);
    }
  }
  fclose(csv);

  return 0;
}

static int render_plots(lowp_run_t *r, mp_t *S) {
  int i, si, st = 0;
  /* ---- plots: one colour per input format, one dash type per kind of kernel */
  {
    lowp_series_t sr[4 * MAXK + 2];
    char styles[4 * MAXK + 2][96], extra[512], extra_tc[512], mixt[MAXK][80];
    int mixshow = -1, blas_stars = 0, tc_any = 0; /* tc_any: the model ran at some size (<= tcmax) */
    int pass;
    snprintf(extra, sizeof extra, "set key outside right top Left reverse font ',10'\nset logscale x 2\n"
             "set format x '2^{%%L}'\nset format y '10^{%%L}'\nset mxtics 1\nset xrange [%ld:%ld]",
             S->c.ns > 1 ? S->c.sizes[0] : S->c.sizes[0] / 2, S->c.ns > 1 ? S->c.sizes[S->c.ns - 1] : 2 * S->c.sizes[0]);
    /* the tensor-core plot ends at the largest size the model ran at; the backward-error plot shows the
       F-in/fp32-acc kernel measured at the most sizes */
    {
      long tmax = S->c.sizes[0];
      int best = -1;
      for (si = 0; si < S->c.ns; si++)
        if (S->c.sizes[si] <= S->c.tcmax) tmax = S->c.sizes[si], tc_any = 1;
      snprintf(extra_tc, sizeof extra_tc, "set key outside right top Left reverse font ',10'\nset logscale x 2\n"
               "set format x '2^{%%L}'\nset format y '10^{%%L}'\nset mxtics 1\nset xrange [%ld:%ld]",
               tmax > S->c.sizes[0] ? S->c.sizes[0] : S->c.sizes[0] / 2, tmax > S->c.sizes[0] ? tmax : 2 * S->c.sizes[0]);
      for (i = 0; i < S->nk; i++)
        if (S->ks[i].kind == K_MIX) {
          int cnt = 0;
          for (si = 0; si < S->c.ns; si++) cnt += S->M->have[i][si][0];
          if (cnt > best) { best = cnt; mixshow = i; }
        }
    }
    for (pass = 0; pass < 3 && st == 0; pass++) {
      int ns = 0;
      static const char *const titles[3] = {
          "Largest elementwise error against the exact product (every entry; mean over seeds)",
          "Componentwise backward error max |C - X| / (|A||B|), in units of the accumulator's u",
          "Tensor-core model against F-in/fp32-acc on the same inputs (every entry; mean over seeds)"};
      static const char *const ylabels[3] = {"max |C - exact(A B)|", "backward error / u", "max |C - exact(A B)|"};
      static const char *const bases[3] = {"growth", "backward", "growth_tc"};
      lowp_plot_t p = {titles[pass], "n (matrices n x n)", ylabels[pass], 1, 1, pass == 2 ? extra_tc : extra};
      if (pass == 2 && (!S->c.model || !tc_any)) continue; /* no data: no plot (gnuplot fails on none) */
      for (i = 0; i < S->nk; i++) {
        lowp_series_t s;
        memset(&s, 0, sizeof s);
        if ((pass < 2) == (S->ks[i].kind == K_TC)) continue;
        if (pass == 1 && S->ks[i].kind == K_MIX && i != mixshow) continue; /* fp32's backward error: one for scale */
        s.csv = pass == 2 ? "tc.csv" : "growth.csv";
        s.xcol = 2;
        s.ycol = pass == 0 ? 4 : pass == 1 ? 6 : 4;
        s.title = S->ks[i].name;
        s.filter = S->ks[i].name;
        s.filter_col = 1;
        /* colour and point shape per input format (so that curves that coincide, cpu-tf32 on cpu-fp16, both
           show), solid and filled for cpu-F and tc, dashed and open for F-in/fp32-acc */
        /* OpenBLAS's sgemm: fp32's colour, dotted, stars */
        snprintf(styles[ns], sizeof styles[ns], "linespoints lc rgb '%s' dt %d pt %d ps 1.3", colors[S->ks[i].fi % 8],
                 S->ks[i].kind == K_MIX ? 2 : S->ks[i].kind == K_BLAS ? 3 : 1,
                 S->ks[i].kind == K_BLAS ? 3 : pts[S->ks[i].fi % 8] - (S->ks[i].kind == K_MIX ? 1 : 0));
        s.style = styles[ns];
        sr[ns++] = s;
        if (pass == 2) { /* the same inputs on F-in/fp32-acc */
          lowp_series_t s2 = s;
          snprintf(mixt[i], sizeof mixt[i], "%s-in/fp32-acc", S->ks[i].in->name);
          s2.ycol = 5;
          s2.title = mixt[i];
          snprintf(styles[ns], sizeof styles[ns], "linespoints lc rgb '%s' dt 2 pt %d ps 1.3", colors[S->ks[i].fi % 8],
                   pts[S->ks[i].fi % 8] - 1);
          s2.style = styles[ns];
          sr[ns++] = s2;
        }
      }
      if (pass == 1) {
        lowp_series_t b1 = {"bounds.csv", 1, 2, "gamma_n / u (worst case)", "lines lc rgb '#555555' dt 3", NULL, 0, 0};
        lowp_series_t b2 = {"bounds.csv", 1, 3, "lambda sqrt(n) (P = 0.99)", "lines lc rgb '#555555' dt 4", NULL, 0, 0};
        sr[ns++] = b1;
        sr[ns++] = b2;
      }
      if (ns == 0) continue;
      if (pass != 1) mark_same(r->outdir, sr, ns, styles);
      if (pass == 0) { /* does OpenBLAS's curve keep its stars (not marked as the same as another)? */
        int j;
        for (j = 0; j < ns; j++)
          if (strstr(styles[j], "dt 3 pt 3 ")) blas_stars = 1;
      }
      if (pass == 0) { /* the seeds: their smallest and largest error, small marks in the curve's colour, no key */
        int nc = ns, j, lh;
        for (j = 0; j < nc; j++)
          for (lh = 0; lh < 2; lh++) {
            lowp_series_t s = sr[j];
            const char *c = strstr(styles[j], "rgb '");
            snprintf(styles[ns], sizeof styles[ns], "points pt %d ps 0.9 lc rgb '%.7s'", lh ? 9 : 11,
                     c ? c + 5 : "#000000");
            s.ycol = 8 + lh;
            s.title = "";
            s.style = styles[ns];
            sr[ns++] = s;
          }
      }
      st = lowp_plot(r->outdir, bases[pass], &p, sr, (size_t)ns);
    }
    {
      char cap[1200];
      snprintf(cap, sizeof cap, "Largest elementwise error of every entry against the exact product of the fp32 data, "
               "mean over the seeds of each size (column seeds of growth.csv: sizes above big have bigseeds, 1 by "
               "default, so no mean there; errors.csv has each seed, growth.csv the range), and small triangles in "
               "the curve's colour at the smallest (down) and largest (up) seed; solid: every product and sum in the "
               "format (cpu-F); dashed: inputs rounded to the format, exact products, fp32 accumulation "
               "(F-in/fp32-acc); dotted%s: OpenBLAS cblas_sgemm on the fp32 data. A curve within 1%% of an earlier "
               "one at every size (found in the data) is drawn with open circles and \"(= X)\" in the key.",
               blas_stars ? " with stars" : "");
      lowp_result_plot(S->plots, "growth.png", cap);
    }
    lowp_result_plot(S->plots, "backward.png", "Componentwise backward error against the kernel's own (rounded) inputs, "
                     "in units of its accumulator's u, with the worst-case gamma_n / u and the probabilistic lambda "
                     "sqrt(n) (Higham & Mary 2019, P = 0.99 per entry); one F-in/fp32-acc curve shown (its backward "
                     "error is fp32's accumulation, the same for every input format). The curves are the largest "
                     "entry's error: gamma_n bounds every entry, so it bounds the maximum too; the probabilistic "
                     "bound holds per entry with P >= 0.99, so the maximum of n^2 entries may exceed it (a union "
                     "bound over the n^2 entries would widen lambda to sqrt(2 ln(200 n^3)) / (1 - u)).");
    if (S->c.model && tc_any)
      lowp_result_plot(S->plots, "growth_tc.png", "The tensor-core model on whole products (every entry, mean over "
                       "the seeds) beside F-in/fp32-acc on the same inputs: the model's error is the rounding of its "
                       "inputs. A curve within 1% of an earlier one at every size is drawn with open circles and "
                       "\"(= X)\" in the key.");
  }
  return st;
}

static int run(lowp_run_t *r) {
  static mp_t Sv;
  static growth_t G;
  static char ans[16384];
  mp_t *S = &Sv;
  int st, nomem;
  /* declare */
  memset(S, 0, sizeof *S);
  S->fi32 = -1;
  S->tables = cJSON_AddArrayToObject(r->results, "tables");
  S->plots = cJSON_AddArrayToObject(r->results, "plots");
  S->ks = calloc(MAXK, sizeof *S->ks);
  S->M = calloc(1, sizeof *S->M);
  /* every rank leaves together (none left waiting in a collective), one message */
  nomem = !S->ks || !S->M;
  if (lowp_par_spread() ? lowp_par_max(nomem) > 0 : nomem) {
    if (!lowp_par_spread() || lowp_par_rank() == 0) fprintf(stderr, "lowp run matmul-precision: out of memory\n");
    return 2;
  }
  parse(r, &S->c);
  S->nmax = S->c.sizes[S->c.ns - 1];
  S->nn_max = (size_t)S->nmax * S->nmax;
  declare_kernels(S);
  if (alloc_buffers(S)) return 2;
  /* measure */
  measure_items(r, S);
  if (write_errors(r, S)) return 2;
  /* judge and render */
  growth_all(S, &G);
  render_tables(S, &G);
  ans[0] = '\0';
  answer_errors(r, S, &G, ans, sizeof ans);
  answer_growth(r, S, &G, ans, sizeof ans); /* writes the answer */
  write_keys(r, S, &G);
  if (write_plot_data(r, S)) return 2;
  st = render_plots(r, S);
  free_buffers(S);
  if (st != 0) return lowp_run_plot_failed(r, st);
  if (S->bad) {
    fprintf(stderr, "lowp run matmul-precision: %d checks failed\n", S->bad);
    return 1;
  }
  return 0;
}

const lowp_experiment_t lowp_exp_matmul_precision = {
    "matmul-precision",
    "How far are fp32, tf32, fp16, bf16 and fp8 products of random 1000 x 1000 matrices from the exact product "
    "(and from fp32), how much of it is input rounding and how much accumulation, and how does it grow with n "
    "up to {sizes}?",
    "fp32 N(0,1) data rounded to each format ({formats}); kernels: cpu-F (every product and sum rounded to F, "
    "recursive), F-in/fp32-acc (exact products, fp32 accumulation), emulated exactly at BLAS-like speed and "
    "checked against kernels/cpu/gemm_acc, tc-{model}-F (kernels/cpu/gemm_tc, whole products up to n = {tcmax}) "
    "and openblas-sgemm (OpenBLAS cblas_sgemm on the fp32 data, one thread; sgemm = {sgemm}); every entry "
    "against exact products (lib/check, lib/exact) of the data and of the rounded inputs; componentwise and "
    "normwise backward errors (lib/measure) against gamma_n and the tensor-core model bound (lowp_op_bound); "
    "{seeds} seeds per size ({bigseeds} and only {bigformats} above n = {big}, componentwise backward errors "
    "there only if bigabs = 1, now {bigabs}); means and [min, max] over the seeds; growth exponents with t-based 95% confidence intervals.",
    "Backward errors within their bounds; fp32-accumulating kernels' error is the rounding of the inputs and "
    "grows like n^0.5; all-format accumulation grows faster, between lambda sqrt(n) u and gamma_n.",
    params, run, check};
