/* lowp_exp_softmax_overflow -- the smallest input that overflows naive softmax, exactly, and how it shrinks with n */

/*
 * Question: computing softmax without subtracting the maximum, with exp
 *   and the sum in fp16, bf16 or e4m3, what is the smallest input that
 *   overflows, how does it shrink with the vector length n, does the stable
 *   version agree with the exact softmax, and is the documents' "-1e4
 *   instead of -inf" masking advice sound in each format?
 * Method: every operation is rounded once to the format (round to nearest
 *   even; IEEE overflow: inf, or NaN for e4m3, which has no infinity):
 *   exp is MPFR's exp at 128 bits rounded to odd and then to the format
 *   (correct rounding, Boldo & Melquiond 2008), additions are
 *   lowp_exact_add2, the division is MPFR's, rounded to odd, then to the
 *   format. n = 1: exp(x) overflows iff exp(x) >= T = xmax + ulp(xmax)/2
 *   (> T for e4m3, whose xmax takes the tie), so the real threshold is
 *   ln T (MPFR) and the answer is the smallest value of the format above
 *   it; both neighbours are checked. n > 1: all n inputs equal x (for a
 *   given maximum the worst case: the sum is monotone in every term); the
 *   sum, added left to right in the format, overflows at some step k(x),
 *   non-increasing in x; the values of the format are scanned downward
 *   from the n = 1 answer, giving the exact threshold for every n up to
 *   nmax. Beside it: ln(T/n), the threshold if the sum were exact. The
 *   stable version (subtract the maximum, all in the format) is compared
 *   with the exact softmax (MPFR, 256 bits) on random vectors that
 *   overflow the naive one, against a first-order-free error bound.
 * Run: lowp run softmax-overflow [--formats=fp16,bf16,e4m3] [--nmax=4096]
 * Expected / acceptance: fp16 overflows from 11.09375 (ln 65520 =
 *   11.0898...); the threshold falls roughly like ln(T/n) and flattens
 *   where the rounded sum stagnates; the stable version is always finite
 *   and within its bound.
 */

#include "registry.h"
#include "results.h"

#include "exact/exact.h"
#include "format/format.h"
#include "format/round_mpfr.h"
#include "io/plot.h"
#include "rng/rng.h"
#include "status.h"

#include <gmp.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lowp_param_t params[] = {
    {"formats", "fp16,bf16,e4m3", NULL, "formats of exp, sum and output"},
    {"nmax", "4096", "256", "largest vector length for the threshold curve"},
    {"n", "256", "64", "length of the random test vectors (stable vs exact)"},
    {"trials", "200", "20", "random test vectors per format"},
    {"mask", "-1e4", NULL, "the masking value to check"},
    {NULL, NULL, NULL, NULL}};

#define MAXF 8
#define WPREC 128 /* >= p + 2 for every lowp format: round to odd, then to the format */

/* ------------------------------------------------------ private helpers */


static int is_ovf(double y) { return isinf(y) || isnan(y); }

/* exp(x) correctly rounded to f */
static double exp_to(double x, const lowp_format_t *f) {
  mpfr_t t;
  double y;
  int tern;
  if (isnan(x)) return x;
  mpfr_init2(t, WPREC);
  mpfr_set_d(t, x, MPFR_RNDN);
  tern = mpfr_exp(t, t, MPFR_RNDZ);
  lowp_mpfr_make_odd(t, tern);
  lowp_round_mpfr(&y, t, f, NULL, LOWP_RND_NE);
  mpfr_clear(t);
  return y;
}

/* a / b correctly rounded to f */
static double div_to(double a, double b, const lowp_format_t *f) {
  mpfr_t t, d;
  double y;
  int tern;
  mpfr_inits2(WPREC, t, d, (mpfr_ptr)0);
  mpfr_set_d(t, a, MPFR_RNDN);
  mpfr_set_d(d, b, MPFR_RNDN);
  tern = mpfr_div(t, t, d, MPFR_RNDZ);
  lowp_mpfr_make_odd(t, tern);
  lowp_round_mpfr(&y, t, f, NULL, LOWP_RND_NE);
  mpfr_clears(t, d, (mpfr_ptr)0);
  return y;
}

static double add_to(double a, double b, const lowp_format_t *f) {
  double y;
  lowp_exact_add2(&y, a, b, f, NULL, LOWP_RND_NE, 0);
  return y;
}

static double round_to(double x, const lowp_format_t *f, const lowp_policy_t *pol) {
  double y;
  lowp_round_f64(&y, x, f, pol, LOWP_RND_NE);
  return y;
}

/* First k (1-based) at which the left-to-right sum of k copies of e
   overflows in f, or nmax + 1 if none up to nmax. */
static long first_overflow(double e, long nmax, const lowp_format_t *f) {
  double s = 0;
  long k;
  if (is_ovf(e)) return 1;
  for (k = 1; k <= nmax; k++) {
    double t = add_to(s, e, f);
    if (is_ovf(t)) return k;
    if (t == s) return nmax + 1; /* stagnation: the sum never moves again */
    s = t;
  }
  return nmax + 1;
}

/* naive softmax in f: y_i = exp(x_i) / sum; returns 1 if anything overflowed (inf or NaN) */
static int softmax_naive(double *y, const double *x, size_t n, const lowp_format_t *f) {
  double s = 0;
  size_t i;
  int bad = 0;
  for (i = 0; i < n; i++) { y[i] = exp_to(x[i], f); s = add_to(s, y[i], f); }
  for (i = 0; i < n; i++) { y[i] = div_to(y[i], s, f); bad |= is_ovf(y[i]); }
  return bad || is_ovf(s);
}

/* stable softmax in f (max subtracted in f); d receives x_i - m rounded */
static void softmax_stable(double *y, double *d, const double *x, size_t n, const lowp_format_t *f) {
  double m = x[0], s = 0;
  size_t i;
  for (i = 1; i < n; i++) if (x[i] > m) m = x[i];
  for (i = 0; i < n; i++) {
    d[i] = add_to(x[i], -m, f);
    y[i] = exp_to(d[i], f);
    s = add_to(s, y[i], f);
  }
  for (i = 0; i < n; i++) y[i] = div_to(y[i], s, f);
}

/* exact softmax rounded to binary64 (MPFR, 256 bits: x_i - m is exact, and
   the relative error before the final rounding is below 2^-240) */
static void softmax_exact(double *y, const double *x, size_t n) {
  mpfr_t m, s, *t = malloc(n * sizeof *t);
  size_t i;
  mpfr_inits2(256, m, s, (mpfr_ptr)0);
  mpfr_set_d(m, x[0], MPFR_RNDN);
  for (i = 1; i < n; i++) if (mpfr_cmp_d(m, x[i]) < 0) mpfr_set_d(m, x[i], MPFR_RNDN);
  mpfr_set_zero(s, 1);
  for (i = 0; i < n; i++) {
    mpfr_init2(t[i], 256);
    mpfr_set_d(t[i], x[i], MPFR_RNDN);
    mpfr_sub(t[i], t[i], m, MPFR_RNDN);
    mpfr_exp(t[i], t[i], MPFR_RNDN);
    mpfr_add(s, s, t[i], MPFR_RNDN);
  }
  for (i = 0; i < n; i++) {
    mpfr_div(t[i], t[i], s, MPFR_RNDN);
    y[i] = mpfr_get_d(t[i], MPFR_RNDN);
    mpfr_clear(t[i]);
  }
  mpfr_clears(m, s, (mpfr_ptr)0);
  free(t);
}

static void describe(char *buf, size_t len, double y, const lowp_format_t *f) {
  uint64_t bits = 0;
  if (lowp_encode(&bits, y, f) != LOWP_OK) { snprintf(buf, len, "%.9g", y); return; }
  snprintf(buf, len, "%.9g (bits 0x%0*llx)", y, (lowp_format_width(f) + 3) / 4, (unsigned long long)bits);
}

/* lowp_run_param_formats check: overflow to Inf/NaN needs a sign, a zero and a NaN;
   the reference is binary64 */
static const char *need_nan(const lowp_format_t *f) {
  return !f->has_sign || !f->has_zero || f->nan == LOWP_NAN_NONE || f->precision > 53
             ? "formats need a sign, zero and NaN" : NULL;
}

static int parse(const lowp_run_t *r, lowp_format_t *fs, long *nmax, long *n, long *trials, double *mask) {
  *nmax = (long)lowp_run_param_int(r, "nmax", 1, 1 << 20);
  *n = (long)lowp_run_param_int(r, "n", 2, 1 << 16);
  *trials = (long)lowp_run_param_int(r, "trials", 1, 100000);
  *mask = lowp_run_param_num(r, "mask");
  if (!(*mask < 0) || !isfinite(*mask)) lowp_run_bad_param(r, "mask", "expected a finite negative number");
  return (int)lowp_run_param_formats(r, "formats", fs, MAXF, need_nan);
}

static void check(const lowp_run_t *r) {
  lowp_format_t fs[MAXF];
  long nmax, n, trials;
  double mask;
  (void)parse(r, fs, &nmax, &n, &trials, &mask);
}

/* --------------------------------------------------------------- run */

static int run(lowp_run_t *r) {
  lowp_format_t fs[MAXF];
  long nmax, nvec, trials, k;
  double mask;
  int nf = parse(r, fs, &nmax, &nvec, &trials, &mask), i, bad = 0, st;
  double x1[MAXF];    /* the n = 1 answer per format */
  double **thr = calloc((size_t)nf, sizeof *thr);
  cJSON *tables = cJSON_AddArrayToObject(r->results, "tables");
  cJSON *verdicts = cJSON_AddArrayToObject(r->results, "verdicts");
  cJSON *plots = cJSON_AddArrayToObject(r->results, "plots");
  cJSON *rows;
  char ans[4096], part[1024], a[256], b[256], c[256], d[256], e[256];
  FILE *csv;
  mpfr_t T, lnT;

  if (!thr) return 2;
  mpfr_inits2(256, T, lnT, (mpfr_ptr)0);

  /* ---- n = 1: exp(x) overflows */
  {
    static const char *const cols[] = {"format", "overflow threshold T of exp(x)", "real threshold ln T",
                                       "smallest overflowing input (value of the format)", "exp of it, rounded",
                                       "the value below it", "exp of that, rounded"};
    const char *cells[7];
    char c0[64], c1[128], c2[64];
    rows = lowp_result_table(tables, "n = 1: the smallest input whose exp overflows the format", cols, 7);
    for (i = 0; i < nf; i++) {
      const lowp_format_t *f = &fs[i];
      double xM = lowp_format_xmax(f), t = xM + lowp_ulp(xM, f) / 2, up, dn, eu, ed;
      int incl = is_ovf(round_to(t, f, NULL));
      mpfr_set_d(T, t, MPFR_RNDN);
      mpfr_log(lnT, T, MPFR_RNDN);
      lowp_round_mpfr(&up, lnT, f, NULL, LOWP_RND_UP);
      lowp_round_mpfr(&dn, lnT, f, NULL, LOWP_RND_DN);
      eu = exp_to(up, f);
      ed = exp_to(dn, f);
      bad += !is_ovf(eu) || is_ovf(ed);
      x1[i] = up;
      snprintf(c0, sizeof c0, "%s", f->name);
      snprintf(c1, sizeof c1, "%s %.9g (xmax + ulp/2 = %g + %g)", incl ? ">=" : ">", t, xM, lowp_ulp(xM, f) / 2);
      mpfr_snprintf(c2, sizeof c2, "%.12Rf", lnT);
      describe(a, sizeof a, up, f);
      snprintf(b, sizeof b, "%.9g", eu);
      describe(c, sizeof c, dn, f);
      snprintf(d, sizeof d, "%.9g", ed);
      cells[0] = c0; cells[1] = c1; cells[2] = c2; cells[3] = a; cells[4] = b; cells[5] = c; cells[6] = d;
      lowp_result_add_row(rows, cells, 7);
    }
  }

  /* ---- n > 1: the sum overflows first */
  for (i = 0; i < nf; i++) {
    const lowp_format_t *f = &fs[i];
    double x = x1[i];
    long kprev = 1, n;
    thr[i] = malloc((size_t)(nmax + 1) * sizeof **thr);
    if (!thr[i]) return 2;
    for (n = 1; n <= nmax; n++) thr[i][n] = x;
    for (;;) {
      double y, ey;
      /* next value of the format below x (rounding down from just below x) */
      lowp_round_f64(&y, nextafter(x, -INFINITY), f, NULL, LOWP_RND_DN);
      if (!(y > 0)) break;
      ey = exp_to(y, f);
      k = first_overflow(ey, nmax, f);
      if (k < kprev) bad++; /* monotonicity: k(x) is non-increasing in x */
      if (k > nmax) break;
      for (n = k; n <= nmax; n++) thr[i][n] = y;
      kprev = k;
      x = y;
      lowp_run_progress(r, "%s: x = %g sums overflow from n = %ld", f->name, y, k);
    }
  }
  csv = fopen(lowp_run_path(r, "threshold_vs_n.csv"), "w");
  if (!csv) { fprintf(stderr, "lowp run softmax-overflow: cannot write CSV\n"); return 2; }
  fprintf(csv, "n,ln_n");
  for (i = 0; i < nf; i++) fprintf(csv, ",%s,%s_exact_sum,%s_lnT_minus_threshold", fs[i].name, fs[i].name, fs[i].name);
  fprintf(csv, "\n");
  for (k = 1; k <= nmax; k++) {
    fprintf(csv, "%ld,%.17g", k, log((double)k));
    for (i = 0; i < nf; i++) {
      double xM = lowp_format_xmax(&fs[i]), t = xM + lowp_ulp(xM, &fs[i]) / 2, l1;
      mpfr_set_d(T, t, MPFR_RNDN);
      mpfr_log(lnT, T, MPFR_RNDN);
      l1 = mpfr_get_d(lnT, MPFR_RNDN);
      mpfr_div_ui(T, T, (unsigned long)k, MPFR_RNDN);
      mpfr_log(lnT, T, MPFR_RNDN);
      fprintf(csv, ",%.17g,%.17g,%.17g", thr[i][k], mpfr_get_d(lnT, MPFR_RNDN), l1 - thr[i][k]);
    }
    fprintf(csv, "\n");
  }
  fclose(csv);
  {
    static const char *const cols0[] = {"n"};
    cJSON *t = cJSON_CreateObject(), *cl = cJSON_AddArrayToObject(t, "columns");
    long ns[] = {1, 2, 3, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 65536};
    size_t j;
    cJSON_AddStringToObject(t, "title", "Smallest x (a value of the format) for which naive softmax of n copies of x "
                            "overflows (exp or the sum), next to ln(T/n), the threshold if the sum were exact");
    cJSON_AddItemToArray(cl, cJSON_CreateString(cols0[0]));
    for (i = 0; i < nf; i++) {
      snprintf(a, sizeof a, "%s", fs[i].name);
      cJSON_AddItemToArray(cl, cJSON_CreateString(a));
      snprintf(a, sizeof a, "ln(T/n), %s", fs[i].name);
      cJSON_AddItemToArray(cl, cJSON_CreateString(a));
    }
    rows = cJSON_AddArrayToObject(t, "rows");
    for (j = 0; j < sizeof ns / sizeof ns[0]; j++) {
      cJSON *row;
      if (ns[j] > nmax) break;
      row = cJSON_CreateArray();
      cJSON_AddItemToArray(row, cJSON_CreateNumber((double)ns[j]));
      for (i = 0; i < nf; i++) {
        double xM = lowp_format_xmax(&fs[i]), tt = xM + lowp_ulp(xM, &fs[i]) / 2;
        snprintf(a, sizeof a, "%.9g", thr[i][ns[j]]);
        cJSON_AddItemToArray(row, cJSON_CreateString(a));
        mpfr_set_d(T, tt, MPFR_RNDN);
        mpfr_div_ui(T, T, (unsigned long)ns[j], MPFR_RNDN);
        mpfr_log(lnT, T, MPFR_RNDN);
        mpfr_snprintf(a, sizeof a, "%.6Rf", lnT);
        cJSON_AddItemToArray(row, cJSON_CreateString(a));
      }
      cJSON_AddItemToArray(rows, row);
    }
    cJSON_AddItemToArray(tables, t);
  }

  /* ---- stable vs exact on random vectors that overflow the naive one */
  {
    static const char *const cols[] = {"format", "inputs", "naive: vectors with inf/NaN", "stable: vectors with inf/NaN",
                                       "stable: max relative error (normal outputs)", "its bound there", "within bound",
                                       "exact reference = lib/exact's lowp_exact_softmax"};
    const char *cells[8];
    char agree[128];
    double *x = malloc((size_t)nvec * sizeof *x), *y = malloc((size_t)nvec * sizeof *y);
    double *ye = malloc((size_t)nvec * sizeof *ye), *dd = malloc((size_t)nvec * sizeof *dd);
    double *ye2 = malloc((size_t)nvec * sizeof *ye2);
    if (!x || !y || !ye || !dd || !ye2) return 2;
    rows = lowp_result_table(tables, "Stable softmax in the format (max subtracted) against the exact softmax (MPFR)", cols, 8);
    for (i = 0; i < nf; i++) {
      const lowp_format_t *f = &fs[i];
      double R = 2 * x1[i], u = lowp_format_u(f), worst = 0, worst_bound = 0, used = 0;
      long t, naive_bad = 0, stable_bad = 0, same = 0, total = 0;
      lowp_rng_t g;
      lowp_rng_init(&g, r->seed, 100 + (uint32_t)i);
      for (t = 0; t < trials; t++) {
        double D = 0, eta, gam;
        long j;
        int any_sub = 0;
        for (j = 0; j < nvec; j++) x[j] = round_to(R * (2 * lowp_rng_uniform(&g) - 1), f, NULL);
        naive_bad += softmax_naive(y, x, (size_t)nvec, f);
        softmax_stable(y, dd, x, (size_t)nvec, f);
        softmax_exact(ye, x, (size_t)nvec);
        /* a second, independent exact reference: lib/exact (interval Ziv loop) */
        if (lowp_exact_softmax(ye2, x, (size_t)nvec, &LOWP_FMT_FP64, NULL, LOWP_RND_NE) == LOWP_OK)
          for (j = 0; j < nvec; j++) same += ye2[j] == ye[j];
        total += nvec;
        for (j = 0; j < nvec; j++) {
          if (is_ovf(y[j])) { stable_bad++; break; }
          if (-dd[j] > D) D = -dd[j];
        }
        /* bound (rigorous, no first-order drop): y^ = e_i (1+d3) / s,
           e_i = exp(x_i - m) exp(|x_i - m| u th) (1+d2), s = sum e_j (1+theta),
           |theta| <= gamma_{n-1}; e_j relative errors <= exp(D u)(1+u) - 1,
           subnormal e_j add at most xmins/2 each to a sum >= 1 */
        gam = (nvec - 1) * u / (1 - (nvec - 1) * u);
        for (j = 0; j < nvec; j++) any_sub |= y[j] != 0 && lowp_classify(exp_to(dd[j], f), f) != LOWP_CLASS_NORMAL;
        eta = exp(D * u) * (1 + u) - 1 + (any_sub ? nvec * lowp_format_xmins(f) / 2 : 0);
        for (j = 0; j < nvec; j++) {
          double ex = fabs(dd[j]) * u, hi, lo, bnd, err;
          if (ye[j] < lowp_format_xmin(f) || lowp_classify(exp_to(dd[j], f), f) != LOWP_CLASS_NORMAL) continue;
          hi = (1 + u) * (1 + u) * exp(ex) / ((1 - gam) * (1 - eta)) - 1;
          lo = 1 - (1 - u) * (1 - u) * exp(-ex) / ((1 + gam) * (1 + eta));
          bnd = hi > lo ? hi : lo;
          err = fabs(y[j] - ye[j]) / ye[j];
          if (err > worst) { worst = err; worst_bound = bnd; }
          if (err / bnd > used) used = err / bnd;
        }
      }
      if (stable_bad || used > 1) bad++;
      snprintf(a, sizeof a, "%ld vectors of %ld values uniform in [-%g, %g], rounded", trials, nvec, R, R);
      snprintf(b, sizeof b, "%ld of %ld", naive_bad, trials);
      snprintf(c, sizeof c, "%ld of %ld", stable_bad, trials);
      snprintf(d, sizeof d, "%.4g (%.3g u)", worst, worst / u);
      snprintf(e, sizeof e, "%.4g", worst_bound);
      snprintf(part, sizeof part, "%s (%.0f%% of its bound at worst)", used <= 1 ? "yes" : "NO", 100 * used);
      snprintf(agree, sizeof agree, "%ld of %ld entries identical", same, total);
      if (same != total) bad++;
      cells[0] = f->name; cells[1] = a; cells[2] = b; cells[3] = c; cells[4] = d; cells[5] = e; cells[6] = part;
      cells[7] = agree;
      lowp_result_add_row(rows, cells, 8);
    }
    free(x); free(y); free(ye); free(dd); free(ye2);
  }

  /* ---- masking with a finite value instead of -inf */
  {
    static const char *const cols[] = {"format", "mask value in the format", "masked weight, row [3, 1, -2, mask, mask]",
                                       "fully masked row of 4: finite mask", "fully masked row of 4: -inf",
                                       "exp(mask - 3) in the format"};
    const char *cells[6];
    lowp_format_t all[MAXF + 1];
    int na = 0, j;
    all[na++] = LOWP_FMT_FP32;
    for (i = 0; i < nf; i++) all[na++] = fs[i];
    rows = lowp_result_table(tables, "The \"-1e4 instead of -inf\" masking advice, stable softmax computed in each format", cols, 6);
    for (j = 0; j < na; j++) {
      const lowp_format_t *f = &all[j];
      int pass;
      for (pass = 0; pass < 1 + (f->inf == LOWP_INF_NONE); pass++) {
        lowp_policy_t pol;
        double mv, row[5], y[5], dd[5], full[4], yf[4], yi[4];
        char name[64];
        memset(&pol, 0, sizeof pol);
        pol.overflow = pass ? LOWP_OVF_SAT : LOWP_OVF_IEEE;
        mv = round_to(mask, f, &pol);
        snprintf(name, sizeof name, "%s%s", f->name, pass ? " (satfinite)" : "");
        row[0] = 3; row[1] = 1; row[2] = -2; row[3] = mv; row[4] = mv;
        softmax_stable(y, dd, row, 5, f);
        full[0] = full[1] = full[2] = full[3] = mv;
        softmax_stable(yf, dd, full, 4, f);
        full[0] = full[1] = full[2] = full[3] = f->inf == LOWP_INF_NONE ? NAN : -INFINITY;
        softmax_stable(yi, dd, full, 4, f);
        describe(a, sizeof a, mv, f);
        if (mv != mask && !isnan(mv)) strncat(a, " (not exact)", sizeof a - strlen(a) - 1);
        if (isnan(mv)) snprintf(a, sizeof a, "NaN (%g overflows; no infinity)", mask);
        snprintf(b, sizeof b, "%.9g", y[3]);
        snprintf(c, sizeof c, "%.9g each", yf[0]);
        snprintf(d, sizeof d, "%.9g each%s", yi[0], f->inf == LOWP_INF_NONE ? " (no -inf in the format: NaN)" : "");
        snprintf(e, sizeof e, "%.9g", exp_to(add_to(mv, -3, f), f));
        cells[0] = name; cells[1] = a; cells[2] = b; cells[3] = c; cells[4] = d; cells[5] = e;
        lowp_result_add_row(rows, cells, 6);
      }
    }
  }

  /* ---- answer and verdicts */
  ans[0] = '\0';
  for (i = 0; i < nf; i++) {
    double xM = lowp_format_xmax(&fs[i]), t = xM + lowp_ulp(xM, &fs[i]) / 2;
    mpfr_set_d(T, t, MPFR_RNDN);
    mpfr_log(lnT, T, MPFR_RNDN);
    describe(a, sizeof a, x1[i], &fs[i]);
    mpfr_snprintf(part, sizeof part, "%s: the smallest input whose exp overflows is %s (real threshold ln %.9g = %.9Rf); "
                  "with n equal inputs the sum overflows first, from %.9g at n = %ld. ",
                  fs[i].name, a, t, lnT, thr[i][nmax], nmax);
    strncat(ans, part, sizeof ans - strlen(ans) - 1);
  }
  strncat(ans, "Subtracting the maximum removes every overflow, and the stable result stays within its error bound "
          "(table).", sizeof ans - strlen(ans) - 1);
  if (bad) strncat(ans, " SOME CHECKS FAILED.", sizeof ans - strlen(ans) - 1);
  cJSON_AddStringToObject(r->results, "answer", ans);
  fprintf(r->summary, "**Answer.** %s\n\n", ans);
  for (i = 0; i < nf; i++) {
    if (!strcmp(fs[i].name, "fp16")) {
      double e12 = exp_to(12, &LOWP_FMT_FP64);
      describe(a, sizeof a, x1[i], &fs[i]);
      snprintf(part, sizeof part, "e^12 = %.8g; fp16(e^12) = %g; the first overflowing fp16 input is %s", e12,
               exp_to(12, &fs[i]), a);
      snprintf(b, sizeof b, "holds with a qualification: overflow starts below 12, at %.9g", x1[i]);
      lowp_result_verdict(verdicts, "In fp16, exp(12) = 163000 > 65504 overflows", "004_57bea4ceb5c470d1, Numerical Stability "
                          "Analysis: Overflow in Softmax", part, is_ovf(exp_to(12, &fs[i])) && fabs(e12 - 163000) < 500 ? b : "wrong");
    }
  }
  {
    double m16 = round_to(mask, &LOWP_FMT_FP16, NULL), w = 0;
    double row[5] = {3, 1, -2, m16, m16}, y[5], dd[5];
    softmax_stable(y, dd, row, 5, &LOWP_FMT_FP32);
    w = y[3];
    snprintf(part, sizeof part, "fp16(%g) = %g (exact: %s); its softmax weight in fp32 is %g, the same as with -inf; "
             "a fully masked row gives 1/n instead of NaN; bf16 stores it as %g; e4m3 cannot store it (NaN, or -448 "
             "saturated)", mask, m16, m16 == mask ? "yes" : "no", w, round_to(mask, &LOWP_FMT_BF16, NULL));
    lowp_result_verdict(verdicts, "Masking scores with -1e4 instead of -inf is safe for fp16", "004_57bea4ceb5c470d1, "
                        "Layer-Specific Considerations: Attention Layers", part,
                        (m16 == mask && w == 0) ? "holds with a qualification: exact in fp16 and gives weight 0; not "
                        "representable in e4m3 (mask before converting to fp8)" : "wrong");
  }

  /* ---- plot */
  {
    lowp_series_t sr[MAXF + 1];
    char styles[MAXF][96], titles[MAXF][96], extra[256 + MAXF * 200];
    lowp_plot_t p = {"Naive softmax of n equal inputs: how far the overflow threshold falls below ln T",
                     "vector length n (log scale)", "ln T - (smallest overflowing input)", 1, 0, extra};
    lowp_series_t ln = {"threshold_vs_n.csv", 1, 2, "ln n: an exact sum (the same for every format)", "lines lc rgb '#000000'", NULL, 0, 1};
    size_t len = (size_t)snprintf(extra, 256, "set key top left box opaque\nset xrange [1:%ld]\nset logscale x 2\n"
                                  "set format x '%%g'", nmax);
    for (i = 0; i < nf; i++) {
      lowp_series_t s1 = {"threshold_vs_n.csv", 1, 5 + 3 * i, NULL, NULL, NULL, 0, 0};
      long flat = nmax;
      double xM = lowp_format_xmax(&fs[i]);
      lowp_result_format_style(fs[i].name, "steps", styles[i], sizeof styles[i]);
      snprintf(titles[i], sizeof titles[i], "%s: exp and sum rounded to %s (exact threshold)", fs[i].name, fs[i].name);
      s1.style = styles[i]; s1.title = titles[i];
      sr[i] = s1;
      /* where the curve goes flat: from there on the threshold no longer changes (the rounded sum stagnates) */
      while (flat > 1 && thr[i][flat - 1] == thr[i][nmax]) flat--;
      if (flat < nmax / 2)
        len += (size_t)snprintf(extra + len, sizeof extra - len, "\nset label %d \"%s flat from n = %ld: the rounded "
                                "sum stops growing\" at %ld, first %.17g right offset 0,0.8 tc rgb '%s' noenhanced", i + 1,
                                fs[i].name, flat, nmax, log(xM + lowp_ulp(xM, &fs[i]) / 2) - thr[i][nmax],
                                lowp_result_format_color(fs[i].name));
    }
    sr[nf] = ln;
    st = lowp_plot(r->outdir, "threshold_vs_n", &p, sr, (size_t)nf + 1);
    {
      cJSON *pl = cJSON_CreateObject();
      cJSON_AddStringToObject(pl, "file", "threshold_vs_n.png");
      cJSON_AddStringToObject(pl, "caption", "How far below ln T (T = xmax + ulp/2) the smallest overflowing "
                              "input lies for n equal inputs: steps are the exact thresholds with exp and the sum rounded "
                              "in the format, the dashed line ln n is what an exact sum would give. Where the rounded "
                              "sum stagnates (adding a term no longer changes it) the threshold stops falling: bf16 "
                              "and e4m3 flatten early, fp16 follows ln n up to n = 4096.");
      cJSON_AddItemToArray(plots, pl);
    }
  }
  for (i = 0; i < nf; i++) free(thr[i]);
  free(thr);
  mpfr_clears(T, lnT, (mpfr_ptr)0);
  if (st != 0) return lowp_run_plot_failed(r, st);
  fprintf(r->summary, "Files: threshold_vs_n.csv (every n), threshold_vs_n.png, results.json (tables).\n");
  if (bad) {
    fprintf(stderr, "lowp run softmax-overflow: %d checks failed\n", bad);
    return 1;
  }
  return 0;
}

const lowp_experiment_t lowp_exp_softmax_overflow = {
    "softmax-overflow",
    "What is the smallest input that overflows softmax without max-subtraction in fp16, bf16 and e4m3, how "
    "does it shrink with the vector length, and does the stable version match the exact softmax?",
    "exp correctly rounded to the format (MPFR, round to odd, then lowp_round_mpfr), sums with "
    "lowp_exact_add2, divisions rounded once; n = 1: real threshold ln(xmax + ulp/2) and the smallest value "
    "of the format above it, both neighbours checked; n = 2..nmax: all inputs equal (the worst case for a "
    "given maximum), values of the format scanned downward, the step at which the left-to-right sum "
    "overflows recorded, giving the exact threshold for every n; stable softmax against the exact softmax "
    "(MPFR, 256 bits) with a rigorous error bound; -1e4 masking checked in each format.",
    "fp16 overflows from 11.09375; the threshold follows ln(T/n) until the rounded sum stagnates; the stable "
    "version is finite and within its bound everywhere.",
    params, run, check};
