/* tbsquant_million -- tests/tbsquant.c with 10^6 random blocks per rule and format (label long) */

/*
 * The block-scaled quantizers against the exact MPFR evaluation of their
 * definitions, on the binade edges, the special blocks and 10^6 random
 * blocks for each of the 24 (format, rule) pairs: tbsquant, built beside
 * this program, run with LOWP_BSQ_BLOCKS=1000000 (about 6 minutes on one
 * core). Its exit status is this test's.
 */

#define _POSIX_C_SOURCE 200809L /* readlink, setenv */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
  char *slash;
  if (n <= 0) {
    fprintf(stderr, "tbsquant_million: cannot read /proc/self/exe\n");
    return 1;
  }
  path[n] = '\0';
  slash = strrchr(path, '/');
  strcpy(slash ? slash + 1 : path, "tbsquant");
  if (setenv("LOWP_BSQ_BLOCKS", "1000000", 1) != 0) return 1;
  execl(path, path, (char *)NULL);
  fprintf(stderr, "tbsquant_million: cannot run %s\n", path);
  return 1;
}
