/* lowp_accum -- summation orders in any format, each step rounded exactly once */

/*
 * Every operation is lowp_accum_add: TwoSum (Knuth, TAOCP 2, 4.2.2) gives
 * x + y = hi + lo exactly, hi the binary64 nearest to the sum. hi's
 * significand, shifted to 64 bits (sig, a multiple of 2^11), with lo folded
 * in as a sticky bit, is then rounded once by lowp_round_sig. Why folding is
 * exact for p <= 52: |lo| <= 2^10 units of sig, and every p-bit rounding
 * boundary or midpoint is a multiple of 2^11 units. If lo has hi's sign, the
 * value lies in (sig, sig + 2^10): "sig + sticky" is in the same cell. If
 * not, it lies in (sig - 2^10, sig): "(sig - 1) + sticky" is. When hi is a
 * power of two the binade below has half the spacing, but then |lo| is at
 * most half of that binade's ulp (hi is the nearest double), and after
 * renormalising (sig - 1) the same argument holds one binade down.
 */

#include "model/accum.h"
#include "format/number.h"
#include "format/round_ne.h"
#include "status.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/escape.h"

/* ------------------------------------------------------ private helpers */

/* |v| = sig 2^(e-63), sig's top bit set (v finite, nonzero). */
static void unpack64(uint64_t *sig, int64_t *e, double v) {
  int ex;
  double f = frexp(fabs(v), &ex); /* f in [0.5, 1) */
  *sig = (uint64_t)ldexp(f, 53) << 11;
  *e = ex - 1;
}

static int is_fp64_like(const lowp_format_t *f) {
  return f->precision >= 53;
}

/* ----------------------------------------------------------- public API */

/* accum_add's fast paths, where they apply (1; else 0, nothing set), f a format of p <= 52: f32 (rne in
   binary32, lowp__fp32_like): lowp__add_fp32 (format/round_ne.h), where the sum is a normal number or
   zero; ne (rne): TwoSum of a finite nonzero sum, then lowp__round_ne_fast, where the remainder lo
   decides only on the lattice or a midpoint (an exact sum, lo = 0, is lowp_round_f64's first step,
   without its call and mode checks). Elsewhere accum_add's full path gives the same bits. Inline: the
   lanes of lowp_accum_dot_many take it too. */
static inline int add_fast(double *z, int *tern, double x, double y, const lowp_format_t *f, int f32, int ne) {
  double hi, bb, lo;
  if (f32 && lowp__add_fp32(z, tern, x, y)) return 1;
  if (!ne) return 0;
  hi = x + y;
  bb = hi - x;
  lo = (x - (hi - bb)) + (y - bb);
  /* a finite hi: x and y finite too (an inf or NaN operand gives an inf or NaN) */
  return hi != 0 && isfinite(hi) && lowp__round_ne_fast(z, tern, hi, lo > 0 ? 1 : lo < 0 ? -1 : 0, f);
}

static int accum_add(double *z, double x, double y, const lowp_format_t *f,
                     lowp_rounding_t rnd) {
  double hi, lo, bb;
  uint64_t sig;
  int64_t e;
  int neg, tern;
  if (is_fp64_like(f)) { *z = x + y; return 0; }
  if (add_fast(z, &tern, x, y, f, rnd == LOWP_RND_NE && lowp__fp32_like(f), rnd == LOWP_RND_NE)) return tern;
  hi = x + y;
  if (!isfinite(hi) || !isfinite(x) || !isfinite(y))
    return lowp_round_f64(z, hi, f, NULL, rnd);
  /* TwoSum: exact in binary64 (no overflow: lowp formats sit far inside) */
  bb = hi - x;
  lo = (x - (hi - bb)) + (y - bb);
  if (hi == 0) { /* IEEE 754 6.3: like zeros keep their sign; opposite zeros
                    and exact cancellation give +0, or -0 rounding down */
    if (x == 0 && y == 0 && signbit(x) == signbit(y)) *z = x;
    else *z = rnd == LOWP_RND_DN ? -0.0 : 0.0;
    return lowp_round_f64(z, *z, f, NULL, rnd);
  }
  if (lo == 0) return lowp_round_f64(z, hi, f, NULL, rnd);
  neg = signbit(hi) != 0;
  unpack64(&sig, &e, hi);
  if ((lo < 0) == neg) {
    return lowp_round_sig(z, neg, e, sig, 1, f, NULL, rnd, 0);
  }
  /* opposite signs: the value is just below |hi| */
  sig -= 1;
  if (!(sig >> 63)) { sig <<= 1; e -= 1; }
  return lowp_round_sig(z, neg, e, sig, 1, f, NULL, rnd, 0);
}

/* A NaN sum is the positive quiet NaN, whatever NaN the hardware made
   (x86 gives inf - inf a negative one, ARM a positive one): the same bytes
   on every machine, and those of the vectorised orders (cpu/reduce_fast.h). */
int lowp_accum_add(double *z, double x, double y, const lowp_format_t *f,
                     lowp_rounding_t rnd) {
  int st = accum_add(z, x, y, f, rnd);
  if (*z != *z) *z = NAN;
  return st;
}

int lowp_accum_format_check(const lowp_format_t *f, char *err, size_t errlen) {
  const char *why = NULL;
  if (!f || lowp_format_validate(f, NULL, 0) != 0) why = "invalid format";
  else if (!f->has_zero)
    why = "a format without zero cannot hold a sum (x + (-x) has nowhere to go)";
  else if (!f->has_sign)
    why = "an unsigned format cannot hold a sum of signed terms or a difference";
  if (why) lowp_errf(err, errlen, 0, "%s", why);
  return why ? LOWP_EINVAL : LOWP_OK;
}

int lowp_accum_validate(const lowp_accum_t *m, char *err, size_t errlen) {
  char fmt_err[160];
  const char *why = NULL;
  if ((unsigned)m->order > LOWP_ACC_KAHAN) why = "unknown order";
  else if ((m->order == LOWP_ACC_BLOCKED || m->order == LOWP_ACC_SPLITK) && m->block == 0)
    why = "blocked and splitk need a block size / slice count >= 1";
  else if ((unsigned)m->rnd >= LOWP_RND_COUNT || m->rnd == LOWP_RND_SR)
    why = "rounding must be rne, rna, rtz, rup, rdn or rto";
  else if (m->acc.precision >= 53 && (m->acc.precision > 53 || m->rnd != LOWP_RND_NE))
    why = "an accumulation format of 53 bits needs rnd=rne; wider ones are not modelled";
  else if (lowp_accum_format_check(&m->acc, fmt_err, sizeof fmt_err) != 0)
    why = fmt_err;
  if (why) lowp_errf(err, errlen, 0, "%s", why);
  return why ? LOWP_EINVAL : LOWP_OK;
}

int lowp_accum_parse(lowp_accum_t *m, const char *spec, char *err, size_t errlen) {
  char buf[256], *tok, *next, *colon;
  int first = 1;
  unsigned seen = 0;
  if (!spec || strlen(spec) >= sizeof buf) {
    lowp_errf(err, errlen, 0, "accumulation spec missing or too long");
    return LOWP_EINVAL;
  }
  strcpy(buf, spec);
  memset(m, 0, sizeof *m);
  m->acc = LOWP_FMT_FP32;
  m->rnd = LOWP_RND_NE;
  for (tok = buf; tok; tok = next, first = 0) {
    char *eq;
    next = strchr(tok, ',');
    if (next) *next++ = '\0';
    eq = strchr(tok, '=');
    if (first) {
      long long v = 0;
      colon = strchr(tok, ':');
      if (colon) {
        *colon++ = '\0';
        /* format/number.h's integers; a count beyond 2^40 is refused, not
           clamped (strtol turned 99999999999999999999 into LONG_MAX) */
        if (lowp_parse_int(&v, colon, 1, LOWP_ACC_MAX_COUNT) != LOWP_OK) {
          lowp_errf(err, errlen, 0, "'%s': expected a count in [1, 2^40] after ':'", colon);
          return LOWP_EINVAL;
        }
        if (strcmp(tok, "blocked") && strcmp(tok, "splitk")) {
          lowp_errf(err, errlen, 0, "'%s' takes no ':' count (only blocked:B and splitk:S)", tok);
          return LOWP_EINVAL;
        }
      }
      if (!strcmp(tok, "recursive")) m->order = LOWP_ACC_RECURSIVE;
      else if (!strcmp(tok, "fma")) { m->order = LOWP_ACC_RECURSIVE; m->fma = 1; }
      else if (!strcmp(tok, "pairwise")) m->order = LOWP_ACC_PAIRWISE;
      else if (!strcmp(tok, "blocked")) { m->order = LOWP_ACC_BLOCKED; m->block = colon ? (size_t)v : 32; }
      else if (!strcmp(tok, "splitk")) { m->order = LOWP_ACC_SPLITK; m->block = colon ? (size_t)v : 4; }
      else if (!strcmp(tok, "kahan")) m->order = LOWP_ACC_KAHAN;
      else {
        lowp_errf(err, errlen, 0, "unknown order '%s' (recursive, pairwise, blocked:B, splitk:S, kahan, fma)", tok);
        return LOWP_EINVAL;
      }
      continue;
    }
    if (!eq) {
      lowp_errf(err, errlen, 0, "'%s': expected key=value", tok);
      return LOWP_EINVAL;
    }
    *eq = '\0';
    {
      unsigned k = !strcmp(tok, "acc") ? 1u : !strcmp(tok, "rnd") ? 2u : !strcmp(tok, "fma") ? 4u : 0u;
      if (k & seen) {
        lowp_errf(err, errlen, 0, "'%s' is given twice", tok);
        return LOWP_EINVAL;
      }
      seen |= k;
    }
    if (!strcmp(tok, "acc")) {
      if (lowp_format_parse(&m->acc, eq + 1, err, errlen) != LOWP_OK) return LOWP_EINVAL;
    } else if (!strcmp(tok, "rnd")) {
      if (lowp_rounding_parse(&m->rnd, eq + 1) != LOWP_OK) {
        lowp_errf(err, errlen, 0, "rnd=%s: unknown rounding mode", eq + 1);
        return LOWP_EINVAL;
      }
    } else if (!strcmp(tok, "fma")) {
      if (strcmp(eq + 1, "0") && strcmp(eq + 1, "1")) {
        lowp_errf(err, errlen, 0, "fma=%s: expected 0 or 1", eq + 1);
        return LOWP_EINVAL;
      }
      m->fma = eq[1] == '1';
    } else {
      lowp_errf(err, errlen, 0, "unknown key '%s' (acc, rnd, fma)", tok);
      return LOWP_EINVAL;
    }
  }
  return lowp_accum_validate(m, err, errlen);
}

void lowp_accum_str(char *buf, size_t len, const lowp_accum_t *m) {
  static const char *const names[] = {"recursive", "pairwise", "blocked", "splitk", "kahan"};
  char ord[48];
  if (m->order == LOWP_ACC_BLOCKED || m->order == LOWP_ACC_SPLITK)
    snprintf(ord, sizeof ord, "%s:%zu", names[m->order], m->block);
  else
    snprintf(ord, sizeof ord, "%s", names[m->order]);
  snprintf(buf, len, "%s,acc=%s,rnd=%s,fma=%d", ord, m->acc.name,
           lowp_rounding_name(m->rnd), m->fma);
}

/* ------------------------------------------------------------ the orders */

/* A term source: either x[i] (sums) or a[i sa] b[i sb] (dots). A term is
   handed over exact; `first` operations therefore round it only once. */
typedef struct {
  const double *x, *a, *b;
  size_t sa, sb;
  int rounded_products; /* dots with fma = 0: round each product first */
  const lowp_accum_t *m;
} src_t;

static double term(const src_t *s, size_t i) {
  double t;
  if (s->x) return s->x[i];
  t = s->a[i * s->sa] * s->b[i * s->sb]; /* exact for <= 26-bit significands */
  if (s->rounded_products &&
      !(s->m->rnd == LOWP_RND_NE && lowp__fp32_like(&s->m->acc) && lowp__fp32_rne(&t, t, 0.0)))
    lowp_round_f64(&t, t, &s->m->acc, NULL, s->m->rnd);
  return t;
}

static double add(const src_t *s, double x, double y) {
  double z;
  lowp_accum_add(&z, x, y, &s->m->acc, s->m->rnd);
  return z;
}

/* recursive over [lo, hi): the first term enters exactly with the second */
static double recursive(const src_t *s, size_t lo, size_t hi) {
  double acc;
  size_t i;
  if (hi <= lo) return 0.0;
  acc = term(s, lo);
  if (hi - lo == 1) return add(s, acc, 0.0); /* a lone term is rounded once */
  acc = add(s, acc, term(s, lo + 1));
  for (i = lo + 2; i < hi; i++) acc = add(s, acc, term(s, i));
  return acc;
}

/* pairwise: leaves are single terms (exact); every addition rounds */
static double pairwise_raw(const src_t *s, size_t lo, size_t hi) {
  size_t mid;
  if (hi - lo == 1) return term(s, lo);
  mid = lo + (hi - lo) / 2;
  return add(s, pairwise_raw(s, lo, mid), pairwise_raw(s, mid, hi));
}

static double kahan(const src_t *s, size_t n) {
  double sum = 0.0, c = 0.0, y, t;
  size_t i;
  for (i = 0; i < n; i++) {
    y = add(s, term(s, i), -c);
    t = add(s, sum, y);
    c = add(s, add(s, t, -sum), -y);
    sum = t;
  }
  return sum;
}

static double run(const src_t *s, size_t n) {
  const lowp_accum_t *m = s->m;
  size_t lo, w;
  double acc;
  int started;
  if (n == 0) return 0.0;
  switch (m->order) {
  case LOWP_ACC_PAIRWISE:
    return n == 1 ? add(s, term(s, 0), 0.0) : pairwise_raw(s, 0, n);
  case LOWP_ACC_KAHAN:
    return kahan(s, n);
  case LOWP_ACC_BLOCKED:
  case LOWP_ACC_SPLITK:
    w = m->order == LOWP_ACC_BLOCKED ? m->block : (n + m->block - 1) / m->block;
    if (w == 0) w = 1;
    acc = 0.0;
    started = 0;
    for (lo = 0; lo < n; lo += w) {
      size_t hi = lo + w < n ? lo + w : n;
      double part = recursive(s, lo, hi);
      acc = started ? add(s, acc, part) : part;
      started = 1;
    }
    return acc;
  case LOWP_ACC_RECURSIVE:
  default:
    return recursive(s, 0, n);
  }
}

/* ------------------------------------------------ outputs side by side */

/* lowp_accum_dot_many: up to LOWP_ACCUM_LANES dots, each by the operations run() does for it alone,
   interleaved term by term so that the CPU overlaps the independent chains of roundings (one dot's
   chain is serial: each addition waits on the one before it). A lane's value depends only on its own
   operands and operations, never on the others or on how many there are. */
typedef struct {
  const double *a[LOWP_ACCUM_LANES], *b[LOWP_ACCUM_LANES];
  size_t sa, sb, g;
  int sum; /* sums of a (b unused) */
  int rounded_products;
  int f32, ne; /* add_fast's paths (f32 also lowp__fp32_rne for rounded products) */
  const lowp_accum_t *m;
} msrc_t;

/* add()'s value: accum_add's fast paths inline (add_fast), else lowp_accum_add itself; the same bits:
   where a fast path is taken, lowp_accum_add returns what it gives, never a NaN */
static inline double madd(const msrc_t *s, double x, double y) {
  double z;
  int tern;
  if (add_fast(&z, &tern, x, y, &s->m->acc, s->f32, s->ne)) return z;
  lowp_accum_add(&z, x, y, &s->m->acc, s->m->rnd);
  return z;
}

/* term()'s value for lane l */
static inline double mterm(const msrc_t *s, size_t l, size_t i) {
  double t;
  if (s->sum) return s->a[l][i * s->sa];
  t = s->a[l][i * s->sa] * s->b[l][i * s->sb];
  if (s->rounded_products && !(s->f32 && lowp__fp32_rne(&t, t, 0.0)))
    lowp_round_f64(&t, t, &s->m->acc, NULL, s->m->rnd);
  return t;
}

/* recursive() on every lane */
static void mrecursive(const msrc_t *s, size_t lo, size_t hi, double *acc) {
  size_t i, l;
  if (hi <= lo) {
    for (l = 0; l < s->g; l++) acc[l] = 0.0;
    return;
  }
  for (l = 0; l < s->g; l++) acc[l] = mterm(s, l, lo);
  if (hi - lo == 1) {
    for (l = 0; l < s->g; l++) acc[l] = madd(s, acc[l], 0.0);
    return;
  }
  for (i = lo + 1; i < hi; i++)
    for (l = 0; l < s->g; l++) acc[l] = madd(s, acc[l], mterm(s, l, i));
}

/* pairwise_raw() on every lane */
static void mpairwise(const msrc_t *s, size_t lo, size_t hi, double *out) {
  double r[LOWP_ACCUM_LANES];
  size_t mid, l;
  if (hi - lo == 1) {
    for (l = 0; l < s->g; l++) out[l] = mterm(s, l, lo);
    return;
  }
  mid = lo + (hi - lo) / 2;
  mpairwise(s, lo, mid, out);
  mpairwise(s, mid, hi, r);
  for (l = 0; l < s->g; l++) out[l] = madd(s, out[l], r[l]);
}

/* lowp_accum_dot_many and lowp_accum_sum_many (b NULL) */
static int many(double *out, size_t g, const double *const *a, size_t sa, const double *const *b, size_t sb,
                size_t n, const lowp_accum_t *m) {
  const lowp_acc_order_t ord = m->order;
  double part[LOWP_ACCUM_LANES];
  msrc_t s;
  size_t l, lo, w;
  if (g > LOWP_ACCUM_LANES || lowp_accum_validate(m, NULL, 0) != LOWP_OK) return LOWP_EINVAL;
  if (ord == LOWP_ACC_KAHAN) { /* not interleaved (not a tree: no use for it so far) */
    for (l = 0; l < g; l++)
      (void)(b ? lowp_accum_dot(&out[l], a[l], sa, b[l], sb, n, m) : lowp_accum_sum(&out[l], a[l], n, m));
    return LOWP_OK;
  }
  memset(&s, 0, sizeof s);
  for (l = 0; l < g; l++) s.a[l] = a[l], s.b[l] = b ? b[l] : NULL;
  s.sa = sa, s.sb = sb, s.g = g, s.m = m, s.sum = !b;
  s.rounded_products = b && !m->fma;
  s.f32 = m->rnd == LOWP_RND_NE && lowp__fp32_like(&m->acc);
  s.ne = m->rnd == LOWP_RND_NE && !is_fp64_like(&m->acc);
  if (n == 0) {
    for (l = 0; l < g; l++) out[l] = 0.0;
    return LOWP_OK;
  }
  switch (ord) { /* run()'s cases */
  case LOWP_ACC_PAIRWISE:
    if (n == 1) {
      for (l = 0; l < g; l++) out[l] = madd(&s, mterm(&s, l, 0), 0.0);
    } else
      mpairwise(&s, 0, n, out);
    break;
  case LOWP_ACC_BLOCKED:
  case LOWP_ACC_SPLITK:
    w = ord == LOWP_ACC_BLOCKED ? m->block : (n + m->block - 1) / m->block;
    if (w == 0) w = 1;
    for (lo = 0; lo < n; lo += w) {
      mrecursive(&s, lo, lo + w < n ? lo + w : n, part);
      for (l = 0; l < g; l++) out[l] = lo ? madd(&s, out[l], part[l]) : part[l];
    }
    break;
  case LOWP_ACC_RECURSIVE:
  default:
    mrecursive(&s, 0, n, out);
    break;
  }
  return LOWP_OK;
}

int lowp_accum_dot_many(double *out, size_t g, const double *const *a, size_t sa, const double *const *b,
                        size_t sb, size_t n, const lowp_accum_t *m) {
  size_t l;
  if (!b) return LOWP_EINVAL;
  for (l = 0; l < g && l < LOWP_ACCUM_LANES; l++)
    if (n && !b[l]) return LOWP_EINVAL;
  return many(out, g, a, sa, b, sb, n, m);
}

int lowp_accum_sum_many(double *out, size_t g, const double *const *x, size_t n, const lowp_accum_t *m) {
  return many(out, g, x, 1, NULL, 0, n, m);
}

int lowp_accum_sum(double *s, const double *x, size_t n, const lowp_accum_t *m) {
  src_t src;
  if (lowp_accum_validate(m, NULL, 0) != LOWP_OK) return LOWP_EINVAL;
  memset(&src, 0, sizeof src);
  src.x = x;
  src.m = m;
  *s = run(&src, n);
  return LOWP_OK;
}

int lowp_accum_dot(double *s, const double *a, size_t sa, const double *b,
                   size_t sb, size_t n, const lowp_accum_t *m) {
  src_t src;
  if (lowp_accum_validate(m, NULL, 0) != LOWP_OK) return LOWP_EINVAL;
  memset(&src, 0, sizeof src);
  src.a = a;
  src.b = b;
  src.sa = sa;
  src.sb = sb;
  src.rounded_products = !m->fma;
  src.m = m;
  *s = run(&src, n);
  return LOWP_OK;
}
