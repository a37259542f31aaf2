/* fuzz_tol_args -- libFuzzer harness of lowp tol's argument parsing (lib/check/tol_args.c) */

/*
 * Input: a command line, its words separated by NUL or newline bytes (at
 * most 16; "tol" is prepended as argv[0]). The path is the one `lowp tol`
 * takes: lowp_tol_args -> lowp_capi_tol_query -> lowp_tol. Properties:
 *   - parsing is a function of the input (twice: same status, message);
 *   - a refusal at any stage has a message of one line;
 *   - a derived tolerance is finite and >= 0 in rtol, atol, bound,
 *     bound_acc and rtol_same_sign, or vacuous with rtol = atol = inf: the
 *     one check of lowp_tol;
 *   - monotone in k: the same query at k + 1 and at 2k is vacuous if k's is,
 *     and otherwise no tighter (rtol and atol do not fall);
 *   - lowp_tol_json of the result prints.
 */

#include "fuzz.h"

#include <cjson/cJSON.h>
#include <math.h>

#include "check/capi.h"
#include "check/tol.h"
#include "status.h"

enum { MAXARG = 17 };

static int sane(const lowp_tol_t *t) {
  const double v[5] = {t->rtol, t->atol, t->bound, t->bound_acc, t->rtol_same_sign};
  int i;
  if (t->vacuous) return isinf(t->rtol) && isinf(t->atol) && isinf(t->bound);
  for (i = 0; i < 5; i++)
    if (!(isfinite(v[i]) && v[i] >= 0)) return 0;
  return 1;
}

/* lowp_tol of q at another k: 0 when that k is refused */
static int at_k(lowp_tol_t *t, const lowp_tol_query_t *q, size_t k) {
  lowp_tol_query_t qq = *q;
  char e[512];
  qq.k = k;
  return lowp_tol(t, &qq, e, sizeof e) == LOWP_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text, *argv[MAXARG], e1[512], e2[512];
  int argc = 1, s1, s2, j1, j2, h1, h2;
  size_t i, start = 0;
  cJSON *q1 = NULL, *q2 = NULL;
  if (size > 1024) return 0;
  text = malloc(size + 1);
  if (!text) abort();
  memcpy(text, data, size);
  text[size] = '\0';
  argv[0] = "tol";
  for (i = 0; i <= size && argc < MAXARG; i++)
    if (i == size || text[i] == '\0' || text[i] == '\n') {
      text[i] = '\0';
      argv[argc++] = text + start;
      start = i + 1;
    }
  e1[0] = e2[0] = '\0';
  s1 = lowp_tol_args(&q1, &j1, &h1, argc, argv, e1, sizeof e1);
  s2 = lowp_tol_args(&q2, &j2, &h2, argc, argv, e2, sizeof e2);
  FUZZ_CHECK(s1 == s2 && !strcmp(e1, e2) && h1 == h2, "twice: %d '%s', %d '%s'", s1, e1, s2, e2);
  FUZZ_CHECK(s1 == LOWP_OK || (e1[0] && !strchr(e1, '\n')), "args: %d, message '%s'", s1, e1);
  if (s1 == LOWP_OK && !h1) {
    char *qt = cJSON_PrintUnformatted(q1);
    lowp_tol_query_t q;
    lowp_tol_t t, t2;
    int st;
    if (!qt) abort();
    st = lowp_capi_tol_query(&q, qt, e1, sizeof e1);
    FUZZ_CHECK(st == LOWP_OK || (e1[0] && !strchr(e1, '\n')), "query: %d, message '%s'", st, e1);
    if (!st) {
      st = lowp_tol(&t, &q, e1, sizeof e1);
      FUZZ_CHECK(st == LOWP_OK || (e1[0] && !strchr(e1, '\n')), "tol: %d, message '%s'", st, e1);
      if (!st) {
        cJSON *o = lowp_tol_json(&t, &q);
        char *ot = o ? cJSON_PrintUnformatted(o) : NULL;
        FUZZ_CHECK(sane(&t), "k %zu: rtol %g atol %g bound %g bound_acc %g same-sign %g vacuous %d",
                   q.k, t.rtol, t.atol, t.bound, t.bound_acc, t.rtol_same_sign, t.vacuous);
        FUZZ_CHECK(ot != NULL, "lowp_tol_json did not print");
        cJSON_free(ot);
        cJSON_Delete(o);
        if (q.k < ((size_t)1 << 39)) {
          size_t ks[2] = {q.k + 1, 2 * q.k};
          int w;
          for (w = 0; w < 2; w++)
            if (at_k(&t2, &q, ks[w])) {
              FUZZ_CHECK(sane(&t2), "k %zu: not sane", ks[w]);
              FUZZ_CHECK(!t.vacuous || t2.vacuous, "vacuous at k %zu, not at %zu", q.k, ks[w]);
              FUZZ_CHECK(t.vacuous || t2.vacuous || (t2.rtol >= t.rtol && t2.atol >= t.atol),
                         "tolerance fell from k %zu to %zu: rtol %g -> %g, atol %g -> %g", q.k,
                         ks[w], t.rtol, t2.rtol, t.atol, t2.atol);
            }
        }
      }
    }
    cJSON_free(qt);
  }
  cJSON_Delete(q1);
  cJSON_Delete(q2);
  free(text);
  return 0;
}
