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
 * cap - 1 bytes). SIGINT, SIGTERM and SIGHUP are blocked while the child is
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

#endif
