/* lowp_bsprobe -- the block-scaled MMA probes (model/bsprobe.h says what each one builds) */

#include "model/bsprobe.h"
#include "status.h"

#include <math.h>
#include <string.h>

#define MAXK 256

int lowp_bsprobe_model_dev(void *ctx, double *d, const double *a, const double *b, const double *sa,
                           const double *sb, size_t n, size_t blk, double c) {
  const lowp_bsprobe_model_t *m = ctx;
  return lowp_bsmma(d, a, b, sa, sb, n, 0, blk, c, m->p, m->fa, m->fb, m->fs);
}

int lowp_bsprobe_run(lowp_bsprobe_t *r, lowp_bsprobe_fn dev, void *ctx, int K, size_t blk,
                     const lowp_format_t *el) {
  double a[MAXK], b[MAXK], sa[MAXK], sb[MAXK], d, T;
  int j, st, E;
  size_t i;
  if (!r || !dev || !el || K < 3 || K > MAXK || blk == 0) return LOWP_EINVAL;
  E = el->emax - 1; /* the probe's products sit at 2^E, above every zero term's 2 emin */
  T = ldexp(1.0, E);
  memset(r, 0, sizeof *r);
  r->K = K, r->F = -1, r->group = K;
  for (i = 0; i < MAXK; i++) sa[i] = sb[i] = 1.0, b[i] = 1.0;
  /* F: +1 and -1 cancel in separate terms; c = 2^-j survives iff j <= F */
  for (j = 1; j <= 60; j++) {
    memset(a, 0, sizeof a);
    a[0] = T, a[K - 1] = -T;
    if ((st = dev(ctx, &d, a, b, sa, sb, (size_t)K, blk, ldexp(1.0, E - j)))) return st;
    if (d == ldexp(1.0, E - j)) r->F = j;
    else break;
  }
  if (j > 60) { r->F = -1; return LOWP_OK; } /* nothing cut: one exact group of K */
  /* group: 1.5 at 0 and -1 at r share a group iff c = 2^-(F+1) survives */
  for (j = 1; j < K - 1; j++) {
    memset(a, 0, sizeof a);
    a[0] = 1.5 * T, a[j] = -T, a[K - 1] = -0.5 * T;
    if ((st = dev(ctx, &d, a, b, sa, sb, (size_t)K, blk, ldexp(1.0, E - 1 - r->F)))) return st;
    if (d == 0.0) { r->group = j; break; }
  }
  return LOWP_OK;
}
