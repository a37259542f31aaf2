/* thp.h -- the heavy commands' large arrays in transparent huge pages (tools/thp.c) */
#ifndef LOWP_THP_H
#define LOWP_THP_H

/* Keep a copy of main's argv for lowp_thp_reexec (called first thing in main; starts nothing). */
void lowp_thp_args(char **argv);

/* Called by the commands that allocate arrays of megabytes (run, report, gemm, bench, reveal, twin) once their
   command line is checked and before anything is written: when the kernel gives huge pages only on
   request (/sys/kernel/mm/transparent_hugepage/enabled is "madvise") and glibc's malloc can make that
   request (glibc >= 2.35, tunable glibc.malloc.hugetlb), start this program again, at once, with the
   same arguments and GLIBC_TUNABLES extended by glibc.malloc.hugetlb=1. Returns when there is nothing
   to do (the tunable already set by anyone, THP "always" or "never", an older glibc, LOWP_THP=0, an
   MPI job: see lowp_thp_reexec_job) or when the exec fails; never changes a result. */
void lowp_thp_reexec(void);

/* The same, called by main before lowp_par_init for run, report and gemm, in an MPI job only (a
   launcher's environment names a rank): its ranks start again before they join the job, so that they
   run with the tunable as one process does; lowp_thp_reexec does nothing in a job. */
void lowp_thp_reexec_job(void);

#endif
