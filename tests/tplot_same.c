/* tplot_same -- lowp_plot_coincide: curves that lie on an earlier one, read back from CSV files */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "io/plot.h"
#include "status.h"
#include "testutil.h"

int main(void) {
  char dir[] = "/tmp/tplot_same.XXXXXX", path[256];
  FILE *f;
  int same[6];
  lowp_test_start("tplot_same");
  lowp_test_make_tmpdir(dir);
  snprintf(path, sizeof path, "%s/c.csv", dir);
  f = fopen(path, "w");
  if (!f) { lowp_test_check(0, "cannot write %s", path); return lowp_test_end(); }
  /* a: reference; b: a exactly; c: a within 0.5%; d: differs at one size; e: fewer sizes; f: b again */
  fprintf(f, "# comment\nmodel,n,err,other\n"
             "g,16,1.0e-6,nan\ng,1024,5.0e-6,nan\n"
             "a,16,1.0e-6,nan\na,64,2.0e-6,nan\na,256,4.0e-6,nan\n"
             "b,16,1.0e-6,nan\nb,64,2.0e-6,nan\nb,256,4.0e-6,nan\n"
             "c,16,1.004e-6,nan\nc,64,2.0e-6,nan\nc,256,3.99e-6,nan\n"
             "d,16,1.0e-6,nan\nd,64,3.0e-6,nan\nd,256,4.0e-6,nan\n"
             "e,16,1.0e-6,nan\ne,64,2.0e-6,nan\n");
  fclose(f);
  {
    lowp_series_t s[6] = {{"c.csv", 2, 3, "a", NULL, "a", 1, 0}, {"c.csv", 2, 3, "b", NULL, "b", 1, 0},
                          {"c.csv", 2, 3, "c", NULL, "c", 1, 0}, {"c.csv", 2, 3, "d", NULL, "d", 1, 0},
                          {"c.csv", 2, 3, "e", NULL, "e", 1, 0}, {"c.csv", 2, 3, "z", NULL, "z", 1, 0}};
    lowp_test_check(lowp_plot_coincide(dir, s, 6, 0.0, same) == LOWP_OK, "rtol 0 runs");
    lowp_test_check(same[0] == -1 && same[1] == 0 && same[2] == -1 && same[3] == -1 && same[4] == 0 &&
                        same[5] == -1,
                    "rtol 0: b = a, e = a where both run (2 sizes of 3), d and the empty z not (got %d %d %d %d "
                    "%d %d)", same[0], same[1], same[2], same[3], same[4], same[5]);
    lowp_test_check(lowp_plot_coincide(dir, s, 6, 0.01, same) == LOWP_OK && same[2] == 0 && same[3] == -1,
                    "rtol 1%%: c = a (0.4%% off), d is not (50%% off at n = 64): %d %d", same[2], same[3]);
    /* the same series twice through another column: NaN equals NaN */
    s[1].ycol = 4;
    s[2].ycol = 4;
    lowp_test_check(lowp_plot_coincide(dir, s, 3, 0.0, same) == LOWP_OK && same[1] == -1 && same[2] == 1,
                    "NaN column: b and c coincide with each other, not with a (%d %d)", same[1], same[2]);
    /* g shares a single size (16) with a: not enough to call them the same curve */
    {
      lowp_series_t t2[2] = {{"c.csv", 2, 3, "a", NULL, "a", 1, 0}, {"c.csv", 2, 3, "g", NULL, "g", 1, 0}};
      lowp_test_check(lowp_plot_coincide(dir, t2, 2, 0.0, same) == LOWP_OK && same[1] == -1,
                      "one shared size of several: not the same curve (%d)", same[1]);
    }
    s[0].csv = "missing.csv";
    lowp_test_check(lowp_plot_coincide(dir, s, 2, 0.0, same) == LOWP_EIO, "a missing file: LOWP_EIO");
    lowp_test_check(lowp_plot_coincide(NULL, s, 2, 0.0, same) == LOWP_EINVAL, "no folder: LOWP_EINVAL");
    lowp_test_check(lowp_plot_coincide(dir, s, 2, -1.0, same) == LOWP_EINVAL, "negative rtol: LOWP_EINVAL");
  }
  unlink(path);
  rmdir(dir);
  return lowp_test_end();
}
