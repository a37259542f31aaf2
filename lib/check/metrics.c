/* lowp_check metrics the field gates on: SQNR (dB), cosine similarity, and
   the mismatch count of an rtol/atol test (lib/check/pipeline.h) */

#include <math.h>
#include <stddef.h>

#include "check/pipeline.h"

static int vclass(double v) {
  if (isnan(v)) return 1;
  if (isinf(v)) return v > 0 ? 2 : 3;
  return 0;
}

/* SQNR as torchao's compute_error computes it (torchao/quantization/utils.py:
   20 log10(||x|| / ||x - got||)), and cosine similarity (torch.nn.functional.
   cosine_similarity of the flattened tensors), both against the exact result
   of the rounded inputs and over the elements where both are finite. The sums
   run in binary64 in index order (deterministic), each scaled by the largest
   magnitude so that squares of large fp32 values do not overflow. */
void lowp_check_output_similarity(lowp_check_output_t *o) {
  double sx = 0, sd = 0, sg = 0, sxg = 0, scale = 0;
  size_t i;
  if (!o) return;
  for (i = 0; i < o->count; i++) {
    double g = o->got[i], x = o->exact[i];
    if (!isfinite(g) || !isfinite(x)) continue;
    if (fabs(x) > scale) scale = fabs(x);
    if (fabs(g) > scale) scale = fabs(g);
  }
  if (scale == 0) scale = 1;
  for (i = 0; i < o->count; i++) {
    double g = o->got[i], x = o->exact[i], d;
    if (!isfinite(g) || !isfinite(x)) continue;
    g /= scale;
    x /= scale;
    d = g - x;
    sx += x * x;
    sd += d * d;
    sg += g * g;
    sxg += x * g;
  }
  if (o->n_class_mismatch) {
    o->sqnr_db = -INFINITY;
    o->cosine = NAN;
    return;
  }
  o->sqnr_db = sd == 0 ? INFINITY : (sx == 0 ? -INFINITY : 10 * log10(sx / sd));
  if (sx == 0 && sg == 0) o->cosine = 1;
  else if (sx == 0 || sg == 0) o->cosine = 0;
  else o->cosine = sxg / (sqrt(sx) * sqrt(sg));
}

size_t lowp_check_mismatch(const lowp_check_result_t *r, double rtol, double atol,
                           size_t *total, double *worst_q, int *wj, size_t *wi) {
  size_t n = 0, all = 0, i;
  double worst = 0;
  int j;
  if (wj) *wj = 0;
  if (wi) *wi = (size_t)-1;
  for (j = 0; r && j < r->n_out; j++) {
    const lowp_check_output_t *o = &r->out[j];
    if (o->absent) continue;
    for (i = 0; i < o->count; i++) {
      double g = o->got[i], x = o->exact[i], q;
      /* torch.isclose: |actual - expected| <= atol + rtol |expected|;
         matching infinities and NaNs (NaN where the exact result is NaN,
         or the class of the exact result rounded to the output) agree */
      if (!isfinite(g) || !isfinite(x))
        q = (vclass(g) == vclass(x) || vclass(g) == vclass(o->exact_out[i])) ? 0 : INFINITY;
      else {
        double d = fabs(g - x), tol = atol + rtol * fabs(x);
        q = d == 0 ? 0 : (tol > 0 ? d / tol : INFINITY);
      }
      all++;
      if (q > 1) n++;
      if (q > worst) {
        worst = q;
        if (wj) *wj = j;
        if (wi) *wi = i;
      }
    }
  }
  if (total) *total = all;
  if (worst_q) *worst_q = worst;
  return n;
}
