/* tamp_gpu -- the GPU runner of amp-speedup times every kernel of a small layer in every precision */

/*
 * Label cuda: skips (exit 77) without a CUDA build or a device. On a GPU it
 * runs kernels/cuda/amp_layer.cu on a small layer (batch 2, seq 64,
 * d_model 128, 4 heads) in fp32, tf32, fp16 and bf16 and checks that every
 * kernel ran (status OK) with a positive, finite time, every GEMM validated
 * within the bound of amp_gpu.h on 16 entries, and that a format
 * cuBLAS has no type for is refused.
 * Run: ctest --test-dir build -L cuda --output-on-failure
 */

#include "gpu/amp_gpu.h"
#include "model/roofline.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>

int main(void) {
  lowp_layer_dims_t d = {2, 64, 128, 4, 4, 0.1};
  lowp_rkernel_t ks[64];
  double sec[64];
  size_t nk, np, p, i;
  const lowp_rprec_t *pr = lowp_roofline_precisions(&np);
  char name[256];
  lowp_test_start("tamp_gpu");
  if (lowp_amp_gpu_device(name, sizeof name) != LOWP_OK) lowp_test_skip("no CUDA build or no device");
  printf("device: %s\n", name);
  nk = lowp_roofline_layer(ks, 64, &d);
  for (p = 0; p < np; p++) {
    double worst = -1;
    int st = lowp_amp_gpu_run(sec, &worst, ks, nk, &pr[p], d.dropout, 2);
    int good = st == LOWP_OK;
    lowp_test_check(st == LOWP_OK, "%s: lowp_amp_gpu_run returns OK (%s)", pr[p].name, lowp_status_str(st));
    lowp_test_check(worst >= 0 && worst <= 1, "%s: every GEMM within its bound (%.3g of it)", pr[p].name, worst);
    for (i = 0; good && i < nk; i++)
      if (!(sec[i] > 0 && isfinite(sec[i]))) good = 0;
    lowp_test_check(good, "%s: every kernel has a positive time", pr[p].name);
  }
  {
    lowp_rprec_t e4 = {"e4m3", &LOWP_FMT_E4M3, &LOWP_FMT_E4M3};
    double worst;
    lowp_test_check(lowp_amp_gpu_run(sec, &worst, ks, nk, &e4, d.dropout, 1) == LOWP_EUNSUPPORTED,
                    "e4m3 storage is refused");
  }
  return lowp_test_end();
}
