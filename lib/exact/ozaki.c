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
 *    nA nB ma nb k DGEMM multiply-adds + R k per output left to the
 *    accumulator (R = ACC_COST multiply-adds of DGEMM time). The result does
 *    not depend on the choice.
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

/* W form: the exact value of output (x, y) as one signed 128-bit integer V
   times 2^(ea + eb - sA nA - sB nB), V = sum_tu C_tu 2^(sA (nA-1-t) + sB (nB-1-u)).
   |C_tu| <= 2^53 and the geometric sums of the shifts are below 2^(SH+2),
   SH = sA (nA-1) + sB (nB-1), so |V| < 2^(SH + 55): it fits when SH <= 70. */
static int w_fits(int sA, int nA, int sB, int nB) {
  return sA * (nA - 1) + sB * (nB - 1) <= 70;
}

int lowp__exact_gemm_sliced(double *c, const double *a, const double *b, const double *c0,
                            size_t m, size_t n, size_t k, const lowp_format_t *f,
                            const lowp_policy_t *pol, lowp_rounding_t rnd,
                            const lowp_gemm_opts_t *opt, lowp__progress_t *prog,
                            lowp_gemm_stats_t *stats) {
  int budget, sA0, sA = 0, sB = 0, nA = 0, nB = 0, ta, tb, err = LOWP_OK, narrow = 1, wmode = 0;
  int forced = opt && opt->method == LOWP_GEMM_SLICED, extra = opt ? opt->test_extra_bits : 0;
  int ebits = opt && opt->engine_bits ? opt->engine_bits : 53;
  int cap = opt && opt->slice_bits_max ? opt->slice_bits_max : 64;
  double emax_entry; /* the largest magnitude an engine result may have */
  need_t *na = NULL, *nb_ = NULL;
  size_t i, j, l, ma = 0, nbc = 0, nfail = 0, nd = 0;
  size_t *ri = NULL, *cj = NULL, *rf = NULL, *cf = NULL;
  double *As = NULL, *Bs = NULL, *Ct = NULL, *fb1 = NULL, *fb2 = NULL, best, total;
  int64_t *D = NULL;
  i128 *V = NULL;
  uint64_t *bsum = NULL;
  unsigned char *fail = NULL;
  int *ea = NULL, *eb = NULL;
  long long xi;

  /* sA + sB + ceil(log2 k) <= engine bits (53: binary64 DGEMM) */
  if (ebits < 2 || ebits > 53 || cap < 1) return LOWP_EINVAL;
  budget = ebits - clog2(k);
  if (budget < 2 || k > ((size_t)1 << 50)) return LOWP__NOT_USED;
  emax_entry = ldexp(1.0, ebits);

  /* per-row and per-column needs */
  na = malloc(m * sizeof *na);
  nb_ = malloc(n * sizeof *nb_);
  if (!na || !nb_) { err = LOWP_ENOMEM; goto done; }
#pragma omp parallel for schedule(static)
  for (xi = 0; xi < (long long)m; xi++) {
    need_t r = {1, 0, 0, 0, 1};
    size_t ll;
    for (ll = 0; ll < k; ll++) need_add(&r, a[(size_t)xi * k + ll]);
    na[xi] = r;
  }
  for (j = 0; j < n; j++) {
    need_t r = {1, 0, 0, 0, 1};
    nb_[j] = r;
  }
  for (l = 0; l < k; l++)
    for (j = 0; j < n; j++) need_add(&nb_[j], b[l * n + j]);
  for (i = 0; i < m; i++)
    if (!na[i].narrow || !na[i].ok) narrow = 0;
  for (j = 0; j < n; j++)
    if (!nb_[j].narrow || !nb_[j].ok) narrow = 0;

  /* choose the slice widths sA + sB = budget and counts nA, nB by cost, in
     DGEMM multiply-adds; the all-accumulator cost is the bar. Equal widths
     may use any counts (diagonals summed in int64, "D form"); unequal ones
     only the 128-bit W form. Forced: equal widths, every sliceable row and
     column covered. */
  {
    double R = narrow ? ACC_COST : ACC_COST_GENERAL, K = (double)k;
    int cand;
    best = forced ? INFINITY : R * K * (double)m * (double)n;
    /* candidates: (xa, budget - xa) for xa = 1 .. budget - 1, and the equal
       split (budget/2, budget/2) last; forced: only the equal split */
    for (cand = forced ? budget - 1 : 0; cand < budget; cand++) {
      int eq = cand == budget - 1;
      int xa = eq ? budget / 2 : cand + 1;
      int xb = eq ? budget / 2 : budget - xa, maxa = 0, maxb = 0;
      /* an engine with narrow inputs caps each width (the sum then stays
         below the budget); the equal split stays equal */
      if (eq && xa > cap) xa = xb = cap;
      if (!eq && xa > cap) continue;
      if (xb > cap) xb = cap;
      size_t hista[LOWP__OZAKI_MAXSLICES + 1] = {0}, histb[LOWP__OZAKI_MAXSLICES + 1] = {0};
      size_t ca = 0, cb;
      for (i = 0; i < m; i++) {
        int q = need_slices(&na[i], xa);
        hista[q]++;
        if (q > maxa) maxa = q;
      }
      for (j = 0; j < n; j++) {
        int q = need_slices(&nb_[j], xb);
        histb[q]++;
        if (q > maxb) maxb = q;
      }
      for (ta = 1; ta <= maxa; ta++) {
        ca += hista[ta];
        cb = 0;
        for (tb = 1; tb <= maxb; tb++) {
          double cost;
          int w = w_fits(xa, ta, xb, tb);
          cb += histb[tb];
          if (!w && xa != xb) continue;
          if (forced)
            cost = (ta == maxa && tb == maxb) ? 0.0 : INFINITY;
          else
            cost = (double)ta * tb * (double)ca * (double)cb * (K + 4.0) +
                   R * K * ((double)m * (double)n - (double)ca * (double)cb);
          if (cost < best) { best = cost; nA = ta; nB = tb; sA = xa; sB = xb; wmode = w; }
        }
      }
    }
  }
  if (nA == 0) { err = LOWP__NOT_USED; goto done; }
  /* testing only: breaks the budget by extra bits (the W form's shifts
     follow sA; the D form needs sA == sB, so the hook is for W only) */
  if (extra && !wmode) { err = LOWP__NOT_USED; goto done; }
  sA0 = sA;
  if (extra) sA = budget - sB + extra; /* sA + sB = budget + extra (past a cap too) */

  /* the sets: rows/columns sliced (ri, cj) and left to the accumulator */
  ri = malloc(m * sizeof *ri);
  rf = malloc(m * sizeof *rf);
  cj = malloc(n * sizeof *cj);
  cf = malloc(n * sizeof *cf);
  ea = malloc(m * sizeof *ea);
  eb = malloc(n * sizeof *eb);
  if (!ri || !rf || !cj || !cf || !ea || !eb) { err = LOWP_ENOMEM; goto done; }
  {
    size_t nrf = 0, ncf = 0;
    for (i = 0; i < m; i++) {
      int q = need_slices(&na[i], sA0); /* as chosen: the hook only widens */
      if (q >= 1 && q <= nA) { ea[ma] = na[i].any ? na[i].emax : 0; ri[ma++] = i; }
      else rf[nrf++] = i;
    }
    for (j = 0; j < n; j++) {
      int q = need_slices(&nb_[j], sB);
      if (q >= 1 && q <= nB) { eb[nbc] = nb_[j].any ? nb_[j].emax : 0; cj[nbc++] = j; }
      else cf[ncf++] = j;
    }
  }
  if (ma == 0 || nbc == 0) { err = LOWP__NOT_USED; goto done; }

  nd = wmode ? 0 : (size_t)(nA + nB - 1);
  if (lowp__mul_overflows(ma, k) || lowp__mul_overflows(ma * k, (size_t)nA * sizeof(double)) || lowp__mul_overflows(nbc, k) ||
      lowp__mul_overflows(nbc * k, (size_t)nB * sizeof(double)) || lowp__mul_overflows(ma, nbc) ||
      lowp__mul_overflows(ma * nbc, (nd + 2) * sizeof(int64_t)) || ma > INT_MAX || nbc > INT_MAX ||
      k > INT_MAX) {
    err = LOWP__NOT_USED;
    goto done;
  }
  As = malloc((size_t)nA * ma * k * sizeof *As);
  Bs = malloc((size_t)nB * nbc * k * sizeof *Bs);
  Ct = malloc(ma * nbc * sizeof *Ct);
  if (wmode) V = calloc(ma * nbc, sizeof *V);
  else D = calloc(nd * ma * nbc, sizeof *D);
  bsum = calloc((size_t)nB * k, sizeof *bsum);
  fail = calloc(ma, 1);
  /* the slices need more memory than the accumulator: if it is not there,
     the accumulator does the whole product (nothing was written yet) */
  if (!As || !Bs || !Ct || (!V && !D) || !bsum || !fail) { err = LOWP__NOT_USED; goto done; }

  fb1 = malloc(nbc * sizeof *fb1);
  fb2 = malloc(nbc * sizeof *fb2);
  if (!fb1 || !fb2) { err = LOWP__NOT_USED; goto done; }
  for (j = 0; j < nbc; j++) scale_of(eb[j], &fb1[j], &fb2[j]);

  /* split: As[t] is ma x k, Bs[u] is k x nbc, both row-major. With the test
     hook (sA one bit wider than chosen), nA slices of sA bits still cover
     every row: they hold more bits than before. */
#pragma omp parallel for schedule(static)
  for (xi = 0; xi < (long long)ma; xi++) {
    size_t x = (size_t)xi, ll;
    const double *ar = a + ri[x] * k;
    double f1, f2, p = ldexp(1.0, sA);
    scale_of(ea[x], &f1, &f2);
    for (ll = 0; ll < k; ll++) cut(As + x * k + ll, ma * k, (ar[ll] * f1) * f2, nA, p);
  }
#pragma omp parallel for schedule(static)
  for (xi = 0; xi < (long long)k; xi++) {
    size_t ll = (size_t)xi, y;
    int u;
    double p = ldexp(1.0, sB);
    for (y = 0; y < nbc; y++)
      cut(Bs + ll * nbc + y, nbc * k, (b[ll * n + cj[y]] * fb1[y]) * fb2[y], nB, p);
    /* B_u 1 modulo 2^64 (entries are integers below 2^52) */
    for (u = 0; u < nB; u++) {
      uint64_t acc = 0;
      const double *br = Bs + (size_t)u * nbc * k + ll * nbc;
      for (y = 0; y < nbc; y++) acc += (uint64_t)(int64_t)br[y];
      bsum[(size_t)u * k + ll] = acc;
    }
  }

  /* one exact DGEMM per slice pair; threads set explicitly (the result cannot
     depend on them: every operation is exact) */
  openblas_set_num_threads(omp_get_max_threads());
  total = (double)nA * nB;
  for (ta = 0; ta < nA; ta++)
    for (tb = 0; tb < nB; tb++) {
      int64_t *Dd = D ? D + (size_t)(ta + tb) * ma * nbc : NULL;
      int sh = sA * (nA - 1 - ta) + sB * (nB - 1 - tb);
      const double *At = As + (size_t)ta * ma * k;
      if (opt && opt->dgemm) {
        err = opt->dgemm(opt->dgemm_ctx, ma, nbc, k, At, Bs + (size_t)tb * nbc * k, Ct);
        if (err) goto done;
      } else {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)ma, (int)nbc, (int)k, 1.0,
                    At, (int)k, Bs + (size_t)tb * nbc * k, (int)nbc, 0.0, Ct, (int)nbc);
      }
      if (stats) stats->dgemm_calls++;
#pragma omp parallel for schedule(static)
      for (xi = 0; xi < (long long)ma; xi++) {
        size_t x = (size_t)xi, y, ll;
        uint64_t want = 0, got = 0;
        const double *cr = Ct + x * nbc;
        const uint64_t *bs = bsum + (size_t)tb * k;
        int bad = 0;
        for (ll = 0; ll < k; ll++) want += (uint64_t)(int64_t)At[x * k + ll] * bs[ll];
        for (y = 0; y < nbc; y++)
          if (!(fabs(cr[y]) <= emax_entry) || cr[y] != trunc(cr[y])) bad = 1;
        if (!bad) {
          for (y = 0; y < nbc; y++) got += (uint64_t)(int64_t)cr[y];
          if (Dd)
            for (y = 0; y < nbc; y++) Dd[x * nbc + y] += (int64_t)cr[y];
          else
            for (y = 0; y < nbc; y++) V[x * nbc + y] += (i128)(int64_t)cr[y] * ((i128)1 << sh);
        }
        if (bad || got != want) fail[x] = 1;
      }
      if (prog) lowp__progress_set(prog, 0.8 * (double)(ta * nB + tb + 1) / total);
    }

  /* combine exactly and round once per output */
#pragma omp parallel
  {
    lowp_acc_t acc;
    lowp_acc_init(&acc);
#pragma omp for schedule(dynamic, 4)
    for (xi = 0; xi < (long long)ma; xi++) {
      size_t x = (size_t)xi, y, d;
      if (fail[x]) continue;
      for (y = 0; y < nbc; y++) {
        size_t idx = ri[x] * n + cj[y];
        if (V) {
          /* V 2^e0: round straight from its top 64 bits and a sticky bit, as
             lowp_acc_round does from the accumulator; zero and C0 go
             through the accumulator */
          i128 v = V[x * nbc + y];
          u128 M = v < 0 ? (u128)(-v) : (u128)v;
          int64_t e0 = (int64_t)ea[x] + eb[y] - (int64_t)sA * nA - (int64_t)sB * nB;
          uint64_t hi = (uint64_t)(M >> 64), lo = (uint64_t)M, sig;
          int L, sticky;
          if (v != 0 && !c0) {
            L = hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll(lo); /* bit length */
            if (L > 64) {
              sig = (uint64_t)(M >> (L - 64));
              sticky = (M & (((u128)1 << (L - 64)) - 1)) != 0;
            } else {
              sig = lo << (64 - L);
              sticky = 0;
            }
            (void)lowp_round_sig(&c[idx], v < 0, e0 + L - 1, sig, sticky, f, pol, rnd,
                                 lowp__exact_index(pol, idx));
            continue;
          }
          lowp_acc_reset(&acc);
          if (v != 0) {
            if (e0 < LOWP_ACC_LSB) {
              /* every slice part is a multiple of 2^-1074, so V 2^e0 is a
                 multiple of 2^-2148 > 2^LOWP_ACC_LSB: the shift drops zeros */
              M >>= LOWP_ACC_LSB - e0;
              e0 = LOWP_ACC_LSB;
            }
            lowp_acc_add_int(&acc, (uint64_t)M, (int)e0, v < 0);
            lowp_acc_add_int(&acc, (uint64_t)(M >> 64), (int)e0 + 64, v < 0);
          }
        } else {
          lowp_acc_reset(&acc);
          for (d = 0; d < nd; d++) {
            int64_t v = D[d * ma * nbc + x * nbc + y];
            int e = ea[x] + eb[y] - sA * (int)(d + 2);
            uint64_t mag = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
            if (v == 0) continue;
            if (e < LOWP_ACC_LSB) { /* as above */
              mag >>= LOWP_ACC_LSB - e;
              e = LOWP_ACC_LSB;
            }
            lowp_acc_add_int(&acc, mag, e, v < 0);
          }
        }
        lowp__exact_gemm_finish(c, &acc, a + ri[x] * k, b, n, c0, ri[x], cj[y], k, f, pol,
                                rnd);
      }
    }
  }

  /* what the slices did not cover: failed rows join the accumulator's rows */
  {
    size_t nrf = m - ma, ncf = n - nbc, x, ok = 0;
    for (x = 0; x < ma; x++)
      if (fail[x]) { rf[nrf++] = ri[x]; nfail++; }
      else ri[ok++] = ri[x];
    if (prog) { prog->lo = 0.8; prog->hi = 0.9; }
    if (nrf) err = lowp__exact_gemm_acc(c, a, b, c0, m, n, k, rf, nrf, NULL, n, f, pol, rnd, prog);
    if (prog) { prog->lo = 0.9; prog->hi = 1.0; }
    if (!err && ncf && ok)
      err = lowp__exact_gemm_acc(c, a, b, c0, m, n, k, ri, ok, cf, ncf, f, pol, rnd, prog);
    if (prog) lowp__progress_set(prog, 1.0);
    if (stats) {
      stats->slices_a = nA;
      stats->slices_b = nB;
      stats->slice_bits_a = sA;
      stats->slice_bits_b = sB;
      stats->sliced_outputs = ok * nbc;
      stats->fallback_outputs = m * n - ok * nbc;
      stats->check_failed_rows = nfail;
    }
  }

done:
  free(na);
  free(nb_);
  free(ri);
  free(rf);
  free(cj);
  free(cf);
  free(ea);
  free(eb);
  free(As);
  free(Bs);
  free(fb1);
  free(fb2);
  free(Ct);
  free(D);
  free(V);
  free(bsum);
  free(fail);
  return err;
}
