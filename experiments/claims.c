/* lowp_exp_claims -- every numeric claim of the five documents, measured, with a verdict */

/*
 * Question: which numeric statements of the documents hold, which hold only
 *   with a qualification, which only redo their own arithmetic, and which
 *   are wrong?
 * Method: the claims are data (experiments/claims.json: id, the claim in
 *   lowp's words, document and section, the document's words, and the name
 *   of the lowp computation that checks it with its arguments). This file
 *   dispatches on that name; each check computes the measured value from the
 *   format descriptors, lowp's rounding (lowp_round_f64/f32, the
 *   accumulation model's addition), exact references (lib/measure/ref.h),
 *   a registry kernel measured by the pipeline (dot_acc), the grad-scaler
 *   model (lib/amp) or the tensor-core presets (lib/model), and derives the
 *   verdict from it.
 *   Verdicts, in seven categories (cats[] below): "holds", "holds with a
 *   qualification: ...", "arithmetic re-checked: ..." (only the document's
 *   own arithmetic on its own figures was redone: nothing measured),
 *   "wrong" (refuted by a computation here, or by the cited source of the
 *   library the document describes), "inconsistent within the document:
 *   ..." (its own figures disagree; nothing refuted), "ambiguous: ..." (true
 *   under one reading only), "not checkable here: ..." (a GPU measurement).
 *   The same claim gets the same category in every document: a claim's
 *   "same_as" (the id of the same statement in another document) and
 *   identical claim texts are checked after the run (a mismatch fails it). Exhaustive where cheap: all 2^32 fp32 inputs
 *   of document 004's bf16 formula one by one against lowp's rna and rne
 *   conversions (truncation by equivalence classes of the low 16 bits, see
 *   bf16_classes), all 2^23 fp32 significands for the reciprocal, all 65536
 *   bf16 and fp16 patterns for widening and the IEEE formula. Document
 *   004's numpy function runs as written (Debian's numpy, parameter python),
 *   under numpy 1.x's value-based promotion and under NEP 50's rules (numpy
 *   >= 2's default; numpy 1.24-1.26 switch with np._set_promotion_state).
 * Run: lowp run claims [--file=experiments/claims.json]
 * Expected / acceptance: every claim gets a measured value and a verdict;
 *   the exercise-2 premise, document 001's "below 6.10e-5 becomes 0 in fp16",
 *   document 004's numpy bf16 function and document 002's format bits are
 *   wrong; the "+0x8000" formula is exactly rna.
 */

#define _POSIX_C_SOURCE 200809L

#include "catalog.h"
#include "results.h"
#include "exp_check.h"

#include "amp/scaler.h"
#include "check/pipeline.h"
#include "check/subject.h"
#include "cpu/elementwise.h"
#include "exact/exact.h"
#include "format/format.h"
#include "io/spawn.h"
#include "measure/ref.h"
#include "model/accum.h"
#include "model/roofline.h"
#include "model/tc.h"
#include "rng/rng.h"
#include "status.h"

#include <gmp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LOWP_SOURCE_DIR
#define LOWP_SOURCE_DIR "."
#endif

static const lowp_param_t params[] = {
    {"file", "<source>/experiments/claims.json", NULL, "the claims data file"},
    {"python", "/usr/bin/python3", NULL, "the Python with numpy that runs document 004's numpy code (Debian's python3-numpy)"},
    {NULL, NULL, NULL, NULL}};

#define ML 1200 /* measured text */
#define VL 600  /* verdict text */

/* ------------------------------------------------------ private helpers */

static double num(const cJSON *a, const char *k, double def) {
  const cJSON *v = cJSON_GetObjectItem(a, k);
  return cJSON_IsNumber(v) ? v->valuedouble : def;
}
static const char *str(const cJSON *a, const char *k, const char *def) {
  const cJSON *v = cJSON_GetObjectItem(a, k);
  return cJSON_IsString(v) ? v->valuestring : def;
}
static const lowp_format_t *fmt(const cJSON *a, const char *k) {
  const char *n = str(a, k, NULL);
  return n ? lowp_format_by_name(n) : NULL;
}

static int is_ovf(double y) { return isinf(y) || isnan(y); }

static double rnd(double x, const lowp_format_t *f) {
  double y;
  lowp_round_f64(&y, x, f, NULL, LOWP_RND_NE);
  return y;
}
/* a + b and a b, each rounded once to f (the accumulation model's addition;
   the exact product rounded once, lib/measure/ref.h) */
static double add(double a, double b, const lowp_format_t *f) {
  double y;
  (void)lowp_accum_add(&y, a, b, f, LOWP_RND_NE);
  return y;
}
static double mul(double a, double b, const lowp_format_t *f) {
  double y = NAN, rel;
  (void)lowp_ref_round_product(&y, &rel, a, b, f);
  return y;
}

/* exp(x) correctly rounded to f (the exp=cr model of the softmax kernels) */
static double exp_to(double x, const lowp_format_t *f) { return lowp_kernel_exp_cr(x, f); }

/* the overflow threshold T = xmax + ulp/2 and whether T itself overflows */
static double ovf_t(const lowp_format_t *f, int *incl) {
  double xM = lowp_format_xmax(f), t = xM + lowp_ulp(xM, f) / 2;
  if (incl) *incl = is_ovf(rnd(t, f));
  return t;
}

/* the smallest value of f whose exp overflows f */
static double exp_overflow_input(const lowp_format_t *f) {
  double x = NAN;
  (void)lowp_ref_log_ratio(&x, ovf_t(f, NULL), 1, f, LOWP_RND_UP); /* ln T rounded up to f */
  return x;
}

/* v rounded to d significant digits agrees with c within one unit of c's last digit */
static int approx(double c, double v, int digits) {
  double unit;
  if (digits <= 0) return c == v;
  unit = pow(10.0, floor(log10(fabs(c))) - digits + 1);
  return fabs(c - v) <= unit * (1 + 1e-12);
}

static double decimal_digits(const lowp_format_t *f) { return f->precision * log10(2.0); }

static const char *class_of(double y, const lowp_format_t *f) {
  return is_ovf(y) ? "overflow" : lowp_class_name(lowp_classify(y, f));
}

/* ---------------------------------------------------------------- checks */

typedef int (*check_fn)(const cJSON *a, char *m, char *v);

static int c_needs_gpu(const cJSON *a, char *m, char *v) {
  const char *note = str(a, "note", NULL);
  snprintf(m, ML, "%s was not measured: it needs a GPU (%s)%s%s", str(a, "what", "this"),
           str(a, "experiment", "a GPU experiment"), note ? "; " : "", note ? note : "");
  snprintf(v, VL, "not checkable here: needs a GPU");
  return 0;
}

static int c_format_bits(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format"), *o = fmt(a, "other");
  int ok = 1, n;
  if (!f) return -1;
  n = snprintf(m, ML, "%s: %d exponent bits, %d fraction bits, %d in total", f->name, f->ebits,
               f->precision - 1, lowp_format_width(f));
  if (cJSON_GetObjectItem(a, "exp")) ok &= (int)num(a, "exp", 0) == f->ebits;
  if (cJSON_GetObjectItem(a, "mant")) ok &= (int)num(a, "mant", 0) == f->precision - 1;
  if (cJSON_GetObjectItem(a, "total")) ok &= (int)num(a, "total", 0) == lowp_format_width(f);
  if (o) {
    snprintf(m + n, ML - (size_t)n, "; %s: %d and %d", o->name, o->ebits, o->precision - 1);
    if (cJSON_GetObjectItem(a, "other_exp")) ok &= (int)num(a, "other_exp", 0) == o->ebits;
    if (cJSON_GetObjectItem(a, "other_mant")) ok &= (int)num(a, "other_mant", 0) == o->precision - 1;
  }
  snprintf(v, VL, ok ? "holds" : "wrong");
  return 0;
}

static int c_format_value(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format"), *o = fmt(a, "same_as");
  const char *what = str(a, "what", "xmax");
  double x, c = num(a, "claimed", NAN), xo = 0;
  int ok, n, qual = 0;
  if (!f) return -1;
  if (!strcmp(what, "xmax")) x = lowp_format_xmax(f);
  else if (!strcmp(what, "xmin")) x = lowp_format_xmin(f);
  else if (!strcmp(what, "xmins")) x = lowp_format_xmins(f);
  else return -1;
  ok = approx(c, x, (int)num(a, "digits", 0));
  n = snprintf(m, ML, "%s %s = %.9g (%a)", f->name, !strcmp(what, "xmax") ? "largest finite" :
               !strcmp(what, "xmin") ? "smallest normal" : "smallest subnormal", x, x);
  if (cJSON_GetObjectItem(a, "claimed_exp")) {
    ok &= ldexp(1, (int)num(a, "claimed_exp", 0)) == x;
    n += snprintf(m + n, ML - (size_t)n, "; 2^%d = %.9g", (int)num(a, "claimed_exp", 0), ldexp(1, (int)num(a, "claimed_exp", 0)));
  }
  if (o) {
    xo = !strcmp(what, "xmax") ? lowp_format_xmax(o) : lowp_format_xmin(o);
    n += snprintf(m + n, ML - (size_t)n, "; %s: %.9g (%s's is %.3g%% %s)", o->name, xo, f->name,
                  100 * fabs(x - xo) / xo, x < xo ? "smaller" : "larger");
    qual = x != xo;
  }
  if (num(a, "note_rounding", 0) != 0) {
    n += snprintf(m + n, ML - (size_t)n, "; values above xmins/2 = %.6g (not included) round up to it, so "
                  "values down to %.6g survive", lowp_format_xmins(f) / 2, lowp_format_xmins(f) / 2);
    qual = 1;
  }
  if (!ok) snprintf(v, VL, "wrong");
  else if (qual) snprintf(v, VL, "holds with a qualification: %s", o ? "close, not the same (see measured)" :
                          "the values lost are those at or below half of it");
  else snprintf(v, VL, "holds");
  return 0;
}

static int c_format_range_pow2(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format"), *o = fmt(a, "same_as");
  int lo = (int)num(a, "lo_exp", 0), hi = (int)num(a, "hi_exp", 0), ok, n;
  double la = num(a, "lo_approx", 0), ha = num(a, "hi_approx", 0);
  if (!f) return -1;
  ok = lo == f->emin && hi == f->emax;
  n = snprintf(m, ML, "%s: normal binades 2^%d .. 2^%d; smallest normal %.6g, largest finite %.6g "
               "(just under 2^%d); subnormals down to %.6g (2^%d)", f->name, f->emin, f->emax,
               lowp_format_xmin(f), lowp_format_xmax(f), f->emax + 1, lowp_format_xmins(f),
               f->emin - f->precision + 1);
  if (ha > 0) {
    n += snprintf(m + n, ML - (size_t)n, "; 2^%d = %g, so the upper %g describes the largest value, not 2^%d",
                  hi, ldexp(1, hi), ha, hi);
    ok &= approx(la, lowp_format_xmin(f), 1) && approx(ha, lowp_format_xmax(f), 1);
  }
  if (o) {
    n += snprintf(m + n, ML - (size_t)n, "; %s: 2^%d .. 2^%d, subnormals to 2^%d", o->name, o->emin, o->emax,
                  o->emin - o->precision + 1);
    ok &= o->emin == f->emin && o->emax == f->emax;
  }
  /* a claim of the exponent range alone (no approximate values to check, no other format) is exact when the
     exponents are emin and emax: the values beyond them (subnormals, up to 2^(emax+1)) are in the measured text */
  if (ok && !(ha > 0) && !o) snprintf(v, VL, "holds");
  else
    snprintf(v, VL, ok ? "holds with a qualification: these are the exponents of the normal binades; the "
             "values reach from the subnormal minimum to almost 2^(emax+1)" : "wrong");
  return 0;
}

static int c_format_row(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format");
  double d, lo = num(a, "digits_lo", 0), hi = num(a, "digits_hi", 0), xM;
  int ok, dok;
  if (!f) return -1;
  d = decimal_digits(f);
  xM = lowp_format_xmax(f);
  ok = (int)num(a, "exp", -1) == f->ebits && (int)num(a, "mant", -1) == f->precision - 1 &&
       (int)num(a, "total", -1) == lowp_format_width(f) && approx(num(a, "max", 0), xM, (int)num(a, "max_digits", 0));
  dok = hi < 1 ? d < 1 : (floor(d + 0.5) >= lo && floor(d + 0.5) <= hi);
  snprintf(m, ML, "%s: 1 sign + %d exponent + %d fraction = %d bits; largest finite %.9g; p log10 2 = %.3g "
           "decimal digits (p = %d)", f->name, f->ebits, f->precision - 1, lowp_format_width(f), xM, d, f->precision);
  snprintf(v, VL, ok && dok ? "holds" : "wrong");
  return 0;
}

static int c_decimal_digits(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format");
  double d, lo = num(a, "lo", 0), hi = num(a, "hi", 0);
  if (!f) return -1;
  d = decimal_digits(f);
  snprintf(m, ML, "%s: p = %d bits = %.3g decimal digits (u = 2^-%d = %.3g)", f->name, f->precision, d,
           f->precision, lowp_format_u(f));
  snprintf(v, VL, d >= lo - 0.5 && d <= hi + 0.5 ? "holds" : "wrong");
  return 0;
}

static int c_rel_precision(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format"), *g = fmt(a, "also");
  double c = num(a, "claimed", 0), c2 = num(a, "also_claimed", 0);
  int st = 0, n; /* 0 holds, 1 eps (qualified), 2 wrong */
  const lowp_format_t *fl[2];
  double cl[2];
  int i;
  if (!f) return -1;
  fl[0] = f; cl[0] = c; fl[1] = g; cl[1] = c2;
  n = 0;
  for (i = 0; i < 2 && fl[i]; i++) {
    double u = lowp_format_u(fl[i]), e = lowp_format_eps(fl[i]);
    n += snprintf(m + n, ML - (size_t)n, "%s%s: unit roundoff u = 2^-%d = %.4g%% (the largest relative error of one "
                  "rounding in the normal range), spacing at 1 eps = 2^-%d = %.4g%%", i ? "; " : "", fl[i]->name,
                  fl[i]->precision, 100 * u, fl[i]->precision - 1, 100 * e);
    if (fabs(cl[i] - u) <= 0.15 * u) continue;
    if (fabs(cl[i] - e) <= 0.15 * e) { if (st < 1) st = 1; }
    else st = 2;
  }
  snprintf(v, VL, st == 0 ? "holds" : st == 1 ? "holds with a qualification: the figure is the spacing eps; a "
           "rounding errs by at most half of it, u (and by more for subnormals)" : "wrong");
  return 0;
}

static int c_width_ratio(const cJSON *a, char *m, char *v) {
  const lowp_format_t *x = fmt(a, "a"), *y = fmt(a, "b"), *x2 = fmt(a, "a2");
  double r, r2 = 0;
  int ok;
  if (!x || !y) return -1;
  r = (double)lowp_format_width(x) / lowp_format_width(y);
  ok = fabs(r - num(a, "claimed", 0)) < 1e-12;
  if (x2) {
    r2 = (double)lowp_format_width(x2) / lowp_format_width(y);
    ok &= fabs(r2 - num(a, "claimed2", 0)) < 1e-12;
    snprintf(m, ML, "%s: %d/%d bits = %.0f%%; %s: %d/%d bits = %.0f%%", x->name, lowp_format_width(x),
             lowp_format_width(y), 100 * r, x2->name, lowp_format_width(x2), lowp_format_width(y), 100 * r2);
  } else
    snprintf(m, ML, "%s: %d/%d bits = %.1f%%", x->name, lowp_format_width(x), lowp_format_width(y), 100 * r);
  snprintf(v, VL, ok ? "holds" : "wrong");
  return 0;
}

/* Bytes per parameter: weights + gradients + Adam's two moments; AMP keeps
   fp32 master weights beside the low-precision copy (Micikevicius et al.).
   Optional "low2"/"claimed2": a second format's claimed ratio (fp8's 25%). */
static int c_amp_memory(const cJSON *a, char *m, char *v) {
  const lowp_format_t *lo = fmt(a, "low"), *hi = fmt(a, "high"), *lo2 = fmt(a, "low2");
  double bl, bh, full, amp;
  int n, ok;
  if (!lo || !hi) return -1;
  bl = lowp_format_width(lo) / 8.0;
  bh = lowp_format_width(hi) / 8.0;
  full = bh + bh + 2 * bh;          /* fp32 weights, grads, Adam m and v */
  amp = bl + bl + bh + 2 * bh;      /* fp16 weights and grads, fp32 master, Adam */
  n = snprintf(m, ML, "per stored value %g vs %g bytes = %.0f%%; per parameter with Adam: %s training %g bytes, "
               "mixed precision %g bytes (%s copy + %s master weights) = %.0f%% saved; the weights alone: %g + %g "
               "bytes = %.0f%% of %s's; activations %.0f%% saved", bl, bh, 100 * bl / bh, hi->name, full, amp,
               lo->name, hi->name, 100 * (1 - amp / full), bl, bh, 100 * (bl + bh) / bh, hi->name, 100 * (1 - bl / bh));
  ok = fabs(bl / bh - num(a, "claimed", 0)) < 1e-12;
  if (lo2) {
    double b2 = lowp_format_width(lo2) / 8.0;
    snprintf(m + n, ML - (size_t)n, "; %s: %g byte per value = %.0f%%", lo2->name, b2, 100 * b2 / bh);
    ok &= fabs(b2 / bh - num(a, "claimed2", 0)) < 1e-12;
  }
  snprintf(v, VL, ok ? "holds with a qualification: for tensors stored in the low format (activations, and the "
           "weights of a pure low-precision copy); mixed precision keeps fp32 master weights and optimizer state, "
           "so its weight memory grows and the total saving is below 50%%" : "wrong");
  return 0;
}

static int c_memory_table(const cJSON *a, char *m, char *v) {
  double p = num(a, "params", 0), act = num(a, "act_fp32_gb", 0) * 1e9, w32, t32, t16, t16m;
  int ok;
  w32 = p * lowp_format_width(&LOWP_FMT_FP32) / 8;
  t32 = w32 + act + w32;
  t16 = w32 / 2 + act / 2 + w32 / 2;
  t16m = t16 + w32; /* plus the fp32 master weights AMP keeps */
  ok = approx(num(a, "claimed_total_fp32_gb", 0), t32 / 1e9, 2) && approx(num(a, "claimed_total_fp16_gb", 0), t16 / 1e9, 2);
  snprintf(m, ML, "%.3g parameters x 4 bytes = %.0f MB; totals %.3g GB (fp32) and %.3g GB (fp16) = %.1f%% saved; "
           "with the fp32 master weights mixed precision keeps: %.3g GB = %.1f%% saved", p, w32 / 1e6,
           t32 / 1e9, t16 / 1e9, 100 * (1 - t16 / t32), t16m / 1e9, 100 * (1 - t16m / t32));
  snprintf(v, VL, ok ? "holds with a qualification: the arithmetic is right, but the fp16 column leaves out "
           "the fp32 master weights (and optimizer state) that AMP keeps" : "wrong");
  return 0;
}

static int c_ratios(const cJSON *a, char *m, char *v) {
  const cJSON *p;
  int n = 0, ok = 1;
  cJSON_ArrayForEach(p, cJSON_GetObjectItem(a, "pairs")) {
    double x = cJSON_GetArrayItem(p, 0)->valuedouble, y = cJSON_GetArrayItem(p, 1)->valuedouble;
    double c = cJSON_GetArrayItem(p, 2)->valuedouble;
    ok &= fabs(x / y - c) <= 0.01 * c;
    n += snprintf(m + n, ML - (size_t)n, "%s%g / %g = %.4g (claimed %g)", n ? "; " : "", x, y, x / y, c);
  }
  snprintf(m + n, ML - (size_t)n, "; %s not measured (needs a GPU)", str(a, "measured_on_gpu", "the figures"));
  snprintf(v, VL, ok ? "arithmetic re-checked: the ratios follow from the document's own figures; the figures were not "
           "measured here" : "inconsistent within the document: its ratios do not follow from its own figures (see measured)");
  return 0;
}

static int c_range_vs_value(const cJSON *a, char *m, char *v) {
  double lo = num(a, "lo", 0), hi = num(a, "hi", 0), x = num(a, "value_num", 0) / num(a, "value_den", 1);
  int in = x >= lo && x <= hi;
  snprintf(m, ML, "%s gives %g / %g = %.3gx, %s the claimed %g-%gx", str(a, "value_what", "the value"),
           num(a, "value_num", 0), num(a, "value_den", 1), x, in ? "inside" : "outside", lo, hi);
  /* both figures are the document's: a mismatch is an inconsistency, not a refutation (nothing was run) */
  if (in) snprintf(v, VL, "holds");
  else snprintf(v, VL, "inconsistent within the document: %s (%.3gx) lies outside its own %g-%gx; neither "
                "figure was measured here", str(a, "value_what", "its own figure"), x, lo, hi);
  return 0;
}

static int c_differences(const cJSON *a, char *m, char *v) {
  const cJSON *p;
  int n = 0, ok = 1;
  cJSON_ArrayForEach(p, cJSON_GetObjectItem(a, "rows")) {
    double x = cJSON_GetArrayItem(p, 0)->valuedouble, y = cJSON_GetArrayItem(p, 1)->valuedouble;
    double c = cJSON_GetArrayItem(p, 2)->valuedouble;
    ok &= fabs((y - x) - c) < 1e-9;
    n += snprintf(m + n, ML - (size_t)n, "%s%g - %g = %+.4g", n ? "; " : "", y, x, y - x);
  }
  snprintf(v, VL, ok ? "arithmetic re-checked: the differences follow from the document's own figures; the accuracies "
           "were not measured here" : "inconsistent within the document: its differences do not follow from its own "
           "figures (see measured)");
  return 0;
}

/* "<0.1% accuracy loss" read two ways: as a change in percentage points of
   the rows that are percentages, and as a relative change of every row */
static int c_relative_changes(const cJSON *a, char *m, char *v) {
  const cJSON *p;
  int n = 0, over = 0, rows = 0, pct_rows = 0, pct_over = 0;
  double c = num(a, "claimed", 0);
  cJSON_ArrayForEach(p, cJSON_GetObjectItem(a, "rows")) {
    double x = cJSON_GetArrayItem(p, 0)->valuedouble, y = cJSON_GetArrayItem(p, 1)->valuedouble;
    const cJSON *unit = cJSON_GetArrayItem(p, 3);
    double r = fabs(y - x) / x;
    int pct = cJSON_IsString(unit) && !strcmp(unit->valuestring, "%");
    rows++;
    over += r >= c;
    n += snprintf(m + n, ML - (size_t)n, "%s%s %g -> %g: %.3g%% relative", n ? "; " : "",
                  cJSON_GetArrayItem(p, 2)->valuestring, x, y, 100 * r);
    if (pct) {
      pct_rows++;
      pct_over += fabs(y - x) >= 100 * c;
      n += snprintf(m + n, ML - (size_t)n, " (%.3g percentage points)", fabs(y - x));
    }
  }
  snprintf(m + n, ML - (size_t)n, "; read as a relative change, %d of the document's own %d rows are at or above %g%%; "
           "read as percentage points, %d of the %d rows that are percentages are", over, rows, 100 * c, pct_over, pct_rows);
  if (over == 0 && pct_over == 0) snprintf(v, VL, "holds");
  else if ((over == 0) != (pct_over == 0) || pct_rows < rows)
    snprintf(v, VL, "ambiguous: '<%g%%' of what is not said; as percentage points it fits %d of %d percentage rows "
             "(the others are F1 and perplexity, not percentages), as a relative change %d of %d rows exceed it",
             100 * c, pct_rows - pct_over, pct_rows, over, rows);
  else snprintf(v, VL, "wrong");
  return 0;
}

/* peak fp16 / fp32 tensor-core ratios from document 004's own table */
static int c_peak_ratios(const cJSON *a, char *m, char *v, const cJSON *data) {
  const cJSON *g, *tab = cJSON_GetObjectItem(data, "peak_tflops_doc004");
  double lo = num(a, "claimed_lo", 0), hi = num(a, "claimed_hi", 0), mem = num(a, "memory", 0);
  int n = 0, near = 0;
  n += snprintf(m, ML, "peak fp16 tensor-core / fp32 TFLOPS in document 004's table:");
  cJSON_ArrayForEach(g, tab) {
    double r;
    if (!cJSON_IsObject(g)) continue; /* "_source" */
    r = num(g, "fp16", 0) / num(g, "fp32", 1);
    near += fabs(r - lo) <= 0.05 * lo;
    n += snprintf(m + n, ML - (size_t)n, " %s %g/%g = %.3gx;", g->string, num(g, "fp16", 0), num(g, "fp32", 1), r);
  }
  if (mem > 0)
    n += snprintf(m + n, ML - (size_t)n, " memory: fp32/fp16 widths %d/%d = %gx;", lowp_format_width(&LOWP_FMT_FP32),
                  lowp_format_width(&LOWP_FMT_FP16), (double)lowp_format_width(&LOWP_FMT_FP32) / lowp_format_width(&LOWP_FMT_FP16));
  snprintf(m + n, ML - (size_t)n, " realised speedups need a GPU");
  if (lo != hi) snprintf(v, VL, "not checkable here: needs a GPU (the peak ratios bound it from above)");
  else snprintf(v, VL, near ? "holds with a qualification: 8x is V100's peak ratio only; A100 and H100 peak "
                "ratios are about twice that, and realised speedups are lower" : "wrong");
  return 0;
}

/* The document's peak TFLOPS against NVIDIA's datasheets (claims.json
   "peak_tflops_datasheet", with its source). Block sizes of the CPU models
   say nothing about throughput, and lowp measures none without a GPU: the
   verdict is "not checkable here", with the datasheet agreement as context. */
static int c_tc_table(const cJSON *a, char *m, char *v, const cJSON *data) {
  static const char *const col[] = {"fp32", "fp16", "tf32", "fp8"};
  const cJSON *row, *ds = cJSON_GetObjectItem(data, "peak_tflops_datasheet");
  int n = 0, k, agree = 0, cmp = 0;
  double worst = 0;
  cJSON_ArrayForEach(row, cJSON_GetObjectItem(a, "rows")) {
    const char *gpu = cJSON_GetArrayItem(row, 0)->valuestring;
    const cJSON *g = cJSON_GetObjectItem(ds, gpu);
    if (!g) return -1;
    n += snprintf(m + n, ML - (size_t)n, "%s%s:", n ? "; " : "", gpu);
    for (k = 0; k < 4; k++) {
      double d = cJSON_GetArrayItem(row, k + 1)->valuedouble, s = num(g, col[k], 0), rel;
      if (d <= 0 && s <= 0) continue;
      n += snprintf(m + n, ML - (size_t)n, " %s %g (datasheet %g)", col[k], d, s);
      if (d <= 0 || s <= 0) continue;
      rel = fabs(d - s) / s;
      cmp++;
      agree += rel <= 0.01;
      if (rel > worst) worst = rel;
    }
  }
  snprintf(m + n, ML - (size_t)n, "; %d of %d figures within 1%% of NVIDIA's dense datasheet figures (largest "
           "difference %.2g%%); no throughput was measured", agree, cmp, 100 * worst);
  snprintf(v, VL, "not checkable here: peak TFLOPS need a GPU benchmark (the CPU models' block sizes are no "
           "evidence for them); %s", agree == cmp ? "the figures agree with NVIDIA's dense datasheet figures"
           : "some figures differ from NVIDIA's datasheets (see measured)");
  return 0;
}

static int c_pow2_value(const cJSON *a, char *m, char *v) {
  int e = (int)num(a, "exp", 0);
  double c = num(a, "claimed", 0), x = ldexp(1, e), rel = num(a, "rel", 0);
  snprintf(m, ML, "2^%d = %.17g (claimed %g, %.3g%% off); as a loss scale it is exact in fp32", e, x, c, 100 * fabs(x - c) / c);
  snprintf(v, VL, fabs(x - c) <= rel * c ? "holds" : "wrong");
  return 0;
}

static int c_product(const cJSON *a, char *m, char *v) {
  double x = num(a, "a", 0), y = num(a, "b", 0), c = num(a, "claimed", 0);
  snprintf(m, ML, "%g x %g = %.17g", x, y, x * y);
  snprintf(v, VL, fabs(x * y - c) <= 1e-12 * fabs(c) ? "holds" : "wrong");
  return 0;
}

static int c_range_compare(const cJSON *a, char *m, char *v) {
  const lowp_format_t *x = fmt(a, "a"), *y = fmt(a, "b");
  if (!x || !y) return -1;
  snprintf(m, ML, "%s spans %.1f decades (%.3g .. %.3g), %s %.1f (%.3g .. %.3g)", x->name, lowp_format_range_decades(x),
           lowp_format_xmins(x), lowp_format_xmax(x), y->name, lowp_format_range_decades(y), lowp_format_xmins(y),
           lowp_format_xmax(y));
  snprintf(v, VL, lowp_format_range_decades(x) > lowp_format_range_decades(y) ? "holds" : "wrong");
  return 0;
}

static int c_missing_bits(const cJSON *a, char *m, char *v) {
  const lowp_format_t *x = fmt(a, "a"), *y = fmt(a, "b");
  int d;
  if (!x || !y) return -1;
  d = x->precision - y->precision;
  snprintf(m, ML, "%s p = %d, %s p = %d: %d bits fewer; fp16: %d fewer", x->name, x->precision, y->name,
           y->precision, d, x->precision - LOWP_FMT_FP16.precision);
  snprintf(v, VL, d == (int)num(a, "claimed", 0) ? "holds with a qualification: 16 for bf16; fp16 keeps 3 more (13 missing)" : "wrong");
  return 0;
}

static int c_spacing_at(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format");
  double x = num(a, "x", 1), up, dn;
  int e = (int)num(a, "claimed_exp", 0);
  if (!f) return -1;
  up = lowp_ulp(x, f);
  dn = x - (lowp_round_f64(&dn, nextafter(x, 0), f, NULL, LOWP_RND_DN), dn);
  snprintf(m, ML, "%s spacing above %g: %a = %.4g; below it: %a = %.4g; a change survives rounding only if "
           "larger than half the spacing", f->name, x, up, up, dn, dn);
  snprintf(v, VL, up == ldexp(1, e) ? "holds with a qualification: that is the spacing above 1; below 1 it is "
           "half as large" : "wrong");
  return 0;
}

/* smallest power of two w at which fl(w + d) == w in f, searched upward */
static double lost_from(double d, const lowp_format_t *f) {
  int k;
  for (k = f->emin - f->precision; k <= f->emax; k++)
    if (add(ldexp(1, k), d, f) == ldexp(1, k) && add(ldexp(1, k + 1), d, f) == ldexp(1, k + 1)) return ldexp(1, k);
  return INFINITY;
}

static int c_stagnation(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format");
  double w0 = num(a, "w", 1), d = num(a, "update", 1e-7), w, ex, dq, lf;
  long steps = (long)num(a, "steps", 1000), k;
  int lost, claimed_lost = (int)num(a, "claimed_lost", 1);
  char prog[128];
  if (!f) return -1;
  w = rnd(w0, f);
  for (k = 0; k < steps; k++) w = add(w, d, f);
  ex = w0 + steps * d;
  dq = rnd(d, f);
  lost = w == rnd(w0, f);
  lf = lost_from(d, f);
  if (lost) snprintf(prog, sizeof prog, "no progress at all");
  else snprintf(prog, sizeof prog, "progress off by %+.3g%%", 100 * ((w - w0) - steps * d) / (steps * d));
  snprintf(m, ML, "%s: w = %g plus %g, %ld times: %.9g (exact %.9g, %s); the update alone rounds to %.4g (%s); "
           "updates of %g are lost for every |w| >= %a = %.4g", f->name, w0, d, steps, w, ex, prog, dq,
           class_of(dq, f), d, lf, lf);
  if (claimed_lost)
    snprintf(v, VL, lost ? "holds with a qualification: it is w + update that rounds back to w (for |w| >= the "
             "bound in measured); the update itself is not zero in the format" : "wrong");
  else
    snprintf(v, VL, !lost ? "holds with a qualification: near 1 the updates are rounded to the spacing (see the "
             "error), and from the bound in measured on they are lost in this format too" : "wrong");
  return 0;
}

static int c_zero_threshold(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format"), *o = fmt(a, "compare");
  double c = num(a, "claimed_below", 0), z, x, ex;
  int n;
  if (!f) return -1;
  z = lowp_format_xmins(f) / 2;
  x = lowp_format_xmin(f);
  ex = pow(10.0, floor(log10(x)) - 1); /* a round decimal in the subnormal range */
  n = snprintf(m, ML, "%s (round to nearest even): 0 only for |g| <= %a = %.4g; (%.4g, %.4g) become subnormals "
               "(fewer bits; e.g. %s(%g) = %.6g)", f->name, z, z, z, x, f->name, ex, rnd(ex, f));
  if (o)
    n += snprintf(m + n, ML - (size_t)n, "; %s: 0 only for |g| <= %.4g", o->name, lowp_format_xmins(o) / 2);
  snprintf(m + n, ML - (size_t)n, "; with flush-to-zero everything below %.4g is lost", x - z);
  if (c > 0) snprintf(v, VL, fabs(c - z) <= 0.02 * z ? "holds" : "wrong");
  else if (o) /* a claim about needing no loss scale (000-bf16-no-scaler): compared with the other format */
    snprintf(v, VL, "holds with a qualification: %s keeps gradients nonzero down to %.3g (%s: %.3g), so no loss scale "
             "is needed to stop them vanishing; below its smallest normal %.3g they keep fewer bits, which a scale "
             "would restore", f->name, z, o->name, lowp_format_xmins(o) / 2, x);
  else snprintf(v, VL, "holds with a qualification: only below half the smallest subnormal; between that and the "
                "smallest normal, values survive with reduced precision");
  return 0;
}

static int c_overflow_threshold(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format");
  double t, c = num(a, "claimed", 0);
  int incl;
  if (!f) return -1;
  t = ovf_t(f, &incl);
  snprintf(m, ML, "%s: values up to %.9g round to the largest finite %.9g; from %.9g on (%s) they become %s",
           f->name, nextafter(t, 0), lowp_format_xmax(f), t, incl ? "inclusive: the tie rounds to even, upward" :
           "exclusive", f->inf == LOWP_INF_IEEE ? "inf" : "NaN");
  snprintf(v, VL, c == lowp_format_xmax(f) ? "holds with a qualification: overflow starts at xmax + ulp/2, not just above xmax" : "wrong");
  return 0;
}

static int c_zero_values(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format");
  const cJSON *x;
  int n = 0, zeros = 0, cnt = 0, claimed_zero = cJSON_GetObjectItem(a, "claimed_zero") != NULL;
  if (!f) return -1;
  cJSON_ArrayForEach(x, cJSON_GetObjectItem(a, "values")) {
    double y = rnd(x->valuedouble, f);
    uint64_t bits = 0;
    lowp_encode(&bits, y, f);
    cnt++;
    zeros += y == 0;
    char sig[80] = "";
    /* IEEE 754's underflow: tiny and inexact; a subnormal keeps floor(log2(y / xmins)) + 1 significant bits */
    if (y != 0 && fabs(y) < lowp_format_xmin(f))
      snprintf(sig, sizeof sig, ": it underflows (tiny, inexact) and keeps %d significant bits",
               (int)floor(log2(fabs(y) / lowp_format_xmins(f))) + 1);
    n += snprintf(m + n, ML - (size_t)n, "%s%s(%g) = %.6g (0x%04llx, %s%s)", n ? "; " : "", f->name, x->valuedouble, y,
                  (unsigned long long)bits, class_of(y, f), sig);
  }
  {
    lowp_policy_t pol;
    int fz = 0;
    memset(&pol, 0, sizeof pol);
    pol.ftz = 1;
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(a, "values")) {
      double y;
      lowp_round_f64(&y, x->valuedouble, f, &pol, LOWP_RND_NE);
      fz += y == 0;
    }
    snprintf(m + n, ML - (size_t)n, "; with flush-to-zero %d of these %d become 0", fz, cnt);
  }
  if (claimed_zero) snprintf(v, VL, zeros == cnt ? "holds" : "wrong");
  else snprintf(v, VL, zeros == cnt ? "holds" : zeros ? "holds with a qualification: only some become zero (see "
                "measured); the others become subnormals" : "wrong");
  return 0;
}

/* fp32 -> bf16 over all 2^32 inputs by classes: the results of truncation,
   of x + 0x8000, and of RNE depend on the upper 16 bits and only on whether
   the lower 16 bits are 0, in [1, 0x7fff], 0x8000 or in [0x8001, 0xffff]
   (whether a NaN stays NaN depends on the same split). One representative
   per class, weighted by its size, gives exact counts over all inputs. */
static const uint32_t rep_low[4] = {0x0000, 0x0001, 0x8000, 0x8001};
static const uint32_t rep_w[4] = {1, 0x7fff, 1, 0x7fff};

static uint16_t bf16_rne(uint32_t x) {
  float f;
  double y;
  uint64_t b = 0;
  memcpy(&f, &x, 4);
  lowp_round_f32(&y, f, &LOWP_FMT_BF16, NULL, LOWP_RND_NE);
  lowp_encode(&b, y, &LOWP_FMT_BF16);
  return (uint16_t)b;
}
static int bf16_is_nan(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f); }
static int same_bf16(uint16_t a, uint16_t b) { return a == b || (bf16_is_nan(a) && bf16_is_nan(b)); }

static void bf16_classes(uint16_t (*code)(uint32_t), double *wrong, double *tie_wrong, double *nan_wrong,
                         uint32_t *ex_tie, uint32_t *ex_nan) {
  uint32_t hi, k;
  *wrong = *tie_wrong = *nan_wrong = 0;
  *ex_tie = *ex_nan = 0;
  for (hi = 0; hi < 65536; hi++)
    for (k = 0; k < 4; k++) {
      uint32_t x = hi << 16 | rep_low[k];
      uint16_t want = bf16_rne(x), got = code(x);
      if (same_bf16(want, got)) continue;
      *wrong += rep_w[k];
      if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffff)) {
        *nan_wrong += rep_w[k];
        if (!*ex_nan || (x == 0x7fff8000u)) *ex_nan = x;
      } else if (k == 2) {
        *tie_wrong += rep_w[k];
        if (!*ex_tie || x == 0x3f808000u) *ex_tie = x;
      }
    }
}
static uint16_t code_trunc(uint32_t x) { return (uint16_t)(x >> 16); }

/* The run, for progress and for the checks that write a transcript. */
static const lowp_run_t *cur_run;

/* Every one of the 2^32 fp32 patterns, in blocks: the document's integer
   formula against lowp's own conversions (lowp_encode_array_f32) with
   ties away from zero (rna) and ties to even (rne). */
/* Under --quick: every upper half (all 2^16 bf16 values' neighbourhoods)
   with these 64 lower halves (ties, their neighbours, the ends, and a fixed
   spread), 2^22 patterns instead of 2^32. */
static uint32_t quick_low(uint32_t j) {
  static const uint16_t fixed[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff};
  return j < 6 ? fixed[j] : (uint32_t)((j * 0x9e37u + 0x1234u) & 0xffffu);
}

static int c_bf16_plus_8000(const cJSON *a, char *m, char *v) {
  enum { BLK = 1 << 20 };
  float *x = malloc(BLK * sizeof *x);
  uint16_t *na = malloc(BLK * sizeof *na), *ne = malloc(BLK * sizeof *ne);
  uint64_t base, rna_diff = 0, rne_diff = 0, nan_in = 0, nan_num = 0, nan_neg0 = 0, nan_inf = 0;
  uint64_t total = cur_run && cur_run->quick ? UINT64_C(1) << 22 : UINT64_C(1) << 32;
  uint32_t ex_tie = 0, ex_nan = 0;
  int st = 0, quick = total != (UINT64_C(1) << 32);
  (void)a;
  if (!x || !na || !ne) { free(x); free(na); free(ne); return -1; }
  for (base = 0; base < total && !st; base += BLK) {
    uint32_t i;
    if (cur_run && (base & ((UINT64_C(1) << 28) - 1)) == 0)
      lowp_run_progress(cur_run, "bf16 +0x8000 code: %llu of 16 x 2^28 fp32 patterns", (unsigned long long)(base >> 28));
    for (i = 0; i < BLK; i++) {
      uint32_t k = (uint32_t)base + i;
      uint32_t u = quick ? ((k >> 6) << 16) | quick_low(k & 63u) : k;
      memcpy(&x[i], &u, 4);
    }
    st = lowp_encode_array_f32(na, x, BLK, &LOWP_FMT_BF16, NULL, LOWP_RND_NA) ||
         lowp_encode_array_f32(ne, x, BLK, &LOWP_FMT_BF16, NULL, LOWP_RND_NE);
    for (i = 0; i < BLK && !st; i++) {
      uint32_t u;
      uint16_t code;
      memcpy(&u, &x[i], 4);
      code = (uint16_t)(((u + 0x8000u) & 0xffff0000u) >> 16);
      if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) { /* a NaN input */
        nan_in++;
        if (!bf16_is_nan(code)) {
          nan_num++;
          nan_neg0 += code == 0x8000 || code == 0x0000;
          nan_inf += (code & 0x7fff) == 0x7f80;
          if (!ex_nan || u == 0x7fff8000u) ex_nan = u;
        }
        continue;
      }
      rna_diff += code != na[i];
      if (code != ne[i]) {
        rne_diff++;
        if (!ex_tie || u == 0x3f808000u) ex_tie = u;
      }
    }
  }
  free(x); free(na); free(ne);
  if (st) return -1;
  {
    float fx;
    memcpy(&fx, &ex_tie, 4);
    snprintf(m, ML, "%s: the integer formula equals lowp's round-to-nearest-ties-away "
             "(rna) conversion on %llu of the %llu non-NaN inputs (%llu differ); it differs from round-to-nearest-even "
             "on %llu of them, all ties (e.g. 0x%08x = %.9g: formula 0x%04x, rne 0x%04x); of the %llu NaN inputs, "
             "%llu become numbers (%llu zeros, %llu infinities, e.g. 0x%08x -> 0x%04x)",
             quick ? "2^22 fp32 patterns (--quick: every upper half with 64 lower halves, ties included)"
                   : "all 2^32 fp32 patterns, one by one",
             (unsigned long long)(total - nan_in - rna_diff), (unsigned long long)(total - nan_in),
             (unsigned long long)rna_diff, (unsigned long long)rne_diff, (unsigned)ex_tie, (double)fx,
             (unsigned)(((ex_tie + 0x8000u) & 0xffff0000u) >> 16), (unsigned)bf16_rne(ex_tie),
             (unsigned long long)nan_in, (unsigned long long)nan_num, (unsigned long long)nan_neg0,
             (unsigned long long)nan_inf, (unsigned)ex_nan, (unsigned)(((ex_nan + 0x8000u) & 0xffff0000u) >> 16));
  }
  if (rna_diff == 0)
    snprintf(v, VL, "holds with a qualification: it is round to nearest with ties away from zero (rna) on every "
             "non-NaN input, not the ties-to-even of frameworks and hardware (%llu ties differ), and it turns "
             "%llu NaNs into numbers", (unsigned long long)rne_diff, (unsigned long long)nan_num);
  else snprintf(v, VL, "wrong");
  return 0;
}

/* The document's numpy function, run as written (the claim's quote, which
   tests/cli/claims_quotes.sh proves verbatim) by Debian's numpy, on args
   "input"; the output is compared with lowp's rna bf16 values of the input.
   The script, its output and the verdict go to numpy-bf16-transcript.txt. */
/* What the document's code does under NEP 50's promotion rules (numpy >= 2's
   default; numpy 1.24 to 1.26 switch to them with np._set_promotion_state):
   a Python integer that does not fit the array's dtype raises OverflowError
   instead of widening int32 to int64 (NEP 50, "Promotion rules for Python
   scalars", https://numpy.org/neps/nep-0050-scalar-promotion.html). */
static void nep50_text(char *m, size_t cap, const cJSON *res) {
  const char *how = str(res, "nep50", "?"), *err = str(res, "nep50_error", NULL);
  const cJSON *shape = cJSON_GetObjectItem(res, "nep50_out_shape");
  int is_default = !strcmp(how, "the default");
  if (!strncmp(how, "unavailable", 11)) {
    snprintf(m, cap, "; NEP 50 promotion (numpy >= 2) not tried: %s", how);
    return;
  }
  if (err) snprintf(m, cap, "; under NEP 50's promotion rules (numpy >= 2's default; here %s%s): the function raises "
                    "%s: the Python integer 0xFFFF0000 no longer widens the int32 array to int64, so the code fails on "
                    "every input instead of returning a wrong array%s", is_default ? "numpy's " : "", how, err,
                    is_default ? "; numpy 1.x's value-based promotion (int64, zeros interleaved) cannot be run with "
                    "this numpy" : "");
  else snprintf(m, cap, "; under NEP 50's promotion rules (%s): the function returns shape [%d]", how,
                cJSON_IsArray(shape) ? (int)cJSON_GetArrayItem(shape, 0)->valuedouble : -1);
}

static int c_numpy_bf16(const cJSON *c, char *m, char *v) {
  const cJSON *a = cJSON_GetObjectItem(c, "args"), *in = cJSON_GetObjectItem(a, "input"), *e;
  const char *code = cJSON_GetObjectItem(c, "quote")->valuestring;
  char py[4096], cap[4096], *argv[4];
  const char *python = cur_run ? lowp_run_param(cur_run, "python") : "/usr/bin/python3";
  cJSON *res = NULL;
  int n = 0, rc = 0, st;
  FILE *t;
  n = snprintf(py, sizeof py, "import json, sys\ntry:\n    import numpy as np\nexcept Exception as e:\n"
               "    print(json.dumps({'error': 'numpy: ' + str(e)})); sys.exit(0)\n%s\nx = np.array([", code);
  cJSON_ArrayForEach(e, in) n += snprintf(py + n, sizeof py - (size_t)n, "%s%.17g", e == in->child ? "" : ", ", e->valuedouble);
  n += snprintf(py + n, sizeof py - (size_t)n, "], dtype=np.float32)\nres = {'numpy': np.__version__}\ntry:\n"
                "    y = fp32_to_bf16(x)\n"
                "    res.update({'in_shape': list(x.shape), 'out_shape': list(y.shape), 'out_dtype': str(y.dtype), "
                "'and_dtype': str((x.view(np.int32) + 0x8000 & 0xFFFF0000).dtype), 'out': [float(t) for t in y.ravel()]})\n"
                "except Exception as e:\n    res['error'] = type(e).__name__ + ': ' + str(e)\n"
                "# NEP 50 promotion: the default from numpy 2; numpy 1.24 to 1.26 can switch to it\ntry:\n"
                "    if int(np.__version__.split('.')[0]) >= 2:\n        res['nep50'] = 'the default'\n    else:\n"
                "        np._set_promotion_state('weak')\n        res['nep50'] = \"np._set_promotion_state('weak')\"\n"
                "    try:\n        res['nep50_out_shape'] = list(fp32_to_bf16(x).shape)\n    except Exception as e:\n"
                "        res['nep50_error'] = type(e).__name__ + ': ' + str(e)\nexcept Exception as e:\n"
                "    res['nep50'] = 'unavailable: ' + str(e)\nprint(json.dumps(res))\n");
  if ((size_t)n >= sizeof py) return -1;
  argv[0] = (char *)python; argv[1] = "-c"; argv[2] = py; argv[3] = NULL;
  st = lowp_spawn(&rc, argv, NULL, NULL, cap, sizeof cap);
  if (st == LOWP_OK && rc == 0) res = cJSON_Parse(cap);
  if (!res || (cJSON_GetObjectItem(res, "error") && !cJSON_GetObjectItem(res, "numpy"))) {
    snprintf(m, ML, "could not run the document's code: %s", !res ? (rc == 127 || st != LOWP_OK ? "no python3 at the "
             "configured path" : "python3 failed") : cJSON_GetObjectItem(res, "error")->valuestring);
    snprintf(v, VL, "not checkable here: it needs Debian's python3-numpy (%s)", python);
  } else if (cJSON_GetObjectItem(res, "error")) {
    snprintf(m, ML, "numpy %s: the document's code raises %s", cJSON_GetObjectItem(res, "numpy")->valuestring,
             cJSON_GetObjectItem(res, "error")->valuestring);
    snprintf(v, VL, "wrong");
  } else {
    const cJSON *out = cJSON_GetObjectItem(res, "out"), *o;
    int nin = cJSON_GetArraySize(in), nout = cJSON_GetArraySize(out), k = 0, match_even = 0, zero_odd = 0;
    n = snprintf(m, ML, "numpy %s (value-based promotion of Python integers, numpy < 2), input %d float32 values: "
                 "the function returns %d %s values [", 
                 cJSON_GetObjectItem(res, "numpy")->valuestring, nin, nout,
                 cJSON_GetObjectItem(res, "out_dtype")->valuestring);
    cJSON_ArrayForEach(o, out) {
      n += snprintf(m + n, ML - (size_t)n, "%s%.9g", k ? ", " : "", o->valuedouble);
      if (k % 2 == 0 && k / 2 < nin) {
        double want;
        lowp_round_f64(&want, (double)(float)cJSON_GetArrayItem(in, k / 2)->valuedouble, &LOWP_FMT_BF16, NULL, LOWP_RND_NA);
        match_even += o->valuedouble == want;
      } else zero_odd += o->valuedouble == 0;
      k++;
    }
    snprintf(m + n, ML - (size_t)n, "]; x_int & 0xFFFF0000 has dtype %s (the mask does not fit int32), and "
             ".view(np.float32) splits each 8-byte integer into two floats: %d of the even positions are the rna bf16 "
             "values of the input, %d of the odd ones are 0", cJSON_IsString(cJSON_GetObjectItem(res, "and_dtype")) ?
             cJSON_GetObjectItem(res, "and_dtype")->valuestring : "?", match_even, zero_odd);
    if (nout == nin) snprintf(v, VL, "holds");
    else snprintf(v, VL, "wrong");
  }
  if (res && cJSON_GetObjectItem(res, "numpy")) nep50_text(m + strlen(m), ML - strlen(m), res);
  if (cur_run && (t = fopen(lowp_run_path(cur_run, "numpy-bf16-transcript.txt"), "w")) != NULL) {
    fprintf(t, "# written by lowp run claims (check numpy_bf16): the document's code run by %s -c SCRIPT\n"
            "# exit status %d\n--- SCRIPT\n%s\n--- OUTPUT\n%s\n--- MEASURED\n%s\n--- VERDICT\n%s\n",
            python, rc, py, cap, m, v);
    fclose(t);
  }
  cJSON_Delete(res);
  return 0;
}

/* A behaviour of the library the document describes, stated with its source
   file (args "fact", "source", optionally "doc_own": what the document
   itself shows elsewhere). Nothing runs: torch is not a dependency. */
static int c_library_source(const cJSON *a, char *m, char *v) {
  const char *own = str(a, "doc_own", NULL);
  snprintf(m, ML, "%s (source: %s)%s%s; not run here", str(a, "fact", "?"), str(a, "source", "?"), own ? "; " : "",
           own ? own : "");
  /* "verdict": the grade the fact gives the claim when it is not simply wrong (e.g. right for one of two cases) */
  snprintf(v, VL, "%s", str(a, "verdict", "wrong"));
  return 0;
}

static int c_bf16_truncate(const cJSON *a, char *m, char *v) {
  double wrong, tw, nw;
  uint32_t et, en;
  (void)a;
  bf16_classes(code_trunc, &wrong, &tw, &nw, &et, &en);
  snprintf(m, ML, "truncation is round-toward-zero: it differs from round-to-nearest-even on %.0f of 2^32 fp32 "
           "inputs (%.2f%%), %.0f of them NaNs that truncate to inf; its relative error reaches 2^-7 instead of 2^-8",
           wrong, 100 * wrong / 4294967296.0, nw);
  snprintf(v, VL, "holds with a qualification: it is simple, but it rounds toward zero; frameworks and hardware "
           "round to nearest even");
  return 0;
}

static int c_bf16_widen_shift(const cJSON *a, char *m, char *v) {
  uint32_t b, bad = 0, f16_same = 0;
  (void)a;
  for (b = 0; b < 65536; b++) {
    double x, h;
    uint32_t w = b << 16;
    float f;
    memcpy(&f, &w, 4);
    lowp_decode(&x, b, &LOWP_FMT_BF16);
    if (!((double)f == x || (isnan(f) && isnan(x)))) bad++;
    lowp_decode(&h, b, &LOWP_FMT_FP16);
    if ((double)f == h || (isnan(f) && isnan(h))) f16_same++;
  }
  snprintf(m, ML, "all 65536 bf16 patterns shifted left by 16 are their fp32 values (%u mismatches); the same "
           "shift gives the right fp32 value for only %u of the 65536 fp16 patterns", bad, f16_same);
  snprintf(v, VL, bad == 0 ? "holds" : "wrong");
  return 0;
}

static int c_reciprocal_fp64(const cJSON *a, char *m, char *v) {
  uint32_t k, diff = 0, wrong_mpfr = 0;
  (void)a;
  for (k = 0; k < (1u << 23); k++) {
    float s = 1.0f + (float)k * 0x1p-23f;
    float via64 = (float)(1.0 / (double)s), via32 = 1.0f / s;
    if (via64 != via32) diff++;
    if ((k & 1023) == 0) { /* an MPFR oracle (lib/measure/ref.h) on every 1024th */
      double q = 0;
      (void)lowp_ref_round_quotient(&q, 1, (double)s, &LOWP_FMT_FP32);
      if ((float)q != via64) wrong_mpfr++;
    }
  }
  snprintf(m, ML, "fp32(1/fp64(s)) equals the correctly rounded fp32 division 1.0f/s for all 2^23 significands s "
           "in [1, 2) (%u differ; %u of 8192 differ from MPFR): rounding a quotient twice, 53 then 24 bits, is "
           "innocuous since 53 >= 2*24 + 2; the power-of-two scales GradScaler produces make it exact either way",
           diff, wrong_mpfr);
  snprintf(v, VL, diff == 0 && wrong_mpfr == 0 ? "holds with a qualification: it only gains over a fp32 reciprocal "
           "that is not correctly rounded (fast GPU reciprocal); against a correctly rounded fp32 division it "
           "changes nothing" : "wrong");
  return 0;
}

static int c_scaler_growth_after_overflow(const cJSON *a, char *m, char *v) {
  lowp_scaler_policy_t ps[LOWP_SCALER_POLICY_COUNT] = {LOWP_SCALER_PYTORCH, LOWP_SCALER_MLX, LOWP_SCALER_MLX_PY, LOWP_SCALER_GENESIS};
  long clean[LOWP_SCALER_POLICY_COUNT];
  int i, n = 0;
  (void)a;
  for (i = 0; i < LOWP_SCALER_POLICY_COUNT; i++) {
    lowp_scaler_t s;
    double after;
    long k = 0;
    if (lowp_scaler_init_default(&s, ps[i]) != LOWP_OK) return -1;
    lowp_scaler_update(&s, 1, NULL);
    after = s.scale;
    while (s.scale <= after && k < 100000) { lowp_scaler_update(&s, 0, NULL); k++; }
    clean[i] = k;
    n += snprintf(m + n, ML - (size_t)n, "%s%s: grows after %ld clean steps", n ? "; " : "", lowp_scaler_policy_name(ps[i]), k);
  }
  snprintf(m + n, ML - (size_t)n, " (one overflow step, then clean steps; lib/amp scaler models). The C++ code's "
           "step() backs off, zeroes growth_tracker_ and clears found_inf_ before update() runs, so update() counts "
           "the overflow step as a clean one: the tracker restarts at 1, and the scale grows after %ld clean steps "
           "instead of PyTorch's %ld (with growth_interval 1, on the very step after the overflow)", clean[1], clean[0]);
  snprintf(v, VL, clean[1] == clean[0] ? "holds" : "wrong");
  return 0;
}

/* Document 000's MLX Python loop: the gradients come from loss_and_grad_fn
   (the unscaled loss), scaled_loss is never used, and scaler.step() unscales
   them anyway. Measured with the lib/amp scaler of args "policy": what the
   optimizer receives for a gradient of 1, and which positive finite values
   of args "grad_format" (gradients stored in it) become zero on unscaling. */
static int c_unused_scaled_loss(const cJSON *a, char *m, char *v) {
  const lowp_format_t *g = fmt(a, "grad_format");
  lowp_scaler_policy_t pol;
  lowp_scaler_t s;
  float one = 1.0f;
  int inf = 0;
  double inv, largest_zero = 0;
  uint64_t b, zeros = 0, finite = 0;
  if (!g || lowp_format_width(g) > 16 || lowp_scaler_policy_parse(&pol, str(a, "policy", "mlx-py")) != LOWP_OK ||
      lowp_scaler_init_default(&s, pol) != LOWP_OK || lowp_scaler_unscale_f32(&s, &one, 1, &inf) != LOWP_OK)
    return -1;
  inv = lowp_scaler_inv_scale(&s);
  for (b = 1; b < (UINT64_C(1) << (lowp_format_width(g) - 1)); b++) { /* the positive patterns */
    double x;
    lowp_decode(&x, b, g);
    if (!isfinite(x)) continue;
    finite++;
    if (rnd(x * inv, g) == 0) { zeros++; if (x > largest_zero) largest_zero = x; }
  }
  snprintf(m, ML, "loss_and_grad_fn differentiates loss_fn, the unscaled loss; scaled_loss is computed and never "
           "used; scaler.step() still multiplies the gradients by 1/scale (lib/amp %s scaler, scale %g): a "
           "gradient of 1 reaches the optimizer as %.9g (= 2^%d), every update of SGD %g times too small; stored "
           "in %s, %llu of its %llu positive finite values become zero (all up to %.6g = 2^%d)",
           lowp_scaler_policy_name(pol), s.scale, (double)one, (int)lrint(log2((double)one)), s.scale, g->name,
           (unsigned long long)zeros, (unsigned long long)finite, largest_zero, (int)lrint(log2(largest_zero)));
  snprintf(v, VL, (double)one == 1.0 ? "holds" : "wrong");
  return 0;
}

/* Document 002's overflow test between scaler.step() and scaler.update():
   in PyTorch only update() changes the scale (step() unscales, checks and
   maybe steps the optimizer: torch/amp/grad_scaler.py). Replayed on the
   lib/amp PyTorch scaler: steps with an inf gradient every args
   "overflow_every"; the comparison evaluated where the document places it
   (after the unscale and the inf check, before the update) and after the
   update. */
static int c_scale_change_in_step(const cJSON *a, char *m, char *v) {
  long steps = (long)num(a, "steps", 1000), every = (long)num(a, "overflow_every", 97), k;
  long overflows = 0, fired_between = 0, fired_after = 0, skipped = 0;
  lowp_scaler_t s;
  if (steps < 1 || every < 1 || lowp_scaler_init_default(&s, LOWP_SCALER_PYTORCH) != LOWP_OK) return -1;
  for (k = 0; k < steps; k++) {
    float g[2] = {1e-3f, k % every == every - 1 ? INFINITY : 2e-3f};
    double before = s.scale;
    int found = 0, skip = 0;
    if (lowp_scaler_unscale_f32(&s, g, 2, &found) != LOWP_OK) return -1; /* step(): unscale_, the inf check */
    overflows += found;
    fired_between += s.scale < before;                                    /* the document's test */
    if (lowp_scaler_update(&s, found, &skip) != LOWP_OK) return -1;       /* update() */
    skipped += skip;
    fired_after += s.scale < before;
  }
  snprintf(m, ML, "%ld steps with %ld overflows (lib/amp pytorch scaler; step() = unscale_, inf check, optimizer step "
           "or skip; update() = the scale rule): get_scale() < scale_before fired %ld times between step() and "
           "update(), where the document tests it, and %ld times after update(); %ld steps were skipped. In PyTorch "
           "only update() writes the scale (torch/amp/grad_scaler.py: step() calls unscale_ and _maybe_opt_step; "
           "update() backs off or grows); Accelerate's own AcceleratedOptimizer.step (src/accelerate/optimizer.py) "
           "reads the scale after update(): scale_after < scale_before", steps, overflows, fired_between, fired_after, skipped);
  snprintf(v, VL, fired_between == overflows && overflows > 0 ? "holds" : "wrong");
  return 0;
}

static int c_grow_every_step(const cJSON *a, char *m, char *v) {
  lowp_scaler_t s;
  double x = 65536;
  long k = 0, steps = 0, own = (long)num(a, "doc_interval", 0);
  while (!isinf(x)) { x = rnd(2 * x, &LOWP_FMT_FP32); k++; }
  lowp_scaler_init_default(&s, LOWP_SCALER_PYTORCH);
  while (s.scale == 65536 && steps < 100000) { lowp_scaler_update(&s, 0, NULL); steps++; }
  snprintf(m, ML, "PyTorch's rule (lib/amp scaler): the scale first grows after %ld consecutive clean steps (to %g); "
           "doubling on every clean step would make the fp32 scale inf after %ld steps%s%s", steps, s.scale, k,
           own ? "; " : "", own ? str(a, "doc_where", "") : "");
  if (steps == 1) snprintf(v, VL, "holds");
  else if (own == steps)
    snprintf(v, VL, "inconsistent within the document: its own update() grows the scale only after %ld clean "
             "steps, as PyTorch's rule does (measured)", own);
  else snprintf(v, VL, "wrong");
  return 0;
}

/* Which GEMMs of a transformer layer are memory-bound: the roofline model of
   the amp-speedup experiment (lib/model/roofline.h: seed 001's layer, its
   kernels, the datasheet device), the same numbers as amp-speedup's
   kernels.csv; beside it the square GEMM of args "n" against the document's
   own A100 figures. */
static int c_gemm_intensity(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format");
  const cJSON *ly = cJSON_GetObjectItem(a, "layer");
  const lowp_rdevice_t *dev = lowp_roofline_device(str(a, "device", "a100"));
  const lowp_rprec_t *pr;
  lowp_layer_dims_t d;
  lowp_rkernel_t ks[64];
  size_t np, pi, nk, i;
  double n = num(a, "n", 1024), bytes, ai, ridge, nstar;
  int ngemm = 0, nmem = 0, len;
  char names[1000] = "";
  if (!f || !dev || cJSON_GetArraySize(ly) != 6) return -1;
  d.batch = (size_t)cJSON_GetArrayItem(ly, 0)->valuedouble;
  d.seq = (size_t)cJSON_GetArrayItem(ly, 1)->valuedouble;
  d.d_model = (size_t)cJSON_GetArrayItem(ly, 2)->valuedouble;
  d.heads = (size_t)cJSON_GetArrayItem(ly, 3)->valuedouble;
  d.ffn_mult = (size_t)cJSON_GetArrayItem(ly, 4)->valuedouble;
  d.dropout = cJSON_GetArrayItem(ly, 5)->valuedouble;
  nk = lowp_roofline_layer(ks, 64, &d);
  pr = lowp_roofline_precisions(&np);
  for (pi = 0; pi < np && strcmp(pr[pi].name, f->name); pi++) {}
  if (nk == 0 || nk > 64 || pi == np) return -1;
  for (i = 0; i < nk; i++) {
    lowp_rtime_t t;
    if (ks[i].kind != LOWP_RK_GEMM) continue;
    ngemm++;
    lowp_roofline_time(&t, &ks[i], pi, dev);
    if (t.t_memory > t.t_compute) {
      char item[120];
      snprintf(item, sizeof item, "%s%.32s (%zu x %zu x %zu)", nmem ? ", " : "", ks[i].name, ks[i].m, ks[i].n, ks[i].k);
      strncat(names, item, sizeof names - strlen(names) - 1);
      nmem++;
    }
  }
  bytes = lowp_format_width(f) / 8.0;
  ai = 2 * n * n * n / (3 * n * n * bytes); /* flops / bytes for reading A, B and writing C once */
  ridge = num(a, "peak_tflops", 1) / num(a, "bandwidth_tbs", 1);
  nstar = ceil(1.5 * bytes * ridge);
  len = snprintf(m, ML, "roofline of seed 001's transformer layer (batch %zu, sequence %zu, d_model %zu, %zu heads; the "
                 "amp-speedup model, lib/model/roofline.c) on %s in %s: %d of its %d GEMMs (forward and backward) are "
                 "memory-bound: %s; the others are compute-bound. A square %s GEMM, n = %g: %.0f flop/byte against "
                 "the %s ridge point %.0f flop/byte: compute-bound for every n >= %.0f", d.batch, d.seq, d.d_model,
                 d.heads, dev->part, f->name, nmem, ngemm, nmem ? names : "none", f->name, n, ai, str(a, "gpu", "GPU"),
                 ridge, nstar);
  if (len >= ML) m[ML - 2] = '.';
  if (nmem == 0) snprintf(v, VL, "wrong");
  else if (nmem == ngemm) snprintf(v, VL, "holds");
  else snprintf(v, VL, "holds with a qualification: only for the GEMMs with a small dimension (the attention GEMMs, "
                "head dimension %zu: %d of the layer's %d); the large GEMMs are compute-bound and gain from the "
                "tensor cores' peak, not from the halved traffic; convolutions are not modelled here",
                d.d_model / d.heads, nmem, ngemm);
  return 0;
}

static int c_square_overflow(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format");
  double x, lo, c;
  long nfeat = 256, k;
  if (!f) return -1;
  /* smallest x of f whose square overflows: start at sqrt(T) rounded down, go up */
  x = rnd(sqrt(ovf_t(f, NULL)), f);
  lowp_round_f64(&lo, nextafter(x, 0), f, NULL, LOWP_RND_DN);
  while (!is_ovf(mul(x, x, f))) { lowp_round_f64(&x, nextafter(x, INFINITY), f, NULL, LOWP_RND_UP); }
  while (1) {
    lowp_round_f64(&lo, nextafter(x, 0), f, NULL, LOWP_RND_DN);
    if (is_ovf(mul(lo, lo, f))) x = lo; else break;
  }
  /* smallest c of f for which a sum of 256 squares c^2, in f, overflows */
  c = x;
  for (;;) {
    double y, s = 0, q;
    int ovf = 0;
    lowp_round_f64(&y, nextafter(c, 0), f, NULL, LOWP_RND_DN);
    q = mul(y, y, f);
    for (k = 0; k < nfeat && !ovf; k++) { s = add(s, q, f); ovf = is_ovf(s); }
    if (!ovf) break;
    c = y;
  }
  snprintf(m, ML, "in %s, x*x overflows from |x| = %g (%g^2 = %g rounds to %g); a sum of %ld squares, as a one-pass "
           "variance over %ld features, overflows from |x| = %g", f->name, x, lo, lo * lo, mul(lo, lo, f), nfeat,
           nfeat, c);
  snprintf(v, VL, "holds with a qualification: only with the statistics accumulated in fp32; documents 000 and 004 "
           "themselves list layer_norm among the fp32 operations");
  return 0;
}

static int c_normal_formula(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format");
  uint64_t b, nb;
  long match = 0, miss = 0, finite = 0;
  int w, mb, bias;
  if (!f) return -1;
  w = lowp_format_width(f);
  mb = f->precision - 1;
  bias = lowp_format_bias(f);
  nb = UINT64_C(1) << w;
  for (b = 0; b < nb; b++) {
    double x, y;
    int s = (int)(b >> (w - 1)), e = (int)((b >> mb) & ((1u << f->ebits) - 1));
    uint64_t mm = b & ((UINT64_C(1) << mb) - 1);
    lowp_decode(&x, b, f);
    if (!isfinite(x)) continue;
    finite++;
    y = (s ? -1 : 1) * ldexp(1.0 + ldexp((double)mm, -mb), e - bias);
    if (y == x) match++; else miss++;
  }
  snprintf(m, ML, "%s: the formula gives the right value for %ld of its %ld finite bit patterns; it fails on the "
           "%ld with exponent field 0 (zeros and subnormals, which are (-1)^s 2^(1-bias) (0 + m))", f->name, match,
           finite, miss);
  snprintf(v, VL, "holds with a qualification: for normal numbers only");
  return 0;
}

static int c_fp8_variant(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format");
  double xM;
  int per, top = 0, k;
  if (!f) return -1;
  xM = lowp_format_xmax(f);
  per = 1 << (f->precision - 1);
  for (k = 0; k < per; k++) top += ldexp(1.0 + (double)k / per, f->emax) <= xM;
  snprintf(m, ML, "%s: largest finite %g; %d values per binade (2^(p-1)), the top binade [2^%d, 2^%d) holds %d of them",
           f->name, xM, per, f->emax, f->emax + 1, top);
  snprintf(v, VL, xM == num(a, "max", 0) && per == (int)num(a, "per_binade", 0) ?
           (top < per ? "holds with a qualification: the top binade is short (the NaN encoding takes its last value)" : "holds")
           : "wrong");
  return 0;
}

static int c_peak(const cJSON *a, char *m, char *v, const cJSON *data) { return c_peak_ratios(a, m, v, data); }

static int c_exp_overflow_inputs(const cJSON *a, char *m, char *v) {
  const cJSON *x;
  int n = 0;
  cJSON_ArrayForEach(x, cJSON_GetObjectItem(a, "formats")) {
    const lowp_format_t *f = lowp_format_by_name(x->valuestring);
    double t;
    if (!f) return -1;
    t = exp_overflow_input(f);
    n += snprintf(m + n, ML - (size_t)n, "%sexp(x) overflows %s from x = %.9g", n ? "; " : "", f->name, t);
  }
  snprintf(v, VL, "holds with a qualification: fp32 moves the limit (from 11.1 to 88.7) but does not remove it; "
           "subtracting the maximum does");
  return 0;
}

/* One dot product of x and w (n values of f) by the registry kernel dot_acc
   (products and sums rounded to f, left to right), measured by the pipeline:
   its componentwise backward error |c - x'w| / (|x|'|w|), or NaN. */
static double dot_bwd(const lowp_subject_t *sub, const double *x, const double *w, size_t n,
                      const lowp_format_t *f) {
  lowp_problem_t p;
  lowp_check_inputs_t in;
  lowp_check_result_t res;
  const double *xs[2];
  char err[300];
  double bwd = NAN;
  p = lowp_exp_problem("dot", 1, 1, 1, n, f, f);
  xs[0] = x; xs[1] = w;
  if (lowp_check_inputs_copy(&in, &p, xs, NULL) != LOWP_OK) return NAN;
  if (lowp_check_measure(&res, &p, sub, &in, NULL, err, sizeof err) == LOWP_OK) bwd = res.max_bwd;
  lowp_check_result_free(&res);
  lowp_check_inputs_free(&in);
  return bwd;
}

static int c_dot_bound(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format");
  long n = (long)num(a, "n", 1000), trials = (long)num(a, "trials", 100), t, i;
  double u, worst = 0, *x, *w, gam;
  lowp_rng_t g;
  lowp_subject_t sub;
  char params[300], err[300];
  if (!f || n < 1) return -1;
  u = lowp_format_u(f);
  snprintf(params, sizeof params, "acc=%s,prod=%s", f->name, f->name);
  if (lowp_kernel_subject_open(&sub, "dot_acc", params, err, sizeof err) != LOWP_OK) return -1;
  x = malloc((size_t)n * sizeof *x);
  w = malloc((size_t)n * sizeof *w);
  if (!x || !w) { free(x); free(w); lowp_subject_close(&sub); return -1; }
  lowp_rng_init(&g, 20261122, 7);
  for (t = 0; t < trials; t++) {
    double e;
    for (i = 0; i < n; i++) {
      x[i] = rnd(2 * lowp_rng_uniform(&g) - 1, f);
      w[i] = rnd(2 * lowp_rng_uniform(&g) - 1, f);
    }
    e = dot_bwd(&sub, x, w, (size_t)n, f);
    if (!(e <= worst)) worst = e; /* NaN (a failed measurement) sticks */
  }
  lowp_subject_close(&sub);
  free(x);
  free(w);
  gam = n * u / (1 - n * u);
  snprintf(m, ML, "u(%s) = 2^-%d = %.4g; %ld dot products of length %ld (products and sums rounded to %s): "
           "worst |error| / sum|w x| = %.3g = %.2f%% of n u = %.3g; the rigorous bound gamma_n = nu/(1-nu) = %.3g "
           "exists only while n u < 1, i.e. n < %.0f", f->name, f->precision, u, trials, n, f->name, worst,
           100 * worst / (n * u), n * u, gam, 1 / u);
  snprintf(v, VL, lowp_format_u(f) == ldexp(1, -11) && worst <= gam ? "holds with a qualification: a first-order "
           "bound (gamma_n to be exact), far above typical errors, and void for n >= 1/u" : "wrong");
  return 0;
}

/* Document 004's multi-layer bound |eps_L| <~ L n u prod |W_i|, held against
   a linear network y = W_L ... W_1 x (activations the identity: Lipschitz
   constant 1, the bound's most favourable case) computed in format f, each
   output a dot product with every product and sum rounded to f, left to
   right. The exact output is the sum over all paths of W_L[r][j] ... W_1[j'][k]
   x[k]: products of L + 1 values of f, exact in binary64 when (L + 1) p <= 53
   (fp16: L <= 3; checked), summed once by lib/exact. */
#define ML_MAXN 16
#define ML_MAXL 4
typedef struct {
  int n, L;
  double w[ML_MAXL][ML_MAXN][ML_MAXN], x[ML_MAXN];
} mlnet_t;

static void ml_forward(double *y, const mlnet_t *t, const lowp_format_t *f) {
  double cur[ML_MAXN], nxt[ML_MAXN];
  int l, r, j;
  memcpy(cur, t->x, sizeof cur);
  for (l = 0; l < t->L; l++) {
    for (r = 0; r < t->n; r++) {
      double acc = 0;
      for (j = 0; j < t->n; j++) acc = j ? add(acc, mul(t->w[l][r][j], cur[j], f), f) : mul(t->w[l][r][j], cur[j], f);
      nxt[r] = acc;
    }
    memcpy(cur, nxt, sizeof cur);
  }
  memcpy(y, cur, (size_t)t->n * sizeof *y);
}

/* exact output r (rounded once to binary64) and |W_L|...|W_1||x| at r */
static int ml_exact(double *y, double *absprod, const mlnet_t *t, int r, double *terms) {
  int idx[ML_MAXL + 1], l;
  size_t nt = 0;
  double s = 0;
  memset(idx, 0, sizeof idx);
  for (;;) { /* idx[0..L-1]: the path's inputs of layers L-1 .. 0; idx[L - 1] indexes x */
    double p = 1;
    int row = r;
    for (l = t->L - 1; l >= 0; l--) { p *= t->w[l][row][idx[t->L - 1 - l]]; row = idx[t->L - 1 - l]; }
    p *= t->x[row];
    terms[nt++] = p;
    s += fabs(p);
    for (l = 0; l < t->L && ++idx[l] == t->n; l++) idx[l] = 0;
    if (l == t->L) break;
  }
  *absprod = s;
  return lowp_exact_sum(y, terms, nt, &LOWP_FMT_FP64, NULL, LOWP_RND_NE) == LOWP_OK ? 0 : -1;
}

static int c_multilayer_bound(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format");
  const cJSON *sc;
  mlnet_t t;
  lowp_rng_t g;
  double u, gam, *terms;
  long trials = (long)num(a, "trials", 100), over_fix = 0, runs = 0, tr;
  int len, l, r, j, fails = 0, fails_unit = 0;
  double s_first_fail = 0;
  if (!f) return -1;
  t.n = (int)num(a, "n", 8);
  t.L = (int)num(a, "layers", 2);
  /* the path products must be exact in binary64: (L + 1) significands of f in 53 bits */
  if (t.n < 1 || t.n > ML_MAXN || t.L < 1 || t.L > ML_MAXL || pow(t.n, t.L) > 65536 || trials < 1 ||
      (t.L + 1) * f->precision > 53)
    return -1;
  if ((terms = malloc((size_t)pow(t.n, t.L) * sizeof *terms)) == NULL) return -1;
  u = lowp_format_u(f);
  gam = t.n * u / (1 - t.n * u);
  len = snprintf(m, ML, "a linear %d-layer network, width n = %d, in %s (dot products, products and sums rounded, "
                 "left to right; activations the identity, Lipschitz constant 1), weights +-[0.25, 1], inputs "
                 "+-s[0.25, 1], %ld draws per s; worst max|error| against the document's bound L n u prod ||W_i|| "
                 "(||.|| the max-row-sum norm, its most generous reading):", t.L, t.n, f->name, trials);
  lowp_rng_init(&g, 20261122, 13);
  cJSON_ArrayForEach(sc, cJSON_GetObjectItem(a, "scales")) {
    double s = sc->valuedouble, worst = 0, worst_b = 0;
    for (tr = 0; tr < trials; tr++) {
      double y[ML_MAXN], bdoc = t.L * t.n * u, e = 0;
      for (l = 0; l < t.L; l++) {
        double norm = 0;
        for (r = 0; r < t.n; r++) {
          double row = 0;
          for (j = 0; j < t.n; j++) {
            double w = 0.25 + 0.75 * lowp_rng_uniform(&g);
            t.w[l][r][j] = rnd(lowp_rng_uniform(&g) < 0.5 ? -w : w, f);
            row += fabs(t.w[l][r][j]);
          }
          if (row > norm) norm = row;
        }
        bdoc *= norm;
      }
      for (j = 0; j < t.n; j++) {
        double x = s * (0.25 + 0.75 * lowp_rng_uniform(&g));
        t.x[j] = rnd(lowp_rng_uniform(&g) < 0.5 ? -x : x, f);
      }
      ml_forward(y, &t, f);
      for (r = 0; r < t.n; r++) {
        double ex, ap;
        if (ml_exact(&ex, &ap, &t, r, terms) != 0) { free(terms); return -1; }
        if (fabs(y[r] - ex) > e) e = fabs(y[r] - ex);
        over_fix += fabs(y[r] - ex) > (pow(1 + gam, t.L) - 1) * ap;
      }
      runs++;
      if (e / bdoc > worst) { worst = e / bdoc; worst_b = bdoc; }
    }
    if (worst > 1 && !fails++) s_first_fail = s;
    fails_unit += worst > 1 && s <= 1;
    len += snprintf(m + len, ML - (size_t)len, " s = %g: %.3g (%.3g times the bound %.3g);", s, worst * worst_b, worst,
                    worst_b);
  }
  free(terms);
  snprintf(m + len, ML - (size_t)len, " scaling x scales the error, not the bound. The componentwise bound with |x|, "
           "((1+gamma_n)^L - 1) |W_L|...|W_1||x| (first order L n u |W_L|...|W_1||x|; Higham, Accuracy and "
           "Stability of Numerical Algorithms, 2nd ed., ch. 3), is exceeded by %ld of the %ld x %d outputs. With "
           "activations, each layer also multiplies the incoming error by the activation's Lipschitz constant "
           "(GELU: about 1.13), which the bound leaves out too", over_fix, runs, t.n);
  /* The document's multi-layer line drops the |x| of its own one-layer line just above it (|eps| <~ n u |W||x|).
     Graded as the text reads: wrong when the bound fails even for |x| <= 1, or when restoring |x| (the componentwise
     bound) does not make it hold; otherwise right up to that omitted factor (qualified), naming the first scale
     where it fails. */
  if (fails_unit || over_fix) snprintf(v, VL, "wrong");
  else if (fails)
    snprintf(v, VL, "holds with a qualification: the |x| factor of the one-layer bound above it is missing, so it "
             "holds only for small inputs (at the scales tried below s = %g; exceeded from s = %g) and activations with Lipschitz "
             "constant <= 1; with |x| restored (componentwise) it holds for every input", s_first_fail, s_first_fail);
  else snprintf(v, VL, "holds with a qualification: only for inputs with |x| <= 1 and activations with Lipschitz "
                "constant <= 1");
  return 0;
}

static int c_sterbenz(const cJSON *a, char *m, char *v) {
  const lowp_format_t *f = fmt(a, "format");
  long n = (long)num(a, "pairs", 100000), k, inexact = 0, tested = 0;
  lowp_rng_t g;
  if (!f) return -1;
  lowp_rng_init(&g, 20261122, 11);
  for (k = 0; k < n; k++) {
    double x = rnd(ldexp(1.0 + lowp_rng_uniform(&g), (int)(lowp_rng_uniform(&g) * (f->emax - f->emin)) + f->emin), f);
    double y = rnd(x * (0.5 + 1.5 * lowp_rng_uniform(&g)), f);
    if (!(y >= x / 2 && y <= 2 * x) || is_ovf(x) || is_ovf(y)) continue;
    tested++;
    if (add(x, -y, f) != x - y) inexact++;
  }
  snprintf(m, ML, "%ld random pairs of %s values with y/2 <= x <= 2y: %ld subtractions inexact (Sterbenz: x - y "
           "is exact); the error |a|/|a-b| u comes from errors already in a and b", tested, f->name, inexact);
  snprintf(v, VL, inexact == 0 ? "holds with a qualification: the subtraction itself is exact; it magnifies "
           "earlier errors, it does not add one" : "wrong");
  return 0;
}

static int c_softmax_e12(const cJSON *a, char *m, char *v) {
  double x = num(a, "x", 12), c = num(a, "claimed", 0), e = exp_to(x, &LOWP_FMT_FP64), t = exp_overflow_input(&LOWP_FMT_FP16);
  snprintf(m, ML, "e^%g = %.8g; fp16(e^%g) = %g; the smallest fp16 input whose exp overflows is %.9g (ln 65520 = %.9g)",
           x, e, x, exp_to(x, &LOWP_FMT_FP16), t, log(65520.0));
  snprintf(v, VL, approx(c, e, 3) && is_ovf(exp_to(x, &LOWP_FMT_FP16)) ? "holds with a qualification: overflow "
           "already starts at 11.09375" : "wrong");
  return 0;
}

static int c_mask_value(const cJSON *a, char *m, char *v) {
  double mk = num(a, "mask", -1e4), h = rnd(mk, &LOWP_FMT_FP16), b = rnd(mk, &LOWP_FMT_BF16), e8, e8s;
  double w32 = exp_to(h - 3, &LOWP_FMT_FP32);
  lowp_policy_t sat;
  memset(&sat, 0, sizeof sat);
  sat.overflow = LOWP_OVF_SAT;
  e8 = rnd(mk, &LOWP_FMT_E4M3);
  lowp_round_f64(&e8s, mk, &LOWP_FMT_E4M3, &sat, LOWP_RND_NE);
  snprintf(m, ML, "fp16(%g) = %g (%s); exp(mask - 3) in fp32 = %g, so the masked weight is exactly 0 as with -inf, and "
           "a fully masked row gives 1/n instead of NaN (0/0); bf16 stores %g; e4m3 gives %s (saturating: %g); see "
           "the softmax-overflow experiment", mk, h, h == mk ? "exact" : "rounded", w32, b, isnan(e8) ? "NaN" : "a number", e8s);
  snprintf(v, VL, h == mk && w32 == 0 ? "holds with a qualification: right for fp16 and bf16; the mask must be "
           "applied before any conversion to e4m3, which cannot hold it" : "wrong");
  return 0;
}

static int c_scaler_defaults(const cJSON *a, char *m, char *v) {
  lowp_scaler_t s;
  int ok;
  if (lowp_scaler_init_default(&s, LOWP_SCALER_PYTORCH) != LOWP_OK) return -1;
  ok = s.scale == num(a, "init", 0) && s.growth == num(a, "growth", 0) && s.backoff == num(a, "backoff", 0) &&
       s.interval == (long long)num(a, "interval", 0);
  snprintf(m, ML, "lib/amp's model of torch.amp.GradScaler: init_scale %g (2^%d), growth_factor %g, backoff_factor %g, "
           "growth_interval %lld", s.scale, (int)log2(s.scale), s.growth, s.backoff, s.interval);
  snprintf(v, VL, ok ? "holds" : "wrong");
  return 0;
}

static int c_fp8_presets(const cJSON *a, char *m, char *v) {
  size_t i;
  int n = 0, pre_hopper = 0;
  (void)a;
  n += snprintf(m, ML, "lib/model presets with an fp8 tensor-core datapath:");
  for (i = 0; i < lowp_tc_preset_count(); i++) {
    const lowp_tc_preset_t *p = lowp_tc_preset_at(i);
    if (p->fp8.b > 0) {
      n += snprintf(m + n, ML - (size_t)n, " %s (b = %d);", p->name, p->fp8.b);
      if (!strcmp(p->name, "ada") || !strcmp(p->name, "l40s")) pre_hopper = 1;
    }
  }
  snprintf(v, VL, pre_hopper ? "holds with a qualification: Ada (L40S, RTX 4000) tensor cores also have fp8 "
           "(for inference and training kernels alike)" : "holds");
  return 0;
}

/* ------------------------------------------------------------- dispatch */

typedef struct {
  const char *name;
  check_fn fn;
  int (*fnd)(const cJSON *a, char *m, char *v, const cJSON *data);
  int (*fnc)(const cJSON *claim, char *m, char *v); /* gets the whole claim (its quote) */
} check_t;

static const check_t checks[] = {
    {"needs_gpu", c_needs_gpu, NULL, NULL},
    {"format_bits", c_format_bits, NULL, NULL},
    {"format_value", c_format_value, NULL, NULL},
    {"format_range_pow2", c_format_range_pow2, NULL, NULL},
    {"format_row", c_format_row, NULL, NULL},
    {"decimal_digits", c_decimal_digits, NULL, NULL},
    {"rel_precision", c_rel_precision, NULL, NULL},
    {"width_ratio", c_width_ratio, NULL, NULL},
    {"amp_memory", c_amp_memory, NULL, NULL},
    {"memory_table", c_memory_table, NULL, NULL},
    {"ratios", c_ratios, NULL, NULL},
    {"range_vs_value", c_range_vs_value, NULL, NULL},
    {"differences", c_differences, NULL, NULL},
    {"relative_changes", c_relative_changes, NULL, NULL},
    {"peak_ratios", NULL, c_peak, NULL},
    {"tc_table", NULL, c_tc_table, NULL},
    {"pow2_value", c_pow2_value, NULL, NULL},
    {"product", c_product, NULL, NULL},
    {"range_compare", c_range_compare, NULL, NULL},
    {"missing_bits", c_missing_bits, NULL, NULL},
    {"spacing_at", c_spacing_at, NULL, NULL},
    {"stagnation", c_stagnation, NULL, NULL},
    {"zero_threshold", c_zero_threshold, NULL, NULL},
    {"overflow_threshold", c_overflow_threshold, NULL, NULL},
    {"zero_values", c_zero_values, NULL, NULL},
    {"bf16_plus_8000", c_bf16_plus_8000, NULL, NULL},
    {"numpy_bf16", NULL, NULL, c_numpy_bf16},
    {"library_source", c_library_source, NULL, NULL},
    {"bf16_truncate", c_bf16_truncate, NULL, NULL},
    {"bf16_widen_shift", c_bf16_widen_shift, NULL, NULL},
    {"reciprocal_fp64", c_reciprocal_fp64, NULL, NULL},
    {"scaler_growth_after_overflow", c_scaler_growth_after_overflow, NULL, NULL},
    {"grow_every_step", c_grow_every_step, NULL, NULL},
    {"unused_scaled_loss", c_unused_scaled_loss, NULL, NULL},
    {"scale_change_in_step", c_scale_change_in_step, NULL, NULL},
    {"gemm_intensity", c_gemm_intensity, NULL, NULL},
    {"square_overflow", c_square_overflow, NULL, NULL},
    {"normal_formula", c_normal_formula, NULL, NULL},
    {"fp8_variant", c_fp8_variant, NULL, NULL},
    {"exp_overflow_inputs", c_exp_overflow_inputs, NULL, NULL},
    {"dot_bound", c_dot_bound, NULL, NULL},
    {"sterbenz", c_sterbenz, NULL, NULL},
    {"multilayer_bound", c_multilayer_bound, NULL, NULL},
    {"softmax_e12", c_softmax_e12, NULL, NULL},
    {"mask_value", c_mask_value, NULL, NULL},
    {"scaler_defaults", c_scaler_defaults, NULL, NULL},
    {"fp8_presets", c_fp8_presets, NULL, NULL},
};

static const check_t *find_check(const char *name) {
  size_t i;
  for (i = 0; i < sizeof checks / sizeof checks[0]; i++)
    if (!strcmp(checks[i].name, name)) return &checks[i];
  return NULL;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  long n;
  char *buf;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) { fclose(f); return NULL; }
  buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
  if (buf) buf[n] = '\0';
  fclose(f);
  return buf;
}

/* the claim with id id, or NULL */
static const cJSON *claim_by_id(const cJSON *root, const char *id) {
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "claims"))
    if (cJSON_IsString(cJSON_GetObjectItem(c, "id")) && !strcmp(cJSON_GetObjectItem(c, "id")->valuestring, id)) return c;
  return NULL;
}

static int same_as_ok(const cJSON *root, const cJSON *c) {
  const char *to = str(c, "same_as", NULL);
  return to && strcmp(to, str(c, "id", "")) != 0 && claim_by_id(root, to) != NULL;
}

/* The same claim gets the same category in every document: a claim and the
   one its "same_as" names, and claims with identical "claim" texts. Returns
   the number of pairs that disagree (each named on stderr). */
static int consistency(const cJSON *root, const cJSON *verdicts) {
  const cJSON *x, *y;
  int bad = 0, i = 0, j;
  cJSON_ArrayForEach(x, verdicts) {
    const cJSON *cx = claim_by_id(root, str(x, "id", ""));
    const char *to = str(cx, "same_as", NULL);
    j = 0;
    cJSON_ArrayForEach(y, verdicts) {
      const cJSON *cy = claim_by_id(root, str(y, "id", ""));
      int same = (to && !strcmp(to, str(y, "id", ""))) ||
                 (j > i && !strcmp(str(cx, "claim", "a"), str(cy, "claim", "b")));
      if (same && strcmp(str(x, "category", ""), str(y, "category", ""))) {
        fprintf(stderr, "lowp run claims: %s and %s state the same claim but got different categories (%s, %s)\n",
                str(x, "id", "?"), str(y, "id", "?"), str(x, "category", "?"), str(y, "category", "?"));
        bad++;
      }
      j++;
    }
    i++;
  }
  return bad;
}

/* The claims file parsed and validated: every entry has the fields and a
   known check. Returns the root (caller deletes) or exits 2 with a message. */
static cJSON *load(const lowp_run_t *r) {
  char pathbuf[4096];
  const char *path = lowp_run_param_path(r, "file", pathbuf, sizeof pathbuf);
  char *text = slurp(path), why[512];
  cJSON *root, *c;
  if (!text) lowp_run_bad_param(r, "file", "cannot read the file");
  root = cJSON_Parse(text);
  free(text);
  if (!root || !cJSON_IsArray(cJSON_GetObjectItem(root, "claims")))
    lowp_run_bad_param(r, "file", "not a JSON object with a \"claims\" array");
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "claims")) {
    static const char *const keys[] = {"id", "claim", "source", "quote", "check"};
    size_t k;
    for (k = 0; k < sizeof keys / sizeof keys[0]; k++)
      if (!cJSON_IsString(cJSON_GetObjectItem(c, keys[k]))) {
        snprintf(why, sizeof why, "a claim lacks the string field \"%s\"", keys[k]);
        lowp_run_bad_param(r, "file", why);
      }
    if (cJSON_GetObjectItem(c, "same_as") && !same_as_ok(root, c)) {
      snprintf(why, sizeof why, "claim %s: \"same_as\" must name another claim's id", cJSON_GetObjectItem(c, "id")->valuestring);
      lowp_run_bad_param(r, "file", why);
    }
    if (!find_check(cJSON_GetObjectItem(c, "check")->valuestring)) {
      snprintf(why, sizeof why, "claim %s names an unknown check \"%s\"", cJSON_GetObjectItem(c, "id")->valuestring,
               cJSON_GetObjectItem(c, "check")->valuestring);
      lowp_run_bad_param(r, "file", why);
    }
  }
  return root;
}

static void check(const lowp_run_t *r) {
  const char *py = lowp_run_param(r, "python");
  cJSON_Delete(load(r));
  /* a Python named on the command line must exist; the default may be absent (the verdict then says so) */
  if (strcmp(py, params[1].def) != 0 && access(py, X_OK) != 0)
    lowp_run_bad_param(r, "python", "not an executable file");
}

static void csv_field(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* --------------------------------------------------------------- run */

/* The verdict categories, by the verdict's first words (the order matters:
   "holds with a qualification" before "holds"). */
typedef struct {
  const char *prefix; /* the verdict text starts with it */
  const char *key;    /* results.json "category" */
  const char *label;  /* the counts table and the report */
  const char *meaning;
} category_t;

static const category_t cats[] = {
    {"holds with a qualification", "qualified", "holds with a qualification",
     "true as far as computed, but only under a condition the document does not state"},
    {"holds", "holds", "holds", "computed here, and it agrees"},
    {"arithmetic re-checked", "arithmetic", "arithmetic re-checked",
     "only the document's own arithmetic was redone (ratios, differences of its own figures), and it agrees; the "
     "figures themselves were not measured here, so nothing is said about them"},
    {"wrong", "wrong", "wrong",
     "refuted: by a computation here, or by the source code of the library the document describes (cited)"},
    {"inconsistent within the document", "inconsistent", "inconsistent within the document",
     "contradicted by the document's own figures or code elsewhere; nothing was measured to refute it"},
    {"ambiguous", "ambiguous", "ambiguous", "true under one reading, false under another; the document does not say which"},
    {"not checkable here", "not-checkable", "not checkable here",
     "needs a GPU (or a measurement lowp cannot make); what can be said is in the measured text"},
};
#define NCATS (sizeof cats / sizeof cats[0])

static size_t category_of(const char *v) {
  size_t i;
  for (i = 0; i < NCATS; i++)
    if (!strncmp(v, cats[i].prefix, strlen(cats[i].prefix))) return i;
  return NCATS;
}

static void append(char *dst, size_t cap, const char *s) { strncat(dst, s, cap - strlen(dst) - 1); }

static int run(lowp_run_t *r) {
  cJSON *root = load(r), *c, *verdicts = cJSON_AddArrayToObject(r->results, "verdicts");
  cJSON *tables = cJSON_AddArrayToObject(r->results, "tables"), *catj, *rows;
  const cJSON *data = cJSON_GetObjectItem(root, "data");
  int count[NCATS + 1] = {0}, nclaims = 0, bad = 0, inconsistent;
  size_t i;
  char m[ML], v[VL], ans[6000], ids[NCATS][1500];
  FILE *csv = fopen(lowp_run_path(r, "claims.csv"), "w");
  if (!csv) { fprintf(stderr, "lowp run claims: cannot write claims.csv\n"); cJSON_Delete(root); return 2; }
  cur_run = r;
  memset(ids, 0, sizeof ids);
  fprintf(csv, "id,source,claim,quote,check,measured,category,verdict\n");
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "claims")) {
    const char *id = cJSON_GetObjectItem(c, "id")->valuestring;
    const check_t *ck = find_check(cJSON_GetObjectItem(c, "check")->valuestring);
    const cJSON *args = cJSON_GetObjectItem(c, "args");
    cJSON *o;
    char claim[1024];
    size_t k;
    int st;
    nclaims++;
    lowp_run_progress(r, "claim %d: %s", nclaims, id);
    m[0] = v[0] = '\0';
    st = ck->fn ? ck->fn(args, m, v) : ck->fnd ? ck->fnd(args, m, v, data) : ck->fnc(c, m, v);
    if (st != 0) {
      bad++;
      snprintf(m, ML, "the check could not run: bad arguments in the claims file");
      snprintf(v, VL, "not checked: bad arguments");
    }
    k = category_of(v);
    count[k]++;
    if (k < NCATS && strcmp(cats[k].key, "holds") && strcmp(cats[k].key, "qualified")) {
      if (ids[k][0]) append(ids[k], sizeof ids[k], ", ");
      append(ids[k], sizeof ids[k], id);
    }
    snprintf(claim, sizeof claim, "%s [%s]", cJSON_GetObjectItem(c, "claim")->valuestring, id);
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "claim", claim);
    cJSON_AddStringToObject(o, "source", cJSON_GetObjectItem(c, "source")->valuestring);
    cJSON_AddStringToObject(o, "measured", m);
    cJSON_AddStringToObject(o, "verdict", v);
    cJSON_AddStringToObject(o, "id", id);
    cJSON_AddStringToObject(o, "check", ck->name);
    cJSON_AddStringToObject(o, "quote", cJSON_GetObjectItem(c, "quote")->valuestring);
    cJSON_AddStringToObject(o, "category", k < NCATS ? cats[k].key : "not-checked");
    if (cJSON_IsString(cJSON_GetObjectItem(c, "same_as")))
      cJSON_AddStringToObject(o, "same_as", cJSON_GetObjectItem(c, "same_as")->valuestring);
    cJSON_AddItemToArray(verdicts, o);
    csv_field(csv, id); fputc(',', csv);
    csv_field(csv, cJSON_GetObjectItem(c, "source")->valuestring); fputc(',', csv);
    csv_field(csv, cJSON_GetObjectItem(c, "claim")->valuestring); fputc(',', csv);
    csv_field(csv, cJSON_GetObjectItem(c, "quote")->valuestring); fputc(',', csv);
    csv_field(csv, ck->name); fputc(',', csv);
    csv_field(csv, m); fputc(',', csv);
    csv_field(csv, k < NCATS ? cats[k].key : "not-checked"); fputc(',', csv);
    csv_field(csv, v); fputc('\n', csv);
  }
  fclose(csv);
  inconsistent = consistency(root, verdicts);
  /* the categories with their counts: a table for people, an array for the report */
  {
    static const char *const cn[] = {"category", "claims", "meaning", "which (ids)"};
    rows = lowp_result_table(tables, "Verdicts by category", cn, 4);
    catj = cJSON_AddArrayToObject(r->results, "categories");
    for (i = 0; i < NCATS; i++) {
      char num[16];
      const char *cells[4];
      cJSON *o = cJSON_CreateObject();
      snprintf(num, sizeof num, "%d", count[i]);
      cells[0] = cats[i].label; cells[1] = num; cells[2] = cats[i].meaning;
      cells[3] = ids[i][0] ? ids[i] : (count[i] ? "(many; see the verdicts)" : "none");
      lowp_result_add_row(rows, cells, 4);
      cJSON_AddStringToObject(o, "key", cats[i].key);
      cJSON_AddStringToObject(o, "label", cats[i].label);
      cJSON_AddNumberToObject(o, "count", count[i]);
      cJSON_AddStringToObject(o, "meaning", cats[i].meaning);
      cJSON_AddItemToArray(catj, o);
    }
  }
  {
    /* the counts in the order of cats[], "holds" first; then the ids of every category but the two "holds" */
    static const char *const phrase[2][NCATS] = {
        {"holds only with a qualification", "holds", "has only the document's own arithmetic re-checked",
         "is wrong (refuted)", "is inconsistent within its document", "is ambiguous", "is not checkable here"},
        {"hold only with a qualification", "hold", "have only the document's own arithmetic re-checked",
         "are wrong (refuted)", "are inconsistent within their document", "are ambiguous", "are not checkable here"}};
    static const size_t order[NCATS] = {1, 0, 2, 3, 4, 5, 6};
    int n = snprintf(ans, sizeof ans, "Of %d numeric claims in the five documents,", nclaims);
    for (i = 0; i < NCATS; i++) {
      size_t k = order[i];
      n += snprintf(ans + n, sizeof ans - (size_t)n, "%s %d %s", i == 0 ? "" : i + 1 == NCATS ? ", and" : ",",
                    count[k], phrase[count[k] != 1][k]);
    }
    n += snprintf(ans + n, sizeof ans - (size_t)n, ".");
    for (i = 2; i < NCATS && n < (int)sizeof ans; i++)
      if (count[i]) n += snprintf(ans + n, sizeof ans - (size_t)n, " %c%s: %s.", cats[i].label[0] - 32,
                                  cats[i].label + 1, ids[i]);
  }
  cJSON_AddStringToObject(r->results, "answer", ans);
  fprintf(r->summary, "**Answer.** %s\n\nEvery claim with the document's words, the measured value, the category "
          "and the verdict: results.json (\"verdicts\") and claims.csv.\n", ans);
  cJSON_Delete(root);
  cur_run = NULL;
  if (bad || inconsistent) {
    if (bad) fprintf(stderr, "lowp run claims: %d claims could not be checked (bad arguments)\n", bad);
    if (inconsistent) fprintf(stderr, "lowp run claims: %d pairs of the same claim graded differently\n", inconsistent);
    return 1;
  }
  return 0;
}

const lowp_experiment_t lowp_exp_claims = {
    "claims",
    "Which numeric claims of the five documents hold, which hold only with a qualification, which can only have "
    "their own arithmetic re-checked, which are wrong, which contradict their own document or are ambiguous, and "
    "which cannot be checked without a GPU?",
    "Claims as data (experiments/claims.json: id, claim, document and section, quote, and the lowp computation "
    "that checks it); each check computes the measured value from the format descriptors, lowp's correctly "
    "rounded arithmetic, MPFR, the grad-scaler and tensor-core models, exhaustively where cheap (all 2^32 "
    "fp32 inputs of the bf16 conversion code, all 2^23 reciprocal significands, all 16-bit patterns), and "
    "derives the verdict; document 004's numpy code is run as written by Debian's numpy ({python}), with numpy "
    "1.x's promotion of Python integers and with NEP 50's (numpy >= 2); behaviours of PyTorch that lowp cannot run "
    "are cited with their source file. Each verdict falls in one category: holds, holds with a qualification, "
    "arithmetic re-checked (only the document's own arithmetic redone), wrong (refuted), inconsistent within the "
    "document, ambiguous, not checkable here; the same claim in two documents gets the same category.",
    "Every claim measured and quoted verbatim; the format tables hold; the exercise-2 premise, document 001's "
    "fp16 zero threshold (6.10e-5, the smallest normal), document 002's fp16 bits and document 004's numpy bf16 function are wrong; the "
    "+0x8000 formula is round-to-nearest with ties away.",
    params, run, check};
