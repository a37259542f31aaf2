/* lowp fuzz helpers -- what every libFuzzer harness in fuzz/ shares */
#ifndef LOWP_FUZZ_H
#define LOWP_FUZZ_H

/*
 * A harness asserts properties of what a parser accepts (round trips,
 * agreement with an oracle), not only that it does not crash: a failed
 * property prints one line naming it and aborts, which libFuzzer reports as
 * a crash and saves the input. Harnesses are built with clang only
 * (-DLOWP_FUZZ=ON, see CMakeLists.txt and README "Fuzzing").
 */

#define _POSIX_C_SOURCE 200809L /* mkstemp, write, close, unlink */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/** @brief Abort with "fuzz property failed: MSG" unless cond holds. */
#define FUZZ_CHECK(cond, ...)                                                  \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "fuzz property failed at %s:%d: ", __FILE__, __LINE__);  \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
      abort();                                                                 \
    }                                                                          \
  } while (0)

/** @brief A NUL-terminated malloc'd copy of the input (the parsers take
    C strings; an embedded NUL ends the text there, as on a command line). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) abort();
  memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

/** @brief Write the bytes to a new temporary file; its path (malloc'd) is
    returned, the caller unlinks and frees it. */
static inline char *fuzz_tmpfile(const void *data, size_t size) {
  const char *dir = getenv("TMPDIR");
  char *path;
  size_t len, off = 0;
  int fd;
  if (!dir || !*dir) dir = "/tmp";
  len = strlen(dir) + 32;
  path = malloc(len);
  if (!path) abort();
  snprintf(path, len, "%s/lowp-fuzz-XXXXXX", dir);
  fd = mkstemp(path);
  if (fd < 0) abort();
  while (off < size) {
    ssize_t w = write(fd, (const char *)data + off, size - off);
    if (w <= 0) abort();
    off += (size_t)w;
  }
  close(fd);
  return path;
}

/** @brief The same double, bit for bit (so -0 != +0, and NaN == NaN only
    with the same bits). */
static inline int fuzz_same_bits(double a, double b) {
  return memcmp(&a, &b, sizeof a) == 0;
}

#endif
