/* lowp_exp_tc_extrapolated -- see extrapolation.h */

#include "extrapolation.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* tests/data/tensor-core-vectors/README.md: the products per captured row
   (one tensor-core instruction), by GPU and input format family */
typedef struct {
  const char *gpu;
  int k16, kbf, ktf, kf8; /* fp16, bf16, tf32, fp8 (e4m3/e5m2); 0: not captured */
  int f8_czero;           /* fp8 rows captured as D = A B + 0 */
} captured_t;

static const captured_t table[] = {
    {"v100", 4, 0, 0, 0, 0},   {"a100", 8, 8, 4, 0, 0},   {"a2", 8, 8, 4, 0, 0},
    {"ada", 8, 8, 4, 32, 0},   {"h100", 16, 16, 4, 32, 1}, {"b200", 16, 16, 4, 32, 0},
};

static int same_ci(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
  return !*a && !*b;
}

int lowp_exp_tc_extrapolated(char *buf, size_t len, const char *gpu, const lowp_format_t *f, size_t k,
                             size_t *k_captured, int *c_zero) {
  const captured_t *c = NULL;
  size_t i, K = 0;
  int cz = 0, f8 = f->precision <= 4, ext;
  char g[32];
  snprintf(g, sizeof g, "%.*s", (int)strcspn(gpu, ",:"), gpu); /* "h100,promote=128" -> "h100" */
  for (i = 0; i < sizeof table / sizeof table[0]; i++)
    if (same_ci(table[i].gpu, g)) c = &table[i];
  if (c) {
    if (f8) { K = (size_t)c->kf8; cz = c->f8_czero; }
    else if (f->precision == 11 && f->emax == 15) K = (size_t)c->k16;
    else if (f->precision == 8) K = (size_t)c->kbf;
    else if (f->precision == 11) K = (size_t)c->ktf;
  }
  if (k_captured) *k_captured = K;
  if (c_zero) *c_zero = cz;
  ext = K == 0 || k > K;
  if (buf && len) {
    if (!ext) buf[0] = '\0';
    else if (K == 0)
      snprintf(buf, len, "model extrapolation: no %s vectors of %s were captured", f->name, g);
    else
      snprintf(buf, len, "model extrapolation: the %s model reproduces captured %s vectors of one instruction (k = %zu "
               "products%s); k = %zu chains %zu instructions, %s", g, f->name, K, cz ? ", C = 0 only" : "", k,
               (k + K - 1) / K, cz ? "each after the first adding a running sum C != 0, which was never captured"
                                   : "in an order no capture shows (each instruction's C was captured, the chain not)");
  }
  return ext;
}
