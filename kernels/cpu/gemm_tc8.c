/* lowp_gemm_tc8 -- fast fp8 GEMM on the tensor-core block-FMA model (see gemm_tc8.h) */

#include "bits.h"
#include "cpu/gemm_tc8.h"
#include "cpu/gemm_tc_fast.h"

#include "status.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

/* 2^e for -1022 <= e <= 1023, from its bits (ldexp is a library call). */
static double pow2(int e) {
  uint64_t u = (uint64_t)(e + 1023) << 52;
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* floor(log2 |v|) of a nonzero normal double, from its bits. */
static int ilog2(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return (int)((u >> 52) & 0x7ff) - 1023;
}


/* The block's sum S 2^L (S != 0) rounded to P significant bits in fp32's
   exponent range (emin -126, emax 127), by rnd (rtz or rne); beyond the
   range: infinity (the model's ovf_inf). As lowp_bfma's round_out. */
static double round_block(int64_t S, int L, int P, lowp_rounding_t rnd) {
  int neg = S < 0;
  uint64_t U = neg ? (uint64_t)(-(S + 1)) + 1 : (uint64_t)S;
  int nb = lowp_bitlen64(U), e = L + nb - 1, q, sh;
  double v;
  if (e > LOWP_FMT_FP32.emax) return neg ? -INFINITY : INFINITY;
  q = e - P + 1;
  if (q < LOWP_FMT_FP32.emin - P + 1) q = LOWP_FMT_FP32.emin - P + 1;
  sh = q - L;
  if (sh > 0) {
    uint64_t r = sh >= 64 ? 0 : U >> sh;
    if (rnd == LOWP_RND_NE && sh <= 64) {
      uint64_t rem = sh == 64 ? U : U & ((UINT64_C(1) << sh) - 1);
      uint64_t half = UINT64_C(1) << (sh - 1);
      if (rem > half || (rem == half && (r & 1))) r++;
    }
    v = (double)r * pow2(q);
    if (v >= pow2(LOWP_FMT_FP32.emax + 1)) return neg ? -INFINITY : INFINITY;
  } else {
    v = (double)U * pow2(L);
  }
  return neg ? -v : v;
}

/* One block FMA: d = cut sum of products a[i] b[i] (i < n) and c. The
   zeros as lowp_bfma: c = 0 aligned at emin (c0align=emin) once a product
   is nonzero; zero addends only: c (+0, or -0 from an earlier block),
   signed as zsum says; a result rounded to zero as zrnd says. */
static double block(const double *a, const int8_t *xa, const double *b, const int8_t *xb,
                    size_t n, double c, int P, const lowp_bfma_t *p) {
  double pr[1024], d;
  int X = INT_MIN, L, allneg = signbit(c) != 0;
  size_t i;
  int64_t S = 0;
  double sc;
  for (i = 0; i < n; i++) {
    pr[i] = a[i] * b[i]; /* exact: <= 8 + 8 significant bits */
    allneg &= signbit(pr[i]) != 0;
    if (pr[i] != 0.0 && xa[i] + xb[i] > X) X = xa[i] + xb[i];
  }
  if (c != 0.0) {
    int xc = ilog2(c);
    if (xc < LOWP_FMT_FP32.emin) xc = LOWP_FMT_FP32.emin;
    if (xc > X) X = xc;
  } else if (X == INT_MIN) { /* every addend zero */
    return allneg && !p->zsum_pos ? -0.0 : 0.0;
  } else if (p->c0_emin && X < LOWP_FMT_FP32.emin) {
    X = LOWP_FMT_FP32.emin;
  }
  L = X - p->F;
  sc = pow2(-L);
  for (i = 0; i < n; i++) S += (int64_t)(pr[i] * sc); /* truncation toward zero: the cut */
  if (c != 0.0) S += (int64_t)(c * sc);
  if (S == 0) return 0.0;
  d = round_block(S, L, P, p->out_rnd);
  return d == 0 && p->zrnd_pos ? 0.0 : d;
}

/* ----------------------------------------------------------- public API */

int lowp_tc8_supported(const lowp_tc_model_t *m, const lowp_format_t *in) {
  const lowp_bfma_t *p;
  if (!m || !in) return LOWP_EINVAL;
  p = &m->bfma;
  if (lowp_format_width(in) > 8 || in->emin < -64 || in->emax > 63) return LOWP_EUNSUPPORTED;
  if (lowp_bfma_validate(p, NULL, 0) != LOWP_OK || p->b > 1024) return LOWP_EUNSUPPORTED;
  if (p->align != LOWP_RND_TZ || p->sticky || p->late_c || p->interleave || !p->ovf_inf)
    return LOWP_EUNSUPPORTED;
  if (p->out_rnd != LOWP_RND_TZ && p->out_rnd != LOWP_RND_NE) return LOWP_EUNSUPPORTED;
  /* |S| < (b + 1) 2^(F + 2) must convert exactly through int64 products */
  if (p->F + 3 + lowp_bitlen64((uint64_t)p->b + 1) > 52) return LOWP_EUNSUPPORTED;
  return LOWP_OK;
}

int lowp_tc8_exponents(int8_t *x, const double *v, size_t n, const lowp_format_t *in) {
  size_t i;
  for (i = 0; i < n; i++) {
    int e;
    if (!isfinite(v[i])) return LOWP_ERANGE;
    if (v[i] == 0.0) { x[i] = 0; continue; }
    e = ilog2(v[i]);
    x[i] = (int8_t)(e > in->emin ? e : in->emin);
  }
  return LOWP_OK;
}

double lowp_tc8_dot(const double *a, const int8_t *xa, const double *b, const int8_t *xb,
                    size_t k, const lowp_tc_model_t *m) {
  const lowp_bfma_t *p = &m->bfma;
  int P = p->out_frac > 0 && p->out_frac + 1 < LOWP_FMT_FP32.precision ? p->out_frac + 1
                                                                        : LOWP_FMT_FP32.precision;
  size_t i, w = (size_t)p->b;
  double c = 0.0;
  for (i = 0; i < k; i += w) {
    size_t n = k - i < w ? k - i : w;
    c = block(a + i, xa + i, b + i, xb + i, n, c, P, p);
  }
  return c;
}

/* The original loop: one lowp_tc8_dot per chunk and output (the fallback
   when the integer kernel cannot allocate its packed copies). */
static void gemm_tc8_dots(float *y, const double *a, const int8_t *xa, size_t rows, size_t k,
                          const double *bt, const int8_t *xb, size_t n,
                          const lowp_tc_model_t *m, size_t chunk, size_t nch,
                          const float *ascale, const float *bscale, const float *bias) {
  long i;
#pragma omp parallel for schedule(static)
  for (i = 0; i < (long)rows; i++) {
    size_t j, c;
    for (j = 0; j < n; j++) {
      float total = 0.0f;
      for (c = 0; c < nch; c++) {
        size_t lo = c * chunk, len = k - lo < chunk ? k - lo : chunk;
        double part = lowp_tc8_dot(a + (size_t)i * k + lo, xa + (size_t)i * k + lo,
                                   bt + j * k + lo, xb + j * k + lo, len, m);
        float ds = (float)((double)ascale[(size_t)i * nch + c] * (double)bscale[j * nch + c]);
        total = total + (float)(part * (double)ds);
      }
      y[(size_t)i * n + j] = bias ? total + bias[j] : total;
    }
  }
}

/* The same on the integer kernel (cpu/gemm_tc_fast.h): each chunk is a GEMM
   of the model without promotion from C = +0, then scaled and added in the
   same order. Returns LOWP_ENOMEM when it cannot run (the caller falls back). */
static int gemm_tc8_fast(float *y, const double *a, size_t rows, size_t k, const double *bt,
                         size_t n, const lowp_tc_model_t *m, const lowp_format_t *in,
                         size_t chunk, size_t nch, const float *ascale, const float *bscale,
                         const float *bias) {
  lowp_gemm_tc_cfg_t cfg;
  double *ac = malloc((rows * chunk + 1) * sizeof *ac), *bc = malloc((chunk * n + 1) * sizeof *bc);
  double *part = malloc((rows * n + 1) * sizeof *part);
  size_t c, i, j, l;
  int st = LOWP_ENOMEM;
  cfg.model = *m, cfg.model.promote = 0, cfg.in = in, cfg.out = &LOWP_FMT_FP32;
  if (ac && bc && part && lowp_gemm_tc_fast_ok(&cfg)) {
    for (i = 0; i < rows * n; i++) y[i] = 0.0f;
    for (c = 0, st = LOWP_OK; c < nch && st == LOWP_OK; c++) {
      size_t lo = c * chunk, len = k - lo < chunk ? k - lo : chunk;
      for (i = 0; i < rows; i++) memcpy(ac + i * len, a + i * k + lo, len * sizeof *ac);
      for (l = 0; l < len; l++)
        for (j = 0; j < n; j++) bc[l * n + j] = bt[j * k + lo + l];
      memset(part, 0, rows * n * sizeof *part);
      st = lowp_gemm_tc_fast(part, ac, bc, rows, n, len, &cfg, NULL);
      for (i = 0; i < rows && st == LOWP_OK; i++)
        for (j = 0; j < n; j++) {
          float ds = (float)((double)ascale[i * nch + c] * (double)bscale[j * nch + c]);
          y[i * n + j] = y[i * n + j] + (float)(part[i * n + j] * (double)ds);
        }
    }
    if (st == LOWP_OK && bias)
      for (i = 0; i < rows; i++)
        for (j = 0; j < n; j++) y[i * n + j] = y[i * n + j] + bias[j];
  }
  free(ac), free(bc), free(part);
  return st;
}

int lowp_gemm_tc8(float *y, const double *a, const int8_t *xa, size_t rows, size_t k,
                  const double *bt, const int8_t *xb, size_t n, const lowp_tc_model_t *m,
                  const lowp_format_t *in, size_t chunk, const float *ascale,
                  const float *bscale, const float *bias) {
  size_t nch;
  int st = lowp_tc8_supported(m, in);
  if (st) return st;
  if (chunk == 0 || (chunk < k && chunk % (size_t)m->bfma.b)) return LOWP_EINVAL;
  if (chunk > k) chunk = k ? k : 1;
  nch = k ? (k + chunk - 1) / chunk : 0;
  if (gemm_tc8_fast(y, a, rows, k, bt, n, m, in, chunk, nch, ascale, bscale, bias) == LOWP_OK)
    return LOWP_OK;
  gemm_tc8_dots(y, a, xa, rows, k, bt, xb, n, m, chunk, nch, ascale, bscale, bias);
  return LOWP_OK;
}
