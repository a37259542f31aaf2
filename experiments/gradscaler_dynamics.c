/* lowp_exp_gradscaler_dynamics -- loss scaling over a synthetic training run: gradients rounded to zero, skips, the scale */

/*
 * Question: on a stream of gradients that drift smaller, spike, and hit a
 *   run of NaN losses, how much of each step's gradient does fp16 round to
 *   zero with and without dynamic loss scaling, how many steps are
 *   skipped, and how do PyTorch's GradScaler and the documents' variants
 *   (Genesis clamp at 1.0, the MLX C++ and Python sketches) differ?
 * Method: step t has n gradient elements g = +-10^(mu(t) + sigma z), z
 *   standard normal (Philox, lib/rng), mu(t) = mu0 + drift * t / steps
 *   (gradients shrink as training converges); with probability spike_prob
 *   a step is a spike (all elements times 10^spike_decades); the steps
 *   [burst_at * steps, + burst_len) have a NaN loss (every gradient NaN).
 *   Each policy's scaled gradient S*g is formed in fp64 (S is a power of
 *   two here, so exactly) and rounded once to fp16 (lib/format, nearest
 *   even): this models the scaled backward pass's last rounding. An inf or
 *   NaN element is found-inf (the step is skipped); a nonzero g that
 *   becomes 0 is lost (rounded to zero); a subnormal result keeps fewer than 11
 *   bits. The scale then follows lib/amp/scaler (exact PyTorch rules, or a
 *   variant). Baseline "none": S = 1 throughout. Provenance of the
 *   hand-chosen scenario (mu0 -6, drift -2, a 30-step burst): a sweep
 *   moves each of mu0, drift and burst_len alone (sweep_n elements per
 *   step) and says whether the two findings hold at each point (sweep.csv,
 *   the sweep table, the answer's last sentence).
 * Run: lowp run gradscaler-dynamics [--steps=20000 --n=1024 --interval=2000]
 * Expected / acceptance: without scaling a growing fraction of elements
 *   rounds to zero as mu drifts below fp16's subnormal range; with
 *   PyTorch's scaler almost none do, except after the NaN burst, which
 *   drives the scale down by 2^burst_len; Genesis stops at 1.0 and recovers
 *   sooner; the MLX C++ sketch's tracker quirk grows one step early.
 */

#include "catalog.h"
#include "results.h"

#include "amp/scaler.h"
#include "format/format.h"
#include "io/plot.h"
#include "measure/fpx.h"
#include "rng/rng.h"
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lowp_param_t params[] = {
    {"steps", "20000", "3000", "training steps"},
    {"n", "1024", "256", "gradient elements per step"},
    {"interval", "2000", "300", "growth_interval of every scaler"},
    {"init", "65536", NULL, "initial scale (PyTorch's 2^16)"},
    {"mu0", "-6", NULL, "log10 of the median |g| at step 0"},
    {"drift", "-2", NULL, "change of that log10 over the run (negative: gradients shrink)"},
    {"sigma", "0.8", NULL, "spread of log10 |g| within a step (decades, one standard deviation)"},
    {"spike_prob", "0.001", "0.002", "probability that a step is a spike"},
    {"spike_decades", "3", NULL, "a spike multiplies the step's gradients by 10^this"},
    {"burst_at", "0.7", NULL, "the NaN-loss burst starts at this fraction of the run"},
    {"burst_len", "30", NULL, "steps with a NaN loss (0: none)"},
    {"window", "100", "50", "steps per point of the rounded-to-zero plot"},
    {"sweep_n", "32", "16", "gradient elements per step in the sweep of mu0, drift and burst_len (0: no sweep)"},
    {NULL, NULL, NULL, NULL}};

#define NPOL 5 /* none + the four scaler policies */

/* ------------------------------------------------------ private helpers */

typedef struct {
  long long steps, n, interval, burst_len, window, sweep_n;
  double init, mu0, drift, sigma, spike_prob, spike_dec, burst_at;
} cfg_t;

static void get_cfg(const lowp_run_t *r, cfg_t *c) {
  c->steps = lowp_run_param_int(r, "steps", 10, 10000000);
  c->n = lowp_run_param_int(r, "n", 1, 1 << 20);
  c->interval = lowp_run_param_int(r, "interval", 1, 2147483647LL);
  c->init = lowp_run_param_num(r, "init");
  c->mu0 = lowp_run_param_num(r, "mu0");
  c->drift = lowp_run_param_num(r, "drift");
  c->sigma = lowp_run_param_num(r, "sigma");
  c->spike_prob = lowp_run_param_num(r, "spike_prob");
  c->spike_dec = lowp_run_param_num(r, "spike_decades");
  c->burst_at = lowp_run_param_num(r, "burst_at");
  c->burst_len = lowp_run_param_int(r, "burst_len", 0, 1000000);
  c->window = lowp_run_param_int(r, "window", 1, 1000000);
  c->sweep_n = lowp_run_param_int(r, "sweep_n", 0, 1 << 20);
  if (!(c->init > 0) || isinf(c->init) || (float)c->init > 3.4e38f)
    lowp_run_bad_param(r, "init", "must be > 0 and finite in fp32");
  if (!(c->sigma >= 0) || c->sigma > 10) lowp_run_bad_param(r, "sigma", "must be in [0, 10]");
  if (!(c->spike_prob >= 0 && c->spike_prob <= 1)) lowp_run_bad_param(r, "spike_prob", "must be in [0, 1]");
  if (!(c->burst_at >= 0 && c->burst_at <= 1)) lowp_run_bad_param(r, "burst_at", "must be in [0, 1]");
  if (!(fabs(c->mu0) < 30 && fabs(c->drift) < 30 && fabs(c->spike_dec) < 30))
    lowp_run_bad_param(r, "mu0", "mu0, drift and spike_decades must be within +-30 decades");
}

static void check(const lowp_run_t *r) {
  cfg_t c;
  get_cfg(r, &c);
}

/* --------------------------------------------------------------- run */

typedef struct {
  const char *name;
  lowp_scaler_t s;       /* unused for "none" */
  long long skipped, lost, sub, seen; /* seen: elements of unskipped steps */
  long long lost_pre, seen_pre;       /* the same before the burst */
  long long prev_lost;                /* the last unskipped pre-burst step's lost count (-1: none yet) */
  double ssd_pre;                     /* sum of squared differences of successive such counts */
  long long nsd_pre;                  /* their number */
  long long wlost, wsub, wseen;       /* current window */
  double min_scale, max_scale, pre_burst, post_burst;
  double *scale_t;       /* scale after each step (rows grouped per policy in the CSV,
                            so that gnuplot's filtered lines are contiguous) */
  unsigned char *skip_t;
  double *wfrac, *wsubf; /* per window */
  long long nw;
  long long recover;     /* steps after the burst until scale >= pre_burst (-1 never) */
  lowp_fpx_trace_t fpx;  /* the roundings of S g: event i = step, j = element */
} pol_t;

/* the policies: "none" and lib/amp/scaler's, each with its trajectory buffers */
static int policies_init(pol_t *p, const cfg_t *c) {
  int k;
  memset(p, 0, NPOL * sizeof *p);
  p[0].name = "none";
  for (k = 0; k < NPOL; k++) lowp_fpx_init(&p[k].fpx);
  for (k = 1; k < NPOL; k++) {
    lowp_scaler_init(&p[k].s, (lowp_scaler_policy_t)(k - 1), c->init, 2.0, 0.5, c->interval);
    p[k].name = lowp_scaler_policy_name((lowp_scaler_policy_t)(k - 1));
  }
  for (k = 0; k < NPOL; k++) {
    p[k].min_scale = p[k].max_scale = k ? p[k].s.scale : 1.0;
    p[k].recover = -1;
    p[k].prev_lost = -1;
    p[k].scale_t = malloc((size_t)c->steps * sizeof(double));
    p[k].skip_t = malloc((size_t)c->steps);
    p[k].wfrac = malloc(((size_t)c->steps / (size_t)c->window + 1) * sizeof(double));
    p[k].wsubf = malloc(((size_t)c->steps / (size_t)c->window + 1) * sizeof(double));
    if (!p[k].scale_t || !p[k].skip_t || !p[k].wfrac || !p[k].wsubf) return LOWP_ENOMEM;
  }
  return LOWP_OK;
}

static void policies_free(pol_t *p) {
  int k;
  for (k = 0; k < NPOL; k++) {
    free(p[k].scale_t); free(p[k].skip_t); free(p[k].wfrac); free(p[k].wsubf);
  }
}

/* the rounding y of S g[i] at step t traced into tr: classified from the
   exact product (lib/measure/fpx.h); results strictly inside fp16's normal
   range raise nothing and cost one comparison */
static void trace_scaled(lowp_fpx_trace_t *tr, const cfg_t *c, long long t, long long i, double S, double g,
                         double y) {
  const lowp_format_t *f16 = &LOWP_FMT_FP16;
  double ay = fabs(y), x;
  int sticky;
  unsigned m;
  lowp_fpx_event_t ev;
  tr->ops++;
  if (ay > lowp_format_xmin(f16) && ay < lowp_format_xmax(f16)) return;
  lowp_fpx_exact_mul(&x, &sticky, S, g);
  lowp_fpx_event_init(&ev);
  ev.seq = (uint64_t)t * (uint64_t)c->n + (uint64_t)i;
  ev.i = t;
  ev.j = i;
  m = lowp_fpx_eval(&ev, LOWP_FPX_OP_MUL, S, g, x, sticky, y, f16, LOWP_RND_NE, isnan(g) ? LOWP_FPX_IN_NAN : 0);
  lowp_fpx_record_ref(tr, m, &ev, f16, LOWP_RND_NE, NULL, 0);
}

/* one step of policy k on the gradients g: S g rounded once to fp16 (and
   traced), the lost (zero) and subnormal elements counted, the scaler
   updated */
static void policy_step(pol_t *q, int k, const cfg_t *c, const double *g, long long t, long long burst0,
                        long long burst1) {
  const lowp_format_t *f16 = &LOWP_FMT_FP16;
  double S = k ? q->s.scale : 1.0;
  long long lost = 0, sub = 0, i;
  int found = 0, skipped;
  for (i = 0; i < c->n; i++) {
    double y;
    lowp_round_f64(&y, S * g[i], f16, NULL, LOWP_RND_NE);
    trace_scaled(&q->fpx, c, t, i, S, g[i], y);
    if (!isfinite(y)) found = 1;
    else if (y == 0 && g[i] != 0) lost++;
    else if (fabs(y) < lowp_format_xmin(f16)) sub++;
  }
  if (found) q->skipped++;
  else {
    q->lost += lost; q->sub += sub; q->seen += c->n;
    if (t < burst0) {
      q->lost_pre += lost;
      q->seen_pre += c->n;
      if (q->prev_lost >= 0) {
        q->ssd_pre += (double)(lost - q->prev_lost) * (double)(lost - q->prev_lost);
        q->nsd_pre++;
      }
      q->prev_lost = lost;
    }
    q->wlost += lost; q->wsub += sub; q->wseen += c->n;
  }
  if (k) {
    lowp_scaler_update(&q->s, found, &skipped);
    S = q->s.scale;
    if (S < q->min_scale) q->min_scale = S;
    if (S > q->max_scale) q->max_scale = S;
    if (t == burst1 - 1) q->post_burst = S;
    if (c->burst_len > 0 && t >= burst1 && q->recover < 0 && S >= q->pre_burst)
      q->recover = t - burst1 + 1;
  }
  q->scale_t[t] = S;
  q->skip_t[t] = (unsigned char)found;
  if ((t + 1) % c->window == 0) {
    q->wfrac[q->nw] = q->wseen ? (double)q->wlost / (double)q->wseen : NAN;
    q->wsubf[q->nw++] = q->wseen ? (double)q->wsub / (double)q->wseen : NAN;
    q->wlost = q->wsub = q->wseen = 0;
  }
}

/* the simulation: drifting, spiking log-normal gradients with a NaN burst */
static int simulate(lowp_run_t *r, const cfg_t *c, pol_t *p, long long burst0, long long burst1) {
  double *g = malloc((size_t)c->n * sizeof *g);
  long long t, i;
  int k;
  lowp_rng_t rng;
  if (!g) return LOWP_ENOMEM;
  lowp_rng_init(&rng, r->seed, 0x6773u);
  for (t = 0; t < c->steps; t++) {
    double mu = c->mu0 + c->drift * (double)t / (double)c->steps;
    int spike = lowp_rng_uniform(&rng) < c->spike_prob;
    int nanstep = t >= burst0 && t < burst1;
    if (spike) mu += c->spike_dec;
    for (i = 0; i < c->n; i++) {
      double z = lowp_rng_normal(&rng), sgn = (lowp_rng_next(&rng) & 1) ? -1.0 : 1.0;
      g[i] = nanstep ? NAN : sgn * pow(10.0, mu + c->sigma * z);
    }
    if (t == burst0)
      for (k = 0; k < NPOL; k++) p[k].pre_burst = k ? p[k].s.scale : 1.0;
    for (k = 0; k < NPOL; k++) policy_step(&p[k], k, c, g, t, burst0, burst1);
    if ((t & 1023) == 0) lowp_run_progress(r, "step %lld/%lld", t, c->steps);
  }
  free(g);
  return LOWP_OK;
}

/* ------------------------------------------------------------ the sweep */

/*
 * Provenance of the hand-chosen scenario: mu0, drift and burst_len varied
 * one at a time around the run's values (sweep_n elements per step, all
 * else as in the run), and for each point whether the two findings hold:
 * 1. before the burst, PyTorch's scaler rounds at most a tenth as many
 *    gradient elements to zero as no scaling does (n/a if none are lost);
 * 2. the NaN burst leaves PyTorch's scale below 1 (no lower clamp), after
 *    which it rounds more elements to zero than Genesis (clamped at 1)
 *    (n/a without a burst).
 */
typedef struct {
  const char *param;
  double value;
  double pre0, pre1, post1, post2, after1, after2; /* lost before (none, pytorch); scale after the burst and
                                                      lost after it (pytorch, genesis) */
  int f1, f2;                                      /* 1 holds, 0 fails, -1 n/a */
} sweep_row_t;

#define NSWEEP 9

static double frac(long long a, long long b) { return b > 0 ? (double)a / (double)b : 0; }

static int sweep_point(lowp_run_t *r, const cfg_t *base, const char *param, double value, sweep_row_t *row) {
  cfg_t c = *base;
  pol_t p[NPOL];
  long long b0, b1;
  int st;
  c.n = base->sweep_n;
  c.window = c.steps;
  if (!strcmp(param, "mu0")) c.mu0 = value;
  else if (!strcmp(param, "drift")) c.drift = value;
  else if (!strcmp(param, "burst_len")) c.burst_len = (long long)value;
  b0 = (long long)floor(c.burst_at * (double)c.steps);
  b1 = b0 + c.burst_len;
  st = policies_init(p, &c);
  if (!st) st = simulate(r, &c, p, b0, b1);
  if (!st) {
    row->param = param;
    row->value = value;
    row->pre0 = frac(p[0].lost_pre, p[0].seen_pre);
    row->pre1 = frac(p[1].lost_pre, p[1].seen_pre);
    row->post1 = p[1].post_burst;
    row->post2 = p[2].post_burst;
    row->after1 = frac(p[1].lost - p[1].lost_pre, p[1].seen - p[1].seen_pre);
    row->after2 = frac(p[2].lost - p[2].lost_pre, p[2].seen - p[2].seen_pre);
    row->f1 = row->pre0 > 0 ? row->pre1 * 10 <= row->pre0 : -1;
    row->f2 = c.burst_len > 0 ? row->post1 < 1 && row->after1 > row->after2 : -1;
  }
  policies_free(p);
  return st;
}

/* the run's own values first, then each parameter moved alone */
static int sweep(lowp_run_t *r, const cfg_t *c, sweep_row_t *row) {
  struct { const char *param; double value; } pt[NSWEEP] = {
      {"(the run's values)", 0}, {"mu0", c->mu0 + 1}, {"mu0", c->mu0 - 1},
      {"drift", 0}, {"drift", c->drift / 2}, {"drift", c->drift * 1.5},
      {"burst_len", 0}, {"burst_len", (double)(c->burst_len / 3)}, {"burst_len", (double)(c->burst_len * 2)}};
  int k, st = LOWP_OK;
  for (k = 0; k < NSWEEP && !st; k++) {
    st = sweep_point(r, c, pt[k].param, pt[k].value, &row[k]);
    lowp_run_progress(r, "sweep %d/%d", k + 1, NSWEEP);
  }
  return st;
}

static const char *verdict_word(int f) { return f < 0 ? "n/a" : f ? "holds" : "fails"; }

static int write_sweep(lowp_run_t *r, const cfg_t *c, const sweep_row_t *row) {
  static const char *const cols[] = {"parameter", "value", "lost before burst: none", "lost before burst: pytorch",
                                     "scale after burst: pytorch", "scale after burst: genesis",
                                     "lost after burst: pytorch", "lost after burst: genesis", "finding 1",
                                     "finding 2"};
  FILE *f = fopen(lowp_run_path(r, "sweep.csv"), "w");
  cJSON *rows;
  char title[400];
  int k, j;
  if (!f) return LOWP_EIO;
  snprintf(title, sizeof title, "Sweep of the scenario's hand-chosen parameters, one at a time (%lld gradient elements "
           "per step): 1 = scaling keeps >= 10x more gradients than none before the burst; 2 = the burst leaves "
           "PyTorch's scale < 1 and it then loses more than Genesis", c->sweep_n);
  rows = lowp_result_table(cJSON_GetObjectItem(r->results, "tables"), title, cols, 10);
  fprintf(f, "parameter,value,lost_pre_none,lost_pre_pytorch,scale_after_burst_pytorch,scale_after_burst_genesis,"
             "lost_after_burst_pytorch,lost_after_burst_genesis,finding1,finding2\n");
  fprintf(r->summary, "\n| parameter | value | lost before burst: none | pytorch | scale after burst: pytorch | "
                      "genesis | lost after burst: pytorch | genesis | finding 1 | finding 2 |\n"
                      "|---|---|---|---|---|---|---|---|---|---|\n");
  for (k = 0; k < NSWEEP; k++) {
    const sweep_row_t *w = &row[k];
    char cell[10][96];
    const char *cp[10];
    if (k == 0) fprintf(f, "%s,-", w->param); /* the run's values: the table's first row names them */
    else fprintf(f, "%s,%.6g", w->param, w->value);
    fprintf(f, ",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%s,%s\n", w->pre0, w->pre1, w->post1, w->post2, w->after1, w->after2,
            verdict_word(w->f1), verdict_word(w->f2));
    snprintf(cell[0], 96, "%s", w->param);
    if (k == 0) snprintf(cell[1], 96, "mu0 %g, drift %g, burst_len %lld", c->mu0, c->drift, c->burst_len);
    else snprintf(cell[1], 96, "%g", w->value);
    snprintf(cell[2], 96, "%.4f%%", 100 * w->pre0);
    snprintf(cell[3], 96, "%.4f%%", 100 * w->pre1);
    snprintf(cell[4], 96, "%.6g", w->post1);
    snprintf(cell[5], 96, "%.6g", w->post2);
    snprintf(cell[6], 96, "%.4f%%", 100 * w->after1);
    snprintf(cell[7], 96, "%.4f%%", 100 * w->after2);
    snprintf(cell[8], 96, "%s", verdict_word(w->f1));
    snprintf(cell[9], 96, "%s", verdict_word(w->f2));
    for (j = 0; j < 10; j++) cp[j] = cell[j];
    lowp_result_add_row_md(rows, r->summary, cp, 10);
  }
  return fclose(f) != 0 ? LOWP_EIO : LOWP_OK;
}

/* one sentence: where each finding held, and the points where it failed */
static void sweep_text(char *buf, size_t len, const sweep_row_t *row) {
  int k, f, held[2] = {0, 0}, app[2] = {0, 0};
  size_t o;
  for (k = 0; k < NSWEEP; k++)
    for (f = 0; f < 2; f++) {
      int v = f ? row[k].f2 : row[k].f1;
      if (v >= 0) { app[f]++; held[f] += v; }
    }
  o = (size_t)snprintf(buf, len, "Sweep (sweep.csv): finding 1 (scaling keeps the gradients) held at %d of %d points "
                       "where it applies, finding 2 (the burst pushes PyTorch's scale below 1, where it loses more "
                       "than Genesis) at %d of %d", held[0], app[0], held[1], app[1]);
  for (k = 0; k < NSWEEP && o < len; k++)
    for (f = 0; f < 2 && o < len; f++)
      if ((f ? row[k].f2 : row[k].f1) == 0)
        o += (size_t)snprintf(buf + o, len - o, "; %d fails at %s = %g (PyTorch's scale after the burst %g)", f + 1,
                              row[k].param, row[k].value, row[k].post1);
  if (o < len) snprintf(buf + o, len - o, ".");
}

static int write_csvs(lowp_run_t *r, const cfg_t *c, const pol_t *p) {
  FILE *fs = fopen(lowp_run_path(r, "scale.csv"), "w"), *fu = fopen(lowp_run_path(r, "zeroed.csv"), "w");
  long long t, i;
  int k, bad;
  if (!fs || !fu) {
    if (fs) fclose(fs);
    if (fu) fclose(fu);
    return LOWP_EIO;
  }
  fprintf(fs, "step,policy,scale,skipped\n");
  fprintf(fu, "step,policy,frac_zero,frac_subnormal\n");
  for (k = 0; k < NPOL; k++) {
    for (t = 0; t < c->steps; t++)
      fprintf(fs, "%lld,%s,%.9g,%d\n", t + 1, p[k].name, p[k].scale_t[t], p[k].skip_t[t]);
    for (i = 0; i < p[k].nw; i++)
      if (p[k].wfrac[i] == p[k].wfrac[i])
        fprintf(fu, "%lld,%s,%.6g,%.6g\n", (i + 1) * c->window, p[k].name, p[k].wfrac[i], p[k].wsubf[i]);
  }
  bad = fclose(fs) != 0;
  bad |= fclose(fu) != 0;
  return bad ? LOWP_EIO : LOWP_OK;
}

static void render_table(lowp_run_t *r, const cfg_t *c, const pol_t *p) {
  cJSON *tables = cJSON_AddArrayToObject(r->results, "tables"), *rows;
  int k;
  {
    static const char *const cols[] = {"policy", "skipped steps", "lost before the burst", "rounded to zero", "subnormal",
                                       "min scale", "max scale", "scale after burst",
                                       "steps to recover", "final scale"};
    rows = lowp_result_table(tables, "Per policy: skipped steps, gradient elements lost (fp16 zero) and subnormal, over unskipped steps", cols, 10);
  }
  fprintf(r->summary, "| policy | skipped | lost before burst | lost | subnormal | min scale | max scale | after burst | recover | final |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (k = 0; k < NPOL; k++) {
    char cell[10][48];
    const char *cp[10];
    int j;
    double fl = p[k].seen ? (double)p[k].lost / (double)p[k].seen : 0;
    double fsb = p[k].seen ? (double)p[k].sub / (double)p[k].seen : 0;
    snprintf(cell[0], 48, "%s", p[k].name);
    snprintf(cell[1], 48, "%lld", p[k].skipped);
    snprintf(cell[2], 48, "%.4f%%", p[k].seen_pre ? 100.0 * (double)p[k].lost_pre / (double)p[k].seen_pre : 0.0);
    snprintf(cell[3], 48, "%.4f%%", 100 * fl);
    snprintf(cell[4], 48, "%.4f%%", 100 * fsb);
    snprintf(cell[5], 48, "%.6g", p[k].min_scale);
    snprintf(cell[6], 48, "%.6g", p[k].max_scale);
    snprintf(cell[7], 48, "%.6g", k ? p[k].post_burst : 1.0);
    if (k == 0 || c->burst_len == 0) snprintf(cell[8], 48, "-");
    else if (p[k].recover < 0) snprintf(cell[8], 48, "not within the run");
    else snprintf(cell[8], 48, "%lld", p[k].recover);
    snprintf(cell[9], 48, "%.6g", k ? p[k].s.scale : 1.0);
    for (j = 0; j < 10; j++) cp[j] = cell[j];
    lowp_result_add_row(rows, cp, 10);
    fprintf(r->summary, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", cp[0], cp[1], cp[2], cp[3],
            cp[4], cp[5], cp[6], cp[7], cp[8], cp[9]);
  }
}

/* the y range of scale.png: every policy's extremes inside it, not on its edge */
static void scale_range(const pol_t *p, double *lo, double *hi) {
  int k;
  *lo = *hi = p[1].min_scale;
  for (k = 1; k < NPOL; k++) {
    if (p[k].min_scale < *lo) *lo = p[k].min_scale;
    if (p[k].max_scale > *hi) *hi = p[k].max_scale;
  }
}

static int render_plots(lowp_run_t *r, const cfg_t *c, const pol_t *p, long long burst0, long long burst1) {
  cJSON *plots = cJSON_AddArrayToObject(r->results, "plots");
  int st;
  {
    char extra[512];
    lowp_plot_t pl = {"Loss scale over training (fp16 gradients; NaN burst and spikes marked by drops)",
                      "training step", "loss scale (log2 axis)", 0, 1, NULL};
    lowp_series_t s[4] = {
        {"scale.csv", 1, 3, "PyTorch GradScaler", "steps lc rgb '#1f4e9e'", "pytorch", 2, 0},
        {"scale.csv", 1, 3, "Genesis (clamp at 1.0)", "steps lc rgb '#d62728'", "genesis", 2, 0},
        {"scale.csv", 1, 3, "MLX C++ sketch", "steps lc rgb '#2ca02c'", "mlx", 2, 1},
        {"scale.csv", 1, 3, "MLX Python sketch", "steps lc rgb '#ff7f0e'", "mlx-py", 2, 1}};
    double lo, hi;
    char tick[96];
    int e;
    scale_range(p, &lo, &hi);
    /* a power of two: the tics start there, every 2^3, plus Genesis's clamp 2^0; otherwise one tick of
       its own is added */
    if (frexp(lo, &e) == 0.5) snprintf(tick, sizeof tick, "set ytics %.17g, 8\nset ytics add ('2^{0}' 1)", lo);
    else snprintf(tick, sizeof tick, "set ytics add ('%.3g' %.17g)", lo, lo);
    /* a margin of 2^3 below the smallest and above the largest scale, and
       the smallest (PyTorch's after the burst) labelled as its own tick */
    snprintf(extra, sizeof extra,
             "set logscale y 2\nset format y '2^{%%L}'\nset key outside right top box\n"
             "set yrange [%.17g:%.17g]\n%s\n"
             "set object 1 rect from %lld, graph 0 to %lld, graph 1 fc rgb '#f4cccc' fs solid 0.5 noborder behind\n"
             "set label 1 'NaN burst' at %lld, graph 0.95 offset 0.5,0",
             lo / 8, hi * 8, tick, burst0, burst1 > burst0 ? burst1 : burst0 + 1, burst1);
    pl.extra = extra;
    st = lowp_plot(r->outdir, "scale", &pl, s, 4);
  }
  if (st == 0) {
    static char ylab[96];
    lowp_plot_t pl = {"Fraction of gradient elements rounded to zero in fp16 (unskipped steps)",
                      "training step", ylab, 0, 0, "set key outside right top box\nset yrange [-0.02:1]"};
    snprintf(ylab, sizeof ylab, "fraction rounded to zero (mean over windows of %lld steps)", c->window);
    lowp_series_t s[3] = {
        {"zeroed.csv", 1, 3, "no loss scaling", "lines lc rgb '#000000'", "none", 2, 0},
        {"zeroed.csv", 1, 3, "PyTorch GradScaler", "lines lc rgb '#1f4e9e'", "pytorch", 2, 0},
        {"zeroed.csv", 1, 3, "Genesis", "lines lc rgb '#d62728'", "genesis", 2, 1}};
    st = lowp_plot(r->outdir, "zeroed", &pl, s, 3);
  }
  lowp_result_plot(plots, "scale.png", "The loss scale of each policy over the run (the documents' \"Loss Scale over "
                   "Training\" sketch, measured): growth every interval, halving at spikes, the NaN burst (shaded); the y axis "
                   "reaches 2^3 beyond the extremes, its tics start at the smallest scale (PyTorch's after the burst).");
  {
    char cap[512];
    snprintf(cap, sizeof cap, "Share of the step's gradient elements that fp16 rounds to zero, with and without loss "
             "scaling (means over windows of %lld steps, unskipped steps only; each point at its window's last step). "
             "PyTorch's line sits at 0 until the NaN burst leaves its scale below 1.", c->window);
    lowp_result_plot(plots, "zeroed.png", cap);
  }
  return st;
}

/*
 * The 95% half-width of a policy's pre-burst fraction lost_pre / seen_pre. The steps are independent draws
 * (their gradients and whether they spike), so the variance of the total count is the sum of the steps'
 * variances; each step is drawn once, so that sum is estimated from successive differences (von Neumann
 * 1941): Var(l_t) ~ (l_{t+1} - l_t)^2 / 2 where the mean moves little from one step to the next (here mu
 * moves by drift / steps decades a step). Normal approximation: 1.96 standard errors.
 */
static double pre_half(const pol_t *q, const cfg_t *c) {
  double steps = (double)q->seen_pre / (double)c->n, var_step;
  if (q->nsd_pre < 1 || q->seen_pre == 0) return NAN;
  var_step = q->ssd_pre / (2.0 * (double)q->nsd_pre);
  return 1.96 * sqrt(steps * var_step) / (double)q->seen_pre;
}

static void judge(lowp_run_t *r, const cfg_t *c, const pol_t *p, const sweep_row_t *sw) {
  const lowp_format_t *f16 = &LOWP_FMT_FP16;
  cJSON *verdicts;
  char buf[2400], b2[256], b3[1200];
  /* ---- answer and verdicts */
  {
    double f0 = p[0].seen_pre ? (double)p[0].lost_pre / (double)p[0].seen_pre : 0;
    double f1 = p[1].seen_pre ? (double)p[1].lost_pre / (double)p[1].seen_pre : 0;
    double h0 = pre_half(&p[0], c), h1 = pre_half(&p[1], c);
    snprintf(buf, sizeof buf,
             "Before the NaN burst, fp16 rounded %.2f%% (95%% interval +- %.2g%%) of the gradient elements to zero "
             "without scaling and %.4f%% (+- %.2g%%) with PyTorch's GradScaler (intervals from the step-to-step "
             "variation of each step's count: the steps are independent draws, whose mean drifts slowly; %lld of "
             "%lld steps skipped in the whole run). The %lld-step NaN burst drove PyTorch's "
             "scale to %.3g (recovery: %s steps; at one doubling per interval it needs about %lld); Genesis's clamp held it at %.3g. The MLX C++ sketch "
             "ended at %.6g vs PyTorch's %.6g.",
             100 * f0, 100 * h0, 100 * f1, 100 * h1, p[1].skipped, c->steps, c->burst_len, p[1].post_burst,
             p[1].recover < 0 ? "more than the rest of the run" : (snprintf(b2, sizeof b2, "%lld", p[1].recover), b2),
             c->burst_len * c->interval, p[2].post_burst, p[3].s.scale, p[1].s.scale);
    if (sw) {
      size_t o = strlen(buf);
      sweep_text(b3, sizeof b3, sw);
      snprintf(buf + o, sizeof buf - o, " %s", b3);
    }
    cJSON_AddStringToObject(r->results, "answer", buf);
    fprintf(r->summary, "\n**Answer.** %s\n", buf);
    /* the index's key numbers (tools/cmd_report.c) */
    {
      cJSON *k0 = lowp_result_key(r->results, "zero_no_scaling", "gradient elements that become 0 in fp16 without "
                                  "scaling, before the NaN burst", 100 * f0);
      cJSON *k1 = lowp_result_key(r->results, "zero_gradscaler", "the same with PyTorch's GradScaler", 100 * f1);
      cJSON_AddNumberToObject(k0, "ci95", 100 * h0);
      cJSON_AddStringToObject(k0, "unit", "%");
      cJSON_AddNumberToObject(k1, "ci95", 100 * h1);
      cJSON_AddStringToObject(k1, "unit", "%");
    }
    snprintf(b2, sizeof b2, "steps GradScaler skipped, of %lld", c->steps);
    lowp_result_key(r->results, "skipped_gradscaler", b2, (double)p[1].skipped);
  }
  verdicts = cJSON_AddArrayToObject(r->results, "verdicts");
  {
    /* where does fp16 really lose a gradient? the largest double that
       rounds to zero is xmins/2 (the tie goes to even 0) */
    double h = lowp_format_xmins(f16) / 2, y1, y2;
    lowp_round_f64(&y1, h, f16, NULL, LOWP_RND_NE);
    lowp_round_f64(&y2, nextafter(h, 1.0), f16, NULL, LOWP_RND_NE);
    snprintf(buf, sizeof buf, "fp16(%.4g) = %g but fp16(next double above) = %.4g: only |g| <= 2^%d = %.3g "
             "becomes 0; 6.1e-5 is the smallest normal, below it values are subnormal (fewer bits), not zero",
             h, y1, y2, (int)log2(h), h);
    lowp_result_verdict(verdicts, "If the gradient is below 6.10e-5, its fp16 value is 0 (flush to zero)",
                        "document 001, section 1.A \"The Underflow Problem\"", buf,
                        "wrong: fp16 has subnormals; gradients between 2^-25 and 2^-14 survive with reduced precision");
    snprintf(buf, sizeof buf, "PyTorch: min scale %.3g, max %.3g, %lld skipped steps of %lld; see scale.png",
             p[1].min_scale, p[1].max_scale, p[1].skipped, c->steps);
    lowp_result_verdict(verdicts, "Loss scale over training: grows in warmup, drops at spikes, stabilises late",
                        "document 004, \"Loss Scale Dynamics\"", buf,
                        "holds with a qualification: with growth every 2000 steps the scale is a staircase that only "
                        "'stabilises' when the growth attempts overflow; its level tracks the gradients' largest "
                        "element, not their median");
    snprintf(buf, sizeof buf, "scale after the %lld-step NaN burst: PyTorch %.3g, Genesis %.3g; recovery to the "
             "pre-burst scale: PyTorch %lld, Genesis %lld steps (-1 = not within the run)",
             c->burst_len, p[1].post_burst, p[2].post_burst, p[1].recover, p[2].recover);
    lowp_result_verdict(verdicts, "Genesis's GradScaler: scale = max(scale * backoff, 1.0)",
                        "document 003, \"Advanced Mixed Precision with Loss Scaling\"", buf,
                        "holds (reproduced): the clamp bounds the damage of a NaN burst, but a scale of 1 cannot "
                        "cure a true fp16 overflow, which PyTorch's unclamped scale can");
    snprintf(buf, sizeof buf, "MLX C++ sketch: %lld skipped, final scale %.6g; PyTorch: %lld skipped, final %.6g",
             p[3].skipped, p[3].s.scale, p[1].skipped, p[1].s.scale);
    lowp_result_verdict(verdicts, "MLX GradScaler sketch (C++): step() resets found_inf_ before update()",
                        "document 000, \"MLX C++ API\"", buf,
                        "holds with a qualification: it behaves like PyTorch except that a skipped step counts "
                        "toward growth (tracker 1 after an overflow; with growth_interval 1 the backoff is undone)");
  }
}

/* per policy, the first step and element where S g became non-finite in
   fp16 (a NaN from the NaN-loss burst: nan_propagated; a product beyond
   65504: overflow_inf), and where the first gradient underflowed */
static int report_first_exception(lowp_run_t *r, const pol_t *p) {
  int k;
  char ctx[160];
  for (k = 0; k < NPOL; k++) {
    snprintf(ctx, sizeof ctx, "%s: S g rounded to fp16, first non-finite", p[k].name);
    if (!lowp_result_first_exception(r, ctx, &p[k].fpx, LOWP_FPX_OVERFLOW | LOWP_FPX_BIT(LOWP_FPX_INVALID) |
                                     LOWP_FPX_BIT(LOWP_FPX_NAN_PROP) | LOWP_FPX_BIT(LOWP_FPX_DIVZERO)))
      return 2;
    snprintf(ctx, sizeof ctx, "%s: S g rounded to fp16, first underflow", p[k].name);
    if (!lowp_result_first_exception(r, ctx, &p[k].fpx, LOWP_FPX_UNDERFLOW)) return 2;
  }
  return 0;
}

static int run(lowp_run_t *r) {
  cfg_t c;
  pol_t p[NPOL];
  sweep_row_t sw[NSWEEP];
  long long burst0, burst1;
  int st;
  /* declare */
  get_cfg(r, &c);
  burst0 = (long long)floor(c.burst_at * (double)c.steps);
  burst1 = burst0 + c.burst_len;
  /* simulate (the scaler's trajectory is not an operation: its own loop) */
  st = policies_init(p, &c);
  if (!st) st = simulate(r, &c, p, burst0, burst1);
  if (st) {
    policies_free(p);
    fprintf(stderr, "lowp run gradscaler-dynamics: out of memory\n");
    return 2;
  }
  /* render and judge */
  st = write_csvs(r, &c, p);
  policies_free(p);
  if (st) {
    fprintf(stderr, "lowp run gradscaler-dynamics: cannot write CSV files\n");
    return 2;
  }
  render_table(r, &c, p);
  /* the sweep of the hand-chosen parameters */
  if (c.sweep_n > 0) {
    st = sweep(r, &c, sw);
    if (!st) st = write_sweep(r, &c, sw);
    if (st) {
      fprintf(stderr, "lowp run gradscaler-dynamics: the sweep failed (%s)\n", lowp_status_str(st));
      return 2;
    }
  }
  st = render_plots(r, &c, p, burst0, burst1);
  if (st != 0) return lowp_run_plot_failed(r, st);
  judge(r, &c, p, c.sweep_n > 0 ? sw : NULL);
  return report_first_exception(r, p);
}

const lowp_experiment_t lowp_exp_gradscaler_dynamics = {
    "gradscaler-dynamics",
    "On gradients that drift, spike and hit a NaN burst, how much does fp16 lose with and without "
    "dynamic loss scaling, and how do PyTorch's GradScaler and the documents' variants differ?",
    "Log-normal gradient magnitudes (median 10^(mu0 + drift t/T), sigma decades), spikes, a NaN burst; "
    "S*g rounded once to fp16; found-inf skips the step; scale from lib/amp/scaler (PyTorch exact rules, "
    "Genesis, MLX C++ and Python sketches); baseline without scaling.",
    "No scaling loses a growing fraction as the gradients shrink; PyTorch's scaler keeps almost all; "
    "the NaN burst collapses PyTorch's scale (no lower clamp) while Genesis stops at 1; a sweep of mu0, drift and "
    "the burst length shows where these findings hold.",
    params, run, check};
