/* lowp probe -- tensor-core feature probes on the GPU found, or on a model */

/*
 * Usage: lowp probe [--device gpu|model:SPEC] [--in LIST] [--out fp32|fp16|both]
 *                   [--json] [--capture DIR [--rows N] [--seed S]]
 * The probes are lib/model/probe.h; the GPU device kernels/cuda/probe.cu.
 * Exit status: 0 every probed datapath matches lowp's preset for the device;
 * 1 some item differs (printed); 2 bad usage or input, or no GPU when one is
 * needed (nothing is measured then, and --capture writes nothing).
 */

#include "cli.h"
#include "model/bsprobe.h"
#include "gpu/gemm_gpu.h"
#include "gpu/gpu_kernels.h"
#include "output.h"

#include "io/atomic.h"
#include "model/probe.h"
#include "model/tc.h"
#include "gpu/probe_gpu.h"
#include "status.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CMD "probe"

static const lowp_format_t *const all_in[] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_TF32,
                                              &LOWP_FMT_E4M3, &LOWP_FMT_E5M2};

/* ------------------------------------------------------ private helpers */

static void usage(FILE *out) {
  fprintf(out,
          "usage: lowp probe [--device gpu|model:SPEC] [options]\n"
          "\n"
          "Tensor-core feature probes (Fasi, Higham, Mikaitis & Pranesh 2021; Khattak &\n"
          "Mikaitis 2025): exact products, subnormal inputs and outputs, the block size\n"
          "and interleaving, the alignment bits F and how aligned terms are cut, one\n"
          "normalisation per block, whether c is added in the block or after it, the\n"
          "fraction bits of the block result (the fp8 accumulator), the rounding of the\n"
          "result and of the addition of c, monotonicity, (on a model) the fp32\n"
          "promotion interval, and four questions about zeros (docs/gpu.md: the sign\n"
          "of a zero sum, zsum, and of a sum rounded to zero, zrnd; whether a zero\n"
          "product or c = 0, c0align, takes part in the alignment). It prints what it\n"
          "measured, the model parameters that follow, and whether they match lowp's\n"
          "preset for the device.\n"
          "\n"
          "  --device D     gpu (the default: the first CUDA GPU; without one, lowp probe\n"
          "                 says so and exits 2), or model:SPEC, SPEC a preset (v100 a100\n"
          "                 a2 ada l40s h100 h200 b200) or parameters as in\n"
          "                 'lowp gemm --tc' (b=16,F=25,align=rtz,...), or a block-scaled\n"
          "                 model (model:b200,kind=mxf8f6f4, model:sm120,kind=mxf4nvf4,F=34):\n"
          "                 F and the group size (model/bsprobe.h)\n"
          "  --in LIST      input formats (default: all of fp16,bf16,tf32,e4m3,e5m2 the\n"
          "                 device has)\n"
          "  --out O        fp32, fp16 or both (default both; fp16 output for fp16 and\n"
          "                 fp8 inputs)\n"
          "  --json         machine-readable output with stable keys\n"
          "  --capture DIR  also write fresh tensor-core vectors (the layout of\n"
          "                 tests/data/tensor-core-vectors/README.md) into the folder DIR:\n"
          "                 DEVICE/FORMAT/{a,b,c,d}_DEVICE_*.txt, DEVICE the preset name in\n"
          "                 capitals (MODEL for parameters); replay them with\n"
          "                 'lowp run tensor-core-models --vectors=DIR'\n"
          "  --rows N       rows per captured file (default 1000, at most 100000)\n"
          "  --k K          captured rows of K products (rounded up to whole instructions,\n"
          "                 at most 1024): the device chains the instructions, each after\n"
          "                 the first adding the running sum as its C (default: one\n"
          "                 instruction, as the vendored rows)\n"
          "  --seed S       seed of the captured inputs (default 1)\n"
          "  --device-info  only say which GPU the CUDA runtime can use (name, compute\n"
          "                 capability), or its error, e.g. a driver too old for this\n"
          "                 CUDA (exit 2); tools/gpu.sh runs it first\n"
          "\n"
          "On a GPU the probes run mma.sync; each datapath is compared with that\n"
          "instruction's in the preset (fp8 on Hopper/Blackwell: the mma.sync one).\n"
          "\n"
          "Exit status: 0 all probed items match the preset, 1 an item differs, 2 bad\n"
          "usage or input, or no GPU for --device gpu.\n");
}


/* the preset of a GPU, by compute capability (NVIDIA's table); the probes
   run mma.sync, so Hopper's is h100mma (fp8 to fp32 through mma.sync, not
   the wgmma datapath of h100): --capture names its folder after it, and the
   replay (lowp run tensor-core-models --vectors) takes that preset */
static const char *preset_of_sm(int sm) {
  switch (sm) {
  case 70: return "v100";
  case 80: return "a100";
  case 86: return "a2";
  case 89: return "ada";
  case 90: return "h100mma";
  case 100: return "b200";
  default: return NULL;
  }
}

static int fp16_out_ok(const lowp_format_t *in) {
  return in->emax <= LOWP_FMT_FP16.emax; /* fp16 and fp8 inputs */
}

static uint64_t xs(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* a random value of f: sign, exponent in [elo, ehi], every significand bit */
static double rnd_val(uint64_t *s, const lowp_format_t *f, int elo, int ehi) {
  int p = f->precision > 24 ? 24 : f->precision;
  double m = 1 + ldexp((double)(xs(s) % (1ull << (p - 1))), 1 - p), v;
  int e = elo + (int)(xs(s) % (uint64_t)(ehi - elo + 1));
  v = ldexp(m, e) * ((xs(s) & 1) ? -1 : 1);
  lowp_round_f64(&v, v, f, NULL, LOWP_RND_NE);
  return v;
}

static uint32_t f32bits(double v) {
  float f = (float)v;
  uint32_t u;
  if (isnan(v)) return 0x7fffffffu;
  memcpy(&u, &f, sizeof u);
  return u;
}

static void put_bin(FILE *f, uint32_t u) {
  int i;
  for (i = 31; i >= 0; i--) fputc((u >> i) & 1 ? '1' : '0', f);
  fputc('\n', f);
}

typedef struct {
  int gpu;                 /* 1: the GPU */
  char spec[256];          /* model spec, or the preset for the GPU */
  char label[64];          /* folder name for --capture */
  lowp_tc_model_t m;       /* the model for the current in/out (model device) */
  int sm;
  lowp_probe_gpu_t *g;     /* the GPU session */
} dev_t_;

/* write one captured file set for in (both outputs where modelled) */
static void capture(const char *root, dev_t_ *dv, const lowp_format_t *in, const char *fmt, long rows,
                    uint64_t seed, long kchain, lowp_probe_dot_fn dot) {
  char dir[4400], path[4600];
  lowp_atomic_t w[5];
  const lowp_format_t *o16 = &LOWP_FMT_FP16, *o32 = &LOWP_FMT_FP32;
  lowp_tc_model_t m32, m16;
  int has16 = fp16_out_ok(in), k, K, nfiles;
  long r;
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  char err[256];
  static const char *const kinds[5] = {"a", "b", "c", "d", "d"};
  if (!dv->gpu) {
    if (lowp_tc_model_get(&m32, dv->spec, in, o32, err, sizeof err) != LOWP_OK) return;
    if (has16 && lowp_tc_model_get(&m16, dv->spec, in, o16, err, sizeof err) != LOWP_OK) has16 = 0;
    K = m32.bfma.b * (m32.bfma.interleave ? 2 : 1);
  } else {
    K = lowp_probe_gpu_k(in, o32, dv->sm);
    if (K == 0) return;
    if (has16 && lowp_probe_gpu_k(in, o16, dv->sm) == 0) has16 = 0;
  }
  if (lowp_format_width(in) <= 8 && K < 32) K = 32; /* the vendored fp8 rows: 32 */
  if (K < 4) K = 4;
  /* --k: rows of kchain products, rounded up to whole instructions (the device chains them, each after the
     first taking the running sum as its C: what a long GEMM does, and what one-instruction rows never show) */
  if (kchain > K) {
    long kc = (kchain + K - 1) / K * K;
    while (kc > LOWP_PROBE_KMAX) kc -= K;
    K = (int)kc;
  }
  snprintf(dir, sizeof dir, "%s/%s", root, dv->label);
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) lowp_cli_die(CMD, "cannot create %s", dir);
  snprintf(dir, sizeof dir, "%s/%s/%s", root, dv->label, fmt);
  if (mkdir(dir, 0777) != 0) lowp_cli_die(CMD, "cannot create %s", dir);
  nfiles = has16 ? 5 : 4;
  for (k = 0; k < nfiles; k++) {
    const char *suf = k < 2 ? fmt : k == 4 ? "fp16" : "fp32";
    snprintf(path, sizeof path, "%s/%s_%s_%s.txt", dir, kinds[k], dv->label, suf);
    if (lowp_atomic_open(&w[k], path) != LOWP_OK) {
      while (k-- > 0) lowp_atomic_abort(&w[k]);
      lowp_cli_die(CMD, "cannot write %s", path);
    }
  }
  for (r = 0; r < rows; r++) {
    double a[LOWP_PROBE_KMAX], b[LOWP_PROBE_KMAX], c, c16, d;
    int i, st;
    for (i = 0; i < K; i++) {
      a[i] = rnd_val(&s, in, -3, 1);
      b[i] = rnd_val(&s, in, -3, 1);
      fprintf(w[0].fp, "%08x ", f32bits(a[i]));
      fprintf(w[1].fp, "%08x ", f32bits(b[i]));
    }
    fputc('\n', w[0].fp);
    fputc('\n', w[1].fp);
    c = rnd_val(&s, &LOWP_FMT_FP32, -2, 1);
    put_bin(w[2].fp, f32bits(c));
    dv->m = m32;
    st = dot(dv->gpu ? (void *)dv->g : (void *)&dv->m, &d, a, b, (size_t)K, c, in, o32);
    if (st != LOWP_OK) lowp_cli_die(CMD, "capture %s: the device failed (%s)", fmt, lowp_status_str(st));
    put_bin(w[3].fp, f32bits(d));
    if (has16) {
      lowp_round_f64(&c16, c, o16, NULL, LOWP_RND_NE); /* as the replay: __float2half */
      dv->m = m16;
      st = dot(dv->gpu ? (void *)dv->g : (void *)&dv->m, &d, a, b, (size_t)K, c16, in, o16);
      if (st != LOWP_OK) lowp_cli_die(CMD, "capture %s: the device failed (%s)", fmt, lowp_status_str(st));
      put_bin(w[4].fp, f32bits(d));
    }
  }
  for (k = 0; k < nfiles; k++)
    if (lowp_atomic_commit(&w[k]) != LOWP_OK) {
      int j;
      for (j = k + 1; j < nfiles; j++) lowp_atomic_abort(&w[j]);
      lowp_cli_die(CMD, "cannot write the files of %s", dir);
    }
}

/* the vectors folder name of an input format (README: fp16 bf16 tf32 E4M3 E5M2) */
static const char *vec_name(const lowp_format_t *in) {
  static const char *const names[] = {"fp16", "bf16", "tf32", "E4M3", "E5M2"};
  size_t k;
  for (k = 0; k < 5; k++) {
    const lowp_format_t *f = lowp_tc_vectors_format(names[k]);
    if (f->precision == in->precision && f->emax == in->emax && f->emin == in->emin) return names[k];
  }
  return "fp16"; /* not reached: --in admits only these five */
}

static const char *yesno(int v, const char *yes, const char *no) {
  return v < 0 ? "not probed" : v ? yes : no;
}

/* --device-info: the GPU the CUDA runtime can use, or its error (exit 2):
   tools/gpu.sh runs it so that a driver too old for this CUDA fails loudly
   instead of every GPU test skipping */
static int device_info(void) {
  char why[256], name[256];
  int n = lowp_cuda_runtime_status(why, sizeof why), sm = 0;
  if (n <= 0) lowp_cli_die(CMD, "the CUDA runtime can use no GPU: %s", n < 0 ? why : "it counts none");
  if (!lowp_probe_gpu_info(name, sizeof name, &sm)) lowp_cli_die(CMD, "the CUDA runtime cannot query device 0");
  printf("%s (compute capability %d.%d; %s)\n", name, sm / 10, sm % 10, why);
  return LOWP_EXIT_OK;
}

/* one probed pair as a JSON object of arr */
static void print_json(cJSON *arr, const lowp_format_t *in, const lowp_format_t *out, const lowp_probe_t *pr,
                       const char *pms, int have_preset, int nd, const char *why) {
  const lowp_probe_t r = *pr;
  cJSON *o = cJSON_CreateObject(), *u = cJSON_CreateArray();
  int k;
  cJSON_AddStringToObject(o, "in", in->name);
  cJSON_AddStringToObject(o, "out", out->name);
  if (r.products_exact < 0) cJSON_AddNullToObject(o, "products_exact");
  else cJSON_AddBoolToObject(o, "products_exact", r.products_exact);
  if (r.sub_in < 0) cJSON_AddNullToObject(o, "subnormal_inputs_kept");
  else cJSON_AddBoolToObject(o, "subnormal_inputs_kept", r.sub_in);
  cJSON_AddBoolToObject(o, "subnormal_outputs_kept", r.sub_out == 1);
  cJSON_AddNumberToObject(o, "b", r.b);
  cJSON_AddBoolToObject(o, "b_at_least", r.b_atleast);
  cJSON_AddNumberToObject(o, "interleave", r.interleave);
  cJSON_AddBoolToObject(o, "one_normalisation_per_block", r.per_block);
  cJSON_AddNumberToObject(o, "F", r.F);
  cJSON_AddBoolToObject(o, "F_at_least", r.F_atleast);
  for (k = 0; k < 3; k++) cJSON_AddItemToArray(u, cJSON_CreateNumber(r.align_units[k]));
  cJSON_AddItemToObject(o, "align_units_p075_m075_p025", u);
  if (r.align_ok) cJSON_AddStringToObject(o, "align", lowp_rounding_name(r.align));
  else cJSON_AddNullToObject(o, "align");
  if (r.late_c < 0) cJSON_AddNullToObject(o, "late_c");
  else cJSON_AddBoolToObject(o, "late_c", r.late_c);
  cJSON_AddNumberToObject(o, "out_frac", r.out_frac);
  if (r.out_ok) cJSON_AddStringToObject(o, "out_rounding", lowp_rounding_name(r.out_rnd));
  else cJSON_AddNullToObject(o, "out_rounding");
  if (r.c_ok) cJSON_AddStringToObject(o, "c_rounding", lowp_rounding_name(r.c_rnd));
  else cJSON_AddNullToObject(o, "c_rounding");
  cJSON_AddNumberToObject(o, "monotone_trials", (double)r.mono_trials);
  cJSON_AddNumberToObject(o, "monotone_decreases", (double)r.mono_decreases);
  if (r.promote_probed) cJSON_AddNumberToObject(o, "promote", (double)r.promote);
  else cJSON_AddNullToObject(o, "promote");
  cJSON_AddStringToObject(o, "model", r.model);
  cJSON_AddStringToObject(o, "preset_model", pms);
  if (have_preset) cJSON_AddBoolToObject(o, "match", nd == 0);
  else cJSON_AddNullToObject(o, "match");
  cJSON_AddStringToObject(o, "differences", why);
  static const char *const zk[4] = {"zero_a_all_neg_zero", "zero_b_neg_rounded_to_zero",
                                   "zero_c_zero_product_moves_alignment", "zero_d_alignment_floor_at_emin"};
  const int zv[4] = {r.zero_neg, r.zero_round, r.zero_align, r.zero_floor};
  for (k = 0; k < 4; k++) {
    if (!zv[k]) cJSON_AddNullToObject(o, zk[k]);
    else if (k < 2) cJSON_AddStringToObject(o, zk[k], zv[k] < 0 ? "-0" : "+0");
    else cJSON_AddBoolToObject(o, zk[k], zv[k] > 0);
  }
  cJSON_AddItemToArray(arr, o);
}

/* one probed pair as text */
static void print_text(const lowp_format_t *in, const lowp_format_t *out, const lowp_probe_t *pr, const char *spec,
                   int have_preset, int nd, const char *why) {
  const lowp_probe_t r = *pr;
  printf("\n%s -> %s (probe dots of %zu products)\n", in->name, out->name, r.n);
  printf("  products exact        %s\n", yesno(r.products_exact, "yes", "no"));
  printf("  subnormal inputs      %s\n", yesno(r.sub_in, "kept", "flushed"));
  printf("  subnormal outputs     %s%s\n", yesno(r.sub_out, "kept", "flushed"),
         r.sub_out_from_c ? " (through c: products cannot reach them)" : "");
  if (r.b) printf("  block size b          %s%d\n", r.b_atleast ? ">= " : "", r.b);
  else printf("  block size b          undetermined\n");
  if (r.interleave)
    printf("  interleave            two blocks per instruction: offsets with (i/%d) even, then odd\n",
           r.interleave);
  printf("  normalisation         %s\n", r.per_block ? "once per block" : "per addition");
  if (r.F) printf("  alignment bits F      %s%d\n", r.F_atleast ? ">= " : "", r.F);
  else printf("  alignment bits F      undetermined\n");
  printf("  aligned-term cut      +0.75 -> %g, -0.75 -> %g, +0.25 -> %g units: %s\n", r.align_units[0],
         r.align_units[1], r.align_units[2], r.align_ok ? lowp_rounding_name(r.align) : "unknown");
  printf("  c                     %s\n", r.late_c < 0 ? "not probed" : r.late_c ? "added after the blocks"
                                                                                : "a term of the first block");
  if (out == &LOWP_FMT_FP32) {
    if (r.out_frac) printf("  result fraction bits  %d (a narrower accumulator)\n", r.out_frac);
    else printf("  result fraction bits  23 (all of fp32)%s\n", r.out_frac_atleast ? ", at least F + 1" : "");
  }
  printf("  block result rounding %s\n", r.out_ok ? lowp_rounding_name(r.out_rnd) : "undetermined");
  printf("  rounding with c       %s\n", r.c_ok ? lowp_rounding_name(r.c_rnd) : "undetermined");
  printf("  monotone              %ld of %ld trials never decreased\n", r.mono_trials - r.mono_decreases,
         r.mono_trials);
  if (r.mono_decreases)
    printf("                        first decrease: %a -> %a\n", r.mono_example[0], r.mono_example[1]);
  if (r.promote_probed) printf("  fp32 promotion every  %zu products%s\n", r.promote, r.promote ? "" : " (none)");
  printf("  inferred              %s\n", r.model);
  printf("  zeros                 (a) all -0: %s, (b) negative to zero: %s, (c) zero product aligns: %s,\n"
         "                        (d) c = 0 aligns at emin: %s\n",
         r.zero_neg ? (r.zero_neg < 0 ? "-0" : "+0") : "not probed",
         r.zero_round ? (r.zero_round < 0 ? "-0" : "+0") : "not probed",
         r.zero_align ? (r.zero_align > 0 ? "yes" : "no") : "not probed",
         r.zero_floor ? (r.zero_floor > 0 ? "yes" : "no") : "not probed");
  if (have_preset)
    printf("  preset %-14s %s%s\n", spec, nd ? "DIFFERS: " : "matches", nd ? why : "");
  else
    printf("  preset                none for this device\n");
}

/* the device: the GPU, or model:SPEC */
static void open_device(dev_t_ *dv, const char *device, const lowp_format_t *ins, size_t nin, char *gpu_name,
                        size_t glen) {
  /* the device */
  if (!device || !strcmp(device, "gpu")) {
    const char *pre;
    if (!lowp_probe_gpu_info(gpu_name, glen, &dv->sm)) {
      char why[256];
      (void)lowp_cuda_runtime_status(why, sizeof why);
      lowp_cli_die(CMD, "no CUDA GPU here (%s); probe a model instead: "
                        "--device model:PRESET (v100 a100 a2 ada l40s h100 h200 h100mma b200)", why);
    }
    if (lowp_probe_gpu_open(&dv->g) != LOWP_OK) lowp_cli_die(CMD, "cannot open the GPU %s", gpu_name);
    pre = preset_of_sm(dv->sm);
    dv->gpu = 1;
    snprintf(dv->spec, sizeof dv->spec, "%s", pre ? pre : "");
    snprintf(dv->label, sizeof dv->label, "%s", pre ? pre : "GPU");
  } else if (!strncmp(device, "model:", 6)) {
    const char *spec = device + 6;
    lowp_tc_model_t m;
    char err[512];
    int any = 0;
    size_t k;
    if (!*spec) lowp_cli_die(CMD, "--device model: needs a preset or parameters (model:h100)");
    snprintf(dv->spec, sizeof dv->spec, "%s", spec);
    for (k = 0; k < nin; k++) {
      int st = lowp_tc_model_get(&m, spec, &ins[k], &LOWP_FMT_FP32, err, sizeof err);
      if (st == LOWP_EINVAL) lowp_cli_die(CMD, "--device %s: %s", device, err);
      if (st == LOWP_OK) any = 1;
    }
    if (!any) lowp_cli_die(CMD, "--device %s: no tensor-core datapath for the inputs asked", device);
    snprintf(dv->label, sizeof dv->label, "%s", lowp_tc_preset_find(spec) ? spec : "MODEL");
  } else {
    lowp_cli_die(CMD, "unknown device '%s' (expected gpu or model:PRESET)", device);
  }
}

/* ----------------------------------------------------------- the command */

/* --device model:GPU,kind=...: the block-scaled probes (model/bsprobe.h) on
   lowp's block-scaled MMA model; prints what they recover beside the model's
   parameters */
static int probe_bs(const char *spec, int json) {
  lowp_bsmma_model_t m;
  lowp_bsprobe_model_t ctx;
  lowp_bsprobe_t r;
  char err[256], ms[160];
  const lowp_format_t *el;
  int ok;
  if (lowp_bsmma_get(&m, spec, err, sizeof err)) lowp_cli_die(CMD, "--device model:%s: %s", spec, err);
  el = m.p.group ? &LOWP_FMT_E2M1 : &LOWP_FMT_E4M3; /* mxf4nvf4 multiplies fp4; mxf8f6f4 fp8 */
  ctx.p = &m.p, ctx.fa = ctx.fb = el, ctx.fs = &LOWP_FMT_E8M0;
  if (lowp_bsprobe_run(&r, lowp_bsprobe_model_dev, &ctx, m.p.K, 32, el))
    lowp_cli_die(CMD, "--device model:%s: the probes cannot run on K = %d", spec, m.p.K);
  ok = r.F == m.p.F && r.group == (m.p.group ? m.p.group : 1);
  lowp_bsmma_str(ms, sizeof ms, &m.p);
  if (json) {
    cJSON *o = cJSON_CreateObject();
    char *t;
    cJSON_AddStringToObject(o, "device", spec);
    cJSON_AddStringToObject(o, "instruction", m.instr);
    cJSON_AddNumberToObject(o, "K", r.K);
    cJSON_AddNumberToObject(o, "F", r.F);
    cJSON_AddNumberToObject(o, "group", r.group);
    cJSON_AddStringToObject(o, "model", ms);
    cJSON_AddBoolToObject(o, "match", ok);
    t = cJSON_Print(o);
    puts(t);
    free(t);
    cJSON_Delete(o);
  } else {
    printf("block-scaled probes on model %s (%s, %s elements, e8m0 scales 1)\n", spec, m.instr, el->name);
    printf("  F      %d fraction bits kept below the alignment exponent\n", r.F);
    printf("  group  %d product%s summed exactly per term (K = %d)\n", r.group, r.group == 1 ? "" : "s", r.K);
    printf("  model  %s: %s\n", ms, ok ? "the probes recover it" : "DIFFERS");
  }
  return ok ? LOWP_EXIT_OK : LOWP_EXIT_CHECK;
}

int lowp_cmd_probe(int argc, char **argv) {
  const char *device = NULL, *in_list = NULL, *out_opt = "both", *cap = NULL, *cap_opt = NULL;
  long rows = 1000, kchain = 0;
  uint64_t seed = 1;
  int json = 0, i, ndiff_total = 0, nprobed = 0;
  lowp_format_t ins[8];
  size_t nin = 0, fi;
  dev_t_ dv;
  lowp_outdir_t od;
  cJSON *root = NULL, *arr = NULL;
  char gpu_name[256] = "";

  memset(&dv, 0, sizeof dv);
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return LOWP_EXIT_OK; }
    else if (!strcmp(a, "--device")) device = lowp_cli_need_arg(CMD, argc, argv, &i);
    else if (!strcmp(a, "--in")) in_list = lowp_cli_need_arg(CMD, argc, argv, &i);
    else if (!strcmp(a, "--out")) out_opt = lowp_cli_need_arg(CMD, argc, argv, &i);
    else if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--device-info")) return device_info();
    else if (!strcmp(a, "--capture")) cap = lowp_cli_need_arg(CMD, argc, argv, &i);
    else if (!strcmp(a, "--k")) kchain = (long)lowp_cli_int(CMD, "--k", lowp_cli_need_arg(CMD, argc, argv, &i), 1, LOWP_PROBE_KMAX);
    else if (!strcmp(a, "--rows")) rows = (long)lowp_cli_int(CMD, "--rows", lowp_cli_need_arg(CMD, argc, argv, &i), 1, 100000);
    else if (!strcmp(a, "--seed"))
      seed = (uint64_t)lowp_cli_int(CMD, "--seed", lowp_cli_need_arg(CMD, argc, argv, &i), 0, 0x7fffffffffffffffLL);
    else lowp_cli_die(CMD, "unknown option '%s' (see lowp probe --help)", a);
    if (!strcmp(a, "--k") || !strcmp(a, "--rows") || !strcmp(a, "--seed")) cap_opt = a;
  }
  /* parameters of the capture: without --capture they were ignored in silence */
  if (cap_opt && !cap) lowp_cli_die(CMD, "%s is a parameter of --capture DIR (see lowp probe --help)", cap_opt);
  if (device && !strncmp(device, "model:", 6) && (strstr(device, "kind=") || strstr(device, "group=")))
    return probe_bs(device + 6, json);
  if (strcmp(out_opt, "fp32") && strcmp(out_opt, "fp16") && strcmp(out_opt, "both"))
    lowp_cli_die(CMD, "--out must be fp32, fp16 or both, got '%s'", out_opt);
  if (in_list) {
    nin = lowp_cli_format_list(CMD, in_list, ins, 8);
    for (fi = 0; fi < nin; fi++) {
      size_t k;
      for (k = 0; k < 5; k++)
        if (ins[fi].precision == all_in[k]->precision && ins[fi].emax == all_in[k]->emax &&
            ins[fi].emin == all_in[k]->emin)
          break;
      if (k == 5) lowp_cli_die(CMD, "--in: %s is not a tensor-core input (fp16 bf16 tf32 e4m3 e5m2)", ins[fi].name);
    }
  } else {
    for (fi = 0; fi < 5; fi++) ins[fi] = *all_in[fi];
    nin = 5;
  }

  open_device(&dv, device, ins, nin, gpu_name, sizeof gpu_name);
  for (i = 0; dv.label[i]; i++) dv.label[i] = (char)toupper((unsigned char)dv.label[i]);
  if (cap) lowp_outdir_begin(&od, CMD, "--capture", cap);

  if (json) {
    root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "device", dv.gpu ? "gpu" : "model");
    cJSON_AddStringToObject(root, "gpu", gpu_name);
    cJSON_AddStringToObject(root, "spec", dv.spec);
    arr = cJSON_AddArrayToObject(root, "results");
  } else {
    printf("lowp probe: %s %s\n", dv.gpu ? "GPU" : "model", dv.gpu ? gpu_name : dv.spec);
  }

  for (fi = 0; fi < nin; fi++) {
    const lowp_format_t *in = &ins[fi];
    int oi;
    for (oi = 0; oi < 2; oi++) {
      const lowp_format_t *out = oi ? &LOWP_FMT_FP16 : &LOWP_FMT_FP32;
      lowp_probe_dev_t pd;
      lowp_probe_t r;
      lowp_tc_model_t pm;
      char err[256], why[512] = "", pms[512] = "";
      int st, have_preset, nd = 0;
      if (oi == 0 && !strcmp(out_opt, "fp16")) continue;
      if (oi == 1 && (!strcmp(out_opt, "fp32") || !fp16_out_ok(in))) continue;
      /* a GPU is probed through mma.sync: compare with that instruction's
         datapath (fp8 on Hopper: not the preset's wgmma one) */
      have_preset = *dv.spec && (dv.gpu ? lowp_gpu_mma_model(&pm, dv.spec, in, out, err, sizeof err)
                                        : lowp_tc_model_get(&pm, dv.spec, in, out, err, sizeof err)) == LOWP_OK;
      if (dv.gpu) {
        if (lowp_probe_gpu_k(in, out, dv.sm) == 0) continue;
        pd.dot = lowp_probe_gpu_dot;
        pd.ctx = dv.g;
        pd.kmax = 128;
        pd.promote = 0;
      } else {
        if (!have_preset) continue; /* the model has no datapath for in -> out */
        dv.m = pm;
        pd.dot = lowp_probe_model_dot;
        pd.ctx = &dv.m;
        pd.kmax = LOWP_PROBE_KMAX;
        pd.promote = out == &LOWP_FMT_FP32;
      }
      st = lowp_probe_run(&r, &pd, in, out);
      if (st != LOWP_OK) {
        if (cap) lowp_outdir_abort(&od);
        lowp_cli_die(CMD, "%s -> %s: the device failed (%s)", in->name, out->name, lowp_status_str(st));
      }
      nprobed++;
      if (have_preset) {
        nd = lowp_probe_compare(&r, &pm, out, why, sizeof why);
        lowp_tc_model_str(pms, sizeof pms, &pm);
        ndiff_total += nd;
      }
      if (json) print_json(arr, in, out, &r, pms, have_preset, nd, why);
      else print_text(in, out, &r, dv.spec, have_preset, nd, why);
    }
    if (cap) capture(od.tmp, &dv, in, vec_name(in), rows, seed, kchain, dv.gpu ? lowp_probe_gpu_dot : lowp_probe_model_dot);
  }
  if (nprobed == 0) {
    if (cap) lowp_outdir_abort(&od);
    lowp_cli_die(CMD, "nothing to probe: the device has no datapath for the inputs and outputs asked");
  }
  lowp_probe_gpu_close(dv.g);
  if (cap) lowp_outdir_publish(&od, CMD, "lowp probe --capture");
  if (json) {
    char *txt;
    cJSON_AddNumberToObject(root, "differences", ndiff_total);
    txt = cJSON_Print(root);
    if (!txt) lowp_cli_die(CMD, "out of memory");
    printf("%s\n", txt);
    free(txt);
    cJSON_Delete(root);
  } else if (cap) {
    /* --czero= : these rows carry their c (the replay's default treats
       H100/H200 fp8 fp32 rows as captured with c = 0, as the vendored ones) */
    printf("\ncaptured %ld rows per file under %s/%s/ (replay: lowp run tensor-core-models --vectors=%s --czero=%s%s)\n",
           rows, cap, dv.label, cap, strcmp(dv.label, "MODEL") ? "" : " --map=MODEL=",
           strcmp(dv.label, "MODEL") ? "" : dv.spec);
  }
  return ndiff_total ? LOWP_EXIT_CHECK : LOWP_EXIT_OK;
}
