/* fuzz_agree -- libFuzzer harness of lowp_agree (lib/io/agree.h): what MPI ranks compare before any work */

/*
 * Input: two command lines, one argument a line, separated by a line
 * "--" + "-" (three dashes). A '/' in an argument becomes '_': arguments
 * name files of the fuzzer's working folder only (never /proc/kcore).
 * Properties:
 *   - a command line agrees with itself (two records made one after the other);
 *   - two command lines agree exactly when they are the same arguments;
 *   - a disagreement has a one-line message naming rank 1 (the other rank);
 *   - the comparison never reads past a record (truncated texts, 64+ arguments).
 */

#include "fuzz.h"

#include "io/agree.h"
#include "status.h"

#define MAXA 200

static int split(char *text, char **args) {
  int n = 0;
  char *line = text;
  while (line && n < MAXA) {
    char *nl = strchr(line, '\n'), *c;
    if (nl) *nl = '\0';
    for (c = line; *c; c++)
      if (*c == '/') *c = '_';
    args[n++] = line;
    line = nl ? nl + 1 : NULL;
  }
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static lowp_agree_t r0, r1, r2;
  char *text, *sep, *args0[MAXA], *args1[MAXA], msg[1400];
  int n0, n1 = 0, same, i, st;
  if (size > 16384) return 0;
  text = fuzz_cstr(data, size);
  sep = strstr(text, "\n---\n");
  if (sep) *sep = '\0';
  n0 = split(text, args0);
  if (sep) n1 = split(sep + 5, args1);
  FUZZ_CHECK(lowp_agree_record(&r0, n0, args0) == LOWP_OK, "record");
  FUZZ_CHECK(lowp_agree_record(&r2, n0, args0) == LOWP_OK, "record again");
  FUZZ_CHECK(lowp_agree_compare(&r0, &r2, 1, msg, sizeof msg) == 0, "a command line disagrees with itself: %s", msg);
  FUZZ_CHECK(lowp_agree_record(&r1, n1, args1) == LOWP_OK, "record 2");
  same = n0 == n1;
  for (i = 0; same && i < n0; i++) same = !strcmp(args0[i], args1[i]);
  msg[0] = '\0';
  st = lowp_agree_compare(&r0, &r1, 1, msg, sizeof msg);
  FUZZ_CHECK(st == !same, "%d and %d arguments, %s, compared %s: %s", n0, n1, same ? "the same" : "different",
             st ? "different" : "the same", msg);
  if (st) FUZZ_CHECK(msg[0] && !strchr(msg, '\n') && strstr(msg, "rank 1"), "message '%s'", msg);
  free(text);
  return 0;
}
