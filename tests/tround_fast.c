/* tround_fast -- the fast array path agrees with the reference loop, bit for bit */

/*
 * lib/format/round_fast.c rounds binary32 arrays with branch-free integer
 * arithmetic; lowp_encode_array_f32_ref rounds one element at a time
 * through the scalar core (lowp_round_f32 + lowp_encode). The contract
 * (round_fast.h): wherever lowp_round_fast_applies says 1, both give the
 * same bits. This program holds them to it on every applicable (format,
 * mode, policy): binade edges, +-half ulps and +-1 binary32 ulp around
 * every rounding boundary, subnormals of binary32 and of the target,
 * +-0, +-inf, NaNs with payloads and both signs, and seeded random bit
 * patterns. The exhaustive 2^32 sweep is tests/long/tround_fast_exhaustive.c.
 *
 * Build and run: cmake --build build --target tround_fast && build/tround_fast
 * (LOWP_TEST_SEED=n or =random changes the random inputs).
 */

#include "round_cases.h"
#include "testutil.h"

#include "format/format.h"
#include "format/round_fast.h"
#include "rng/rng.h"
#include "status.h"

#include <fenv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- types */

typedef struct {
  uint32_t *v;
  size_t n, cap;
} bitvec;

/* ------------------------------------------------------ private helpers */

static void push(bitvec *b, uint32_t u) {
  if (b->n == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 4096;
    b->v = realloc(b->v, b->cap * sizeof *b->v);
    if (!b->v) { printf("out of memory\n"); exit(1); }
  }
  b->v[b->n++] = u;
}


static uint64_t elem(const void *p, size_t i, int width) {
  if (width <= 8) return ((const uint8_t *)p)[i];
  if (width <= 16) return ((const uint16_t *)p)[i];
  return ((const uint32_t *)p)[i];
}

/* Every policy switch the fast path claims to handle, alone and combined. */
static policy_case policies[9];
static size_t npolicies;

static void make_policies(void) { npolicies = round_policies(policies); }

/*
 * Run the fast path and the reference on in[0..n) and compare every
 * element. One check per call; the first mismatches are printed with the
 * input in hex bits and hex float, and both results.
 */
static const char *const isas[] = {"generic", "avx2", "avx512"};
#define NISAS (sizeof isas / sizeof isas[0])

static void compare(const lowp_format_t *f, const policy_case *pc,
                    lowp_rounding_t rnd, const uint32_t *in, size_t n,
                    const char *what) {
  int width = lowp_format_width(f);
  size_t bytes = (width <= 8 ? 1 : width <= 16 ? 2 : 4) * (n ? n : 1);
  float *x = malloc((n ? n : 1) * sizeof *x);
  void *fast = malloc(bytes), *ref = malloc(bytes);
  size_t i, k;
  int sr;
  if (!x || !fast || !ref) { printf("out of memory\n"); exit(1); }
  memcpy(x, in, n * sizeof *x);
  sr = lowp_encode_array_f32_ref(ref, x, n, f, &pc->pol, rnd);
  for (k = 0; k < NISAS; k++) {
    size_t bad = 0, shown = 0;
    int sf = lowp_round_fast_encode_f32_isa(fast, x, n, f, &pc->pol, rnd, isas[k]);
    if (sf == LOWP_EUNSUPPORTED) continue; /* this CPU cannot run that copy */
    for (i = 0; i < n; i++) {
      uint64_t a = elem(fast, i, width), b = elem(ref, i, width);
      if (a != b) {
        if (shown++ < 3)
          printf("  %s %s %s %s [%s]: x = 0x%08lx (%a): fast 0x%llx, reference 0x%llx\n",
                 what, f->name, lowp_rounding_name(rnd), pc->name, isas[k],
                 (unsigned long)in[i], (double)x[i], (unsigned long long)a,
                 (unsigned long long)b);
        bad++;
      }
    }
    lowp_test_check(sf == LOWP_OK && sr == LOWP_OK && bad == 0,
                    "%s: %s %s %s [%s]: %zu of %zu elements differ (status %d/%d)",
                    what, f->name, lowp_rounding_name(rnd), pc->name, isas[k],
                    bad, n, sf, sr);
  }
  /* the values (lowp_round_array_f32's fast path) against its reference
     loop, every copy, bit for bit (NaN included) */
  {
    float *yf = malloc((n ? n : 1) * sizeof *yf), *yr = malloc((n ? n : 1) * sizeof *yr);
    if (!yf || !yr) { printf("out of memory\n"); exit(1); }
    sr = lowp_round_array_f32_ref(yr, x, n, f, &pc->pol, rnd);
    for (k = 0; k < NISAS; k++) {
      size_t bad = 0, shown = 0;
      int sf = lowp_round_fast_values_f32_isa(yf, x, n, f, &pc->pol, rnd, isas[k]);
      if (sf == LOWP_EUNSUPPORTED) continue;
      for (i = 0; i < n; i++)
        if (memcmp(&yf[i], &yr[i], sizeof yf[i])) {
          if (shown++ < 3)
            printf("  values %s %s %s %s [%s]: x = 0x%08lx (%a): fast %a, reference %a\n",
                   what, f->name, lowp_rounding_name(rnd), pc->name, isas[k],
                   (unsigned long)in[i], (double)x[i], (double)yf[i], (double)yr[i]);
          bad++;
        }
      lowp_test_check(sf == LOWP_OK && sr == LOWP_OK && bad == 0,
                      "values %s: %s %s %s [%s]: %zu of %zu elements differ (status %d/%d)",
                      what, f->name, lowp_rounding_name(rnd), pc->name, isas[k], bad, n, sf, sr);
    }
    free(yf), free(yr);
  }
  free(x); free(fast); free(ref);
}

/* The binary32 exponent fields where f's rounding changes character: its
   subnormal range, its normal range, and a few binades beyond each end,
   plus binary32's own subnormals and specials. */
static int binade_relevant(int E, const lowp_format_t *f) {
  int lo = f->emin + 127 - f->precision - 3, hi = f->emax + 127 + 3;
  return E <= 2 || E >= 253 || (E >= lo && E <= hi);
}

/*
 * Inputs around every rounding boundary of f: in each relevant binade of
 * binary32, with d the number of fraction bits below f's quantum there,
 * fractions j*2^d + o for the first and last few j and o in {0, 1,
 * half - 1, half, half + 1, 2^d - 1}: values of f, their midpoints (ties),
 * and one binary32 ulp either side. Both signs.
 */
static void edge_inputs(bitvec *b, const lowp_format_t *f) {
  static const uint32_t nans[] = {0x7f800001u, 0x7fc00000u, 0x7fffffffu,
                                  0x7fa5a5a5u, 0x7fbfffffu, 0x7fc00001u};
  static const uint32_t fixed[] = {0x00000000u, 0x00000001u, 0x007fffffu,
                                   0x00400000u, 0x00800000u, 0x7f7fffffu,
                                   0x7f800000u, 0x3f800000u, 0x3fffffffu};
  int E, s;
  size_t i;
  for (s = 0; s < 2; s++) {
    uint32_t sg = s ? 0x80000000u : 0;
    for (i = 0; i < sizeof nans / sizeof nans[0]; i++) push(b, sg | nans[i]);
    for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++) push(b, sg | fixed[i]);
    for (E = 0; E < 255; E++) {
      /* quantum of f at this binade, and binary32's own quantum there */
      int e = (E ? E : 1) - 127;
      int q = (e > f->emin ? e : f->emin) - f->precision + 1;
      int d = q - ((E ? E : 1) - 150);
      uint32_t j, J, o[6];
      int k, jj;
      if (!binade_relevant(E, f)) continue;
      if (d > 23) { /* the whole binade lies within one quantum of f */
        static const uint32_t fr[] = {0, 1, 0x3fffff, 0x400000, 0x400001, 0x7fffff};
        for (k = 0; k < 6; k++) push(b, sg | ((uint32_t)E << 23) | fr[k]);
        continue;
      }
      J = UINT32_C(1) << (23 - d); /* multiples of 2^d in the fraction */
      o[0] = 0; o[1] = 1;
      o[2] = d ? (UINT32_C(1) << (d - 1)) - 1 : 0;
      o[3] = d ? UINT32_C(1) << (d - 1) : 0;
      o[4] = d ? (UINT32_C(1) << (d - 1)) + 1 : 0;
      o[5] = (UINT32_C(1) << d) - 1;
      for (jj = 0; jj < 8; jj++) {
        j = jj < 4 ? (uint32_t)jj : J - (uint32_t)(8 - jj);
        if (j >= J) continue;
        for (k = 0; k < 6; k++) {
          uint32_t fr = j * (UINT32_C(1) << d) + o[k];
          if (fr > 0x7fffffu) continue;
          push(b, sg | ((uint32_t)E << 23) | fr);
        }
      }
    }
  }
}

/* n random bit patterns: half over all of binary32, half with exponents
   within a few binades of f's range (random signs, fractions, NaNs). */
static void random_inputs(bitvec *b, const lowp_format_t *f, size_t n,
                          uint32_t stream) {
  int lo = f->emin + 127 - f->precision - 2, hi = f->emax + 127 + 2;
  size_t i;
  if (lo < 0) lo = 0;
  if (hi > 255) hi = 255;
  for (i = 0; i < n; i++) {
    uint64_t r = lowp_rng_u64(lowp_test_seed(), i, stream);
    uint32_t u = (uint32_t)r;
    if (i & 1) {
      uint32_t E = (uint32_t)lo + (uint32_t)((r >> 32) % (uint64_t)(hi - lo + 1));
      u = (u & 0x807fffffu) | (E << 23);
    }
    push(b, u);
  }
}

/* The formats under test: the built-ins the fast path covers, and specs
   that stretch its assumptions (p = 1, p = 23, spare exponent bits, an
   all-ones NaN below the top field, fnuz-style NaN, no NaN at all). */
static const char *const custom_specs[] = {
    "p=5,emin=-6,emax=7",
    "p=1,emin=-2,emax=3,noinf,nan=none",
    "p=23,emin=-126,emax=127",
    "p=3,emin=-14,emax=15,noinf,nan=allones,ebits=6",
    "p=4,emin=-7,emax=7,noinf,nan=negzero",
    "p=2,emin=-126,emax=127,noinf,nan=allones",
    "p=3,emin=-6,emax=8,noinf,nan=allones",
};
#define NCUSTOM (sizeof custom_specs / sizeof custom_specs[0])

/* ----------------------------------------------------------------- main */

/* The values of the fnuz formats on AVX2 round by a binary32 addition in
   the caller's rounding mode (rne and rna only under to-nearest): every
   copy's values under FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO against the
   reference computed in the default environment, every mode, edges and
   random patterns, odd lengths (tails) included. */
static void check_fenv_values(void) {
  static const char *const fmts[] = {"e4m3fnuz", "e5m2fnuz", "e4m3", "fp16"};
  static const int fe[] = {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
  bitvec b = {0};
  size_t i, m, k, j, n;
  for (i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
    const lowp_format_t *f = lowp_format_by_name(fmts[i]);
    float *x, *yr, *yf;
    b.n = 0;
    edge_inputs(&b, f);
    random_inputs(&b, f, 4093, 300u + (uint32_t)i);
    n = b.n;
    x = malloc(n * sizeof *x), yr = malloc(n * sizeof *yr), yf = malloc(n * sizeof *yf);
    if (!x || !yr || !yf) { printf("out of memory\n"); exit(1); }
    memcpy(x, b.v, n * sizeof *x);
    for (m = 0; m < NMODES; m++) {
      (void)lowp_round_array_f32_ref(yr, x, n, f, NULL, modes[m]);
      for (k = 0; k < NISAS; k++)
        for (j = 0; j < sizeof fe / sizeof fe[0]; j++) {
          int st;
          size_t bad;
          fesetround(fe[j]);
          st = lowp_round_fast_values_f32_isa(yf, x, n, f, NULL, modes[m], isas[k]);
          fesetround(FE_TONEAREST);
          if (st == LOWP_EUNSUPPORTED) continue;
          for (bad = 0; bad < n && !memcmp(&yf[bad], &yr[bad], sizeof *yf); bad++)
            ;
          lowp_test_check(st == LOWP_OK && bad == n,
                          "values %s %s [%s] under rounding mode %zu: element %zu differs",
                          fmts[i], lowp_rounding_name(modes[m]), isas[k], j, bad);
        }
    }
    free(x), free(yr), free(yf);
  }
  free(b.v);
}

/* the values path on a copy, for round_check_stream */
static int values32(void *y, const void *x, size_t n, const lowp_format_t *f,
                    lowp_rounding_t rnd, const char *isa) {
  return lowp_round_fast_values_f32_isa(y, x, n, f, NULL, rnd, isa);
}

/* The values of arrays of LOWP_ROUND_STREAM_BYTES and more, written by the
   AVX2/AVX-512 loops with streaming stores (formats of p <= 22 but bf16 and
   tf32): as tround_fast64's check_stream, in binary32, every copy. */
static void check_stream_values(void) {
  static const char *const fmts[] = {"fp16", "e4m3fnuz"};
  const size_t n = LOWP_ROUND_STREAM_BYTES / sizeof(float) + 37;
  bitvec b = {0};
  size_t i;
  for (i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
    b.n = 0;
    random_inputs(&b, lowp_format_by_name(fmts[i]), n, 800u + (uint32_t)i);
    round_check_stream("values", lowp_format_by_name(fmts[i]), values32, b.v, n, sizeof(float),
                       isas, NISAS);
  }
  free(b.v);
}

int main(void) {
  lowp_format_t fs[32];
  size_t nf, i, m, p;
  bitvec b = {0};
  static const char *const covered[] = {"tf32", "fp16", "bf16", "e4m3", "e5m2",
      "e4m3fnuz", "e5m2fnuz", "e3m2", "e2m3", "e2m1"};
  static const char *const not_covered[] = {"fp64", "fp32", "e8m0"};

  lowp_test_start("tround_fast");
  make_policies();
  printf("compiled copies run on this CPU:");
  for (i = 0; i < NISAS; i++) {
    uint16_t y;
    float one = 1.0f;
    if (lowp_round_fast_encode_f32_isa(&y, &one, 1, &LOWP_FMT_FP16, NULL,
                                       LOWP_RND_NE, isas[i]) == LOWP_OK)
      printf(" %s", isas[i]);
  }
  printf(" (dispatch picks %s)\n", lowp_round_fast_isa());
  lowp_test_check(lowp_round_fast_encode_f32_isa(NULL, NULL, 0, &LOWP_FMT_FP16, NULL,
                                                 LOWP_RND_NE, "sse9") == LOWP_EINVAL,
                  "an unknown compiled-copy name is an error");

  /* where the fast path applies, and where it must not claim to */
  for (i = 0; i < sizeof covered / sizeof covered[0]; i++) {
    const lowp_format_t *f = lowp_format_by_name(covered[i]);
    for (m = 0; m < NMODES; m++)
      for (p = 0; p < npolicies; p++)
        lowp_test_check(lowp_round_fast_applies(f, &policies[p].pol, modes[m]) == 1,
                        "fast path should apply to %s %s %s", covered[i],
                        lowp_rounding_name(modes[m]), policies[p].name);
    lowp_test_check(!lowp_round_fast_applies(f, NULL, LOWP_RND_SR),
                    "stochastic rounding stays on the reference loop (%s)", covered[i]);
  }
  for (i = 0; i < sizeof not_covered / sizeof not_covered[0]; i++)
    lowp_test_check(!lowp_round_fast_applies(lowp_format_by_name(not_covered[i]),
                                             NULL, LOWP_RND_NE),
                    "fast path must not claim %s", not_covered[i]);
  {
    lowp_format_t g;
    lowp_test_check(lowp_format_parse(&g, "p=5,emin=-6,emax=7,nosub", NULL, 0) == 0 &&
                    !lowp_round_fast_applies(&g, NULL, LOWP_RND_NE),
                    "fast path must not claim formats without subnormals");
    lowp_test_check(!lowp_round_fast_applies(&LOWP_FMT_FP16, NULL, (lowp_rounding_t)99),
                    "fast path must not claim an invalid mode");
  }

  nf = round_fast_formats(fs, sizeof fs / sizeof fs[0], lowp_round_fast_applies, custom_specs,
                          NCUSTOM);
  for (i = 0; i < nf; i++)
    lowp_test_check(lowp_round_fast_applies(&fs[i], NULL, LOWP_RND_TZ),
                    "fast path should apply to %s", fs[i].name);
  /* p = 1: the encoding's last bit is not the significand's */
  lowp_test_check(!lowp_round_fast_applies(&fs[nf - NCUSTOM + 1], NULL, LOWP_RND_TO) &&
                  !lowp_round_fast_applies(&fs[nf - NCUSTOM + 1], NULL, LOWP_RND_NE),
                  "rne and rto with p = 1 stay on the reference loop");

  /* special values and boundaries: every format x mode x policy */
  for (i = 0; i < nf; i++) {
    b.n = 0;
    edge_inputs(&b, &fs[i]);
    for (m = 0; m < NMODES; m++)
      for (p = 0; p < npolicies; p++)
        if (lowp_round_fast_applies(&fs[i], &policies[p].pol, modes[m]))
          compare(&fs[i], &policies[p], modes[m], b.v, b.n, "edges");
  }

  /* random bit patterns: every format x mode, default and satfinite */
  for (i = 0; i < nf; i++) {
    b.n = 0;
    random_inputs(&b, &fs[i], (size_t)1 << 16, (uint32_t)i);
    for (m = 0; m < NMODES; m++)
      for (p = 0; p < 2; p++)
        if (lowp_round_fast_applies(&fs[i], &policies[p].pol, modes[m]))
          compare(&fs[i], &policies[p], modes[m], b.v, b.n, "random");
  }

  /* a larger random sample for the four formats of `lowp bench round`:
     2^20 patterns each, every mode, default policy; rne also satfinite */
  {
    static const char *const big[] = {"fp16", "bf16", "e4m3", "e5m2"};
    for (i = 0; i < 4; i++) {
      const lowp_format_t *f = lowp_format_by_name(big[i]);
      b.n = 0;
      random_inputs(&b, f, (size_t)1 << 20, 100u + (uint32_t)i);
      for (m = 0; m < NMODES; m++)
        compare(f, &policies[0], modes[m], b.v, b.n, "random-1M");
      compare(f, &policies[1], LOWP_RND_NE, b.v, b.n, "random-1M");
    }
  }

  /* the public entry point takes the fast path and agrees; odd lengths
     (vector tails); in place (bits == x) */
  {
    static const size_t lens[] = {0, 1, 7, 15, 17, 33, 1001};
    size_t k, j;
    b.n = 0;
    random_inputs(&b, &LOWP_FMT_FP16, 1001, 7);
    for (k = 0; k < sizeof lens / sizeof lens[0]; k++) {
      uint16_t y1[1001], y2[1001];
      float x[1001];
      memcpy(x, b.v, lens[k] * sizeof *x);
      lowp_encode_array_f32(y1, x, lens[k], &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
      lowp_encode_array_f32_ref(y2, x, lens[k], &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
      lowp_test_check(memcmp(y1, y2, lens[k] * sizeof *y1) == 0,
                      "lowp_encode_array_f32 fp16 n=%zu differs from the reference", lens[k]);
    }
    for (j = 0; j < 2; j++) {
      const lowp_format_t *f = j ? &LOWP_FMT_TF32 : &LOWP_FMT_FP16;
      float x[1001];
      uint32_t ref[1001];
      int w = lowp_format_width(f);
      memcpy(x, b.v, sizeof x);
      lowp_encode_array_f32_ref(ref, x, 1001, f, NULL, LOWP_RND_NE);
      lowp_encode_array_f32(x, x, 1001, f, NULL, LOWP_RND_NE); /* in place */
      for (k = 0; k < 1001; k++)
        if (elem(x, k, w) != elem(ref, k, w)) break;
      lowp_test_check(k == 1001, "in-place %s: element %zu differs", f->name, k);
    }
  }

  free(b.v);
  check_fenv_values();
  check_stream_values();
  return lowp_test_end();
}
