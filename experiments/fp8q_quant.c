/* fp8q_quant -- exercise 6's quantized matrix products: calibration, scaled fp8 operands, fp32 or tensor-core accumulation */

#include "fp8q.h"

#include "cpu/gemm_tc8.h"
#include "cpu/qdq_bs.h"
#include "format/bsquant.h"
#include "status.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- calibration */

/* x (n rows of K) into c: amax, sums of squares and fourth powers, per channel. */
static void accumulate(fq_calib_t *c, const float *x, size_t n, int K) {
  size_t i;
  for (i = 0; i < n; i++) {
    double v = fabs((double)x[i]), v2 = v * v;
    size_t k = i % (size_t)K;
    if (v > c->amax_x) c->amax_x = v;
    if (v > c->colmax[k]) c->colmax[k] = v;
    c->col2[k] += v2;
    c->s2 += v2;
    c->s4 += v2 * v2;
  }
  c->n += (double)n;
}

void fq_resid_observe(const float *h, size_t rows, int d, int point, void *ctx) {
  accumulate(&((fq_calib_t *)ctx)[point], h, rows * (size_t)d, d);
}

int fq_calib_gemm(float *y, float *x, size_t rows, int K, int N, const float *w, const float *bias,
                  size_t nb, int site, void *ctx) {
  fq_calib_t *c = &((fq_calib_t *)ctx)[site];
  size_t i;
  accumulate(c, x, nb * rows * (size_t)K, K);
  if (c->act_w)
    for (i = 0; i < nb * (size_t)K * (size_t)N; i++)
      if (fabs((double)w[i]) > c->amax_w) c->amax_w = fabs((double)w[i]);
  lowp_vit_gemm_f32(y, x, rows, K, N, w, bias, nb);
  return LOWP_OK;
}

/* ------------------------------------------------------------ weights */

static size_t block_of(const fq_qnet_t *q, lowp_qscheme_t s) {
  return s == LOWP_QS_MXBLOCK ? q->mxblock : q->tile;
}

static size_t chunk_of(const fq_qnet_t *q, int K) {
  return q->c->acc == FQ_ACC_TCP ? q->tile : (size_t)K;
}

static void transpose(float *t, const float *w, size_t K, size_t N) {
  size_t i, j;
  for (i = 0; i < K; i++)
    for (j = 0; j < N; j++) t[j * K + i] = w[i * N + j];
}

/* A w operand (K x N) through a block-scaled format along K (rows of its transpose), into wq (K x N). */
static int bs_w(float *wq, const float *w, int K, int N, const lowp_bsformat_t *bf, double tamax,
                lowp_qstats_t *st) {
  float *t = calloc((size_t)K * (size_t)N, sizeof *t);
  int rc;
  if (!t) return LOWP_ENOMEM;
  transpose(t, w, (size_t)K, (size_t)N);
  rc = lowp_qdq_bs_f32(t, t, (size_t)N, (size_t)K, bf, tamax, st);
  if (rc == LOWP_OK) transpose(wq, t, (size_t)N, (size_t)K);
  free(t);
  return rc;
}

static double amax_of(const float *x, size_t n) {
  double a = 0.0;
  size_t i;
  for (i = 0; i < n; i++)
    if (fabs((double)x[i]) > a) a = fabs((double)x[i]);
  return a;
}

/* The w operand (K x N) as the scaled GEMM reads it, quantized along K
   (rows of its transpose: one scale per output channel, tile or block).
   fp32 accumulation: dequantized back into wq (K x N); tensor-core model:
   qbt (N x K values of f), its exponents xb and scales bs. */
static int quant_w(fq_qnet_t *q, const float *w, int K, int N, lowp_qscheme_t sch, const double *amax,
                   float *wq, double *qbt, int8_t *xb, float *bs, lowp_qstats_t *st) {
  const fq_config_t *c = q->c;
  size_t n = (size_t)K * (size_t)N;
  float *t = malloc(n * sizeof *t);
  int rc;
  if (!t) return LOWP_ENOMEM;
  transpose(t, w, (size_t)K, (size_t)N);
  if (c->acc == FQ_ACC_F32) {
    rc = lowp_qdq_f32(t, t, (size_t)N, (size_t)K, c->f, sch, block_of(q, sch), amax, st);
    if (rc == LOWP_OK) transpose(wq, t, (size_t)N, (size_t)K);
  } else {
    rc = lowp_qdq_quant(qbt, bs, t, (size_t)N, (size_t)K, c->f, sch, chunk_of(q, K), amax, st);
    if (rc == LOWP_OK) rc = lowp_tc8_exponents(xb, qbt, n, c->f);
  }
  free(t);
  return rc;
}

void fq_qnet_free(fq_qnet_t *q) {
  int s;
  for (s = 0; s < FQ_MAXSITES; s++) {
    free(q->wq[s]);
    free(q->qbt[s]);
    free(q->xb[s]);
    free(q->bs[s]);
  }
  memset(q, 0, sizeof *q);
}

int fq_qnet_build(fq_qnet_t *q, const fq_config_t *c, const fq_model_t *m, const fq_calib_t *cal,
                  const lowp_tc_model_t *tc, size_t tile, size_t mxblock) {
  int s, ns = fq_nsites(m), st = LOWP_OK;
  memset(q, 0, sizeof *q);
  q->c = c;
  q->m = m;
  q->cal = cal;
  q->tc = tc;
  q->tile = tile;
  q->mxblock = mxblock;
  for (s = 0; s < ns; s++) { /* phase j of nphase: every per-tensor amax times 2^(j / nphase), exactly 1 at j = 0 */
    double mul = c->nphase > 0 ? exp2((double)c->phase / (double)c->nphase) : 1.0;
    q->ax[s] = cal[s].amax_x * mul;
    q->aw[s] = cal[s].amax_w * mul;
  }
  for (s = 0; s < ns && st == LOWP_OK; s++) {
    fq_site_t si = fq_site(m, s);
    size_t n = (size_t)si.K * (size_t)si.N, nch = (si.K + chunk_of(q, si.K) - 1) / chunk_of(q, si.K);
    double wa;
    if ((!c->f && !c->bs) || !(c->sites >> s & 1) || !si.w) continue;
    if (c->bs) { /* the weight's own per-tensor amax (nvfp4's second level) */
      if (!(q->wq[s] = malloc(n * sizeof(float)))) return LOWP_ENOMEM;
      st = bs_w(q->wq[s], si.w, si.K, si.N, c->bs, -1.0, &q->wst);
      continue;
    }
    wa = amax_of(si.w, n) * (c->nphase > 0 ? exp2((double)c->phase / (double)c->nphase) : 1.0);
    if (c->acc == FQ_ACC_F32) {
      if (!(q->wq[s] = malloc(n * sizeof(float)))) return LOWP_ENOMEM;
    } else {
      q->qbt[s] = malloc(n * sizeof(double));
      q->xb[s] = malloc(n);
      q->bs[s] = malloc((size_t)si.N * nch * sizeof(float));
      if (!q->qbt[s] || !q->xb[s] || !q->bs[s]) return LOWP_ENOMEM;
    }
    st = quant_w(q, si.w, si.K, si.N, c->ws, c->phase && c->ws == LOWP_QS_TENSOR ? &wa : NULL, q->wq[s], q->qbt[s],
                 q->xb[s], q->bs[s], &q->wst);
  }
  return st;
}

/* ------------------------------------------------------------ products */

/* fp32 accumulation of quantized operands (x already quantized). */
static int gemm_f32(fq_qnet_t *q, float *y, const float *x, size_t rows, int K, int N, const float *w,
                    const float *bias, size_t nb, int site) {
  const fq_config_t *c = q->c;
  size_t b, n = (size_t)K * (size_t)N;
  float *wq;
  int st = LOWP_OK;
  if (q->wq[site]) {
    lowp_vit_gemm_f32(y, x, rows, K, N, q->wq[site], bias, 1);
    return LOWP_OK;
  }
  if (!(wq = malloc((c->as == LOWP_QS_TENSOR || c->as == LOWP_QS_CAST ? nb : 1) * n * sizeof *wq)))
    return LOWP_ENOMEM;
  if (c->as == LOWP_QS_TENSOR || c->as == LOWP_QS_CAST) { /* one scale for every element: all blocks at once */
    st = lowp_qdq_f32(wq, w, nb * (size_t)K, (size_t)N, c->f, c->as, block_of(q, c->as),
                      c->as == LOWP_QS_TENSOR ? &q->aw[site] : NULL, &q->ast);
    if (st == LOWP_OK) lowp_vit_gemm_f32(y, x, rows, K, N, wq, bias, nb);
    free(wq);
    return st;
  }
  for (b = 0; b < nb && st == LOWP_OK; b++) { /* an activation operand, block by block along K */
    st = quant_w(q, w + b * n, K, N, c->as, c->as == LOWP_QS_TENSOR ? &q->aw[site] : NULL, wq, NULL, NULL,
                 NULL, &q->ast);
    if (st == LOWP_OK) lowp_vit_gemm_f32(y + b * rows * (size_t)N, x + b * rows * (size_t)K, rows, K, N, wq, bias, 1);
  }
  free(wq);
  return st;
}

/* Both operands in a block-scaled format (x here; a weight prepared by fq_qnet_build, an activation w
   operand block by block along K), fp32 accumulation. A two-level format's activation tensor scale comes
   from the calibrated amax, as the per-tensor rows' (static scaling). */
static int gemm_bs(fq_qnet_t *q, float *y, float *x, size_t rows, int K, int N, const float *w, const float *bias,
                   size_t nb, int site) {
  size_t b, n = (size_t)K * (size_t)N;
  float *wq;
  int st = lowp_qdq_bs_f32(x, x, nb * rows, (size_t)K, q->c->bs, q->ax[site], &q->ast);
  if (st != LOWP_OK) return st;
  if (q->wq[site]) {
    lowp_vit_gemm_f32(y, x, rows, K, N, q->wq[site], bias, 1);
    return LOWP_OK;
  }
  if (!(wq = malloc(n * sizeof *wq))) return LOWP_ENOMEM;
  for (b = 0; b < nb && st == LOWP_OK; b++) {
    st = bs_w(wq, w + b * n, K, N, q->c->bs, q->aw[site], &q->ast);
    if (st == LOWP_OK) lowp_vit_gemm_f32(y + b * rows * (size_t)N, x + b * rows * (size_t)K, rows, K, N, wq, bias, 1);
  }
  free(wq);
  return st;
}

/* The tensor-core model: x quantized here, w prepared or quantized per block. */
static int gemm_tc(fq_qnet_t *q, float *y, const float *x, size_t rows, int K, int N, const float *w,
                   const float *bias, size_t nb, int site) {
  const fq_config_t *c = q->c;
  size_t R = nb * rows, ch = chunk_of(q, K), nch = ((size_t)K + ch - 1) / ch, n = (size_t)K * (size_t)N, b;
  const double *am = c->as == LOWP_QS_TENSOR ? &q->ax[site] : NULL;
  double *a = malloc(R * (size_t)K * sizeof *a), *wb = q->qbt[site] ? NULL : malloc(n * sizeof *wb);
  int8_t *xa = malloc(R * (size_t)K), *xw = q->qbt[site] ? NULL : malloc(n);
  float *sa = malloc(R * nch * sizeof *sa), *sw = q->qbt[site] ? NULL : malloc((size_t)N * nch * sizeof *sw);
  int st = a && xa && sa && (q->qbt[site] || (wb && xw && sw)) ? LOWP_OK : LOWP_ENOMEM;
  if (st == LOWP_OK) st = lowp_qdq_quant(a, sa, x, R, (size_t)K, c->f, c->as, ch, am, &q->ast);
  if (st == LOWP_OK) st = lowp_tc8_exponents(xa, a, R * (size_t)K, c->f);
  if (st == LOWP_OK && q->qbt[site])
    st = lowp_gemm_tc8(y, a, xa, R, (size_t)K, q->qbt[site], q->xb[site], (size_t)N, q->tc, c->f, ch, sa,
                       q->bs[site], bias);
  for (b = 0; st == LOWP_OK && !q->qbt[site] && b < nb; b++) {
    size_t o = b * rows;
    st = quant_w(q, w + b * n, K, N, c->as, c->as == LOWP_QS_TENSOR ? &q->aw[site] : NULL, NULL, wb, xw,
                 sw, &q->ast);
    if (st == LOWP_OK)
      st = lowp_gemm_tc8(y + o * (size_t)N, a + o * (size_t)K, xa + o * (size_t)K, rows, (size_t)K, wb, xw,
                         (size_t)N, q->tc, c->f, ch, sa + o * nch, sw, bias);
  }
  free(a); free(wb); free(xa); free(xw); free(sa); free(sw);
  return st;
}

int fq_qgemm(float *y, float *x, size_t rows, int K, int N, const float *w, const float *bias,
             size_t nb, int site, void *ctx) {
  fq_qnet_t *q = ctx;
  const fq_config_t *c = q->c;
  int st;
  if ((!c->f && !c->bs) || !(c->sites >> site & 1)) {
    lowp_vit_gemm_f32(y, x, rows, K, N, w, bias, nb);
    return LOWP_OK;
  }
  if (c->bs) return gemm_bs(q, y, x, rows, K, N, w, bias, nb, site);
  if (c->acc != FQ_ACC_F32) return gemm_tc(q, y, x, rows, K, N, w, bias, nb, site);
  st = lowp_qdq_f32(x, x, nb * rows, (size_t)K, c->f, c->as, block_of(q, c->as),
                    c->as == LOWP_QS_TENSOR ? &q->ax[site] : NULL, &q->ast);
  return st ? st : gemm_f32(q, y, x, rows, K, N, w, bias, nb, site);
}
