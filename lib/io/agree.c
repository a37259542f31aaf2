/* lowp_agree -- what an MPI rank runs (its command line and the identity of its input files), compared across ranks */

#define _POSIX_C_SOURCE 200809L /* fstat, open */

#include "io/agree.h"

#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/escape.h"
#include "status.h"

/* ------------------------------------------------ SHA-256 (nettle) */

/* SHA-256 (FIPS 180-4) from GNU Nettle, the Debian package nettle-dev */
typedef struct sha256_ctx sha_t;

static void sha_init(sha_t *s) { sha256_init(s); }
static void sha_add(sha_t *s, const void *data, size_t n) { sha256_update(s, n, (const uint8_t *)data); }
static void sha_end(sha_t *s, uint8_t out[32]) { sha256_digest(s, SHA256_DIGEST_SIZE, out); }

void lowp_sha256(uint8_t out[32], const void *data, size_t n) {
  sha_t s;
  sha_init(&s);
  sha_add(&s, data, n);
  sha_end(&s, out);
}

/* ------------------------------------------------------ private helpers */

/* files larger than this are compared by size alone (1 TiB) */
#define AGREE_MAX_READ ((uint64_t)1 << 40)

static void put_le(uint8_t *p, uint64_t v, int n) {
  int i;
  for (i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n) {
  uint64_t v = 0;
  int i;
  for (i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* the value of an output option: written, not read */
static int is_output_key(const char *k, size_t n) {
  return (n >= 5 && !strncmp(k, "--out", 5)) || (n == 6 && !strncmp(k, "--json", 6)) ||
         (n == 7 && !strncmp(k, "--junit", 7)) || (n == 9 && !strncmp(k, "--capture", 9)) ||
         (n == 5 && !strncmp(k, "--csv", 5));
}

/* what path names: kind, and for a regular file the hash of size and content */
static int describe(const char *path, uint8_t hash[32], uint64_t *size) {
  struct stat st;
  sha_t s;
  uint8_t buf[65536], len[8];
  ssize_t n;
  int fd;
  *size = 0;
  if (!*path || stat(path, &st) != 0) return LOWP_AGREE_NOFILE;
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode))
    return LOWP_AGREE_STREAM;
  if (!S_ISREG(st.st_mode)) return LOWP_AGREE_OTHER;
  fd = open(path, O_RDONLY | O_NONBLOCK);
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (fd >= 0) close(fd);
    return LOWP_AGREE_UNREADABLE;
  }
  *size = (uint64_t)st.st_size;
  sha_init(&s);
  put_le(len, *size, 8);
  sha_add(&s, len, 8);
  /* content up to its size (a file that grows is read once), and none of
     what no input can be (/proc/kcore's 128 TiB): the size says enough */
  n = 0;
  if (*size <= AGREE_MAX_READ) {
    uint64_t left = *size;
    while (left && (n = read(fd, buf, left < sizeof buf ? (size_t)left : sizeof buf)) > 0) {
      sha_add(&s, buf, (size_t)n);
      left -= (uint64_t)n;
    }
  }
  close(fd);
  if (n < 0) return LOWP_AGREE_UNREADABLE;
  sha_end(&s, hash);
  return LOWP_AGREE_FILE;
}

/* argument i of a record's text, or NULL past the kept text */
static const char *arg_text(const lowp_agree_t *r, int i) {
  const char *p = r->text, *end = r->text + sizeof r->text;
  int k;
  for (k = 0; k < i && p < end; k++) p += strnlen(p, (size_t)(end - p)) + 1;
  return p < end && k == i ? p : NULL;
}

/* ----------------------------------------------------------- public API */

int lowp_agree_record(lowp_agree_t *r, int n, char *const *args) {
  sha_t all;
  size_t used = 0;
  int i, out_next = 0;
  if (!r || n < 0 || (n && !args)) return LOWP_EINVAL;
  memset(r, 0, sizeof *r);
  put_le(r->nargs, (uint64_t)n, 4);
  sha_init(&all);
  for (i = 0; i < n; i++) {
    const char *a = args[i] ? args[i] : "", *eq = strchr(a, '=');
    const char *path = a;
    size_t len = strlen(a);
    uint8_t h[32], lb[8];
    uint64_t size = 0;
    int kind = LOWP_AGREE_NOFILE, out = out_next;
    put_le(lb, len, 8);
    sha_add(&all, lb, 8);
    sha_add(&all, a, len);
    out_next = !strncmp(a, "--", 2) && !eq && is_output_key(a, len);
    if (!strncmp(a, "--", 2) && eq) {
      out = is_output_key(a, (size_t)(eq - a));
      path = eq + 1;
    }
    memset(h, 0, sizeof h);
    if (!out) kind = describe(path, h, &size);
    sha_add(&all, &(uint8_t){(uint8_t)kind}, 1);
    sha_add(&all, h, sizeof h);
    if (i < LOWP_AGREE_NARGS) {
      r->kind[i] = (uint8_t)kind;
      memcpy(r->hash[i], h, 16);
      put_le(r->size[i], size, 8);
    }
    if (used + len + 1 <= sizeof r->text) {
      memcpy(r->text + used, a, len + 1);
      used += len + 1;
    } else {
      used = sizeof r->text;
    }
  }
  sha_add(&all, r->nargs, sizeof r->nargs);
  sha_end(&all, r->digest);
  return LOWP_OK;
}

int lowp_agree_compare(const lowp_agree_t *r0, const lowp_agree_t *rr, int rank, char *msg, size_t len) {
  int n0 = (int)get_le(r0->nargs, 4), nr = (int)get_le(rr->nargs, 4), i;
  static const char *const tail = "every rank of an MPI job must run the same command on the same input files";
  if (!memcmp(r0, rr, sizeof *r0)) return 0;
  for (i = 0; i < (n0 > nr ? n0 : nr) && i < LOWP_AGREE_NARGS; i++) {
    const char *a = i < n0 ? arg_text(r0, i) : NULL, *b = i < nr ? arg_text(rr, i) : NULL;
    int same_text = a && b ? !strcmp(a, b) : (i < n0) == (i < nr);
    if (same_text && (i >= n0 || (r0->kind[i] == rr->kind[i] && !memcmp(r0->hash[i], rr->hash[i], 16))))
      continue;
    if (!same_text) {
      char note[300] = "";
      if (i < nr && b && r0->kind[i] == LOWP_AGREE_FILE && rr->kind[i] == LOWP_AGREE_NOFILE)
        snprintf(note, sizeof note, " (rank %d: %.64s: cannot open)", rank, b);
      /* each argument cut to 64 bytes: a message escapes control bytes (up
         to 4 characters each), and it must still name both ranks */
      lowp_errf(msg, len, 1, "the ranks of this MPI job disagree: argument %d is '%.64s' on rank 0, "
                "'%.64s' on rank %d%s; %s", i + 1, i < n0 ? (a ? a : "...") : "(none)",
                i < nr ? (b ? b : "...") : "(none)", rank, note, tail);
      return 1;
    }
    {
      static const char *const kinds[] = {"no such file", "a file", "a folder", "an unreadable file",
                                          "a FIFO, a socket or a device", "?", "?", "?"};
      const char *p = a ? a : "...";
      if (r0->kind[i] == LOWP_AGREE_FILE && rr->kind[i] == LOWP_AGREE_FILE)
        lowp_errf(msg, len, 1, "the ranks of this MPI job read different files: %.100s is %llu bytes on "
                  "rank 0 and %llu bytes%s on rank %d; %s", p, (unsigned long long)get_le(r0->size[i], 8),
                  (unsigned long long)get_le(rr->size[i], 8),
                  get_le(r0->size[i], 8) == get_le(rr->size[i], 8) ? " with other content" : "", rank, tail);
      else
        lowp_errf(msg, len, 1, "the ranks of this MPI job read different files: %.100s is %s on rank 0 and "
                  "%s on rank %d%s; %s", p, kinds[r0->kind[i] & 7], kinds[rr->kind[i] & 7], rank,
                  rr->kind[i] == LOWP_AGREE_NOFILE ? " (cannot open it there)" : "", tail);
      return 1;
    }
  }
  lowp_errf(msg, len, 1, "the ranks of this MPI job disagree: rank 0 and rank %d run different "
            "command lines (in arguments too long to show); %s", rank, tail);
  return 1;
}
