/* round_cases -- what the fast rounding paths' tests share: the policies, the rounding modes
   with a fast path, and the formats a path claims (header only; tround_fast.c, tround_fast64.c) */
#ifndef LOWP_TEST_ROUND_CASES_H
#define LOWP_TEST_ROUND_CASES_H

#include "testutil.h"

#include "format/format.h"
#include "status.h"

#include <stdio.h>
#include <stdlib.h>
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

/* one compiled copy (isa as lowp_round_fast_values_f32_isa's, NULL the
   best; "public": the public entry) of a values path, with the element type
   behind void pointers; returns its status */
typedef int (*round_values_fn)(void *y, const void *x, size_t n, const lowp_format_t *f,
                               lowp_rounding_t rnd, const char *isa);

/* the first element of a and b (n elements of sz bytes) that differs, or n */
static size_t round_first_diff(const void *a, const void *b, size_t n, size_t sz) {
  size_t i = 0;
  while (i < n && !memcmp((const char *)a + i * sz, (const char *)b + i * sz, sz)) i++;
  return i;
}

/*
 * Arrays long enough for the streaming stores (n elements of sz bytes,
 * LOWP_ROUND_STREAM_BYTES and more): in every mode (f without -0: rne and
 * rtz), fn on each copy in isas, bit for bit, against the best copy run on
 * pieces of 2^16 elements (plain stores; the other checks of the caller
 * hold it to the reference loop, which on 10^6 elements per mode would be
 * most of the test's time), once into y one element past malloc's
 * alignment (a head before the first vector boundary) and once in place at
 * another offset. y is filled with a pattern first, so nothing is left from
 * the copy before.
 */
static void round_check_stream(const char *what, const lowp_format_t *f, round_values_fn fn,
                               const void *x, size_t n, size_t sz, const char *const *isas,
                               size_t nisas) {
  const size_t piece = (size_t)1 << 16;
  char *yr = malloc(n * sz), *ybuf = malloc((n + 16) * sz), *zbuf = malloc((n + 16) * sz);
  char *y = ybuf + sz, *z = zbuf + 5 * sz;
  size_t m, k, bad, off;
  if (!yr || !ybuf || !zbuf) { printf("out of memory\n"); exit(1); }
  for (m = 0; m < NMODES; m++) {
    if (f->nan == LOWP_NAN_NEGZERO && modes[m] != LOWP_RND_NE && modes[m] != LOWP_RND_TZ)
      continue;
    for (off = 0; off < n; off += piece)
      (void)fn(yr + off * sz, (const char *)x + off * sz, n - off < piece ? n - off : piece, f,
               modes[m], NULL);
    for (k = 0; k < nisas; k++) {
      int st;
      memset(y, 0x5a, n * sz);
      st = fn(y, x, n, f, modes[m], isas[k]);
      if (st == LOWP_EUNSUPPORTED) continue; /* this CPU cannot run that copy */
      bad = round_first_diff(y, yr, n, sz);
      lowp_test_check(st == LOWP_OK && bad == n,
                      "%s stream: %s %s [%s], n = %zu: element %zu differs",
                      what, f->name, lowp_rounding_name(modes[m]), isas[k], n, bad);
      memcpy(z, x, n * sz);
      st = fn(z, z, n, f, modes[m], isas[k]);
      bad = round_first_diff(z, yr, n, sz);
      lowp_test_check(st == LOWP_OK && bad == n,
                      "%s stream in place: %s %s [%s]: element %zu differs",
                      what, f->name, lowp_rounding_name(modes[m]), isas[k], bad);
    }
  }
  free(yr), free(ybuf), free(zbuf);
}

#endif
