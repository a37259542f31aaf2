/* lowp_vit -- a small fp32 vision transformer: forward, backprop, AdamW */

/*
 * Every sum runs in one fixed order; OpenMP splits independent outputs
 * only (rows, (image, head) pairs, gradient rows): the bytes do not depend
 * on the thread count. The products go through kernels/train/cnn's GEMMs
 * (lowp_cnn_gemm_f32 forward, lowp_cnn_gemm_bwd_w / _x backward). No fast math.
 */

#include "train/vit.h"

#include "train/cnn.h"
#include "train/gelu.h"
#include "cpu.h"
#include "rng/rng.h"
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMG 28
#define NCLS LOWP_VIT_NCLASS
#define LN_EPS 1e-5
#define NPB 12 /* parameter tensors per block */

/* ------------------------------------------------------------ layout */

static const char *const block_names[NPB] = {"ln1.g", "ln1.b", "qkv.w", "qkv.b", "proj.w", "proj.b",
                                             "ln2.g", "ln2.b", "fc1.w", "fc1.b", "fc2.w", "fc2.b"};

/* Shape of tensor i without its offset. */
static lowp_vit_tensor_t shape_of(const lowp_vit_t *m, int i) {
  lowp_vit_tensor_t t;
  int d = m->d, L = m->layers;
  memset(&t, 0, sizeof t);
  t.site = -1;
  t.ndim = 1;
  if (i < 3) {
    static const char *const nm[3] = {"embed.w", "embed.b", "pos"};
    snprintf(t.name, sizeof t.name, "%s", nm[i]);
    t.ndim = i == 1 ? 1 : 2;
    t.shape[0] = i == 0 ? (size_t)m->pdim : i == 1 ? (size_t)d : (size_t)m->tokens;
    t.shape[1] = (size_t)d;
    t.site = i < 2 ? 0 : -1;
    t.decay = i == 0;
  } else if (i < 3 + NPB * L) {
    int l = (i - 3) / NPB, j = (i - 3) % NPB;
    static const int site_of[NPB] = {0, 0, LOWP_VIT_QKV, LOWP_VIT_QKV, LOWP_VIT_PROJ, LOWP_VIT_PROJ,
                                     0, 0, LOWP_VIT_FC1, LOWP_VIT_FC1, LOWP_VIT_FC2, LOWP_VIT_FC2};
    static const int rows_of[NPB] = {0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 2, 0}; /* 1: d rows, 2: mlp rows */
    static const int cols_of[NPB] = {1, 1, 3, 3, 1, 1, 1, 1, 4, 4, 1, 1}; /* x d; 4: mlp */
    size_t cols = cols_of[j] == 4 ? (size_t)m->mlp : (size_t)cols_of[j] * (size_t)d;
    snprintf(t.name, sizeof t.name, "blocks.%d.%s", l, block_names[j]);
    t.ndim = rows_of[j] ? 2 : 1;
    t.shape[0] = rows_of[j] == 1 ? (size_t)d : rows_of[j] == 2 ? (size_t)m->mlp : cols;
    t.shape[1] = rows_of[j] ? cols : 0;
    t.site = site_of[j] ? 1 + 6 * l + site_of[j] - 1 : -1;
    t.decay = rows_of[j] != 0;
  } else {
    int j = i - 3 - NPB * L;
    static const char *const nm[4] = {"lnf.g", "lnf.b", "head.w", "head.b"};
    snprintf(t.name, sizeof t.name, "%s", nm[j]);
    t.ndim = j == 2 ? 2 : 1;
    t.shape[0] = j == 3 ? NCLS : (size_t)d;
    t.shape[1] = j == 2 ? NCLS : 0;
    t.site = j >= 2 ? 1 + 6 * L : -1;
    t.decay = j == 2;
  }
  t.count = t.ndim == 2 ? t.shape[0] * t.shape[1] : t.shape[0];
  return t;
}

lowp_vit_tensor_t lowp_vit_tensor(const lowp_vit_t *m, int i) {
  lowp_vit_tensor_t t = shape_of(m, i);
  size_t off = 0;
  int j;
  for (j = 0; j < i; j++) off += shape_of(m, j).count;
  t.offset = off;
  return t;
}

int lowp_vit_nsites(const lowp_vit_t *m) { return 2 + 6 * m->layers; }

int lowp_vit_site_kind(const lowp_vit_t *m, int site, int *block) {
  if (site <= 0 || site >= 1 + 6 * m->layers) {
    if (block) *block = -1;
    return site <= 0 ? LOWP_VIT_EMBED : LOWP_VIT_HEAD;
  }
  if (block) *block = (site - 1) / 6;
  return 1 + (site - 1) % 6;
}

/* Pointers to every tensor of a buffer (w or g), in tensor order. */
typedef struct {
  float *emb_w, *emb_b, *pos;
  float *t[LOWP_VIT_MAXLAYERS][NPB];
  float *lnf_g, *lnf_b, *head_w, *head_b;
} params_t;

static void params_of(params_t *p, const lowp_vit_t *m, float *base) {
  size_t off = 0;
  int i, n = m->ntensors;
  for (i = 0; i < n; i++) {
    float *q = base + off;
    off += shape_of(m, i).count;
    if (i == 0) p->emb_w = q;
    else if (i == 1) p->emb_b = q;
    else if (i == 2) p->pos = q;
    else if (i < n - 4) p->t[(i - 3) / NPB][(i - 3) % NPB] = q;
    else if (i == n - 4) p->lnf_g = q;
    else if (i == n - 3) p->lnf_b = q;
    else if (i == n - 2) p->head_w = q;
    else p->head_b = q;
  }
}
enum { LN1G, LN1B, QKVW, QKVB, PROJW, PROJB, LN2G, LN2B, FC1W, FC1B, FC2W, FC2B };

/* --------------------------------------------------------- life cycle */

void lowp_vit_free(lowp_vit_t *m) {
  if (!m) return;
  free(m->w);
  free(m->g);
  free(m->m1);
  free(m->m2);
  memset(m, 0, sizeof *m);
}

int lowp_vit_init(lowp_vit_t *m, int patch, int d, int heads, int mlp, int layers, uint64_t seed) {
  int i;
  memset(m, 0, sizeof *m);
  if (patch < 1 || patch > IMG || IMG % patch || d < 1 || d > 1024 || heads < 1 || d % heads ||
      mlp < 1 || mlp > 1024 || layers < 1 || layers > LOWP_VIT_MAXLAYERS)
    return LOWP_EINVAL;
  m->patch = patch;
  m->tokens = (IMG / patch) * (IMG / patch);
  m->pdim = patch * patch;
  m->d = d;
  m->heads = heads;
  m->mlp = mlp;
  m->layers = layers;
  m->ntensors = 3 + NPB * layers + 4;
  for (i = 0; i < m->ntensors; i++) m->nparams += shape_of(m, i).count;
  m->w = calloc(m->nparams, sizeof(float));
  m->g = calloc(m->nparams, sizeof(float));
  m->m1 = calloc(m->nparams, sizeof(float));
  m->m2 = calloc(m->nparams, sizeof(float));
  if (!m->w || !m->g || !m->m1 || !m->m2) {
    lowp_vit_free(m);
    return LOWP_ENOMEM;
  }
  for (i = 0; i < m->ntensors; i++) {
    lowp_vit_tensor_t t = lowp_vit_tensor(m, i);
    float *w = m->w + t.offset;
    size_t k;
    int kind = t.site >= 0 ? lowp_vit_site_kind(m, t.site, NULL) : -1;
    lowp_rng_t r;
    double sd = t.ndim == 2 ? 1.0 / sqrt((double)t.shape[0]) : 0.0;
    if (strstr(t.name, "pos")) sd = 0.02;
    if (t.decay && (kind == LOWP_VIT_PROJ || kind == LOWP_VIT_FC2)) sd /= sqrt(2.0 * layers);
    lowp_rng_init(&r, seed, (uint32_t)i);
    for (k = 0; k < t.count; k++) w[k] = t.ndim == 2 ? (float)(sd * lowp_rng_normal(&r)) : 0.0f;
    if (strstr(t.name, ".g")) /* layer-norm gains */
      for (k = 0; k < t.count; k++) w[k] = 1.0f;
  }
  return LOWP_OK;
}

void lowp_vit_gemm_f32(float *y, const float *x, size_t rows, int K, int N, const float *w,
                       const float *bias, size_t nb) {
  static const float zero[1024] = {0};
  size_t b;
  for (b = 0; b < nb; b++)
    lowp_cnn_gemm_f32(y + b * rows * (size_t)N, x + b * rows * (size_t)K, rows, K, N,
                      w + (nb > 1 ? b * (size_t)K * (size_t)N : 0), bias ? bias : zero);
}

/* ---------------------------------------------------------- forward */

/* What the forward pass keeps for the backward pass. */
typedef struct {
  size_t B, R; /* images, token rows */
  float *x0;   /* R x pdim patches */
  float *xh1[LOWP_VIT_MAXLAYERS], *a[LOWP_VIT_MAXLAYERS], *rs1[LOWP_VIT_MAXLAYERS];
  float *qkv[LOWP_VIT_MAXLAYERS], *P[LOWP_VIT_MAXLAYERS], *o[LOWP_VIT_MAXLAYERS];
  float *xh2[LOWP_VIT_MAXLAYERS], *c[LOWP_VIT_MAXLAYERS], *rs2[LOWP_VIT_MAXLAYERS];
  float *u[LOWP_VIT_MAXLAYERS], *ga[LOWP_VIT_MAXLAYERS];
  float *h, *xhf, *rsf, *hf, *pooled, *z;
  float *q, *kt, *v, *att, *tmp, *scratch; /* work space */
  void *buf;
} acts_t;

static size_t scratch_len(const lowp_vit_t *m) {
  size_t w = (size_t)m->pdim;
  if ((size_t)3 * m->d > w) w = (size_t)3 * m->d;
  if ((size_t)m->mlp > w) w = (size_t)m->mlp;
  if ((size_t)m->heads * m->tokens > w) w = (size_t)m->heads * m->tokens;
  return w;
}

static int acts_alloc(acts_t *a, const lowp_vit_t *m, size_t B) {
  size_t R = B * (size_t)m->tokens, d = (size_t)m->d, mlp = (size_t)m->mlp, T = (size_t)m->tokens;
  size_t att = R * (size_t)m->heads * T, per = 5 * R * d + 2 * R + 3 * R * d + att + 2 * R * mlp;
  size_t sw = scratch_len(m), total = (size_t)m->layers * per + R * (size_t)m->pdim + 3 * R * d + R +
                                      B * d + B * NCLS + 3 * R * d + att + R * sw + R * sw;
  float *p;
  int l;
  memset(a, 0, sizeof *a);
  a->B = B;
  a->R = R;
  a->buf = malloc(total * sizeof(float));
  if (!a->buf) return LOWP_ENOMEM;
  p = a->buf;
#define TAKE(q, n) do { (q) = p; p += (n); } while (0)
  TAKE(a->x0, R * (size_t)m->pdim);
  for (l = 0; l < m->layers; l++) {
    TAKE(a->xh1[l], R * d); TAKE(a->a[l], R * d); TAKE(a->rs1[l], R);
    TAKE(a->qkv[l], 3 * R * d); TAKE(a->P[l], att); TAKE(a->o[l], R * d);
    TAKE(a->xh2[l], R * d); TAKE(a->c[l], R * d); TAKE(a->rs2[l], R);
    TAKE(a->u[l], R * mlp); TAKE(a->ga[l], R * mlp);
  }
  TAKE(a->h, R * d); TAKE(a->xhf, R * d); TAKE(a->rsf, R); TAKE(a->hf, R * d);
  TAKE(a->pooled, B * d); TAKE(a->z, B * NCLS);
  TAKE(a->q, R * d); TAKE(a->kt, R * d); TAKE(a->v, R * d); TAKE(a->att, att);
  TAKE(a->tmp, R * sw); TAKE(a->scratch, R * sw);
#undef TAKE
  return LOWP_OK;
}

/* Rows r0 .. r0 + nr - 1 (nr <= LN_ROWS) of layernorm, side by side: each row's sums are its own
   additions in j order, as one row alone (the rows' chains of dependent additions interleaved, where one
   row's waited on the adder's latency: 4.8% of fp8-quantization's samples) */
enum { LN_ROWS = 4 };
static void ln_rows(float *y, float *xh, float *rs, const float *x, size_t r0, int nr, int d, const float *g,
                    const float *b) {
  double mean[LN_ROWS] = {0}, var[LN_ROWS] = {0};
  const float *xr[LN_ROWS];
  int i, j;
  for (i = 0; i < LN_ROWS; i++) xr[i] = x + (r0 + (size_t)(i < nr ? i : 0)) * d; /* missing rows: row r0 again */
  for (j = 0; j < d; j++)
    for (i = 0; i < LN_ROWS; i++) mean[i] += xr[i][j];
  for (i = 0; i < LN_ROWS; i++) mean[i] /= d;
  for (j = 0; j < d; j++)
    for (i = 0; i < LN_ROWS; i++) var[i] += ((double)xr[i][j] - mean[i]) * ((double)xr[i][j] - mean[i]);
  for (i = 0; i < nr; i++) {
    const size_t r = r0 + (size_t)i;
    const double rstd = 1.0 / sqrt(var[i] / d + LN_EPS);
    rs[r] = (float)rstd;
    for (j = 0; j < d; j++) {
      float n = (float)(((double)xr[i][j] - mean[i]) * rstd);
      xh[r * d + j] = n;
      y[r * d + j] = n * g[j] + b[j];
    }
  }
}

/* Layer norm of R rows of d: xh = normalised, rs = 1/sqrt(var + eps), y = xh g + b. */
static void layernorm(float *y, float *xh, float *rs, const float *x, size_t R, int d,
                      const float *g, const float *b) {
  long t;
#pragma omp parallel for schedule(static)
  for (t = 0; t < (long)((R + LN_ROWS - 1) / LN_ROWS); t++) {
    const size_t r0 = (size_t)t * LN_ROWS;
    ln_rows(y, xh, rs, x, r0, R - r0 < LN_ROWS ? (int)(R - r0) : LN_ROWS, d, g, b);
  }
}

#define GELU_C 0.7978845608028654 /* sqrt(2 / pi) */
static double gelu_d(float u) {
  double t = tanh(GELU_C * ((double)u + 0.044715 * (double)u * u * u));
  return 0.5 * (1.0 + t) + 0.5 * u * (1.0 - t * t) * GELU_C * (1.0 + 3 * 0.044715 * (double)u * u);
}

typedef struct {
  const lowp_vit_t *m;
  lowp_vit_gemm_fn gemm;
  void *ctx;
  float *scratch;
  lowp_vit_observe_fn obs;
  void *octx;
} fwd_t;

/* One site: x is copied to scratch first when a callback computes it. */
static int site(const fwd_t *f, float *y, const float *x, size_t rows, int K, int N, const float *w,
                const float *bias, size_t nb, int s) {
  if (!f->gemm) {
    lowp_vit_gemm_f32(y, x, rows, K, N, w, bias, nb);
    return LOWP_OK;
  }
  memcpy(f->scratch, x, nb * rows * (size_t)K * sizeof *x);
  return f->gemm(y, f->scratch, rows, K, N, w, bias, nb, s, f->ctx);
}

/* One row's softmax of s * scale (T <= 1024 values) into P, in fp64 with libm's exp: the definition. */
static void softmax_row_ref(float *P, const float *s, int T, double scale) {
  double mx = s[0], se = 0.0, e[1024];
  int j;
  for (j = 1; j < T; j++)
    if (s[j] > mx) mx = s[j];
  for (j = 0; j < T; j++) se += (e[j] = exp(((double)s[j] - mx) * scale));
  for (j = 0; j < T; j++) P[j] = (float)(e[j] / se);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define LOWP_VIT_X86 1
#include "train/exp4_avx2.h"

#include <immintrin.h>

/* The same row with e' = lowp__exp4_avx2 (train/exp4_avx2.h: within d = 2^-50.1 = 7.4 u of e^x, u =
   2^-53) in place of libm's exp, kept only where every P provably has the definition's bits; returns 1
   then, 0 where the row must be computed by softmax_row_ref (P may hold anything). T a multiple of 4,
   the arguments x_j = (s_j - max) scale (the definition's operations) in [-700, 0] (no NaN, no
   infinity, e^x_j and the quotients normal binary64 numbers). The bound: glibc's exp is within 1 unit
   in the last place, 2u relative (the glibc manual, "Known Maximum Errors in Math Functions", from
   sysdeps/x86_64/fpu/libm-test-ulps: exp, double, 1), so e_j = E_j (1 + a_j), e'_j = E_j (1 + b_j) with
   E_j = e^x_j, |a_j| <= 2u, |b_j| <= 7.4u. Each sum of T positive terms in any order (the definition's
   left to right, here four lanes then their sum) is within gamma_(T-1) = (T-1) u / (1 - (T-1) u) of the
   exact one (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section 4.2), and S / S'
   within the terms' ratios: e_j / se and e'_j / se' differ by a factor within 2 (2u + 7.4u) +
   2 gamma_(T-1) + O(T^2 u^2) of 1, and with each quotient's rounding, q = fl(e_j / se) and q' differ
   by less than (2T + 19) u q' (T <= 1024). m = (2T + 24) u q', less the roundings of m and of q' +- m
   (u q' each), still covers q: if fl32(q' - m) = fl32(q' + m), the binary32 rounding (monotone) gives
   fl32(q) the same bits. Rows of 16 here: m = 2^-47.2 q', so a row fails with probability about 2^-19. */
__attribute__((target("avx2,fma"))) static int softmax_row_avx2(float *P, const float *s, int T, double scale) {
  const __m256d lo = _mm256_set1_pd(-700.0), rel = _mm256_set1_pd((2.0 * T + 24.0) * 0x1p-53);
  __m256d e[256], acc = _mm256_setzero_pd(), vmx, vsc = _mm256_set1_pd(scale), se;
  double mx = s[0];
  int j, ok = 15;
  for (j = 1; j < T; j++)
    if (s[j] > mx) mx = s[j];
  vmx = _mm256_set1_pd(mx);
  for (j = 0; j < T; j += 4) {
    __m256d x = _mm256_mul_pd(_mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(s + j)), vmx), vsc);
    ok &= _mm256_movemask_pd(_mm256_cmp_pd(x, lo, _CMP_GE_OQ)); /* NaN and -inf fail (x <= 0 otherwise) */
    e[j / 4] = lowp__exp4_avx2(x);
    acc = _mm256_add_pd(acc, e[j / 4]);
  }
  if (ok != 15) return 0;
  se = _mm256_add_pd(acc, _mm256_permute4x64_pd(acc, 0x4e)); /* any order: the bound is the same */
  se = _mm256_add_pd(se, _mm256_permute_pd(se, 5));
  for (j = 0; j < T; j += 4) {
    __m256d q = _mm256_div_pd(e[j / 4], se), m = _mm256_mul_pd(q, rel);
    __m128 f = _mm256_cvtpd_ps(q);
    __m128i a = _mm_castps_si128(_mm256_cvtpd_ps(_mm256_sub_pd(q, m)));
    __m128i b = _mm_castps_si128(_mm256_cvtpd_ps(_mm256_add_pd(q, m)));
    ok &= _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(a, b)));
    _mm_storeu_ps(P + j, f);
  }
  return ok == 15;
}
#endif

/* Rows softmax of S * scale (n rows of T) into P, in fp64 (softmax_row_ref's bits from either copy, isa
   at most what this CPU runs with FMA); returns the number of rows the AVX2 copy left to the reference. */
size_t lowp__vit_softmax_rows(float *P, const float *S, size_t n, int T, double scale, lowp_isa_t isa) {
  size_t nref = 0;
  long r;
#ifdef LOWP_VIT_X86
  lowp_isa_t cpu = lowp_cpu_isa(1);
  int fast = (isa < cpu ? isa : cpu) >= LOWP_ISA_AVX2 && T % 4 == 0 && T <= 1024 && scale > 0.0;
#else
  int fast = 0;
  (void)isa;
#endif
#pragma omp parallel for schedule(static) reduction(+ : nref)
  for (r = 0; r < (long)n; r++) {
    float *p = P + (size_t)r * T;
    const float *s = S + (size_t)r * T;
#ifdef LOWP_VIT_X86
    if (fast && softmax_row_avx2(p, s, T, scale)) continue;
#endif
    softmax_row_ref(p, s, T, scale);
    nref += (size_t)fast;
  }
  return nref;
}

/* Rows softmax of S / sqrt(dh) (n rows of T) into P, in fp64. */
static void softmax_rows(float *P, const float *S, size_t n, int T, double scale) {
  (void)lowp__vit_softmax_rows(P, S, n, T, scale, lowp_cpu_isa(0));
}

/* Multi-head attention of block l: a->qkv -> a->P, a->o. */
static int attention(acts_t *a, const fwd_t *f, int l) {
  const lowp_vit_t *m = f->m;
  int T = m->tokens, H = m->heads, d = m->d, dh = d / H, st;
  size_t BH = a->B * (size_t)H;
  long bh;
#pragma omp parallel for schedule(static)
  for (bh = 0; bh < (long)BH; bh++) {
    size_t b = (size_t)bh / H, hd = (size_t)bh % H;
    int t, j;
    for (t = 0; t < T; t++) {
      const float *row = a->qkv[l] + (b * T + t) * 3 * (size_t)d + hd * dh;
      for (j = 0; j < dh; j++) {
        a->q[((size_t)bh * T + t) * dh + j] = row[j];
        a->kt[((size_t)bh * dh + j) * T + t] = row[d + j];
        a->v[((size_t)bh * T + t) * dh + j] = row[2 * d + j];
      }
    }
  }
  st = site(f, a->att, a->q, (size_t)T, dh, T, a->kt, NULL, BH, 2 + 6 * l);
  if (st) return st;
  softmax_rows(a->P[l], a->att, BH * T, T, 1.0 / sqrt((double)dh));
  st = site(f, a->tmp, a->P[l], (size_t)T, T, dh, a->v, NULL, BH, 3 + 6 * l);
  if (st) return st;
#pragma omp parallel for schedule(static)
  for (bh = 0; bh < (long)BH; bh++) {
    size_t b = (size_t)bh / H, hd = (size_t)bh % H;
    int t;
    for (t = 0; t < T; t++)
      memcpy(a->o[l] + (b * T + t) * d + hd * dh, a->tmp + ((size_t)bh * T + t) * dh, dh * sizeof(float));
  }
  return LOWP_OK;
}

static void patches(float *x0, const float *x, size_t B, int P) {
  int G = IMG / P, T = G * G;
  long b;
#pragma omp parallel for schedule(static)
  for (b = 0; b < (long)B; b++) {
    int t, dy, dx;
    for (t = 0; t < T; t++)
      for (dy = 0; dy < P; dy++)
        for (dx = 0; dx < P; dx++)
          x0[((size_t)b * T + t) * P * P + dy * P + dx] =
              x[(size_t)b * IMG * IMG + (size_t)((t / G) * P + dy) * IMG + (t % G) * P + dx];
  }
}

static void add_into(float *h, const float *y, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) h[i] += y[i];
}

static int forward(acts_t *a, const float *x, const fwd_t *f) {
  const lowp_vit_t *m = f->m;
  params_t p;
  size_t R = a->R, d = (size_t)m->d, T = (size_t)m->tokens, i;
  int l, st;
  params_of(&p, m, m->w);
  patches(a->x0, x, a->B, m->patch);
  if ((st = site(f, a->h, a->x0, R, m->pdim, m->d, p.emb_w, p.emb_b, 1, 0))) return st;
  for (i = 0; i < R * d; i += T * d) add_into(a->h + i, p.pos, T * d); /* each image's tokens */
  if (f->obs) f->obs(a->h, R, m->d, 0, f->octx);
  for (l = 0; l < m->layers; l++) {
    float *const *t = p.t[l];
    layernorm(a->a[l], a->xh1[l], a->rs1[l], a->h, R, m->d, t[LN1G], t[LN1B]);
    if ((st = site(f, a->qkv[l], a->a[l], R, m->d, 3 * m->d, t[QKVW], t[QKVB], 1, 1 + 6 * l))) return st;
    if ((st = attention(a, f, l))) return st;
    if ((st = site(f, a->tmp, a->o[l], R, m->d, m->d, t[PROJW], t[PROJB], 1, 4 + 6 * l))) return st;
    add_into(a->h, a->tmp, R * d);
    layernorm(a->c[l], a->xh2[l], a->rs2[l], a->h, R, m->d, t[LN2G], t[LN2B]);
    if ((st = site(f, a->u[l], a->c[l], R, m->d, m->mlp, t[FC1W], t[FC1B], 1, 5 + 6 * l))) return st;
    lowp_gelu_tanh_f32(a->ga[l], a->u[l], R * (size_t)m->mlp);
    if ((st = site(f, a->tmp, a->ga[l], R, m->mlp, m->d, t[FC2W], t[FC2B], 1, 6 + 6 * l))) return st;
    add_into(a->h, a->tmp, R * d);
    if (f->obs) f->obs(a->h, R, m->d, l + 1, f->octx);
  }
  layernorm(a->hf, a->xhf, a->rsf, a->h, R, m->d, p.lnf_g, p.lnf_b);
  for (i = 0; i < a->B * d; i++) {
    size_t b = i / d, j = i % d, t;
    double s = 0.0;
    for (t = 0; t < T; t++) s += a->hf[(b * T + t) * d + j];
    a->pooled[i] = (float)(s / (double)T);
  }
  return site(f, a->z, a->pooled, a->B, m->d, NCLS, p.head_w, p.head_b, 1, 1 + 6 * m->layers);
}

int lowp_vit_forward(float *logits, const float *x, size_t batch, const lowp_vit_t *m,
                     lowp_vit_gemm_fn gemm, void *ctx) {
  return lowp_vit_forward_observed(logits, x, batch, m, gemm, ctx, NULL, NULL);
}

int lowp_vit_forward_observed(float *logits, const float *x, size_t batch, const lowp_vit_t *m,
                              lowp_vit_gemm_fn gemm, void *ctx, lowp_vit_observe_fn obs, void *octx) {
  acts_t a;
  fwd_t f;
  int st = acts_alloc(&a, m, batch);
  if (st) return st;
  f.m = m;
  f.gemm = gemm;
  f.ctx = ctx;
  f.scratch = a.scratch;
  f.obs = obs;
  f.octx = octx;
  st = forward(&a, x, &f);
  if (st == LOWP_OK) memcpy(logits, a.z, batch * NCLS * sizeof *logits);
  free(a.buf);
  return st;
}

/* --------------------------------------------------------- backward */

/* Layer-norm backward: dx = rs (dxh - mean(dxh) - xh mean(dxh xh)), dxh =
   dy g; dg, db accumulate over rows (ascending, one thread). dx may alias dy. */
static void layernorm_bwd(float *dx, float *dg, float *db, const float *dy, const float *xh,
                          const float *rs, size_t R, int d, const float *g) {
  size_t r;
  int j;
  for (r = 0; r < R; r++)
    for (j = 0; j < d; j++) {
      dg[j] += dy[r * d + j] * xh[r * d + j];
      db[j] += dy[r * d + j];
    }
#pragma omp parallel for schedule(static)
  for (r = 0; r < R; r++) {
    double s1 = 0.0, s2 = 0.0;
    int k;
    for (k = 0; k < d; k++) {
      double v = (double)dy[r * d + k] * g[k];
      s1 += v;
      s2 += v * xh[r * d + k];
    }
    s1 /= d;
    s2 /= d;
    for (k = 0; k < d; k++)
      dx[r * d + k] = (float)(rs[r] * ((double)dy[r * d + k] * g[k] - s1 - xh[r * d + k] * s2));
  }
}

/* y = x w + b backward: dw, db (overwritten) and dx (if non-NULL). */
static void linear_bwd(float *dx, float *dw, float *db, const float *x, const float *dy,
                       const float *w, size_t rows, int K, int N, float *wt) {
  lowp_cnn_gemm_bwd_w(dw, db, x, dy, (long)rows, K, N);
  if (!dx) return;
  lowp_cnn_transpose(wt, w, K, N);
  lowp_cnn_gemm_bwd_x(dx, dy, wt, (long)rows, K, N);
}

/* Attention backward of block l: dO in a->o-shaped do_ (R x d) -> dqkv (R x 3d). */
static void attention_bwd(float *dqkv, const float *do_, const acts_t *a, const lowp_vit_t *m, int l) {
  int T = m->tokens, H = m->heads, d = m->d, dh = d / H;
  double scale = 1.0 / sqrt((double)dh);
  long bh;
#pragma omp parallel for schedule(static)
  for (bh = 0; bh < (long)(a->B * (size_t)H); bh++) {
    size_t b = (size_t)bh / H, hd = (size_t)bh % H;
    const float *P = a->P[l] + (size_t)bh * T * T;
    double dP[64 * 64], dS[64 * 64];
    int i, j, k;
#define QKV(t, part, k) a->qkv[l][(b * T + (t)) * 3 * (size_t)d + (size_t)(part) * d + hd * dh + (k)]
#define DQKV(t, part, k) dqkv[(b * T + (t)) * 3 * (size_t)d + (size_t)(part) * d + hd * dh + (k)]
#define DO(t, k) do_[(b * T + (t)) * (size_t)d + hd * dh + (k)]
    for (i = 0; i < T; i++) { /* dP = dO V^T; dS = P (dP - sum_j P dP) scale */
      double s = 0.0;
      for (j = 0; j < T; j++) {
        double v = 0.0;
        for (k = 0; k < dh; k++) v += (double)DO(i, k) * QKV(j, 2, k);
        dP[i * T + j] = v;
        s += v * P[i * T + j];
      }
      for (j = 0; j < T; j++) dS[i * T + j] = P[i * T + j] * (dP[i * T + j] - s) * scale;
    }
    for (i = 0; i < T; i++)
      for (k = 0; k < dh; k++) {
        double dq = 0.0, dk = 0.0, dv = 0.0;
        for (j = 0; j < T; j++) {
          dq += dS[i * T + j] * QKV(j, 1, k);    /* dQ = dS K */
          dk += dS[j * T + i] * QKV(j, 0, k);    /* dK = dS^T Q */
          dv += (double)P[j * T + i] * DO(j, k); /* dV = P^T dO */
        }
        DQKV(i, 0, k) = (float)dq;
        DQKV(i, 1, k) = (float)dk;
        DQKV(i, 2, k) = (float)dv;
      }
#undef QKV
#undef DQKV
#undef DO
  }
}

/* Softmax cross-entropy of the logits: dz = (p - onehot) / B; returns the mean loss. */
static double xent(float *dz, const float *z, const uint8_t *labels, size_t B) {
  double sum = 0.0;
  size_t s;
  for (s = 0; s < B; s++) {
    const float *zs = z + s * NCLS;
    double mx = zs[0], se = 0.0;
    int k;
    for (k = 1; k < NCLS; k++)
      if (zs[k] > mx) mx = zs[k];
    for (k = 0; k < NCLS; k++) se += exp((double)zs[k] - mx);
    sum += log(se) + mx - (double)zs[labels[s]];
    for (k = 0; k < NCLS; k++)
      dz[s * NCLS + k] = (float)((exp((double)zs[k] - mx) / se - (k == labels[s])) / (double)B);
  }
  return sum / (double)B;
}

/* The blocks backward, from dh (R x d, the gradient of the residual stream after the last block). */
static void blocks_bwd(float *dh, acts_t *a, const lowp_vit_t *m, params_t *p, params_t *g, float *work) {
  size_t R = a->R, d = (size_t)m->d, mlp = (size_t)m->mlp, i;
  float *dga = work, *dqkv = work + R * mlp, *dtmp = dqkv + 3 * R * d, *wt = dtmp + R * mlp;
  int l;
  for (l = m->layers - 1; l >= 0; l--) {
    float *const *t = p->t[l], *const *gt = g->t[l];
    /* h += fc2(gelu(fc1(LN2(h)))) */
    linear_bwd(dga, gt[FC2W], gt[FC2B], a->ga[l], dh, t[FC2W], R, m->mlp, m->d, wt);
    for (i = 0; i < R * mlp; i++) dga[i] = (float)(dga[i] * gelu_d(a->u[l][i]));
    linear_bwd(dtmp, gt[FC1W], gt[FC1B], a->c[l], dga, t[FC1W], R, m->d, m->mlp, wt);
    layernorm_bwd(dtmp, gt[LN2G], gt[LN2B], dtmp, a->xh2[l], a->rs2[l], R, m->d, t[LN2G]);
    add_into(dh, dtmp, R * d);
    /* h += proj(attention(qkv(LN1(h)))) */
    linear_bwd(dtmp, gt[PROJW], gt[PROJB], a->o[l], dh, t[PROJW], R, m->d, m->d, wt);
    attention_bwd(dqkv, dtmp, a, m, l);
    linear_bwd(dtmp, gt[QKVW], gt[QKVB], a->a[l], dqkv, t[QKVW], R, m->d, 3 * m->d, wt);
    layernorm_bwd(dtmp, gt[LN1G], gt[LN1B], dtmp, a->xh1[l], a->rs1[l], R, m->d, t[LN1G]);
    add_into(dh, dtmp, R * d);
  }
}

int lowp_vit_grad(lowp_vit_t *m, double *loss, const float *x, const uint8_t *labels, size_t batch) {
  acts_t a;
  fwd_t f;
  params_t p, g;
  size_t R, d = (size_t)m->d, T = (size_t)m->tokens, i, s;
  float *work, *dh, *dz, *dpool;
  int st;
  for (s = 0; s < batch; s++)
    if (labels[s] >= NCLS) return LOWP_EINVAL;
  if (m->tokens > 64) return LOWP_EINVAL; /* attention_bwd's stack rows */
  if ((st = acts_alloc(&a, m, batch))) return st;
  R = a.R;
  work = malloc((R * d * 6 + 2 * R * (size_t)m->mlp + batch * (NCLS + d) + m->nparams) * sizeof *work);
  if (!work) { free(a.buf); return LOWP_ENOMEM; }
  f.m = m; f.gemm = NULL; f.ctx = NULL; f.scratch = a.scratch; f.obs = NULL; f.octx = NULL;
  (void)forward(&a, x, &f);
  params_of(&p, m, m->w);
  params_of(&g, m, m->g);
  memset(m->g, 0, m->nparams * sizeof *m->g);
  dh = work; dz = dh + R * d; dpool = dz + batch * NCLS;
  *loss = xent(dz, a.z, labels, batch);
  linear_bwd(dpool, g.head_w, g.head_b, a.pooled, dz, p.head_w, batch, m->d, NCLS, dpool + batch * d);
  for (i = 0; i < R * d; i++) dh[i] = (float)((double)dpool[(i / (T * d)) * d + i % d] / (double)T);
  layernorm_bwd(dh, g.lnf_g, g.lnf_b, dh, a.xhf, a.rsf, R, m->d, p.lnf_g);
  blocks_bwd(dh, &a, m, &p, &g, dpool + batch * d);
  for (i = 0; i < R * d; i++) g.pos[i % (T * d)] += dh[i];
  linear_bwd(NULL, g.emb_w, g.emb_b, a.x0, dh, p.emb_w, R, m->pdim, m->d, NULL);
  free(work);
  free(a.buf);
  return LOWP_OK;
}

void lowp_vit_adamw(lowp_vit_t *m, float lr, float wd) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  double c1, c2;
  int t;
  m->step++;
  c1 = 1.0 - pow(b1, (double)m->step);
  c2 = 1.0 - pow(b2, (double)m->step);
  for (t = 0; t < m->ntensors; t++) {
    lowp_vit_tensor_t ti = lowp_vit_tensor(m, t);
    size_t i;
    for (i = ti.offset; i < ti.offset + ti.count; i++) {
      double g = m->g[i], mh, vh;
      m->m1[i] = (float)(b1 * m->m1[i] + (1.0 - b1) * g);
      m->m2[i] = (float)(b2 * m->m2[i] + (1.0 - b2) * g * g);
      mh = m->m1[i] / c1;
      vh = m->m2[i] / c2;
      m->w[i] = (float)(m->w[i] - lr * (mh / (sqrt(vh) + eps) + (ti.decay ? wd * m->w[i] : 0.0)));
    }
  }
}
