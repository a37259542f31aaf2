/* tqdq -- lowp_qdq_f32: scales, MX exponents and counts against a brute-force nearest-value oracle */

#include "cpu/qdq.h"
#include "format/format.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ oracle */

/* The nonnegative values of an fp8 format, ascending, built from the
   definition (subnormals k 2^(emin-p+1), normals (1 + k/2^(p-1)) 2^e, up to
   xmax given as the documented literal), with no lowp code. Consecutive
   values differ by one in the encoding, so an even index is an even
   significand. */
typedef struct {
  double v[256];
  int n;
} grid_t;

static void make_grid(grid_t *g, int p, int emin, int emax, double xmax) {
  int e, k, m = 1 << (p - 1);
  g->n = 0;
  for (k = 0; k < m; k++) g->v[g->n++] = ldexp((double)k, emin - p + 1);
  for (e = emin; e <= emax; e++)
    for (k = 0; k < m; k++) {
      double v = ldexp(1.0 + (double)k / m, e);
      if (v <= xmax) g->v[g->n++] = v;
    }
}

/* round to nearest, ties to even index, saturating */
static double nearest(const grid_t *g, double x) {
  double a = fabs(x), r;
  int i;
  if (a >= g->v[g->n - 1]) r = g->v[g->n - 1];
  else {
    for (i = 0; g->v[i + 1] < a; i++) {}
    if (a - g->v[i] < g->v[i + 1] - a) r = g->v[i];
    else if (a - g->v[i] > g->v[i + 1] - a) r = g->v[i + 1];
    else r = (i % 2 == 0) ? g->v[i] : g->v[i + 1];
  }
  return x < 0 ? -r : r;
}

/* --------------------------------------------------------------- tests */

static void test_mx_exponent(void) {
  const lowp_format_t *e4 = &LOWP_FMT_E4M3, *e5 = &LOWP_FMT_E5M2;
  lowp_test_check(lowp_qdq_mx_exponent(448.0, e4) == 0, "e4m3 amax 448 -> 2^0");
  lowp_test_check(lowp_qdq_mx_exponent(511.9, e4) == 0, "e4m3 amax 511.9 -> 2^0");
  lowp_test_check(lowp_qdq_mx_exponent(512.0, e4) == 1, "e4m3 amax 512 -> 2^1");
  lowp_test_check(lowp_qdq_mx_exponent(1.0, e4) == -8, "e4m3 amax 1 -> 2^-8");
  lowp_test_check(lowp_qdq_mx_exponent(0.75, e4) == -9, "e4m3 amax 0.75 -> 2^-9");
  lowp_test_check(lowp_qdq_mx_exponent(1.0, e5) == -15, "e5m2 amax 1 -> 2^-15");
  lowp_test_check(lowp_qdq_mx_exponent(ldexp(1.0, -140), e4) == -127, "clamped to E8M0 min 2^-127");
  lowp_test_check(lowp_qdq_mx_exponent(ldexp(1.5, 200), e4) == 127, "clamped to E8M0 max 2^127");
  lowp_test_check(lowp_qdq_mx_exponent(0.0, e4) == -127, "all-zero block");
  lowp_test_check(lowp_qdq_scale(0.0, e4) == 1.0f && lowp_qdq_scale(2.0, e4) == 224.0f,
                  "per-tensor scale xmax/amax");
}

/* Each scheme against the oracle: y = nearest(x * s) / s with the scale
   the scheme prescribes, recomputed here. */
static void test_schemes(void) {
  enum { R = 5, C = 70 }; /* 70 = two MX blocks of 32 and one of 6 */
  /* ovf: where round to nearest overflows, xmax + half its ulp */
  static const struct { const lowp_format_t *f; int p, emin, emax; double xmax, ovf; } fm[2] = {
      {&LOWP_FMT_E4M3, 4, -6, 8, 448.0, 464.0}, {&LOWP_FMT_E5M2, 3, -14, 15, 57344.0, 61440.0}};
  float x[R * C], y[R * C], sv[R * 3];
  double qv[R * C];
  lowp_rng_t rng;
  int fi, scheme, i;
  lowp_rng_init(&rng, lowp_test_seed(), 1);
  for (i = 0; i < R * C; i++) {
    /* magnitudes over 12 binades, some zeros, rows of different size */
    double u = lowp_rng_uniform(&rng);
    x[i] = u < 0.1 ? 0.0f
                   : (float)(ldexp(lowp_rng_uniform(&rng) + 0.5, (int)(lowp_rng_next(&rng) % 24) - 18 + 2 * (i / C)) *
                             (u < 0.55 ? -1 : 1));
  }
  for (fi = 0; fi < 2; fi++) {
    grid_t g;
    make_grid(&g, fm[fi].p, fm[fi].emin, fm[fi].emax, fm[fi].xmax);
    for (scheme = 0; scheme <= 4; scheme++) {
      lowp_qstats_t st, st2;
      size_t sat = 0, fl = 0, nz = 0;
      int r, c, bad = 0, badq = 0, st_ok;
      memset(&st, 0, sizeof st);
      memset(&st2, 0, sizeof st2);
      st_ok = lowp_qdq_f32(y, x, R, C, fm[fi].f, (lowp_qscheme_t)scheme, 32, NULL, &st);
      st_ok |= lowp_qdq_quant(qv, sv, x, R, C, fm[fi].f, (lowp_qscheme_t)scheme, 32, NULL, &st2);
      for (r = 0; r < R; r++)
        for (c = 0; c < C; c++) {
          double s = 1.0, amax = 0.0, want, q;
          int k, lo = 0, hi = R * C;
          if (scheme == LOWP_QS_ROW) { lo = r * C; hi = lo + C; }
          if (scheme == LOWP_QS_MXBLOCK || scheme == LOWP_QS_BLOCK) {
            lo = r * C + c / 32 * 32;
            hi = lo + 32 < (r + 1) * C ? lo + 32 : (r + 1) * C;
          }
          for (k = lo; k < hi; k++) amax = fmax(amax, fabs((double)x[k]));
          if (scheme == LOWP_QS_TENSOR || scheme == LOWP_QS_ROW || scheme == LOWP_QS_BLOCK)
            s = amax > 0 ? (float)(fm[fi].xmax / amax) : 1.0;
          if (scheme == LOWP_QS_MXBLOCK) {
            int e;
            frexp(amax, &e);
            s = ldexp(1.0, -(e - 1 - fm[fi].emax));
          }
          q = nearest(&g, (double)x[r * C + c] * s);
          want = (float)(q / s);
          if (y[r * C + c] != want) bad++;
          /* lowp_qdq_quant: the same q, and fl32(1 / s) for the element's group of 32 */
          if (qv[r * C + c] != q || sv[r * 3 + c / 32] != (float)(1.0 / s)) badq++;
          if (fabs((double)x[r * C + c] * s) >= fm[fi].ovf) sat++;
          if (x[r * C + c] != 0) { nz++; fl += q == 0; }
        }
      lowp_test_check(st_ok == LOWP_OK && bad == 0, "%s scheme %d: %d elements differ from the oracle",
                      fm[fi].f->name, scheme, bad);
      lowp_test_check(badq == 0 && !memcmp(&st, &st2, sizeof st), "%s scheme %d: lowp_qdq_quant, %d q values "
                      "or scales differ from the oracle", fm[fi].f->name, scheme, badq);
      lowp_test_check(st.n == R * C && st.nonzero == nz && st.saturated == sat && st.flushed == fl,
                      "%s scheme %d counts: n %zu nz %zu/%zu sat %zu/%zu flushed %zu/%zu", fm[fi].f->name,
                      scheme, st.n, st.nonzero, nz, st.saturated, sat, st.flushed, fl);
      if (scheme == LOWP_QS_CAST)
        lowp_test_check(fl > 0 && (fi == 1 || sat > 0), "%s cast: data exercise flush%s (%zu, %zu)",
                        fm[fi].f->name, fi ? "" : " and saturation", fl, sat);
      if (scheme == LOWP_QS_TENSOR || scheme == LOWP_QS_ROW || scheme == LOWP_QS_BLOCK)
        lowp_test_check(sat == 0, "%s scheme %d: amax scaling never saturates", fm[fi].f->name, scheme);
    }
  }
}

/* One scale for the whole tensor (cast, per tensor): quant runs whole rows together, tasks of at least
   4096 values (kernels/cpu/qdq.c); the values and counts are those of the rows quantized one call each
   with the same amax (one row per task), over rows that end a task part-way and a last task short. */
static void test_tasks(void) {
  enum { R = 150, C = 70 };
  static float x[R * C], y[R * C], yr[R * C];
  lowp_rng_t rng;
  int i, sch, r;
  lowp_rng_init(&rng, lowp_test_seed(), 7);
  for (i = 0; i < R * C; i++)
    x[i] = lowp_rng_uniform(&rng) < 0.1 ? 0.0f : (float)(lowp_rng_normal(&rng) * ldexp(1.0, i % 23 - 14));
  for (sch = 0; sch < 2; sch++) {
    const lowp_qscheme_t scheme = sch ? LOWP_QS_TENSOR : LOWP_QS_CAST;
    const double amax = 3.0; /* below the data's largest: saturation counted too */
    lowp_qstats_t st, sr;
    int st_ok;
    memset(&st, 0, sizeof st);
    memset(&sr, 0, sizeof sr);
    st_ok = lowp_qdq_f32(y, x, R, C, &LOWP_FMT_E4M3, scheme, 0, &amax, &st);
    for (r = 0; r < R; r++)
      st_ok |= lowp_qdq_f32(yr + r * C, x + r * C, 1, C, &LOWP_FMT_E4M3, scheme, 0, &amax, &sr);
    lowp_test_check(st_ok == LOWP_OK && !memcmp(y, yr, sizeof y), "scheme %d: %d x %d at once = row by row",
                    (int)scheme, R, C);
    lowp_test_check(!memcmp(&st, &sr, sizeof st) && st.n == R * C && st.nonzero > 0 && st.flushed > 0 &&
                        (sch == 0 || st.saturated > 0),
                    "scheme %d counts at once = row by row (n %zu nz %zu sat %zu flushed %zu)", (int)scheme, st.n,
                    st.nonzero, st.saturated, st.flushed);
  }
}

/* A static (calibrated) amax below the data's: the excess saturates to
   +-amax (up to the scale's fp32 rounding); y aliasing x is allowed. */
static void test_static_amax(void) {
  float x[6] = {0.5f, -1.0f, 2.0f, -4.0f, 1.5f, 0.0f};
  double amax = 1.0;
  lowp_qstats_t st;
  memset(&st, 0, sizeof st);
  lowp_test_check(lowp_qdq_f32(x, x, 1, 6, &LOWP_FMT_E4M3, LOWP_QS_TENSOR, 0, &amax, &st) == LOWP_OK,
                  "static amax status");
  lowp_test_check(x[0] == 0.5f && x[1] == -1.0f && x[2] == 1.0f && x[3] == -1.0f && x[4] == 1.0f &&
                      x[5] == 0.0f,
                  "saturated to +-amax: %g %g %g %g %g", x[0], x[1], x[2], x[3], x[4]);
  lowp_test_check(st.saturated == 3 && st.nonzero == 5 && st.flushed == 0, "static amax counts %zu %zu",
                  st.saturated, st.nonzero);
}

/* MX: blocks are independent; fp16/bf16 cast agrees with lowp_round. */
static void test_blocks_and_cast(void) {
  float x[64], y1[64], y2[64];
  int i, same = 1;
  for (i = 0; i < 64; i++) x[i] = (float)((i % 7) - 3) * 0.013f * (float)(1 + i);
  lowp_qdq_f32(y1, x, 1, 64, &LOWP_FMT_E4M3, LOWP_QS_MXBLOCK, 32, NULL, NULL);
  x[40] = 1000.0f; /* a large value in block 2 */
  lowp_qdq_f32(y2, x, 1, 64, &LOWP_FMT_E4M3, LOWP_QS_MXBLOCK, 32, NULL, NULL);
  for (i = 0; i < 32; i++) same &= y1[i] == y2[i];
  lowp_test_check(same, "an outlier in block 2 leaves block 1 unchanged");
  /* MX's scale 2^(floor(log2 1000) - 8) = 2 puts 1000 at 500 > 448: it
     saturates to 448 * 2 (OCP MX v1.0 clamps; the top of a binade is lost) */
  lowp_test_check(y2[40] == 896.0f, "MX outlier 1000 saturates to 896 (got %g)", y2[40]);
  for (i = 0; i < 64; i++) {
    double r;
    lowp_round_f64(&r, (double)x[i], &LOWP_FMT_BF16, NULL, LOWP_RND_NE);
    y1[i] = (float)r;
  }
  lowp_qdq_f32(y2, x, 8, 8, &LOWP_FMT_BF16, LOWP_QS_CAST, 0, NULL, NULL);
  lowp_test_check(!memcmp(y1, y2, sizeof y1), "bf16 cast = lowp_round_f64 to bf16");
  x[3] = NAN;
  lowp_test_check(lowp_qdq_f32(y2, x, 1, 64, &LOWP_FMT_E4M3, LOWP_QS_TENSOR, 0, NULL, NULL) == LOWP_EINVAL,
                  "NaN input refused");
  x[3] = 0;
  lowp_test_check(lowp_qdq_f32(y2, x, 1, 64, &LOWP_FMT_E4M3, LOWP_QS_MXBLOCK, 0, NULL, NULL) == LOWP_EINVAL,
                  "block 0 refused");
  lowp_test_check(lowp_qdq_f32(y2, x, 1, 64, &LOWP_FMT_E4M3, (lowp_qscheme_t)9, 32, NULL, NULL) == LOWP_EINVAL,
                  "unknown scheme refused");
}

int main(void) {
  lowp_test_start("tqdq");
  test_mx_exponent();
  test_schemes();
  test_static_amax();
  test_tasks();
  test_blocks_and_cast();
  return lowp_test_end();
}
