/* lowp CLI progress -- a percentage on stderr while lib/ works, only when stderr is a terminal */
#ifndef LOWP_CLI_PROGRESS_H
#define LOWP_CLI_PROGRESS_H

/** @brief A lowp_gemm_opts_t.progress callback: ctx is the label (a
    const char *); prints "\rLABEL: NN%" when the whole percent changes and
    stderr is a terminal, nothing otherwise. */
void lowp_cli_progress(void *ctx, double done);

/** @brief Clear the progress line (terminal only). */
void lowp_cli_progress_end(void);

#endif
