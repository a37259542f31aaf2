/* lowp_par -- ranks of an MPI job (Open MPI), or one process; below tools/ and experiments/, lib/ never sees MPI */

#define _POSIX_C_SOURCE 200809L /* dlopen, readlink */

#include "par.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/agree.h"
#include "par_mpi.h"

#ifndef LOWP_VERSION
#define LOWP_VERSION "unknown"
#endif

static int g_rank = 0, g_size = 1, g_solo = 0;

void lowp_par_solo(int on) { g_solo = on; }
int lowp_par_spread(void) { return g_size > 1 && !g_solo; }

int lowp_par_mine(size_t i) {
  return !lowp_par_spread() || i % (size_t)g_size == (size_t)g_rank;
}

int lowp_par_rank(void) { return g_rank; }
int lowp_par_size(void) { return g_size; }

int lowp_par_built(void) {
#ifdef LOWP_HAVE_MPI
  return 1;
#else
  return 0;
#endif
}

int lowp_par_fault(const char *point) {
  const char *f = getenv("LOWP_FAULT"), *colon;
  size_t n;
  char *end;
  long r;
  if (!f || !point || !(colon = strchr(f, ':'))) return 0;
  n = (size_t)(colon - f);
  if (n != strlen(point) || strncmp(f, point, n)) return 0;
  r = strtol(colon + 1, &end, 10);
  return end != colon + 1 && !*end && r == (long)g_rank;
}

void lowp_par_block(size_t n, int r, int size, size_t *lo, size_t *hi) {
  size_t s = size > 0 ? (size_t)size : 1, q = n / s, rem = n % s, ur = (size_t)r;
  *lo = ur * q + (ur < rem ? ur : rem);
  *hi = *lo + q + (ur < rem ? 1 : 0);
}

/* Started by a launcher? Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMIx
   (srun --mpi=pmix, mpirun of Open MPI 5) PMIX_RANK; PMI-1/2 (srun
   --mpi=pmi2, MPICH's hydra) PMI_RANK. Without one, no MPI: a plain
   `lowp ...` never opens the MPI module, nor maps MPI's libraries. */
int lowp_par_launched(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

/* the rank the launcher's environment names, before MPI_Init (0 if none) */
static int launcher_rank(void) {
  const char *r = getenv("OMPI_COMM_WORLD_RANK");
  if (!r) r = getenv("PMIX_RANK");
  if (!r) r = getenv("PMI_RANK");
  return r ? atoi(r) : 0;
}

/* MPI, through lowp's MPI module (par/par_mpi.h), once the job is joined */
static const lowp_par_mpi_t *g_mpi;
static int g_on = 0, g_ended = 0;

/* The job has failed and every rank is on its way out through exit(2).
   mpirun sends SIGTERM to the ranks still running when the first exits
   with a nonzero status; a rank that is finishing its own exit anyway
   ignores it (else its handler, tools/cleanup.h, would print a second
   message). Temporaries are removed by the exit handler as usual. */
static void leaving(void) { signal(SIGTERM, SIG_IGN); }

void lowp_par_end(void) {
  if (!g_on || g_ended) return;
  g_ended = 1;
  g_mpi->finalize();
}

int lowp_par_sync(int failed) {
  int mine, low;
  if (!g_on || g_ended) return failed;
  /* the lowest failed rank, or size when none failed */
  mine = failed ? g_rank : g_size;
  if (g_mpi->allreduce_int(&low, mine, LOWP_PAR_MIN)) {
    fprintf(stderr, "lowp: rank %d: MPI_Allreduce failed\n", g_rank);
    exit(LOWP_PAR_EXIT);
  }
  if (low == g_size) return 0;
  leaving();
  if (failed && low == g_rank) return 1;
  exit(LOWP_PAR_EXIT); /* another rank failed and says why */
}

/* Every rank must run the same command on the same inputs (io/agree.h):
   rank 0 gathers the ranks' records and compares; a difference ends the
   job before any work, one message, exit 2 on every rank. */
static void agree_records(int n, char **args, const char *what, lowp_agree_t *out) {
  lowp_agree_t mine, *all = NULL;
  int r, verdict = 0;
  char msg[1400];
  lowp_agree_record(&mine, n, args);
  if (g_rank == 0) {
    all = calloc((size_t)g_size, sizeof mine);
    verdict = all ? 0 : 2;
  }
  if (g_mpi->bcast(&verdict, sizeof verdict)) verdict = 2;
  if (!verdict && g_mpi->gather(all, &mine, sizeof mine)) verdict = 2;
  for (r = 1; g_rank == 0 && !verdict && r < g_size; r++)
    if (lowp_agree_compare(&all[0], &all[r], r, msg, sizeof msg)) verdict = 1;
  if (g_mpi->bcast(&verdict, sizeof verdict) && !verdict) verdict = 2;
  free(all);
  if (out) *out = mine;
  if (!verdict) return;
  leaving();
  if (g_rank == 0)
    fprintf(stderr, "lowp: %s%s\n", verdict == 1 ? what : "",
            verdict == 1 ? msg : "cannot compare the ranks' command lines or files (out of memory "
            "or MPI failure)");
  exit(LOWP_PAR_EXIT);
}

static void refuse_streams(const lowp_agree_t *mine, int n, char **args, const char *what);

static void agree_args(int argc, char **argv) {
  lowp_agree_t mine;
  agree_records(argc > 1 ? argc - 1 : 0, argv + 1, "", &mine);
  /* lowp check compares the bytes of its spec itself (it may come from a
     pipe: lowp_par_agree_text); every other input must be a regular file */
  if (argc > 1 && strcmp(argv[1], "check") != 0) refuse_streams(&mine, argc - 1, argv + 1, "");
}

/* After the agreement (the same kinds on every rank, so the same verdict):
   an argument that names a FIFO, a socket or a device is read by each rank
   on its own, and what they read cannot be compared: refused. */
static void refuse_streams(const lowp_agree_t *mine, int n, char **args, const char *what) {
  int i;
  for (i = 0; i < n && i < LOWP_AGREE_NARGS; i++) {
    const char *a = args[i] ? args[i] : "", *eq = strchr(a, '=');
    if (mine->kind[i] != LOWP_AGREE_STREAM) continue;
    leaving();
    if (g_rank == 0)
      fprintf(stderr, "lowp: %s%.200s is not a regular file (a FIFO, a socket or a device): each "
              "rank would read it on its own and what they read cannot be compared; in an MPI job "
              "input files must be regular files\n", what, !strncmp(a, "--", 2) && eq ? eq + 1 : a);
    exit(LOWP_PAR_EXIT);
  }
}

void lowp_par_agree_files(const char *what, int n, char **paths) {
  lowp_agree_t mine;
  if (g_size < 2) return;
  /* a rank that failed before (reading or parsing the spec, lowp_cli_die)
     waits in lowp_par_sync(1): meet it there, not in the exchange below */
  lowp_par_sync(0);
  agree_records(n, paths, what, &mine);
  refuse_streams(&mine, n, paths, what);
}

void lowp_par_agree_text(const char *what, const char *hint, char **text, size_t *len,
                         int from_root) {
  struct { uint64_t len; uint8_t sha[32]; } mine, *all;
  int r, bad = 0;
  if (g_size < 2) return;
  lowp_par_sync(0); /* as in lowp_par_agree_files */
  if (from_root) {
    /* rank 0's bytes become every rank's */
    unsigned long long n = g_rank == 0 ? (unsigned long long)*len : 0;
    char *b;
    if (g_mpi->bcast(&n, sizeof n)) bad = 1;
    b = g_rank == 0 ? *text : malloc((size_t)n + 1);
    bad |= !b;
    {
      int any = bad;
      g_mpi->allreduce_int(&any, bad, LOWP_PAR_MAX);
      if (any) {
        if (g_rank != 0) free(b);
        leaving();
        if (g_rank == 0) fprintf(stderr, "lowp: %s: cannot send it to the other ranks (out of memory or MPI failure)\n", what);
        exit(LOWP_PAR_EXIT);
      }
    }
    if (n && g_mpi->bcast(b, (size_t)n)) bad = 1;
    if (g_rank != 0) {
      b[n] = '\0';
      free(*text);
      *text = b;
      *len = (size_t)n;
    }
    if (lowp_par_sync(bad)) {
      fprintf(stderr, "lowp: %s: rank %d: cannot receive it from rank 0 (MPI failure)\n", what, g_rank);
      exit(LOWP_PAR_EXIT);
    }
    return;
  }
  /* each rank read its own: the bytes must be the same (length and SHA-256) */
  memset(&mine, 0, sizeof mine);
  mine.len = (uint64_t)*len;
  lowp_sha256(mine.sha, *text ? *text : "", *len);
  all = calloc((size_t)g_size, sizeof mine);
  if (!all || g_mpi->allgather(all, &mine, sizeof mine)) {
    free(all);
    if (lowp_par_sync(1))
      fprintf(stderr, "lowp: rank %d: cannot compare what the ranks read (out of memory or MPI "
              "failure)\n", g_rank);
    exit(LOWP_PAR_EXIT);
  }
  lowp_par_sync(0); /* every rank holds the table: the same verdict everywhere */
  for (r = 1; r < g_size; r++)
    if (memcmp(&all[0], &all[r], sizeof mine)) break;
  if (r < g_size) {
    leaving();
    if (g_rank == 0)
      fprintf(stderr, "lowp: the ranks of this MPI job read different %s: %llu bytes on rank 0 and "
              "%llu bytes%s on rank %d%s%s; every rank of an MPI job must run the same command on "
              "the same input files\n", what, (unsigned long long)all[0].len,
              (unsigned long long)all[r].len, all[0].len == all[r].len ? " with other content" : "",
              r, hint && *hint ? " " : "", hint ? hint : "");
    free(all);
    exit(LOWP_PAR_EXIT);
  }
  free(all);
}

#ifdef LOWP_HAVE_MPI
#ifndef LOWP_PAR_MPI_PATH
#define LOWP_PAR_MPI_PATH "liblowp_mpi.so"
#endif

/* dlopen PATH into *h; 0, or 1 with the loader's reason in err */
static int open_path(void **h, const char *path, char *err, size_t cap) {
  /* RTLD_GLOBAL: Open MPI opens components of its own that expect its
     libraries' symbols in the global scope */
  *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!*h) snprintf(err, cap, "%s", dlerror());
  return !*h;
}

/* lowp's MPI module (par/par_mpi.h): the file LOWP_MPI_MODULE names when set
   (the only place looked: tests, a lowp moved away from its build), else
   liblowp_mpi.so beside the running lowp (/proc/self/exe) when one is
   there, else the one this build made (LOWP_PAR_MPI_PATH, CMake). Its
   table, or NULL with why in err. */
static const lowp_par_mpi_t *open_module(char *err, size_t cap) {
  const char *env = getenv("LOWP_MPI_MODULE");
  char path[4200];
  void *h = NULL, *p;
  lowp_par_mpi_entry_fn entry;
  const lowp_par_mpi_t *t;
  if (env && *env) {
    if (open_path(&h, env, err, cap)) return NULL;
  } else {
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
    char *slash = NULL;
    if (n > 0) {
      path[n] = '\0';
      slash = strrchr(path, '/');
    }
    if (slash) strcpy(slash + 1, "liblowp_mpi.so"); /* 32 bytes were kept for it */
    if (slash && access(path, F_OK) == 0) {
      if (open_path(&h, path, err, cap)) return NULL;
    } else if (open_path(&h, LOWP_PAR_MPI_PATH, err, cap)) {
      return NULL;
    }
  }
  p = dlsym(h, LOWP_PAR_MPI_ENTRY);
  if (!p) {
    snprintf(err, cap, "%s", dlerror());
    return NULL;
  }
  memcpy(&entry, &p, sizeof entry); /* POSIX: a dlsym result converts to a function pointer */
  t = entry();
  if (!t || t->abi != LOWP_PAR_MPI_ABI || t->size != sizeof *t) {
    snprintf(err, cap, "the module is of another lowp build (interface %u, lowp's %u)",
             t ? t->abi : 0u, (unsigned)LOWP_PAR_MPI_ABI);
    return NULL;
  }
  return t;
}

static void at_exit(void) { lowp_par_end(); }

/* Join the job: open the module (or refuse, one message from rank 0, exit
   2 on every rank) and MPI_Init through it. */
static void join(int *argc, char ***argv) {
  char err[1024];
  g_mpi = open_module(err, sizeof err);
  if (!g_mpi) {
    if (launcher_rank() == 0)
      fprintf(stderr, "lowp: started by an MPI launcher, but lowp's MPI module cannot be loaded: "
              "%s (the build puts liblowp_mpi.so beside the lowp executable; or run lowp without "
              "mpirun)\n", err);
    exit(LOWP_PAR_EXIT);
  }
  if (g_mpi->init(argc, argv, &g_rank, &g_size)) {
    fprintf(stderr, "lowp: MPI_Init failed\n");
    exit(LOWP_PAR_EXIT);
  }
  g_on = 1;
  atexit(at_exit);
}
#else
/* Started by a launcher as several ranks, a build without MPI would run
   the whole work once per rank: refuse (rank 0 by the launcher's
   environment says why); as one rank it is one process. */
static void join(int *argc, char ***argv) {
  const char *n = getenv("OMPI_COMM_WORLD_SIZE");
  (void)argc;
  (void)argv;
  if (!n) n = getenv("PMI_SIZE");
  if (n && atoi(n) > 1) {
    if (launcher_rank() == 0)
      fprintf(stderr, "lowp: started as %d MPI ranks, but this lowp was built without MPI "
              "(install libopenmpi-dev and rebuild; docs/scale.md)\n", atoi(n));
    exit(LOWP_PAR_EXIT);
  }
}
#endif

void lowp_par_init(int *argc, char ***argv) {
  char id[128], *all;
  const char *over = getenv("LOWP_PAR_BUILD_ID");
  int i, bad = -1;
  if (!lowp_par_launched()) return;
  join(argc, argv);
  if (!g_on) return;
  /* the build id: lowp's version and the compile time of this file;
     LOWP_PAR_BUILD_ID replaces it (the tests simulate a mixed job) */
  memset(id, 0, sizeof id);
  snprintf(id, sizeof id, "%s", over ? over : "lowp " LOWP_VERSION " built " __DATE__ " " __TIME__);
  all = calloc((size_t)g_size, sizeof id);
  if (!all || g_mpi->allgather(all, id, sizeof id)) {
    free(all);
    if (lowp_par_sync(1))
      fprintf(stderr, "lowp: rank %d: cannot exchange build ids (out of memory or MPI "
              "failure)\n", g_rank);
    exit(LOWP_PAR_EXIT);
  }
  for (i = 1; i < g_size && bad < 0; i++)
    if (memcmp(all, all + (size_t)i * sizeof id, sizeof id)) bad = i;
  /* every rank saw the same table: the verdict is the same everywhere */
  if (bad >= 0) {
    leaving();
    if (g_rank == 0)
      fprintf(stderr, "lowp: mixed builds in one MPI job: rank 0 runs '%s', rank %d runs '%s'; "
              "run the same lowp binary on every rank\n", all, bad, all + (size_t)bad * sizeof id);
    free(all);
    exit(LOWP_PAR_EXIT);
  }
  free(all);
  agree_args(*argc, *argv);
}

/* counts and displacements of a row split, in units of one row (a
   contiguous MPI type), so that a block of 2^31 doubles or more fits an int */
static int split_counts(int **cnt, int **dsp, size_t rows) {
  int r;
  *cnt = malloc((size_t)g_size * sizeof **cnt);
  *dsp = malloc((size_t)g_size * sizeof **dsp);
  if (!*cnt || !*dsp || rows > (size_t)INT_MAX) return 1;
  for (r = 0; r < g_size; r++) {
    size_t lo, hi;
    lowp_par_block(rows, r, g_size, &lo, &hi);
    (*cnt)[r] = (int)(hi - lo);
    (*dsp)[r] = (int)lo;
  }
  return 0;
}

static int gather_units(void *all, const void *mine, size_t n, size_t unit_bytes) {
  int *cnt = NULL, *dsp = NULL, st;
  size_t lo, hi;
  if (split_counts(&cnt, &dsp, n) || unit_bytes > (size_t)INT_MAX) {
    free(cnt); free(dsp);
    return 1;
  }
  lowp_par_block(n, g_rank, g_size, &lo, &hi);
  st = g_mpi->gatherv(all, mine, (int)(hi - lo), cnt, dsp, unit_bytes);
  free(cnt); free(dsp);
  return st;
}

int lowp_par_gather_rows(double *all, const double *mine, size_t rows, size_t width) {
  if (!g_on) {
    if (all != mine) memcpy(all, mine, rows * width * sizeof *all);
    return 0;
  }
  return gather_units(all, mine, rows, width * sizeof(double));
}

int lowp_par_gather_items(void *all, const void *mine, size_t n, size_t size) {
  if (!g_on) {
    if (all != mine) memcpy(all, mine, n * size);
    return 0;
  }
  return gather_units(all, mine, n, size);
}

double lowp_par_max(double x) {
  double y = x;
  if (g_on) lowp_par_sync(0); /* as in lowp_par_allgather_items */
  if (g_on) g_mpi->allreduce_double(&y, x, LOWP_PAR_MAX);
  return y;
}

double lowp_par_sum(double x) {
  double y = x;
  if (g_on) lowp_par_sync(0); /* as in lowp_par_allgather_items */
  if (g_on) g_mpi->allreduce_double(&y, x, LOWP_PAR_SUM);
  return y;
}


int lowp_par_allgather_items(void *all, size_t n, size_t size) {
  /* rank r's items are r, r + N, r + 2N, ...: packed, exchanged, unpacked */
  int *cnt = NULL, *dsp = NULL, st = 0, r;
  size_t i, j, mine = 0, tot = 0;
  char *pack = NULL, *got = NULL;
  if (!g_on || !lowp_par_spread()) return 0;
  /* a rank may have left the experiment with a failure: learn it here,
     where it waits in lowp_par_sync(1), instead of in a gather it never joins */
  lowp_par_sync(0);
  cnt = malloc((size_t)g_size * sizeof *cnt);
  dsp = malloc((size_t)g_size * sizeof *dsp);
  for (r = 0; cnt && dsp && r < g_size; r++) {
    size_t c = n > (size_t)r ? (n - (size_t)r + (size_t)g_size - 1) / (size_t)g_size : 0;
    if (c > (size_t)INT_MAX || tot > (size_t)INT_MAX) { st = 1; break; }
    cnt[r] = (int)c;
    dsp[r] = (int)tot;
    tot += c;
    if (r == g_rank) mine = c;
  }
  pack = malloc(mine * size + 1);
  got = malloc(n * size + 1);
  {
    /* all ranks go on, or all give up: none is left in the exchange alone */
    int bad = (!cnt || !dsp || !pack || !got || st || size > (size_t)INT_MAX), any = bad;
    g_mpi->allreduce_int(&any, bad, LOWP_PAR_MAX);
    if (any) {
      free(cnt); free(dsp); free(pack); free(got);
      return 1;
    }
  }
  for (j = 0, i = (size_t)g_rank; i < n; i += (size_t)g_size, j++)
    memcpy(pack + j * size, (char *)all + i * size, size);
  st = g_mpi->allgatherv(got, pack, (int)mine, cnt, dsp, size);
  if (!st)
    for (r = 0; r < g_size; r++)
      for (j = 0; j < (size_t)cnt[r]; j++)
        memcpy((char *)all + ((size_t)r + j * (size_t)g_size) * size,
               got + ((size_t)dsp[r] + j) * size, size);
  free(cnt); free(dsp); free(pack); free(got);
  return st;
}

/* messages in chunks of 2^30 bytes after their length (an int counts) */
#define CHUNK ((size_t)1 << 30)

int lowp_par_send(const void *buf, size_t n, int to) {
  unsigned long long len = n;
  size_t off;
  if (!g_on) return 1;
  if (g_mpi->send(&len, sizeof len, to, 1)) return 1;
  for (off = 0; off < n; off += CHUNK) {
    size_t c = n - off < CHUNK ? n - off : CHUNK;
    if (g_mpi->send((const char *)buf + off, c, to, 2)) return 1;
  }
  return 0;
}

int lowp_par_recv(void **buf, size_t *n, int from) {
  unsigned long long len;
  size_t off;
  char *b;
  *buf = NULL;
  *n = 0;
  if (!g_on) return 1;
  if (g_mpi->recv(&len, sizeof len, from, 1)) return 1;
  b = malloc(len ? (size_t)len : 1);
  if (!b) {
    /* the sender's chunks are still matched (a receive of 0 bytes consumes
       a message and says MPI_ERR_TRUNCATE), so that it is not left blocked
       in its send while this rank reports the failure */
    for (off = 0; off < len; off += CHUNK)
      g_mpi->recv(NULL, 0, from, 2);
    return 1;
  }
  for (off = 0; off < len; off += CHUNK) {
    size_t c = len - off < CHUNK ? (size_t)len - off : CHUNK;
    if (g_mpi->recv(b + off, c, from, 2)) {
      free(b);
      return 1;
    }
  }
  *buf = b;
  *n = (size_t)len;
  return 0;
}
