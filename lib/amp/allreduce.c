/* lowp_allreduce -- gradient all-reduce over W workers: ring and tree orders, low-precision sums, error feedback */

#include "amp/allreduce.h"

#include "status.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

static int fits_fp32(const lowp_format_t *f) {
  if (!f || lowp_format_validate(f, NULL, 0) != 0) return 0;
  return f->precision <= 24 && f->emax <= 127 && f->emin - f->precision >= -126 - 24;
}

static double rnd(double x, const lowp_format_t *f) {
  double y;
  lowp_round_f64(&y, x, f, NULL, LOWP_RND_NE);
  return y;
}

static double tree_sum(const double *x, size_t lo, size_t hi, const lowp_format_t *acc) {
  size_t mid;
  if (hi - lo == 1) return rnd(x[lo], acc);
  mid = lo + (hi - lo) / 2;
  return lowp_add_rounded(tree_sum(x, lo, mid, acc), tree_sum(x, mid, hi, acc), acc);
}

/* --------------------------------------------------------- public API */

double lowp_add_rounded(double a, double b, const lowp_format_t *f) {
  /* TwoSum (Knuth): s + e == a + b exactly, s = fl(a + b) */
  double s = a + b, bb = s - a, e = (a - (s - bb)) + (b - bb);
  if (e != 0 && isfinite(s)) {
    /* round to odd at 53 bits: if s's last significand bit is 0, step one
       ulp toward the exact value (the result is then inexact-odd, which
       carries the sticky information into the final rounding) */
    uint64_t bits;
    memcpy(&bits, &s, sizeof bits);
    if ((bits & 1u) == 0) s = nextafter(s, e > 0 ? INFINITY : -INFINITY);
  }
  return rnd(s, f);
}

double lowp_allreduce_bound(size_t W, lowp_ar_order_t order, double u) {
  double k = 0;
  if (order == LOWP_AR_RING) k = W > 0 ? (double)(W - 1) : 0;
  else {
    size_t w = 1;
    while (w < W) { w *= 2; k += 1; }
  }
  return k * u < 1 ? k * u / (1 - k * u) : INFINITY;
}

const char *lowp_ar_order_name(lowp_ar_order_t order) {
  return order == LOWP_AR_RING ? "ring" : order == LOWP_AR_TREE ? "tree" : "unknown";
}

int lowp_allreduce(float *out, const float *g, size_t W, size_t n, lowp_ar_order_t order,
                   const lowp_format_t *comm, const lowp_format_t *acc, float *resid) {
  double *x;
  size_t i, w, chunk;
  if (!out || !g || W == 0 || (order != LOWP_AR_RING && order != LOWP_AR_TREE))
    return LOWP_EINVAL;
  if (!fits_fp32(comm) || !fits_fp32(acc)) return LOWP_EFORMAT;
  x = malloc(W * sizeof *x);
  if (!x) return LOWP_ENOMEM;
  chunk = (n + W - 1) / W;
  for (i = 0; i < n; i++) {
    double s;
    for (w = 0; w < W; w++) {
      float v = g[w * n + i];
      double c;
      if (resid) v = v + resid[w * n + i];
      c = rnd((double)v, comm);
      if (resid) resid[w * n + i] = (float)((double)v - c);
      x[w] = c;
    }
    if (order == LOWP_AR_RING) {
      size_t start = (i / chunk + 1) % W, k;
      s = rnd(x[start], acc);
      for (k = 1; k < W; k++) s = lowp_add_rounded(s, x[(start + k) % W], acc);
    } else {
      if (W == 1) s = rnd(x[0], acc);
      else s = tree_sum(x, 0, W, acc);
    }
    out[i] = (float)s;
  }
  free(x);
  return LOWP_OK;
}
