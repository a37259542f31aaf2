/* lowp_atomic -- write a file under a temporary name, then rename: no half-written files */

#define _POSIX_C_SOURCE 200809L /* mkstemp, fsync, fileno */

#include "io/atomic.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "status.h"

/* ------------------------------------------------------ private helpers */

static void release(lowp_atomic_t *w) {
  free(w->path);
  free(w->tmp);
  w->path = w->tmp = NULL;
  w->fp = NULL;
}

/* ----------------------------------------------------------- public API */

int lowp_atomic_open(lowp_atomic_t *w, const char *path) {
  size_t len;
  int fd;
  if (!w) return LOWP_EINVAL;
  w->fp = NULL;
  w->path = w->tmp = NULL;
  if (!path || !*path) return LOWP_EINVAL;
  len = strlen(path);
  w->path = malloc(len + 1);
  w->tmp = malloc(len + 12);
  if (!w->path || !w->tmp) { release(w); return LOWP_ENOMEM; }
  memcpy(w->path, path, len + 1);
  memcpy(w->tmp, path, len);
  memcpy(w->tmp + len, ".tmp.XXXXXX", 12); /* same directory as the destination */
  fd = mkstemp(w->tmp);
  if (fd < 0) { release(w); return LOWP_EIO; }
  w->fp = fdopen(fd, "wb");
  if (!w->fp) {
    close(fd);
    unlink(w->tmp);
    release(w);
    return LOWP_EIO;
  }
  return LOWP_OK;
}

int lowp_atomic_commit(lowp_atomic_t *w) {
  int bad;
  if (!w || !w->fp) return LOWP_EIO;
  bad = fflush(w->fp) != 0 || ferror(w->fp) || fsync(fileno(w->fp)) != 0;
  bad |= fclose(w->fp) != 0;
  w->fp = NULL;
  if (!bad) bad = rename(w->tmp, w->path) != 0;
  if (bad) unlink(w->tmp);
  release(w);
  return bad ? LOWP_EIO : LOWP_OK;
}

void lowp_atomic_abort(lowp_atomic_t *w) {
  if (!w) return;
  if (w->fp) fclose(w->fp);
  if (w->tmp) unlink(w->tmp);
  release(w);
}

int lowp_atomic_write(const char *path, const void *buf, size_t len) {
  lowp_atomic_t w;
  int st = lowp_atomic_open(&w, path);
  if (st) return st;
  if (len && fwrite(buf, 1, len, w.fp) != len) {
    lowp_atomic_abort(&w);
    return LOWP_EIO;
  }
  return lowp_atomic_commit(&w);
}
