/* lowp_spawn -- run a helper program (gnuplot, git) without a shell, in a given folder */

/*
 * fork + execvp instead of system()/popen(): no shell parses the folder or
 * file names, so names with spaces, quotes, $(), backticks, ;|& or newlines
 * work and cannot inject anything; and the caller keeps its own SIGINT and
 * SIGTERM handling (system() ignores SIGINT in the caller while the child
 * runs). Between fork and exec the child calls only async-signal-safe
 * functions (the caller may have threads).
 */

#define _GNU_SOURCE /* prctl's PR_SET_PDEATHSIG, pipe2, execvp, waitid */

#include "io/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "status.h"

/* lowp__g_spawn_watch: the program's watcher of children (its interrupt
   handler's registry); process-wide like the children themselves. */
static lowp_spawn_watch_t lowp__g_spawn_watch;

/* ------------------------------------------------------ private helpers */

/* The child: async-signal-safe calls only, then exec; 127 on any failure. */
static void child(char *const argv[], const char *dir, const char *log, int out_fd,
                  const sigset_t *old, pid_t parent) {
  int fd;
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGINT, &dfl, NULL);
  sigaction(SIGTERM, &dfl, NULL);
  sigaction(SIGHUP, &dfl, NULL);
  sigaction(SIGPIPE, &dfl, NULL);
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127); /* the caller died before prctl */
#else
  (void)parent;
#endif
  sigprocmask(SIG_SETMASK, old, NULL);
  if (dir && chdir(dir) != 0) _exit(127);
  fd = open("/dev/null", O_RDONLY);
  if (fd < 0 || dup2(fd, 0) < 0) _exit(127);
  if (fd > 2) close(fd);
  fd = log ? open(log, O_WRONLY | O_CREAT | O_APPEND, 0666) : open("/dev/null", O_WRONLY);
  if (fd < 0 || dup2(fd, 2) < 0) _exit(127);
  if (dup2(out_fd >= 0 ? out_fd : fd, 1) < 0) _exit(127);
  if (fd > 2) close(fd);
  if (out_fd > 2) close(out_fd);
  execvp(argv[0], argv);
  _exit(127);
}

/* ----------------------------------------------------------- public API */

void lowp_spawn_set_watch(lowp_spawn_watch_t fn) { lowp__g_spawn_watch = fn; }

int lowp_spawn(int *status, char *const argv[], const char *dir, const char *log,
               char *capture, size_t cap) {
  sigset_t block, old;
  int pfd[2] = {-1, -1};
  pid_t pid, parent = getpid();
  siginfo_t info;
  size_t got = 0;
  int r;
  if (!status || !argv || !argv[0]) return LOWP_EINVAL;
  *status = 127;
  if (capture && cap == 0) return LOWP_EINVAL;
  if (capture && pipe2(pfd, O_CLOEXEC) != 0) return LOWP_EIO;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  pid = fork();
  if (pid == 0) child(argv, dir, log, pfd[1], &old, parent);
  if (pid > 0 && lowp__g_spawn_watch) lowp__g_spawn_watch((long)pid, 1);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (pfd[1] >= 0) close(pfd[1]);
  if (pid < 0) {
    if (pfd[0] >= 0) close(pfd[0]);
    return LOWP_EIO;
  }
  if (capture) {
    for (;;) {
      char sink[256];
      ssize_t n = got + 1 < cap ? read(pfd[0], capture + got, cap - 1 - got)
                                : read(pfd[0], sink, sizeof sink);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (got + 1 < cap) got += (size_t)n;
    }
    capture[got] = '\0';
    close(pfd[0]);
  }
  /* wait without reaping, unwatch, then reap: the pid stays ours while watched */
  memset(&info, 0, sizeof info);
  do r = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT);
  while (r != 0 && errno == EINTR);
  if (lowp__g_spawn_watch) lowp__g_spawn_watch((long)pid, 0);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
  if (r != 0) return LOWP_EIO;
  *status = info.si_code == CLD_EXITED ? (info.si_status & 0xff) : 128 + info.si_status;
  return LOWP_OK;
}
