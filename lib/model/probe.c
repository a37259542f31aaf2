/* lowp_probe -- tensor-core feature probes on any device (see model/probe.h) */

/*
 * Every probe builds exact inputs: products of two values of the input
 * format, found by factor() from the format's data, at exponents chosen
 * inside both the input's product range and the output's range. The device
 * is only ever called through dev->dot; nothing here knows whether it is a
 * GPU or a model.
 */

#include "model/probe.h"
#include "status.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NP 128 /* products of the structural probes (>= 2b for b <= 64) */

typedef struct {
  const lowp_probe_dev_t *dev;
  const lowp_format_t *in, *out;
  double A[LOWP_PROBE_KMAX], B[LOWP_PROBE_KMAX];
  size_t n;
} ctx_t;

/* ------------------------------------------------------ private helpers */

/* x is a finite value of f (normal unless sub) */
static int is_val(double x, const lowp_format_t *f, int sub) {
  double y;
  if (!isfinite(x)) return 0;
  if (lowp_round_f64(&y, x, f, NULL, LOWP_RND_NE) != LOWP_OK || y != x) return 0;
  if (!sub && x != 0 && fabs(x) < ldexp(1.0, f->emin)) return 0;
  return 1;
}

/* a = sa 2^ea, b = sb 2^(e - ea), both values of f (normal first, then
   with subnormals if sub), ea as balanced as possible. 1 found, 0 not. */
static int factor(double *a, double *b, double sa, double sb, int e, const lowp_format_t *f, int sub) {
  int pass, d;
  for (pass = 0; pass < (sub ? 2 : 1); pass++)
    for (d = 0; d < 2400; d++) {
      int ea = e / 2 + ((d & 1) ? -(d + 1) / 2 : d / 2);
      double x = ldexp(sa, ea), y = ldexp(sb, e - ea);
      if (is_val(x, f, pass) && is_val(y, f, pass)) { *a = x; *b = y; return 1; }
    }
  return 0;
}

static void clear(ctx_t *c) {
  memset(c->A, 0, c->n * sizeof c->A[0]);
  memset(c->B, 0, c->n * sizeof c->B[0]);
}

/* product sign * sa sb 2^e at index i; 0 if it cannot be built */
static int put(ctx_t *c, size_t i, double sign, double sa, double sb, int e, int sub) {
  double a, b;
  if (!factor(&a, &b, sa, sb, e, c->in, sub)) return 0;
  c->A[i] = sign * a;
  c->B[i] = b;
  return 1;
}

static int run(ctx_t *c, double *d, size_t n, double cv) {
  return c->dev->dot(c->dev->ctx, d, c->A, c->B, n, cv, c->in, c->out);
}

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* the rounding mode of a pattern (+0.75, +0.25, +0.5 ulp, -0.75 ulp: 1 away from zero) */
static int mode_of(const int p[4], lowp_rounding_t *r) {
  static const struct { int p[4]; lowp_rounding_t r; } tab[] = {
      {{1, 0, 0, 1}, LOWP_RND_NE}, {{1, 0, 1, 1}, LOWP_RND_NA}, {{0, 0, 0, 0}, LOWP_RND_TZ},
      {{1, 1, 1, 0}, LOWP_RND_UP}, {{0, 0, 0, 1}, LOWP_RND_DN}, {{1, 1, 1, 1}, LOWP_RND_TO}};
  size_t i;
  for (i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (!memcmp(tab[i].p, p, sizeof tab[i].p)) { *r = tab[i].r; return 1; }
  return 0;
}

/* rounding probe: kb products 1.75^2 2^e at mem[0..kb) (all of sign sg),
   then t = frac ulp of their sum, either as a product at mem[kb] or as c;
   pf fraction bits. Returns 1 rounded away from zero, 0 toward, -1 neither
   (or unbuildable). */
static int round_case(ctx_t *c, const int *mem, int kb, int e, int pf, double frac, double sg,
                      int via_c, int *st) {
  double base = kb * 3.0625 * ldexp(1.0, e), ulp = ldexp(1.0, ilogb(base) - pf), d, cv = 0;
  int k;
  clear(c);
  for (k = 0; k < kb; k++)
    if (!put(c, (size_t)mem[k], sg, 1.75, 1.75, e, 0)) return -1;
  if (via_c) {
    cv = sg * frac * ulp;
    if (!is_val(cv, c->out, 0)) return -1;
  } else {
    double sa = frac == 0.75 ? 1.5 : 1.0;
    int te = ilogb(base) - pf + (frac == 0.25 ? -2 : -1);
    if (!put(c, (size_t)mem[kb], sg, sa, 1.0, te, 1)) return -1;
  }
  if ((*st = run(c, &d, c->n, cv)) != LOWP_OK) return -1;
  if (fabs(d) == base + ulp) return 1;
  if (fabs(d) == base) return 0;
  return -1;
}

/* the fewest big products whose sum has an even last digit at pf bits and
   an ulp with 0.25 ulp on the alignment grid (>= 2^(e-F)); 0 if none */
static int pick_kb(int nmem, int e, int pf, int F) {
  int kb;
  for (kb = 3; kb < nmem && kb < 64; kb++) {
    double base = kb * 3.0625 * ldexp(1.0, e), units = ldexp(base, pf - ilogb(base));
    if (units == floor(units) && fmod(units, 2.0) == 0 && ilogb(base) - pf - 2 >= e - F) return kb;
  }
  return 0;
}

/* ----------------------------------------------------------- public API */

int lowp_probe_model_dot(void *ctx, double *d, const double *a, const double *b, size_t n,
                         double c, const lowp_format_t *in, const lowp_format_t *out) {
  return lowp_tc_dot(d, a, 1, b, 1, n, c, (const lowp_tc_model_t *)ctx, in, out);
}

/* what the structural probes share: the scale (+-2^s cancel, a tiny
   2^(s-m) term), the lowest usable exponent, the first block's indices */
typedef struct {
  int t, fp32, plo, plo_sub, phi, olo, olo_sub, ohi;
  int s, lo_t, mem[128], nmem, i2, pf;
  double tiny;
} geo_t;

/* exact products, subnormal inputs and outputs */
static int probe_basics(lowp_probe_t *r, ctx_t *c, geo_t *g) {
  const lowp_format_t *in = c->in, *out = c->out;
  int t = g->t, olo = g->olo, olo_sub = g->olo_sub, st;
  double d;
  /* products: a = b = 1 + 2^(1-t), exact product of 2t-1 bits */
  if (2 * t - 1 <= out->precision) {
    double a = 1 + ldexp(1.0, 1 - t);
    clear(c);
    c->A[0] = c->B[0] = a;
    if ((st = run(c, &d, c->n, 0.0)) != LOWP_OK) return st;
    r->products_exact = d == a * a;
  }
  /* subnormal inputs: the smallest, times a power of two into the output's normal range */
  if (in->subnormals) {
    double a = ldexp(1.0, in->emin - t + 1);
    int k = olo - (in->emin - t + 1);
    if (k < 0) k = 0;
    if (k <= in->emax && is_val(ldexp(1.0, k), in, 0)) {
      clear(c);
      c->A[0] = a;
      c->B[0] = ldexp(1.0, k);
      if ((st = run(c, &d, c->n, 0.0)) != LOWP_OK) return st;
      r->sub_in = d == a * ldexp(1.0, k);
    }
  }
  /* subnormal outputs: from a product if the input range reaches them, else from c */
  {
    int e, done = 0;
    for (e = olo - 1; e >= olo_sub && !done; e--) {
      clear(c);
      if (put(c, 0, 1, 1, 1, e, 1)) {
        if ((st = run(c, &d, c->n, 0.0)) != LOWP_OK) return st;
        r->sub_out = d == ldexp(1.0, e);
        done = 1;
      }
    }
    if (!done) {
      clear(c);
      if ((st = run(c, &d, c->n, ldexp(1.0, olo - 1))) != LOWP_OK) return st;
      r->sub_out = d == ldexp(1.0, olo - 1);
      r->sub_out_from_c = 1;
    }
  }

  return LOWP_OK;
}

/* the block: which indices are aligned with the cancelled pair at 0, 1 */
static int probe_blocks(lowp_probe_t *r, ctx_t *c, geo_t *g) {
  size_t i;
  int st;
  double d;
  /* block: index r aligned with the cancelled pair at 0, 1? */
  r->members[0] = r->members[1] = 1;
  for (i = 2; i < c->n; i++) {
    clear(c);
    if (!put(c, 0, 1, 1, 1, g->s, 0) || !put(c, 1, -1, 1, 1, g->s, 0) || !put(c, i, 1, 1, 1, g->s - r->m, 1))
      return LOWP_EINVAL;
    if ((st = run(c, &d, c->n, 0.0)) != LOWP_OK) return st;
    /* apart, the tiny term is summed exactly; aligned with 2^s it is cut
       (to 0 by truncation or nearest, to one unit by round-to-odd) */
    r->members[i] = d != g->tiny;
  }
  {
    int ok = 1;
    for (i = 0; i < c->n; i++) {
      if (r->members[i] < 0) ok = 0;
      if (r->members[i] == 1) g->mem[g->nmem++] = (int)i;
    }
    if (ok && (size_t)g->nmem == c->n) {
      r->b = g->nmem;
      r->b_atleast = 1;
    } else if (ok) {
      int contiguous = 1, P = 0, j;
      for (j = 0; j < g->nmem; j++)
        if (g->mem[j] != j) contiguous = 0;
      if (contiguous) {
        r->b = g->nmem;
      } else {
        while (r->members[P]) P++;
        for (j = 0; j < (int)c->n && ok; j++) {
          int want = j < 2 * g->nmem && (j / P) % 2 == 0;
          if (want != r->members[j]) ok = 0;
        }
        if (ok) {
          r->b = g->nmem;
          r->interleave = P;
        }
      }
    }
    r->per_block = g->nmem > 2;
    for (i = 2; i < c->n; i++)
      if (r->members[i] == 1) { g->i2 = (int)i; break; }
  }

  /* the probes below use one instruction (b products, 2b with interleave):
     a longer dot would pass each result on as the c of further (empty)
     blocks, whose alignment cuts it again to F bits below its own exponent */
  if (r->b && !r->b_atleast) c->n = (size_t)r->b * (r->interleave ? 2 : 1);

  return LOWP_OK;
}

/* F: 2^(s-j) beside the cancelled pair, largest j kept; then the cut */
static int probe_F(lowp_probe_t *r, ctx_t *c, geo_t *g) {
  int st;
  double d;
  /* F: 2^(s-j) beside the cancelled pair, largest j kept */
  if (g->i2 >= 0) {
    int j;
    for (j = 1; j < r->m; j++) {
      clear(c);
      put(c, 0, 1, 1, 1, g->s, 0);
      put(c, 1, -1, 1, 1, g->s, 0);
      if (!put(c, (size_t)g->i2, 1, 1, 1, g->s - j, 1)) break;
      if ((st = run(c, &d, c->n, 0.0)) != LOWP_OK) return st;
      if (d != ldexp(1.0, g->s - j)) break;
      r->F = j;
    }
    if (r->F == r->m - 1) r->F_atleast = 1;
  }

  /* alignment cut: +0.75, -0.75, +0.25 units of q = 2^(s-F) */
  if (r->F > 0 && !r->F_atleast && g->s - r->F - 2 >= g->lo_t) {
    static const double sg[3] = {1, -1, 1}, sa[3] = {1.5, 1.5, 1.0};
    const int off[3] = {1, 1, 2};
    double q = ldexp(1.0, g->s - r->F);
    int k, ok = 1;
    for (k = 0; k < 3; k++) {
      clear(c);
      put(c, 0, 1, 1, 1, g->s, 0);
      put(c, 1, -1, 1, 1, g->s, 0);
      if (!put(c, (size_t)g->i2, sg[k], sa[k], 1, g->s - r->F - off[k], 1)) { ok = 0; break; }
      if ((st = run(c, &d, c->n, 0.0)) != LOWP_OK) return st;
      r->align_units[k] = d / q;
    }
    if (ok) {
      const double *u = r->align_units;
      r->align_ok = 1;
      if (u[0] == 0 && u[1] == 0 && u[2] == 0) r->align = LOWP_RND_TZ;
      else if (u[0] == 0 && u[1] == -1 && u[2] == 0) r->align = LOWP_RND_DN;
      else if (u[0] == 1 && u[1] == -1 && u[2] == 0) r->align = LOWP_RND_NE;
      else if (u[0] == 1 && u[1] == -1 && u[2] == 1) r->align = LOWP_RND_TO;
      else if (u[0] == 0.5 && u[1] == -0.5 && u[2] == 0.5) { r->align = LOWP_RND_TZ; r->sticky = 1; }
      else r->align_ok = 0;
    }
  }

  return LOWP_OK;
}

/* late c, and the fraction bits of an fp32 block result */
static int probe_late_c(lowp_probe_t *r, ctx_t *c, geo_t *g) {
  const lowp_format_t *out = c->out;
  size_t i;
  int st, fp32 = g->fp32;
  double d;
  /* late c: +2^s at 0, tiny outside the first block, c = -2^s */
  {
    int rr = -1;
    size_t nshort = c->n;
    c->n = r->n;
    for (i = 0; i < c->n; i++)
      if (r->members[i] == 0) { rr = (int)i; break; }
    if (rr >= 0 && is_val(-ldexp(1.0, g->s), out, 0)) {
      clear(c);
      put(c, 0, 1, 1, 1, g->s, 0);
      put(c, (size_t)rr, 1, 1, 1, g->s - r->m, 1);
      if ((st = run(c, &d, c->n, -ldexp(1.0, g->s))) != LOWP_OK) return st;
      r->late_c = d == g->tiny ? 0 : d == 0 ? 1 : -1;
    }
    c->n = nshort;
  }

  /* fraction bits of an fp32 block result: 2^e + 2^e + 2^(e-k) */
  g->pf = out->precision - 1;
  if (fp32 && g->i2 >= 0 && r->F > 0) {
    int e = g->s - 1, k, kmax = 0;
    for (k = 1; k <= r->F && e - k >= g->lo_t; k++) {
      clear(c);
      put(c, 0, 1, 1, 1, e, 0);
      put(c, 1, 1, 1, 1, e, 0);
      if (!put(c, (size_t)g->i2, 1, 1, 1, e - k, 1)) break;
      if ((st = run(c, &d, c->n, 0.0)) != LOWP_OK) return st;
      if (d != ldexp(1.0, e + 1) + ldexp(1.0, e - k)) break;
      kmax = k;
    }
    if (kmax < r->F) {
      r->out_frac = kmax + 1 >= g->pf ? 0 : kmax + 1;
    } else {
      r->out_frac_atleast = 1; /* F limited the probe: taken as all 23 bits */
      r->out_frac = 0;
    }
    if (r->out_frac) g->pf = r->out_frac;
  }

  return LOWP_OK;
}

/* rounding of the block result and of the addition of c */
static int probe_rounding(lowp_probe_t *r, ctx_t *c, geo_t *g) {
  int st = LOWP_OK, ohi = g->ohi, phi = g->phi;
  /* rounding of the block result, and of the addition that brings c */
  {
    int e = ohi - 10 < phi ? ohi - 10 : phi, k, ok = 1, okc = 1;
    int kb = r->F > 0 ? pick_kb(g->nmem, e, g->pf, r->F) : 0;
    static const double fr[4] = {0.75, 0.25, 0.5, 0.75}, sgn[4] = {1, 1, 1, -1};
    for (k = 0; k < 4 && kb; k++) {
      r->out_pattern[k] = round_case(c, g->mem, kb, e, g->pf, fr[k], sgn[k], 0, &st);
      if (st != LOWP_OK) return st;
      r->c_pattern[k] = round_case(c, g->mem, kb, e, g->pf, fr[k], sgn[k], 1, &st);
      if (st != LOWP_OK) return st;
      if (r->out_pattern[k] < 0) ok = 0;
      if (r->c_pattern[k] < 0) okc = 0;
    }
    r->out_ok = kb && ok && mode_of(r->out_pattern, &r->out_rnd);
    r->c_ok = kb && okc && mode_of(r->c_pattern, &r->c_rnd);
  }

  return LOWP_OK;
}

/* monotonicity and the fp32 promotion interval */
static int probe_monotone(lowp_probe_t *r, ctx_t *c, geo_t *g, const lowp_probe_dev_t *dev) {
  const lowp_format_t *in = c->in, *out = c->out;
  int t = g->t, st, fp32 = g->fp32;
  size_t i;
  double d;
  /* monotonicity: a factor of the first product stepped from just below a
     binade to its top (the alignment exponent grows by one). First the
     worst case for a truncating adder: every other term of the block is one
     quantum 2^(X-F) of the same sign, all lost when the quantum doubles
     (Mikaitis, "Monotonicity of multi-term floating-point adders", IEEE
     Trans. Comput. 2024, studies such steps); then random blocks. */
  if (g->nmem > 0 && r->F > 0 && !r->F_atleast) {
    int sgn, k;
    for (sgn = 0; sgn < 2; sgn++) {
      double d1, d2, sg = sgn ? -1 : 1;
      int e0 = g->s - 2;
      clear(c);
      if (!put(c, (size_t)g->mem[0], sg, 2 - ldexp(1.0, 1 - t), 1, e0, 0)) break;
      for (k = 1; k < g->nmem; k++)
        if (!put(c, (size_t)g->mem[k], sg, 1, 1, e0 - r->F, 1)) break;
      if (k < g->nmem) break;
      if ((st = run(c, &d1, c->n, 0.0)) != LOWP_OK) return st;
      c->A[g->mem[0]] = copysign(2 * fabs(c->A[g->mem[0]]) / (2 - ldexp(1.0, 1 - t)), c->A[g->mem[0]]);
      if ((st = run(c, &d2, c->n, 0.0)) != LOWP_OK) return st;
      r->mono_trials++;
      if (sg * (d2 - d1) < 0 && r->mono_decreases++ == 0) {
        r->mono_example[0] = d1;
        r->mono_example[1] = d2;
      }
    }
  }
  if (g->nmem > 0) {
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    long trial;
    int nb = g->nmem;
    for (trial = 0; trial < 300; trial++) {
      double d1, d2, a0;
      int k;
      clear(c);
      for (k = 0; k < nb; k++) {
        size_t idx = (size_t)g->mem[k];
        int ea = (int)(rng_next(&seed) % 5) - 2, eb = (int)(rng_next(&seed) % 5) - 2;
        double ma = 1 + ldexp((double)(rng_next(&seed) % (1ull << (t - 1))), 1 - t);
        double mb = 1 + ldexp((double)(rng_next(&seed) % (1ull << (t - 1))), 1 - t);
        c->A[idx] = ((rng_next(&seed) & 1) ? -1 : 1) * ldexp(ma, ea);
        c->B[idx] = ((rng_next(&seed) & 1) ? -1 : 1) * ldexp(mb, eb);
      }
      a0 = c->A[g->mem[0]];
      c->A[g->mem[0]] = copysign(ldexp(2 - ldexp(1.0, 1 - t), 0), a0);
      if ((st = run(c, &d1, c->n, 0.0)) != LOWP_OK) return st;
      c->A[g->mem[0]] = copysign(2.0, a0);
      if ((st = run(c, &d2, c->n, 0.0)) != LOWP_OK) return st;
      r->mono_trials++;
      /* the product moved in the direction of its sign */
      if ((a0 * c->B[g->mem[0]] > 0 && d2 < d1) || (a0 * c->B[g->mem[0]] < 0 && d2 > d1)) {
        if (r->mono_decreases++ == 0) {
          r->mono_example[0] = d1;
          r->mono_example[1] = d2;
        }
      }
    }
  }

  /* promotion: +2^s at 0, c = -2^s, tiny at every other index */
  if (dev->promote && fp32 && r->b > 0 && !r->b_atleast) {
    size_t n = dev->kmax < LOWP_PROBE_KMAX ? dev->kmax : LOWP_PROBE_KMAX, inst;
    double cnt;
    memset(c->A, 0, n * sizeof c->A[0]);
    memset(c->B, 0, n * sizeof c->B[0]);
    put(c, 0, 1, 1, 1, g->s, 0);
    for (i = 1; i < n; i++) put(c, i, 1, 1, 1, g->s - r->m, 1);
    if ((st = c->dev->dot(c->dev->ctx, &d, c->A, c->B, n, -ldexp(1.0, g->s), in, out)) != LOWP_OK) return st;
    cnt = d / g->tiny;
    inst = (size_t)r->b * (r->interleave ? 2 : 1);
    r->promote_probed = 1;
    if (cnt >= 0 && cnt == floor(cnt) && cnt < (double)n) {
      size_t nc = n - (size_t)cnt;
      r->promote = nc <= inst ? 0 : nc;
    } else {
      r->promote_probed = 0;
    }
  }

  return LOWP_OK;
}

/*
 * The zero questions no captured row decides (docs/gpu.md): the sign of an
 * exact or rounded zero, and whether a zero product or c = 0 takes part in
 * the alignment. Each field: -1 IEEE 754's reading (a zero takes no part
 * in the alignment), 1 the other one (+0; aligned at emin), 0 not probed
 * here (unbuildable, or both readings give the same output).
 */
static int probe_zeros(lowp_probe_t *r, ctx_t *c, const geo_t *g) {
  const lowp_format_t *in = c->in, *out = c->out;
  size_t i, nkeep = c->n;
  int st, F = r->F > 0 && !r->F_atleast ? r->F : 0;
  double d;
  /* (a) every addend -0 (products (-0) 1, c = -0) over whole instructions:
     IEEE 754 6.3 gives -0 */
  c->n = r->n;
  clear(c);
  for (i = 0; i < c->n; i++) {
    c->A[i] = -0.0;
    c->B[i] = 1.0;
  }
  if ((st = run(c, &d, c->n, -0.0)) != LOWP_OK) return st;
  r->zero_neg = d != 0 ? 0 : signbit(d) ? -1 : 1;
  c->n = nkeep;
  /* (b) one negative product below half the output's smallest subnormal
     (or at it: a tie, to even is zero), c = +0: rounded to nearest it is a
     negative zero (IEEE: -0). Not below 2^(emin(out) - F): a device that
     aligns c = 0 at emin (d) would cut it to an exact zero (+0 whatever
     the rule); with F below the output's precision no product does both. */
  clear(c);
  {
    int eb = g->olo_sub - 2;
    if (F && out->emin - F > eb) eb = out->emin - F;
    if (eb <= g->olo_sub - 1 && put(c, 0, -1, 1, 1, eb, 1)) {
      if ((st = run(c, &d, c->n, 0.0)) != LOWP_OK) return st;
      r->zero_round = d != 0 ? 0 : signbit(d) ? -1 : 1;
    }
  }
  /* (c) 0 x 2^emax beside 2^e1 - 2^(e1-F+2), e1 eleven binades below
     emin + emax: if zero's exponent (emin) takes part, the alignment moves
     up 11 binades and the small term is cut */
  if (F && g->nmem >= 3 && is_val(ldexp(1.0, in->emax), in, 0)) {
    int e1 = in->emin + in->emax - 11;
    clear(c);
    c->A[g->mem[0]] = 0.0;
    c->B[g->mem[0]] = ldexp(1.0, in->emax);
    if (r->out_ok && put(c, (size_t)g->mem[1], 1, 1, 1, e1, 0) &&
        put(c, (size_t)g->mem[2], -1, 1, 1, e1 - F + 2, 1)) {
      double kept, cut1;
      lowp_round_f64(&kept, ldexp(1.0, e1) - ldexp(1.0, e1 - F + 2), out, NULL, r->out_rnd);
      lowp_round_f64(&cut1, ldexp(1.0, e1), out, NULL, r->out_rnd);
      if (kept != cut1) { /* else the output cannot show it (fp16) */
        if ((st = run(c, &d, c->n, 0.0)) != LOWP_OK) return st;
        r->zero_align = d == kept ? -1 : d == cut1 ? 1 : 0;
      }
    }
  }
  /* (d) c = 0, products 2^e1 - 2^(e1-F) with e1 = emin(out) - 10: aligned
     at the largest product the small one is kept; at 2^emin(out) it is cut */
  if (F && g->nmem >= 2 && r->out_ok) {
    int e1 = out->emin - 10;
    double kept, cut1;
    clear(c);
    if (put(c, (size_t)g->mem[0], 1, 1, 1, e1, 1) && put(c, (size_t)g->mem[1], -1, 1, 1, e1 - F, 1)) {
      lowp_round_f64(&kept, ldexp(1.0, e1) - ldexp(1.0, e1 - F), out, NULL, r->out_rnd);
      lowp_round_f64(&cut1, ldexp(1.0, e1), out, NULL, r->out_rnd);
      if (kept != cut1) {
        if ((st = run(c, &d, c->n, 0.0)) != LOWP_OK) return st;
        r->zero_floor = d == kept ? -1 : d == cut1 ? 1 : 0;
      }
    }
  }
  return LOWP_OK;
}

static int probe(lowp_probe_t *r, ctx_t *c, const lowp_probe_dev_t *dev, const lowp_format_t *in,
                 const lowp_format_t *out) {
  geo_t geo, *g = &geo;
  int st;

  memset(r, 0, sizeof *r);
  memset(g, 0, sizeof *g);
  c->dev = dev;
  c->in = in;
  c->out = out;
  c->n = r->n = dev->kmax < NP ? dev->kmax : NP;
  r->products_exact = r->sub_in = r->sub_out = -1;
  r->late_c = -1;
  g->t = in->precision;
  g->fp32 = out->precision >= LOWP_FMT_FP32.precision;
  g->plo = 2 * in->emin;
  g->plo_sub = 2 * (in->emin - g->t + 1);
  g->phi = 2 * in->emax;
  g->olo = out->emin;
  g->olo_sub = out->emin - out->precision + 1;
  g->ohi = out->emax - 4;
  g->i2 = -1;
  if ((st = probe_basics(r, c, g)) != LOWP_OK) return st;

  /* the structural probes' scale: +-2^s cancel, a tiny 2^(s-m) */
  g->s = g->phi < g->ohi ? g->phi : g->ohi;
  g->lo_t = g->plo > g->olo ? g->plo : g->olo;
  if (g->s - g->lo_t < 32) g->lo_t = g->plo_sub > g->olo_sub ? g->plo_sub : g->olo_sub;
  r->m = g->s - g->lo_t > 80 ? 80 : g->s - g->lo_t;
  g->tiny = ldexp(1.0, g->s - r->m);

  if ((st = probe_blocks(r, c, g)) != LOWP_OK || (st = probe_F(r, c, g)) != LOWP_OK ||
      (st = probe_late_c(r, c, g)) != LOWP_OK || (st = probe_rounding(r, c, g)) != LOWP_OK ||
      (st = probe_monotone(r, c, g, dev)) != LOWP_OK || (st = probe_zeros(r, c, g)) != LOWP_OK)
    return st;

  {
    /* undetermined items take the defaults of parameters alone; a zero
       answered +0 reads as pos (on a late-c datapath either value gives +0) */
    int fp32 = g->fp32;
  snprintf(r->model, sizeof r->model,
           "b=%d,F=%d,align=%s,sticky=%d,out=%s,out16=%s,outfrac=%d,latec=%d,interleave=%d,crnd=%s,"
           "zsum=%s,zrnd=%s,c0align=%s,promote=%zu",
           r->b ? r->b : 16, r->F ? r->F : 25, lowp_rounding_name(r->align_ok ? r->align : LOWP_RND_TZ),
           r->sticky, lowp_rounding_name(fp32 && r->out_ok ? r->out_rnd : LOWP_RND_TZ),
           lowp_rounding_name(!fp32 && r->out_ok ? r->out_rnd : LOWP_RND_NE), r->out_frac,
           r->late_c == 1, r->interleave,
           lowp_rounding_name(r->late_c == 1 && r->c_ok ? r->c_rnd : LOWP_RND_NE),
           r->zero_neg > 0 ? "pos" : "ieee", r->zero_round > 0 ? "pos" : "ieee",
           r->zero_floor > 0 ? "emin" : "skip", r->promote);
  }
  return LOWP_OK;
}

int lowp_probe_run(lowp_probe_t *r, const lowp_probe_dev_t *dev, const lowp_format_t *in,
                   const lowp_format_t *out) {
  ctx_t *c;
  int st;

  if (!r || !dev || !dev->dot || dev->kmax < 8 || !in || !out) return LOWP_EINVAL;
  if (!(c = calloc(1, sizeof *c))) return LOWP_ENOMEM;
  st = probe(r, c, dev, in, out);
  free(c);
  return st;
}

int lowp_probe_compare(const lowp_probe_t *r, const lowp_tc_model_t *m, const lowp_format_t *out,
                       char *why, size_t whylen) {
  const lowp_bfma_t *p = &m->bfma;
  int fp32 = out->precision >= LOWP_FMT_FP32.precision, nd = 0;
  size_t len = 0;
  char item[128];
#define DIFF(...)                                                  \
  do {                                                             \
    snprintf(item, sizeof item, __VA_ARGS__);                      \
    if (why && len < whylen) {                                     \
      int w = snprintf(why + len, whylen - len, "%s%s", nd ? "; " : "", item); \
      if (w > 0) len += (size_t)w;                                 \
    }                                                              \
    nd++;                                                          \
  } while (0)
  if (why && whylen) why[0] = '\0';
  if (r->b && !r->b_atleast && r->b != p->b) DIFF("b %d vs %d", r->b, p->b);
  if (r->b_atleast && p->b < r->b) DIFF("b >= %d vs %d", r->b, p->b);
  if (r->b && r->interleave != p->interleave) DIFF("interleave %d vs %d", r->interleave, p->interleave);
  if (r->F && !r->F_atleast && !r->sticky && r->F != p->F + p->sticky)
    DIFF("F %d vs %d", r->F, p->F + p->sticky);
  if (r->F_atleast && p->F < r->F) DIFF("F >= %d vs %d", r->F, p->F);
  if (r->align_ok) {
    /* a sticky bit below F bits cuts a term as round-to-odd at F + 1 bits */
    lowp_rounding_t a = p->sticky ? LOWP_RND_TO : p->align;
    if (r->align != a) DIFF("align %s vs %s", lowp_rounding_name(r->align), lowp_rounding_name(a));
  }
  /* with promotion, c starts the fp32 total: it is added after the blocks */
  if (r->late_c >= 0 && r->late_c != (p->late_c || m->promote > 0))
    DIFF("latec %d vs %d", r->late_c, p->late_c || m->promote > 0);
  if (fp32 && !r->out_frac_atleast && r->F && r->out_frac != p->out_frac)
    DIFF("outfrac %d vs %d", r->out_frac, p->out_frac);
  if (r->out_ok) {
    lowp_rounding_t want = fp32 ? p->out_rnd : p->out16_rnd;
    if (r->out_rnd != want)
      DIFF("%s %s vs %s", fp32 ? "out" : "out16", lowp_rounding_name(r->out_rnd), lowp_rounding_name(want));
  }
  if (r->c_ok) {
    lowp_rounding_t want = m->promote > 0 ? LOWP_RND_NE
                           : p->late_c   ? p->c_rnd
                                         : (fp32 ? p->out_rnd : p->out16_rnd);
    if (r->c_rnd != want)
      DIFF("c rounding %s vs %s", lowp_rounding_name(r->c_rnd), lowp_rounding_name(want));
  }
  if (r->promote_probed && r->promote != m->promote) DIFF("promote %zu vs %zu", r->promote, m->promote);
  /* the zero questions: how the model reads each (docs/gpu.md). In a
     block, (a) is zsum's sign and (b) zrnd's; a datapath whose blocks start
     from +0 (late c) or whose fp32 total does (promotion) adds the block's
     zero to c's or the total's by a rounded addition: +0 either way (+0 +
     -0 is +0 to nearest). (c): zero products never take part in the
     alignment; (d): c = 0 does as 2^emin(out) with c0align=emin (late c and
     promotion start their blocks from c = 0 too). */
  {
    int late = p->late_c || m->promote > 0;
    int za = late || p->zsum_pos ? 1 : -1, zb = late || p->zrnd_pos ? 1 : -1;
    int zd = p->c0_emin ? 1 : -1;
    if (r->zero_neg && r->zero_neg != za)
      DIFF("zero (a): every addend -0 gives %s vs the model's %s", r->zero_neg > 0 ? "+0" : "-0", za > 0 ? "+0" : "-0");
    if (r->zero_round && r->zero_round != zb)
      DIFF("zero (b): a negative sum rounded to zero gives %s vs the model's %s", r->zero_round > 0 ? "+0" : "-0",
           zb > 0 ? "+0" : "-0");
    if (r->zero_align == 1) DIFF("zero (c): a zero product moves the alignment vs the model's not");
    if (r->zero_floor && r->zero_floor != zd)
      DIFF("zero (d): with c = 0 the alignment floor is %s vs the model's %s",
           r->zero_floor > 0 ? "the output's emin" : "the largest product",
           zd > 0 ? "output's emin" : "largest product");
  }
#undef DIFF
  return nd;
}
