/* fuzz_accum -- libFuzzer harness of lowp_accum_parse (accumulation-order specs) */

/*
 * Input: an accumulation model ("blocked:32,acc=fp16,rnd=rtz"; an embedded
 * NUL ends it). Properties of every model lowp accepts:
 *   - it validates (lowp_accum_validate), and its format validates;
 *   - printed by lowp_accum_str, the text parses to the same model (order,
 *     block, rounding, fma, and the accumulation format's descriptor);
 *     printing that gives the same text;
 *   - it computes: a sum and a dot product of a few values are LOWP_OK and
 *     the sum of zeros is zero.
 */

#include "fuzz.h"

#include "format/format.h"
#include "model/accum.h"
#include "status.h"

static void same_model(const lowp_accum_t *a, const lowp_accum_t *b, const char *s) {
  const lowp_format_t *f = &a->acc, *g = &b->acc;
  FUZZ_CHECK(a->order == b->order && a->rnd == b->rnd && a->block == b->block &&
                 a->fma == b->fma,
             "'%s' parses to another model (order %d/%d rnd %d/%d block %zu/%zu fma %d/%d)", s,
             (int)b->order, (int)a->order, (int)b->rnd, (int)a->rnd, b->block, a->block, b->fma,
             a->fma);
  FUZZ_CHECK(f->precision == g->precision && f->emin == g->emin && f->emax == g->emax &&
                 f->subnormals == g->subnormals && f->inf == g->inf && f->nan == g->nan &&
                 f->has_sign == g->has_sign && f->has_zero == g->has_zero && f->ebits == g->ebits,
             "'%s' parses to another accumulation format (p %d/%d emin %d/%d emax %d/%d)", s,
             g->precision, f->precision, g->emin, f->emin, g->emax, f->emax);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lowp_accum_t m, m2;
  char err[512], s1[512], s2[512], *t;
  double x[5] = {1.0, 0.5, -0.25, 3.0, 0.125}, zeros[5] = {0}, r;
  int st;
  if (size > 1024) return 0;
  t = fuzz_cstr(data, size);
  memset(&m, 0, sizeof m);
  st = lowp_accum_parse(&m, t, err, sizeof err);
  if (st != LOWP_OK) {
    FUZZ_CHECK(err[0], "no message on failure");
    free(t);
    return 0;
  }
  st = lowp_accum_validate(&m, err, sizeof err);
  FUZZ_CHECK(st == LOWP_OK, "'%s' accepted but does not validate: %s", t, err);
  FUZZ_CHECK(lowp_format_validate(&m.acc, err, sizeof err) == LOWP_OK,
             "'%s': accumulation format invalid: %s", t, err);

  lowp_accum_str(s1, sizeof s1, &m);
  memset(&m2, 0, sizeof m2);
  st = lowp_accum_parse(&m2, s1, err, sizeof err);
  FUZZ_CHECK(st == LOWP_OK, "'%s' printed as '%s', which is rejected: %s", t, s1, err);
  same_model(&m, &m2, s1);
  lowp_accum_str(s2, sizeof s2, &m2);
  FUZZ_CHECK(!strcmp(s1, s2), "printed twice, two texts: '%s' '%s'", s1, s2);

  FUZZ_CHECK(lowp_accum_sum(&r, x, 5, &m) == LOWP_OK, "sum on '%s'", t);
  FUZZ_CHECK(lowp_accum_dot(&r, x, 1, x, 1, 5, &m) == LOWP_OK, "dot on '%s'", t);
  FUZZ_CHECK(lowp_accum_sum(&r, zeros, 5, &m) == LOWP_OK && r == 0.0, "sum of zeros %a", r);
  free(t);
  return 0;
}
