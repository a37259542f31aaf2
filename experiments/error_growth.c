/* lowp_exp_error_growth -- measured error against n for sums, dots and GEMMs, with the bounds */

/*
 * Question: how does the error of sums, dot products and GEMMs grow with
 *   their length n for each input format and accumulation model (recursive
 *   fp32 and fp16 accumulation, pairwise, blocked, tensor-core models with
 *   and without fp32 promotion), and how does it compare with the
 *   deterministic bound gamma_n and the probabilistic bound ~ sqrt(n) u?
 * Method: inputs drawn by lib/rng/dist (Philox, seeded, rounded to the
 *   format) from uniform [0,1], uniform [-1,1] and normal laws; for each
 *   size n = nmin, nmin*nstep, ... <= nmax, the first n elements of each
 *   trial's vectors are summed / dotted by every model (lib/model: accum
 *   orders, each step rounded exactly once; tensor-core block-FMA presets)
 *   and compared with the exact value (lib/exact). GEMMs: m x m products
 *   with inner dimension k = nmin .. kmax on the same models (the GEMM twin
 *   kernels/cpu/gemm_tc for the tensor cores). The error measured is the
 *   componentwise backward error |s^ - s| / sum |a_i b_i| (|C^ - C| /
 *   (|A||B|), maximum over the elements, for GEMMs), the quantity gamma_n
 *   bounds (Higham 2002, eq. (3.5)); mean over the trials. Trials (independent
 *   seeded inputs) per size: budget / (products of one trial), clamped to
 *   [trials, trials_max] (defaults 524288, 5, 64: 64 trials up to n = 8192,
 *   8 at 65536, 5 from 2^18; GEMMs count m^2 k products), written per point
 *   (column trials of every CSV). Every model is
 *   a registry kernel (sum_acc, dot_acc, gemm_acc with acc/order/round/
 *   prod; gemm_tc with model=, dots as a batch of 1 x 1 GEMMs) measured by
 *   the pipeline (lib/check: exact reference of the rounded inputs, |A||B|,
 *   the bound of the kernel's declared method); each curve is drawn with
 *   the bound of its own method (tensor-core model; gamma of the order,
 *   directed rounding doubling u; recursive orders also Higham & Mary's
 *   probabilistic bound at probability 0.99); a bound >= 1 is vacuous and
 *   not drawn; every drawn bound is checked against every trial of its curve
 *   (checks.csv, one row per point: trials, trials over, kind, theorem or
 *   heuristic, cut, checked; the verdicts' counts are its sums), the
 *   probabilistic one allowing 1% of the trials over (P >= 0.99 per sum)
 *   and cut where its assumption of independent mean-zero errors fails:
 *   from the first size where a trial has more than sqrt(n) stagnating
 *   steps (|t_k| < u |s^_{k-1}|, see stagnation_cut). Kahan's bound is
 *   heuristic (lowp's second-order constant 4ku^2, lib/check/op.c): drawn
 *   dash-dotted as "heuristic bound", never counted as checked. A curve with the same numbers as an
 *   earlier one is drawn with open circles and "(= X)" in the key.
 *   bounds.csv keeps gamma_n and the probabilistic bound for the u of fp32
 *   and fp16 as a reference table.
 *   Block-scaled GEMMs (issue 33): for each of bs_formats (mxfp8_e4m3,
 *   mxfp4, nvfp4) m x k times k x m products, k = bs_kmin .. bs_kmax
 *   (32 .. 16384, x2), of fp32 data quantized along k by the format's rule
 *   (fill_bs), on the block-scaled MMA models (bs_models: b200
 *   kind=mxf8f6f4 and kind=mxf4nvf4, each on the operands its instruction
 *   takes; lowp_gemm_bs_fast on the elements and scales, a per-tensor scale
 *   in the epilogue) and fp32 accumulation of the dequantized products
 *   (gemm_acc), against the exact product of the dequantized inputs; each
 *   model drawn with the bound `lowp tol` gives for it (bs_bound: the
 *   worst case of lib/check/tol.c), fp32 accumulation with gamma_k and the
 *   probabilistic bound, all checked as above.
 *   Growth: lib/measure/fit.c's least-squares line of log(mean error) on
 *   log(n), weighted by the trials, with the slope's 95% t-interval from the
 *   residuals, only where one
 *   power law holds (see growth_of: saturation at mean error >= 1/2 and zero
 *   errors left out; a change of slope by a two-segment F test fitted on
 *   each side; fewer than 3 sizes: no fit).
 * Run: lowp run error-growth [--quick] [--formats=fp16,bf16,e4m3]
 *   [--models="acc:fma,acc=fp32;tc:h100;..."] [--nmax=1048576]
 * Expected / acceptance (checked, exit 1 if refuted): (1) fp32 recursive
 *   sums of fp32 data on [0,1] grow like sqrt(n) (the 95% interval of the
 *   slope inside 0.3..0.7), on [-1,1] they stay nearly flat (the interval
 *   below 0.25) (Higham & Mary, SISC
 *   2020, "Sharper probabilistic backward error analysis for basic linear
 *   algebra kernels with random data"). Dots of narrow-format data are
 *   reported but not judged on this: their products are exact on a coarse
 *   grid, so the fp32 sum is exact at small n and biased at large n (the
 *   rounding errors of adding many terms below ulp(s)/2 are not mean-zero);
 *   the table of slopes shows it;
 *   (2) truncating tensor cores (h100 model) drift linearly in n on [0,1]
 *   data (the interval inside 0.75..1.25), far above the sqrt(n) of
 *   round-to-nearest;
 *   (3) fp8 (e4m3) dots on the h100 model at k = 4096 (or the largest size
 *   run) on [0,1] lose more than 10x more accuracy without promotion every
 *   128 products than with it; (4) every drawn deterministic bound is >= the
 *   max error of its curve at every size.
 */

#include "par.h"
#include "catalog.h"
#include "results.h"

#include "check/capi.h"
#include "check/same.h"
#include "check/tol.h"
#include "cpu/gemm_bs.h"
#include "exp_check.h"
#include "extrapolation.h"
#include "format/bsformat.h"
#include "format/bsquant.h"
#include "io/escape.h"
#include "io/plot.h"
#include "measure/measure.h"
#include "model/accum.h"
#include "model/tc.h"
#include "rng/dist.h"
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lowp_param_t params[] = {
    {"formats", "fp16,bf16,e4m3", "fp16,e4m3", "input formats of the dot products and GEMMs"},
    {"dists", "uniform01,uniform11,normal", NULL, "input distributions (lib/rng/dist names)"},
    {"models",
     "acc:fma,acc=fp32;acc:fma,acc=fp16;acc:pairwise,acc=fp32;acc:blocked:32,acc=fp32;tc:v100;tc:a100;"
     "tc:h100;tc:h100,promote=128@e4m3,e5m2;tc:b200@e4m3,e5m2",
     NULL,
     "dot/GEMM models, ';' separated: acc:ORDER[,acc=F,rnd=M,fma=0|1] or tc:PRESET-or-PARAMS, "
     "optionally @fmt,fmt (only for those input formats)"},
    {"sum_format", "fp32", NULL, "format of the summands of the sums"},
    {"sum_models",
     "recursive,acc=fp32;pairwise,acc=fp32;blocked:32,acc=fp32;kahan,acc=fp32;recursive,acc=fp16;"
     "pairwise,acc=fp16;kahan,acc=fp16",
     NULL, "summation models, ';' separated (lib/model/accum.h syntax)"},
    {"nmin", "16", NULL, "smallest n"},
    {"nmax", "1048576", "65536", "largest n of sums and dots"},
    {"nstep", "4", NULL, "factor between consecutive sizes"},
    {"kmax", "4096", "1024", "largest inner dimension of the GEMMs"},
    {"gemm_m", "8", "4", "GEMMs are gemm_m x k times k x gemm_m"},
    {"trials", "5", "2", "independent inputs at the largest sizes (the fewest; errors are averaged)"},
    {"trials_max", "64", "16", "independent inputs at the small sizes, where they are cheap (at least trials)"},
    {"budget", "524288", "65536",
     "products (summands) per size and model that set the trials: budget / (work of one trial), "
     "clamped to [trials, trials_max]"},
    {"bs_formats", "mxfp8_e4m3,mxfp4,nvfp4", NULL,
     "block-scaled input formats of the block-scaled GEMMs (docs/formats.md names, NAME:RULE for another "
     "scale rule), or none"},
    {"bs_models", "bs:b200,kind=mxf8f6f4;bs:b200,kind=mxf4nvf4;acc:fma,acc=fp32", NULL,
     "block-scaled GEMM models, ';' separated: bs:MODEL (lib/model/bsmma.h: b200|sm120,kind=..., or "
     "K=..,group=..,F=..; each runs on the formats its instruction takes) or acc:ORDER[,acc=F,...] on the "
     "dequantized inputs, optionally @fmt,fmt (block-scaled names)"},
    {"bs_kmin", "32", NULL, "smallest inner dimension of the block-scaled GEMMs"},
    {"bs_kmax", "16384", "2048", "largest inner dimension of the block-scaled GEMMs"},
    {"bs_kstep", "2", NULL, "factor between consecutive inner dimensions of the block-scaled GEMMs"},
    {NULL, NULL, NULL, NULL}};

#define MAXSER 24
#define MAXSZ 40
#define MAXFMT 8
#define MAXDIST 6

/* ---------------------------------------------------------------- types */

typedef struct {
  int tc;              /* 1: tensor-core preset/params; 0: accumulation order */
  char spec[160];      /* the model text after "acc:" / "tc:" */
  char only[96];       /* "" or comma-separated input formats */
  char label[256];     /* legend entry */
  int heuristic;       /* 1: its "bound" is not a theorem (Kahan's second-order constant is lowp's) */
  int bs;              /* 1: a block-scaled MMA model (lib/model/bsmma.h) on block-scaled inputs */
} series_t;

typedef struct {
  series_t s[MAXSER];
  size_t n;
} series_list_t;

/* ------------------------------------------------------ private helpers */

/* Split buf at sep into at most max items; an empty item ("a,,b", or a
   separator at either end) makes the whole list invalid: 0 is returned,
   which every caller reports as a bad parameter. */
static size_t split(char *buf, char **tok, size_t max, char sep) {
  size_t n = 0;
  char *p = buf;
  while (p && n < max) {
    char *q = strchr(p, sep);
    if (q) *q++ = '\0';
    if (!*p) return 0;
    tok[n++] = p;
    p = q;
  }
  return n;
}

static void label_of(series_t *s) {
  char sp[160];
  memcpy(sp, s->spec, sizeof sp); /* a copy: the compiler cannot prove s->label and s->spec apart */
  if (s->bs) { /* "TC b200 kind=mxf8f6f4": no comma (the label is a CSV field) */
    char *c;
    snprintf(s->label, sizeof s->label, "TC %s", sp);
    for (c = s->label; *c; c++) *c = *c == ',' ? ' ' : *c;
  } else if (s->tc) {
    char base[160], *pr;
    memcpy(base, sp, sizeof base);
    pr = strstr(base, ",promote=");
    if (pr) {
      *pr = '\0';
      snprintf(s->label, sizeof s->label, "TC %s + fp32 every %s", base, pr + 9);
    } else {
      snprintf(s->label, sizeof s->label, "TC %s", base);
    }
  } else {
    lowp_accum_t m;
    char err[128];
    static const char *const names[] = {"recursive", "pairwise", "blocked", "split-K", "Kahan"};
    /* "<acc> <order>": fp32 FMA chain, fp16 pairwise, fp32 blocked 32 */
    if (lowp_accum_parse(&m, sp, err, sizeof err) != LOWP_OK) {
      snprintf(s->label, sizeof s->label, "%s", sp);
      return;
    }
    if (m.order == LOWP_ACC_RECURSIVE && m.fma)
      snprintf(s->label, sizeof s->label, "%s FMA chain", m.acc.name);
    else if (m.order == LOWP_ACC_BLOCKED || m.order == LOWP_ACC_SPLITK)
      snprintf(s->label, sizeof s->label, "%s %s %zu", m.acc.name, names[m.order], m.block);
    else
      snprintf(s->label, sizeof s->label, "%s %s", m.acc.name, names[m.order]);
  }
}

/* Parse a ';'-list of models; kinds: 1 = acc:/tc: prefixed (dots), 2 =
   acc:/bs: prefixed (block-scaled GEMMs; '@' names block-scaled formats), 0
   = sums (plain accumulation specs). Calls lowp_run_bad_param on an error. */
static void parse_series(series_list_t *L, const lowp_run_t *r, const char *key, int prefixed) {
  char buf[2048], *tok[MAXSER + 1];
  size_t n, i;
  snprintf(buf, sizeof buf, "%s", lowp_run_param(r, key));
  n = split(buf, tok, MAXSER + 1, ';');
  if (n == 0 || n > MAXSER) lowp_run_bad_param(r, key, "expected 1 to 24 models separated by ';'");
  L->n = 0;
  for (i = 0; i < n; i++) {
    series_t *s = &L->s[L->n++];
    char *t = tok[i], *at, err[256];
    memset(s, 0, sizeof *s);
    if (prefixed) {
      if (!strncmp(t, "acc:", 4)) { s->tc = 0; t += 4; }
      else if (prefixed == 1 && !strncmp(t, "tc:", 3)) { s->tc = 1; t += 3; }
      else if (prefixed == 2 && !strncmp(t, "bs:", 3)) { s->bs = 1; t += 3; }
      else lowp_run_bad_param(r, key, prefixed == 1 ? "each model starts with acc: or tc:"
                                                    : "each model starts with acc: or bs:");
    }
    at = strchr(t, '@');
    if (at) {
      char ob[96], *ot[16];
      size_t on, oi;
      *at = '\0';
      snprintf(s->only, sizeof s->only, "%s", at + 1);
      snprintf(ob, sizeof ob, "%s", at + 1);
      on = strlen(at + 1) < sizeof ob ? split(ob, ot, 16, ',') : 0;
      if (on == 0) lowp_run_bad_param(r, key, "after '@': expected input format names separated by ','");
      for (oi = 0; oi < on; oi++) {
        lowp_bsformat_t bf;
        if (prefixed == 2 ? lowp_bsformat_parse(&bf, ot[oi], NULL, 0) != LOWP_OK : !lowp_format_by_name(ot[oi]))
          lowp_run_bad_param(r, key, "after '@': unknown format name");
      }
    }
    snprintf(s->spec, sizeof s->spec, "%s", t);
    if (s->bs) {
      lowp_bsmma_model_t bm;
      if (lowp_bsmma_get(&bm, s->spec, err, sizeof err) != LOWP_OK) lowp_run_bad_param(r, key, err);
    } else if (s->tc) {
      lowp_tc_model_t m;
      /* validated against fp16 -> fp32; datapaths a preset lacks are skipped later */
      int st = lowp_tc_model_get(&m, s->spec, &LOWP_FMT_FP16, &LOWP_FMT_FP32, err, sizeof err);
      if (st == LOWP_EINVAL) lowp_run_bad_param(r, key, err);
    } else {
      lowp_accum_t m;
      if (lowp_accum_parse(&m, s->spec, err, sizeof err) != LOWP_OK) lowp_run_bad_param(r, key, err);
      s->heuristic = m.order == LOWP_ACC_KAHAN;
    }
    label_of(s);
  }
}

/* lowp_run_param_formats check: the input formats need <= 26 significand bits */
static const char *input_format(const lowp_format_t *f) {
  return f->precision > 26 ? "input formats need <= 26 significand bits" : NULL;
}

static size_t parse_dists(lowp_dist_t *out, char names[][32], const lowp_run_t *r) {
  char buf[512], *tok[MAXDIST + 1];
  size_t n, i;
  snprintf(buf, sizeof buf, "%s", lowp_run_param(r, "dists"));
  n = split(buf, tok, MAXDIST + 1, ',');
  if (n == 0 || n > MAXDIST) lowp_run_bad_param(r, "dists", "expected 1 to 6 distributions");
  for (i = 0; i < n; i++) {
    if (lowp_dist_parse(&out[i], tok[i]) != LOWP_OK) lowp_run_bad_param(r, "dists", "unknown distribution");
    snprintf(names[i], 32, "%s", tok[i]);
  }
  return n;
}

/* bs_formats: up to 8 block-scaled formats, or "none" (0); bad -> exit 2 */
static size_t parse_bsformats(lowp_bsformat_t *out, char names[][64], const lowp_run_t *r) {
  char buf[512], *tok[MAXFMT + 1], err[256], *c;
  size_t n, i;
  if (!strcmp(lowp_run_param(r, "bs_formats"), "none")) return 0;
  snprintf(buf, sizeof buf, "%s", lowp_run_param(r, "bs_formats"));
  n = split(buf, tok, MAXFMT + 1, ',');
  if (n == 0 || n > MAXFMT) lowp_run_bad_param(r, "bs_formats", "expected 1 to 8 block-scaled formats, or none");
  for (i = 0; i < n; i++) {
    if (lowp_bsformat_parse(&out[i], tok[i], err, sizeof err) != LOWP_OK) lowp_run_bad_param(r, "bs_formats", err);
    if (strlen(tok[i]) >= 64 || strspn(tok[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:") != strlen(tok[i]))
      lowp_run_bad_param(r, "bs_formats", "give built-in names (NAME or NAME:RULE), which name the files");
    snprintf(names[i], 64, "%s", tok[i]);
    for (c = names[i]; *c; c++) *c = *c == ':' ? '_' : *c; /* file names: mxfp8_e4m3_rceil */
  }
  return n;
}

/* Words for a distribution in titles. */
static const char *pretty(const char *d) {
  if (!strcmp(d, "uniform01")) return "uniform on [0,1]";
  if (!strcmp(d, "uniform11")) return "uniform on [-1,1]";
  if (!strcmp(d, "normal")) return "standard normal";
  return d;
}

static size_t sizes(size_t *nv, size_t nmin, size_t nmax, size_t step) {
  size_t c = 0, n;
  for (n = nmin; n <= nmax && c < MAXSZ; n *= step) nv[c++] = n;
  return c;
}

static void check(const lowp_run_t *r) {
  series_list_t L;
  lowp_format_t f[MAXFMT], sf;
  lowp_dist_t d[MAXDIST];
  char dn[MAXDIST][32], err[256];
  long long nmin = lowp_run_param_int(r, "nmin", 2, 1 << 20);
  long long nmax = lowp_run_param_int(r, "nmax", 2, 1 << 24);
  lowp_run_param_int(r, "nstep", 2, 1024);
  lowp_run_param_int(r, "kmax", 2, 1 << 16);
  lowp_run_param_int(r, "gemm_m", 1, 256);
  lowp_run_param_int(r, "trials", 1, 64);
  lowp_run_param_int(r, "trials_max", 1, 256);
  lowp_run_param_int(r, "budget", 1, 1LL << 40);
  if (nmax < nmin) lowp_run_bad_param(r, "nmax", "must be >= nmin");
  lowp_run_param_formats(r, "formats", f, MAXFMT, input_format);
  parse_dists(d, dn, r);
  parse_series(&L, r, "models", 1);
  parse_series(&L, r, "sum_models", 0);
  parse_series(&L, r, "bs_models", 2);
  {
    lowp_bsformat_t bf[MAXFMT];
    char bn[MAXFMT][64];
    long long kmin = lowp_run_param_int(r, "bs_kmin", 1, 1 << 16), kmax = lowp_run_param_int(r, "bs_kmax", 2, 1 << 16);
    lowp_run_param_int(r, "bs_kstep", 2, 1024);
    if (kmax < kmin) lowp_run_bad_param(r, "bs_kmax", "must be >= bs_kmin");
    parse_bsformats(bf, bn, r);
  }
  if (lowp_format_parse(&sf, lowp_run_param(r, "sum_format"), err, sizeof err) != LOWP_OK)
    lowp_run_bad_param(r, "sum_format", err);
}

/*
 * The growth of a curve: least-squares lines of log(mean error) on log(n)
 * (lib/measure/fit.c), each size weighted by its trials (the variance of
 * the log of a mean of T trials is about 1/T that of one), 95% confidence
 * intervals of the slope from the weighted residuals (Student's t with
 * sizes - 2 degrees of freedom), fitted only where one power law holds.
 * Criteria, in this order:
 *  (1) saturation: from the first size whose mean backward error reaches
 *      1/2 the result has lost most of its value (a sum that stagnates, the
 *      fp16 FMA chain on [0,1]: its backward error tends to 1); that size and
 *      the larger ones are left out of every fit and reported;
 *      a result that overflows (inf) ends the fit the same way, reported apart;
 *  (2) zero errors (exact results) have no logarithm: left out and counted;
 *  (3) a change of slope: the two-segment F test (lowp_fit_break: the best
 *      split with >= 3 points a side against one line, at 1% with Bonferroni
 *      over the splits) fits each side separately when it finds one;
 *  fewer than 3 points left: no fit (a slope without an interval says little).
 */
typedef struct {
  int nseg;              /* 0: no fit; 1: one power law; 2: two, split at a change of slope */
  lowp_fit_t seg[2];
  size_t from[2], to[2]; /* the sizes each fit spans */
  size_t sat;            /* first saturated size (mean error >= 1/2), 0 if none */
  size_t ovf;            /* first size whose result overflowed (inf) in a trial, 0 if none */
  size_t zeros;          /* sizes left out because their mean error is 0 */
  double F, fcrit;       /* the break test (NaN: too few points for it) */
} growth_t;

#define SATURATED 0.5

static void growth_of(growth_t *gr, const double *mean, const size_t *nv, const size_t *ntr, size_t ns) {
  double x[MAXSZ], y[MAXSZ], w[MAXSZ];
  size_t k, c = 0, xs[MAXSZ];
  lowp_fit_break_t b;
  memset(gr, 0, sizeof *gr);
  for (k = 0; k < ns; k++) {
    if (isinf(mean[k])) { gr->ovf = nv[k]; break; }
    if (!(mean[k] < SATURATED)) { gr->sat = nv[k]; break; } /* NaN too */
    if (mean[k] == 0) { gr->zeros++; continue; }
    x[c] = log((double)nv[k]);
    y[c] = log(mean[k]);
    w[c] = (double)ntr[k];
    xs[c++] = nv[k];
  }
  gr->F = gr->fcrit = NAN;
  if (c < 3 || lowp_fit_break(&b, x, y, w, c, 3, 0.95, 0.01) != LOWP_OK) return;
  gr->F = b.F;
  gr->fcrit = b.fcrit;
  if (b.brk) {
    gr->nseg = 2;
    gr->seg[0] = b.left;
    gr->seg[1] = b.right;
    gr->from[0] = xs[0]; gr->to[0] = xs[b.brk - 1];
    gr->from[1] = xs[b.brk]; gr->to[1] = xs[c - 1];
  } else {
    gr->nseg = 1;
    gr->seg[0] = b.all;
    gr->from[0] = xs[0]; gr->to[0] = xs[c - 1];
  }
}

/* the slope of the fit that reaches the largest fitted size (NaN: none) */
static double growth_last(const growth_t *gr) { return gr->nseg ? gr->seg[gr->nseg - 1].slope : NAN; }
static double growth_last_half(const growth_t *gr) { return gr->nseg ? gr->seg[gr->nseg - 1].half : NAN; }

/* "n^(0.52 +- 0.04), n = 16..1048576 (9 sizes)", two of them at a change of slope, saturation */
static const char *growth_text(char *b, size_t len, const growth_t *gr, const char *xn) {
  size_t o = 0;
  int s;
  b[0] = '\0';
  if (!gr->nseg) o += (size_t)snprintf(b, len, "no fit (fewer than 3 sizes with 0 < error < %g)", SATURATED);
  for (s = 0; s < gr->nseg && o < len; s++)
    o += (size_t)snprintf(b + o, len - o, "%s%s^(%.2f +- %.2f), %s = %zu..%zu (%zu sizes)",
                          s ? "; then " : "", xn, gr->seg[s].slope, gr->seg[s].half, xn, gr->from[s],
                          gr->to[s], gr->seg[s].n);
  if (gr->nseg == 2 && o < len)
    o += (size_t)snprintf(b + o, len - o, " [change of slope: F = %.3g > %.3g]", gr->F, gr->fcrit);
  if (gr->sat && o < len)
    o += (size_t)snprintf(b + o, len - o, "; saturated (mean error >= %g) from %s = %zu, not fitted", SATURATED,
                          xn, gr->sat);
  if (gr->ovf && o < len)
    o += (size_t)snprintf(b + o, len - o, "; overflows (inf) from %s = %zu, not fitted", xn, gr->ovf);
  if (gr->zeros && o < len)
    snprintf(b + o, len - o, "; %zu size%s with error 0 left out", gr->zeros, gr->zeros > 1 ? "s" : "");
  return b;
}

/* results.json: {"segments": [{"from", "to", "sizes", "slope", "ci95_half"}], "saturated_from", ...} */
static void growth_json(cJSON *parent, const char *key, const growth_t *gr) {
  cJSON *o = cJSON_AddObjectToObject(parent, key), *a = cJSON_AddArrayToObject(o, "segments");
  int s;
  for (s = 0; s < gr->nseg; s++) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "from", (double)gr->from[s]);
    cJSON_AddNumberToObject(e, "to", (double)gr->to[s]);
    cJSON_AddNumberToObject(e, "sizes", (double)gr->seg[s].n);
    cJSON_AddNumberToObject(e, "slope", gr->seg[s].slope);
    if (isfinite(gr->seg[s].half)) cJSON_AddNumberToObject(e, "ci95_half", gr->seg[s].half);
    cJSON_AddItemToArray(a, e);
  }
  if (gr->sat) cJSON_AddNumberToObject(o, "saturated_from", (double)gr->sat);
  else cJSON_AddNullToObject(o, "saturated_from");
  if (gr->ovf) cJSON_AddNumberToObject(o, "overflows_from", (double)gr->ovf);
  cJSON_AddNumberToObject(o, "zero_sizes", (double)gr->zeros);
  if (isfinite(gr->F)) cJSON_AddNumberToObject(o, "break_F", gr->F);
  if (isfinite(gr->fcrit)) cJSON_AddNumberToObject(o, "break_F_critical", gr->fcrit);
}

static void csv_num(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, ",%.6e", v);
  else fprintf(f, ",nan");
}

/* The bounds file: n, gamma and probabilistic bound for fp32 and fp16 u. */
static int write_bounds(const lowp_run_t *r, const size_t *nv, size_t ns) {
  FILE *f = fopen(lowp_run_path(r, "bounds.csv"), "w");
  size_t i;
  double u32 = lowp_format_u(&LOWP_FMT_FP32), u16 = lowp_format_u(&LOWP_FMT_FP16);
  if (!f) return LOWP_EIO;
  fprintf(f, "# generated by lowp run error-growth, do not edit\n");
  fprintf(f, "n,gamma_fp32,prob_fp32,gamma_fp16,prob_fp16,lambda_fp32\n");
  for (i = 0; i < ns; i++) {
    double n = (double)nv[i];
    double l32 = lowp_bound_prob_lambda(n, u32, 0.99), l16 = lowp_bound_prob_lambda(n, u16, 0.99);
    double g16 = lowp_bound_gamma(n, u16), p16 = lowp_bound_gamma_prob(n, u16, l16);
    fprintf(f, "%zu", nv[i]);
    csv_num(f, lowp_bound_gamma(n, u32));
    csv_num(f, lowp_bound_gamma_prob(n, u32, l32));
    csv_num(f, g16 < 1 ? g16 : NAN); /* beyond 1 a bound says nothing */
    csv_num(f, p16 < 1 ? p16 : NAN);
    csv_num(f, l32);
    fputc('\n', f);
  }
  return fclose(f) ? LOWP_EIO : LOWP_OK;
}

/* One log-log plot of file CSV (columns model,n,mean,max), each model with
   the bound of its own method (bounds file BCSV: the pipeline's bound of the
   series' kernel; dashed in the series' colour, its probabilistic bound
   dotted). Where a curve ends before the last size the plot says why: the
   model's result overflowed (inf) from the next size on, or its bound
   reached 1 (vacuous: not drawn) from there on. */
typedef struct grid {
  double mean[MAXSER][MAXSZ], max[MAXSER][MAXSZ];
  double bound[MAXSER][MAXSZ], pbound[MAXSER][MAXSZ]; /* NaN: none; >= 1: vacuous */
  char bname[MAXSER][200];
  int used[MAXSER];
  size_t ntr[MAXSZ];  /* trials (independent inputs) per size */
  growth_t gr[MAXSER];
  int same[MAXSER];   /* -1, or the earlier series whose curve this one coincides with */
  double stag[MAXSER][MAXSZ];  /* recursive orders: most stagnating steps in one trial (NaN: not scanned) */
  double praw[MAXSER][MAXSZ];  /* the probabilistic bound before the stagnation cut (checks.csv's cut rows) */
  size_t pexc[MAXSER][MAXSZ];  /* trials whose error exceeds the (uncut) probabilistic bound */
  size_t dexc[MAXSER][MAXSZ];  /* trials whose error exceeds the deterministic (or heuristic) bound */
  size_t pcut[MAXSER];         /* the size from which the probabilistic bound is cut (stagnation), 0: none */
} grid_t;

/* a bound says something only below 1 */
static int bound_ok(double b) { return b < 1 && b > 0; }

/* the key text of series i's bound: j = 0 its deterministic bound (heuristic for Kahan: not a theorem),
   j = 1 its probabilistic bound */
static const char *bound_kind(const series_list_t *L, size_t i, int j) {
  return j ? "prob. bound" : L->s[i].heuristic ? "heuristic bound" : "bound";
}

/* series,n,bound rows ("LABEL: bound" and "LABEL: prob. bound"), only the
   sizes where the bound exists and is below 1 */
static int write_bound_csv(const lowp_run_t *r, const char *file, const grid_t *g,
                           const series_list_t *L, const size_t *nv, size_t ns) {
  FILE *f = fopen(lowp_run_path(r, file), "w");
  size_t i, k;
  int j;
  if (!f) return LOWP_EIO;
  fprintf(f, "# generated by lowp run error-growth, do not edit\n");
  fprintf(f, "series,n,bound\n");
  for (j = 0; j < 2; j++)
    for (i = 0; i < L->n; i++)
      for (k = 0; g->used[i] && k < ns; k++) {
        double b = j ? g->pbound[i][k] : g->bound[i][k];
        if (bound_ok(b)) fprintf(f, "%s: %s,%zu,%.6e\n", L->s[i].label, bound_kind(L, i, j), nv[k], b);
      }
  return fclose(f) ? LOWP_EIO : LOWP_OK;
}

/* does series i have a drawn bound (j = 0) or probabilistic bound (j = 1)? */
static int has_bound(const grid_t *g, size_t i, int j, size_t nx) {
  size_t k;
  for (k = 0; k < nx; k++)
    if (bound_ok(j ? g->pbound[i][k] : g->bound[i][k])) return 1;
  return 0;
}

typedef struct {
  char extra[512 + (MAXSER + 2) * 400];
  size_t len;
  int nlab;
  double x0; /* where the notes start (screen fraction): right of the plot, under the key */
} notes_t;

/* a note in the right margin under the key, in the curve's colour, with a
   circle at (x, y) where the curve ends */
static void note(notes_t *n, const char *color, size_t x, double y, const char *text) {
  if (n->nlab >= 14) return;
  n->len += (size_t)snprintf(n->extra + n->len, sizeof n->extra - n->len,
                             "\nset label %d \"%s\" at screen %.3f, screen %.3f left font ',9' tc rgb '%s' "
                             "noenhanced\nset label %d '' at %zu, first %.6g point pt 6 ps 2.5 lc rgb '%s'",
                             n->nlab + 1, text, n->x0, 0.42 - 0.075 * n->nlab / 2, color, n->nlab + 2, x, y, color);
  n->nlab += 2;
}

/* the label inside a gnuplot "...": no quote, backslash, control */
static void quoted(char *lab, size_t len, const char *s) {
  size_t j, o = 0;
  for (j = 0; s[j] && o + 1 < len; j++)
    lab[o++] = (s[j] == '"' || s[j] == '\\' || (unsigned char)s[j] < 32) ? '\'' : s[j];
  lab[o] = '\0';
}

/* why curves stop: overflow of the result, or a bound reaching 1 */
static void stop_notes(notes_t *n, const series_list_t *L, const grid_t *g, const size_t *xv, size_t nx,
                       const char *xn) {
  size_t i, ci, k;
  char lab[256], text[512];
  for (i = 0, ci = 0; i < L->n; i++) {
    size_t last = nx, lb = nx, lp = nx;
    if (!g->used[i]) continue;
    ci++;
    quoted(lab, sizeof lab, L->s[i].label);
    for (k = 0; k < nx; k++) {
      if (isfinite(g->mean[i][k])) last = k;
      if (bound_ok(g->bound[i][k])) lb = k;
      if (bound_ok(g->pbound[i][k])) lp = k;
    }
    if (g->pcut[i] && lp < nx) {
      snprintf(text, sizeof text, "%s: prob. bound cut\\nfrom %s = %zu (stagnation)", lab, xn, g->pcut[i]);
      note(n, lowp_result_series_color(ci - 1), xv[lp], g->pbound[i][lp], text);
    }
    if (!(last == nx || last + 1 >= nx || isfinite(g->mean[i][last + 1]))) {
      snprintf(text, sizeof text, "%s stops: its result\\noverflows (inf) from %s = %zu", lab, xn, xv[last + 1]);
      note(n, lowp_result_series_color(ci - 1), xv[last], g->mean[i][last], text);
    }
    if (lb < nx && lb + 1 < nx && L->s[i].heuristic) {
      /* lowp's Kahan constant is used only while n u <= 0.1 (lib/check/op.c bound_kahan): withdrawn, not >= 1 */
      snprintf(text, sizeof text, "%s: heuristic bound\\nwithdrawn from %s = %zu (%s u > 0.1)", lab, xn,
               xv[lb + 1], xn);
      note(n, lowp_result_series_color(ci - 1), xv[lb], g->bound[i][lb], text);
    } else if (lb < nx && lb + 1 < nx) {
      snprintf(text, sizeof text, "%s: its bound is\\n>= 1 (vacuous) from %s = %zu", lab, xn, xv[lb + 1]);
      note(n, lowp_result_series_color(ci - 1), xv[lb], g->bound[i][lb], text);
    }
  }
}

static int plot_one(const lowp_run_t *r, const char *base, const char *csv, const char *bcsv,
                    const char *title, const char *xlabel, const char *ylabel, const series_list_t *L,
                    const struct grid *g, const size_t *xv, size_t nx) {
  lowp_series_t s[3 * MAXSER];
  size_t i, c = 0, ci, k;
  int j;
  lowp_plot_t p;
  static notes_t n;
  char sty[3 * MAXSER][96], btitle[2 * MAXSER][300], ctitle[MAXSER][600];
  char exact[600] = "";
  size_t nexact = 0;
  memset(s, 0, sizeof s);
  for (i = 0, ci = 0; i < L->n; i++) {
    int pos = 0;
    if (!g->used[i]) continue;
    for (k = 0; k < nx; k++) pos |= g->mean[i][k] > 0;
    if (!pos) { /* error 0 at every size: no point on the log axis, so no key entry; named in a label */
      if (strlen(exact) + strlen(L->s[i].label) + 4 < sizeof exact)
        snprintf(exact + strlen(exact), sizeof exact - strlen(exact), "%s%s", nexact ? "\\n" : "", L->s[i].label);
      nexact++;
    }
    s[c].csv = csv; s[c].xcol = 2; s[c].ycol = 3; s[c].title = L->s[i].label;
    s[c].style = lowp_result_series_style(ci, "linespoints", sty[c], sizeof sty[c]);
    if (g->same[i] >= 0) { /* drawn over an earlier curve: open circles around its points, and said so */
      snprintf(ctitle[i], sizeof ctitle[i], "%s (= %s)", L->s[i].label, L->s[g->same[i]].label);
      snprintf(sty[c], sizeof sty[c], "linespoints lc rgb '%s' dt 3 pt 6 ps 2.2", lowp_result_series_color(ci));
      s[c].title = ctitle[i];
    }
    s[c].filter = L->s[i].label; s[c].filter_col = 1;
    if (pos) c++;
    for (j = 0; j < 2; j++) {
      char *bt = btitle[2 * i + (size_t)j];
      if (!has_bound(g, i, j, nx)) continue;
      snprintf(bt, 300, "%s: %s", L->s[i].label, bound_kind(L, i, j));
      s[c].csv = bcsv; s[c].xcol = 2; s[c].ycol = 3; s[c].title = bt;
      snprintf(sty[c], sizeof sty[c], "lines lc rgb '%s' dt %d", lowp_result_series_color(ci),
               j ? 3 : L->s[i].heuristic ? 4 : 2);
      s[c].style = sty[c];
      s[c].filter = bt; s[c].filter_col = 1;
      c++;
    }
    ci++;
  }
  memset(&p, 0, sizeof p);
  p.title = title;
  p.xlabel = xlabel;
  p.ylabel = ylabel;
  p.logx = p.logy = 1;
  n.nlab = 0;
  {
    /* the key stays in the right margin, wide enough for its longest entry (font 9 on the 1000-pixel canvas:
       gnuplot reserves about 7 pixels a character, 110 for the sample and the box); tools/plot_check.py checks
       that it covers no data */
    size_t q, lmax = 0;
    double rm;
    for (q = 0; q < c; q++) lmax = strlen(s[q].title) > lmax ? strlen(s[q].title) : lmax;
    rm = 1 - (7.2 * (double)lmax + 110) / 1000;
    rm = rm < 0.55 ? 0.55 : rm > 0.72 ? 0.72 : rm;
    n.x0 = rm + 0.02;
    n.len = (size_t)snprintf(n.extra, 512,
             "set key outside right top Left reverse font ',9'\nset logscale x 2\nset format x '2^{%%L}'\n"
             "set format y '10^{%%L}'\nset mxtics 1\nset yrange [*:2]\nset xrange [%zu:%zu]\n"
             "set rmargin at screen %.3f", xv[0], xv[nx - 1], rm);
  }
  stop_notes(&n, L, g, xv, nx, xlabel[0] == 'k' ? "k" : "n");
  /* points that are missing because the error is exactly 0 (a log axis cannot show it) */
  {
    int zeros = 0;
    for (i = 0; i < L->n; i++)
      for (k = 0; g->used[i] && k < nx; k++) zeros += g->mean[i][k] == 0;
    if (zeros)
      n.len += (size_t)snprintf(n.extra + n.len, sizeof n.extra - n.len, "\nset label %d \"%d points not drawn: their error is\\n"
                                "exactly 0 (no place on a log axis)%s%s\" at screen %.3f, screen %.3f left font ',9' "
                                "noenhanced", n.nlab + 1, zeros, nexact ? ";\\nexact at every size:\\n" : "", exact,
                                n.x0, 0.42 - 0.075 * n.nlab / 2);
  }
  p.extra = n.extra;
  return lowp_plot(r->outdir, base, &p, s, c);
}

/* Does series s run on input format f (bf: the block-scaled format of a
   block-scaled grid, NULL elsewhere)? A block-scaled model runs on the
   formats its instruction takes (lowp_gemm_bs_kind_check), and only there. */
static int applies(const series_t *s, const lowp_format_t *f, const lowp_bsformat_t *bf) {
  lowp_tc_model_t m;
  lowp_gemm_bs_cfg_t cfg;
  char err[256];
  if (s->only[0]) {
    char buf[96], *tok[16];
    size_t n, i;
    int hit = 0;
    snprintf(buf, sizeof buf, "%s", s->only);
    n = split(buf, tok, 16, ',');
    for (i = 0; i < n; i++) {
      lowp_bsformat_t ob;
      if (bf) hit |= lowp_bsformat_parse(&ob, tok[i], NULL, 0) == LOWP_OK && !strcmp(ob.name, bf->name);
      else if (lowp_format_by_name(tok[i]) && !strcmp(lowp_format_by_name(tok[i])->name, f->name)) hit = 1;
    }
    if (!hit) return 0;
  }
  if (s->bs && !bf) return 0;
  if (s->bs) { /* floating-point elements, the kind's operands, blocks holding whole groups */
    if (lowp_bsmma_get(&cfg.model, s->spec, err, sizeof err) != LOWP_OK) return 0;
    return !bf->elem_int && lowp_gemm_bs_kind_check(s->spec, bf, err, sizeof err) == LOWP_OK &&
           !(cfg.model.p.group && bf->block % cfg.model.p.group);
  }
  if (s->tc) return !bf && lowp_tc_model_get(&m, s->spec, f, &LOWP_FMT_FP32, err, sizeof err) == LOWP_OK;
  return 1;
}

/* ------------------------------------------------- declared measurements */

/* What one measurement declares: the operation (sums of n terms, dots of
   length n, m x m GEMMs with inner dimension n), the input format, the
   models (each a registry kernel with parameters), the trials' inputs (the
   first n elements of each) and the sizes. The pipeline does the rest. */
typedef enum { K_SUM = 0, K_DOT = 1, K_GEMM = 2 } kind_t;

/* block-scaled GEMMs: each trial's A (m x kmax) and B (kmax x m), quantized
   once along k by the format's rule; what the model multiplies */
typedef struct {
  double **qa, **sa, **qb, **sb; /* per trial: A's elements (m x kmax) and scales (m x nb); B's transposed */
  double **xa, **xb;             /* per trial: the dequantized A (m x kmax) and B (kmax x m) */
  double *ta, *tb;               /* per trial: the per-tensor scales (1 where the format has none) */
  size_t nb;                     /* blocks of a row of kmax */
} bsq_t;

typedef struct {
  kind_t kind;
  const series_list_t *L;
  const lowp_format_t *f;
  double *const *a, *const *b; /* per trial; b unused for sums; block-scaled: the dequantized values */
  size_t tmax, m, kmax;        /* GEMMs: A_k = first k columns of m x kmax, B_k = first k rows */
  const size_t *nv, *tr;       /* sizes, and the trials at each */
  size_t ns;
  const lowp_bsformat_t *bf;   /* block-scaled GEMMs: the inputs' format (NULL elsewhere) */
  const bsq_t *q;              /* and their quantization */
} decl_t;

/* The registry kernel and parameters of a series for an operation kind:
   tensor cores -> gemm_tc model=SPEC (dots as 1 x 1 GEMMs of the batch);
   accumulation orders -> sum_acc / dot_acc / gemm_acc with acc, order,
   round and (dots with products rounded, lib/model's fma=0) prod=acc. */
static const char *series_kernel(char *prm, size_t len, const series_t *s, kind_t kind) {
  lowp_accum_t m;
  char err[128], acc[96] = "fp32";
  const char *ap = strstr(s->spec, "acc="), *ord;
  static const char *const names[] = {"recursive", "pairwise", "blocked", "splitk", "kahan"};
  if (s->tc) {
    snprintf(prm, len, "model=%s", s->spec);
    return "gemm_tc";
  }
  if (lowp_accum_parse(&m, s->spec, err, sizeof err) != LOWP_OK) return NULL;
  if (ap) snprintf(acc, sizeof acc, "%.*s", (int)strcspn(ap + 4, ","), ap + 4);
  ord = names[m.order];
  if (m.order == LOWP_ACC_BLOCKED || m.order == LOWP_ACC_SPLITK)
    snprintf(prm, len, "acc=%s,order=%s:%zu,round=%s%s", acc, ord, m.block, lowp_rounding_name(m.rnd),
             kind != K_SUM && !m.fma ? ",prod=acc" : "");
  else
    snprintf(prm, len, "acc=%s,order=%s,round=%s%s", acc, ord, lowp_rounding_name(m.rnd),
             kind != K_SUM && !m.fma ? ",prod=acc" : "");
  return kind == K_SUM ? "sum_acc" : kind == K_DOT ? "dot_acc" : "gemm_acc";
}

/* The block-scaled MMA model as a subject: trial t of the batch multiplies
   the elements and scales its inputs were dequantized from (checked: q s t
   = x), A_k the first k columns of the trial's quantized A, B_k the first k
   rows of B, on lowp_gemm_bs_fast (the same bits as the model's reference,
   tests/tgemm_bs.c). A per-tensor scale (nvfp4) is applied in the epilogue,
   as cuBLASLt's alpha: D = fl32(fl32(tA tB) acc) (tools/cmd_gemm.c's
   subject, docs/formats.md). */
typedef struct {
  lowp_gemm_bs_cfg_t cfg;
  const decl_t *d;
} bs_ctx_t;

static void bs_release(lowp_subject_t *s) { free(s->ctx); }

/* trial t's A_k / B_k elements and scales; 0 if each q s t is the input x */
static int bs_operands(double *A, double *SA, double *B, double *SB, const decl_t *d, size_t t, size_t k,
                       const double *xa, const double *xb) {
  const bsq_t *q = d->q;
  size_t m = d->m, blk = (size_t)d->bf->block, nb = (k + blk - 1) / blk, i, j, bad = 0;
  for (i = 0; i < m; i++) {
    for (j = 0; j < nb; j++) {
      SA[i * nb + j] = q->sa[t][i * q->nb + j];
      SB[i * nb + j] = q->sb[t][i * q->nb + j];
    }
    for (j = 0; j < k; j++) {
      A[i * k + j] = q->qa[t][i * d->kmax + j];
      B[j * m + i] = q->qb[t][i * d->kmax + j];
      bad += !(A[i * k + j] * SA[i * nb + j / blk] * q->ta[t] == xa[i * k + j]);
      bad += !(B[j * m + i] * SB[i * nb + j / blk] * q->tb[t] == xb[j * m + i]);
    }
  }
  return bad != 0;
}

static int bs_run(const lowp_subject_t *s, double *const *out, const double *const *in, const lowp_problem_t *p,
                  char *err, size_t errlen) {
  const bs_ctx_t *x = s->ctx;
  const decl_t *d = x->d;
  size_t m = p->dims.m, k = p->dims.k, nb = lowp_bsformat_blocks(d->bf, k), t, i;
  double *A = malloc(m * k * sizeof *A), *B = malloc(m * k * sizeof *B), *SA = malloc(m * nb * sizeof *SA),
         *SB = malloc(m * nb * sizeof *SB);
  int st = A && B && SA && SB && m == d->m && p->dims.n == m ? LOWP_OK : LOWP_ENOMEM;
  for (t = 0; t < p->dims.batch && !st; t++) {
    double *C = out[0] + t * m * m;
    float alpha = (float)d->q->ta[t] * (float)d->q->tb[t];
    if (bs_operands(A, SA, B, SB, d, t, k, in[0] + t * m * k, in[1] + t * m * k))
      st = lowp_errf(err, errlen, LOWP_EINVAL, "block-scaled model: trial %zu's inputs are not its elements' values",
                     t);
    for (i = 0; i < m * m && !st; i++) C[i] = 0.0;
    if (!st) st = lowp_gemm_bs_fast(C, A, SA, B, SB, m, m, k, &x->cfg);
    for (i = 0; i < m * m && !st && alpha != 1.0f; i++) C[i] = (double)(alpha * (float)C[i]);
  }
  free(A), free(B), free(SA), free(SB);
  return st;
}

static int bs_subject(lowp_subject_t *subj, const series_t *s, const decl_t *d) {
  bs_ctx_t *x = calloc(1, sizeof *x);
  char ms[160];
  if (!x) return LOWP_ENOMEM;
  if (lowp_bsmma_get(&x->cfg.model, s->spec, NULL, 0) != LOWP_OK) {
    free(x);
    return LOWP_EINVAL;
  }
  x->cfg.fa = x->cfg.fb = *d->bf;
  x->d = d;
  memset(subj, 0, sizeof *subj);
  lowp_bsmma_str(ms, sizeof ms, &x->cfg.model.p);
  snprintf(subj->name, sizeof subj->name, "block-scaled model %.100s (%.120s)", s->spec, ms);
  subj->kind = "kernel";
  subj->run = bs_run;
  subj->ctx = x;
  subj->release = bs_release;
  return LOWP_OK;
}

/* the series' subject for problem p: it must declare the series' method */
static int series_subject(lowp_subject_t *subj, const series_t *s, const decl_t *d, const lowp_problem_t *p) {
  char prm[256], err[512];
  kind_t kind = d->kind;
  const char *k = series_kernel(prm, sizeof prm, s, kind);
  lowp_accum_t m;
  int st;
  if (s->bs) return d->bf && d->q ? bs_subject(subj, s, d) : LOWP_EINVAL;
  if (!k) return LOWP_EINVAL;
  st = lowp_exp_subject(subj, p, k, prm, err, sizeof err);
  if (st || s->tc) return st;
  lowp_accum_parse(&m, s->spec, err, sizeof err);
  if (!subj->has_accum || subj->accum.order != m.order || subj->accum.block != m.block ||
      subj->accum.rnd != m.rnd || subj->accum.acc.precision != m.acc.precision ||
      subj->accum.acc.emin != m.acc.emin || subj->accum.acc.emax != m.acc.emax ||
      (kind != K_SUM && subj->accum.fma != m.fma)) {
    lowp_subject_close(subj);
    return LOWP_EINVAL; /* the kernel would compute another method than the series names */
  }
  return LOWP_OK;
}

/* the problem of size n (batch = the trials; dots are 1 x 1 GEMMs on tensor cores) */
static lowp_problem_t problem_of(const decl_t *d, size_t n, size_t trials, int tc) {
  if (d->bf) { /* block-scaled inputs (fp32 data quantized by bf; the inputs are the dequantized values) */
    lowp_problem_t p = lowp_exp_problem("gemm", trials, d->m, d->m, n, &LOWP_FMT_FP32, &LOWP_FMT_FP32);
    p.has_bin[0] = p.has_bin[1] = 1;
    p.bin[0] = p.bin[1] = *d->bf;
    return p;
  }
  if (d->kind == K_SUM) return lowp_exp_problem("sum", 1, trials, n, 1, d->f, &LOWP_FMT_FP32);
  if (d->kind == K_GEMM) return lowp_exp_problem("gemm", trials, d->m, d->m, n, d->f, &LOWP_FMT_FP32);
  if (tc) return lowp_exp_problem("gemm", trials, 1, 1, n, d->f, &LOWP_FMT_FP32);
  return lowp_exp_problem("dot", trials, 1, 1, n, d->f, &LOWP_FMT_FP32);
}

/* the inputs of size n, from the trials' vectors */
static int inputs_of(lowp_check_inputs_t *in, const decl_t *d, const lowp_problem_t *p, size_t n,
                     size_t trials) {
  size_t t, r0, j, m = d->kind == K_GEMM ? d->m : 1, len = m * n;
  double *x = malloc(trials * len * sizeof *x), *w = malloc(trials * len * sizeof *w);
  const double *xs[2];
  int st;
  if (!x || !w) { free(x); free(w); return LOWP_ENOMEM; }
  for (t = 0; t < trials; t++) {
    if (d->kind == K_GEMM) {
      for (r0 = 0; r0 < m; r0++)
        for (j = 0; j < n; j++) x[t * len + r0 * n + j] = d->a[t][r0 * d->kmax + j];
    } else {
      memcpy(x + t * len, d->a[t], n * sizeof *x);
    }
    if (d->kind != K_SUM) memcpy(w + t * len, d->b[t], len * sizeof *w);
  }
  xs[0] = x;
  xs[1] = w;
  st = lowp_check_inputs_copy(in, p, xs, NULL);
  free(x);
  free(w);
  return st;
}

/* each trial's backward error (lib/measure on the pipeline's outputs: the
   max over the trial's elements; an inf or NaN where the exact value is
   finite counts as infinite) */
static void trial_errors(double *e, const lowp_check_result_t *r, size_t trials) {
  const lowp_check_output_t *o = &r->out[0];
  size_t t, per = o->count / trials;
  for (t = 0; t < trials; t++) {
    lowp_errors_t me;
    lowp_measure_errors(&me, o->got + t * per, o->exact + t * per, o->absab + t * per, per,
                        &LOWP_FMT_FP32);
    e[t] = me.n_special ? INFINITY : me.max_bwd;
  }
}

/* one size (a work item): every used series measured on the same inputs;
   the exact references are computed once (lowp_check_measure for the
   first series, lowp_check_measure_same for the others). v: per series the
   trials' errors, then the status. */
static int measure_size(double *v, const decl_t *d, const int *used, size_t n, size_t trials) {
  lowp_check_result_t ref[2];
  lowp_check_inputs_t in[2];
  int have[2] = {0, 0}, st = LOWP_OK;
  size_t i;
  char err[512];
  memset(ref, 0, sizeof ref);
  memset(in, 0, sizeof in);
  for (i = 0; i < d->L->n && !st; i++) {
    int tc = d->kind == K_DOT && d->L->s[i].tc; /* its own problem: a batch of 1 x 1 GEMMs */
    lowp_problem_t p = problem_of(d, n, trials, tc);
    lowp_subject_t s;
    lowp_check_result_t r;
    if (!used[i]) continue;
    if (!have[tc] && (st = inputs_of(&in[tc], d, &p, n, trials)) != 0) break;
    if ((st = series_subject(&s, &d->L->s[i], d, &p)) != 0) break;
    if (have[tc]) st = lowp_check_measure_same(&r, &ref[tc], &s, &in[tc], NULL, err, sizeof err);
    else st = lowp_check_measure(&r, &p, &s, &in[tc], NULL, err, sizeof err);
    lowp_subject_close(&s);
    if (!st) trial_errors(&v[i * d->tmax], &r, trials);
    if (!st && !have[tc]) {
      ref[tc] = r;
      have[tc] = 1;
    } else {
      lowp_check_result_free(&r);
    }
  }
  for (i = 0; i < 2; i++) {
    lowp_check_result_free(&ref[i]);
    lowp_check_inputs_free(&in[i]);
  }
  v[MAXSER * d->tmax] = st;
  return st;
}

/* the bound `lowp tol gemm --k K --input BS --out fp32 --method model:SPEC`
   gives (lowp_capi_tol_query + lowp_tol: the block-scaled model's worst
   case, lib/check/tol.c bs_model_bound, with the epilogue's two roundings
   where the format has a per-tensor scale) */
static void bs_bound(struct grid *g, size_t i, size_t k, const decl_t *d) {
  char qs[600], err[512], bs[200];
  lowp_tol_query_t q;
  lowp_tol_t t;
  lowp_bsformat_spec(bs, sizeof bs, d->bf);
  snprintf(qs, sizeof qs, "{\"op\": \"gemm\", \"k\": %zu, \"input\": \"%s\", \"out\": \"fp32\", \"method\": "
           "\"model:%s\"}", d->nv[k], bs, d->L->s[i].spec);
  if (lowp_capi_tol_query(&q, qs, err, sizeof err) != LOWP_OK || lowp_tol(&t, &q, err, sizeof err) != LOWP_OK)
    return;
  g->bound[i][k] = t.bound;
  snprintf(g->bname[i], sizeof g->bname[i], "lowp tol: %.180s", t.bound_name);
}

/* the bound of each series' own method at each size (lowp_check_bound:
   tensor-core model, or gamma of the order, directed rounding doubling u;
   +inf where it does not exist), and for recursive orders the
   probabilistic bound (round to nearest); names at the largest size */
static void bounds_of(grid_t *g, const decl_t *d) {
  size_t i, k;
  for (i = 0; i < d->L->n; i++) {
    g->bname[i][0] = '\0';
    for (k = 0; k < d->ns; k++) {
      lowp_problem_t p = problem_of(d, d->nv[k], d->tr[k], d->kind == K_DOT && d->L->s[i].tc);
      lowp_subject_t s;
      lowp_check_bound_t b, pb;
      g->bound[i][k] = g->pbound[i][k] = g->praw[i][k] = NAN;
      if (!g->used[i]) continue;
      if (d->L->s[i].bs) { /* the block-scaled model's bound: lowp tol's */
        bs_bound(g, i, k, d);
        continue;
      }
      if (series_subject(&s, &d->L->s[i], d, &p) != LOWP_OK) continue;
      if (lowp_check_bound(&b, &p, &s, s.has_model ? LOWP_BOUND_MODEL : LOWP_BOUND_GAMMA, 0.99, NULL,
                           NULL, 0) == LOWP_OK) {
        g->bound[i][k] = b.value;
        snprintf(g->bname[i], sizeof g->bname[i], "%s", b.name);
      }
      /* the probabilistic bound only for recursive orders (the sqrt(n) claims), to keep legends short */
      if (!s.has_model && s.accum.order == LOWP_ACC_RECURSIVE &&
          lowp_check_bound(&pb, &p, &s, LOWP_BOUND_PROB, 0.99, NULL, NULL, 0) == LOWP_OK)
        g->pbound[i][k] = g->praw[i][k] = pb.value;
      lowp_subject_close(&s);
    }
  }
}

/*
 * Higham & Mary's probabilistic bound (SISC 41(5), 2019, Model 2.1) assumes
 * rounding errors that are independent and mean-zero. A recursive sum
 * breaks that where it stagnates: a term t_k below one unit roundoff of the
 * running sum, |t_k| < u |s^_{k-1}|, loses most or all of itself in the
 * addition, always towards the running sum (e.g. every fp16 sum of [0,1]
 * data beyond s = 2048, where the whole term is lost). Such errors are of
 * one sign and add up linearly: m of them can reach m u relative to the
 * sum, which a bound of order sqrt(n) u covers only while m stays below
 * sqrt(n). So the bound's assumption is taken to fail at a size where some
 * trial has more than sqrt(n) stagnating steps, and the probabilistic
 * curve is cut from the first such size on (not drawn, not checked; the
 * plot says where). The steps are counted on the sum lowp's model computes
 * (lowp_accum_add in the series' accumulator, products rounded first when
 * the series rounds them; GEMMs: the most in any element of the trial).
 */
static void stagnation_trial(size_t *cnt, const decl_t *d, const lowp_accum_t *m, size_t t, size_t len) {
  double u = lowp_format_u(&m->acc);
  size_t nel = d->kind == K_GEMM ? d->m * d->m : 1, e, j, kk;
  for (kk = 0; kk < d->ns; kk++) cnt[kk] = 0;
  for (e = 0; e < nel; e++) {
    double s = 0;
    size_t c = 0, row = e / (d->m ? d->m : 1), col = e % (d->m ? d->m : 1);
    for (j = 0, kk = 0; j < len; j++) {
      double x = d->kind == K_SUM    ? d->a[t][j]
                 : d->kind == K_DOT ? d->a[t][j] * d->b[t][j] /* exact: inputs of <= 26 bits */
                                    : d->a[t][row * d->kmax + j] * d->b[t][j * d->m + col];
      if (d->kind != K_SUM && !m->fma) lowp_round_f64(&x, x, &m->acc, NULL, m->rnd);
      if (x != 0 && fabs(x) < u * fabs(s)) c++; /* a zero term (fp4 elements quantized to 0) loses nothing */
      lowp_accum_add(&s, s, x, &m->acc, m->rnd);
      for (; kk < d->ns && d->nv[kk] <= j + 1; kk++)
        if (c > cnt[kk]) cnt[kk] = c;
    }
  }
}

static int stagnation_cut(grid_t *g, const decl_t *d) {
  size_t i, k, t, tall = 0;
  size_t *cnt;
  for (k = 0; k < d->ns; k++) tall = d->tr[k] > tall ? d->tr[k] : tall;
  cnt = calloc(tall * MAXSZ, sizeof *cnt);
  if (!cnt) return LOWP_ENOMEM;
  for (i = 0; i < d->L->n; i++) {
    lowp_accum_t m;
    char err[128];
    long it;
    int any = 0;
    g->pcut[i] = 0;
    for (k = 0; k < d->ns; k++) {
      g->stag[i][k] = NAN;
      any |= bound_ok(g->pbound[i][k]);
    }
    if (!g->used[i] || !any || d->L->s[i].tc || d->L->s[i].bs || lowp_accum_parse(&m, d->L->s[i].spec, err, sizeof err) != LOWP_OK ||
        m.order != LOWP_ACC_RECURSIVE)
      continue;
#pragma omp parallel for schedule(dynamic, 1)
    for (it = 0; it < (long)tall; it++) { /* each trial writes its own row: any thread count, same counts */
      size_t len = 0, q;
      for (q = 0; q < d->ns; q++)
        if ((size_t)it < d->tr[q]) len = d->nv[q];
      if (len) stagnation_trial(&cnt[(size_t)it * MAXSZ], d, &m, (size_t)it, len);
    }
    for (k = 0; k < d->ns; k++) {
      size_t mx = 0;
      for (t = 0; t < d->tr[k]; t++) mx = cnt[t * MAXSZ + k] > mx ? cnt[t * MAXSZ + k] : mx;
      g->stag[i][k] = (double)mx;
      if (!g->pcut[i] && (double)mx > sqrt((double)d->nv[k])) g->pcut[i] = d->nv[k];
      if (g->pcut[i]) g->pbound[i][k] = NAN; /* cut from here on: the model's assumption fails */
    }
  }
  free(cnt);
  return LOWP_OK;
}

/*
 * Every size is a work item: under mpirun each rank measures its share and
 * every rank then holds them all (par/par.h); items run in parallel threads,
 * each writing its own cells, so the numbers do not depend on the thread
 * or rank count. Mean and max over the trials per series and size.
 */
static int measure(grid_t *g, const decl_t *d) {
  size_t stride = MAXSER * d->tmax + 1, i, k, t;
  double *val = calloc(d->ns * stride, sizeof *val);
  long it;
  int status = LOWP_OK;
  if (lowp_par_spread() ? lowp_par_max(!val) > 0 : !val) {
    free(val);
    return LOWP_ENOMEM;
  }
  for (i = 0; i < d->L->n; i++) g->used[i] = applies(&d->L->s[i], d->f, d->bf);
#pragma omp parallel for schedule(dynamic, 1)
  for (it = (long)d->ns - 1; it >= 0; it--) /* the largest first */
    if (lowp_par_mine((size_t)it)) measure_size(&val[(size_t)it * stride], d, g->used, d->nv[it], d->tr[it]);
  if (lowp_par_allgather_items(val, d->ns, stride * sizeof *val) != 0) status = LOWP_EIO;
  for (k = 0; k < d->ns && !status; k++) status = (int)val[k * stride + stride - 1];
  for (k = 0; k < d->ns; k++) g->ntr[k] = d->tr[k];
  if (!status) {
    bounds_of(g, d);
    if (stagnation_cut(g, d) != LOWP_OK) status = LOWP_ENOMEM;
  }
  for (i = 0; i < d->L->n; i++)
    for (k = 0; k < d->ns; k++) {
      const double *e = &val[k * stride + i * d->tmax];
      size_t nt = d->tr[k];
      double s = 0, mx = 0;
      g->mean[i][k] = g->max[i][k] = 0;
      g->pexc[i][k] = g->dexc[i][k] = 0;
      if (!g->used[i]) continue;
      for (t = 0; t < nt; t++) { /* every trial against every bound (checks.csv) */
        if (bound_ok(g->praw[i][k]) && !(e[t] <= g->praw[i][k])) g->pexc[i][k]++;
        if (bound_ok(g->bound[i][k]) && !(e[t] <= g->bound[i][k])) g->dexc[i][k]++;
        if (d->kind == K_GEMM) { /* the order of the sums of earlier versions: same bytes */
          g->mean[i][k] += e[t] / (double)nt;
          if (isinf(e[t]) || e[t] > g->max[i][k]) g->max[i][k] = e[t];
          continue;
        }
        s += e[t];
        if (e[t] > mx || isnan(e[t])) mx = e[t];
      }
      if (d->kind != K_GEMM) {
        g->mean[i][k] = s / (double)nt;
        g->max[i][k] = mx;
      }
    }
  free(val);
  return status;
}

/* Write model,n,mean,max rows (series-major, so lines do not cross series). */
static int write_grid(const lowp_run_t *r, const char *file, const grid_t *g, const series_list_t *L,
                      const size_t *nv, size_t ns, const char *xname) {
  FILE *f = fopen(lowp_run_path(r, file), "w");
  size_t i, k;
  if (!f) return LOWP_EIO;
  fprintf(f, "# generated by lowp run error-growth, do not edit\n");
  fprintf(f, "model,%s,mean_backward_error,max_backward_error,trials\n", xname);
  for (i = 0; i < L->n; i++) {
    if (!g->used[i]) continue;
    for (k = 0; k < ns; k++) {
      if (!isfinite(g->mean[i][k])) continue; /* overflow (fp16 sums): no point */
      fprintf(f, "%s,%zu", L->s[i].label, nv[k]);
      csv_num(f, g->mean[i][k]);
      csv_num(f, g->max[i][k]);
      fprintf(f, ",%zu\n", g->ntr[k]);
    }
  }
  return fclose(f) ? LOWP_EIO : LOWP_OK;
}

static int find_series(const series_list_t *L, int tc, const char *spec) {
  size_t i;
  for (i = 0; i < L->n; i++)
    if (L->s[i].tc == tc && !strcmp(L->s[i].spec, spec)) return (int)i;
  return -1;
}

static size_t find_size(const size_t *nv, size_t ns, size_t want) {
  size_t k, best = 0;
  for (k = 0; k < ns; k++)
    if (nv[k] <= want) best = k;
  return best;
}

/* ----------------------------------------------------------------- run */

/* the run's declaration: models, formats, data, sizes, the trials' inputs */
typedef struct {
  series_list_t dots, sums;
  lowp_format_t fmts[MAXFMT], sumf;
  lowp_dist_t dists[MAXDIST];
  char dnames[MAXDIST][32];
  size_t nf, nd, nmin, nmax, nstep, kmax, m, nv[MAXSZ], kv[MAXSZ], ns, nk;
  size_t tmin, tmax, budget;   /* trials: budget / work, clamped to [tmin, tmax] */
  size_t tn[MAXSZ], tk[MAXSZ]; /* trials at each n (sums, dots) and each k (GEMMs) */
  size_t ta, len[256];         /* trial vectors allocated, and the length of each */
  double **a, **b;
  /* block-scaled GEMMs: formats (as given, and parsed), models, inner dimensions and their trials */
  series_list_t bsl;
  lowp_bsformat_t bsf[MAXFMT];
  char bsnames[MAXFMT][64];
  size_t nbf, bkmax, bkv[MAXSZ], nbk, tbk[MAXSZ];
  bsq_t bq;
} plan_t;

/* what the judgement and the render collect */
typedef struct {
  growth_t rec01, rec11, tc01;
  double fp8_nop, fp8_p;
  FILE *checks;                     /* checks.csv: one row per drawn bound point; every count below is read off its rows */
  size_t fp8_k, nbound, nbound_bad; /* deterministic bound points checked against every trial, with a trial over it */
  size_t nbound_trials, nbound_exc; /* the trials at those points, and the trials over the bound */
  size_t npcut_trials, npcut_exc;   /* at the cut points: trials, and trials over the uncut probabilistic bound */
  char bound_bad[512];              /* the first violation */
  size_t nprob, nprob_bad, nprob_trials, nprob_exc; /* probabilistic bound points checked (where their assumption
                                       holds), points whose max error exceeds it; trial sums checked, exceeding */
  char prob_bad[512];               /* the first probabilistic point exceeded */
  size_t npcut, npcut_pts;          /* curves whose probabilistic bound is cut (stagnation), points cut */
  char pcutnames[2048];             /* "sum fp16 recursive from n = 1024", ... */
  size_t nheur, nheur_bad, nheur_trials, nheur_exc; /* heuristic (Kahan) bound points: drawn, exceeded, their
                                       trials, trials over (not checked) */
  size_t nsat, nbrk, novf, novfc;          /* curves that saturate, with a change of slope; bound points
                                       not checked because a trial overflowed */
  char satnames[512];               /* the models that saturate (each once) */
  int plot_failed;
  cJSON *plots, *tables, *slopes, *bounds;
  cJSON *bsrows;                    /* block-scaled GEMMs at the largest k: error, bound, ratio, growth */
  char bstext[3072];                /* the same for the answer (uniform [0,1] data) */
  double bs_worst_ratio;            /* the largest max error / bound over every block-scaled point */
} found_t;

/* trials at a size whose one trial costs `work` products (summands):
   budget / work, at least trials and at most trials_max (cheap sizes get more) */
static size_t trials_for(const plan_t *P, size_t work) {
  size_t t = P->budget / (work ? work : 1);
  return t < P->tmin ? P->tmin : t > P->tmax ? P->tmax : t;
}

/* the Philox stream of trial t's vector (w = 0: a, 1: b) for data set (fi, di);
   the first 5 trials keep the streams of earlier versions (same data), later
   ones a range of their own (fi < 100, di < 6, t < 256: no stream twice) */
static uint32_t stream_of(int sum, size_t fi, size_t di, size_t t, int w) {
  if (t < 5) return (uint32_t)(sum ? 1000 + 10 * di + t : 2000 + 100 * fi + 10 * di + 2 * t + (size_t)w);
  return (uint32_t)(sum ? 100000 + 1000 * di + t : 200000 + 10000 * fi + 1000 * di + 2 * t + (size_t)w);
}

/* the quantized operands of T trials of m x kmax (A) and kmax x m (B); the
   largest block (32) is no smaller than any format's needs: nb = kmax */
static int bsq_alloc(bsq_t *q, size_t T, size_t m, size_t kmax) {
  size_t t;
  double **v[6];
  int j;
  q->nb = kmax; /* blocks of >= 1 element: at most kmax a row */
  q->qa = calloc(T, sizeof *q->qa), q->sa = calloc(T, sizeof *q->sa);
  q->qb = calloc(T, sizeof *q->qb), q->sb = calloc(T, sizeof *q->sb);
  q->xa = calloc(T, sizeof *q->xa), q->xb = calloc(T, sizeof *q->xb);
  q->ta = calloc(T, sizeof *q->ta), q->tb = calloc(T, sizeof *q->tb);
  if (!q->qa || !q->sa || !q->qb || !q->sb || !q->xa || !q->xb || !q->ta || !q->tb) return LOWP_ENOMEM;
  v[0] = q->qa, v[1] = q->sa, v[2] = q->qb, v[3] = q->sb, v[4] = q->xa, v[5] = q->xb;
  for (t = 0; t < T; t++)
    for (j = 0; j < 6; j++)
      if (!(v[j][t] = malloc(m * kmax * sizeof(double)))) return LOWP_ENOMEM;
  return LOWP_OK;
}

static void bsq_free(bsq_t *q, size_t T) {
  double **v[6];
  size_t t;
  int j;
  v[0] = q->qa, v[1] = q->sa, v[2] = q->qb, v[3] = q->sb, v[4] = q->xa, v[5] = q->xb;
  for (j = 0; j < 6; j++) {
    for (t = 0; v[j] && t < T; t++) free(v[j][t]);
    free(v[j]);
  }
  free(q->ta), free(q->tb);
  memset(q, 0, sizeof *q);
}

static int declare(lowp_run_t *r, plan_t *P) {
  char err[256];
  size_t t, k;
  memset(P, 0, sizeof *P);
  P->nf = lowp_run_param_formats(r, "formats", P->fmts, MAXFMT, input_format);
  P->nd = parse_dists(P->dists, P->dnames, r);
  P->nmin = (size_t)lowp_run_param_int(r, "nmin", 2, 1 << 20);
  P->nmax = (size_t)lowp_run_param_int(r, "nmax", 2, 1 << 24);
  P->nstep = (size_t)lowp_run_param_int(r, "nstep", 2, 1024);
  P->kmax = (size_t)lowp_run_param_int(r, "kmax", 2, 1 << 16);
  P->m = (size_t)lowp_run_param_int(r, "gemm_m", 1, 256);
  P->tmin = (size_t)lowp_run_param_int(r, "trials", 1, 64);
  P->tmax = (size_t)lowp_run_param_int(r, "trials_max", 1, 256);
  if (P->tmax < P->tmin) P->tmax = P->tmin; /* --trials=100 alone: 100 at every size */
  P->budget = (size_t)lowp_run_param_int(r, "budget", 1, 1LL << 40);
  parse_series(&P->dots, r, "models", 1);
  parse_series(&P->sums, r, "sum_models", 0);
  lowp_format_parse(&P->sumf, lowp_run_param(r, "sum_format"), err, sizeof err);
  P->ns = sizes(P->nv, P->nmin, P->nmax, P->nstep);
  P->nk = sizes(P->kv, P->nmin, P->kmax, P->nstep);
  P->nbf = parse_bsformats(P->bsf, P->bsnames, r);
  parse_series(&P->bsl, r, "bs_models", 2);
  P->bkmax = (size_t)lowp_run_param_int(r, "bs_kmax", 2, 1 << 16);
  P->nbk = P->nbf ? sizes(P->bkv, (size_t)lowp_run_param_int(r, "bs_kmin", 1, 1 << 16), P->bkmax,
                          (size_t)lowp_run_param_int(r, "bs_kstep", 2, 1024)) : 0;
  /* the trials of each size, and so how long each trial's vectors must be
     (the GEMMs read trial t's m x kmax block whatever k) */
  for (k = 0; k < P->ns; k++) {
    P->tn[k] = trials_for(P, P->nv[k]);
    for (t = 0; t < P->tn[k]; t++) P->len[t] = P->nv[k] > P->len[t] ? P->nv[k] : P->len[t];
  }
  for (k = 0; k < P->nk; k++) {
    P->tk[k] = trials_for(P, P->m * P->m * P->kv[k]);
    for (t = 0; t < P->tk[k]; t++) P->len[t] = P->m * P->kmax > P->len[t] ? P->m * P->kmax : P->len[t];
  }
  for (k = 0; k < P->nbk; k++) P->tbk[k] = trials_for(P, P->m * P->m * P->bkv[k]);
  for (t = 0; t < P->tmax && P->len[t]; t++) P->ta = t + 1;
  P->a = calloc(P->ta, sizeof *P->a);
  P->b = calloc(P->ta, sizeof *P->b);
  if (!P->a || !P->b) return LOWP_ENOMEM;
  for (t = 0; t < P->ta; t++) {
    P->a[t] = malloc(P->len[t] * sizeof **P->a);
    P->b[t] = malloc(P->len[t] * sizeof **P->b);
    if (!P->a[t] || !P->b[t]) return LOWP_ENOMEM;
  }
  return P->nbk ? bsq_alloc(&P->bq, P->nbk ? P->tbk[0] : 0, P->m, P->bkmax) : LOWP_OK;
}

static void plan_free(plan_t *P) {
  size_t t;
  bsq_free(&P->bq, P->nbk ? P->tbk[0] : 0);
  for (t = 0; P->a && t < P->ta; t++) free(P->a[t]);
  for (t = 0; P->b && t < P->ta; t++) free(P->b[t]);
  free(P->a);
  free(P->b);
}

/* results.json "bounds": each series' bound at the largest size, by name,
   or "vacuous" (>= 1, or none exists: k u >= 1) */
static void record_bounds(found_t *F, const char *what, const series_list_t *L, const grid_t *g,
                          const size_t *xv, size_t nx) {
  size_t i;
  for (i = 0; i < L->n; i++) {
    char key[640], val[400];
    double b = g->bound[i][nx - 1];
    if (!g->used[i] || !g->bname[i][0]) continue;
    snprintf(key, sizeof key, "%s %s", what, L->s[i].label);
    if (bound_ok(b))
      snprintf(val, sizeof val, "%.3e at %zu: %s%s", b, xv[nx - 1], g->bname[i],
               L->s[i].heuristic ? " [heuristic: not a theorem, not checked]" : "");
    else if (L->s[i].heuristic)
      snprintf(val, sizeof val, "withdrawn (k u > 0.1) at %zu: %s [heuristic: not a theorem, not checked]", xv[nx - 1],
               g->bname[i]);
    else snprintf(val, sizeof val, "vacuous (>= 1) at %zu: %s", xv[nx - 1], g->bname[i]);
    cJSON_AddStringToObject(F->bounds, key, val);
  }
}

/* the assumptions of the drawn bounds, in every caption */
#define BOUNDS_NOTE                                                                                          \
  "Every drawn bound is checked against every trial at every size (checks.csv; verdicts). The "             \
  "probabilistic bound (Higham & Mary 2019, P >= 0.99 per sum) assumes independent mean-zero rounding "        \
  "errors: it is cut from the first size where a trial has more than sqrt(n) stagnating steps (a term below "   \
  "u |s| of the running sum, whose error is one-signed)."

/* the sums' plots only: the one model with a heuristic bound (tools/plot_check.py --captions holds a caption's
   "dash-dotted" to a dash-dotted curve) */
#define KAHAN_NOTE                                                                                         \
  "Kahan's bound 2u + 4nu^2 is heuristic (the second-order constant is lowp's, not a theorem; used while "     \
  "n u <= 0.1): dash-dotted, and kept out of the checked counts."

/* what the tensor-core curves rest on (extrapolation.h) */
#define TC_NOTE                                                                                            \
  "Tensor-core (TC) curves are lowp's models, which reproduce captured hardware vectors of one instruction "  \
  "(k = 4 .. 32 products per GPU and format; H100 fp8 only with C = 0): every TC point beyond one "          \
  "instruction's k is model extrapolation (results.json key numbers name the captured k)."

/* what the block-scaled curves rest on */
#define BS_NOTE                                                                                             \
  "The block-scaled models are lowp's reading of the PTX instructions (tcgen05.mma kind::mxf8f6f4 and "       \
  "kind::mxf4nvf4; docs/formats.md), held to an independent simulator but not to captured B200 vectors: "    \
  "every point is model extrapolation."

/* two curves coincide when every size gave the same mean (the same
   numbers: e.g. fp8 b200 products are exact and its fp32 blocks round like
   fp32 blocked accumulation) */
#define SAME_NOTE                                                                                   \
  "A curve with the same numbers as an earlier one (found in the data: the same mean at every size) is "  \
  "drawn with open circles around its points and \"(= X)\" in the key."

/* is a curve drawn over an earlier one (some error > 0: drawn, with open circles)? */
static int drawn_same(const grid_t *g, const series_list_t *L, size_t nx) {
  size_t i, k;
  for (i = 0; i < L->n; i++)
    for (k = 0; g->used[i] && g->same[i] >= 0 && k < nx; k++)
      if (g->mean[i][k] > 0) return 1;
  return 0;
}

static int same_curve(const double *a, const double *b, size_t nx) {
  size_t k;
  for (k = 0; k < nx; k++)
    if (!(a[k] == b[k]) && !(isinf(a[k]) && isinf(b[k]))) return 0;
  return 1;
}

/*
 * checks.csv: one row per point of a drawn bound (< 1; the probabilistic one also where the stagnation cut
 * removes it, marked cut and not checked), each bound against every trial: op, input format, data, model,
 * size, trials, bound kind (deterministic | probabilistic), basis (theorem | heuristic), the bound, the max
 * error, the trials over the bound, the most stagnating steps in one trial (recursive orders; empty where
 * not scanned) and sqrt(size), cut (more than sqrt(size) stagnating steps: the probabilistic bound's
 * independence assumption fails), overflow (a trial overflowed: outside every bound's assumptions), checked
 * (1: counted in the verdicts). The summary's counts are these rows' sums (F), nothing else.
 */
/* one point into a count: points, points with a trial over, trials, trials over; 1 if it is the first over */
static int tally(size_t *pts, size_t *bad, size_t *trials, size_t *exc, size_t tr, size_t over) {
  (*pts)++;
  *trials += tr;
  *exc += over;
  return over && ++*bad == 1;
}

static void check_rows(const grid_t *g, const series_list_t *L, size_t i, const size_t *xv, size_t nx,
                       found_t *F, const char *what, const char *fmt, const char *data) {
  size_t k, cutbad = 0;
  int j;
  char op[64];
  if (sscanf(what, "%63s", op) < 1) return;
  for (k = 0; k < nx; k++)
    for (j = 0; j < 2; j++) {
      double b = j ? g->praw[i][k] : g->bound[i][k];
      size_t over = j ? g->pexc[i][k] : g->dexc[i][k], tr = g->ntr[k];
      int heur = !j && L->s[i].heuristic, ovf = isinf(g->max[i][k]) != 0;
      int cut = j && g->pcut[i] && xv[k] >= g->pcut[i], checked = !heur && !ovf && !cut;
      if (!bound_ok(b)) continue;
      if (F->checks) {
        fprintf(F->checks, "%s,%s,%s,%s,%zu,%zu,%s,%s,%.6e,%.6e,%zu,", op, fmt, data, L->s[i].label,
                xv[k], tr, j ? "probabilistic" : "deterministic", heur ? "heuristic" : "theorem", b, g->max[i][k],
                over);
        if (isnan(g->stag[i][k])) fprintf(F->checks, ",");
        else fprintf(F->checks, "%.0f,", g->stag[i][k]);
        fprintf(F->checks, "%.6g,%d,%d,%d\n", sqrt((double)xv[k]), cut, ovf, checked);
      }
      if (ovf) { /* an overflow: outside the rounding-error model every bound assumes */
        F->novf += !j;
      } else if (cut) { /* the independence assumption fails: not checked; the trials over it say why */
        tally(&F->npcut_pts, &cutbad, &F->npcut_trials, &F->npcut_exc, tr, over);
      } else if (heur) { /* drawn and labelled heuristic; not a theorem, so not among the checked points */
        tally(&F->nheur, &F->nheur_bad, &F->nheur_trials, &F->nheur_exc, tr, over);
      } else if (tally(j ? &F->nprob : &F->nbound, j ? &F->nprob_bad : &F->nbound_bad,
                       j ? &F->nprob_trials : &F->nbound_trials, j ? &F->nprob_exc : &F->nbound_exc, tr, over)) {
        snprintf(j ? F->prob_bad : F->bound_bad, sizeof F->bound_bad, "%s %s at %zu: %zu of %zu trials over the %s "
                 "%.3e (max error %.3e)", what, L->s[i].label, xv[k], over, tr, j ? "probabilistic bound" : "bound", b,
                 g->max[i][k]);
      }
    }
}

/* what every measured grid gets: the growth fits, the curves that coincide
   with an earlier one, and each drawn bound checked against every trial (check_rows) */
static void analyse(grid_t *g, const series_list_t *L, const size_t *xv, size_t nx, found_t *F,
                    const char *what, const char *fmt, const char *data) {
  size_t i, j;
  for (i = 0; i < L->n; i++) {
    g->same[i] = -1;
    if (!g->used[i]) continue;
    growth_of(&g->gr[i], g->mean[i], xv, g->ntr, nx);
    F->nsat += g->gr[i].sat != 0;
    F->novfc += g->gr[i].ovf != 0;
    F->nbrk += g->gr[i].nseg == 2;
    if (g->gr[i].sat) {
      char nm[600];
      size_t o = strlen(F->satnames);
      snprintf(nm, sizeof nm, "%s %s", what, L->s[i].label);
      if (!strstr(F->satnames, nm) && o + strlen(nm) + 3 < sizeof F->satnames)
        snprintf(F->satnames + o, sizeof F->satnames - o, "%s%s", o ? ", " : "", nm);
    }
    for (j = 0; j < i && g->same[i] < 0; j++)
      if (g->used[j] && same_curve(g->mean[i], g->mean[j], nx)) g->same[i] = (int)j;
    if (g->pcut[i]) {
      char nm[600];
      size_t o = strlen(F->pcutnames);
      F->npcut++;
      snprintf(nm, sizeof nm, "%s %s %s from %s = %zu", what, data, L->s[i].label, what[0] == 'g' ? "k" : "n",
               g->pcut[i]);
      if (o + strlen(nm) + 3 < sizeof F->pcutnames)
        snprintf(F->pcutnames + o, sizeof F->pcutnames - o, "%s%s", o ? ", " : "", nm);
    }
    check_rows(g, L, i, xv, nx, F, what, fmt, data);
  }
}

/* "16 (n <= 16384) .. 5 (n = 1048576)": the trials of the sizes */
static const char *trials_text(char *b, size_t len, const size_t *tr, const size_t *xv, size_t nx,
                               const char *xn) {
  size_t k, hi = 0;
  for (k = 0; k < nx; k++)
    if (tr[k] == tr[0]) hi = k;
  if (tr[0] == tr[nx - 1]) snprintf(b, len, "%zu at every %s", tr[0], xn);
  else snprintf(b, len, "%zu at %s <= %zu, down to %zu at %s = %zu", tr[0], xn, xv[hi], tr[nx - 1], xn, xv[nx - 1]);
  return b;
}

/* one row of a summary table: the errors at two sizes and the growth */
static void table_row(const lowp_run_t *r, const char *head, const char *label, const grid_t *g, size_t i,
                      size_t k4, size_t klast, const char *xn, cJSON *slopes, const char *key) {
  char gt[512];
  fprintf(r->summary, "| %s | %s | %.3e | %.3e | %s |\n", head, label, g->mean[i][k4], g->mean[i][klast],
          growth_text(gt, sizeof gt, &g->gr[i], xn));
  growth_json(slopes, key, &g->gr[i]);
}

static int run_sums(lowp_run_t *r, const plan_t *P, found_t *F) {
  grid_t g;
  size_t di, t, i;
  char bcsv[96];
  decl_t d = {K_SUM, &P->sums, &P->sumf, P->a, P->b, P->tmax, P->m, P->kmax, P->nv, P->tn, P->ns, NULL, NULL};
  size_t k4 = find_size(P->nv, P->ns, 4096);
  fprintf(r->summary, "| data | model | error at n=%zu | error at n=%zu | growth: slope +- 95%% CI |\n"
          "|---|---|---|---|---|\n", P->nv[k4], P->nv[P->ns - 1]);
  for (di = 0; di < P->nd; di++) {
    char csv[96], base[96], title[160], cap[2048], tt[160];
    int st;
    lowp_run_progress(r, "sums, %s", P->dnames[di]);
    for (t = 0; t < P->ta; t++)
      lowp_dist_fill(P->a[t], P->len[t], &P->dists[di], &P->sumf, r->seed, stream_of(1, 0, di, t, 0));
    st = measure(&g, &d);
    if (st) { fprintf(stderr, "lowp run error-growth: sums: %s\n", lowp_status_str(st)); return 2; }
    snprintf(csv, sizeof csv, "sum_%s.csv", P->dnames[di]);
    snprintf(bcsv, sizeof bcsv, "bounds_sum_%s_%s.csv", P->sumf.name, P->dnames[di]); /* the cut depends on the data */
    snprintf(base, sizeof base, "sum_%s", P->dnames[di]);
    if (write_grid(r, csv, &g, &P->sums, P->nv, P->ns, "n") || write_bound_csv(r, bcsv, &g, &P->sums, P->nv, P->ns))
      return 2;
    if (di == 0) record_bounds(F, "sum", &P->sums, &g, P->nv, P->ns);
    analyse(&g, &P->sums, P->nv, P->ns, F, "sum", P->sumf.name, P->dnames[di]);
    {
      int ir = find_series(&P->sums, 0, "recursive,acc=fp32");
      if (ir >= 0 && !strcmp(P->dnames[di], "uniform01")) F->rec01 = g.gr[ir];
      if (ir >= 0 && !strcmp(P->dnames[di], "uniform11")) F->rec11 = g.gr[ir];
      for (i = 0; i < P->sums.n; i++) {
        char key[640]; /* "sum " + three names of up to 255 bytes: never truncated */
        if (!g.used[i]) continue;
        snprintf(key, sizeof key, "sum %s %s %s", P->sumf.name, P->dnames[di], P->sums.s[i].label);
        table_row(r, P->dnames[di], P->sums.s[i].label, &g, i, k4, P->ns - 1, "n", F->slopes, key);
      }
    }
    snprintf(title, sizeof title, "Sums of n %s values, %s", P->sumf.name, pretty(P->dnames[di]));
    if (plot_one(r, base, csv, bcsv, title, "n (number of terms)", "backward error |s^ - s| / sum |x_i|",
                 &P->sums, &g, P->nv, P->ns))
      F->plot_failed = 1;
    snprintf(base, sizeof base, "sum_%s.png", P->dnames[di]);
    snprintf(cap, sizeof cap, "Sums: mean backward error over the trials (%s; column trials of %s) against n "
             "per summation model, each with the bound of its own method from the pipeline (dashed, in its "
             "colour; probabilistic bound dotted); a bound >= 1 is vacuous and not drawn. " BOUNDS_NOTE " " KAHAN_NOTE " " SAME_NOTE " Zero errors "
             "are not drawn (log axis).", trials_text(tt, sizeof tt, P->tn, P->nv, P->ns, "n"), csv);
    lowp_result_plot(F->plots, base, cap);
  }
  fprintf(r->summary, "\n");
  return 0;
}

/* dot products of one input format and distribution */
static int run_dots(lowp_run_t *r, const plan_t *P, found_t *F, size_t fi, size_t di) {
  grid_t g;
  const lowp_format_t *f = &P->fmts[fi];
  size_t k4 = find_size(P->nv, P->ns, 4096), i;
  char csv[96], base[96], title[200], bcsv[96], cap[2048], tt[160];
  decl_t d = {K_DOT, &P->dots, f, P->a, P->b, P->tmax, P->m, P->kmax, P->nv, P->tn, P->ns, NULL, NULL};
  int st = measure(&g, &d);
  if (st) { fprintf(stderr, "lowp run error-growth: dots: %s\n", lowp_status_str(st)); return 2; }
  snprintf(csv, sizeof csv, "dot_%s_%s.csv", f->name, P->dnames[di]);
  snprintf(base, sizeof base, "dot_%s_%s", f->name, P->dnames[di]);
  snprintf(bcsv, sizeof bcsv, "bounds_dot_%s_%s.csv", f->name, P->dnames[di]);
  if (write_grid(r, csv, &g, &P->dots, P->nv, P->ns, "n") || write_bound_csv(r, bcsv, &g, &P->dots, P->nv, P->ns))
    return 2;
  snprintf(title, sizeof title, "dot %s", f->name);
  if (di == 0) record_bounds(F, title, &P->dots, &g, P->nv, P->ns);
  analyse(&g, &P->dots, P->nv, P->ns, F, title, f->name, P->dnames[di]);
  snprintf(title, sizeof title, "Dot products of %s vectors, %s, fp32 result", f->name, pretty(P->dnames[di]));
  if (plot_one(r, base, csv, bcsv, title, "n (length of the dot product)", "backward error |s^ - s| / sum |a_i b_i|",
               &P->dots, &g, P->nv, P->ns))
    F->plot_failed = 1;
  snprintf(base, sizeof base, "dot_%s_%s.png", f->name, P->dnames[di]);
  snprintf(cap, sizeof cap, "Dot products: mean backward error over the trials (%s; column trials of %s) "
           "against n per accumulation model, each with the bound of its own method from the pipeline "
           "(tensor-core model, gamma of the order; dashed, in its colour; probabilistic bound dotted); a bound "
           ">= 1 is vacuous and not drawn. " BOUNDS_NOTE " " TC_NOTE " " SAME_NOTE " Zero errors are not drawn (log axis): a curve exact at every size is left out of the "
           "key and named in the plot.",
           trials_text(tt, sizeof tt, P->tn, P->nv, P->ns, "n"), csv);
  lowp_result_plot(F->plots, base, cap);
  for (i = 0; i < P->dots.n; i++) {
    char key[640], head[96]; /* as above */
    if (!g.used[i]) continue;
    snprintf(head, sizeof head, "%s | %s", f->name, P->dnames[di]);
    snprintf(key, sizeof key, "dot %s %s %s", f->name, P->dnames[di], P->dots.s[i].label);
    table_row(r, head, P->dots.s[i].label, &g, i, k4, P->ns - 1, "n", F->slopes, key);
  }
  /* the effects the literature reports, with lowp's numbers */
  if (!strcmp(f->name, "fp16")) {
    int it = find_series(&P->dots, 1, "h100");
    if (it >= 0 && !strcmp(P->dnames[di], "uniform01")) F->tc01 = g.gr[it];
  }
  if (!strcmp(f->name, "e4m3") && !strcmp(P->dnames[di], "uniform01")) {
    int i0 = find_series(&P->dots, 1, "h100"), i1 = find_series(&P->dots, 1, "h100,promote=128");
    if (i0 >= 0 && i1 >= 0) {
      F->fp8_nop = g.mean[i0][k4];
      F->fp8_p = g.mean[i1][k4];
      F->fp8_k = P->nv[k4];
    }
  }
  return 0;
}

/* GEMMs of the same format and data */
static int run_gemms(lowp_run_t *r, const plan_t *P, found_t *F, size_t fi, size_t di) {
  grid_t g;
  const lowp_format_t *f = &P->fmts[fi];
  size_t i;
  char csv[96], base[96], title[200], bcsv[96], cap[2048], tt[160];
  decl_t d = {K_GEMM, &P->dots, f, P->a, P->b, P->tmax, P->m, P->kmax, P->kv, P->tk, P->nk, NULL, NULL};
  int st;
  lowp_run_progress(r, "GEMMs, %s, %s", f->name, P->dnames[di]);
  st = measure(&g, &d);
  if (st) { fprintf(stderr, "lowp run error-growth: GEMMs: %s\n", lowp_status_str(st)); return 2; }
  snprintf(csv, sizeof csv, "gemm_%s_%s.csv", f->name, P->dnames[di]);
  snprintf(base, sizeof base, "gemm_%s_%s", f->name, P->dnames[di]);
  snprintf(bcsv, sizeof bcsv, "bounds_gemm_%s_%s.csv", f->name, P->dnames[di]);
  if (write_grid(r, csv, &g, &P->dots, P->kv, P->nk, "k") || write_bound_csv(r, bcsv, &g, &P->dots, P->kv, P->nk))
    return 2;
  snprintf(title, sizeof title, "gemm %s", f->name);
  if (di == 0) record_bounds(F, title, &P->dots, &g, P->kv, P->nk);
  analyse(&g, &P->dots, P->kv, P->nk, F, title, f->name, P->dnames[di]);
  snprintf(title, sizeof title, "GEMMs (%zu x k) (k x %zu) of %s, %s, fp32 result", P->m, P->m, f->name,
           pretty(P->dnames[di]));
  if (plot_one(r, base, csv, bcsv, title, "k (inner dimension)", "max componentwise backward error |C^-C|/(|A||B|)",
               &P->dots, &g, P->kv, P->nk))
    F->plot_failed = 1;
  snprintf(base, sizeof base, "gemm_%s_%s.png", f->name, P->dnames[di]);
  snprintf(cap, sizeof cap, "GEMMs: worst element's backward error against k, mean over the trials (%s; column "
           "trials of %s), per model, each with the bound of its own method (dashed; probabilistic dotted); a "
           "bound >= 1 is vacuous and not drawn. " BOUNDS_NOTE " " TC_NOTE " " SAME_NOTE " Zero errors are not drawn "
           "(log axis): a curve exact at every size is left out of the key and named in the plot.", trials_text(tt, sizeof tt, P->tk, P->kv, P->nk, "k"), csv);
  lowp_result_plot(F->plots, base, cap);
  for (i = 0; i < P->dots.n; i++) {
    cJSON *row;
    char key[640]; /* as above */
    if (!g.used[i]) continue;
    snprintf(key, sizeof key, "gemm %s %s %s", f->name, P->dnames[di], P->dots.s[i].label);
    growth_json(F->slopes, key, &g.gr[i]);
    row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "format", f->name);
    cJSON_AddStringToObject(row, "data", P->dnames[di]);
    cJSON_AddStringToObject(row, "model", P->dots.s[i].label);
    cJSON_AddNumberToObject(row, "k", (double)P->kv[P->nk - 1]);
    cJSON_AddNumberToObject(row, "mean_max_backward_error", g.mean[i][P->nk - 1]);
    cJSON_AddNumberToObject(row, "trials", (double)P->tk[P->nk - 1]);
    cJSON_AddItemToArray(F->tables, row);
  }
  return 0;
}

/* Quantize the m x kt rows of x by bf: elements and scales into q (row
   stride K) and s (row stride nb), the per-tensor scale into *ts, the
   dequantized values (exact in binary64) into y (m x kt). tq, tsc: room
   for m kt values. */
static int quant_rows(double *q, double *s, double *ts, double *y, double *tq, double *tsc, const float *x,
                      size_t m, size_t kt, size_t K, size_t nb, const lowp_bsformat_t *bf) {
  size_t nbt = lowp_bsformat_blocks(bf, kt), i;
  int st = lowp_bs_quantize(tq, tsc, ts, x, m, kt, bf);
  if (!st) st = lowp_bs_dequantize(y, tq, tsc, *ts, m, kt, bf);
  for (i = 0; i < m && !st; i++) {
    memcpy(q + i * K, tq + i * kt, kt * sizeof *q);
    memcpy(s + i * nb, tsc + i * nbt, nbt * sizeof *s);
  }
  return st;
}

/* The block-scaled GEMMs' data for format bi and distribution di: trial
   t's A (m x K_t) and B (K_t x m), K_t the largest k it is used at, drawn
   in fp32 (Philox streams of their own), quantized along k by the format's
   rule (lowp_bs_quantize: one scale per block of a row of A or a column of
   B, nvfp4's per-tensor scale from the whole m x K_t matrix), and replaced
   by their dequantized values (exact in binary64), which the reference and
   the fp32 accumulation take; the model takes the elements and scales. A_k
   is the first k columns of the quantized A (whole blocks for k a multiple
   of the block), B_k the first k rows of B. */
static int fill_bs(const lowp_run_t *r, plan_t *P, size_t bi, size_t di) {
  const lowp_bsformat_t *bf = &P->bsf[bi];
  size_t T = P->tbk[0], m = P->m, K = P->bkmax, t, i, j, k, nb = lowp_bsformat_blocks(bf, K);
  float *x = malloc(m * K * sizeof *x);
  double *y = malloc(m * K * sizeof *y), *d = malloc(m * K * sizeof *d), *tq = malloc(m * K * sizeof *tq),
         *tsc = malloc(m * K * sizeof *tsc);
  int st = x && y && d && tq && tsc ? LOWP_OK : LOWP_ENOMEM;
  P->bq.nb = nb;
  for (t = 0; t < T && !st; t++) {
    uint32_t s0 = (uint32_t)(2000000 + 10000 * bi + 1000 * di + 2 * t); /* bi < 8, di < 6, t < 256 */
    size_t kt = 0;
    for (k = 0; k < P->nbk; k++)
      if (t < P->tbk[k]) kt = P->bkv[k];
    st = lowp_dist_fill(d, m * kt, &P->dists[di], &LOWP_FMT_FP32, r->seed, s0);
    for (i = 0; i < m * kt && !st; i++) x[i] = (float)d[i];
    if (!st) st = quant_rows(P->bq.qa[t], P->bq.sa[t], &P->bq.ta[t], y, tq, tsc, x, m, kt, K, nb, bf);
    for (i = 0; i < m && !st; i++) memcpy(P->bq.xa[t] + i * K, y + i * kt, kt * sizeof *y);
    if (!st) st = lowp_dist_fill(d, m * kt, &P->dists[di], &LOWP_FMT_FP32, r->seed, s0 + 1);
    for (i = 0; i < m && !st; i++) /* B (kt x m): its columns are the rows quantized */
      for (j = 0; j < kt; j++) x[i * kt + j] = (float)d[j * m + i];
    if (!st) st = quant_rows(P->bq.qb[t], P->bq.sb[t], &P->bq.tb[t], y, tq, tsc, x, m, kt, K, nb, bf);
    for (i = 0; i < m && !st; i++)
      for (j = 0; j < kt; j++) P->bq.xb[t][j * m + i] = y[i * kt + j];
  }
  free(x), free(y), free(d), free(tq), free(tsc);
  return st;
}

/* the block-scaled rows of the summary, results.json and the answer: each
   curve at the largest k, its bound there, and the largest max error /
   bound over its sizes */
static void bs_rows(lowp_run_t *r, const plan_t *P, found_t *F, const grid_t *g, size_t bi, size_t di) {
  size_t i, k, kl = P->nbk - 1;
  for (i = 0; i < P->bsl.n; i++) {
    char gt[512], key[640], bt[32] = "vacuous";
    double worst = 0, b = g->bound[i][kl];
    cJSON *row;
    if (!g->used[i]) continue;
    for (k = 0; k < P->nbk; k++)
      if (bound_ok(g->bound[i][k]) && !P->bsl.s[i].heuristic && g->max[i][k] / g->bound[i][k] > worst)
        worst = g->max[i][k] / g->bound[i][k];
    if (worst > F->bs_worst_ratio) F->bs_worst_ratio = worst;
    growth_text(gt, sizeof gt, &g->gr[i], "k");
    if (bound_ok(b)) snprintf(bt, sizeof bt, "%.3e", b);
    fprintf(r->summary, "| %s | %s | %s | %.3e | %.3e | %s | %.3g | %s |\n", P->bsnames[bi], P->dnames[di],
            P->bsl.s[i].label, g->mean[i][kl], g->max[i][kl], bt, worst, gt);
    snprintf(key, sizeof key, "gemm %s %s %s", P->bsnames[bi], P->dnames[di], P->bsl.s[i].label);
    growth_json(F->slopes, key, &g->gr[i]);
    row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "format", P->bsnames[bi]);
    cJSON_AddStringToObject(row, "data", P->dnames[di]);
    cJSON_AddStringToObject(row, "model", P->bsl.s[i].label);
    cJSON_AddNumberToObject(row, "k", (double)P->bkv[kl]);
    cJSON_AddNumberToObject(row, "trials", (double)P->tbk[kl]);
    cJSON_AddNumberToObject(row, "mean_max_backward_error", g->mean[i][kl]);
    cJSON_AddNumberToObject(row, "max_backward_error", g->max[i][kl]);
    if (bound_ok(b)) cJSON_AddNumberToObject(row, "bound", b);
    else cJSON_AddStringToObject(row, "bound", "vacuous or none");
    cJSON_AddNumberToObject(row, "worst_max_over_bound", worst);
    if (g->gr[i].nseg) {
      cJSON_AddNumberToObject(row, "growth_slope", growth_last(&g->gr[i]));
      if (isfinite(growth_last_half(&g->gr[i]))) cJSON_AddNumberToObject(row, "growth_ci95_half", growth_last_half(&g->gr[i]));
    }
    cJSON_AddItemToArray(F->bsrows, row);
    if (!strcmp(P->dnames[di], "uniform01")) {
      size_t o = strlen(F->bstext);
      snprintf(F->bstext + o, sizeof F->bstext - o, "%s%s on %s: %.3g (max %.3g, bound %.3g, worst max/bound %.3g; "
               "growth %s)", o ? "; " : "", P->bsnames[bi], P->bsl.s[i].label, g->mean[i][kl], g->max[i][kl], b,
               worst, g->gr[i].nseg ? gt : "no fit");
    }
  }
}

/* block-scaled GEMMs of one format and distribution, on the block-scaled models and fp32 accumulation */
static int run_bs_gemms(lowp_run_t *r, plan_t *P, found_t *F, size_t bi, size_t di) {
  static grid_t g;
  const lowp_bsformat_t *bf = &P->bsf[bi];
  char csv[160], base[160], title[400], bcsv[160], cap[3072], tt[160], bs[200];
  decl_t d = {K_GEMM, &P->bsl, &LOWP_FMT_FP32, P->bq.xa, P->bq.xb, P->tmax, P->m, P->bkmax, P->bkv, P->tbk, P->nbk,
              bf, &P->bq};
  int st;
  lowp_run_progress(r, "block-scaled GEMMs, %s, %s", P->bsnames[bi], P->dnames[di]);
  st = fill_bs(r, P, bi, di);
  if (!st) st = measure(&g, &d);
  if (st) { fprintf(stderr, "lowp run error-growth: block-scaled GEMMs: %s\n", lowp_status_str(st)); return 2; }
  snprintf(csv, sizeof csv, "gemm_%s_%s.csv", P->bsnames[bi], P->dnames[di]);
  snprintf(base, sizeof base, "gemm_%s_%s", P->bsnames[bi], P->dnames[di]);
  snprintf(bcsv, sizeof bcsv, "bounds_gemm_%s_%s.csv", P->bsnames[bi], P->dnames[di]);
  if (write_grid(r, csv, &g, &P->bsl, P->bkv, P->nbk, "k") || write_bound_csv(r, bcsv, &g, &P->bsl, P->bkv, P->nbk))
    return 2;
  snprintf(title, sizeof title, "gemm %s", P->bsnames[bi]);
  if (di == 0) record_bounds(F, title, &P->bsl, &g, P->bkv, P->nbk);
  analyse(&g, &P->bsl, P->bkv, P->nbk, F, title, P->bsnames[bi], P->dnames[di]);
  bs_rows(r, P, F, &g, bi, di);
  lowp_bsformat_spec(bs, sizeof bs, bf);
  snprintf(title, sizeof title, "Block-scaled GEMMs (%zu x k) (k x %zu) of %s, %s, fp32 result", P->m, P->m,
           P->bsnames[bi], pretty(P->dnames[di]));
  if (plot_one(r, base, csv, bcsv, title, "k (inner dimension)", "max componentwise backward error |C^-C|/(|A||B|)",
               &P->bsl, &g, P->bkv, P->nbk))
    F->plot_failed = 1;
  snprintf(base, sizeof base, "gemm_%s_%s.png", P->bsnames[bi], P->dnames[di]);
  snprintf(cap, sizeof cap, "Block-scaled GEMMs: fp32 data quantized to %s (%s) by its rule (blocks along k), worst "
           "element's backward error against k, measured against the exact product of the dequantized inputs, "
           "mean over the trials (%s; column trials of %s), per model: the block-scaled MMA models (TC b200 kind=..., "
           "lib/model/bsmma.h, on the elements and scales; a per-tensor scale in the epilogue) and fp32 "
           "accumulation of the dequantized products, each with the bound of its own method (dashed; the models' "
           "is the worst case lowp tol gives for them; probabilistic dotted); a bound >= 1 is vacuous and not "
           "drawn. " BOUNDS_NOTE " " BS_NOTE "%s Zero errors are not drawn (log axis): a curve exact at every size "
           "is left out of the key and named in the plot.", P->bsnames[bi], bs,
           trials_text(tt, sizeof tt, P->tbk, P->bkv, P->nbk, "k"), csv, drawn_same(&g, &P->bsl, P->nbk) ? " " SAME_NOTE : "");
  lowp_result_plot(F->plots, base, cap);
  return 0;
}

/* the claims, checked (exit 1 if one is refuted) */
typedef struct {
  char what[400];
  int ok; /* 1 confirmed, 0 inconclusive, -1 refuted */
  double v;
} verdict_t;

/* a growth claim, on the fit that reaches the largest size: confirmed when
   its whole 95% interval lies inside [lo, hi], refuted when the whole
   interval lies outside, inconclusive when it straddles an end (too few
   sizes or too much noise to tell); NaN value when there is no fit */
static void claim_slope(verdict_t *vd, const char *what, const growth_t *gr, double lo, double hi) {
  double s = growth_last(gr), h = growth_last_half(gr);
  snprintf(vd->what, sizeof vd->what, "%s", what);
  vd->v = isfinite(h) ? s : NAN;
  vd->ok = !isfinite(h) ? -1 : s - h >= lo && s + h <= hi ? 1 : s + h < lo || s - h > hi ? -1 : 0;
}

static void answer(lowp_run_t *r, const found_t *F) {
  char line[8192], a[512], b[512], c[512], ext[512];
  if (!lowp_exp_tc_extrapolated(ext, sizeof ext, "h100", &LOWP_FMT_E4M3, F->fp8_k, NULL, NULL))
    snprintf(ext, sizeof ext, "inside the captured range of the h100 model");
  snprintf(line, sizeof line,
           "Growth (weighted least-squares slope of log mean error on log n, 95%% t-interval from the residuals): "
           "fp32 recursive sums %s on [0,1] and %s on [-1,1]; the truncating h100 model (fp16 data on [0,1]) %s; "
           "fp8 on h100 at k=%zu: backward error %.3g without promotion, %.3g with promotion every 128 (%s). "
           "Saturation (mean error >= 1/2, not fitted) in %zu curves (%s); overflow (inf) in %zu; a change of "
           "slope (fitted on each side) in %zu. Every drawn bound against every trial (checks.csv, one row per "
           "point; these counts are its columns' sums): deterministic bounds (theorems) exceeded by %zu of %zu "
           "trials at %zu points (%zu points with a trial over; %zu more points, where a trial overflowed, are "
           "outside every bound's assumptions); probabilistic bounds (P >= 0.99 per sum) exceeded by %zu of %zu "
           "trial sums at %zu points, cut where their independence assumption fails by stagnation "
           "(|t_k| < u |s_k| in more than sqrt(n) steps of a trial) in %zu curves (%zu points, where %zu of their "
           "%zu trials exceed the uncut bound: %s); Kahan's bound is heuristic (lowp's 4ku^2 second-order "
           "constant): drawn, labelled so and not counted (%zu of its %zu trials over it at %zu points).",
           growth_text(a, sizeof a, &F->rec01, "n"), growth_text(b, sizeof b, &F->rec11, "n"),
           growth_text(c, sizeof c, &F->tc01, "n"), F->fp8_k, F->fp8_nop, F->fp8_p, ext, F->nsat,
           F->satnames[0] ? F->satnames : "none", F->novfc, F->nbrk, F->nbound_exc, F->nbound_trials, F->nbound,
           F->nbound_bad, F->novf, F->nprob_exc, F->nprob_trials, F->nprob, F->npcut, F->npcut_pts, F->npcut_exc,
           F->npcut_trials, F->pcutnames[0] ? F->pcutnames : "none", F->nheur_exc, F->nheur_trials, F->nheur);
  if (F->bstext[0]) {
    size_t o = strlen(line);
    snprintf(line + o, sizeof line - o, " Block-scaled GEMMs (fp32 data on [0,1] quantized by each format's rule; "
             "error against the exact product of the dequantized inputs) at the largest k, mean error: %s. The "
             "largest max error / bound over every block-scaled point: %.3g (%s; the models' bound is lowp tol's "
             "worst case).", F->bstext, F->bs_worst_ratio, F->bs_worst_ratio <= 1 ? "every point within its bound"
             : "a bound is exceeded");
  }
  cJSON_AddStringToObject(r->results, "answer", line);
  fprintf(r->summary, "\n**Answer.** %s\n", line);
  printf("%s\n", line);
}

static int judge(lowp_run_t *r, const plan_t *P, const found_t *F, cJSON *verdicts, cJSON *keynums) {
  verdict_t vd[6];
  size_t nvd = 0, i;
  int bad = 0;
  char what0[200];
  snprintf(what0, sizeof what0, "fp32 recursive sums of %s data on [0,1] grow like sqrt(n): the slope's 95%% "
           "interval inside [0.3, 0.7]", P->sumf.name);
  claim_slope(&vd[nvd++], what0, &F->rec01, 0.3, 0.7);
  claim_slope(&vd[nvd++], "the same on [-1,1] stays nearly flat: the slope's 95% interval below 0.25", &F->rec11,
              -INFINITY, 0.25);
  claim_slope(&vd[nvd++], "truncating tensor cores (h100 model, fp16 data on [0,1]) drift linearly: the slope's "
              "95% interval inside [0.75, 1.25]", &F->tc01, 0.75, 1.25);
  snprintf(vd[nvd].what, sizeof vd[nvd].what, "fp8 e4m3 dots on h100 at k=4096, data [0,1]: promotion every 128 "
           "cuts the error > 10x (on the model: model extrapolation beyond the captured k = 32, C = 0)");
  vd[nvd].v = F->fp8_p > 0 ? F->fp8_nop / F->fp8_p : (F->fp8_nop > 0 ? INFINITY : NAN);
  vd[nvd].ok = vd[nvd].v > 10 ? 1 : -1; nvd++;
  snprintf(vd[nvd].what, sizeof vd[nvd].what, "every drawn deterministic bound (< 1, a theorem) is >= the error of "
           "every trial of its own curve, at every size without overflow: %zu trials at %zu points (value: the "
           "trials over it; checks.csv)", F->nbound_trials, F->nbound);
  vd[nvd].v = F->nbound ? (double)F->nbound_exc : NAN;
  vd[nvd].ok = F->nbound_exc == 0 ? 1 : -1; nvd++;
  /* Higham & Mary's bound holds with probability >= 0.99 per sum: at most 1% of the trial sums may exceed it */
  snprintf(vd[nvd].what, sizeof vd[nvd].what, "every drawn probabilistic bound (P >= 0.99 per sum; cut where its "
           "independence assumption fails: more than sqrt(n) stagnating steps) is exceeded by at most 1%% of the %zu "
           "trial sums it is checked against at %zu points (value: the trial sums exceeding it; checks.csv)", F->nprob_trials,
           F->nprob);
  vd[nvd].v = F->nprob_trials ? (double)F->nprob_exc : NAN;
  vd[nvd].ok = (double)F->nprob_exc <= 0.01 * (double)F->nprob_trials ? 1 : -1; nvd++;
  fprintf(r->summary, "\n### Verdicts\n\n");
  for (i = 0; i < nvd; i++) {
    cJSON *o = cJSON_CreateObject();
    int measured = !isnan(vd[i].v);
    cJSON_AddStringToObject(o, "claim", vd[i].what);
    cJSON_AddNumberToObject(o, "value", measured ? vd[i].v : -1);
    cJSON_AddStringToObject(o, "verdict", !measured       ? "not measured"
                                          : vd[i].ok > 0  ? "confirmed"
                                          : vd[i].ok == 0 ? "inconclusive"
                                                          : "refuted");
    cJSON_AddItemToArray(verdicts, o);
    fprintf(r->summary, "- %s: %s (%.3g)\n", vd[i].what,
            !measured       ? "not measured (series or format not run, or no fit with an interval)"
            : vd[i].ok > 0  ? "**confirmed**"
            : vd[i].ok == 0 ? "inconclusive (the 95% interval straddles an end of the range)"
                            : "**refuted**",
            vd[i].v);
    if (measured && vd[i].ok < 0) bad++;
  }
  if (F->nbound_bad) fprintf(r->summary, "\nFirst bound violated: %s.\n", F->bound_bad);
  if (F->nprob_bad) fprintf(r->summary, "\nFirst probabilistic bound exceeded: %s.\n", F->prob_bad);
  {
    char ext[512], l1[700], l2[700];
    size_t K = 0;
    int ex = lowp_exp_tc_extrapolated(ext, sizeof ext, "h100", &LOWP_FMT_E4M3, F->fp8_k, &K, NULL);
    cJSON_AddNumberToObject(keynums, "fp8_h100_k", (double)F->fp8_k);
    snprintf(l1, sizeof l1, "fp8 h100 no promotion backward error%s%s%s", ex ? " (" : "", ex ? ext : "", ex ? ")" : "");
    snprintf(l2, sizeof l2, "fp8 h100 promote128 backward error%s", ex ? " (model extrapolation, as above)" : "");
    lowp_result_key(r->results, "fp8_h100_no_promotion_backward_error", l1, isnan(F->fp8_nop) ? -1 : F->fp8_nop);
    lowp_result_key(r->results, "fp8_h100_promote128_backward_error", l2, isnan(F->fp8_p) ? -1 : F->fp8_p);
    cJSON_AddNumberToObject(keynums, "fp8_h100_captured_k", (double)K);
  }
  /* each one a sum over checks.csv's rows (tests/cli/error_growth.sh recomputes them) */
  cJSON_AddNumberToObject(keynums, "bound_points_checked", (double)F->nbound);
  cJSON_AddNumberToObject(keynums, "bound_points_violated", (double)F->nbound_bad);
  cJSON_AddNumberToObject(keynums, "bound_trials_checked", (double)F->nbound_trials);
  cJSON_AddNumberToObject(keynums, "bound_trials_exceeding", (double)F->nbound_exc);
  cJSON_AddNumberToObject(keynums, "bound_points_overflowed", (double)F->novf);
  cJSON_AddNumberToObject(keynums, "prob_bound_points_checked", (double)F->nprob);
  cJSON_AddNumberToObject(keynums, "prob_bound_trial_sums_checked", (double)F->nprob_trials);
  cJSON_AddNumberToObject(keynums, "prob_bound_trial_sums_exceeding", (double)F->nprob_exc);
  cJSON_AddNumberToObject(keynums, "prob_bound_points_cut_by_stagnation", (double)F->npcut_pts);
  cJSON_AddNumberToObject(keynums, "prob_bound_cut_trials", (double)F->npcut_trials);
  cJSON_AddNumberToObject(keynums, "prob_bound_cut_trials_exceeding_uncut", (double)F->npcut_exc);
  cJSON_AddNumberToObject(keynums, "heuristic_bound_points", (double)F->nheur);
  cJSON_AddNumberToObject(keynums, "heuristic_bound_trials", (double)F->nheur_trials);
  cJSON_AddNumberToObject(keynums, "heuristic_bound_trials_exceeding", (double)F->nheur_exc);
  if (P->nbf) cJSON_AddNumberToObject(keynums, "block_scaled_worst_max_over_bound", F->bs_worst_ratio);
  answer(r, F);
  return bad;
}

/* the dots' data of input format fi and distribution di */
static void fill_dots(const lowp_run_t *r, plan_t *P, size_t fi, size_t di) {
  size_t t;
  for (t = 0; t < P->ta; t++) {
    lowp_dist_fill(P->a[t], P->len[t], &P->dists[di], &P->fmts[fi], r->seed, stream_of(0, fi, di, t, 0));
    lowp_dist_fill(P->b[t], P->len[t], &P->dists[di], &P->fmts[fi], r->seed, stream_of(0, fi, di, t, 1));
  }
}

static int run(lowp_run_t *r) {
  static plan_t P;
  static found_t F;
  cJSON *verdicts, *keynums;
  size_t fi, di;
  int bad = 0, st;
  char tt[160], tk[160];
  /* declare */
  memset(&F, 0, sizeof F);
  F.fp8_nop = F.fp8_p = NAN;
  F.plots = cJSON_AddArrayToObject(r->results, "plots");
  F.tables = cJSON_AddArrayToObject(r->results, "tables");
  verdicts = cJSON_AddArrayToObject(r->results, "verdicts");
  F.slopes = cJSON_AddObjectToObject(r->results, "slopes");
  F.bsrows = cJSON_AddArrayToObject(r->results, "block_scaled");
  keynums = cJSON_AddObjectToObject(r->results, "key_numbers");
  if (declare(r, &P)) { plan_free(&P); fprintf(stderr, "lowp run error-growth: out of memory\n"); return 2; }
  F.bounds = cJSON_AddObjectToObject(r->results, "bounds");
  if (write_bounds(r, P.nv, P.ns)) { plan_free(&P); fprintf(stderr, "lowp run error-growth: cannot write bounds.csv\n"); return 2; }
  F.checks = fopen(lowp_run_path(r, "checks.csv"), "w");
  if (!F.checks) { plan_free(&P); fprintf(stderr, "lowp run error-growth: cannot write checks.csv\n"); return 2; }
  fprintf(F.checks, "# generated by lowp run error-growth, do not edit\n"
          "op,format,data,model,size,trials,bound_kind,basis,bound,max_error,trials_over,stagnating_steps_max,"
          "sqrt_size,cut_by_stagnation,overflow,checked\n");
  fprintf(r->summary, "Backward error |s^ - s| / sum |a_i b_i| (GEMMs: max over elements of "
          "|C^ - C| / (|A||B|)), mean over the trials of each size (independent seeded inputs; sums and dots: "
          "%s; GEMMs: %s; column trials of every CSV). Sizes %zu .. %zu (x%zu); GEMMs %zux%zu with "
          "k = %zu .. %zu.\n\n"
          "Growth: least-squares line of log(mean error) on log(n), each size weighted by its trials (the log "
          "of a mean of T trials has about 1/T the variance of one), the slope with its 95%% confidence interval "
          "from the weighted residuals (Student's t, sizes - 2 degrees of freedom; lib/measure/fit.c), fitted "
          "only where one power law holds: sizes whose mean error reaches %g (saturation: the result has lost "
          "most of its value, e.g. a stagnating fp16 sum) or overflows and beyond are left out, zero errors are "
          "left out, and a change of slope found by a two-segment F test (>= 3 sizes a side, 1%% with "
          "Bonferroni over the splits) is fitted on each side; fewer than 3 sizes: no fit.\n\n",
          trials_text(tt, sizeof tt, P.tn, P.nv, P.ns, "n"), trials_text(tk, sizeof tk, P.tk, P.kv, P.nk, "k"),
          P.nmin, P.nmax, P.nstep, P.m, P.m, P.nmin, P.kmax, SATURATED);
  /* measure and render: sums, then dots and GEMMs per input format and distribution */
  st = run_sums(r, &P, &F);
  if (!st)
    fprintf(r->summary, "| input | data | model | error at n=%zu | error at n=%zu | growth: slope +- 95%% CI |\n"
            "|---|---|---|---|---|---|\n", P.nv[find_size(P.nv, P.ns, 4096)], P.nv[P.ns - 1]);
  for (fi = 0; fi < P.nf && !st; fi++)
    for (di = 0; di < P.nd && !st; di++) {
      lowp_run_progress(r, "dots, %s, %s", P.fmts[fi].name, P.dnames[di]);
      fill_dots(r, &P, fi, di);
      st = run_dots(r, &P, &F, fi, di);
      if (!st) st = run_gemms(r, &P, &F, fi, di);
    }
  if (!st && P.nbf)
    fprintf(r->summary, "\nBlock-scaled GEMMs (%zux%zu, k = %zu .. %zu, x%s; trials %s): fp32 data quantized by each "
            "format's rule, error against the exact product of the dequantized inputs, at k = %zu; worst max/bound: "
            "the largest max error over the trials / the bound over every k.\n\n"
            "| input | data | model | mean error | max error | bound | worst max/bound | growth: slope +- 95%% CI |\n"
            "|---|---|---|---|---|---|---|---|\n", P.m, P.m, P.bkv[0], P.bkmax, lowp_run_param(r, "bs_kstep"),
            trials_text(tk, sizeof tk, P.tbk, P.bkv, P.nbk, "k"), P.bkv[P.nbk - 1]);
  for (fi = 0; fi < P.nbf && !st; fi++)
    for (di = 0; di < P.nd && !st; di++) st = run_bs_gemms(r, &P, &F, fi, di);
  if (fclose(F.checks) && !st) {
    fprintf(stderr, "lowp run error-growth: cannot write checks.csv\n");
    st = 2;
  }
  F.checks = NULL;
  /* judge */
  if (!st) bad = judge(r, &P, &F, verdicts, keynums);
  plan_free(&P);
  if (st) return st;
  fprintf(r->summary, "\nFiles: bounds.csv, bounds_OP_FORMAT_DATA.csv (each model's own bound as drawn: the "
          "probabilistic one cut where the data stagnate), sum_*.csv/png/svg, "
          "dot_*.csv/png/svg, gemm_*.csv/png/svg; results.json \"slopes\": every curve's fits (GEMMs too); "
          "checks.csv: every drawn bound against every trial, one row per point (op, format, data, model, size, "
          "trials, bound_kind deterministic|probabilistic, basis theorem|heuristic, bound, max_error, trials_over: "
          "the trials whose error exceeds the bound, stagnating_steps_max: the most steps |t_k| < u |s_k| in one "
          "trial (recursive orders; empty where not scanned), sqrt_size, cut_by_stagnation: 1 where that count "
          "exceeds sqrt_size (the probabilistic bound's independence assumption fails; not drawn, not checked), "
          "overflow: 1 where a trial overflowed, checked: 1 where the row counts in the verdicts). Every count in "
          "the verdicts and the answer is a sum over its rows: e.g. the deterministic check is the sum of "
          "trials_over over rows with bound_kind = deterministic and checked = 1.\n");
  lowp_run_progress(r, "done\n");
  if (F.plot_failed) {
    fprintf(stderr, "lowp run error-growth: gnuplot failed or is missing; nothing was published\n");
    return 2;
  }
  return bad ? 1 : 0;
}

const lowp_experiment_t lowp_exp_error_growth = {
    .name = "error-growth",
    .question = "How does the error of sums, dot products and GEMMs grow with n for each format and "
                "accumulation model, against the deterministic and probabilistic bounds?",
    .method = "Seeded inputs (uniform [0,1], uniform [-1,1], normal) rounded to each format; sums and dots "
              "of the first n elements (n = 16 .. 2^20, x4) and GEMMs (k = 16 .. 4096) on each model "
              "(lib/model: recursive/FMA, pairwise, blocked, Kahan in fp32 or fp16; tensor-core presets, "
              "fp8 with and without promotion every 128); block-scaled GEMMs (k = {bs_kmin} .. {bs_kmax}, "
              "x{bs_kstep}) of fp32 data quantized to {bs_formats} on the block-scaled MMA models (B200 "
              "kind=mxf8f6f4 and kind=mxf4nvf4) and fp32 accumulation of the dequantized products, against "
              "the exact product of the dequantized inputs; backward error against lib/exact, mean over "
              "up to {trials_max} trials at small n, down to {trials} at the largest (column trials); each curve with the bound of "
              "its own method (lowp_check_bound; the block-scaled models' from lowp tol) and, for recursive orders, Higham-Mary's probabilistic "
              "bound; growth slopes with 95% t-intervals, fitted only where one power law holds "
              "(lib/measure/fit.c: saturation and changes of slope detected).",
    .expected = "sqrt(n) growth on [0,1] and nearly flat error on [-1,1] for round-to-nearest "
                "accumulation; linear drift of truncating tensor cores on same-sign data; fp8 on h100 "
                "at k = 4096 over 10x worse without promotion.",
    .params = params,
    .run = run,
    .check = check,
};
