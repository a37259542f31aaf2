/* lowp_exact GEMM, sliced path -- error-free splitting onto exact OpenBLAS DGEMMs (Ozaki scheme) */

/*
 * The method (Ozaki, Ogita, Oishi, Rump, "Error-free transformations of
 * matrix multiplication by using fast routines of matrix multiplication and
 * its applications", Numer. Algorithms 59, 2012; Mukunoki, Ozaki, Ogita,
 * Imamura, ozBLAS, ISC 2020; Ozaki, Uchino, Imamura, "Ozaki Scheme II",
 * 2024-25, for the fixed-point/integer view used here):
 *
 * 1. Bit budget. With s = floor((53 - ceil(log2 k)) / 2), every slice entry
 *    is an integer of magnitude <= 2^s - 1, so each product is below 2^(2s)
 *    and any partial sum of at most k of them is an integer of magnitude
 *    below k 2^(2s) <= 2^53. Every such integer is a binary64 number, so no
 *    operation of a DGEMM on slices ever rounds, whatever its summation
 *    order, blocking, FMA use or thread count: each slice-pair product is
 *    exact, and identical for every BLAS build.
 * 2. Splitting. Row i of A is scaled by 2^-ea[i] (|a| < 2^ea[i], a power of
 *    two, exact) into (-1, 1) and cut into nA slices of s bits:
 *    a = 2^ea[i] sum_t A_t[i] 2^(-s(t+1)), A_t integers (truncation, so each
 *    slice keeps the sign of a). The row needs ceil((ea[i] - lsb[i]) / s)
 *    slices, lsb[i] the weight of its lowest set bit; the same for columns
 *    of B (eb[j]). fp16 data need at most 2 slices for k <= 2^12 (40 bits
 *    from 2^-24 to 2^16), e4m3 1 for k <= 2^17, e5m2 2: the narrow cases
 *    follow from the general rule with no special code.
 * 3. Exact sum. C_tu = A_t B_u (DGEMM, exact). For t + u = d the scale is
 *    the same, 2^(ea[i] + eb[j] - s(d + 2)); the at most min(nA, nB) values
 *    of a diagonal are summed in int64 (< 20 * 2^53 < 2^63), then each
 *    diagonal enters the exact accumulator (lib/exact/acc.h), C0 is added
 *    and the sum is rounded once: the correctly rounded result, bit for bit
 *    the accumulator path's.
 * 4. Check. Each DGEMM result is also checked exactly, modulo 2^64: the row
 *    sums of C_tu must equal A_t (B_u 1) in wrapping integer arithmetic and
 *    every entry must be an integer of magnitude <= 2^53. A row that fails
 *    (impossible within the budget; the test hook test_extra_bits breaks it
 *    on purpose) is recomputed by the accumulator.
 * 6. Integer engines (Ozaki scheme II's view, Ozaki, Uchino, Imamura
 *    2024-25): the same argument holds for any GEMM whose accumulator holds
 *    E integer bits exactly (int8 x int8 -> int32 tensor cores: E = 31, and
 *    slices capped at 7 bits so they are int8 values): sA + sB + ceil(log2 k)
 *    <= E, each of sA, sB <= the cap. lowp_gemm_opts_t.engine_bits and
 *    slice_bits_max select it; the check bounds entries by 2^E.
 * 5. Choice. Rows/columns holding NaN or inf, or needing more than
 *    LOWP__OZAKI_MAXSLICES slices, go to the accumulator (whose semantics define the
 *    special values). nA and nB are chosen to minimise a cost model:
 *    per slice pair a DGEMM (k multiply-adds per output) or a sparse
 *    product (below), plus PAIR_COST per output collected and SLICE_COST
 *    per entry cut, + R k per output left to the accumulator (R = ACC_COST
 *    multiply-adds of DGEMM time). The result does not depend on the choice.
 * 7. Far-off entries (sparse slices). A row whose entries span many more
 *    bits than most (gradient-like data over 40 binades, a handful of fp16
 *    values off the fp16 grid) needs slices that hold only the low bits of
 *    those few entries, mostly zeros. Such a slice is multiplied from its
 *    nonzeros (ozaki_sparse.c; any order is exact within the budget) when
 *    that is cheaper than a DGEMM, judged from the slices' nonzero counts;
 *    the cost model estimates those counts beforehand from histograms of
 *    the entries' bit spans below their row's top (sampled rows). A sparse
 *    slice of A is collected over its nonzero rows only. With a DGEMM hook
 *    (cuBLAS, an integer engine) the sparse products still run here: the
 *    hook changes no decision, only who multiplies the dense pairs.
 * 8. The W form holds V in two signed 128-bit words when its shift SH is up
 *    to 130 bits (w_fits), so unequal widths may take 3 x 3 slices and more.
 */

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exact/internal.h"
#include "exact/ozaki.h"
#include "status.h"

/* Debian's cblas.h for OpenBLAS declares it; repeated here for other headers */
void openblas_set_num_threads(int num_threads);


/* accumulator cost per multiply-add in DGEMM multiply-adds (measured:
   1.6-2.2 ns vs about 0.03-0.04 ns per multiply-add for one core) */
#define ACC_COST 48.0
#define ACC_COST_GENERAL 400.0 /* the accumulator's 106-bit product path */
/* a sparse slice product's cost per nonzero and per output column (left
   slice sparse) or row (right slice sparse), in DGEMM multiply-adds: an
   axpy streams a row; the right-sparse loop gathers and scatters */
#define SPARSE_COST_A 13.0
#define SPARSE_COST_B 36.0
/* offsets (bits below a row's top) beyond which the span histograms lump
   entries together: 24 slices of at most 52 bits are 1248 bits */
#define SPAN_BINS 1280
/* loops over fewer elements run on the calling thread only (speed only) */
#define PAR_MIN 32768
/* checking one slice product and adding it into the per-output sums, per
   output, and cutting one slice, per entry, in DGEMM multiply-adds
   (measured at n = 1024 on one AVX-512 core whose DGEMM takes 0.028 ns per
   multiply-add: about 9 ns per output and 4.5 ns per entry) */
#define PAIR_COST 300.0
#define SLICE_COST 160.0

/* ceil(log2 k), k >= 1 */
static int clog2(size_t k) {
  int r = 0;
  while (((size_t)1 << r) < k && r < 63) r++;
  return r;
}

/* Exponent e with |x| < 2^e (x finite, nonzero) and the weight of x's lowest
   set bit. */
static void bits_of(double x, int *e, int *lsb) {
  uint64_t u, sig;
  int E, q;
  memcpy(&u, &x, sizeof u);
  E = (int)((u >> 52) & 0x7ff);
  sig = u & ((UINT64_C(1) << 52) - 1);
  if (E == 0) {
    q = -1074;
  } else {
    sig |= UINT64_C(1) << 52;
    q = E - 1075;
  }
  /* sig != 0: x != 0 */
  *lsb = q + __builtin_ctzll(sig);
  *e = q + 64 - __builtin_clzll(sig);
}

/* Running needs of one row/column: ok = all finite, emax, lsb over nonzeros */
typedef struct {
  int ok, any, emax, lsb, narrow; /* narrow: every entry has <= 26 bits */
} need_t;

static void need_add(need_t *nd, double x) {
  int e, q;
  if (x == 0.0) return;
  if (!isfinite(x)) { nd->ok = 0; return; }
  bits_of(x, &e, &q);
  if (e - q > 26) nd->narrow = 0;
  if (!nd->any || e > nd->emax) nd->emax = e;
  if (!nd->any || q < nd->lsb) nd->lsb = q;
  nd->any = 1;
}

/* slices needed (0: not sliceable), for slice width s */
static int need_slices(const need_t *nd, int s) {
  int w;
  if (!nd->ok) return 0;
  if (!nd->any) return 1;
  w = nd->emax - nd->lsb;
  w = (w + s - 1) / s;
  return w < 1 ? 1 : (w > LOWP__OZAKI_MAXSLICES ? 0 : w);
}

/* The factors (f1, f2) with x * 2^-e = (x * f1) * f2 exactly, for results
   in [2^-600, 1): one factor (f2 = 1) unless 2^-e alone would overflow. */
static void scale_of(int e, double *f1, double *f2) {
  if (e < -1000) {
    *f1 = ldexp(1.0, -e - 600);
    *f2 = ldexp(1.0, 600);
  } else {
    *f1 = ldexp(1.0, -e);
    *f2 = 1.0;
  }
}

/* Cut X in (-1, 1) into ns slices of s bits (p = 2^s), written to
   out[t * stride], t = 0..ns-1. Exact: T = X p is a power-of-two scaling,
   h = trunc(T) and T - h are exact for binary64. */
static inline void cut(double *out, size_t stride, double X, int ns, double p) {
  int t;
  for (t = 0; t < ns; t++) {
    double T = X * p, h = trunc(T);
    out[(size_t)t * stride] = h;
    X = T - h;
  }
}

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

/* W form: the exact value of output (x, y) as one signed integer V times
   2^(ea + eb - sA nA - sB nB), V = sum_tu C_tu 2^(sA (nA-1-t) + sB (nB-1-u)).
   |C_tu| <= 2^53 and the geometric sums of the shifts are below 2^(SH+2),
   SH = sA (nA-1) + sB (nB-1), so |V| < 2^(SH + 55): one signed 128-bit
   integer holds it when SH <= 70. Up to SH = 130 ("wide"), V = Vh 2^64 + Vl:
   the terms shifted by 64 or more go to Vh (shifted 64 less),
   |Vh| < 2^(SH - 64 + 55) <= 2^121, and the others to Vl, |Vl| < 2^53 2^63
   576 < 2^126 (at most 24 x 24 slice pairs). */
#define W_ONE 70
#define W_WIDE 130
static int w_shift(int sA, int nA, int sB, int nB) { return sA * (nA - 1) + sB * (nB - 1); }
static int w_fits(int sA, int nA, int sB, int nB) { return w_shift(sA, nA, sB, nB) <= W_WIDE; }

/* The state of one sliced GEMM, passed through its phases. */
typedef struct {
  /* the problem */
  double *c;
  const double *a, *b, *c0;
  size_t m, n, k;
  const lowp_format_t *f;
  const lowp_policy_t *pol;
  lowp_rounding_t rnd;
  const lowp_gemm_opts_t *opt;
  lowp__progress_t *prog;
  lowp_gemm_stats_t *stats;
  /* the choice: widths, counts, budget, form */
  int budget, sA0, sA, sB, nA, nB, narrow, wmode, wide, forced, extra, cap, sparse;
  /* the truncated path: trunc = D > 0 keeps the pairs t + u < D; topt the
     test hook (lowp_gemm_opts_t.test_trunc), tok whether it may be used */
  int trunc, topt, tok;
  int *qa, *qb;       /* truncated path: slices each row / column needs (0: all zero) */
  unsigned char *und; /* truncated path, per output: 1 decided from the bound, 2 in doubt */
  size_t ntdec, ntund; /* their counts */
  double emax_entry; /* the largest magnitude an engine result may have */
  /* the sets and buffers */
  need_t *na, *nb;
  /* span histograms, cumulative: cb[o] entries whose lowest bit lies more
     than o bits below their row's (column's) top, ct[o] entries whose top
     bit does; A's then B's */
  size_t *cbA, *ctA, *cbB, *ctB;
  size_t ma, nbc, nd;
  size_t *ri, *cj, *rf, *cf;
  double *As, *Bs, *Ct, *fb1, *fb2;
  int64_t *D;
  i128 *V, *Vh;
  uint64_t *bsum;
  unsigned char *fail;
  int *ea, *eb;
  /* nonzeros of each slice; the sparse slices' compressed rows, built on
     first use */
  size_t nzA[LOWP__OZAKI_MAXSLICES], nzB[LOWP__OZAKI_MAXSLICES];
  lowp__csr_t spA[LOWP__OZAKI_MAXSLICES], spB[LOWP__OZAKI_MAXSLICES];
} oz_t;

/* per-row and per-column needs; z->narrow: every row and column narrow */
static int oz_needs(oz_t *z) {
  size_t i, j, l, m = z->m, n = z->n, k = z->k;
  long long xi;
  z->na = malloc(m * sizeof *z->na);
  z->nb = malloc(n * sizeof *z->nb);
  if (!z->na || !z->nb) return LOWP_ENOMEM;
#pragma omp parallel for schedule(static) if (m * k > PAR_MIN)
  for (xi = 0; xi < (long long)m; xi++) {
    need_t r = {1, 0, 0, 0, 1};
    size_t ll;
    for (ll = 0; ll < k; ll++) need_add(&r, z->a[(size_t)xi * k + ll]);
    z->na[xi] = r;
  }
  for (j = 0; j < n; j++) {
    need_t r = {1, 0, 0, 0, 1};
    z->nb[j] = r;
  }
  for (l = 0; l < k; l++)
    for (j = 0; j < n; j++) need_add(&z->nb[j], z->b[l * n + j]);
  z->narrow = 1;
  for (i = 0; i < m; i++)
    if (!z->na[i].narrow || !z->na[i].ok) z->narrow = 0;
  for (j = 0; j < n; j++)
    if (!z->nb[j].narrow || !z->nb[j].ok) z->narrow = 0;
  return LOWP_OK;
}

/* one entry's span below its row's top ea into the histograms hb, ht */
static inline void span_add(size_t *hb, size_t *ht, double x, int ea) {
  int e, q, ob, ot;
  if (x == 0.0 || !isfinite(x)) return;
  bits_of(x, &e, &q);
  ob = ea - q;
  ot = ea - e;
  hb[ob < SPAN_BINS ? ob : SPAN_BINS]++;
  ht[ot < SPAN_BINS ? ot : SPAN_BINS]++;
}

/* histogram h (bins 0..SPAN_BINS) into c[o] = the entries in bins above o */
static void span_cumulate(size_t *c, const size_t *h) {
  int o;
  c[SPAN_BINS] = h[SPAN_BINS]; /* lumped: "above SPAN_BINS" */
  for (o = SPAN_BINS - 1; o >= 0; o--) c[o] = c[o + 1] + h[o + 1];
}

/* the span histograms of the finite rows of A and columns of B, for the
   cost model's estimate of each slice's nonzeros (speed only): every
   SPAN_STRIDE-th row of A and of B when there are many, counts scaled up */
#define SPAN_STRIDE 8
static int oz_spans(oz_t *z) {
  size_t j, l, nb1 = SPAN_BINS + 1, m = z->m, n = z->n, k = z->k, o;
  size_t sa = m >= 8 * SPAN_STRIDE ? SPAN_STRIDE : 1, sb = k >= 8 * SPAN_STRIDE ? SPAN_STRIDE : 1;
  size_t *h = calloc(4 * nb1, sizeof *h), *hb = h, *ht = h + nb1;
  long long xi;
  z->cbA = malloc(4 * nb1 * sizeof *z->cbA);
  if (!h || !z->cbA) { free(h); return LOWP_ENOMEM; }
  z->ctA = z->cbA + nb1, z->cbB = z->ctA + nb1, z->ctB = z->cbB + nb1;
#pragma omp parallel for schedule(static) reduction(+ : hb[:SPAN_BINS + 1], ht[:SPAN_BINS + 1]) \
    if (m * k > PAR_MIN)
  for (xi = 0; xi < (long long)m; xi += (long long)sa) {
    size_t ll;
    const double *ar = z->a + (size_t)xi * k;
    if (!z->na[xi].ok || !z->na[xi].any) continue;
    for (ll = 0; ll < k; ll++) span_add(hb, ht, ar[ll], z->na[xi].emax);
  }
  for (o = 0; o < 2 * nb1; o++) h[o] *= sa;
  span_cumulate(z->cbA, hb);
  span_cumulate(z->ctA, ht);
  memset(h, 0, 2 * nb1 * sizeof *h);
  for (l = 0; l < k; l += sb)
    for (j = 0; j < n; j++)
      if (z->nb[j].ok && z->nb[j].any) span_add(hb, ht, z->b[l * n + j], z->nb[j].emax);
  for (o = 0; o < 2 * nb1; o++) h[o] *= sb;
  span_cumulate(z->cbB, hb);
  span_cumulate(z->ctB, ht);
  free(h);
  return LOWP_OK;
}

/* estimated nonzeros of slice t at width x: entries whose span [ot, ob)
   meets the slice's bits [x t, x (t+1)) below the top (an upper bound) */
static double span_nnz(const size_t *cb, const size_t *ct, int x, int t) {
  long lo = (long)x * t, hi = (long)x * (t + 1) - 1;
  double v;
  if (lo > SPAN_BINS) lo = SPAN_BINS;
  if (hi > SPAN_BINS) hi = SPAN_BINS;
  v = (double)cb[lo] - (double)ct[hi];
  return v > 0 ? v : 0;
}

/* slice counts per row (or column) for width x: histogram and maximum */
static int oz_hist(const need_t *nd, size_t cnt, int x, size_t *hist) {
  size_t i;
  int mx = 0;
  for (i = 0; i < cnt; i++) {
    int q = need_slices(&nd[i], x);
    hist[q]++;
    if (q > mx) mx = q;
  }
  return mx;
}

/* the slice products' cost for ta x tb slices of widths xa, xb over ca
   rows and cb columns, in DGEMM multiply-adds: each pair by a DGEMM or, when
   one of its slices is sparse enough, from that slice's nonzeros (as
   oz_product decides with the true counts); plus PAIR_COST per output
   collected (a sparse left slice: only its rows with nonzeros) */
static double oz_pairs_cost(const oz_t *z, int xa, int ta, int xb, int tb, double ca,
                            double cb) {
  double K = (double)z->k, dense = (K + PAIR_COST) * ca * cb, cost = 0.0,
         na[LOWP__OZAKI_MAXSLICES], nb[LOWP__OZAKI_MAXSLICES];
  int t, u;
  for (t = 0; t < ta; t++) {
    double q = span_nnz(z->cbA, z->ctA, xa, t);
    na[t] = (SPARSE_COST_A * q + PAIR_COST * (q < ca ? q : ca)) * cb;
  }
  for (u = 0; u < tb; u++)
    nb[u] = (SPARSE_COST_B * span_nnz(z->cbB, z->ctB, xb, u) + PAIR_COST * cb) * ca;
  for (t = 0; t < ta; t++)
    for (u = 0; u < tb; u++) {
      double c = dense;
      if (z->sparse >= 0) {
        if (na[t] < c) c = na[t];
        if (nb[u] < c) c = nb[u];
      }
      cost += c;
    }
  return cost;
}

/* one candidate split (xa, xb): the best counts under the running best */
static void oz_candidate(oz_t *z, int xa, int xb, double R, double *best) {
  size_t hista[LOWP__OZAKI_MAXSLICES + 1] = {0}, histb[LOWP__OZAKI_MAXSLICES + 1] = {0};
  size_t ca = 0, cb;
  double K = (double)z->k, m = (double)z->m, n = (double)z->n;
  int maxa = oz_hist(z->na, z->m, xa, hista), maxb = oz_hist(z->nb, z->n, xb, histb), ta, tb;
  for (ta = 1; ta <= maxa; ta++) {
    ca += hista[ta];
    cb = 0;
    for (tb = 1; tb <= maxb; tb++) {
      double cost;
      int w = w_fits(xa, ta, xb, tb);
      cb += histb[tb];
      if (!w && xa != xb) continue;
      if (z->forced)
        cost = (ta == maxa && tb == maxb) ? 0.0 : INFINITY;
      else
        cost = oz_pairs_cost(z, xa, ta, xb, tb, (double)ca, (double)cb) +
               SLICE_COST * K * ((double)ta * ca + (double)tb * cb) +
               R * K * (m * n - (double)ca * (double)cb);
      if (cost < *best) {
        *best = cost;
        z->nA = ta, z->nB = tb, z->sA = xa, z->sB = xb, z->wmode = w;
      }
    }
  }
}

/* ---------------------------------------------------------------------
   Truncated slices (docs/exact-gemm.md, "Truncated slices"). With equal
   widths s, a = 2^ea sum_t A_t 2^(-s(t+1)), |A_t| <= 2^s - 1, so each
   term is below 2^(ea - s t) (cut continued to every slice; the first D
   are the ones split). Keeping the pairs t + u < D, the dropped pairs of
   one product sum to less than 2^(ea+eb) sum_{d >= D} (d+1) 2^(-s d)
   <= 2^(ea+eb) 2 (D+2) 2^(-s D) (s >= 1), so over k products the dropped
   part is below 2^eB, eB = ea + eb - s D + ceil(log2 k) + ceil(log2 (2 (D+2))).
   Rounding (every mode but SR) is monotone and each result's preimage on
   either sign is an interval, so when S_hi - 2^eB and S_hi + 2^eB round to
   the same bits the exact value, strictly between them, rounds to them too
   (Rump, Ogita, Oishi, "Accurate floating-point summation part I:
   faithful rounding", SIAM J. Sci. Comput. 31(1), 2008; Ozaki et al.,
   Numer. Algorithms 59, 2012, stop their splitting on the same principle).
   Otherwise the output goes to the accumulator. */

/* slices a row (column) needs at width s, uncapped; 0: all zero */
static int trunc_slices(const need_t *nd, int s) {
  int w;
  if (!nd->any) return 0;
  w = (nd->emax - nd->lsb + s - 1) / s;
  return w < 1 ? 1 : w;
}

/* slice pairs t < ta, u < tb with t + u < D */
static int trunc_pairs(int D, int ta, int tb) {
  int t, u, p = 0;
  for (t = 0; t < ta; t++)
    for (u = 0; u < tb; u++) p += t + u < D;
  return p;
}

/* eB - (ea + eb - s D): ceil(log2 k) + ceil(log2 (2 (D + 2))) */
static int trunc_extra(int D, size_t k) { return clog2(k) + clog2((size_t)(2 * (D + 2))); }

/* speed only: the cost model's estimate of how far outputs sit below
   2^(ea+eb): for a grid of up to TRUNC_SAMPLE^2 outputs (fewer when k is
   so large that their exponents would take over 16 MB), ea + eb minus the
   top exponent of their products (1 << 20 for an all-zero product) */
#define TRUNC_SAMPLE 16
#define TRUNC_ZERO (-(1 << 14))
static size_t oz_trunc_defic(const oz_t *z, int *def) {
  size_t ri[TRUNC_SAMPLE], cj[TRUNC_SAMPLE], nr = 0, nc = 0, i, j, l, k = z->k, q = 0;
  size_t sn = TRUNC_SAMPLE, si, sj;
  int16_t *ex;
  int e, lsb;
  while (sn > 1 && k > ((size_t)1 << 22) / sn) sn /= 2; /* 2 sn k int16s <= 16 MB */
  si = z->m / sn ? z->m / sn : 1;
  sj = z->n / sn ? z->n / sn : 1;
  if (k > ((size_t)1 << 22) || !(ex = malloc(2 * sn * k * sizeof *ex))) return 0;
  for (i = 0; i < z->m && nr < sn; i += si)
    if (z->na[i].ok && z->na[i].any) ri[nr++] = i;
  for (j = 0; j < z->n && nc < sn; j += sj)
    if (z->nb[j].ok && z->nb[j].any) cj[nc++] = j;
  for (i = 0; i < nr; i++)
    for (l = 0; l < k; l++) {
      double x = z->a[ri[i] * k + l];
      if (x != 0.0) bits_of(x, &e, &lsb);
      ex[i * k + l] = (int16_t)(x != 0.0 ? e : TRUNC_ZERO);
    }
  for (j = 0; j < nc; j++)
    for (l = 0; l < k; l++) {
      double x = z->b[l * z->n + cj[j]];
      if (x != 0.0) bits_of(x, &e, &lsb);
      ex[(sn + j) * k + l] = (int16_t)(x != 0.0 ? e : TRUNC_ZERO);
    }
  for (i = 0; i < nr; i++)
    for (j = 0; j < nc; j++) {
      const int16_t *xa = ex + i * k, *xb = ex + (sn + j) * k;
      int mx = 2 * TRUNC_ZERO;
      for (l = 0; l < k; l++) mx = xa[l] + xb[l] > mx ? xa[l] + xb[l] : mx;
      def[q++] = mx < -2200 ? 1 << 20 /* no product: real ones are >= 2^-2148 */
                                  : z->na[ri[i]].emax + z->nb[cj[j]].emax - mx;
    }
  free(ex);
  return q;
}

/* rounding the two ends of the interval, per output decided, in DGEMM
   multiply-adds (speed only; measured at n = 1024 on whole-range fp32 data
   on the AVX-512 core of PAIR_COST: about 80 ns per output) */
#define TROUND_COST 3000.0

/* the truncated form's cost for D = 1, 2, ... (pairs kept by DGEMMs,
   splitting D slices, two roundings per output, the outputs expected in
   doubt at the accumulator's general cost: an output about def bits below
   2^(ea+eb) is in doubt with probability about 2^(eB - (its ulp)));
   takes it when cheaper than *best. The hook test_trunc = D forces D. */
static void oz_trunc_choose(oz_t *z, double R, double *best) {
  int s = z->budget / 2, D, ta = 0, tb = 0, def[TRUNC_SAMPLE * TRUNC_SAMPLE], q;
  size_t i, ca = 0, cb = 0, ns;
  double K = (double)z->k, mn = (double)z->m * (double)z->n, cc;
  if (s > z->cap) s = z->cap;
  for (i = 0; i < z->m; i++)
    if (z->na[i].ok) ca++, q = trunc_slices(&z->na[i], s), ta = q > ta ? q : ta;
  for (i = 0; i < z->n; i++)
    if (z->nb[i].ok) cb++, q = trunc_slices(&z->nb[i], s), tb = q > tb ? q : tb;
  if (s < 1 || !ca || !cb) return;
  cc = (double)ca * (double)cb;
  if (z->topt > 0) {
    D = z->topt;
  } else {
    ns = oz_trunc_defic(z, def);
    for (D = 1, z->trunc = 0; D <= LOWP__OZAKI_MAXSLICES && ns; D++) {
      int pa = ta < D ? ta : D, pb = tb < D ? tb : D;
      double frac = 0.0, cost;
      size_t u;
      if (D >= ta + tb - 1) break; /* nothing dropped: the full forms */
      for (u = 0; u < ns; u++) {
        double p = ldexp(1.0, trunc_extra(D, z->k) + def[u] + z->f->precision + 1 - s * D);
        frac += p < 1.0 ? p : 1.0;
      }
      frac /= (double)ns;
      cost = (double)trunc_pairs(D, pa, pb) * (K + PAIR_COST) * cc +
             SLICE_COST * K * ((double)pa * (double)ca + (double)pb * (double)cb) +
             TROUND_COST * cc + frac * ACC_COST_GENERAL * K * cc + R * K * (mn - cc);
      if (cost < *best) *best = cost, z->trunc = D;
    }
    if (!z->trunc) return;
    D = z->trunc;
  }
  z->trunc = D;
  z->nA = ta < D ? ta : D, z->nB = tb < D ? tb : D;
  if (z->nA < 1) z->nA = 1;
  if (z->nB < 1) z->nB = 1;
  z->sA = z->sB = s, z->wmode = 0;
}

/* the truncated form's sets: every finite row and column */
static int oz_trunc_sets(oz_t *z) {
  size_t i, nrf = 0, ncf = 0;
  z->qa = malloc(z->m * sizeof *z->qa);
  z->qb = malloc(z->n * sizeof *z->qb);
  if (!z->qa || !z->qb) return LOWP_ENOMEM;
  for (i = 0; i < z->m; i++) {
    if (!z->na[i].ok) { z->rf[nrf++] = i; continue; }
    z->ea[z->ma] = z->na[i].any ? z->na[i].emax : 0;
    z->qa[z->ma] = trunc_slices(&z->na[i], z->sA);
    z->ri[z->ma++] = i;
  }
  for (i = 0; i < z->n; i++) {
    if (!z->nb[i].ok) { z->cf[ncf++] = i; continue; }
    z->eb[z->nbc] = z->nb[i].any ? z->nb[i].emax : 0;
    z->qb[z->nbc] = trunc_slices(&z->nb[i], z->sB);
    z->cj[z->nbc++] = i;
  }
  return (z->ma == 0 || z->nbc == 0) ? LOWP__NOT_USED : LOWP_OK;
}

/* choose the slice widths sA + sB = budget and counts nA, nB by cost, in
   DGEMM multiply-adds; the all-accumulator cost is the bar. Equal widths
   may use any counts (diagonals summed in int64, "D form"); unequal ones
   only the 128-bit W form. Forced: equal widths, every sliceable row and
   column covered. LOWP__NOT_USED when the accumulator wins. */
static int oz_choose(oz_t *z) {
  double R = z->narrow ? ACC_COST : ACC_COST_GENERAL;
  double best = z->forced ? INFINITY : R * (double)z->k * (double)z->m * (double)z->n;
  int cand, budget = z->budget;
  /* candidates: (xa, budget - xa) for xa = 1 .. budget - 1, and the equal
     split (budget/2, budget/2) last; forced: only the equal split */
  for (cand = z->forced ? budget - 1 : 0; cand < budget; cand++) {
    int eq = cand == budget - 1;
    int xa = eq ? budget / 2 : cand + 1;
    int xb = eq ? budget / 2 : budget - xa;
    /* an engine with narrow inputs caps each width (the sum then stays
       below the budget); the equal split stays equal */
    if (eq && xa > z->cap) xa = xb = z->cap;
    if (!eq && xa > z->cap) continue;
    if (xb > z->cap) xb = z->cap;
    oz_candidate(z, xa, xb, R, &best);
  }
  if (z->tok) oz_trunc_choose(z, R, &best);
  if (z->nA == 0) return LOWP__NOT_USED;
  /* testing only: breaks the budget by extra bits (the W form's shifts
     follow sA; the D form needs sA == sB, so the hook is for W only) */
  if (z->extra && !z->wmode) return LOWP__NOT_USED;
  z->sA0 = z->sA;
  if (z->extra) z->sA = budget - z->sB + z->extra; /* sA + sB = budget + extra (past a cap too) */
  if (z->wmode && !w_fits(z->sA, z->nA, z->sB, z->nB)) return LOWP__NOT_USED;
  z->wide = z->wmode && w_shift(z->sA, z->nA, z->sB, z->nB) > W_ONE;
  return LOWP_OK;
}

/* the sets: rows/columns sliced (ri, cj) and left to the accumulator */
static int oz_sets(oz_t *z) {
  size_t i, j, nrf = 0, ncf = 0, m = z->m, n = z->n;
  z->ri = malloc(m * sizeof *z->ri);
  z->rf = malloc(m * sizeof *z->rf);
  z->cj = malloc(n * sizeof *z->cj);
  z->cf = malloc(n * sizeof *z->cf);
  z->ea = malloc(m * sizeof *z->ea);
  z->eb = malloc(n * sizeof *z->eb);
  if (!z->ri || !z->rf || !z->cj || !z->cf || !z->ea || !z->eb) return LOWP_ENOMEM;
  if (z->trunc) return oz_trunc_sets(z);
  for (i = 0; i < m; i++) {
    int q = need_slices(&z->na[i], z->sA0); /* as chosen: the hook only widens */
    if (q >= 1 && q <= z->nA) {
      z->ea[z->ma] = z->na[i].any ? z->na[i].emax : 0;
      z->ri[z->ma++] = i;
    } else z->rf[nrf++] = i;
  }
  for (j = 0; j < n; j++) {
    int q = need_slices(&z->nb[j], z->sB);
    if (q >= 1 && q <= z->nB) {
      z->eb[z->nbc] = z->nb[j].any ? z->nb[j].emax : 0;
      z->cj[z->nbc++] = j;
    } else z->cf[ncf++] = j;
  }
  return (z->ma == 0 || z->nbc == 0) ? LOWP__NOT_USED : LOWP_OK;
}

/* the slices' buffers; LOWP__NOT_USED when they do not fit (the
   accumulator then does the whole product: nothing was written yet) */
static int oz_alloc(oz_t *z) {
  size_t ma = z->ma, nbc = z->nbc, k = z->k, j;
  z->nd = z->wmode ? 0 : z->trunc ? (size_t)z->trunc : (size_t)(z->nA + z->nB - 1);
  if (lowp__mul_overflows(ma, k) || lowp__mul_overflows(ma * k, (size_t)z->nA * sizeof(double)) ||
      lowp__mul_overflows(nbc, k) || lowp__mul_overflows(nbc * k, (size_t)z->nB * sizeof(double)) ||
      lowp__mul_overflows(ma, nbc) ||
      lowp__mul_overflows(ma * nbc, (z->nd + 2) * sizeof(int64_t)) || ma > INT_MAX ||
      nbc > INT_MAX || k > INT_MAX)
    return LOWP__NOT_USED;
  z->As = malloc((size_t)z->nA * ma * k * sizeof *z->As);
  z->Bs = malloc((size_t)z->nB * nbc * k * sizeof *z->Bs);
  z->Ct = malloc(ma * nbc * sizeof *z->Ct);
  if (z->wmode) z->V = calloc(ma * nbc, sizeof *z->V);
  else z->D = calloc(z->nd * ma * nbc, sizeof *z->D);
  if (z->wide) z->Vh = calloc(ma * nbc, sizeof *z->Vh);
  z->bsum = calloc((size_t)z->nB * k, sizeof *z->bsum);
  z->fail = calloc(ma, 1);
  if (z->trunc && !(z->und = calloc(ma * nbc, 1))) return LOWP__NOT_USED;
  z->fb1 = malloc(nbc * sizeof *z->fb1);
  z->fb2 = malloc(nbc * sizeof *z->fb2);
  if (!z->As || !z->Bs || !z->Ct || (!z->V && !z->D) || (z->wide && !z->Vh) || !z->bsum ||
      !z->fail || !z->fb1 || !z->fb2)
    return LOWP__NOT_USED;
  for (j = 0; j < nbc; j++) scale_of(z->eb[j], &z->fb1[j], &z->fb2[j]);
  return LOWP_OK;
}

/* split: As[t] is ma x k, Bs[u] is k x nbc, both row-major. With the test
   hook (sA one bit wider than chosen), nA slices of sA bits still cover
   every row: they hold more bits than before. */
static void oz_split(oz_t *z) {
  size_t ma = z->ma, nbc = z->nbc, k = z->k;
  long long xi;
#pragma omp parallel for schedule(static) if (ma * k > PAR_MIN)
  for (xi = 0; xi < (long long)ma; xi++) {
    size_t x = (size_t)xi, ll;
    const double *ar = z->a + z->ri[x] * k;
    double f1, f2, p = ldexp(1.0, z->sA);
    scale_of(z->ea[x], &f1, &f2);
    for (ll = 0; ll < k; ll++) cut(z->As + x * k + ll, ma * k, (ar[ll] * f1) * f2, z->nA, p);
  }
#pragma omp parallel for schedule(static) if (nbc * k > PAR_MIN)
  for (xi = 0; xi < (long long)k; xi++) {
    size_t ll = (size_t)xi, y;
    int u;
    double p = ldexp(1.0, z->sB);
    for (y = 0; y < nbc; y++)
      cut(z->Bs + ll * nbc + y, nbc * k, (z->b[ll * z->n + z->cj[y]] * z->fb1[y]) * z->fb2[y],
          z->nB, p);
    /* B_u 1 modulo 2^64 (entries are integers below 2^52) */
    for (u = 0; u < z->nB; u++) {
      uint64_t acc = 0;
      const double *br = z->Bs + (size_t)u * nbc * k + ll * nbc;
      for (y = 0; y < nbc; y++) acc += (uint64_t)(int64_t)br[y];
      z->bsum[(size_t)u * k + ll] = acc;
    }
  }
}

/* add the DGEMM result Ct of slice pair (ta, tb) into D or V, after the
   exactness checks (integer entries in range, row checksums mod 2^64) */
static void oz_collect(oz_t *z, int ta, int tb, const lowp__csr_t *only) {
  size_t ma = z->ma, nbc = z->nbc, k = z->k;
  int64_t *Dd = z->D ? z->D + (size_t)(ta + tb) * ma * nbc : NULL;
  int sh = z->sA * (z->nA - 1 - ta) + z->sB * (z->nB - 1 - tb);
  const double *At = z->As + (size_t)ta * ma * k;
  long long xi;
#pragma omp parallel for schedule(static) if (ma * (k + nbc) > PAR_MIN)
  for (xi = 0; xi < (long long)ma; xi++) {
    size_t x = (size_t)xi, y, ll;
    uint64_t want = 0, got = 0;
    const double *cr = z->Ct + x * nbc;
    const uint64_t *bs = z->bsum + (size_t)tb * k;
    int bad = 0;
    /* a row of a sparse A_ta without nonzeros: its C_tu row is zero */
    if (only && only->ptr[x] == only->ptr[x + 1]) continue;
    for (ll = 0; ll < k; ll++) want += (uint64_t)(int64_t)At[x * k + ll] * bs[ll];
    /* each entry an integer of magnitude <= 2^E (E <= 53, so the
       conversion is exact and undoes nothing but a fraction), added as it
       is checked: a row that fails is recomputed whole by the accumulator,
       so what it added no longer matters */
    {
      int64_t *dr = Dd ? Dd + x * nbc : NULL;
      i128 *vr = z->Vh && sh >= 64 ? z->Vh + x * nbc : z->V ? z->V + x * nbc : NULL;
      int s2 = z->Vh && sh >= 64 ? sh - 64 : sh;
      const double E = z->emax_entry;
      for (y = 0; y < nbc; y++) {
        const double v = cr[y];
        int64_t q;
        if (!(fabs(v) <= E)) break;
        q = (int64_t)v;
        if ((double)q != v) break;
        got += (uint64_t)q;
        if (dr) dr[y] += q;
        else vr[y] += (i128)((u128)(i128)q << s2); /* two's complement: q 2^s2 */
      }
      bad = y < nbc;
    }
    if (bad || got != want) z->fail[x] = 1;
  }
}

/* the nonzeros of x[0 .. len) */
static size_t count_nonzero(const double *x, size_t len) {
  size_t q = 0;
  long long i;
#pragma omp parallel for schedule(static) reduction(+ : q) if (len > PAR_MIN)
  for (i = 0; i < (long long)len; i++) q += x[i] != 0.0;
  return q;
}

/* the nonzeros of every slice of A and B */
static void oz_count(oz_t *z) {
  size_t la = z->ma * z->k, lb = z->nbc * z->k;
  int t;
  for (t = 0; t < z->nA; t++) z->nzA[t] = count_nonzero(z->As + (size_t)t * la, la);
  for (t = 0; t < z->nB; t++) z->nzB[t] = count_nonzero(z->Bs + (size_t)t * lb, lb);
}

/* how to multiply slices ta, tb: 0 a DGEMM, 1 from A_ta's nonzeros, 2 from
   B_tb's (the cheaper by the cost model; the test hook may force one) */
static int oz_how(const oz_t *z, int ta, int tb) {
  double ma = (double)z->ma, nbc = (double)z->nbc, dense = (double)z->k * ma * nbc;
  double qa = (double)z->nzA[ta], qb = (double)z->nzB[tb];
  double ca = (SPARSE_COST_A * qa - PAIR_COST * (qa < ma ? ma - qa : 0.0)) * nbc;
  double cb = SPARSE_COST_B * qb * ma;
  if (z->sparse != 0) return z->sparse < 0 ? 0 : z->sparse;
  if (ca < dense && ca <= cb) return 1;
  return cb < dense ? 2 : 0;
}

/* C_tu = A_ta B_tb into z->Ct, exactly: a DGEMM (or the engine hook), or
   the sparse kernels of ozaki_sparse.c (a DGEMM if their rows cannot be
   allocated) */
static int oz_product(oz_t *z, int ta, int tb, int *how_out) {
  size_t ma = z->ma, nbc = z->nbc, k = z->k;
  const double *At = z->As + (size_t)ta * ma * k, *Bt = z->Bs + (size_t)tb * nbc * k;
  int how = oz_how(z, ta, tb);
  *how_out = 0;
  if (how == 1 && !z->spA[ta].ptr && lowp__csr_build(&z->spA[ta], At, ma, k)) {
    lowp__csr_free(&z->spA[ta]);
    how = 0;
  }
  if (how == 2 && !z->spB[tb].ptr && lowp__csr_build(&z->spB[tb], Bt, k, nbc)) {
    lowp__csr_free(&z->spB[tb]);
    how = 0;
  }
  *how_out = how;
  if (how == 1) lowp__spmm_a(z->Ct, &z->spA[ta], Bt, ma, nbc, k);
  if (how == 2) lowp__spmm_b(z->Ct, At, &z->spB[tb], ma, nbc, k);
  if (how && z->stats) z->stats->sparse_products++;
  if (how) return LOWP_OK;
  if (z->opt && z->opt->dgemm) {
    int err = z->opt->dgemm(z->opt->dgemm_ctx, ma, nbc, k, At, Bt, z->Ct);
    if (err) return err;
  } else {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)ma, (int)nbc, (int)k, 1.0, At,
                (int)k, Bt, (int)nbc, 0.0, z->Ct, (int)nbc);
  }
  if (z->stats) z->stats->dgemm_calls++;
  return LOWP_OK;
}

/* one exact product per slice pair; threads set explicitly (the result
   cannot depend on them: every operation is exact) */
static int oz_dgemms(oz_t *z) {
  double total = z->trunc ? trunc_pairs(z->trunc, z->nA, z->nB) : (double)z->nA * z->nB, done = 0;
  int ta, tb, err, how;
  openblas_set_num_threads(omp_get_max_threads());
  oz_count(z);
  for (ta = 0; ta < z->nA; ta++)
    for (tb = 0; tb < z->nB; tb++) {
      if (z->trunc && ta + tb >= z->trunc) continue; /* dropped: bounded instead */
      err = oz_product(z, ta, tb, &how);
      if (err) return err;
      oz_collect(z, ta, tb, how == 1 ? &z->spA[ta] : NULL);
      if (z->prog) lowp__progress_set(z->prog, 0.8 * ++done / total);
    }
  return LOWP_OK;
}

/* 192-bit magnitudes as three 64-bit limbs, w[0] the lowest */
static void w3_shr(uint64_t *o, const uint64_t *w, int d) { /* o = w >> d, 0 <= d < 192 */
  int i, q = d / 64, r = d % 64;
  for (i = 0; i < 3; i++) {
    uint64_t a = i + q < 3 ? w[i + q] : 0, b = i + q + 1 < 3 ? w[i + q + 1] : 0;
    o[i] = r ? (a >> r) | (b << (64 - r)) : a;
  }
}

static int w3_len(const uint64_t *w) { /* bit length */
  int i;
  for (i = 2; i >= 0; i--)
    if (w[i]) return 64 * i + 64 - __builtin_clzll(w[i]);
  return 0;
}

/* the exact value of output (x, y) of the W form, V 2^e0: V's magnitude in
   w, its sign returned. V = Vh 2^64 + Vl = hi 2^64 + lo, lo = Vl mod 2^64. */
static int oz_value(const oz_t *z, size_t x, size_t y, uint64_t *w) {
  i128 vl = z->V[x * z->nbc + y], hi;
  uint64_t lo = (uint64_t)vl;
  int neg;
  hi = (vl - (i128)lo) / ((i128)1 << 64); /* exact: vl - lo is a multiple of 2^64 */
  if (z->Vh) hi += z->Vh[x * z->nbc + y];
  neg = hi < 0;
  if (neg) { /* two's complement of the 192-bit hi 2^64 + lo */
    hi = -hi - (lo != 0);
    lo = (uint64_t)0 - lo;
  }
  w[0] = lo;
  w[1] = (uint64_t)(u128)hi;
  w[2] = (uint64_t)((u128)hi >> 64);
  return neg;
}

/* output (x, y) of the W form: V 2^e0 rounded straight from its top 64
   bits and a sticky bit, as lowp_acc_round does from the accumulator;
   returns 0 when zero or C0 need the accumulator (acc then holds V 2^e0) */
/* *y = (-1)^neg w 2^e0 rounded (w nonzero, 192 bits): its top 64 bits and
   a sticky bit, as lowp_acc_round does from the accumulator */
/* what lowp_round_sig reads of a nonzero w: its top 64 bits, a sticky bit
   for the rest; returns w's bit length */
static int w3_sig(const uint64_t *w, uint64_t *sig, int *sticky) {
  uint64_t t[3];
  int L = w3_len(w), sh = L - 64, i;
  *sticky = 0;
  if (sh <= 0) {
    *sig = w[0] << (64 - L);
  } else {
    w3_shr(t, w, sh);
    *sig = t[0];
    for (i = 0; i < sh / 64; i++) *sticky |= w[i] != 0;
    if (sh % 64) *sticky |= (w[sh / 64] & ((UINT64_C(1) << (sh % 64)) - 1)) != 0;
  }
  return L;
}

static void w3_round(double *y, int neg, const uint64_t *w, int64_t e0, const oz_t *z,
                     size_t idx) {
  uint64_t sig;
  int sticky, L = w3_sig(w, &sig, &sticky);
  (void)lowp_round_sig(y, neg, e0 + L - 1, sig, sticky, z->f, z->pol, z->rnd,
                       lowp__exact_index(z->pol, idx));
}

static int oz_round_w(const oz_t *z, size_t x, size_t y, lowp_acc_t *acc) {
  size_t idx = z->ri[x] * z->n + z->cj[y];
  uint64_t w[3], t[3];
  int64_t e0 = (int64_t)z->ea[x] + z->eb[y] - (int64_t)z->sA * z->nA - (int64_t)z->sB * z->nB;
  int neg = oz_value(z, x, y, w), L = w3_len(w), i;
  if (L && !z->c0) {
    w3_round(&z->c[idx], neg, w, e0, z, idx);
    return 1;
  }
  lowp_acc_reset(acc);
  if (L) {
    if (e0 < LOWP_ACC_LSB) {
      /* every slice part is a multiple of 2^-1074, so V 2^e0 is a
         multiple of 2^-2148 > 2^LOWP_ACC_LSB: the shift drops zeros */
      w3_shr(t, w, (int)(LOWP_ACC_LSB - e0));
      memcpy(w, t, sizeof t);
      e0 = LOWP_ACC_LSB;
    }
    for (i = 0; i < 3; i++)
      if (w[i]) lowp_acc_add_int(acc, w[i], (int)e0 + 64 * i, neg);
  }
  return 0;
}

/* output (x, y) of the D form into acc: the diagonals' int64 sums */
static void oz_sum_d(const oz_t *z, size_t x, size_t y, lowp_acc_t *acc) {
  size_t d, ma = z->ma, nbc = z->nbc;
  lowp_acc_reset(acc);
  for (d = 0; d < z->nd; d++) {
    int64_t v = z->D[d * ma * nbc + x * nbc + y];
    int e = z->ea[x] + z->eb[y] - z->sA * (int)(d + 2);
    uint64_t mag = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
    if (v == 0) continue;
    if (e < LOWP_ACC_LSB) { /* as in oz_round_w */
      mag >>= LOWP_ACC_LSB - e;
      e = LOWP_ACC_LSB;
    }
    lowp_acc_add_int(acc, mag, e, v < 0);
  }
}


/* truncated form: 1 when output (x, y) dropped nothing (every nonzero
   slice pair has t + u < D) */
static int oz_trunc_exact(const oz_t *z, size_t x, size_t y) {
  int qa = z->qa[x], qb = z->qb[y];
  return qa == 0 || qb == 0 || qa + qb - 1 <= z->trunc;
}

/* V += q 2^sh for a 192-bit two's complement V = hi 2^64 + lo (|q| < 2^59,
   sh <= W_WIDE: the term stays below 2^127 in either word) */
static void v3_add(i128 *hi, uint64_t *lo, int64_t q, int sh) {
  if (sh >= 64) {
    *hi += (i128)((u128)(i128)q << (sh - 64));
  } else {
    i128 t = (i128)((u128)(i128)q << sh);
    uint64_t l = (uint64_t)(u128)t, o = *lo;
    *lo = o + l;
    *hi += (t >> 64) + (*lo < o); /* arithmetic shift: floor(t / 2^64) */
  }
}

/* *y = V 2^e0 rounded; 0 when V is zero (an endpoint at zero: in doubt) */
/* the inputs of lowp_round_sig for V = hi 2^64 + lo: sign, exponent of
   the top bit (V 2^e0), top 64 bits, sticky; 0 when V is zero */
typedef struct {
  int neg, sticky;
  int64_t e;
  uint64_t sig;
} v3_sig_t;

static int v3_sig(v3_sig_t *r, i128 hi, uint64_t lo, int64_t e0) {
  uint64_t w[3];
  r->neg = hi < 0;
  if (r->neg) { /* the magnitude of hi 2^64 + lo, as in oz_value */
    hi = -hi - (lo != 0);
    lo = (uint64_t)0 - lo;
  }
  w[0] = lo;
  w[1] = (uint64_t)(u128)hi;
  w[2] = (uint64_t)((u128)hi >> 64);
  if (!w3_len(w)) return 0;
  r->e = e0 + w3_sig(w, &r->sig, &r->sticky) - 1;
  return 1;
}

static void v3_round(double *y, const v3_sig_t *r, const oz_t *z, size_t idx) {
  (void)lowp_round_sig(y, r->neg, r->e, r->sig, r->sticky, z->f, z->pol, z->rnd,
                       lowp__exact_index(z->pol, idx));
}

/* truncated form with s (D - 1) <= W_WIDE: S_hi = V 2^e0, V = sum_d D_d
   2^(s (D-1-d)) (|D_d| < 24 2^53, so |V| < 2^(s (D-1) + 59) <= 2^189) in
   192-bit integers, and the bound 2^eB = 2^(s + extra) units of 2^e0;
   1 (output written) when V - that and V + that round to the same bits.
   Both ends usually share what lowp_round_sig reads (the bound sits far
   below their top 64 bits, both sticky): then one rounding serves both. */
static int oz_trunc_decide_v(const oz_t *z, size_t x, size_t y) {
  size_t idx = z->ri[x] * z->n + z->cj[y], d, mn = z->ma * z->nbc;
  int64_t e0 = (int64_t)z->ea[x] + z->eb[y] - (int64_t)z->sA * (z->trunc + 1);
  int bs = z->sA + trunc_extra(z->trunc, z->k);
  i128 hi = 0, h1, h2;
  uint64_t lo = 0, l1, l2;
  double r1, r2;
  v3_sig_t g1, g2;
  for (d = 0; d < z->nd; d++)
    v3_add(&hi, &lo, z->D[d * mn + x * z->nbc + y], z->sA * (z->trunc - 1 - (int)d));
  h1 = h2 = hi, l1 = l2 = lo;
  v3_add(&h1, &l1, -1, bs);
  v3_add(&h2, &l2, 1, bs);
  if (!v3_sig(&g1, h1, l1, e0) || !v3_sig(&g2, h2, l2, e0)) return 0;
  v3_round(&r1, &g1, z, idx);
  if (g1.neg != g2.neg || g1.e != g2.e || g1.sig != g2.sig || g1.sticky != g2.sticky) {
    v3_round(&r2, &g2, z, idx);
    if (memcmp(&r1, &r2, sizeof r1) != 0) return 0;
  }
  z->c[idx] = r1;
  return 1;
}

/* truncated form: 1 (output written) when S_hi - 2^eB and S_hi + 2^eB
   round to the same bits (S_hi: the kept diagonals, summed into acc afresh
   for each end, since lowp_acc_round leaves |value| in acc). A bound below
   the accumulator's window is raised to its lowest bit (still a bound). */
static int oz_trunc_decide(const oz_t *z, size_t x, size_t y, lowp_acc_t *acc) {
  size_t idx = z->ri[x] * z->n + z->cj[y];
  uint64_t index = lowp__exact_index(z->pol, idx);
  long eB = (long)z->ea[x] + z->eb[y] - (long)z->sA * z->trunc + trunc_extra(z->trunc, z->k);
  double lo, hi;
  if (z->sA * (z->trunc - 1) <= W_WIDE && z->sA + trunc_extra(z->trunc, z->k) <= W_WIDE)
    return oz_trunc_decide_v(z, x, y);
  if (eB > 2176 - 96 - 2) return 0;
  if (eB < LOWP_ACC_LSB) eB = LOWP_ACC_LSB;
  oz_sum_d(z, x, y, acc);
  lowp_acc_add_int(acc, 1, (int)eB, 1);
  (void)lowp_acc_round(&lo, acc, z->f, z->pol, z->rnd, index);
  oz_sum_d(z, x, y, acc);
  lowp_acc_add_int(acc, 1, (int)eB, 0);
  (void)lowp_acc_round(&hi, acc, z->f, z->pol, z->rnd, index);
  if (memcmp(&lo, &hi, sizeof lo) != 0) return 0;
  z->c[idx] = lo;
  return 1;
}

/* truncated form: the outputs in doubt (rows that passed the check) to the
   accumulator, one by one; counts for the statistics */
static int oz_trunc_rest(oz_t *z) {
  size_t x, y, q = 0, *out;
  int err;
  for (x = 0; x < z->ma; x++)
    for (y = 0; y < z->nbc && !z->fail[x]; y++) {
      z->ntdec += z->und[x * z->nbc + y] == 1;
      z->ntund += z->und[x * z->nbc + y] == 2;
    }
  if (!z->ntund) return LOWP_OK;
  out = malloc(z->ntund * sizeof *out);
  if (!out) return LOWP_ENOMEM;
  for (x = 0; x < z->ma; x++)
    for (y = 0; y < z->nbc && !z->fail[x]; y++)
      if (z->und[x * z->nbc + y] == 2) out[q++] = z->ri[x] * z->n + z->cj[y];
  err = lowp__exact_gemm_acc_list(z->c, z->a, z->b, z->c0, z->n, z->k, out, q, z->f, z->pol,
                                  z->rnd);
  free(out);
  return err;
}

/* combine exactly and round once per output */
static void oz_combine(oz_t *z) {
  long long xi;
#pragma omp parallel if (z->ma * z->nbc > PAR_MIN / 16)
  {
    lowp_acc_t acc;
    lowp_acc_init(&acc);
#pragma omp for schedule(dynamic, 4)
    for (xi = 0; xi < (long long)z->ma; xi++) {
      size_t x = (size_t)xi, y;
      if (z->fail[x]) continue;
      for (y = 0; y < z->nbc; y++) {
        if (z->V) {
          if (oz_round_w(z, x, y, &acc)) continue;
        } else {
          if (z->trunc && !oz_trunc_exact(z, x, y)) {
            z->und[x * z->nbc + y] = oz_trunc_decide(z, x, y, &acc) ? 1 : 2;
            continue;
          }
          oz_sum_d(z, x, y, &acc);
        }
        lowp__exact_gemm_finish(z->c, &acc, z->a + z->ri[x] * z->k, z->b, z->n, z->c0,
                                z->ri[x], z->cj[y], z->k, z->f, z->pol, z->rnd);
      }
    }
  }
}

/* what the slices did not cover: failed rows join the accumulator's rows */
static int oz_rest(oz_t *z) {
  size_t m = z->m, n = z->n, nrf = m - z->ma, ncf = n - z->nbc, x, ok = 0, nfail = 0;
  int err = z->trunc ? oz_trunc_rest(z) : LOWP_OK; /* before ri is compacted */
  for (x = 0; x < z->ma; x++)
    if (z->fail[x]) { z->rf[nrf++] = z->ri[x]; nfail++; }
    else z->ri[ok++] = z->ri[x];
  if (z->prog) { z->prog->lo = 0.8; z->prog->hi = 0.9; }
  if (!err && nrf)
    err = lowp__exact_gemm_acc(z->c, z->a, z->b, z->c0, m, n, z->k, z->rf, nrf, NULL, n, z->f,
                               z->pol, z->rnd, z->prog);
  if (z->prog) { z->prog->lo = 0.9; z->prog->hi = 1.0; }
  if (!err && ncf && ok)
    err = lowp__exact_gemm_acc(z->c, z->a, z->b, z->c0, m, n, z->k, z->ri, ok, z->cf, ncf, z->f,
                               z->pol, z->rnd, z->prog);

  if (z->prog) lowp__progress_set(z->prog, 1.0);
  if (z->stats) {
    z->stats->slices_a = z->nA;
    z->stats->slices_b = z->nB;
    z->stats->slice_bits_a = z->sA;
    z->stats->slice_bits_b = z->sB;
    z->stats->sliced_outputs = ok * z->nbc - z->ntund;
    z->stats->fallback_outputs = m * n - ok * z->nbc + z->ntund;
    z->stats->trunc_diagonals = z->trunc;
    z->stats->trunc_decided = z->ntdec;
    z->stats->trunc_undecided = z->ntund;
    z->stats->check_failed_rows = nfail;
  }
  return err;
}

static void oz_free(oz_t *z) {
  int t;
  free(z->na), free(z->nb), free(z->ri), free(z->rf), free(z->cj), free(z->cf);
  free(z->ea), free(z->eb), free(z->As), free(z->Bs), free(z->fb1), free(z->fb2);
  free(z->Ct), free(z->D), free(z->V), free(z->Vh), free(z->bsum), free(z->fail);
  free(z->cbA), free(z->qa), free(z->qb), free(z->und);
  for (t = 0; t < LOWP__OZAKI_MAXSLICES; t++) {
    lowp__csr_free(&z->spA[t]);
    lowp__csr_free(&z->spB[t]);
  }
}

int lowp__exact_gemm_sliced(double *c, const double *a, const double *b, const double *c0,
                            size_t m, size_t n, size_t k, const lowp_format_t *f,
                            const lowp_policy_t *pol, lowp_rounding_t rnd,
                            const lowp_gemm_opts_t *opt, lowp__progress_t *prog,
                            lowp_gemm_stats_t *stats) {
  oz_t z;
  int ebits = opt && opt->engine_bits ? opt->engine_bits : 53, err;
  memset(&z, 0, sizeof z);
  z.c = c, z.a = a, z.b = b, z.c0 = c0, z.m = m, z.n = n, z.k = k;
  z.f = f, z.pol = pol, z.rnd = rnd, z.opt = opt, z.prog = prog, z.stats = stats;
  z.forced = opt && opt->method == LOWP_GEMM_SLICED;
  z.extra = opt ? opt->test_extra_bits : 0;
  z.cap = opt && opt->slice_bits_max ? opt->slice_bits_max : 64;
  /* The choice (widths, counts, the rows and columns sliced, which pairs
     go sparse) never looks at the engine hook: the hook only replaces
     cblas_dgemm for the pairs multiplied densely, so a GPU run takes the
     CPU's path by construction (tests/texact_ozaki_twin.c). The sparse
     kernels run in binary64 for any engine: every partial sum is an integer
     below 2^engine_bits <= 2^53, exact. The budget-breaking hook keeps the
     DGEMM its test expects. */
  z.sparse = opt ? opt->test_sparse : 0;
  if (z.extra) z.sparse = -1;
  if (z.sparse < -1 || z.sparse > 2) return LOWP_EINVAL;
  z.topt = opt ? opt->test_trunc : 0;
  if (z.topt < -1 || z.topt > LOWP__OZAKI_MAXSLICES) return LOWP_EINVAL;
  /* the bound decides only deterministic roundings of A B alone */
  z.tok = z.topt >= 0 && !c0 && rnd != LOWP_RND_SR && !z.extra;
  /* sA + sB + ceil(log2 k) <= engine bits (53: binary64 DGEMM) */
  if (ebits < 2 || ebits > 53 || z.cap < 1) return LOWP_EINVAL;
  z.budget = ebits - clog2(k);
  if (z.budget < 2 || k > ((size_t)1 << 50)) return LOWP__NOT_USED;
  z.emax_entry = ldexp(1.0, ebits);
  err = oz_needs(&z);
  if (!err) err = oz_spans(&z);
  if (!err) err = oz_choose(&z);
  if (!err) err = oz_sets(&z);
  if (!err) err = oz_alloc(&z);
  if (!err) {
    oz_split(&z);
    err = oz_dgemms(&z);
  }
  if (!err) {
    oz_combine(&z);
    err = oz_rest(&z);
  }
  oz_free(&z);
  return err;
}
