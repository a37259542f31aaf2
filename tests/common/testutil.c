/* lowp_test -- seed handling and failure counting shared by test programs */

#define _POSIX_C_SOURCE 200809L /* readlink, access, mkdtemp */

#include "testutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* lowp__g_* : one test program is one process; these count its checks. */
static const char *lowp__g_name = "test";
static uint64_t lowp__g_seed = 0x2143FEDC;
static long lowp__g_pass, lowp__g_fail;

void lowp_test_start(const char *name) {
  const char *s = getenv("LOWP_TEST_SEED");
  lowp__g_name = name;
  if (s && !strcmp(s, "random")) {
    lowp__g_seed = (uint64_t)time(NULL);
    printf("seed LOWP_TEST_SEED=%llu (include this in bug reports)\n",
           (unsigned long long)lowp__g_seed);
  } else if (s && *s) {
    lowp__g_seed = strtoull(s, NULL, 0);
    printf("seed LOWP_TEST_SEED=%llu\n", (unsigned long long)lowp__g_seed);
  } else {
    printf("seed LOWP_TEST_SEED=%llu (default)\n", (unsigned long long)lowp__g_seed);
  }
  fflush(stdout);
}

uint64_t lowp_test_seed(void) { return lowp__g_seed; }

int lowp_test_check(int ok, const char *fmt, ...) {
  if (ok) { lowp__g_pass++; return 1; }
  lowp__g_fail++;
  if (lowp__g_fail <= 50) {
    va_list ap;
    printf("FAIL: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
  } else if (lowp__g_fail == 51) {
    printf("(further failures not printed)\n");
  }
  return 0;
}

long lowp_test_failures(void) { return lowp__g_fail; }

int lowp_test_end(void) {
  printf("%s: %ld passed, %ld failed\n", lowp__g_name, lowp__g_pass, lowp__g_fail);
  return lowp__g_fail ? 1 : 0;
}

void lowp_test_skip(const char *why) {
  printf("%s: skipped: %s\n", lowp__g_name, why);
  exit(77);
}

const char *lowp_test_hex(double v, char *buf, unsigned len) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  snprintf(buf, len, "%a [%016llx]", v, (unsigned long long)u);
  return buf;
}

/* ------------------------------------------------------ private helpers */

/* Path of the lowp program: the folder of this test program + "lowp"
   (CMake builds both into the same folder). */
static void lowp_bin(char *buf, size_t len) {
  ssize_t n = readlink("/proc/self/exe", buf, len - 16);
  char *slash;
  if (n < 0) { snprintf(buf, len, "./lowp"); return; }
  buf[n] = '\0';
  slash = strrchr(buf, '/');
  if (slash) strcpy(slash + 1, "lowp");
}

/* ----------------------------------------------------------- public API */

int lowp_test_run_lowp(const char *args) {
  char bin[4096], cmd[8192];
  int st;
  lowp_bin(bin, sizeof bin);
  snprintf(cmd, sizeof cmd, "'%s' %s > /dev/null 2>&1", bin, args);
  st = system(cmd);
  return st == -1 ? -1 : (st >> 8) & 0xff;
}

int lowp_test_file_exists(const char *dir, const char *file) {
  char p[4200];
  snprintf(p, sizeof p, "%s/%s", dir, file);
  return access(p, R_OK) == 0;
}

int lowp_test_files_exist(const char *dir, const char *const *files) {
  for (; *files; files++)
    if (!lowp_test_file_exists(dir, *files)) return 0;
  return 1;
}

void lowp_test_make_tmpdir(char *templ) {
  if (!mkdtemp(templ)) {
    printf("cannot make a temporary folder\n");
    exit(1);
  }
}

void lowp_test_remove_dir(const char *dir) {
  char cmd[4400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) printf("note: could not remove %s\n", dir);
}
