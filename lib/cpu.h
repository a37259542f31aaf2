/* lowp_cpu -- what instructions this CPU runs, asked with CPUID itself */
#ifndef LOWP_CPU_H
#define LOWP_CPU_H

/*
 * Compilers disagree on which names __builtin_cpu_supports knows (clang 14
 * rejects "f16c" at compile time), so the features that lowp's oracles and
 * benchmarks need beyond those every compiler names are read from CPUID
 * (Intel SDM vol. 2A, "CPUID -- CPU Identification", leaf 1) and XGETBV.
 */

/**
 * @brief 1 if the CPU and the operating system let this process run the
 * F16C instructions (vcvtps2ph, vcvtph2ps): CPUID.1:ECX.F16C[bit 29] and
 * .AVX[bit 28] set, and the OS saves the AVX state (ECX.OSXSAVE[bit 27] and
 * XCR0 bits 1 and 2). 0 otherwise, and on every CPU that is not x86.
 */
int lowp_cpu_has_f16c(void);

#endif
