/* lowp_exp_loss_scaling -- where a gradient is really lost in fp16, and the loss scale that saves it */

/*
 * Question: does the exercise's gradient 1e-6 really become zero in fp16;
 *   where does fp16 lose a gradient; and which loss scales keep a gradient
 *   nonzero, normal, and within the unit roundoff u, before the scaled loss
 *   or gradient overflows?
 * Method: the scaled gradient S*g is formed exactly and rounded once to
 *   the format (round to nearest even, IEEE overflow), its relative error
 *   measured against the exact product (lowp_ref_round_product,
 *   lib/measure/ref.h), with and without flush-to-zero. The thresholds come from
 *   the descriptor: zero at |x| <= xmins/2 (the tie goes to the even 0),
 *   normal from xmin - xmins/2 (the tie goes to the even xmin), relative
 *   error <= u from xmin/(1+u) on (below it some input in every interval
 *   has error > u; above it RNE gives <= u/(1+u)), overflow from xmax +
 *   ulp(xmax)/2 (inclusive when xmax's significand is odd). Each threshold
 *   is checked by rounding the value at and next to it with lowp_round_f64,
 *   and each smallest power of two by rounding 2^k g and 2^(k-1) g. The
 *   heat map rounds S*g over a grid of gradients and scales 2^(j/4).
 * Run: lowp run loss-scaling [--grads=1e-6,1e-8] [--loss=1] [--format=fp16]
 * Expected / acceptance: 1e-6 becomes the subnormal 17 * 2^-24 (nonzero)
 *   unless subnormals are flushed; fp16 loses only |g| <= 2^-25; every
 *   threshold agrees with lowp_round_f64 on both sides.
 */

#include "catalog.h"
#include "results.h"

#include "format/format.h"
#include "io/plot.h"
#include "measure/fpx.h"
#include "measure/ref.h"
#include "status.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lowp_param_t params[] = {
    {"grads", "1e-3,1e-4,1e-5,1e-6,1e-7,3e-8,1e-8,1e-9,1e-10", NULL,
     "gradient magnitudes for the threshold table (the exercise's 1e-6 included)"},
    {"example", "1e-6", NULL, "the exercise's example gradient"},
    {"loss", "1", NULL, "loss value whose scaled copy must not overflow"},
    {"format", "fp16", NULL, "gradient format (a built-in name with subnormals)"},
    {"gmin", "1e-12", NULL, "heat map: smallest gradient"},
    {"gmax", "1e4", NULL, "heat map: largest gradient"},
    {"kmax", "40", NULL, "heat map: scales 2^0 .. 2^kmax"},
    {"res", "20", "5", "heat map: gradients per decade (scales: res/5 per octave)"},
    {NULL, NULL, NULL, NULL}};

/* ------------------------------------------------------ private helpers */

typedef struct {
  const lowp_format_t *f;
  double xmins, xmin, xmax, u;
  double zero_t;  /* |x| <= zero_t rounds to 0 */
  double norm_t;  /* |x| >= norm_t rounds to a normal number */
  /* |x| >= xmin/(1+u): relative error <= u (not a double: kept as the
     quotient, compared and printed exactly by lib/measure/ref.h) */
  double ovf_t;   /* overflow threshold xmax + ulp/2 */
  int ovf_incl;   /* 1: ovf_t itself overflows */
  double ftz_t;   /* with FTZ: smallest positive double not flushed */
} thresholds_t;

static double rnd(double x, const lowp_format_t *f, int ftz) {
  lowp_policy_t pol;
  double y;
  memset(&pol, 0, sizeof pol);
  pol.ftz = ftz;
  lowp_round_f64(&y, x, f, &pol, LOWP_RND_NE);
  return y;
}

static int overflows(double y) { return isinf(y) || isnan(y); }

/* Thresholds from the descriptor; returns the number of failed checks of
   them against lowp_round_f64 (0 expected). */
static int get_thresholds(thresholds_t *t, const lowp_format_t *f) {
  int bad = 0;
  uint64_t lo, hi;
  t->f = f;
  t->xmins = lowp_format_xmins(f);
  t->xmin = lowp_format_xmin(f);
  t->xmax = lowp_format_xmax(f);
  t->u = lowp_format_u(f);
  t->zero_t = t->xmins / 2;
  t->norm_t = t->xmin - t->xmins / 2;
  t->ovf_t = t->xmax + lowp_ulp(t->xmax, f) / 2;
  t->ovf_incl = overflows(rnd(t->ovf_t, f, 0));
  /* checks: each threshold against rounding on both sides */
  bad += rnd(t->zero_t, f, 0) != 0.0;
  bad += rnd(nextafter(t->zero_t, INFINITY), f, 0) != t->xmins;
  bad += rnd(t->norm_t, f, 0) != t->xmin;
  bad += lowp_classify(rnd(nextafter(t->norm_t, 0), f, 0), f) != LOWP_CLASS_SUBNORMAL;
  bad += !overflows(rnd(nextafter(t->ovf_t, INFINITY), f, 0));
  bad += overflows(rnd(nextafter(t->ovf_t, 0), f, 0));
  /* FTZ: bisect on the ordered bit patterns of positive doubles */
  {
    double x;
    memcpy(&lo, &(double){0.0}, sizeof lo);
    x = t->xmin;
    memcpy(&hi, &x, sizeof hi); /* rnd(xmin) != 0 under FTZ */
    while (hi - lo > 1) {
      uint64_t mid = lo + (hi - lo) / 2;
      memcpy(&x, &mid, sizeof x);
      if (rnd(x, f, 1) != 0.0) hi = mid; else lo = mid;
    }
    memcpy(&t->ftz_t, &hi, sizeof hi);
  }
  return bad;
}

/* relative error |round(S g) - S g| / (S g) against the exact product
   (lib/measure/ref.h); +inf on overflow */
static double relerr(double s, double g, const lowp_format_t *f, double *val) {
  double y = NAN, r = NAN;
  (void)lowp_ref_round_product(&y, &r, s, g, f);
  if (val) *val = y;
  return r;
}

/* Smallest k with 2^k g > t (strict) or >= t; g > 0. */
static int min_pow2(double g, double t, int strict) {
  int k = -300;
  while (k < 300 && !(strict ? ldexp(g, k) > t : ldexp(g, k) >= t)) k++;
  return k;
}
/* Smallest k with 2^k g >= xmin/(1+u), compared exactly */
static int min_pow2_u(double g, const thresholds_t *t) {
  int k = -300;
  for (; k < 300; k++)
    if (lowp_ref_cmp_quotient(ldexp(g, k), t->xmin, 1.0 + t->u, 1.0) >= 0) break;
  return k;
}
/* Largest k with 2^k g below the overflow threshold. */
static int max_pow2(double g, const thresholds_t *t) {
  int k = 300;
  while (k > -300 && (t->ovf_incl ? ldexp(g, k) >= t->ovf_t : ldexp(g, k) > t->ovf_t)) k--;
  return k;
}

/* "%.8g" of the exact t / g, and of xmin / ((1+u) g) */
static void ratio_str_d(char *buf, size_t len, double t, double g) {
  (void)lowp_ref_quotient_str(buf, len, 8, t, g, 1.0);
}
static void ratio_str_u(char *buf, size_t len, const thresholds_t *t, double g) {
  (void)lowp_ref_quotient_str(buf, len, 8, t->xmin, 1.0 + t->u, g);
}

static void describe(char *buf, size_t len, double y, const lowp_format_t *f) {
  uint64_t bits = 0;
  lowp_encode(&bits, y, f);
  snprintf(buf, len, "%.6g [%a, bits 0x%0*llx, %s]", y, y, (lowp_format_width(f) + 3) / 4,
           (unsigned long long)bits, lowp_class_name(lowp_classify(y, f)));
}

/* --------------------------------------------------------------- run */

/* Every parameter parsed and checked (lowp_run_bad_param exits 2). */
static const lowp_format_t *parse(const lowp_run_t *r, double *grads, int *ng, double *ex,
                                  double *loss, double *gmin, double *gmax, int *kmax, int *res) {
  const lowp_format_t *f = lowp_format_by_name(lowp_run_param(r, "format"));
  if (!f) lowp_run_bad_param(r, "format", "unknown format name (see lowp formats)");
  if (!f->subnormals || !f->has_zero)
    lowp_run_bad_param(r, "format", "needs a format with subnormals and zero");
  *ng = (int)lowp_run_param_list_num(r, "grads", grads, 64, 0x1p-1074, DBL_MAX);
  *ex = lowp_run_param_num(r, "example");
  *loss = lowp_run_param_num(r, "loss");
  *gmin = lowp_run_param_num(r, "gmin");
  *gmax = lowp_run_param_num(r, "gmax");
  *kmax = (int)lowp_run_param_int(r, "kmax", 1, 120);
  *res = (int)lowp_run_param_int(r, "res", 1, 200);
  if (!(*ex > 0) || !isfinite(*ex)) lowp_run_bad_param(r, "example", "expected a positive number");
  if (!(*loss > 0) || !isfinite(*loss)) lowp_run_bad_param(r, "loss", "expected a positive number");
  if (!(*gmin > 0) || !isfinite(*gmin)) lowp_run_bad_param(r, "gmin", "expected a positive number");
  if (!(*gmax > *gmin) || !isfinite(*gmax)) lowp_run_bad_param(r, "gmax", "need 0 < gmin < gmax");
  return f;
}

static void check(const lowp_run_t *r) {
  double grads[64], ex, loss, gmin, gmax;
  int ng, kmax, res;
  (void)parse(r, grads, &ng, &ex, &loss, &gmin, &gmax, &kmax, &res);
}

/* Everything run() declares and measures, shared by its phases. */
typedef struct {
  const lowp_format_t *f;
  double grads[64], ex, loss, gmin, gmax;
  int ng, kmax, res, bad;
  thresholds_t t;
  cJSON *tables, *verdicts, *plots;
} ls_t;

/* the thresholds of the format (their checks were counted in L->bad) */
static void render_thresholds(ls_t *L) {
  const thresholds_t t = L->t;
  cJSON *rows;
  char a[256];
    static const char *const cols[] = {"event", "condition on |x| (x = S g)", "value", "checked with lowp_round_f64"};
    const char *cells[4];
    rows = lowp_result_table(L->tables, "Where the format loses, keeps and overflows a value (round to nearest even)", cols, 4);
    snprintf(a, sizeof a, "%.17g (= %a = xmins/2)", t.zero_t, t.zero_t);
    cells[0] = "becomes 0"; cells[1] = "|x| <= xmins/2 (the tie goes to the even 0)"; cells[2] = a;
    cells[3] = L->bad ? "FAILED" : "yes, at and next to it";
    lowp_result_add_row(rows, cells, 4);
    snprintf(a, sizeof a, "%.17g (= %a)", t.ftz_t, t.ftz_t);
    cells[0] = "becomes 0 with flush-to-zero"; cells[1] = "|x| < xmin - xmins/2 (flushed after rounding)"; cells[2] = a;
    cells[3] = "bisection over binary64";
    lowp_result_add_row(rows, cells, 4);
    snprintf(a, sizeof a, "%.17g (= %a = xmin - xmins/2)", t.norm_t, t.norm_t);
    cells[0] = "normal result"; cells[1] = "|x| >= xmin - xmins/2 (the tie goes to the even xmin)"; cells[2] = a;
    cells[3] = L->bad ? "FAILED" : "yes";
    lowp_result_add_row(rows, cells, 4);
    lowp_ref_quotient_str(a, sizeof a, 17, t.xmin, 1.0 + t.u, 1.0);
    strncat(a, " (= xmin/(1+u))", sizeof a - strlen(a) - 1);
    cells[0] = "relative error <= u from here on"; cells[1] = "|x| >= xmin/(1+u)"; cells[2] = a;
    cells[3] = "MPFR";
    lowp_result_add_row(rows, cells, 4);
    snprintf(a, sizeof a, "%.17g (= xmax + ulp/2)", t.ovf_t);
    cells[0] = "overflow"; cells[1] = t.ovf_incl ? "|x| >= xmax + ulp(xmax)/2" : "|x| > xmax + ulp(xmax)/2";
    cells[2] = a; cells[3] = L->bad ? "FAILED" : "yes";
    lowp_result_add_row(rows, cells, 4);
  }

/* per gradient: the smallest scales (real and power of two), checked by rounding; thresholds.csv */
static int measure_sweep(lowp_run_t *r, ls_t *L) {
  const lowp_format_t *f = L->f;
  const thresholds_t t = L->t;
  double *grads = L->grads, ex = L->ex;
  int ng = L->ng;
  cJSON *rows;
  char a[256], b[256], c[256], d[256], e[256], h[256], meas[1024];
  int i;
    static const char *const cols[] = {"gradient g", "g in the format (S = 1)", "with FTZ",
                                       "nonzero: S > (min 2^k)", "normal: S >= (min 2^k)",
                                       "rel. error <= u: S >= (min 2^k)", "g*S overflows: S >= (max 2^k)"};
    const char *cells[7];
    FILE *tc = fopen(lowp_run_path(r, "thresholds.csv"), "w");
    if (!tc) { fprintf(stderr, "lowp run loss-scaling: cannot write CSV\n"); return 2; }
    fprintf(tc, "gradient,value,class,ftz_value,s_nonzero,k_nonzero,s_normal,k_normal,s_within_u,k_within_u,s_overflow,k_max\n");
    rows = lowp_result_table(L->tables, "Smallest loss scales per gradient (real threshold, and the smallest power of two)", cols, 7);
    for (i = 0; i < ng + 1; i++) {
      double g = i < ng ? grads[i] : ex, y = rnd(g, f, 0), yf = rnd(g, f, 1);
      int kz = min_pow2(g, t.zero_t, 1), kn = min_pow2(g, t.norm_t, 0);
      int ku = min_pow2_u(g, &t), ko = max_pow2(g, &t);
      char sz[64], sn[64], su[64], so[64];
      if (i == ng) break;
      /* the powers of two are checked by rounding: 2^k g is exact in binary64 */
      if (rnd(ldexp(g, kz), f, 0) == 0.0 || rnd(ldexp(g, kz - 1), f, 0) != 0.0) L->bad++;
      if (lowp_classify(rnd(ldexp(g, kn), f, 0), f) != LOWP_CLASS_NORMAL ||
          lowp_classify(rnd(ldexp(g, kn - 1), f, 0), f) == LOWP_CLASS_NORMAL) L->bad++;
      if (relerr(ldexp(1, ku), g, f, NULL) > t.u || overflows(rnd(ldexp(g, ko), f, 0)) ||
          !overflows(rnd(ldexp(g, ko + 1), f, 0))) L->bad++;
      ratio_str_d(sz, sizeof sz, t.zero_t, g);
      ratio_str_d(sn, sizeof sn, t.norm_t, g);
      ratio_str_u(su, sizeof su, &t, g);
      ratio_str_d(so, sizeof so, t.ovf_t, g);
      snprintf(a, sizeof a, "%g", g);
      describe(b, sizeof b, y, f);
      snprintf(c, sizeof c, "%g (%s)", yf, lowp_class_name(lowp_classify(yf, f)));
      snprintf(d, sizeof d, "%s (2^%d)", sz, kz);
      snprintf(e, sizeof e, "%s (2^%d)", sn, kn);
      snprintf(h, sizeof h, "%s (2^%d)", su, ku);
      snprintf(meas, sizeof meas, "%s (2^%d)", so, ko);
      cells[0] = a; cells[1] = b; cells[2] = c; cells[3] = d; cells[4] = e; cells[5] = h; cells[6] = meas;
      lowp_result_add_row(rows, cells, 7);
      fprintf(tc, "%.17g,%.17g,%s,%.17g,%s,%d,%s,%d,%s,%d,%s,%d\n", g, y,
              lowp_class_name(lowp_classify(y, f)), yf, sz, kz, sn, kn, su, ku, so, ko);
    }
    fclose(tc);
    return 0;
}

/* the exercise's example and the loss: the answer and the verdicts */
static void judge(lowp_run_t *r, ls_t *L) {
  const lowp_format_t *f = L->f;
  const thresholds_t t = L->t;
  double ex = L->ex, loss = L->loss;
  char b[256], e[256], ans[2048], meas[1024];
    double y = rnd(ex, f, 0), yf = rnd(ex, f, 1), re = relerr(1.0, ex, f, NULL);
    int kz = min_pow2(ex, t.zero_t, 1), kn = min_pow2(ex, t.norm_t, 0), ku = min_pow2_u(ex, &t);
    int kl = max_pow2(loss, &t);
    char sn[64], su[64], sl[64], sz[64];
    ratio_str_d(sz, sizeof sz, t.zero_t, ex);
    ratio_str_d(sn, sizeof sn, t.norm_t, ex);
    ratio_str_u(su, sizeof su, &t, ex);
    ratio_str_d(sl, sizeof sl, t.ovf_t, loss);
    describe(b, sizeof b, y, f);
    snprintf(ans, sizeof ans,
             "No: %g is not lost in %s. It rounds to the subnormal %s, relative error %.3g%%; it becomes "
             "0 only with flush-to-zero (%g). %s loses a gradient (round to nearest even) only when "
             "|g| <= %a = %.6g (xmins/2: the tie goes to the even 0); with flush-to-zero everything below "
             "%.6g is lost. For g = %g: any scale S > %s keeps it nonzero (so S = 1 already does; "
             "smallest power of two 2^%d), S >= %s makes it normal (2^%d = %g), and from S = %s on every larger "
             "scale keeps its relative error within u = 2^%d (from 2^%d; some smaller scales, where S g happens to "
             "lie near a representable value, are within u too: slice.csv). A loss of %g overflows %s at S %s %s (largest power "
             "of two 2^%d = %g); a gradient g overflows at S %s %.6g/g.",
             ex, f->name, b, 100 * re, yf, f->name, t.zero_t, t.zero_t, t.ftz_t, ex, sz, kz, sn, kn,
             ldexp(1, kn), su, -f->precision, ku, loss, f->name,
             t.ovf_incl ? ">=" : ">", sl, kl, ldexp(1, kl), t.ovf_incl ? ">=" : ">", t.ovf_t);
    cJSON_AddStringToObject(r->results, "answer", ans);
    fprintf(r->summary, "**Answer.** %s\n\n", ans);
    {
      /* the index's key numbers (tools/cmd_report.c): the example in the format, where it becomes 0, and
         the smallest loss scales (the thresholds' decimal strings above, read back) */
      char lab[160];
      snprintf(lab, sizeof lab, "%s(%g), S = 1 (nonzero: %s)", f->name, ex, lowp_class_name(lowp_classify(y, f)));
      lowp_result_key(r->results, "example_in_format", lab, y);
      snprintf(lab, sizeof lab, "largest |g| that becomes 0 in %s", f->name);
      lowp_result_key(r->results, "zero_threshold", lab, t.zero_t);
      snprintf(lab, sizeof lab, "loss scale above which %g stays nonzero", ex);
      lowp_result_key(r->results, "min_scale_nonzero", lab, strtod(sz, NULL));
      snprintf(lab, sizeof lab, "smallest loss scale making %g normal", ex);
      lowp_result_key(r->results, "min_scale_normal", lab, strtod(sn, NULL));
      snprintf(lab, sizeof lab, "smallest power-of-two loss scale making %g normal", ex);
      lowp_result_key(r->results, "min_scale_normal_pow2", lab, ldexp(1, kn));
      snprintf(lab, sizeof lab, "loss scale from which every larger one keeps %g within u", ex);
      lowp_result_key(r->results, "min_scale_within_u", lab, strtod(su, NULL));
    }

    snprintf(meas, sizeof meas, "%s(%g) = %s: %s; with flush-to-zero: %g", f->name, ex, b,
             y == 0.0 ? "zero" : "nonzero, it becomes 0 only when subnormals are flushed to zero", yf);
    lowp_result_verdict(L->verdicts, "A gradient of 1e-6 becomes zero in fp16 without loss scaling",
                        "004_57bea4ceb5c470d1 (Reduced Precision Training), Exercises, 2", meas,
                        (y == 0.0) ? "holds" : "wrong");
    snprintf(meas, sizeof meas, "nonzero for S > %s (S = 1 suffices); normal from S >= %s, smallest power of two 2^%d = %g",
             sz, sn, kn, ldexp(1, kn));
    snprintf(e, sizeof e, "holds with a qualification: %g needs %s to stay nonzero; a scale of at least "
             "2^%d = %g makes it normal (full precision)", ex, kz <= 0 ? "no scaling" : "scaling", kn, ldexp(1, kn));
    lowp_result_verdict(L->verdicts, "There is a minimum loss scale that preserves a 1e-6 gradient",
                        "004_57bea4ceb5c470d1, Exercises, 2", meas, e);
    snprintf(meas, sizeof meas, "values in (%.6g, %.6g) become subnormals, not 0; e.g. %s(3e-5) = %.6g; only "
             "|g| <= %a = %.6g becomes 0 (everything below %.6g only with flush-to-zero, not the IEEE default)",
             t.zero_t, t.xmin, f->name, rnd(3e-5, f, 0), t.zero_t, t.zero_t, t.ftz_t);
    lowp_result_verdict(L->verdicts, "A gradient below the smallest normal 6.10e-5 becomes zero in fp16",
                        "001_f0391e47365751f2 (Elaborated AMP), 1.A", meas, rnd(3e-5, f, 0) == 0 ? "holds" : "wrong");
  }

/* the heat map over (g, S), its boundary lines and the slice at the example */
static int measure_heatmap(lowp_run_t *r, ls_t *L) {
  const lowp_format_t *f = L->f;
  const thresholds_t t = L->t;
  double ex = L->ex, gmin = L->gmin, gmax = L->gmax;
  int kmax = L->kmax, res = L->res;
  FILE *csv;
    int nx = (int)ceil(log10(gmax / gmin) * res) + 1, ny;
    int j, k;
    int kres = res / 5 < 1 ? 1 : res / 5;
    ny = kmax * kres + 1;
    csv = fopen(lowp_run_path(r, "heatmap.csv"), "w");
    if (!csv) { fprintf(stderr, "lowp run loss-scaling: cannot write CSV\n"); return 2; }
    fprintf(csv, "log10_gradient,log2_scale,log10_relerr_coded\n");
    for (k = 0; k < ny; k++) {
      double s = exp2((double)k / kres);
      lowp_run_progress(r, "heat map row %d/%d", k + 1, ny);
      for (j = 0; j < nx; j++) {
        double lg = log10(gmin) + (double)j / res, g = pow(10.0, lg), v, re, z;
        re = relerr(s, g, f, &v);
        /* coding: overflow 1, lost (0) 0, otherwise log10 of the relative error, floored at -7 */
        if (isinf(re)) z = 1;
        else if (v == 0.0) z = 0;
        else z = re < 1e-7 ? -7 : log10(re);
        fprintf(csv, "%.6f,%.6f,%.6f\n", lg, (double)k / kres, z);
      }
      fprintf(csv, "\n");
    }
    fclose(csv);
    csv = fopen(lowp_run_path(r, "lines.csv"), "w");
    if (!csv) return 2;
    fprintf(csv, "log10_gradient,log2_s_nonzero,log2_s_normal,log2_s_overflow\n");
    for (j = 0; j < nx; j++) {
      double lg = log10(gmin) + (double)j / res;
      fprintf(csv, "%.6f,%.6f,%.6f,%.6f\n", lg, log2(t.zero_t) - lg * log2(10.0),
              log2(t.norm_t) - lg * log2(10.0), log2(t.ovf_t) - lg * log2(10.0));
    }
    fclose(csv);
    csv = fopen(lowp_run_path(r, "slice.csv"), "w");
    if (!csv) return 2;
    fprintf(csv, "scale,relerr,u\n");
    for (k = -6 * 16; k <= 20 * 16; k++) {
      double s = exp2(k / 16.0), re = relerr(s, ex, f, NULL);
      if (isinf(re)) break;
      fprintf(csv, "%.17g,%.17g,%.17g\n", s, re, t.u);
    }
    fclose(csv);
    return 0;
}

static int render_plots(lowp_run_t *r, ls_t *L) {
  const lowp_format_t *f = L->f;
  const thresholds_t t = L->t;
  double ex = L->ex, gmin = L->gmin, gmax = L->gmax;
  int kmax = L->kmax;
  int st;
    char extra[2048], title[256];
    lowp_plot_t p = {NULL, "log10 of the gradient g", "log2 of the loss scale S", 0, 0, extra};
    lowp_series_t s[4] = {
        {"heatmap.csv", 1, 2, "", "lines lt nodraw notitle, 'heatmap.csv' using 1:2:3 with image", NULL, 0, 0},
        {"lines.csv", 1, 2, "S g = xmins/2: below, lost (0)", "lines lc rgb '#000000'", NULL, 0, 1},
        {"lines.csv", 1, 3, "S g = xmin - xmins/2: above, normal", "lines lc rgb '#e0e0e0'", NULL, 0, 0},
        {"lines.csv", 1, 4, "S g = overflow threshold", "lines lc rgb '#d62728'", NULL, 0, 1}};
    snprintf(title, sizeof title, "Relative error of S*g rounded to %s (round to nearest even)", f->name);
    p.title = title;
    snprintf(extra, sizeof extra,
             "set key below horizontal width 2 nobox\nset bmargin 8\nset xrange [%g:%g]\nset yrange [0:%d]\n"
             "set cbrange [-7:1]\nset cblabel 'relative error' offset -1,0\n"
             "set palette defined (-7 '#08306b', -5 '#2171b5', %.4f '#9ecae1', %.4f '#fee391', -0.5 '#fe9929', "
             "-0.01 '#cc4c02', 0 '#7f0000', 0.5 '#7f0000', 0.51 '#444444', 1 '#444444')\n"
             "set cbtics ('10^{-7}' -7, '10^{-6}' -6, '10^{-5}' -5, 'u' %.4f, '10^{-3}' -3, '10^{-2}' -2, '10^{-1}' -1, 'lost' 0, "
             "'overflow' 1)\n"
             "set grid front",
             log10(gmin), log10(gmax), kmax, log10(t.u) - 0.01, log10(t.u) + 0.01, log10(t.u));
    st = lowp_plot(r->outdir, "heatmap", &p, s, 4);
    if (st == 0) {
      char qx[1024];
      lowp_plot_t q = {NULL, "loss scale S (log scale)", "relative error of S g in the format (log scale)", 1, 1, qx};
      snprintf(qx, sizeof qx,
               "set key bottom left box opaque\nset logscale x 2\nset xrange [1.0/64:1048576]\n"
               "set xtics ('1/64' 1.0/64, '1/8' 0.125, '1' 1, '8' 8, '64' 64, '512' 512, '4096' 4096, "
               "'32768' 32768, '262144' 262144)\n"
               "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead dt 3 lc rgb '#555555'\n"
               "set label 'S g = xmin - xmins/2 (normal from here)' at %.17g, graph 0.93 offset 0.5,0\n"
               "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead dt 3 lc rgb '#555555'\n"
               "set label 'S g = xmins/2 (lost below)' at %.17g, graph 0.25 offset 0.5,0",
               t.norm_t / ex, t.norm_t / ex, t.norm_t / ex, t.zero_t / ex, t.zero_t / ex, t.zero_t / ex);
      lowp_series_t s2[2] = {{"slice.csv", 1, 2, "relative error of round(S g)", "lines", NULL, 0, 0},
                             {"slice.csv", 1, 3, "unit roundoff u", "lines", NULL, 0, 1}};
      snprintf(title, sizeof title, "The exercise's gradient g = %g scaled by S and rounded to %s", ex, f->name);
      q.title = title;
      st = lowp_plot(r->outdir, "slice", &q, s2, 2);
    }
    lowp_result_plot(L->plots, "heatmap.png",
                     "Relative error of the scaled gradient S*g after rounding, over gradients (x) and power-of-two-spaced "
                     "scales (y). Dark red: lost (rounds to 0); grey: overflow; the white line is where the result "
                     "becomes normal, above which the error is at most u.");
    lowp_result_plot(L->plots, "slice.png",
                     "The exercise's 1e-6 as a function of the scale: the error falls as more of its bits survive in the "
                     "subnormal range, and stays below u once S*g is normal.");
    if (st != 0) return lowp_run_plot_failed(r, st);
  return 0;
  }

/* Where scaling first goes wrong: for S = 2^k, k = 0..kmax (the step), the
   product S g_i of each gradient of the table (element i) and S times the
   loss (element ng) rounded once to the format (lowp_fpx_op2: classified
   from the exact product), in that order. The first underflow and the
   first overflow, each with its kind and whether the exact product raises
   it too (a single rounding: always, unless the trace finds otherwise).
   Returns 2 when out of memory. */
static int report_first_exception(lowp_run_t *r, ls_t *L) {
  lowp_fpx_trace_t t;
  char ctx[256];
  int k, i;
  lowp_fpx_init(&t);
  for (k = 0; k <= L->kmax; k++)
    for (i = 0; i <= L->ng; i++) {
      lowp_fpx_event_t w;
      double y;
      lowp_fpx_event_init(&w);
      w.seq = (uint64_t)k * (uint64_t)(L->ng + 1) + (uint64_t)i;
      w.i = k;
      w.j = i;
      (void)lowp_fpx_op2(&t, &w, LOWP_FPX_OP_MUL, &y, ldexp(1.0, k), i < L->ng ? L->grads[i] : L->loss,
                         L->f, NULL, LOWP_RND_NE, 0);
    }
  snprintf(ctx, sizeof ctx, "%s, loss scales S = 2^step (step 0..%d) times the table's %d gradients (elements "
           "0..%d) and the loss %g (element %d), underflow", L->f->name, L->kmax, L->ng, L->ng - 1, L->loss, L->ng);
  if (!lowp_result_first_exception(r, ctx, &t, LOWP_FPX_UNDERFLOW)) return 2;
  snprintf(ctx, sizeof ctx, "%s, the same products, overflow", L->f->name);
  if (!lowp_result_first_exception(r, ctx, &t, LOWP_FPX_OVERFLOW | LOWP_FPX_BIT(LOWP_FPX_INVALID))) return 2;
  return 0;
}

static int run(lowp_run_t *r) {
  ls_t L;
  int st;
  memset(&L, 0, sizeof L);
  /* declare: the format, the gradients, the scales; the thresholds from the descriptor */
  L.f = parse(r, L.grads, &L.ng, &L.ex, &L.loss, &L.gmin, &L.gmax, &L.kmax, &L.res);
  L.bad = get_thresholds(&L.t, L.f);
  L.tables = cJSON_AddArrayToObject(r->results, "tables");
  L.verdicts = cJSON_AddArrayToObject(r->results, "verdicts");
  L.plots = cJSON_AddArrayToObject(r->results, "plots");
  render_thresholds(&L);
  /* measure (with the sweep's table) and judge */
  if ((st = measure_sweep(r, &L)) != 0) return st;
  judge(r, &L);
  if ((st = report_first_exception(r, &L)) != 0) return st;
  if ((st = measure_heatmap(r, &L)) != 0) return st;
  /* render */
  if ((st = render_plots(r, &L)) != 0) return st;
  fprintf(r->summary, "Thresholds checked against lowp_round_f64: %s.\n\nFiles: thresholds.csv, heatmap.csv, "
          "heatmap.png, slice.png.\n", L.bad ? "FAILED" : "all agree");
  if (L.bad) {
    fprintf(stderr, "lowp run loss-scaling: %d threshold checks failed\n", L.bad);
    return 1;
  }
  return 0;
}

const lowp_experiment_t lowp_exp_loss_scaling = {
    "loss-scaling",
    "Does a 1e-6 gradient really become zero in fp16, where are gradients really lost, and which loss "
    "scale keeps them nonzero, normal and within u before anything overflows?",
    "S*g formed exactly (MPFR) and rounded once to the format (round to nearest even, IEEE overflow), with "
    "and without flush-to-zero; thresholds derived from the format descriptor (zero at xmins/2, normal from "
    "xmin - xmins/2, error <= u from xmin/(1+u), overflow at xmax + ulp/2) and checked by rounding on both "
    "sides of each; smallest real and power-of-two scales per gradient; a heat map over (g, S).",
    "1e-6 stays nonzero (a subnormal) unless flushed; fp16 loses only |g| <= 2^-25; all thresholds agree "
    "with lowp_round_f64.",
    params, run, check};
