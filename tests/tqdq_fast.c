/* tqdq_fast -- lowp_qdq_f32 and lowp_qdq_quant's vectorised path against their element-by-element reference */

#include "cpu.h"
#include "cpu/qdq.h"
#include "format/format.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define COLS 256

/* Low 16 bits put under every high half: the rounding points of the
   formats tested (fp8 and fp6/fp4 round at bit 20 or above, bf16 at bit
   16, fp16 and tf32 at bit 13) with the patterns just below, at and above
   each tie (0x0fff 0x1000 0x1001 for fp16, odd and even neighbours 0x17ff
   0x1800 0x3000), the half-way points of the low half and its extremes. */
static const uint32_t lows[] = {0x0000, 0x0001, 0x07ff, 0x0800, 0x0801, 0x0fff, 0x1000, 0x1001,
                                0x17ff, 0x1800, 0x3000, 0x7fff, 0x8000, 0x8001, 0xc000, 0xffff};

/* Every finite float whose high half is any of the 2^16 patterns (signs,
   -0, every exponent field with subnormals of binary32, the top 7
   fraction bits) and whose low half is in lows, then nrand random finite
   bit patterns; padded with zeros to whole rows of COLS. */
static float *inputs(size_t nrand, size_t *rows) {
  size_t nl = sizeof lows / sizeof lows[0], cap = 65536 * nl + nrand + COLS, n = 0;
  float *x = calloc(cap, sizeof *x);
  lowp_rng_t rng;
  uint32_t h, l;
  *rows = 0;
  if (!x) return NULL;
  for (h = 0; h < 65536; h++)
    for (l = 0; l < nl; l++) {
      uint32_t b = h << 16 | lows[l];
      float v;
      memcpy(&v, &b, sizeof v);
      if (isfinite(v)) x[n++] = v;
    }
  lowp_rng_init(&rng, lowp_test_seed(), 7);
  while (n < 65536 * nl + nrand) {
    uint32_t b = (uint32_t)lowp_rng_next(&rng);
    float v;
    memcpy(&v, &b, sizeof v);
    if (isfinite(v)) x[n++] = v;
  }
  *rows = (n + COLS - 1) / COLS;
  return x;
}

static int same_stats(const lowp_qstats_t *a, const lowp_qstats_t *b) {
  return a->n == b->n && a->nonzero == b->nonzero && a->saturated == b->saturated && a->flushed == b->flushed &&
         a->subnormal == b->subnormal;
}

/* each copy of the vectorised path (lowp_cpu_isa picks it; the limit is
   what LOWP_ISA sets), the widest this CPU has first (no limit) */
static const lowp_isa_t isas[] = {LOWP_ISA_AVX512, LOWP_ISA_AVX2, LOWP_ISA_GENERIC};

/* Both entry points, fast and reference, on x: the same bits and counts.
   The reference is computed once and each of the first nisa copies of the
   fast path (isas) compared with it: the reference path does not depend on
   the ISA, and computing it again for every copy was a third of the test's
   time. */
/* the outputs of compare, allocated once for the largest case (blocks of 1: a scale per value) and
   reused: allocated and freed per case, their pages were faulted in again every time (a third of the
   test's time in the kernel) */
static float *y1, *y2, *s1, *s2;
static double *q1, *q2;

static void compare(const float *x, size_t rows, const lowp_format_t *f, lowp_qscheme_t sch, size_t block,
                    const double *amax, const char *what, size_t nisa) {
  size_t n = rows * COLS, ns = rows * ((COLS + block - 1) / block), v;
  lowp_qstats_t a, b, c, d;
  int r1, r2, r3, r4;
  memset(&b, 0, sizeof b);
  memset(&d, 0, sizeof d);
  r2 = lowp_qdq_f32_ref(y2, x, rows, COLS, f, sch, block, amax, &b);
  r4 = lowp_qdq_quant_ref(q2, s2, x, rows, COLS, f, sch, block, amax, &d);
  for (v = 0; v < nisa; v++) {
    lowp_cpu_isa_limit(isas[v]);
    memset(&a, 0, sizeof a);
    memset(&c, 0, sizeof c);
    r1 = lowp_qdq_f32(y1, x, rows, COLS, f, sch, block, amax, &a);
    r3 = lowp_qdq_quant(q1, s1, x, rows, COLS, f, sch, block, amax, &c);
    lowp_test_check(r1 == LOWP_OK && r2 == LOWP_OK && r3 == LOWP_OK && r4 == LOWP_OK,
                    "%s %s: status %d %d %d %d", f->name, what, r1, r2, r3, r4);
    lowp_test_check(memcmp(y1, y2, n * sizeof *y1) == 0, "%s %s: qdq values differ (isa %s)", f->name, what,
                    lowp_isa_name(lowp_cpu_isa(0)));
    lowp_test_check(memcmp(q1, q2, n * sizeof *q1) == 0, "%s %s: quantized values differ (isa %s)", f->name,
                    what, lowp_isa_name(lowp_cpu_isa(0)));
    lowp_test_check(memcmp(s1, s2, ns * sizeof *s1) == 0, "%s %s: scales differ (isa %s)", f->name, what,
                    lowp_isa_name(lowp_cpu_isa(0)));
    lowp_test_check(same_stats(&a, &b) && same_stats(&c, &d) && same_stats(&a, &c), "%s %s: counts differ (isa %s)",
                    f->name, what, lowp_isa_name(lowp_cpu_isa(0)));
    lowp_test_check(a.n == n && a.nonzero > 0, "%s %s: %zu elements counted", f->name, what, a.n);
  }
  lowp_cpu_isa_limit(isas[0]);
}

/* Every finite value r of fp16, bf16, e4m3 and e5m2 as the quantized value (x = r / s in binary32,
   which quantizes back to r), dequantized (r / s) by each copy, over 64 random scales each
   (fl32(xmax / amax), amax xmax times 2^-30 .. 2^31, below 2^128) and 32 scales near the top of
   binary32 (amax xmax times 2^-128 .. 2^-99: dequantized values among binary32's subnormals, where
   the copies divide in binary32, qdq.c's proof), the fast copies against the reference. */
static void division(size_t nisa) {
  const lowp_format_t *fm[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_E4M3, &LOWP_FMT_E5M2};
  lowp_rng_t g;
  size_t i, k, n, rows;
  float *x = malloc(65536 * sizeof *x);
  if (!lowp_test_check(x != NULL, "allocation")) return;
  lowp_rng_init(&g, lowp_test_seed(), 77);
  for (i = 0; i < sizeof fm / sizeof fm[0]; i++) {
    const lowp_format_t *f = fm[i];
    size_t nv = (size_t)1 << (1 + f->ebits + f->precision - 1), cnt = 0, nsub = 0; /* every encoding */
    for (k = 0; k < 96; k++) {
      int lo = k < 64 ? -30 : -128, span = k < 64 ? 60 : 29;
      double amax = lowp_format_xmax(f) * ldexp(1.0 + lowp_rng_uniform(&g), (int)(lowp_rng_uniform(&g) * span) + lo);
      if (amax > FLT_MAX) amax = FLT_MAX * lowp_rng_uniform(&g); /* a calibrated amax is a binary32 value (bf16) */
      double s = (double)lowp_qdq_scale(amax, f), v;
      n = 0;
      for (size_t e = 0; e < nv && n < 65536; e++)
        if (lowp_decode(&v, (uint64_t)e, f) == LOWP_OK && isfinite(v)) x[n++] = (float)(v / s);
      while (n % COLS) x[n++] = 0.0f;
      rows = n / COLS;
      compare(x, rows, f, LOWP_QS_TENSOR, 32, &amax, "division", nisa);
      cnt += n;
      for (size_t j = 0; j < n; j++) nsub += y2[j] != 0.0f && fabsf(y2[j]) < FLT_MIN;
    }
    lowp_test_check(cnt > 96 * 200, "%s: %zu quotients compared", f->name, cnt);
    lowp_test_check(nsub > 200, "%s: %zu quotients among binary32's subnormals", f->name, nsub);
  }
  free(x);
}

/* The binary32 copy (qdq.c's group_f32_avx2) where its argument has edges: for every format of lowp's
   table that the fast path takes with binary32 values (q.v32: fp16, e4m3, e5m2, e3m2, e2m3, e2m1, and
   tf32, bf16 where the binary64 loop stays) and deep (below), targets t on the format's grid (values and midpoints,
   subnormals, xmax, ovf = xmax + ulp / 2, and the midpoint below the smallest subnormal), built from
   the format's precision and exponent range, each with x = fl32(t / s) and its neighbours, both signs,
   for scales s whose significand is 1, 3, 5, or full (so that x s = t exactly for some, and
   fl32(x s) = t != x s, a midpoint with a nonzero error, for others); scales 2^-40 and 2^40 send
   products below binary32's normals and past FLT_MAX. Each list runs packed and one value in eight
   among random filler (a group of eight with a hard lane runs the binary64 loop whole); products at
   the binary32 copy's own edges (2^-100, binary32's smallest normal, FLT_MAX) too. Every case must be
   hit. */
struct hits {
  size_t exact_mid, inexact_mid, ovf_exact, ovf_inexact, under, over;
};

/* the targets of f: values k 2^(E - p + 1) up to xmax, every k for p <= 6, else 24 of them a binade
   (ends and random; 8 in formats of more than 64 binades), with the midpoint above each; *n set, NULL if
   out of memory */
static double *targets(const lowp_format_t *f, lowp_rng_t *g, size_t *n) {
  const int p = f->precision;
  const double xmax = lowp_format_xmax(f);
  const long kall = 1L << (p - 1);
  size_t cap = (size_t)(f->emax - f->emin + 2) * 64 + 4, m = 0;
  double *t = malloc(cap * sizeof *t);
  int e;
  if (!t) return NULL;
  t[m++] = ldexp(0.5, f->emin - p + 1); /* between 0 and the smallest subnormal */
  for (e = f->emin - 1; e <= f->emax; e++) { /* e = emin - 1: the subnormals, quantum of emin */
    const double u = ldexp(1.0, (e < f->emin ? f->emin : e) - p + 1);
    const long k0 = e < f->emin ? 1 : kall, nk = e < f->emin ? kall - 1 : kall;
    const long w = f->emax - f->emin > 64 ? 8 : 24, q = w / 3;
    long i;
    for (i = 0; i < (nk < w ? nk : w); i++) {
      long k = nk <= w ? k0 + i : i < q ? k0 + i : i < 2 * q ? k0 + nk - 1 - (i - q)
                                                   : k0 + (long)(lowp_rng_uniform(g) * (double)nk);
      double r = (double)k * u;
      if (r > xmax) continue;
      t[m++] = r;
      t[m++] = r + u / 2; /* xmax + u / 2 is ovf */
    }
  }
  *n = m;
  return t;
}

static void f32_case(const lowp_format_t *f, double amax, lowp_rng_t *g, float *x, size_t cap, struct hits *h,
                     const char *what, size_t nisa) {
  const double s = (double)lowp_qdq_scale(amax, f), xmax = lowp_format_xmax(f);
  const double ovf = xmax + ldexp(1.0, f->emax - f->precision + 1) / 2;
  size_t nt = 0, n = 0, i, k, j;
  double *t = targets(f, g, &nt);
  float *hard;
  if (!lowp_test_check(t != NULL, "allocation")) return;
  hard = x + cap / 9 * 8; /* the hard list, then spread over x */
  /* products at qdq.c's edges of the binary32 copy: 2^-100, binary32's smallest normal and subnormal,
     FLT_MAX; then the targets */
  const double edge[] = {0x1p-100, FLT_MIN, 0x1p-149, FLT_MAX};
  const float raw[] = {0x1p-149f, FLT_MIN, FLT_MAX, 0x1.fffffep-1f};
  for (i = 0; i < sizeof raw / sizeof raw[0]; i++) hard[n++] = raw[i], hard[n++] = -raw[i];
  for (i = 0; i < 4 + nt && n + 10 <= cap / 9; i++) {
    float c = (float)((i < 4 ? edge[i] : t[i - 4]) / s), lo = c, hi = c;
    if (isinf(c)) continue; /* x is finite (the entry points refuse infinities) */
    hard[n++] = c, hard[n++] = -c;
    for (k = 0; k < 4; k++) {
      lo = nextafterf(lo, 0.0f), hi = nextafterf(hi, FLT_MAX); /* finite */
      hard[n++] = k & 1 ? -lo : lo, hard[n++] = k & 1 ? hi : -hi;
    }
  }
  hard[n++] = 0.0f, hard[n++] = -0.0f;
  for (i = 0; i < n; i++) { /* what the list hits (binary32 products: -ffp-contract=off) */
    const double v = fabs((double)hard[i] * s);
    const float pf = fabsf(hard[i] * (float)s);
    int mid = 0;
    for (j = 0; j < nt && !mid; j++) mid = (double)pf == t[j] && (j & 1) == 0; /* even j: midpoints */
    h->exact_mid += mid && v == (double)pf && (double)pf != ovf;
    h->inexact_mid += mid && v != (double)pf && (double)pf != ovf;
    h->ovf_exact += (double)pf == ovf && v == ovf;
    h->ovf_inexact += (double)pf == ovf && v != ovf;
    h->under += hard[i] != 0.0f && pf < FLT_MIN;
    h->over += isinf(pf);
  }
  free(t);
  memcpy(x, hard, n * sizeof *x);
  for (i = n; i % COLS; i++) x[i] = 0.0f;
  compare(x, i / COLS, f, LOWP_QS_TENSOR, 32, &amax, what, nisa);
  for (i = 0; i < 8 * n; i++) /* filler below amax (and FLT_MAX) */
    x[i] = i % 8 == 3 ? hard[i / 8] : (float)((lowp_rng_uniform(g) - 0.5) * (amax < FLT_MAX ? amax : FLT_MAX));
  for (; i % COLS; i++) x[i] = 0.0f;
  compare(x, i / COLS, f, LOWP_QS_TENSOR, 32, &amax, what, nisa);
}

/* 8 bits, binary32's subnormals at the bottom, and a range that keeps the binary32 copy (emax + 24 - p <=
   127): the copy's products below 2^-100 matter here (they round to 0 in the built-in formats) */
static const lowp_format_t deep = {"custom", 8, -126, 100, 1, LOWP_INF_IEEE, LOWP_NAN_IEEE, 1, 1, 8, NULL,
                                   "tqdq_fast: 8 bits, subnormals among binary32's"};

static void f32_edges(size_t nisa) {
  const size_t cap = (size_t)9 << 18;
  float *x = malloc(cap * sizeof *x);
  lowp_rng_t g;
  size_t i, k, nf = 0;
  if (!lowp_test_check(x != NULL, "allocation")) return;
  lowp_rng_init(&g, lowp_test_seed(), 78);
  for (i = 0; i <= lowp_format_count(); i++) {
    const lowp_format_t *f = i < lowp_format_count() ? lowp_format_at(i) : &deep;
    const double xmax = lowp_format_xmax(f);
    /* amax = xmax / s: s = 1, 3 2^-5, 5 2^3, 1 +- 2^-13 (x = t (1 -+ 2^-13) for t of 12 bits or fewer:
       x s = t (1 - 2^-26), rounded to t in binary32), a full significand, 2^-40, 2^40, and 2 random */
    double sc[] = {1.0, 0x3p-5, 0x5p3, 0x1.0008p0, 0x1.fff8p-1, 0x1.a5b3c7p-2, 0x1p-40, 0x1p40, 0, 0};
    sc[8] = ldexp((double)(float)(1.0 + lowp_rng_uniform(&g)), -5);
    sc[9] = ldexp((double)(float)(1.0 + lowp_rng_uniform(&g)), 7);
    struct hits h;
    /* the formats the binary32 copy takes (qdq.c: p <= 23, emax + 24 - p <= 127); bf16, tf32 and fp32
       keep the binary64 loop, which the tests above hold (their hundreds of binades made this test four
       times as long) */
    if (!(f->nan != LOWP_NAN_NEGZERO && f->subnormals && f->has_zero && f->has_sign && f->precision <= 23 &&
          f->emax + 24 - f->precision <= 127 && f->emin - f->precision + 1 >= -149 && xmax <= FLT_MAX))
      continue;
    memset(&h, 0, sizeof h);
    nf++;
    for (k = 0; k < sizeof sc / sizeof sc[0]; k++) f32_case(f, xmax / sc[k], &g, x, cap, &h, "f32 edges", nisa);
    /* (fp32's midpoints are not binary32 numbers) */
    lowp_test_check((f->precision == 24 || (h.exact_mid > 0 && h.inexact_mid > 0 && h.ovf_exact > 0 &&
                                            h.ovf_inexact > 0)) && h.under > 0 && h.over > 0,
                    "%s: f32 edges hit: midpoints %zu exact %zu not, ovf %zu exact %zu not, %zu underflow, %zu overflow",
                    f->name, h.exact_mid, h.inexact_mid, h.ovf_exact, h.ovf_inexact, h.under, h.over);
  }
  lowp_test_check(nf >= 7, "%zu formats with binary32 values", nf);
  free(x);
}

/* Formats the fast path takes whose values are not all binary32 numbers (more precision, a wider
   range): their dequantization keeps the binary64 division (qdq.c). */
static const lowp_format_t p30 = {"custom", 30, -126, 127, 1, LOWP_INF_IEEE, LOWP_NAN_IEEE, 1, 1, 8, NULL,
                                  "tqdq_fast: binary32's range, 30 bits"};
static const lowp_format_t wide = {"custom", 11, -510, 511, 1, LOWP_INF_IEEE, LOWP_NAN_IEEE, 1, 1, 10, NULL,
                                   "tqdq_fast: 11 bits, beyond binary32's range"};

int main(void) {
  /* fast-path formats of every kind, and e4m3fnuz (no -0: the reference
     path only) */
  const lowp_format_t *fm[] = {&LOWP_FMT_E4M3, &LOWP_FMT_E5M2, &LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_TF32,
                               &LOWP_FMT_E3M2, &LOWP_FMT_E2M3, &LOWP_FMT_E2M1, &LOWP_FMT_E4M3FNUZ, &p30, &wide};
  /* calibrated amax for the tensor scheme: scales that are not powers of
     two, a power of two, far above 2^700 (s = inf: the reference path) */
  const double am[] = {3.0, 0x1p-20, 7e-31, 1e30, 1e-300};
  size_t rows = 0, i, k, all = sizeof isas / sizeof isas[0];
  float *x;
  lowp_test_start("tqdq_fast");
  x = inputs((size_t)1 << 18, &rows);
  if (!lowp_test_check(x != NULL, "allocation")) return lowp_test_end();
  y1 = malloc(rows * COLS * sizeof *y1);
  y2 = malloc(rows * COLS * sizeof *y2);
  s1 = malloc(rows * COLS * sizeof *s1);
  s2 = malloc(rows * COLS * sizeof *s2);
  q1 = malloc(rows * COLS * sizeof *q1);
  q2 = malloc(rows * COLS * sizeof *q2);
  if (!lowp_test_check(y1 && y2 && s1 && s2 && q1 && q2, "allocation")) return lowp_test_end();
  /* every scheme on the widest copy; on the narrower copies too (what LOWP_ISA=avx2 or generic
     runs): a scale that is not a power of two, one of two, and groups of 3 and 32 (vector tails) */
  for (i = 0; i < sizeof fm / sizeof fm[0]; i++) {
    compare(x, rows, fm[i], LOWP_QS_CAST, 32, NULL, "cast", 1);
    compare(x, rows, fm[i], LOWP_QS_TENSOR, 32, NULL, "tensor", 1);
    compare(x, rows, fm[i], LOWP_QS_ROW, 32, NULL, "row", 1);
    compare(x, rows, fm[i], LOWP_QS_MXBLOCK, 32, NULL, "mx 32", all);
    compare(x, rows, fm[i], LOWP_QS_BLOCK, 128, NULL, "block 128", 1);
    compare(x, rows, fm[i], LOWP_QS_BLOCK, 3, NULL, "block 3", all);
    for (k = 0; k < sizeof am / sizeof am[0]; k++)
      compare(x, rows, fm[i], LOWP_QS_TENSOR, 32, &am[k], "tensor amax", k == 0 ? all : 1);
  }
  division(all);
  f32_edges(all);
  free(x);
  free(y1); free(y2); free(s1); free(s2); free(q1); free(q2);
  return lowp_test_end();
}
