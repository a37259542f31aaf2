/* par_mpi.h -- the operations of lowp's MPI module (par/par_mpi.c, liblowp_mpi.so), which par/par.c opens only in an MPI job */
#ifndef LOWP_PAR_MPI_H
#define LOWP_PAR_MPI_H

/*
 * The lowp executable does not link MPI: a process that no launcher started
 * (nearly every `lowp` run, thousands of them in the test suite) would map
 * and relocate Open MPI's six libraries for nothing, 3.6-5.3 ms of CPU each
 * start (issue 34). par/par.c opens the module when the launcher's
 * environment names a rank and calls MPI through this table of lowp's own
 * operations, the few MPI calls par.c makes, on bytes. Every function
 * returns 0 on success, nonzero on an MPI error (MPI_ERRORS_RETURN: MPI
 * never aborts the job itself). Counts are in bytes, or in units of `unit`
 * bytes where a count of bytes could pass INT_MAX (the gathers).
 */

#include <stddef.h>

/* Raised whenever the table below changes: a module of another build
   beside lowp is refused instead of called with the wrong layout. */
#define LOWP_PAR_MPI_ABI 1

/* The one symbol the module exports: a function returning its table. */
#define LOWP_PAR_MPI_ENTRY "lowp_par_mpi_ops"

/* reductions lowp makes (MPI_MIN, MPI_MAX, MPI_SUM) */
typedef enum { LOWP_PAR_MIN, LOWP_PAR_MAX, LOWP_PAR_SUM } lowp_par_op_t;

typedef struct {
  unsigned abi;     /* LOWP_PAR_MPI_ABI of the module's build */
  size_t size;      /* sizeof (lowp_par_mpi_t) there */
  /* MPI_Init, errors returned from then on (MPI_ERRORS_RETURN on
     MPI_COMM_WORLD); *rank and *size of MPI_COMM_WORLD */
  int (*init)(int *argc, char ***argv, int *rank, int *size);
  /* MPI_Finalize unless finalized already */
  void (*finalize)(void);
  /* *out = op over the ranks of x */
  int (*allreduce_int)(int *out, int x, lowp_par_op_t op);
  int (*allreduce_double)(double *out, double x, lowp_par_op_t op);
  /* n bytes of rank 0's buf into every rank's buf */
  int (*bcast)(void *buf, size_t n);
  /* each rank's n bytes of mine, in rank order, into all (n * size bytes):
     on rank 0 only (gather; all may be NULL elsewhere), on every rank
     (allgather) */
  int (*gather)(void *all, const void *mine, size_t n);
  int (*allgather)(void *all, const void *mine, size_t n);
  /* rank r's cnt[r] units of `unit` bytes at unit dsp[r] of all; count is
     this rank's cnt: on rank 0 only (gatherv), on every rank (allgatherv) */
  int (*gatherv)(void *all, const void *mine, int count, const int *cnt, const int *dsp,
                 size_t unit);
  int (*allgatherv)(void *all, const void *mine, int count, const int *cnt, const int *dsp,
                    size_t unit);
  /* point to point, n bytes (n <= INT_MAX) with a tag; a receive of 0 bytes
     into NULL consumes a message (and fails: truncated) */
  int (*send)(const void *buf, size_t n, int to, int tag);
  int (*recv)(void *buf, size_t n, int from, int tag);
} lowp_par_mpi_t;

typedef const lowp_par_mpi_t *(*lowp_par_mpi_entry_fn)(void);

#endif
