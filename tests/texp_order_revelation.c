/* texp_order_revelation -- the order-revelation experiment (issue 32) at --quick: verdicts, tables, files, same bytes */

/*
 * Runs `lowp run order-revelation --quick` twice with one seed and checks:
 * it exits 0 and every verdict holds; every own kernel that is a tree is
 * "equal node for node" with its definition (the experiment compares the
 * revealed tree with model/tree.h's; this test reads the table) and Kahan's
 * sum gets none; every OpenBLAS row has all its classes validated (how many there are is
 * OpenBLAS's kernel for this CPU); in the
 * verdict table the fp16-accumulating lanes kernel passes the declared
 * recursive bound at K = 4096 and fails the revealed tree's, the honest one
 * passes it; results.json and blas.csv are the same bytes for the same seed
 * (timing.csv holds wall times: not compared); a bad parameter exits 2 and
 * leaves no folder. Under ctest the second run is the quick report's (the
 * fixture report_quick, tests/cli/report_quick.sh, LOWP_REPORT_QUICK): its
 * order-revelation at the same seed, made by `lowp report`'s child process,
 * must be the same bytes as this `lowp run`; alone, the test runs it twice. The full sweep (K 64..8192) is
 * tests/long/texp_order_revelation_long.c (label long).
 * Run: ctest --test-dir build -R texp_order_revelation --output-on-failure
 */

#define _POSIX_C_SOURCE 200809L

#include "testutil.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *slurp(const char *dir, const char *file) {
  char path[4300];
  FILE *f;
  long n;
  char *b = NULL;
  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (!(f = fopen(path, "rb"))) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (b = malloc((size_t)n + 1)) && fread(b, 1, (size_t)n, f) == (size_t)n)
    b[n] = '\0';
  else { free(b); b = NULL; }
  fclose(f);
  return b;
}

static cJSON *table(cJSON *res, const char *prefix) {
  cJSON *t;
  cJSON_ArrayForEach(t, cJSON_GetObjectItem(res, "tables")) {
    const cJSON *ti = cJSON_GetObjectItem(t, "title");
    if (cJSON_IsString(ti) && !strncmp(ti->valuestring, prefix, strlen(prefix))) return cJSON_GetObjectItem(t, "rows");
  }
  return NULL;
}

static const char *cell(const cJSON *row, int i) {
  const cJSON *c = cJSON_GetArrayItem(row, i);
  return cJSON_IsString(c) ? c->valuestring : "";
}

static void check_tables(cJSON *res) {
  cJSON *rows, *row, *v;
  int nown = 0, nblas = 0, nver = 0, nnp = 0;
  /* NumPy's part runs where Debian's python3 imports numpy; elsewhere it says it was skipped. A
     sanitizer build's liblowp.so cannot be loaded by a python that is not instrumented (the
     python_lowp tests are left out there for the same reason): skipped there too */
#ifdef LOWP_SANITIZED
  int numpy = 0;
#else
  int numpy = system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
#endif
  cJSON_ArrayForEach(v, cJSON_GetObjectItem(res, "verdicts")) {
    const char *claim = cJSON_GetObjectItem(v, "claim")->valuestring, *vd = cJSON_GetObjectItem(v, "verdict")->valuestring;
    int np_skip = !numpy && !strncmp(claim, "NumPy", 5) && !strcmp(vd, "not checkable here");
    lowp_test_check(np_skip || !strcmp(vd, "holds"), "verdict '%s': %s (%s)", claim, vd,
                    cJSON_GetObjectItem(v, "measured")->valuestring);
  }
  rows = table(res, "NumPy ");
  cJSON_ArrayForEach(row, rows) {
    double bwd = atof(cell(row, 8)), rec = atof(cell(row, 9)), tree = atof(cell(row, 11));
    unsigned long classes = strtoul(cell(row, 2), NULL, 10);
    /* numpy's pairwise sum is numpy's own code, shallower than a chain on every CPU; its matmul is
       OpenBLAS's kernel for this CPU, which may be one chain per output (core Haswell: 1 class,
       depth K, bound equal to the recursive one) */
    int sum = !strcmp(cell(row, 0), "numpy.sum");
    nnp++;
    lowp_test_check(classes >= 1 && strtoul(cell(row, 5), NULL, 10) >= classes * 1000 && tree > 0 &&
                        (sum ? tree < rec : tree <= rec) && bwd <= tree,
                    "%s K = %s: classes %s, %s validated, error %g, bounds %g (recursive) %g (tree)", cell(row, 0),
                    cell(row, 1), cell(row, 2), cell(row, 5), bwd, rec, tree);
  }
  lowp_test_check(nnp == (numpy ? 2 : 0), "%d NumPy rows (numpy %s)", nnp, numpy ? "imports" : "does not import, or a sanitizer build");
  rows = table(res, "lowp's own kernels");
  cJSON_ArrayForEach(row, rows) {
    int kahan = strstr(cell(row, 0), "kahan") != NULL;
    nown++;
    lowp_test_check(!strcmp(cell(row, 9), kahan ? "no tree (not one)" : "equal node for node"), "%s: %s",
                    cell(row, 0), cell(row, 9));
    lowp_test_check(kahan || strtoul(cell(row, 6), NULL, 10) >= 1000, "%s: %s outputs validated", cell(row, 0),
                    cell(row, 6));
  }
  lowp_test_check(nown == 12, "12 own kernels (%d)", nown);
  rows = table(res, "OpenBLAS revealed");
  cJSON_ArrayForEach(row, rows) {
    unsigned long classes = strtoul(cell(row, 3), NULL, 10), val = strtoul(cell(row, 7), NULL, 10);
    nblas++;
    /* how many position classes is OpenBLAS's kernel for this CPU (core SkylakeX: 2 or more; core
       Haswell's sgemm: 1); each must be validated */
    lowp_test_check(classes >= 1 && val == classes * 1000, "%s %s threads K = %s: %lu classes, %lu validated",
                    cell(row, 0), cell(row, 1), cell(row, 2), classes, val);
  }
  lowp_test_check(nblas == 4, "4 OpenBLAS rows (%d)", nblas);
  rows = table(res, "The verdict");
  cJSON_ArrayForEach(row, rows) {
    int bug = strstr(cell(row, 1), "bug") != NULL;
    double bwd = atof(cell(row, 2)), rec = atof(cell(row, 3)), tree = atof(cell(row, 5));
    long k = atol(cell(row, 0));
    nver++;
    lowp_test_check(bwd > 0 && rec > 0 && tree > 0 && tree < rec, "K = %ld %s: bounds %g %g", k, cell(row, 1), rec, tree);
    if (!bug) lowp_test_check(bwd <= tree, "honest K = %ld: %g above the revealed bound %g", k, bwd, tree);
    if (bug) lowp_test_check(bwd > tree, "bug K = %ld: %g within the revealed bound %g", k, bwd, tree);
    if (bug && k >= 4096) lowp_test_check(bwd <= rec, "bug K = %ld: %g fails the recursive bound %g", k, bwd, rec);
  }
  lowp_test_check(nver == 4, "4 verdict rows (%d)", nver);
}

/* The quick report of the fixture report_quick (LOWP_REPORT_QUICK: a folder holding rc, the report's
   exit status, and the report under a hostile name, the one folder there): its order-revelation folder
   in out, 1; 0 when there is none (no fixture, or the report failed) */
static int fixture_run(char *out, size_t n) {
  const char *base = getenv("LOWP_REPORT_QUICK");
  char *rc;
  DIR *d;
  struct dirent *e;
  struct stat st;
  int found = 0;
  if (!base || !*base || !(rc = slurp(base, "rc"))) return 0;
  found = !strcmp(rc, "0\n");
  free(rc);
  if (!found || !(d = opendir(base))) return 0;
  found = 0;
  while (!found && (e = readdir(d)))
    if (e->d_name[0] != '.') {
      snprintf(out, n, "%s/%s", base, e->d_name);
      if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(out, n, "%s/%s/order-revelation", base, e->d_name);
        found = 1;
      }
    }
  closedir(d);
  return found;
}

int main(void) {
  char dir[] = "/tmp/texp_order_revelation.XXXXXX", cmd[4400], other[4400];
  char *a, *b;
  cJSON *res;
  lowp_test_start("texp_order_revelation");
  lowp_test_make_tmpdir(dir);
  snprintf(cmd, sizeof cmd, "run order-revelation --quick --out %s/a", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 0, "lowp run order-revelation --quick exits 0");
  lowp_test_check(lowp_test_files_exist(strcat(strcpy(cmd, dir), "/a"),
                                        (const char *const[]){"results.json", "summary.md", "blas.csv", "timing.csv",
                                                              "blas_probes.png", "blas_probes.svg", NULL}),
                  "the run wrote its files");
  a = slurp(cmd, "results.json");
  res = a ? cJSON_Parse(a) : NULL;
  lowp_test_check(res != NULL, "results.json parses");
  if (res) check_tables(cJSON_GetObjectItem(res, "results"));
  cJSON_Delete(res);
  /* the same seed: the same bytes (the environment block aside: it holds the date); the second run
     is the fixture's quick report's where there is one */
  if (fixture_run(other, sizeof other)) {
    printf("second run: the quick report's (fixture report_quick)\n");
  } else {
    snprintf(cmd, sizeof cmd, "run order-revelation --quick --out %s/b", dir);
    lowp_test_check(lowp_test_run_lowp(cmd) == 0, "second run exits 0");
    snprintf(other, sizeof other, "%s/b", dir);
  }
  b = slurp(other, "results.json");
  {
    char *ra = a ? strstr(a, "\"results\"") : NULL, *rb = b ? strstr(b, "\"results\"") : NULL;
    lowp_test_check(ra && rb && !strcmp(ra, rb), "results the same bytes for the same seed");
  }
  free(a);
  free(b);
  snprintf(cmd, sizeof cmd, "%s/a", dir);
  a = slurp(cmd, "blas.csv");
  b = slurp(other, "blas.csv");
  lowp_test_check(a && b && !strcmp(a, b), "blas.csv the same bytes");
  free(a);
  free(b);
  snprintf(cmd, sizeof cmd, "run order-revelation --blas_k=64,0 --out %s/bad", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 2, "a K of 0 exits 2");
  snprintf(cmd, sizeof cmd, "run order-revelation --verdict_k=100 --out %s/bad", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 2, "a verdict K that is not a multiple of 64 exits 2");
  lowp_test_check(!lowp_test_file_exists(dir, "bad"), "a bad run leaves no folder");
  lowp_test_remove_dir(dir);
  return lowp_test_end();
}
