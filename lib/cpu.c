/* lowp_cpu -- what instructions this CPU runs, asked with CPUID itself */

#include "cpu.h"

#include <string.h>

const char *lowp_isa_name(lowp_isa_t isa) {
  return isa == LOWP_ISA_AVX512 ? "avx512" : isa == LOWP_ISA_AVX2 ? "avx2" : "generic";
}

/* the widest instruction set lowp_cpu_isa may answer (lowp_cpu_isa_limit) */
static lowp_isa_t isa_limit = LOWP_ISA_AVX512;

void lowp_cpu_isa_limit(lowp_isa_t max) { isa_limit = max; }

int lowp_isa_parse(const char *name) {
  if (!strcmp(name, "generic")) return LOWP_ISA_GENERIC;
  if (!strcmp(name, "avx2")) return LOWP_ISA_AVX2;
  if (!strcmp(name, "avx512")) return LOWP_ISA_AVX512;
  return -1;
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>

/* XCR0, the register whose bits say which state the OS saves on a context
   switch (read only after OSXSAVE said XGETBV exists). */
static unsigned long long read_xcr0(void) {
  unsigned int lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
}

static int has_f16c(void) {
  unsigned int a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  if (!(c & (1u << 27)) || !(c & (1u << 28)) || !(c & (1u << 29))) return 0;
  return (read_xcr0() & 6) == 6; /* XMM and YMM state saved */
}

/* asked once: CPUID traps to the hypervisor in a virtual machine (6.5 us
   on the 2-core EPYC VM, against 0.4 ms for a whole n = 128 GEMM and far
   less for the array roundings that ask it per call); every thread that
   finds no answer yet computes the same one */
int lowp_cpu_has_f16c(void) {
  static int known; /* 0: not asked; 1: no; 2: yes */
  int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
  if (!k) {
    k = has_f16c() ? 2 : 1;
    __atomic_store_n(&known, k, __ATOMIC_RELAXED);
  }
  return k == 2;
}

static lowp_isa_t cpu_isa(int need_fma) {
  int fma = !need_fma || __builtin_cpu_supports("fma");
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && fma)
    return LOWP_ISA_AVX512;
  if (__builtin_cpu_supports("avx2") && fma) return LOWP_ISA_AVX2;
  return LOWP_ISA_GENERIC;
}

lowp_isa_t lowp_cpu_isa(int need_fma) {
  lowp_isa_t isa = cpu_isa(need_fma);
  return isa < isa_limit ? isa : isa_limit;
}
void lowp_cpu_units16(lowp_cpu_units16_t *u) {
  unsigned int a, b, c, d;
  memset(u, 0, sizeof *u);
  if (__get_cpuid_max(0, NULL) < 7) return;
  __cpuid_count(7, 0, a, b, c, d);
  u->amx_bf16 = (d >> 22) & 1;
  u->avx512_fp16 = (d >> 23) & 1;
  if (a < 1) return; /* EAX of sub-leaf 0: the highest sub-leaf */
  __cpuid_count(7, 1, a, b, c, d);
  u->avx512_bf16 = (a >> 5) & 1;
  u->amx_fp16 = (a >> 21) & 1;
}
#else
int lowp_cpu_has_f16c(void) { return 0; }
void lowp_cpu_units16(lowp_cpu_units16_t *u) { memset(u, 0, sizeof *u); }
lowp_isa_t lowp_cpu_isa(int need_fma) {
  (void)need_fma;
  return LOWP_ISA_GENERIC;
}
#endif
