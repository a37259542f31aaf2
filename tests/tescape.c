/* tescape -- lowp_escape_ctl: control characters escaped, the rest kept, whole escapes only */

/*
 * Why: messages quote what a user typed, and "one line on stderr" is the
 * contract of every bad input (issue 14); a value with a newline or a
 * terminal escape sequence must not break it.
 *
 * Run: ctest --test-dir build -R '^tescape$'
 */

#include "io/escape.h"
#include "testutil.h"

#include <string.h>

static void is(const char *in, size_t len, const char *want) {
  char out[64];
  size_t n = lowp_escape_ctl(out, len, in);
  lowp_test_check(!strcmp(out, want) && n == strlen(want), "escape('%s', %zu) = '%s' (%zu), want '%s'",
                  in, len, out, n, want);
}

int main(void) {
  lowp_test_start("tescape");
  is("plain text", 64, "plain text");
  is("a\nb", 64, "a\\nb");
  is("a\r\tb", 64, "a\\r\\tb");
  is("\x1b[31mred", 64, "\\x1b[31mred");
  is("\x7f", 64, "\\x7f");
  is("caf\xc3\xa9", 64, "caf\xc3\xa9"); /* UTF-8 kept */
  is("", 64, "");
  is("abcdef", 4, "abc");                /* truncated, NUL-terminated */
  is("ab\ncd", 4, "ab");                 /* no half escape */
  is(NULL, 8, "");
  {
    char out[1] = {'x'};
    lowp_test_check(lowp_escape_ctl(out, 1, "abc") == 0 && out[0] == '\0', "len 1");
    lowp_test_check(lowp_escape_ctl(out, 0, "abc") == 0, "len 0");
  }
  return lowp_test_end();
}
