/* tgpu_kernels -- the registry's GPU entries on the CPU: their twins, their model, the variant tables, device= */

/*
 * Label unit (no GPU needed). Run: ctest --test-dir build -R tgpu_kernels
 *   - gemm_mma / gemm_cublas[_fastacc] with device=cpu equal gemm_tc with
 *     the model kernels/gpu/gemm_gpu.h names (the GPU's preset -- h100 without
 *     a GPU --, promote 0 for mma, 128 for cuBLAS e4m3 without fast
 *     accumulation), and promote=N overrides it;
 *   - the variant tables pick by format values, not names (a spec equal to
 *     fp16 selects the fp16 variant);
 *   - the row entries run their twins through the pipeline and give the
 *     twins' bits (kernels/common/rowk.h), 1 and 2 OpenMP threads alike;
 *   - the cvt twin of tf32.rna (the machine code, kernels/cpu/cvt.c): on
 *     finite inputs lib/format's tf32 rounding to nearest, ties away; NaN
 *     keeps sign and payload bits 13-22 (payload only below: +-inf); the
 *     same on every built architecture, none for one lowp has not decoded;
 *   - without a device: device=gpu is LOWP_EUNSUPPORTED with a reason,
 *     device=auto runs the twin, the launchers say LOWP_EUNSUPPORTED.
 */

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "check/subject.h"
#include "cpu/gemm_tc.h"
#include "common/cvt.h"
#include "format/format.h"
#include "gpu/gemm_gpu.h"
#include "gpu/gpu_kernels.h"
#include "registry.h"
#include "rng/rng.h"
#include "common/rowk.h"
#include "status.h"
#include "testutil.h"
#include "tkernel.h"

static lowp_problem_t prob(const char *op, size_t m, size_t n, size_t k, const lowp_format_t *in,
                           const lowp_format_t *out) {
  lowp_problem_t p;
  int i;
  memset(&p, 0, sizeof p);
  p.op = lowp_op_by_name(op);
  p.dims.batch = 1; p.dims.m = m; p.dims.n = n; p.dims.k = k;
  for (i = 0; i < LOWP_OP_MAXIO; i++) p.in[i] = *in;
  p.out = *out;
  p.eps = 1e-5;
  return p;
}


static void fill(double *x, size_t n, const lowp_format_t *f, uint32_t stream) {
  lowp_rng_t g;
  size_t i;
  lowp_rng_init(&g, lowp_test_seed(), stream);
  for (i = 0; i < n; i++) lowp_round_f64(&x[i], lowp_rng_normal(&g) * 2, f, NULL, LOWP_RND_NE);
}

enum { M = 16, N = 8, K = 512 };
static double a[M * K], b[K * N], c1[M * N], c2[M * N];

/* entry[params] on a GEMM of in -> out equals gemm_tc with spec/promote */
static void gemm_twin(const char *entry, const char *params, const lowp_format_t *in,
                      const lowp_format_t *out, const char *spec, long promote) {
  lowp_problem_t p = prob("gemm", M, N, K, in, out);
  lowp_gemm_tc_cfg_t tc;
  double *o[1] = {c1};
  const double *i2[2] = {a, b};
  char err[300] = "";
  int st;
  fill(a, M * K, in, 1);
  fill(b, K * N, in, 2);
  st = lowp_test_run_kernel(o, i2, entry, params, &p, err, sizeof err);
  memset(c2, 0, sizeof c2);
  if (!lowp_test_check(st == LOWP_OK, "%s[%s] %s: %s", entry, params, in->name, err)) return;
  st = lowp_gemm_tc_config(&tc, spec, promote, in, out, err, sizeof err);
  st = st ? st : lowp_gemm_tc_ref(c2, a, b, M, N, K, &tc);
  lowp_test_check(st == LOWP_OK && !memcmp(c1, c2, sizeof c1),
                  "%s[%s] %s -> %s = gemm_tc model %s promote %ld bit for bit", entry, params,
                  in->name, out->name, spec, promote);
}

static void gemms(void) {
  lowp_format_t fp16_spec;
  char err[200];
  gemm_twin("gemm_mma", "device=cpu", &LOWP_FMT_FP16, &LOWP_FMT_FP32, "h100", 0);
  gemm_twin("gemm_mma", "", &LOWP_FMT_BF16, &LOWP_FMT_FP32, "h100", 0);
  gemm_twin("gemm_mma", "model=a100", &LOWP_FMT_TF32, &LOWP_FMT_FP32, "a100", 0);
  gemm_twin("gemm_mma", "model=ada", &LOWP_FMT_E5M2, &LOWP_FMT_FP32, "ada", 0);
  /* fp8 mma.sync on Hopper: the preset's mma.sync datapath (two blocks of
     16 interleaved, c added late, rounded: lib/model/tc_model.c's
     FP8_MMA_SYNC written out), not the wgmma one h100 gives fp32 outputs */
  gemm_twin("gemm_mma", "model=h100", &LOWP_FMT_E4M3, &LOWP_FMT_FP32,
            "b=16,F=25,align=rtz,out=rtz,out16=rne,latec=1,interleave=2,crnd=rne", 0);
  gemm_twin("gemm_cublas", "device=cpu", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, "h100", 128);
  gemm_twin("gemm_cublas", "promote=off", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, "h100", 0);
  gemm_twin("gemm_cublas_fastacc", "", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, "h100", 0);
  gemm_twin("gemm_cublas", "model=b200", &LOWP_FMT_FP16, &LOWP_FMT_FP16, "b200", -1);
  /* a model whose fp8 promotion is not a multiple of the block: refused */
  {
    lowp_problem_t p = prob("gemm", M, N, K, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
    double *o[1] = {c1};
    const double *i2[2] = {a, b};
    lowp_test_check(lowp_test_run_kernel(o, i2, "gemm_mma", "model=v100", &p, err, sizeof err) == LOWP_OK,
                    "gemm_mma with the v100 model on the CPU: %s", err);
    p = prob("gemm", M, N, K, &LOWP_FMT_FP32, &LOWP_FMT_FP32);
    lowp_test_check(lowp_test_run_kernel(o, i2, "gemm_mma", "", &p, err, sizeof err) != LOWP_OK,
                    "gemm_mma refuses fp32 inputs (no fp32 mma): %s", err);
  }
  /* variant tables: by values */
  lowp_test_check(lowp_format_parse(&fp16_spec, "p=11,emin=-14,emax=15", err, sizeof err) == LOWP_OK &&
                      lowp_gemm_mma_variant(&fp16_spec, &LOWP_FMT_FP32) == 1 &&
                      lowp_gemm_cublas_variant(&fp16_spec, &LOWP_FMT_FP16, 0) == 4,
                  "a spec equal to fp16 selects the fp16 variants (%s)", err);
  lowp_test_check(lowp_gemm_cublas_variant(&LOWP_FMT_FP16, &LOWP_FMT_FP32, 1) == 0 &&
                      lowp_gemm_cublas_variant(&LOWP_FMT_E4M3, &LOWP_FMT_FP32, 1) == 7 &&
                      lowp_gemm_cublas_variant(&LOWP_FMT_E5M2, &LOWP_FMT_FP32, 0) == 0 &&
                      lowp_gemm_mma_variant(&LOWP_FMT_FP16, &LOWP_FMT_FP16) == 0,
                  "fast accumulation only for e4m3; no cuBLAS e5m2; mma outputs fp32");
  {
    int v, ok = 1;
    for (v = 1; v <= LOWP_CUBLAS_VARIANTS; v++) {
      const lowp_format_t *in, *out;
      ok = ok && lowp_gemm_cublas_info(v, &in, &out, NULL) == LOWP_OK &&
           (lowp_gemm_cublas_variant(in, out, 0) == v || lowp_gemm_cublas_variant(in, out, 1) == v);
    }
    for (v = 1; v <= LOWP_MMA_VARIANTS; v++) {
      const lowp_format_t *in;
      ok = ok && lowp_gemm_mma_info(v, &in, NULL) == LOWP_OK &&
           lowp_gemm_mma_variant(in, &LOWP_FMT_FP32) == v;
    }
    lowp_test_check(ok && lowp_gemm_cublas_info(0, NULL, NULL, NULL) == LOWP_EINVAL &&
                        lowp_gemm_mma_info(LOWP_MMA_VARIANTS + 1, NULL, NULL) == LOWP_EINVAL,
                    "every variant is found again from its formats; unknown ones are refused");
  }
}

/* the row entries give their twins' bits, on 1 and 2 threads */
static void rows(void) {
  enum { R = 3, C = 700 };
  static double x[R * C], y1[R * C], y2[R * C], m1[R], v1[R], t[R];
  static float xf[R * C], yf[R * C], mf[R], vf[R];
  lowp_problem_t p = prob("layernorm", R, C, 1, &LOWP_FMT_BF16, &LOWP_FMT_FP32);
  double *o[3] = {y1, m1, v1}, *o2[3] = {y2, m1, v1};
  const double *in[2] = {x, t};
  char err[300] = "";
  size_t i;
  int st, same = 1;
  fill(x, R * C, &LOWP_FMT_BF16, 3);
  for (i = 0; i < R * C; i++) xf[i] = (float)x[i];
  omp_set_num_threads(1);
  st = lowp_test_run_kernel(o, in, "layernorm_tree", "variant=onepass", &p, err, sizeof err);
  omp_set_num_threads(2);
  st = st ? st : lowp_test_run_kernel(o2, in, "layernorm_tree", "variant=onepass", &p, err, sizeof err);
  lowp_layernorm_cpu(yf, mf, vf, xf, R, C, 1e-5f, LOWP_ROWK_LN_ONEPASS);
  for (i = 0; i < R * C; i++) same = same && y1[i] == (double)yf[i] && y2[i] == y1[i];
  for (i = 0; i < R; i++) same = same && m1[i] == (double)mf[i] && v1[i] == (double)vf[i];
  lowp_test_check(st == LOWP_OK && same, "layernorm_tree = lowp_layernorm_cpu, 1 and 2 threads (%s)", err);

  p = prob("sum", R, C, 1, &LOWP_FMT_BF16, &LOWP_FMT_FP32);
  st = lowp_test_run_kernel(o, in, "sum_tree", "compute=bf16", &p, err, sizeof err);
  {
    lowp_ka_fmt_t k;
    lowp_rowk_fmt(&k, &LOWP_FMT_BF16);
    lowp_rsum_cpu(yf, xf, R, C, k);
    same = 1;
    for (i = 0; i < R; i++) same = same && y1[i] == (double)yf[i];
    lowp_test_check(st == LOWP_OK && same, "sum_tree compute=bf16 = lowp_rsum_cpu (%s)", err);
  }
  p = prob("xent", R, C, 1, &LOWP_FMT_BF16, &LOWP_FMT_FP32);
  for (i = 0; i < R; i++) t[i] = (double)(i * 100 + 7);
  p.in[1] = LOWP_FMT_FP64;
  st = lowp_test_run_kernel(o, in, "xent_tree", "", &p, err, sizeof err);
  {
    int32_t ti[R];
    for (i = 0; i < R; i++) ti[i] = (int32_t)t[i];
    lowp_xent_cpu(yf, xf, ti, R, C);
    same = 1;
    for (i = 0; i < R; i++) same = same && y1[i] == (double)yf[i];
    lowp_test_check(st == LOWP_OK && same, "xent_tree = lowp_xent_cpu (%s)", err);
  }
  p.reduction_mean = 1;
  st = lowp_test_run_kernel(o, in, "xent_tree", "", &p, err, sizeof err);
  {
    lowp_ka_fmt_t k;
    float s;
    lowp_rowk_fmt(&k, &LOWP_FMT_FP32);
    lowp_rsum_cpu(&s, yf, 1, R, k);
    lowp_test_check(st == LOWP_OK && y1[0] == (double)(s / (float)R),
                    "xent_tree mean = the tree sum of the losses / rows (%s)", err);
  }
  t[1] = C;
  p.reduction_mean = 0;
  lowp_test_check(lowp_test_run_kernel(o, in, "xent_tree", "", &p, err, sizeof err) == LOWP_EINVAL,
                  "xent_tree refuses a target outside [0, n): %s", err);
  p = prob("softmax", R, C, 1, &LOWP_FMT_FP64, &LOWP_FMT_FP32);
  x[0] = 0.1;
  lowp_test_check(lowp_test_run_kernel(o, in, "softmax_stable_tree", "", &p, err, sizeof err) == LOWP_EUNSUPPORTED &&
                      strstr(err, "fp32"),
                  "fp64 inputs that are not fp32 values are refused: %s", err);
}

static void cvt_tf32(void) {
  static const uint32_t nan_in[] = {0x7f800001u, 0xff801fffu, 0x7fc00000u, 0xffc00001u, 0x7fffffffu, 0x7f802000u};
  static const uint32_t nan_out[] = {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7fffe000u, 0x7f802000u};
  static const int sms[] = {80, 86, 89, 90, 100, 103, 120, 121};
  lowp_policy_t pol;
  uint64_t x, bad = 0, n = 0;
  size_t i;
  memset(&pol, 0, sizeof pol);
  pol.nan_sign = LOWP_NANSIGN_POSITIVE;
  for (x = 0; x < (UINT64_C(1) << 32); x += 65521) { /* a prime stride: every exponent, both signs */
    uint32_t t, r, e;
    float f;
    t = (uint32_t)x;
    if ((t & 0x7f800000u) == 0x7f800000u && (t & 0x7fffffu)) continue;
    memcpy(&f, &t, sizeof f);
    if (lowp_cvt_cpu(7, &r, x, 1) != LOWP_OK || lowp_encode_array_f32(&e, &f, 1, &LOWP_FMT_TF32, &pol, LOWP_RND_NA) != LOWP_OK ||
        r != e << 13)
      bad++;
    n++;
  }
  lowp_test_check(bad == 0 && n > 60000, "tf32.rna twin = lib/format rna on %llu finite/inf inputs (%llu differ)",
                  (unsigned long long)n, (unsigned long long)bad);
  for (i = 0; i < sizeof nan_in / sizeof nan_in[0]; i++) {
    uint32_t r = 0;
    lowp_test_check(lowp_cvt_cpu(7, &r, nan_in[i], 1) == LOWP_OK && r == nan_out[i],
                    "tf32.rna NaN 0x%08x -> 0x%08x, want 0x%08x (the machine code)", nan_in[i], r, nan_out[i]);
  }
  for (i = 0; i < sizeof sms / sizeof sms[0]; i++) {
    uint32_t r = 0;
    lowp_test_check(lowp_cvt_tf32_seq(sms[i]) == LOWP_CVT_SEQ_TF32_ADD_MASK &&
                        lowp_cvt_cpu_sm(7, sms[i], &r, 0x7f800fffu, 1) == LOWP_OK && r == 0x7f800000u,
                    "sm %d: the add-and-mask sequence", sms[i]);
  }
  lowp_test_check(lowp_cvt_tf32_seq(75) == 0 && lowp_cvt_tf32_seq(110) == 0 &&
                      lowp_cvt_cpu_sm(7, 75, &bad, 0, 1) == LOWP_EUNSUPPORTED,
                  "no sequence for sm 75 (no cvt.rna.tf32) or 110 (no cubin of that major)");
}

/* the separate addition of C after cuBLASLt's beta = 0 GEMM: one rounding to nearest even in the output format */
static void twin_add_c(void) {
  const double ab[5] = {1.0, -0.0, 65504.0, 1.0, 3.0};
  const double c[5] = {0x1p-11, -0.0, 16.0, 0x1.8p-11, -3.0};
  const double want16[5] = {1.0, -0.0, INFINITY, 1.0 + 0x1p-10, 0.0};
  double d[5];
  int i, ok;
  ok = lowp_gemm_twin_add_c(d, ab, c, 5, &LOWP_FMT_FP16) == LOWP_OK;
  for (i = 0; i < 5; i++) ok = ok && d[i] == want16[i] && signbit(d[i]) == signbit(want16[i]);
  lowp_test_check(ok, "add_c fp16: tie to even, -0 + -0 = -0, overflow to inf, x - x = +0");
  ok = lowp_gemm_twin_add_c(d, ab, c, 5, &LOWP_FMT_FP32) == LOWP_OK && d[0] == 1.0 + 0x1p-11 && d[2] == 65520.0;
  lowp_test_check(ok, "add_c fp32 keeps what fp32 holds");
  for (i = 1; i <= LOWP_CUBLAS_VARIANTS; i++)
    lowp_test_check(!lowp_gemm_cublas_validated(i, "h100"), "cuBLAS variant %d is marked validated, but no GPU has run", i);
}

static void no_device(void) {
  char err[300] = "", preset[32];
  lowp_problem_t p = prob("softmax", 2, 10, 1, &LOWP_FMT_FP16, &LOWP_FMT_FP32);
  static double x[20], y[20];
  double *o[1] = {y};
  const double *in[1] = {x};
  lowp_ka_fmt_t k;
  float f = 1;
  int fi;
  if (lowp_cuda_device_count() > 0) {
    printf("  a CUDA device is present: the no-device checks do not apply\n");
    return;
  }
  lowp_test_check(lowp_test_run_kernel(o, in, "softmax_stable_tree", "device=gpu", &p, err, sizeof err) ==
                          LOWP_EUNSUPPORTED && strstr(err, "no CUDA device"),
                  "device=gpu without a device: %s", err);
  lowp_test_check(lowp_test_run_kernel(o, in, "softmax_stable_tree", "device=auto", &p, err, sizeof err) == LOWP_OK,
                  "device=auto without a device runs the twin: %s", err);
  lowp_test_check(lowp_gpu_preset(preset, sizeof preset) == LOWP_EUNSUPPORTED && !strcmp(preset, "h100"),
                  "without a device the preset is h100 (%s), and says it is not a device's", preset);
  lowp_rowk_fmt(&k, &LOWP_FMT_FP32);
  lowp_test_check(lowp_rsum_cuda(&f, &f, 1, 1, k) == LOWP_EUNSUPPORTED &&
                      lowp_unscale_cuda(&f, 1, 1.0f, &fi) == LOWP_EUNSUPPORTED &&
                      lowp_gemm_mma_cuda(1, &f, &f, &f, &f, 1, 1, 1, err, sizeof err) == LOWP_EUNSUPPORTED &&
                      lowp_gemm_cublas_cuda(3, &f, &f, &f, &f, 1, 1, 1, err, sizeof err) == LOWP_EUNSUPPORTED,
                  "the launchers say LOWP_EUNSUPPORTED without a device");
}

int main(void) {
  lowp_test_start("tgpu_kernels");
  cvt_tf32();
  twin_add_c();
  gemms();
  rows();
  no_device();
  return lowp_test_end();
}
