/* lowp__exact_gemm_acc -- the accumulator path of the exact GEMM (binned int64 counters) */

/*
 * The accumulator path of lowp_exact_gemm_ex (gemm.c dispatches; the sliced
 * path in ozaki.c sends it the outputs the slices do not cover). Two
 * variants, both exact, both ending in one rounding per output element:
 *
 * fast: when every nonzero entry of A and B has at most 26 significant bits
 *   and a magnitude in [2^-400, 2^400], each product a*b is exact in
 *   binary64 (26 + 26 <= 53 bits, no overflow or underflow). The product's
 *   signed integer significand M = p 2^(1075-E) (hidden bit included) is
 *   added into an int64 counter indexed by the product's sign and exponent
 *   field E: that counter holds an exact integer multiple of 2^(E-1075). With
 *   |M| < 2^53, up to 1023 additions cannot overflow (1023 * 2^53 < 2^63),
 *   so the counters are flushed into the accumulator (exact/acc.h) every
 *   CHUNK products. Four outputs are computed at once, each with its own
 *   counters, so four independent read-modify-write chains are in flight
 *   (consecutive products of one output often share an exponent, and one
 *   chain alone would wait on store-to-load forwarding).
 * general: everything else (binary64 data, subnormals, NaN, inf): exact
 *   106-bit integer products into the accumulator (lowp_acc_add_prod).
 *
 * Each output element is an independent exact sum, computed by one thread,
 * so the result is the same for any thread count or schedule.
 */

#include "exact/gemm_bins.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "exact/acc.h"
#include "exact/internal.h"

/* ------------------------------------------------------ private helpers */

#define CHUNK 1023 /* products per flush: 1023 * 2^53 < 2^63 */
#define RB 16      /* rows per block of work */

typedef struct {
  int fast;     /* all entries qualify for the fast path */
  int elo, ehi; /* range of biased exponent fields of the nonzero entries */
} scan_t;

static void scan(const double *x, size_t len, scan_t *s) {
  size_t i;
  s->fast = 1;
  s->elo = 2047;
  s->ehi = 0;
  for (i = 0; i < len; i++) {
    uint64_t u;
    int E;
    memcpy(&u, &x[i], sizeof u);
    if ((u << 1) == 0) continue; /* +-0 */
    E = (int)((u >> 52) & 0x7ff);
    /* 26 significant bits: the low 27 fraction bits are zero; 2^-400 .. 2^400 */
    if ((u & ((UINT64_C(1) << 27) - 1)) != 0 || E < 1023 - 400 || E > 1023 + 400) {
      s->fast = 0;
      return;
    }
    if (E < s->elo) s->elo = E;
    if (E > s->ehi) s->ehi = E;
  }
}

/* Add the exact binary64 product p (a normal number in the fast path, or a
   zero) into the counter of its sign and exponent field, idx = bits >> 52.
   scale[idx] = 2^(1075 - E) turns p into its signed integer significand
   (|M| < 2^53, exactly: a power-of-two scaling of a number with <= 53
   bits), so the path is a multiply, a conversion and one add. */
static inline void bin_add(int64_t *bins, const double *scale, double p) {
  uint64_t u;
  unsigned idx;
  memcpy(&u, &p, sizeof u);
  idx = (unsigned)(u >> 52);
  bins[idx] += (int64_t)(p * scale[idx]);
}

/* Counter idx (sign bit and exponent field E) holds an integer multiple of
   2^(E - 1075); flush the slots [elo, ehi] of both signs into acc. */
static void flush(lowp_acc_t *acc, int64_t *bins, int elo, int ehi) {
  int E;
  for (E = elo; E <= ehi; E++) {
    /* |positive| and |negative| counters are each < 2^63, so their sum fits */
    int64_t v = bins[E] + bins[2048 + E];
    bins[E] = bins[2048 + E] = 0;
    if (v < 0) lowp_acc_add_int(acc, (uint64_t)(-(v + 1)) + 1, E - 1075, 1);
    else if (v > 0) lowp_acc_add_int(acc, (uint64_t)v, E - 1075, 0);
  }
}

/* Finish output idx: add C0, apply the exact-zero sign rule, round. */
static void finish(double *c, lowp_acc_t *acc, const double *ar, const double *bc,
                   const double *c0, size_t idx, size_t k, const lowp_format_t *f,
                   const lowp_policy_t *pol, lowp_rounding_t rnd) {
  size_t l;
  if (c0) lowp_acc_add(acc, c0[idx]);
  /* the exact-zero sign rule needs the terms' signs: rare, so only then are
     the products formed again */
  if (lowp_acc_is_zero(acc))
    for (l = 0; l < k; l++) lowp_acc_note_term(acc, ar[l] * bc[l]);
  (void)lowp_acc_round(&c[idx], acc, f, pol, rnd, lowp__exact_index(pol, idx));
}

void lowp__exact_gemm_finish(double *c, lowp_acc_t *acc, const double *ar, const double *b,
                             size_t n, const double *c0, size_t i, size_t j, size_t k,
                             const lowp_format_t *f, const lowp_policy_t *pol,
                             lowp_rounding_t rnd) {
  size_t l, idx = i * n + j;
  if (c0) lowp_acc_add(acc, c0[idx]);
  if (lowp_acc_is_zero(acc))
    for (l = 0; l < k; l++) {
      /* a product of nonzero binary64 values may round to zero in fl(a*b);
         the accumulator counts it as a nonzero term */
      double x = ar[l], y = b[l * n + j];
      lowp_acc_note_term(acc, (x != 0.0 && y != 0.0) ? 1.0 : x * y);
    }
  (void)lowp_acc_round(&c[idx], acc, f, pol, rnd, lowp__exact_index(pol, idx));
}

/* Fast path, one output C[i][j] from bc (column j of B, contiguous). */
static void row1(double *c, lowp_acc_t *acc, int64_t *bins, const double *scale, int elo, int ehi,
                 const double *ar, const double *bc, const double *c0, size_t idx,
                 size_t k, const lowp_format_t *f, const lowp_policy_t *pol,
                 lowp_rounding_t rnd) {
  size_t l0, l;
  lowp_acc_reset(acc);
  for (l0 = 0; l0 < k; l0 += CHUNK) {
    size_t l1 = k - l0 < CHUNK ? k : l0 + CHUNK;
    for (l = l0; l < l1; l++) bin_add(bins, scale, ar[l] * bc[l]);
    flush(acc, bins, elo, ehi);
  }
  finish(c, acc, ar, bc, c0, idx, k, f, pol, rnd);
}

/* Fast path, four outputs at once (acc points to four accumulators; b0 the
   first of four consecutive columns of B^T, idx their output indices): four
   independent sets of counters keep four read-modify-write chains in
   flight, and each a[l] is loaded once. */
static void row4(double *c, lowp_acc_t *acc, int64_t *bins, const double *scale, int elo, int ehi,
                 const double *ar, const double *b0, const double *c0, const size_t *idx,
                 size_t k, const lowp_format_t *f, const lowp_policy_t *pol,
                 lowp_rounding_t rnd) {
  const double *b1 = b0 + k, *b2 = b1 + k, *b3 = b2 + k;
  int64_t *s0 = bins, *s1 = bins + 4096, *s2 = bins + 2 * 4096, *s3 = bins + 3 * 4096;
  size_t l0, l;
  int q;
  for (q = 0; q < 4; q++) lowp_acc_reset(&acc[q]);
  for (l0 = 0; l0 < k; l0 += CHUNK) {
    size_t l1 = k - l0 < CHUNK ? k : l0 + CHUNK;
    for (l = l0; l < l1; l++) {
      double x = ar[l];
      bin_add(s0, scale, x * b0[l]);
      bin_add(s1, scale, x * b1[l]);
      bin_add(s2, scale, x * b2[l]);
      bin_add(s3, scale, x * b3[l]);
    }
    for (q = 0; q < 4; q++) {
      flush(&acc[q], bins + q * 4096, elo, ehi);
    }
  }
  for (q = 0; q < 4; q++)
    finish(c, &acc[q], ar, b0 + (size_t)q * k, c0, idx[q], k, f, pol, rnd);
}


/* -------------------------------------------------- accumulator path */

int lowp__exact_gemm_acc(double *c, const double *a, const double *b, const double *c0,
                         size_t m, size_t n, size_t k, const size_t *ri, size_t mr,
                         const size_t *cj, size_t nc, const lowp_format_t *f,
                         const lowp_policy_t *pol, lowp_rounding_t rnd,
                         lowp__progress_t *prog) {
  scan_t sa, sb;
  double *bt;
  int fast, elo = 1, ehi = 0, err = LOWP_OK;
  double scale[4096];
  long long mi, nblk;
  long long blocks_done = 0;
  size_t x, y, l;
  if (!ri) mr = m;
  if (!cj) nc = n;
  if (mr == 0 || nc == 0) return LOWP_OK;
  if (lowp__mul_overflows(nc, k) || lowp__mul_overflows(nc * k, sizeof(double))) return LOWP_ENOMEM;

  /* B's selected columns transposed, so each output reads two contiguous rows */
  bt = malloc(nc * k * sizeof *bt + 1);
  if (!bt) return LOWP_ENOMEM;
  for (l = 0; l < k; l++)
    for (y = 0; y < nc; y++) bt[y * k + l] = b[l * n + (cj ? cj[y] : y)];

  /* the fast path's conditions, checked on the selected rows and columns */
  sa.fast = 1;
  sa.elo = 2047;
  sa.ehi = 0;
  for (x = 0; x < mr && sa.fast; x++) {
    scan_t r;
    scan(a + (ri ? ri[x] : x) * k, k, &r);
    sa.fast = r.fast;
    if (r.elo < sa.elo) sa.elo = r.elo;
    if (r.ehi > sa.ehi) sa.ehi = r.ehi;
  }
  scan(bt, nc * k, &sb);
  fast = sa.fast && sb.fast;
  if (fast && sa.elo <= sa.ehi && sb.elo <= sb.ehi) {
    /* product fields lie in [elo_a + elo_b - 1023, ehi_a + ehi_b - 1022] */
    elo = sa.elo + sb.elo - 1023;
    ehi = sa.ehi + sb.ehi - 1022;
  }
  if (fast) {
    int i;
    for (i = 0; i < 4096; i++) {
      int E = i & 2047;
      scale[i] = (E >= elo && E <= ehi) ? ldexp(1.0, 1075 - E) : 0.0;
    }
  }

  /* Rows go to threads in blocks of RB; within a block, each group of four
     columns of B^T (4k doubles) is reused by all RB rows while it is hot in
     cache. Every output is still one independent exact sum. */
  nblk = (long long)((mr + RB - 1) / RB);
#pragma omp parallel
  {
    int64_t *bins = fast ? calloc(4 * 4096, sizeof *bins) : NULL;
    lowp_acc_t *acc = malloc(4 * sizeof *acc);
    int q;
    if (!acc || (fast && !bins)) {
#pragma omp atomic write
      err = LOWP_ENOMEM;
    } else {
      for (q = 0; q < 4; q++) lowp_acc_init(&acc[q]);
    }
#pragma omp for schedule(dynamic, 1)
    for (mi = 0; mi < nblk; mi++) {
      size_t x0 = (size_t)mi * RB, x1 = x0 + RB < mr ? x0 + RB : mr, xx, yy, ll;
      if (!acc || (fast && !bins)) continue;
      for (yy = 0; yy < nc; yy += (fast && yy + 4 <= nc) ? 4 : 1)
        for (xx = x0; xx < x1; xx++) {
          size_t i = ri ? ri[xx] : xx;
          const double *ar = a + i * k;
          if (fast && yy + 4 <= nc) {
            size_t idx[4];
            for (q = 0; q < 4; q++) idx[q] = i * n + (cj ? cj[yy + (size_t)q] : yy + (size_t)q);
            row4(c, acc, bins, scale, elo, ehi, ar, bt + yy * k, c0, idx, k, f, pol, rnd);
          } else if (fast) {
            row1(c, acc, bins, scale, elo, ehi, ar, bt + yy * k, c0,
                 i * n + (cj ? cj[yy] : yy), k, f, pol, rnd);
          } else {
            const double *bc = bt + yy * k;
            size_t idx = i * n + (cj ? cj[yy] : yy);
            lowp_acc_reset(acc);
            for (ll = 0; ll < k; ll++) lowp_acc_add_prod(acc, ar[ll], bc[ll]);
            if (c0) lowp_acc_add(acc, c0[idx]);
            (void)lowp_acc_round(&c[idx], acc, f, pol, rnd, lowp__exact_index(pol, idx));
          }
        }
#pragma omp atomic
      blocks_done++;
      if (prog && omp_get_thread_num() == 0) {
        long long d;
#pragma omp atomic read
        d = blocks_done;
        lowp__progress_set(prog, (double)d / (double)nblk);
      }
    }
    free(bins);
    free(acc);
  }
  free(bt);
  if (prog) lowp__progress_set(prog, 1.0);
  return err;
}

/* single outputs, general path (as lowp__exact_gemm_acc's): each a
   independent exact sum, so the schedule cannot change the bytes */
int lowp__exact_gemm_acc_list(double *c, const double *a, const double *b, const double *c0,
                              size_t n, size_t k, const size_t *out, size_t cnt,
                              const lowp_format_t *f, const lowp_policy_t *pol,
                              lowp_rounding_t rnd) {
  int err = LOWP_OK;
  long long q;
  if (cnt == 0) return LOWP_OK;
#pragma omp parallel if (cnt * k > 32768)
  {
    lowp_acc_t *acc = malloc(sizeof *acc);
    if (!acc) {
#pragma omp atomic write
      err = LOWP_ENOMEM;
    } else {
      lowp_acc_init(acc);
    }
#pragma omp for schedule(dynamic, 8)
    for (q = 0; q < (long long)cnt; q++) {
      size_t idx = out[q], i = idx / n, j = idx % n, l;
      const double *ar = a + i * k;
      if (!acc) continue;
      lowp_acc_reset(acc);
      for (l = 0; l < k; l++) lowp_acc_add_prod(acc, ar[l], b[l * n + j]);
      if (c0) lowp_acc_add(acc, c0[idx]);
      (void)lowp_acc_round(&c[idx], acc, f, pol, rnd, lowp__exact_index(pol, idx));
    }
    free(acc);
  }
  return err;
}
