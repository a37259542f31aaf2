/* lowp_pipeline -- inputs, measurement, bounds and rules of the one measurement pipeline */

#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "check/pipeline.h"
#include "check/tol.h"
#include "format/bsquant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exact/exact.h"
#include "status.h"
#include "io/escape.h"

/* ------------------------------------------------------- private helpers */

static double secs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void seterr(char *err, size_t errlen, const char *fmt, const char *a, const char *b) {
  lowp_errf(err, errlen, 0, fmt, a, b);
}

static size_t count_of(const lowp_problem_t *p, int which) {
  size_t sh[LOWP_OP_MAXDIM], c = 0;
  int nd;
  if (lowp_op_shape(p, which, sh, &nd, &c)) return 0;
  return c;
}

/* the blocked orientation of input i: nbat matrices of rows x cols, blocks
   along the rows; gemm's B (k x n per batch) is blocked down its columns:
   its transpose (n x k) */
static int bs_geometry(size_t *nbat, size_t *rows, size_t *cols, int *tr, size_t c, const lowp_problem_t *p,
                       int i) {
  size_t sh[LOWP_OP_MAXDIM], cnt;
  int nd;
  if (lowp_op_shape(p, i, sh, &nd, &cnt) || cnt != c) return LOWP_EINVAL;
  *tr = p->op->id == LOWP_OP_GEMM && i == 1;
  *cols = nd ? sh[nd - 1] : 1;
  *rows = *cols ? c / *cols : 0;
  *nbat = 1;
  if (*tr) *nbat = p->dims.batch, *rows = p->dims.n, *cols = p->dims.k;
  return LOWP_OK;
}

int lowp_check_bs_quantize(double *q, double *s, double *ts, const double *data, size_t c, const lowp_problem_t *p,
                           int i) {
  size_t rows, cols, nbat, b, r, j, nb;
  int tr, st = bs_geometry(&nbat, &rows, &cols, &tr, c, p, i);
  const lowp_bsformat_t *bf = &p->bin[i];
  float *f;
  if (st) return st;
  nb = lowp_bsformat_blocks(bf, cols);
  if (!(f = malloc(c * sizeof *f + 1))) return LOWP_ENOMEM;
  for (b = 0; b < nbat && !st; b++) {
    size_t off = b * rows * cols;
    for (r = 0; r < rows; r++)
      for (j = 0; j < cols; j++) /* gemm's B: element (k = j, n = r) */
        f[off + r * cols + j] = (float)(tr ? data[off + j * rows + r] : data[off + r * cols + j]);
    st = lowp_bs_quantize(q + off, s + b * rows * nb, &ts[b], f + off, rows, cols, bf);
  }
  free(f);
  return st;
}

int lowp_check_bs_qdq(double *x, const double *data, size_t c, const lowp_problem_t *p, int i) {
  size_t rows, cols, nbat, b, r, j, nb;
  int tr, st = bs_geometry(&nbat, &rows, &cols, &tr, c, p, i);
  double *q, *s, *ts;
  if (st) return st;
  nb = lowp_bsformat_blocks(&p->bin[i], cols);
  q = malloc(c * sizeof *q + 1), s = malloc((rows * nbat * nb + 1) * sizeof *s), ts = malloc((nbat + 1) * sizeof *ts);
  st = q && s && ts ? lowp_check_bs_quantize(q, s, ts, data, c, p, i) : LOWP_ENOMEM;
  for (b = 0; b < nbat && !st; b++) {
    size_t off = b * rows * cols;
    st = lowp_bs_dequantize(q + off, q + off, s + b * rows * nb, ts[b], rows, cols, &p->bin[i]);
    for (r = 0; r < rows && !st; r++)
      for (j = 0; j < cols; j++) x[off + (tr ? j * rows + r : r * cols + j)] = q[off + r * cols + j];
  }
  free(q), free(s), free(ts);
  return st;
}

static int is_fp64(const lowp_format_t *f) {
  return f->precision == 53 && f->emax == 1023 && f->emin == -1022 && f->subnormals;
}

/* NaN 0, finite 1, +inf 2, -inf 3 */
static int vclass(double v) {
  if (isnan(v)) return 0;
  if (isinf(v)) return v > 0 ? 2 : 3;
  return 1;
}

/* ------------------------------------------------------------------ inputs */

void lowp_check_inputs_free(lowp_check_inputs_t *in) {
  int i;
  if (!in) return;
  for (i = 0; i < LOWP_OP_MAXIO; i++) {
    free(in->x[i]);
    free(in->data[i]);
  }
  memset(in, 0, sizeof *in);
}

int lowp_check_inputs_generate(lowp_check_inputs_t *in, const lowp_problem_t *p,
                               const lowp_dist_t *d, uint64_t seed) {
  int i, st = LOWP_OK;
  if (!in || !p || !p->op || !d) return LOWP_EINVAL;
  memset(in, 0, sizeof *in);
  in->n = p->op->n_in;
  for (i = 0; i < in->n && !st; i++) {
    size_t c = count_of(p, i), j;
    uint32_t stream = (uint32_t)i + 1;
    if (c == 0) { st = LOWP_EINVAL; break; }
    in->count[i] = c;
    in->x[i] = malloc(c * sizeof(double));
    if (!in->x[i]) { st = LOWP_ENOMEM; break; }
    if (p->op->in_index[i]) {
      /* class indices: floor(U[0,1) * n), U drawn in fp64 */
      lowp_dist_t u01 = {LOWP_DIST_UNIFORM01, 0, 0};
      st = lowp_dist_fill(in->x[i], c, &u01, &LOWP_FMT_FP64, seed, stream);
      for (j = 0; j < c && !st; j++) {
        double t = floor(in->x[i][j] * (double)p->dims.n);
        in->x[i][j] = t < (double)p->dims.n ? t : (double)p->dims.n - 1;
      }
      continue;
    }
    if (d->kind == LOWP_DIST_CANCEL && p->op->id == LOWP_OP_GEMM) {
      /* pairs that cancel across A and B: generated together, exact in the
         input format (no unrounded data) */
      size_t mk = p->dims.m * p->dims.k, kn = p->dims.k * p->dims.n, bt;
      if (i == 1) continue; /* filled with A */
      in->x[1] = malloc(count_of(p, 1) * sizeof(double));
      in->count[1] = count_of(p, 1);
      if (!in->x[1]) { st = LOWP_ENOMEM; break; }
      for (bt = 0; bt < p->dims.batch && !st; bt++)
        st = lowp_dist_cancel_gemm(&in->x[0][bt * mk], &in->x[1][bt * kn], p->dims.m,
                                   p->dims.n, p->dims.k, &p->in[0], seed + bt);
      i = 1;
      continue;
    }
    if (d->kind == LOWP_DIST_CANCEL || d->kind == LOWP_DIST_SPREAD) {
      /* these are defined by the input format itself: drawn in it */
      st = lowp_dist_fill(in->x[i], c, d, &p->in[i], seed, stream);
      continue;
    }
    in->data[i] = malloc(c * sizeof(double));
    if (!in->data[i]) { st = LOWP_ENOMEM; break; }
    st = lowp_dist_fill(in->data[i], c, d, &LOWP_FMT_FP64, seed, stream);
    if (!st) st = lowp_round_array_f64(in->x[i], in->data[i], c, &p->in[i], NULL, LOWP_RND_NE);
    /* Inputs of at most 12 bits (fp16, bf16, tf32, fp8) keep their data at
       fp32 precision: the exact reference of the data then takes lib/exact's
       fast path (<= 26 significant bits; 53-bit data cost ~10x more), and
       the input part of the split changes by under 2^-12 of itself. The
       inputs themselves are always the fp64 draws rounded once. */
    if (!st && p->in[i].precision <= 12)
      st = lowp_round_array_f64(in->data[i], in->data[i], c, &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
    if (!st && p->has_bin[i]) { /* block-scaled: data in fp32, x its quantization */
      st = lowp_round_array_f64(in->data[i], in->data[i], c, &LOWP_FMT_FP32, NULL, LOWP_RND_NE);
      if (!st) st = lowp_check_bs_qdq(in->x[i], in->data[i], c, p, i);
    }
  }
  if (st) lowp_check_inputs_free(in);
  return st;
}

int lowp_check_inputs_copy(lowp_check_inputs_t *in, const lowp_problem_t *p,
                           const double *const *x, const double *const *data) {
  int i;
  if (!in || !p || !p->op || !x) return LOWP_EINVAL;
  memset(in, 0, sizeof *in);
  in->n = p->op->n_in;
  for (i = 0; i < in->n; i++) {
    size_t c = count_of(p, i);
    if (c == 0 || !x[i]) { lowp_check_inputs_free(in); return LOWP_EINVAL; }
    in->count[i] = c;
    in->x[i] = malloc(c * sizeof(double));
    if (!in->x[i]) { lowp_check_inputs_free(in); return LOWP_ENOMEM; }
    memcpy(in->x[i], x[i], c * sizeof(double));
    if (data && data[i]) {
      in->data[i] = malloc(c * sizeof(double));
      if (!in->data[i]) { lowp_check_inputs_free(in); return LOWP_ENOMEM; }
      memcpy(in->data[i], data[i], c * sizeof(double));
    }
  }
  return LOWP_OK;
}

/* ----------------------------------------------------------------- bounds */

int lowp_check_bound(lowp_check_bound_t *b, const lowp_problem_t *p, const lowp_subject_t *s,
                     lowp_bound_kind_t k, double prob, const lowp_accum_t *over_accum,
                     const lowp_tc_model_t *over_model, double max_bwd) {
  lowp_bound_spec_t bs;
  int st;
  if (!b || !p) return LOWP_EINVAL;
  memset(b, 0, sizeof *b);
  memset(&bs, 0, sizeof bs);
  bs.kind = k;
  bs.prob = prob > 0 ? prob : 0.99;
  if (k == LOWP_BOUND_MODEL) {
    if (over_model) bs.model = over_model;
    else if (s && s->has_model) bs.model = &s->model;
    else return LOWP_EUNSUPPORTED;
  } else {
    if (over_accum) {
      bs.accum = *over_accum;
      bs.prod = NULL;
    } else if (s && s->has_accum) {
      bs.accum = s->accum;
      bs.prod = s->prod;
    } else {
      return LOWP_EUNSUPPORTED;
    }
  }
  st = lowp_op_bound(&b->value, b->name, sizeof b->name, p, &bs);
  if (st) return st;
  b->have = 1;
  {
    lowp_bound_units_t bu;
    (void)lowp_op_bound_units(&bu, p, &bs); /* NaN for a model bound */
    b->u = bu.u;
    b->lambda = bu.lambda;
    b->probability = bu.probability;
  }
  b->used = isinf(b->value) ? 0 : (b->value > 0 ? max_bwd / b->value : (max_bwd > 0 ? INFINITY : 0));
  return LOWP_OK;
}

int lowp_check_rule_bound(lowp_check_bound_t *b, const lowp_rule_t *rule,
                          const lowp_problem_t *p, const lowp_subject_t *s, double max_bwd) {
  /* the rule's order and format, the rest from the subject's method */
  lowp_accum_t acc;
  if (!b || !rule || !p) return LOWP_EINVAL;
  if (rule->has_tree) { /* a tree's bound: sum_i c_i |a_i b_i| <= max_i c_i sum_i |a_i b_i| */
    memset(b, 0, sizeof *b);
    b->have = 1;
    b->value = rule->tree_bound;
    b->u = b->lambda = b->probability = NAN;
    snprintf(b->name, sizeof b->name, "%s", rule->tree_name);
    b->used = b->value > 0 ? max_bwd / b->value : (max_bwd > 0 ? INFINITY : 0);
    return LOWP_OK;
  }
  acc = rule->accum;
  if (rule->has_accum) (void)lowp_check_rule_accum(&acc, rule, s);
  return lowp_check_bound(b, p, s, rule->bound, rule->prob, rule->has_accum ? &acc : NULL,
                          rule->has_model ? &rule->model : NULL, max_bwd);
}

/* ---------------------------------------------------- row-operation bounds */

/* The bound of a row operation whose subject declares its compute and
   accumulation formats (issue 31): lowp_tol_data per row of the inputs,
   worst case (b->kind gamma) or probabilistic at the default risk (prob),
   measured as the largest |c - x| / (atol + rtol |x|) over output 0.
   b->value is the loosest row's rtol; b->used the measured ratio. */
static void row_bound(lowp_check_bound_t *b, lowp_bound_kind_t kind, const lowp_problem_t *p,
                      const lowp_subject_t *s, const lowp_check_inputs_t *in,
                      const lowp_check_output_t *o) {
  lowp_tol_query_t q;
  lowp_tol_t t;
  double *atol = NULL, *rtol = NULL, worst = 0;
  size_t i, at = 0;
  memset(b, 0, sizeof *b);
  memset(&q, 0, sizeof q);
  if (p->dims.batch * p->dims.m * (p->op->id == LOWP_OP_LOGSUMEXP || p->op->id == LOWP_OP_XENT
                                       ? 1 : p->dims.n) != o->count)
    return; /* lowp_tol_data's layout: one value per row, or per element */
  q.op = p->op;
  q.in = p->in[0];
  q.out = p->out;
  q.accum = s->accum;
  q.has_compute = 1;
  q.compute = s->compute;
  q.worst = kind == LOWP_BOUND_GAMMA;
  q.eps = p->eps;
  atol = malloc((o->count ? o->count : 1) * sizeof *atol);
  rtol = malloc((o->count ? o->count : 1) * sizeof *rtol);
  if (atol && rtol && !lowp_tol_data(&t, atol, rtol, &q, &p->dims, (const double *const *)in->x,
                                     NULL, 0)) {
    for (i = 0; i < o->count; i++) {
      double c = o->got[i], x = o->exact[i], d, lim, r;
      if (!isfinite(c) || !isfinite(x)) continue;
      d = fabs(c - x);
      lim = atol[i] + rtol[i] * fabs(x);
      r = d == 0 ? 0 : d / lim;
      if (r > worst) {
        worst = r;
        at = i;
      }
    }
    b->row_where = at;
    b->have = 1;
    b->value = t.vacuous ? INFINITY : t.rtol;
    b->used = t.vacuous ? 0 : worst;
    b->u = lowp_format_u(&s->compute);
    b->lambda = b->probability = NAN;
    if (t.probabilistic) b->probability = 1 - t.risk;
    snprintf(b->name, sizeof b->name, "%s bound of %s (compute %s, acc %s): rtol %.4g, atol "
             "<= %.4g", t.probabilistic ? "probabilistic" : "worst-case", p->op->name,
             s->compute.name ? s->compute.name : "custom",
             s->accum.acc.name ? s->accum.acc.name : "custom", t.rtol, t.atol);
  }
  free(atol);
  free(rtol);
}

/* ---------------------------------------------------------------- measure */

void lowp_check_result_free(lowp_check_result_t *r) {
  int j;
  if (!r) return;
  for (j = 0; j < LOWP_OP_MAXIO; j++) {
    lowp_check_output_t *o = &r->out[j];
    free(o->got);
    if (o->borrowed) continue;
    free(o->exact);
    free(o->exact_out);
    free(o->exact_data);
    free(o->exact_lo);
    free(o->absab);
  }
  memset(r, 0, sizeof *r);
}

/* the output roundings below go through lowp_round_array_f64 (its vector paths; one lowp_round_f64 call
   per element was 5% of matmul-precision) a chunk of RCHUNK elements at a time, in buffers on the
   stack: temporaries of the outputs' size (two at once, 256 MiB at n = 4096 in `lowp gemm`) raised that
   command's peak memory over issue 34's 3x its three n x n binary64 arrays. Its only refusals (a bad
   mode, an invalid format) cannot happen here: the modes are constants and p->out is a built-in format
   or one lowp_format_parse validated (spec.c, capi.c). */
enum { RCHUNK = 512 };

/* Round fp64 exact values to p->out. Rounding the exact value to fp64 and
   then to a narrower format equals rounding it once, except when the fp64
   value is a midpoint of the narrower format (any midpoint lying strictly
   between the exact value and its fp64 rounding would be a nearer fp64
   number). Returns 1 when such a midpoint was met: then the caller computes
   the exact result rounded to p->out directly. */
/* x is a midpoint of a format whose directed roundings of it are lo and hi */
static int is_midpoint(double x, double lo, double hi) {
  return lo != hi && isfinite(lo) && isfinite(hi) && x - lo == hi - x;
}

static int round_out(double *y, const double *x, size_t n, const lowp_format_t *f) {
  double lo[RCHUNK], hi[RCHUNK];
  size_t i0, i;
  int mid = 0;
  if (is_fp64(f)) {
    memcpy(y, x, n * sizeof *y);
    return 0;
  }
  for (i0 = 0; i0 < n; i0 += RCHUNK) {
    const size_t m = n - i0 < RCHUNK ? n - i0 : RCHUNK;
    const double *xc = x + i0;
    if (f->precision < 53) { /* the two directed roundings first: y may be x */
      (void)lowp_round_array_f64(lo, xc, m, f, NULL, LOWP_RND_DN);
      (void)lowp_round_array_f64(hi, xc, m, f, NULL, LOWP_RND_UP);
      for (i = 0; i < m; i++) {
        if (!isfinite(xc[i])) continue;
        if (is_midpoint(xc[i], lo[i], hi[i])) mid = 1;
        else if (lo[i] != hi[i] && (isinf(lo[i]) || isinf(hi[i]))) mid = 1; /* at the overflow edge: recompute */
      }
    }
    (void)lowp_round_array_f64(y + i0, xc, m, f, NULL, LOWP_RND_NE);
  }
  return mid;
}

static void measure_output(lowp_check_output_t *o, const lowp_problem_t *p) {
  size_t i, nfin = 0;
  double ss = 0, mx = 0, rg[RCHUNK]; /* the outputs rounded to the format, a chunk at a time */
  (void)lowp_measure_errors_lo(&o->err, o->got, o->exact, o->exact_lo, o->absab, o->count, &p->out);
  o->worst = (size_t)-1;
  o->first_class_mismatch = (size_t)-1;
  o->n_class_mismatch = 0;
  o->n_not_in_format = 0;
  o->max_ulp_input = 0;
  for (i = 0; i < o->count; i++) {
    double g = o->got[i], x = o->exact[i];
    if (i % RCHUNK == 0)
      (void)lowp_round_array_f64(rg, o->got + i, o->count - i < RCHUNK ? o->count - i : RCHUNK, &p->out, NULL,
                                 LOWP_RND_NE);
    if (vclass(g) != vclass(o->exact_out[i])) {
      if (!o->n_class_mismatch) o->first_class_mismatch = i;
      o->n_class_mismatch++;
    }
    if (!isnan(g) && rg[i % RCHUNK] != g) o->n_not_in_format++;
    if (isfinite(g) && isfinite(x)) {
      double dd = g - x;
      ss += dd * dd;
      nfin++;
      if (fabs(x) > mx) mx = fabs(x);
    }
    if (o->exact_data && isfinite(x) && isfinite(o->exact_data[i])) {
      double ui = fabs(x - o->exact_data[i]) / lowp_ulp_toward(x, o->exact_data[i], &p->out);
      if (ui > o->max_ulp_input) o->max_ulp_input = ui;
    }
  }
  o->rmse = nfin ? sqrt(ss / (double)nfin) : 0;
  o->max_abs_exact = mx;
  lowp_check_output_similarity(o);
  if (o->n_class_mismatch) o->worst = o->first_class_mismatch;
  else if (o->err.n > 0 && o->err.n_exact < o->err.n) o->worst = o->err.argmax_ulp;
  o->ulp_total = o->ulp_input = o->ulp_compute = 0;
  if (o->worst != (size_t)-1) {
    size_t w = o->worst;
    double x = o->exact[w], ul = lowp_ulp_toward(x, o->got[w], &p->out);
    if (o->n_class_mismatch) {
      o->ulp_compute = o->ulp_total = INFINITY;
    } else {
      double lo = o->exact_lo ? o->exact_lo[w] : 0; /* as lowp_measure_errors_lo counts it */
      o->ulp_compute = fabs((o->got[w] - x) - lo) / lowp_measure_ulp_unit(o->got[w], x, lo, &p->out);
      o->ulp_total = o->ulp_compute;
      if (o->exact_data && isfinite(o->exact_data[w])) {
        o->ulp_input = fabs(x - o->exact_data[w]) / ul;
        o->ulp_total = fabs(o->got[w] - o->exact_data[w]) / ul;
      }
    }
  }
}

/* Where o->exact (the binary64 rounding of the exact result) is a midpoint of f, its rounding to odd in
   binary64 instead, from to_odd (o->exact_out holds it; see measure_run) */
static void odd_at_midpoints(lowp_check_output_t *o, const double *to_odd, const lowp_format_t *f) {
  double lo[RCHUNK], hi[RCHUNK];
  size_t i0, i;
  for (i0 = 0; i0 < o->count; i0 += RCHUNK) {
    const size_t m = o->count - i0 < RCHUNK ? o->count - i0 : RCHUNK;
    (void)lowp_round_array_f64(lo, o->exact + i0, m, f, NULL, LOWP_RND_DN);
    (void)lowp_round_array_f64(hi, o->exact + i0, m, f, NULL, LOWP_RND_UP);
    for (i = 0; i < m; i++)
      if (is_midpoint(o->exact[i0 + i], lo[i], hi[i])) o->exact[i0 + i] = to_odd[i0 + i];
  }
}

/* the inputs as the subject computes with them: input j converted (p's
   "convert") into conv[j] (owned by the caller), else in->x[j] */
static int converted_inputs(const double **ins, double **conv, const lowp_problem_t *p,
                            const lowp_check_inputs_t *in) {
  int j;
  for (j = 0; j < p->op->n_in; j++) {
    ins[j] = in->x[j];
    if (!p->has_conv[j]) continue;
    if (!(conv[j] = malloc((in->count[j] + 1) * sizeof *conv[j]))) return LOWP_ENOMEM;
    if (lowp_round_array_f64(conv[j], in->x[j], in->count[j], &p->conv[j], NULL, p->conv_rnd[j]))
      return LOWP_EINVAL;
    ins[j] = conv[j];
  }
  return LOWP_OK;
}

static int measure_run(lowp_check_result_t *r, const lowp_problem_t *p, const lowp_subject_t *s,
                       const lowp_check_inputs_t *in, const lowp_check_opts_t *opts, double **conv,
                       char *err, size_t errlen) {
  double *outs[LOWP_OP_MAXIO] = {0}, *ex[LOWP_OP_MAXIO] = {0};
  const double *ins[LOWP_OP_MAXIO] = {0}, *ref_in[LOWP_OP_MAXIO] = {0};
  int j, st, n_in, have_data = 0, sumprod;
  double t0;
  r->problem = *p;
  snprintf(r->subject, sizeof r->subject, "%s", s->name);
  n_in = p->op->n_in;
  r->n_out = p->op->n_out;
  sumprod = p->op->kind == LOWP_OPKIND_SUMPROD;
  for (j = 0; j < n_in; j++) {
    if (!in->x[j] || in->count[j] != count_of(p, j)) {
      seterr(err, errlen, "input %s%s: missing or of the wrong size", p->op->in_names[j], "");
      return LOWP_ESHAPE;
    }
    ins[j] = in->x[j];
    if (in->data[j] || p->has_conv[j]) have_data = 1; /* a conversion: its cost is input error */
  }
  if ((st = converted_inputs(ref_in, conv, p, in))) {
    seterr(err, errlen, "converting the inputs as declared (\"convert\") failed: %s%s",
           lowp_status_str(st), "");
    return st;
  }
  for (j = 0; j < r->n_out; j++) {
    lowp_check_output_t *o = &r->out[j];
    o->name = p->op->out_names[j];
    o->count = count_of(p, n_in + j);
    if (!o->count) return LOWP_EINVAL;
    o->got = calloc(o->count, sizeof(double));
    o->exact = malloc(o->count * sizeof(double));
    o->exact_out = malloc(o->count * sizeof(double));
    if (sumprod && !(opts && opts->no_absab)) o->absab = malloc(o->count * sizeof(double));
    if (have_data) o->exact_data = malloc(o->count * sizeof(double));
    if (!o->got || !o->exact || !o->exact_out || (sumprod && !(opts && opts->no_absab) && !o->absab) ||
        (have_data && !o->exact_data)) {
      seterr(err, errlen, "out of memory for the results%s%s", "", "");
      return LOWP_ENOMEM;
    }
    outs[j] = o->got;
  }

  /* 1. the subject */
  t0 = secs();
  st = s->run(s, outs, ins, p, err, errlen);
  r->time_subject_s = secs() - t0;
  if (st) {
    if (err && errlen && !err[0]) seterr(err, errlen, "subject %s failed: %s", s->name,
                                         lowp_status_str(st));
    return st;
  }

  /* 2. exact references: of the rounded inputs (fp64 and the output
     format), and of the unrounded data */
  t0 = secs();
  for (j = 0; j < r->n_out; j++) ex[j] = r->out[j].exact;
  st = lowp_op_exact_ex(ex, sumprod ? r->out[0].absab : NULL, ref_in, p, &LOWP_FMT_FP64,
                        LOWP_RND_NE, opts && opts->progress.fn ? &opts->progress : NULL);
  if (!st) {
    int mid = 0;
    for (j = 0; j < r->n_out; j++)
      mid |= round_out(r->out[j].exact_out, r->out[j].exact, r->out[j].count, &p->out);
    if (mid) {
      for (j = 0; j < r->n_out; j++) ex[j] = r->out[j].exact_out;
      /* An exact value whose binary64 rounding is a midpoint of the output format (1 + 2^-24
         for fp32) is measured against its rounding to odd in binary64 instead: the same double
         when the value is that midpoint, else the double next to it on the value's side.
         Against the midpoint itself both neighbours measured 0.5 ulp, and the one on the wrong
         side of 1 + 2^-24 + 2^-80 (0.5 + 2^-57 ulp off, not correctly rounded) passed max_ulp
         0.5. Rounded to nearest from there the output format's rounding is the exact value's
         (round to odd, then to 2 or more bits fewer: Boldo & Melquiond, IEEE TC 57(4) 2008),
         so no second array is needed; a format of 52 bits or more is rounded directly. */
      if (p->out.precision <= 51) {
        st = lowp_op_exact(ex, NULL, ref_in, p, &LOWP_FMT_FP64, LOWP_RND_TO);
        for (j = 0; j < r->n_out && !st; j++) {
          lowp_check_output_t *o = &r->out[j];
          odd_at_midpoints(o, o->exact_out, &p->out);
          (void)lowp_round_array_f64(o->exact_out, o->exact_out, o->count, &p->out, NULL, LOWP_RND_NE);
        }
      } else {
        st = lowp_op_exact(ex, NULL, ref_in, p, &p->out, LOWP_RND_NE);
      }
    }
  }
  /* an output as wide as binary64: exact is itself a rounding, and an error measured against it
     could read up to half an ulp low (a true 1.4 ulp as 1); the residual restores it (sums of
     products: their exact sums take -exact as one more term) */
  if (!st && sumprod && p->out.precision > 51 && !(opts && opts->no_absab)) {
    lowp_check_output_t *o = &r->out[0];
    if (!(o->exact_lo = malloc(o->count * sizeof(double)))) {
      seterr(err, errlen, "out of memory for the results%s%s", "", "");
      return LOWP_ENOMEM;
    }
    st = lowp_op_exact_lo(o->exact_lo, o->exact, ref_in, p);
  }
  if (!st && have_data) {
    const double *dat[LOWP_OP_MAXIO] = {0};
    for (j = 0; j < n_in; j++) dat[j] = in->data[j] ? in->data[j] : in->x[j];
    for (j = 0; j < r->n_out; j++) ex[j] = r->out[j].exact_data;
    st = lowp_op_exact(ex, NULL, dat, p, &LOWP_FMT_FP64, LOWP_RND_NE);
  }
  r->time_exact_s = secs() - t0;
  if (st) {
    if (st == LOWP_EUNSUPPORTED)
      seterr(err, errlen, "no exact reference for %s in this build%s", p->op->name, "");
    else if (st == LOWP_EINVAL && p->op->id == LOWP_OP_XENT)
      seterr(err, errlen, "xent: a target is not an integer class index in [0, n)%s%s", "", "");
    else
      seterr(err, errlen, "exact reference failed: %s%s", lowp_status_str(st), "");
    return st;
  }

  st = lowp_check_finish(r, s, opts);
  /* 4b. a row operation's bound, from the inputs (lowp_tol_data) */
  if (!st && p->op->kind != LOWP_OPKIND_SUMPROD && s->has_compute && s->has_accum &&
      !r->out[0].n_class_mismatch && !p->reduction_mean /* xent's mean: no derivation */) {
    row_bound(&r->gamma, LOWP_BOUND_GAMMA, p, s, in, &r->out[0]);
    row_bound(&r->prob, LOWP_BOUND_PROB, p, s, in, &r->out[0]);
  }
  return st;
}

int lowp_check_measure(lowp_check_result_t *r, const lowp_problem_t *p,
                       const lowp_subject_t *s, const lowp_check_inputs_t *in,
                       const lowp_check_opts_t *opts, char *err, size_t errlen) {
  double *conv[LOWP_OP_MAXIO] = {0};
  int j, st;
  if (err && errlen) err[0] = '\0';
  if (!r) return LOWP_EINVAL;
  memset(r, 0, sizeof *r);
  if (!p || !p->op || !s || !s->run || !in) return LOWP_EINVAL;
  st = measure_run(r, p, s, in, opts, conv, err, errlen);
  for (j = 0; j < LOWP_OP_MAXIO; j++) free(conv[j]);
  return st;
}

int lowp_check_finish(lowp_check_result_t *r, const lowp_subject_t *s,
                      const lowp_check_opts_t *opts) {
  const lowp_problem_t *p;
  int j, sumprod;
  double prob = (opts && opts->prob > 0) ? opts->prob : 0.99;
  if (!r || !s || !r->problem.op) return LOWP_EINVAL;
  p = &r->problem;
  sumprod = p->op->kind == LOWP_OPKIND_SUMPROD;
  /* outputs the subject does not produce: neutral (zero error), marked */
  for (j = 1; j < r->n_out; j++)
    if (s->absent & (1u << j)) {
      r->out[j].absent = 1;
      memcpy(r->out[j].got, r->out[j].exact_out, r->out[j].count * sizeof(double));
    }

  /* 3. metrics */
  r->max_ulp = 0;
  r->max_abs = 0;
  r->max_bwd = sumprod ? 0 : NAN;
  for (j = 0; j < r->n_out; j++) {
    lowp_check_output_t *o = &r->out[j];
    measure_output(o, p);
    if (o->err.max_ulp > r->max_ulp) r->max_ulp = o->err.max_ulp;
    if (o->err.max_abs > r->max_abs) r->max_abs = o->err.max_abs;
    if (sumprod && o->err.max_bwd > r->max_bwd) r->max_bwd = o->err.max_bwd;
  }
  r->rmse = r->out[0].rmse;

  /* 4. the bounds that fit the subject's method */
  if (sumprod) {
    double mb = r->out[0].n_class_mismatch ? INFINITY : r->max_bwd;
    if (s->has_accum) {
      (void)lowp_check_bound(&r->gamma, p, s, LOWP_BOUND_GAMMA, prob, NULL, NULL, mb);
      (void)lowp_check_bound(&r->prob, p, s, LOWP_BOUND_PROB, prob, NULL, NULL, mb);
    }
    if (s->has_model) (void)lowp_check_bound(&r->model, p, s, LOWP_BOUND_MODEL, prob, NULL, NULL, mb);
  }
  return LOWP_OK;
}

/* ----------------------------------------------------------------- metrics */

static const char *metric_names[LOWP_METRIC_COUNT] = {"max_ulp", "max_abs", "rmse",
                                                      "max_rel", "max_bwd", "mean_ulp"};

const char *lowp_metric_name(lowp_metric_t m) {
  return (unsigned)m < LOWP_METRIC_COUNT ? metric_names[m] : NULL;
}

int lowp_metric_parse(lowp_metric_t *m, const char *name) {
  int i;
  if (!m || !name) return LOWP_EINVAL;
  for (i = 0; i < LOWP_METRIC_COUNT; i++)
    if (!strcmp(metric_names[i], name)) {
      *m = (lowp_metric_t)i;
      return LOWP_OK;
    }
  return LOWP_EINVAL;
}

static size_t mismatches(const lowp_check_result_t *r) {
  size_t n = 0;
  int j;
  for (j = 0; j < r->n_out; j++) n += r->out[j].n_class_mismatch;
  return n;
}

double lowp_metric_value(const lowp_check_result_t *r, lowp_metric_t m) {
  double v = 0;
  int j;
  if (!r) return NAN;
  /* a NaN or infinity where the exact result has none (or the reverse) is an
     unbounded error for every metric */
  if (mismatches(r)) return (m == LOWP_METRIC_MAX_BWD && isnan(r->max_bwd)) ? NAN : INFINITY;
  for (j = 0; j < r->n_out; j++) {
    const lowp_check_output_t *o = &r->out[j];
    double x;
    switch (m) {
    case LOWP_METRIC_MAX_ULP: x = o->err.max_ulp; break;
    case LOWP_METRIC_MAX_ABS: x = o->err.max_abs; break;
    case LOWP_METRIC_RMSE: x = o->rmse; break;
    case LOWP_METRIC_MAX_REL: x = o->err.max_rel; break;
    case LOWP_METRIC_MEAN_ULP: x = o->err.mean_ulp; break;
    case LOWP_METRIC_MAX_BWD:
      if (r->problem.op && r->problem.op->kind != LOWP_OPKIND_SUMPROD) return NAN;
      x = o->err.max_bwd;
      break;
    default: return NAN;
    }
    if (x > v || isnan(x)) v = x;
  }
  return v;
}

/* ------------------------------------------------------------------- rules */


static void out_index(char *buf, size_t len, const lowp_check_result_t *r, int j, size_t i) {
  if (i == (size_t)-1) snprintf(buf, len, "-");
  else lowp_check_index_str(buf, len, &r->problem, j, i);
}

/* the output whose worst ulp error is largest, for messages */
static int worst_out(const lowp_check_result_t *r) {
  int j, w = 0;
  for (j = 0; j < r->n_out; j++) {
    if (r->out[j].n_class_mismatch) return j;
    if (r->out[j].err.max_ulp > r->out[w].err.max_ulp) w = j;
  }
  return w;
}

static void set_percent(lowp_verdict_t *v) {
  if (v->vacuous) v->percent = NAN;
  else if (v->limit > 0) v->percent = 100 * v->measured / v->limit;
  else v->percent = v->measured == 0 ? 0 : INFINITY;
}

void lowp__check_verdict_count(lowp_verdict_t *v, size_t n, size_t first, int out) {
  v->measured = (double)n;
  v->limit = 0;
  v->where = first;
  v->where_out = out;
  v->pass = n == 0;
  set_percent(v);
}

/* Each rule kind is one function: v is zeroed, where = -1, where_out = the
   output with the largest ulp error; each sets what, measured, limit, pass,
   the element of its own metric that decided it, and the one-line message. */

static int eval_max_ulp(lowp_verdict_t *v, const lowp_rule_t *rule, const lowp_check_result_t *r) {
  char idx[96];
  int j = v->where_out;
  snprintf(v->what, sizeof v->what, "max_ulp");
  v->measured = lowp_metric_value(r, LOWP_METRIC_MAX_ULP);
  v->limit = rule->limit;
  v->where = r->out[j].worst;
  v->pass = v->measured <= v->limit;
  set_percent(v);
  out_index(idx, sizeof idx, r, j, v->where);
  snprintf(v->msg, sizeof v->msg, "max_ulp %.4g %s %.4g (ulps of %s) at %s", v->measured,
           v->pass ? "<=" : ">", v->limit, r->problem.out.name, idx);
  return LOWP_OK;
}

static int bound_unsupported(lowp_verdict_t *v, const lowp_rule_t *rule,
                             const lowp_subject_t *s) {
  snprintf(v->msg, sizeof v->msg, "%s",
           rule->bound == LOWP_BOUND_MODEL
               ? "the subject declares no tensor-core model: give \"model\" in the rule"
           : rule->bound == LOWP_BOUND_PROB && (rule->has_accum || (s && s->has_accum))
               ? "no probabilistic bound for this order or rounding (it needs round to "
                 "nearest and a non-compensated order)"
               : "the subject declares no accumulation: give \"order\" and \"acc\" in "
                 "the rule");
  return LOWP_EUNSUPPORTED;
}

/* --- the output's rounding apart from the accumulation (issue 31) ---
   An output narrower than the accumulator is rounded once, relative to |x|
   (u_out |x|), not to sum |a_i b_i|: folded into the componentwise bound
   (u_out + (1 + u_out) beta) sum|a b| it lets a single output be off by
   many ulps wherever sum |a b| >> |x| (cancellation, large K). So the
   gamma and prob rules check, per element,
     |c - x| <= u_out |x| + (1 + u_out) beta sum|a b| + floor
   (floor: half the output's smallest subnormal spacing, and k of the
   accumulator's for products below its range) and measure the largest
   ratio of the two sides; beta is the accumulation's bound alone. */

/* the accumulation the bound rule uses (as lowp_check_rule_bound) */
int lowp_check_rule_accum(lowp_accum_t *acc, const lowp_rule_t *rule, const lowp_subject_t *s) {
  if (rule->has_accum) {
    *acc = rule->accum;
    if (rule->accum_given && s && s->has_accum) {
      *acc = s->accum;
      if (rule->accum_given & 1) {
        acc->order = rule->accum.order;
        acc->block = rule->accum.block;
        acc->rnd = rule->accum.rnd;
        acc->fma = rule->accum.fma;
      }
      if (rule->accum_given & 2) acc->acc = rule->accum.acc;
    }
    return 1;
  }
  if (s && s->has_accum) {
    *acc = s->accum;
    return 1;
  }
  return 0;
}

static double half_subnormal(const lowp_format_t *f) {
  return f->subnormals ? ldexp(1.0, f->emin - f->precision) : ldexp(1.0, f->emin);
}

/* the largest |c - x| / (u_out |x| + (1 + u_out) beta |A||B| + floor) of
   output 0, and its element; 0 (nothing to split) when the output is not
   narrower than the accumulator or the bound is a model's */
static int split_ratio(double *ratio, size_t *where, double *beta_out, const lowp_rule_t *rule,
                       const lowp_check_result_t *r, const lowp_subject_t *s) {
  const lowp_check_output_t *o = &r->out[0];
  const lowp_format_t *out = &r->problem.out;
  lowp_problem_t pa = r->problem;
  lowp_check_bound_t ba;
  lowp_accum_t acc;
  double uo, beta, fl, k, worst = 0;
  size_t i, arg = (size_t)-1;
  if (rule->bound == LOWP_BOUND_MODEL || !o->absab) return 0;
  /* a tree rule's accumulator is the rule's "acc" (its tree bounded in it), whatever the subject says */
  if (rule->has_tree) acc = rule->accum;
  else if (!lowp_check_rule_accum(&acc, rule, s)) return 0;
  if (!(out->precision < acc.acc.precision || out->emax < acc.acc.emax ||
        out->emin > acc.acc.emin || (!out->subnormals && acc.acc.subnormals)))
    return 0;
  pa.out = LOWP_FMT_FP64; /* holds the accumulator's values: no output rounding */
  if (lowp_check_rule_bound(&ba, rule, &pa, s, 0) || !isfinite(ba.value)) return 0;
  beta = ba.value;
  uo = lowp_format_u(out) *
       (acc.rnd == LOWP_RND_NE || acc.rnd == LOWP_RND_NA ? 1 : 2);
  k = (double)(r->problem.op->id == LOWP_OP_SUM ? r->problem.dims.n : r->problem.dims.k);
  fl = half_subnormal(out) + (r->problem.op->id == LOWP_OP_SUM ? 0 : k * half_subnormal(&acc.acc));
  for (i = 0; i < o->count; i++) {
    double c = o->got[i], x = o->exact[i], d, lim, q;
    if (!isfinite(c) || !isfinite(x)) continue; /* class mismatches are counted apart */
    d = fabs(c - x);
    lim = uo * fabs(x) + (1 + uo) * beta * o->absab[i] + fl;
    q = d == 0 ? 0 : d / lim;
    if (arg == (size_t)-1 || q > worst) {
      worst = q;
      arg = i;
    }
  }
  *ratio = worst;
  *where = arg;
  *beta_out = beta;
  return 1;
}

/* Output 0's NaN/inf class mismatches that the rounding of the bound rule's declared accumulation does
   not explain. The classes are the exact result's rounded to nearest (measure_output); under a directed
   rounding an exact value beyond the output's largest finite value rounds to that value instead (IEEE
   754-2019, 7.4: round toward zero, and toward the other infinity, give the largest finite number on
   overflow), and toward an infinity one just beyond it rounds to the infinity. An element whose class is
   the exact value's rounded in acc->rnd is counted out: a finite output is then measured like any other
   (lowp_measure_errors_lo counts every finite one), an infinite one is left out of the metrics as an
   infinity the exact result rounds to would be. The exact value is x + lo (exact_lo): the binary64 x
   moved one binary64 step toward lo rounds the same way in a format of 52 bits or fewer. */
static size_t mismatches_unexplained(const lowp_check_output_t *o, const lowp_format_t *f,
                                     const lowp_accum_t *acc) {
  size_t i, n = 0;
  if (!o->n_class_mismatch || acc->rnd == LOWP_RND_NE || acc->rnd == LOWP_RND_SR) return o->n_class_mismatch;
  for (i = 0; i < o->count; i++) {
    double x = o->exact[i], lo = o->exact_lo ? o->exact_lo[i] : 0, y;
    if (vclass(o->got[i]) == vclass(o->exact_out[i])) continue;
    if (isfinite(x) && lo != 0 && isfinite(lo)) x = nextafter(x, lo > 0 ? INFINITY : -INFINITY);
    (void)lowp_round_f64(&y, x, f, NULL, acc->rnd);
    if (vclass(o->got[i]) != vclass(y)) n++;
  }
  return n;
}

/* v's place: output j's first NaN/inf class mismatch, and the message naming n of them (why: after the
   count) and that element */
static void mismatch_msg(lowp_verdict_t *v, const lowp_check_result_t *r, int j, size_t n, const char *why) {
  const lowp_check_output_t *o = &r->out[j];
  char idx[96];
  v->where_out = j;
  v->where = o->first_class_mismatch;
  out_index(idx, sizeof idx, r, j, v->where);
  snprintf(v->msg, sizeof v->msg, "%zu NaN/inf class mismatches%s; first at %s: got %g, exact %g", n, why, idx,
           o->got[v->where], o->exact_out[v->where]);
}

static int eval_bound(lowp_verdict_t *v, const lowp_rule_t *rule, const lowp_check_result_t *r,
                      const lowp_subject_t *s) {
  static const char *kn[] = {"gamma", "prob", "model"};
  lowp_check_bound_t b;
  lowp_accum_t acc;
  char idx[96];
  double mb;
  size_t nmis;
  int st;
  snprintf(v->what, sizeof v->what, "%s bound", kn[rule->bound]);
  if (r->problem.op->kind != LOWP_OPKIND_SUMPROD && rule->bound != LOWP_BOUND_MODEL &&
      !rule->has_accum && (rule->bound == LOWP_BOUND_GAMMA ? r->gamma.have : r->prob.have)) {
    /* a row operation whose subject declared compute and acc: its bound */
    const lowp_check_bound_t *rb = rule->bound == LOWP_BOUND_GAMMA ? &r->gamma : &r->prob;
    v->bound = *rb;
    v->bound_kind = (int)rule->bound;
    v->where_out = 0;
    v->where = rb->row_where;
    v->vacuous = isinf(rb->value);
    v->measured = rb->used;
    if (v->vacuous && !rule->vacuous_ok) {
      /* vacuous on these inputs, which lowp check could not know before it measured (a sum
         of products' vacuous bound is refused from the spec): a rule that could never fail
         fails closed (fail_closed: an infinite limit), unless it says it accepts that */
      v->vacuous = 0;
      v->limit = INFINITY;
      v->pass = 0;
      snprintf(v->msg, sizeof v->msg, "the %s is vacuous on these inputs: the rule could never "
               "fail (add \"accept_vacuous\": true to keep it)", rb->name);
      return LOWP_OK;
    }
    v->limit = v->vacuous ? INFINITY : rule->limit;
    v->pass = v->vacuous || v->measured <= v->limit;
    set_percent(v);
    snprintf(v->msg, sizeof v->msg, "|c - x| / (atol + rtol |x|) = %.4g %s %g (%s)", v->measured,
             v->pass ? "<=" : ">", rule->limit, rb->name);
    return LOWP_OK;
  }
  if (r->problem.op->kind != LOWP_OPKIND_SUMPROD && rule->bound != LOWP_BOUND_MODEL &&
      !rule->has_accum && s && s->has_compute && s->has_accum) {
    /* a row operation that has a bound (its subject declared compute and acc) but none was
       derived: a NaN or infinity where the exact result has none (or the reverse) is beyond
       every bound (the derivation is not attempted then), else the inputs gave none */
    v->bound_kind = (int)rule->bound;
    v->where_out = 0;
    v->measured = INFINITY;
    v->limit = rule->limit;
    v->pass = 0;
    set_percent(v);
    if (r->out[0].n_class_mismatch) {
      mismatch_msg(v, r, 0, r->out[0].n_class_mismatch, ", beyond any bound");
    } else {
      snprintf(v->msg, sizeof v->msg, "no %s bound of %s could be derived from these inputs",
               kn[rule->bound], r->problem.op->name);
    }
    return LOWP_OK;
  }
  if (r->problem.op->kind != LOWP_OPKIND_SUMPROD) {
    snprintf(v->msg, sizeof v->msg, "a %s bound applies to sums of products (sum, dot, "
             "gemv, gemm), not to %s", kn[rule->bound], r->problem.op->name);
    return LOWP_EUNSUPPORTED;
  }
  mb = lowp_metric_value(r, LOWP_METRIC_MAX_BWD);
  nmis = r->out[0].n_class_mismatch;
  if (nmis && lowp_check_rule_accum(&acc, rule, s) && rule->bound != LOWP_BOUND_MODEL &&
      !mismatches_unexplained(&r->out[0], &r->problem.out, &acc)) {
    nmis = 0; /* every mismatch is the declared rounding's overflow: measured as it rounds */
    mb = r->out[0].err.max_bwd;
  }
  st = lowp_check_rule_bound(&b, rule, &r->problem, s, mb);
  if (st == LOWP_EUNSUPPORTED) return bound_unsupported(v, rule, s);
  if (st) {
    snprintf(v->msg, sizeof v->msg, "bound: %s", lowp_status_str(st));
    return st;
  }
  v->bound = b;
  v->bound_kind = (int)rule->bound;
  v->where_out = 0;
  v->where = nmis ? r->out[0].first_class_mismatch : r->out[0].err.argmax_bwd;
  v->measured = mb;
  if (isinf(b.value)) {
    v->vacuous = 1;
    v->limit = INFINITY;
    v->pass = 1;
    set_percent(v);
    snprintf(v->msg, sizeof v->msg, "backward error %.4g; bound %s is vacuous (no bound "
             "for this length and precision)", mb, b.name);
    return LOWP_OK;
  }
  {
    double q, beta;
    size_t at;
    if (!nmis && split_ratio(&q, &at, &beta, rule, r, s)) {
      v->measured = q;
      v->limit = rule->limit;
      v->where = at;
      v->pass = v->measured <= v->limit;
      set_percent(v);
      out_index(idx, sizeof idx, r, 0, v->where);
      snprintf(v->msg, sizeof v->msg, "backward error %.4g; with the output's rounding apart, "
               "|c - x| / (u_out |x| + (1 + u_out) %.4g |A||B|) = %.4g %s %g at %s (%s)", mb,
               beta, q, v->pass ? "<=" : ">", rule->limit, idx, b.name);
      return LOWP_OK;
    }
  }
  v->limit = rule->limit * b.value;
  v->pass = v->measured <= v->limit;
  set_percent(v);
  out_index(idx, sizeof idx, r, 0, v->where);
  snprintf(v->msg, sizeof v->msg, "backward error %.4g %s %.4g = %g x %s (%.4g) at %s",
           v->measured, v->pass ? "<=" : ">", v->limit, rule->limit, b.name, b.value, idx);
  return LOWP_OK;
}

/* the element of output j that is worst by metric m (ulp: the output's
   worst; abs: largest |got - exact|; rmse/others: the largest |d| too) */
static size_t argmax_metric(const lowp_check_output_t *o, lowp_metric_t m) {
  if (o->n_class_mismatch) return o->first_class_mismatch;
  switch (m) {
  case LOWP_METRIC_MAX_ULP: case LOWP_METRIC_MEAN_ULP: return o->worst;
  case LOWP_METRIC_MAX_REL: return o->err.n ? o->err.argmax_rel : (size_t)-1;
  case LOWP_METRIC_MAX_BWD: return o->err.n ? o->err.argmax_bwd : (size_t)-1;
  default: return o->err.n ? o->err.argmax_abs : (size_t)-1;
  }
}

static void where_metric(lowp_verdict_t *v, const lowp_check_result_t *r, lowp_metric_t m) {
  int j, w = 0;
  double best = -1;
  for (j = 0; j < r->n_out; j++) {
    const lowp_check_output_t *o = &r->out[j];
    double x = o->absent ? -1 : (o->n_class_mismatch ? INFINITY
                                 : m == LOWP_METRIC_MAX_ULP || m == LOWP_METRIC_MEAN_ULP
                                     ? o->err.max_ulp
                                     : m == LOWP_METRIC_MAX_REL ? o->err.max_rel
                                     : m == LOWP_METRIC_MAX_BWD ? o->err.max_bwd
                                                                : o->err.max_abs);
    if (x > best) { best = x; w = j; }
  }
  v->where_out = w;
  v->where = argmax_metric(&r->out[w], m);
}

static int eval_vs_ref(lowp_verdict_t *v, const lowp_rule_t *rule, const lowp_check_result_t *r) {
  double mine, theirs;
  char fl[48] = "";
  const char *mn = lowp_metric_name(rule->metric);
  snprintf(v->what, sizeof v->what, "vs_reference %s", mn ? mn : "?");
  if (!rule->other || rule->other->n_out != r->n_out) {
    snprintf(v->msg, sizeof v->msg, "vs_reference: no result of the reference subject");
    return LOWP_EINVAL;
  }
  mine = lowp_metric_value(r, rule->metric);
  theirs = lowp_metric_value(rule->other, rule->metric);
  v->measured = mine;
  v->limit = rule->limit * theirs + rule->floor;
  where_metric(v, r, rule->metric);
  v->pass = mine <= v->limit;
  set_percent(v);
  if (!isfinite(theirs)) {
    snprintf(v->msg, sizeof v->msg, "%s %.4g; the reference's %s is %g, so %g x it is no limit "
             "(%.*s)", mn ? mn : "?", mine, mn ? mn : "?", theirs, rule->limit, (int)120,
             rule->other->subject);
    return LOWP_OK; /* lowp_check_rule_eval fails it closed */
  }
  if (rule->floor > 0) snprintf(fl, sizeof fl, " + floor %g", rule->floor);
  snprintf(v->msg, sizeof v->msg, "%s %.4g %s %.4g = %g x the reference's %.4g%s (%.*s)",
           mn ? mn : "?", mine, v->pass ? "<=" : ">", v->limit, rule->limit, theirs, fl,
           (int)120, rule->other->subject);
  return LOWP_OK;
}

static int eval_tol(lowp_verdict_t *v, const lowp_rule_t *rule, const lowp_check_result_t *r) {
  double rt = rule->rtol, at = rule->atol, worst = 0;
  size_t n, total;
  char idx[96];
  if (rule->pytorch) lowp_check_pytorch_tol(&rt, &at, &r->problem.out);
  snprintf(v->what, sizeof v->what, rule->pytorch ? "assert_close" : "rtol/atol");
  /* the ratio of the two sides of torch.isclose is reported: it must be <= 1 */
  n = lowp_check_mismatch(r, rt, at, &total, &worst, &v->where_out, &v->where);
  v->measured = worst;
  v->limit = 1;
  v->pass = worst <= 1;
  set_percent(v);
  out_index(idx, sizeof idx, r, v->where_out, v->where);
  snprintf(v->msg, sizeof v->msg, "|d| / (atol + rtol |x|) = %.4g %s 1 (rtol %g, atol %g%s) "
           "at %s; mismatched elements: %zu/%zu (%.3g%%)", worst, v->pass ? "<=" : ">", rt, at,
           rule->pytorch ? ", PyTorch's defaults" : "", idx, n, total,
           total ? 100.0 * (double)n / (double)total : 0.0);
  return LOWP_OK;
}

static int eval_baseline(lowp_verdict_t *v, const lowp_rule_t *rule,
                         const lowp_check_result_t *r) {
  const char *mn = lowp_metric_name(rule->metric);
  snprintf(v->what, sizeof v->what, "baseline %s", mn ? mn : "?");
  if (isnan(rule->baseline)) {
    snprintf(v->msg, sizeof v->msg, "no stored baseline value of %s", mn ? mn : "?");
    return LOWP_EINVAL;
  }
  v->measured = lowp_metric_value(r, rule->metric);
  v->limit = rule->limit * rule->baseline;
  where_metric(v, r, rule->metric);
  v->pass = v->measured <= v->limit;
  set_percent(v);
  snprintf(v->msg, sizeof v->msg, "%s %.4g %s %.4g = %g x baseline %.4g", mn ? mn : "?",
           v->measured, v->pass ? "<=" : ">", v->limit, rule->limit, rule->baseline);
  return LOWP_OK;
}

static int eval_nan_inf(lowp_verdict_t *v, const lowp_check_result_t *r) {
  size_t n = mismatches(r);
  int jj;
  snprintf(v->what, sizeof v->what, "nan_inf");
  for (jj = 0; jj < r->n_out && !r->out[jj].n_class_mismatch; jj++) {}
  v->measured = (double)n;
  v->limit = 0;
  v->pass = n == 0;
  set_percent(v);
  if (n) {
    mismatch_msg(v, r, jj, n, ""); /* the first output that has one */
  } else {
    snprintf(v->msg, sizeof v->msg, "NaN/inf classes agree with the exact result's");
  }
  return LOWP_OK;
}

static int eval_bitexact(lowp_verdict_t *v, const lowp_rule_t *rule,
                         const lowp_check_result_t *r) {
  size_t n = 0, i, first = (size_t)-1;
  int jj, fj = 0;
  char idx[96];
  snprintf(v->what, sizeof v->what, "bitexact");
  if (!rule->other || rule->other->n_out != r->n_out) {
    snprintf(v->msg, sizeof v->msg, "bitexact: no result of the model subject");
    return LOWP_EINVAL;
  }
  for (jj = 0; jj < r->n_out; jj++)
    for (i = 0; !r->out[jj].absent && !rule->other->out[jj].absent && i < r->out[jj].count; i++) {
      double a = r->out[jj].got[i], b = rule->other->out[jj].got[i];
      if (memcmp(&a, &b, sizeof a) != 0 && !(isnan(a) && isnan(b))) {
        if (first == (size_t)-1) { first = i; fj = jj; }
        n++;
      }
    }
  lowp__check_verdict_count(v, n, first, fj);
  if (n) {
    out_index(idx, sizeof idx, r, fj, first);
    snprintf(v->msg, sizeof v->msg, "%zu elements differ from %.*s; first at %s: got %a, "
             "model %a", n, (int)120, rule->other->subject, idx, r->out[fj].got[first],
             rule->other->out[fj].got[first]);
  } else {
    snprintf(v->msg, sizeof v->msg, "bit-equal to %.*s", (int)120, rule->other->subject);
  }
  return LOWP_OK;
}

static int eval_kind(lowp_verdict_t *v, const lowp_rule_t *rule, const lowp_check_result_t *r,
                     const lowp_subject_t *s) {
  switch (rule->kind) {
  case LOWP_RULE_MAX_ULP: return eval_max_ulp(v, rule, r);
  case LOWP_RULE_BOUND: return eval_bound(v, rule, r, s);
  case LOWP_RULE_VS_REF: return eval_vs_ref(v, rule, r);
  case LOWP_RULE_TOL: return eval_tol(v, rule, r);
  case LOWP_RULE_BASELINE: return eval_baseline(v, rule, r);
  case LOWP_RULE_NAN_INF: return eval_nan_inf(v, r);
  case LOWP_RULE_BITEXACT: return eval_bitexact(v, rule, r);
  case LOWP_RULE_SQNR: case LOWP_RULE_COSINE: case LOWP_RULE_MISMATCH:
  case LOWP_RULE_IN_FORMAT:
    return lowp_check_rule_eval_field(v, rule, r);
  case LOWP_RULE_NO_EXC: return lowp_check_rule_eval_fpx(v, rule, r);
  }
  return LOWP_EINVAL;
}

/* Every rule fails closed: a limit that is not a finite number (factor x an
   infinite reference error, a baseline of inf, 0 x inf = NaN) or a measured
   value that is NaN decides nothing, since "x <= inf" holds for every
   output, all-NaN ones included. Only a bound rule's vacuous bound, which
   the caller accepted explicitly ("accept_vacuous"), may pass with an
   infinite limit. */
static void fail_closed(lowp_verdict_t *v) {
  char msg[sizeof v->msg];
  const char *why;
  if (v->vacuous) return;
  if (isnan(v->limit)) why = "the limit is undefined (NaN)";
  else if (isinf(v->limit)) why = "the limit is infinite";
  else if (isnan(v->measured)) why = "the measured value is NaN";
  else return;
  v->pass = 0;
  v->percent = NAN;
  snprintf(msg, sizeof msg, "fails closed: %s (%.*s)", why, 400, v->msg);
  memcpy(v->msg, msg, sizeof msg);
}

/* a rule whose subject, revealed, adds in fewer bits than the rule's accumulator: failed, whatever the
   error (some data cannot show a narrower accumulator: small integers add exactly in fp16) */
static void fail_narrow(lowp_verdict_t *v, const lowp_rule_t *rule) {
  char m[sizeof v->msg];
  size_t u, w = strlen(v->msg);
  int P = rule->accum.acc.precision, add = rule->tree_bits && rule->tree_bits < P,
      prod = rule->tree_prod_bits && rule->tree_prod_bits < P;
  if (!rule->has_tree || (!add && !prod)) return;
  v->pass = 0;
  if (add)
    snprintf(m, sizeof m, "revealed: the kernel adds in %d significand bits, fewer than the declared %s's %d; ",
             rule->tree_bits, rule->accum.acc.name, P);
  else
    snprintf(m, sizeof m, "revealed: the kernel rounds its products to %d significand bits, fewer than the "
             "declared %s's %d; ", rule->tree_prod_bits, rule->accum.acc.name, P);
  u = strlen(m);
  if (w > sizeof m - 1 - u) w = sizeof m - 1 - u;
  memcpy(m + u, v->msg, w);
  m[u + w] = '\0';
  memcpy(v->msg, m, sizeof m);
}

int lowp_check_rule_eval(lowp_verdict_t *v, const lowp_rule_t *rule,
                         const lowp_check_result_t *r, const lowp_subject_t *s) {
  int st;
  if (!v || !rule || !r || !r->problem.op) return LOWP_EINVAL;
  memset(v, 0, sizeof *v);
  v->where = (size_t)-1;
  v->where_out = worst_out(r);
  st = eval_kind(v, rule, r, s);
  if (!st) fail_closed(v);
  if (!st) fail_narrow(v, rule);
  return st;
}


static void minmax(double *lo, double *hi, const double *x, size_t n, size_t stride) {
  size_t i;
  *lo = INFINITY;
  *hi = -INFINITY;
  for (i = 0; i < n; i++) {
    double v = x[i * stride];
    if (v < *lo) *lo = v;
    if (v > *hi) *hi = v;
  }
}

void lowp_check_inputs_summary(char *buf, size_t len, const lowp_problem_t *p,
                               const lowp_check_inputs_t *in, int out_j, size_t i) {
  const lowp_dims_t *d;
  double lo, hi, lo2, hi2;
  if (!buf || !len) return;
  buf[0] = '\0';
  if (!p || !p->op || !in || i == (size_t)-1) return;
  (void)out_j;
  d = &p->dims;
  switch (p->op->id) {
  case LOWP_OP_GEMM: {
    size_t bt = i / (d->m * d->n), rr = (i / d->n) % d->m, cc = i % d->n;
    const double *a = in->x[0] + bt * d->m * d->k + rr * d->k;
    const double *b = in->x[1] + bt * d->k * d->n + cc;
    minmax(&lo, &hi, a, d->k, 1);
    minmax(&lo2, &hi2, b, d->k, d->n);
    snprintf(buf, len, "A row in [%.4g, %.4g], B column in [%.4g, %.4g], k=%zu", lo, hi, lo2,
             hi2, d->k);
    break;
  }
  case LOWP_OP_GEMV: {
    size_t bt = i / d->m, rr = i % d->m;
    minmax(&lo, &hi, in->x[0] + bt * d->m * d->k + rr * d->k, d->k, 1);
    minmax(&lo2, &hi2, in->x[1] + bt * d->k, d->k, 1);
    snprintf(buf, len, "A row in [%.4g, %.4g], x in [%.4g, %.4g], k=%zu", lo, hi, lo2, hi2,
             d->k);
    break;
  }
  case LOWP_OP_DOT:
    minmax(&lo, &hi, in->x[0] + i * d->k, d->k, 1);
    minmax(&lo2, &hi2, in->x[1] + i * d->k, d->k, 1);
    snprintf(buf, len, "x in [%.4g, %.4g], w in [%.4g, %.4g], k=%zu", lo, hi, lo2, hi2, d->k);
    break;
  case LOWP_OP_CAST:
  case LOWP_OP_EXP:
  case LOWP_OP_LOG:
  case LOWP_OP_TANH:
  case LOWP_OP_GELU:
    snprintf(buf, len, "x = %.9g (%a)", in->x[0][i], in->x[0][i]);
    break;
  default: {
    /* row operations: the row of the element */
    size_t row;
    int per_row_out = p->op->id == LOWP_OP_SUM || p->op->id == LOWP_OP_LOGSUMEXP ||
                      p->op->id == LOWP_OP_XENT || (p->op->id == LOWP_OP_LAYERNORM && out_j > 0);
    if (p->op->id == LOWP_OP_XENT && p->reduction_mean) {
      snprintf(buf, len, "%zu rows of %zu logits", d->batch * d->m, d->n);
      break;
    }
    row = per_row_out ? i : i / d->n;
    minmax(&lo, &hi, in->x[0] + row * d->n, d->n, 1);
    if (p->op->id == LOWP_OP_XENT)
      snprintf(buf, len, "row %zu in [%.4g, %.4g], n=%zu, target %.0f", row, lo, hi, d->n,
               in->x[1][row]);
    else
      snprintf(buf, len, "row %zu in [%.4g, %.4g], n=%zu", row, lo, hi, d->n);
    break;
  }
  }
}
