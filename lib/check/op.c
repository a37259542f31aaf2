/* lowp_op -- the operation table, shapes, exact references and bounds (lib/check/op.h) */

#include "check/op.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact/exact.h"
#include "measure/measure.h"
#include "status.h"
#include "io/escape.h"

/* ------------------------------------------------------- the table (data) */

#define SP LOWP_OPKIND_SUMPROD
#define FW LOWP_OPKIND_FORWARD

static const lowp_op_t ops[LOWP_OP_COUNT] = {
    {LOWP_OP_CAST, "cast", 1, 1, {"x"}, {"y"}, {0}, FW,
     "conversion: y = round(x) to the output format"},
    {LOWP_OP_SUM, "sum", 1, 1, {"x"}, {"y"}, {0}, SP, "sum over the last axis"},
    {LOWP_OP_DOT, "dot", 2, 1, {"x", "w"}, {"y"}, {0}, SP, "dot product y = x'w"},
    {LOWP_OP_GEMV, "gemv", 2, 1, {"A", "x"}, {"y"}, {0}, SP, "matrix-vector product y = A x"},
    {LOWP_OP_GEMM, "gemm", 2, 1, {"A", "B"}, {"C"}, {0}, SP,
     "matrix product C = A B (optional batch axis)"},
    {LOWP_OP_SOFTMAX, "softmax", 1, 1, {"x"}, {"y"}, {0}, FW, "softmax over the last axis"},
    {LOWP_OP_LOGSOFTMAX, "logsoftmax", 1, 1, {"x"}, {"y"}, {0}, FW,
     "log-softmax over the last axis"},
    {LOWP_OP_LOGSUMEXP, "logsumexp", 1, 1, {"x"}, {"y"}, {0}, FW,
     "log(sum(exp)) over the last axis"},
    {LOWP_OP_LAYERNORM, "layernorm", 1, 3, {"x"}, {"y", "mean", "var"}, {0}, FW,
     "layer norm (no affine): y = (x - mean) / sqrt(var + eps), population variance"},
    {LOWP_OP_RMSNORM, "rmsnorm", 1, 1, {"x"}, {"y"}, {0}, FW,
     "RMS norm (no affine): y = x / sqrt(mean(x^2) + eps)"},
    {LOWP_OP_XENT, "xent", 2, 1, {"logits", "target"}, {"loss"}, {0, 1}, FW,
     "cross-entropy: loss = logsumexp(row) - row[target], per row or mean"},
    {LOWP_OP_EXP, "exp", 1, 1, {"x"}, {"y"}, {0}, FW, "elementwise e^x"},
    {LOWP_OP_LOG, "log", 1, 1, {"x"}, {"y"}, {0}, FW, "elementwise natural log"},
    {LOWP_OP_TANH, "tanh", 1, 1, {"x"}, {"y"}, {0}, FW, "elementwise tanh"},
    {LOWP_OP_GELU, "gelu", 1, 1, {"x"}, {"y"}, {0}, FW, "elementwise GELU, erf form"},
};

#undef SP
#undef FW

const lowp_op_t *lowp_op_by_name(const char *name) {
  int i;
  if (!name) return NULL;
  for (i = 0; i < LOWP_OP_COUNT; i++)
    if (!strcmp(ops[i].name, name)) return &ops[i];
  return NULL;
}

const lowp_op_t *lowp_op_get(lowp_op_id_t id) {
  return ((unsigned)id < LOWP_OP_COUNT) ? &ops[id] : NULL;
}

/* ------------------------------------------------------------------ shapes */

/* elementwise-like ops: one (batch, m, n) input, same-shaped output */
static int is_rowwise(lowp_op_id_t id) {
  return id == LOWP_OP_CAST || id == LOWP_OP_SUM || id == LOWP_OP_SOFTMAX ||
         id == LOWP_OP_LOGSOFTMAX || id == LOWP_OP_LOGSUMEXP || id == LOWP_OP_LAYERNORM ||
         id == LOWP_OP_RMSNORM || id == LOWP_OP_XENT || id == LOWP_OP_EXP ||
         id == LOWP_OP_LOG || id == LOWP_OP_TANH || id == LOWP_OP_GELU;
}

int lowp_problem_init(lowp_problem_t *p, const lowp_op_t *op) {
  int i;
  if (!p || !op) return LOWP_EINVAL;
  memset(p, 0, sizeof *p);
  p->op = op;
  p->dims.batch = p->dims.m = p->dims.n = p->dims.k = 1;
  for (i = 0; i < LOWP_OP_MAXIO; i++) p->in[i] = op->in_index[i] ? LOWP_FMT_FP64 : LOWP_FMT_FP32;
  p->out = LOWP_FMT_FP32;
  p->eps = 1e-5; /* op.h: PyTorch's default */
  p->reduction_mean = 0;
  return LOWP_OK;
}

int lowp_op_shape(const lowp_problem_t *p, int which, size_t *shape, int *ndim,
                  size_t *count) {
  size_t s[LOWP_OP_MAXDIM];
  int nd = 0, i, out;
  size_t c = 1;
  const lowp_dims_t *d;
  if (!p || !p->op || !shape || !ndim || !count) return LOWP_EINVAL;
  if (which < 0 || which >= p->op->n_in + p->op->n_out) return LOWP_EINVAL;
  d = &p->dims;
  out = which >= p->op->n_in;
  if (d->batch == 0 || d->m == 0 || d->n == 0 || d->k == 0) return LOWP_EINVAL;
  if (d->batch > 1) s[nd++] = d->batch;
  switch (p->op->id) {
  case LOWP_OP_DOT:
    if (!out) s[nd++] = d->k; /* y: (batch), or () for batch 1 */
    break;
  case LOWP_OP_GEMV:
    if (which == 0) { s[nd++] = d->m; s[nd++] = d->k; }
    else if (which == 1) s[nd++] = d->k;
    else s[nd++] = d->m;
    break;
  case LOWP_OP_GEMM:
    if (which == 0) { s[nd++] = d->m; s[nd++] = d->k; }
    else if (which == 1) { s[nd++] = d->k; s[nd++] = d->n; }
    else { s[nd++] = d->m; s[nd++] = d->n; }
    break;
  case LOWP_OP_SUM:
  case LOWP_OP_LOGSUMEXP:
    s[nd++] = d->m;
    if (!out) s[nd++] = d->n;
    break;
  case LOWP_OP_LAYERNORM:
    s[nd++] = d->m;
    if (which <= 1) s[nd++] = d->n; /* x and y; mean and var are per row */
    break;
  case LOWP_OP_XENT:
    if (out && p->reduction_mean) { nd = 0; break; } /* one value: shape () */
    s[nd++] = d->m;
    if (which == 0) s[nd++] = d->n;
    break;
  default: /* cast, softmax, logsoftmax, rmsnorm, exp, log, tanh, gelu */
    s[nd++] = d->m;
    s[nd++] = d->n;
    break;
  }
  for (i = 0; i < nd; i++) {
    if (s[i] && c > (size_t)-1 / s[i]) return LOWP_EINVAL;
    c *= s[i];
    shape[i] = s[i];
  }
  *ndim = nd;
  *count = c;
  return LOWP_OK;
}

int lowp_op_shape_matches(const lowp_problem_t *p, int which, const size_t *shape, int ndim) {
  size_t want[LOWP_OP_MAXDIM] = {0};
  int wn = 0, i, j, a = 0, b = 0;
  size_t cnt;
  if (lowp_op_shape(p, which, want, &wn, &cnt) != LOWP_OK || ndim < 0) return 0;
  if (ndim > 0 && !shape) return 0;
  while (a < ndim && shape[a] == 1) a++; /* leading axes of size 1 do not matter */
  while (b < wn && want[b] == 1) b++;
  if (ndim - a != wn - b) return 0;
  for (i = a, j = b; i < ndim; i++, j++)
    if (shape[i] != want[j]) return 0;
  return 1;
}

static void shape_str(char *buf, size_t len, const size_t *s, int nd) {
  size_t used = 0;
  int i;
  used += (size_t)snprintf(buf, len, "(");
  for (i = 0; i < nd && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%zu", i ? ", " : "", s[i]);
  if (used < len) snprintf(buf + used, len - used, nd == 1 ? ",)" : ")");
}

#define SHERR(...)                                    \
  do {                                                \
    lowp_errf(err, errlen, 0, __VA_ARGS__); \
    return LOWP_ESHAPE;                               \
  } while (0)

/* (batch, rows, cols) of a tensor of 1, 2 or 3 axes; 1 axis = one row */
static int split3(const size_t *s, int nd, size_t *b, size_t *r, size_t *c) {
  if (nd == 1) { *b = 1; *r = 1; *c = s[0]; return 1; }
  if (nd == 2) { *b = 1; *r = s[0]; *c = s[1]; return 1; }
  if (nd == 3) { *b = s[0]; *r = s[1]; *c = s[2]; return 1; }
  return 0;
}

int lowp_op_dims_infer(lowp_problem_t *p, const size_t *const *shapes, const int *ndims,
                       char *err, size_t errlen) {
  const lowp_op_t *op;
  char s0[96], s1[96];
  lowp_dims_t d = {1, 1, 1, 1};
  int i;
  if (err && errlen) err[0] = '\0';
  if (!p || !p->op || !shapes || !ndims) SHERR("no operation or shapes given");
  op = p->op;
  for (i = 0; i < op->n_in; i++) {
    if (ndims[i] < 0 || ndims[i] > LOWP_OP_MAXDIM || (ndims[i] > 0 && !shapes[i]))
      SHERR("input %s: bad number of axes %d", op->in_names[i], ndims[i]);
    for (int j = 0; j < ndims[i]; j++)
      if (shapes[i][j] == 0) {
        shape_str(s0, sizeof s0, shapes[i], ndims[i]);
        SHERR("input %s has shape %s: empty tensors cannot be measured", op->in_names[i], s0);
      }
  }
  shape_str(s0, sizeof s0, shapes[0], ndims[0]);
  if (op->n_in > 1) shape_str(s1, sizeof s1, shapes[1], ndims[1]);
  switch (op->id) {
  case LOWP_OP_DOT:
    if (ndims[0] == 1) d.k = shapes[0][0];
    else if (ndims[0] == 2) { d.batch = shapes[0][0]; d.k = shapes[0][1]; }
    else SHERR("dot: input x has shape %s; expected (k,) or (batch, k)", s0);
    if (ndims[1] != ndims[0] || memcmp(shapes[0], shapes[1], (size_t)ndims[0] * sizeof(size_t)))
      SHERR("dot: inputs x %s and w %s must have the same shape", s0, s1);
    break;
  case LOWP_OP_GEMV:
    if (ndims[0] == 2) { d.m = shapes[0][0]; d.k = shapes[0][1]; }
    else if (ndims[0] == 3) { d.batch = shapes[0][0]; d.m = shapes[0][1]; d.k = shapes[0][2]; }
    else SHERR("gemv: input A has shape %s; expected (m, k) or (batch, m, k)", s0);
    if (!((ndims[1] == 1 && d.batch == 1 && shapes[1][0] == d.k) ||
          (ndims[1] == 2 && shapes[1][0] == d.batch && shapes[1][1] == d.k)))
      SHERR("gemv: A has shape %s, so x must have shape (%zu,)%s; it has %s", s0, d.k,
            d.batch == 1 ? "" : " with the batch axis", s1);
    break;
  case LOWP_OP_GEMM:
    if (ndims[0] == 2) { d.m = shapes[0][0]; d.k = shapes[0][1]; }
    else if (ndims[0] == 3) { d.batch = shapes[0][0]; d.m = shapes[0][1]; d.k = shapes[0][2]; }
    else SHERR("gemm: input A has shape %s; expected (m, k) or (batch, m, k)", s0);
    if (ndims[1] == 2 && d.batch == 1) {
      if (shapes[1][0] != d.k)
        SHERR("gemm: A has shape %s and B %s: A's columns (%zu) must equal B's rows (%zu)",
              s0, s1, d.k, shapes[1][0]);
      d.n = shapes[1][1];
    } else if (ndims[1] == 3 && ndims[0] == 3) {
      if (shapes[1][0] != d.batch)
        SHERR("gemm: A has shape %s and B %s: batch sizes differ (%zu, %zu)", s0, s1,
              d.batch, shapes[1][0]);
      if (shapes[1][1] != d.k)
        SHERR("gemm: A has shape %s and B %s: A's columns (%zu) must equal B's rows (%zu)",
              s0, s1, d.k, shapes[1][1]);
      d.n = shapes[1][2];
    } else if (ndims[1] == 3 && shapes[1][0] == 1 && d.batch == 1) {
      if (shapes[1][1] != d.k)
        SHERR("gemm: A has shape %s and B %s: A's columns (%zu) must equal B's rows (%zu)",
              s0, s1, d.k, shapes[1][1]);
      d.n = shapes[1][2];
    } else
      SHERR("gemm: A has shape %s and B %s: expected (m, k) and (k, n), or (batch, m, k) "
            "and (batch, k, n)", s0, s1);
    break;
  default:
    if (!is_rowwise(op->id) || !split3(shapes[0], ndims[0], &d.batch, &d.m, &d.n))
      SHERR("%s: input %s has shape %s; expected (n,), (m, n) or (batch, m, n)", op->name,
            op->in_names[0], s0);
    if (op->id == LOWP_OP_XENT) {
      /* target: the leading axes of the logits */
      int ok = 0;
      if (ndims[0] == 1) ok = ndims[1] == 0 || (ndims[1] == 1 && shapes[1][0] == 1);
      else if (ndims[0] == 2) ok = ndims[1] == 1 && shapes[1][0] == d.m;
      else ok = ndims[1] == 2 && shapes[1][0] == d.batch && shapes[1][1] == d.m;
      if (!ok)
        SHERR("xent: logits have shape %s, so target must have the leading axes of it "
              "(one class index per row); it has %s", s0, s1);
    }
    break;
  }
  p->dims = d;
  return LOWP_OK;
}

/* ------------------------------------------------------- exact references */

/* layer norm, RMS norm and the mean cross-entropy: lib/exact/norm.c */
static int lowp_op_exact_layernorm_row(double *y, double *mean, double *var, const double *x,
                                       size_t n, double eps, const lowp_format_t *f,
                                       lowp_rounding_t rnd) {
  return lowp_exact_layernorm(y, mean, var, x, n, eps, f, NULL, rnd);
}
static int lowp_op_exact_rmsnorm_row(double *y, const double *x, size_t n, double eps,
                                     const lowp_format_t *f, lowp_rounding_t rnd) {
  return lowp_exact_rmsnorm(y, x, n, eps, f, NULL, rnd);
}
static int lowp_op_exact_xent_mean(double *y, const double *x, size_t rows, size_t n,
                                   const size_t *target, const lowp_format_t *f,
                                   lowp_rounding_t rnd) {
  return lowp_exact_xent_mean(y, x, rows, n, target, f, NULL, rnd);
}

static int fill_abs(double **dst, const double *src, size_t n) {
  size_t i;
  *dst = malloc((n ? n : 1) * sizeof **dst);
  if (!*dst) return LOWP_ENOMEM;
  for (i = 0; i < n; i++) (*dst)[i] = fabs(src[i]);
  return LOWP_OK;
}

/* a class index held as a double: integer in [0, n) */
static int target_index(size_t *t, double v, size_t n) {
  if (!(v >= 0) || v != floor(v) || v >= (double)n) return LOWP_EINVAL;
  *t = (size_t)v;
  return LOWP_OK;
}

/* progress of one exact GEMM call mapped into the whole reference: call i
   of n covers [i/n, (i+1)/n) */
typedef struct {
  const lowp_op_progress_t *prog;
  size_t i, n;
} op_progress_part_t;

static void op_progress_part(void *ctx, double done) {
  const op_progress_part_t *q = ctx;
  q->prog->fn(q->prog->ctx, ((double)q->i + done) / (double)q->n);
}

/* The GEMM's exact references in tiles of at most OP_TILE_M rows of A by
   OP_TILE_N columns of B (a column block copied when B is wider, with its
   absolute values for |A||B|): every output is rounded once from its exact
   value, so the tiling changes no bit, and the exact GEMM's scratch (its
   slices and partial sums, several times its operands: lib/exact/ozaki.c)
   and |A|, |B| then scale with a tile instead of the whole product.
   Stochastic rounding numbers its draws by an output's place in the whole
   C (lib/exact/exact.h): it runs as one tile. */
#define OP_TILE_M 512
#define OP_TILE_N 1024

typedef struct {
  size_t tm, tn, count;            /* tile sizes, tiles per product */
  int ready;                       /* buffers allocated */
  double *bt, *babs, *aabs, *ct;   /* B's column block, |it|, |A|'s rows, a C tile */
} gemm_tiles_t;

static void gemm_tiles_plan(gemm_tiles_t *t, size_t m, size_t n, lowp_rounding_t rnd) {
  memset(t, 0, sizeof *t);
  t->tm = rnd == LOWP_RND_SR || m <= OP_TILE_M ? m : OP_TILE_M;
  t->tn = rnd == LOWP_RND_SR || n <= OP_TILE_N ? n : OP_TILE_N;
  t->count = ((m + t->tm - 1) / t->tm) * ((n + t->tn - 1) / t->tn);
}

static void gemm_tiles_free(gemm_tiles_t *t) {
  free(t->bt), free(t->babs), free(t->aabs), free(t->ct);
  t->bt = t->babs = t->aabs = t->ct = NULL;
}

/* one exact GEMM call of the tile (rows i0.., columns j0.., w of them) of
   a (rows of A at a) times bt (k x w) into c (ldc n), through the tile
   buffer when the tile is narrower than C */
static int gemm_tile(double *c, const double *a, const double *bt, size_t h, size_t w, size_t j0,
                     const lowp_dims_t *d, const lowp_format_t *f, lowp_rounding_t rnd,
                     gemm_tiles_t *t, op_progress_part_t *part, int with_c0) {
  lowp_gemm_opts_t go = {0};
  double *dst = w == d->n ? c : t->ct;
  size_t i;
  int st;
  if (part->prog && part->prog->fn) {
    go.progress = op_progress_part;
    go.progress_ctx = part;
  }
  /* with_c0: C's tile holds C0 (A B + C0, rounded once; lowp_op_exact_lo) */
  if (with_c0 && dst != c)
    for (i = 0; i < h; i++) memcpy(&dst[i * w], &c[i * d->n + j0], w * sizeof *c);
  st = lowp_exact_gemm_ex(dst, a, bt, with_c0 ? dst : NULL, h, w, d->k, f, NULL, rnd, &go, NULL);
  part->i++;
  if (!st && dst != c)
    for (i = 0; i < h; i++) memcpy(&c[i * d->n + j0], &dst[i * w], w * sizeof *c);
  return st;
}

/* C = A B (one batch entry) and absab = |A||B| (NULL: none), tile by tile */
static int gemm_tiled(double *c, double *absab, const double *a, const double *b,
                      const lowp_dims_t *d, const lowp_format_t *f, lowp_rounding_t rnd,
                      gemm_tiles_t *t, op_progress_part_t *part, int with_c0) {
  size_t m = d->m, n = d->n, k = d->k, i0, j0, l, x, h, w;
  const double *bt;
  int st = LOWP_OK;
  if (!t->ready) { /* the first batch entry: the buffers its tiles need */
    t->ready = 1;
    if (t->tn < n) {
      t->bt = malloc(t->tn * k * sizeof *t->bt);
      t->ct = malloc(t->tm * t->tn * sizeof *t->ct);
    }
    if (absab) {
      t->babs = malloc(t->tn * k * sizeof *t->babs);
      t->aabs = malloc(t->tm * k * sizeof *t->aabs);
    }
  }
  if ((t->tn < n && (!t->bt || !t->ct)) || (absab && (!t->babs || !t->aabs))) return LOWP_ENOMEM;
  for (j0 = 0; j0 < n && !st; j0 += t->tn) {
    w = n - j0 < t->tn ? n - j0 : t->tn;
    bt = b;
    if (w < n) {
      for (l = 0; l < k; l++) memcpy(&t->bt[l * w], &b[l * n + j0], w * sizeof *b);
      bt = t->bt;
    }
    if (absab)
      for (x = 0; x < k * w; x++) t->babs[x] = fabs(bt[x]);
    for (i0 = 0; i0 < m && !st; i0 += t->tm) {
      h = m - i0 < t->tm ? m - i0 : t->tm;
      st = gemm_tile(&c[i0 * n], &a[i0 * k], bt, h, w, j0, d, f, rnd, t, part, with_c0);
      if (st || !absab) continue;
      for (x = 0; x < h * k; x++) t->aabs[x] = fabs(a[i0 * k + x]);
      st = gemm_tile(&absab[i0 * n], t->aabs, t->babs, h, w, j0, d, &LOWP_FMT_FP64, LOWP_RND_NE,
                     t, part, 0);
    }
  }
  return st;
}

int lowp_op_exact(double *const *out, double *absab, const double *const *in,
                  const lowp_problem_t *p, const lowp_format_t *f, lowp_rounding_t rnd) {
  return lowp_op_exact_ex(out, absab, in, p, f, rnd, NULL);
}

/* The residual of a sum of products: the same exact sum with -x as one more term (a C0 of -x for gemv
   and gemm, which may alias their result), rounded once to binary64. */
int lowp_op_exact_lo(double *lo, const double *x, const double *const *in, const lowp_problem_t *p) {
  const lowp_dims_t *d;
  size_t bt, r, i, cnt, rows;
  int st = LOWP_OK;
  double *ta = NULL, *tb = NULL;
  if (!lo || !x || !in || !p || !p->op) return LOWP_EINVAL;
  if (p->op->kind != LOWP_OPKIND_SUMPROD) return LOWP_EUNSUPPORTED;
  d = &p->dims;
  rows = d->batch * d->m;
  switch (p->op->id) {
  case LOWP_OP_SUM:
    if (!(ta = malloc((d->n + 1) * sizeof *ta))) return LOWP_ENOMEM;
    for (r = 0; r < rows && !st; r++) {
      memcpy(ta, &in[0][r * d->n], d->n * sizeof *ta);
      ta[d->n] = -x[r];
      st = lowp_exact_sum(&lo[r], ta, d->n + 1, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    }
    cnt = rows;
    break;
  case LOWP_OP_DOT:
    ta = malloc((d->k + 1) * sizeof *ta);
    tb = malloc((d->k + 1) * sizeof *tb);
    if (!ta || !tb) { st = LOWP_ENOMEM; cnt = 0; break; }
    for (bt = 0; bt < d->batch && !st; bt++) {
      memcpy(ta, &in[0][bt * d->k], d->k * sizeof *ta);
      memcpy(tb, &in[1][bt * d->k], d->k * sizeof *tb);
      ta[d->k] = -x[bt];
      tb[d->k] = 1;
      st = lowp_exact_dot(&lo[bt], ta, 1, tb, 1, d->k + 1, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    }
    cnt = d->batch;
    break;
  case LOWP_OP_GEMV:
    cnt = d->batch * d->m;
    for (i = 0; i < cnt; i++) lo[i] = -x[i];
    for (bt = 0; bt < d->batch && !st; bt++)
      st = lowp_exact_gemv(&lo[bt * d->m], &in[0][bt * d->m * d->k], &in[1][bt * d->k], &lo[bt * d->m],
                           d->m, d->k, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    break;
  case LOWP_OP_GEMM: { /* in tiles, as lowp_op_exact (their buffers a tile's, not n x n) */
    size_t mk = d->m * d->k, kn = d->k * d->n, mn = d->m * d->n;
    op_progress_part_t part = {NULL, 0, 0};
    gemm_tiles_t t;
    cnt = d->batch * mn;
    for (i = 0; i < cnt; i++) lo[i] = -x[i];
    gemm_tiles_plan(&t, d->m, d->n, LOWP_RND_NE);
    for (bt = 0; bt < d->batch && !st; bt++)
      st = gemm_tiled(&lo[bt * mn], NULL, &in[0][bt * mk], &in[1][bt * kn], d, &LOWP_FMT_FP64, LOWP_RND_NE,
                      &t, &part, 1);
    gemm_tiles_free(&t);
    break;
  }
  default:
    return LOWP_EUNSUPPORTED;
  }
  free(ta);
  free(tb);
  for (i = 0; !st && i < cnt; i++)
    if (!isfinite(x[i]) || !isfinite(lo[i])) lo[i] = 0;
  return st;
}

int lowp_op_exact_ex(double *const *out, double *absab, const double *const *in,
                     const lowp_problem_t *p, const lowp_format_t *f, lowp_rounding_t rnd,
                     const lowp_op_progress_t *prog) {
  const lowp_dims_t *d;
  size_t rows, bt, r, cnt;
  int st = LOWP_OK;
  double *abs0 = NULL, *abs1 = NULL;
  if (!out || !in || !p || !p->op || !f) return LOWP_EINVAL;
  d = &p->dims;
  if (d->batch == 0 || d->m == 0 || d->n == 0 || d->k == 0) return LOWP_EINVAL;
  {
    size_t sh[LOWP_OP_MAXDIM];
    int nd, i;
    for (i = 0; i < p->op->n_in + p->op->n_out; i++) {
      if (lowp_op_shape(p, i, sh, &nd, &cnt)) return LOWP_EINVAL;
      if (i < p->op->n_in ? !in[i] : !out[i - p->op->n_in]) return LOWP_EINVAL;
    }
  }
  rows = d->batch * d->m;
  switch (p->op->id) {
  case LOWP_OP_CAST: {
    size_t n = rows * d->n;
    st = lowp_round_array_f64(out[0], in[0], n, f, NULL, rnd);
    break;
  }
  case LOWP_OP_EXP:
  case LOWP_OP_LOG:
  case LOWP_OP_TANH:
  case LOWP_OP_GELU: {
    static const lowp_fn_t fns[] = {LOWP_FN_EXP, LOWP_FN_LOG, LOWP_FN_TANH, LOWP_FN_GELU};
    st = lowp_exact_fn(out[0], in[0], rows * d->n, fns[p->op->id - LOWP_OP_EXP], f, NULL, rnd);
    break;
  }
  case LOWP_OP_SUM:
    for (r = 0; r < rows && !st; r++) {
      st = lowp_exact_sum(&out[0][r], &in[0][r * d->n], d->n, f, NULL, rnd);
      if (!st && absab) {
        if (!abs0 && (st = fill_abs(&abs0, in[0], rows * d->n)) != 0) break;
        st = lowp_exact_sum(&absab[r], &abs0[r * d->n], d->n, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
      }
    }
    break;
  case LOWP_OP_DOT:
    if (absab && ((st = fill_abs(&abs0, in[0], d->batch * d->k)) != 0 ||
                  (st = fill_abs(&abs1, in[1], d->batch * d->k)) != 0))
      break;
    for (bt = 0; bt < d->batch && !st; bt++) {
      st = lowp_exact_dot(&out[0][bt], &in[0][bt * d->k], 1, &in[1][bt * d->k], 1, d->k, f,
                          NULL, rnd);
      if (!st && absab)
        st = lowp_exact_dot(&absab[bt], &abs0[bt * d->k], 1, &abs1[bt * d->k], 1, d->k,
                            &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    }
    break;
  case LOWP_OP_GEMV:
    if (absab && ((st = fill_abs(&abs0, in[0], d->batch * d->m * d->k)) != 0 ||
                  (st = fill_abs(&abs1, in[1], d->batch * d->k)) != 0))
      break;
    for (bt = 0; bt < d->batch && !st; bt++) {
      st = lowp_exact_gemv(&out[0][bt * d->m], &in[0][bt * d->m * d->k], &in[1][bt * d->k],
                           NULL, d->m, d->k, f, NULL, rnd);
      if (!st && absab)
        st = lowp_exact_gemv(&absab[bt * d->m], &abs0[bt * d->m * d->k], &abs1[bt * d->k],
                             NULL, d->m, d->k, &LOWP_FMT_FP64, NULL, LOWP_RND_NE);
    }
    break;
  case LOWP_OP_GEMM: {
    size_t mk = d->m * d->k, kn = d->k * d->n, mn = d->m * d->n;
    op_progress_part_t part = {prog, 0, 0};
    gemm_tiles_t t;
    gemm_tiles_plan(&t, d->m, d->n, rnd);
    part.n = d->batch * t.count * (absab ? 2 : 1);
    for (bt = 0; bt < d->batch && !st; bt++)
      st = gemm_tiled(&out[0][bt * mn], absab ? &absab[bt * mn] : NULL, &in[0][bt * mk],
                      &in[1][bt * kn], d, f, rnd, &t, &part, 0);
    gemm_tiles_free(&t);
    break;
  }
  case LOWP_OP_SOFTMAX:
  case LOWP_OP_LOGSOFTMAX:
    for (r = 0; r < rows && !st; r++)
      st = (p->op->id == LOWP_OP_SOFTMAX ? lowp_exact_softmax : lowp_exact_logsoftmax)(
          &out[0][r * d->n], &in[0][r * d->n], d->n, f, NULL, rnd);
    break;
  case LOWP_OP_LOGSUMEXP:
    for (r = 0; r < rows && !st; r++)
      st = lowp_exact_logsumexp(&out[0][r], &in[0][r * d->n], d->n, f, NULL, rnd);
    break;
  case LOWP_OP_XENT: {
    size_t t;
    for (r = 0; r < rows; r++)
      if (target_index(&t, in[1][r], d->n)) return LOWP_EINVAL;
    if (p->reduction_mean) {
      size_t *tg = malloc(rows * sizeof *tg);
      if (!tg) return LOWP_ENOMEM;
      for (r = 0; r < rows; r++) (void)target_index(&tg[r], in[1][r], d->n);
      st = lowp_op_exact_xent_mean(out[0], in[0], rows, d->n, tg, f, rnd);
      free(tg);
      break;
    }
    for (r = 0; r < rows && !st; r++) {
      (void)target_index(&t, in[1][r], d->n);
      st = lowp_exact_xent(&out[0][r], &in[0][r * d->n], d->n, t, f, NULL, rnd);
    }
    break;
  }
  case LOWP_OP_LAYERNORM:
    for (r = 0; r < rows && !st; r++)
      st = lowp_op_exact_layernorm_row(&out[0][r * d->n], &out[1][r], &out[2][r],
                                       &in[0][r * d->n], d->n, p->eps, f, rnd);
    break;
  case LOWP_OP_RMSNORM:
    for (r = 0; r < rows && !st; r++)
      st = lowp_op_exact_rmsnorm_row(&out[0][r * d->n], &in[0][r * d->n], d->n, p->eps, f, rnd);
    break;
  default:
    st = LOWP_EUNSUPPORTED;
  }
  free(abs0);
  free(abs1);
  return st;
}

/* ------------------------------------------------------------------ bounds */

/* Everything below bounds the componentwise backward error of a sum of
   products: c^ = sum_i a_i b_i (1 + theta_i), max |theta_i| <= bound, so
   |c^ - c| <= bound * sum |a_i b_i| (lowp_measure_errors' bwd). All of them
   assume no underflow and no overflow (the standard model, Higham 2002,
   Sec. 2.2). */

/* the unit roundoff of one rounding in mode rnd: u for the nearest modes,
   2u (one ulp, relative) for the directed ones and round-to-odd */
static double unit(const lowp_format_t *f, lowp_rounding_t rnd) {
  double u = lowp_format_u(f);
  return (rnd == LOWP_RND_NE || rnd == LOWP_RND_NA) ? u : 2 * u;
}

/* 1 if some value of acc is not a value of out (fewer significand bits, or
   a smaller exponent range) */
static int narrower(const lowp_format_t *out, const lowp_format_t *acc) {
  return out->precision < acc->precision || out->emax < acc->emax || out->emin > acc->emin ||
         (!out->subnormals && acc->subnormals);
}

/* how many roundings one term goes through at most (deterministic orders) */
static double roundings(const lowp_accum_t *a, double k) {
  double w, nb;
  switch (a->order) {
  case LOWP_ACC_RECURSIVE: return k; /* gamma_k: also covers a starting c */
  case LOWP_ACC_PAIRWISE: return k <= 1 ? 0 : ceil(log2(k));
  case LOWP_ACC_BLOCKED:
  case LOWP_ACC_SPLITK:
    /* lib/model/accum.c: slices of w terms, each summed recursively (w - 1
       additions), then the ceil(k / w) slice sums recursively */
    if (a->block == 0) return -1;
    w = a->order == LOWP_ACC_BLOCKED ? (double)a->block : ceil(k / (double)a->block);
    if (w > k) w = k;
    if (w < 1) w = 1;
    nb = ceil(k / w);
    return (w - 1) + (nb - 1);
  default: return -1;
  }
}

/* the accumulation's unit roundoff *u and the products' *up (0: exact) */
static void units(const lowp_bound_spec_t *b, double *u, double *up) {
  *u = unit(&b->accum.acc, b->accum.rnd);
  *up = 0;
  /* the rounding of the products, if any: to b->prod, or (fma = 0) to the
     accumulation format (lib/model/accum.h) */
  if (b->prod) *up = unit(b->prod, b->accum.rnd);
  else if (!b->accum.fma) *up = *u;
}

/* (1 + a)(1 + b) - 1 */
static double compose(double a, double b) { return a + b + a * b; }

/* the tensor-core model's bound (see lowp_op_bound) */
static int bound_model(double *value, char *name, size_t namelen, const lowp_problem_t *p,
                       const lowp_tc_model_t *m, double k) {
  char nm[200];
  const lowp_bfma_t *bf;
  double eta, uo, nb, u32 = lowp_format_u(&LOWP_FMT_FP32), ncycles = 1, per;
  if (!m) return LOWP_EINVAL;
  bf = &m->bfma;
  if (bf->b < 1 || bf->F < 1) return LOWP_EINVAL;
  /* Block-FMA bound (Blanchard, Higham, Lopez, Mary, Pranesh, "Mixed
     precision block fused multiply-add: error analysis and application to
     GPU tensor cores", SISC 42(3), C124-C141, 2020, Sec. 3, for an FMA
     of b products with an internal accumulator), specialised to lowp's
     model (lib/model/tc.h):
     one block adds the exact products p_1..p_b and the incoming c. Every
     term is cut at 2^(X - F) where X is the largest term exponent; the
     term attaining X has |t| >= 2^X (no subnormal input), so the cut
     changes the exact sum by at most (b + 1) 2^(X - F) <= (b + 1) 2^-F
     sum |t_i| (truncation or round-to-odd; half of it for rne alignment).
     Spread over the terms in proportion to |t_i|, that is a relative
     perturbation of each term by at most a = (b + 1) 2^-F (or half).
     The block sum is then rounded once to the output, relative error
     uo (u of the output, doubled for rtz; 2^-outfrac for the fp8
     accumulator that keeps outfrac fraction bits). So one block
     perturbs each of its terms by at most eta = (1 + a)(1 + uo) - 1; a
     product in the first of nb chained blocks goes through all of them:
       |theta| <= (1 + eta)^nb - 1,   nb = ceil(k / b) (+1 with
     interleaving, whose two half-blocks need not align with b).
     late_c adds c after the instruction's products by one more rounded
     addition: eta = (1 + a)(1 + uo)^2 - 1. With promotion every N_C
     products, each chain is at most ceil(N_C / b) blocks long and the
     ceil(k / N_C) partial results are added to an fp32 total in rne:
       |theta| <= (1 + eta)^ceil(N_C / b) (1 + u32)^ceil(k / N_C) - 1.
     Vacuous (+inf) when this reaches 1. */
  {
    int fp32_out = p->out.precision == LOWP_FMT_FP32.precision &&
                   p->out.emax == LOWP_FMT_FP32.emax;
    double a = (double)(bf->b + 1) * ldexp(1.0, -bf->F);
    if (bf->align == LOWP_RND_NE) a /= 2;
    if (fp32_out && bf->out_frac > 0) {
      uo = ldexp(1.0, -bf->out_frac);
      if (bf->out_rnd == LOWP_RND_NE || bf->out_rnd == LOWP_RND_NA) uo /= 2;
    } else {
      uo = unit(&p->out, fp32_out ? bf->out_rnd : bf->out16_rnd);
    }
    eta = compose(a, uo);
    if (bf->late_c) eta = compose(eta, unit(&p->out, bf->c_rnd)); /* c_rnd: the late addition */
    if (m->promote > 0) {
      nb = ceil((double)m->promote / bf->b);
      ncycles = ceil(k / (double)m->promote);
      if (nb > ceil(k / bf->b)) nb = ceil(k / bf->b);
    } else {
      nb = ceil(k / bf->b);
    }
    if (bf->interleave) nb += 1;
    per = expm1(nb * log1p(eta));
    if (m->promote > 0) per = compose(per, expm1(ncycles * log1p(u32)));
    *value = per >= 1 ? INFINITY : per;
    snprintf(nm, sizeof nm, "tensor-core model (b=%d, F=%d, %s alignment%s)", bf->b, bf->F,
             bf->align == LOWP_RND_NE ? "rne" : "truncating",
             m->promote ? ", promoted" : "");
  }
  if (name && namelen) snprintf(name, namelen, "%s", nm);
  return LOWP_OK;
}

/* compensated summation's bound (see lowp_op_bound) */
static int bound_kahan(double *value, char *name, size_t namelen, const lowp_problem_t *p,
                       const lowp_bound_spec_t *b, double k, double u, double up) {
  double g;
  if (b->kind != LOWP_BOUND_GAMMA) return LOWP_EUNSUPPORTED;
  /* Compensated summation: |theta_i| <= 2u + O(k u^2) (Higham 2002,
     eqs. (4.9)-(4.10), after Knuth, TAOCP vol. 2, 3rd ed., 4.2.2 ex. 19,
     and Goldberg, ACM Computing Surveys 23(1), 1991, Thm 8). The constant
     of the second-order term is lowp's choice, not a cited theorem: 4 k u^2,
     used only while k u <= 0.1 (beyond that the bound is reported as
     vacuous); tests/tcheck_op.c holds it against lowp's own Kahan sums in
     fp16, bf16 and fp32 on positive and normal data. Products rounded
     first add u_p. */
  if (k * u > 0.1) {
    *value = INFINITY;
  } else {
    g = 2 * u + 4 * k * u * u;
    *value = compose(up, g);
    if (narrower(&p->out, &b->accum.acc)) *value = compose(unit(&p->out, LOWP_RND_NE), *value);
    if (*value >= 1) *value = INFINITY;
  }
  if (name && namelen)
    snprintf(name, namelen, "Kahan 2u + 4ku^2 (u=%.3g, second-order constant lowp's)%s", u,
             up > 0 ? " with products" : "");
  return LOWP_OK;
}

int lowp_op_bound(double *value, char *name, size_t namelen, const lowp_problem_t *p,
                  const lowp_bound_spec_t *b) {
  double k, u, up = 0, r, g;
  char nm[200];
  if (!value || !p || !p->op || !b) return LOWP_EINVAL;
  *value = INFINITY;
  if (name && namelen) name[0] = '\0';
  if (p->op->kind != LOWP_OPKIND_SUMPROD) return LOWP_EUNSUPPORTED;
  switch (p->op->id) {
  case LOWP_OP_SUM: k = (double)p->dims.n; break;
  default: k = (double)p->dims.k; break;
  }
  if (b->kind == LOWP_BOUND_MODEL) return bound_model(value, name, namelen, p, b->model, k);

  units(b, &u, &up);
  if (k <= 0) return LOWP_EINVAL;

  if (b->accum.order == LOWP_ACC_KAHAN) return bound_kahan(value, name, namelen, p, b, k, u, up);

  r = roundings(&b->accum, k);
  if (r < 0) return LOWP_EINVAL;
  if (b->kind == LOWP_BOUND_GAMMA) {
    /* Each term goes through r roundings of the accumulation: gamma_r
       (Higham 2002, Lemma 3.1): recursive r = k (eq. (3.5)); pairwise
       ceil(log2 k) (eq. (4.6)); blocked and split-K (w - 1) + (ceil(k/w) - 1)
       for slices of w terms (Higham 2002, Sec. 4.2; Blanchard, Higham &
       Mary, SISC 42(3), A1541-A1557, 2020). A rounded product adds one
       factor (1 + delta_p): u_p + (1 + u_p) gamma_r. */
    g = lowp_bound_gamma(r, u);
    *value = isinf(g) ? INFINITY : compose(up, g);
    if (*value >= 1) *value = INFINITY;
    switch (b->accum.order) {
    case LOWP_ACC_RECURSIVE:
      snprintf(nm, sizeof nm, "gamma_%.0f (%s, u=%.3g)", r,
               (b->accum.fma && !b->prod) ? "recursive FMA chain" : "recursive", u);
      break;
    case LOWP_ACC_PAIRWISE:
      snprintf(nm, sizeof nm, "gamma_%.0f (pairwise, ceil(log2 %.0f), u=%.3g)", r, k, u);
      break;
    default:
      snprintf(nm, sizeof nm, "gamma_%.0f (%s:%zu, u=%.3g)", r,
               b->accum.order == LOWP_ACC_BLOCKED ? "blocked" : "splitk", b->accum.block, u);
      break;
    }
  } else if (b->kind == LOWP_BOUND_PROB) {
    double lam, rr = r + (up > 0 ? 1 : 0), uu = up > u ? up : u;
    /* Probabilistic: Higham & Mary, SISC 41(5), A2815-A2835, 2019. Their
       model needs mean-independent errors: round to nearest only. Each
       term's error is a product of rr factors (1 + delta), |delta| <= uu;
       by their Thm 2.4 it is bounded by gamma~_rr(lambda) except with
       probability 2 exp(-lambda^2 (1-u)^2 / 2), and a union over the k
       terms gives the probability of lowp_bound_prob_probability (their
       Thm 3.1 for the recursive inner product, rr = k). For pairwise
       (rr = ceil(log2 k)) and blocked/split-K (rr = (w-1) + (ceil(k/w)-1))
       it is the same argument with fewer factors per term (Higham & Mary
       2019 apply it to other summation orders the same way; Blanchard,
       Higham & Mary 2020 give the blocked form, lambda sqrt(b + k/b) u to
       first order). */
    if (b->accum.rnd != LOWP_RND_NE && b->accum.rnd != LOWP_RND_NA) return LOWP_EUNSUPPORTED;
    if (!(b->prob > 0 && b->prob < 1)) return LOWP_EINVAL;
    lam = lowp_bound_prob_lambda(k, uu, b->prob);
    g = rr > 0 ? lowp_bound_gamma_prob(rr, uu, lam) : 0;
    *value = (!isfinite(g) || g >= 1) ? INFINITY : g;
    snprintf(nm, sizeof nm, "probabilistic gamma~_%.0f(lambda=%.3f), P >= 1 - %.3g (u=%.3g)", rr,
             lam, 1 - b->prob, uu);
    /* the worst case holds always, so the smaller of the two holds with
       probability >= P: for short sums (lambda sqrt(r) > r) the worst case
       is the tighter one */
    g = lowp_bound_gamma(r, u);
    g = isinf(g) ? INFINITY : compose(up, g);
    if (g < *value) {
      *value = g;
      snprintf(nm, sizeof nm, "gamma_%.0f (u=%.3g; the worst case, tighter here than the "
               "probabilistic bound at P >= 1 - %.3g)", r, u, 1 - b->prob);
    }
  } else {
    return LOWP_EINVAL;
  }
  /* an output narrower than the accumulator is one more rounding of the
     result (e.g. fp32 accumulation, fp16 output): (1 + u_out)(1 + bound) - 1.
     An output at least as wide holds the accumulator's values exactly. */
  if (isfinite(*value) && narrower(&p->out, &b->accum.acc)) {
    double uo = unit(&p->out, b->accum.rnd == LOWP_RND_NE || b->accum.rnd == LOWP_RND_NA
                                  ? LOWP_RND_NE : b->accum.rnd);
    size_t used = strlen(nm);
    *value = compose(uo, *value);
    if (*value >= 1) *value = INFINITY;
    if (used < sizeof nm)
      snprintf(nm + used, sizeof nm - used, " + output rounding to %s", p->out.name ? p->out.name : "out");
  }
  if (name && namelen) snprintf(name, namelen, "%s", nm);
  return LOWP_OK;
}

int lowp_op_bound_units(lowp_bound_units_t *out, const lowp_problem_t *p,
                        const lowp_bound_spec_t *b) {
  double u, up, k;
  if (!out || !p || !p->op || !b) return LOWP_EINVAL;
  out->u = out->lambda = out->probability = NAN;
  if (b->kind == LOWP_BOUND_MODEL) return LOWP_EUNSUPPORTED;
  k = (double)(p->op->id == LOWP_OP_SUM ? p->dims.n : p->dims.k);
  units(b, &u, &up);
  out->u = u;
  if (b->kind == LOWP_BOUND_PROB && b->prob > 0 && b->prob < 1 && k > 0) {
    double uu = up > u ? up : u; /* as lowp_op_bound's probabilistic bound */
    out->lambda = lowp_bound_prob_lambda(k, uu, b->prob);
    out->probability = lowp_bound_prob_probability(k, uu, out->lambda);
  }
  return LOWP_OK;
}
