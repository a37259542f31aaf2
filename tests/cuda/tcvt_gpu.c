/* tcvt_gpu -- the GPU's cvt instructions vs lowp's CPU twin over all 2^32 fp32 inputs */

/*
 * Label cuda: skips (exit 77) without a CUDA build or a device. On a GPU it
 * converts every fp32 bit pattern with each PTX cvt variant and with
 * kernels/cpu/cvt.c, and counts mismatches, NaN-only ones separately (the
 * NaN encoding of hardware results is the one fact the CPU twin assumes for
 * the one-instruction variants; tf32.rna's twin is the machine code of the
 * device's architecture, lowp_cvt_cpu_sm, decoded by tests/tsass.c).
 * LOWP_CVT_STEP=k checks every k-th chunk only (default 1: all of them).
 * Run: ctest --test-dir build -L cuda --output-on-failure
 */

#include "common/cvt.h"
#include "gpu/gemm_gpu.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (UINT64_C(1) << 26)

static uint64_t get(const void *p, size_t i, int bytes) {
  if (bytes == 1) return ((const uint8_t *)p)[i];
  if (bytes == 2) return ((const uint16_t *)p)[i];
  return ((const uint32_t *)p)[i];
}

int main(void) {
  int v, major = 0, minor = 0;
  const char *s = getenv("LOWP_CVT_STEP");
  uint64_t step = s ? strtoull(s, NULL, 10) : 1;
  void *g, *c;
  lowp_test_start("tcvt_gpu");
  if (lowp_cuda_device_count() == 0) lowp_test_skip("no CUDA device (or a build without CUDA)");
  if (!lowp_test_check(lowp_cuda_device_info(NULL, 0, &major, &minor) == 0, "a device is counted but cannot be queried"))
    return lowp_test_end();
  printf("device sm_%d%d: the twin of tf32.rna is sequence %d\n", major, minor,
         lowp_cvt_tf32_seq(major * 10 + minor));
  if (step == 0) step = 1;
  g = malloc(CHUNK * 4);
  c = malloc(CHUNK * 4);
  if (!g || !c) { printf("out of memory\n"); return 1; }
  for (v = 1; v <= LOWP_CVT_VARIANTS; v++) {
    int bytes = lowp_cvt_out_bytes(v);
    uint64_t start, mism = 0, nanmism = 0, total = 0;
    for (start = 0; start < (UINT64_C(1) << 32); start += CHUNK * step) {
      size_t i;
      int sg = lowp_cvt_cuda(v, g, start, CHUNK), sc = lowp_cvt_cpu_sm(v, major * 10 + minor, c, start, CHUNK);
      if (!lowp_test_check(sg == 0 && sc == 0, "%s: status gpu %d cpu %d", lowp_cvt_name(v), sg, sc)) break;
      for (i = 0; i < CHUNK; i++) {
        uint64_t a = get(g, i, bytes), b = get(c, i, bytes);
        uint32_t in = (uint32_t)(start + i);
        int in_nan = (in & 0x7f800000u) == 0x7f800000u && (in & 0x7fffffu);
        if (a == b) continue;
        if (in_nan) { nanmism++; continue; }
        if (mism++ < 8) printf("  %s: input 0x%08x gpu 0x%llx cpu 0x%llx\n", lowp_cvt_name(v), in,
                               (unsigned long long)a, (unsigned long long)b);
      }
      total += CHUNK;
    }
    printf("%-18s %llu inputs: %llu mismatches on non-NaN inputs, %llu on NaN inputs\n",
           lowp_cvt_name(v), (unsigned long long)total, (unsigned long long)mism,
           (unsigned long long)nanmism);
    lowp_test_check(mism == 0 && nanmism == 0, "%s: %llu + %llu (NaN) mismatches", lowp_cvt_name(v),
                    (unsigned long long)mism, (unsigned long long)nanmism);
  }
  free(g);
  free(c);
  return lowp_test_end();
}
