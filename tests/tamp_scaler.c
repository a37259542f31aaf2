/* tamp_scaler -- lowp_scaler against PyTorch's own grad-scaling test scenarios, and the variants */

/*
 * Order (docs/style.md B10): special values -> PyTorch's test scenarios replayed
 * (each with its provenance) -> hand-derived semantics cases -> variants ->
 * property sweep -> state save/load round trips -> bad input.
 * Run: ctest -R tamp_scaler  (or build-e/tamp_scaler)
 */

#include "testutil.h"

#include "amp/scaler.h"
#include "rng/rng.h"
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ private helpers */

/* Field-wise equality (memcmp would compare padding bytes). */
static int same(const lowp_scaler_t *a, const lowp_scaler_t *b) {
  return a->policy == b->policy && a->tracker == b->tracker && a->growth == b->growth &&
         a->backoff == b->backoff && a->interval == b->interval && a->steps == b->steps &&
         a->skipped == b->skipped &&
         (a->scale == b->scale || (isnan(a->scale) && isnan(b->scale)));
}

/* Replay a string of 'o' (ok) / 'i' (inf) steps. */
static void replay(lowp_scaler_t *s, const char *ev) {
  for (; *ev; ev++) lowp_scaler_update(s, *ev == 'i', NULL);
}

static void check_state(const char *what, const lowp_scaler_t *s, double scale, long long tracker) {
  char a[64], b[64];
  lowp_test_check(s->scale == scale && s->tracker == tracker,
                  "%s: scale %s tracker %lld, expected %s tracker %lld", what,
                  lowp_test_hex(s->scale, a, sizeof a), s->tracker,
                  lowp_test_hex(scale, b, sizeof b), tracker);
}

static lowp_scaler_t make(lowp_scaler_policy_t p, double init, double g, double b, long long iv) {
  lowp_scaler_t s;
  int st = lowp_scaler_init(&s, p, init, g, b, iv);
  lowp_test_check(st == LOWP_OK, "init(%s, %g, %g, %g, %lld) -> %d", lowp_scaler_policy_name(p),
                  init, g, b, iv, st);
  return s;
}

/* ------------------------------------------- PyTorch's scenarios, replayed */

static void pytorch_scenarios(void) {
  lowp_scaler_t s;
  int k;

  /* test/test_torch.py (formerly test/test_cuda.py) test_grad_scaling_update_scale:
     scale 4.0, growth 2.0, backoff 0.25, growth_interval 2; two unskipped
     iterations -> tracker 1 / scale 4, then tracker 0 / scale 8; one skipped
     -> tracker 0 / scale 2. */
  s = make(LOWP_SCALER_PYTORCH, 4.0, 2.0, 0.25, 2);
  replay(&s, "o");
  check_state("update_scale step 1", &s, 4.0, 1);
  replay(&s, "o");
  check_state("update_scale step 2", &s, 8.0, 0);
  replay(&s, "i");
  check_state("update_scale skipped", &s, 2.0, 0);

  /* test_cuda.py _run_scaling_case (used by test_grad_scaling_autocast,
     _clipping, _clipping_separate_unscale, _penalty, and the same arithmetic
     in test_grad_scaling_multiple): GradScaler(init_scale=128.,
     growth_factor=2.0, growth_interval=1), 4 iterations with skip_iter = 2
     getting an inf gradient; the test asserts scale == 128 * growth^3 *
     backoff^1 (unskipped=3, skipped=1). */
  s = make(LOWP_SCALER_PYTORCH, 128.0, 2.0, 0.5, 1);
  replay(&s, "ooio");
  check_state("_run_scaling_case (3 unskipped, 1 skipped)", &s, 128.0 * 8 * 0.5, 0);
  lowp_test_check(s.skipped == 1 && s.steps == 4, "skipped %lld of %lld", s.skipped, s.steps);
  /* test_grad_scaling_accumulation: iters_to_accumulate = 2 over 4 batches:
     2 scaler updates, none skipped -> 128 * 2^2 */
  s = make(LOWP_SCALER_PYTORCH, 128.0, 2.0, 0.5, 1);
  replay(&s, "oo");
  check_state("accumulation (2 unskipped)", &s, 512.0, 0);

  /* test_grad_scale_will_not_overflow: init_scale=1e38, growth_factor=2**4,
     growth_interval=1: the scale must stay finite after an update. 1e38 is
     first rounded to fp32 (torch.full(..., dtype=float32)); 16 * that would
     overflow fp32, so growth is refused and the tracker still resets. */
  s = make(LOWP_SCALER_PYTORCH, 1e38, 16.0, 0.5, 1);
  replay(&s, "o");
  check_state("will_not_overflow (ok step)", &s, (double)(float)1e38, 0);
  lowp_test_check(isfinite(s.scale), "scale overflowed to %g", s.scale);
  s = make(LOWP_SCALER_PYTORCH, 1e38, 16.0, 0.5, 1);
  replay(&s, "i");
  check_state("will_not_overflow (inf step)", &s, (double)(float)((double)(float)1e38 * 0.5), 0);

  /* test_grad_scaling_scale: GradScaler(init_scale=2.); scale(4.0) == 8.0 */
  s = make(LOWP_SCALER_PYTORCH, 2.0, 2.0, 0.5, 2000);
  lowp_test_check(lowp_scaler_scale_f32(&s, 4.0f) == 8.0f, "scale(4) = %g", (double)lowp_scaler_scale_f32(&s, 4.0f));

  /* test_grad_scaling_unscale: inv_scale 0.25 (scale 4), square grads of 4.0
     -> all 1.0; an inf or a nan anywhere (here element 2*20+2) sets found_inf */
  {
    float g[400];
    int found, i, bad;
    const float specials[3] = {INFINITY, NAN, -INFINITY};
    s = make(LOWP_SCALER_PYTORCH, 4.0, 2.0, 0.5, 2000);
    lowp_test_check(lowp_scaler_inv_scale(&s) == 0.25, "inv_scale(4) = %g", lowp_scaler_inv_scale(&s));
    for (i = 0; i < 400; i++) g[i] = 4.0f;
    lowp_scaler_unscale_f32(&s, g, 400, &found);
    for (i = 0, bad = 0; i < 400; i++) bad += g[i] != 1.0f;
    lowp_test_check(!found && !bad, "unscale of finite grads: found_inf %d, %d wrong", found, bad);
    for (k = 0; k < 3; k++) {
      for (i = 0; i < 400; i++) g[i] = 4.0f;
      g[2 * 20 + 2] = specials[k];
      lowp_scaler_unscale_f32(&s, g, 400, &found);
      lowp_test_check(found == 1, "unscale with %g: found_inf %d", (double)specials[k], found);
    }
  }

  /* test_grad_scaling_state_dict: s0 = GradScaler(init_scale=3.,
     growth_factor=4., backoff_factor=.5, growth_interval=2); s1 =
     GradScaler(6., 7., .8, 1) with _init_growth_tracker = 7;
     s1.load_state_dict(s0.state_dict()) -> scale 3, growth 4, backoff .5,
     interval 2, tracker 0. */
  {
    lowp_scaler_t s0 = make(LOWP_SCALER_PYTORCH, 3.0, 4.0, 0.5, 2);
    lowp_scaler_t s1 = make(LOWP_SCALER_PYTORCH, 6.0, 7.0, 0.8, 1);
    char *text;
    s1.tracker = 7;
    lowp_test_check(lowp_scaler_save_json(&s0, &text) == LOWP_OK, "save_json");
    lowp_test_check(lowp_scaler_load_json(&s1, text, NULL, 0) == LOWP_OK, "load_json");
    free(text);
    lowp_test_check(s1.scale == 3.0 && s1.growth == 4.0 && s1.backoff == 0.5 &&
                    s1.interval == 2 && s1.tracker == 0,
                    "state_dict round trip: %g %g %g %lld %lld", s1.scale, s1.growth,
                    s1.backoff, s1.interval, s1.tracker);
  }
  /* counters keep every digit (cJSON alone prints 15 significant digits) */
  {
    lowp_scaler_t s0 = make(LOWP_SCALER_PYTORCH, 3.0, 4.0, 0.5, 2), s1 = s0;
    char *text;
    s0.steps = 4999999999999989LL;
    s0.skipped = 4999999999999987LL;
    s0.interval = 2147483647LL;
    s0.tracker = -2147483647LL;
    lowp_test_check(lowp_scaler_save_json(&s0, &text) == LOWP_OK &&
                        lowp_scaler_load_json(&s1, text, NULL, 0) == LOWP_OK,
                    "save/load of large counters");
    lowp_test_check(s1.steps == s0.steps && s1.skipped == s0.skipped &&
                        s1.interval == s0.interval && s1.tracker == s0.tracker,
                    "large counters round trip: %lld %lld", s1.steps, s1.skipped);
    free(text);
  }
}

/* ------------------------------------- hand-derived PyTorch semantics */

static void pytorch_semantics(void) {
  lowp_scaler_t s;
  int k;
  /* defaults: 1999 good steps leave 2^16 with tracker 1999; the 2000th
     doubles it and resets the tracker (growth when tracker + 1 == 2000) */
  lowp_test_check(lowp_scaler_init_default(&s, LOWP_SCALER_PYTORCH) == LOWP_OK, "init_default");
  check_state("defaults", &s, 65536.0, 0);
  for (k = 0; k < 1999; k++) lowp_scaler_update(&s, 0, NULL);
  check_state("1999 ok", &s, 65536.0, 1999);
  lowp_scaler_update(&s, 0, NULL);
  check_state("2000 ok", &s, 131072.0, 0);
  /* an overflow in the middle resets the count */
  for (k = 0; k < 1500; k++) lowp_scaler_update(&s, 0, NULL);
  lowp_scaler_update(&s, 1, NULL);
  check_state("1500 ok + inf", &s, 65536.0, 0);

  /* == comparison: a tracker loaded above the interval never triggers
     growth; it counts up (this is what the kernel does, and why the tracker
     is part of the state dict) */
  s = make(LOWP_SCALER_PYTORCH, 65536.0, 2.0, 0.5, 2000);
  s.tracker = 2005;
  for (k = 0; k < 10; k++) lowp_scaler_update(&s, 0, NULL);
  check_state("tracker above interval", &s, 65536.0, 2015);
  /* ... until int32 wraps: INT32_MAX + 1 -> INT32_MIN */
  s.tracker = 2147483647LL;
  lowp_scaler_update(&s, 0, NULL);
  check_state("int32 wrap", &s, 65536.0, -2147483647LL - 1);

  /* growth refused at the top of fp32: 2^127 * 2 = 2^128 overflows */
  s = make(LOWP_SCALER_PYTORCH, ldexp(1.0, 127), 2.0, 0.5, 1);
  replay(&s, "ooo");
  check_state("no growth past fp32 max", &s, ldexp(1.0, 127), 0);
  /* but growth to a finite value just below the limit is taken:
     2^126 * 1.5 = 1.5 * 2^126 < FLT_MAX */
  s = make(LOWP_SCALER_PYTORCH, ldexp(1.0, 126), 1.5, 0.5, 1);
  replay(&s, "o");
  check_state("growth to 1.5*2^126", &s, 1.5 * ldexp(1.0, 126), 0);

  /* no lower clamp: 1 halved 149 times is fp32's smallest subnormal 2^-149;
     once more gives 2^-150, a tie between 0 and 2^-149 -> even -> 0 */
  s = make(LOWP_SCALER_PYTORCH, 1.0, 2.0, 0.5, 2000);
  for (k = 0; k < 149; k++) lowp_scaler_update(&s, 1, NULL);
  check_state("149 backoffs", &s, ldexp(1.0, -149), 0);
  lowp_scaler_update(&s, 1, NULL);
  check_state("150 backoffs", &s, 0.0, 0);

  /* non-power-of-two factors: the product is formed in fp64 and rounded to
     fp32 once. Expected values computed independently with Python:
     struct.unpack('f', struct.pack('f', 3 * 0.8)) = 0x1.333334p+1, and
     that times 7 -> 0x1.0ccccep+4. */
  s = make(LOWP_SCALER_PYTORCH, 3.0, 7.0, 0.8, 1);
  replay(&s, "i");
  check_state("3 * 0.8", &s, 0x1.333334p+1, 0);
  replay(&s, "o"); /* 2.4000000953674316 * 7 = 16.80000066757202 -> fp32 0x1.0ccccep+4 */
  check_state("* 7", &s, 0x1.0ccccep+4, 0);

  /* inverse scale: fp32(1/fp64(scale)); 1/3 -> 0x1.555556p-2 */
  s = make(LOWP_SCALER_PYTORCH, 3.0, 2.0, 0.5, 1);
  lowp_test_check(lowp_scaler_inv_scale(&s) == 0x1.555556p-2, "inv_scale(3) = %a", lowp_scaler_inv_scale(&s));
  /* init rounded to fp32 */
  s = make(LOWP_SCALER_PYTORCH, 0.1, 2.0, 0.5, 1);
  lowp_test_check(s.scale == 0x1.99999ap-4, "init 0.1 -> %a", s.scale);
}

/* --------------------------------------------------------- the variants */

static void variants(void) {
  lowp_scaler_t s;
  int k;
  /* Genesis (document 003): max(scale, 1.0) after a backoff */
  s = make(LOWP_SCALER_GENESIS, 4.0, 2.0, 0.5, 2000);
  for (k = 0; k < 10; k++) lowp_scaler_update(&s, 1, NULL);
  check_state("genesis clamp at 1", &s, 1.0, 0);
  /* `>=`: a tracker above the interval grows at the next good step */
  s = make(LOWP_SCALER_GENESIS, 4.0, 2.0, 0.5, 2000);
  s.tracker = 2005;
  replay(&s, "o");
  check_state("genesis >=", &s, 8.0, 0);
  /* fp64 scale, no overflow check: grows past fp32's max */
  s = make(LOWP_SCALER_GENESIS, ldexp(1.0, 127), 2.0, 0.5, 1);
  replay(&s, "o");
  check_state("genesis fp64 growth", &s, ldexp(1.0, 128), 0);
  /* the clamp also holds a non-power-of-two result: 1.5 * 0.5 = 0.75 -> 1 */
  s = make(LOWP_SCALER_GENESIS, 1.5, 2.0, 0.5, 1);
  replay(&s, "i");
  check_state("genesis 0.75 -> 1", &s, 1.0, 0);

  /* MLX C++ sketch (document 000): after an overflow update() counts the
     skipped step as good: with interval 1 the scale grows straight back */
  s = make(LOWP_SCALER_MLX, 128.0, 2.0, 0.5, 1);
  replay(&s, "ooio");
  check_state("mlx c++ interval 1", &s, 128.0 * 2 * 2 * 2, 0);
  s = make(LOWP_SCALER_MLX, 128.0, 2.0, 0.5, 3);
  replay(&s, "oi");
  check_state("mlx c++ tracker after inf", &s, 64.0, 1);
  /* and fp32 arithmetic without the overflow check: 2^127 * 2 = inf, stuck */
  s = make(LOWP_SCALER_MLX, ldexp(1.0, 127), 2.0, 0.5, 1);
  replay(&s, "o");
  lowp_test_check(isinf(s.scale), "mlx c++ overflow: %g", s.scale);
  replay(&s, "iii");
  lowp_test_check(isinf(s.scale), "mlx c++ stays inf: %g", s.scale);
  lowp_test_check(lowp_scaler_inv_scale(&s) == 0.0, "mlx c++ 1/inf");

  /* MLX Python sketch: tracker 0 after an overflow, fp64, `>=` */
  s = make(LOWP_SCALER_MLX_PY, 128.0, 2.0, 0.5, 1);
  replay(&s, "ooio");
  check_state("mlx py (3 ok, 1 inf)", &s, 512.0, 0);
  s = make(LOWP_SCALER_MLX_PY, 128.0, 2.0, 0.5, 3);
  replay(&s, "oi");
  check_state("mlx py tracker after inf", &s, 64.0, 0);
}

/* -------------------------------------------------------- property sweep */

/* Independent model of PyTorch's rule on power-of-two scales: with growth 2
   and backoff 0.5 the scale is 2^k exactly while k stays in [-149, 127];
   the tracker counts good steps since the last change. */
static void sweep(void) {
  lowp_rng_t r;
  int trial;
  lowp_rng_init(&r, lowp_test_seed(), 1);
  for (trial = 0; trial < 200; trial++) {
    long long interval = 1 + (long long)(lowp_rng_next(&r) % 7), tr = 0;
    int k = (int)(lowp_rng_next(&r) % 20), step, ok = 1;
    double pinf = lowp_rng_uniform(&r) * 0.5;
    lowp_scaler_t s = make(LOWP_SCALER_PYTORCH, ldexp(1.0, k), 2.0, 0.5, interval);
    for (step = 0; step < 300 && ok; step++) {
      int inf = lowp_rng_uniform(&r) < pinf;
      lowp_scaler_update(&s, inf, NULL);
      if (inf) { k--; tr = 0; }
      else if (++tr == interval) { if (k < 127) k++; tr = 0; }
      ok = s.scale == ldexp(1.0, k) && s.tracker == tr;
    }
    lowp_test_check(ok, "sweep trial %d (interval %lld): diverged at step %d: scale %g vs 2^%d, tracker %lld vs %lld",
                    trial, interval, step, s.scale, k, s.tracker, tr);
  }
}

/* ------------------------------------------------ save/load round trips */

static void round_trips(void) {
  lowp_rng_t r;
  int p, trial;
  char err[200];
  lowp_scaler_t s, t;
  char *text;
  lowp_rng_init(&r, lowp_test_seed(), 2);
  for (p = 0; p < LOWP_SCALER_POLICY_COUNT; p++)
    for (trial = 0; trial < 50; trial++) {
      double g = 1 + lowp_rng_uniform(&r) * 3, b = 0.1 + lowp_rng_uniform(&r) * 0.8;
      int k, ok;
      s = make((lowp_scaler_policy_t)p, 1 + lowp_rng_uniform(&r) * 1e6, g, b,
               1 + (long long)(lowp_rng_next(&r) % 5));
      for (k = 0; k < 40; k++) lowp_scaler_update(&s, lowp_rng_uniform(&r) < 0.3, NULL);
      lowp_scaler_save_json(&s, &text);
      t = make((lowp_scaler_policy_t)((p + 1) % LOWP_SCALER_POLICY_COUNT), 5, 3, 0.25, 9);
      ok = lowp_scaler_load_json(&t, text, err, sizeof err) == LOWP_OK &&
           same(&s, &t);
      lowp_test_check(ok, "round trip %s trial %d: %s", lowp_scaler_policy_name(s.policy), trial, text);
      /* continuing from the loaded state is the same as not stopping */
      for (k = 0; k < 20; k++) {
        int inf = lowp_rng_uniform(&r) < 0.3;
        lowp_scaler_update(&s, inf, NULL);
        lowp_scaler_update(&t, inf, NULL);
      }
      lowp_test_check(same(&s, &t), "resumed %s trial %d differs", lowp_scaler_policy_name(s.policy), trial);
      free(text);
    }
  /* an infinite scale (MLX C++ after overflow) survives the round trip */
  s = make(LOWP_SCALER_MLX, ldexp(1.0, 127), 2.0, 0.5, 1);
  replay(&s, "o");
  lowp_scaler_save_json(&s, &text);
  t = make(LOWP_SCALER_PYTORCH, 1, 2, 0.5, 1);
  lowp_test_check(lowp_scaler_load_json(&t, text, err, sizeof err) == LOWP_OK && isinf(t.scale) &&
                  t.policy == LOWP_SCALER_MLX, "inf scale round trip: %s", text);
  free(text);
}

/* ------------------------------------------------------------ bad input */

static void bad_input(void) {
  static const struct { const char *text; int st; } cases[] = {
      {"", LOWP_EPARSE},
      {"{", LOWP_EPARSE},
      {"[1,2]", LOWP_EPARSE},
      {"{\"scale\": 1}", LOWP_EPARSE},
      {"{\"scale\": \"x\", \"growth_factor\": 2, \"backoff_factor\": 0.5, \"growth_interval\": 1, \"_growth_tracker\": 0}", LOWP_EPARSE},
      {"{\"scale\": -1, \"growth_factor\": 2, \"backoff_factor\": 0.5, \"growth_interval\": 1, \"_growth_tracker\": 0}", LOWP_EINVAL},
      {"{\"scale\": 1, \"growth_factor\": 0, \"backoff_factor\": 0.5, \"growth_interval\": 1, \"_growth_tracker\": 0}", LOWP_EINVAL},
      {"{\"scale\": 1, \"growth_factor\": 2, \"backoff_factor\": -0.5, \"growth_interval\": 1, \"_growth_tracker\": 0}", LOWP_EINVAL},
      {"{\"scale\": 1, \"growth_factor\": 2, \"backoff_factor\": 0.5, \"growth_interval\": 0, \"_growth_tracker\": 0}", LOWP_EINVAL},
      {"{\"scale\": 1, \"growth_factor\": 2, \"backoff_factor\": 0.5, \"growth_interval\": 1.5, \"_growth_tracker\": 0}", LOWP_EINVAL},
      {"{\"scale\": 1, \"growth_factor\": 2, \"backoff_factor\": 0.5, \"growth_interval\": 1, \"_growth_tracker\": 1e12}", LOWP_EINVAL},
      {"{\"scale\": 1, \"growth_factor\": 2, \"backoff_factor\": 0.5, \"growth_interval\": 1, \"_growth_tracker\": 0, \"policy\": \"tf\"}", LOWP_EPARSE},
      /* issue 14: a repeated key, text after the object, a misspelt key */
      {"{\"scale\": 1, \"scale\": 2, \"growth_factor\": 2, \"backoff_factor\": 0.5, \"growth_interval\": 1, \"_growth_tracker\": 0}", LOWP_EPARSE},
      {"{\"scale\": 1, \"growth_factor\": 2, \"backoff_factor\": 0.5, \"growth_interval\": 1, \"_growth_tracker\": 0} x", LOWP_EPARSE},
      {"{\"scale\": 1, \"growth_factor\": 2, \"backoff_factor\": 0.5, \"growth_interval\": 1, \"_growth_tracker\": 0} {}", LOWP_EPARSE},
      {"{\"scale\": 1, \"growth_factor\": 2, \"backoff_factor\": 0.5, \"growth_interval\": 1, \"_growth_tracker\": 0, \"stpes\": 1}", LOWP_EPARSE},
  };
  size_t i;
  lowp_scaler_t s, keep;
  char err[200];
  s = make(LOWP_SCALER_PYTORCH, 65536, 2, 0.5, 2000);
  keep = s;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int st;
    err[0] = '\0';
    st = lowp_scaler_load_json(&s, cases[i].text, err, sizeof err);
    lowp_test_check(st == cases[i].st && err[0] && same(&s, &keep),
                    "load '%s': status %d (want %d), message '%s', state %s", cases[i].text, st,
                    cases[i].st, err, !same(&s, &keep) ? "changed" : "kept");
  }
  lowp_test_check(lowp_scaler_init(&s, LOWP_SCALER_PYTORCH, 0, 2, 0.5, 1) == LOWP_EINVAL, "init 0");
  lowp_test_check(lowp_scaler_init(&s, LOWP_SCALER_PYTORCH, 1e39, 2, 0.5, 1) == LOWP_EINVAL, "init 1e39 (inf in fp32)");
  lowp_test_check(lowp_scaler_init(&s, LOWP_SCALER_PYTORCH, 1, -2, 0.5, 1) == LOWP_EINVAL, "growth -2");
  lowp_test_check(lowp_scaler_init(&s, LOWP_SCALER_PYTORCH, 1, 2, 0, 1) == LOWP_EINVAL, "backoff 0");
  lowp_test_check(lowp_scaler_init(&s, LOWP_SCALER_PYTORCH, 1, 2, 0.5, 0) == LOWP_EINVAL, "interval 0");
  lowp_test_check(lowp_scaler_init(&s, (lowp_scaler_policy_t)9, 1, 2, 0.5, 1) == LOWP_EINVAL, "policy 9");
}

/* --------------------------------------------------------------- main */

int main(void) {
  lowp_test_start("tamp_scaler");
  pytorch_scenarios();
  pytorch_semantics();
  variants();
  sweep();
  round_trips();
  bad_input();
  return lowp_test_end();
}
