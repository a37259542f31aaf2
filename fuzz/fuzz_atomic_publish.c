/* fuzz_atomic_publish -- libFuzzer harness of lowp_atomic_commit_all: the outputs of a run published together or not at all */

/*
 * Input: a script of 1 to 4 outputs in a fresh folder. Per output, one
 * control byte says whether its destination exists before (old content),
 * whether it becomes a folder or a symbolic link between open and commit
 * (someone else's doing), whether it is aborted instead, and how many of
 * the following bytes are its new content. Properties (issue 19):
 *   - lowp_atomic_commit_all succeeds exactly when no destination turned
 *     into a non-regular file;
 *   - on success every destination holds its new bytes; on failure every
 *     destination is as it was (old bytes, or absent, or what replaced it):
 *     never some new and some old;
 *   - either way no temporary is left in the folder.
 */

#include "fuzz.h"

#include "io/atomic.h"
#include "status.h"

#include <dirent.h>
#include <sys/stat.h>

#define NOUT 4

/* the file's bytes (at most cap), or -1 if it is not a readable regular file */
static long slurp(const char *path, unsigned char *buf, size_t cap) {
  struct stat st;
  FILE *f;
  size_t n;
  if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  f = fopen(path, "rb");
  if (!f) return -1;
  n = fread(buf, 1, cap, f);
  fclose(f);
  return (long)n;
}

static int temps_in(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  if (!d) abort();
  while ((e = readdir(d)))
    if (strstr(e->d_name, ".tmp.")) n++;
  closedir(d);
  return n;
}

static void remove_all(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[600];
  if (!d) return;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    if (rmdir(p) != 0) unlink(p);
  }
  closedir(d);
  rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *tmp = getenv("TMPDIR");
  char dir[400], path[NOUT][500];
  lowp_atomic_t w[NOUT];
  unsigned char got[300];
  const uint8_t *content[NOUT];
  size_t clen[NOUT], pos = 1;
  int n, i, k, st, existed[NOUT], spoiled[NOUT], any_spoiled = 0;
  if (size < 1 || size > 1024) return 0;
  n = 1 + data[0] % NOUT;
  snprintf(dir, sizeof dir, "%s/lowp-fuzz-pub-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) abort();
  for (i = 0; i < n; i++) {
    uint8_t c = pos < size ? data[pos++] : 0;
    snprintf(path[i], sizeof path[i], "%s/out%d", dir, i);
    existed[i] = c & 1;
    spoiled[i] = (c >> 1) & 3; /* 1: becomes a folder, 2: a link, else stays */
    if (spoiled[i] == 3) spoiled[i] = 0;
    clen[i] = (size_t)(c >> 3) * 8;
    if (clen[i] > size - pos) clen[i] = size - pos;
    content[i] = data + pos;
    pos += clen[i];
    if (existed[i]) {
      FILE *f = fopen(path[i], "wb");
      if (!f) abort();
      fputs("old", f);
      fclose(f);
    }
  }
  for (i = 0; i < n; i++) {
    st = lowp_atomic_open(&w[i], path[i]);
    FUZZ_CHECK(st == LOWP_OK, "open of output %d: %d", i, st);
    if (clen[i]) fwrite(content[i], 1, clen[i], w[i].fp);
  }
  /* someone replaces destinations meanwhile */
  for (i = 0; i < n; i++) {
    if (!spoiled[i]) continue;
    any_spoiled = 1;
    unlink(path[i]);
    if (spoiled[i] == 1) mkdir(path[i], 0700);
    else if (symlink("nowhere", path[i]) != 0) abort();
  }
  st = lowp_atomic_commit_all(w, n);
  FUZZ_CHECK((st == LOWP_OK) == !any_spoiled, "commit_all returned %d with%s a spoiled destination",
             st, any_spoiled ? "" : "out");
  for (i = 0; i < n; i++) {
    long len = slurp(path[i], got, sizeof got);
    if (st == LOWP_OK) {
      FUZZ_CHECK(len == (long)clen[i] && !memcmp(got, content[i], clen[i]),
                 "output %d not published after success", i);
    } else if (spoiled[i]) {
      FUZZ_CHECK(len < 0, "output %d: what replaced it was overwritten", i);
    } else if (existed[i]) {
      FUZZ_CHECK(len == 3 && !memcmp(got, "old", 3), "output %d: published though another failed", i);
    } else {
      FUZZ_CHECK(len < 0, "output %d: created though another failed", i);
    }
  }
  k = temps_in(dir);
  FUZZ_CHECK(k == 0, "%d temporaries left", k);
  remove_all(dir);
  return 0;
}
