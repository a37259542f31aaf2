/* lowp_atomic -- write a file under a temporary name, then rename: no half-written files */

#define _POSIX_C_SOURCE 200809L /* fsync, fileno, fdopen, lstat, fchmod */

#include "io/atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "status.h"

/* lowp__g_atomic_watch: the program's watcher of temporaries (its interrupt
   handler's registry). Process-wide because a temporary is a process-wide
   resource; set once at start-up (lowp_atomic_set_watch). */
static lowp_atomic_watch_t lowp__g_atomic_watch;

/* lowp__g_atomic_seq: makes temporary names unique within the process (the
   PID makes them unique between processes); O_EXCL catches the rest. */
static unsigned long lowp__g_atomic_seq;

/* ------------------------------------------------------ private helpers */

static void release(lowp_atomic_t *w) {
  free(w->path);
  free(w->tmp);
  w->path = w->tmp = NULL;
  w->fp = NULL;
}

static void watch(const char *tmp, int live) {
  if (lowp__g_atomic_watch) lowp__g_atomic_watch(tmp, live);
}

/* remove a temporary; one that could not be removed (its folder made
   read-only meanwhile) stays watched, for the program to retry at exit */
static void drop(const char *tmp) {
  if (unlink(tmp) == 0 || errno == ENOENT) watch(tmp, 0);
}

/* ----------------------------------------------------------- public API */

FILE *lowp_fopen_regular(const char *path) {
  struct stat st;
  FILE *f = NULL;
  int fd, fl, e;
  if (!path) { errno = EINVAL; return NULL; }
  /* O_NONBLOCK: opening a FIFO for reading would wait for a writer */
  fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return NULL;
  e = fstat(fd, &st) != 0 ? errno : S_ISREG(st.st_mode) ? 0 : S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
  if (e) {
    close(fd);
    errno = e;
    return NULL;
  }
  fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0 || !(f = fdopen(fd, "rb"))) {
    e = errno;
    close(fd);
    errno = e;
    return NULL;
  }
  return f;
}

void lowp_atomic_set_watch(lowp_atomic_watch_t fn) { lowp__g_atomic_watch = fn; }

int lowp_atomic_check(const char *path) {
  struct stat st;
  size_t len;
  if (!path || !*path) return LOWP_EINVAL;
  len = strlen(path);
  if (path[len - 1] == '/') return LOWP_EINVAL;
  if (lstat(path, &st) != 0) return LOWP_OK; /* absent (or unreachable: open says) */
  return S_ISREG(st.st_mode) ? LOWP_OK : LOWP_EFILE;
}

int lowp_atomic_open(lowp_atomic_t *w, const char *path) {
  size_t len;
  int fd = -1, tries, st;
  struct stat dst;
  if (!w) return LOWP_EINVAL;
  w->fp = NULL;
  w->path = w->tmp = NULL;
  if ((st = lowp_atomic_check(path)) != LOWP_OK) return st;
  len = strlen(path);
  w->path = malloc(len + 1);
  w->tmp = malloc(len + 64);
  if (!w->path || !w->tmp) { release(w); return LOWP_ENOMEM; }
  memcpy(w->path, path, len + 1);
  for (tries = 0; tries < 100 && fd < 0; tries++) {
    /* same directory as the destination, so the final rename is atomic;
       "DIR/.lowp.tmp.PID.N" when DEST's own name is too long for a suffix */
    const char *slash = strrchr(path, '/');
    if (tries < 50)
      snprintf(w->tmp, len + 64, "%s.tmp.%ld.%lu", path, (long)getpid(), ++lowp__g_atomic_seq);
    else
      snprintf(w->tmp, len + 64, "%.*s.lowp.tmp.%ld.%lu", slash ? (int)(slash - path + 1) : 0,
               path, (long)getpid(), ++lowp__g_atomic_seq);
    watch(w->tmp, 1);
    fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666); /* umask applies */
    if (fd < 0) {
      int e = errno;
      watch(w->tmp, 0);
      if (e == ENAMETOOLONG && tries < 50) tries = 49; /* next: the short name */
      else if (e != EEXIST) { errno = e; break; }
    }
  }
  if (fd < 0) { release(w); return LOWP_EIO; }
  /* replacing a file keeps its permission bits, as fopen(path, "w") would */
  if (stat(path, &dst) == 0 && S_ISREG(dst.st_mode)) (void)fchmod(fd, dst.st_mode & 0777);
  w->fp = fdopen(fd, "wb");
  if (!w->fp) {
    close(fd);
    unlink(w->tmp);
    watch(w->tmp, 0);
    release(w);
    return LOWP_EIO;
  }
  return LOWP_OK;
}

/* flush, fsync, close the temporary; then, the destination may have
   changed since open: never rename over a link, device, FIFO, socket or
   folder */
static int finish(lowp_atomic_t *w) {
  int bad;
  if (!w->fp) return LOWP_EIO;
  bad = fflush(w->fp) != 0 || ferror(w->fp) || fsync(fileno(w->fp)) != 0;
  bad |= fclose(w->fp) != 0;
  w->fp = NULL;
  if (bad) return LOWP_EIO;
  return lowp_atomic_check(w->path) == LOWP_OK ? LOWP_OK : LOWP_EFILE;
}

int lowp_atomic_commit_all(lowp_atomic_t *w, int n) {
  int i, st = LOWP_OK;
  if (n < 0 || (n && !w)) return LOWP_EINVAL;
  for (i = 0; i < n && !st; i++) st = finish(&w[i]);
  if (st) {
    for (i = 0; i < n; i++) lowp_atomic_abort(&w[i]);
    return st;
  }
  for (i = 0; i < n; i++) {
    if (rename(w[i].tmp, w[i].path) != 0) {
      st = LOWP_EIO;
      drop(w[i].tmp);
    } else {
      watch(w[i].tmp, 0);
    }
    release(&w[i]);
  }
  return st;
}

int lowp_atomic_commit(lowp_atomic_t *w) {
  int st;
  if (!w || !w->fp) return LOWP_EIO;
  st = finish(w);
  if (!st && rename(w->tmp, w->path) != 0) st = LOWP_EIO;
  if (st) drop(w->tmp);
  else watch(w->tmp, 0);
  release(w);
  return st;
}

void lowp_atomic_abort(lowp_atomic_t *w) {
  if (!w) return;
  if (w->fp) fclose(w->fp);
  if (w->tmp) drop(w->tmp);
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
