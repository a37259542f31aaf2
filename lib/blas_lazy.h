/* blas_lazy.h -- OpenBLAS opened on its first call (lib/blas_lazy.c defines the cblas and openblas
   functions lowp calls, with cblas.h's prototypes) */
#ifndef LOWP_BLAS_LAZY_H
#define LOWP_BLAS_LAZY_H

/* NAME's address in OpenBLAS, the library opened on the first call (of this or of one of the
   functions blas_lazy.c defines); NULL if it cannot be opened or lacks NAME (cblas_sbgemm in a
   build without bfloat16) */
void *lowp_blas_sym(const char *name);

#endif
