/* lowp_gemm_gpu -- GPU GEMM variants as data, the binary64 driver, and the GPU's tensor-core preset */

#include "gpu/gemm_gpu.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tc.h"
#include "status.h"
#include "io/escape.h"

/* ------------------------------------------------------------- types */

typedef struct {
  const char *name;
  const lowp_format_t *in, *out;
  int fastacc;  /* 1: CUBLASLT_MATMUL_DESC_FAST_ACCUM on */
  long promote; /* the promotion interval its twin assumes (0: none) */
  int fp8;      /* mma: an fp8 instruction (its twin: the mma.sync fp8 datapath) */
} gvar_t;

/* promote: without fast accumulation cuBLAS's fp8 GEMMs are understood to
   add the tensor-core partial sums into fp32 registers every few MMA
   blocks; 128 products is DeepSeek-V3's N_C (arXiv:2412.19437, 3.3.2), an
   assumption until tests/cuda/tgemm_gpu.c has run on a GPU */
static const gvar_t cublas_vars[LOWP_CUBLAS_VARIANTS] = {
    {"f32", &LOWP_FMT_FP32, &LOWP_FMT_FP32, 0, 0, 0},
    {"tf32", &LOWP_FMT_TF32, &LOWP_FMT_FP32, 0, 0, 0},
    {"f16", &LOWP_FMT_FP16, &LOWP_FMT_FP32, 0, 0, 0},
    {"f16.acc16", &LOWP_FMT_FP16, &LOWP_FMT_FP16, 0, 0, 0},
    {"bf16", &LOWP_FMT_BF16, &LOWP_FMT_FP32, 0, 0, 0},
    {"e4m3", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, 0, 128, 0},
    {"e4m3.fast", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, 1, 0, 0},
};

static const gvar_t mma_vars[LOWP_MMA_VARIANTS] = {
    {"f16", &LOWP_FMT_FP16, &LOWP_FMT_FP32, 0, 0, 0},  {"bf16", &LOWP_FMT_BF16, &LOWP_FMT_FP32, 0, 0, 0},
    {"tf32", &LOWP_FMT_TF32, &LOWP_FMT_FP32, 0, 0, 0}, {"e4m3", &LOWP_FMT_E4M3, &LOWP_FMT_FP32, 0, 0, 1},
    {"e5m2", &LOWP_FMT_E5M2, &LOWP_FMT_FP32, 0, 0, 1},
};

/* ------------------------------------------------------ private helpers */

/* the same set of values (names are not compared: formats are data) */
static int same_values(const lowp_format_t *x, const lowp_format_t *y) {
  return x->precision == y->precision && x->emin == y->emin && x->emax == y->emax &&
         x->subnormals == y->subnormals && x->inf == y->inf && x->nan == y->nan;
}

static int set_err(char *err, size_t errlen, int st, const char *msg) {
  lowp_errf(err, errlen, 0, "%s", msg);
  return st;
}

/* bytes of one stored element of f (fp32 storage for tf32: the hardware's) */
static int elem_bytes(const lowp_format_t *f) {
  int w = lowp_format_width(f);
  if (f->precision == LOWP_FMT_TF32.precision && f->emin == LOWP_FMT_TF32.emin) return 4;
  return w <= 8 ? 1 : w <= 16 ? 2 : 4;
}

/* encode n values of f into width-byte patterns (tf32: in fp32 layout) */
static int encode_into(void *dst, const double *x, size_t n, const lowp_format_t *f) {
  const lowp_format_t *store = elem_bytes(f) == 4 ? &LOWP_FMT_FP32 : f;
  int bytes = elem_bytes(f);
  size_t i;
  for (i = 0; i < n; i++) {
    uint64_t b;
    double y;
    if (lowp_round_f64(&y, x[i], f, NULL, LOWP_RND_NE) != LOWP_OK ||
        !(y == x[i] || (x[i] != x[i])))
      return LOWP_ERANGE;
    if (lowp_encode(&b, x[i], store) != LOWP_OK) return LOWP_ERANGE;
    if (bytes == 1) ((uint8_t *)dst)[i] = (uint8_t)b;
    else if (bytes == 2) ((uint16_t *)dst)[i] = (uint16_t)b;
    else ((uint32_t *)dst)[i] = (uint32_t)b;
  }
  return LOWP_OK;
}

static int decode(double *x, const void *src, size_t n, const lowp_format_t *f) {
  int bytes = elem_bytes(f);
  const lowp_format_t *store = bytes == 4 ? &LOWP_FMT_FP32 : f;
  size_t i;
  for (i = 0; i < n; i++) {
    uint64_t b = bytes == 1   ? ((const uint8_t *)src)[i]
                 : bytes == 2 ? ((const uint16_t *)src)[i]
                              : ((const uint32_t *)src)[i];
    if (lowp_decode(&x[i], b, store) != LOWP_OK) return LOWP_ERANGE;
  }
  return LOWP_OK;
}

/* ----------------------------------------------------------- public API */

int lowp_gemm_cublas_info(int variant, const lowp_format_t **in, const lowp_format_t **out,
                          const char **name) {
  if (variant < 1 || variant > LOWP_CUBLAS_VARIANTS) return LOWP_EINVAL;
  if (in) *in = cublas_vars[variant - 1].in;
  if (out) *out = cublas_vars[variant - 1].out;
  if (name) *name = cublas_vars[variant - 1].name;
  return LOWP_OK;
}

int lowp_gemm_mma_info(int variant, const lowp_format_t **in, const char **name) {
  if (variant < 1 || variant > LOWP_MMA_VARIANTS) return LOWP_EINVAL;
  if (in) *in = mma_vars[variant - 1].in;
  if (name) *name = mma_vars[variant - 1].name;
  return LOWP_OK;
}

int lowp_gemm_cublas_variant(const lowp_format_t *in, const lowp_format_t *out, int fastacc) {
  int v;
  if (!in || !out) return 0;
  for (v = 0; v < LOWP_CUBLAS_VARIANTS; v++)
    if (same_values(in, cublas_vars[v].in) && same_values(out, cublas_vars[v].out) &&
        cublas_vars[v].fastacc == (fastacc ? 1 : 0))
      return v + 1;
  return 0; /* fastacc: only the formats with a fast-accumulation variant */
}

int lowp_gemm_mma_fp8(int variant) {
  return variant >= 1 && variant <= LOWP_MMA_VARIANTS ? mma_vars[variant - 1].fp8 : 0;
}

/* no cuBLAS twin has been confirmed on a GPU yet: each is measured (bits
   equal, ulps), not asserted, until a run of tests/cuda/tgemm_gpu.c on the
   GPU shows it equal and this table records which GPU did */
int lowp_gemm_cublas_validated(int variant, const char *preset) {
  (void)variant;
  (void)preset;
  return 0;
}

int lowp_gemm_twin_add_c(double *d, const double *ab, const double *c, size_t n,
                         const lowp_format_t *out) {
  size_t i;
  /* the binary64 sum rounded to out equals the one rounding of the exact
     sum (53 >= 2p + 2 for p <= 24: Figueroa's innocuous double rounding) */
  for (i = 0; i < n; i++)
    if (lowp_round_f64(&d[i], ab[i] + c[i], out, NULL, LOWP_RND_NE) == INT32_MIN) return LOWP_EINVAL;
  return LOWP_OK;
}

long lowp_gemm_cublas_promote(int variant) {
  return variant >= 1 && variant <= LOWP_CUBLAS_VARIANTS ? cublas_vars[variant - 1].promote : 0;
}

int lowp_gemm_mma_variant(const lowp_format_t *in, const lowp_format_t *out) {
  int v;
  if (!in || !out || !same_values(out, &LOWP_FMT_FP32)) return 0;
  for (v = 0; v < LOWP_MMA_VARIANTS; v++)
    if (same_values(in, mma_vars[v].in)) return v + 1;
  return 0;
}

int lowp_gemm_gpu(int which, int variant, double *c, const double *a, const double *b,
                  size_t m, size_t n, size_t k, char *err, size_t errlen) {
  const gvar_t *v;
  void *ab = NULL, *bb = NULL, *cb = NULL;
  int st, ib, ob;
  if (which == 0 && variant >= 1 && variant <= LOWP_CUBLAS_VARIANTS) v = &cublas_vars[variant - 1];
  else if (which == 1 && variant >= 1 && variant <= LOWP_MMA_VARIANTS) v = &mma_vars[variant - 1];
  else return set_err(err, errlen, LOWP_EINVAL, "unknown GPU GEMM variant");
  if (!c || !a || !b || m == 0 || n == 0 || k == 0) return LOWP_EINVAL;
  if (m >= (1u << 31) || n >= (1u << 31) || k >= (1u << 31)) return LOWP_EINVAL;
  ib = elem_bytes(v->in);
  ob = elem_bytes(v->out);
  ab = malloc(m * k * (size_t)ib);
  bb = malloc(k * n * (size_t)ib);
  cb = malloc(m * n * (size_t)ob);
  if (!ab || !bb || !cb) {
    st = LOWP_ENOMEM;
    goto done;
  }
  if ((st = encode_into(ab, a, m * k, v->in)) || (st = encode_into(bb, b, k * n, v->in)) ||
      (st = encode_into(cb, c, m * n, v->out))) {
    set_err(err, errlen, st, "an input is not a value of the variant's format");
    goto done;
  }
  st = which == 0 ? lowp_gemm_cublas_cuda(variant, cb, ab, bb, cb, m, n, k, err, errlen)
                  : lowp_gemm_mma_cuda(variant, cb, ab, bb, cb, m, n, k, err, errlen);
  if (st == LOWP_OK) st = decode(c, cb, m * n, v->out);
done:
  free(ab);
  free(bb);
  free(cb);
  return st;
}

int lowp_gpu_preset(char *buf, size_t len) {
  /* by compute capability when no preset is named in the device name */
  static const struct { int major, minor; const char *preset; } cc[] = {
      {7, 0, "v100"}, {8, 0, "a100"}, {8, 6, "a2"}, {8, 9, "ada"}, {9, 0, "h100"}, {10, -1, "b200"}};
  char name[256], word[64];
  int major = 0, minor = 0;
  size_t i, j;
  if (!buf || !len) return LOWP_EINVAL;
  snprintf(buf, len, "h100");
  if (lowp_cuda_device_info(name, sizeof name, &major, &minor) != LOWP_OK)
    return LOWP_EUNSUPPORTED;
  for (i = 0; name[i];) { /* words split at blanks and '-' */
    for (j = 0; name[i] && name[i] != ' ' && name[i] != '-'; i++)
      if (j + 1 < sizeof word) word[j++] = (char)tolower((unsigned char)name[i]);
    word[j] = '\0';
    if (j && lowp_tc_preset_find(word)) {
      snprintf(buf, len, "%s", lowp_tc_preset_find(word)->name);
      return LOWP_OK;
    }
    while (name[i] == ' ' || name[i] == '-') i++;
  }
  for (i = 0; i < sizeof cc / sizeof cc[0]; i++)
    if (cc[i].major == major && (cc[i].minor < 0 || cc[i].minor == minor)) {
      snprintf(buf, len, "%s", cc[i].preset);
      return LOWP_OK;
    }
  return LOWP_EUNSUPPORTED; /* a GPU lowp has no preset for: buf says h100 */
}
