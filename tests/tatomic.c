/* tatomic -- tests of lowp_atomic: temporaries, modes under umask, destinations it refuses, outputs published together or not at all */

#define _POSIX_C_SOURCE 200809L /* symlink, mkfifo, umask */

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
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

/* files in dir whose name holds ".tmp." */
static int temps_in(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  if (!d) return -1;
  while ((e = readdir(d)))
    if (strstr(e->d_name, ".tmp.")) n++;
  closedir(d);
  return n;
}

static int content_is(const char *path, const char *want) {
  char buf[64] = "";
  FILE *f = fopen(path, "rb");
  size_t n;
  if (!f) return 0;
  n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return !strcmp(buf, want);
}

/* issue 19: the outputs of a run are published together or not at all */
static void commit_all(const char *dir) {
  lowp_atomic_t w[3];
  char p[3][600];
  int i, st;
  struct rlimit old, lim;
  for (i = 0; i < 3; i++) {
    FILE *f;
    snprintf(p[i], sizeof p[i], "%s/all%d", dir, i);
    f = fopen(p[i], "wb");
    fputs("old", f);
    fclose(f);
  }
  /* all three written: all three published */
  for (i = 0; i < 3; i++) {
    lowp_test_check(lowp_atomic_open(&w[i], p[i]) == LOWP_OK, "open %d", i);
    fputs("new", w[i].fp);
  }
  lowp_test_check(lowp_atomic_commit_all(w, 3) == LOWP_OK, "commit_all");
  for (i = 0; i < 3; i++) lowp_test_check(content_is(p[i], "new"), "output %d published", i);
  /* the last cannot be written (a file size limit stands for a full disk:
     its buffered bytes fail at the flush): none published */
  for (i = 0; i < 3; i++) {
    lowp_test_check(lowp_atomic_open(&w[i], p[i]) == LOWP_OK, "open %d", i);
    fputs("newer", w[i].fp);
  }
  for (i = 0; i < 100000; i++) fputc('x', w[2].fp);
  getrlimit(RLIMIT_FSIZE, &old);
  lim = old;
  lim.rlim_cur = 4096;
  signal(SIGXFSZ, SIG_IGN);
  setrlimit(RLIMIT_FSIZE, &lim);
  st = lowp_atomic_commit_all(w, 3);
  setrlimit(RLIMIT_FSIZE, &old);
  lowp_test_check(st == LOWP_EIO, "commit_all with one write failing: %d", st);
  for (i = 0; i < 3; i++) lowp_test_check(content_is(p[i], "new"), "output %d not published", i);
  lowp_test_check(temps_in(dir) == 0, "no temporary left: %d", temps_in(dir));
  /* the second destination became a folder: none published */
  for (i = 0; i < 3; i++) {
    lowp_test_check(lowp_atomic_open(&w[i], p[i]) == LOWP_OK, "open %d", i);
    fputs("newest", w[i].fp);
  }
  remove(p[1]);
  mkdir(p[1], 0700);
  lowp_test_check(lowp_atomic_commit_all(w, 3) == LOWP_EFILE, "commit_all over a new folder");
  lowp_test_check(content_is(p[0], "new") && content_is(p[2], "new"), "nothing published");
  lowp_test_check(temps_in(dir) == 0, "no temporary left");
  rmdir(p[1]);
  for (i = 0; i < 3; i++) remove(p[i]);
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
  commit_all(dir);
  lowp_test_check(nlive == 0, "no temporary left watched (%d)", nlive);
  lowp_test_remove_dir(dir);
  return lowp_test_end();
}
