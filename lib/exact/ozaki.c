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

/* x * 2^-e exactly, for a result in [2^-600, 1): in two steps when 2^-e
   alone would overflow */
static double scale_down(double x, int e) {
  if (e < -1000) return ldexp(1.0, 600) * (x * ldexp(1.0, -e - 600));
  return x * ldexp(1.0, -e);
}

/* Cut v = X in (-1, 1) (scaled) into ns slices of s bits, written to
   out[t * stride], t = 0..ns-1. Exact: T = X 2^s is a power-of-two scaling,
   h = trunc(T) and T - h are exact for binary64. */
static void cut(double *out, size_t stride, double X, int ns, int s) {
  double p = ldexp(1.0, s);
  int t;
  for (t = 0; t < ns; t++) {
    double T = X * p, h = trunc(T);
    out[(size_t)t * stride] = h;
    X = T - h;
  }
}

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

static int mul_ovf(size_t a, size_t b) { return b && a > (size_t)-1 / b; }

int lowp__exact_gemm_sliced(double *c, const double *a, const double *b, const double *c0,
                            size_t m, size_t n, size_t k, const lowp_format_t *f,
                            const lowp_policy_t *pol, lowp_rounding_t rnd,
                            const lowp_gemm_opts_t *opt, lowp__progress_t *prog,
                            lowp_gemm_stats_t *stats) {
  int s, nA = 0, nB = 0, ta, tb, maxa = 0, maxb = 0, err = LOWP_OK, narrow = 1, wide;
  need_t *na = NULL, *nb_ = NULL;
  int *sa = NULL, *sb = NULL;
  size_t hista[LOWP__OZAKI_MAXSLICES + 1] = {0}, histb[LOWP__OZAKI_MAXSLICES + 1] = {0};
  size_t i, j, l, ma = 0, nbc = 0, nfail = 0, nd;
  size_t *ri = NULL, *cj = NULL, *rf = NULL, *cf = NULL;
  double *As = NULL, *Bs = NULL, *Ct = NULL, best, total;
  int64_t *D = NULL;
  uint64_t *bsum = NULL;
  unsigned char *fail = NULL;
  int *ea = NULL, *eb = NULL;
  long long xi;

  s = (53 - clog2(k)) / 2 + (opt ? opt->test_extra_bits : 0);
  if (s < 1 || k > ((size_t)1 << 50)) return LOWP__NOT_USED;

  /* per-row and per-column needs */
  na = malloc(m * sizeof *na);
  nb_ = malloc(n * sizeof *nb_);
  sa = malloc(m * sizeof *sa);
  sb = malloc(n * sizeof *sb);
  if (!na || !nb_ || !sa || !sb) { err = LOWP_ENOMEM; goto done; }
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
  for (i = 0; i < m; i++) {
    sa[i] = need_slices(&na[i], s);
    hista[sa[i]]++;
    if (sa[i] > maxa) maxa = sa[i];
    if (!na[i].narrow || !na[i].ok) narrow = 0;
  }
  for (j = 0; j < n; j++) {
    sb[j] = need_slices(&nb_[j], s);
    histb[sb[j]]++;
    if (sb[j] > maxb) maxb = sb[j];
    if (!nb_[j].narrow || !nb_[j].ok) narrow = 0;
  }
  if (maxa == 0 || maxb == 0) { err = LOWP__NOT_USED; goto done; }

  /* choose nA, nB: cost in DGEMM multiply-adds; all-accumulator is the bar */
  {
    double R = narrow ? ACC_COST : ACC_COST_GENERAL, K = (double)k;
    size_t ca = 0, cb;
    best = (opt && opt->method == LOWP_GEMM_SLICED) ? INFINITY : R * K * (double)m * (double)n;
    for (ta = 1; ta <= maxa; ta++) {
      ca += hista[ta];
      cb = 0;
      for (tb = 1; tb <= maxb; tb++) {
        double cost;
        cb += histb[tb];
        if (opt && opt->method == LOWP_GEMM_SLICED) /* cover every sliceable row/column */
          cost = (ta == maxa && tb == maxb) ? 0.0 : INFINITY;
        else
          cost = (double)ta * tb * (double)ca * (double)cb * K +
                 R * K * ((double)m * (double)n - (double)ca * (double)cb) +
                 4.0 * (double)(ta + tb) * (double)ca * (double)cb; /* combine */
        if (cost < best) { best = cost; nA = ta; nB = tb; }
      }
    }
  }
  if (nA == 0) { err = LOWP__NOT_USED; goto done; }

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
      if (sa[i] >= 1 && sa[i] <= nA) { ea[ma] = na[i].any ? na[i].emax : 0; ri[ma++] = i; }
      else rf[nrf++] = i;
    }
    for (j = 0; j < n; j++) {
      if (sb[j] >= 1 && sb[j] <= nB) { eb[nbc] = nb_[j].any ? nb_[j].emax : 0; cj[nbc++] = j; }
      else cf[ncf++] = j;
    }
  }
  if (ma == 0 || nbc == 0) { err = LOWP__NOT_USED; goto done; }

  nd = (size_t)(nA + nB - 1);
  if (mul_ovf(ma, k) || mul_ovf(ma * k, (size_t)nA * sizeof(double)) || mul_ovf(nbc, k) ||
      mul_ovf(nbc * k, (size_t)nB * sizeof(double)) || mul_ovf(ma, nbc) ||
      mul_ovf(ma * nbc, nd * sizeof(int64_t)) || ma > INT_MAX || nbc > INT_MAX || k > INT_MAX) {
    err = LOWP_ENOMEM;
    goto done;
  }
  As = malloc((size_t)nA * ma * k * sizeof *As);
  Bs = malloc((size_t)nB * nbc * k * sizeof *Bs);
  Ct = malloc(ma * nbc * sizeof *Ct);
  D = calloc(nd * ma * nbc, sizeof *D);
  bsum = calloc((size_t)nB * k, sizeof *bsum);
  fail = calloc(ma, 1);
  if (!As || !Bs || !Ct || !D || !bsum || !fail) { err = LOWP_ENOMEM; goto done; }

  /* split: As[t] is ma x k, Bs[u] is k x nbc, both row-major */
#pragma omp parallel for schedule(static)
  for (xi = 0; xi < (long long)ma; xi++) {
    size_t x = (size_t)xi, ll;
    const double *ar = a + ri[x] * k;
    for (ll = 0; ll < k; ll++)
      cut(As + x * k + ll, ma * k, ar[ll] == 0.0 ? 0.0 : scale_down(ar[ll], ea[x]), nA, s);
  }
#pragma omp parallel for schedule(static)
  for (xi = 0; xi < (long long)k; xi++) {
    size_t ll = (size_t)xi, y;
    int u;
    for (y = 0; y < nbc; y++) {
      double v = b[ll * n + cj[y]];
      cut(Bs + ll * nbc + y, nbc * k, v == 0.0 ? 0.0 : scale_down(v, eb[y]), nB, s);
    }
    /* B_u 1 modulo 2^64 (entries are integers below 2^26) */
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
      int64_t *Dd = D + (size_t)(ta + tb) * ma * nbc;
      const double *At = As + (size_t)ta * ma * k;
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)ma, (int)nbc, (int)k, 1.0,
                  At, (int)k, Bs + (size_t)tb * nbc * k, (int)nbc, 0.0, Ct, (int)nbc);
      if (stats) stats->dgemm_calls++;
#pragma omp parallel for schedule(static)
      for (xi = 0; xi < (long long)ma; xi++) {
        size_t x = (size_t)xi, y, ll;
        uint64_t want = 0, got = 0;
        const double *cr = Ct + x * nbc;
        const uint64_t *bs = bsum + (size_t)tb * k;
        int bad = 0;
        for (ll = 0; ll < k; ll++) want += (uint64_t)(int64_t)At[x * k + ll] * bs[ll];
        for (y = 0; y < nbc; y++) {
          double v = cr[y];
          if (!(fabs(v) <= 9007199254740992.0) || v != trunc(v)) { bad = 1; break; }
          got += (uint64_t)(int64_t)v;
          Dd[x * nbc + y] += (int64_t)v;
        }
        if (bad || got != want) fail[x] = 1;
      }
      if (prog) lowp__progress_set(prog, 0.8 * (double)(ta * nB + tb + 1) / total);
    }

  /* combine the diagonals exactly and round once per output. wide: every
     |D| < 2^58 and the diagonals fit one signed 128-bit integer
     (58 + s (nd - 1) + ceil(log2 nd) < 127) and there is no C0 */
  wide = !c0 && 58 + s * (int)(nd - 1) + 2 < 127;
#pragma omp parallel
  {
    lowp_acc_t acc;
    lowp_acc_init(&acc);
#pragma omp for schedule(dynamic, 4)
    for (xi = 0; xi < (long long)ma; xi++) {
      size_t x = (size_t)xi, y, d;
      if (fail[x]) continue;
      for (y = 0; y < nbc; y++) {
        if (wide) {
          /* the whole exact value as one 128-bit integer V 2^e0: round it
             straight from its top 64 bits and a sticky bit, as
             lowp_acc_round does from the accumulator (zero and C0 excepted) */
          i128 V = 0;
          u128 M;
          uint64_t hi, lo, sig;
          int L, sticky;
          size_t idx = ri[x] * n + cj[y];
          for (d = 0; d < nd; d++)
            V += (i128)D[d * ma * nbc + x * nbc + y] * ((i128)1 << (s * (int)(nd - 1 - d)));
          if (V != 0) {
            M = V < 0 ? (u128)(-V) : (u128)V;
            hi = (uint64_t)(M >> 64);
            lo = (uint64_t)M;
            L = hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll(lo); /* bit length */
            if (L > 64) {
              sig = (uint64_t)(M >> (L - 64));
              sticky = (M & (((u128)1 << (L - 64)) - 1)) != 0;
            } else {
              sig = lo << (64 - L);
              sticky = 0;
            }
            (void)lowp_round_sig(&c[idx], V < 0,
                                 (int64_t)ea[x] + eb[y] - s * (int)(nd + 1) + L - 1, sig, sticky,
                                 f, pol, rnd, lowp__exact_index(pol, idx));
            continue;
          }
        }
        lowp_acc_reset(&acc);
        for (d = 0; d < nd; d++) {
          int64_t v = D[d * ma * nbc + x * nbc + y];
          int e = ea[x] + eb[y] - s * (int)(d + 2);
          uint64_t mag = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
          if (v == 0) continue;
          if (e < LOWP_ACC_LSB) {
            /* every slice part is a multiple of 2^-1074, so the sum is a
               multiple of 2^-2148 > 2^LOWP_ACC_LSB: the shift drops zeros */
            mag >>= LOWP_ACC_LSB - e;
            e = LOWP_ACC_LSB;
          }
          lowp_acc_add_int(&acc, mag, e, v < 0);
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
      stats->slice_bits = s;
      stats->sliced_outputs = ok * nbc;
      stats->fallback_outputs = m * n - ok * nbc;
      stats->check_failed_rows = nfail;
    }
  }

done:
  free(na);
  free(nb_);
  free(sa);
  free(sb);
  free(ri);
  free(rf);
  free(cj);
  free(cf);
  free(ea);
  free(eb);
  free(As);
  free(Bs);
  free(Ct);
  free(D);
  free(bsum);
  free(fail);
  return err;
}
