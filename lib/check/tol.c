/* lowp_tol -- tolerances derived from the bounds of lib/check/op.c (lib/check/tol.h) */

#include "check/tol.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "status.h"
#include "io/escape.h"

static double cmp(double a, double b) { return a + b + a * b; } /* (1+a)(1+b) - 1 */

static double unit_of(const lowp_format_t *f, lowp_rounding_t rnd) {
  double u = lowp_format_u(f);
  return (rnd == LOWP_RND_NE || rnd == LOWP_RND_NA) ? u : 2 * u;
}

static int narrower(const lowp_format_t *out, const lowp_format_t *acc) {
  return out->precision < acc->precision || out->emax < acc->emax || out->emin > acc->emin ||
         (!out->subnormals && acc->subnormals);
}

static void fail(char *err, size_t errlen, const char *msg, const char *a) {
  lowp_errf(err, errlen, 0, msg, a);
}

static size_t add(char *buf, size_t len, size_t used, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static size_t add(char *buf, size_t len, size_t used, const char *fmt, ...) {
  va_list ap;
  int n;
  if (used >= len) return used;
  va_start(ap, fmt);
  n = vsnprintf(buf + used, len - used, fmt, ap);
  va_end(ap);
  return n < 0 ? used : used + (size_t)n;
}

/* lowp_op_bound for a problem of operation op, length k, output out */
static int op_bound_at(double *v, char *name, size_t namelen, const lowp_tol_query_t *q,
                       lowp_op_id_t op, double k, const lowp_format_t *out, double prob) {
  lowp_problem_t p;
  lowp_bound_spec_t b;
  memset(&b, 0, sizeof b);
  if (lowp_problem_init(&p, lowp_op_get(op))) return LOWP_EINVAL;
  if (op == LOWP_OP_SUM) p.dims.n = (size_t)k;
  else p.dims.k = (size_t)k;
  p.in[0] = p.in[1] = q->in;
  p.out = *out;
  b.accum = q->accum;
  if (q->has_model && op != LOWP_OP_SUM) {
    b.kind = LOWP_BOUND_MODEL;
    b.model = &q->model;
  } else {
    b.kind = prob > 0 && prob < 1 ? LOWP_BOUND_PROB : LOWP_BOUND_GAMMA;
    b.prob = b.kind == LOWP_BOUND_PROB ? prob : 0;
  }
  /* products of two p-bit numbers hold 2p bits: exact in an accumulator of
     at least 2p bits (fp16 x fp16 in fp32), else rounded to it unless a
     fused multiply-add takes them (lib/model/accum.h) */
  if (op == LOWP_OP_SUM || 2 * q->in.precision <= q->accum.acc.precision) b.accum.fma = 1;
  return lowp_op_bound(v, name, namelen, &p, &b);
}

/* op_bound_at made monotone in k: a tolerance for k must not be tighter
   than one for a shorter reduction. Every order's bound grows with k except
   splitk:S's, whose slices are ceil(k / S) long: at k = jS + 1 the slices
   grow by one and their number falls from S to ceil(k / (j + 1)), so the
   exact bound of the algorithm drops (gamma_64 at k = 64, gamma_33 at k = 65
   for splitk:64). Within one slice length the bound grows with k, so the
   largest bound over k' <= k is the larger of k's and that of k0 = jS, the
   last k of the shorter slices. */
static int op_bound(double *v, char *name, size_t namelen, const lowp_tol_query_t *q,
                    lowp_op_id_t op, double k, const lowp_format_t *out, double prob) {
  double w, k0, v0;
  char n0[200];
  int st = op_bound_at(v, name, namelen, q, op, k, out, prob);
  if (st || q->has_model || q->accum.order != LOWP_ACC_SPLITK || q->accum.block == 0) return st;
  w = ceil(k / (double)q->accum.block);
  k0 = (w - 1) * (double)q->accum.block;
  if (k0 < 1) return st;
  st = op_bound_at(&v0, n0, sizeof n0, q, op, k0, out, prob);
  if (!st && v0 > *v) {
    *v = v0;
    if (name && namelen)
      snprintf(name, namelen, "%.140s: the bound at k = %.0f, larger (monotone in k)", n0, k0);
  }
  return st;
}

/* ------------------------------------------------ the probability (issue 31) */

/* half the smallest subnormal spacing of f, 2^(emin - p): the absolute
   rounding error below its normal range (2^emin when it flushes) */
static double half_sub(const lowp_format_t *f) {
  return f->subnormals ? ldexp(1.0, f->emin - f->precision) : ldexp(1.0, f->emin);
}

/* The probability per element of Higham & Mary's bound (SISC 41(5) 2019,
   Thm 2.4/3.1: |theta_r| <= lambda sqrt(r) u + O(u^2) except with
   probability 2 r exp(-lambda^2 (1 - u)^2 / 2) per sum of r terms), or 0
   for the worst case with t->not_prob saying why. By default the test's
   false-failure probability is stated (risk, 1e-6) and spread over its
   numel outputs by a union bound: P = 1 - risk / numel per element (the
   union over the terms of each sum is inside lowp_bound_prob_lambda). The
   model needs independent mean-zero errors: round to nearest, no
   stagnation (|x_k| < u |s_k|: s + x_k rounds back to s, an error that is
   -x_k, determined by the data) and no bias from same-sign sums whose
   partial sums grow like k. Without the data (data_checked 0) lowp
   refuses it where k u_acc >= 1/16: a term 1/16 of the mean |term| can
   then stagnate against a partial sum of k same-sign terms.
   lowp_tol_data checks the data instead (tol_data.c). */
static double choose_prob(lowp_tol_t *t, const lowp_tol_query_t *q, double k) {
  double numel = q->numel > 0 ? q->numel : LOWP_TOL_NUMEL;
  double risk = q->risk > 0 ? q->risk : LOWP_TOL_RISK, ua, P;
  t->numel = numel;
  t->probabilistic = 0;
  t->confidence = t->risk = 0;
  t->not_prob[0] = '\0';
  ua = unit_of(&q->accum.acc, q->accum.rnd);
  if (q->worst)
    snprintf(t->not_prob, sizeof t->not_prob, "the worst case was asked for");
  else if (q->has_bsmodel)
    snprintf(t->not_prob, sizeof t->not_prob, "the block-scaled model's bound is a worst case");
  else if (q->has_model && q->op->kind == LOWP_OPKIND_SUMPROD && q->op->id != LOWP_OP_SUM)
    snprintf(t->not_prob, sizeof t->not_prob, "the tensor-core model's bound is a worst case");
  else if (q->accum.order == LOWP_ACC_KAHAN)
    snprintf(t->not_prob, sizeof t->not_prob, "compensated summation has no probabilistic "
             "bound in lowp");
  else if (q->accum.rnd != LOWP_RND_NE && q->accum.rnd != LOWP_RND_NA)
    snprintf(t->not_prob, sizeof t->not_prob, "directed rounding: every error has the same "
             "sign (biased), and Higham & Mary's model needs mean-zero errors (round to "
             "nearest)");
  else if (!q->data_checked && k * ua >= 1.0 / 16)
    snprintf(t->not_prob, sizeof t->not_prob, "k u_acc = %.3g >= 1/16 in %s: terms can "
             "stagnate (|x_k| < u |s_k|: the sum does not move, the error is -x_k) and sums "
             "of same-sign terms make the rounding errors biased, not independent as the "
             "probabilistic model assumes (give the inputs to check this on the data)",
             k * ua, q->accum.acc.name ? q->accum.acc.name : "the accumulator");
  if (t->not_prob[0]) return 0;
  P = q->confidence > 0 && q->confidence < 1 ? q->confidence : 1 - risk / numel;
  if (!(P > 0 && P < 1)) {
    snprintf(t->not_prob, sizeof t->not_prob, "risk %g over %g outputs leaves no "
             "probability per element", risk, numel);
    return 0;
  }
  t->probabilistic = 1;
  t->confidence = P;
  t->risk = q->confidence > 0 && q->confidence < 1 ? numel * (1 - P) : risk;
  return P;
}

/* the risk statement appended to the derivation */
static size_t add_risk(lowp_tol_t *t, size_t w) {
  if (t->probabilistic)
    return add(t->why, sizeof t->why, w, "; probabilistic (Higham & Mary, SISC 41(5) 2019, "
               "Thm 2.4/3.1, errors independent and mean-zero): P >= 1 - %.3g per element, so "
               "over %.6g outputs (union bound) an honest kernel fails this test with "
               "probability <= %.3g", 1 - t->confidence, t->numel, t->risk);
  return add(t->why, sizeof t->why, w, "; worst case (never fails an honest kernel): %s",
             t->not_prob);
}

/* The block-scaled MMA model's bound (model/bsmma.h), worst case, on
   |c - x| / sum |a_i b_i| of the dequantized operands. One instruction cuts
   n_t terms (K products, or K/g group sums, and c) below 2^(X - F),
   truncating each by less than 2^(X - F); the term that sets X is at least
   2^(X - w) (w = (pa - 1) + (pb - 1) + 2 (ps - 1) for products whose
   elements or scales may be subnormal; 2 (ps - 1) for exact group sums),
   so the cut loses less than n_t 2^(w - F) of the sum of the magnitudes;
   the rounding toward zero to fp32 adds 2^-23 relative. Chained through c
   over N = ceil(k / K) instructions (the first from c = 0), the recursive-
   summation argument (Higham 2002, Lemma 3.1) gives
   ((1 + d)^N - 1) <= N d / (1 - N d), d = n_t 2^(w - F) (1 + 2^-23) + 2^-23.
   zero = emin has no such bound: an all-zero block under a large scale
   sets X with no magnitude behind it. c is assumed normal or zero. */
static int bs_model_bound(double *b, char *name, size_t namelen, const lowp_tol_query_t *q, char *err,
                          size_t errlen) {
  const lowp_bsmma_t *m = &q->bsmodel;
  int pa = q->bs.elem.precision, ps = q->bs.scale.precision;
  double nt = m->group ? (double)(m->K / m->group) + 1 : (double)m->K + 1;
  int w = m->group ? 2 * (ps - 1) : 2 * (pa - 1) + 2 * (ps - 1);
  double d = nt * ldexp(1.0, w - m->F) * (1 + 0x1p-23) + 0x1p-23;
  double N = ceil((double)q->k / m->K);
  if (m->zero == LOWP_BSZ_EMIN) {
    fail(err, errlen, "%s", "the block-scaled model with zero=emin has no bound: an all-zero block "
         "under a large scale moves the alignment with nothing to bound it by");
    return LOWP_EUNSUPPORTED;
  }
  *b = N * d >= 1 ? INFINITY : N * d / (1 - N * d);
  snprintf(name, namelen, "N d / (1 - N d), N = %.0f instructions, d = %.0f x 2^(%d - %d) + 2^-23", N, nt, w,
           m->F);
  if (q->bs.tensor_scale && isfinite(*b)) {
    /* the per-tensor scales in the epilogue: alpha = fl32(tA tB), D =
       fl32(alpha acc): two roundings to nearest, (1 + b)(1 + 2^-24)^2 - 1 */
    *b = (1 + *b) * (1 + 0x1p-24) * (1 + 0x1p-24) - 1;
    snprintf(name + strlen(name), namelen - strlen(name), ", then (1 + .)(1 + 2^-24)^2 - 1 for the epilogue's "
             "alpha = fl32(tA tB), fl32(alpha acc)");
  }
  return LOWP_OK;
}

static int tol_sumprod(lowp_tol_t *t, const lowp_tol_query_t *q, double scale, char *err,
                       size_t errlen) {
  double k = (double)q->k, uo = 0, s, P;
  size_t w = 0;
  int st;
  int sum = q->op->id == LOWP_OP_SUM;
  if (q->has_bsmodel) {
    if (q->confidence > 0 && q->confidence < 1) {
      fail(err, errlen, "%s", "the block-scaled model's bound is a worst case: no confidence");
      return LOWP_EUNSUPPORTED;
    }
    if (sum || !q->has_bs) {
      fail(err, errlen, "%s", "the block-scaled model takes products of block-scaled inputs (--input mxfp8_e4m3 ...)");
      return LOWP_EUNSUPPORTED;
    }
    (void)choose_prob(t, q, k); /* a worst case: numel kept, risk 0, the reason stated */
    if ((st = bs_model_bound(&t->bound, t->bound_name, sizeof t->bound_name, q, err, errlen))) return st;
    t->bound_acc = t->bound;
    s = k * scale;
    t->vacuous = isinf(t->bound) || t->bound >= 1;
    t->rtol = t->vacuous ? INFINITY : 0;
    t->atol = t->vacuous ? INFINITY : t->bound * s;
    t->rtol_same_sign = t->vacuous ? INFINITY : t->bound;
    (void)add(t->why, sizeof t->why, 0, "the block-scaled MMA model (lib/model/bsmma.h: K=%d, group=%d, F=%d, "
              "truncation, rtz to fp32) bounds |c - x| / sum |a_i b_i| of the dequantized %s operands by %.4g = "
              "%s (per instruction the cut terms lose < n_t 2^(w - F) of the sum of magnitudes, the rtz output "
              "2^-23; chained as recursive summation, Higham 2002 Lemma 3.1); sum |a_i b_i| <= k scale = %.6g x "
              "%.6g: rtol = %.4g, atol = %.4g.", q->bsmodel.K, q->bsmodel.group, q->bsmodel.F, q->bs.name, t->bound,
              t->bound_name, k, scale, t->rtol, t->atol);
    return LOWP_OK;
  }
  if (q->has_model && q->confidence > 0 && q->confidence < 1) {
    fail(err, errlen, "%s", "the tensor-core model's bound is a worst case: no confidence");
    return LOWP_EUNSUPPORTED;
  }
  P = choose_prob(t, q, k);
  if (q->has_model) {
    st = op_bound(&t->bound, t->bound_name, sizeof t->bound_name, q, q->op->id, k, &q->out, 0);
    if (st) return st;
    t->bound_acc = t->bound;
  } else {
    st = op_bound(&t->bound_acc, t->bound_name, sizeof t->bound_name, q, q->op->id, k,
                  &q->accum.acc, P);
    if (st) return st;
    if (narrower(&q->out, &q->accum.acc)) uo = unit_of(&q->out, LOWP_RND_NE);
    t->bound = isinf(t->bound_acc) ? INFINITY : cmp(uo, t->bound_acc);
  }
  s = k * scale;
  /* below the normal range rounding is absolute: the output's half
     subnormal spacing, and k of the accumulator's for products that
     underflow it (additions there are exact: Hauser, ACM TOPLAS 18(2) 1996) */
  t->atol_floor = half_sub(&q->out) + (sum ? 0 : k * half_sub(&q->accum.acc));
  t->vacuous = isinf(t->bound) || t->bound >= 1;
  t->beta = t->vacuous ? INFINITY : (1 + uo) * t->bound_acc;
  t->rtol = t->vacuous ? INFINITY : uo;
  t->atol = t->vacuous ? INFINITY : t->beta * s + t->atol_floor;
  t->rtol_same_sign = t->vacuous ? INFINITY : t->bound;
  w = add(t->why, sizeof t->why, w, "the accumulation's componentwise bound is %.4g = %s on "
          "|c - x| / sum |%s|", t->bound_acc, t->bound_name, sum ? "x_i" : "a_i b_i");
  if (q->has_model)
    w = add(t->why, sizeof t->why, w, " (block-FMA analysis of Blanchard, Higham, Lopez, Mary "
            "& Pranesh, SISC 2020, for lowp's tensor-core model; it includes the output "
            "rounding)");
  else if (!t->probabilistic)
    w = add(t->why, sizeof t->why, w, " (Higham 2002, Lemma 3.1, eqs. 3.5/4.6)");
  w = add_risk(t, w);
  if (uo > 0)
    w = add(t->why, sizeof t->why, w, "; the result is rounded once to the narrower output "
            "(u_out = %.4g): |c - x| <= u_out |x| + (1 + u_out) bound sum|a b|", uo);
  w = add(t->why, sizeof t->why, w, "; sum |%s| <= k scale = %.6g x %.6g (scale bounds |%s|; "
          "give the inputs for each element's own sum); atol adds %.3g for rounding below the "
          "normal range", sum ? "x_i" : "a_i b_i", k, scale, sum ? "x_i" : "a_i b_i",
          t->atol_floor);
  if (t->vacuous)
    (void)add(t->why, sizeof t->why, w, ": the bound is vacuous (k u >= 1 or the bound "
              "reaches 1), no tolerance can be derived");
  else
    (void)add(t->why, sizeof t->why, w, ": rtol = %.4g, atol = %.4g; without cancellation "
              "(all products of one sign) |c - x| <= %.4g |x|.", t->rtol, t->atol, t->bound);
  return LOWP_OK;
}

/* relative error of a sum of n positive terms in the accumulation format:
   the componentwise backward bound of the query's order is a relative
   forward bound when no term is negative */
static int sum_rel(double *b, const lowp_tol_query_t *q, double n, double prob) {
  lowp_tol_query_t qq = *q;
  char nm[200];
  qq.has_model = 0;
  return op_bound(b, nm, sizeof nm, &qq, LOWP_OP_SUM, n, &q->accum.acc, prob);
}

static int tol_rowop(lowp_tol_t *t, const lowp_tol_query_t *q, double scale, char *err,
                     size_t errlen);

static int tol_derive(lowp_tol_t *t, const lowp_tol_query_t *q, char *err, size_t errlen) {
  double scale;
  if (err && errlen) err[0] = '\0';
  if (!t || !q || !q->op) return LOWP_EINVAL;
  memset(t, 0, sizeof *t);
  if (q->k == 0) {
    fail(err, errlen, "%s", "k must be at least 1");
    return LOWP_EINVAL;
  }
  scale = q->scale > 0 ? q->scale : 1;
  /* a confidence asked for explicitly where no probabilistic bound exists
     is refused (lowp_tol says why); by default such methods get the worst
     case with the reason (choose_prob) */
  if (q->confidence > 0 && q->confidence < 1 && !q->has_model &&
      (q->accum.order == LOWP_ACC_KAHAN ||
       (q->accum.rnd != LOWP_RND_NE && q->accum.rnd != LOWP_RND_NA)))
    return LOWP_EUNSUPPORTED;
  if (q->op->kind == LOWP_OPKIND_SUMPROD) return tol_sumprod(t, q, scale, err, errlen);
  return tol_rowop(t, q, scale, err, errlen);
}

/* ------------------------------------------------------------ row operations */

/* exp and log within 2 ulps of the compute format (CUDA C Programming
   Guide, Mathematical Functions: expf, logf 2 ulps maximum; glibc's are
   within 1): relative error 2 ulps <= 4 u */
#define FN_ULPS 4

/* Row operations with two formats (issue 31): the compute format F (u_c)
   rounds every per-element operation (x - max, exp, log, the division by
   the sum, squares, x - mean, the scaling) and the statistics' own
   operations (division by n, + eps, sqrt, 1/x: u_m = max(u_c, u_acc),
   whichever format a kernel uses for them); the accumulator A (u_acc)
   only the row sum, whose relative bound bs is that of a sum of n
   positive terms in A (recursive, pairwise or blocked; probabilistic
   where choose_prob allows it). exp underflowing in F is absolute: n
   half-spacings of F in the sum (>= 1 after the max subtraction) and one
   in each output. */
/* The row sum's probabilistic bound *bs on one row's data (lowp_tol_data:
   q->row_stag, q->row_rep2), as data_sumprod does for sums of products
   (tol_data.c): terms below u_acc S can stagnate, an error of up to the
   term itself fixed by the data, so they are added as a worst case; groups
   of r_g equal terms make the same rounding error at each step (the sum in
   one binade) and are bounded as one each, the groups independent: the
   exponent of gamma~ grows by sqrt(sum r_g^2 / n). Where the stagnating
   terms exceed half the probabilistic budget, or the grown bound reaches
   the worst case, the row gets the worst case (gamma of the order), and
   t says why. An honest recursive fp32 softmax of one logit 0 and 65535
   logits near -17 (each term below u_acc S) failed the probabilistic
   tolerance 20 times over; of one 0 and 65535 times -5 (equal terms), 4.9
   times. */
static int row_sum_data(double *bs, lowp_tol_t *t, const lowp_tol_query_t *q, double n) {
  double b = *bs, bw;
  int st = sum_rel(&bw, q, n, 0);
  if (st) return st;
  if (q->row_rep2 > 1) b = expm1(sqrt(q->row_rep2) * log1p(b));
  if (!(q->row_stag <= 0.5 * b) || !(b + q->row_stag < bw)) {
    *bs = bw;
    t->probabilistic = 0;
    t->confidence = t->risk = 0;
    snprintf(t->not_prob, sizeof t->not_prob, "on this row the rounding errors of the sum "
             "need not be independent: terms below u_acc S (they can stagnate) add up to %.3g "
             "of S, and groups of equal terms (sum r_g^2 / n = %.4g) add their errors "
             "coherently, which takes the probabilistic bound past half the stagnating terms "
             "or to the worst case", q->row_stag, q->row_rep2 > 1 ? q->row_rep2 : 1);
    return LOWP_OK;
  }
  *bs = b + q->row_stag;
  return LOWP_OK;
}

static int tol_rowop(lowp_tol_t *t, const lowp_tol_query_t *q, double scale, char *err,
                     size_t errlen) {
  double n = (double)q->k, ua = unit_of(&q->accum.acc, q->accum.rnd), uo = 0, bs, eta_e,
         eta_s, labs_s, uc, um, P, fsub;
  const lowp_format_t *F = q->has_compute ? &q->compute : &q->in;
  size_t w = 0;
  int st;
  lowp_op_id_t id = q->op->id;
  if (id != LOWP_OP_SOFTMAX && id != LOWP_OP_LOGSOFTMAX && id != LOWP_OP_LOGSUMEXP &&
      id != LOWP_OP_RMSNORM && id != LOWP_OP_LAYERNORM && id != LOWP_OP_XENT) {
    fail(err, errlen, "no tolerance derivation for '%s' (sum, dot, gemv, gemm, softmax, "
         "logsoftmax, logsumexp, xent, rmsnorm, layernorm)", q->op->name);
    return LOWP_EUNSUPPORTED;
  }
  uc = unit_of(F, q->accum.rnd);
  um = uc > ua ? uc : ua;
  fsub = half_sub(F);
  if (narrower(&q->out, F)) uo = unit_of(&q->out, LOWP_RND_NE);
  P = choose_prob(t, q, n);
  st = sum_rel(&bs, q, n, P);
  if (st) {
    fail(err, errlen, "%s", "no bound for the row sum with this order and confidence");
    return st;
  }
  if (t->probabilistic && (q->row_rep2 > 1 || q->row_stag > 0) &&
      (st = row_sum_data(&bs, t, q, n))) {
    fail(err, errlen, "%s", "no worst-case bound for the row sum with this order");
    return st;
  }
  snprintf(t->bound_name, sizeof t->bound_name, "row sum of %.0f positive terms: %.4g", n, bs);
  t->bound_acc = bs;
  if (isinf(bs)) {
    t->vacuous = 1;
    t->rtol = t->atol = t->bound = t->rtol_same_sign = INFINITY;
    snprintf(t->why, sizeof t->why, "the row sum of %.0f terms in %s has no bound (n u >= 1): "
             "no tolerance can be derived", n, q->accum.acc.name ? q->accum.acc.name : "acc");
    return LOWP_OK;
  }
  w = add(t->why, sizeof t->why, w, "row of n = %.0f computed in %s (u_c = %.4g), summed in %s "
          "(u_acc = %.4g), output u_out = %.4g%s; a sum of positive terms is within %.4g "
          "relative (%s)", n, F->name ? F->name : "compute", uc,
          q->accum.acc.name ? q->accum.acc.name : "acc", ua, uo,
          uo > 0 ? "" : " (the output holds the compute format's values)", bs, t->bound_name);
  w = add_risk(t, w);
  /* exp(x_i - max): the subtraction's rounding, |x_i - max| u_c <= 2 scale
     u_c in the exponent, and exp itself in F */
  eta_e = cmp(expm1(2 * scale * uc), FN_ULPS * uc);
  eta_s = cmp(cmp(eta_e, bs), n * fsub);
  labs_s = -log1p(-eta_s) + FN_ULPS * uc * log(n > 1 ? n : 2);
  t->atol = 0;
  switch (id) {
  case LOWP_OP_SOFTMAX:
    t->rtol = cmp(cmp(cmp(eta_e, uc), uo), eta_s / (1 - eta_s));
    t->atol = fsub * (1 + t->rtol);
    (void)add(t->why, sizeof t->why, w, "; y = exp(x - max) / sum: each exp within %.4g (the "
              "subtraction's rounding with |x| <= scale = %g, exp within 2 ulps of F), the "
              "sum within %.4g, one division in F, one output rounding: rtol = %.4g (atol: "
              "exp underflowing in F).", eta_e, scale, eta_s, t->rtol);
    break;
  case LOWP_OP_LOGSUMEXP:
    t->rtol = cmp(uc, uo);
    t->atol = labs_s;
    (void)add(t->why, sizeof t->why, w, "; y = max + log(sum): the log of a sum within %.4g "
              "relative is within that much absolutely, log within 2 ulps of F of |log sum| "
              "<= log n; the final addition in F and the output rounding are relative: rtol = "
              "%.4g, atol = %.4g.", eta_s, t->rtol, t->atol);
    break;
  case LOWP_OP_LOGSOFTMAX: case LOWP_OP_XENT:
    t->rtol = cmp(uc, uo);
    t->atol = labs_s + 2 * scale * uc;
    if (id == LOWP_OP_XENT) t->atol += (scale + log(n > 1 ? n : 2)) * uc; /* lse rounded to F */
    (void)add(t->why, sizeof t->why, w, "; y = (x - max) - log(sum) (xent: logsumexp - "
              "x_target, logsumexp rounded to F): the subtraction within 2 scale u_c, log(sum) "
              "within %.4g absolutely, the last subtraction and the output rounding relative: "
              "rtol = %.4g, atol = %.4g%s.", labs_s, t->rtol, t->atol,
              id == LOWP_OP_XENT ? " (reduction none; a mean adds the row sum's relative "
              "bound)" : "");
    break;
  default: {
    /* rmsnorm: y = x / sqrt(sum(x^2)/n + eps); layernorm: d = x - mean,
       y = d / sqrt(sum(d^2)/n + eps), scale bounds |d| / std */
    double eta_ms = cmp(cmp(uc, bs), um), eta_r, eta_mu = 0;
    if (id == LOWP_OP_LAYERNORM) {
      /* the mean: a sum of the x_i, within bs sum |x_i| (componentwise), then
         divided by n: |delta mean| <= (bs + u) mean |x_i|, carried into y
         divided by sqrt(var + eps); scale bounds mean |x_i| / sqrt(var + eps)
         (1 for rows of mean 0: mean |x_i| <= sqrt(mean x_i^2) = std) */
      eta_mu = cmp(bs, um) * scale;
      eta_ms = cmp(cmp(cmp(expm1(3 * log1p(uc)), bs), um), eta_mu * eta_mu);
    }
    eta_r = cmp(cmp(cmp(eta_ms / (2 * (1 - eta_ms)), um), um), um); /* half, +eps, sqrt, 1/x */
    t->rtol = cmp(cmp(eta_r, uc), uo);
    if (id == LOWP_OP_LAYERNORM) t->rtol = cmp(t->rtol, uc); /* d = F(x - mean) */
    t->atol = id == LOWP_OP_LAYERNORM ? eta_mu * (1 + t->rtol) : 0;
    (void)add(t->why, sizeof t->why, w, "; the mean square within %.4g relative (squares in "
              "F, sum in A, division by n), its inverse square root within %.4g (half of it, "
              "+ eps, the sqrt and division roundings); the product in F and the output "
              "rounding: rtol = %.4g, atol = %.4g%s.", eta_ms, eta_r, t->rtol, t->atol,
              id == LOWP_OP_LAYERNORM ? " (the mean, a sum of the x_i divided by n, within "
              "(row-sum bound + u) mean |x_i|, carried into y over sqrt(var + eps), gives atol; "
              "scale bounds mean |x_i| / sqrt(var + eps), 1 for rows of mean 0; output y only)"
              : "");
    break;
  }
  }
  /* below the output's normal range its rounding error is absolute: half
     its smallest subnormal spacing, 2^(emin - p) (0 without subnormals:
     a flush to zero loses up to 2^emin) */
  t->atol_floor = half_sub(&q->out);
  t->atol += t->atol_floor;
  t->bound = t->rtol;
  t->rtol_same_sign = t->rtol;
  if (!(t->rtol < 1)) {
    t->vacuous = 1;
    t->rtol = t->atol = INFINITY;
    w = strlen(t->why);
    (void)add(t->why, sizeof t->why, w, " The relative bound reaches 1: vacuous, no tolerance "
              "can be derived.");
  }
  return LOWP_OK;
}

/* ------------------------------------------------ every result, one check */

/* The one place every tolerance lowp prints or returns passes through: rtol,
   atol, bound, bound_acc and rtol_same_sign are finite and non-negative, or
   the result is vacuous (all +inf). A derivation that breaks down (a
   first-order term past 1 gives a negative "tolerance"; a scale near the
   largest double gives atol = inf; NaN from inf - inf) says so instead of
   printing nonsense. Vacuity is also monotone in k: every bound lowp_tol
   uses grows with k, and k' > k with k vacuous is vacuous too, because the
   tests below only ever turn a result vacuous. */
static int tol_sane(double x) { return isfinite(x) && x >= 0; }

static void tol_finish(lowp_tol_t *t) {
  const char *what = NULL;
  size_t w;
  if (t->vacuous) {
    t->rtol = t->atol = t->bound = t->rtol_same_sign = INFINITY;
    if (!(t->bound_acc >= 0)) t->bound_acc = INFINITY;
    return;
  }
  if (!tol_sane(t->rtol)) what = "rtol";
  else if (!tol_sane(t->atol)) what = "atol";
  else if (!tol_sane(t->bound)) what = "the bound";
  else if (!tol_sane(t->bound_acc)) what = "the accumulation's bound";
  else if (!tol_sane(t->rtol_same_sign)) what = "the same-sign bound";
  if (!what) return;
  /* the derivation's first clause (what is summed, in which format) stays;
     its later numbers are not results */
  w = strcspn(t->why, ";");
  t->why[w] = '\0';
  (void)add(t->why, sizeof t->why, w, "; the derivation breaks down here: %s is not a finite "
            "number >= 0 (%s), so the bound is vacuous and no tolerance can be derived.", what,
            isinf(t->atol) && t->atol > 0 && tol_sane(t->rtol)
                ? "the scale times k exceeds binary64's range"
                : "a first-order error term reached 1: the errors are not small");
  t->vacuous = 1;
  t->rtol = t->atol = t->bound = t->rtol_same_sign = INFINITY;
  if (!(t->bound_acc >= 0)) t->bound_acc = INFINITY;
}

int lowp_tol(lowp_tol_t *t, const lowp_tol_query_t *q, char *err, size_t errlen) {
  int st = tol_derive(t, q, err, errlen);
  if (st == LOWP_EUNSUPPORTED && err && errlen && !err[0])
    lowp_errf(err, errlen, 0, "no %s bound for this method: a probabilistic bound needs round to "
              "nearest and a non-compensated order (recursive, pairwise, blocked:B, splitk:S); "
              "kahan and directed roundings have a worst case only (drop the confidence)",
              q && q->confidence > 0 && q->confidence < 1 ? "probabilistic" : "derived");
  if (!st) tol_finish(t);
  return st;
}
