/* fp8q_eval -- exercise 6's evaluation of the shipped models: configurations, per-image results, paired statistics */

#include "fp8q.h"
#include "results.h"
#include "extrapolation.h"

#include "status.h"

#include "io/atomic.h"
#include "io/plot.h"

#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#define MAXCONF (17 + 2 * 8 + 1 + FQ_MAXBS + 2 * (FQ_MAXPHASE - 1))
#define MAXGROUP 16

/* ------------------------------------------------------------- state */

/** Per configuration: per-image predictions and KL, and their summaries. */
typedef struct {
  uint8_t *pred;
  float *kl;
  size_t n;
  double acc, agree, kl_mean, kl_max, dacc, lo, hi, p;
  long b, c; /* FP32 right and this wrong; FP32 wrong and this right */
  lowp_qstats_t w, a;
} out_t;

typedef struct {
  const char *name;
  fq_model_t m;
  int ns, nc, ng;
  fq_calib_t cal[FQ_MAXSITES];
  fq_calib_t resid[LOWP_VIT_MAXLAYERS + 1]; /* ViT: the residual stream after the embedding and each block */
  int nresid;
  fq_config_t cfg[MAXCONF];
  out_t out[MAXCONF];
  char group[MAXGROUP][16];
  uint64_t gmask[MAXGROUP];
  float *ref; /* fp32 logits of the test images */
  double secs;
  int c_bs, nbs;  /* "e2m1 tensor" at c_bs, the block-scaled rows at c_bs + 1 .. c_bs + nbs */
  int c_ph, nph;  /* phase j (1..nph-1) of e4m3 (fi 0) / e5m2 (1) tensor at c_ph + fi (nph - 1) + j - 1 */
  const char *file; /* a further training seed's file under models (its tensor-core and per-layer rows are not
                       evaluated); NULL: the shipped network */
} net_t;

enum { C_FP32 = 0, C_BF16, C_FP16, C_E4 = 3, C_E5 = 7, C_TC = 11, C_LAYER = 17 };
/* C_E4 + j, C_E5 + j: j 0 tensor, 1 channel, 2 tile, 3 mx (fp32 accumulation);
   C_TC + j: 0 e4m3 tensor TC, 1 e4m3 tensor TC+p, 2 e4m3 channel TC, 3 e4m3 channel TC+p,
   4 e5m2 channel TC, 5 e5m2 channel TC+p; C_LAYER + 2 g + fi: group g alone, per tensor; then (net_t)
   e2m1 per tensor, the block-scaled formats, and the per-tensor rows' scale phases */

static const char *const acc_name[3] = {"fp32", "tc", "tc+promote"};

static void add_config(net_t *t, const char *label, const lowp_format_t *f, lowp_qscheme_t ws,
                       lowp_qscheme_t as, fq_acc_t acc, uint64_t sites, int kind, int group) {
  fq_config_t *c = &t->cfg[t->nc++];
  memset(c, 0, sizeof *c);
  snprintf(c->label, sizeof c->label, "%s", label);
  c->f = f;
  c->ws = ws;
  c->as = as;
  c->acc = acc;
  c->sites = sites;
  c->kind = kind;
  c->group = group;
}

static void build_groups(net_t *t) {
  int s, g;
  t->ng = 0;
  for (s = 0; s < t->ns; s++) {
    fq_site_t si = fq_site(&t->m, s);
    for (g = 0; g < t->ng && strcmp(t->group[g], si.group); g++) continue;
    if (g == t->ng) {
      snprintf(t->group[g], sizeof t->group[g], "%s", si.group);
      t->gmask[g] = 0;
      t->ng++;
    }
    t->gmask[g] |= (uint64_t)1 << s;
  }
}

static void build_configs(net_t *t, const fq_settings_t *s) {
  static const char *const sl[4] = {"tensor", "channel", "tile", "mx"};
  static const lowp_qscheme_t ws[4] = {LOWP_QS_TENSOR, LOWP_QS_ROW, LOWP_QS_BLOCK, LOWP_QS_MXBLOCK};
  static const lowp_qscheme_t as[4] = {LOWP_QS_TENSOR, LOWP_QS_TENSOR, LOWP_QS_BLOCK, LOWP_QS_MXBLOCK};
  static const int tcj[6][3] = {{0, 0, 1}, {0, 0, 2}, {0, 1, 1}, {0, 1, 2}, {1, 1, 1}, {1, 1, 2}};
  const lowp_format_t *f8[2] = {&LOWP_FMT_E4M3, &LOWP_FMT_E5M2};
  uint64_t all = t->ns >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << t->ns) - 1;
  char lab[64];
  int fi, j, g;
  t->nc = 0;
  add_config(t, "fp32", NULL, LOWP_QS_CAST, LOWP_QS_CAST, FQ_ACC_F32, all, 0, -1);
  add_config(t, "bf16", &LOWP_FMT_BF16, LOWP_QS_CAST, LOWP_QS_CAST, FQ_ACC_F32, all, 0, -1);
  add_config(t, "fp16", &LOWP_FMT_FP16, LOWP_QS_CAST, LOWP_QS_CAST, FQ_ACC_F32, all, 0, -1);
  for (fi = 0; fi < 2; fi++)
    for (j = 0; j < 4; j++) {
      snprintf(lab, sizeof lab, "%s %s", f8[fi]->name, sl[j]);
      add_config(t, lab, f8[fi], ws[j], as[j], FQ_ACC_F32, all, 0, -1);
    }
  for (j = 0; j < 6; j++) {
    int k = tcj[j][1];
    snprintf(lab, sizeof lab, "%s %s %s", f8[tcj[j][0]]->name, sl[k], tcj[j][2] == 1 ? "TC" : "TC+p");
    add_config(t, lab, f8[tcj[j][0]], ws[k], as[k], (fq_acc_t)tcj[j][2], all, 1, -1);
  }
  for (g = 0; g < t->ng; g++)
    for (fi = 0; fi < 2; fi++) {
      snprintf(lab, sizeof lab, "%s tensor: %s only", f8[fi]->name, t->group[g]);
      add_config(t, lab, f8[fi], LOWP_QS_TENSOR, LOWP_QS_TENSOR, FQ_ACC_F32, t->gmask[g], 2, g);
    }
  t->c_bs = t->nc;
  t->nbs = s->nbs;
  add_config(t, "e2m1 tensor", &LOWP_FMT_E2M1, LOWP_QS_TENSOR, LOWP_QS_TENSOR, FQ_ACC_F32, all, 0, -1);
  for (j = 0; j < s->nbs; j++) {
    add_config(t, s->bsname[j], NULL, LOWP_QS_CAST, LOWP_QS_CAST, FQ_ACC_F32, all, 0, -1);
    t->cfg[t->nc - 1].bs = &s->bsf[j];
  }
  t->c_ph = t->nc;
  t->nph = (int)s->phases;
  for (fi = 0; fi < 2; fi++)
    for (j = 1; j < t->nph; j++) {
      fq_config_t *c;
      snprintf(lab, sizeof lab, "%s tensor x2^(-%d/%d)", f8[fi]->name, j, t->nph);
      add_config(t, lab, f8[fi], LOWP_QS_TENSOR, LOWP_QS_TENSOR, FQ_ACC_F32, all, 3, -1);
      c = &t->cfg[t->nc - 1];
      c->phase = j;
      c->nphase = t->nph;
      c->base = fi ? C_E5 : C_E4;
    }
}

/* --------------------------------------------------------- the passes */

/* the shipped network of this kind, or (file) a further seed's */
static int load_net(const lowp_run_t *r, net_t *t, fq_kind_t kind, const fq_settings_t *s, const char *file) {
  char path[4400], err[4600];
  int st;
  memset(t, 0, sizeof *t);
  t->name = kind == FQ_CNN ? "cnn" : "vit";
  t->file = file;
  if (file) snprintf(path, sizeof path, "%s/%s", s->models, file);
  else snprintf(path, sizeof path, "%s/%s.safetensors", s->models, t->name);
  st = fq_model_load(&t->m, kind, path, err, sizeof err);
  if (st != LOWP_OK) {
    char why[9200];
    if (strstr(err, path)) snprintf(why, sizeof why, "%s (%s)", err, lowp_status_str(st));
    else snprintf(why, sizeof why, "%s: %s (%s)", path, err, lowp_status_str(st));
    lowp_run_bad_param(r, file ? "seed_models" : "models", why);
  }
  t->ns = fq_nsites(&t->m);
  build_groups(t);
  build_configs(t, s);
  return LOWP_OK;
}

static int calibrate(net_t *t, const fq_data_t *tr, size_t n) {
  float *lg = malloc(n * FQ_NCLASS * sizeof *lg);
  int s, nthreads, st = lg ? LOWP_OK : LOWP_ENOMEM;
  for (s = 0; s < t->ns && st == LOWP_OK; s++) {
    fq_site_t si = fq_site(&t->m, s);
    t->cal[s].act_w = si.w == NULL;
    t->cal[s].colmax = calloc((size_t)si.K, sizeof(double));
    t->cal[s].col2 = calloc((size_t)si.K, sizeof(double));
    if (!t->cal[s].colmax || !t->cal[s].col2) st = LOWP_ENOMEM;
  }
  t->nresid = t->m.kind == FQ_VIT ? t->m.vit.layers + 1 : 0;
  for (s = 0; s < t->nresid && st == LOWP_OK; s++) {
    t->resid[s].colmax = calloc((size_t)t->m.vit.d, sizeof(double));
    t->resid[s].col2 = calloc((size_t)t->m.vit.d, sizeof(double));
    if (!t->resid[s].colmax || !t->resid[s].col2) st = LOWP_ENOMEM;
  }
  /* one thread: the sums are taken in image order (short; the kernels' fine-grained parallel
     loops would cost more than they save on a loaded machine) */
  nthreads = omp_get_max_threads();
  omp_set_num_threads(1);
  if (st == LOWP_OK) st = fq_logits_observed(lg, tr, n, &t->m, fq_calib_gemm, t->cal, fq_resid_observe, t->resid);
  omp_set_num_threads(nthreads);
  free(lg);
  return st;
}

/* Per-image results of a configuration against the FP32 logits. */
static void score(out_t *o, const float *lg, const float *ref, const fq_data_t *te, size_t n) {
  size_t i, ok = 0, agree = 0;
  double ks = 0.0;
  o->n = n;
  o->kl_max = 0.0;
  o->b = o->c = 0;
  for (i = 0; i < n; i++) {
    int p = fq_argmax(lg + i * FQ_NCLASS), q = fq_argmax(ref + i * FQ_NCLASS), y = fq_label(te, i);
    double kl = fq_kl(ref + i * FQ_NCLASS, lg + i * FQ_NCLASS);
    o->pred[i] = (uint8_t)p;
    o->kl[i] = (float)kl;
    ok += p == y;
    agree += p == q;
    ks += kl;
    if (kl > o->kl_max) o->kl_max = kl;
    o->b += q == y && p != y;
    o->c += q != y && p == y;
  }
  o->acc = (double)ok / (double)n;
  o->agree = (double)agree / (double)n;
  o->kl_mean = ks / (double)n;
}

/* the images a configuration of this kind is evaluated on (the first n) */
static size_t images_of(const fq_settings_t *s, int kind) {
  return (size_t)(kind == 1 ? s->tc_test : kind == 2 ? s->layer_test : s->test);
}

/* the bootstrap replicates of a kind's images (w[0] all, w[1] tensor-core, w[2] per layer) */
static int wset_of(int kind) { return kind == 3 ? 0 : kind; }

static int eval_config(net_t *t, int k, const fq_data_t *te, const fq_settings_t *s) {
  const fq_config_t *c = &t->cfg[k];
  size_t n = images_of(s, c->kind);
  out_t *o = &t->out[k];
  float *lg = NULL;
  fq_qnet_t q;
  int st;
  if (t->file && (c->kind == 1 || c->kind == 2)) n = 0; /* a further seed: main, block and phase rows only */
  o->pred = malloc(n ? n : 1);
  o->kl = malloc((n ? n : 1) * sizeof *o->kl);
  if (!o->pred || !o->kl) return LOWP_ENOMEM;
  if (n == 0) return LOWP_OK;
  if (!c->f && !c->bs) {
    score(o, t->ref, t->ref, te, n);
    return LOWP_OK;
  }
  st = fq_qnet_build(&q, c, &t->m, t->cal, &s->tc[c->f == &LOWP_FMT_E5M2 ? 1 : 0], (size_t)s->promote,
                     (size_t)s->mxblock);
  if (st == LOWP_OK) st = (lg = malloc(n * FQ_NCLASS * sizeof *lg)) ? LOWP_OK : LOWP_ENOMEM;
  if (st == LOWP_OK) st = fq_logits_q(lg, te, n, &t->m, &q);
  if (st == LOWP_OK) score(o, lg, t->ref, te, n);
  o->w = q.wst;
  o->a = q.ast;
  fq_qnet_free(&q);
  free(lg);
  return st;
}

/* Every configuration, OpenMP over configurations (one per thread; the
   kernels' loops nested inside run serially, so the threads do not wait on
   each other between small parallel loops); each writes only its own out_t,
   so the bytes do not depend on the thread count or the schedule. */
static int eval_all(lowp_run_t *r, net_t *t, const fq_data_t *te, const fq_settings_t *s) {
  int st[MAXCONF], k, done = 0, rc = LOWP_OK;
#pragma omp parallel for schedule(dynamic, 1)
  for (k = 0; k < t->nc; k++) {
    st[k] = eval_config(t, k, te, s);
#pragma omp critical(fq_progress)
    {
      done++;
      lowp_run_progress(r, "%s: evaluated %s (%d/%d)", t->name, t->cfg[k].label, done, t->nc);
    }
  }
  for (k = 0; k < t->nc; k++)
    if (rc == LOWP_OK) rc = st[k];
  return rc;
}

static double since(const struct timespec *a) {
  struct timespec b;
  timespec_get(&b, TIME_UTC);
  return (double)(b.tv_sec - a->tv_sec) + 1e-9 * (double)(b.tv_nsec - a->tv_nsec);
}

static int run_net(lowp_run_t *r, net_t *t, const fq_data_t *tr, const fq_data_t *te, const fq_settings_t *s) {
  struct timespec t0;
  int st;
  timespec_get(&t0, TIME_UTC);
  lowp_run_progress(r, "%s: calibrating on %ld training images", t->name, s->calib);
  st = calibrate(t, tr, (size_t)s->calib);
  if (st == LOWP_OK) st = (t->ref = malloc((size_t)s->test * FQ_NCLASS * sizeof *t->ref)) ? LOWP_OK : LOWP_ENOMEM;
  if (st == LOWP_OK) st = fq_logits_q(t->ref, te, (size_t)s->test, &t->m, NULL);
  if (st == LOWP_OK) st = eval_all(r, t, te, s);
  t->secs = since(&t0);
  return st;
}

static void free_net(net_t *t) {
  int k;
  for (k = 0; k < MAXCONF; k++) {
    free(t->out[k].pred);
    free(t->out[k].kl);
  }
  for (k = 0; k < FQ_MAXSITES; k++) {
    free(t->cal[k].colmax);
    free(t->cal[k].col2);
  }
  for (k = 0; k <= LOWP_VIT_MAXLAYERS; k++) {
    free(t->resid[k].colmax);
    free(t->resid[k].col2);
  }
  free(t->ref);
  fq_model_free(&t->m);
}

/* -------------------------------------------------------- statistics */

/* Paired comparison of configurations a and b on their common images:
   accuracy of b minus a with a bootstrap interval and McNemar's p. */
typedef struct {
  double d, lo, hi, p;
  long b, c;
  size_t n;
} pair_t;

static pair_t paired(const net_t *t, int a, int b, const fq_data_t *te, const uint8_t *w, size_t wn, int reps) {
  const out_t *A = &t->out[a], *Bo = &t->out[b];
  size_t n = A->n < Bo->n ? A->n : Bo->n, i;
  int8_t *d = malloc(n);
  pair_t p;
  long s = 0;
  memset(&p, 0, sizeof p);
  p.n = n;
  if (!d) return p;
  for (i = 0; i < n; i++) {
    int ra = A->pred[i] == fq_label(te, i), rb = Bo->pred[i] == fq_label(te, i);
    d[i] = (int8_t)(rb - ra);
    s += d[i];
    p.b += ra && !rb;
    p.c += !ra && rb;
  }
  p.d = (double)s / (double)n;
  p.p = fq_mcnemar(p.b, p.c);
  if (w && wn == n) fq_boot_ci(w, n, reps, d, &p.lo, &p.hi);
  free(d);
  return p;
}

/* The bootstrap's inputs: test images, replicate weights of the first n, their count, and the seed of the
   nuisance draws (fq_boot_ci_mix). */
typedef struct {
  const fq_data_t *te;
  const uint8_t *w;
  size_t n;
  int reps;
  uint64_t seed;
} boot_t;

/* The rows of a configuration k: k alone, or a per-tensor row's scale phases (k first, at phase 0). */
static int row_set(const net_t *t, int k, int *set) {
  int fi = k == C_E4 ? 0 : k == C_E5 ? 1 : -1, j, n = 0;
  set[n++] = k;
  if (fi >= 0)
    for (j = 1; j < t->nph; j++) set[n++] = t->c_ph + fi * (t->nph - 1) + j - 1;
  return n;
}

/* Accuracy of row set b minus row set a on the same images, over every pair (one row of a, one of b; each
   set one configuration or a per-tensor row's phases): the median, smallest and largest difference, the
   range of McNemar's p, the 95% interval of the bootstrap that draws a pair with the images, and the
   mean KL from FP32 of set b: median and range. */
typedef struct {
  double med, min, max, lo, hi, pmin, pmax, klmed, klmin, klmax, agmin, agmax;
  int np, both; /* pairs; both sets have phases */
} spread_t;

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_dbl);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static spread_t spread(const net_t *t, int ka, int kb, const boot_t *bt) {
  int a[FQ_MAXPHASE], b[FQ_MAXPHASE], na = row_set(t, ka, a), nb = row_set(t, kb, b), i, j, m = 0;
  size_t n = bt->n, x;
  double dv[FQ_MAXPHASE * FQ_MAXPHASE], kv[FQ_MAXPHASE];
  int8_t *buf = malloc((size_t)na * (size_t)nb * n), *d[FQ_MAXPHASE * FQ_MAXPHASE];
  spread_t r;
  memset(&r, 0, sizeof r);
  r.np = na * nb;
  r.both = na > 1 && nb > 1;
  r.pmin = 1.0;
  r.min = r.agmin = 1e300;
  r.max = r.agmax = -1e300;
  if (!buf) return r;
  for (i = 0; i < na; i++)
    for (j = 0; j < nb; j++, m++) {
      const out_t *A = &t->out[a[i]], *B = &t->out[b[j]];
      long bb = 0, cc = 0, sum = 0;
      d[m] = buf + (size_t)m * n;
      for (x = 0; x < n; x++) {
        int ra = A->pred[x] == fq_label(bt->te, x), rb = B->pred[x] == fq_label(bt->te, x);
        d[m][x] = (int8_t)(rb - ra);
        sum += d[m][x];
        bb += ra && !rb;
        cc += !ra && rb;
      }
      dv[m] = (double)sum / (double)n;
      if (dv[m] < r.min) r.min = dv[m];
      if (dv[m] > r.max) r.max = dv[m];
      if (fq_mcnemar(bb, cc) < r.pmin) r.pmin = fq_mcnemar(bb, cc);
      if (fq_mcnemar(bb, cc) > r.pmax) r.pmax = fq_mcnemar(bb, cc);
    }
  r.med = median_of(dv, m);
  fq_boot_ci_mix(bt->w, n, bt->reps, (const int8_t *const *)d, m, bt->seed, &r.lo, &r.hi);
  r.klmin = 1e300;
  for (j = 0; j < nb; j++) {
    const out_t *B = &t->out[b[j]];
    kv[j] = B->kl_mean;
    if (B->kl_mean < r.klmin) r.klmin = B->kl_mean;
    if (B->kl_mean > r.klmax) r.klmax = B->kl_mean;
    if (B->agree < r.agmin) r.agmin = B->agree;
    if (B->agree > r.agmax) r.agmax = B->agree;
  }
  r.klmed = median_of(kv, nb);
  free(buf);
  return r;
}

/* "med [lo, hi] points (...)" of a spread; one pair: as dtext's "d [lo, hi] points, McNemar p" */
static const char *stext(const spread_t *p, char *buf, size_t len) {
  if (p->np == 1)
    snprintf(buf, len, "%+.2f [%+.2f, %+.2f] points, McNemar p = %.2g", 100 * p->med, 100 * p->lo, 100 * p->hi,
             p->pmin);
  else
    snprintf(buf, len, "%+.2f [%+.2f, %+.2f] points (median over %d phase %s, range %+.2f .. %+.2f), McNemar p "
             "%.2g .. %.2g", 100 * p->med, 100 * p->lo, 100 * p->hi, p->np, p->both ? "pairs" : "rows", 100 * p->min,
             100 * p->max, p->pmin, p->pmax);
  return buf;
}

/* w[0..2]: the bootstrap weights of the full, tensor-core and per-layer image sets */
static void summarize(net_t *t, const fq_data_t *te, const fq_settings_t *s, uint8_t *const *w, int reps) {
  int k;
  for (k = 0; k < t->nc; k++) {
    out_t *o = &t->out[k];
    int set = wset_of(t->cfg[k].kind);
    size_t wn = images_of(s, t->cfg[k].kind);
    pair_t p;
    if (o->n == 0) continue; /* not evaluated (a further seed's tensor-core and per-layer rows) */
    p = paired(t, C_FP32, k, te, w[set], wn, reps);
    o->dacc = p.d;
    o->lo = p.lo;
    o->hi = p.hi;
    o->p = p.p;
  }
}

/* Outlier measures of a site's inputs: kurtosis E[x^4]/E[x^2]^2 (about
   zero; a Gaussian has 3), max/RMS of the tensor, and per channel (input
   feature k) the largest channel amax and channel RMS over the tensor RMS. */
typedef struct {
  double kurt, max_rms, chan_amax_rms, chan_rms_ratio;
  int worst_chan;
} outl_t;

static outl_t outliers(const fq_calib_t *c, int K) {
  outl_t o;
  double m2 = c->n > 0 ? c->s2 / c->n : 0.0, rms = sqrt(m2), per = c->n / K;
  int k;
  memset(&o, 0, sizeof o);
  if (!(m2 > 0)) return o;
  o.kurt = (c->s4 / c->n) / (m2 * m2);
  o.max_rms = c->amax_x / rms;
  for (k = 0; k < K; k++) {
    double cr = sqrt(c->col2[k] / per) / rms;
    if (c->colmax[k] / rms > o.chan_amax_rms) {
      o.chan_amax_rms = c->colmax[k] / rms;
      o.worst_chan = k;
    }
    if (cr > o.chan_rms_ratio) o.chan_rms_ratio = cr;
  }
  return o;
}

/* ------------------------------------------------------------ files */

static double pct(size_t k, size_t n) { return n ? 100.0 * (double)k / (double)n : 0.0; }

static const char *scaling_of(const fq_config_t *c) {
  if (c->bs) return "block";
  if (!c->f) return "reference";
  if (c->ws == LOWP_QS_CAST) return "cast";
  if (c->ws == LOWP_QS_ROW) return "channel";
  if (c->ws == LOWP_QS_BLOCK) return "tile";
  if (c->ws == LOWP_QS_MXBLOCK) return "mx";
  return "tensor";
}

static int write_configs(lowp_run_t *r, net_t *const *nets) {
  FILE *f = fopen(lowp_run_path(r, "configs.csv"), "w");
  int i, k;
  if (!f) return LOWP_EIO;
  fprintf(f, "model,index,config,format,scaling,accumulation,kind,images,accuracy_pct,delta_pp,ci95_lo_pp,"
             "ci95_hi_pp,mcnemar_p,fp32_right_only,fp32_wrong_only,agree_pct,kl_mean,kl_max,w_saturated_pct,"
             "w_zeroed_pct,a_saturated_pct,a_zeroed_pct\n");
  for (i = 0; i < 2; i++)
    for (k = 0; k < nets[i]->nc; k++) {
      const fq_config_t *c = &nets[i]->cfg[k];
      const out_t *o = &nets[i]->out[k];
      static const char *const kinds[4] = {"main", "tensor-core", "layer", "phase"};
      fprintf(f, "%s,%d,%s,%s,%s,%s,%s,%zu,%.2f,%.2f,%.2f,%.2f,%.4g,%ld,%ld,%.2f,%.6g,%.6g,%.4f,%.4f,%.4f,%.4f\n",
              nets[i]->name, k, c->label, c->f ? c->f->name : c->bs ? c->label : "fp32", scaling_of(c), acc_name[c->acc],
              kinds[c->kind], o->n, 100 * o->acc, 100 * o->dacc, 100 * o->lo, 100 * o->hi, o->p, o->b, o->c,
              100 * o->agree, o->kl_mean, o->kl_max, pct(o->w.saturated, o->w.nonzero),
              pct(o->w.flushed, o->w.nonzero), pct(o->a.saturated, o->a.nonzero), pct(o->a.flushed, o->a.nonzero));
    }
  return fclose(f) ? LOWP_EIO : LOWP_OK;
}

static int write_outliers(lowp_run_t *r, net_t *const *nets) {
  FILE *f = fopen(lowp_run_path(r, "outliers.csv"), "w"), *g = fopen(lowp_run_path(r, "outlier_channels.csv"), "w");
  int i, s, k;
  if (!f || !g) {
    if (f) fclose(f);
    if (g) fclose(g);
    return LOWP_EIO;
  }
  fprintf(f, "model,site,K,amax,rms,kurtosis,max_over_rms,largest_channel_amax_over_rms,worst_channel,"
             "largest_channel_rms_over_rms\n");
  fprintf(g, "model,site,channel,amax,rms,amax_over_tensor_rms,rms_over_tensor_rms\n");
  for (i = 0; i < 2; i++)
    for (s = 0; s < nets[i]->ns + nets[i]->nresid; s++) {
      int res = s >= nets[i]->ns;
      const fq_calib_t *c = res ? &nets[i]->resid[s - nets[i]->ns] : &nets[i]->cal[s];
      fq_site_t si = res ? fq_site(&nets[i]->m, 0) : fq_site(&nets[i]->m, s);
      char name[40];
      int K = res ? nets[i]->m.vit.d : si.K;
      outl_t o = outliers(c, K);
      double rms = c->n > 0 ? sqrt(c->s2 / c->n) : 0.0;
      if (res) snprintf(name, sizeof name, "residual%d", s - nets[i]->ns);
      else snprintf(name, sizeof name, "%s", si.name);
      fprintf(f, "%s,%s,%d,%.6g,%.6g,%.4g,%.4g,%.4g,%d,%.4g\n", nets[i]->name, name, K, c->amax_x, rms, o.kurt,
              o.max_rms, o.chan_amax_rms, o.worst_chan, o.chan_rms_ratio);
      for (k = 0; k < K && rms > 0; k++) {
        double cr = sqrt(c->col2[k] / (c->n / K));
        fprintf(g, "%s,%s,%d,%.6g,%.6g,%.4g,%.4g\n", nets[i]->name, name, k, c->colmax[k], cr, c->colmax[k] / rms,
                cr / rms);
      }
    }
  return fclose(f) | fclose(g) ? LOWP_EIO : LOWP_OK;
}

/* per_image.csv.gz and per_phase.csv.gz: text built in memory, gzip-compressed, written atomically. */
typedef struct {
  char *p;
  size_t n, cap;
} sbuf_t;

static int sb_printf(sbuf_t *b, const char *fmt, ...) {
  va_list ap;
  int k;
  if (b->cap - b->n < 256) {
    size_t nc = b->cap ? 2 * b->cap : (size_t)1 << 20;
    char *q = realloc(b->p, nc);
    if (!q) return LOWP_ENOMEM;
    b->p = q;
    b->cap = nc;
  }
  va_start(ap, fmt);
  k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= b->cap - b->n) return LOWP_EINVAL;
  b->n += (size_t)k;
  return LOWP_OK;
}

static int gzip_write(const char *path, const sbuf_t *b) {
  z_stream z;
  uLong cap = compressBound((uLong)b->n) + 64;
  unsigned char *out = malloc(cap);
  int st = LOWP_OK;
  if (!out) return LOWP_ENOMEM;
  memset(&z, 0, sizeof z);
  if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) { free(out); return LOWP_ENOMEM; }
  z.next_in = (Bytef *)b->p;
  z.avail_in = (uInt)b->n;
  z.next_out = out;
  z.avail_out = (uInt)cap;
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) st = LOWP_EIO;
  if (st == LOWP_OK) st = lowp_atomic_write(path, out, z.total_out);
  deflateEnd(&z);
  free(out);
  return st;
}

/* per_phase.csv.gz: the per-tensor rows' further scale phases, compactly (they were 3/4 of per_image.csv.gz):
   one row per model, format and image: the label, the predicted class at every phase 0 .. P-1 as one string
   of characters (phase 0: the plain row, also in per_image.csv.gz; a class a character: 0-9, then a-z), and the KL from
   FP32 at phases 1 .. P-1 (4 significant digits). With configs.csv's index of each phase row this gives
   every phase statistic: the paired correctness per image and phase, agreement, McNemar, the bootstrap. */
static int write_per_phase(lowp_run_t *r, net_t *const *nets, const fq_data_t *te) {
  sbuf_t b = {NULL, 0, 0};
  int i, f, j, st = sb_printf(&b, "model,format,image,label,pred_by_phase");
  size_t x;
  char pr[FQ_MAXPHASE + 1];
  for (j = 1; j < nets[0]->nph && st == LOWP_OK; j++) st = sb_printf(&b, ",kl_phase%d", j);
  if (st == LOWP_OK) st = sb_printf(&b, "\n");
  for (i = 0; i < 2 && st == LOWP_OK; i++)
    for (f = 0; f < 2 && nets[i]->nph > 1 && st == LOWP_OK; f++) {
      int set[FQ_MAXPHASE], n = row_set(nets[i], f ? C_E5 : C_E4, set);
      for (x = 0; x < nets[i]->out[set[0]].n && st == LOWP_OK; x++) {
        for (j = 0; j < n; j++) { /* one character a class: 0-9, then a-z (CIFAR-10 has 10) */
          int c = nets[i]->out[set[j]].pred[x];
          pr[j] = c >= 0 && c < 36 ? "0123456789abcdefghijklmnopqrstuvwxyz"[c] : '?';
        }
        pr[n] = '\0';
        st = sb_printf(&b, "%s,%s,%zu,%d,%s", nets[i]->name, f ? "e5m2" : "e4m3", x, fq_label(te, x), pr);
        for (j = 1; j < n && st == LOWP_OK; j++) st = sb_printf(&b, ",%.4g", (double)nets[i]->out[set[j]].kl[x]);
        if (st == LOWP_OK) st = sb_printf(&b, "\n");
      }
    }
  if (st == LOWP_OK) st = gzip_write(lowp_run_path(r, "per_phase.csv.gz"), &b);
  free(b.p);
  return st;
}

/* per_image.csv.gz: every row but the further scale phases (per_phase.csv.gz), one line per image; the KL
   to 5 significant digits (the file stays under 3 MB at the default 10,000 images) */
static int write_per_image(lowp_run_t *r, net_t *const *nets, const fq_data_t *te) {
  sbuf_t b = {NULL, 0, 0};
  int i, k, st = sb_printf(&b, "model,index,config,image,label,pred,correct,kl\n");
  size_t j;
  for (i = 0; i < 2 && st == LOWP_OK; i++)
    for (k = 0; k < nets[i]->nc && st == LOWP_OK; k++) {
      const out_t *o = &nets[i]->out[k];
      if (nets[i]->cfg[k].kind == 3) continue;
      for (j = 0; j < o->n && st == LOWP_OK; j++)
        st = sb_printf(&b, "%s,%d,%s,%zu,%d,%d,%d,%.5g\n", nets[i]->name, k, nets[i]->cfg[k].label, j,
                       fq_label(te, j), o->pred[j], o->pred[j] == fq_label(te, j), (double)o->kl[j]);
    }
  if (st == LOWP_OK) st = gzip_write(lowp_run_path(r, "per_image.csv.gz"), &b);
  free(b.p);
  return st ? st : write_per_phase(r, nets, te);
}

/* ---------------------------------------------------------- summary */

static void add_verdict(cJSON *arr, FILE *md, const char *claim, const char *source, const char *measured,
                        const char *verdict) {
  lowp_result_verdict(arr, claim, source, measured, verdict);
  fprintf(md, "- **%s** (%s): %s -- *%s*\n", claim, source, measured, verdict);
}

/* "d [lo, hi] pp, p = x" of configuration k */
static const char *dtext(const net_t *t, int k, char *buf, size_t len) {
  const out_t *o = &t->out[k];
  snprintf(buf, len, "%+.2f [%+.2f, %+.2f] points, McNemar p = %.2g, agreement %.2f%%, KL %.2g", 100 * o->dacc,
           100 * o->lo, 100 * o->hi, o->p, 100 * o->agree, o->kl_mean);
  return buf;
}

static void tables(lowp_run_t *r, net_t *const *nets) {
  static const char *const cols[] = {"model", "configuration", "accumulation", "images", "accuracy %",
                                     "change (points)", "95% CI (bootstrap)", "McNemar p", "top-1 agreement %",
                                     "mean KL (nats)"};
  cJSON *tabs = cJSON_AddArrayToObject(r->results, "tables");
  cJSON *rows = lowp_result_table(tabs, "Both networks, every configuration against FP32 on the same images "
                                        "(paired)", cols, 10);
  int i, k;
  fprintf(r->summary, "| model | configuration | accumulation | images | accuracy %% | change (points) | 95%% CI | "
                      "McNemar p | agreement %% | mean KL |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (i = 0; i < 2; i++)
    for (k = 0; k < nets[i]->nc; k++) {
      const out_t *o = &nets[i]->out[k];
      const fq_config_t *c = &nets[i]->cfg[k];
      char b[10][64];
      const char *cells[10];
      int j;
      if (c->kind == 3) continue; /* the phases: their own table */
      snprintf(b[0], 64, "%s", nets[i]->name);
      snprintf(b[1], 64, "%s", c->label);
      snprintf(b[2], 64, "%s", c->f || c->bs ? acc_name[c->acc] : "fp32");
      snprintf(b[3], 64, "%zu", o->n);
      snprintf(b[4], 64, "%.2f", 100 * o->acc);
      snprintf(b[5], 64, "%+.2f", 100 * o->dacc);
      snprintf(b[6], 64, "[%+.2f, %+.2f]", 100 * o->lo, 100 * o->hi);
      snprintf(b[7], 64, "%.2g", o->p);
      snprintf(b[8], 64, "%.2f", 100 * o->agree);
      snprintf(b[9], 64, "%.3g", o->kl_mean);
      for (j = 0; j < 10; j++) cells[j] = b[j];
      lowp_result_add_row(rows, cells, 10);
      fprintf(r->summary, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", b[0], b[1], b[2], b[3], b[4], b[5],
              b[6], b[7], b[8], b[9]);
    }
  fprintf(r->summary, "\n");
}

/* The per-tensor rows over their scale phases: median, range and the interval over images and phases. */
static void phase_table(lowp_run_t *r, net_t *const *nets, const boot_t *bt) {
  static const char *const cols[] = {"model", "configuration", "images", "phases", "median change (points)",
                                     "range over phases", "95% CI (images and phases)", "phase 0: change [95% CI]",
                                     "McNemar p range", "agreement % range", "mean KL: median (range)"};
  cJSON *rows;
  int i, f, j;
  if (nets[0]->nph < 2) return;
  rows = lowp_result_table(cJSON_GetObjectItem(r->results, "tables"), "Per-tensor rows over their scale phases "
                           "(every scale times 2^(-j/P), j = 0..P-1), paired with FP32", cols, 11);
  fprintf(r->summary, "Per-tensor rows over %d scale phases (every tensor's scale times 2^(-j/%d), j = 0..%d: no new "
          "saturation, the same format; the phase decides which values round up): the 95%% interval draws a phase "
          "with the images in each bootstrap replicate.\n\n| model | configuration | images | phases | median change "
          "| range | 95%% CI (images and phases) | phase 0 [95%% CI] | McNemar p | agreement %% | mean KL median (range) "
          "|\n|---|---|---|---|---|---|---|---|---|---|---|\n", nets[0]->nph, nets[0]->nph, nets[0]->nph - 1);
  for (i = 0; i < 2; i++)
    for (f = 0; f < 2; f++) {
      int k = f ? C_E5 : C_E4;
      spread_t p = spread(nets[i], C_FP32, k, bt);
      const out_t *o = &nets[i]->out[k];
      char b[11][96];
      const char *cells[11];
      snprintf(b[0], 96, "%s", nets[i]->name);
      snprintf(b[1], 96, "%s", nets[i]->cfg[k].label);
      snprintf(b[2], 96, "%zu", o->n);
      snprintf(b[3], 96, "%d", nets[i]->nph);
      snprintf(b[4], 96, "%+.2f", 100 * p.med);
      if (p.np > 1) snprintf(b[5], 96, "%+.2f .. %+.2f", 100 * p.min, 100 * p.max);
      else snprintf(b[5], 96, "-");
      snprintf(b[6], 96, "[%+.2f, %+.2f]", 100 * p.lo, 100 * p.hi);
      snprintf(b[7], 96, "%+.2f [%+.2f, %+.2f]", 100 * o->dacc, 100 * o->lo, 100 * o->hi);
      snprintf(b[8], 96, "%.2g .. %.2g", p.pmin, p.pmax);
      snprintf(b[9], 96, "%.2f .. %.2f", 100 * p.agmin, 100 * p.agmax);
      snprintf(b[10], 96, "%.3g (%.3g .. %.3g)", p.klmed, p.klmin, p.klmax);
      for (j = 0; j < 11; j++) cells[j] = b[j];
      lowp_result_add_row(rows, cells, 11);
      fprintf(r->summary, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", b[0], b[1], b[2], b[3], b[4],
              b[5], b[6], b[7], b[8], b[9], b[10]);
    }
  fprintf(r->summary, "\n");
}

/* The group with the largest mean KL when quantized alone (format fi). */
static int worst_group(const net_t *t, int fi) {
  int g, best = 0;
  for (g = 1; g < t->ng; g++)
    if (t->out[C_LAYER + 2 * g + fi].kl_mean > t->out[C_LAYER + 2 * best + fi].kl_mean) best = g;
  return best;
}

static void outlier_extremes(const net_t *t, double *kurt, double *mr, double *cm, int *sk) {
  int s;
  *kurt = *mr = *cm = 0.0;
  *sk = 0;
  for (s = 0; s < t->ns; s++) {
    fq_site_t si = fq_site(&t->m, s);
    outl_t o = outliers(&t->cal[s], si.K);
    if (o.kurt > *kurt) { *kurt = o.kurt; *sk = s; }
    if (o.max_rms > *mr) *mr = o.max_rms;
    if (o.chan_amax_rms > *cm) *cm = o.chan_amax_rms;
  }
}

/* The ViT's residual stream: the largest kurtosis and channel amax over tensor RMS, and where. */
static void resid_extremes(const net_t *t, double *kurt, double *cm, int *pk, int *pc) {
  int p;
  *kurt = *cm = 0.0;
  *pk = *pc = 0;
  for (p = 0; p < t->nresid; p++) {
    outl_t o = outliers(&t->resid[p], t->m.vit.d);
    if (o.kurt > *kurt) { *kurt = o.kurt; *pk = p; }
    if (o.chan_amax_rms > *cm) { *cm = o.chan_amax_rms; *pc = p; }
  }
}

static int vit_kmax(const net_t *t) {
  int k, m = 0;
  for (k = 0; k < t->ns; k++)
    if (fq_site(&t->m, k).K > m) m = fq_site(&t->m, k).K;
  return m;
}

/* ------------------------------------------------------- training seeds */

/* The rows compared across training seeds: per tensor (over its phases), per channel, MX, the block rows;
   SEED_GAP: e4m3 minus e5m2 per tensor. */
#define SEED_GAP -1
static int seed_rows(const net_t *t, int *k) {
  int n = 0, j;
  k[n++] = C_E4;
  k[n++] = C_E5;
  k[n++] = SEED_GAP;
  k[n++] = C_E4 + 1;
  k[n++] = C_E4 + 3;
  for (j = 0; j <= t->nbs; j++) k[n++] = t->c_bs + j;
  return n;
}

static spread_t seed_spread(const net_t *t, int k, const boot_t *bt) {
  return k == SEED_GAP ? spread(t, C_E5, C_E4, bt) : spread(t, C_FP32, k, bt);
}

static const char *seed_label(const net_t *t, int k) {
  return k == SEED_GAP ? "e4m3 minus e5m2 tensor" : t->cfg[k].label;
}

/* seeds.csv and a table: every network's key rows, the shipped weights and each further seed's */
static int seed_table(lowp_run_t *r, net_t *const *nets, int nall, const boot_t *bt) {
  static const char *const cols[] = {"model", "weights", "FP32 accuracy %", "configuration",
                                     "change (points), median over phases", "range over phases",
                                     "95% CI (images and phases)", "mean KL"};
  FILE *f;
  cJSON *rows;
  int i, j, k[FQ_MAXBS + 8], nk;
  if (nall <= 2) return LOWP_OK;
  if (!(f = fopen(lowp_run_path(r, "seeds.csv"), "w"))) return LOWP_EIO;
  rows = lowp_result_table(cJSON_GetObjectItem(r->results, "tables"), "Training seeds: the key rows of each "
                           "network's shipped weights and of the further seeds (same images, same replicates)", cols, 8);
  fprintf(f, "model,weights,fp32_accuracy_pct,config,delta_median_pp,delta_min_pp,delta_max_pp,ci95_lo_pp,ci95_hi_pp,"
             "kl_median\n");
  fprintf(r->summary, "Training seeds (the same training command with another --seed; per-tensor rows: median over "
          "the scale phases):\n\n| model | weights | FP32 %% | configuration | change (median) | range | 95%% CI "
          "(images and phases) | mean KL |\n|---|---|---|---|---|---|---|---|\n");
  for (i = 0; i < nall; i++) {
    const net_t *t = nets[i];
    int shipped_only = 1, m;
    for (m = 2; m < nall; m++) shipped_only &= nets[m]->m.kind != t->m.kind;
    if (shipped_only) continue;
    nk = seed_rows(t, k);
    for (j = 0; j < nk; j++) {
      spread_t p = seed_spread(t, k[j], bt);
      char b[8][96], kl[32];
      const char *cells[8];
      int c;
      snprintf(b[0], 96, "%s", t->name);
      snprintf(b[1], 96, "%s", t->file ? t->file : "shipped");
      snprintf(b[2], 96, "%.2f", 100 * t->out[C_FP32].acc);
      snprintf(b[3], 96, "%s", seed_label(t, k[j]));
      snprintf(b[4], 96, "%+.2f", 100 * p.med);
      if (p.np > 1) snprintf(b[5], 96, "%+.2f .. %+.2f", 100 * p.min, 100 * p.max);
      else snprintf(b[5], 96, "-");
      snprintf(b[6], 96, "[%+.2f, %+.2f]", 100 * p.lo, 100 * p.hi);
      if (k[j] == SEED_GAP) snprintf(b[7], 96, "-");
      else snprintf(b[7], 96, "%.3g", p.klmed);
      for (c = 0; c < 8; c++) cells[c] = b[c];
      lowp_result_add_row(rows, cells, 8);
      fprintf(r->summary, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]);
      fprintf(f, "%s,%s,%.2f,%s,%.2f,%.2f,%.2f,%.2f,%.2f,%s\n", t->name, b[1], 100 * t->out[C_FP32].acc,
              seed_label(t, k[j]), 100 * p.med, 100 * p.min, 100 * p.max, 100 * p.lo, 100 * p.hi,
              k[j] == SEED_GAP ? "" : (snprintf(kl, sizeof kl, "%.6g", p.klmed), kl)); /* a gap has no KL */
    }
  }
  fprintf(r->summary, "\n");
  return fclose(f) ? LOWP_EIO : LOWP_OK;
}

/* The spread over training seeds of each key row's median change, per network; or that it has one seed. */
static size_t answer_seeds(char *ans, size_t len, size_t cap, net_t *const *nets, int nall, const boot_t *bt) {
  int i, j, m, k[FQ_MAXBS + 8], nk;
  for (i = 0; i < 2; i++) {
    int idx[1 + FQ_MAXSEEDS], ns = 0;
    double lo = 1e300, hi = -1e300;
    idx[ns++] = i;
    for (m = 2; m < nall; m++)
      if (nets[m]->m.kind == nets[i]->m.kind) idx[ns++] = m;
    if (ns == 1) {
      len += (size_t)snprintf(ans + len, cap - len, "The %s's rows come from one training seed (no further %s in "
                              "--seed_models). ", i ? "ViT" : "CNN", i ? "ViT" : "CNN");
      continue;
    }
    for (m = 0; m < ns; m++) {
      if (100 * nets[idx[m]]->out[C_FP32].acc < lo) lo = 100 * nets[idx[m]]->out[C_FP32].acc;
      if (100 * nets[idx[m]]->out[C_FP32].acc > hi) hi = 100 * nets[idx[m]]->out[C_FP32].acc;
    }
    len += (size_t)snprintf(ans + len, cap - len, "Over %d training seeds of the %s (the shipped weights and %d "
                            "trained by the same command with other --seed values, seeds.csv): FP32 %.2f .. %.2f%%; "
                            "smallest .. largest over the seeds of the median change (per-tensor rows: over their "
                            "phases):", ns, i ? "ViT" : "CNN", ns - 1, lo, hi);
    nk = seed_rows(nets[i], k);
    for (j = 0; j < nk; j++) {
      double a = 1e300, b = -1e300, plo = 1e300, phi = -1e300;
      for (m = 0; m < ns; m++) {
        spread_t p = seed_spread(nets[idx[m]], k[j], bt);
        if (100 * p.med < a) a = 100 * p.med;
        if (100 * p.med > b) b = 100 * p.med;
        if (100 * p.lo < plo) plo = 100 * p.lo;
        if (100 * p.hi > phi) phi = 100 * p.hi;
      }
      len += (size_t)snprintf(ans + len, cap - len, "%s %s %+.2f .. %+.2f points (intervals from %+.2f to %+.2f)",
                              j ? ";" : "", seed_label(nets[i], k[j]), a, b, plo, phi);
    }
    len += (size_t)snprintf(ans + len, cap - len, ". ");
  }
  return len;
}

/* dtext, or for a per-tensor row its spread over the scale phases against FP32 */
static const char *rtext(const net_t *t, int k, const boot_t *bt, char *buf, size_t len) {
  int set[FQ_MAXPHASE];
  spread_t p;
  char b[300];
  if (row_set(t, k, set) == 1) return dtext(t, k, buf, len);
  p = spread(t, C_FP32, k, bt);
  snprintf(buf, len, "%s, agreement %.2f .. %.2f%%, KL %.2g (median; %.2g .. %.2g)", stext(&p, b, sizeof b),
           100 * p.agmin, 100 * p.agmax, p.klmed, p.klmin, p.klmax);
  return buf;
}

/* The median mean KL of configuration k over its phases (k's own without phases). */
static double kl_median(const net_t *t, int k) {
  int set[FQ_MAXPHASE], n = row_set(t, k, set), j;
  double v[FQ_MAXPHASE];
  for (j = 0; j < n; j++) v[j] = t->out[set[j]].kl_mean;
  return median_of(v, n);
}

/* The experiment's own expectations, each met or not, over the per-tensor rows' scale phases: e4m3 per
   tensor agrees with FP32 on more than 99% of the images (at every phase), and the ViT is more sensitive
   than the CNN (its median KL larger and its median accuracy change lower). */
typedef struct {
  spread_t e4[2];
  int agree99, vit_more;
} expect_t;

static expect_t expectations(net_t *const *nets, const boot_t *bt) {
  expect_t e;
  int i;
  e.agree99 = 1;
  for (i = 0; i < 2; i++) {
    e.e4[i] = spread(nets[i], C_FP32, C_E4, bt);
    e.agree99 &= e.e4[i].agmin > 0.99;
  }
  e.vit_more = e.e4[1].klmed > e.e4[0].klmed && e.e4[1].med < e.e4[0].med;
  return e;
}

/* The configurations (not phase rows) whose bootstrap interval and McNemar test disagree about 5%. */
static int borderline(net_t *const *nets, char *b, size_t cap) {
  size_t o = 0;
  int i, k, n = 0;
  b[0] = 0;
  for (i = 0; i < 2; i++)
    for (k = 1; k < nets[i]->nc && o + 160 < cap; k++) {
      const out_t *q = &nets[i]->out[k];
      int ci_excl = q->lo > 0 || q->hi < 0, test = q->p < 0.05;
      if (ci_excl == test || !(q->p >= 0) || nets[i]->cfg[k].kind == 3) continue;
      o += (size_t)snprintf(b + o, cap - o, "%s%s %s (interval [%+.2f, %+.2f] %s 0, McNemar p = %.3g)", n++ ? "; " : "",
                            nets[i]->name, nets[i]->cfg[k].label, 100 * q->lo, 100 * q->hi,
                            ci_excl ? "excludes" : "includes", q->p);
    }
  return n;
}

static size_t answer_expect(char *ans, size_t len, size_t cap, net_t *const *nets, const boot_t *bt) {
  expect_t e = expectations(nets, bt);
  char b[1200];
  if (!e.agree99)
    len += (size_t)snprintf(ans + len, cap - len, "Not as expected: e4m3 per tensor agrees with FP32 on %.2f .. "
                            "%.2f%% (CNN) and %.2f .. %.2f%% (ViT) of the images over the phases, not above 99%%. ",
                            100 * e.e4[0].agmin, 100 * e.e4[0].agmax, 100 * e.e4[1].agmin, 100 * e.e4[1].agmax);
  if (!e.vit_more)
    len += (size_t)snprintf(ans + len, cap - len, "Not as expected: the ViT is not more sensitive than the CNN "
                            "(e4m3 per tensor, median over the phases: KL %.2g vs %.2g, accuracy change %+.2f vs "
                            "%+.2f points). ", e.e4[1].klmed, e.e4[0].klmed, 100 * e.e4[1].med, 100 * e.e4[0].med);
  if (borderline(nets, b, sizeof b))
    len += (size_t)snprintf(ans + len, cap - len, "Borderline (the bootstrap interval and McNemar's exact test "
                            "disagree about 5%%: read as neither clearly significant nor not): %s. ", b);
  return len;
}

/* The per-tensor row of t with the block format's element format (e4m3, e5m2 or e2m1), or -1. */
static int tensor_row_of(const net_t *t, const lowp_bsformat_t *bf) {
  const lowp_format_t *e = &bf->elem;
  int k;
  static const int cand[2] = {C_E4, C_E5};
  for (k = 0; k < 2; k++) {
    const lowp_format_t *f = t->cfg[cand[k]].f;
    if (f->precision == e->precision && f->emax == e->emax && f->emin == e->emin) return cand[k];
  }
  return LOWP_FMT_E2M1.precision == e->precision && LOWP_FMT_E2M1.emax == e->emax ? t->c_bs : -1;
}

/* The block-scaled rows against FP32, then what the blocks buy: block minus the per-tensor row with the same
   elements (over its phases), and the 4-bit formats against e4m3 per tensor. */
static size_t answer_blocks(char *ans, size_t len, size_t cap, net_t *const *nets, const boot_t *bt) {
  char a[2][400];
  int i, j;
  if (nets[0]->nbs == 0) return len;
  for (i = 0; i < 2; i++) dtext(nets[i], nets[i]->c_bs, a[i], sizeof a[i]);
  len += (size_t)snprintf(ans + len, cap - len, "Block-scaled formats on both operands of every product (blocks "
                          "along the dot product, each format's scale rule, fp32 accumulation; the ViT's attention "
                          "products are 16 long: one short block), against FP32: e2m1 per tensor: CNN %s; ViT %s", a[0], a[1]);
  for (j = 1; j <= nets[0]->nbs; j++) {
    for (i = 0; i < 2; i++) dtext(nets[i], nets[i]->c_bs + j, a[i], sizeof a[i]);
    len += (size_t)snprintf(ans + len, cap - len, "; %s: CNN %s; ViT %s", nets[0]->cfg[nets[0]->c_bs + j].label, a[0], a[1]);
  }
  len += (size_t)snprintf(ans + len, cap - len, ". What the blocks buy over per-tensor scaling on these models "
                          "(paired, block row minus the per-tensor row with the same elements, that row over its "
                          "scale phases where it has them; intervals over images and phases)");
  for (j = 1; j <= nets[0]->nbs; j++) {
    const fq_config_t *c = &nets[0]->cfg[nets[0]->c_bs + j];
    int kt = tensor_row_of(nets[0], c->bs), m;
    for (m = 0; m < 2 && kt >= 0; m++) {
      if (m == 1 && kt != nets[0]->c_bs) break; /* the 4-bit formats against e4m3 per tensor too */
      for (i = 0; i < 2; i++) {
        int kr = m ? C_E4 : tensor_row_of(nets[i], c->bs);
        spread_t p = spread(nets[i], kr, nets[i]->c_bs + j, bt);
        char b[300];
        snprintf(a[i], sizeof a[i], "%s (KL %.2g vs %.2g)", stext(&p, b, sizeof b),
                 nets[i]->out[nets[i]->c_bs + j].kl_mean, kl_median(nets[i], kr));
      }
      len += (size_t)snprintf(ans + len, cap - len, "; %s minus %s: CNN %s; ViT %s", c->label,
                              nets[0]->cfg[m ? C_E4 : kt].label, a[0], a[1]);
    }
  }
  return len + (size_t)snprintf(ans + len, cap - len, ". ");
}

/* E4M3 minus E5M2 per tensor over both rows' phases (every pair), and at phase 0 alone */
static size_t answer_gap(char *ans, size_t len, size_t cap, net_t *const *nets, const boot_t *bt) {
  char a[2][400];
  pair_t p0[2];
  int i;
  for (i = 0; i < 2; i++) {
    spread_t p = spread(nets[i], C_E5, C_E4, bt);
    stext(&p, a[i], sizeof a[i]);
    p0[i] = paired(nets[i], C_E5, C_E4, bt->te, bt->w, bt->n, bt->reps);
  }
  return len + (size_t)snprintf(ans + len, cap - len, "E4M3 minus E5M2, per tensor, paired, typical over the "
                                "scale phases (every scale times 2^(-j/%d), j = 0..%d, for each format: no new "
                                "saturation, the same formats; %d pairs; intervals over images and phases): CNN %s; ViT %s; at phase 0 alone (the "
                                "single phase reported before): CNN %+.2f [%+.2f, %+.2f], ViT %+.2f [%+.2f, %+.2f] "
                                "points. ", nets[0]->nph, nets[0]->nph - 1, nets[0]->nph * nets[0]->nph, a[0], a[1],
                                100 * p0[0].d, 100 * p0[0].lo, 100 * p0[0].hi, 100 * p0[1].d, 100 * p0[1].lo,
                                100 * p0[1].hi);
}

static void answer(lowp_run_t *r, net_t *const *nets, int nall, const fq_settings_t *s, const boot_t *bt) {
  char ans[20000], d[2][6][512], tc_ext[512];
  size_t len = 0;
  int i, j;
  static const int ks[6] = {C_BF16, C_FP16, C_E4, C_E5, C_E4 + 1, C_E4 + 3};
  for (i = 0; i < 2; i++)
    for (j = 0; j < 6; j++) rtext(nets[i], ks[j], bt, d[i][j], sizeof d[i][j]);
  len += (size_t)snprintf(ans + len, sizeof ans - len,
      "On %ld test images, paired image by image with FP32, the CNN (%zu parameters, FP32 %.2f%%) and the ViT "
      "(%zu parameters, FP32 %.2f%%) change as follows (per-tensor rows: the median over their scale phases, "
      "its range, and a 95%% interval over images and phases). BF16: CNN %s; ViT %s. FP16: CNN %s; ViT %s. E4M3 per "
      "tensor (exercise 6): CNN %s; ViT %s. E5M2 per tensor: CNN %s; ViT %s. E4M3 per channel: CNN %s; ViT %s. "
      "E4M3 MX: CNN %s; ViT %s. ",
      s->test, fq_nparams(&nets[0]->m), 100 * nets[0]->out[0].acc, fq_nparams(&nets[1]->m), 100 * nets[1]->out[0].acc,
      d[0][0], d[1][0], d[0][1], d[1][1], d[0][2], d[1][2], d[0][3], d[1][3], d[0][4], d[1][4], d[0][5], d[1][5]);
  if (nets[0]->nph > 1) len = answer_gap(ans, len, sizeof ans, nets, bt);
  len = answer_blocks(ans, len, sizeof ans, nets, bt);
  len = answer_seeds(ans, len, sizeof ans, nets, nall, bt);
  len = answer_expect(ans, len, sizeof ans, nets, bt);
  for (i = 0; i < 2; i++) {
    int g4 = worst_group(nets[i], 0), g5 = worst_group(nets[i], 1), sk;
    double ku, mr, cm;
    outlier_extremes(nets[i], &ku, &mr, &cm, &sk);
    len += (size_t)snprintf(ans + len, sizeof ans - len,
        "%s: the layer that carries most of the loss alone is %s in e4m3 (mean KL %.2g, %+.2f points) and %s in "
        "e5m2 (KL %.2g, %+.2f points); its GEMM inputs have kurtosis up to %.1f (%s; Gaussian 3), max/RMS up to "
        "%.1f, largest channel amax over tensor RMS %.1f. ",
        i ? "ViT" : "CNN", nets[i]->group[g4], nets[i]->out[C_LAYER + 2 * g4].kl_mean,
        100 * nets[i]->out[C_LAYER + 2 * g4].dacc, nets[i]->group[g5], nets[i]->out[C_LAYER + 2 * g5 + 1].kl_mean,
        100 * nets[i]->out[C_LAYER + 2 * g5 + 1].dacc, ku, fq_site(&nets[i]->m, sk).name, mr, cm);
  }
  {
    double rk, rc;
    int pk, pc;
    resid_extremes(nets[1], &rk, &rc, &pk, &pc);
    len += (size_t)snprintf(ans + len, sizeof ans - len,
        "CNN against transformer: e4m3 per tensor moves the ViT's softmax %.1f times as much as the CNN's (mean KL "
        "%.2g vs %.2g; e5m2 %.1f times). The ViT's residual stream has kurtosis up to %.1f (point %d: 0 after the "
        "embedding, l after block l) and a channel whose amax is %.1f times the stream's RMS (point %d). ",
        nets[1]->out[C_E4].kl_mean / (nets[0]->out[C_E4].kl_mean > 0 ? nets[0]->out[C_E4].kl_mean : 1),
        nets[1]->out[C_E4].kl_mean, nets[0]->out[C_E4].kl_mean,
        nets[1]->out[C_E5].kl_mean / (nets[0]->out[C_E5].kl_mean > 0 ? nets[0]->out[C_E5].kl_mean : 1), rk, pk, rc, pc);
  }
  if (!lowp_exp_tc_extrapolated(tc_ext, sizeof tc_ext, s->tcmodel, &LOWP_FMT_E4M3, (size_t)nets[0]->m.cnn.K[2], NULL,
                                NULL))
    snprintf(tc_ext, sizeof tc_ext, "inside the captured range of the model");
  len += (size_t)snprintf(ans + len, sizeof ans - len,
      "On the %s tensor-core model (first %ld images; %s) e4m3 per channel without promotion: CNN KL %.2g, ViT %.2g; "
      "promoted every %ld products: CNN %.2g, ViT %.2g (fp32 accumulation, all images: %.2g, %.2g). "
      "What these models cannot tell about large pre-trained language models: their dot products are at most %d "
      "terms long (thousands in an LLM, where a short accumulator loses more), and systematic outlier features "
      "-- a few hidden dimensions with values up to 20 times larger, in almost all layers -- emerge only at "
      "scale, around 6.7B parameters (Dettmers et al. 2022, LLM.int8(), arXiv:2208.07339); a %zu-parameter "
      "ViT trained for minutes has none of that size, so per-tensor activation scaling looks better here than it "
      "would there. What they do tell: how formats, scalings and accumulation rank under equal conditions on real "
      "trained weights, which operations (attention, layer-norm outputs, residual branches) are the sensitive "
      "ones, and how large a difference must be to be measurable on 10,000 images.",
      s->tcmodel, s->tc_test, tc_ext, nets[0]->out[C_TC + 2].kl_mean, nets[1]->out[C_TC + 2].kl_mean, s->promote,
      nets[0]->out[C_TC + 3].kl_mean, nets[1]->out[C_TC + 3].kl_mean, nets[0]->out[C_E4 + 1].kl_mean,
      nets[1]->out[C_E4 + 1].kl_mean, nets[0]->m.cnn.K[2], fq_nparams(&nets[1]->m));
  cJSON_AddStringToObject(r->results, "answer", ans);
  { /* the index's key numbers (tools/cmd_report.c): test accuracy of FP32, BF16, FP16 and E4M3 per tensor */
    static const int kk[4] = {C_FP32, C_BF16, C_FP16, C_E4};
    static const char *const kn[4] = {"fp32", "bf16", "fp16", "e4m3_tensor"}, *const kl[4] = {"FP32", "BF16", "FP16",
                                                                                               "E4M3 per tensor (scale phase 0)"};
    for (i = 0; i < 2; i++)
      for (j = 0; j < 4; j++) {
        char key[64], lab[128];
        snprintf(key, sizeof key, "%s_accuracy_%s", i ? "vit" : "cnn", kn[j]);
        snprintf(lab, sizeof lab, "%s test accuracy, %s", i ? "ViT" : "CNN", kl[j]);
        cJSON_AddStringToObject(lowp_result_key(r->results, key, lab, 100 * nets[i]->out[kk[j]].acc), "unit", "%");
      }
  }
  fprintf(r->summary, "**Answer.** %s\n\nData: configs.csv (one row per model and configuration), per_image.csv.gz "
          "(one row per image and configuration but the further scale phases: model, index (configs.csv's), config, "
          "image, label, pred, correct, kl: 5 digits), per_phase.csv.gz (the per-tensor rows over their scale phases, one row "
          "per model, format and image: label, pred_by_phase: the predicted class at phase 0 .. P-1, one character "
          "each, phase j being configs.csv's row \"FORMAT tensor x2^(-j/P)\" and phase 0 the plain row; "
          "kl_phase1 .. kl_phaseP-1: the KL from FP32, 4 digits), outliers.csv, outlier_channels.csv. "
          "Run time on stdout only. Scalings: activations per tensor use a static amax calibrated on training "
          "images (the per-channel rows scale weights per output channel, activations per tensor); a 1x%ld tile "
          "longer than a dot product is the whole row (the ViT's products are at most %d long: per-token "
          "activation and per-output-channel weight scales there); attention's q k^T and P v quantize both "
          "activation operands with the activation scheme.\n\n", ans, s->promote, vit_kmax(nets[1]));
}

/* ---------------------------------------------------------- verdicts */

static int sig_worse(const out_t *o) { return o->p < 0.05 && o->dacc < 0; }

static void verdict_exercise(lowp_run_t *r, cJSON *v, net_t *const *nets, const boot_t *bt) {
  char meas[4096], a[2][3][512];
  int i, worse8 = 0, worse16 = 0;
  for (i = 0; i < 2; i++) {
    spread_t p = spread(nets[i], C_FP32, C_E4, bt);
    rtext(nets[i], C_E4, bt, a[i][0], sizeof a[i][0]);
    dtext(nets[i], C_BF16, a[i][1], sizeof a[i][1]);
    dtext(nets[i], C_FP16, a[i][2], sizeof a[i][2]);
    worse8 += p.hi < 0; /* the interval over images and phases below 0 */
    worse16 += sig_worse(&nets[i]->out[C_BF16]) + sig_worse(&nets[i]->out[C_FP16]);
  }
  snprintf(meas, sizeof meas, "e4m3 per tensor: CNN %s; ViT %s. BF16: CNN %s; ViT %s. FP16: CNN %s; ViT %s", a[0][0],
           a[1][0], a[0][1], a[1][1], a[0][2], a[1][2]);
  add_verdict(v, r->summary, "Per-tensor FP8 E4M3 quantization of a pre-trained model costs more accuracy than FP16/BF16",
              "004, Exercise 6", meas,
              worse8 && !worse16 ? "holds: the e4m3 loss is measurable (its interval over images and scale phases "
                                   "excludes 0) where FP16/BF16's is not"
              : worse16 ? "wrong for these models: FP16 or BF16 loses measurably too"
              : kl_median(nets[0], C_E4) > nets[0]->out[C_BF16].kl_mean &&
                      kl_median(nets[1], C_E4) > nets[1]->out[C_BF16].kl_mean
                  ? "holds with a qualification: e4m3 moves the softmax more than BF16 (KL) in both networks, but "
                    "its accuracy change is not significant on 10,000 images"
                  : "wrong for these models: no measurable difference");
}

static void verdict_e4_e5(lowp_run_t *r, cJSON *v, net_t *const *nets, const boot_t *bt) {
  char meas[2048], b[2][400];
  spread_t p[2];
  int i, lower = 0, sig = 0, pos = 0;
  for (i = 0; i < 2; i++) {
    p[i] = spread(nets[i], C_E5, C_E4, bt);
    lower += kl_median(nets[i], C_E4) < kl_median(nets[i], C_E5);
    sig += p[i].lo > 0;
    pos += p[i].med >= 0;
  }
  snprintf(meas, sizeof meas, "accuracy e4m3 minus e5m2, per tensor, paired, over both rows' scale phases: CNN %s "
           "(median KL %.2g vs %.2g), ViT %s (median KL %.2g vs %.2g)", stext(&p[0], b[0], sizeof b[0]),
           kl_median(nets[0], C_E4), kl_median(nets[0], C_E5), stext(&p[1], b[1], sizeof b[1]),
           kl_median(nets[1], C_E4), kl_median(nets[1], C_E5));
  add_verdict(v, r->summary, "E4M3 is the format for the forward pass (weights, activations); E5M2 for gradients",
              "004, FP8: The Next Frontier / Two FP8 Variants", meas,
              lower == 2 && sig && pos == 2 ? "holds (forward pass; gradients are not tested here)"
              : lower == 2 ? "holds with a qualification: e4m3's softmax is closer to FP32 in both networks, the "
                             "accuracy difference is not significant over images and scale phases; gradients are "
                             "not tested here"
                           : "wrong for at least one of these networks");
}

/* the accuracy side of a "closer in KL" verdict, in the direction the estimates point: "no accuracy gain: the
   estimates are negative" is not "a gain that is not significant" (d[0]: CNN, d[1]: ViT, in points / 100;
   sig: an interval excludes 0) */
static const char *acc_side(char *b, size_t len, const double *d, int sig) {
  int up = (d[0] > 0) + (d[1] > 0);
  snprintf(b, len, "%s (CNN %+.2f, ViT %+.2f points; %s)",
           up == 0 ? "no accuracy gain: both estimates are zero or negative"
           : up == 1 ? "the accuracy estimates disagree in sign"
                     : "the accuracy gain is positive in both",
           100 * d[0], 100 * d[1], sig ? "one difference is significant at 5%" : "neither difference is significant");
  return b;
}

static void verdict_channel(lowp_run_t *r, cJSON *v, net_t *const *nets, const boot_t *bt) {
  char meas[2048], q[512], b[300], t[2][400];
  spread_t p[2];
  double d[2];
  int i, lower = 0, sig = 0, up = 0;
  for (i = 0; i < 2; i++) {
    p[i] = spread(nets[i], C_E4, C_E4 + 1, bt);
    d[i] = p[i].med;
    lower += nets[i]->out[C_E4 + 1].kl_mean < kl_median(nets[i], C_E4);
    sig += p[i].lo > 0 || p[i].hi < 0;
    up += p[i].lo > 0;
  }
  snprintf(meas, sizeof meas, "e4m3, per channel minus per tensor (over the per-tensor row's scale phases), paired: "
           "CNN %s (KL %.2g vs median %.2g), ViT %s (KL %.2g vs median %.2g)", stext(&p[0], t[0], sizeof t[0]),
           nets[0]->out[C_E4 + 1].kl_mean, kl_median(nets[0], C_E4), stext(&p[1], t[1], sizeof t[1]),
           nets[1]->out[C_E4 + 1].kl_mean, kl_median(nets[1], C_E4));
  add_verdict(v, r->summary, "Per-channel scaling provides better accuracy than per-tensor scaling",
              "004, FP8 / Per-Tensor vs Per-Channel Scaling", meas,
              lower == 2 && up ? "holds"
              : lower == 2 ? (snprintf(q, sizeof q, "holds with a qualification: per-channel weights bring the softmax "
                                       "closer to FP32 (KL) in both networks; %s", acc_side(b, sizeof b, d, sig)), q)
              : lower == 1 ? "holds with a qualification: closer to FP32 in one network only"
                           : "wrong for these networks");
}

/* Block scaling against per-tensor scaling with the same elements (the per-tensor row over its phases), at 8
   bits (e4m3, e5m2 elements) and at 4 (e2m1): how many comparisons gain or lose measurably (the interval over
   images and phases excludes 0). */
static void verdict_blocks(lowp_run_t *r, cJSON *v, net_t *const *nets, const boot_t *bt) {
  char meas[4096], t[2][400], q[600];
  size_t o = 0;
  int j, i, up[2] = {0, 0}, down[2] = {0, 0}, n[2] = {0, 0};
  if (nets[0]->nbs == 0) return;
  meas[0] = 0;
  for (j = 1; j <= nets[0]->nbs && o + 900 < sizeof meas; j++) {
    const lowp_bsformat_t *bf = nets[0]->cfg[nets[0]->c_bs + j].bs;
    int kt = tensor_row_of(nets[0], bf), four = kt == nets[0]->c_bs;
    spread_t p[2];
    if (kt < 0) continue;
    for (i = 0; i < 2; i++) {
      p[i] = spread(nets[i], tensor_row_of(nets[i], bf), nets[i]->c_bs + j, bt);
      up[four] += p[i].lo > 0;
      down[four] += p[i].hi < 0;
      n[four]++;
    }
    o += (size_t)snprintf(meas + o, sizeof meas - o, "%s%s minus %s: CNN %s; ViT %s", o ? ". " : "",
                          nets[0]->cfg[nets[0]->c_bs + j].label, nets[0]->cfg[kt].label, stext(&p[0], t[0], sizeof t[0]),
                          stext(&p[1], t[1], sizeof t[1]));
  }
  snprintf(q, sizeof q, "%s: of the block-minus-per-tensor comparisons (both networks), at 8 bits %d of %d gain "
           "measurably and %d lose (interval over images and phases excluding 0), at 4 bits %d of %d gain and %d lose; "
           "the rest are not significant",
           up[0] + up[1] == n[0] + n[1] ? "holds"
           : up[0] + up[1] > 0 && down[0] + down[1] == 0 ? "holds with a qualification"
           : up[0] + up[1] > 0 ? "holds with a qualification: it depends on the format"
           : down[0] + down[1] > 0 ? "wrong for these models"
                                   : "holds with a qualification: no measurable difference on these models",
           up[0], n[0], down[0], up[1], n[1], down[1]);
  add_verdict(v, r->summary, "Fine-grained block scaling (MX, NVFP4) preserves accuracy better than one scale per "
              "tensor", "issue 33, item 5 (blocks; cf. 004, FP8 / Per-Tensor vs Per-Channel Scaling)", meas, q);
}

static void verdict_promote(lowp_run_t *r, cJSON *v, net_t *const *nets, const fq_data_t *te, const uint8_t *w,
                            size_t n, int reps, const fq_settings_t *s) {
  char meas[1024], q[512], b[300];
  pair_t p[2];
  double dd[2];
  int i, lower = 0;
  for (i = 0; i < 2; i++) {
    p[i] = paired(nets[i], C_TC + 2, C_TC + 3, te, w, n, reps);
    dd[i] = p[i].d;
    lower += nets[i]->out[C_TC + 3].kl_mean < nets[i]->out[C_TC + 2].kl_mean;
  }
  snprintf(meas, sizeof meas, "e4m3 per channel on the %s tensor-core model, promoted every %ld products minus not "
           "promoted (first %zu images): CNN %+.2f [%+.2f, %+.2f] points (p = %.2g; KL %.2g vs %.2g), ViT %+.2f "
           "[%+.2f, %+.2f] (p = %.2g; KL %.2g vs %.2g); longest dot product %d terms",
           s->tcmodel, s->promote, n, 100 * p[0].d, 100 * p[0].lo, 100 * p[0].hi, p[0].p,
           nets[0]->out[C_TC + 3].kl_mean, nets[0]->out[C_TC + 2].kl_mean, 100 * p[1].d, 100 * p[1].lo, 100 * p[1].hi,
           p[1].p, nets[1]->out[C_TC + 3].kl_mean, nets[1]->out[C_TC + 2].kl_mean, nets[0]->m.cnn.K[2]);
  add_verdict(v, r->summary, "Three formats dominate: FP32 for storage/accumulation",
              "004, Key Takeaways 1 (fp8 accumulation: DeepSeek-V3, arXiv:2412.19437, 3.3.2)", meas,
              (p[0].p < 0.05 && p[0].d > 0) || (p[1].p < 0.05 && p[1].d > 0) ? "holds: promotion to fp32 measurably helps"
              : lower ? (snprintf(q, sizeof q, "holds with a qualification: promoting to fp32 brings the softmax "
                                  "closer to FP32 (KL) at these short dot products; %s", acc_side(b, sizeof b, dd,
                                  p[0].p < 0.05 || p[1].p < 0.05)), q)
                      : "holds with a qualification: no measurable difference at these short dot products");
}

/* the experiment's own expectations (its "expected" text), each said met or not, and the configurations whose
   bootstrap interval and McNemar test disagree about 5% (one excludes 0, the other does not: borderline) */
static void verdict_expectations(lowp_run_t *r, cJSON *v, net_t *const *nets, const boot_t *bt) {
  char meas[1024], b[1200];
  expect_t e = expectations(nets, bt);
  int n = borderline(nets, b, sizeof b);
  snprintf(meas, sizeof meas, "top-1 agreement with FP32, e4m3 per tensor, over the scale phases: CNN %.2f .. "
           "%.2f%%, ViT %.2f .. %.2f%%", 100 * e.e4[0].agmin, 100 * e.e4[0].agmax, 100 * e.e4[1].agmin,
           100 * e.e4[1].agmax);
  add_verdict(v, r->summary, "Scaled e4m3 agrees with FP32 on more than 99% of the images", "this experiment's expectation",
              meas, e.agree99 ? "holds" : "wrong: the expectation is not met (below 99% in at least one network)");
  snprintf(meas, sizeof meas, "e4m3 per tensor, median over the scale phases: KL ViT %.3g, CNN %.3g; accuracy "
           "change ViT %+.2f, CNN %+.2f points", e.e4[1].klmed, e.e4[0].klmed, 100 * e.e4[1].med, 100 * e.e4[0].med);
  add_verdict(v, r->summary, "The transformer is more sensitive to fp8 than the CNN", "this experiment's expectation",
              meas, e.vit_more ? "holds" : "wrong: the expectation is not met (the ViT moves less, in KL or in accuracy)");
  add_verdict(v, r->summary, "The bootstrap 95% interval and McNemar's test agree on each accuracy change",
              "this experiment's method", n ? b : "none",
              n ? "holds with a qualification: they disagree near the 5% edge for the configurations listed (the "
                  "percentile bootstrap and the exact test answer slightly different questions): read those as "
                  "borderline, neither significant nor not"
                : "holds");
}

static void verdicts(lowp_run_t *r, net_t *const *nets, const fq_data_t *te, const fq_settings_t *s,
                     const boot_t *bt, const uint8_t *wtc) {
  cJSON *v = cJSON_AddArrayToObject(r->results, "verdicts");
  char meas[512];
  int i;
  double nw = 0, nrow = 0;
  fprintf(r->summary, "## Verdicts\n\n");
  snprintf(meas, sizeof meas, "e4m3: %d significands per binade, max %g; e5m2: %d, max %g",
           1 << (LOWP_FMT_E4M3.precision - 1), lowp_format_xmax(&LOWP_FMT_E4M3), 1 << (LOWP_FMT_E5M2.precision - 1),
           lowp_format_xmax(&LOWP_FMT_E5M2));
  add_verdict(v, r->summary, "E4M3: range +-448, 8 values per power of 2; E5M2: range +-57344, 4 values per power of 2",
              "004, FP8: The Next Frontier / Two FP8 Variants", meas,
              (1 << (LOWP_FMT_E4M3.precision - 1)) == 8 && (1 << (LOWP_FMT_E5M2.precision - 1)) == 4 &&
                      lowp_format_xmax(&LOWP_FMT_E4M3) == 448 && lowp_format_xmax(&LOWP_FMT_E5M2) == 57344
                  ? "holds" : "wrong");
  verdict_exercise(r, v, nets, bt);
  verdict_e4_e5(r, v, nets, bt);
  verdict_channel(r, v, nets, bt);
  verdict_blocks(r, v, nets, bt);
  verdict_promote(r, v, nets, te, wtc, (size_t)s->tc_test, (int)s->boot, s);
  for (i = 0; i < 2; i++) {
    int k;
    for (k = 0; k < nets[i]->ns; k++) {
      fq_site_t si = fq_site(&nets[i]->m, k);
      if (!si.w) continue;
      nw += (double)si.K * si.N;
      nrow += si.N;
    }
  }
  snprintf(meas, sizeof meas, "weights of both networks (%.0f): per tensor %.3f%%, per channel %.3f%% (%.0f fp32 "
           "scales), MX blocks of %ld %.3f%% of their FP32 bytes", nw, 100.0 * (nw + 4.0 * 2 * 16) / (4.0 * nw),
           100.0 * (nw + 4.0 * nrow) / (4.0 * nw), nrow, s->mxblock, 100.0 * (1.0 + 1.0 / (double)s->mxblock) / 4.0);
  add_verdict(v, r->summary, "FP8 weight memory is 25% of FP32", "004, Memory Bandwidth Benefits", meas,
              "holds with a qualification: plus the scales (per tensor negligible, MX blocks add 1/block of a byte "
              "per element)");
  verdict_expectations(r, v, nets, bt);
  fprintf(r->summary, "\n");
}

/* ----------------------------------------------------------- the run */

/* The FP32 predictions on all 10,000 test images must be those recorded with
   the shipped model (models/NAME_fp32_predictions.txt: one digit per image),
   which the independent numpy evaluator (tests/numpy/fp8q_eval.py) checks
   too. Returns the number of images that differ (10000 if the file is short);
   0 when fewer images are evaluated. */
static size_t check_reference(const net_t *t, const fq_settings_t *s) {
  char path[4200], buf[10001];
  FILE *f;
  size_t n, i, diff = 0;
  snprintf(path, sizeof path, "%s/%s_fp32_predictions.txt", s->models, t->name);
  if (s->test != 10000) return 0;
  if (!(f = fopen(path, "rb"))) return 10000;
  n = fread(buf, 1, 10000, f);
  fclose(f);
  if (n < 10000) return 10000;
  for (i = 0; i < 10000; i++) diff += buf[i] - '0' != t->out[C_FP32].pred[i];
  return diff;
}

/* ------------------------------------------------------------ plots */

/* The plotted rows, left to right (x = their index): the main rows on all images (fp32 .. e5m2 mx), the
   block rows (e2m1 per tensor, the block-scaled formats), the per-tensor rows over their scale phases
   (PH_E4, PH_E5: median and range), then, right of the dotted line, the tensor-core rows (fewer images).
   Returns the count; *tc: the index of the first tensor-core row. */
enum { PH_E4 = -1, PH_E5 = -2 };

static int plot_rows(const net_t *t, int *k, int *tc) {
  int n = 0, j;
  for (j = 0; j < C_TC; j++) k[n++] = j;
  for (j = 0; j <= t->nbs; j++) k[n++] = t->c_bs + j;
  if (t->nph > 1) {
    k[n++] = PH_E4;
    k[n++] = PH_E5;
  }
  *tc = n;
  for (j = C_TC; j < C_LAYER; j++) k[n++] = j;
  return n;
}

/* a per-tensor row over its scale phases (PH_E4 / PH_E5): median, smallest and largest accuracy change,
   median KL and median agreement with FP32 over the phases (each phase paired with the one FP32 row) */
typedef struct {
  double med, min, max, kl, agree;
} phstat_t;

static phstat_t phase_stat(const net_t *t, int ph) {
  int set[FQ_MAXPHASE], n = row_set(t, ph == PH_E5 ? C_E5 : C_E4, set), j;
  double d[FQ_MAXPHASE], kl[FQ_MAXPHASE], ag[FQ_MAXPHASE];
  phstat_t r;
  r.min = 1e300;
  r.max = -1e300;
  for (j = 0; j < n; j++) {
    const out_t *o = &t->out[set[j]];
    d[j] = o->dacc;
    kl[j] = o->kl_mean;
    ag[j] = o->agree;
    r.min = d[j] < r.min ? d[j] : r.min;
    r.max = d[j] > r.max ? d[j] : r.max;
  }
  r.med = median_of(d, n);
  r.kl = median_of(kl, n);
  r.agree = median_of(ag, n);
  return r;
}

/* the x tic label of plotted row k */
static const char *plot_label(const net_t *t, int k, char *buf, size_t len) {
  if (k >= 0) return t->cfg[k].label;
  snprintf(buf, len, "%s tensor (%d phases)", k == PH_E5 ? "e5m2" : "e4m3", t->nph);
  return buf;
}

/* plot_configs.csv: the plotted rows of both networks (x: the row's index, the CNN 0.15 left, the ViT 0.15
   right; series: "cnn"/"vit", or "cnn phases"/"vit phases" for the per-tensor rows over their scale phases,
   whose lo/hi are the range over the phases, not an interval: bar says which); plot_layers.csv: the
   per-layer rows (x: the site group, the CNN's first). */
static int write_plot_csv(lowp_run_t *r, net_t *const *nets) {
  FILE *f = fopen(lowp_run_path(r, "plot_configs.csv"), "w"), *g = fopen(lowp_run_path(r, "plot_layers.csv"), "w");
  int i, gi, fi, x, ks[C_LAYER + FQ_MAXBS + 4], tc, n;
  char lb[64];
  if (!f || !g) {
    if (f) fclose(f);
    if (g) fclose(g);
    return LOWP_EIO;
  }
  fprintf(f, "model,x,config,delta_pp,lo_pp,hi_pp,kl_mean,disagree_pct,images,series,bar\n");
  fprintf(g, "model,x,format,group,kl_mean,delta_pp\n");
  for (i = 0; i < 2; i++) {
    n = plot_rows(nets[i], ks, &tc);
    for (x = 0; x < n; x++) {
      double xx = x + (i ? 0.15 : -0.15);
      if (ks[x] < 0) {
        phstat_t p = phase_stat(nets[i], ks[x]);
        fprintf(f, "%s,%.2f,%s,%.4f,%.4f,%.4f,%.6g,%.4f,%zu,%s phases,phase range\n", nets[i]->name, xx,
                plot_label(nets[i], ks[x], lb, sizeof lb), 100 * p.med, 100 * p.min, 100 * p.max, p.kl,
                100 * (1 - p.agree), nets[i]->out[C_E4].n, nets[i]->name);
      } else {
        const out_t *o = &nets[i]->out[ks[x]];
        fprintf(f, "%s,%.2f,%s,%.4f,%.4f,%.4f,%.6g,%.4f,%zu,%s,ci95\n", nets[i]->name, xx, nets[i]->cfg[ks[x]].label,
                100 * o->dacc, 100 * o->lo, 100 * o->hi, o->kl_mean, 100 * (1 - o->agree), o->n, nets[i]->name);
      }
    }
    for (gi = 0; gi < nets[i]->ng; gi++)
      for (fi = 0; fi < 2; fi++) {
        const out_t *o = &nets[i]->out[C_LAYER + 2 * gi + fi];
        fprintf(g, "%s,%.2f,%s,%s,%.6g,%.4f\n", nets[i]->name, (i ? nets[0]->ng : 0) + gi + (fi ? 0.1 : -0.1),
                fi ? "e5m2" : "e4m3", nets[i]->group[gi], o->kl_mean, 100 * o->dacc);
      }
  }
  return fclose(f) | fclose(g) ? LOWP_EIO : LOWP_OK;
}

/* gnuplot commands: the plotted rows as x tics, and (bars) each paired bootstrap interval as an error bar,
   grey where it spans 0, red where not, and each phase row's range over its scale phases in blue. */
static void config_axis(char *e, size_t len, net_t *const *nets, int bars) {
  size_t n = 0;
  int i, k, ks[C_LAYER + FQ_MAXBS + 4], tc, nr = plot_rows(nets[0], ks, &tc);
  char lb[64];
  n += (size_t)snprintf(e + n, len - n, "set xrange [%g:%g]\nset xtics noenhanced rotate by -40 font ',9' (", bars ? -0.6 : 0.4,
                        nr - 0.4);
  for (k = bars ? 0 : 1; k < nr; k++)
    n += (size_t)snprintf(e + n, len - n, "%s'%s' %d", k > !bars ? ", " : "", plot_label(nets[0], ks[k], lb, sizeof lb),
                          k);
  /* the key's text left-justified beside its samples with room to spare (the box clipped "CNN"); a right
     margin for the last rotated tick label */
  n += (size_t)snprintf(e + n, len - n, ")\nset key %s Left reverse width 2\nset rmargin 14\n"
                        "set arrow from %g, graph 0 to %g, graph 1 nohead dt 3 "
                        "lc rgb '#999999'\n", bars ? "top left" : "tmargin center horizontal", tc - 0.5, tc - 0.5);
  n += (size_t)snprintf(e + n, len - n, "set label %d \"tensor-core model (fewer images;\\nmodel extrapolation)\" at %g, "
                        "graph 0.95 left font ',9'\n", bars ? 2 : 1, tc - 0.3);
  if (!bars) return;
  {
    double lo = 0, hi = 0;
    for (i = 0; i < 2; i++) {
      nr = plot_rows(nets[i], ks, &tc);
      for (k = 1; k < nr; k++) {
        double l, h;
        if (ks[k] < 0) {
          phstat_t p = phase_stat(nets[i], ks[k]);
          l = p.min, h = p.max;
        } else
          l = nets[i]->out[ks[k]].lo, h = nets[i]->out[ks[k]].hi;
        lo = 100 * l < lo ? 100 * l : lo;
        hi = 100 * h > hi ? 100 * h : hi;
      }
    }
    /* room above the data for the key (top left) */
    n += (size_t)snprintf(e + n, len - n, "set yrange [%g:%g]\n", lo - 0.1 * (hi - lo) - 0.05, hi + 0.3 * (hi - lo) + 0.3);
  }
  n += (size_t)snprintf(e + n, len - n, "set arrow from graph 0, first 0 to graph 1, first 0 nohead dt 3 lc rgb "
                        "'#555555'\nset label 1 'grey: interval spans 0, no ranking supported; red: excludes 0; blue: "
                        "range over the scale phases' at graph 0.02, graph 0.05 left font ',9'\n");
  for (i = 0; i < 2; i++) {
    nr = plot_rows(nets[i], ks, &tc);
    for (k = 1; k < nr && n < len - 200; k++) {
      double x = k + (i ? 0.15 : -0.15), l, h;
      const char *col;
      if (ks[k] < 0) {
        phstat_t p = phase_stat(nets[i], ks[k]);
        l = p.min, h = p.max, col = "#1f77b4";
      } else {
        l = nets[i]->out[ks[k]].lo, h = nets[i]->out[ks[k]].hi;
        col = l > 0 || h < 0 ? "#d62728" : "#999999";
      }
      n += (size_t)snprintf(e + n, len - n, "set arrow from %g, %.4f to %g, %.4f heads size 0.06,90 lw 1.5 lc rgb "
                            "'%s' front\n", x, 100 * l, x, 100 * h, col);
    }
  }
}

static int plot_configs(lowp_run_t *r, net_t *const *nets) {
  char e[16384];
  lowp_plot_t pa = {"Accuracy change vs FP32, paired, with the 95% bootstrap interval (phase rows: median and range)",
                    "configuration (left of the dotted line: all test images)", "accuracy minus FP32 (points)", 0, 0, e};
  lowp_plot_t pk = {"KL divergence of the softmax from FP32 (mean over images)", "configuration",
                    "mean KL(FP32 || configuration) (nats)", 0, 1, e};
  lowp_plot_t pd = {"Top-1 disagreement with FP32", "configuration", "images whose class differs from FP32's (%)",
                    0, 1, e};
  /* series by column 10: the configurations, and the per-tensor rows' medians over the scale phases (open) */
  lowp_series_t sa[4] = {{"plot_configs.csv", 2, 4, "CNN", "points pt 7 ps 1.3", "cnn", 10, 0},
                         {"plot_configs.csv", 2, 4, "ViT", "points pt 5 ps 1.3", "vit", 10, 0},
                         {"plot_configs.csv", 2, 4, "CNN: median over the scale phases", "points pt 6 ps 1.6 lc rgb '#1f77b4'", "cnn phases", 10, 0},
                         {"plot_configs.csv", 2, 4, "ViT: median over the scale phases", "points pt 4 ps 1.6 lc rgb '#1f77b4'", "vit phases", 10, 0}};
  lowp_series_t sk[4], sd[4];
  int st, j, np = nets[0]->nph > 1 ? 4 : 2;
  for (j = 0; j < 4; j++) {
    sk[j] = sd[j] = sa[j];
    sk[j].ycol = 7;
    sd[j].ycol = 8;
  }
  config_axis(e, sizeof e, nets, 1);
  st = lowp_plot(r->outdir, "accuracy", &pa, sa, (size_t)np);
  config_axis(e, sizeof e, nets, 0);
  if (st == LOWP_OK) st = lowp_plot(r->outdir, "kl", &pk, sk, (size_t)np);
  if (st == LOWP_OK) st = lowp_plot(r->outdir, "disagreement", &pd, sd, (size_t)np);
  return st;
}

static int plot_layers(lowp_run_t *r, net_t *const *nets) {
  char e[2048];
  size_t n = 0;
  int i, g, x = 0;
  lowp_plot_t pl = {"Per-layer sensitivity: one site group quantized per tensor, the rest FP32",
                    "site group quantized (left: CNN, right: ViT)", "mean KL(FP32 || quantized) (nats)", 0, 1, e};
  lowp_series_t sl[2] = {{"plot_layers.csv", 2, 5, "e4m3", "points pt 7 ps 1.3", "e4m3", 3, 0},
                         {"plot_layers.csv", 2, 5, "e5m2", "points pt 5 ps 1.3", "e5m2", 3, 0}};
  n += (size_t)snprintf(e + n, sizeof e - n, "set xtics rotate by -40 (");
  for (i = 0; i < 2; i++)
    for (g = 0; g < nets[i]->ng; g++, x++)
      n += (size_t)snprintf(e + n, sizeof e - n, "%s'%s %s' %d", x ? ", " : "", nets[i]->name, nets[i]->group[g], x);
  snprintf(e + n, sizeof e - n, ")\nset xrange [-0.6:%g]\nset key top left Left reverse width 2\nset rmargin 14\n"
           "set arrow from %g, graph 0 to %g, graph 1 "
           "nohead dt 3 lc rgb '#999999'\n", x - 0.4, nets[0]->ng - 0.5, nets[0]->ng - 0.5);
  return lowp_plot(r->outdir, "layers", &pl, sl, 2);
}

static int plots(lowp_run_t *r, net_t *const *nets) {
  cJSON *pa = cJSON_AddArrayToObject(r->results, "plots");
  int st = write_plot_csv(r, nets);
  if (st == LOWP_OK) st = plot_configs(r, nets);
  if (st == LOWP_OK) st = plot_layers(r, nets);
  if (st != LOWP_OK) return st;
  lowp_result_plot(pa, "accuracy.png", "Accuracy of each configuration minus FP32's on the same images (points), with "
                   "its paired bootstrap 95% interval: grey bars span 0 (this run cannot rank that configuration "
                   "against FP32, nor against another grey one), red bars exclude it. Left of the dotted line all test "
                   "images: the main rows, the block rows (e2m1 per tensor and the block-scaled formats), and the "
                   "per-tensor e4m3 and e5m2 rows over their scale phases (open symbols: the median over the phases; "
                   "blue bars: the range over the phases, smallest to largest change; the interval over images and "
                   "phases is in the summary's phase table); right of it the tensor-core model's subset (wider "
                   "intervals; model extrapolation beyond the captured vectors). Data: plot_configs.csv (column bar: ci95 or phase range).");
  lowp_result_plot(pa, "kl.png", "Mean KL divergence of each configuration's softmax from FP32's, per format and "
                   "scaling (log axis; open symbols: the median over the per-tensor rows' scale phases): the primary "
                   "measure, which separates formats where accuracy cannot.");
  lowp_result_plot(pa, "disagreement.png", "Share of images whose top-1 class differs from FP32's (100% minus top-1 "
                   "agreement; open symbols: the median over the per-tensor rows' scale phases; log axis: a "
                   "configuration with no disagreement has no point).");
  lowp_result_plot(pa, "layers.png", "Per-layer sensitivity: mean KL from FP32 when one site group alone is "
                   "quantized per tensor (e4m3, e5m2), CNN left of the dotted line, ViT right. Data: plot_layers.csv.");
  return LOWP_OK;
}

/* nets[0], nets[1]: the shipped CNN and ViT; nets[2 .. nall - 1]: further training seeds */
static void outputs(lowp_run_t *r, net_t *const *nets, int nall, const fq_data_t *te, const fq_settings_t *s,
                    const uint8_t *wfull, const uint8_t *wtc, int *st) {
  boot_t bt;
  cJSON *mo = cJSON_AddObjectToObject(r->results, "models");
  int i;
  for (i = 0; i < 2; i++) {
    cJSON *o = cJSON_AddObjectToObject(mo, nets[i]->name);
    cJSON_AddNumberToObject(o, "parameters", (double)fq_nparams(&nets[i]->m));
    cJSON_AddNumberToObject(o, "fp32_correct", (double)(size_t)(nets[i]->out[C_FP32].acc * (double)s->test + 0.5));
    cJSON_AddNumberToObject(o, "images", (double)s->test);
  }
  bt.te = te;
  bt.w = wfull;
  bt.n = (size_t)s->test;
  bt.reps = (int)s->boot;
  bt.seed = r->seed + 3;
  answer(r, nets, nall, s, &bt);
  tables(r, nets);
  phase_table(r, nets, &bt);
  if (*st == LOWP_OK) *st = seed_table(r, nets, nall, &bt);
  verdicts(r, nets, te, s, &bt, wtc);
  if (*st == LOWP_OK) *st = write_configs(r, nets);
  if (*st == LOWP_OK) *st = write_outliers(r, nets);
  if (*st == LOWP_OK) *st = write_per_image(r, nets, te);
  if (*st == LOWP_OK && (*st = plots(r, nets)) != LOWP_OK) lowp_run_plot_failed(r, *st);
}

int fq_evaluate(lowp_run_t *r, const fq_settings_t *s, const fq_data_t *tr, const fq_data_t *te) {
  net_t *nets[2 + FQ_MAXSEEDS] = {0};
  uint8_t *wfull = NULL, *wtc = NULL, *wlay = NULL, *w[3];
  int i, st = LOWP_OK, fails = 0, nall = 2 + s->nseedm;
  for (i = 0; i < nall; i++)
    if (!(nets[i] = calloc(1, sizeof(net_t)))) st = LOWP_ENOMEM;
  for (i = 0; i < nall && st == LOWP_OK; i++) {
    const char *file = i < 2 ? NULL : s->seedm[i - 2], *base = file ? strrchr(file, '/') : NULL;
    base = base ? base + 1 : file;
    st = load_net(r, nets[i], i < 2 ? (i ? FQ_VIT : FQ_CNN) : strncmp(base, "vit_", 4) ? FQ_CNN : FQ_VIT, s, file);
  }
  for (i = 0; i < nall && st == LOWP_OK; i++) st = run_net(r, nets[i], tr, te, s);
  if (st == LOWP_OK) st = fq_boot_weights(&wfull, (size_t)s->test, (int)s->boot, r->seed);
  if (st == LOWP_OK) st = fq_boot_weights(&wtc, (size_t)s->tc_test, (int)s->boot, r->seed + 1);
  /* the per-layer rows on all the images share the main rows' replicates */
  if (st == LOWP_OK && s->layer_test != s->test)
    st = fq_boot_weights(&wlay, (size_t)s->layer_test, (int)s->boot, r->seed + 2);
  w[0] = wfull;
  w[1] = wtc;
  w[2] = s->layer_test != s->test ? wlay : wfull;
  for (i = 0; i < nall && st == LOWP_OK; i++) summarize(nets[i], te, s, w, (int)s->boot);
  for (i = 0; i < 2 && st == LOWP_OK; i++) {
    size_t diff = check_reference(nets[i], s);
    if (diff) {
      fprintf(stderr, "lowp run fp8-quantization: %s: FP32 predictions differ from %s/%s_fp32_predictions.txt on "
              "%zu of 10000 images\n", nets[i]->name, s->models, nets[i]->name, diff);
      fails++;
    }
  }
  if (st == LOWP_OK) {
    printf("evaluated cnn (%d configurations) in %.1f s, vit (%d) in %.1f s; %ld test images (%ld for the "
           "tensor-core model, %ld per layer)\n", nets[0]->nc, nets[0]->secs, nets[1]->nc, nets[1]->secs, s->test,
           s->tc_test, s->layer_test);
    fflush(stdout);
    for (i = 2; i < nall; i++) printf("evaluated %s (%s, main, block and phase rows) in %.1f s\n", nets[i]->name,
                                      nets[i]->file, nets[i]->secs);
    fflush(stdout);
    outputs(r, nets, nall, te, s, wfull, wtc, &st);
  }
  if (st != LOWP_OK) fprintf(stderr, "lowp run fp8-quantization: %s\n", lowp_status_str(st));
  for (i = 0; i < nall; i++)
    if (nets[i]) {
      free_net(nets[i]);
      free(nets[i]);
    }
  free(wfull);
  free(wtc);
  free(wlay);
  return st != LOWP_OK ? 2 : fails ? 1 : 0;
}
