/* lowp_tol_data -- tolerances from the inputs themselves (lib/check/tol.h) */

/*
 * The data-free tolerance (lowp_tol) bounds sum_i |a_i b_i| by k scale; with
 * the inputs each output element gets its own sum S_e, so the atol follows
 * the data (small inputs, large K, rows of different magnitude) with no
 * guess. The same pass checks the probabilistic bound's independence
 * assumption on the data (docs/tolerances.md, "Probabilistic by default"):
 * a term |t_i| < u_acc S_e can stagnate (s + t_i rounds back to s: its
 * error is -t_i, fixed by the data, not random); those terms' magnitudes
 * M_e are added to the bound as a worst case, and where they exceed half
 * the element's probabilistic budget, or the terms of an element all have
 * one sign with k u_acc >= 1/16 (partial sums growing like k: biased
 * errors), the probabilistic bound is not used at all.
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/tol.h"
#include "status.h"
#include "io/escape.h"

/* ------------------------------------------------------ private helpers */

/* the terms of output element e of a sum of products: t_i = a[ia + i sa] *
   b[ib + i sb], i < k (b NULL for sum: t_i = a[...]) */
typedef struct {
  const double *a, *b;
  size_t k, sa, sb;
} terms_t;

/* where element e's terms are (lowp_op_shape's layouts) */
static terms_t terms_of(const lowp_problem_t *p, const double *const *in, size_t e) {
  terms_t t;
  const lowp_dims_t *d = &p->dims;
  memset(&t, 0, sizeof t);
  switch (p->op->id) {
  case LOWP_OP_SUM: /* x (batch, m, n) -> (batch, m) */
    t.a = in[0] + e * d->n; t.k = d->n; t.sa = 1;
    break;
  case LOWP_OP_DOT: /* (batch, k) . (batch, k) */
    t.a = in[0] + e * d->k; t.b = in[1] + e * d->k; t.k = d->k; t.sa = t.sb = 1;
    break;
  case LOWP_OP_GEMV: { /* (batch, m, k) (batch, k) -> (batch, m) */
    size_t bt = e / d->m, i = e % d->m;
    t.a = in[0] + (bt * d->m + i) * d->k; t.b = in[1] + bt * d->k; t.k = d->k; t.sa = t.sb = 1;
    break;
  }
  default: { /* gemm (batch, m, k) (batch, k, n) -> (batch, m, n) */
    size_t bt = e / (d->m * d->n), i = (e / d->n) % d->m, j = e % d->n;
    t.a = in[0] + (bt * d->m + i) * d->k; t.sa = 1;
    t.b = in[1] + bt * d->k * d->n + j; t.sb = d->n; t.k = d->k;
    break;
  }
  }
  return t;
}

/* S = sum |t_i| (rounded up to cover binary64's own rounding), M = sum of
   the |t_i| < u S, and whether every nonzero t_i has one sign */
static void scan(const terms_t *t, double u, double *S, double *M, int *one_sign) {
  double s = 0, m = 0, cut;
  size_t i;
  int pos = 0, neg = 0;
  for (i = 0; i < t->k; i++) {
    double v = t->b ? t->a[i * t->sa] * t->b[i * t->sb] : t->a[i * t->sa];
    s += fabs(v);
    pos |= v > 0;
    neg |= v < 0;
  }
  s *= 1 + (double)(t->k + 2) * 0x1p-52; /* binary64's recursive sum: gamma_k */
  cut = u * s;
  for (i = 0; i < t->k; i++) {
    double v = fabs(t->b ? t->a[i * t->sa] * t->b[i * t->sb] : t->a[i * t->sa]);
    if (v < cut) m += v;
  }
  *S = s;
  *M = m * (1 + (double)(t->k + 2) * 0x1p-52);
  *one_sign = !(pos && neg);
}

/* Repeated terms. The probabilistic bound takes the k rounding errors as independent; terms of one
   magnitude added into a sum that stays in one binade make the same error again and again (the same
   fraction of an ulp), so their errors add coherently: a GEMM of constant fp16 inputs (0.333 x 0.143)
   summed in fp32 at K = 16384 had 2.7 times the probabilistic tolerance. Counting equal |t_i| in groups
   of r_g terms, each group's error is bounded as one (r_g u S at most) and the groups as independent
   (Hoeffding): the budget lambda sqrt(k) u becomes lambda sqrt(sum r_g^2) u. rho2 returns
   sum r_g^2 / k (>= 1 when every term is nonzero; 1 when no two are equal); tab (cap slots, a power of
   two >= 2k, v zero-filled on entry and left so) and used (k slots) are scratch. */
typedef struct {
  double *v;
  size_t *n, *used, cap;
} rep_t;

static double rho2(rep_t *h, const terms_t *t) {
  size_t i, nu = 0;
  double ss = 0;
  for (i = 0; i < t->k; i++) {
    double v = fabs(t->b ? t->a[i * t->sa] * t->b[i * t->sb] : t->a[i * t->sa]);
    uint64_t bits;
    size_t at;
    if (!(v > 0)) continue; /* zeros add no error; NaN is not grouped */
    memcpy(&bits, &v, sizeof bits);
    at = (size_t)((bits * 0x9E3779B97F4A7C15ull) >> 20) & (h->cap - 1);
    while (h->v[at] != 0 && h->v[at] != v) at = (at + 1) & (h->cap - 1);
    if (h->v[at] == 0) { h->v[at] = v; h->n[at] = 0; h->used[nu++] = at; }
    h->n[at]++;
  }
  for (i = 0; i < nu; i++) {
    ss += (double)h->n[h->used[i]] * (double)h->n[h->used[i]];
    h->v[h->used[i]] = 0;
  }
  return t->k ? ss / (double)t->k : 0;
}

static int data_sumprod(lowp_tol_t *t, double *atol, double *rtol, const lowp_tol_query_t *q0,
                        const lowp_problem_t *p, const double *const *in, size_t count,
                        char *err, size_t errlen) {
  lowp_tol_query_t q = *q0;
  double ua, worst_atol = 0, k = (double)p->dims.k, beta_worst = INFINITY;
  size_t e, n_stag = 0, n_sign = 0, n_rep = 0;
  rep_t rep = {NULL, NULL, NULL, 0};
  int st;
  if (p->op->id == LOWP_OP_SUM) k = (double)p->dims.n;
  q.k = (size_t)k;
  q.data_checked = 1;
  if ((st = lowp_tol(t, &q, err, errlen))) return st;
  ua = q.has_model ? 0 : (q.accum.rnd == LOWP_RND_NE || q.accum.rnd == LOWP_RND_NA
                              ? lowp_format_u(&q.accum.acc) : 2 * lowp_format_u(&q.accum.acc));
  if (t->probabilistic) {
    for (e = 0; e < count; e++) {
      terms_t tm = terms_of(p, in, e);
      double S, M;
      int one;
      scan(&tm, ua, &S, &M, &one);
      if (M > 0.5 * t->bound_acc * S) n_stag++;
      else if (one && k * ua >= 1.0 / 16 && S > 0) n_sign++;
    }
    if (n_stag || n_sign) {
      char why[400];
      snprintf(why, sizeof why, "on these inputs the rounding errors need not be independent: "
               "%zu of %zu outputs have terms below u_acc sum|t| (they can stagnate) adding "
               "up to more than half the probabilistic budget, %zu have terms of one sign with "
               "k u_acc = %.3g >= 1/16 (biased errors)", n_stag, count, n_sign, k * ua);
      q.worst = 1;
      if ((st = lowp_tol(t, &q, err, errlen))) return st;
      snprintf(t->not_prob, sizeof t->not_prob, "%s", why);
      {
        char *w = strstr(t->why, "; worst case (never fails an honest kernel): ");
        if (w) snprintf(w, sizeof t->why - (size_t)(w - t->why), "; worst case (never fails "
                        "an honest kernel): %s", why);
      }
    }
  }
  if (t->probabilistic && !t->vacuous) { /* repeated terms: the worst case caps the grown budget */
    lowp_tol_query_t qw = q;
    lowp_tol_t tw;
    qw.worst = 1;
    if ((st = lowp_tol(&tw, &qw, err, errlen))) return st;
    beta_worst = tw.vacuous ? INFINITY : tw.beta;
    for (rep.cap = 2; rep.cap < 2 * q.k; rep.cap *= 2) {}
    rep.v = calloc(rep.cap, sizeof *rep.v);
    rep.n = malloc(rep.cap * sizeof *rep.n);
    rep.used = malloc((q.k + 1) * sizeof *rep.used);
    if (!rep.v || !rep.n || !rep.used) { free(rep.v); free(rep.n); free(rep.used); return LOWP_ENOMEM; }
  }
  for (e = 0; e < count; e++) {
    terms_t tm = terms_of(p, in, e);
    double S, M, beta = t->beta;
    int one, prob = t->probabilistic;
    scan(&tm, ua, &S, &M, &one);
    if (rep.v && t->bound_acc > 0) {
      double r2 = rho2(&rep, &tm);
      if (r2 > 1) {
        beta = t->beta / t->bound_acc * expm1(sqrt(r2) * log1p(t->bound_acc));
        if (!(beta < beta_worst)) { beta = beta_worst; prob = 0; }
        n_rep++;
      }
    }
    if (t->vacuous) atol[e] = INFINITY;
    else atol[e] = beta * S + (prob ? (1 + t->rtol) * M : 0) + t->atol_floor;
    if (rtol) rtol[e] = t->rtol;
    if (atol[e] > worst_atol) worst_atol = atol[e];
  }
  free(rep.v);
  free(rep.n);
  free(rep.used);
  t->atol = worst_atol;
  {
    /* the data-free sentence above used k scale: say what the data gave */
    size_t w = strlen(t->why);
    if (w < sizeof t->why)
      snprintf(t->why + w, sizeof t->why - w, " On the inputs, each element's own sum |t_i| "
               "replaces k scale: atol_e = %.4g S_e%s + %.3g, at most %.4g over %zu outputs.",
               t->beta, t->probabilistic ? " + (1 + u_out) M_e (terms that can stagnate)" : "",
               t->atol_floor, worst_atol, count);
  }
  if (n_rep) {
    size_t w = strlen(t->why);
    if (w < sizeof t->why)
      snprintf(t->why + w, sizeof t->why - w, " %zu of %zu outputs have terms of equal magnitude, whose "
               "rounding errors can add coherently: their budget grows from lambda sqrt(k) u to lambda "
               "sqrt(sum r_g^2) u (r_g terms of each magnitude; at most the worst case).", n_rep, count);
  }
  return LOWP_OK;
}

/* the scale of row r: max |x_i|; layernorm: mean |x_i| / sqrt(var + eps).
   Layernorm's mean is a sum of the x_i (not of x_i - mean) divided by n, so
   its error is within (bs + u) sum |x_i| / n, and y = (x - mean) / sqrt(var
   + eps) carries it divided by sqrt(var + eps): a row of 1000 + N(0, 1)
   puts about 1000 times the rounding of its sum into every y, which the
   spread of the row (max |x_i - mean| / std, the scale before) cannot see.
   eps 0 where the caller gives none (sqrt(var) then bounds the divisor
   from below: conservative); a row with var + eps = 0 gives NaN outputs. */
static double row_scale(const double *x, size_t n, int layernorm, double eps) {
  double mx = 0, mean = 0, var = 0, mabs = 0;
  size_t i;
  if (!layernorm) {
    for (i = 0; i < n; i++)
      if (fabs(x[i]) > mx) mx = fabs(x[i]);
    return mx > 0 ? mx : 1;
  }
  for (i = 0; i < n; i++) {
    mean += x[i];
    mabs += fabs(x[i]);
  }
  mean /= (double)n;
  mabs /= (double)n;
  for (i = 0; i < n; i++) var += (x[i] - mean) * (x[i] - mean);
  var /= (double)n;
  if (eps > 0) var += eps;
  /* binary64's mean and variance: a margin far above their errors */
  return var > 0 && mabs > 0 ? mabs / sqrt(var) * (1 + 0x1p-30) : 1;
}

/* One row sum's terms into q (row_stag, row_rep2; tol.c, row_sum_data): the
   exp(x_i - max) of softmax, log-softmax, logsumexp and xent, the x_i^2 of
   rmsnorm, and layernorm's two sums, the x_i of its mean and the (x_i -
   mean)^2 of its variance (the larger of each measure). Binary64 stands
   for the kernel's terms: equal inputs give equal terms in both. tv holds
   n doubles (scratch). */
static void row_terms(lowp_tol_query_t *q, rep_t *rep, double *tv, const double *x, size_t n,
                      double ua) {
  terms_t tm;
  double S, M, mx = -INFINITY, mean = 0;
  int one, pass, passes = q->op->id == LOWP_OP_LAYERNORM ? 2 : 1;
  size_t i;
  memset(&tm, 0, sizeof tm);
  tm.a = tv;
  tm.k = n;
  tm.sa = 1;
  q->row_stag = q->row_rep2 = 0;
  for (i = 0; i < n; i++) {
    if (x[i] > mx) mx = x[i];
    mean += x[i];
  }
  mean /= (double)n;
  for (pass = 0; pass < passes; pass++) {
    for (i = 0; i < n; i++) {
      switch (q->op->id) {
      case LOWP_OP_RMSNORM: tv[i] = x[i] * x[i]; break;
      case LOWP_OP_LAYERNORM: tv[i] = pass ? (x[i] - mean) * (x[i] - mean) : x[i]; break;
      default: tv[i] = exp(x[i] - mx); break;
      }
      if (!isfinite(tv[i])) return; /* NaN/inf outputs: no row sum to judge */
    }
    scan(&tm, ua, &S, &M, &one);
    if (S > 0 && M / S > q->row_stag) q->row_stag = M / S;
    S = rho2(rep, &tm);
    if (S > q->row_rep2) q->row_rep2 = S;
  }
}

static int data_rowop(lowp_tol_t *t, double *atol, double *rtol, const lowp_tol_query_t *q0,
                      const lowp_problem_t *p, const double *const *in, size_t count,
                      char *err, size_t errlen) {
  lowp_tol_query_t q = *q0;
  lowp_tol_t tr, loosest;
  size_t rows = p->dims.batch * p->dims.m, n = p->dims.n, per = count / (rows ? rows : 1), r, j;
  int st = LOWP_OK, have = 0;
  double ua = q.accum.rnd == LOWP_RND_NE || q.accum.rnd == LOWP_RND_NA
                  ? lowp_format_u(&q.accum.acc) : 2 * lowp_format_u(&q.accum.acc);
  rep_t rep = {NULL, NULL, NULL, 0};
  double *tv;
  q.k = n;
  for (rep.cap = 2; rep.cap < 2 * n; rep.cap *= 2) {}
  rep.v = calloc(rep.cap, sizeof *rep.v);
  rep.n = malloc(rep.cap * sizeof *rep.n);
  rep.used = malloc((n + 1) * sizeof *rep.used);
  tv = malloc((n + 1) * sizeof *tv);
  if (!rep.v || !rep.n || !rep.used || !tv) st = LOWP_ENOMEM;
  for (r = 0; !st && r < rows; r++) {
    q.scale = row_scale(in[0] + r * n, n, p->op->id == LOWP_OP_LAYERNORM, q.eps);
    row_terms(&q, &rep, tv, in[0] + r * n, n, ua);
    if ((st = lowp_tol(&tr, &q, err, errlen))) break;
    for (j = 0; j < per; j++) {
      atol[r * per + j] = tr.atol;
      if (rtol) rtol[r * per + j] = tr.rtol;
    }
    if (!have || tr.rtol > loosest.rtol || (tr.rtol == loosest.rtol && tr.atol > loosest.atol)) {
      loosest = tr;
      have = 1;
    }
  }
  free(rep.v);
  free(rep.n);
  free(rep.used);
  free(tv);
  if (st) return st;
  if (!have) {
    q.row_stag = q.row_rep2 = 0;
    return lowp_tol(t, &q, err, errlen);
  }
  *t = loosest;
  return LOWP_OK;
}

/* ----------------------------------------------------------- public API */

int lowp_tol_data(lowp_tol_t *t, double *atol, double *rtol, const lowp_tol_query_t *q,
                  const lowp_dims_t *dims, const double *const *in, char *err, size_t errlen) {
  lowp_problem_t p;
  lowp_tol_query_t qq;
  size_t shape[LOWP_OP_MAXDIM], count;
  int nd, i, st;
  if (err && errlen) err[0] = '\0';
  if (!t || !atol || !q || !q->op || !dims || !in) return LOWP_EINVAL;
  if ((st = lowp_problem_init(&p, q->op))) return st;
  p.dims = *dims;
  p.in[0] = p.in[1] = q->in;
  p.out = q->out;
  if ((st = lowp_op_shape(&p, p.op->n_in, shape, &nd, &count))) {
    lowp_errf(err, errlen, 0, "%s: bad sizes", p.op->name);
    return st;
  }
  for (i = 0; i < p.op->n_in; i++)
    if (!in[i] && !p.op->in_index[i]) return LOWP_EINVAL;
  qq = *q;
  if (!(qq.numel > 0)) qq.numel = (double)count;
  if (p.op->kind == LOWP_OPKIND_SUMPROD)
    return data_sumprod(t, atol, rtol, &qq, &p, in, count, err, errlen);
  return data_rowop(t, atol, rtol, &qq, &p, in, count, err, errlen);
}
