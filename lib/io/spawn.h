/* lowp_spawn -- run a helper program (gnuplot, git) without a shell, in a given folder */
#ifndef LOWP_SPAWN_H
#define LOWP_SPAWN_H

#include <stddef.h>

/**
 * @brief Called with live = 1 as soon as a child exists (before it can run
 * anything) and with live = 0 once it has exited, before it is reaped (so
 * its pid cannot have been reused while watched). A program's interrupt
 * handler uses this to stop the children it knows about.
 */
typedef void (*lowp_spawn_watch_t)(long pid, int live);

/** @brief Set the watcher of children (NULL = none); once, at start-up. */
void lowp_spawn_set_watch(lowp_spawn_watch_t fn);

/**
 * @brief Run argv[0] (searched in PATH) with arguments argv (NULL-ended),
 * with no shell in between: no argument is ever interpreted, so any file or
 * folder name is safe. Waits for the child.
 *
 * The child runs in folder dir (NULL = the current one), reads /dev/null,
 * and writes its stdout and stderr, appended, to the file log (a path
 * relative to dir; NULL = /dev/null). If capture is not NULL, the child's
 * stdout instead goes into capture[0..cap), NUL-terminated (truncated to
 * cap - 1 bytes). Every signal is blocked while the child is
 * created, so the caller's handlers never run in the child; the child gets
 * default handlers, and on Linux is killed if the caller dies.
 * @param[out] status the child's exit status (0..255), 128 + N if it was
 *   killed by signal N, 127 if it could not be started (no such program,
 *   dir or log not usable)
 * @return LOWP_OK (the child ran; see status); LOWP_EINVAL (NULL argv);
 *   LOWP_EIO (no child could be created).
 */
int lowp_spawn(int *status, char *const argv[], const char *dir, const char *log,
               char *capture, size_t cap);

/** How a child of lowp_spawn_fn ended. */
enum {
  LOWP_CHILD_RETURNED = 0, /**< the function returned */
  LOWP_CHILD_EXIT_CALLED,  /**< it called exit(code) (or quick_exit) instead */
  LOWP_CHILD_EXITED,       /**< the process ended with _exit(code) (no exit handlers) */
  LOWP_CHILD_SIGNALED,     /**< killed by signal code */
  LOWP_CHILD_TIMEOUT,      /**< still running after the time limit: killed */
  LOWP_CHILD_STOPPED       /**< it stopped (signal code: SIGSTOP, SIGTSTP, ...): killed at once */
};

/** How a call of lowp_spawn_fn was contained (lowp_child_t.contained). */
enum {
  LOWP_CONTAIN_TREE = 0, /**< no PID namespace: the subreaper's walk (lowp_spawn_end_orphans) */
  LOWP_CONTAIN_PIDNS = 1 /**< a PID namespace of its own */
};

/** Size of the kept tail of a child's output (lowp_child_t.tail). */
#define LOWP_CHILD_TAIL 2048

/** @brief What became of a child of lowp_spawn_fn. */
typedef struct {
  int how;          /**< LOWP_CHILD_* */
  int code;         /**< the exit status, or the signal number */
  int contained;    /**< LOWP_CONTAIN_* */
  size_t out_bytes; /**< bytes it wrote to stdout and stderr, in all */
  char tail[LOWP_CHILD_TAIL]; /**< the last of them, NUL-terminated (raw bytes) */
} lowp_child_t;

/**
 * @brief Call fn(arg) in a forked child and wait for it, for code lowp does
 * not trust (plugins): whatever it does, lowp goes on and learns what it was.
 *
 * Containment does not depend on how the code arranges its processes
 * (issue 30): the call's process leads its own process group, and lowp is
 * a subreaper, so what the call leaves behind (in other sessions, at any
 * depth) is lowp's when its parent dies; after the call (also after a
 * timeout, or in an interrupt) lowp_spawn_end_orphans stops and kills all
 * lowp's descendants until none is left. With the environment variable
 * LOWP_CONTAIN=pidns the call also runs in a PID namespace of its own
 * (unshare CLONE_NEWPID as root, else in a new user namespace mapping this
 * user to itself; not the default, because the code then sees pids of its
 * namespace, which CUDA MPS and profilers do not know). Either way, when
 * lowp_spawn_fn returns no process of the call is alive. A worker that
 * stops (SIGSTOP, SIGTSTP, ...) is killed at once and
 * reported LOWP_CHILD_STOPPED. It reads /dev/null; its stdout and stderr go to a pipe that lowp
 * drains, keeping the last LOWP_CHILD_TAIL bytes (a flood of output costs
 * no memory and never reaches lowp's own output); every other descriptor
 * of lowp is closed in it. Signals have their default actions and none is
 * blocked; the call's processes die with lowp (PR_SET_PDEATHSIG).
 *
 * The child never runs lowp's exit handlers (nor MPI_Finalize, nor those
 * of any library lowp loaded): it leaves through _exit when fn returns, and
 * an exit() or quick_exit() called by fn runs, first of all handlers, one
 * the child registered last, which records the status and calls _exit.
 * @param timeout seconds (> 0; inf: no limit)
 * @return LOWP_OK (see r); LOWP_EINVAL; LOWP_EIO (no child, pipe or memory).
 */
int lowp_spawn_fn(lowp_child_t *r, void (*fn)(void *arg), void *arg, double timeout);

/**
 * @brief Kill (SIGKILL) and reap every child of this process but those in
 * keep[0..nkeep) and those it had before its first lowp_spawn_fn (a
 * shell's, exec'd into lowp), with all their descendants: each pass stops
 * (SIGSTOP) every process it finds before reading its children (so none
 * can start more), kills them all and reaps lowp's; passes repeat until
 * none is left, whatever the depth; nothing if lowp_spawn_fn never ran.
 * lowp_spawn_fn makes lowp a subreaper (Linux), so processes a plugin child
 * left behind outside its process group (setsid, a daemon's double fork)
 * are lowp's children once their parents die: lowp_spawn_fn ends them after
 * each call, and an interrupt handler (tools/cleanup.c) before it exits.
 * Async-signal-safe (reads /proc/self/task/ID/children).
 * @return how many of lowp's children it ended, or -1 if some were still
 * there after 100000 passes.
 */
int lowp_spawn_end_orphans(const long *keep, int nkeep);

/**
 * @brief Before publishing what untrusted code could write to: end every
 * process lowp_spawn_fn's calls left (lowp_spawn_end_orphans) and prove
 * that none is left. @return 1 if this process has no child but those it
 * had before its first lowp_spawn_fn; 0 if one could not be ended.
 */
int lowp_spawn_contained(void);

/** @brief "SIGSEGV", "SIGPIPE", ... for a signal number, or NULL if unknown. */
const char *lowp_signal_name(int sig);

/**
 * @brief Strict parse of a time limit in seconds: a decimal number (no
 * blanks, no unit), finite, > 0 and at most 1e9. @return 0 and *out, or -1.
 */
int lowp_parse_seconds(double *out, const char *text);

#endif
