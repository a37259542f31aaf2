/* ttc_vectors -- every GPU-captured tensor-core row reproduced bit for bit by its preset */

/*
 * Build: cmake --build build --target ttc_vectors; run: build/ttc_vectors
 * (from the source root; ctest does that).
 *
 * Oracle: tests/data/tensor-core-vectors/ (Khattak & Mikaitis, BSD-2, see
 * LICENCE there): outputs of real V100, A100, A2, Ada, H100 and B200 tensor
 * cores. Acceptance (the source's own): zero mismatches on every row of
 * every GPU x format x output file. H100 fp8 rows with fp32 output were
 * captured with wgmma as D = A.B + D, D initially zero: c is 0 for them
 * (README). The README says the same of every H100 fp8 row, but the
 * fp16-output rows carry c: with c = 0 only 2 of 1000 rows match (E4M3 and
 * E5M2 alike), with c all of them (the capture kernel there is mma.sync,
 * model_validation/CUDA/mma_fp8_output_fp16.cu, which passes c).
 *
 * Order (docs/style.md B10): special values, hand-picked cases with provenance,
 * properties, then the data files.
 */

#include "model/tc.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define VEC_DIR "tests/data/tensor-core-vectors"

typedef struct {
  const char *gpu, *preset, *fmt, *out;
  int c_zero;
} vec_file_t;

/* Every file of the vendored data (34), with the preset that must match it. */
static const vec_file_t files[] = {
    {"V100", "v100", "fp16", "fp32", 0}, {"V100", "v100", "fp16", "fp16", 0},
    {"A100", "a100", "fp16", "fp32", 0}, {"A100", "a100", "fp16", "fp16", 0},
    {"A100", "a100", "bf16", "fp32", 0}, {"A100", "a100", "tf32", "fp32", 0},
    {"A2", "a2", "fp16", "fp32", 0},     {"A2", "a2", "fp16", "fp16", 0},
    {"A2", "a2", "bf16", "fp32", 0},     {"A2", "a2", "tf32", "fp32", 0},
    {"Ada", "ada", "fp16", "fp32", 0},   {"Ada", "ada", "fp16", "fp16", 0},
    {"Ada", "ada", "bf16", "fp32", 0},   {"Ada", "ada", "tf32", "fp32", 0},
    {"Ada", "ada", "E4M3", "fp32", 0},   {"Ada", "ada", "E4M3", "fp16", 0},
    {"Ada", "ada", "E5M2", "fp32", 0},   {"Ada", "ada", "E5M2", "fp16", 0},
    {"H100", "h100", "fp16", "fp32", 0}, {"H100", "h100", "fp16", "fp16", 0},
    {"H100", "h100", "bf16", "fp32", 0}, {"H100", "h100", "tf32", "fp32", 0},
    {"H100", "h100", "E4M3", "fp32", 1}, {"H100", "h100", "E4M3", "fp16", 0},
    {"H100", "h100", "E5M2", "fp32", 1}, {"H100", "h100", "E5M2", "fp16", 0},
    {"B200", "b200", "fp16", "fp32", 0}, {"B200", "b200", "fp16", "fp16", 0},
    {"B200", "b200", "bf16", "fp32", 0}, {"B200", "b200", "tf32", "fp32", 0},
    {"B200", "b200", "E4M3", "fp32", 0}, {"B200", "b200", "E4M3", "fp16", 0},
    {"B200", "b200", "E5M2", "fp32", 0}, {"B200", "b200", "E5M2", "fp16", 0},
};

static const lowp_format_t *out_format(const char *out) {
  return strcmp(out, "fp16") ? &LOWP_FMT_FP32 : &LOWP_FMT_FP16;
}

/* ------------------------------------------------------- hand-picked */

/* d = bfma(a, b, c) on a given model string; compare bits with want. */
static void check_bfma(const char *spec, const lowp_format_t *in, const lowp_format_t *out,
                       const double *a, const double *b, size_t n, double c, double want,
                       const char *why) {
  lowp_tc_model_t m;
  char err[256], h1[64], h2[64];
  double d;
  int st = lowp_tc_model_get(&m, spec, in, out, err, sizeof err);
  if (!lowp_test_check(st == LOWP_OK, "%s: model %s: %s", why, spec, err)) return;
  st = lowp_tc_dot(&d, a, 1, b, 1, n, c, &m, in, out);
  lowp_test_check(st == LOWP_OK && ((isnan(want) && isnan(d)) ||
                                    (d == want && signbit(d) == signbit(want))),
                  "%s: model %s: got %s want %s", why, spec, lowp_test_hex(d, h1, sizeof h1),
                  lowp_test_hex(want, h2, sizeof h2));
}

static void special_values(void) {
  double one[2] = {1, 1}, inf1[2] = {INFINITY, 1}, ninf1[2] = {-INFINITY, 1};
  double zero2[2] = {0, 0}, nan1[2] = {NAN, 1}, nz[2] = {-0.0, 1};
  /* exceptional-case rules (Khattak & Mikaitis, MATLAB-tensor-core
     ExceptionalCasesTest): NaN wins; inf*0 is NaN; +inf with -inf is NaN */
  check_bfma("h100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, nan1, one, 2, 0, NAN, "NaN input");
  check_bfma("h100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, inf1, zero2, 2, 0, NAN, "inf*0");
  check_bfma("h100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, inf1, one, 2, -INFINITY, NAN, "inf-inf");
  check_bfma("h100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, ninf1, one, 2, 5, -INFINITY, "-inf");
  /* zeros: -0 only when every addend is -0 */
  check_bfma("a100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, nz, one, 1, -0.0, -0.0, "-0 + -0");
  check_bfma("a100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, nz, one, 1, 0.0, 0.0, "-0 + +0");
  /* overflow of the fp32 output under RZ still gives inf (exponent saturates) */
  {
    double big[2] = {65504, 65504}, bigb[2] = {65504, 65504};
    check_bfma("h100", &LOWP_FMT_FP16, &LOWP_FMT_FP16, big, bigb, 2, 0, INFINITY, "fp16 overflow");
  }
}

static void hand_picked(void) {
  /* Fasi, Higham, Mikaitis, Pranesh 2021, sec. 4 (truncation, no sticky):
     1 + 2^-24 + ... : c = 1, products 2^-24 each; on V100 (F = 23) each
     product falls below the last kept bit and is lost; F = 24 keeps them. */
  double a4[4] = {0x1p-12, 0x1p-12, 0x1p-12, 0x1p-12}, b4[4] = {0x1p-12, 0x1p-12, 0x1p-12, 0x1p-12};
  check_bfma("v100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, a4, b4, 4, 1.0, 1.0,
             "V100: 1 + 4*2^-24 truncated away");
  check_bfma("a100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, a4, b4, 4, 1.0, 1.0 + 0x1p-22,
             "A100: 1 + 4*2^-24 kept (F = 24)");
  /* negative terms are truncated toward zero in magnitude, so the sum can
     exceed the exact value: 1 - 2^-26 on V100 gives 1 (not 1 - 2^-24) */
  {
    double a1[1] = {-0x1p-13}, b1[1] = {0x1p-13};
    check_bfma("v100", &LOWP_FMT_FP16, &LOWP_FMT_FP32, a1, b1, 1, 1.0, 1.0,
               "V100: 1 - 2^-26 truncates to 1");
    check_bfma("b=4,F=23,align=rne,out=rne", &LOWP_FMT_FP16, &LOWP_FMT_FP32, a1, b1, 1, 1.0, 1.0,
               "custom rne: 1 - 2^-26 -> 1");
  }
  /* alignment options: 1 + 2^-30 at F = 23 rounded up at the output: the
     truncated term is lost (1), a sticky bit remembers it (1 + 2^-23), and
     aligning to nearest rounds it away before the output sees it (1) */
  {
    double a1[1] = {0x1p-15}, b1[1] = {0x1p-15};
    check_bfma("b=4,F=23,out=rup", &LOWP_FMT_FP16, &LOWP_FMT_FP32, a1, b1, 1, 1.0, 1.0,
               "truncation, no sticky: 1 + 2^-30 -> 1 even rounding up");
    check_bfma("b=4,F=23,sticky=1,out=rup", &LOWP_FMT_FP16, &LOWP_FMT_FP32, a1, b1, 1, 1.0, 1.0 + 0x1p-23,
               "sticky bit: 1 + 2^-30 rounds up to 1 + 2^-23");
    check_bfma("b=4,F=23,align=rne,out=rup", &LOWP_FMT_FP16, &LOWP_FMT_FP32, a1, b1, 1, 1.0, 1.0,
               "aligned to nearest: the term is gone before the output rounding");
  }
  /* the fp8 13-bit accumulator (Ada, H100): 1 + 2^-14 is cut back to 1 */
  {
    double a1[1] = {0x1p-7}, b1[1] = {0x1p-7};
    check_bfma("h100", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, a1, b1, 1, 1.0, 1.0, "H100 fp8: 1 + 2^-14 -> 1");
    check_bfma("b200", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, a1, b1, 1, 1.0, 1.0 + 0x1p-14,
               "B200 fp8: 1 + 2^-14 kept");
  }
}

/* Parser: presets, overrides, parameters, errors. */
static void parser(void) {
  lowp_tc_model_t m;
  char err[256];
  lowp_test_check(lowp_tc_model_get(&m, "h100,promote=128", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, err, sizeof err) == LOWP_OK &&
                      m.promote == 128 && m.bfma.b == 32 && m.bfma.out_frac == 13,
                  "h100,promote=128 on e4m3");
  lowp_test_check(lowp_tc_model_get(&m, "b=16,F=25,align=rtz,out=rtz", &LOWP_FMT_FP16, &LOWP_FMT_FP32, err, sizeof err) == LOWP_OK &&
                      m.bfma.b == 16 && m.bfma.F == 25,
                  "parameter spec");
  lowp_test_check(lowp_tc_model_get(&m, "v100", &LOWP_FMT_BF16, &LOWP_FMT_FP32, err, sizeof err) == LOWP_EUNSUPPORTED,
                  "v100 has no bf16");
  lowp_test_check(lowp_tc_model_get(&m, "h101", &LOWP_FMT_FP16, &LOWP_FMT_FP32, err, sizeof err) == LOWP_EINVAL,
                  "unknown preset");
  lowp_test_check(lowp_tc_model_get(&m, "b=16,F=99", &LOWP_FMT_FP16, &LOWP_FMT_FP32, err, sizeof err) == LOWP_EINVAL,
                  "F out of range");
  lowp_test_check(lowp_tc_model_get(&m, "h100,promote=100", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, err, sizeof err) == LOWP_EINVAL,
                  "promote not a multiple of b");
  lowp_test_check(lowp_tc_model_get(&m, "b=8,bogus=1", &LOWP_FMT_FP16, &LOWP_FMT_FP32, err, sizeof err) == LOWP_EINVAL,
                  "unknown key");
}

/* ------------------------------------------------------------ data */

static void data_files(void) {
  size_t i, total = 0, good = 0;
  for (i = 0; i < sizeof files / sizeof files[0]; i++) {
    const vec_file_t *f = &files[i];
    lowp_tc_model_t m;
    lowp_tc_replay_t r;
    char err[256];
    int st = lowp_tc_model_get(&m, f->preset, lowp_tc_vectors_format(f->fmt), out_format(f->out), err, sizeof err);
    if (!lowp_test_check(st == LOWP_OK, "%s %s: %s", f->gpu, f->fmt, err)) continue;
    st = lowp_tc_replay(&r, VEC_DIR, f->gpu, f->fmt, out_format(f->out), f->c_zero, &m);
    printf("  %-5s %-5s -> %-5s  %4zu/%4zu rows match\n", f->gpu, f->fmt, f->out, r.match, r.rows);
    lowp_test_check(st == LOWP_OK && r.rows == 1000, "%s %s %s: replay status %s, %zu rows",
                    f->gpu, f->fmt, f->out, lowp_status_str(st), r.rows);
    lowp_test_check(r.match == r.rows,
                    "%s %s -> %s: %zu of %zu rows differ; first: row %ld model %08x GPU %08x",
                    f->gpu, f->fmt, f->out, r.rows - r.match, r.rows, r.first_bad,
                    (unsigned)r.got, (unsigned)r.want);
    total += r.rows;
    good += r.match;
  }
  printf("  all files: %zu/%zu rows match\n", good, total);
}

int main(void) {
  lowp_test_start("ttc_vectors");
  special_values();
  hand_picked();
  parser();
  data_files();
  return lowp_test_end();
}
