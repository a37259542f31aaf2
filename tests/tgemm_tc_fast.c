/* tgemm_tc_fast -- the integer-SIMD tensor-core GEMM against the scalar reference, bit for bit */

/*
 * Oracle: lowp_gemm_tc_scalar (one lowp_tc_dot per element, lib/model's
 * integer block FMA). For every preset x input format x output format x
 * promotion the preset accepts, on adversarial data (small integers: ties
 * and exact cancellation in a block; subnormal inputs; the format's extremes
 * side by side: a huge exponent spread inside a block; zeros of both signs;
 * NaN and inf; C near the output's largest value: overflow mid-chain), the
 * fast kernel on every ISA this CPU runs must give the same bytes, and
 * lowp_gemm_tc_ref (what every caller runs) the same bytes with 1 and 2
 * threads. Shapes cross a column panel (n = 70 > 64) and leave partial
 * instructions (k = 100, 13, 1, 0).
 */

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/gemm_tc.h"
#include "cpu/gemm_tc_fast.h"
#include "status.h"
#include "testutil.h"

static uint64_t rng_state;

static uint64_t next(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* One adversarial value of format f; mode 0: finite, 1: with NaN/inf,
   2: near f's largest value often (C: overflow of the chain), 3: mostly
   zeros of both signs (blocks whose products are all zero, C = +-0), 4:
   zeros and subnormals of both signs (sums rounded to zero; products below
   the output's emin, where c = 0 may set the alignment: the zero
   parameters zsum, zrnd, c0align). */
static double entry(const lowp_format_t *f, int mode) {
  uint64_t r = next();
  int cat = (int)(r % 16), sgn = (int)((r >> 8) & 1);
  if (mode == 3 && cat < 12) cat = 8; /* mostly zeros of both signs: all-zero blocks */
  if (mode == 4) cat = cat < 10 ? 5 : 8; /* subnormals and zeros */
  double v, y;
  switch (cat) {
  case 0: case 1: case 2: case 3: case 4: /* small integers: ties, cancellation */
    v = ldexp((double)((r >> 12) % 64), (int)((r >> 40) % 5) - 2);
    break;
  case 5: case 6: /* subnormal and smallest normal values */
    v = ldexp((double)((r >> 12) % 16 + 1), f->emin - f->precision + 1 + (int)((r >> 40) % 4));
    break;
  case 7: /* the largest binade: spread inside a block, overflow */
    v = ldexp(1.0 + (double)((r >> 12) % 1024) / 1024.0, f->emax - (int)((r >> 40) % 2));
    break;
  case 8: v = 0.0; break;
  case 9:
    if (mode == 1 && (r >> 20) % 8 == 0) v = ((r >> 30) & 1) ? INFINITY : NAN;
    else if (mode == 2) v = ldexp(1.0 + (double)((r >> 12) % 1024) / 1024.0, f->emax);
    else v = 1.0;
    break;
  default: /* moderate values with all their bits */
    v = ldexp((double)(r >> 11) / 9007199254740992.0 + 0.5, (int)((r >> 3) % 12) - 6);
    break;
  }
  if (sgn) v = -v;
  if (isnan(v)) return v;
  lowp_round_f64(&y, v, f, NULL, LOWP_RND_NE);
  return y;
}

static void fill(double *x, size_t n, const lowp_format_t *f, int mode) {
  size_t i;
  for (i = 0; i < n; i++) x[i] = entry(f, mode);
}

static size_t differ(const double *x, const double *y, size_t n) {
  size_t i, bad = 0;
  for (i = 0; i < n; i++)
    if (memcmp(&x[i], &y[i], sizeof *x) && !bad++)
      fprintf(stderr, "  first difference at %zu: %a, want %a\n", i, x[i], y[i]);
  return bad;
}

/* One configuration on one data set: fast (each ISA) and ref (1, 2 threads)
   against the scalar reference. */
static void compare(const char *what, const lowp_gemm_tc_cfg_t *cfg, size_t M, size_t N,
                    size_t K, int mode) {
  static const char *const isas[] = {"generic", "avx2", "avx512"};
  double *a = malloc((M * K + 1) * sizeof *a), *b = malloc((K * N + 1) * sizeof *b);
  double *c0 = malloc(M * N * sizeof *c0), *cr = malloc(M * N * sizeof *cr);
  double *cf = malloc(M * N * sizeof *cf);
  size_t q;
  int st;
  fill(a, M * K, cfg->in, mode == 2 ? 0 : mode);
  fill(b, K * N, cfg->in, mode == 2 ? 0 : mode);
  fill(c0, M * N, cfg->out, mode);
  memcpy(cr, c0, M * N * sizeof *cr);
  omp_set_num_threads(1);
  st = lowp_gemm_tc_scalar(cr, a, b, M, N, K, cfg);
  lowp_test_check(st == LOWP_OK, "%s: scalar status %d", what, st);
  for (q = 0; q < 3; q++) {
    memcpy(cf, c0, M * N * sizeof *cf);
    st = lowp_gemm_tc_fast(cf, a, b, M, N, K, cfg, isas[q]);
    if (st == LOWP_EUNSUPPORTED) continue; /* this CPU lacks the ISA */
    lowp_test_check(st == LOWP_OK, "%s [%s]: fast status %d", what, isas[q], st);
    lowp_test_check(differ(cf, cr, M * N) == 0, "%s [%s] %zux%zux%zu: %zu of %zu outputs differ",
                    what, isas[q], M, N, K, differ(cf, cr, M * N), M * N);
  }
  omp_set_num_threads(2);
  memcpy(cf, c0, M * N * sizeof *cf);
  st = lowp_gemm_tc_ref(cf, a, b, M, N, K, cfg);
  omp_set_num_threads(1);
  lowp_test_check(st == LOWP_OK && differ(cf, cr, M * N) == 0,
                  "%s: lowp_gemm_tc_ref on 2 threads differs from 1 thread / scalar", what);
  free(a), free(b), free(c0), free(cr), free(cf);
}

/* Every preset x input x output x promotion it accepts. */
static void presets(void) {
  static const char *const pre[] = {"v100", "a100", "a2", "ada", "l40s", "h100", "h200", "h100mma", "b200"};
  const lowp_format_t *ins[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_TF32, &LOWP_FMT_E4M3,
                                &LOWP_FMT_E5M2};
  const lowp_format_t *outs[] = {&LOWP_FMT_FP32, &LOWP_FMT_FP16};
  static const long promote[] = {-1, 0, 1, 4};
  size_t p, i, o, q, served = 0;
  for (p = 0; p < sizeof pre / sizeof pre[0]; p++)
    for (i = 0; i < sizeof ins / sizeof ins[0]; i++)
      for (o = 0; o < 2; o++)
        for (q = 0; q < sizeof promote / sizeof promote[0]; q++) {
          lowp_gemm_tc_cfg_t cfg;
          char what[160], err[256];
          long pr = promote[q];
          int mode;
          if (lowp_gemm_tc_config(&cfg, pre[p], -1, ins[i], outs[o], err, sizeof err) != LOWP_OK)
            continue;
          if (pr > 0) pr *= cfg.model.bfma.b * (cfg.model.bfma.interleave ? 2 : 1);
          if (lowp_gemm_tc_config(&cfg, pre[p], pr, ins[i], outs[o], err, sizeof err) != LOWP_OK)
            continue;
          snprintf(what, sizeof what, "%s %s->%s promote %ld", pre[p], ins[i]->name,
                   outs[o]->name, pr);
          lowp_test_check(lowp_gemm_tc_fast_ok(&cfg), "%s: not served by the fast path", what);
          served++;
          for (mode = 0; mode < 5; mode++) compare(what, &cfg, 3, 70, 100, mode);
          compare(what, &cfg, 3, 9, 13, 1);
          compare(what, &cfg, 2, 65, 1, 2);
          compare(what, &cfg, 2, 3, 0, 2);
        }
  /* 9 presets: fp16, bf16, tf32 on 8 (v100 fp16 only), fp8 on 6 (ada l40s h100 h200 h100mma
     b200), each with two outputs and four promotions */
  lowp_test_check(served == (9 + 2 * 8 + 2 * 6) * 2 * 4, "served %zu configurations", served);
}

/* Parameters: the fast path's other cases, and what it leaves to the scalar. */
static void custom(void) {
  /* the first six are fast: 32-bit lanes with one accumulator (b=4,F=8;
     b=3,F=20), two (b=10,F=26), and the 64-bit copies (F=40, F=30) */
  static const char *const specs[] = {"b=4,F=8", "b=32,F=40,out=rne,out16=rtz", "b=3,F=20,outfrac=5",
                                      "b=8,F=24,latec=1,interleave=1,crnd=rtz",
                                      "b=2,F=30,interleave=3", "b=10,F=26,out=rne,out16=rtz",
                                      "b=16,F=25,align=rne",
                                      "b=16,F=25,sticky=1", "b=16,F=25,ovf=ieee",
                                      "b=16,F=25,out=rna,out16=rna"};
  size_t s;
  for (s = 0; s < sizeof specs / sizeof specs[0]; s++) {
    lowp_gemm_tc_cfg_t cfg;
    char err[256];
    int o;
    for (o = 0; o < 2; o++) {
      const lowp_format_t *out = o ? &LOWP_FMT_FP16 : &LOWP_FMT_FP32;
      if (!lowp_test_check(lowp_gemm_tc_config(&cfg, specs[s], -1, &LOWP_FMT_FP16, out, err,
                                               sizeof err) == LOWP_OK,
                           "%s: %s", specs[s], err))
        continue;
      lowp_test_check(lowp_gemm_tc_fast_ok(&cfg) == (s < 6), "%s: fast_ok", specs[s]);
      if (s < 6) {
        compare(specs[s], &cfg, 4, 67, 50, 1);
        compare(specs[s], &cfg, 4, 67, 50, 3);
      }
      else { /* the dispatcher runs the scalar: ref == scalar */
        double a[12], b[12], c1[9] = {0}, c2[9] = {0};
        fill(a, 12, &LOWP_FMT_FP16, 0);
        fill(b, 12, &LOWP_FMT_FP16, 0);
        lowp_gemm_tc_ref(c1, a, b, 3, 3, 4, &cfg);
        lowp_gemm_tc_scalar(c2, a, b, 3, 3, 4, &cfg);
        lowp_test_check(differ(c1, c2, 9) == 0, "%s: ref differs from scalar", specs[s]);
      }
    }
  }
}

/* The zero parameters in every combination, where they show: bf16 -> fp32
   and fp16 -> fp16 (products below the output's emin, sums rounded to
   zero), fp16 -> fp32, e5m2 -> fp16 on the late-c datapath; 32-bit lanes
   with one and two accumulators (b = 8, 16) and the 64-bit copy (F = 40).
   The scalar model must also see them: each parameter changes some output
   of these data. */
static void zero_params(void) {
  static const char *const base[] = {"b=8,F=24", "b=16,F=25", "b=16,F=25,latec=1,interleave=2",
                                     "b=8,F=40"};
  const lowp_format_t *ins[] = {&LOWP_FMT_BF16, &LOWP_FMT_FP16, &LOWP_FMT_FP16, &LOWP_FMT_E5M2};
  const lowp_format_t *outs[] = {&LOWP_FMT_FP32, &LOWP_FMT_FP16, &LOWP_FMT_FP32, &LOWP_FMT_FP16};
  size_t bi, f, z;
  for (bi = 0; bi < sizeof base / sizeof base[0]; bi++)
    for (f = 0; f < sizeof ins / sizeof ins[0]; f++) {
      double *a = malloc(6 * 64 * sizeof *a), *b = malloc(64 * 40 * sizeof *b);
      double ref[8][6 * 40];
      for (z = 0; z < 8; z++) {
        lowp_gemm_tc_cfg_t cfg;
        char spec[160], err[256];
        int mode;
        snprintf(spec, sizeof spec, "%s,zsum=%s,zrnd=%s,c0align=%s", base[bi], z & 1 ? "pos" : "ieee",
                 z & 2 ? "pos" : "ieee", z & 4 ? "emin" : "skip");
        if (!lowp_test_check(lowp_gemm_tc_config(&cfg, spec, -1, ins[f], outs[f], err, sizeof err) ==
                                 LOWP_OK && lowp_gemm_tc_fast_ok(&cfg),
                             "%s: %s", spec, err))
          continue;
        for (mode = 3; mode < 5; mode++) compare(spec, &cfg, 3, 70, 64, mode);
        rng_state = 77; /* the same data for the eight combinations */
        fill(a, 6 * 64, ins[f], 4);
        fill(b, 64 * 40, ins[f], 4);
        memset(ref[z], 0, sizeof ref[z]);
        lowp_gemm_tc_scalar(ref[z], a, b, 6, 40, 64, &cfg);
      }
      /* zrnd and c0align show on these data where a block of subnormal
         products can round to zero and lose bits below 2^(emin(out) - F):
         bf16 -> fp32, fp16 -> fp16, F <= 25, c in the block (a late c
         addition turns -0 into +0) */
      if (!strstr(base[bi], "latec") && !strstr(base[bi], "F=40") &&
          (ins[f] == &LOWP_FMT_BF16 || outs[f] == &LOWP_FMT_FP16) && ins[f] != &LOWP_FMT_E5M2) {
        lowp_test_check(differ(ref[0], ref[2], 6 * 40) > 0, "%s %s->%s: zrnd changes nothing", base[bi],
                        ins[f]->name, outs[f]->name);
        lowp_test_check(differ(ref[0], ref[4], 6 * 40) > 0, "%s %s->%s: c0align changes nothing", base[bi],
                        ins[f]->name, outs[f]->name);
      }
      free(a), free(b);
    }
}

int main(void) {
  lowp_test_start("tgemm_tc_fast");
  rng_state = lowp_test_seed();
  presets();
  custom();
  zero_params();
  return lowp_test_end();
}
