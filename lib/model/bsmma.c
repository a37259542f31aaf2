/* lowp_bsmma -- block-scaled tensor-core MMA, computed exactly with integers; presets */

/*
 * The model is described in model/bsmma.h. Presets, and the evidence:
 *
 *   b200,kind=mxf8f6f4   tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale
 *                        (PTX ISA 8.7+, sm_100a): K = 32, one ue8m0 scale
 *                        per 32 elements of A and of B (scale_vec::1X); each
 *                        product aligned with its scale exponents added,
 *                        F = 25, truncation, fp32 toward zero (issue 33's
 *                        description of B200, the F of lowp's b200 fp8
 *                        preset, docs/design.md).
 *   b200,kind=mxf4nvf4   tcgen05.mma...kind::mxf4nvf4.block_scale
 *                        .scale_vec::2X (mxfp4, ue8m0, blocks of 32) or
 *                        ::4X (nvfp4, ue4m3, blocks of 16): K = 64, exact
 *                        sums of 16 products scaled by their two scales,
 *                        fused with c at F = 35 (issue 33; the DeepGEMM
 *                        thread measured 34..37 without settling it).
 *   sm120,kind=...       mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4
 *                        .block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue8m0
 *                        and mma.sync.aligned.m16n8k64...kind::mxf4nvf4
 *                        .block_scale.scale_vec::{2X,4X} (sm_120a): B200's
 *                        parameters. No sm_120 row has been captured: like
 *                        h200 and l40s in tc_model.c these are the
 *                        hypothesis a GPU run must confirm (lowp probe).
 *
 * Range of the integers: an unpacked narrow value has a significand below
 * 2^8 (e4m3: 4 bits; ue4m3 scale: 4), a product term of four of them is
 * below 2^32 at its lowest bit and below 2^(x+5); a cut term is below
 * 2^(F+5); the sum of
 * K <= 256 terms and c is below 2^(F+14) <= 2^62 (F <= 48).
 */

#define _POSIX_C_SOURCE 200809L /* strtok_r */

#include "model/bsmma.h"
#include "model/tc_int.h"
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/escape.h"

/* ------------------------------------------------------ private helpers */

typedef struct {
  uint64_t M; /* |term| = M 2^E; M = 0: a zero term */
  int E, x, neg, live;
} term_t;

/* the scale of product i: its significand, exponent and x */
static int scale_of(uint64_t *M, int *E, int *x, double s, const lowp_format_t *fs) {
  return lowp__tc_unpack(M, E, x, fabs(s), fs->emin);
}

/* One term from a product (group == 0): a zero term when a, b or a scale is 0. */
static int product_term(term_t *t, double a, double b, double sa, double sb, const lowp_format_t *fa,
                        const lowp_format_t *fb, const lowp_format_t *fs) {
  uint64_t ma, mb, msa, msb;
  int ea, eb, esa, esb, xa, xb, xsa, xsb;
  if (lowp__tc_unpack(&ma, &ea, &xa, a, fa->emin) || lowp__tc_unpack(&mb, &eb, &xb, b, fb->emin) ||
      scale_of(&msa, &esa, &xsa, sa, fs) || scale_of(&msb, &esb, &xsb, sb, fs))
    return LOWP_EINVAL;
  t->neg = signbit(a) != signbit(b);
  t->M = ma * mb * msa * msb; /* < 2^32: four significands of <= 8 bits */
  t->E = ea + eb + esa + esb;
  t->x = t->M ? xa + xb + xsa + xsb : fa->emin + fb->emin + xsa + xsb;
  return LOWP_OK;
}

/* One term from g products sharing the scales sa, sb (group > 0). */
static int group_term(term_t *t, const double *a, const double *b, size_t g, double sa, double sb,
                      const lowp_format_t *fa, const lowp_format_t *fb, const lowp_format_t *fs) {
  uint64_t Mi[256], msa, msb, U;
  int Ei[256], negi[256], emin = 1 << 20, xsa, xsb, esa, esb, x;
  int64_t G = 0;
  size_t i, n = 0;
  if (scale_of(&msa, &esa, &xsa, sa, fs) || scale_of(&msb, &esb, &xsb, sb, fs)) return LOWP_EINVAL;
  for (i = 0; i < g; i++) {
    uint64_t ma, mb;
    int ea, eb, xa, xb;
    if (lowp__tc_unpack(&ma, &ea, &xa, a[i], fa->emin) || lowp__tc_unpack(&mb, &eb, &xb, b[i], fb->emin))
      return LOWP_EINVAL;
    if (!ma || !mb) continue;
    Mi[n] = ma * mb, Ei[n] = ea + eb, negi[n] = signbit(a[i]) != signbit(b[i]);
    if (Ei[n] < emin) emin = Ei[n];
    n++;
  }
  for (i = 0; i < n; i++) { /* the exact sum at the lowest bit of the products */
    int sh = Ei[i] - emin;
    if (sh + lowp_bitlen64(Mi[i]) + 8 > 62) return LOWP_EINVAL;
    G += negi[i] ? -(int64_t)(Mi[i] << sh) : (int64_t)(Mi[i] << sh);
  }
  t->neg = G < 0;
  U = G < 0 ? (uint64_t)(-(G + 1)) + 1 : (uint64_t)G;
  if (!U || !msa || !msb) {
    t->M = 0;
    t->x = fa->emin + fb->emin + xsa + xsb;
    return LOWP_OK;
  }
  x = lowp_bitlen64(U) - 1 + emin;
  if (lowp_bitlen64(U) + 8 > 62) return LOWP_EINVAL;
  t->M = U * msa * msb;
  t->E = emin + esa + esb;
  t->x = x + xsa + xsb;
  return LOWP_OK;
}

/* NaN (1), +inf (2), -inf (3) or finite (0) result of the instruction's specials */
static int specials(const double *a, const double *b, const double *sa, const double *sb, size_t n,
                    size_t off, size_t blk, double c) {
  int pinf = 0, ninf = 0;
  size_t i;
  if (isnan(c)) return 1;
  for (i = 0; i < n; i++) {
    double s1 = sa[(off + i) / blk], s2 = sb[(off + i) / blk];
    if (isnan(a[i]) || isnan(b[i]) || isnan(s1) || isnan(s2)) return 1;
    if (isinf(a[i]) || isinf(b[i])) {
      if (a[i] == 0 || b[i] == 0 || s1 == 0 || s2 == 0) return 1;
      if (signbit(a[i]) != signbit(b[i])) ninf = 1;
      else pinf = 1;
    }
  }
  if (isinf(c)) { if (c < 0) ninf = 1; else pinf = 1; }
  if (pinf && ninf) return 1;
  return pinf ? 2 : ninf ? 3 : 0;
}

/* ----------------------------------------------------------- public API */

int lowp_bsmma_validate(const lowp_bsmma_t *p, char *err, size_t errlen) {
  const char *why = NULL;
  if (p->K < 1 || p->K > 256) why = "K must be in [1, 256]";
  else if (p->group < 0 || p->group > p->K || (p->group && p->K % p->group)) why = "group must be 0 or divide K";
  else if (p->F < 1 || p->F > 48) why = "F must be in [1, 48]";
  else if ((unsigned)p->out_rnd >= LOWP_RND_COUNT || p->out_rnd == LOWP_RND_SR) why = "out must be rne, rna, rtz, rup, rdn or rto";
  else if (p->zero != LOWP_BSZ_IGNORE && p->zero != LOWP_BSZ_EMIN) why = "zero must be ignore or emin";
  if (why) lowp_errf(err, errlen, 0, "%s", why);
  return why ? LOWP_EINVAL : LOWP_OK;
}

int lowp_bsmma(double *d, const double *a, const double *b, const double *sa, const double *sb,
               size_t n, size_t off, size_t blk, double c, const lowp_bsmma_t *p,
               const lowp_format_t *fa, const lowp_format_t *fb, const lowp_format_t *fs) {
  term_t t[257];
  size_t i, nt = 0, step;
  int X = INT32_MIN, L, sp, anynz = 0, allneg = 1;
  int64_t S = 0;
  if (lowp_bsmma_validate(p, NULL, 0) || n > (size_t)p->K || blk == 0 || !d) return LOWP_EINVAL;
  if ((sp = specials(a, b, sa, sb, n, off, blk, c))) {
    *d = sp == 1 ? NAN : sp == 2 ? INFINITY : -INFINITY;
    return LOWP_OK;
  }
  step = p->group ? (size_t)p->group : 1;
  for (i = 0; i < n; i += step) {
    size_t len = n - i < step ? n - i : step, j;
    double s1 = sa[(off + i) / blk], s2 = sb[(off + i) / blk];
    int st;
    for (j = 1; j < len; j++) /* a group never straddles two scale blocks */
      if ((off + i + j) / blk != (off + i) / blk) return LOWP_EINVAL;
    st = p->group ? group_term(&t[nt], a + i, b + i, len, s1, s2, fa, fb, fs)
                  : product_term(&t[nt], a[i], b[i], s1, s2, fa, fb, fs);
    if (st) return st;
    for (j = 0; j < len; j++) allneg &= (signbit(a[i + j]) != signbit(b[i + j]));
    t[nt].live = t[nt].M != 0 || p->zero == LOWP_BSZ_EMIN;
    if (t[nt].M) anynz = 1;
    if (t[nt].live && t[nt].x > X) X = t[nt].x;
    nt++;
  }
  if (c != 0) {
    if (lowp__tc_unpack(&t[nt].M, &t[nt].E, &t[nt].x, c, LOWP_FMT_FP32.emin)) return LOWP_EINVAL;
    t[nt].neg = signbit(c) != 0, t[nt].live = 1;
    if (t[nt].x > X) X = t[nt].x;
    nt++;
    anynz = 1;
  } else allneg &= signbit(c) != 0;
  if (!anynz) { *d = allneg ? -0.0 : 0.0; return LOWP_OK; }
  L = X - p->F;
  for (i = 0; i < nt; i++) {
    uint64_t v;
    if (!t[i].M) continue;
    v = lowp__tc_cut(t[i].M, t[i].E, L, LOWP_RND_TZ);
    S += t[i].neg ? -(int64_t)v : (int64_t)v;
  }
  if (S == 0) { *d = 0.0; return LOWP_OK; }
  lowp__tc_round_out(d, S < 0, S < 0 ? (uint64_t)(-(S + 1)) + 1 : (uint64_t)S, L, &LOWP_FMT_FP32, p->out_rnd, 1);
  return LOWP_OK;
}

int lowp_bsmma_dot(double *d, const double *a, const double *b, const double *sa, const double *sb,
                   size_t k, size_t blk, double c, const lowp_bsmma_t *p, const lowp_format_t *fa,
                   const lowp_format_t *fb, const lowp_format_t *fs) {
  size_t i;
  double acc = c;
  int st;
  for (i = 0; i < k; i += (size_t)p->K) {
    size_t n = k - i < (size_t)p->K ? k - i : (size_t)p->K;
    if ((st = lowp_bsmma(&acc, a + i, b + i, sa, sb, n, i, blk, acc, p, fa, fb, fs))) return st;
  }
  *d = acc;
  return LOWP_OK;
}

void lowp_bsmma_str(char *buf, size_t len, const lowp_bsmma_t *p) {
  snprintf(buf, len, "K=%d,group=%d,F=%d,out=%s,zero=%s", p->K, p->group, p->F, lowp_rounding_name(p->out_rnd),
           p->zero == LOWP_BSZ_EMIN ? "emin" : "ignore");
}

/* presets: GPU x kind */
static const struct {
  const char *gpu, *kind, *instr;
  lowp_bsmma_t p;
} PRESETS[] = {
    {"b200", "mxf8f6f4", "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X",
     {32, 0, 25, LOWP_RND_TZ, LOWP_BSZ_IGNORE}},
    {"b200", "mxf4nvf4", "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::{2X,4X}",
     {64, 16, 35, LOWP_RND_TZ, LOWP_BSZ_IGNORE}},
    {"sm120", "mxf8f6f4", "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X",
     {32, 0, 25, LOWP_RND_TZ, LOWP_BSZ_IGNORE}},
    {"sm120", "mxf4nvf4", "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::{2X,4X}",
     {64, 16, 35, LOWP_RND_TZ, LOWP_BSZ_IGNORE}}};

static int set_key(lowp_bsmma_t *p, const char *key, const char *v, char *err, size_t errlen) {
  char *end;
  long n = strtol(v, &end, 10);
  int isnum = *v && !*end;
  if (!strcmp(key, "K") && isnum) p->K = (int)n;
  else if (!strcmp(key, "group") && isnum) p->group = (int)n;
  else if (!strcmp(key, "F") && isnum) p->F = (int)n;
  else if (!strcmp(key, "out") && lowp_rounding_parse(&p->out_rnd, v) == LOWP_OK) {}
  else if (!strcmp(key, "zero") && (!strcmp(v, "emin") || !strcmp(v, "ignore")))
    p->zero = !strcmp(v, "emin") ? LOWP_BSZ_EMIN : LOWP_BSZ_IGNORE;
  else {
    lowp_errf(err, errlen, 0, "block-scaled model: bad '%s=%s' (keys: K, group, F, out, zero=ignore|emin; "
              "presets b200,kind=mxf8f6f4|mxf4nvf4 and sm120,kind=...)", key, v);
    return LOWP_EINVAL;
  }
  return LOWP_OK;
}

int lowp_bsmma_get(lowp_bsmma_model_t *m, const char *spec, char *err, size_t errlen) {
  char buf[256], *item, *save = NULL, gpu[32] = "";
  const char *kind = NULL;
  size_t i;
  int st;
  if (!m || !spec) return LOWP_EINVAL;
  if (strlen(spec) >= sizeof buf) {
    lowp_errf(err, errlen, 0, "block-scaled model: the description is longer than %zu characters",
              sizeof buf - 1);
    return LOWP_EINVAL;
  }
  memset(m, 0, sizeof *m);
  m->p.K = 32, m->p.group = 0, m->p.F = 25, m->p.out_rnd = LOWP_RND_TZ, m->p.zero = LOWP_BSZ_IGNORE;
  m->instr = "custom";
  strcpy(buf, spec);
  for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    if (!eq) {
      if (gpu[0] || strlen(item) >= sizeof gpu) goto bad;
      strcpy(gpu, item);
      continue;
    }
    *eq = '\0';
    if (!strcmp(item, "kind")) {
      kind = eq + 1;
      for (i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++)
        if (gpu[0] && !strcmp(PRESETS[i].gpu, gpu) && !strcmp(PRESETS[i].kind, kind)) {
          m->p = PRESETS[i].p;
          m->instr = PRESETS[i].instr;
          break;
        }
      if (i == sizeof PRESETS / sizeof PRESETS[0]) goto bad;
    } else if ((st = set_key(&m->p, item, eq + 1, err, errlen))) return st;
  }
  if (gpu[0] && !kind) goto bad;
  snprintf(m->name, sizeof m->name, "%s", spec);
  return lowp_bsmma_validate(&m->p, err, errlen);
bad:
  lowp_errf(err, errlen, 0, "unknown block-scaled model '%s' (presets: b200,kind=mxf8f6f4 b200,kind=mxf4nvf4 "
            "sm120,kind=mxf8f6f4 sm120,kind=mxf4nvf4; or K=..,group=..,F=..)", spec);
  return LOWP_EINVAL;
}
