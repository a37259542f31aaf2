/* tprobe -- the tensor-core probes recover every preset's parameters from its outputs */

/*
 * Build: cmake --build build --target tprobe; run: build/tprobe.
 *
 * Oracle: the presets' own parameters (lib/model/tc_model.c). For every
 * preset, every input format it supports (fp16, bf16, tf32, E4M3, E5M2) and
 * both outputs (fp32, fp16), lowp_probe_run is given the model as its only
 * view of the device (a callback), and what it infers must equal the
 * parameters: b, interleave, F, alignment cut, c added late or in the
 * block, its rounding, the block result's fraction bits and rounding. The
 * probes also meet parameter strings the presets do not use (a sticky bit,
 * rne and rto alignment, rup/rdn/rna output, promotion every 128 or 256
 * products, b = 64), so a probe that always answered a preset's value would
 * fail here. Exact products, subnormal inputs and outputs must read as
 * kept (the model keeps them).
 */

#include "gpu/gpu_kernels.h"
#include "model/probe.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* a device that reads the zero questions the other way: a zero result is
   +0; with c = 0 the alignment is at least the output's emin; with
   zero_aligns (MMA-Sim's reading, not the H200's) a zero product with a
   nonzero factor also takes part in the alignment at emin(in) + e(factor).
   Built on lowp's model with IEEE zeros (zsum=ieee, zrnd=ieee,
   c0align=skip), independently of the model's zero parameters: the moved
   alignment by a cancelling pair of products in empty slots of the same
   block, the sign by rewriting a zero result. */
typedef struct {
  lowp_tc_model_t m;
  int zero_aligns;
} sim_t;

static void cancel_pair(double *A, double *B, size_t n, size_t from, int e) {
  size_t j, k = 0;
  for (j = from + 1; j < n && k < 2; j++)
    if (A[j] == 0 && B[j] == 0) {
      A[j] = k ? -ldexp(1.0, e / 2) : ldexp(1.0, e / 2);
      B[j] = ldexp(1.0, e - e / 2);
      k++;
    }
}

static int sim_dot(void *ctx, double *d, const double *a, const double *b, size_t n, double c,
                   const lowp_format_t *in, const lowp_format_t *out) {
  sim_t *x = ctx;
  double A[LOWP_PROBE_KMAX], B[LOWP_PROBE_KMAX], big = 0;
  size_t i;
  int st;
  memcpy(A, a, n * sizeof *A);
  memcpy(B, b, n * sizeof *B);
  for (i = 0; i < n; i++) {
    if (fabs(a[i] * b[i]) > big) big = fabs(a[i] * b[i]);
    if (x->zero_aligns && a[i] == 0 && b[i] != 0 && ilogb(b[i]) + in->emin > ilogb(1.0) - 40) {
      cancel_pair(A, B, n, i, ilogb(b[i]) + in->emin);
      break;
    }
  }
  if (c == 0 && big > 0 && big < ldexp(1.0, out->emin)) cancel_pair(A, B, n, 0, out->emin);
  st = lowp_tc_dot(d, A, 1, B, 1, n, c, &x->m, in, out);
  if (st == LOWP_OK && *d == 0) *d = 0.0;
  return st;
}

/* probe dev (the model m, or sim_dot on x) for in -> out into r */
static int run_zero_probe(lowp_probe_t *r, lowp_tc_model_t *m, sim_t *x, const lowp_format_t *in,
                          const lowp_format_t *out) {
  lowp_probe_dev_t dev;
  dev.dot = x ? sim_dot : lowp_probe_model_dot;
  dev.ctx = x ? (void *)x : (void *)m;
  dev.kmax = 128;
  dev.promote = 0;
  return lowp_probe_run(r, &dev, in, out);
}

/* The zero probes read each model's zero parameters (a100: IEEE 754's
   reading; h100: the H200's, +0 and c = 0 aligned at emin), and a device
   built to answer as the H200 did (lowp probe, docs/gpu.md) matches h100
   and not a100; one that also lets a zero product move the alignment
   (MMA-Sim's reading) still differs from h100, on (c). */
static void zeros(void) {
  static const struct {
    const char *spec;
    const lowp_format_t *in, *out;
  } cs[] = {{"a100", &LOWP_FMT_BF16, &LOWP_FMT_FP32}, {"h100", &LOWP_FMT_TF32, &LOWP_FMT_FP32},
            {"h100", &LOWP_FMT_BF16, &LOWP_FMT_FP32}, {"a100", &LOWP_FMT_FP16, &LOWP_FMT_FP16},
            {"h100", &LOWP_FMT_FP16, &LOWP_FMT_FP16}, {"h100", &LOWP_FMT_E5M2, &LOWP_FMT_FP16}};
  size_t k;
  for (k = 0; k < sizeof cs / sizeof cs[0]; k++) {
    sim_t x;
    lowp_tc_model_t pm;
    lowp_probe_t r, rs;
    char err[256], why[512], base[64];
    int late, fp32 = cs[k].out == &LOWP_FMT_FP32, nd, st, za, zb, zd;
    const char *name = cs[k].spec, *io_in = cs[k].in->name, *io_out = cs[k].out->name;
    snprintf(base, sizeof base, "%s,zsum=ieee,zrnd=ieee,c0align=skip", name);
    if (!lowp_test_check(lowp_tc_model_get(&pm, name, cs[k].in, cs[k].out, err, sizeof err) == LOWP_OK &&
                             lowp_tc_model_get(&x.m, base, cs[k].in, cs[k].out, err, sizeof err) == LOWP_OK,
                         "%s", err))
      continue;
    late = pm.bfma.late_c;
    za = late || pm.bfma.zsum_pos ? 1 : -1;
    zb = late || pm.bfma.zrnd_pos ? 1 : -1;
    zd = pm.bfma.c0_emin ? 1 : -1;
    lowp_test_check(!strcmp(name, "h100") ? pm.bfma.zsum_pos && pm.bfma.zrnd_pos && pm.bfma.c0_emin
                                          : !pm.bfma.zsum_pos && !pm.bfma.zrnd_pos && !pm.bfma.c0_emin,
                    "%s %s->%s: zero parameters %d %d %d", name, io_in, io_out, pm.bfma.zsum_pos,
                    pm.bfma.zrnd_pos, pm.bfma.c0_emin);
    /* lowp's model reads as its parameters say */
    st = run_zero_probe(&r, &pm, NULL, cs[k].in, cs[k].out);
    nd = st == LOWP_OK ? lowp_probe_compare(&r, &pm, cs[k].out, why, sizeof why) : -1;
    lowp_test_check(st == LOWP_OK && nd == 0 && r.zero_neg == za &&
                        (fp32 ? r.zero_align == -1 && r.zero_floor == zd : r.zero_round == zb),
                    "%s %s->%s: zero probes on lowp's model: a %d b %d c %d d %d (%s)", name, io_in, io_out,
                    r.zero_neg, r.zero_round, r.zero_align, r.zero_floor, why);
    /* the H200's answers: +0, +0, a zero product not aligned, c = 0 at emin */
    x.zero_aligns = 0;
    st = run_zero_probe(&rs, NULL, &x, cs[k].in, cs[k].out);
    lowp_test_check(st == LOWP_OK && rs.zero_neg == 1 &&
                        (fp32 ? rs.zero_align == -1 && rs.zero_floor == 1 : rs.zero_round == 1),
                    "%s %s->%s: zero probes on the H200's reading: a %d b %d c %d d %d", name, io_in, io_out,
                    rs.zero_neg, rs.zero_round, rs.zero_align, rs.zero_floor);
    nd = lowp_probe_compare(&rs, &pm, cs[k].out, why, sizeof why);
    if (!strcmp(name, "h100"))
      lowp_test_check(nd == 0, "%s %s->%s: the H200's reading differs from h100 (%s; inferred %s)", name, io_in,
                      io_out, why, rs.model);
    else
      lowp_test_check(nd > 0 && strstr(why, "zero (a)") != NULL &&
                          (fp32 ? strstr(why, "zero (d)") != NULL : strstr(why, "zero (b)") != NULL),
                      "%s %s->%s: the H200's reading not reported against IEEE zeros (%s)", name, io_in, io_out,
                      why);
    lowp_test_check(strstr(rs.model, "zsum=pos") && (fp32 || strstr(rs.model, "zrnd=pos")) &&
                        (!fp32 || strstr(rs.model, "c0align=emin")),
                    "%s %s->%s: inferred %s", name, io_in, io_out, rs.model);
    /* the model of the IEEE base differs from the H200's reading unless c comes late */
    nd = lowp_probe_compare(&rs, &x.m, cs[k].out, why, sizeof why);
    lowp_test_check(late ? strstr(why, "zero (a)") == NULL : nd > 0 && strstr(why, "zero (a)") != NULL,
                    "%s %s->%s: the H200's reading against IEEE zeros %s reported (%s)", name, io_in, io_out,
                    late ? "wrongly" : "not", why);
    /* MMA-Sim's reading: a zero product moves the alignment; h100 says no */
    x.zero_aligns = 1;
    st = run_zero_probe(&rs, NULL, &x, cs[k].in, cs[k].out);
    nd = st == LOWP_OK ? lowp_probe_compare(&rs, &pm, cs[k].out, why, sizeof why) : -1;
    if (fp32)
      lowp_test_check(rs.zero_align == 1 && nd > 0 && strstr(why, "zero (c)") != NULL,
                      "%s %s->%s: a zero product moving the alignment not reported (c %d: %s)", name, io_in,
                      io_out, rs.zero_align, why);
  }
}

static const lowp_format_t *const ins[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_TF32,
                                           &LOWP_FMT_E4M3, &LOWP_FMT_E5M2};
static const lowp_format_t *const outs[] = {&LOWP_FMT_FP32, &LOWP_FMT_FP16};

static int probe_spec(const char *spec, const lowp_format_t *in, const lowp_format_t *out,
                      int promote, int *unsupported) {
  lowp_tc_model_t m;
  lowp_probe_dev_t dev;
  lowp_probe_t r;
  char err[256], why[512];
  int st = lowp_tc_model_get(&m, spec, in, out, err, sizeof err);
  *unsupported = st == LOWP_EUNSUPPORTED;
  if (st != LOWP_OK) return st == LOWP_EUNSUPPORTED ? 0 : -1;
  dev.dot = lowp_probe_model_dot;
  dev.ctx = &m;
  dev.kmax = LOWP_PROBE_KMAX;
  dev.promote = promote;
  st = lowp_probe_run(&r, &dev, in, out);
  if (!lowp_test_check(st == LOWP_OK, "%s %s->%s: probe status %d", spec, in->name, out->name, st))
    return -1;
  lowp_test_check(lowp_probe_compare(&r, &m, out, why, sizeof why) == 0, "%s %s->%s: %s (inferred %s)",
                  spec, in->name, out->name, why, r.model);
  /* every structural item was determined (none skipped) */
  lowp_test_check(r.b > 0 && !r.b_atleast && r.F > 0 && !r.F_atleast && r.align_ok && r.out_ok &&
                      (r.c_ok || m.promote) && r.late_c >= 0 && r.per_block,
                  "%s %s->%s: undetermined items (b %d%s, F %d%s, align %d, out %d, c %d, late %d)", spec,
                  in->name, out->name, r.b, r.b_atleast ? "+" : "", r.F, r.F_atleast ? "+" : "",
                  r.align_ok, r.out_ok, r.c_ok, r.late_c);
  if (out->precision >= LOWP_FMT_FP32.precision)
    lowp_test_check(r.products_exact == 1, "%s %s: products not exact", spec, in->name);
  lowp_test_check(r.sub_in == 1 && r.sub_out == 1, "%s %s->%s: subnormals %d %d", spec, in->name,
                  out->name, r.sub_in, r.sub_out);
  /* truncating blocks are monotone when the step of a product (2^(1-t) of
     it) exceeds what the other b - 1 terms can lose, (b - 1) 2^-F: true of
     every model probed here, so no decrease may be reported */
  if ((double)(r.b - 1) * ldexp(1.0, -r.F) < ldexp(1.0, 1 - in->precision))
    lowp_test_check(r.mono_trials >= 300 && r.mono_decreases == 0, "%s %s->%s: %ld of %ld trials decreased",
                    spec, in->name, out->name, r.mono_decreases, r.mono_trials);
  if (promote) lowp_test_check(r.promote_probed, "%s %s->%s: promotion not probed", spec, in->name, out->name);
  return 1;
}

int main(void) {
  size_t p, i, o;
  int unsup, n, total = 0;
  lowp_test_start("tprobe");
  zeros();

  /* every preset x supported input x output */
  for (p = 0; p < lowp_tc_preset_count(); p++) {
    const char *name = lowp_tc_preset_at(p)->name;
    for (i = 0; i < sizeof ins / sizeof ins[0]; i++)
      for (o = 0; o < 2; o++) {
        n = probe_spec(name, ins[i], outs[o], 0, &unsup);
        if (n > 0) total++;
      }
  }
  printf("presets: %d preset x input x output combinations probed\n", total);
  lowp_test_check(total >= 40, "only %d combinations probed", total);

  /* B200 fp8: the fixed model (blocks rtz, c rne) and the earlier one
     (blocks rne) read differently, with the values of the fix */
  {
    static const char *const specs[2] = {"b200", "b200,out=rne"};
    static const lowp_rounding_t want[2] = {LOWP_RND_TZ, LOWP_RND_NE};
    int k;
    for (k = 0; k < 2; k++) {
      lowp_tc_model_t m;
      lowp_probe_dev_t dev;
      lowp_probe_t r;
      char err[256];
      lowp_test_check(lowp_tc_model_get(&m, specs[k], &LOWP_FMT_E5M2, &LOWP_FMT_FP32, err, sizeof err) ==
                          LOWP_OK, "%s", err);
      dev.dot = lowp_probe_model_dot;
      dev.ctx = &m;
      dev.kmax = 128;
      dev.promote = 0;
      lowp_test_check(lowp_probe_run(&r, &dev, &LOWP_FMT_E5M2, &LOWP_FMT_FP32) == LOWP_OK, "probe %s", specs[k]);
      lowp_test_check(r.b == 16 && r.interleave == 2 && r.F == 25 && r.late_c == 1 && r.out_ok &&
                          r.out_rnd == want[k] && r.c_ok && r.c_rnd == LOWP_RND_NE &&
                          r.align == LOWP_RND_TZ && r.out_frac == 0,
                      "%s e5m2->fp32: inferred %s", specs[k], r.model);
    }
  }

  /* lowp probe on a Hopper or B200 GPU probes fp8 through mma.sync, which
     sm_90 and sm_100 run as two fp16 HMMAs and an FADD of c (tests/tsass.c).
     A device that computes that datapath with fp32 output must match
     lowp_gpu_mma_model (what lowp probe compares a GPU with) and differ from
     the h100 preset's fp32 fp8 datapath (wgmma's 13-bit one) */
  {
    static const char *const pres[2] = {"h100", "b200"};
    int k;
    for (k = 0; k < 2; k++) {
      lowp_tc_model_t dm, mm, wg;
      lowp_probe_dev_t dev;
      lowp_probe_t r;
      char err[256], why[512];
      lowp_test_check(lowp_tc_model_get(&dm, pres[k], &LOWP_FMT_E4M3, &LOWP_FMT_FP16, err, sizeof err) == LOWP_OK &&
                          lowp_gpu_mma_model(&mm, pres[k], &LOWP_FMT_E4M3, &LOWP_FMT_FP32, err, sizeof err) == LOWP_OK &&
                          lowp_tc_model_get(&wg, pres[k], &LOWP_FMT_E4M3, &LOWP_FMT_FP32, err, sizeof err) == LOWP_OK,
                      "%s", err);
      dev.dot = lowp_probe_model_dot;
      dev.ctx = &dm;
      dev.kmax = 128;
      dev.promote = 0;
      lowp_test_check(lowp_probe_run(&r, &dev, &LOWP_FMT_E4M3, &LOWP_FMT_FP32) == LOWP_OK, "probe %s", pres[k]);
      lowp_test_check(r.b == 16 && r.interleave == 2 && r.F == 25 && r.late_c == 1 &&
                          lowp_probe_compare(&r, &mm, &LOWP_FMT_FP32, why, sizeof why) == 0,
                      "%s e4m3->fp32 through mma.sync: inferred %s, against lowp_gpu_mma_model: %s", pres[k],
                      r.model, why);
      if (k == 0)
        lowp_test_check(lowp_probe_compare(&r, &wg, &LOWP_FMT_FP32, why, sizeof why) != 0,
                        "h100: the mma.sync fp8 datapath reads as the wgmma one (%s)", r.model);
    }
  }

  /* a block of 16 with only 4 alignment bits is not monotone: the worst
     case (every other term one quantum, lost when the first product crosses
     a binade) must be found */
  {
    lowp_tc_model_t m;
    lowp_probe_dev_t dev;
    lowp_probe_t r;
    char err[256];
    lowp_test_check(lowp_tc_model_get(&m, "b=16,F=4", &LOWP_FMT_E5M2, &LOWP_FMT_FP32, err, sizeof err) == LOWP_OK,
                    "%s", err);
    dev.dot = lowp_probe_model_dot;
    dev.ctx = &m;
    dev.kmax = 128;
    dev.promote = 0;
    lowp_test_check(lowp_probe_run(&r, &dev, &LOWP_FMT_E5M2, &LOWP_FMT_FP32) == LOWP_OK && r.mono_decreases > 0 &&
                        r.mono_example[1] < r.mono_example[0],
                    "b=16,F=4: no decrease found (%ld of %ld)", r.mono_decreases, r.mono_trials);
  }

  /* parameters no preset uses: the probes must follow them too */
  {
    static const char *const specs[] = {
        "b=8,F=24,align=rne,out=rne",  "b=16,F=20,align=rto,out=rup", "b=4,F=22,sticky=1,out=rdn",
        "b=32,F=26,out=rna,out16=rtz", "b=64,F=23",                   "h100,promote=128",
        "a100,promote=256",            "b=16,F=25,latec=1,interleave=2,out=rtz,crnd=rup",
        "b=8,F=24,zsum=pos,zrnd=ieee,c0align=emin", "b=16,F=25,zsum=ieee,zrnd=pos,c0align=emin",
        "h100,zsum=pos,zrnd=pos,c0align=skip",     "a100,zsum=pos,zrnd=pos,c0align=emin"};
    size_t k;
    for (k = 0; k < sizeof specs / sizeof specs[0]; k++)
      for (i = 0; i < sizeof ins / sizeof ins[0]; i++)
        for (o = 0; o < 2; o++) {
          int pr = strstr(specs[k], "promote") != NULL && o == 0;
          n = probe_spec(specs[k], ins[i], outs[o], pr, &unsup);
          lowp_test_check(n > 0 || unsup, "%s %s->%s: not probed", specs[k], ins[i]->name, outs[o]->name);
        }
  }
  return lowp_test_end();
}
