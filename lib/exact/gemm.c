/* lowp_exact_gemm -- correctly rounded matrix product: the dispatcher */

/*
 * Checks the arguments, then tries the sliced (Ozaki) path of ozaki.c, which
 * itself hands the outputs it cannot cover to the accumulator path; when the
 * cost model prefers the accumulator everywhere, runs the accumulator path
 * of gemm_bins.c on the whole product. Both paths are exact and round each
 * output once, so the result is the same either way (docs/exact-gemm.md).
 * Arrows run one way: gemm.c -> ozaki.c -> gemm_bins.c, gemm.c -> gemm_bins.c.
 */

#include "exact/exact.h"

#include <string.h>

#include "exact/gemm_bins.h"
#include "exact/internal.h"
#include "exact/ozaki.h"

/* ----------------------------------------------------------- public API */

int lowp_exact_gemm(double *c, const double *a, const double *b, const double *c0,
                    size_t m, size_t n, size_t k, const lowp_format_t *f,
                    const lowp_policy_t *pol, lowp_rounding_t rnd) {
  return lowp_exact_gemm_ex(c, a, b, c0, m, n, k, f, pol, rnd, NULL, NULL);
}

int lowp_exact_gemm_ex(double *c, const double *a, const double *b, const double *c0,
                       size_t m, size_t n, size_t k, const lowp_format_t *f,
                       const lowp_policy_t *pol, lowp_rounding_t rnd,
                       const lowp_gemm_opts_t *opt, lowp_gemm_stats_t *stats) {
  lowp_gemm_opts_t o;
  lowp__progress_t prog;
  int st = lowp__exact_check(f, rnd);
  if (stats) memset(stats, 0, sizeof *stats);
  if (st) return st;
  if (m == 0 || n == 0) return LOWP_OK;
  if (!c || (k && (!a || !b))) return LOWP_EINVAL;
  if (lowp__mul_overflows(m, k) || lowp__mul_overflows(k, n) || lowp__mul_overflows(m, n) ||
      lowp__mul_overflows(k * n, sizeof(double)) || lowp__mul_overflows(m * n, sizeof(double)))
    return LOWP_ENOMEM;
  if (opt) o = *opt;
  else memset(&o, 0, sizeof o);
  if ((unsigned)o.method > LOWP_GEMM_SLICED) return LOWP_EINVAL;
  prog.cb = o.progress;
  prog.ctx = o.progress_ctx;
  prog.lo = 0.0;
  prog.hi = 1.0;
  if (o.method != LOWP_GEMM_ACC && k > 0) {
    st = lowp__exact_gemm_sliced(c, a, b, c0, m, n, k, f, pol, rnd, &o,
                                 o.progress ? &prog : NULL, stats);
    if (st != LOWP__NOT_USED) return st;
  }
  if (stats) stats->fallback_outputs = m * n;
  return lowp__exact_gemm_acc(c, a, b, c0, m, n, k, NULL, m, NULL, n, f, pol, rnd,
                              o.progress ? &prog : NULL);
}
