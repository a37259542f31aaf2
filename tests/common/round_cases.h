/* round_cases -- what the fast rounding paths' tests share: the policies, the rounding modes
   with a fast path, and the formats a path claims (header only; tround_fast.c, tround_fast64.c) */
#ifndef LOWP_TEST_ROUND_CASES_H
#define LOWP_TEST_ROUND_CASES_H

#include "testutil.h"

#include "format/format.h"

#include <string.h>

typedef struct {
  const char *name;
  lowp_policy_t pol;
} policy_case;

static const lowp_rounding_t modes[] = {LOWP_RND_NE, LOWP_RND_NA, LOWP_RND_TZ,
                                        LOWP_RND_UP, LOWP_RND_DN, LOWP_RND_TO};
#define NMODES (sizeof modes / sizeof modes[0])

/* every policy switch the fast paths claim to handle, alone and combined
   (9 of them); returns how many were written */
static size_t round_policies(policy_case *pc) {
  size_t n = 0;
  lowp_policy_t p;
  memset(&p, 0, sizeof p);
  pc[n].name = "default", pc[n++].pol = p;
  p.overflow = LOWP_OVF_SAT;
  pc[n].name = "satfinite", pc[n++].pol = p;
  p.overflow = LOWP_OVF_SAT_KEEPINF;
  pc[n].name = "sat-keepinf", pc[n++].pol = p;
  p.overflow = LOWP_OVF_NAN;
  pc[n].name = "ovf-nan", pc[n++].pol = p;
  memset(&p, 0, sizeof p), p.nan_sign = LOWP_NANSIGN_POSITIVE;
  pc[n].name = "nan-positive", pc[n++].pol = p;
  memset(&p, 0, sizeof p), p.nan_map = LOWP_NANMAP_ZERO;
  pc[n].name = "nan-to-zero", pc[n++].pol = p;
  memset(&p, 0, sizeof p), p.ftz = 1;
  pc[n].name = "ftz", pc[n++].pol = p;
  memset(&p, 0, sizeof p), p.daz = 1;
  pc[n].name = "daz", pc[n++].pol = p;
  p.ftz = 1, p.overflow = LOWP_OVF_SAT, p.nan_sign = LOWP_NANSIGN_POSITIVE;
  pc[n].name = "ftz+daz+sat+nan-positive", pc[n++].pol = p;
  return n;
}

/* the built-in formats applies() claims in rtz, then the custom specs
   (named by their text); at most max */
static size_t round_fast_formats(lowp_format_t *out, size_t max,
                                 int (*applies)(const lowp_format_t *, const lowp_policy_t *,
                                                lowp_rounding_t),
                                 const char *const *specs, size_t nspecs) {
  size_t i, n = 0;
  for (i = 0; i < lowp_format_count() && n < max; i++)
    if (applies(lowp_format_at(i), NULL, LOWP_RND_TZ)) out[n++] = *lowp_format_at(i);
  for (i = 0; i < nspecs && n < max; i++) {
    char err[256];
    if (!lowp_test_check(lowp_format_parse(&out[n], specs[i], err, sizeof err) == 0,
                         "custom spec %s: %s", specs[i], err))
      continue;
    out[n].name = specs[i];
    n++;
  }
  return n;
}

#endif
