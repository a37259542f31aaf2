/* tqdq_bs -- lowp_qdq_bs_f32 (one fused pass, vectorised copies) against its three-pass reference, and lowp_bs_amax's copies */

#include "cpu.h"
#include "cpu/qdq_bs.h"
#include "format/bsquant.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 24
#define COLS 200 /* not a multiple of 16 or 32: short last blocks */
#define N (ROWS * COLS)

/* each copy of the vectorised paths (lowp_cpu_isa picks it; LOWP_ISA limits it), the widest first */
static const lowp_isa_t isas[] = {LOWP_ISA_AVX512, LOWP_ISA_AVX2, LOWP_ISA_GENERIC};
#define NISA (sizeof isas / sizeof isas[0])

static int same_stats(const lowp_qstats_t *a, const lowp_qstats_t *b) {
  return a->n == b->n && a->nonzero == b->nonzero && a->saturated == b->saturated && a->flushed == b->flushed &&
         a->subnormal == b->subnormal;
}

/* the scalar definition of lowp_bs_amax */
static double amax_ref(const float *x, size_t n) {
  double a = 0.0;
  size_t i;
  for (i = 0; i < n; i++) {
    double v = fabs((double)x[i]);
    if (isnan(v)) return NAN;
    if (v > a) a = v;
  }
  return a;
}

/* the totals over every case: that the branches of the fused pass were taken (saturated elements,
   NaN scales) */
static size_t g_sat, g_cases;

/* x through bf on every copy, out of place and in place, against the reference: the same bits and counts.
   The reference runs on the generic copies of lowp_bs_quantize_amax's loops (its blocks and amax are
   compiled per instruction set too), so each wider copy is held to it as well (and tbsquant holds the
   widest to its own oracle). */
static void compare(const float *x, size_t rows, size_t cols, const lowp_bsformat_t *bf, double tamax,
                    const char *what) {
  static float y1[N], y2[N];
  size_t n = rows * cols, v;
  lowp_qstats_t a, b;
  int r1, r2;
  memset(&b, 0, sizeof b);
  lowp_cpu_isa_limit(LOWP_ISA_GENERIC);
  r2 = lowp_qdq_bs_f32_ref(y2, x, rows, cols, bf, tamax, &b);
  for (v = 0; v < NISA; v++) {
    const char *isa;
    lowp_cpu_isa_limit(isas[v]);
    isa = lowp_isa_name(lowp_cpu_isa(0));
    memset(&a, 0, sizeof a);
    r1 = lowp_qdq_bs_f32(y1, x, rows, cols, bf, tamax, &a);
    lowp_test_check(r1 == LOWP_OK && r2 == LOWP_OK, "%s rule %d %s: status %d %d", bf->name, (int)bf->rule, what,
                    r1, r2);
    lowp_test_check(memcmp(y1, y2, n * sizeof *y1) == 0, "%s rule %d %s: values differ (isa %s)", bf->name,
                    (int)bf->rule, what, isa);
    lowp_test_check(same_stats(&a, &b), "%s rule %d %s: counts differ (isa %s): sat %zu/%zu nz %zu/%zu fl %zu/%zu "
                    "sub %zu/%zu", bf->name, (int)bf->rule, what, isa, a.saturated, b.saturated, a.nonzero,
                    b.nonzero, a.flushed, b.flushed, a.subnormal, b.subnormal);
    memcpy(y1, x, n * sizeof *y1); /* in place */
    memset(&a, 0, sizeof a);
    (void)lowp_qdq_bs_f32(y1, y1, rows, cols, bf, tamax, &a);
    lowp_test_check(memcmp(y1, y2, n * sizeof *y1) == 0 && same_stats(&a, &b),
                    "%s rule %d %s: in place differs (isa %s)", bf->name, (int)bf->rule, what, isa);
    lowp_test_check(amax_ref(x, n) == lowp_bs_amax(x, n) || (isnan(amax_ref(x, n)) && isnan(lowp_bs_amax(x, n))),
                    "%s: lowp_bs_amax differs from its definition (isa %s)", what, isa);
  }
  lowp_cpu_isa_limit(isas[0]);
  g_sat += b.saturated;
  g_cases++;
}

/* The inputs: k = 0 normals with outliers, one power of two per block spread over binary32's range
   (blocks that saturate under floor: amax in the top of its binade); 1 raw bit patterns (NaN, inf,
   subnormals), a NaN or an infinity in some blocks only; 2 tiny values: zeros, subnormals, blocks of
   zeros and of -0. */
static void fill(float *x, int k, lowp_rng_t *g) {
  size_t i;
  for (i = 0; i < N; i++) {
    if (k == 0) {
      int e = (int)(i / 16 * 7919 % 200) - 120;
      x[i] = (float)ldexp(lowp_rng_normal(g) * (lowp_rng_next(g) % 50 == 0 ? 40.0 : 1.0), e);
    } else if (k == 1) {
      uint32_t u = (uint32_t)lowp_rng_next(g);
      if (((u >> 23) & 0xff) == 0xff && (u & 0x1f00) != 0) u &= 0xbfffffffu; /* mostly finite */
      memcpy(&x[i], &u, sizeof u);
    } else {
      uint32_t u = (uint32_t)lowp_rng_next(g) & 0x807fffffu; /* subnormal or zero */
      if (lowp_rng_next(g) % 3 == 0) u &= 0x80000000u;
      memcpy(&x[i], &u, sizeof u);
    }
  }
  if (k == 2)
    for (i = 0; i < 64; i++) x[COLS + i] = i < 32 ? 0.0f : -0.0f;
}

int main(void) {
  static float x[N];
  /* every rule with a power-of-two scale, absmax's and ggml's with other scale formats, nvfp4 */
  static const char *specs[] = {"elem=e2m1,scale=ue4m3,block=16,rule=absmax", "elem=e4m3,scale=e8m0,block=7",
                                "elem=e5m2,scale=bf16,block=5,rule=absmax", "elem=e2m1,scale=fp16,block=32,rule=ggml",
                                "elem=e2m1,scale=e4m3,block=16,tensor", "elem=e3m2,scale=e8m0,block=1,rule=rceil",
                                "elem=int4,scale=ue4m3,block=16,rule=ggml"};
  const lowp_bsrule_t rules[] = {LOWP_BSR_FLOOR, LOWP_BSR_CEIL, LOWP_BSR_EVEN, LOWP_BSR_RCEIL, LOWP_BSR_NVFP4,
                                 LOWP_BSR_ABSMAX, LOWP_BSR_GGML};
  const double tam[] = {-1.0, 0.3, 1.7, 0.0}; /* x's own; times x's amax (blocks above it saturate); 0 */
  size_t i, r, k, t;
  lowp_rng_t g;
  lowp_test_start("tqdq_bs");
  lowp_rng_init(&g, lowp_test_seed(), 11);
  for (k = 0; k < 3; k++) {
    fill(x, (int)k, &g);
    for (i = 0; i < lowp_bsformat_count() + sizeof specs / sizeof specs[0]; i++) {
      lowp_bsformat_t bf;
      char err[200];
      if (i < lowp_bsformat_count()) bf = *lowp_bsformat_at(i);
      else if (lowp_bsformat_parse(&bf, specs[i - lowp_bsformat_count()], err, sizeof err) != LOWP_OK) {
        lowp_test_check(0, "%s", err);
        continue;
      }
      for (r = 0; r < sizeof rules / sizeof rules[0]; r++) {
        bf.rule = rules[r];
        if (lowp_bsformat_validate(&bf, NULL, 0) != LOWP_OK) continue;
        for (t = 0; t < (bf.tensor_scale ? sizeof tam / sizeof tam[0] : 1); t++) {
          double a = tam[t] < 0 || k == 1 ? tam[t] : tam[t] * amax_ref(x, N);
          compare(x, ROWS, COLS, &bf, a, k == 0 ? "normals" : k == 1 ? "bits" : "tiny");
        }
        compare(x, 3, COLS - 1, &bf, -1.0, "short rows");
      }
    }
  }
  lowp_test_check(g_sat > 0 && g_cases > 100, "%zu cases, %zu saturated elements: the saturating blocks untested",
                  g_cases, g_sat);
  return lowp_test_end();
}
