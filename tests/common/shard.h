/* shard.h -- the exhaustive suites (tests/long) over MPI ranks, or one process */
#ifndef LOWP_TEST_SHARD_H
#define LOWP_TEST_SHARD_H

/*
 * Built with MPI (CMake defines LOWP_HAVE_MPI for tests/long when it found
 * MPI) and started by mpirun/srun, a suite joins the job and checks the
 * share of its inputs that lowp_shard_t gives it (rank r of n: the inputs
 * or chunks whose index is r mod n, so every rank sees every binade and
 * sign); the tallies are summed over ranks and rank 0 reports the verdict
 * (exit 1 on a mismatch: mpirun passes it on). A mismatch is printed with
 * its input by the rank that found it. Without a launcher, or without MPI:
 * one process, rank 0 of 1, no MPI call at all. docs/scale.md.
 */

#include <stdint.h>
#include <stdlib.h>

#ifdef LOWP_HAVE_MPI
/* the C API also from C++ (no MPI C++ bindings: Open MPI, MPICH) */
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

typedef struct {
  int rank, size, on;
} lowp_shard_t;

static inline void lowp_shard_init(lowp_shard_t *s, int *argc, char ***argv) {
  s->rank = 0;
  s->size = 1;
  s->on = 0;
#ifdef LOWP_HAVE_MPI
  if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK")) {
    if (MPI_Init(argc, argv) == MPI_SUCCESS) {
      MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
      MPI_Comm_size(MPI_COMM_WORLD, &s->size);
      s->on = 1;
    }
  }
#else
  (void)argc;
  (void)argv;
#endif
}

/** @brief Sum of x over the ranks (every rank gets it). */
static inline uint64_t lowp_shard_sum(const lowp_shard_t *s, uint64_t x) {
#ifdef LOWP_HAVE_MPI
  unsigned long long in = x, out = x;
  if (s->on) MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return out;
#else
  (void)s;
  return x;
#endif
}

static inline void lowp_shard_end(lowp_shard_t *s) {
#ifdef LOWP_HAVE_MPI
  if (s->on) MPI_Finalize();
#endif
  s->on = 0;
}

#endif
