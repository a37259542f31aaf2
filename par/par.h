/* lowp_par -- ranks of an MPI job (Open MPI), or one process; below tools/ and experiments/, lib/ never sees MPI */
#ifndef LOWP_PAR_H
#define LOWP_PAR_H

/*
 * One binary runs both ways. Built with MPI (CMake found it: LOWP_HAVE_MPI)
 * and started by mpirun/mpiexec/srun (the launcher's environment names a
 * rank), lowp_par_init joins the job; otherwise, or built without MPI, it
 * is one process: rank 0 of 1, and every call below is a cheap no-op.
 * lowp does not link MPI: lowp_par_init opens lowp's MPI module
 * (liblowp_mpi.so, par/par_mpi.h) only to join a job, so that no other
 * start maps MPI's libraries.
 *
 * Failure without hangs or N messages (docs/scale.md): every collective
 * exchange of data is preceded by lowp_par_sync(0), an MPI_Allreduce of the
 * ranks' states. A rank that fails (tools' lowp_cli_die: bad input, unreadable
 * file, out of memory) enters lowp_par_sync(1) instead: the others, at
 * their next sync point, learn that the job failed and exit with status 2
 * without a word; of the failed ranks only the lowest prints its message.
 * No MPI_Abort: every rank finalizes, the job exits 2 with one message.
 *
 * At start (lowp_par_init) the ranks compare their build id (lowp's
 * version, the compile time of this layer): mixed builds are refused. Then
 * their command lines and the files they name (lib/io/agree.h: a SHA-256
 * of every argument and of each input file's size and content): ranks
 * that would run different commands, or the same one on different inputs,
 * are refused before any work (one message naming the difference, exit 2
 * on every rank, nothing written) instead of crashing or hanging in
 * collectives that do not match.
 */

#include <stddef.h>

/* The exit status of a failed job (every rank): 2, the status of bad input
   (LOWP_EXIT_USAGE of tools/cli.h, which asserts that the two agree). par/
   sits below tools/ and experiments/: it prints its own one-line messages
   ("lowp: ...") and exits with this status itself. */
#define LOWP_PAR_EXIT 2

/** @brief Every rank calls this with the input files it will read beyond
    its command line (those a spec names): their sizes and contents are
    compared across ranks as the command line's files are (io/agree.h), and
    a difference ends the job before any work (one message that starts with
    what, exit 2); so does one that is not a regular file (a FIFO, a device:
    what each rank reads from it cannot be compared). A rank that failed
    before (lowp_cli_die) is met first (lowp_par_sync). Nothing in one
    process. */
void lowp_par_agree_files(const char *what, int n, char **paths);

/**
 * @brief Collective, after every rank read the text of an input itself
 * (a spec): from_root = 1 replaces every other rank's *text and *len with
 * rank 0's (the spec "-": under mpirun only rank 0 has the standard input;
 * the others pass NULL, 0); from_root = 0 compares the bytes each rank read
 * (length and SHA-256) and ends the job when two differ (one message
 * naming `what` and the sizes, then hint; exit 2 on every rank): a FIFO,
 * /dev/stdin or a per-rank file cannot make ranks run different specs.
 * A rank that failed before (lowp_cli_die) is met first (lowp_par_sync).
 * Nothing in one process.
 */
void lowp_par_agree_text(const char *what, const char *hint, char **text, size_t *len,
                         int from_root);

/**
 * @brief Test hook (fault injection, docs/scale.md): 1 if the environment
 * variable LOWP_FAULT is "POINT:RANK" with this point and this process's
 * rank (0 in one process). The caller then fails as a real failure at that
 * point would (lowp_cli_die), so the tests can make each rank in turn fail
 * alone at each point and see the whole job end with one message.
 */
int lowp_par_fault(const char *point);

/** @brief Join the MPI job when started by a launcher and built with MPI
    (else one process): open the MPI module (beside the running lowp, else
    where the build made it, or LOWP_MPI_MODULE; one that cannot be loaded:
    one message from rank 0, exit 2), MPI_Init; compare the ranks' build
    ids, then their command lines and input files (refuse a mismatch: one
    message, exit 2). Call first in main. */
void lowp_par_init(int *argc, char ***argv);

/** @brief 1 when a launcher's environment names a rank (mpirun, srun): lowp_par_init will join a job.
    Reads the environment only; callable before lowp_par_init. */
int lowp_par_launched(void);
/** @brief This process's rank (0 when not in a job). */
int lowp_par_rank(void);
/** @brief Number of ranks (1 when not in a job). */
int lowp_par_size(void);
/** @brief 1 when lowp is built with MPI support. */
int lowp_par_built(void);

/** @brief Collective: every rank says whether it failed. Returns 0 when
    none did. When one did: a rank that did not fail exits 2 quietly; a
    failed rank gets 1 if it is the lowest failed rank (it prints the one
    message), else exits 2 quietly. One process: returns failed. */
int lowp_par_sync(int failed);

/** @brief Rows [*lo, *hi) of n items for rank r of size ranks: contiguous
    blocks, the first n % size ranks one item more (uneven counts work). */
void lowp_par_block(size_t n, int r, int size, size_t *lo, size_t *hi);

/** @brief Collective: gather each rank's block of rows (lowp_par_block of
    rows, width doubles each) into all on rank 0 (all may be NULL elsewhere).
    mine is this rank's block. Returns 0, or nonzero on an MPI error. */
int lowp_par_gather_rows(double *all, const double *mine, size_t rows, size_t width);

/** @brief Collective: gather each rank's block of bytes (per item `size`
    bytes, items split by lowp_par_block of n) into all on rank 0. */
int lowp_par_gather_items(void *all, const void *mine, size_t n, size_t size);

/* Every collective below (but gathers and point to point) first runs
   lowp_par_sync(0): a rank that failed between two of them and entered
   lowp_par_sync(1) meets the others there, and the job ends cleanly. */

/** @brief Collective: the largest of every rank's x (wall times). */
double lowp_par_max(double x);

/** @brief Collective: the sum over ranks of x (counts of items, exact up
    to 2^53). */
double lowp_par_sum(double x);

/* ---- work items (lowp run NAME: an experiment's independent items) ----
 * An experiment computes item i of a loop of n independent items only when
 * lowp_par_mine(i) (items are dealt round-robin, i mod N, so that items of
 * different costs in a row spread evenly), into its slot of an array of n
 * results; lowp_par_allgather_items then puts every rank's items in place
 * on every rank: each rank holds what one process would have computed, so
 * what follows (reductions in a fixed order, files) is the same. Under
 * `lowp report` an experiment runs whole on one rank: solo mode makes both
 * calls local. */

/** @brief Solo mode on (1) or off (0): the item calls act on this rank alone. */
void lowp_par_solo(int on);
/** @brief 1 if item i is this rank's (i mod N == rank; always in one process or solo). */
int lowp_par_mine(size_t i);
/** @brief Collective unless solo: items of `size` bytes, each rank's in
    place in all[] (the slots lowp_par_mine gave it), become all items on
    every rank. Returns 0, or 1 on an MPI error or out of memory. */
int lowp_par_allgather_items(void *all, size_t n, size_t size);
/** @brief 1 when the item calls spread over ranks (a job, not solo). */
int lowp_par_spread(void);

/** @brief Point to point: send n bytes to rank `to` / receive a message
    from rank `from` into a new buffer (*buf, *n; free it). 0 or 1. */
int lowp_par_send(const void *buf, size_t n, int to);
int lowp_par_recv(void **buf, size_t *n, int from);

/** @brief Leave the job (MPI_Finalize); also run at exit. */
void lowp_par_end(void);

#endif
