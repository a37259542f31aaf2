/* texp_loss_scaling -- the loss-scaling experiment's answers against an independent MPFR fp16 */

/*
 * The oracle emulates binary16 with MPFR alone (precision 11, mpfr_set_emin
 * and mpfr_subnormalize, MPFR's documented recipe for IEEE formats), sharing
 * no code with lib/format. It checks: the exercise's 1e-6 is the subnormal
 * 17 * 2^-24 (bits 0x0011), zero only under flush-to-zero semantics; the
 * largest value lost is 2^-25 (the tie rounds to 0); and, for every gradient
 * of the quick run's table, the smallest power-of-two scales that make the
 * gradient nonzero and normal, that give relative error <= u from there on,
 * and the largest that does not overflow, as thresholds.csv reports them.
 * Then it checks that the run's files exist and that a bad parameter
 * value exits with status 2.
 *
 * Run: ctest --test-dir build -R texp_loss_scaling
 */

#define _POSIX_C_SOURCE 200809L

#include "testutil.h"

#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ the oracle */

#define P16 11
#define XMINS_EXP16 (-24)
#define XMAX16 65504.0

/* x rounded to binary16 (RNE), inf beyond the largest finite value */
static double f16(double x) {
  mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_t t;
  int inex;
  double y;
  mpfr_set_emin(XMINS_EXP16 + 1);
  mpfr_set_emax(1024);
  mpfr_init2(t, P16);
  inex = mpfr_set_d(t, x, MPFR_RNDN);
  inex = mpfr_subnormalize(t, inex, MPFR_RNDN);
  (void)inex;
  y = mpfr_get_d(t, MPFR_RNDN);
  mpfr_clear(t);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  return fabs(y) > XMAX16 ? copysign(INFINITY, y) : y;
}

/* ---------------------------------------------------------------- main */

int main(void) {
  char dir[] = "/tmp/texp_loss_scaling.XXXXXX", out[4200], path[4300], line[4096], cmd[4400];
  FILE *f;
  int rows = 0;
  lowp_test_start("texp_loss_scaling");

  /* the exercise's premise, from first principles */
  lowp_test_check(f16(1e-6) == 17 * ldexp(1, -24), "fp16(1e-6) = %a, want 17*2^-24", f16(1e-6));
  lowp_test_check(f16(ldexp(1, -25)) == 0 && f16(nextafter(ldexp(1, -25), 1)) == ldexp(1, -24),
                  "2^-25 is the largest value lost");
  lowp_test_check(f16(ldexp(1, -14) - ldexp(1, -25)) == ldexp(1, -14), "the tie below xmin goes up to xmin");
  lowp_test_check(isinf(f16(65520)) && f16(nextafter(65520, 0)) == 65504, "overflow from 65520");

  lowp_test_make_tmpdir(dir);
  snprintf(out, sizeof out, "%s/ls", dir);
  snprintf(cmd, sizeof cmd, "run loss-scaling --quick --out %s", out);
  lowp_test_check(lowp_test_run_lowp(cmd) == 0, "lowp run loss-scaling --quick exits 0");
  lowp_test_check(lowp_test_files_exist(out, (const char *const[]){"results.json", "summary.md", "heatmap.png", "heatmap.svg", "slice.png", "thresholds.csv", "heatmap.csv", NULL}),
                  "the run wrote its files");

  snprintf(path, sizeof path, "%s/thresholds.csv", out);
  f = fopen(path, "r");
  lowp_test_check(f != NULL, "thresholds.csv readable");
  if (f) {
    if (!fgets(line, sizeof line, f)) line[0] = '\0';
    while (fgets(line, sizeof line, f)) {
      double g, val, ftz, sn;
      char cls[32], s0[64], s1[64], s2[64], s3[64];
      int kz, kn, ku, kmax, k, want;
      if (sscanf(line, "%lf,%lf,%31[^,],%lf,%63[^,],%d,%63[^,],%d,%63[^,],%d,%63[^,],%d", &g, &val, cls, &ftz, s0, &kz,
                 s1, &kn, s2, &ku, s3, &kmax) != 12) {
        lowp_test_check(0, "malformed line: %s", line);
        continue;
      }
      rows++;
      lowp_test_check(val == f16(g), "g = %g: value %a, oracle %a", g, val, f16(g));
      for (want = -100; f16(ldexp(g, want)) == 0; want++) {}
      lowp_test_check(kz == want, "g = %g: smallest 2^k nonzero: %d, oracle %d", g, kz, want);
      for (want = -100; fabs(f16(ldexp(g, want))) < ldexp(1, -14); want++) {}
      lowp_test_check(kn == want, "g = %g: smallest 2^k normal: %d, oracle %d", g, kn, want);
      /* within u from ku on: the relative error at 2^ku and above is <= u, and 2^(ku-1) g is below
         xmin/(1+u) (in MPFR), where some real value of S has error above u */
      {
        mpfr_t t;
        int ok = 1;
        for (k = ku; k <= kmax; k++) {
          double x = ldexp(g, k);
          ok &= fabs(f16(x) - x) <= ldexp(1, -11) * x;
        }
        lowp_test_check(ok, "g = %g: relative error <= u for 2^%d .. 2^%d", g, ku, kmax);
        mpfr_init2(t, 200);
        mpfr_set_d(t, 1 + ldexp(1, -11), MPFR_RNDN);
        mpfr_ui_div(t, 1, t, MPFR_RNDN);
        mpfr_mul_2si(t, t, -14, MPFR_RNDN);
        lowp_test_check(mpfr_cmp_d(t, ldexp(g, ku - 1)) > 0 && mpfr_cmp_d(t, ldexp(g, ku)) <= 0,
                        "g = %g: 2^%d is the first power of two at or above xmin/(1+u)", g, ku);
        mpfr_clear(t);
      }
      for (want = 200; isinf(f16(ldexp(g, want))); want--) {}
      lowp_test_check(kmax == want, "g = %g: largest 2^k without overflow: %d, oracle %d", g, kmax, want);
      /* the real threshold for "normal": (2^-14 - 2^-25) / g */
      sn = strtod(s1, NULL);
      lowp_test_check(fabs(sn - (ldexp(1, -14) - ldexp(1, -25)) / g) <= 1e-7 * sn, "g = %g: S_normal %s", g, s1);
      (void)ftz;
    }
    fclose(f);
  }
  lowp_test_check(rows >= 5, "the table has the gradients (%d rows)", rows);

  /* bad parameter values: exit 2, nothing written */
  snprintf(cmd, sizeof cmd, "run loss-scaling --format=nosuch --out %s/bad", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 2, "unknown format exits 2");
  snprintf(cmd, sizeof cmd, "run loss-scaling --grads=-1 --out %s/bad", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 2, "a negative gradient exits 2");
  lowp_test_check(!lowp_test_file_exists(dir, "bad"), "a bad run leaves no folder");

  lowp_test_remove_dir(dir);
  return lowp_test_end();
}
