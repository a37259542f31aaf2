/* lowp_dist -- seeded input generators, rounded to the input format */

#include "rng/dist.h"
#include "format/number.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rng/rng.h"
#include "status.h"

/* ------------------------------------------------------ private helpers */

/* uniform [0, 1) from counter idx: 53 random bits */
static double u01(uint64_t seed, uint64_t idx, uint32_t stream) {
  return (double)(lowp_rng_u64(seed, idx, stream) >> 11) * 0x1p-53;
}

static double rne(double v, const lowp_format_t *f) {
  double y;
  (void)lowp_round_f64(&y, v, f, NULL, LOWP_RND_NE);
  return y;
}

/* Fisher-Yates shuffle of perm[0..n) from counters base.. (the modulo bias,
   below 2^-40 for n < 2^24, does not matter for test data) */
static void shuffle(size_t *perm, size_t n, uint64_t seed, uint32_t stream,
                    uint64_t base) {
  size_t i;
  for (i = 0; i < n; i++) perm[i] = i;
  for (i = n; i > 1; i--) {
    size_t j = (size_t)(lowp_rng_u64(seed, base + i, stream) % i), t = perm[i - 1];
    perm[i - 1] = perm[j];
    perm[j] = t;
  }
}

static int ceil_log2(size_t n) {
  int b = 0;
  while (b < 63 && ((size_t)1 << b) < n) b++;
  return b;
}

/* Scales of the cancel sets: large values about 2^el, small quantum q. */
static void cancel_scales(const lowp_format_t *f, size_t n, int *el, double *q) {
  int e = f->emax - 2 - ceil_log2(n);
  if (e < f->emin) e = f->emin;
  *el = e;
  *q = ldexp(1.0, e - 2 * f->precision - 4);
  if (*q < lowp_format_xmins(f)) *q = lowp_format_xmins(f);
}

static double large_value(const lowp_format_t *f, int el, uint64_t seed,
                          uint64_t idx, uint32_t stream) {
  uint64_t r = lowp_rng_u64(seed, idx, stream);
  double v = ldexp(1.0 + (double)(r >> 11) * 0x1p-53, el - (int)(r & 3));
  return rne(v, f);
}

static int64_t small_int(const lowp_format_t *f, uint64_t seed, uint64_t idx,
                         uint32_t stream) {
  int bits = f->precision - 1 < 20 ? f->precision - 1 : 20;
  uint64_t r = lowp_rng_u64(seed, idx, stream);
  int64_t mag = (int64_t)(r >> (64 - 21)) & (((int64_t)1 << bits) - 1);
  return (r & 1) ? -mag : mag;
}

static int check_fmt(const lowp_format_t *f) {
  return (!f || lowp_format_validate(f, NULL, 0) != 0) ? LOWP_EFORMAT : LOWP_OK;
}

/* ----------------------------------------------------------- public API */

const char *lowp_dist_name(lowp_dist_kind_t kind) {
  switch (kind) {
  case LOWP_DIST_UNIFORM01: return "uniform01";
  case LOWP_DIST_UNIFORM11: return "uniform11";
  case LOWP_DIST_NORMAL: return "normal";
  case LOWP_DIST_LOGUNIFORM: return "loguniform";
  case LOWP_DIST_CANCEL: return "cancel";
  case LOWP_DIST_SPREAD: return "spread";
  }
  return "?";
}

int lowp_dist_parse(lowp_dist_t *d, const char *text) {
  static const lowp_dist_kind_t kinds[] = {LOWP_DIST_UNIFORM01, LOWP_DIST_UNIFORM11,
      LOWP_DIST_NORMAL, LOWP_DIST_CANCEL, LOWP_DIST_SPREAD};
  size_t i;
  if (!d || !text) return LOWP_EINVAL;
  d->lo = 1e-8;
  d->hi = 1e8;
  for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (!strcasecmp(text, lowp_dist_name(kinds[i]))) { d->kind = kinds[i]; return LOWP_OK; }
  if (!strncasecmp(text, "loguniform", 10)) {
    const char *s = text + 10, *colon;
    char lo[64];
    d->kind = LOWP_DIST_LOGUNIFORM;
    if (*s == '\0') return LOWP_OK;
    if (*s != ':') return LOWP_EPARSE;
    /* loguniform:LO:HI, each in format/number.h's grammar */
    colon = strchr(s + 1, ':');
    if (!colon || (size_t)(colon - s - 1) >= sizeof lo) return LOWP_EPARSE;
    memcpy(lo, s + 1, (size_t)(colon - s - 1));
    lo[colon - s - 1] = '\0';
    if (lowp_parse_f64(&d->lo, lo) != LOWP_OK || lowp_parse_f64(&d->hi, colon + 1) != LOWP_OK)
      return LOWP_EPARSE;
    if (!(d->lo > 0) || !(d->hi >= d->lo) || isinf(d->hi)) return LOWP_EINVAL;
    return LOWP_OK;
  }
  return LOWP_EPARSE;
}

int lowp_dist_fill(double *x, size_t n, const lowp_dist_t *d, const lowp_format_t *f,
                   uint64_t seed, uint32_t stream) {
  return lowp_dist_fill_at(x, n, d, f, seed, stream, 0);
}

int lowp_dist_fill_at(double *x, size_t n, const lowp_dist_t *d, const lowp_format_t *f,
                      uint64_t seed, uint32_t stream, size_t first) {
  size_t i;
  int st = check_fmt(f);
  if (st) return st;
  if (!d || (n && !x)) return LOWP_EINVAL;
  if (d->kind == LOWP_DIST_LOGUNIFORM && (!(d->lo > 0) || !(d->hi >= d->lo) || isinf(d->hi)))
    return LOWP_EINVAL;
  if (d->kind == LOWP_DIST_CANCEL)
    return first ? LOWP_EINVAL : lowp_dist_cancel(x, n, f, seed, stream, NULL);
  for (i = 0; i < n; i++) {
    uint64_t c = 2 * (uint64_t)(first + i);
    double v;
    switch (d->kind) {
    case LOWP_DIST_UNIFORM01: v = u01(seed, c, stream); break;
    case LOWP_DIST_UNIFORM11: v = 2.0 * u01(seed, c, stream) - 1.0; break;
    case LOWP_DIST_NORMAL: {
      double u1 = 1.0 - u01(seed, c, stream), u2 = u01(seed, c + 1, stream);
      v = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
      break;
    }
    case LOWP_DIST_LOGUNIFORM: {
      double l0 = log(d->lo), l1 = log(d->hi);
      v = exp(l0 + (l1 - l0) * u01(seed, c, stream));
      break;
    }
    case LOWP_DIST_SPREAD: {
      /* exponent uniform on [emin - p + 1, emax]: subnormals to the top */
      uint64_t r = lowp_rng_u64(seed, c, stream);
      long lo = (long)f->emin - f->precision + 1, span = (long)f->emax - lo + 1;
      long e = lo + (long)((r >> 1) % (uint64_t)span);
      v = ldexp(1.0 + u01(seed, c + 1, stream), (int)e);
      if (r & 1) v = -v;
      if (v > lowp_format_xmax(f)) v = lowp_format_xmax(f);
      if (v < -lowp_format_xmax(f)) v = -lowp_format_xmax(f);
      break;
    }
    default: return LOWP_EINVAL;
    }
    x[i] = v;
  }
  /* rounded to f in one pass: lowp_round_array_f64 gives each element the scalar rounding's bits, on its
     vector paths (lowp_round_f64 per value was 4% of error-growth's samples) */
  return lowp_round_array_f64(x, x, n, f, NULL, LOWP_RND_NE);
}

int lowp_dist_cancel(double *x, size_t n, const lowp_format_t *f, uint64_t seed,
                     uint32_t stream, double *exact_sum) {
  size_t ns, np, i, *perm;
  int el;
  double q;
  int64_t isum = 0;
  double *tmp;
  int st = check_fmt(f);
  if (st) return st;
  if (n && !x) return LOWP_EINVAL;
  if (!f->has_sign || !f->has_zero) return LOWP_EINVAL;
  if (exact_sum) *exact_sum = 0.0;
  if (n == 0) return LOWP_OK;
  ns = n / 8 ? n / 8 : 1;
  if ((n - ns) % 2) ns++;
  np = (n - ns) / 2;
  cancel_scales(f, n, &el, &q);
  perm = malloc(n * sizeof *perm);
  tmp = malloc(n * sizeof *tmp);
  if (!perm || !tmp) { free(perm); free(tmp); return LOWP_ENOMEM; }
  for (i = 0; i < np; i++) {
    double v = large_value(f, el, seed, i, stream);
    tmp[2 * i] = v;
    tmp[2 * i + 1] = -v;
  }
  for (i = 0; i < ns; i++) {
    int64_t k = small_int(f, seed, n + i, stream);
    double v = (double)k * q, y; /* exact: |k| < 2^20 */
    if (lowp_round_f64(&y, v, f, NULL, LOWP_RND_NE) != 0) { k = 0; y = 0.0; }
    isum += k;
    tmp[2 * np + i] = y;
  }
  shuffle(perm, n, seed, stream, 3 * (uint64_t)n);
  for (i = 0; i < n; i++) x[i] = tmp[perm[i]];
  free(perm);
  free(tmp);
  /* |isum| < n 2^20 < 2^53 and q >= 2^-1074: the product is exact */
  if (exact_sum) *exact_sum = (double)isum * q;
  return LOWP_OK;
}

int lowp_dist_cancel_gemm(double *a, double *b, size_t m, size_t n, size_t k,
                          const lowp_format_t *f, uint64_t seed) {
  size_t ns, np, i, j, t, *perm;
  int el;
  double q;
  int st = check_fmt(f);
  if (st) return st;
  if ((m && k && !a) || (k && n && !b)) return LOWP_EINVAL;
  if (!f->has_sign || !f->has_zero) return LOWP_EINVAL;
  if (k == 0) return LOWP_OK;
  ns = k / 8 ? k / 8 : 1;
  if ((k - ns) % 2) ns++;
  np = (k - ns) / 2;
  cancel_scales(f, k, &el, &q);
  perm = malloc(k * sizeof *perm);
  if (!perm) return LOWP_ENOMEM;
  shuffle(perm, k, seed, 7, 0);
  for (i = 0; i < m; i++) {
    for (t = 0; t < np; t++) {
      double v = large_value(f, el, seed, i * k + t, 10);
      a[i * k + perm[2 * t]] = v;
      a[i * k + perm[2 * t + 1]] = -v;
    }
    for (t = 2 * np; t < k; t++)
      a[i * k + perm[t]] = rne((double)small_int(f, seed, i * k + t, 11) * q, f);
  }
  for (t = 0; t < k; t++)
    for (j = 0; j < n; j++) {
      size_t src = t < 2 * np ? t / 2 : t; /* a pair shares one draw */
      double u1 = 1.0 - u01(seed, 2 * (src * n + j), 12);
      double u2 = u01(seed, 2 * (src * n + j) + 1, 12);
      b[perm[t] * n + j] = rne(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2), f);
    }
  free(perm);
  return LOWP_OK;
}
