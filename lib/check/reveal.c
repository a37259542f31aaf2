/* lowp_reveal -- probe a subject: conversions, accumulator precision, position classes, the order of each class */

/*
 * The method is described in check/reveal.h. This file makes the calls:
 * the geometry of the four operations (which input row carries a probe,
 * which output reads it), the conversion and precision probes, the choice
 * of M and the unit for the formats at hand, the classification of output
 * positions, and the LCA oracle that reveal_order.c drives. The arithmetic
 * and the validation of the twins are in reveal_arith.c.
 */

#include "check/reveal_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng/rng.h"
#include "spread.h"
#include "status.h"
#include "io/escape.h"

/* ------------------------------------------------------------ geometry */

size_t lowp__per_a(const lowp__geo_t *g) { return g->R * g->K; }

size_t lowp__per_b(const lowp__geo_t *g) {
  return g->op == LOWP_OP_SUM ? 0 : g->op == LOWP_OP_GEMM ? g->K * g->C : g->K;
}

double *lowp__slot_a(const lowp__geo_t *g, double *a, size_t s) { return a + s * g->K; }

double *lowp__slot_b(const lowp__geo_t *g, double *b, size_t s, size_t l, size_t j) {
  size_t bt = s / g->R;
  if (g->op == LOWP_OP_SUM) return NULL;
  if (g->op == LOWP_OP_GEMM) return b + bt * g->K * g->C + l * g->C + j;
  return b + bt * g->K + l;
}

int lowp__reveal_call(lowp__geo_t *g, size_t batch, const double *a, const double *b, double *out) {
  const double *in[2];
  double *o[1];
  int st;
  g->p.dims.batch = batch;
  in[0] = a;
  in[1] = b;
  o[0] = out;
  g->calls++;
  st = g->s->run(g->s, o, in, &g->p, g->err, g->errlen);
  return st;
}

int lowp__geo_init(lowp__geo_t *g, const lowp_subject_t *s, const lowp_problem_t *p,
                   const lowp_reveal_opts_t *o, char *err, size_t errlen) {
  memset(g, 0, sizeof *g);
  g->s = s;
  g->p = *p;
  g->op = p->op->id;
  g->err = err;
  g->errlen = errlen;
  g->max_elems = o && o->max_elems ? o->max_elems : ((size_t)1 << 25);
  g->acc_bits = o ? o->acc_bits : 0;
  g->m_out_range = o ? o->m_out_range : 0;
  g->normal_units = o ? o->normal_units : 0;
  switch (g->op) {
  case LOWP_OP_SUM: g->K = p->dims.n; g->R = p->dims.m; g->C = 1; break;
  case LOWP_OP_DOT: g->K = p->dims.k; g->R = 1; g->C = 1; break;
  case LOWP_OP_GEMV: g->K = p->dims.k; g->R = p->dims.m; g->C = 1; break;
  case LOWP_OP_GEMM: g->K = p->dims.k; g->R = p->dims.m; g->C = p->dims.n; break;
  default:
    lowp_errf(err, errlen, 0, "reveal: %s is not a sum of products (sum, dot, gemv, gemm)", p->op->name);
    return LOWP_EUNSUPPORTED;
  }
  if (g->K < 2 || g->R == 0 || g->C == 0) {
    lowp_errf(err, errlen, 0, "reveal: %zu terms per output: there is no order to reveal", g->K);
    return LOWP_EUNSUPPORTED;
  }
  return LOWP_OK;
}

/* batch entries that fit max_elems (at least 1), and at most want */
static size_t batch_cap(const lowp__geo_t *g, size_t want) {
  size_t per = lowp__per_a(g) + lowp__per_b(g), cap = g->max_elems / (per ? per : 1);
  if (cap < 1) cap = 1;
  return want < cap ? (want ? want : 1) : cap;
}

typedef struct {
  double *a, *b, *out;
} bufs_t;

static int bufs_get(bufs_t *x, const lowp__geo_t *g, size_t batch) {
  size_t na = batch * lowp__per_a(g), nb = batch * lowp__per_b(g), no = batch * g->R * g->C;
  x->a = calloc(na + 1, sizeof *x->a);
  x->b = calloc(nb + 1, sizeof *x->b);
  x->out = calloc(no + 1, sizeof *x->out);
  return x->a && x->b && x->out ? LOWP_OK : LOWP_ENOMEM;
}

static void bufs_free(bufs_t *x) {
  free(x->a); free(x->b); free(x->out);
  memset(x, 0, sizeof *x);
}

/* the format an input is read in: its conversion, else its declared format */
static const lowp_format_t *eff(const lowp_reveal_t *r, const lowp__geo_t *g, int w) {
  return r->conv[w].converted ? &r->conv[w].fmt : &g->p.in[w];
}

static double rnd_to(double v, const lowp_format_t *f, lowp_rounding_t m) {
  double y;
  (void)lowp_round_f64(&y, v, f, NULL, m);
  return y;
}

int lowp__reveal_convert(double *dst, const double *src, size_t n, const lowp_reveal_conv_t *c) {
  size_t i;
  if (!c->converted) { if (dst != src) memcpy(dst, src, n * sizeof *dst); return LOWP_OK; }
  for (i = 0; i < n; i++) dst[i] = rnd_to(src[i], &c->fmt, c->rnd);
  return LOWP_OK;
}

/* --------------------------------------------------------- conversions */

static const lowp_format_t *const conv_fmts[] = {&LOWP_FMT_TF32, &LOWP_FMT_FP16, &LOWP_FMT_BF16,
                                                 &LOWP_FMT_E4M3, &LOWP_FMT_E5M2};
static const lowp_rounding_t conv_rnds[] = {LOWP_RND_NE, LOWP_RND_TZ, LOWP_RND_NA};
#define N_CONV (sizeof conv_fmts / sizeof conv_fmts[0])
#define N_CRND (sizeof conv_rnds / sizeof conv_rnds[0])

/* a value of f (declared) in [2^-4, 2^4), random sign, sometimes a tie of a
   narrower candidate (so that rne, rna and rtz differ): of 11 bits (fp16,
   tf32), 8 (bf16) or pmid (a declared conversion's precision; 0: none) */
static double conv_value(uint64_t seed, size_t i, const lowp_format_t *f, int pmid) {
  uint64_t r = lowp_rng_u64(seed, i, 41);
  double v = ldexp(1.0 + (double)(r >> 12) / 4503599627370496.0, (int)((r >> 4) % 9) - 4);
  /* below fp16's normal range: fp16 keeps fewer bits there than tf32 (an
     overflowing value would not do: inf x 0 makes every output NaN) */
  if ((r & 0x70) == 0x10) return rnd_to(ldexp((r & 1) ? -v : v, -22), f, LOWP_RND_NE);
  if ((r & 6) == 2) { /* a midpoint */
    int p = (r & 8) ? 8 : (pmid > 1 && (r & 0x80)) ? pmid : 11;
    v = ldexp(floor(ldexp(v, p - 1 - ((int)((r >> 4) % 9) - 4))) + 0.5, ((int)((r >> 4) % 9) - 4) - (p - 1));
  }
  return rnd_to((r & 1) ? -v : v, f, LOWP_RND_NE);
}

/* Call the subject on input w's conversion probe: random values on its
   declared grid, its partner one-hot with the value 1.5 (so that an
   accumulator narrower than the output is not mistaken for a conversion:
   1.5 x fp16(v) is exact in fp32, fp16(1.5 v) is not), each output one value
   as the kernel read it. x: the buffers (bufs_free them), *nslot slots. */
static int conv_call(bufs_t *x, size_t *nslot, lowp__geo_t *g, int w, uint64_t seed, int pmid) {
  size_t per = g->R * g->C, batch = batch_cap(g, (2048 + per - 1) / per), s, j, l;
  const lowp_format_t *decl = &g->p.in[w];
  double part = g->op == LOWP_OP_SUM ? 1.0 : 1.5;
  int st;
  *nslot = batch * g->R;
  if ((st = bufs_get(x, g, batch))) return st;
  /* fill (the buffers start at zero): the partner one-hot (1.5), and the
     tested input random where an output reads it */
  for (s = 0; s < *nslot; s++) {
    double *ar = lowp__slot_a(g, x->a, s);
    size_t bt = s / g->R;
    if (g->op == LOWP_OP_SUM) ar[s % g->K] = conv_value(seed, s, decl, pmid);
    else if (w == 1) ar[s % g->K] = part;
    else if (g->op == LOWP_OP_GEMM)
      for (j = 0; j < g->C && j < g->K; j++) ar[j] = conv_value(seed, s * g->K + j, decl, pmid);
    else ar[bt % g->K] = conv_value(seed, s, decl, pmid);
    if (g->op == LOWP_OP_SUM) continue;
    if (w == 1) { /* the row of B (or x) that slot s's one-hot picks */
      for (j = 0; j < g->C; j++)
        *lowp__slot_b(g, x->b, s, s % g->K, j) = conv_value(seed ^ 0x5bd1e995u, s * g->C + j, decl, pmid);
      continue;
    }
    if (s % g->R) continue;
    for (l = 0; l < g->K; l++)
      for (j = 0; j < g->C; j++)
        *lowp__slot_b(g, x->b, s, l, j) =
            (l == (g->op == LOWP_OP_GEMM ? j % g->K : bt % g->K)) ? part : 0.0;
  }
  return lowp__reveal_call(g, batch, x->a, x->b, x->out);
}

/* 1 when every output of conv_call is input w's value read as f with rnd
   (f NULL: as declared) */
static int conv_fits(const lowp__geo_t *g, int w, const bufs_t *x, size_t nslot, const lowp_format_t *f,
                     lowp_rounding_t rnd) {
  double part = g->op == LOWP_OP_SUM ? 1.0 : 1.5;
  size_t s, j;
  for (s = 0; s < nslot; s++)
    for (j = 0; j < g->C; j++) {
      double v, y, got = x->out[s * g->C + j];
      size_t bt = s / g->R, lk;
      if (g->op == LOWP_OP_SUM) v = lowp__slot_a(g, x->a, s)[s % g->K];
      else if (w == 1) { lk = s % g->K; v = *lowp__slot_b(g, x->b, s, lk, j); }
      else { lk = g->op == LOWP_OP_GEMM ? j % g->K : bt % g->K; v = lowp__slot_a(g, x->a, s)[lk]; }
      if (f) v = rnd_to(v, f, rnd);
      y = rnd_to(part * v, &g->p.out, LOWP_RND_NE);
      /* +0 and -0 alike: a kernel's sum starts from +0 */
      if (!(y == got || (y != y && got != got))) return 0;
    }
  return 1;
}

/* the conversion of input w among the candidates (conv_fmts x conv_rnds) */
static int conv_probe(lowp_reveal_t *r, lowp__geo_t *g, int w, uint64_t seed) {
  size_t nslot = 0, i;
  bufs_t x;
  const lowp_format_t *decl = &g->p.in[w];
  int st, best = -1, nfit = 0, c;
  lowp_reveal_conv_t *cv = &r->conv[w];
  memset(cv, 0, sizeof *cv);
  for (c = 0; c < (int)N_CONV; c++) cv->tested |= conv_fmts[c]->precision < decl->precision;
  if (!cv->tested) return LOWP_OK;
  st = conv_call(&x, &nslot, g, w, seed, 0);
  if (st == LOWP_OK && !conv_fits(g, w, &x, nslot, NULL, LOWP_RND_NE)) {
    cv->unexplained = 1;
    for (i = 0; i < N_CONV * N_CRND; i++) {
      const lowp_format_t *f = conv_fmts[i / N_CRND];
      if (f->precision >= decl->precision || !conv_fits(g, w, &x, nslot, f, conv_rnds[i % N_CRND])) continue;
      if (best < 0) best = (int)i;
      nfit++;
    }
  }
  bufs_free(&x);
  if (st || best < 0) return st;
  cv->converted = 1;
  cv->unexplained = 0;
  cv->fmt = *conv_fmts[best / N_CRND];
  cv->rnd = conv_rnds[best % N_CRND];
  cv->ambiguous = nfit > 1;
  return LOWP_OK;
}

int lowp_reveal_conv_verify(int *fits, int *as_declared, const lowp_subject_t *s, const lowp_problem_t *p,
                            int w, const lowp_format_t *f, lowp_rounding_t rnd, uint64_t seed, char *err,
                            size_t errlen) {
  lowp__geo_t g;
  bufs_t x;
  size_t nslot = 0;
  int st;
  lowp_problem_t q = *p;
  *fits = *as_declared = 0;
  memset(&x, 0, sizeof x);
  q.dims.batch = 1;
  if ((st = lowp__geo_init(&g, s, &q, NULL, err, errlen))) return st;
  if (w < 0 || w >= (g.op == LOWP_OP_SUM ? 1 : 2)) return LOWP_EINVAL;
  st = conv_call(&x, &nslot, &g, w, seed, f->precision);
  if (st == LOWP_OK) {
    *fits = conv_fits(&g, w, &x, nslot, f, rnd);
    *as_declared = conv_fits(&g, w, &x, nslot, NULL, LOWP_RND_NE);
  }
  bufs_free(&x);
  return st;
}

/* ---------------------------------------------------- precision probe */

/* the exponents an input may take: its subnormals with sub, else normals */
static int exp_lo(const lowp_format_t *f, int sub) {
  return f->emin - (sub && f->subnormals ? f->precision - 1 : 0);
}

/* rows t = t0 + 1 .. t0 + T of the precision probe with the small term a
   product of both inputs (one t per batch entry, input 1 set per entry):
   2^E0 and 2^(E0 - t), E0 = e0 + eb0; where input 0 alone cannot hold
   2^(e0 - t) (e4m3: 2^-9 .. 2^8), their products can (2^-18 .. 2^16).
   Lowers r->precision_seen at the first t that fails. */
static int precision_split(lowp_reveal_t *r, lowp__geo_t *g, int e0, int t0, int *failed) {
  const lowp_format_t *fa = eff(r, g, 0), *fb = eff(r, g, 1);
  int eb0 = 14 - e0 < fb->emax - 1 ? 14 - e0 : fb->emax - 1, E0, T, t;
  size_t batch, s, l, j, bt;
  bufs_t x;
  int st;
  if (eb0 < 0) eb0 = 0;
  E0 = e0 + eb0;
  T = E0 - exp_lo(fa, 1) - exp_lo(fb, 1) - t0;
  if (T > 60 - t0) T = 60 - t0;
  if (T <= 0) return LOWP_OK;
  batch = batch_cap(g, (size_t)T);
  if ((int)batch < T) T = (int)batch;
  if ((st = bufs_get(&x, g, batch))) return st;
  for (bt = 0; bt < batch; bt++) {
    int es = E0 - (t0 + (int)bt + 1), ea = (es + 1) / 2, eb; /* the small product, split evenly */
    if (ea < exp_lo(fa, 1)) ea = exp_lo(fa, 1);
    if (ea > fa->emax - 1) ea = fa->emax - 1;
    eb = es - ea;
    if (eb < exp_lo(fb, 1)) { eb = exp_lo(fb, 1); ea = es - eb; }
    if (eb > fb->emax - 1) { eb = fb->emax - 1; ea = es - eb; }
    for (s = bt * g->R; s < (bt + 1) * g->R; s++) {
      double *ar = lowp__slot_a(g, x.a, s);
      ar[0] = ldexp(1.0, e0);
      ar[1] = ldexp(1.0, ea);
    }
    for (l = 0; l < 2; l++)
      for (j = 0; j < g->C; j++) *lowp__slot_b(g, x.b, bt * g->R, l, j) = ldexp(1.0, l ? eb : eb0);
  }
  st = lowp__reveal_call(g, batch, x.a, x.b, x.out);
  for (bt = 0; bt < batch && st == LOWP_OK && !*failed; bt++) {
    t = t0 + (int)bt + 1;
    if (x.out[bt * g->R * g->C] - ldexp(1.0, E0) != ldexp(1.0, E0 - t)) {
      r->precision_seen = t;
      *failed = 1;
    }
  }
  if (!*failed && st == LOWP_OK) r->precision_seen = t0 + T + 1;
  bufs_free(&x);
  return st;
}

/* the accumulator bits seen at the output: rows t = 1..T add 2^e0 and
   2^(e0-t); where no t fails and input 0 ran out of range, products of
   both inputs go further (precision_split); r->precision_lower when no t
   failed at all */
static int precision_probe(lowp_reveal_t *r, lowp__geo_t *g) {
  const lowp_format_t *fa = eff(r, g, 0), *fo = &g->p.out;
  /* at most 2^14: products that a kernel rounds to fp16 stay finite */
  int e0 = (fa->emax < fo->emax ? fa->emax : fo->emax) < 15 ? (fa->emax < fo->emax ? fa->emax : fo->emax) - 1 : 14;
  int T, t, failed = 0;
  size_t nslot, batch, s, l, j;
  bufs_t x;
  int st;
  T = e0 - (fa->emin - (fa->subnormals ? fa->precision - 1 : 0));
  if (T > 60) T = 60;
  batch = batch_cap(g, ((size_t)T + g->R - 1) / g->R);
  nslot = batch * g->R;
  if ((st = bufs_get(&x, g, batch))) return st;
  for (s = 0; s < nslot; s++) {
    double *ar = lowp__slot_a(g, x.a, s);
    t = (int)(s % (size_t)T) + 1;
    ar[0] = ldexp(1.0, e0);
    ar[1] = ldexp(1.0, e0 - t);
  }
  for (s = 0; s < nslot && g->op != LOWP_OP_SUM; s++)
    for (l = 0; l < g->K; l++)
      for (j = 0; j < g->C; j++) *lowp__slot_b(g, x.b, s, l, j) = 1.0;
  st = lowp__reveal_call(g, batch, x.a, x.b, x.out);
  r->precision_seen = T + 1; /* none failed: at least T + 1 bits */
  for (s = 0; s < nslot && st == LOWP_OK; s++) {
    t = (int)(s % (size_t)T) + 1;
    /* exact at t < P; 2^e0 (1 + 2^-P) is a tie, rounded away at t = P under rne */
    /* out - 2^e0 is exact (Sterbenz); 2^e0 + 2^(e0-t) itself would round in binary64 */
    if (x.out[s * g->C] - ldexp(1.0, e0) != ldexp(1.0, e0 - t) && t < r->precision_seen) {
      r->precision_seen = t;
      failed = 1;
    }
  }
  bufs_free(&x);
  if (st == LOWP_OK && !failed && T < 60 && g->op != LOWP_OP_SUM) st = precision_split(r, g, e0, T, &failed);
  r->precision_lower = st == LOWP_OK && !failed;
  return st;
}

/* ------------------------------------------------------------- scales */

typedef struct {
  double ua, Ma, bv; /* unit and M in input 0, input 1 at the units (every term unless split) */
  double bM;         /* input 1 at the two masks (bv unless split) */
  int split;         /* M's magnitude shared by both operands: input 1 differs per probe */
  double unit;       /* the product of a unit, signed */
  int sub;           /* the unit's product a subnormal number of the output */
  size_t win, nw;    /* units in windows of win terms, one window per probe (nw of them:
                        nw = 1, win = K unless M / unit cannot span K units) */
} scales_t;

static int ceil_log2(size_t k) {
  int e = 0;
  while (((size_t)1 << e) < k) e++;
  return e;
}

/* 1 when products 2^EU (unit) and 2^EB (M) suit the output (and fp16 when narrow): the unit a
   number of the output, subnormal unless normal (a count c <= 2^p of units, c 2^EU, is then
   exact: a multiple of the subnormals' spacing below 2^emin, of p bits above) */
static int products_fit(const lowp_format_t *fo, int emaxM, int EU, int EB, int narrow, int normal) {
  if (EU < fo->emin - (normal || !fo->subnormals ? 0 : fo->precision - 1) || EB > emaxM - 1) return 0;
  /* narrow: products that fp16 holds too (kernels that round products to it) */
  return !narrow || (EU >= LOWP_FMT_FP16.emin - 10 && EB <= LOWP_FMT_FP16.emax - 1);
}

static void set_scales(scales_t *sc, const lowp_format_t *fo, int sign, int eu, int eM, int ebu, int ebM) {
  sc->sub = eu + ebu < fo->emin;
  sc->ua = ldexp(1.0, eu);
  sc->Ma = ldexp(1.0, eM);
  sc->bv = ldexp(1.0, ebu);
  sc->bM = ldexp(1.0, ebM);
  sc->split = ebu != ebM;
  sc->unit = sign * ldexp(1.0, eu + ebu);
}

/* M / unit = 2^D with M's magnitude split across both operands (the probed
   quantity is the product a_l b_l): a = 2^eM, b = 2^ebM at the masks, a =
   2^eu, b = 2^ebu at the units, so that the span of products (fp16: 2^-48 to
   2^30) rather than of one input bounds D. Input 1 then differs per probe:
   one probe per batch entry. */
static int choose_split(scales_t *sc, const lowp_format_t *fa, const lowp_format_t *fb,
                        const lowp_format_t *fo, int emaxM, int D, int sign, int narrow, int normal) {
  int eu, ebu, eM, best_score = 1 << 30, found = 0;
  /* every exponent of either input up to emax (2^emax is a value of every format: e4m3's largest
     binade, 2^8 .. 448, gives M two more bits than emax - 1 would, and its windows 4x the terms) */
  for (eu = exp_lo(fa, 1); eu <= fa->emax; eu++)
    for (ebu = exp_lo(fb, 1); ebu <= fb->emax; ebu++)
      for (eM = eu; eM <= fa->emax && products_fit(fo, emaxM, eu + ebu, eu + ebu + D, narrow, normal); eM++) {
        int EU = eu + ebu, EB = EU + D, ebM = EB - eM, score;
        if (ebM < fb->emin || ebM > fb->emax) continue;
        score = (eu < fa->emin ? 100000 : 0) + (ebu < fb->emin ? 100000 : 0) + (EU < fo->emin ? 100000 : 0) +
                abs(EU + EB) + abs(eM - ebM) + abs(eu - ebu);
        if (score < best_score) {
          best_score = score;
          set_scales(sc, fo, sign, eu, eM, ebu, ebM);
          found = 1;
        }
      }
  return found;
}

/* M and the unit for windows of w units: M / unit = 2^D, D = ceil(log2 w)
   + P + 1 (absorption in P bits); the unit's product a number of the
   output (products_fit), M's product in the output's range; units normal
   in the input and the output preferred, then the span centred on 1. Input 1 is one value throughout where input 0
   alone holds the span; else (not a sum) the span is split across both
   (choose_split). */
static int scales_for(scales_t *sc, const lowp_format_t *fa, const lowp_format_t *fb,
                      const lowp_format_t *fo, int emaxM, int P, size_t w, int sign, int narrow, int normal) {
  int D = ceil_log2(w) + P + 1, eb, eu, best_score = 1 << 30, found = 0;
  int ebl = fb ? fb->emin : 0, ebh = fb ? fb->emax - 1 : 0;
  for (eb = ebl; eb <= ebh; eb++)
    for (eu = exp_lo(fa, 1); eu + D <= fa->emax - 1; eu++) {
      int EU = eu + eb, EB = eu + D + eb, score;
      if (!products_fit(fo, emaxM, EU, EB, narrow, normal)) continue;
      score = (eu < fa->emin ? 100000 : 0) + (EU < fo->emin ? 100000 : 0) + abs(EU + EB) + abs(eb);
      if (score < best_score) {
        best_score = score;
        set_scales(sc, fo, sign, eu, eu + D, eb, eb);
        found = 1;
      }
    }
  if (!found && fb) found = choose_split(sc, fa, fb, fo, emaxM, D, sign, narrow, normal);
  return found;
}

/* the scales, and windows where the span of M / unit cannot cover K units
   or the accumulator (or the output) cannot count them: the units of a
   probe are confined to one window of w = ceil(K / nw) terms, the others
   are 0 (added exactly), and the nw probes of a pair together count the
   leaves under the LCA (the oracle sums them). nw = 1 where K fits, so the
   probes are FPRev's. */
static int choose_scales(scales_t *sc, const lowp_reveal_t *r, const lowp__geo_t *g, int sign,
                         int narrow) {
  const lowp_format_t *fa = eff(r, g, 0), *fb = g->op == LOWP_OP_SUM ? NULL : eff(r, g, 1);
  const lowp_format_t *fo = &g->p.out;
  int P = r->precision_seen, Pc, emaxM = fo->emax;
  size_t nw = 1, w = g->K;
  if (r->precision_lower && P < fo->precision) P = fo->precision; /* the output's, at least */
  /* the output may hide a wider accumulator (not under m_out_range 1: one of the output's format) */
  if (P >= fo->precision && fo->precision < 24 && g->m_out_range != 1) P = 24;
  if (g->acc_bits > P) P = g->acc_bits;                 /* a retry's, or the caller's */
  /* M's products in the range of the accumulator assumed (P > the output's bits: M cancels before
     the result is rounded to the output), unless m_out_range keeps them in the output's: 1 an
     accumulator of the output's format, 2 any of up to P bits whose partial sums the kernel may
     also round to the output (M / unit within the output's range: small windows, many probes) */
  if (P > fo->precision && !g->m_out_range) emaxM = P > 24 ? LOWP_FMT_FP64.emax : LOWP_FMT_FP32.emax;
  if (emaxM < fo->emax) emaxM = fo->emax;
  /* the counts a node and the output must hold exactly */
  Pc = r->precision_seen < fo->precision ? r->precision_seen : fo->precision;
  if (Pc > 60) Pc = 60;
  for (;;) {
    w = (g->K + nw - 1) / nw;
    if (w < 2) break;
    if (w <= ((size_t)1 << Pc) && scales_for(sc, fa, fb, fo, emaxM, P, w, sign, narrow, g->normal_units)) {
      sc->win = w;
      sc->nw = (g->K + w - 1) / w;
      return LOWP_OK;
    }
    nw *= 2;
  }
  if (g->err && g->errlen)
    snprintf(g->err, g->errlen,
             "reveal: %s x %s products cannot hold M / unit = 2^%d (2 units, %d accumulator bits "
             "seen) with the output %s: no probe absorbs",
             fa->name, fb ? fb->name : "-", 1 + P + 1, r->precision_seen, fo->name);
  return LOWP_EUNSUPPORTED;
}

/* --------------------------------------------------------- the oracle */

typedef struct {
  lowp__geo_t *g;
  scales_t sc;
  const size_t *rows, *cols; /* the class's rows and a column of each */
  size_t nrows;
  size_t calls, probes;
  char msg[400]; /* why the outputs are not counts */
  bufs_t x;      /* one call's buffers, kept across the class's calls (rows outside the class stay 0) */
  size_t xbatch; /* their batch entries (0: none yet) */
  size_t bfill;  /* entries whose input 1 holds the units' values (not split) */
} oracle_t;

/* windows of win over n leaves */
static size_t nwin(const scales_t *sc, size_t n) { return (n + sc->win - 1) / sc->win; }

/* 1: pq's units are its sub in windows, then outer alone (fewer probes than its scope) */
static int use_sub(const scales_t *sc, const lowp__pair_t *pq) {
  return sc->nw > 1 && pq->sub && pq->scope && nwin(sc, pq->nsub) + 1 < nwin(sc, pq->nscope);
}

/* the windows of a probe: 1 where K units fit (every term a unit), else
   its scope (the leaves of a node that holds the LCA: the only units it
   needs) in windows of win, or its sub in windows and one for outer */
static size_t pair_windows(const scales_t *sc, size_t K, const lowp__pair_t *pq) {
  if (sc->nw == 1) return 1;
  return use_sub(sc, pq) ? nwin(sc, pq->nsub) + 1 : nwin(sc, pq->scope ? pq->nscope : K);
}

/* probe pq's row: units in window w (every term when nw = 1; outer alone
   in the last window of a sub), +-M at x and y, 0 elsewhere; returns the
   units */
static size_t fill_probe(double *ar, size_t K, const scales_t *sc, const lowp__pair_t *pq, size_t w) {
  int sub = use_sub(sc, pq);
  const size_t *set = sub ? pq->sub : pq->scope;
  size_t l, i, ns = sub ? pq->nsub : pq->scope ? pq->nscope : K, lo = w * sc->win, hi, units = 0;
  double u = sc->unit < 0 ? -sc->ua : sc->ua;
  if (sc->nw == 1) { lo = 0; hi = K; ns = K; }
  hi = lo + sc->win < ns ? lo + sc->win : ns;
  if (sc->nw > 1) memset(ar, 0, K * sizeof *ar);
  if (sub && w == nwin(sc, pq->nsub)) { /* outer's window */
    ar[pq->outer] = u;
    units = 1;
    lo = hi = 0;
  }
  for (i = lo; i < hi; i++) {
    l = sc->nw > 1 && set ? set[i] : i;
    ar[l] = u;
    units += l != pq->x && l != pq->y;
  }
  ar[pq->x] = sc->Ma;
  ar[pq->y] = -sc->Ma;
  return units;
}

/* input 1 of slot s's batch entry for the probe (x, y): bv, and bM at x and
   y; in column jc alone (jc < C: a split probe of a GEMM row) or in all */
static void fill_probe_b(const lowp__geo_t *g, double *b, size_t s, const scales_t *sc, size_t x,
                         size_t y, size_t jc) {
  size_t l, j;
  if (g->op == LOWP_OP_SUM) return;
  for (l = 0; l < g->K; l++)
    for (j = jc < g->C ? jc : 0; j < (jc < g->C ? jc + 1 : g->C); j++)
      *lowp__slot_b(g, b, s, l, j) = (l == x || l == y) ? sc->bM : sc->bv;
}

/* run nq probes (pw[2 s]: the pair, pw[2 s + 1]: the window) in batched
   calls; lost[s]: the units of probe s under the LCA (its units less its
   count) */
static int probe_run(oracle_t *o, size_t *lost, const lowp__pair_t *pairs, const size_t *pw, size_t nq) {
  lowp__geo_t *g = o->g;
  size_t done = 0, batch, s, bt, q, *units;
  bufs_t x;
  int st = LOWP_OK;
  if (!nq) return LOWP_OK;
  units = malloc(nq * sizeof *units);
  batch = batch_cap(g, (nq + o->nrows - 1) / o->nrows);
  if (batch > o->xbatch) { /* fresh zeroed buffers (a probe writes whole rows of the class's rows) */
    bufs_free(&o->x);
    o->xbatch = o->bfill = 0;
    if (bufs_get(&o->x, g, batch) == LOWP_OK) o->xbatch = batch;
    else bufs_free(&o->x);
  }
  x = o->x;
  if (!units || !o->xbatch) {
    free(units);
    return LOWP_ENOMEM;
  }
  if (batch > o->xbatch) batch = o->xbatch;
  for (s = o->bfill * g->R; s < batch * g->R && !o->sc.split; s += g->R) fill_probe_b(g, x.b, s, &o->sc, 0, 0, g->C);
  if (batch > o->bfill) o->bfill = batch;
  while (done < nq && st == LOWP_OK) {
    size_t take = nq - done < batch * o->nrows ? nq - done : batch * o->nrows, nb;
    nb = (take + o->nrows - 1) / o->nrows;
    /* rows outside o->rows stay 0 (calloc); fill_probe writes a whole row */
    for (q = 0; q < take; q++) {
      const lowp__pair_t *pq = &pairs[pw[2 * (done + q)]];
      bt = q / o->nrows;
      s = bt * g->R + o->rows[q % o->nrows];
      units[done + q] = fill_probe(lowp__slot_a(g, x.a, s), g->K, &o->sc, pq, pw[2 * (done + q) + 1]);
      /* a split probe: its own column of B (the class's rows of a batch entry in distinct columns) */
      if (o->sc.split)
        fill_probe_b(g, x.b, s, &o->sc, pq->x, pq->y, g->op == LOWP_OP_GEMM ? o->cols[q % o->nrows] : g->C);
    }
    st = lowp__reveal_call(g, nb, x.a, x.b, x.out);
    o->calls++;
    for (q = 0; q < take && st == LOWP_OK; q++) {
      const lowp__pair_t *pq = &pairs[pw[2 * (done + q)]];
      double v, cnt;
      bt = q / o->nrows;
      s = bt * g->R + o->rows[q % o->nrows];
      v = x.out[s * g->C + o->cols[q % o->nrows]];
      cnt = v / o->sc.unit;
      if (!(cnt >= 0 && cnt <= (double)units[done + q] && cnt == floor(cnt))) {
        st = LOWP_EINVAL;
        snprintf(o->msg, sizeof o->msg,
                 "probe (%zu, %zu) gave %.17g, not a count of units (an accumulator that does not "
                 "absorb, rounds toward zero, or holds fewer bits than K needs)",
                 pq->x, pq->y, v);
        break;
      }
      lost[done + q] = units[done + q] - (size_t)cnt;
    }
    done += take;
  }
  o->probes += nq;
  free(units);
  return st;
}

/* a first-round probe of pair q: its window w (of its unit set), the units lost */
typedef struct {
  size_t x, w, lost, q;
  uintptr_t set;
} first_t;

/* by pivot, set, window and count (a group), then pair */
static int cmp_first_key(const first_t *u, const first_t *v) {
  if (u->x != v->x) return u->x < v->x ? -1 : 1;
  if (u->set != v->set) return u->set < v->set ? -1 : 1;
  if (u->w != v->w) return u->w < v->w ? -1 : 1;
  return u->lost < v->lost ? -1 : u->lost > v->lost;
}

static int cmp_first(const void *a, const void *b) {
  const first_t *u = a, *v = b;
  int c = cmp_first_key(u, v);
  return c ? c : u->q < v->q ? -1 : u->q > v->q;
}

/* the unit set of pq's windows (NULL: leaf i is element i) */
static const size_t *unit_set(const scales_t *sc, const lowp__pair_t *pq) {
  return use_sub(sc, pq) ? pq->sub : pq->scope;
}

/* the window of pq's unit set that holds y ((size_t)-1: none); map[leaf] is
   its index in the set last mapped (*mapped) */
static size_t window_of(const scales_t *sc, const lowp__pair_t *pq, size_t *map, const size_t **mapped,
                        size_t K) {
  const size_t *set = unit_set(sc, pq);
  size_t i, n = use_sub(sc, pq) ? pq->nsub : pq->nscope;
  if (!set) return pq->y / sc->win;
  if (*mapped != set) {
    for (i = 0; i < K; i++) map[i] = (size_t)-1;
    for (i = 0; i < n; i++) map[set[i]] = i;
    *mapped = set;
  }
  return map[pq->y] == (size_t)-1 ? (size_t)-1 : map[pq->y] / sc->win;
}

/* pair pq's size from the units lost in its window w */
static void size_add(size_t *size, const scales_t *sc, const lowp__pair_t *pq, size_t w, size_t lost) {
  if (use_sub(sc, pq) && w == nwin(sc, pq->nsub)) {
    if (lost == 1) *size = (size_t)-1; /* outer is under the LCA: the LCA is the node of P leaves */
  } else if (*size != (size_t)-1) {
    *size += lost;
  }
}

/*
 * The sizes of n pairs. Where K units fit one probe, a pair is one probe.
 * Else a pair is one probe per window of its unit set, and lowp probes in
 * two steps. First, each pair (x, y) in the window that holds y alone: the
 * units of that window under LCA(x, y). The LCAs of x with the other leaves
 * are x's ancestors, nested: if LCA(x, y) is below LCA(x, y'), y' is under
 * the larger and not the smaller, so for y and y' of one window the larger
 * holds more of the window's units. Pairs of one pivot, window and count
 * therefore share their LCA. Second, one pair of each such group is probed
 * in its other windows (its size: 2 + the units lost in all of them), and
 * the group takes its size. A chain (every ancestor one leaf larger) costs
 * as before; a pivot whose ancestors each take many leaves of a window (the
 * lanes of a SIMD kernel) costs about one probe per pair instead of one per
 * window (e4m3 at K = 4096: windows of 512 terms).
 */
static int oracle(void *ctx, size_t *sizes, const lowp__pair_t *pairs, size_t n) {
  oracle_t *o = ctx;
  lowp__geo_t *g = o->g;
  size_t nA = 0, nB = 0, q, s, i, j, *pw = NULL, *lost = NULL, *map = NULL, *rep = NULL;
  const size_t *mapped = NULL;
  first_t *fa = NULL;
  int st = LOWP_OK;
  /* at most every window of every pair */
  for (q = 0; q < n; q++) nB += pair_windows(&o->sc, g->K, &pairs[q]);
  pw = calloc(2 * nB + 1, sizeof *pw);
  lost = malloc((nB + 1) * sizeof *lost);
  fa = malloc((n + 1) * sizeof *fa);
  rep = malloc((n + 1) * sizeof *rep);
  map = o->sc.nw > 1 ? malloc((g->K + 1) * sizeof *map) : NULL;
  if (!pw || !lost || !fa || !rep || (o->sc.nw > 1 && !map)) { st = LOWP_ENOMEM; goto done; }
  /* first: one window per pair (the whole of a one-window pair) */
  for (q = 0; q < n; q++) {
    size_t nwq = pair_windows(&o->sc, g->K, &pairs[q]);
    sizes[q] = 2;
    fa[q].x = pairs[q].x;
    fa[q].set = (uintptr_t)unit_set(&o->sc, &pairs[q]);
    fa[q].q = q;
    fa[q].lost = 0;
    fa[q].w = nwq == 1 ? 0 : window_of(&o->sc, &pairs[q], map, &mapped, g->K);
    if (fa[q].w == (size_t)-1) continue; /* not in its set: every window second */
    pw[2 * nA] = q;
    pw[2 * nA++ + 1] = fa[q].w;
  }
  if ((st = probe_run(o, lost, pairs, pw, nA))) goto done;
  for (s = 0; s < nA; s++) {
    q = pw[2 * s];
    fa[q].lost = lost[s];
    size_add(&sizes[q], &o->sc, &pairs[q], fa[q].w, lost[s]);
  }
  /* second: the other windows of one pair per (pivot, set, window, count) */
  qsort(fa, n, sizeof *fa, cmp_first);
  for (i = 0, nB = 0; i < n; i = j) {
    size_t w, nwq = pair_windows(&o->sc, g->K, &pairs[fa[i].q]);
    for (j = i + 1; j < n && fa[i].w != (size_t)-1 && !cmp_first_key(&fa[i], &fa[j]); j++) rep[fa[j].q] = fa[i].q;
    rep[fa[i].q] = fa[i].q;
    for (w = 0; w < nwq && nwq > 1; w++)
      if (w != fa[i].w) { pw[2 * nB] = fa[i].q; pw[2 * nB++ + 1] = w; }
  }
  if ((st = probe_run(o, lost, pairs, pw, nB))) goto done;
  for (s = 0; s < nB; s++) size_add(&sizes[pw[2 * s]], &o->sc, &pairs[pw[2 * s]], pw[2 * s + 1], lost[s]);
  for (q = 0; q < n; q++) sizes[q] = sizes[rep[q]];
  for (q = 0; q < n; q++)
    if (sizes[q] == (size_t)-1) sizes[q] = pairs[q].P;
done:
  free(pw); free(lost); free(fa); free(rep); free(map);
  return st;
}

/* ------------------------------------------------------ classification */

typedef struct {
  const double *sig; /* this position's outputs, np of them */
  size_t np, pos;
} sigpos_t;

static int cmp_sig(const void *a, const void *b) {
  const sigpos_t *x = a, *y = b;
  int c = memcmp(x->sig, y->sig, x->np * sizeof *x->sig);
  return c ? c : (x->pos < y->pos ? -1 : x->pos > y->pos);
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

/* classification: batch entry e carries pair e / nw (window e % nw) in
   every row, twice */
static int classify(lowp_reveal_t *r, lowp__geo_t *g, const scales_t *sc, int *counts, int reps) {
  lowp__pair_t pr[8 + 2 * 64];
  size_t K = g->K, np = 0, i, j, s, npos = g->R * g->C, nb, nc = 8, t, nw = sc->nw, ne;
  bufs_t x, y;
  double *sig;
  sigpos_t *order;
  int st;
  size_t cand[8 + 2 * 64][2] = {{0, K - 1}, {0, 1}, {K - 2, K - 1}, {0, K / 2}, {K / 2 - 1, K / 2},
                                {1, K / 2 + 1}, {K / 3, 2 * K / 3}, {K / 4, 3 * K / 4}};
  /* across and within every power-of-two boundary: blocks of a kernel's k
     loop (an edge row of OpenBLAS's dgemm differs from its neighbours only
     at K >= 256, seen by no pair above) */
  memset(pr, 0, sizeof pr); /* scope NULL: every term */
  for (t = 1; t < 64 && ((size_t)1 << t) < K; t++) {
    cand[nc][0] = ((size_t)1 << t) - 1; cand[nc++][1] = (size_t)1 << t;
    cand[nc][0] = 0; cand[nc++][1] = (size_t)1 << t;
  }
  for (i = 0; i < nc; i++) {
    size_t a = cand[i][0], b = cand[i][1], k;
    if (a >= b || b >= K) continue;
    for (k = 0; k < np && !(pr[k].x == a && pr[k].y == b); k++) {}
    if (k == np) { pr[np].x = a; pr[np++].y = b; }
  }
  nb = batch_cap(g, np * nw);
  if (nb < np * nw) np = nb / nw ? nb / nw : 1;
  ne = np * nw;
  if ((st = bufs_get(&x, g, ne)) || (st = bufs_get(&y, g, ne))) { bufs_free(&x); return st; }
  for (s = 0; s < ne * g->R; s++) fill_probe(lowp__slot_a(g, x.a, s), K, sc, &pr[s / g->R / nw], s / g->R % nw);
  for (s = 0; s < ne * g->R; s += g->R)
    fill_probe_b(g, x.b, s, sc, pr[s / g->R / nw].x, pr[s / g->R / nw].y, g->C);
  st = lowp__reveal_call(g, ne, x.a, x.b, x.out);
  r->deterministic = st == LOWP_OK;
  for (i = 1; i < (size_t)reps && st == LOWP_OK; i++) { /* the same inputs again: the same bytes? */
    st = lowp__reveal_call(g, ne, x.a, x.b, y.out);
    r->deterministic &= st == LOWP_OK && !memcmp(x.out, y.out, ne * npos * sizeof *x.out);
  }
  r->calls_classify = (size_t)reps;
  *counts = 1;
  np = ne; /* a signature holds every window's output */
  for (i = 0; i < np * npos && st == LOWP_OK; i++) {
    double cnt = x.out[i] / sc->unit;
    if (!(cnt >= 0 && cnt <= (double)K && cnt == floor(cnt))) *counts = 0;
  }
  sig = malloc((npos * np + 1) * sizeof *sig);
  order = malloc((npos + 1) * sizeof *order);
  if ((!sig || !order) && st == LOWP_OK) st = LOWP_ENOMEM;
  for (i = 0; i < npos && st == LOWP_OK; i++) {
    for (j = 0; j < np; j++) sig[i * np + j] = x.out[j * npos + i];
    order[i].sig = sig + i * np;
    order[i].np = np;
    order[i].pos = i;
  }
  if (st == LOWP_OK) {
    qsort(order, npos, sizeof *order, cmp_sig);
    r->n_classes = 0;
    r->classes = calloc(npos, sizeof *r->classes);
    if (!r->classes) st = LOWP_ENOMEM;
    for (i = 0; i < npos && st == LOWP_OK; i = j) {
      lowp_reveal_class_t *cl = &r->classes[r->n_classes++];
      size_t k;
      for (j = i + 1; j < npos && !memcmp(order[i].sig, order[j].sig, np * sizeof *sig); j++) {}
      cl->n_pos = j - i;
      if (!(cl->pos = malloc(cl->n_pos * sizeof *cl->pos))) { st = LOWP_ENOMEM; break; }
      for (k = 0; k < cl->n_pos; k++) cl->pos[k] = order[i + k].pos;
      qsort(cl->pos, cl->n_pos, sizeof *cl->pos, cmp_size);
    }
  }
  free(sig);
  free(order);
  bufs_free(&x);
  bufs_free(&y);
  return st;
}

/* the order of one class: its rows (one column each), positive units then negative;
   hyp: copies presumed and checked (reveal_order.c), *hyp_used: some accepted */
static int reveal_class(lowp_reveal_t *r, lowp__geo_t *g, lowp_reveal_class_t *cl, lowp_tree_t *shape, int hyp,
                        int *hyp_used) {
  size_t *rows = malloc(g->R * sizeof *rows), *cols = malloc(g->R * sizeof *cols), nr = 0, k, rounds, hv[2];
  size_t *srows = malloc(g->R * sizeof *srows), *scols = malloc(g->R * sizeof *scols), ns = 0;
  unsigned char *used = calloc(g->C, 1);
  int st = LOWP_ENOMEM, try;
  oracle_t o;
  *hyp_used = 0;
  if (!rows || !cols || !srows || !scols || !used) goto done;
  for (k = 0; k < cl->n_pos; k++) {
    size_t i = cl->pos[k] / g->C, j = cl->pos[k] % g->C;
    if (!(ns && srows[ns - 1] == i) && !used[j] && (g->op == LOWP_OP_GEMM || !ns)) {
      /* split probes: rows in distinct columns (gemm), else one per batch entry */
      used[j] = 1;
      srows[ns] = i;
      scols[ns++] = j;
    }
    if (nr && rows[nr - 1] == i) continue;
    rows[nr] = i;
    cols[nr++] = j;
  }
  /* products held by fp16 (try 2): with an output of narrower range than binary32, lowp_reveal's
     next levels instead (reveal_cfg) */
  for (try = 0; try < (g->m_out_range || g->p.out.emax >= LOWP_FMT_FP32.emax ? 3 : 2); try++) {
    char e[400];
    int sign = try == 1 ? -1 : 1; /* negative units: an accumulator rounding up */
    memset(&o, 0, sizeof o);
    o.g = g;
    o.rows = rows;
    o.cols = cols;
    o.nrows = nr;
    if ((st = choose_scales(&o.sc, r, g, sign, try == 2)) != LOWP_OK) {
      if (try == 2) { st = LOWP_EINVAL; break; } /* the note keeps the last reason */
      break;
    }
    r->units_subnormal |= o.sc.sub;
    if (o.sc.split) { /* input 1 differs per probe */
      o.rows = srows;
      o.cols = scols;
      o.nrows = ns;
    }
    hv[0] = hv[1] = 0;
    st = lowp__reveal_order(shape, g->K, oracle, &o, &cl->probes, &rounds, hyp ? hv : NULL, e, sizeof e);
    *hyp_used = hv[0] > 0;
    bufs_free(&o.x);
    cl->probes = o.probes; /* a pair is one probe per window */
    cl->calls += o.calls;
    r->probes += cl->probes;
    if (st == LOWP_OK) cl->note[0] = '\0';
    if (st != LOWP_EINVAL) break;
    snprintf(cl->note, sizeof cl->note, "%s", o.msg[0] ? o.msg : e);
  }
  cl->no_order = st == LOWP_EINVAL;
done:
  free(rows);
  free(cols);
  free(srows);
  free(scols);
  free(used);
  return st;
}

/* The classes whose order took copies on trust (reveal_order.c) and whose
   twin then failed: revealed again by FPRev's recursion alone, and
   validated again (their probes and calls add up). */
static int reveal_again(lowp_reveal_t *r, lowp__geo_t *g, const lowp_reveal_opts_t *o, const int *hyp_used) {
  lowp_reveal_t rr = *r;
  lowp_tree_t *shapes;
  size_t c, n = 0, *from;
  int st = LOWP_OK, used;
  for (c = 0; c < r->n_classes; c++) n += hyp_used[c] && !r->classes[c].has_tree;
  if (!n) return LOWP_OK;
  rr.classes = calloc(n, sizeof *rr.classes);
  shapes = calloc(n, sizeof *shapes);
  from = malloc(n * sizeof *from);
  if (!rr.classes || !shapes || !from) { free(rr.classes); free(shapes); free(from); return LOWP_ENOMEM; }
  for (c = 0, n = 0; c < r->n_classes; c++)
    if (hyp_used[c] && !r->classes[c].has_tree) {
      lowp_reveal_class_t *nc = &rr.classes[n];
      nc->pos = r->classes[c].pos;
      nc->n_pos = r->classes[c].n_pos;
      from[n++] = c;
    }
  rr.n_classes = n;
  for (c = 0; c < n && st == LOWP_OK; c++) {
    double t0 = lowp_wall_now();
    st = reveal_class(&rr, g, &rr.classes[c], &shapes[c], 0, &used);
    rr.classes[c].seconds += lowp_wall_now() - t0;
    if (st == LOWP_EINVAL) st = LOWP_OK;
  }
  if (st == LOWP_OK) st = lowp__reveal_arith(&rr, g, shapes, o);
  for (c = 0; c < n; c++) {
    lowp_reveal_class_t *cl = &r->classes[from[c]];
    size_t probes = cl->probes + rr.classes[c].probes, calls = cl->calls + rr.classes[c].calls;
    double secs = cl->seconds + rr.classes[c].seconds;
    lowp_tree_free(&cl->tree);
    *cl = rr.classes[c];
    cl->probes = probes;
    cl->calls = calls;
    cl->seconds = secs;
    lowp_tree_free(&shapes[c]);
  }
  r->probes = rr.probes;
  r->calls_validate = rr.calls_validate;
  free(rr.classes);
  free(shapes);
  free(from);
  return st;
}

/* ----------------------------------------------------------- public API */

void lowp_reveal_free(lowp_reveal_t *r) {
  size_t c;
  if (!r) return;
  for (c = 0; c < r->n_classes; c++) {
    free(r->classes[c].pos);
    lowp_tree_free(&r->classes[c].tree);
  }
  free(r->classes);
  memset(r, 0, sizeof *r);
}

/* classes with a tree */
static size_t trees(const lowp_reveal_t *r) {
  size_t c, n = 0;
  for (c = 0; c < r->n_classes; c++) n += r->classes[c].has_tree != 0;
  return n;
}

/* classes whose probes' counts fit no tree */
static size_t no_order(const lowp_reveal_t *r) {
  size_t c, n = 0;
  for (c = 0; c < r->n_classes; c++) n += r->classes[c].no_order != 0;
  return n;
}

static void summary(lowp_reveal_t *r) {
  snprintf(r->msg, sizeof r->msg, "%zu position class%s, %zu with a validated tree; %zu calls, %zu probes",
           r->n_classes, r->n_classes == 1 ? "" : "es", trees(r), r->calls, r->probes);
}

/* Units that are subnormal numbers of the output save windows (an fp16
   sum returned in fp16: units of 2^-24 under an M of 2^14 absorb in 24
   bits, windows of 2048 terms; normal units of 2^-14, windows of 8). A
   kernel that flushes subnormal inputs or results to zero counts none of
   them: one call with a single unit per row (the other terms 0) must give
   the unit at every output, else normal units only (*ok 0). */
static int units_counted(lowp__geo_t *g, const scales_t *sc, int *ok) {
  bufs_t x;
  size_t s, n = g->R * g->C;
  int st;
  *ok = 0;
  if ((st = bufs_get(&x, g, 1))) {
    bufs_free(&x);
    return st;
  }
  for (s = 0; s < g->R; s++) {
    lowp__slot_a(g, x.a, s)[0] = sc->ua;
    fill_probe_b(g, x.b, s, sc, g->K, g->K, g->C);
  }
  st = lowp__reveal_call(g, 1, x.a, x.b, x.out);
  for (s = 0, *ok = st == LOWP_OK; s < n && *ok; s++) *ok = x.out[s] == sc->unit;
  bufs_free(&x);
  return st;
}

/* choose_scales (positive units), the units checked where subnormal */
static int scales_checked(scales_t *sc, lowp_reveal_t *r, lowp__geo_t *g, int narrow) {
  int st = choose_scales(sc, r, g, 1, narrow), ok;
  if (st == LOWP_OK && sc->sub && !g->normal_units) {
    if ((st = units_counted(g, sc, &ok)) != LOWP_OK) return st;
    if (!ok) {
      g->normal_units = 1;
      st = choose_scales(sc, r, g, 1, narrow);
    }
  }
  r->units_subnormal |= st == LOWP_OK && sc->sub;
  return st;
}

/* one revelation of p as declared (lowp_reveal below retries) */
static int reveal_once(lowp_reveal_t *r, const lowp_subject_t *s, const lowp_problem_t *p,
                       const lowp_reveal_opts_t *o, char *err, size_t errlen) {
  lowp__geo_t g;
  lowp_reveal_opts_t def;
  lowp_tree_t *shapes = NULL;
  scales_t sc;
  size_t c;
  int st, w, *hyp_used = NULL;
  memset(r, 0, sizeof *r);
  if (!o) { memset(&def, 0, sizeof def); o = &def; }
  if (err && errlen) err[0] = '\0';
  if ((st = lowp__geo_init(&g, s, p, o, err, errlen))) return st;
  r->K = g.K;
  r->rows = g.R;
  r->cols = g.C;
  for (w = 0; w < (g.op == LOWP_OP_SUM ? 1 : 2) && !o->no_conversions; w++)
    if ((st = conv_probe(r, &g, w, o->seed ^ (0x9e3779b97f4a7c15u * (uint64_t)(w + 1))))) goto out;
  if (o->conversions_only) goto out;
  if ((st = precision_probe(r, &g))) goto out;
  if ((st = scales_checked(&sc, r, &g, 0))) goto out;
  {
    int counts;
    if ((st = classify(r, &g, &sc, &counts, 2))) goto out;
    /* an output of narrower range than binary32 (fp16): lowp_reveal's next levels (reveal_cfg) */
    if (!counts && (g.m_out_range || g.p.out.emax >= LOWP_FMT_FP32.emax) &&
        scales_checked(&sc, r, &g, 1) == LOWP_OK) {
      /* products that a narrow format must hold (a kernel rounding them to fp16) */
      for (c = 0; c < r->n_classes; c++) free(r->classes[c].pos);
      free(r->classes);
      r->classes = NULL;
      if ((st = classify(r, &g, &sc, &counts, 2))) goto out;
    }
  }
  if (!r->deterministic) {
    snprintf(r->msg, sizeof r->msg,
             "nondeterministic: two calls on the same inputs gave different outputs (no tree)");
    for (c = 0; c < r->n_classes; c++)
      snprintf(r->classes[c].note, sizeof r->classes[c].note, "nondeterministic subject");
    goto out;
  }
  if (!(shapes = calloc(r->n_classes, sizeof *shapes))) { st = LOWP_ENOMEM; goto out; }
  if (!(hyp_used = calloc(r->n_classes, sizeof *hyp_used))) { st = LOWP_ENOMEM; goto out; }
  for (c = 0; c < r->n_classes; c++) {
    double t0 = lowp_wall_now();
    st = reveal_class(r, &g, &r->classes[c], &shapes[c], 1, &hyp_used[c]);
    r->classes[c].seconds += lowp_wall_now() - t0;
    if (st == LOWP_EINVAL) st = LOWP_OK; /* said in the class's note */
    if (st) goto out;
  }
  st = lowp__reveal_arith(r, &g, shapes, o);
  if (st == LOWP_OK) st = reveal_again(r, &g, o, hyp_used);
  for (c = 0; c < r->n_classes && st == LOWP_OK; c++)
    if (!r->classes[c].has_tree) { /* a subject that only sometimes differs: six more calls */
      lowp_reveal_t again;
      int counts;
      memset(&again, 0, sizeof again);
      st = classify(&again, &g, &sc, &counts, 7);
      if (st == LOWP_OK && !again.deterministic) {
        r->deterministic = 0;
        snprintf(r->msg, sizeof r->msg,
                 "nondeterministic: repeated calls on the same inputs gave different outputs (no tree)");
        for (c = 0; c < r->n_classes; c++) {
          lowp_tree_free(&r->classes[c].tree);
          r->classes[c].has_tree = 0;
          snprintf(r->classes[c].note, sizeof r->classes[c].note, "nondeterministic subject");
        }
      }
      for (c = 0; c < again.n_classes; c++) free(again.classes[c].pos);
      free(again.classes);
      break;
    }
out:
  if (shapes)
    for (c = 0; c < r->n_classes; c++) lowp_tree_free(&shapes[c]);
  free(shapes);
  free(hyp_used);
  r->calls = g.calls;
  if (st == LOWP_OK && !r->msg[0]) summary(r);
  if (st != LOWP_OK) lowp_reveal_free(r);
  return st;
}

/* formats a kernel may round its result to, narrower than the declared
   output (the conversions' candidates) */
static const lowp_format_t *const out_fmts[] = {&LOWP_FMT_BF16, &LOWP_FMT_FP16, &LOWP_FMT_TF32,
                                                &LOWP_FMT_E4M3, &LOWP_FMT_E5M2};

/*
 * FPRev's probes need an M that absorbs every count of units in the
 * accumulator, and lowp sizes M by the accumulator bits seen at the output
 * (the precision probe). Two kernels defeat that, and a class then gets no
 * tree ("not a tree", or no arithmetic fits):
 *   - fewer bits seen than the declared output has, because the kernel
 *     rounds its result (a bf16 GEMM whose values are returned in fp32
 *     storage, torch's bf16 matmul): its accumulator may be wider than the
 *     bits seen. Revealed again with the output declared in the narrower
 *     format whose precision was seen (every candidate, in out_fmts' order):
 *     the outputs are then values of that format, the probes assume a wider
 *     accumulator, and the conversions and trees are found against it;
 *   - as many bits seen as the output has, and a wider accumulator behind
 *     it (fp64 sums of fp32 products, returned in fp32): revealed again
 *     with M sized for 53 bits (M larger than needed absorbs as well).
 * The retry replaces the first result only when it gives more classes a
 * tree; its calls and probes add to the first's. A caller's acc_bits turns
 * the retries off.
 */
/* alt replaces r where it gives more classes a tree (1 returned); the
   other's calls and probes add to the one kept, and alt is released */
static int keep_better(lowp_reveal_t *r, lowp_reveal_t *alt) {
  size_t calls = r->calls + alt->calls, probes = r->probes + alt->probes;
  int better = alt->deterministic && trees(alt) > trees(r);
  if (better) {
    lowp_reveal_free(r);
    *r = *alt;
  } else {
    lowp_reveal_free(alt);
  }
  r->calls = calls;
  r->probes = probes;
  summary(r);
  return better;
}

/* one configuration (output format, acc_bits): where the probes assume an
   accumulator wider than an output of narrower range (fp16, fp8), M's
   products may leave the output's range (an fp16 GEMM accumulating in fp32:
   K - 1 probes at K = 1024, against K(K - 1)/8 with M inside fp16); where a
   class's counts then fit no tree (an accumulator of the output's format
   overflows: inf - inf), again with M within the output's range, sized for
   the output's bits (m_out_range 1), then for 24 bits (2: partial sums
   rounded to the output) */
static int reveal_cfg(lowp_reveal_t *r, const lowp_subject_t *s, const lowp_problem_t *p,
                      const lowp_reveal_opts_t *o, char *err, size_t errlen) {
  lowp_reveal_opts_t oo = *o;
  int st = reveal_once(r, s, p, o, err, errlen);
  if (st != LOWP_OK || o->m_out_range || p->out.emax >= LOWP_FMT_FP32.emax) return st;
  for (oo.m_out_range = 1; oo.m_out_range <= 2 && r->deterministic && no_order(r); oo.m_out_range++) {
    lowp_reveal_t alt;
    char e2[400];
    if (reveal_once(&alt, s, p, &oo, e2, sizeof e2) == LOWP_OK) (void)keep_better(r, &alt);
  }
  return LOWP_OK;
}

int lowp_reveal(lowp_reveal_t *r, const lowp_subject_t *s, const lowp_problem_t *p,
                const lowp_reveal_opts_t *o, char *err, size_t errlen) {
  lowp_reveal_opts_t oo;
  lowp_problem_t q = *p;
  size_t i;
  int st, wide;
  if (o) oo = *o;
  else memset(&oo, 0, sizeof oo);
  st = reveal_cfg(r, s, p, &oo, err, errlen);
  if (st != LOWP_OK || !r->deterministic || !r->n_classes || trees(r) == r->n_classes || oo.acc_bits ||
      oo.conversions_only)
    return st;
  wide = r->precision_seen >= p->out.precision || r->precision_lower;
  /* a wider accumulator shows as counts that fit no tree (units not absorbed) */
  if (wide && (p->out.precision >= 53 || r->precision_seen >= 53 || !no_order(r))) return st;
  if (wide) oo.acc_bits = 53;
  for (i = 0; i < (wide ? 1 : sizeof out_fmts / sizeof *out_fmts) && trees(r) < r->n_classes; i++) {
    lowp_reveal_t alt;
    char e2[400];
    if (!wide) {
      if (out_fmts[i]->precision != r->precision_seen) continue;
      q.out = *out_fmts[i];
    }
    if (reveal_cfg(&alt, s, &q, &oo, e2, sizeof e2) != LOWP_OK || !keep_better(r, &alt)) continue;
    r->out_narrowed = !wide;
    if (!wide) r->out_fmt = q.out;
    r->acc_bits_assumed = wide ? 53 : 0;
  }
  return LOWP_OK;
}


void lowp_reveal_conv_str(char *buf, size_t len, const lowp_reveal_t *r, const lowp_problem_t *p,
                          int which) {
  const lowp_reveal_conv_t *c = &r->conv[which];
  const char *name = p->op->in_names[which] ? p->op->in_names[which] : "input";
  if (!c->tested) snprintf(buf, len, "%s: no narrower format to test (declared %s)", name, p->in[which].name);
  else if (c->unexplained)
    snprintf(buf, len, "%s: single values come out as no format reads them (an accumulator narrower than the output?)", name);
  else if (!c->converted) snprintf(buf, len, "%s is read as declared (%s)", name, p->in[which].name);
  else
    snprintf(buf, len, "%s is rounded to %s (%s) before use%s", name, c->fmt.name,
             lowp_rounding_name(c->rnd), c->ambiguous ? " (another rounding fits too)" : "");
}
