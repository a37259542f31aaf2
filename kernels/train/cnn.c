/* lowp_cnn -- a small fp32 convolutional network: forward, backprop, SGD with momentum */

/*
 * Every loop nest keeps one order per sum (ascending index) and splits work
 * over independent outputs only (rows, images, or gradient rows), never a
 * sum: the bytes do not depend on the thread count. No fast math.
 */

#include "train/cnn.h"

#include "omp_inline.h"

#include "cpu.h"
#include "rng/rng.h"
#include "status.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__SANITIZE_ADDRESS__)
#include <immintrin.h>
#endif

#define IMG 28
#define H1 14 /* after the first pool */
#define H2 7  /* after the second pool */
#define NCLS 10

/* ------------------------------------------------------ private helpers */

static size_t wcount(const lowp_cnn_t *m, int l) { return (size_t)m->K[l] * (size_t)m->N[l]; }

/* dst = src (n floats; src NULL: zeros), the sizes the networks use (a channel or three of 1, 8 or 16)
   by copies of known size: a call of memcpy per 4 or 32 bytes was im2col's time and a tenth of
   fp8-quantization's samples */
static inline void copy_n(float *dst, const float *src, int n) {
  static const float zero[48];
  switch (n) {
#define LOWP_COPY_K(k) \
  case k: memcpy(dst, src ? src : zero, k * sizeof *dst); break;
    LOWP_COPY_K(1) LOWP_COPY_K(3) LOWP_COPY_K(8) LOWP_COPY_K(16) LOWP_COPY_K(24) LOWP_COPY_K(48)
#undef LOWP_COPY_K
  default:
    if (src) memcpy(dst, src, (size_t)n * sizeof *dst);
    else memset(dst, 0, (size_t)n * sizeof *dst);
  }
}

/* im2col of a channels-last image batch (batch x S x S x C), 3x3, padding 1:
   col (batch*S*S x 9C), k = (dy*3+dx)*C + c. */
static void im2col(float *col, const float *in, long batch, int S, int C) {
  long bi;
  size_t K = 9 * (size_t)C;
#pragma omp parallel for schedule(static)
  for (bi = 0; bi < batch; bi++) {
    int y, x, dy, dx;
    for (y = 0; y < S; y++)
      for (x = 0; x < S; x++) {
        float *row = col + ((size_t)bi * S * S + (size_t)y * S + x) * K;
        for (dy = 0; dy < 3; dy++) {
          const int yy = y + dy - 1;
          if (yy >= 0 && yy < S && x >= 1 && x + 1 < S) { /* the three pixels of the row, adjacent in */
            copy_n(row + (size_t)dy * 3 * C, in + (((size_t)bi * S + yy) * S + x - 1) * C, 3 * C);
            continue;
          }
          for (dx = 0; dx < 3; dx++) {
            const int xx = x + dx - 1;
            copy_n(row + (size_t)(dy * 3 + dx) * C,
                   yy < 0 || yy >= S || xx < 0 || xx >= S ? NULL : in + (((size_t)bi * S + yy) * S + xx) * C, C);
          }
        }
      }
  }
}

/* The reverse: din (batch x S x S x C) = sum of the col entries that copied
   each input value, per image in a fixed order (output pixel, then dy, dx). */
static void col2im(float *din, const float *dcol, long batch, int S, int C) {
  long bi;
  size_t K = 9 * (size_t)C;
#pragma omp parallel for schedule(static)
  for (bi = 0; bi < batch; bi++) {
    int y, x, dy, dx, c;
    float *img = din + (size_t)bi * S * S * C;
    memset(img, 0, (size_t)S * S * C * sizeof *img);
    for (y = 0; y < S; y++)
      for (x = 0; x < S; x++) {
        const float *row = dcol + ((size_t)bi * S * S + (size_t)y * S + x) * K;
        for (dy = 0; dy < 3; dy++)
          for (dx = 0; dx < 3; dx++) {
            int yy = y + dy - 1, xx = x + dx - 1;
            float *dst;
            const float *src = row + (size_t)(dy * 3 + dx) * C;
            if (yy < 0 || yy >= S || xx < 0 || xx >= S) continue;
            dst = img + ((size_t)yy * S + xx) * C;
            for (c = 0; c < C; c++) dst[c] += src[c];
          }
      }
  }
}

static void relu(float *y, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) y[i] = y[i] > 0.0f ? y[i] : 0.0f; /* (a store each: vectorised, no branch) */
}

/* 2x2 max pool of (batch x S x S x C) into (batch x S/2 x S/2 x C); arg
   (may be NULL) records which of the four (0..3, first maximum) won. */
static void maxpool(float *out, uint8_t *arg, const float *in, long batch, int S, int C) {
  long bi;
  int T = S / 2;
#pragma omp parallel for schedule(static)
  for (bi = 0; bi < batch; bi++) {
    int y, x, c, q;
    for (y = 0; y < T; y++)
      for (x = 0; x < T; x++)
        for (c = 0; c < C; c++) {
          size_t o = (((size_t)bi * T + y) * T + x) * C + c;
          float best = 0.0f;
          int which = 0;
          for (q = 0; q < 4; q++) {
            float v = in[(((size_t)bi * S + 2 * y + q / 2) * S + 2 * x + q % 2) * C + c];
            if (q == 0 || v > best) { best = v; which = q; }
          }
          out[o] = best;
          if (arg) arg[o] = (uint8_t)which;
        }
  }
}

/* Pool backward and ReLU': dz (batch x S x S x C) gets dout at the winning
   position where the pre-pool ReLU output r was > 0, zero elsewhere. */
static void maxpool_bwd(float *dz, const float *dout, const uint8_t *arg, const float *r,
                        long batch, int S, int C) {
  long bi;
  int T = S / 2;
#pragma omp parallel for schedule(static)
  for (bi = 0; bi < batch; bi++) {
    int y, x, c;
    memset(dz + (size_t)bi * S * S * C, 0, (size_t)S * S * C * sizeof *dz);
    for (y = 0; y < T; y++)
      for (x = 0; x < T; x++)
        for (c = 0; c < C; c++) {
          size_t o = (((size_t)bi * T + y) * T + x) * C + c;
          int q = arg[o];
          size_t i = (((size_t)bi * S + 2 * y + q / 2) * S + 2 * x + q % 2) * C + c;
          if (r[i] > 0.0f) dz[i] = dout[o];
        }
  }
}

void lowp_cnn_gemm_bwd_w(float *dw, float *db, const float *x, const float *dy, long rows, int K,
                         int N) {
  long k, r;
  int j;
#pragma omp parallel for schedule(static)
  for (k = 0; k < K; k++) {
    float *dwr = dw + k * N;
    long t;
    int jj;
    for (jj = 0; jj < N; jj++) dwr[jj] = 0.0f;
    for (t = 0; t < rows; t++) {
      const float xv = x[t * K + k];
      const float *dyr = dy + t * N;
      if (xv == 0.0f) continue;
      for (jj = 0; jj < N; jj++) dwr[jj] += xv * dyr[jj];
    }
  }
  if (!db) return;
  for (j = 0; j < N; j++) db[j] = 0.0f;
  for (r = 0; r < rows; r++)
    for (j = 0; j < N; j++) db[j] += dy[r * N + j];
}

void lowp_cnn_gemm_bwd_x(float *dx, const float *dy, const float *wt, long rows, int K, int N) {
  long r;
#pragma omp parallel for schedule(static)
  for (r = 0; r < rows; r++) {
    float *dxr = dx + r * K;
    int j, k;
    for (k = 0; k < K; k++) dxr[k] = 0.0f;
    for (j = 0; j < N; j++) {
      const float d = dy[r * N + j];
      const float *wr = wt + (size_t)j * K;
      if (d == 0.0f) continue;
      for (k = 0; k < K; k++) dxr[k] += d * wr[k];
    }
  }
}

void lowp_cnn_transpose(float *t, const float *w, int rows, int cols) {
  int i, j;
  for (i = 0; i < rows; i++)
    for (j = 0; j < cols; j++) t[(size_t)j * rows + i] = w[(size_t)i * cols + j];
}

/* Everything the forward pass keeps for the backward pass. */
typedef struct {
  float *col0, *r0, *p0, *col1, *r1, *p1, *h, *z;
  uint8_t *a0, *a1;
  void *buf;
} acts_t;

static int acts_alloc(acts_t *a, const lowp_cnn_t *m, size_t B) {
  size_t n[8], total = 0, i;
  float **p[8];
  char *c;
  n[0] = B * IMG * IMG * 9;          p[0] = &a->col0;
  n[1] = B * IMG * IMG * m->c1;      p[1] = &a->r0;
  n[2] = B * H1 * H1 * m->c1;        p[2] = &a->p0;
  n[3] = B * H1 * H1 * 9 * m->c1;    p[3] = &a->col1;
  n[4] = B * H1 * H1 * m->c2;        p[4] = &a->r1;
  n[5] = B * H2 * H2 * m->c2;        p[5] = &a->p1;
  n[6] = B * (size_t)m->hidden;      p[6] = &a->h;
  n[7] = B * NCLS;                   p[7] = &a->z;
  for (i = 0; i < 8; i++) total += n[i];
  a->buf = malloc(total * sizeof(float) + n[2] + n[5]);
  if (!a->buf) return LOWP_ENOMEM;
  c = a->buf;
  for (i = 0; i < 8; i++) {
    *p[i] = (float *)c;
    c += n[i] * sizeof(float);
  }
  a->a0 = (uint8_t *)c;
  a->a1 = a->a0 + n[2];
  return LOWP_OK;
}

/* The forward pass into a; x stays untouched. The GEMM inputs handed to a
   callback are scratch: col0/col1 are rebuilt, p1 and h are copied. */
static int forward(acts_t *a, const float *x, size_t B, const lowp_cnn_t *m,
                   lowp_cnn_gemm_fn gemm, void *ctx, float *scratch) {
  int st = LOWP_OK;
  long b = (long)B;
  im2col(a->col0, x, b, IMG, 1);
  if (gemm) st = gemm(a->r0, a->col0, B * IMG * IMG, 0, m, ctx);
  else lowp_cnn_gemm_f32(a->r0, a->col0, B * IMG * IMG, m->K[0], m->N[0], m->w[0], m->b[0]);
  if (st) return st;
  relu(a->r0, B * IMG * IMG * m->c1);
  maxpool(a->p0, a->a0, a->r0, b, IMG, m->c1);
  im2col(a->col1, a->p0, b, H1, m->c1);
  if (gemm) st = gemm(a->r1, a->col1, B * H1 * H1, 1, m, ctx);
  else lowp_cnn_gemm_f32(a->r1, a->col1, B * H1 * H1, m->K[1], m->N[1], m->w[1], m->b[1]);
  if (st) return st;
  relu(a->r1, B * H1 * H1 * m->c2);
  maxpool(a->p1, a->a1, a->r1, b, H1, m->c2);
  if (gemm) {
    memcpy(scratch, a->p1, B * m->K[2] * sizeof *scratch);
    st = gemm(a->h, scratch, B, 2, m, ctx);
  } else {
    lowp_cnn_gemm_f32(a->h, a->p1, B, m->K[2], m->N[2], m->w[2], m->b[2]);
  }
  if (st) return st;
  relu(a->h, B * (size_t)m->hidden);
  if (gemm) {
    memcpy(scratch, a->h, B * m->K[3] * sizeof *scratch);
    st = gemm(a->z, scratch, B, 3, m, ctx);
  } else {
    lowp_cnn_gemm_f32(a->z, a->h, B, m->K[3], m->N[3], m->w[3], m->b[3]);
  }
  return st;
}

static int alloc_shape(lowp_cnn_t *m, int c1, int c2, int hidden) {
  int l;
  memset(m, 0, sizeof *m);
  if (c1 < 1 || c2 < 1 || hidden < 1 || c1 > 4096 || c2 > 4096 || hidden > 4096) return LOWP_EINVAL;
  m->c1 = c1;
  m->c2 = c2;
  m->hidden = hidden;
  m->K[0] = 9;          m->N[0] = c1;
  m->K[1] = 9 * c1;     m->N[1] = c2;
  m->K[2] = H2 * H2 * c2; m->N[2] = hidden;
  m->K[3] = hidden;     m->N[3] = NCLS;
  for (l = 0; l < LOWP_CNN_LAYERS; l++) {
    m->w[l] = calloc(wcount(m, l), sizeof(float));
    m->vw[l] = calloc(wcount(m, l), sizeof(float));
    m->b[l] = calloc((size_t)m->N[l], sizeof(float));
    m->vb[l] = calloc((size_t)m->N[l], sizeof(float));
    if (!m->w[l] || !m->vw[l] || !m->b[l] || !m->vb[l]) {
      lowp_cnn_free(m);
      return LOWP_ENOMEM;
    }
  }
  return LOWP_OK;
}

/* ----------------------------------------------------------- public API */

void lowp_cnn_free(lowp_cnn_t *m) {
  int l;
  if (!m) return;
  for (l = 0; l < LOWP_CNN_LAYERS; l++) {
    free(m->w[l]);
    free(m->b[l]);
    free(m->vw[l]);
    free(m->vb[l]);
  }
  memset(m, 0, sizeof *m);
}

int lowp_cnn_init(lowp_cnn_t *m, int c1, int c2, int hidden, uint64_t seed) {
  int l, st = alloc_shape(m, c1, c2, hidden);
  if (st) return st;
  for (l = 0; l < LOWP_CNN_LAYERS; l++) {
    lowp_rng_t r;
    size_t i, n = wcount(m, l);
    double sd = sqrt(2.0 / m->K[l]);
    lowp_rng_init(&r, seed, (uint32_t)l);
    for (i = 0; i < n; i++) m->w[l][i] = (float)(sd * lowp_rng_normal(&r));
  }
  return LOWP_OK;
}

int lowp_cnn_clone(lowp_cnn_t *dst, const lowp_cnn_t *src) {
  int l, st = alloc_shape(dst, src->c1, src->c2, src->hidden);
  if (st) return st;
  for (l = 0; l < LOWP_CNN_LAYERS; l++) {
    memcpy(dst->w[l], src->w[l], wcount(src, l) * sizeof(float));
    memcpy(dst->b[l], src->b[l], (size_t)src->N[l] * sizeof(float));
  }
  return LOWP_OK;
}

size_t lowp_cnn_nparams(const lowp_cnn_t *m) {
  size_t n = 0;
  int l;
  for (l = 0; l < LOWP_CNN_LAYERS; l++) n += wcount(m, l) + (size_t)m->N[l];
  return n;
}

/* Rows in groups of 8 (the tasks of the parallel loop); each output is
   b[j] + x[0] w[0][j] + ... in k order, one fp32 rounding per operation
   (terms with x == 0 skipped), whatever the grouping. */
#define RGROUP 8
/* One group of rows. Compiled three times where the compiler can (x86-64
   GCC or clang), for AVX-512, AVX2 and the baseline ISA, the copy chosen by
   lowp_cpu_isa (so LOWP_ISA=avx2 runs here what an AVX2 CPU runs) and the
   product's width (group_copy): the j
   loop is a separate multiply and add per element (-ffp-contract=off, no
   FMA), each output's operations in k order, so the vector widths give the
   same bits (checked by comparing the fp8-quantization outputs and trained
   models with and without the AVX-512 copy, and with LOWP_ISA=avx2). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__SANITIZE_ADDRESS__)
#define LOWP_CNN_X86 1
#endif
#define CNN_VLOAD(v, p) memcpy(&(v), (p), sizeof(v))
/* the three copies of gemm_group (cnn_group_body.h) */
#define CNN_NAME group_base
#define CNN_ATTR
#define JB 4
#include "train/cnn_group_body.h"
#undef CNN_NAME
#undef CNN_ATTR
#undef JB
#ifdef LOWP_CNN_X86
/* rows4m_avx512's AVX2 copy: four rows t..t+3 with zeros over the columns [0, jw) (whole pairs of blocks:
   N = 16, the CNN's conv2, included), two blocks of 8 columns a step (eight chains), a term with
   x[k] == 0 skipped by a blend (the sum before it kept in every lane where x[k] == 0) instead of the
   two-row loop's branch per term and row. Each output's operations are those of the one-row loop:
   b[j], then x[k] w[k][j] (one multiplication, one addition, no FMA) added in k order where x[k] != 0. */
__attribute__((target("avx2"))) static void rows4m_avx2(float *y, const float *x, size_t t, int jw, int K, int N,
                                                        const float *w, const float *b) {
  const float *xr[4];
  float *y0 = y + t * N;
  int j0, k, i;
  for (i = 0; i < 4; i++) xr[i] = x + (t + (size_t)i) * K;
  for (j0 = 0; j0 + 16 <= jw; j0 += 16) {
    __m256 a[4][2];
    for (i = 0; i < 4; i++) a[i][0] = _mm256_loadu_ps(b + j0), a[i][1] = _mm256_loadu_ps(b + j0 + 8);
    for (k = 0; k < K; k++) {
      const float *wr = w + (size_t)k * N + j0;
      const __m256 w0 = _mm256_loadu_ps(wr), w1 = _mm256_loadu_ps(wr + 8);
      for (i = 0; i < 4; i++) {
        const __m256 uv = _mm256_set1_ps(xr[i][k]);
        const __m256 skip = _mm256_cmp_ps(uv, _mm256_setzero_ps(), _CMP_EQ_OQ);
        a[i][0] = _mm256_blendv_ps(_mm256_add_ps(a[i][0], _mm256_mul_ps(uv, w0)), a[i][0], skip);
        a[i][1] = _mm256_blendv_ps(_mm256_add_ps(a[i][1], _mm256_mul_ps(uv, w1)), a[i][1], skip);
      }
    }
    for (i = 0; i < 4; i++) {
      _mm256_storeu_ps(y0 + (size_t)i * N + j0, a[i][0]);
      _mm256_storeu_ps(y0 + (size_t)i * N + j0 + 8, a[i][1]);
    }
  }
}
#define CNN_ROWS4M rows4m_avx2
#define CNN_NAME group_avx2
#define CNN_ATTR __attribute__((target("avx2")))
#define JB 8
#include "train/cnn_group_body.h"
#undef CNN_ROWS4M
#undef CNN_NAME
#undef CNN_ATTR
#undef JB
/* Four rows t..t+3 over the four-block columns [0, jw) on AVX-512 where a row holds a zero: each term
   added by a masked addition whose mask is x[k] != 0, so a term with x == 0 is skipped in every lane
   with no branch and no blend (sixteen chains, as _rows4w; the two-row loop's tests and branches
   per term and row, taken at random on ReLU's and fp8's zeros, were most of its time). Each output's
   operations are those of the one-row loop: b[j], then x[k] w[k][j] (one multiplication, one
   addition, no FMA) added in k order where x[k] != 0. */
__attribute__((target("avx512f"))) static void rows4m_avx512(float *y, const float *x, size_t t, int jw, int K,
                                                             int N, const float *w, const float *b) {
  const float *xr[4];
  float *y0 = y + t * N;
  int j0, k, i, q;
  for (i = 0; i < 4; i++) xr[i] = x + (t + (size_t)i) * K;
  for (j0 = 0; j0 + 64 <= jw; j0 += 64) {
    __m512 a[4][4];
    for (q = 0; q < 4; q++) a[0][q] = a[1][q] = a[2][q] = a[3][q] = _mm512_loadu_ps(b + j0 + 16 * q);
    for (k = 0; k < K; k++) {
      const float *wr = w + (size_t)k * N + j0;
      const __m512 w0 = _mm512_loadu_ps(wr), w1 = _mm512_loadu_ps(wr + 16), w2 = _mm512_loadu_ps(wr + 32),
                   w3 = _mm512_loadu_ps(wr + 48);
      for (i = 0; i < 4; i++) {
        const float u = xr[i][k];
        const __mmask16 m = (__mmask16)(u != 0.0f ? 0xffff : 0);
        const __m512 uv = _mm512_set1_ps(u);
        a[i][0] = _mm512_mask_add_ps(a[i][0], m, a[i][0], _mm512_mul_ps(uv, w0));
        a[i][1] = _mm512_mask_add_ps(a[i][1], m, a[i][1], _mm512_mul_ps(uv, w1));
        a[i][2] = _mm512_mask_add_ps(a[i][2], m, a[i][2], _mm512_mul_ps(uv, w2));
        a[i][3] = _mm512_mask_add_ps(a[i][3], m, a[i][3], _mm512_mul_ps(uv, w3));
      }
    }
    for (i = 0; i < 4; i++)
      for (q = 0; q < 4; q++) _mm512_storeu_ps(y0 + (size_t)i * N + j0 + 16 * q, a[i][q]);
  }
}
#define CNN_ROWS4M rows4m_avx512
#define CNN_NAME group_avx512
#define CNN_ATTR __attribute__((target("avx512f")))
#define JB 16
#include "train/cnn_group_body.h"
#undef CNN_ROWS4M
#undef CNN_NAME
#undef CNN_ATTR
#undef JB
#endif

typedef void (*gemm_group_fn)(float *, const float *, size_t, size_t, int, int, const float *, const float *,
                              int);

/* the widest copy this CPU runs whose vectors are no wider than a row of y (N columns): a copy runs a
   narrower product on scalars (cnn_group_body.h) */
static gemm_group_fn group_copy(int N) {
#ifdef LOWP_CNN_X86
  lowp_isa_t isa = lowp_cpu_isa(0);
  if (isa == LOWP_ISA_AVX512 && N >= 16) return group_avx512;
  if (isa >= LOWP_ISA_AVX2 && N >= 8) return group_avx2;
#endif
  (void)N;
  return group_base;
}

/* 1 where adding a term x[k] w[k][j] with x[k] == 0 leaves every output as skipping it does, so the
   groups may add every term, with no test (the dense loops), and give the same bits: every w finite and
   no b[j] a negative zero. Proof: such a term is x w = +-0 (x = +-0, w finite). A partial sum s starts at
   b[j] and is never -0: an addition of two finite binary32 values is exact where its result is zero or
   subnormal (the spacing of the subnormals divides both), so it gives zero only by exact cancellation,
   +0 in round to nearest (IEEE 754 6.3), or from two zeros of which s is not -0: +0. Then s + (+-0) = s
   for a nonzero s (and an inf: the same inf; a NaN: the same NaN, already quiet) and +0 + (+-0) = +0
   = s. Otherwise (an inf or NaN weight: 0 inf is NaN; a -0 bias: -0 + +0 = +0) the zeros are skipped
   by a test. The scan reads K N + N values, a row's share of the product's work (the ReLU zeros of the
   CNN and the fp8 flushes to zero of the quantized networks sent their rows to the masked four-row loop,
   twice the dense loop's operations per term). */
static int zeros_addable(const float *w, size_t kn, const float *b, int N) {
  uint32_t bad = 0;
  size_t i;
  for (i = 0; i < kn; i++) {
    uint32_t u;
    memcpy(&u, &w[i], sizeof u);
    bad |= (u & 0x7f800000u) == 0x7f800000u; /* inf or NaN */
  }
  for (i = 0; i < (size_t)N; i++) {
    uint32_t u;
    memcpy(&u, &b[i], sizeof u);
    bad |= u == 0x80000000u; /* -0 */
  }
  return !bad;
}

void lowp_cnn_gemm_f32(float *y, const float *x, size_t rows, int K, int N, const float *w,
                       const float *b) {
  long g, ng = (long)((rows + RGROUP - 1) / RGROUP);
  gemm_group_fn fn = group_copy(N);
  const int zadd = zeros_addable(w, (size_t)K * (size_t)N, b, N);
  if (lowp_omp_inline()) { /* the same groups, on this thread (omp_inline.h) */
    for (g = 0; g < ng; g++) {
      size_t r0 = (size_t)g * RGROUP;
      fn(y, x, r0, rows - r0 < RGROUP ? rows - r0 : RGROUP, K, N, w, b, zadd);
    }
    return;
  }
#pragma omp parallel for schedule(static)
  for (g = 0; g < ng; g++) {
    size_t r0 = (size_t)g * RGROUP;
    fn(y, x, r0, rows - r0 < RGROUP ? rows - r0 : RGROUP, K, N, w, b, zadd);
  }
}

int lowp_cnn_forward(float *logits, const float *x, size_t batch, const lowp_cnn_t *m,
                     lowp_cnn_gemm_fn gemm, void *ctx) {
  acts_t a;
  float *scratch;
  int st = acts_alloc(&a, m, batch);
  if (st) return st;
  scratch = malloc(batch * (size_t)(m->K[2] > m->K[3] ? m->K[2] : m->K[3]) * sizeof *scratch);
  if (!scratch) { free(a.buf); return LOWP_ENOMEM; }
  st = forward(&a, x, batch, m, gemm, ctx, scratch);
  if (st == LOWP_OK) memcpy(logits, a.z, batch * NCLS * sizeof *logits);
  free(scratch);
  free(a.buf);
  return st;
}

int lowp_cnn_sgd_step(lowp_cnn_t *m, double *loss, const float *x, const uint8_t *labels,
                      size_t batch, float lr, float momentum) {
  acts_t a;
  float *dw[LOWP_CNN_LAYERS], *db[LOWP_CNN_LAYERS], *dz, *dh, *dp1, *dr1, *dcol1, *dp0, *dr0, *wt;
  size_t s, maxw = 0, nb1 = batch * H1 * H1;
  long B = (long)batch;
  double sum = 0.0;
  int l, st;
  void *gbuf;
  char *c;

  for (s = 0; s < batch; s++)
    if (labels[s] >= NCLS) return LOWP_EINVAL;
  if ((st = acts_alloc(&a, m, batch)) != LOWP_OK) return st;
  {
    size_t n = 0;
    for (l = 0; l < LOWP_CNN_LAYERS; l++) {
      n += 2 * wcount(m, l) + (size_t)m->N[l]; /* dw, db, and the transpose room */
      if (wcount(m, l) > maxw) maxw = wcount(m, l);
    }
    n += batch * NCLS + batch * (size_t)m->hidden + batch * (size_t)m->K[2] +
         nb1 * (size_t)m->c2 + nb1 * (size_t)m->K[1] + nb1 * (size_t)m->c1 +
         batch * IMG * IMG * (size_t)m->c1;
    gbuf = malloc(n * sizeof(float));
    if (!gbuf) { free(a.buf); return LOWP_ENOMEM; }
  }
  c = gbuf;
#define TAKE(p, n) do { (p) = (float *)c; c += (size_t)(n) * sizeof(float); } while (0)
  for (l = 0; l < LOWP_CNN_LAYERS; l++) {
    TAKE(dw[l], wcount(m, l));
    TAKE(db[l], m->N[l]);
  }
  TAKE(wt, maxw);
  TAKE(dz, batch * NCLS);
  TAKE(dh, batch * (size_t)m->hidden);
  TAKE(dp1, batch * (size_t)m->K[2]);
  TAKE(dr1, nb1 * (size_t)m->c2);
  TAKE(dcol1, nb1 * (size_t)m->K[1]);
  TAKE(dp0, nb1 * (size_t)m->c1);
  TAKE(dr0, batch * IMG * IMG * (size_t)m->c1);
#undef TAKE

  (void)forward(&a, x, batch, m, NULL, NULL, NULL);
  /* softmax cross-entropy per sample in fp64; d loss / d logit = (p - onehot) / batch */
  for (s = 0; s < batch; s++) {
    const float *z = a.z + s * NCLS;
    double mx = z[0], se = 0.0;
    int k;
    for (k = 1; k < NCLS; k++)
      if (z[k] > mx) mx = z[k];
    for (k = 0; k < NCLS; k++) se += exp((double)z[k] - mx);
    sum += log(se) + mx - (double)z[labels[s]];
    for (k = 0; k < NCLS; k++) {
      double p = exp((double)z[k] - mx) / se;
      dz[s * NCLS + k] = (float)((p - (k == labels[s])) / (double)batch);
    }
  }
  *loss = sum / (double)batch;

  /* layer 3: logits = h W3 + b3 */
  lowp_cnn_gemm_bwd_w(dw[3], db[3], a.h, dz, B, m->K[3], m->N[3]);
  lowp_cnn_transpose(wt, m->w[3], m->K[3], m->N[3]);
  lowp_cnn_gemm_bwd_x(dh, dz, wt, B, m->K[3], m->N[3]);
  for (s = 0; s < batch * (size_t)m->hidden; s++)
    if (!(a.h[s] > 0.0f)) dh[s] = 0.0f;
  /* layer 2: h = relu(p1 W2 + b2) */
  lowp_cnn_gemm_bwd_w(dw[2], db[2], a.p1, dh, B, m->K[2], m->N[2]);
  lowp_cnn_transpose(wt, m->w[2], m->K[2], m->N[2]);
  lowp_cnn_gemm_bwd_x(dp1, dh, wt, B, m->K[2], m->N[2]);
  maxpool_bwd(dr1, dp1, a.a1, a.r1, B, H1, m->c2);
  /* layer 1: r1 = relu(col1 W1 + b1) */
  lowp_cnn_gemm_bwd_w(dw[1], db[1], a.col1, dr1, (long)nb1, m->K[1], m->N[1]);
  lowp_cnn_transpose(wt, m->w[1], m->K[1], m->N[1]);
  lowp_cnn_gemm_bwd_x(dcol1, dr1, wt, (long)nb1, m->K[1], m->N[1]);
  col2im(dp0, dcol1, B, H1, m->c1);
  maxpool_bwd(dr0, dp0, a.a0, a.r0, B, IMG, m->c1);
  /* layer 0: r0 = relu(col0 W0 + b0) */
  lowp_cnn_gemm_bwd_w(dw[0], db[0], a.col0, dr0, B * IMG * IMG, m->K[0], m->N[0]);

  for (l = 0; l < LOWP_CNN_LAYERS; l++) {
    size_t i, n = wcount(m, l), nb = (size_t)m->N[l];
    for (i = 0; i < n; i++) {
      m->vw[l][i] = momentum * m->vw[l][i] + dw[l][i];
      m->w[l][i] -= lr * m->vw[l][i];
    }
    for (i = 0; i < nb; i++) {
      m->vb[l][i] = momentum * m->vb[l][i] + db[l][i];
      m->b[l][i] -= lr * m->vb[l][i];
    }
  }
  free(gbuf);
  free(a.buf);
  return LOWP_OK;
}
