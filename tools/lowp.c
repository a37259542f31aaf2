/* lowp -- the command line: one subcommand per tools/cmd_*.c */

#define _POSIX_C_SOURCE 200809L /* sigset_t (cleanup.h) under -std=c11 */

#include "cleanup.h"
#include "cli.h"
#include "cpu.h"
#include "env.h"
#include "format/number.h"
#include "io/escape.h"
#include "par.h"
#include "status.h"
#include "thp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *help;
} command_t;

static const command_t commands[] = {
    {"formats", lowp_cmd_formats, "the format table, computed from the descriptors"},
    {"convert", lowp_cmd_convert, "round values to formats; show bits, class, error"},
    {"list", lowp_cmd_list, "experiments with their questions"},
    {"run", lowp_cmd_run, "run one experiment: results JSON + CSV, plots, summary"},
    {"scaler", lowp_cmd_scaler, "replay ok/inf steps through a grad scaler (PyTorch rules)"},
    {"report", lowp_cmd_report, "run every experiment and build one HTML report"},
    {"bench", lowp_cmd_bench, "performance benchmarks (lowp bench --help lists them)"},
    {"gemm", lowp_cmd_gemm, "measure one GEMM (CPU accumulation twin) against its exact value"},
    {"dot", lowp_cmd_dot, "measure one dot product against its exact value"},
    {"check", lowp_cmd_check, "run a spec of precision checks (CI): kernels, plugins, saved tensors"},
    {"fpx", lowp_cmd_fpx, "floating-point exceptions of a tensor: counts, first index, exponents"},
    {"tol", lowp_cmd_tol, "the rtol/atol a precision test should use, derived from K, formats, method"},
    {"reveal", lowp_cmd_reveal, "reveal a kernel's summation trees and hidden conversions (FPRev)"},
    {"twin", lowp_cmd_twin, "run a revealed tree on new inputs against the kernel, bit for bit"},
    {"probe", lowp_cmd_probe, "tensor-core feature probes on the GPU, or on a model (--device model:h100)"},
};

static void usage(FILE *out) {
  size_t i;
  fprintf(out, "usage: lowp COMMAND [options]\n\ncommands:\n");
  for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
  fprintf(out, "\n'lowp COMMAND --help' describes each; 'lowp --version' names the version, revision "
          "and build.\nExit status: 0 ok, 1 a check failed, 2 bad usage or input.\n");
}

/* lowp --version: one line on stdout, what a bug report or a CI log should name: the version, the
   source's git revision (as the run headers and results.json name it), the build, and the fast-path
   copy this CPU runs (LOWP_ISA applied) */
#define LOWP_STR_(x) #x
#define LOWP_STR(x) LOWP_STR_(x)
static int version(void) {
  const char *rev = lowp_env_git_revision();
  printf("lowp %s (git %s, build %s, %s %s, CUDA kernels %s; fast paths on this CPU: %s)\n", LOWP_VERSION,
         rev[0] ? rev : "unknown", LOWP_BUILD_TYPE,
#if defined(__clang__) /* __clang_version__ may end in a space or name a vendor's build */
         "clang", LOWP_STR(__clang_major__) "." LOWP_STR(__clang_minor__) "." LOWP_STR(__clang_patchlevel__),
#elif defined(__GNUC__)
         "gcc", __VERSION__,
#else
         "cc", "unknown",
#endif
#ifdef LOWP_HAVE_CUDA
         "built",
#else
         "not built",
#endif
         lowp_isa_name(lowp_cpu_isa(0)));
  return LOWP_EXIT_OK;
}

/* "--key=value" means "--key value" for every command but run (which reads
   its --key=value parameters itself): split once, here, so each command's
   parser sees one spelling. A flag that takes no value ("--json=1") is left
   whole, so that its command refuses it instead of reading "1" as an
   operand; so is everything after "--". Returns a new argv (argv[0..argc),
   NULL-terminated) that the caller frees, or NULL when out of memory. */
static char **split_eq(int argc, char **argv, int *nargc) {
  static const char *const flags[] = {"--help", "--json", "--sat", "--ftz", "--daz",
                                      "--bits", "--quick", "--strict", "--big"};
  char **out = malloc(2 * (size_t)argc * sizeof *out + sizeof *out);
  int i, n = 0, ended = 0;
  if (!out) return NULL;
  for (i = 0; i < argc; i++) {
    const char *a = argv[i], *eq = strchr(a, '=');
    size_t k, f, nf = sizeof flags / sizeof flags[0];
    if (!strcmp(a, "--")) ended = 1;
    if (ended || i < 2 || strncmp(a, "--", 2) || !eq || eq == a + 2) { out[n++] = argv[i]; continue; }
    k = (size_t)(eq - a);
    for (f = 0; f < nf; f++)
      if (strlen(flags[f]) == k && !strncmp(a, flags[f], k)) break;
    if (f < nf) { out[n++] = argv[i]; continue; }
    /* the key is argv[i] cut at '=': write the NUL into argv's own string,
       which is ours to change (C11 5.1.2.2.1) */
    argv[i][k] = '\0';
    out[n++] = argv[i];
    out[n++] = argv[i] + k + 1;
  }
  out[n] = NULL;
  *nargc = n;
  return out;
}

/* An option given twice is refused (one message, exit 2), unless it is one that adds to a list
   (check's --only, --plugin-dir): the last one won in silence for most commands (gemm --m 3 --m 4
   ran m = 4), while others refused. args: split_eq's, from the command's name; "--" ends the options. */
static void refuse_repeats(const char *cmd, int n, char **args) {
  static const char *const lists[] = {"--only", "--plugin-dir"};
  int i, j;
  size_t l, k;
  for (i = 1; i < n && strcmp(args[i], "--"); i++) {
    if (strncmp(args[i], "--", 2) || !args[i][2]) continue;
    k = strcspn(args[i], "="); /* the key: run keeps --key=value whole */
    for (l = 0; l < sizeof lists / sizeof lists[0]; l++)
      if (strlen(lists[l]) == k && !strncmp(args[i], lists[l], k)) break;
    if (l < sizeof lists / sizeof lists[0]) continue;
    for (j = 1; j < i; j++)
      if (strcspn(args[j], "=") == k && !strncmp(args[j], args[i], k))
        lowp_cli_die(cmd, "option %.*s given twice (give it once)", (int)k, args[i]);
  }
}

/* OMP_NUM_THREADS, which OpenMP reads itself, gets --threads' limits: a
   comma list (one count per nesting level) of integers 1..1024. A larger
   count crashes libgomp when it cannot create the threads; a malformed one
   it ignores with a warning. Either: one message, exit 2, before any work. */
static void check_omp_env(void) {
  const char *v = getenv("OMP_NUM_THREADS"), *s = v;
  char item[64], safe[200];
  if (!v) return; /* set but empty: libgomp ignores it, LLVM's libomp aborts */
  for (;;) {
    size_t len = strcspn(s, ","), lead = strspn(s, " \t"), dig = strspn(s + lead, "0123456789");
    long long n;
    int st = LOWP_EPARSE;
    /* digits, with blanks around them as OpenMP allows */
    if (dig > 0 && dig < sizeof item && lead + dig + strspn(s + lead + dig, " \t") == len) {
      memcpy(item, s + lead, dig);
      item[dig] = '\0';
      st = lowp_parse_int(&n, item, 1, 1024);
    }
    if (st != 0) {
      lowp_escape_ctl(safe, sizeof safe, v);
      if (lowp_par_sync(1))
        fprintf(stderr, "lowp: OMP_NUM_THREADS='%s' is not a thread count lowp runs with: give "
                "1 to 1024 (as --threads), or a comma list of them\n", safe);
      exit(LOWP_EXIT_USAGE);
    }
    s += len;
    if (!*s) return;
    s++;
  }
}

/* LOWP_ISA=generic|avx2|avx512: the widest instruction set the fast paths
   may use (lowp_cpu_isa_limit), to run on this CPU what an older one runs;
   another value: one message, exit 2, before any work */
static void check_isa_env(void) {
  const char *v = getenv("LOWP_ISA");
  char safe[200];
  int isa;
  if (!v) return;
  isa = lowp_isa_parse(v);
  if (isa < 0) {
    lowp_escape_ctl(safe, sizeof safe, v);
    if (lowp_par_sync(1))
      fprintf(stderr, "lowp: LOWP_ISA='%s' is not an instruction set: give generic, avx2 or avx512\n", safe);
    exit(LOWP_EXIT_USAGE);
  }
  lowp_cpu_isa_limit((lowp_isa_t)isa);
}

int main(int argc, char **argv) {
  size_t i;
  /* OpenBLAS's idle threads (Debian's pthread build) spin, calling sched_yield, for 2^28 cycles after
     each call before they sleep: between the exact GEMM's dgemm calls (lib/exact/ozaki.c) lowp's own
     OpenMP threads then shared the cores with them. matmul-precision on 2 threads (AMD Zen 5, AVX2,
     alternated): 167.1 and 173.8 s of CPU (15-17 of them in the kernel) against 139.3 on one thread;
     with the idle threads asleep after 2^4 cycles (OPENBLAS_THREAD_TIMEOUT=4, OpenBLAS's smallest)
     143.6 and 143.5 s, and 85 s of wall against 93-97, the same files. Read when OpenBLAS is opened
     (tools/blas_lazy.c, after this); a value the user set is kept */
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  /* for run, report, gemm and bench: large arrays in huge pages (tools/thp.c); in an MPI job before
     joining it (after MPI_Init a rank cannot start again), so that its ranks run as one process does */
  lowp_thp_args(argv);
  if (lowp_par_launched() && argc > 1 &&
      (!strcmp(argv[1], "run") || !strcmp(argv[1], "report") || !strcmp(argv[1], "gemm")))
    lowp_thp_reexec_job();
  /* temporaries and children are removed and stopped on any exit or signal */
  lowp_cleanup_install();
  /* under mpirun/srun: join the job, refuse mixed builds (par/par.h) */
  lowp_par_init(&argc, &argv);
  {
    int k, help = 0;
    for (k = 1; k < argc; k++) help |= !strcmp(argv[k], "--help") || !strcmp(argv[k], "-h");
    if (!help) check_omp_env(), check_isa_env();
  }
  /* usage errors: one line and a pointer to --help (the contract of every
     command), not the whole command table */
  if (argc < 2) {
    fprintf(stderr, "lowp: missing command (see lowp --help)\n");
    return LOWP_EXIT_USAGE;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return lowp_stdout_finish("", LOWP_EXIT_OK);
  }
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
    if (argc > 2) {
      char safe[512];
      lowp_escape_ctl(safe, sizeof safe, argv[2]);
      fprintf(stderr, "lowp: %s takes no arguments ('%s'; see lowp --help)\n", argv[1], safe);
      return LOWP_EXIT_USAGE;
    }
    return lowp_stdout_finish("", version());
  }
  for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) {
      char **args;
      int nargs, rc;
      /* the commands that spread their work over MPI ranks (docs/scale.md) */
      if (lowp_par_size() > 1 && strcmp(argv[1], "gemm") && strcmp(argv[1], "run") &&
          strcmp(argv[1], "report") && strcmp(argv[1], "check"))
        lowp_cli_die(argv[1], "runs as one process: of lowp's commands gemm, run, report and "
                     "check spread over MPI ranks (this job has %d); start it without mpirun",
                     lowp_par_size());
      if (!strcmp(argv[1], "run")) {
        refuse_repeats(argv[1], argc - 1, argv + 1);
        return lowp_stdout_finish(argv[1], commands[i].fn(argc - 1, argv + 1));
      }
      args = split_eq(argc, argv, &nargs);
      if (!args) {
        fprintf(stderr, "lowp: out of memory\n");
        return LOWP_EXIT_USAGE;
      }
      refuse_repeats(argv[1], nargs - 1, args + 1);
      rc = commands[i].fn(nargs - 1, args + 1);
      free(args);
      return lowp_stdout_finish(argv[1], rc); /* every write to stdout checked */
    }
  {
    char safe[512];
    lowp_escape_ctl(safe, sizeof safe, argv[1]);
    fprintf(stderr, "lowp: unknown command '%s' (see lowp --help)\n", safe);
  }
  return LOWP_EXIT_USAGE;
}
