/* lowp_cvt_cpu -- CPU twin of the GPU cvt kernels (kernels/cuda/cvt.cu) */

#include "common/cvt.h"

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
  int shift; /* tf32: the 19-bit pattern sits in fp32 layout, << 13 (the
                twin is the machine code: tf32_rna_sass) */
} variant_t;

/* NaN results: PTX ISA 8.x, cvt: "a NaN input produces a canonical NaN";
   lowp takes that to be the positive all-ones-fraction NaN (what the CUDA
   headers' host functions produce) for the variants that are one hardware
   conversion; a GPU run of tests/cuda/tcvt_gpu settles it. tf32.rna is not
   one instruction: its twin is the machine code (tf32_rna_sass below). */
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

/* ------------------------------------------------- the machine code */

/*
 * cvt.rna.tf32.f32 has no conversion instruction on any architecture lowp
 * builds for: ptxas (CUDA 13.0) emits, on sm_80, 89, 90, 100 and 120 alike,
 *   FSETP.GEU.AND P0, PT, |x|, +INF, PT     (true for +-inf and every NaN)
 *   @!P0 IMAD x, x, 1, R(0x1000)            (integer add on the bit pattern)
 *   LOP3.LUT y, x, 0xffffe000, RZ, 0xc0     (y = x & 0xffffe000)
 * (the constant 0x1000 from HFMA2.MMA on sm_80-90, HFMA2 on sm_100/120).
 * So a finite x is rounded to nearest, ties away (the carry runs into the
 * exponent, up to infinity), and a NaN keeps its sign and the payload bits
 * 13-22: one whose payload lies only in bits 0-12 comes out as +-infinity.
 * tests/tsass.c compiles the instruction for each architecture, decodes the
 * cubin and holds it to this table; a CUDA that changes the sequence fails
 * there, before any GPU does.
 */
static const struct {
  int sm;  /* the cubin architecture */
  int seq; /* LOWP_CVT_SEQ_* of cvt.rna.tf32.f32 there */
} arch_seq[] = {{80, LOWP_CVT_SEQ_TF32_ADD_MASK}, {89, LOWP_CVT_SEQ_TF32_ADD_MASK},
                {90, LOWP_CVT_SEQ_TF32_ADD_MASK}, {100, LOWP_CVT_SEQ_TF32_ADD_MASK},
                {120, LOWP_CVT_SEQ_TF32_ADD_MASK}};

static uint32_t tf32_rna_sass(uint32_t x) {
  if ((x & 0x7fffffffu) < 0x7f800000u) x += 0x1000u; /* !(|x| >=u inf): finite */
  return x & 0xffffe000u;
}

/* the cubin a device of compute capability sm runs: the newest lowp builds
   that is not newer, of the same major version (CUDA's rule) */
static int cubin_sm(int sm) {
  size_t i;
  int best = 0;
  for (i = 0; i < sizeof arch_seq / sizeof arch_seq[0]; i++)
    if (arch_seq[i].sm <= sm && arch_seq[i].sm / 10 == sm / 10 && arch_seq[i].sm > best)
      best = arch_seq[i].sm;
  return best;
}

/* ----------------------------------------------------------- public API */

int lowp_cvt_tf32_seq(int sm) {
  size_t i;
  int c = cubin_sm(sm);
  for (i = 0; i < sizeof arch_seq / sizeof arch_seq[0]; i++)
    if (arch_seq[i].sm == c) return arch_seq[i].seq;
  return 0;
}

int lowp_cvt_out_bytes(int variant) {
  return (variant >= 1 && variant <= LOWP_CVT_VARIANTS) ? variants[variant - 1].out_bytes : 0;
}

const char *lowp_cvt_name(int variant) {
  return (variant >= 1 && variant <= LOWP_CVT_VARIANTS) ? variants[variant - 1].name : NULL;
}

int lowp_cvt_cpu(int variant, void *out, uint64_t start, size_t n) {
  return lowp_cvt_cpu_sm(variant, 0, out, start, n);
}

int lowp_cvt_cpu_sm(int variant, int sm, void *out, uint64_t start, size_t n) {
  const variant_t *v;
  lowp_policy_t pol;
  float *x;
  size_t i;
  int st;
  if (variant < 1 || variant > LOWP_CVT_VARIANTS || start + n > (UINT64_C(1) << 32))
    return LOWP_EINVAL;
  v = &variants[variant - 1];
  if (v->shift) { /* tf32.rna: the machine code of the architecture */
    uint32_t *o = out;
    if (sm == 0) sm = 90; /* every architecture in arch_seq agrees */
    if (lowp_cvt_tf32_seq(sm) != LOWP_CVT_SEQ_TF32_ADD_MASK) return LOWP_EUNSUPPORTED;
    for (i = 0; i < n; i++) o[i] = tf32_rna_sass((uint32_t)(start + i));
    return LOWP_OK;
  }
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
