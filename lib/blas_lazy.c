/* blas_lazy -- OpenBLAS opened on its first call (dlopen), not when a program starts */

/*
 * Linked as an ordinary library, OpenBLAS (Debian's build for every x86
 * core, 36 MB) is mapped and relocated, about 12,000 relocations, and
 * initialised whenever lowp, a test program or Python's liblowp.so starts:
 * about 10 ms of CPU of a `lowp --help` of 23-30 ms on the 2-core test
 * machine (perf stat, 2026-11-30), in every one of the test suite's
 * thousands of `lowp` runs, though most of them (bad input, --help,
 * formats, convert) never multiply a matrix (issue 34, item 4). The OpenBLAS
 * functions lowp calls are defined here with cblas.h's own prototypes, so
 * the callers are unchanged: the first call opens the library (once, from
 * any thread) and each forwards to the library's function.
 *
 * The library opened is the one CMake found (LOWP_OPENBLAS_SONAME, the
 * name a linked program records, resolved by the loader as it was; then
 * LOWP_OPENBLAS_PATH, the file itself). A program could not start without
 * it before; now the first call that needs it fails the same way the
 * loader did: one line on stderr and exit status 127 (the loader's, for a
 * missing library). That is no input lowp could refuse: a dependency of
 * the build that was removed after it.
 */

#define _POSIX_C_SOURCE 200809L /* dlopen, dlsym, pthread_once */

#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "blas_lazy.h"

/* Debian's cblas.h for OpenBLAS declares them; repeated for other cblas.h headers */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char *openblas_get_config(void);
char *openblas_get_corename(void);

#ifndef LOWP_OPENBLAS_SONAME
#define LOWP_OPENBLAS_SONAME "libopenblas.so.0"
#endif
#ifndef LOWP_OPENBLAS_PATH
#define LOWP_OPENBLAS_PATH LOWP_OPENBLAS_SONAME
#endif

static void *g_lib;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void open_blas(void) {
  /* RTLD_LOCAL: its symbols stay out of the global scope, where the
     functions below already answer to their names */
  g_lib = dlopen(LOWP_OPENBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!g_lib) g_lib = dlopen(LOWP_OPENBLAS_PATH, RTLD_NOW | RTLD_LOCAL);
}

void *lowp_blas_sym(const char *name) {
  pthread_once(&g_once, open_blas);
  return g_lib ? dlsym(g_lib, name) : NULL;
}

/* the library's NAME, or the loader's failure (see above) */
static void *need(const char *name) {
  void *p = lowp_blas_sym(name);
  if (!p) {
    char msg[512];
    int n = snprintf(msg, sizeof msg, "lowp: error while loading shared libraries: %s: %s\n",
                     LOWP_OPENBLAS_SONAME, g_lib ? name : "cannot open shared object file");
    if (n > 0) (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(127);
  }
  return p;
}

/* F, a pointer of FN's own type (the prototype's: a call through it converts its arguments as a
   direct one would), set to the library's FN (POSIX: a dlsym result converts to a function pointer) */
#define LOWP_BLAS_GET(f, fn) \
  __typeof__(&fn) f;         \
  do {                       \
    void *p_ = need(#fn);    \
    memcpy(&f, &p_, sizeof f); \
  } while (0)

void cblas_sgemm(OPENBLAS_CONST enum CBLAS_ORDER Order, OPENBLAS_CONST enum CBLAS_TRANSPOSE TransA,
                 OPENBLAS_CONST enum CBLAS_TRANSPOSE TransB, OPENBLAS_CONST blasint M,
                 OPENBLAS_CONST blasint N, OPENBLAS_CONST blasint K, OPENBLAS_CONST float alpha,
                 OPENBLAS_CONST float *A, OPENBLAS_CONST blasint lda, OPENBLAS_CONST float *B,
                 OPENBLAS_CONST blasint ldb, OPENBLAS_CONST float beta, float *C,
                 OPENBLAS_CONST blasint ldc) {
  LOWP_BLAS_GET(f, cblas_sgemm);
  f(Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void cblas_dgemm(OPENBLAS_CONST enum CBLAS_ORDER Order, OPENBLAS_CONST enum CBLAS_TRANSPOSE TransA,
                 OPENBLAS_CONST enum CBLAS_TRANSPOSE TransB, OPENBLAS_CONST blasint M,
                 OPENBLAS_CONST blasint N, OPENBLAS_CONST blasint K, OPENBLAS_CONST double alpha,
                 OPENBLAS_CONST double *A, OPENBLAS_CONST blasint lda, OPENBLAS_CONST double *B,
                 OPENBLAS_CONST blasint ldb, OPENBLAS_CONST double beta, double *C,
                 OPENBLAS_CONST blasint ldc) {
  LOWP_BLAS_GET(f, cblas_dgemm);
  f(Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void openblas_set_num_threads(int num_threads) {
  LOWP_BLAS_GET(f, openblas_set_num_threads);
  f(num_threads);
}

int openblas_get_num_threads(void) {
  LOWP_BLAS_GET(f, openblas_get_num_threads);
  return f();
}

char *openblas_get_config(void) {
  LOWP_BLAS_GET(f, openblas_get_config);
  return f();
}

char *openblas_get_corename(void) {
  LOWP_BLAS_GET(f, openblas_get_corename);
  return f();
}
