/* lowp_atomic -- write a file under a temporary name, then rename: no half-written files */
#ifndef LOWP_ATOMIC_H
#define LOWP_ATOMIC_H

#include <stddef.h>
#include <stdio.h>

/**
 * @brief An output file being written. The data go to a temporary file in
 * the same directory as the destination (so rename(2) is atomic: the
 * destination is either absent/old or complete, never partial).
 *
 * The temporary is "DEST.tmp.PID.N" ("DIR/.lowp.tmp.PID.N" if DEST's name is
 * too long for the suffix), created with O_EXCL and mode 0666, so
 * the process umask applies exactly as it would to a plain fopen(); when
 * the destination already exists its permission bits are copied (as
 * fopen's truncation would keep them). The destination must be absent or a
 * regular file: a symbolic link, device, FIFO, socket or folder is never
 * replaced.
 */
typedef struct {
  FILE *fp;          /**< write here between open and commit */
  char *path;        /**< destination (owned copy) */
  char *tmp;         /**< temporary name, "DEST.tmp.PID.N" (owned) */
} lowp_atomic_t;

/**
 * @brief Called with live = 1 just BEFORE a temporary file is created
 * (so a program's interrupt handler can remove it even if the signal comes
 * between creation and the return of lowp_atomic_open) and with live = 0
 * once it was renamed or removed. tmp is only valid during the call.
 */
typedef void (*lowp_atomic_watch_t)(const char *tmp, int live);

/**
 * @brief Set the watcher of temporary files (NULL = none). The library
 * keeps one process-wide pointer; set it once at start-up, before threads.
 */
void lowp_atomic_set_watch(lowp_atomic_watch_t fn);

/**
 * @brief Open path for reading if it is a regular file (followed if a link). A FIFO, device, socket or
 * folder is refused without blocking: fopen would wait on a FIFO nobody writes to, and every reader that
 * seeks or reads the file twice needs a regular one.
 * @return the stream; NULL with errno set (open's, or EISDIR for a folder, EINVAL for another type).
 */
FILE *lowp_fopen_regular(const char *path);

/**
 * @brief Check that path can be an output file: not empty, no trailing
 * '/', and absent or a regular file (not followed if it is a link).
 * @return LOWP_OK; LOWP_EINVAL (empty, trailing slash); LOWP_EFILE (exists
 *         and is not a regular file: link, folder, device, FIFO, socket).
 */
int lowp_atomic_check(const char *path);

/**
 * @brief Create the temporary file for path.
 * @return LOWP_OK; LOWP_EINVAL (NULL or empty path, trailing slash);
 *         LOWP_EFILE (the destination exists and is not a regular file);
 *         LOWP_EIO (the directory is missing or not writable); LOWP_ENOMEM.
 */
int lowp_atomic_open(lowp_atomic_t *w, const char *path);

/**
 * @brief Flush, fsync and close the temporary file, then rename it over the
 * destination (after checking again that the destination is absent or a
 * regular file). On any failure the temporary file is removed.
 * @return LOWP_OK, LOWP_EFILE (the destination became a non-regular file)
 *         or LOWP_EIO. w is released either way.
 */
int lowp_atomic_commit(lowp_atomic_t *w);

/**
 * @brief Publish n outputs together or not at all: every temporary is
 * flushed, fsynced and closed first; if any of that fails (a full disk),
 * or a destination became a non-regular file, every temporary is removed
 * and no destination touched. Only then are all renamed into place.
 * @return LOWP_OK; LOWP_EIO or LOWP_EFILE (nothing published). Every w is
 *         released either way.
 */
int lowp_atomic_commit_all(lowp_atomic_t *w, int n);

/** @brief Close and remove the temporary file; the destination is untouched.
    Safe to call on a released or zeroed w. */
void lowp_atomic_abort(lowp_atomic_t *w);

/** @brief Write len bytes to path atomically (open, fwrite, commit).
    @return LOWP_OK, LOWP_EINVAL, LOWP_EFILE, LOWP_EIO, LOWP_ENOMEM. */
int lowp_atomic_write(const char *path, const void *buf, size_t len);

#endif
