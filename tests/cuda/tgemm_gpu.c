/* tgemm_gpu -- lowp's mma.sync GEMMs and cuBLASLt's against the tensor-core model of the GPU, bit for bit */

/*
 * Label cuda: skips (exit 77) without a CUDA build or a device. The model
 * is the preset of the device (lowp_gpu_preset: h100, a100, ...).
 *   mma: every variant the device has (fp8 from sm_89), on a tile-aligned
 *     and a ragged size, against kernels/cpu/gemm_tc.c with the model of
 *     lowp_gpu_gemm_model (the preset, promote=0, fp8 on the mma.sync
 *     datapath), in the k order of kernels/gpu/gemm_gpu.h: must be equal.
 *   cuBLAS: every variant against the entry's model (the promotion of
 *     lowp_gemm_cublas_promote: e4m3 128, e4m3.fast none), the model's A B
 *     from zero plus C in one rounded addition, as the launcher computes it
 *     (cuBLASLt with beta = 0, no split-K, then C: lowp_gemm_twin_add_c).
 *     Prints one line per variant: the algorithm cuBLASLt ran, the elements
 *     whose bits are equal, the distribution of the differences in ulps of
 *     the output format. A twin no GPU has confirmed
 *     (lowp_gemm_cublas_validated: none yet) is marked UNVALIDATED and
 *     only measured; a validated one must be equal. f32 (no tensor-core
 *     model) is compared with an fp32 FMA chain and only reported.
 * Run: ctest --test-dir build -L cuda --output-on-failure
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/gemm_acc.h"
#include "cpu/gemm_tc.h"
#include "common/cvt.h"
#include "format/format.h"
#include "gpu/gemm_gpu.h"
#include "gpu/gpu_kernels.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

static void fill(double *x, size_t n, const lowp_format_t *f, lowp_rng_t *r, double scale) {
  size_t i;
  for (i = 0; i < n; i++) lowp_round_f64(&x[i], lowp_rng_normal(r) * scale, f, NULL, LOWP_RND_NE);
}

/* ulps of differences: [0] 1 ulp or less, [1] up to 3, [2] up to 15, [3] more or not finite */
static long hist[4];

/* elements that differ and the largest difference in ulps of out */
static long diff(const double *g, const double *c, size_t n, const lowp_format_t *out,
                 double *max_ulps) {
  size_t i;
  long bad = 0;
  *max_ulps = 0;
  memset(hist, 0, sizeof hist);
  for (i = 0; i < n; i++) {
    double u;
    if (g[i] == c[i] && signbit(g[i]) == signbit(c[i])) continue;
    if (isnan(g[i]) && isnan(c[i])) continue;
    bad++;
    u = (isfinite(g[i]) && isfinite(c[i])) ? fabs(g[i] - c[i]) / lowp_ulp(c[i], out) : INFINITY;
    hist[u <= 1 ? 0 : u <= 3 ? 1 : u <= 15 ? 2 : 3]++;
    if (u > *max_ulps) *max_ulps = u;
    if (bad <= 3) printf("    [%zu] gpu %a model %a\n", i, g[i], c[i]);
  }
  return bad;
}

int main(void) {
  static const size_t sizes[][3] = {{64, 48, 256}, {37, 21, 70}};
  char preset[32], name[256];
  lowp_kcfg_t kc;
  int major = 0, minor = 0, v;
  size_t s;
  lowp_rng_t r;
  lowp_test_start("tgemm_gpu");
  if (lowp_cuda_device_count() == 0) lowp_test_skip("no CUDA device (or a build without CUDA)");
  lowp_cuda_device_info(name, sizeof name, &major, &minor);
  lowp_gpu_preset(preset, sizeof preset);
  printf("device %s (sm_%d%d), tensor-core preset %s\n", name, major, minor, preset);
  lowp_rng_init(&r, lowp_test_seed(), 41);
  memset(&kc, 0, sizeof kc); /* the registry entries' model: the GPU's preset */
  snprintf(kc.model, sizeof kc.model, "%s", preset);
  kc.promote = -1;
  for (s = 0; s < 2; s++) {
    size_t m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
    double *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b);
    double *cg = malloc(m * n * sizeof *cg), *cc = malloc(m * n * sizeof *cc);
    double *c0 = malloc(m * n * sizeof *c0);
    if (!a || !b || !cg || !cc || !c0) return 1;
    for (v = 1; v <= LOWP_MMA_VARIANTS; v++) {
      const lowp_format_t *in;
      const char *vn;
      lowp_gemm_tc_cfg_t tc;
      char err[300] = "";
      double mu;
      long bad;
      int st;
      lowp_gemm_mma_info(v, &in, &vn);
      if (v >= 4 && major * 10 + minor < 89) continue;
      fill(a, m * k, in, &r, 1.0);
      fill(b, k * n, in, &r, 1.0);
      fill(cg, m * n, &LOWP_FMT_FP32, &r, 4.0);
      memcpy(cc, cg, m * n * sizeof *cc);
      st = lowp_gemm_gpu(1, v, cg, a, b, m, n, k, err, sizeof err);
      if (!lowp_test_check(st == LOWP_OK, "mma %s: %s (%s)", vn, lowp_status_str(st), err)) continue;
      st = lowp_gpu_gemm_model(&tc, "gemm_mma", &kc, in, &LOWP_FMT_FP32, err, sizeof err);
      if (st == LOWP_EUNSUPPORTED) {
        printf("  mma %-5s %zux%zux%zu: preset %s has no model for it (%s)\n", vn, m, n, k, preset, err);
        continue;
      }
      st = st ? st : lowp_gemm_tc_ref(cc, a, b, m, n, k, &tc);
      bad = diff(cg, cc, m * n, &LOWP_FMT_FP32, &mu);
      printf("  mma %-5s %zux%zux%zu vs model %s: %ld of %zu differ, max %.3g ulp\n", vn, m, n, k,
             preset, bad, m * n, mu);
      lowp_test_check(st == LOWP_OK && bad == 0, "mma %s %zux%zux%zu = model %s bit for bit", vn, m,
                      n, k, preset);
    }
    for (v = 1; v <= LOWP_CUBLAS_VARIANTS; v++) {
      const lowp_format_t *in, *out;
      const char *vn;
      lowp_gemm_tc_cfg_t tc;
      char err[300] = "", algo[300];
      double mu;
      long bad;
      int st;
      lowp_gemm_cublas_info(v, &in, &out, &vn);
      if (s == 1 && v >= 6) continue; /* cuBLASLt fp8 wants k % 16 == 0 */
      fill(a, m * k, in, &r, 1.0);
      fill(b, k * n, in, &r, 1.0);
      fill(cg, m * n, out, &r, 4.0);
      memcpy(c0, cg, m * n * sizeof *c0);
      memset(cc, 0, m * n * sizeof *cc); /* the twin: A B from zero, then + C */
      st = lowp_gemm_gpu(0, v, cg, a, b, m, n, k, err, sizeof err);
      if (st == LOWP_EUNSUPPORTED) {
        printf("  cublas %-9s: not on this GPU (%s)\n", vn, err);
        continue;
      }
      if (!lowp_test_check(st == LOWP_OK, "cublas %s: %s (%s)", vn, lowp_status_str(st), err)) continue;
      if (v == 1) { /* no tensor-core model: an fp32 FMA chain, reported only */
        lowp_gemm_acc_cfg_t ac;
        memset(&ac, 0, sizeof ac);
        ac.acc = &LOWP_FMT_FP32; /* exact products (an FMA), each addition rounded (rne) */
        ac.acc_rnd = LOWP_RND_NE;
        ac.order = LOWP_ORDER_RECURSIVE;
        st = lowp_gemm_acc_ref(cc, a, b, m, n, k, &ac);
        st = st ? st : lowp_gemm_twin_add_c(cc, cc, c0, m * n, out);
        bad = diff(cg, cc, m * n, out, &mu);
        printf("  cublas %-9s %zux%zux%zu vs an fp32 FMA chain (no model; reported only): %ld of %zu differ, max %.3g ulp\n",
               vn, m, n, k, bad, m * n, mu);
        continue;
      }
      st = lowp_gpu_gemm_model(&tc, v == 7 ? "gemm_cublas_fastacc" : "gemm_cublas", &kc, in, out,
                               err, sizeof err);
      if (st == LOWP_EUNSUPPORTED) {
        printf("  cublas %-9s: preset %s has no model for it (%s)\n", vn, preset, err);
        continue;
      }
      st = st ? st : lowp_gemm_tc_ref(cc, a, b, m, n, k, &tc);
      st = st ? st : lowp_gemm_twin_add_c(cc, cc, c0, m * n, out);
      bad = diff(cg, cc, m * n, out, &mu);
      lowp_gemm_cublas_algo(algo, sizeof algo);
      printf("  cublas %-9s %zux%zux%zu vs model %s,promote=%ld%s: bits equal %ld of %zu; differ by <=1 ulp %ld, "
             "2-3 %ld, 4-15 %ld, more %ld (max %.3g ulp); cuBLASLt %s\n",
             vn, m, n, k, preset, lowp_gemm_cublas_promote(v),
             lowp_gemm_cublas_validated(v, preset) ? "" : " UNVALIDATED (measured, not asserted)",
             (long)(m * n) - bad, m * n, hist[0], hist[1], hist[2], hist[3], mu, algo);
      lowp_test_check(st == LOWP_OK, "cublas %s: the twin failed", vn);
      if (lowp_gemm_cublas_validated(v, preset))
        lowp_test_check(bad == 0, "cublas %s %zux%zux%zu = model %s bit for bit", vn, m, n, k, preset);
    }
    free(a);
    free(b);
    free(cg);
    free(cc);
    free(c0);
  }
  return lowp_test_end();
}
