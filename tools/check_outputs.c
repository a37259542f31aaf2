/* lowp_chk_new_out -- the output files of one lowp check run, published together or not at all */

#include "check_internal.h"
#include "status.h"

/* The output files (baseline, JUnit, JSON) are written to temporary files
   (io/atomic.h) and only renamed into place together, at the very end
   (lowp_chk_commit_all), or all removed (lowp_chk_abort_all). */
static lowp_atomic_t g_out[3];
static int g_nout;

lowp_atomic_t *lowp_chk_new_out(const char *path) {
  lowp_atomic_t *w = &g_out[g_nout];
  if (g_nout >= 3 || lowp_atomic_open(w, path)) return NULL;
  g_nout++;
  return w;
}

void lowp_chk_abort_all(void) {
  int i;
  for (i = 0; i < g_nout; i++) lowp_atomic_abort(&g_out[i]);
  g_nout = 0;
}

int lowp_chk_commit_all(void) {
  int st = g_nout ? lowp_atomic_commit_all(g_out, g_nout) : LOWP_OK;
  g_nout = 0;
  return st;
}
