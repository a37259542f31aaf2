/* lowp_output -- output files and folders: checked before the work, published atomically */

#define _GNU_SOURCE /* renameat2, RENAME_EXCHANGE */

#include "output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "io/atomic.h"
#include "status.h"

#define MARKER_HEAD "lowp output folder"

/* ------------------------------------------------------ private helpers */

static const char *kind_of(mode_t m) {
  if (S_ISLNK(m)) return "a symbolic link";
  if (S_ISDIR(m)) return "a folder";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

/* lowp_cli_die with control characters of the text (a newline in a folder
   name) shown as \n, \t or \xHH: the message stays one line. */
static void die_out(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;
static void die_out(const char *cmd, const char *fmt, ...) {
  char raw[9000], shown[9000 * 4 + 1];
  size_t i, k = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  for (i = 0; raw[i] && k + 5 < sizeof shown; i++) {
    unsigned char c = (unsigned char)raw[i];
    if (c == '\n') { shown[k++] = '\\'; shown[k++] = 'n'; }
    else if (c == '\t') { shown[k++] = '\\'; shown[k++] = 't'; }
    else if (c < 0x20 || c == 0x7f) k += (size_t)snprintf(shown + k, 5, "\\x%02x", c);
    else shown[k++] = (char)c;
  }
  shown[k] = '\0';
  lowp_cli_die(cmd, "%s", shown);
}

/* The folder part of path ("." when there is none). */
static void parent_of(char *out, size_t len, const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) snprintf(out, len, ".");
  else if (slash == path) snprintf(out, len, "/");
  else snprintf(out, len, "%.*s", (int)(slash - path), path);
}

/* Why files cannot be created in folder dir (e: the errno of the attempt). */
static const char *why_not_writable(const char *dir, int e) {
  struct stat st;
  if (stat(dir, &st) != 0) return errno == ENOENT ? "it does not exist" : strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "it is not a folder";
  if (e == EACCES || e == EPERM || e == EROFS || e == 0) return "it is not writable";
  return strerror(e);
}

/* --- the manifest: every path lowp wrote, relative, folders ending in '/' */

typedef struct {
  char **v;
  size_t n, cap;
} list_t;

static void list_free(list_t *l) {
  size_t i;
  for (i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}

static int list_add(list_t *l, const char *s) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    char **v = realloc(l->v, cap * sizeof *v);
    if (!v) return -1;
    l->v = v;
    l->cap = cap;
  }
  if (!(l->v[l->n] = strdup(s))) return -1;
  l->n++;
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append the entries under dir/rel (sorted, depth first, folders as
   "name/") to l, except the top-level marker. 0 ok, -1 error. */
static int walk(list_t *l, const char *dir, const char *rel) {
  char path[8400], sub[4200];
  list_t names = {NULL, 0, 0};
  DIR *d;
  struct dirent *e;
  size_t i;
  int bad = 0;
  snprintf(path, sizeof path, "%s%s%s", dir, *rel ? "/" : "", rel);
  if (!(d = opendir(path))) return -1;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
        (*rel || strcmp(e->d_name, LOWP_OUTPUT_MARKER)))
      if (list_add(&names, e->d_name)) bad = 1;
  closedir(d);
  if (names.n) qsort(names.v, names.n, sizeof *names.v, cmp_str);
  for (i = 0; i < names.n && !bad; i++) {
    struct stat st;
    snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", names.v[i]);
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    if (lstat(path, &st) != 0) { bad = 1; break; }
    if (S_ISDIR(st.st_mode)) {
      char slashed[4300];
      snprintf(slashed, sizeof slashed, "%s/", sub);
      if (list_add(l, slashed) || walk(l, dir, sub)) bad = 1;
    } else if (list_add(l, sub)) bad = 1;
  }
  list_free(&names);
  return bad ? -1 : 0;
}

/* Read dir's marker into l (sorted). 1: a lowp folder; 0: no valid marker. */
static int read_marker(list_t *l, const char *dir) {
  char path[4300], *buf, *line, *save = NULL;
  struct stat st;
  int fd, ok = 0;
  snprintf(path, sizeof path, "%s/%s", dir, LOWP_OUTPUT_MARKER);
  fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 22)) {
    close(fd);
    return 0;
  }
  buf = malloc((size_t)st.st_size + 1);
  if (buf && read(fd, buf, (size_t)st.st_size) == (ssize_t)st.st_size) {
    buf[st.st_size] = '\0';
    ok = !strncmp(buf, MARKER_HEAD, strlen(MARKER_HEAD));
    line = strtok_r(buf, "\n", &save); /* the head line */
    while (ok && (line = strtok_r(NULL, "\n", &save)))
      if (line[0] != '#' && list_add(l, line)) ok = 0;
  }
  free(buf);
  close(fd);
  if (ok && l->n) qsort(l->v, l->n, sizeof *l->v, cmp_str);
  return ok;
}

enum { DEST_ABSENT = 0, DEST_EMPTY = 1, DEST_LOWP = 2 };

/* Is root a lowp folder holding nothing lowp did not write? -1: no valid
   marker; -2: unreadable; 1: the first stray entry (its path relative to
   root, after prefix) is in out; 0: all lowp's. A subfolder with a valid
   marker of its own is checked against that marker instead (`lowp run NAME
   --out DIR/NAME` rewrote one experiment of a report's folder). */
static int find_stray(const char *root, const char *prefix, char *out, size_t len) {
  list_t mine = {NULL, 0, 0}, there = {NULL, 0, 0};
  size_t i, j;
  int r = 0;
  if (!read_marker(&mine, root)) { list_free(&mine); return -1; }
  if (walk(&there, root, "") != 0) { list_free(&mine); list_free(&there); return -2; }
  for (i = 0; i < there.n && r == 0; i++) {
    const char *e = there.v[i];
    size_t n = strlen(e);
    int listed = bsearch(&there.v[i], mine.v, mine.n, sizeof *mine.v, cmp_str) != NULL;
    if (listed && e[n - 1] != '/') continue;
    if (e[n - 1] == '/') {
      char sub[8400], pre[8400];
      snprintf(sub, sizeof sub, "%s/%.*s", root, (int)(n - 1), e);
      snprintf(pre, sizeof pre, "%s%s", prefix, e);
      r = find_stray(sub, pre, out, len);
      if (r == 0) { /* a lowp folder of its own: skip what it holds */
        for (j = i + 1; j < there.n && !strncmp(there.v[j], e, n); j++) {}
        i = j - 1;
        continue;
      }
      if (r == 1) break;
      r = 0;
      if (listed) continue; /* no marker of its own: its entries are on this list */
    }
    snprintf(out, len, "%s%s", prefix, e);
    r = 1;
  }
  list_free(&mine);
  list_free(&there);
  return r;
}

/* Classify the destination folder; on a refusal write the message into
   msg and return -1. */
static int check_dest(const char *final, const char *opt, char *msg, size_t len) {
  struct stat st;
  DIR *d;
  struct dirent *e;
  int empty = 1, r;
  char stray[4300];
  if (lstat(final, &st) != 0) {
    if (errno == ENOENT) return DEST_ABSENT;
    if (errno == ENOTDIR)
      snprintf(msg, len, "%s '%s': cannot create it: a part of its path is not a folder", opt,
               final);
    else
      snprintf(msg, len, "%s '%s': cannot use it (%s)", opt, final, strerror(errno));
    return -1;
  }
  if (S_ISLNK(st.st_mode)) {
    snprintf(msg, len, "%s '%s' is a symbolic link; lowp does not write through links "
             "(give the folder itself, or a new name)", opt, final);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(msg, len, "%s '%s' is %s, not a folder; lowp does not replace it", opt, final,
             S_ISREG(st.st_mode) ? "a file" : kind_of(st.st_mode));
    return -1;
  }
  if (!(d = opendir(final))) {
    snprintf(msg, len, "%s '%s': cannot read the folder (%s)", opt, final, strerror(errno));
    return -1;
  }
  while (empty && (e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
  closedir(d);
  if (empty) return DEST_EMPTY;
  r = find_stray(final, "", stray, sizeof stray);
  if (r == -1)
    snprintf(msg, len, "%s '%s' is a folder that is not empty and that lowp did not make "
             "(no %s marker); lowp never deletes what it did not write: give a new or an "
             "empty folder", opt, final, LOWP_OUTPUT_MARKER);
  else if (r == -2)
    snprintf(msg, len, "%s '%s': cannot read the folder", opt, final);
  else if (r == 1)
    snprintf(msg, len, "%s '%s' holds '%s', which lowp did not write; lowp never deletes "
             "what it did not write: move it away, or give another folder", opt, final, stray);
  return r == 0 ? DEST_LOWP : -1;
}

static int write_marker(const char *tmp, const char *what) {
  list_t l = {NULL, 0, 0};
  char path[4300];
  FILE *f;
  size_t i;
  int ok;
  if (walk(&l, tmp, "") != 0) { list_free(&l); return -1; }
  snprintf(path, sizeof path, "%s/%s", tmp, LOWP_OUTPUT_MARKER);
  if (!(f = fopen(path, "w"))) { list_free(&l); return -1; }
  fprintf(f, "%s, written by %s: lowp replaces this folder as a whole, and only while it "
          "holds nothing but the files listed here\n"
          "# the files lowp wrote (one per line, folders end in '/'):\n", MARKER_HEAD, what);
  for (i = 0; i < l.n; i++) fprintf(f, "%s\n", l.v[i]);
  ok = !ferror(f);
  ok = fclose(f) == 0 && ok;
  list_free(&l);
  return ok ? 0 : -1;
}

int lowp_outdir_drop_suffix(const char *dir, const char *suffix, const char *what) {
  list_t l = {NULL, 0, 0};
  char path[8400];
  size_t i, ls = strlen(suffix);
  int bad = 0;
  if (walk(&l, dir, "") != 0) { list_free(&l); return -1; }
  for (i = 0; i < l.n; i++) {
    size_t n = strlen(l.v[i]);
    if (strchr(l.v[i], '/') || n <= ls || strcmp(l.v[i] + n - ls, suffix)) continue; /* top-level files only */
    snprintf(path, sizeof path, "%s/%s", dir, l.v[i]);
    if (remove(path) != 0) bad = 1;
  }
  list_free(&l);
  return bad || write_marker(dir, what) != 0 ? -1 : 0;
}

/* mkdir -p of the folders above final, each registered (removed if empty
   when the run fails). Dies on a failure. */
static void make_parents(lowp_outdir_t *o, const char *cmd, const char *opt, const char *final) {
  char buf[4096];
  size_t i, n;
  parent_of(buf, sizeof buf, final);
  n = strlen(buf);
  for (i = 1; i <= n; i++) {
    struct stat st;
    char c = buf[i];
    if (c != '/' && c != '\0') continue;
    buf[i] = '\0';
    if (stat(buf, &st) != 0) {
      int id = o->nparents < LOWP_OUTDIR_MAXPARENTS ? lowp_temp_add(buf, LOWP_TEMP_DIR) : -1;
      if (id < 0 || mkdir(buf, 0777) != 0) {
        int e = errno;
        lowp_temp_drop(id);
        die_out(cmd, "%s '%s': cannot create folder '%s' (%s)", opt, final, buf, strerror(e));
      }
      o->parents[o->nparents++] = id;
    } else if (!S_ISDIR(st.st_mode)) {
      die_out(cmd, "%s '%s': '%s' is not a folder", opt, final, buf);
    }
    buf[i] = c;
  }
}

static void drop_parents(lowp_outdir_t *o) {
  while (o->nparents > 0) lowp_temp_drop(o->parents[--o->nparents]);
}

/* ----------------------------------------------------------- public API */

void lowp_output_check_file(const char *cmd, const char *opt, const char *path) {
  lowp_atomic_t probe;
  struct stat st;
  char dir[4096];
  int s = lowp_atomic_check(path);
  if (!path || !*path) die_out(cmd, "%s: empty file name", opt);
  if (s == LOWP_EINVAL) die_out(cmd, "%s '%s': a file name cannot end in '/'", opt, path);
  if (s == LOWP_EFILE && lstat(path, &st) == 0)
    die_out(cmd, "%s '%s' is %s; lowp writes only to a new or a regular file", opt, path,
                 kind_of(st.st_mode));
  if (strlen(path) >= sizeof dir) die_out(cmd, "%s: file name too long", opt);
  /* the folder must take a new file: create the temporary and remove it */
  errno = 0;
  if (lowp_atomic_open(&probe, path) != LOWP_OK) {
    int e = errno;
    parent_of(dir, sizeof dir, path);
    die_out(cmd, "%s '%s': cannot create a file in folder '%s' (%s)", opt, path, dir,
                 why_not_writable(dir, e));
  }
  lowp_atomic_abort(&probe);
}

void lowp_outdir_begin(lowp_outdir_t *o, const char *cmd, const char *opt, const char *path) {
  char msg[8800];
  size_t n;
  unsigned k;
  if (!path || !*path) die_out(cmd, "%s: empty folder name", opt);
  n = strlen(path);
  if (n >= sizeof o->final) die_out(cmd, "%s: folder name too long", opt);
  memcpy(o->final, path, n + 1);
  while (n > 1 && o->final[n - 1] == '/') o->final[--n] = '\0';
  if (!strcmp(o->final, "/") || !strcmp(o->final, ".") || !strcmp(o->final, "..") ||
      (n >= 2 && !strcmp(o->final + n - 2, "/.")) || (n >= 3 && !strcmp(o->final + n - 3, "/..")))
    die_out(cmd, "%s '%s': give a folder by its name (not '/', '.' or '..')", opt, path);
  if (check_dest(o->final, opt, msg, sizeof msg) < 0) die_out(cmd, "%s", msg);
  o->nparents = 0;
  make_parents(o, cmd, opt, o->final);
  for (k = 0;; k++) {
    /* beside the destination (same file system: rename is atomic); named
       "DIR/.lowp.tmp.PID.N" in its folder if DEST's name is too long for a suffix */
    if (k < 50)
      snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld.%u", o->final, (long)getpid(), k);
    else {
      const char *slash = strrchr(o->final, '/');
      snprintf(o->tmp, sizeof o->tmp, "%.*s.lowp.tmp.%ld.%u",
               slash ? (int)(slash - o->final + 1) : 0, o->final, (long)getpid(), k);
    }
    o->tmp_id = lowp_temp_add(o->tmp, LOWP_TEMP_TREE);
    if (o->tmp_id < 0) die_out(cmd, "%s '%s': too many temporary folders", opt, path);
    if (mkdir(o->tmp, 0777) == 0) break; /* umask applies, as for mkdir(1) */
    {
      int e = errno;
      lowp_temp_drop(o->tmp_id);
      if (e == ENAMETOOLONG && k < 50) { k = 49; continue; }
      if (e != EEXIST || k > 100) {
        char dir[4096];
        parent_of(dir, sizeof dir, o->final);
        die_out(cmd, "%s '%s': cannot create a folder in '%s' (%s)", opt, o->final, dir,
                     strerror(e));
      }
    }
  }
}

void lowp_outdir_publish(lowp_outdir_t *o, const char *cmd, const char *what) {
  char msg[8800], old[4300];
  int dest, r, e;
  if (write_marker(o->tmp, what) != 0)
    die_out(cmd, "cannot write into '%s'", o->tmp);
  /* what the run printed is part of it: if stdout could not take it (a
     full disk, /dev/full), nothing is published (issue 19) */
  if (fflush(stdout) != 0 || ferror(stdout))
    die_out(cmd, "cannot write the standard output (a full disk or a closed file?); nothing was "
            "published");
  lowp_cleanup_commit_begin();
  dest = check_dest(o->final, "--out", msg, sizeof msg); /* changed during the run? */
  if (dest < 0) {
    lowp_cleanup_commit_end();
    die_out(cmd, "%s (it changed during the run; nothing was published)", msg);
  }
  if (lowp_cleanup_held()) lowp_cleanup_commit_end(); /* a signal came: publish nothing */
  if (dest != DEST_LOWP) {
    r = rename(o->tmp, o->final); /* over an absent or empty folder: atomic */
    e = errno;
    if (r == 0) { lowp_temp_drop(o->tmp_id); drop_parents(o); }
    lowp_cleanup_commit_end();
    if (r != 0) die_out(cmd, "cannot move results into '%s' (%s)", o->final, strerror(e));
    return;
  }
  /* swap with the old lowp folder in one step; tmp then holds the old one */
  r = renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->final, RENAME_EXCHANGE);
  if (r == 0) {
    drop_parents(o);
    lowp_cleanup_commit_end();
    lowp_temp_remove(o->tmp_id);
    return;
  }
  /* no RENAME_EXCHANGE on this file system: old aside, new in, old removed */
  {
    int old_id;
    snprintf(old, sizeof old, "%s.old.%ld", o->final, (long)getpid());
    old_id = lowp_temp_add(old, LOWP_TEMP_TREE);
    r = old_id < 0 ? -1 : rename(o->final, old);
    if (r == 0 && rename(o->tmp, o->final) != 0) {
      e = errno;
      (void)rename(old, o->final);
      lowp_temp_drop(old_id);
      lowp_cleanup_commit_end();
      die_out(cmd, "cannot move results into '%s' (%s)", o->final, strerror(e));
    }
    if (r != 0) {
      e = errno;
      lowp_temp_drop(old_id);
      lowp_cleanup_commit_end();
      die_out(cmd, "cannot replace '%s' (%s)", o->final, strerror(e));
    }
    lowp_temp_drop(o->tmp_id);
    drop_parents(o);
    lowp_cleanup_commit_end();
    lowp_temp_remove(old_id);
  }
}

void lowp_outdir_abort(lowp_outdir_t *o) {
  lowp_temp_remove(o->tmp_id);
  while (o->nparents > 0) lowp_temp_remove(o->parents[--o->nparents]);
}

/* ------------------------------------------------ outputs vs inputs */

static void file_id(lowp_fileid_t *f, const char *opt, const char *path) {
  struct stat st;
  char dir[4096], *real;
  const char *base;
  memset(f, 0, sizeof *f);
  f->opt = opt;
  f->path = path;
  if (stat(path, &st) == 0) {
    f->exists = 1;
    f->dev = (unsigned long long)st.st_dev;
    f->ino = (unsigned long long)st.st_ino;
    return;
  }
  /* not there (or a dangling link: lowp_output_check_file refuses it) */
  parent_of(dir, sizeof dir, path);
  base = strrchr(path, '/');
  base = base ? base + 1 : path;
  real = realpath(dir, NULL);
  snprintf(f->resolved, sizeof f->resolved, "%s/%s", real ? real : dir, base);
  free(real);
}

static int same_file(const lowp_fileid_t *a, const lowp_fileid_t *b) {
  if (a->exists != b->exists) return 0;
  if (a->exists) return a->dev == b->dev && a->ino == b->ino;
  return !strcmp(a->resolved, b->resolved);
}

void lowp_outputs_add(lowp_outputs_t *s, const char *cmd, const char *opt, const char *path) {
  lowp_fileid_t f;
  int i;
  if (!path || !strcmp(path, "-")) return;
  if (s->n >= LOWP_OUTPUTS_MAX) die_out(cmd, "too many outputs");
  file_id(&f, opt, path);
  for (i = 0; i < s->n; i++)
    if (same_file(&s->out[i], &f))
      die_out(cmd, "%s '%s' and %s '%s' are the same file: each output needs its own", s->out[i].opt,
              s->out[i].path, opt, path);
  s->out[s->n++] = f;
}

void lowp_outputs_input(const lowp_outputs_t *s, const char *cmd, const char *what,
                        const char *path) {
  lowp_fileid_t f;
  int i;
  if (!path || !strcmp(path, "-") || !s->n) return;
  file_id(&f, what, path);
  if (!f.exists) return; /* an input not there is refused where it is read */
  for (i = 0; i < s->n; i++)
    if (same_file(&s->out[i], &f))
      die_out(cmd, "%s '%s' is %s '%s': an output may not overwrite an input", s->out[i].opt,
              s->out[i].path, what, path);
}
