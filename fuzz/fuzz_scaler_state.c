/* fuzz_scaler_state -- libFuzzer harness of lowp_scaler_load_json */

/*
 * Input: a JSON text (an embedded NUL ends it), loaded over the PyTorch
 * default state of the policy picked by the input's length. Properties:
 *   - on failure the state is unchanged, and there is a message;
 *   - an accepted state is usable: scale >= 0 (inf allowed), factors > 0,
 *     1 <= interval <= INT32_MAX, and lowp_scaler_update works on it;
 *   - written (lowp_scaler_save_json) and read back over another default,
 *     it is identical, field for field and bit for bit, and writing that
 *     again gives the same text.
 */

#include "fuzz.h"

#include "amp/scaler.h"
#include "status.h"

#include <math.h>

static void same_state(const lowp_scaler_t *a, const lowp_scaler_t *b, const char *text) {
  FUZZ_CHECK(a->policy == b->policy && fuzz_same_bits(a->scale, b->scale) &&
                 a->tracker == b->tracker && fuzz_same_bits(a->growth, b->growth) &&
                 fuzz_same_bits(a->backoff, b->backoff) && a->interval == b->interval &&
                 a->steps == b->steps && a->skipped == b->skipped,
             "state differs after a save and a load of: %s", text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lowp_scaler_t s, before, back, upd;
  lowp_scaler_policy_t pol = (lowp_scaler_policy_t)(size % LOWP_SCALER_POLICY_COUNT);
  char err[512], *t, *out = NULL, *out2 = NULL;
  int st;
  if (size > 8192) return 0;
  t = fuzz_cstr(data, size);
  if (lowp_scaler_init_default(&s, pol) != LOWP_OK) abort();
  before = s;
  st = lowp_scaler_load_json(&s, t, err, sizeof err);
  if (st != LOWP_OK) {
    same_state(&s, &before, "(failed load: state must be unchanged)");
    FUZZ_CHECK(err[0], "no message on failure");
    free(t);
    return 0;
  }
  /* 0 and inf are states a run reaches (backoff underflows an fp32 scale to 0,
     growth overflows it to inf, as in PyTorch, which does not clamp) and that
     --state-out saves: they must load back, NaN and negatives must not */
  FUZZ_CHECK(!isnan(s.scale) && s.scale >= 0, "accepted scale %a", s.scale);
  FUZZ_CHECK(isfinite(s.growth) && s.growth > 0 && isfinite(s.backoff) && s.backoff > 0,
             "accepted factors %a %a", s.growth, s.backoff);
  FUZZ_CHECK(s.interval >= 1 && s.interval <= 2147483647LL, "accepted interval %lld",
             s.interval);
  FUZZ_CHECK((unsigned)s.policy < LOWP_SCALER_POLICY_COUNT, "policy %d", (int)s.policy);
  upd = s;
  FUZZ_CHECK(lowp_scaler_update(&upd, 0, NULL) == LOWP_OK, "update of an accepted state");
  upd = s;
  FUZZ_CHECK(lowp_scaler_update(&upd, 1, NULL) == LOWP_OK, "update of an accepted state");

  FUZZ_CHECK(lowp_scaler_save_json(&s, &out) == LOWP_OK, "save");
  if (lowp_scaler_init_default(&back, (lowp_scaler_policy_t)((pol + 1) % LOWP_SCALER_POLICY_COUNT)) != LOWP_OK)
    abort();
  st = lowp_scaler_load_json(&back, out, err, sizeof err);
  FUZZ_CHECK(st == LOWP_OK, "saved state rejected (%s): %s", err, out);
  same_state(&s, &back, out);
  FUZZ_CHECK(lowp_scaler_save_json(&back, &out2) == LOWP_OK, "save");
  FUZZ_CHECK(!strcmp(out, out2), "saved twice, two texts:\n%s\n%s", out, out2);
  free(out);
  free(out2);
  free(t);
  return 0;
}
