/* texp_order_revelation_long -- the order-revelation experiment at its defaults: K = 4096, OpenBLAS K 64..4096 */

/*
 * Label long (minutes on 2 cores). `lowp run order-revelation` with its
 * defaults: lowp's own kernels revealed at K = 4096 (every one node for node
 * with its definition, Kahan's sum without a tree), OpenBLAS sgemm and dgemm
 * on 1 and 2 threads at 33 x 17 outputs for K = 64, 256, 1024, 2048, 4096
 * (every position class with a bit-exact twin on 10,000 outputs), the
 * verdict of the fp16-accumulating lanes kernel at K = 256, 4096, 16384, and
 * NumPy's sum and matmul where numpy imports. The
 * run must exit 0 (every verdict holds) and write its files; the tables are
 * checked row by row by tests/texp_order_revelation.c at --quick.
 * Run: ctest --test-dir build -L long -R texp_order_revelation_long --output-on-failure
 */

#define _POSIX_C_SOURCE 200809L

#include "testutil.h"

#include <stdio.h>

int main(void) {
  char dir[] = "/tmp/texp_order_revelation_long.XXXXXX", cmd[4400], out[4200];
  lowp_test_start("texp_order_revelation_long");
  lowp_test_make_tmpdir(dir);
  snprintf(out, sizeof out, "%s/full", dir);
  snprintf(cmd, sizeof cmd, "run order-revelation --out %s", out);
  lowp_test_check(lowp_test_run_lowp(cmd) == 0, "lowp run order-revelation (defaults) exits 0: every verdict holds");
  lowp_test_check(lowp_test_files_exist(out, (const char *const[]){"results.json", "summary.md", "blas.csv",
                                                                   "timing.csv", "blas_probes.png", NULL}),
                  "the run wrote its files");
  lowp_test_remove_dir(dir);
  return lowp_test_end();
}
