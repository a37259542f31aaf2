/* tsass -- the machine code lowp's CPU twins assume, compiled here and decoded from the cubins per architecture */

/*
 * Label unit; no GPU needed, only nvcc (skips, exit 77, when there is none:
 * $CUDACXX, else /usr/local/cuda/bin/nvcc, else nvcc on PATH). For each of
 * sm_80, 89, 90, 100 and 120 that this nvcc knows (nvcc --list-gpu-arch) it
 * compiles tests/sass/{cvt_tf32,mma_e4m3}.cu (the PTX strings of kernels/cuda/ptx.h, the ones
 * the GPU kernels use) to a cubin, reads the kernel's .text section and
 * decodes the 128-bit instructions it needs. Field layout (Volta and later,
 * as Mesa's NAK encodes it, src/nouveau/compiler/nak/sm70_encode.rs): opcode
 * bits 0-8, operand form 9-11 (1 registers, 4 a 32-bit immediate in the
 * second source, 2 in the third), guard predicate 12-14 and its negation 15,
 * destination 16-23, sources 24-31, 32-39 (or the immediate 32-63) and 64-71;
 * FSETP's comparison 76-79, its predicate 81-83, |src0| 73; LOP3's table
 * 72-79; HMMA's shape bits 75/78 and f32 result 76; FADD's rounding 78-79.
 *
 * 1. cvt.rna.tf32.f32 must be, on every architecture, the sequence
 *    kernels/cpu/cvt.c's twin is written from (lowp_cvt_tf32_seq):
 *      FSETP.GEU.AND P, PT, |x|, +INF, PT;  @!P x = x + 0x1000 (IMAD x, 1,
 *      R(0x1000) or IADD3);  y = LOP3(x & 0xffffe000);  STG y.
 *    Nothing else may read or write x.
 * 2. e4m3 mma.sync (fp32 C/D) is either one native instruction (opcode
 *    0x07a) or the emulation lib/model/tc_model.c's FP8_MMA_SYNC models:
 *    12 F2FP unpacking e4m3 pairs to fp16x2 (the low halves of each register
 *    for the first HMMA, the high halves for the second: interleave 2), an
 *    HMMA.16816.F32 from zero (RZ as C), a second chained on the first, then
 *    4 FADDs rounding to nearest that add the loaded C (late c). Where lowp
 *    has a preset for the architecture (89 ada, 90 h100, 100 b200), its
 *    mma.sync fp8 datapath must say the same: late_c, interleave 2, b 16,
 *    c rounded to nearest, and the fp16 datapath's F, alignment and output
 *    rounding for the blocks (they are fp16 HMMAs); native: no late c.
 * A CUDA release that changes either sequence fails here, not on a GPU.
 * LOWP_SASS_ARCHS=86 (a list) checks those architectures instead: tools/gpu.sh
 * checks the one it builds for (an sm_86 cubin is not the sm_80 one).
 * Run: ctest --test-dir build -R tsass --output-on-failure
 */

#define _POSIX_C_SOURCE 200809L /* popen, pclose */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cvt.h"
#include "format/format.h"
#include "model/tc.h"
#include "status.h"
#include "testutil.h"

#define RZ 255
#define PT 7
enum {
  OP_MOV = 0x002, OP_FSETP = 0x00b, OP_IADD3 = 0x010, OP_LOP3 = 0x012, OP_SHF = 0x019,
  OP_FADD = 0x021, OP_IMAD = 0x024, OP_IMADW = 0x025, OP_HFMA2 = 0x031, OP_HFMA2MMA = 0x035,
  OP_HMMA = 0x03c, OP_F2FP = 0x03e, OP_QMMA = 0x07a, OP_ULDC = 0x0b9, OP_S2R = 0x119,
  OP_LDG = 0x181, OP_LDC = 0x182, OP_STG = 0x186, OP_LDCU = 0x1ac
};

typedef struct {
  uint64_t lo, hi;
} ins_t;

static unsigned fld(const ins_t *x, int a, int b) { /* bits a..b-1 (b - a <= 32) */
  unsigned v = 0;
  int i;
  for (i = b - 1; i >= a; i--) v = v << 1 | (unsigned)((i < 64 ? x->lo >> i : x->hi >> (i - 64)) & 1);
  return v;
}
#define OP(x) fld(x, 0, 9)
#define FORM(x) fld(x, 9, 12)
#define GUARD(x) fld(x, 12, 15)
#define GNEG(x) fld(x, 15, 16)
#define DST(x) fld(x, 16, 24)
#define S0(x) fld(x, 24, 32)
#define S1(x) fld(x, 32, 40)
#define IMM(x) fld(x, 32, 64)
#define S2(x) fld(x, 64, 72)

static char nvcc[1024];

static int find_nvcc(void) {
  const char *e = getenv("CUDACXX");
  FILE *p;
  if (e && *e && access(e, X_OK) == 0) return snprintf(nvcc, sizeof nvcc, "%s", e), 1;
  if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0) return snprintf(nvcc, sizeof nvcc, "/usr/local/cuda/bin/nvcc"), 1;
  p = popen("command -v nvcc 2>/dev/null", "r");
  if (!p) return 0;
  if (!fgets(nvcc, sizeof nvcc, p)) nvcc[0] = '\0';
  pclose(p);
  nvcc[strcspn(nvcc, "\n")] = '\0';
  return nvcc[0] != '\0';
}

static int nvcc_knows(int sm) {
  char cmd[1200], line[256], want[32];
  FILE *p;
  int yes = 0;
  snprintf(cmd, sizeof cmd, "'%s' --list-gpu-arch 2>/dev/null", nvcc);
  snprintf(want, sizeof want, "compute_%d", sm);
  p = popen(cmd, "r");
  if (!p) return 0;
  while (fgets(line, sizeof line, p))
    if (!strncmp(line, want, strlen(want)) && (line[strlen(want)] == '\n' || line[strlen(want)] == '\0')) yes = 1;
  pclose(p);
  return yes;
}

static uint64_t rd(const unsigned char *b, size_t off, int n) {
  uint64_t v = 0;
  while (n-- > 0) v = v << 8 | b[off + (size_t)n];
  return v;
}

/* compile the sources for sm_<sm> (once: the kernels of both files in one cubin where the architecture
   has e4m3 mma.sync, one nvcc run instead of two) and return the instructions of .text.<kernel> (NULL on
   failure); each kernel's code is its own function's, whatever else the cubin holds */
static ins_t *compile(const char *tmp, const char *kernel, int sm, size_t *n) {
  char cubin[1200], cmd[4000], want[128], unit[1200];
  unsigned char *buf = NULL;
  ins_t *ins = NULL;
  FILE *f;
  long len;
  uint64_t shoff;
  unsigned shentsize, shnum, shstrndx, i;
  snprintf(cubin, sizeof cubin, "%s/sm%d.cubin", tmp, sm);
  snprintf(unit, sizeof unit, "%s/sm%d.cu", tmp, sm);
  if (access(cubin, R_OK) != 0) {
    if (!(f = fopen(unit, "w"))) return lowp_test_check(0, "sm_%d: cannot write %s", sm, unit), NULL;
    fprintf(f, "#include \"%s/tests/sass/cvt_tf32.cu\"\n", LOWP_SOURCE_DIR);
    if (sm >= 89) fprintf(f, "#include \"%s/tests/sass/mma_e4m3.cu\"\n", LOWP_SOURCE_DIR);
    if (fclose(f) != 0) return lowp_test_check(0, "sm_%d: cannot write %s", sm, unit), NULL;
    snprintf(cmd, sizeof cmd, "'%s' -cubin -arch=sm_%d -I'%s/kernels/cuda' -o '%s' '%s' 2>&1", nvcc, sm,
             LOWP_SOURCE_DIR, cubin, unit);
    if (system(cmd) != 0) return lowp_test_check(0, "sm_%d: %s", sm, cmd), NULL;
  }
  f = fopen(cubin, "rb");
  if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 64 || fseek(f, 0, SEEK_SET) ||
      !(buf = malloc((size_t)len)) || fread(buf, 1, (size_t)len, f) != (size_t)len) {
    if (f) fclose(f);
    free(buf);
    return lowp_test_check(0, "sm_%d: cannot read %s", sm, cubin), NULL;
  }
  fclose(f);
  shoff = rd(buf, 0x28, 8);
  shentsize = (unsigned)rd(buf, 0x3a, 2);
  shnum = (unsigned)rd(buf, 0x3c, 2);
  shstrndx = (unsigned)rd(buf, 0x3e, 2);
  snprintf(want, sizeof want, ".text.%s", kernel);
  if (memcmp(buf, "\177ELF\2", 5) || shstrndx >= shnum || shoff + (uint64_t)shnum * shentsize > (uint64_t)len) {
    free(buf);
    return lowp_test_check(0, "sm_%d: %s is not a 64-bit ELF", sm, cubin), NULL;
  }
  for (i = 0; i < shnum && !ins; i++) {
    size_t h = (size_t)(shoff + (uint64_t)i * shentsize), hs = (size_t)(shoff + (uint64_t)shstrndx * shentsize);
    uint64_t name = rd(buf, h, 4) + rd(buf, hs + 24, 8), off = rd(buf, h + 24, 8), size = rd(buf, h + 32, 8);
    size_t k;
    if (name + strlen(want) + 1 > (uint64_t)len || strcmp((const char *)buf + name, want)) continue;
    if (off + size > (uint64_t)len || size % 16 || !(ins = malloc((size_t)size + 16))) break;
    *n = (size_t)(size / 16);
    for (k = 0; k < *n; k++) {
      ins[k].lo = rd(buf, (size_t)off + 16 * k, 8);
      ins[k].hi = rd(buf, (size_t)off + 16 * k + 8, 8);
    }
  }
  free(buf);
  if (!ins) lowp_test_check(0, "sm_%d: no section %s in %s", sm, want, cubin);
  return ins;
}

static void dump(const ins_t *x, size_t n, int sm) {
  size_t i;
  printf("  sm_%d machine code (opcode form guard dst s0 s1/imm s2):\n", sm);
  for (i = 0; i < n; i++)
    if (OP(&x[i]) != 0x118) /* NOP */
      printf("    %03x %u %s%u R%-3u R%-3u %08x R%-3u\n", OP(&x[i]), FORM(&x[i]), GNEG(&x[i]) ? "!P" : " P",
             GUARD(&x[i]), DST(&x[i]), S0(&x[i]), IMM(&x[i]), S2(&x[i]));
}

/* ------------------------------------------------------------ 1. tf32 */

/* a register set to a constant by plumbing: MOV imm, HFMA2(.MMA) -RZ, RZ, imm
   with normal-or-zero halves (exact), IADD3 RZ, imm, RZ */
static int const_of(const ins_t *x, unsigned *reg, uint32_t *val) {
  unsigned op = OP(x), h0 = IMM(x) & 0xffff, h1 = IMM(x) >> 16;
  int normal = ((h0 & 0x7c00) && (h0 & 0x7c00) != 0x7c00) || !(h0 & 0x7fff);
  normal = normal && (((h1 & 0x7c00) && (h1 & 0x7c00) != 0x7c00) || !(h1 & 0x7fff));
  if (GUARD(x) != PT || GNEG(x)) return 0;
  if ((op == OP_MOV && FORM(x) == 4) || (op == OP_IADD3 && FORM(x) == 4 && S0(x) == RZ && S2(x) == RZ) ||
      ((op == OP_HFMA2 || op == OP_HFMA2MMA) && FORM(x) == 2 && (S0(x) == RZ || S2(x) == RZ) && normal)) {
    *reg = DST(x);
    *val = IMM(x);
    return 1;
  }
  return 0;
}

static int reads(const ins_t *x, unsigned r) {
  unsigned op = OP(x);
  if (op == OP_MOV || op == OP_S2R || op == OP_ULDC || op == OP_LDC || op == OP_LDCU) return 0; /* no GPR source */
  return S0(x) == r || S2(x) == r || (FORM(x) == 1 && S1(x) == r) || (OP(x) == OP_STG && S1(x) == r);
}

/* LOWP_CVT_SEQ_TF32_ADD_MASK if the kernel is that sequence, else 0 (why says why) */
static int classify_tf32(const ins_t *c, size_t n, char *why, size_t wl) {
  unsigned X = 1000, P = 8, Z = 1000, creg[64];
  uint32_t cval[64];
  size_t i, nc = 0;
  int stage = 0; /* 0 want LDG, 1 FSETP, 2 the add, 3 LOP3, 4 STG, 5 done */
  for (i = 0; i < n; i++) {
    const ins_t *x = &c[i];
    unsigned op = OP(x), r;
    uint32_t v;
    int matched = 0;
    if (const_of(x, &r, &v)) {
      if (nc < 64) creg[nc] = r, cval[nc++] = v;
      if (r != X) continue;
    }
    if (stage == 0 && op == OP_LDG) { X = DST(x); stage = 1; continue; }
    if (stage == 1 && op == OP_FSETP && FORM(x) == 4 && IMM(x) == 0x7f800000u && S0(x) == X && fld(x, 73, 74) &&
        !fld(x, 72, 73) && fld(x, 74, 76) == 0 && fld(x, 76, 80) == 0xe && fld(x, 87, 90) == PT && !fld(x, 90, 91)) {
      P = fld(x, 81, 84);
      stage = 2;
      continue;
    }
    if (stage == 2 && GUARD(x) == P && GNEG(x) && DST(x) == X && S0(x) == X) {
      if (op == OP_IMAD && FORM(x) == 4 && IMM(x) == 1) {
        size_t k;
        for (k = nc; k-- > 0;)
          if (creg[k] == S2(x)) { matched = cval[k] == 0x1000u; break; }
      } else if (op == OP_IADD3 && FORM(x) == 4) {
        matched = IMM(x) == 0x1000u && S2(x) == RZ;
      }
      if (matched) { stage = 3; continue; }
    }
    if (stage == 3 && op == OP_LOP3 && FORM(x) == 4 && S0(x) == X && IMM(x) == 0xffffe000u && S2(x) == RZ &&
        (fld(x, 72, 80) & 0x55) == 0x40) {
      Z = DST(x);
      stage = 4;
      continue;
    }
    if (stage == 4 && op == OP_STG && S1(x) == Z) { stage = 5; continue; }
    if (stage >= 1 && stage <= 4 && (reads(x, X) || DST(x) == X) && op != OP_STG) {
      snprintf(why, wl, "instruction %zu (opcode %03x) touches x (R%u) outside the sequence", i, op, X);
      return 0;
    }
  }
  if (stage != 5) {
    static const char *const want[] = {"the load", "FSETP.GEU |x|, +INF", "@!P x += 0x1000",
                                       "LOP3 x & 0xffffe000", "the store"};
    snprintf(why, wl, "no %s where expected", want[stage]);
    return 0;
  }
  return LOWP_CVT_SEQ_TF32_ADD_MASK;
}

static void check_tf32(const char *tmp, int sm) {
  size_t n = 0;
  char why[256] = "";
  ins_t *c = compile(tmp, "lowp_sass_cvt_tf32", sm, &n);
  int seq;
  if (!c) return;
  seq = classify_tf32(c, n, why, sizeof why);
  if (!lowp_test_check(seq == lowp_cvt_tf32_seq(sm) && seq != 0,
                       "sm_%d cvt.rna.tf32.f32: decoded sequence %d, the twin (kernels/cpu/cvt.c) assumes %d: %s",
                       sm, seq, lowp_cvt_tf32_seq(sm), why))
    dump(c, n, sm);
  else
    printf("sm_%d cvt.rna.tf32.f32: FSETP.GEU |x|,+INF; @!P x += 0x1000; x & 0xffffe000 (the twin's)\n", sm);
  free(c);
}

/* ------------------------------------------------------- 2. fp8 mma */

typedef struct {
  int native, f2fp, hmma, fadd; /* counts */
  int emulated;                 /* 1: every check of the emulation held */
} mma_t;

static int in_regs(unsigned r, unsigned base, unsigned cnt) { return r >= base && r < base + cnt; }

/* the emulation's details; returns 1 if they hold, else writes why */
static int check_emulation(const ins_t *c, size_t n, char *why, size_t wl) {
  unsigned half[256], hm[2][4], ld[256];
  size_t i, nh = 0, nf = 0;
  memset(half, 0, sizeof half);
  memset(ld, 0, sizeof ld);
  for (i = 0; i < n; i++) {
    const ins_t *x = &c[i];
    if (OP(x) == OP_LDG) ld[DST(x)] = 1;
    if (OP(x) == OP_F2FP) {
      if (fld(x, 72, 88) != 0x0006 || fld(x, 89, 95) != 1 || S0(x) != RZ || !ld[S1(x)])
        return snprintf(why, wl, "F2FP %zu is not the e4m3 -> fp16x2 unpack of a loaded register", i), 0;
      half[DST(x)] = 1 + fld(x, 88, 89); /* 1: low bytes (H0), 2: high bytes (H1) */
      ld[DST(x)] = 0;
    }
    if (OP(x) == OP_HMMA) {
      unsigned k, want = nh == 0 ? 1 : 2;
      if (nh >= 2) return snprintf(why, wl, "more than two HMMAs"), 0;
      if (!fld(x, 75, 76) || fld(x, 78, 79) || !fld(x, 76, 77) || fld(x, 82, 84))
        return snprintf(why, wl, "HMMA %zu is not m16n8k16 fp16 -> f32", nh), 0;
      for (k = 0; k < 4; k++)
        if (half[(S0(x) + k) & 255] != want || (k < 2 && half[(S1(x) + k) & 255] != want))
          return snprintf(why, wl, "HMMA %zu does not take the %s byte pairs", nh, want == 1 ? "low" : "high"), 0;
      if (nh == 0 && S2(x) != RZ) return snprintf(why, wl, "the first HMMA does not start from zero"), 0;
      if (nh == 1 && S2(x) != hm[0][0]) return snprintf(why, wl, "the second HMMA is not chained on the first"), 0;
      for (k = 0; k < 4; k++) hm[nh][k] = DST(x) + k;
      nh++;
    }
    if (OP(x) == OP_FADD) {
      unsigned a = S0(x), b = FORM(x) == 1 ? S1(x) : 1000;
      if (nh != 2 || FORM(x) != 1 || fld(x, 78, 80) != 0 || fld(x, 80, 81) ||
          !((in_regs(a, hm[1][0], 4) && ld[b]) || (in_regs(b, hm[1][0], 4) && ld[a])))
        return snprintf(why, wl, "FADD %zu is not (second HMMA) + (loaded c) rounded to nearest", nf), 0;
      nf++;
    }
  }
  return 1;
}

static mma_t classify_mma(const ins_t *c, size_t n, char *why, size_t wl) {
  mma_t r;
  size_t i;
  memset(&r, 0, sizeof r);
  for (i = 0; i < n; i++) {
    unsigned op = OP(&c[i]);
    r.native += op == OP_QMMA;
    r.f2fp += op == OP_F2FP;
    r.hmma += op == OP_HMMA;
    r.fadd += op == OP_FADD;
  }
  if (r.f2fp == 12 && r.hmma == 2 && r.fadd == 4 && r.native == 0) r.emulated = check_emulation(c, n, why, wl);
  else if (!(r.native == 1 && r.f2fp + r.hmma + r.fadd == 0))
    snprintf(why, wl, "neither one native mma (%d) nor 12 F2FP + 2 HMMA + 4 FADD (%d, %d, %d)", r.native, r.f2fp,
             r.hmma, r.fadd);
  return r;
}

static const char *preset_of(int sm) { return sm == 89 ? "ada" : sm == 90 ? "h100" : sm == 100 ? "b200" : NULL; }

/* the preset's mma.sync fp8 datapath (as lowp_gpu_gemm_model takes it) against the machine code */
static void check_preset(int sm, const mma_t *r) {
  const char *pre = preset_of(sm);
  lowp_tc_model_t m8, m16;
  char err[256];
  if (!pre) return;
  if (!lowp_test_check(lowp_tc_model_get(&m8, pre, &LOWP_FMT_E4M3, &LOWP_FMT_FP16, err, sizeof err) == LOWP_OK &&
                           lowp_tc_model_get(&m16, pre, &LOWP_FMT_FP16, &LOWP_FMT_FP32, err, sizeof err) == LOWP_OK,
                       "%s: %s", pre, err))
    return;
  if (r->native) {
    lowp_test_check(!m8.bfma.late_c, "sm_%d runs e4m3 mma.sync natively; %s's datapath adds c late", sm, pre);
    return;
  }
  lowp_test_check(m8.bfma.late_c && m8.bfma.interleave == 2 && m8.bfma.b == 16 && m8.bfma.c_rnd == LOWP_RND_NE &&
                      m8.bfma.F == m16.bfma.F && m8.bfma.align == m16.bfma.align &&
                      m8.bfma.out_rnd == m16.bfma.out_rnd,
                  "sm_%d emulates e4m3 mma.sync with two fp16 HMMAs (b 16, interleave 2, c late, rne): %s's "
                  "mma.sync datapath says b %d, interleave %d, late c %d, F %d (fp16 %d)",
                  sm, pre, m8.bfma.b, m8.bfma.interleave, m8.bfma.late_c, m8.bfma.F, m16.bfma.F);
}

static void check_mma(const char *tmp, int sm) {
  size_t n = 0;
  char why[256] = "";
  ins_t *c = compile(tmp, "lowp_sass_mma_e4m3", sm, &n);
  mma_t r;
  if (!c) return;
  r = classify_mma(c, n, why, sizeof why);
  if (!lowp_test_check(r.emulated || (r.native == 1 && !why[0]), "sm_%d e4m3 mma.sync: %s", sm, why)) dump(c, n, sm);
  else
    printf("sm_%d e4m3 mma.sync: %s\n", sm,
           r.native ? "one native instruction"
                    : "12 F2FP e4m3->f16x2, HMMA.16816.F32 (low pairs, from 0), HMMA (high pairs, chained), 4 FADD.RN + c");
  check_preset(sm, &r);
  free(c);
}

/* the architectures to check: LOWP_SASS_ARCHS ("86" or "80,90": what
   tools/gpu.sh builds for), else the five lowp builds by default */
static size_t arch_list(int *sms, size_t max) {
  const char *e = getenv("LOWP_SASS_ARCHS");
  static const int dflt[] = {80, 89, 90, 100, 120};
  size_t n = 0;
  if (!e || !*e) {
    for (n = 0; n < 5 && n < max; n++) sms[n] = dflt[n];
    return n;
  }
  while (*e && n < max) {
    char *end;
    long v = strtol(e, &end, 10);
    if (end == e || v < 50 || v > 999) {
      lowp_test_check(0, "LOWP_SASS_ARCHS: '%s' is not a list of compute capabilities (86,90)", e);
      return 0;
    }
    sms[n++] = (int)v;
    e = end;
    while (*e == ',' || *e == ' ' || *e == ';') e++;
  }
  return n;
}

int main(void) {
  int sms[16];
  char tmp[] = "/tmp/lowp-tsass-XXXXXX";
  size_t i, nsm;
  int any = 0;
  lowp_test_start("tsass");
  if (!find_nvcc()) lowp_test_skip("no nvcc ($CUDACXX, /usr/local/cuda/bin/nvcc, PATH)");
  nsm = arch_list(sms, 16);
  lowp_test_make_tmpdir(tmp);
  for (i = 0; i < nsm; i++) {
    if (!nvcc_knows(sms[i])) {
      printf("sm_%d: this nvcc (%s) does not know it; not checked\n", sms[i], nvcc);
      continue;
    }
    any = 1;
    check_tf32(tmp, sms[i]);
    if (sms[i] >= 89) check_mma(tmp, sms[i]);
  }
  lowp_test_check(any, "nvcc %s knows none of the architectures asked", nvcc);
  lowp_test_remove_dir(tmp);
  return lowp_test_end();
}
