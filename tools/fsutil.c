/* lowp_fsutil -- folders for outputs: create, replace atomically, remove */

#define _XOPEN_SOURCE 700

#include "fsutil.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int lowp_mkdir_p(const char *path) {
  char buf[4096];
  size_t i, n = strlen(path);
  if (n == 0 || n >= sizeof buf) return -1;
  memcpy(buf, path, n + 1);
  for (i = 1; i <= n; i++) {
    if (buf[i] == '/' || buf[i] == '\0') {
      char c = buf[i];
      buf[i] = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
      buf[i] = c;
    }
  }
  {
    struct stat st;
    return (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) ? 0 : -1;
  }
}

int lowp_mkdir_parent(const char *path) {
  char buf[4096];
  char *slash;
  if (strlen(path) >= sizeof buf) return -1;
  strcpy(buf, path);
  while (strlen(buf) > 1 && buf[strlen(buf) - 1] == '/') buf[strlen(buf) - 1] = '\0';
  slash = strrchr(buf, '/');
  if (!slash || slash == buf) return 0;
  *slash = '\0';
  return lowp_mkdir_p(buf);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb; (void)flag; (void)ftw;
  return remove(p);
}

int lowp_rmtree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
  return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

int lowp_replace_dir(const char *tmp, const char *final) {
  char old[4200];
  struct stat st;
  if (stat(final, &st) == 0) {
    snprintf(old, sizeof old, "%s.old.%ld", final, (long)getpid());
    if (rename(final, old) != 0) return -1;
    if (rename(tmp, final) != 0) { (void)rename(old, final); return -1; }
    return lowp_rmtree(old);
  }
  return rename(tmp, final) == 0 ? 0 : -1;
}
