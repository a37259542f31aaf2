/* tagree -- tests of lowp_agree (lib/io/agree.h): SHA-256 against FIPS 180-4's vectors, and the
   comparison of two ranks' command lines and input files */

#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io/agree.h"
#include "status.h"
#include "testutil.h"

static void hex(char out[65], const uint8_t d[32]) {
  int i;
  for (i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void test_sha(void) {
  static const struct { const char *in, *want; } v[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
       "mnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"}};
  static char million[1000001];
  uint8_t d[32];
  char h[65];
  size_t i;
  for (i = 0; i < sizeof v / sizeof v[0]; i++) {
    lowp_sha256(d, v[i].in, strlen(v[i].in));
    hex(h, d);
    lowp_test_check(!strcmp(h, v[i].want), "sha256 of a %zu-byte message: %s", strlen(v[i].in), h);
  }
  memset(million, 'a', 1000000);
  lowp_sha256(d, million, 1000000);
  hex(h, d);
  lowp_test_check(!strcmp(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
                  "sha256 of a million 'a': %s", h);
}

static int cmp_args(int n0, char *const *a0, int n1, char *const *a1, char *msg, size_t len) {
  static lowp_agree_t r0, r1;
  lowp_agree_record(&r0, n0, a0);
  lowp_agree_record(&r1, n1, a1);
  msg[0] = '\0';
  return lowp_agree_compare(&r0, &r1, 1, msg, len);
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

int main(void) {
  char base[] = "/tmp/tagree.XXXXXX", f1[200], f2[200], f3[200], kv1[220], kv3[220], msg[1400];
  lowp_test_start("tagree");
  test_sha();
  lowp_test_make_tmpdir(base);
  snprintf(f1, sizeof f1, "%s/a.npy", base);
  snprintf(f2, sizeof f2, "%s/b.npy", base);
  snprintf(f3, sizeof f3, "%s/c.npy", base);
  put(f1, "one content");
  put(f2, "one content");
  put(f3, "two content");
  {
    char *a[] = {"gemm", "--m", "64", "--a", f1}, *b[] = {"gemm", "--m", "64", "--a", f1};
    char *c[] = {"gemm", "--m", "128", "--a", f1}, *d[] = {"gemm", "--m", "64"};
    lowp_test_check(cmp_args(5, a, 5, b, msg, sizeof msg) == 0, "the same command agrees: %s", msg);
    lowp_test_check(cmp_args(5, a, 5, c, msg, sizeof msg) == 1 &&
                    strstr(msg, "argument 3 is '64' on rank 0, '128' on rank 1"), "--m differs: %s", msg);
    lowp_test_check(cmp_args(5, a, 3, d, msg, sizeof msg) == 1 &&
                    strstr(msg, "argument 4 is '--a' on rank 0, '(none)' on rank 1"), "shorter: %s", msg);
  }
  {
    /* the same name, other content: a file that differs between "nodes" */
    static lowp_agree_t r0, r1;
    char *a[] = {"check", f1};
    lowp_agree_record(&r0, 2, a);
    put(f1, "one contenT");
    lowp_agree_record(&r1, 2, a);
    lowp_test_check(lowp_agree_compare(&r0, &r1, 2, msg, sizeof msg) == 1 &&
                    strstr(msg, "is 11 bytes on rank 0 and 11 bytes with other content on rank 2"),
                    "same size, other content: %s", msg);
    put(f1, "one content, longer");
    lowp_agree_record(&r1, 2, a);
    lowp_test_check(lowp_agree_compare(&r0, &r1, 2, msg, sizeof msg) == 1 &&
                    strstr(msg, "is 11 bytes on rank 0 and 19 bytes on rank 2"), "other size: %s", msg);
    unlink(f1);
    lowp_agree_record(&r1, 2, a);
    lowp_test_check(lowp_agree_compare(&r0, &r1, 2, msg, sizeof msg) == 1 &&
                    strstr(msg, "is a file on rank 0 and no such file on rank 2 (cannot open it there)"),
                    "missing: %s", msg);
    put(f1, "one content");
  }
  {
    /* outputs are not inputs: --out-exact's, --json's file may differ; --key=value too */
    char *a[] = {"gemm", "--out-exact", f1, "--json", f1}, *b[] = {"gemm", "--out-exact", f3, "--json", f3};
    char *c[] = {"gemm", "--a", f1}, *d[] = {"gemm", "--a", f3};
    char *e[2], *g[2];
    lowp_test_check(cmp_args(5, a, 5, a, msg, sizeof msg) == 0, "same outputs agree");
    lowp_test_check(cmp_args(5, a, 5, b, msg, sizeof msg) == 1 && strstr(msg, "argument 3"),
                    "output names still compared as text: %s", msg);
    lowp_test_check(cmp_args(3, c, 3, d, msg, sizeof msg) == 1, "different inputs by name: %s", msg);
    snprintf(kv1, sizeof kv1, "--out=%s", f1);
    snprintf(kv3, sizeof kv3, "--a=%s", f1);
    e[0] = "run";
    e[1] = kv1;
    g[0] = "run";
    g[1] = kv3;
    put(f2, "x");
    {
      static lowp_agree_t r0, r1;
      lowp_agree_record(&r0, 2, e);
      put(f1, "changed output");
      lowp_agree_record(&r1, 2, e);
      lowp_test_check(lowp_agree_compare(&r0, &r1, 1, msg, sizeof msg) == 0,
                      "--out=FILE is not read: %s", msg);
      lowp_agree_record(&r0, 2, g);
      put(f1, "changed input");
      lowp_agree_record(&r1, 2, g);
      lowp_test_check(lowp_agree_compare(&r0, &r1, 1, msg, sizeof msg) == 1 && strstr(msg, "is 14 bytes on rank 0 and 13 bytes on rank 1"),
                      "--a=FILE is read: %s", msg);
    }
  }
  lowp_test_check(lowp_agree_record(NULL, 0, NULL) == LOWP_EINVAL, "NULL record");
  unlink(f1);
  unlink(f2);
  unlink(f3);
  rmdir(base);
  return lowp_test_end();
}
