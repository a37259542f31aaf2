/* tround_fast64 -- lowp_round_array_f64's fast path agrees with the reference loop, bit for bit */

/*
 * lib/format/round_fast64.c rounds binary64 arrays to values of a format
 * with branch-free integer arithmetic on the bits; lowp_round_array_f64_ref
 * calls the scalar core (lowp_round_f64) per element. The contract
 * (round_fast.h): wherever lowp_round_fast64_applies says 1, both give the
 * same bits, on every compiled copy this CPU runs (generic, avx2, avx512).
 * Held here on every applicable (format, mode, policy): in every binade
 * where f's rounding changes character, the values of f, their midpoints
 * (ties) and one binary64 ulp either side, at the first and last
 * significands of the binade; binary64 subnormals, +-0, +-inf, NaNs with
 * payloads, DBL_MAX and f's overflow threshold; both signs; then seeded
 * random bit patterns; odd lengths and in place.
 *
 * Build and run: cmake --build build --target tround_fast64 && build/tround_fast64
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

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define HAVE_MXCSR 1
#endif

/* ---------------------------------------------------------------- types */

typedef struct {
  uint64_t *v;
  size_t n, cap;
} bitvec;

/* ------------------------------------------------------ private helpers */

static void push(bitvec *b, uint64_t u) {
  if (b->n == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 4096;
    b->v = realloc(b->v, b->cap * sizeof *b->v);
    if (!b->v) { printf("out of memory\n"); exit(1); }
  }
  b->v[b->n++] = u;
}

static const char *const isas[] = {"generic", "avx2", "avx512"};
#define NISAS (sizeof isas / sizeof isas[0])

/* Every copy of the fast path against the reference loop on in[0..n);
   the public entry point too. One check per copy. */
static void compare(const lowp_format_t *f, const policy_case *pc, lowp_rounding_t rnd,
                    const uint64_t *in, size_t n, const char *what) {
  size_t sz = (n ? n : 1) * sizeof(double), i, k;
  double *x = malloc(sz), *yf = malloc(sz), *yr = malloc(sz);
  int sr;
  if (!x || !yf || !yr) { printf("out of memory\n"); exit(1); }
  memcpy(x, in, n * sizeof *x);
  sr = lowp_round_array_f64_ref(yr, x, n, f, &pc->pol, rnd);
  for (k = 0; k <= NISAS; k++) {
    size_t bad = 0, shown = 0;
    const char *isa = k < NISAS ? isas[k] : "public";
    int sf = k < NISAS ? lowp_round_fast_values_f64_isa(yf, x, n, f, &pc->pol, rnd, isa)
                       : lowp_round_array_f64(yf, x, n, f, &pc->pol, rnd);
    if (sf == LOWP_EUNSUPPORTED) continue; /* this CPU cannot run that copy */
    for (i = 0; i < n; i++)
      if (memcmp(&yf[i], &yr[i], sizeof yf[i])) {
        if (shown++ < 3)
          printf("  %s %s %s %s [%s]: x = 0x%016llx (%a): fast %a, reference %a\n", what,
                 f->name, lowp_rounding_name(rnd), pc->name, isa, (unsigned long long)in[i],
                 x[i], yf[i], yr[i]);
        bad++;
      }
    lowp_test_check(sf == LOWP_OK && sr == LOWP_OK && bad == 0,
                    "%s: %s %s %s [%s]: %zu of %zu elements differ (status %d/%d)", what,
                    f->name, lowp_rounding_name(rnd), pc->name, isa, bad, n, sf, sr);
  }
  free(x), free(yf), free(yr);
}

/*
 * Inputs around every rounding boundary of f: in each binary64 binade from
 * a few below f's smallest subnormal to a few above its largest value (and
 * the first and last binades of binary64), with d the fraction bits below
 * f's quantum there, fractions j 2^d + o for the first and last few j and
 * o in {0, 1, half - 1, half, half + 1, 2^d - 1}. Both signs.
 */
static void edge_inputs(bitvec *b, const lowp_format_t *f) {
  static const uint64_t fixed[] = {
      0, 1, 0x000fffffffffffffu, 0x0008000000000000u, 0x0010000000000000u,
      0x7fefffffffffffffu, 0x7ff0000000000000u, 0x7ff0000000000001u, 0x7ff8000000000000u,
      0x7fffffffffffffffu, 0x7ff4a5a5a5a5a5a5u, 0x3ff0000000000000u, 0x3fffffffffffffffu};
  const int lo = f->emin + 1023 - f->precision - 3, hi = f->emax + 1023 + 3;
  int E, s;
  size_t i;
  for (s = 0; s < 2; s++) {
    uint64_t sg = s ? UINT64_C(1) << 63 : 0;
    for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++) push(b, sg | fixed[i]);
    for (E = 0; E < 2047; E++) {
      int e = (E ? E : 1) - 1023, q, d, k, jj;
      uint64_t J, o[6];
      if (!(E <= 2 || E >= 2045 || (E >= lo && E <= hi))) continue;
      q = (e > f->emin ? e : f->emin) - f->precision + 1;
      d = q - ((E ? E : 1) - 1075);
      if (d > 52) { /* the whole binade within one quantum of f */
        static const uint64_t fr[] = {0, 1, 0x7ffffffffffffu, 0x8000000000000u,
                                      0x8000000000001u, 0xfffffffffffffu};
        for (k = 0; k < 6; k++) push(b, sg | ((uint64_t)E << 52) | fr[k]);
        continue;
      }
      J = UINT64_C(1) << (52 - d);
      o[0] = 0, o[1] = 1;
      o[2] = d ? (UINT64_C(1) << (d - 1)) - 1 : 0;
      o[3] = d ? UINT64_C(1) << (d - 1) : 0;
      o[4] = d ? (UINT64_C(1) << (d - 1)) + 1 : 0;
      o[5] = (UINT64_C(1) << d) - 1;
      for (jj = 0; jj < 8; jj++) {
        uint64_t j = jj < 4 ? (uint64_t)jj : J - (uint64_t)(8 - jj);
        if (j >= J) continue;
        for (k = 0; k < 6; k++) {
          uint64_t fr = j * (UINT64_C(1) << d) + o[k];
          if (fr <= 0xfffffffffffffu) push(b, sg | ((uint64_t)E << 52) | fr);
        }
      }
    }
  }
}

/* n random bit patterns: half over all of binary64, half with exponents
   within a few binades of f's range */
static void random_inputs(bitvec *b, const lowp_format_t *f, size_t n, uint32_t stream) {
  int lo = f->emin + 1023 - f->precision - 2, hi = f->emax + 1023 + 2;
  size_t i;
  if (lo < 0) lo = 0;
  if (hi > 2047) hi = 2047;
  for (i = 0; i < n; i++) {
    uint64_t u = lowp_rng_u64(lowp_test_seed(), i, stream);
    if (i & 1) {
      uint64_t E = (uint64_t)lo + lowp_rng_u64(lowp_test_seed(), i, stream + 1000u) %
                                      (uint64_t)(hi - lo + 1);
      u = (u & 0x800fffffffffffffu) | (E << 52);
    }
    push(b, u);
  }
}

/* formats beyond the built-ins: p = 52 (the widest), p = 1, binary64's
   exponent range, an all-ones NaN, fnuz-style, no NaN at all */
static const char *const custom_specs[] = {
    "p=52,emin=-1022,emax=1023",
    "p=1,emin=-2,emax=3,noinf,nan=none",
    "p=30,emin=-1000,emax=1000",
    "p=3,emin=-14,emax=15,noinf,nan=allones,ebits=6",
    "p=4,emin=-7,emax=7,noinf,nan=negzero",
    "p=11,emin=-1022,emax=1023,noinf,nan=allones",
};
#define NCUSTOM (sizeof custom_specs / sizeof custom_specs[0])

/* where the fast path claims to apply, and where it must not */
static void check_applies(const policy_case *pc, size_t npc) {
  static const char *const covered[] = {"fp32", "tf32", "fp16", "bf16", "e4m3", "e5m2",
                                        "e4m3fnuz", "e5m2fnuz", "e3m2", "e2m3", "e2m1"};
  static const char *const not_covered[] = {"fp64", "e8m0"};
  lowp_format_t g;
  size_t i, m, p;
  for (i = 0; i < sizeof covered / sizeof covered[0]; i++) {
    const lowp_format_t *f = lowp_format_by_name(covered[i]);
    for (m = 0; m < NMODES; m++)
      for (p = 0; p < npc; p++)
        lowp_test_check(lowp_round_fast64_applies(f, &pc[p].pol, modes[m]) ==
                            (f->precision > 1 || (modes[m] != LOWP_RND_NE &&
                                                  modes[m] != LOWP_RND_TO)),
                        "fast path (f64) on %s %s %s", covered[i],
                        lowp_rounding_name(modes[m]), pc[p].name);
    lowp_test_check(!lowp_round_fast64_applies(f, NULL, LOWP_RND_SR),
                    "stochastic rounding stays on the reference loop (%s)", covered[i]);
  }
  for (i = 0; i < sizeof not_covered / sizeof not_covered[0]; i++)
    lowp_test_check(!lowp_round_fast64_applies(lowp_format_by_name(not_covered[i]), NULL,
                                               LOWP_RND_NE),
                    "fast path (f64) must not claim %s", not_covered[i]);
  lowp_test_check(lowp_format_parse(&g, "p=5,emin=-6,emax=7,nosub", NULL, 0) == 0 &&
                      !lowp_round_fast64_applies(&g, NULL, LOWP_RND_NE),
                  "fast path (f64) must not claim formats without subnormals");
  lowp_test_check(lowp_format_parse(&g, "p=53,emin=-1022,emax=1023", NULL, 0) == 0 &&
                      !lowp_round_fast64_applies(&g, NULL, LOWP_RND_TZ),
                  "fast path (f64) must not claim p = 53");
  lowp_test_check(lowp_round_fast_values_f64_isa(NULL, NULL, 0, &LOWP_FMT_FP16, NULL,
                                                 LOWP_RND_NE, "sse9") == LOWP_EINVAL,
                  "an unknown compiled-copy name is an error");
}

/* odd lengths (vector tails) and in place (y == x) through the public entry */
static void check_lengths(void) {
  static const size_t lens[] = {0, 1, 3, 5, 7, 9, 17, 33, 1001};
  bitvec b = {0};
  size_t k;
  random_inputs(&b, &LOWP_FMT_FP16, 1001, 7);
  for (k = 0; k < sizeof lens / sizeof lens[0]; k++) {
    double x[1001], y1[1001], y2[1001];
    memcpy(x, b.v, lens[k] * sizeof *x);
    lowp_round_array_f64(y1, x, lens[k], &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
    lowp_round_array_f64_ref(y2, x, lens[k], &LOWP_FMT_FP16, NULL, LOWP_RND_NE);
    lowp_round_array_f64(x, x, lens[k], &LOWP_FMT_FP16, NULL, LOWP_RND_NE); /* in place */
    lowp_test_check(memcmp(y1, y2, lens[k] * sizeof *y1) == 0 &&
                        memcmp(x, y2, lens[k] * sizeof *x) == 0,
                    "lowp_round_array_f64 fp16 n=%zu (and in place) differs from the reference",
                    lens[k]);
  }
  free(b.v);
}

/* the values path on a copy, for round_check_stream */
static int values64(void *y, const void *x, size_t n, const lowp_format_t *f,
                    lowp_rounding_t rnd, const char *isa) {
  if (isa && !strcmp(isa, "public")) return lowp_round_array_f64(y, x, n, f, NULL, rnd);
  return lowp_round_fast_values_f64_isa(y, x, n, f, NULL, rnd, isa);
}

/* Arrays of LOWP_ROUND_STREAM_BYTES and more, which the AVX2/AVX-512 loops
   write with streaming stores after a head up to y's vector boundary
   (round_check_stream): every copy and the public entry against the same
   values computed in pieces below that size, y misaligned and in place;
   f's random bit patterns (NaN and infinities among them: vectors
   that run the reference loop between streaming stores), an odd length (a
   tail). fp16 in every mode (overflow values differing in the sign only,
   or per sign in rup / rdn) and e4m3fnuz (no -0) in rne and rtz. */
static void check_stream(void) {
  static const char *const fmts[] = {"fp16", "e4m3fnuz"};
  static const char *const copies[] = {"generic", "avx2", "avx512", "public"};
  const size_t n = LOWP_ROUND_STREAM_BYTES / sizeof(double) + 37;
  bitvec b = {0};
  size_t i;
  for (i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
    b.n = 0;
    random_inputs(&b, lowp_format_by_name(fmts[i]), n, 700u + (uint32_t)i);
    round_check_stream("f64", lowp_format_by_name(fmts[i]), values64, b.v, n, sizeof(double),
                       copies, 4);
  }
  free(b.v);
}

/* The AVX2/AVX-512 copies round by a binary64 addition in the caller's
   rounding mode (rne and rna only under to-nearest) or convert through
   binary32 by the CPU's conversion: their bits must not depend on the
   caller's rounding mode, nor on FTZ/DAZ in MXCSR (then another path runs).
   The reference is computed first, in the default environment. */
static void check_fenv(void) {
  static const int fmodes[] = {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
  static const char *const fmts[] = {"fp16", "bf16", "e4m3", "tf32", "e5m2fnuz", "e2m1", "fp32"};
  bitvec b = {0};
  size_t i, k, j, m, bad;
  for (i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
    const lowp_format_t *f = lowp_format_by_name(fmts[i]);
    double *x, *yr, *yf;
    b.n = 0;
    edge_inputs(&b, f);
    random_inputs(&b, f, 4096, 50u + (uint32_t)i);
    x = malloc(b.n * sizeof *x), yr = malloc(b.n * sizeof *yr), yf = malloc(b.n * sizeof *yf);
    if (!x || !yr || !yf) { printf("out of memory\n"); exit(1); }
    memcpy(x, b.v, b.n * sizeof *x);
    for (m = 0; m < NMODES; m++) {
      (void)lowp_round_array_f64_ref(yr, x, b.n, f, NULL, modes[m]);
      for (k = 0; k < NISAS; k++) {
        for (j = 0; j < sizeof fmodes / sizeof fmodes[0] + 2; j++) {
          int st;
#ifdef HAVE_MXCSR
          unsigned csr = _mm_getcsr();
#endif
          if (j < 3) fesetround(fmodes[j]);
#ifdef HAVE_MXCSR
          else _mm_setcsr(csr | (j == 3 ? 0x8000u : 0x0040u)); /* FTZ, then DAZ */
#else
          else continue;
#endif
          st = lowp_round_fast_values_f64_isa(yf, x, b.n, f, NULL, modes[m], isas[k]);
          fesetround(FE_TONEAREST);
#ifdef HAVE_MXCSR
          _mm_setcsr(csr);
#endif
          if (st == LOWP_EUNSUPPORTED) continue;
          for (bad = 0; bad < b.n && !memcmp(&yf[bad], &yr[bad], sizeof *yf); bad++)
            ;
          lowp_test_check(st == LOWP_OK && bad == b.n,
                          "%s %s [%s] under %s: element %zu differs from the reference", fmts[i],
                          lowp_rounding_name(modes[m]), isas[k],
                          j == 0 ? "FE_UPWARD" : j == 1 ? "FE_DOWNWARD" : j == 2 ? "FE_TOWARDZERO"
                          : j == 3 ? "MXCSR FTZ" : "MXCSR DAZ", bad);
        }
      }
    }
    free(x), free(yr), free(yf);
  }
  free(b.v);
}

/* ----------------------------------------------------------------- main */

int main(void) {
  lowp_format_t fs[32];
  policy_case pc[9];
  size_t nf, npc, i, m, p;
  bitvec b = {0};

  lowp_test_start("tround_fast64");
  npc = round_policies(pc);
  printf("compiled copies run on this CPU:");
  for (i = 0; i < NISAS; i++) {
    double y, one = 1.0;
    if (lowp_round_fast_values_f64_isa(&y, &one, 1, &LOWP_FMT_FP16, NULL, LOWP_RND_NE,
                                       isas[i]) == LOWP_OK)
      printf(" %s", isas[i]);
  }
  printf("\n");
  check_applies(pc, npc);

  nf = round_fast_formats(fs, sizeof fs / sizeof fs[0], lowp_round_fast64_applies, custom_specs,
                          NCUSTOM);
  /* boundaries and specials: every format x mode x policy */
  for (i = 0; i < nf; i++) {
    b.n = 0;
    edge_inputs(&b, &fs[i]);
    for (m = 0; m < NMODES; m++)
      for (p = 0; p < npc; p++)
        if (lowp_round_fast64_applies(&fs[i], &pc[p].pol, modes[m]))
          compare(&fs[i], &pc[p], modes[m], b.v, b.n, "edges");
  }
  /* random bit patterns: every format x mode, default and satfinite */
  for (i = 0; i < nf; i++) {
    b.n = 0;
    random_inputs(&b, &fs[i], (size_t)1 << 14, (uint32_t)i);
    for (m = 0; m < NMODES; m++)
      for (p = 0; p < 2; p++)
        if (lowp_round_fast64_applies(&fs[i], &pc[p].pol, modes[m]))
          compare(&fs[i], &pc[p], modes[m], b.v, b.n, "random");
  }
  check_lengths();
  check_fenv();
  check_stream();
  free(b.v);
  return lowp_test_end();
}
