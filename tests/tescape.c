/* tescape -- lowp_escape_ctl: control characters escaped, the rest kept, whole escapes only; UTF-8 validation, names XML can hold, sanitizing */

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
  /* UTF-8: what goes into JUnit XML and JSON (issue 19) */
  {
    static const struct { const char *s; int valid, name; } u[] = {
      {"plain", 1, 1}, {"caf\xc3\xa9", 1, 1}, {"\xe2\x82\xac \xf0\x9f\x98\x80", 1, 1},
      {"\xff", 0, 0}, {"a\x80", 0, 0}, {"\xc3", 0, 0}, {"\xc0\xaf", 0, 0} /* overlong */,
      {"\xe0\x80\xaf", 0, 0}, {"\xed\xa0\x80", 0, 0} /* surrogate */,
      {"\xf4\x90\x80\x80", 0, 0} /* > U+10FFFF */, {"x\xef\xbf\xbf", 1, 0} /* U+FFFF */,
      {"x\xef\xbf\xbe", 1, 0} /* U+FFFE */, {"a\tb", 1, 0}, {"a\x7f", 1, 0},
      {"\xef\xbf\xbd", 1, 1} /* U+FFFD */, {"\xf4\x8f\xbf\xbf", 1, 1}};
    size_t i, bad = 99;
    for (i = 0; i < sizeof u / sizeof u[0]; i++) {
      lowp_test_check(lowp_utf8_valid(u[i].s, strlen(u[i].s), NULL) == u[i].valid, "utf8_valid #%zu", i);
      lowp_test_check(lowp_name_ok(u[i].s) == u[i].name, "name_ok #%zu", i);
    }
    lowp_test_check(!lowp_utf8_valid("ab\xff" "c", 4, &bad) && bad == 2, "first bad byte at 2: %zu", bad);
    {
      char t[] = "a\xff" "b\xc3\xa9\xc3";
      lowp_test_check(lowp_utf8_sanitize(t) == 2 && !strcmp(t, "a?b\xc3\xa9?"), "sanitize: %s", t);
    }
    lowp_test_check(lowp_xml_char_ok(0x9) && !lowp_xml_char_ok(0x1) && !lowp_xml_char_ok(0xfffe) &&
                    lowp_xml_char_ok(0x10000), "xml chars");
  }
  /* numbers JSON's grammar (RFC 8259) refuses and cJSON reads; strings and escapes skipped */
  {
    static const struct { const char *s; int bad; size_t at; } n[] = {
      {"{\"a\": 064}", 1, 6}, {"{\"a\": 64.}", 1, 6}, {"{\"a\": 1e}", 1, 6}, {"[1.e3]", 1, 1},
      {"[-01]", 1, 1}, {"[1e+]", 1, 1}, {"[-]", 0, 0}, {"[-Infinity]", 0, 0}, {"{\"a\\\"\": 0.}", 1, 8},
      {"{\"a\": 64}", 0, 0}, {"[-0.5e-3, 0, 10, 1E+5]", 0, 0}, {"{\"064\": \"64.\"}", 0, 0},
      {"{\"a\\\\\": 1}", 0, 0}, {"[0]", 0, 0}};
    size_t i, at;
    for (i = 0; i < sizeof n / sizeof n[0]; i++) {
      at = 0;
      lowp_test_check(lowp_json_find_bad_number(n[i].s, strlen(n[i].s), &at) == n[i].bad &&
                          (!n[i].bad || at == n[i].at), "bad_number #%zu '%s': at %zu", i, n[i].s, at);
    }
  }
  return lowp_test_end();
}
