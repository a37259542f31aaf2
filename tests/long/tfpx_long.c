/* tfpx_long -- tests/tfpx.c at full size: 10^6 random operations per format against MPFR and the CPU, 10^6 clean outputs per format */


#define _POSIX_C_SOURCE 200809L
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* run the tfpx program built beside this one with LOWP_FPX_COUNT=1000000 */
int main(void) {
  char self[4096], path[4200];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) { fprintf(stderr, "tfpx_long: cannot find its own path\n"); return 1; }
  self[n] = '\0';
  snprintf(path, sizeof path, "%s/tfpx", dirname(self));
  setenv("LOWP_FPX_COUNT", "1000000", 1);
  execl(path, "tfpx", (char *)NULL);
  fprintf(stderr, "tfpx_long: cannot run %s\n", path);
  return 1;
}
