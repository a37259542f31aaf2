/* lowp_reduce_fast's loops, compiled once per instruction set: included by
   reduce_fast.c with SFX (a name suffix), ATTR (a target attribute or
   nothing) and FTWO (ftwo, or ftwo512 in the AVX-512 copy) defined. No
   include guard: meant to be included several times. */

#define LOWP_CAT2(a, b) a##b
#define LOWP_CAT(a, b) LOWP_CAT2(a, b)
#define FN(name) LOWP_CAT(name, SFX)

/* pairwise over [lo, hi), hi - lo >= 1: leaves are exact terms, every
   addition rounds once (lowp_accum_dot's pairwise_raw, mid the same) */
ATTR static void FN(pair_)(double *out, const octx_t *c, size_t lo, size_t hi) {
  double tmp[OW] __attribute__((aligned(64)));
  size_t mid;
  if (hi - lo == 1) {
    term(out, c, lo);
    return;
  }
  if (hi - lo == 2 && c->f64) { /* round(t + t) in one loop */
    const double a0 = c->arow[lo], a1 = c->arow[lo + 1];
    const double *b0 = c->panel + lo * OW, *b1 = b0 + OW;
    size_t j;
    for (j = 0; j < OW; j++) out[j] = a0 * b0[j] + a1 * b1[j];
    return;
  }
  mid = lo + (hi - lo) / 2;
  FN(pair_)(out, c, lo, mid);
  FN(pair_)(tmp, c, mid, hi);
  add_to(out, tmp, c);
}

/* recursive over [lo, hi), hi - lo >= 1: the first two terms in one
   rounding, a lone term rounded once (round(t + 0)) */
ATTR static void FN(rec_)(double *out, const octx_t *c, size_t lo, size_t hi) {
  double t[OW] __attribute__((aligned(64)));
  size_t l;
  term(out, c, lo);
  if (hi - lo == 1) {
    memset(t, 0, sizeof t);
    add_to(out, t, c);
    return;
  }
  if (c->f64) { /* term and add_to in one loop: binary64 a b, then + */
    for (l = lo + 1; l < hi; l++) {
      const double av = c->arow[l], *bl = c->panel + l * OW;
      size_t j;
      for (j = 0; j < OW; j++) out[j] = out[j] + av * bl[j];
    }
    return;
  }
  for (l = lo + 1; l < hi; l++) {
    term(t, c, l);
    add_to(out, t, c);
  }
}

/* one row of outputs (OW columns) in the order, k >= 1 */
ATTR static void FN(row_)(double *out, const octx_t *c, size_t k) {
  double part[OW] __attribute__((aligned(64)));
  size_t lo, w;
  switch (c->order) {
  case LOWP_ACC_PAIRWISE:
    if (k == 1) FN(rec_)(out, c, 0, 1);
    else FN(pair_)(out, c, 0, k);
    break;
  case LOWP_ACC_BLOCKED:
  case LOWP_ACC_SPLITK:
    w = c->order == LOWP_ACC_BLOCKED ? c->block : (k + c->block - 1) / c->block;
    if (w == 0) w = 1;
    /* block sums, added left to right from the first (no initial rounding) */
    FN(rec_)(out, c, 0, w < k ? w : k);
    for (lo = w; lo < k; lo += w) {
      FN(rec_)(part, c, lo, lo + w < k ? lo + w : k);
      add_to(out, part, c);
    }
    break;
  default:
    FN(rec_)(out, c, 0, k);
    break;
  }
}

/* ---- fp32 in rne on binary32 lanes (OWF outputs): a sum of two fp32
   values is one binary32 addition, a term added to one fmaf (or, fma = 0,
   a binary32 product then an addition), two exact terms TwoSum rounded to
   odd, then to binary32 by the conversion (ftwo) */

/* pairwise over 1 to 3 terms: t, round(t + t), round(t + round(t + t)) */
ATTR AI void FN(fsmall_)(float *out, const fctx_t *c, size_t lo, size_t hi) {
  const float a0 = c->arow[lo], *b0 = c->panel + lo * OWF;
  size_t j;
  if (hi - lo == 1) {
    flone(out, c, lo);
    return;
  }
  if (hi - lo == 2) {
    FTWO(out, c, lo);
    return;
  }
  FTWO(out, c, lo + 1);
  if (c->rp)
    for (j = 0; j < OWF; j++) out[j] = a0 * b0[j] + out[j];
  else
    for (j = 0; j < OWF; j++) out[j] = fmaf(a0, b0[j], out[j]);
}

/* pairwise over [lo, hi), hi - lo >= 1 */
ATTR static void FN(fpair_)(float *out, const fctx_t *c, size_t lo, size_t hi) {
  float tmp[OWF] __attribute__((aligned(64)));
  size_t mid, j;
  if (hi - lo <= 3) {
    FN(fsmall_)(out, c, lo, hi);
    return;
  }
  mid = lo + (hi - lo) / 2;
  if (hi - lo <= 6) { /* both halves of 2 or 3 terms: no calls */
    FN(fsmall_)(out, c, lo, mid);
    FN(fsmall_)(tmp, c, mid, hi);
  } else {
    FN(fpair_)(out, c, lo, mid);
    FN(fpair_)(tmp, c, mid, hi);
  }
  for (j = 0; j < OWF; j++) out[j] = out[j] + tmp[j];
}

/* recursive over [lo, hi), hi - lo >= 1 */
ATTR static void FN(frec_)(float *out, const fctx_t *c, size_t lo, size_t hi) {
  size_t l, j;
  if (hi - lo == 1) {
    flone(out, c, lo);
    return;
  }
  FTWO(out, c, lo);
  for (l = lo + 2; l < hi; l++) {
    const float av = c->arow[l], *bl = c->panel + l * OWF;
    if (c->rp)
      for (j = 0; j < OWF; j++) out[j] = av * bl[j] + out[j];
    else
      for (j = 0; j < OWF; j++) out[j] = fmaf(av, bl[j], out[j]);
  }
}

ATTR static void FN(frow_)(float *out, const fctx_t *c, size_t k) {
  float part[OWF] __attribute__((aligned(64)));
  size_t lo, w, j;
  switch (c->order) {
  case LOWP_ACC_PAIRWISE:
    FN(fpair_)(out, c, 0, k);
    break;
  case LOWP_ACC_BLOCKED:
  case LOWP_ACC_SPLITK:
    w = c->order == LOWP_ACC_BLOCKED ? c->block : (k + c->block - 1) / c->block;
    if (w == 0) w = 1;
    FN(frec_)(out, c, 0, w < k ? w : k);
    for (lo = w; lo < k; lo += w) {
      FN(frec_)(part, c, lo, lo + w < k ? lo + w : k);
      for (j = 0; j < OWF; j++) out[j] = out[j] + part[j];
    }
    break;
  default:
    FN(frec_)(out, c, 0, k);
    break;
  }
}

#undef FN
#undef LOWP_CAT
#undef LOWP_CAT2
