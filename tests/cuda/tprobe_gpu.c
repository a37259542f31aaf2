/* tprobe_gpu -- the probes on the real tensor cores, against lowp's preset for the GPU */

/*
 * Label cuda: skips (exit 77) without a CUDA build or a device. On a GPU it
 * runs lib/model/probe.h through kernels/cuda/probe.cu (mma.sync) for every
 * input/output the GPU has, and checks:
 *   - the device answers and the structural items are determined (b, F,
 *     the alignment cut, the rounding of the block result);
 *   - fp16, bf16 and tf32 (the datapaths whose vendored rows were captured
 *     with this instruction family) match the preset for the compute
 *     capability item by item.
 * fp8 is printed, not asserted: the presets model wgmma for H100 fp8 with
 * fp32 output, and this kernel uses mma.sync (a different datapath there).
 * Run: ctest --test-dir build -L cuda --output-on-failure
 */

#include "model/probe.h"
#include "gpu/probe_gpu.h"
#include "status.h"
#include "testutil.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  static const lowp_format_t *const ins[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_TF32,
                                             &LOWP_FMT_E4M3, &LOWP_FMT_E5M2};
  static const lowp_format_t *const outs[] = {&LOWP_FMT_FP32, &LOWP_FMT_FP16};
  const char *preset = NULL;
  char name[256];
  lowp_probe_gpu_t *g = NULL;
  int sm = 0;
  size_t i, o;
  lowp_test_start("tprobe_gpu");
  if (!lowp_probe_gpu_info(name, sizeof name, &sm)) lowp_test_skip("no CUDA GPU (or a build without CUDA)");
  switch (sm) {
  case 80: preset = "a100"; break;
  case 86: preset = "a2"; break;
  case 89: preset = "ada"; break;
  case 90: preset = "h100"; break;
  case 100: preset = "b200"; break;
  default: lowp_test_skip("no lowp preset for this compute capability");
  }
  if (lowp_probe_gpu_open(&g) != LOWP_OK) lowp_test_skip("the GPU could not be opened");
  printf("GPU %s (sm_%d), preset %s\n", name, sm, preset);
  for (i = 0; i < 5; i++)
    for (o = 0; o < 2; o++) {
      lowp_probe_dev_t dev = {lowp_probe_gpu_dot, NULL, 128, 0};
      dev.ctx = g;
      lowp_probe_t r;
      lowp_tc_model_t m;
      char err[256], why[512];
      int st, nd = 0, have;
      if (lowp_probe_gpu_k(ins[i], outs[o], sm) == 0) continue;
      st = lowp_probe_run(&r, &dev, ins[i], outs[o]);
      if (!lowp_test_check(st == LOWP_OK, "%s -> %s: probe status %d", ins[i]->name, outs[o]->name, st)) continue;
      lowp_test_check(r.b > 0 && r.F > 0 && r.align_ok && r.out_ok, "%s -> %s: undetermined (inferred %s)",
                      ins[i]->name, outs[o]->name, r.model);
      have = lowp_tc_model_get(&m, preset, ins[i], outs[o], err, sizeof err) == LOWP_OK;
      if (have) nd = lowp_probe_compare(&r, &m, outs[o], why, sizeof why);
      printf("%-5s -> %-4s inferred %s; preset %s: %s\n", ins[i]->name, outs[o]->name, r.model, preset,
             !have ? "no datapath" : nd ? why : "matches");
      if (have && lowp_format_width(ins[i]) > 8)
        lowp_test_check(nd == 0, "%s -> %s differs from %s: %s", ins[i]->name, outs[o]->name, preset, why);
    }
  lowp_probe_gpu_close(g);
  return lowp_test_end();
}
