/* lowp_tol -- tolerances derived from the bounds of lib/check/op.c (lib/check/tol.h) */

#include "check/tol.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "status.h"

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
  if (err && errlen) snprintf(err, errlen, msg, a);
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
static int op_bound(double *v, char *name, size_t namelen, const lowp_tol_query_t *q,
                    lowp_op_id_t op, double k, const lowp_format_t *out) {
  lowp_problem_t p;
  lowp_bound_spec_t b;
  memset(&p, 0, sizeof p);
  memset(&b, 0, sizeof b);
  p.op = lowp_op_get(op);
  p.dims.batch = p.dims.m = p.dims.n = p.dims.k = 1;
  if (op == LOWP_OP_SUM) p.dims.n = (size_t)k;
  else p.dims.k = (size_t)k;
  p.in[0] = p.in[1] = q->in;
  p.out = *out;
  b.accum = q->accum;
  if (q->has_model && op != LOWP_OP_SUM) {
    b.kind = LOWP_BOUND_MODEL;
    b.model = &q->model;
  } else {
    b.kind = q->confidence > 0 && q->confidence < 1 ? LOWP_BOUND_PROB : LOWP_BOUND_GAMMA;
    b.prob = b.kind == LOWP_BOUND_PROB ? q->confidence : 0;
  }
  /* products of two p-bit numbers hold 2p bits: exact in an accumulator of
     at least 2p bits (fp16 x fp16 in fp32), else rounded to it unless a
     fused multiply-add takes them (lib/model/accum.h) */
  if (op == LOWP_OP_SUM || 2 * q->in.precision <= q->accum.acc.precision) b.accum.fma = 1;
  return lowp_op_bound(v, name, namelen, &p, &b);
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
  return LOWP_OK;
}

static int tol_sumprod(lowp_tol_t *t, const lowp_tol_query_t *q, double scale, char *err,
                       size_t errlen) {
  double k = (double)q->k, uo = 0, s;
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
  if (q->has_model) {
    st = op_bound(&t->bound, t->bound_name, sizeof t->bound_name, q, q->op->id, k, &q->out);
    if (st) return st;
    t->bound_acc = t->bound;
  } else {
    st = op_bound(&t->bound_acc, t->bound_name, sizeof t->bound_name, q, q->op->id, k,
                  &q->accum.acc);
    if (st) return st;
    if (narrower(&q->out, &q->accum.acc)) uo = unit_of(&q->out, LOWP_RND_NE);
    t->bound = isinf(t->bound_acc) ? INFINITY : cmp(uo, t->bound_acc);
  }
  s = k * scale;
  t->vacuous = isinf(t->bound) || t->bound >= 1;
  t->rtol = t->vacuous ? INFINITY : uo;
  t->atol = t->vacuous ? INFINITY : (1 + uo) * t->bound_acc * s;
  t->rtol_same_sign = t->vacuous ? INFINITY : t->bound;
  w = add(t->why, sizeof t->why, w, "the accumulation's componentwise bound is %.4g = %s on "
          "|c - x| / sum |%s|", t->bound_acc, t->bound_name, sum ? "x_i" : "a_i b_i");
  if (q->has_model)
    w = add(t->why, sizeof t->why, w, " (block-FMA analysis of Blanchard, Higham, Lopez, Mary "
            "& Pranesh, SISC 2020, for lowp's tensor-core model; it includes the output "
            "rounding)");
  else if (q->confidence > 0 && q->confidence < 1)
    w = add(t->why, sizeof t->why, w, " (Higham & Mary, SISC 41(5) 2019, Thm 2.4/3.1: holds "
            "with probability >= %.6g per element if the rounding errors are independent and "
            "mean-zero)", q->confidence);
  else
    w = add(t->why, sizeof t->why, w, " (worst case: Higham 2002, Lemma 3.1, eqs. 3.5/4.6)");
  if (uo > 0)
    w = add(t->why, sizeof t->why, w, "; the result is rounded once to the narrower output "
            "(u_out = %.4g): |c - x| <= u_out |x| + (1 + u_out) bound sum|a b|", uo);
  w = add(t->why, sizeof t->why, w, "; sum |%s| <= k scale = %.6g x %.6g (scale bounds |%s|)",
          sum ? "x_i" : "a_i b_i", k, scale, sum ? "x_i" : "a_i b_i");
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
static int sum_rel(double *b, const lowp_tol_query_t *q, double n) {
  lowp_tol_query_t qq = *q;
  char nm[200];
  qq.has_model = 0;
  return op_bound(b, nm, sizeof nm, &qq, LOWP_OP_SUM, n, &q->accum.acc);
}

static int tol_rowop(lowp_tol_t *t, const lowp_tol_query_t *q, double scale, char *err,
                     size_t errlen);

int lowp_tol(lowp_tol_t *t, const lowp_tol_query_t *q, char *err, size_t errlen) {
  double scale;
  if (err && errlen) err[0] = '\0';
  if (!t || !q || !q->op) return LOWP_EINVAL;
  memset(t, 0, sizeof *t);
  if (q->k == 0) {
    fail(err, errlen, "%s", "k must be at least 1");
    return LOWP_EINVAL;
  }
  scale = q->scale > 0 ? q->scale : 1;
  if (q->op->kind == LOWP_OPKIND_SUMPROD) return tol_sumprod(t, q, scale, err, errlen);
  return tol_rowop(t, q, scale, err, errlen);
}

/* ------------------------------------------------------------ row operations */

/* exp and log within 2 ulps of the accumulation format (CUDA C Programming
   Guide, Mathematical Functions: expf, logf 2 ulps maximum; glibc's are
   within 1): relative error 2 ulps <= 4 u */
#define FN_ULPS 4

static int tol_rowop(lowp_tol_t *t, const lowp_tol_query_t *q, double scale, char *err,
                     size_t errlen) {
  double n = (double)q->k, ua = unit_of(&q->accum.acc, q->accum.rnd), uo = 0, bs, eta_e,
         eta_s, labs_s;
  size_t w = 0;
  int st;
  lowp_op_id_t id = q->op->id;
  if (id != LOWP_OP_SOFTMAX && id != LOWP_OP_LOGSOFTMAX && id != LOWP_OP_LOGSUMEXP &&
      id != LOWP_OP_RMSNORM && id != LOWP_OP_LAYERNORM && id != LOWP_OP_XENT) {
    fail(err, errlen, "no tolerance derivation for '%s' (sum, dot, gemv, gemm, softmax, "
         "logsoftmax, logsumexp, xent, rmsnorm, layernorm)", q->op->name);
    return LOWP_EUNSUPPORTED;
  }
  if (narrower(&q->out, &q->accum.acc)) uo = unit_of(&q->out, LOWP_RND_NE);
  st = sum_rel(&bs, q, n);
  if (st) {
    fail(err, errlen, "%s", "no bound for the row sum with this order and confidence");
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
  w = add(t->why, sizeof t->why, w, "row of n = %.0f in %s (u_acc = %.4g, u_out = %.4g%s); "
          "a sum of positive terms is within %.4g relative (%s)", n,
          q->accum.acc.name ? q->accum.acc.name : "acc", ua, uo,
          uo > 0 ? "" : ": the output holds the accumulator's values", bs, t->bound_name);
  /* exp(x_i - max): the subtraction's rounding, |x_i - max| u_acc <= 2 scale
     u_acc in the exponent, and exp itself */
  eta_e = cmp(expm1(2 * scale * ua), FN_ULPS * ua);
  eta_s = cmp(eta_e, bs);
  labs_s = -log1p(-eta_s) + FN_ULPS * ua * log(n > 1 ? n : 2);
  switch (id) {
  case LOWP_OP_SOFTMAX:
    t->rtol = cmp(cmp(cmp(eta_e, ua), uo), eta_s / (1 - eta_s));
    t->atol = 0;
    (void)add(t->why, sizeof t->why, w, "; y = exp(x - max) / sum: each exp within %.4g (the "
              "subtraction's rounding with |x| <= scale = %g, exp within 2 ulps), the sum "
              "within %.4g, one division, one output rounding: rtol = %.4g, atol = 0 "
              "(softmax's error is relative).", eta_e, scale, eta_s, t->rtol);
    break;
  case LOWP_OP_LOGSUMEXP:
    t->rtol = cmp(ua, uo);
    t->atol = labs_s;
    (void)add(t->why, sizeof t->why, w, "; y = max + log(sum): the log of a sum within %.4g "
              "relative is within that much absolutely, log within 2 ulps of |log sum| <= "
              "log n; the final addition and the output rounding are relative: rtol = %.4g, "
              "atol = %.4g.", eta_s, t->rtol, t->atol);
    break;
  case LOWP_OP_LOGSOFTMAX: case LOWP_OP_XENT:
    t->rtol = cmp(ua, uo);
    t->atol = labs_s + 2 * scale * ua;
    (void)add(t->why, sizeof t->why, w, "; y = (x - max) - log(sum) (xent: logsumexp - "
              "x_target): the subtraction within 2 scale u_acc, log(sum) within %.4g "
              "absolutely, the last subtraction and the output rounding relative: rtol = "
              "%.4g, atol = %.4g%s.", labs_s, t->rtol, t->atol,
              id == LOWP_OP_XENT ? " (reduction none; a mean adds the row sum's relative "
              "bound)" : "");
    break;
  default: {
    /* rmsnorm: y = x / sqrt(sum(x^2)/n + eps); layernorm: d = x - mean,
       y = d / sqrt(sum(d^2)/n + eps), scale bounds |d| / std */
    double eta_ms = cmp(cmp(ua, bs), ua), eta_r, eta_mu = 0;
    if (id == LOWP_OP_LAYERNORM) {
      eta_mu = cmp(bs, ua) * scale; /* |delta mean| / std */
      eta_ms = cmp(cmp(cmp(expm1(3 * log1p(ua)), bs), ua), eta_mu * eta_mu);
    }
    eta_r = cmp(cmp(eta_ms / (2 * (1 - eta_ms)), ua), ua); /* half, sqrt, 1/x */
    t->rtol = cmp(cmp(eta_r, ua), uo);
    t->atol = id == LOWP_OP_LAYERNORM ? eta_mu * (1 + t->rtol) : 0;
    (void)add(t->why, sizeof t->why, w, "; the mean square within %.4g relative (squares, "
              "sum, division by n), its inverse square root within %.4g (half of it, the sqrt "
              "and division roundings); the product and the output rounding: rtol = %.4g, "
              "atol = %.4g%s.", eta_ms, eta_r, t->rtol, t->atol,
              id == LOWP_OP_LAYERNORM ? " (the mean within (row-sum bound + u_acc) x scale "
              "standard deviations gives atol; scale bounds |x - mean| / std; output y only)"
              : "");
    break;
  }
  }
  /* below the output's normal range its rounding error is absolute: half
     its smallest subnormal spacing, 2^(emin - p) (0 without subnormals:
     a flush to zero loses up to 2^emin) */
  t->atol += q->out.subnormals ? ldexp(1.0, q->out.emin - q->out.precision)
                               : ldexp(1.0, q->out.emin);
  t->bound = t->rtol;
  t->rtol_same_sign = t->rtol;
  if (!(t->rtol < 1)) {
    t->vacuous = 1;
    t->rtol = t->atol = INFINITY;
  }
  return LOWP_OK;
}
