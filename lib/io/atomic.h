/* lowp_atomic -- write a file under a temporary name, then rename: no half-written files */
#ifndef LOWP_ATOMIC_H
#define LOWP_ATOMIC_H

#include <stddef.h>
#include <stdio.h>

/**
 * @brief An output file being written. The data go to a temporary file in
 * the same directory as the destination (so rename(2) is atomic: the
 * destination is either absent/old or complete, never partial).
 */
typedef struct {
  FILE *fp;          /**< write here between open and commit */
  char *path;        /**< destination (owned copy) */
  char *tmp;         /**< temporary name, "DEST.tmp.XXXXXX" (owned) */
} lowp_atomic_t;

/**
 * @brief Create the temporary file for path.
 * @return LOWP_OK; LOWP_EINVAL (NULL or empty path); LOWP_EIO (the directory
 *         is missing or not writable); LOWP_ENOMEM.
 */
int lowp_atomic_open(lowp_atomic_t *w, const char *path);

/**
 * @brief Flush, fsync and close the temporary file, then rename it over the
 * destination. On any failure the temporary file is removed.
 * @return LOWP_OK or LOWP_EIO. w is released either way.
 */
int lowp_atomic_commit(lowp_atomic_t *w);

/** @brief Close and remove the temporary file; the destination is untouched.
    Safe to call on a released or zeroed w. */
void lowp_atomic_abort(lowp_atomic_t *w);

/** @brief Write len bytes to path atomically (open, fwrite, commit).
    @return LOWP_OK, LOWP_EINVAL, LOWP_EIO, LOWP_ENOMEM. */
int lowp_atomic_write(const char *path, const void *buf, size_t len);

#endif
