/* lowp -- the command line: one subcommand per tools/cmd_*.c */

#include "cli.h"

#include <stdio.h>
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
};

static void usage(FILE *out) {
  size_t i;
  fprintf(out, "usage: lowp COMMAND [options]\n\ncommands:\n");
  for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
  fprintf(out, "\n'lowp COMMAND --help' describes each. Exit status: 0 ok, "
          "1 a check failed, 2 bad usage or input.\n");
}

int main(int argc, char **argv) {
  size_t i;
  if (argc < 2) { usage(stderr); return LOWP_EXIT_USAGE; }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return LOWP_EXIT_OK;
  }
  for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "lowp: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return LOWP_EXIT_USAGE;
}
