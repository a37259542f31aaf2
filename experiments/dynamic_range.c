/* lowp_exp_dynamic_range -- what fraction of [1e-8, 1e8] each format loses, keeps subnormal, keeps normal */

/*
 * Question: for values uniformly and log-uniformly distributed on
 *   [1e-8, 1e8], what fraction overflows, rounds to zero, lands subnormal
 *   and stays normal when rounded to fp16, bf16, tf32, e4m3 and e5m2?
 * Method: round to nearest even with IEEE overflow (e4m3, which has no
 *   infinity, gives NaN). The classes are intervals whose ends come from the
 *   format descriptor and the rounding rule: 0 for x <= xmins/2 (the tie goes
 *   to the even 0), subnormal below xmin - xmins/2 (that tie goes to the
 *   even xmin), overflow from xmax + ulp(xmax)/2 (for e4m3 strictly above:
 *   448 has an even significand and takes the tie). The exact fraction of
 *   each interval is computed (lowp_ref_share, lib/measure/ref.h: MPFR at
 *   256 bits) from the decimal end points of the range: length ratio for the uniform law, ratio of logarithms for
 *   the log-uniform one. The same fractions are then sampled: N seeded
 *   values per law (Philox), each rounded by lowp_round_f64 and classified.
 *   Agreement is tested with Bernstein's inequality: |k - Np| <= L/3 +
 *   sqrt(L^2/9 + 2 N p (1-p) L), L = ln(2/delta), delta = 1e-9 per cell.
 * Run: lowp run dynamic-range [--formats=fp16,bf16] [--samples=10000000]
 * Expected / acceptance: every sampled count within its bound; uniform
 *   values almost all overflow fp16 (only [0, 65520) of [0, 1e8] survives);
 *   bf16 and tf32 keep everything normal.
 */

#include "catalog.h"
#include "results.h"

#include "format/format.h"
#include "io/plot.h"
#include "measure/ref.h"
#include "rng/rng.h"
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lowp_param_t params[] = {
    {"formats", "fp16,bf16,tf32,e4m3,e5m2", NULL, "formats (built-in names, with subnormals)"},
    {"lo", "1e-8", NULL, "lower end of the range (decimal, exact)"},
    {"hi", "1e8", NULL, "upper end of the range (decimal, exact)"},
    {"samples", "10000000", "100000", "sampled values per distribution"},
    {NULL, NULL, NULL, NULL}};

#define NCLASS 4
#define MAXF 16
static const char *const class_names[NCLASS] = {"overflow", "zero", "subnormal", "normal"};
static const char *const dist_names[2] = {"uniform", "log-uniform"};

/* ------------------------------------------------------ private helpers */

/* class index of x rounded to f: 0 overflow, 1 zero, 2 subnormal, 3 normal */
static int classify_rounded(double x, const lowp_format_t *f) {
  double y;
  lowp_round_f64(&y, x, f, NULL, LOWP_RND_NE);
  switch (lowp_classify(y, f)) {
  case LOWP_CLASS_ZERO: return 1;
  case LOWP_CLASS_SUBNORMAL: return 2;
  case LOWP_CLASS_NORMAL: return 3;
  default: return 0;
  }
}

static double bernstein(double n, double p) {
  double L = log(2.0 / 1e-9);
  return L / 3 + sqrt(L * L / 9 + 2 * n * p * (1 - p) * L);
}

/* --------------------------------------------------------------- run */

/* lowp_run_param_formats check: the classes need a subnormal range and a zero */
static const char *need_subnormals(const lowp_format_t *f) {
  return !f->subnormals || !f->has_zero ? "formats need subnormals and zero" : NULL;
}

/* Every parameter parsed and checked (lowp_run_bad_param exits 2); lo and hi are
   decimal texts, read exactly by lib/measure/ref.h, and their nearest doubles. */
static int parse(const lowp_run_t *r, lowp_format_t *fs, long long *ns, double *lo, double *hi) {
  int nf, sg = 0;
  const char *a = lowp_run_param(r, "lo"), *b = lowp_run_param(r, "hi");
  *ns = lowp_run_param_int(r, "samples", 1000, 1000000000LL);
  nf = (int)lowp_run_param_formats(r, "formats", fs, MAXF, need_subnormals);
  /* [1e-300, 1e300]: the sampled values are binary64 values, so a range
     beyond them is bad input, not 20 failed checks */
  if (lowp_ref_decimal(lo, &sg, a) != LOWP_OK || sg <= 0 || *lo < 1e-300)
    lowp_run_bad_param(r, "lo", "expected a positive number (at least 1e-300)");
  if (lowp_ref_decimal(hi, NULL, b) != LOWP_OK || lowp_ref_decimal_cmp(b, a) != 1 || *hi > 1e300)
    lowp_run_bad_param(r, "hi", "expected a number above lo (at most 1e300)");
  return nf;
}

static void check(const lowp_run_t *r) {
  lowp_format_t fs[MAXF];
  long long ns;
  double lo, hi;
  (void)parse(r, fs, &ns, &lo, &hi);
}

/* Everything run() declares and measures, shared by its phases. */
typedef struct {
  lowp_format_t fs[MAXF];
  int nf, bad;
  long long ns;
  double lo, hi;
  double exact[2][MAXF][NCLASS], lost[2][MAXF];
  long long cnt[2][MAXF][NCLASS];
  cJSON *tables, *plots, *verdicts;
} dr_t;

/* measure: the class boundaries of each format (checked by rounding on both
   sides; thresholds.csv) and the exact share of the range in each class */
static int measure_exact(lowp_run_t *r, dr_t *D) {
  FILE *csv = fopen(lowp_run_path(r, "thresholds.csv"), "w");
  const char *a = lowp_run_param(r, "lo"), *b = lowp_run_param(r, "hi");
  int i, c, law;
  if (!csv) { fprintf(stderr, "lowp run dynamic-range: cannot write CSV\n"); return 2; }
  fprintf(csv, "format,zero_upto,normal_from,overflow_from,overflow_inclusive\n");
  for (i = 0; i < D->nf; i++) {
    const lowp_format_t *f = &D->fs[i];
    double xs = lowp_format_xmins(f), xm = lowp_format_xmin(f), xM = lowp_format_xmax(f);
    double t0 = xs / 2, t1 = xm - xs / 2, t2 = xM + lowp_ulp(xM, f) / 2;
    double edges[NCLASS][2] = {{t2, INFINITY}, {-1, t0}, {t0, t1}, {t1, t2}};
    double y;
    int incl;
    lowp_round_f64(&y, t2, f, NULL, LOWP_RND_NE);
    incl = isinf(y) || isnan(y);
    /* the ends are where rounding changes class: check on both sides */
    D->bad += classify_rounded(t0, f) != 1 || classify_rounded(nextafter(t0, 1), f) != 2;
    D->bad += classify_rounded(t1, f) != 3 || classify_rounded(nextafter(t1, 0), f) != 2;
    D->bad += classify_rounded(nextafter(t2, INFINITY), f) != 0 || classify_rounded(nextafter(t2, 0), f) != 3;
    fprintf(csv, "%s,%.17g,%.17g,%.17g,%d\n", f->name, t0, t1, t2, incl);
    for (law = 0; law < 2; law++) {
      for (c = 0; c < NCLASS; c++)
        if (lowp_ref_share(&D->exact[law][i][c], a, b, edges[c][0], edges[c][1], law) != LOWP_OK) D->bad++;
      D->lost[law][i] = D->exact[law][i][0] + D->exact[law][i][1];
    }
  }
  return fclose(csv) == 0 ? 0 : 2;
}

/* measure: the same shares sampled, N seeded values per law rounded to each format */
static void measure_sampled(lowp_run_t *r, dr_t *D) {
  int law, i;
  for (law = 0; law < 2; law++) {
    lowp_rng_t g;
    long long k, ns = D->ns;
    double lo = D->lo, hi = D->hi, la = log(lo), lb = log(hi);
    lowp_rng_init(&g, r->seed, (uint32_t)law);
    for (k = 0; k < ns; k++) {
      double u = lowp_rng_uniform(&g), x = law == 0 ? lo + (hi - lo) * u : exp(la + (lb - la) * u);
      if ((k & 0xfffff) == 0) lowp_run_progress(r, "%s: %lld/%lld", dist_names[law], k, ns);
      for (i = 0; i < D->nf; i++) D->cnt[law][i][classify_rounded(x, &D->fs[i])]++;
    }
  }
}

/* render + judge: per law a table of exact / sampled shares, each cell held to
   Bernstein's bound; fractions.csv and one CSV per law */
static int render_tables(lowp_run_t *r, dr_t *D) {
  const lowp_format_t *fs = D->fs;
  int nf = D->nf, i, c, law;
  long long ns = D->ns;
  double (*exact)[MAXF][NCLASS] = D->exact, (*lost)[MAXF] = D->lost;
  long long (*cnt)[MAXF][NCLASS] = D->cnt;
  FILE *csv = fopen(lowp_run_path(r, "fractions.csv"), "w");
  if (!csv) return 2;
  fprintf(csv, "distribution,format,class,position,exact,sampled,count,samples,bound,bound_used\n");
  for (law = 0; law < 2; law++) {
    /* one file per law too: the plot filters on the class column only */
    FILE *lcsv = fopen(lowp_run_path(r, law ? "fractions_loguniform.csv" : "fractions_uniform.csv"), "w");
    static const char *const cols[] = {"format", "overflow", "zero (rounds to 0)", "subnormal", "normal",
                                       "lost (overflow + zero)", "sampled within bound"};
    char title[256];
    cJSON *rows;
    snprintf(title, sizeof title, "%s on [%s, %s]: exact fraction (MPFR) / sampled fraction (N = %lld)",
             dist_names[law], lowp_run_param(r, "lo"), lowp_run_param(r, "hi"), ns);
    rows = lowp_result_table(D->tables, title, cols, 7);
    if (!lcsv) return 2;
    fprintf(lcsv, "distribution,format,class,position,exact,sampled\n");
    for (i = 0; i < nf; i++) {
      cJSON *row = cJSON_CreateArray();
      double worst = 0;
      cJSON_AddItemToArray(row, cJSON_CreateString(fs[i].name));
      for (c = 0; c < NCLASS; c++) {
        double pe = exact[law][i][c], k = (double)cnt[law][i][c], t = bernstein((double)ns, pe);
        double used = fabs(k - ns * pe) / t;
        char cellb[128];
        if (used > worst) worst = used;
        if (used > 1) D->bad++;
        snprintf(cellb, sizeof cellb, "%.10g / %.6g", pe, k / ns);
        cJSON_AddItemToArray(row, cJSON_CreateString(cellb));
        fprintf(csv, "%s,%s,%s,%.3f,%.17g,%.17g,%.0f,%lld,%.6g,%.4f\n", dist_names[law], fs[i].name,
                class_names[c], i + 1 + (c - 1.5) * 0.2, pe, k / ns, k, ns, t, used);
        fprintf(lcsv, "%s,%s,%s,%.3f,%.17g,%.17g\n", dist_names[law], fs[i].name, class_names[c],
                i + 1 + (c - 1.5) * 0.2, pe, k / ns);
      }
      {
        char cellb[128];
        snprintf(cellb, sizeof cellb, "%.10g / %.6g", lost[law][i],
                 (double)(cnt[law][i][0] + cnt[law][i][1]) / ns);
        cJSON_AddItemToArray(row, cJSON_CreateString(cellb));
        snprintf(cellb, sizeof cellb, "%s (worst %.0f%% of bound)", worst <= 1 ? "yes" : "NO", 100 * worst);
        cJSON_AddItemToArray(row, cJSON_CreateString(cellb));
      }
      cJSON_AddItemToArray(rows, row);
    }
    fclose(lcsv);
  }
  return fclose(csv) == 0 ? 0 : 2;
}

/* judge: the answer and the verdict */
static void judge(lowp_run_t *r, dr_t *D) {
  const lowp_format_t *fs = D->fs;
  int nf = D->nf, i, law;
  long long ns = D->ns;
  double (*exact)[MAXF][NCLASS] = D->exact, (*lost)[MAXF] = D->lost;
  char ans[2048];
    int i16 = -1, ib16 = -1;
    char part[512];
    for (i = 0; i < nf; i++) {
      if (!strcmp(fs[i].name, "fp16")) i16 = i;
      if (!strcmp(fs[i].name, "bf16")) ib16 = i;
    }
    ans[0] = '\0';
    for (law = 0; law < 2; law++) {
      snprintf(part, sizeof part, "%s%s on [%s, %s]: ", law ? " " : "", dist_names[law],
               lowp_run_param(r, "lo"), lowp_run_param(r, "hi"));
      strncat(ans, part, sizeof ans - strlen(ans) - 1);
      for (i = 0; i < nf; i++) {
        snprintf(part, sizeof part, "%s loses %.6g%% (%.6g%% overflow, %.4g%% zero; %.4g%% subnormal)%s",
                 fs[i].name, 100 * lost[law][i], 100 * exact[law][i][0], 100 * exact[law][i][1],
                 100 * exact[law][i][2], i + 1 < nf ? ", " : ".");
        strncat(ans, part, sizeof ans - strlen(ans) - 1);
        if (i == i16 || i == ib16) { /* the index's key numbers (tools/cmd_report.c): the exercise's formats */
          char key[64], lab[256];
          snprintf(key, sizeof key, "lost_%s_%s", fs[i].name, law ? "loguniform" : "uniform");
          snprintf(lab, sizeof lab, "%s loses (%s on [%s, %s])", fs[i].name, dist_names[law], lowp_run_param(r, "lo"),
                   lowp_run_param(r, "hi"));
          cJSON_AddStringToObject(lowp_result_key(r->results, key, lab, 100 * lost[law][i]), "unit", "%");
        }
      }
    }
    snprintf(part, sizeof part, " Exact fractions from the rounding thresholds (MPFR); %lld samples per law "
             "agree %s.", ns, D->bad ? "NOT in every cell (see the table)" : "within Bernstein's bound in every cell");
    strncat(ans, part, sizeof ans - strlen(ans) - 1);
    cJSON_AddStringToObject(r->results, "answer", ans);
    fprintf(r->summary, "**Answer.** %s\n\n", ans);
    if (i16 >= 0 && ib16 >= 0) {
      cJSON *o = cJSON_CreateObject();
      char m[256];
      snprintf(m, sizeof m, "log-uniform on [%s, %s]: fp16 loses %.4g%%, bf16 %.4g%%; uniform: fp16 %.4g%%, bf16 %.4g%%",
               lowp_run_param(r, "lo"), lowp_run_param(r, "hi"),
               100 * lost[1][i16], 100 * lost[1][ib16], 100 * lost[0][i16], 100 * lost[0][ib16]);
      cJSON_AddStringToObject(o, "claim", "bf16 has fp32's dynamic range; fp16's limited range loses values (exercise 3)");
      cJSON_AddStringToObject(o, "source", "004_57bea4ceb5c470d1, BF16: The Deep Learning Format; Exercises, 3");
      cJSON_AddStringToObject(o, "measured", m);
      cJSON_AddStringToObject(o, "verdict", lost[1][ib16] == 0 && lost[1][i16] > 0 ? "holds" : "wrong");
      cJSON_AddItemToArray(D->verdicts, o);
    }
  }

/* render: one bar chart per law */
static int render_plots(lowp_run_t *r, dr_t *D) {
  const lowp_format_t *fs = D->fs;
  int nf = D->nf, i, c, law;
  int st = 0;
    char xt[1024] = "set xtics (", extra[2048];
    for (i = 0; i < nf; i++) {
      char it[64];
      snprintf(it, sizeof it, "%s\"%s\" %d", i ? ", " : "", fs[i].name, i + 1);
      strncat(xt, it, sizeof xt - strlen(xt) - 2);
    }
    strncat(xt, ")", sizeof xt - strlen(xt) - 1);
    for (law = 0; law < 2 && st == 0; law++) {
      static const char *const colors[NCLASS] = {"#d62728", "#7f7f7f", "#ff7f0e", "#1f77b4"};
      lowp_series_t sr[2 * NCLASS];
      char styles[NCLASS][64], titles[NCLASS][64], title[256], base[32];
      lowp_plot_t p = {NULL, "format", NULL, 0, law == 0, extra};
      /* the uniform law's small classes (1e-16) need a log axis; log-uniform fractions read better linear */
      snprintf(extra, sizeof extra, "%s\nset xrange [0.4:%d.6]\nset yrange [%s]\nset boxwidth 0.18\n"
               "set style fill solid 0.85 border -1\nset key outside right\nset grid noxtics", xt, nf,
               law == 0 ? "1e-18:3" : "0:1.05");
      p.ylabel = law == 0 ? "fraction of the values (log scale)" : "fraction of the values";
      for (c = 0; c < NCLASS; c++) {
        lowp_series_t x = {"fractions.csv", 4, 5, NULL, NULL, NULL, 0, 0};
        lowp_series_t y = {"fractions.csv", 4, 6, NULL, "points pt 2 ps 1.2 lc rgb '#000000'", NULL, 0, 0};
        snprintf(styles[c], sizeof styles[c], "boxes lc rgb '%s'", colors[c]);
        snprintf(titles[c], sizeof titles[c], "%s (exact)", class_names[c]);
        x.title = titles[c];
        x.style = styles[c];
        x.filter = class_names[c];
        x.filter_col = 3;
        y.title = c == 0 ? "sampled" : "";
        y.filter = class_names[c];
        y.filter_col = 3;
        sr[2 * c] = x;
        sr[2 * c + 1] = y;
      }
      for (c = 0; c < 2 * NCLASS; c++) sr[c].csv = law ? "fractions_loguniform.csv" : "fractions_uniform.csv";
      snprintf(title, sizeof title, "Values %s on [%s, %s] rounded to each format: where they land",
               dist_names[law], lowp_run_param(r, "lo"), lowp_run_param(r, "hi"));
      p.title = title;
      snprintf(base, sizeof base, "%s", law ? "loguniform" : "uniform");
      st = lowp_plot(r->outdir, base, &p, sr, 2 * NCLASS);
    }
    lowp_result_plot(D->plots, "uniform.png", "Uniform law: exact fraction per class (bars, log scale) and the sampled "
                     "fraction (crosses). fp16, e4m3 and e5m2 overflow on almost everything above their maximum.");
    lowp_result_plot(D->plots, "loguniform.png", "Log-uniform law: each decade weighs the same, so the fractions show "
                     "how many of the 16 decades each format covers, and how many of them only as subnormals.");
    return st;
}

static int run(lowp_run_t *r) {
  dr_t D;
  int st;
  memset(&D, 0, sizeof D);
  /* declare: formats, range, sample size; the result tables */
  D.nf = parse(r, D.fs, &D.ns, &D.lo, &D.hi);
  D.tables = cJSON_AddArrayToObject(r->results, "tables");
  D.verdicts = cJSON_AddArrayToObject(r->results, "verdicts");
  D.plots = cJSON_AddArrayToObject(r->results, "plots");
  /* measure */
  if ((st = measure_exact(r, &D)) != 0) return st;
  measure_sampled(r, &D);
  /* render the tables (judging each cell), judge, render the plots */
  if ((st = render_tables(r, &D)) != 0) return st;
  judge(r, &D);
  st = render_plots(r, &D);
  if (st != 0) return lowp_run_plot_failed(r, st);
  fprintf(r->summary, "Files: fractions.csv (exact, sampled, Bernstein bound), thresholds.csv, uniform.png, "
          "loguniform.png.\n");
  if (D.bad) {
    fprintf(stderr, "lowp run dynamic-range: %d checks failed (thresholds or sampling bound)\n", D.bad);
    return 1;
  }
  return 0;
}

const lowp_experiment_t lowp_exp_dynamic_range = {
    "dynamic-range",
    "Of values spread uniformly or log-uniformly over [{lo}, {hi}], what fraction overflows, rounds to zero, "
    "lands subnormal or stays normal in fp16, bf16, tf32, e4m3 and e5m2?",
    "Class boundaries from each format descriptor and round-to-nearest-even (zero up to xmins/2, subnormal "
    "below xmin - xmins/2, overflow from xmax + ulp/2), checked by rounding on both sides; exact fractions "
    "in closed form with MPFR (length ratio / log ratio); the same fractions sampled with N seeded values "
    "each rounded by lowp_round_f64, compared with Bernstein's inequality (delta = 1e-9 per cell).",
    "Every sampled fraction within its bound; uniform values mostly overflow fp16/fp8; bf16 and tf32 keep "
    "all of them normal.",
    params, run, check};
