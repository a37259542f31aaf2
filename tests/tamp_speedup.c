/* tamp_speedup -- the amp-speedup roofline against hand formulas, the CPU runner against exact products, the run */

/*
 * 1. Roofline numbers of kernels recomputed here by hand from the
 *    datasheet figures (typed here again, independently of roofline.c's
 *    table): H100 SXM QKV projection in fp16, A100 softmax in fp32, V100
 *    MLP-up in tf32 (no tf32 unit: the fp32 rate), H100 attention scores in
 *    bf16 (memory bound).
 * 2. FLOP counts: every GEMM's flops are 2 m n k per product, and the
 *    layer's totals are the closed forms 24 T d^2 + 4 B S^2 d (forward,
 *    MLP 4x) and twice that (backward: dX and dW).
 * 3. The Shapley split adds up, and gives nothing to an unchanged factor.
 * 4. The CPU runner at a tiny size on integer data: every GEMM's fp32
 *    result equals a naive product computed here (exact: small integers);
 *    the bf16 path's result equals the exact product too; every other
 *    kernel runs.
 * 5. lowp run amp-speedup: --measure=none twice gives the same results.json
 *    bytes; a tiny CPU measurement writes its timing files; bad values exit 2.
 * 6. The structure of the outputs, never their timings: results.json's
 *    "memory_bound_gemms" counts agree with kernels.csv's "bound" column,
 *    every predicted speedup band has lo <= hi, and a precision with no
 *    tensor cores that stores fp32 (tf32 on V100) gets the band [1, 1]; in
 *    the CPU measurement every kernel has fastest <= median <= slowest, its
 *    roofline time <= its fastest time, its rates <= the roofs (true by
 *    construction: each roof is at least every rate the run reached), and
 *    timing.json's roofs are at least the sgemm and triad they come from.
 *
 * Run: ctest --test-dir build -R tamp_speedup
 */

#define _POSIX_C_SOURCE 200809L

#include "testutil.h"

#include "gpu/amp_gpu.h"
#include "train/amp_layer.h"
#include "model/roofline.h"
#include "status.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lowp_rkernel_t *find(const lowp_rkernel_t *ks, size_t nk, const char *name) {
  size_t i;
  for (i = 0; i < nk; i++)
    if (!strcmp(ks[i].name, name)) return &ks[i];
  return NULL;
}

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b); }

static size_t prec_index(const char *name) {
  size_t np, i;
  const lowp_rprec_t *p = lowp_roofline_precisions(&np);
  for (i = 0; i < np; i++)
    if (!strcmp(p[i].name, name)) return i;
  return np;
}

static void hand_roofline(void) {
  lowp_layer_dims_t d = {16, 512, 1024, 16, 4, 0.1};
  lowp_rkernel_t ks[64];
  size_t nk = lowp_roofline_layer(ks, 64, &d);
  const lowp_rkernel_t *k;
  lowp_rtime_t t;
  double T = 16.0 * 512, D = 1024, fl, by, want;

  lowp_test_check(nk > 0 && nk <= 64, "the layer has kernels (%zu)", nk);
  /* H100 SXM datasheet: FP16 tensor 1,979 TFLOPS with sparsity = 989.5 dense; 3.35 TB/s */
  k = find(ks, nk, "qkv.fwd");
  lowp_test_check(k != NULL, "qkv.fwd exists");
  if (k) {
    lowp_roofline_time(&t, k, prec_index("fp16"), lowp_roofline_device("h100"));
    fl = 2 * T * (3 * D) * D;
    by = (T * D + D * 3 * D + T * 3 * D) * 2; /* A, B, C once, 2 bytes each */
    want = fmax(fl / 989.5e12, by / 3.35e12);
    lowp_test_check(near(t.flops, fl) && near(t.bytes, by) && near(t.t, want) && t.t_compute > t.t_memory,
                    "H100 fp16 qkv.fwd: %.6g s, want %.6g s (compute bound)", t.t, want);
  }
  /* A100 40 GB datasheet: 1,555 GB/s; softmax reads and writes B h S^2 fp32 values */
  k = find(ks, nk, "softmax.fwd");
  lowp_test_check(k != NULL, "softmax.fwd exists");
  if (k) {
    lowp_roofline_time(&t, k, prec_index("fp32"), lowp_roofline_device("a100"));
    by = 2 * 16.0 * 16 * 512 * 512 * 4;
    want = by / 1555e9;
    lowp_test_check(near(t.bytes, by) && near(t.t, want) && t.t_memory > t.t_compute,
                    "A100 fp32 softmax.fwd: %.6g s, want %.6g s (memory bound)", t.t, want);
  }
  /* V100 datasheet: no tf32 unit; FP32 15.7 TFLOPS; 900 GB/s */
  k = find(ks, nk, "mlp_up.fwd");
  lowp_test_check(k != NULL, "mlp_up.fwd exists");
  if (k) {
    lowp_roofline_time(&t, k, prec_index("tf32"), lowp_roofline_device("v100"));
    fl = 2 * T * 4 * D * D;
    by = (T * D + D * 4 * D + T * 4 * D) * 4;
    want = fmax(fl / 15.7e12, by / 900e9);
    lowp_test_check(t.fallback == 1 && near(t.t, want), "V100 tf32 mlp_up.fwd at the fp32 rate: %.6g s, want %.6g s",
                    t.t, want);
  }
  /* H100: attention scores, 256 products of 512 x 512 x 64, bf16: memory bound */
  k = find(ks, nk, "scores.fwd");
  lowp_test_check(k != NULL, "scores.fwd exists");
  if (k) {
    lowp_roofline_time(&t, k, prec_index("bf16"), lowp_roofline_device("h100"));
    fl = 256 * 2.0 * 512 * 512 * 64;
    by = 256 * (512.0 * 64 + 64 * 512 + 512 * 512) * 2;
    want = fmax(fl / 989.5e12, by / 3.35e12);
    lowp_test_check(near(t.t, want) && t.t_memory > t.t_compute, "H100 bf16 scores.fwd: %.6g s, want %.6g s (memory bound)",
                    t.t, want);
  }
}

static void flop_counts(void) {
  static const lowp_layer_dims_t ds[] = {{16, 512, 1024, 16, 4, 0.1}, {2, 7, 12, 3, 4, 0}, {1, 33, 64, 8, 4, 0.5}};
  size_t di;
  for (di = 0; di < sizeof ds / sizeof ds[0]; di++) {
    const lowp_layer_dims_t *d = &ds[di];
    lowp_rkernel_t ks[64];
    size_t nk = lowp_roofline_layer(ks, 64, d), i, ngemm = 0;
    double fwd = 0, bwd = 0, T = (double)(d->batch * d->seq), D = (double)d->d_model, S = (double)d->seq;
    double want = 24 * T * D * D + 4 * (double)d->batch * S * S * D;
    int each = 1;
    for (i = 0; i < nk; i++) {
      double fl, by;
      if (ks[i].kind != LOWP_RK_GEMM) continue;
      ngemm++;
      lowp_roofline_cost(&fl, &by, &ks[i], &LOWP_FMT_FP32);
      if (fl != 2.0 * (double)ks[i].count * (double)ks[i].m * (double)ks[i].n * (double)ks[i].k) each = 0;
      if (ks[i].backward) bwd += fl; else fwd += fl;
    }
    lowp_test_check(each, "dims %zu: every GEMM's flops are 2 m n k per product", di);
    lowp_test_check(ngemm == 6 + 12, "dims %zu: 6 forward GEMMs, 12 backward (%zu)", di, ngemm);
    lowp_test_check(fwd == want, "dims %zu: forward GEMM flops %.17g, closed form 24 T d^2 + 4 B S^2 d = %.17g", di,
                    fwd, want);
    lowp_test_check(bwd == 2 * want, "dims %zu: backward GEMM flops %.17g = 2 x forward", di, bwd);
    lowp_test_check(nk == 18 + 12 + (d->dropout > 0 ? 6 : 0), "dims %zu: 18 GEMMs, 12 memory-bound kernels and 6 dropouts if any (%zu)", di, nk);
  }
  {
    lowp_layer_dims_t bad = {16, 512, 1024, 15, 4, 0.1};
    lowp_test_check(lowp_roofline_layer(NULL, 0, &bad) == 0, "heads not dividing d_model: no layer");
    bad.heads = 16;
    bad.dropout = 1;
    lowp_test_check(lowp_roofline_layer(NULL, 0, &bad) == 0, "dropout 1: no layer");
  }
}

static void split(void) {
  double dc, dm;
  lowp_roofline_split(&dc, &dm, 8, 2, 1, 1); /* compute bound, both shrink */
  lowp_test_check(dc + dm == 7 && dc == 6.5 && dm == 0.5, "Shapley split 8,2 -> 1,1: %g + %g", dc, dm);
  lowp_roofline_split(&dc, &dm, 1, 4, 1, 2); /* memory bound, only bytes change */
  lowp_test_check(dc == 0 && dm == 2, "only memory changed: all to memory (%g, %g)", dc, dm);
}

static void cpu_runner(void) {
  lowp_layer_dims_t d = {1, 8, 16, 2, 4, 0.25};
  lowp_rkernel_t ks[64];
  size_t nk = lowp_roofline_layer(ks, 64, &d), np, i, p;
  const lowp_rprec_t *pr = lowp_roofline_precisions(&np);
  lowp_amp_cpu_t *ctx = NULL;
  int st = lowp_amp_cpu_new(&ctx, ks, nk, 1, lowp_test_seed());
  lowp_test_check(st == LOWP_OK, "lowp_amp_cpu_new: %d", st);
  if (st != LOWP_OK) return;
  lowp_test_check(lowp_amp_cpu_supports(&pr[prec_index("fp32")]) && lowp_amp_cpu_supports(&pr[prec_index("bf16")]) &&
                      !lowp_amp_cpu_supports(&pr[prec_index("tf32")]) && !lowp_amp_cpu_supports(&pr[prec_index("fp16")]),
                  "the CPU runner takes fp32 and bf16 only");
  for (i = 0; i < nk; i++) {
    const lowp_rkernel_t *k = &ks[i];
    st = lowp_amp_cpu_run(ctx, k, &pr[prec_index("fp32")], d.dropout, 1);
    lowp_test_check(st == LOWP_OK, "fp32 %s runs (%d)", k->name, st);
    if (k->kind == LOWP_RK_GEMM && st == LOWP_OK) {
      /* naive product of the runner's own operands, in double: exact for integers in [-4, 4] */
      const float *a, *b, *c;
      size_t q, r, s, l, bad = 0;
      lowp_amp_cpu_gemm_buffers(ctx, &a, &b, &c);
      for (q = 0; q < k->count; q++)
        for (r = 0; r < k->m; r++)
          for (s = 0; s < k->n; s++) {
            double x = 0;
            for (l = 0; l < k->k; l++) {
              double av = a[q * k->m * k->k + (k->ta ? l * k->m + r : r * k->k + l)];
              double bv = b[q * k->k * k->n + (k->tb ? s * k->k + l : l * k->n + s)];
              x += av * bv;
            }
            if ((double)c[q * k->m * k->n + r * k->n + s] != x) bad++;
          }
      lowp_test_check(bad == 0, "fp32 %s (%zu x %zu x %zu x %zu, ta %d tb %d): cblas_sgemm equals the naive product "
                      "(%zu entries differ)", k->name, k->count, k->m, k->n, k->k, k->ta, k->tb, bad);
    }
  }
  for (i = 0; i < nk; i++) {
    const lowp_rkernel_t *k = &ks[i];
    p = prec_index("bf16");
    st = lowp_amp_cpu_run(ctx, k, &pr[p], d.dropout, 1);
    lowp_test_check(st == LOWP_OK, "bf16 %s runs (%d)", k->name, st);
    if (k->kind == LOWP_RK_GEMM && st == LOWP_OK) {
      double worst;
      int eq;
      st = lowp_amp_cpu_gemm_check(&worst, &eq, ctx, k, &pr[p], 1 << 20);
      lowp_test_check(st == LOWP_OK && eq && worst == 0, "bf16 %s (%s) equals the exact product", k->name,
                      lowp_amp_cpu_gemm_engine(&pr[p]));
    }
  }
  lowp_test_check(lowp_amp_cpu_run(ctx, &ks[0], &pr[prec_index("tf32")], 0, 1) == LOWP_EUNSUPPORTED,
                  "tf32 on the CPU runner: unsupported");
  lowp_amp_cpu_free(&ctx);
  lowp_test_check(ctx == NULL, "free resets the pointer");
  {
    char name[128];
    int g = lowp_amp_gpu_device(name, sizeof name);
    lowp_test_check(g == LOWP_OK || g == LOWP_EUNSUPPORTED, "lowp_amp_gpu_device: OK or unsupported (%d)", g);
  }
}

static int same_file(const char *x, const char *y) {
  FILE *a = fopen(x, "rb"), *b = fopen(y, "rb");
  int ca, cb, same = a && b;
  while (same) {
    ca = fgetc(a);
    cb = fgetc(b);
    if (ca != cb) same = 0;
    if (ca == EOF || cb == EOF) break;
  }
  if (a) fclose(a);
  if (b) fclose(b);
  return same;
}

static cJSON *read_json(const char *path) {
  FILE *f = fopen(path, "rb");
  char *buf;
  long n;
  cJSON *j;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)n + 1);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); fclose(f); return NULL; }
  buf[n] = '\0';
  fclose(f);
  j = cJSON_Parse(buf);
  free(buf);
  return j;
}

static double num(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* GEMMs of kernels.csv with bound "memory" for device and precision */
static int csv_membound(const char *path, const char *dev, const char *prec, int *gemms) {
  FILE *f = fopen(path, "r");
  char line[1024];
  int n = 0;
  *gemms = 0;
  if (!f) return -1;
  while (fgets(line, sizeof line, f)) {
    char *tok[16], *save = NULL, *t;
    int k = 0;
    for (t = strtok_r(line, ",\n", &save); t && k < 16; t = strtok_r(NULL, ",\n", &save)) tok[k++] = t;
    if (k < 13 || strcmp(tok[0], dev) || strcmp(tok[1], prec) || strcmp(tok[4], "gemm")) continue;
    (*gemms)++;
    n += !strcmp(tok[12], "memory");
  }
  fclose(f);
  return n;
}

/* results.json and kernels.csv of a model-only run (dir) */
static void model_outputs(const char *dir) {
  char path[4400];
  cJSON *j, *e;
  int seen = 0, bad = 0, tf32_v100 = 0;
  snprintf(path, sizeof path, "%s/results.json", dir);
  j = read_json(path);
  lowp_test_check(j != NULL, "results.json parses");
  if (!j) return;
  {
    cJSON *res = cJSON_DetachItemFromObjectCaseSensitive(j, "results"); /* cmd_run.c: the experiment's own keys */
    cJSON_Delete(j);
    j = res;
  }
  lowp_test_check(j != NULL, "results.json has results");
  if (!j) return;
  lowp_test_check(strstr(str(j, "prediction_basis"), "100% of the datasheet peaks") != NULL,
                  "results.json says the roofline is a prediction at 100%% of the datasheet peaks");
  snprintf(path, sizeof path, "%s/kernels.csv", dir);
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "memory_bound_gemms")) {
    int gemms, n = csv_membound(path, str(e, "device"), str(e, "precision"), &gemms);
    seen++;
    if (n != (int)num(e, "memory_bound") || gemms != (int)num(e, "gemms") ||
        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(e, "kernels")) != n) {
      bad++;
      lowp_test_check(0, "memory_bound_gemms %s %s: %g of %g, kernels.csv %d of %d", str(e, "device"),
                      str(e, "precision"), num(e, "memory_bound"), num(e, "gemms"), n, gemms);
    }
  }
  lowp_test_check(seen == 12 && !bad, "memory_bound_gemms: 3 devices x 4 precisions, each as kernels.csv counts (%d)", seen);
  seen = bad = 0;
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "predicted_speedup")) {
    double lo = num(e, "speedup_eff_lo"), hi = num(e, "speedup_eff_hi");
    seen++;
    bad += !(lo > 0 && lo <= hi && num(e, "speedup") > 0);
    if (!strcmp(str(e, "device"), "v100") && !strcmp(str(e, "precision"), "tf32")) tf32_v100 = lo == 1 && hi == 1;
  }
  lowp_test_check(seen == 8 && !bad, "predicted_speedup: 8 entries (no V100 bf16: no unit), each band 0 < lo <= hi "
                  "(%d)", seen);
  lowp_test_check(tf32_v100, "tf32 on V100 (no tensor cores, fp32 storage): the band is exactly [1, 1]");
  /* the autocast policy (experiments/amp_speedup.c policy_model): bf16 on V100 not modelled (no bf16 unit);
     every modelled 16-bit speedup above 1 and below the pure 16-bit one (fp32 softmax and layer norm, the casts);
     fp32 is the baseline (x1) */
  {
    cJSON *q;
    int nq = 0, qbad = 0, v100bf16 = 0;
    cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(j, "predicted_speedup_autocast")) {
      const cJSON *sp = cJSON_GetObjectItemCaseSensitive(q, "speedup");
      const char *dv = str(q, "device"), *pr = str(q, "precision");
      nq++;
      if (!strcmp(dv, "v100") && !strcmp(pr, "bf16")) { v100bf16 = cJSON_IsNull(sp); continue; }
      if (!strcmp(pr, "fp32")) { qbad += !(cJSON_IsNumber(sp) && sp->valuedouble == 1); continue; }
      if (strcmp(pr, "fp16") && strcmp(pr, "bf16")) continue;
      cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "predicted_speedup"))
        if (!strcmp(str(e, "device"), dv) && !strcmp(str(e, "precision"), pr))
          qbad += !(cJSON_IsNumber(sp) && sp->valuedouble > 1 && sp->valuedouble < num(e, "speedup"));
    }
    lowp_test_check(nq == 12 && !qbad && v100bf16, "predicted_speedup_autocast: 12 entries, fp32 x1, 16-bit "
                    "between 1 and the pure 16-bit speedup, V100 bf16 not modelled (%d, %d bad)", nq, qbad);
  }
  /* policy_ops.csv: the policy's ops (casts, dropout, mask, transposes, optimizer among them), summed per device
     and precision, give the policy's step (step_ms) and fp32's sum over a precision's its headline speedup */
  {
    char pp[4400], line[1024];
    FILE *f;
    double sum[8][LOWP_RPREC_MAX];
    char dev[8][16], prec[LOWP_RPREC_MAX][16];
    int nd = 0, npr = 0, rows = 0, cls = 0, sm32 = 0, cmp = 0, pbad = 0, di, pi;
    cJSON *q;
    memset(sum, 0, sizeof sum);
    snprintf(pp, sizeof pp, "%s/policy_ops.csv", dir);
    f = fopen(pp, "r");
    lowp_test_check(f != NULL, "policy_ops.csv is written");
    while (f && fgets(line, sizeof line, f)) {
      char d[16], p[16], op[64], ps[8], c[16], dt[32];
      double fl, by, tc, tm, t;
      if (sscanf(line, "%15[^,],%15[^,],%63[^,],%7[^,],%15[^,],%31[^,],%lf,%lf,%lf,%lf,%lf", d, p, op, ps, c, dt, &fl,
                 &by, &tc, &tm, &t) != 11)
        continue;
      rows++;
      for (di = 0; di < nd && strcmp(dev[di], d); di++) {}
      if (di == nd && nd < 8) snprintf(dev[nd++], sizeof dev[0], "%s", d);
      for (pi = 0; pi < npr && strcmp(prec[pi], p); pi++) {}
      if (pi == npr && npr < LOWP_RPREC_MAX) snprintf(prec[npr++], sizeof prec[0], "%s", p);
      if (di < 8 && pi < LOWP_RPREC_MAX) sum[di][pi] += t;
      pbad += !(t == fmax(tc, tm) && t >= 0);
      if (!strcmp(d, "a100") && !strcmp(p, "fp16"))
        cls |= (!strcmp(c, "cast")) | (!strcmp(c, "dropout") << 1) | (!strcmp(c, "mask") << 2) |
               (!strcmp(c, "transpose") << 3) | (!strcmp(c, "optimizer") << 4);
      sm32 += !strcmp(d, "a100") && !strcmp(p, "fp16") && !strncmp(op, "softmax", 7) && !strcmp(dt, "fp32");
    }
    if (f) fclose(f);
    cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(j, "predicted_speedup_autocast")) {
      const cJSON *sp = cJSON_GetObjectItemCaseSensitive(q, "speedup");
      int d0 = -1, p0 = -1, p1 = -1;
      if (!cJSON_IsNumber(sp)) continue;
      for (di = 0; di < nd; di++) d0 = strcmp(dev[di], str(q, "device")) ? d0 : di;
      for (pi = 0; pi < npr; pi++) p0 = strcmp(prec[pi], "fp32") ? p0 : pi;
      for (pi = 0; pi < npr; pi++) p1 = strcmp(prec[pi], str(q, "precision")) ? p1 : pi;
      if (d0 < 0 || p0 < 0 || p1 < 0 || !(sum[d0][p1] > 0)) { pbad++; continue; }
      cmp++;
      pbad += fabs(sum[d0][p0] / sum[d0][p1] / sp->valuedouble - 1) > 1e-6;
      pbad += fabs(1e3 * sum[d0][p1] / num(q, "step_ms") - 1) > 1e-6;
    }
    lowp_test_check(rows > 100 && cmp == 11 && !pbad, "policy_ops.csv: %d rows; summed per device and precision "
                    "they give the 11 modelled steps and headline speedups (%d compared, %d bad)", rows, cmp, pbad);
    lowp_test_check(cls == 31 && sm32 == 2, "policy_ops.csv: cast, dropout, mask, transpose and optimizer ops; "
                    "softmax fwd and bwd in fp32 under fp16 autocast (classes %d, %d fp32 softmax)", cls, sm32);
  }
  /* the answer opens with the policy (the index shows the first sentence beside the key numbers read from the
     policy's table): its first sentence, up to ". " outside parentheses, names every modelled 16-bit policy
     speedup as "DEVICE PRECISION xS.SS" and the 16-bit rows not modelled; the pure 16-bit figures come later */
  {
    static char first[4096];
    const char *ans = str(j, "answer");
    size_t i;
    int depth = 0, nq = 0, missing = 0;
    cJSON *q;
    for (i = 0; ans[i] && i + 1 < sizeof first; i++) {
      if (ans[i] == '(') depth++;
      else if (ans[i] == ')' && depth > 0) depth--;
      else if (!depth && ans[i] == '.' && ans[i + 1] == ' ') break;
      first[i] = ans[i];
    }
    first[i] = '\0';
    cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(j, "predicted_speedup_autocast")) {
      const cJSON *sp = cJSON_GetObjectItemCaseSensitive(q, "speedup");
      char want[128];
      if (!strcmp(str(q, "precision"), "fp32") || !strcmp(str(q, "precision"), "tf32")) continue;
      nq++;
      if (cJSON_IsNumber(sp)) snprintf(want, sizeof want, "%s %s x%.2f", str(q, "device"), str(q, "precision"), sp->valuedouble);
      else snprintf(want, sizeof want, "not modelled: ");
      if (!strstr(first, want)) { missing++; lowp_test_check(0, "first sentence lacks '%s': %s", want, first); }
    }
    lowp_test_check(nq == 6 && !missing && strstr(first, "autocast policy") && strstr(first, "A prediction, not a measurement") &&
                    !strstr(first, "pure 16-bit: an upper bound"),
                    "the answer's first sentence is the autocast policy's prediction, every 16-bit row in it (%d)", nq);
  }
  e = cJSON_GetObjectItemCaseSensitive(j, "gemm_efficiency_band");
  lowp_test_check(num(e, "low") > 0 && num(e, "low") < num(e, "high") && num(e, "high") < 1 &&
                  strstr(str(e, "sources"), "doi:") != NULL, "gemm_efficiency_band: 0 < low < high < 1, with sources");
  cJSON_Delete(j);
}

/* cpu_kernels.csv and timing.json of a CPU run (dir): structure, not times */
static void cpu_outputs(const char *dir) {
  char path[4400], line[1024];
  FILE *f;
  int rows = 0, bad = 0;
  cJSON *j, *c;
  snprintf(path, sizeof path, "%s/cpu_kernels.csv", dir);
  f = fopen(path, "r");
  lowp_test_check(f != NULL, "cpu_kernels.csv opens");
  if (!f) return;
  if (!fgets(line, sizeof line, f) || strncmp(line, "precision,kernel,kind,flops,bytes_model,median_s,fastest_s,slowest_s,"
                                                   "gflops,gbps,roof_gflops,roof_gbps,predicted_s,", 97))
    lowp_test_check(0, "cpu_kernels.csv header: %s", line);
  while (fgets(line, sizeof line, f)) {
    double med, fast, slow, gf, gb, rgf, rgb, pred;
    char kern[64];
    if (sscanf(line, "fp32,%63[^,],%*[^,],%*g,%*g,%lg,%lg,%lg,%lg,%lg,%lg,%lg,%lg", kern, &med, &fast, &slow, &gf, &gb,
               &rgf, &rgb, &pred) != 9) {
      bad++;
      continue;
    }
    rows++;
    if (!(fast <= med && med <= slow && pred <= fast && gf <= rgf && gb <= rgb && pred > 0)) {
      bad++;
      lowp_test_check(0, "%s: fastest %g median %g slowest %g predicted %g; %g <= %g GFLOP/s, %g <= %g GB/s", kern,
                      fast, med, slow, pred, gf, rgf, gb, rgb);
    }
  }
  fclose(f);
  lowp_test_check(rows > 20 && !bad, "cpu_kernels.csv: %d kernels, each fastest <= median <= slowest, roofline time "
                  "<= fastest, rates <= roofs", rows);
  snprintf(path, sizeof path, "%s/timing.json", dir);
  j = read_json(path);
  c = j ? cJSON_GetObjectItemCaseSensitive(j, "cpu") : NULL;
  lowp_test_check(c != NULL, "timing.json has a cpu object");
  if (c) {
    lowp_test_check(num(c, "roof_gflops") >= num(c, "sgemm_square_gflops") && num(c, "sgemm_square_gflops") > 0,
                    "the GEMM roof is at least the measured sgemm rate");
    lowp_test_check(num(c, "roof_gbps") >= num(c, "stream_triad_gbps") && num(c, "roof_gbps") >= num(c, "stream_triad_small_gbps") &&
                    num(c, "stream_triad_gbps") > 0, "the memory roof is at least both triads");
    lowp_test_check(num(c, "step_fastest_s") <= num(c, "step_median_s") && num(c, "step_median_s") <= num(c, "step_slowest_s") &&
                    num(c, "step_predicted_s") <= num(c, "step_fastest_s"),
                    "step: roofline <= fastest <= median <= slowest");
    lowp_test_check(cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(c, "cpu_has_avx512_bf16")) &&
                    cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(c, "cpu_has_amx_bf16")) &&
                    cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(c, "cpu_has_avx512_fp16")),
                    "timing.json says which 16-bit units the CPU has");
    lowp_test_check(strstr(str(c, "answer"), "16-bit units of this CPU") != NULL, "the CPU answer says it too");
    { /* the bf16/fp32 ratio of the units' rates: measured (validated chains) where the CPU has AVX512_BF16,
         reported absent otherwise; no speed is asserted (docs/style.md B8) */
      const cJSON *has = cJSON_GetObjectItemCaseSensitive(c, "cpu_has_avx512_bf16");
      const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(c, "bf16_fp32_rate_ratio");
      if (cJSON_IsTrue(has))
        lowp_test_check(cJSON_IsNumber(ratio) && ratio->valuedouble > 0 && num(c, "bf16_vdpbf16ps_gflops") > 0 &&
                        num(c, "fp32_fma_gflops") > 0 && strstr(str(c, "answer"), "Measured bf16/fp32 ratio"),
                        "AVX512_BF16: the bf16/fp32 rate ratio is measured (%g) and in the answer",
                        cJSON_IsNumber(ratio) ? ratio->valuedouble : -1.0);
      else
        lowp_test_check(cJSON_IsNull(ratio) && strstr(str(c, "answer"), "absent (no AVX512_BF16 unit)"),
                        "no AVX512_BF16: the bf16/fp32 rate ratio is reported absent");
    }
  }
  cJSON_Delete(j);
}

static void cli(void) {
  char dir[] = "/tmp/tamp_speedup.XXXXXX", cmd[4400], p1[4300], p2[4300];
  static const char *const model_files[] = {"results.json", "summary.md", "kernels.csv", "speedup.csv", "speedup.png",
                                            "speedup.svg", "breakdown.png", "timing.json", NULL};
  static const char *const cpu_files[] = {"cpu_kernels.csv", "timing.json", NULL};
  lowp_test_make_tmpdir(dir);
  snprintf(cmd, sizeof cmd, "run amp-speedup --measure=none --out '%s/m1'", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 0, "model-only run exits 0");
  snprintf(cmd, sizeof cmd, "run amp-speedup --measure=none --out '%s/m2'", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 0, "model-only run again exits 0");
  snprintf(p1, sizeof p1, "%s/m1", dir);
  lowp_test_check(lowp_test_files_exist(p1, model_files), "the model's files are written");
  snprintf(p1, sizeof p1, "%s/m1/results.json", dir);
  snprintf(p2, sizeof p2, "%s/m2/results.json", dir);
  lowp_test_check(same_file(p1, p2), "results.json is byte-identical between runs");
  snprintf(p1, sizeof p1, "%s/m1/kernels.csv", dir);
  snprintf(p2, sizeof p2, "%s/m2/kernels.csv", dir);
  lowp_test_check(same_file(p1, p2), "kernels.csv is byte-identical between runs");
  snprintf(p1, sizeof p1, "%s/m1", dir);
  model_outputs(p1);
  snprintf(cmd, sizeof cmd, "run amp-speedup --measure=cpu --cpu_seq=8 --d_model=64 --heads=4 --cpu_reps=1 "
           "--stream_mb=4 --roof_n=64 --out '%s/c1'", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 0, "tiny CPU measurement exits 0 (its GEMMs validated)");
  snprintf(p1, sizeof p1, "%s/c1", dir);
  lowp_test_check(lowp_test_files_exist(p1, cpu_files), "the CPU measurement's files are written");
  cpu_outputs(p1);
  snprintf(cmd, sizeof cmd, "run amp-speedup --heads=3 --out '%s/bad'", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 2, "heads not dividing d_model exits 2");
  snprintf(p1, sizeof p1, "%s", dir);
  lowp_test_check(!lowp_test_file_exists(p1, "bad"), "nothing written after a bad value");
  lowp_test_check(lowp_test_run_lowp("run amp-speedup --help") == 0, "--help exits 0");
  lowp_test_remove_dir(dir);
}

int main(void) {
  lowp_test_start("tamp_speedup");
  hand_roofline();
  flop_counts();
  split();
  cpu_runner();
  cli();
  return lowp_test_end();
}
