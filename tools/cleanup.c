/* lowp_cleanup -- this process's temporaries and children: removed and stopped on error or signal */

#define _GNU_SOURCE /* getdents64, pthread_kill */

#include "cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/atomic.h"
#include "io/spawn.h"
#include "cli.h"

/* ---------------------------------------------------------------- types */

#define NTEMP 64
#define NCHILD 16
#define TPATH 4200

/* The registry is global because a signal handler can see nothing else
   (docs/style.md B1: lowp__g_*). A slot is filled, then marked live last, so the
   handler never reads a half-written path; it is marked dead first. The
   live marks are an array of their own: every exit scans them, and inside
   the slots (4 KiB apart) that scan touched 64 pages, a quarter of the page
   faults of a short lowp command (each dear on a VM). */
typedef struct {
  int kind;
  char path[TPATH];
} temp_t;

static temp_t lowp__g_temps[NTEMP];
static volatile sig_atomic_t lowp__g_live[NTEMP];
static volatile sig_atomic_t lowp__g_child[NCHILD]; /* pids, 0 = free */
static volatile sig_atomic_t lowp__g_committing;    /* inside commit_begin/end */
static volatile sig_atomic_t lowp__g_held;          /* signal held during a commit */
static pthread_t lowp__g_main;                      /* the thread that installed */
static int lowp__g_installed;
static int lowp__g_stdin_closed;                    /* fd 0 was closed at start */

/* ------------------------------------------------------ private helpers */

/* rm -rf of the entries of the open folder fd (depth-limited), then the
   caller rmdirs it. Re-reads the folder until a pass removes nothing, so
   it needs no memory and tolerates entries appearing meanwhile. */
static void empty_dir(int fd, int depth) {
  char buf[4096];
  int pass, removed = 1;
  for (pass = 0; pass < 64 && removed; pass++) {
    long n;
    removed = 0;
    if (lseek(fd, 0, SEEK_SET) < 0) return;
    while ((n = (long)getdents64(fd, buf, sizeof buf)) > 0) {
      long off = 0;
      while (off < n) {
        struct dirent64 *d = (struct dirent64 *)(void *)(buf + off);
        const char *name = d->d_name;
        off += d->d_reclen;
        if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]))) continue;
        if (unlinkat(fd, name, 0) == 0) { removed = 1; continue; }
        if (depth < 24 && (errno == EISDIR || errno == EPERM)) {
          int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub >= 0) {
            empty_dir(sub, depth + 1);
            close(sub);
          }
          if (unlinkat(fd, name, AT_REMOVEDIR) == 0) removed = 1;
        }
      }
    }
  }
}

/* op(path) (unlink or rmdir). If it fails because the folder that holds
   path is not writable (the user made it read-only during the run) and
   this user owns that folder, the folder is made writable for this one
   removal and its mode put back: lowp leaves no temporary behind (issue
   19). Async-signal-safe (stat, chmod). */
static int remove_unlocked(const char *path, int (*op)(const char *)) {
  char dir[TPATH];
  const char *sl;
  struct stat st;
  int r = op(path), e;
  size_t n;
  if (r == 0 || (errno != EACCES && errno != EPERM)) return r;
  e = errno;
  sl = strrchr(path, '/');
  n = !sl ? 0 : sl == path ? 1 : (size_t)(sl - path);
  if (n >= sizeof dir) return r;
  if (n) memcpy(dir, path, n);
  else dir[n++] = '.';
  dir[n] = '\0';
  if (stat(dir, &st) != 0 || st.st_uid != geteuid() ||
      chmod(dir, (st.st_mode & 07777) | S_IWUSR | S_IXUSR) != 0) {
    errno = e;
    return r;
  }
  r = op(path);
  e = errno;
  (void)chmod(dir, st.st_mode & 07777);
  errno = e;
  return r;
}

static void remove_temp(const temp_t *t) {
  if (t->kind == LOWP_TEMP_FILE) remove_unlocked(t->path, unlink);
  else if (t->kind == LOWP_TEMP_DIR) remove_unlocked(t->path, rmdir);
  else lowp_cleanup_rmtree(t->path);
}

/* Stop every registered child and wait until it is gone (it may be
   writing into a temporary folder). */
static void stop_children(void) {
  int i;
  for (i = 0; i < NCHILD; i++) {
    pid_t p = (pid_t)lowp__g_child[i];
    /* a plugin's child leads its own process group (lib/io/spawn.h):
       the group too, so that what it started does not outlive lowp */
    if (p > 0) {
      kill(-p, SIGKILL);
      kill(p, SIGKILL);
    }
  }
  for (i = 0; i < NCHILD; i++) {
    pid_t p = (pid_t)lowp__g_child[i];
    if (p > 0) {
      while (waitpid(p, NULL, 0) < 0 && errno == EINTR) {}
      lowp__g_child[i] = 0;
    }
  }
  /* and what a plugin left outside its group (lowp is their subreaper) */
  lowp_spawn_end_orphans(NULL, 0);
}

/* Newest first: inner temporaries before the folders that hold them. */
static void remove_all(void) {
  int i;
  for (i = NTEMP - 1; i >= 0; i--)
    if (lowp__g_live[i]) {
      lowp__g_live[i] = 0;
      remove_temp(&lowp__g_temps[i]);
    }
}

static void put(const char *s) {
  ssize_t r = write(2, s, strlen(s));
  (void)r;
}

/* Core-dumping signals (a fault, abort(), SIGQUIT) end lowp the way they
   would have (status, core file) after the cleanup: re-raised. */
static int dumps_core(int sig) {
  return sig == SIGQUIT || sig == SIGABRT || sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
         sig == SIGFPE || sig == SIGSYS || sig == SIGTRAP || sig == SIGXCPU || sig == SIGXFSZ;
}

static void die_by_signal(int sig) {
  stop_children();
  remove_all();
  if (sig != SIGPIPE) { /* a closed pipe is the reader's choice: no message */
    const char *name = lowp_signal_name(sig);
    char num[16];
    if (sig == SIGINT) put("lowp: interrupted (SIGINT)");
    else if (sig == SIGTERM) put("lowp: terminated (SIGTERM)");
    else if (sig == SIGHUP) put("lowp: hung up (SIGHUP)");
    else {
      put("lowp: killed by ");
      if (!name) { /* a real-time signal: "signal N" */
        int k = 0, v = sig;
        char t[8];
        do t[k++] = (char)('0' + v % 10); while ((v /= 10) > 0);
        memcpy(num, "signal ", 7);
        for (v = 0; v < k; v++) num[7 + v] = t[k - 1 - v];
        num[7 + k] = '\0';
        name = num;
      }
      put(name);
    }
    put("; children stopped, temporary files removed, nothing published\n");
  }
  if (dumps_core(sig)) {
    struct sigaction dfl;
    sigset_t one;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
  }
  _exit(128 + sig);
}

static void on_signal(int sig) {
  int saved = errno;
  if (!pthread_equal(pthread_self(), lowp__g_main)) {
    /* stop the main thread where it is: it is the one that writes files */
    pthread_kill(lowp__g_main, sig);
    errno = saved;
    return;
  }
  if (lowp__g_committing) {
    lowp__g_held = sig;
    errno = saved;
    return;
  }
  die_by_signal(sig);
}

/* stdout's buffered bytes written, and every write to it succeeded */
static int lowp__g_stdout_done; /* stdout closed, or its errors already reported */

static int stdout_ok(void) {
  int bad;
  if (lowp__g_stdout_done) return 1;
  lowp__g_stdout_done = 1;
  bad = fflush(stdout) != 0 || ferror(stdout);
  bad |= fclose(stdout) != 0;
  return !bad;
}

static void at_exit(void) {
  stop_children();
  remove_all();
  /* a command that left through exit(): its output must have been written */
  if (!stdout_ok()) {
    put("lowp: cannot write the standard output (a full disk or a closed file?): the output is "
        "incomplete\n");
    _exit(LOWP_EXIT_USAGE);
  }
}

/* descriptors 0, 1 and 2 open: a closed one would be the next file lowp
   opens (a temporary), and printf would write into it */
static void std_streams(void) {
  int fd;
  for (fd = 0; fd < 3; fd++) {
    int nfd;
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    nfd = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
    if (nfd >= 0 && nfd != fd) {
      dup2(nfd, fd);
      close(nfd);
    }
    if (fd == 0) lowp__g_stdin_closed = 1;
    if (fd == 1) {
      put("lowp: the standard output is closed: what lowp prints would be lost\n");
      _exit(LOWP_EXIT_USAGE);
    }
  }
}

static void watch_file(const char *tmp, int live) {
  int i;
  if (live) { (void)lowp_temp_add(tmp, LOWP_TEMP_FILE); return; }
  for (i = NTEMP - 1; i >= 0; i--)
    if (lowp__g_live[i] && lowp__g_temps[i].kind == LOWP_TEMP_FILE &&
        !strcmp(lowp__g_temps[i].path, tmp)) {
      lowp__g_live[i] = 0;
      return;
    }
}

static void watch_child(long pid, int live) {
  int i;
  for (i = 0; i < NCHILD; i++) {
    if (live && lowp__g_child[i] == 0) { lowp__g_child[i] = (sig_atomic_t)pid; return; }
    if (!live && lowp__g_child[i] == (sig_atomic_t)pid) { lowp__g_child[i] = 0; return; }
  }
}

/* ----------------------------------------------------------- public API */

int lowp_cleanup_child(long pid, int live) {
  int i;
  if (!live) { watch_child(pid, 0); return 0; }
  for (i = 0; i < NCHILD; i++)
    if (lowp__g_child[i] == 0) { lowp__g_child[i] = (sig_atomic_t)pid; return 0; }
  return -1;
}

/* The signals whose default action ends the process (signal(7)): each
   ends lowp through the handler, children stopped and temporaries removed
   (issue 30: SIGQUIT, SIGUSR1, SIGALRM, ... as SIGINT). SIGKILL cannot be
   caught (then PR_SET_PDEATHSIG ends the children lowp started directly). */
static int terminating(int sig) {
  static const int t[] = {SIGHUP,  SIGINT,    SIGQUIT, SIGILL,  SIGTRAP, SIGABRT, SIGBUS,
                          SIGFPE,  SIGUSR1,   SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM,
                          SIGXCPU, SIGXFSZ,   SIGVTALRM, SIGPROF, SIGIO, SIGSYS,
#ifdef SIGSTKFLT
                          SIGSTKFLT,
#endif
#ifdef SIGPWR
                          SIGPWR,
#endif
  };
  size_t i;
  if (sig >= SIGRTMIN && sig <= SIGRTMAX) return 1;
  for (i = 0; i < sizeof t / sizeof t[0]; i++)
    if (t[i] == sig) return 1;
  return 0;
}

/* always ours: the signals a user sends to stop lowp (and SIGPIPE) */
static int always(int sig) { return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGPIPE; }

static sigset_t lowp__g_handled; /* the signals on_signal handles (read-only after install) */

void lowp_cleanup_signals(sigset_t *set) { *set = lowp__g_handled; }

void lowp_cleanup_install(void) {
  struct sigaction sa;
  int sig;
  if (lowp__g_installed) return;
  lowp__g_installed = 1;
  lowp__g_main = pthread_self();
  std_streams();
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&lowp__g_handled);
  /* others than the four: only where nothing before main (a sanitizer, a
     profiler's SIGPROF) installed a handler of its own */
  for (sig = 1; sig < NSIG; sig++) {
    struct sigaction old;
    if (!terminating(sig) || sigaction(sig, NULL, &old) != 0) continue;
    /* an inherited SIG_IGN is kept (the user asked for it: SIGXFSZ ignored
       turns a file over the limit into a write error), but for SIGQUIT,
       which a shell ignores in every background job, as it does SIGINT */
    if (!always(sig) && (old.sa_flags & SA_SIGINFO ||
                         (old.sa_handler != SIG_DFL && !(old.sa_handler == SIG_IGN && sig == SIGQUIT))))
      continue;
    sigaddset(&lowp__g_handled, sig);
  }
  sa.sa_mask = lowp__g_handled; /* one handler at a time in a thread */
  sa.sa_flags = SA_RESTART;
  for (sig = 1; sig < NSIG; sig++)
    if (sigismember(&lowp__g_handled, sig) == 1) sigaction(sig, &sa, NULL);
  atexit(at_exit);
  lowp_atomic_set_watch(watch_file);
  lowp_spawn_set_watch(watch_child);
}

int lowp_temp_add(const char *path, int kind) {
  int i;
  size_t n = strlen(path);
  if (n >= TPATH) return -1;
  for (i = 0; i < NTEMP; i++)
    if (!lowp__g_live[i]) {
      memcpy(lowp__g_temps[i].path, path, n + 1);
      lowp__g_temps[i].kind = kind;
      __atomic_signal_fence(__ATOMIC_SEQ_CST); /* path complete before live */
      lowp__g_live[i] = 1;
      return i;
    }
  return -1;
}

void lowp_temp_drop(int id) {
  if (id >= 0 && id < NTEMP) lowp__g_live[id] = 0;
}

void lowp_temp_remove(int id) {
  if (id < 0 || id >= NTEMP || !lowp__g_live[id]) return;
  remove_temp(&lowp__g_temps[id]);
  lowp__g_live[id] = 0;
}

int lowp_cleanup_rmtree(const char *path) {
  struct stat st;
  int fd;
  if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(st.st_mode)) return unlink(path) == 0 ? 0 : -1;
  fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    empty_dir(fd, 0);
    close(fd);
  }
  return remove_unlocked(path, rmdir) == 0 || errno == ENOENT ? 0 : -1;
}

void lowp_cleanup_commit_begin(void) { lowp__g_committing = 1; }

int lowp_cleanup_held(void) { return lowp__g_held != 0; }

void lowp_cleanup_commit_end(void) {
  lowp__g_committing = 0;
  if (lowp__g_held) die_by_signal(lowp__g_held);
}

int lowp_stdin_closed(void) { return lowp__g_stdin_closed; }

int lowp_stdout_finish(const char *cmd, int rc) {
  if (stdout_ok()) return rc;
  if (rc == LOWP_EXIT_USAGE) return rc; /* the command said what failed */
  put("lowp");
  if (cmd && *cmd) {
    put(" ");
    put(cmd);
  }
  put(": cannot write the standard output (a full disk or a closed file?): the output is "
      "incomplete\n");
  return LOWP_EXIT_USAGE;
}

void lowp_stdout_discard(void) { lowp__g_stdout_done = 1; }
