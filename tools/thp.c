/* thp -- the heavy commands' large arrays in transparent huge pages */

/*
 * Why: matmul-precision's exact products and its emulated kernels allocate
 * and free arrays of 8 to 128 MB at every size and seed. glibc serves an
 * allocation over its mmap threshold (at most 32 MB) with a fresh mapping,
 * so every one of them is faulted in again page by page (4 KiB), and on a
 * virtual machine a page fault is dear: in `lowp run matmul-precision`
 * (sizes to 2048, AMD EPYC Zen 5, 2 threads, 2026-11-30) the kernel's
 * fault path took 10% of the samples (perf) and the run 40 s of system
 * time. With glibc.malloc.hugetlb=1 (glibc 2.35, "malloc: Add madvise
 * support for Transparent Huge Pages", manual: "Memory Allocation
 * Tunables") malloc advises MADV_HUGEPAGE on what it maps: the same run
 * took 116 s of CPU instead of 167 (98 user + 18 sys against 127 + 40),
 * 77 s of wall instead of 130, the same results and the same peak memory.
 *
 * The same start also keeps what the program frees for its next
 * allocations: glibc.malloc.mmap_max=0 (no chunk of its own mapping, which
 * free would unmap) and glibc.malloc.trim_threshold=2^40 (the heap's free
 * top is not given back): the kernel zeroes every page it maps in (a huge
 * page too: clear_page was 7% of matmul-precision's samples, whose arrays
 * of every size and seed were mapped and unmapped again), and a page kept
 * is not mapped again. matmul-precision (LOWP_ISA=avx2, one thread, side
 * by side, 2026-12-01): 160.4 -> 149.7 s of CPU (13.4 -> 4.2 s of system
 * time), the same peak (1.73 GB) and the same results. A process that
 * frees memory keeps it until it ends: the commands that start again are
 * the ones that work on their arrays until they end.
 *
 * A tunable is read when the program starts, so it can only be set for a
 * new image: the command starts again, with the same arguments, the same
 * process and the same environment plus that tunable. That costs one exec
 * (about 10 ms of CPU), paid only by the commands that allocate large
 * arrays, once their command line has been checked (a refused one exits 2
 * without it). The environment manifest records GLIBC_TUNABLES as it is.
 */

#define _GNU_SOURCE /* gnu_get_libc_version */

#include "thp.h"

#include "par.h"

#include <gnu/libc-version.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 1 if the kernel backs memory with huge pages only where madvise asks for them */
static int thp_on_request(void) {
  char buf[128];
  size_t n;
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return 0;
  n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strstr(buf, "[madvise]") != NULL;
}

/* 1 if this glibc knows the tunable (2.35 and later) */
static int glibc_has_hugetlb(void) {
  int major = 0, minor = 0;
  if (sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2) return 0;
  return major > 2 || (major == 2 && minor >= 35);
}

static char **g_argv;

/* a copy: main's argv strings are cut at '=' in place afterwards (tools/lowp.c, split_eq) */
void lowp_thp_args(char **argv) {
  size_t n = 0, bytes = 0, i;
  char *p;
  while (argv[n]) bytes += strlen(argv[n++]) + 1;
  g_argv = malloc((n + 1) * sizeof *g_argv + bytes);
  if (!g_argv) return; /* no copy: no second start */
  p = (char *)(g_argv + n + 1);
  for (i = 0; i < n; i++) {
    size_t len = strlen(argv[i]) + 1;
    memcpy(p, argv[i], len);
    g_argv[i] = p;
    p += len;
  }
  g_argv[n] = NULL;
}

/* start again with the tunable (see lowp_thp_reexec) */
static void reexec(void) {
  const char *t = getenv("GLIBC_TUNABLES"), *off = getenv("LOWP_THP");
  char *v, self[PATH_MAX];
  size_t len;
  ssize_t n;
  if (!g_argv || (off && !strcmp(off, "0"))) return;
  if (t && strstr(t, "glibc.malloc.hugetlb")) return; /* set already (by the first start, or by the user) */
  if (!glibc_has_hugetlb() || !thp_on_request()) return;
  /* the program's own path, so that the new image keeps its name (ps, top, pkill lowp) */
  n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0 || (size_t)n >= sizeof self - 1) return;
  self[n] = '\0';
  len = (t && *t ? strlen(t) + 1 : 0) + sizeof LOWP_THP_TUNABLES;
  v = malloc(len);
  if (!v) return;
  if (t && *t) snprintf(v, len, "%s:" LOWP_THP_TUNABLES, t);
  else snprintf(v, len, "%s", LOWP_THP_TUNABLES);
  fflush(NULL); /* nothing written yet by the callers; whatever is buffered is not written twice */
  if (setenv("GLIBC_TUNABLES", v, 1) == 0) {
    execv(self, g_argv);
    /* the exec failed: carry on as before, without the tunable */
    if (t) setenv("GLIBC_TUNABLES", t, 1);
    else unsetenv("GLIBC_TUNABLES");
  }
  free(v);
}

/* after MPI_Init a rank cannot start again: in an MPI job main has done it before (lowp_thp_reexec_job) */
void lowp_thp_reexec(void) {
  if (!lowp_par_launched()) reexec();
}

void lowp_thp_reexec_job(void) {
  if (lowp_par_launched()) reexec();
}
