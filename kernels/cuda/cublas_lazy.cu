/* lowp_cublas_sym -- cuBLAS and cuBLASLt opened on their first call (kernels/cuda/cublas_lazy.h says why) */

#include "cublas_lazy.h"

#include <dlfcn.h>
#include <stdio.h>

/* LOWP_CUBLAS_PATH and LOWP_CUBLASLT_PATH: the libraries the build found
   (CMakeLists.txt); their sonames are tried when those paths are gone (a
   build copied to another machine, whose loader knows where CUDA is) */
#ifndef LOWP_CUBLAS_PATH
#define LOWP_CUBLAS_PATH "libcublas.so"
#endif
#ifndef LOWP_CUBLASLT_PATH
#define LOWP_CUBLASLT_PATH "libcublasLt.so"
#endif
#ifndef LOWP_CUBLAS_SONAME
#define LOWP_CUBLAS_SONAME "libcublas.so"
#endif
#ifndef LOWP_CUBLASLT_SONAME
#define LOWP_CUBLASLT_SONAME "libcublasLt.so"
#endif

namespace {

thread_local char why[400];

struct Lib {
  void *h;
  char err[300];
  Lib(const char *path, const char *soname) : h(nullptr), err() {
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *e = dlerror();
      snprintf(err, sizeof err, "%s", e ? e : soname);
    }
  }
};

/* opened once, on first use; C++ makes the initialisation thread-safe */
const Lib &lib(int lt) {
  static const Lib blas(LOWP_CUBLAS_PATH, LOWP_CUBLAS_SONAME);
  static const Lib blaslt(LOWP_CUBLASLT_PATH, LOWP_CUBLASLT_SONAME);
  return lt ? blaslt : blas;
}

}  // namespace

void *lowp_cublas_sym(int lt, const char *name) {
  const Lib &l = lt ? lib(1) : lib(0);
  void *p;
  why[0] = '\0';
  if (!l.h) {
    snprintf(why, sizeof why, "cannot open %s: %s", lt ? "cuBLASLt" : "cuBLAS", l.err);
    return nullptr;
  }
  p = dlsym(l.h, name);
  if (!p) snprintf(why, sizeof why, "%s lacks %s", lt ? "cuBLASLt" : "cuBLAS", name);
  return p;
}

const char *lowp_cublas_error(void) { return why; }
