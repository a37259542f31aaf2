/* tatomic -- tests of lowp_atomic: temporaries, modes under umask, destinations it refuses */

#define _POSIX_C_SOURCE 200809L /* symlink, mkfifo, umask */

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/atomic.h"
#include "status.h"
#include "testutil.h"

static char watched[4][512];
static int nlive, nwatch;

/* the watcher sees every temporary created, and its end */
static void watch(const char *tmp, int live) {
  nlive += live ? 1 : -1;
  if (live && nwatch < 4) snprintf(watched[nwatch++], sizeof watched[0], "%s", tmp);
}

static int mode_of(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

static int is_reg(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int main(void) {
  char dir[] = "/tmp/tatomic.XXXXXX", p[600], q[600];
  lowp_atomic_t w;
  int st;
  lowp_test_start("tatomic");
  lowp_test_make_tmpdir(dir);
  lowp_atomic_set_watch(watch);

  /* modes: what a plain fopen would give, 0666 & ~umask */
  snprintf(p, sizeof p, "%s/a", dir);
  umask(022);
  lowp_test_check(lowp_atomic_write(p, "x", 1) == LOWP_OK && mode_of(p) == 0644,
                  "umask 022: mode %o, want 644", mode_of(p));
  remove(p);
  umask(077);
  lowp_test_check(lowp_atomic_write(p, "x", 1) == LOWP_OK && mode_of(p) == 0600,
                  "umask 077: mode %o, want 600", mode_of(p));
  /* replacing a file keeps its mode, as fopen(path, "w") would */
  chmod(p, 0640);
  umask(022);
  lowp_test_check(lowp_atomic_write(p, "yy", 2) == LOWP_OK && mode_of(p) == 0640,
                  "replaced file: mode %o, want 640", mode_of(p));

  /* the watcher saw each temporary come and go, named beside the destination */
  lowp_test_check(nlive == 0 && nwatch == 3, "watcher: %d live, %d seen", nlive, nwatch);
  lowp_test_check(!strncmp(watched[0], p, strlen(p)) && strstr(watched[0], ".tmp.") != NULL,
                  "temporary name '%s'", watched[0]);

  /* refused destinations: a link (to a file, to nothing), a folder, a FIFO,
     a trailing slash; each left as it was */
  snprintf(q, sizeof q, "%s/link", dir);
  lowp_test_check(symlink("a", q) == 0, "symlink");
  lowp_test_check(lowp_atomic_check(q) == LOWP_EFILE, "check: link to a file");
  lowp_test_check(lowp_atomic_write(q, "z", 1) == LOWP_EFILE, "write: link to a file");
  lowp_test_check(!is_reg(q) && mode_of(p) == 0640, "the link and its target unchanged");
  snprintf(q, sizeof q, "%s/dangling", dir);
  lowp_test_check(symlink("nowhere", q) == 0 && lowp_atomic_write(q, "z", 1) == LOWP_EFILE,
                  "write: dangling link");
  lowp_test_check(lowp_atomic_write(dir, "z", 1) == LOWP_EFILE, "write: a folder");
  snprintf(q, sizeof q, "%s/fifo", dir);
  lowp_test_check(mkfifo(q, 0666) == 0 && lowp_atomic_write(q, "z", 1) == LOWP_EFILE,
                  "write: a FIFO");
  snprintf(q, sizeof q, "%s/new/", dir);
  lowp_test_check(lowp_atomic_write(q, "z", 1) == LOWP_EINVAL, "write: trailing slash");
  lowp_test_check(lowp_atomic_write("", "z", 1) == LOWP_EINVAL, "write: empty name");
  lowp_test_check(lowp_atomic_write("/nonexistent-dir/x", "z", 1) == LOWP_EIO,
                  "write: missing folder");

  /* the destination becomes a link between open and commit: not replaced */
  snprintf(q, sizeof q, "%s/late", dir);
  st = lowp_atomic_open(&w, q);
  lowp_test_check(st == LOWP_OK, "open late");
  if (st == LOWP_OK) {
    fputs("data", w.fp);
    lowp_test_check(symlink("a", q) == 0, "symlink late");
    lowp_test_check(lowp_atomic_commit(&w) == LOWP_EFILE, "commit over a new link refused");
    lowp_test_check(!is_reg(q), "the late link kept");
  }
  lowp_test_check(nlive == 0, "no temporary left watched (%d)", nlive);
  lowp_test_remove_dir(dir);
  return lowp_test_end();
}
