/* lowp_plugin_subject -- a kernel in a user's shared library (include/lowp_plugin.h) as a pipeline subject */

/*
 * Loading: dlopen(RTLD_NOW | RTLD_LOCAL), the ABI version symbol, the
 * table (read once, every entry checked), the entry for the problem.
 * Calling: the inputs are encoded into their containers (exactly: values of
 * their formats become bit patterns, include/lowp_plugin.h) in one shared
 * anonymous mapping with room for the outputs; a forked child calls the
 * kernel and stores its return value there; the parent waits (with the
 * time limit LOWP_PLUGIN_TIMEOUT, default 600 s, then SIGKILL) and decodes
 * the outputs. A crash, an exit or a hang of the kernel is the subject's
 * failure (LOWP_EIO with the signal or status named), never lowp's.
 * The child dies with lowp (PR_SET_PDEATHSIG), so Ctrl-C leaves nothing.
 */

#define _GNU_SOURCE /* PR_SET_PDEATHSIG, sigabbrev_np-free signal names */

#include "check/subject.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check/plugin.h"
#include "io/escape.h"
#include "lowp_plugin.h"
#include "status.h"

/* ------------------------------------------------------ private helpers */

typedef enum { C_F64, C_F32, C_U16, C_U8, C_I64 } container_t;

typedef struct {
  void *lib;
  const lowp_plugin_kernel_t *e;
  char path[200];
} pctx_t;

static const size_t csize[] = {8, 4, 2, 1, 8};


/* the container of format f (include/lowp_plugin.h), or -1 */
static int container(const lowp_format_t *f) {
  int w = lowp_format_width(f);
  /* containers hold values: fp64's range and precision fit a double */
  if (f->precision == 53 && f->emin == -1022 && f->emax == 1023) return C_F64;
  if (w <= 8) return C_U8;
  if (w <= 16) return C_U16;
  /* a value of f must be a binary32 value */
  if (f->precision <= 24 && f->emin >= -126 && f->emax <= 127) return C_F32;
  return -1;
}

static int formats_equal(const lowp_format_t *a, const lowp_format_t *b) {
  char sa[200], sb[200];
  if (lowp_format_spec_str(sa, sizeof sa, a) || lowp_format_spec_str(sb, sizeof sb, b)) return 0;
  return !strcmp(sa, sb);
}

static const char *signame(int sig) {
  switch (sig) {
  case SIGSEGV: return "SIGSEGV";
  case SIGABRT: return "SIGABRT";
  case SIGBUS: return "SIGBUS";
  case SIGFPE: return "SIGFPE";
  case SIGILL: return "SIGILL";
  case SIGKILL: return "SIGKILL";
  case SIGTERM: return "SIGTERM";
  case SIGINT: return "SIGINT";
  case SIGTRAP: return "SIGTRAP";
  case SIGSYS: return "SIGSYS";
  default: return "a signal";
  }
}

/* check one table entry; 0 or a message */
static int check_entry(const lowp_plugin_kernel_t *e, size_t i, char *err, size_t errlen) {
  const lowp_op_t *op;
  lowp_format_t f;
  int j;
  if (!e->name || !e->name[0]) return lowp_errf(err, errlen, LOWP_EFILE, "entry %zu has no name", i);
  if (!e->fn) return lowp_errf(err, errlen, LOWP_EFILE, "kernel '%.64s' has no function", e->name);
  if (!e->op || !(op = lowp_op_by_name(e->op)))
    return lowp_errf(err, errlen, LOWP_EFILE, "kernel '%.64s': unknown operation '%.32s'", e->name,
                  e->op ? e->op : "(null)");
  for (j = 0; j < op->n_in; j++) {
    if (!e->in[j])
      return lowp_errf(err, errlen, LOWP_EFILE, "kernel '%.64s': %s needs %d input formats, in[%d] is NULL",
                    e->name, op->name, op->n_in, j);
    if (op->in_index[j]) {
      if (strcmp(e->in[j], "i64"))
        return lowp_errf(err, errlen, LOWP_EFILE, "kernel '%.64s': input %d (class indices) must be \"i64\"",
                      e->name, j);
      continue;
    }
    if (lowp_format_parse(&f, e->in[j], NULL, 0) || container(&f) < 0)
      return lowp_errf(err, errlen, LOWP_EFILE, "kernel '%.64s': unknown input format '%.32s'", e->name,
                    e->in[j]);
  }
  if (!e->out || lowp_format_parse(&f, e->out, NULL, 0) || container(&f) < 0)
    return lowp_errf(err, errlen, LOWP_EFILE, "kernel '%.64s': unknown output format '%.32s'", e->name,
                  e->out ? e->out : "(null)");
  return LOWP_OK;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double time_limit(void) {
  const char *s = getenv("LOWP_PLUGIN_TIMEOUT");
  char *end;
  double v;
  if (!s || !*s) return 600;
  v = strtod(s, &end);
  return (*end == '\0' && v > 0 && v < 1e9) ? v : 600;
}

static int plugin_run(const lowp_subject_t *s, double *const *out, const double *const *in,
                      const lowp_problem_t *p, char *err, size_t errlen) {
  const pctx_t *x = s->ctx;
  const lowp_op_t *op = p->op;
  size_t cnt[LOWP_OP_MAXIO * 2], off[LOWP_OP_MAXIO * 2], total = 64, i, sh[LOWP_OP_MAXDIM];
  int kinds[LOWP_OP_MAXIO * 2], nd, j, n_io = op->n_in + op->n_out, st = LOWP_OK;
  unsigned char *mem;
  void *pin[LOWP_OP_MAXIO], *pout[LOWP_OP_MAXIO];
  volatile int *ret;
  lowp_plugin_dims_t dims;
  pid_t pid;
  /* layout: the return slot, then each tensor 64-byte aligned */
  for (j = 0; j < n_io; j++) {
    const lowp_format_t *f = j < op->n_in ? &p->in[j] : &p->out;
    if (lowp_op_shape(p, j, sh, &nd, &cnt[j])) return LOWP_EINVAL;
    kinds[j] = (j < op->n_in && op->in_index[j]) ? C_I64 : container(f);
    if (kinds[j] < 0) return lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "format %s has no container", f->name);
    off[j] = total;
    total += (cnt[j] * csize[kinds[j]] + 63) / 64 * 64;
  }
  mem = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return lowp_errf(err, errlen, LOWP_ENOMEM, "plugin: cannot map %zu bytes", total);
  ret = (volatile int *)mem;
  *ret = -424242;
  for (j = 0; j < op->n_in; j++) {
    unsigned char *b = mem + off[j];
    pin[j] = b;
    for (i = 0; i < cnt[j] && !st; i++) {
      double v = in[j][i];
      uint64_t bits;
      switch (kinds[j]) {
      case C_F64: ((double *)b)[i] = v; break;
      case C_F32: ((float *)b)[i] = (float)v; break;
      case C_I64: ((int64_t *)b)[i] = (int64_t)v; break;
      default:
        if (lowp_encode(&bits, v, &p->in[j]) != LOWP_OK)
          st = lowp_errf(err, errlen, LOWP_EINVAL, "input %s[%zu] = %g is not a value of %s",
                      op->in_names[j], i, v, p->in[j].name);
        else if (kinds[j] == C_U16) ((uint16_t *)b)[i] = (uint16_t)bits;
        else b[i] = (unsigned char)bits;
      }
    }
  }
  for (j = 0; j < op->n_out; j++) pout[j] = mem + off[op->n_in + j];
  if (st) { munmap(mem, total); return st; }
  dims.batch = p->dims.batch; dims.m = p->dims.m; dims.n = p->dims.n; dims.k = p->dims.k;
  dims.eps = p->eps;
  dims.reduction_mean = p->reduction_mean;
  fflush(NULL);
  pid = fork();
  if (pid < 0) { munmap(mem, total); return lowp_errf(err, errlen, LOWP_EIO, "plugin: fork failed: %s", strerror(errno)); }
  if (pid == 0) {
    /* the child: default signal actions, dies with lowp, calls the kernel */
    int r;
    /* default actions: a crash is reported as its signal, not turned into
       an exit by a handler lowp (or a sanitizer runtime) installed */
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
    size_t q;
    for (q = 0; q < sizeof sigs / sizeof sigs[0]; q++) signal(sigs[q], SIG_DFL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    r = x->e->fn(pout, (const void *const *)pin, &dims);
    *ret = r;
    _exit(0);
  }
  {
    double t0 = now(), lim = time_limit();
    int wst = 0;
    pid_t w;
    struct timespec nap = {0, 2000000};
    for (;;) {
      w = waitpid(pid, &wst, WNOHANG);
      if (w == pid) break;
      if (w < 0 && errno != EINTR) break;
      if (now() - t0 > lim) {
        kill(pid, SIGKILL);
        waitpid(pid, &wst, 0);
        munmap(mem, total);
        return lowp_errf(err, errlen, LOWP_EIO, "plugin kernel %s did not finish in %g s (killed; "
                      "LOWP_PLUGIN_TIMEOUT sets the limit)", x->e->name, lim);
      }
      nanosleep(&nap, NULL);
      if (nap.tv_nsec < 50000000) nap.tv_nsec *= 2;
    }
    if (w != pid) st = lowp_errf(err, errlen, LOWP_EIO, "plugin kernel %s: lost its process", x->e->name);
    else if (WIFSIGNALED(wst))
      st = lowp_errf(err, errlen, LOWP_EIO, "plugin kernel %s crashed (%s)", x->e->name,
                  signame(WTERMSIG(wst)));
    else if (WIFEXITED(wst) && (WEXITSTATUS(wst) != 0 || *ret == -424242))
      st = lowp_errf(err, errlen, LOWP_EIO, "plugin kernel %s exited with status %d instead of returning",
                  x->e->name, WEXITSTATUS(wst));
    else if (*ret != 0)
      st = lowp_errf(err, errlen, LOWP_EIO, "plugin kernel %s returned error %d", x->e->name, *ret);
  }
  for (j = 0; j < op->n_out && !st; j++) {
    const unsigned char *b = mem + off[op->n_in + j];
    int k = kinds[op->n_in + j];
    for (i = 0; i < cnt[op->n_in + j]; i++) {
      double v;
      switch (k) {
      case C_F64: v = ((const double *)b)[i]; break;
      case C_F32: v = ((const float *)b)[i]; break;
      case C_U16: if (lowp_decode(&v, ((const uint16_t *)b)[i], &p->out)) v = NAN; break;
      default: if (lowp_decode(&v, b[i], &p->out)) v = NAN; break;
      }
      out[j][i] = v;
    }
  }
  munmap(mem, total);
  return st;
}

static void plugin_release(lowp_subject_t *s) {
  pctx_t *x = s->ctx;
  if (x) {
    if (x->lib) dlclose(x->lib);
    free(x);
  }
  s->ctx = NULL;
}

/* ----------------------------------------------------------- public API */

int lowp_plugin_table_check(const lowp_plugin_kernel_t *tab, size_t n, char *err, size_t errlen) {
  size_t i, j;
  int st;
  if (!tab || n == 0 || n > 4096)
    return lowp_errf(err, errlen, LOWP_EFILE, "the kernel table is %s",
                  !tab ? "NULL" : n == 0 ? "empty" : "longer than 4096 entries");
  for (i = 0; i < n; i++) {
    char raw[400];
    st = check_entry(&tab[i], i, raw, sizeof raw);
    for (j = 0; !st && j < i; j++)
      if (!strcmp(tab[i].name, tab[j].name))
        st = lowp_errf(raw, sizeof raw, LOWP_EFILE, "two kernels named '%.64s'", tab[i].name);
    if (st) {
      /* names come from the library: the message stays one printable line */
      if (err && errlen) lowp_escape_ctl(err, errlen, raw);
      return st;
    }
  }
  return LOWP_OK;
}

int lowp_plugin_subject_open(lowp_subject_t *s, const char *path, const char *kernel,
                             const lowp_problem_t *p, char *err, size_t errlen) {
  void *lib;
  const uint32_t *ver;
  const lowp_plugin_kernel_t *(*table_fn)(size_t *);
  const lowp_plugin_kernel_t *tab, *found = NULL;
  size_t n = 0, i;
  int st, nfound = 0;
  pctx_t *x;
  if (err && errlen) err[0] = '\0';
  if (!s || !path || !p || !p->op) return LOWP_EINVAL;
  memset(s, 0, sizeof *s);
  lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *d = dlerror();
    return lowp_errf(err, errlen, LOWP_EIO, "cannot load plugin: %s", d ? d : path);
  }
  ver = (const uint32_t *)dlsym(lib, "lowp_plugin_abi_version");
  if (!ver) {
    st = lowp_errf(err, errlen, LOWP_EUNSUPPORTED,
                  "%s exports no lowp_plugin_abi_version: not a lowp plugin (include/lowp_plugin.h)", path);
    dlclose(lib);
    return st;
  }
  if (*ver != LOWP_PLUGIN_ABI_VERSION) {
    uint32_t v = *ver;
    st = lowp_errf(err, errlen, LOWP_EUNSUPPORTED,
                  "%s is built for plugin ABI version %u; this lowp reads version %u", path, v,
                  LOWP_PLUGIN_ABI_VERSION);
    dlclose(lib);
    return st;
  }
  *(void **)&table_fn = dlsym(lib, "lowp_plugin_kernels");
  if (!table_fn) {
    st = lowp_errf(err, errlen, LOWP_EFILE, "%s exports no lowp_plugin_kernels table", path);
    dlclose(lib);
    return st;
  }
  tab = table_fn(&n);
  {
    char e2[400];
    st = lowp_plugin_table_check(tab, n, e2, sizeof e2);
    if (st) {
      st = lowp_errf(err, errlen, st, "%s: malformed table: %s", path, e2);
      dlclose(lib);
      return st;
    }
  }
  for (i = 0; i < n; i++) {
    if (kernel ? !strcmp(tab[i].name, kernel) : !strcmp(tab[i].op, p->op->name)) {
      found = &tab[i];
      nfound++;
    }
  }
  if (!found || (!kernel && nfound > 1)) {
    size_t m = 0;
    char list[400] = "";
    for (i = 0; i < n && m < sizeof list; i++)
      m += (size_t)snprintf(list + m, sizeof list - m, "%s%s (%s)", i ? ", " : "", tab[i].name, tab[i].op);
    dlclose(lib);
    if (kernel)
      return lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s has no kernel '%.64s' (it has: %s)", path, kernel, list);
    return lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s has %s kernel for %s: name one (it has: %s)", path,
                  nfound ? "more than one" : "no", p->op->name, list);
  }
  if (strcmp(found->op, p->op->name)) {
    st = lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s: kernel '%s' computes %s, not %s", path,
                  found->name, found->op, p->op->name);
    dlclose(lib);
    return st;
  }
  /* formats: the check's must be the kernel's */
  {
    lowp_format_t f;
    int k;
    for (k = 0; k < p->op->n_in; k++) {
      if (p->op->in_index[k]) continue;
      lowp_format_parse(&f, found->in[k], NULL, 0);
      if (!p->in[k].name || !formats_equal(&p->in[k], &f)) {
        st = lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s: kernel '%s' takes %s for %s, the check gives %s",
                      path, found->name, found->in[k], p->op->in_names[k],
                      p->in[k].name ? p->in[k].name : "none");
        dlclose(lib);
        return st;
      }
    }
    lowp_format_parse(&f, found->out, NULL, 0);
    if (!p->out.name || !formats_equal(&p->out, &f)) {
      st = lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s: kernel '%s' writes %s, the check expects %s",
                    path, found->name, found->out, p->out.name ? p->out.name : "none");
      dlclose(lib);
      return st;
    }
  }
  x = calloc(1, sizeof *x);
  if (!x) { dlclose(lib); return LOWP_ENOMEM; }
  x->lib = lib;
  x->e = found;
  snprintf(x->path, sizeof x->path, "%s", path);
  snprintf(s->name, sizeof s->name, "plugin %.150s:%.64s", path, found->name);
  s->kind = "plugin";
  s->run = plugin_run;
  s->ctx = x;
  s->release = plugin_release;
  return LOWP_OK;
}
