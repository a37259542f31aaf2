/* lowp_tc_model -- tensor-core presets (v100 ... b200) and the model-spec parser */

/*
 * The presets are data. docs/design.md's table was the starting hypothesis; each
 * entry below is what the GPU-captured vectors in
 * tests/data/tensor-core-vectors/ decided (tests/ttc_vectors.c replays every
 * row; `lowp run tensor-core-models` reports the counts). Where a preset
 * differs from docs/design.md's table, the entry says so and why.
 *
 * F counts fraction bits kept below the alignment exponent X, where X is the
 * exponent of the largest product *before* normalisation (product
 * significands in [1,4)). In Khattak & Mikaitis's notation F = 23 + neab
 * ("number of extra alignment bits"): V100 neab = 0, A100/Ada neab = 1,
 * H100/B200 neab = 2, and Ada/H100 fp8 neab = -10 (13 bits, and the result
 * itself is cut to 13 fraction bits).
 */

#include "model/tc.h"
#include "format/number.h"
#include "status.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/escape.h"

/* ---------------------------------------------------------------- types */

#define RZ LOWP_RND_TZ
#define RN LOWP_RND_NE
/* The hardware's common case: truncated alignment, no sticky bit, fp32
   output truncated, fp16 output rounded to nearest even. */
#define BFMA(B, FF) {.b = (B), .F = (FF), .align = RZ, .out_rnd = RZ, .out16_rnd = RN, .ovf_inf = 1}
/* Ada and Hopper fp8: 13 fraction bits in alignment and in the fp32 result. */
#define FP8_13(B) {.b = (B), .F = 13, .align = RZ, .out_rnd = RZ, .out16_rnd = RN, \
                   .out_frac = 13, .ovf_inf = 1}
/* fp8 through the warp-level mma.sync on Hopper and Blackwell: two blocks of
   16 (the products paired as 0,1,4,5,8,9,... then 2,3,6,7,...) summed from
   zero, the first block's result the c of the second; each block rounded to
   the output format, an fp32 output toward zero (as every NVIDIA block FMA
   with fp32 output), an fp16 output to nearest; then c added by one addition
   rounded to nearest (c_rnd). See "b200" below for the evidence. */
#define FP8_MMA_SYNC {.b = 16, .F = 25, .align = RZ, .out_rnd = RZ, .out16_rnd = RN, \
                      .ovf_inf = 1, .late_c = 1, .interleave = 2, .c_rnd = RN}
#define NONE {.b = 0}
/* Hopper's zeros (`lowp probe` on an NVIDIA H200, driver 580.159.04, CUDA
   13.0, 2026-11-30; docs/gpu.md): a block of zero addends, every one -0,
   gives +0 (fp16, bf16, tf32, e4m3, e5m2 in; fp32 and fp16 out); a
   negative sum rounded to zero gives +0 (fp16->fp16, bf16/tf32->fp32,
   e5m2->fp16); with c = 0 the alignment exponent is at least the output's
   emin (bf16, tf32 -> fp32; fp16 cannot show it, taken as the same adder).
   The wgmma fp8 datapath takes them too: no captured row decides it (every
   H100 fp8 fp32 row has c = +0, and an fp8 product sum, >= 2^-32 when
   nonzero, never rounds to zero in fp32; c = 0 at emin -126 lies below
   every fp8 product), and the probes run mma.sync only. */
#define HOPPER_ZEROS .zsum_pos = 1, .zrnd_pos = 1, .c0_emin = 1
#define BFMA_H(B, FF) {.b = (B), .F = (FF), .align = RZ, .out_rnd = RZ, .out16_rnd = RN, \
                       .ovf_inf = 1, HOPPER_ZEROS}
#define FP8_13_H(B) {.b = (B), .F = 13, .align = RZ, .out_rnd = RZ, .out16_rnd = RN, \
                     .out_frac = 13, .ovf_inf = 1, HOPPER_ZEROS}
#define FP8_MMA_SYNC_H {.b = 16, .F = 25, .align = RZ, .out_rnd = RZ, .out16_rnd = RN, \
                        .ovf_inf = 1, .late_c = 1, .interleave = 2, .c_rnd = RN, HOPPER_ZEROS}

/*
 * Evidence, per preset (tests/data/tensor-core-vectors, 1000 rows per file;
 * `lowp run tensor-core-models` recomputes the counts):
 *  v100  fp16->fp32/fp16: 4-term rows; b=4, F=23 match all 2000 rows.
 *  a100, a2  fp16, bf16 (8-term rows), tf32 (4-term rows): b=8/4, F=24.
 *  ada   as a100; fp8 (32-term rows, c included): F=13 in alignment, the fp32
 *        result cut to 13 fraction bits; the fp16 result is rounded to nearest
 *        from the block sum directly (cutting to 13 bits first misses 28 of
 *        2000 fp16 rows).
 *  h100  fp16, bf16 (16-term), tf32 (4-term): b=16/8, F=25 as docs/design.md.
 *        fp8 with fp32 output (wgmma rows, c = 0): b=32, F=13, 13-bit result,
 *        as docs/design.md. fp8 with fp16 output: these rows carry c (c = 0 matches
 *        2 of 1000), and docs/design.md's single 32-block (13 bits) misses 38% of
 *        the E4M3 rows; what matches all 2000 rows is FP8_MMA_SYNC below (the
 *        capture used mma.sync, which Hopper runs as two 16-product blocks).
 *  b200  fp16, bf16, tf32 as h100. fp8: docs/design.md's b=32, F=25 with fp32
 *        output truncated matches only 638/661 of 1000 fp32 rows (E4M3/E5M2)
 *        and 628/687 fp16 rows. The fp32 misses are 1 ulp (the result is
 *        rounded to nearest, not truncated: first seen on an exact tie); the
 *        fp16 misses reach hundreds of fp16 ulps (partial sums are rounded
 *        to fp16 before c is added). FP8_MMA_SYNC matches all 4000 fp8 rows
 *        of both outputs for any F >= 23 (F = 22 misses one E5M2 fp32 row;
 *        25 is taken from the fp16 datapath and from MMA-Sim, below).
 *        Rounding of the two blocks' fp32 results: the vendored rows do not
 *        decide it (in none of the 2000 fp32 rows is either block's result
 *        inexact in fp32, so rne, rtz, rup and rdn all match them); only the
 *        final addition of c must be rne (rtz there misses 366 + 350 rows).
 *        Held-back B200 E5M2 rows (not here) show one row of 4000 whose
 *        negative result the GPU gives one ulp smaller in magnitude than
 *        blocks rounded to nearest (0xc10ddf7c, not 0xc10ddf7d), and every
 *        other held-back row equal. Blocks rounded toward zero (the fp32
 *        output rounding of every other NVIDIA block FMA) predict that
 *        pattern: on 400,000 random rows drawn from the vendored values,
 *        rtz blocks differ from rne blocks on 139 E5M2 fp32 rows (1 in
 *        2900; 134 of them smaller in magnitude, 67 negative and 67
 *        positive), on 0 E4M3 fp32 rows and on 0 rows with fp16 output.
 *        rup blocks would fit the one row too (132 rows differ: negatives
 *        smaller, positives larger); rdn would make it larger (excluded);
 *        rne blocks with F = 24 or 23 differ on 18 or 71 rows, in both
 *        directions. rtz is taken as the one rule NVIDIA's fp32 block
 *        outputs are known to follow (Fasi et al.; MMA-Sim).
 *        tests/ttc_b200_rounding.c derives such rows exactly (MPFR).
 * h200 and l40s have no rows here: they take h100's and ada's parameters.
 * Zeros: no row decides them (docs/gpu.md); h100 / h200 take what
 * `lowp probe` measured on an H200 (HOPPER_ZEROS above), every other
 * preset IEEE 754's reading (zsum=ieee, zrnd=ieee, c0align=skip) until a
 * GPU of its kind answers.
 *
 * MMA-Sim (Xie, Wang, Yang & Yang, "MMA-Sim: bit-accurate reference model of
 * tensor cores and matrix cores", arXiv:2511.10909, Microsoft Research; read
 * for its facts) agrees with these presets on F (23 Volta, 24 Ampere/Ada,
 * 25 Hopper/Blackwell), on truncated alignment with no sticky bit, on fp32
 * results truncated and fp16 results rounded to nearest, on Ampere/Ada
 * m16n8k16 (and tf32 m16n8k8) as two consecutive groups of 8 (4) chained
 * through c (b = 8, 4 here), and on Ada and Hopper-wgmma fp8 (13 bits, the
 * fp32 result cut to 13 fraction bits). They differ on fp8 mma.sync on
 * Hopper and B200: MMA-Sim lists no such instruction for those GPUs (its fp8
 * mma.sync is Ada's and RTX Blackwell's; B200 fp8 is tcgen05, one fused dot
 * of the 32 products and c with 25 bits, truncated), while the rows here were
 * captured with mma.sync and need FP8_MMA_SYNC: the tcgen05 description
 * (b=32, F=25, rtz) reproduces 638 / 661 of the 1000 B200 E4M3 / E5M2 fp32
 * rows (942 / 934 with the result rounded to nearest). With its blocks now
 * truncated, only the late addition of c rounds to nearest in this datapath.
 */
static const lowp_tc_preset_t presets[] = {
    {"v100", "NVIDIA V100 (Volta): fp16 blocks of 4, 23 fraction bits (Fasi et al. 2021)",
     BFMA(4, 23), NONE, NONE, NONE, NONE},
    {"a100", "NVIDIA A100 (Ampere): fp16/bf16 blocks of 8, tf32 blocks of 4, 24 bits",
     BFMA(8, 24), BFMA(8, 24), BFMA(4, 24), NONE, NONE},
    {"a2", "NVIDIA A2 (Ampere): as a100",
     BFMA(8, 24), BFMA(8, 24), BFMA(4, 24), NONE, NONE},
    {"ada", "NVIDIA Ada (RTX 4000 class): as a100; fp8 blocks of 16 with 13 bits",
     BFMA(8, 24), BFMA(8, 24), BFMA(4, 24), FP8_13(16), NONE},
    {"l40s", "NVIDIA L40S (Ada): as ada (no captured rows here)",
     BFMA(8, 24), BFMA(8, 24), BFMA(4, 24), FP8_13(16), NONE},
    {"h100", "NVIDIA H100 (Hopper): fp16/bf16 blocks of 16, tf32 of 8, 25 bits; fp8 (wgmma) 32 with 13 bits; "
             "zeros +0, c = 0 aligned at emin (H200 probe)",
     BFMA_H(16, 25), BFMA_H(16, 25), BFMA_H(8, 25), FP8_13_H(32), FP8_MMA_SYNC_H},
    {"h200", "NVIDIA H200 (Hopper): as h100 (no captured rows here; its zeros probed)",
     BFMA_H(16, 25), BFMA_H(16, 25), BFMA_H(8, 25), FP8_13_H(32), FP8_MMA_SYNC_H},
    /* Hopper's warp-level mma.sync, the instruction lowp probe runs and
       captures: fp8 with fp32 output through FP8_MMA_SYNC too (not wgmma's
       32-product block with 13 bits), Hopper's zeros as h100. lowp probe on
       an H200 (driver 580.159.04, CUDA 13.0, 2026-11-30;
       reports/gpu/nvidia-h200/) inferred b=16, F=25, interleave 2, late c
       for e4m3 and e5m2 with fp32 output, and this preset reproduces its
       2 x 1000 captured fp8 fp32 rows (32 products, c random) and 2 x 200
       chained rows of 1024 products (32 instructions, the running sum as
       c), all bit for bit (tests/data/tensor-core-vectors-h200). */
    {"h100mma", "NVIDIA H100/H200 through mma.sync (what lowp probe captures): as h100; fp8 to fp32 as to fp16",
     BFMA_H(16, 25), BFMA_H(16, 25), BFMA_H(8, 25), FP8_MMA_SYNC_H, FP8_MMA_SYNC_H},
    {"b200", "NVIDIA B200 (Blackwell): as h100; fp8 (mma.sync) two blocks of 16 (fp32 toward zero), c added to nearest",
     BFMA(16, 25), BFMA(16, 25), BFMA(8, 25), FP8_MMA_SYNC, NONE},
};

static const lowp_bfma_t custom_default = BFMA(16, 25);

/* ------------------------------------------------------ private helpers */

static int fail(char *err, size_t errlen, int status, const char *fmt, const char *arg) {
  lowp_errf(err, errlen, 0, fmt, arg);
  return status;
}

/* The datapath of a preset for an input format: by the format's data
   (significand and exponent widths), never by its name. fp8 is any format
   of <= 8 bits; bf16 has 8 significand bits; fp16 and tf32 both have 11 and
   differ in their exponent range. */
static const lowp_bfma_t *datapath(const lowp_tc_preset_t *p, const lowp_format_t *in,
                                   const lowp_format_t *out) {
  if (lowp_format_width(in) <= 8)
    return (out->precision < LOWP_FMT_FP32.precision && p->fp8_h.b) ? &p->fp8_h : &p->fp8;
  if (in->precision == LOWP_FMT_BF16.precision && in->emax == LOWP_FMT_BF16.emax)
    return &p->bf16;
  if (in->precision == LOWP_FMT_FP16.precision && in->emax == LOWP_FMT_FP16.emax)
    return &p->fp16;
  if (in->precision == LOWP_FMT_TF32.precision && in->emax == LOWP_FMT_TF32.emax)
    return &p->tf32;
  return NULL;
}

/* format/number.h's integers (no blanks, no '+' inside words, no overflow) */
static int parse_int(long *v, const char *s, long lo, long hi) {
  long long w;
  if (lowp_parse_int(&w, s, lo, hi) != LOWP_OK) return 0;
  *v = (long)w;
  return 1;
}

static int eq_nocase(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
  return *a == *b;
}

/* ----------------------------------------------------------- public API */

size_t lowp_tc_preset_count(void) { return sizeof presets / sizeof presets[0]; }

const lowp_tc_preset_t *lowp_tc_preset_at(size_t i) {
  return i < lowp_tc_preset_count() ? &presets[i] : NULL;
}

const lowp_tc_preset_t *lowp_tc_preset_find(const char *name) {
  size_t i;
  for (i = 0; i < lowp_tc_preset_count(); i++)
    if (eq_nocase(presets[i].name, name)) return &presets[i];
  return NULL;
}

/*
 * spec: [preset][,key=value]... ; see model/tc.h. The copy is tokenised in a
 * local buffer (no strtok: no hidden state).
 */
int lowp_tc_model_get(lowp_tc_model_t *m, const char *spec,
                      const lowp_format_t *in, const lowp_format_t *out,
                      char *err, size_t errlen) {
  char buf[256], *tok, *next;
  const lowp_tc_preset_t *pre = NULL;
  unsigned seen = 0;
  int first = 1, st;

  if (!m || !spec || !in || !out) return fail(err, errlen, LOWP_EINVAL, "%s", "no model given");
  if (strlen(spec) >= sizeof buf) return fail(err, errlen, LOWP_EINVAL, "%s", "model spec too long");
  strcpy(buf, spec);
  memset(m, 0, sizeof *m);
  m->bfma = custom_default;
  snprintf(m->name, sizeof m->name, "%s", spec);

  for (tok = buf; tok; tok = next) {
    char *eq, *key, *val;
    long v;
    lowp_rounding_t r;
    next = strchr(tok, ',');
    if (next) *next++ = '\0';
    if (!*tok)
      return fail(err, errlen, LOWP_EINVAL, "empty item in model spec '%s' (',' at an end, or twice)",
                  spec);
    eq = strchr(tok, '=');
    if (!eq) {
      const lowp_bfma_t *dp;
      if (!first) return fail(err, errlen, LOWP_EINVAL, "'%s': a preset name must come first", tok);
      pre = lowp_tc_preset_find(tok);
      if (!pre) return fail(err, errlen, LOWP_EINVAL,
                            "unknown tensor-core model '%s' (presets: v100 a100 a2 ada l40s h100 h200 h100mma b200, "
                            "or parameters such as b=16,F=25,align=rtz,out=rtz)", tok);
      dp = datapath(pre, in, out);
      if (!dp || dp->b == 0) {
        lowp_errf(err, errlen, 0, "model %s has no tensor-core datapath for %s inputs", pre->name, in->name);
        return LOWP_EUNSUPPORTED;
      }
      m->bfma = *dp;
      first = 0;
      continue;
    }
    first = 0;
    *eq = '\0';
    key = tok;
    val = eq + 1;
    {
      /* each key once: "F=25,F=26" is an error, not "the last wins" */
      static const char *const keys[] = {"b", "F", "align", "sticky", "out", "out16", "outfrac",
                                         "ovf", "latec", "interleave", "promote", "crnd",
                                         "zsum", "zrnd", "c0align"};
      unsigned q;
      for (q = 0; q < sizeof keys / sizeof keys[0]; q++)
        if (!strcmp(key, keys[q])) {
          if (seen & (1u << q)) return fail(err, errlen, LOWP_EINVAL, "'%s' is given twice", key);
          seen |= 1u << q;
        }
    }
    if (!strcmp(key, "b")) {
      if (!parse_int(&v, val, 1, 1024)) return fail(err, errlen, LOWP_EINVAL, "b=%s: expected 1..1024", val);
      m->bfma.b = (int)v;
    } else if (!strcmp(key, "F")) {
      if (!parse_int(&v, val, 1, 60)) return fail(err, errlen, LOWP_EINVAL, "F=%s: expected 1..60", val);
      m->bfma.F = (int)v;
    } else if (!strcmp(key, "align")) {
      if (lowp_rounding_parse(&r, val) != LOWP_OK)
        return fail(err, errlen, LOWP_EINVAL, "align=%s: expected rtz, rne or rto", val);
      m->bfma.align = r;
    } else if (!strcmp(key, "sticky")) {
      if (!parse_int(&v, val, 0, 1)) return fail(err, errlen, LOWP_EINVAL, "sticky=%s: expected 0 or 1", val);
      m->bfma.sticky = (int)v;
    } else if (!strcmp(key, "out") || !strcmp(key, "out16") || !strcmp(key, "crnd")) {
      if (lowp_rounding_parse(&r, val) != LOWP_OK || r == LOWP_RND_SR)
        return fail(err, errlen, LOWP_EINVAL, "output rounding '%s': expected rne, rna, rtz, rup, rdn or rto", val);
      if (!strcmp(key, "out")) m->bfma.out_rnd = r;
      else if (!strcmp(key, "out16")) m->bfma.out16_rnd = r;
      else m->bfma.c_rnd = r;
    } else if (!strcmp(key, "outfrac")) {
      if (!parse_int(&v, val, 0, 52)) return fail(err, errlen, LOWP_EINVAL, "outfrac=%s: expected 0..52", val);
      m->bfma.out_frac = (int)v;
    } else if (!strcmp(key, "ovf")) {
      if (!strcmp(val, "inf")) m->bfma.ovf_inf = 1;
      else if (!strcmp(val, "ieee")) m->bfma.ovf_inf = 0;
      else return fail(err, errlen, LOWP_EINVAL, "ovf=%s: expected inf or ieee", val);
    } else if (!strcmp(key, "latec")) {
      if (!parse_int(&v, val, 0, 1)) return fail(err, errlen, LOWP_EINVAL, "latec=%s: expected 0 or 1", val);
      m->bfma.late_c = (int)v;
    } else if (!strcmp(key, "interleave")) {
      if (!parse_int(&v, val, 0, 1024)) return fail(err, errlen, LOWP_EINVAL, "interleave=%s: expected 0..1024", val);
      m->bfma.interleave = (int)v;
    } else if (!strcmp(key, "zsum") || !strcmp(key, "zrnd")) {
      int *f = !strcmp(key, "zsum") ? &m->bfma.zsum_pos : &m->bfma.zrnd_pos;
      if (!strcmp(val, "ieee")) *f = 0;
      else if (!strcmp(val, "pos")) *f = 1;
      else {
        lowp_errf(err, errlen, 0, "%s=%s: expected ieee or pos", key, val);
        return LOWP_EINVAL;
      }
    } else if (!strcmp(key, "c0align")) {
      if (!strcmp(val, "skip")) m->bfma.c0_emin = 0;
      else if (!strcmp(val, "emin")) m->bfma.c0_emin = 1;
      else return fail(err, errlen, LOWP_EINVAL, "c0align=%s: expected skip or emin", val);
    } else if (!strcmp(key, "promote")) {
      if (!strcmp(val, "off")) v = 0;
      else if (!parse_int(&v, val, 0, 1L << 30))
        return fail(err, errlen, LOWP_EINVAL, "promote=%s: expected a count or off", val);
      m->promote = (size_t)v;
    } else {
      return fail(err, errlen, LOWP_EINVAL,
                  "unknown model key '%s' (keys: b F align sticky out out16 outfrac ovf latec interleave crnd "
                  "zsum zrnd c0align promote)", key);
    }
  }
  if ((st = lowp_bfma_validate(&m->bfma, err, errlen)) != LOWP_OK) return st;
  if (m->promote && m->promote % (size_t)m->bfma.b)
    return fail(err, errlen, LOWP_EINVAL, "%s", "promote must be a multiple of the block size b");
  return LOWP_OK;
}

void lowp_tc_model_str(char *buf, size_t len, const lowp_tc_model_t *m) {
  const lowp_bfma_t *p = &m->bfma;
  snprintf(buf, len,
           "b=%d,F=%d,align=%s,sticky=%d,out=%s,out16=%s,outfrac=%d,ovf=%s,latec=%d,interleave=%d,"
           "crnd=%s,zsum=%s,zrnd=%s,c0align=%s,promote=%zu",
           p->b, p->F, lowp_rounding_name(p->align), p->sticky,
           lowp_rounding_name(p->out_rnd), lowp_rounding_name(p->out16_rnd),
           p->out_frac, p->ovf_inf ? "inf" : "ieee", p->late_c, p->interleave,
           lowp_rounding_name(p->c_rnd), p->zsum_pos ? "pos" : "ieee", p->zrnd_pos ? "pos" : "ieee",
           p->c0_emin ? "emin" : "skip", m->promote);
}
