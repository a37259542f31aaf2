/* lowp bench -- named performance benchmarks; `lowp bench round` lives here */

/*
 * `lowp bench [NAME [options]]` runs one benchmark from the table below, or
 * every one when no NAME is given. Each benchmark validates before it times
 * (docs/style.md B8) and prints one line per case.
 *
 * `lowp bench round` (the Performance section of issue 2): N binary32
 * values, |x| log-uniform over 2^-40 .. 2^42 with random signs (Philox,
 * seeded), so fp16 and the fp8 formats see subnormals, underflow and
 * overflow, plus a few special values at the front (+-0, +-inf, NaNs with
 * payloads, binary32 subnormals). Single thread. It first checks
 *   - lowp's fast path == the reference loop, on all N, for each format and
 *     each compiled copy it times;
 *   - the CPU's F16C vcvtps2ph == lowp fp16 rne, on all N (NaN results
 *     compare as equal when both are NaN of the same sign: the instruction
 *     keeps the input's payload, lowp writes the canonical NaN; the number
 *     of such NaNs is printed);
 *   - AVX512_BF16 vcvtneps2bf16, where the CPU has it, == lowp bf16 rne with
 *     DAZ (the instruction reads binary32 subnormals as zero), NaN as above;
 * then times each case `--reps` times, round robin over the cases, and
 * keeps each one's minimum.
 *
 * Run: lowp bench round [--n N] [--reps R] [--seed S] [--strict]
 */

#define _POSIX_C_SOURCE 200809L

#include "bench.h"
#include "cli.h"
#include "thp.h"
#include "cpu.h"
#include "format/round_fast.h"
#include "rng/rng.h"
#include "status.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define LOWP_BENCH_X86 1
#include <immintrin.h>
#if defined(__clang__) || __GNUC__ >= 10
#define LOWP_BENCH_AVX512BF16 1 /* the compiler knows the instruction */
#endif
#endif

/* ---------------------------------------------------------------- types */

typedef struct {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *help;
} bench_t;

/* The table of named benchmarks. */
static const bench_t benches[] = {
    {"round", lowp_bench_round,
     "binary32 arrays to fp16/bf16/e4m3/e5m2 (rne): lowp vs the CPU's own instructions"},
    {"exact", lowp_bench_exact,
     "exact GEMM reference (m=n=k=512, fp16/fp32) vs a plain MPFR loop and OpenBLAS SGEMM"},
    {"gemm", lowp_bench_gemm,
     "emulated GEMM kernels (n=1024, one thread): reference vs fast path vs sgemm vs exact"},
    {"check", lowp_bench_check,
     "lowp check's pipeline: a 1024^3 fp16 GEMM check, and a spec of 50 small checks"},
    {"fpx", lowp_bench_fpx,
     "exception tracing: traced / untraced reference GEMMs and casts (target <= 1.25x)"},
};
#define NBENCH (sizeof benches / sizeof benches[0])

/* One timed case of `bench round`. */
typedef enum { C_LOWP, C_REF, C_HW_FP16, C_HW_BF16, C_VAL, C_BF16TRICK, C_VAL64, C_COPY64 } case_kind;

typedef struct {
  case_kind kind;
  const lowp_format_t *f; /* C_LOWP, C_REF */
  const char *isa;        /* C_LOWP: another compiled copy (information), NULL = the one
                             under test (--isa, else dispatch) */
  size_t n;               /* elements timed */
  int reps;
  double ns;              /* result: minimum ns per element */
} round_case;

/* What every case of one run shares: the compiled copy under test (--isa;
   NULL = dispatch), the rounding mode (--rnd), the binary64 inputs. */
static const char *g_isa;
static lowp_rounding_t g_rnd = LOWP_RND_NE;
static const double *g_xd;

/* ------------------------------------------------------ private helpers */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void progress(const char *what) {
  if (isatty(2)) { fprintf(stderr, "bench round: %s...\r", what); fflush(stderr); }
}

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) lowp_cli_die("bench", "out of memory (%zu bytes); try a smaller --n", bytes);
  memset(p, 0, bytes); /* touch every page before anything is timed */
  return p;
}

#ifdef LOWP_BENCH_X86
/* The CPU's binary32 -> fp16 conversion, 8 lanes a time (F16C, round to
   nearest even by the immediate, not by MXCSR). */
__attribute__((target("avx,f16c"))) static void
hw_fp16(uint16_t *y, const float *x, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(void *)(y + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  if (i < n) { /* tail: through a padded block */
    float t[8] = {0};
    uint16_t o[8];
    memcpy(t, x + i, (n - i) * sizeof *t);
    _mm_storeu_si128((__m128i *)(void *)o,
                     _mm256_cvtps_ph(_mm256_loadu_ps(t), _MM_FROUND_TO_NEAREST_INT));
    memcpy(y + i, o, (n - i) * sizeof *o);
  }
}
#endif

#ifdef LOWP_BENCH_AVX512BF16
/* The CPU's binary32 -> bf16 conversion (AVX512_BF16 vcvtneps2bf16, 16 lanes:
   round to nearest even, binary32 subnormals read as zero). */
__attribute__((target("avx512f,avx512bf16"))) static void
hw_bf16(uint16_t *y, const float *x, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256bh r = _mm512_cvtneps_pbh(_mm512_loadu_ps(x + i));
    memcpy(y + i, &r, sizeof r);
  }
  if (i < n) {
    float t[16] = {0};
    __m256bh r;
    uint16_t o[16];
    memcpy(t, x + i, (n - i) * sizeof *t);
    r = _mm512_cvtneps_pbh(_mm512_loadu_ps(t));
    memcpy(o, &r, sizeof o);
    memcpy(y + i, o, (n - i) * sizeof *o);
  }
}
#endif

#ifdef LOWP_BENCH_X86
/* the usual AVX2 bit trick for binary32 -> bf16 -> binary32 values (what
   hand-written kernels do, torch's copy_ among them): u + 0x7fff + bit 16,
   low half cleared; six instructions a vector (load, shift, and, two adds,
   and; the store). Round to nearest even for finite inputs; NaN whose
   payload lies in the low half turn into inf, so it is a speed yardstick
   only, never compared. */
__attribute__((target("avx2"))) static void bf16_trick(float *y, const float *x, size_t n) {
  const __m256i one = _mm256_set1_epi32(1), r = _mm256_set1_epi32(0x7fff);
  const __m256i hi = _mm256_set1_epi32((int)0xffff0000u);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i u = _mm256_loadu_si256((const __m256i *)(const void *)(x + i));
    __m256i b = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
    u = _mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(u, r), b), hi);
    _mm256_storeu_si256((__m256i *)(void *)(y + i), u);
  }
  for (; i < n; i++) {
    uint32_t u;
    memcpy(&u, x + i, sizeof u);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(y + i, &u, sizeof u);
  }
}

/* The memory's floor under lowp_round_array_f64: x (binary64) copied into y with no arithmetic, the
   bytes moved as its loops move them (lib/format/round_add.h): from LOWP_ROUND_STREAM_BYTES of y on,
   streaming stores from y's first 32-byte boundary and x prefetched 1 KiB ahead; plain stores below
   that. 16 bytes a value against an encoder's 5 or 6: where this copy alone takes most of 1.5x the
   encoder, the values' target measures the machine's memory rather than the loop. A yardstick, never
   compared. */
__attribute__((target("avx2"))) static void copy64(double *y, const double *x, size_t n) {
  size_t i = 0;
  if (n >= LOWP_ROUND_STREAM_BYTES / sizeof *y && (uintptr_t)(void *)y % sizeof *y == 0) {
    for (; i < n && (uintptr_t)(void *)(y + i) % 32; i++) y[i] = x[i];
    for (; i + 4 <= n; i += 4) {
      _mm_prefetch((const char *)((uintptr_t)(x + i) + 1024), _MM_HINT_T0);
      _mm256_stream_pd(y + i, _mm256_loadu_pd(x + i));
    }
    _mm_sfence();
  }
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, _mm256_loadu_pd(x + i));
  for (; i < n; i++) y[i] = x[i];
}
#endif

static int have_f16c(void) {
#ifdef LOWP_BENCH_X86
  return lowp_cpu_has_f16c();
#else
  return 0;
#endif
}

static int have_avx512bf16(void) {
#ifdef LOWP_BENCH_AVX512BF16
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
#else
  return 0;
#endif
}

/* Run one case once over x[0..c->n) into out. */
static int run_case(const round_case *c, void *out, const float *x) {
  switch (c->kind) {
  case C_LOWP:
    if (c->isa || g_isa)
      return lowp_round_fast_encode_f32_isa(out, x, c->n, c->f, NULL, g_rnd,
                                            c->isa ? c->isa : g_isa);
    return lowp_encode_array_f32(out, x, c->n, c->f, NULL, g_rnd);
  case C_REF: return lowp_encode_array_f32_ref(out, x, c->n, c->f, NULL, g_rnd);
#ifdef LOWP_BENCH_X86
  case C_HW_FP16: hw_fp16(out, x, c->n); return LOWP_OK;
#endif
#ifdef LOWP_BENCH_AVX512BF16
  case C_HW_BF16: hw_bf16(out, x, c->n); return LOWP_OK;
#endif
  case C_VAL:
    if (g_isa) return lowp_round_fast_values_f32_isa(out, x, c->n, c->f, NULL, g_rnd, g_isa);
    return lowp_round_array_f32(out, x, c->n, c->f, NULL, g_rnd);
  case C_VAL64:
    if (g_isa) return lowp_round_fast_values_f64_isa(out, g_xd, c->n, c->f, NULL, g_rnd, g_isa);
    return lowp_round_array_f64(out, g_xd, c->n, c->f, NULL, g_rnd);
#ifdef LOWP_BENCH_X86
  case C_BF16TRICK: bf16_trick(out, x, c->n); return LOWP_OK;
  case C_COPY64: copy64(out, g_xd, c->n); return LOWP_OK;
#endif
  default: return LOWP_EUNSUPPORTED;
  }
}

/* One timed run of c, in ns per element. */
static double time_once(const round_case *c, void *out, const float *x) {
  double t0 = now_s();
  (void)run_case(c, out, x);
  return (now_s() - t0) * 1e9 / (double)(c->n ? c->n : 1);
}

/* 16-bit codes with IEEE layout (fp16: 5 exponent bits, bf16: 8): NaN? */
static int is_nan16(uint16_t b, int ebits) {
  uint16_t emask = (uint16_t)(((1u << ebits) - 1) << (15 - ebits));
  uint16_t fmask = (uint16_t)((1u << (15 - ebits)) - 1);
  return (b & emask) == emask && (b & fmask) != 0;
}

/*
 * Compare the hardware's 16-bit codes to lowp's; NaNs of the same sign
 * count as equal (payloads differ: the hardware keeps the input's). Prints
 * the first mismatches; returns their number; *nan_payload counts the NaN
 * pairs whose bits differ.
 */
static size_t compare_hw16(const char *what, const uint16_t *hw, const uint16_t *lw,
                           const float *x, size_t n, int ebits, size_t *nan_payload) {
  size_t i, bad = 0;
  *nan_payload = 0;
  for (i = 0; i < n; i++) {
    if (hw[i] == lw[i]) continue;
    if (is_nan16(hw[i], ebits) && is_nan16(lw[i], ebits) &&
        (hw[i] & 0x8000) == (lw[i] & 0x8000)) {
      (*nan_payload)++;
      continue;
    }
    if (bad++ < 5) {
      uint32_t u;
      memcpy(&u, &x[i], sizeof u);
      printf("  %s: x[%zu] = 0x%08lx (%a): hardware 0x%04x, lowp 0x%04x\n", what, i,
             (unsigned long)u, (double)x[i], hw[i], lw[i]);
    }
  }
  return bad;
}

/* Element i of an encoded array of width w. */
static uint32_t code_at(const void *p, size_t i, int w) {
  if (w <= 8) return ((const uint8_t *)p)[i];
  if (w <= 16) return ((const uint16_t *)p)[i];
  return ((const uint32_t *)p)[i];
}

/* Special values at the front of the inputs: +-0, +-inf, NaNs with
   payloads and both signs, binary32 subnormals, fp16 ties and extremes. */
static const uint32_t specials[] = {
    0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
    0xffc00000u, 0x7f800001u, 0xff812345u, 0x7fffffffu, 0x7fa00000u,
    0x00000001u, 0x807fffffu, 0x33000000u, 0x33000001u, 0x477ff000u,
    0x477fefffu, 0x7f7fffffu, 0xff7fffffu, 0x387fc000u, 0x38800000u};
#define NSPECIAL (sizeof specials / sizeof specials[0])

/* The inputs: specials first, then log-uniform magnitudes, random signs. */
static void make_inputs(float *x, size_t n, uint64_t seed) {
  size_t i;
  for (i = 0; i < n; i++) {
    uint32_t u;
    if (i < NSPECIAL) {
      u = specials[i];
    } else {
      uint64_t r = lowp_rng_u64(seed, i, 0);
      uint32_t e = 127u - 40u + (uint32_t)((r >> 32) % 82u); /* 2^-40 .. 2^41 */
      u = ((uint32_t)(r >> 63) << 31) | (e << 23) | ((uint32_t)r & 0x7fffffu);
    }
    memcpy(&x[i], &u, sizeof u);
  }
}

static void round_usage(FILE *out) {
  fprintf(out,
    "usage: lowp bench round [--n N] [--reps R] [--seed S] [--isa ISA] [--rnd MODE]\n"
    "                        [--strict]\n"
    "  Rounds N binary32 values (|x| log-uniform over 2^-40..2^42, random signs,\n"
    "  plus special values) to fp16, bf16, tf32, e4m3, e5m2, e4m3fnuz, e5m2fnuz, e3m2,\n"
    "  e2m3 and e2m1 (rne unless --rnd), single thread:\n"
    "  lowp's fast path, its reference loop, and the CPU's own conversion\n"
    "  instructions (F16C vcvtps2ph; AVX512_BF16 vcvtneps2bf16 where present).\n"
    "  Validates every case bit for bit first, then times R runs, keeps the minimum.\n"
    "  --n N      elements (default 16777216 = 2^24; 1 .. 2^28)\n"
    "  --reps R   repetitions per case (default 7)\n"
    "  --seed S   Philox key of the inputs (default 0x2143FEDC)\n"
    "  --isa ISA  lowp's compiled copy under test: generic, avx2 or avx512 (default:\n"
    "             the widest this CPU runs, as dispatch picks)\n"
    "  --rnd MODE rounding mode of lowp's cases: rne, rna, rtz, rup, rdn, rto\n"
    "             (default rne; the CPU's instructions and the bit trick are rne only)\n"
    "  --strict   exit 1 when a speed target is missed (default: report only)\n"
    "  Targets (issue 2): fp16 and bf16 within 2x of the hardware instruction\n"
    "  where it exists; every format under 1 ns per element. Issue 34: the values\n"
    "  (lowp_round_array_f32 and lowp_round_array_f64) within 1.5x of the encoder\n"
    "  of the same format and mode, bf16 rne from binary32 also within 1.2x of an\n"
    "  AVX2 bit trick (binary32 in and out; the f64 row shows its ratio only)\n"
    "  (the ratios are printed in the target column). The f64 rows also show their\n"
    "  time over a plain copy of the same bytes (AVX2, streaming stores as lowp's\n"
    "  loops from 8 MiB on; its own row): 16 bytes a value against the encoder's 5-6,\n"
    "  so out of the caches the copy alone may take 1.5x the encoder; a note then\n"
    "  names the rows that missed within 1.25x of it (the memory, not the loop).\n"
    "  Exit: 0 ok; 1 validation failed (or --strict and a target missed); 2 bad usage.\n");
}

/* ----------------------------------------------- bench round, in phases */

/* The state of one `bench round` run, passed through its phases. */
enum { NF = 10, NCASES = 64 };
typedef struct {
  size_t n;
  int reps, strict;
  uint64_t seed;
  const lowp_format_t *fmts[NF];
  int f16c, bf16hw;
  const char *best_isa;
  void *ref[NF], *out;
  uint16_t *hw;
  float *x;
  double *xd;             /* x as binary64 (exact), lowp_round_array_f64's input */
  round_case cases[NCASES];
  int ncases, failed, missed;
  double hw16_ns, hwbf_ns;
  int memory_bound;      /* f64 value rows missed within 1.25x of C_COPY64 (round_row) */
  double mem_lo, mem_hi; /* the copy's time over their encoders', smallest and largest */
} round_run;

static void round_parse(round_run *r, int argc, char **argv) {
  int i;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { round_usage(stdout); exit(LOWP_EXIT_OK); }
    else if (!strcmp(argv[i], "--strict")) r->strict = 1;
    else if (!strcmp(argv[i], "--isa") || !strcmp(argv[i], "--rnd")) {
      if (i + 1 >= argc) lowp_cli_die("bench round", "%s needs a value", argv[i]);
      if (!strcmp(argv[i], "--isa")) g_isa = lowp_bench_parse_isa("bench round", argv[i + 1], 0);
      else if (lowp_rounding_parse(&g_rnd, argv[i + 1]) || g_rnd == LOWP_RND_SR)
        lowp_cli_die("bench round", "--rnd: unknown or unsupported mode '%s' (rne, rna, "
                     "rtz, rup, rdn, rto)", argv[i + 1]);
      i++;
    }
    else if (!strcmp(argv[i], "--n") || !strcmp(argv[i], "--reps") || !strcmp(argv[i], "--seed")) {
      if (i + 1 >= argc) lowp_cli_die("bench round", "%s needs a value", argv[i]);
      if (!strcmp(argv[i], "--n"))
        r->n = (size_t)lowp_cli_int("bench round", "--n", argv[i + 1], 1, (long long)1 << 28);
      else if (!strcmp(argv[i], "--reps"))
        r->reps = (int)lowp_cli_int("bench round", "--reps", argv[i + 1], 1, 1000);
      else
        r->seed = (uint64_t)lowp_cli_int("bench round", "--seed", argv[i + 1], 0, INT64_MAX);
      i++;
    } else {
      lowp_cli_die("bench round", "unknown option '%s'; accepted: --n N, --reps R, "
                   "--seed S, --isa ISA, --rnd MODE, --strict, --help", argv[i]);
    }
  }
}

static void round_header(const round_run *r) {
  char model[160] = "unknown";
  FILE *fp = fopen("/proc/cpuinfo", "r");
  printf("lowp bench round: N = %zu binary32 values, |x| log-uniform over 2^-40..2^42, "
         "random signs, %d special values first; seed 0x%llx; single thread; "
         "minimum of %d runs per case, round robin\n", r->n, (int)NSPECIAL,
         (unsigned long long)r->seed, r->reps);
#ifdef __VERSION__
  printf("build: %s, gcc %s; lowp fast path: %s copy (%s); mode %s\n",
#ifdef LOWP_BUILD_TYPE
         LOWP_BUILD_TYPE,
#else
         "?",
#endif
         __VERSION__, g_isa ? g_isa : r->best_isa, g_isa ? "--isa" : "run-time dispatch",
         lowp_rounding_name(g_rnd));
#endif
  if (fp) {
    char line[256];
    while (fgets(line, sizeof line, fp))
      if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
        snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
        model[strcspn(model, "\n")] = '\0';
        break;
      }
    fclose(fp);
  }
  printf("cpu: %s; f16c %s, avx512_bf16 %s\n", model, r->f16c ? "yes" : "no",
         r->bf16hw ? "yes" : have_avx512bf16() ? "yes, not used (--isa names a CPU without it)" : "no");
}

/* every timed copy of the fast path against the reference loop */
static void round_validate_lowp(round_run *r) {
  static const char *const isas[] = {"avx512", "avx2", "generic"};
  int k;
  for (k = 0; k < NF; k++) {
    int w = lowp_format_width(r->fmts[k]), j;
    for (j = -1; j < 3; j++) {
      const char *isa = j < 0 ? NULL : isas[j];
      size_t e, bad = 0;
      int st;
      round_case c = {C_LOWP, r->fmts[k], isa, r->n, r->reps, 0};
      if (isa && !strcmp(isa, g_isa ? g_isa : r->best_isa)) continue; /* done at j = -1 */
      if (j >= 0 && (k != 0 || g_isa)) continue; /* other copies: fp16, without --isa */
      st = run_case(&c, r->out, r->x);
      if (st == LOWP_EUNSUPPORTED) continue;
      for (e = 0; e < r->n; e++)
        if (code_at(r->out, e, w) != code_at(r->ref[k], e, w) && bad++ < 5) {
          uint32_t u;
          memcpy(&u, &r->x[e], sizeof u);
          printf("  x[%zu] = 0x%08lx (%a): fast 0x%lx, reference 0x%lx\n", e,
                 (unsigned long)u, (double)r->x[e], (unsigned long)code_at(r->out, e, w),
                 (unsigned long)code_at(r->ref[k], e, w));
        }
      printf("validate: lowp %s %s, %s copy == reference loop on all %zu: %s\n",
             r->fmts[k]->name, lowp_rounding_name(g_rnd), isa ? isa : g_isa ? g_isa : r->best_isa,
             r->n, bad ? "FAIL" : "ok");
      if (bad || st) r->failed = 1;
      if (st == LOWP_OK && r->ncases < NCASES) r->cases[r->ncases++] = c;
    }
  }
}

/* the values of one case (C_VAL or C_VAL64) against the reference loop on
   the first nv inputs, bit for bit; 1 if they agree */
static int values_agree(const round_case *c, const float *x, size_t nv) {
  int is64 = c->kind == C_VAL64, st, sr;
  size_t sz = is64 ? sizeof(double) : sizeof(float), e, bad = 0;
  unsigned char *yf = xmalloc(nv * sz), *yr = xmalloc(nv * sz);
  round_case v = *c;
  v.n = nv;
  st = run_case(&v, yf, x);
  sr = is64 ? lowp_round_array_f64_ref((double *)(void *)yr, g_xd, nv, c->f, NULL, g_rnd)
            : lowp_round_array_f32_ref((float *)(void *)yr, x, nv, c->f, NULL, g_rnd);
  for (e = 0; e < nv; e++)
    if (memcmp(yf + e * sz, yr + e * sz, sz) && bad++ < 5) {
      double a, b;
      if (is64) memcpy(&a, yf + e * sz, sz), memcpy(&b, yr + e * sz, sz);
      else {
        float fa, fb;
        memcpy(&fa, yf + e * sz, sz), memcpy(&fb, yr + e * sz, sz);
        a = fa, b = fb;
      }
      printf("  x[%zu] = %a: values %a, reference %a\n", e, (double)x[e], a, b);
    }
  free(yf), free(yr);
  return !bad && !st && !sr;
}

/* lowp_round_array_f32 and _f64 (values) against their reference loops on
   the first 2^16 elements (the reference is ~100x slower), each format;
   then timed, beside the bf16 bit trick */
static void round_validate_values(round_run *r) {
  size_t nv = r->n < ((size_t)1 << 16) ? r->n : (size_t)1 << 16;
  int k, w;
  for (w = 0; w < 2; w++)
    for (k = 0; k < NF; k++) {
      round_case c = {w ? C_VAL64 : C_VAL, r->fmts[k], NULL, r->n, r->reps, 0};
      int ok = values_agree(&c, r->x, nv);
      printf("validate: lowp_round_array_%s %s %s (%s copy) == reference loop on the first "
             "%zu: %s\n", w ? "f64" : "f32", r->fmts[k]->name, lowp_rounding_name(g_rnd),
             g_isa ? g_isa : r->best_isa, nv, ok ? "ok" : "FAIL");
      if (!ok) r->failed = 1;
      if (r->ncases < NCASES) r->cases[r->ncases++] = c;
    }
#ifdef LOWP_BENCH_X86
  /* the trick is AVX2 code: a yardstick for the avx2 and avx512 copies */
  if (__builtin_cpu_supports("avx2") && g_rnd == LOWP_RND_NE && r->ncases < NCASES &&
      !(g_isa && !strcmp(g_isa, "generic"))) {
    round_case c = {C_BF16TRICK, r->fmts[1], NULL, r->n, r->reps, 0};
    r->cases[r->ncases++] = c;
  }
  /* the f64 rows' floor, on the same copies */
  if (__builtin_cpu_supports("avx2") && r->ncases < NCASES && !(g_isa && !strcmp(g_isa, "generic"))) {
    round_case c = {C_COPY64, NULL, NULL, r->n, r->reps, 0};
    r->cases[r->ncases++] = c;
  }
#endif
}

/* the CPU's own conversions against lowp */
static void round_validate_hw(round_run *r) {
  size_t np, bad;
  if (g_rnd != LOWP_RND_NE) {
    printf("hardware conversions: rne only; not timed with --rnd %s\n",
           lowp_rounding_name(g_rnd));
    return;
  }
  if (r->f16c) {
    round_case c = {C_HW_FP16, NULL, NULL, r->n, r->reps, 0};
    run_case(&c, r->hw, r->x);
    bad = compare_hw16("F16C vs lowp fp16", r->hw, r->ref[0], r->x, r->n, 5, &np);
    printf("validate: F16C vcvtps2ph == lowp fp16 rne on all %zu: %s", r->n, bad ? "FAIL" : "ok");
    if (np) printf(" (%zu NaN results differ only in payload: the instruction keeps the "
                   "input's payload, lowp writes the canonical NaN; counted as equal)", np);
    printf("\n");
    if (bad) r->failed = 1;
    r->cases[r->ncases++] = c;
  } else {
    printf("fp16 hardware: not available on this CPU (no F16C)\n");
  }
  if (r->bf16hw) {
    lowp_policy_t daz;
    uint16_t *lw = xmalloc(r->n * sizeof *lw);
    round_case c = {C_HW_BF16, NULL, NULL, r->n, r->reps, 0};
    memset(&daz, 0, sizeof daz);
    daz.daz = 1;
    run_case(&c, r->hw, r->x);
    lowp_encode_array_f32(lw, r->x, r->n, r->fmts[1], &daz, LOWP_RND_NE);
    bad = compare_hw16("AVX512_BF16 vs lowp bf16 daz", r->hw, lw, r->x, r->n, 8, &np);
    printf("validate: AVX512_BF16 vcvtneps2bf16 == lowp bf16 rne with DAZ on all %zu: %s",
           r->n, bad ? "FAIL" : "ok");
    if (np) printf(" (%zu NaN results differ only in payload; counted as equal)", np);
    printf("\n");
    if (bad) r->failed = 1;
    free(lw);
    r->cases[r->ncases++] = c;
  } else {
    printf("bf16 hardware: not available on this CPU (no AVX512_BF16)\n");
    printf("bf16 software stand-in: none (gcc %d has no __bf16 conversions in C)\n",
#ifdef __GNUC__
           __GNUC__
#else
           0
#endif
           );
  }
}

/* round robin: repetition k of every case before k + 1 of any, so load
   from other processes and clock changes spread over all cases alike;
   each case's minimum is kept. The reference loop runs on a prefix (it is
   ~100x slower). */
static void round_time(round_run *r) {
  size_t nref = r->n < ((size_t)1 << 20) ? r->n : (size_t)1 << 20;
  int i, k;
  round_case c = {C_REF, r->fmts[0], NULL, nref, r->reps < 3 ? r->reps : 3, 0};
  void *outd = xmalloc(r->n * sizeof(double));
  r->cases[r->ncases++] = c;
  for (i = 0; i < r->ncases; i++) r->cases[i].ns = 1e300;
  for (k = 0; k < r->reps; k++) {
    progress("timing");
    for (i = 0; i < r->ncases; i++) {
      double t;
      if (k >= r->cases[i].reps) continue;
      t = time_once(&r->cases[i], r->cases[i].kind == C_HW_FP16 || r->cases[i].kind == C_HW_BF16
                                      ? (void *)r->hw
                                  : r->cases[i].kind == C_VAL64 || r->cases[i].kind == C_COPY64 ? outd
                                                                                                 : r->out,
                    r->x);
      if (t < r->cases[i].ns) r->cases[i].ns = t;
    }
  }
  for (i = 0; i < r->ncases; i++) {
    if (r->cases[i].kind == C_HW_FP16) r->hw16_ns = r->cases[i].ns;
    if (r->cases[i].kind == C_HW_BF16) r->hwbf_ns = r->cases[i].ns;
  }
  free(outd);
  if (isatty(2)) fprintf(stderr, "%40s\r", "");
}

/* the time of the first case of a kind (the dispatched copy for C_LOWP)
   and format (any for f NULL), or 0 */
static double case_ns(const round_run *r, case_kind kind, const lowp_format_t *f) {
  int i;
  for (i = 0; i < r->ncases; i++)
    if (r->cases[i].kind == kind && (!f || r->cases[i].f == f) && !r->cases[i].isa)
      return r->cases[i].ns;
  return 0;
}

/* name, target and verdict of one row */
static const char *round_row(round_run *r, const round_case *c, char *name, size_t nlen,
                             char *target, size_t tlen) {
  const char *res = "-";
  target[0] = '\0';
  switch (c->kind) {
  case C_LOWP:
    snprintf(name, nlen, "lowp %s %s (%s copy%s)", c->f->name, lowp_rounding_name(g_rnd),
             c->isa ? c->isa : g_isa ? g_isa : r->best_isa,
             c->isa || g_isa ? "" : ", dispatched");
    if (c->isa) { snprintf(target, tlen, "- (information)"); break; }
    {
      int ok = c->ns < 1.0;
      double hwns = !strcmp(c->f->name, "fp16") ? r->hw16_ns
                  : !strcmp(c->f->name, "bf16") ? r->hwbf_ns : 0;
      if (hwns > 0) {
        ok = ok && c->ns <= 2.0 * hwns;
        snprintf(target, tlen, "<= 2x hw %s, < 1 ns", c->f->name);
      } else if (!strcmp(c->f->name, "bf16")) {
        snprintf(target, tlen, "< 1 ns (no bf16 hw here)");
      } else {
        snprintf(target, tlen, "< 1 ns");
      }
      res = ok ? "PASS" : "FAIL";
      if (!ok) r->missed = 1;
    }
    break;
  case C_REF:
    snprintf(name, nlen, "lowp %s %s reference loop (first %zu)", c->f->name,
             lowp_rounding_name(g_rnd), c->n);
    snprintf(target, tlen, "- (information)");
    break;
  case C_HW_FP16:
    snprintf(name, nlen, "hw fp16: F16C vcvtps2ph (ymm)");
    snprintf(target, tlen, "- (baseline)");
    break;
  case C_HW_BF16:
    snprintf(name, nlen, "hw bf16: AVX512_BF16 vcvtneps2bf16 (zmm)");
    snprintf(target, tlen, "- (baseline)");
    break;
  case C_VAL:
  case C_VAL64: {
    /* issue 34: values <= 1.5x the encoder (the same copy) of the same format
       and mode; bf16 rne from binary32 also <= 1.2x the bit trick (binary32
       in and out; the f64 row moves twice the bytes, its ratio is shown) */
    double enc = case_ns(r, C_LOWP, c->f), trick = case_ns(r, C_BF16TRICK, NULL);
    double copy = c->kind == C_VAL64 ? case_ns(r, C_COPY64, NULL) : 0;
    int ok = enc > 0 && c->ns <= 1.5 * enc;
    int isbf = !strcmp(c->f->name, "bf16");
    if (isbf && trick > 0 && c->kind == C_VAL64) {
      snprintf(target, tlen, "<= 1.5x enc (%.2fx); trick %.2fx", c->ns / enc, c->ns / trick);
      isbf = 0, trick = 0;
    } else if (copy > 0 && enc > 0) {
      snprintf(target, tlen, "<= 1.5x encoder (%.2fx); copy %.2fx", c->ns / enc, c->ns / copy);
    }
    /* missed, within 1.25x of the copy of its bytes: the memory's limit (round_table's note) */
    if (!ok && copy > 0 && c->ns <= 1.25 * copy) {
      double q = copy / enc;
      if (!r->memory_bound || q < r->mem_lo) r->mem_lo = q;
      if (!r->memory_bound || q > r->mem_hi) r->mem_hi = q;
      r->memory_bound++;
    }
    snprintf(name, nlen, "lowp_round_array_%s %s %s (values)",
             c->kind == C_VAL64 ? "f64" : "f32", c->f->name, lowp_rounding_name(g_rnd));
    if (isbf && trick > 0) {
      ok = ok && c->ns <= 1.2 * trick;
      snprintf(target, tlen, "<= 1.5x enc (%.2fx), 1.2x trick (%.2fx)", c->ns / enc,
               c->ns / trick);
    } else if (!target[0]) {
      snprintf(target, tlen, "<= 1.5x encoder (%.2fx)", enc > 0 ? c->ns / enc : 0.0);
    }
    res = ok ? "PASS" : "FAIL";
    if (!ok) r->missed = 1;
    break;
  }
  case C_BF16TRICK:
    snprintf(name, nlen, "bf16 values: AVX2 bit trick (6 instr.)");
    snprintf(target, tlen, "- (baseline)");
    break;
  case C_COPY64:
    snprintf(name, nlen, "f64 values: copy of their bytes (AVX2)");
    snprintf(target, tlen, "- (baseline: the memory's floor)");
    break;
  }
  return res;
}

static void round_table(round_run *r) {
  int i;
  printf("\n%-42s %9s %10s  %-38s %s\n", "case", "ns/elem", "x hw fp16", "target", "result");
  for (i = 0; i < r->ncases; i++) {
    const round_case *c = &r->cases[i];
    char name[96], target[64], ratio[32];
    const char *res = round_row(r, c, name, sizeof name, target, sizeof target);
    if (r->hw16_ns > 0) snprintf(ratio, sizeof ratio, "%.2f", c->ns / r->hw16_ns);
    else snprintf(ratio, sizeof ratio, "-");
    printf("%-42s %9.3f %10s  %-38s %s\n", name, c->ns, ratio, target, res);
  }
  if (r->bf16hw && r->hwbf_ns > 0) {
    for (i = 0; i < r->ncases; i++)
      if (r->cases[i].kind == C_LOWP && !r->cases[i].isa && !strcmp(r->cases[i].f->name, "bf16"))
        printf("lowp bf16 / hw bf16 = %.2f\n", r->cases[i].ns / r->hwbf_ns);
  }
  if (r->memory_bound)
    printf("memory: %d lowp_round_array_f64 row%s missed 1.5x the encoder within 1.25x of the copy of "
           "their bytes (16 a value; the encoder moves 5 or 6), which alone takes %.2f-%.2fx those "
           "encoders here: the machine's memory bandwidth more than the loop (--n 65536 runs in the "
           "caches)\n", r->memory_bound, r->memory_bound == 1 ? "" : "s", r->mem_lo, r->mem_hi);
  printf("targets: %s\n", r->missed ? "some MISSED (timings on a shared machine vary; "
                                      "rerun, or see the ratios)" : "all met");
}

static void round_free(round_run *r) {
  int k;
  for (k = 0; k < NF; k++) free(r->ref[k]);
  free(r->x), free(r->xd), free(r->out), free(r->hw);
}

/* ----------------------------------------------------------- public API */

int lowp_bench_round(int argc, char **argv) {
  /* every format the fast paths cover (round_fast.h); fp16 and bf16 first */
  static const char *const fmt_names[NF] = {"fp16", "bf16", "tf32", "e4m3", "e5m2",
                                            "e4m3fnuz", "e5m2fnuz", "e3m2", "e2m3", "e2m1"};
  static round_run r; /* large: cases and pointers; one run per process */
  int k;
  memset(&r, 0, sizeof r);
  g_isa = NULL, g_rnd = LOWP_RND_NE, g_xd = NULL;
  r.n = (size_t)1 << 24, r.reps = 7, r.seed = 0x2143FEDC;
  r.f16c = have_f16c(), r.bf16hw = have_avx512bf16(), r.best_isa = lowp_round_fast_isa();
  round_parse(&r, argc, argv);
  /* --isa avx2 or generic times what such a CPU runs: it has no AVX512_BF16, so its bf16 row's target
     is the one without the instruction (issue 34: the AVX2 row was held to an AVX-512 instruction) */
  if (g_isa && strcmp(g_isa, "avx512") != 0) r.bf16hw = 0;
  for (k = 0; k < NF; k++) r.fmts[k] = lowp_format_by_name(fmt_names[k]);
  round_header(&r);
  r.x = xmalloc(r.n * sizeof *r.x);
  r.out = xmalloc(r.n * sizeof(uint32_t));
  r.hw = xmalloc(r.n * sizeof *r.hw);
  make_inputs(r.x, r.n, r.seed);
  r.xd = xmalloc(r.n * sizeof *r.xd);
  {
    size_t e;
    for (e = 0; e < r.n; e++) r.xd[e] = r.x[e]; /* exact */
    g_xd = r.xd;
  }
  /* validate: reference loop once per format; every timed copy of the fast
     path against it; the hardware against lowp */
  for (k = 0; k < NF; k++) {
    int w = lowp_format_width(r.fmts[k]);
    r.ref[k] = xmalloc(r.n * (w <= 8 ? 1 : w <= 16 ? 2 : 4));
    progress("reference loop");
    lowp_encode_array_f32_ref(r.ref[k], r.x, r.n, r.fmts[k], NULL, g_rnd);
  }
  round_validate_lowp(&r);
  round_validate_values(&r);
  round_validate_hw(&r);
  if (r.failed) {
    printf("bench round: validation FAILED: nothing timed\n");
    round_free(&r);
    return LOWP_EXIT_CHECK;
  }
  round_time(&r);
  round_table(&r);
  round_free(&r);
  return (r.strict && r.missed) ? LOWP_EXIT_CHECK : LOWP_EXIT_OK;
}

static void usage(FILE *out) {
  size_t i;
  fprintf(out, "usage: lowp bench [NAME [options]]\n"
               "  Runs the named benchmark, or every one when no NAME is given.\n"
               "  'lowp bench NAME --help' describes its options.\n\nbenchmarks:\n");
  for (i = 0; i < NBENCH; i++) fprintf(out, "  %-8s %s\n", benches[i].name, benches[i].help);
}

/* OpenBLAS with no worker threads of its own at load (its pthread build
   reads OPENBLAS_NUM_THREADS when tools/blas_lazy.c opens it, after this).
   The benchmarks time one thread; a worker started at load spins in
   sched_yield for about 2^28 cycles (OpenBLAS's thread timeout) before it
   sleeps, which is the whole of a short run, and on the 2-core VM here it
   halved every one-thread figure: bench gemm --n 128 --isa avx2 gave sgemm
   0.042 and fp16-product fp16 accumulation 0.27 ns per multiply-add, 0.021
   and 0.14 without the spinning worker. Where a benchmark runs OpenBLAS on
   more threads (bench exact's thread rows, lib/exact/ozaki.c), OpenBLAS
   starts them then. */
static void blas_no_idle_workers(void) {
  (void)setenv("OPENBLAS_NUM_THREADS", "1", 1);
}

int lowp_cmd_bench(int argc, char **argv) {
  size_t i;
  blas_no_idle_workers();
  if (argc < 2) {
    int worst = LOWP_EXIT_OK;
    for (i = 0; i < NBENCH; i++) {
      char *one[2];
      int st;
      one[0] = (char *)benches[i].name;
      one[1] = NULL;
      st = benches[i].fn(1, one);
      if (st > worst) worst = st;
    }
    return worst;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) { usage(stdout); return LOWP_EXIT_OK; }
  for (i = 0; i < NBENCH; i++)
    if (!strcmp(argv[1], benches[i].name)) {
      lowp_thp_reexec(); /* its arrays in huge pages (tools/thp.h) */
      return benches[i].fn(argc - 1, argv + 1);
    }
  if (argv[1][0] == '-')
    lowp_cli_die("bench", "unknown option '%s': options follow a benchmark name "
                 "(lowp bench --help lists the benchmarks)", argv[1]);
  {
    char names[256] = "";
    for (i = 0; i < NBENCH; i++) {
      strncat(names, " ", sizeof names - strlen(names) - 1);
      strncat(names, benches[i].name, sizeof names - strlen(names) - 1);
    }
    lowp_cli_die("bench", "unknown benchmark '%s'; known:%s", argv[1], names);
  }
  return LOWP_EXIT_USAGE;
}
