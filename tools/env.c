/* lowp environment manifest -- see env.h */

/*
 * Why a manifest: the same seed gives the same bytes on the machine that
 * ran it, but a number that comes from a library's CPU-specific kernel
 * (OpenBLAS picks its sgemm kernel by CPU: SkylakeX, Haswell, Zen ...) or
 * from a timing is another number elsewhere. The manifest says what the
 * run executed on, and lowp_env_dependent says which rows may differ on
 * another machine, so `lowp report --diff` can tell those apart from
 * differences that mean something changed.
 */

#define _GNU_SOURCE

#include "env.h"
#include "cpu.h"
#include "io/plot.h"
#include "io/spawn.h"

#include <gmp.h>
#include <gnu/libc-version.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

char *openblas_get_config(void);
char *openblas_get_corename(void);

#ifndef LOWP_COMPILE_FLAGS
#define LOWP_COMPILE_FLAGS "unknown"
#endif

/* ------------------------------------------------------ private helpers */

/* the first line of a helper program's output, or "" (no shell: lowp_spawn) */
static void first_line(char *buf, size_t len, char *const argv[]) {
  int rc;
  buf[0] = '\0';
  if (lowp_spawn(&rc, argv, NULL, NULL, buf, len) != 0 || rc != 0) {
    buf[0] = '\0';
    return;
  }
  buf[strcspn(buf, "\n")] = '\0';
}

/* the value of the first "key\t: value" line of /proc/cpuinfo, or "" */
static void cpuinfo(char *out, size_t len, const char *key) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  char *line = NULL;
  size_t cap = 0, kl = strlen(key);
  out[0] = '\0';
  if (!f) return;
  while (getline(&line, &cap, f) > 0) {
    char *c;
    if (strncmp(line, key, kl) || (line[kl] != ' ' && line[kl] != '\t' && line[kl] != ':')) continue;
    c = strchr(line, ':');
    if (!c) continue;
    for (c++; *c == ' '; c++) {}
    snprintf(out, len, "%s", c);
    out[strcspn(out, "\n")] = '\0';
    break;
  }
  free(line);
  fclose(f);
}

/* the ISA flags that decide which kernels lowp and OpenBLAS run (the rest of the list says nothing about the
   numbers), those present in flags; NULL-terminated */
static const char *const isa_flags[] = {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                                        "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile",
                                        "amx_bf16", "amx_fp16", NULL};

static cJSON *cpu_flags(const char *flags) {
  cJSON *a = cJSON_CreateArray();
  size_t i;
  for (i = 0; isa_flags[i]; i++) {
    const char *p = flags;
    size_t n = strlen(isa_flags[i]);
    while ((p = strstr(p, isa_flags[i])) != NULL) {
      if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) {
        cJSON_AddItemToArray(a, cJSON_CreateString(isa_flags[i]));
        break;
      }
      p += n;
    }
  }
  return a;
}

/* YYYY-MM-DD (UTC) of SOURCE_DATE_EPOCH when it is a number, else of now */
static void utc_day(char *buf, size_t len) {
  const char *e = getenv("SOURCE_DATE_EPOCH");
  char *end = NULL;
  time_t t = time(NULL);
  struct tm tm;
  if (e && *e) {
    long long v = strtoll(e, &end, 10);
    if (end && !*end && v >= 0) t = (time_t)v;
  }
  if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d", &tm)) snprintf(buf, len, "unknown");
}

/* ----------------------------------------------------------- public API */

const char *lowp_env_git_revision(void) {
  /* asked once per process: the run header and the manifest both name it, and `git describe --dirty`
     reads the whole work tree (about 60 ms of CPU each time). --no-optional-locks (git 2.15): describe
     --dirty otherwise refreshes the index under .git/index.lock, and a lowp killed meanwhile takes its git
     with it (lowp_spawn: PR_SET_PDEATHSIG, SIGKILL), leaving the lock behind in the user's repository:
     their next commit fails with "index.lock: File exists" (seen after `kill -TERM` of a run) */
  static char rev[128];
  static int asked;
  char *git_rev[] = {"git", "--no-optional-locks", "-C", LOWP_SOURCE_DIR, "describe", "--always", "--dirty",
                     "--abbrev=12", NULL};
  if (!asked) {
    first_line(rev, sizeof rev, git_rev);
    asked = 1;
  }
  return rev;
}

cJSON *lowp_env_manifest(const char *name) {
  cJSON *o = cJSON_CreateObject(), *cpu, *blas, *libs;
  char buf[4096];
  struct utsname u;
  const char *cfg = openblas_get_config(), *core = openblas_get_corename();
  const char *rev = lowp_env_git_revision();
  utc_day(buf, sizeof buf);
  cJSON_AddStringToObject(o, "date_utc", buf);
  cJSON_AddStringToObject(o, "git_revision", rev[0] ? rev : "unknown");
  if (rev[0]) cJSON_AddBoolToObject(o, "git_dirty", strstr(rev, "-dirty") != NULL);
  else cJSON_AddNullToObject(o, "git_dirty");
  cpu = cJSON_AddObjectToObject(o, "cpu");
  cpuinfo(buf, sizeof buf, "model name");
  cJSON_AddStringToObject(cpu, "model", buf[0] ? buf : "unknown");
  {
    static char flags[16384];
    cpuinfo(flags, sizeof flags, "flags");
    cJSON_AddItemToObject(cpu, "isa_flags", cpu_flags(flags));
  }
  /* the copy of lowp's fast paths this run took (CPUID, LOWP_ISA applied; lowp --version names it too): the
     flags above are the kernel's /proc/cpuinfo, which an emulator (tests/avx2cpu) does not change */
  cJSON_AddStringToObject(cpu, "fast_paths", lowp_isa_name(lowp_cpu_isa(0)));
  if (uname(&u) == 0) {
    snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
    cJSON_AddStringToObject(o, "os", buf);
  }
  blas = cJSON_AddObjectToObject(o, "openblas");
  cJSON_AddStringToObject(blas, "config", cfg ? cfg : "unknown");
  cJSON_AddStringToObject(blas, "core", core ? core : "unknown");
  { /* how long its idle threads spin (tools/lowp.c sets 4 unless the user did): a run's CPU time, not its bytes */
    const char *t = getenv("OPENBLAS_THREAD_TIMEOUT");
    cJSON_AddStringToObject(blas, "thread_timeout", t ? t : "");
  }
  libs = cJSON_AddObjectToObject(o, "libraries");
  cJSON_AddStringToObject(libs, "mpfr", mpfr_get_version());
  cJSON_AddStringToObject(libs, "gmp", gmp_version);
  cJSON_AddStringToObject(libs, "glibc", gnu_get_libc_version());
  snprintf(buf, sizeof buf, "%s", cJSON_Version());
  cJSON_AddStringToObject(libs, "cjson", buf);
  { /* glibc's run-time choices (the libm code for the CPU among them) can be overridden from the environment */
    const char *t = getenv("GLIBC_TUNABLES");
    cJSON_AddStringToObject(o, "glibc_tunables", t ? t : "");
  }
#ifdef __VERSION__
  cJSON_AddStringToObject(o, "compiler", "gcc " __VERSION__);
#endif
  cJSON_AddStringToObject(o, "build_type", LOWP_BUILD_TYPE);
  cJSON_AddStringToObject(o, "compile_flags", LOWP_COMPILE_FLAGS);
  cJSON_AddStringToObject(o, "gnuplot", lowp_plot_version()[0] ? lowp_plot_version() : "not found");
  if (!name || !strcmp(name, "claims") || !strcmp(name, "order-revelation")) { /* the experiments that run Python */
    char *py[] = {"/usr/bin/python3", "-c", "import numpy; print(numpy.__version__)", NULL};
    first_line(buf, sizeof buf, py);
    cJSON_AddStringToObject(o, "numpy", buf[0] ? buf : "not found");
  }
  return o;
}

/* what depends on the machine, per experiment; when: the environment items (comma-separated paths into the
   manifest) whose difference makes the row differ, NULL: it differs from run to run (a timing) */
typedef struct {
  const char *exp, *match, *file, *why, *when;
} dep_t;

#define BLAS_WHEN "openblas.core,openblas.config"
#define LIBM_WHEN "libraries.glibc,cpu.isa_flags,glibc_tunables"
#define NUMPY_WHEN "numpy,openblas.core,openblas.config" /* numpy.matmul calls OpenBLAS */

static const dep_t deps[] = {
    {"matmul-precision", "openblas", NULL,
     "OpenBLAS's sgemm: the kernel it picks for the CPU (openblas.core in the environment) sets the order and "
     "blocking of the sums, so its errors differ between CPUs", BLAS_WHEN},
    {"matmul-precision", "sgemm", NULL, "as openblas", BLAS_WHEN},
    {"amp-speedup", NULL, "timing.json", "timings of this machine's kernels", NULL},
    {"amp-speedup", NULL, "cpu_kernels.csv", "timings of this machine's kernels", NULL},
    {"amp-speedup", NULL, "gpu_kernels.csv", "timings of the GPU's kernels", NULL},
    {"amp-speedup", NULL, "summary.md", "it quotes the timings", NULL},
    {"order-revelation", "openblas", NULL,
     "OpenBLAS's sgemm and dgemm: the kernel it picks for the CPU (openblas.core) sets their trees, classes, probes "
     "and calls", BLAS_WHEN},
    {"order-revelation", NULL, "timing.csv", "wall times of each revelation on this machine", NULL},
    {"order-revelation", NULL, "blas.csv", "probes of OpenBLAS's position classes (its kernel depends on the CPU)",
     BLAS_WHEN},
    {"order-revelation", NULL, "summary.md", "it holds the OpenBLAS rows", NULL},
    {"fp8-scaling", "key_numbers", NULL,
     "fp64 data drawn by lowp_rng_normal (glibc's log and cos), printed with 17 digits: their last bits follow "
     "glibc's version and its FMA or non-FMA code, which glibc picks for the CPU (measured: the key numbers move "
     "in their last digits with GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA)", LIBM_WHEN},
    {"fp8-scaling", NULL, "seeds.csv", "every training run's numbers to 17 digits: as key_numbers", LIBM_WHEN},
    {"order-revelation", "numpy", NULL,
     "NumPy's sum and matmul (Debian's python3-numpy): its version and the BLAS it calls set their trees; without "
     "numpy the part is skipped", NUMPY_WHEN},
};

cJSON *lowp_env_dependent(const char *name) {
  cJSON *a = cJSON_CreateArray();
  size_t i;
  for (i = 0; name && i < sizeof deps / sizeof deps[0]; i++) {
    cJSON *o;
    if (strcmp(deps[i].exp, name)) continue;
    o = cJSON_CreateObject();
    if (deps[i].match) cJSON_AddStringToObject(o, "match", deps[i].match);
    if (deps[i].file) cJSON_AddStringToObject(o, "file", deps[i].file);
    cJSON_AddStringToObject(o, "why", deps[i].why);
    if (deps[i].when) {
      cJSON *w = cJSON_AddArrayToObject(o, "when");
      const char *p = deps[i].when;
      while (*p) {
        size_t n = strcspn(p, ",");
        char item[64];
        snprintf(item, sizeof item, "%.*s", (int)n, p);
        cJSON_AddItemToArray(w, cJSON_CreateString(item));
        p += n + (p[n] == ',');
      }
    }
    cJSON_AddItemToArray(a, o);
  }
  return a;
}
