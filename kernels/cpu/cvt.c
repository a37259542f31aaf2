/* lowp_cvt_cpu -- CPU twin of the GPU cvt kernels (kernels/cuda/cvt.cu) */

#include "cvt.h"

#include "format/format.h"
#include "status.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- types */

typedef struct {
  const char *name;
  const lowp_format_t *fmt;
  lowp_rounding_t rnd;
  lowp_overflow_t overflow; /* PTX: plain cvt overflows to inf; .satfinite clamps */
  int out_bytes;
  int shift; /* tf32: the 19-bit pattern sits in fp32 layout, << 13 */
} variant_t;

/* NaN results: PTX ISA 8.x, cvt: "a NaN input produces a canonical NaN";
   lowp takes that to be the positive all-ones-fraction NaN (what the CUDA
   headers' host functions produce); a GPU run of tests/cuda/tcvt_gpu
   settles it. */
static const variant_t variants[LOWP_CVT_VARIANTS] = {
    {"fp16.rn", &LOWP_FMT_FP16, LOWP_RND_NE, LOWP_OVF_IEEE, 2, 0},
    {"fp16.rz", &LOWP_FMT_FP16, LOWP_RND_TZ, LOWP_OVF_IEEE, 2, 0},
    {"fp16.rm", &LOWP_FMT_FP16, LOWP_RND_DN, LOWP_OVF_IEEE, 2, 0},
    {"fp16.rp", &LOWP_FMT_FP16, LOWP_RND_UP, LOWP_OVF_IEEE, 2, 0},
    {"bf16.rn", &LOWP_FMT_BF16, LOWP_RND_NE, LOWP_OVF_IEEE, 2, 0},
    {"bf16.rz", &LOWP_FMT_BF16, LOWP_RND_TZ, LOWP_OVF_IEEE, 2, 0},
    {"tf32.rna", &LOWP_FMT_TF32, LOWP_RND_NA, LOWP_OVF_IEEE, 4, 13},
    {"e4m3.rn.satfinite", &LOWP_FMT_E4M3, LOWP_RND_NE, LOWP_OVF_SAT, 1, 0},
    {"e5m2.rn.satfinite", &LOWP_FMT_E5M2, LOWP_RND_NE, LOWP_OVF_SAT, 1, 0},
};

/* ----------------------------------------------------------- public API */

int lowp_cvt_out_bytes(int variant) {
  return (variant >= 1 && variant <= LOWP_CVT_VARIANTS) ? variants[variant - 1].out_bytes : 0;
}

const char *lowp_cvt_name(int variant) {
  return (variant >= 1 && variant <= LOWP_CVT_VARIANTS) ? variants[variant - 1].name : NULL;
}

int lowp_cvt_cpu(int variant, void *out, uint64_t start, size_t n) {
  const variant_t *v;
  lowp_policy_t pol;
  float *x;
  size_t i;
  int st;
  if (variant < 1 || variant > LOWP_CVT_VARIANTS || start + n > (UINT64_C(1) << 32))
    return LOWP_EINVAL;
  v = &variants[variant - 1];
  memset(&pol, 0, sizeof pol);
  pol.overflow = v->overflow;
  pol.nan_sign = LOWP_NANSIGN_POSITIVE;
  x = malloc(n ? n * sizeof *x : 1);
  if (!x) return LOWP_ENOMEM;
  for (i = 0; i < n; i++) {
    uint32_t b = (uint32_t)(start + i);
    memcpy(&x[i], &b, sizeof b);
  }
  st = lowp_encode_array_f32(out, x, n, v->fmt, &pol, v->rnd);
  free(x);
  if (st == LOWP_OK && v->shift) {
    uint32_t *o = out;
    for (i = 0; i < n; i++) o[i] <<= v->shift;
  }
  return st;
}

#ifndef LOWP_HAVE_CUDA
/* A build without CUDA: no device, and the GPU path says so. */
int lowp_cuda_device_count(void) { return 0; }

int lowp_cvt_cuda(int variant, void *out, uint64_t start, size_t n) {
  (void)variant; (void)out; (void)start; (void)n;
  return LOWP_EUNSUPPORTED;
}
#endif
