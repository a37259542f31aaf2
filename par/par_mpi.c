/* par_mpi -- lowp's MPI module (liblowp_mpi.so): the MPI calls of par/par.c, opened only in an MPI job */

/*
 * Built as a module linked against MPI (CMake: MODULE lowp_mpi, placed
 * beside the lowp executable); par/par.c dlopens it when a launcher started
 * lowp and calls MPI only through the table below (par/par_mpi.h). No
 * policy lives here: which exchange, when, and what a failure means are
 * par.c's; this file turns each operation into its MPI call and MPI's
 * status into 0 or 1. Nothing prints or exits.
 */

#include <limits.h>
#include <mpi.h>

#include "par_mpi.h"

static int failed(int st) { return st != MPI_SUCCESS; }

static int init(int *argc, char ***argv, int *rank, int *size) {
  if (MPI_Init(argc, argv) != MPI_SUCCESS) return 1;
  /* errors are statuses from here on, never MPI's abort */
  if (MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) != MPI_SUCCESS) return 1;
  return failed(MPI_Comm_rank(MPI_COMM_WORLD, rank)) || failed(MPI_Comm_size(MPI_COMM_WORLD, size));
}

static void finalize(void) {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
}

static MPI_Op mpi_op(lowp_par_op_t op) {
  return op == LOWP_PAR_MIN ? MPI_MIN : op == LOWP_PAR_MAX ? MPI_MAX : MPI_SUM;
}

static int allreduce_int(int *out, int x, lowp_par_op_t op) {
  return failed(MPI_Allreduce(&x, out, 1, MPI_INT, mpi_op(op), MPI_COMM_WORLD));
}

static int allreduce_double(double *out, double x, lowp_par_op_t op) {
  return failed(MPI_Allreduce(&x, out, 1, MPI_DOUBLE, mpi_op(op), MPI_COMM_WORLD));
}

static int bcast(void *buf, size_t n) {
  if (n > (size_t)INT_MAX) return 1;
  return failed(MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD));
}

static int gather(void *all, const void *mine, size_t n) {
  if (n > (size_t)INT_MAX) return 1;
  return failed(MPI_Gather(mine, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD));
}

static int allgather(void *all, const void *mine, size_t n) {
  if (n > (size_t)INT_MAX) return 1;
  return failed(MPI_Allgather(mine, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, MPI_COMM_WORLD));
}

/* gatherv (to_all 0) or allgatherv (1) in units of a contiguous type of
   `unit` bytes, so that a block of 2^31 bytes or more fits an int count */
static int gatherv_units(void *all, const void *mine, int count, const int *cnt, const int *dsp,
                         size_t unit, int to_all) {
  MPI_Datatype t;
  int st;
  if (unit > (size_t)INT_MAX) return 1;
  st = MPI_Type_contiguous((int)unit, MPI_BYTE, &t);
  if (st == MPI_SUCCESS) st = MPI_Type_commit(&t);
  if (st != MPI_SUCCESS) return 1;
  st = to_all ? MPI_Allgatherv(mine, count, t, all, cnt, dsp, t, MPI_COMM_WORLD)
              : MPI_Gatherv(mine, count, t, all, cnt, dsp, t, 0, MPI_COMM_WORLD);
  MPI_Type_free(&t);
  return failed(st);
}

static int gatherv(void *all, const void *mine, int count, const int *cnt, const int *dsp,
                   size_t unit) {
  return gatherv_units(all, mine, count, cnt, dsp, unit, 0);
}

static int allgatherv(void *all, const void *mine, int count, const int *cnt, const int *dsp,
                      size_t unit) {
  return gatherv_units(all, mine, count, cnt, dsp, unit, 1);
}

static int send(const void *buf, size_t n, int to, int tag) {
  if (n > (size_t)INT_MAX) return 1;
  return failed(MPI_Send(buf, (int)n, MPI_BYTE, to, tag, MPI_COMM_WORLD));
}

static int recv(void *buf, size_t n, int from, int tag) {
  if (n > (size_t)INT_MAX) return 1;
  return failed(MPI_Recv(buf, (int)n, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

static const lowp_par_mpi_t g_ops = {
  LOWP_PAR_MPI_ABI, sizeof(lowp_par_mpi_t), init, finalize, allreduce_int, allreduce_double,
  bcast, gather, allgather, gatherv, allgatherv, send, recv,
};

/* the module's one exported symbol (LOWP_PAR_MPI_ENTRY) */
const lowp_par_mpi_t *lowp_par_mpi_ops(void);
const lowp_par_mpi_t *lowp_par_mpi_ops(void) { return &g_ops; }
