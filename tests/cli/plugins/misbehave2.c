/* misbehave2 -- plugins that misbehave in the ways of issue 19 (tests/cli/plugin_misbehave.sh)
 *
 * Built by the test with cc. Without a -D: gemm kernels (fp16 A, B -> fp32 C)
 * that write past or before their output, into their inputs, return -424242,
 * die by SIGPIPE/SIGUSR1, flood their output, leave processes behind, call
 * exit(0), and one honest kernel. With -DLOAD_EXIT, -DLOAD_SEGV, -DLOAD_HANG,
 * -DTABLE_CRASH or -DBAD_NAME: a library that misbehaves while it is loaded
 * or its table read. Kernel chain (and -DCHAIN_CTOR: the library's
 * constructor) starts a chain of CHAIN_DEPTH processes, each in a new
 * session and the parent of the next, each writing its pid (as the system
 * knows it, /proc/self) to MIS_DIR/chain.N.pid, then sleeping and trying to
 * overwrite the files named by MIS_TARGETS (':'-separated) (issue 30).
 * With -DCHAIN_MAIN: the program each link runs (MIS_CHAIN_EXE, below).
 */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lowp_plugin.h"

static float h2f(uint16_t h) { /* fp16 bits -> float, exact */
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}

static int honest(void *const *o, const void *const *in, const lowp_plugin_dims_t *d) {
  const uint16_t *a = in[0], *b = in[1];
  float *c = o[0];
  size_t i, j, l;
  for (i = 0; i < d->batch * d->m; i++)
    for (j = 0; j < d->n; j++) {
      double s = 0;
      for (l = 0; l < d->k; l++) s += (double)h2f(a[i * d->k + l]) * h2f(b[l * d->n + j]);
      c[i * d->n + j] = (float)s;
    }
  return 0;
}

static size_t cnt(const lowp_plugin_dims_t *d) { return d->batch * d->m * d->n; }
static void pidfile(const char *what, pid_t p) {
  char path[600];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s.pid", getenv("MIS_DIR") ? getenv("MIS_DIR") : "/tmp", what);
  f = fopen(path, "w");
  if (f) { fprintf(f, "%ld\n", (long)p); fclose(f); }
}

/* writes a float whose every byte differs from the byte it replaces: the
 * canary around an output is random, so a fixed value (1.0f: bytes 00 00 80 3f)
 * leaves its first byte unchanged once in 256 runs, and lowp then rightly
 * reports the second byte as the first one changed */
static void flip4(unsigned char *p) {
  volatile unsigned char *v = p;
  int k;
  for (k = 0; k < 4; k++) v[k] = (unsigned char)~v[k];
}

static int past1(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  honest(o, i, d);
  flip4((unsigned char *)o[0] + 4 * cnt(d)); /* one float past the end */
  return 0;
}
static int pasta5(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  honest(o, i, d);
  memset((float *)o[0] + cnt(d), 0xA5, 16); /* 16 bytes past the end, of the old fixed canary */
  return 0;
}
static int pastpage(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  honest(o, i, d);
  ((volatile float *)o[0])[cnt(d) + 1024] = 1.0f; /* 4 KiB past */
  return 0;
}
static int before(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  honest(o, i, d);
  flip4((unsigned char *)o[0] - 4); /* the float before the start */
  return 0;
}
static int wrin(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  honest(o, i, d);
  ((volatile uint16_t *)i[1])[0] ^= 1; /* inputs are read-only */
  return 0;
}
static int beforein(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  honest(o, i, d);
  ((volatile uint16_t *)i[0])[-8] = 1; /* 16 bytes before A */
  return 0;
}
static int sneakin(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  uintptr_t pg = (uintptr_t)i[0] & ~(uintptr_t)4095;
  honest(o, i, d);
  mprotect((void *)pg, 4096, PROT_READ | PROT_WRITE); /* around the protection */
  ((uint16_t *)i[0])[0] ^= 1;
  return 0;
}
static int magic(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  honest(o, i, d);
  return -424242;
}
static int spipe(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  (void)o; (void)i; (void)d;
  raise(SIGPIPE);
  return 0;
}
static int susr1(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  (void)o; (void)i; (void)d;
  raise(SIGUSR1);
  return 0;
}
static int flood(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  static char line[1000];
  int k;
  (void)o; (void)i; (void)d;
  memset(line, 'x', sizeof line - 1);
  line[sizeof line - 1] = '\n';
  for (k = 0; k < 10000; k++) fwrite(line, 1, sizeof line, k % 2 ? stdout : stderr);
  printf("the last words of flood\n");
  fflush(stdout);
  return 7;
}
static int daemonize(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  pid_t p = fork();
  if (p == 0) { /* keeps the kernel's stdout and stderr open */
    sleep(300);
    _exit(0);
  }
  pidfile("daemonize", p);
  return honest(o, i, d);
}
static int forkhang(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  pid_t p = fork();
  (void)o; (void)i; (void)d;
  if (p == 0) {
    sleep(300);
    _exit(0);
  }
  pidfile("forkhang", p);
  for (;;) pause();
  return 0;
}
/* a daemon: fork, setsid (out of the kernel's process group), fork again */
static void daemon_child(const char *what) {
  pid_t p = fork();
  if (p == 0) {
    setsid();
    p = fork();
    if (p == 0) {
      pidfile(what, getpid());
      close(1);
      close(2);
      sleep(300);
      _exit(0);
    }
    _exit(0);
  }
  while (p > 0 && !waitpid(p, NULL, 0)) {}
}
static int escape(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  daemon_child("escape");
  usleep(100000);
  return honest(o, i, d);
}
static int escapehang(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  (void)o; (void)i; (void)d;
  daemon_child("escapehang");
  for (;;) pause();
  return 0;
}
/* the chain (issue 30): depth d starts depth d + 1, in a new session; each
   appends its pid to MIS_DIR/chain.pids; the last makes chain.last.TAG */
#define CHAIN_DEPTH 200
static const char *mis_dir(void) { return getenv("MIS_DIR") ? getenv("MIS_DIR") : "/tmp"; }
static void chain_link(int d, long tag);
/* link d, in this new process: the program MIS_CHAIN_EXE names (this file built with -DCHAIN_MAIN)
   where the test set it, so that each link forks a small process. Forked from lowp's image 200 deep,
   every fork copied its ancestors' chains of anonymous mappings, which grow with the depth (the
   kernel's anon_vma chains): about 20 s of the test's CPU on 2 cores. Without it, or if the exec
   fails, the link runs in this image. The links are the same processes either way: each in a new
   session, the parent of the next. */
static void next_link(int d, long tag) {
  const char *exe = getenv("MIS_CHAIN_EXE");
  if (exe && *exe) {
    char a[16], b[32];
    snprintf(a, sizeof a, "%d", d);
    snprintf(b, sizeof b, "%ld", tag);
    execl(exe, exe, a, b, (char *)NULL);
  }
  chain_link(d, tag);
}
static void chain_link(int d, long tag) {
  char path[700], self[64], *targets, *t;
  ssize_t n;
  FILE *f;
  setsid();
  n = readlink("/proc/self", self, sizeof self - 1);
  self[n > 0 ? n : 0] = '\0';
  snprintf(path, sizeof path, "%s/chain.pids", mis_dir());
  f = fopen(path, "a");
  if (f) { fprintf(f, "%s\n", self); fclose(f); }
  if (d + 1 < CHAIN_DEPTH) {
    if (fork() == 0) next_link(d + 1, tag);
  } else {
    snprintf(path, sizeof path, "%s/chain.last.%ld", mis_dir(), tag);
    f = fopen(path, "w");
    if (f) fclose(f);
  }
  close(1);
  close(2);
  sleep(3);
  targets = getenv("MIS_TARGETS");
  for (t = targets ? strtok(targets, ":") : NULL; t; t = strtok(NULL, ":")) {
    f = fopen(t, "w");
    if (f) { fprintf(f, "overwritten by chain process %d\n", d); fclose(f); }
  }
  _exit(0);
}
/* start the chain; wait (at most 20 s) until its last link is there */
static void chain_start(void) {
  char path[700], self[64];
  ssize_t n = readlink("/proc/self", self, sizeof self - 1); /* unique also in a PID namespace */
  long tag;
  int k;
  self[n > 0 ? n : 0] = '\0';
  tag = atol(self);
  if (fork() == 0) next_link(0, tag);
  snprintf(path, sizeof path, "%s/chain.last.%ld", mis_dir(), tag);
  for (k = 0; k < 2000 && access(path, F_OK) != 0; k++) usleep(10000);
}
static int chain(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  chain_start();
  return honest(o, i, d);
}
static int stopme(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  (void)o; (void)i; (void)d;
  raise(SIGSTOP);
  return 0;
}
static int quit0(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  honest(o, i, d);
  exit(0);
}
static int qquit(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  honest(o, i, d);
  quick_exit(0);
}

#ifdef CHAIN_CTOR
__attribute__((constructor)) static void ctor(void) { chain_start(); } /* at every load */
#endif
#ifdef LOAD_EXIT
__attribute__((constructor)) static void ctor(void) { exit(0); }
#endif
#ifdef LOAD_SEGV
__attribute__((constructor)) static void ctor(void) { raise(SIGSEGV); }
#endif
#ifdef LOAD_HANG
__attribute__((constructor)) static void ctor(void) { for (;;) pause(); }
#endif

LOWP_PLUGIN_EXPORT const uint32_t lowp_plugin_abi_version = LOWP_PLUGIN_ABI_VERSION;
#define G(n, f) {n, "gemm", {"fp16", "fp16"}, "fp32", f}
static const lowp_plugin_kernel_t table[] = {
    G("honest", honest), G("past1", past1),   G("pastpage", pastpage), G("before", before),
    G("wrin", wrin),     G("sneakin", sneakin), G("magic", magic),     G("spipe", spipe),
    G("susr1", susr1),   G("flood", flood),   G("daemonize", daemonize), G("forkhang", forkhang),
    G("quit0", quit0),   G("qquit", qquit),   G("escape", escape),     G("escapehang", escapehang),
    G("beforein", beforein), G("chain", chain), G("stopme", stopme),
    G("pasta5", pasta5)};
#ifdef BAD_NAME
static lowp_plugin_kernel_t bad[1];
#endif
LOWP_PLUGIN_EXPORT const lowp_plugin_kernel_t *lowp_plugin_kernels(size_t *count) {
#ifdef TABLE_CRASH
  *(volatile int *)(uintptr_t)8 = 1;
#endif
#ifdef BAD_NAME
  bad[0] = table[0];
  bad[0].name = (const char *)(uintptr_t)0x10;
  *count = 1;
  return bad;
#endif
  *count = sizeof table / sizeof table[0];
  return table;
}
#ifdef CHAIN_MAIN
int main(int argc, char **argv) { /* MIS_CHAIN_EXE DEPTH TAG: one link of the chain */
  if (argc != 3) return 2;
  chain_link(atoi(argv[1]), atol(argv[2]));
  return 0;
}
#endif
