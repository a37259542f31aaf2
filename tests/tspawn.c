/* tspawn -- tests of lowp_spawn: no shell, any folder name, status, log and capture */

#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/spawn.h"
#include "status.h"
#include "testutil.h"

static int nlive, nseen;

static void watch(long pid, int live) {
  nlive += live ? 1 : -1;
  nseen += live && pid > 0;
}

static int exists(const char *dir, const char *name) {
  char p[1200];
  struct stat st;
  snprintf(p, sizeof p, "%s/%s", dir, name);
  return stat(p, &st) == 0;
}

int main(void) {
  /* a folder whose name a shell would expand, split or run */
  static const char *const hostile = "a b'c\"d$(touch INJ1)`touch INJ2`;|&\nx";
  char base[] = "/tmp/tspawn.XXXXXX", dir[1024], buf[256], log[1200];
  int rc, st;
  FILE *f;
  lowp_test_start("tspawn");
  lowp_test_make_tmpdir(base);
  snprintf(dir, sizeof dir, "%s/%s", base, hostile);
  lowp_test_check(mkdir(dir, 0777) == 0, "mkdir hostile");
  lowp_spawn_set_watch(watch);

  /* runs in dir: a relative file name lands there */
  {
    char *argv[] = {"touch", "made-here", NULL};
    st = lowp_spawn(&rc, argv, dir, NULL, NULL, 0);
    lowp_test_check(st == LOWP_OK && rc == 0 && exists(dir, "made-here"),
                    "touch in a hostile folder: st %d rc %d", st, rc);
  }
  /* arguments are passed as they are: nothing is expanded */
  {
    char *argv[] = {"printf", "%s", "$(echo no) `echo no` ;|&", NULL};
    st = lowp_spawn(&rc, argv, dir, NULL, buf, sizeof buf);
    lowp_test_check(st == LOWP_OK && rc == 0 && !strcmp(buf, "$(echo no) `echo no` ;|&"),
                    "capture: '%s'", buf);
  }
  lowp_test_check(!exists(dir, "INJ1") && !exists(dir, "INJ2") && !exists(base, "INJ1") &&
                  !exists(".", "INJ1") && !exists(".", "INJ2"), "no command injected");
  /* capture truncates to cap - 1 bytes */
  {
    char *argv[] = {"printf", "0123456789", NULL};
    char small[5];
    st = lowp_spawn(&rc, argv, NULL, NULL, small, sizeof small);
    lowp_test_check(st == LOWP_OK && !strcmp(small, "0123"), "truncated capture '%s'", small);
  }
  /* stdout and stderr go to the log, appended, relative to dir */
  {
    char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    st = lowp_spawn(&rc, argv, dir, "the log", NULL, 0);
    st |= lowp_spawn(&rc, argv, dir, "the log", NULL, 0);
    snprintf(log, sizeof log, "%s/the log", dir);
    f = fopen(log, "r");
    buf[0] = '\0';
    if (f) {
      size_t n = fread(buf, 1, sizeof buf - 1, f);
      buf[n] = '\0';
      fclose(f);
    }
    lowp_test_check(st == LOWP_OK && rc == 3, "exit status 3: %d", rc);
    lowp_test_check(!strcmp(buf, "out\nerr\nout\nerr\n"), "log: '%s'", buf);
  }
  /* a missing program, a missing folder: 127; a signal: 128 + N */
  {
    char *argv[] = {"lowp-no-such-program", NULL};
    char *argv2[] = {"true", NULL};
    char *argv3[] = {"sh", "-c", "kill -TERM $$", NULL};
    st = lowp_spawn(&rc, argv, NULL, NULL, NULL, 0);
    lowp_test_check(st == LOWP_OK && rc == 127, "missing program: %d", rc);
    st = lowp_spawn(&rc, argv2, "/nonexistent-dir", NULL, NULL, 0);
    lowp_test_check(st == LOWP_OK && rc == 127, "missing folder: %d", rc);
    st = lowp_spawn(&rc, argv3, NULL, NULL, NULL, 0);
    lowp_test_check(st == LOWP_OK && rc == 128 + 15, "killed by SIGTERM: %d", rc);
  }
  lowp_test_check(lowp_spawn(&rc, NULL, NULL, NULL, NULL, 0) == LOWP_EINVAL, "NULL argv");
  lowp_test_check(nlive == 0 && nseen == 8, "watcher: %d live, %d seen", nlive, nseen);
  lowp_test_remove_dir(base);
  return lowp_test_end();
}
