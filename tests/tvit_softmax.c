/* tvit_softmax -- the ViT attention's row softmax: every ISA copy gives the bits of the fp64 definition (libm exp) */

/*
 * kernels/train/vit.c's AVX2 copy takes e^x from its own vector exp (train/exp4_avx2.h) and keeps a row
 * only where a margin proves every quotient rounds as the definition's does, else the row goes to the
 * definition. This test recomputes the definition here (separate binary64 roundings through volatile)
 * and compares every copy this CPU runs (the baseline, AVX2, AVX-512) on seeded rows of N(0, sigma^2)
 * scores (T = 16 as the ViT's tokens, and 4, 64, 1024; 7, not a multiple of 4, always the definition;
 * sigma 0.5 to 3000, where arguments below -700 send rows to the definition), then on special rows
 * (all equal, one far above the others, +-inf, NaN, zeros). It also checks that the vectorised copy
 * keeps most ordinary rows (else it would be tested only on the definition) and leaves every special
 * row to the definition.
 * Run: ctest --test-dir build -R tvit_softmax
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/karith.h"
#include "cpu.h"
#include "rng/rng.h"
#include "testutil.h"
#include "train/vit.h"

/* the definition, one row: max, e_j = exp((s_j - max) scale), their sum left to right, e_j / sum */
static void oracle(uint32_t *p, const float *s, int T, double scale) {
  volatile double mx = s[0], se = 0.0, x, q;
  double e[1024];
  int j;
  for (j = 1; j < T; j++)
    if (s[j] > mx) mx = s[j];
  for (j = 0; j < T; j++) {
    x = (double)s[j] - mx;
    x = x * scale;
    e[j] = exp(x);
    se = se + e[j];
  }
  for (j = 0; j < T; j++) {
    q = e[j] / se;
    p[j] = lowp_ka_bits((float)q);
  }
}

/* n rows of T in S: every copy against the oracle; the rows the vectorised copies left to the
   definition go to *nref (the largest count over the copies that have one); returns the differences */
static long long check(const float *S, size_t n, int T, double scale, const char *what, size_t *nref) {
  static const char *const names[3] = {"generic", "avx2", "avx512"};
  float *P = malloc(n * T * sizeof *P);
  uint32_t *ref = malloc(n * T * sizeof *ref);
  long long bad = 0;
  size_t r, i;
  int isa;
  *nref = 0;
  if (!lowp_test_check(P && ref, "allocation")) {
    free(P), free(ref);
    return 1;
  }
  for (r = 0; r < n; r++) oracle(ref + r * T, S + r * T, T, scale);
  for (isa = 0; isa <= (int)lowp_cpu_isa(1); isa++) {
    size_t k = lowp__vit_softmax_rows(P, S, n, T, scale, (lowp_isa_t)isa);
    if (k > *nref) *nref = k;
    for (i = 0; i < n * T; i++)
      if (lowp_ka_bits(P[i]) != ref[i] && !(isnan(P[i]) && (ref[i] & 0x7fffffffu) > 0x7f800000u)) {
        if (bad < 3)
          printf("  %s, %s, T %d: row %zu, P[%zu] = 0x%08x, the definition 0x%08x\n", names[isa], what, T,
                 i / T, i % T, lowp_ka_bits(P[i]), ref[i]);
        bad++;
      }
  }
  free(P);
  free(ref);
  return bad;
}

/* seeded rows of N(0, sigma^2) scores */
static void sweep(int T, size_t n, double sigma, double scale, lowp_rng_t *g, double maxref) {
  float *S = malloc(n * T * sizeof *S);
  size_t i, nref;
  long long bad;
  if (!lowp_test_check(S != NULL, "allocation")) return;
  for (i = 0; i < n * T; i++) S[i] = (float)(sigma * lowp_rng_normal(g));
  bad = check(S, n, T, scale, "N(0, sigma^2)", &nref);
  lowp_test_check(bad == 0, "T %d, %zu rows, sigma %g, scale %g: every copy equals the definition (%lld differ)",
                  T, n, sigma, scale, bad);
  if (lowp_cpu_isa(1) >= LOWP_ISA_AVX2)
    lowp_test_check((double)nref <= maxref * (double)n,
                    "T %d, sigma %g: %zu of %zu rows left to the definition (at most %g expected)", T, sigma,
                    nref, n, maxref * (double)n);
  free(S);
}

/* special rows of 16: each must go to the definition (and give its bits) */
static void specials(void) {
  enum { T = 16, NS = 6 };
  float S[NS * T];
  size_t nref;
  int r, j;
  for (r = 0; r < NS; r++)
    for (j = 0; j < T; j++) S[r * T + j] = (float)(j % 5) - 2.0f;
  S[0 * T + 3] = INFINITY;            /* max +inf: inf - inf */
  S[1 * T + 7] = -INFINITY;           /* one argument -inf */
  S[2 * T + 0] = NAN;                 /* the definition's max is NaN */
  S[3 * T + 9] = NAN;                 /* a NaN argument */
  S[4 * T + 5] = 4000.0f;             /* the others below -700 after the scale */
  for (j = 0; j < T; j++) S[5 * T + j] = 0.0f; /* all equal: not special, P = 1/16 exactly */
  lowp_test_check(check(S, NS, T, 0.25, "specials", &nref) == 0, "special rows: every copy equals the definition");
  if (lowp_cpu_isa(1) >= LOWP_ISA_AVX2)
    lowp_test_check(nref == NS - 1, "special rows: %zu of %d left to the definition (5 expected)", nref, NS);
}

int main(void) {
  lowp_rng_t g;
  lowp_test_start("tvit_softmax");
  lowp_rng_init(&g, lowp_test_seed(), 31);
  /* the ViT's rows (16 tokens, scale 1/sqrt(16)): one in 2^19 or so fails the margin; allow 1/1000 */
  sweep(16, (size_t)1 << 17, 3.0, 0.25, &g, 1e-3);
  sweep(16, (size_t)1 << 15, 0.5, 0.25, &g, 1e-3);
  sweep(16, (size_t)1 << 15, 30.0, 0.25, &g, 1e-3);
  sweep(16, (size_t)1 << 12, 3000.0, 0.25, &g, 1.0); /* spreads past -700: many rows to the definition */
  sweep(4, (size_t)1 << 15, 3.0, 1.0, &g, 1e-3);
  sweep(64, (size_t)1 << 13, 3.0, 0.125, &g, 1e-2);
  sweep(1024, (size_t)1 << 8, 3.0, 0.03125, &g, 0.1);
  sweep(7, (size_t)1 << 12, 3.0, 0.25, &g, 1.0); /* not a multiple of 4: the definition */
  specials();
  return lowp_test_end();
}
