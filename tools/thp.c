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
 * A tunable is read when the program starts, so it can only be set for a
 * new image: the command starts again, with the same arguments, the same
 * process and the same environment plus that tunable. That costs one exec
 * (a few milliseconds), paid only by the commands that allocate large
 * arrays. The environment manifest records GLIBC_TUNABLES as it is.
 */

#define _GNU_SOURCE /* gnu_get_libc_version */

#include "thp.h"

#include <gnu/libc-version.h>
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

void lowp_thp_reexec(int argc, char **argv) {
  static const char *const heavy[] = {"run", "report", "gemm", "bench"};
  const char *t = getenv("GLIBC_TUNABLES"), *off = getenv("LOWP_THP");
  char *v;
  size_t i, len;
  int is_heavy = 0;
  if (argc < 2) return;
  for (i = 0; i < sizeof heavy / sizeof heavy[0]; i++) is_heavy |= !strcmp(argv[1], heavy[i]);
  if (!is_heavy || (off && !strcmp(off, "0"))) return;
  if (t && strstr(t, "glibc.malloc.hugetlb")) return; /* set already (by the first start, or by the user) */
  if (!glibc_has_hugetlb() || !thp_on_request()) return;
  len = (t && *t ? strlen(t) + 1 : 0) + sizeof "glibc.malloc.hugetlb=1";
  v = malloc(len);
  if (!v) return;
  if (t && *t) snprintf(v, len, "%s:glibc.malloc.hugetlb=1", t);
  else snprintf(v, len, "glibc.malloc.hugetlb=1");
  if (setenv("GLIBC_TUNABLES", v, 1) == 0) {
    execv("/proc/self/exe", argv);
    /* the exec failed (no /proc): carry on as before, without the tunable */
    if (t) setenv("GLIBC_TUNABLES", t, 1);
    else unsetenv("GLIBC_TUNABLES");
  }
  free(v);
}
