/* lowp_exp_formats -- every format's values on one log axis: range, subnormals, density */

/*
 * Question: what values can each low-precision format represent, and how
 *   are they spread over the real line?
 * Method: every positive finite value of each format up to 13 bits is
 *   enumerated by decoding every bit pattern (lib/format), classified
 *   normal/subnormal, and drawn on a log axis; the number of values per
 *   decade is counted (from the binade structure, exact for every format).
 *   Wider formats are drawn with 32 evenly spaced values per binade.
 *   The table of derived constants is computed from the descriptors.
 * Run: lowp run formats [--formats=fp16,bf16,e4m3,e5m2,...]
 * Expected / acceptance: fp16 spans about 12 decades and bf16 about 79;
 *   e4m3 tops out at 448 and e5m2 at 57344 with 4x coarser spacing; every
 *   count of finite values equals 2 * (values per sign) + zeros; the plots
 *   render.
 */

#include "catalog.h"
#include "results.h"

#include "format/format.h"
#include "io/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lowp_param_t params[] = {
    {"formats", "fp32,tf32,bf16,fp16,e5m2,e4m3,e4m3fnuz,e5m2fnuz,e3m2,e2m3,e2m1,e8m0", NULL,
     "formats to draw, bottom to top (built-in names)"},
    {NULL, NULL, NULL, NULL}};

/* ------------------------------------------------------ private helpers */

/* Positive finite values of f per decade [10^d, 10^(d+1)), counted from the
   binade structure: binade e holds 2^(p-1) normals spaced 2^(e-p+1). Exact
   for every format, cheap even for fp64. */
static double count_in(const lowp_format_t *f, double lo, double hi) {
  /* number of positive values v of f with lo <= v < hi */
  int e, p = f->precision;
  double n = 0.0, q, a, b;
  if (f->subnormals) {
    q = ldexp(1.0, f->emin - p + 1);
    a = fmax(lo, q);
    b = fmin(hi, lowp_format_xmin(f));
    if (b > a) n += ceil(b / q) - ceil(a / q);
  }
  for (e = f->emin; e <= f->emax; e++) {
    double bl = ldexp(1.0, e), bh = ldexp(1.0, e + 1);
    if (bh <= lo || bl >= hi) continue;
    q = ldexp(1.0, e - p + 1);
    a = fmax(lo, bl);
    b = fmin(hi, fmin(bh, lowp_format_xmax(f) + q / 2));
    if (b > a) n += ceil(b / q) - ceil(a / q);
  }
  return n;
}

/* Formats up to ENUM_BITS wide are drawn value by value; wider ones with
   SAMPLES values per binade (keeps values.svg small enough to open). */
#define ENUM_BITS 13
#define SAMPLES 32

static int write_grid(lowp_run_t *r, const lowp_format_t *fs, size_t nf) {
  FILE *f = fopen(lowp_run_path(r, "values.csv"), "w");
  size_t i;
  if (!f) return -1;
  fprintf(f, "row,format,value,class\n");
  for (i = 0; i < nf; i++) {
    const lowp_format_t *fm = &fs[i];
    int w = lowp_format_width(fm);
    if (w <= ENUM_BITS) {
      /* enumerate: every pattern with the sign bit clear */
      uint64_t b, nb = UINT64_C(1) << (w - (fm->has_sign ? 1 : 0));
      for (b = 0; b < nb; b++) {
        double v;
        if (lowp_decode(&v, b, fm) != 0 || !(v > 0) || isinf(v)) continue;
        fprintf(f, "%zu,%s,%.17g,%s\n", i + 1, fm->name, v,
                v < lowp_format_xmin(fm) ? "subnormal" : "normal");
      }
    } else {
      /* wide formats: in each binade, up to SAMPLES evenly spaced values of
         the format stand in for all of its values (the marks would merge
         anyway); every mark is still a representable value */
      int e, p = fm->precision;
      double q = lowp_format_xmins(fm); /* spacing of the subnormals */
      for (e = fm->subnormals ? fm->emin - p + 1 : fm->emin; e <= fm->emax; e++) {
        /* binade [2^e, 2^(e+1)): values m * step, m in [lo, 2 lo) */
        double step = e < fm->emin ? q : ldexp(1.0, e - p + 1);
        double lo = ldexp(1.0, e) / step, k;
        double stride = lo > SAMPLES ? lo / SAMPLES : 1.0;
        for (k = 0; k < lo; k += stride) {
          double v = (lo + k) * step;
          if (v > lowp_format_xmax(fm)) break;
          fprintf(f, "%zu,%s,%.17g,%s\n", i + 1, fm->name, v,
                  e < fm->emin ? "subnormal" : "normal");
        }
      }
    }
  }
  return fclose(f);
}

static int write_density(lowp_run_t *r, const lowp_format_t *fs, size_t nf,
                         cJSON *table) {
  FILE *f = fopen(lowp_run_path(r, "density.csv"), "w");
  size_t i;
  int d;
  if (!f) return -1;
  fprintf(f, "format,decade,values_per_decade\n");
  for (i = 0; i < nf; i++) {
    const lowp_format_t *fm = &fs[i];
    int dlo = (int)floor(log10(lowp_format_xmins(fm)));
    int dhi = (int)floor(log10(lowp_format_xmax(fm)));
    cJSON *row = cJSON_CreateArray();
    for (d = dlo; d <= dhi; d++) {
      double n = count_in(fm, pow(10.0, d), pow(10.0, d + 1));
      if (n > 0) fprintf(f, "%s,%.17g,%.0f\n", fm->name, pow(10.0, d + 0.5), n);
    }
    cJSON_AddItemToArray(row, cJSON_CreateString(fm->name));
    cJSON_AddItemToArray(row, cJSON_CreateNumber(fm->precision));
    cJSON_AddItemToArray(row, cJSON_CreateNumber(fm->emin));
    cJSON_AddItemToArray(row, cJSON_CreateNumber(fm->emax));
    cJSON_AddItemToArray(row, cJSON_CreateNumber(lowp_format_u(fm)));
    cJSON_AddItemToArray(row, cJSON_CreateNumber(lowp_format_xmins(fm)));
    cJSON_AddItemToArray(row, cJSON_CreateNumber(lowp_format_xmin(fm)));
    cJSON_AddItemToArray(row, cJSON_CreateNumber(lowp_format_xmax(fm)));
    cJSON_AddItemToArray(row, cJSON_CreateNumber(lowp_format_count_finite(fm)));
    cJSON_AddItemToArray(row, cJSON_CreateNumber(round(lowp_format_range_decades(fm) * 100) / 100));
    cJSON_AddItemToArray(table, row);
  }
  return fclose(f);
}

/* The formats parameter: a comma-separated list of built-in names. */
static void check(const lowp_run_t *r) {
  lowp_format_t fs[32];
  (void)lowp_run_param_formats(r, "formats", fs, 32, NULL);
}

/* --------------------------------------------------------------- run */

/* render: the values on one log axis (and zoomed), and the values per decade */
static int render_plots(lowp_run_t *r, const lowp_format_t *fs, size_t nf) {
  char ytics[2048] = "set ytics (", extra[2600];
  cJSON *plots;
  size_t i;
  int st;
  for (i = 0; i < nf; i++) {
    char item[64];
    snprintf(item, sizeof item, "%s\"%s\" %zu", i ? ", " : "", fs[i].name, i + 1);
    strncat(ytics, item, sizeof ytics - strlen(ytics) - 2);
  }
  strncat(ytics, ")", sizeof ytics - strlen(ytics) - 1);
  snprintf(extra, sizeof extra, "%s\nset yrange [0.3:%zu.7]\nset key outside right top box\n"
           "set xrange [1e-45:1e39]\nunset mytics\nset grid noytics", ytics, nf);
  {
    lowp_plot_t p = {"Positive values of each format (log axis)",
                     "value (log scale; each mark is one representable value)",
                     "format", 1, 0, extra};
    lowp_series_t sr[2] = {
        {"values.csv", 3, 1, "normal values", "points pt 7 ps 0.35 lc rgb '#1f4e9e'", "normal", 4, 0},
        {"values.csv", 3, 1, "subnormal values", "points pt 7 ps 0.35 lc rgb '#d62728'", "subnormal", 4, 0}};
    st = lowp_plot(r->outdir, "values", &p, sr, 2);
    if (st == 0) {
      /* the same marks, zoomed on the 8-bit and smaller formats' range,
         where their spacing can be seen mark by mark */
      char zoom[2700];
      lowp_plot_t z = {"Positive values, zoomed on the range of the 8-, 6- and 4-bit formats",
                       "value (log scale; each mark is one representable value)",
                       "format", 1, 0, zoom};
      snprintf(zoom, sizeof zoom, "%s\nset xrange [1e-6:1e5]", extra);
      st = lowp_plot(r->outdir, "values_zoom", &z, sr, 2);
    }
  }
  if (st == 0) {
    lowp_series_t sr[32];
    lowp_plot_t p = {"How many values each format has per decade",
                     "magnitude (log scale, centre of each decade)",
                     "representable values per decade (log scale)", 1, 1,
                     "set key outside right\nset xrange [1e-45:1e39]"};
    static char sty[32][96];
    for (i = 0; i < nf && i < 32; i++) {
      lowp_series_t x = {"density.csv", 2, 3, fs[i].name, NULL, fs[i].name, 1, 0};
      x.style = lowp_result_format_style(fs[i].name, "linespoints", sty[i], sizeof sty[i]);
      sr[i] = x;
    }
    st = lowp_plot(r->outdir, "density", &p, sr, nf);
    if (st == 0) {
      /* the narrow formats live in a few decades around 1 of the 90-decade axis: the same data, zoomed */
      lowp_plot_t z = p;
      z.title = "Values per decade, zoomed on 1e-10 .. 1e6 (fp16, fp8, fp6, fp4 formats)";
      z.extra = "set key outside right\nset xrange [1e-10:1e6]\nset yrange [0.8:*]";
      st = lowp_plot(r->outdir, "density_zoom", &z, sr, nf);
    }
  }
  plots = cJSON_AddArrayToObject(r->results, "plots");
  lowp_result_plot(plots, "values.png", "Every positive value of each format up to 13 bits, "
                   "and 32 evenly spaced values per binade of wider ones, on a log axis "
                   "(red: subnormals). Width = dynamic range; gaps between marks = spacing.");
  lowp_result_plot(plots, "values_zoom.png", "The same, from 1e-6 to 1e5: e4m3 has 8 values per "
                   "binade, e5m2 4, e2m1 2; fp16 and wider look solid.");
  lowp_result_plot(plots, "density.png", "Representable values per decade: the height is "
                   "precision (about 2^(p-1) * 3.32 per decade), the width is range.");
  lowp_result_plot(plots, "density_zoom.png", "The same, from 1e-10 to 1e6, where the narrow formats (fp16, the "
                   "fp8, fp6 and fp4 ones) live: a few decades each.");
  return st;
}

/* the answer, and the summary's table, from the descriptors */
static void answer(lowp_run_t *r, const lowp_format_t *fs, size_t nf) {
  size_t i;
  {
    char ans[512];
    snprintf(ans, sizeof ans,
             "fp16 spans %.1f decades with p=%d; bf16 keeps fp32's exponent range, %.1f decades with "
             "p=%d (fp32: %.1f, whose subnormals reach further down); "
             "e4m3 (max %g) and e5m2 (max %g) trade one bit of precision for %.1f more decades.",
             lowp_format_range_decades(&LOWP_FMT_FP16), LOWP_FMT_FP16.precision,
             lowp_format_range_decades(&LOWP_FMT_BF16), LOWP_FMT_BF16.precision,
             lowp_format_range_decades(&LOWP_FMT_FP32),
             lowp_format_xmax(&LOWP_FMT_E4M3), lowp_format_xmax(&LOWP_FMT_E5M2),
             lowp_format_range_decades(&LOWP_FMT_E5M2) - lowp_format_range_decades(&LOWP_FMT_E4M3));
    cJSON_AddStringToObject(r->results, "answer", ans);
    fprintf(r->summary, "**Answer.** %s\n\n", ans);
  }
  fprintf(r->summary, "Plots: values.png, density.png, density_zoom.png.\n\n| format | p | emin | emax | max finite | decades |\n|---|---|---|---|---|---|\n");
  for (i = 0; i < nf; i++)
    fprintf(r->summary, "| %s | %d | %d | %d | %.6g | %.2f |\n", fs[i].name, fs[i].precision,
            fs[i].emin, fs[i].emax, lowp_format_xmax(&fs[i]), lowp_format_range_decades(&fs[i]));
}

static int run(lowp_run_t *r) {
  lowp_format_t fs[32];
  size_t nf = lowp_run_param_formats(r, "formats", fs, 32, NULL);
  cJSON *tables, *rows;
  int st;

  /* declare: the formats and the table of their constants */
  tables = cJSON_AddArrayToObject(r->results, "tables");
  {
    static const char *const c[] = {"format", "p", "emin", "emax", "u", "min subnormal",
                                    "min normal", "max finite", "finite values", "decades"};
    rows = lowp_result_table(tables, "Formats, computed from their descriptors", c, sizeof c / sizeof c[0]);
  }
  /* measure: every value of each format (values.csv), counts per decade (density.csv, the table) */
  if (write_grid(r, fs, nf) != 0 || write_density(r, fs, nf, rows) != 0) {
    fprintf(stderr, "lowp run formats: cannot write CSV files\n");
    return 2;
  }
  /* render, then the answer (nothing to judge: no claims here) */
  st = render_plots(r, fs, nf);
  if (st != 0) return lowp_run_plot_failed(r, st);
  answer(r, fs, nf);
  return 0;
}

const lowp_experiment_t lowp_exp_formats = {
    "formats",
    "What values can each low-precision format represent, and how are they spread over the real line?",
    "Decode every bit pattern of each format up to 13 bits (32 values per binade of wider ones), "
    "classify normal/subnormal, draw them on one log axis; count values per decade; table of "
    "constants computed from the descriptors.",
    "fp16 about 12 decades, bf16 about 79; e4m3 max 448, e5m2 max 57344; plots render.",
    params, run, check};
