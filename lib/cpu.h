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

/* A loop body written once and compiled into each instruction set's copy (a function with a target
   attribute that calls it): inlined there, so that it is compiled for that copy's instructions. */
#if defined(__GNUC__) || defined(__clang__)
#define LOWP_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define LOWP_ALWAYS_INLINE inline
#endif

/** @brief The vector instruction sets of lowp's fast paths, narrowest first. */
typedef enum { LOWP_ISA_GENERIC = 0, LOWP_ISA_AVX2 = 1, LOWP_ISA_AVX512 = 2 } lowp_isa_t;

/**
 * @brief The widest of them this CPU runs: AVX-512 with F, BW, VL and DQ
 * (the narrowing and masked moves gcc emits for 8- and 16-bit stores), or
 * AVX2; with need_fma, FMA as well. LOWP_ISA_GENERIC on a CPU that is not
 * x86 or with a compiler that cannot ask.
 */
lowp_isa_t lowp_cpu_isa(int need_fma);

/**
 * @brief Makes lowp_cpu_isa answer at most max from now on (process-wide;
 * set it before any work, from one thread): the fast paths then run the
 * copy an AVX2 (or older) CPU runs, with the same results. tools/lowp.c
 * sets it from the environment variable LOWP_ISA.
 */
void lowp_cpu_isa_limit(lowp_isa_t max);

/** @brief The CPU's 16-bit floating-point arithmetic units, as CPUID lists
    them (the flags /proc/cpuinfo shows on Linux); 0 on a CPU that is not x86. */
typedef struct {
  int avx512_bf16; /**< CPUID.(7,1):EAX[5]: VDPBF16PS, bf16 dot products into fp32 */
  int amx_bf16;    /**< CPUID.(7,0):EDX[22]: TDPBF16PS, bf16 tile matrix multiply into fp32 */
  int avx512_fp16; /**< CPUID.(7,0):EDX[23]: fp16 vector arithmetic (VFMADDPH, ...) */
  int amx_fp16;    /**< CPUID.(7,1):EAX[21]: TDPFP16PS, fp16 tile matrix multiply */
} lowp_cpu_units16_t;

/**
 * @brief Which 16-bit units this CPU has (Intel SDM vol. 2A, CPUID leaf 7,
 * sub-leaves 0 and 1). Only what the CPU declares: whether the OS lets a
 * process use AMX (Linux: arch_prctl(ARCH_REQ_XCOMP_PERM)) is not asked.
 */
void lowp_cpu_units16(lowp_cpu_units16_t *u);

/** @brief "generic", "avx2" or "avx512". */
const char *lowp_isa_name(lowp_isa_t isa);

/** @brief The instruction set of that name, or -1 for another name. */
int lowp_isa_parse(const char *name);

#endif
