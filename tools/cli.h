/* lowp_cli -- shared helpers of the lowp command line (tools/ only) */
#ifndef LOWP_CLI_H
#define LOWP_CLI_H

#include <stdio.h>

#include "format/format.h"

/** Exit statuses of every lowp command (docs/design.md). */
enum { LOWP_EXIT_OK = 0, LOWP_EXIT_CHECK = 1, LOWP_EXIT_USAGE = 2 };

/** @brief Print "lowp CMD: message" on stderr and exit with status 2. */
void lowp_cli_die(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;

/**
 * @brief Before a command publishes a file: flush stdout, and if what it printed did not reach it (a
 * full disk, /dev/full, a closed file), end the run (lowp_cli_die: one line naming cmd and what, exit 2,
 * the temporary files removed at exit) so that nothing is published. A closed pipe ends the run by
 * SIGPIPE here, before publishing too.
 */
void lowp_stdout_before_publish(const char *cmd, const char *what);

/** @brief The argument of option argv[*i]: argv[*i + 1], with *i moved onto
    it; dies "lowp CMD: option X needs an argument" when argv ends first. */
const char *lowp_cli_need_arg(const char *cmd, int argc, char **argv, int *i);

/** @brief Parse a format name or spec, or die with the parser's message. */
lowp_format_t lowp_cli_format(const char *cmd, const char *text);
/** @brief A list option's text (opt TEXT, items separated by sep): empty, a separator at its start or
    end, or two in a row is refused (one message, exit 2): strtok would pass over the empty item. */
void lowp_cli_list_check(const char *cmd, const char *opt, const char *text, char sep);

/** @brief Parse a list of formats: names separated by ',', or by ';' when an
    item is a spec ("fp16;p=5,emin=-6,emax=7"); "all" = every built-in.
    Returns the count (>= 1); fills out[0..max). Dies on an unknown name, an
    empty item ("", "fp16,", "a,,b") or more than max items. */
size_t lowp_cli_format_list(const char *cmd, const char *text,
                            lowp_format_t *out, size_t max);
/** @brief Parse a rounding mode or die naming the accepted ones. */
lowp_rounding_t lowp_cli_rounding(const char *cmd, const char *text);
/** @brief Parse a real number: decimal, hex float, inf, nan; or die. */
double lowp_cli_number(const char *cmd, const char *what, const char *text);
/** @brief Parse an integer in [lo, hi] (decimal or 0x hex) or die. */
long long lowp_cli_int(const char *cmd, const char *what, const char *text,
                       long long lo, long long hi);

/* commands: int lowp_cmd_NAME(int argc, char **argv), argv[0] = "NAME" */
int lowp_cmd_formats(int argc, char **argv);
int lowp_cmd_convert(int argc, char **argv);
/** lowp convert with a block-scaled --to (tools/convert_block.c) */
int lowp__convert_block(int argc, char **argv);
int lowp_cmd_list(int argc, char **argv);
int lowp_cmd_run(int argc, char **argv);
int lowp_cmd_report(int argc, char **argv);
int lowp_cmd_bench(int argc, char **argv);
int lowp_cmd_scaler(int argc, char **argv);

int lowp_cmd_gemm(int argc, char **argv);
int lowp_cmd_dot(int argc, char **argv);
int lowp_cmd_check(int argc, char **argv);
int lowp_cmd_probe(int argc, char **argv);
int lowp_cmd_tol(int argc, char **argv);
int lowp_cmd_fpx(int argc, char **argv);
int lowp_cmd_reveal(int argc, char **argv);
int lowp_cmd_twin(int argc, char **argv);

#endif
