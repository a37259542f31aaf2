/* tspawn -- tests of lowp_spawn: no shell, any folder name, status, log and capture */

#define _GNU_SOURCE /* quick_exit, setsid */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* ---- functions lowp_spawn_fn runs in a child */
/* a handler of the parent's (as lowp's, or MPI_Finalize): in a child it
   would say so and change the exit status to 99 */
static pid_t g_parent;
static void parent_handler(void) {
  static const char msg[] = "PARENT HANDLER RAN\n";
  if (getpid() == g_parent) return;
  (void)!write(2, msg, sizeof msg - 1);
  _exit(99);
}
static void f_return(void *a) { (void)a; printf("hello"); fflush(stdout); }
static void f_exit(void *a) { (void)a; exit(*(int *)a); }
static void f_quick(void *a) { (void)a; quick_exit(5); }
static void f_underscore(void *a) { (void)a; _exit(4); }
static void f_usr1(void *a) { (void)a; raise(SIGUSR1); }
static void f_hang(void *a) { (void)a; for (;;) pause(); }
static void f_flood(void *a) {
  int i;
  (void)a;
  for (i = 0; i < 100000; i++) printf("line %d\n", i);
  fflush(stdout);
  fprintf(stderr, "the end");
}
static void f_grandchild(void *a) {
  pid_t p = fork();
  if (p == 0) { for (;;) pause(); }
  *(volatile pid_t *)a = p;
}

/* the untrusted-code child: how it ended, its output, its group killed */
static void test_spawn_fn(void) {
  lowp_child_t c;
  int code = 3, st;
  pid_t *gc;
  g_parent = getpid();
  atexit(parent_handler);
  st = lowp_spawn_fn(&c, f_return, NULL, 10);
  lowp_test_check(st == LOWP_OK && c.how == LOWP_CHILD_RETURNED && !strcmp(c.tail, "hello") &&
                  c.out_bytes == 5, "returned: %d %d '%s'", st, c.how, c.tail);
  st = lowp_spawn_fn(&c, f_exit, &code, 10);
  lowp_test_check(st == LOWP_OK && c.how == LOWP_CHILD_EXIT_CALLED && c.code == 3 && !c.tail[0],
                  "exit(3) without the parent's handlers: %d %d '%s'", c.how, c.code, c.tail);
  code = 0;
  st = lowp_spawn_fn(&c, f_exit, &code, 10);
  lowp_test_check(st == LOWP_OK && c.how == LOWP_CHILD_EXIT_CALLED && c.code == 0, "exit(0): %d %d",
                  c.how, c.code);
  st = lowp_spawn_fn(&c, f_quick, NULL, 10);
  lowp_test_check(st == LOWP_OK && c.how == LOWP_CHILD_EXIT_CALLED && !c.tail[0], "quick_exit: %d %d '%s'",
                  c.how, c.code, c.tail);
  st = lowp_spawn_fn(&c, f_underscore, NULL, 10);
  lowp_test_check(st == LOWP_OK && c.how == LOWP_CHILD_EXITED && c.code == 4, "_exit(4): %d %d", c.how,
                  c.code);
  st = lowp_spawn_fn(&c, f_usr1, NULL, 10);
  lowp_test_check(st == LOWP_OK && c.how == LOWP_CHILD_SIGNALED && c.code == SIGUSR1, "SIGUSR1: %d %d",
                  c.how, c.code);
  st = lowp_spawn_fn(&c, f_hang, NULL, 0.3);
  lowp_test_check(st == LOWP_OK && c.how == LOWP_CHILD_TIMEOUT, "timeout: %d", c.how);
  st = lowp_spawn_fn(&c, f_flood, NULL, 10);
  lowp_test_check(st == LOWP_OK && c.how == LOWP_CHILD_RETURNED && c.out_bytes > 1000000 &&
                  strlen(c.tail) == LOWP_CHILD_TAIL - 1 && strstr(c.tail, "line 99999\nthe end"),
                  "flood: %zu bytes, tail of %zu", c.out_bytes, strlen(c.tail));
  gc = mmap(NULL, sizeof *gc, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  lowp_test_check(gc != MAP_FAILED, "mmap");
  if (gc != MAP_FAILED) {
    char path[64], state = '?';
    FILE *f;
    *gc = 0;
    st = lowp_spawn_fn(&c, f_grandchild, gc, 10);
    usleep(100000);
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)*gc);
    f = fopen(path, "r");
    if (f) {
      if (fscanf(f, "%*d %*s %c", &state) != 1) state = '?';
      fclose(f);
    } else {
      state = 'X';
    }
    lowp_test_check(st == LOWP_OK && *gc > 0 && (state == 'Z' || state == 'X'),
                    "the child's own child was killed with its group: state %c", state);
    munmap(gc, sizeof *gc);
  }
  lowp_test_check(lowp_spawn_fn(&c, NULL, NULL, 1) == LOWP_EINVAL &&
                  lowp_spawn_fn(&c, f_return, NULL, 0) == LOWP_EINVAL, "bad arguments");
  lowp_test_check(!strcmp(lowp_signal_name(SIGPIPE), "SIGPIPE") && !strcmp(lowp_signal_name(SIGUSR1), "SIGUSR1") &&
                  lowp_signal_name(0) == NULL, "signal names");
}

static void test_seconds(void) {
  static const char *const badv[] = {"abc", "0", "-5", "nan", "inf", " 3", "5s", "", "3 ", "0x10",
                                     "1e10", "-0", "1e-400", "+inf", "0.0"};
  size_t i;
  double v = 0;
  for (i = 0; i < sizeof badv / sizeof badv[0]; i++)
    lowp_test_check(lowp_parse_seconds(&v, badv[i]) != 0, "'%s' refused", badv[i]);
  lowp_test_check(lowp_parse_seconds(&v, "2.5") == 0 && v == 2.5, "2.5");
  lowp_test_check(lowp_parse_seconds(&v, "1e-3") == 0 && v == 1e-3, "1e-3");
  lowp_test_check(lowp_parse_seconds(&v, "1e9") == 0 && v == 1e9, "1e9");
  lowp_test_check(lowp_parse_seconds(&v, NULL) != 0, "NULL");
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
  test_seconds();
  test_spawn_fn();
  lowp_test_check(nlive == 0 && nseen == 8 + 9, "watcher after lowp_spawn_fn: %d live, %d seen", nlive, nseen);
  lowp_test_remove_dir(base);
  return lowp_test_end();
}
