/* half_t -- the compiler's own binary16 type, an oracle sharing no code with lowp */
#ifndef LOWP_TEST_HALF_H
#define LOWP_TEST_HALF_H

/*
 * GCC 12 and clang >= 15 on x86-64 have _Float16 (conversions in libgcc's
 * soft-fp, __truncsfhf2/__truncdfhf2/__extendhfsf2, or F16C). Clang 14 has
 * no _Float16 on x86 but its storage type __fp16, converted by the same
 * operations (fptrunc/fpext to half, one rounding also from binary64), which
 * compiler-rt's builtins implement: CMakeLists.txt links them for clang < 15.
 * Use half_t only through memcpy and casts (clang forbids __fp16 arguments).
 */
#if defined(__clang__) && __clang_major__ < 15
typedef __fp16 half_t;
#else
__extension__ typedef _Float16 half_t; /* ISO C11 has no _Float16 */
#endif

#endif
