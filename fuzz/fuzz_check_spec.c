/* fuzz_check_spec -- libFuzzer harness of lowp_spec_parse (lowp check specs) */

/*
 * Input: spec text, passed as exactly `size` bytes with no terminating NUL
 * (ASan then catches any read past len). Properties:
 *   - the parser is a function of its input: parsing twice gives the same
 *     status, message, version, number of checks, and baseline;
 *   - on failure there is a message (one line: the contract of spec.h) and
 *     lowp_spec_free is safe on what was filled;
 *   - an accepted spec has version 1 and n_checks >= 0 with checks non-NULL
 *     when n_checks > 0; its check names are non-empty and distinct, and
 *     every check's fingerprint is 16 hex digits, the same in both parses.
 * spec.h has no printer, so no round trip can be asserted.
 */

#include "fuzz.h"

#include "check/spec.h"
#include "status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lowp_spec_t a, b;
  char ea[512], eb[512];
  int sa, sb;
  uint8_t *copy;
  if (size > 65536) return 0;
  copy = malloc(size ? size : 1);
  if (!copy) abort();
  memcpy(copy, data, size);
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  ea[0] = eb[0] = '\0';
  sa = lowp_spec_parse(&a, (const char *)copy, size, "/nonexistent", ea, sizeof ea);
  sb = lowp_spec_parse(&b, (const char *)copy, size, "/nonexistent", eb, sizeof eb);
  FUZZ_CHECK(sa == sb, "two parses, two statuses (%d, %d)", sa, sb);
  if (sa != LOWP_OK) {
    FUZZ_CHECK(ea[0] && !strchr(ea, '\n'), "message empty or not one line: '%s'", ea);
    FUZZ_CHECK(!strcmp(ea, eb), "two parses, two messages: '%s' '%s'", ea, eb);
  } else {
    FUZZ_CHECK(a.version == 1 && a.n_checks >= 0 && (a.n_checks == 0 || a.checks),
               "accepted spec: version %d, %d checks", a.version, a.n_checks);
    FUZZ_CHECK(a.version == b.version && a.n_checks == b.n_checks, "two parses differ");
    FUZZ_CHECK((a.baseline == NULL) == (b.baseline == NULL) &&
                   (!a.baseline || !strcmp(a.baseline, b.baseline)),
               "two parses, two baselines");
    if (a.n_checks == b.n_checks) {
      int i, j;
      for (i = 0; i < a.n_checks; i++) {
        const char *n = a.checks[i].name, *fp = a.checks[i].fingerprint;
        FUZZ_CHECK(n && n[0], "check %d has no name", i);
        FUZZ_CHECK(strlen(fp) == 16 && strspn(fp, "0123456789abcdef") == 16,
                   "check '%s': fingerprint '%s'", n, fp);
        FUZZ_CHECK(!strcmp(fp, b.checks[i].fingerprint), "check '%s': two fingerprints", n);
        for (j = 0; j < i; j++)
          FUZZ_CHECK(strcmp(a.checks[j].name, n) != 0, "two checks named '%s'", n);
      }
    }
  }
  lowp_spec_free(&a);
  lowp_spec_free(&b);
  free(copy);
  return 0;
}
