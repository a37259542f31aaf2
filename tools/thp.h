/* thp.h -- the heavy commands' large arrays in transparent huge pages (tools/thp.c) */
#ifndef LOWP_THP_H
#define LOWP_THP_H

/* What the second start adds to GLIBC_TUNABLES (tools/thp.c): freed memory kept for the next allocations,
   and huge pages (last, so that a manifest's glibc_tunables ends in glibc.malloc.hugetlb=1) */
#define LOWP_THP_TUNABLES \
  "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1099511627776:glibc.malloc.hugetlb=1"

/* Keep a copy of main's argv for lowp_thp_reexec (called first thing in main; starts nothing). */
void lowp_thp_args(char **argv);

/* Called by the commands that allocate arrays of megabytes (run, report, gemm, bench, reveal, twin) once their
   command line is checked and before anything is written: when the kernel gives huge pages only on
   request (/sys/kernel/mm/transparent_hugepage/enabled is "madvise") and glibc's malloc can make that
   request (glibc >= 2.35, tunable glibc.malloc.hugetlb), start this program again, at once, with the
   same arguments and GLIBC_TUNABLES extended by LOWP_THP_TUNABLES. Returns when there is nothing
   to do (the tunable already set by anyone, THP "always" or "never", an older glibc, LOWP_THP=0, an
   MPI job: see lowp_thp_reexec_job) or when the exec fails; never changes a result. */
void lowp_thp_reexec(void);

/* The same, called by main before lowp_par_init for run, report and gemm, in an MPI job only (a
   launcher's environment names a rank): its ranks start again before they join the job, so that they
   run with the tunable as one process does; lowp_thp_reexec does nothing in a job. */
void lowp_thp_reexec_job(void);

#endif
