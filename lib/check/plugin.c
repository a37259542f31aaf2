/* lowp_plugin_subject -- a kernel in a user's shared library (include/lowp_plugin.h) as a pipeline subject */

/*
 * Nothing of the library ever runs in lowp's own process: constructors,
 * the table function and the kernels all run in children (lowp_spawn_fn,
 * lib/io/spawn.h), each in its own process group with its output captured,
 * leaving through _exit (never lowp's exit handlers nor MPI_Finalize).
 *
 * Opening: a child loads the library (dlopen RTLD_NOW | RTLD_LOCAL), reads
 * the ABI version symbol and the table (every entry checked), finds the
 * entry for the problem and compares its formats; it hands back the entry's
 * index and name, or a message. A library whose load crashes, exits or
 * hangs is refused with what it did.
 *
 * Calling: the inputs are encoded into their containers (exactly: values of
 * their formats become bit patterns, include/lowp_plugin.h) in one shared
 * anonymous mapping, each tensor in its own pages followed by an
 * inaccessible guard page, placed so that its end touches the guard (to
 * the 64-byte alignment the ABI promises; the few bytes between hold a
 * canary, as do the bytes before the tensor in its pages: random bytes, new
 * at every call, so that no byte a kernel writes past its output goes
 * unseen by being the canary's). A child loads
 * the library again, maps the inputs read-only, records the address of a
 * fault, and calls the kernel. lowp waits (the check's "timeout", else
 * LOWP_PLUGIN_TIMEOUT, default 600 s; then the group is killed), then
 * checks the canaries and compares the inputs with its own copy, and
 * decodes the outputs. A crash, an exit, a hang, a write past a buffer or
 * into an input is the subject's failure (LOWP_EIO, naming what the kernel
 * did, with the tail of its output), never lowp's.
 */

#define _GNU_SOURCE /* REG_ERR of ucontext_t */

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
#include <sys/random.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "check/plugin.h"
#include "io/escape.h"
#include "io/spawn.h"
#include "lowp_plugin.h"
#include "status.h"

/* ------------------------------------------------------ private helpers */

typedef enum { C_F64, C_F32, C_U16, C_U8, C_I64 } container_t;

typedef struct {
  char *path;       /* the library */
  size_t index;     /* the kernel's entry in its table */
  char kernel[256]; /* its name (cut to 255 bytes) */
  double timeout;   /* seconds */
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


/* the time limit: the check's, else LOWP_PLUGIN_TIMEOUT, else 600 s */
static int time_limit(double given, double *out, char *err, size_t errlen) {
  const char *s = getenv("LOWP_PLUGIN_TIMEOUT");
  if (given > 0) {
    *out = given;
    return LOWP_OK;
  }
  *out = 600;
  if (!s) return LOWP_OK;
  if (lowp_parse_seconds(out, s) != 0)
    return lowp_errf(err, errlen, LOWP_EINVAL, "LOWP_PLUGIN_TIMEOUT='%.40s' is not a time limit: "
                     "give seconds, a number > 0 and at most 1e9 (such as 30 or 0.5)", s);
  return LOWP_OK;
}

/* ---- opening, in a child */

typedef struct {
  int st;
  size_t index;
  char name[256];
  char err[1024];
} load_res_t;

typedef struct {
  const char *path, *kernel;
  const lowp_problem_t *p;
  load_res_t *res;
} load_arg_t;

/* the table of lib, or a message */
static int get_table(void *lib, const char *path, const lowp_plugin_kernel_t **tab, size_t *n,
                     char *err, size_t errlen) {
  const uint32_t *ver = (const uint32_t *)dlsym(lib, "lowp_plugin_abi_version");
  const lowp_plugin_kernel_t *(*table_fn)(size_t *);
  char e2[400];
  int st;
  if (!ver)
    return lowp_errf(err, errlen, LOWP_EUNSUPPORTED,
                     "%s exports no lowp_plugin_abi_version: not a lowp plugin (include/lowp_plugin.h)", path);
  if (*ver != LOWP_PLUGIN_ABI_VERSION) {
    uint32_t v = *ver;
    return lowp_errf(err, errlen, LOWP_EUNSUPPORTED,
                     "%s is built for plugin ABI version %u; this lowp reads version %u", path, v,
                     LOWP_PLUGIN_ABI_VERSION);
  }
  *(void **)&table_fn = dlsym(lib, "lowp_plugin_kernels");
  if (!table_fn) return lowp_errf(err, errlen, LOWP_EFILE, "%s exports no lowp_plugin_kernels table", path);
  *n = 0;
  *tab = table_fn(n);
  st = lowp_plugin_table_check(*tab, *n, e2, sizeof e2);
  if (st) return lowp_errf(err, errlen, st, "%s: malformed table: %s", path, e2);
  return LOWP_OK;
}

/* the entry for the problem (named kernel, or the only one of its operation) */
static int find_entry(const lowp_plugin_kernel_t *tab, size_t n, const char *path, const char *kernel,
                      const lowp_problem_t *p, size_t *idx, char *err, size_t errlen) {
  size_t i, m = 0;
  int nfound = 0;
  char list[400] = "";
  for (i = 0; i < n; i++)
    if (kernel ? !strcmp(tab[i].name, kernel) : !strcmp(tab[i].op, p->op->name)) {
      if (!nfound) *idx = i;
      nfound++;
    }
  if (nfound == 1 || (kernel && nfound)) return LOWP_OK;
  for (i = 0; i < n && m < sizeof list; i++)
    m += (size_t)snprintf(list + m, sizeof list - m, "%s%s (%s)", i ? ", " : "", tab[i].name, tab[i].op);
  if (kernel)
    return lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s has no kernel '%.64s' (it has: %s)", path, kernel, list);
  return lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s has %s kernel for %s: name one (it has: %s)", path,
                   nfound ? "more than one" : "no", p->op->name, list);
}

/* the entry's operation and formats must be the check's */
static int match_entry(const lowp_plugin_kernel_t *e, const char *path, const lowp_problem_t *p,
                       char *err, size_t errlen) {
  lowp_format_t f;
  int k;
  if (strcmp(e->op, p->op->name))
    return lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s: kernel '%s' computes %s, not %s", path,
                     e->name, e->op, p->op->name);
  for (k = 0; k < p->op->n_in; k++) {
    if (p->op->in_index[k]) continue;
    lowp_format_parse(&f, e->in[k], NULL, 0);
    if (!p->in[k].name || !formats_equal(&p->in[k], &f))
      return lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s: kernel '%s' takes %s for %s, the check gives %s",
                       path, e->name, e->in[k], p->op->in_names[k], p->in[k].name ? p->in[k].name : "none");
  }
  lowp_format_parse(&f, e->out, NULL, 0);
  if (!p->out.name || !formats_equal(&p->out, &f))
    return lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s: kernel '%s' writes %s, the check expects %s",
                     path, e->name, e->out, p->out.name ? p->out.name : "none");
  return LOWP_OK;
}

/* the child of opening: everything that reads the library */
static void load_child(void *arg) {
  load_arg_t *a = arg;
  load_res_t *r = a->res;
  const lowp_plugin_kernel_t *tab = NULL;
  size_t n = 0, idx = 0;
  void *lib = dlopen(a->path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *d = dlerror();
    r->st = lowp_errf(r->err, sizeof r->err, LOWP_EIO, "cannot load plugin: %s", d ? d : a->path);
    return;
  }
  r->st = get_table(lib, a->path, &tab, &n, r->err, sizeof r->err);
  if (!r->st) r->st = find_entry(tab, n, a->path, a->kernel, a->p, &idx, r->err, sizeof r->err);
  if (!r->st) r->st = match_entry(&tab[idx], a->path, a->p, r->err, sizeof r->err);
  if (!r->st) {
    r->index = idx;
    snprintf(r->name, sizeof r->name, "%s", tab[idx].name);
  }
}

/* the signal's name, or "signal N" */
static const char *sig_text(int sig, char *buf, size_t len) {
  const char *s = lowp_signal_name(sig);
  if (s) return s;
  snprintf(buf, len, "signal %d", sig);
  return buf;
}

/* what a child did that it should not have (how != RETURNED), into msg */
static void child_fault(const lowp_child_t *c, char *msg, size_t len, double lim) {
  char b[32];
  switch (c->how) {
  case LOWP_CHILD_TIMEOUT: snprintf(msg, len, "did not finish in %g s (killed", lim); break;
  case LOWP_CHILD_EXIT_CALLED: snprintf(msg, len, "exited with status %d (it called exit)", c->code); break;
  case LOWP_CHILD_EXITED: snprintf(msg, len, "exited with status %d (it called _exit)", c->code); break;
  case LOWP_CHILD_STOPPED:
    snprintf(msg, len, "stopped itself (%s; killed at once, not left to the time limit)",
             sig_text(c->code, b, sizeof b));
    break;
  default: {
    int sig = c->code;
    int crash = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT ||
                sig == SIGTRAP || sig == SIGSYS;
    if (crash) snprintf(msg, len, "crashed (%s)", sig_text(sig, b, sizeof b));
    else snprintf(msg, len, "was killed by signal %s", sig_text(sig, b, sizeof b));
  }
  }
}

/* "; its output ended with: ..." (the last line or so), or "" */
static void tail_note(const lowp_child_t *c, char *out, size_t len) {
  size_t n = strlen(c->tail), from = n > 160 ? n - 160 : 0;
  char safe[700];
  out[0] = '\0';
  if (!n) return;
  while (n > from && (c->tail[n - 1] == '\n' || c->tail[n - 1] == '\r')) n--;
  if (n == from) return;
  {
    char cut[200];
    memcpy(cut, c->tail + from, n - from);
    cut[n - from] = '\0';
    lowp_escape_ctl(safe, sizeof safe, cut);
  }
  snprintf(out, len, "; it wrote %zu bytes of output, ending '%s%.400s'", c->out_bytes, from ? "..." : "", safe);
}

/* ---- calling, in a child */

/* one tensor in the shared mapping: its pages, then a guard page */
typedef struct {
  unsigned char *base; /* first page */
  size_t pages;        /* pages before the guard */
  unsigned char *data; /* the tensor, ending at or just before the guard */
  size_t bytes;
  int kind;            /* container */
  int input;
  const char *name;
} region_t;

typedef struct {
  volatile int stage;           /* how far the child got (STAGE_*) */
  volatile int ret;             /* the kernel's return value */
  volatile int fault_sig;       /* a fault: the signal and address */
  volatile int fault_write;     /* 1 write, 0 read, -1 unknown */
  volatile uintptr_t fault_addr;
} call_hdr_t;

enum { STAGE_START = 0, STAGE_NOLOAD, STAGE_CHANGED, STAGE_CALLING, STAGE_RETURNED };

typedef struct {
  const pctx_t *x;
  call_hdr_t *hdr;
  region_t *reg;
  int n_in, n_io;
  lowp_plugin_dims_t dims;
} call_arg_t;

static call_hdr_t *lowp__g_call_hdr; /* in the child only */

/* the child's fault recorder: address and kind, then the default action */
static void on_fault(int sig, siginfo_t *info, void *uc) {
  call_hdr_t *h = lowp__g_call_hdr;
  h->fault_sig = sig;
  h->fault_write = -1;
  if (info->si_code > 0) {
    h->fault_addr = (uintptr_t)info->si_addr;
#if defined(__x86_64__) && defined(REG_ERR)
    h->fault_write = (((ucontext_t *)uc)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#endif
  }
  (void)uc;
  raise(sig); /* SA_RESETHAND | SA_NODEFER: the default action, now */
}

static void call_child(void *arg) {
  call_arg_t *a = arg;
  const lowp_plugin_kernel_t *(*table_fn)(size_t *);
  const lowp_plugin_kernel_t *tab;
  void *pin[LOWP_OP_MAXIO], *pout[LOWP_OP_MAXIO];
  size_t n = 0;
  int j, r;
  void *lib = dlopen(a->x->path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) { a->hdr->stage = STAGE_NOLOAD; return; }
  *(void **)&table_fn = dlsym(lib, "lowp_plugin_kernels");
  tab = table_fn ? table_fn(&n) : NULL;
  if (!tab || a->x->index >= n || !tab[a->x->index].name || !tab[a->x->index].fn ||
      strncmp(tab[a->x->index].name, a->x->kernel, sizeof a->x->kernel - 1)) {
    a->hdr->stage = STAGE_CHANGED;
    return;
  }
  for (j = 0; j < a->n_io; j++) {
    region_t *g = &a->reg[j];
    if (g->input) mprotect(g->base, g->pages * (size_t)sysconf(_SC_PAGESIZE), PROT_READ);
    (g->input ? pin : pout)[g->input ? j : j - a->n_in] = g->data;
  }
  {
    struct sigaction sa;
    stack_t ss;
    ss.ss_size = 1 << 16;
    ss.ss_flags = 0;
    ss.ss_sp = mmap(NULL, ss.ss_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ss.ss_sp != MAP_FAILED) sigaltstack(&ss, NULL);
    lowp__g_call_hdr = a->hdr;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER | (ss.ss_sp != MAP_FAILED ? SA_ONSTACK : 0);
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
  }
  a->hdr->stage = STAGE_CALLING;
  r = tab[a->x->index].fn(pout, (const void *const *)pin, &a->dims);
  a->hdr->ret = r;
  a->hdr->stage = STAGE_RETURNED;
}

/* ---- calling, in lowp */

typedef struct {
  unsigned char *mem;
  size_t total, page;
  region_t reg[LOWP_OP_MAXIO * 2];
  size_t cnt[LOWP_OP_MAXIO * 2];
  int n_in, n_io;
  unsigned char *saved; /* lowp's copy of the inputs */
  unsigned char *canary; /* the random bytes around each tensor, as written */
  size_t n_canary;
} layout_t;

static void layout_free(layout_t *L) {
  if (L->mem && L->mem != MAP_FAILED) munmap(L->mem, L->total);
  free(L->saved);
  free(L->canary);
  L->mem = NULL;
  L->saved = NULL;
  L->canary = NULL;
}

/* n random bytes for the canaries, new at every call (issue 30: a fixed
   byte, 0xA5, let a write of that very byte past an output go unseen):
   getrandom(2), else splitmix64 (Steele, Lea, Flood, OOPSLA 2014) of the
   time, the pid and an address. Not for numerics: no seed to reproduce. */
static void random_bytes(unsigned char *out, size_t n) {
  size_t got = 0;
  uint64_t z = 0;
  while (got < n) {
    ssize_t r = getrandom(out + got, n - got, 0);
    if (r <= 0) break;
    got += (size_t)r;
  }
  if (got < n) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    z = (uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 32) ^ ((uint64_t)getpid() << 16) ^ (uintptr_t)out;
  }
  for (; got < n; got++) {
    uint64_t x = (z += 0x9E3779B97F4A7C15u);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
    out[got] = (unsigned char)(x ^ (x >> 31));
  }
}

/* the mapping: a header page, then each tensor's pages and a guard page */
static int layout_map(layout_t *L, const lowp_problem_t *p, char *err, size_t errlen) {
  const lowp_op_t *op = p->op;
  size_t sh[LOWP_OP_MAXDIM], off, saved = 0, c;
  int j, nd;
  memset(L, 0, sizeof *L);
  L->page = (size_t)sysconf(_SC_PAGESIZE);
  L->n_in = op->n_in;
  L->n_io = op->n_in + op->n_out;
  L->total = 2 * L->page; /* the header, and a guard page after it */
  for (j = 0; j < L->n_io; j++) {
    region_t *g = &L->reg[j];
    const lowp_format_t *f = j < op->n_in ? &p->in[j] : &p->out;
    if (lowp_op_shape(p, j, sh, &nd, &L->cnt[j])) return LOWP_EINVAL;
    g->input = j < op->n_in;
    g->kind = (g->input && op->in_index[j]) ? C_I64 : container(f);
    if (g->kind < 0) return lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "format %s has no container", f->name);
    g->name = g->input ? op->in_names[j] : op->out_names[j - op->n_in];
    g->bytes = L->cnt[j] * csize[g->kind];
    g->pages = (g->bytes + L->page - 1) / L->page + (g->bytes == 0);
    L->total += (g->pages + 1) * L->page;
    if (g->input) saved += g->bytes;
  }
  L->mem = mmap(NULL, L->total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (L->mem == MAP_FAILED) return lowp_errf(err, errlen, LOWP_ENOMEM, "plugin: cannot map %zu bytes", L->total);
  L->saved = malloc(saved + 1);
  if (!L->saved) return LOWP_ENOMEM;
  if (mprotect(L->mem + L->page, L->page, PROT_NONE) != 0)
    return lowp_errf(err, errlen, LOWP_EIO, "plugin: cannot protect a guard page: %s", strerror(errno));
  for (j = 0; j < L->n_io; j++) L->n_canary += L->reg[j].pages * L->page - L->reg[j].bytes;
  L->canary = malloc(L->n_canary + 1);
  if (!L->canary) return LOWP_ENOMEM;
  random_bytes(L->canary, L->n_canary);
  for (j = 0, off = 2 * L->page, c = 0; j < L->n_io; j++) {
    region_t *g = &L->reg[j];
    size_t span = g->pages * L->page, before;
    g->base = L->mem + off;
    /* the end at the guard, the start aligned to 64 bytes */
    g->data = g->base + ((span - g->bytes) & ~(size_t)63);
    before = (size_t)(g->data - g->base);
    memcpy(g->base, L->canary + c, before);
    memset(g->data, 0, g->bytes);
    memcpy(g->data + g->bytes, L->canary + c + before, span - before - g->bytes);
    c += span - g->bytes;
    if (mprotect(g->base + span, L->page, PROT_NONE) != 0)
      return lowp_errf(err, errlen, LOWP_EIO, "plugin: cannot protect a guard page: %s", strerror(errno));
    off += span + L->page;
  }
  return LOWP_OK;
}

/* the inputs into their containers (and lowp's copy of them) */
static int encode_inputs(layout_t *L, const double *const *in, const lowp_problem_t *p, char *err,
                         size_t errlen) {
  size_t i, s = 0;
  int j;
  for (j = 0; j < L->n_in; j++) {
    region_t *g = &L->reg[j];
    unsigned char *b = g->data;
    for (i = 0; i < L->cnt[j]; i++) {
      double v = in[j][i];
      uint64_t bits;
      switch (g->kind) {
      case C_F64: ((double *)b)[i] = v; break;
      case C_F32:
        /* a value the container cannot hold would reach the kernel rounded while the exact
           reference keeps it: nvfp4's dequantized q x s x tensor_scale carries up to 30 bits,
           and an exact kernel then failed by hundreds of ulps */
        if ((double)(float)v != v && v == v)
          return lowp_errf(err, errlen, LOWP_EINVAL, "input %s[%zu] = %.17g is not an fp32 value: the kernel "
                           "reads %s as floats and would get it rounded, while the exact reference keeps "
                           "it%s", g->name, i, v, g->name,
                           p->has_bin[j] ? " (block-scaled with a tensor scale: dequantized values q x scale x "
                                           "tensor_scale need more than fp32's 24 bits)" : "");
        ((float *)b)[i] = (float)v;
        break;
      case C_I64: ((int64_t *)b)[i] = (int64_t)v; break;
      default:
        if (lowp_encode(&bits, v, &p->in[j]) != LOWP_OK)
          return lowp_errf(err, errlen, LOWP_EINVAL, "input %s[%zu] = %g is not a value of %s",
                           g->name, i, v, p->in[j].name);
        if (g->kind == C_U16) ((uint16_t *)b)[i] = (uint16_t)bits;
        else b[i] = (unsigned char)bits;
      }
    }
    memcpy(L->saved + s, g->data, g->bytes);
    s += g->bytes;
  }
  return LOWP_OK;
}

/* a fault at addr: in which tensor's pages or guard, and what was done */
static void name_fault(const layout_t *L, const call_hdr_t *h, char *out, size_t len) {
  int j;
  const char *did = h->fault_write == 1 ? "wrote" : h->fault_write == 0 ? "read" : "accessed memory";
  uintptr_t a = h->fault_addr, g0 = (uintptr_t)L->mem + L->page;
  out[0] = '\0';
  if (!a) return;
  if (a >= g0 && a < g0 + L->page) { /* the guard before the first tensor */
    snprintf(out, len, ": it %s before the start of its input %s", did, L->reg[0].name);
    return;
  }
  for (j = 0; j < L->n_io; j++) {
    const region_t *g = &L->reg[j];
    uintptr_t b0 = (uintptr_t)g->base, b1 = b0 + g->pages * L->page;
    const char *what = g->input ? "input" : "output";
    if (a >= b1 && a < b1 + L->page) {
      char next[80] = "";
      if (j + 1 < L->n_io)
        snprintf(next, sizeof next, " (or before the start of its %s %s)", L->reg[j + 1].input ? "input" : "output",
                 L->reg[j + 1].name);
      snprintf(out, len, ": it %s past the end of its %s %s%s", did, what, g->name, next);
      return;
    }
    if (g->input && a >= b0 && a < b1) {
      uintptr_t d0 = (uintptr_t)g->data, d1 = d0 + g->bytes;
      snprintf(out, len, ": it wrote %s its input %s, which is read-only",
               a < d0 ? "before the start of" : a >= d1 ? "past the end of" : "into", g->name);
      return;
    }
  }
}

/* after a return: canaries around the outputs, the inputs unchanged */
static int check_buffers(const layout_t *L, char *msg, size_t len) {
  size_t s = 0, k, c = 0;
  int j;
  for (j = 0; j < L->n_io; j++) {
    const region_t *g = &L->reg[j];
    const unsigned char *end = g->base + g->pages * L->page, *q;
    if (g->input) {
      if (memcmp(L->saved + s, g->data, g->bytes)) {
        for (k = 0; g->data[k] == L->saved[s + k]; k++) {}
        snprintf(msg, len, "overwrote its input %s (byte %zu of %zu changed), which is read-only",
                 g->name, k, g->bytes);
        return 1;
      }
      s += g->bytes;
      c += g->pages * L->page - g->bytes;
      continue;
    }
    {
      const unsigned char *cb = L->canary + c, *ca = cb + (g->data - g->base);
      c += g->pages * L->page - g->bytes;
      for (q = g->data + g->bytes; q < end; q++)
        if (*q != ca[q - (g->data + g->bytes)]) {
          snprintf(msg, len, "wrote past the end of its output %s (%zu bytes after it changed)",
                   g->name, (size_t)(q - (g->data + g->bytes)) + 1);
          return 1;
        }
      for (q = g->base; q < g->data; q++)
        if (*q != cb[q - g->base]) {
          snprintf(msg, len, "wrote before the start of its output %s (%zu bytes before it)",
                   g->name, (size_t)(g->data - q));
          return 1;
        }
    }
  }
  return 0;
}

/* the outputs, decoded */
static void decode_outputs(const layout_t *L, double *const *out, const lowp_problem_t *p) {
  size_t i;
  int j;
  for (j = L->n_in; j < L->n_io; j++) {
    const region_t *g = &L->reg[j];
    const unsigned char *b = g->data;
    for (i = 0; i < L->cnt[j]; i++) {
      double v;
      switch (g->kind) {
      case C_F64: v = ((const double *)b)[i]; break;
      case C_F32: v = ((const float *)b)[i]; break;
      case C_U16: if (lowp_decode(&v, ((const uint16_t *)b)[i], &p->out)) v = NAN; break;
      default: if (lowp_decode(&v, b[i], &p->out)) v = NAN; break;
      }
      out[j - L->n_in][i] = v;
    }
  }
}

/* what the call did: LOWP_OK, or LOWP_EIO and the message */
static int judge_call(const pctx_t *x, const layout_t *L, const call_hdr_t *h, const lowp_child_t *c,
                      char *err, size_t errlen) {
  char what[300], where[200], tail[700];
  tail_note(c, tail, sizeof tail);
  if (c->how != LOWP_CHILD_RETURNED || h->stage != STAGE_RETURNED) {
    if (c->how == LOWP_CHILD_RETURNED)
      return lowp_errf(err, errlen, LOWP_EIO, "plugin %s: %s in the kernel's process%s", x->path,
                       h->stage == STAGE_NOLOAD ? "the library did not load again"
                                                : "the table changed between two loads", tail);
    child_fault(c, what, sizeof what, x->timeout);
    if (c->how == LOWP_CHILD_TIMEOUT)
      return lowp_errf(err, errlen, LOWP_EIO, "plugin kernel %s %s; the check's \"timeout\" or "
                       "LOWP_PLUGIN_TIMEOUT sets the limit)%s", x->kernel, what, tail);
    name_fault(L, h, where, sizeof where);
    return lowp_errf(err, errlen, LOWP_EIO, "plugin kernel %s %s%s%s", x->kernel, what,
                     h->stage < STAGE_CALLING ? " while its library was loaded, before the call"
                     : c->how == LOWP_CHILD_SIGNALED ? where : " instead of returning", tail);
  }
  if (h->ret != 0)
    return lowp_errf(err, errlen, LOWP_EIO, "plugin kernel %s returned error %d%s", x->kernel, h->ret, tail);
  if (check_buffers(L, what, sizeof what))
    return lowp_errf(err, errlen, LOWP_EIO, "plugin kernel %s %s", x->kernel, what);
  return LOWP_OK;
}

static int plugin_run(const lowp_subject_t *s, double *const *out, const double *const *in,
                      const lowp_problem_t *p, char *err, size_t errlen) {
  const pctx_t *x = s->ctx;
  layout_t L;
  call_arg_t a;
  lowp_child_t c;
  int st = layout_map(&L, p, err, errlen);
  if (!st) st = encode_inputs(&L, in, p, err, errlen);
  if (st) {
    layout_free(&L);
    return st;
  }
  memset(&a, 0, sizeof a);
  a.x = x;
  a.hdr = (call_hdr_t *)L.mem;
  a.reg = L.reg;
  a.n_in = L.n_in;
  a.n_io = L.n_io;
  a.dims.batch = p->dims.batch; a.dims.m = p->dims.m; a.dims.n = p->dims.n; a.dims.k = p->dims.k;
  a.dims.eps = p->eps;
  a.dims.reduction_mean = p->reduction_mean;
  fflush(NULL);
  st = lowp_spawn_fn(&c, call_child, &a, x->timeout);
  if (st) st = lowp_errf(err, errlen, LOWP_EIO, "plugin: cannot start a process for the kernel: %s",
                         strerror(errno));
  if (!st) st = judge_call(x, &L, a.hdr, &c, err, errlen);
  if (!st) decode_outputs(&L, out, p);
  layout_free(&L);
  return st;
}

static void plugin_release(lowp_subject_t *s) {
  pctx_t *x = s->ctx;
  if (x) {
    free(x->path);
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

int lowp_plugin_subject_open_ex(lowp_subject_t *s, const char *path, const char *kernel, double timeout,
                                const lowp_problem_t *p, char *err, size_t errlen) {
  load_arg_t a;
  load_res_t *r;
  lowp_child_t c;
  pctx_t *x;
  double lim;
  int st;
  if (err && errlen) err[0] = '\0';
  if (!s || !path || !p || !p->op) return LOWP_EINVAL;
  memset(s, 0, sizeof *s);
  if ((st = time_limit(timeout, &lim, err, errlen))) return st;
  r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (r == MAP_FAILED) return LOWP_ENOMEM;
  r->st = LOWP_EIO;
  a.path = path;
  a.kernel = kernel;
  a.p = p;
  a.res = r;
  fflush(NULL);
  st = lowp_spawn_fn(&c, load_child, &a, lim);
  if (st) st = lowp_errf(err, errlen, LOWP_EIO, "plugin: cannot start a process to load %s", path);
  else if (c.how != LOWP_CHILD_RETURNED) {
    char what[300], tail[700];
    child_fault(&c, what, sizeof what, lim);
    tail_note(&c, tail, sizeof tail);
    st = lowp_errf(err, errlen, LOWP_EFILE, "plugin %s: loading it and reading its table %s%s%s", path,
                   what, c.how == LOWP_CHILD_TIMEOUT ? ")" : "", tail);
  } else if (r->st) {
    st = r->st;
    lowp_errf(err, errlen, 0, "%s", r->err);
  }
  if (st) {
    munmap(r, sizeof *r);
    return st;
  }
  x = calloc(1, sizeof *x);
  if (x) x->path = strdup(path);
  if (!x || !x->path) {
    free(x);
    munmap(r, sizeof *r);
    return LOWP_ENOMEM;
  }
  x->index = r->index;
  x->timeout = lim;
  snprintf(x->kernel, sizeof x->kernel, "%s", r->name);
  munmap(r, sizeof *r);
  snprintf(s->name, sizeof s->name, "plugin %.150s:%.64s", path, x->kernel);
  s->kind = "plugin";
  s->run = plugin_run;
  s->ctx = x;
  s->release = plugin_release;
  return LOWP_OK;
}

int lowp_plugin_subject_open(lowp_subject_t *s, const char *path, const char *kernel,
                             const lowp_problem_t *p, char *err, size_t errlen) {
  return lowp_plugin_subject_open_ex(s, path, kernel, 0, p, err, errlen);
}
