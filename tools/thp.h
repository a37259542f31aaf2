/* thp.h -- the heavy commands' large arrays in transparent huge pages (tools/thp.c) */
#ifndef LOWP_THP_H
#define LOWP_THP_H

/* For the commands that allocate arrays of megabytes (run, report, gemm, bench): when the kernel
   gives huge pages only on request (/sys/kernel/mm/transparent_hugepage/enabled is "madvise") and
   glibc's malloc can make that request (glibc >= 2.35, tunable glibc.malloc.hugetlb), start this
   program again, at once, with GLIBC_TUNABLES extended by glibc.malloc.hugetlb=1. Returns when
   there is nothing to do (another command, the tunable already set by anyone, THP "always" or
   "never", an older glibc, LOWP_THP=0) or when the exec fails; never changes a result. */
void lowp_thp_reexec(int argc, char **argv);

#endif
