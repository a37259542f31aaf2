/* lowp CLI progress -- a percentage on stderr while lib/ works, only when stderr is a terminal */

#include "progress.h"
#include "par.h"

#include <stdio.h>
#include <unistd.h>

static int last_pct = -1;

void lowp_cli_progress(void *ctx, double done) {
  int pct = (int)(done * 100.0);
  /* an MPI job: rank 0 alone shows the job (par/par.h) */
  if (!isatty(2) || pct == last_pct || lowp_par_rank() != 0) return;
  last_pct = pct;
  fprintf(stderr, "\r%s: %3d%%", ctx ? (const char *)ctx : "working", pct);
  fflush(stderr);
}

void lowp_cli_progress_end(void) {
  if (last_pct >= 0 && isatty(2)) fputs("\r\033[K", stderr);
  last_pct = -1;
}
