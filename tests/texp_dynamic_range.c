/* texp_dynamic_range -- the dynamic-range experiment's exact fractions against an independent oracle */

/*
 * The oracle rounds with MPFR alone (precision p, subnormals by
 * mpfr_subnormalize, overflow when the rounded value exceeds the largest
 * finite value: the formats' published constants, typed here as the
 * oracle's own data). It finds each class boundary by bisection over
 * binary64 (no formula), and integrates the uniform and log-uniform laws
 * over [1e-8, 1e8] in MPFR. The experiment derives the same boundaries
 * from the descriptors; the fractions must agree to 1e-12 (relative) or
 * 1e-300 (absolute, for empty classes). Also: the sampled fractions are
 * within the stated bound (bound_used <= 1), and the run wrote its files.
 *
 * Run: ctest --test-dir build -R texp_dynamic_range
 */

#define _POSIX_C_SOURCE 200809L

#include "testutil.h"

#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { const char *name; int p, xmins_exp, xmin_exp; double xmax; } ofmt_t;
static const ofmt_t fmts[] = {
    {"fp16", 11, -24, -14, 65504.0},
    {"bf16", 8, -133, -126, 0x1.fep+127},
    {"tf32", 11, -136, -126, 0x1.ffep+127},
    {"e4m3", 4, -9, -6, 448.0},
    {"e5m2", 3, -16, -14, 57344.0},
};
#define NF 5

/* class of x rounded: 0 overflow, 1 zero, 2 subnormal, 3 normal */
static int cls(double x, const ofmt_t *f) {
  mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_t t;
  int inex;
  double y;
  mpfr_set_emin(f->xmins_exp + 1);
  mpfr_set_emax(1024);
  mpfr_init2(t, f->p);
  inex = mpfr_set_d(t, x, MPFR_RNDN);
  (void)mpfr_subnormalize(t, inex, MPFR_RNDN);
  y = mpfr_get_d(t, MPFR_RNDN);
  mpfr_clear(t);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  if (y > f->xmax) return 0;
  if (y == 0) return 1;
  return y < ldexp(1, f->xmin_exp) ? 2 : 3;
}

/* smallest positive double x with cls(x) >= c... by bisection on bit patterns:
   the first x whose class is not `below` */
static double boundary(const ofmt_t *f, int below, int above) {
  uint64_t lo, hi;
  double x = 1e-300;
  memcpy(&lo, &x, 8);
  x = 1e300;
  memcpy(&hi, &x, 8);
  (void)above;
  /* classes in increasing x: zero(1), subnormal(2), normal(3), overflow(0) */
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    int c;
    memcpy(&x, &mid, 8);
    c = cls(x, f);
    if ((below == 3 ? c == 3 || c == 2 || c == 1 : below == 2 ? c == 2 || c == 1 : c == 1)) lo = mid;
    else hi = mid;
  }
  memcpy(&x, &hi, 8);
  return x; /* first x above the class `below` and everything under it */
}

static double frac(double lo, double hi, int law) {
  mpfr_t a, b, l, h, r;
  double out;
  mpfr_inits2(256, a, b, l, h, r, (mpfr_ptr)0);
  mpfr_set_str(a, "1e-8", 10, MPFR_RNDN);
  mpfr_set_str(b, "1e8", 10, MPFR_RNDN);
  if (lo < 0) mpfr_set(l, a, MPFR_RNDN); else { mpfr_set_d(l, lo, MPFR_RNDN); mpfr_max(l, l, a, MPFR_RNDN); }
  if (isinf(hi)) mpfr_set(h, b, MPFR_RNDN); else { mpfr_set_d(h, hi, MPFR_RNDN); mpfr_min(h, h, b, MPFR_RNDN); }
  if (mpfr_cmp(h, l) <= 0) out = 0;
  else {
    if (law) { mpfr_log(l, l, MPFR_RNDN); mpfr_log(h, h, MPFR_RNDN); mpfr_log(a, a, MPFR_RNDN); mpfr_log(b, b, MPFR_RNDN); }
    mpfr_sub(r, h, l, MPFR_RNDN);
    mpfr_sub(h, b, a, MPFR_RNDN);
    mpfr_div(r, r, h, MPFR_RNDN);
    out = mpfr_get_d(r, MPFR_RNDN);
  }
  mpfr_clears(a, b, l, h, r, (mpfr_ptr)0);
  return out;
}

int main(void) {
  char dir[] = "/tmp/texp_dynamic_range.XXXXXX", out[4200], path[4300], line[1024], cmd[4400];
  static const char *const cn[4] = {"overflow", "zero", "subnormal", "normal"};
  double want[2][NF][4];
  int i, law, rows = 0;
  FILE *f;
  lowp_test_start("texp_dynamic_range");
  for (i = 0; i < NF; i++) {
    double t0 = boundary(&fmts[i], 1, 2), t1 = boundary(&fmts[i], 2, 3), t2 = boundary(&fmts[i], 3, 0);
    for (law = 0; law < 2; law++) {
      want[law][i][1] = frac(-1, t0, law);
      want[law][i][2] = frac(t0, t1, law);
      want[law][i][3] = frac(t1, t2, law);
      want[law][i][0] = frac(t2, INFINITY, law);
    }
  }
  /* a closed-form spot check of the oracle itself: log-uniform fp16 overflow = ln(1e8/65520)/ln(1e16) */
  lowp_test_check(fabs(want[1][0][0] - log(1e8 / 65520.0) / log(1e16)) < 1e-12, "oracle: fp16 log-uniform overflow");

  lowp_test_make_tmpdir(dir);
  snprintf(out, sizeof out, "%s/dr", dir);
  snprintf(cmd, sizeof cmd, "run dynamic-range --quick --out %s", out);
  lowp_test_check(lowp_test_run_lowp(cmd) == 0, "lowp run dynamic-range --quick exits 0");
  lowp_test_check(lowp_test_files_exist(out, (const char *const[]){"results.json", "summary.md", "uniform.png", "loguniform.png", "uniform.svg", "fractions.csv", "thresholds.csv", NULL}),
                  "the run wrote its files");
  snprintf(path, sizeof path, "%s/fractions.csv", out);
  f = fopen(path, "r");
  lowp_test_check(f != NULL, "fractions.csv readable");
  if (f) {
    if (!fgets(line, sizeof line, f)) line[0] = '\0';
    while (fgets(line, sizeof line, f)) {
      char dist[32], name[32], c[32];
      double pos, exact, sampled, count, n, bound, used;
      int fi = -1, ci = -1, k;
      if (sscanf(line, "%31[^,],%31[^,],%31[^,],%lf,%lf,%lf,%lf,%lf,%lf,%lf", dist, name, c, &pos, &exact, &sampled,
                 &count, &n, &bound, &used) != 10) { lowp_test_check(0, "malformed: %s", line); continue; }
      for (k = 0; k < NF; k++) if (!strcmp(fmts[k].name, name)) fi = k;
      for (k = 0; k < 4; k++) if (!strcmp(cn[k], c)) ci = k;
      if (fi < 0 || ci < 0) { lowp_test_check(0, "unknown row: %s", line); continue; }
      law = !strcmp(dist, "log-uniform");
      rows++;
      lowp_test_check(fabs(exact - want[law][fi][ci]) <= 1e-12 * fabs(want[law][fi][ci]) + 1e-300,
                      "%s %s %s: exact %.17g, oracle %.17g", dist, name, c, exact, want[law][fi][ci]);
      lowp_test_check(used <= 1, "%s %s %s: sampled %.6g within the bound (%.2f used)", dist, name, c, sampled, used);
    }
    fclose(f);
  }
  lowp_test_check(rows == 2 * NF * 4, "all %d rows present (%d)", 2 * NF * 4, rows);
  snprintf(cmd, sizeof cmd, "run dynamic-range --formats=fp16,nosuch --out %s/bad", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 2, "unknown format exits 2");
  snprintf(cmd, sizeof cmd, "run dynamic-range --hi=1e-9 --out %s/bad", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 2, "hi below lo exits 2");
  lowp_test_check(!lowp_test_file_exists(dir, "bad"), "a bad run leaves no folder");
  lowp_test_remove_dir(dir);
  return lowp_test_end();
}
