/* lowp_cpu -- what instructions this CPU runs, asked with CPUID itself */

#include "cpu.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>

/* XCR0, the register whose bits say which state the OS saves on a context
   switch (read only after OSXSAVE said XGETBV exists). */
static unsigned long long read_xcr0(void) {
  unsigned int lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
}

int lowp_cpu_has_f16c(void) {
  unsigned int a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  if (!(c & (1u << 27)) || !(c & (1u << 28)) || !(c & (1u << 29))) return 0;
  return (read_xcr0() & 6) == 6; /* XMM and YMM state saved */
}
#else
int lowp_cpu_has_f16c(void) { return 0; }
#endif
