/* lowp_cleanup -- this process's temporaries and children: removed and stopped on error or signal */
#ifndef LOWP_CLEANUP_H
#define LOWP_CLEANUP_H

/*
 * Every temporary file or folder lowp creates, and every child it runs, is
 * registered here. On exit (also exit(2) from lowp_cli_die) the registered
 * temporaries are removed; on SIGINT, SIGTERM or SIGHUP, and on every other
 * signal whose default action ends a process (SIGQUIT, SIGUSR1, SIGUSR2,
 * SIGALRM, SIGXCPU, real-time signals, ...; signal(7)) the handler stops
 * the children (SIGKILL, then waits for them, and everything they left:
 * lowp_spawn_end_orphans), removes the temporaries,
 * prints one line and exits 128 + the signal number (130, 143, 129; SIGPIPE,
 * a reader that closed lowp's output, exits 141 without a message). A
 * signal that dumps core (SIGQUIT, SIGABRT, a fault) is raised again after
 * the cleanup, so lowp ends as it would have (status, core file). Signals
 * other than SIGINT, SIGTERM, SIGHUP, SIGPIPE and SIGQUIT are left to a
 * handler installed before main (a sanitizer's, a profiler's) and stay
 * ignored if lowp was started with them ignored (SIGXFSZ: a file over the
 * limit is then a write error, said).
 *
 * The handler does all that itself, with async-signal-safe calls only
 * (kill, waitpid, open, getdents64, unlinkat, write, _exit), so it works
 * wherever the signal lands, also in long computations that never look at
 * a flag (MPFR loops, OpenMP regions). A signal delivered to another thread
 * is forwarded to the main thread, which is stopped where it is, so nothing
 * creates files while the handler removes them. The only flag: during
 * lowp_cleanup_commit_begin/end (the final renames of a publication, a few
 * system calls) a signal is held: if it came before the rename, nothing is
 * published; if it came during it, the output is complete and lowp then
 * exits 128 + N all the same.
 *
 * Register from the main thread only.
 */

/** Kinds of temporaries. */
enum {
  LOWP_TEMP_FILE = 0, /**< unlink */
  LOWP_TEMP_TREE = 1, /**< remove the folder and everything in it (links not followed) */
  LOWP_TEMP_DIR = 2   /**< rmdir only if empty (parent folders lowp created) */
};

/** @brief The signals the handler acts on (after lowp_cleanup_install):
    what a publication holds while it renames (tools/cmd_check.c). */
#include <signal.h>
void lowp_cleanup_signals(sigset_t *set);

/** @brief Install the handlers (SIGINT, SIGTERM, SIGHUP, SIGPIPE and the
    other terminating signals), the exit
    handler, and the lib watchers (lowp_atomic, lowp_spawn). Call once,
    first thing in main. */
void lowp_cleanup_install(void);

/** @brief Register path as a temporary of the given kind BEFORE creating
    it. @return a handle >= 0, or -1 if the path is too long or the registry
    is full (then do not create it). */
int lowp_temp_add(const char *path, int kind);

/** @brief Register (live = 1, as soon as fork returned, signals blocked) or
    forget (live = 0, once it exited, before it is reaped) a child this
    process started itself: an interrupt stops it before the temporaries
    go. @return 0, or -1 if the registry is full (then do not start it). */
int lowp_cleanup_child(long pid, int live);

/** @brief Forget a temporary (it was published or removed). -1 is ignored. */
void lowp_temp_drop(int id);

/** @brief Remove a temporary now (as an interrupt would) and forget it. */
void lowp_temp_remove(int id);

/** @brief rm -rf path with async-signal-safe calls (links are removed, not
    followed). @return 0 if path is gone, -1 otherwise. */
int lowp_cleanup_rmtree(const char *path);

/** @brief Hold the handled signals during the final renames of a
    publication; commit_end acts on a held one (exits 128 + N after removing
    what is still registered). */
void lowp_cleanup_commit_begin(void);
void lowp_cleanup_commit_end(void);
/** @brief 1 if a signal is being held (between commit_begin and _end):
    the caller should not publish, and call commit_end at once. */
int lowp_cleanup_held(void);

/* ------------------------------------------------ the standard streams */

/*
 * lowp_cleanup_install also looks at the standard streams (issue 19): a
 * closed standard input or error is opened on /dev/null, so that no file
 * lowp opens later lands on descriptor 0 or 2 (and stdin reads say "closed");
 * a closed standard output ends the run at once (exit 2, one message): what
 * lowp prints would be lost. Every write to stdout is checked at the end:
 * lowp_stdout_finish flushes and closes it, and the exit handler does the
 * same for a command that leaves through exit().
 */

/** @brief 1 if the standard input was closed when lowp started. */
int lowp_stdin_closed(void);

/**
 * @brief Flush and close stdout. If that fails, or any write to it failed
 * (a full disk, /dev/full, an I/O error), say so (one line on stderr,
 * naming cmd, unless rc is LOWP_EXIT_USAGE already: the command said what
 * failed) and return LOWP_EXIT_USAGE; else return rc.
 */
int lowp_stdout_finish(const char *cmd, int rc);

/** @brief The run ends with a message of its own (lowp_cli_die): the exit
    handler does not add one about stdout. */
void lowp_stdout_discard(void);

#endif
