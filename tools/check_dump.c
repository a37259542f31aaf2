/* lowp_chk_dump -- lowp check --dump DIR: a failing check's inputs, outputs and
   exact reference as .npy, to reproduce it elsewhere (numpy.load, or a spec
   with a tensors subject on these files) */

#define _POSIX_C_SOURCE 200809L /* mkdir */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_internal.h"
#include "cleanup.h"
#include "cli.h"
#include "io/npy.h"
#include "status.h"

void lowp_chk_dump_probe(const char *dir) {
  struct stat st;
  DIR *d;
  struct dirent *e;
  if (lstat(dir, &st) != 0) {
    int id;
    if (errno != ENOENT) lowp_cli_die(LOWP_CHK_CMD, "--dump %s: %s", dir, strerror(errno));
    /* made when a check fails: it must be possible then, so it is tried
       now, before any work (issue 30: found only after the work, the dump
       was lost) */
    id = lowp_temp_add(dir, LOWP_TEMP_DIR);
    if (mkdir(dir, 0777) != 0) {
      int e = errno;
      lowp_temp_drop(id);
      lowp_cli_die(LOWP_CHK_CMD, "--dump %s: cannot create the folder: %s", dir, strerror(e));
    }
    lowp_temp_remove(id);
    if (id < 0) rmdir(dir);
    return;
  }
  if (!S_ISDIR(st.st_mode)) lowp_cli_die(LOWP_CHK_CMD, "--dump %s: not a folder", dir);
  d = opendir(dir);
  if (!d) lowp_cli_die(LOWP_CHK_CMD, "--dump %s: %s", dir, strerror(errno));
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      closedir(d);
      lowp_cli_die(LOWP_CHK_CMD, "--dump %s: the folder is not empty (lowp never writes over "
                   "what it finds)", dir);
    }
  closedir(d);
}

/* a check name as one path component: [A-Za-z0-9._-], others '_' */
static void safe_name(char *out, size_t len, const char *name) {
  size_t i;
  for (i = 0; name[i] && i + 1 < len; i++) {
    char c = name[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '.' || c == '-' || c == '_';
    out[i] = ok ? c : '_';
  }
  out[i] = '\0';
  if (!strcmp(out, ".") || !strcmp(out, "..") || !out[0]) snprintf(out, len, "check");
}

static int put(const char *dir, const char *name, const char *suffix, const lowp_problem_t *p,
               int which, const double *x) {
  char path[4200];
  size_t shape[LOWP_OP_MAXDIM], c;
  int nd;
  if (!x || lowp_op_shape(p, which, shape, &nd, &c)) return LOWP_OK;
  snprintf(path, sizeof path, "%s/%s%s.npy", dir, name, suffix);
  return lowp_npy_write(path, LOWP_NPY_F8, shape, nd, x, NULL);
}

static int dump_one(const char *root, const lowp_chk_run_t *r) {
  char sub[4200], nm[256];
  const lowp_problem_t *p = &r->p;
  int i, k, st = LOWP_OK;
  FILE *f;
  safe_name(nm, sizeof nm, r->sc->name);
  snprintf(sub, sizeof sub, "%s/%s", root, nm);
  /* names that become the same component ("a/b" and "a_b", ".." and "check") get NAME-2, NAME-3, ...:
     a failed check's dump is never written over another's (the folder was empty at the start;
     README.txt names the check) */
  for (k = 2; mkdir(sub, 0777) != 0; k++) {
    if (errno != EEXIST || k > 100000) return LOWP_EIO;
    snprintf(sub, sizeof sub, "%s/%s-%d", root, nm, k);
  }
  for (i = 0; i < p->op->n_in && !st; i++) {
    st = put(sub, p->op->in_names[i], "", p, i, r->in.x[i]);
    if (!st) st = put(sub, p->op->in_names[i], ".data", p, i, r->in.data[i]);
  }
  for (i = 0; i < r->res.n_out && !st; i++) {
    const lowp_check_output_t *o = &r->res.out[i];
    if (o->absent) continue;
    st = put(sub, o->name, ".got", p, p->op->n_in + i, o->got);
    if (!st) st = put(sub, o->name, ".exact", p, p->op->n_in + i, o->exact);
  }
  snprintf(sub + strlen(sub), sizeof sub - strlen(sub), "/README.txt");
  f = st ? NULL : fopen(sub, "w");
  if (f) {
    fprintf(f, "lowp check --dump: check '%s' (%s) failed\nsubject: %s\n", r->sc->name,
            p->op->name, r->subj.name);
    fprintf(f, "inputs NAME.npy: the values the subject read (fp64 holding values of their "
            "formats); NAME.data.npy: the unrounded originals\noutputs NAME.got.npy: what the "
            "subject returned; NAME.exact.npy: the exact result of the inputs, in fp64\n");
    for (i = 0; i < r->n_v; i++)
      fprintf(f, "rule %d (%s): %s: %s\n", i + 1, r->v[i].what, r->v[i].pass ? "pass" : "FAIL",
              r->v[i].msg);
    if (fclose(f) != 0) st = LOWP_EIO;
  }
  return st;
}

void lowp_chk_dump(const char *dir, const lowp_chk_run_t *runs, int n) {
  int i, st;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "lowp check: --dump %s: %s\n", dir, strerror(errno));
    return;
  }
  for (i = 0; i < n; i++)
    if (!runs[i].pass && runs[i].measured && (st = dump_one(dir, &runs[i])))
      fprintf(stderr, "lowp check: --dump %s: check '%s': %s\n", dir, runs[i].sc->name,
              lowp_status_str(st));
}
