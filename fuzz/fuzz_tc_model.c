/* fuzz_tc_model -- libFuzzer harness of lowp_tc_model_get (tensor-core model specs) */

/*
 * Input: one byte choosing the input format (fp16, bf16, tf32, e4m3, e5m2,
 * by value mod 5) and the output (fp32 or fp16, by bit 7), then the spec
 * ("h100,promote=128", "b=16,F=25,align=rtz"; an embedded NUL ends it).
 * Properties of every model lowp accepts:
 *   - its block FMA validates (lowp_bfma_validate), promote is a multiple
 *     of b, and the name is a NUL-terminated string;
 *   - printed by lowp_tc_model_str, the text parses (as parameters alone)
 *     to the same parameters; printing that gives the same text;
 *   - it computes: a short dot product of ones on it is LOWP_OK.
 */

#include "fuzz.h"

#include "format/format.h"
#include "model/tc.h"
#include "status.h"

static void same_model(const lowp_tc_model_t *a, const lowp_tc_model_t *b, const char *s) {
  const lowp_bfma_t *p = &a->bfma, *q = &b->bfma;
  FUZZ_CHECK(p->b == q->b && p->F == q->F && p->align == q->align && p->sticky == q->sticky &&
                 p->out_rnd == q->out_rnd && p->out16_rnd == q->out16_rnd &&
                 p->out_frac == q->out_frac && p->ovf_inf == q->ovf_inf &&
                 p->late_c == q->late_c && p->interleave == q->interleave && p->c_rnd == q->c_rnd &&
                 p->zsum_pos == q->zsum_pos && p->zrnd_pos == q->zrnd_pos && p->c0_emin == q->c0_emin &&
                 a->promote == b->promote,
             "'%s' parses to another model", s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const lowp_format_t *const ins[5] = {&LOWP_FMT_FP16, &LOWP_FMT_BF16, &LOWP_FMT_TF32,
                                              &LOWP_FMT_E4M3, &LOWP_FMT_E5M2};
  const lowp_format_t *in, *out;
  lowp_tc_model_t m, m2;
  char err[512], s1[512], s2[512], *t;
  double ones[64], d;
  int st, i;
  if (size < 1 || size > 1024) return 0;
  in = ins[data[0] % 5];
  out = data[0] & 0x80 ? &LOWP_FMT_FP16 : &LOWP_FMT_FP32;
  t = fuzz_cstr(data + 1, size - 1);
  memset(&m, 0, sizeof m);
  st = lowp_tc_model_get(&m, t, in, out, err, sizeof err);
  if (st != LOWP_OK) {
    FUZZ_CHECK(err[0], "no message on failure");
    free(t);
    return 0;
  }
  FUZZ_CHECK(memchr(m.name, '\0', sizeof m.name) != NULL, "name not terminated");
  st = lowp_bfma_validate(&m.bfma, err, sizeof err);
  FUZZ_CHECK(st == LOWP_OK, "'%s' accepted but its block FMA is invalid: %s", t, err);
  FUZZ_CHECK(m.bfma.b > 0 && m.promote % (size_t)m.bfma.b == 0,
             "promote %zu not a multiple of b %d", m.promote, m.bfma.b);

  lowp_tc_model_str(s1, sizeof s1, &m);
  memset(&m2, 0, sizeof m2);
  st = lowp_tc_model_get(&m2, s1, in, out, err, sizeof err);
  FUZZ_CHECK(st == LOWP_OK, "printed model '%s' rejected: %s", s1, err);
  same_model(&m, &m2, s1);
  lowp_tc_model_str(s2, sizeof s2, &m2);
  FUZZ_CHECK(!strcmp(s1, s2), "printed twice, two texts: '%s' '%s'", s1, s2);

  for (i = 0; i < 64; i++) ones[i] = 1.0;
  st = lowp_tc_dot(&d, ones, 1, ones, 1, 64, 0.0, &m, in, out);
  FUZZ_CHECK(st == LOWP_OK, "a dot product of ones on '%s': %s", t, lowp_status_str(st));
  free(t);
  return 0;
}
