/* lowp_fpx_dot -- the exception hook of a dot product: the exact value of each rounding, and the reference at that point */

/*
 * Called by kernels/cpu/gemm_acc.c's reference dot and lib/model/tc_dot.c's
 * chain after each rounding when a trace was requested (never on the
 * vectorised paths: a traced GEMM runs the reference). The classification
 * is lib/measure/fpx.c's; what this file adds is the exact value each
 * rounding saw and the reference at that point: for an addition, the exact
 * partial sum of the exact products, so that an overflow whose exact partial
 * sum is in range is reported as spurious.
 */

#include "measure/fpx_dot.h"

#include <math.h>

void lowp_fpx_dot_begin(lowp_fpx_dot_t *d, lowp_fpx_trace_t *t, const double *x,
                        size_t incx, const double *w, size_t incw, double init,
                        uint64_t seq0, int64_t i, int64_t j) {
  d->t = t;
  d->x = x;
  d->w = w;
  d->incx = incx;
  d->incw = incw;
  d->init = init;
  d->seq0 = seq0;
  d->i = i;
  d->lf[0] = d->lf[1] = NULL; /* limits cached per dot: two formats at most */
  d->j = j;
  d->ref_on = 0;
  d->ref_n = 0;
  d->seg_lo = SIZE_MAX;
  d->seg_on = 0;
}

void lowp_fpx_dot_scope(lowp_fpx_dot_t *d, size_t lo) {
  d->seg_lo = lo;
  d->seg_on = 0;
}

int lowp_fpx_dot_slot(lowp_fpx_dot_t *d, const lowp_format_t *f) {
  /* two slots: the accumulator's and the product's (or the output's) */
  int s = d->lf[0] ? 1 : 0; /* a third format replaces the second */
  d->lf[s] = f;
  d->lmin[s] = lowp_format_xmin(f);
  d->lmax[s] = lowp_format_xmax(f);
  return s;
}

/* the exact partial sum in the current scope through the products before n:
   init + x_0 w_0 + ... (the dot's), or x_lo w_lo + ... (lowp_fpx_dot_scope) */
static lowp_acc_t *running(lowp_fpx_dot_t *d, size_t n) {
  if (d->seg_lo != SIZE_MAX) {
    if (!d->seg_on) {
      lowp_acc_init(&d->seg);
      d->seg_n = d->seg_lo;
      d->seg_on = 1;
    }
    for (; d->seg_n < n; d->seg_n++)
      lowp_acc_add_prod(&d->seg, d->x[d->seg_n * d->incx], d->w[d->seg_n * d->incw]);
    return &d->seg;
  }
  if (!d->ref_on) {
    lowp_acc_init(&d->ref);
    lowp_acc_add(&d->ref, d->init);
    d->ref_on = 1;
  }
  for (; d->ref_n < n; d->ref_n++)
    lowp_acc_add_prod(&d->ref, d->x[d->ref_n * d->incx], d->w[d->ref_n * d->incw]);
  return &d->ref;
}

/* the exact partial sum with n products, as (x truncated, sticky) */
static void reference(double *x, int *sticky, lowp_fpx_dot_t *d, size_t n) {
  lowp_fpx_exact_acc(x, sticky, running(d, n));
}

/* record the event of mask m (nonzero), judged against the reference (rx, rs) */
static void record(lowp_fpx_dot_t *d, unsigned m, uint64_t s, int64_t k, lowp_fpx_op_t op,
                   double x, int sticky, double y, double rx, int rs, const lowp_format_t *f,
                   lowp_rounding_t rnd, double a, double b, double c) {
  int kind = 0;
  lowp_fpx_event_t ev;
  lowp_fpx_event_init(&ev);
  ev.seq = d->seq0 + s;
  ev.i = d->i;
  ev.j = d->j;
  ev.k = k;
  ev.op = op;
  ev.a = lowp_fpx_bits(a);
  ev.b = lowp_fpx_bits(b);
  ev.c = lowp_fpx_bits(c);
  ev.r = lowp_fpx_bits(y);
  ev.exact = x;
  ev.sticky = sticky;
  while (!(m & LOWP_FPX_BIT(kind))) kind++;
  ev.inherent = lowp_fpx_inherent(f, rnd, (lowp_fpx_kind_t)kind, rx, rs);
  lowp_fpx_record(d->t, m, &ev);
}

void lowp_fpx_dot_note(lowp_fpx_dot_t *d, uint64_t s, int64_t k, lowp_fpx_op_t op,
                       double x, int sticky, double y, unsigned in, int partial,
                       const lowp_format_t *f, lowp_rounding_t rnd, double a, double b,
                       double c) {
  unsigned m = lowp_fpx_classify(f, rnd, x, sticky, y, in);
  double rx = x;
  int rs = sticky;
  if (!m) return;
  if (partial && k >= 0) reference(&rx, &rs, d, (size_t)k + 1);
  record(d, m, s, k, op, x, sticky, y, rx, rs, f, rnd, a, b, c);
}

void lowp_fpx_dot_note_block(lowp_fpx_dot_t *d, uint64_t s, int64_t k, lowp_fpx_op_t op,
                             double x, int sticky, double y, unsigned in, int run, size_t run_n,
                             const size_t *idx, size_t n, const lowp_format_t *f,
                             lowp_rounding_t rnd, double a, double b, double c) {
  unsigned m = lowp_fpx_classify(f, rnd, x, sticky, y, in);
  double rx;
  int rs;
  size_t i;
  lowp_acc_t e; /* a copy: the running sum goes on from run_n */
  if (!m) return;
  if (run) e = *running(d, run_n);
  else lowp_acc_init(&e);
  for (i = 0; i < n; i++) lowp_acc_add_prod(&e, d->x[idx[i] * d->incx], d->w[idx[i] * d->incw]);
  lowp_fpx_exact_acc(&rx, &rs, &e);
  record(d, m, s, k, op, x, sticky, y, rx, rs, f, rnd, a, b, c);
}

void lowp_fpx_dot_step(lowp_fpx_dot_t *d, uint64_t s, lowp_fpx_op_t op, double acc,
                       double a, double b, double y, const lowp_format_t *f,
                       lowp_rounding_t rnd) {
  double x;
  int sticky, sum = op == LOWP_FPX_OP_ADD || op == LOWP_FPX_OP_FMA;
  unsigned in = 0;
  lowp_acc_t e;
  lowp_acc_init(&e);
  if (sum) lowp_acc_add(&e, acc);
  if (op == LOWP_FPX_OP_ROUND || op == LOWP_FPX_OP_ADD) lowp_acc_add(&e, a);
  else lowp_acc_add_prod(&e, a, b);
  lowp_fpx_exact_acc(&x, &sticky, &e);
  if ((sum && isnan(acc)) || isnan(a) ||
      ((op == LOWP_FPX_OP_MUL || op == LOWP_FPX_OP_FMA) && isnan(b)))
    in = LOWP_FPX_IN_NAN;
  if (op == LOWP_FPX_OP_FMA)
    lowp_fpx_dot_note(d, s, (int64_t)(s - 1) / 2, op, x, sticky, y, in, 1, f, rnd, acc, a, b);
  else if (op == LOWP_FPX_OP_ADD)
    lowp_fpx_dot_note(d, s, (int64_t)(s - 1) / 2, op, x, sticky, y, in, 1, f, rnd, acc, a, 0.0);
  else
    lowp_fpx_dot_note(d, s, s == 0 ? -1 : (int64_t)(s - 1) / 2, op, x, sticky, y, in, 0, f,
                      rnd, a, b, 0.0);
}
