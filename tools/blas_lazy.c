/* blas_lazy -- the lowp executable opens OpenBLAS on its first call (dlopen), not when it starts */

/*
 * Linked as an ordinary library, OpenBLAS (Debian's build for every x86
 * core, 36 MB, about 13,900 relocations, each a symbol lookup) is mapped,
 * relocated and initialised (its thread pool started) at every start of
 * lowp: `lowp --help` took 22 ms of CPU with it, 11 without (docs/speed-log.md, issue
 * 34 item 4), in every one of the test suite's thousands of runs, though
 * most of them (bad input, --help, formats, convert) never multiply a
 * matrix. The lowp executable alone does not link it: the functions
 * of it that lowp calls are defined here, with cblas.h's own prototypes,
 * so lib/, kernels/ and experiments/ call them unchanged; the first call
 * opens the library (once, from any thread) and each forwards to the
 * library's function. liblowp.so (Python), liblowp.a's users and the test
 * programs link OpenBLAS as before (CMakeLists.txt): this is a choice of
 * the program, never of lib/, which does not print or exit.
 *
 * The library opened is the one CMake found: LOWP_OPENBLAS_SONAME, the
 * name a linked program records, resolved by the loader as it was, then
 * LOWP_OPENBLAS_PATH, the file itself. RTLD_GLOBAL puts its symbols in the
 * program's global scope, where a linked library's are: code that looks
 * up an optional function with dlsym(dlopen(NULL)) (cblas_sbgemm,
 * kernels/train/amp_layer.c) finds it once the library is open. lowp could
 * not start without the library before; now the first call that needs it
 * fails the way the loader did: one line, exit status 127 (the loader's
 * for a missing library; the program's exit handlers run). That is no
 * input lowp could refuse: a dependency of the build removed after it.
 */

#define _POSIX_C_SOURCE 200809L /* dlopen, dlsym, pthread_once */

#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Written once, under g_once, then only read: the library's handle, and
   why the loader refused it */
static void *g_lib;
static char g_why[512];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
/* held by the thread that reports a failure until it has exited: a second
   thread that fails meanwhile waits here, so that exit runs once */
static pthread_mutex_t g_dying = PTHREAD_MUTEX_INITIALIZER;

static void open_blas(void) {
  g_lib = dlopen(LOWP_OPENBLAS_SONAME, RTLD_NOW | RTLD_GLOBAL);
  if (!g_lib) {
    const char *e = dlerror();
    snprintf(g_why, sizeof g_why, "%s", e ? e : LOWP_OPENBLAS_SONAME);
    g_lib = dlopen(LOWP_OPENBLAS_PATH, RTLD_NOW | RTLD_GLOBAL);
  }
}

/* the library's function NAME, or the loader's failure (see above): one
   line, worded as the loader words it, and exit 127 */
static void *need(const char *name) {
  void *p;
  pthread_once(&g_once, open_blas);
  p = g_lib ? dlsym(g_lib, name) : NULL;
  if (p) return p;
  pthread_mutex_lock(&g_dying);
  if (g_lib)
    fprintf(stderr, "lowp: symbol lookup error: %s: undefined symbol: %s\n", LOWP_OPENBLAS_SONAME,
            name);
  else
    fprintf(stderr, "lowp: error while loading shared libraries: %s\n", g_why);
  exit(127);
}

/* F, a pointer of FN's own type (the prototype's: a call through it converts its arguments as a
   direct one would), set to the library's FN (POSIX: a dlsym result converts to a function pointer) */
#define LOWP_BLAS_GET(f, fn)   \
  __typeof__(&fn) f;           \
  do {                         \
    void *p_ = need(#fn);      \
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
