/* tbsquant -- block-scaled quantizers against an exact MPFR evaluation of each rule's definition */

/*
 * The oracle below is written from the rules' definitions (docs/formats.md,
 * "Block-scaled formats", and the sources cited there), not from
 * lib/format/bsquant.c: element and scale formats are typed in from their
 * specifications (OCP OFP8 and MX v1.0, IEEE 754), rounding is done by
 * MPFR on the exact values (quotients carry MPFR's ternary so that a tie is
 * decided by the exact value), and every fp32 operation is an MPFR
 * operation at 24 bits with binary32's exponent range and subnormals. Each
 * block's scale, every element, and the dequantized values must agree
 * exactly (NaN with NaN, and the sign of zero).
 *
 * Inputs: every binary32 binade edge (amax at 2^k, its neighbours, the
 * element's xmax times 2^k, and the threshold where "even" rounds amax up,
 * for k = -149..127), tie points of the element grid, special blocks (zero,
 * -0, inf, NaN, subnormal, FLT_MAX), and random blocks (realistic: normal
 * values under a random power of two; raw: random bit patterns).
 * LOWP_BSQ_BLOCKS sets the random blocks per rule and format (default
 * 2500); tests/long/tbsquant_million.c runs 10^6 per format.
 */

#include "format/bsformat.h"
#include "format/bsquant.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREC 320

/* ------------------------------------------------------------ the oracle */

/* A format as its specification gives it: p significant bits, exponents
   emin..emax of the normal binades, largest finite value; integers: the
   multiples of 1 up to xmax. */
typedef struct {
  int p, emin, emax;
  double xmax;
  int is_int, has_inf;
} ofmt_t;

static const ofmt_t O_E4M3 = {4, -6, 8, 448.0, 0, 0}, O_E5M2 = {3, -14, 15, 57344.0, 0, 1},
                    O_E3M2 = {3, -2, 4, 28.0, 0, 0}, O_E2M3 = {4, 0, 2, 7.5, 0, 0},
                    O_E2M1 = {2, 0, 2, 6.0, 0, 0}, O_INT8 = {0, 0, 0, 127.0, 1, 0},
                    O_INT4 = {0, 0, 0, 7.0, 1, 0}, O_INT6 = {0, 0, 0, 31.0, 1, 0},
                    O_FP16 = {11, -14, 15, 65504.0, 0, 1}, O_FP32 = {24, -126, 127, FLT_MAX, 0, 1},
                    O_BF16 = {8, -126, 127, 0x1.fep127, 0, 1}, O_E8M0 = {1, -127, 127, 0x1p127, 0, 0};

enum { R_FLOOR, R_CEIL, R_EVEN, R_RCEIL, R_NVFP4, R_ABSMAX, R_GGML };

typedef struct {
  const char *spec; /* what lowp parses */
  const ofmt_t *el, *sc;
  int rule, block, tensor;
  int lo, hi; /* power-of-two scale exponents (e8m0: -127..127) */
} combo_t;

static mpfr_t T1, T2, T3;

static int floor_log2(mpfr_srcptr a) { return (int)mpfr_get_exp(a) - 1; }
static int ceil_log2(mpfr_srcptr a) {
  int f = floor_log2(a);
  return f + (mpfr_cmp_si_2exp(a, 1, f) != 0);
}

/* out = v rounded to f: to nearest (ties even, or away), from the exact value
   v, or from v with ternary dir (the exact value is below v if dir > 0,
   above if dir < 0). sat: clamp to +-xmax; else beyond xmax is inf (NaN
   without inf). */
static void o_round(mpfr_t out, mpfr_srcptr v, int dir, const ofmt_t *f, int away, int sat) {
  long e;
  if (mpfr_nan_p(v)) { mpfr_set_nan(out); return; }
  if (mpfr_inf_p(v)) {
    if (sat) mpfr_set_d(out, mpfr_sgn(v) < 0 ? -f->xmax : f->xmax, MPFR_RNDN);
    else if (f->has_inf) mpfr_set(out, v, MPFR_RNDN);
    else mpfr_set_nan(out);
    return;
  }
  if (mpfr_zero_p(v)) { mpfr_set(out, v, MPFR_RNDN); return; }
  e = f->is_int ? 0 : (floor_log2(v) > f->emin ? floor_log2(v) : f->emin) - f->p + 1;
  mpfr_mul_2si(T3, v, -e, MPFR_RNDN);
  mpfr_frac(out, T3, MPFR_RNDN);
  if (dir && (mpfr_abs(out, out, MPFR_RNDN), mpfr_cmp_ui_2exp(out, 1, -1) == 0)) {
    if (dir > 0) mpfr_floor(T3, T3);
    else mpfr_ceil(T3, T3);
  } else if (away) mpfr_round(T3, T3);
  else mpfr_rint(T3, T3, MPFR_RNDN);
  mpfr_mul_2si(out, T3, e, MPFR_RNDN);
  if (mpfr_cmpabs(out, (mpfr_set_d(T3, f->xmax, MPFR_RNDN), T3)) > 0) {
    if (sat) mpfr_set_d(out, mpfr_sgn(out) < 0 ? -f->xmax : f->xmax, MPFR_RNDN);
    else if (f->has_inf) mpfr_set_inf(out, mpfr_sgn(out));
    else mpfr_set_nan(out);
  }
}

/* r = fl32(a op b): one binary32 operation (MPFR at 24 bits, exponent
   range of binary32, subnormals by mpfr_subnormalize) */
static void f32op(mpfr_t r, char op, mpfr_srcptr a, mpfr_srcptr b) {
  mpfr_t t;
  int i;
  mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_init2(t, 24);
  mpfr_set_emin(-148);
  mpfr_set_emax(128);
  i = op == '*' ? mpfr_mul(t, a, b, MPFR_RNDN) : mpfr_div(t, a, b, MPFR_RNDN);
  i = mpfr_check_range(t, i, MPFR_RNDN);
  (void)mpfr_subnormalize(t, i, MPFR_RNDN);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  mpfr_set(r, t, MPFR_RNDN);
  mpfr_clear(t);
}

static void fminf_fltmax(mpfr_t v) {
  if (mpfr_nan_p(v) || mpfr_cmp_d(v, FLT_MAX) > 0) mpfr_set_d(v, FLT_MAX, MPFR_RNDN);
}

/* the exponent of a power-of-two rule, or INT32_MIN for the NaN scale */
static long o_pow2(double amax, const combo_t *c) {
  long e;
  if (isnan(amax)) return INT32_MIN;
  mpfr_set_d(T1, amax, MPFR_RNDN);
  if (c->rule == R_RCEIL) {
    mpfr_set_d(T2, c->el->xmax, MPFR_RNDN);
    f32op(T1, '/', T1, T2);
    if (mpfr_zero_p(T1)) return c->lo;
    e = mpfr_inf_p(T1) ? c->hi : ceil_log2(T1);
    return e < c->lo ? c->lo : e > c->hi ? c->hi : e;
  }
  if (isinf(amax)) return INT32_MIN;
  if (amax == 0.0) return c->lo;
  if (c->rule == R_FLOOR) e = floor_log2(T1) - c->el->emax;
  else if (c->rule == R_CEIL) e = ceil_log2(T1) - c->el->emax;
  else { /* even: amax to p significant bits, ties away */
    long q = floor_log2(T1) - c->el->p + 1;
    mpfr_mul_2si(T1, T1, -q, MPFR_RNDN);
    mpfr_round(T1, T1);
    mpfr_mul_2si(T1, T1, q, MPFR_RNDN);
    e = floor_log2(T1) - c->el->emax;
  }
  if (e > c->hi) return INT32_MIN;
  return e < c->lo ? c->lo : e;
}

/* The oracle's block: scale S (NaN for the NaN scale) and elements Q. */
static void o_block(mpfr_t S, mpfr_t *Q, const float *x, int len, const combo_t *c, mpfr_srcptr senc,
                    mpfr_srcptr sdec) {
  double amax = 0.0;
  int j, dir;
  for (j = 0; j < len; j++) {
    if (isnan(x[j])) amax = NAN;
    else if (fabs(x[j]) > amax) amax = fabs(x[j]);
  }
  if (c->rule <= R_RCEIL) {
    long e = o_pow2(amax, c);
    if (e == INT32_MIN) goto nan_scale;
    mpfr_set_si_2exp(S, 1, e, MPFR_RNDN);
    for (j = 0; j < len; j++) {
      mpfr_set_d(T1, x[j], MPFR_RNDN);
      mpfr_mul_2si(T1, T1, -e, MPFR_RNDN);
      o_round(Q[j], T1, 0, c->el, 0, 1);
    }
    return;
  }
  if (c->rule == R_NVFP4) {
    mpfr_set_d(T1, c->el->xmax, MPFR_RNDN);
    mpfr_set_ui(T3, 1, MPFR_RNDN);
    f32op(T2, '/', T3, T1); /* fl32(1 / xmax_e) */
    f32op(T2, '*', senc, T2);
    mpfr_set_d(T1, amax, MPFR_RNDN);
    f32op(T1, '*', T1, T2);
    if (isnan(amax)) goto nan_scale;
    fminf_fltmax(T1);
    o_round(S, T1, 0, c->sc, 0, 1);
    if (mpfr_nan_p(S)) goto nan_scale;
    f32op(T1, '*', S, sdec);
    mpfr_set_ui(T2, 1, MPFR_RNDN);
    f32op(T1, '/', T2, T1);
    fminf_fltmax(T1);
    for (j = 0; j < len; j++) {
      mpfr_set_d(T2, x[j], MPFR_RNDN);
      f32op(T2, '*', T2, T1);
      o_round(Q[j], T2, 0, c->el, 0, 1);
    }
    return;
  }
  if (!isfinite(amax)) goto nan_scale;
  if (c->rule == R_ABSMAX) {
    mpfr_set_d(T1, amax, MPFR_RNDN);
    dir = mpfr_div_d(T1, T1, c->el->xmax, MPFR_RNDN);
    o_round(S, T1, dir, c->sc, 0, 0);
    if (!mpfr_number_p(S)) goto nan_scale;
    for (j = 0; j < len; j++) {
      if (mpfr_zero_p(S)) { mpfr_set_zero(Q[j], 1); continue; }
      mpfr_set_d(T1, x[j], MPFR_RNDN);
      dir = mpfr_div(T1, T1, S, MPFR_RNDN);
      o_round(Q[j], T1, dir, c->el, 0, 1);
    }
    return;
  }
  /* ggml */
  mpfr_set_d(T1, amax, MPFR_RNDN);
  mpfr_set_d(T2, c->el->xmax, MPFR_RNDN);
  f32op(T1, '/', T1, T2); /* d */
  o_round(S, T1, 0, c->sc, 0, 0);
  if (!mpfr_number_p(S)) goto nan_scale;
  if (mpfr_zero_p(T1)) mpfr_set_zero(T2, 1);
  else mpfr_set_ui(T2, 1, MPFR_RNDN), f32op(T2, '/', T2, T1); /* id */
  for (j = 0; j < len; j++) {
    mpfr_set_d(T1, x[j], MPFR_RNDN);
    f32op(T1, '*', T1, T2);
    if (mpfr_nan_p(T1)) mpfr_set_zero(T1, 1); /* 0 * inf: the rule takes 0 */
    o_round(Q[j], T1, 0, c->el, 1, 1);
  }
  return;
nan_scale:
  mpfr_set_nan(S);
  for (j = 0; j < len; j++) mpfr_set_zero(Q[j], 1);
}

/* ------------------------------------------------------------- checking */

#define MAXLEN 512
static mpfr_t OQ[MAXLEN], OS, SENC, SDEC;
static long n_blocks, n_nan_blocks;

static int same(double v, mpfr_srcptr o) {
  if (isnan(v) || mpfr_nan_p(o)) return isnan(v) && mpfr_nan_p(o);
  if (mpfr_cmp_d(o, v) != 0) return 0;
  return v != 0.0 || (signbit(v) != 0) == (mpfr_signbit(o) != 0);
}

/* quantize one tensor (1 x n) with lowp and the oracle; compare everything. given < 0: the tensor
   amax is x's own (lowp_bs_quantize); else lowp_bs_quantize_amax with that amax (a calibrated one) */
static void check_tensor_amax(const combo_t *c, const lowp_bsformat_t *bf, const float *x, int n, const char *what,
                              double given) {
  double q[MAXLEN], s[MAXLEN], y[MAXLEN], ts = 1.0, amax_t = 0.0;
  int nb = (n + c->block - 1) / c->block, b, j, bad = 0;
  char h1[64], h2[64];
  if ((given < 0 ? lowp_bs_quantize(q, s, &ts, x, 1, (size_t)n, bf)
                 : lowp_bs_quantize_amax(q, s, &ts, x, 1, (size_t)n, bf, given)) != LOWP_OK) {
    lowp_test_check(0, "%s: lowp_bs_quantize failed", c->spec);
    return;
  }
  (void)lowp_bs_dequantize(y, q, s, ts, 1, (size_t)n, bf);
  if (c->tensor) {
    for (j = 0; j < n; j++) amax_t = isnan(x[j]) || isnan(amax_t) ? NAN : fmax(amax_t, fabs(x[j]));
    if (given >= 0) amax_t = given;
    mpfr_set_d(T1, 2688.0, MPFR_RNDN); /* fl32(448 * 6) = 2688 exactly */
    mpfr_set_d(T2, amax_t, MPFR_RNDN);
    f32op(SENC, '/', T1, T2);
    fminf_fltmax(SENC);
    if (amax_t == 0.0 || mpfr_zero_p(SENC)) mpfr_set_ui(SENC, 1, MPFR_RNDN);
    mpfr_set_ui(T1, 1, MPFR_RNDN);
    f32op(SDEC, '/', T1, SENC);
    bad |= !lowp_test_check(same(ts, SDEC), "%s %s: tensor scale %s, oracle %s", c->spec, what,
                            lowp_test_hex(ts, h1, sizeof h1),
                            lowp_test_hex(mpfr_get_d(SDEC, MPFR_RNDN), h2, sizeof h2));
  } else mpfr_set_ui(SDEC, 1, MPFR_RNDN);
  for (b = 0; b < nb && !bad; b++) {
    int off = b * c->block, len = n - off < c->block ? n - off : c->block;
    o_block(OS, OQ, x + off, len, c, SENC, SDEC);
    n_blocks++;
    n_nan_blocks += mpfr_nan_p(OS) != 0;
    if (!lowp_test_check(same(s[b], OS), "%s %s block %d: scale %s, oracle %s", c->spec, what, b,
                         lowp_test_hex(s[b], h1, sizeof h1),
                         lowp_test_hex(mpfr_get_d(OS, MPFR_RNDN), h2, sizeof h2))) break;
    for (j = 0; j < len; j++) {
      double xv = x[off + j];
      if (!lowp_test_check(same(q[off + j], OQ[j]), "%s %s block %d: x=%a -> q %a, oracle %a (scale %a)",
                           c->spec, what, b, xv, q[off + j], mpfr_get_d(OQ[j], MPFR_RNDN), s[b])) {
        bad = 1;
        break;
      }
      if (mpfr_nan_p(OS)) mpfr_set_nan(T1);
      else mpfr_mul(T1, OQ[j], OS, MPFR_RNDN), mpfr_mul(T1, T1, SDEC, MPFR_RNDN);
      if (!lowp_test_check(same(y[off + j], T1), "%s %s: dequantized %a, oracle %a", c->spec, what,
                           y[off + j], mpfr_get_d(T1, MPFR_RNDN))) {
        bad = 1;
        break;
      }
    }
  }
}

static void check_tensor(const combo_t *c, const lowp_bsformat_t *bf, const float *x, int n, const char *what) {
  check_tensor_amax(c, bf, x, n, what, -1.0);
}

/* ---------------------------------------------------------------- inputs */

static float f32_pred(float v) { return nextafterf(v, 0.0f); }
static float f32_succ(float v) { return nextafterf(v, INFINITY); }

/* a tensor of 3 full blocks and a short one; element 0 is a, the rest tie
   points a * j / 64 and random values of magnitude <= a */
static void fill(float *x, int n, float a, lowp_rng_t *g) {
  int j;
  x[0] = a;
  for (j = 1; j < n; j++) {
    uint64_t u = lowp_rng_next(g);
    float v = (u & 1) ? a * (float)((long)(u >> 8) % 129 - 64) / 64.0f
                      : a * (float)(2.0 * lowp_rng_uniform(g) - 1.0);
    x[j] = v;
  }
}

static int tensor_len(const combo_t *c) { return 3 * c->block + (c->block > 1 ? c->block / 2 + 1 : 1); }

static void edges(const combo_t *c, const lowp_bsformat_t *bf, lowp_rng_t *g) {
  float x[MAXLEN];
  int k, n = tensor_len(c), v;
  char what[64];
  for (k = -149; k <= 127; k++) {
    float p2 = ldexpf(1.0f, k);
    float anchors[9];
    double xm = ldexp(c->el->xmax, k - c->el->emax), ev = ldexp(2.0 - ldexp(1.0, -c->el->p), k);
    anchors[0] = p2, anchors[1] = f32_pred(p2), anchors[2] = f32_succ(p2);
    anchors[3] = xm < FLT_MAX ? (float)xm : FLT_MAX;
    anchors[4] = f32_pred(anchors[3]), anchors[5] = f32_succ(anchors[3]);
    anchors[6] = ev < FLT_MAX ? (float)ev : FLT_MAX;
    anchors[7] = f32_pred(anchors[6]), anchors[8] = f32_succ(anchors[6]);
    for (v = 0; v < 9; v++) {
      if (!isfinite(anchors[v]) || anchors[v] == 0.0f) continue;
      fill(x, n, anchors[v], g);
      snprintf(what, sizeof what, "edge 2^%d #%d", k, v);
      check_tensor(c, bf, x, n, what);
    }
  }
}

static void specials(const combo_t *c, const lowp_bsformat_t *bf, lowp_rng_t *g) {
  float x[MAXLEN];
  int n = tensor_len(c), j, k;
  const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, FLT_MAX, -FLT_MAX, 0x1p-149f, 0x1p-126f,
                      0x1.fffffcp-127f};
  for (k = 0; k < (int)(sizeof sp / sizeof sp[0]); k++) {
    char what[48];
    for (j = 0; j < n; j++) x[j] = (j % 3 == 0) ? sp[k] : (j % 3 == 1 ? 0.0f : -0.0f);
    snprintf(what, sizeof what, "special %d (block of it)", k);
    check_tensor(c, bf, x, n, what);
    fill(x, n, 1.5f, g);
    x[n / 3] = sp[k];
    snprintf(what, sizeof what, "special %d (one element)", k);
    check_tensor(c, bf, x, n, what);
  }
}

static void randoms(const combo_t *c, const lowp_bsformat_t *bf, lowp_rng_t *g, long nblocks) {
  float x[MAXLEN];
  int n = tensor_len(c), j;
  long t, per = (n + c->block - 1) / c->block;
  for (t = 0; t < nblocks; t += per) {
    int kind = (int)(t / per % 4);
    if (kind < 3) { /* realistic: normals under one power of two per tensor, and per block */
      int e = (int)(lowp_rng_next(g) % 240) - 130;
      for (j = 0; j < n; j++) {
        int eb = kind == 2 ? (int)(lowp_rng_next(g) % 17) - 8 : 0;
        x[j] = (float)ldexp(lowp_rng_normal(g), e + (j / c->block % 2) * eb);
      }
    } else { /* raw bit patterns, NaN and inf included */
      for (j = 0; j < n; j++) {
        uint32_t u = (uint32_t)lowp_rng_next(g);
        if ((u & 0xff) != 0 && ((u >> 23) & 0xff) == 0xff) u &= 0xbfffffffu; /* mostly finite */
        memcpy(&x[j], &u, sizeof u);
      }
    }
    check_tensor(c, bf, x, n, kind < 3 ? "random" : "random bits");
    if (kind == 1) { /* a given (calibrated) tensor amax: larger than x's (no saturation), smaller (blocks
                        above it saturate), 0 (encode scale 1) */
      double a = lowp_bs_amax(x, (size_t)n);
      check_tensor_amax(c, bf, x, n, "random, tensor amax 1.7x", 1.7 * a);
      check_tensor_amax(c, bf, x, n, "random, tensor amax 0.3x", 0.3 * a);
      check_tensor_amax(c, bf, x, n, "random, tensor amax 0", 0.0);
    }
  }
}

int main(void) {
  static const combo_t combos[] = {
      {"mxfp8_e4m3:floor", &O_E4M3, &O_E8M0, R_FLOOR, 32, 0, -127, 127},
      {"mxfp8_e4m3:ceil", &O_E4M3, &O_E8M0, R_CEIL, 32, 0, -127, 127},
      {"mxfp8_e4m3:even", &O_E4M3, &O_E8M0, R_EVEN, 32, 0, -127, 127},
      {"mxfp8_e4m3:rceil", &O_E4M3, &O_E8M0, R_RCEIL, 32, 0, -127, 127},
      {"mxfp8_e5m2:floor", &O_E5M2, &O_E8M0, R_FLOOR, 32, 0, -127, 127},
      {"mxfp8_e5m2:rceil", &O_E5M2, &O_E8M0, R_RCEIL, 32, 0, -127, 127},
      {"mxfp6_e3m2:floor", &O_E3M2, &O_E8M0, R_FLOOR, 32, 0, -127, 127},
      {"mxfp6_e3m2:even", &O_E3M2, &O_E8M0, R_EVEN, 32, 0, -127, 127},
      {"mxfp6_e2m3:floor", &O_E2M3, &O_E8M0, R_FLOOR, 32, 0, -127, 127},
      {"mxfp6_e2m3:rceil", &O_E2M3, &O_E8M0, R_RCEIL, 32, 0, -127, 127},
      {"mxfp4:floor", &O_E2M1, &O_E8M0, R_FLOOR, 32, 0, -127, 127},
      {"mxfp4:ceil", &O_E2M1, &O_E8M0, R_CEIL, 32, 0, -127, 127},
      {"mxfp4:even", &O_E2M1, &O_E8M0, R_EVEN, 32, 0, -127, 127},
      {"mxfp4:rceil", &O_E2M1, &O_E8M0, R_RCEIL, 32, 0, -127, 127},
      {"nvfp4", &O_E2M1, &O_E4M3, R_NVFP4, 16, 1, 0, 0},
      {"int8_b32", &O_INT8, &O_FP16, R_GGML, 32, 0, 0, 0},
      {"int8_b32:absmax", &O_INT8, &O_FP16, R_ABSMAX, 32, 0, 0, 0},
      {"int4_b32", &O_INT4, &O_FP16, R_GGML, 32, 0, 0, 0},
      {"int4_b32:absmax", &O_INT4, &O_FP16, R_ABSMAX, 32, 0, 0, 0},
      {"elem=e4m3,scale=fp16,block=8,rule=floor", &O_E4M3, &O_FP16, R_FLOOR, 8, 0, -24, 15},
      {"elem=e4m3,scale=fp32,block=5,rule=absmax", &O_E4M3, &O_FP32, R_ABSMAX, 5, 0, 0, 0},
      {"elem=int6,scale=bf16,block=24,rule=ggml", &O_INT6, &O_BF16, R_GGML, 24, 0, 0, 0},
      {"elem=e2m3,scale=e8m0,block=1,rule=ceil", &O_E2M3, &O_E8M0, R_CEIL, 1, 0, -127, 127},
      {"elem=e5m2,scale=e8m0,block=100,rule=even", &O_E5M2, &O_E8M0, R_EVEN, 100, 0, -127, 127}};
  const char *env = getenv("LOWP_BSQ_BLOCKS");
  long nrand = env ? atol(env) : 2500;
  size_t i;
  lowp_rng_t g;
  lowp_test_start("tbsquant");
  mpfr_inits2(PREC, T1, T2, T3, OS, SENC, SDEC, (mpfr_ptr)0);
  for (i = 0; i < MAXLEN; i++) mpfr_init2(OQ[i], PREC);
  for (i = 0; i < sizeof combos / sizeof combos[0]; i++) {
    const combo_t *c = &combos[i];
    lowp_bsformat_t bf;
    char err[256];
    long before = n_blocks;
    if (!lowp_test_check(lowp_bsformat_parse(&bf, c->spec, err, sizeof err) == LOWP_OK, "parse %s: %s",
                         c->spec, err)) continue;
    lowp_rng_init(&g, lowp_test_seed(), (uint32_t)i);
    edges(c, &bf, &g);
    specials(c, &bf, &g);
    randoms(c, &bf, &g, nrand);
    printf("  %-45s %8ld blocks\n", c->spec, n_blocks - before);
    if (lowp_test_failures() > 20) break;
  }
  printf("  %ld blocks against the MPFR oracle, %ld with the NaN scale\n", n_blocks, n_nan_blocks);
  for (i = 0; i < MAXLEN; i++) mpfr_clear(OQ[i]);
  mpfr_clears(T1, T2, T3, OS, SENC, SDEC, (mpfr_ptr)0);
  mpfr_free_cache();
  return lowp_test_end();
}
