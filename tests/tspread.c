/* lowp_spread: every piece once, workers numbered within the width, the width's rules */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "spread.h"
#include "testutil.h"

typedef struct {
  atomic_int *done;   /* per piece: times run */
  atomic_int bad_w;   /* a worker number outside [0, width) */
  atomic_int per_w[8];
  int width;
} ctx_t;

static void piece(void *p, size_t i, int w) {
  ctx_t *c = p;
  atomic_fetch_add(&c->done[i], 1);
  if (w < 0 || w >= c->width) atomic_store(&c->bad_w, 1);
  else atomic_fetch_add(&c->per_w[w], 1);
}

int main(void) {
  static const size_t ns[] = {0, 1, 2, 3, 1000};
  size_t k, i;
  int t;
  lowp_test_start("tspread");
  lowp_test_check(lowp_spread_width(5, 3) == 3 && lowp_spread_width(2, 8) == 2 && lowp_spread_width(0, 4) == 1 &&
                      lowp_spread_width(1000, 1000) == 64 && lowp_spread_width(1000, 0) >= 1,
                  "width: the threads asked, at most n and 64, at least 1");
  for (k = 0; k < sizeof ns / sizeof ns[0]; k++)
    for (t = 0; t <= 4; t++) {
      ctx_t c;
      int ok = 1, sum = 0, w;
      memset(&c, 0, sizeof c);
      c.done = calloc(ns[k] + 1, sizeof *c.done);
      c.width = lowp_spread_width(ns[k], t);
      if (c.width > 8) c.width = 8;
      lowp_spread(ns[k], c.width, piece, &c);
      for (i = 0; i < ns[k]; i++) ok &= atomic_load(&c.done[i]) == 1;
      for (w = 0; w < 8; w++) sum += atomic_load(&c.per_w[w]);
      lowp_test_check(ok && !atomic_load(&c.bad_w) && sum == (int)ns[k],
                      "n = %zu on %d threads: every piece once, workers within the width", ns[k], c.width);
      free(c.done);
    }
  return lowp_test_end();
}
