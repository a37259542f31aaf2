/* fuzz_capi -- libFuzzer harness of the C API the Python binding calls (lib/check/capi.c) */

/*
 * Input: the JSON description of a check, as python/lowp writes it for
 * lowp.check (op, in, out, dims, shapes, out_shapes, ref_shapes, rules, eps,
 * reduction, prob, order, acc, model, subject, reference, absent). The
 * harness plays the Python side: it gives each array exactly the number of
 * elements its claimed shape holds (malloc'd to that size, so ASan catches
 * a read past it), NULL where a shape is null or missing, and small values
 * exact in every format. Properties:
 *   - lowp_capi_shapes (the validator Python calls before any work) and
 *     lowp_capi_check are functions of their input: twice, the same status
 *     and message;
 *   - a refusal has a message of one line;
 *   - what lowp_capi_shapes refuses, lowp_capi_check refuses too (the
 *     validation before the work is not weaker than the work's);
 *   - an accepted check's result is JSON with a verdict, and no rule passes
 *     with a limit that is not a finite number unless it is vacuous (every
 *     rule fails closed).
 */

#include "fuzz.h"

#include <cjson/cJSON.h>
#include <math.h>

#include "check/capi.h"
#include "status.h"

enum { MAXN = 4096, MAXIO = 4 };

/* the element count of a claimed shape, or 0 (too large, not a shape) */
static size_t count_of(const cJSON *s) {
  const cJSON *x;
  double c = 1;
  if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) > 4) return 0;
  cJSON_ArrayForEach(x, s) {
    if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) || x->valuedouble != floor(x->valuedouble))
      return 0;
    c *= x->valuedouble;
  }
  return c >= 1 && c <= MAXN ? (size_t)c : 0;
}

/* arrays for a list of claimed shapes: exactly sized, NULL where null */
static int arrays(double *a[MAXIO], const cJSON *list) {
  int i;
  for (i = 0; i < MAXIO && i < cJSON_GetArraySize(list); i++) {
    const cJSON *s = cJSON_GetArrayItem(list, i);
    size_t n, k;
    if (cJSON_IsNull(s)) continue;
    if (!(n = count_of(s))) return 0;
    if (!(a[i] = malloc(n * sizeof(double)))) abort();
    for (k = 0; k < n; k++) a[i][k] = (double)((int)(k % 7) - 3); /* exact everywhere */
  }
  return 1;
}

static void free_arrays(double *a[MAXIO]) {
  int i;
  for (i = 0; i < MAXIO; i++) free(a[i]);
}

/* every rule of an accepted result: pass only with a finite limit, or vacuous */
static void fails_closed(const char *js) {
  cJSON *r = cJSON_Parse(js), *rules, *it;
  FUZZ_CHECK(r && cJSON_IsString(cJSON_GetObjectItem(r, "verdict")), "result without a verdict");
  rules = cJSON_GetObjectItem(r, "rules");
  cJSON_ArrayForEach(it, rules) {
    const cJSON *pass = cJSON_GetObjectItem(it, "pass"), *lim = cJSON_GetObjectItem(it, "limit");
    const cJSON *vac = cJSON_GetObjectItem(it, "vacuous");
    if (cJSON_IsTrue(pass) && !cJSON_IsTrue(vac))
      FUZZ_CHECK(cJSON_IsNumber(lim) && isfinite(lim->valuedouble),
                 "a rule passed with limit %s", cJSON_IsString(lim) ? lim->valuestring : "?");
  }
  cJSON_Delete(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *desc, e1[1024], e2[1024], *j1 = NULL, *j2 = NULL;
  int s1, s2, c1, c2, ok;
  cJSON *d;
  double *in[MAXIO], *out[MAXIO], *ref[MAXIO];
  if (size > 4096) return 0;
  desc = fuzz_cstr(data, size);
  e1[0] = e2[0] = '\0';
  s1 = lowp_capi_shapes(&j1, desc, e1, sizeof e1);
  s2 = lowp_capi_shapes(&j2, desc, e2, sizeof e2);
  FUZZ_CHECK(s1 == s2 && !strcmp(e1, e2), "shapes twice: %d '%s', %d '%s'", s1, e1, s2, e2);
  FUZZ_CHECK(s1 == LOWP_OK ? j1 != NULL : (e1[0] && !strchr(e1, '\n')),
             "shapes: status %d, message '%s'", s1, e1);
  lowp_capi_free(j1);
  lowp_capi_free(j2);
  memset(in, 0, sizeof in);
  memset(out, 0, sizeof out);
  memset(ref, 0, sizeof ref);
  d = cJSON_Parse(desc);
  ok = cJSON_IsObject(d) && arrays(in, cJSON_GetObjectItem(d, "shapes")) &&
       arrays(out, cJSON_GetObjectItem(d, "out_shapes")) &&
       arrays(ref, cJSON_GetObjectItem(d, "ref_shapes"));
  if (ok && in[0]) {
    int with_ref = cJSON_GetObjectItem(d, "ref_shapes") != NULL;
    const double *const *ip = (const double *const *)in, *const *op = (const double *const *)out;
    const double *const *rp = with_ref ? (const double *const *)ref : NULL;
    j1 = j2 = NULL;
    c1 = lowp_capi_check(&j1, desc, ip, op, rp, e1, sizeof e1);
    c2 = lowp_capi_check(&j2, desc, ip, op, rp, e2, sizeof e2);
    FUZZ_CHECK(c1 == c2 && (c1 != LOWP_OK || !strcmp(j1, j2)) && (c1 == LOWP_OK || !strcmp(e1, e2)),
               "check twice: %d, %d", c1, c2);
    FUZZ_CHECK(c1 == LOWP_OK ? j1 != NULL : (e1[0] && !strchr(e1, '\n')),
               "check: status %d, message '%s'", c1, e1);
    FUZZ_CHECK(s1 == LOWP_OK || c1 != LOWP_OK, "lowp_capi_shapes refused (%s), check accepted",
               e2);
    if (c1 == LOWP_OK) fails_closed(j1);
    lowp_capi_free(j1);
    lowp_capi_free(j2);
  }
  free_arrays(in);
  free_arrays(out);
  free_arrays(ref);
  cJSON_Delete(d);
  free(desc);
  return 0;
}
