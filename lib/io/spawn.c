/* lowp_spawn -- run a helper program (gnuplot, git) without a shell, in a given folder */

/*
 * fork + execvp instead of system()/popen(): no shell parses the folder or
 * file names, so names with spaces, quotes, $(), backticks, ;|& or newlines
 * work and cannot inject anything; and the caller keeps its own SIGINT and
 * SIGTERM handling (system() ignores SIGINT in the caller while the child
 * runs). Between fork and exec the child calls only async-signal-safe
 * functions (the caller may have threads).
 */

#define _GNU_SOURCE /* prctl, pipe2, execvp, waitid, on_exit, close_range, unshare */

#include "io/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "format/number.h"
#include "status.h"

/* lowp__g_spawn_watch: the program's watcher of children (its interrupt
   handler's registry); process-wide like the children themselves. */
static lowp_spawn_watch_t lowp__g_spawn_watch;

/* ------------------------------------------------------ private helpers */

/* The child: async-signal-safe calls only, then exec; 127 on any failure. */
static void child(char *const argv[], const char *dir, const char *log, int out_fd,
                  const sigset_t *old, pid_t parent) {
  int fd, sig;
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (sig = 1; sig < NSIG; sig++) /* none of the caller's handlers runs here */
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL);
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

/* fork with every signal blocked (the caller's handlers never run in the
   child); the caller restores *old once the child is watched */
static pid_t fork_blocked(sigset_t *old) {
  sigset_t block;
  sigfillset(&block);
  pthread_sigmask(SIG_BLOCK, &block, old);
  return fork();
}

/* ----------------------------------------------------------- public API */

void lowp_spawn_set_watch(lowp_spawn_watch_t fn) { lowp__g_spawn_watch = fn; }

int lowp_spawn(int *status, char *const argv[], const char *dir, const char *log,
               char *capture, size_t cap) {
  sigset_t old;
  int pfd[2] = {-1, -1};
  pid_t pid, parent = getpid();
  siginfo_t info;
  size_t got = 0;
  int r;
  if (!status || !argv || !argv[0]) return LOWP_EINVAL;
  *status = 127;
  if (capture && cap == 0) return LOWP_EINVAL;
  if (capture && pipe2(pfd, O_CLOEXEC) != 0) return LOWP_EIO;
  pid = fork_blocked(&old);
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

static void put_num(char *p, long v) { /* decimal, NUL-terminated */
  char t[24];
  int k = 0;
  do t[k++] = (char)('0' + v % 10); while ((v /= 10) > 0);
  while (k) *p++ = t[--k];
  *p = '\0';
}

/* -------------------------------------------- untrusted code in a child */

/*
 * Containment (issue 30), independent of how the untrusted code arranges
 * its processes (sessions, groups, depth). lowp is a subreaper: whatever a
 * call leaves behind becomes lowp's child when its parent dies, and
 * lowp_spawn_end_orphans stops (SIGSTOP) every descendant it finds before
 * reading its children, kills them all, reaps lowp's, and repeats until
 * lowp has no child left but its own. No child means no descendant: the
 * proof of emptiness the publication waits for (lowp_spawn_contained).
 * This is the default: the worker's pids stay the system's (CUDA MPS and
 * profilers know processes by pid; a kernel's logs name real pids).
 * With LOWP_CONTAIN=pidns the call also runs in a PID namespace of its own
 * (unshare CLONE_NEWPID as root, else inside a new user namespace mapping
 * this user to itself; the walk alone where neither is allowed):
 *   lowp -> C (the call's process) -> N (the namespace's init) -> W (fn)
 * When N exits the kernel kills every process of the namespace, and N's
 * exit completes only once none is left (pid_namespaces(7)); C waits for
 * N. N waits for W with WUNTRACED; without a namespace C is the worker and
 * lowp watches it the same way: a worker that stops itself (SIGSTOP,
 * SIGTSTP) is killed and reported at once, not left to the time limit.
 */

/* The page a call's processes share with lowp: how the worker ended. */
typedef struct {
  volatile int returned;    /* fn returned */
  volatile int exit_called; /* exit()/quick_exit() ran the guard */
  volatile int exit_code;
  volatile int w_done;      /* the supervisor saw the worker end: w_status holds how */
  volatile int w_status;    /* its wait status */
  volatile int w_stopped;   /* it stopped (signal number): the supervisor killed it */
  volatile int ns;          /* the worker ran in a PID namespace of its own */
} fn_state_t;

static fn_state_t *lowp__g_fn_state; /* in the worker only */

/* Registered last in the worker, so run first by exit(): no handler of
   lowp's or of its libraries (MPI_Finalize, OpenMP, sanitizers) runs. */
static void exit_guard(int status, void *arg) {
  fn_state_t *st = arg;
  fflush(stdout); /* what it printed reaches the pipe (lowp flushed before the fork) */
  fflush(stderr);
  st->exit_called = 1;
  st->exit_code = status & 0xff;
  _exit(status & 0xff);
}

static void quick_exit_guard(void) {
  fflush(stdout);
  fflush(stderr);
  lowp__g_fn_state->exit_called = 1;
  lowp__g_fn_state->exit_code = 0;
  _exit(0);
}

/* The call's process: own group, default signals, no inherited descriptors
   but the pipe (as stdout and stderr). */
static void fn_child(int out_fd, pid_t parent) {
  struct sigaction dfl;
  sigset_t none;
  int sig, fd;
  setpgid(0, 0);
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL);
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
#else
  (void)parent;
#endif
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  fd = open("/dev/null", O_RDONLY);
  if (fd < 0 || dup2(fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0) _exit(127);
  close_range(3, ~0U, 0);
}

#ifdef __linux__
static int write_text(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC), ok;
  if (fd < 0) return -1;
  ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
  close(fd);
  return ok ? 0 : -1;
}

/* "ID ID 1\n": this id mapped to itself */
static void id_map(char *out, long id) {
  size_t n;
  put_num(out, id);
  n = strlen(out);
  out[n] = ' ';
  put_num(out + n + 1, id);
  n = strlen(out);
  memcpy(out + n, " 1\n", 4);
}
#endif

/* Make this process's next child the init of a new PID namespace: as root
   (CAP_SYS_ADMIN), else inside a new user namespace where this user is
   itself (its files, its devices). 1 if done. */
static int new_pid_ns(void) {
#ifdef __linux__
  char map[64];
  long uid = (long)geteuid(), gid = (long)getegid();
  if (unshare(CLONE_NEWPID) == 0) return 1;
  if (unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0) return 0;
  id_map(map, uid);
  if (write_text("/proc/self/uid_map", map) != 0) return 1; /* contained all the same */
  (void)write_text("/proc/self/setgroups", "deny");
  id_map(map, gid);
  (void)write_text("/proc/self/gid_map", map);
  return 1;
#else
  return 0;
#endif
}

/* The worker: the exit guards, then fn; _exit(0) when it returns. */
static void run_fn(void (*fn)(void *arg), void *arg, fn_state_t *st) {
  lowp__g_fn_state = st;
  on_exit(exit_guard, st);
  at_quick_exit(quick_exit_guard);
  fn(arg);
  fflush(stdout);
  fflush(stderr);
  st->returned = 1;
  _exit(0);
}

/* The init of a PID namespace: start the worker and wait for it; record
   how it ended; _exit (and so end the namespace). A worker that stops is
   killed (it would wait out the time limit). */
static void supervise(void (*fn)(void *arg), void *arg, fn_state_t *st) {
  pid_t w = fork();
  if (w < 0) _exit(127);
  if (w == 0) {
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    run_fn(fn, arg, st);
  }
  for (;;) {
    int ws = 0;
    pid_t r = waitpid(w, &ws, WUNTRACED);
    if (r < 0) {
      if (errno == EINTR) continue;
      _exit(127);
    }
    if (WIFSTOPPED(ws)) {
      if (!st->w_stopped) st->w_stopped = WSTOPSIG(ws);
      kill(w, SIGKILL);
      continue;
    }
    st->w_status = ws;
    st->w_done = 1;
    _exit(0);
  }
}

/* The call's process (C): in a PID namespace, the worker is a grandchild
   (its init between, see above); else C is the worker itself, and lowp
   sees it stop (fn_wait). */
static void call_process(void (*fn)(void *arg), void *arg, int out_fd, pid_t parent, fn_state_t *st,
                         int want_ns) {
  fn_child(out_fd, parent);
  if (want_ns && new_pid_ns()) {
    pid_t init = fork();
    if (init < 0) _exit(127);
    if (init == 0) {
#ifdef __linux__
      prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
      st->ns = 1;
      supervise(fn, arg, st);
    }
    while (waitpid(init, NULL, 0) < 0 && errno == EINTR) {}
    _exit(0);
  }
  run_fn(fn, arg, st);
}

static double mono_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* keep the last LOWP_CHILD_TAIL - 1 bytes of what the child wrote */
static int drain(int fd, lowp_child_t *r, size_t *len) {
  char buf[4096];
  int reads = 0;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    size_t k, keep = LOWP_CHILD_TAIL - 1;
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return 1; /* end of file */
    if (n < 0) return 0;
    k = (size_t)n;
    r->out_bytes += k;
    if (k >= keep) {
      memcpy(r->tail, buf + k - keep, keep);
      *len = keep;
    } else {
      if (*len + k > keep) {
        size_t drop = *len + k - keep;
        memmove(r->tail, r->tail + drop, *len - drop);
        *len -= drop;
      }
      memcpy(r->tail + *len, buf, k);
      *len += k;
    }
    if (++reads >= 256) return 0; /* 1 MiB at a time: the caller looks at the child too */
  }
}

/* wait for the call's process (draining its output) until it ends, stops
   (something of the call stopped it: killed, reported) or the limit */
static int fn_wait(lowp_child_t *r, pid_t pid, int fd, double timeout, siginfo_t *info) {
  double t0 = mono_now();
  size_t len = 0;
  int eof = 0;
  for (;;) {
    struct pollfd pf;
    int ms = 50;
    memset(info, 0, sizeof *info);
    if (waitid(P_PID, (id_t)pid, info, WEXITED | WSTOPPED | WNOHANG | WNOWAIT) != 0 && errno != EINTR) {
      r->tail[len] = '\0';
      return -1;
    }
    if (info->si_pid == pid && info->si_code == CLD_STOPPED) {
      r->how = LOWP_CHILD_STOPPED;
      r->code = info->si_status;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      continue;
    }
    if (info->si_pid == pid) break;
    if (mono_now() - t0 > timeout && r->how != LOWP_CHILD_STOPPED) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      r->how = LOWP_CHILD_TIMEOUT;
    }
    pf.fd = fd;
    pf.events = POLLIN;
    if (eof) {
      struct timespec nap = {0, 5000000};
      nanosleep(&nap, NULL);
    } else if (poll(&pf, 1, ms) > 0) {
      eof = drain(fd, r, &len);
    }
  }
  /* what it wrote before it ended (not what its leftovers write after) */
  if (!eof) drain(fd, r, &len);
  r->tail[len] = '\0';
  return 0;
}

/* this process's children (those of the main thread and of the calling
   one, where a subreaper's orphans land), read from /proc with
   async-signal-safe calls only; -1 if /proc does not list them */
static int read_children(const char *path, long *out, int n, int max) {
  char buf[4096];
  ssize_t got;
  long v = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC), i, digits = 0;
  if (fd < 0) return -1;
  got = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (got < 0) return -1;
  for (i = 0; i <= got; i++) {
    if (i < got && buf[i] >= '0' && buf[i] <= '9') {
      v = v * 10 + (buf[i] - '0');
      digits = 1;
    } else {
      if (digits && n < max) out[n++] = v;
      v = 0;
      digits = 0;
    }
  }
  return n;
}

static int list_children(long *out, int max) {
  char path[64];
  long ids[2];
  int n = 0, i, r;
  ids[0] = (long)getpid();
  ids[1] = (long)gettid();
  for (i = 0; i < 2 && (i == 0 || ids[1] != ids[0]); i++) {
    memcpy(path, "/proc/self/task/", 16);
    put_num(path + 16, ids[i]);
    memcpy(path + strlen(path), "/children", 10);
    r = read_children(path, out, n, max);
    if (r >= 0) n = r;
  }
  return n;
}

/* Once lowp is a subreaper: the children it had then (a shell's that exec'd
   lowp), which are never lowp's to end; -1 before. */
static long lowp__g_foreign[256];
static volatile int lowp__g_nforeign = -1;

static int listed(const long *a, int n, long v) {
  int j;
  for (j = 0; j < n; j++)
    if (a[j] == v) return 1;
  return 0;
}

/* append the children of every thread of process pid to out[n..max) (not
   those already there); the new n. getdents64 on /proc/PID/task. */
#define WALK_MAX 4096
static int add_children_of(long pid, long *out, int n, int max) {
  char path[80], buf[2048];
  long got;
  int fd;
  memcpy(path, "/proc/", 6);
  put_num(path + 6, pid);
  memcpy(path + strlen(path), "/task", 6);
  fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return n;
  while ((got = (long)syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
    long off = 0;
    while (off < got) {
      struct { unsigned long long ino; long long off; unsigned short reclen; unsigned char type;
               char name[]; } *d = (void *)(buf + off);
      char cp[128];
      long kids[256];
      int k, nk;
      off += d->reclen;
      if (d->name[0] < '0' || d->name[0] > '9') continue;
      memcpy(cp, path, strlen(path));
      cp[strlen(path)] = '/';
      memcpy(cp + strlen(path) + 1, d->name, strnlen(d->name, 24) + 1);
      memcpy(cp + strlen(cp), "/children", 10);
      nk = read_children(cp, kids, 0, 256);
      for (k = 0; k < nk; k++)
        if (n < max && !listed(out, n, kids[k])) out[n++] = kids[k];
    }
  }
  close(fd);
  return n;
}

int lowp_spawn_end_orphans(const long *keep, int nkeep) {
  long kids[512], found[WALK_MAX];
  int pass, ended = 0;
  if (lowp__g_nforeign < 0) return 0; /* no plugin child ever ran: nothing to end */
  /* Each pass: lowp's own children (not kept), then, stopped first so that
     they cannot start more, everything below them, breadth first; all are
     killed, lowp's children reaped. What a killed process leaves (its
     children, zombies) is lowp's at the next pass: until none is left. */
  for (pass = 0; pass < 100000; pass++) {
    int n = list_children(kids, 512), i, nf = 0, j;
    for (i = 0; i < n; i++)
      if (!listed(keep, nkeep, kids[i]) && !listed(lowp__g_foreign, lowp__g_nforeign, kids[i]))
        found[nf++] = kids[i];
    if (nf == 0) return ended;
    n = nf; /* found[0..n): lowp's, to reap */
    for (j = 0; j < nf; j++) {
      kill((pid_t)found[j], SIGSTOP);
      nf = add_children_of(found[j], found, nf, WALK_MAX);
    }
    for (j = 0; j < nf; j++) kill((pid_t)found[j], SIGKILL);
    for (i = 0; i < n; i++) {
      while (waitpid((pid_t)found[i], NULL, 0) < 0 && errno == EINTR) {}
      ended++;
    }
  }
  return -1;
}

int lowp_spawn_fn(lowp_child_t *r, void (*fn)(void *arg), void *arg, double timeout) {
  sigset_t old;
  int pfd[2];
  pid_t pid, parent = getpid();
  siginfo_t info;
  fn_state_t *st;
  long before[256];
  int w, nbefore;
  const char *how = getenv("LOWP_CONTAIN");
  int want_ns = how && !strcmp(how, "pidns");
  if (!r || !fn || !(timeout > 0)) return LOWP_EINVAL;
  if (lowp__g_nforeign < 0) {
#ifdef __linux__
    /* processes the call leaves behind outside its namespace or group
       (setsid, a daemon's double fork) become lowp's when their parents die */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
    lowp__g_nforeign = list_children(lowp__g_foreign, 256);
  }
  nbefore = list_children(before, 256);
  memset(r, 0, sizeof *r);
  st = mmap(NULL, sizeof *st, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (st == MAP_FAILED) return LOWP_EIO;
  if (pipe2(pfd, O_CLOEXEC) != 0) {
    munmap(st, sizeof *st);
    return LOWP_EIO;
  }
  fflush(NULL); /* nothing of lowp's is written twice, nor by the child */
  pid = fork_blocked(&old);
  if (pid == 0) {
    close(pfd[0]);
    call_process(fn, arg, pfd[1], parent, st, want_ns);
    _exit(127);
  }
  if (pid > 0) {
    setpgid(pid, pid); /* also here: no window where the child is in lowp's group */
    if (lowp__g_spawn_watch) lowp__g_spawn_watch((long)pid, 1);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close(pfd[1]);
  if (pid < 0) {
    close(pfd[0]);
    munmap(st, sizeof *st);
    return LOWP_EIO;
  }
  fcntl(pfd[0], F_SETFL, O_NONBLOCK);
  w = fn_wait(r, pid, pfd[0], timeout, &info);
  close(pfd[0]);
  /* the group ends with the call; the child is a zombie until reaped, so
     its pid (the group's id) cannot have been reused */
  kill(-pid, SIGKILL);
  if (lowp__g_spawn_watch) lowp__g_spawn_watch((long)pid, 0);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
  if (lowp_spawn_end_orphans(before, nbefore) < 0 && w == 0) w = -1;
  r->contained = st->ns ? LOWP_CONTAIN_PIDNS : LOWP_CONTAIN_TREE;
  if (w == 0 && r->how != LOWP_CHILD_TIMEOUT) {
    if (st->w_stopped || r->how == LOWP_CHILD_STOPPED) {
      r->how = LOWP_CHILD_STOPPED;
      if (st->w_stopped) r->code = st->w_stopped;
    } else if (st->w_done && WIFEXITED(st->w_status)) {
      r->code = WEXITSTATUS(st->w_status);
      r->how = st->returned ? LOWP_CHILD_RETURNED
               : st->exit_called ? LOWP_CHILD_EXIT_CALLED : LOWP_CHILD_EXITED;
    } else if (st->w_done) {
      r->how = LOWP_CHILD_SIGNALED;
      r->code = WTERMSIG(st->w_status);
    } else if (info.si_code == CLD_EXITED) { /* the worker (tree), or the call's process */
      r->code = info.si_status & 0xff;
      r->how = st->returned ? LOWP_CHILD_RETURNED
               : st->exit_called ? LOWP_CHILD_EXIT_CALLED : LOWP_CHILD_EXITED;
    } else {
      r->how = LOWP_CHILD_SIGNALED;
      r->code = info.si_status;
    }
  }
  munmap(st, sizeof *st);
  return w == 0 ? LOWP_OK : LOWP_EIO;
}

int lowp_spawn_contained(void) {
  long kids[512];
  int n, i;
  if (lowp__g_nforeign < 0) return 1;
  if (lowp_spawn_end_orphans(NULL, 0) < 0) return 0;
  n = list_children(kids, 512);
  for (i = 0; i < n; i++)
    if (!listed(lowp__g_foreign, lowp__g_nforeign, kids[i])) return 0;
  return 1;
}

const char *lowp_signal_name(int sig) {
  static const struct { int n; const char *s; } t[] = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},       {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
      {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},     {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
      {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},     {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
      {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"},     {SIGTERM, "SIGTERM"}, {SIGCHLD, "SIGCHLD"},
      {SIGCONT, "SIGCONT"}, {SIGSTOP, "SIGSTOP"},     {SIGTSTP, "SIGTSTP"}, {SIGTTIN, "SIGTTIN"},
      {SIGTTOU, "SIGTTOU"}, {SIGURG, "SIGURG"},       {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},
      {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"}, {SIGWINCH, "SIGWINCH"}, {SIGIO, "SIGIO"},
      {SIGSYS, "SIGSYS"},
  };
  size_t i;
  for (i = 0; i < sizeof t / sizeof t[0]; i++)
    if (t[i].n == sig) return t[i].s;
  return NULL;
}

int lowp_parse_seconds(double *out, const char *text) {
  double v;
  const char *c;
  if (!text || !*text) return -1;
  /* decimal digits, '.', exponent: no blanks, no hex, no inf/nan words */
  for (c = text; *c; c++)
    if (!strchr("0123456789.eE+-", *c)) return -1;
  if (lowp_parse_f64(&v, text) != 0 || !isfinite(v) || !(v > 0) || v > 1e9) return -1;
  *out = v;
  return 0;
}
