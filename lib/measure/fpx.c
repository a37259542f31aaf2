/* lowp_fpx -- classify the exceptions of a rounding; keep a trace of the first of each kind */

/*
 * The definitions (IEEE 754-2019 sections 7.2-7.6; tininess after rounding
 * as in 7.5's second option) are in measure/fpx.h. Everything below is a
 * comparison of the exact value (x rounded toward zero, plus a sticky bit)
 * with values of the format that are binary64 numbers: xmax, the midpoint
 * above it, the next p-bit value above it, xmin and the p-bit values just
 * below it. That is exact for precision <= 52 (see the header for fp64).
 */

#include "measure/fpx.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <mpfr.h>

#include "exact/acc.h"
#include "exact/exact.h"
#include "format/round_mpfr.h"
#include "status.h"

/* ------------------------------------------------------ private helpers */

static const char *const kind_names[LOWP_FPX_NKINDS] = {
    "invalid",    "nan_propagated",      "divzero",        "overflow_inf", "overflow_nan",
    "saturation", "underflow_subnormal", "underflow_zero", "scale"};

static const char *const op_names[LOWP_FPX_NOPS] = {"round", "add",   "mul",    "fma", "div",
                                                     "bfma",  "scale", "output", "exp"};

/* does the mode round a magnitude away from zero for this sign? */
static int away_of(lowp_rounding_t rnd, int neg) {
  return (rnd == LOWP_RND_UP && !neg) || (rnd == LOWP_RND_DN && neg);
}

/* exact value (ax = |x| truncated, sticky) strictly above t / at least t,
   for t a binary64 value */
static int above(double ax, int sticky, double t) { return ax > t || (ax == t && sticky); }

/* IEEE overflow: the rounding of the exact value to p bits with an
   unbounded exponent exceeds xmax. */
static int overflows(const lowp_format_t *f, lowp_rounding_t rnd, double ax, int sticky,
                     int neg, double y) {
  const int p = f->precision;
  double xmax = lowp_format_xmax(f);
  double ulp = ldexp(1.0, f->emax - p + 1), top = xmax + ulp, mid = xmax + ulp / 2;
  int xmax_odd = fmod(xmax / ulp, 2.0) != 0.0;
  if (isinf(ax)) return 1; /* a finite exact value >= 2^1024 (sticky set) */
  if (p > 52 || !isfinite(top)) { /* fp64: xmax is DBL_MAX; top is 2^1024 */
    switch (rnd) {
    case LOWP_RND_UP:
    case LOWP_RND_DN:
      if (away_of(rnd, neg)) return above(ax, sticky, xmax);
      return 0;
    case LOWP_RND_TZ:
    case LOWP_RND_TO: return 0; /* >= 2^1024 is the infinite x above */
    default: return !isfinite(y); /* the midpoint is not a binary64 value */
    }
  }
  switch (rnd) {
  case LOWP_RND_NE: return above(ax, sticky, mid) || (ax == mid && xmax_odd);
  case LOWP_RND_NA: return ax >= mid;
  case LOWP_RND_TZ: return ax >= top;
  case LOWP_RND_UP:
  case LOWP_RND_DN: return away_of(rnd, neg) ? above(ax, sticky, xmax) : ax >= top;
  case LOWP_RND_TO: return ax >= top || (above(ax, sticky, xmax) && !xmax_odd);
  default: return above(ax, sticky, xmax); /* stochastic */
  }
}

/* IEEE tininess after rounding: the exact value (nonzero, below xmin) rounded
   to p bits with an unbounded exponent is still below xmin. The p-bit
   values just below xmin are xmin - h, h = 2^(emin - p). */
static int tiny_after(const lowp_format_t *f, lowp_rounding_t rnd, double ax, int sticky,
                      int neg) {
  const int p = f->precision;
  double xmin = lowp_format_xmin(f), h = ldexp(1.0, f->emin - p);
  if (ax >= xmin) return 0;
  if (p > 52 || h < 0x1p-1073) return 1; /* fp64: tininess before rounding */
  switch (rnd) {
  case LOWP_RND_NE: /* a tie goes to xmin, whose significand is even (p >= 2) */
    return !(above(ax, sticky, xmin - h / 2) || (ax == xmin - h / 2 && p >= 2));
  case LOWP_RND_NA: return !(ax >= xmin - h / 2);
  case LOWP_RND_UP:
  case LOWP_RND_DN: return away_of(rnd, neg) ? !above(ax, sticky, xmin - h) : 1;
  default: return 1; /* rtz, rto (xmin - h is odd), stochastic */
  }
}

/* ----------------------------------------------------------- public API */

void lowp_fpx_exact_acc(double *x, int *sticky, lowp_acc_t *a) {
  /* p = 2, binary64's exponent range, overflow to NaN: rounding toward zero
     overflows exactly when the value is at least 2^1024 */
  static const lowp_format_t wide = {"fpx-wide", 2, -1022, 1023, 1, LOWP_INF_IEEE,
                                     LOWP_NAN_IEEE, 1, 1, 11, NULL, NULL};
  lowp_policy_t pol = {0};
  *sticky = lowp_acc_round(x, a, &LOWP_FMT_FP64, NULL, LOWP_RND_TZ, 0) != 0;
  if (*sticky && fabs(*x) == DBL_MAX) {
    double w;
    pol.overflow = LOWP_OVF_NAN;
    (void)lowp_acc_round(&w, a, &wide, &pol, LOWP_RND_TZ, 0);
    if (isnan(w)) *x = *x > 0 ? INFINITY : -INFINITY;
  }
}

void lowp_fpx_exact_mul(double *x, int *sticky, double a, double b) {
  double p = a * b;
  lowp_acc_t acc;
  *sticky = 0;
  *x = p;
  /* NaN, an infinity times a nonzero value, an exact zero: p is exact */
  if (isnan(p) || !isfinite(a) || !isfinite(b) || a == 0 || b == 0) return;
  if (isfinite(p) && fabs(p) >= 0x1p-969) {
    /* fma gives the product's rounding error exactly: it is a binary64
       number when the exponent of a b is at least emin + p - 1 = -970
       (Boldo & Muller, "Exact and approximated error of the FMA", IEEE TC
       60(2), 2011) */
    double e = fma(a, b, -p);
    *sticky = e != 0;
    if (e != 0 && (e < 0) != (p < 0)) *x = nextafter(p, 0.0); /* toward zero */
    return;
  }
  lowp_acc_init(&acc); /* beyond binary64's range or near underflow */
  lowp_acc_add_prod(&acc, a, b);
  lowp_fpx_exact_acc(x, sticky, &acc);
}

void lowp_fpx_exact_add(double *x, int *sticky, double a, double b) {
  double s = a + b, bb, e;
  lowp_acc_t acc;
  *sticky = 0;
  *x = s;
  if (isnan(s) || !isfinite(a) || !isfinite(b)) return; /* exact */
  if (isfinite(s)) {
    bb = s - a; /* TwoSum: e = (a - (s - bb)) + (b - bb) exactly */
    e = (a - (s - bb)) + (b - bb);
    *sticky = e != 0;
    if (e != 0 && (e < 0) != (s < 0)) *x = nextafter(s, 0.0);
    return;
  }
  lowp_acc_init(&acc); /* beyond binary64's range */
  lowp_acc_add(&acc, a);
  lowp_acc_add(&acc, b);
  lowp_fpx_exact_acc(x, sticky, &acc);
}

const char *lowp_fpx_kind_name(lowp_fpx_kind_t k) {
  return ((unsigned)k < LOWP_FPX_NKINDS) ? kind_names[k] : "?";
}

const char *lowp_fpx_op_name(lowp_fpx_op_t op) {
  return ((unsigned)op < LOWP_FPX_NOPS) ? op_names[op] : "?";
}

unsigned lowp_fpx_mask_parse(const char *name) {
  int k;
  if (!name) return 0;
  if (!strcmp(name, "overflow")) return LOWP_FPX_OVERFLOW;
  if (!strcmp(name, "underflow")) return LOWP_FPX_UNDERFLOW;
  if (!strcmp(name, "nan"))
    return LOWP_FPX_BIT(LOWP_FPX_INVALID) | LOWP_FPX_BIT(LOWP_FPX_NAN_PROP);
  if (!strcmp(name, "all")) return LOWP_FPX_ALL;
  for (k = 0; k < LOWP_FPX_NKINDS; k++)
    if (!strcmp(name, kind_names[k])) return LOWP_FPX_BIT(k);
  return 0;
}

unsigned lowp_fpx_classify(const lowp_format_t *f, lowp_rounding_t rnd, double x,
                           int sticky, double y, unsigned in) {
  int neg = signbit(x) != 0;
  double ax = fabs(x);
  unsigned k = 0;
  if (isnan(x))
    return LOWP_FPX_BIT((in & LOWP_FPX_IN_NAN) ? LOWP_FPX_NAN_PROP : LOWP_FPX_INVALID);
  if (isinf(x) && !sticky) { /* an infinity is exact: only its conversion can be an event */
    if (in & LOWP_FPX_IN_DIVZERO) k |= LOWP_FPX_BIT(LOWP_FPX_DIVZERO);
    if (isnan(y)) k |= LOWP_FPX_BIT(LOWP_FPX_OVF_NAN);
    else if (isfinite(y)) k |= LOWP_FPX_BIT(LOWP_FPX_SATURATE);
    return k;
  }
  if (ax == 0 && !sticky && !(in & LOWP_FPX_IN_INEXACT)) return 0; /* an exact zero */
  if (overflows(f, rnd, ax, sticky, neg, y)) {
    if (isnan(y)) return LOWP_FPX_BIT(LOWP_FPX_OVF_NAN);
    if (isinf(y)) return LOWP_FPX_BIT(LOWP_FPX_OVF_INF);
    return LOWP_FPX_BIT(LOWP_FPX_SATURATE);
  }
  if ((sticky || x != y || (in & LOWP_FPX_IN_INEXACT)) && tiny_after(f, rnd, ax, sticky, neg))
    return LOWP_FPX_BIT(y == 0 ? LOWP_FPX_UNF_ZERO : LOWP_FPX_UNF_SUB);
  return 0;
}

int lowp_fpx_inherent(const lowp_format_t *f, lowp_rounding_t rnd, lowp_fpx_kind_t k, double x,
                      int sticky) {
  double ax = fabs(x), y;
  int neg = signbit(x) != 0;
  switch (k) {
  case LOWP_FPX_INVALID:
  case LOWP_FPX_NAN_PROP: return isnan(x) != 0;
  case LOWP_FPX_DIVZERO: return isinf(x) != 0;
  case LOWP_FPX_OVF_INF:
  case LOWP_FPX_OVF_NAN:
  case LOWP_FPX_SATURATE:
    /* IEEE overflow of the reference itself, rounded in the same mode: an exact
       65505 is above fp16's xmax yet rounds (rne) to 65504 and does not
       overflow. overflows() reads y only for p > 52 under rne, rna (the
       midpoint above DBL_MAX is no binary64 value): there a reference above
       xmax counts as overflowing */
    if (isnan(x)) return 0;
    y = above(ax, sticky, lowp_format_xmax(f)) ? copysign(INFINITY, x) : x;
    return overflows(f, rnd, ax, sticky, neg, y);
  case LOWP_FPX_UNF_SUB:
  case LOWP_FPX_UNF_ZERO:
    /* IEEE underflow of the reference: tiny after rounding and inexact (an
       exact subnormal reference raises nothing) */
    if (isnan(x) || (ax == 0 && !sticky) || ax >= lowp_format_xmin(f)) return 0;
    (void)lowp_round_f64(&y, x, f, NULL, LOWP_RND_TZ);
    return (sticky || y != x) && tiny_after(f, rnd, ax, sticky, neg);
  case LOWP_FPX_SCALE: return lowp_fpx_classify_scale(f, x, sticky, x) != 0;
  default: return 0;
  }
}

unsigned lowp_fpx_classify_scale(const lowp_format_t *f, double x, int sticky, double y) {
  double ax = fabs(x);
  if (isnan(y) || !isfinite(x) || above(ax, sticky, lowp_format_xmax(f)) ||
      ax < lowp_format_xmins(f))
    return LOWP_FPX_BIT(LOWP_FPX_SCALE);
  return 0;
}

void lowp_fpx_event_init(lowp_fpx_event_t *e) {
  memset(e, 0, sizeof *e);
  e->seq = UINT64_MAX;
  e->i = e->j = e->k = -1;
  e->inherent = -1;
}

void lowp_fpx_init(lowp_fpx_trace_t *t) {
  int k;
  memset(t, 0, sizeof *t);
  for (k = 0; k < LOWP_FPX_NKINDS; k++) lowp_fpx_event_init(&t->first[k]);
}

void lowp_fpx_record(lowp_fpx_trace_t *t, unsigned mask, const lowp_fpx_event_t *ev) {
  int k;
  for (k = 0; k < LOWP_FPX_NKINDS; k++) {
    if (!(mask & LOWP_FPX_BIT(k))) continue;
    t->count[k]++;
    if (ev->inherent == 1) t->inherent[k]++;
    else if (ev->inherent == 0) t->spurious[k]++;
    if (ev->seq < t->first[k].seq) t->first[k] = *ev;
  }
}

void lowp_fpx_merge(lowp_fpx_trace_t *dst, const lowp_fpx_trace_t *src) {
  int k;
  for (k = 0; k < LOWP_FPX_NKINDS; k++) {
    dst->count[k] += src->count[k];
    dst->inherent[k] += src->inherent[k];
    dst->spurious[k] += src->spurious[k];
    if (src->first[k].seq < dst->first[k].seq) dst->first[k] = src->first[k];
  }
  dst->ops += src->ops;
}

unsigned lowp_fpx_kinds(const lowp_fpx_trace_t *t) {
  unsigned m = 0;
  int k;
  for (k = 0; k < LOWP_FPX_NKINDS; k++)
    if (t->count[k]) m |= LOWP_FPX_BIT(k);
  return m;
}

int lowp_fpx_first_kind(const lowp_fpx_trace_t *t, unsigned mask) {
  int k, best = -1;
  for (k = 0; k < LOWP_FPX_NKINDS; k++)
    if ((mask & LOWP_FPX_BIT(k)) && t->count[k] &&
        (best < 0 || t->first[k].seq < t->first[best].seq))
      best = k;
  return best;
}

uint64_t lowp_fpx_bits(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

/* classify and record one conversion x -> y (its exact value is x) */
static void note_round(lowp_fpx_trace_t *t, uint64_t seq, int64_t i, double x, double y,
                       const lowp_format_t *f, const lowp_policy_t *pol, lowp_rounding_t rnd) {
  unsigned m;
  /* DAZ reads a subnormal input as zero, which is what was rounded */
  if (pol && pol->daz && x != 0 && fabs(x) < 0x1p-1022) return;
  m = lowp_fpx_classify(f, rnd, x, 0, y, isnan(x) ? LOWP_FPX_IN_NAN : 0);
  if (m) {
    lowp_fpx_event_t ev;
    lowp_fpx_event_init(&ev);
    ev.seq = seq;
    ev.i = i;
    ev.op = LOWP_FPX_OP_ROUND;
    ev.a = lowp_fpx_bits(x);
    ev.r = lowp_fpx_bits(y);
    ev.exact = x;
    ev.inherent = 1;
    lowp_fpx_record(t, m, &ev);
  }
}

int lowp_fpx_round_f64(lowp_fpx_trace_t *t, uint64_t seq, int64_t i, double *y,
                       double x, const lowp_format_t *f, const lowp_policy_t *pol,
                       lowp_rounding_t rnd) {
  int tern = lowp_round_f64(y, x, f, pol, rnd);
  if (!t) return tern;
  t->ops++;
  note_round(t, seq, i, x, *y, f, pol, rnd);
  return tern;
}

int lowp_fpx_round_array_f64(lowp_fpx_trace_t *t, uint64_t seq0, double *y, const double *x,
                             size_t n, const lowp_format_t *f, const lowp_policy_t *pol,
                             lowp_rounding_t rnd) {
  lowp_policy_t p = pol ? *pol : (lowp_policy_t){0};
  uint64_t base = p.sr_offset;
  double xmin, xmax;
  size_t i;
  if (!t) return lowp_round_array_f64(y, x, n, f, pol, rnd);
  if ((unsigned)rnd >= LOWP_RND_COUNT) return LOWP_EROUND;
  if (lowp_format_validate(f, NULL, 0)) return LOWP_EFORMAT;
  xmin = lowp_format_xmin(f);
  xmax = lowp_format_xmax(f);
  for (i = 0; i < n; i++) {
    double v = x[i], ay;
    p.sr_offset = base + i;
    (void)lowp_round_f64(&y[i], v, f, &p, rnd);
    ay = fabs(y[i]);
    /* a result strictly inside (xmin, xmax) from a finite input: nothing */
    if (!(ay > xmin && ay < xmax && isfinite(v)))
      note_round(t, seq0 + i, (int64_t)(seq0 + i), v, y[i], f, &p, rnd);
  }
  t->ops += n;
  return LOWP_OK;
}

/* the lowest kind of a nonzero mask */
static lowp_fpx_kind_t lowest(unsigned m) {
  int k = 0;
  while (!(m & LOWP_FPX_BIT(k))) k++;
  return (lowp_fpx_kind_t)k;
}

unsigned lowp_fpx_op2_eval(lowp_fpx_event_t *ev, int *tern, double *y, lowp_fpx_op_t op,
                           double a, double b, const lowp_format_t *f,
                           const lowp_policy_t *pol, lowp_rounding_t rnd, uint64_t index) {
  double ay, x;
  int sticky, t0;
  lowp_acc_t acc;
  t0 = op == LOWP_FPX_OP_MUL ? lowp_exact_mul2(y, a, b, f, pol, rnd, index)
                             : lowp_exact_add2(y, a, b, f, pol, rnd, index);
  if (tern) *tern = t0;
  ay = fabs(*y);
  /* no exception can give a result strictly inside (xmin, xmax) */
  if (ay > lowp_format_xmin(f) && ay < lowp_format_xmax(f)) return 0;
  lowp_acc_init(&acc);
  if (op == LOWP_FPX_OP_MUL) lowp_acc_add_prod(&acc, a, b);
  else { lowp_acc_add(&acc, a); lowp_acc_add(&acc, b); }
  lowp_fpx_exact_acc(&x, &sticky, &acc);
  return lowp_fpx_eval(ev, op, a, b, x, sticky, *y, f, rnd,
                       (isnan(a) || isnan(b)) ? LOWP_FPX_IN_NAN : 0);
}

int lowp_fpx_op2(lowp_fpx_trace_t *t, const lowp_fpx_event_t *where, lowp_fpx_op_t op,
                 double *y, double a, double b, const lowp_format_t *f,
                 const lowp_policy_t *pol, lowp_rounding_t rnd, uint64_t index) {
  lowp_fpx_event_t ev;
  unsigned m;
  int tern;
  if (!t) {
    return op == LOWP_FPX_OP_MUL ? lowp_exact_mul2(y, a, b, f, pol, rnd, index)
                                 : lowp_exact_add2(y, a, b, f, pol, rnd, index);
  }
  if (where) ev = *where;
  else lowp_fpx_event_init(&ev);
  t->ops++;
  m = lowp_fpx_op2_eval(&ev, &tern, y, op, a, b, f, pol, rnd, index);
  if (!m) return tern;
  /* a single operation: its own exact value is the reference */
  lowp_fpx_record_ref(t, m, &ev, f, rnd, NULL, 0);
  return tern;
}

int lowp_fpx_scan(lowp_fpx_scan_t *s, const double *x, size_t n, const lowp_format_t *f,
                  const lowp_policy_t *pol, lowp_rounding_t rnd) {
  size_t i;
  int top, k;
  if (!s || (n && !x) || !f) return LOWP_EINVAL;
  if (lowp_format_validate(f, NULL, 0)) return LOWP_EFORMAT;
  if ((unsigned)rnd >= LOWP_RND_COUNT) return LOWP_EROUND;
  memset(s, 0, sizeof *s);
  lowp_fpx_init(&s->trace);
  s->first_bad = -1;
  s->hist_lo = f->emin - f->precision;
  top = f->emax + 2;
  s->hist_n = top - s->hist_lo + 1;
  if (s->hist_n > LOWP_FPX_HIST) s->hist_n = LOWP_FPX_HIST;
  s->n = n;
  for (i = 0; i < n; i += 4096) { /* in chunks, through the traced array conversion */
    double y[4096];
    size_t c, len = n - i < 4096 ? n - i : 4096;
    lowp_policy_t p = pol ? *pol : (lowp_policy_t){0};
    p.sr_offset += i;
    (void)lowp_fpx_round_array_f64(&s->trace, i, y, x + i, len, f, &p, rnd);
    for (c = 0; c < len; c++) {
      double v = x[i + c];
      int e, b;
      if (!isfinite(v)) {
        if (s->first_bad < 0) s->first_bad = (int64_t)(i + c);
        if (isnan(v)) s->nan_in++;
        else s->inf_in++;
        continue;
      }
      if (v == 0) { s->zero_in++; continue; }
      (void)frexp(v, &e);
      b = e - 1 - s->hist_lo;
      if (b < 0) b = 0;
      if (b >= s->hist_n) b = s->hist_n - 1;
      s->hist[b]++;
    }
  }
  for (k = 0; k < LOWP_FPX_NKINDS; k++)
    if (s->trace.count[k] && (s->first_bad < 0 || s->trace.first[k].i < s->first_bad))
      s->first_bad = s->trace.first[k].i;
  return LOWP_OK;
}

int lowp_fpx_outputs(int64_t *first, unsigned *kinds, int *bad_in, const double *y,
                     size_t n, const double *const *x, const size_t *nx, size_t ninputs) {
  size_t i, q;
  int any_nan = 0, any_inf = 0;
  if (!first || !kinds || (n && !y) || (ninputs && (!x || !nx || !bad_in))) return LOWP_EINVAL;
  *first = -1;
  *kinds = 0;
  for (q = 0; q < ninputs; q++) {
    bad_in[q] = 0;
    for (i = 0; i < nx[q]; i++) {
      if (isnan(x[q][i])) any_nan = 1;
      else if (isinf(x[q][i])) any_inf = 1;
      if (!isfinite(x[q][i])) bad_in[q] = 1;
    }
  }
  for (i = 0; i < n; i++) {
    if (isfinite(y[i])) continue;
    *first = (int64_t)i;
    if (isnan(y[i]))
      *kinds = LOWP_FPX_BIT(any_nan ? LOWP_FPX_NAN_PROP : LOWP_FPX_INVALID);
    else if (!any_inf) /* a NaN input propagates as NaN, never as an infinity */
      *kinds = LOWP_FPX_BIT(LOWP_FPX_OVF_INF);
    break;
  }
  return LOWP_OK;
}

unsigned lowp_fpx_div_eval(lowp_fpx_event_t *ev, int *tern, double *y, double a, double b,
                           const lowp_format_t *f, const lowp_policy_t *pol,
                           lowp_rounding_t rnd) {
  mpfr_t q;
  double x;
  int sticky, t0;
  unsigned in = 0;
  /* the quotient rounded to odd at 120 bits >= 2 p + 2: rounding that once
     to p <= 53 bits is the correct rounding of the exact quotient (Boldo &
     Melquiond, "Emulation of FMA and correctly rounded sums: proved
     algorithms using rounding to odd", IEEE TC 57(4), 2008) */
  mpfr_init2(q, 120);
  mpfr_set_d(q, a, MPFR_RNDN); /* exact */
  lowp_mpfr_make_odd(q, mpfr_div_d(q, q, b, MPFR_RNDZ));
  t0 = lowp_round_mpfr(y, q, f, pol, rnd);
  if (tern) *tern = t0;
  if (fabs(*y) > lowp_format_xmin(f) && fabs(*y) < lowp_format_xmax(f)) {
    mpfr_clear(q);
    return 0;
  }
  /* truncating the odd-rounded quotient truncates the exact one */
  x = mpfr_get_d(q, MPFR_RNDZ);
  sticky = mpfr_number_p(q) && mpfr_cmp_d(q, x) != 0;
  if (mpfr_regular_p(q) && mpfr_get_exp(q) > 1024) x = copysign(INFINITY, x); /* >= 2^1024 */
  mpfr_clear(q);
  if (isnan(a) || isnan(b)) in |= LOWP_FPX_IN_NAN;
  if (b == 0 && isfinite(a) && a != 0) in |= LOWP_FPX_IN_DIVZERO;
  return lowp_fpx_eval(ev, LOWP_FPX_OP_DIV, a, b, x, sticky, *y, f, rnd, in);
}

int lowp_fpx_div(lowp_fpx_trace_t *t, const lowp_fpx_event_t *where, double *y, double a,
                 double b, const lowp_format_t *f, const lowp_policy_t *pol,
                 lowp_rounding_t rnd) {
  lowp_fpx_event_t ev;
  unsigned m;
  int tern;
  if (where) ev = *where;
  else lowp_fpx_event_init(&ev);
  m = lowp_fpx_div_eval(&ev, &tern, y, a, b, f, pol, rnd);
  if (!t) return tern;
  t->ops++;
  lowp_fpx_record_ref(t, m, &ev, f, rnd, NULL, 0);
  return tern;
}

unsigned lowp_fpx_eval(lowp_fpx_event_t *ev, lowp_fpx_op_t op, double a, double b, double x,
                       int sticky, double y, const lowp_format_t *f, lowp_rounding_t rnd,
                       unsigned in) {
  unsigned m = lowp_fpx_classify(f, rnd, x, sticky, y, in);
  if (!m) return 0;
  ev->op = op;
  ev->a = lowp_fpx_bits(a);
  ev->b = lowp_fpx_bits(b);
  ev->r = lowp_fpx_bits(y);
  ev->exact = x;
  ev->sticky = sticky;
  return m;
}

void lowp_fpx_record_ref(lowp_fpx_trace_t *t, unsigned mask, lowp_fpx_event_t *ev,
                         const lowp_format_t *f, lowp_rounding_t rnd, const double *ref, int ref_sticky) {
  if (!mask) return;
  ev->inherent = ref ? lowp_fpx_inherent(f, rnd, lowest(mask), *ref, ref_sticky)
                     : lowp_fpx_inherent(f, rnd, lowest(mask), ev->exact, ev->sticky);
  lowp_fpx_record(t, mask, ev);
}
