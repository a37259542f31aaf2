/* texp_softmax_overflow -- the softmax-overflow thresholds against an independent MPFR oracle */

/*
 * The oracle emulates each format with MPFR alone (precision p,
 * mpfr_subnormalize, overflow when a rounded value exceeds the largest
 * finite value, the formats' published constants), computes exp with
 * mpfr_exp directly at the format's precision (correctly rounded) and each
 * addition with mpfr_add at that precision. For n equal inputs it finds the
 * smallest value of the format at which naive softmax overflows (exp or
 * the left-to-right sum) by scanning the format's values upward from 0
 * (n = 1) or by bisection over them (a monotone predicate), and compares
 * with threshold_vs_n.csv of the quick run: with the sum in the format,
 * with the sum accumulated in fp32 (mpfr_add at 24 bits, fp32's range), and
 * with the fp32 sum returned (rounded) in the format. Also: the stable version never
 * overflowed and stayed within its bound (the run's table), files exist.
 *
 * Run: ctest --test-dir build -R texp_softmax_overflow
 */

#define _POSIX_C_SOURCE 200809L

#include "testutil.h"

#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { const char *name; int p, xmins_exp; double xmax; } ofmt_t;
static const ofmt_t fmts[] = {
    {"fp16", 11, -24, 65504.0}, {"bf16", 8, -133, 0x1.fep+127}, {"e4m3", 4, -9, 448.0}};
#define NF 3
static const ofmt_t fp32 = {"fp32", 24, -149, 0x1.fffffep+127};
#define NM 3 /* sums: in the format; in fp32; in fp32 returned in the format */

static mpfr_exp_t g_emin, g_emax;
static void enter(const ofmt_t *f) {
  g_emin = mpfr_get_emin();
  g_emax = mpfr_get_emax();
  mpfr_set_emin(f->xmins_exp + 1);
  mpfr_set_emax(1024);
}
static void leave(void) { mpfr_set_emin(g_emin); mpfr_set_emax(g_emax); }
static double fin(mpfr_ptr t, int inex, const ofmt_t *f) {
  double y;
  (void)mpfr_subnormalize(t, inex, MPFR_RNDN);
  y = mpfr_get_d(t, MPFR_RNDN);
  return fabs(y) > f->xmax ? copysign(INFINITY, y) : y;
}
static double oexp(double x, const ofmt_t *f) {
  mpfr_t t, s;
  double y;
  enter(f);
  mpfr_init2(t, f->p);
  mpfr_init2(s, 64);
  mpfr_set_d(s, x, MPFR_RNDN);
  y = fin(t, mpfr_exp(t, s, MPFR_RNDN), f);
  mpfr_clears(t, s, (mpfr_ptr)0);
  leave();
  return y;
}
static double oadd(double a, double b, const ofmt_t *f) {
  mpfr_t t, x, y;
  double r;
  enter(f);
  mpfr_init2(t, f->p);
  mpfr_inits2(64, x, y, (mpfr_ptr)0);
  mpfr_set_d(x, a, MPFR_RNDN);
  mpfr_set_d(y, b, MPFR_RNDN);
  r = fin(t, mpfr_add(t, x, y, MPFR_RNDN), f);
  mpfr_clears(t, x, y, (mpfr_ptr)0);
  leave();
  return r;
}
/* the next value of the format above x >= 0 */
static double onext(double x, const ofmt_t *f) {
  int e;
  double q;
  if (x < ldexp(1, f->xmins_exp + f->p - 1)) return x + ldexp(1, f->xmins_exp);
  (void)frexp(x, &e); /* x in [2^(e-1), 2^e) */
  q = ldexp(1, e - f->p);
  return x + q;
}
/* naive softmax of n copies of x: exp rounded to f, the sum accumulated in
   acc and (store) returned in f; does it overflow? */
static int overflows(double x, long n, const ofmt_t *f, const ofmt_t *acc, int store) {
  double e = oexp(x, f), s = 0;
  long k;
  if (isinf(e)) return 1;
  for (k = 0; k < n; k++) {
    s = oadd(s, e, acc);
    if (isinf(s)) return 1;
  }
  return store && isinf(oadd(s, 0, f)); /* s + 0 rounded to f */
}

int main(void) {
  char dir[] = "/tmp/texp_softmax.XXXXXX", out[4200], path[4300], line[4096], cmd[4400];
  static const long ns[] = {1, 2, 3, 4, 7, 16, 100, 256};
  double thr[NM][NF][sizeof ns / sizeof ns[0]];
  double csv[257][NM][NF];
  size_t j;
  int i, m, got = 0;
  FILE *f;
  lowp_test_start("texp_softmax_overflow");

  /* the oracle: fp16's first overflowing input is 11.09375 (exp(11.0859375) = 65248 after rounding) */
  lowp_test_check(isinf(oexp(11.09375, &fmts[0])) && oexp(11.0859375, &fmts[0]) == 65248, "oracle fp16 exp");
  for (i = 0; i < NF; i++) {
    /* every value of the format in [0, 128], increasing; the predicate "naive softmax of n copies
       overflows" is monotone in x, so a bisection over this list finds the smallest one */
    size_t nv = 0, cap = 1 << 16, lo, hi;
    double *vals = malloc(cap * sizeof *vals), x;
    for (x = 0; x <= 128; x = onext(x, &fmts[i])) {
      if (nv == cap) { cap *= 2; vals = realloc(vals, cap * sizeof *vals); }
      vals[nv++] = x;
    }
    for (m = 0; m < NM; m++)
      for (j = 0; j < sizeof ns / sizeof ns[0]; j++) {
        const ofmt_t *acc = m ? &fp32 : &fmts[i];
        lo = 0;
        hi = nv - 1; /* overflows(vals[hi]) holds: exp(128) overflows all three */
        while (hi - lo > 1) {
          size_t mid = lo + (hi - lo) / 2;
          if (overflows(vals[mid], ns[j], &fmts[i], acc, m == 2)) hi = mid; else lo = mid;
        }
        thr[m][i][j] = vals[hi];
      }
    free(vals);
  }

  lowp_test_make_tmpdir(dir);
  snprintf(out, sizeof out, "%s/so", dir);
  snprintf(cmd, sizeof cmd, "run softmax-overflow --quick --out %s", out);
  lowp_test_check(lowp_test_run_lowp(cmd) == 0, "lowp run softmax-overflow --quick exits 0 (every internal check passed)");
  lowp_test_check(lowp_test_files_exist(out, (const char *const[]){"results.json", "summary.md", "threshold_vs_n.png", "threshold_vs_n.svg", "threshold_vs_n.csv", NULL}),
                  "the run wrote its files");
  snprintf(path, sizeof path, "%s/threshold_vs_n.csv", out);
  f = fopen(path, "r");
  lowp_test_check(f != NULL, "threshold_vs_n.csv readable");
  if (f) {
    if (!fgets(line, sizeof line, f)) line[0] = '\0';
    while (fgets(line, sizeof line, f)) {
      /* n, ln n, per format (threshold, ln(T/n), ln T - threshold), then per
         format (fp32-sum threshold, ln T - it, fp32 sum returned in the format) */
      double v[2 + 6 * NF];
      char *p = line, *end;
      int nv = 0;
      long n;
      while (nv < 2 + 6 * NF) {
        v[nv] = strtod(p, &end);
        if (end == p) break;
        nv++;
        p = *end == ',' ? end + 1 : end;
      }
      n = (long)v[0];
      if (nv != 2 + 6 * NF || n < 1 || n > 256) continue;
      for (i = 0; i < NF; i++) {
        csv[n][0][i] = v[2 + 3 * i];
        csv[n][1][i] = v[2 + 3 * NF + 3 * i];
        csv[n][2][i] = v[4 + 3 * NF + 3 * i];
      }
      got++;
    }
    fclose(f);
  }
  lowp_test_check(got == 256, "256 rows (n = 1..256) in the CSV (%d)", got);
  for (m = 0; m < NM && got == 256; m++)
    for (i = 0; i < NF; i++)
      for (j = 0; j < sizeof ns / sizeof ns[0]; j++)
        lowp_test_check(csv[ns[j]][m][i] == thr[m][i][j], "%s, sum %s, n = %ld: experiment %.9g, oracle %.9g",
                        fmts[i].name, m == 0 ? "in the format" : m == 1 ? "in fp32" : "in fp32 returned in the format",
                        ns[j], csv[ns[j]][m][i], thr[m][i][j]);
  /* fp32 sums: fp16's and e4m3's threshold is their exp's own at every n (an fp32 sum of 256 values below
     65520 cannot overflow); bf16's falls with n (bf16 has fp32's range) */
  lowp_test_check(thr[1][0][7] == 11.09375 && thr[1][2][7] == thr[1][2][0] && thr[1][1][7] < thr[1][1][0],
                  "fp32 sums: fp16 %.9g, e4m3 flat, bf16 falls (%.9g -> %.9g)", thr[1][0][7], thr[1][1][0], thr[1][1][7]);
  /* the plot draws the fp32 sum returned in the format (PyTorch's x.exp().sum()) as its own marks: the script
     names each such curve, and the caption says where they sit */
  {
    char gp[4400], buf[16384];
    size_t nr;
    int k, have = 0;
    snprintf(gp, sizeof gp, "%s/threshold_vs_n.gp", out);
    f = fopen(gp, "r");
    nr = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[nr] = '\0';
    if (f) fclose(f);
    for (k = 0; k < NF; k++) {
      char want[128];
      snprintf(want, sizeof want, "%s: sum in fp32 returned in %s (x.exp().sum())", fmts[k].name, fmts[k].name);
      have += strstr(buf, want) != NULL;
    }
    lowp_test_check(have == NF && strstr(buf, "pt 6") != NULL,
                    "threshold_vs_n.gp draws the fp32 sum returned in each format as open circles (%d of %d)", have, NF);
  }
  snprintf(cmd, sizeof cmd, "run softmax-overflow --nmax=0 --out %s/bad", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 2, "nmax = 0 exits 2");
  snprintf(cmd, sizeof cmd, "run softmax-overflow --mask=5 --out %s/bad", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 2, "a positive mask exits 2");
  lowp_test_check(!lowp_test_file_exists(dir, "bad"), "a bad run leaves no folder");
  lowp_test_remove_dir(dir);
  return lowp_test_end();
}
